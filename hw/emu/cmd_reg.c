/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* ACCESS_REG (0x805), PRM "Access Registers": PAOS (port admin/oper status), PMTU
 * (port MTU), PTYS (port type and speed: 100GBASE-CR4, a ConnectX-5 Ex port),
 * HOST_ENDIANNESS.  op_mod 0 writes, 1 reads.  Register ids as Linux's
 * MLX5_REG_PAOS 0x5006, MLX5_REG_PMTU 0x5003, MLX5_REG_PTYS 0x5004,
 * MLX5_REG_HOST_ENDIANNESS 0x7004. */
#include <stdlib.h>
#include <string.h>

#include "hw/emu/emu_dev.h"

enum { REG_WRITE = 0, REG_READ = 1 };
enum { REG_PMTU = 0x5003, REG_PTYS = 0x5004, REG_PAOS = 0x5006, REG_HOST_ENDIANNESS = 0x7004 };
enum { PAOS_UP = 1, PAOS_DOWN = 2 };
#define PTYS_PROTO_ETH 0x4u             /* proto_mask bit for Ethernet */
#define ETH_100GBASE_CR4 (1u << 20)     /* PRM Ethernet protocol bit (Linux MLX5E_100GBASE_CR4) */
#define EXT_200GAUI_4 (1u << 12)        /* extended protocol bit (Linux MLX5E_200GAUI_4_200GBASE_CR4_KR4) */
#define PMTU_MAX 9216u
#define PMTU_DEFAULT 1522u              /* 1500 + Ethernet header, VLAN, FCS (Linux SW2HW_MTU) */

struct reg_state {
	uint16_t pmtu_admin;
	uint8_t host_endianness;
};

static struct reg_state *rs(struct emu_dev *d)
{
	return *emu_area_state(d, "reg");
}

static int reg_init(struct emu_dev *d)
{
	struct reg_state *s = calloc(1, sizeof(*s));

	if (!s)
		return -12; /* -ENOMEM */
	s->pmtu_admin = PMTU_DEFAULT;
	*emu_area_state(d, "reg") = s;
	return 0;
}

static void reg_fini(struct emu_dev *d)
{
	free(*emu_area_state(d, "reg"));
	*emu_area_state(d, "reg") = NULL;
}

static int paos(struct emu_dev *d, struct emu_cmd *c, bool write, const uint8_t *in, uint8_t *out)
{
	if (PRM_GET(paos_reg, in, local_port) != 1)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PORT);
	if (write && PRM_GET(paos_reg, in, ase)) {
		uint64_t admin = PRM_GET(paos_reg, in, admin_status);
		bool was = emu_port_oper(d);

		if (admin != PAOS_UP && admin != PAOS_DOWN)
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_RESERVED_NOT_ZERO);
		d->paos_admin = (uint8_t)admin;
		emu_port_changed(d, was);
	}
	PRM_SET(paos_reg, out, local_port, 1);
	PRM_SET(paos_reg, out, admin_status, d->paos_admin);
	PRM_SET(paos_reg, out, oper_status, emu_port_oper(d) ? PAOS_UP : PAOS_DOWN);
	return 0;
}

static int pmtu(struct emu_dev *d, struct emu_cmd *c, bool write, const uint8_t *in, uint8_t *out)
{
	struct reg_state *s = rs(d);

	if (PRM_GET(pmtu_reg, in, local_port) != 1)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PORT);
	if (write) {
		uint64_t mtu = PRM_GET(pmtu_reg, in, admin_mtu);

		if (mtu < 68 || mtu > PMTU_MAX)
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_MTU);
		s->pmtu_admin = (uint16_t)mtu;
	}
	PRM_SET(pmtu_reg, out, local_port, 1);
	PRM_SET(pmtu_reg, out, max_mtu, PMTU_MAX);
	PRM_SET(pmtu_reg, out, admin_mtu, s->pmtu_admin);
	PRM_SET(pmtu_reg, out, oper_mtu, s->pmtu_admin);
	return 0;
}

