/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The RoCE GID table (PRM SET_ROCE_ADDRESS 0x761, roce_addr_layout).  Each entry binds
 * a GID (IPv6, or IPv4-mapped ::ffff:a.b.c.d) to a source MAC and a RoCE version; the
 * QP address path selects one by index (ads.src_addr_index).  The driver keeps its own
 * copy of what it programmed, which is what verbs' query_gid reports. */
#include <errno.h>
#include <string.h>

#include "hw/mlx5/mx5_internal.h"

/* roce_addr_layout.roce_version / roce_l3_type values (Linux MLX5_ROCE_VERSION_2,
 * MLX5_ROCE_L3_TYPE_IPV4/IPV6). */
enum { MX5_ROCE_VERSION_1 = 0, MX5_ROCE_VERSION_2 = 2 };
enum { MX5_ROCE_L3_IPV4 = 0, MX5_ROCE_L3_IPV6 = 1 };

static const uint8_t mx5_v4mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

unsigned mx5_gid_table_len(const struct mx5_device *dev)
{
	unsigned n = 0;
	if (dev->have_caps[MX5_CAP_ROCE])
		n = (unsigned)PRM_GET(roce_cap, dev->caps[MX5_CAP_ROCE][1], roce_address_table_size);
	if (!n && dev->have_caps[MX5_CAP_GENERAL])
		n = (unsigned)PRM_GET(cmd_hca_cap, dev->caps[MX5_CAP_GENERAL][1], gid_table_size);
	return n > MX5_GID_MAX ? MX5_GID_MAX : n;
}

static int mx5_gid_write(struct mx5_device *dev, uint8_t port, unsigned index,
			 const struct mx5_gid_entry *e)
{
	if (port < 1 || port > MX5_MAX_PORTS)
		return mx5_fail(dev, -EINVAL, "SET_ROCE_ADDRESS: port %u does not exist", port);
	unsigned len = mx5_gid_table_len(dev);
	if (index >= len)
		return mx5_fail(dev, -EINVAL,
				"SET_ROCE_ADDRESS: GID index %u exceeds device limit %u "
				"(roce_address_table_size)", index, len);
	uint8_t in[PRM_SIZE(set_roce_address_in)] = { 0 }, out[PRM_SIZE(set_roce_address_out)];
	PRM_SET(set_roce_address_in, in, opcode, PRM_CMD_OP_SET_ROCE_ADDRESS);
	PRM_SET(set_roce_address_in, in, roce_address_index, index);
	if (MX5_CAP_GEN(dev, num_vhca_ports) > 0)
		PRM_SET(set_roce_address_in, in, vhca_port_num, port);
	if (e) {
		uint8_t *a = PRM_ADDR(set_roce_address_in, in, roce_address);
		memcpy(PRM_ADDR(roce_addr_layout, a, source_l3_address), e->gid, 16);
		PRM_SET(roce_addr_layout, a, source_mac_47_32,
			((uint32_t)e->mac[0] << 8) | e->mac[1]);
		PRM_SET(roce_addr_layout, a, source_mac_31_0,
			((uint32_t)e->mac[2] << 24) | ((uint32_t)e->mac[3] << 16) |
			((uint32_t)e->mac[4] << 8) | e->mac[5]);
		if (e->vlan_id != 0xffff && e->vlan_id < 4096) {
			PRM_SET(roce_addr_layout, a, vlan_valid, 1);
			PRM_SET(roce_addr_layout, a, vlan_id, e->vlan_id);
		}
		bool v4 = memcmp(e->gid, mx5_v4mapped_prefix, 12) == 0;
		PRM_SET(roce_addr_layout, a, roce_version,
			e->type == MX5_GID_ROCE_V1 ? MX5_ROCE_VERSION_1 : MX5_ROCE_VERSION_2);
		PRM_SET(roce_addr_layout, a, roce_l3_type, v4 ? MX5_ROCE_L3_IPV4 : MX5_ROCE_L3_IPV6);
	}
	int rc = mx5_exec(dev, in, sizeof(in), out, sizeof(out));
	if (rc)
		return rc;
	struct mx5_gid_entry *slot = &dev->gids[port - 1][index];
	if (e) {
		*slot = *e;
		slot->ipv4 = memcmp(e->gid, mx5_v4mapped_prefix, 12) == 0;
		slot->valid = 1;
	} else {
		memset(slot, 0, sizeof(*slot));
	}
	return 0;
}

void mx5_gid_entry_ipv4(struct mx5_gid_entry *e, uint32_t ipv4, const uint8_t mac[6])
{
	memset(e, 0, sizeof(*e));
	memcpy(e->gid, mx5_v4mapped_prefix, 12);
	e->gid[12] = (uint8_t)(ipv4 >> 24);
	e->gid[13] = (uint8_t)(ipv4 >> 16);
	e->gid[14] = (uint8_t)(ipv4 >> 8);
	e->gid[15] = (uint8_t)ipv4;
	memcpy(e->mac, mac, 6);
	e->type = MX5_GID_ROCE_V2;
	e->ipv4 = 1;
	e->vlan_id = 0xffff;
	e->valid = 1;
}

void mx5_gid_entry_ip(struct mx5_gid_entry *e, const uint8_t gid[16], const uint8_t mac[6])
{
	memset(e, 0, sizeof(*e));
	memcpy(e->gid, gid, 16);
	memcpy(e->mac, mac, 6);
	e->type = MX5_GID_ROCE_V2;
	e->ipv4 = memcmp(gid, mx5_v4mapped_prefix, 12) == 0;
	e->vlan_id = 0xffff;
	e->valid = 1;
}

void mx5_gid_entry_link_local(struct mx5_gid_entry *e, const uint8_t mac[6])
{
	uint8_t g[16] = { 0xfe, 0x80 };
	g[8] = mac[0] ^ 0x02;	/* universal/local bit inverted (RFC 4291 appendix A) */
	g[9] = mac[1];
	g[10] = mac[2];
	g[11] = 0xff;
	g[12] = 0xfe;
	g[13] = mac[3];
	g[14] = mac[4];
	g[15] = mac[5];
	mx5_gid_entry_ip(e, g, mac);
}

bool mx5_gid_valid(const struct mx5_device *dev, uint8_t port, unsigned index)
{
	return dev && port >= 1 && port <= MX5_MAX_PORTS && index < mx5_gid_table_len(dev) &&
	       dev->gids[port - 1][index].valid;
}

int mx5_gid_set(struct mx5_device *dev, uint8_t port, unsigned index,
		const struct mx5_gid_entry *e)
{
	if (!dev || !e)
		return -EINVAL;
	return mx5_gid_write(dev, port, index, e);
}

int mx5_gid_clear(struct mx5_device *dev, uint8_t port, unsigned index)
{
	if (!dev)
		return -EINVAL;
	return mx5_gid_write(dev, port, index, NULL);
}

int mx5_gid_get(const struct mx5_device *dev, uint8_t port, unsigned index,
		struct mx5_gid_entry *e)
{
	if (!dev || !e || port < 1 || port > MX5_MAX_PORTS || index >= mx5_gid_table_len(dev))
		return -EINVAL;
	*e = dev->gids[port - 1][index];
	return 0;
}
