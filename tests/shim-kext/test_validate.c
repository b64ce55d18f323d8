/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Request validation: every field of every request, every size, before any state.
 * uvshim_request_check is called directly here (16 KiB pages unless said); the
 * dispatch tests show the same answers reach the client. */
#include <criterion/criterion.h>
#include <string.h>

#include "shim-kext/core/uvshim_core.h"

#define PG 16384ull

static int check(uint32_t sel, const void *req)
{
	size_t in, out;
	cr_assert_eq(uvshim_request_sizes(sel, &in, &out), 0);
	return uvshim_request_check(sel, req, in, out, PG);
}

static const struct uvshim_pin_req good_pin = {.va = 0x100000000ull, .length = 4 * PG,
					      .flags = UVSHIM_PIN_DEVICE_READ};
static const struct uvshim_dma_alloc_req good_dma = {.length = 4096, .align = 4096};
static const struct uvshim_map_bar_req good_map = {.bar = 0, .cache = UVSHIM_CACHE_UNCACHED,
						  .offset = 0, .length = PG};

Test(validate, unknown_selector_is_enosys)
{
	char buf[64] = {0};
	cr_assert_eq(uvshim_request_check(UVSHIM_SEL_COUNT, buf, 8, 0, PG), -UVSHIM_ENOSYS);
	cr_assert_eq(uvshim_request_check(0x80000000u, buf, 8, 0, PG), -UVSHIM_ENOSYS);
}

Test(validate, every_selector_refuses_a_request_one_byte_short_or_long)
{
	char buf[4200] = {0};
	for (uint32_t s = 0; s < UVSHIM_SEL_COUNT; s++) {
		size_t in, out;
		uvshim_request_sizes(s, &in, &out);
		cr_expect_eq(uvshim_request_check(s, buf, in - 1, out, PG), -UVSHIM_EBADSIZE, "sel %u short", s);
		cr_expect_eq(uvshim_request_check(s, buf, in + 1, out, PG), -UVSHIM_EBADSIZE, "sel %u long", s);
		cr_expect_eq(uvshim_request_check(s, buf, 0, out, PG), -UVSHIM_EBADSIZE, "sel %u empty", s);
	}
}

Test(validate, every_selector_refuses_a_reply_buffer_of_the_wrong_size)
{
	char buf[4200] = {0};
	for (uint32_t s = 0; s < UVSHIM_SEL_COUNT; s++) {
		size_t in, out;
		uvshim_request_sizes(s, &in, &out);
		cr_expect_eq(uvshim_request_check(s, buf, in, out + 8, PG), -UVSHIM_EBADSIZE, "sel %u", s);
		if (out)
			cr_expect_eq(uvshim_request_check(s, buf, in, out - 1, PG), -UVSHIM_EBADSIZE, "sel %u", s);
	}
}

Test(validate, null_request_is_einval)
{
	size_t in, out;
	uvshim_request_sizes(UVSHIM_SEL_RESET, &in, &out);
	cr_assert_eq(uvshim_request_check(UVSHIM_SEL_RESET, NULL, in, out, PG), -UVSHIM_EINVAL);
}

Test(validate, hello_with_flags_is_einval)
{
	struct uvshim_hello_req r = {.abi_major = UVSHIM_ABI_MAJOR, .flags = 1};
	cr_assert_eq(check(UVSHIM_SEL_HELLO, &r), -UVSHIM_EINVAL);
}

Test(validate, hello_with_reserved_set_is_einval)
{
	struct uvshim_hello_req r = {.abi_major = UVSHIM_ABI_MAJOR, .reserved = 0x80000000u};
	cr_assert_eq(check(UVSHIM_SEL_HELLO, &r), -UVSHIM_EINVAL);
}

Test(validate, hello_with_other_major_passes_field_checks)
{
	/* the version is policy: dispatch answers EVERSION with the kext's version */
	struct uvshim_hello_req r = {.abi_major = UVSHIM_ABI_MAJOR + 1};
	cr_assert_eq(check(UVSHIM_SEL_HELLO, &r), 0);
}

