/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The ABI header's contract as seen by code: sizes per selector, IOReturn encoding,
 * memory types, status names. */
#include <criterion/criterion.h>
#include <string.h>

#include "shim-kext/core/uvshim_core.h"

Test(abi, request_sizes_match_the_abi_structs)
{
	static const struct { uint32_t sel; size_t in, out; } want[] = {
		{UVSHIM_SEL_HELLO, sizeof(struct uvshim_hello_req), sizeof(struct uvshim_hello_rep)},
		{UVSHIM_SEL_DEVICE_INFO, sizeof(struct uvshim_info_req), sizeof(struct uvshim_info_rep)},
		{UVSHIM_SEL_MAP_BAR, sizeof(struct uvshim_map_bar_req), sizeof(struct uvshim_map_bar_rep)},
		{UVSHIM_SEL_UNMAP_BAR, sizeof(struct uvshim_unmap_bar_req), 0},
		{UVSHIM_SEL_PIN, sizeof(struct uvshim_pin_req), sizeof(struct uvshim_pin_rep)},
		{UVSHIM_SEL_PIN_SEGS, sizeof(struct uvshim_pin_segs_req), sizeof(struct uvshim_pin_rep)},
		{UVSHIM_SEL_UNPIN, sizeof(struct uvshim_handle_req), 0},
		{UVSHIM_SEL_DMA_ALLOC, sizeof(struct uvshim_dma_alloc_req), sizeof(struct uvshim_dma_alloc_rep)},
		{UVSHIM_SEL_DMA_FREE, sizeof(struct uvshim_handle_req), 0},
		{UVSHIM_SEL_IRQ_ARM, sizeof(struct uvshim_irq_req), 0},
		{UVSHIM_SEL_IRQ_DISARM, sizeof(struct uvshim_irq_req), 0},
		{UVSHIM_SEL_RESET, sizeof(struct uvshim_reset_req), 0},
		{UVSHIM_SEL_GRANT, sizeof(struct uvshim_grant_req), 0},
		{UVSHIM_SEL_REVOKE, sizeof(struct uvshim_grant_req), 0},
		{UVSHIM_SEL_PIN_FOR, sizeof(struct uvshim_pin_for_req), sizeof(struct uvshim_pin_rep)},
	};
	cr_assert_eq(sizeof(want) / sizeof(want[0]), UVSHIM_SEL_COUNT);
	for (size_t i = 0; i < UVSHIM_SEL_COUNT; i++) {
		size_t in = 99, out = 99;
		cr_assert_eq(uvshim_request_sizes(want[i].sel, &in, &out), 0);
		cr_expect_eq(in, want[i].in, "selector %u in", want[i].sel);
		cr_expect_eq(out, want[i].out, "selector %u out", want[i].sel);
	}
}

Test(abi, unknown_selector_has_no_sizes)
{
	size_t in, out;
	cr_assert_eq(uvshim_request_sizes(UVSHIM_SEL_COUNT, &in, &out), -UVSHIM_ENOSYS);
	cr_assert_eq(uvshim_request_sizes(0xffffffffu, &in, &out), -UVSHIM_ENOSYS);
}

Test(abi, ioreturn_carries_status_in_the_vendor_specific_range)
{
	uint32_t r = UVSHIM_IORETURN(UVSHIM_EBUSY);
	cr_assert_eq(r, 0xe3ff8010u);
	cr_assert(UVSHIM_IORETURN_IS_STATUS(r));
	cr_assert_eq(UVSHIM_STATUS_OF_IORETURN(r), UVSHIM_EBUSY);
	cr_assert_eq(UVSHIM_STATUS_OF_IORETURN(UVSHIM_IORETURN(UVSHIM_EPINLIMIT)), UVSHIM_EPINLIMIT);
	/* kIOReturnNoMemory (0xe00002bd) is IOKit's own, not ours */
	cr_assert_not(UVSHIM_IORETURN_IS_STATUS(0xe00002bdu));
}

Test(abi, memtype_encodes_kind_and_index)
{
	uint32_t t = UVSHIM_MEMTYPE(UVSHIM_MEMTYPE_DMA, 0x123456);
	cr_assert_eq(t >> UVSHIM_MEMTYPE_KIND_SHIFT, UVSHIM_MEMTYPE_DMA);
	cr_assert_eq(t & UVSHIM_MEMTYPE_INDEX_MASK, 0x123456u);
	cr_assert_eq(UVSHIM_MEMTYPE(UVSHIM_MEMTYPE_WINDOW, 0), 0x01000000u);
}

Test(abi, every_status_has_its_own_name)
{
	static const int st[] = {UVSHIM_OK, UVSHIM_EPERM, UVSHIM_ENOENT, UVSHIM_EIO, UVSHIM_ENOMEM,
		UVSHIM_EACCES, UVSHIM_EFAULT, UVSHIM_EBUSY, UVSHIM_EEXIST, UVSHIM_ENODEV,
		UVSHIM_EINVAL, UVSHIM_ENOSPC, UVSHIM_ERANGE, UVSHIM_ENOSYS, UVSHIM_EBADSIZE,
		UVSHIM_EVERSION, UVSHIM_ENOHELLO, UVSHIM_EPINLIMIT};
	size_t n = sizeof(st) / sizeof(st[0]);
	for (size_t i = 0; i < n; i++) {
		cr_expect_str_neq(uvshim_status_name(st[i]), "unknown status", "status %d", st[i]);
		cr_expect_str_eq(uvshim_status_name(-st[i]), uvshim_status_name(st[i]));
		for (size_t j = 0; j < i; j++)
			cr_expect_str_neq(uvshim_status_name(st[i]), uvshim_status_name(st[j]));
	}
	cr_assert_str_eq(uvshim_status_name(4242), "unknown status");
}

Test(abi, status_codes_below_256_are_errno_values_shared_by_linux_and_darwin)
{
	/* EPERM..ERANGE are numbered alike on Linux and Darwin (both from 4.4BSD/V7). */
	cr_assert_eq(UVSHIM_EBUSY, 16);
	cr_assert_eq(UVSHIM_EINVAL, 22);
	cr_assert_eq(UVSHIM_ENOSPC, 28);
	cr_assert_eq(UVSHIM_ERANGE, 34);
	cr_assert_eq(UVSHIM_EACCES, 13);
}

Test(abi, pin_reply_fits_an_inline_struct_method)
{
	cr_assert_leq(sizeof(struct uvshim_pin_rep), 4096u);
	cr_assert_eq(sizeof(struct uvshim_pin_rep), 32u + 16u * UVSHIM_MAX_SEGS_PER_REPLY);
}
