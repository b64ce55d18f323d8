/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Out-of-line set-up of the data-path state (sq.h, cq.h) and names for diagnostics.
 * Everything here runs at object creation, never per WQE or per CQE. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "firmware-cmd/prm.h"
#include "hw/mlx5/cq.h"
#include "hw/mlx5/doorbell.h"
#include "hw/mlx5/poll.h"
#include "hw/mlx5/sq.h"
#include "hw/mlx5/wqe.h"
#include "hw/platform/bits.h"

uint32_t mx5_max_msg(unsigned log_max_msg)
{
	return log_max_msg >= 31 ? MX5_MAX_MSG_DEFAULT : 1u << log_max_msg;
}

int mx5_sq_init(struct mx5_sq *sq, const struct mx5_sq_attr *a)
{
	uint32_t base_ds, max_ds, op_mask;

	if (!sq || !a || !a->buf || !a->wrid || !a->wqe_next || !a->dbrec || !a->bar)
		return -EINVAL;
	/* wqe_index and the doorbell counter are 16 bits: the ring may not exceed 2^16 BBs */
	if (!plat_is_pow2(a->wqe_cnt) || a->wqe_cnt > 65536)
		return -EINVAL;
	/* bf_size: one BlueFlame half, a whole number of basic blocks (0: none). */
	if (a->bf_size % MX5_SEND_WQE_BB)
		return -EINVAL;
	switch (a->qp_type) {
	case IBV_QPT_RC: op_mask = MX5_OPS_RC; base_ds = 1 + 2; break;   /* ctrl raddr atomic */
	/* ctrl, XRC (the remote SRQ: rdma-core providers/mlx5/qp.c struct mlx5_wqe_xrc_seg
	 * after the control segment for IBV_QPT_XRC_SEND), then RC's */
	case IBV_QPT_XRC_SEND: op_mask = MX5_OPS_RC; base_ds = 1 + 1 + 2; break;
	case IBV_QPT_UC: op_mask = MX5_OPS_UC; base_ds = 1 + 1; break;
	case IBV_QPT_UD: op_mask = MX5_OPS_UD; base_ds = 1 + MX5_AV_SIZE / 16; break;
	default: return -EINVAL;
	}
	/* The largest WQE this QP can build must fit the ds field and the ring. */
	max_ds = base_ds + a->max_sge;
	if (base_ds + (a->max_inline + 4 + 15) / 16 > max_ds)
		max_ds = base_ds + (a->max_inline + 4 + 15) / 16;
	if (max_ds > MX5_MAX_WQE_DS || (max_ds + 3) / 4 > a->wqe_cnt)
		return -EINVAL;

	sq->buf = a->buf;
	sq->qend = sq->buf + (size_t)a->wqe_cnt * MX5_SEND_WQE_BB;
	sq->wqe_cnt = a->wqe_cnt;
	sq->cur_post = 0;
	sq->tail = 0;
	sq->qpn = a->qpn & 0xffffff;
	sq->max_inline = a->max_inline;
	sq->max_sge = a->max_sge;
	sq->is_ud = a->qp_type == IBV_QPT_UD;
	sq->is_xrc = a->qp_type == IBV_QPT_XRC_SEND;
	sq->av_offset = a->av_offset;
	sq->wrid = a->wrid;
	sq->wqe_next = a->wqe_next;
	sq->dbrec = a->dbrec;
	sq->bar = a->bar;
	sq->bf_map = a->bar->wc_base ? a->bar->wc_base : a->bar->base;
	sq->bf_off = a->bf_off;
	sq->bf_size = a->bf_size;
	sq->bf_inline_only = a->bf_inline_only != 0;
	sq->bf_max = sq->bf_inline_only ? 0 : a->bf_size;
	sq->last_inl = 0;
	sq->pending = 0;
	sq->last_bbs = 0;
	sq->last_ctrl = NULL;
	sq->max_msg = a->max_msg && a->max_msg < MX5_MAX_MSG_DEFAULT ? a->max_msg : MX5_MAX_MSG_DEFAULT;

	/* ds before the data segments, per opcode this QP type allows (PRM "Send WQE":
	 * ctrl, then datagram for UD, raddr for RDMA and atomics, atomic for atomics). */
	for (unsigned op = 0; op < MX5_WR_OPS_LEN; op++) {
		const struct mx5_wr_op *o = &mx5_wr_ops[op];
		sq->op_ds[op] = !((op_mask >> op) & 1u) ? 0
				: (uint8_t)(1u + sq->is_xrc + o->raddr + (o->atomic != 0) +
					    (sq->is_ud ? MX5_AV_SIZE / 16 : 0));
		sq->op_seg[op] = sq->is_ud ? MX5_SEG_DGRAM
				 : o->atomic == 1 ? MX5_SEG_ATOMIC_CS
				 : o->atomic == 2 ? MX5_SEG_ATOMIC_FA
				 : o->raddr ? MX5_SEG_RADDR : MX5_SEG_NONE;
	}
	/* The control segment's fm_ce_se byte for every combination of the three verbs
	 * flags, composed once through the PRM fields. */
	for (unsigned f = 0; f < 8; f++) {
		uint8_t ctrl[PRM_SIZE(wqe_ctrl_seg)];

		memset(ctrl, 0, sizeof(ctrl));
		PRM_SET(wqe_ctrl_seg, ctrl, fm, (f & IBV_SEND_FENCE) ? MX5_FM_FENCE : MX5_FM_NONE);
		PRM_SET(wqe_ctrl_seg, ctrl, ce,
			((f & IBV_SEND_SIGNALED) || a->sq_sig_all) ? MX5_CE_ALWAYS : MX5_CE_ON_ERROR);
		PRM_SET(wqe_ctrl_seg, ctrl, se, (f & IBV_SEND_SOLICITED) ? 1 : 0);
		sq->fm_ce_se[f] = (uint8_t)PRM_GET(wqe_ctrl_seg, ctrl, fm_ce_se);
	}
	memset(sq->buf, 0, (size_t)a->wqe_cnt * MX5_SEND_WQE_BB);
	return 0;
}

