/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Doorbells (hw/mlx5/doorbell.h): the doorbell record, BlueFlame for one WQE that fits
 * (whole WQE through the write-combining mapping, halves alternating, one burst
 * reported), the 64-bit doorbell otherwise, receive doorbells and the invalid-lkey
 * terminator.  The "BAR" is plain memory with a recording hook, as the emulator has. */
#include <criterion/criterion.h>
#include <string.h>

#include "mlx5dv_oracle.h"

struct rec {
	enum shim_mmio_op op;
	uint64_t off;
	unsigned size;
};
static struct rec recs[64];
static unsigned nrec;

static void hook(void *ctx, enum shim_mmio_op op, uint64_t off, unsigned size)
{
	(void)ctx;
	if (nrec < 64)
		recs[nrec++] = (struct rec){ op, off, size };
}
static const struct shim_mmio_hook rec_hook = { hook, NULL };

static struct fx_sq F;
static uint8_t data[2048];

static void setup(void)
{
	cr_assert_eq(fx_sq_init(&F, IBV_QPT_RC, 400, 4, 0), 0);
	F.bar.hook = &rec_hook;
	nrec = 0;
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i ^ 0x5c);
}

TestSuite(doorbell, .init = setup);

static struct ibv_send_wr *wr_write(struct ibv_send_wr *wr, struct ibv_sge *sge, uint32_t len,
				    unsigned flags, uint64_t id)
{
	memset(wr, 0, sizeof(*wr));
	sge->addr = (uintptr_t)data;
	sge->length = len;
	sge->lkey = 7;
	wr->wr_id = id;
	wr->opcode = IBV_WR_RDMA_WRITE;
	wr->send_flags = flags;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->wr.rdma.remote_addr = 0x1000;
	wr->wr.rdma.rkey = 9;
	return wr;
}

Test(doorbell, one_small_wqe_goes_by_blueflame_and_the_halves_alternate)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	for (int i = 0; i < 4; i++) {
		uint64_t off = (i & 1) ? FX_BF_OFF + FX_BF_SIZE : FX_BF_OFF;
		uint32_t at = F.sq.cur_post;

		nrec = 0;
		cr_assert_eq(mx5_post_send(&F.sq, wr_write(&wr, &sge, 8, IBV_SEND_INLINE | IBV_SEND_SIGNALED, 1), NULL), 0);
		cr_assert_eq(PRM_GET(qp_dbrec, F.dbrec, send_counter), F.sq.cur_post & 0xffff);
		cr_assert_eq(be32toh(((uint32_t *)F.dbrec)[1]), F.sq.cur_post & 0xffff, "MLX5_SND_DBR dword");
		cr_assert_eq(nrec, 1, "exactly one MMIO event per post");
		cr_assert_eq(recs[0].op, SHIM_MMIO_WC_WRITE);
		cr_assert_eq(recs[0].off, off);
		cr_assert_eq(recs[0].size, 64);
		cr_assert_arr_eq(F.bar_mem + off, F.ring + (at % FX_BBS) * 64, 64, "the WQE itself");
		F.sq.tail = F.sq.cur_post;
	}
}

Test(doorbell, blueflame_goes_through_the_write_combining_mapping_when_there_is_one)
{
	static uint8_t wc[4096] __attribute__((aligned(64)));
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	F.bar.wc_base = wc;
	cr_assert_eq(fx_sq_setup(&F, IBV_QPT_RC, 400, 4, 0), 0);  /* picks the mapping up */
	cr_assert_eq(mx5_post_send(&F.sq, wr_write(&wr, &sge, 8, IBV_SEND_INLINE, 1), NULL), 0);
	cr_assert_arr_eq(wc + FX_BF_OFF, F.ring, 64);
	for (size_t i = 0; i < 64; i++)
		cr_assert_eq(F.bar_mem[FX_BF_OFF + i], 0, "nothing through the uncached mapping");
}

/* A WQE of four basic blocks starting at the last one of the ring: BlueFlame carries it
 * whole and in order, continuing from the ring start. */
Test(doorbell, a_wqe_wrapping_the_ring_end_reaches_blueflame_whole)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	uint8_t lin[256];

	fx_sq_at(&F, FX_BBS - 1);
	cr_assert_eq(mx5_post_send(&F.sq, wr_write(&wr, &sge, 200, IBV_SEND_INLINE, 1), NULL), 0);
	cr_assert_eq(F.sq.cur_post - (FX_BBS - 1), 4);
	fx_sq_read(&F, FX_BBS - 1, lin, 256);
	cr_assert_arr_eq(F.bar_mem + FX_BF_OFF, lin, 256);
	cr_assert_arr_eq(lin + 36, data, 200, "inline payload intact across the wrap");
	cr_assert_eq(nrec, 1);
	cr_assert_eq(recs[0].size, 256);
}

