/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What the queue objects share: the queue-buffer allocation, the CREATE_CQ/QP/SRQ
 * command, the one destroy of CQs, QPs and SRQs.  What teardown and the health watch do
 * to every object: destroy in dependency order (QPs, SRQs, CQs, MKeys, PDs: an object
 * before what it refers to), or mark every queue flushed when the device died. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw/mlx5/mx5_objects.h"

int mx5_qbuf_alloc(struct mx5_device *dev, size_t bytes, struct mx5_qbuf *q, const char *what)
{
	memset(q, 0, sizeof(*q));
	int rc = mx5_refuse_fork_child(dev);
	if (rc)
		return rc;
	size_t hp = dev->host_page;
	q->buf_bytes = (bytes + hp - 1) & ~(hp - 1);
	/* doorbell record: 64 bytes in its own cache line after the ring (PRM: dbr_addr
	 * 8-byte aligned; a whole line keeps it away from ring stores) */
	size_t total = q->buf_bytes + hp;
	rc = shim_dma_alloc(dev->shim, total, hp, &q->dma);
	if (rc)
		return mx5_fail(dev, rc, "%s: no DMA memory for %zu bytes of queue", what, bytes);
	memset(q->dma.va, 0, total);
	q->dbrec = (uint8_t *)q->dma.va + q->buf_bytes;
	q->dbrec_iova = q->dma.iova + q->buf_bytes;
	return 0;
}

void mx5_qbuf_free(struct mx5_device *dev, struct mx5_qbuf *q)
{
	if (q->dma.va)
		shim_dma_free(dev->shim, &q->dma);
	memset(q, 0, sizeof(*q));
}

void mx5_qbuf_pas(const struct mx5_device *dev, const struct mx5_qbuf *q, uint8_t *pas)
{
	size_t n = mx5_qbuf_npas(dev, q);
	for (size_t i = 0; i < n; i++) {
		uint64_t be = htobe64(q->dma.iova + i * dev->host_page);
		memcpy(pas + i * 8, &be, 8);
	}
}

/* The command opcode, its input and output layouts, the context's and the number's names. */
#define MX5_CREATE_CMD(op, in, ctx, out, num)                                                   \
	{ PRM_CMD_OP_##op, PRM_SIZE(in), PRM_OFF(in, ctx), PRM_OFF(in, pas), PRM_OFF(out, num), \
	  PRM_WIDTH(out, num) }
const struct mx5_create_cmd mx5_create_cq_cmd =
	MX5_CREATE_CMD(CREATE_CQ, create_cq_in, cq_context, create_cq_out, cqn);
const struct mx5_create_cmd mx5_create_qp_cmd =
	MX5_CREATE_CMD(CREATE_QP, create_qp_in, qpc, create_qp_out, qpn);
/* CREATE_RMP: the page list follows the wq inside the rmpc (PRM rmpc.wq.pas). */
const struct mx5_create_cmd mx5_create_rmp_cmd = {
	PRM_CMD_OP_CREATE_RMP, PRM_SIZE(create_rmp_in), PRM_OFF(create_rmp_in, ctx),
	PRM_OFF(create_rmp_in, ctx) + PRM_OFF(rmpc, wq) + PRM_OFF(wq, pas),
	PRM_OFF(create_rmp_out, rmpn), PRM_WIDTH(create_rmp_out, rmpn)
};

/* All three answers have the same size (create_cq_out, create_qp_out, create_rmp_out). */
_Static_assert(PRM_SIZE(create_cq_out) == PRM_SIZE(create_qp_out) &&
	       PRM_SIZE(create_rmp_out) == PRM_SIZE(create_qp_out), "CREATE_* answer sizes differ");
int mx5_create_queue(struct mx5_device *dev, const struct mx5_create_cmd *cmd, const struct mx5_qbuf *q,
		     const struct mx5_ctx_field *ctx, size_t nctx, uint32_t *num)
{
	size_t inlen = cmd->in_bytes + mx5_qbuf_npas(dev, q) * 8;
	uint8_t *in = calloc(1, inlen), out[PRM_SIZE(create_qp_out)];
	if (!in)
		return mx5_fail(dev, -ENOMEM, "%s: out of memory", prm_opcode_name(cmd->opcode));
	PRM_SET(cmd_in, in, opcode, cmd->opcode);
	uint8_t *c = in + cmd->ctx_bit_off / 8;
	for (size_t i = 0; i < nctx; i++)
		prm_bits_set(c, ctx[i].bit_off, ctx[i].width, ctx[i].value);
	mx5_qbuf_pas(dev, q, in + cmd->pas_bit_off / 8);
	int rc = mx5_exec(dev, in, inlen, out, sizeof(out));
	free(in);
	if (!rc)
		*num = (uint32_t)prm_bits_get(out, cmd->num_bit_off, cmd->num_width);
	return rc;
}

