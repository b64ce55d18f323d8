/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RC responder (IBTA 9.7.5.1 "responder: receiving requests", 9.7.4.1 validation;
 * rxe_resp.c walks the same checks).  For each request in PSN order: the expected PSN
 * executes; a duplicate (behind) SEND/WRITE is acknowledged again, a duplicate READ or
 * atomic is answered from the saved responder resources and never executed again; a
 * PSN ahead is NAKed once (PSN sequence error) until the expected one arrives.  Missing
 * receive WQE -> RNR NAK with the QP's min_rnr_timer; R_Key, PD, rights or bounds
 * failures -> NAK remote access error (not checked for a zero-length WRITE or READ);
 * malformed requests -> NAK invalid request; both
 * move this QP to error with the PRM's affiliated async event.  ACKs are coalesced per
 * receive pass (one ACK per QP for the newest AckReq) and leave at its end (queue_ack). */
#define EMU_TP_INTERNAL
#include "hw/emu/transport.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool atomic_host_endian(struct emu_dev *d)
{
	const uint8_t *a = emu_cap(d, PRM_CAP_ATOMIC, 1);

	return a && PRM_GET(atomic_caps, a, atomic_req_8B_endianness_mode) == 1;
}

/* The AETH of an ACK (IBTA 9.7.7.2 end-to-end flow control): end-to-end credits are the receive
 * WQEs the QP has posted and not consumed, encoded to the largest code not above them
 * (real ConnectX ACKs carry them: see the hardware capture in shared/fixtures); an SRQ
 * gives no per-QP credits, so it sends the "invalid" code 31. */

/* The PD the responder checks keys against (receive scatter lists, RDMA and atomic
 * rkeys, SEND with invalidate): an XRC target QP's is that of the XRC SRQ the request
 * names (xrc_srqc.pd; IBTA 14.2: an XRC target has no PD of its own, the XRCETH's SRQ
 * gives it).  The target's qpc.pd is one Linux picks for every target (qp.c
 * create_xrc_tgt_qp: devr->p0) while the memory is registered in the SRQ's PD by its
 * user (ibv_xsrq_pingpong, librdmacm's rdma_xserver, rdma-core's XRC atomic tests). */
static uint32_t rcv_pdn(struct emu_tp *tp, const struct emu_qp *qp)
{
	const struct emu_srq *s;

	if (qp->st != EMU_QP_ST_XRC)
		return qp->pdn;
	s = emu_obj_get(tp->d, EMU_OBJ_SRQ, qp->eng.xrc_srqn);
	return s ? s->pdn : qp->pdn;
}

/* The receive WQE in use has its completion: a QP's own receive queue moves on now, an
 * SRQ's WQE went at the message's first packet (need_rwqe). */
static void rwqe_done(struct emu_tp *tp, struct emu_tq *tq)
{
	if (tq->qp->rq_type != EMU_RQ_SRQ)
		emu_rq_consume(tp->d, tq->qp);
	tq->rwqe_valid = false;
}

/* A response opcode in the QP's own service: XRC's are RC's moved to 0xa0 (IBTA 9.2.1). */
static uint8_t resp_op(const struct emu_qp *qp, uint8_t rc_op)
{
	return qp->st == EMU_QP_ST_XRC ? (uint8_t)(rc_op | 0xa0) : rc_op;
}

static uint8_t ack_syndrome(struct emu_tp *tp, struct emu_tq *tq)
{
	int n = emu_rq_credits(tp->d, tq->qp);

	if (n > 0 && tq->rwqe_valid)
		n--;   /* the WQE a SEND in progress is filling is not free */

	return emu_aeth_syndrome(EMU_AETH_ACK, n < 0 ? EMU_AETH_CREDITS_INVALID : emu_aeth_credit_code((uint32_t)n));
}

