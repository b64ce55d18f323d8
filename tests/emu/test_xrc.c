/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* XRC target QPs (PRM "QP Context" st XRC; IBTA 14.2 "XRC"), driven by raw commands
 * and forged packets: a target QP is created as Linux mlx5_ib creates one (qp.c
 * create_xrc_tgt_qp: no send queue, rq_type SRQ, qpc.xrcd), and an XRC request's
 * XRCETH names the XRC SRQ it lands in (IBTA 9.3.7).  The SRQ must belong to the target
 * QP's XRC domain, else NAK invalid request (IBTA 9.7.4.1).  A second device sends the
 * packets (emu_tp_inject) from the address the target QP's path names. */
#include "tests/emu/emu_obj_test.h"

#include <unistd.h>

#include "hw/emu/objects.h"
#include "hw/emu/roce_hdr.h"
#include "hw/emu/roce_wire.h"
#include "hw/emu/transport.h"

#define ST_XRC 3
#define XRC_SEND_ONLY 0xa4
#define RQ_PSN 0x123456       /* ot_init2rtr_in's next_rcv_psn */
#define INI_QPN 0x4242        /* the (remote) initiator's QPN the target answers */

struct xrc_run {
	struct ot a, b;       /* a sends, b holds the target */
	uint32_t xrcd[2];
	struct oq cq[2], srq[2];
	uint32_t cqn[2], srqn[2];
	uint32_t tgt;
};

static uint32_t alloc_xrcd(struct ot *o)
{
	return ot_simple_id(o, PRM_CMD_OP_ALLOC_XRCD, PRM_SIZE(alloc_xrcd_out), PRM_OFF(alloc_xrcd_out, xrcd),
			    PRM_WIDTH(alloc_xrcd_out, xrcd));
}

/* A CQ whose ring starts invalid and software owned, so the first CQE is seen. */
static uint32_t cq_up(struct ot *o, struct oq *q)
{
	size_t inlen;
	uint8_t *in = ot_cq_in(o, q, 4, &inlen);

	for (unsigned i = 0; i < 16; i++)
		((uint8_t *)q->mem.va)[i * 64 + 63] = (uint8_t)(PRM_CQE_INVALID << 4 | 1);
	et_expect(&o->t, et_exec(&o->t, in, inlen, PRM_SIZE(create_cq_out)), 0, 0);
	free(in);
	return (uint32_t)PRM_GET(create_cq_out, o->t.out, cqn);
}

/* An XRC SRQ of 16 WQEs of 32 bytes in `xrcd` reporting to `cqn`, with one posted
 * receive WQE of no data segments (a zero-length SEND fits it). */
static uint32_t xrc_srq_up(struct ot *o, struct oq *q, uint32_t xrcd, uint32_t cqn)
{
	size_t inlen;
	uint8_t *in, *x, *w;

	oq_alloc(o, q, 32u << 4);
	for (unsigned i = 0; i < 16; i++) {
		w = (uint8_t *)q->mem.va + 32 * i;
		PRM_SET(wqe_srq_next_seg, w, next_wqe_index, (i + 1) & 15);
		PRM_SET(wqe_data_seg, w + 16, lkey, 0x100);   /* MLX5_INVALID_LKEY: end of list */
	}
	prm_store_be32((uint8_t *)q->mem.va + q->ring_bytes, 0, 1);   /* one WQE posted */
	inlen = PRM_SIZE(create_xrc_srq_in) + q->npas * 8;
	in = calloc(1, inlen);
	PRM_SET(create_xrc_srq_in, in, opcode, PRM_CMD_OP_CREATE_XRC_SRQ);
	x = PRM_ADDR(create_xrc_srq_in, in, xrc_srq_context_entry);
	PRM_SET(xrc_srqc, x, log_xrc_srq_size, 4);
	PRM_SET(xrc_srqc, x, log_rq_stride, 1);
	PRM_SET(xrc_srqc, x, xrcd, xrcd);
	PRM_SET(xrc_srqc, x, cqn, cqn);
	PRM_SET(xrc_srqc, x, log_page_size, ot_log_pg(o));
	PRM_SET(xrc_srqc, x, user_index, 0xffffff);
	PRM_SET(xrc_srqc, x, pd, o->pd);
	PRM_SET(xrc_srqc, x, db_record_addr_h, q->dbr >> 32);
	PRM_SET(xrc_srqc, x, db_record_addr_l, (q->dbr & 0xffffffffu) >> 2);
	oq_pas(o, q, PRM_ADDR(create_xrc_srq_in, in, pas));
	et_expect(&o->t, et_exec(&o->t, in, inlen, PRM_SIZE(create_xrc_srq_out)), 0, 0);
	free(in);
	return (uint32_t)PRM_GET(create_xrc_srq_out, o->t.out, xrc_srqn);
}

