/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Guests: the owner's consent.  GRANT lets a process map exactly the UAR pages it was
 * given; PIN_FOR wires a guest task's memory on the owner's account; REVOKE and the
 * owner's death take the mappings back before the function is reset. */
#include "tests/shim-kext/support/fixture.h"

TestSuite(guest, .init = fx_setup, .fini = fx_teardown);

#define PID_A 4242u
#define PID_B 4343u

static int grant(uint32_t pid, uint32_t index)
{
	struct uvshim_grant_req r = {.pid = pid, .uar_index = index};
	return fx_call(UVSHIM_SEL_GRANT, &r, NULL);
}

static int revoke(uint32_t pid, uint32_t index)
{
	struct uvshim_grant_req r = {.pid = pid, .uar_index = index};
	return fx_call(UVSHIM_SEL_REVOKE, &r, NULL);
}

/* A guest declares a write-combining window over UAR host page `index`. */
static int guest_map(const void *guest, uint32_t index, struct uvshim_map_bar_rep *rep)
{
	struct uvshim_map_bar_req r = {.bar = 0, .cache = UVSHIM_CACHE_WC,
				       .offset = F->dev.info.uar_offset + index * PG, .length = PG};
	struct uvshim_map_bar_rep tmp;
	return fake_call(F, guest, UVSHIM_SEL_MAP_BAR, &r, rep ? rep : &tmp);
}

static int pin_for(uint32_t pid, uint64_t va, uint64_t len, struct uvshim_pin_rep *rep)
{
	struct uvshim_pin_for_req r = {.va = va, .length = len, .flags = UVSHIM_PIN_DEVICE_WRITE, .pid = pid};
	struct uvshim_pin_rep tmp;
	return fx_call(UVSHIM_SEL_PIN_FOR, &r, rep ? rep : &tmp);
}

Test(guest, a_guest_maps_the_page_granted_to_its_pid)
{
	cr_assert_eq(grant(PID_A, 3), 0);
	cr_assert_eq(fake_guest_open_hello(F, &F->guest_a, PID_A), 0);
	struct uvshim_map_bar_rep rep;
	cr_assert_eq(guest_map(&F->guest_a, 3, &rep), 0);
	struct uvshim_memory m;
	cr_assert_eq(uvshim_memory_for_type(&F->dev, &F->guest_a, rep.memory_type, &m), 0);
	cr_assert_eq(m.kind, UVSHIM_MEMTYPE_WINDOW);
	cr_assert_eq(m.cache, UVSHIM_CACHE_WC);
	cr_assert_eq(m.offset, F->dev.info.uar_offset + 3 * PG);
	cr_assert_eq(m.length, PG);
}

Test(guest, a_guest_cannot_map_an_ungranted_page)
{
	cr_assert_eq(grant(PID_A, 3), 0);
	cr_assert_eq(fake_guest_open_hello(F, &F->guest_a, PID_A), 0);
	cr_assert_eq(guest_map(&F->guest_a, 4, NULL), -UVSHIM_EPERM);
	/* nor a window that runs from its page into the next */
	struct uvshim_map_bar_req r = {.cache = UVSHIM_CACHE_WC, .offset = F->dev.info.uar_offset + 3 * PG,
				       .length = 2 * PG};
	struct uvshim_map_bar_rep rep;
	cr_assert_eq(fake_call(F, &F->guest_a, UVSHIM_SEL_MAP_BAR, &r, &rep), -UVSHIM_EPERM);
}

Test(guest, a_page_granted_to_another_pid_is_not_mappable)
{
	cr_assert_eq(grant(PID_B, 5), 0);
	cr_assert_eq(fake_guest_open_hello(F, &F->guest_a, PID_A), 0);
	cr_assert_eq(guest_map(&F->guest_a, 5, NULL), -UVSHIM_EPERM);
}

Test(guest, a_page_belongs_to_one_pid)
{
	cr_assert_eq(grant(PID_A, 5), 0);
	cr_assert_eq(grant(PID_A, 5), 0, "granting again to the same pid is harmless");
	cr_assert_eq(grant(PID_B, 5), -UVSHIM_EBUSY);
}