void emu_resp_send_ack(struct emu_tp *tp, struct emu_tq *tq, uint8_t syndrome, uint32_t psn)
{
	struct emu_qp *qp = tq->qp;
	struct emu_roce_hdrs h;

	memset(&h, 0, sizeof(h));
	h.bth.opcode = resp_op(qp, EMU_ROCE_RC_ACK);
	h.bth.dqpn = qp->remote_qpn;
	h.bth.psn = psn & EMU_ROCE_PSN_MASK;
	h.aeth.syndrome = syndrome;
	h.aeth.msn = tq->msn & EMU_ROCE_MSN_MASK;
	if (emu_aeth_kind(syndrome) == EMU_AETH_ACK) {
		tp->ctr.acks_sent++;
		tq->ack_sent_psn = psn & EMU_ROCE_PSN_MASK;
	}
	(void)emu_tp_send(tp, tq, emu_qp_dip(qp), emu_qp_sport(qp), qp->pri.tclass, &h, NULL, 0);
}

/* When an ACK leaves: at the end of the receive pass that accepted the request
 * (rx_thread.c rx_pass: the poll assist's or the device thread's), never later.  The
 * BTH's AckReq bit asks the responder to schedule an acknowledge for that packet
 * (IBTA Vol 1 9.2, "AckReq"; 9.7.5.1.1: one ACK may cover every earlier PSN, so ACKs
 * of one pass are coalesced into one per QP, for the newest AckReq), and a ConnectX
 * acknowledges within microseconds; rxe_resp.c acknowledge() sends one per AckReq.
 * Until 2026-12-06 a short message's ACK was held for up to 2 ms, hoping the QP's next
 * doorbell would carry it: a requester that waited for each completion before its
 * next post (llama.cpp's RPC: three SENDs, each awaited) then waited the whole hold
 * on every message (docs/architecture.md, "Progress"). */
static void queue_ack(struct emu_tp *tp, struct emu_tq *tq, uint32_t psn)
{
	if (tq->ack_pending) {
		tp->ctr.acks_coalesced++;
		tq->ack_psn = psn;
		return;
	}
	if (!tq->ack_queued && tp->nackq == tp->ackq_cap) {
		uint32_t cap = tp->ackq_cap ? tp->ackq_cap * 2 : 64;
		uint32_t *n = realloc(tp->ackq, cap * sizeof(*n));

		if (!n) {
			emu_resp_send_ack(tp, tq, ack_syndrome(tp, tq), psn);
			return;
		}
		tp->ackq = n;
		tp->ackq_cap = cap;
	}
	tq->ack_pending = true;
	tq->ack_psn = psn;
	if (!tq->ack_queued) {
		tq->ack_queued = true;
		tp->ackq[tp->nackq++] = tq->qpn;
	}
}

static void flush_one(struct emu_tp *tp, struct emu_tq *tq)
{
	if (!tq->ack_pending)
		return;
	tq->ack_pending = false;
	emu_resp_send_ack(tp, tq, ack_syndrome(tp, tq), tq->ack_psn);
}

void emu_resp_flush_acks(struct emu_tp *tp)
{
	for (uint32_t i = 0; i < tp->nackq; i++) {
		struct emu_qp *qp = emu_obj_get(tp->d, EMU_OBJ_QP, tp->ackq[i]);
		struct emu_tq *tq = qp ? emu_tq_get(tp, qp) : NULL;

		if (!tq)
			continue;
		if (tq->ack_pending && qp->state != EMU_QP_ERR && qp->state != EMU_QP_RST)
			flush_one(tp, tq);
		tq->ack_pending = false;
		tq->ack_queued = false;
	}
	tp->nackq = 0;
}

void emu_resp_ack_now(struct emu_tp *tp, struct emu_tq *tq)
{
	if (tq->ack_pending && tq->qp->state != EMU_QP_ERR && tq->qp->state != EMU_QP_RST)
		flush_one(tp, tq);
	tq->ack_pending = false;
}

static void send_nak(struct emu_tp *tp, struct emu_tq *tq, unsigned code, uint32_t psn)
{
	flush_one(tp, tq);
	if (code < 5)
		tp->ctr.naks_sent[code]++;
	emu_resp_send_ack(tp, tq, emu_aeth_syndrome(EMU_AETH_NAK, code), psn);
}

/* Class C/D responder errors (IBTA 9.9.3): NAK with the PSN of the request in error,
 * the receive WQE in use completes in error, the QP goes to error with its affiliated
 * async event (PRM "Local Access Violation Work Queue Error" / "Invalid Request Local
 * Work Queue Error"). */
