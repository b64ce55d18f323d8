/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Queue pairs (RC, UC, UD): create, modify (RST->INIT->RTR->RTS, ->ERR, ->RST), query,
 * destroy, and ibv_post_send / ibv_post_recv through hw/mlx5's data path (wqe.h,
 * doorbell.h).  Errors follow ibv_post_send(3): the errno is returned and *bad_wr names
 * the first WR not posted. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw/mlx5/doorbell.h"
#include "hw/mlx5/wqe.h"
#include "uverbs/uv.h"

static inline struct uv_qp *uv_qp_of(struct ibv_qp *qp)
{
	return (struct uv_qp *)(void *)qp;
}

/* ------------------------------------------------------------------ data path */

int uv_post_send_op(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct uv_qp *q = uv_qp_of(qp);
	/* ibv_post_send(3): the send queue works from RTS on (and flushes in SQE/ERR) */
	if (__builtin_expect(qp->state < IBV_QPS_RTS, 0)) {
		if (bad)
			*bad = wr;
		return EINVAL;
	}
	/* a UD WR without an address handle is refused in the chain's order (hw/mlx5/wqe.h) */
	if (__builtin_expect(qp->qp_type == IBV_QPT_XRC_RECV, 0)) {
		if (bad)
			*bad = wr;   /* an XRC target has no send queue (IBTA 14.2) */
		return EINVAL;
	}
	return -mx5_post_send_mt(q->sq, wr, bad);   /* under the SQ's lock unless a hint */
}

int uv_post_recv_op(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct uv_qp *q = uv_qp_of(qp);
	/* receives may be posted from INIT on; a QP on an SRQ has no receive queue */
	if (__builtin_expect(qp->state == IBV_QPS_RESET || qp->srq != NULL || !q->rq ||
			     q->cap.max_recv_wr == 0, 0)) {
		if (bad)
			*bad = wr;
		return EINVAL;
	}
	plat_spin_lock(&q->rq->lock);
	int rc = mx5_post_recv(q->rq, wr, bad);
	plat_spin_unlock(&q->rq->lock);
	return -rc;
}

/* ------------------------------------------------------------------ Apple's delivery

 * Apps written for Apple's RDMA (macOS 26.2 librdma; MLX's JACCL the first) send on UC
 * as soon as their own receive is posted and rely on the message waiting for the peer's
 * receive, which Apple's Thunderbolt transport gives them.  On a ConnectX (and in the
 * IBTA, 9.8.? UC) such a message is dropped.  Under that delivery a UC queue pair is
 * therefore created as RC and given what RC needs on top of the UC attributes the
 * application passes: an RNR NAK timer on the responder, and on the requester an ACK
 * timeout, retries and unlimited RNR retries (IBTA 9.7.5.2.8: rnr_retry 7 = infinite).
 * The application still sees UC (ibv_query_qp reports its own type and no RC
 * attributes).  Both ends must run this way: an RC packet reaching a real UC QP is
 * dropped as a transport mismatch. */
#define UV_APPLE_MIN_RNR_TIMER 6      /* IBTA table 45: 0.08 ms before a retried SEND */
#define UV_APPLE_TIMEOUT 14           /* 4.096 us * 2^14 = 67 ms local ACK timeout */
#define UV_APPLE_RETRY_CNT 7
#define UV_APPLE_RNR_RETRY 7          /* infinite */

bool uv_apple_delivery(void)
{
	const char *s = getenv("UVERBS_DELIVERY");

	if (s && !strcmp(s, "apple"))
		return true;
	if (s && !strcmp(s, "ibta"))
		return false;
	if (s && *s)
		uv_log(UV_LOG_WARN, "UVERBS_DELIVERY=%s: expected apple or ibta; ignored", s);
	return uv_loaded_as_librdma;
}

