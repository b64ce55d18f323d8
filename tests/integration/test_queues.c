/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Queue engines seen through the driver: SRQ receives consumed in order across two QPs,
 * completion events only for armed CQs (and only for solicited CQEs when armed so),
 * CQ overrun -> CQ error event, and the owner bit across several laps of the ring. */
#include "tp_pair.h"

#include <poll.h>

static struct tp_nic A, B;
static uint8_t *abuf, *bbuf;
static struct mx5_mr *amr, *bmr;
#define LEN (1u << 20)

static const struct tp_fixture fx = { &A, &B, NULL, NULL, &abuf, &bbuf, &amr, &bmr, LEN };

static void open_nics(void)
{
	tp_fixture_open(&fx, "emu:", "emu:", 1024, MX5_QPT_RC, 0, MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE, NULL);
}

static void teardown(void)
{
	tp_fixture_close(&fx);
}

TestSuite(queues, .fini = teardown, .timeout = 60);

static const struct tp_conn rc = { .mtu = 3, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1 };

/* An RC pair A -> B whose B side receives into recv_cq (rq_depth receive WQEs). */
static void connect_to_cq(struct tp_ep *a, struct tp_ep *b, struct mx5_cq *recv_cq, uint32_t rq_depth)
{
	struct mx5_qp_init_attr qi;

	tp_qp_create(a, &A, MX5_QPT_RC, rq_depth, NULL);
	memset(&qi, 0, sizeof(qi));
	qi.type = MX5_QPT_RC;
	qi.send_cq = B.cq;
	qi.recv_cq = recv_cq;
	qi.cap.max_send_wr = 16;
	qi.cap.max_recv_wr = rq_depth;
	qi.cap.max_send_sge = 1;
	qi.cap.max_recv_sge = 1;
	cr_assert_eq(mx5_qp_create(B.pd, &qi, &b->qp), 0, "%s", mx5_device_error(B.dev));
	b->nic = &B;
	b->type = MX5_QPT_RC;
	b->qpn = mx5_qp_num(b->qp);
	b->sq = mx5_qp_sq_state(b->qp);
	b->rq = mx5_qp_rq_state(b->qp);
	tp_connect(a, b, &rc);
}

Test(queues, srq_receives_are_consumed_in_order_by_two_qps)
{
	struct mx5_srq_attr sa = { .max_wr = 64, .max_sge = 1 };
	struct mx5_srq *srq;
	struct tp_ep a1, a2, b1, b2;
	struct ibv_wc wc;

	open_nics();
	cr_assert_eq(mx5_srq_create(B.pd, B.cq, &sa, &srq), 0, "%s", mx5_device_error(B.dev));
	tp_qp_create(&a1, &A, MX5_QPT_RC, 16, NULL);
	tp_qp_create(&a2, &A, MX5_QPT_RC, 16, NULL);
	tp_qp_create(&b1, &B, MX5_QPT_RC, 16, srq);
	tp_qp_create(&b2, &B, MX5_QPT_RC, 16, srq);
	tp_connect(&a1, &b1, &rc);
	tp_connect(&a2, &b2, &rc);
	for (unsigned i = 0; i < 8; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)(bbuf + i * 4096), .length = 4096, .lkey = tp_lkey(bmr) };
		struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &sge, .num_sge = 1 }, *bad;

		cr_assert_eq(mx5_post_srq_recv(mx5_srq_state(srq), &wr, &bad), 0);
	}
	for (unsigned i = 0; i < 8; i++) {
		struct tp_ep *e = i & 1 ? &a2 : &a1;

		tp_fill(abuf + i * 4096, 500 + i, i);
		cr_assert_eq(tp_post(e, IBV_WR_SEND, i, abuf + i * 4096, 500 + i, tp_lkey(amr), 0, 0, IBV_SEND_SIGNALED), 0);
		tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
		tp_expect(&B, &wc, IBV_WC_SUCCESS, 5000);
		cr_assert_eq(wc.wr_id, 100 + i, "SRQ WQE %llu used for message %u", (unsigned long long)wc.wr_id, i);
		cr_assert_eq(wc.qp_num, (i & 1 ? b2 : b1).qpn);
		cr_assert_eq(wc.byte_len, 500 + i);
		cr_assert_eq(memcmp(bbuf + i * 4096, abuf + i * 4096, 500 + i), 0);
	}
}

