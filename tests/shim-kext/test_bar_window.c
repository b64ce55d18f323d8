/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* BAR windows: uvshim_bar_window_check, MAP_BAR / UNMAP_BAR and clientMemoryForType. */
#include <string.h>

#include "tests/shim-kext/support/fixture.h"

TestSuite(bar_window, .init = fx_setup, .fini = fx_teardown);

static int map(uint32_t cache, uint64_t off, uint64_t len, struct uvshim_map_bar_rep *rep)
{
	struct uvshim_map_bar_req r = {.bar = 0, .cache = cache, .offset = off, .length = len};
	struct uvshim_map_bar_rep local;
	return fx_call(UVSHIM_SEL_MAP_BAR, &r, rep ? rep : &local);
}

Test(bar_window, uncached_window_over_the_init_segment_is_allowed)
{
	cr_assert_eq(uvshim_bar_window_check(&F->dev.info, 0, UVSHIM_CACHE_UNCACHED, 0, PG), 0);
}

Test(bar_window, write_combining_over_the_init_segment_is_einval)
{
	cr_assert_eq(uvshim_bar_window_check(&F->dev.info, 0, UVSHIM_CACHE_WC, 0, PG), -UVSHIM_EINVAL);
	cr_assert_eq(map(UVSHIM_CACHE_WC, 0, 2 * PG, NULL), -UVSHIM_EINVAL);
}

Test(bar_window, write_combining_inside_the_uar_region_is_allowed)
{
	cr_assert_eq(uvshim_bar_window_check(&F->dev.info, 0, UVSHIM_CACHE_WC, PG, 4 * PG), 0);
}

Test(bar_window, whole_uar_region_write_combined_is_allowed)
{
	const struct uvshim_info_rep *i = &F->dev.info;
	cr_assert_eq(uvshim_bar_window_check(i, 0, UVSHIM_CACHE_WC, i->uar_offset, i->uar_len), 0);
}

Test(bar_window, whole_bar_uncached_is_allowed)
{
	cr_assert_eq(uvshim_bar_window_check(&F->dev.info, 0, UVSHIM_CACHE_UNCACHED, 0, F->dev.info.bar0_len), 0);
}

Test(bar_window, window_past_the_end_of_the_bar_is_erange)
{
	uint64_t end = F->dev.info.bar0_len;
	cr_assert_eq(uvshim_bar_window_check(&F->dev.info, 0, UVSHIM_CACHE_UNCACHED, end - PG, 2 * PG), -UVSHIM_ERANGE);
	cr_assert_eq(uvshim_bar_window_check(&F->dev.info, 0, UVSHIM_CACHE_UNCACHED, end, PG), -UVSHIM_ERANGE);
}

Test(bar_window, window_whose_end_overflows_is_erange)
{
	cr_assert_eq(uvshim_bar_window_check(&F->dev.info, 0, UVSHIM_CACHE_UNCACHED, PG,
					     0xffffffffffffc000ull), -UVSHIM_ERANGE);
}

Test(bar_window, write_combining_past_a_short_uar_region_is_erange)
{
	struct uvshim_info_rep i = F->dev.info;
	i.uar_len = 4 * PG;
	cr_assert_eq(uvshim_bar_window_check(&i, 0, UVSHIM_CACHE_WC, PG, 4 * PG), 0);
	cr_assert_eq(uvshim_bar_window_check(&i, 0, UVSHIM_CACHE_WC, PG, 5 * PG), -UVSHIM_ERANGE);
	cr_assert_eq(uvshim_bar_window_check(&i, 0, UVSHIM_CACHE_WC, 5 * PG, PG), -UVSHIM_ERANGE);
}

Test(bar_window, window_on_another_bar_is_einval)
{
	cr_assert_eq(uvshim_bar_window_check(&F->dev.info, 2, UVSHIM_CACHE_UNCACHED, 0, PG), -UVSHIM_EINVAL);
}

Test(bar_window, unaligned_window_is_einval)
{
	cr_assert_eq(uvshim_bar_window_check(&F->dev.info, 0, UVSHIM_CACHE_UNCACHED, 4096, PG), -UVSHIM_EINVAL);
	cr_assert_eq(uvshim_bar_window_check(&F->dev.info, 0, UVSHIM_CACHE_UNCACHED, 0, 0), -UVSHIM_EINVAL);
}