/* The RC attributes a UC-as-RC transition needs and the application did not give. */
static void uv_uc_as_rc_attrs(const struct ibv_qp *qp, const struct ibv_qp_attr *attr, int attr_mask,
			      struct mx5_qp_attr *m, unsigned *mask)
{
	if (!(attr_mask & IBV_QP_STATE))
		return;
	if (attr->qp_state == IBV_QPS_RTR && qp->state == IBV_QPS_INIT) {
		m->min_rnr_timer = UV_APPLE_MIN_RNR_TIMER;
		m->max_dest_rd_atomic = 0;
		*mask |= MX5_QP_MIN_RNR_TIMER | MX5_QP_MAX_DEST_RD_ATOMIC;
	} else if (attr->qp_state == IBV_QPS_RTS && qp->state == IBV_QPS_RTR) {
		m->timeout = UV_APPLE_TIMEOUT;
		m->retry_cnt = UV_APPLE_RETRY_CNT;
		m->rnr_retry = UV_APPLE_RNR_RETRY;
		m->max_rd_atomic = 0;
		*mask |= MX5_QP_TIMEOUT | MX5_QP_RETRY_CNT | MX5_QP_RNR_RETRY | MX5_QP_MAX_QP_RD_ATOMIC;
	}
}

/* ------------------------------------------------------------------ create */

#define UV_SEND_OPS_OK (IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
			IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
			IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
			IBV_QP_EX_WITH_SEND_WITH_INV)

static struct ibv_qp *uv_qp_new(struct ibv_context *c, struct ibv_qp_init_attr_ex *a)
{
	struct uv_dev *d = uv_ctx_dev(c);
	enum mx5_qp_type t;
	if (uv_alloc_type_refused("MLX_QP_ALLOC_TYPE"))
		return NULL;

