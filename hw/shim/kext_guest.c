/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/shim/kext_guest.h: which kext page a BAR0 offset of the UAR region is. */
#include "hw/shim/kext_guest.h"

#include <errno.h>

int shim_kext_uar_index(const struct uvshim_info_rep *info, uint64_t bar_off, uint32_t *index)
{
	uint64_t page = info->page_size;
	if (!page || (page & (page - 1)) || !info->uar_len || bar_off < info->uar_offset ||
	    bar_off - info->uar_offset >= info->uar_len)
		return -EINVAL;
	uint64_t i = (bar_off - info->uar_offset) / page;
	if (i > UINT32_MAX)
		return -EINVAL;
	*index = (uint32_t)i;
	return 0;
}

int shim_kext_guest_window(const struct uvshim_info_rep *info, uint64_t bar_off, uint32_t cache,
			   struct uvshim_map_bar_req *req)
{
	uint32_t index;
	int rc = shim_kext_uar_index(info, bar_off, &index);
	if (rc)
		return rc;
	if (cache != UVSHIM_CACHE_WC && cache != UVSHIM_CACHE_UNCACHED)
		return -EINVAL;
	*req = (struct uvshim_map_bar_req){ .bar = 0, .cache = cache,
					    .offset = info->uar_offset + (uint64_t)index * info->page_size,
					    .length = info->page_size };
	return 0;
}
