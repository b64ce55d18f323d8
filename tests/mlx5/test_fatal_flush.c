/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Device fatal and surprise removal flush every queue (docs/architecture.md, "Bring-up, teardown, pages, health": "on a
 * fatal syndrome, fail every queue with flush errors"; IBTA 10.3.1: outstanding work
 * requests of a queue in the error state complete with "flushed in error").
 *
 * A dead device writes no CQE, so the driver makes the flush completions itself: after
 * the health watch saw the death, polling a CQ returns the CQEs already written, then one
 * IBV_WC_WR_FLUSH_ERR completion per outstanding WQE of every queue completing on that
 * CQ (send queues, receive queues, SRQs), then nothing.
 *
 * The WQEs stay outstanding because the RC QPs send to a QPN nobody has (the emulated
 * NIC drops those packets) with a local ACK timeout far longer than the test. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/mlx5/mx5_loop.h"

static struct mx5_mr *mr;
static uint8_t buf[8192];
static int fatal_events;
static int comp_events;

static void on_event(void *ctx, const struct mx5_event *ev)
{
	(void)ctx;
	if (ev->type == MX5_EVENT_DEVICE_FATAL)
		fatal_events++;
}

static void on_comp(void *ctx, struct mx5_cq *cq)
{
	(void)ctx;
	(void)cq;
	comp_events++;
}

static void setup(void)
{
	loop_open("emu:");
	fatal_events = comp_events = 0;
	mx5_device_set_event_handler(dev, on_event, NULL);
	cr_assert_eq(mx5_mr_reg(pd, buf, sizeof(buf), MX5_ACCESS_LOCAL_WRITE |
			       MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ, &mr), 0,
		     "%s", mx5_device_error(dev));
}

static void teardown(void)
{
	loop_close();
}

TestSuite(fatal_flush, .init = setup, .fini = teardown, .timeout = 60);

static struct mx5_cq *make_cq(uint32_t depth)
{
	return loop_cq(depth, on_comp);
}

#define make_qp loop_qp
#define connect_qp loop_connect
#define NOBODY_QPN LOOP_NOBODY_QPN

static uint32_t mr_lkey(void)
{
	return loop_lkey(mr);
}

static void post_write(struct mx5_qp *qp, uint64_t id, int flags)
{
	loop_post_rdma(qp, IBV_WR_RDMA_WRITE, id, buf, 64, mr_lkey(), (uintptr_t)buf + 4096,
		       mr_lkey(), flags);
}

static void post_recv(struct mx5_qp *qp, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + 2048, .length = 256, .lkey = mr_lkey() };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;
	cr_assert_eq(mx5_post_recv(mx5_qp_rq_state(qp), &wr, &bad), 0, "post_recv %llu",
		     (unsigned long long)id);
}

static void post_srq(struct mx5_srq *srq, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + 2048, .length = 256, .lkey = mr_lkey() };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;
	cr_assert_eq(mx5_post_srq_recv(mx5_srq_state(srq), &wr, &bad), 0, "post_srq_recv %llu",
		     (unsigned long long)id);
}

static void kill_device(int removal)
{
	struct mx5_health h;
	cr_assert_eq(mx5_device_check_health(dev, &h), MX5_HEALTH_OK);
	if (removal)
		emu_surprise_remove(emu);
	else
		emu_fault_fatal(emu, 0x7);
	cr_assert_eq(mx5_device_check_health(dev, &h),
		     removal ? MX5_HEALTH_REMOVED : MX5_HEALTH_FATAL);
	cr_assert_eq(fatal_events, 1);
}

/* Poll the CQ dry: up to max completions, one poll call per completion so the flush's
 * resumption is exercised; then the CQ must stay empty. */
static int drain(struct mx5_cq *cq, struct ibv_wc *wc, int max)
{
	struct mx5_cq_ring *r = mx5_cq_state(cq);
	int n = 0;
	for (;;) {
		int got = mx5_poll_cq(r, 1, wc + n);
		cr_assert_geq(got, 0, "poll %d", got);
		if (!got)
			break;
		cr_assert_lt(n, max, "more completions than WQEs posted");
		n++;
	}
	for (int i = 0; i < 3; i++)
		cr_assert_eq(mx5_poll_cq(r, 1, wc + max), 0, "the CQ stays empty after the flush");
	return n;
}

