/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Shared receive queues (PRM CREATE_SRQ 0x700, ARM_RQ 0x703, srqc; DESTROY_SRQ 0x701 is
 * objects.c's).  The WQE ring and its free list are the data path's (sq.h mx5_srq_ring). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw/mlx5/mx5_objects.h"

/* The memory of an SRQ, whether CREATE_SRQ got as far as the device or not. */
static void mx5_srq_free(struct mx5_srq *s)
{
	mx5_qbuf_free(s->dev, &s->q);
	free(s->ring.flush_free);
	free(s->wrid);
	free(s);
}

void mx5_srq_release(struct mx5_srq *s)
{
	s->pd->refs--;
	if (s->cq)
		s->cq->refs--;
	plat_list_del(&s->link);
	mx5_srq_free(s);
}

int mx5_srq_create(struct mx5_pd *pd, struct mx5_cq *cq, const struct mx5_srq_attr *attr,
		   struct mx5_srq **out)
{
	if (!pd || !attr || !out)
		return -EINVAL;
	struct mx5_device *dev = pd->dev;
	*out = NULL;
	if (dev->health != MX5_HEALTH_OK)
		return mx5_fail(dev, -ENODEV, "CREATE_SRQ: device is in fatal error");
	if (!MX5_CAP_GEN(dev, log_max_srq))
		return mx5_fail(dev, -EOPNOTSUPP, "CREATE_SRQ: device has no SRQs (log_max_srq 0)");
	unsigned log_max = (unsigned)MX5_CAP_GEN(dev, log_max_srq_sz);
	uint32_t max_wr = (uint32_t)((1ull << log_max) - 1);
	if (attr->max_wr == 0 || attr->max_wr > max_wr)
		return mx5_fail(dev, -EINVAL, "SRQ depth %u exceeds device limit %u (log_max_srq_sz %u)",
				attr->max_wr, max_wr, log_max);
	uint32_t max_sge = (uint32_t)MX5_CAP_GEN(dev, max_wqe_sz_rq) / 16 - 1;
	if (attr->max_sge > max_sge)
		return mx5_fail(dev, -EINVAL, "SRQ max_sge %u exceeds device limit %u (max_wqe_sz_rq %u)",
				attr->max_sge, max_sge, (unsigned)MX5_CAP_GEN(dev, max_wqe_sz_rq));
	/* one WQE more than asked stays free as the list end (sq.h) */
	unsigned log = plat_ilog2_ceil((uint64_t)attr->max_wr + 1);
	if (log < 1)
		log = 1;
	uint32_t stride = mx5_srq_stride(attr->max_sge ? attr->max_sge : 1);
	struct mx5_srq *s = calloc(1, sizeof(*s));
	if (!s)
		return mx5_fail(dev, -ENOMEM, "CREATE_SRQ: out of memory");
	s->dev = dev;
	s->pd = pd;
	s->cq = cq;
	uint32_t cnt = 1u << log;
	s->wrid = calloc(cnt, sizeof(uint64_t));
	int rc = s->wrid ? mx5_qbuf_alloc(dev, (size_t)cnt * stride, &s->q) : -ENOMEM;
	if (rc) {
		mx5_fail(dev, rc, "CREATE_SRQ: no memory for %u WQEs", cnt);
		goto err;
	}
	rc = mx5_srq_ring_init(&s->ring, s->q.dma.va, cnt, attr->max_sge ? attr->max_sge : 1,
			       s->wrid, s->q.dbrec);
	if (rc) {
		mx5_fail(dev, rc, "CREATE_SRQ: ring of %u WQEs rejected by the data path", cnt);
		goto err;
	}
	s->ring.max_msg = mx5_max_msg((unsigned)MX5_CAP_GEN(dev, log_max_msg));
	/* the bitmap a flush after device fatal needs, allocated now: the poll path that
	 * uses it never allocates */
	s->ring.flush_free = calloc((cnt + 7) / 8, 1);
	if (!s->ring.flush_free) {
		rc = mx5_fail(dev, -ENOMEM, "CREATE_SRQ: out of memory");
		goto err;
	}
	const struct mx5_ctx_field srqc[] = {
		MX5_CTX(srqc, log_srq_size, log),
		/* log_rq_stride counts 16-byte units above 16 (Linux: wqe_shift - 4) */
		MX5_CTX(srqc, log_rq_stride, plat_ilog2_ceil(stride) - 4),
		MX5_CTX(srqc, log_page_size, dev->log_host_page - MX5_FW_PAGE_SHIFT),
		MX5_CTX(srqc, pd, pd->pdn),
		MX5_CTX(srqc, cqn, cq ? cq->cqn : 0),   /* left 0 when none is given */
		MX5_CTX(srqc, lwm, attr->srq_limit),
		MX5_CTX(srqc, dbr_addr, s->q.dbrec_iova),
	};
	rc = mx5_create_queue(dev, &mx5_create_srq_cmd, &s->q, srqc, MX5_NFIELDS(srqc), &s->srqn);
	if (rc)
		goto err;
	s->attr.max_wr = cnt - 1;
	s->attr.max_sge = s->ring.max_sge;
	s->attr.srq_limit = attr->srq_limit;
	pd->refs++;
	if (cq)
		cq->refs++;
	plat_list_add(&dev->srqs, &s->link);
	*out = s;
	return 0;
err:
	mx5_srq_free(s);
	return rc;
}

/* ARM_RQ: raise SRQ_LIMIT when fewer than `limit` WQEs remain. */
int mx5_srq_arm(struct mx5_srq *s, uint32_t limit)
{
	if (!s)
		return -EINVAL;
	if (limit > s->attr.max_wr)
		return mx5_fail(s->dev, -EINVAL, "SRQ limit %u exceeds its depth %u", limit,
				s->attr.max_wr);
	/* arm_rq_in has no table yet: the limit is kept and reported by query; the
	 * device's lwm was programmed at creation. */
	s->attr.srq_limit = limit;
	return 0;
}

uint32_t mx5_srq_num(const struct mx5_srq *s) { return s->srqn; }
void mx5_srq_query(const struct mx5_srq *s, struct mx5_srq_attr *a) { *a = s->attr; }
void *mx5_srq_state(struct mx5_srq *s) { return &s->ring; }
