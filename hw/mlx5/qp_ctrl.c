/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Queue pairs: creation with SQ/RQ sizing, state transitions, query (PRM CREATE_QP
 * 0x500 ... 2RST_QP 0x50a, qpc, ads; DESTROY_QP is objects.c's).  The rings' runtime
 * state is the data path's (sq.h): filled here, posted to there.
 *
 * Sizing follows the PRM's WQE rules as Linux's and rdma-core's mlx5 do: a send WQE is a
 * control segment plus the transport's segments (RC: remote address + atomic, UC: remote
 * address, UD: datagram address vector) plus either the data segments or the inline
 * data (4-byte header, 16-byte units), rounded up to 64-byte basic blocks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "hw/mlx5/mx5_objects.h"

/* qpc.st (PRM "QP Context": service type). */
enum { MX5_QPC_ST_RC = 0x0, MX5_QPC_ST_UC = 0x1, MX5_QPC_ST_UD = 0x2, MX5_QPC_ST_XRC = 0x3,
       MX5_QPC_ST_QP1 = 0x8 };
/* qpc.state */
enum { MX5_QPC_RST = 0, MX5_QPC_INIT = 1, MX5_QPC_RTR = 2, MX5_QPC_RTS = 3,
       MX5_QPC_SQER = 4, MX5_QPC_SQD = 5, MX5_QPC_ERR = 6 };
static bool mx5_qpt_xrc(enum mx5_qp_type t)
{
	return t == MX5_QPT_XRC_INI || t == MX5_QPT_XRC_TGT;
}
/* A GSI QP is UD to verbs and QP1 to the device (Linux mlx5_ib gsi.c creates it with
 * st QP1), in every command that carries a qpc. */
static unsigned mx5_qpc_st(enum mx5_qp_type t, bool gsi)
{
	return t == MX5_QPT_RC ? MX5_QPC_ST_RC : t == MX5_QPT_UC ? MX5_QPC_ST_UC
	       : mx5_qpt_xrc(t) ? MX5_QPC_ST_XRC : gsi ? MX5_QPC_ST_QP1 : MX5_QPC_ST_UD;
}
/* RC and both XRC kinds share the reliable transport's rules where the IBTA and the
 * PRM make no difference (Linux mlx5_ib's opt_mask gives MLX5_QP_ST_XRC the RC
 * column; IBTA 14.2: XRC is RC with the receive side in an XRC domain). */
static bool mx5_qpt_rc_like(enum mx5_qp_type t)
{
	return t == MX5_QPT_RC || mx5_qpt_xrc(t);
}
/* qpc.pm_state: path migration armed/rearm/migrated; migrated = no APM (Linux). */
#define MX5_QPC_PM_MIGRATED 0x3
/* qpc.mtu 5 = 4096 bytes (IBTA path MTU encoding) and the message limit Linux gives
 * every UD QP (2^12: one 4096-byte packet; qp.c __mlx5_ib_modify_qp). */
#define MX5_QPC_MTU_4096 5
#define MX5_UD_LOG_MSG_MAX 12
/* qpc.rq_type: regular, SRQ, zero-length (Linux MLX5_NON_ZERO_RQ / SRQ_RQ / ZERO_LEN_RQ). */
enum { MX5_RQ_REGULAR = 0, MX5_RQ_SRQ = 1, MX5_RQ_ZERO = 3 };

/* opt_param_mask bits (PRM "Optional Parameter Mask"; Linux MLX5_QP_OPTPAR_*). */
enum {
	MX5_OPT_RRE = 1u << 1, MX5_OPT_RAE = 1u << 2, MX5_OPT_RWE = 1u << 3,
	MX5_OPT_PKEY_INDEX = 1u << 4, MX5_OPT_Q_KEY = 1u << 5, MX5_OPT_RNR_TIMEOUT = 1u << 6,
	MX5_OPT_ACK_TIMEOUT = 1u << 14,
};
/* RoCE v2 UDP source ports come from the flow label, in 0xC000..0xFFFF (IBTA A17.3;
 * rdma-core rdma_flow_label_to_udp_sport). */
#define MX5_ROCE_SPORT_MIN 0xc000u

/* Bytes of a send WQE ahead of its data.  compat: the way rdma-core's libmlx5 sizes a
 * QP created with ibv_create_qp (providers/mlx5/verbs.c _sq_overhead with the legacy
 * ops, which for RC and UC include BIND_MW and LOCAL_INV): RC and UC reserve room for
 * a memory window bind (ctrl 16 + UMR ctrl 48 + mkey context 64 + 64 of KLMs = 192)
 * although this driver binds no window.  So max_inline_data comes out as libmlx5's (60
 * bytes for RC with one SGE, where ctrl + raddr + atomic gave 12): programs written
 * against it post small inline sends on QPs that asked for no inline data at all
 * (librdmacm's rdma_xclient: 16 bytes), and got EINVAL here.  Not compat: what this
 * driver's WQEs need (ctrl, raddr, atomic), for a queue the compat size would make too
 * deep for the device (mx5_qp_size), where libmlx5 refuses the QP. */
static uint32_t mx5_wqe_overhead(enum mx5_qp_type t, bool compat)
{
	switch (t) {
	case MX5_QPT_RC: return compat ? 16 + 48 + 64 + 64 : 16 + 16 + 16;
	/* ctrl, XRC segment, raddr, atomic; libmlx5 reserves the same 192 bytes as for RC
	 * (_sq_overhead: ctrl + mw_bind_size for IBV_QPT_XRC_SEND) */
	case MX5_QPT_XRC_INI: return compat ? 16 + 48 + 64 + 64 : 16 + 16 + 16 + 16;
	case MX5_QPT_UC: return compat ? 16 + 48 + 64 + 64 : 16 + 16;
	default: return 16 + MX5_AV_SIZE;   /* ctrl, datagram */
	}
}

static uint32_t mx5_pow2_ceil(uint32_t v)
{
	return v <= 1 ? 1 : 1u << plat_ilog2_ceil(v);
}

static uint16_t mx5_flow_label_sport(uint32_t fl)
{
	uint32_t lo = fl & 0x3fff, hi = fl & 0xfc000;
	lo ^= hi >> 14;
	return (uint16_t)(lo | MX5_ROCE_SPORT_MIN);
}

/* A flow label from the QP numbers when the caller gave none (rdma-core
 * rdma_calc_flow_label), so that different connections spread over ECMP paths. */
static uint32_t mx5_calc_flow_label(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t v = (uint64_t)lqpn * rqpn;
	v ^= v >> 20;
	v ^= v >> 40;
	return (uint32_t)(v & 0xfffff);
}

static int mx5_qp_size(struct mx5_device *dev, const struct mx5_qp_init_attr *a,
		       struct mx5_qp *qp)
{
	const struct mx5_qp_cap *c = &a->cap;
	unsigned log_max = (unsigned)MX5_CAP_GEN(dev, log_max_qp_sz);
	uint32_t max_wr = 1u << log_max;
	uint32_t max_wqe_sq = (uint32_t)MX5_CAP_GEN(dev, max_wqe_sz_sq);
	uint32_t max_wqe_rq = (uint32_t)MX5_CAP_GEN(dev, max_wqe_sz_rq);
	/* ds is 6 bits: 63 x 16 bytes is the largest WQE whatever the cap says */
	uint32_t wqe_limit = max_wqe_sq < MX5_MAX_WQE_DS * 16 ? max_wqe_sq : MX5_MAX_WQE_DS * 16;

