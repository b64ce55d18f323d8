/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Completion queues: ibv_create_cq / ibv_create_cq_ex (the extended polling interface
 * start_poll/next_poll/end_poll and read_*), ibv_poll_cq and ibv_req_notify_cq through
 * the data-path headers (hw/mlx5 poll.h, doorbell.h) under the CQ's lock: no syscall.
 * The extended interface holds the lock from a start_poll that found a completion to
 * end_poll, as rdma-core's mlx5 does (providers/mlx5/cq.c mlx5_start_poll). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw/mlx5/doorbell.h"
#include "hw/mlx5/poll.h"
#include "uverbs/uv.h"

/* What the extended poll interface can report from an mlx5 CQE; timestamps, VLAN,
 * flow tags and tag matching are not offered. */
#define UV_WC_EX_OK (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM | \
		     IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | \
		     IBV_WC_EX_WITH_DLID_PATH_BITS)

static inline struct uv_cq *uv_cq_of(struct ibv_cq *cq)
{
	return (struct uv_cq *)(void *)cq;
}
static inline struct uv_cq *uv_cqx_of(struct ibv_cq_ex *cq)
{
	return (struct uv_cq *)(void *)cq;
}

int uv_poll_cq_op(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	if (__builtin_expect(n <= 0, 0))
		return n < 0 ? -EINVAL : 0;
	return mx5_poll_cq_mt(uv_cq_of(cq)->ring, n, wc);   /* under the CQ's lock unless a hint */
}

/* ibv_req_notify_cq(3): an event "upon the addition of a new CQE" (IBTA 11.4.2.2,
 * "the next completion").  A ConnectX armed with a consumer index behind CQEs it has
 * already written interrupts at once for those, so an application that re-arms before
 * polling (perftest in event mode: get event, ack, arm, poll) would be woken by entries
 * it already knows of and fall behind its own completions.  So the arm names the index
 * the next new CQE will take: the consumer counter moved past every CQE software owns
 * (host memory reads only).  A CQE the device writes at that index while the arm is on
 * its way still fires, as it is new.  The device's overrun check reads the doorbell
 * record's consumer counter, which polling keeps, not this arm index. */
static uint32_t uv_cq_next_new(const struct mx5_cq_ring *r)
{
	uint32_t n = r->cons_index;
	for (uint32_t i = 0; i < r->cqe_cnt && mx5_cq_owned(r, n); i++)
		n++;
	return n;
}

int uv_req_notify_cq_op(struct ibv_cq *cq, int solicited)
{
	struct mx5_cq_ring *r = uv_cq_of(cq)->ring;

	plat_spin_lock(&r->lock);   /* cons_index is the pollers' */
	mx5_cq_ring_arm_at(r, solicited, uv_cq_next_new(r));
	plat_spin_unlock(&r->lock);
	return 0;
}

/* ---- extended polling: one CQE decoded into cur, read back field by field ---- */

static int uv_poll_next(struct uv_cq *q)
{
	int r;
	/* a CQE naming no known QP is consumed and skipped (-EIO from mx5_poll_one) */
	while ((r = mx5_poll_one(q->ring, &q->cur)) < 0)
		;
	if (!r)
		return ENOENT;
	q->cqx.status = q->cur.status;
	q->cqx.wr_id = q->cur.wr_id;
	return 0;
}

static int uv_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	struct uv_cq *q = uv_cqx_of(cq);
	if (attr && attr->comp_mask)
		return EINVAL;
	plat_spin_lock(&q->ring->lock);
	int rc = uv_poll_next(q);
	if (rc) {
		/* ibv_start_poll(3): on ENOENT end_poll must not be called */
		mx5_cq_ring_update_ci(q->ring);
		plat_spin_unlock(&q->ring->lock);
	}
	return rc;
}

static int uv_next_poll(struct ibv_cq_ex *cq)
{
	return uv_poll_next(uv_cqx_of(cq));
}

static void uv_end_poll(struct ibv_cq_ex *cq)
{
	struct mx5_cq_ring *r = uv_cqx_of(cq)->ring;

	mx5_cq_ring_update_ci(r);
	plat_spin_unlock(&r->lock);
}

static enum ibv_wc_opcode uv_read_opcode(struct ibv_cq_ex *cq) { return uv_cqx_of(cq)->cur.opcode; }
static uint32_t uv_read_vendor_err(struct ibv_cq_ex *cq) { return uv_cqx_of(cq)->cur.vendor_err; }
static uint32_t uv_read_byte_len(struct ibv_cq_ex *cq) { return uv_cqx_of(cq)->cur.byte_len; }
static __be32 uv_read_imm_data(struct ibv_cq_ex *cq) { return uv_cqx_of(cq)->cur.imm_data; }
static uint32_t uv_read_qp_num(struct ibv_cq_ex *cq) { return uv_cqx_of(cq)->cur.qp_num; }
static uint32_t uv_read_src_qp(struct ibv_cq_ex *cq) { return uv_cqx_of(cq)->cur.src_qp; }
static unsigned int uv_read_wc_flags(struct ibv_cq_ex *cq) { return uv_cqx_of(cq)->cur.wc_flags; }
static uint32_t uv_read_slid(struct ibv_cq_ex *cq) { return uv_cqx_of(cq)->cur.slid; }
static uint8_t uv_read_sl(struct ibv_cq_ex *cq) { return uv_cqx_of(cq)->cur.sl; }
static uint8_t uv_read_dlid_path_bits(struct ibv_cq_ex *cq) { return uv_cqx_of(cq)->cur.dlid_path_bits; }

