/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/thread.h plat_thread_cpu_ns: the CPU time of another thread of the
 * process, which tools/bench-e2e reads for the emulated NIC's device thread. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "hw/platform/thread.h"

static atomic_int phase;   /* 0: spin, 1: sleep, 2: quit */

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *worker(void *arg)
{
	(void)arg;
	while (atomic_load(&phase) == 0)
		;
	while (atomic_load(&phase) == 1)
		usleep(1000);
	return NULL;
}

Test(thread_cpu, counts_what_another_thread_spends_and_not_what_it_sleeps)
{
	unsigned long long c0, c1, c2;
	pthread_t t;
	uint64_t w0;

	atomic_store(&phase, 0);
	cr_assert_eq(pthread_create(&t, NULL, worker, NULL), 0);
	cr_assert_eq(plat_thread_cpu_ns(t, &c0), 0);
	w0 = wall_ns();
	usleep(100000);   /* the worker spins meanwhile */
	cr_assert_eq(plat_thread_cpu_ns(t, &c1), 0);
	/* a loaded machine may give the spinner less than the wall time, never more */
	cr_assert_gt(c1 - c0, 10000000ull, "a thread spinning for 100 ms was charged %llu ns", c1 - c0);
	cr_assert_leq(c1 - c0, wall_ns() - w0 + 5000000ull, "charged more than the wall time: %llu ns", c1 - c0);
	atomic_store(&phase, 1);
	usleep(20000);
	cr_assert_eq(plat_thread_cpu_ns(t, &c1), 0);
	usleep(100000);   /* the worker sleeps meanwhile */
	cr_assert_eq(plat_thread_cpu_ns(t, &c2), 0);
	cr_assert_lt(c2 - c1, 20000000ull, "a thread sleeping for 100 ms was charged %llu ns", c2 - c1);
	atomic_store(&phase, 2);
	cr_assert_eq(pthread_join(t, NULL), 0);
}

Test(thread_cpu, counts_the_calling_thread_too)
{
	unsigned long long a, b;
	volatile unsigned long x = 0;

	cr_assert_eq(plat_thread_cpu_ns(pthread_self(), &a), 0);
	for (unsigned long i = 0; i < 50000000ul; i++)
		x += i;
	cr_assert_eq(plat_thread_cpu_ns(pthread_self(), &b), 0);
	cr_assert_gt(b, a);
}
