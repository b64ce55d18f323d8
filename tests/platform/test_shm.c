/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/shm.h: one object two mappings share, zeroed, sized, close-on-exec. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hw/platform/shm.h"

Test(shm, two_mappings_share_the_same_zeroed_pages)
{
	size_t len = 3 * (size_t)sysconf(_SC_PAGESIZE);
	int fd = plat_shm_create("uv-test", len);
	cr_assert_geq(fd, 0, "plat_shm_create: %d", fd);
	struct stat st;
	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert_eq((size_t)st.st_size, len);
	cr_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	uint8_t *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	uint8_t *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	cr_assert(a != MAP_FAILED && b != MAP_FAILED);
	cr_assert_eq(b[len - 1], 0);
	a[len - 1] = 0xab;
	cr_assert_eq(b[len - 1], 0xab);
	munmap(a, len);
	munmap(b, len);
	close(fd);
}

/* plat_shm_memory_granule: what plat_shm_create makes is memory of the page granule,
 * or the system cannot tell (the macOS build, run here too); never another answer. */
Test(shm, an_object_it_makes_is_memory_of_the_page_granule_or_untold)
{
	int fd = plat_shm_create("granule", 8192);
	size_t g = 0;
	cr_assert_geq(fd, 0);
	int rc = plat_shm_memory_granule(fd, &g);
	cr_assert(rc == 0 ? g == (size_t)sysconf(_SC_PAGESIZE) : rc == -EOPNOTSUPP, "rc %d granule %zu", rc, g);
	close(fd);
}

Test(shm, a_file_outside_memory_is_not_memory)
{
	int fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	size_t g = 0;
	cr_assert_geq(fd, 0);
	int rc = plat_shm_memory_granule(fd, &g);
	cr_assert(rc == -EINVAL || rc == -EOPNOTSUPP, "a sysfs file: rc %d", rc);
	close(fd);
}
