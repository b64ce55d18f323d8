/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Lengths are checked where they enter: ibv_post_send, ibv_post_recv and the ibv_wr_*
 * API refuse an SGE or a message longer than the port's max_msg_sz with EINVAL and
 * *bad_wr, before any WQE is built.  Bit 31 of a data segment's byte_count is the
 * inline flag (PRM wqe_data_seg), so an unchecked SEND of 0x8000000c bytes would carry
 * 12 bytes of the WQE itself (the lkey and the buffer's address) to the peer. */
#include "tests/uverbs/uv_test.h"

static struct ibv_context *ca, *cb;
static struct ut_ep A, B;
static uint32_t max_msg;

static void setup(void)
{
	struct ibv_port_attr pa;

	ut_devices("emu:ip=127.61.1.1,emu:ip=127.61.1.2");
	ca = ut_open(0);
	cb = ut_open(1);
	cr_assert_eq(ibv_query_port(ca, 1, &pa), 0);
	max_msg = pa.max_msg_sz;
	cr_assert(max_msg > 0 && max_msg < 0x80000000u, "max_msg_sz 0x%x", max_msg);
	ut_ep_init(&A, ca, IBV_QPT_RC, 65536, NULL);
	ut_ep_init(&B, cb, IBV_QPT_RC, 65536, NULL);
	ut_pair(&A, &B);
}

TestSuite(lengths, .init = setup, .timeout = 60);

static int post(uint64_t wr_id, enum ibv_wr_opcode op, uint32_t len, struct ibv_send_wr *next,
		struct ibv_send_wr **bad)
{
	static struct ibv_sge sg[4];
	static struct ibv_send_wr wr[4];
	static int k;
	int i = k++ & 3;

	sg[i] = (struct ibv_sge){ .addr = (uintptr_t)A.buf, .length = len, .lkey = A.mr->lkey };
	wr[i] = (struct ibv_send_wr){ .wr_id = wr_id, .sg_list = &sg[i], .num_sge = 1, .opcode = op,
				      .send_flags = IBV_SEND_SIGNALED, .next = next };
	wr[i].wr.rdma.remote_addr = (uintptr_t)B.buf;
	wr[i].wr.rdma.rkey = B.mr->rkey;
	*bad = NULL;
	return ibv_post_send(A.qp, &wr[i], bad);
}

/* A good SEND after the refused one is the first and only thing the peer gets. */
static void expect_only_good_send_arrives(void)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	memset(A.buf, 0xab, 64);
	memset(B.buf, 0, 64);
	cr_assert_eq(post(2, IBV_WR_SEND, 16, NULL, &bad), 0);
	ut_expect(B.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 1, "the receive was taken by wr_id %llu", (unsigned long long)wc.wr_id);
	cr_assert_eq(wc.byte_len, 16, "the peer got %u bytes, not the good SEND's 16", wc.byte_len);
	for (int i = 0; i < 16; i++)
		cr_assert_eq(B.buf[i], 0xab);
	ut_expect(A.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 2, "completion of wr_id %llu: the refused WR reached the ring",
		     (unsigned long long)wc.wr_id);
	cr_assert_eq(ut_poll(A.cq, &wc, 100), 0, "a second send completion");
}

Test(lengths, send_of_0x8000000c_bytes_is_refused_and_never_reaches_the_peer)
{
	struct ibv_send_wr *bad;

	ut_post_recv(&B, 1, B.buf, 4096);
	cr_assert_eq(post(1, IBV_WR_SEND, 0x8000000cu, NULL, &bad), EINVAL);
	cr_assert_not_null(bad);
	cr_assert_eq(bad->wr_id, 1);
	expect_only_good_send_arrives();
}

Test(lengths, one_byte_above_max_msg_sz_is_refused)
{
	struct ibv_send_wr *bad;

	ut_post_recv(&B, 1, B.buf, 4096);
	cr_assert_eq(post(1, IBV_WR_RDMA_WRITE, max_msg + 1, NULL, &bad), EINVAL);
	cr_assert_eq(bad->wr_id, 1);
	expect_only_good_send_arrives();
}

/* max_msg_sz itself passes the length check: the post is accepted, and the device then
 * finds the 64 KiB MR too short for it (a completion in error, not a refusal). */
Test(lengths, max_msg_sz_passes_the_check)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	cr_assert_eq(post(7, IBV_WR_RDMA_WRITE, max_msg, NULL, &bad), 0);
	cr_assert_eq(ut_poll(A.cq, &wc, 5000), 1);
	cr_assert_eq(wc.wr_id, 7);
	cr_assert_neq(wc.status, IBV_WC_SUCCESS, "a %u-byte WRITE from a 64 KiB MR", max_msg);
}

Test(lengths, sges_summing_above_max_msg_sz_are_refused)
{
	struct ibv_sge sg[2] = {
		{ .addr = (uintptr_t)A.buf, .length = max_msg / 2 + 1, .lkey = A.mr->lkey },
		{ .addr = (uintptr_t)A.buf, .length = max_msg / 2 + 1, .lkey = A.mr->lkey },
	};
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = sg, .num_sge = 2, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;

	ut_post_recv(&B, 1, B.buf, 4096);
	cr_assert_eq(ibv_post_send(A.qp, &wr, &bad), EINVAL);
	cr_assert_eq(bad, &wr);
	expect_only_good_send_arrives();
}

/* In a chain, the WRs before the bad one are posted and *bad_wr names the bad one. */
Test(lengths, chain_stops_at_the_long_wr)
{
	struct ibv_send_wr *bad, *second;
	struct ibv_wc wc;

	ut_post_recv(&B, 1, B.buf, 4096);
	memset(A.buf, 0xcd, 64);
	cr_assert_eq(post(9, IBV_WR_SEND, 0x8000000cu, NULL, &bad), EINVAL);   /* makes wr[k] */
	second = bad;
	cr_assert_eq(post(8, IBV_WR_SEND, 32, second, &bad), EINVAL);
	cr_assert_eq(bad, second, "bad_wr must name the long WR");
	ut_expect(B.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 32);
	ut_expect(A.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 8);
	cr_assert_eq(ut_poll(A.cq, &wc, 100), 0, "the long WR completed");
}

Test(lengths, receive_sge_above_max_msg_sz_is_refused)
{
	struct ibv_sge sg = { .addr = (uintptr_t)B.buf, .length = 0x8000000cu, .lkey = B.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 5, .sg_list = &sg, .num_sge = 1 }, *bad = NULL;

	cr_assert_eq(ibv_post_recv(B.qp, &wr, &bad), EINVAL);
	cr_assert_eq(bad, &wr);
	sg.length = max_msg + 1;
	bad = NULL;
	cr_assert_eq(ibv_post_recv(B.qp, &wr, &bad), EINVAL);
	cr_assert_eq(bad, &wr);
	/* nothing was queued: the next receive is the one a SEND lands in */
	ut_post_recv(&B, 1, B.buf, 4096);
	expect_only_good_send_arrives();
}

Test(lengths, wr_set_sge_above_max_msg_sz_fails_wr_complete)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(A.qp);
	struct ibv_wc wc;

	cr_assert_not_null(x);
	ut_post_recv(&B, 1, B.buf, 4096);
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)A.buf, 0x8000000cu);
	cr_assert_eq(ibv_wr_complete(x), EINVAL);
	cr_assert_eq(ut_poll(B.cq, &wc, 200), 0, "the peer received something");
	expect_only_good_send_arrives();
}
