/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/shm.h on macOS: shm_open(3) of a random name, unlinked at once.  POSIX
 * alone, so tests/platform runs it on Linux too. */
#include "hw/platform/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "hw/platform/random.h"

int plat_shm_create(const char *name, size_t len)
{
	(void)name;   /* an unlinked object has no name to show */
	for (int tries = 0; tries < 8; tries++) {
		uint64_t r;
		int rc = plat_random(&r, sizeof(r));
		if (rc)
			return rc;
		/* xnu limits the name to PSHMNAMLEN (31) characters: "/uv." and 16 hex digits */
		char path[32];
		snprintf(path, sizeof(path), "/uv.%016llx", (unsigned long long)r);
		int fd = shm_open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0)
			return -errno;
		shm_unlink(path);
		if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || ftruncate(fd, (off_t)len) < 0) {
			rc = -errno;
			close(fd);
			return rc;
		}
		return fd;
	}
	return -EEXIST;
}

int plat_shm_memory_granule(int fd, size_t *granule)
{
	(void)fd;
	(void)granule;
	return -EOPNOTSUPP;
}
