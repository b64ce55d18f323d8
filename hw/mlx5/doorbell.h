/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Doorbells: the one place where the data path tells the device about new work or
 * consumed completions (PRM "Doorbell Record", "UAR Page", "BlueFlame").
 *
 * Send, after building WQEs (mx5_sq_ring):
 *   1. mx5_wmb_before_dbrec: the WQE bytes are visible before the counter that covers
 *      them (the device may fetch WQEs as soon as it sees the record, e.g. on a
 *      retransmission or after a doorbell it coalesced);
 *   2. doorbell record send_counter = producer counter (basic blocks) mod 2^16;
 *   3. one WQE of more than one 16-byte unit that fits one BlueFlame half, with inline
 *      data unless the policy prefers BlueFlame (mx5.h enum mx5_bf_policy, rdma-core's
 *      rule and defaults): mx5_wc_start, copy the whole WQE to the
 *      BlueFlame register through the write-combining mapping in 64-byte blocks, each
 *      block's stores in order, then mx5_wc_flush.  The device takes the WQE from the
 *      BlueFlame buffer and skips the DMA read of it (lowest latency);
 *      otherwise (several WQEs, or one too large): mx5_wmb_before_doorbell and one
 *      64-bit store of the last WQE's first 8 bytes (opmod/wqe_index/opcode, qpn/ds) to
 *      the same register, which tells the device how far to read the ring;
 *   4. the register alternates between the two halves (offset ^= bf_size) so that a
 *      burst never lands on a buffer the device may still be reading (libmlx5 does the
 *      same).
 * Receive: the doorbell record alone (receive_counter = WQEs posted mod 2^16).
 * CQ: the consumer index in the record after polling; arming writes the record's arm
 * word and then the 64-bit UAR CQ doorbell (offset 0x20) with the arm sequence number.
 *
 * Every device-visible MMIO store is reported to the BAR's hook (hw/shim/mmio.h): the
 * emulated device sees doorbells and BlueFlame bursts; on hardware the hook is NULL and
 * costs one predictable branch.  There are no MMIO reads here.
 */
#ifndef UVERBS_HW_MLX5_DOORBELL_H
#define UVERBS_HW_MLX5_DOORBELL_H

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "firmware-cmd/prm.h"
#include "hw/mlx5/barrier.h"
#include "hw/mlx5/cq.h"
#include "hw/mlx5/sq.h"
#include "hw/mlx5/wqe.h"
#include "hw/shim/mmio.h"

/* One 64-byte block to the write-combining BlueFlame buffer.  The stores are volatile so
 * the compiler keeps them whole and in order; the WC buffer merges them into one
 * 64-byte write.  (hw/shim/mmio.h has no WC burst primitive; this is the only one.) */
MX5_HOT void mx5_bf_copy64(volatile uint8_t *dst, const uint8_t *src)
{
#if defined(__x86_64__)
	volatile __m128i *d = (volatile __m128i *)(volatile void *)dst;
	const __m128i *s = (const __m128i *)(const void *)src;
	__m128i a = _mm_loadu_si128(s), b = _mm_loadu_si128(s + 1);
	__m128i c = _mm_loadu_si128(s + 2), e = _mm_loadu_si128(s + 3);
	d[0] = a;
	d[1] = b;
	d[2] = c;
	d[3] = e;
#else
	volatile uint64_t *d = (volatile uint64_t *)(volatile void *)dst;
	uint64_t v[8];
	memcpy(v, src, sizeof(v));
	for (int i = 0; i < 8; i++)
		d[i] = v[i];
#endif
}

/* Doorbell for `nwqe` WQEs just written, the last of `bbs` basic blocks at `ctrl`;
 * `wr`: the one WR just written (its inline flag), or NULL to take sq->last_inl
 * (mx5_sq_build).  BlueFlame as rdma-core 44 post_send_db
 * (providers/mlx5/qp.c) decides: one WQE, a register (bf_size), inline data or the
 * prefer policy, more than one 16-byte unit (a ctrl-only WQE is rung), within a half. */
