/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The emulated device's completion queues through the real command engine: CREATE_CQ,
 * QUERY_CQ, MODIFY_CQ, DESTROY_CQ and every rule of cmd_cq.c, one per test. */
#include "tests/emu/emu_obj_test.h"

static uint8_t *cqc_of(uint8_t *in)
{
	return PRM_ADDR(create_cq_in, in, cq_context);
}

static int create(struct ot *o, uint8_t *in, size_t inlen)
{
	int st = et_exec(&o->t, in, inlen, PRM_SIZE(create_cq_out));
	free(in);
	return st;
}

static const uint8_t *query(struct ot *o, uint32_t cqn)
{
	ET_IN(query_cq_in);
	PRM_SET(query_cq_in, in, opcode, PRM_CMD_OP_QUERY_CQ);
	PRM_SET(query_cq_in, in, cqn, cqn);
	et_expect(&o->t, et_exec(&o->t, in, sizeof(in), PRM_SIZE(query_cq_out) + 64), 0, 0);
	return PRM_ADDR(query_cq_out, o->t.out, cq_context);
}

static void create_query_destroy(const char *uri)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, uri);
	uint8_t *in = ot_cq_in(&o, &q, 7, &inlen);
	PRM_SET(cqc, cqc_of(in), cq_period, 16);
	PRM_SET(cqc, cqc_of(in), cq_max_count, 8);
	et_expect(&o.t, create(&o, in, inlen), 0, 0);
	uint32_t cqn = (uint32_t)PRM_GET(create_cq_out, o.t.out, cqn);
	cr_assert_neq(cqn, 0);
	cr_assert_eq(ot_live(&o, EMU_OBJ_CQ), 1);

	const uint8_t *c = query(&o, cqn);
	cr_assert_eq(PRM_GET(cqc, c, log_cq_size), 7);
	cr_assert_eq(PRM_GET(cqc, c, cqe_sz), 0);
	cr_assert_eq(PRM_GET(cqc, c, uar_page), o.uar);
	cr_assert_eq(PRM_GET(cqc, c, c_eqn_or_apu_element), o.eqn);
	cr_assert_eq(PRM_GET(cqc, c, log_page_size), ot_log_pg(&o));
	cr_assert_eq(PRM_GET(cqc, c, dbr_addr), q.dbr);
	cr_assert_eq(PRM_GET(cqc, c, cq_period), 16);
	cr_assert_eq(PRM_GET(cqc, c, cq_max_count), 8);
	cr_assert_eq(PRM_GET(cqc, c, producer_counter), 0);
	cr_assert_eq(PRM_GET(cqc, c, consumer_counter), 0);
	/* the consumer counter is the driver's doorbell record (big-endian dword 0) */
	prm_store_be32((uint8_t *)q.mem.va + q.ring_bytes, 0, 0x1234);
	c = query(&o, cqn);
	cr_assert_eq(PRM_GET(cqc, c, consumer_counter), 0x1234);
	cr_assert_eq(prm_bits_get64(PRM_ADDR(query_cq_out, o.t.out, pas), 0), q.mem.iova, "pas[0] reads back");

	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_CQ, cqn), 0, 0);
	cr_assert_eq(ot_live(&o, EMU_OBJ_CQ), 0);
	ot_down(&o);
}

Test(emu_cq, create_query_destroy_reads_back_every_field)
{
	create_query_destroy("emu:");
}

Test(emu_cq, create_query_destroy_with_scattered_iovas)
{
	create_query_destroy("emu:iova=scatter");
}

Test(emu_cq, create_query_destroy_with_16k_host_pages)
{
	create_query_destroy("emu:page=16k");
}

Test(emu_cq, cq_larger_than_log_max_cq_sz_is_limits_exceeded)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_cq_in(&o, &q, 4, &inlen);
	PRM_SET(cqc, cqc_of(in), log_cq_size, PRM_GET(cmd_hca_cap, o.gen, log_max_cq_sz) + 1);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_LIM_ERR, PRM_SYND_SIZE_TOO_LARGE);
	cr_assert_eq(ot_live(&o, EMU_OBJ_CQ), 0);
	ot_down(&o);
}

Test(emu_cq, cq_of_log_max_cq_sz_is_accepted_size_wise)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	/* the limit itself passes the size rule (and then fails only for its too-short
	 * page list): the check is > max, not >= max */
	ot_up(&o, "emu:");
	uint8_t *in = ot_cq_in(&o, &q, 4, &inlen);
	PRM_SET(cqc, cqc_of(in), log_cq_size, PRM_GET(cmd_hca_cap, o.gen, log_max_cq_sz));
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_INP_LEN, PRM_SYND_INPUT_TOO_SHORT);
	ot_down(&o);
}