Test(guest, a_guest_cannot_map_the_init_segment_even_uncached)
{
	cr_assert_eq(fake_guest_open_hello(F, &F->guest_a, PID_A), 0);
	struct uvshim_map_bar_req r = {.cache = UVSHIM_CACHE_UNCACHED, .offset = 0, .length = PG};
	struct uvshim_map_bar_rep rep;
	cr_assert_eq(fake_call(F, &F->guest_a, UVSHIM_SEL_MAP_BAR, &r, &rep), -UVSHIM_EPERM);
}

Test(guest, a_grant_outside_the_uar_region_is_erange)
{
	uint32_t pages = (uint32_t)(F->dev.info.uar_len / PG);
	cr_assert_eq(grant(PID_A, pages), -UVSHIM_ERANGE);
	cr_assert_eq(grant(PID_A, pages - 1), 0);
}

Test(guest, a_guest_gets_eperm_for_owner_calls)
{
	cr_assert_eq(fake_guest_open_hello(F, &F->guest_a, PID_A), 0);
	struct uvshim_pin_req p = {.va = UVA, .length = PG, .flags = UVSHIM_PIN_DEVICE_READ};
	struct uvshim_pin_rep rep;
	cr_assert_eq(fake_call(F, &F->guest_a, UVSHIM_SEL_PIN, &p, &rep), -UVSHIM_EPERM);
	struct uvshim_dma_alloc_req d = {.length = PG, .align = 4096};
	struct uvshim_dma_alloc_rep drep;
	cr_assert_eq(fake_call(F, &F->guest_a, UVSHIM_SEL_DMA_ALLOC, &d, &drep), -UVSHIM_EPERM);
	struct uvshim_reset_req rs = {0};
	cr_assert_eq(fake_call(F, &F->guest_a, UVSHIM_SEL_RESET, &rs, NULL), -UVSHIM_EPERM);
	cr_assert_eq(F->live_pins, 0);
	cr_assert_eq(F->live_dma, 0);
	cr_assert_eq(F->resets, 0);
}

Test(guest, a_non_owner_cannot_grant_or_pin_for)
{
	cr_assert_eq(fake_guest_open_hello(F, &F->guest_a, PID_A), 0);
	struct uvshim_grant_req g = {.pid = PID_A, .uar_index = 1};
	cr_assert_eq(fake_call(F, &F->guest_a, UVSHIM_SEL_GRANT, &g, NULL), -UVSHIM_EPERM);
	cr_assert_eq(fake_call(F, &F->owner_b, UVSHIM_SEL_GRANT, &g, NULL), -UVSHIM_EPERM);
	struct uvshim_pin_for_req p = {.va = UVA, .length = PG, .flags = UVSHIM_PIN_DEVICE_READ, .pid = PID_A};
	struct uvshim_pin_rep rep;
	cr_assert_eq(fake_call(F, &F->guest_a, UVSHIM_SEL_PIN_FOR, &p, &rep), -UVSHIM_EPERM);
	cr_assert_eq(fake_call(F, &F->owner_b, UVSHIM_SEL_PIN_FOR, &p, &rep), -UVSHIM_EPERM);
	cr_assert_eq(fake_count(F, EV_PIN_FOR), 0);
	cr_assert_eq(guest_map(&F->guest_a, 1, NULL), -UVSHIM_EPERM, "no grant was recorded");
}

Test(guest, a_guest_needs_an_owner)
{
	const struct uvshim_cred root = {.uid = 0, .is_member = fx_never_member};
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), 0);
	cr_assert_eq(uvshim_guest_open(&F->dev, &root, &F->guest_a, PID_A), -UVSHIM_EPERM);
}

Test(guest, a_guest_needs_the_owners_credentials)
{
	const struct uvshim_cred stranger = {.uid = 502, .is_member = fx_never_member};
	cr_assert_eq(uvshim_guest_open(&F->dev, &stranger, &F->guest_a, PID_A), -UVSHIM_EACCES);
}

Test(guest, a_guest_must_say_hello_first)
{
	const struct uvshim_cred root = {.uid = 0, .is_member = fx_never_member};
	cr_assert_eq(grant(PID_A, 3), 0);
	cr_assert_eq(uvshim_guest_open(&F->dev, &root, &F->guest_a, PID_A), 0);
	cr_assert_eq(guest_map(&F->guest_a, 3, NULL), -UVSHIM_ENOHELLO);
}

