/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Tests of the locked-memory budget: root has CAP_IPC_LOCK, which lifts RLIMIT_MEMLOCK
 * (capabilities(7); drivers/vfio/vfio_iommu_type1.c vfio_lock_acct), so take it out of
 * the effective set and run as an unprivileged process would.  Criterion runs each test
 * in its own process, so the change stays inside the test. */
#ifndef UV_TEST_DROP_IPC_LOCK_LINUX_H
#define UV_TEST_DROP_IPC_LOCK_LINUX_H

#include <criterion/criterion.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline void drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	cr_assert_eq(syscall(SYS_capget, &h, d), 0);
	d[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
	cr_assert_eq(syscall(SYS_capset, &h, d), 0);
}

#endif
