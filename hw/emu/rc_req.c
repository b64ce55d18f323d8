/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RC requester (IBTA 9.7.5.2 "requester: receiving responses", 9.7.6 "timers"; rxe's
 * rxe_comp.c describes the same rules): ACKs complete WQEs in order (a signalled one
 * writes a CQE, an unsignalled one is retired silently and accounted by the next CQE's
 * wqe_counter), READ responses are scattered into the local SGEs in PSN order, atomic
 * ACKs write the original value to the local buffer; the local ACK timer (4.096 us *
 * 2^timeout) retries with retry_cnt, RNR NAKs wait the peer's timer and retry with
 * rnr_retry (7 = infinite), a PSN sequence NAK goes back N; any other NAK, or an
 * exhausted counter, fails the WQE with its syndrome, moves the QP to error and
 * flushes the rest (qp_complete.c). */
#define EMU_TP_INTERNAL
#include "hw/emu/transport.h"

#include <errno.h>
#include <string.h>

static bool is_rd_atomic(uint8_t op)
{
	return op == PRM_WQE_OP_RDMA_READ || op == PRM_WQE_OP_ATOMIC_CS || op == PRM_WQE_OP_ATOMIC_FA;
}

static uint32_t last_psn(const struct emu_swqe *w)
{
	return emu_psn_add(w->first_psn, w->npkts ? w->npkts - 1 : 0);
}

/* Atomic results use the device's 8-byte endianness mode (PRM atomic_caps
 * atomic_req_8B_endianness_mode: 0 big-endian, 1 host). */
static bool atomic_host_endian(struct emu_dev *d)
{
	const uint8_t *a = emu_cap(d, PRM_CAP_ATOMIC, 1);

	return a && PRM_GET(atomic_caps, a, atomic_req_8B_endianness_mode) == 1;
}

/* Go back N (IBTA 9.7.5.2.4): resend from `psn`, the PSNs of every request kept. */
void emu_req_go_back(struct emu_tp *tp, struct emu_tq *tq, uint32_t psn)
{
	uint32_t i;

	(void)tp;
	for (i = tq->head; i != tq->tail; i++) {
		struct emu_swqe *w = emu_tq_slot(tq, i);

		if (!w->psn_set) {
			i = tq->tail;
			break;
		}
		if (w->acked)
			continue;
		if (emu_psn_le(psn, last_psn(w)))
			break;
	}
	if (i == tq->tail)
		return;
	if (emu_psn_gt(tq->psn_next, tq->rtx_mark))
		tq->rtx_mark = tq->psn_next;
	tq->cur = i;
	for (; i != tq->tail; i++) {
		struct emu_swqe *w = emu_tq_slot(tq, i);

		if (!w->psn_set)
			break;
		if (i == tq->cur && !is_rd_atomic(w->opcode) && emu_psn_ge(psn, w->first_psn))
			w->sent = (uint32_t)emu_psn_diff(psn, w->first_psn);
		else
			w->sent = 0;
	}
	tq->last_rtx_psn = psn;
	tq->last_rtx_ns = emu_now_ns();
}

/* Everything up to and including psn was executed by the responder. */
static void ack_upto(struct emu_tp *tp, struct emu_tq *tq, uint32_t psn, bool *lost_rd)
{
	for (uint32_t i = tq->head; i != tq->cur; i++) {
		struct emu_swqe *w = emu_tq_slot(tq, i);

		if (!w->psn_set)
			break;
		if (!emu_psn_le(last_psn(w), psn))
			break;
		if (w->acked)
			continue;
		if (is_rd_atomic(w->opcode)) {
			/* acknowledged past a READ/atomic whose response never came: lost.  The
			 * oldest unacknowledged PSN stays at what that READ still expects. */
			*lost_rd = true;
			psn = emu_psn_add(w->first_psn, w->rd_rcvd + 0xffffff);
			break;
		}
		w->acked = true;
	}
	if (emu_psn_gt(emu_psn_add(psn, 1), tq->una) && emu_psn_le(emu_psn_add(psn, 1), tq->psn_next)) {
		tq->una = emu_psn_add(psn, 1);
		tq->retry_left = tq->qp->retry_count;
		tq->rnr_left = tq->qp->rnr_retry;
		tq->timer_at = 0;
	}
	(void)tp;
}

