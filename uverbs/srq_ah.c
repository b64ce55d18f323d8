/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Shared receive queues (PRM CREATE_SRQ through hw/mlx5) and address handles (the
 * 48-byte RoCE v2 address vector UD sends copy into their WQEs). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw/mlx5/doorbell.h"
#include "uverbs/uv.h"

/* ------------------------------------------------------------------ SRQ */

int uv_post_srq_recv_op(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct mx5_srq_ring *r = uv_from(srq, struct uv_srq, srq)->ring;

	plat_spin_lock(&r->lock);
	int rc = mx5_post_srq_recv(r, wr, bad);
	plat_spin_unlock(&r->lock);
	return -rc;
}

/* xrcd and cq: an XRC SRQ (ibv_create_srq_ex IBV_SRQT_XRC), else NULL. */
static struct ibv_srq *uv_srq_new(struct ibv_pd *pd, void *srq_context, struct ibv_srq_attr *attr,
				  struct ibv_xrcd *xrcd, struct ibv_cq *cq)
{
	struct uv_dev *d = uv_ctx_dev(pd->context);
	if (uv_alloc_type_refused("MLX_SRQ_ALLOC_TYPE"))
		return NULL;
	/* max_wr is a minimum (ibv_create_srq(3)): 0 gets the smallest SRQ, as rdma-core's
	 * mlx5 (max_wr + 1 rounded up to a power of two) and rxe (rxe_srq_chk_init raises
	 * it to RXE_MIN_SRQ_WR) give it; the granted size goes back in attr. */
	uint32_t max_wr = attr->max_wr ? attr->max_wr : 1;
	if (max_wr > d->info.max_srq_wr || attr->max_sge > d->info.max_srq_sge || attr->srq_limit > max_wr)
		return uv_null(EINVAL);
	struct uv_srq *s = calloc(1, sizeof(*s));
	if (!s)
		return uv_null(ENOMEM);
	struct mx5_srq_attr a = { .max_wr = max_wr, .max_sge = attr->max_sge ? attr->max_sge : 1,
				  .srq_limit = attr->srq_limit };
	pthread_mutex_lock(&d->lock);
	int rc = xrcd ? mx5_xrc_srq_create(uv_from(pd, struct uv_pd, pd)->m, uv_xrcd_of(xrcd)->m,
					   ((struct uv_cq *)(void *)cq)->m, &a, &s->m)
		      : mx5_srq_create(uv_from(pd, struct uv_pd, pd)->m, NULL, &a, &s->m);
	if (rc)
		return uv_create_fail(d, rc, "ibv_create_srq", s);
	mx5_srq_query(s->m, &a);
	s->ring = mx5_srq_state(s->m);
	plat_spin_init(&s->ring->lock, uv_single_threaded(pd));
	s->ctx = uv_ctx(pd->context);
	s->next = s->ctx->srqs;
	s->ctx->srqs = s;
	s->parent = uv_parent_hold(pd);
	pthread_mutex_unlock(&d->lock);
	s->max_wr = a.max_wr;
	s->max_sge = a.max_sge;
	s->limit = a.srq_limit;
	s->srq.context = pd->context;
	s->srq.srq_context = srq_context;
	s->srq.pd = pd;
	s->srq.handle = mx5_srq_num(s->m);
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);
	/* ibv_create_srq(3): the granted sizes are returned */
	attr->max_wr = a.max_wr;
	attr->max_sge = a.max_sge;
	return &s->srq;
}

UV_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *init)
{
	if (!pd || !init)
		return uv_null(EINVAL);
	return uv_srq_new(pd, init->srq_context, &init->attr, NULL, NULL);
}

