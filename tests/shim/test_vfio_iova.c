/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The VFIO shim's IOVA allocator (hw/shim/vfio_iova.c): first fit with alignment,
 * coalescing free, refusal of double and foreign frees, and a long random run checked
 * against a model for overlap. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw/shim/vfio_iova.h"

static struct shim_iova_space s;

static void setup(void) { shim_iova_init(&s); }
static void teardown(void) { shim_iova_fini(&s); }

TestSuite(vfio_iova, .init = setup, .fini = teardown);

Test(vfio_iova, first_allocation_is_at_the_range_start)
{
	uint64_t a;
	cr_assert_eq(shim_iova_add_range(&s, 0x100000, 0x1fffff), 0);
	cr_assert_eq(shim_iova_alloc(&s, 0x1000, 0x1000, &a), 0);
	cr_assert_eq(a, 0x100000);
	cr_assert_eq(s.used, 0x1000);
}

Test(vfio_iova, consecutive_allocations_do_not_overlap)
{
	uint64_t a, b;
	cr_assert_eq(shim_iova_add_range(&s, 0x100000, 0x1fffff), 0);
	cr_assert_eq(shim_iova_alloc(&s, 0x1800, 0x1000, &a), 0);
	cr_assert_eq(shim_iova_alloc(&s, 0x1000, 0x1000, &b), 0);
	cr_assert_eq(a, 0x100000);
	cr_assert_eq(b, 0x102000, "second block must start at the next aligned free address, got 0x%llx",
		     (unsigned long long)b);
}

Test(vfio_iova, alignment_skips_to_the_next_boundary_and_keeps_the_gap_free)
{
	uint64_t a, b, c;
	cr_assert_eq(shim_iova_add_range(&s, 0x1000, 0xfffff), 0);
	cr_assert_eq(shim_iova_alloc(&s, 0x1000, 0x1000, &a), 0);     /* 0x1000 */
	cr_assert_eq(shim_iova_alloc(&s, 0x1000, 0x10000, &b), 0);    /* 64 KiB aligned */
	cr_assert_eq(a, 0x1000);
	cr_assert_eq(b, 0x10000);
	/* the gap 0x2000..0xffff stays usable */
	cr_assert_eq(shim_iova_alloc(&s, 0x2000, 0x1000, &c), 0);
	cr_assert_eq(c, 0x2000);
	cr_assert_eq(s.nfree, 2);
}

Test(vfio_iova, non_power_of_two_alignment_and_zero_length_are_einval)
{
	uint64_t a;
	cr_assert_eq(shim_iova_add_range(&s, 0, 0xffff), 0);
	cr_assert_eq(shim_iova_alloc(&s, 0x1000, 0x3000, &a), -EINVAL);
	cr_assert_eq(shim_iova_alloc(&s, 0, 0x1000, &a), -EINVAL);
}

Test(vfio_iova, exhaustion_is_enospc_and_frees_make_room_again)
{
	uint64_t a, b, c;
	cr_assert_eq(shim_iova_add_range(&s, 0x10000, 0x13fff), 0); /* 16 KiB */
	cr_assert_eq(shim_iova_alloc(&s, 0x2000, 0x1000, &a), 0);
	cr_assert_eq(shim_iova_alloc(&s, 0x2000, 0x1000, &b), 0);
	cr_assert_eq(shim_iova_alloc(&s, 0x1000, 0x1000, &c), -ENOSPC);
	cr_assert_eq(shim_iova_free(&s, a, 0x2000), 0);
	cr_assert_eq(shim_iova_alloc(&s, 0x1000, 0x1000, &c), 0);
	cr_assert_eq(c, a);
}

Test(vfio_iova, alignment_larger_than_the_range_is_enospc)
{
	uint64_t a;
	cr_assert_eq(shim_iova_add_range(&s, 0x1000, 0x1fff), 0);
	cr_assert_eq(shim_iova_alloc(&s, 0x1000, 0x10000, &a), -ENOSPC);
}

