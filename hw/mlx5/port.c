/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Port state and MTU: the NIC vport (QUERY/MODIFY_NIC_VPORT_CONTEXT, QUERY_VPORT_STATE)
 * and the port registers through ACCESS_REG (PAOS 0x5006, PMTU 0x5003, PTYS 0x5004). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw/mlx5/mx5_internal.h"


enum { MX5_ACCESS_REG_WRITE = 0, MX5_ACCESS_REG_READ = 1 };  /* access_register_in.op_mod */

/* One field of the NIC vport context through MODIFY_NIC_VPORT_CONTEXT, named in its
 * field_select (PRM "MODIFY_NIC_VPORT_CONTEXT"): roce_en or mtu. */
enum mx5_vport_field { MX5_VPORT_ROCE_EN, MX5_VPORT_MTU };

static int mx5_vport_modify(struct mx5_device *dev, enum mx5_vport_field field, uint32_t value, const char *what)
{
	uint8_t *in = calloc(1, PRM_SIZE(modify_nic_vport_context_in));
	uint8_t out[PRM_SIZE(modify_nic_vport_context_out)];
	if (!in)
		return mx5_fail(dev, -ENOMEM, "%s: MODIFY_NIC_VPORT_CONTEXT: out of memory", what);
	PRM_SET(modify_nic_vport_context_in, in, opcode, PRM_CMD_OP_MODIFY_NIC_VPORT_CONTEXT);
	uint8_t *fs = PRM_ADDR(modify_nic_vport_context_in, in, field_select);
	uint8_t *ctx = PRM_ADDR(modify_nic_vport_context_in, in, nic_vport_context);
	if (field == MX5_VPORT_MTU) {
		PRM_SET(modify_nic_vport_field_select, fs, mtu, 1);
		PRM_SET(nic_vport_context, ctx, mtu, value);
	} else {
		PRM_SET(modify_nic_vport_field_select, fs, roce_en, 1);
		PRM_SET(nic_vport_context, ctx, roce_en, value);
	}
	int rc = mx5_exec(dev, in, PRM_SIZE(modify_nic_vport_context_in), out, sizeof(out));
	free(in);
	return rc ? mx5_cmd_fail(dev, rc, what) : 0;
}

/* RoCE on the NIC vport (nic_vport_context.roce_en through field_select.roce_en): the
 * device drops RoCE traffic for a function that has not enabled it. */
int mx5_vport_roce(struct mx5_device *dev, bool enable)
{
	int rc = mx5_vport_modify(dev, MX5_VPORT_ROCE_EN, enable ? 1 : 0, enable ? "bring-up" : "teardown");
	if (!rc)
		dev->roce_enabled = enable;
	return rc;
}

int mx5_access_reg(struct mx5_device *dev, uint16_t reg_id, int write, uint32_t arg,
		   const void *data_in, void *data_out, size_t len)
{
	if (!dev || !len || len > 4096)
		return -EINVAL;
	size_t inlen = PRM_SIZE(access_register_in) + len;
	size_t outlen = PRM_SIZE(access_register_out) + len;
	uint8_t *in = calloc(1, inlen), *out = calloc(1, outlen);
	int rc;
	if (!in || !out) {
		rc = -ENOMEM;
		goto done;
	}
	PRM_SET(access_register_in, in, opcode, PRM_CMD_OP_ACCESS_REG);
	PRM_SET(access_register_in, in, op_mod, write ? MX5_ACCESS_REG_WRITE : MX5_ACCESS_REG_READ);
	PRM_SET(access_register_in, in, register_id, reg_id);
	PRM_SET(access_register_in, in, argument, arg);
	if (data_in)
		memcpy(PRM_ADDR(access_register_in, in, register_data), data_in, len);
	rc = mx5_exec(dev, in, inlen, out, outlen);
	if (!rc && data_out)
		memcpy(data_out, PRM_ADDR(access_register_out, out, register_data), len);
done:
	free(in);
	free(out);
	return rc;
}

