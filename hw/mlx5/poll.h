/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Completion polling (PRM "Completion Queue", "CQE Format"; docs/architecture.md, "The data path").
 *
 * A CQE belongs to software when its opcode is not 0xf (invalid: the ring starts
 * filled with it) and its owner bit equals the lap parity of the consumer counter,
 * (cons_index >> log_cqe_cnt) & 1: the device flips the bit it writes on every pass,
 * so an entry left from the previous lap reads as still owned by hardware.  Only after
 * that check are the other fields read (mx5_rmb_after_owner).
 *
 * Decoding follows libmlx5's semantics (the oracle tests build CQEs with mlx5dv.h and
 * compare): requester CQEs name the send WQE by wqe_counter, whose wr_id and position
 * come from the SQ's tables (retiring unsignalled WQEs before it); responder CQEs take
 * the next receive WQE in order (RQ) or the WQE named by wqe_counter (SRQ); error CQEs
 * map their syndrome to ibv_wc_status and report the vendor syndrome unchanged.
 */
#ifndef UVERBS_HW_MLX5_POLL_H
#define UVERBS_HW_MLX5_POLL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "firmware-cmd/prm.h"
#include "hw/mlx5/barrier.h"
#include "hw/mlx5/cq.h"
#include "hw/mlx5/doorbell.h"
#include "hw/mlx5/sq.h"
#include "hw/mlx5/wqe.h"

#define MX5_CQE_SIZE 64u
#define MX5_CQE_SHIFT 6u

/* Readable name of a syndrome ("remote access error"), "unknown syndrome" otherwise. */
const char *mx5_cqe_syndrome_name(uint8_t syndrome);

static inline enum ibv_wc_status mx5_syndrome_status(uint8_t syndrome)
{
	switch (syndrome) {
	case PRM_CQE_SYND_LOCAL_LENGTH_ERR: return IBV_WC_LOC_LEN_ERR;
	case PRM_CQE_SYND_LOCAL_QP_OP_ERR: return IBV_WC_LOC_QP_OP_ERR;
	case PRM_CQE_SYND_LOCAL_PROT_ERR: return IBV_WC_LOC_PROT_ERR;
	case PRM_CQE_SYND_WR_FLUSH_ERR: return IBV_WC_WR_FLUSH_ERR;
	case PRM_CQE_SYND_MW_BIND_ERR: return IBV_WC_MW_BIND_ERR;
	case PRM_CQE_SYND_BAD_RESP_ERR: return IBV_WC_BAD_RESP_ERR;
	case PRM_CQE_SYND_LOCAL_ACCESS_ERR: return IBV_WC_LOC_ACCESS_ERR;
	case PRM_CQE_SYND_REMOTE_INVAL_REQ_ERR: return IBV_WC_REM_INV_REQ_ERR;
	case PRM_CQE_SYND_REMOTE_ACCESS_ERR: return IBV_WC_REM_ACCESS_ERR;
	case PRM_CQE_SYND_REMOTE_OP_ERR: return IBV_WC_REM_OP_ERR;
	case PRM_CQE_SYND_TRANSPORT_RETRY_EXC_ERR: return IBV_WC_RETRY_EXC_ERR;
	case PRM_CQE_SYND_RNR_RETRY_EXC_ERR: return IBV_WC_RNR_RETRY_EXC_ERR;
	case PRM_CQE_SYND_REMOTE_ABORTED_ERR: return IBV_WC_REM_ABORT_ERR;
	default: return IBV_WC_GENERAL_ERR;
	}
}

MX5_HOT uint8_t *mx5_cq_cqe(const struct mx5_cq_ring *cq, uint32_t n)
{
	return cq->buf + ((size_t)(n & (cq->cqe_cnt - 1)) << MX5_CQE_SHIFT);
}

/* The CQE at counter n when software owns it (written, and its owner bit matches the
 * lap of n), else NULL. */
MX5_HOT uint8_t *mx5_cq_owned(const struct mx5_cq_ring *cq, uint32_t n)
{
	uint8_t *cqe = mx5_cq_cqe(cq, n);

	/* The device writes this memory behind the compiler's back: read it afresh on every
	 * call, even when an empty poll is inlined into the caller's spin loop. */
	mx5_compiler_barrier();
	if (PRM_GET(cqe64, cqe, opcode) == PRM_CQE_INVALID ||
	    PRM_GET(cqe64, cqe, owner) != ((n >> cq->log_cqe_cnt) & 1u))
		return NULL;
	return cqe;
}

/* The CQE at the consumer counter when software owns it, else NULL. */
MX5_HOT uint8_t *mx5_cq_next(const struct mx5_cq_ring *cq)
{
	return mx5_cq_owned(cq, cq->cons_index);
}

