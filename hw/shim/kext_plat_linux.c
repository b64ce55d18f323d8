/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The kext shim's platform on Linux (kext_plat.h): the IOKit stand-in's function is the
 * emulated ConnectX, whose BAR stores act through the device's MMIO hook: called here
 * when the stand-in's kernel is in this process, or sent to it when it is a process of
 * its own (UVERBS_KEXT_STANDIN_KERNEL, shim-kext/standin/kernel_proto.h), where the
 * store itself already landed in the shared BAR. */
#include <errno.h>
#include <string.h>

#include "hw/emu/emu.h"
#include "hw/shim/kext_plat.h"
#include "shim-kext/standin/standin.h"

static void hook_access(void *ctx, enum shim_mmio_op op, uint64_t off, unsigned size)
{
	emu_mmio_access(ctx, (int)op, off, size);
}

static void hook_poll_assist(void *ctx)
{
	emu_poll_assist(ctx);
}

static void hook_poll_found(void *ctx, uint32_t qpn)
{
	emu_poll_found(ctx, qpn);
}

static void hook_remote_access(void *ctx, enum shim_mmio_op op, uint64_t off, unsigned size)
{
	uvshim_standin_mmio((io_connect_t)(uintptr_t)ctx, (int)op, off, size);
}

int kext_plat_bar_hook(uint32_t conn, struct shim_mmio_hook *hook)
{
	struct emu_dev *e = uvshim_standin_emu_of(conn);

	if (!e && uvshim_standin_remote_of(conn)) {
		/* The device is in the kernel's process: no poll assist (as on hardware, it
		 * moves packets on its own thread). */
		memset(hook, 0, sizeof(*hook));
		hook->access = hook_remote_access;
		hook->ctx = (void *)(uintptr_t)conn;
		return 1;
	}
	if (!e)
		return 0;
	hook->access = hook_access;
	hook->ctx = e;
	hook->poll_assist = hook_poll_assist;
	hook->poll_found = hook_poll_found;
	return 1;
}

void *kext_plat_emulated(uint32_t conn)
{
	return uvshim_standin_emu_of(conn);
}

/* As the emu: shim (emu.c): the port answers on the emulated device's loopback address,
 * an IPv4-mapped GID (RFC 4291 2.5.5.2), and ARP on the emulated segment is emu_neigh. */
int kext_plat_port_addrs(uint32_t conn, unsigned port, uint8_t (*addrs)[16], unsigned max)
{
	struct emu_dev *e = uvshim_standin_emu_of(conn);
	uint32_t a = e ? emu_ipv4(e) : uvshim_standin_ipv4(conn);

	if (port != 1 || max < 1 || !a)
		return 0;
	memset(addrs[0], 0, 16);
	addrs[0][10] = addrs[0][11] = 0xff;
	addrs[0][12] = (uint8_t)(a >> 24);
	addrs[0][13] = (uint8_t)(a >> 16);
	addrs[0][14] = (uint8_t)(a >> 8);
	addrs[0][15] = (uint8_t)a;
	return 1;
}

int kext_plat_neigh(uint32_t conn, const uint8_t addr[16], uint8_t mac[6])
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if ((!uvshim_standin_emu_of(conn) && !uvshim_standin_remote_of(conn)) || memcmp(addr, v4mapped, 12))
		return -ENOENT;
	return emu_neigh((uint32_t)addr[12] << 24 | (uint32_t)addr[13] << 16 | (uint32_t)addr[14] << 8 | addr[15], mac);
}