/* CREATE_QP for an XRC target as Linux create_xrc_tgt_qp fills it: st XRC, no_sq,
 * rq_type SRQ naming an XRC SRQ (its devr->s0), CQs and the XRC domain.  Returns the
 * command's status; the QPN is in o->t.out. */
static int create_tgt(struct ot *o, uint32_t xrcd, uint32_t srqn, uint32_t cqn, bool no_sq)
{
	struct oq q;
	size_t inlen;
	uint8_t *in = ot_qp_in(o, &q, ST_XRC, cqn, 0, 0, &inlen);
	uint8_t *c = PRM_ADDR(create_qp_in, in, qpc);
	int st;

	PRM_SET(qpc, c, no_sq, no_sq ? 1 : 0);
	PRM_SET(qpc, c, rq_type, 1);
	PRM_SET(qpc, c, log_rq_size, 0);
	PRM_SET(qpc, c, log_rq_stride, 0);
	PRM_SET(qpc, c, srqn_rmpn_xrqn, srqn);
	PRM_SET(qpc, c, xrcd, xrcd);
	st = et_exec(&o->t, in, no_sq ? PRM_SIZE(create_qp_in) : inlen, PRM_SIZE(create_qp_out));
	free(in);
	return st;
}

static void xrc_up(struct xrc_run *r, const char *b_uri)
{
	memset(r, 0, sizeof(*r));
	ot_up(&r->a, "emu:");
	ot_up(&r->b, b_uri);
	for (int i = 0; i < 2; i++) {
		r->xrcd[i] = alloc_xrcd(&r->b);
		r->cqn[i] = cq_up(&r->b, &r->cq[i]);
		r->srqn[i] = xrc_srq_up(&r->b, &r->srq[i], r->xrcd[i], r->cqn[i]);
	}
}

/* The target in xrcd[0], taken to RTR (expecting `psn`) with its path pointing at
 * device a and the initiator `ini`.  Its
 * qpc.srqn names the XRC SRQ of the other domain, as Linux's does (devr->s0, made at
 * probe in a domain of its own): the XRCETH, not qpc.srqn, picks the SRQ. */
static void tgt_up_to(struct xrc_run *r, uint32_t ini, uint32_t psn)
{
	uint32_t aip = emu_ipv4(r->a.t.emu);
	uint8_t *in, *ads;

	et_expect(&r->b.t, create_tgt(&r->b, r->xrcd[0], r->srqn[1], r->cqn[1], true), 0, 0);
	r->tgt = (uint32_t)PRM_GET(create_qp_out, r->b.t.out, qpn);
	et_expect(&r->b.t, ot_trans_exec(&r->b, ot_rst2init_in(r->tgt)), 0, 0);
	in = ot_init2rtr_in(r->tgt, ini);
	PRM_SET(qpc, PRM_ADDR(rst2init_qp_in, in, qpc), next_rcv_psn, psn);
	ads = PRM_ADDR(qpc, PRM_ADDR(rst2init_qp_in, in, qpc), primary_address_path);
	prm_store_be32(PRM_ADDR(ads, ads, rgid_rip), 96, aip);   /* ::ffff:a's address */
	et_expect(&r->b.t, ot_trans_exec(&r->b, in), 0, 0);
}

