/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RC error paths between two emulated NICs: RNR NAKs then success once a receive is
 * posted, rnr_retry exhausted, the peer gone (RETRY_EXC_ERR after the configured
 * timeout on that QP only), remote access errors, and what follows an error (QP in
 * error, later WQEs flushed). */
#include "tp_pair.h"

static struct tp_nic A, B;
static struct tp_ep qa, qb;
static uint8_t *abuf, *bbuf;
static struct mx5_mr *amr, *bmr;
#define LEN (256u << 10)

static const struct tp_fixture fx = { &A, &B, &qa, &qb, &abuf, &bbuf, &amr, &bmr, LEN };

static void open_pair(const struct tp_conn *c)
{
	tp_fixture_open(&fx, "emu:", "emu:", 1024, MX5_QPT_RC, 64,
			MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ, c);
}

static void teardown(void)
{
	tp_fixture_close(&fx);
}

TestSuite(rc_errors, .fini = teardown, .timeout = 60);

Test(rc_errors, send_without_receive_gets_rnr_naks_then_succeeds_once_posted)
{
	struct tp_conn c = { .mtu = 3, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1 };
	struct ibv_wc wc;

	open_pair(&c);
	tp_fill(abuf, 3000, 5);
	cr_assert_eq(tp_post(&qa, IBV_WR_SEND, 1, abuf, 3000, tp_lkey(amr), 0, 0, IBV_SEND_SIGNALED), 0);
	usleep(50000);
	cr_assert_eq(tp_poll(&A, &wc, 1), 0, "SEND completed with no receive posted");
	cr_assert_gt(tp_ctr(&B).rnr_naks_sent, 0);
	cr_assert_gt(tp_ctr(&A).rnr_waits, 0);
	cr_assert_eq(tp_post_recv(&qb, 2, bbuf, LEN, tp_lkey(bmr)), 0);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	tp_expect(&B, &wc, IBV_WC_SUCCESS, 5000);
	cr_assert_eq(wc.byte_len, 3000);
	cr_assert_eq(memcmp(abuf, bbuf, 3000), 0);
}

Test(rc_errors, rnr_retry_exhausted_fails_with_rnr_retry_exc_and_flushes_the_rest)
{
	struct tp_conn c = { .mtu = 3, .timeout = 14, .retry_cnt = 7, .rnr_retry = 2, .min_rnr_timer = 1 };
	struct ibv_wc wc;
	struct mx5_qp_attr qattr;

	open_pair(&c);
	cr_assert_eq(tp_post(&qa, IBV_WR_SEND, 1, abuf, 100, tp_lkey(amr), 0, 0, IBV_SEND_SIGNALED), 0);
	cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE, 2, abuf, 100, tp_lkey(amr), (uintptr_t)bbuf, tp_rkey(bmr), 0), 0);
	tp_expect(&A, &wc, IBV_WC_RNR_RETRY_EXC_ERR, 5000);
	cr_assert_eq(wc.wr_id, 1);
	tp_expect(&A, &wc, IBV_WC_WR_FLUSH_ERR, 1000);
	cr_assert_eq(wc.wr_id, 2);
	cr_assert_eq(tp_ctr(&B).rnr_naks_sent, 3, "rnr_retry 2: the first try and two retries");
	cr_assert_eq(mx5_qp_query(qa.qp, &qattr, NULL), 0);
	cr_assert_eq(qattr.qp_state, MX5_QPS_ERR);
}

Test(rc_errors, peer_gone_gives_retry_exc_after_the_timeout_on_that_qp_only)
{
	struct tp_conn c = { .mtu = 3, .timeout = 12, .retry_cnt = 3, .rnr_retry = 7, .min_rnr_timer = 1 };
	struct tp_ep qa2, qb2;
	struct ibv_wc wc;
	uint64_t t0, dt;
	/* 4.096 us * 2^12 = 16.8 ms per try, 1 + retry_cnt tries */
	const uint64_t min_ms = 4 * 16;

	open_pair(&c);
	tp_qp_create(&qa2, &A, MX5_QPT_RC, 16, NULL);
	tp_qp_create(&qb2, &B, MX5_QPT_RC, 16, NULL);
	tp_connect(&qa2, &qb2, &c);
	cr_assert_eq(mx5_qp_destroy(qb.qp), 0);
	t0 = tp_now_ms();
	cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE, 7, abuf, 5000, tp_lkey(amr), (uintptr_t)bbuf, tp_rkey(bmr),
			     IBV_SEND_SIGNALED), 0);
	tp_expect(&A, &wc, IBV_WC_RETRY_EXC_ERR, 10000);
	dt = tp_now_ms() - t0;
	cr_assert_eq(wc.wr_id, 7);
	cr_assert_eq(wc.qp_num, qa.qpn);
	cr_assert_geq(dt, min_ms, "RETRY_EXC after %llu ms, before %llu ms of timeouts", (unsigned long long)dt,
		      (unsigned long long)min_ms);
	cr_assert_eq(tp_ctr(&A).timeouts, 4);
	cr_assert_gt(tp_ctr(&B).drops[EMU_ROCE_DROP_QPN], 0);
	/* the other QP on the same NICs still works */
	tp_fill(abuf + 8192, 4000, 3);
	cr_assert_eq(tp_post(&qa2, IBV_WR_RDMA_WRITE, 8, abuf + 8192, 4000, tp_lkey(amr), (uintptr_t)bbuf + 8192,
			     tp_rkey(bmr), IBV_SEND_SIGNALED), 0);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	cr_assert_eq(wc.qp_num, qa2.qpn);
	cr_assert_eq(memcmp(abuf + 8192, bbuf + 8192, 4000), 0);
}

