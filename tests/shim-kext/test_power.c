/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Sleep and wake (shim-kext/core/power.c): idle sleep refused while an owner holds the
 * function; a forced sleep makes the device gone at once and names the vectors through
 * which to tell the owner; after wake the function opens again once that owner closed. */
#include "tests/shim-kext/support/fixture.h"

TestSuite(power, .init = fx_setup_closed, .fini = fx_teardown);

static const struct uvshim_cred root = {.uid = 0, .is_member = fx_never_member};

static void own_with_vectors(void)
{
	cr_assert_eq(fake_open_hello(F), 0);
	cr_assert_eq(fake_pin(F, UVA, PG, UVSHIM_PIN_DEVICE_WRITE, NULL), 0);
	struct uvshim_irq_req a = {.vector = 1, .cookie = 11}, b = {.vector = 3, .cookie = 33};
	cr_assert_eq(fx_call(UVSHIM_SEL_IRQ_ARM, &a, NULL), 0);
	cr_assert_eq(fx_call(UVSHIM_SEL_IRQ_ARM, &b, NULL), 0);
}

Test(power, idle_sleep_is_allowed_without_an_owner_and_refused_with_one)
{
	cr_assert_eq(uvshim_power_may_sleep(&F->dev), 0);
	own_with_vectors();
	cr_assert_eq(uvshim_power_may_sleep(&F->dev), -UVSHIM_EBUSY);
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), 0);
	cr_assert_eq(uvshim_power_may_sleep(&F->dev), 0);
}

Test(power, forced_sleep_makes_the_device_gone_and_names_the_armed_vectors)
{
	struct uvshim_info_req ir = {0, 0};
	struct uvshim_info_rep info;
	uint64_t count = 0, cookie = 0;

	own_with_vectors();
	uint64_t notify = uvshim_power_down(&F->dev);
	cr_assert_eq(notify, (1ull << 1) | (1ull << 3), "the owner is told through each armed vector");
	cr_assert_eq(fx_call(UVSHIM_SEL_DEVICE_INFO, &ir, &info), -UVSHIM_ENODEV, "every call: gone");
	cr_assert_eq(uvshim_irq_fire(&F->dev, 3, &count, &cookie), 1, "the message still goes to the owner");
	cr_assert_eq(cookie, 33);
	cr_assert_eq(uvshim_power_may_sleep(&F->dev), 0);
	cr_assert_eq(uvshim_power_down(&F->dev), 0, "a second power-down tells nobody again");
}

Test(power, the_owner_closing_an_unpowered_function_touches_it_no_more)
{
	own_with_vectors();
	uvshim_power_down(&F->dev);
	fake_clear_log(F);
	uint32_t resets = F->resets;
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), 0);
	cr_assert_eq(F->resets, resets, "no function reset without power");
	cr_assert_eq(fake_count(F, EV_BM_OFF) + fake_count(F, EV_RESET), 0, "no config access without power");
	cr_assert_eq(F->live_pins, 0, "pins unwired: an unpowered function writes nothing");
}

Test(power, after_wake_the_function_opens_again_once_its_owner_closed)
{
	own_with_vectors();
	uvshim_power_down(&F->dev);
	uvshim_power_up(&F->dev);
	cr_assert_eq(uvshim_owner_open(&F->dev, &root, &F->owner_b), -UVSHIM_ENODEV, "still the old owner's");
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), 0);
	cr_assert_eq(uvshim_owner_open(&F->dev, &root, &F->owner_b), 0, "reopened after wake");
}

Test(power, wake_with_no_owner_makes_it_openable_at_once)
{
	uvshim_power_down(&F->dev);
	cr_assert_eq(uvshim_owner_open(&F->dev, &root, &F->owner_a), -UVSHIM_ENODEV, "no power");
	uvshim_power_up(&F->dev);
	cr_assert_eq(uvshim_owner_open(&F->dev, &root, &F->owner_a), 0);
}

Test(power, surprise_removal_stays_gone_after_a_wake)
{
	uvshim_dev_gone(&F->dev);
	cr_assert_eq(uvshim_power_down(&F->dev), 0);
	uvshim_power_up(&F->dev);
	cr_assert_eq(uvshim_owner_open(&F->dev, &root, &F->owner_a), -UVSHIM_ENODEV);
}
