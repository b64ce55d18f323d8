/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Sharing a kext-owned function with other processes (shim-kext/include/uvshim_abi.h,
 * ABI 1.1, "Guests"): what a device daemon (tools/uvd) and its clients need beyond the
 * shim interface.
 *
 * The owner grants a client's pid one host page of the UAR region (shim_ops.share_uar)
 * and wires the client's memory for the device (shim_ops.pin_for).  The client opens
 * the function as a guest and maps exactly that page (shim_kext_guest_open, on a Mac
 * with the kext; hw/shim/kext.c).  The arithmetic both sides share is here, in plain
 * C, so it is built and tested on every system. */
#ifndef SHIM_KEXT_GUEST_H
#define SHIM_KEXT_GUEST_H

#include <stddef.h>
#include <stdint.h>

#include "shim-kext/include/uvshim_abi.h"

/* The kext's index (GRANT, REVOKE) of the host page of the UAR region holding BAR0
 * offset bar_off: (bar_off - uar_offset) / page_size.  -EINVAL outside the region or
 * for a device description without one. */
int shim_kext_uar_index(const struct uvshim_info_rep *info, uint64_t bar_off, uint32_t *index);

/* The MAP_BAR request for the granted host page holding bar_off, with cache mode
 * cache (enum uvshim_cache).  -EINVAL as shim_kext_uar_index. */
int shim_kext_guest_window(const struct uvshim_info_rep *info, uint64_t bar_off, uint32_t cache,
			   struct uvshim_map_bar_req *req);

/* On a Mac with the kext (hw/shim/kext.c): open function kext:<index> as a guest and
 * map the granted host page holding bar_off.  *uar points at that page, *len bytes;
 * the device's UAR page for bar_off is at *uar + (bar_off % *len).  0 or -errno, the
 * reason in err. */
struct shim_kext_guest;
int shim_kext_guest_open(unsigned index, uint64_t bar_off, struct shim_kext_guest **out, volatile void **uar,
			 size_t *len, char *err, size_t errlen);
void shim_kext_guest_close(struct shim_kext_guest *g);
/* The BAR hook the device behind the guest's page needs after each store into it (the
 * IOKit stand-in on Linux: the emulated device learns of the store from it), or NULL
 * (a Mac: the store reaches the card by itself). */
struct shim_mmio_hook;
const struct shim_mmio_hook *shim_kext_guest_hook(struct shim_kext_guest *g);

#endif
