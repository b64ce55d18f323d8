/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The ibv_wr_* post API of struct ibv_qp_ex (what perftest uses for Mellanox part ids
 * and ibv_rc_pingpong -N).  Between ibv_wr_start and ibv_wr_complete, each opcode call
 * opens a WR; its setters (address, SGEs, inline data) fill it, and it is written into
 * the ring (hw/mlx5 mx5_sq_build) when the next opcode call or wr_complete closes it.
 * wr_complete rings one doorbell for the batch (BlueFlame for a single WQE); wr_abort
 * rewinds the producer counter, so nothing built reaches the device.  Errors are
 * remembered and returned by wr_complete, which then discards the batch
 * (ibv_wr_post(3)). */
#include <errno.h>
#include <string.h>

#include "hw/mlx5/doorbell.h"
#include "hw/mlx5/wqe.h"
#include "uverbs/uv.h"

static inline struct uv_qp *uvq(struct ibv_qp_ex *x)
{
	return (struct uv_qp *)(void *)x;
}

static void uv_wr_fail(struct uv_wr_stage *s, int err)
{
	if (!s->err)
		s->err = err;
}

/* Write the open WR into the ring. */
static void uv_wr_close(struct uv_qp *q)
{
	struct uv_wr_stage *s = &q->st;
	if (!s->open)
		return;
	s->open = false;
	if (s->err)
		return;
	int rc = mx5_sq_build(q->sq, &s->wr);
	if (rc)
		uv_wr_fail(s, -rc);
}

static uint64_t uv_op_flag(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE: return IBV_QP_EX_WITH_RDMA_WRITE;
	case IBV_WR_RDMA_WRITE_WITH_IMM: return IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	case IBV_WR_SEND: return IBV_QP_EX_WITH_SEND;
	case IBV_WR_SEND_WITH_IMM: return IBV_QP_EX_WITH_SEND_WITH_IMM;
	case IBV_WR_RDMA_READ: return IBV_QP_EX_WITH_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP: return IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD: return IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	case IBV_WR_SEND_WITH_INV: return IBV_QP_EX_WITH_SEND_WITH_INV;
	default: return 0;
	}
}

static struct ibv_send_wr *uv_wr_open(struct ibv_qp_ex *x, enum ibv_wr_opcode op)
{
	struct uv_qp *q = uvq(x);
	struct uv_wr_stage *s = &q->st;
	uv_wr_close(q);
	memset(&s->wr, 0, sizeof(s->wr));
	s->wr.wr_id = x->wr_id;
	s->wr.send_flags = x->wr_flags & ~(unsigned)IBV_SEND_INLINE;
	s->wr.opcode = op;
	s->wr.sg_list = s->sge;
	s->open = true;
	/* an operation the QP was not created for (send_ops_flags) */
	if (!(s->ops & uv_op_flag(op)))
		uv_wr_fail(s, EINVAL);
	return &s->wr;
}

static void uv_wr_start(struct ibv_qp_ex *x)
{
	struct uv_qp *q = uvq(x);
	/* held until wr_complete or wr_abort, as rdma-core's mlx5 (providers/mlx5/qp.c
	 * mlx5_send_wr_start) */
	plat_spin_lock(&q->sq->lock);
	q->st.open = false;
	q->st.err = 0;
	q->st.start_post = q->sq->cur_post;
	q->sq->pending = 0;
	/* ibv_wr_start on a QP that cannot send: remembered, returned by wr_complete */
	if (x->qp_base.state < IBV_QPS_RTS)
		uv_wr_fail(&q->st, EINVAL);
}

static void uv_wr_rewind(struct uv_qp *q)
{
	q->st.open = false;
	q->sq->cur_post = q->st.start_post;
	q->sq->pending = 0;
}

static void uv_wr_abort(struct ibv_qp_ex *x)
{
	struct uv_qp *q = uvq(x);
	uv_wr_rewind(q);
	plat_spin_unlock(&q->sq->lock);
}

static int uv_wr_complete(struct ibv_qp_ex *x)
{
	struct uv_qp *q = uvq(x);
	uv_wr_close(q);
	int err = q->st.err;
	if (err)
		uv_wr_rewind(q);
	else
		mx5_sq_ring(q->sq);
	plat_spin_unlock(&q->sq->lock);
	return err;
}

/* ---- opcodes ---- */