Test(rc_errors, write_with_a_bad_rkey_is_a_remote_access_error_and_writes_nothing)
{
	struct tp_conn c = { .mtu = 3, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1 };
	struct ibv_wc wc;
	struct mx5_qp_attr qattr;

	open_pair(&c);
	memset(bbuf, 0x11, 4096);
	cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE, 1, abuf, 2000, tp_lkey(amr), (uintptr_t)bbuf, tp_rkey(bmr) ^ 0x100,
			     IBV_SEND_SIGNALED), 0);
	tp_expect(&A, &wc, IBV_WC_REM_ACCESS_ERR, 5000);
	cr_assert_eq(tp_ctr(&B).naks_sent[EMU_AETH_NAK_REM_ACCESS], 1);
	cr_assert_eq(mx5_qp_query(qb.qp, &qattr, NULL), 0);
	cr_assert_eq(qattr.qp_state, MX5_QPS_ERR, "responder QP after a remote access error");
	for (int i = 0; i < 4096; i++)
		cr_assert_eq(bbuf[i], 0x11);
}

Test(rc_errors, send_longer_than_the_receive_buffer_is_a_remote_invalid_request)
{
	struct tp_conn c = { .mtu = 3, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1 };
	struct ibv_wc wc;

	open_pair(&c);
	cr_assert_eq(tp_post_recv(&qb, 5, bbuf, 100, tp_lkey(bmr)), 0);
	cr_assert_eq(tp_post(&qa, IBV_WR_SEND, 1, abuf, 2000, tp_lkey(amr), 0, 0, IBV_SEND_SIGNALED), 0);
	tp_expect(&A, &wc, IBV_WC_REM_INV_REQ_ERR, 5000);
	tp_expect(&B, &wc, IBV_WC_LOC_LEN_ERR, 5000);
	cr_assert_eq(wc.wr_id, 5);
}

/* A QP with no responder resources (max_dest_rd_atomic 0) cannot answer a READ, even
 * with remote read in its access flags: invalid request, not a protection error. */
Test(rc_errors, read_from_a_qp_without_responder_resources_is_a_remote_invalid_request)
{
	struct tp_conn c = { .mtu = 3, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1,
			     .no_responder_resources = true };
	struct ibv_wc wc;
	struct mx5_qp_attr qattr;

	open_pair(&c);
	memset(bbuf, 0x11, 4096);
	memset(abuf, 0, 4096);
	cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_READ, 1, abuf, 4096, tp_lkey(amr), (uintptr_t)bbuf, tp_rkey(bmr),
			     IBV_SEND_SIGNALED), 0);
	tp_expect(&A, &wc, IBV_WC_REM_INV_REQ_ERR, 5000);
	cr_assert_eq(tp_ctr(&B).naks_sent[EMU_AETH_NAK_INV_REQ], 1);
	cr_assert_eq(tp_ctr(&B).naks_sent[EMU_AETH_NAK_REM_ACCESS], 0);
	for (int i = 0; i < 4096; i++)
		cr_assert_eq(abuf[i], 0, "byte %d arrived", i);
	memset(&qattr, 0, sizeof(qattr));
	cr_assert_eq(mx5_qp_query(qb.qp, &qattr, NULL), 0);
	cr_assert_eq(qattr.qp_state, MX5_QPS_ERR);
	/* the access flags the application asked for are what query reports */
	cr_assert(qattr.qp_access_flags & MX5_ACCESS_REMOTE_READ);
}

/* A QP not enabled for an operation (qp_access_flags) refuses it as an invalid request;
 * a memory region without the right gives a remote access error (test_hostile.c). */
Test(rc_errors, write_to_a_qp_without_remote_write_enabled_is_a_remote_invalid_request)
{
	struct tp_conn c = { .mtu = 3, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1,
			     .access = MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_READ };
	struct ibv_wc wc;

	open_pair(&c);
	memset(bbuf, 0x11, 4096);
	tp_fill(abuf, 4096, 3);
	cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE, 1, abuf, 4096, tp_lkey(amr), (uintptr_t)bbuf, tp_rkey(bmr),
			     IBV_SEND_SIGNALED), 0);
	tp_expect(&A, &wc, IBV_WC_REM_INV_REQ_ERR, 5000);
	for (int i = 0; i < 4096; i++)
		cr_assert_eq(bbuf[i], 0x11, "byte %d written", i);
}

