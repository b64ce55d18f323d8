/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What Linux 6.1's mlx5_ib asks of the emulator while it registers its RDMA device
 * (tools/vm, tests/vm/test_mlx5_core.sh), one behaviour each: XRC SRQs (main.c
 * mlx5_ib_dev_res_init creates devr->s0 with CREATE_XRC_SRQ), the P_Key table
 * (QUERY_HCA_VPORT_PKEY, read by the core's P_Key cache at ib_register_device), no
 * congestion-control counters advertised (counters.c reads QUERY_CONG_STATISTICS when
 * cc_query_allowed is set) and the UMR QP (umr.c mlx5r_umr_resource_init: st REG_UMR,
 * no PD, taken to RTS with the state alone). */
#include "tests/emu/emu_obj_test.h"

#include "hw/emu/objects.h"

/* ---- XRC SRQ ---- */

static uint32_t alloc_xrcd(struct ot *o)
{
	return ot_simple_id(o, PRM_CMD_OP_ALLOC_XRCD, PRM_SIZE(alloc_xrcd_out), PRM_OFF(alloc_xrcd_out, xrcd),
			    PRM_WIDTH(alloc_xrcd_out, xrcd));
}

/* CREATE_XRC_SRQ as Linux create_xrc_srq_cmd sends it: 2^log WQEs of 32 bytes. */
static uint8_t *xrc_srq_in(struct ot *o, struct oq *q, unsigned log, uint32_t xrcd, uint32_t cqn, size_t *inlen)
{
	oq_alloc(o, q, (size_t)32 << log);
	*inlen = PRM_SIZE(create_xrc_srq_in) + q->npas * 8;
	uint8_t *in = calloc(1, *inlen);
	PRM_SET(create_xrc_srq_in, in, opcode, PRM_CMD_OP_CREATE_XRC_SRQ);
	uint8_t *x = PRM_ADDR(create_xrc_srq_in, in, xrc_srq_context_entry);
	PRM_SET(xrc_srqc, x, log_xrc_srq_size, log);
	PRM_SET(xrc_srqc, x, log_rq_stride, 1);
	PRM_SET(xrc_srqc, x, xrcd, xrcd);
	PRM_SET(xrc_srqc, x, cqn, cqn);
	PRM_SET(xrc_srqc, x, log_page_size, ot_log_pg(o));
	PRM_SET(xrc_srqc, x, user_index, 0xffffff);
	PRM_SET(xrc_srqc, x, pd, o->pd);
	PRM_SET(xrc_srqc, x, lwm, 3);
	PRM_SET(xrc_srqc, x, db_record_addr_h, q->dbr >> 32);
	PRM_SET(xrc_srqc, x, db_record_addr_l, (q->dbr & 0xffffffffu) >> 2);
	oq_pas(o, q, PRM_ADDR(create_xrc_srq_in, in, pas));
	return in;
}

static int exec_free(struct ot *o, uint8_t *in, size_t inlen, size_t outlen)
{
	int st = et_exec(&o->t, in, inlen, outlen);

	free(in);
	return st;
}

static int create_xrc(struct ot *o, struct oq *q, unsigned log, uint32_t xrcd, uint32_t cqn)
{
	size_t inlen;
	uint8_t *in = xrc_srq_in(o, q, log, xrcd, cqn, &inlen);

	return exec_free(o, in, inlen, PRM_SIZE(create_xrc_srq_out));
}

static int by_number(struct ot *o, uint16_t op, unsigned num_off, uint32_t n, uint16_t op_mod, uint16_t lwm)
{
	uint8_t in[PRM_SIZE(arm_xrc_srq_in)] = { 0 };

	PRM_SET(arm_xrc_srq_in, in, opcode, op);
	PRM_SET(arm_xrc_srq_in, in, op_mod, op_mod);
	prm_bits_set(in, num_off, 24, n);
	if (op == PRM_CMD_OP_ARM_XRC_SRQ)
		PRM_SET(arm_xrc_srq_in, in, lwm, lwm);
	return et_exec(&o->t, in, sizeof(in), PRM_SIZE(query_xrc_srq_out) + 64);
}

Test(emu_linux_mlx5_ib, xrc_srq_create_query_arm_destroy)
{
	struct ot o;
	struct oq q;

	ot_up(&o, "emu:");
	uint32_t cqn = ot_cq(&o, 5), xrcd = alloc_xrcd(&o);
	et_expect(&o.t, create_xrc(&o, &q, 4, xrcd, cqn), 0,
		  0);
	uint32_t srqn = (uint32_t)PRM_GET(create_xrc_srq_out, o.t.out, xrc_srqn);
	cr_assert_neq(srqn, 0);
	cr_assert_eq(ot_live(&o, EMU_OBJ_SRQ), 1);

	et_expect(&o.t, by_number(&o, PRM_CMD_OP_QUERY_XRC_SRQ, PRM_OFF(query_xrc_srq_in, xrc_srqn), srqn, 0, 0), 0, 0);
	const uint8_t *x = PRM_ADDR(query_xrc_srq_out, o.t.out, xrc_srq_context_entry);
	cr_assert_eq(PRM_GET(xrc_srqc, x, state), 0, "good");
	cr_assert_eq(PRM_GET(xrc_srqc, x, log_xrc_srq_size), 4);
	cr_assert_eq(PRM_GET(xrc_srqc, x, log_rq_stride), 1);
	cr_assert_eq(PRM_GET(xrc_srqc, x, xrcd), xrcd);
	cr_assert_eq(PRM_GET(xrc_srqc, x, cqn), cqn);
	cr_assert_eq(PRM_GET(xrc_srqc, x, pd), o.pd);
	cr_assert_eq(PRM_GET(xrc_srqc, x, user_index), 0xffffff);
	cr_assert_eq(PRM_GET(xrc_srqc, x, lwm), 3);
	cr_assert_eq(PRM_GET(xrc_srqc, x, db_record_addr_h) << 32 | PRM_GET(xrc_srqc, x, db_record_addr_l) << 2, q.dbr);
	cr_assert_eq(prm_bits_get64(PRM_ADDR(query_xrc_srq_out, o.t.out, pas), 0), q.mem.iova);

	/* ARM_XRC_SRQ takes op_mod 1 (XRC SRQ) only, and a limit within the SRQ */
	et_expect(&o.t, by_number(&o, PRM_CMD_OP_ARM_XRC_SRQ, PRM_OFF(arm_xrc_srq_in, xrc_srqn), srqn, 1, 7), 0, 0);
	et_expect(&o.t, by_number(&o, PRM_CMD_OP_ARM_XRC_SRQ, PRM_OFF(arm_xrc_srq_in, xrc_srqn), srqn, 0, 7),
		  PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_OP_MOD);
	et_expect(&o.t, by_number(&o, PRM_CMD_OP_ARM_XRC_SRQ, PRM_OFF(arm_xrc_srq_in, xrc_srqn), srqn, 1, 17),
		  PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_SRQ_LIMIT);
	et_expect(&o.t, by_number(&o, PRM_CMD_OP_QUERY_XRC_SRQ, PRM_OFF(query_xrc_srq_in, xrc_srqn), srqn, 0, 0), 0, 0);
	cr_assert_eq(PRM_GET(xrc_srqc, PRM_ADDR(query_xrc_srq_out, o.t.out, xrc_srq_context_entry), lwm), 7);

	/* the XRC domain is held while the SRQ lives */
	{
		uint8_t in[PRM_SIZE(dealloc_xrcd_in)] = { 0 };
		PRM_SET(dealloc_xrcd_in, in, opcode, PRM_CMD_OP_DEALLOC_XRCD);
		PRM_SET(dealloc_xrcd_in, in, xrcd, xrcd);
		et_expect(&o.t, et_exec(&o.t, in, sizeof(in), PRM_SIZE(dealloc_xrcd_out)), PRM_CMD_STAT_BAD_RES_STATE,
			  PRM_SYND_OBJECT_IN_USE);
		/* an RMP's command does not destroy an XRC SRQ */
		et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_RMP, srqn), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_SRQN);
		et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_XRC_SRQ, srqn), 0, 0);
		cr_assert_eq(ot_live(&o, EMU_OBJ_SRQ), 0);
		et_expect(&o.t, et_exec(&o.t, in, sizeof(in), PRM_SIZE(dealloc_xrcd_out)), 0, 0);
	}
	ot_down(&o);
}