	if (c->max_send_wr > max_wr)
		return mx5_fail(dev, -EINVAL, "QP max_send_wr %u exceeds device limit %u (log_max_qp_sz %u)",
				c->max_send_wr, max_wr, log_max);
	if (c->max_recv_wr > max_wr)
		return mx5_fail(dev, -EINVAL, "QP max_recv_wr %u exceeds device limit %u (log_max_qp_sz %u)",
				c->max_recv_wr, max_wr, log_max);
	uint32_t inl = c->max_inline_data ? ((c->max_inline_data + 4 + 15) & ~15u) : 0;
	uint32_t data = c->max_send_sge * 16;
	uint32_t wrs = c->max_send_wr ? c->max_send_wr : 1;
	/* libmlx5's WQE size when the queue it makes fits the device, else ours */
	uint32_t ovh = mx5_wqe_overhead(a->type, true);
	uint32_t wqe = ovh + (inl > data ? inl : data);
	uint64_t compat_bbs = (uint64_t)wrs * ((wqe + MX5_SEND_WQE_BB - 1) / MX5_SEND_WQE_BB);
	if (wqe > wqe_limit || compat_bbs > (1u << 15)) {
		ovh = mx5_wqe_overhead(a->type, false);
		wqe = ovh + (inl > data ? inl : data);
	}
	if (wqe > wqe_limit)
		return mx5_fail(dev, -EINVAL,
				"QP send WQE of %u bytes (max_send_sge %u, max_inline_data %u) exceeds "
				"device limit %u (max_wqe_sz_sq %u)", wqe, c->max_send_sge,
				c->max_inline_data, wqe_limit, max_wqe_sq);
	wqe = (wqe + MX5_SEND_WQE_BB - 1) & ~(MX5_SEND_WQE_BB - 1);
	if (wqe > wqe_limit)
		wqe = wqe_limit & ~(MX5_SEND_WQE_BB - 1) ? wqe_limit : wqe;
	uint32_t bbs_per_wqe = (wqe + MX5_SEND_WQE_BB - 1) / MX5_SEND_WQE_BB;
	uint64_t bbs = mx5_pow2_ceil((uint32_t)((uint64_t)wrs * bbs_per_wqe));
	/* qpc.log_sq_size is 4 bits and counts basic blocks */
	uint64_t bb_limit = 1u << 15;
	if (bbs < 4)
		bbs = 4;  /* the largest WQE (<= 16 BBs) and the datapath's ring checks */
	if (bbs < bbs_per_wqe)
		bbs = mx5_pow2_ceil(bbs_per_wqe);
	if (bbs > bb_limit)
		return mx5_fail(dev, -EINVAL,
				"QP send queue of %u WRs x %u basic blocks exceeds device limit %llu "
				"basic blocks (log_sq_size 15)", wrs, bbs_per_wqe,
				(unsigned long long)bb_limit);
	qp->sq_wqe_cnt = (uint32_t)bbs;
	qp->cap.max_send_wr = (uint32_t)(bbs / bbs_per_wqe);
	if (qp->cap.max_send_wr > max_wr)
		qp->cap.max_send_wr = max_wr;
	qp->cap.max_send_sge = (bbs_per_wqe * MX5_SEND_WQE_BB - ovh) / 16;
	if (qp->cap.max_send_sge + ovh / 16 > MX5_MAX_WQE_DS)
		qp->cap.max_send_sge = MX5_MAX_WQE_DS - ovh / 16;
	qp->cap.max_inline_data = bbs_per_wqe * MX5_SEND_WQE_BB - ovh - 4;
	if ((qp->cap.max_inline_data + 4 + 15) / 16 + ovh / 16 > MX5_MAX_WQE_DS)
		qp->cap.max_inline_data = (MX5_MAX_WQE_DS - ovh / 16) * 16 - 4;

	if (a->srq || mx5_qpt_xrc(a->type)) {   /* XRC: receives go to XRC SRQs */
		qp->rq_wqe_cnt = 0;
		qp->cap.max_recv_wr = 0;
		qp->cap.max_recv_sge = 0;
		return 0;
	}
	if (c->max_recv_wr == 0) {
		qp->rq_wqe_cnt = 0;
		return 0;
	}
	uint32_t sge = c->max_recv_sge ? c->max_recv_sge : 1;
	uint32_t stride = mx5_rq_stride(sge);
	if (stride > max_wqe_rq)
		return mx5_fail(dev, -EINVAL,
				"QP max_recv_sge %u needs %u-byte receive WQEs, device limit %u (max_wqe_sz_rq)",
				c->max_recv_sge, stride, max_wqe_rq);
	qp->rq_stride = stride;
	qp->rq_wqe_cnt = mx5_pow2_ceil(c->max_recv_wr);
	/* At least one 64-byte basic block of receive queue, so that the send queue that
	 * follows it in the buffer starts 64-byte aligned (PRM: send WQEs are built of
	 * 64-byte basic blocks; rdma-core providers/mlx5/verbs.c mlx5_calc_rq_size:
	 * wq_size = max(wq_size, MLX5_SEND_WQE_BB); Linux mlx5_ib set_rq_size likewise). */
	if ((uint64_t)qp->rq_wqe_cnt * stride < MX5_SEND_WQE_BB)
		qp->rq_wqe_cnt = MX5_SEND_WQE_BB / stride;
	qp->cap.max_recv_wr = qp->rq_wqe_cnt;
	qp->cap.max_recv_sge = stride / 16;
	return 0;
}

static int mx5_ibv_qpt(enum mx5_qp_type t)
{
	switch (t) {
	case MX5_QPT_RC: return IBV_QPT_RC;
	case MX5_QPT_UC: return IBV_QPT_UC;
	case MX5_QPT_XRC_INI: return IBV_QPT_XRC_SEND;
	case MX5_QPT_XRC_TGT: return IBV_QPT_XRC_RECV;
	default: return IBV_QPT_UD;
	}
}

/* (Re)initialise the data path's view of the rings: at creation and on ->RST. */
static int mx5_qp_rings_init(struct mx5_qp *qp)
{
	struct mx5_device *dev = qp->dev;
	size_t rq_bytes = (size_t)qp->rq_wqe_cnt * qp->rq_stride;
	struct mx5_sq_attr sa = {
		.buf = (uint8_t *)qp->q.dma.va + rq_bytes,
		.wqe_cnt = qp->sq_wqe_cnt,
		.qpn = qp->qpn,
		.max_inline = qp->cap.max_inline_data,
		.max_sge = qp->cap.max_send_sge,
		.qp_type = mx5_ibv_qpt(qp->type),
		.sq_sig_all = qp->sq_sig_all,
		.av_offset = 0,
		.wrid = qp->sq_wrid,
		.wqe_next = qp->sq_wqe_next,
		.dbrec = qp->q.dbrec,
		.bar = &dev->bar0,
		.bf_off = qp->bf.off,
		.bf_size = qp->bf.half,
		.bf_inline_only = dev->attr.bf_policy == MX5_BF_INLINE_ONLY,
		.max_msg = mx5_max_msg((unsigned)MX5_CAP_GEN(dev, log_max_msg)),
	};
	if (qp->sq.bar) {   /* across a reset: the same register, the half it was at */
		sa.bf_off = qp->sq.bf_off;
		sa.av_offset = qp->sq.av_offset;
	}
	/* an XRC target has no send queue (qpc.no_sq) and no receive queue: nothing for
	 * the data path; its receives complete on the CQs of the XRC SRQs (cq.h) */
	if (qp->type == MX5_QPT_XRC_TGT) {
		memset(qp->q.dbrec, 0, 8);
		qp->ref.sq = NULL;
		qp->ref.rq = NULL;
		qp->ref.srq = NULL;
		qp->ref.scq = NULL;
		qp->ref.rcq = NULL;
		return 0;
	}
	int rc = mx5_sq_init(&qp->sq, &sa);
	if (rc)
		return mx5_fail(dev, rc, "CREATE_QP: send queue of %u basic blocks rejected by the data path",
				qp->sq_wqe_cnt);
	memset(qp->q.dbrec, 0, 8);
	if (qp->rq_wqe_cnt) {
		rc = mx5_rq_init(&qp->rq, qp->q.dma.va, qp->rq_wqe_cnt, qp->cap.max_recv_sge,
				 qp->rq_wrid, qp->q.dbrec);
		if (rc)
			return mx5_fail(dev, rc, "CREATE_QP: receive queue of %u WQEs rejected by the data path",
					qp->rq_wqe_cnt);
		qp->rq.max_msg = sa.max_msg;
	}
	qp->ref.sq = &qp->sq;
	qp->ref.rq = qp->rq_wqe_cnt ? &qp->rq : NULL;
	qp->ref.srq = qp->srq ? &qp->srq->ring : NULL;
	qp->ref.scq = &qp->scq->ring;
	qp->ref.rcq = &qp->rcq->ring;
	return 0;
}

