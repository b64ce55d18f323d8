/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The RoCE address (GID) table (PRM "RoCE Address Table"): SET_ROCE_ADDRESS (0x761),
 * QUERY_ROCE_ADDRESS (0x760), and QUERY_HCA_VPORT_GID (0x764) reading the same table;
 * and the port's P_Key table, QUERY_HCA_VPORT_PKEY (0x765).
 *
 * Entries are roce_addr_layout images, roce_address_table_size of them (RoCE caps).
 * An entry is RoCE v1 (roce_version 0) or v2 (2), L3 type IPv4 (0) or IPv6 (1); an
 * IPv4 entry holds its address IPv4-mapped (::ffff:a.b.c.d), as Linux writes it.  An
 * all-zero entry is an empty slot.  Our GID is ::ffff:127.0.0.N (hw/emu/netaddr.h).
 */
#include <stdlib.h>
#include <string.h>

#include "hw/emu/emu_dev.h"
#include "hw/emu/roce_hdr.h"

#define ROCE_ENTRY PRM_SIZE(roce_addr_layout)
#define GID_BYTES 16
enum { ROCE_V1 = 0, ROCE_V2 = 2 };
enum { L3_IPV4 = 0, L3_IPV6 = 1 };

struct gid_tab {
	uint32_t n;
	uint8_t e[][ROCE_ENTRY];
};

static struct gid_tab *tab(struct emu_dev *d)
{
	return d->gid_tab;
}

static int roce_init(struct emu_dev *d)
{
	uint8_t *rc = emu_cap(d, PRM_CAP_ROCE, 1);
	uint32_t n = rc ? (uint32_t)PRM_GET(roce_cap, rc, roce_address_table_size) : 0;
	struct gid_tab *t;

	if (!n)
		n = 256;
	t = calloc(1, sizeof(*t) + (size_t)n * ROCE_ENTRY);
	if (!t)
		return -12; /* -ENOMEM */
	t->n = n;
	d->gid_tab = t;
	return 0;
}

static void roce_fini(struct emu_dev *d)
{
	free(d->gid_tab);
	d->gid_tab = NULL;
}

static void roce_teardown(struct emu_dev *d)
{
	struct gid_tab *t = tab(d);

	if (t)
		memset(t->e, 0, (size_t)t->n * ROCE_ENTRY);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

static bool ipv4_mapped(const uint8_t *gid)
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(gid, prefix, sizeof(prefix)) == 0;
}

bool emu_gid_valid(struct emu_dev *d, uint32_t idx)
{
	struct gid_tab *t = tab(d);

	return t && idx < t->n && !all_zero(t->e[idx], ROCE_ENTRY);
}

static int port_ok(uint64_t port)
{
	return port <= 1; /* 0 means "this port" on a single-port function */
}

static int set_roce_address(struct emu_dev *d, struct emu_cmd *c)
{
	uint64_t idx = PRM_GET(set_roce_address_in, c->in, roce_address_index);
	const uint8_t *e = PRM_ADDR(set_roce_address_in, c->in, roce_address);
	const uint8_t *gid = PRM_ADDR(roce_addr_layout, e, source_l3_address);
	struct gid_tab *t = tab(d);

	if (!port_ok(PRM_GET(set_roce_address_in, c->in, vhca_port_num)))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PORT);
	if (idx >= t->n)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_GID_INDEX);
	if (!all_zero(e, ROCE_ENTRY)) {
		uint64_t ver = PRM_GET(roce_addr_layout, e, roce_version);
		uint64_t l3 = PRM_GET(roce_addr_layout, e, roce_l3_type);

		if ((ver != ROCE_V1 && ver != ROCE_V2) || (l3 != L3_IPV4 && l3 != L3_IPV6) ||
		    (l3 == L3_IPV4 && !ipv4_mapped(gid)) || all_zero(gid, GID_BYTES))
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_ROCE_ADDRESS);
	}
	memcpy(t->e[idx], e, ROCE_ENTRY);
	return 0;
}

static int query_roce_address(struct emu_dev *d, struct emu_cmd *c)
{
	uint64_t idx = PRM_GET(query_roce_address_in, c->in, roce_address_index);
	struct gid_tab *t = tab(d);

	if (!port_ok(PRM_GET(query_roce_address_in, c->in, vhca_port_num)))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PORT);
	if (idx >= t->n)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_GID_INDEX);
	memcpy(PRM_ADDR(query_roce_address_out, c->out, roce_address), t->e[idx], ROCE_ENTRY);
	return 0;
}