/* PMTU/PTYS/PAOS read for a local port (1-based). */
static int mx5_reg_read(struct mx5_device *dev, uint16_t id, uint8_t port, void *reg, size_t len)
{
	memset(reg, 0, len);
	switch (id) {
	case MX5_REG_PAOS: PRM_SET(paos_reg, reg, local_port, port); break;
	case MX5_REG_PMTU: PRM_SET(pmtu_reg, reg, local_port, port); break;
	case MX5_REG_PTYS:
		PRM_SET(ptys_reg, reg, local_port, port);
		PRM_SET(ptys_reg, reg, proto_mask, 1u << 2); /* Ethernet (PRM PTYS proto_mask) */
		break;
	}
	return mx5_access_reg(dev, id, 0, 0, reg, reg, len);
}

/* eth_proto_oper bits (PRM PTYS "Ethernet protocols"; Linux en_ethtool's table) to Mb/s. */
static uint32_t mx5_eth_speed(uint32_t oper)
{
	static const struct { uint8_t bit; uint32_t mbps; } t[] = {
		{ 0, 1000 }, { 1, 1000 }, { 2, 10000 }, { 3, 10000 }, { 4, 10000 },
		{ 6, 40000 }, { 7, 40000 }, { 8, 40000 }, { 9, 56000 }, { 12, 10000 },
		{ 13, 10000 }, { 14, 10000 }, { 15, 40000 }, { 16, 40000 }, { 20, 100000 },
		{ 21, 100000 }, { 22, 100000 }, { 23, 100000 }, { 24, 100000 }, { 25, 100000 },
		{ 26, 100000 }, { 27, 25000 }, { 28, 25000 }, { 29, 25000 }, { 30, 50000 },
		{ 31, 50000 },
	};
	uint32_t best = 0;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if ((oper & (1u << t[i].bit)) && t[i].mbps > best)
			best = t[i].mbps;
	return best;
}

/* ext_eth_proto_oper bits (PRM PTYS extended Ethernet protocols) to Mb/s, the facts
 * of Linux core/port.c mlx5e_ext_link_info (bit numbers: include/linux/mlx5/port.h
 * enum mlx5e_ext_link_mode). */
static uint32_t mx5_ext_eth_speed(uint32_t oper)
{
	static const struct { uint8_t bit; uint32_t mbps; } t[] = {
		{ 0, 100 }, { 1, 1000 }, { 3, 5000 }, { 4, 10000 }, { 5, 40000 }, { 6, 25000 },
		{ 7, 50000 }, { 8, 50000 }, { 9, 100000 }, { 10, 100000 }, { 11, 100000 },
		{ 12, 200000 }, { 13, 200000 }, { 14, 200000 }, { 15, 400000 }, { 16, 400000 },
		{ 17, 400000 }, { 19, 800000 }, { 20, 800000 },
	};
	uint32_t best = 0;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if ((oper & (1u << t[i].bit)) && t[i].mbps > best)
			best = t[i].mbps;
	return best;
}

/* PMTU counts the whole Ethernet frame: the netdev MTU plus Ethernet header, one VLAN
 * tag and FCS (Linux en.h MLX5E_ETH_HARD_MTU = ETH_HLEN + VLAN_HLEN + ETH_FCS_LEN,
 * MLX5E_SW2HW_MTU). */
#define MX5_ETH_HARD_MTU (14u + 4u + 4u)
/* RoCE headers an IB payload must leave room for inside the IP MTU: GRH/IPv6 40, UDP
 * 8, BTH 12, XRC ETH 4, AtomicETH 28, ICRC 4 (Linux include/rdma/ib_addr.h
 * iboe_get_mtu, with the sizes of include/rdma/ib_pack.h / ib_verbs.h). */
#define MX5_ROCE_HDR_BYTES (40u + 8u + 12u + 4u + 28u + 4u)