static void mx5_qp_unlink_cqs(struct mx5_qp *qp)
{
	/* the table is the pollers': change it under the CQ's lock (mx5_cq_ring_forget
	 * takes it too) */
	if (qp->scq) {
		plat_spin_lock(&qp->scq->ring.lock);
		mx5_wq_table_clear(qp->scq->wqs, qp->qpn);
		plat_spin_unlock(&qp->scq->ring.lock);
		mx5_cq_ring_forget(&qp->scq->ring, qp->qpn);
	}
	if (qp->rcq && qp->rcq != qp->scq) {
		plat_spin_lock(&qp->rcq->ring.lock);
		mx5_wq_table_clear(qp->rcq->wqs, qp->qpn);
		plat_spin_unlock(&qp->rcq->ring.lock);
		mx5_cq_ring_forget(&qp->rcq->ring, qp->qpn);
	}
}

/* The memory of a QP and its BlueFlame register, whether CREATE_QP got as far as the
 * device or not. */
static void mx5_qp_free(struct mx5_qp *qp)
{
	if (qp->bf_held)
		mx5_uar_bf_put(qp->dev, &qp->bf);
	mx5_qbuf_free(qp->dev, &qp->q);
	free(qp->sq_wrid);
	free(qp->sq_wqe_next);
	free(qp->rq_wrid);
	free(qp);
}

void mx5_qp_release(struct mx5_qp *qp)
{
	/* the device wrote its last CQE for this QP before DESTROY_QP returned: the ones
	 * not yet polled go, SRQ WQEs back to the SRQ (rdma-core providers/mlx5/verbs.c
	 * mlx5_destroy_qp, __mlx5_cq_clean on both CQs), so no poll returns a completion of
	 * a QP that is gone or of a later QP given the same number */
	if (qp->rcq)
		mx5_cq_ring_clean(&qp->rcq->ring, qp->qpn, qp->srq ? &qp->srq->ring : NULL);
	if (qp->scq && qp->scq != qp->rcq)
		mx5_cq_ring_clean(&qp->scq->ring, qp->qpn, NULL);
	mx5_qp_unlink_cqs(qp);
	qp->pd->refs--;
	qp->scq->refs--;
	if (qp->rcq != qp->scq)
		qp->rcq->refs--;
	if (qp->srq)
		qp->srq->refs--;
	if (qp->xrcd)
		qp->xrcd->refs--;
	plat_list_del(&qp->link);
	mx5_qp_free(qp);
}

