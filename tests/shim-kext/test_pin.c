/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* PIN, PIN_SEGS and UNPIN through dispatch, against the fake platform. */
#include <string.h>

#include "tests/shim-kext/support/fixture.h"

TestSuite(pin, .init = fx_setup, .fini = fx_teardown);

static const uint32_t RW = UVSHIM_PIN_DEVICE_READ | UVSHIM_PIN_DEVICE_WRITE;

Test(pin, returns_a_handle_and_one_iova_segment_unlike_the_va)
{
	struct uvshim_pin_rep r;
	cr_assert_eq(fake_pin(F, UVA, 4 * PG, RW, &r), 0);
	cr_assert_neq(r.handle, 0);
	cr_assert_eq(r.length, 4 * PG);
	cr_assert_eq(r.nseg_total, 1);
	cr_assert_eq(r.nseg, 1);
	cr_assert_eq(r.seg[0].len, 4 * PG);
	cr_assert_neq(r.seg[0].iova, UVA);
	cr_assert_eq(F->live_pins, 1);
}

Test(pin, fragmented_segments_add_up_to_the_length)
{
	F->fragment = true;
	struct uvshim_pin_rep r;
	cr_assert_eq(fake_pin(F, UVA, 5 * PG, RW, &r), 0);
	cr_assert_eq(r.nseg_total, 5);
	uint64_t sum = 0;
	for (uint32_t i = 0; i < r.nseg; i++)
		sum += r.seg[i].len;
	cr_assert_eq(sum, 5 * PG);
	cr_assert_gt(r.seg[0].iova, r.seg[4].iova, "descending IOVAs are passed through as given");
}

Test(pin, more_segments_than_one_reply_holds_are_paged_with_pin_segs)
{
	F->fragment = true;
	struct uvshim_pin_rep r;
	cr_assert_eq(fake_pin(F, UVA, 100 * PG, RW, &r), 0);
	cr_assert_eq(r.nseg_total, 100);
	cr_assert_eq(r.nseg, UVSHIM_MAX_SEGS_PER_REPLY);
	struct uvshim_pin_segs_req q = {.handle = r.handle, .first_seg = UVSHIM_MAX_SEGS_PER_REPLY};
	struct uvshim_pin_rep r2;
	cr_assert_eq(fx_call(UVSHIM_SEL_PIN_SEGS, &q, &r2), 0);
	cr_assert_eq(r2.first_seg, UVSHIM_MAX_SEGS_PER_REPLY);
	cr_assert_eq(r2.nseg, 100 - UVSHIM_MAX_SEGS_PER_REPLY);
	cr_assert_eq(r2.seg[r2.nseg - 1].iova, F->live[0].seg[99].iova);
	cr_assert_eq(r2.seg[r2.nseg].len, 0, "entries past nseg are zero");
}

Test(pin, pin_segs_past_the_last_segment_is_erange)
{
	struct uvshim_pin_rep r;
	cr_assert_eq(fake_pin(F, UVA, PG, RW, &r), 0);
	struct uvshim_pin_segs_req q = {.handle = r.handle, .first_seg = 1};
	struct uvshim_pin_rep r2;
	cr_assert_eq(fx_call(UVSHIM_SEL_PIN_SEGS, &q, &r2), -UVSHIM_ERANGE);
}

Test(pin, pin_segs_of_an_unknown_handle_is_enoent)
{
	struct uvshim_pin_segs_req q = {.handle = 0x500000003ull};
	struct uvshim_pin_rep r2;
	cr_assert_eq(fx_call(UVSHIM_SEL_PIN_SEGS, &q, &r2), -UVSHIM_ENOENT);
}

Test(pin, unpin_calls_the_platform_and_frees_the_slot)
{
	struct uvshim_pin_rep r;
	cr_assert_eq(fake_pin(F, UVA, 2 * PG, RW, &r), 0);
	cr_assert_eq(fx_unpin(r.handle), 0);
	cr_assert_eq(fake_count(F, EV_UNPIN), 1);
	cr_assert_eq(F->live_pins, 0);
	cr_assert_eq(F->dev.pins.count, 0);
	cr_assert_eq(F->dev.pins.bytes, 0);
}

