/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RLIMIT_MEMLOCK on emu: as under VFIO (drivers/vfio/vfio_iommu_type1.c: every pinned
 * page counts in the process's locked memory, ENOMEM past the limit unless the process
 * has CAP_IPC_LOCK), so a program that registers more than its limit fails on emu:
 * the way it would on hardware.  Each criterion test runs in its own process, so the
 * lowered limit and the dropped capability stay inside it. */
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tests/uverbs/uv_test.h"
#include "tests/common/drop_ipc_lock_linux.h"

#define KIB 1024u
#define MIB (1024u * 1024u)

static void limit(rlim_t bytes)
{
	struct rlimit rl;

	cr_assert_eq(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	rl.rlim_cur = bytes;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < bytes)
		rl.rlim_cur = rl.rlim_max;
	cr_assert_eq(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
}

static uint8_t *buf(size_t len)
{
	uint8_t *p = aligned_alloc(4096, len);

	cr_assert_not_null(p);
	memset(p, 0, len);
	return p;
}

static struct ibv_pd *pd_under_limit(rlim_t bytes)
{
	drop_ipc_lock();
	limit(bytes);
	ut_devices("emu:ip=127.62.2.2");
	struct ibv_pd *pd = ibv_alloc_pd(ut_open(0));
	cr_assert_not_null(pd);
	return pd;
}

Test(mr_memlock, registration_beyond_rlimit_memlock_is_enomem)
{
	struct ibv_pd *pd = pd_under_limit(1 * MIB);
	uint8_t *big = buf(4 * MIB);

	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, big, 4 * MIB, IBV_ACCESS_LOCAL_WRITE));
	cr_assert_eq(errno, ENOMEM, "errno %d (%s)", errno, strerror(errno));
	struct ibv_mr *small = ibv_reg_mr(pd, big, 256 * KIB, IBV_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(small, "within the limit: %s", strerror(errno));
	cr_assert_eq(ibv_dereg_mr(small), 0);
}

Test(mr_memlock, pins_add_up_and_deregistration_returns_the_budget)
{
	struct ibv_pd *pd = pd_under_limit(1 * MIB);
	uint8_t *mem = buf(2 * MIB);
	struct ibv_mr *a = ibv_reg_mr(pd, mem, 512 * KIB, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *b = ibv_reg_mr(pd, mem + 512 * KIB, 512 * KIB, IBV_ACCESS_LOCAL_WRITE);

	cr_assert(a && b, "1 MiB in two MRs fits a 1 MiB limit: %s", strerror(errno));
	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, mem + MIB, 4 * KIB, IBV_ACCESS_LOCAL_WRITE), "one page more");
	cr_assert_eq(errno, ENOMEM);
	/* the same pages registered twice count twice, as VFIO maps them twice */
	cr_assert_null(ibv_reg_mr(pd, mem, 4 * KIB, IBV_ACCESS_LOCAL_WRITE));
	cr_assert_eq(ibv_dereg_mr(a), 0);
	struct ibv_mr *c = ibv_reg_mr(pd, mem + MIB, 512 * KIB, IBV_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(c, "the budget came back: %s", strerror(errno));
	cr_assert_eq(ibv_dereg_mr(b), 0);
	cr_assert_eq(ibv_dereg_mr(c), 0);
}

Test(mr_memlock, cap_ipc_lock_registers_past_the_limit)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	cr_assert_eq(syscall(SYS_capget, &h, d), 0);
	if (!((d[CAP_IPC_LOCK / 32].effective >> (CAP_IPC_LOCK % 32)) & 1u))
		cr_skip_test("this process has no CAP_IPC_LOCK to test with");
	limit(1 * MIB);
	ut_devices("emu:ip=127.62.2.3");
	struct ibv_pd *pd = ibv_alloc_pd(ut_open(0));
	cr_assert_not_null(pd);
	uint8_t *big = buf(4 * MIB);
	struct ibv_mr *mr = ibv_reg_mr(pd, big, 4 * MIB, IBV_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(mr, "CAP_IPC_LOCK: %s", strerror(errno));
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}