uint32_t mx5_rq_stride(uint32_t max_sge)
{
	return 1u << plat_ilog2_ceil(max_sge ? max_sge * 16u : 16u);
}

uint32_t mx5_srq_stride(uint32_t max_sge)
{
	return 1u << plat_ilog2_ceil(16u + max_sge * 16u);
}

int mx5_rq_init(struct mx5_rq *rq, void *buf, uint32_t wqe_cnt, uint32_t max_sge,
		uint64_t *wrid, void *dbrec)
{
	uint32_t stride;

	if (!rq || !buf || !wrid || !dbrec || !plat_is_pow2(wqe_cnt) || max_sge > 512)
		return -EINVAL;
	stride = mx5_rq_stride(max_sge);
	rq->buf = buf;
	rq->wqe_cnt = wqe_cnt;
	rq->wqe_shift = plat_ilog2_ceil(stride);
	rq->max_sge = stride / 16u;
	rq->head = 0;
	rq->tail = 0;
	rq->wrid = wrid;
	rq->dbrec = dbrec;
	rq->max_msg = MX5_MAX_MSG_DEFAULT;   /* the control plane lowers it to the port's */
	return 0;
}

int mx5_srq_ring_init(struct mx5_srq_ring *srq, void *buf, uint32_t wqe_cnt,
		      uint32_t max_sge, uint64_t *wrid, void *dbrec)
{
	uint32_t stride;

	/* At least two WQEs: the tail one always stays free as the list end. */
	if (!srq || !buf || !wrid || !dbrec || !plat_is_pow2(wqe_cnt) || wqe_cnt < 2 ||
	    wqe_cnt > 65536 || max_sge > 511)
		return -EINVAL;
	stride = mx5_srq_stride(max_sge);
	srq->buf = buf;
	srq->wqe_cnt = wqe_cnt;
	srq->wqe_shift = plat_ilog2_ceil(stride);
	srq->max_sge = stride / 16u - 1u;
	srq->head = 0;
	srq->tail = wqe_cnt - 1;
	srq->counter = 0;
	srq->wrid = wrid;
	srq->dbrec = dbrec;
	srq->flush_free = NULL;   /* the control plane may give the flush its bitmap */
	srq->flush_pos = 0;
	srq->flush_valid = 0;
	srq->max_msg = MX5_MAX_MSG_DEFAULT;  /* the control plane lowers it to the port's */
	/* made once per SRQ (never re-made at a reset): the lock starts as one that locks;
	 * the verbs layer may re-init it with a single-thread hint before first use */
	plat_spin_init(&srq->lock, 0);
	memset(buf, 0, (size_t)wqe_cnt * stride);
	for (uint32_t i = 0; i < wqe_cnt; i++)
		PRM_SET(wqe_srq_next_seg, srq->buf + (size_t)i * stride, next_wqe_index,
			(i + 1) & (wqe_cnt - 1));
	return 0;
}