Test(pin, unpin_twice_is_enoent)
{
	struct uvshim_pin_rep r;
	cr_assert_eq(fake_pin(F, UVA, PG, RW, &r), 0);
	cr_assert_eq(fx_unpin(r.handle), 0);
	cr_assert_eq(fx_unpin(r.handle), -UVSHIM_ENOENT);
	cr_assert_eq(fake_count(F, EV_UNPIN), 1);
}

Test(pin, stale_handle_of_a_reused_slot_is_enoent)
{
	struct uvshim_pin_rep a, b;
	F->dev.pins.next = 0;
	cr_assert_eq(fake_pin(F, UVA, PG, RW, &a), 0);
	cr_assert_eq(fx_unpin(a.handle), 0);
	F->dev.pins.next = 0; /* force the same slot */
	cr_assert_eq(fake_pin(F, UVA, PG, RW, &b), 0);
	cr_assert_eq(a.handle & 0xffffffffu, b.handle & 0xffffffffu, "same slot");
	cr_assert_neq(a.handle, b.handle);
	cr_assert_eq(fx_unpin(a.handle), -UVSHIM_ENOENT);
	cr_assert_eq(F->live_pins, 1, "the new pin survives");
}

Test(pin, unpin_of_a_dma_handle_is_enoent)
{
	struct uvshim_dma_alloc_rep d;
	cr_assert_eq(fake_dma(F, PG, 4096, &d), 0);
	cr_assert_eq(fx_unpin(d.handle), -UVSHIM_ENOENT);
	cr_assert_eq(F->live_dma, 1);
}

Test(pin, overlapping_user_ranges_are_separate_pins)
{
	struct uvshim_pin_rep a, b;
	cr_assert_eq(fake_pin(F, UVA, 4 * PG, RW, &a), 0);
	cr_assert_eq(fake_pin(F, UVA + PG, 4 * PG, RW, &b), 0);
	cr_assert_neq(a.handle, b.handle);
	cr_assert_neq(a.seg[0].iova, b.seg[0].iova);
	cr_assert_eq(F->dev.pins.bytes, 8 * PG);
}

Test(pin, the_pin_count_limit_is_enospc)
{
	fx_teardown();
	fx_new(PG, 8, 3, 0);
	cr_assert_eq(fake_open_hello(F), 0);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(fake_pin(F, UVA + i * PG, PG, RW, NULL), 0);
	cr_assert_eq(fake_pin(F, UVA, PG, RW, NULL), -UVSHIM_ENOSPC);
	cr_assert_eq(fake_count(F, EV_PIN), 3, "refused before the platform wires anything");
}

Test(pin, the_pinned_byte_limit_is_epinlimit)
{
	fx_teardown();
	fx_new(PG, 8, 0, 10 * PG);
	cr_assert_eq(fake_open_hello(F), 0);
	cr_assert_eq(fake_pin(F, UVA, 8 * PG, RW, NULL), 0);
	cr_assert_eq(fake_pin(F, UVA, 3 * PG, RW, NULL), -UVSHIM_EPINLIMIT);
	cr_assert_eq(fake_pin(F, UVA, 2 * PG, RW, NULL), 0, "exactly up to the limit");
	cr_assert_eq(F->dev.pins.bytes, 10 * PG);
}

Test(pin, unpinning_gives_the_bytes_back_to_the_limit)
{
	fx_teardown();
	fx_new(PG, 8, 0, 4 * PG);
	cr_assert_eq(fake_open_hello(F), 0);
	struct uvshim_pin_rep r;
	cr_assert_eq(fake_pin(F, UVA, 4 * PG, RW, &r), 0);
	cr_assert_eq(fake_pin(F, UVA, PG, RW, NULL), -UVSHIM_EPINLIMIT);
	cr_assert_eq(fx_unpin(r.handle), 0);
	cr_assert_eq(fake_pin(F, UVA, 4 * PG, RW, NULL), 0);
}

Test(pin, a_platform_failure_is_returned_and_holds_no_slot)
{
	F->fail_pin = -UVSHIM_ENOMEM;
	cr_assert_eq(fake_pin(F, UVA, PG, RW, NULL), -UVSHIM_ENOMEM);
	cr_assert_eq(F->dev.pins.count, 0);
	cr_assert_eq(F->dev.pins.bytes, 0);
}