Test(validate, device_info_with_flags_or_reserved_is_einval)
{
	struct uvshim_info_req a = {.flags = 2}, b = {.reserved = 1}, ok = {0};
	cr_assert_eq(check(UVSHIM_SEL_DEVICE_INFO, &a), -UVSHIM_EINVAL);
	cr_assert_eq(check(UVSHIM_SEL_DEVICE_INFO, &b), -UVSHIM_EINVAL);
	cr_assert_eq(check(UVSHIM_SEL_DEVICE_INFO, &ok), 0);
}

Test(validate, map_bar_accepts_a_page_window)
{
	cr_assert_eq(check(UVSHIM_SEL_MAP_BAR, &good_map), 0);
}

Test(validate, map_bar_other_than_bar0_is_einval)
{
	struct uvshim_map_bar_req r = good_map;
	r.bar = 2;
	cr_assert_eq(check(UVSHIM_SEL_MAP_BAR, &r), -UVSHIM_EINVAL);
}

Test(validate, map_bar_unknown_cache_mode_is_einval)
{
	struct uvshim_map_bar_req r = good_map;
	r.cache = 2;
	cr_assert_eq(check(UVSHIM_SEL_MAP_BAR, &r), -UVSHIM_EINVAL);
}

Test(validate, map_bar_unaligned_offset_is_einval)
{
	struct uvshim_map_bar_req r = good_map;
	r.offset = 4096; /* aligned for 4 KiB pages, not for 16 KiB */
	cr_assert_eq(check(UVSHIM_SEL_MAP_BAR, &r), -UVSHIM_EINVAL);
	cr_assert_eq(uvshim_request_check(UVSHIM_SEL_MAP_BAR, &r, sizeof(r),
					  sizeof(struct uvshim_map_bar_rep), 4096), 0);
}

Test(validate, map_bar_zero_length_is_einval)
{
	struct uvshim_map_bar_req r = good_map;
	r.length = 0;
	cr_assert_eq(check(UVSHIM_SEL_MAP_BAR, &r), -UVSHIM_EINVAL);
}

Test(validate, map_bar_partial_page_length_is_einval)
{
	struct uvshim_map_bar_req r = good_map;
	r.length = PG + 64;
	cr_assert_eq(check(UVSHIM_SEL_MAP_BAR, &r), -UVSHIM_EINVAL);
}

Test(validate, unmap_bar_with_reserved_set_is_einval)
{
	struct uvshim_unmap_bar_req r = {.memory_type = UVSHIM_MEMTYPE(UVSHIM_MEMTYPE_WINDOW, 0), .reserved = 1};
	cr_assert_eq(check(UVSHIM_SEL_UNMAP_BAR, &r), -UVSHIM_EINVAL);
}

Test(validate, unmap_bar_of_a_dma_memory_type_is_einval)
{
	struct uvshim_unmap_bar_req r = {.memory_type = UVSHIM_MEMTYPE(UVSHIM_MEMTYPE_DMA, 0)};
	cr_assert_eq(check(UVSHIM_SEL_UNMAP_BAR, &r), -UVSHIM_EINVAL);
}

Test(validate, pin_accepts_page_aligned_user_memory)
{
	cr_assert_eq(check(UVSHIM_SEL_PIN, &good_pin), 0);
}

Test(validate, pin_unaligned_va_is_einval)
{
	struct uvshim_pin_req r = good_pin;
	r.va += 8;
	cr_assert_eq(check(UVSHIM_SEL_PIN, &r), -UVSHIM_EINVAL);
}

Test(validate, pin_4k_aligned_va_is_refused_with_16k_pages_only)
{
	struct uvshim_pin_req r = good_pin;
	r.va += 4096;
	cr_assert_eq(check(UVSHIM_SEL_PIN, &r), -UVSHIM_EINVAL);
	r.length = 4096;
	cr_assert_eq(uvshim_request_check(UVSHIM_SEL_PIN, &r, sizeof(r), sizeof(struct uvshim_pin_rep), 4096), 0);
}

Test(validate, pin_zero_length_is_einval)
{
	struct uvshim_pin_req r = good_pin;
	r.length = 0;
	cr_assert_eq(check(UVSHIM_SEL_PIN, &r), -UVSHIM_EINVAL);
}

Test(validate, pin_partial_page_length_is_einval)
{
	struct uvshim_pin_req r = good_pin;
	r.length = PG - 1;
	cr_assert_eq(check(UVSHIM_SEL_PIN, &r), -UVSHIM_EINVAL);
}

