/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/thread.h on Linux: pthread_setname_np and SCHED_FIFO (sched(7)). */
#include <pthread.h>
#include <errno.h>
#include <sched.h>
#include <time.h>

#include "hw/platform/thread.h"

int plat_thread_set_name(const char *name)
{
	return -pthread_setname_np(pthread_self(), name);
}

int plat_thread_set_realtime(int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	return -pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
}

int plat_mutex_timedlock(pthread_mutex_t *m, const struct timespec *deadline)
{
	return pthread_mutex_timedlock(m, deadline);
}

int plat_thread_set_normal(void)
{
	struct sched_param sp = { .sched_priority = 0 };

	return -pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
}

int plat_thread_leave_cpu(int cpu)
{
	cpu_set_t old, other;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return 0;
	if (sched_getaffinity(0, sizeof(old), &old) < 0)
		return -errno;
	other = old;
	CPU_CLR(cpu, &other);
	if (!CPU_ISSET(cpu, &old) || CPU_COUNT(&other) == 0)
		return 0;
	if (sched_setaffinity(0, sizeof(other), &other) < 0)
		return -errno;
	/* on another CPU now; with the old mask back the scheduler moves it again only
	 * when it has a reason to */
	if (sched_setaffinity(0, sizeof(old), &old) < 0)
		return -errno;
	return 1;
}

int plat_thread_cpu_ns(pthread_t t, unsigned long long *ns)
{
	struct timespec ts;
	clockid_t clk;
	int rc = pthread_getcpuclockid(t, &clk);

	if (rc)
		return -rc;
	if (clock_gettime(clk, &ts) < 0)
		return -errno;
	*ns = (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
	return 0;
}
