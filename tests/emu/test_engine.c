/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A device daemon's client engine (hw/emu/engine.c): an emulated device created with
 * cfg.engine takes the objects another device (the daemon's, here an "emu:" brought up
 * through the command queue) created, under the same numbers; learns the function's
 * capabilities from its answers; maps memory at IOVAs another IOMMU chose; and hands
 * its events to a sink instead of an EQ. */
#include "hw/emu/emu_dev.h"
#include "tests/emu/emu_test.h"

static struct emu_dev *engine_new(void)
{
	struct emu_config cfg;
	struct emu_dev *e = NULL;
	char err[256] = "";

	memset(&cfg, 0, sizeof(cfg));
	cfg.engine = 1;
	cr_assert_eq(emu_create(&cfg, &e, err, sizeof(err)), 0, "%s", err);
	return e;
}

/* Run `in` on the daemon's device (it must succeed), then on the engine with the
 * daemon's answer; the engine's firmware status. */
static int both(struct et *t, struct emu_dev *e, const void *in, size_t inlen, size_t outlen)
{
	uint8_t local[0x1100];
	uint8_t st = 0xff;

	et_expect(t, et_exec(t, in, inlen, outlen), 0, 0);
	cr_assert_eq(emu_engine_cmd(e, in, inlen, t->out, local, outlen, &st), 1, "the engine ran it");
	return st;
}

static void pd_cmd(uint8_t *in, uint16_t op, uint32_t pd)
{
	memset(in, 0, 16);
	PRM_SET(cmd_in, in, opcode, op);
	PRM_SET(dealloc_pd_in, in, pd, pd);
}

Test(emu_engine, an_allocation_takes_the_number_the_daemon_gave)
{
	struct et t;
	struct emu_dev *e = engine_new();
	struct emu_counters c;
	uint8_t in[16];
	uint32_t pd[3];

	et_open(&t, "emu:");
	et_bringup(&t);
	/* three PDs on the daemon's device; the engine sees only the last one, so its
	 * own numbering (from 1) would differ */
	for (int i = 0; i < 3; i++) {
		pd_cmd(in, PRM_CMD_OP_ALLOC_PD, 0);
		et_expect(&t, et_exec(&t, in, sizeof(in), 16), 0, 0);
		pd[i] = (uint32_t)PRM_GET(alloc_pd_out, t.out, pd);
	}
	uint8_t st = 0xff;
	cr_assert_eq(emu_engine_cmd(e, in, sizeof(in), t.out, NULL, 16, &st), 1);
	cr_assert_eq(st, 0);
	emu_counters(e, &c);
	cr_assert_eq(c.objects_live[EMU_OBJ_PD], 1);
	/* the engine knows pd[2] and nothing else */
	pd_cmd(in, PRM_CMD_OP_DEALLOC_PD, pd[0]);
	cr_assert_eq(emu_engine_cmd(e, in, sizeof(in), t.out, NULL, 16, &st), 1);
	cr_assert_eq(st, PRM_CMD_STAT_BAD_RES, "PD %u is not the engine's", pd[0]);
	/* the same number twice: the slot is taken, the engine refuses */
	pd_cmd(in, PRM_CMD_OP_ALLOC_PD, 0);
	PRM_SET(alloc_pd_out, t.out, pd, pd[2]);
	cr_assert_eq(emu_engine_cmd(e, in, sizeof(in), t.out, NULL, 16, &st), 1);
	cr_assert_eq(st, PRM_CMD_STAT_LIM_ERR);
	pd_cmd(in, PRM_CMD_OP_DEALLOC_PD, pd[2]);
	cr_assert_eq(both(&t, e, in, sizeof(in), 16), 0);
	emu_counters(e, &c);
	cr_assert_eq(c.objects_live[EMU_OBJ_PD], 0);
	emu_destroy(e);
	et_teardown(&t);
	et_close(&t);
}