Test(vfio_iova, freeing_middle_then_neighbours_coalesces_to_one_extent)
{
	uint64_t a, b, c;
	cr_assert_eq(shim_iova_add_range(&s, 0x100000, 0x1fffff), 0);
	cr_assert_eq(shim_iova_alloc(&s, 0x1000, 0x1000, &a), 0);
	cr_assert_eq(shim_iova_alloc(&s, 0x1000, 0x1000, &b), 0);
	cr_assert_eq(shim_iova_alloc(&s, 0x1000, 0x1000, &c), 0);
	cr_assert_eq(shim_iova_free(&s, b, 0x1000), 0);
	cr_assert_eq(s.nfree, 2);                       /* hole at b, tail after c */
	cr_assert_eq(shim_iova_free(&s, a, 0x1000), 0);
	cr_assert_eq(s.nfree, 2);                       /* a merged with b's hole */
	cr_assert_eq(s.free[0].start, 0x100000);
	cr_assert_eq(s.free[0].last, 0x101fff);
	cr_assert_eq(shim_iova_free(&s, c, 0x1000), 0);
	cr_assert_eq(s.nfree, 1);                       /* everything back in one piece */
	cr_assert_eq(s.free[0].start, 0x100000);
	cr_assert_eq(s.free[0].last, 0x1fffff);
	cr_assert_eq(s.used, 0);
}

Test(vfio_iova, double_free_is_einval_and_changes_nothing)
{
	uint64_t a, b;
	cr_assert_eq(shim_iova_add_range(&s, 0x100000, 0x1fffff), 0);
	cr_assert_eq(shim_iova_alloc(&s, 0x2000, 0x1000, &a), 0);
	cr_assert_eq(shim_iova_alloc(&s, 0x1000, 0x1000, &b), 0);
	cr_assert_eq(shim_iova_free(&s, a, 0x2000), 0);
	cr_assert_eq(shim_iova_free(&s, a, 0x2000), -EINVAL);
	cr_assert_eq(shim_iova_free(&s, a + 0x1000, 0x2000), -EINVAL, "overlaps free space and b");
	cr_assert(shim_iova_is_allocated(&s, b, 0x1000));
	cr_assert_eq(s.used, 0x1000);
}

Test(vfio_iova, free_outside_the_ranges_or_wrapping_is_einval)
{
	cr_assert_eq(shim_iova_add_range(&s, 0x100000, 0x1fffff), 0);
	cr_assert_eq(shim_iova_free(&s, 0x0, 0x1000), -EINVAL);
	cr_assert_eq(shim_iova_free(&s, 0x1ff000, 0x2000), -EINVAL);
	cr_assert_eq(shim_iova_free(&s, UINT64_MAX - 0xfff, 0x2000), -EINVAL);
	cr_assert_eq(shim_iova_free(&s, 0x100000, 0), -EINVAL);
}

Test(vfio_iova, overlapping_ranges_are_refused_adjacent_ones_merge)
{
	uint64_t a;
	cr_assert_eq(shim_iova_add_range(&s, 0x10000, 0x1ffff), 0);
	cr_assert_eq(shim_iova_add_range(&s, 0x18000, 0x28000), -EINVAL);
	cr_assert_eq(shim_iova_add_range(&s, 0x20000, 0x2ffff), 0);
	cr_assert_eq(s.nranges, 1);
	cr_assert_eq(s.nfree, 1);
	/* an allocation across the old boundary can be freed again */
	cr_assert_eq(shim_iova_alloc(&s, 0x18000, 0x8000, &a), 0);
	cr_assert_eq(a, 0x10000);
	cr_assert_eq(shim_iova_free(&s, a, 0x18000), 0);
	cr_assert_eq(s.used, 0);
}

Test(vfio_iova, holes_between_ranges_are_never_handed_out)
{
	uint64_t a, b;
	/* x86: the MSI window 0xfee00000-0xfeefffff is reserved (IOVA_RANGE capability). */
	cr_assert_eq(shim_iova_add_range(&s, 0xfed00000, 0xfedfffff), 0);
	cr_assert_eq(shim_iova_add_range(&s, 0xfef00000, 0xffffffff), 0);
	cr_assert_eq(shim_iova_alloc(&s, 0x100000, 0x1000, &a), 0);
	cr_assert_eq(shim_iova_alloc(&s, 0x1000, 0x1000, &b), 0);
	cr_assert_eq(a, 0xfed00000);
	cr_assert_eq(b, 0xfef00000);
	cr_assert_not(shim_iova_is_allocated(&s, 0xfee00000, 0x1000));
}

