/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Send queue engine (PRM "Send WQE Format", "BlueFlame", "Doorbell Record"): runs in
 * the posting thread, inside its doorbell or BlueFlame store (docs/architecture.md, "The
 * emulated ConnectX"; the store's entry is sq_doorbell.c), and in the device thread when
 * ACKs open the window (rc_req.c).
 *
 * After a doorbell the WQEs are read from the ring by DMA at
 * (wqe_index & (size - 1)) * 64; a BlueFlame burst hands over the next WQE's bytes
 * without any DMA read, as hardware does (emu_sq_take_bf).
 *
 * Decoding uses only the wqe.def rows.  Packets are built and sent here for new WQEs;
 * what the window does not allow yet goes out when ACKs open it (rc_req.c). */
#define EMU_TP_INTERNAL
#include "hw/emu/transport.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>


uint32_t emu_qp_mtu_bytes(const struct emu_qp *qp)
{
	unsigned m = qp->mtu >= 1 && qp->mtu <= 5 ? qp->mtu : 1;

	return 128u << m;   /* qpc.mtu 1..5: 256..4096 bytes (IBTA MTU encoding) */
}

/* Where the emulated segment delivers a packet.  The wire is IPv4 (icrc.h): an
 * IPv4-mapped remote GID (::ffff:a.b.c.d) is the peer's address.  Any other GID, such
 * as a peer's link-local GID 0, is on-link by definition: the frame goes to the port
 * owning the destination MAC, as a switch forwards by MAC (netaddr.c emu_mac_ipv4), and
 * travels between the two ports' IPv4 addresses.  0: no port owns that MAC. */
static uint32_t path_dip(const uint8_t *rgid, const uint8_t *rmac)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (!memcmp(rgid, v4mapped, sizeof(v4mapped)))
		return emu_be32_get(rgid + 12);
	return emu_mac_ipv4(rmac);
}

uint32_t emu_qp_dip(const struct emu_qp *qp)
{
	return path_dip(qp->pri.rgid, qp->pri.rmac);
}

uint16_t emu_qp_sport(const struct emu_qp *qp)
{
	if (qp->pri.udp_sport >= EMU_ROCE_SPORT_MIN)
		return qp->pri.udp_sport;
	return emu_roce_udp_sport(qp->pri.flow_label, qp->qpn, qp->remote_qpn);
}

/* A packet is built where it leaves from: while the doorbell or receive pass corks the
 * socket, in the send queue's next slot (emu_roce_sock_tx_buf), so that its payload is
 * copied once from application memory, not into a scratch buffer, then the packet, then
 * the queue.  Its room is tp->tx's, whichever it is. */
int emu_tp_tx_begin(struct emu_tp *tp, uint32_t dip, struct emu_roce_hdrs *h, size_t len, uint8_t **payload)
{
	int hl;

	if (!dip) {
		*payload = tp->scratch;   /* read anyway: a fault is the WQE's, as on a wire */
		return 0;
	}
	h->bth.pkey = EMU_ROCE_DEFAULT_PKEY;
	tp->tx_cur = emu_roce_sock_tx_buf(&tp->sock, sizeof(tp->tx));
	if (!tp->tx_cur)
		tp->tx_cur = tp->tx;
	hl = emu_roce_build_hdrs(tp->tx_cur, sizeof(tp->tx), h, len);
	if (hl < 0)
		return hl;
	tp->tx_hl = (size_t)hl;
	*payload = tp->tx_cur + hl;
	return 0;
}

int emu_tp_tx_end(struct emu_tp *tp, uint32_t dip, uint16_t sport, uint8_t tos, const struct emu_roce_hdrs *h,
		  size_t len)
{
	struct emu_roce_ip ip;
	int n;

	if (!dip) {
		/* flooded on the segment, and nobody takes it */
		tp->ctr.tx_no_port++;
		return 0;
	}
	emu_roce_ip_init(&ip, tp->d->ipv4, dip, sport, tos);
	n = emu_roce_seal(tp->tx_cur, sizeof(tp->tx), tp->tx_hl + len, &ip);
	if (n < 0)
		return n;
	tp->ctr.tx_pkts++;
	tp->ctr.tx_by_opcode[h->bth.opcode]++;
	return emu_tp_xmit(tp, &ip, tp->tx_cur, (size_t)n);
}

