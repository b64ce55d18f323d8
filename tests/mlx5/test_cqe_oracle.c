/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Oracle: CQE decoding (hw/mlx5/poll.h) against CQEs built field by field in rdma-core's
 * struct mlx5_cqe64 / struct mlx5_err_cqe (installed <infiniband/mlx5dv.h>), expected
 * results following libmlx5's cq.c semantics, owner-bit wraparound over several laps,
 * and the CQ accounting of unsignalled sends. */
#include <criterion/criterion.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "mlx5dv_oracle.h"

#define QPN 0x1234a5u
#define CQ_N 4u

struct fx_cq {
	struct fx_sq s;
	uint8_t rq_buf[16 * 64] __attribute__((aligned(64)));
	uint64_t rq_wrid[16];
	struct mx5_rq rq;
	struct mlx5_cqe64 cqes[CQ_N] __attribute__((aligned(64)));
	uint8_t cq_dbrec[8] __attribute__((aligned(8)));
	struct mx5_wq_table *tab;
	struct mx5_wq_ref ref;
	struct mx5_cq_ring cq;
	uint32_t produced;       /* CQEs the "device" wrote */
};

static struct fx_cq F;

static void setup(void)
{
	memset(&F, 0, sizeof(F));
	cr_assert_eq(fx_sq_init(&F.s, IBV_QPT_RC, 64, 2, 0), 0);
	cr_assert_eq(mx5_rq_init(&F.rq, F.rq_buf, 16, 4, F.rq_wrid, F.s.dbrec), 0);
	F.tab = calloc(1, sizeof(*F.tab));
	cr_assert_not_null(F.tab);
	F.ref.sq = &F.s.sq;
	F.ref.rq = &F.rq;
	cr_assert_eq(mx5_wq_table_set(F.tab, QPN, &F.ref), 0);
	cr_assert_eq(mx5_cq_ring_init(&F.cq, F.cqes, CQ_N, 0x77, F.cq_dbrec, &F.s.bar, 0x20, F.tab), 0);
}

static void teardown(void)
{
	mx5_wq_table_destroy(F.tab);
	free(F.tab);
}

/* The device's side: the next CQE slot, zeroed, with the owner bit of this lap. */
static struct mlx5_cqe64 *dev_cqe(uint8_t opcode)
{
	struct mlx5_cqe64 *c = &F.cqes[F.produced % CQ_N];
	uint8_t owner = (uint8_t)((F.produced / CQ_N) & 1);

	memset(c, 0, sizeof(*c));
	c->op_own = (uint8_t)(opcode << 4) | owner;
	F.produced++;
	return c;
}

static uint32_t post(enum ibv_wr_opcode op, unsigned flags, uint64_t wr_id)
{
	static uint8_t buf[64];
	struct ibv_sge sge = { (uintptr_t)buf, 8, 0x42 };
	struct ibv_send_wr wr;
	uint32_t at = F.s.sq.cur_post;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.send_flags = flags;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.imm_data = htobe32(0xaabbccdd);
	cr_assert_eq(mx5_sq_build(&F.s.sq, &wr), 0);
	return at;
}

static void post_recv(uint64_t wr_id)
{
	static uint8_t buf[256];
	struct ibv_sge sge = { (uintptr_t)buf, 256, 0x43 };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad = NULL;
	cr_assert_eq(mx5_post_recv(&F.rq, &wr, &bad), 0);
}

static void poll1(struct ibv_wc *wc)
{
	memset(wc, 0xcc, sizeof(*wc));
	cr_assert_eq(mx5_poll_cq(&F.cq, 1, wc), 1);
}

TestSuite(cqe_oracle, .init = setup, .fini = teardown);

