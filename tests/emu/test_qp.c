/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The emulated device's queue pairs through the real command engine: CREATE_QP,
 * QUERY_QP, DESTROY_QP and the PRM state machine (allowed transitions, opt_param_mask
 * per transition, required attributes), one rule per test. */
#include "hw/emu/objects.h"
#include "tests/emu/emu_obj_test.h"

static uint8_t *qpc_of(uint8_t *in)
{
	return PRM_ADDR(create_qp_in, in, qpc);
}

static uint8_t *tqpc(uint8_t *in)
{
	return PRM_ADDR(rst2init_qp_in, in, qpc);
}

static uint8_t *tads(uint8_t *in)
{
	return PRM_ADDR(qpc, tqpc(in), primary_address_path);
}

static int create(struct ot *o, uint8_t *in, size_t inlen)
{
	int st = et_exec(&o->t, in, inlen, PRM_SIZE(create_qp_out));
	free(in);
	return st;
}

static void create_query_destroy(const char *uri)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, uri);
	uint32_t cqs = ot_cq(&o, 6), cqr = ot_cq(&o, 6);
	uint8_t *in = ot_qp_in(&o, &q, OT_ST_RC, cqs, 6, 5, &inlen);
	PRM_SET(qpc, qpc_of(in), cqn_rcv, cqr);
	PRM_SET(qpc, qpc_of(in), user_index, 0x4242);
	et_expect(&o.t, create(&o, in, inlen), 0, 0);
	uint32_t qpn = (uint32_t)PRM_GET(create_qp_out, o.t.out, qpn);
	cr_assert_geq(qpn, 0x100, "QP numbers 0 and 1 are the special QPs");
	cr_assert_eq(ot_live(&o, EMU_OBJ_QP), 1);

	const uint8_t *c = ot_query_qp(&o, qpn);
	cr_assert_eq(PRM_GET(qpc, c, state), 0, "a new QP is in RST");
	cr_assert_eq(PRM_GET(qpc, c, st), OT_ST_RC);
	cr_assert_eq(PRM_GET(qpc, c, pm_state), 3);
	cr_assert_eq(PRM_GET(qpc, c, pd), o.pd);
	cr_assert_eq(PRM_GET(qpc, c, uar_page), o.uar);
	cr_assert_eq(PRM_GET(qpc, c, log_sq_size), 6);
	cr_assert_eq(PRM_GET(qpc, c, log_rq_size), 5);
	cr_assert_eq(PRM_GET(qpc, c, log_rq_stride), 2);
	cr_assert_eq(PRM_GET(qpc, c, cqn_snd), cqs);
	cr_assert_eq(PRM_GET(qpc, c, cqn_rcv), cqr);
	cr_assert_eq(PRM_GET(qpc, c, user_index), 0x4242);
	cr_assert_eq(PRM_GET(qpc, c, dbr_addr), q.dbr);
	cr_assert_eq(PRM_GET(qpc, c, log_page_size), ot_log_pg(&o));
	cr_assert_eq(prm_bits_get64(PRM_ADDR(query_qp_out, o.t.out, qp_pas_or_qpc_ext_and_pas), 0), q.mem.iova);

	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_QP, qpn), 0, 0);
	cr_assert_eq(ot_live(&o, EMU_OBJ_QP), 0);
	ot_down(&o);
}

Test(emu_qp, create_query_destroy_reads_back_every_field)
{
	create_query_destroy("emu:");
}

Test(emu_qp, create_query_destroy_with_scattered_iovas)
{
	create_query_destroy("emu:iova=scatter");
}

Test(emu_qp, create_query_destroy_with_16k_host_pages)
{
	create_query_destroy("emu:page=16k");
}

