/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Send and receive WQE builders (PRM "Send WQE Format", "Receive WQE Format"; docs/architecture.md,
 * "The data path").  Hot path: static inline, no allocation, no syscalls, no MMIO.
 *
 * A send WQE is a control segment, then per opcode a datagram segment (UD), a remote
 * address segment (RDMA, atomics), an atomic segment, and finally either data segments
 * (one per non-empty SGE) or one inline segment.  It occupies ceil(ds / 4) basic blocks
 * of 64 bytes starting at cur_post; everything after the first basic block may wrap
 * to the start of the ring (segments are 16-byte aligned and the ring is a whole
 * number of basic blocks, so only inline data is ever split inside a segment).
 *
 * Builders only write the ring; mx5_sq_ring() (doorbell.h) makes them visible to the
 * device.  mx5_post_send() does both, for a chain of ibv_send_wr.
 *
 * CQ accounting: a WQE without IBV_SEND_SIGNALED produces no CQE, so the ring slots it
 * used are retired by the next signalled WQE's CQE: each WQE records, at the index of
 * its first basic block, its wr_id and the producer counter after it (wqe_next); a CQE's
 * wqe_counter picks that entry and moves tail past every earlier WQE (poll.h).
 */
#ifndef UVERBS_HW_MLX5_WQE_H
#define UVERBS_HW_MLX5_WQE_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "firmware-cmd/prm.h"
#include "hw/mlx5/sq.h"

/* Fence modes of the control segment's fm field (PRM; mlx5dv.h MLX5_WQE_CTRL_FENCE is
 * mode 4 << 5, what libmlx5 uses for IBV_SEND_FENCE). */
enum { MX5_FM_NONE = 0, MX5_FM_INITIATOR_SMALL = 1, MX5_FM_FENCE = 4 };
/* ce: 2 = always generate a CQE (MLX5_WQE_CTRL_CQ_UPDATE is 2 << 2). */
enum { MX5_CE_ON_ERROR = 0, MX5_CE_ALWAYS = 2 };

/* Segments between ctrl and the data, per opcode and QP type (sq->op_seg). */
enum { MX5_SEG_NONE = 0, MX5_SEG_RADDR, MX5_SEG_ATOMIC_CS, MX5_SEG_ATOMIC_FA, MX5_SEG_DGRAM };

/* What each verbs opcode needs; indexed by enum ibv_wr_opcode. */
enum { MX5_IMM_NONE = 0, MX5_IMM_DATA = 1, MX5_IMM_INVAL = 2 };
struct mx5_wr_op {
	uint8_t opcode;           /* enum prm_wqe_opcode */
	uint8_t raddr;            /* remote address segment */
	uint8_t atomic;           /* atomic segment (after raddr); 0 none, 1 CS, 2 FA */
	uint8_t imm;              /* what the ctrl segment's imm carries */
	uint8_t inline_ok;        /* gather list may be sent inline */
};

#define MX5_WR_OPS_LEN 16
static const struct mx5_wr_op mx5_wr_ops[MX5_WR_OPS_LEN] = {
	[IBV_WR_RDMA_WRITE] = { PRM_WQE_OP_RDMA_WRITE, 1, 0, MX5_IMM_NONE, 1 },
	[IBV_WR_RDMA_WRITE_WITH_IMM] = { PRM_WQE_OP_RDMA_WRITE_IMM, 1, 0, MX5_IMM_DATA, 1 },
	[IBV_WR_SEND] = { PRM_WQE_OP_SEND, 0, 0, MX5_IMM_NONE, 1 },
	[IBV_WR_SEND_WITH_IMM] = { PRM_WQE_OP_SEND_IMM, 0, 0, MX5_IMM_DATA, 1 },
	[IBV_WR_RDMA_READ] = { PRM_WQE_OP_RDMA_READ, 1, 0, MX5_IMM_NONE, 0 },
	[IBV_WR_ATOMIC_CMP_AND_SWP] = { PRM_WQE_OP_ATOMIC_CS, 1, 1, MX5_IMM_NONE, 0 },
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = { PRM_WQE_OP_ATOMIC_FA, 1, 2, MX5_IMM_NONE, 0 },
	[IBV_WR_SEND_WITH_INV] = { PRM_WQE_OP_SEND_INVAL, 0, 0, MX5_IMM_INVAL, 1 },
};

