/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/waitset.h: what the emulated NIC's device thread relies on (sock_watch.c):
 * a member not watched never wakes the sleeper however readable it is; watching it
 * again, from another thread, wakes a sleeper at once when it is readable; each ready
 * member is reported by its tag; the timeout is kept. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "hw/platform/notify.h"
#include "hw/platform/waitset.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

Test(waitset, reports_each_ready_member_by_its_tag)
{
	int ws = plat_waitset_open(), a = plat_notify_open(0, PLAT_NOTIFY_NONBLOCK),
	    b = plat_notify_open(0, PLAT_NOTIFY_NONBLOCK), c = plat_notify_open(0, PLAT_NOTIFY_NONBLOCK);
	uint32_t ready = 0;

	cr_assert(ws >= 0 && a >= 0 && b >= 0 && c >= 0);
	cr_assert_eq(plat_waitset_add(ws, a, 1u, true), 0);
	cr_assert_eq(plat_waitset_add(ws, b, 4u, true), 0);
	cr_assert_eq(plat_waitset_add(ws, c, 8u, true), 0);
	cr_assert_eq(plat_notify_signal(a), 0);
	cr_assert_eq(plat_notify_signal(c), 0);
	cr_assert_eq(plat_waitset_wait(ws, 1000000000ull, &ready), 2);
	cr_assert_eq(ready, 1u | 8u, "ready tags 0x%x, want 0x9", ready);
	plat_waitset_close(ws);
	plat_notify_close(a);
	plat_notify_close(b);
	plat_notify_close(c);
}

Test(waitset, a_member_not_watched_does_not_wake_the_sleeper)
{
	int ws = plat_waitset_open(), a = plat_notify_open(1, PLAT_NOTIFY_NONBLOCK);
	uint32_t ready = 0;
	uint64_t t0;

	cr_assert(ws >= 0 && a >= 0);
	cr_assert_eq(plat_waitset_add(ws, a, 2u, false), 0);
	t0 = now_ns();
	cr_assert_eq(plat_waitset_wait(ws, 20000000ull, &ready), 0, "a member added unwatched woke the set");
	cr_assert_geq(now_ns() - t0, 19000000ull, "the 20 ms timeout ended after %llu ns",
		      (unsigned long long)(now_ns() - t0));
	cr_assert_eq(plat_waitset_watch(ws, a, 2u, true), 0);
	cr_assert_eq(plat_waitset_wait(ws, 0, &ready), 1);
	cr_assert_eq(ready, 2u);
	cr_assert_eq(plat_waitset_watch(ws, a, 2u, false), 0);
	cr_assert_eq(plat_waitset_wait(ws, 20000000ull, &ready), 0, "a member stopped again still woke the set");
	plat_waitset_close(ws);
	plat_notify_close(a);
}

struct sleeper {
	int ws;
	int n;
	uint32_t ready;
	uint64_t woke;
};

static void *sleep_in_set(void *arg)
{
	struct sleeper *s = arg;

	s->n = plat_waitset_wait(s->ws, 5000000000ull, &s->ready);
	__atomic_store_n(&s->woke, now_ns(), __ATOMIC_RELEASE);
	return NULL;
}

/* The device thread sleeps while an application's poll watches the socket again
 * (emu_poll_found): data already queued must wake it then, not at its next timeout. */
Test(waitset, watching_a_readable_member_again_wakes_a_thread_asleep_in_the_set)
{
	struct sleeper s = { 0 };
	int a = plat_notify_open(0, PLAT_NOTIFY_NONBLOCK);
	pthread_t t;
	uint64_t watched;

	s.ws = plat_waitset_open();
	cr_assert(s.ws >= 0 && a >= 0);
	cr_assert_eq(plat_waitset_add(s.ws, a, 4u, false), 0);
	cr_assert_eq(pthread_create(&t, NULL, sleep_in_set, &s), 0);
	cr_assert_eq(plat_notify_signal(a), 0);   /* readable, not watched */
	struct timespec pause = { 0, 50000000 };
	nanosleep(&pause, NULL);
	cr_assert_eq(__atomic_load_n(&s.woke, __ATOMIC_ACQUIRE), 0, "the sleeper woke for a member not watched");
	watched = now_ns();
	cr_assert_eq(plat_waitset_watch(s.ws, a, 4u, true), 0);
	pthread_join(t, NULL);
	cr_assert_eq(s.n, 1, "the sleeper's wait returned %d", s.n);
	cr_assert_eq(s.ready, 4u);
	cr_assert_lt(s.woke - watched, 1000000000ull, "woke %llu ns after the watch, not at once",
		     (unsigned long long)(s.woke - watched));
	plat_waitset_close(s.ws);
	plat_notify_close(a);
}

Test(waitset, a_timeout_below_a_millisecond_is_kept)
{
	int ws = plat_waitset_open();
	uint32_t ready = 0;
	uint64_t t0, took = UINT64_MAX;

	cr_assert(ws >= 0);
	/* the best of five: a preempted test thread only makes a wait longer */
	for (int i = 0; i < 5; i++) {
		t0 = now_ns();
		cr_assert_eq(plat_waitset_wait(ws, 200000ull, &ready), 0);
		if (now_ns() - t0 < took)
			took = now_ns() - t0;
	}
	cr_assert_geq(took, 200000ull, "a 200 us wait returned after %llu ns", (unsigned long long)took);
	cr_assert_lt(took, 900000ull, "a 200 us wait took %llu ns (rounded up to a millisecond?)",
		     (unsigned long long)took);
	plat_waitset_close(ws);
}
