/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A circular doubly linked list whose head is a link of its own, in the form of Linux's
 * include/linux/list.h (__list_add links a node between two neighbours, list_del
 * unlinks it): the one list of hw/shim's records and hw/mlx5's objects.  No platform
 * difference, only one copy of something two layers need (README.md). */
#ifndef UVERBS_HW_PLATFORM_LIST_H
#define UVERBS_HW_PLATFORM_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct plat_list {
	struct plat_list *prev, *next;
};

/* The record of type `type` whose member `member` is the link at ptr. */
#define plat_container_of(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* Each link of the list at head, first to last; pos must not be unlinked on the way. */
#define plat_list_for_each(pos, head) for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)

static inline void plat_list_init(struct plat_list *head) { head->prev = head->next = head; }
static inline bool plat_list_empty(const struct plat_list *head) { return head->next == head; }

/* n becomes the first link after head. */
static inline void plat_list_add(struct plat_list *head, struct plat_list *n)
{
	n->next = head->next;
	n->prev = head;
	head->next->prev = n;
	head->next = n;
}

/* n leaves its list and links to itself, so that a second del is harmless. */
static inline void plat_list_del(struct plat_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = n;
}

#endif
