/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* DMA_ALLOC and DMA_FREE: driver memory (queues, mailboxes, firmware pages). */
#include "tests/shim-kext/support/fixture.h"

TestSuite(dma, .init = fx_setup, .fini = fx_teardown);

Test(dma, length_is_rounded_up_to_the_host_page)
{
	struct uvshim_dma_alloc_rep r;
	cr_assert_eq(fake_dma(F, 4096, 4096, &r), 0);
	cr_assert_eq(r.length, PG, "a 4 KiB firmware page still takes a 16 KiB host page");
	cr_assert_eq(F->dev.pins.bytes, PG);
}

Test(dma, iova_meets_an_alignment_above_the_page)
{
	struct uvshim_dma_alloc_rep r;
	cr_assert_eq(fake_dma(F, PG, 1 << 20, &r), 0);
	cr_assert_eq(r.iova & ((1 << 20) - 1), 0);
}

Test(dma, alignment_below_the_page_still_gets_page_alignment)
{
	struct uvshim_dma_alloc_rep r;
	cr_assert_eq(fake_dma(F, 64, 64, &r), 0);
	cr_assert_eq(r.iova & (PG - 1), 0);
	cr_assert_eq(F->log[fake_find(F, EV_DMA_ALLOC, 0)].arg, PG);
}

Test(dma, reply_names_a_dma_memory_type)
{
	struct uvshim_dma_alloc_rep r;
	cr_assert_eq(fake_dma(F, PG, 4096, &r), 0);
	cr_assert_eq(r.memory_type >> UVSHIM_MEMTYPE_KIND_SHIFT, UVSHIM_MEMTYPE_DMA);
	cr_assert_eq(r.memory_type & UVSHIM_MEMTYPE_INDEX_MASK, r.handle & 0xffffffffu);
}

Test(dma, free_releases_the_buffer)
{
	struct uvshim_dma_alloc_rep r;
	cr_assert_eq(fake_dma(F, PG, 4096, &r), 0);
	cr_assert_eq(fx_dma_free(r.handle), 0);
	cr_assert_eq(F->live_dma, 0);
	cr_assert_eq(F->dev.pins.count, 0);
	cr_assert_eq(fx_dma_free(r.handle), -UVSHIM_ENOENT);
}

Test(dma, free_of_a_pin_handle_is_enoent)
{
	struct uvshim_pin_rep p;
	cr_assert_eq(fake_pin(F, UVA, PG, UVSHIM_PIN_DEVICE_READ, &p), 0);
	cr_assert_eq(fx_dma_free(p.handle), -UVSHIM_ENOENT);
	cr_assert_eq(F->live_pins, 1);
}

Test(dma, buffers_count_against_the_owner_limits)
{
	fx_teardown();
	fx_new(PG, 8, 2, 0);
	cr_assert_eq(fake_open_hello(F), 0);
	cr_assert_eq(fake_dma(F, PG, 4096, NULL), 0);
	cr_assert_eq(fake_pin(F, UVA, PG, UVSHIM_PIN_DEVICE_READ, NULL), 0);
	cr_assert_eq(fake_dma(F, PG, 4096, NULL), -UVSHIM_ENOSPC);
}

Test(dma, buffers_count_against_the_byte_limit)
{
	fx_teardown();
	fx_new(PG, 8, 0, 2 * PG);
	cr_assert_eq(fake_open_hello(F), 0);
	cr_assert_eq(fake_dma(F, PG + 1, 4096, NULL), 0, "rounded to two pages");
	cr_assert_eq(fake_dma(F, 1, 4096, NULL), -UVSHIM_EPINLIMIT);
}

Test(dma, a_misaligned_iova_from_the_platform_is_refused_and_freed)
{
	F->bad = BAD_MISALIGNED;
	cr_assert_eq(fake_dma(F, PG, 1 << 16, NULL), -UVSHIM_EIO);
	cr_assert_eq(fake_count(F, EV_DMA_FREE), 1);
	cr_assert_eq(F->live_dma, 0);
	cr_assert_eq(F->dev.pins.count, 0);
}

Test(dma, an_iova_overlapping_a_pin_is_refused_and_freed)
{
	cr_assert_eq(fake_pin(F, UVA, 4 * PG, UVSHIM_PIN_DEVICE_READ, NULL), 0);
	F->bad = BAD_REUSE_IOVA;
	cr_assert_eq(fake_dma(F, PG, 4096, NULL), -UVSHIM_EEXIST);
	cr_assert_eq(F->live_dma, 0);
}

Test(dma, a_platform_failure_is_returned_and_holds_no_slot)
{
	F->fail_dma = -UVSHIM_ENOMEM;
	cr_assert_eq(fake_dma(F, PG, 4096, NULL), -UVSHIM_ENOMEM);
	cr_assert_eq(F->dev.pins.count, 0);
}

Test(dma, iova_lookup_finds_a_dma_buffer)
{
	struct uvshim_dma_alloc_rep r;
	cr_assert_eq(fake_dma(F, 2 * PG, 4096, &r), 0);
	uint64_t h, off;
	cr_assert_eq(uvshim_pins_find_iova(&F->dev.pins, r.iova + PG + 8, &h, &off), 0);
	cr_assert_eq(h, r.handle);
	cr_assert_eq(off, PG + 8);
}
