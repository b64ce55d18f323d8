/* hw/platform/vm.h on Linux: the locked-memory budget is RLIMIT_MEMLOCK, and
 * CAP_IPC_LOCK lifts it, as vfio_iommu_type1 treats them (drivers/vfio/
 * vfio_iommu_type1.c, vfio_lock_acct); the copies name the caller's own pid, also in
 * a fork child. */
#include <criterion/criterion.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/resource.h>
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