Test(vfio_iova, range_ending_at_the_top_of_the_address_space_works)
{
	uint64_t a, b;
	cr_assert_eq(shim_iova_add_range(&s, UINT64_MAX - 0x1fff, UINT64_MAX), 0);
	cr_assert_eq(shim_iova_alloc(&s, 0x1000, 0x1000, &a), 0);
	cr_assert_eq(shim_iova_alloc(&s, 0x1000, 0x1000, &b), 0);
	cr_assert_eq(b, UINT64_MAX - 0xfff);
	cr_assert_eq(shim_iova_alloc(&s, 0x1000, 0x1000, &a), -ENOSPC);
	cr_assert_eq(shim_iova_free(&s, b, 0x1000), 0);
	cr_assert_eq(s.free[0].last, UINT64_MAX);
}

Test(vfio_iova, whole_64_bit_space_saturates_total)
{
	uint64_t a;
	cr_assert_eq(shim_iova_add_range(&s, 0, UINT64_MAX), 0);
	cr_assert_eq(s.total, UINT64_MAX);
	cr_assert_eq(shim_iova_alloc(&s, 1ull << 63, 1ull << 63, &a), 0);
	cr_assert_eq(a, 0);
	cr_assert_eq(shim_iova_alloc(&s, 1ull << 63, 1ull << 63, &a), 0);
	cr_assert_eq(a, 1ull << 63);
}

/* Model check: 20,000 random allocs and frees; live blocks never overlap, stay inside
 * the range and are aligned; the allocator agrees with the model on what is allocated;
 * freeing everything leaves one extent. */
#define LIVE_MAX 256
Test(vfio_iova, random_alloc_free_never_overlaps_and_fully_coalesces)
{
	struct { uint64_t iova, len; } live[LIVE_MAX];
	unsigned nlive = 0, allocs = 0, frees = 0, enospc = 0;
	uint64_t used = 0;
	unsigned seed = 12345;

	cr_assert_eq(shim_iova_add_range(&s, 0x100000, 0x100000 + (64u << 20) - 1), 0);
	for (int step = 0; step < 20000; step++) {
		seed = seed * 1103515245u + 12345u;
		unsigned r = (seed >> 8) & 0xffff;
		if (nlive == LIVE_MAX || (nlive && (r & 1))) {
			unsigned k = (r >> 1) % nlive;
			cr_assert_eq(shim_iova_free(&s, live[k].iova, live[k].len), 0);
			used -= live[k].len;
			live[k] = live[--nlive];
			frees++;
		} else {
			uint64_t len = (uint64_t)(1 + (r >> 1) % 64) * 0x1000;
			uint64_t align = 0x1000ull << ((r >> 7) % 6);
			uint64_t a;
			int rc = shim_iova_alloc(&s, len, align, &a);
			if (rc == -ENOSPC) {
				enospc++;
				continue;
			}
			cr_assert_eq(rc, 0);
			cr_assert_eq(a & (align - 1), 0, "unaligned 0x%llx for 0x%llx", (unsigned long long)a,
				     (unsigned long long)align);
			cr_assert(a >= 0x100000 && a + len <= 0x100000 + (64u << 20));
			for (unsigned i = 0; i < nlive; i++)
				cr_assert(a + len <= live[i].iova || live[i].iova + live[i].len <= a,
					  "0x%llx+0x%llx overlaps live 0x%llx+0x%llx", (unsigned long long)a,
					  (unsigned long long)len, (unsigned long long)live[i].iova,
					  (unsigned long long)live[i].len);
			live[nlive].iova = a;
			live[nlive].len = len;
			nlive++;
			used += len;
			allocs++;
		}
		cr_assert_eq(s.used, used);
	}
	for (unsigned i = 0; i < nlive; i++)
		cr_assert(shim_iova_is_allocated(&s, live[i].iova, live[i].len));
	while (nlive) {
		nlive--;
		cr_assert_eq(shim_iova_free(&s, live[nlive].iova, live[nlive].len), 0);
	}
	cr_assert_eq(s.nfree, 1);
	cr_assert_eq(s.used, 0);
	cr_assert_gt(allocs, 5000);
	cr_assert_gt(frees, 5000);
	cr_log_info("iova model run: %u allocs, %u frees, %u ENOSPC", allocs, frees, enospc);
}