Test(cqe_oracle, requester_cqe_of_every_send_opcode_decodes_like_libmlx5)
{
	static const struct {
		enum ibv_wr_opcode op;
		uint8_t dv_op;
		enum ibv_wc_opcode wc_op;
		unsigned flags;
		uint32_t byte_len;
	} t[] = {
		{ IBV_WR_RDMA_WRITE, MLX5_OPCODE_RDMA_WRITE, IBV_WC_RDMA_WRITE, 0, 0 },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, MLX5_OPCODE_RDMA_WRITE_IMM, IBV_WC_RDMA_WRITE, IBV_WC_WITH_IMM, 0 },
		{ IBV_WR_SEND, MLX5_OPCODE_SEND, IBV_WC_SEND, 0, 0 },
		{ IBV_WR_SEND_WITH_IMM, MLX5_OPCODE_SEND_IMM, IBV_WC_SEND, IBV_WC_WITH_IMM, 0 },
		{ IBV_WR_SEND_WITH_INV, MLX5_OPCODE_SEND_INVAL, IBV_WC_SEND, 0, 0 },
		{ IBV_WR_RDMA_READ, MLX5_OPCODE_RDMA_READ, IBV_WC_RDMA_READ, 0, 0x3456 }, /* byte_cnt */
		{ IBV_WR_ATOMIC_CMP_AND_SWP, MLX5_OPCODE_ATOMIC_CS, IBV_WC_COMP_SWAP, 0, 8 },
		{ IBV_WR_ATOMIC_FETCH_AND_ADD, MLX5_OPCODE_ATOMIC_FA, IBV_WC_FETCH_ADD, 0, 8 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct ibv_wc wc;
		uint32_t at = post(t[i].op, IBV_SEND_SIGNALED, 1000 + i);
		struct mlx5_cqe64 *c;

		mx5_sq_ring(&F.s.sq);
		c = dev_cqe(MLX5_CQE_REQ);
		c->sop_drop_qpn = htobe32((uint32_t)t[i].dv_op << 24 | QPN);
		c->wqe_counter = htobe16((uint16_t)at);
		c->byte_cnt = htobe32(0x3456);
		poll1(&wc);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS);
		cr_assert_eq(wc.wr_id, 1000 + i);
		cr_assert_eq(wc.opcode, t[i].wc_op, "op %d", t[i].op);
		cr_assert_eq(wc.wc_flags, t[i].flags, "op %d", t[i].op);
		cr_assert_eq(wc.byte_len, t[i].byte_len, "op %d", t[i].op);
		cr_assert_eq(wc.qp_num, QPN);
		cr_assert_eq(wc.vendor_err, 0);
		cr_assert_eq(F.s.sq.tail, F.s.sq.cur_post, "the SQ slot is free again");
	}
}

Test(cqe_oracle, responder_cqe_of_every_receive_opcode_decodes_like_libmlx5)
{
	static const struct {
		uint8_t dv_op;
		enum ibv_wc_opcode wc_op;
		unsigned flags;
	} t[] = {
		{ MLX5_CQE_RESP_SEND, IBV_WC_RECV, 0 },
		{ MLX5_CQE_RESP_SEND_IMM, IBV_WC_RECV, IBV_WC_WITH_IMM },
		{ MLX5_CQE_RESP_WR_IMM, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_WITH_IMM },
		{ MLX5_CQE_RESP_SEND_INV, IBV_WC_RECV, IBV_WC_WITH_INV },
	};

	post_recv(1999);   /* one ahead: completions take the oldest receive first */
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		for (int g = 0; g < 2; g++) {
			struct ibv_wc wc;
			struct mlx5_cqe64 *c = dev_cqe(t[i].dv_op);
			uint64_t want = i == 0 && g == 0 ? 1999 : 2000 + 10 * i + (uint64_t)g - 1;

			if (g == 0 && i > 0)
				want = 2000 + 10 * (i - 1) + 1;
			post_recv(2000 + 10 * i + (uint64_t)g);
			c->sop_drop_qpn = htobe32(QPN);
			c->byte_cnt = htobe32(777 + (uint32_t)i);
			c->imm_inval_pkey = htobe32(0x9abc0001);
			/* libmlx5: g = flags_rqpn >> 28 & 3, sl = >> 24 & 0xf, src_qp = & 0xffffff */
			c->flags_rqpn = htobe32((g ? 2u << 28 : 0) | 0xdu << 24 | 0x00f00d);
			c->slid = htobe16(0x1357);
			c->ml_path = 0x85;
			poll1(&wc);
			cr_assert_eq(wc.status, IBV_WC_SUCCESS);
			cr_assert_eq(wc.wr_id, want, "in posting order");
			cr_assert_eq(wc.opcode, t[i].wc_op);
			cr_assert_eq(wc.wc_flags, t[i].flags | (g ? IBV_WC_GRH : 0));
			cr_assert_eq(wc.byte_len, 777 + i);
			if (t[i].flags & IBV_WC_WITH_IMM)
				cr_assert_eq(wc.imm_data, c->imm_inval_pkey, "network order, as is");
			if (t[i].flags & IBV_WC_WITH_INV)
				cr_assert_eq(wc.invalidated_rkey, 0x9abc0001);
			cr_assert_eq(wc.src_qp, 0x00f00d);
			cr_assert_eq(wc.sl, 0xd);
			cr_assert_eq(wc.slid, 0x1357);
			cr_assert_eq(wc.dlid_path_bits, 0x85 & 0x7f);
			cr_assert_eq(wc.pkey_index, 0x0001);
			cr_assert_eq(wc.qp_num, QPN);
		}
	}
}