Test(emu_linux_mlx5_ib, xrc_srq_needs_a_domain_and_a_cq)
{
	struct ot o;
	struct oq q;

	ot_up(&o, "emu:");
	uint32_t cqn = ot_cq(&o, 5), xrcd = alloc_xrcd(&o);
	et_expect(&o.t, create_xrc(&o, &q, 4, xrcd + 1, cqn),
		  PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_XRCD);
	et_expect(&o.t, create_xrc(&o, &q, 4, xrcd, 0),
		  PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_CQN);
	cr_assert_eq(ot_live(&o, EMU_OBJ_SRQ), 0);
	ot_down(&o);
}

Test(emu_linux_mlx5_ib, plain_srq_commands_leave_an_xrc_srq_alone)
{
	struct ot o;
	struct oq q;

	ot_up(&o, "emu:");
	uint32_t cqn = ot_cq(&o, 5), xrcd = alloc_xrcd(&o);
	uint32_t plain = ot_srq(&o, 4);
	et_expect(&o.t, create_xrc(&o, &q, 4, xrcd, cqn), 0,
		  0);
	uint32_t srqn = (uint32_t)PRM_GET(create_xrc_srq_out, o.t.out, xrc_srqn);
	cr_assert_neq(srqn, plain, "one number space");
	/* the XRC SRQ commands refuse a plain SRQ, and QUERY_RMP an XRC one */
	et_expect(&o.t, by_number(&o, PRM_CMD_OP_QUERY_XRC_SRQ, PRM_OFF(query_xrc_srq_in, xrc_srqn), plain, 0, 0),
		  PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_SRQN);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_XRC_SRQ, plain), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_SRQN);
	et_expect(&o.t, by_number(&o, PRM_CMD_OP_QUERY_RMP, PRM_OFF(query_rmp_in, rmpn), srqn, 0, 0),
		  PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_SRQN);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_RMP, plain), 0, 0);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_XRC_SRQ, srqn), 0, 0);
	ot_down(&o);
}