Test(emu_qp, rc_walks_rst_init_rtr_rts_and_query_reads_back_the_connection)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_RC, ot_cq(&o, 6));
	ot_qp_to_rts(&o, qpn);
	const uint8_t *c = ot_query_qp(&o, qpn);
	const uint8_t *ads = PRM_ADDR(qpc, c, primary_address_path);
	cr_assert_eq(PRM_GET(qpc, c, state), 3, "RTS");
	cr_assert_eq(PRM_GET(qpc, c, mtu), 3);
	cr_assert_eq(PRM_GET(qpc, c, remote_qpn), qpn);
	cr_assert_eq(PRM_GET(qpc, c, next_rcv_psn), 0x123456);
	cr_assert_eq(PRM_GET(qpc, c, next_send_psn), 0x654321);
	cr_assert_eq(PRM_GET(qpc, c, retry_count), 7);
	cr_assert_eq(PRM_GET(qpc, c, rnr_retry), 7);
	cr_assert_eq(PRM_GET(qpc, c, log_sra_max), 2);
	cr_assert_eq(PRM_GET(qpc, c, log_rra_max), 2);
	cr_assert_eq(PRM_GET(qpc, c, min_rnr_nak), 12);
	cr_assert_eq(PRM_GET(qpc, c, rre), 1);
	cr_assert_eq(PRM_GET(qpc, c, rwe), 1);
	cr_assert_eq(PRM_GET(qpc, c, rae), 0);
	cr_assert_eq(PRM_GET(ads, ads, ack_timeout), 14);
	cr_assert_eq(PRM_GET(ads, ads, grh), 1);
	cr_assert_eq(PRM_GET(ads, ads, hop_limit), 64);
	cr_assert_eq(PRM_GET(ads, ads, udp_sport), 0xc123);
	cr_assert_eq(PRM_GET(ads, ads, vhca_port_num), 1);
	cr_assert_eq(PRM_GET(ads, ads, rmac_47_32), 0x0200);
	cr_assert_eq(PRM_GET(ads, ads, rmac_31_0), 0x7f000009);
	cr_assert_arr_eq(PRM_ADDR(ads, ads, rgid_rip), ot_rgid, 16);
	ot_down(&o);
}

Test(emu_qp, ud_walks_to_rts_with_its_q_key)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_UD, ot_cq(&o, 6));
	uint8_t *in = ot_rst2init_in(qpn);
	PRM_SET(qpc, tqpc(in), rre, 0);
	PRM_SET(qpc, tqpc(in), rwe, 0);
	PRM_SET(qpc, tqpc(in), q_key, 0x80010203);
	et_expect(&o.t, ot_trans_exec(&o, in), 0, 0);
	/* UD's INIT2RTR carries its MTU and message limit (as Linux sends them) */
	et_expect(&o.t, ot_trans_exec(&o, ot_ud_init2rtr_in(qpn)), 0, 0);
	in = ot_trans_in(PRM_CMD_OP_RTR2RTS_QP, qpn, 0);
	PRM_SET(qpc, tqpc(in), next_send_psn, 0x1000);
	et_expect(&o.t, ot_trans_exec(&o, in), 0, 0);
	const uint8_t *c = ot_query_qp(&o, qpn);
	cr_assert_eq(PRM_GET(qpc, c, state), 3);
	cr_assert_eq(PRM_GET(qpc, c, st), OT_ST_UD);
	cr_assert_eq(PRM_GET(qpc, c, q_key), 0x80010203);
	cr_assert_eq(PRM_GET(qpc, c, next_send_psn), 0x1000);
	ot_down(&o);
}

Test(emu_qp, uc_walks_to_rts_and_keeps_only_remote_write)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_UC, ot_cq(&o, 6));
	ot_qp_to_rts(&o, qpn);
	const uint8_t *c = ot_query_qp(&o, qpn);
	cr_assert_eq(PRM_GET(qpc, c, state), 3);
	cr_assert_eq(PRM_GET(qpc, c, rwe), 1);
	cr_assert_eq(PRM_GET(qpc, c, rre), 0, "UC has no RDMA READ responder");
	ot_down(&o);
}

Test(emu_qp, unknown_send_cq_is_bad_resource)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint32_t cqn = ot_cq(&o, 6);
	uint8_t *in = ot_qp_in(&o, &q, OT_ST_RC, cqn, 4, 4, &inlen);
	PRM_SET(qpc, qpc_of(in), cqn_snd, cqn + 9);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_CQN);
	cr_assert_eq(ot_live(&o, EMU_OBJ_QP), 0);
	ot_down(&o);
}

