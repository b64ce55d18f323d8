/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/random.h on Linux. */
#include <errno.h>
#include <sys/random.h>

#include "hw/platform/random.h"

int plat_random(void *buf, size_t len)
{
	ssize_t r = getrandom(buf, len, 0);

	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EIO;
}