/* ---- P_Key table ---- */

static int query_pkey(struct et *t, uint16_t index, size_t outlen)
{
	uint8_t in[PRM_SIZE(query_hca_vport_pkey_in)] = { 0 };

	PRM_SET(query_hca_vport_pkey_in, in, opcode, PRM_CMD_OP_QUERY_HCA_VPORT_PKEY);
	PRM_SET(query_hca_vport_pkey_in, in, port_num, 1);
	PRM_SET(query_hca_vport_pkey_in, in, pkey_index, index);
	return et_exec(t, in, sizeof(in), outlen);
}

static uint16_t pkey_at(const uint8_t *out, unsigned i)
{
	return (uint16_t)PRM_GET(pkey, PRM_ADDR(query_hca_vport_pkey_out, out, pkey) + i * PRM_SIZE(pkey), pkey);
}

Test(emu_linux_mlx5_ib, pkey_table_holds_the_default_partition_at_index_0)
{
	struct et t;
	size_t hdr = PRM_SIZE(query_hca_vport_pkey_out);

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, query_pkey(&t, 0, hdr + 4), 0, 0);
	cr_assert_eq(pkey_at(t.out, 0), 0xffff);
	et_expect(&t, query_pkey(&t, 1, hdr + 4), 0, 0);
	cr_assert_eq(pkey_at(t.out, 0), 0, "an empty entry");
	/* 0xffff: the whole table, 128 << pkey_table_size entries */
	{
		ET_IN(query_hca_cap_in);
		PRM_SET(query_hca_cap_in, in, opcode, PRM_CMD_OP_QUERY_HCA_CAP);
		PRM_SET(query_hca_cap_in, in, op_mod, 1);
		et_expect(&t, et_exec(&t, in, sizeof(in), PRM_SIZE(query_hca_cap_out)), 0, 0);
	}
	unsigned n = 128u << PRM_GET(cmd_hca_cap, PRM_ADDR(query_hca_cap_out, t.out, capability), pkey_table_size);
	et_expect(&t, query_pkey(&t, 0xffff, hdr + n * 4), 0, 0);
	cr_assert_eq(pkey_at(t.out, 0), 0xffff);
	for (unsigned i = 1; i < n; i++)
		cr_assert_eq(pkey_at(t.out, i), 0, "entry %u of %u: 0x%x", i, n, pkey_at(t.out, i));
	et_expect(&t, query_pkey(&t, 0xffff, hdr + 4), PRM_CMD_STAT_BAD_OUTP_LEN, PRM_SYND_OUTPUT_TOO_SHORT);
	et_expect(&t, query_pkey(&t, (uint16_t)n, hdr + 4), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PKEY_INDEX);
	et_close(&t);
}

/* ---- congestion control: not here, not advertised ---- */

Test(emu_linux_mlx5_ib, congestion_control_is_not_advertised)
{
	struct et t;

	et_open(&t, "emu:");
	et_bringup(&t);
	for (int cur = 0; cur < 2; cur++) {
		ET_IN(query_hca_cap_in);
		PRM_SET(query_hca_cap_in, in, opcode, PRM_CMD_OP_QUERY_HCA_CAP);
		PRM_SET(query_hca_cap_in, in, op_mod, cur);
		et_expect(&t, et_exec(&t, in, sizeof(in), PRM_SIZE(query_hca_cap_out)), 0, 0);
		const uint8_t *cap = PRM_ADDR(query_hca_cap_out, t.out, capability);
		cr_assert_eq(PRM_GET(cmd_hca_cap, cap, cc_query_allowed), 0);
		cr_assert_eq(PRM_GET(cmd_hca_cap, cap, cc_modify_allowed), 0);
	}
	et_close(&t);
}

/* ---- the UMR QP ---- */