int mx5_qp_create(struct mx5_pd *pd, const struct mx5_qp_init_attr *a, struct mx5_qp **out)
{
	if (!a || !out || (!pd && !(a->type == MX5_QPT_XRC_TGT && a->xrcd)))
		return -EINVAL;
	struct mx5_device *dev = pd ? pd->dev : a->xrcd->dev;
	struct mx5_xrc_devr *devr = NULL;
	*out = NULL;
	if (dev->health != MX5_HEALTH_OK)
		return mx5_fail(dev, -ENODEV, "CREATE_QP: device is in fatal error");
	if (a->type != MX5_QPT_RC && a->type != MX5_QPT_UC && a->type != MX5_QPT_UD && !mx5_qpt_xrc(a->type))
		return mx5_fail(dev, -EINVAL, "CREATE_QP: QP type %d is not RC, UC, UD or XRC", a->type);
	if (a->type == MX5_QPT_XRC_TGT) {
		if (!a->xrcd || a->xrcd->dev != dev)
			return mx5_fail(dev, -EINVAL, "CREATE_QP: an XRC target QP needs an XRC domain of its device");
	} else if (!a->send_cq || (!a->recv_cq && !a->srq && a->type != MX5_QPT_XRC_INI)) {
		return mx5_fail(dev, -EINVAL, "CREATE_QP: %s CQ missing", a->send_cq ? "receive" : "send");
	}
	if ((a->type == MX5_QPT_RC && !MX5_CAP_GEN(dev, rc)) ||
	    (a->type == MX5_QPT_UC && !MX5_CAP_GEN(dev, uc)) ||
	    (a->type == MX5_QPT_UD && !MX5_CAP_GEN(dev, ud)) ||
	    (mx5_qpt_xrc(a->type) && !MX5_CAP_GEN(dev, xrc)))
		return mx5_fail(dev, -EOPNOTSUPP, "CREATE_QP: device does not offer this QP type");
	if (mx5_qpt_xrc(a->type)) {
		int drc = mx5_xrc_devr_get(dev, &devr);
		if (drc)
			return drc;
		if (a->type == MX5_QPT_XRC_TGT)
			pd = devr->p0;   /* Linux create_xrc_tgt_qp: devr->p0 */
	}

	struct mx5_qp *qp = calloc(1, sizeof(*qp));
	if (!qp)
		return mx5_fail(dev, -ENOMEM, "CREATE_QP: out of memory");
	/* Locking until the verbs layer says otherwise (a zero-filled pthread spinlock is
	 * held on x86: hw/platform/thread.h); a reset leaves them alone (sq.h). */
	plat_spin_init(&qp->sq.lock, 0);
	plat_spin_init(&qp->rq.lock, 0);
	qp->dev = dev;
	qp->pd = pd;
	qp->type = a->type;
	qp->gsi = a->gsi != 0;
	qp->scq = a->send_cq;
	qp->rcq = a->recv_cq ? a->recv_cq : a->send_cq;
	qp->srq = a->srq;
	qp->sq_sig_all = a->sq_sig_all;
	int rc = 0;
	if (a->type == MX5_QPT_XRC_TGT) {
		/* no queue of its own: both CQs devr->c0 (Linux create_xrc_tgt_qp) */
		qp->scq = qp->rcq = devr->c0;
		qp->srq = NULL;
		qp->xrcd = a->xrcd;
	} else {
		if (a->type == MX5_QPT_XRC_INI) {
			/* receives nothing: cqn_rcv devr->c0 (create_qp_common) */
			qp->rcq = devr->c0;
			qp->srq = NULL;
		}
		rc = mx5_qp_size(dev, a, qp);
	}
	if (rc) {
		free(qp);
		return rc;
	}
	size_t rq_bytes = (size_t)qp->rq_wqe_cnt * qp->rq_stride;
	size_t sq_bytes = (size_t)qp->sq_wqe_cnt * MX5_SEND_WQE_BB;
	qp->sq_wrid = calloc(qp->sq_wqe_cnt ? qp->sq_wqe_cnt : 1, sizeof(uint64_t));
	qp->sq_wqe_next = calloc(qp->sq_wqe_cnt ? qp->sq_wqe_cnt : 1, sizeof(uint32_t));
	qp->rq_wrid = calloc(qp->rq_wqe_cnt ? qp->rq_wqe_cnt : 1, sizeof(uint64_t));
	if (!qp->sq_wrid || !qp->sq_wqe_next || !qp->rq_wrid) {
		rc = mx5_fail(dev, -ENOMEM, "CREATE_QP: out of memory");
		goto err;
	}
	rc = mx5_qbuf_alloc(dev, rq_bytes + sq_bytes, &qp->q, "CREATE_QP");
	if (rc)
		goto err;

	/* the QP's doorbells and BlueFlame writes come through the UAR of its register */
	mx5_uar_bf_get(dev, &qp->bf);
	qp->bf_held = true;
	/* an XRC QP names an XRC SRQ it does not use, and an XRC domain: the user's for a
	 * target, devr->xrcdn1 for an initiator (Linux create_xrc_tgt_qp, create_qp_common) */
	bool xrc = mx5_qpt_xrc(a->type);
	unsigned rq_type = qp->srq || xrc ? MX5_RQ_SRQ : qp->rq_wqe_cnt ? MX5_RQ_REGULAR : MX5_RQ_ZERO;
	bool own_rq = rq_type == MX5_RQ_REGULAR;
	uint32_t srqn = xrc ? devr->s0->srqn : qp->srq ? qp->srq->srqn : 0;
	uint32_t xrcdn = a->type == MX5_QPT_XRC_TGT ? a->xrcd->xrcdn : xrc ? devr->x1->xrcdn : 0;
	bool no_sq = a->type == MX5_QPT_XRC_TGT;
	/* A field that does not apply (the SRQ number without an SRQ, the RQ's size and
	 * stride without a regular RQ) is left 0, as the zeroed input has it. */
	const struct mx5_ctx_field qpc[] = {
		MX5_CTX(qpc, st, mx5_qpc_st(a->type, a->gsi)),
		MX5_CTX(qpc, pm_state, MX5_QPC_PM_MIGRATED),
		MX5_CTX(qpc, pd, pd->pdn),
		MX5_CTX(qpc, uar_page, qp->bf.uar_index),
		MX5_CTX(qpc, log_page_size, dev->log_host_page - MX5_FW_PAGE_SHIFT),
		/* no log_msg_max here: it is an INIT2RTR field (mx5_qp_fill_qpc) */
		/* Timestamp format the device's caps call for (init.c mx5_qp_default_ts,
		 * after Linux mlx5_get_qp_default_ts). */
		MX5_CTX(qpc, ts_format, mx5_qp_default_ts(dev)),
		MX5_CTX(qpc, log_sq_size, no_sq ? 0 : plat_ilog2_ceil(qp->sq_wqe_cnt)),
		MX5_CTX(qpc, no_sq, no_sq ? 1 : 0),
		MX5_CTX(qpc, rq_type, rq_type),
		MX5_CTX(qpc, srqn_rmpn_xrqn, srqn),
		MX5_CTX(qpc, xrcd, xrcdn),
		MX5_CTX(qpc, log_rq_size, own_rq ? plat_ilog2_ceil(qp->rq_wqe_cnt) : 0),
		MX5_CTX(qpc, log_rq_stride, own_rq ? plat_ilog2_ceil(qp->rq_stride) - 4 : 0),
		MX5_CTX(qpc, cqn_snd, qp->scq->cqn),
		MX5_CTX(qpc, cqn_rcv, qp->rcq->cqn),
		MX5_CTX(qpc, dbr_addr, qp->q.dbrec_iova),
		/* fast registration enable (PRM "QP Context"): a device completes a UMR
		 * WQE in error on a QP created without it; Linux sets it on its kernel
		 * QPs, the UMR QP among them (drivers/infiniband/hw/mlx5/qp.c
		 * create_kernel_qp) */
		MX5_CTX(qpc, fre, a->fre ? 1 : 0),
		/* PRM "QP Context" block_lb_mc: the QP gets no copy of the multicast it sends
		 * (Linux mlx5_ib qp.c sets it for IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK) */
		MX5_CTX(qpc, block_lb_mc, a->block_lb_mc ? 1 : 0),
	};
	rc = mx5_create_queue(dev, &mx5_create_qp_cmd, &qp->q, qpc, MX5_NFIELDS(qpc), &qp->qpn);
	if (rc)
		goto err;
	qp->state = MX5_QPS_RESET;
	rc = mx5_qp_rings_init(qp);
	if (!rc) {
		plat_spin_lock(&qp->scq->ring.lock);
		rc = mx5_wq_table_set(qp->scq->wqs, qp->qpn, &qp->ref);
		plat_spin_unlock(&qp->scq->ring.lock);
	}
	if (!rc && qp->rcq != qp->scq) {
		plat_spin_lock(&qp->rcq->ring.lock);
		rc = mx5_wq_table_set(qp->rcq->wqs, qp->qpn, &qp->ref);
		plat_spin_unlock(&qp->rcq->ring.lock);
	}
	if (rc) {
		mx5_fail(dev, rc, "CREATE_QP: QP 0x%x: completion table: %d", qp->qpn, rc);
		mx5_qp_unlink_cqs(qp);
		uint8_t din[PRM_SIZE(destroy_qp_in)] = { 0 }, dout[PRM_SIZE(destroy_qp_out)];
		PRM_SET(destroy_qp_in, din, opcode, PRM_CMD_OP_DESTROY_QP);
		PRM_SET(destroy_qp_in, din, qpn, qp->qpn);
		mx5_exec(dev, din, sizeof(din), dout, sizeof(dout));
		goto err;
	}
	pd->refs++;
	qp->scq->refs++;
	if (qp->rcq != qp->scq)
		qp->rcq->refs++;
	if (qp->srq)
		qp->srq->refs++;
	if (qp->xrcd)
		qp->xrcd->refs++;
	qp->attr.qp_state = MX5_QPS_RESET;
	plat_list_add(&dev->qps, &qp->link);
	*out = qp;
	return 0;
err:
	mx5_qp_free(qp);
	return rc;
}

/* ---- modify ---- */

/* Optional parameters each transition accepts per service type (PRM "Optional
 * Parameter Mask"; the same table as Linux mlx5_ib's opt_mask): UC has no RDMA READ,
 * atomics or RNR, UD no access flags.  Bits the caller's attributes imply beyond these
 * are dropped, as Linux does, rather than make the firmware refuse the command. */
static uint32_t mx5_opt_allowed(uint16_t op, enum mx5_qp_type t)
{
	const uint32_t rw = MX5_OPT_RRE | MX5_OPT_RAE | MX5_OPT_RWE;
	unsigned st = mx5_qpt_rc_like(t) ? 0 : t == MX5_QPT_UC ? 1 : 2;
	switch (op) {
	case PRM_CMD_OP_INIT2INIT_QP:
	case PRM_CMD_OP_INIT2RTR_QP: {
		const uint32_t m[3] = { rw | MX5_OPT_PKEY_INDEX, MX5_OPT_RWE | MX5_OPT_PKEY_INDEX,
					MX5_OPT_PKEY_INDEX | MX5_OPT_Q_KEY };
		return m[st];
	}
	case PRM_CMD_OP_RTR2RTS_QP: {
		const uint32_t m[3] = { rw | MX5_OPT_RNR_TIMEOUT, MX5_OPT_RWE, MX5_OPT_Q_KEY };
		return m[st];
	}
	case PRM_CMD_OP_RTS2RTS_QP: {
		const uint32_t m[3] = { rw | MX5_OPT_RNR_TIMEOUT | MX5_OPT_ACK_TIMEOUT, MX5_OPT_RWE,
					MX5_OPT_Q_KEY };
		return m[st];
	}
	default:
		return 0;
	}
}