static int ptys(struct emu_dev *d, struct emu_cmd *c, bool write, const uint8_t *in, uint8_t *out)
{
	if (PRM_GET(ptys_reg, in, local_port) != 1)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PORT);
	if (!(PRM_GET(ptys_reg, in, proto_mask) & PTYS_PROTO_ETH))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PORT);
	if (write && (PRM_GET(ptys_reg, in, eth_proto_admin) & ~(uint64_t)ETH_100GBASE_CR4))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_LIMIT_EXCEEDED);
	PRM_SET(ptys_reg, out, local_port, 1);
	PRM_SET(ptys_reg, out, proto_mask, PTYS_PROTO_ETH);
	if (d->cfg.ptys_ext) {
		/* a ConnectX-6 Dx/7 port on an extended protocol: the legacy fields read 0 */
		PRM_SET(ptys_reg, out, ext_eth_proto_capability, EXT_200GAUI_4);
		PRM_SET(ptys_reg, out, ext_eth_proto_admin, EXT_200GAUI_4);
		PRM_SET(ptys_reg, out, ext_eth_proto_oper, emu_port_oper(d) ? EXT_200GAUI_4 : 0);
		return 0;
	}
	PRM_SET(ptys_reg, out, eth_proto_capability, ETH_100GBASE_CR4);
	PRM_SET(ptys_reg, out, eth_proto_admin, ETH_100GBASE_CR4);
	PRM_SET(ptys_reg, out, eth_proto_oper, emu_port_oper(d) ? ETH_100GBASE_CR4 : 0);
	return 0;
}

static int host_endianness(struct emu_dev *d, struct emu_cmd *c, bool write, const uint8_t *in, uint8_t *out)
{
	(void)c;
	if (write)
		rs(d)->host_endianness = (uint8_t)PRM_GET(register_host_endianness, in, he);
	PRM_SET(register_host_endianness, out, he, rs(d)->host_endianness);
	return 0;
}

/* The registers, by register_id: the handler and the register's layout size. */
static const struct {
	uint16_t id;
	uint16_t size;
	int (*fn)(struct emu_dev *d, struct emu_cmd *c, bool write, const uint8_t *in, uint8_t *out);
} regs[] = {
	{ REG_PAOS, PRM_SIZE(paos_reg), paos },
	{ REG_PMTU, PRM_SIZE(pmtu_reg), pmtu },
	{ REG_PTYS, PRM_SIZE(ptys_reg), ptys },
	{ REG_HOST_ENDIANNESS, PRM_SIZE(register_host_endianness), host_endianness },
};

static int access_reg(struct emu_dev *d, struct emu_cmd *c)
{
	uint64_t id = PRM_GET(access_register_in, c->in, register_id);
	size_t in_off = PRM_OFF(access_register_in, register_data) / 8;
	size_t out_off = PRM_OFF(access_register_out, register_data) / 8;
	size_t i = 0, size;
	uint8_t reg_in[PRM_SIZE(ptys_reg)] = { 0 };

	while (i < sizeof(regs) / sizeof(regs[0]) && regs[i].id != id)
		i++;
	if (i == sizeof(regs) / sizeof(regs[0]))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_REGISTER_ID);
	size = regs[i].size;
	if (c->op_mod != REG_WRITE && c->op_mod != REG_READ)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_OP_MOD);
	if (c->inlen < in_off + size)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_INP_LEN, PRM_SYND_INPUT_TOO_SHORT);
	if (c->outlen < out_off + size)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_OUTP_LEN, PRM_SYND_OUTPUT_TOO_SHORT);
	memcpy(reg_in, c->in + in_off, size);
	return regs[i].fn(d, c, c->op_mod == REG_WRITE, reg_in, c->out + out_off);
}

static const struct emu_cmd_desc cmds[] = {
	EMU_CMD(ACCESS_REG, EMU_CMDF_ENABLED, access_register_in, access_register_out, access_reg),
};

const struct emu_cmd_area emu_area_reg = {
	.name = "reg", .cmds = cmds, .ncmds = EMU_NCMDS(cmds), .init = reg_init, .fini = reg_fini,
};