Test(emu_cq, unknown_eq_is_bad_resource)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_cq_in(&o, &q, 4, &inlen);
	PRM_SET(cqc, cqc_of(in), c_eqn_or_apu_element, o.eqn + 7);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_EQN);
	ot_down(&o);
}

Test(emu_cq, unallocated_uar_is_bad_resource)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_cq_in(&o, &q, 4, &inlen);
	PRM_SET(cqc, cqc_of(in), uar_page, o.uar + 5);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_UAR);
	ot_down(&o);
}

Test(emu_cq, unpinned_doorbell_record_is_refused_and_logged)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint64_t before = emu_drverr_count(o.t.emu);
	uint8_t *in = ot_cq_in(&o, &q, 4, &inlen);
	PRM_SET(cqc, cqc_of(in), dbr_addr, 0x40000);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_DOORBELL_RECORD);
	cr_assert_eq(emu_drverr_count(o.t.emu), before + 1);
	cr_assert(emu_drverr_find(o.t.emu, "doorbell record"));
	ot_down(&o);
}

Test(emu_cq, misaligned_doorbell_record_is_bad_parameter)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_cq_in(&o, &q, 4, &inlen);
	PRM_SET(cqc, cqc_of(in), dbr_addr, q.dbr + 4);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_DOORBELL_RECORD);
	ot_down(&o);
}

static void unpinned_page(const char *uri)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, uri);
	uint8_t *in = ot_cq_in(&o, &q, 8, &inlen); /* 16 KiB: several 4 KiB pages */
	/* the last page names an aligned IOVA nobody mapped */
	prm_bits_set64(PRM_ADDR(create_cq_in, in, pas), (unsigned)((q.npas - 1) * 64), 0x7000000000ull);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BUFFER_NOT_PINNED);
	cr_assert(emu_drverr_find(o.t.emu, "not pinned"));
	cr_assert_eq(ot_live(&o, EMU_OBJ_CQ), 0);
	ot_down(&o);
}

Test(emu_cq, unpinned_buffer_page_is_refused)
{
	unpinned_page("emu:");
}

Test(emu_cq, unpinned_buffer_page_is_refused_with_scattered_iovas)
{
	unpinned_page("emu:iova=scatter");
}

Test(emu_cq, misaligned_buffer_page_is_bad_parameter)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_cq_in(&o, &q, 4, &inlen);
	prm_bits_set64(PRM_ADDR(create_cq_in, in, pas), 0, q.mem.iova + 256);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MTT_NOT_ALIGNED);
	ot_down(&o);
}

Test(emu_cq, page_list_shorter_than_the_cq_is_bad_input_length)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_cq_in(&o, &q, 8, &inlen);
	et_expect(&o.t, create(&o, in, inlen - 8), PRM_CMD_STAT_BAD_INP_LEN, PRM_SYND_INPUT_TOO_SHORT);
	ot_down(&o);
}

Test(emu_cq, reserved_cqe_size_is_bad_parameter)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_cq_in(&o, &q, 4, &inlen);
	PRM_SET(cqc, cqc_of(in), cqe_sz, 2);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_CQE_SIZE);
	ot_down(&o);
}

Test(emu_cq, destroy_of_a_cq_a_qp_uses_is_bad_resource_state)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t cqn = ot_cq(&o, 6);
	uint32_t qpn = ot_qp(&o, OT_ST_RC, cqn);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_CQ, cqn), PRM_CMD_STAT_BAD_RES_STATE,
		  PRM_SYND_OBJECT_IN_USE);
	cr_assert_eq(ot_live(&o, EMU_OBJ_CQ), 1);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_QP, qpn), 0, 0);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_CQ, cqn), 0, 0);
	cr_assert_eq(ot_live(&o, EMU_OBJ_CQ), 0);
	ot_down(&o);
}

Test(emu_cq, destroy_of_an_eq_a_cq_uses_is_bad_resource_state)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t cqn = ot_cq(&o, 6);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_EQ, o.eqn), PRM_CMD_STAT_BAD_RES_STATE,
		  PRM_SYND_OBJECT_IN_USE);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_CQ, cqn), 0, 0);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_EQ, o.eqn), 0, 0);
	ot_down(&o);
}

Test(emu_cq, destroy_of_an_unknown_cq_is_bad_resource)
{
	struct ot o;

	ot_up(&o, "emu:");
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_CQ, 0x777), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_CQN);
	ot_down(&o);
}

