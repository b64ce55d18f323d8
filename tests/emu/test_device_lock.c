/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The device lock (hw/emu/device.c): a host access (a doorbell) that finds it held by a
 * thread running on another CPU spins for it instead of sleeping, and a real-time
 * thread waiting for it lends the holder no priority.  Both keep a SCHED_OTHER
 * application on its own CPU: a poster woken from the mutex, or a holder boosted and
 * moved by the kernel's real-time balancing, lands beside the other application while
 * its own CPU idles until the next balancing, up to a 4 ms tick (docs/benchmarks.md,
 * "2026-12-06: nobody sleeps on the device lock"). */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hw/emu/emu_dev.h"
#include "tests/emu/emu_test.h"

/* The first two CPUs this process may run on (a cpuset or taskset may leave out 0 or 1):
 * false with fewer than two. */
static bool two_cpus(int cpus[2])
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return false;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n == 2;
}

static bool pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t host_lock_sleeps(struct emu_dev *d)
{
	struct emu_counters c;

	emu_counters(d, &c);
	return c.host_lock_sleeps;
}

/* ---- a host access spins for a lock held briefly on another CPU ---- */

struct brief_holder {
	struct emu_dev *d;
	int cpu, pinned;
	int rounds, held;      /* held: the round whose lock is held now (atomics) */
	uint64_t hold_ns;
};

static void *brief_holder_main(void *arg)
{
	struct brief_holder *h = arg;

	h->pinned = pin_to(h->cpu);
	if (!h->pinned) {
		__atomic_store_n(&h->held, -1000000, __ATOMIC_RELEASE);
		return NULL;
	}
	for (int r = 1; r <= h->rounds; r++) {
		while (!emu_lock_try(h->d))
			;
		__atomic_store_n(&h->held, r, __ATOMIC_RELEASE);
		for (uint64_t until = now_ns() + h->hold_ns; now_ns() < until;)
			;
		emu_unlock(h->d);
		/* let the other side take it before the next round */
		while (__atomic_load_n(&h->held, __ATOMIC_ACQUIRE) == r)
			;
	}
	return NULL;
}

Test(emu_device_lock, a_host_access_spins_for_a_lock_held_briefly_on_another_cpu)
{
	struct brief_holder h = { .rounds = 200, .hold_ns = 20000 };
	struct et t;
	pthread_t thr;

	int cpus[2];

	if (!two_cpus(cpus))
		cr_skip_test("one CPU to run on: the host access sleeps at once by design (nothing to spin for)");
	et_open(&t, "emu:");
	h.d = t.emu;
	h.cpu = cpus[0];
	cr_assert(pin_to(cpus[1]), "cannot run on CPU %d", cpus[1]);
	uint64_t s0 = host_lock_sleeps(t.emu);
	cr_assert_eq(pthread_create(&thr, NULL, brief_holder_main, &h), 0);
	for (int r = 1; r <= h.rounds; r++) {
		int held;

		while ((held = __atomic_load_n(&h.held, __ATOMIC_ACQUIRE)) != r && held != -1000000)
			;
		cr_assert_neq(held, -1000000, "the holder cannot run on CPU %d", cpus[0]);
		/* a store the device ignores (init segment, fw_rev), through the device lock */
		emu_mmio_access(t.emu, SHIM_MMIO_WRITE, 0, 4);
		__atomic_store_n(&h.held, -r, __ATOMIC_RELEASE);
	}
	pthread_join(thr, NULL);
	uint64_t slept = host_lock_sleeps(t.emu) - s0;
	/* 20 us holds against a 100 us spin: a sleep needs the holder preempted for 80 us
	 * (a loaded machine); every store slept when the access took the mutex outright */
	cr_assert_leq(slept, (uint64_t)h.rounds / 10, "%llu of %d host accesses slept for a lock held 20 us",
		      (unsigned long long)slept, h.rounds);
	et_close(&t);
}

/* ---- a real-time waiter lends the holder no priority ---- */

/* This thread's effective priority as the kernel schedules it (/proc/thread-self/stat
 * field 18, "priority": 20 + nice for a SCHED_OTHER thread, -1 - rt_priority for a
 * real-time one, so a boost from a waiting SCHED_FIFO thread shows; proc(5)). */
static int effective_priority(void)
{
	char stat[1024];
	FILE *f = fopen("/proc/thread-self/stat", "r");
	int prio = 1000;

	cr_assert_not_null(f);
	size_t n = fread(stat, 1, sizeof(stat) - 1, f);
	fclose(f);
	stat[n] = '\0';
	char *p = strrchr(stat, ')');
	cr_assert_not_null(p);
	p += 2;   /* field 3 */
	for (int field = 3; field < 18 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	cr_assert_not_null(p);
	cr_assert_eq(sscanf(p, "%d", &prio), 1);
	return prio;
}

struct rt_waiter {
	struct emu_dev *d;
	int state;   /* 0 starting, 1 about to wait, 2 SCHED_FIFO refused (atomics) */
};

static void *rt_waiter_main(void *arg)
{
	struct rt_waiter *w = arg;
	struct sched_param sp = { .sched_priority = 1 };

	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0) {
		__atomic_store_n(&w->state, 2, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_store_n(&w->state, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&w->d->lock);
	pthread_mutex_unlock(&w->d->lock);
	return NULL;
}

Test(emu_device_lock, a_real_time_waiter_lends_the_holder_no_priority)
{
	struct rt_waiter w = { 0 };
	struct et t;
	pthread_t thr;

	et_open(&t, "emu:");
	w.d = t.emu;
	if (sched_getscheduler(0) != SCHED_OTHER) {
		et_close(&t);
		cr_skip_test("the test runs real-time: a boost from a SCHED_FIFO waiter would not show");
	}
	int before = effective_priority();
	pthread_mutex_lock(&t.emu->lock);
	cr_assert_eq(pthread_create(&thr, NULL, rt_waiter_main, &w), 0);
	int state;
	while (!(state = __atomic_load_n(&w.state, __ATOMIC_ACQUIRE)))
		sched_yield();
	/* give the waiter time to block in the mutex; a boost shows as soon as it does */
	int during = before;
	for (int i = 0; i < 200 && state == 1; i++) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
		during = effective_priority();
		if (during != before)
			break;
	}
	pthread_mutex_unlock(&t.emu->lock);
	pthread_join(thr, NULL);
	if (state == 2) {
		et_close(&t);
		cr_skip_test("SCHED_FIFO is not allowed here: no real-time waiter to lend a priority");
	}
	cr_assert_eq(during, before, "holding the device lock with a SCHED_FIFO waiter, this thread ran at kernel "
		     "priority %d, not its own %d (boosted)", during, before);
	et_close(&t);
}