int mx5_cq_ring_init(struct mx5_cq_ring *cq, void *buf, uint32_t cqe_cnt, uint32_t cqn,
		     void *dbrec, const struct shim_bar *bar, uint64_t db_off,
		     struct mx5_wq_table *wqs)
{
	if (!cq || !buf || !dbrec || !plat_is_pow2(cqe_cnt) || cqe_cnt > (1u << 24))
		return -EINVAL;
	/* consumer index, arm sequence, QPN cache and flush state start at zero */
	*cq = (struct mx5_cq_ring){ .buf = buf, .cqe_cnt = cqe_cnt, .log_cqe_cnt = plat_ilog2_ceil(cqe_cnt),
				    .cqn = cqn & 0xffffff, .dbrec = dbrec, .bar = bar, .db_off = db_off,
				    .wqs = wqs };
	plat_spin_init(&cq->lock, 0);   /* as the SRQ's: made once, locking until told */
	/* Every entry starts invalid (opcode 0xf), owner 0: empty until the device writes. */
	memset(buf, 0, (size_t)cqe_cnt * MX5_CQE_SIZE);
	for (uint32_t i = 0; i < cqe_cnt; i++)
		PRM_SET(cqe64, cq->buf + (size_t)i * MX5_CQE_SIZE, opcode, PRM_CQE_INVALID);
	memset(dbrec, 0, PRM_SIZE(cq_dbrec));
	return 0;
}

int mx5_wq_table_set(struct mx5_wq_table *t, uint32_t qpn, struct mx5_wq_ref *ref)
{
	struct mx5_wq_ref **l2;

	if (!t || !ref || qpn > 0xffffff)
		return -EINVAL;
	l2 = &t->dir[qpn >> MX5_WQ_TABLE_SHIFT];
	if (!*l2) {
		*l2 = calloc(MX5_WQ_TABLE_SIZE, sizeof(**l2));
		if (!*l2)
			return -ENOMEM;
	}
	(*l2)[qpn & (MX5_WQ_TABLE_SIZE - 1)] = *ref;
	return 0;
}

void mx5_wq_table_clear(struct mx5_wq_table *t, uint32_t qpn)
{
	struct mx5_wq_ref *l2;

	if (!t || qpn > 0xffffff)
		return;
	l2 = t->dir[qpn >> MX5_WQ_TABLE_SHIFT];
	if (l2)
		memset(&l2[qpn & (MX5_WQ_TABLE_SIZE - 1)], 0, sizeof(*l2));
}

void mx5_wq_table_destroy(struct mx5_wq_table *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < MX5_WQ_TABLE_SIZE; i++) {
		free(t->dir[i]);
		t->dir[i] = NULL;
	}
}

void mx5_av_build(uint8_t av[MX5_AV_SIZE], const struct mx5_av_attr *a)
{
	memset(av, 0, MX5_AV_SIZE);
	PRM_SET(wqe_datagram_seg, av, ext, 1);
	PRM_SET(wqe_datagram_seg, av, stat_rate_sl, a->stat_rate_sl);
	PRM_SET(wqe_datagram_seg, av, rlid, a->udp_sport);
	memcpy(PRM_ADDR(wqe_datagram_seg, av, rmac), a->dmac, 6);
	PRM_SET(wqe_datagram_seg, av, tclass, a->tclass);
	PRM_SET(wqe_datagram_seg, av, hop_limit, a->hop_limit);
	PRM_SET(wqe_datagram_seg, av, grh, 1);   /* RoCE always carries a GRH / IP header */
	PRM_SET(wqe_datagram_seg, av, sgid_index, a->sgid_index);
	PRM_SET(wqe_datagram_seg, av, flow_label, a->flow_label);
	memcpy(PRM_ADDR(wqe_datagram_seg, av, rgid), a->dgid, 16);
}

