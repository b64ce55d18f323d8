/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Work-queue state of the data path: the send queue, the receive queue and the shared
 * receive queue, as plain memory (docs/architecture.md, "The data path").
 *
 * The control plane (QP/SRQ creation in hw/mlx5) allocates the queue buffers, doorbell
 * records and wr_id tables, then calls mx5_sq_init / mx5_rq_init / mx5_srq_ring_init
 * (datapath.c) which check the geometry once, so that the hot path (wqe.h, doorbell.h,
 * poll.h) never has to: no allocation, no syscalls, no MMIO reads.
 *
 * Each queue carries its own lock (hw/platform/thread.h plat_spinlock), as rdma-core's
 * mlx5 does (providers/mlx5/mlx5.h: mlx5_wq.lock, mlx5_srq.lock, mlx5_cq.lock): the
 * posting entry points of the verbs layer take the queue's, the poll path takes the
 * CQ's and, for an SRQ completion, the SRQ's inside it (lock order: CQ, then SQ, RQ or
 * SRQ).  The inline builders here take none themselves, so a caller that owns a queue
 * outright (benchmarks, the UMR QP under the device lock) pays nothing.
 * mx5_sq_init and mx5_rq_init, which a QP reset calls again, leave the locks alone:
 * the control plane makes them, locking, when it creates the QP.  The SRQ and
 * CQ ring inits, called once, init theirs as locking.  The verbs layer then chooses
 * with plat_spin_init (single = 1 for the single-thread hints: lock and unlock become
 * one test of a flag).
 * Fields one side writes and the other reads under a different lock (tail, head) are
 * read and written with relaxed atomics: plain moves on x86-64 and arm64.
 *
 * Counters are free-running 32-bit values; the PRM fields they feed (wqe_index, the
 * doorbell record counters, wqe_counter in CQEs) take their low 16 bits.
 */
#ifndef UVERBS_HW_MLX5_SQ_H
#define UVERBS_HW_MLX5_SQ_H

#include <stddef.h>
#include <stdint.h>

#include "hw/platform/thread.h"
#include "hw/shim/shim.h"

/* Hot-path functions are forced inline: the compiler's size heuristics otherwise leave
 * the WQE builder out of line, and a call with its register saves costs more than the
 * work it does. */
#define MX5_HOT static inline __attribute__((always_inline))

/* PRM "Send WQE": a WQE is made of 64-byte basic blocks (BB); ds counts 16-byte units. */
#define MX5_SEND_WQE_BB 64u
#define MX5_SEND_WQE_SHIFT 6u
/* PRM: the ds field is 6 bits, so a send WQE is at most 63 x 16 bytes. */
#define MX5_MAX_WQE_DS 63u
/* lkey of the data segment that ends a short receive scatter list (PRM "Receive WQE";
 * mlx5dv.h MLX5_INVALID_LKEY). */
#define MX5_INVALID_LKEY 0x100u
/* Largest message a queue accepts when nobody gave it the port's: a data segment's
 * byte_count has 31 bits, bit 31 being the inline flag (PRM "Send WQE", wqe_data_seg
 * and wqe_inline_seg), so 2^31 - 1. */
#define MX5_MAX_MSG_DEFAULT 0x7fffffffu
/* Size of the extended UD address vector (wqe_datagram_seg). */
#define MX5_AV_SIZE 48u

struct mx5_sq {
	/* ring */
	uint8_t *buf;             /* wqe_cnt basic blocks */
	uint8_t *qend;            /* buf + wqe_cnt * 64: segments wrap here */
	uint32_t wqe_cnt;         /* basic blocks, power of two, <= 65536 */
	uint32_t cur_post;        /* producer counter in basic blocks */
	uint32_t tail;            /* oldest basic block not yet known complete */
	uint32_t qpn;
	uint32_t max_inline;      /* bytes of inline data one WQE may carry */
	uint32_t max_sge;
	uint32_t is_ud;
	uint32_t is_xrc;          /* XRC initiator: an XRC segment follows ctrl (wqe.h) */
	uint32_t av_offset;       /* offset of the 48-byte AV inside the caller's ibv_ah */
	uint8_t fm_ce_se[8];      /* ctrl byte by send_flags & (FENCE|SIGNALED|SOLICITED) */
	uint8_t op_ds[16];        /* by ibv_wr_opcode: ds of the segments before the data
				   * (ctrl, datagram/raddr/atomic); 0 = not allowed here */
	uint8_t op_seg[16];       /* by ibv_wr_opcode: which of those (wqe.h MX5_SEG_*) */
	/* completion accounting, wqe_cnt entries each, indexed by the WQE's first BB */
	uint64_t *wrid;           /* wr_id of the WQE */
	uint32_t *wqe_next;       /* cur_post after that WQE: where tail goes on its CQE */
	/* doorbell */
	void *dbrec;              /* the QP's doorbell record (qp_dbrec, 8 bytes) */
	const struct shim_bar *bar; /* UAR BAR (hook reported to, offsets relative to it) */
	volatile uint8_t *bf_map; /* bar->wc_base when present, else bar->base */
	uint64_t bf_off;          /* BAR offset of the BlueFlame half to use next */
	uint32_t bf_size;         /* bytes of one half (0: no BlueFlame, doorbells only) */
	uint32_t bf_max;          /* bytes a WQE of any kind may BlueFlame: bf_size, or 0
				   * for MX5_BF_INLINE_ONLY */
	uint8_t bf_inline_only;   /* BlueFlame only WQEs with inline data (MX5_BF_INLINE_ONLY) */
	uint8_t last_inl;         /* the last WQE built carries inline data */
	/* batch between the builders and mx5_sq_ring() */
	uint32_t pending;         /* WQEs built since the last doorbell */
	uint32_t last_bbs;        /* basic blocks of the last WQE built */
	uint8_t *last_ctrl;       /* its control segment */
	uint32_t max_msg;         /* bytes one WR may move (port max_msg_sz, <= 2^31 - 1) */
	struct plat_spinlock lock; /* posters (verbs layer); the poller only to flush */
};

