/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/thread.h on macOS: pthread_setname_np(name) and the Mach thread
 * policies (mach/thread_policy.h).  THREAD_TIME_CONSTRAINT_POLICY: within
 * `constraint` of becoming runnable the thread gets up to `computation` of CPU, every
 * `period` (0: aperiodic, as a device thread woken by packets is).  The figures are
 * those of a thread that handles one arrival and blocks again: 50 us of work wanted
 * within 1 ms; a thread that overruns its computation is demoted by the scheduler,
 * which is the bound Linux's RT throttling gives SCHED_FIFO. */
#include <errno.h>
#include <sched.h>
#include <mach/mach.h>
#include <mach/mach_time.h>
#include <mach/thread_policy.h>
#include <pthread.h>

#include "hw/platform/thread.h"

int plat_thread_set_name(const char *name)
{
	return -pthread_setname_np(name);
}

/* Nanoseconds in Mach absolute time units (mach_timebase_info: 1/1 on Intel, 125/3
 * on Apple Silicon). */
static uint32_t plat_ns_to_abs(uint64_t ns)
{
	mach_timebase_info_data_t tb;

	if (mach_timebase_info(&tb) != KERN_SUCCESS || !tb.numer)
		return (uint32_t)ns;
	return (uint32_t)(ns * tb.denom / tb.numer);
}

int plat_thread_set_realtime(int prio)
{
	thread_time_constraint_policy_data_t p = {
		.period = 0,
		.computation = plat_ns_to_abs(50000),
		.constraint = plat_ns_to_abs(1000000),
		.preemptible = 1,
	};
	mach_port_t self = pthread_mach_thread_np(pthread_self());
	kern_return_t kr;

	(void)prio;
	kr = thread_policy_set(self, THREAD_TIME_CONSTRAINT_POLICY, (thread_policy_t)&p,
			       THREAD_TIME_CONSTRAINT_POLICY_COUNT);
	return kr == KERN_SUCCESS ? 0 : -EPERM;
}

int plat_thread_leave_cpu(int cpu)
{
	(void)cpu;
	return 0;
}

int plat_thread_set_normal(void)
{
	thread_standard_policy_data_t p = { 0 };
	mach_port_t self = pthread_mach_thread_np(pthread_self());

	return thread_policy_set(self, THREAD_STANDARD_POLICY, (thread_policy_t)&p,
				 THREAD_STANDARD_POLICY_COUNT) == KERN_SUCCESS ? 0 : -EPERM;
}

int plat_mutex_timedlock(pthread_mutex_t *m, const struct timespec *deadline)
{
	for (unsigned tries = 0;; tries++) {
		struct timespec now, pause = { 0, 20000 };
		int rc = pthread_mutex_trylock(m);

		if (rc != EBUSY)
			return rc;
		clock_gettime(CLOCK_REALTIME, &now);
		if (now.tv_sec > deadline->tv_sec ||
		    (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec))
			return ETIMEDOUT;
		if (tries < 16)
			sched_yield();
		else
			nanosleep(&pause, NULL);
	}
}

int plat_thread_cpu_ns(pthread_t t, unsigned long long *ns)
{
	thread_basic_info_data_t info;
	mach_msg_type_number_t count = THREAD_BASIC_INFO_COUNT;
	mach_port_t port = pthread_mach_thread_np(t);

	if (port == MACH_PORT_NULL)
		return -ESRCH;
	if (thread_info(port, THREAD_BASIC_INFO, (thread_info_t)&info, &count) != KERN_SUCCESS)
		return -ESRCH;
	*ns = ((unsigned long long)info.user_time.seconds + (unsigned long long)info.system_time.seconds) * 1000000000ull +
	      ((unsigned long long)info.user_time.microseconds + (unsigned long long)info.system_time.microseconds) * 1000ull;
	return 0;
}