	/* An XRC target (IBV_QPT_XRC_RECV) has its XRC domain and nothing else: no PD, CQ
	 * or queue (ibv_create_qp_ex(3); Linux ignores those for IB_QPT_XRC_TGT) */
	bool tgt = a->qp_type == IBV_QPT_XRC_RECV;
	if (!tgt && (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd))
		return uv_null(EINVAL);
	/* a target's PD field is not looked at, set or not (Linux create_xrc_tgt_qp) */
	struct ibv_pd *pd = tgt ? NULL : a->pd;
	if (a->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
				       IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_XRCD)) {
		uv_unsupported("ibv_create_qp_ex: TSO or RSS attributes");
		return NULL;
	}
	struct ibv_xrcd *xrcd = (a->comp_mask & IBV_QP_INIT_ATTR_XRCD) ? a->xrcd : NULL;
	/* the domain of this device: one named by a file is one per device, whichever
	 * context opened it first (xrc.c) */
	if (tgt && (!xrcd || uv_ctx_dev(xrcd->context) != uv_ctx_dev(c))) {
		uv_log(UV_LOG_WARN, "ibv_create_qp_ex: an XRC_RECV QP needs an XRC domain of its device: EINVAL");
		return uv_null(EINVAL);
	}
	/* IBV_QP_CREATE_BLOCK_SELF_MCAST_LB (ibv_create_qp_ex(3)) keeps the QP from receiving
	 * its own multicast sends.  Linux's mlx5 accepts it on any QP type when the device
	 * has block_lb_mc (drivers/infiniband/hw/mlx5/qp.c, process_create_flags) and sets
	 * qpc.block_lb_mc, as we do. */
	/* IBV_QP_CREATE_SOURCE_QPN with source_qpn 1 on a UD QP: the GSI QP, which sends
	 * and receives as QPN 1 (IBTA 13.5.1); the in-library CM (rdma_cm.c) is its user.
	 * Other source QPNs (Linux's IPoIB offload) are not offered. */
	bool gsi = (a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
		   (a->create_flags & IBV_QP_CREATE_SOURCE_QPN) && a->source_qpn == 1 &&
		   a->qp_type == IBV_QPT_UD;
	if ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    (a->create_flags & ~(uint32_t)(IBV_QP_CREATE_BLOCK_SELF_MCAST_LB |
					   (gsi ? IBV_QP_CREATE_SOURCE_QPN : 0)))) {
		uv_unsupported("ibv_create_qp_ex: create_flags");
		return NULL;
	}
	uint64_t ops = UV_SEND_OPS_OK;
	if (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		if (a->send_ops_flags & ~(uint64_t)UV_SEND_OPS_OK) {
			uv_unsupported("ibv_create_qp_ex: local invalidate, bind MW, TSO or atomic write ops");
			return NULL;
		}
		ops = a->send_ops_flags;
	}
	bool uc_as_rc = false;
	switch (a->qp_type) {
	case IBV_QPT_RC: t = MX5_QPT_RC; break;
	case IBV_QPT_UC:
		uc_as_rc = uv_apple_delivery();
		t = uc_as_rc ? MX5_QPT_RC : MX5_QPT_UC;
		break;
	case IBV_QPT_UD: t = MX5_QPT_UD; break;
	case IBV_QPT_XRC_SEND: t = MX5_QPT_XRC_INI; break;
	case IBV_QPT_XRC_RECV: t = MX5_QPT_XRC_TGT; break;
	default:
		uv_unsupported("QP type other than RC, UC, UD, XRC_SEND and XRC_RECV");
		return NULL;
	}
	/* XRC: the initiator receives nothing (no receive CQ or SRQ needed), the target
	 * has neither side (the XRC SRQs its requests name complete on their own CQs) */
	bool xrc = t == MX5_QPT_XRC_INI || t == MX5_QPT_XRC_TGT;
	if (xrc) {
		ops = tgt ? 0 : ops;
		if (!tgt && (!a->send_cq || a->pd->context != c || a->send_cq->context != c))
			return uv_null(EINVAL);
	} else if (!a->send_cq || !a->recv_cq || a->pd->context != c ||
		   a->send_cq->context != c || a->recv_cq->context != c ||
		   (a->srq && a->srq->context != c)) {
		return uv_null(EINVAL);
	}
	/* an XRC target's capabilities are not used (it has no queue): not checked */
	if (!tgt && (a->cap.max_send_sge > UV_WR_MAX_SGE || a->cap.max_send_sge > d->info.max_sge ||
	    a->cap.max_recv_sge > d->info.max_sge || a->cap.max_inline_data > d->info.max_inline_data ||
	    a->cap.max_send_wr > d->info.max_qp_wr || a->cap.max_recv_wr > d->info.max_qp_wr)) {
		uv_log(UV_LOG_WARN, "ibv_create_qp: capabilities beyond the device's (wr %u/%u of %u, "
		       "sge %u/%u of %u, inline %u of %u): EINVAL", a->cap.max_send_wr,
		       a->cap.max_recv_wr, d->info.max_qp_wr, a->cap.max_send_sge, a->cap.max_recv_sge,
		       d->info.max_sge, a->cap.max_inline_data, d->info.max_inline_data);
		return uv_null(EINVAL);
	}
	struct uv_qp *q = calloc(1, sizeof(*q));
	if (!q)
		return uv_null(ENOMEM);
	struct mx5_qp_init_attr ia = {
		.type = t,
		.send_cq = !tgt ? ((struct uv_cq *)(void *)a->send_cq)->m : NULL,
		.recv_cq = !xrc ? ((struct uv_cq *)(void *)a->recv_cq)->m : NULL,
		.srq = a->srq && !xrc ? uv_from(a->srq, struct uv_srq, srq)->m : NULL,
		.xrcd = tgt ? uv_xrcd_of(xrcd)->m : NULL,
		.cap = { .max_send_wr = a->cap.max_send_wr, .max_recv_wr = a->srq || xrc ? 0 : a->cap.max_recv_wr,
			 .max_send_sge = a->cap.max_send_sge ? a->cap.max_send_sge : 1,
			 .max_recv_sge = a->cap.max_recv_sge, .max_inline_data = a->cap.max_inline_data },
		.sq_sig_all = a->sq_sig_all,
		.gsi = gsi,
		.block_lb_mc = (a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
			       (a->create_flags & IBV_QP_CREATE_BLOCK_SELF_MCAST_LB),
	};
	pthread_mutex_lock(&d->lock);
	int rc = mx5_qp_create(tgt ? NULL : uv_from(a->pd, struct uv_pd, pd)->m, &ia, &q->m);
	if (!rc) {
		struct mx5_qp_attr qa;
		struct mx5_qp_init_attr gi;
		rc = mx5_qp_query(q->m, &qa, &gi);
		if (!rc)
			q->cap = gi.cap;
		else
			mx5_qp_destroy(q->m);
	}
	if (rc)
		return uv_create_fail(d, rc, "ibv_create_qp", q);
	q->sq = mx5_qp_sq_state(q->m);
	q->rq = mx5_qp_rq_state(q->m);
	/* UD WQEs copy the address vector from the AH at this offset (wqe.h) */
	q->sq->av_offset = (uint32_t)offsetof(struct uv_ah, av);
	/* the queues' locks: on unless a single-thread hint says otherwise (domain.c) */
	bool single = uv_single_threaded(pd);
	plat_spin_init(&q->sq->lock, single);
	if (q->rq)
		plat_spin_init(&q->rq->lock, single);
	q->max_inline = q->cap.max_inline_data;
	q->uc_as_rc = uc_as_rc;
	q->xrcd = tgt ? uv_xrcd_of(xrcd) : NULL;
	q->ctx = uv_ctx(c);
	q->next = q->ctx->qps;
	q->ctx->qps = q;
	q->parent = uv_parent_hold(pd);
	pthread_mutex_unlock(&d->lock);

	/* set before the allocation below: its failure undoes the QP with ibv_destroy_qp,
	 * which needs the context, mutex and condition variable (uv_queue_destroy) */
	struct ibv_qp *qp = &q->qpx.qp_base;
	qp->context = c;
	qp->qp_context = a->qp_context;
	qp->pd = (a->comp_mask & IBV_QP_INIT_ATTR_PD) ? a->pd : NULL;   /* as libibverbs sets it */
	qp->send_cq = tgt ? NULL : a->send_cq;
	qp->recv_cq = xrc ? NULL : a->recv_cq;
	qp->srq = xrc ? NULL : a->srq;
	qp->qp_num = mx5_qp_num(q->m);
	qp->handle = qp->qp_num;
	qp->state = IBV_QPS_RESET;
	qp->qp_type = a->qp_type;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
	q->st.inl = malloc(q->max_inline ? q->max_inline : 1);
	if (!q->st.inl) {
		ibv_destroy_qp(&q->qpx.qp_base);
		return uv_null(ENOMEM);
	}
	uv_qp_ex_init(q, ops);
	/* ibv_create_qp(3): the granted capabilities are returned in cap */
	a->cap.max_send_wr = tgt ? 0 : q->cap.max_send_wr;
	a->cap.max_recv_wr = a->srq || xrc ? 0 : q->cap.max_recv_wr;
	a->cap.max_send_sge = tgt ? 0 : q->cap.max_send_sge < UV_WR_MAX_SGE ? q->cap.max_send_sge : UV_WR_MAX_SGE;
	a->cap.max_recv_sge = a->srq || xrc ? 0 : q->cap.max_recv_sge;
	a->cap.max_inline_data = tgt ? 0 : q->cap.max_inline_data;
	return qp;
}

