/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The receive pipeline's first stage (docs/architecture.md, "Receive checks"): every
 * arriving packet is checked before any transport sees it (IBTA 9.6 "packet header
 * validation", A17.4): length, ICRC, TVer, opcode and headers (emu_roce_parse); then an
 * existing destination QP, the opcode's service equal to the QP's, the P_Key, a QP
 * state that receives, and for connected services the peer's address.  Anything else
 * is dropped and counted by reason; the rest goes to the RC responder or requester or
 * to UC/UD receive.  Called by the drivers in rx_thread.c and by the receive fuzzer. */
#define EMU_TP_INTERNAL
#include "hw/emu/transport.h"

static uint16_t port_pkey(void)
{
	/* P_Key table index 0 holds the default partition (full member). */
	return EMU_ROCE_DEFAULT_PKEY;
}

static void rx_to_qp(struct emu_tp *tp, struct emu_qp *qp, const struct emu_roce_pkt *pp,
		     const struct emu_roce_ip *env, size_t len, enum emu_roce_transport tr);

/* A UD packet to a multicast group: BTH DestQP 0xFFFFFF, the multicast QPN (Linux
 * ib_verbs.h IB_MULTICAST_QPN; rxe_recv.c rxe_rcv hands such a packet to
 * rxe_rcv_mcast_pkt, which delivers to every QP of the group), and for RoCE v2 over IPv4 an IPv4 multicast destination address: the group's GID is
 * its IPv4-mapped form (A17.4.1; Linux cma_iboe_set_mgid).  Every QP of this port
 * attached to the group gets a copy, each through the UD checks of its own (state,
 * P_Key, Q_Key, a receive WQE): the sending QP too, unless it asked not to
 * (qpc.block_lb_mc; IBV_QP_CREATE_BLOCK_SELF_MCAST_LB), which it is when the packet
 * comes from this port's address with the QP's own number as DETH source QP. */
static void mcast_rx(struct emu_tp *tp, const struct emu_roce_pkt *p, const struct emu_roce_ip *env, size_t len)
{
	struct emu_dev *d = tp->d;
	uint8_t gid[16] = { [10] = 0xff, [11] = 0xff };
	const uint32_t *qpns;
	unsigned n, delivered = 0;

	emu_be32_put(gid + 12, env->daddr);
	n = emu_roce_op_transport(p->h.bth.opcode) == EMU_ROCE_TR_UD && emu_gid_is_multicast(gid)
		    ? emu_mcg_members(d, gid, &qpns) : 0;
	for (unsigned i = 0; i < n; i++) {
		struct emu_qp *qp = emu_obj_get(d, EMU_OBJ_QP, qpns[i]);
		struct emu_tq *tq;

		if (!qp || qp->st != EMU_QP_ST_UD)
			continue;
		if (qp->block_lb_mc && env->saddr == d->ipv4 && p->h.deth.sqpn == qp->qpn)
			continue;
		if (!emu_roce_pkey_match(p->h.bth.pkey, port_pkey())) {
			tp->ctr.drops[EMU_ROCE_DROP_PKEY]++;
			return;
		}
		tq = emu_tq_get(tp, qp);
		if (!tq)
			continue;
		emu_ud_rx(tp, tq, p, env, len);   /* state, Q_Key, receive WQE: per QP */
		delivered++;
	}
	if (!n)
		tp->ctr.drops[EMU_ROCE_DROP_QPN]++;   /* no member here, or not a group address */
	tp->ctr.mcast_rx += delivered;
}

void emu_tp_rx_packet(struct emu_tp *tp, uint8_t *buf, size_t len, const struct emu_roce_ip *env)
{
	struct emu_dev *d = tp->d;
	struct emu_roce_pkt p;
	struct emu_qp *qp;
	enum emu_roce_transport tr;

	tp->ctr.rx_pkts++;
	/* a pulled device (emu_surprise_remove) answers nothing, as its link is gone; a
	 * daemon's device whose clients run engines (emu_dataplane_off) takes nothing
	 * either: their QPs live here too, but only their engines may act on them */
	if (tp->flt.link_down || d->removed || d->dataplane_off) {
		tp->ctr.link_down_drops++;
		return;
	}
	if (emu_roce_parse(buf, len, env, &p) < 0) {
		tp->ctr.drops[p.drop < EMU_ROCE_DROP_NR ? p.drop : EMU_ROCE_DROP_OPCODE]++;
		return;
	}
	tp->ctr.rx_by_opcode[p.h.bth.opcode]++;
	if (p.op->flags & EMU_ROCE_F_REQ)   /* the device lock is held: one writer */
		__atomic_store_n(&tp->rx_requests, tp->rx_requests + 1, __ATOMIC_RELAXED);
	/* read by the device thread outside the lock (rx_thread.c rx_finish_message) */
	__atomic_store_n(&tp->rx_mid_msg, emu_roce_op_mid_message(p.h.bth.opcode), __ATOMIC_RELAXED);
	tr = emu_roce_op_transport(p.h.bth.opcode);
	if (tr == EMU_ROCE_TR_CNP)
		return;   /* congestion notification: no rate limiter to feed */
	if (p.h.bth.dqpn == EMU_ROCE_MCAST_QPN) {
		mcast_rx(tp, &p, env, len);
		return;
	}
	if (p.h.bth.dqpn == 1) {
		/* QPN 1 names the GSI QP whatever number it was created with (IBTA 13.5.1).
		 * Several processes sharing the device through uvd -R each have one for a CM
		 * of their own, and each gets its own copy of every MAD; each CM answers only
		 * what is its own (comm IDs, listeners: docs/architecture.md, section 18),
		 * where a Linux host has one CM behind one MAD agent (mad.c find_mad_agent). */
		bool any = false;
		for (unsigned i = 0; i < EMU_MAX_GSI; i++) {
			uint32_t qpn = __atomic_load_n(&d->gsi_qpns[i], __ATOMIC_ACQUIRE);
			qp = qpn ? emu_obj_get(d, EMU_OBJ_QP, qpn) : NULL;
			if (qp && qp->gsi) {
				any = true;
				rx_to_qp(tp, qp, &p, env, len, tr);
			}
		}
		if (!any)
			tp->ctr.drops[EMU_ROCE_DROP_QPN]++;
		return;
	}
	qp = emu_obj_get(d, EMU_OBJ_QP, p.h.bth.dqpn);
	if (!qp) {
		tp->ctr.drops[EMU_ROCE_DROP_QPN]++;
		return;
	}
	rx_to_qp(tp, qp, &p, env, len, tr);
}

/* The checks that name the destination QP, then its transport's receive. */
static void rx_to_qp(struct emu_tp *tp, struct emu_qp *qp, const struct emu_roce_pkt *pp,
		     const struct emu_roce_ip *env, size_t len, enum emu_roce_transport tr)
{
	struct emu_roce_pkt p = *pp;
	struct emu_tq *tq;

	if ((tr == EMU_ROCE_TR_RC && qp->st != EMU_QP_ST_RC) || (tr == EMU_ROCE_TR_UC && qp->st != EMU_QP_ST_UC) ||
	    (tr == EMU_ROCE_TR_UD && qp->st != EMU_QP_ST_UD) || tr == EMU_ROCE_TR_RD ||
	    (tr == EMU_ROCE_TR_XRC && qp->st != EMU_QP_ST_XRC) ||
	    /* an XRC target (no send queue) takes requests only, an initiator responses
	     * only (IBTA 14.2: each is one half of the connection) */
	    (tr == EMU_ROCE_TR_XRC && !(p.op->flags & EMU_ROCE_F_REQ) != !qp->no_sq)) {
		tp->ctr.drops[EMU_ROCE_DROP_TRANSPORT]++;
		return;
	}
	if (!emu_roce_pkey_match(p.h.bth.pkey, port_pkey())) {
		tp->ctr.drops[EMU_ROCE_DROP_PKEY]++;
		return;
	}
	if (qp->state != EMU_QP_RTR && qp->state != EMU_QP_RTS && qp->state != EMU_QP_SQD) {
		tp->ctr.drops[EMU_ROCE_DROP_QP_STATE]++;
		return;
	}
	if (tr != EMU_ROCE_TR_UD && env->saddr != emu_qp_dip(qp)) {
		tp->ctr.drops[EMU_ROCE_DROP_SRC]++;
		return;
	}
	tq = emu_tq_get(tp, qp);
	if (!tq)
		return;
	switch (tr) {
	case EMU_ROCE_TR_RC:
		if (p.op->flags & EMU_ROCE_F_REQ)
			emu_rc_resp_rx(tp, tq, &p, env);
		else
			emu_rc_req_rx(tp, tq, &p);
		break;
	case EMU_ROCE_TR_XRC:
		/* an XRC target is an RC responder whose receive WQEs come from the XRC SRQ
		 * the XRCETH names (rc_resp.c); an initiator an RC requester */
		if (p.op->flags & EMU_ROCE_F_REQ)
			emu_rc_resp_rx(tp, tq, &p, env);
		else
			emu_rc_req_rx(tp, tq, &p);
		break;
	case EMU_ROCE_TR_UC:
		emu_uc_rx(tp, tq, &p);
		break;
	case EMU_ROCE_TR_UD:
		emu_ud_rx(tp, tq, &p, env, len);
		break;
	default:
		break;
	}
}