static const char *mx5_attr_name(unsigned bit)
{
	switch (bit) {
	case MX5_QP_STATE: return "qp_state";
	case MX5_QP_ACCESS_FLAGS: return "qp_access_flags";
	case MX5_QP_PKEY_INDEX: return "pkey_index";
	case MX5_QP_PORT: return "port_num";
	case MX5_QP_QKEY: return "qkey";
	case MX5_QP_AV: return "ah_attr (address vector)";
	case MX5_QP_PATH_MTU: return "path_mtu";
	case MX5_QP_TIMEOUT: return "timeout";
	case MX5_QP_RETRY_CNT: return "retry_cnt";
	case MX5_QP_RNR_RETRY: return "rnr_retry";
	case MX5_QP_RQ_PSN: return "rq_psn";
	case MX5_QP_MAX_QP_RD_ATOMIC: return "max_rd_atomic";
	case MX5_QP_MIN_RNR_TIMER: return "min_rnr_timer";
	case MX5_QP_SQ_PSN: return "sq_psn";
	case MX5_QP_MAX_DEST_RD_ATOMIC: return "max_dest_rd_atomic";
	case MX5_QP_DEST_QPN: return "dest_qp_num";
	default: return "attribute";
	}
}

static const char *mx5_state_name(enum mx5_qp_state s)
{
	static const char *n[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };
	return (unsigned)s < 7 ? n[s] : "?";
}

/* Attributes a transition must carry (IBTA 11.2.4.2 / ibv_modify_qp(3) table). */
static unsigned mx5_required(enum mx5_qp_type t, enum mx5_qp_state from, enum mx5_qp_state to)
{
	unsigned r = MX5_QP_STATE;
	if (from == MX5_QPS_RESET && to == MX5_QPS_INIT)
		return r | MX5_QP_PKEY_INDEX | MX5_QP_PORT |
		       (t == MX5_QPT_UD ? MX5_QP_QKEY : MX5_QP_ACCESS_FLAGS);
	/* XRC (Linux verbs.c qp_state_table, IB_QPT_XRC_INI / _TGT columns): an
	 * initiator's RTR has no responder attributes, a target's RTS no requester ones
	 * but the ACK timeout */
	if (from == MX5_QPS_INIT && to == MX5_QPS_RTR)
		return t == MX5_QPT_RC || t == MX5_QPT_XRC_TGT ? MX5_QP_RTR_RC
		       : t == MX5_QPT_UC || t == MX5_QPT_XRC_INI ? MX5_QP_RTR_UC : r;
	if (from == MX5_QPS_RTR && to == MX5_QPS_RTS)
		return t == MX5_QPT_RC || t == MX5_QPT_XRC_INI ? MX5_QP_RTS_RC
		       : t == MX5_QPT_XRC_TGT ? MX5_QP_RTS_UC | MX5_QP_TIMEOUT : MX5_QP_RTS_UC;
	return r;
}

/* Attributes a transition may carry besides the required ones (IBTA 11.2.4.2, the
 * table ibv_modify_qp(3) and Linux ib_modify_qp_is_ok follow; alternate paths and path
 * migration are not offered).  The ACK timeout in RTS->RTS is the mlx5 extension the PRM
 * gives an opt_param_mask bit.  Anything else is refused: the device has no way to take
 * it (responder resources, for one, are fixed at INIT->RTR), and accepting it would
 * leave the driver's record and the device disagreeing. */
static unsigned mx5_optional(enum mx5_qp_type t, enum mx5_qp_state from, enum mx5_qp_state to)
{
	if (to == MX5_QPS_RESET || to == MX5_QPS_ERR)
		return MX5_QP_CUR_STATE;
	if (from == MX5_QPS_INIT && to == MX5_QPS_INIT)
		return MX5_QP_PKEY_INDEX | MX5_QP_PORT | (t == MX5_QPT_UD ? MX5_QP_QKEY : MX5_QP_ACCESS_FLAGS);
	if (from == MX5_QPS_INIT && to == MX5_QPS_RTR)
		return MX5_QP_PKEY_INDEX | (t == MX5_QPT_UD ? MX5_QP_QKEY : MX5_QP_ACCESS_FLAGS);
	if ((from == MX5_QPS_RTR || from == MX5_QPS_RTS) && to == MX5_QPS_RTS) {
		unsigned o = MX5_QP_CUR_STATE;
		if (t == MX5_QPT_UD)
			return o | MX5_QP_QKEY;
		o |= MX5_QP_ACCESS_FLAGS;
		if (mx5_qpt_rc_like(t))
			o |= MX5_QP_MIN_RNR_TIMER | (from == MX5_QPS_RTS ? MX5_QP_TIMEOUT : 0);
		return o;
	}
	return 0;
}

/* qpc.log_sra_max / log_rra_max hold powers of two.  The requester may never have more
 * RDMA READs and atomics in flight than max_rd_atomic (IBTA 9.4.4: the responder only
 * promised that many), so it rounds down; the responder must accept at least
 * max_dest_rd_atomic, so it rounds up. */
static unsigned mx5_log_rd_floor(uint8_t n)
{
	unsigned l = 0;
	while (n >> (l + 1))
		l++;
	return l;
}

static unsigned mx5_log_rd_ceil(uint8_t n)
{
	return n ? plat_ilog2_ceil(n) : 0;
}

static void mx5_set_access(uint8_t *c, unsigned acc, uint32_t *opt, bool optional)
{
	PRM_SET(qpc, c, rre, (acc & MX5_ACCESS_REMOTE_READ) ? 1 : 0);
	PRM_SET(qpc, c, rwe, (acc & MX5_ACCESS_REMOTE_WRITE) ? 1 : 0);
	PRM_SET(qpc, c, rae, (acc & MX5_ACCESS_REMOTE_ATOMIC) ? 1 : 0);
	if (optional)
		*opt |= MX5_OPT_RRE | MX5_OPT_RWE | MX5_OPT_RAE;
}

/* The RoCE v2 primary address path (ads): GID index, destination GID and MAC, hop
 * limit, traffic class, flow label and the UDP source port derived from it. */
static void mx5_set_av(struct mx5_qp *qp, uint8_t *ads, const struct mx5_qp_attr *a)
{
	const struct mx5_ah_attr *ah = &a->ah;
	PRM_SET(ads, ads, grh, 1);
	PRM_SET(ads, ads, src_addr_index, ah->sgid_index);
	PRM_SET(ads, ads, hop_limit, ah->hop_limit ? ah->hop_limit : 64);
	PRM_SET(ads, ads, tclass, ah->traffic_class);
	PRM_SET(ads, ads, dscp, ah->traffic_class >> 2);
	uint32_t fl = ah->flow_label & 0xfffff;
	PRM_SET(ads, ads, flow_label, fl);
	if (!fl)
		fl = mx5_calc_flow_label(qp->qpn, a->dest_qp_num);
	PRM_SET(ads, ads, udp_sport, mx5_flow_label_sport(fl));
	memcpy(PRM_ADDR(ads, ads, rgid_rip), ah->dgid, 16);
	PRM_SET(ads, ads, rmac_47_32, ((uint32_t)ah->dmac[0] << 8) | ah->dmac[1]);
	PRM_SET(ads, ads, rmac_31_0, ((uint32_t)ah->dmac[2] << 24) | ((uint32_t)ah->dmac[3] << 16) |
					   ((uint32_t)ah->dmac[4] << 8) | ah->dmac[5]);
	PRM_SET(ads, ads, eth_prio, ah->sl & 7);
	PRM_SET(ads, ads, vhca_port_num, ah->port_num ? ah->port_num : 1);
}

/* Step 1: the command that takes a QP from `from` to `to` (PRM "QP State Transitions"
 * commands RST2INIT_QP .. 2RST_QP); 0 when the IBTA state machine (10.3) forbids it. */