struct ibv_qp *uv_create_qp_ex_op(struct ibv_context *c, struct ibv_qp_init_attr_ex *a)
{
	if (!c || !a)
		return uv_null(EINVAL);
	return uv_qp_new(c, a);
}

UV_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	if (!pd || !attr)
		return uv_null(EINVAL);
	struct ibv_qp_init_attr_ex x;
	memset(&x, 0, sizeof(x));
	x.qp_context = attr->qp_context;
	x.send_cq = attr->send_cq;
	x.recv_cq = attr->recv_cq;
	x.srq = attr->srq;
	x.cap = attr->cap;
	x.qp_type = attr->qp_type;
	x.sq_sig_all = attr->sq_sig_all;
	x.comp_mask = IBV_QP_INIT_ATTR_PD;
	x.pd = pd;
	struct ibv_qp *qp = uv_qp_new(pd->context, &x);
	if (qp)
		attr->cap = x.cap;
	return qp;
}

UV_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	if (!qp)
		return uv_null(EINVAL);
	return &uv_qp_of(qp)->qpx;
}

/* ------------------------------------------------------------------ modify, query */

/* Members struct ibv_qp_attr and struct mx5_qp_attr share, by name and meaning: modify
 * copies them down, query back up (ibv_modify_qp(3), ibv_query_qp(3)). */
#define UV_QP_ATTR_SAME(X)                                                              \
	X(pkey_index) X(port_num) X(qkey) X(timeout) X(retry_cnt) X(rnr_retry)          \
	X(min_rnr_timer) X(rq_psn) X(sq_psn) X(max_rd_atomic) X(max_dest_rd_atomic)   \
	X(dest_qp_num)
