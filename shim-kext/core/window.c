/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* BAR windows: which part of BAR0 the owner may map, and with which cache mode.
 *
 * A ConnectX function exposes one memory BAR (BAR0): the initialization segment at its
 * start, then UAR pages (PRM "UAR": doorbells and BlueFlame buffers).  Uncached
 * mappings of any page of BAR0 are allowed: the driver needs the init segment (command
 * doorbell, health counter) and may ring doorbells uncached.  Write-combining is only
 * allowed inside the UAR region the device description names, which never includes
 * the init segment: a WC mapping there could merge the command doorbell with other
 * stores or delay it, and health polling would read stale buffers.
 */
#include "shim-kext/core/uvshim_core.h"

static bool page_aligned(uint64_t v, uint64_t page) { return (v & (page - 1)) == 0; }

int uvshim_bar_window_check(const struct uvshim_info_rep *info, uint32_t bar, uint32_t cache,
			    uint64_t offset, uint64_t length)
{
	uint64_t page = info->page_size;

	if (bar != 0)
		return -UVSHIM_EINVAL;
	if (cache != UVSHIM_CACHE_UNCACHED && cache != UVSHIM_CACHE_WC)
		return -UVSHIM_EINVAL;
	if (page < 4096 || (page & (page - 1)) != 0)
		return -UVSHIM_EINVAL;
	if (length == 0 || !page_aligned(offset, page) || !page_aligned(length, page))
		return -UVSHIM_EINVAL;
	if (offset >= info->bar0_len || length > info->bar0_len - offset)
		return -UVSHIM_ERANGE;
	if (cache == UVSHIM_CACHE_WC) {
		if (offset < UVSHIM_INIT_SEG_END)
			return -UVSHIM_EINVAL;
		if (offset < info->uar_offset || offset - info->uar_offset >= info->uar_len ||
		    length > info->uar_len - (offset - info->uar_offset))
			return -UVSHIM_ERANGE;
	}
	return 0;
}

int uvshim_window_map_check(uint32_t window_cache, uint32_t map_options)
{
	uint32_t mode = (map_options & UVSHIM_IOMAP_CACHE_MASK) >> UVSHIM_IOMAP_CACHE_SHIFT;

	if (window_cache == UVSHIM_CACHE_UNCACHED)
		return mode == UVSHIM_IOMAP_INHIBIT ? 0 : -UVSHIM_EINVAL;
	if (window_cache != UVSHIM_CACHE_WC)
		return -UVSHIM_EINVAL;
	/* Not the default or a cacheable mode: BAR pages must never be cached. */
	switch (mode) {
	case UVSHIM_IOMAP_INHIBIT:
	case UVSHIM_IOMAP_WRITE_COMBINE:
	case UVSHIM_IOMAP_POSTED_WRITE:
	case UVSHIM_IOMAP_POSTED_REORDERED:
	case UVSHIM_IOMAP_POSTED_COMBINED_REORDERED:
		return 0;
	default:
		return -UVSHIM_EINVAL;
	}
}

int uvshim_window_declare(struct uvshim_window *win, uint32_t n, const struct uvshim_map_bar_req *r,
			  struct uvshim_map_bar_rep *o)
{
	uint32_t slot = n;

	for (uint32_t w = 0; w < n && slot == n; w++)
		if (win[w].used && win[w].cache == r->cache && win[w].offset == r->offset && win[w].length == r->length)
			slot = w;
	for (uint32_t w = 0; w < n && slot == n; w++)
		if (!win[w].used)
			slot = w;
	if (slot == n)
		return -UVSHIM_ENOSPC;
	win[slot].used = true;
	win[slot].cache = r->cache;
	win[slot].offset = r->offset;
	win[slot].length = r->length;
	o->memory_type = UVSHIM_MEMTYPE(UVSHIM_MEMTYPE_WINDOW, slot);
	o->cache = r->cache;
	o->offset = r->offset;
	o->length = r->length;
	return 0;
}

int uvshim_window_forget(struct uvshim_window *win, uint32_t n, uint32_t memory_type)
{
	uint32_t slot = memory_type & UVSHIM_MEMTYPE_INDEX_MASK;

	if (slot >= n || !win[slot].used)
		return -UVSHIM_ENOENT;
	win[slot].used = false;
	return 0;
}

int uvshim_window_memory(const struct uvshim_window *win, uint32_t n, uint32_t memory_type,
			 struct uvshim_memory *out)
{
	uint32_t slot = memory_type & UVSHIM_MEMTYPE_INDEX_MASK;

	if (slot >= n || !win[slot].used)
		return -UVSHIM_ENOENT;
	out->kind = UVSHIM_MEMTYPE_WINDOW;
	out->cache = win[slot].cache;
	out->offset = win[slot].offset;
	out->length = win[slot].length;
	return 0;
}