static void tgt_up(struct xrc_run *r)
{
	tgt_up_to(r, INI_QPN, RQ_PSN);
}

static void xrc_down(struct xrc_run *r)
{
	ot_down(&r->b);
	ot_down(&r->a);
}

/* Device a sends one XRC SEND packet (no payload) at the target, naming `srqn`. */
static void send_xrc_op(struct xrc_run *r, uint8_t opcode, uint32_t srqn, uint32_t psn)
{
	uint8_t pkt[256];
	struct emu_roce_hdrs h;
	struct emu_roce_ip ip;
	int n;

	memset(&h, 0, sizeof(h));
	h.bth.opcode = opcode;
	h.bth.pkey = EMU_ROCE_DEFAULT_PKEY;
	h.bth.dqpn = r->tgt;
	h.bth.psn = psn;
	h.bth.ackreq = true;
	h.xrc_srqn = srqn;
	emu_roce_ip_init(&ip, emu_ipv4(r->a.t.emu), emu_ipv4(r->b.t.emu), EMU_ROCE_PORT, 0);
	n = emu_roce_forge(pkt, sizeof(pkt), &ip, &h, NULL, 0, NULL);
	cr_assert_gt(n, 0, "forge: %d", n);
	cr_assert_eq(emu_tp_inject(r->a.t.emu, emu_ipv4(r->b.t.emu), EMU_ROCE_PORT, pkt, (size_t)n), 0);
}

static void send_xrc(struct xrc_run *r, uint32_t srqn, uint32_t psn)
{
	send_xrc_op(r, XRC_SEND_ONLY, srqn, psn);
}

static const uint8_t *wait_cqe(struct oq *cq)
{
	const uint8_t *cqe = cq->mem.va;

	for (int i = 0; i < 2000 && PRM_GET(cqe64, cqe, opcode) == PRM_CQE_INVALID; i++)
		usleep(1000);
	return cqe;
}

static struct emu_tp_counters b_ctr(struct xrc_run *r)
{
	struct emu_tp_counters c;

	emu_tp_counters(r->b.t.emu, &c);
	return c;
}

static unsigned qp_state(struct ot *o, uint32_t qpn)
{
	return (unsigned)PRM_GET(qpc, ot_query_qp(o, qpn), state);
}

Test(emu_xrc, send_lands_in_the_named_xrc_srq_and_completes_on_its_cq)
{
	struct xrc_run r;
	const uint8_t *cqe;
	const uint8_t *qpc;

	xrc_up(&r, "emu:cap=general.xrc:1");
	tgt_up(&r);
	qpc = ot_query_qp(&r.b, r.tgt);
	cr_expect_eq(PRM_GET(qpc, qpc, st), ST_XRC);
	cr_expect_eq(PRM_GET(qpc, qpc, xrcd), r.xrcd[0]);
	cr_expect_eq(PRM_GET(qpc, qpc, no_sq), 1);
	send_xrc(&r, r.srqn[0], RQ_PSN);
	cqe = wait_cqe(&r.cq[0]);
	cr_assert_eq(PRM_GET(cqe64, cqe, opcode), PRM_CQE_RESP_SEND, "CQE opcode 0x%x (syndrome 0x%x)",
		     (unsigned)PRM_GET(cqe64, cqe, opcode), (unsigned)PRM_GET(err_cqe, cqe, syndrome));
	cr_expect_eq(PRM_GET(cqe64, cqe, qpn), r.tgt, "the CQE names the target QP");
	cr_expect_eq(PRM_GET(cqe64, cqe, srqn), r.srqn[0], "and the XRC SRQ the XRCETH named");
	cr_expect_eq(PRM_GET(cqe64, cqe, byte_cnt), 0);
	cr_expect_eq(PRM_GET(cqe64, r.cq[1].mem.va, opcode), PRM_CQE_INVALID, "nothing on the other SRQ's CQ");
	for (int i = 0; i < 200 && b_ctr(&r).acks_sent == 0; i++)
		usleep(1000);
	cr_expect_eq(b_ctr(&r).acks_sent, 1, "the request was acknowledged");
	cr_expect_eq(qp_state(&r.b, r.tgt), 2 /* RTR */);
	xrc_down(&r);
}