static struct uv_cq *uv_cq_new(struct ibv_context *c, struct ibv_pd *parent, uint32_t cqe, void *cq_context,
			       struct ibv_comp_channel *channel, uint32_t vector, uint64_t wc_flags,
			       bool single)
{
	struct uv_dev *d = uv_ctx_dev(c);
	if (uv_alloc_type_refused("MLX_CQ_ALLOC_TYPE"))
		return NULL;
	if (!cqe || cqe > d->info.max_cqe || (int)vector < 0 || vector >= d->info.num_comp_vectors) {
		uv_log(UV_LOG_WARN, "ibv_create_cq: cqe %u (max %u), comp_vector %u (device has %u): EINVAL",
		       cqe, d->info.max_cqe, vector, d->info.num_comp_vectors);
		return uv_null(EINVAL);
	}
	if (channel && channel->context != c)
		return uv_null(EINVAL);
	struct uv_cq *q = calloc(1, sizeof(*q));
	if (!q)
		return uv_null(ENOMEM);
	struct mx5_cq_attr a = { .cqe = cqe, .comp_vector = vector, .comp_fn = uv_cq_comp_event,
				 .comp_ctx = q };
	pthread_mutex_lock(&d->lock);
	int rc = mx5_cq_create(d->mx5, &a, &q->m);
	if (!rc) {
		rc = uv_dev_watch_eq(d, vector);
		if (rc)
			mx5_cq_destroy(q->m);
	}
	if (rc)
		return uv_create_fail(d, rc, "ibv_create_cq", q);
	q->ring = mx5_cq_state(q->m);
	plat_spin_init(&q->ring->lock, single);
	q->ctx = uv_ctx(c);
	q->next = q->ctx->cqs;
	q->ctx->cqs = q;
	q->parent = uv_parent_hold(parent);
	if (channel)
		channel->refcnt++;
	pthread_mutex_unlock(&d->lock);

	struct ibv_cq_ex *x = &q->cqx;
	x->context = c;
	x->channel = channel;
	x->cq_context = cq_context;
	x->handle = mx5_cq_num(q->m);
	x->cqe = (int)mx5_cq_depth(q->m) - 1;
	pthread_mutex_init(&x->mutex, NULL);
	pthread_cond_init(&x->cond, NULL);
	q->wc_flags = wc_flags;
	x->start_poll = uv_start_poll;
	x->next_poll = uv_next_poll;
	x->end_poll = uv_end_poll;
	x->read_opcode = uv_read_opcode;
	x->read_vendor_err = uv_read_vendor_err;
	x->read_byte_len = uv_read_byte_len;
	x->read_imm_data = uv_read_imm_data;
	x->read_qp_num = uv_read_qp_num;
	x->read_src_qp = uv_read_src_qp;
	x->read_wc_flags = uv_read_wc_flags;
	x->read_slid = uv_read_slid;
	x->read_sl = uv_read_sl;
	x->read_dlid_path_bits = uv_read_dlid_path_bits;
	return q;
}

UV_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
				       struct ibv_comp_channel *channel, int comp_vector)
{
	if (!context || cqe <= 0 || comp_vector < 0)
		return uv_null(EINVAL);
	struct uv_cq *q = uv_cq_new(context, NULL, (uint32_t)cqe, cq_context, channel,
				    (uint32_t)comp_vector, 0, uv_single_threaded(NULL));
	return q ? (struct ibv_cq *)&q->cqx : NULL;
}

struct ibv_cq_ex *uv_create_cq_ex_op(struct ibv_context *c, struct ibv_cq_init_attr_ex *a)
{
	if (!c || !a)
		return uv_null(EINVAL);
	if (a->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD)) {
		uv_unsupported("ibv_create_cq_ex: comp_mask bits");
		return NULL;
	}
	if (a->wc_flags & ~(uint64_t)UV_WC_EX_OK) {
		uv_unsupported("ibv_create_cq_ex: completion timestamps, VLAN, flow tag or TM fields");
		return NULL;
	}
	if ((a->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (a->flags & ~(uint32_t)(IBV_CREATE_CQ_ATTR_SINGLE_THREADED | IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN))) {
		return uv_null(EINVAL);
	}
	struct ibv_pd *pd = (a->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) ? a->parent_domain : NULL;
	if (pd && (pd->context != c || !uv_from(pd, struct uv_pd, pd)->base))
		return uv_null(EINVAL);   /* ibv_create_cq_ex(3): parent_domain must be one */
	bool single = uv_single_threaded(pd) ||
		      ((a->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
		       (a->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED));
	struct uv_cq *q = uv_cq_new(c, pd, a->cqe, a->cq_context, a->channel, a->comp_vector, a->wc_flags,
				    single);
	return q ? &q->cqx : NULL;
}

static int uv_destroy_cq_body(struct ibv_cq *cq)
{
	if (!cq)
		return EINVAL;
	struct uv_cq *q = uv_cq_of(cq);
	int rc = uv_queue_destroy((struct uv_queue){ UV_QUEUE_CQ, .cq = q }, UV_HANDLE(cq, async_events_completed));
	if (rc)
		return rc;   /* EBUSY while QPs use it */
	free(q);
	return 0;
}

UV_EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
	return uv_errno(uv_destroy_cq_body(cq));
}

static int uv_resize_cq_body(struct ibv_cq *cq, int cqe)
{
	(void)cq; (void)cqe;
	uv_unsupported("CQ resize (ibv_resize_cq)");
	return EOPNOTSUPP;
}

UV_EXPORT int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	return uv_errno(uv_resize_cq_body(cq, cqe));
}