static void resp_error_at(struct emu_tp *tp, struct emu_tq *tq, uint32_t psn, unsigned nak_code, uint8_t cqe_synd,
			  uint8_t event)
{
	struct emu_qp *qp = tq->qp;
	uint8_t data[EMU_EQE_DATA_BYTES] = { 0 };

	send_nak(tp, tq, nak_code, psn);
	if (tq->rwqe_valid) {
		struct emu_cqe_info ci = { .opcode = PRM_CQE_RESP_ERR, .syndrome = cqe_synd, .qpn = qp->qpn,
					   .wqe_counter = (uint16_t)tq->rwqe.wqe_counter,
					   .srqn = qp->rq_type == EMU_RQ_SRQ ? emu_qp_rq_srqn(qp) : 0 };

		emu_cqe_post(tp, emu_rq_cqn(tp, qp), &ci);
		rwqe_done(tp, tq);
	}
	emu_log(tp->d, EMU_LOG_INFO, "QP 0x%x: responder error, NAK code %u; QP to error", qp->qpn, nak_code);
	qp->state = EMU_QP_ERR;
	PRM_SET(qp_events, data, type, 0);   /* QP (not SRQ/RQ/SQ object) */
	PRM_SET(qp_events, data, qpn_rqn_sqn, qp->qpn);
	emu_eq_post_event(tp->d, event, 0, data);
	emu_qp_flush(tp, tq);
}

/* The request in error is the one the responder expects: it has not moved past it. */
static void resp_error(struct emu_tp *tp, struct emu_tq *tq, unsigned nak_code, uint8_t cqe_synd, uint8_t event)
{
	resp_error_at(tp, tq, tq->epsn, nak_code, cqe_synd, event);
}

/* The QP itself must be enabled for the operation (qpc rwe / rre / rae).  A QP that is
 * not, for instance one without responder resources for READs and atomics (Linux
 * mlx5_ib clears rre and rae when max_dest_rd_atomic is 0), answers NAK invalid
 * request: "operation not supported by this receive queue", not a protection error on
 * a memory region, which is what an rkey, PD, rights or bounds failure is.  rxe does
 * the same (unsupported opcode -> class C).  Returns false after answering. */
static bool qp_allows(struct emu_tp *tp, struct emu_tq *tq, bool enabled)
{
	if (enabled)
		return true;
	resp_error(tp, tq, EMU_AETH_NAK_INV_REQ, PRM_CQE_SYND_REMOTE_INVAL_REQ_ERR, PRM_EVENT_WQ_INVAL_REQ_ERROR);
	return false;
}

static uint32_t pkts_for(uint64_t len, uint32_t mtu)
{
	return len ? (uint32_t)((len + mtu - 1) / mtu) : 1;
}

/* Send READ responses for [va, va+len) starting at psn (IBTA 9.7.5.1.3 replay uses the
 * same path with the saved resource). */
static void read_responses(struct emu_tp *tp, struct emu_tq *tq, const struct emu_rres *r, uint32_t psn, uint64_t va,
			   uint64_t len)
{
	struct emu_qp *qp = tq->qp;
	uint32_t mtu = emu_qp_mtu_bytes(qp), n = pkts_for(len, mtu);
	/* only FIRST, LAST and ONLY carry an AETH; one credit count serves them all */
	uint8_t syndrome = ack_syndrome(tp, tq);
	/* a READ of several packets is read ahead as a request's payload is (sq_engine.c) */
	struct emu_payload_src src = { .pdn = rcv_pdn(tp, qp), .rkey = r->rkey, .va = va };
	uint64_t key = ++tp->stage_keys;

	for (uint32_t k = 0; k < n; k++) {
		struct emu_roce_hdrs h;
		size_t chunk = len - (uint64_t)k * mtu < mtu ? (size_t)(len - (uint64_t)k * mtu) : mtu;
		uint32_t pos = n == 1 ? EMU_ROCE_F_ONLY : k == 0 ? EMU_ROCE_F_FIRST : k + 1 == n ? EMU_ROCE_F_LAST
												      : EMU_ROCE_F_MIDDLE;
		int op = emu_roce_opcode_for(EMU_ROCE_TR_RC, EMU_ROCE_F_READ_RESP, pos, false, false);
		uint32_t dip = emu_qp_dip(qp);
		uint8_t *p;

		if (!len)
			chunk = 0;
		memset(&h, 0, sizeof(h));
		h.bth.opcode = resp_op(qp, (uint8_t)op);
		h.bth.dqpn = qp->remote_qpn;
		h.bth.psn = emu_psn_add(psn, k);
		h.aeth.syndrome = syndrome;
		h.aeth.msn = tq->msn;
		/* the response's payload read straight into the packet (emu_tp_tx_begin) */
		if (emu_tp_tx_begin(tp, dip, &h, chunk, &p) < 0)
			return;
		if (chunk && emu_payload_read(tp, key, &src, len, (uint64_t)k * mtu, p, chunk)) {
			/* memory gone since the R_Key check: NAK the READ itself, at its own PSN (the
			 * expected PSN is past all its responses by now, and a requester drops a
			 * NAK beyond what it sent: it would time out and retry instead), as rxe's
			 * responder NAKs a READ at the request's PSN */
			resp_error_at(tp, tq, psn, EMU_AETH_NAK_REM_ACCESS, PRM_CQE_SYND_REMOTE_ACCESS_ERR,
				      PRM_EVENT_WQ_ACCESS_ERROR);
			return;
		}
		(void)emu_tp_tx_end(tp, dip, emu_qp_sport(qp), qp->pri.tclass, &h, chunk);
	}
}