static void refused_srq(struct xrc_run *r, uint32_t srqn)
{
	send_xrc(r, srqn, RQ_PSN);
	for (int i = 0; i < 2000 && b_ctr(r).naks_sent[EMU_AETH_NAK_INV_REQ] == 0; i++)
		usleep(1000);
	cr_expect_eq(b_ctr(r).naks_sent[EMU_AETH_NAK_INV_REQ], 1, "NAK invalid request for SRQ 0x%x", srqn);
	cr_expect_eq(qp_state(&r->b, r->tgt), 6 /* ERR */);
	usleep(20000);
	cr_expect_eq(PRM_GET(cqe64, r->cq[0].mem.va, opcode), PRM_CQE_INVALID, "no receive completion");
	cr_expect_eq(PRM_GET(cqe64, r->cq[1].mem.va, opcode), PRM_CQE_INVALID, "no receive completion");
}

Test(emu_xrc, srq_of_another_xrc_domain_is_an_invalid_request)
{
	struct xrc_run r;

	xrc_up(&r, "emu:cap=general.xrc:1");
	tgt_up(&r);
	refused_srq(&r, r.srqn[1]);
	xrc_down(&r);
}

Test(emu_xrc, unknown_or_plain_srq_is_an_invalid_request)
{
	struct xrc_run r;

	xrc_up(&r, "emu:cap=general.xrc:1");
	tgt_up(&r);
	refused_srq(&r, 0xabcd);
	xrc_down(&r);
	xrc_up(&r, "emu:cap=general.xrc:1");
	tgt_up(&r);
	refused_srq(&r, ot_srq(&r.b, 4));
	xrc_down(&r);
}

Test(emu_xrc, create_rules)
{
	struct xrc_run r;
	uint32_t plain;

	xrc_up(&r, "emu:cap=general.xrc:1");
	plain = ot_srq(&r.b, 4);
	/* no such XRC domain */
	et_expect(&r.b.t, create_tgt(&r.b, r.xrcd[1] + 100, r.srqn[0], r.cqn[0], true), PRM_CMD_STAT_BAD_RES,
		  PRM_SYND_BAD_XRCD);
	/* an XRC QP's qpc.srqn names an XRC SRQ (Linux: devr->s0), not a plain one */
	et_expect(&r.b.t, create_tgt(&r.b, r.xrcd[0], plain, r.cqn[0], true), PRM_CMD_STAT_BAD_RES,
		  PRM_SYND_BAD_SRQN);
	/* an XRC QP receives through XRC SRQs only: rq_type SRQ */
	{
		struct oq q;
		size_t inlen;
		uint8_t *in = ot_qp_in(&r.b, &q, ST_XRC, r.cqn[0], 4, 4, &inlen);

		PRM_SET(qpc, PRM_ADDR(create_qp_in, in, qpc), xrcd, r.xrcd[0]);
		et_expect(&r.b.t, et_exec(&r.b.t, in, inlen, PRM_SIZE(create_qp_out)), PRM_CMD_STAT_BAD_PARAM,
			  PRM_SYND_BAD_QP_TYPE);
		free(in);
	}
	xrc_down(&r);
	/* without the xrc capability there are no XRC QPs */
	xrc_up(&r, "emu:cap=general.xrc:0");
	et_expect(&r.b.t, create_tgt(&r.b, r.xrcd[0], r.srqn[0], r.cqn[0], true), PRM_CMD_STAT_BAD_PARAM,
		  PRM_SYND_BAD_QP_TYPE);
	xrc_down(&r);
}