static int events;
static void comp_fn(void *ctx, struct mx5_cq *cq)
{
	(void)ctx;
	(void)cq;
	events++;
}

static int wait_event(struct mx5_eq *eq, int ms)
{
	struct pollfd p = { .fd = mx5_eq_fd(eq), .events = POLLIN };

	if (poll(&p, 1, ms) <= 0)
		return 0;
	return mx5_eq_poll(eq);
}

Test(queues, completion_event_only_when_armed_and_solicited_only_when_asked)
{
	struct mx5_cq_attr ca = { .cqe = 64, .comp_fn = comp_fn };
	struct mx5_cq *cq;
	struct mx5_eq *eq;
	struct tp_ep a, b;
	struct ibv_wc wc;

	open_nics();
	cr_assert_eq(mx5_cq_create(B.dev, &ca, &cq), 0, "%s", mx5_device_error(B.dev));
	cr_assert_eq(mx5_comp_eq_get(B.dev, 0, &eq), 0);
	connect_to_cq(&a, &b, cq, 16);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(tp_post_recv(&b, (uint64_t)i, bbuf + i * 4096, 4096, tp_lkey(bmr)), 0);
	events = 0;
	/* not armed: a CQE but no event */
	cr_assert_eq(tp_post(&a, IBV_WR_SEND, 0, abuf, 10, tp_lkey(amr), 0, 0, IBV_SEND_SIGNALED), 0);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	usleep(20000);
	cr_assert_eq(wait_event(eq, 50), 0);
	cr_assert_eq(mx5_poll_cq(mx5_cq_state(cq), 1, &wc), 1);
	/* armed: the next CQE raises one event */
	cr_assert_eq(mx5_cq_arm(cq, 0), 0);
	cr_assert_eq(tp_post(&a, IBV_WR_SEND, 1, abuf, 10, tp_lkey(amr), 0, 0, IBV_SEND_SIGNALED), 0);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	cr_assert_geq(wait_event(eq, 2000), 1);
	cr_assert_eq(events, 1);
	cr_assert_eq(mx5_poll_cq(mx5_cq_state(cq), 1, &wc), 1);
	/* solicited only: an unsolicited SEND raises nothing, a solicited one does */
	cr_assert_eq(mx5_cq_arm(cq, 1), 0);
	cr_assert_eq(tp_post(&a, IBV_WR_SEND, 2, abuf, 10, tp_lkey(amr), 0, 0, IBV_SEND_SIGNALED), 0);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	usleep(20000);
	cr_assert_eq(wait_event(eq, 50), 0);
	cr_assert_eq(events, 1);
	cr_assert_eq(tp_post(&a, IBV_WR_SEND, 3, abuf, 10, tp_lkey(amr), 0, 0, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED),
		     0);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	cr_assert_geq(wait_event(eq, 2000), 1);
	cr_assert_eq(events, 2);
}

static int last_wqe_events;
static uint32_t last_wqe_qpn;
static void last_wqe_fn(void *ctx, const struct mx5_event *ev)
{
	(void)ctx;
	if (ev->type == MX5_EVENT_LAST_WQE_REACHED) {
		last_wqe_events++;
		last_wqe_qpn = ev->num;
	}
}

/* IBTA "Last WQE Reached": a QP on an SRQ that enters the error state says so once, so
 * that software knows it will take no further WQE from the SRQ. */
