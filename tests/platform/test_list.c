/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/list.h: the circular list hw/shim's records and hw/mlx5's objects hang on
 * (add in front, del relinks the node to itself, for_each first to last, container_of
 * back to the record). */
#include <criterion/criterion.h>

#include "hw/platform/list.h"

struct rec {
	int id;
	struct plat_list link;
};

static int ids(struct plat_list *head, int *out, int max)
{
	struct plat_list *l;
	int n = 0;

	plat_list_for_each(l, head) {
		cr_assert_lt(n, max, "the list does not end");
		out[n++] = plat_container_of(l, struct rec, link)->id;
	}
	return n;
}

/* head with r[2], r[1], r[0] on it: each added in front. */
static void three(struct plat_list *head, struct rec *r)
{
	plat_list_init(head);
	for (int i = 0; i < 3; i++) {
		r[i].id = i + 1;
		plat_list_add(head, &r[i].link);
	}
}

Test(list, a_new_head_is_empty_and_for_each_visits_nothing)
{
	struct plat_list head;
	int got[1];

	plat_list_init(&head);
	cr_assert(plat_list_empty(&head));
	cr_assert_eq(ids(&head, got, 1), 0);
}

Test(list, add_puts_the_node_first_and_for_each_walks_first_to_last)
{
	struct plat_list head;
	struct rec r[3];
	int got[4];

	three(&head, r);
	cr_assert_not(plat_list_empty(&head));
	cr_assert_eq(ids(&head, got, 4), 3);
	cr_assert(got[0] == 3 && got[1] == 2 && got[2] == 1, "order %d %d %d", got[0], got[1], got[2]);
	cr_assert_eq(head.prev, &r[0].link, "the last node is the first added");
}

Test(list, del_unlinks_the_node_and_relinks_it_to_itself)
{
	struct plat_list head;
	struct rec r[3];
	int got[4];

	three(&head, r);
	plat_list_del(&r[1].link);
	cr_assert_eq(r[1].link.next, &r[1].link);
	cr_assert_eq(r[1].link.prev, &r[1].link);
	plat_list_del(&r[1].link);   /* a second del touches nothing else */
	cr_assert_eq(ids(&head, got, 4), 2);
	cr_assert(got[0] == 3 && got[1] == 1, "order %d %d", got[0], got[1]);
	plat_list_del(&r[0].link);
	plat_list_del(&r[2].link);
	cr_assert(plat_list_empty(&head));
}