Test(emu_engine, a_number_far_beyond_the_table_grows_it)
{
	struct emu_dev *e = engine_new();
	uint8_t in[16], out[16] = { 0 };
	uint8_t st = 0xff;

	pd_cmd(in, PRM_CMD_OP_ALLOC_PD, 0);
	PRM_SET(alloc_pd_out, out, pd, 5000);
	cr_assert_eq(emu_engine_cmd(e, in, sizeof(in), out, NULL, 16, &st), 1);
	cr_assert_eq(st, 0);
	pd_cmd(in, PRM_CMD_OP_DEALLOC_PD, 5000);
	cr_assert_eq(emu_engine_cmd(e, in, sizeof(in), out, NULL, 16, &st), 1);
	cr_assert_eq(st, 0, "PD 5000 lived in the engine");
	/* past the table's limit (PD: 2^16): refused, nothing allocated */
	pd_cmd(in, PRM_CMD_OP_ALLOC_PD, 0);
	PRM_SET(alloc_pd_out, out, pd, 1u << 20);
	cr_assert_eq(emu_engine_cmd(e, in, sizeof(in), out, NULL, 16, &st), 1);
	cr_assert_eq(st, PRM_CMD_STAT_LIM_ERR);
	emu_destroy(e);
}

Test(emu_engine, commands_of_the_function_are_not_run_and_caps_are_learned)
{
	struct et t;
	struct emu_dev *e = engine_new();
	uint8_t in[PRM_SIZE(query_hca_cap_in)] = { 0 };
	uint8_t st = 0xff;

	et_open(&t, "emu:");
	et_bringup(&t);
	PRM_SET(query_hca_cap_in, in, opcode, PRM_CMD_OP_QUERY_HCA_CAP);
	PRM_SET(query_hca_cap_in, in, op_mod, 1);   /* general, current */
	et_expect(&t, et_exec(&t, in, sizeof(in), PRM_SIZE(query_hca_cap_out)), 0, 0);
	uint8_t *cap = PRM_ADDR(query_hca_cap_out, t.out, capability);
	PRM_SET(cmd_hca_cap, cap, log_max_qp, 7);   /* a value the engine's own caps do not have */
	cr_assert_eq(emu_engine_cmd(e, in, sizeof(in), t.out, NULL, PRM_SIZE(query_hca_cap_out), &st), 0);
	cr_assert_eq(PRM_GET(cmd_hca_cap, emu_cap(e, 0, 1), log_max_qp), 7);
	/* the function's own commands: nothing to do in an engine */
	uint8_t q[16] = { 0 };
	PRM_SET(cmd_in, q, opcode, PRM_CMD_OP_QUERY_ADAPTER);
	cr_assert_eq(emu_engine_cmd(e, q, sizeof(q), t.out, NULL, 16, &st), 0);
	PRM_SET(cmd_in, q, opcode, PRM_CMD_OP_MANAGE_PAGES);
	cr_assert_eq(emu_engine_cmd(e, q, sizeof(q), t.out, NULL, 16, &st), 0);
	cr_assert(emu_engine_answers(PRM_CMD_OP_QUERY_QP) && !emu_engine_answers(PRM_CMD_OP_QUERY_HCA_CAP));
	emu_destroy(e);
	et_teardown(&t);
	et_close(&t);
}

Test(emu_engine, memory_maps_at_the_iovas_given)
{
	struct emu_dev *e = engine_new();
	uint8_t *buf = aligned_alloc(4096, 3 * 4096), back[8];
	struct emu_iova_seg segs[2] = { { 0x7000000000ull + 4096, 4096 }, { 0x7000000000ull, 2 * 4096 } };
	uint64_t id = 0, id2 = 0;

	memset(buf, 0, 3 * 4096);
	buf[0] = 0x11;
	buf[4096] = 0x22;
	cr_assert_eq(emu_iommu_map_at(e, buf, 3 * 4096, EMU_IOMMU_APP, segs, 2, &id), 0);
	/* VA page 0 is at the first segment's IOVA, VA page 1 at the second's start */
	pthread_mutex_lock(&e->lock);
	cr_assert_eq(emu_dma_read(e, 0x7000000000ull + 4096, back, 1), 0);
	cr_assert_eq(back[0], 0x11);
	cr_assert_eq(emu_dma_read(e, 0x7000000000ull, back, 1), 0);
	cr_assert_eq(back[0], 0x22);
	pthread_mutex_unlock(&e->lock);
	/* overlapping a live mapping, lengths that do not add up */
	cr_assert_eq(emu_iommu_map_at(e, buf, 4096, 0, &segs[0], 1, &id2), -EEXIST);
	struct emu_iova_seg other = { 0x7100000000ull, 4096 };
	cr_assert_eq(emu_iommu_map_at(e, buf, 8192, 0, &other, 1, &id2), -EINVAL);
	cr_assert_eq(emu_iommu_unmap(e, id), 0);
	pthread_mutex_lock(&e->lock);
	cr_assert_eq(emu_dma_read(e, 0x7000000000ull, back, 1), -EFAULT, "unmapped");
	pthread_mutex_unlock(&e->lock);
	emu_destroy(e);
	free(buf);
}