Test(emu_qp, unknown_receive_cq_is_bad_resource)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint32_t cqn = ot_cq(&o, 6);
	uint8_t *in = ot_qp_in(&o, &q, OT_ST_RC, cqn, 4, 4, &inlen);
	PRM_SET(qpc, qpc_of(in), cqn_rcv, 0);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_CQN);
	ot_down(&o);
}

Test(emu_qp, missing_pd_is_bad_resource)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_qp_in(&o, &q, OT_ST_RC, ot_cq(&o, 6), 4, 4, &inlen);
	PRM_SET(qpc, qpc_of(in), pd, o.pd + 100);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_PD);
	ot_down(&o);
}

Test(emu_qp, unknown_srq_for_an_srq_receive_queue_is_bad_resource)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_qp_in(&o, &q, OT_ST_RC, ot_cq(&o, 6), 4, 0, &inlen);
	PRM_SET(qpc, qpc_of(in), rq_type, 1);
	PRM_SET(qpc, qpc_of(in), srqn_rmpn_xrqn, 0x55);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_SRQN);
	ot_down(&o);
}

Test(emu_qp, qp_on_an_srq_holds_it)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint32_t srqn = ot_srq(&o, 5);
	uint8_t *in = ot_qp_in(&o, &q, OT_ST_RC, ot_cq(&o, 6), 4, 0, &inlen);
	PRM_SET(qpc, qpc_of(in), rq_type, 1);
	PRM_SET(qpc, qpc_of(in), srqn_rmpn_xrqn, srqn);
	et_expect(&o.t, create(&o, in, inlen), 0, 0);
	uint32_t qpn = (uint32_t)PRM_GET(create_qp_out, o.t.out, qpn);
	const uint8_t *c = ot_query_qp(&o, qpn);
	cr_assert_eq(PRM_GET(qpc, c, rq_type), 1);
	cr_assert_eq(PRM_GET(qpc, c, srqn_rmpn_xrqn), srqn);
	et_expect(&o.t, ot_destroy(&o, ot_destroy_srq_op(), srqn), PRM_CMD_STAT_BAD_RES_STATE,
		  PRM_SYND_OBJECT_IN_USE);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_QP, qpn), 0, 0);
	et_expect(&o.t, ot_destroy(&o, ot_destroy_srq_op(), srqn), 0, 0);
	ot_down(&o);
}

Test(emu_qp, unknown_service_type_is_bad_parameter)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_qp_in(&o, &q, 0x7, ot_cq(&o, 6), 4, 4, &inlen);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_QP_TYPE);
	ot_down(&o);
}

Test(emu_qp, reserved_pm_state_is_bad_parameter)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_qp_in(&o, &q, OT_ST_RC, ot_cq(&o, 6), 4, 4, &inlen);
	PRM_SET(qpc, qpc_of(in), pm_state, 2);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PM_STATE);
	ot_down(&o);
}

Test(emu_qp, receive_wqe_larger_than_max_wqe_sz_rq_is_limits_exceeded)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	cr_assert_lt(PRM_GET(cmd_hca_cap, o.gen, max_wqe_sz_rq), 16u << 7);
	uint8_t *in = ot_qp_in(&o, &q, OT_ST_RC, ot_cq(&o, 6), 4, 4, &inlen);
	PRM_SET(qpc, qpc_of(in), log_rq_stride, 7);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_LIM_ERR, PRM_SYND_SIZE_TOO_LARGE);
	ot_down(&o);
}

Test(emu_qp, unpinned_doorbell_record_is_bad_parameter)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:iova=scatter");
	uint8_t *in = ot_qp_in(&o, &q, OT_ST_RC, ot_cq(&o, 6), 4, 4, &inlen);
	PRM_SET(qpc, qpc_of(in), dbr_addr, 0x7000000000ull);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_DOORBELL_RECORD);
	ot_down(&o);
}