Test(doorbell, a_wqe_larger_than_blueflame_rings_the_64_bit_doorbell)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	cr_assert_eq(mx5_post_send(&F.sq, wr_write(&wr, &sge, 300, IBV_SEND_INLINE, 1), NULL), 0);
	cr_assert_gt((F.sq.cur_post) * 64, FX_BF_SIZE);
	cr_assert_eq(nrec, 1);
	cr_assert_eq(recs[0].op, SHIM_MMIO_WRITE);
	cr_assert_eq(recs[0].size, 8);
	cr_assert_eq(recs[0].off, FX_BF_OFF);
	cr_assert_arr_eq(F.bar_mem + FX_BF_OFF, F.ring, 8, "first 8 bytes of the ctrl segment");
}

/* A chain of three WRs: one doorbell record, one 64-bit doorbell naming the last WQE. */
Test(doorbell, several_wqes_in_one_post_ring_one_doorbell_for_the_last)
{
	struct ibv_send_wr wr[3];
	struct ibv_sge sge[3];

	for (int i = 0; i < 3; i++) {
		wr_write(&wr[i], &sge[i], 4096, 0, (uint64_t)i);
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	cr_assert_eq(mx5_post_send(&F.sq, &wr[0], NULL), 0);
	cr_assert_eq(F.sq.cur_post, 3);
	cr_assert_eq(PRM_GET(qp_dbrec, F.dbrec, send_counter), 3);
	cr_assert_eq(nrec, 1);
	cr_assert_eq(recs[0].op, SHIM_MMIO_WRITE);
	cr_assert_arr_eq(F.bar_mem + FX_BF_OFF, F.ring + 2 * 64, 8);
	cr_assert_eq(PRM_GET(wqe_ctrl_seg, F.bar_mem + FX_BF_OFF, wqe_index), 2);
}

/* The chain stops at the bad WR, reports it, and still rings for the good ones. */
Test(doorbell, a_bad_wr_stops_the_chain_and_the_good_ones_are_rung)
{
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sge[3];

	for (int i = 0; i < 3; i++) {
		wr_write(&wr[i], &sge[i], 16, 0, (uint64_t)i);
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[1].num_sge = 9;
	cr_assert_eq(mx5_post_send(&F.sq, &wr[0], &bad), -EINVAL);
	cr_assert_eq(bad, &wr[1]);
	cr_assert_eq(F.sq.cur_post, 1);
	cr_assert_eq(PRM_GET(qp_dbrec, F.dbrec, send_counter), 1);
	cr_assert_eq(nrec, 1, "the first WQE was rung");
}

/* rdma-core 44 post_send_db (providers/mlx5/qp.c): BlueFlame needs more than one
 * 16-byte unit ("size > 1"): a ctrl-only WQE (an RC SEND with no SGE) is rung. */
Test(doorbell, a_ctrl_only_wqe_is_rung_not_blueflamed)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_write(&wr, &sge, 0, 0, 1);
	wr.opcode = IBV_WR_SEND;
	wr.num_sge = 0;
	cr_assert_eq(mx5_post_send(&F.sq, &wr, NULL), 0);
	cr_assert_eq(PRM_GET(wqe_ctrl_seg, F.ring, ds), 1);
	cr_assert_eq(nrec, 1);
	cr_assert_eq(recs[0].op, SHIM_MMIO_WRITE, "one 16-byte unit: a 64-bit doorbell");
	cr_assert_eq(recs[0].size, 8);
}

/* MX5_BF_INLINE_ONLY (MLX5_POST_SEND_PREFER_BF=0, ctx->prefer_bf 0 in rdma-core):
 * only a WQE with inline data goes by BlueFlame, through both post paths. */
Test(doorbell, inline_only_policy_blueflames_inline_wqes_alone)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	F.sq.bf_inline_only = 1;   /* as mx5_sq_init sets it for MX5_BF_INLINE_ONLY */
	F.sq.bf_max = 0;
	cr_assert_eq(mx5_post_send(&F.sq, wr_write(&wr, &sge, 64, 0, 1), NULL), 0);
	cr_assert_eq(nrec, 1);
	cr_assert_eq(recs[0].op, SHIM_MMIO_WRITE, "gather WQE: doorbell");
	F.sq.tail = F.sq.cur_post;
	nrec = 0;
	cr_assert_eq(mx5_post_send(&F.sq, wr_write(&wr, &sge, 16, IBV_SEND_INLINE, 2), NULL), 0);
	cr_assert_eq(nrec, 1);
	cr_assert_eq(recs[0].op, SHIM_MMIO_WC_WRITE, "inline WQE: BlueFlame");
	F.sq.tail = F.sq.cur_post;
	/* the batch path (mx5_sq_build + mx5_sq_ring, as ibv_wr_complete rings) */
	nrec = 0;
	cr_assert_eq(mx5_sq_build(&F.sq, wr_write(&wr, &sge, 16, IBV_SEND_INLINE, 3)), 0);
	mx5_sq_ring(&F.sq);
	cr_assert_eq(recs[0].op, SHIM_MMIO_WC_WRITE);
	F.sq.tail = F.sq.cur_post;
	nrec = 0;
	cr_assert_eq(mx5_sq_build(&F.sq, wr_write(&wr, &sge, 16, 0, 4)), 0);
	mx5_sq_ring(&F.sq);
	cr_assert_eq(recs[0].op, SHIM_MMIO_WRITE);
}

