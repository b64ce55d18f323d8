/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Completion queues: creation (PRM CREATE_CQ 0x400, cqc) and what DESTROY_CQ 0x401 gives
 * back on the host (the command itself: objects.c), completion-event dispatch, arming.
 * Polling is the data path's (poll.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "hw/mlx5/doorbell.h"
#include "hw/mlx5/mx5_objects.h"

#define MX5_CQE_BYTES 64u  /* cqc.cqe_sz 0: 64-byte CQEs */

/* The memory of a CQ, whether CREATE_CQ got as far as the device or not
 * (mx5_wq_table_destroy takes a NULL table). */
static void mx5_cq_free(struct mx5_cq *cq)
{
	mx5_qbuf_free(cq->dev, &cq->q);
	mx5_wq_table_destroy(cq->wqs);
	free(cq->wqs);
	free(cq);
}

void mx5_cq_release(struct mx5_cq *cq)
{
	mx5_cq_index_del(cq->dev, cq);
	plat_list_del(&cq->link);
	mx5_cq_free(cq);
}

int mx5_cq_create(struct mx5_device *dev, const struct mx5_cq_attr *attr, struct mx5_cq **out)
{
	if (!dev || !attr || !out)
		return -EINVAL;
	*out = NULL;
	if (dev->health != MX5_HEALTH_OK)
		return mx5_fail(dev, -ENODEV, "CREATE_CQ: device is in fatal error");
	unsigned log_max = (unsigned)MX5_CAP_GEN(dev, log_max_cq_sz);
	uint32_t limit = (uint32_t)((1ull << log_max) - 1);
	if (attr->cqe == 0)
		return mx5_fail(dev, -EINVAL, "CQ depth 0: at least one entry is needed");
	/* one entry more than asked, rounded to a power of two (the ring needs a spare
	 * entry so that full and empty differ, as rdma-core sizes it) */
	if (attr->cqe > limit)
		return mx5_fail(dev, -EINVAL, "CQ depth %u exceeds device limit %u (log_max_cq_sz %u)",
				attr->cqe, limit, log_max);
	unsigned log = plat_ilog2_ceil((uint64_t)attr->cqe + 1);
	if (log > log_max)
		log = log_max;
	struct mx5_eq *eq;
	int rc = mx5_comp_eq_get(dev, attr->comp_vector, &eq);
	if (rc)
		return rc;

	struct mx5_cq *cq = calloc(1, sizeof(*cq));
	if (!cq)
		return mx5_fail(dev, -ENOMEM, "CREATE_CQ: out of memory");
	cq->dev = dev;
	cq->eq = eq;
	cq->depth = 1u << log;
	cq->comp_fn = attr->comp_fn;
	cq->comp_ctx = attr->comp_ctx;
	cq->wqs = calloc(1, sizeof(*cq->wqs));
	rc = cq->wqs ? mx5_qbuf_alloc(dev, (size_t)cq->depth * MX5_CQE_BYTES, &cq->q, "CREATE_CQ")
		     : mx5_fail(dev, -ENOMEM, "CREATE_CQ: out of memory");
	if (rc)
		goto err;
	/* The ring reads empty before the device knows it (datapath: every CQE invalid). */
	rc = mx5_cq_ring_init(&cq->ring, cq->q.dma.va, cq->depth, 0, cq->q.dbrec, &dev->bar0,
			      dev->uar.bar_off + PRM_UAR_CQ_DOORBELL, cq->wqs);
	if (rc) {
		mx5_fail(dev, rc, "CREATE_CQ: ring of %u CQEs rejected by the data path", cq->depth);
		goto err;
	}
	rc = mx5_cq_index_reserve(dev);
	if (rc) {
		mx5_fail(dev, rc, "CREATE_CQ: out of memory for the CQ index");
		goto err;
	}

	const struct mx5_ctx_field cqc[] = {
		MX5_CTX(cqc, cqe_sz, 0),
		MX5_CTX(cqc, log_cq_size, log),
		MX5_CTX(cqc, uar_page, dev->uar.index),
		MX5_CTX(cqc, c_eqn_or_apu_element, eq->eqn),
		MX5_CTX(cqc, log_page_size, dev->log_host_page - MX5_FW_PAGE_SHIFT),
		MX5_CTX(cqc, dbr_addr, cq->q.dbrec_iova),
	};
	rc = mx5_create_queue(dev, &mx5_create_cq_cmd, &cq->q, cqc, MX5_NFIELDS(cqc), &cq->cqn);
	if (rc)
		goto err;
	cq->ring.cqn = cq->cqn & 0xffffff;
	plat_list_add(&dev->cqs, &cq->link);
	mx5_cq_index_add(dev, cq);
	*out = cq;
	return 0;
err:
	mx5_cq_free(cq);
	return rc;
}

uint32_t mx5_cq_num(const struct mx5_cq *cq) { return cq->cqn; }
uint32_t mx5_cq_depth(const struct mx5_cq *cq) { return cq->depth; }
void *mx5_cq_state(struct mx5_cq *cq) { return &cq->ring; }
int mx5_cq_flushed(const struct mx5_cq *cq) { return cq->flushed; }

int mx5_cq_arm(struct mx5_cq *cq, int solicited_only)
{
	if (!cq)
		return -EINVAL;
	if (cq->flushed)
		return -ENODEV;
	mx5_cq_ring_arm(&cq->ring, solicited_only);
	return 0;
}

/* A COMP EQE named this CQ: advance the arm sequence number and call its handler. */
void mx5_cq_dispatch_comp(struct mx5_device *dev, uint32_t cqn)
{
	struct mx5_cq *cq = mx5_cq_index_find(dev, cqn);
	if (!cq) {
		/* a device daemon's client's CQ, or one destroyed meanwhile */
		if (dev->comp_route)
			dev->comp_route(dev->comp_route_ctx, cqn);
		return;
	}
	mx5_cq_ring_event(&cq->ring);
	if (cq->comp_fn)
		cq->comp_fn(cq->comp_ctx, cq);
}
