/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Moving a QP to the error state flushes its work (IBTA 10.3.1 "Error" state, C10-26:
 * outstanding and later-posted WQEs complete with WR_FLUSH_ERR), and the standard drain
 * works: move to ERR, post a marker receive (and a marker send), wait for the marker's
 * flush completion (Linux ib_drain_rq/ib_drain_sq).  A QP moved to RESET takes its
 * completions out of the CQs (rdma-core providers/mlx5/cq.c __mlx5_cq_clean), so stale
 * flush completions do not come back after a reconnect.  A destroyed QP's unpolled
 * completions go as well (rdma-core providers/mlx5/verbs.c mlx5_destroy_qp calls
 * __mlx5_cq_clean on both CQs), so a poll never returns a completion of a QP that no
 * longer exists. */
#include "tp_pair.h"

static struct tp_nic A, B;
static struct tp_ep qa, qb;
static uint8_t *abuf, *bbuf;
static struct mx5_mr *amr, *bmr;
#define LEN (64u << 10)

static const struct tp_fixture fx = { &A, &B, &qa, &qb, &abuf, &bbuf, &amr, &bmr, LEN };
static const struct tp_conn rc = { .mtu = 3, .sq_psn = 0x10, .rq_psn = 0x20, .timeout = 14, .retry_cnt = 7,
				   .rnr_retry = 7, .min_rnr_timer = 1 };

static void open_pair(void)
{
	tp_fixture_open(&fx, "emu:", "emu:", 1024, MX5_QPT_RC, 64,
			MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ, &rc);
}

static void teardown(void)
{
	tp_fixture_close(&fx);
}

static void to_state(struct tp_ep *e, enum mx5_qp_state s)
{
	struct mx5_qp_attr a = { .qp_state = s };

	cr_assert_eq(mx5_qp_modify(e->qp, &a, MX5_QP_STATE), 0, "%s", mx5_device_error(e->nic->dev));
}

/* A flush completion of wr_id within ms (a drain waits for exactly this). */
static void expect_flush(struct tp_nic *n, uint64_t wr_id, unsigned ms)
{
	struct ibv_wc wc;

	snprintf(tp_what, sizeof(tp_what), "flush of wr_id %llu", (unsigned long long)wr_id);
	tp_expect(n, &wc, IBV_WC_WR_FLUSH_ERR, ms);
	cr_assert_eq(wc.wr_id, wr_id, "flushed wr_id %llu, expected %llu", (unsigned long long)wc.wr_id,
		     (unsigned long long)wr_id);
}

TestSuite(qp_flush, .fini = teardown, .timeout = 60);

/* A QP that never carried a packet: its posted receives flush when it moves to ERR. */
Test(qp_flush, posted_receives_flush_when_the_qp_moves_to_error)
{
	open_pair();
	for (uint64_t i = 0; i < 3; i++)
		cr_assert_eq(tp_post_recv(&qb, 10 + i, bbuf + 4096 * i, 4096, tp_lkey(bmr)), 0);
	to_state(&qb, MX5_QPS_ERR);
	for (uint64_t i = 0; i < 3; i++)
		expect_flush(&B, 10 + i, 0);   /* there once 2ERR_QP has completed */
}

/* ib_drain_rq: the marker receive posted after the move to ERR flushes too. */
Test(qp_flush, receive_drain_marker_posted_in_error_flushes)
{
	open_pair();
	cr_assert_eq(tp_post_recv(&qb, 1, bbuf, 4096, tp_lkey(bmr)), 0);
	to_state(&qb, MX5_QPS_ERR);
	expect_flush(&B, 1, 200);
	cr_assert_eq(tp_post_recv(&qb, 0xd7a1, bbuf, 4096, tp_lkey(bmr)), 0);
	expect_flush(&B, 0xd7a1, 200);
}

/* ib_drain_sq: the marker send posted after the move to ERR flushes. */
Test(qp_flush, send_drain_marker_posted_in_error_flushes)
{
	open_pair();
	to_state(&qa, MX5_QPS_ERR);
	cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE, 0xd7a2, abuf, 0, 0, 0, 0, IBV_SEND_SIGNALED), 0);
	expect_flush(&A, 0xd7a2, 200);
}

/* A send waiting for its ACK when the QP moves to ERR flushes then, not when a later
 * doorbell or timer notices it. */