/* The oldest READ/atomic still waiting for its answer, or NULL. */
static struct emu_swqe *oldest_rd(struct emu_tq *tq)
{
	for (uint32_t i = tq->head; i != tq->cur; i++) {
		struct emu_swqe *w = emu_tq_slot(tq, i);

		if (w->psn_set && !w->acked && is_rd_atomic(w->opcode))
			return w;
	}
	return NULL;
}

static uint32_t rd_expected(const struct emu_swqe *w)
{
	return emu_psn_add(w->first_psn, w->rd_rcvd);
}

/* A gap in responses: resend from the oldest unanswered point, at most once per ACK
 * timeout fraction for the same PSN so that a burst of out-of-order packets does not
 * resend the same window many times. */
static void gap_retry(struct emu_tp *tp, struct emu_tq *tq, uint32_t psn)
{
	uint64_t now = emu_now_ns();

	if (tq->last_rtx_psn == psn && now - tq->last_rtx_ns < 2000000ull)
		return;
	emu_req_go_back(tp, tq, psn);
}

static void read_resp(struct emu_tp *tp, struct emu_tq *tq, const struct emu_roce_pkt *p)
{
	struct emu_qp *qp = tq->qp;
	struct emu_swqe *w = oldest_rd(tq);
	uint32_t psn = p->h.bth.psn, mtu = emu_qp_mtu_bytes(qp), exp;
	uint64_t off, want;
	bool first = p->op->flags & EMU_ROCE_F_FIRST, lastp = p->op->flags & EMU_ROCE_F_LAST;
	bool lost = false;
	int rc;

	if (!w || w->opcode != PRM_WQE_OP_RDMA_READ) {
		tp->ctr.duplicates++;
		tp->ctr.drops[EMU_ROCE_DROP_PSN]++;
		return;
	}
	exp = rd_expected(w);
	if (psn != exp) {
		if (emu_psn_lt(psn, exp)) {
			tp->ctr.duplicates++;   /* a response we already have */
		} else {
			tp->ctr.drops[EMU_ROCE_DROP_PSN]++;
			gap_retry(tp, tq, exp);
			emu_sq_transmit(tp, tq);
		}
		return;
	}
	/* opcode sequence of the response stream (IBTA 9.7.5.2.2): the message's first
	 * packet is a FIRST/ONLY, its last a LAST/ONLY.  A READ re-issued for its remainder
	 * is answered as a new message (FIRST or ONLY again) from that PSN on. */
	if ((w->rd_rcvd == 0 && !first) || (w->rd_rcvd + 1 == w->npkts) != lastp) {
		tp->ctr.drops[EMU_ROCE_DROP_OPSEQ]++;
		return;
	}
	off = (uint64_t)w->rd_rcvd * mtu;
	want = w->len - off < mtu ? w->len - off : mtu;
	if (p->payload_len != want) {
		emu_qp_error(tp, tq, PRM_CQE_SYND_BAD_RESP_ERR);
		return;
	}
	/* responses carrying an AETH implicitly acknowledge earlier requests */
	ack_upto(tp, tq, emu_psn_add(w->first_psn, (uint32_t)-1 & EMU_ROCE_PSN_MASK), &lost);
	rc = emu_sgl_write(tp->d, qp->pdn, w->sge, w->nsge, off, p->payload, p->payload_len);
	if (rc) {
		/* retire what precedes it first, so the error names this WQE */
		emu_req_retire(tp, tq);
		emu_qp_error(tp, tq, rc == -EMSGSIZE ? PRM_CQE_SYND_LOCAL_LENGTH_ERR : PRM_CQE_SYND_LOCAL_PROT_ERR);
		return;
	}
	w->rd_rcvd++;
	tq->retry_left = qp->retry_count;
	tq->timer_at = 0;
	if (w->rd_rcvd == w->npkts) {
		w->acked = true;
		if (tq->rd_out)
			tq->rd_out--;
		if (emu_psn_gt(emu_psn_add(last_psn(w), 1), tq->una))
			tq->una = emu_psn_add(last_psn(w), 1);
	}
}

