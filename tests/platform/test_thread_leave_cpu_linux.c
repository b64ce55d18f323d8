/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/thread.h plat_thread_leave_cpu on Linux: the emulated NIC's device thread
 * moves off a CPU where an application polls before it busy-polls its socket
 * (hw/emu/rx_thread.c rx_spin).  It must land elsewhere, keep the affinity it had, and
 * refuse to move a thread that may run nowhere else. */
#include <criterion/criterion.h>
#include <sched.h>
#include <unistd.h>

#include "hw/platform/cpu.h"
#include "hw/platform/thread.h"

static cpu_set_t first_two(void)
{
	cpu_set_t all, two;
	int n = 0;

	cr_assert_eq(sched_getaffinity(0, sizeof(all), &all), 0);
	CPU_ZERO(&two);
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &all)) {
			CPU_SET(c, &two);
			n++;
		}
	if (n < 2)
		cr_skip_test("this process may run on one CPU only");
	return two;
}

static int pin_to_one_of(const cpu_set_t *s, int skip)
{
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, s) && c != skip) {
			cpu_set_t one;
			CPU_ZERO(&one);
			CPU_SET(c, &one);
			cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
			return c;
		}
	return -1;
}

/* With its old mask back the thread may be moved again at any time, by the balancer or
 * a preemption on a loaded machine (once in CI, beside ctest's other tests: "still on
 * CPU 0"): each attempt reads the CPU right after the call, and one that finds the thread
 * elsewhere is enough.  A thread never moved fails all of them. */
#define LEAVE_ATTEMPTS 20

Test(thread_leave_cpu, moves_to_another_cpu_and_keeps_the_affinity)
{
	cpu_set_t two = first_two(), now;
	int from = -1, after = -1, n;

	for (n = 1; n <= LEAVE_ATTEMPTS; n++) {
		from = pin_to_one_of(&two, -1);
		cr_assert_eq(plat_current_cpu(), from);
		cr_assert_eq(sched_setaffinity(0, sizeof(two), &two), 0);
		/* the scheduler may have moved it already once both CPUs were allowed */
		from = plat_current_cpu();
		cr_assert_eq(plat_thread_leave_cpu(from), 1);
		after = plat_current_cpu();
		cr_assert_eq(sched_getaffinity(0, sizeof(now), &now), 0);
		cr_assert(CPU_EQUAL(&now, &two), "the affinity was not given back");
		if (after != from)
			break;
	}
	cr_assert_neq(after, from, "still on CPU %d after each of %d moves", from, LEAVE_ATTEMPTS);
	cr_log_info("moved from CPU %d to %d (attempt %d)", from, after, n);
}

Test(thread_leave_cpu, a_thread_that_may_run_nowhere_else_stays)
{
	cpu_set_t two = first_two(), now;
	int only = pin_to_one_of(&two, -1);

	cr_assert_eq(plat_thread_leave_cpu(only), 0);
	cr_assert_eq(plat_current_cpu(), only);
	cr_assert_eq(sched_getaffinity(0, sizeof(now), &now), 0);
	cr_assert(CPU_ISSET(only, &now) && CPU_COUNT(&now) == 1);
	/* and a CPU it is not on, or none, is no reason to move */
	cr_assert_eq(plat_thread_leave_cpu(-1), 0);
	cr_assert_eq(plat_thread_leave_cpu(CPU_SETSIZE), 0);
}