Test(guest, pin_for_wires_the_guests_task_on_the_owners_account)
{
	cr_assert_eq(fake_guest_open_hello(F, &F->guest_a, PID_A), 0);
	struct uvshim_pin_rep rep;
	cr_assert_eq(pin_for(PID_A, UVA, 2 * PG, &rep), 0);
	cr_assert_eq(F->pin_for_guest, &F->guest_a);
	cr_assert_eq(fake_count(F, EV_PIN_FOR), 1);
	cr_assert_eq(rep.nseg_total, 1);
	cr_assert_eq(rep.seg[0].len, 2 * PG);
	cr_assert_eq(F->dev.pins.bytes, 2 * PG);
	cr_assert_eq(fx_unpin(rep.handle), 0, "the owner unpins it like its own");
	cr_assert_eq(F->live_pins, 0);
}

Test(guest, pin_for_a_pid_without_a_guest_connection_is_enoent)
{
	cr_assert_eq(pin_for(PID_B, UVA, PG, NULL), -UVSHIM_ENOENT);
	cr_assert_eq(fake_count(F, EV_PIN_FOR), 0);
	cr_assert_eq(F->dev.pins.count, 0);
}

Test(guest, pin_for_is_charged_to_the_owners_byte_limit)
{
	fx_teardown();
	fx_new(PG, 64, 0, 4 * PG);
	cr_assert_eq(fake_open_hello(F), 0);
	cr_assert_eq(fake_guest_open_hello(F, &F->guest_a, PID_A), 0);
	cr_assert_eq(fake_pin(F, UVA, 2 * PG, UVSHIM_PIN_DEVICE_READ, NULL), 0);
	cr_assert_eq(pin_for(PID_A, UVA, 2 * PG, NULL), 0);
	cr_assert_eq(pin_for(PID_A, UVA + 2 * PG, PG, NULL), -UVSHIM_EPINLIMIT);
	cr_assert_eq(fake_count(F, EV_PIN_FOR), 1);
}

Test(guest, pin_for_checks_the_range_like_pin)
{
	cr_assert_eq(fake_guest_open_hello(F, &F->guest_a, PID_A), 0);
	cr_assert_eq(pin_for(PID_A, UVA + 100, PG, NULL), -UVSHIM_EINVAL);
	cr_assert_eq(pin_for(PID_A, UVSHIM_USER_VA_LIMIT, PG, NULL), -UVSHIM_EFAULT);
	cr_assert_eq(pin_for(0, UVA, PG, NULL), -UVSHIM_EINVAL);
}

Test(guest, revoke_unmaps_the_guests_window_on_that_page)
{
	cr_assert_eq(grant(PID_A, 3), 0);
	cr_assert_eq(grant(PID_A, 4), 0);
	cr_assert_eq(fake_guest_open_hello(F, &F->guest_a, PID_A), 0);
	struct uvshim_map_bar_rep w3, w4;
	cr_assert_eq(guest_map(&F->guest_a, 3, &w3), 0);
	cr_assert_eq(guest_map(&F->guest_a, 4, &w4), 0);
	cr_assert_eq(revoke(PID_A, 3), 0);
	cr_assert_eq(F->revoked, 1);
	int i = fake_find(F, EV_REVOKE, 0);
	cr_assert_geq(i, 0);
	cr_assert_eq(F->log[i].arg, w3.memory_type);
	struct uvshim_memory m;
	cr_assert_eq(uvshim_memory_for_type(&F->dev, &F->guest_a, w3.memory_type, &m), -UVSHIM_ENOENT);
	cr_assert_eq(uvshim_memory_for_type(&F->dev, &F->guest_a, w4.memory_type, &m), 0);
	cr_assert_eq(guest_map(&F->guest_a, 3, NULL), -UVSHIM_EPERM);
	cr_assert_eq(revoke(PID_A, 3), -UVSHIM_ENOENT);
}