Test(emu_qp, unpinned_queue_page_is_bad_parameter)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:iova=scatter");
	uint8_t *in = ot_qp_in(&o, &q, OT_ST_RC, ot_cq(&o, 6), 8, 8, &inlen);
	prm_bits_set64(PRM_ADDR(create_qp_in, in, pas), 64, 0x7000000000ull);
	et_expect(&o.t, create(&o, in, inlen), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BUFFER_NOT_PINNED);
	ot_down(&o);
}

Test(emu_qp, queue_of_no_sq_and_zero_rq_needs_no_cqs)
{
	struct ot o;
	struct oq q;
	size_t inlen;

	ot_up(&o, "emu:");
	uint8_t *in = ot_qp_in(&o, &q, OT_ST_UD, 0, 0, 0, &inlen);
	PRM_SET(qpc, qpc_of(in), no_sq, 1);
	PRM_SET(qpc, qpc_of(in), rq_type, 3);
	et_expect(&o.t, create(&o, in, inlen), 0, 0);
	ot_down(&o);
}

/* ---- the state machine ---- */

Test(emu_qp, init2rtr_on_a_reset_qp_is_an_illegal_transition)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_RC, ot_cq(&o, 6));
	et_expect(&o.t, ot_trans_exec(&o, ot_init2rtr_in(qpn, qpn)), PRM_CMD_STAT_BAD_QP_STATE,
		  PRM_SYND_ILLEGAL_QP_TRANSITION);
	cr_assert_eq(PRM_GET(qpc, ot_query_qp(&o, qpn), state), 0, "still RST");
	ot_down(&o);
}

Test(emu_qp, rtr2rts_on_an_init_qp_is_an_illegal_transition)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_RC, ot_cq(&o, 6));
	et_expect(&o.t, ot_trans_exec(&o, ot_rst2init_in(qpn)), 0, 0);
	et_expect(&o.t, ot_trans_exec(&o, ot_rtr2rts_in(qpn)), PRM_CMD_STAT_BAD_QP_STATE,
		  PRM_SYND_ILLEGAL_QP_TRANSITION);
	ot_down(&o);
}

Test(emu_qp, rst2init_twice_is_an_illegal_transition)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_RC, ot_cq(&o, 6));
	et_expect(&o.t, ot_trans_exec(&o, ot_rst2init_in(qpn)), 0, 0);
	et_expect(&o.t, ot_trans_exec(&o, ot_rst2init_in(qpn)), PRM_CMD_STAT_BAD_QP_STATE,
		  PRM_SYND_ILLEGAL_QP_TRANSITION);
	ot_down(&o);
}

Test(emu_qp, transition_of_an_unknown_qp_is_bad_resource)
{
	struct ot o;

	ot_up(&o, "emu:");
	et_expect(&o.t, ot_trans_exec(&o, ot_rst2init_in(0x3333)), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_QPN);
	ot_down(&o);
}

Test(emu_qp, rst2init_accepts_no_optional_parameter)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_RC, ot_cq(&o, 6));
	uint8_t *in = ot_rst2init_in(qpn);
	PRM_SET(rst2init_qp_in, in, opt_param_mask, OT_OPT_PKEY);
	et_expect(&o.t, ot_trans_exec(&o, in), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_QP_ATTRIBUTE);
	ot_down(&o);
}

Test(emu_qp, remote_read_enable_is_not_optional_in_uc_init2rtr)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_UC, ot_cq(&o, 6));
	et_expect(&o.t, ot_trans_exec(&o, ot_rst2init_in(qpn)), 0, 0);
	uint8_t *in = ot_init2rtr_in(qpn, qpn);
	PRM_SET(rst2init_qp_in, in, opt_param_mask, OT_OPT_RRE | OT_OPT_RWE);
	et_expect(&o.t, ot_trans_exec(&o, in), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_QP_ATTRIBUTE);
	cr_assert_eq(PRM_GET(qpc, ot_query_qp(&o, qpn), state), 1, "still INIT");
	ot_down(&o);
}

