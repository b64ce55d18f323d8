/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The emulated device's SRQs in the model of ISSI >= 1, receive memory pools, through
 * the real command engine: CREATE_RMP, MODIFY_RMP, QUERY_RMP, DESTROY_RMP, and the
 * ISSI rule (Linux drivers/infiniband/hw/mlx5/srq_cmd.c create_srq_split: CREATE_SRQ
 * only at ISSI 0, RMPs otherwise). */
#include "tests/emu/emu_obj_test.h"

static int create(struct ot *o, uint8_t *in, size_t inlen)
{
	int st = et_exec(&o->t, in, inlen, PRM_SIZE(create_rmp_out));
	free(in);
	return st;
}

static const uint8_t *query(struct ot *o, uint32_t rmpn, size_t extra)
{
	uint8_t in[PRM_SIZE(query_rmp_in)] = { 0 };

	PRM_SET(query_rmp_in, in, opcode, PRM_CMD_OP_QUERY_RMP);
	PRM_SET(query_rmp_in, in, rmpn, rmpn);
	et_expect(&o->t, et_exec(&o->t, in, sizeof(in), PRM_SIZE(query_rmp_out) + extra), 0, 0);
	return PRM_ADDR(query_rmp_out, o->t.out, rmp_context);
}

static const uint8_t *wq_of(const uint8_t *rmpc)
{
	return PRM_ADDR(rmpc, rmpc, wq);
}

/* MODIFY_RMP RDY -> RDY with bitmask.lwm, as Linux arm_rmp_cmd sends it. */
static int arm(struct ot *o, uint32_t rmpn, unsigned lwm)
{
	uint8_t in[PRM_SIZE(modify_rmp_in)] = { 0 };
	uint8_t *rmpc = PRM_ADDR(modify_rmp_in, in, ctx);

	PRM_SET(modify_rmp_in, in, opcode, PRM_CMD_OP_MODIFY_RMP);
	PRM_SET(modify_rmp_in, in, rmp_state, 1);
	PRM_SET(modify_rmp_in, in, rmpn, rmpn);
	PRM_SET(rmp_bitmask, PRM_ADDR(modify_rmp_in, in, bitmask), lwm, 1);
	PRM_SET(rmpc, rmpc, state, 1);
	PRM_SET(wq, PRM_ADDR(rmpc, rmpc, wq), lwm, lwm);
	return et_exec(&o->t, in, sizeof(in), PRM_SIZE(modify_rmp_out));
}

static void create_query_destroy(const char *uri)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, uri);
	uint8_t *in = ot_rmp_in(&o, &q, 6, 2, &inlen);
	PRM_SET(wq, ot_rmp_wq(in), lwm, 10);
	et_expect(&o.t, create(&o, in, inlen), 0, 0);
	uint32_t rmpn = (uint32_t)PRM_GET(create_rmp_out, o.t.out, rmpn);
	cr_assert_neq(rmpn, 0);
	cr_assert_eq(ot_live(&o, EMU_OBJ_SRQ), 1);
	const uint8_t *rmpc = query(&o, rmpn, 64), *wq = wq_of(rmpc);
	cr_assert_eq(PRM_GET(rmpc, rmpc, state), 1, "ready");
	cr_assert_eq(PRM_GET(wq, wq, log_wq_sz), 6);
	cr_assert_eq(PRM_GET(wq, wq, log_wq_stride), 6, "64-byte WQEs");
	cr_assert_eq(PRM_GET(wq, wq, pd), o.pd);
	cr_assert_eq(PRM_GET(wq, wq, lwm), 0, "CREATE_RMP's lwm is not armed");
	cr_assert_eq(PRM_GET(wq, wq, log_wq_pg_sz), ot_log_pg(&o));
	cr_assert_eq(PRM_GET(wq, wq, dbr_addr), q.dbr);
	cr_assert_eq(prm_bits_get64(wq, PRM_OFF(wq, pas)), q.mem.iova);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_RMP, rmpn), 0, 0);
	cr_assert_eq(ot_live(&o, EMU_OBJ_SRQ), 0);
	ot_down(&o);
}

Test(emu_rmp, create_query_destroy_reads_back_every_field)
{
	create_query_destroy("emu:");
}

Test(emu_rmp, create_query_destroy_with_16k_host_pages)
{
	create_query_destroy("emu:page=16k");
}

Test(emu_rmp, create_srq_at_issi_1_is_refused)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_srq_in(&o, &q, 4, 1, &inlen);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_OP,
		  PRM_SYND_WRONG_ISSI_SRQ_MODEL);
	cr_assert_eq(ot_live(&o, EMU_OBJ_SRQ), 0);
	ot_down(&o);
}

Test(emu_rmp, create_rmp_at_issi_0_is_refused)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	et_issi = 0;
	ot_up(&o, "emu:");
	uint8_t *in = ot_rmp_in(&o, &q, 4, 1, &inlen);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_OP,
		  PRM_SYND_WRONG_ISSI_SRQ_MODEL);
	ot_down(&o);
}

Test(emu_rmp, modify_rmp_arms_the_limit_and_query_reads_it_back)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t rmpn = ot_srq(&o, 4);
	et_expect(&o.t, arm(&o, rmpn, 5), 0, 0);
	cr_assert_eq(PRM_GET(wq, wq_of(query(&o, rmpn, 0)), lwm), 5);
	ot_down(&o);
}

Test(emu_rmp, modify_rmp_with_a_limit_above_the_size_is_bad_parameter)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t rmpn = ot_srq(&o, 4);
	et_expect(&o.t, arm(&o, rmpn, 17), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_SRQ_LIMIT);
	cr_assert_eq(PRM_GET(wq, wq_of(query(&o, rmpn, 0)), lwm), 0);
	ot_down(&o);
}

Test(emu_rmp, modify_rmp_of_an_unknown_rmp_is_bad_resource)
{
	struct ot o;

	ot_up(&o, "emu:");
	et_expect(&o.t, arm(&o, 0x77, 1), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_SRQN);
	ot_down(&o);
}

Test(emu_rmp, create_rmp_not_ready_is_bad_parameter)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_rmp_in(&o, &q, 4, 1, &inlen);
	PRM_SET(rmpc, PRM_ADDR(create_rmp_in, in, ctx), state, 0);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_RMP_STATE);
	ot_down(&o);
}

Test(emu_rmp, create_rmp_with_a_cyclic_wq_is_bad_parameter)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_rmp_in(&o, &q, 4, 1, &inlen);
	PRM_SET(wq, ot_rmp_wq(in), wq_type, 1);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_WQ_TYPE);
	ot_down(&o);
}

Test(emu_rmp, rmp_larger_than_log_max_srq_sz_is_limits_exceeded)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_rmp_in(&o, &q, 4, 1, &inlen);
	PRM_SET(wq, ot_rmp_wq(in), log_wq_sz, PRM_GET(cmd_hca_cap, o.gen, log_max_srq_sz) + 1);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_LIM_ERR, PRM_SYND_SIZE_TOO_LARGE);
	ot_down(&o);
}