/* mlx5dv.h's syndrome values, and the status libmlx5 maps each to; anything else is
 * IBV_WC_GENERAL_ERR.  Every one of the 256 values is tried, on both CQE kinds. */
Test(cqe_oracle, every_error_syndrome_maps_to_its_ibv_wc_status)
{
	static const struct { uint8_t synd; enum ibv_wc_status st; } map[] = {
		{ MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, IBV_WC_LOC_LEN_ERR },
		{ MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, IBV_WC_LOC_QP_OP_ERR },
		{ MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, IBV_WC_LOC_PROT_ERR },
		{ MLX5_CQE_SYNDROME_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR },
		{ MLX5_CQE_SYNDROME_MW_BIND_ERR, IBV_WC_MW_BIND_ERR },
		{ MLX5_CQE_SYNDROME_BAD_RESP_ERR, IBV_WC_BAD_RESP_ERR },
		{ MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR, IBV_WC_LOC_ACCESS_ERR },
		{ MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, IBV_WC_REM_INV_REQ_ERR },
		{ MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR },
		{ MLX5_CQE_SYNDROME_REMOTE_OP_ERR, IBV_WC_REM_OP_ERR },
		{ MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, IBV_WC_RETRY_EXC_ERR },
		{ MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR },
		{ MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR, IBV_WC_REM_ABORT_ERR },
	};

	for (unsigned s = 0; s < 256; s++) {
		enum ibv_wc_status want = IBV_WC_GENERAL_ERR;
		for (size_t k = 0; k < sizeof(map) / sizeof(map[0]); k++)
			if (map[k].synd == s)
				want = map[k].st;
		for (int resp = 0; resp < 2; resp++) {
			struct ibv_wc wc;
			struct mlx5_err_cqe *e;
			uint32_t at = 0;

			if (resp)
				post_recv(0x5000 + s);
			else
				at = post(IBV_WR_RDMA_WRITE, 0, 0x4000 + s);   /* unsignalled: errors report anyway */
			e = (struct mlx5_err_cqe *)dev_cqe(resp ? MLX5_CQE_RESP_ERR : MLX5_CQE_REQ_ERR);
			e->syndrome = (uint8_t)s;
			e->vendor_err_synd = (uint8_t)(0xff - s);
			e->s_wqe_opcode_qpn = htobe32((uint32_t)MLX5_OPCODE_RDMA_WRITE << 24 | QPN);
			e->wqe_counter = htobe16((uint16_t)at);
			poll1(&wc);
			cr_assert_eq(wc.status, want, "syndrome 0x%x (%s)", s, mx5_cqe_syndrome_name((uint8_t)s));
			cr_assert_eq(wc.vendor_err, 0xff - s);
			cr_assert_eq(wc.wr_id, (resp ? 0x5000u : 0x4000u) + s);
			cr_assert_eq(wc.qp_num, QPN);
		}
	}
	cr_assert_str_eq(mx5_cqe_syndrome_name(MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR), "remote access error");
}

