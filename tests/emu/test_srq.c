/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The emulated device's shared receive queues through the real command engine:
 * CREATE_SRQ, QUERY_SRQ, DESTROY_SRQ and every rule of cmd_srq.c, one per test. */
#include "tests/emu/emu_obj_test.h"

/* CREATE_SRQ is the ISSI 0 model (Linux srq_cmd.c create_srq_split); test_rmp.c has
 * the ISSI 1 one. */
static void at_issi_0(void)
{
	et_issi = 0;
}
TestSuite(emu_srq, .init = at_issi_0);

static uint8_t *srqc_of(uint8_t *in)
{
	return PRM_ADDR(create_srq_in, in, srq_context_entry);
}

static int create(struct ot *o, uint8_t *in, size_t inlen)
{
	int st = et_exec(&o->t, in, inlen, PRM_SIZE(create_srq_out));
	free(in);
	return st;
}

static void create_query_destroy(const char *uri)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, uri);
	uint32_t cqn = ot_cq(&o, 5);
	uint8_t *in = ot_srq_in(&o, &q, 6, 2, &inlen);
	PRM_SET(srqc, srqc_of(in), lwm, 10);
	PRM_SET(srqc, srqc_of(in), cqn, cqn);
	et_expect(&o.t, create(&o, in, inlen), 0, 0);
	uint32_t srqn = (uint32_t)PRM_GET(create_srq_out, o.t.out, srqn);
	cr_assert_neq(srqn, 0);
	cr_assert_eq(ot_live(&o, EMU_OBJ_SRQ), 1);

	uint8_t qin[PRM_SIZE(query_srq_in)] = { 0 };
	PRM_SET(query_srq_in, qin, opcode, PRM_CMD_OP_QUERY_SRQ);
	PRM_SET(query_srq_in, qin, srqn, srqn);
	et_expect(&o.t, et_exec(&o.t, qin, sizeof(qin), PRM_SIZE(query_srq_out) + 64), 0, 0);
	const uint8_t *s = PRM_ADDR(query_srq_out, o.t.out, srq_context_entry);
	cr_assert_eq(PRM_GET(srqc, s, state), 0, "good");
	cr_assert_eq(PRM_GET(srqc, s, log_srq_size), 6);
	cr_assert_eq(PRM_GET(srqc, s, log_rq_stride), 2);
	cr_assert_eq(PRM_GET(srqc, s, pd), o.pd);
	cr_assert_eq(PRM_GET(srqc, s, cqn), cqn);
	cr_assert_eq(PRM_GET(srqc, s, lwm), 10);
	cr_assert_eq(PRM_GET(srqc, s, log_page_size), ot_log_pg(&o));
	cr_assert_eq(PRM_GET(srqc, s, dbr_addr), q.dbr);
	cr_assert_eq(prm_bits_get64(PRM_ADDR(query_srq_out, o.t.out, pas), 0), q.mem.iova);

	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_SRQ, srqn), 0, 0);
	cr_assert_eq(ot_live(&o, EMU_OBJ_SRQ), 0);
	ot_down(&o);
}

Test(emu_srq, create_query_destroy_reads_back_every_field)
{
	create_query_destroy("emu:");
}

Test(emu_srq, create_query_destroy_with_scattered_iovas)
{
	create_query_destroy("emu:iova=scatter");
}

Test(emu_srq, create_query_destroy_with_16k_host_pages)
{
	create_query_destroy("emu:page=16k");
}

Test(emu_srq, wqe_stride_above_max_wqe_sz_rq_is_limits_exceeded)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_srq_in(&o, &q, 4, 1, &inlen);
	PRM_SET(srqc, srqc_of(in), log_rq_stride, 7);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_LIM_ERR, PRM_SYND_SIZE_TOO_LARGE);
	ot_down(&o);
}

Test(emu_srq, limit_above_the_srq_size_is_bad_parameter)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_srq_in(&o, &q, 4, 1, &inlen);
	PRM_SET(srqc, srqc_of(in), lwm, 17);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_SRQ_LIMIT);
	ot_down(&o);
}

Test(emu_srq, missing_pd_is_bad_resource)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_srq_in(&o, &q, 4, 1, &inlen);
	PRM_SET(srqc, srqc_of(in), pd, o.pd + 50);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_PD);
	ot_down(&o);
}

Test(emu_srq, unknown_cq_is_bad_resource)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_srq_in(&o, &q, 4, 1, &inlen);
	PRM_SET(srqc, srqc_of(in), cqn, 0x99);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_CQN);
	ot_down(&o);
}

Test(emu_srq, unpinned_doorbell_record_is_bad_parameter)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_srq_in(&o, &q, 4, 1, &inlen);
	PRM_SET(srqc, srqc_of(in), dbr_addr, 0x7000000000ull);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_DOORBELL_RECORD);
	ot_down(&o);
}

Test(emu_srq, unpinned_ring_page_is_refused_with_scattered_iovas)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:iova=scatter");
	uint8_t *in = ot_srq_in(&o, &q, 9, 2, &inlen); /* 32 KiB ring */
	prm_bits_set64(PRM_ADDR(create_srq_in, in, pas), 128, 0x7000000000ull);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BUFFER_NOT_PINNED);
	ot_down(&o);
}