MX5_HOT void mx5_sq_doorbell(struct mx5_sq *sq, const uint8_t *ctrl, uint32_t bbs, uint32_t nwqe,
			     const struct ibv_send_wr *wr)
{
	uint32_t bytes = bbs * MX5_SEND_WQE_BB;
	uint8_t rec[PRM_SIZE(qp_dbrec)] = { 0 };
	const size_t snd = PRM_OFF(qp_dbrec, send_counter) / 32 * 4;

	/* The send counter's dword is composed aside and stored whole (its reserved upper
	 * half is zero), leaving the receive counter's dword alone. */
	PRM_SET(qp_dbrec, rec, send_counter, sq->cur_post & 0xffff);
	/* the poller reads wrid and wqe_next once the device completes what we wrote */
	mx5_tsan_release(sq);
	mx5_wmb_before_dbrec();
	memcpy((uint8_t *)sq->dbrec + snd, rec + snd, 4);
	/* bf_max is the half for the prefer policy and 0 for inline-only, so the usual
	 * case costs what it did; the inline test runs only on the doorbell side. */
	int bf = nwqe == 1 && bytes <= sq->bf_max;
	if (__builtin_expect(!bf && sq->bf_inline_only, 0))
		bf = nwqe == 1 && bytes <= sq->bf_size &&
		     (wr ? (wr->send_flags & IBV_SEND_INLINE) && wr->num_sge : sq->last_inl);
	if (bf && PRM_GET(wqe_ctrl_seg, ctrl, ds) > 1) {
		volatile uint8_t *dst = sq->bf_map + sq->bf_off;
		const uint8_t *src = ctrl;

		mx5_wc_start();
		/* The first block holds the ctrl segment and never starts at the ring end. */
		mx5_bf_copy64(dst, src);
		for (uint32_t i = 1; i < bbs; i++) {
			dst += MX5_SEND_WQE_BB;
			src += MX5_SEND_WQE_BB;
			if (__builtin_expect(src == sq->qend, 0))
				src = sq->buf;    /* the WQE wraps around the ring end */
			mx5_bf_copy64(dst, src);
		}
		mx5_wc_flush();
		shim_mmio_notify(sq->bar, SHIM_MMIO_WC_WRITE, sq->bf_off, bytes);
	} else {
		uint64_t db;

		memcpy(&db, ctrl, sizeof(db));  /* already big-endian */
		mx5_wmb_before_doorbell();
		shim_mmio_write64_raw(sq->bar, sq->bf_off, db);
	}
	sq->bf_off ^= sq->bf_size;
}

/* Make the WQEs built since the last call (mx5_sq_build) visible to the device. */
MX5_HOT void mx5_sq_ring(struct mx5_sq *sq)
{
	if (__builtin_expect(sq->pending == 0, 0))
		return;
	mx5_sq_doorbell(sq, sq->last_ctrl, sq->last_bbs, sq->pending, NULL);
	sq->pending = 0;
}

/* ibv_post_send semantics: build each WR of the chain, stop at the first bad one
 * (*bad_wr = it), ring once for everything built.  0 or a negative errno. */
MX5_HOT int mx5_post_send(struct mx5_sq *sq, struct ibv_send_wr *wr,
				struct ibv_send_wr **bad_wr)
{
	int err = 0;

	/* The common case, one WR and nothing batched: no batch bookkeeping. */
	if (__builtin_expect(wr != NULL && wr->next == NULL && sq->pending == 0, 1)) {
		uint8_t *ctrl;
		int bbs = mx5_sq_write_wqe(sq, wr, &ctrl);

		if (__builtin_expect(bbs < 0, 0)) {
			if (bad_wr)
				*bad_wr = wr;
			return bbs;
		}
		mx5_sq_doorbell(sq, ctrl, (uint32_t)bbs, 1, wr);
		return 0;
	}
	for (; wr; wr = wr->next) {
		err = mx5_sq_build(sq, wr);
		if (__builtin_expect(err != 0, 0)) {
			if (bad_wr)
				*bad_wr = wr;
			break;
		}
	}
	mx5_sq_ring(sq);
	return err;
}

/* ibv_post_send as the verbs layer calls it: under the SQ's lock (mx5_post_send_locked,
 * datapath.c), or, for a queue made with a single-thread hint, the bare builder behind
 * one test (poll.h mx5_poll_cq_mt says why the locked form is out of line). */
int mx5_post_send_locked(struct mx5_sq *sq, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);

MX5_HOT int mx5_post_send_mt(struct mx5_sq *sq, struct ibv_send_wr *wr,
			     struct ibv_send_wr **bad_wr)
{
	if (__builtin_expect(!sq->lock.single, 1))
		return mx5_post_send_locked(sq, wr, bad_wr);
	return mx5_post_send(sq, wr, bad_wr);
}

/* ibv_post_recv on a QP's own receive queue. */
MX5_HOT int mx5_post_recv(struct mx5_rq *rq, struct ibv_recv_wr *wr,
				struct ibv_recv_wr **bad_wr)
{
	uint32_t posted = 0;
	int err = 0;

