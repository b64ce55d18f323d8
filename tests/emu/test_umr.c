/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* UMR WQEs (PRM "UMR WQE") through the emulated device's send doorbell, driven by raw
 * commands and a hand-built WQE: a UMR is executed only on a QP created with qpc.fre
 * (PRM "QP Context": fast registration enable; Linux sets it on its kernel QPs, the UMR
 * QP among them, drivers/infiniband/hw/mlx5/qp.c create_kernel_qp).  On any other QP
 * it completes in error (local QP operation error, hw/emu/sq_engine.c) with a driver
 * error naming fre, and the MKey stays as it was. */
#include "tests/emu/emu_obj_test.h"

#include <unistd.h>

#include "hw/emu/objects.h"

struct umr_run {
	struct ot o;
	struct oq cq, qp;
	uint32_t cqn, qpn, mkey_index;
};

/* A device with a free MKey for UMR (umr_en, local read only), a CQ and an RC QP in
 * RTS with or without qpc.fre; or (umr_up_st with st REG_UMR) the UMR QP as Linux's
 * mlx5_ib makes it (umr.c mlx5r_umr_resource_init: no PD, fre, taken to RTS with the
 * state alone). */
#define ST_REG_UMR 0xc
static void umr_up_st(struct umr_run *r, bool fre, unsigned st);
static void umr_up(struct umr_run *r, bool fre)
{
	umr_up_st(r, fre, OT_ST_RC);
}

static void umr_up_st(struct umr_run *r, bool fre, unsigned st)
{
	size_t inlen;
	uint8_t *in;

	ot_up(&r->o, "emu:");
	{
		uint8_t mk[PRM_SIZE(create_mkey_in)] = { 0 };
		uint8_t *mkc = PRM_ADDR(create_mkey_in, mk, memory_key_mkey_entry);

		PRM_SET(create_mkey_in, mk, opcode, PRM_CMD_OP_CREATE_MKEY);
		PRM_SET(mkc, mkc, free, 1);
		PRM_SET(mkc, mkc, umr_en, 1);
		PRM_SET(mkc, mkc, access_mode_1_0, 1);   /* MTT */
		PRM_SET(mkc, mkc, lr, 1);
		PRM_SET(mkc, mkc, qpn, 0xffffff);
		PRM_SET(mkc, mkc, pd, r->o.pd);
		PRM_SET(mkc, mkc, log_page_size, 12);
		PRM_SET(mkc, mkc, translations_octword_size, 64);
		et_expect(&r->o.t, et_exec(&r->o.t, mk, sizeof(mk), PRM_SIZE(create_mkey_out)), 0, 0);
		r->mkey_index = (uint32_t)PRM_GET(create_mkey_out, r->o.t.out, mkey_index);
	}
	in = ot_cq_in(&r->o, &r->cq, 4, &inlen);
	for (unsigned i = 0; i < 16; i++)   /* the ring starts invalid, software owned */
		((uint8_t *)r->cq.mem.va)[i * 64 + 63] = (uint8_t)(PRM_CQE_INVALID << 4 | 1);
	et_expect(&r->o.t, et_exec(&r->o.t, in, inlen, PRM_SIZE(create_cq_out)), 0, 0);
	free(in);
	r->cqn = (uint32_t)PRM_GET(create_cq_out, r->o.t.out, cqn);
	in = ot_qp_in(&r->o, &r->qp, st, r->cqn, 4, 4, &inlen);
	PRM_SET(qpc, PRM_ADDR(create_qp_in, in, qpc), fre, fre ? 1 : 0);
	if (st == ST_REG_UMR)
		PRM_SET(qpc, PRM_ADDR(create_qp_in, in, qpc), pd, 0);
	et_expect(&r->o.t, et_exec(&r->o.t, in, inlen, PRM_SIZE(create_qp_out)), 0, 0);
	free(in);
	r->qpn = (uint32_t)PRM_GET(create_qp_out, r->o.t.out, qpn);
	if (st != ST_REG_UMR) {
		ot_qp_to_rts(&r->o, r->qpn);
		return;
	}
	et_expect(&r->o.t, ot_trans_exec(&r->o, ot_rst2init_in(r->qpn)), 0, 0);
	et_expect(&r->o.t, ot_trans_exec(&r->o, ot_trans_in(PRM_CMD_OP_INIT2RTR_QP, r->qpn, 0)), 0, 0);
	et_expect(&r->o.t, ot_trans_exec(&r->o, ot_trans_in(PRM_CMD_OP_RTR2RTS_QP, r->qpn, 0)), 0, 0);
}

/* Post one UMR WQE (two basic blocks: ctrl, UMR control, mkey context) that gives the
 * MKey local write, ring the send doorbell and return its CQE (within 2 s). */
static const uint8_t *umr_post_op(struct umr_run *r, unsigned opcode);
static const uint8_t *umr_post(struct umr_run *r)
{
	return umr_post_op(r, PRM_WQE_OP_UMR);
}

/* The same WQE with another opcode (its UMR segments then are data the opcode does
 * not read). */