/* Verbs opcodes each transport allows (IBTA: UC has no READ/atomics, UD only sends;
 * SEND_WITH_INV needs a connected responder). */
#define MX5_OPS_UD ((1u << IBV_WR_SEND) | (1u << IBV_WR_SEND_WITH_IMM))
#define MX5_OPS_UC (MX5_OPS_UD | (1u << IBV_WR_RDMA_WRITE) | (1u << IBV_WR_RDMA_WRITE_WITH_IMM) | \
		    (1u << IBV_WR_SEND_WITH_INV))
#define MX5_OPS_RC (MX5_OPS_UC | (1u << IBV_WR_RDMA_READ) | (1u << IBV_WR_ATOMIC_CMP_AND_SWP) | \
		    (1u << IBV_WR_ATOMIC_FETCH_AND_ADD))

MX5_HOT uint8_t *mx5_sq_bb(const struct mx5_sq *sq, uint32_t n)
{
	return sq->buf + ((size_t)(n & (sq->wqe_cnt - 1)) << MX5_SEND_WQE_SHIFT);
}

/* Free basic blocks (the ring never holds more than wqe_cnt in flight). */
MX5_HOT uint32_t mx5_sq_room(const struct mx5_sq *sq)
{
	/* tail is the poller's: acquire, so that its reads of the slots it retired come
	 * before our rewrite of them (a plain load on x86-64, ldar on arm64) */
	return sq->wqe_cnt - (sq->cur_post - __atomic_load_n(&sq->tail, __ATOMIC_ACQUIRE));
}

/* Up to 16 bytes without a library call: two possibly overlapping moves of the
 * widest size that fits (inline payloads of a few bytes are the latency case). */
MX5_HOT void mx5_copy_small(uint8_t *dst, const uint8_t *src, size_t len)
{
	if (len >= 8) {
		uint64_t a, b;
		memcpy(&a, src, 8);
		memcpy(&b, src + len - 8, 8);
		memcpy(dst, &a, 8);
		memcpy(dst + len - 8, &b, 8);
	} else if (len >= 4) {
		uint32_t a, b;
		memcpy(&a, src, 4);
		memcpy(&b, src + len - 4, 4);
		memcpy(dst, &a, 4);
		memcpy(dst + len - 4, &b, 4);
	} else if (len) {
		dst[0] = src[0];
		dst[len / 2] = src[len / 2];
		dst[len - 1] = src[len - 1];
	}
}

/* Copy into the ring at dst, continuing at the ring start past its end. */
MX5_HOT uint8_t *mx5_sq_copy(const struct mx5_sq *sq, uint8_t *dst, const uint8_t *src,
				   size_t len)
{
	size_t room = (size_t)(sq->qend - dst);

	if (__builtin_expect(len < room, 1)) {
		if (len <= 16)
			mx5_copy_small(dst, src, len);
		else
			memcpy(dst, src, len);
		return dst + len;
	}
	memcpy(dst, src, room);
	memcpy(sq->buf, src + room, len - room);
	return sq->buf + (len - room);
}

/* Segments are composed in a zeroed local image and stored whole: the compiler folds
 * the field accessors into register arithmetic (no read-modify-write of the ring), and
 * reserved bits are zero without a separate store. */
MX5_HOT void mx5_set_data_seg(uint8_t *seg, uint32_t len, uint32_t lkey, uint64_t addr)
{
	uint8_t d[PRM_SIZE(wqe_data_seg)] = { 0 };

	PRM_SET(wqe_data_seg, d, byte_count, len);
	PRM_SET(wqe_data_seg, d, lkey, lkey);
	PRM_SET(wqe_data_seg, d, addr, addr);
	memcpy(seg, d, sizeof(d));
}

