/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The emulated device's receive path driven by the application's CQ polls
 * (docs/architecture.md, "The receive path is driven by the poll", "ACKs leave the
 * critical path"): an empty mx5_poll_cq runs the shim's poll-assist hook, which takes
 * the arrivals in the polling thread; an ACK the responder's poll placed waits for the
 * responder's next doorbell on that QP and leaves after its request.
 *
 * Two emulated NICs in this process (127.66.x.x), an RC QP pair through the driver. */
#include <stddef.h>

#include "tests/integration/tp_pair.h"

static struct tp_nic A, B;
static struct tp_ep qa, qb;
static uint8_t *abuf, *bbuf;
static struct mx5_mr *amr, *bmr;

#define BUF (64u << 10)

static const struct tp_fixture fx = { &A, &B, &qa, &qb, &abuf, &bbuf, &amr, &bmr, BUF };

static void setup(void)
{
	/* ACK timeout 4.096 us x 2^18 = 1 s: ACKs may be held (short timeouts never are) */
	struct tp_conn c = { .mtu = 3, .sq_psn = 0x10, .rq_psn = 0x20, .timeout = 18, .retry_cnt = 7,
			     .rnr_retry = 7, .min_rnr_timer = 1 };

	tp_fixture_open(&fx, "emu:ip=127.66.0.1", "emu:ip=127.66.0.2", 256, MX5_QPT_RC, 64,
			MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ, &c);
}

static void teardown(void)
{
	tp_fixture_close(&fx);
}

TestSuite(poll_assist, .init = setup, .fini = teardown, .timeout = 60);

static int write8(struct tp_ep *from, uint8_t *src, uint8_t *dst, struct mx5_mr *dmr, uint64_t id)
{
	return tp_post(from, IBV_WR_RDMA_WRITE, id, src, 8, 0, (uintptr_t)dst, tp_rkey(dmr),
		       IBV_SEND_SIGNALED | IBV_SEND_INLINE);
}

Test(poll_assist, an_empty_poll_takes_the_arrivals_in_the_polling_thread)
{
	struct emu_tp_counters a0, a1;
	struct ibv_wc wc;

	emu_tp_counters(A.emu, &a0);
	for (unsigned i = 0; i < 20; i++) {
		cr_assert_eq(write8(&qa, abuf, bbuf, bmr, i), 0);
		tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);   /* polls A's CQ until the ACK's CQE */
	}
	emu_tp_counters(A.emu, &a1);
	cr_assert_gt(a1.assist_polls, a0.assist_polls, "no empty poll ran the device's poll assist");
	cr_assert_gt(a1.assist_pkts, a0.assist_pkts,
		     "20 ACKs arrived while A polled, none taken by the polls (device thread woken %llu times)",
		     (unsigned long long)(a1.device_thread_wakeups - a0.device_thread_wakeups));
}

/* One attempt at a held ACK.  B posts an unsignalled WRITE (rc_resp.c ack_deadline holds
 * ACKs only on a QP whose application rang its doorbell within EMU_ACK_RECENT_DB_NS),
 * waits db_age_us and polls its empty CQ, so it is a poller; A's WRITE (a_id) arrives
 * while B polls, then B posts its own WRITE (b_id) on the same QP.  Both WRITEs complete,
 * whichever way the ACK went.  B's counters before A's WRITE and after B's doorbell. */
static void held_ack_attempt(unsigned db_age_us, uint64_t a_id, uint64_t b_id, struct emu_tp_counters *before,
			     struct emu_tp_counters *after)
{
	uint64_t end = tp_now_ms() + 5000;
	struct emu_tp_counters r;
	struct ibv_wc wc;

	cr_assert_eq(tp_post(&qb, IBV_WR_RDMA_WRITE, 0, bbuf + 128, 8, 0, (uintptr_t)(abuf + 128), tp_rkey(amr),
			     IBV_SEND_INLINE),
		     0);
	if (db_age_us)
		usleep(db_age_us);
	cr_assert_eq(mx5_poll_cq(B.cqr, 1, &wc), 0);   /* B is a poller now */
	emu_tp_counters(B.emu, before);
	cr_assert_eq(write8(&qa, abuf, bbuf, bmr, a_id), 0);
	do {
		cr_assert_eq(mx5_poll_cq(B.cqr, 1, &wc), 0, "B got a completion it did not ask for");
		emu_tp_counters(B.emu, &r);
		cr_assert(tp_now_ms() < end, "A's WRITE never reached B");
	} while (r.rx_pkts == before->rx_pkts);
	cr_assert_eq(write8(&qb, bbuf + 64, abuf + 64, amr, b_id), 0);
	emu_tp_counters(B.emu, after);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	cr_assert_eq(wc.wr_id, a_id);
	tp_expect(&B, &wc, IBV_WC_SUCCESS, 5000);
	cr_assert_eq(wc.wr_id, b_id);
}

/* Up to `tries` held-ACK attempts, A's WRITEs numbered from id and B's from id + 100:
 * whether one of them moved B's counter `field` (its offset in struct emu_tp_counters). */
static bool held_in_an_attempt(unsigned tries, unsigned db_age_us, uint64_t id, size_t field)
{
	for (unsigned attempt = 0; attempt < tries; attempt++) {
		struct emu_tp_counters b0, b1;
		uint64_t before, after;

		held_ack_attempt(db_age_us, id + attempt, id + 100 + attempt, &b0, &b1);
		memcpy(&before, (const char *)&b0 + field, sizeof(before));
		memcpy(&after, (const char *)&b1 + field, sizeof(after));
		if (after > before)
			return true;
	}
	return false;
}

