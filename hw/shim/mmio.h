/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Register access to a mapped BAR: the only place the driver loads or stores device
 * registers.  Every ConnectX register is big-endian (PRM "initialization segment",
 * "UAR page"), so byte order is converted here and nowhere else for MMIO.
 *
 * A software device (hw/emu) installs a hook on its BAR to see accesses: reads are
 * reported before the load (so it can refresh the health counter, or answer all-ones
 * after a surprise removal), writes after the store (so a doorbell is acted on).  On
 * hardware the hook is NULL and costs one predictable branch.
 */
#ifndef UVERBS_HW_SHIM_MMIO_H
#define UVERBS_HW_SHIM_MMIO_H

#include "hw/platform/byteorder.h"
#include <stdint.h>
#include <string.h>

#include "hw/shim/shim.h"

static inline void shim_mmio_notify(const struct shim_bar *bar, enum shim_mmio_op op,
				    uint64_t off, unsigned size)
{
	if (__builtin_expect(bar->hook != NULL, 0))
		bar->hook->access(bar->hook->ctx, op, off, size);
}

/* An empty CQ poll: 1 if the device's poll assist ran (poll again), 0 on hardware. */
static inline int shim_poll_assist(const struct shim_bar *bar)
{
	const struct shim_mmio_hook *h = bar ? bar->hook : NULL;

	if (__builtin_expect(h != NULL, 0) && h->poll_assist) {
		h->poll_assist(h->ctx);
		return 1;
	}
	return 0;
}

/* Whether the device wants to hear of CQ polls that returned completions (never on
 * hardware: one predictable branch). */
static inline int shim_wants_poll_found(const struct shim_bar *bar)
{
	const struct shim_mmio_hook *h = bar ? bar->hook : NULL;

	return __builtin_expect(h != NULL, 0) && h->poll_found;
}

static inline void shim_poll_found(const struct shim_bar *bar, uint32_t qpn)
{
	bar->hook->poll_found(bar->hook->ctx, qpn);
}

static inline uint32_t shim_mmio_read32(const struct shim_bar *bar, uint64_t off)
{
	shim_mmio_notify(bar, SHIM_MMIO_READ, off, 4);
	return be32toh(*(volatile uint32_t *)(bar->base + off));
}

static inline void shim_mmio_write32(const struct shim_bar *bar, uint64_t off, uint32_t v)
{
	*(volatile uint32_t *)(bar->base + off) = htobe32(v);
	shim_mmio_notify(bar, SHIM_MMIO_WRITE, off, 4);
}

/* 64-bit doorbell (PRM "UAR page": send doorbell is one 64-bit store of the first
 * 8 bytes of the ctrl segment, already big-endian in memory). */
static inline void shim_mmio_write64_raw(const struct shim_bar *bar, uint64_t off, uint64_t be_value)
{
	*(volatile uint64_t *)(bar->base + off) = be_value;
	shim_mmio_notify(bar, SHIM_MMIO_WRITE, off, 8);
}

#endif