MX5_HOT void mx5_set_raddr_seg(uint8_t *seg, uint64_t raddr, uint32_t rkey)
{
	uint8_t r[PRM_SIZE(wqe_raddr_seg)] = { 0 };

	PRM_SET(wqe_raddr_seg, r, raddr, raddr);
	PRM_SET(wqe_raddr_seg, r, rkey, rkey);
	memcpy(seg, r, sizeof(r));
}

/* Control segment: all 16 bytes written, so nothing stale survives. */
MX5_HOT void mx5_set_ctrl_seg(uint8_t *ctrl, uint32_t wqe_index, uint8_t opcode,
				    uint32_t qpn, uint32_t ds, uint8_t fm_ce_se, uint32_t imm)
{
	uint8_t c[PRM_SIZE(wqe_ctrl_seg)] = { 0 };

	PRM_SET(wqe_ctrl_seg, c, wqe_index, wqe_index & 0xffff);
	PRM_SET(wqe_ctrl_seg, c, opcode, opcode);
	PRM_SET(wqe_ctrl_seg, c, qpn, qpn);
	PRM_SET(wqe_ctrl_seg, c, ds, ds);
	PRM_SET(wqe_ctrl_seg, c, fm_ce_se, fm_ce_se);
	PRM_SET(wqe_ctrl_seg, c, imm, imm);
	memcpy(ctrl, c, sizeof(c));
}

/* SGE i of an application's list, read whole whatever its alignment: the verbs API
 * does not promise an aligned list (libiscsi 1.19.0's iSER passes one inside a packed
 * structure), and a misaligned member access is undefined in C (UBSan stops there).
 * memcpy compiles to the same loads when the list is aligned. */
static inline struct ibv_sge mx5_sge_get(const struct ibv_sge *v, int i)
{
	struct ibv_sge s;

	memcpy(&s, (const uint8_t *)v + (size_t)i * sizeof(s), sizeof(s));
	return s;
}

/* Write one send WQE at cur_post and account for it (wr_id, retirement point).
 * Returns its size in basic blocks (> 0) and its ctrl segment in *ctrl_out, or
 * -EINVAL (opcode the QP type does not allow, too many SGEs, inline data past
 * max_inline, an atomic without one 8-byte SGE, a datagram without an address handle)
 * or -ENOMEM (ring full), with nothing written.  The doorbell batch is the caller's
 * (mx5_sq_build / mx5_post_send). */
