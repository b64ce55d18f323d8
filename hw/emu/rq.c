/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Receive queues (PRM "Receive WQE Format", "SRQ WQE"): a QP's own receive queue is a
 * ring of rq_stride-byte WQEs consumed in order up to the doorbell record's receive
 * counter; an SRQ is a linked list whose next WQE is named by the consumed one's
 * next_wqe_index, bounded by the SRQ's doorbell record.  A WQE is a list of data
 * segments ended by the invalid lkey (0x100) or the stride.  A WQE is read by DMA when
 * a message needs it; the engine keeps it until the message completes. */
#define EMU_TP_INTERNAL
#include "hw/emu/transport.h"

#include <errno.h>
#include <string.h>

static int read_counter(struct emu_dev *d, uint64_t dbr, uint16_t *out)
{
	uint8_t rec[4];

	if (emu_dma_read(d, dbr, rec, sizeof(rec)))
		return -EIO;
	/* receive_counter sits in the low half of the record's first dword */
	{
		uint8_t full[8] = { rec[0], rec[1], rec[2], rec[3], 0, 0, 0, 0 };

		*out = (uint16_t)PRM_GET(qp_dbrec, full, receive_counter);
	}
	return 0;
}

static int parse_segs(struct emu_dev *d, const uint8_t *p, unsigned nslots, struct emu_rwqe *w)
{
	w->nsge = 0;
	w->cap = 0;
	for (unsigned i = 0; i < nslots && i < EMU_TP_MAX_SGE; i++) {
		const uint8_t *s = p + 16u * i;
		uint32_t lkey = (uint32_t)PRM_GET(wqe_data_seg, s, lkey);
		uint32_t bc = (uint32_t)PRM_GET(wqe_data_seg, s, byte_count);

		if (lkey == EMU_TERMINATE_SCATTER_MKEY)
			break;
		if (bc == 0) {
			emu_drverr(d, "receive WQE data segment %u has byte_count 0", i);
			continue;
		}
		w->sge[w->nsge].lkey = lkey;
		w->sge[w->nsge].len = bc & 0x7fffffff;
		w->sge[w->nsge].addr = PRM_GET(wqe_data_seg, s, addr);
		w->cap += w->sge[w->nsge].len;
		w->nsge++;
	}
	return 0;
}

int emu_rq_peek(struct emu_dev *d, struct emu_qp *qp, struct emu_rwqe *w)
{
	uint8_t wqe[2048];
	uint16_t ctr;

	if (qp->rq_type == EMU_RQ_SRQ) {
		struct emu_srq *srq = emu_obj_get(d, EMU_OBJ_SRQ, emu_qp_rq_srqn(qp));
		uint32_t stride;

		if (!srq || srq->state != EMU_SRQ_STATE_GOOD)
			return -EIO;
		if (read_counter(d, srq->dbr, &ctr))
			return -EIO;
		if (ctr == srq->wqe_cnt)
			return -EAGAIN;
		stride = srq->stride > sizeof(wqe) ? sizeof(wqe) : srq->stride;
		if (emu_dma_read(d, emu_qbuf_iova(&srq->buf, (uint64_t)(srq->head & ((1u << srq->log_size) - 1)) *
								   srq->stride),
				 wqe, stride))
			return -EIO;
		w->wqe_counter = srq->head & ((1u << srq->log_size) - 1);
		return parse_segs(d, wqe + PRM_SIZE(wqe_srq_next_seg), stride / 16 - 1, w);
	}
	if (qp->rq_type != EMU_RQ_REGULAR || !qp->rq_bytes)
		return -EAGAIN;
	if (read_counter(d, qp->dbr, &ctr))
		return -EIO;
	if (ctr == (uint16_t)qp->eng.rq_pi)
		return -EAGAIN;
	{
		uint32_t stride = qp->rq_stride > sizeof(wqe) ? sizeof(wqe) : qp->rq_stride;
		uint64_t off = (uint64_t)(qp->eng.rq_pi & ((1u << qp->log_rq_size) - 1)) * qp->rq_stride;

		if (emu_dma_read(d, emu_qbuf_iova(&qp->buf, off), wqe, stride))
			return -EIO;
		w->wqe_counter = qp->eng.rq_pi & 0xffff;
		return parse_segs(d, wqe, stride / 16, w);
	}
}

