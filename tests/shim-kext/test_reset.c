/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RESET: function level reset on the owner's request. */
#include "tests/shim-kext/support/fixture.h"

TestSuite(reset, .init = fx_setup, .fini = fx_teardown);

static int do_reset(void)
{
	struct uvshim_reset_req r = {0};
	return fx_call(UVSHIM_SEL_RESET, &r, NULL);
}

Test(reset, bus_mastering_goes_off_then_the_function_resets_then_bus_mastering_returns)
{
	fake_clear_log(F);
	cr_assert_eq(do_reset(), 0);
	cr_assert_eq(F->nlog, 3);
	cr_assert_eq(F->log[0].ev, EV_BM_OFF);
	cr_assert_eq(F->log[1].ev, EV_RESET);
	cr_assert_eq(F->log[2].ev, EV_BM_ON);
	cr_assert(F->bus_master_on);
	cr_assert_eq(F->resets, 1);
}

Test(reset, the_owner_keeps_its_pins_and_buffers)
{
	cr_assert_eq(fake_pin(F, UVA, PG, UVSHIM_PIN_DEVICE_READ, NULL), 0);
	cr_assert_eq(fake_dma(F, PG, 4096, NULL), 0);
	cr_assert_eq(do_reset(), 0);
	cr_assert_eq(F->live_pins, 1);
	cr_assert_eq(F->live_dma, 1);
	cr_assert_eq(F->dev.state, UVSHIM_STATE_OWNED);
}

Test(reset, a_failed_reset_is_reported_and_bus_mastering_still_returns)
{
	F->fail_reset = -UVSHIM_EIO;
	fake_clear_log(F);
	cr_assert_eq(do_reset(), -UVSHIM_EIO);
	cr_assert_geq(fake_find(F, EV_BM_ON, 0), 0);
	cr_assert(F->bus_master_on);
}

Test(reset, a_failed_bus_master_disable_skips_the_reset)
{
	F->fail_bm_off = -UVSHIM_EIO;
	fake_clear_log(F);
	cr_assert_eq(do_reset(), -UVSHIM_EIO);
	cr_assert_eq(fake_count(F, EV_RESET), 0);
}

Test(reset, a_non_owner_cannot_reset)
{
	struct uvshim_reset_req r = {0};
	cr_assert_eq(fake_call(F, &F->owner_b, UVSHIM_SEL_RESET, &r, NULL), -UVSHIM_EPERM);
	cr_assert_eq(F->resets, 0);
}
