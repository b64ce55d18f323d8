/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/shm.h on Linux: memfd_create(2). */
#include "hw/platform/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/vfs.h>
#include <unistd.h>

int plat_shm_create(const char *name, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	/* sealed at its size (fcntl(2) F_ADD_SEALS): a holder that shrank it would make
	 * every other mapping's loads past the end raise SIGBUS */
	if (ftruncate(fd, (off_t)len) < 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

int plat_shm_memory_granule(int fd, size_t *granule)
{
	struct statfs fs;
	long page = sysconf(_SC_PAGESIZE);

	if (fstatfs(fd, &fs) != 0)
		return -errno;
	if (fs.f_type == TMPFS_MAGIC) {
		*granule = (size_t)page;
		return 0;
	}
	if (fs.f_type == HUGETLBFS_MAGIC && fs.f_bsize >= page && !(fs.f_bsize & (fs.f_bsize - 1))) {
		*granule = (size_t)fs.f_bsize;
		return 0;
	}
	return -EINVAL;
}
