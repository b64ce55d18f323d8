/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* waitset.h on Linux: an epoll set (epoll(7)); a member not watched stays registered
 * with no events, and EPOLL_CTL_MOD back to EPOLLIN checks its readiness at once
 * (ep_modify), so data that came meanwhile wakes the sleeper. */
#include "hw/platform/waitset.h"

#include <errno.h>
#include <sys/epoll.h>
#include <time.h>

#define WAITSET_MAX_EVENTS 8

int plat_waitset_open(void)
{
	int ws = epoll_create1(EPOLL_CLOEXEC);

	return ws < 0 ? -errno : ws;
}

static int ctl(int ws, int op, int fd, uint32_t tag, bool watched)
{
	struct epoll_event ev = { .events = watched ? EPOLLIN : 0, .data.u32 = tag };

	return epoll_ctl(ws, op, fd, &ev) < 0 ? -errno : 0;
}

int plat_waitset_add(int ws, int fd, uint32_t tag, bool watched)
{
	return ctl(ws, EPOLL_CTL_ADD, fd, tag, watched);
}

int plat_waitset_watch(int ws, int fd, uint32_t tag, bool watched)
{
	return ctl(ws, EPOLL_CTL_MOD, fd, tag, watched);
}

/* epoll_pwait2 (glibc 2.35, Linux 5.11) takes a timespec.  A kernel older than 5.11
 * answers ENOSYS, and a seccomp filter that does not know the call (older container
 * runtimes' default profiles) EPERM: then epoll_wait, its timeout rounded up to whole
 * milliseconds (never early, never a busy loop). */
int plat_waitset_wait(int ws, uint64_t timeout_ns, uint32_t *ready)
{
	static int no_pwait2;
	struct epoll_event ev[WAITSET_MAX_EVENTS];
	int n = -1;

	if (!__atomic_load_n(&no_pwait2, __ATOMIC_RELAXED)) {
		struct timespec to = { .tv_sec = (time_t)(timeout_ns / 1000000000ull),
				       .tv_nsec = (long)(timeout_ns % 1000000000ull) };

		n = epoll_pwait2(ws, ev, WAITSET_MAX_EVENTS, &to, NULL);
		if (n < 0 && (errno == ENOSYS || errno == EPERM))
			__atomic_store_n(&no_pwait2, 1, __ATOMIC_RELAXED);
	}
	if (__atomic_load_n(&no_pwait2, __ATOMIC_RELAXED)) {
		uint64_t ms = (timeout_ns + 999999ull) / 1000000ull;

		n = epoll_wait(ws, ev, WAITSET_MAX_EVENTS, ms > 0x7fffffff ? 0x7fffffff : (int)ms);
	}
	if (n < 0)
		return -errno;
	*ready = 0;
	for (int i = 0; i < n; i++)
		*ready |= ev[i].data.u32;
	return n;
}