Test(qp_flush, outstanding_send_flushes_at_the_move_to_error)
{
	open_pair();
	emu_wire_link_set(B.emu, 0);     /* B hears nothing: the WRITE stays unanswered */
	cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE, 5, abuf, 100, tp_lkey(amr), (uintptr_t)bbuf, tp_rkey(bmr),
			     IBV_SEND_SIGNALED), 0);
	usleep(20000);
	to_state(&qa, MX5_QPS_ERR);
	expect_flush(&A, 5, 0);          /* there once 2ERR_QP has completed */
}
/* After ERR, RESET and a reconnect, the completions of the old incarnation that were
 * never polled are gone: the first completion seen is the new work's. */
Test(qp_flush, reset_removes_the_qps_unpolled_completions)
{
	struct ibv_wc wc;

	open_pair();
	for (uint64_t i = 0; i < 4; i++)
		cr_assert_eq(tp_post_recv(&qb, 20 + i, bbuf + 4096 * i, 4096, tp_lkey(bmr)), 0);
	to_state(&qb, MX5_QPS_ERR);
	usleep(100000);                  /* the flush CQEs are written, none polled */
	to_state(&qb, MX5_QPS_RESET);
	to_state(&qa, MX5_QPS_RESET);
	tp_connect(&qa, &qb, &rc);
	cr_assert_eq(tp_post_recv(&qb, 30, bbuf, 4096, tp_lkey(bmr)), 0);
	cr_assert_eq(tp_post(&qa, IBV_WR_SEND, 31, abuf, 64, tp_lkey(amr), 0, 0, IBV_SEND_SIGNALED), 0);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	snprintf(tp_what, sizeof(tp_what), "first receive completion after the reset");
	tp_expect(&B, &wc, IBV_WC_SUCCESS, 5000);
	cr_assert_eq(wc.wr_id, 30);
	cr_assert_eq(tp_poll(&B, &wc, 50), 0, "a stale completion (wr_id %llu, status %d) after the reset",
		     (unsigned long long)wc.wr_id, wc.status);
}

/* Completions of other QPs on the same CQ stay when one QP is reset, in their order. */
Test(qp_flush, reset_keeps_other_qps_completions_on_the_shared_cq)
{
	struct tp_ep a2, b2;
	struct ibv_wc wc;

	open_pair();
	tp_qp_create(&a2, &A, MX5_QPT_RC, 16, NULL);
	tp_qp_create(&b2, &B, MX5_QPT_RC, 16, NULL);
	tp_connect(&a2, &b2, &rc);
	cr_assert_eq(tp_post_recv(&b2, 40, bbuf, 4096, tp_lkey(bmr)), 0);
	cr_assert_eq(tp_post_recv(&qb, 41, bbuf + 4096, 4096, tp_lkey(bmr)), 0);
	cr_assert_eq(tp_post_recv(&b2, 42, bbuf + 8192, 4096, tp_lkey(bmr)), 0);
	to_state(&b2, MX5_QPS_ERR);
	to_state(&qb, MX5_QPS_ERR);
	usleep(100000);
	to_state(&qb, MX5_QPS_RESET);
	expect_flush(&B, 40, 200);
	expect_flush(&B, 42, 200);
	cr_assert_eq(tp_poll(&B, &wc, 50), 0, "wr_id %llu of the reset QP came back", (unsigned long long)wc.wr_id);
}

/* A destroyed QP's unpolled completions leave the shared CQ; the other QP's stay. */
Test(qp_flush, destroy_removes_the_qps_unpolled_completions)
{
	struct tp_ep b2;
	struct ibv_wc wc;

	open_pair();
	tp_qp_create(&b2, &B, MX5_QPT_RC, 16, NULL);
	cr_assert_eq(tp_post_recv(&b2, 50, bbuf, 4096, tp_lkey(bmr)), 0);
	cr_assert_eq(tp_post_recv(&qb, 51, bbuf + 4096, 4096, tp_lkey(bmr)), 0);
	cr_assert_eq(tp_post_recv(&b2, 52, bbuf + 8192, 4096, tp_lkey(bmr)), 0);
	to_state(&b2, MX5_QPS_ERR);
	to_state(&qb, MX5_QPS_ERR);
	usleep(100000);                  /* the flush CQEs are written, none polled */
	cr_assert_eq(mx5_qp_destroy(b2.qp), 0, "%s", mx5_device_error(B.dev));
	expect_flush(&B, 51, 200);
	cr_assert_eq(tp_poll(&B, &wc, 50), 0, "wr_id %llu of the destroyed QP came back",
		     (unsigned long long)wc.wr_id);
}
