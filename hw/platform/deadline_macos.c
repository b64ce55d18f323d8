/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* deadline.h on macOS: none yet (no timerfd); callers keep to their socket. */
#include "hw/platform/deadline.h"

#include <errno.h>

int plat_deadline_open(void)
{
	return -EOPNOTSUPP;
}

bool plat_deadline_arm(int fd, uint64_t at_ns)
{
	(void)fd;
	(void)at_ns;
	return false;
}

bool plat_deadline_take(int fd)
{
	(void)fd;
	return false;
}

bool plat_deadline_disarm(int fd)
{
	(void)fd;
	return false;
}