	for (; wr; wr = wr->next) {
		uint32_t idx = rq->head & (rq->wqe_cnt - 1);

		if (__builtin_expect(rq->head - __atomic_load_n(&rq->tail, __ATOMIC_ACQUIRE) >= rq->wqe_cnt, 0))
			err = -ENOMEM;
		else
			err = mx5_recv_fill(rq->buf + ((size_t)idx << rq->wqe_shift), rq->max_sge,
					    rq->max_msg, wr);
		if (__builtin_expect(err != 0, 0)) {
			if (bad_wr)
				*bad_wr = wr;
			break;
		}
		rq->wrid[idx] = wr->wr_id;
		/* the poller reads head (mx5_recv_complete): after the slot is written */
		__atomic_store_n(&rq->head, rq->head + 1, __ATOMIC_RELEASE);
		posted++;
	}
	if (posted) {
		mx5_wmb_before_dbrec();
		PRM_SET(qp_dbrec, rq->dbrec, receive_counter, rq->head & 0xffff);
	}
	return err;
}

/* ibv_post_srq_recv: take WQEs from the free list (head), keep the tail one free. */
MX5_HOT int mx5_post_srq_recv(struct mx5_srq_ring *srq, struct ibv_recv_wr *wr,
				    struct ibv_recv_wr **bad_wr)
{
	uint32_t posted = 0;
	int err = 0;

	for (; wr; wr = wr->next) {
		uint8_t *wqe = srq->buf + ((size_t)srq->head << srq->wqe_shift);

		if (__builtin_expect(srq->head == srq->tail, 0))
			err = -ENOMEM;
		else
			err = mx5_recv_fill(wqe + PRM_SIZE(wqe_srq_next_seg), srq->max_sge,
					    srq->max_msg, wr);
		if (__builtin_expect(err != 0, 0)) {
			if (bad_wr)
				*bad_wr = wr;
			break;
		}
		srq->wrid[srq->head] = wr->wr_id;
		srq->head = (uint32_t)PRM_GET(wqe_srq_next_seg, wqe, next_wqe_index) & (srq->wqe_cnt - 1);
		srq->counter++;
		posted++;
	}
	if (posted) {
		mx5_wmb_before_dbrec();
		PRM_SET(qp_dbrec, srq->dbrec, receive_counter, srq->counter & 0xffff);
	}
	return err;
}

/* Tell the device how far the CQ was consumed (after polling). */
MX5_HOT void mx5_cq_ring_update_ci(struct mx5_cq_ring *cq)
{
	mx5_mb_before_ci_update();
	PRM_SET(cq_dbrec, cq->dbrec, update_ci, cq->cons_index & 0xffffff);
}

/* Request a completion event: for the next CQE (solicited = 0) or the next solicited
 * one.  The record's arm word first, then the UAR doorbell carrying the same word and
 * the CQN (PRM "CQ Doorbell"; the sequence number lets the device drop a stale arm). */
/* Arm for a completion at consumer index `arm_index` or later (the verbs layer arms
 * past CQEs software already owns; the driver arms at its consumer index). */
static inline void mx5_cq_ring_arm_at(struct mx5_cq_ring *cq, int solicited, uint32_t arm_index)
{
	uint8_t db[PRM_SIZE(cq_uar_db)], rec[PRM_SIZE(cq_dbrec)];
	uint32_t sn = __atomic_load_n(&cq->arm_sn, __ATOMIC_RELAXED) & 3u, ci = arm_index & 0xffffffu, cmd = solicited ? 1u : 0u;
	const size_t arm = PRM_OFF(cq_dbrec, arm_sn) / 32 * 4;   /* the arm word's dword */
	uint64_t v;

	/* The arm word is composed aside and stored whole: the device never sees a mix of
	 * an old and a new request. */
	memset(rec, 0, sizeof(rec));
	PRM_SET(cq_dbrec, rec, arm_sn, sn);
	PRM_SET(cq_dbrec, rec, arm_cmd, cmd);
	PRM_SET(cq_dbrec, rec, arm_ci, ci);
	memcpy((uint8_t *)cq->dbrec + arm, rec + arm, 4);
	memset(db, 0, sizeof(db));
	PRM_SET(cq_uar_db, db, arm_sn, sn);
	PRM_SET(cq_uar_db, db, cmd, cmd);
	PRM_SET(cq_uar_db, db, ci, ci);
	PRM_SET(cq_uar_db, db, cqn, cq->cqn);
	memcpy(&v, db, sizeof(v));
	mx5_wmb_before_doorbell();
	shim_mmio_write64_raw(cq->bar, cq->db_off, v);
}

static inline void mx5_cq_ring_arm(struct mx5_cq_ring *cq, int solicited)
{
	mx5_cq_ring_arm_at(cq, solicited, cq->cons_index);
}

#endif