Test(guest, owner_close_revokes_every_guest_mapping_before_the_reset)
{
	cr_assert_eq(grant(PID_A, 3), 0);
	cr_assert_eq(grant(PID_B, 7), 0);
	cr_assert_eq(fake_guest_open_hello(F, &F->guest_a, PID_A), 0);
	cr_assert_eq(fake_guest_open_hello(F, &F->guest_b, PID_B), 0);
	struct uvshim_map_bar_rep wa, wb;
	cr_assert_eq(guest_map(&F->guest_a, 3, &wa), 0);
	cr_assert_eq(guest_map(&F->guest_b, 7, &wb), 0);
	cr_assert_eq(pin_for(PID_A, UVA, PG, NULL), 0);
	fake_clear_log(F);
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), 0);
	cr_assert_eq(F->revoked, 2);
	int first = fake_find(F, EV_REVOKE, 0), second = fake_find(F, EV_REVOKE, (uint32_t)first + 1);
	int bm = fake_find(F, EV_BM_OFF, 0), reset = fake_find(F, EV_RESET, 0);
	cr_assert(first >= 0 && second > first && bm > second && reset > bm,
		  "revoke %d %d, bus master off %d, reset %d", first, second, bm, reset);
	cr_assert_eq(F->log[first].state, UVSHIM_STATE_DYING);
	cr_assert_eq(F->live_pins, 0, "the guest's pin went with the owner's");
	/* the guests are orphans now: nothing they ask is done */
	struct uvshim_memory m;
	cr_assert_eq(uvshim_memory_for_type(&F->dev, &F->guest_a, wa.memory_type, &m), -UVSHIM_EPERM);
	cr_assert_eq(guest_map(&F->guest_b, 7, NULL), -UVSHIM_EPERM);
}

Test(guest, an_orphan_is_no_guest_of_the_next_owner)
{
	cr_assert_eq(fake_guest_open_hello(F, &F->guest_a, PID_A), 0);
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), 0);
	cr_assert_eq(fake_open_hello(F), 0);
	cr_assert_eq(grant(PID_A, 3), 0);
	cr_assert_eq(guest_map(&F->guest_a, 3, NULL), -UVSHIM_EPERM);
	cr_assert_eq(pin_for(PID_A, UVA, PG, NULL), -UVSHIM_ENOENT);
	cr_assert_eq(uvshim_guest_release(&F->dev, &F->guest_a), 0);
	cr_assert_eq(fake_guest_open_hello(F, &F->guest_a, PID_A), 0, "reopened, it is a guest again");
	cr_assert_eq(guest_map(&F->guest_a, 3, NULL), 0);
}

Test(guest, grants_and_guests_are_bounded)
{
	const struct uvshim_cred root = {.uid = 0, .is_member = fx_never_member};
	for (uint32_t i = 0; i < UVSHIM_MAX_GRANTS; i++)
		cr_assert_eq(grant(PID_A, i), 0);
	cr_assert_eq(grant(PID_A, UVSHIM_MAX_GRANTS), -UVSHIM_ENOSPC);
	static char tokens[UVSHIM_MAX_GUESTS + 1];
	for (uint32_t i = 0; i < UVSHIM_MAX_GUESTS; i++)
		cr_assert_eq(uvshim_guest_open(&F->dev, &root, &tokens[i], 100 + i), 0);
	cr_assert_eq(uvshim_guest_open(&F->dev, &root, &tokens[UVSHIM_MAX_GUESTS], 999), -UVSHIM_ENOSPC);
}

Test(guest, a_guest_holds_at_most_its_window_count)
{
	cr_assert_eq(fake_guest_open_hello(F, &F->guest_a, PID_A), 0);
	for (uint32_t i = 0; i <= UVSHIM_MAX_GUEST_WINDOWS; i++)
		cr_assert_eq(grant(PID_A, i), 0);
	for (uint32_t i = 0; i < UVSHIM_MAX_GUEST_WINDOWS; i++)
		cr_assert_eq(guest_map(&F->guest_a, i, NULL), 0);
	cr_assert_eq(guest_map(&F->guest_a, UVSHIM_MAX_GUEST_WINDOWS, NULL), -UVSHIM_ENOSPC);
}