/* A WR that names remote memory: RDMA's (rkey, raddr) pair in wr.rdma. */
static struct ibv_send_wr *uv_wr_open_rdma(struct ibv_qp_ex *x, enum ibv_wr_opcode op, uint32_t rkey,
					   uint64_t raddr)
{
	struct ibv_send_wr *w = uv_wr_open(x, op);
	w->wr.rdma.remote_addr = raddr;
	w->wr.rdma.rkey = rkey;
	return w;
}

/* An atomic WR: the (rkey, raddr) pair and the compare (CAS) or add (FAA) operand in wr.atomic. */
static struct ibv_send_wr *uv_wr_open_atomic(struct ibv_qp_ex *x, enum ibv_wr_opcode op, uint32_t rkey,
					     uint64_t raddr, uint64_t compare_add)
{
	struct ibv_send_wr *w = uv_wr_open(x, op);
	w->wr.atomic.remote_addr = raddr;
	w->wr.atomic.rkey = rkey;
	w->wr.atomic.compare_add = compare_add;
	return w;
}

static void uv_wr_rdma_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr)
{
	uv_wr_open_rdma(x, IBV_WR_RDMA_WRITE, rkey, raddr);
}

static void uv_wr_rdma_write_imm(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, __be32 imm)
{
	uv_wr_open_rdma(x, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, raddr)->imm_data = imm;
}

static void uv_wr_rdma_read(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr)
{
	uv_wr_open_rdma(x, IBV_WR_RDMA_READ, rkey, raddr);
}

static void uv_wr_send(struct ibv_qp_ex *x)
{
	uv_wr_open(x, IBV_WR_SEND);
}

static void uv_wr_send_imm(struct ibv_qp_ex *x, __be32 imm)
{
	uv_wr_open(x, IBV_WR_SEND_WITH_IMM)->imm_data = imm;
}

static void uv_wr_send_inv(struct ibv_qp_ex *x, uint32_t rkey)
{
	uv_wr_open(x, IBV_WR_SEND_WITH_INV)->invalidate_rkey = rkey;
}

static void uv_wr_atomic_cmp_swp(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr,
				 uint64_t compare, uint64_t swap)
{
	uv_wr_open_atomic(x, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, raddr, compare)->wr.atomic.swap = swap;
}

static void uv_wr_atomic_fetch_add(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, uint64_t add)
{
	uv_wr_open_atomic(x, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, raddr, add);
}

/* Operations this driver does not build: the WR fails, wr_complete says EOPNOTSUPP. */
static void uv_wr_unsupported(struct ibv_qp_ex *x, const char *what)
{
	struct uv_qp *q = uvq(x);
	uv_wr_close(q);
	uv_unsupported(what);
	uv_wr_fail(&q->st, EOPNOTSUPP);
}
static void uv_wr_bind_mw(struct ibv_qp_ex *x, struct ibv_mw *mw, uint32_t rkey,
			  const struct ibv_mw_bind_info *b)
{
	(void)mw; (void)rkey; (void)b;
	uv_wr_unsupported(x, "ibv_wr_bind_mw");
}
static void uv_wr_local_inv(struct ibv_qp_ex *x, uint32_t rkey)
{
	(void)rkey;
	uv_wr_unsupported(x, "ibv_wr_local_inv");
}
static void uv_wr_send_tso(struct ibv_qp_ex *x, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr; (void)hdr_sz; (void)mss;
	uv_wr_unsupported(x, "ibv_wr_send_tso");
}
static void uv_wr_atomic_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, const void *v)
{
	(void)rkey; (void)raddr; (void)v;
	uv_wr_unsupported(x, "ibv_wr_atomic_write");
}

/* ---- setters ---- */

static struct uv_wr_stage *uv_wr_cur(struct ibv_qp_ex *x)
{
	struct uv_wr_stage *s = &uvq(x)->st;
	if (!s->open) {
		uv_wr_fail(s, EINVAL);   /* a setter without an opcode before it */
		return NULL;
	}
	return s;
}

static void uv_wr_set_ud_addr(struct ibv_qp_ex *x, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct uv_wr_stage *s = uv_wr_cur(x);
	if (!s)
		return;
	if (!ah || x->qp_base.qp_type != IBV_QPT_UD) {
		uv_wr_fail(s, EINVAL);
		return;
	}
	s->wr.wr.ud.ah = ah;
	s->wr.wr.ud.remote_qpn = qpn;
	s->wr.wr.ud.remote_qkey = qkey;
}