MX5_HOT int mx5_sq_write_wqe(struct mx5_sq *sq, const struct ibv_send_wr *wr, uint8_t **ctrl_out)
{
	unsigned op = (unsigned)wr->opcode;
	unsigned flags = wr->send_flags;
	int nsge = wr->num_sge;
	const struct ibv_sge *sg = wr->sg_list;
	const struct mx5_wr_op *o;
	uint32_t ds, bbs, inl = 0, imm, idx, kind;
	uint8_t *ctrl, *seg;
	int use_inline;

	if (__builtin_expect(op >= MX5_WR_OPS_LEN, 0))
		return -EINVAL;
	ds = sq->op_ds[op];
	kind = sq->op_seg[op];
	/* (uint32_t) also refuses a negative num_sge */
	if (__builtin_expect(ds == 0 || (uint32_t)nsge > sq->max_sge, 0))
		return -EINVAL;
	/* a datagram WR without an address handle: refused here, in the chain's order, so
	 * the WRs before it are posted (ibv_post_send(3): *bad_wr is the first not posted) */
	if (__builtin_expect(kind == MX5_SEG_DGRAM && !wr->wr.ud.ah, 0))
		return -EINVAL;
	o = &mx5_wr_ops[op];
	use_inline = (flags & IBV_SEND_INLINE) != 0;
	if (use_inline) {
		if (__builtin_expect(!o->inline_ok, 0))
			return -EINVAL;
		uint64_t total = 0;

		/* summed in 64 bits: 32-bit lengths must not wrap round to a small size */
		for (int i = 0; i < nsge; i++)
			total += mx5_sge_get(sg, i).length;
		if (__builtin_expect(total > sq->max_inline, 0))
			return -EINVAL;
		inl = (uint32_t)total;
		if (inl)
			ds += (inl + 4u + 15u) >> 4;
	} else {
		uint64_t total = 0;

		if (__builtin_expect(kind == MX5_SEG_ATOMIC_CS || kind == MX5_SEG_ATOMIC_FA, 0) &&
		    (nsge != 1 || mx5_sge_get(sg, 0).length != 8))
			return -EINVAL;
		/* The message, and so every SGE, within the port's max_msg_sz (<= 2^31 - 1):
		 * bit 31 of a data segment's byte_count is the inline flag (PRM wqe_data_seg,
		 * wqe_inline_seg), so a longer length would send the WQE's own bytes. */
		for (int i = 0; i < nsge; i++)
			total += mx5_sge_get(sg, i).length;
		if (__builtin_expect(total > sq->max_msg, 0))
			return -EINVAL;
		ds += (uint32_t)nsge;   /* upper bound: empty SGEs are skipped below */
	}
	bbs = (ds + 3u) >> 2;
	if (__builtin_expect(bbs > mx5_sq_room(sq), 0))
		return -ENOMEM;

	ctrl = mx5_sq_bb(sq, sq->cur_post);
	seg = ctrl + PRM_SIZE(wqe_ctrl_seg);
	/* XRC initiator: the XRC segment, the responder's XRC SRQ number in its first
	 * word, 12 bytes reserved (rdma-core providers/mlx5/wqe.h struct mlx5_wqe_xrc_seg;
	 * it becomes the request's XRCETH, IBTA 9.3.7) */
	if (__builtin_expect(sq->is_xrc != 0, 0)) {
		prm_store_be32(seg, 0, wr->qp_type.xrc.remote_srqn & 0xffffff);
		memset(seg + 4, 0, 12);
		seg += 16;
	}
	/* The first basic block holds ctrl plus at most 48 bytes of datagram, or XRC and
	 * raddr+atomic segments, so none of these wrap. */
	switch (kind) {
	case MX5_SEG_RADDR:
		mx5_set_raddr_seg(seg, wr->wr.rdma.remote_addr, wr->wr.rdma.rkey);
		seg += PRM_SIZE(wqe_raddr_seg);
		break;
	case MX5_SEG_ATOMIC_CS:
	case MX5_SEG_ATOMIC_FA:
		mx5_set_raddr_seg(seg, wr->wr.atomic.remote_addr, wr->wr.atomic.rkey);
		seg += PRM_SIZE(wqe_raddr_seg);
		/* IBTA 9.4.5: compare-swap carries swap and compare; fetch-add the addend. */
		if (kind == MX5_SEG_ATOMIC_CS) {
			PRM_SET(wqe_atomic_seg, seg, swap_add, wr->wr.atomic.swap);
			PRM_SET(wqe_atomic_seg, seg, compare, wr->wr.atomic.compare_add);
		} else {
			PRM_SET(wqe_atomic_seg, seg, swap_add, wr->wr.atomic.compare_add);
			PRM_SET(wqe_atomic_seg, seg, compare, 0);
		}
		seg += PRM_SIZE(wqe_atomic_seg);
		break;
	case MX5_SEG_DGRAM:
		memcpy(seg, (const uint8_t *)wr->wr.ud.ah + sq->av_offset, MX5_AV_SIZE);
		PRM_SET(wqe_datagram_seg, seg, qkey, wr->wr.ud.remote_qkey);
		PRM_SET(wqe_datagram_seg, seg, ext, 1);
		PRM_SET(wqe_datagram_seg, seg, dqpn, wr->wr.ud.remote_qpn);
		seg += MX5_AV_SIZE;
		break;
	default:
		break;
	}

	if (use_inline) {
		if (inl) {
			uint8_t h[PRM_SIZE(wqe_inline_seg)] = { 0 }, *p;

			if (seg == sq->qend)
				seg = sq->buf;
			PRM_SET(wqe_inline_seg, h, inline, 1);
			PRM_SET(wqe_inline_seg, h, byte_count, inl);
			memcpy(seg, h, sizeof(h));
			p = seg + PRM_SIZE(wqe_inline_seg);
			for (int i = 0; i < nsge; i++) {
				struct ibv_sge e = mx5_sge_get(sg, i);
				p = mx5_sq_copy(sq, p, (const uint8_t *)(uintptr_t)e.addr, e.length);
			}
		}
	} else {
		for (int i = 0; i < nsge; i++) {
			struct ibv_sge e = mx5_sge_get(sg, i);
			if (__builtin_expect(e.length == 0, 0)) {
				ds--;   /* byte_count 0 would mean 2 GiB */
				continue;
			}
			if (__builtin_expect(seg == sq->qend, 0))
				seg = sq->buf;
			mx5_set_data_seg(seg, e.length, e.lkey, e.addr);
			seg += PRM_SIZE(wqe_data_seg);
		}
		bbs = (ds + 3u) >> 2;
	}

	/* imm_data (network order, as on the wire) and invalidate_rkey share storage in
	 * the WR; the segment carries the immediate as sent and the rkey big-endian. */
	imm = o->imm == MX5_IMM_NONE ? 0
	      : (o->imm == MX5_IMM_DATA ? be32toh(wr->imm_data) : wr->invalidate_rkey);
	mx5_set_ctrl_seg(ctrl, sq->cur_post, o->opcode, sq->qpn, ds,
			 sq->fm_ce_se[flags & (IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED)],
			 imm);

	idx = sq->cur_post & (sq->wqe_cnt - 1);
	sq->wrid[idx] = wr->wr_id;
	sq->cur_post += bbs;
	sq->wqe_next[idx] = sq->cur_post;
	*ctrl_out = ctrl;
	return (int)bbs;
}

