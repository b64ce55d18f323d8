/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A pollable deadline: a file descriptor that polls readable once CLOCK_MONOTONIC has
 * passed the time it was last armed for, as Linux's timerfd(2) with TFD_TIMER_ABSTIME.
 * The emulated NIC's device thread sleeps on one while an application polls
 * (docs/architecture.md, "Progress whatever the application does").
 *
 * Linux uses a timerfd.  macOS has no timerfd; there plat_deadline_open() answers
 * -EOPNOTSUPP and the caller keeps its device thread on the socket (a kqueue
 * EVFILT_TIMER would be the way to add it, measured on a Mac first). */
#ifndef UV_PLATFORM_DEADLINE_H
#define UV_PLATFORM_DEADLINE_H

#include <stdbool.h>
#include <stdint.h>

/* A new, disarmed, non-blocking, close-on-exec deadline: its fd, or -errno. */
int plat_deadline_open(void);
/* Arm `fd` to fire at `at_ns` (CLOCK_MONOTONIC nanoseconds); a later arm replaces an
 * earlier one.  Safe from any thread; false on failure. */
bool plat_deadline_arm(int fd, uint64_t at_ns);
/* Disarm `fd`: it will not fire until armed again.  Safe from any thread; false on
 * failure. */
bool plat_deadline_disarm(int fd);
/* Take a fired deadline, so that the fd stops polling readable; false if it had not
 * fired. */
bool plat_deadline_take(int fd);

#endif