static void atomic_ack_send(struct emu_tp *tp, struct emu_tq *tq, uint32_t psn, uint64_t orig)
{
	struct emu_qp *qp = tq->qp;
	struct emu_roce_hdrs h;

	memset(&h, 0, sizeof(h));
	h.bth.opcode = resp_op(qp, EMU_ROCE_RC_ATOMIC_ACK);
	h.bth.dqpn = qp->remote_qpn;
	h.bth.psn = psn;
	h.aeth.syndrome = ack_syndrome(tp, tq);
	h.aeth.msn = tq->msn;
	h.atomic_ack_orig = orig;
	(void)emu_tp_send(tp, tq, emu_qp_dip(qp), emu_qp_sport(qp), qp->pri.tclass, &h, NULL, 0);
}

static struct emu_rres *res_new(struct emu_tq *tq)
{
	unsigned n = 1u << tq->qp->log_rra_max;
	struct emu_rres *r;

	if (n > EMU_TP_MAX_RES || n == 0)
		n = EMU_TP_MAX_RES;
	r = &tq->res[tq->res_next % n];
	tq->res_next = (tq->res_next + 1) % n;
	memset(r, 0, sizeof(*r));
	r->valid = true;
	return r;
}

static void duplicate(struct emu_tp *tp, struct emu_tq *tq, const struct emu_roce_pkt *p)
{
	uint32_t psn = p->h.bth.psn;
	uint32_t f = p->op->flags;

	tp->ctr.duplicates++;
	if (f & EMU_ROCE_F_READ_REQ) {
		for (unsigned i = 0; i < EMU_TP_MAX_RES; i++) {
			struct emu_rres *r = &tq->res[i];

			if (!r->valid || r->atomic || emu_psn_lt(psn, r->psn) || emu_psn_gt(psn, r->last_psn))
				continue;
			/* the retried READ must stay inside what the original asked */
			if (p->h.reth.va < r->va || p->h.reth.va - r->va > r->len ||
			    p->h.reth.dlen > r->len - (p->h.reth.va - r->va))
				return;
			tp->ctr.read_replays++;
			flush_one(tp, tq);
			read_responses(tp, tq, r, psn, p->h.reth.va, p->h.reth.dlen);
			return;
		}
		return;
	}
	if (f & EMU_ROCE_F_ATOMIC) {
		for (unsigned i = 0; i < EMU_TP_MAX_RES; i++) {
			struct emu_rres *r = &tq->res[i];

			if (r->valid && r->atomic && r->psn == psn) {
				tp->ctr.atomic_replays++;
				flush_one(tp, tq);
				atomic_ack_send(tp, tq, psn, r->orig);
				return;
			}
		}
		return;
	}
	/* SEND/WRITE: acknowledge again up to what was executed (IBTA 9.7.5.1.2) */
	queue_ack(tp, tq, emu_psn_add(tq->epsn, (uint32_t)-1 & EMU_ROCE_PSN_MASK));
}