Test(queues, qp_on_an_srq_entering_error_raises_last_wqe_reached_once)
{
	struct mx5_srq_attr sa = { .max_wr = 16, .max_sge = 1 };
	struct mx5_srq *srq;
	struct tp_ep a, b;
	struct ibv_wc wc;
	struct mx5_qp_attr qa = { .qp_state = MX5_QPS_ERR };

	open_nics();
	mx5_device_set_event_handler(B.dev, last_wqe_fn, NULL);
	cr_assert_eq(mx5_srq_create(B.pd, B.cq, &sa, &srq), 0, "%s", mx5_device_error(B.dev));
	tp_qp_create(&a, &A, MX5_QPT_RC, 16, NULL);
	tp_qp_create(&b, &B, MX5_QPT_RC, 16, srq);
	tp_connect(&a, &b, &rc);
	for (unsigned i = 0; i < 2; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)(bbuf + i * 4096), .length = 4096, .lkey = tp_lkey(bmr) };
		struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &sge, .num_sge = 1 }, *bad;

		cr_assert_eq(mx5_post_srq_recv(mx5_srq_state(srq), &wr, &bad), 0);
	}
	cr_assert_eq(tp_post(&a, IBV_WR_SEND, 1, abuf, 100, tp_lkey(amr), 0, 0, IBV_SEND_SIGNALED), 0);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	tp_expect(&B, &wc, IBV_WC_SUCCESS, 5000);
	last_wqe_events = 0;
	mx5_device_poll_events(B.dev);
	cr_assert_eq(last_wqe_events, 0, "no event while the QP works");
	cr_assert_eq(mx5_qp_modify(b.qp, &qa, MX5_QP_STATE), 0, "%s", mx5_device_error(B.dev));
	for (int i = 0; i < 200 && !last_wqe_events; i++) {
		mx5_device_poll_events(B.dev);
		usleep(5000);
	}
	cr_assert_eq(last_wqe_events, 1);
	cr_assert_eq(last_wqe_qpn, b.qpn);
	/* once: the device thread's timers keep looking at the QP in error */
	usleep(50000);
	mx5_device_poll_events(B.dev);
	cr_assert_eq(last_wqe_events, 1);
}

/* The event comes from the error state itself, not from traffic: a QP that never
 * carried a packet raises it, and a QP reset and reconnected raises it again. */
Test(queues, last_wqe_reached_without_traffic_and_again_after_reset_and_reuse)
{
	struct mx5_srq_attr sa = { .max_wr = 16, .max_sge = 1 };
	struct mx5_srq *srq;
	struct tp_ep a, b;
	struct mx5_qp_attr err = { .qp_state = MX5_QPS_ERR }, rst = { .qp_state = MX5_QPS_RESET };

	open_nics();
	mx5_device_set_event_handler(B.dev, last_wqe_fn, NULL);
	cr_assert_eq(mx5_srq_create(B.pd, B.cq, &sa, &srq), 0, "%s", mx5_device_error(B.dev));
	tp_qp_create(&a, &A, MX5_QPT_RC, 16, NULL);
	tp_qp_create(&b, &B, MX5_QPT_RC, 16, srq);
	tp_connect(&a, &b, &rc);
	last_wqe_events = 0;
	for (int round = 1; round <= 2; round++) {
		cr_assert_eq(mx5_qp_modify(b.qp, &err, MX5_QP_STATE), 0, "%s", mx5_device_error(B.dev));
		for (int i = 0; i < 200 && last_wqe_events < round; i++) {
			mx5_device_poll_events(B.dev);
			usleep(5000);
		}
		usleep(30000);
		mx5_device_poll_events(B.dev);
		cr_assert_eq(last_wqe_events, round, "round %d: %d events", round, last_wqe_events);
		cr_assert_eq(last_wqe_qpn, b.qpn);
		/* back to work: RESET, then connected again */
		cr_assert_eq(mx5_qp_modify(b.qp, &rst, MX5_QP_STATE), 0, "%s", mx5_device_error(B.dev));
		tp_qp_connect_to(&b, A.ip, a.qpn, &rc);
	}
}

static int hit[300];
static void comp_count(void *ctx, struct mx5_cq *cq)
{
	(void)cq;
	hit[(intptr_t)ctx]++;
}

/* The event names its CQ by number; with hundreds of CQs (created, half destroyed) it
 * still reaches exactly that CQ's handler (hw/mlx5/cq_index.c). */
