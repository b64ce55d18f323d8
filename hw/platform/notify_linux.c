/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/notify.h on Linux: eventfd(2), whose counter is the count. */
#include <errno.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "hw/platform/notify.h"

int plat_notify_open(uint32_t initial, unsigned flags)
{
	int fd = eventfd(initial, EFD_CLOEXEC | (flags & PLAT_NOTIFY_NONBLOCK ? EFD_NONBLOCK : 0) |
					   (flags & PLAT_NOTIFY_SEMAPHORE ? EFD_SEMAPHORE : 0));

	return fd < 0 ? -errno : fd;
}

int plat_notify_signal(int fd)
{
	uint64_t one = 1;

	if (fd < 0)
		return -EBADF;
	return write(fd, &one, sizeof(one)) == (ssize_t)sizeof(one) ? 0 : -errno;
}

int plat_notify_read(int fd, uint64_t *count)
{
	uint64_t v = 0;
	ssize_t r;

	if (fd < 0)
		return -EBADF;
	r = read(fd, &v, sizeof(v));
	if (r != (ssize_t)sizeof(v))
		return r < 0 ? -errno : -EIO;
	if (count)
		*count = v;
	return 0;
}

void plat_notify_close(int fd)
{
	if (fd >= 0)
		close(fd);
}
