/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A pollable notification: a file descriptor that is readable while its count is not
 * zero, as Linux's eventfd(2).  Linux uses an eventfd; macOS has none and uses a pipe
 * (one byte per count), the eventfd semantics kept by notify_macos.c.
 *
 * Counter mode: a read takes the whole count (an interrupt line: "something
 * happened").  Semaphore mode (PLAT_NOTIFY_SEMAPHORE, eventfd's EFD_SEMAPHORE): a read
 * takes one, so every signal is one read (a queue of events behind the fd).  The fd
 * is close-on-exec; reads block unless PLAT_NOTIFY_NONBLOCK is given or the owner
 * sets O_NONBLOCK on it (then an empty read is -EAGAIN).  Signalling never blocks. */
#ifndef UV_PLATFORM_NOTIFY_H
#define UV_PLATFORM_NOTIFY_H

#include <poll.h>
#include <stdint.h>

#define PLAT_NOTIFY_NONBLOCK  1u
#define PLAT_NOTIFY_SEMAPHORE 2u

/* A new notification with `initial` pending; returns its fd or -errno. */
int plat_notify_open(uint32_t initial, unsigned flags);
/* Add one; 0 or -errno. */
int plat_notify_signal(int fd);
/* Take the count (counter mode) or one (semaphore mode) into *count; 0 or -errno
 * (-EAGAIN when none is pending on a non-blocking fd). */
int plat_notify_read(int fd, uint64_t *count);
/* Close a notification opened here (fd < 0 is ignored). */
void plat_notify_close(int fd);

#endif