Test(queues, completion_event_reaches_its_cq_among_hundreds)
{
	struct mx5_cq *cqs[300];
	struct mx5_eq *eq;
	struct tp_ep a, b;
	struct ibv_wc wc;
	const int target = 257;

	open_nics();
	memset(hit, 0, sizeof(hit));
	for (int i = 0; i < 300; i++) {
		struct mx5_cq_attr ca = { .cqe = 4, .comp_fn = comp_count, .comp_ctx = (void *)(intptr_t)i };
		cr_assert_eq(mx5_cq_create(B.dev, &ca, &cqs[i]), 0, "CQ %d: %s", i, mx5_device_error(B.dev));
	}
	for (int i = 0; i < 300; i += 2) {   /* the even ones go; the target (odd) stays */
		cr_assert_eq(mx5_cq_destroy(cqs[i]), 0);
		cqs[i] = NULL;
	}
	cr_assert_eq(mx5_comp_eq_get(B.dev, 0, &eq), 0);
	connect_to_cq(&a, &b, cqs[target], 16);
	cr_assert_eq(tp_post_recv(&b, 1, bbuf, 4096, tp_lkey(bmr)), 0);
	for (int i = 1; i < 300; i += 2)
		cr_assert_eq(mx5_cq_arm(cqs[i], 0), 0);
	cr_assert_eq(tp_post(&a, IBV_WR_SEND, 1, abuf, 10, tp_lkey(amr), 0, 0, IBV_SEND_SIGNALED), 0);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	cr_assert_geq(wait_event(eq, 2000), 1);
	for (int i = 0; i < 300; i++)
		cr_assert_eq(hit[i], i == target ? 1 : 0, "CQ %d got %d events", i, hit[i]);
	cr_assert_eq(mx5_poll_cq(mx5_cq_state(cqs[target]), 1, &wc), 1);
	cr_assert_eq(wc.wr_id, 1);
	cr_assert_eq(mx5_qp_destroy(b.qp), 0);
	for (int i = 0; i < 300; i++)
		if (cqs[i])
			cr_assert_eq(mx5_cq_destroy(cqs[i]), 0);
}

Test(queues, owner_bit_flips_over_many_laps_of_a_small_cq)
{
	struct tp_ep a, b;
	struct ibv_wc wc;

	open_nics();
	tp_qp_create(&a, &A, MX5_QPT_RC, 16, NULL);
	tp_qp_create(&b, &B, MX5_QPT_RC, 16, NULL);
	tp_connect(&a, &b, &rc);
	/* A's CQ has 1024 entries: 3000 WRITEs go around it about three times */
	for (unsigned i = 0; i < 3000; i++) {
		cr_assert_eq(tp_post(&a, IBV_WR_RDMA_WRITE, i, abuf, 8, tp_lkey(amr), (uintptr_t)bbuf, tp_rkey(bmr),
				     IBV_SEND_SIGNALED | IBV_SEND_INLINE), 0);
		tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
		cr_assert_eq(wc.wr_id, i);
	}
	cr_assert_eq(tp_poll(&A, &wc, 10), 0);
}

static int cq_errors;
static void ev_fn(void *ctx, const struct mx5_event *ev)
{
	(void)ctx;
	if (ev->type == MX5_EVENT_CQ_ERROR)
		cq_errors++;
}

Test(queues, cq_overrun_raises_a_cq_error_event)
{
	struct mx5_cq_attr ca = { .cqe = 4 };
	struct mx5_cq *cq;
	struct tp_ep a, b;
	struct ibv_wc wc;
	uint32_t depth;

	open_nics();
	cr_assert_eq(mx5_cq_create(B.dev, &ca, &cq), 0, "%s", mx5_device_error(B.dev));
	depth = mx5_cq_depth(cq);
	mx5_device_set_event_handler(B.dev, ev_fn, NULL);
	connect_to_cq(&a, &b, cq, 64);
	for (uint32_t i = 0; i < depth + 2; i++) {
		cr_assert_eq(tp_post_recv(&b, i, bbuf, 4096, tp_lkey(bmr)), 0);
		cr_assert_eq(tp_post(&a, IBV_WR_SEND, i, abuf, 10, tp_lkey(amr), 0, 0, IBV_SEND_SIGNALED), 0);
		tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	}
	usleep(20000);
	cr_assert_eq(tp_ctr(&B).cq_overruns, 1);
	for (int i = 0; i < 100 && !cq_errors; i++) {
		mx5_device_poll_events(B.dev);
		usleep(1000);
	}
	cr_assert_eq(cq_errors, 1);
}