int emu_tp_send(struct emu_tp *tp, struct emu_tq *tq, uint32_t dip, uint16_t sport, uint8_t tos,
		struct emu_roce_hdrs *h, const void *payload, size_t len)
{
	uint8_t *p;
	int rc;

	(void)tq;
	rc = emu_tp_tx_begin(tp, dip, h, len, &p);
	if (rc)
		return rc;
	if (len)
		memcpy(p, payload, len);
	return emu_tp_tx_end(tp, dip, sport, tos, h, len);
}

static bool op_is_rd_atomic(uint8_t op)
{
	return op == PRM_WQE_OP_RDMA_READ || op == PRM_WQE_OP_ATOMIC_CS || op == PRM_WQE_OP_ATOMIC_FA;
}

/* Which WQE opcodes each service allows (IBTA: UC has no READ/atomics, UD only SEND). */
static bool op_allowed(uint8_t st, uint8_t op)
{
	switch (op) {
	case PRM_WQE_OP_NOP:
	case PRM_WQE_OP_SEND:
	case PRM_WQE_OP_SEND_IMM:
		return true;
	case PRM_WQE_OP_SEND_INVAL:
	case PRM_WQE_OP_RDMA_WRITE:
	case PRM_WQE_OP_RDMA_WRITE_IMM:
		return st != EMU_QP_ST_UD;
	case PRM_WQE_OP_RDMA_READ:
	case PRM_WQE_OP_ATOMIC_CS:
	case PRM_WQE_OP_ATOMIC_FA:
		return st == EMU_QP_ST_RC || st == EMU_QP_ST_XRC;
	case PRM_WQE_OP_UMR:   /* on RC, as mlx5_ib's UMR QP and mlx5dv's MR WQEs use it */
		return st == EMU_QP_ST_RC;
	default:
		return false;
	}
}

/* Decode one WQE (its bytes contiguous in b, nbytes of them).  0, or an error CQE
 * syndrome for a WQE the hardware would refuse. */