#define ST_REG_UMR 0xc

/* The UMR QP as Linux creates it: st REG_UMR, pd 0, latency_sensitive, fre, no RQ. */
static uint32_t umr_qp(struct ot *o, uint32_t cqn, int with_pd, int expect_st)
{
	struct oq q;
	size_t inlen;
	uint8_t *in = ot_qp_in(o, &q, ST_REG_UMR, cqn, 4, 0, &inlen);
	uint8_t *c = PRM_ADDR(create_qp_in, in, qpc);

	PRM_SET(qpc, c, pd, with_pd ? o->pd : 0);
	PRM_SET(qpc, c, latency_sensitive, 1);
	PRM_SET(qpc, c, fre, 1);
	PRM_SET(qpc, c, rq_type, 3);
	PRM_SET(qpc, c, log_rq_size, 0);
	PRM_SET(qpc, c, log_rq_stride, 0);
	PRM_SET(qpc, c, cqn_rcv, cqn);
	et_expect(&o->t, exec_free(o, in, inlen, PRM_SIZE(create_qp_out)), expect_st, 0);
	return (uint32_t)PRM_GET(create_qp_out, o->t.out, qpn);
}

Test(emu_linux_mlx5_ib, umr_qp_needs_no_pd_and_reaches_rts_with_the_state_alone)
{
	struct ot o;

	ot_up(&o, "emu:");
	uint32_t cqn = ot_cq(&o, 5);
	uint32_t qpn = umr_qp(&o, cqn, 0, 0);
	cr_assert_eq(PRM_GET(qpc, ot_query_qp(&o, qpn), st), ST_REG_UMR);
	/* mlx5r_umr_qp_rst2rts: INIT with port 1, then RTR and RTS with no attribute */
	{
		uint8_t *in = ot_trans_in(PRM_CMD_OP_RST2INIT_QP, qpn, 0);
		PRM_SET(ads, PRM_ADDR(qpc, PRM_ADDR(rst2init_qp_in, in, qpc), primary_address_path), vhca_port_num, 1);
		PRM_SET(qpc, PRM_ADDR(rst2init_qp_in, in, qpc), pm_state, 3);
		et_expect(&o.t, ot_trans_exec(&o, in), 0, 0);
	}
	et_expect(&o.t, ot_trans_exec(&o, ot_trans_in(PRM_CMD_OP_INIT2RTR_QP, qpn, 0)), 0, 0);
	et_expect(&o.t, ot_trans_exec(&o, ot_trans_in(PRM_CMD_OP_RTR2RTS_QP, qpn, 0)), 0, 0);
	cr_assert_eq(PRM_GET(qpc, ot_query_qp(&o, qpn), state), EMU_QP_RTS);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_QP, qpn), 0, 0);
	/* a UMR QP may still name a PD; an RC QP may not go without one */
	qpn = umr_qp(&o, cqn, 1, 0);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_QP, qpn), 0, 0);
	{
		struct oq q;
		size_t inlen;
		uint8_t *in = ot_qp_in(&o, &q, OT_ST_RC, cqn, 4, 4, &inlen);
		PRM_SET(qpc, PRM_ADDR(create_qp_in, in, qpc), pd, 0);
		et_expect(&o.t, exec_free(&o, in, inlen, PRM_SIZE(create_qp_out)), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_PD);
	}
	ot_down(&o);
}

/* An XRC SRQ serves XRC target QPs only: an RC QP may not receive through one. */
Test(emu_linux_mlx5_ib, an_rc_qp_cannot_receive_through_an_xrc_srq)
{
	struct ot o;
	struct oq q, qq;
	size_t inlen;

	ot_up(&o, "emu:");
	uint32_t cqn = ot_cq(&o, 5), xrcd = alloc_xrcd(&o);
	et_expect(&o.t, create_xrc(&o, &q, 4, xrcd, cqn), 0, 0);
	uint32_t xsrq = (uint32_t)PRM_GET(create_xrc_srq_out, o.t.out, xrc_srqn);
	uint32_t plain = ot_srq(&o, 4);
	for (int i = 0; i < 2; i++) {
		uint8_t *in = ot_qp_in(&o, &qq, OT_ST_RC, cqn, 4, 0, &inlen);
		uint8_t *c = PRM_ADDR(create_qp_in, in, qpc);
		PRM_SET(qpc, c, rq_type, 1);   /* SRQ */
		PRM_SET(qpc, c, srqn_rmpn_xrqn, i ? plain : xsrq);
		et_expect(&o.t, exec_free(&o, in, inlen, PRM_SIZE(create_qp_out)), i ? 0 : PRM_CMD_STAT_BAD_RES,
			  i ? 0 : PRM_SYND_BAD_SRQN);
	}
	ot_down(&o);
}
