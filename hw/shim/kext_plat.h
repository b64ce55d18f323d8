/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/shim/kext_plat.h: what the kext shim (kext.c) needs from its platform beside
 * IOKit's API.  On a Mac (kext_plat_macos.c) nothing: BAR0 is the card's, stores reach
 * it without help.  On Linux (kext_plat_linux.c) kext.c runs against the IOKit
 * stand-in (shim-kext/standin), whose function is the emulated ConnectX: its BAR is
 * plain memory whose stores the device learns of through the MMIO hook, as with emu:. */
#ifndef UVERBS_HW_SHIM_KEXT_PLAT_H
#define UVERBS_HW_SHIM_KEXT_PLAT_H

#include <stdint.h>

#include "hw/shim/shim.h"

/* The BAR hook of the function behind connection `conn` (an io_connect_t): 1 and *hook
 * filled when stores need one, 0 on hardware. */
int kext_plat_bar_hook(uint32_t conn, struct shim_mmio_hook *hook);
/* The emulated device behind it (struct emu_dev, for tests and counters), or NULL. */
void *kext_plat_emulated(uint32_t conn);
/* shim_ops port_addrs and neigh (shim.h): a function that is its own network (the
 * stand-in's emulated port on 127.0.0.0/8) says its address and its neighbours' MACs;
 * on a Mac the user configures both (uverbs/netcfg.c): 0 addresses, -ENOENT. */
int kext_plat_port_addrs(uint32_t conn, unsigned port, uint8_t (*addrs)[16], unsigned max);
int kext_plat_neigh(uint32_t conn, const uint8_t addr[16], uint8_t mac[6]);

#endif
