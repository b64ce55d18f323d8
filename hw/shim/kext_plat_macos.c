/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The kext shim's platform on a Mac (kext_plat.h): the card's BAR needs no hook. */
#include "hw/shim/kext_plat.h"

int kext_plat_bar_hook(uint32_t conn, struct shim_mmio_hook *hook)
{
	(void)conn;
	(void)hook;
	return 0;
}

void *kext_plat_emulated(uint32_t conn)
{
	(void)conn;
	return 0;
}

int kext_plat_port_addrs(uint32_t conn, unsigned port, uint8_t (*addrs)[16], unsigned max)
{
	(void)conn;
	(void)port;
	(void)addrs;
	(void)max;
	return 0;
}

int kext_plat_neigh(uint32_t conn, const uint8_t addr[16], uint8_t mac[6])
{
	(void)conn;
	(void)addr;
	(void)mac;
	return -2; /* -ENOENT */
}