/* A receive WQE for a message that consumes one; false after an RNR NAK. */
static bool need_rwqe(struct emu_tp *tp, struct emu_tq *tq, uint32_t psn)
{
	int rc;

	if (tq->rwqe_valid)
		return true;
	rc = emu_rq_peek(tp->d, tq->qp, &tq->rwqe);
	if (rc == -EAGAIN) {
		/* IBTA 9.7.5.1.5: RNR NAK carrying our min_rnr_timer; the PSN is not consumed.
		 * The rest of the burst behind it (PSNs ahead) is dropped without a further
		 * NAK, as after a sequence NAK (9.7.5.1.1, emu_rc_resp_rx): the requester
		 * resends from this PSN when its RNR timer has run (9.7.5.2.8), and a PSN
		 * sequence NAK for the same PSN said nothing new. */
		tq->nak_seq_sent = true;
		flush_one(tp, tq);
		tp->ctr.rnr_naks_sent++;
		emu_q_counter_out_of_buffer(tp->d, tq->qp->counter_set_id);
		emu_resp_send_ack(tp, tq, emu_aeth_syndrome(EMU_AETH_RNR_NAK, tq->qp->min_rnr_nak), psn);
		return false;
	}
	if (rc) {
		resp_error(tp, tq, EMU_AETH_NAK_REM_OP, PRM_CQE_SYND_LOCAL_QP_OP_ERR, PRM_EVENT_WQ_CATAS_ERROR);
		return false;
	}
	tq->rwqe_valid = true;
	tq->rcv_off = 0;
	/* A WQE of an SRQ is the QP's from the message's first packet on: the SRQ's next
	 * QP must not take the same one while this message is still arriving (several QPs
	 * -- ibv_xsrq_pingpong's XRC targets, one per client -- receive multi-packet SENDs
	 * into one SRQ at once).  A QP's own receive queue moves at the last packet. */
	if (tq->qp->rq_type == EMU_RQ_SRQ)
		emu_rq_consume(tp->d, tq->qp);
	return true;
}

static void recv_complete(struct emu_tp *tp, struct emu_tq *tq, uint8_t opcode, uint32_t byte_cnt, uint32_t imm,
			  bool se)
{
	struct emu_qp *qp = tq->qp;
	struct emu_cqe_info ci = { .opcode = opcode, .qpn = qp->qpn, .wqe_counter = (uint16_t)tq->rwqe.wqe_counter,
				   .byte_cnt = byte_cnt, .imm = imm, .se = se, .rqpn = qp->remote_qpn,
				   .srqn = qp->rq_type == EMU_RQ_SRQ ? emu_qp_rq_srqn(qp) : 0 };

	emu_cqe_post(tp, emu_rq_cqn(tp, qp), &ci);
	rwqe_done(tp, tq);
}

/* SEND with invalidate: an MKey that allows it (emu_mkey_remote_inval_ok) becomes free. */
static void invalidate(struct emu_tp *tp, struct emu_tq *tq, uint32_t rkey)
{
	struct emu_mkey *mk = emu_obj_get(tp->d, EMU_OBJ_MKEY, rkey >> 8);

	if (mk && mk->variant == (rkey & 0xff) && emu_mkey_remote_inval_ok(mk) && mk->pdn == rcv_pdn(tp, tq->qp))
		mk->free = true;
}

