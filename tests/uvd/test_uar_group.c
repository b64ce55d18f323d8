/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tools/uvd/uar_group.c: the daemon gives clients UAR pages in whole host pages, so
 * that one client's grant of a host page (the kext's GRANT) never covers another
 * client's UAR page.  Host page and UAR page sizes are parameters: 16 KiB host pages
 * of 4 KiB UAR pages (Apple silicon) are tested on any machine. */
#include <criterion/criterion.h>
#include <errno.h>

#include "tools/uvd/uar_group.h"

Test(uar_group, size_is_host_page_over_uar_page_and_one_when_they_are_equal)
{
	unsigned n = 0;
	cr_assert_eq(uvd_uar_group_size(16384, 4096, &n), 0);
	cr_assert_eq(n, 4);
	cr_assert_eq(uvd_uar_group_size(4096, 4096, &n), 0);
	cr_assert_eq(n, 1);
	cr_assert_eq(uvd_uar_group_size(65536, 4096, &n), 0);
	cr_assert_eq(n, 16);
	cr_assert_eq(uvd_uar_group_size(16384, 16384, &n), 0);
	cr_assert_eq(n, 1);
}

Test(uar_group, size_refuses_pages_that_are_not_powers_of_two_or_too_many_uars)
{
	unsigned n = 7;
	cr_assert_eq(uvd_uar_group_size(12288, 4096, &n), -EINVAL);
	cr_assert_eq(uvd_uar_group_size(16384, 0, &n), -EINVAL);
	cr_assert_eq(uvd_uar_group_size(1u << 20, 4096, &n), -EINVAL);
	cr_assert_eq(n, 7, "left as it was");
}

Test(uar_group, pool_gives_no_group_until_it_holds_every_index_of_one)
{
	struct uvd_uar_groups p;
	uint32_t first = 0;
	uvd_uar_groups_init(&p, 4);
	/* the daemon's own UAR page is index 1: the firmware gives 2, 3, 4, ... */
	for (uint32_t u = 2; u < 8; u++) {
		cr_assert_eq(uvd_uar_pool_add(&p, u), 0);
		cr_assert_eq(uvd_uar_pool_take(&p, &first), u == 7 ? 0 : -ENOENT, "after index %u", u);
	}
	cr_assert_eq(first, 4, "the group of 4..7, not one with the daemon's index 1");
	cr_assert_eq(uvd_uar_pool_count(&p), 2, "2 and 3 stay in the pool");
	cr_assert_eq(uvd_uar_pool_add(&p, 3), -EEXIST);
	uvd_uar_groups_fini(&p);
}

Test(uar_group, pool_completes_a_group_from_indices_in_any_order)
{
	struct uvd_uar_groups p;
	uint32_t first = 0;
	uvd_uar_groups_init(&p, 4);
	static const uint32_t order[] = { 13, 8, 15, 10, 9, 14, 11 };
	for (unsigned i = 0; i < 7; i++)
		cr_assert_eq(uvd_uar_pool_add(&p, order[i]), 0);
	cr_assert_eq(uvd_uar_pool_take(&p, &first), 0);
	cr_assert_eq(first, 8);
	cr_assert_eq(uvd_uar_pool_take(&p, &first), -ENOENT, "12..15 lacks 12");
	uvd_uar_groups_fini(&p);
}

Test(uar_group, client_uses_its_group_before_it_needs_another)
{
	struct uvd_uar_groups s;
	uint32_t u;
	uvd_uar_groups_init(&s, 4);
	cr_assert_eq(uvd_uar_set_get(&s, &u), -ENOENT, "no group yet");
	cr_assert_eq(uvd_uar_set_add(&s, 8), 0);
	for (uint32_t want = 8; want < 12; want++) {
		cr_assert_eq(uvd_uar_set_get(&s, &u), 0);
		cr_assert_eq(u, want);
	}
	cr_assert_eq(uvd_uar_set_get(&s, &u), -ENOENT, "the group is used up");
	cr_assert_eq(uvd_uar_set_add(&s, 9), -EINVAL, "not a group's first index");
	cr_assert_eq(uvd_uar_set_add(&s, 8), -EEXIST);
	uvd_uar_groups_fini(&s);
}