static int wqe_decode(struct emu_dev *d, struct emu_qp *qp, const uint8_t *b, size_t nbytes, struct emu_swqe *w)
{
	unsigned ds = (unsigned)PRM_GET(wqe_ctrl_seg, b, ds);
	size_t pos = PRM_SIZE(wqe_ctrl_seg), end = (size_t)ds * 16u;

	w->opcode = (uint8_t)PRM_GET(wqe_ctrl_seg, b, opcode);
	w->fm = (uint8_t)PRM_GET(wqe_ctrl_seg, b, fm);
	w->ce = (uint8_t)PRM_GET(wqe_ctrl_seg, b, ce);
	w->se = (uint8_t)PRM_GET(wqe_ctrl_seg, b, se);
	w->imm = (uint32_t)PRM_GET(wqe_ctrl_seg, b, imm);
	w->nsge = 0;
	w->len = 0;
	w->inl = false;
	w->inl_data = NULL;
	if ((uint32_t)PRM_GET(wqe_ctrl_seg, b, qpn) != qp->qpn)
		emu_drverr(d, "send WQE %u of QP 0x%x names QP 0x%x", w->idx & 0xffff, qp->qpn,
			   (unsigned)PRM_GET(wqe_ctrl_seg, b, qpn));
	if (ds == 0 || end > nbytes) {
		emu_drverr(d, "send WQE %u of QP 0x%x: ds %u", w->idx & 0xffff, qp->qpn, ds);
		return PRM_CQE_SYND_LOCAL_QP_OP_ERR;
	}
	if (!op_allowed(qp->st, w->opcode)) {
		emu_drverr(d, "send WQE %u of QP 0x%x: opcode 0x%x not valid on this service", w->idx & 0xffff,
			   qp->qpn, w->opcode);
		return PRM_CQE_SYND_LOCAL_QP_OP_ERR;
	}
	if (qp->umr && w->opcode != PRM_WQE_OP_UMR && w->opcode != PRM_WQE_OP_NOP) {
		/* a UMR QP has no peer to send to (cmd_qp.c create_qp) */
		emu_drverr(d, "send WQE %u of UMR QP 0x%x: opcode 0x%x, a UMR QP takes UMR WQEs only",
			   w->idx & 0xffff, qp->qpn, w->opcode);
		return PRM_CQE_SYND_LOCAL_QP_OP_ERR;
	}
	/* A NOP is its control segment alone on any service (Linux wc.c mlx5_wc_post_nop
	 * posts ds 1): no datagram, address or data segment is read. */
	if (w->opcode == PRM_WQE_OP_NOP)
		return 0;
	if (w->opcode == PRM_WQE_OP_UMR && !qp->fre) {
		/* UMR is for QPs created with qpc.fre (PRM "QP Context": fast registration
		 * enable), which Linux sets on its kernel QPs only, the UMR QP among them
		 * (drivers/infiniband/hw/mlx5/qp.c create_kernel_qp).  No public source
		 * names the syndrome a ConnectX gives a UMR on another QP: this is the local
		 * QP operation error (0x02, PRM "Completion Queue Entry" syndrome table;
		 * firmware-cmd/cqe_syndromes.def), as for the other WQEs this QP cannot
		 * execute above. */
		emu_drverr(d, "UMR WQE %u of QP 0x%x: the QP was created without qpc.fre (fast registration enable)",
			   w->idx & 0xffff, qp->qpn);
		return PRM_CQE_SYND_LOCAL_QP_OP_ERR;
	}
	if (w->opcode == PRM_WQE_OP_UMR) {
		/* ctrl, UMR ctrl segment, mkey context segment (PRM "UMR WQE"); no
		 * translation entries: only rights and PD are changed here */
		if (pos + PRM_SIZE(wqe_umr_ctrl_seg) + sizeof(w->umr_mkc) > end ||
		    PRM_GET(wqe_umr_ctrl_seg, b + pos, klm_octowords) ||
		    (PRM_GET(wqe_umr_ctrl_seg, b + pos, flags) & 0x80)) {
			emu_drverr(d, "UMR WQE %u of QP 0x%x: ds %u, translations or inline data not modelled",
				   w->idx & 0xffff, qp->qpn, ds);
			return PRM_CQE_SYND_LOCAL_QP_OP_ERR;
		}
		w->umr_mask = PRM_GET(wqe_umr_ctrl_seg, b + pos, mkey_mask);
		memcpy(w->umr_mkc, b + pos + PRM_SIZE(wqe_umr_ctrl_seg), sizeof(w->umr_mkc));
		return 0;
	}
	/* XRC initiator: the XRC segment follows the control segment, the remote XRC SRQ
	 * number in its first 4 bytes, 12 reserved (rdma-core providers/mlx5
	 * struct mlx5_wqe_xrc_seg, written by _mlx5_post_send for IBV_QPT_XRC_SEND) */
	if (qp->st == EMU_QP_ST_XRC) {
		if (pos + 16 > end)
			return PRM_CQE_SYND_LOCAL_QP_OP_ERR;
		w->xrc_srqn = prm_load_be32(b + pos, 0) & EMU_ROCE_QPN_MASK;
		pos += 16;
	}
	if (qp->st == EMU_QP_ST_UD) {
		const uint8_t *av = b + pos;

		if (pos + 48 > end)
			return PRM_CQE_SYND_LOCAL_QP_OP_ERR;
		w->qkey = (uint32_t)PRM_GET(wqe_datagram_seg, av, qkey);
		w->dqpn = (uint32_t)PRM_GET(wqe_datagram_seg, av, dqpn);
		/* the AV's source GID must be an address of this port (PRM "RoCE Address
		 * Table"): an empty entry has nothing to send from */
		if (!emu_gid_valid(d, (uint32_t)PRM_GET(wqe_datagram_seg, av, sgid_index))) {
			emu_drverr(d, "send WQE %u of UD QP 0x%x: AV source GID index %u is empty", w->idx & 0xffff,
				   qp->qpn, (unsigned)PRM_GET(wqe_datagram_seg, av, sgid_index));
			return PRM_CQE_SYND_LOCAL_QP_OP_ERR;
		}
		w->dip = path_dip(PRM_ADDR(wqe_datagram_seg, av, rgid), PRM_ADDR(wqe_datagram_seg, av, rmac));
		w->sport = (uint16_t)PRM_GET(wqe_datagram_seg, av, rlid);
		if (w->sport < EMU_ROCE_SPORT_MIN)
			w->sport = emu_roce_udp_sport((uint32_t)PRM_GET(wqe_datagram_seg, av, flow_label), qp->qpn,
						      w->dqpn);
		w->tclass = (uint8_t)PRM_GET(wqe_datagram_seg, av, tclass);
		pos += 48;
	} else if (w->opcode == PRM_WQE_OP_RDMA_WRITE || w->opcode == PRM_WQE_OP_RDMA_WRITE_IMM || op_is_rd_atomic(w->opcode)) {
		if (pos + PRM_SIZE(wqe_raddr_seg) > end)
			return PRM_CQE_SYND_LOCAL_QP_OP_ERR;
		w->raddr = PRM_GET(wqe_raddr_seg, b + pos, raddr);
		w->rkey = (uint32_t)PRM_GET(wqe_raddr_seg, b + pos, rkey);
		pos += PRM_SIZE(wqe_raddr_seg);
		if (w->opcode == PRM_WQE_OP_ATOMIC_CS || w->opcode == PRM_WQE_OP_ATOMIC_FA) {
			if (pos + PRM_SIZE(wqe_atomic_seg) > end)
				return PRM_CQE_SYND_LOCAL_QP_OP_ERR;
			w->swap_add = PRM_GET(wqe_atomic_seg, b + pos, swap_add);
			w->compare = PRM_GET(wqe_atomic_seg, b + pos, compare);
			pos += PRM_SIZE(wqe_atomic_seg);
		}
	}
	if (pos < end && PRM_GET(wqe_inline_seg, b + pos, inline)) {
		uint32_t n = (uint32_t)PRM_GET(wqe_inline_seg, b + pos, byte_count);

		if (pos + 4 + n > end || op_is_rd_atomic(w->opcode)) {
			emu_drverr(d, "send WQE %u of QP 0x%x: inline byte_count %u past ds %u", w->idx & 0xffff,
				   qp->qpn, n, ds);
			return PRM_CQE_SYND_LOCAL_LENGTH_ERR;
		}
		w->inl = true;
		w->len = n;
		if (n) {
			w->inl_data = malloc(n);
			if (!w->inl_data)
				return PRM_CQE_SYND_LOCAL_QP_OP_ERR;
			memcpy(w->inl_data, b + pos + 4, n);
		}
		return 0;
	}
	for (; pos + 16 <= end; pos += 16) {
		if (w->nsge == EMU_TP_MAX_SGE)
			return PRM_CQE_SYND_LOCAL_LENGTH_ERR;
		w->sge[w->nsge].len = (uint32_t)PRM_GET(wqe_data_seg, b + pos, byte_count) & 0x7fffffffu;
		w->sge[w->nsge].lkey = (uint32_t)PRM_GET(wqe_data_seg, b + pos, lkey);
		w->sge[w->nsge].addr = PRM_GET(wqe_data_seg, b + pos, addr);
		w->len += w->sge[w->nsge].len;
		w->nsge++;
	}
	if ((w->opcode == PRM_WQE_OP_ATOMIC_CS || w->opcode == PRM_WQE_OP_ATOMIC_FA) && w->len != 8)
		return PRM_CQE_SYND_LOCAL_LENGTH_ERR;
	return 0;
}

