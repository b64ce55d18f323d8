/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Completion-queue state of the data path (poll.h, doorbell.h), as plain memory.
 *
 * The control plane (CQ creation in hw/mlx5) allocates the CQE ring (64-byte CQEs) and
 * the doorbell record, calls mx5_cq_ring_init (datapath.c: marks every CQE invalid so a
 * fresh ring reads empty), and registers each QP that completes on this CQ in the
 * QPN -> queues table with mx5_wq_table_set.  Pollers, arming and the control-path
 * clean at QP reset hold the ring's lock (sq.h says who locks what).
 */
#ifndef UVERBS_HW_MLX5_CQ_H
#define UVERBS_HW_MLX5_CQ_H

#include <stdint.h>

#include "hw/mlx5/sq.h"
#include "hw/shim/shim.h"

/* QPN (24 bits) -> queues, two levels of 4096 so that a sparse QPN space costs little;
 * the second level is allocated by mx5_wq_table_set (control plane only). */
#define MX5_WQ_TABLE_SHIFT 12u
#define MX5_WQ_TABLE_SIZE (1u << MX5_WQ_TABLE_SHIFT)

struct mx5_wq_table {
	struct mx5_wq_ref *dir[MX5_WQ_TABLE_SIZE];
};

/* An XRC SRQ completing on a CQ.  Its receive CQEs name the XRC target QP that took
 * the request, a QP this CQ does not know; the CQE's srqn names the SRQ (rdma-core
 * providers/mlx5/cq.c looks the SRQ up by srqn the same way).  The CQ's chain of them
 * is changed under the ring's lock (control plane). */
struct mx5_xrc_ref {
	struct mx5_wq_ref ref;    /* .srq and .rcq only */
	uint32_t srqn;
	struct mx5_xrc_ref *next;
};

struct mx5_cq_ring {
	uint8_t *buf;             /* cqe_cnt entries of 64 bytes */
	uint32_t cqe_cnt;         /* power of two */
	uint32_t log_cqe_cnt;
	uint32_t cons_index;      /* free-running consumer counter */
	uint32_t cqn;
	uint32_t arm_sn;          /* incremented on each completion event (mx5_cq_ring_event) */
	void *dbrec;              /* cq_dbrec, 8 bytes */
	const struct shim_bar *bar; /* UAR BAR */
	uint64_t db_off;          /* BAR offset of the UAR page's CQ doorbell (page + 0x20) */
	struct mx5_wq_table *wqs; /* QPN -> queues of the QPs completing here */
	uint32_t last_qpn;        /* one-entry cache in front of wqs */
	struct mx5_wq_ref *last;
	struct mx5_xrc_ref *xrc;  /* XRC SRQs completing here (usually none) */
	/* Device fatal (cold; docs/architecture.md, "Bring-up, teardown, pages, health": every queue fails with flush errors).
	 * The health watch sets flushing; a poll that then finds no CQE completes the
	 * outstanding WQEs of the queues in wqs with WR_FLUSH_ERR (mx5_cq_flush_one). */
	uint32_t flushing;
	uint32_t flush_qpn;       /* the QPN the flush looks at next */
	struct plat_spinlock lock; /* ibv_poll_cq, ibv_req_notify_cq, mx5_cq_ring_clean */
};

int mx5_cq_ring_init(struct mx5_cq_ring *cq, void *buf, uint32_t cqe_cnt, uint32_t cqn,
		     void *dbrec, const struct shim_bar *bar, uint64_t db_off,
		     struct mx5_wq_table *wqs);

/* The device died: from now on an empty poll flushes (health watch, control plane). */
static inline void mx5_cq_ring_start_flush(struct mx5_cq_ring *cq)
{
	__atomic_store_n(&cq->flushing, 1u, __ATOMIC_RELEASE);
}

/* Completion event for this CQ (EQE seen): the next arm carries the next sequence
 * number, so the device can tell a fresh request from a stale one. */
static inline void mx5_cq_ring_event(struct mx5_cq_ring *cq)
{
	/* the EQ service thread counts, the arming thread reads (doorbell.h) */
	__atomic_fetch_add(&cq->arm_sn, 1u, __ATOMIC_RELAXED);
}

/* Table management (control plane; allocates the second level on first use). */
int mx5_wq_table_set(struct mx5_wq_table *t, uint32_t qpn, struct mx5_wq_ref *ref);
void mx5_wq_table_clear(struct mx5_wq_table *t, uint32_t qpn);
void mx5_wq_table_destroy(struct mx5_wq_table *t);
/* Forget a cached lookup (call after mx5_wq_table_clear for a CQ the QP used). */
static inline void mx5_cq_ring_forget(struct mx5_cq_ring *cq, uint32_t qpn)
{
	plat_spin_lock(&cq->lock);   /* the cache is the pollers' */
	if (cq->last_qpn == qpn)
		cq->last = NULL;
	plat_spin_unlock(&cq->lock);
}

/* QP reset (control plane): remove the QP's CQEs from the ring, giving SRQ WQEs of
 * dropped receive CQEs back to srq (may be NULL); returns how many were removed
 * (datapath.c). */
uint32_t mx5_cq_ring_clean(struct mx5_cq_ring *cq, uint32_t qpn, struct mx5_srq_ring *srq);
/* The receive CQEs of a destroyed XRC SRQ (by the CQE's srqn) taken out of the ring. */
uint32_t mx5_cq_ring_clean_xrc_srq(struct mx5_cq_ring *cq, uint32_t srqn);

static inline struct mx5_wq_ref *mx5_wq_table_get(const struct mx5_wq_table *t, uint32_t qpn)
{
	struct mx5_wq_ref *l2 = t->dir[(qpn >> MX5_WQ_TABLE_SHIFT) & (MX5_WQ_TABLE_SIZE - 1)];
	return l2 ? &l2[qpn & (MX5_WQ_TABLE_SIZE - 1)] : NULL;
}

#endif