/* A responder's CQE, the completion of a receive WQE: RESP_WR_IMM..RESP_SEND_INV, or
 * RESP_ERR (firmware-cmd/cqe_opcodes.def). */
static inline bool mx5_cqe_opcode_is_recv(unsigned opcode)
{
	return (opcode >= PRM_CQE_RESP_WR_IMM && opcode <= PRM_CQE_RESP_SEND_INV) || opcode == PRM_CQE_RESP_ERR;
}

MX5_HOT struct mx5_wq_ref *mx5_cq_lookup(struct mx5_cq_ring *cq, uint32_t qpn)
{
	struct mx5_wq_ref *r;

	if (__builtin_expect(cq->last != NULL && cq->last_qpn == qpn, 1))
		return cq->last;
	r = cq->wqs ? mx5_wq_table_get(cq->wqs, qpn) : NULL;
	if (!r || (!r->sq && !r->rq && !r->srq))
		return NULL;
	cq->last = r;
	cq->last_qpn = qpn;
	return r;
}

/* A receive CQE of a QP this CQ does not know: the XRC SRQ it names (cq.h
 * mx5_xrc_ref), when one of them completes here.  Out of line (datapath.c): only CQs
 * with XRC SRQs get that far. */
struct mx5_wq_ref *mx5_cq_lookup_xrc(struct mx5_cq_ring *cq, const uint8_t *cqe, unsigned opcode);

/* Requester completion of the WQE whose first basic block is wqe_counter: retire it
 * and every unsignalled WQE before it. */
MX5_HOT uint64_t mx5_sq_complete(struct mx5_sq *sq, uint32_t wqe_counter)
{
	uint32_t idx = wqe_counter & (sq->wqe_cnt - 1);

	uint64_t wr_id = sq->wrid[idx];

	/* the poster reads tail under its own lock (mx5_sq_room): release, so that these
	 * reads of the slot come before the poster reuses it */
	__atomic_store_n(&sq->tail, sq->wqe_next[idx], __ATOMIC_RELEASE);
	return wr_id;
}

/* SRQ WQE back on the free list, after the current tail (PRM "SRQ WQE" next index). */
MX5_HOT uint64_t mx5_srq_complete(struct mx5_srq_ring *srq, uint32_t wqe_counter)
{
	uint32_t idx = wqe_counter & (srq->wqe_cnt - 1);
	uint64_t wr_id = srq->wrid[idx];

	PRM_SET(wqe_srq_next_seg, srq->buf + ((size_t)srq->tail << srq->wqe_shift),
		next_wqe_index, idx);
	srq->tail = idx;
	return wr_id;
}

/* mx5_srq_complete under the SRQ's lock (datapath.c). */
uint64_t mx5_srq_complete_locked(struct mx5_srq_ring *srq, uint32_t wqe_counter);

MX5_HOT int mx5_recv_complete(struct mx5_wq_ref *r, uint32_t wqe_counter, uint64_t *wr_id)
{
	struct mx5_rq *rq = r->rq;
	uint32_t tail;

	if (r->srq) {
		/* posters take WQEs from the same free list: under the SRQ's lock, inside
		 * the CQ's (rdma-core providers/mlx5/srq.c mlx5_free_srq_wqe does the same);
		 * out of line, so that the lock's call does not weigh on the other paths */
		*wr_id = mx5_srq_complete_locked(r->srq, wqe_counter);
		return 0;
	}
	/* head is the posters' (written under the RQ's lock), tail the pollers' (under the
	 * CQ's): each side publishes its counter with a release store after touching the
	 * slot, and reads the other's with an acquire load (plain moves on x86-64) */
	if (__builtin_expect(rq == NULL, 0))
		return -EIO;
	tail = rq->tail;
	if (__builtin_expect(__atomic_load_n(&rq->head, __ATOMIC_ACQUIRE) == tail, 0))
		return -EIO;   /* a receive completion with nothing posted */
	*wr_id = rq->wrid[tail & (rq->wqe_cnt - 1)];
	__atomic_store_n(&rq->tail, tail + 1, __ATOMIC_RELEASE);
	return 0;
}

