/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The owner state machine: closed -> owned -> dying -> resetting -> closed, one owner,
 * root or the configured group, and what owner death does, in which order. */
#include "tests/shim-kext/support/fixture.h"

TestSuite(owner, .init = fx_setup_closed, .fini = fx_teardown);

static const struct uvshim_cred root = {.uid = 0, .is_member = fx_never_member};
static const struct uvshim_cred staff = {.uid = 501, .is_member = fx_member_of_600};
static const struct uvshim_cred stranger = {.uid = 502, .is_member = fx_never_member};

static void own_with_pins(void)
{
	cr_assert_eq(fake_open_hello(F), 0);
	cr_assert_eq(fake_pin(F, UVA, PG, UVSHIM_PIN_DEVICE_READ, NULL), 0);
	cr_assert_eq(fake_pin(F, UVA + PG, 2 * PG, UVSHIM_PIN_DEVICE_WRITE, NULL), 0);
	cr_assert_eq(fake_dma(F, PG, 4096, NULL), 0);
	struct uvshim_irq_req a = {.vector = 3, .cookie = 1};
	cr_assert_eq(fx_call(UVSHIM_SEL_IRQ_ARM, &a, NULL), 0);
	fake_clear_log(F);
}

Test(owner, a_new_device_is_closed)
{
	cr_assert_eq(F->dev.state, UVSHIM_STATE_CLOSED);
}

Test(owner, root_becomes_the_owner)
{
	cr_assert_eq(uvshim_owner_open(&F->dev, &root, &F->owner_a), 0);
	cr_assert_eq(F->dev.state, UVSHIM_STATE_OWNED);
	cr_assert_eq(F->dev.owner, &F->owner_a);
}

Test(owner, a_member_of_the_configured_group_may_open)
{
	cr_assert_eq(uvshim_owner_open(&F->dev, &staff, &F->owner_a), 0);
}

Test(owner, a_user_outside_the_group_is_eacces)
{
	cr_assert_eq(uvshim_owner_open(&F->dev, &stranger, &F->owner_a), -UVSHIM_EACCES);
	cr_assert_eq(F->dev.state, UVSHIM_STATE_CLOSED);
}

Test(owner, without_a_configured_group_only_root_may_open)
{
	F->dev.cfg.group_set = false;
	cr_assert_eq(uvshim_owner_open(&F->dev, &staff, &F->owner_a), -UVSHIM_EACCES);
	cr_assert_eq(uvshim_owner_open(&F->dev, &root, &F->owner_a), 0);
}

Test(owner, a_second_opener_is_ebusy)
{
	cr_assert_eq(uvshim_owner_open(&F->dev, &root, &F->owner_a), 0);
	cr_assert_eq(uvshim_owner_open(&F->dev, &root, &F->owner_b), -UVSHIM_EBUSY);
	cr_assert_eq(F->dev.owner, &F->owner_a);
}

Test(owner, a_second_opener_without_rights_is_eacces_not_ebusy)
{
	cr_assert_eq(uvshim_owner_open(&F->dev, &root, &F->owner_a), 0);
	cr_assert_eq(uvshim_owner_open(&F->dev, &stranger, &F->owner_b), -UVSHIM_EACCES);
}

Test(owner, open_without_an_owner_token_is_einval)
{
	cr_assert_eq(uvshim_owner_open(&F->dev, &root, NULL), -UVSHIM_EINVAL);
}

Test(owner, calls_from_a_non_owner_are_eperm)
{
	cr_assert_eq(fake_open_hello(F), 0);
	struct uvshim_pin_req r = {.va = UVA, .length = PG, .flags = UVSHIM_PIN_DEVICE_READ};
	struct uvshim_pin_rep rep;
	cr_assert_eq(fake_call(F, &F->owner_b, UVSHIM_SEL_PIN, &r, &rep), -UVSHIM_EPERM);
	cr_assert_eq(fake_call(F, NULL, UVSHIM_SEL_PIN, &r, &rep), -UVSHIM_EPERM);
}

Test(owner, calls_on_a_closed_device_are_eperm)
{
	struct uvshim_reset_req r = {0};
	cr_assert_eq(fake_call(F, &F->owner_a, UVSHIM_SEL_RESET, &r, NULL), -UVSHIM_EPERM);
}

Test(owner, release_by_a_non_owner_is_eperm_and_changes_nothing)
{
	own_with_pins();
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_b), -UVSHIM_EPERM);
	cr_assert_eq(F->dev.state, UVSHIM_STATE_OWNED);
	cr_assert_eq(F->nlog, 0);
}

