/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* QUERY_HCA_CAP (0x100) and SET_HCA_CAP (0x109), PRM "HCA Capabilities".
 *
 * op_mod = capability type << 1 | (1: current, 0: maximum).  SET_HCA_CAP takes a whole
 * block (drivers copy the current one and change what they need); the device accepts
 * it only if every field that differs from the current value is one the PRM lets the
 * driver set, and the new value does not exceed the maximum block's.  Fields are
 * walked by name with firmware-cmd's descriptors, so the rule reads like the PRM.
 */
#include <string.h>

#include "hw/emu/emu_dev.h"

/* Settable fields per type (PRM SET_HCA_CAP; what Linux mlx5_core and rdma-core's
 * mlx5_vfio.c set).  NULL list: every field of the block, bounded by the maximum. */
static const char *const settable_general[] = {
	"log_max_qp", "pkey_table_size", "cmdif_checksum", "log_uar_page_sz", "uar_4k",
	"cache_line_128byte", "num_of_uars_per_page", "log_max_current_uc_list",
	"log_max_current_mc_list", "gid_table_size", NULL,
};
static const char *const settable_roce[] = { "sw_r_roce_src_udp_port", "fl_rc_qp_when_roce_disabled",
					     "fl_rc_qp_when_roce_enabled", NULL };
static const char *const settable_atomic[] = { "atomic_req_8B_endianness_mode", NULL };

static const struct {
	const char *layout;          /* structure that decodes the block */
	const char *const *settable; /* NULL: all fields, bounded by max */
} emu_cap_rules[EMU_CAP_TYPES] = {
	[0] = { "cmd_hca_cap", settable_general },
	[2] = { "odp_cap", NULL },
	[3] = { "atomic_caps", settable_atomic },
	[4] = { "roce_cap", settable_roce },
};

static bool name_in(const char *const *list, const char *name)
{
	for (; *list; list++)
		if (!strcmp(*list, name))
			return true;
	return false;
}

/* Compare `want` with `cur` field by field; 0 or a syndrome.  apply: copy the
 * settable fields that differ into cur (second pass, after the whole block passed). */
static uint32_t check_block(const char *layout, const char *const *settable, const uint8_t *want,
			    uint8_t *cur, const uint8_t *max, unsigned base_bit, bool apply)
{
	const struct prm_struct_desc *s = prm_struct_find(layout);

	if (!s)
		return 0;
	for (size_t i = 0; i < s->nfields; i++) {
		const struct prm_field_desc *f = &s->fields[i];
		unsigned off = base_bit + f->bit_off;
		uint64_t w, c, m;

		if (f->kind == PRM_KIND_SUB) {
			uint32_t synd = check_block(f->subtype, settable, want, cur, max, off, apply);

			if (synd)
				return synd;
			continue;
		}
		if (f->kind != PRM_KIND_FIELD)
			continue;
		w = prm_bits_get(want, off, f->width);
		c = prm_bits_get(cur, off, f->width);
		m = prm_bits_get(max, off, f->width);
		if (w == c)
			continue;
		if (w > m)
			return PRM_SYND_LIMIT_EXCEEDED;
		if (apply && (!settable || name_in(settable, f->name)))
			prm_bits_set(cur, off, f->width, w);
	}
	return 0;
}

static int query_hca_cap(struct emu_dev *d, struct emu_cmd *c)
{
	unsigned type = c->op_mod >> 1;
	uint8_t *cap = emu_cap(d, type, c->op_mod & 1);

	if (!cap)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_CAP_TYPE);
	memcpy(PRM_ADDR(query_hca_cap_out, c->out, capability), cap, EMU_CAP_BYTES);
	return 0;
}

static int set_hca_cap(struct emu_dev *d, struct emu_cmd *c)
{
	unsigned type = c->op_mod >> 1;
	uint8_t *cur = emu_cap(d, type, 1), *max = emu_cap(d, type, 0);
	const uint8_t *want = PRM_ADDR(set_hca_cap_in, c->in, capability);
	uint32_t synd;

	if (!cur || !emu_cap_rules[type].layout)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_CAP_TYPE);
	if (c->op_mod & 1)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_OP_MOD);
	/* Capabilities shape how firmware lays out its resources: only before INIT_HCA. */
	if (d->hca == EMU_HCA_INITIALIZED)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_SYS_STATE, PRM_SYND_BAD_SYSTEM_STATE);
	synd = check_block(emu_cap_rules[type].layout, emu_cap_rules[type].settable, want, cur, max, 0, false);
	if (synd)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, synd);
	check_block(emu_cap_rules[type].layout, emu_cap_rules[type].settable, want, cur, max, 0, true);
	return 0;
}

static const struct emu_cmd_desc cmds[] = {
	EMU_CMD(QUERY_HCA_CAP, EMU_CMDF_ENABLED, query_hca_cap_in, query_hca_cap_out, query_hca_cap),
	EMU_CMD(SET_HCA_CAP, EMU_CMDF_ENABLED, set_hca_cap_in, set_hca_cap_out, set_hca_cap),
};

const struct emu_cmd_area emu_area_caps = { .name = "caps", .cmds = cmds, .ncmds = EMU_NCMDS(cmds) };
