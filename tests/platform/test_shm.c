/* hw/platform/shm.h: one object two mappings share, zeroed, sized, close-on-exec. */
#include <criterion/criterion.h>
#include <fcntl.h>
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