static void expect_flush(const struct ibv_wc *wc, uint64_t id, uint32_t qpn, enum ibv_wc_opcode op)
{
	cr_assert_eq(wc->status, IBV_WC_WR_FLUSH_ERR, "wr_id %llu: status %d",
		     (unsigned long long)wc->wr_id, wc->status);
	cr_assert_eq(wc->wr_id, id, "wr_id %llu, expected %llu", (unsigned long long)wc->wr_id,
		     (unsigned long long)id);
	cr_assert_eq(wc->qp_num, qpn);
	cr_assert_eq(wc->opcode, op);
}

static void flushes_send_and_receive_queues(int removal)
{
	struct mx5_cq *cq = make_cq(64);
	struct mx5_qp *qp = make_qp(cq, cq, NULL, 16);
	connect_qp(qp, NOBODY_QPN);
	/* unsignalled ones too: a WR that does not complete successfully always reports */
	for (uint64_t i = 1; i <= 5; i++)
		post_write(qp, i, i == 3 ? 0 : IBV_SEND_SIGNALED);
	for (uint64_t i = 101; i <= 103; i++)
		post_recv(qp, i);
	struct ibv_wc wc[16];
	cr_assert_eq(mx5_poll_cq(mx5_cq_state(cq), 16, wc), 0, "nothing completes while alive");
	comp_events = 0;
	kill_device(removal);
	cr_assert_eq(comp_events, 1, "the CQ's completion handler woke its waiters");
	cr_assert_eq(mx5_cq_flushed(cq), 1);
	int n = drain(cq, wc, 16);
	cr_assert_eq(n, 8, "5 sends and 3 receives flushed, got %d", n);
	for (int i = 0; i < 5; i++)
		expect_flush(&wc[i], (uint64_t)i + 1, mx5_qp_num(qp), IBV_WC_SEND);
	for (int i = 0; i < 3; i++)
		expect_flush(&wc[5 + i], 101 + (uint64_t)i, mx5_qp_num(qp), IBV_WC_RECV);
	cr_assert_eq(mx5_qp_state(qp), MX5_QPS_ERR);
}

Test(fatal_flush, fatal_health_flushes_every_outstanding_send_and_receive_wqe)
{
	flushes_send_and_receive_queues(0);
}

Test(fatal_flush, surprise_removal_flushes_every_outstanding_send_and_receive_wqe)
{
	flushes_send_and_receive_queues(1);
}

Test(fatal_flush, each_queue_is_flushed_on_its_own_cq_in_batches)
{
	struct mx5_cq *scq = make_cq(64), *rcq = make_cq(64);
	struct mx5_qp *q1 = make_qp(scq, rcq, NULL, 32), *q2 = make_qp(scq, rcq, NULL, 32);
	connect_qp(q1, NOBODY_QPN);
	connect_qp(q2, NOBODY_QPN);
	for (uint64_t i = 0; i < 20; i++)
		post_write(i & 1 ? q2 : q1, i, IBV_SEND_SIGNALED);
	for (uint64_t i = 0; i < 7; i++)
		post_recv(i & 1 ? q2 : q1, 1000 + i);
	kill_device(0);
	/* batches of 8 through ibv_poll_cq semantics: every WR exactly once */
	struct ibv_wc wc[8];
	int seen[20] = { 0 }, nsend = 0, r;
	while ((r = mx5_poll_cq(mx5_cq_state(scq), 8, wc)) > 0) {
		for (int i = 0; i < r; i++) {
			cr_assert_eq(wc[i].status, IBV_WC_WR_FLUSH_ERR);
			cr_assert_lt(wc[i].wr_id, 20);
			cr_assert_eq(wc[i].qp_num, mx5_qp_num(wc[i].wr_id & 1 ? q2 : q1));
			seen[wc[i].wr_id]++;
			nsend++;
		}
	}
	cr_assert_eq(r, 0);
	cr_assert_eq(nsend, 20);
	for (int i = 0; i < 20; i++)
		cr_assert_eq(seen[i], 1, "send %d reported %d times", i, seen[i]);
	int nrecv = 0;
	while ((r = mx5_poll_cq(mx5_cq_state(rcq), 8, wc)) > 0) {
		for (int i = 0; i < r; i++) {
			cr_assert_eq(wc[i].status, IBV_WC_WR_FLUSH_ERR);
			cr_assert_eq(wc[i].opcode, IBV_WC_RECV);
			cr_assert(wc[i].wr_id >= 1000 && wc[i].wr_id < 1007);
			nrecv++;
		}
	}
	cr_assert_eq(nrecv, 7, "receives flushed on the receive CQ only");
}