/* A 4-entry CQ over three laps: each slot read as empty until the device writes it with
 * this lap's owner bit, never re-read from the previous lap; the record follows. */
Test(cqe_oracle, owner_bit_wraps_over_three_laps_of_a_small_cq)
{
	struct ibv_wc wc[2];

	for (uint32_t n = 0; n < 3 * CQ_N; n++) {
		uint32_t at = post(IBV_WR_SEND, IBV_SEND_SIGNALED, 0x100 + n);
		struct mlx5_cqe64 *c;

		cr_assert_eq(mx5_poll_cq(&F.cq, 2, wc), 0, "slot %u holds last lap's CQE: not ours", n);
		c = dev_cqe(MLX5_CQE_REQ);
		c->sop_drop_qpn = htobe32((uint32_t)MLX5_OPCODE_SEND << 24 | QPN);
		c->wqe_counter = htobe16((uint16_t)at);
		cr_assert_eq(mx5_poll_cq(&F.cq, 2, wc), 1, "CQE %u", n);
		cr_assert_eq(wc[0].wr_id, 0x100 + n);
		cr_assert_eq(F.cq.cons_index, n + 1);
		cr_assert_eq(PRM_GET(cq_dbrec, F.cq_dbrec, update_ci), n + 1);
		cr_assert_eq(be32toh(((uint32_t *)F.cq_dbrec)[0]), n + 1, "libmlx5: dbrec[0] = ci");
	}
	/* every slot now holds the previous lap's CQE: still empty */
	cr_assert_eq(mx5_poll_cq(&F.cq, 2, wc), 0);
}

/* Three unsignalled WQEs then a signalled one: one CQE retires all four (tail moves past
 * them), the wr_id is the signalled one's; with the ring full, posting fails -ENOMEM
 * until that CQE is polled. */
Test(cqe_oracle, unsignalled_wqes_are_retired_by_the_next_signalled_cqe)
{
	struct ibv_wc wc;
	struct mlx5_cqe64 *c;
	uint32_t last = 0;

	for (int i = 0; i < 16; i++)
		last = post(IBV_WR_RDMA_WRITE, i == 15 ? IBV_SEND_SIGNALED : 0, 0x700 + (uint64_t)i);
	mx5_sq_ring(&F.s.sq);
	cr_assert_eq(mx5_sq_room(&F.s.sq), 0);
	{
		static uint8_t buf[8];
		struct ibv_sge sge = { (uintptr_t)buf, 8, 1 };
		struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND };
		cr_assert_eq(mx5_sq_build(&F.s.sq, &wr), -ENOMEM);
	}
	c = dev_cqe(MLX5_CQE_REQ);
	c->sop_drop_qpn = htobe32((uint32_t)MLX5_OPCODE_RDMA_WRITE << 24 | QPN);
	c->wqe_counter = htobe16((uint16_t)last);
	poll1(&wc);
	cr_assert_eq(wc.wr_id, 0x700 + 15);
	cr_assert_eq(mx5_sq_room(&F.s.sq), 16, "all 16 slots retired by one CQE");
	cr_assert_eq(mx5_poll_cq(&F.cq, 1, &wc), 0, "unsignalled WQEs make no CQE of their own");
}

Test(cqe_oracle, cqe_of_an_unknown_qp_is_consumed_and_reported)
{
	struct ibv_wc wc;
	struct mlx5_cqe64 *c = dev_cqe(MLX5_CQE_REQ);

	c->sop_drop_qpn = htobe32((uint32_t)MLX5_OPCODE_SEND << 24 | 0x000999);
	cr_assert_eq(mx5_poll_cq(&F.cq, 1, &wc), -EIO);
	cr_assert_eq(F.cq.cons_index, 1);
	cr_assert_eq(mx5_poll_cq(&F.cq, 1, &wc), 0);
}

