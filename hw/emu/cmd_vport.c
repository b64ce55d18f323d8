/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* NIC vport (PRM "NIC Vport Context"): QUERY/MODIFY_NIC_VPORT_CONTEXT (0x754/0x755)
 * and QUERY_VPORT_STATE (0x750).  Only our own vport (other_vport 0, vport 0) exists.
 * The permanent MAC is derived from the RoCE address (hw/emu/netaddr.h):
 * 02:00:a.b.c.d, locally administered; the GUIDs are its EUI-64. */
#include <string.h>

#include "hw/emu/emu_dev.h"

#define EMU_MAX_VPORT_MTU 9216u  /* what PMTU reports as max_mtu (cmd_reg.c) */

enum { VPORT_STATE_DOWN = 0x0, VPORT_STATE_UP = 0x1, VPORT_ADMIN_FOLLOW = 0x2 };

static void mac_of(const struct emu_dev *d, uint8_t mac[6])
{
	mac[0] = 0x02;
	mac[1] = 0x00;
	mac[2] = (uint8_t)(d->ipv4 >> 24);
	mac[3] = (uint8_t)(d->ipv4 >> 16);
	mac[4] = (uint8_t)(d->ipv4 >> 8);
	mac[5] = (uint8_t)d->ipv4;
}

static uint64_t eui64(const uint8_t mac[6])
{
	return ((uint64_t)(mac[0] ^ 0x02) << 56) | ((uint64_t)mac[1] << 48) | ((uint64_t)mac[2] << 40) |
	       (0xfffeull << 24) | ((uint64_t)mac[3] << 16) | ((uint64_t)mac[4] << 8) | mac[5];
}

static int vport_init(struct emu_dev *d)
{
	mac_of(d, d->mac);
	d->mtu = 1500;
	return 0;
}

static int own_vport(const struct emu_cmd *c, uint64_t other, uint64_t num)
{
	(void)c;
	return other == 0 && num == 0;
}

static int query_nic_vport_context(struct emu_dev *d, struct emu_cmd *c)
{
	uint8_t *ctx = PRM_ADDR(query_nic_vport_context_out, c->out, nic_vport_context);
	uint8_t *mac = PRM_ADDR(nic_vport_context, ctx, permanent_address);
	uint64_t guid = eui64(d->mac);

	if (!own_vport(c, PRM_GET(query_nic_vport_context_in, c->in, other_vport),
		       PRM_GET(query_nic_vport_context_in, c->in, vport_number)))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PORT);
	PRM_SET(nic_vport_context, ctx, roce_en, d->roce_en);
	PRM_SET(nic_vport_context, ctx, mtu, d->mtu);
	PRM_SET(nic_vport_context, ctx, system_image_guid, guid);
	PRM_SET(nic_vport_context, ctx, port_guid, guid);
	PRM_SET(nic_vport_context, ctx, node_guid, guid);
	PRM_SET(mac_address_layout, mac, mac_addr_47_32, emu_mac_47_32(d->mac));
	PRM_SET(mac_address_layout, mac, mac_addr_31_0, emu_mac_31_0(d->mac));
	return 0;
}

static int modify_nic_vport_context(struct emu_dev *d, struct emu_cmd *c)
{
	const uint8_t *sel = PRM_ADDR(modify_nic_vport_context_in, c->in, field_select);
	const uint8_t *ctx = PRM_ADDR(modify_nic_vport_context_in, c->in, nic_vport_context);

	if (!own_vport(c, PRM_GET(modify_nic_vport_context_in, c->in, other_vport),
		       PRM_GET(modify_nic_vport_context_in, c->in, vport_number)))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PORT);
	/* Validate every selected field before changing anything. */
	if (PRM_GET(modify_nic_vport_field_select, sel, mtu)) {
		uint64_t mtu = PRM_GET(nic_vport_context, ctx, mtu);

		if (mtu < 68 || mtu > EMU_MAX_VPORT_MTU)
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_MTU);
	}
	if (PRM_GET(modify_nic_vport_field_select, sel, roce_en))
		d->roce_en = PRM_GET(nic_vport_context, ctx, roce_en);
	if (PRM_GET(modify_nic_vport_field_select, sel, mtu))
		d->mtu = (uint16_t)PRM_GET(nic_vport_context, ctx, mtu);
	if (PRM_GET(modify_nic_vport_field_select, sel, permanent_address)) {
		const uint8_t *mac = PRM_ADDR(nic_vport_context, ctx, permanent_address);
		uint32_t hi = (uint32_t)PRM_GET(mac_address_layout, mac, mac_addr_47_32);
		uint32_t lo = (uint32_t)PRM_GET(mac_address_layout, mac, mac_addr_31_0);

		emu_mac_from_prm(d->mac, hi, lo);
	}
	/* Other selectable fields (promiscuity, loopback, change events, address lists)
	 * are accepted and have no effect on a single-function emulated port. */
	return 0;
}

static int query_vport_state(struct emu_dev *d, struct emu_cmd *c)
{
	if (!own_vport(c, PRM_GET(query_vport_state_in, c->in, other_vport),
		       PRM_GET(query_vport_state_in, c->in, vport_number)))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PORT);
	PRM_SET(query_vport_state_out, c->out, admin_state, VPORT_ADMIN_FOLLOW);
	PRM_SET(query_vport_state_out, c->out, state, emu_port_oper(d) ? VPORT_STATE_UP : VPORT_STATE_DOWN);
	return 0;
}

static const struct emu_cmd_desc cmds[] = {
	EMU_CMD(QUERY_NIC_VPORT_CONTEXT, EMU_CMDF_INIT, query_nic_vport_context_in, query_nic_vport_context_out,
		query_nic_vport_context),
	EMU_CMD(MODIFY_NIC_VPORT_CONTEXT, EMU_CMDF_INIT, modify_nic_vport_context_in, modify_nic_vport_context_out,
		modify_nic_vport_context),
	EMU_CMD(QUERY_VPORT_STATE, EMU_CMDF_INIT, query_vport_state_in, query_vport_state_out, query_vport_state),
};

const struct emu_cmd_area emu_area_vport = {
	.name = "vport", .cmds = cmds, .ncmds = EMU_NCMDS(cmds), .init = vport_init,
};