Test(owner, release_of_a_closed_device_is_eperm)
{
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), -UVSHIM_EPERM);
}

Test(owner, death_disables_bus_mastering_then_resets_then_unpins_in_that_order)
{
	own_with_pins();
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), 0);
	int disarm = fake_find(F, EV_IRQ_DISARM, 0);
	int bm = fake_find(F, EV_BM_OFF, 0);
	int rst = fake_find(F, EV_RESET, 0);
	int unpin = fake_find(F, EV_UNPIN, 0);
	int dfree = fake_find(F, EV_DMA_FREE, 0);
	cr_assert(disarm >= 0 && bm >= 0 && rst >= 0 && unpin >= 0 && dfree >= 0);
	cr_assert_lt(disarm, bm);
	cr_assert_lt(bm, rst);
	cr_assert_lt(rst, unpin);
	cr_assert_lt(rst, dfree);
	cr_assert_eq(fake_count(F, EV_BM_ON), 0, "bus mastering stays off until the next owner");
}

Test(owner, death_passes_through_dying_and_resetting)
{
	own_with_pins();
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), 0);
	cr_assert_eq(F->log[fake_find(F, EV_BM_OFF, 0)].state, UVSHIM_STATE_DYING);
	cr_assert_eq(F->log[fake_find(F, EV_RESET, 0)].state, UVSHIM_STATE_RESETTING);
	cr_assert_eq(F->log[fake_find(F, EV_UNPIN, 0)].state, UVSHIM_STATE_RESETTING);
	cr_assert_eq(F->dev.state, UVSHIM_STATE_CLOSED);
	cr_assert_null(F->dev.owner);
}

Test(owner, death_releases_every_pin_and_dma_buffer)
{
	own_with_pins();
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), 0);
	cr_assert_eq(fake_count(F, EV_UNPIN), 2);
	cr_assert_eq(fake_count(F, EV_DMA_FREE), 1);
	cr_assert_eq(F->live_pins, 0);
	cr_assert_eq(F->live_dma, 0);
	cr_assert_eq(F->dev.pins.count, 0);
	cr_assert_eq(F->dev.pins.bytes, 0);
}

Test(owner, death_with_the_table_full_releases_all_of_it)
{
	cr_assert_eq(fake_open_hello(F), 0);
	for (uint32_t i = 0; i < 64; i++)
		cr_assert_eq(fake_pin(F, UVA + i * PG, PG, UVSHIM_PIN_DEVICE_READ, NULL), 0);
	cr_assert_eq(fake_pin(F, UVA, PG, UVSHIM_PIN_DEVICE_READ, NULL), -UVSHIM_ENOSPC);
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), 0);
	cr_assert_eq(F->live_pins, 0);
}

Test(owner, the_next_owner_may_open_after_death_and_must_say_hello_again)
{
	own_with_pins();
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), 0);
	cr_assert_eq(uvshim_owner_open(&F->dev, &root, &F->owner_b), 0);
	struct uvshim_reset_req r = {0};
	cr_assert_eq(fake_call(F, &F->owner_b, UVSHIM_SEL_RESET, &r, NULL), -UVSHIM_ENOHELLO);
	cr_assert_eq(F->dev.opens, 2);
}

static void open_during_teardown(struct fake *f, enum fake_event ev)
{
	if (ev == EV_RESET)
		f->hook_rc = uvshim_owner_open(&f->dev, &root, &f->owner_b);
}

Test(owner, an_open_during_teardown_is_ebusy)
{
	own_with_pins();
	F->hook = open_during_teardown;
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), 0);
	cr_assert_eq(F->hook_rc, -UVSHIM_EBUSY);
	cr_assert_eq(F->dev.state, UVSHIM_STATE_CLOSED);
}

static void call_during_teardown(struct fake *f, enum fake_event ev)
{
	if (ev == EV_BM_OFF) {
		struct uvshim_pin_req r = {.va = UVA, .length = PG, .flags = UVSHIM_PIN_DEVICE_READ};
		struct uvshim_pin_rep rep;
		f->hook_rc = fake_call(f, &f->owner_a, UVSHIM_SEL_PIN, &r, &rep);
	}
}

Test(owner, a_call_during_teardown_is_ebusy)
{
	own_with_pins();
	F->hook = call_during_teardown;
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), 0);
	cr_assert_eq(F->hook_rc, -UVSHIM_EBUSY);
	cr_assert_eq(F->live_pins, 0);
}

static void release_during_teardown(struct fake *f, enum fake_event ev)
{
	if (ev == EV_RESET)
		f->hook_rc = uvshim_owner_release(&f->dev, &f->owner_a);
}

