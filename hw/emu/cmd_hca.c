/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* HCA life cycle (PRM "HCA Initialization"): ENABLE_HCA, DISABLE_HCA, QUERY_ISSI,
 * SET_ISSI, INIT_HCA, TEARDOWN_HCA, QUERY_ADAPTER, SET_DRIVER_VERSION.
 *
 * States: DISABLED -ENABLE_HCA-> ENABLED -INIT_HCA-> INITIALIZED -TEARDOWN_HCA-> ENABLED
 * -DISABLE_HCA-> DISABLED.  INIT_HCA needs the boot and init pages it asked for;
 * DISABLE_HCA refuses while the device still holds pages (the driver must reclaim them
 * after TEARDOWN_HCA), as firmware does.
 */
#include <string.h>

#include "hw/emu/caps_seed.h"
#include "hw/emu/emu_dev.h"

#define EMU_ISSI_SUPPORTED 0x3u   /* supported_issi_dw0: ISSI 0 and 1 */

static int enable_hca(struct emu_dev *d, struct emu_cmd *c)
{
	if (PRM_GET(enable_hca_in, c->in, function_id) != 0)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_FUNCTION_ID);
	if (d->hca != EMU_HCA_DISABLED)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_SYS_STATE, PRM_SYND_BAD_SYSTEM_STATE);
	d->hca = EMU_HCA_ENABLED;
	/* A freshly enabled function asks for its boot and init pages again. */
	d->boot_pages = EMU_CAPS_SEED_BOOT_PAGES;
	d->init_pages = EMU_CAPS_SEED_INIT_PAGES;
	d->regular_pages = 0;
	return 0;
}

static int disable_hca(struct emu_dev *d, struct emu_cmd *c)
{
	if (PRM_GET(disable_hca_in, c->in, function_id) != 0)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_FUNCTION_ID);
	if (d->hca != EMU_HCA_ENABLED)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_SYS_STATE, PRM_SYND_BAD_SYSTEM_STATE);
	if (d->pages.n) {
		emu_drverr(d, "DISABLE_HCA with %zu firmware pages not reclaimed", d->pages.n);
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_SYS_STATE, PRM_SYND_PAGE_IN_USE);
	}
	d->hca = EMU_HCA_DISABLED;
	d->issi = 0;
	return 0;
}

static int query_issi(struct emu_dev *d, struct emu_cmd *c)
{
	PRM_SET(query_issi_out, c->out, current_issi, d->issi);
	PRM_SET(query_issi_out, c->out, supported_issi_dw0, EMU_ISSI_SUPPORTED);
	return 0;
}

static int set_issi(struct emu_dev *d, struct emu_cmd *c)
{
	uint64_t issi = PRM_GET(set_issi_in, c->in, current_issi);

	if (issi >= 32 || !((EMU_ISSI_SUPPORTED >> issi) & 1))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_ISSI);
	if (d->hca == EMU_HCA_INITIALIZED)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_SYS_STATE, PRM_SYND_BAD_SYSTEM_STATE);
	d->issi = (uint16_t)issi;
	return 0;
}

static int init_hca(struct emu_dev *d, struct emu_cmd *c)
{
	if (d->hca != EMU_HCA_ENABLED)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_SYS_STATE, PRM_SYND_BAD_SYSTEM_STATE);
	if (d->boot_pages || d->init_pages)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_SYS_STATE, PRM_SYND_NOT_ENOUGH_PAGES);
	d->hca = EMU_HCA_INITIALIZED;
	return 0;
}

static int teardown_hca(struct emu_dev *d, struct emu_cmd *c)
{
	uint64_t profile = PRM_GET(teardown_hca_in, c->in, profile);

	/* profile 0 graceful close, 1 force close (PRM TEARDOWN_HCA). */
	if (profile > 1)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_OP_MOD);
	if (d->hca != EMU_HCA_INITIALIZED)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_SYS_STATE, PRM_SYND_BAD_SYSTEM_STATE);
	emu_hca_teardown(d);
	d->hca = EMU_HCA_ENABLED;
	d->regular_pages = 0;
	d->auto_pages_phase = 0;
	PRM_SET(teardown_hca_out, c->out, state, 0);
	return 0;
}

static int query_adapter(struct emu_dev *d, struct emu_cmd *c)
{
	uint8_t *p = PRM_ADDR(query_adapter_out, c->out, query_adapter_struct);

	(void)d;
	memcpy(p, emu_caps_seed_adapter, PRM_SIZE(query_adapter_param_block));
	return 0;
}

/* SET_DRIVER_VERSION (0x10d): only a device that announces general cap driver_version
 * knows the command (the ConnectX-4 of the trace does not: cap=general.driver_version:1
 * turns it on); the string is logged, nothing else depends on it. */
static int set_driver_version(struct emu_dev *d, struct emu_cmd *c)
{
	const uint8_t *g = emu_cap(d, PRM_CAP_GENERAL_DEVICE, 1);
	char v[65] = { 0 };

	if (!g || !PRM_GET(cmd_hca_cap, g, driver_version))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_OP, PRM_SYND_BAD_OPCODE);
	memcpy(v, PRM_ADDR(set_driver_version_in, c->in, driver_version), 64);
	emu_log(d, EMU_LOG_INFO, "driver version \"%s\"", v);
	return 0;
}

static const struct emu_cmd_desc cmds[] = {
	EMU_CMD(ENABLE_HCA, EMU_CMDF_ANY_STATE, enable_hca_in, enable_hca_out, enable_hca),
	EMU_CMD(DISABLE_HCA, EMU_CMDF_ANY_STATE, disable_hca_in, disable_hca_out, disable_hca),
	EMU_CMD(QUERY_ISSI, EMU_CMDF_ANY_STATE, query_issi_in, query_issi_out, query_issi),
	EMU_CMD(SET_ISSI, EMU_CMDF_ENABLED, set_issi_in, set_issi_out, set_issi),
	/* mlx5_core before ISSI 1 sends 16 bytes (no sw_owner_id): accepted. */
	EMU_CMD_LEN(INIT_HCA, EMU_CMDF_ANY_STATE, PRM_SIZE(cmd_in) + 8, PRM_SIZE(init_hca_out), init_hca),
	EMU_CMD(TEARDOWN_HCA, EMU_CMDF_ANY_STATE, teardown_hca_in, teardown_hca_out, teardown_hca),
	EMU_CMD(QUERY_ADAPTER, EMU_CMDF_ENABLED, query_adapter_in, query_adapter_out, query_adapter),
	EMU_CMD(SET_DRIVER_VERSION, EMU_CMDF_ENABLED, set_driver_version_in, set_driver_version_out,
		set_driver_version),
};

const struct emu_cmd_area emu_area_hca = { .name = "hca", .cmds = cmds, .ncmds = EMU_NCMDS(cmds) };