/* Build one send WQE and add it to the doorbell batch (rung by mx5_sq_ring).
 * 0 or a negative errno as mx5_sq_write_wqe. */
MX5_HOT int mx5_sq_build(struct mx5_sq *sq, const struct ibv_send_wr *wr)
{
	uint8_t *ctrl;
	int bbs = mx5_sq_write_wqe(sq, wr, &ctrl);

	if (__builtin_expect(bbs < 0, 0))
		return bbs;
	sq->last_ctrl = ctrl;
	sq->last_bbs = (uint32_t)bbs;
	sq->last_inl = (wr->send_flags & IBV_SEND_INLINE) && wr->num_sge;
	sq->pending++;
	return 0;
}

/* Receive WQE at head: one data segment per non-empty SGE, then the invalid-lkey
 * terminator when the list is shorter than the WQE's max_sge slots.  `wqe` is the
 * first data segment slot. */
MX5_HOT int mx5_recv_fill(uint8_t *wqe, uint32_t slots, uint32_t max_msg,
			  const struct ibv_recv_wr *wr)
{
	uint64_t total = 0;
	uint32_t n = 0;

	if (__builtin_expect(wr->num_sge < 0 || (uint32_t)wr->num_sge > slots, 0))
		return -EINVAL;
	/* Lengths are checked before anything is written: byte_count has 31 bits (bit 31
	 * is the inline flag, PRM wqe_data_seg), and the port takes at most max_msg. */
	for (int i = 0; i < wr->num_sge; i++)
		total += mx5_sge_get(wr->sg_list, i).length;
	if (__builtin_expect(total > max_msg, 0))
		return -EINVAL;
	for (int i = 0; i < wr->num_sge; i++) {
		struct ibv_sge s = mx5_sge_get(wr->sg_list, i);
		if (!s.length)
			continue;
		mx5_set_data_seg(wqe + 16u * n++, s.length, s.lkey, s.addr);
	}
	if (n < slots)
		mx5_set_data_seg(wqe + 16u * n, 0, MX5_INVALID_LKEY, 0);
	return 0;
}

#endif
