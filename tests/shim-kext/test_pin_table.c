/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The pin table on its own: limits, reservation, handles, release. */
#include <stdlib.h>

#include <criterion/criterion.h>

#include "shim-kext/core/uvshim_core.h"

#define PG 16384ull
#define CAP 8

static struct uvshim_pin_entry storage[CAP];
static struct uvshim_pins T;

static void setup(void)
{
	cr_assert_eq(uvshim_pins_init(&T, storage, CAP, 4, 16 * PG, PG), 0);
}

TestSuite(pin_table, .init = setup);

static uint32_t reserve_commit(uint64_t va, uint64_t len, uint64_t iova, struct uvshim_seg *seg)
{
	uint32_t slot;
	cr_assert_eq(uvshim_pins_reserve(&T, UVSHIM_PIN_USER, va, len, UVSHIM_PIN_DEVICE_READ, &slot), 0);
	*seg = (struct uvshim_seg){iova, len};
	cr_assert_eq(uvshim_pins_commit(&T, slot, seg, 1, seg), 0);
	return slot;
}

static unsigned released;
static void count_release(void *ctx, const struct uvshim_pin_entry *e)
{
	(void)ctx;
	cr_assert(e->kind == UVSHIM_PIN_USER || e->kind == UVSHIM_PIN_DMA);
	released++;
}

Test(pin_table, init_refuses_zero_capacity_and_limits_above_it)
{
	struct uvshim_pins t;
	cr_assert_eq(uvshim_pins_init(&t, storage, 0, 1, PG, PG), -UVSHIM_EINVAL);
	cr_assert_eq(uvshim_pins_init(&t, storage, CAP, CAP + 1, PG, PG), -UVSHIM_EINVAL);
	cr_assert_eq(uvshim_pins_init(&t, storage, CAP, 0, PG, PG), -UVSHIM_EINVAL);
	cr_assert_eq(uvshim_pins_init(&t, storage, CAP, 1, 0, PG), -UVSHIM_EINVAL);
}

Test(pin_table, init_refuses_a_page_size_that_is_not_a_power_of_two)
{
	struct uvshim_pins t;
	cr_assert_eq(uvshim_pins_init(&t, storage, CAP, 1, PG, 12288), -UVSHIM_EINVAL);
	cr_assert_eq(uvshim_pins_init(&t, storage, CAP, 1, PG, 2048), -UVSHIM_EINVAL);
}

Test(pin_table, a_reservation_counts_against_the_limits_until_aborted)
{
	uint32_t slot;
	cr_assert_eq(uvshim_pins_reserve(&T, UVSHIM_PIN_USER, PG, 16 * PG, UVSHIM_PIN_DEVICE_READ, &slot), 0);
	cr_assert_eq(T.count, 1);
	cr_assert_eq(T.bytes, 16 * PG);
	uint32_t s2;
	cr_assert_eq(uvshim_pins_reserve(&T, UVSHIM_PIN_USER, PG, PG, UVSHIM_PIN_DEVICE_READ, &s2), -UVSHIM_EPINLIMIT);
	uvshim_pins_abort(&T, slot);
	cr_assert_eq(T.count, 0);
	cr_assert_eq(T.bytes, 0);
	cr_assert_eq(uvshim_pins_reserve(&T, UVSHIM_PIN_USER, PG, PG, UVSHIM_PIN_DEVICE_READ, &s2), 0);
}

Test(pin_table, a_reserved_slot_is_not_found_by_handle)
{
	uint32_t slot;
	cr_assert_eq(uvshim_pins_reserve(&T, UVSHIM_PIN_USER, PG, PG, UVSHIM_PIN_DEVICE_READ, &slot), 0);
	cr_assert_eq(uvshim_pins_lookup(&T, uvshim_pins_handle(&T, slot), UVSHIM_PIN_USER, NULL, NULL), -UVSHIM_ENOENT);
}

Test(pin_table, the_count_limit_holds_with_free_storage_left)
{
	struct uvshim_seg s[4];
	for (int i = 0; i < 4; i++)
		reserve_commit(PG, PG, 0x100000 * (i + 1), &s[i]);
	uint32_t slot;
	cr_assert_eq(uvshim_pins_reserve(&T, UVSHIM_PIN_USER, PG, PG, UVSHIM_PIN_DEVICE_READ, &slot), -UVSHIM_ENOSPC);
}

Test(pin_table, a_handle_changes_when_its_slot_is_reused)
{
	struct uvshim_seg s;
	uint32_t slot = reserve_commit(PG, PG, 0x100000, &s);
	uint64_t h1 = uvshim_pins_handle(&T, slot);
	cr_assert_eq(uvshim_pins_release(&T, h1, UVSHIM_PIN_USER, NULL, NULL), 0);
	T.next = slot;
	struct uvshim_seg s2;
	uint32_t slot2 = reserve_commit(PG, PG, 0x100000, &s2);
	cr_assert_eq(slot, slot2);
	cr_assert_neq(uvshim_pins_handle(&T, slot2), h1);
	cr_assert_eq(uvshim_pins_lookup(&T, h1, UVSHIM_PIN_USER, NULL, NULL), -UVSHIM_ENOENT);
}