/* SRQ: completions in any order put WQEs back on the free list; the ring never runs
 * dry while completions keep coming. */
Test(cqe_oracle, srq_completions_return_wqes_to_the_free_list_in_any_order)
{
	static uint8_t srq_buf[8 * 64] __attribute__((aligned(64)));
	uint64_t wrid[8];
	uint8_t dbrec[8] = { 0 };
	struct mx5_srq_ring srq;
	struct mx5_wq_ref ref = { NULL, NULL, &srq };
	static uint8_t data[64];
	struct ibv_sge sge = { (uintptr_t)data, 64, 5 };
	uint32_t idx[7];

	cr_assert_eq(mx5_srq_ring_init(&srq, srq_buf, 8, 3, wrid, dbrec), 0);
	cr_assert_eq(mx5_wq_table_set(F.tab, 0x000222, &ref), 0);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 7; i++) {
			struct ibv_recv_wr wr = { .wr_id = (uint64_t)(round * 100 + i), .sg_list = &sge,
						  .num_sge = 1 };
			idx[i] = srq.head;
			cr_assert_eq(mx5_post_srq_recv(&srq, &wr, NULL), 0, "round %d wqe %d", round, i);
			/* data segment, then the invalid-lkey terminator (3 slots, 1 used) */
			cr_assert_eq(PRM_GET(wqe_data_seg, srq_buf + idx[i] * 64 + 16, lkey), 5);
			cr_assert_eq(PRM_GET(wqe_data_seg, srq_buf + idx[i] * 64 + 32, lkey), MX5_INVALID_LKEY);
		}
		{
			struct ibv_recv_wr wr = { .wr_id = 99, .sg_list = &sge, .num_sge = 1 };
			struct ibv_recv_wr *bad = NULL;
			cr_assert_eq(mx5_post_srq_recv(&srq, &wr, &bad), -ENOMEM);
			cr_assert_eq(bad, &wr);
		}
		cr_assert_eq(PRM_GET(qp_dbrec, dbrec, receive_counter), (uint32_t)(round + 1) * 7);
		for (int k = 0; k < 7; k++) {
			int i = (k * 3 + round) % 7;          /* out of posting order */
			struct ibv_wc wc;
			struct mlx5_cqe64 *c = dev_cqe(MLX5_CQE_RESP_SEND);
			c->sop_drop_qpn = htobe32(0x000222);
			c->wqe_counter = htobe16((uint16_t)idx[i]);
			c->srqn_uidx = htobe32(0x31);
			poll1(&wc);
			cr_assert_eq(wc.wr_id, (uint64_t)(round * 100 + i));
		}
	}
}

/* Arming: the record's arm word, then the 64-bit UAR CQ doorbell at 0x20 carrying
 * { sn << 28 | cmd | ci, cqn } big-endian (libmlx5 mlx5_arm_cq). */
static unsigned hook_writes;
static uint64_t hook_off;
static unsigned hook_size;
static void hook(void *ctx, enum shim_mmio_op op, uint64_t off, unsigned size)
{
	(void)ctx;
	if (op == SHIM_MMIO_WRITE) {
		hook_writes++;
		hook_off = off;
		hook_size = size;
	}
}