Test(bar_window, map_bar_returns_a_window_memory_type_that_names_the_window)
{
	struct uvshim_map_bar_rep r;
	cr_assert_eq(map(UVSHIM_CACHE_WC, 2 * PG, PG, &r), 0);
	cr_assert_eq(r.memory_type >> UVSHIM_MEMTYPE_KIND_SHIFT, UVSHIM_MEMTYPE_WINDOW);
	cr_assert_eq(r.offset, 2 * PG);
	cr_assert_eq(r.length, PG);
	struct uvshim_memory m;
	cr_assert_eq(uvshim_memory_for_type(&F->dev, &F->owner_a, r.memory_type, &m), 0);
	cr_assert_eq(m.kind, UVSHIM_MEMTYPE_WINDOW);
	cr_assert_eq(m.cache, UVSHIM_CACHE_WC);
	cr_assert_eq(m.offset, 2 * PG);
	cr_assert_eq(m.length, PG);
}

Test(bar_window, the_same_window_twice_gives_the_same_memory_type)
{
	struct uvshim_map_bar_rep a, b, c;
	cr_assert_eq(map(UVSHIM_CACHE_UNCACHED, 0, PG, &a), 0);
	cr_assert_eq(map(UVSHIM_CACHE_UNCACHED, 0, PG, &b), 0);
	cr_assert_eq(map(UVSHIM_CACHE_UNCACHED, 0, 2 * PG, &c), 0);
	cr_assert_eq(a.memory_type, b.memory_type);
	cr_assert_neq(a.memory_type, c.memory_type);
}

Test(bar_window, a_window_beyond_the_table_is_enospc)
{
	for (uint32_t i = 0; i < UVSHIM_MAX_WINDOWS; i++)
		cr_assert_eq(map(UVSHIM_CACHE_UNCACHED, i * PG, PG, NULL), 0);
	cr_assert_eq(map(UVSHIM_CACHE_UNCACHED, 100 * PG, PG, NULL), -UVSHIM_ENOSPC);
}

Test(bar_window, unmap_bar_forgets_the_window)
{
	struct uvshim_map_bar_rep r;
	cr_assert_eq(map(UVSHIM_CACHE_UNCACHED, 0, PG, &r), 0);
	struct uvshim_unmap_bar_req u = {.memory_type = r.memory_type};
	cr_assert_eq(fx_call(UVSHIM_SEL_UNMAP_BAR, &u, NULL), 0);
	struct uvshim_memory m;
	cr_assert_eq(uvshim_memory_for_type(&F->dev, &F->owner_a, r.memory_type, &m), -UVSHIM_ENOENT);
	cr_assert_eq(fx_call(UVSHIM_SEL_UNMAP_BAR, &u, NULL), -UVSHIM_ENOENT);
}

Test(bar_window, unmap_of_a_window_slot_past_the_table_is_enoent)
{
	struct uvshim_unmap_bar_req u = {.memory_type = UVSHIM_MEMTYPE(UVSHIM_MEMTYPE_WINDOW, 1000)};
	cr_assert_eq(fx_call(UVSHIM_SEL_UNMAP_BAR, &u, NULL), -UVSHIM_ENOENT);
}

Test(bar_window, memory_type_of_unknown_kind_is_einval)
{
	struct uvshim_memory m;
	cr_assert_eq(uvshim_memory_for_type(&F->dev, &F->owner_a, UVSHIM_MEMTYPE(7, 0), &m), -UVSHIM_EINVAL);
}

Test(bar_window, memory_type_lookup_by_a_non_owner_is_eperm)
{
	struct uvshim_map_bar_rep r;
	cr_assert_eq(map(UVSHIM_CACHE_UNCACHED, 0, PG, &r), 0);
	struct uvshim_memory m;
	cr_assert_eq(uvshim_memory_for_type(&F->dev, &F->owner_b, r.memory_type, &m), -UVSHIM_EPERM);
}

Test(bar_window, memory_type_of_a_dma_buffer_gives_its_length_and_cookie)
{
	struct uvshim_dma_alloc_rep d;
	cr_assert_eq(fake_dma(F, 3 * PG, 4096, &d), 0);
	struct uvshim_memory m;
	cr_assert_eq(uvshim_memory_for_type(&F->dev, &F->owner_a, d.memory_type, &m), 0);
	cr_assert_eq(m.kind, UVSHIM_MEMTYPE_DMA);
	cr_assert_eq(m.length, 3 * PG);
	cr_assert_not_null(m.cookie);
	cr_assert(((struct fake_pin *)m.cookie)->dma);
}

Test(bar_window, memory_type_of_a_freed_dma_buffer_is_enoent)
{
	struct uvshim_dma_alloc_rep d;
	cr_assert_eq(fake_dma(F, PG, 4096, &d), 0);
	cr_assert_eq(fx_dma_free(d.handle), 0);
	struct uvshim_memory m;
	cr_assert_eq(uvshim_memory_for_type(&F->dev, &F->owner_a, d.memory_type, &m), -UVSHIM_ENOENT);
}