/* Members of ibv_ah_attr.grh that struct mx5_qp_attr's ah keeps as they are. */
#define UV_QP_GRH_SAME(X) X(sgid_index) X(hop_limit) X(traffic_class) X(flow_label)

static const struct { int ibv; unsigned mx5; } uv_mask_map[] = {
	{ IBV_QP_STATE, MX5_QP_STATE }, { IBV_QP_CUR_STATE, MX5_QP_CUR_STATE },
	{ IBV_QP_ACCESS_FLAGS, MX5_QP_ACCESS_FLAGS }, { IBV_QP_PKEY_INDEX, MX5_QP_PKEY_INDEX },
	{ IBV_QP_PORT, MX5_QP_PORT }, { IBV_QP_QKEY, MX5_QP_QKEY }, { IBV_QP_AV, MX5_QP_AV },
	{ IBV_QP_PATH_MTU, MX5_QP_PATH_MTU }, { IBV_QP_TIMEOUT, MX5_QP_TIMEOUT },
	{ IBV_QP_RETRY_CNT, MX5_QP_RETRY_CNT }, { IBV_QP_RNR_RETRY, MX5_QP_RNR_RETRY },
	{ IBV_QP_RQ_PSN, MX5_QP_RQ_PSN }, { IBV_QP_MAX_QP_RD_ATOMIC, MX5_QP_MAX_QP_RD_ATOMIC },
	{ IBV_QP_MIN_RNR_TIMER, MX5_QP_MIN_RNR_TIMER }, { IBV_QP_SQ_PSN, MX5_QP_SQ_PSN },
	{ IBV_QP_MAX_DEST_RD_ATOMIC, MX5_QP_MAX_DEST_RD_ATOMIC }, { IBV_QP_DEST_QPN, MX5_QP_DEST_QPN },
};

static int uv_modify_qp_body(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	if (!qp || !attr)
		return EINVAL;
	struct uv_qp *q = uv_qp_of(qp);
	struct uv_dev *d = uv_ctx_dev(qp->context);
	const int known = IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_RQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_DEST_QPN;
	if (attr_mask & ~known) {
		uv_log(UV_LOG_WARN, "ibv_modify_qp: alternate path, SQ drain, rate limit or resize "
		       "(mask 0x%x) not supported (EOPNOTSUPP)", attr_mask & ~known);
		return EOPNOTSUPP;
	}
	if ((attr_mask & IBV_QP_STATE) && (attr->qp_state == IBV_QPS_SQD || attr->qp_state == IBV_QPS_SQE ||
					    attr->qp_state > IBV_QPS_ERR))
		return EINVAL;
	struct mx5_qp_attr m;
	memset(&m, 0, sizeof(m));
	unsigned mask = 0;
	for (size_t i = 0; i < sizeof(uv_mask_map) / sizeof(uv_mask_map[0]); i++)
		if (attr_mask & uv_mask_map[i].ibv)
			mask |= uv_mask_map[i].mx5;
	m.qp_state = (enum mx5_qp_state)attr->qp_state;
	m.cur_qp_state = (enum mx5_qp_state)attr->cur_qp_state;
	m.qp_access_flags = uv_access_to_mx5(attr->qp_access_flags);
#define UV_DOWN(f) m.f = attr->f;
	UV_QP_ATTR_SAME(UV_DOWN)
#undef UV_DOWN
	if (attr_mask & IBV_QP_AV) {
		const struct ibv_ah_attr *ah = &attr->ah_attr;
		/* RoCE carries a GRH on every packet (IBTA A17.4.5.1): is_global is required */
		if (!ah->is_global)
			return EINVAL;
#define UV_DOWN(f) m.ah.f = ah->grh.f;
		UV_QP_GRH_SAME(UV_DOWN)
#undef UV_DOWN
		memcpy(m.ah.dgid, ah->grh.dgid.raw, 16);
		m.ah.sl = ah->sl;
		/* one of the device's ports (Linux ib_uverbs_modify_qp: rdma_is_port_valid) */
		if (!uv_port_valid(d, ah->port_num))
			return EINVAL;
		m.ah.port_num = ah->port_num;
	}
	/* an index into the port's P_Key table (mlx5_ib modify_qp refuses one past it) */
	if ((attr_mask & IBV_QP_PKEY_INDEX) && attr->pkey_index >= d->info.pkey_table_len)
		return EINVAL;
	m.path_mtu = (uint8_t)attr->path_mtu;
	if (q->uc_as_rc) {
		/* UC has none of these; an application that sets them asks for what UC
		 * cannot do (ibv_modify_qp(3)), so refuse as a real UC QP would */
		if (attr_mask & (IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MIN_RNR_TIMER |
				 IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC))
			return EINVAL;
		uv_uc_as_rc_attrs(qp, attr, attr_mask, &m, &mask);
	}

	pthread_mutex_lock(&d->lock);
	int rc = 0;
	/* the MAC of the peer; an empty or out-of-range GID index is mx5_qp_modify's
	 * to refuse (EINVAL), before any neighbour is looked for */
	if ((attr_mask & IBV_QP_AV) && mx5_gid_valid(d->mx5, m.ah.port_num, m.ah.sgid_index))
		rc = uv_resolve_dmac(d, m.ah.dgid, m.ah.dmac);
	if (!rc && (rc = mx5_qp_modify(q->m, &m, mask)))
		rc = uv_err(d, rc, "ibv_modify_qp");
	if (!rc && (attr_mask & IBV_QP_STATE))
		qp->state = attr->qp_state;
	pthread_mutex_unlock(&d->lock);
	return rc;
}

