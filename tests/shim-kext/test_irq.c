/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* IRQ_ARM / IRQ_DISARM and the interrupt bookkeeping behind the async notifications. */
#include "tests/shim-kext/support/fixture.h"

TestSuite(irq, .init = fx_setup, .fini = fx_teardown);

static int arm(uint32_t v, uint64_t cookie)
{
	struct uvshim_irq_req r = {.vector = v, .cookie = cookie};
	return fx_call(UVSHIM_SEL_IRQ_ARM, &r, NULL);
}

static int disarm(uint32_t v)
{
	struct uvshim_irq_req r = {.vector = v};
	return fx_call(UVSHIM_SEL_IRQ_DISARM, &r, NULL);
}

Test(irq, arm_enables_the_vector_and_an_interrupt_notifies_with_the_cookie)
{
	cr_assert_eq(arm(2, 0xfeed), 0);
	cr_assert(F->armed_mask_lo & (1u << 2));
	uint64_t count = 0, cookie = 0;
	cr_assert_eq(uvshim_irq_fire(&F->dev, 2, &count, &cookie), 1);
	cr_assert_eq(count, 1);
	cr_assert_eq(cookie, 0xfeed);
	cr_assert_eq(uvshim_irq_fire(&F->dev, 2, &count, &cookie), 1);
	cr_assert_eq(count, 2);
}

Test(irq, an_interrupt_on_an_unarmed_vector_is_counted_but_not_notified)
{
	uint64_t count = 0;
	cr_assert_eq(uvshim_irq_fire(&F->dev, 3, &count, NULL), 0);
	cr_assert_eq(count, 1);
}

Test(irq, disarm_stops_notifications)
{
	cr_assert_eq(arm(1, 5), 0);
	cr_assert_eq(disarm(1), 0);
	cr_assert_eq(F->armed_mask_lo & 2u, 0);
	cr_assert_eq(uvshim_irq_fire(&F->dev, 1, NULL, NULL), 0);
}

Test(irq, disarm_of_an_unarmed_vector_is_enoent)
{
	cr_assert_eq(disarm(4), -UVSHIM_ENOENT);
	cr_assert_eq(fake_count(F, EV_IRQ_DISARM), 0);
}

Test(irq, rearming_replaces_the_cookie)
{
	cr_assert_eq(arm(0, 1), 0);
	cr_assert_eq(arm(0, 2), 0);
	uint64_t cookie = 0;
	cr_assert_eq(uvshim_irq_fire(&F->dev, 0, NULL, &cookie), 1);
	cr_assert_eq(cookie, 2);
}

Test(irq, a_vector_the_device_does_not_have_is_enoent)
{
	cr_assert_eq(arm(8, 0), -UVSHIM_ENOENT, "the fake device has 8 vectors");
	cr_assert_eq(fake_count(F, EV_IRQ_ARM), 0);
}

Test(irq, an_interrupt_on_a_vector_the_device_does_not_have_is_einval)
{
	cr_assert_eq(uvshim_irq_fire(&F->dev, 8, NULL, NULL), -UVSHIM_EINVAL);
}

Test(irq, a_platform_failure_leaves_the_vector_unarmed)
{
	F->fail_irq = -UVSHIM_EIO;
	cr_assert_eq(arm(1, 9), -UVSHIM_EIO);
	cr_assert_eq(uvshim_irq_fire(&F->dev, 1, NULL, NULL), 0);
}

Test(irq, counts_start_from_zero_for_a_new_owner)
{
	cr_assert_eq(arm(1, 9), 0);
	uvshim_irq_fire(&F->dev, 1, NULL, NULL);
	uvshim_irq_fire(&F->dev, 1, NULL, NULL);
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), 0);
	cr_assert_eq(fake_open_hello(F), 0);
	uint64_t count = 0;
	cr_assert_eq(uvshim_irq_fire(&F->dev, 1, &count, NULL), 0, "not armed by the new owner");
	cr_assert_eq(count, 1);
}

Test(irq, no_notification_once_the_owner_is_gone)
{
	cr_assert_eq(arm(1, 9), 0);
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), 0);
	cr_assert_eq(uvshim_irq_fire(&F->dev, 1, NULL, NULL), 0);
	cr_assert_eq(F->armed_mask_lo, 0, "release disarmed the vector in the platform");
}
