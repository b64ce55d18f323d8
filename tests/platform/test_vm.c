/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/vm.h: the process's map as a pinning kernel sees it (mapped or not,
 * writable or not), copies into and out of memory that fail with -EFAULT where a plain
 * memcpy would raise SIGSEGV.  The locked-memory limit and the pid the copies name: test_vm_linux.c. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hw/platform/vm.h"

static size_t pg(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static uint8_t *map(size_t pages, int prot)
{
	void *p = mmap(NULL, pages * pg(), prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(p, MAP_FAILED);
	return p;
}

Test(vm, read_write_memory_reads_as_read_write)
{
	uint8_t *p = map(2, PROT_READ | PROT_WRITE);
	unsigned prot = 0;

	cr_assert_eq(plat_vm_query(p + 10, 2 * pg() - 20, &prot), 0);
	cr_assert_eq(prot, PLAT_VM_READ | PLAT_VM_WRITE);
	munmap(p, 2 * pg());
}

Test(vm, a_read_only_page_in_the_range_makes_it_read_only)
{
	uint8_t *p = map(3, PROT_READ | PROT_WRITE);
	unsigned prot = 0;

	cr_assert_eq(mprotect(p + pg(), pg(), PROT_READ), 0);
	cr_assert_eq(plat_vm_query(p, 3 * pg(), &prot), 0);
	cr_assert_eq(prot, PLAT_VM_READ);
	cr_assert_eq(plat_vm_query(p + 2 * pg(), pg(), &prot), 0);
	cr_assert_eq(prot, PLAT_VM_READ | PLAT_VM_WRITE, "the rights are those of the range asked about");
	munmap(p, 3 * pg());
}

Test(vm, a_hole_in_the_range_is_efault)
{
	uint8_t *p = map(3, PROT_READ | PROT_WRITE);
	unsigned prot = 0;

	cr_assert_eq(munmap(p + pg(), pg()), 0);
	cr_assert_eq(plat_vm_query(p, 3 * pg(), &prot), -EFAULT);
	cr_assert_eq(plat_vm_query(p + pg() + 8, 8, &prot), -EFAULT);
	cr_assert_eq(plat_vm_query(p + 2 * pg(), pg(), &prot), 0);
	munmap(p, pg());
	munmap(p + 2 * pg(), pg());
}

Test(vm, prot_none_is_mapped_without_rights)
{
	uint8_t *p = map(1, PROT_NONE);
	unsigned prot = 7;

	cr_assert_eq(plat_vm_query(p, pg(), &prot), 0);
	cr_assert_eq(prot, 0);
	munmap(p, pg());
}

Test(vm, empty_or_wrapping_range_is_einval)
{
	unsigned prot = 0;

	cr_assert_eq(plat_vm_query(&prot, 0, &prot), -EINVAL);
	cr_assert_eq(plat_vm_query((void *)(uintptr_t)(UINTPTR_MAX - 8), 64, &prot), -EINVAL);
}

Test(vm, copies_move_the_bytes_both_ways)
{
	uint8_t *p = map(2, PROT_READ | PROT_WRITE);
	uint8_t src[300], back[300];

	for (unsigned i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + 1);
	/* across the page boundary */
	cr_assert_eq(plat_vm_write(p + pg() - 100, src, sizeof(src)), 0);
	cr_assert_arr_eq(p + pg() - 100, src, sizeof(src));
	cr_assert_eq(plat_vm_read(back, p + pg() - 100, sizeof(back)), 0);
	cr_assert_arr_eq(back, src, sizeof(src));
	munmap(p, 2 * pg());
}

Test(vm, copies_into_or_out_of_unmapped_memory_are_efault_not_a_signal)
{
	uint8_t *p = map(1, PROT_READ | PROT_WRITE);
	uint8_t b[64] = { 1 };

	cr_assert_eq(munmap(p, pg()), 0);
	cr_assert_eq(plat_vm_write(p + 8, b, sizeof(b)), -EFAULT);
	cr_assert_eq(plat_vm_read(b, p + 8, sizeof(b)), -EFAULT);
}

Test(vm, a_write_into_read_only_memory_is_efault_and_changes_nothing)
{
	uint8_t *p = map(1, PROT_READ | PROT_WRITE);
	uint8_t b[64], got[64];

	memset(p, 0x5a, 64);
	memset(b, 0xa5, sizeof(b));
	cr_assert_eq(mprotect(p, pg(), PROT_READ), 0);
	cr_assert_eq(plat_vm_write(p, b, sizeof(b)), -EFAULT);
	cr_assert_eq(plat_vm_read(got, p, sizeof(got)), 0, "read-only memory can still be read");
	for (unsigned i = 0; i < sizeof(got); i++)
		cr_assert_eq(got[i], 0x5a);
	munmap(p, pg());
}
