/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* UC and UD receive (IBTA 9.8 unreliable connected, 9.8.? UD; A17 RoCE v2).
 *
 * UC has no acknowledgements: a PSN gap or an out-of-sequence opcode drops the message
 * in progress and the responder waits for the next FIRST or ONLY, whatever its PSN; a
 * message with no receive WQE, or a WRITE whose R_Key fails, is dropped silently.  A
 * SEND that does not fit its receive WQE (or cannot be written to it) completes that
 * WQE in error and, as after any ConnectX error completion (PRM "Completion with
 * error": the QP is in the error state), the QP goes to error with its remaining work
 * flushed.
 * UD: the DETH Q_Key must equal the QP's; the receive buffer starts with the 40-byte GRH
 * area, which for RoCE v2 over IPv4 holds the IPv4 header in its last 20 bytes (as mlx5
 * and rxe write it); the payload follows. */
#define EMU_TP_INTERNAL
#include "hw/emu/transport.h"

#include <errno.h>
#include <string.h>

static void complete(struct emu_tp *tp, struct emu_tq *tq, uint8_t opcode, uint8_t synd, uint32_t byte_cnt,
		     uint32_t imm, bool se, uint32_t rqpn, uint8_t grh)
{
	struct emu_qp *qp = tq->qp;
	/* A UD receive names the header that came in: RoCE v2 over IPv4, the only one this
	 * device receives (emu_ud_rx writes the IPv4 header to the GRH area to match). */
	struct emu_cqe_info ci = { .opcode = opcode, .syndrome = synd, .qpn = qp->qpn,
				   .wqe_counter = (uint16_t)tq->rwqe.wqe_counter, .byte_cnt = byte_cnt, .imm = imm,
				   .se = se, .rqpn = rqpn, .grh = grh,
				   .sl = grh ? EMU_CQE_L3_UDP | EMU_CQE_L3_IPV4 : 0,
				   .srqn = qp->rq_type == EMU_RQ_SRQ ? qp->srqn : 0 };

	emu_cqe_post(tp, qp->cqn_rcv, &ci);
	emu_rq_consume(tp->d, qp);
	tq->rwqe_valid = false;
}

static void uc_drop_msg(struct emu_tp *tp, struct emu_tq *tq, enum emu_roce_drop why)
{
	tp->ctr.drops[why]++;
	tq->uc_drop = true;
	tq->prev_op = -1;
	tq->wr_left = 0;
	/* a receive WQE picked for the dropped message stays posted for the next one */
	tq->rwqe_valid = false;
}

/* No receive WQE for a message that needs one.  UC and UD drop it silently (IBTA
 * 9.7.5.1.5 lets only RC answer RNR); a real ConnectX counts it as out_of_buffer in the
 * QP's queue counter, which is all a user with a stalled application can see, so it is
 * counted there and logged at debug level, at most once a second per device thread. */
static void no_rwqe(struct emu_tp *tp, struct emu_tq *tq)
{
	static _Thread_local uint64_t last_log_ns;
	uint64_t now = emu_now_ns();

	emu_q_counter_out_of_buffer(tp->d, tq->qp->counter_set_id);
	if (now - last_log_ns >= 1000000000ull) {
		last_log_ns = now;
		emu_log(tp->d, EMU_LOG_DEBUG, "%s QP 0x%x: message dropped, no receive posted (out_of_buffer; "
			"%llu so far on this port)", tq->qp->st == EMU_QP_ST_UD ? "UD" : "UC", tq->qp->qpn,
			(unsigned long long)tp->ctr.drops[EMU_ROCE_DROP_NO_RWQE]);
	}
}

/* Pick the receive WQE a UC message lands in; false (message dropped) when none. */
static bool uc_peek_rwqe_ok(struct emu_tp *tp, struct emu_tq *tq)
{
	int rc = emu_rq_peek(tp->d, tq->qp, &tq->rwqe);

	if (rc == 0)
		return true;
	uc_drop_msg(tp, tq, rc == -EAGAIN ? EMU_ROCE_DROP_NO_RWQE : EMU_ROCE_DROP_QP_STATE);
	if (rc == -EAGAIN)
		no_rwqe(tp, tq);
	return false;
}

/* A receive WQE completed in error: the message is dropped, the QP moves to error and
 * everything still posted on it is flushed (WR_FLUSH_ERR). */
static void uc_recv_error(struct emu_tp *tp, struct emu_tq *tq, uint8_t synd)
{
	complete(tp, tq, PRM_CQE_RESP_ERR, synd, 0, 0, false, 0, 0);
	uc_drop_msg(tp, tq, EMU_ROCE_DROP_LENGTH);
	emu_log(tp->d, EMU_LOG_INFO, "QP 0x%x: UC receive error, syndrome 0x%x; QP to error", tq->qp->qpn, synd);
	tq->qp->state = EMU_QP_ERR;
	emu_qp_flush(tp, tq);
}

void emu_uc_rx(struct emu_tp *tp, struct emu_tq *tq, const struct emu_roce_pkt *p)
{
	struct emu_qp *qp = tq->qp;
	uint32_t f = p->op->flags, psn = p->h.bth.psn;

	if (qp->state != EMU_QP_RTR && qp->state != EMU_QP_RTS && qp->state != EMU_QP_SQD) {
		tp->ctr.drops[EMU_ROCE_DROP_QP_STATE]++;
		return;
	}
	if (psn != tq->epsn) {
		if (!(f & EMU_ROCE_F_FIRST)) {
			tq->epsn = emu_psn_add(psn, 1);
			uc_drop_msg(tp, tq, EMU_ROCE_DROP_PSN);
			return;
		}
		/* a new message resynchronises the expected PSN; one in progress is lost */
		if (tq->prev_op >= 0)
			tp->ctr.drops[EMU_ROCE_DROP_PSN]++;
		tq->prev_op = -1;
		tq->rwqe_valid = false;
	}
	tq->epsn = emu_psn_add(psn, 1);
	if (f & EMU_ROCE_F_FIRST)
		tq->uc_drop = false;
	else if (tq->uc_drop) {
		tp->ctr.drops[EMU_ROCE_DROP_PSN]++;
		return;
	}
	if (!emu_roce_opcode_follows(tq->prev_op, p->h.bth.opcode)) {
		uc_drop_msg(tp, tq, EMU_ROCE_DROP_OPSEQ);
		return;
	}
	if (f & EMU_ROCE_F_WRITE) {
		if (f & EMU_ROCE_F_FIRST) {
			if (!qp->rwe || emu_rkey_check(tp->d, qp->pdn, p->h.reth.rkey, EMU_MKEY_ACC_RW, p->h.reth.va,
						       p->h.reth.dlen)) {
				uc_drop_msg(tp, tq, EMU_ROCE_DROP_QP_STATE);
				return;
			}
			tq->wr_va = p->h.reth.va;
			tq->wr_rkey = p->h.reth.rkey;
			tq->wr_left = p->h.reth.dlen;
		}
		if ((f & EMU_ROCE_F_IMMDT) && !tq->rwqe_valid) {
			if (!uc_peek_rwqe_ok(tp, tq))
				return;
			tq->rwqe_valid = true;
		}
		if (p->payload_len > tq->wr_left ||
		    emu_rkey_access(tp->d, qp->pdn, tq->wr_rkey, EMU_MKEY_ACC_RW, tq->wr_va, (void *)(uintptr_t)p->payload,
				    p->payload_len, true)) {
			uc_drop_msg(tp, tq, EMU_ROCE_DROP_LENGTH);
			return;
		}
		tq->wr_va += p->payload_len;
		tq->wr_left -= p->payload_len;
		if ((f & EMU_ROCE_F_LAST) && (f & EMU_ROCE_F_IMMDT))
			complete(tp, tq, PRM_CQE_RESP_WR_IMM, 0, 0, p->h.imm, p->h.bth.se, qp->remote_qpn, 0);
	} else if (f & EMU_ROCE_F_SEND) {
		if (f & EMU_ROCE_F_FIRST) {
			if (!uc_peek_rwqe_ok(tp, tq))
				return;
			tq->rwqe_valid = true;
			tq->rcv_off = 0;
		}
		if (tq->rcv_off + p->payload_len > tq->rwqe.cap) {
			uc_recv_error(tp, tq, PRM_CQE_SYND_LOCAL_LENGTH_ERR);
			return;
		}
		if (emu_sgl_write(tp->d, qp->pdn, tq->rwqe.sge, tq->rwqe.nsge, tq->rcv_off, p->payload, p->payload_len)) {
			uc_recv_error(tp, tq, PRM_CQE_SYND_LOCAL_PROT_ERR);
			return;
		}
		tq->rcv_off += p->payload_len;
		if (f & EMU_ROCE_F_LAST)
			complete(tp, tq, (f & EMU_ROCE_F_IMMDT) ? PRM_CQE_RESP_SEND_IMM : PRM_CQE_RESP_SEND, 0,
				 (uint32_t)tq->rcv_off, (f & EMU_ROCE_F_IMMDT) ? p->h.imm : 0, p->h.bth.se, qp->remote_qpn,
				 0);
	} else {
		tp->ctr.drops[EMU_ROCE_DROP_TRANSPORT]++;
		return;
	}
	tq->prev_op = (f & EMU_ROCE_F_LAST) ? -1 : p->h.bth.opcode;
}

void emu_ud_rx(struct emu_tp *tp, struct emu_tq *tq, const struct emu_roce_pkt *p, const struct emu_roce_ip *env,
	       size_t roce_len)
{
	struct emu_qp *qp = tq->qp;
	uint8_t grh[EMU_ROCE_GRH_LEN];
	int rc;
	uint32_t f = p->op->flags;

	if (qp->state != EMU_QP_RTR && qp->state != EMU_QP_RTS && qp->state != EMU_QP_SQD) {
		tp->ctr.drops[EMU_ROCE_DROP_QP_STATE]++;
		return;
	}
	/* IBTA 10.2.5 / C10-15: Q_Key mismatch -> silently dropped */
	if (p->h.deth.qkey != qp->q_key) {
		tp->ctr.drops[EMU_ROCE_DROP_QKEY]++;
		return;
	}
	rc = emu_rq_peek(tp->d, qp, &tq->rwqe);
	if (rc) {
		/* no receive WQE: UD drops; a receive queue that cannot be read is the QP's fault */
		tp->ctr.drops[rc == -EAGAIN ? EMU_ROCE_DROP_NO_RWQE : EMU_ROCE_DROP_QP_STATE]++;
		if (rc == -EAGAIN)
			no_rwqe(tp, tq);
		return;
	}
	tq->rwqe_valid = true;
	if (EMU_ROCE_GRH_LEN + p->payload_len > tq->rwqe.cap) {
		complete(tp, tq, PRM_CQE_RESP_ERR, PRM_CQE_SYND_LOCAL_LENGTH_ERR, 0, 0, false, 0, 0);
		return;
	}
	emu_roce_grh_write(grh, env, roce_len);
	if (emu_sgl_write(tp->d, qp->pdn, tq->rwqe.sge, tq->rwqe.nsge, 0, grh, sizeof(grh)) ||
	    emu_sgl_write(tp->d, qp->pdn, tq->rwqe.sge, tq->rwqe.nsge, EMU_ROCE_GRH_LEN, p->payload, p->payload_len)) {
		complete(tp, tq, PRM_CQE_RESP_ERR, PRM_CQE_SYND_LOCAL_PROT_ERR, 0, 0, false, 0, 0);
		return;
	}
	complete(tp, tq, (f & EMU_ROCE_F_IMMDT) ? PRM_CQE_RESP_SEND_IMM : PRM_CQE_RESP_SEND, 0,
		 (uint32_t)(EMU_ROCE_GRH_LEN + p->payload_len), (f & EMU_ROCE_F_IMMDT) ? p->h.imm : 0, p->h.bth.se,
		 p->h.deth.sqpn, 1);
}