Test(guest, the_owner_token_cannot_open_as_its_own_guest)
{
	const struct uvshim_cred root = {.uid = 0, .is_member = fx_never_member};
	cr_assert_eq(uvshim_guest_open(&F->dev, &root, &F->owner_a, PID_A), -UVSHIM_EPERM);
}

Test(guest, a_guest_closing_its_connection_loses_its_mappings)
{
	cr_assert_eq(grant(PID_A, 3), 0);
	cr_assert_eq(fake_guest_open_hello(F, &F->guest_a, PID_A), 0);
	struct uvshim_map_bar_rep w;
	cr_assert_eq(guest_map(&F->guest_a, 3, &w), 0);
	cr_assert_eq(uvshim_guest_release(&F->dev, &F->guest_a), 0);
	cr_assert_eq(F->revoked, 1, "a mapping left behind could not be revoked later");
	int i = fake_find(F, EV_REVOKE, 0);
	cr_assert_geq(i, 0);
	cr_assert_eq(F->log[i].arg, w.memory_type);
	cr_assert_eq(uvshim_is_guest(&F->dev, &F->guest_a), false);
}

Test(guest, a_guests_unmap_forgets_its_own_window_not_the_owners)
{
	/* Both hold a window in slot 0 of their own table: the same memory type number. */
	struct uvshim_map_bar_req r = {.bar = 0, .cache = UVSHIM_CACHE_UNCACHED, .offset = 0, .length = PG};
	struct uvshim_map_bar_rep ow, gw;
	cr_assert_eq(fx_call(UVSHIM_SEL_MAP_BAR, &r, &ow), 0);
	cr_assert_eq(grant(PID_A, 3), 0);
	cr_assert_eq(fake_guest_open_hello(F, &F->guest_a, PID_A), 0);
	cr_assert_eq(guest_map(&F->guest_a, 3, &gw), 0);
	cr_assert_eq(gw.memory_type, ow.memory_type);

	struct uvshim_unmap_bar_req u = {.memory_type = gw.memory_type};
	cr_assert_eq(fake_call(F, &F->guest_a, UVSHIM_SEL_UNMAP_BAR, &u, NULL), 0);
	struct uvshim_memory m;
	cr_assert_eq(uvshim_memory_for_type(&F->dev, &F->guest_a, gw.memory_type, &m), -UVSHIM_ENOENT);
	cr_assert_eq(uvshim_memory_for_type(&F->dev, &F->owner_a, ow.memory_type, &m), 0);
	cr_assert_eq(m.offset, 0);
	cr_assert_eq(fake_call(F, &F->guest_a, UVSHIM_SEL_UNMAP_BAR, &u, NULL), -UVSHIM_ENOENT);
}

/* A guest maps its window, then UNMAP_BARs it: the live mapping must go at once, or
 * nothing -- not REVOKE, not the owner's death -- could find it again. */
Test(guest, a_guests_unmap_revokes_its_live_mapping_so_revoke_and_owner_death_leave_none)
{
	cr_assert_eq(grant(PID_A, 3), 0);
	cr_assert_eq(fake_guest_open_hello(F, &F->guest_a, PID_A), 0);
	struct uvshim_map_bar_rep w;
	cr_assert_eq(guest_map(&F->guest_a, 3, &w), 0);
	struct uvshim_memory m;
	cr_assert_eq(uvshim_memory_for_type(&F->dev, &F->guest_a, w.memory_type, &m), 0, "mapped in its task");
	fake_clear_log(F);
	struct uvshim_unmap_bar_req u = {.memory_type = w.memory_type};
	cr_assert_eq(fake_call(F, &F->guest_a, UVSHIM_SEL_UNMAP_BAR, &u, NULL), 0);
	cr_assert_eq(F->revoked, 1, "the guest's UNMAP_BAR left its mapping live");
	int i = fake_find(F, EV_REVOKE, 0);
	cr_assert_geq(i, 0);
	cr_assert_eq(F->log[i].arg, w.memory_type);
	/* nothing of it left for the owner's REVOKE or death to miss */
	cr_assert_eq(revoke(PID_A, 3), 0);
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), 0);
	cr_assert_eq(F->revoked, 1);
}