/* Requester opcode (s_wqe_opcode) -> verbs opcode, flags and byte_len rule. */
MX5_HOT void mx5_decode_req(const uint8_t *cqe, struct ibv_wc *wc)
{
	switch (PRM_GET(cqe64, cqe, s_wqe_opcode)) {
	case PRM_WQE_OP_RDMA_WRITE_IMM:
		wc->wc_flags = IBV_WC_WITH_IMM;
		/* fall through */
	case PRM_WQE_OP_RDMA_WRITE:
		wc->opcode = IBV_WC_RDMA_WRITE;
		break;
	case PRM_WQE_OP_SEND_IMM:
		wc->wc_flags = IBV_WC_WITH_IMM;
		/* fall through */
	case PRM_WQE_OP_SEND:
	case PRM_WQE_OP_SEND_INVAL:
		wc->opcode = IBV_WC_SEND;
		break;
	case PRM_WQE_OP_RDMA_READ:
		wc->opcode = IBV_WC_RDMA_READ;
		wc->byte_len = (uint32_t)PRM_GET(cqe64, cqe, byte_cnt);
		break;
	case PRM_WQE_OP_ATOMIC_CS:
		wc->opcode = IBV_WC_COMP_SWAP;
		wc->byte_len = 8;
		break;
	case PRM_WQE_OP_ATOMIC_FA:
		wc->opcode = IBV_WC_FETCH_ADD;
		wc->byte_len = 8;
		break;
	default:
		wc->opcode = IBV_WC_SEND;
		break;
	}
}

MX5_HOT void mx5_decode_resp(const uint8_t *cqe, unsigned opcode, struct ibv_wc *wc)
{
	uint32_t imm = (uint32_t)PRM_GET(cqe64, cqe, imm_inval_pkey);

	wc->byte_len = (uint32_t)PRM_GET(cqe64, cqe, byte_cnt);
	wc->opcode = IBV_WC_RECV;
	switch (opcode) {
	case PRM_CQE_RESP_WR_IMM:
		wc->opcode = IBV_WC_RECV_RDMA_WITH_IMM;
		wc->wc_flags = IBV_WC_WITH_IMM;
		wc->imm_data = htobe32(imm);   /* verbs keeps immediates in network order */
		break;
	case PRM_CQE_RESP_SEND_IMM:
		wc->wc_flags = IBV_WC_WITH_IMM;
		wc->imm_data = htobe32(imm);
		break;
	case PRM_CQE_RESP_SEND_INV:
		wc->wc_flags = IBV_WC_WITH_INV;
		wc->invalidated_rkey = imm;
		break;
	default:
		break;
	}
	wc->src_qp = (uint32_t)PRM_GET(cqe64, cqe, rqpn);
	wc->slid = (uint16_t)PRM_GET(cqe64, cqe, slid);
	wc->sl = (uint8_t)PRM_GET(cqe64, cqe, sl);
	wc->dlid_path_bits = (uint8_t)PRM_GET(cqe64, cqe, ml_path);
	wc->pkey_index = (uint16_t)PRM_GET(cqe64, cqe, pkey);
	if (PRM_GET(cqe64, cqe, grh))
		wc->wc_flags |= IBV_WC_GRH;
}

/* After device fatal, on a poll that found no CQE: complete the next outstanding WQE of
 * a queue on this CQ with IBV_WC_WR_FLUSH_ERR (send queues, receive queues and SRQs, in
 * QPN order); 0 once none is left.  Out of line and cold: the hot path pays one load of
 * cq->flushing, and only when the CQ is empty. */
int mx5_cq_flush_one(struct mx5_cq_ring *cq, struct ibv_wc *wc) __attribute__((cold));

/* Poll one CQE into wc: 1 polled, 0 empty, -EIO for a CQE naming no known queue
 * (consumed, so that the ring moves on). */
