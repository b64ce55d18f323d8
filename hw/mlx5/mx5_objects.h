/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The driver's object structures (PD, MKey, CQ, QP, SRQ), shared by the files that
 * create them (pd.c, mr.c, cq_ctrl.c, qp_ctrl.c, srq.c) and objects.c (the CREATE and
 * DESTROY commands of the queues, teardown).
 * Queue state the data path reads is embedded (cq.h, sq.h), filled at creation. */
#ifndef UVERBS_HW_MLX5_MX5_OBJECTS_H
#define UVERBS_HW_MLX5_MX5_OBJECTS_H

#include "hw/mlx5/cq.h"
#include "hw/mlx5/mx5_internal.h"
#include "hw/mlx5/sq.h"

struct mx5_pd {
	struct mx5_device *dev;
	struct plat_list link;
	uint32_t pdn;
	uint32_t refs;          /* MKeys, QPs and SRQs on this PD */
};

struct mx5_mr {
	struct mx5_device *dev;
	struct mx5_pd *pd;
	struct plat_list link;
	struct shim_pin pin;
	bool pinned;
	uint32_t *parts;        /* direct MKey indexes (more than one: under an indirect one) */
	uint32_t nparts;
	uint32_t top_index;     /* the MKey the keys name (direct, or the indirect KLM one) */
	struct mx5_mr_info info;
};

/* A queue buffer with its doorbell record in the same DMA allocation: the ring
 * (buf_bytes, host pages, listed in pas) then the 64-byte aligned record. */
struct mx5_qbuf {
	struct shim_dma dma;
	size_t buf_bytes;
	void *dbrec;
	uint64_t dbrec_iova;
};

struct mx5_cq {
	struct mx5_device *dev;
	struct plat_list link;
	struct mx5_cq *index_next;     /* chain in dev->cq_index (cq_index.c) */
	struct mx5_eq *eq;
	struct mx5_qbuf q;
	struct mx5_cq_ring ring;       /* datapath state (cq.h) */
	struct mx5_wq_table *wqs;
	uint32_t cqn;
	uint32_t depth;
	uint32_t refs;                 /* QPs and SRQs using it */
	bool flushed;                  /* device fatal: every queue reads as flushed */
	void (*comp_fn)(void *ctx, struct mx5_cq *cq);
	void *comp_ctx;
};

struct mx5_xrcd {
	struct mx5_device *dev;
	struct plat_list link;
	uint32_t xrcdn;
	uint32_t refs;          /* XRC SRQs and XRC QPs in this domain */
};

struct mx5_srq {
	struct mx5_device *dev;
	struct mx5_pd *pd;
	struct mx5_cq *cq;
	struct mx5_xrcd *xrcd;         /* an XRC SRQ's domain (CREATE_XRC_SRQ); NULL: an RMP */
	struct mx5_xrc_ref xref;       /* an XRC SRQ as its CQ's pollers find it (cq.h) */
	struct plat_list link;
	struct mx5_qbuf q;
	struct mx5_srq_ring ring;      /* datapath state (sq.h) */
	uint64_t *wrid;
	uint32_t srqn;
	struct mx5_srq_attr attr;
	uint32_t refs;
	bool flushed;
};

struct mx5_qp {
	struct mx5_device *dev;
	struct mx5_pd *pd;
	struct plat_list link;
	enum mx5_qp_type type;
	bool gsi;                     /* the GSI QP (QP1): qpc.st QP1 in every command */
	enum mx5_qp_state state;
	struct mx5_cq *scq, *rcq;
	struct mx5_srq *srq;
	struct mx5_xrcd *xrcd;         /* XRC_TGT: its domain (held) */
	struct mx5_qbuf q;             /* RQ first, then SQ, in one buffer (PRM "QP buffer") */
	struct mx5_sq sq;              /* datapath state (sq.h) */
	struct mx5_rq rq;
	struct mx5_wq_ref ref;
	uint64_t *sq_wrid, *rq_wrid;
	uint32_t *sq_wqe_next;
	uint32_t qpn;
	uint32_t sq_wqe_cnt, rq_wqe_cnt, rq_stride;
	struct mx5_qp_cap cap;         /* granted */
	struct mx5_qp_attr attr;       /* last values programmed */
	int sq_sig_all;
	bool flushed;
	struct mx5_bf_reg bf;          /* its BlueFlame register (uar.c) */
	bool bf_held;
};

/* Allocate a queue buffer of `bytes` (rounded to host pages) plus a doorbell record;
 * a failure is reported on the device (mx5_fail) for the command `what` names, or is
 * a fork child's refusal (mx5_refuse_fork_child), which keeps its own message. */