/* ---- flush after device fatal (poll.h mx5_cq_flush_one) ----
 * IBTA 10.3.1 / 11.4.2.5: once a queue is in the error state, every outstanding work
 * request completes with "work request flushed in error"; a device that died (fatal
 * health syndrome, surprise removal) writes none of those CQEs, so the driver makes
 * them, the way Linux mlx5_ib does for an internal error (mlx5_ib_poll_sw_comp).  The
 * queue state walked here is the one the poster and poller already keep. */

static void mx5_flush_wc(struct ibv_wc *wc, uint32_t qpn, uint64_t wr_id, enum ibv_wc_opcode op)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = wr_id;
	wc->status = IBV_WC_WR_FLUSH_ERR;
	wc->opcode = op;
	wc->vendor_err = PRM_CQE_SYND_WR_FLUSH_ERR;
	wc->qp_num = qpn;
}

#define MX5_BIT_SET(map, i) ((map)[(i) >> 3] |= (uint8_t)(1u << ((i) & 7u)))
#define MX5_BIT_GET(map, i) (((map)[(i) >> 3] >> ((i) & 7u)) & 1u)

/* Mark the SRQ's free list (head .. tail through next_wqe_index); the rest is posted. */
static void mx5_srq_flush_mark_free(struct mx5_srq_ring *srq)
{
	uint32_t i = srq->head;

	memset(srq->flush_free, 0, (srq->wqe_cnt + 7) / 8);
	for (uint32_t n = 0; n < srq->wqe_cnt; n++) {
		MX5_BIT_SET(srq->flush_free, i);
		if (i == srq->tail)
			break;
		i = (uint32_t)PRM_GET(wqe_srq_next_seg, srq->buf + ((size_t)i << srq->wqe_shift),
				      next_wqe_index) & (srq->wqe_cnt - 1);
	}
	srq->flush_pos = 0;
	srq->flush_counter = srq->counter;
	srq->flush_tail = srq->tail;
	srq->flush_valid = 1;
}

static int mx5_srq_flush_next(struct mx5_srq_ring *srq, uint64_t *wr_id)
{
	if (!srq->flush_free)
		return 0;
	/* Posts take from head, completions append at tail: either means the map is old. */
	if (!srq->flush_valid || srq->counter != srq->flush_counter || srq->tail != srq->flush_tail)
		mx5_srq_flush_mark_free(srq);
	while (srq->flush_pos < srq->wqe_cnt) {
		uint32_t idx = srq->flush_pos++;

		if (MX5_BIT_GET(srq->flush_free, idx))
			continue;
		MX5_BIT_SET(srq->flush_free, idx);
		*wr_id = mx5_srq_complete(srq, idx);   /* back on the free list */
		srq->flush_tail = srq->tail;
		return 1;
	}
	return 0;
}

/* The next flush completion of the queues of one QP that complete on cq. */
static int mx5_flush_ref(const struct mx5_cq_ring *cq, struct mx5_wq_ref *r, uint32_t qpn,
			 struct ibv_wc *wc)
{
	struct mx5_sq *sq = r->sq;
	struct mx5_rq *rq = r->rq;
	uint64_t wr_id;

	int got = 0;