/* Read the WQE at basic block counter idx from the ring (wrapping). */
static int wqe_fetch(struct emu_dev *d, struct emu_qp *qp, uint32_t idx, uint8_t *b, unsigned *nbb)
{
	uint32_t nsq = 1u << qp->log_sq_size;
	unsigned ds, n;

	if (emu_dma_read(d, emu_qbuf_iova(&qp->buf, qp->sq_offset + (uint64_t)(idx & (nsq - 1)) * 64u), b, 64))
		return -EFAULT;
	ds = (unsigned)PRM_GET(wqe_ctrl_seg, b, ds);
	n = ds ? (ds + 3) / 4 : 1;
	for (unsigned i = 1; i < n; i++)
		if (emu_dma_read(d, emu_qbuf_iova(&qp->buf, qp->sq_offset + (uint64_t)((idx + i) & (nsq - 1)) * 64u),
				 b + 64u * i, 64))
			return -EFAULT;
	*nbb = n;
	return 0;
}

/* READ response bytes a requester lets be in flight before it issues another READ.
 * A ConnectX issues up to max_rd_atomic READs at once and the responder answers at
 * line rate into the requester's receive buffers.  Here the "wire" is a loopback UDP
 * socket whose receive buffer (net.core.rmem_max, 4 MiB on Debian) is the only
 * buffering: sixteen outstanding multi-MiB READs overflow it, every retry overflows it
 * again, and the retries run out.  So the emulated requester holds a further READ back
 * while this many response bytes are still due (the first READ always goes).  It is a
 * property of the emulated link, not of the PRM. */