UV_EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	return uv_errno(uv_modify_qp_body(qp, attr, attr_mask));
}

static int uv_query_qp_body(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			    struct ibv_qp_init_attr *init_attr)
{
	(void)attr_mask;   /* everything is reported, as rdma-core's providers do */
	if (!qp || !attr || !init_attr)
		return EINVAL;
	struct uv_qp *q = uv_qp_of(qp);
	struct uv_dev *d = uv_ctx_dev(qp->context);
	struct mx5_qp_attr m;
	struct mx5_qp_init_attr ia;
	pthread_mutex_lock(&d->lock);
	int rc = mx5_qp_query(q->m, &m, &ia);
	if (rc)
		rc = uv_err(d, rc, "ibv_query_qp");
	pthread_mutex_unlock(&d->lock);
	if (rc)
		return rc;
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = (enum ibv_qp_state)m.qp_state;
	attr->cur_qp_state = (enum ibv_qp_state)m.qp_state;
	attr->path_mtu = (enum ibv_mtu)m.path_mtu;
	attr->path_mig_state = IBV_MIG_MIGRATED;
#define UV_UP(f) attr->f = m.f;
	UV_QP_ATTR_SAME(UV_UP)
#undef UV_UP
	attr->qp_access_flags = (int)uv_access_from_mx5(m.qp_access_flags);
	attr->cap.max_send_wr = q->cap.max_send_wr;
	attr->cap.max_recv_wr = qp->srq ? 0 : q->cap.max_recv_wr;
	attr->cap.max_send_sge = q->cap.max_send_sge < UV_WR_MAX_SGE ? q->cap.max_send_sge : UV_WR_MAX_SGE;
	attr->cap.max_recv_sge = qp->srq ? 0 : q->cap.max_recv_sge;
	attr->cap.max_inline_data = q->cap.max_inline_data;
	attr->ah_attr.is_global = 1;
	memcpy(attr->ah_attr.grh.dgid.raw, m.ah.dgid, 16);
#define UV_UP(f) attr->ah_attr.grh.f = m.ah.f;
	UV_QP_GRH_SAME(UV_UP)
#undef UV_UP
	attr->ah_attr.sl = m.ah.sl;
	attr->ah_attr.port_num = m.ah.port_num;
	if (q->uc_as_rc) {
		/* what a UC QP has: none of RC's attributes */
		attr->max_rd_atomic = attr->max_dest_rd_atomic = 0;
		attr->min_rnr_timer = attr->timeout = attr->retry_cnt = attr->rnr_retry = 0;
	}
	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_context = qp->qp_context;
	init_attr->send_cq = qp->send_cq;
	init_attr->recv_cq = qp->recv_cq;
	init_attr->srq = qp->srq;
	init_attr->cap = attr->cap;
	init_attr->qp_type = qp->qp_type;
	init_attr->sq_sig_all = ia.sq_sig_all;
	return 0;
}