/* A CQ, QP or SRQ, for the destroy they share (mx5_queue_destroy). */
struct mx5_queue {
	enum { MX5_QUEUE_CQ, MX5_QUEUE_QP, MX5_QUEUE_SRQ } kind;
	union {
		struct mx5_cq *cq;
		struct mx5_qp *qp;
		struct mx5_srq *srq;
	};
};

/* The three inputs are alike (PRM destroy_cq_in, destroy_qp_in, destroy_rmp_in): the
 * cmd_in header, then the object's number; only the number's field name differs. */
_Static_assert(PRM_SIZE(destroy_cq_in) == PRM_SIZE(destroy_qp_in) &&
	       PRM_SIZE(destroy_rmp_in) == PRM_SIZE(destroy_qp_in) &&
	       PRM_SIZE(destroy_cq_out) == PRM_SIZE(destroy_qp_out) &&
	       PRM_SIZE(destroy_rmp_out) == PRM_SIZE(destroy_qp_out), "DESTROY_* sizes differ");

/* DESTROY_CQ, DESTROY_QP or DESTROY_RMP, then what the queue holds on the host
 * (mx5_cq_release, ...).  A CQ or SRQ that queues still use is refused (EBUSY).  Forced
 * (mx5_objects_destroy_all): the host side goes even when the device refuses.  After a
 * fatal error the device holds no objects any more (mx5_objects_flush), so there is no
 * command to send, only memory to free. */
static int mx5_queue_destroy(struct mx5_queue q, bool forced)
{
	static const struct {
		uint16_t opcode;
		const char *name, *users;
	} kinds[] = {
		[MX5_QUEUE_CQ] = { PRM_CMD_OP_DESTROY_CQ, "CQ", "queues" },
		[MX5_QUEUE_QP] = { PRM_CMD_OP_DESTROY_QP, "QP", "" },
		/* an SRQ is an RMP at ISSI 1 (srq.c) */
		[MX5_QUEUE_SRQ] = { PRM_CMD_OP_DESTROY_RMP, "SRQ", "QPs" },
	};
	uint8_t in[PRM_SIZE(destroy_qp_in)] = { 0 }, o[PRM_SIZE(destroy_qp_out)];
	struct mx5_device *dev = NULL;
	uint32_t num = 0, users = 0;
	switch (q.kind) {
	case MX5_QUEUE_CQ: dev = q.cq->dev, num = q.cq->cqn, users = q.cq->refs; break;
	case MX5_QUEUE_QP: dev = q.qp->dev, num = q.qp->qpn; break;
	case MX5_QUEUE_SRQ: dev = q.srq->dev, num = q.srq->srqn, users = q.srq->refs; break;
	}
	if (users && !forced)
		return mx5_fail(dev, -EBUSY, "%s: %s 0x%x still used by %u %s",
				prm_opcode_name(kinds[q.kind].opcode), kinds[q.kind].name, num, users,
				kinds[q.kind].users);
	/* A child of fork() may not undo its parent's queue (mx5_exec refuses its commands,
	 * ibv_fork_init(3)); with no command to send on a fatal device it would otherwise
	 * free the parent's memory in its copy and wait on the parent's event counts. */
	if (!forced && mx5_refuse_fork_child(dev))
		return -EPERM;
	int rc = 0;
	if (dev->health == MX5_HEALTH_OK) {
		switch (q.kind) {
		case MX5_QUEUE_CQ: PRM_SET(destroy_cq_in, in, cqn, num); break;
		case MX5_QUEUE_QP: PRM_SET(destroy_qp_in, in, qpn, num); break;
		case MX5_QUEUE_SRQ: PRM_SET(destroy_rmp_in, in, rmpn, num); break;
		}
		PRM_SET(cmd_in, in, opcode, kinds[q.kind].opcode);
		/* an XRC SRQ goes with DESTROY_XRC_SRQ, its number where rmpn sits */
		_Static_assert(PRM_SIZE(destroy_xrc_srq_in) == PRM_SIZE(destroy_rmp_in) &&
			       (unsigned)PRM_OFF(destroy_xrc_srq_in, xrc_srqn) == (unsigned)PRM_OFF(destroy_rmp_in, rmpn),
			       "destroy_xrc_srq_in != destroy_rmp_in");
		if (q.kind == MX5_QUEUE_SRQ && q.srq->xrcd)
			PRM_SET(cmd_in, in, opcode, PRM_CMD_OP_DESTROY_XRC_SRQ);
		rc = mx5_exec(dev, in, sizeof(in), o, sizeof(o));
	}
	if (rc && !forced)
		return rc;
	switch (q.kind) {
	case MX5_QUEUE_CQ: mx5_cq_release(q.cq); break;
	case MX5_QUEUE_QP: mx5_qp_release(q.qp); break;
	case MX5_QUEUE_SRQ: mx5_srq_release(q.srq); break;
	}
	return 0;
}