MX5_HOT int mx5_poll_one(struct mx5_cq_ring *cq, struct ibv_wc *wc)
{
	uint8_t *cqe = mx5_cq_next(cq);
	struct mx5_wq_ref *r;
	unsigned opcode;
	uint32_t qpn;

	if (!cqe) {
		/* CQEs the device wrote before it died come first, then the flush. */
		if (__builtin_expect(__atomic_load_n(&cq->flushing, __ATOMIC_RELAXED) != 0, 0))
			return mx5_cq_flush_one(cq, wc);
		return 0;
	}
	mx5_rmb_after_owner();
	cq->cons_index++;

	opcode = (unsigned)PRM_GET(cqe64, cqe, opcode);
	qpn = (uint32_t)PRM_GET(cqe64, cqe, qpn);
	r = mx5_cq_lookup(cq, qpn);
	if (__builtin_expect(r == NULL, 0)) {
		/* an XRC target QP's receive, on its XRC SRQ's CQ: found by the CQE's srqn */
		r = mx5_cq_lookup_xrc(cq, cqe, opcode);
		if (r == NULL)
			return -EIO;
	}
	wc->qp_num = qpn;
	wc->wc_flags = 0;
	wc->vendor_err = 0;
	wc->byte_len = 0;
	wc->imm_data = 0;
	wc->src_qp = 0;
	wc->pkey_index = 0;
	wc->slid = 0;
	wc->sl = 0;
	wc->dlid_path_bits = 0;

	switch (opcode) {
	case PRM_CQE_REQ:
		if (__builtin_expect(r->sq == NULL, 0))
			return -EIO;
		mx5_tsan_acquire(r->sq);
		wc->wr_id = mx5_sq_complete(r->sq, (uint32_t)PRM_GET(cqe64, cqe, wqe_counter));
		wc->status = IBV_WC_SUCCESS;
		mx5_decode_req(cqe, wc);
		return 1;
	case PRM_CQE_RESP_WR_IMM:
	case PRM_CQE_RESP_SEND:
	case PRM_CQE_RESP_SEND_IMM:
	case PRM_CQE_RESP_SEND_INV:
		if (mx5_recv_complete(r, (uint32_t)PRM_GET(cqe64, cqe, wqe_counter), &wc->wr_id))
			return -EIO;
		wc->status = IBV_WC_SUCCESS;
		mx5_decode_resp(cqe, opcode, wc);
		return 1;
	case PRM_CQE_REQ_ERR:
	case PRM_CQE_RESP_ERR:
		wc->status = mx5_syndrome_status((uint8_t)PRM_GET(err_cqe, cqe, syndrome));
		wc->vendor_err = (uint32_t)PRM_GET(err_cqe, cqe, vendor_err_synd);
		if (opcode == PRM_CQE_REQ_ERR) {
			if (__builtin_expect(r->sq == NULL, 0))
				return -EIO;
			mx5_tsan_acquire(r->sq);
			wc->wr_id = mx5_sq_complete(r->sq, (uint32_t)PRM_GET(err_cqe, cqe, wqe_counter));
			mx5_decode_req(cqe, wc);
			wc->wc_flags = 0;
			wc->byte_len = 0;
		} else {
			if (mx5_recv_complete(r, (uint32_t)PRM_GET(err_cqe, cqe, wqe_counter), &wc->wr_id))
				return -EIO;
			wc->opcode = IBV_WC_RECV;
		}
		return 1;
	default:
		/* Resize, signature or no-packet CQEs are never requested by this driver. */
		wc->wr_id = 0;
		wc->status = IBV_WC_GENERAL_ERR;
		wc->vendor_err = opcode;
		wc->opcode = IBV_WC_SEND;
		return 1;
	}
}

/* The ring alone: up to ne completions; the consumer index goes to the doorbell record
 * once for the batch.  Returns the count, or a negative errno when the first CQE
 * could not be matched to a queue. */
MX5_HOT int mx5_poll_cq_ring(struct mx5_cq_ring *cq, int ne, struct ibv_wc *wc)
{
	int n, r = 0;

	for (n = 0; n < ne; n++) {
		r = mx5_poll_one(cq, wc + n);
		if (r <= 0)
			break;
	}
	if (n || r < 0)
		mx5_cq_ring_update_ci(cq);
	return n ? n : (r < 0 ? r : 0);
}

/* A software device hears of a poll that returned an RDMA WRITE's completion, the
 * newest of the poll: the application may now wait for the peer's answer by watching
 * memory (emu_poll_found). */
static inline void mx5_poll_found(struct mx5_cq_ring *cq, const struct ibv_wc *wc, int n)
{
	for (int i = n - 1; i >= 0; i--) {
		if (wc[i].opcode == IBV_WC_RDMA_WRITE) {
			shim_poll_found(cq->bar, wc[i].qp_num);
			return;
		}
	}
}

/* ibv_poll_cq: the ring; when it is empty, a software device may take its arrivals in
 * this thread (shim hook, NULL on hardware), then the ring is looked at once more. */
MX5_HOT int mx5_poll_cq(struct mx5_cq_ring *cq, int ne, struct ibv_wc *wc)
{
	int n = mx5_poll_cq_ring(cq, ne, wc);

	if (__builtin_expect(n == 0, 0) && shim_poll_assist(cq->bar))
		n = mx5_poll_cq_ring(cq, ne, wc);
	if (n > 0 && shim_wants_poll_found(cq->bar))
		mx5_poll_found(cq, wc, n);
	return n;
}

/* ibv_poll_cq as the verbs layer calls it: under the CQ's lock (mx5_poll_cq_locked,
 * datapath.c), or, for a CQ made with a single-thread hint, the bare poller behind one
 * test.  The locked form is out of line so that its calls into the lock do not make
 * this copy save registers: the hint costs one test and nothing else. */
int mx5_poll_cq_locked(struct mx5_cq_ring *cq, int ne, struct ibv_wc *wc);

MX5_HOT int mx5_poll_cq_mt(struct mx5_cq_ring *cq, int ne, struct ibv_wc *wc)
{
	if (__builtin_expect(!cq->lock.single, 1))
		return mx5_poll_cq_locked(cq, ne, wc);
	return mx5_poll_cq(cq, ne, wc);
}

#endif