static uint16_t mx5_qp_transition_op(enum mx5_qp_state from, enum mx5_qp_state to)
{
	if (to == MX5_QPS_RESET)
		return PRM_CMD_OP_2RST_QP;
	if (to == MX5_QPS_ERR)
		return PRM_CMD_OP_2ERR_QP;
	if (from == MX5_QPS_RESET && to == MX5_QPS_INIT)
		return PRM_CMD_OP_RST2INIT_QP;
	if (from == MX5_QPS_INIT && to == MX5_QPS_INIT)
		return PRM_CMD_OP_INIT2INIT_QP;
	if (from == MX5_QPS_INIT && to == MX5_QPS_RTR)
		return PRM_CMD_OP_INIT2RTR_QP;
	if (from == MX5_QPS_RTR && to == MX5_QPS_RTS)
		return PRM_CMD_OP_RTR2RTS_QP;
	if (from == MX5_QPS_RTS && to == MX5_QPS_RTS)
		return PRM_CMD_OP_RTS2RTS_QP;
	return 0;
}

/* Step 2: the mask carries every required attribute and no other than the optional
 * ones, and each value is within the device's limits. */
static int mx5_qp_check_attrs(struct mx5_qp *qp, const struct mx5_qp_attr *a, unsigned mask,
			      enum mx5_qp_state from, enum mx5_qp_state to)
{
	struct mx5_device *dev = qp->dev;
	unsigned need = mx5_required(qp->type, from, to);
	unsigned may = need | mx5_optional(qp->type, from, to);

	for (unsigned bit = 1; bit; bit <<= 1) {
		if ((need & bit) && !(mask & bit))
			return mx5_fail(dev, -EINVAL,
					"modify QP 0x%x %s -> %s: missing attribute %s", qp->qpn,
					mx5_state_name(from), mx5_state_name(to), mx5_attr_name(bit));
		if ((mask & bit) && !(may & bit))
			return mx5_fail(dev, -EINVAL,
					"modify QP 0x%x %s -> %s: attribute %s cannot be set in this transition",
					qp->qpn, mx5_state_name(from), mx5_state_name(to), mx5_attr_name(bit));
	}
	if ((mask & MX5_QP_PATH_MTU) && (a->path_mtu < 1 || a->path_mtu > 5))
		return mx5_fail(dev, -EINVAL, "modify QP 0x%x: path_mtu %u is not 1..5 (256..4096)",
				qp->qpn, a->path_mtu);
	if ((mask & MX5_QP_PORT) && (a->port_num < 1 || a->port_num > MX5_CAP_GEN(dev, num_ports)))
		return mx5_fail(dev, -EINVAL, "modify QP 0x%x: port_num %u: device has %u ports",
				qp->qpn, a->port_num, (unsigned)MX5_CAP_GEN(dev, num_ports));
	if ((mask & MX5_QP_AV) && a->ah.sgid_index >= mx5_gid_table_len(dev))
		return mx5_fail(dev, -EINVAL, "modify QP 0x%x: GID index %u exceeds device limit %u",
				qp->qpn, a->ah.sgid_index, mx5_gid_table_len(dev));
	/* An empty RoCE address entry has no source IP or MAC to send from, and incoming
	 * RoCE is matched against the table (PRM "RoCE Address Table"): refuse it here,
	 * as Linux does when the GID attribute lookup fails (ib_get_cached_gid / rdma_
	 * get_gid_attr in drivers/infiniband/core/verbs.c, ib_modify_qp -> -EINVAL). */
	if ((mask & MX5_QP_AV) &&
	    !mx5_gid_valid(dev, a->ah.port_num ? a->ah.port_num : 1, a->ah.sgid_index))
		return mx5_fail(dev, -EINVAL, "modify QP 0x%x: GID index %u is empty (no address programmed)",
				qp->qpn, a->ah.sgid_index);
	if ((mask & MX5_QP_MAX_QP_RD_ATOMIC) &&
	    a->max_rd_atomic > (1u << MX5_CAP_GEN(dev, log_max_ra_req_qp)))
		return mx5_fail(dev, -EINVAL, "modify QP 0x%x: max_rd_atomic %u exceeds device limit %u",
				qp->qpn, a->max_rd_atomic, 1u << MX5_CAP_GEN(dev, log_max_ra_req_qp));
	if ((mask & MX5_QP_MAX_DEST_RD_ATOMIC) &&
	    a->max_dest_rd_atomic > (1u << MX5_CAP_GEN(dev, log_max_ra_res_qp)))
		return mx5_fail(dev, -EINVAL, "modify QP 0x%x: max_dest_rd_atomic %u exceeds device limit %u",
				qp->qpn, a->max_dest_rd_atomic, 1u << MX5_CAP_GEN(dev, log_max_ra_res_qp));

	return 0;
}

/* Step 3: the qpc and opt_param_mask of a transition that carries one (every
 * transition but 2RST and 2ERR). */
static void mx5_qp_fill_qpc(struct mx5_qp *qp, uint16_t op, const struct mx5_qp_attr *a, unsigned mask,
			    uint8_t *in)
{
	struct mx5_device *dev = qp->dev;
	uint32_t opt = 0;

	uint8_t *c = PRM_ADDR(rst2init_qp_in, in, qpc);
	uint8_t *ads = PRM_ADDR(qpc, c, primary_address_path);
	bool rst2init = op == PRM_CMD_OP_RST2INIT_QP;
	/* the service type in every transition's qpc, as Linux __mlx5_ib_modify_qp writes
	 * it (the field-set oracle, tests/mlx5/test_field_set.c, holds us to it) */
	PRM_SET(qpc, c, st, mx5_qpc_st(qp->type, qp->gsi));
	if (mask & (MX5_QP_ACCESS_FLAGS | MX5_QP_MAX_DEST_RD_ATOMIC)) {
		unsigned acc = (mask & MX5_QP_ACCESS_FLAGS) ? a->qp_access_flags : qp->attr.qp_access_flags;
		unsigned resources = (mask & MX5_QP_MAX_DEST_RD_ATOMIC) ? a->max_dest_rd_atomic
									: qp->attr.max_dest_rd_atomic;
		/* Without responder resources the QP cannot answer READs or atomics:
		 * rre and rae stay off until max_dest_rd_atomic is set (Linux mlx5_ib
		 * to_mlx5_access_flags), and the device NAKs them as invalid requests. */
		if (!resources)
			acc &= ~(unsigned)(MX5_ACCESS_REMOTE_READ | MX5_ACCESS_REMOTE_ATOMIC);
		mx5_set_access(c, acc, &opt, !rst2init);
	}
	if (mask & MX5_QP_PKEY_INDEX) {
		PRM_SET(ads, ads, pkey_index, a->pkey_index);
		if (!rst2init)
			opt |= MX5_OPT_PKEY_INDEX;
	}
	if (mask & MX5_QP_PORT)
		PRM_SET(ads, ads, vhca_port_num, a->port_num);
	if (rst2init) {
		PRM_SET(qpc, c, pm_state, MX5_QPC_PM_MIGRATED);
		/* the device's counter set, named at RST2INIT as Linux mlx5_ib's
		 * __mlx5_ib_modify_qp does (counters.c) */
		PRM_SET(qpc, c, counter_set_id, mx5_counters_set_id(dev));
	}
	if (mask & MX5_QP_QKEY) {
		PRM_SET(qpc, c, q_key, a->qkey);
		if (!rst2init)
			opt |= MX5_OPT_Q_KEY;
	}
	if (mask & MX5_QP_AV)
		mx5_set_av(qp, ads, a);
	/* The path MTU and the message limit go together, as Linux mlx5_ib sends them
	 * (drivers/infiniband/hw/mlx5/qp.c __mlx5_ib_modify_qp): with IB_QP_PATH_MTU
	 * (INIT2RTR) mtu and log_msg_max = the device's log_max_msg; on a UD QP, which
	 * has no path MTU attribute, mtu 4096 and log_msg_max 12 in every transition
	 * that carries a qpc.  Linux drivers/vfio/pci/mlx5/cmd.c mlx5vf_activate_qp and
	 * rdma-core tests/mlx5_base.py also set log_msg_max at INIT2RTR, none at
	 * CREATE_QP: the device takes the QP's message limit from here. */
	if (qp->type == MX5_QPT_UD) {
		PRM_SET(qpc, c, mtu, MX5_QPC_MTU_4096);
		PRM_SET(qpc, c, log_msg_max, MX5_UD_LOG_MSG_MAX);
	} else if (mask & MX5_QP_PATH_MTU) {
		PRM_SET(qpc, c, mtu, a->path_mtu);
		PRM_SET(qpc, c, log_msg_max, MX5_CAP_GEN(dev, log_max_msg));
	}
	if (mask & MX5_QP_DEST_QPN)
		PRM_SET(qpc, c, remote_qpn, a->dest_qp_num);
	if (mask & MX5_QP_RQ_PSN)
		PRM_SET(qpc, c, next_rcv_psn, a->rq_psn & 0xffffff);
	if (mask & MX5_QP_MAX_DEST_RD_ATOMIC)
		PRM_SET(qpc, c, log_rra_max, mx5_log_rd_ceil(a->max_dest_rd_atomic));
	if (mask & MX5_QP_MIN_RNR_TIMER) {
		PRM_SET(qpc, c, min_rnr_nak, a->min_rnr_timer);
		if (op != PRM_CMD_OP_INIT2RTR_QP)
			opt |= MX5_OPT_RNR_TIMEOUT;
	}
	if (mask & MX5_QP_SQ_PSN)
		PRM_SET(qpc, c, next_send_psn, a->sq_psn & 0xffffff);
	if (mask & MX5_QP_TIMEOUT) {
		PRM_SET(ads, ads, ack_timeout, a->timeout);
		if (op == PRM_CMD_OP_RTS2RTS_QP)
			opt |= MX5_OPT_ACK_TIMEOUT;
	}
	if (mask & MX5_QP_RETRY_CNT)
		PRM_SET(qpc, c, retry_count, a->retry_cnt);
	if (mask & MX5_QP_RNR_RETRY)
		PRM_SET(qpc, c, rnr_retry, a->rnr_retry);
	if (mask & MX5_QP_MAX_QP_RD_ATOMIC)
		PRM_SET(qpc, c, log_sra_max, mx5_log_rd_floor(a->max_rd_atomic));
	PRM_SET(rst2init_qp_in, in, opt_param_mask, opt & mx5_opt_allowed(op, qp->type));
}

