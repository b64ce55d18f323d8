/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* ACCESS_REG (0x805), PRM "Access Registers": PAOS (port admin/oper status), PMTU
 * (port MTU), PTYS (port type and speed: 100GBASE-CR4, a ConnectX-5 Ex port),
 * HOST_ENDIANNESS, NODE_DESC (the node description string), DTOR (default timeouts,
 * read-only).  op_mod 0 writes, 1 reads.  Register ids as Linux's
 * MLX5_REG_PAOS 0x5006, MLX5_REG_PMTU 0x5003, MLX5_REG_PTYS 0x5004,
 * MLX5_REG_HOST_ENDIANNESS 0x7004, MLX5_REG_NODE_DESC 0x6001, MLX5_REG_DTOR 0xC00E.
 * Any other register is refused (bad parameter, "unknown access register id"): the
 * ones Linux's mlx5_core reads are asked for only behind a capability bit this device
 * leaves clear (mcam_reg, pcam_reg, qcam_reg, pps...), except these two, which it
 * reads unconditionally (tools/vm's mlx5_core run records the stream). */
#include <stdlib.h>
#include <string.h>

#include "hw/emu/emu_dev.h"

enum { REG_WRITE = 0, REG_READ = 1 };
enum {
	REG_PMTU = 0x5003, REG_PTYS = 0x5004, REG_PAOS = 0x5006, REG_NODE_DESC = 0x6001,
	REG_HOST_ENDIANNESS = 0x7004, REG_DTOR = 0xc00e,
};
#define REG_NODE_DESC_BYTES 64          /* node_description[64], as the IB NodeDescription */
#define REG_DTOR_BYTES 64               /* dtor_reg: 0x200 bits */
#define REG_MAX_BYTES 64
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

/* NODE_DESC: what Linux's mlx5_ib shows as the node description (mlx5_query_node_desc,
 * read on every RoCE device: mlx5_use_mad_ifc is false for an Ethernet port). */
static int node_desc(struct emu_dev *d, struct emu_cmd *c, bool write, const uint8_t *in, uint8_t *out)
{
	static const char desc[] = "uverbs emulated ConnectX-5 Ex";

	(void)d;
	(void)in;
	if (write)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_OP_MOD);
	memcpy(out, desc, sizeof(desc));
	return 0;
}

/* DTOR (default timeouts): Linux reads it whenever the init segment's cmd_q_init_to is
 * nonzero (lib/tout.c mlx5_tout_query_dtor) and fails the probe if it cannot.  Each
 * timeout is a dword: to_multiplier (bits 31:29; 0 ms, 1 s, 2 min, 3 h) and to_value
 * (bits 19:0) (mlx5_ifc.h default_timeout).  The values are the ones Linux assumes
 * without the register (tout.c tout_def_sw_val), as this device has no reason to ask
 * for others; dword index = bit offset / 32 in dtor_reg. */
static int dtor(struct emu_dev *d, struct emu_cmd *c, bool write, const uint8_t *in, uint8_t *out)
{
	enum { MS = 0, SEC = 1 };
	static const struct {
		uint8_t dw;
		uint8_t mult;
		uint32_t value;
	} to[] = {
		{ 1, MS, 2000 },   /* pcie_toggle_to */
		{ 5, MS, 2000 },   /* health_poll_to */
		{ 6, SEC, 60 },    /* full_crdump_to */
		{ 7, SEC, 60 },    /* fw_reset_to */
		{ 8, MS, 2000 },   /* flush_on_err_to */
		{ 9, MS, 5000 },   /* pci_sync_update_to */
		{ 10, MS, 3000 },  /* tear_down_to */
		{ 11, MS, 5000 },  /* fsm_reactivate_to */
		{ 12, MS, 5000 },  /* reclaim_pages_to */
		{ 13, SEC, 120 },  /* reclaim_vfs_pages_to */
	};

	(void)d;
	(void)in;
	if (write)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_OP_MOD);
	for (size_t i = 0; i < sizeof(to) / sizeof(to[0]); i++)
		prm_store_be32(out, to[i].dw * 32u, (uint32_t)to[i].mult << 29 | to[i].value);
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
	{ REG_NODE_DESC, REG_NODE_DESC_BYTES, node_desc },
	{ REG_DTOR, REG_DTOR_BYTES, dtor },
};
_Static_assert(PRM_SIZE(ptys_reg) <= REG_MAX_BYTES && PRM_SIZE(paos_reg) <= REG_MAX_BYTES &&
		       PRM_SIZE(pmtu_reg) <= REG_MAX_BYTES,
	       "reg_in holds any register");

static int access_reg(struct emu_dev *d, struct emu_cmd *c)
{
	uint64_t id = PRM_GET(access_register_in, c->in, register_id);
	size_t in_off = PRM_OFF(access_register_in, register_data) / 8;
	size_t out_off = PRM_OFF(access_register_out, register_data) / 8;
	size_t i = 0, size;
	uint8_t reg_in[REG_MAX_BYTES] = { 0 };

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