	/* cur_post and head belong to the posters: read them under the queue's lock (the
	 * CQ's is held, lock order CQ then queue). */
	if (sq && r->scq == cq) {
		plat_spin_lock(&sq->lock);
		if (sq->tail != sq->cur_post) {
			uint32_t tail = sq->tail, idx = tail & (sq->wqe_cnt - 1);
			uint32_t next = sq->wqe_next[idx];

			/* every WQE, signalled or not: an unsignalled one that failed reports too */
			mx5_flush_wc(wc, qpn, sq->wrid[idx], IBV_WC_SEND);
			/* a table entry that does not move tail forward would loop: end the queue */
			__atomic_store_n(&sq->tail, next - tail - 1u < sq->cur_post - tail ? next : sq->cur_post,
					 __ATOMIC_RELEASE);
			got = 1;
		}
		plat_spin_unlock(&sq->lock);
		if (got)
			return 1;
	}
	if (r->rcq != cq)
		return 0;
	if (rq) {
		plat_spin_lock(&rq->lock);
		if (rq->tail != rq->head) {
			mx5_flush_wc(wc, qpn, rq->wrid[rq->tail & (rq->wqe_cnt - 1)], IBV_WC_RECV);
			__atomic_store_n(&rq->tail, rq->tail + 1, __ATOMIC_RELEASE);
			got = 1;
		}
		plat_spin_unlock(&rq->lock);
		if (got)
			return 1;
	}
	if (r->srq) {
		plat_spin_lock(&r->srq->lock);
		got = mx5_srq_flush_next(r->srq, &wr_id);
		plat_spin_unlock(&r->srq->lock);
		if (got) {
			mx5_flush_wc(wc, qpn, wr_id, IBV_WC_RECV);
			return 1;
		}
	}
	return 0;
}

int mx5_cq_flush_one(struct mx5_cq_ring *cq, struct ibv_wc *wc)
{
	uint32_t qpn = cq->flush_qpn;

	if (!cq->wqs)
		return 0;
	/* Resume where the last flush completion came from; a whole pass that finds
	 * nothing starts over next time (WQEs posted after the death flush too). */
	while (qpn <= 0xffffffu) {
		struct mx5_wq_ref *l2 = cq->wqs->dir[qpn >> MX5_WQ_TABLE_SHIFT];

		if (!l2) {
			qpn = (qpn | (MX5_WQ_TABLE_SIZE - 1)) + 1;
			continue;
		}
		if (mx5_flush_ref(cq, &l2[qpn & (MX5_WQ_TABLE_SIZE - 1)], qpn, wc)) {
			cq->flush_qpn = qpn;
			return 1;
		}
		qpn++;
	}
	/* then the XRC SRQs completing here: no QP of this CQ holds their WQEs (cq.h),
	 * so they report with QP number 0 */
	for (struct mx5_xrc_ref *x = cq->xrc; x; x = x->next) {
		if (mx5_flush_ref(cq, &x->ref, 0, wc))
			return 1;
	}
	cq->flush_qpn = 0;
	return 0;
}

const char *mx5_cqe_syndrome_name(uint8_t syndrome)
{
	switch (syndrome) {
#define PRM_CQE_SYND(name, value, str) case PRM_CQE_SYND_##name: return str;
#include "firmware-cmd/cqe_syndromes.def"
#undef PRM_CQE_SYND
	default: return "unknown syndrome";
	}
}

int mx5_post_send_locked(struct mx5_sq *sq, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	int rc;

	plat_spin_lock(&sq->lock);
	rc = mx5_post_send(sq, wr, bad_wr);
	plat_spin_unlock(&sq->lock);
	return rc;
}

int mx5_poll_cq_locked(struct mx5_cq_ring *cq, int ne, struct ibv_wc *wc)
{
	int rc;

	plat_spin_lock(&cq->lock);
	rc = mx5_poll_cq_ring(cq, ne, wc);
	plat_spin_unlock(&cq->lock);
	/* The software device's receive (a system call) runs outside the lock, so other
	 * pollers of this CQ never spin through it; then the ring once more. */
	if (__builtin_expect(rc == 0, 0) && shim_poll_assist(cq->bar)) {
		plat_spin_lock(&cq->lock);
		rc = mx5_poll_cq_ring(cq, ne, wc);
		plat_spin_unlock(&cq->lock);
	}
	if (rc > 0 && shim_wants_poll_found(cq->bar))
		mx5_poll_found(cq, wc, rc);
	return rc;
}

struct mx5_wq_ref *mx5_cq_lookup_xrc(struct mx5_cq_ring *cq, const uint8_t *cqe, unsigned opcode)
{
	struct mx5_xrc_ref *x;
	uint32_t srqn;