static void atomic_ack(struct emu_tp *tp, struct emu_tq *tq, const struct emu_roce_pkt *p)
{
	struct emu_qp *qp = tq->qp;
	struct emu_swqe *w = oldest_rd(tq);
	uint8_t v[8];
	bool lost = false;
	int rc;

	if (!w || (w->opcode != PRM_WQE_OP_ATOMIC_CS && w->opcode != PRM_WQE_OP_ATOMIC_FA) || w->first_psn != p->h.bth.psn) {
		if (w && emu_psn_gt(p->h.bth.psn, rd_expected(w)))
			gap_retry(tp, tq, rd_expected(w));
		tp->ctr.duplicates++;
		return;
	}
	ack_upto(tp, tq, emu_psn_add(w->first_psn, (uint32_t)-1 & EMU_ROCE_PSN_MASK), &lost);
	if (atomic_host_endian(tp->d))
		memcpy(v, &p->h.atomic_ack_orig, 8);
	else
		emu_be64_put(v, p->h.atomic_ack_orig);
	rc = emu_sgl_write(tp->d, qp->pdn, w->sge, w->nsge, 0, v, 8);
	if (rc) {
		emu_req_retire(tp, tq);
		emu_qp_error(tp, tq, PRM_CQE_SYND_LOCAL_PROT_ERR);
		return;
	}
	w->acked = true;
	if (tq->rd_out)
		tq->rd_out--;
	if (emu_psn_gt(emu_psn_add(w->first_psn, 1), tq->una))
		tq->una = emu_psn_add(w->first_psn, 1);
	tq->retry_left = qp->retry_count;
	tq->timer_at = 0;
}

static uint8_t nak_syndrome(unsigned code)
{
	switch (code) {
	case EMU_AETH_NAK_INV_REQ: return PRM_CQE_SYND_REMOTE_INVAL_REQ_ERR;
	case EMU_AETH_NAK_REM_ACCESS: return PRM_CQE_SYND_REMOTE_ACCESS_ERR;
	case EMU_AETH_NAK_REM_OP: return PRM_CQE_SYND_REMOTE_OP_ERR;
	default: return PRM_CQE_SYND_BAD_RESP_ERR;
	}
}

static uint64_t rnr_ns(unsigned code)
{
	return (uint64_t)emu_aeth_rnr_timer_us(code) * 1000ull;
}

/* RC's ATOMIC ACKNOWLEDGE or XRC's (0x12, 0xb2: IBTA 9.2.1, same operation bits) */
static bool is_atomic_ack(const struct emu_roce_pkt *p)
{
	return (p->h.bth.opcode & 0x1f) == EMU_ROCE_RC_ATOMIC_ACK && (p->op->flags & EMU_ROCE_F_ATOMICACKETH);
}

void emu_rc_req_rx(struct emu_tp *tp, struct emu_tq *tq, const struct emu_roce_pkt *p)
{
	struct emu_qp *qp = tq->qp;
	uint32_t psn = p->h.bth.psn;
	uint8_t syn = p->h.aeth.syndrome;
	bool lost = false;

	if (qp->state != EMU_QP_RTS && qp->state != EMU_QP_SQD) {
		tp->ctr.drops[EMU_ROCE_DROP_QP_STATE]++;
		return;
	}
	/* a response must answer something we sent: between una - 1 and psn_next */
	if (!emu_psn_lt(psn, tq->psn_next) || emu_psn_lt(psn, emu_psn_add(tq->una, (uint32_t)-1 & EMU_ROCE_PSN_MASK)) ||
	    tq->head == tq->tail) {
		/* READ responses and atomic ACKs are matched to their WQE below */
		if (!(p->op->flags & EMU_ROCE_F_READ_RESP) && !is_atomic_ack(p)) {
			tp->ctr.drops[EMU_ROCE_DROP_PSN]++;
			return;
		}
		if (tq->head == tq->tail || !emu_psn_lt(psn, tq->psn_next)) {
			tp->ctr.drops[EMU_ROCE_DROP_PSN]++;
			return;
		}
	}
	if (p->op->flags & EMU_ROCE_F_READ_RESP) {
		read_resp(tp, tq, p);
	} else if (is_atomic_ack(p)) {
		if (emu_aeth_kind(syn) == EMU_AETH_ACK)
			atomic_ack(tp, tq, p);
	} else {
		switch (emu_aeth_kind(syn)) {
		case EMU_AETH_ACK:
			tq->rnr_probe = false;   /* the responder took a request: open the window again */
			ack_upto(tp, tq, psn, &lost);
			if (lost) {
				struct emu_swqe *w = oldest_rd(tq);

				if (w)
					gap_retry(tp, tq, rd_expected(w));
			}
			break;
		case EMU_AETH_RNR_NAK:
			tp->ctr.rnr_naks_rcvd++;
			ack_upto(tp, tq, emu_psn_add(psn, (uint32_t)-1 & EMU_ROCE_PSN_MASK), &lost);
			emu_req_retire(tp, tq);
			if (qp->rnr_retry != 7) {
				if (tq->rnr_left == 0) {
					emu_qp_error(tp, tq, PRM_CQE_SYND_RNR_RETRY_EXC_ERR);
					return;
				}
				tq->rnr_left--;
			}
			emu_req_go_back(tp, tq, psn);
			/* Retry with the NAKed packet alone, AckReq set, and open the window again
			 * at its ACK (emu_sq_transmit, send_req_pkt).  IBTA 9.7.5.2.8 has the
			 * requester resend from the RNR NAKed PSN once the timer has run; how much
			 * it sends is its own choice (as with no end-to-end credits, 9.7.7.2, it
			 * may send one request packet to learn whether a receive is posted).  Resent
			 * as a whole window, a 256 KiB SEND at MTU 4096 put 64 packets on the wire
			 * every RNR period (min_rnr_timer 1 = 10 us, ggml's RPC transport) while the
			 * receiver had nothing posted: docs/benchmarks.md section 6. */
			tq->rnr_probe = true;
			tq->rnr_at = emu_now_ns() + rnr_ns(emu_aeth_value(syn));
			tq->timer_at = 0;
			tp->ctr.rnr_waits++;
			emu_tp_timer_kick(tp, tq->rnr_at);
			return;
		case EMU_AETH_NAK: {
			unsigned code = emu_aeth_value(syn);

			if (code < 5)
				tp->ctr.naks_rcvd[code]++;
			ack_upto(tp, tq, emu_psn_add(psn, (uint32_t)-1 & EMU_ROCE_PSN_MASK), &lost);
			emu_req_retire(tp, tq);
			if (code == EMU_AETH_NAK_PSN_SEQ) {
				gap_retry(tp, tq, psn);
				break;
			}
			emu_qp_error(tp, tq, nak_syndrome(code));
			return;
		}
		default:
			tp->ctr.drops[EMU_ROCE_DROP_OPCODE]++;
			return;
		}
	}
	if (qp->state != EMU_QP_RTS && qp->state != EMU_QP_SQD)
		return;
	emu_req_retire(tp, tq);
	emu_sq_run(tp, tq);
	if (tq->head != tq->tail)
		emu_req_arm_timer(tp, tq);
}