Test(emu_srq, misaligned_ring_page_is_bad_parameter)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_srq_in(&o, &q, 4, 1, &inlen);
	prm_bits_set64(PRM_ADDR(create_srq_in, in, pas), 0, q.mem.iova + 64);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MTT_NOT_ALIGNED);
	ot_down(&o);
}

Test(emu_srq, destroy_of_an_srq_a_qp_uses_is_bad_resource_state)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint32_t srqn = ot_srq(&o, 5);
	uint8_t *in = ot_qp_in(&o, &q, OT_ST_RC, ot_cq(&o, 6), 4, 0, &inlen);
	PRM_SET(qpc, PRM_ADDR(create_qp_in, in, qpc), rq_type, 1);
	PRM_SET(qpc, PRM_ADDR(create_qp_in, in, qpc), srqn_rmpn_xrqn, srqn);
	et_expect(&o.t, et_exec(&o.t, in, inlen, PRM_SIZE(create_qp_out)), 0, 0);
	free(in);
	uint32_t qpn = (uint32_t)PRM_GET(create_qp_out, o.t.out, qpn);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_SRQ, srqn), PRM_CMD_STAT_BAD_RES_STATE,
		  PRM_SYND_OBJECT_IN_USE);
	cr_assert_eq(ot_live(&o, EMU_OBJ_SRQ), 1);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_QP, qpn), 0, 0);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_SRQ, srqn), 0, 0);
	cr_assert_eq(ot_live(&o, EMU_OBJ_SRQ), 0);
	ot_down(&o);
}

Test(emu_srq, srq_holds_its_pd_and_cq)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint32_t cqn = ot_cq(&o, 5);
	uint8_t *in = ot_srq_in(&o, &q, 4, 1, &inlen);
	PRM_SET(srqc, srqc_of(in), cqn, cqn);
	et_expect(&o.t, create(&o, in, inlen), 0, 0);
	uint32_t srqn = (uint32_t)PRM_GET(create_srq_out, o.t.out, srqn);
	et_expect(&o.t, ot_dealloc_pd(&o, o.pd), PRM_CMD_STAT_BAD_RES_STATE, PRM_SYND_OBJECT_IN_USE);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_CQ, cqn), PRM_CMD_STAT_BAD_RES_STATE,
		  PRM_SYND_OBJECT_IN_USE);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_SRQ, srqn), 0, 0);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_CQ, cqn), 0, 0);
	et_expect(&o.t, ot_dealloc_pd(&o, o.pd), 0, 0);
	ot_down(&o);
}

Test(emu_srq, destroy_of_an_unknown_srq_is_bad_resource)
{
	struct ot o;

	ot_up(&o, "emu:");
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_SRQ, 0x123), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_SRQN);
	ot_down(&o);
}

Test(emu_srq, srqs_balance_to_zero_after_destroy_and_teardown)
{
	struct ot o;
	uint32_t s[3];

	ot_up(&o, "emu:");
	for (int i = 0; i < 3; i++)
		s[i] = ot_srq(&o, (unsigned)(3 + i));
	cr_assert_eq(ot_live(&o, EMU_OBJ_SRQ), 3);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_SRQ, s[0]), 0, 0);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_SRQ, s[1]), 0, 0);
	cr_assert_eq(ot_live(&o, EMU_OBJ_SRQ), 1);
	ot_down(&o); /* the last one goes with TEARDOWN_HCA */
}

/* ARM_RQ op_mod 1 (SRQ) sets and arms the limit at ISSI 0 (Linux srq_cmd.c
 * arm_srq_cmd); above the SRQ's size it is refused. */
Test(emu_srq, arm_rq_sets_the_limit_query_reads_it_and_above_the_size_is_refused)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t srqn = ot_srq(&o, 4);
	uint8_t in[PRM_SIZE(arm_rq_in)] = { 0 };
	PRM_SET(arm_rq_in, in, opcode, PRM_CMD_OP_ARM_RQ);
	PRM_SET(arm_rq_in, in, op_mod, 1);
	PRM_SET(arm_rq_in, in, srq_number, srqn);
	PRM_SET(arm_rq_in, in, lwm, 6);
	et_expect(&o.t, et_exec(&o.t, in, sizeof(in), PRM_SIZE(arm_rq_out)), 0, 0);
	uint8_t qin[PRM_SIZE(query_srq_in)] = { 0 };
	PRM_SET(query_srq_in, qin, opcode, PRM_CMD_OP_QUERY_SRQ);
	PRM_SET(query_srq_in, qin, srqn, srqn);
	et_expect(&o.t, et_exec(&o.t, qin, sizeof(qin), PRM_SIZE(query_srq_out) + 64), 0, 0);
	cr_assert_eq(PRM_GET(srqc, PRM_ADDR(query_srq_out, o.t.out, srq_context_entry), lwm), 6);
	PRM_SET(arm_rq_in, in, lwm, 17);
	et_expect(&o.t, et_exec(&o.t, in, sizeof(in), PRM_SIZE(arm_rq_out)), PRM_CMD_STAT_BAD_PARAM,
		  PRM_SYND_BAD_SRQ_LIMIT);
	ot_down(&o);
}