/* The remote XRC SRQ of the open WR (an XRC_SEND QP's; the WQE's XRC segment, wqe.h) */
static void uv_wr_set_xrc_srqn(struct ibv_qp_ex *x, uint32_t srqn)
{
	struct uv_wr_stage *s = uv_wr_cur(x);
	if (!s)
		return;
	if (x->qp_base.qp_type != IBV_QPT_XRC_SEND) {
		uv_wr_fail(s, EINVAL);
		return;
	}
	s->wr.qp_type.xrc.remote_srqn = srqn;
}

static void uv_wr_set_sge(struct ibv_qp_ex *x, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct uv_wr_stage *s = uv_wr_cur(x);
	if (!s)
		return;
	s->sge[0] = (struct ibv_sge){ .addr = addr, .length = length, .lkey = lkey };
	s->wr.num_sge = 1;
	s->wr.send_flags &= ~(unsigned)IBV_SEND_INLINE;
}

static void uv_wr_set_sge_list(struct ibv_qp_ex *x, size_t n, const struct ibv_sge *list)
{
	struct uv_wr_stage *s = uv_wr_cur(x);
	if (!s)
		return;
	if (n > UV_WR_MAX_SGE || (n && !list)) {
		uv_wr_fail(s, EINVAL);
		return;
	}
	if (n)
		memcpy(s->sge, list, n * sizeof(*list));
	s->wr.num_sge = (int)n;
	s->wr.send_flags &= ~(unsigned)IBV_SEND_INLINE;
}

static void uv_wr_set_inline_data(struct ibv_qp_ex *x, void *addr, size_t length)
{
	struct uv_wr_stage *s = uv_wr_cur(x);
	if (!s)
		return;
	struct uv_qp *q = uvq(x);
	if (length > q->max_inline || (length && !addr)) {
		uv_wr_fail(s, EINVAL);
		return;
	}
	/* copied now: ibv_wr_set_inline_data(3) lets the caller reuse the buffer at once */
	if (length)
		memcpy(s->inl, addr, length);
	s->sge[0] = (struct ibv_sge){ .addr = (uintptr_t)s->inl, .length = (uint32_t)length };
	s->wr.num_sge = 1;
	s->wr.send_flags |= IBV_SEND_INLINE;
}

static void uv_wr_set_inline_data_list(struct ibv_qp_ex *x, size_t n, const struct ibv_data_buf *b)
{
	struct uv_wr_stage *s = uv_wr_cur(x);
	if (!s)
		return;
	struct uv_qp *q = uvq(x);
	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		if (b[i].length > q->max_inline - off) {
			uv_wr_fail(s, EINVAL);
			return;
		}
		memcpy(s->inl + off, b[i].addr, b[i].length);
		off += b[i].length;
	}
	s->sge[0] = (struct ibv_sge){ .addr = (uintptr_t)s->inl, .length = (uint32_t)off };
	s->wr.num_sge = 1;
	s->wr.send_flags |= IBV_SEND_INLINE;
}

void uv_qp_ex_init(struct uv_qp *q, uint64_t send_ops)
{
	struct ibv_qp_ex *x = &q->qpx;
	q->st.ops = send_ops;
	x->comp_mask = 0;
	x->wr_atomic_cmp_swp = uv_wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = uv_wr_atomic_fetch_add;
	x->wr_bind_mw = uv_wr_bind_mw;
	x->wr_local_inv = uv_wr_local_inv;
	x->wr_rdma_read = uv_wr_rdma_read;
	x->wr_rdma_write = uv_wr_rdma_write;
	x->wr_rdma_write_imm = uv_wr_rdma_write_imm;
	x->wr_send = uv_wr_send;
	x->wr_send_imm = uv_wr_send_imm;
	x->wr_send_inv = uv_wr_send_inv;
	x->wr_send_tso = uv_wr_send_tso;
	x->wr_set_ud_addr = uv_wr_set_ud_addr;
	x->wr_set_xrc_srqn = uv_wr_set_xrc_srqn;
	x->wr_set_inline_data = uv_wr_set_inline_data;
	x->wr_set_inline_data_list = uv_wr_set_inline_data_list;
	x->wr_set_sge = uv_wr_set_sge;
	x->wr_set_sge_list = uv_wr_set_sge_list;
	x->wr_start = uv_wr_start;
	x->wr_complete = uv_wr_complete;
	x->wr_abort = uv_wr_abort;
	x->wr_atomic_write = uv_wr_atomic_write;
}