#define EMU_TP_READ_BYTES_IN_FLIGHT (1u << 20)

static uint64_t read_bytes_due(struct emu_tq *tq)
{
	uint64_t due = 0;

	for (uint32_t i = tq->head; i != tq->cur; i++) {
		const struct emu_swqe *w = emu_tq_slot(tq, i);

		if (w->opcode == PRM_WQE_OP_RDMA_READ && w->psn_set && !w->acked)
			due += w->len;
	}
	return due;
}

/* Error completion of WQE w (and the QP to error: every later WQE is flushed). */
static void wqe_local_error(struct emu_tp *tp, struct emu_tq *tq, int synd)
{
	emu_qp_error(tp, tq, synd);
}

static void push_wqe(struct emu_tp *tp, struct emu_tq *tq, const uint8_t *b, size_t nbytes, uint32_t idx,
		     unsigned nbb)
{
	struct emu_swqe *w = emu_tq_slot(tq, tq->tail);
	int synd;

	memset(w, 0, sizeof(*w));
	w->seq = ++tp->stage_keys;
	w->idx = idx;
	w->nbb = (uint16_t)nbb;
	synd = wqe_decode(tp->d, tq->qp, b, nbytes, w);
	tq->tail++;
	tp->ctr.wqes++;
	if (synd) {
		/* a malformed WQE fails where it stands: it is the next to transmit only if
		 * everything before it went out; mark it by an impossible psn state */
		w->opcode = (uint8_t)(w->opcode | 0);
		w->npkts = 0;
		w->psn_set = false;
		w->acked = false;
		w->sent = (uint32_t)synd | 0x80000000u;   /* deferred error syndrome */
	}
}

void emu_sq_take_bf(struct emu_tp *tp, struct emu_tq *tq, const uint8_t *b, size_t nbytes, unsigned nbb)
{
	struct emu_qp *qp = tq->qp;

	push_wqe(tp, tq, b, nbytes, qp->eng.sq_pi, nbb);
	qp->eng.sq_pi += nbb;
	tq->sq_prod = qp->eng.sq_pi;
	tp->ctr.sq_bf_wqes++;
	emu_sq_transmit(tp, tq);
}

/* Fetch every WQE the producer counter covers, while there is room to track them. */
static void sq_fetch(struct emu_tp *tp, struct emu_tq *tq)
{
	struct emu_qp *qp = tq->qp;
	uint8_t b[EMU_TP_WQE_MAX_BYTES + 64];
	unsigned nbb;

	while (qp->eng.sq_pi != tq->sq_prod && tq->tail - tq->head < EMU_TP_SWQE_SLOTS) {
		if (wqe_fetch(tp->d, qp, qp->eng.sq_pi, b, &nbb)) {
			emu_qp_error(tp, tq, PRM_CQE_SYND_LOCAL_PROT_ERR);
			return;
		}
		push_wqe(tp, tq, b, sizeof(b), qp->eng.sq_pi, nbb);
		qp->eng.sq_pi += nbb;
	}
}

/* Packets one request message takes. */
static uint32_t msg_pkts(uint64_t len, uint32_t mtu)
{
	return len ? (uint32_t)((len + mtu - 1) / mtu) : 1;
}

static unsigned local_access(uint8_t op)
{
	return op_is_rd_atomic(op) ? EMU_MKEY_ACC_LW : EMU_MKEY_ACC_LR;
}

/* UD has no path MTU in its context: the port's, the largest IB MTU within the NIC
 * vport's Ethernet MTU (1500 -> 1024, as Linux reports for RoCE). */
static uint32_t ud_mtu(const struct emu_dev *d)
{
	uint32_t m = 4096;

	while (m > 256 && m > d->mtu)
		m >>= 1;
	return m;
}