Test(emu_qp, sra_max_is_not_optional_in_rc_rtr2rts)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_RC, ot_cq(&o, 6));
	et_expect(&o.t, ot_trans_exec(&o, ot_rst2init_in(qpn)), 0, 0);
	et_expect(&o.t, ot_trans_exec(&o, ot_init2rtr_in(qpn, qpn)), 0, 0);
	uint8_t *in = ot_rtr2rts_in(qpn);
	PRM_SET(rst2init_qp_in, in, opt_param_mask, OT_OPT_SRA_MAX);
	et_expect(&o.t, ot_trans_exec(&o, in), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_QP_ATTRIBUTE);
	ot_down(&o);
}

Test(emu_qp, rc_init2rtr_accepts_access_flags_as_optional)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_RC, ot_cq(&o, 6));
	et_expect(&o.t, ot_trans_exec(&o, ot_rst2init_in(qpn)), 0, 0);
	uint8_t *in = ot_init2rtr_in(qpn, qpn);
	PRM_SET(rst2init_qp_in, in, opt_param_mask, OT_OPT_RRE | OT_OPT_RWE | OT_OPT_RAE);
	PRM_SET(qpc, tqpc(in), rae, 1);
	PRM_SET(qpc, tqpc(in), rre, 0);
	PRM_SET(qpc, tqpc(in), rwe, 1);
	et_expect(&o.t, ot_trans_exec(&o, in), 0, 0);
	const uint8_t *c = ot_query_qp(&o, qpn);
	cr_assert_eq(PRM_GET(qpc, c, rae), 1);
	cr_assert_eq(PRM_GET(qpc, c, rre), 0);
	ot_down(&o);
}

Test(emu_qp, init2init_changes_the_pkey_index_when_asked)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_RC, ot_cq(&o, 6));
	et_expect(&o.t, ot_trans_exec(&o, ot_rst2init_in(qpn)), 0, 0);
	uint8_t *in = ot_trans_in(PRM_CMD_OP_INIT2INIT_QP, qpn, OT_OPT_PKEY);
	PRM_SET(ads, tads(in), pkey_index, 3);
	et_expect(&o.t, ot_trans_exec(&o, in), 0, 0);
	const uint8_t *c = ot_query_qp(&o, qpn);
	cr_assert_eq(PRM_GET(qpc, c, state), 1);
	cr_assert_eq(PRM_GET(ads, PRM_ADDR(qpc, c, primary_address_path), pkey_index), 3);
	ot_down(&o);
}

Test(emu_qp, rts2rts_changes_the_ack_timeout_when_asked)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_RC, ot_cq(&o, 6));
	ot_qp_to_rts(&o, qpn);
	uint8_t *in = ot_trans_in(PRM_CMD_OP_RTS2RTS_QP, qpn, OT_OPT_ACK_TIMEOUT);
	PRM_SET(ads, tads(in), ack_timeout, 20);
	et_expect(&o.t, ot_trans_exec(&o, in), 0, 0);
	const uint8_t *c = ot_query_qp(&o, qpn);
	cr_assert_eq(PRM_GET(ads, PRM_ADDR(qpc, c, primary_address_path), ack_timeout), 20);
	cr_assert_eq(PRM_GET(qpc, c, next_send_psn), 0x654321, "untouched fields stay");
	ot_down(&o);
}

Test(emu_qp, ud_rts2rts_moves_the_receive_cq_and_its_reference)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t cq1 = ot_cq(&o, 6), cq2 = ot_cq(&o, 6);
	uint32_t qpn = ot_qp(&o, OT_ST_UD, cq1);
	et_expect(&o.t, ot_trans_exec(&o, ot_rst2init_in(qpn)), 0, 0);
	et_expect(&o.t, ot_trans_exec(&o, ot_ud_init2rtr_in(qpn)), 0, 0);
	et_expect(&o.t, ot_trans_exec(&o, ot_trans_in(PRM_CMD_OP_RTR2RTS_QP, qpn, 0)), 0, 0);
	uint8_t *in = ot_trans_in(PRM_CMD_OP_RTS2RTS_QP, qpn, OT_OPT_CQN_RCV);
	PRM_SET(qpc, tqpc(in), cqn_rcv, cq2);
	et_expect(&o.t, ot_trans_exec(&o, in), 0, 0);
	cr_assert_eq(PRM_GET(qpc, ot_query_qp(&o, qpn), cqn_rcv), cq2);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_CQ, cq2), PRM_CMD_STAT_BAD_RES_STATE,
		  PRM_SYND_OBJECT_IN_USE);
	/* cq1 is still the send CQ */
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_CQ, cq1), PRM_CMD_STAT_BAD_RES_STATE,
		  PRM_SYND_OBJECT_IN_USE);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_QP, qpn), 0, 0);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_CQ, cq1), 0, 0);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_CQ, cq2), 0, 0);
	ot_down(&o);
}