static const uint8_t *umr_post_op(struct umr_run *r, unsigned opcode)
{
	uint8_t *sq = (uint8_t *)r->qp.mem.va + ((size_t)64 << 4);   /* after 16 receive WQEs of 64 bytes */
	uint8_t *ctrl = sq, *umr = sq + PRM_SIZE(wqe_ctrl_seg), *mkc = sq + 64;
	uint8_t *dbrec = (uint8_t *)r->qp.mem.va + r->qp.ring_bytes;
	const uint8_t *cqe = r->cq.mem.va;

	memset(sq, 0, 128);
	PRM_SET(wqe_ctrl_seg, ctrl, opcode, opcode);
	PRM_SET(wqe_ctrl_seg, ctrl, wqe_index, 0);
	PRM_SET(wqe_ctrl_seg, ctrl, qpn, r->qpn);
	PRM_SET(wqe_ctrl_seg, ctrl, ds, (PRM_SIZE(wqe_ctrl_seg) + PRM_SIZE(wqe_umr_ctrl_seg) + PRM_SIZE(mkc)) / 16);
	PRM_SET(wqe_ctrl_seg, ctrl, ce, 2);   /* CQE always */
	PRM_SET(wqe_ctrl_seg, ctrl, imm, r->mkey_index << 8);
	PRM_SET(wqe_umr_ctrl_seg, umr, mkey_mask, EMU_UMR_MASK_LR | EMU_UMR_MASK_LW);
	PRM_SET(mkc, mkc, lr, 1);
	PRM_SET(mkc, mkc, lw, 1);
	PRM_SET(qp_dbrec, dbrec, send_counter, 2);
	uint64_t first8;
	memcpy(&first8, ctrl, 8);
	shim_mmio_write64_raw(&r->o.t.bar, (uint64_t)r->o.uar * r->o.t.uar_page_size + 0x800, first8);
	for (int i = 0; i < 2000 && PRM_GET(cqe64, cqe, opcode) == PRM_CQE_INVALID; i++)
		usleep(1000);
	cr_assert_neq(PRM_GET(cqe64, cqe, opcode), PRM_CQE_INVALID, "no CQE for the UMR WQE within 2 s");
	return cqe;
}

/* The MKey's local write right, as QUERY_MKEY reads it. */
static unsigned mkey_lw(struct umr_run *r)
{
	ET_IN(query_mkey_in);
	PRM_SET(query_mkey_in, in, opcode, PRM_CMD_OP_QUERY_MKEY);
	PRM_SET(query_mkey_in, in, mkey_index, r->mkey_index);
	et_expect(&r->o.t, et_exec(&r->o.t, in, sizeof(in), PRM_SIZE(query_mkey_out)), 0, 0);
	return (unsigned)PRM_GET(mkc, PRM_ADDR(query_mkey_out, r->o.t.out, memory_key_mkey_entry), lw);
}

Test(emu_umr, umr_on_a_qp_created_with_fre_changes_the_mkey)
{
	struct umr_run r;

	umr_up(&r, true);
	const uint8_t *cqe = umr_post(&r);
	cr_assert_eq(PRM_GET(cqe64, cqe, opcode), PRM_CQE_REQ, "CQE opcode 0x%x, syndrome 0x%x",
		     (unsigned)PRM_GET(cqe64, cqe, opcode), (unsigned)PRM_GET(err_cqe, cqe, syndrome));
	cr_assert_eq(mkey_lw(&r), 1, "the UMR did not give the MKey local write");
	cr_assert_eq(emu_drverr_count(r.o.t.emu), 0);
	ot_down(&r.o);
}

Test(emu_umr, umr_on_a_qp_without_fre_completes_in_error_and_leaves_the_mkey)
{
	struct umr_run r;

	umr_up(&r, false);
	const uint8_t *cqe = umr_post(&r);
	cr_assert_eq(PRM_GET(cqe64, cqe, opcode), PRM_CQE_REQ_ERR, "CQE opcode 0x%x: the UMR was executed",
		     (unsigned)PRM_GET(cqe64, cqe, opcode));
	cr_assert_eq(PRM_GET(err_cqe, cqe, syndrome), PRM_CQE_SYND_LOCAL_QP_OP_ERR, "syndrome 0x%x",
		     (unsigned)PRM_GET(err_cqe, cqe, syndrome));
	cr_assert_eq(mkey_lw(&r), 0, "the MKey gained local write through a QP without fre");
	cr_assert(emu_drverr_find(r.o.t.emu, "qpc.fre"), "no driver error names qpc.fre");
	ot_down(&r.o);
}

Test(emu_umr, the_umr_qp_executes_umr_wqes)
{
	struct umr_run r;

	umr_up_st(&r, true, ST_REG_UMR);
	const uint8_t *cqe = umr_post(&r);
	cr_assert_eq(PRM_GET(cqe64, cqe, opcode), PRM_CQE_REQ, "CQE opcode 0x%x, syndrome 0x%x",
		     (unsigned)PRM_GET(cqe64, cqe, opcode), (unsigned)PRM_GET(err_cqe, cqe, syndrome));
	cr_assert_eq(mkey_lw(&r), 1, "the UMR did not give the MKey local write");
	ot_down(&r.o);
}

/* A UMR QP has no peer: a SEND on it completes in error, and nothing leaves. */
Test(emu_umr, the_umr_qp_refuses_any_other_wqe)
{
	struct umr_run r;

	umr_up_st(&r, true, ST_REG_UMR);
	const uint8_t *cqe = umr_post_op(&r, PRM_WQE_OP_SEND);
	cr_assert_eq(PRM_GET(cqe64, cqe, opcode), PRM_CQE_REQ_ERR, "CQE opcode 0x%x: the SEND was executed",
		     (unsigned)PRM_GET(cqe64, cqe, opcode));
	cr_assert_eq(PRM_GET(err_cqe, cqe, syndrome), PRM_CQE_SYND_LOCAL_QP_OP_ERR, "syndrome 0x%x",
		     (unsigned)PRM_GET(err_cqe, cqe, syndrome));
	cr_assert(emu_drverr_find(r.o.t.emu, "UMR WQEs only"), "no driver error names the UMR QP");
	ot_down(&r.o);
}