/* Send request packet k of WQE w. */
static int send_req_pkt(struct emu_tp *tp, struct emu_tq *tq, struct emu_swqe *w, uint32_t k)
{
	struct emu_qp *qp = tq->qp;
	struct emu_roce_hdrs h;
	enum emu_roce_transport tr = qp->st == EMU_QP_ST_RC    ? EMU_ROCE_TR_RC
				     : qp->st == EMU_QP_ST_XRC ? EMU_ROCE_TR_XRC
				     : qp->st == EMU_QP_ST_UC  ? EMU_ROCE_TR_UC
							       : EMU_ROCE_TR_UD;
	/* XRC requests are RC's moved to 0xa0 with an XRCETH (IBTA 9.2.1) */
	uint8_t xrc = tr == EMU_ROCE_TR_XRC ? 0xa0 : 0;
	uint32_t mtu = qp->st == EMU_QP_ST_UD ? ud_mtu(tp->d) : emu_qp_mtu_bytes(qp), pos, kind;
	uint64_t off = (uint64_t)k * mtu;
	size_t len = 0;
	bool last;
	int op, rc;

	memset(&h, 0, sizeof(h));
	h.bth.psn = emu_psn_add(w->first_psn, k);
	h.bth.dqpn = qp->st == EMU_QP_ST_UD ? w->dqpn : qp->remote_qpn;
	h.xrc_srqn = w->xrc_srqn;
	if (w->opcode == PRM_WQE_OP_RDMA_READ) {
		/* A retried READ asks only for what has not arrived (IBTA 9.7.5.1.3? "read
		 * retry"): RETH moved by the packets already received, PSN likewise. */
		off = (uint64_t)w->rd_rcvd * mtu;
		h.bth.opcode = EMU_ROCE_RC_READ_REQUEST | xrc;
		h.bth.psn = emu_psn_add(w->first_psn, w->rd_rcvd);
		h.bth.ackreq = true;
		h.reth.va = w->raddr + off;
		h.reth.rkey = w->rkey;
		h.reth.dlen = (uint32_t)(w->len - off);
		return emu_tp_send(tp, tq, emu_qp_dip(qp), emu_qp_sport(qp), qp->pri.tclass, &h, NULL, 0);
	}
	if (w->opcode == PRM_WQE_OP_ATOMIC_CS || w->opcode == PRM_WQE_OP_ATOMIC_FA) {
		h.bth.opcode = (w->opcode == PRM_WQE_OP_ATOMIC_CS ? EMU_ROCE_RC_CMP_SWAP : EMU_ROCE_RC_FETCH_ADD) | xrc;
		h.bth.ackreq = true;
		h.atomic.va = w->raddr;
		h.atomic.rkey = w->rkey;
		h.atomic.swap_add = w->swap_add;
		h.atomic.compare = w->compare;
		return emu_tp_send(tp, tq, emu_qp_dip(qp), emu_qp_sport(qp), qp->pri.tclass, &h, NULL, 0);
	}
	last = k + 1 == w->npkts;
	pos = w->npkts == 1 ? EMU_ROCE_F_ONLY : k == 0 ? EMU_ROCE_F_FIRST : last ? EMU_ROCE_F_LAST : EMU_ROCE_F_MIDDLE;
	kind = (w->opcode == PRM_WQE_OP_RDMA_WRITE || w->opcode == PRM_WQE_OP_RDMA_WRITE_IMM) ? EMU_ROCE_F_WRITE : EMU_ROCE_F_SEND;
	/* immediate and invalidate ride on the message's last packet only (IBTA 9.2) */
	op = emu_roce_opcode_for(tr, kind, pos,
				 last && (w->opcode == PRM_WQE_OP_RDMA_WRITE_IMM || w->opcode == PRM_WQE_OP_SEND_IMM),
				 last && w->opcode == PRM_WQE_OP_SEND_INVAL);
	if (op < 0)
		return -EPROTO;
	h.bth.opcode = (uint8_t)op;
	h.bth.se = last && w->se;
	h.bth.ackreq = (tr == EMU_ROCE_TR_RC || tr == EMU_ROCE_TR_XRC) &&
		       (last || (k + 1) % EMU_TP_ACKREQ_EVERY == 0 || tq->rnr_probe);
	h.reth.va = w->raddr;
	h.reth.rkey = w->rkey;
	h.reth.dlen = (uint32_t)w->len;
	h.imm = w->imm;
	h.ieth_rkey = w->imm;
	if (tr == EMU_ROCE_TR_UD) {
		/* IBTA 10.2.5: a Q_Key with the high bit set means "use the QP's own". */
		h.deth.qkey = (w->qkey & 0x80000000u) ? qp->q_key : w->qkey;
		h.deth.sqpn = qp->gsi ? 1 : qp->qpn;
	}
	if (w->len > off)
		len = w->len - off < mtu ? (size_t)(w->len - off) : mtu;
	{
		bool ud = tr == EMU_ROCE_TR_UD;
		uint32_t dip = ud ? w->dip : emu_qp_dip(qp);
		uint8_t *p;

		/* the payload read straight into the packet (emu_tp_tx_begin) */
		rc = emu_tp_tx_begin(tp, dip, &h, len, &p);
		if (rc)
			return rc;
		if (len) {
			if (w->inl) {
				memcpy(p, w->inl_data + off, len);
			} else {
				struct emu_payload_src src = { .pdn = qp->pdn, .sge = w->sge, .nsge = w->nsge };

				rc = emu_payload_read(tp, w->seq, &src, w->len, off, p, len);
				if (rc)
					return rc;
			}
		}
		return emu_tp_tx_end(tp, dip, ud ? w->sport : emu_qp_sport(qp), ud ? w->tclass : qp->pri.tclass, &h,
				     len);
	}
}