static void init2rtr_fails(void (*breakit)(uint8_t *in), uint8_t status, uint32_t synd)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_RC, ot_cq(&o, 6));
	et_expect(&o.t, ot_trans_exec(&o, ot_rst2init_in(qpn)), 0, 0);
	uint8_t *in = ot_init2rtr_in(qpn, qpn);
	breakit(in);
	et_expect(&o.t, ot_trans_exec(&o, in), status, synd);
	cr_assert_eq(PRM_GET(qpc, ot_query_qp(&o, qpn), state), 1, "still INIT");
	ot_down(&o);
}

static void no_mtu(uint8_t *in) { PRM_SET(qpc, tqpc(in), mtu, 0); }
static void mtu_8k(uint8_t *in) { PRM_SET(qpc, tqpc(in), mtu, 6); }
static void no_remote_qpn(uint8_t *in) { PRM_SET(qpc, tqpc(in), remote_qpn, 0); }
static void no_rmac(uint8_t *in)
{
	PRM_SET(ads, tads(in), rmac_47_32, 0);
	PRM_SET(ads, tads(in), rmac_31_0, 0);
}
static void no_rgid(uint8_t *in) { memset(PRM_ADDR(ads, tads(in), rgid_rip), 0, 16); }
static void no_grh(uint8_t *in) { PRM_SET(ads, tads(in), grh, 0); }
static void port_2(uint8_t *in) { PRM_SET(ads, tads(in), vhca_port_num, 2); }
static void rra_64(uint8_t *in) { PRM_SET(qpc, tqpc(in), log_rra_max, 7); }
static void empty_gid(uint8_t *in) { PRM_SET(ads, tads(in), src_addr_index, 5); }

static void lmm_too_big(uint8_t *in) { PRM_SET(qpc, tqpc(in), log_msg_max, 31); }

Test(emu_qp, rc_init2rtr_with_log_msg_max_above_the_caps_is_limits_exceeded)
{
	init2rtr_fails(lmm_too_big, PRM_CMD_STAT_LIM_ERR, PRM_SYND_SIZE_TOO_LARGE);
}

/* The message limit is the one INIT2RTR carries (Linux mlx5_ib, Linux's VFIO mlx5
 * driver and rdma-core's DEVX test send it there only), not CREATE_QP's. */
Test(emu_qp, init2rtr_log_msg_max_is_the_qps_message_limit)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_RC, ot_cq(&o, 6));
	et_expect(&o.t, ot_trans_exec(&o, ot_rst2init_in(qpn)), 0, 0);
	uint8_t *in = ot_init2rtr_in(qpn, qpn);
	PRM_SET(qpc, tqpc(in), log_msg_max, 13);
	et_expect(&o.t, ot_trans_exec(&o, in), 0, 0);
	cr_assert_eq(PRM_GET(qpc, ot_query_qp(&o, qpn), log_msg_max), 13);
	ot_down(&o);
}

Test(emu_qp, ud_init2rtr_without_an_mtu_is_a_missing_attribute)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_UD, ot_cq(&o, 6));
	uint8_t *in = ot_rst2init_in(qpn);
	PRM_SET(qpc, tqpc(in), rre, 0);
	PRM_SET(qpc, tqpc(in), rwe, 0);
	et_expect(&o.t, ot_trans_exec(&o, in), 0, 0);
	et_expect(&o.t, ot_trans_exec(&o, ot_trans_in(PRM_CMD_OP_INIT2RTR_QP, qpn, 0)), PRM_CMD_STAT_BAD_PARAM,
		  PRM_SYND_MISSING_QP_ATTRIBUTE);
	ot_down(&o);
}