int mx5_cq_destroy(struct mx5_cq *cq)
{
	return cq ? mx5_queue_destroy((struct mx5_queue){ MX5_QUEUE_CQ, .cq = cq }, false) : -EINVAL;
}

int mx5_qp_destroy(struct mx5_qp *qp)
{
	return qp ? mx5_queue_destroy((struct mx5_queue){ MX5_QUEUE_QP, .qp = qp }, false) : -EINVAL;
}

int mx5_srq_destroy(struct mx5_srq *srq)
{
	return srq ? mx5_queue_destroy((struct mx5_queue){ MX5_QUEUE_SRQ, .srq = srq }, false) : -EINVAL;
}

void mx5_objects_destroy_all(struct mx5_device *dev)
{
	while (!plat_list_empty(&dev->qps))
		mx5_queue_destroy((struct mx5_queue){ MX5_QUEUE_QP,
			.qp = plat_container_of(dev->qps.next, struct mx5_qp, link) }, true);
	while (!plat_list_empty(&dev->srqs))
		mx5_queue_destroy((struct mx5_queue){ MX5_QUEUE_SRQ,
			.srq = plat_container_of(dev->srqs.next, struct mx5_srq, link) }, true);
	while (!plat_list_empty(&dev->cqs))
		mx5_queue_destroy((struct mx5_queue){ MX5_QUEUE_CQ,
			.cq = plat_container_of(dev->cqs.next, struct mx5_cq, link) }, true);
	mx5_xrcds_destroy_all(dev);
	while (!plat_list_empty(&dev->mrs))
		mx5_mr_destroy_forced(plat_container_of(dev->mrs.next, struct mx5_mr, link));
	while (!plat_list_empty(&dev->pds)) {
		struct mx5_pd *pd = plat_container_of(dev->pds.next, struct mx5_pd, link);
		pd->refs = 0;
		if (mx5_pd_free(pd)) {
			/* the device refused: forget it anyway, the HCA teardown frees it */
			plat_list_del(&pd->link);
			free(pd);
		}
	}
}

void mx5_objects_flush(struct mx5_device *dev)
{
	struct plat_list *l;

	plat_list_for_each(l, &dev->qps) {
		struct mx5_qp *qp = plat_container_of(l, struct mx5_qp, link);
		qp->flushed = true;
		qp->state = MX5_QPS_ERR;
	}
	plat_list_for_each(l, &dev->srqs)
		plat_container_of(l, struct mx5_srq, link)->flushed = true;
	/* Polling each CQ now returns the CQEs already written, then a WR_FLUSH_ERR
	 * completion for every outstanding WQE (poll.h mx5_cq_flush_one).  The device will
	 * raise no completion event again, so wake whoever waits on one (Linux mlx5_ib does
	 * the same on an internal error), and let them poll the flush. */
	plat_list_for_each(l, &dev->cqs) {
		struct mx5_cq *cq = plat_container_of(l, struct mx5_cq, link);
		cq->flushed = true;
		mx5_cq_ring_start_flush(&cq->ring);
		if (cq->comp_fn)
			cq->comp_fn(cq->comp_ctx, cq);
	}
}