static int srq_limit_events;
static uint32_t srq_limit_num;
static void srq_limit_fn(void *ctx, const struct mx5_event *ev)
{
	(void)ctx;
	if (ev->type == MX5_EVENT_SRQ_LIMIT) {
		srq_limit_events++;
		srq_limit_num = ev->num;
	}
}

/* Send `n` messages A -> B, each consuming one of B's SRQ WQEs. */
static void srq_sends(struct tp_ep *a, unsigned n)
{
	struct ibv_wc wc;

	for (unsigned i = 0; i < n; i++) {
		cr_assert_eq(tp_post(a, IBV_WR_SEND, 1, abuf, 100, tp_lkey(amr), 0, 0, IBV_SEND_SIGNALED), 0);
		tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
		tp_expect(&B, &wc, IBV_WC_SUCCESS, 5000);
	}
}

static void srq_events_settle(void)
{
	for (int i = 0; i < 20; i++) {
		mx5_device_poll_events(B.dev);
		usleep(5000);
	}
}

/* ibv_modify_srq(IBV_SRQ_LIMIT) reaches the device (MODIFY_RMP with bitmask.lwm, Linux
 * srq_cmd.c arm_rmp_cmd) and the SRQ_LIMIT event fires once when fewer WQEs than the
 * limit remain; a limit given only at creation arms nothing (ibv_create_srq(3): the
 * limit is irrelevant there), so no event fires before the arm. */
Test(queues, srq_limit_fires_once_after_it_is_armed_and_not_before)
{
	struct mx5_srq_attr sa = { .max_wr = 16, .max_sge = 1, .srq_limit = 12 };
	struct mx5_srq *srq;
	struct tp_ep a, b;

	open_nics();
	mx5_device_set_event_handler(B.dev, srq_limit_fn, NULL);
	cr_assert_eq(mx5_srq_create(B.pd, B.cq, &sa, &srq), 0, "%s", mx5_device_error(B.dev));
	tp_qp_create(&a, &A, MX5_QPT_RC, 16, NULL);
	tp_qp_create(&b, &B, MX5_QPT_RC, 16, srq);
	tp_connect(&a, &b, &rc);
	for (unsigned i = 0; i < 12; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)(bbuf + i * 256), .length = 256, .lkey = tp_lkey(bmr) };
		struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &sge, .num_sge = 1 }, *bad;

		cr_assert_eq(mx5_post_srq_recv(mx5_srq_state(srq), &wr, &bad), 0);
	}
	srq_limit_events = 0;
	srq_sends(&a, 2);   /* 10 left: below the creation-time 12, but never armed */
	srq_events_settle();
	cr_assert_eq(srq_limit_events, 0, "no SRQ limit event before ibv_modify_srq arms it");
	cr_assert_eq(mx5_srq_arm(srq, 8), 0, "%s", mx5_device_error(B.dev));
	srq_sends(&a, 2);   /* 8 left: not below 8 */
	srq_events_settle();
	cr_assert_eq(srq_limit_events, 0, "8 WQEs left is not below the limit 8");
	srq_sends(&a, 1);   /* 7 left */
	for (int i = 0; i < 200 && !srq_limit_events; i++) {
		mx5_device_poll_events(B.dev);
		usleep(5000);
	}
	cr_assert_eq(srq_limit_events, 1);
	cr_assert_eq(srq_limit_num, mx5_srq_num(srq));
	srq_sends(&a, 2);   /* disarmed after firing (IBTA 10.2.9.3): no second event */
	srq_events_settle();
	cr_assert_eq(srq_limit_events, 1);
}