static struct { unsigned n; uint8_t type, sub; uint32_t num; uint8_t synd; } got;

static void sink(void *arg, uint8_t type, uint8_t sub_type, const uint8_t *data)
{
	(void)arg;
	got.n++;
	got.type = type;
	got.sub = sub_type;
	emu_event_object(type, data, &got.num, &got.synd);
}

Test(emu_engine, events_go_to_the_sink)
{
	struct emu_dev *e = engine_new();
	uint8_t data[EMU_EQE_DATA_BYTES] = { 0 };

	emu_set_event_sink(e, sink, NULL);
	pthread_mutex_lock(&e->lock);
	cr_assert_eq(emu_eq_post_comp(e, 3, 0x42), 0, "no EQ 3, but a sink");
	cr_assert_eq(got.n, 1);
	cr_assert_eq(got.type, PRM_EVENT_COMP);
	cr_assert_eq(got.num, 0x42);
	PRM_SET(cq_error, data, cqn, 0x77);
	PRM_SET(cq_error, data, syndrome, 1);
	cr_assert_eq(emu_eq_post_event(e, PRM_EVENT_CQ_ERROR, 0, data), 0);
	cr_assert_eq(got.type, PRM_EVENT_CQ_ERROR);
	cr_assert_eq(got.num, 0x77);
	cr_assert_eq(got.synd, 1);
	memset(data, 0, sizeof(data));
	PRM_SET(qp_events, data, qpn_rqn_sqn, 0x123);
	cr_assert_eq(emu_eq_post_event(e, PRM_EVENT_WQ_CATAS_ERROR, 0, data), 0);
	cr_assert_eq(got.num, 0x123);
	cr_assert_eq(got.n, 3);
	pthread_mutex_unlock(&e->lock);
	emu_destroy(e);
}

Test(emu_engine, every_command_it_runs_has_a_handler)
{
	uint16_t ops[64];
	size_t n = emu_engine_opcodes(ops, 64);

	cr_assert_gt(n, 10);
	cr_assert_lt(n, 64);
	for (size_t i = 0; i < n; i++)
		cr_assert_not_null(emu_cmd_find(ops[i]), "opcode 0x%x (%s) has no handler", ops[i], prm_opcode_name(ops[i]));
}

Test(emu_engine, a_refused_creation_names_its_undo)
{
	uint8_t in[16] = { 0 }, out[16] = { 0 }, undo[16];

	PRM_SET(cmd_in, in, opcode, PRM_CMD_OP_CREATE_QP);
	PRM_SET(create_qp_out, out, qpn, 0x1234);
	cr_assert_eq(emu_engine_undo(in, out, undo, sizeof(undo)), 16);
	cr_assert_eq(PRM_GET(cmd_in, undo, opcode), PRM_CMD_OP_DESTROY_QP);
	cr_assert_eq(PRM_GET(destroy_qp_in, undo, qpn), 0x1234);
	PRM_SET(cmd_in, in, opcode, PRM_CMD_OP_ALLOC_Q_COUNTER);
	PRM_SET(alloc_q_counter_out, out, counter_set_id, 9);
	cr_assert_eq(emu_engine_undo(in, out, undo, sizeof(undo)), 16);
	cr_assert_eq(PRM_GET(dealloc_q_counter_in, undo, counter_set_id), 9);
	PRM_SET(cmd_in, in, opcode, PRM_CMD_OP_RTR2RTS_QP);
	cr_assert_eq(emu_engine_undo(in, out, undo, sizeof(undo)), 0, "not a creation");
}