/* B polls (empty) while A's WRITE arrives: B's poll places it and holds the ACK; B's own
 * WRITE on the same QP then carries it out.  A loaded machine may deschedule the test
 * between polls long enough for B's device thread to take the packet (its ACK then
 * leaves at once), so a few attempts are allowed; one that holds is the behaviour.  The
 * unsignalled WRITE of each attempt keeps B's doorbell recent even when the test was
 * descheduled since the attempt before. */
Test(poll_assist, a_held_ack_leaves_behind_the_responders_next_request)
{
	cr_assert(held_in_an_attempt(20, 0, 100, offsetof(struct emu_tp_counters, acks_on_doorbell)),
		  "B's poll placed A's WRITE 20 times and never held its ACK for B's next doorbell");
}

/* B's doorbell 1.5 ms before A's WRITE arrives still counts as "posted lately": an ACK
 * is held while the QP's last doorbell is younger than the poll grace plus 1 ms
 * (rc_resp.c EMU_ACK_RECENT_DB_NS).  With 1 ms, a round trip slowed past it by one
 * hiccup sent its ACK at once, and the requester spun on memory when the data came,
 * which then waited out the whole grace: runs of 2 ms round trips.  A loaded machine
 * may stretch the 1.5 ms past the window, so a few attempts are allowed; one that holds
 * is the behaviour (with 1 ms none can). */
Test(poll_assist, an_ack_is_held_when_the_last_doorbell_is_older_than_a_millisecond)
{
	cr_assert(held_in_an_attempt(10, 1500, 600, offsetof(struct emu_tp_counters, acks_deferred)),
		  "B rang its doorbell 1.5 ms before each of 10 WRITEs from A and never held the ACK");
}

/* A responder that only receives -- it polls its receive CQ and reposts receives, which
 * ring no doorbell -- has no request of its own to carry an ACK, so its polls send the
 * ACK at once: held, it would wait out the whole deadline (2 ms here) on every SEND,
 * which is what uvperf's SEND latency showed (2.1 ms medians). */
Test(poll_assist, a_responder_that_only_receives_acknowledges_at_once)
{
	struct emu_tp_counters b0, b1;
	struct ibv_wc wc;

	for (unsigned i = 0; i < 10; i++) {
		cr_assert_eq(tp_post_recv(&qb, 300 + i, bbuf, 64, tp_lkey(bmr)), 0);
		cr_assert_eq(mx5_poll_cq(B.cqr, 1, &wc), 0);   /* B is a poller */
		emu_tp_counters(B.emu, &b0);
		cr_assert_eq(tp_post(&qa, IBV_WR_SEND, 400 + i, abuf, 8, 0, 0, 0, IBV_SEND_SIGNALED | IBV_SEND_INLINE),
			     0);
		tp_expect(&B, &wc, IBV_WC_SUCCESS, 5000);      /* B's polls take the SEND */
		cr_assert_eq(wc.wr_id, 300 + i);
		emu_tp_counters(B.emu, &b1);
		cr_assert_eq(b1.acks_deferred, b0.acks_deferred,
			     "SEND %u: B, which never posts, held the ACK for a doorbell that never comes", i);
		tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
		cr_assert_eq(wc.wr_id, 400 + i);
	}
}

/* A posts 40 signalled WRITEs, 0.5 ms apart, with no poll between them (ACKs
 * arrive meanwhile); how many times A's device thread was woken by an arrival. */
static unsigned long long post_without_polling(void)
{
	struct emu_tp_counters a0, a1;
	struct ibv_wc wc;

	emu_tp_counters(A.emu, &a0);
	for (unsigned i = 0; i < 40; i++) {
		cr_assert_eq(write8(&qa, abuf, bbuf, bmr, 500 + i), 0);
		usleep(500);
	}
	emu_tp_counters(A.emu, &a1);
	for (unsigned i = 0; i < 40; i++) {
		tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
		cr_assert_eq(wc.wr_id, 500 + i);
	}
	return (unsigned long long)(a1.device_thread_wakeups - a0.device_thread_wakeups);
}

/* An application that posts is busy with its CQ even when no poll of it finds the CQ
 * empty (a bandwidth loop: every poll returns completions): its doorbells renew its
 * last poll's grace, so the device thread does not wake for each ACK (rx_thread.c,
 * emu_tp_app_posts).  20 ms of posting is ten graces; a loaded machine may stretch a
 * 0.5 ms pause past one, hence "fewer than half", against about 40 without. */
Test(poll_assist, posting_renews_the_grace_of_the_last_poll)
{
	struct ibv_wc wc;
	unsigned long long woken;

	cr_assert_eq(mx5_poll_cq(A.cqr, 1, &wc), 0);   /* A is a poller */
	woken = post_without_polling();
	cr_assert_lt(woken, 20, "A's device thread was woken %llu times by 40 ACKs while A posted", woken);
}

/* ... but not after the application armed its CQ: it is about to block for the event,
 * and an arrival must not wait out a grace (emu_tp_app_sleeps). */
Test(poll_assist, posting_after_arming_leaves_the_arrivals_to_the_device_thread)
{
	struct ibv_wc wc;
	unsigned long long woken;

	cr_assert_eq(mx5_poll_cq(A.cqr, 1, &wc), 0);
	cr_assert_eq(mx5_cq_arm(A.cq, 0), 0);
	woken = post_without_polling();
	cr_assert_geq(woken, 20, "A armed its CQ, yet its device thread was woken only %llu times by 40 ACKs",
		      woken);
}
