/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Power-of-two arithmetic every layer needs for ring and page sizes (no platform
 * difference: one copy here, below hw/mlx5, hw/emu and uverbs). */
#ifndef UVERBS_HW_PLATFORM_BITS_H
#define UVERBS_HW_PLATFORM_BITS_H

#include <stdbool.h>
#include <stdint.h>

static inline bool plat_is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* The smallest l with 2^l >= v (0 for v <= 1; 64 for v > 2^63). */
static inline unsigned plat_ilog2_ceil(uint64_t v)
{
	unsigned l = 0;

	while (l < 64 && (1ull << l) < v)
		l++;
	return l;
}

#endif