UV_EXPORT int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			   struct ibv_qp_init_attr *init_attr)
{
	return uv_errno(uv_query_qp_body(qp, attr, attr_mask, init_attr));
}

/* ibv_open_qp(3): another handle on an XRC_RECV QP of this process, found by number in
 * its XRC domain (Linux ib_open_qp: the domain's target QPs; qp_type XRC_RECV only).
 * The handle modifies and queries the QP itself.  While a handle is open the creator's
 * ibv_destroy_qp is refused with EBUSY.  Linux differs: the creator's QP is itself an
 * opened handle of a hidden real QP (create_xrc_qp_user, __ib_open_qp), its destroy
 * returns 0 and the real QP goes with the last handle (__ib_destroy_shared_qp); not
 * done here (docs/architecture.md, Known limits).  Asynchronous events go to the QP,
 * not to its handles. */
struct ibv_qp *uv_open_qp_op(struct ibv_context *c, struct ibv_qp_open_attr *a)
{
	const uint32_t need = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	if (!c || !a || (a->comp_mask & need) != need || (a->comp_mask & ~(need | IBV_QP_OPEN_ATTR_CONTEXT)) ||
	    a->qp_type != IBV_QPT_XRC_RECV || !a->xrcd)
		return uv_null(EINVAL);
	struct uv_dev *d = uv_ctx_dev(c);
	if (uv_ctx_dev(a->xrcd->context) != d)
		return uv_null(EINVAL);
	struct uv_qp *h = calloc(1, sizeof(*h));
	if (!h)
		return uv_null(ENOMEM);
	pthread_mutex_lock(&d->lock);
	struct uv_qp *o = NULL;
	for (struct uv_context *x = d->ctxs; x && !o; x = x->next)
		for (struct uv_qp *q = x->qps; q && !o; q = q->next)
			if (q->xrcd == uv_xrcd_of(a->xrcd) && q->qpx.qp_base.qp_num == a->qp_num && !q->closing)
				o = q;
	if (o) {
		o->opens++;
		uv_ctx(c)->nopened++;
	}
	pthread_mutex_unlock(&d->lock);
	if (!o) {
		free(h);
		return uv_null(EINVAL);   /* Linux ib_open_qp: no such target QP */
	}
	h->m = o->m;
	h->sq = o->sq;
	h->ctx = uv_ctx(c);
	h->opened_of = o;
	h->xrcd = o->xrcd;
	uv_qp_ex_init(h, 0);
	struct ibv_qp *qp = &h->qpx.qp_base;
	qp->context = c;
	qp->qp_context = (a->comp_mask & IBV_QP_OPEN_ATTR_CONTEXT) ? a->qp_context : NULL;
	qp->qp_num = a->qp_num;
	qp->handle = a->qp_num;
	qp->state = o->qpx.qp_base.state;
	qp->qp_type = IBV_QPT_XRC_RECV;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
	return qp;
}

static int uv_destroy_qp_body(struct ibv_qp *qp)
{
	if (!qp)
		return EINVAL;
	struct uv_qp *q = uv_qp_of(qp);
	if (q->opened_of) {
		/* a handle of ibv_open_qp: the QP stays */
		struct uv_dev *d = uv_dev_lock(qp->context);
		q->opened_of->opens--;
		q->ctx->nopened--;
		pthread_mutex_unlock(&d->lock);
		pthread_mutex_destroy(&qp->mutex);
		pthread_cond_destroy(&qp->cond);
		free(q);
		return 0;
	}
	if (q->xrcd) {
		/* the handle count and the closing mark together under the device lock, so
		 * that no ibv_open_qp hands out a handle on a QP being destroyed */
		struct uv_dev *d = uv_dev_lock(qp->context);
		unsigned opens = q->opens;
		if (!opens)
			q->closing = true;
		pthread_mutex_unlock(&d->lock);
		if (opens) {
			uv_log(UV_LOG_WARN, "ibv_destroy_qp: XRC QP 0x%x still has %u handles of ibv_open_qp (EBUSY)",
			       qp->qp_num, opens);
			return EBUSY;
		}
	}
	if (q->nmcast) {
		/* Linux uverbs_free_qp: a QP still attached to a multicast group is not
		 * destroyed (EBUSY) until the user detaches it */
		uv_log(UV_LOG_WARN, "ibv_destroy_qp: QP 0x%x is still attached to %u multicast group(s): "
		       "ibv_detach_mcast first (EBUSY)", qp->qp_num, q->nmcast);
		return EBUSY;
	}
	int rc = uv_queue_destroy((struct uv_queue){ UV_QUEUE_QP, .qp = q }, UV_HANDLE(qp, events_completed));
	if (!rc) {
		free(q->st.inl);
		free(q->mcast);
		free(q);
	} else if (q->xrcd) {
		struct uv_dev *d = uv_dev_lock(qp->context);
		q->closing = false;
		pthread_mutex_unlock(&d->lock);
	}
	return rc;
}

