/* hw/platform/vm.h on Linux: the locked-memory budget is RLIMIT_MEMLOCK, and
 * CAP_IPC_LOCK lifts it, as vfio_iommu_type1 treats them (drivers/vfio/
 * vfio_iommu_type1.c, vfio_lock_acct). */
#include <criterion/criterion.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hw/platform/vm.h"

/* Linux: CAP_IPC_LOCK lifts the limit (root has it), so take it out of the effective
 * set first, as an unprivileged process would run. */
static void drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	cr_assert_eq(syscall(SYS_capget, &h, d), 0);
	d[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
	cr_assert_eq(syscall(SYS_capset, &h, d), 0);
}

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