Test(validate, pin_longer_than_the_pin_cap_is_einval)
{
	struct uvshim_pin_req r = good_pin;
	r.length = UVSHIM_MAX_PIN_BYTES + PG;
	cr_assert_eq(check(UVSHIM_SEL_PIN, &r), -UVSHIM_EINVAL);
}

Test(validate, pin_of_the_null_page_is_efault)
{
	struct uvshim_pin_req r = good_pin;
	r.va = 0;
	cr_assert_eq(check(UVSHIM_SEL_PIN, &r), -UVSHIM_EFAULT);
}

Test(validate, pin_of_a_kernel_address_is_efault)
{
	struct uvshim_pin_req r = good_pin;
	r.va = 0xffffff8000000000ull;
	cr_assert_eq(check(UVSHIM_SEL_PIN, &r), -UVSHIM_EFAULT);
}

Test(validate, pin_running_past_the_user_va_limit_is_efault)
{
	struct uvshim_pin_req r = good_pin;
	r.va = UVSHIM_USER_VA_LIMIT - PG;
	r.length = 2 * PG;
	cr_assert_eq(check(UVSHIM_SEL_PIN, &r), -UVSHIM_EFAULT);
	r.length = PG; /* ends exactly at the limit */
	cr_assert_eq(check(UVSHIM_SEL_PIN, &r), 0);
}

Test(validate, pin_whose_end_wraps_is_efault)
{
	struct uvshim_pin_req r = good_pin;
	r.va = 0xffffffffffffc000ull;
	r.length = 2 * PG;
	cr_assert_eq(check(UVSHIM_SEL_PIN, &r), -UVSHIM_EFAULT);
}

Test(validate, pin_without_access_flags_is_einval)
{
	struct uvshim_pin_req r = good_pin;
	r.flags = 0;
	cr_assert_eq(check(UVSHIM_SEL_PIN, &r), -UVSHIM_EINVAL);
}

Test(validate, pin_with_an_unknown_flag_is_einval)
{
	struct uvshim_pin_req r = good_pin;
	r.flags |= 0x4;
	cr_assert_eq(check(UVSHIM_SEL_PIN, &r), -UVSHIM_EINVAL);
}

Test(validate, pin_with_reserved_set_is_einval)
{
	struct uvshim_pin_req r = good_pin;
	r.reserved = 1;
	cr_assert_eq(check(UVSHIM_SEL_PIN, &r), -UVSHIM_EINVAL);
}

Test(validate, pin_segs_of_handle_zero_is_einval)
{
	struct uvshim_pin_segs_req r = {.handle = 0};
	cr_assert_eq(check(UVSHIM_SEL_PIN_SEGS, &r), -UVSHIM_EINVAL);
}

Test(validate, pin_segs_with_reserved_set_is_einval)
{
	struct uvshim_pin_segs_req r = {.handle = 1, .reserved = 3};
	cr_assert_eq(check(UVSHIM_SEL_PIN_SEGS, &r), -UVSHIM_EINVAL);
}

Test(validate, unpin_and_dma_free_of_handle_zero_are_einval)
{
	struct uvshim_handle_req r = {0};
	cr_assert_eq(check(UVSHIM_SEL_UNPIN, &r), -UVSHIM_EINVAL);
	cr_assert_eq(check(UVSHIM_SEL_DMA_FREE, &r), -UVSHIM_EINVAL);
}

Test(validate, dma_alloc_accepts_a_sub_page_buffer)
{
	cr_assert_eq(check(UVSHIM_SEL_DMA_ALLOC, &good_dma), 0);
}

Test(validate, dma_alloc_zero_length_is_einval)
{
	struct uvshim_dma_alloc_req r = good_dma;
	r.length = 0;
	cr_assert_eq(check(UVSHIM_SEL_DMA_ALLOC, &r), -UVSHIM_EINVAL);
}

Test(validate, dma_alloc_over_the_buffer_cap_is_einval)
{
	struct uvshim_dma_alloc_req r = good_dma;
	r.length = UVSHIM_MAX_DMA_BYTES + 1;
	cr_assert_eq(check(UVSHIM_SEL_DMA_ALLOC, &r), -UVSHIM_EINVAL);
	r.length = UINT64_MAX; /* would overflow a page round-up */
	cr_assert_eq(check(UVSHIM_SEL_DMA_ALLOC, &r), -UVSHIM_EINVAL);
}

