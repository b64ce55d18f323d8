/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Checks every command input meets before its handler runs (PRM "Command Interface",
 * command input header, and the PRM's rule that reserved fields must be zero):
 *
 *  - cmd_in bits 0x10..0x1f are `uid` (or reserved): a non-zero uid names a user
 *    context (DEVX), and this device offers none -> 0x3 BAD_PARAM, BAD_UID;
 *  - op_mod is reserved for every command that gives it no meaning (mlx5_ifc.h
 *    defines op_mod values only for the commands in op_mod_cmds below; their handlers
 *    check the value) -> 0x3 BAD_PARAM, BAD_OP_MOD;
 *  - an object beyond the count the current capabilities allow (2^log_max_qp QPs,
 *    2^log_max_cq CQs, ...: PRM "HCA Capabilities") -> 0x8 LIM_ERR, OBJECT_LIMIT;
 *  - every reserved field of the command's input, nested contexts included (ranges in
 *    cmd_reserved.def, generated from Linux include/linux/mlx5/mlx5_ifc.h by
 *    tools/gen-emu-reserved) -> 0x3 BAD_PARAM, RESERVED_NOT_ZERO; the log names the
 *    field.  Only bits the driver sent (below input_length) are looked at.
 *
 * This file defines no commands: it is an area only so that the handler registry
 * (hw/emu/CMakeLists.txt) can list it like the others.  cmd.c's dispatch calls
 * emu_cmd_check() after the length and HCA-state checks, before the handler.
 */
#include <stdint.h>
#include <string.h>

#include "hw/emu/emu_dev.h"

/* Commands whose op_mod means something (mlx5_ifc.h / PRM): the handler checks it.
 * QUERY_VPORT_STATE: 0 vNIC vport, 1 e-switch vport, 2 uplink (Linux
 * MLX5_VPORT_STATE_OP_MOD_*); this device answers them alike. */
static const struct {
	uint16_t opcode;
	uint16_t max_op_mod; /* 0xffff: the handler decides */
} op_mod_cmds[] = {
	{ PRM_CMD_OP_QUERY_HCA_CAP, 0xffff },  /* capability type << 1 | current */
	{ PRM_CMD_OP_SET_HCA_CAP, 0xffff },    /* capability type << 1 */
	{ PRM_CMD_OP_QUERY_PAGES, 0xffff },    /* 1 boot, 2 init, 3 regular */
	{ PRM_CMD_OP_MANAGE_PAGES, 0xffff },   /* 0 allocation failed, 1 give, 2 take */
	{ PRM_CMD_OP_ACCESS_REG, 0xffff },     /* 0 write, 1 read */
	{ PRM_CMD_OP_MODIFY_CQ, 0xffff },      /* 0 modify, 1 resize */
	{ PRM_CMD_OP_QUERY_VPORT_STATE, 2 },
	{ PRM_CMD_OP_ARM_RQ, 0xffff },         /* 1 SRQ, 2 XRQ (Linux MLX5_ARM_RQ_IN_OP_MOD_*) */
	{ PRM_CMD_OP_ARM_XRC_SRQ, 0xffff },    /* 1 XRC SRQ (MLX5_ARM_XRC_SRQ_IN_OP_MOD_XRC_SRQ) */
};

/* Object-creating commands and the capability that bounds how many may live. */
static const struct {
	uint16_t opcode;
	enum emu_obj_type type;
	const char *cap;
} obj_limits[] = {
	{ PRM_CMD_OP_CREATE_QP, EMU_OBJ_QP, "log_max_qp" },
	{ PRM_CMD_OP_CREATE_CQ, EMU_OBJ_CQ, "log_max_cq" },
	{ PRM_CMD_OP_CREATE_SRQ, EMU_OBJ_SRQ, "log_max_srq" },
	{ PRM_CMD_OP_CREATE_RMP, EMU_OBJ_SRQ, "log_max_srq" },   /* an RMP is the ISSI 1 SRQ */
	{ PRM_CMD_OP_CREATE_XRC_SRQ, EMU_OBJ_SRQ, "log_max_srq" }, /* one number space with SRQs */
	{ PRM_CMD_OP_CREATE_MKEY, EMU_OBJ_MKEY, "log_max_mkey" },
	{ PRM_CMD_OP_CREATE_EQ, EMU_OBJ_EQ, "log_max_eq" },
	{ PRM_CMD_OP_ALLOC_PD, EMU_OBJ_PD, "log_max_pd" },
	{ PRM_CMD_OP_ALLOC_TRANSPORT_DOMAIN, EMU_OBJ_TD, "log_max_transport_domain" },
};