Test(emu_cq, modify_cq_moderation_reads_back)
{
	struct ot o;

	ot_up(&o, "emu:");
	cr_assert(PRM_GET(cmd_hca_cap, o.gen, cq_moderation), "the seed offers CQ moderation");
	uint32_t cqn = ot_cq(&o, 6);
	uint8_t *in = calloc(1, PRM_SIZE(modify_cq_in));
	PRM_SET(modify_cq_in, in, opcode, PRM_CMD_OP_MODIFY_CQ);
	PRM_SET(modify_cq_in, in, cqn, cqn);
	PRM_SET(modify_field_select, PRM_ADDR(modify_cq_in, in, modify_field_select_resize_field_select),
		modify_field_select, 0x3); /* period and count */
	PRM_SET(cqc, PRM_ADDR(modify_cq_in, in, cq_context), cq_period, 100);
	PRM_SET(cqc, PRM_ADDR(modify_cq_in, in, cq_context), cq_max_count, 32);
	et_expect(&o.t, et_exec(&o.t, in, PRM_SIZE(modify_cq_in), PRM_SIZE(modify_cq_out)), 0, 0);
	free(in);
	const uint8_t *c = query(&o, cqn);
	cr_assert_eq(PRM_GET(cqc, c, cq_period), 100);
	cr_assert_eq(PRM_GET(cqc, c, cq_max_count), 32);
	ot_down(&o);
}

Test(emu_cq, modify_cq_with_an_unknown_select_bit_is_bad_parameter)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t cqn = ot_cq(&o, 6);
	uint8_t *in = calloc(1, PRM_SIZE(modify_cq_in));
	PRM_SET(modify_cq_in, in, opcode, PRM_CMD_OP_MODIFY_CQ);
	PRM_SET(modify_cq_in, in, cqn, cqn);
	PRM_SET(modify_field_select, PRM_ADDR(modify_cq_in, in, modify_field_select_resize_field_select),
		modify_field_select, 1u << 20);
	et_expect(&o.t, et_exec(&o.t, in, PRM_SIZE(modify_cq_in), PRM_SIZE(modify_cq_out)), PRM_CMD_STAT_BAD_PARAM,
		  PRM_SYND_BAD_FIELD_SELECT);
	free(in);
	ot_down(&o);
}

Test(emu_cq, resize_takes_the_new_size_and_page_list)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint32_t cqn = ot_cq(&o, 6);
	uint8_t *cin = ot_cq_in(&o, &q, 9, &inlen); /* only for its buffer and page list */
	size_t mlen = PRM_SIZE(modify_cq_in) + q.npas * 8;
	uint8_t *in = calloc(1, mlen);
	PRM_SET(modify_cq_in, in, opcode, PRM_CMD_OP_MODIFY_CQ);
	PRM_SET(modify_cq_in, in, op_mod, 1);
	PRM_SET(modify_cq_in, in, cqn, cqn);
	PRM_SET(resize_field_select, PRM_ADDR(modify_cq_in, in, modify_field_select_resize_field_select),
		resize_field_select, 0x7);
	memcpy(PRM_ADDR(modify_cq_in, in, cq_context), cqc_of(cin), PRM_SIZE(cqc));
	oq_pas(&o, &q, PRM_ADDR(modify_cq_in, in, pas));
	free(cin);
	int st = et_exec(&o.t, in, mlen, PRM_SIZE(modify_cq_out));
	free(in);
	if (!PRM_GET(cmd_hca_cap, o.gen, cq_resize)) {
		et_expect(&o.t, st, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_CQ_FEATURE);
	} else {
		et_expect(&o.t, st, 0, 0);
		const uint8_t *c = query(&o, cqn);
		cr_assert_eq(PRM_GET(cqc, c, log_cq_size), 9);
		cr_assert_eq(prm_bits_get64(PRM_ADDR(query_cq_out, o.t.out, pas), 0), q.mem.iova);
	}
	ot_down(&o);
}

Test(emu_cq, cqs_balance_to_zero_after_destroy)
{
	struct ot o;
	uint32_t cqn[5];
	struct emu_counters c0, c1;

	ot_up(&o, "emu:");
	emu_counters(o.t.emu, &c0);
	for (int i = 0; i < 5; i++)
		cqn[i] = ot_cq(&o, (unsigned)(2 + i));
	cr_assert_eq(ot_live(&o, EMU_OBJ_CQ), 5);
	for (int i = 0; i < 5; i++)
		et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_CQ, cqn[i]), 0, 0);
	emu_counters(o.t.emu, &c1);
	cr_assert_eq(c1.objects_live[EMU_OBJ_CQ], 0);
	cr_assert_eq(c1.objects_created[EMU_OBJ_CQ] - c0.objects_created[EMU_OBJ_CQ], 5);
	ot_down(&o);
}

Test(emu_cq, teardown_hca_destroys_live_cqs)
{
	struct ot o;

	ot_up(&o, "emu:");
	ot_cq(&o, 5);
	ot_cq(&o, 5);
	cr_assert_eq(ot_live(&o, EMU_OBJ_CQ), 2);
	ot_down(&o); /* asserts every type is back to zero */
}
