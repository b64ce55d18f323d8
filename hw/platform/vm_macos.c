/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/vm.h on macOS: Mach VM calls on our own task (xnu osfmk/mach/vm_map.defs).
 * In a 64-bit process vm_address_t is 64 bits wide, so the vm_* routines of
 * <mach/vm_map.h> are the mach_vm_* ones of <mach/mach_vm.h> under their older names;
 * the older names are used because every SDK, and the headers the Linux cross-check
 * builds against, declare them.  They return KERN_INVALID_ADDRESS for an unmapped
 * page and KERN_PROTECTION_FAILURE for one without the access, never a signal. */
#include <errno.h>
#include <mach/mach.h>
#include <mach/vm_map.h>
#include <sys/resource.h>

#include "hw/platform/vm.h"

static unsigned vm_rights(vm_prot_t p)
{
	return ((p & VM_PROT_READ) ? PLAT_VM_READ : 0) | ((p & VM_PROT_WRITE) ? PLAT_VM_WRITE : 0);
}

/* One region at or after `at`, descending into submaps (the shared cache lives in
 * one) so that the protection is the one the pages really have. */
static int region_at(vm_address_t at, vm_address_t *start, vm_size_t *size, unsigned *prot)
{
	natural_t depth = 0;

	for (;;) {
		vm_region_submap_info_data_64_t info;
		mach_msg_type_number_t count = VM_REGION_SUBMAP_INFO_COUNT_64;
		vm_address_t a = at;
		vm_size_t sz = 0;
		kern_return_t kr = vm_region_recurse_64(mach_task_self(), &a, &sz, &depth,
							(vm_region_recurse_info_t)&info, &count);

		if (kr != KERN_SUCCESS)
			return -EFAULT;  /* KERN_INVALID_ADDRESS: nothing mapped at or after `at` */
		if (info.is_submap) {
			depth++;
			continue;
		}
		*start = a;
		*size = sz;
		*prot = vm_rights(info.protection);
		return 0;
	}
}

int plat_vm_query(const void *addr, size_t len, unsigned *prot)
{
	vm_address_t at = (vm_address_t)addr, end = at + len;
	unsigned rights = PLAT_VM_READ | PLAT_VM_WRITE;

	if (!len || end < at || !prot)
		return -EINVAL;
	while (at < end) {
		vm_address_t s;
		vm_size_t sz;
		unsigned p;

		if (region_at(at, &s, &sz, &p) < 0 || s > at)
			return -EFAULT;  /* a hole */
		rights &= p;
		at = s + sz;
	}
	*prot = rights;
	return 0;
}

static int kr_errno(kern_return_t kr)
{
	return kr == KERN_SUCCESS ? 0 : -EFAULT;  /* KERN_INVALID_ADDRESS, KERN_PROTECTION_FAILURE */
}

/* vm_write takes a mach_msg_type_number_t count: at most 1 GiB per call. */
#define VM_CHUNK ((size_t)1 << 30)

int plat_vm_read(void *dst, const void *src, size_t len)
{
	while (len) {
		size_t n = len < VM_CHUNK ? len : VM_CHUNK;
		vm_size_t got = 0;
		int rc = kr_errno(vm_read_overwrite(mach_task_self(), (vm_address_t)src, n, (vm_address_t)dst, &got));

		if (rc)
			return rc;
		if (got != n)
			return -EFAULT;
		dst = (char *)dst + n;
		src = (const char *)src + n;
		len -= n;
	}
	return 0;
}

int plat_vm_write(void *dst, const void *src, size_t len)
{
	while (len) {
		size_t n = len < VM_CHUNK ? len : VM_CHUNK;
		int rc = kr_errno(vm_write(mach_task_self(), (vm_address_t)dst, (vm_offset_t)src,
					   (mach_msg_type_number_t)n));

		if (rc)
			return rc;
		dst = (char *)dst + n;
		src = (const char *)src + n;
		len -= n;
	}
	return 0;
}

/* macOS has no capability that lifts the limit; only an infinite one does. */
uint64_t plat_vm_lock_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	return (uint64_t)rl.rlim_cur;
}

/* A Mach region (mach_vm_region_recurse) says whether memory is shared and, through
 * proc_regionfilename, the path of a vnode behind it, but not which descriptor maps
 * it, and a POSIX shared-memory object has no path at all: no way to hand the same
 * pages to a daemon from an address alone.  The kext pins a client's own memory
 * instead (docs/architecture.md, "Several processes: uvd"). */
int plat_vm_shared_file(const void *addr, size_t len, int *fd, uint64_t *file_off)
{
	(void)addr;
	(void)len;
	(void)fd;
	(void)file_off;
	return -EOPNOTSUPP;
}