static const struct {
	uint16_t opcode;
	uint16_t width;
	uint32_t off;
	const char *field;
} reserved[] = {
#define EMU_RSV(op, o, w, f) { PRM_CMD_OP_##op, (w), (o), (f) },
#include "hw/emu/cmd_reserved.def"
#undef EMU_RSV
};

/* Any bit set in [off, off + width) of the big-endian bit string p (PRM bit order:
 * bit 0 is the most significant bit of byte 0)? */
static bool bits_set(const uint8_t *p, uint32_t off, uint32_t width)
{
	uint32_t end = off + width;

	while (off < end) {
		uint32_t byte = off / 8, lo = off % 8, n = 8 - lo < end - off ? 8 - lo : end - off;
		uint8_t mask = (uint8_t)((0xffu >> lo) & (0xffu << (8 - lo - n)));

		if (p[byte] & mask)
			return true;
		off += n;
	}
	return false;
}

int emu_cmd_check(struct emu_dev *d, struct emu_cmd *c)
{
	uint16_t max_op_mod = 0;

	if (PRM_GET(cmd_in, c->in, uid))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_UID);
	for (size_t i = 0; i < sizeof(op_mod_cmds) / sizeof(op_mod_cmds[0]); i++)
		if (op_mod_cmds[i].opcode == c->opcode)
			max_op_mod = op_mod_cmds[i].max_op_mod;
	if (c->op_mod > max_op_mod) {
		emu_log(d, EMU_LOG_INFO, "%s: op_mod 0x%x, this command takes %s", prm_opcode_name(c->opcode),
			c->op_mod, max_op_mod ? "fewer" : "none");
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_OP_MOD);
	}
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		if (reserved[i].opcode != c->opcode || reserved[i].off + reserved[i].width > c->inlen * 8)
			continue;
		if (bits_set(c->in, reserved[i].off, reserved[i].width)) {
			emu_log(d, EMU_LOG_INFO, "%s: reserved field %s (bits 0x%x..0x%x) not zero",
				prm_opcode_name(c->opcode), reserved[i].field, reserved[i].off,
				reserved[i].off + reserved[i].width - 1);
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_RESERVED_NOT_ZERO);
		}
	}
	for (size_t i = 0; i < sizeof(obj_limits) / sizeof(obj_limits[0]); i++) {
		const uint8_t *cur = emu_cap(d, PRM_CAP_GENERAL_DEVICE, 1);
		const struct prm_field_desc *f;
		uint64_t log;

		if (obj_limits[i].opcode != c->opcode || !cur)
			continue;
		f = prm_field_find(prm_struct_find("cmd_hca_cap"), obj_limits[i].cap);
		if (!f)
			continue;
		log = prm_bits_get(cur, f->bit_off, f->width);
		if (log < 63 && d->ctr.objects_live[obj_limits[i].type] >= (1ull << log)) {
			emu_log(d, EMU_LOG_INFO, "%s: %llu %s objects live, %s is %llu", prm_opcode_name(c->opcode),
				(unsigned long long)d->ctr.objects_live[obj_limits[i].type],
				emu_obj_type_name(obj_limits[i].type), obj_limits[i].cap, (unsigned long long)log);
			return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_OBJECT_LIMIT);
		}
	}
	return 0;
}

const struct emu_cmd_area emu_area_check = { .name = "check", .cmds = NULL, .ncmds = 0 };
