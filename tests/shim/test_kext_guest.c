/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/shim/kext_guest.h: the host page of the UAR region a device UAR page lies in, as
 * the owner names it in GRANT and the guest maps it (16 KiB pages on Apple Silicon:
 * four 4 KiB UAR pages per host page). */
#include <criterion/criterion.h>
#include <errno.h>

#include "hw/shim/kext_guest.h"

static const struct uvshim_info_rep info = {
	.page_size = 16384, .bar0_len = 32u << 20, .uar_offset = 16384, .uar_len = (32u << 20) - 16384,
};

Test(kext_guest, uar_pages_of_one_host_page_share_its_index)
{
	uint32_t a = 99, b = 99, c = 99;
	cr_assert_eq(shim_kext_uar_index(&info, 4 * 4096, &a), 0);
	cr_assert_eq(shim_kext_uar_index(&info, 7 * 4096, &b), 0);
	cr_assert_eq(shim_kext_uar_index(&info, 8 * 4096, &c), 0);
	cr_assert_eq(a, 0);
	cr_assert_eq(b, 0);
	cr_assert_eq(c, 1);
}

Test(kext_guest, the_init_segment_and_past_the_bar_are_no_uar_page)
{
	uint32_t i;
	cr_assert_eq(shim_kext_uar_index(&info, 0, &i), -EINVAL);
	cr_assert_eq(shim_kext_uar_index(&info, 4095 + 8192, &i), -EINVAL);
	cr_assert_eq(shim_kext_uar_index(&info, 32u << 20, &i), -EINVAL);
}

Test(kext_guest, window_is_the_whole_host_page_holding_the_offset)
{
	struct uvshim_map_bar_req r;
	cr_assert_eq(shim_kext_guest_window(&info, 9 * 4096 + 64, UVSHIM_CACHE_WC, &r), 0);
	cr_assert_eq(r.offset, 8 * 4096);
	cr_assert_eq(r.length, 16384);
	cr_assert_eq(r.cache, UVSHIM_CACHE_WC);
	cr_assert_eq(r.bar, 0);
	cr_assert_eq(shim_kext_guest_window(&info, 9 * 4096, 7, &r), -EINVAL);
}