int emu_rq_credits(struct emu_dev *d, struct emu_qp *qp)
{
	uint16_t ctr;

	uint32_t n, size = 1u << qp->log_rq_size;

	if (qp->rq_type != EMU_RQ_REGULAR || !qp->rq_bytes || read_counter(d, qp->dbr, &ctr))
		return -1;
	/* a counter more than a ring ahead is the driver's error: never promise more
	 * WQEs than the ring holds */
	n = (uint16_t)(ctr - (uint16_t)qp->eng.rq_pi);
	return (int)(n > size ? size : n);
}

void emu_rq_consume(struct emu_dev *d, struct emu_qp *qp)
{
	if (qp->rq_type == EMU_RQ_SRQ) {
		struct emu_srq *srq = emu_obj_get(d, EMU_OBJ_SRQ, emu_qp_rq_srqn(qp));
		uint8_t next[PRM_SIZE(wqe_srq_next_seg)];
		uint16_t ctr;

		if (!srq)
			return;
		if (emu_dma_read(d, emu_qbuf_iova(&srq->buf, (uint64_t)(srq->head & ((1u << srq->log_size) - 1)) *
								   srq->stride),
				 next, sizeof(next)) == 0)
			srq->head = (uint32_t)PRM_GET(wqe_srq_next_seg, next, next_wqe_index);
		srq->wqe_cnt++;
		/* SRQ limit (PRM srqc.lwm): one event when the free WQEs fall below it. */
		if (srq->lwm && read_counter(d, srq->dbr, &ctr) == 0 && (uint16_t)(ctr - srq->wqe_cnt) < srq->lwm) {
			uint8_t data[EMU_EQE_DATA_BYTES] = { 0 };

			PRM_SET(qp_events, data, qpn_rqn_sqn, srq->srqn);
			srq->lwm = 0;
			emu_eq_post_event(d, PRM_EVENT_SRQ_RQ_LIMIT, 0, data);
		}
		return;
	}
	qp->eng.rq_pi++;
}

uint32_t emu_rq_cqn(struct emu_tp *tp, const struct emu_qp *qp)
{
	const struct emu_srq *s;

	if (qp->st != EMU_QP_ST_XRC)
		return qp->cqn_rcv;
	s = emu_obj_get(tp->d, EMU_OBJ_SRQ, qp->eng.xrc_srqn);
	return s ? s->cqn : qp->cqn_rcv;
}

/* The WQE is the QP's from the message's first packet on; a QP in error completes what
 * it holds in error (IBTA 10.3.1, "Error" state: outstanding work requests complete
 * with a flush error), so the driver gets the SRQ slot back.  A QP reset mid-message
 * drops it without a completion, as a reset drops the QP's work (IBTA 10.3.1, "Reset").
 * A QP's own receive queue is emu_rq_flush's: its WQE moves only at the last packet. */
void emu_rq_flush_held(struct emu_tp *tp, struct emu_tq *tq)
{
	struct emu_qp *qp = tq->qp;

	/* only RC and XRC take an SRQ WQE early (rc_resp.c); UC's moves at the last packet */
	if (!tq->rwqe_valid || qp->rq_type != EMU_RQ_SRQ || !emu_qp_reliable(qp))
		return;
	struct emu_cqe_info ci = { .opcode = PRM_CQE_RESP_ERR, .syndrome = PRM_CQE_SYND_WR_FLUSH_ERR, .qpn = qp->qpn,
				   .wqe_counter = (uint16_t)tq->rwqe.wqe_counter, .srqn = emu_qp_rq_srqn(qp) };

	emu_cqe_post(tp, emu_rq_cqn(tp, qp), &ci);
	tp->ctr.flushed++;
	tq->rwqe_valid = false;
}

void emu_rq_flush(struct emu_tp *tp, struct emu_qp *qp)
{
	uint16_t ctr;

	if (qp->rq_type != EMU_RQ_REGULAR || !qp->rq_bytes || read_counter(tp->d, qp->dbr, &ctr))
		return;
	while ((uint16_t)qp->eng.rq_pi != ctr) {
		struct emu_cqe_info ci = { .opcode = PRM_CQE_RESP_ERR, .syndrome = PRM_CQE_SYND_WR_FLUSH_ERR, .qpn = qp->qpn,
					   .wqe_counter = (uint16_t)qp->eng.rq_pi };

		emu_cqe_post(tp, qp->cqn_rcv, &ci);
		tp->ctr.flushed++;
		qp->eng.rq_pi++;
	}
}