static void exec_send(struct emu_tp *tp, struct emu_tq *tq, const struct emu_roce_pkt *p)
{
	struct emu_qp *qp = tq->qp;
	uint32_t f = p->op->flags;
	int rc;

	if ((f & EMU_ROCE_F_FIRST) && !need_rwqe(tp, tq, p->h.bth.psn))
		return;
	if (!tq->rwqe_valid) {
		resp_error(tp, tq, EMU_AETH_NAK_INV_REQ, PRM_CQE_SYND_REMOTE_INVAL_REQ_ERR, PRM_EVENT_WQ_INVAL_REQ_ERROR);
		return;
	}
	if (tq->rcv_off + p->payload_len > tq->rwqe.cap) {
		/* longer than the receive WQE: local length error here, invalid request there */
		resp_error(tp, tq, EMU_AETH_NAK_INV_REQ, PRM_CQE_SYND_LOCAL_LENGTH_ERR, PRM_EVENT_WQ_INVAL_REQ_ERROR);
		return;
	}
	rc = emu_sgl_write(tp->d, rcv_pdn(tp, qp), tq->rwqe.sge, tq->rwqe.nsge, tq->rcv_off, p->payload,
			   p->payload_len);
	if (rc) {
		resp_error(tp, tq, EMU_AETH_NAK_REM_OP, PRM_CQE_SYND_LOCAL_PROT_ERR, PRM_EVENT_WQ_ACCESS_ERROR);
		return;
	}
	tq->rcv_off += p->payload_len;
	if (f & EMU_ROCE_F_LAST) {
		uint8_t op = (f & EMU_ROCE_F_IMMDT) ? PRM_CQE_RESP_SEND_IMM
			     : (f & EMU_ROCE_F_IETH) ? PRM_CQE_RESP_SEND_INV : PRM_CQE_RESP_SEND;
		uint32_t imm = (f & EMU_ROCE_F_IMMDT) ? p->h.imm : (f & EMU_ROCE_F_IETH) ? p->h.ieth_rkey : 0;

		if (f & EMU_ROCE_F_IETH)
			invalidate(tp, tq, p->h.ieth_rkey);
		recv_complete(tp, tq, op, (uint32_t)tq->rcv_off, imm, p->h.bth.se);
		tq->msn++;
	}
	tq->epsn = emu_psn_add(tq->epsn, 1);
}

/* IBTA C9-88: with a DMA length of 0 the responder checks neither the R_Key nor the
 * VA; requesters send whatever they like there (rkey 0 is common).  rxe does the same
 * (rxe_resp.c check_rkey: a zero-byte READ or WRITE goes straight to execute).  The QP's
 * own rights (qp_allows) are still checked: they are not about a memory region. */
static bool zero_length_ok(const struct emu_roce_pkt *p)
{
	return p->h.reth.dlen == 0;
}

/* The RETH of a WRITE or READ against the memory it names, with the right `acc` asks
 * for: false, the request answered with a remote access error NAK, when the R_Key does
 * not cover it (as Linux drivers/infiniband/sw/rxe/rxe_resp.c check_rkey). */
static bool reth_access_ok(struct emu_tp *tp, struct emu_tq *tq, const struct emu_roce_pkt *p, unsigned acc)
{
	if (zero_length_ok(p) ||
	    !emu_rkey_check(tp->d, rcv_pdn(tp, tq->qp), p->h.reth.rkey, acc, p->h.reth.va, p->h.reth.dlen))
		return true;
	resp_error(tp, tq, EMU_AETH_NAK_REM_ACCESS, PRM_CQE_SYND_REMOTE_ACCESS_ERR, PRM_EVENT_WQ_ACCESS_ERROR);
	return false;
}

static void exec_write(struct emu_tp *tp, struct emu_tq *tq, const struct emu_roce_pkt *p)
{
	struct emu_qp *qp = tq->qp;
	uint32_t f = p->op->flags;

	if (f & EMU_ROCE_F_FIRST) {
		if (!qp_allows(tp, tq, qp->rwe))
			return;
		if (!reth_access_ok(tp, tq, p, EMU_MKEY_ACC_RW))
			return;
		/* the QP's message limit, 2^qpc.log_msg_max from INIT2RTR (0: one byte) */
		if (p->h.reth.dlen > (1ull << qp->log_msg_max)) {
			resp_error(tp, tq, EMU_AETH_NAK_INV_REQ, PRM_CQE_SYND_REMOTE_INVAL_REQ_ERR, PRM_EVENT_WQ_INVAL_REQ_ERROR);
			return;
		}
		tq->wr_va = p->h.reth.va;
		tq->wr_rkey = p->h.reth.rkey;
		tq->wr_left = p->h.reth.dlen;
	}
	/* a WRITE with immediate consumes a receive WQE: none posted -> RNR before any byte */
	if ((f & EMU_ROCE_F_IMMDT) && !need_rwqe(tp, tq, p->h.bth.psn))
		return;
	if (p->payload_len > tq->wr_left || ((f & EMU_ROCE_F_LAST) && p->payload_len != tq->wr_left) ||
	    (!(f & EMU_ROCE_F_LAST) && p->payload_len != emu_qp_mtu_bytes(qp))) {
		resp_error(tp, tq, EMU_AETH_NAK_INV_REQ, PRM_CQE_SYND_REMOTE_INVAL_REQ_ERR, PRM_EVENT_WQ_INVAL_REQ_ERROR);
		return;
	}
	if (p->payload_len && emu_rkey_access(tp->d, rcv_pdn(tp, qp), tq->wr_rkey, EMU_MKEY_ACC_RW, tq->wr_va,
					      (void *)(uintptr_t)p->payload, p->payload_len, true)) {
		resp_error(tp, tq, EMU_AETH_NAK_REM_ACCESS, PRM_CQE_SYND_REMOTE_ACCESS_ERR, PRM_EVENT_WQ_ACCESS_ERROR);
		return;
	}
	tq->wr_va += p->payload_len;
	tq->wr_left -= p->payload_len;
	if (f & EMU_ROCE_F_LAST) {
		if (f & EMU_ROCE_F_IMMDT)
			recv_complete(tp, tq, PRM_CQE_RESP_WR_IMM, 0, p->h.imm, p->h.bth.se);
		tq->msn++;
	}
	tq->epsn = emu_psn_add(tq->epsn, 1);
}