Test(validate, dma_alloc_zero_alignment_is_einval)
{
	struct uvshim_dma_alloc_req r = good_dma;
	r.align = 0;
	cr_assert_eq(check(UVSHIM_SEL_DMA_ALLOC, &r), -UVSHIM_EINVAL);
}

Test(validate, dma_alloc_non_power_of_two_alignment_is_einval)
{
	struct uvshim_dma_alloc_req r = good_dma;
	r.align = 3 * 4096;
	cr_assert_eq(check(UVSHIM_SEL_DMA_ALLOC, &r), -UVSHIM_EINVAL);
}

Test(validate, dma_alloc_alignment_over_the_cap_is_einval)
{
	struct uvshim_dma_alloc_req r = good_dma;
	r.align = UVSHIM_MAX_DMA_ALIGN * 2;
	cr_assert_eq(check(UVSHIM_SEL_DMA_ALLOC, &r), -UVSHIM_EINVAL);
}

Test(validate, dma_alloc_with_flags_or_reserved_is_einval)
{
	struct uvshim_dma_alloc_req a = good_dma, b = good_dma;
	a.flags = 1;
	b.reserved = 1;
	cr_assert_eq(check(UVSHIM_SEL_DMA_ALLOC, &a), -UVSHIM_EINVAL);
	cr_assert_eq(check(UVSHIM_SEL_DMA_ALLOC, &b), -UVSHIM_EINVAL);
}

Test(validate, irq_vector_beyond_the_abi_limit_is_einval)
{
	struct uvshim_irq_req r = {.vector = UVSHIM_MAX_VECTORS};
	cr_assert_eq(check(UVSHIM_SEL_IRQ_ARM, &r), -UVSHIM_EINVAL);
	cr_assert_eq(check(UVSHIM_SEL_IRQ_DISARM, &r), -UVSHIM_EINVAL);
}

Test(validate, irq_with_flags_is_einval)
{
	struct uvshim_irq_req r = {.vector = 1, .flags = 1};
	cr_assert_eq(check(UVSHIM_SEL_IRQ_ARM, &r), -UVSHIM_EINVAL);
}

Test(validate, irq_disarm_with_a_cookie_is_einval)
{
	struct uvshim_irq_req r = {.vector = 1, .cookie = 7};
	cr_assert_eq(check(UVSHIM_SEL_IRQ_DISARM, &r), -UVSHIM_EINVAL);
	cr_assert_eq(check(UVSHIM_SEL_IRQ_ARM, &r), 0);
}

Test(validate, reset_with_flags_or_reserved_is_einval)
{
	struct uvshim_reset_req a = {.flags = 1}, b = {.reserved = 1}, ok = {0};
	cr_assert_eq(check(UVSHIM_SEL_RESET, &a), -UVSHIM_EINVAL);
	cr_assert_eq(check(UVSHIM_SEL_RESET, &b), -UVSHIM_EINVAL);
	cr_assert_eq(check(UVSHIM_SEL_RESET, &ok), 0);
}

Test(validate, unaligned_request_buffer_is_read_correctly)
{
	unsigned char buf[sizeof(struct uvshim_pin_req) + 1];
	memcpy(buf + 1, &good_pin, sizeof(good_pin));
	cr_assert_eq(uvshim_request_check(UVSHIM_SEL_PIN, buf + 1, sizeof(good_pin),
					  sizeof(struct uvshim_pin_rep), PG), 0);
	struct uvshim_pin_req bad = good_pin;
	bad.flags = 0;
	memcpy(buf + 1, &bad, sizeof(bad));
	cr_assert_eq(uvshim_request_check(UVSHIM_SEL_PIN, buf + 1, sizeof(bad),
					  sizeof(struct uvshim_pin_rep), PG), -UVSHIM_EINVAL);
}

Test(validate, bad_page_size_refuses_everything)
{
	cr_assert_eq(uvshim_request_check(UVSHIM_SEL_PIN, &good_pin, sizeof(good_pin),
					  sizeof(struct uvshim_pin_rep), 12288), -UVSHIM_EINVAL);
}