Test(fatal_flush, srq_wqes_are_flushed_once_and_return_to_the_free_list)
{
	struct mx5_cq *cq = make_cq(64);
	struct mx5_srq *srq;
	struct mx5_srq_attr sa = { .max_wr = 7, .max_sge = 1 };
	cr_assert_eq(mx5_srq_create(pd, cq, &sa, &srq), 0, "%s", mx5_device_error(dev));
	struct mx5_qp *q1 = make_qp(cq, cq, srq, 8), *q2 = make_qp(cq, cq, srq, 8);
	connect_qp(q1, NOBODY_QPN);
	connect_qp(q2, NOBODY_QPN);
	struct mx5_srq_attr got;
	mx5_srq_query(srq, &got);
	for (uint64_t i = 0; i < got.max_wr; i++)
		post_srq(srq, 500 + i);
	post_write(q2, 1, IBV_SEND_SIGNALED);
	kill_device(1);
	struct ibv_wc wc[32];
	int n = drain(cq, wc, 32);
	cr_assert_eq(n, (int)got.max_wr + 1, "one send and %u SRQ WQEs, got %d", got.max_wr, n);
	int seen[64] = { 0 }, sends = 0;
	for (int i = 0; i < n; i++) {
		if (wc[i].opcode == IBV_WC_SEND) {
			/* queues come in QPN order: the send may follow SRQ WQEs */
			expect_flush(&wc[i], 1, mx5_qp_num(q2), IBV_WC_SEND);
			sends++;
			continue;
		}
		cr_assert_eq(wc[i].status, IBV_WC_WR_FLUSH_ERR);
		cr_assert_eq(wc[i].opcode, IBV_WC_RECV);
		cr_assert(wc[i].wr_id >= 500 && wc[i].wr_id < 500 + got.max_wr);
		seen[wc[i].wr_id - 500]++;
	}
	cr_assert_eq(sends, 1);
	for (unsigned i = 0; i < got.max_wr; i++)
		cr_assert_eq(seen[i], 1, "SRQ WQE %u reported %d times", i, seen[i]);
	/* every WQE is free again: the whole depth can be posted once more, and flushed */
	for (uint64_t i = 0; i < got.max_wr; i++)
		post_srq(srq, 600 + i);
	n = drain(cq, wc, 32);
	cr_assert_eq(n, (int)got.max_wr, "WQEs posted after the death are flushed too");
	for (int i = 0; i < n; i++)
		cr_assert(wc[i].wr_id >= 600 && wc[i].status == IBV_WC_WR_FLUSH_ERR);
}

/* An XRC SRQ's WQEs are held by no QP of its CQ (its target QPs have no CQ of their
 * own): the flush finds them through the CQ's XRC SRQs, once each. */