static uint64_t ack_timeout_ns(const struct emu_qp *qp)
{
	/* IBTA 9.7.6.1.3: 4.096 us * 2^timeout; 0 means infinite. */
	if (!qp->pri.ack_timeout)
		return 0;
	return 4096ull << (qp->pri.ack_timeout > 31 ? 31 : qp->pri.ack_timeout);
}

void emu_req_arm_timer(struct emu_tp *tp, struct emu_tq *tq)
{
	uint64_t t = ack_timeout_ns(tq->qp);

	if (!t || tq->timer_at)
		return;
	tq->timer_at = emu_now_ns() + t;
	emu_tp_timer_kick(tp, tq->timer_at);
}

/* Transmit what the window and the outstanding-READ limit allow. */
void emu_sq_transmit(struct emu_tp *tp, struct emu_tq *tq)
{
	struct emu_qp *qp = tq->qp;
	uint32_t mtu = qp->st == EMU_QP_ST_UD ? ud_mtu(tp->d) : emu_qp_mtu_bytes(qp);
	bool rc_qp = emu_qp_reliable(qp);
	uint32_t max_rd = 1u << qp->log_sra_max;

	if (qp->state != EMU_QP_RTS && qp->state != EMU_QP_SQD)
		return;
	if (tq->rnr_at)
		return;
	while (tq->cur != tq->tail && qp->state == EMU_QP_RTS && tq->head != tq->tail) {
		struct emu_swqe *w = emu_tq_slot(tq, tq->cur);

		if (w->sent & 0x80000000u) {
			/* a WQE that failed to decode: everything before it must be done */
			if (tq->head != tq->cur)
				break;
			wqe_local_error(tp, tq, (int)(w->sent & 0xff));
			return;
		}
		if (!w->psn_set) {
			int rc;

			if (rc_qp && op_is_rd_atomic(w->opcode) && tq->rd_out >= max_rd)
				break;
			if (w->opcode == PRM_WQE_OP_RDMA_READ && tq->rd_out &&
			    read_bytes_due(tq) + w->len > EMU_TP_READ_BYTES_IN_FLIGHT)
				break;
			/* Fence (PRM ctrl fm): wait for earlier READs/atomics to finish. */
			if (w->fm && tq->rd_out)
				break;
			if (w->opcode == PRM_WQE_OP_UMR) {
				/* executed here, in order, once everything before it is done
				 * (Linux posts UMR with a small initiator fence) */
				if (tq->head != tq->cur)
					break;
				rc = emu_mkey_umr(tp->d, w->imm, w->umr_mask, w->umr_mkc);
				if (rc) {
					wqe_local_error(tp, tq, rc == -EINVAL ? PRM_CQE_SYND_LOCAL_QP_OP_ERR : PRM_CQE_SYND_LOCAL_PROT_ERR);
					return;
				}
			}
			if (w->opcode == PRM_WQE_OP_NOP || w->opcode == PRM_WQE_OP_UMR) {
				w->psn_set = true;
				w->npkts = 0;
				w->acked = true;
				tq->cur++;
				emu_req_retire(tp, tq);
				continue;
			}
			if (qp->st == EMU_QP_ST_UD && w->len > ud_mtu(tp->d)) {
				if (tq->head != tq->cur)
					break;
				wqe_local_error(tp, tq, PRM_CQE_SYND_LOCAL_LENGTH_ERR);
				return;
			}
			/* qpc.log_msg_max as INIT2RTR set it (cmd_qp.c take_mtu_msg_max):
			 * 0 is a one-byte limit, not "none" */
			if (qp->log_msg_max < 64 && w->len > (1ull << qp->log_msg_max)) {
				if (tq->head != tq->cur)
					break;
				wqe_local_error(tp, tq, PRM_CQE_SYND_LOCAL_LENGTH_ERR);
				return;
			}
			if (!w->inl && (rc = emu_sgl_check(tp->d, qp->pdn, w->sge, w->nsge, local_access(w->opcode)))) {
				if (tq->head != tq->cur)
					break;   /* in order: earlier WQEs complete first */
				wqe_local_error(tp, tq, PRM_CQE_SYND_LOCAL_PROT_ERR);
				return;
			}
			w->first_psn = tq->psn_next;
			w->npkts = w->opcode == PRM_WQE_OP_RDMA_READ ? msg_pkts(w->len, mtu)
				   : op_is_rd_atomic(w->opcode) ? 1 : msg_pkts(w->len, mtu);
			tq->psn_next = emu_psn_add(tq->psn_next, w->npkts);
			w->psn_set = true;
			w->sent = 0;
			if (op_is_rd_atomic(w->opcode))
				tq->rd_out++;
		}
		if (op_is_rd_atomic(w->opcode)) {
			if (!w->sent) {
				/* a send the socket refused is a lost packet: the timer retries */
				if (emu_psn_lt(emu_psn_add(w->first_psn, w->rd_rcvd), tq->rtx_mark))
					tp->ctr.retransmits++;
				(void)send_req_pkt(tp, tq, w, 0);
				w->sent = 1;
			}
		} else {
			while (w->sent < w->npkts) {
				int rc;

				if (rc_qp && emu_psn_diff(emu_psn_add(w->first_psn, w->sent), tq->una) >=
						     (tq->rnr_probe ? 1 : (int32_t)EMU_TP_WINDOW))
					goto out;   /* the window; one packet while probing after an RNR NAK (rc_req.c) */
				if (emu_psn_lt(emu_psn_add(w->first_psn, w->sent), tq->rtx_mark))
					tp->ctr.retransmits++;
				rc = send_req_pkt(tp, tq, w, w->sent);
				if (rc == -ENOENT || rc == -EACCES || rc == -ERANGE || rc == -EMSGSIZE || rc == -EFAULT ||
				    rc == -EPROTO || rc == -EINVAL || rc == -ENOSPC) {
					if (tq->head == tq->cur)
						wqe_local_error(tp, tq, rc == -EPROTO || rc == -EINVAL || rc == -ENOSPC
									? PRM_CQE_SYND_LOCAL_QP_OP_ERR : PRM_CQE_SYND_LOCAL_PROT_ERR);
					return;
				}
				w->sent++;
			}
		}
		tq->cur++;
		if (!rc_qp) {
			/* UC and UD: done once on the wire (no acknowledgement exists). */
			w->acked = true;
			emu_req_retire(tp, tq);
		}
	}
out:
	if (rc_qp && tq->head != tq->tail)
		emu_req_arm_timer(tp, tq);
}

void emu_sq_run(struct emu_tp *tp, struct emu_tq *tq)
{
	struct emu_qp *qp = tq->qp;

	if (qp->state == EMU_QP_ERR) {
		emu_qp_flush(tp, tq);
		return;
	}
	sq_fetch(tp, tq);
	emu_sq_transmit(tp, tq);
	/* room freed by completions: fetch and send the rest */
	if (qp->eng.sq_pi != tq->sq_prod && tq->tail - tq->head < EMU_TP_SWQE_SLOTS) {
		sq_fetch(tp, tq);
		emu_sq_transmit(tp, tq);
	}
}
