/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Whether the device thread watches the port's socket (docs/architecture.md, "Progress
 * whatever the application does").  The thread sleeps in a wait set (hw/platform/
 * waitset.h) of its wake notification, the hold timer, the socket and the multicast
 * groups' set.  While an application polls its CQs the socket is not watched: the
 * polls take the arrivals (emu_poll_assist), so an arrival wakes no thread, and the
 * hold timer brings the thread back a hold (EMU_POLL_HOLD_NS, or the URI's hold_us=)
 * after the last poll or post.
 * The application's own calls switch the watch, without waking the thread:
 *  - a send doorbell of an application that polls stops it (its completion will be
 *    polled: perftest's ib_write_lat posts, then polls the send CQ until the WRITE's
 *    ACK completes it), where the thread used to be woken by that ACK first;
 *  - a poll that returns an RDMA WRITE's completion starts it (the application may now
 *    spin on memory for the peer's answer, which only this thread can place), where a
 *    5 us timer used to wake the thread to go back; not when the answer is in hand
 *    and keeping the socket has been earned (transport.h EMU_FOUND_KEEP_EARN);
 *  - an armed CQ starts it (the application is about to block on its channel).
 * The thread itself decides after each wake-up, from the same facts (want_off).
 * Linux only: without a hold timer (macOS) the socket is always watched. */
#define EMU_TP_INTERNAL
#include "hw/emu/transport.h"

#include "hw/emu/cpu_hints.h"
#include "hw/platform/deadline.h"
#include "hw/platform/waitset.h"

static bool watch_update(struct emu_tp *tp, uint64_t now, bool found, bool arm_later);
static bool hold_timer_set(struct emu_tp *tp, uint64_t now);

bool emu_tp_hold_arm(struct emu_tp *tp, uint64_t at)
{
	bool armed;

	if (tp->hold_fd < 0)
		return false;
	__atomic_fetch_add(&tp->ctr.hold_rearms, 1, __ATOMIC_RELAXED);   /* from a poll: not under the lock */
	armed = plat_deadline_arm(tp->hold_fd, at);
	/* the hold's end is the deadline the kernel holds, nothing else (hold_timer_set) */
	__atomic_store_n(&tp->timer_at, armed ? at : 0, __ATOMIC_RELAXED);
	return armed;
}

void emu_tp_hold(struct emu_tp *tp, uint64_t now)
{
	uint64_t set_at;

	if (!__atomic_load_n(&tp->thr_off, __ATOMIC_RELAXED) || hold_timer_set(tp, now))
		return;
	set_at = __atomic_load_n(&tp->timer_at, __ATOMIC_RELAXED);
	if (!emu_tp_hold_arm(tp, now + tp->hold_ns) && !set_at) {
		/* the socket was left with no timer set (a doorbell's switch arms it only here)
		 * and it could not be armed (never expected): as if the hold ran out, the
		 * socket is watched again */
		__atomic_store_n(&tp->hold_expired, now, __ATOMIC_RELAXED);
		(void)emu_tp_watch_update(tp, now, false);
	}
}

void emu_tp_app_sleeps(struct emu_tp *tp)
{
	emu_found_verdict(tp, EMU_FOUND_APP_FIRST);   /* and the socket is watched at once */
	__atomic_store_n(&tp->poll_seen, 0, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&tp->thr_off, __ATOMIC_SEQ_CST))
		(void)emu_tp_watch_update(tp, emu_now_ns(), false);   /* no wake-up: the socket is watched */
}

/* A bandwidth loop posts far more often than it finds its CQ empty: its doorbells keep
 * it "not passive", so its device thread does not busy-poll (rx_spin) beside it.  A
 * compare-and-swap, so a CQ armed meanwhile (poll_seen 0) stays armed.  Every doorbell,
 * of a poller or not, is also noted in post_seen: an application that spins on memory
 * posts about once a round trip (rx_spin's EMU_RX_PASSIVE_POST_NS). */