Test(uar_group, group_is_freed_when_the_client_uses_none_of_it)
{
	struct uvd_uar_groups s;
	uint32_t a, b, first = 0;
	uvd_uar_groups_init(&s, 4);
	cr_assert_eq(uvd_uar_set_add(&s, 4), 0);
	cr_assert_eq(uvd_uar_set_get(&s, &a), 0);
	cr_assert_eq(uvd_uar_set_get(&s, &b), 0);
	cr_assert_eq(uvd_uar_set_put(&s, a, &first), 0, "b still in use");
	cr_assert_eq(uvd_uar_set_put(&s, a, &first), -ENOENT, "a twice");
	cr_assert_not_null(uvd_uar_set_group(&s, 7), "a spare index of its group");
	cr_assert_eq(uvd_uar_set_put(&s, b, &first), 1);
	cr_assert_eq(first, 4);
	cr_assert_null(uvd_uar_set_group(&s, 4), "the group left the client");
	cr_assert_eq(uvd_uar_set_put(&s, 100, &first), -ENOENT, "never the client's");
	uvd_uar_groups_fini(&s);
}

/* Two clients taking UAR pages in turn, as the daemon serves them: their indices never
 * share a host page (of 16 KiB here, with 4 KiB UAR pages). */
Test(uar_group, two_clients_in_turn_never_share_a_host_page)
{
	struct uvd_uar_groups p;
	struct uvd_uar_groups c[2];
	uint32_t next_fw = 1, got[2][10];
	unsigned n[2] = { 0, 0 };
	uvd_uar_groups_init(&p, 4);
	uvd_uar_groups_init(&c[0], 4);
	uvd_uar_groups_init(&c[1], 4);
	for (unsigned turn = 0; turn < 20; turn++) {
		struct uvd_uar_groups *s = &c[turn & 1];
		uint32_t u, first;
		if (uvd_uar_set_get(s, &u) != 0) {
			while (uvd_uar_pool_take(&p, &first) != 0)
				cr_assert_eq(uvd_uar_pool_add(&p, next_fw++), 0);
			cr_assert_eq(uvd_uar_set_add(s, first), 0);
			cr_assert_eq(uvd_uar_set_get(s, &u), 0);
		}
		got[turn & 1][n[turn & 1]++] = u;
	}
	for (unsigned i = 0; i < 10; i++)
		for (unsigned j = 0; j < 10; j++)
			cr_assert_neq(got[0][i] / 4, got[1][j] / 4, "UAR 0x%x and 0x%x share host page %u", got[0][i],
				      got[1][j], got[0][i] / 4);
	uvd_uar_groups_fini(&c[0]);
	uvd_uar_groups_fini(&c[1]);
	uvd_uar_groups_fini(&p);
}

Test(uar_group, emptied_set_and_pool_answer_calls_without_a_group)
{
	struct uvd_uar_groups p;
	struct uvd_uar_groups s;
	uint32_t u, first;
	uvd_uar_groups_init(&p, 4);
	uvd_uar_groups_init(&s, 4);
	cr_assert_eq(uvd_uar_set_add(&s, 4), 0);
	cr_assert_eq(uvd_uar_pool_add(&p, 9), 0);
	uvd_uar_groups_fini(&s);
	uvd_uar_groups_fini(&p);
	cr_assert_eq(uvd_uar_set_get(&s, &u), -ENOENT);
	cr_assert_eq(uvd_uar_set_put(&s, 5, &first), -ENOENT);
	cr_assert_eq(uvd_uar_pool_take(&p, &first), -ENOENT);
	cr_assert_eq(uvd_uar_pool_count(&p), 0);
	cr_assert_eq(uvd_uar_pool_add(&p, 9), 0, "usable again");
	uvd_uar_groups_fini(&p);
}
