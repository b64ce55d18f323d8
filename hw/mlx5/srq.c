/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Shared receive queues.  The function runs ISSI 1 (init.c mx5_set_issi), where a plain
 * SRQ is a receive memory pool: CREATE_RMP 0x90c, MODIFY_RMP 0x90d (the limit),
 * QUERY_RMP 0x90f, DESTROY_RMP 0x90e (objects.c's), rmpc holding a linked-list wq.  This
 * follows Linux drivers/infiniband/hw/mlx5/srq_cmd.c: create_srq_split / arm_srq_split /
 * query_srq_split / destroy_srq_split use CREATE_SRQ/ARM_RQ only when the function runs
 * ISSI 0, and create_rmp_cmd / arm_rmp_cmd / query_rmp_cmd / destroy_rmp_cmd otherwise
 * (Linux commit 01949d0109ee: at ISSI > 0 "plain SRQs are based on RMP").  The WQE ring
 * and its free list are the data path's (sq.h mx5_srq_ring). */
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

static int mx5_srq_make(struct mx5_pd *pd, struct mx5_xrcd *xrcd, struct mx5_cq *cq,
			const struct mx5_srq_attr *attr, struct mx5_srq **out);

int mx5_srq_create(struct mx5_pd *pd, struct mx5_cq *cq, const struct mx5_srq_attr *attr,
		   struct mx5_srq **out)
{
	return mx5_srq_make(pd, NULL, cq, attr, out);
}

int mx5_xrc_srq_create(struct mx5_pd *pd, struct mx5_xrcd *xrcd, struct mx5_cq *cq,
		       const struct mx5_srq_attr *attr, struct mx5_srq **out)
{
	if (pd && !xrcd)
		return mx5_fail(pd->dev, -EINVAL, "CREATE_XRC_SRQ: no XRC domain");
	return mx5_srq_make(pd, xrcd, cq, attr, out);
}

void mx5_srq_release(struct mx5_srq *s)
{
	if (s->xrcd) {
		struct mx5_xrc_ref **p;
		/* its CQEs not yet polled go, as a destroyed QP's do, and its pollers stop
		 * finding it (datapath.c mx5_cq_ring_clean_xrc_srq) */
		(void)mx5_cq_ring_clean_xrc_srq(&s->cq->ring, s->srqn);
		plat_spin_lock(&s->cq->ring.lock);
		for (p = &s->cq->ring.xrc; *p; p = &(*p)->next) {
			if (*p == &s->xref) {
				*p = s->xref.next;
				break;
			}
		}
		plat_spin_unlock(&s->cq->ring.lock);
		s->xrcd->refs--;
	}
	s->pd->refs--;
	if (s->cq)
		s->cq->refs--;
	plat_list_del(&s->link);
	mx5_srq_free(s);
}

/* CREATE_XRC_SRQ (PRM "XRC SRQ"): the page list follows the context, the number is
 * in xrc_srqn (Linux srq_cmd.c create_xrc_srq_cmd). */
static const struct mx5_create_cmd mx5_create_xrc_srq_cmd = {
	PRM_CMD_OP_CREATE_XRC_SRQ, PRM_SIZE(create_xrc_srq_in), PRM_OFF(create_xrc_srq_in, xrc_srq_context_entry),
	PRM_OFF(create_xrc_srq_in, pas), PRM_OFF(create_xrc_srq_out, xrc_srqn), PRM_WIDTH(create_xrc_srq_out, xrc_srqn)
};
_Static_assert(PRM_SIZE(create_xrc_srq_out) == PRM_SIZE(create_qp_out), "create_xrc_srq_out size");

static int mx5_srq_make(struct mx5_pd *pd, struct mx5_xrcd *xrcd, struct mx5_cq *cq,
			const struct mx5_srq_attr *attr, struct mx5_srq **out)
{
	if (!pd || !attr || !out)
		return -EINVAL;
	struct mx5_device *dev = pd->dev;
	*out = NULL;
	if (xrcd && (xrcd->dev != dev || !cq || cq->dev != dev))
		return mx5_fail(dev, -EINVAL, "CREATE_XRC_SRQ: %s", !cq ? "an XRC SRQ needs a CQ"
				: "XRC domain, CQ and PD are not of one device");
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
	int rc = s->wrid ? mx5_qbuf_alloc(dev, (size_t)cnt * stride, &s->q, "CREATE_SRQ")
			 : mx5_fail(dev, -ENOMEM, "CREATE_SRQ: out of memory");
	if (rc)
		goto err;
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
	/* rmpc as Linux create_rmp_cmd fills it: state RDY, and the wq (set_wq) with the
	 * WQE stride (log_wq_stride in bytes: Linux wqe_shift + 4), the page size, the
	 * number of WQEs, pd and doorbell record; wq_type 0 is the linked list whose next
	 * segments the data path keeps (sq.h).  No cqn: an RMP reports through the CQ of
	 * the QP that consumes it.  No lwm: ibv_create_srq's limit is not armed
	 * (ibv_create_srq(3): "irrelevant"; rdma-core's mlx5 arms only in modify); the
	 * device arms it on MODIFY_RMP (mx5_srq_arm). */
	const struct mx5_ctx_field rmpc[] = {
		MX5_CTX(rmpc, state, MX5_RMPC_STATE_RDY),
		MX5_CTX_WQ(log_wq_stride, plat_ilog2_ceil(stride)),
		MX5_CTX_WQ(log_wq_pg_sz, dev->log_host_page - MX5_FW_PAGE_SHIFT),
		MX5_CTX_WQ(log_wq_sz, log),
		MX5_CTX_WQ(pd, pd->pdn),
		MX5_CTX_WQ(dbr_addr, s->q.dbrec_iova),
	};
	/* xrc_srqc as Linux create_xrc_srq_cmd / set_srqc fill it: the WQE stride as
	 * log2(bytes) - 4, the ring's size, page size, PD, doorbell record, the XRC
	 * domain and the CQ its completions go to; user_index the "none" value Linux
	 * gives without CQE version 1 (MLX5_IB_DEFAULT_UIDX). */
	const struct mx5_ctx_field xrc_srqc[] = {
		MX5_CTX(xrc_srqc, log_xrc_srq_size, log),
		MX5_CTX(xrc_srqc, log_rq_stride, plat_ilog2_ceil(stride) - 4),
		MX5_CTX(xrc_srqc, xrcd, xrcd ? xrcd->xrcdn : 0),
		MX5_CTX(xrc_srqc, cqn, cq ? cq->cqn : 0),
		MX5_CTX(xrc_srqc, log_page_size, dev->log_host_page - MX5_FW_PAGE_SHIFT),
		MX5_CTX(xrc_srqc, user_index, 0xffffff),
		MX5_CTX(xrc_srqc, pd, pd->pdn),
		MX5_CTX(xrc_srqc, db_record_addr_h, s->q.dbrec_iova >> 32),
		MX5_CTX(xrc_srqc, db_record_addr_l, (s->q.dbrec_iova & 0xffffffffu) >> 2),
	};
	if (xrcd)
		rc = mx5_create_queue(dev, &mx5_create_xrc_srq_cmd, &s->q, xrc_srqc, MX5_NFIELDS(xrc_srqc), &s->srqn);
	else
		rc = mx5_create_queue(dev, &mx5_create_rmp_cmd, &s->q, rmpc, MX5_NFIELDS(rmpc), &s->srqn);
	if (rc)
		goto err;
	if (xrcd) {
		s->xrcd = xrcd;
		xrcd->refs++;
		/* the CQ's pollers find it by the srqn of its CQEs (poll.h) */
		s->xref.ref.srq = &s->ring;
		s->xref.ref.rcq = &cq->ring;
		s->xref.srqn = s->srqn;
		plat_spin_lock(&cq->ring.lock);
		s->xref.next = cq->ring.xrc;
		cq->ring.xrc = &s->xref;
		plat_spin_unlock(&cq->ring.lock);
	}
	s->attr.max_wr = cnt - 1;
	s->attr.max_sge = s->ring.max_sge;
	s->attr.srq_limit = 0;
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

/* MODIFY_RMP RDY -> RDY with bitmask.lwm: the device raises SRQ_LIMIT once when fewer
 * than `limit` WQEs remain, then disarms (Linux srq_cmd.c arm_rmp_cmd, which
 * mlx5_ib_modify_srq calls for IB_SRQ_LIMIT). */
int mx5_srq_arm(struct mx5_srq *s, uint32_t limit)
{
	if (!s)
		return -EINVAL;
	struct mx5_device *dev = s->dev;
	if (limit > s->attr.max_wr)
		return mx5_fail(dev, -EINVAL, "SRQ limit %u exceeds its depth %u", limit, s->attr.max_wr);
	if (dev->health != MX5_HEALTH_OK)
		return mx5_fail(dev, -ENODEV, "MODIFY_RMP: device is in fatal error");
	if (s->xrcd) {
		/* ARM_XRC_SRQ op_mod 1 (Linux srq_cmd.c arm_xrc_srq_cmd,
		 * MLX5_ARM_XRC_SRQ_IN_OP_MOD_XRC_SRQ) */
		uint8_t ain[PRM_SIZE(arm_xrc_srq_in)] = { 0 }, aout[PRM_SIZE(arm_xrc_srq_out)];
		PRM_SET(arm_xrc_srq_in, ain, opcode, PRM_CMD_OP_ARM_XRC_SRQ);
		PRM_SET(arm_xrc_srq_in, ain, op_mod, 1);
		PRM_SET(arm_xrc_srq_in, ain, xrc_srqn, s->srqn);
		PRM_SET(arm_xrc_srq_in, ain, lwm, limit);
		int arc = mx5_exec(dev, ain, sizeof(ain), aout, sizeof(aout));
		if (!arc)
			s->attr.srq_limit = limit;
		return arc;
	}
	uint8_t in[PRM_SIZE(modify_rmp_in)] = { 0 }, out[PRM_SIZE(modify_rmp_out)];
	uint8_t *rmpc = PRM_ADDR(modify_rmp_in, in, ctx);
	PRM_SET(modify_rmp_in, in, opcode, PRM_CMD_OP_MODIFY_RMP);
	PRM_SET(modify_rmp_in, in, rmp_state, MX5_RMPC_STATE_RDY);
	PRM_SET(modify_rmp_in, in, rmpn, s->srqn);
	PRM_SET(rmp_bitmask, PRM_ADDR(modify_rmp_in, in, bitmask), lwm, 1);
	PRM_SET(rmpc, rmpc, state, MX5_RMPC_STATE_RDY);
	PRM_SET(wq, PRM_ADDR(rmpc, rmpc, wq), lwm, limit);
	int rc = mx5_exec(dev, in, sizeof(in), out, sizeof(out));
	if (rc)
		return rc;
	s->attr.srq_limit = limit;
	return 0;
}

/* QUERY_RMP: the device's armed limit (0 once SRQ_LIMIT fired, IBTA 10.2.9.3), as Linux
 * mlx5_ib_query_srq reports it (query_rmp_cmd, wq.lwm). */
int mx5_srq_query_limit(struct mx5_srq *s, uint32_t *limit)
{
	if (!s || !limit)
		return -EINVAL;
	struct mx5_device *dev = s->dev;
	if (dev->health != MX5_HEALTH_OK) {
		*limit = s->attr.srq_limit;
		return 0;
	}
	if (s->xrcd) {
		/* QUERY_XRC_SRQ: xrc_srqc.lwm (Linux srq_cmd.c query_xrc_srq_cmd) */
		uint8_t qin[PRM_SIZE(query_xrc_srq_in)] = { 0 };
		uint8_t *qout = malloc(PRM_SIZE(query_xrc_srq_out));
		if (!qout)
			return mx5_fail(dev, -ENOMEM, "QUERY_XRC_SRQ: out of memory");
		PRM_SET(query_xrc_srq_in, qin, opcode, PRM_CMD_OP_QUERY_XRC_SRQ);
		PRM_SET(query_xrc_srq_in, qin, xrc_srqn, s->srqn);
		int qrc = mx5_exec(dev, qin, sizeof(qin), qout, PRM_SIZE(query_xrc_srq_out));
		if (!qrc) {
			*limit = (uint32_t)PRM_GET(xrc_srqc, PRM_ADDR(query_xrc_srq_out, qout, xrc_srq_context_entry), lwm);
			s->attr.srq_limit = *limit;
		}
		free(qout);
		return qrc;
	}
	uint8_t in[PRM_SIZE(query_rmp_in)] = { 0 };
	uint8_t *out = malloc(PRM_SIZE(query_rmp_out));
	if (!out)
		return mx5_fail(dev, -ENOMEM, "QUERY_RMP: out of memory");
	PRM_SET(query_rmp_in, in, opcode, PRM_CMD_OP_QUERY_RMP);
	PRM_SET(query_rmp_in, in, rmpn, s->srqn);
	int rc = mx5_exec(dev, in, sizeof(in), out, PRM_SIZE(query_rmp_out));
	if (!rc) {
		const uint8_t *rmpc = PRM_ADDR(query_rmp_out, out, rmp_context);
		*limit = (uint32_t)PRM_GET(wq, PRM_ADDR(rmpc, rmpc, wq), lwm);
		s->attr.srq_limit = *limit;
	}
	free(out);
	return rc;
}

uint32_t mx5_srq_num(const struct mx5_srq *s) { return s->srqn; }
void mx5_srq_query(const struct mx5_srq *s, struct mx5_srq_attr *a) { *a = s->attr; }
void *mx5_srq_state(struct mx5_srq *s) { return &s->ring; }