static void exec_read(struct emu_tp *tp, struct emu_tq *tq, const struct emu_roce_pkt *p)
{
	struct emu_qp *qp = tq->qp;
	struct emu_rres *r;
	uint32_t n = pkts_for(p->h.reth.dlen, emu_qp_mtu_bytes(qp));

	if (!qp_allows(tp, tq, qp->rre))
		return;
	if (!reth_access_ok(tp, tq, p, EMU_MKEY_ACC_RR))
		return;
	flush_one(tp, tq);
	r = res_new(tq);
	r->psn = p->h.bth.psn;
	r->last_psn = emu_psn_add(r->psn, n - 1);
	r->va = p->h.reth.va;
	r->rkey = p->h.reth.rkey;
	r->len = p->h.reth.dlen;
	tq->msn++;
	tq->epsn = emu_psn_add(tq->epsn, n);
	read_responses(tp, tq, r, r->psn, r->va, r->len);
}

static void exec_atomic(struct emu_tp *tp, struct emu_tq *tq, const struct emu_roce_pkt *p)
{
	struct emu_qp *qp = tq->qp;
	struct emu_rres *r;
	uint8_t v[8];
	uint64_t orig, nv;
	bool host = atomic_host_endian(tp->d);

	if (p->h.atomic.va & 7) {
		/* IBTA 9.4.5: atomics are 8-byte aligned, otherwise an invalid request */
		resp_error(tp, tq, EMU_AETH_NAK_INV_REQ, PRM_CQE_SYND_REMOTE_INVAL_REQ_ERR, PRM_EVENT_WQ_INVAL_REQ_ERROR);
		return;
	}
	if (!qp_allows(tp, tq, qp->rae))
		return;
	if (emu_rkey_access(tp->d, rcv_pdn(tp, qp), p->h.atomic.rkey, EMU_MKEY_ACC_ATOMIC, p->h.atomic.va, v, 8, false)) {
		resp_error(tp, tq, EMU_AETH_NAK_REM_ACCESS, PRM_CQE_SYND_REMOTE_ACCESS_ERR, PRM_EVENT_WQ_ACCESS_ERROR);
		return;
	}
	if (host)
		memcpy(&orig, v, 8);
	else
		orig = emu_be64_get(v);
	/* XRC's CMP_SWAP is RC's moved to 0xa0 (IBTA 9.2.1, resp_op) */
	if ((p->h.bth.opcode & 0x1f) == EMU_ROCE_RC_CMP_SWAP)
		nv = orig == p->h.atomic.compare ? p->h.atomic.swap_add : orig;
	else
		nv = orig + p->h.atomic.swap_add;
	if (host)
		memcpy(v, &nv, 8);
	else
		emu_be64_put(v, nv);
	if (nv != orig && emu_rkey_access(tp->d, rcv_pdn(tp, qp), p->h.atomic.rkey, EMU_MKEY_ACC_ATOMIC, p->h.atomic.va, v, 8,
					  true)) {
		resp_error(tp, tq, EMU_AETH_NAK_REM_ACCESS, PRM_CQE_SYND_REMOTE_ACCESS_ERR, PRM_EVENT_WQ_ACCESS_ERROR);
		return;
	}
	flush_one(tp, tq);
	r = res_new(tq);
	r->atomic = true;
	r->psn = r->last_psn = p->h.bth.psn;
	r->orig = orig;
	tq->msn++;
	tq->epsn = emu_psn_add(tq->epsn, 1);
	atomic_ack_send(tp, tq, r->psn, orig);
}