UV_EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
	return uv_errno(uv_destroy_qp_body(qp));
}

/* ------------------------------------------------------------------ ECE, data-in-order */

UV_NOT_OFFERED_BEGIN
UV_EXPORT UV_NOT_OFFERED(int, ibv_query_ece, (struct ibv_qp *qp, struct ibv_ece *ece),
			 "enhanced connection establishment (ibv_query_ece)", EOPNOTSUPP)
UV_EXPORT UV_NOT_OFFERED(int, ibv_set_ece, (struct ibv_qp *qp, struct ibv_ece *ece),
			 "enhanced connection establishment (ibv_set_ece)", EOPNOTSUPP)
UV_NOT_OFFERED_END

UV_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp; (void)op; (void)flags;
	/* 0: data may not be written in order (the conservative answer the API allows) */
	return 0;
}

/* ------------------------------------------------------------------ multicast */

/* ibv_attach_mcast(3) / ibv_detach_mcast(3): a UD QP joins or leaves the multicast group
 * gid (ATTACH_TO_MCG / DETACH_FROM_MCG, hw/mlx5 mx5_qp_mcast).  The LID is not used on
 * RoCE (Linux ib_attach_mcast checks it only on InfiniBand ports).  EINVAL for a QP that
 * is not UD or a GID that is not multicast, as Linux's ib_attach_mcast returns; a QP
 * still attached cannot be destroyed (EBUSY, ibv_destroy_qp). */
static int qp_mcast(struct ibv_qp *qp, const union ibv_gid *gid, int attach)
{
	if (!qp || !gid)
		return EINVAL;
	struct uv_qp *q = uv_qp_of(qp);
	struct uv_dev *d = uv_ctx_dev(qp->context);
	pthread_mutex_lock(&d->lock);
	/* the groups the QP is in, as Linux uverbs keeps them (uverbs_cmd.c
	 * ib_uverbs_attach_mcast / _detach_mcast): attaching again succeeds without a
	 * command, detaching from a group it is not in is EINVAL without one */
	unsigned i = 0;
	while (i < q->nmcast && memcmp(q->mcast[i], gid->raw, 16))
		i++;
	int rc = 0;
	if (attach && i == q->nmcast && q->nmcast == q->mcast_cap) {
		unsigned cap = q->mcast_cap ? 2 * q->mcast_cap : 4;
		uint8_t (*n)[16] = realloc(q->mcast, cap * sizeof(*n));
		if (!n)
			rc = ENOMEM;
		else
			q->mcast = n, q->mcast_cap = cap;
	}
	if (!rc && (attach ? i == q->nmcast : i < q->nmcast)) {
		rc = mx5_qp_mcast(q->m, gid->raw, attach);
		if (rc)
			rc = uv_err(d, rc, attach ? "ibv_attach_mcast" : "ibv_detach_mcast");
		else if (attach)
			memcpy(q->mcast[q->nmcast++], gid->raw, 16);
		else
			memcpy(q->mcast[i], q->mcast[--q->nmcast], 16);
	} else if (!rc && !attach) {
		rc = EINVAL;
	}
	pthread_mutex_unlock(&d->lock);
	return rc;
}

static int uv_attach_mcast_body(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)lid;
	return qp_mcast(qp, gid, 1);
}

UV_EXPORT int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return uv_errno(uv_attach_mcast_body(qp, gid, lid));
}

static int uv_detach_mcast_body(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)lid;
	return qp_mcast(qp, gid, 0);
}

UV_EXPORT int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return uv_errno(uv_detach_mcast_body(qp, gid, lid));
}