/* gid_index 0xffff asks for the whole table (PRM QUERY_HCA_VPORT_GID). */
static int query_hca_vport_gid(struct emu_dev *d, struct emu_cmd *c)
{
	uint64_t idx = PRM_GET(query_hca_vport_gid_in, c->in, gid_index);
	size_t off = PRM_OFF(query_hca_vport_gid_out, gid) / 8;
	struct gid_tab *t = tab(d);
	uint32_t first = (uint32_t)idx, n = 1;

	if (PRM_GET(query_hca_vport_gid_in, c->in, other_vport) ||
	    !port_ok(PRM_GET(query_hca_vport_gid_in, c->in, port_num)))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PORT);
	if (idx == 0xffff) {
		first = 0;
		n = t->n;
	} else if (idx >= t->n) {
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_GID_INDEX);
	}
	if (c->outlen < off + (size_t)n * GID_BYTES)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_OUTP_LEN, PRM_SYND_OUTPUT_TOO_SHORT);
	PRM_SET(query_hca_vport_gid_out, c->out, gids_num, n);
	for (uint32_t i = 0; i < n; i++)
		memcpy(c->out + off + (size_t)i * GID_BYTES,
		       PRM_ADDR(roce_addr_layout, t->e[first + i], source_l3_address), GID_BYTES);
	return 0;
}

/* QUERY_HCA_VPORT_PKEY: this port's P_Key table has pkey_table_size entries (128 <<
 * cmd_hca_cap.pkey_table_size, Linux mlx5_to_sw_pkey_sz), the default P_Key 0xffff (full
 * member, IBTA 10.9.1.1) at index 0 and the rest empty: a RoCE port takes every packet's
 * BTH P_Key against the default only (rx_check.c).  pkey_index 0xffff asks for the whole
 * table (Linux vport.c mlx5_query_hca_vport_pkey); Linux's mlx5_ib reads index 0 while it
 * registers (ib_query_pkey from the core's P_Key cache) and fails without it. */
static int query_hca_vport_pkey(struct emu_dev *d, struct emu_cmd *c)
{
	const uint8_t *g = emu_cap(d, PRM_CAP_GENERAL_DEVICE, 1);
	uint64_t idx = PRM_GET(query_hca_vport_pkey_in, c->in, pkey_index);
	size_t off = PRM_OFF(query_hca_vport_pkey_out, pkey) / 8, entry = PRM_SIZE(pkey);
	uint32_t size = 128u << (g ? (unsigned)PRM_GET(cmd_hca_cap, g, pkey_table_size) : 0u);
	uint32_t n = idx == 0xffff ? size : 1;

	if (PRM_GET(query_hca_vport_pkey_in, c->in, other_vport) ||
	    !port_ok(PRM_GET(query_hca_vport_pkey_in, c->in, port_num)))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PORT);
	if (idx != 0xffff && idx >= size)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PKEY_INDEX);
	if (c->outlen < off + (size_t)n * entry)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_OUTP_LEN, PRM_SYND_OUTPUT_TOO_SHORT);
	if (idx == 0 || idx == 0xffff)
		PRM_SET(pkey, c->out + off, pkey, EMU_ROCE_DEFAULT_PKEY);
	return 0;
}

static const struct emu_cmd_desc cmds[] = {
	EMU_CMD(SET_ROCE_ADDRESS, EMU_CMDF_INIT, set_roce_address_in, set_roce_address_out, set_roce_address),
	EMU_CMD(QUERY_ROCE_ADDRESS, EMU_CMDF_INIT, query_roce_address_in, query_roce_address_out, query_roce_address),
	EMU_CMD(QUERY_HCA_VPORT_GID, EMU_CMDF_INIT, query_hca_vport_gid_in, query_hca_vport_gid_out,
		query_hca_vport_gid),
	EMU_CMD(QUERY_HCA_VPORT_PKEY, EMU_CMDF_INIT, query_hca_vport_pkey_in, query_hca_vport_pkey_out,
		query_hca_vport_pkey),
};

const struct emu_cmd_area emu_area_roce = {
	.name = "roce", .cmds = cmds, .ncmds = EMU_NCMDS(cmds),
	.init = roce_init, .fini = roce_fini, .teardown = roce_teardown,
};