Test(cqe_oracle, arming_writes_the_arm_word_and_the_uar_cq_doorbell)
{
	struct shim_mmio_hook h = { hook, NULL };
	uint32_t dw[2];

	F.s.bar.hook = &h;
	F.cq.cons_index = 0x1000005;
	F.cq.arm_sn = 6;
	for (int sol = 0; sol < 2; sol++) {
		uint32_t want = (6u & 3) << 28 | (sol ? MLX5_CQ_DB_REQ_NOT_SOL : MLX5_CQ_DB_REQ_NOT) | 0x000005;
		hook_writes = 0;
		mx5_cq_ring_arm(&F.cq, sol);
		memcpy(dw, F.s.bar_mem + MLX5_CQ_DOORBELL, 8);
		cr_assert_eq(be32toh(dw[0]), want);
		cr_assert_eq(be32toh(dw[1]), 0x77);
		cr_assert_eq(be32toh(((uint32_t *)F.cq_dbrec)[1]), want);
		cr_assert_eq(hook_writes, 1);
		cr_assert_eq(hook_off, MLX5_CQ_DOORBELL);
		cr_assert_eq(hook_size, 8);
	}
	mx5_cq_ring_event(&F.cq);
	mx5_cq_ring_arm(&F.cq, 0);
	memcpy(dw, F.s.bar_mem + MLX5_CQ_DOORBELL, 8);
	cr_assert_eq(be32toh(dw[0]) >> 28, 3, "next sequence number after an event");
	F.s.bar.hook = NULL;
}

/* QP reset (mx5_cq_ring_clean, the rule of rdma-core's __mlx5_cq_clean): the reset QP's
 * CQEs leave the ring, the other QP's stay in their order even across the ring's end
 * (each moved CQE takes the owner bit of the slot it lands in), the consumer counter
 * skips the removed ones and reaches the doorbell record. */
Test(cqe_oracle, qp_reset_removes_its_cqes_and_keeps_the_others_in_order_across_the_ring_end)
{
	static uint8_t rq2_buf[16 * 64] __attribute__((aligned(64)));
	static uint64_t rq2_wrid[16];
	static uint8_t rq2_dbrec[8];
	const uint32_t qpn2 = 0x00beefu;
	struct mx5_rq rq2;
	struct mx5_wq_ref ref2 = { 0 };
	struct ibv_wc wc[4];

	cr_assert_eq(mx5_rq_init(&rq2, rq2_buf, 16, 4, rq2_wrid, rq2_dbrec), 0);
	ref2.rq = &rq2;
	cr_assert_eq(mx5_wq_table_set(F.tab, qpn2, &ref2), 0);
	/* two CQEs polled first: the next four straddle the ring end */
	for (int i = 0; i < 2; i++) {
		post_recv(10 + (uint64_t)i);
		struct mlx5_cqe64 *c = dev_cqe(MLX5_CQE_RESP_SEND);
		c->sop_drop_qpn = htobe32(QPN);
		cr_assert_eq(mx5_poll_cq(&F.cq, 1, wc), 1);
	}
	for (int i = 0; i < 4; i++) {
		uint32_t q = (i & 1) ? qpn2 : QPN;
		struct ibv_sge sge = { 0, 0, 0 };
		struct ibv_recv_wr wr = { .wr_id = 100 + (uint64_t)i, .sg_list = &sge, .num_sge = 1 }, *bad;

		cr_assert_eq(mx5_post_recv(q == QPN ? &F.rq : &rq2, &wr, &bad), 0);
		struct mlx5_cqe64 *c = dev_cqe(MLX5_CQE_RESP_SEND);
		c->sop_drop_qpn = htobe32(q);
		c->byte_cnt = htobe32(1000 + (uint32_t)i);
	}
	cr_assert_eq(mx5_cq_ring_clean(&F.cq, QPN, NULL), 2, "two CQEs of the reset QP");
	cr_assert_eq(F.cq.cons_index, 4);
	cr_assert_eq(PRM_GET(cq_dbrec, F.cq_dbrec, update_ci), 4);
	cr_assert_eq(mx5_poll_cq(&F.cq, 4, wc), 2);
	cr_assert_eq(wc[0].qp_num, qpn2);
	cr_assert_eq(wc[0].wr_id, 101);
	cr_assert_eq(wc[0].byte_len, 1001);
	cr_assert_eq(wc[1].qp_num, qpn2);
	cr_assert_eq(wc[1].wr_id, 103);
	cr_assert_eq(wc[1].byte_len, 1003);
	cr_assert_eq(mx5_cq_ring_clean(&F.cq, qpn2, NULL), 0, "an empty ring has nothing to clean");
	mx5_wq_table_clear(F.tab, qpn2);
}