Test(bar_window, windows_are_forgotten_when_the_owner_goes)
{
	struct uvshim_map_bar_rep r;
	cr_assert_eq(map(UVSHIM_CACHE_UNCACHED, 0, PG, &r), 0);
	cr_assert_eq(uvshim_owner_release(&F->dev, &F->owner_a), 0);
	cr_assert_eq(fake_open_hello(F), 0);
	struct uvshim_memory m;
	cr_assert_eq(uvshim_memory_for_type(&F->dev, &F->owner_a, r.memory_type, &m), -UVSHIM_ENOENT);
}

Test(bar_window, device_whose_uar_region_overlaps_the_init_segment_is_refused_at_attach)
{
	struct uvshim_info_rep i = F->dev.info;
	struct uvshim_platform p = F->dev.plat;
	struct uvshim_config c = F->dev.cfg;
	struct uvshim_dev d;
	i.uar_offset = 0;
	cr_assert_eq(uvshim_dev_init(&d, &i, &c, &p, F->storage, F->capacity), -UVSHIM_EINVAL);
}

Test(bar_window, device_whose_uar_region_runs_past_the_bar_is_refused_at_attach)
{
	struct uvshim_info_rep i = F->dev.info;
	struct uvshim_platform p = F->dev.plat;
	struct uvshim_config c = F->dev.cfg;
	struct uvshim_dev d;
	i.uar_len += PG;
	cr_assert_eq(uvshim_dev_init(&d, &i, &c, &p, F->storage, F->capacity), -UVSHIM_EINVAL);
}

/* The cache mode of a window's user mapping comes from the caller's map options
 * (uvshim_window_map_check), in IOKit's encoding: mode << 8. */
static uint32_t iomap(uint32_t mode)
{
	return (mode << UVSHIM_IOMAP_CACHE_SHIFT) | 0x1u /* kIOMapAnywhere */;
}

Test(bar_window, uncached_window_maps_uncached)
{
	cr_assert_eq(uvshim_window_map_check(UVSHIM_CACHE_UNCACHED, iomap(UVSHIM_IOMAP_INHIBIT)), 0);
}

Test(bar_window, uncached_window_mapped_write_combining_is_einval)
{
	cr_assert_eq(uvshim_window_map_check(UVSHIM_CACHE_UNCACHED, iomap(UVSHIM_IOMAP_WRITE_COMBINE)),
		     -UVSHIM_EINVAL);
}

Test(bar_window, uncached_window_mapped_device_gre_is_einval)
{
	cr_assert_eq(uvshim_window_map_check(UVSHIM_CACHE_UNCACHED,
					     iomap(UVSHIM_IOMAP_POSTED_COMBINED_REORDERED)), -UVSHIM_EINVAL);
}

Test(bar_window, uncached_window_mapped_with_the_default_cache_mode_is_einval)
{
	cr_assert_eq(uvshim_window_map_check(UVSHIM_CACHE_UNCACHED, iomap(UVSHIM_IOMAP_DEFAULT)), -UVSHIM_EINVAL);
}

Test(bar_window, write_combining_window_maps_device_gre_write_combining_or_uncached)
{
	cr_assert_eq(uvshim_window_map_check(UVSHIM_CACHE_WC, iomap(UVSHIM_IOMAP_POSTED_COMBINED_REORDERED)), 0);
	cr_assert_eq(uvshim_window_map_check(UVSHIM_CACHE_WC, iomap(UVSHIM_IOMAP_WRITE_COMBINE)), 0);
	cr_assert_eq(uvshim_window_map_check(UVSHIM_CACHE_WC, iomap(UVSHIM_IOMAP_INHIBIT)), 0);
}

Test(bar_window, write_combining_window_mapped_cacheable_is_einval)
{
	cr_assert_eq(uvshim_window_map_check(UVSHIM_CACHE_WC, iomap(3) /* kIOCopybackCache */), -UVSHIM_EINVAL);
	cr_assert_eq(uvshim_window_map_check(UVSHIM_CACHE_WC, iomap(UVSHIM_IOMAP_DEFAULT)), -UVSHIM_EINVAL);
}

Test(bar_window, window_of_an_unknown_cache_class_maps_nothing)
{
	cr_assert_eq(uvshim_window_map_check(7, iomap(UVSHIM_IOMAP_INHIBIT)), -UVSHIM_EINVAL);
}