Test(emu_xrc, the_target_holds_its_xrc_domain_and_qpc_srq_until_destroyed)
{
	struct xrc_run r;
	uint8_t in[PRM_SIZE(dealloc_xrcd_in)] = { 0 };

	xrc_up(&r, "emu:cap=general.xrc:1");
	tgt_up(&r);
	PRM_SET(dealloc_xrcd_in, in, opcode, PRM_CMD_OP_DEALLOC_XRCD);
	PRM_SET(dealloc_xrcd_in, in, xrcd, r.xrcd[0]);
	/* an SRQ the target receives into is not held by it (the XRCETH names it per
	 * packet) ... */
	et_expect(&r.b.t, ot_destroy(&r.b, PRM_CMD_OP_DESTROY_XRC_SRQ, r.srqn[0]), 0, 0);
	/* ... but its XRC domain and the SRQ its qpc names are */
	et_expect(&r.b.t, et_exec(&r.b.t, in, sizeof(in), PRM_SIZE(dealloc_xrcd_out)), PRM_CMD_STAT_BAD_RES_STATE,
		  PRM_SYND_OBJECT_IN_USE);
	et_expect(&r.b.t, ot_destroy(&r.b, PRM_CMD_OP_DESTROY_XRC_SRQ, r.srqn[1]), PRM_CMD_STAT_BAD_RES_STATE,
		  PRM_SYND_OBJECT_IN_USE);
	/* a request naming the destroyed SRQ is an invalid request */
	refused_srq(&r, r.srqn[0]);
	et_expect(&r.b.t, ot_destroy(&r.b, PRM_CMD_OP_DESTROY_QP, r.tgt), 0, 0);
	et_expect(&r.b.t, ot_destroy(&r.b, PRM_CMD_OP_DESTROY_XRC_SRQ, r.srqn[1]), 0, 0);
	et_expect(&r.b.t, et_exec(&r.b.t, in, sizeof(in), PRM_SIZE(dealloc_xrcd_out)), 0, 0);
	xrc_down(&r);
}

/* The whole transport: an initiator on device a (its own XRC domain, XRC SRQ and CQ,
 * as Linux's devr->xrcdn1 / s0 / c0) posts a SEND whose XRC segment names b's XRC SRQ
 * (rdma-core mlx5_wqe_xrc_seg); b's target takes it into that SRQ and completes it on
 * the SRQ's CQ; a gets the ACK and a send completion. */
