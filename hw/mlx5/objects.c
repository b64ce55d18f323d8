/* What teardown and the health watch do to every object: destroy in dependency order
 * (QPs, SRQs, CQs, MKeys, PDs: an object before what it refers to), or mark every
 * queue flushed when the device died, and the shared queue-buffer allocation. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw/mlx5/mx5_objects.h"

int mx5_qbuf_alloc(struct mx5_device *dev, size_t bytes, struct mx5_qbuf *q)
{
	memset(q, 0, sizeof(*q));
	size_t hp = dev->host_page;
	q->buf_bytes = (bytes + hp - 1) & ~(hp - 1);
	/* doorbell record: 64 bytes in its own cache line after the ring (PRM: dbr_addr
	 * 8-byte aligned; a whole line keeps it away from ring stores) */
	size_t total = q->buf_bytes + hp;
	int rc = shim_dma_alloc(dev->shim, total, hp, &q->dma);
	if (rc)
		return rc;
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

uint8_t *mx5_create_in(struct mx5_device *dev, uint16_t opcode, size_t fixed, const struct mx5_qbuf *q,
		       size_t *inlen)
{
	*inlen = fixed + mx5_qbuf_npas(dev, q) * 8;
	uint8_t *in = calloc(1, *inlen);
	if (!in) {
		mx5_fail(dev, -ENOMEM, "%s: out of memory", prm_opcode_name(opcode));
		return NULL;
	}
	PRM_SET(cmd_in, in, opcode, opcode);
	return in;
}

int mx5_create_exec(struct mx5_device *dev, const struct mx5_qbuf *q, uint8_t *in, uint8_t *pas, size_t inlen,
		    void *out, size_t outlen)
{
	mx5_qbuf_pas(dev, q, pas);
	int rc = mx5_exec(dev, in, inlen, out, outlen);
	free(in);
	return rc;
}

/* The three inputs are alike (PRM destroy_cq_in, destroy_qp_in, destroy_srq_in): the
 * cmd_in header, then the object's number; only the number's field name differs.
 * After a fatal error the device holds no objects any more (mx5_objects_flush), so
 * there is nothing to send and the caller only frees memory. */
_Static_assert(PRM_SIZE(destroy_cq_in) == PRM_SIZE(destroy_qp_in) &&
	       PRM_SIZE(destroy_srq_in) == PRM_SIZE(destroy_qp_in) &&
	       PRM_SIZE(destroy_cq_out) == PRM_SIZE(destroy_qp_out) &&
	       PRM_SIZE(destroy_srq_out) == PRM_SIZE(destroy_qp_out), "DESTROY_* sizes differ");
int mx5_destroy_cmd(struct mx5_device *dev, uint16_t opcode, uint32_t num)
{
	if (dev->health != MX5_HEALTH_OK)
		return 0;
	uint8_t in[PRM_SIZE(destroy_qp_in)] = { 0 }, o[PRM_SIZE(destroy_qp_out)];
	switch (opcode) {
	case PRM_CMD_OP_DESTROY_CQ: PRM_SET(destroy_cq_in, in, cqn, num); break;
	case PRM_CMD_OP_DESTROY_QP: PRM_SET(destroy_qp_in, in, qpn, num); break;
	case PRM_CMD_OP_DESTROY_SRQ: PRM_SET(destroy_srq_in, in, srqn, num); break;
	default: return -EINVAL;
	}
	PRM_SET(cmd_in, in, opcode, opcode);
	return mx5_exec(dev, in, sizeof(in), o, sizeof(o));
}

void mx5_objects_destroy_all(struct mx5_device *dev)
{
	while (!plat_list_empty(&dev->qps))
		mx5_qp_destroy_forced(plat_container_of(dev->qps.next, struct mx5_qp, link));
	while (!plat_list_empty(&dev->srqs))
		mx5_srq_destroy_forced(plat_container_of(dev->srqs.next, struct mx5_srq, link));
	while (!plat_list_empty(&dev->cqs))
		mx5_cq_destroy_forced(plat_container_of(dev->cqs.next, struct mx5_cq, link));
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
