/* hw/platform/shm.h on Linux: memfd_create(2). */
#include "hw/platform/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/types.h>
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