/* IB MTU encoding of a port: the largest IB MTU (256..4096) that fits in the IP MTU
 * after the RoCE headers, the rule of Linux iboe_get_mtu that mlx5_ib's port query
 * reports as active_mtu.  A port MTU of 4096..4213 bytes is therefore 2048, not 4096.
 * Below 256 Linux answers 0 (invalid); we report 256, the smallest there is. */
static uint8_t mx5_mtu_to_ib(uint16_t bytes)
{
	unsigned mtu = bytes > MX5_ETH_HARD_MTU ? bytes - MX5_ETH_HARD_MTU : 0;
	mtu = mtu > MX5_ROCE_HDR_BYTES ? mtu - MX5_ROCE_HDR_BYTES : 0;
	if (mtu >= 4096) return 5;
	if (mtu >= 2048) return 4;
	if (mtu >= 1024) return 3;
	if (mtu >= 512) return 2;
	return 1;
}

/* The port's MTU, set as Linux's mlx5e sets it for `ip link set mtu` (en_main.c
 * mlx5e_set_mtu): PMTU.admin_mtu (core/port.c mlx5_set_port_mtu) and then the NIC vport
 * context's mtu (core/vport.c mlx5_modify_nic_vport_mtu), both in frame bytes, the
 * netdev MTU plus MX5_ETH_HARD_MTU.  The port reports the result as oper_mtu. */
int mx5_port_set_mtu(struct mx5_device *dev, uint8_t port, unsigned netdev_mtu)
{
	if (!dev || port < 1 || port > MX5_MAX_PORTS)
		return -EINVAL;
	uint8_t pmtu[PRM_SIZE(pmtu_reg)];
	int rc = mx5_reg_read(dev, MX5_REG_PMTU, port, pmtu, sizeof(pmtu));
	if (rc)
		return mx5_cmd_fail(dev, rc, "port MTU: PMTU");
	unsigned max = (unsigned)PRM_GET(pmtu_reg, pmtu, max_mtu);
	unsigned frame = netdev_mtu + MX5_ETH_HARD_MTU;
	/* 68: the smallest IPv4 MTU (RFC 791), Linux's ETH_MIN_MTU */
	if (netdev_mtu < 68 || frame > max)
		return mx5_fail(dev, -EINVAL, "port MTU %u: the port takes 68..%u (PMTU max_mtu %u less %u bytes of "
				"Ethernet header, VLAN tag and FCS)", netdev_mtu,
				max > MX5_ETH_HARD_MTU ? max - MX5_ETH_HARD_MTU : 0, max, MX5_ETH_HARD_MTU);
	memset(pmtu, 0, sizeof(pmtu));
	PRM_SET(pmtu_reg, pmtu, local_port, port);
	PRM_SET(pmtu_reg, pmtu, admin_mtu, frame);
	if ((rc = mx5_access_reg(dev, MX5_REG_PMTU, 1, 0, pmtu, NULL, sizeof(pmtu))))
		return mx5_cmd_fail(dev, rc, "port MTU: PMTU write");

	return mx5_vport_modify(dev, MX5_VPORT_MTU, frame, "port MTU");
}

