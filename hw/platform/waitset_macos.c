/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* waitset.h on macOS: a kqueue (kqueue(2), <sys/event.h>), each member an EVFILT_READ
 * filter carrying its tag in udata, switched with EV_ENABLE and EV_DISABLE. */
#include "hw/platform/waitset.h"

#include <errno.h>
#include <stdint.h>
#include <sys/event.h>
#include <sys/time.h>
#include <time.h>

#define WAITSET_MAX_EVENTS 8

int plat_waitset_open(void)
{
	int ws = kqueue();

	return ws < 0 ? -errno : ws;
}

static int change(int ws, int fd, uint32_t tag, unsigned short flags)
{
	struct kevent kev;

	EV_SET(&kev, (uintptr_t)fd, EVFILT_READ, flags, 0, 0, (void *)(uintptr_t)tag);
	return kevent(ws, &kev, 1, NULL, 0, NULL) < 0 ? -errno : 0;
}

int plat_waitset_add(int ws, int fd, uint32_t tag, bool watched)
{
	return change(ws, fd, tag, (unsigned short)(EV_ADD | (watched ? EV_ENABLE : EV_DISABLE)));
}

int plat_waitset_watch(int ws, int fd, uint32_t tag, bool watched)
{
	return change(ws, fd, tag, watched ? EV_ENABLE : EV_DISABLE);
}

int plat_waitset_wait(int ws, uint64_t timeout_ns, uint32_t *ready)
{
	struct kevent ev[WAITSET_MAX_EVENTS];
	struct timespec to = { .tv_sec = (time_t)(timeout_ns / 1000000000ull),
			       .tv_nsec = (long)(timeout_ns % 1000000000ull) };
	int n = kevent(ws, NULL, 0, ev, WAITSET_MAX_EVENTS, &to);

	if (n < 0)
		return -errno;
	*ready = 0;
	for (int i = 0; i < n; i++)
		*ready |= (uint32_t)(uintptr_t)ev[i].udata;
	return n;
}