Test(emu_xrc, initiator_send_reaches_the_target_srq)
{
	struct xrc_run r;
	struct oq acq, asrq, aqp;
	uint32_t axrcd, acqn, asrqn, ini;
	size_t inlen;
	uint8_t *in, *c, *ads, *ctrl;
	const uint8_t *cqe;
	uint64_t first8;

	memset(&r, 0, sizeof(r));
	ot_up(&r.a, "emu:cap=general.xrc:1");
	ot_up(&r.b, "emu:cap=general.xrc:1");
	for (int i = 0; i < 2; i++) {
		r.xrcd[i] = alloc_xrcd(&r.b);
		r.cqn[i] = cq_up(&r.b, &r.cq[i]);
		r.srqn[i] = xrc_srq_up(&r.b, &r.srq[i], r.xrcd[i], r.cqn[i]);
	}
	axrcd = alloc_xrcd(&r.a);
	acqn = cq_up(&r.a, &acq);
	asrqn = xrc_srq_up(&r.a, &asrq, axrcd, acqn);
	/* the initiator: a send queue of 16 basic blocks, no receive queue of its own */
	in = ot_qp_in(&r.a, &aqp, ST_XRC, acqn, 4, 0, &inlen);
	c = PRM_ADDR(create_qp_in, in, qpc);
	PRM_SET(qpc, c, rq_type, 1);
	PRM_SET(qpc, c, log_rq_size, 0);
	PRM_SET(qpc, c, srqn_rmpn_xrqn, asrqn);
	PRM_SET(qpc, c, xrcd, axrcd);
	et_expect(&r.a.t, et_exec(&r.a.t, in, inlen, PRM_SIZE(create_qp_out)), 0, 0);
	free(in);
	ini = (uint32_t)PRM_GET(create_qp_out, r.a.t.out, qpn);
	tgt_up_to(&r, ini, 0x654321);   /* ot_rtr2rts_in's next_send_psn */
	et_expect(&r.a.t, ot_trans_exec(&r.a, ot_rst2init_in(ini)), 0, 0);
	in = ot_init2rtr_in(ini, r.tgt);
	ads = PRM_ADDR(qpc, PRM_ADDR(rst2init_qp_in, in, qpc), primary_address_path);
	prm_store_be32(PRM_ADDR(ads, ads, rgid_rip), 96, emu_ipv4(r.b.t.emu));
	et_expect(&r.a.t, ot_trans_exec(&r.a, in), 0, 0);
	et_expect(&r.a.t, ot_trans_exec(&r.a, ot_rtr2rts_in(ini)), 0, 0);
	cr_expect_eq(PRM_GET(qpc, ot_query_qp(&r.a, ini), no_sq), 0);

	/* one 32-byte WQE: control segment (ds 2), XRC segment naming b's SRQ 0, no data */
	ctrl = aqp.mem.va;
	memset(ctrl, 0, 64);
	PRM_SET(wqe_ctrl_seg, ctrl, opcode, PRM_WQE_OP_SEND);
	PRM_SET(wqe_ctrl_seg, ctrl, wqe_index, 0);
	PRM_SET(wqe_ctrl_seg, ctrl, qpn, ini);
	PRM_SET(wqe_ctrl_seg, ctrl, ds, 2);
	PRM_SET(wqe_ctrl_seg, ctrl, ce, 2);   /* CQE always */
	prm_store_be32(ctrl + 16, 0, r.srqn[0]);
	PRM_SET(qp_dbrec, (uint8_t *)aqp.mem.va + aqp.ring_bytes, send_counter, 1);
	memcpy(&first8, ctrl, 8);
	shim_mmio_write64_raw(&r.a.t.bar, (uint64_t)r.a.uar * r.a.t.uar_page_size + 0x800, first8);

	cqe = wait_cqe(&r.cq[0]);
	cr_assert_eq(PRM_GET(cqe64, cqe, opcode), PRM_CQE_RESP_SEND, "target CQE opcode 0x%x (syndrome 0x%x)",
		     (unsigned)PRM_GET(cqe64, cqe, opcode), (unsigned)PRM_GET(err_cqe, cqe, syndrome));
	cr_expect_eq(PRM_GET(cqe64, cqe, qpn), r.tgt);
	cr_expect_eq(PRM_GET(cqe64, cqe, srqn), r.srqn[0]);
	cr_expect_eq(PRM_GET(cqe64, r.cq[1].mem.va, opcode), PRM_CQE_INVALID);
	cqe = wait_cqe(&acq);
	cr_assert_eq(PRM_GET(cqe64, cqe, opcode), PRM_CQE_REQ, "initiator CQE opcode 0x%x (syndrome 0x%x)",
		     (unsigned)PRM_GET(cqe64, cqe, opcode), (unsigned)PRM_GET(err_cqe, cqe, syndrome));
	cr_expect_eq(PRM_GET(cqe64, cqe, qpn), ini);
	{
		struct emu_tp_counters ca;

		emu_tp_counters(r.a.t.emu, &ca);
		cr_expect_eq(ca.tx_by_opcode[XRC_SEND_ONLY], 1, "sent as XRC SEND ONLY");
		cr_expect_eq(b_ctr(&r).tx_by_opcode[0xb1], 1, "acknowledged with XRC ACKNOWLEDGE");
	}
	xrc_down(&r);
}