int mx5_qbuf_alloc(struct mx5_device *dev, size_t bytes, struct mx5_qbuf *q, const char *what);
void mx5_qbuf_free(struct mx5_device *dev, struct mx5_qbuf *q);
/* Write the pas list (one host page per entry) of a qbuf. */
void mx5_qbuf_pas(const struct mx5_device *dev, const struct mx5_qbuf *q, uint8_t *pas);
static inline size_t mx5_qbuf_npas(const struct mx5_device *dev, const struct mx5_qbuf *q)
{
	return q->buf_bytes / dev->host_page;
}

/* CREATE_CQ, CREATE_QP and CREATE_SRQ have one form (PRM create_cq_in, create_qp_in,
 * create_srq_in; create_*_out): the cmd_in header, the queue's context, the open-ended
 * pas array at the end (8 bytes per host page of the queue buffer); the answer holds
 * the new object's number.  What differs is where those sit. */
struct mx5_create_cmd {
	uint16_t opcode;
	uint32_t in_bytes;                /* PRM_SIZE of the input, pas array excluded */
	uint32_t ctx_bit_off;             /* the context (cqc, qpc, srqc) in the input */
	uint32_t pas_bit_off;             /* the pas array in the input */
	uint32_t num_bit_off, num_width;  /* cqn, qpn or srqn in the output */
};
extern const struct mx5_create_cmd mx5_create_cq_cmd, mx5_create_qp_cmd, mx5_create_rmp_cmd;

/* One context field and the value CREATE_* writes there; MX5_CTX names the field by its
 * layout table row (firmware-cmd/layouts), as PRM_SET would. */
struct mx5_ctx_field {
	uint32_t bit_off, width;
	uint64_t value;
};
#define MX5_CTX(layout, field, v) { PRM_OFF(layout, field), PRM_WIDTH(layout, field), (v) }
/* A field of the wq inside an rmpc (PRM rmpc.wq), for CREATE_RMP. */
#define MX5_CTX_WQ(field, v) { PRM_OFF(rmpc, wq) + PRM_OFF(wq, field), PRM_WIDTH(wq, field), (v) }
/* rmpc.state (PRM; Linux MLX5_RMPC_STATE_RDY) */
#define MX5_RMPC_STATE_RDY 0x1
#define MX5_NFIELDS(a) (sizeof(a) / sizeof((a)[0]))

/* Send cmd for queue buffer q: a zeroed input with its opcode, the nctx fields of ctx
 * set in its context, q's page list in its pas array.  The object's number in *num.
 * 0 or mx5_exec's answer; out of memory is -ENOMEM with the device's message naming
 * the command (objects.c). */
int mx5_create_queue(struct mx5_device *dev, const struct mx5_create_cmd *cmd, const struct mx5_qbuf *q,
		     const struct mx5_ctx_field *ctx, size_t nctx, uint32_t *num);

/* What a queue holds on the host besides the device's copy (its place on the device's
 * list, the counts of what it uses, its memory): given back after its DESTROY_* by
 * objects.c, which destroys CQs, QPs and SRQs. */
void mx5_cq_release(struct mx5_cq *cq);
void mx5_qp_release(struct mx5_qp *qp);
void mx5_srq_release(struct mx5_srq *srq);
/* The device's own XRC objects, made at the first XRC QP as Linux mlx5_ib makes its
 * devr ones at probe (main.c mlx5_ib_dev_res_init: p0, c0, x0, x1, s0): what an XRC
 * QP's context must name although the QP does not use it (xrcd.c). */
struct mx5_xrc_devr {
	struct mx5_pd *p0;
	struct mx5_cq *c0;
	struct mx5_xrcd *x0, *x1;
	struct mx5_srq *s0;           /* an XRC SRQ in x0 on c0 */
};
int mx5_xrc_devr_get(struct mx5_device *dev, struct mx5_xrc_devr **out);
void mx5_xrcds_destroy_all(struct mx5_device *dev);
/* Per-type teardown used by objects.c. */
void mx5_mr_destroy_forced(struct mx5_mr *mr);

/* cq_index.c: CQ number -> CQ for completion events. */
int mx5_cq_index_reserve(struct mx5_device *dev);   /* before CREATE_CQ: -ENOMEM or 0 */
void mx5_cq_index_add(struct mx5_device *dev, struct mx5_cq *cq);
void mx5_cq_index_del(struct mx5_device *dev, struct mx5_cq *cq);
struct mx5_cq *mx5_cq_index_find(const struct mx5_device *dev, uint32_t cqn);
void mx5_cq_index_free(struct mx5_device *dev);

#endif