Test(fatal_flush, xrc_srq_wqes_are_flushed_on_the_srqs_cq)
{
	struct mx5_cq *cq = make_cq(64);
	struct mx5_xrcd *xrcd;
	struct mx5_srq *srq;
	struct mx5_srq_attr sa = { .max_wr = 7, .max_sge = 1 }, got;
	struct ibv_wc wc[32];
	int seen[8] = { 0 };

	cr_assert_eq(mx5_xrcd_alloc(dev, &xrcd), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_xrc_srq_create(pd, xrcd, cq, &sa, &srq), 0, "%s", mx5_device_error(dev));
	mx5_srq_query(srq, &got);
	cr_assert_leq(got.max_wr, 8);
	for (uint64_t i = 0; i < got.max_wr; i++)
		post_srq(srq, 700 + i);
	kill_device(0);
	int n = drain(cq, wc, 32);
	cr_assert_eq(n, (int)got.max_wr, "%u XRC SRQ WQEs, %d flushed", got.max_wr, n);
	for (int i = 0; i < n; i++) {
		expect_flush(&wc[i], wc[i].wr_id, 0, IBV_WC_RECV);
		cr_assert(wc[i].wr_id >= 700 && wc[i].wr_id < 700 + got.max_wr);
		seen[wc[i].wr_id - 700]++;
	}
	for (unsigned i = 0; i < got.max_wr; i++)
		cr_assert_eq(seen[i], 1, "XRC SRQ WQE %u reported %d times", i, seen[i]);
}

Test(fatal_flush, cqes_written_before_the_death_come_first)
{
	struct mx5_cq *cq = make_cq(64);
	struct mx5_qp *a = make_qp(cq, cq, NULL, 16), *b = make_qp(cq, cq, NULL, 16);
	connect_qp(a, mx5_qp_num(b));
	connect_qp(b, mx5_qp_num(a));
	post_write(a, 7, IBV_SEND_SIGNALED);
	/* wait (bounded) until the device wrote the WRITE's CQE, without consuming it */
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!mx5_cq_next(mx5_cq_state(cq))) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		cr_assert_lt(now.tv_sec - t0.tv_sec, 10, "the WRITE never completed");
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	post_recv(b, 70);
	kill_device(0);
	struct ibv_wc wc[8];
	int n = drain(cq, wc, 8);
	cr_assert_eq(n, 2);
	cr_assert_eq(wc[0].status, IBV_WC_SUCCESS, "the real completion first");
	cr_assert_eq(wc[0].wr_id, 7);
	cr_assert_eq(wc[0].opcode, IBV_WC_RDMA_WRITE);
	expect_flush(&wc[1], 70, mx5_qp_num(b), IBV_WC_RECV);
}

Test(fatal_flush, a_live_device_never_flushes)
{
	struct mx5_cq *cq = make_cq(16);
	struct mx5_qp *qp = make_qp(cq, cq, NULL, 8);
	connect_qp(qp, NOBODY_QPN);
	post_write(qp, 1, IBV_SEND_SIGNALED);
	post_recv(qp, 2);
	struct ibv_wc wc;
	for (int i = 0; i < 100; i++)
		cr_assert_eq(mx5_poll_cq(mx5_cq_state(cq), 1, &wc), 0);
	cr_assert_eq(mx5_cq_flushed(cq), 0);
}

Test(fatal_flush, a_command_in_flight_at_surprise_removal_fails_at_once_and_flushes)
{
	struct mx5_cq *cq = make_cq(16);
	struct mx5_qp *qp = make_qp(cq, cq, NULL, 8);
	connect_qp(qp, NOBODY_QPN);
	post_write(qp, 9, IBV_SEND_SIGNALED);
	/* nobody looked at the health registers: the next command finds out */
	emu_surprise_remove(emu);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct mx5_pd *pd2;
	cr_assert_eq(mx5_pd_alloc(dev, &pd2), -ENODEV, "%s", mx5_device_error(dev));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert_lt(t1.tv_sec - t0.tv_sec, 2, "no wait for the command timeout");
	cr_assert(strstr(mx5_device_error(dev), "not responding") ||
		  strstr(mx5_device_error(dev), "removed"), "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_device_is_fatal(dev), 1);
	cr_assert_eq(fatal_events, 1);
	struct ibv_wc wc[4];
	cr_assert_eq(drain(cq, wc, 4), 1);
	expect_flush(&wc[0], 9, mx5_qp_num(qp), IBV_WC_SEND);
}
