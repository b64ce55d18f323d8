/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/vm.h on Linux: the locked-memory budget is RLIMIT_MEMLOCK, and
 * CAP_IPC_LOCK lifts it, as vfio_iommu_type1 treats them (drivers/vfio/
 * vfio_iommu_type1.c, vfio_lock_acct); the copies name the caller's own pid, also in
 * a fork child. */
#include <criterion/criterion.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hw/platform/vm.h"
#include "tests/common/drop_ipc_lock_linux.h"

Test(vm_lock, limit_is_rlimit_memlock_without_cap_ipc_lock)
{
	struct rlimit rl = { 1 << 20, 1 << 20 };

	drop_ipc_lock();
	cr_assert_eq(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	cr_assert_eq(plat_vm_lock_limit(), 1u << 20);
}

Test(vm_lock, cap_ipc_lock_makes_the_limit_unlimited)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	struct rlimit rl = { 1 << 20, 1 << 20 };

	memset(d, 0, sizeof(d));
	cr_assert_eq(syscall(SYS_capget, &h, d), 0);
	if (!((d[CAP_IPC_LOCK / 32].effective >> (CAP_IPC_LOCK % 32)) & 1u))
		cr_skip_test("this process has no CAP_IPC_LOCK to test with");
	cr_assert_eq(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	cr_assert_eq(plat_vm_lock_limit(), UINT64_MAX);
}

Test(vm_lock, infinite_rlimit_is_unlimited)
{
	struct rlimit rl;

	drop_ipc_lock();
	cr_assert_eq(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY)
		cr_skip_test("the hard limit is finite here");
	rl.rlim_cur = RLIM_INFINITY;
	cr_assert_eq(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	cr_assert_eq(plat_vm_lock_limit(), UINT64_MAX);
}

/* The copies name our own pid; a fork child must copy within itself, not within its
 * parent (the pid is cached, and forgotten at fork). */
Test(vm_pid, copies_in_a_fork_child_reach_the_childs_own_memory)
{
	static uint8_t cell[64];
	uint8_t b[64];
	int st = 0;

	memset(b, 1, sizeof(b));
	cr_assert_eq(plat_vm_write(cell, b, sizeof(b)), 0, "the pid is cached now");
	pid_t c = fork();
	cr_assert_geq(c, 0);
	if (c == 0) {
		memset(b, 2, sizeof(b));
		_exit(plat_vm_write(cell, b, sizeof(b)) == 0 && cell[0] == 2 ? 0 : 1);
	}
	cr_assert_eq(waitpid(c, &st, 0), c);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child wrote its own copy");
	cr_assert_eq(cell[0], 1, "the parent's memory is untouched");
}

/* plat_vm_shared_file: the descriptor it answers is the same file (dev, inode) and the
 * offset that of the range's first byte, for a mapping at a non-zero file offset. */
Test(vm_shared_file, a_memfd_mapping_names_its_file_and_the_offset_of_the_range)
{
	int fd = memfd_create("vm-shared-file", MFD_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 4 * 4096), 0);
	uint8_t *p = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 2 * 4096);
	cr_assert_neq(p, MAP_FAILED);
	int got = -1;
	uint64_t off = 0;
	cr_assert_eq(plat_vm_shared_file(p + 100, 5000, &got, &off), 0);
	cr_assert_eq(off, 2 * 4096 + 100);
	struct stat a, b;
	cr_assert_eq(fstat(fd, &a), 0);
	cr_assert_eq(fstat(got, &b), 0);
	cr_assert(a.st_dev == b.st_dev && a.st_ino == b.st_ino, "another file");
	cr_assert_neq(got, fd, "a new descriptor, not the caller's own");
	cr_assert(fcntl(got, F_GETFD) & FD_CLOEXEC);
	close(got);
	munmap(p, 2 * 4096);
	close(fd);
}

/* One page of a fresh memfd, mapped shared; its descriptor in *fd. */
static uint8_t *memfd_page(int *fd)
{
	*fd = memfd_create("vm-shared-file", MFD_CLOEXEC);
	cr_assert_geq(*fd, 0);
	cr_assert_eq(ftruncate(*fd, 4096), 0);
	uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	cr_assert_neq(p, MAP_FAILED);
	return p;
}

Test(vm_shared_file, private_memory_and_a_range_past_the_mapping_are_not_a_shared_file)
{
	static uint8_t heap[8192];
	int fd, got = -1;
	uint64_t off;
	uint8_t *p = memfd_page(&fd);
	cr_assert_eq(plat_vm_shared_file(heap, sizeof(heap), &got, &off), -ENOENT);
	cr_assert_eq(plat_vm_shared_file(p, 4097, &got, &off), -ENOENT, "the range runs past the mapping");
	uint8_t *q = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	cr_assert_neq(q, MAP_FAILED);
	cr_assert_eq(plat_vm_shared_file(q, 4096, &got, &off), -ENOENT, "a private mapping of the file");
	munmap(q, 4096);
	munmap(p, 4096);
	close(fd);
}

Test(vm_shared_file, a_shared_mapping_whose_descriptor_was_closed_has_none_to_give)
{
	int fd, got = -1;
	uint64_t off;
	uint8_t *p = memfd_page(&fd);
	close(fd);
	cr_assert_eq(plat_vm_shared_file(p, 4096, &got, &off), -EBADF);
	munmap(p, 4096);
}

/* Of two descriptors of the file, the one open for writing is handed over even when
 * a read-only one has the lower number: the mapper could not write through the other. */
Test(vm_shared_file, a_descriptor_open_for_writing_is_preferred)
{
	int fd;
	uint8_t *p = memfd_page(&fd);
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int ro = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(ro, 0);
	int rw = fcntl(fd, F_DUPFD_CLOEXEC, ro + 1);
	cr_assert_gt(rw, ro);
	close(fd);   /* now the read-only one comes first */
	int got = -1;
	uint64_t off;
	cr_assert_eq(plat_vm_shared_file(p, 4096, &got, &off), 0);
	cr_assert_eq(fcntl(got, F_GETFL) & O_ACCMODE, O_RDWR, "the read-only descriptor was handed over");
	close(got);
	close(ro);
	close(rw);
	munmap(p, 4096);
}
