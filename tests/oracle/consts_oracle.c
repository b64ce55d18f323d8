/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* PRM constants oracle: every row of the constant tables next to opcodes.def
 * (firmware-cmd/wqe_opcodes.def, cqe_opcodes.def, cqe_syndromes.def, event_types.def,
 * uar.def, cap_types.def) against the value an independent header gives it:
 *   send WQE opcodes   rdma-core <infiniband/mlx5dv.h> MLX5_OPCODE_<NAME>
 *   CQE opcodes        mlx5dv.h MLX5_CQE_<NAME>
 *   CQE syndromes      mlx5dv.h MLX5_CQE_SYNDROME_<NAME>
 *   event types        Linux include/linux/mlx5/device.h MLX5_EVENT_TYPE_<NAME>
 *   port change types  device.h MLX5_PORT_CHANGE_SUBTYPE_<NAME>
 *   UAR offsets        mlx5dv.h MLX5_CQ_DOORBELL, Linux doorbell.h MLX5_BF_OFFSET
 *   capability types   Linux mlx5_ifc.h MLX5_SET_HCA_CAP_OP_MOD_<NAME>
 * device.h and doorbell.h do not compile in userspace, so run_prm_consts.sh copies
 * their enumerators into linux_consts.h as LX_<name> before building this.
 *
 * Generated from the rows (X-macros), so a new row is checked without touching this
 * file; a row whose oracle name does not exist does not compile.  A row no installed
 * header has needs an OR_UAR_<NAME> entry below saying so, and is reported unverified.
 * Prints every mismatch and unverified row, then
 *   prm consts oracle: N constants checked, M mismatches, K unverified
 * and exits 1 on any mismatch. */
#include "tests/oracle/ifc_compat.h"
#include "linux_consts.h"

#include <stdio.h>

#include "firmware-cmd/consts.h"
#include "firmware-cmd/prm.h"

#define OR_NONE (-1L)

/* UAR offsets: the oracle of each row, by name. */
#define OR_UAR_CQ_DOORBELL ((long)MLX5_CQ_DOORBELL)
#define OR_UAR_BF_OFFSET ((long)LX_MLX5_BF_OFFSET)
/* Linux drivers/net/ethernet/mellanox/mlx5/core/lib/eq.h (MLX5_EQ_DOORBEL_OFFSET) and
 * eq.c (eq_update_ci): not in any installed header. */
#define OR_UAR_EQ_DOORBELL_ARM OR_NONE
#define OR_UAR_EQ_DOORBELL_NOARM OR_NONE

struct or_const {
	const char *table, *name;
	long ours, oracle;          /* oracle OR_NONE: no header has it */
};

static const struct or_const or_consts[] = {
#define PRM_WQE_OP(n, v) { "wqe_opcodes.def", #n, (long)PRM_WQE_OP_##n, (long)MLX5_OPCODE_##n },
#include "firmware-cmd/wqe_opcodes.def"
#undef PRM_WQE_OP
#define PRM_CQE_OP(n, v) { "cqe_opcodes.def", #n, (long)PRM_CQE_##n, (long)MLX5_CQE_##n },
#include "firmware-cmd/cqe_opcodes.def"
#undef PRM_CQE_OP
#define PRM_CQE_SYND(n, v, s) { "cqe_syndromes.def", #n, (long)PRM_CQE_SYND_##n, (long)MLX5_CQE_SYNDROME_##n },
#include "firmware-cmd/cqe_syndromes.def"
#undef PRM_CQE_SYND
#define PRM_EVENT(n, v) { "event_types.def", #n, (long)PRM_EVENT_##n, (long)LX_MLX5_EVENT_TYPE_##n },
#define PRM_PORT_CHANGE(n, v) { "event_types.def", "PORT_CHANGE_" #n, (long)PRM_PORT_CHANGE_##n, \
				(long)LX_MLX5_PORT_CHANGE_SUBTYPE_##n },
#include "firmware-cmd/event_types.def"
#undef PRM_PORT_CHANGE
#undef PRM_EVENT
#define PRM_UAR(n, v) { "uar.def", #n, (long)PRM_UAR_##n, OR_UAR_##n },
#include "firmware-cmd/uar.def"
#undef PRM_UAR
#define PRM_CAP_TYPE(n, v, layout) { "cap_types.def", #n, (long)PRM_CAP_##n, (long)MLX5_SET_HCA_CAP_OP_MOD_##n },
#include "firmware-cmd/cap_types.def"
#undef PRM_CAP_TYPE
};

/* Each capability type names a layout our tables have, of a capability block's size
 * (0x800 bits: query_hca_cap_out.capability); a typo here does not compile. */
#define PRM_CAP_TYPE(n, v, layout) _Static_assert(PRM_SIZE(layout) <= 0x100, #layout " is a capability block");
#include "firmware-cmd/cap_types.def"
#undef PRM_CAP_TYPE

int main(void)
{
	unsigned long n = 0, bad = 0, unverified = 0;

	for (size_t i = 0; i < sizeof(or_consts) / sizeof(or_consts[0]); i++) {
		const struct or_const *c = &or_consts[i];

		n++;
		if (c->oracle == OR_NONE) {
			printf("UNVERIFIED %s %s = 0x%lx: in no installed header\n", c->table, c->name, c->ours);
			unverified++;
		} else if (c->ours != c->oracle) {
			printf("MISMATCH %s %s: ours 0x%lx, oracle 0x%lx\n", c->table, c->name, c->ours,
			       c->oracle);
			bad++;
		}
	}
	printf("prm consts oracle: %lu constants checked, %lu mismatches, %lu unverified\n", n, bad,
	       unverified);
	return bad ? 1 : 0;
}