Test(doorbell, nothing_posted_means_no_doorbell)
{
	mx5_sq_ring(&F.sq);
	cr_assert_eq(nrec, 0);
	cr_assert_eq(PRM_GET(qp_dbrec, F.dbrec, send_counter), 0);
}

/* Receive WQEs: SGEs in order (empty ones skipped), the invalid-lkey terminator when
 * shorter than the stride, none when full; the record counts WQEs; full ring refused. */
Test(doorbell, receive_wqes_end_short_scatter_lists_with_the_invalid_lkey)
{
	static uint8_t buf[8 * 64] __attribute__((aligned(64)));
	uint64_t wrid[8];
	uint8_t dbrec[8] = { 0 };
	struct mx5_rq rq;
	struct ibv_sge sge[4] = { { 0x1000, 100, 1 }, { 0x2000, 0, 2 }, { 0x3000, 300, 3 },
				  { 0x4000, 400, 4 } };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = sge, .num_sge = 3 }, *bad = NULL;

	cr_assert_eq(mx5_rq_init(&rq, buf, 8, 4, wrid, dbrec), 0);
	memset(buf, 0xa5, sizeof(buf));
	cr_assert_eq(mx5_post_recv(&rq, &wr, &bad), 0);
	cr_assert_eq(PRM_GET(wqe_data_seg, buf, byte_count), 100);
	cr_assert_eq(PRM_GET(wqe_data_seg, buf + 16, addr), 0x3000, "empty SGE skipped");
	cr_assert_eq(PRM_GET(wqe_data_seg, buf + 32, lkey), MX5_INVALID_LKEY);
	cr_assert_eq(PRM_GET(wqe_data_seg, buf + 32, byte_count), 0);
	cr_assert_eq(PRM_GET(qp_dbrec, dbrec, receive_counter), 1);
	cr_assert_eq(be32toh(((uint32_t *)dbrec)[0]), 1, "MLX5_RCV_DBR dword");

	wr.num_sge = 4;
	sge[1].length = 200;
	cr_assert_eq(mx5_post_recv(&rq, &wr, &bad), 0);
	cr_assert_eq(PRM_GET(wqe_data_seg, buf + 64 + 48, lkey), 4, "full list: no terminator");

	wr.num_sge = 5;
	cr_assert_eq(mx5_post_recv(&rq, &wr, &bad), -EINVAL);
	cr_assert_eq(bad, &wr);
	wr.num_sge = 1;
	for (int i = 0; i < 6; i++)
		cr_assert_eq(mx5_post_recv(&rq, &wr, &bad), 0);
	cr_assert_eq(mx5_post_recv(&rq, &wr, &bad), -ENOMEM);
	cr_assert_eq(PRM_GET(qp_dbrec, dbrec, receive_counter), 8);
}

Test(doorbell, queue_geometry_is_checked_once_at_init)
{
	struct fx_sq f;

	cr_assert_eq(fx_sq_init(&f, IBV_QPT_RC, 220, 4, 0), 0, "rdma-core's 220-byte inline fits");
	cr_assert_eq(fx_sq_init(&f, IBV_QPT_RC, 2000, 4, 0), -EINVAL, "past the 63-ds WQE limit");
	cr_assert_eq(fx_sq_init(&f, IBV_QPT_RC, 64, 61, 0), -EINVAL);
	cr_assert_eq(fx_sq_init(&f, 99, 64, 4, 0), -EINVAL);
	{
		struct mx5_rq rq;
		uint64_t w[4];
		uint8_t b[256], d[8];
		cr_assert_eq(mx5_rq_init(&rq, b, 3, 1, w, d), -EINVAL, "not a power of two");
	}
}