int mx5_port_query(struct mx5_device *dev, uint8_t port, struct mx5_port_info *info)
{
	if (!dev || !info || port < 1 || port > MX5_MAX_PORTS)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	uint8_t out[PRM_SIZE(query_vport_state_out)];
	int rc = mx5_exec_bare(dev, PRM_CMD_OP_QUERY_VPORT_STATE, PRM_SIZE(query_vport_state_in), out,
			       sizeof(out), "port");
	if (rc)
		return rc;
	info->vport_state = (uint8_t)PRM_GET(query_vport_state_out, out, state);

	uint8_t paos[PRM_SIZE(paos_reg)], pmtu[PRM_SIZE(pmtu_reg)], ptys[PRM_SIZE(ptys_reg)];
	if ((rc = mx5_reg_read(dev, MX5_REG_PAOS, port, paos, sizeof(paos))))
		return mx5_cmd_fail(dev, rc, "port: PAOS");
	info->admin_status = (uint8_t)PRM_GET(paos_reg, paos, admin_status);
	info->oper_status = (uint8_t)PRM_GET(paos_reg, paos, oper_status);
	if ((rc = mx5_reg_read(dev, MX5_REG_PMTU, port, pmtu, sizeof(pmtu))))
		return mx5_cmd_fail(dev, rc, "port: PMTU");
	info->max_mtu = (uint16_t)PRM_GET(pmtu_reg, pmtu, max_mtu);
	info->oper_mtu = (uint16_t)PRM_GET(pmtu_reg, pmtu, oper_mtu);
	info->active_mtu = mx5_mtu_to_ib(info->oper_mtu);
	if ((rc = mx5_reg_read(dev, MX5_REG_PTYS, port, ptys, sizeof(ptys))))
		return mx5_cmd_fail(dev, rc, "port: PTYS");
	info->eth_proto_oper = (uint32_t)PRM_GET(ptys_reg, ptys, eth_proto_oper);
	info->ext_eth_proto_oper = (uint32_t)PRM_GET(ptys_reg, ptys, ext_eth_proto_oper);
	/* ConnectX-6 Dx / ConnectX-7 speak the extended protocols (100GAUI-2, 200G, 400G):
	 * the legacy field then reads 0.  Linux uses the extended fields when the device has
	 * them, which it tells by PCAM ptys_extended_ethernet or, as here, by a non-zero
	 * ext_eth_proto_capability (core/port.c mlx5_ptys_ext_supported). */
	if (PRM_GET(ptys_reg, ptys, ext_eth_proto_capability))
		info->speed_mbps = mx5_ext_eth_speed(info->ext_eth_proto_oper);
	else
		info->speed_mbps = mx5_eth_speed(info->eth_proto_oper);

	uint8_t qin[PRM_SIZE(query_nic_vport_context_in)] = { 0 };
	uint8_t *qout = calloc(1, PRM_SIZE(query_nic_vport_context_out));
	if (!qout)
		return -ENOMEM;
	PRM_SET(query_nic_vport_context_in, qin, opcode, PRM_CMD_OP_QUERY_NIC_VPORT_CONTEXT);
	rc = mx5_exec(dev, qin, sizeof(qin), qout, PRM_SIZE(query_nic_vport_context_out));
	if (!rc) {
		const uint8_t *ctx = PRM_ADDR(query_nic_vport_context_out, qout, nic_vport_context);
		const uint8_t *mac = PRM_ADDR(nic_vport_context, ctx, permanent_address);
		uint32_t hi = (uint32_t)PRM_GET(mac_address_layout, mac, mac_addr_47_32);
		uint32_t lo = (uint32_t)PRM_GET(mac_address_layout, mac, mac_addr_31_0);
		uint8_t b[6] = { (uint8_t)(hi >> 8), (uint8_t)hi, (uint8_t)(lo >> 24),
				 (uint8_t)(lo >> 16), (uint8_t)(lo >> 8), (uint8_t)lo };
		memcpy(info->mac, b, 6);
	}
	free(qout);
	if (rc)
		return mx5_cmd_fail(dev, rc, "port");

	bool up = info->vport_state == 1 && info->oper_status == 1;
	info->state = up ? MX5_PORT_ACTIVE : MX5_PORT_DOWN;
	return 0;
}

int mx5_port_addrs(struct mx5_device *dev, uint8_t port, uint8_t (*addrs)[16], unsigned max)
{
	if (!dev || !addrs || !dev->shim->ops->port_addrs)
		return 0;
	int n = dev->shim->ops->port_addrs(dev->shim, port, addrs, max);
	return n < 0 ? 0 : (n > (int)max ? (int)max : n);
}

int mx5_port_neigh(struct mx5_device *dev, const uint8_t addr[16], uint8_t mac[6])
{
	if (!dev || !addr || !mac || !dev->shim->ops->neigh)
		return -ENOENT;
	return dev->shim->ops->neigh(dev->shim, addr, mac) ? -ENOENT : 0;
}
