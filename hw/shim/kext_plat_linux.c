/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The kext shim's platform on Linux (kext_plat.h): the IOKit stand-in's function is the
 * emulated ConnectX, whose BAR stores act through the device's MMIO hook. */
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

int kext_plat_bar_hook(uint32_t conn, struct shim_mmio_hook *hook)
{
	struct emu_dev *e = uvshim_standin_emu_of(conn);

	if (!e)
		return 0;
	hook->access = hook_access;
	hook->ctx = e;
	hook->poll_assist = hook_poll_assist;
	return 1;
}

void *kext_plat_emulated(uint32_t conn)
{
	return uvshim_standin_emu_of(conn);
}