/* ---- the span a pin maps ---- */

Test(vfio_iova, pin_span_widens_to_whole_pages_and_keeps_the_offset)
{
	uint64_t start, maplen, off;
	cr_assert_eq(shim_iova_span(0x7f0000001234ull, 0x100, 4096, &start, &maplen, &off), 0);
	cr_assert_eq(start, 0x7f0000001000ull);
	cr_assert_eq(maplen, 4096);
	cr_assert_eq(off, 0x234);
}

Test(vfio_iova, pin_span_crossing_a_page_boundary_takes_both_pages)
{
	uint64_t start, maplen, off;
	cr_assert_eq(shim_iova_span(0x10ff0, 0x20, 4096, &start, &maplen, &off), 0);
	cr_assert_eq(start, 0x10000);
	cr_assert_eq(maplen, 0x2000);
	cr_assert_eq(off, 0xff0);
}

Test(vfio_iova, pin_span_follows_a_16k_granule)
{
	uint64_t start, maplen, off;
	/* Apple Silicon / 16 KiB IOMMU granule: one byte still maps a whole 16 KiB page. */
	cr_assert_eq(shim_iova_span(0x4000 + 0x3fff, 1, 16384, &start, &maplen, &off), 0);
	cr_assert_eq(start, 0x4000);
	cr_assert_eq(maplen, 16384);
	cr_assert_eq(off, 0x3fff);
	cr_assert_eq(shim_iova_span(0x8000, 16384, 16384, &start, &maplen, &off), 0);
	cr_assert_eq(maplen, 16384, "an aligned exact page must not grow");
}

Test(vfio_iova, pin_span_rejects_empty_wrapping_and_bad_granule)
{
	uint64_t start, maplen, off;
	cr_assert_eq(shim_iova_span(0x1000, 0, 4096, &start, &maplen, &off), -EINVAL);
	cr_assert_eq(shim_iova_span(UINT64_MAX - 0xff, 0x200, 4096, &start, &maplen, &off), -EINVAL);
	cr_assert_eq(shim_iova_span(UINT64_MAX - 0xfff, 0x10, 4096, &start, &maplen, &off), -EINVAL);
	cr_assert_eq(shim_iova_span(0x1000, 0x10, 3000, &start, &maplen, &off), -EINVAL);
}

/* A pin's IOVA congruent to its VA modulo 2 MiB / 1 GiB (the driver's MKey then uses
 * pages that large): the residue is kept, the space below it stays free. */
Test(vfio_iova, congruent_allocation_keeps_the_va_offset_within_the_modulus)
{
	uint64_t a, b;
	cr_assert_eq(shim_iova_add_range(&s, 0x1000, (1ull << 40) - 1), 0);
	uint64_t va = 0x7f12345a3000ull;   /* 2 MiB residue 0x1a3000 */
	cr_assert_eq(shim_iova_alloc_congruent(&s, 4ull << 20, 2ull << 20, va, &a), 0);
	cr_assert_eq(a & ((2ull << 20) - 1), va & ((2ull << 20) - 1));
	cr_assert_eq(a, 0x1a3000, "the first such address: 0x%llx", (unsigned long long)a);
	/* the next one, past the first, keeps its own residue */
	cr_assert_eq(shim_iova_alloc_congruent(&s, 1ull << 30, 1ull << 30, 0x7f0040001000ull, &b), 0);
	cr_assert_eq(b & ((1ull << 30) - 1), 0x1000);
	cr_assert_geq(b, a + (4ull << 20));
	/* the gap below the first stays usable */
	uint64_t c;
	cr_assert_eq(shim_iova_alloc(&s, 0x1000, 0x1000, &c), 0);
	cr_assert_eq(c, 0x1000);
}

Test(vfio_iova, congruent_allocation_that_fits_nowhere_is_enospc)
{
	uint64_t a;
	cr_assert_eq(shim_iova_add_range(&s, 0x1000, 0x2fffff), 0);
	cr_assert_eq(shim_iova_alloc_congruent(&s, 2ull << 20, 2ull << 20, 0x1ff000, &a), -ENOSPC);
	cr_assert_eq(shim_iova_alloc_congruent(&s, 1ull << 20, 3ull << 20, 0, &a), -EINVAL, "modulus not a power of two");
}