Test(rc_errors, atomic_on_a_qp_without_remote_atomic_enabled_is_a_remote_invalid_request)
{
	struct tp_conn c = { .mtu = 3, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1,
			     .access = MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ };
	struct ibv_wc wc;
	uint64_t *target;

	open_pair(&c);
	target = (uint64_t *)bbuf;
	*target = 77;
	cr_assert_eq(tp_post_atomic(&qa, IBV_WR_ATOMIC_FETCH_AND_ADD, 1, abuf, tp_lkey(amr), (uintptr_t)target,
				    tp_rkey(bmr), 1, 0), 0);
	tp_expect(&A, &wc, IBV_WC_REM_INV_REQ_ERR, 5000);
	cr_assert_eq(*target, 77);
}

/* A QP taken to RESET forgets the requests it had in flight (IBTA: work requests
 * outstanding at the reset are discarded), even when it is connected again with the
 * same PSNs before any packet or doorbell shows the device it was reset. */
Test(rc_errors, a_qp_reset_with_a_request_in_flight_forgets_it)
{
	struct tp_conn c = { .mtu = 3, .sq_psn = 0x500, .rq_psn = 0x700, .timeout = 14, .retry_cnt = 7,
			     .rnr_retry = 7, .min_rnr_timer = 1 };
	struct mx5_qp_attr rst = { .qp_state = MX5_QPS_RESET };
	struct ibv_wc wc;

	open_pair(&c);
	emu_wire_link_set(B.emu, 0);     /* B hears nothing: the first WRITE stays unanswered */
	tp_fill(abuf, 4096, 1);
	cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE, 1, abuf, 4096, tp_lkey(amr), (uintptr_t)bbuf, tp_rkey(bmr),
			     IBV_SEND_SIGNALED), 0);
	usleep(20000);
	cr_assert_eq(tp_ctr(&A).tx_pkts, 4, "the WRITE went out (4 packets at MTU 1024)");
	cr_assert_eq(mx5_qp_modify(qa.qp, &rst, MX5_QP_STATE), 0, "%s", mx5_device_error(A.dev));
	tp_qp_connect_to(&qa, B.ip, qb.qpn, &c);
	emu_wire_link_set(B.emu, 1);
	tp_fill(abuf + 8192, 4096, 2);
	cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE, 2, abuf + 8192, 4096, tp_lkey(amr), (uintptr_t)bbuf + 8192,
			     tp_rkey(bmr), IBV_SEND_SIGNALED), 0);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	cr_assert_eq(wc.wr_id, 2);
	cr_assert_eq(memcmp(bbuf + 8192, abuf + 8192, 4096), 0);
	/* the forgotten WRITE never completes, never lands, and nothing is resent for it */
	cr_assert_eq(tp_poll(&A, &wc, 300), 0, "a completion for wr_id %llu", (unsigned long long)wc.wr_id);
	for (int i = 0; i < 4096; i++)
		cr_assert_eq(bbuf[i], 0, "byte %d of the forgotten WRITE landed", i);
	cr_assert_eq(tp_ctr(&A).retransmits, 0);
}

Test(rc_errors, bad_lkey_is_a_local_protection_error)
{
	struct tp_conn c = { .mtu = 3, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1 };
	struct ibv_wc wc;

	open_pair(&c);
	cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE, 1, abuf, 100, tp_lkey(amr) + 0x100, (uintptr_t)bbuf, tp_rkey(bmr),
			     IBV_SEND_SIGNALED), 0);
	tp_expect(&A, &wc, IBV_WC_LOC_PROT_ERR, 5000);
	cr_assert_eq(tp_ctr(&A).tx_pkts, 0, "nothing may leave for a WQE with a bad lkey");
}

/* The responder's message limit is the log_msg_max its INIT2RTR carried (2^12 here: its
 * device reports log_max_msg 12, and the driver sends that at INIT2RTR as Linux
 * __mlx5_ib_modify_qp does): an 8 KiB WRITE to it is NAKed as an invalid request,
 * a 4 KiB one lands. */
Test(rc_errors, write_longer_than_the_responders_message_limit_is_a_remote_invalid_request)
{
	struct tp_conn c = { .mtu = 3, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1 };
	struct ibv_wc wc;

	tp_fixture_open(&fx, "emu:", "emu:cap=general.log_max_msg:12", 1024, MX5_QPT_RC, 64,
			MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ, &c);
	cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE, 1, abuf, 4096, tp_lkey(amr), (uintptr_t)bbuf, tp_rkey(bmr),
			     IBV_SEND_SIGNALED), 0);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE, 2, abuf, 8192, tp_lkey(amr), (uintptr_t)bbuf, tp_rkey(bmr),
			     IBV_SEND_SIGNALED), 0);
	tp_expect(&A, &wc, IBV_WC_REM_INV_REQ_ERR, 5000);
	cr_assert_eq(wc.wr_id, 2);
}
