/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A set of file descriptors that one thread waits on, each member watched or not, where
 * another thread may start or stop watching a member while the owner sleeps in the
 * set, without waking it.  The emulated NIC's device thread sleeps in one; an
 * application that polls its CQ stops it watching the UDP socket (the polls take the
 * arrivals) and starts it again when it goes to spin on memory (docs/architecture.md,
 * "Progress whatever the application does").  A member made watched while it is
 * readable wakes the sleeper at once (Linux epoll_ctl(2) EPOLL_CTL_MOD re-checks the
 * file's readiness; kqueue's EV_ENABLE re-queues a pending event, kqueue(2)).
 *
 * Linux: an epoll set, level-triggered, a stopped member kept with no events
 * (EPOLL_CTL_MOD to 0); a nanosecond timeout with epoll_pwait2 (Linux 5.11), rounded
 * up to the next millisecond without it.  macOS: a kqueue, each member an EVFILT_READ
 * filter switched with EV_ENABLE/EV_DISABLE, the timeout a timespec.
 *
 * Each member carries a tag, one bit (1u << 0 .. 1u << 31) that plat_waitset_wait
 * reports when that member is readable. */
#ifndef UV_PLATFORM_WAITSET_H
#define UV_PLATFORM_WAITSET_H

#include <stdbool.h>
#include <stdint.h>

/* A new, empty, close-on-exec set: its fd, or -errno. */
int plat_waitset_open(void);
/* Add `fd` with its tag bit, watched or not; 0 or -errno. */
int plat_waitset_add(int ws, int fd, uint32_t tag, bool watched);
/* Watch a member again, or stop watching it; from any thread.  0 or -errno. */
int plat_waitset_watch(int ws, int fd, uint32_t tag, bool watched);
/* Sleep until a watched member is readable or timeout_ns passes; the tags of the
 * readable members in *ready.  How many are ready (0: timed out), or -errno (-EINTR
 * for a signal). */
int plat_waitset_wait(int ws, uint64_t timeout_ns, uint32_t *ready);
/* Close a set opened here (ws < 0 is ignored); its members stay open. */
void plat_waitset_close(int ws);

#endif