void emu_rc_resp_rx(struct emu_tp *tp, struct emu_tq *tq, const struct emu_roce_pkt *p, const struct emu_roce_ip *env)
{
	struct emu_qp *qp = tq->qp;
	uint32_t psn = p->h.bth.psn, f = p->op->flags;
	int32_t d = emu_psn_diff(psn, tq->epsn);
	uint32_t epsn_before;

	(void)env;
	if (qp->state != EMU_QP_RTR && qp->state != EMU_QP_RTS && qp->state != EMU_QP_SQD) {
		tp->ctr.drops[EMU_ROCE_DROP_QP_STATE]++;
		return;
	}
	if (d < 0) {
		duplicate(tp, tq, p);
		return;
	}
	if (d > 0) {
		/* IBTA 9.7.5.1.1: one NAK per sequence error, then silence until it heals */
		tp->ctr.drops[EMU_ROCE_DROP_PSN]++;
		if (!tq->nak_seq_sent) {
			tq->nak_seq_sent = true;
			send_nak(tp, tq, EMU_AETH_NAK_PSN_SEQ, tq->epsn);
		}
		return;
	}
	tq->nak_seq_sent = false;
	/* IBTA 9.7.4.1 (XRC): the XRCETH must name an XRC SRQ of the target QP's XRC
	 * domain; anything else is an invalid request (NAK, the QP goes to error) */
	if (qp->st == EMU_QP_ST_XRC) {
		const struct emu_srq *s = emu_obj_get(tp->d, EMU_OBJ_SRQ, p->h.xrc_srqn);

		/* ... and, inside a SEND, the SRQ its first packet named (the WQE in use
		 * came from there) */
		if (!s || !s->xrc || s->xrcd != qp->xrcd || (tq->rwqe_valid && p->h.xrc_srqn != qp->eng.xrc_srqn)) {
			resp_error(tp, tq, EMU_AETH_NAK_INV_REQ, PRM_CQE_SYND_REMOTE_INVAL_REQ_ERR,
				   PRM_EVENT_WQ_INVAL_REQ_ERROR);
			return;
		}
		qp->eng.xrc_srqn = p->h.xrc_srqn;
	}
	if (!emu_roce_opcode_follows(tq->prev_op, p->h.bth.opcode)) {
		tp->ctr.drops[EMU_ROCE_DROP_OPSEQ]++;
		resp_error(tp, tq, EMU_AETH_NAK_INV_REQ, PRM_CQE_SYND_REMOTE_INVAL_REQ_ERR, PRM_EVENT_WQ_INVAL_REQ_ERROR);
		return;
	}
	epsn_before = tq->epsn;
	if (f & EMU_ROCE_F_SEND)
		exec_send(tp, tq, p);
	else if (f & EMU_ROCE_F_WRITE)
		exec_write(tp, tq, p);
	else if (f & EMU_ROCE_F_READ_REQ)
		exec_read(tp, tq, p);
	else if (f & EMU_ROCE_F_ATOMIC)
		exec_atomic(tp, tq, p);
	else
		tp->ctr.drops[EMU_ROCE_DROP_OPCODE]++;
	if (qp->state == EMU_QP_ERR || tq->epsn == epsn_before)
		return;
	if ((f & (EMU_ROCE_F_SEND | EMU_ROCE_F_WRITE)))
		tq->prev_op = (f & EMU_ROCE_F_LAST) ? -1 : p->h.bth.opcode;
	if (p->h.bth.ackreq && (f & (EMU_ROCE_F_SEND | EMU_ROCE_F_WRITE)))
		queue_ack(tp, tq, psn);
}