Test(emu_qp, rc_init2rtr_without_path_mtu_is_a_missing_attribute)
{
	init2rtr_fails(no_mtu, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MISSING_QP_ATTRIBUTE);
}

Test(emu_qp, rc_init2rtr_with_an_mtu_above_4096_is_bad_mtu)
{
	init2rtr_fails(mtu_8k, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_MTU);
}

Test(emu_qp, rc_init2rtr_without_remote_qpn_is_a_missing_attribute)
{
	init2rtr_fails(no_remote_qpn, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MISSING_QP_ATTRIBUTE);
}

Test(emu_qp, rc_init2rtr_without_remote_mac_is_a_missing_attribute)
{
	init2rtr_fails(no_rmac, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MISSING_QP_ATTRIBUTE);
}

Test(emu_qp, rc_init2rtr_without_remote_gid_is_a_missing_attribute)
{
	init2rtr_fails(no_rgid, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MISSING_QP_ATTRIBUTE);
}

/* Entry 5 is inside the table but was never written: no address to send from. */
Test(emu_qp, rc_init2rtr_from_an_empty_gid_entry_is_bad_gid_index)
{
	init2rtr_fails(empty_gid, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_GID_INDEX);
}

Test(emu_qp, rc_init2rtr_without_grh_is_a_bad_roce_path)
{
	init2rtr_fails(no_grh, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_ADDRESS_PATH);
}

Test(emu_qp, rc_init2rtr_on_port_2_of_a_one_port_device_is_bad_port)
{
	init2rtr_fails(port_2, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PORT);
}

Test(emu_qp, rc_init2rtr_with_more_responder_reads_than_caps_is_limits_exceeded)
{
	init2rtr_fails(rra_64, PRM_CMD_STAT_LIM_ERR, PRM_SYND_LIMIT_EXCEEDED);
}

Test(emu_qp, rc_rtr2rts_with_more_requester_reads_than_caps_is_limits_exceeded)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_RC, ot_cq(&o, 6));
	et_expect(&o.t, ot_trans_exec(&o, ot_rst2init_in(qpn)), 0, 0);
	et_expect(&o.t, ot_trans_exec(&o, ot_init2rtr_in(qpn, qpn)), 0, 0);
	uint8_t *in = ot_rtr2rts_in(qpn);
	PRM_SET(qpc, tqpc(in), log_sra_max, PRM_GET(cmd_hca_cap, o.gen, log_max_ra_req_qp) + 1);
	et_expect(&o.t, ot_trans_exec(&o, in), PRM_CMD_STAT_LIM_ERR, PRM_SYND_LIMIT_EXCEEDED);
	ot_down(&o);
}

Test(emu_qp, two_err_from_rts_then_only_reset_or_err_are_allowed)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_RC, ot_cq(&o, 6));
	ot_qp_to_rts(&o, qpn);
	et_expect(&o.t, ot_2state(&o, PRM_CMD_OP_2ERR_QP, qpn), 0, 0);
	cr_assert_eq(PRM_GET(qpc, ot_query_qp(&o, qpn), state), 6, "ERR");
	et_expect(&o.t, ot_trans_exec(&o, ot_trans_in(PRM_CMD_OP_RTS2RTS_QP, qpn, 0)), PRM_CMD_STAT_BAD_QP_STATE,
		  PRM_SYND_ILLEGAL_QP_TRANSITION);
	et_expect(&o.t, ot_2state(&o, PRM_CMD_OP_2ERR_QP, qpn), 0, 0);
	et_expect(&o.t, ot_2state(&o, PRM_CMD_OP_2RST_QP, qpn), 0, 0);
	cr_assert_eq(PRM_GET(qpc, ot_query_qp(&o, qpn), state), 0, "RST");
	ot_down(&o);
}