/* Step 4: the command input; its length. */
static size_t mx5_qp_build_cmd(struct mx5_qp *qp, uint16_t op, const struct mx5_qp_attr *a, unsigned mask,
			       uint8_t *in)
{
	/* qp_2rst_in / qp_2err_in: header and qpn only */
	if (op == PRM_CMD_OP_2RST_QP) {
		PRM_SET(qp_2rst_in, in, opcode, op);
		PRM_SET(qp_2rst_in, in, qpn, qp->qpn);
		return PRM_SIZE(qp_2rst_in);
	}
	if (op == PRM_CMD_OP_2ERR_QP) {
		PRM_SET(qp_2err_in, in, opcode, op);
		PRM_SET(qp_2err_in, in, qpn, qp->qpn);
		return PRM_SIZE(qp_2err_in);
	}
	/* All the transition inputs with a qpc share one layout (rst2init_qp_in etc. put
	 * qpn, opt_param_mask and qpc at the same offsets: the layouts' rows agree). */
	PRM_SET(rst2init_qp_in, in, opcode, op);
	PRM_SET(rst2init_qp_in, in, qpn, qp->qpn);
	mx5_qp_fill_qpc(qp, op, a, mask, in);
	return PRM_SIZE(rst2init_qp_in);
}

/* The attributes a modify records as given, one row each: (mask bit, field). */
#define MX5_QP_RECORDED(X) \
	X(MX5_QP_ACCESS_FLAGS, qp_access_flags) \
	X(MX5_QP_PKEY_INDEX, pkey_index) \
	X(MX5_QP_PORT, port_num) \
	X(MX5_QP_QKEY, qkey) \
	X(MX5_QP_AV, ah) \
	X(MX5_QP_PATH_MTU, path_mtu) \
	X(MX5_QP_DEST_QPN, dest_qp_num) \
	X(MX5_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic) \
	X(MX5_QP_MAX_QP_RD_ATOMIC, max_rd_atomic) \
	X(MX5_QP_MIN_RNR_TIMER, min_rnr_timer) \
	X(MX5_QP_TIMEOUT, timeout) \
	X(MX5_QP_RETRY_CNT, retry_cnt) \
	X(MX5_QP_RNR_RETRY, rnr_retry)

/* Step 5: remember what was programmed (query reports it). */
static void mx5_qp_record(struct mx5_qp *qp, const struct mx5_qp_attr *a, unsigned mask, enum mx5_qp_state to)
{
	qp->state = to;
	struct mx5_qp_attr *s = &qp->attr;
	s->qp_state = to;
#define MX5_KEEP(bit, field) if (mask & (bit)) s->field = a->field;
	MX5_QP_RECORDED(MX5_KEEP)
#undef MX5_KEEP
	/* a PSN is 24 bits, as qpc.next_send_psn and next_rcv_psn hold it (layouts/qp.def) */
	if (mask & MX5_QP_RQ_PSN)
		s->rq_psn = a->rq_psn & 0xffffff;
	if (mask & MX5_QP_SQ_PSN)
		s->sq_psn = a->sq_psn & 0xffffff;
}

/* Step 6, after a move to RESET: the QP's completions not yet polled go, and the data
 * path forgets the queues' contents as the device did. */
static int mx5_qp_after_reset(struct mx5_qp *qp)
{
	/* the QP's completions not yet polled go too (rdma-core's mlx5 on RESET,
	 * providers/mlx5/cq.c __mlx5_cq_clean): no stale flush after a reconnect */
	if (qp->rcq)
		mx5_cq_ring_clean(&qp->rcq->ring, qp->qpn, qp->srq ? &qp->srq->ring : NULL);
	if (qp->scq && qp->scq != qp->rcq)
		mx5_cq_ring_clean(&qp->scq->ring, qp->qpn, NULL);
	/* the device forgot the queues' contents: so does the data path */
	return mx5_qp_rings_init(qp);
}

int mx5_qp_modify(struct mx5_qp *qp, const struct mx5_qp_attr *a, unsigned mask)
{
	if (!qp || !a)
		return -EINVAL;
	struct mx5_device *dev = qp->dev;
	if (!(mask & MX5_QP_STATE))
		return mx5_fail(dev, -EINVAL, "modify QP 0x%x: missing attribute qp_state", qp->qpn);
	enum mx5_qp_state from = qp->state, to = a->qp_state;
	if ((mask & MX5_QP_CUR_STATE) && a->cur_qp_state != from)
		return mx5_fail(dev, -EINVAL, "modify QP 0x%x: cur_qp_state %s but the QP is %s",
				qp->qpn, mx5_state_name(a->cur_qp_state), mx5_state_name(from));
	uint16_t op = mx5_qp_transition_op(from, to);
	if (!op)
		return mx5_fail(dev, -EINVAL, "modify QP 0x%x: transition %s -> %s is not allowed",
				qp->qpn, mx5_state_name(from), mx5_state_name(to));
	int rc = mx5_qp_check_attrs(qp, a, mask, from, to);
	if (rc)
		return rc;

	uint8_t *in = calloc(1, PRM_SIZE(rst2init_qp_in));
	uint8_t o[PRM_SIZE(rst2init_qp_out)];
	if (!in)
		return mx5_fail(dev, -ENOMEM, "modify QP: out of memory");
	size_t inlen = mx5_qp_build_cmd(qp, op, a, mask, in);
	rc = mx5_exec(dev, in, inlen, o, sizeof(o));
	free(in);
	if (rc)
		return rc;
	mx5_qp_record(qp, a, mask, to);
	return to == MX5_QPS_RESET ? mx5_qp_after_reset(qp) : 0;
}