Test(owner, a_second_release_during_teardown_is_ebusy)
{
	own_with_pins();
	F->hook = release_during_teardown;
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), 0);
	cr_assert_eq(F->hook_rc, -UVSHIM_EBUSY);
	cr_assert_eq(fake_count(F, EV_RESET), 1);
}

Test(owner, a_failed_bus_master_disable_still_resets_and_unpins_but_reports_eio)
{
	own_with_pins();
	F->fail_bm_off = -UVSHIM_EIO;
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), -UVSHIM_EIO);
	cr_assert_eq(fake_count(F, EV_RESET), 1);
	cr_assert_eq(F->live_pins, 0);
	cr_assert_eq(F->dev.state, UVSHIM_STATE_CLOSED);
	cr_assert_not(F->dev.quarantined);
}

Test(owner, a_failed_reset_after_bus_master_off_still_unpins)
{
	own_with_pins();
	F->fail_reset = -UVSHIM_EIO;
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), -UVSHIM_EIO);
	cr_assert_eq(F->live_pins, 0);
	cr_assert_eq(F->live_dma, 0);
}

Test(owner, a_device_that_can_be_neither_quiesced_nor_reset_keeps_its_pins_and_refuses_opens)
{
	own_with_pins();
	F->fail_bm_off = -UVSHIM_EIO;
	F->fail_reset = -UVSHIM_EIO;
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), -UVSHIM_EIO);
	cr_assert(F->dev.quarantined);
	cr_assert_eq(fake_count(F, EV_UNPIN), 0, "the device may still write those pages");
	cr_assert_eq(F->live_pins, 2);
	cr_assert_eq(F->dev.state, UVSHIM_STATE_CLOSED);
	cr_assert_eq(uvshim_owner_open(&F->dev, &root, &F->owner_b), -UVSHIM_EIO);
}

Test(owner, a_removed_device_refuses_calls_with_enodev)
{
	own_with_pins();
	uvshim_dev_gone(&F->dev);
	cr_assert_eq(fake_pin(F, UVA, PG, UVSHIM_PIN_DEVICE_READ, NULL), -UVSHIM_ENODEV);
	struct uvshim_memory m;
	cr_assert_eq(uvshim_memory_for_type(&F->dev, &F->owner_a, UVSHIM_MEMTYPE(UVSHIM_MEMTYPE_WINDOW, 0), &m),
		     -UVSHIM_ENODEV);
}

Test(owner, death_after_removal_skips_the_hardware_and_unpins)
{
	own_with_pins();
	uvshim_dev_gone(&F->dev);
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), 0);
	cr_assert_eq(fake_count(F, EV_BM_OFF), 0);
	cr_assert_eq(fake_count(F, EV_RESET), 0);
	cr_assert_eq(F->live_pins, 0);
	cr_assert_eq(F->live_dma, 0);
	cr_assert_eq(uvshim_owner_open(&F->dev, &root, &F->owner_a), -UVSHIM_ENODEV);
}

Test(owner, attach_refuses_a_platform_without_every_callback)
{
	struct uvshim_info_rep i = F->dev.info;
	struct uvshim_config c = F->dev.cfg;
	struct uvshim_platform p = F->dev.plat;
	struct uvshim_dev d;
	p.reset_function = NULL;
	cr_assert_eq(uvshim_dev_init(&d, &i, &c, &p, F->storage, F->capacity), -UVSHIM_EINVAL);
}

Test(owner, attach_refuses_more_pins_than_the_storage_holds)
{
	struct uvshim_info_rep i = F->dev.info;
	struct uvshim_config c = F->dev.cfg;
	struct uvshim_platform p = F->dev.plat;
	struct uvshim_dev d;
	c.max_pins = F->capacity + 1;
	cr_assert_eq(uvshim_dev_init(&d, &i, &c, &p, F->storage, F->capacity), -UVSHIM_EINVAL);
}

Test(owner, attach_applies_default_limits)
{
	struct uvshim_info_rep i = F->dev.info;
	struct uvshim_config c = {0};
	struct uvshim_platform p = F->dev.plat;
	struct uvshim_pin_entry *big = calloc(UVSHIM_DEFAULT_MAX_PINS, sizeof(*big));
	struct uvshim_dev d;
	cr_assert_eq(uvshim_dev_init(&d, &i, &c, &p, big, UVSHIM_DEFAULT_MAX_PINS), 0);
	cr_assert_eq(d.pins.max_pins, UVSHIM_DEFAULT_MAX_PINS);
	cr_assert_eq(d.pins.max_bytes, UVSHIM_DEFAULT_MAX_PINNED_BYTES);
	free(big);
}