	if (!mx5_cqe_opcode_is_recv(opcode))
		return NULL;
	/* err_cqe.srqn sits where cqe64.srqn does (layouts/wqe.def) */
	srqn = (uint32_t)PRM_GET(cqe64, cqe, srqn);
	for (x = cq->xrc; x; x = x->next)
		if (x->srqn == srqn)
			return &x->ref;
	return NULL;
}

uint64_t mx5_srq_complete_locked(struct mx5_srq_ring *srq, uint32_t wqe_counter)
{
	uint64_t wr_id;

	plat_spin_lock(&srq->lock);
	mx5_tsan_acquire(srq);
	wr_id = mx5_srq_complete(srq, wqe_counter);
	plat_spin_unlock(&srq->lock);
	return wr_id;
}

/* A QP went to RESET: take its CQEs out of the ring, so that completions of the old
 * incarnation (flush errors above all) never reach the poller after a reconnect.
 * rdma-core's mlx5 does the same on RESET (providers/mlx5/cq.c __mlx5_cq_clean), and
 * so does Linux mlx5_ib for kernel QPs.  The rule: find the newest CQE software owns,
 * walk back to the consumer counter, drop the QP's CQEs and move every other one up
 * over the gap so that the survivors keep their order; a moved CQE keeps the owner bit
 * of the slot it lands in.  A dropped receive CQE from an SRQ gives its WQE back to the
 * SRQ's free list.  The consumer counter then skips the dropped entries.  The caller
 * keeps pollers away by the CQ's lock, posters to the SRQ by its (in that order, as
 * in the poll path). */
static uint32_t ring_clean(struct mx5_cq_ring *cq, uint32_t qpn, uint32_t xrc_srqn, struct mx5_srq_ring *srq)
{
	uint32_t prod, nfreed = 0;

	plat_spin_lock(&cq->lock);
	if (srq)
		plat_spin_lock(&srq->lock);
	prod = cq->cons_index;
	while (prod - cq->cons_index < cq->cqe_cnt && mx5_cq_owned(cq, prod))
		prod++;
	mx5_rmb_after_owner();
	while ((int32_t)(--prod - cq->cons_index) >= 0) {
		uint8_t *cqe = mx5_cq_cqe(cq, prod);

		unsigned op = (unsigned)PRM_GET(cqe64, cqe, opcode);
		bool rcv = mx5_cqe_opcode_is_recv(op);

		if (xrc_srqn ? rcv && (uint32_t)PRM_GET(cqe64, cqe, srqn) == xrc_srqn
			     : (uint32_t)PRM_GET(cqe64, cqe, qpn) == qpn) {
			if (srq && rcv)
				(void)mx5_srq_complete(srq, (uint32_t)PRM_GET(cqe64, cqe, wqe_counter));
			nfreed++;
		} else if (nfreed) {
			uint8_t *dst = mx5_cq_cqe(cq, prod + nfreed);
			unsigned owner = (unsigned)PRM_GET(cqe64, dst, owner);

			memcpy(dst, cqe, 1u << MX5_CQE_SHIFT);
			PRM_SET(cqe64, dst, owner, owner);
		}
	}
	if (nfreed) {
		cq->cons_index += nfreed;
		mx5_cq_ring_update_ci(cq);
	}
	if (srq)
		plat_spin_unlock(&srq->lock);
	plat_spin_unlock(&cq->lock);
	return nfreed;
}

uint32_t mx5_cq_ring_clean(struct mx5_cq_ring *cq, uint32_t qpn, struct mx5_srq_ring *srq)
{
	return ring_clean(cq, qpn, 0, srq);
}

/* An XRC SRQ is destroyed: its receive CQEs not yet polled go too (they name a target
 * QP of the domain, and the SRQ by srqn), as a destroyed QP's do, so that a later XRC
 * SRQ given the same number on the same CQ never completes a WQE it did not post, and
 * the poller never meets a CQE of no known queue.  rdma-core's mlx5 does less: its
 * mlx5_destroy_srq only clears the SRQ from its table (mlx5_clear_srq/_uidx), so such a
 * CQE fails its poll, or finds the SRQ that reused the number. */
uint32_t mx5_cq_ring_clean_xrc_srq(struct mx5_cq_ring *cq, uint32_t srqn)
{
	return srqn ? ring_clean(cq, 0, srqn, NULL) : 0;
}
