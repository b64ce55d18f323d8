/* hw/platform/shm.h on Linux: memfd_create(2). */
#include "hw/platform/shm.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

int plat_shm_create(const char *name, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len) < 0) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}