Test(pin, a_positive_platform_error_becomes_eio)
{
	F->fail_pin = 3; /* a stray IOReturn-ish value must not read as success */
	cr_assert_eq(fake_pin(F, UVA, PG, RW, NULL), -UVSHIM_EIO);
}

Test(pin, a_misaligned_iova_from_the_platform_is_refused_and_unpinned)
{
	F->bad = BAD_MISALIGNED;
	cr_assert_eq(fake_pin(F, UVA, PG, RW, NULL), -UVSHIM_EIO);
	cr_assert_eq(fake_count(F, EV_UNPIN), 1);
	cr_assert_eq(F->live_pins, 0);
	cr_assert_eq(F->dev.pins.count, 0);
}

Test(pin, segments_shorter_than_the_pin_are_refused)
{
	F->bad = BAD_SHORT;
	cr_assert_eq(fake_pin(F, UVA, 3 * PG, RW, NULL), -UVSHIM_EIO);
	cr_assert_eq(F->live_pins, 0);
}

Test(pin, an_empty_segment_list_is_refused)
{
	F->bad = BAD_ZERO_SEGS;
	cr_assert_eq(fake_pin(F, UVA, PG, RW, NULL), -UVSHIM_EIO);
	cr_assert_eq(F->live_pins, 0);
}

Test(pin, segments_overlapping_each_other_are_refused)
{
	F->fragment = true;
	F->bad = BAD_SELF_OVERLAP;
	cr_assert_eq(fake_pin(F, UVA, 3 * PG, RW, NULL), -UVSHIM_EIO);
	cr_assert_eq(F->live_pins, 0);
}

Test(pin, an_iova_already_used_by_another_pin_is_eexist)
{
	cr_assert_eq(fake_pin(F, UVA, 2 * PG, RW, NULL), 0);
	F->bad = BAD_REUSE_IOVA;
	cr_assert_eq(fake_pin(F, UVA + 8 * PG, PG, RW, NULL), -UVSHIM_EEXIST);
	cr_assert_eq(F->live_pins, 1);
}

Test(pin, more_segments_than_a_pin_may_have_are_refused)
{
	fx_teardown();
	fx_new(4096, 8, 0, 0);
	cr_assert_eq(fake_open_hello(F), 0);
	F->fragment = true;
	cr_assert_eq(fake_pin(F, UVA, (UVSHIM_MAX_SEGS_PER_PIN + 1) * 4096ull, RW, NULL), -UVSHIM_EIO);
	cr_assert_eq(fake_pin(F, UVA, UVSHIM_MAX_SEGS_PER_PIN * 4096ull, RW, NULL), 0);
}

Test(pin, iova_lookup_names_the_pin_and_the_offset_inside_it)
{
	F->fragment = true;
	struct uvshim_pin_rep r;
	cr_assert_eq(fake_pin(F, UVA, 3 * PG, RW, &r), 0);
	uint64_t h = 0, off = 0;
	/* segment 1 holds bytes [PG, 2PG) of the pin */
	cr_assert_eq(uvshim_pins_find_iova(&F->dev.pins, r.seg[1].iova + 100, &h, &off), 0);
	cr_assert_eq(h, r.handle);
	cr_assert_eq(off, PG + 100);
}

Test(pin, iova_lookup_outside_every_pin_is_enoent)
{
	struct uvshim_pin_rep r;
	cr_assert_eq(fake_pin(F, UVA, PG, RW, &r), 0);
	cr_assert_eq(uvshim_pins_find_iova(&F->dev.pins, r.seg[0].iova + PG, NULL, NULL), -UVSHIM_ENOENT);
	cr_assert_eq(uvshim_pins_find_iova(&F->dev.pins, r.seg[0].iova - 1, NULL, NULL), -UVSHIM_ENOENT);
}

Test(pin, pins_with_4k_pages_accept_4k_granularity)
{
	fx_teardown();
	fx_new(4096, 8, 0, 0);
	cr_assert_eq(fake_open_hello(F), 0);
	cr_assert_eq(fake_pin(F, UVA + 4096, 4096, UVSHIM_PIN_DEVICE_WRITE, NULL), 0);
}

Test(pin, an_unaligned_pin_reaches_the_client_as_einval)
{
	cr_assert_eq(fake_pin(F, UVA + 4096, PG, RW, NULL), -UVSHIM_EINVAL);
	cr_assert_eq(fake_count(F, EV_PIN), 0);
}
