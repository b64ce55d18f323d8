/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* deadline.h on Linux: a timerfd on CLOCK_MONOTONIC, armed with an absolute time
 * (timerfd_create(2), timerfd_settime(2) TFD_TIMER_ABSTIME). */
#include "hw/platform/deadline.h"

#include <errno.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

int plat_deadline_open(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

bool plat_deadline_arm(int fd, uint64_t at_ns)
{
	struct itimerspec its = { .it_value = { .tv_sec = (time_t)(at_ns / 1000000000u),
						.tv_nsec = (long)(at_ns % 1000000000u) } };
	/* it_value 0 would disarm: a deadline at 0 has passed already, so fire at once */
	if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
		its.it_value.tv_nsec = 1;
	return timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) == 0;
}

bool plat_deadline_disarm(int fd)
{
	struct itimerspec its = { 0 };   /* it_value 0: disarmed (timerfd_settime(2)) */

	return timerfd_settime(fd, 0, &its, NULL) == 0;
}

bool plat_deadline_take(int fd)
{
	uint64_t expirations;
	return read(fd, &expirations, sizeof(expirations)) == (ssize_t)sizeof(expirations);
}