struct ibv_srq *uv_create_srq_ex_op(struct ibv_context *c, struct ibv_srq_init_attr_ex *a)
{
	if (!c || !a)
		return uv_null(EINVAL);
	bool xrc = (a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && a->srq_type == IBV_SRQT_XRC;
	if ((a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && a->srq_type != IBV_SRQT_BASIC && !xrc) {
		uv_unsupported("tag-matching SRQs");
		return NULL;
	}
	if (!(a->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !a->pd || a->pd->context != c)
		return uv_null(EINVAL);
	/* An XRC SRQ needs its domain and the CQ its completions go to (Linux
	 * uverbs_cmd.c __uverbs_create_xsrq: EINVAL without them): the CQ of this context,
	 * the domain of this device (a domain named by a file is one per device, whichever
	 * context opened it first: xrc.c) */
	if (xrc && (!(a->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !a->xrcd ||
		    uv_ctx_dev(a->xrcd->context) != uv_ctx_dev(c) ||
		    !(a->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !a->cq || a->cq->context != c)) {
		uv_log(UV_LOG_WARN, "ibv_create_srq_ex: an XRC SRQ needs an XRC domain and a CQ of its context: EINVAL");
		return uv_null(EINVAL);
	}
	return uv_srq_new(a->pd, a->srq_context, &a->attr, xrc ? a->xrcd : NULL, xrc ? a->cq : NULL);
}

static int uv_modify_srq_body(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	if (!srq || !attr)
		return EINVAL;
	struct uv_srq *s = uv_from(srq, struct uv_srq, srq);
	if (mask & IBV_SRQ_MAX_WR) {
		uv_unsupported("SRQ resize (ibv_modify_srq IBV_SRQ_MAX_WR)");
		return EOPNOTSUPP;
	}
	if (!(mask & IBV_SRQ_LIMIT))
		return mask ? EINVAL : 0;
	if (attr->srq_limit > s->max_wr)
		return EINVAL;
	struct uv_dev *d = uv_dev_lock(srq->context);
	int rc = mx5_srq_arm(s->m, attr->srq_limit);
	if (rc)
		rc = uv_err(d, rc, "ibv_modify_srq");
	else
		s->limit = attr->srq_limit;
	pthread_mutex_unlock(&d->lock);
	return rc;
}

UV_EXPORT int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	return uv_errno(uv_modify_srq_body(srq, attr, mask));
}

static int uv_query_srq_body(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	if (!srq || !attr)
		return EINVAL;
	struct uv_srq *s = uv_from(srq, struct uv_srq, srq);
	/* the limit as the device holds it: 0 once SRQ_LIMIT fired (Linux
	 * mlx5_ib_query_srq reads it back with QUERY_RMP) */
	struct uv_dev *d = uv_dev_lock(srq->context);
	uint32_t limit = 0;
	int rc = mx5_srq_query_limit(s->m, &limit);
	if (rc)
		rc = uv_err(d, rc, "ibv_query_srq");
	pthread_mutex_unlock(&d->lock);
	if (rc)
		return rc;
	s->limit = limit;
	attr->max_wr = s->max_wr;
	attr->max_sge = s->max_sge;
	attr->srq_limit = limit;
	return 0;
}

UV_EXPORT int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	return uv_errno(uv_query_srq_body(srq, attr));
}

static int uv_destroy_srq_body(struct ibv_srq *srq)
{
	if (!srq)
		return EINVAL;
	struct uv_srq *s = uv_from(srq, struct uv_srq, srq);
	int rc = uv_queue_destroy((struct uv_queue){ UV_QUEUE_SRQ, .srq = s }, UV_HANDLE(srq, events_completed));
	if (!rc)
		free(s);
	return rc;
}

UV_EXPORT int ibv_destroy_srq(struct ibv_srq *srq)
{
	return uv_errno(uv_destroy_srq_body(srq));
}

/* ------------------------------------------------------------------ AH */

/* RoCE v2 UDP source port from the flow label (IBTA A17.5.3 suggests it; the
 * folding into 0xC000..0xFFFF is the one Linux and rdma-core use). */
static uint16_t uv_flow_label_sport(uint32_t fl)
{
	uint32_t lo = fl & 0x3fff, hi = fl & 0xfc000;
	lo ^= hi >> 14;
	return (uint16_t)(lo | 0xc000);
}

UV_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	if (!pd || !attr)
		return uv_null(EINVAL);
	struct uv_dev *d = uv_ctx_dev(pd->context);
	/* RoCE: every packet has a GRH, an AH without one cannot address anybody; the port
	 * is one of the device's (Linux ib_uverbs_create_ah: rdma_is_port_valid) */
	if (!attr->is_global || attr->grh.sgid_index >= d->info.gid_table_len || !uv_port_valid(d, attr->port_num)) {
		return uv_null(EINVAL);
	}
	struct uv_ah *a = calloc(1, sizeof(*a));
	if (!a)
		return uv_null(ENOMEM);
	struct mx5_av_attr av;
	memset(&av, 0, sizeof(av));
	memcpy(av.dgid, attr->grh.dgid.raw, 16);
	/* the source GID must be a programmed entry (an empty one has no address to send
	 * from), as Linux's rdma_create_ah refuses a GID attribute it cannot find */
	pthread_mutex_lock(&d->lock);
	int rc = EINVAL;
	if (mx5_gid_valid(d->mx5, attr->port_num, attr->grh.sgid_index))
		rc = uv_resolve_dmac(d, av.dgid, av.dmac);
	else
		uv_log(UV_LOG_ERROR, "%s: ibv_create_ah: GID index %u is empty", d->ibdev.name,
		       attr->grh.sgid_index);
	pthread_mutex_unlock(&d->lock);
	if (rc) {
		free(a);
		return uv_null(rc);
	}
	av.sgid_index = attr->grh.sgid_index;
	av.hop_limit = attr->grh.hop_limit;
	av.tclass = attr->grh.traffic_class;
	av.flow_label = attr->grh.flow_label & 0xfffff;
	av.udp_sport = uv_flow_label_sport(av.flow_label);
	/* Ethernet address vector: static rate in bits 7:4 (0, port current) and the
	 * 3-bit priority in bits 3:1; bit 0 is reserved on RoCE (rdma-core
	 * providers/mlx5/verbs.c mlx5_create_ah: (static_rate << 4) | ((sl & 0x7) << 1)). */
	av.stat_rate_sl = (uint8_t)((attr->sl & 0x7) << 1);
	mx5_av_build(a->av, &av);
	a->ah.context = pd->context;
	a->ah.pd = pd;
	a->attr = *attr;
	pthread_mutex_lock(&d->lock);
	uv_ctx(pd->context)->nahs++;   /* ibv_close_device refuses while it exists */
	uv_from(pd, struct uv_pd, pd)->ahs++;   /* and ibv_dealloc_pd */
	pthread_mutex_unlock(&d->lock);
	return &a->ah;
}

static int uv_destroy_ah_body(struct ibv_ah *ah)
{
	if (!ah)
		return EINVAL;
	struct uv_dev *d = uv_dev_lock(ah->context);
	uv_ctx(ah->context)->nahs--;
	uv_from(ah->pd, struct uv_pd, pd)->ahs--;
	pthread_mutex_unlock(&d->lock);
	free(uv_from(ah, struct uv_ah, ah));
	return 0;
}

UV_EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	return uv_errno(uv_destroy_ah_body(ah));
}

static const uint8_t uv_v4map[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* ibv_init_ah_from_wc(3): the reply address from a received UD completion.  RoCE v2
 * puts the packet's IP header in the first 40 bytes of the receive buffer: IPv6 as a
 * GRH, IPv4 in bytes 20..39 after 20 zero bytes (rdma-core's layout). */
UV_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
				  struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	if (!context || !wc || !ah_attr)
		return -1;
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->sl = wc->sl;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH) || !grh)
		return uv_minus1(EINVAL);   /* RoCE needs the GRH to answer */
	uint8_t src[16], dst[16];
	const uint8_t *raw = (const uint8_t *)grh;
	static const uint8_t zero20[20];
	if (!memcmp(raw, zero20, 20) && (raw[20] >> 4) == 4) {
		memcpy(src, uv_v4map, 12);
		memcpy(src + 12, raw + 20 + 12, 4);
		memcpy(dst, uv_v4map, 12);
		memcpy(dst + 12, raw + 20 + 16, 4);
		ah_attr->grh.hop_limit = raw[20 + 8];
		ah_attr->grh.traffic_class = raw[20 + 1];
	} else {
		memcpy(src, grh->sgid.raw, 16);
		memcpy(dst, grh->dgid.raw, 16);
		uint32_t vtf = be32toh(grh->version_tclass_flow);
		ah_attr->grh.hop_limit = grh->hop_limit;
		ah_attr->grh.traffic_class = (uint8_t)(vtf >> 20);
		ah_attr->grh.flow_label = vtf & 0xfffff;
	}
	ah_attr->is_global = 1;
	memcpy(ah_attr->grh.dgid.raw, src, 16);
	/* our GID the packet was sent to */
	struct uv_dev *d = uv_ctx_dev(context);
	for (uint32_t i = 0; i < d->info.gid_table_len; i++) {
		union ibv_gid g;
		if (ibv_query_gid(context, port_num, (int)i, &g) == 0 && !memcmp(g.raw, dst, 16)) {
			ah_attr->grh.sgid_index = (uint8_t)i;
			return 0;
		}
	}
	return uv_minus1(ENOENT);
}

UV_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
					       struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr a;
	if (!pd || ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &a))
		return NULL;
	return ibv_create_ah(pd, &a);
}

UV_EXPORT int ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr,
					  uint8_t eth_mac[6], uint16_t *vid)
{
	if (!context || !attr || !eth_mac)
		return EINVAL;
	struct uv_dev *d = uv_dev_lock(context);
	int rc = uv_resolve_dmac(d, attr->grh.dgid.raw, eth_mac);
	pthread_mutex_unlock(&d->lock);
	if (rc)
		return rc;
	if (vid)
		*vid = 0xffff;
	return 0;
}