void emu_tp_app_posts(struct emu_tp *tp)
{
	uint64_t seen = __atomic_load_n(&tp->poll_seen, __ATOMIC_RELAXED), now = emu_now_ns();

	__atomic_store_n(&tp->post_seen, now, __ATOMIC_RELAXED);   /* rx_spin */
	emu_found_verdict(tp, EMU_FOUND_APP_FIRST);
	/* what has arrived before this post is not its answer (emu_poll_found) */
	__atomic_store_n(&tp->requests_at_post, __atomic_load_n(&tp->rx_requests, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	if (seen) {
		(void)__atomic_compare_exchange_n(&tp->poll_seen, &seen, now, false, __ATOMIC_RELAXED,
						  __ATOMIC_RELAXED);
		/* a poller that posts is about to poll for the answer here (cpu_hints.h) */
		emu_cpu_hint_polled(now);
		/* and its completion is for its polls: the ACK wakes no thread (sock_watch.c) */
		if (__atomic_load_n(&tp->thr_off, __ATOMIC_ACQUIRE))
			emu_tp_hold(tp, now);
		else
			(void)watch_update(tp, now, false, true);
	}
}

/* A doorbell that left the socket to the polls arms the hold timer only here, once its
 * packets have left: on the CI machine class's virtual CPUs a timerfd_settime takes
 * 4.5 us at 300 us ahead (7.7 at 100; 17 on 2026-12-07: transport.h EMU_POLL_HOLD_NS),
 * which delayed every WRITE of ib_write_lat by as much
 * (docs/benchmarks.md, "2026-12-06, 19:15 UTC"); the peer's answer cannot come back
 * sooner than that anyway.  And a 64 KiB send takes tens of microseconds here, more
 * when the peer's device thread preempts it (loopback delivers each packet inside the
 * sender's call): the hold emu_tp_app_posts pushed may be half gone by the end of the
 * doorbell, and the completion the application waits for is still to be polled
 * (docs/benchmarks.md, "2026-12-06, 17:45 UTC").  A poll assist's pass that sent
 * what ACKs let go takes as long (emu_poll_assist).  The clock is read only while the
 * socket is left to the polls. */
void emu_tp_app_done(struct emu_tp *tp)
{
	if (__atomic_load_n(&tp->thr_off, __ATOMIC_RELAXED))
		emu_tp_hold(tp, emu_now_ns());
}

/* When the application last showed it is at work: now while one of its calls is inside
 * the device (app_in_call: a poll assist's pass, a doorbell; kept off its CPU there
 * for long on a loaded machine, it holds the device lock the thread would need
 * anyway), else its last poll assist or doorbell (poll_seen; 0: never, or it armed a
 * CQ). */
static uint64_t app_seen(struct emu_tp *tp, uint64_t now)
{
	return __atomic_load_n(&tp->app_in_call, __ATOMIC_SEQ_CST) ? now
		: __atomic_load_n(&tp->poll_seen, __ATOMIC_SEQ_CST);
}

/* The socket may be left to the polls: the application showed it is at work within
 * EMU_POLL_NOW_NS (app_seen), since the hold timer last found it stopped, and after its
 * last poll that returned a WRITE's completion. */
static bool want_off(struct emu_tp *tp, uint64_t now)
{
	uint64_t seen = app_seen(tp, now);
	uint64_t expired = __atomic_load_n(&tp->hold_expired, __ATOMIC_RELAXED);
	uint64_t found = __atomic_load_n(&tp->found_at, __ATOMIC_SEQ_CST);

	return tp->hold_fd >= 0 && seen && (int64_t)(now - seen) < (int64_t)EMU_POLL_NOW_NS &&
	       (int64_t)(seen - expired) > 0 && (int64_t)(seen - found) > 0;
}

/* The hold timer fired with the socket left to the polls.  An application at work now
 * or within EMU_POLL_HOLD_NS (app_seen) whose calls did not push the hold has not
 * stopped -- a poll assist's pass that sends what ACKs let go took 180-230 us at MTU
 * 1024 beside the peer's device thread, longer on a loaded machine -- so the hold runs
 * on to EMU_POLL_HOLD_NS after that (counted as hold_renewed): never later than that
 * after the application's last call ended, whatever it does.  Otherwise the hold ran
 * out.  Renewing only when the last call began within EMU_POLL_HOLD_PUSH_NS (a poller's
 * looks keep the deadline that far ahead) halved the timer wake-ups of an application
 * that computes after each call (ggml's RPC server: 917 renewals in 1,000 tokens), for
 * no measurable throughput, and a poller kept off its CPU for more than that lost its
 * hold: two poll_assist tests failed in 5 runs beside two busy loops, none in 6 with
 * this rule (docs/benchmarks.md, "2026-12-07, 15:05 UTC"). */
void emu_tp_hold_fired(struct emu_tp *tp)
{
	uint64_t now = emu_now_ns(), seen = app_seen(tp, now);

	/* and not once the last call is older than EMU_POLL_NOW_NS, which a hold_us= of
	 * 2 ms or more reaches before its timer fires: the thread would watch the socket
	 * anyway (want_off), and the expiry's verdict on a kept socket would be lost */
	if (seen && (int64_t)(seen + tp->hold_ns - now) > (int64_t)EMU_HOLD_RENEW_MIN_NS &&
	    (int64_t)(now - seen) < (int64_t)EMU_POLL_NOW_NS && emu_tp_hold_arm(tp, seen + tp->hold_ns)) {
		__atomic_fetch_add(&tp->ctr.hold_renewed, 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_store_n(&tp->hold_expired, now, __ATOMIC_RELAXED);
	__atomic_fetch_add(&tp->ctr.hold_expiries, 1, __ATOMIC_RELAXED);
	/* a kept socket (EMU_FOUND_KEEP_EARN) stalled only if arrivals wait in it now; an
	 * answer still to come finds the thread on the socket, and that is no verdict */
	if (__atomic_load_n(&tp->found_judged, __ATOMIC_RELAXED) == EMU_FOUND_KEPT) {
		if (emu_roce_sock_pending(&tp->sock))
			emu_found_verdict(tp, EMU_FOUND_STALLED);
		else
			__atomic_store_n(&tp->found_judged, 0u, __ATOMIC_RELAXED);
	}
}

/* The socket and the groups' set watched, or not: 0, or the kernel's refusal
 * (counted).  The groups' set stays watched while no group has a socket open: an empty
 * set wakes no thread, and each switch is one epoll_ctl less (1.0-1.5 us here) for every
 * application but a multicast one.  A group opened while the socket is left to the
 * polls costs wake-ups until the next switch, never an arrival. */
bool emu_tp_groups_watched(struct emu_tp *tp, bool socket_watched)
{
	return socket_watched || !emu_mcg_sockets_open(tp->d);
}

static int watch_socket(struct emu_tp *tp, bool on)
{
	int rc = plat_waitset_watch(tp->ws_fd, tp->sock.fd, EMU_WS_SOCK, on);
	bool groups_on = emu_tp_groups_watched(tp, on);

	if (!rc && tp->ws_mc_fd >= 0 && groups_on != tp->ws_mc_watched) {
		rc = plat_waitset_watch(tp->ws_fd, tp->ws_mc_fd, EMU_WS_MCG, groups_on);
		if (!rc)
			tp->ws_mc_watched = groups_on;
	}
	if (rc)
		__atomic_fetch_add(&tp->ctr.watch_errors, 1, __ATOMIC_RELAXED);
	return rc;
}

/* A socket the kernel would not watch again (never expected): the thread stays off it
 * and its timer brings it back this soon to try again, so arrivals wait at most this
 * long beyond the polls. */
#define EMU_WATCH_RETRY_NS 1000000ull

/* The hold timer is not disarmed when the socket is watched again: on the CI machine
 * class's virtual CPUs a timerfd_settime that disarms or moves the next deadline costs
 * 5-11 us (a timer register write the hypervisor traps), and an application that
 * found its WRITE's completion (the socket watched again) posts its next WRITE (off
 * again) within microseconds.  A switch off the socket that finds the timer still set
 * at least EMU_POLL_HOLD_PUSH_NS ahead keeps it (hold_timer_kept), as a poll does
 * (emu_tp_hold).  A timer that fires with the socket watched wakes the thread once and
 * says nothing (rx_main).  What is kept is the deadline the kernel holds (timer_at,
 * written once an arm succeeded, cleared when the thread takes the expiry), never
 * a planned end: a first version kept one that a decision to stay on the socket had left
 * behind with no timer.  Polls push the hold by the same test (emu_tp_hold). */
static bool hold_timer_set(struct emu_tp *tp, uint64_t now)
{
	uint64_t at = __atomic_load_n(&tp->timer_at, __ATOMIC_RELAXED);

	return at && (int64_t)(at - now) >= (int64_t)EMU_HOLD_PUSH_NS(tp->hold_ns);
}

/* arm_later: a doorbell's switch leaves the arming to emu_tp_app_done, after its
 * packets have left (emu_tp_hold arms it, finding no timer set far enough ahead). */
static bool watch_update(struct emu_tp *tp, uint64_t now, bool found, bool arm_later)
{
	bool off;

	if (tp->ws_fd < 0 || tp->hold_fd < 0)
		return false;
	pthread_mutex_lock(&tp->watch_mu);
	if (!__atomic_load_n(&tp->thr_off, __ATOMIC_RELAXED)) {
		/* thr_off before the facts, as emu_poll_found and emu_tp_app_sleeps store their
		 * fact before they load thr_off (all sequentially consistent): a poll racing
		 * this decision is seen here, or sees thr_off and waits for the lock to decide
		 * again.  A poll that sees thr_off before this switch's own arm arms the timer
		 * too (emu_tp_hold): one timerfd_settime more, the same deadline. */
		bool timer_set = hold_timer_set(tp, now);

		__atomic_store_n(&tp->thr_off, 1, __ATOMIC_SEQ_CST);
		off = want_off(tp, now) &&
		      (arm_later || timer_set || emu_tp_hold_arm(tp, now + tp->hold_ns));
		if (off) {
			(void)watch_socket(tp, false);   /* refused: still watched, a wake-up more */
			if (timer_set)
				__atomic_fetch_add(&tp->ctr.hold_timer_kept, 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(&tp->ctr.device_thread_off_socket, 1, __ATOMIC_RELAXED);
		} else {
			__atomic_store_n(&tp->thr_off, 0, __ATOMIC_RELAXED);
			if (found)
				__atomic_fetch_add(&tp->ctr.hold_found_on_socket, 1, __ATOMIC_RELAXED);
		}
	} else {
		off = want_off(tp, now);
		if (!off && watch_socket(tp, true) == 0) {
			__atomic_store_n(&tp->thr_off, 0, __ATOMIC_RELAXED);
			/* the hold timer stays set (hold_timer_set) */
			if (found)
				__atomic_fetch_add(&tp->ctr.hold_found, 1, __ATOMIC_RELAXED);
			else
				__atomic_fetch_add(&tp->ctr.watch_back_stopped, 1, __ATOMIC_RELAXED);
		} else if (!off) {
			(void)emu_tp_hold_arm(tp, now + EMU_WATCH_RETRY_NS);
			off = true;
		}
	}
	pthread_mutex_unlock(&tp->watch_mu);
	return off;
}

bool emu_tp_watch_update(struct emu_tp *tp, uint64_t now, bool found)
{
	return watch_update(tp, now, found, false);
}

/* transport.h EMU_FOUND_KEEP_EARN.  Racing callers judge once (the exchange); the
 * score and what it must reach are a heuristic's, relaxed. */
void emu_found_verdict(struct emu_tp *tp, enum emu_found_verdict v)
{
	unsigned judged, score, need;

	if (!__atomic_load_n(&tp->found_judged, __ATOMIC_RELAXED))
		return;   /* the common case: one load */
	judged = __atomic_exchange_n(&tp->found_judged, 0u, __ATOMIC_RELAXED);
	if (!judged)
		return;
	score = __atomic_load_n(&tp->found_keep_score, __ATOMIC_RELAXED);
	need = __atomic_load_n(&tp->found_keep_need, __ATOMIC_RELAXED);
	switch (v) {
	case EMU_FOUND_APP_FIRST:
		/* counted on to twice the need: a kept socket's run that long halves it */
		if (score < 2 * need)
			score++;
		if (judged == EMU_FOUND_KEPT && score >= 2 * need && need > EMU_FOUND_KEEP_EARN) {
			need /= 2;
			score = need;
			__atomic_store_n(&tp->found_keep_need, need, __ATOMIC_RELAXED);
		}
		__atomic_store_n(&tp->found_keep_score, score, __ATOMIC_RELAXED);
		return;
	case EMU_FOUND_STALLED:
		__atomic_fetch_add(&tp->ctr.found_kept_stalls, 1, __ATOMIC_RELAXED);
		if (need < EMU_FOUND_KEEP_EARN_MAX)
			__atomic_store_n(&tp->found_keep_need, need * 2, __ATOMIC_RELAXED);
		/* fall through */
	case EMU_FOUND_THREAD_FIRST:
		__atomic_store_n(&tp->found_keep_score, 0u, __ATOMIC_RELAXED);
		return;
	}
}