/* A SEND's WQE comes from the SRQ its first packet named: a later packet of the same
 * message naming another SRQ (even of the same domain) is an invalid request, and the
 * WQE in use completes in error on its SRQ's CQ. */
Test(emu_xrc, srq_may_not_change_inside_a_send)
{
	struct xrc_run r;
	struct oq q2;
	uint32_t other;
	const uint8_t *cqe;

	xrc_up(&r, "emu:cap=general.xrc:1");
	other = xrc_srq_up(&r.b, &q2, r.xrcd[0], r.cqn[0]);
	tgt_up(&r);
	send_xrc_op(&r, 0xa0 /* XRC_SEND_FIRST */, r.srqn[0], RQ_PSN);
	send_xrc_op(&r, 0xa2 /* XRC_SEND_LAST */, other, RQ_PSN + 1);
	for (int i = 0; i < 2000 && b_ctr(&r).naks_sent[EMU_AETH_NAK_INV_REQ] == 0; i++)
		usleep(1000);
	cr_expect_eq(b_ctr(&r).naks_sent[EMU_AETH_NAK_INV_REQ], 1);
	cr_expect_eq(qp_state(&r.b, r.tgt), 6 /* ERR */);
	cqe = wait_cqe(&r.cq[0]);
	cr_expect_eq(PRM_GET(cqe64, cqe, opcode), PRM_CQE_RESP_ERR, "CQE opcode 0x%x",
		     (unsigned)PRM_GET(cqe64, cqe, opcode));
	cr_expect_eq(PRM_GET(cqe64, cqe, srqn), r.srqn[0], "the WQE in use was the first SRQ's");
	xrc_down(&r);
}

/* The SRQ WQE a multi-packet SEND took at its first packet belongs to the QP from then
 * on: when the QP goes to error before the message's last packet, that WQE completes
 * with a flush error on the SRQ's CQ (IBTA 10.3.1), so the driver gets its slot back.
 * Before, it was taken and never completed: the SRQ lost a WQE for good. */
Test(emu_xrc, a_send_cut_short_by_an_error_completes_the_srq_wqe_it_took)
{
	struct xrc_run r;
	const uint8_t *cqe;

	xrc_up(&r, "emu:cap=general.xrc:1");
	tgt_up(&r);
	send_xrc_op(&r, 0xa0 /* XRC_SEND_FIRST */, r.srqn[0], RQ_PSN);
	for (int i = 0; i < 2000 && b_ctr(&r).acks_sent == 0 && b_ctr(&r).rx_pkts == 0; i++)
		usleep(1000);
	usleep(20000);   /* the device thread has taken the first packet */
	cr_expect_eq(PRM_GET(cqe64, r.cq[0].mem.va, opcode), PRM_CQE_INVALID, "no completion before the last packet");
	cr_assert_eq(ot_2state(&r.b, PRM_CMD_OP_2ERR_QP, r.tgt), 0);
	cqe = wait_cqe(&r.cq[0]);
	cr_assert_eq(PRM_GET(cqe64, cqe, opcode), PRM_CQE_RESP_ERR, "CQE opcode 0x%x: the taken WQE never completed",
		     (unsigned)PRM_GET(cqe64, cqe, opcode));
	cr_expect_eq(PRM_GET(err_cqe, cqe, syndrome), PRM_CQE_SYND_WR_FLUSH_ERR);
	cr_expect_eq(PRM_GET(cqe64, cqe, srqn), r.srqn[0]);
	cr_expect_eq(PRM_GET(cqe64, cqe, qpn), r.tgt);
	xrc_down(&r);
}