Test(pin_table, lookup_by_handle_checks_the_kind)
{
	struct uvshim_seg s;
	uint32_t slot = reserve_commit(PG, PG, 0x100000, &s);
	uint64_t h = uvshim_pins_handle(&T, slot);
	const struct uvshim_pin_entry *e;
	cr_assert_eq(uvshim_pins_lookup(&T, h, UVSHIM_PIN_USER, &e, NULL), 0);
	cr_assert_eq(e->va, PG);
	cr_assert_eq(uvshim_pins_lookup(&T, h, UVSHIM_PIN_DMA, &e, NULL), -UVSHIM_ENOENT);
}

Test(pin_table, lookup_of_a_slot_past_the_limit_is_enoent)
{
	cr_assert_eq(uvshim_pins_lookup(&T, (1ull << 32) | 4, UVSHIM_PIN_USER, NULL, NULL), -UVSHIM_ENOENT);
	cr_assert_eq(uvshim_pins_lookup(&T, (1ull << 32) | 0xffffffffu, UVSHIM_PIN_USER, NULL, NULL), -UVSHIM_ENOENT);
}

Test(pin_table, commit_of_a_slot_that_is_not_reserved_is_einval)
{
	struct uvshim_seg s = {0x100000, PG};
	cr_assert_eq(uvshim_pins_commit(&T, 0, &s, 1, NULL), -UVSHIM_EINVAL);
	cr_assert_eq(uvshim_pins_commit(&T, 99, &s, 1, NULL), -UVSHIM_EINVAL);
}

Test(pin_table, a_dma_entry_needs_exactly_one_segment)
{
	uint32_t slot;
	cr_assert_eq(uvshim_pins_reserve(&T, UVSHIM_PIN_DMA, 0, 2 * PG, 0, &slot), 0);
	struct uvshim_seg s[2] = {{0x100000, PG}, {0x200000, PG}};
	cr_assert_eq(uvshim_pins_commit(&T, slot, s, 2, NULL), -UVSHIM_EIO);
	struct uvshim_seg one = {0x100000, 2 * PG};
	cr_assert_eq(uvshim_pins_commit(&T, slot, &one, 1, NULL), 0);
}

Test(pin_table, a_dma_reservation_with_a_va_or_flags_is_einval)
{
	uint32_t slot;
	cr_assert_eq(uvshim_pins_reserve(&T, UVSHIM_PIN_DMA, PG, PG, 0, &slot), -UVSHIM_EINVAL);
	cr_assert_eq(uvshim_pins_reserve(&T, UVSHIM_PIN_DMA, 0, PG, 1, &slot), -UVSHIM_EINVAL);
}

Test(pin_table, a_segment_whose_end_wraps_is_refused)
{
	uint32_t slot;
	cr_assert_eq(uvshim_pins_reserve(&T, UVSHIM_PIN_USER, PG, 2 * PG, UVSHIM_PIN_DEVICE_READ, &slot), 0);
	struct uvshim_seg s = {0xffffffffffffc000ull, 2 * PG};
	cr_assert_eq(uvshim_pins_commit(&T, slot, &s, 1, NULL), -UVSHIM_EIO);
}

Test(pin_table, an_iova_touching_but_not_overlapping_another_pin_is_accepted)
{
	struct uvshim_seg a, b;
	reserve_commit(PG, 2 * PG, 0x100000, &a);
	reserve_commit(PG, PG, 0x100000 + 2 * PG, &b);
	cr_assert_eq(T.count, 2);
}

Test(pin_table, release_all_calls_back_for_every_committed_entry_only)
{
	struct uvshim_seg s[3];
	reserve_commit(PG, PG, 0x100000, &s[0]);
	reserve_commit(PG, PG, 0x200000, &s[1]);
	uint32_t slot;
	cr_assert_eq(uvshim_pins_reserve(&T, UVSHIM_PIN_DMA, 0, PG, 0, &slot), 0);
	s[2] = (struct uvshim_seg){0x300000, PG};
	cr_assert_eq(uvshim_pins_commit(&T, slot, &s[2], 1, NULL), 0);
	uint32_t pending;
	cr_assert_eq(uvshim_pins_reserve(&T, UVSHIM_PIN_USER, PG, PG, UVSHIM_PIN_DEVICE_READ, &pending), 0);
	released = 0;
	cr_assert_eq(uvshim_pins_release_all(&T, count_release, NULL), 3);
	cr_assert_eq(released, 3);
	cr_assert_eq(T.count, 0);
	cr_assert_eq(T.bytes, 0);
}
