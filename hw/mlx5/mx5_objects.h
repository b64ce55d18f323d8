/* The driver's object structures (PD, MKey, CQ, QP, SRQ), shared by the files that
 * create them (pd.c, mr.c, cq_ctrl.c, qp_ctrl.c, srq.c) and teardown (objects.c).
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

struct mx5_srq {
	struct mx5_device *dev;
	struct mx5_pd *pd;
	struct mx5_cq *cq;
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
	enum mx5_qp_state state;
	struct mx5_cq *scq, *rcq;
	struct mx5_srq *srq;
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

/* Allocate a queue buffer of `bytes` (rounded to host pages) plus a doorbell record. */
int mx5_qbuf_alloc(struct mx5_device *dev, size_t bytes, struct mx5_qbuf *q);
void mx5_qbuf_free(struct mx5_device *dev, struct mx5_qbuf *q);
/* Write the pas list (one host page per entry) of a qbuf. */
void mx5_qbuf_pas(const struct mx5_device *dev, const struct mx5_qbuf *q, uint8_t *pas);
static inline size_t mx5_qbuf_npas(const struct mx5_device *dev, const struct mx5_qbuf *q)
{
	return q->buf_bytes / dev->host_page;
}

/* The input of CREATE_CQ, CREATE_QP or CREATE_SRQ (opcode): `fixed` bytes, the
 * command's PRM_SIZE, then 8 bytes per host page of q for the open-ended pas array at
 * its end; zeroed, opcode set, its length in *inlen.  NULL when out of memory, the
 * device's message naming the command (objects.c). */
uint8_t *mx5_create_in(struct mx5_device *dev, uint16_t opcode, size_t fixed, const struct mx5_qbuf *q,
		       size_t *inlen);
/* Run that input, its page list written at pas first, then free it: mx5_exec's answer. */
int mx5_create_exec(struct mx5_device *dev, const struct mx5_qbuf *q, uint8_t *in, uint8_t *pas, size_t inlen,
		    void *out, size_t outlen);

/* DESTROY_CQ, DESTROY_QP or DESTROY_SRQ (opcode) of object number num (objects.c). */
int mx5_destroy_cmd(struct mx5_device *dev, uint16_t opcode, uint32_t num);

/* Per-type teardown used by objects.c. */
void mx5_qp_destroy_forced(struct mx5_qp *qp);
void mx5_srq_destroy_forced(struct mx5_srq *srq);
void mx5_cq_destroy_forced(struct mx5_cq *cq);
void mx5_mr_destroy_forced(struct mx5_mr *mr);

/* cq_index.c: CQ number -> CQ for completion events. */
int mx5_cq_index_reserve(struct mx5_device *dev);   /* before CREATE_CQ: -ENOMEM or 0 */
void mx5_cq_index_add(struct mx5_device *dev, struct mx5_cq *cq);
void mx5_cq_index_del(struct mx5_device *dev, struct mx5_cq *cq);
struct mx5_cq *mx5_cq_index_find(const struct mx5_device *dev, uint32_t cqn);
void mx5_cq_index_free(struct mx5_device *dev);

#endif
