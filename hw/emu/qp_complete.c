/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Completions of a QP's send work, and its error state (PRM "Completion Queue Entry";
 * IBTA 10.3.1 Error state, C10-26): WQEs leave the send ring in order, a signalled one
 * with a CQE (emu_req_retire); a failed WQE completes with its syndrome and moves the
 * QP to error (emu_qp_error); a QP in error flushes every send WQE, in flight or not yet
 * fetched, and every receive WQE with WR_FLUSH_ERR (emu_qp_flush).  The send engine
 * and the RC requester, UC/UD receive and the RC responder all end here, so it sits
 * below them (hw/emu/layers.txt). */
#define EMU_TP_INTERNAL
#include "hw/emu/transport.h"

static bool is_rd_atomic(uint8_t op)
{
	return op == PRM_WQE_OP_RDMA_READ || op == PRM_WQE_OP_ATOMIC_CS || op == PRM_WQE_OP_ATOMIC_FA;
}

void emu_req_complete_head(struct emu_tp *tp, struct emu_tq *tq)
{
	struct emu_swqe *w = emu_tq_slot(tq, tq->head);
	struct emu_qp *qp = tq->qp;

	/* ctrl ce = 2: a CQE for this WQE (PRM "Send WQE Control Segment") */
	if (w->ce == 2) {
		struct emu_cqe_info ci = { .opcode = PRM_CQE_REQ, .s_wqe_opcode = w->opcode, .qpn = qp->qpn,
					   .wqe_counter = (uint16_t)w->idx };

		if (w->opcode == PRM_WQE_OP_RDMA_READ)
			ci.byte_cnt = (uint32_t)w->len;
		else if (w->opcode == PRM_WQE_OP_ATOMIC_CS || w->opcode == PRM_WQE_OP_ATOMIC_FA)
			ci.byte_cnt = 8;
		else
			ci.byte_cnt = (uint32_t)w->len;
		emu_cqe_post(tp, qp->cqn_snd, &ci);
	}
	if (is_rd_atomic(w->opcode) && w->psn_set && !w->acked && tq->rd_out)
		tq->rd_out--;
	emu_swqe_release(w);
	tq->head++;
	if (tq->cur - tq->head > EMU_TP_SWQE_SLOTS)
		tq->cur = tq->head;
}

bool emu_req_signalled_outstanding(struct emu_tq *tq)
{
	if (tq->qp->eng.sq_pi != tq->sq_prod)
		return true;
	for (uint32_t i = tq->head; i != tq->tail; i++)
		if (emu_tq_slot(tq, i)->ce == 2)
			return true;
	return false;
}

void emu_req_retire(struct emu_tp *tp, struct emu_tq *tq)
{
	while (tq->head != tq->cur && emu_tq_slot(tq, tq->head)->acked)
		emu_req_complete_head(tp, tq);
}

void emu_qp_flush(struct emu_tp *tp, struct emu_tq *tq)
{
	struct emu_qp *qp = tq->qp;

	while (tq->head != tq->tail) {
		struct emu_swqe *w = emu_tq_slot(tq, tq->head);
		struct emu_cqe_info ci = { .opcode = PRM_CQE_REQ_ERR, .syndrome = PRM_CQE_SYND_WR_FLUSH_ERR,
					   .s_wqe_opcode = w->opcode, .qpn = qp->qpn, .wqe_counter = (uint16_t)w->idx };

		emu_cqe_post(tp, qp->cqn_snd, &ci);
		tp->ctr.flushed++;
		emu_swqe_release(w);
		tq->head++;
	}
	tq->cur = tq->tail = tq->head;
	tq->rd_out = 0;
	tq->timer_at = 0;
	tq->rnr_at = 0;
	tq->rnr_probe = false;
	/* WQEs posted but not fetched yet are flushed from the ring */
	while (qp->eng.sq_pi != tq->sq_prod) {
		uint8_t b[64];
		uint32_t nsq = 1u << qp->log_sq_size;
		unsigned ds;
		struct emu_cqe_info ci = { .opcode = PRM_CQE_REQ_ERR, .syndrome = PRM_CQE_SYND_WR_FLUSH_ERR, .qpn = qp->qpn,
					   .wqe_counter = (uint16_t)qp->eng.sq_pi };

		if (emu_dma_read(tp->d, emu_qbuf_iova(&qp->buf, qp->sq_offset + (uint64_t)(qp->eng.sq_pi & (nsq - 1)) * 64u),
				 b, sizeof(b)))
			break;
		ds = (unsigned)PRM_GET(wqe_ctrl_seg, b, ds);
		ci.s_wqe_opcode = (uint8_t)PRM_GET(wqe_ctrl_seg, b, opcode);
		emu_cqe_post(tp, qp->cqn_snd, &ci);
		tp->ctr.flushed++;
		qp->eng.sq_pi += ds ? (ds + 3) / 4 : 1;
	}
	tq->sq_prod = qp->eng.sq_pi;
	emu_rq_flush_held(tp, tq);
	emu_rq_flush(tp, qp);
	emu_qp_srq_last_wqe(tp->d, qp);   /* IBTA 11.6.3 "Last WQE Reached", once */
	tq->flushed = true;
}

/* The WQE at the head fails with `synd`; the QP goes to error and the rest flush. */
void emu_qp_error(struct emu_tp *tp, struct emu_tq *tq, int synd)
{
	struct emu_qp *qp = tq->qp;

	if (tq->head != tq->tail) {
		struct emu_swqe *w = emu_tq_slot(tq, tq->head);
		struct emu_cqe_info ci = { .opcode = PRM_CQE_REQ_ERR, .syndrome = (uint8_t)synd,
					   .s_wqe_opcode = w->opcode, .qpn = qp->qpn, .wqe_counter = (uint16_t)w->idx };

		emu_cqe_post(tp, qp->cqn_snd, &ci);
		emu_swqe_release(w);
		tq->head++;
		if (tq->cur - tq->head > EMU_TP_SWQE_SLOTS)
			tq->cur = tq->head;
	}
	emu_log(tp->d, EMU_LOG_INFO, "QP 0x%x: send queue error, syndrome 0x%x; QP to error", qp->qpn, synd);
	qp->state = EMU_QP_ERR;
	emu_qp_flush(tp, tq);
}