static enum mx5_qp_state mx5_state_from_qpc(unsigned s)
{
	switch (s) {
	case MX5_QPC_RST: return MX5_QPS_RESET;
	case MX5_QPC_INIT: return MX5_QPS_INIT;
	case MX5_QPC_RTR: return MX5_QPS_RTR;
	case MX5_QPC_RTS: return MX5_QPS_RTS;
	case MX5_QPC_SQER: return MX5_QPS_SQE;
	case MX5_QPC_SQD: return MX5_QPS_SQD;
	default: return MX5_QPS_ERR;
	}
}

int mx5_qp_query(struct mx5_qp *qp, struct mx5_qp_attr *a, struct mx5_qp_init_attr *init)
{
	if (!qp || !a)
		return -EINVAL;
	struct mx5_device *dev = qp->dev;
	*a = qp->attr;
	a->cap = qp->cap;
	if (init)
		*init = (struct mx5_qp_init_attr){ .type = qp->type, .send_cq = qp->scq, .recv_cq = qp->rcq,
						   .srq = qp->srq, .cap = qp->cap, .sq_sig_all = qp->sq_sig_all };
	if (qp->flushed) {
		a->qp_state = MX5_QPS_ERR;
		return 0;
	}
	uint8_t in[PRM_SIZE(query_qp_in)] = { 0 };
	uint8_t *o = calloc(1, PRM_SIZE(query_qp_out));
	if (!o)
		return -ENOMEM;
	PRM_SET(query_qp_in, in, opcode, PRM_CMD_OP_QUERY_QP);
	PRM_SET(query_qp_in, in, qpn, qp->qpn);
	int rc = mx5_exec(dev, in, sizeof(in), o, PRM_SIZE(query_qp_out));
	if (!rc) {
		const uint8_t *c = PRM_ADDR(query_qp_out, o, qpc);
		const uint8_t *ads = PRM_ADDR(qpc, c, primary_address_path);
		a->qp_state = mx5_state_from_qpc((unsigned)PRM_GET(qpc, c, state));
		a->cur_qp_state = a->qp_state;
		qp->state = a->qp_state;   /* the device may have moved it to ERR */
		if (qp->type != MX5_QPT_UD) {
			a->path_mtu = (uint8_t)PRM_GET(qpc, c, mtu);
			a->dest_qp_num = (uint32_t)PRM_GET(qpc, c, remote_qpn);
		}
		a->sq_psn = (uint32_t)PRM_GET(qpc, c, next_send_psn);
		a->rq_psn = (uint32_t)PRM_GET(qpc, c, next_rcv_psn);
		a->qkey = (uint32_t)PRM_GET(qpc, c, q_key);
		a->retry_cnt = (uint8_t)PRM_GET(qpc, c, retry_count);
		a->rnr_retry = (uint8_t)PRM_GET(qpc, c, rnr_retry);
		a->min_rnr_timer = (uint8_t)PRM_GET(qpc, c, min_rnr_nak);
		a->timeout = (uint8_t)PRM_GET(ads, ads, ack_timeout);
		a->ah.sgid_index = (uint8_t)PRM_GET(ads, ads, src_addr_index);
		a->ah.hop_limit = (uint8_t)PRM_GET(ads, ads, hop_limit);
		a->ah.traffic_class = (uint8_t)PRM_GET(ads, ads, tclass);
		a->ah.flow_label = (uint32_t)PRM_GET(ads, ads, flow_label);
		memcpy(a->ah.dgid, PRM_ADDR(ads, ads, rgid_rip), 16);
	}
	free(o);
	return rc;
}

/* An async error EQE for this QP: the device moved it to an error state. */
void mx5_qp_async_event(struct mx5_device *dev, uint32_t qpn, enum mx5_event_type type)
{
	if (type != MX5_EVENT_QP_FATAL && type != MX5_EVENT_QP_REQ_ERROR &&
	    type != MX5_EVENT_QP_ACCESS_ERROR)
		return;
	struct plat_list *l;
	plat_list_for_each(l, &dev->qps) {
		struct mx5_qp *qp = plat_container_of(l, struct mx5_qp, link);
		if (qp->qpn == qpn) {
			qp->state = MX5_QPS_ERR;
			return;
		}
	}
}

uint32_t mx5_qp_num(const struct mx5_qp *qp) { return qp->qpn; }
enum mx5_qp_state mx5_qp_state(const struct mx5_qp *qp) { return qp->flushed ? MX5_QPS_ERR : qp->state; }
void *mx5_qp_sq_state(struct mx5_qp *qp) { return &qp->sq; }
void *mx5_qp_rq_state(struct mx5_qp *qp) { return qp->rq_wqe_cnt ? &qp->rq : NULL; }

/* ------------------------------------------------------------------ multicast */

/* ff00::/8 (IPv6 multicast, IB multicast GIDs), or an IPv4 multicast address in its
 * IPv4-mapped form: Linux ib_verbs.h rdma_is_multicast_addr, which ib_attach_mcast
 * checks before it calls the driver. */
static bool gid_is_multicast(const uint8_t g[16])
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return g[0] == 0xff || (!memcmp(g, v4mapped, sizeof(v4mapped)) && (g[12] & 0xf0) == 0xe0);
}

int mx5_qp_mcast(struct mx5_qp *qp, const uint8_t gid[16], int attach)
{
	/* attach_to_mcg_in and detach_from_mcg_in are the same layout (mlx5_ifc.h) */
	_Static_assert(PRM_SIZE(attach_to_mcg_in) == PRM_SIZE(detach_from_mcg_in) &&
			       (int)PRM_OFF(attach_to_mcg_in, qpn) == (int)PRM_OFF(detach_from_mcg_in, qpn) &&
			       (int)PRM_OFF(attach_to_mcg_in, multicast_gid) ==
				       (int)PRM_OFF(detach_from_mcg_in, multicast_gid),
		       "attach_to_mcg_in / detach_from_mcg_in");
	uint8_t in[PRM_SIZE(attach_to_mcg_in)] = { 0 }, out[PRM_SIZE(attach_to_mcg_out)];
	uint16_t op = attach ? PRM_CMD_OP_ATTACH_TO_MCG : PRM_CMD_OP_DETACH_FROM_MCG;

	if (!qp || !gid)
		return -EINVAL;
	if (qp->type != MX5_QPT_UD || qp->gsi)
		return mx5_fail(qp->dev, -EINVAL, "%s: QP 0x%x is not a UD QP (only UD QPs join multicast groups)",
				prm_opcode_name(op), qp->qpn);
	if (!gid_is_multicast(gid))
		return mx5_fail(qp->dev, -EINVAL, "%s: QP 0x%x: GID %02x%02x:...:%02x%02x is not a multicast GID",
				prm_opcode_name(op), qp->qpn, gid[0], gid[1], gid[14], gid[15]);
	PRM_SET(cmd_in, in, opcode, op);
	PRM_SET(attach_to_mcg_in, in, qpn, qp->qpn);
	memcpy(PRM_ADDR(attach_to_mcg_in, in, multicast_gid), gid, 16);
	return mx5_exec(qp->dev, in, sizeof(in), out, sizeof(out));
}