Test(emu_qp, two_rst_resets_the_queues_and_the_qp_connects_again)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_RC, ot_cq(&o, 6));
	ot_qp_to_rts(&o, qpn);
	/* what a queue engine advances while the QP works */
	pthread_mutex_lock(&o.t.emu->lock);
	struct emu_qp *qp = emu_obj_get(o.t.emu, EMU_OBJ_QP, qpn);
	cr_assert_not_null(qp);
	qp->eng.sq_pi = 17;
	qp->eng.rq_pi = 5;
	pthread_mutex_unlock(&o.t.emu->lock);
	cr_assert_eq(PRM_GET(qpc, ot_query_qp(&o, qpn), hw_sq_wqebb_counter), 17);
	et_expect(&o.t, ot_2state(&o, PRM_CMD_OP_2RST_QP, qpn), 0, 0);
	const uint8_t *c = ot_query_qp(&o, qpn);
	cr_assert_eq(PRM_GET(qpc, c, state), 0);
	cr_assert_eq(PRM_GET(qpc, c, hw_sq_wqebb_counter), 0);
	cr_assert_eq(PRM_GET(qpc, c, hw_rq_counter), 0);
	ot_qp_to_rts(&o, qpn);
	cr_assert_eq(PRM_GET(qpc, ot_query_qp(&o, qpn), state), 3);
	ot_down(&o);
}

Test(emu_qp, two_err_is_allowed_from_reset)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_RC, ot_cq(&o, 6));
	et_expect(&o.t, ot_2state(&o, PRM_CMD_OP_2ERR_QP, qpn), 0, 0);
	cr_assert_eq(PRM_GET(qpc, ot_query_qp(&o, qpn), state), 6);
	ot_down(&o);
}

Test(emu_qp, rst2init_on_port_2_of_a_one_port_device_is_bad_port)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_RC, ot_cq(&o, 6));
	uint8_t *in = ot_rst2init_in(qpn);
	PRM_SET(ads, tads(in), vhca_port_num, 2);
	et_expect(&o.t, ot_trans_exec(&o, in), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PORT);
	ot_down(&o);
}

/* ---- lifetime ---- */

Test(emu_qp, dealloc_of_a_pd_a_qp_uses_is_bad_resource_state)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t qpn = ot_qp(&o, OT_ST_RC, ot_cq(&o, 6));
	et_expect(&o.t, ot_dealloc_pd(&o, o.pd), PRM_CMD_STAT_BAD_RES_STATE, PRM_SYND_OBJECT_IN_USE);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_QP, qpn), 0, 0);
	et_expect(&o.t, ot_dealloc_pd(&o, o.pd), 0, 0);
	ot_down(&o);
}

Test(emu_qp, destroy_of_an_unknown_qp_is_bad_resource)
{
	struct ot o;

	ot_up(&o, "emu:");
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_QP, 0x4321), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_QPN);
	ot_down(&o);
}

Test(emu_qp, qps_balance_to_zero_after_destroy_in_every_state)
{
	struct ot o;
	uint32_t qpn[4];

	ot_up(&o, "emu:");
	uint32_t cqn = ot_cq(&o, 6);
	for (int i = 0; i < 4; i++)
		qpn[i] = ot_qp(&o, OT_ST_RC, cqn);
	et_expect(&o.t, ot_trans_exec(&o, ot_rst2init_in(qpn[1])), 0, 0);
	ot_qp_to_rts(&o, qpn[2]);
	et_expect(&o.t, ot_2state(&o, PRM_CMD_OP_2ERR_QP, qpn[3]), 0, 0);
	cr_assert_eq(ot_live(&o, EMU_OBJ_QP), 4);
	for (int i = 0; i < 4; i++)
		et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_QP, qpn[i]), 0, 0);
	cr_assert_eq(ot_live(&o, EMU_OBJ_QP), 0);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_CQ, cqn), 0, 0);
	ot_down(&o);
}

Test(emu_qp, teardown_hca_destroys_live_qps_and_what_they_hold)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t srqn = ot_srq(&o, 4);
	uint32_t qpn = ot_qp(&o, OT_ST_RC, ot_cq(&o, 6));
	ot_qp_to_rts(&o, qpn);
	(void)srqn;
	ot_down(&o); /* asserts every object type is back to zero */
}
