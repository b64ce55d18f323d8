/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/notify.h: the eventfd(2) semantics every implementation must keep (a
 * counter read whole, or one at a time in semaphore mode; a readable fd while the count
 * is not zero; EAGAIN when empty and non-blocking). */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>

#include "hw/platform/notify.h"

static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

Test(notify, counter_read_takes_every_signal_at_once)
{
	int fd = plat_notify_open(0, PLAT_NOTIFY_NONBLOCK);
	uint64_t n = 0;

	cr_assert_geq(fd, 0);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(plat_notify_signal(fd), 0);
	cr_assert(readable(fd));
	cr_assert_eq(plat_notify_read(fd, &n), 0);
	cr_assert_eq(n, 5);
	cr_assert_not(readable(fd));
	cr_assert_eq(plat_notify_read(fd, &n), -EAGAIN);
	plat_notify_close(fd);
}

Test(notify, initial_count_is_pending_at_open)
{
	int fd = plat_notify_open(3, PLAT_NOTIFY_NONBLOCK);
	uint64_t n = 0;

	cr_assert_geq(fd, 0);
	cr_assert(readable(fd));
	cr_assert_eq(plat_notify_read(fd, &n), 0);
	cr_assert_eq(n, 3);
	plat_notify_close(fd);
}

Test(notify, semaphore_read_takes_one_signal)
{
	int fd = plat_notify_open(0, PLAT_NOTIFY_SEMAPHORE | PLAT_NOTIFY_NONBLOCK);
	uint64_t n = 0;

	cr_assert_geq(fd, 0);
	cr_assert_eq(plat_notify_signal(fd), 0);
	cr_assert_eq(plat_notify_signal(fd), 0);
	cr_assert_eq(plat_notify_read(fd, &n), 0);
	cr_assert_eq(n, 1);
	cr_assert(readable(fd));
	cr_assert_eq(plat_notify_read(fd, &n), 0);
	cr_assert_eq(n, 1);
	cr_assert_not(readable(fd));
	cr_assert_eq(plat_notify_read(fd, &n), -EAGAIN);
	plat_notify_close(fd);
}

/* More signals than a pipe holds (64 KiB on Linux, 16 KiB to 64 KiB on macOS): none
 * is lost in semaphore mode, and signalling never blocks. */
Test(notify, semaphore_keeps_every_signal_beyond_a_full_pipe)
{
	const int total = 200000;
	int fd = plat_notify_open(0, PLAT_NOTIFY_SEMAPHORE | PLAT_NOTIFY_NONBLOCK);
	uint64_t n, got = 0;

	cr_assert_geq(fd, 0);
	for (int i = 0; i < total; i++)
		cr_assert_eq(plat_notify_signal(fd), 0);
	while (plat_notify_read(fd, &n) == 0)
		got += n;
	cr_assert_eq(got, (uint64_t)total);
	plat_notify_close(fd);
}

Test(notify, counter_mode_stays_readable_when_signals_overflow_the_pipe)
{
	int fd = plat_notify_open(0, PLAT_NOTIFY_NONBLOCK);
	uint64_t n = 0;

	cr_assert_geq(fd, 0);
	for (int i = 0; i < 200000; i++)
		cr_assert_eq(plat_notify_signal(fd), 0);
	cr_assert(readable(fd));
	cr_assert_eq(plat_notify_read(fd, &n), 0);
	cr_assert_geq(n, 1);
	cr_assert_not(readable(fd));
	plat_notify_close(fd);
}

Test(notify, signal_on_a_closed_notification_is_an_error)
{
	cr_assert_eq(plat_notify_signal(-1), -EBADF);
	cr_assert_eq(plat_notify_read(-1, NULL), -EBADF);
}