struct mx5_sq_attr {
	void *buf;
	uint32_t wqe_cnt;         /* basic blocks */
	uint32_t qpn;
	uint32_t max_inline;
	uint32_t max_sge;
	int qp_type;              /* enum ibv_qp_type: IBV_QPT_RC, UC, UD, XRC_SEND */
	int sq_sig_all;           /* every WQE requests a CQE */
	uint32_t av_offset;
	uint64_t *wrid;
	uint32_t *wqe_next;
	void *dbrec;
	const struct shim_bar *bar;
	uint64_t bf_off;          /* UAR page offset + 0x800 (+ k * bf_reg_size) */
	uint32_t bf_size;
	int bf_inline_only;       /* mx5_bf_policy MX5_BF_INLINE_ONLY */
	uint32_t max_msg;         /* port max_msg_sz; 0: MX5_MAX_MSG_DEFAULT */
};

struct mx5_rq {
	uint8_t *buf;
	uint32_t wqe_cnt;         /* WQEs, power of two */
	uint32_t wqe_shift;       /* log2 of the WQE stride (16 bytes per data segment) */
	uint32_t max_sge;         /* data segments per WQE = stride / 16 */
	uint32_t head;            /* WQEs posted */
	uint32_t tail;            /* WQEs completed */
	uint64_t *wrid;           /* wqe_cnt entries */
	void *dbrec;              /* qp_dbrec: receive_counter */
	uint32_t max_msg;         /* bytes one receive WR may take (<= 2^31 - 1) */
	struct plat_spinlock lock; /* posters; pollers write tail under the CQ lock */
};

/* Shared receive queue: WQEs are a 16-byte next segment then data segments; free
 * WQEs form a list through next_wqe_index (PRM "SRQ WQE"), from head to tail.  The
 * tail WQE always stays free as the list end. */
struct mx5_srq_ring {
	uint8_t *buf;
	uint32_t wqe_cnt;
	uint32_t wqe_shift;
	uint32_t max_sge;         /* data segments per WQE = stride / 16 - 1 */
	uint32_t head;            /* next free WQE index */
	uint32_t tail;            /* last free WQE index */
	uint32_t counter;         /* WQEs posted (doorbell record) */
	uint64_t *wrid;
	void *dbrec;
	/* Flush after device fatal (cold, poll.h mx5_cq_flush_one): a bitmap of the WQEs
	 * on the free list, wqe_cnt bits the control plane allocates (NULL: the SRQ is not
	 * flushed); rebuilt whenever posts or completions moved the list since. */
	uint8_t *flush_free;
	uint32_t flush_pos;       /* next WQE index the flush looks at */
	uint32_t flush_counter, flush_tail; /* counter and tail when the bitmap was right */
	uint32_t flush_valid;
	uint32_t max_msg;         /* bytes one receive WR may take (<= 2^31 - 1) */
	/* Posters and completions both move the free list: each takes this lock (a
	 * completion inside its CQ's). */
	struct plat_spinlock lock;
};

struct mx5_cq_ring;

/* What a CQE's QPN resolves to (cq.h: mx5_wq_table). */
struct mx5_wq_ref {
	struct mx5_sq *sq;
	struct mx5_rq *rq;        /* NULL when receives come from srq */
	struct mx5_srq_ring *srq;
	/* The CQs the send and the receive side complete on: a flush after device fatal
	 * reports each queue on its own CQ (NULL: not flushed). */
	const struct mx5_cq_ring *scq, *rcq;
};

/* Out-of-line set-up (datapath.c); each returns 0 or -EINVAL naming nothing: the
 * caller's geometry is wrong (not a power of two, too large, a NULL table). */
int mx5_sq_init(struct mx5_sq *sq, const struct mx5_sq_attr *attr);
int mx5_rq_init(struct mx5_rq *rq, void *buf, uint32_t wqe_cnt, uint32_t max_sge,
		uint64_t *wrid, void *dbrec);
int mx5_srq_ring_init(struct mx5_srq_ring *srq, void *buf, uint32_t wqe_cnt,
		      uint32_t max_sge, uint64_t *wrid, void *dbrec);
/* max_msg of a queue from the HCA capability log_max_msg, capped at 2^31 - 1. */
uint32_t mx5_max_msg(unsigned log_max_msg);
/* Receive WQE stride for max_sge data segments (bytes, power of two >= 16). */
uint32_t mx5_rq_stride(uint32_t max_sge);
uint32_t mx5_srq_stride(uint32_t max_sge);

/* Address vector of a UD destination (RoCE), the caller's view; mx5_av_build writes the
 * 48-byte wqe_datagram_seg image the send path copies per WQE. */
struct mx5_av_attr {
	uint8_t dmac[6];
	uint8_t dgid[16];
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t tclass;
	uint32_t flow_label;      /* 20 bits */
	uint16_t udp_sport;       /* RoCE v2 UDP source port (in rlid) */
	uint8_t stat_rate_sl;
};
void mx5_av_build(uint8_t av[MX5_AV_SIZE], const struct mx5_av_attr *attr);

#endif