void emu_req_timers(struct emu_tp *tp, struct emu_tq *tq, uint64_t now, uint64_t *next)
{
	struct emu_qp *qp = tq->qp;

	if (qp->state == EMU_QP_ERR) {
		if (tq->head != tq->tail || qp->rq_type == EMU_RQ_REGULAR)
			emu_qp_flush(tp, tq);
		return;
	}
	if (!emu_qp_reliable(qp) || (qp->state != EMU_QP_RTS && qp->state != EMU_QP_SQD))
		return;
	if (tq->rnr_at && now >= tq->rnr_at) {
		tq->rnr_at = 0;
		emu_sq_transmit(tp, tq);
	}
	if (tq->timer_at && now >= tq->timer_at) {
		tq->timer_at = 0;
		if (tq->head != tq->tail && emu_tq_slot(tq, tq->head)->psn_set) {
			struct emu_swqe *w = emu_tq_slot(tq, tq->head);
			uint32_t psn;

			tp->ctr.timeouts++;
			emu_log(tp->d, EMU_LOG_DEBUG,
				"QP 0x%x: ACK timeout, head WQE %u op 0x%x psn 0x%x+%u rd_rcvd %u sent %u, una 0x%x next 0x%x, "
				"retries left %u", qp->qpn, w->idx, w->opcode, w->first_psn, w->npkts, w->rd_rcvd, w->sent,
				tq->una, tq->psn_next, tq->retry_left);
			/* IBTA 9.7.6.1.3: retry_cnt retries, then the WQE fails (7 is not infinite) */
			if (tq->retry_left == 0) {
				emu_qp_error(tp, tq, PRM_CQE_SYND_TRANSPORT_RETRY_EXC_ERR);
				return;
			}
			tq->retry_left--;
			psn = is_rd_atomic(w->opcode) ? rd_expected(w)
			      : (emu_psn_gt(tq->una, w->first_psn) ? tq->una : w->first_psn);
			emu_req_go_back(tp, tq, psn);
			emu_sq_transmit(tp, tq);
		}
	}
	if (tq->head != tq->tail && !tq->timer_at && !tq->rnr_at)
		emu_req_arm_timer(tp, tq);
	if (tq->timer_at && tq->timer_at < *next)
		*next = tq->timer_at;
	if (tq->rnr_at && tq->rnr_at < *next)
		*next = tq->rnr_at;
}
