/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The ConnectX-4 trace against this device's capabilities (header only, for
 * test_trace_replay.c and test_device_trace_oracle.c): the capabilities hw/emu/caps.c
 * leaves clear because this device cannot back them (Linux's mlx5_core and mlx5_ib went
 * for each in the VM, tools/vm) differ from the trace on purpose.
 *  - trace_caps_input: the trace's SET_HCA_CAP (general) asks for them as the real
 *    card offered them; asked of this device they exceed its maximum, so they are
 *    cleared in the input, as Linux does when the maximum says 0 (main.c handle_hca_cap
 *    copies the current block and sets only what the device offers).
 *  - trace_caps_output: in our answer to QUERY_HCA_CAP (ethernet offloads) the tunnel
 *    bits, which no layout describes, take the real card's values, so the byte-wise
 *    comparison of unnamed bits checks everything else (the named general fields are
 *    excused by name in each test's table). */
#ifndef UVERBS_TESTS_EMU_TRACE_CAPS_H
#define UVERBS_TESTS_EMU_TRACE_CAPS_H

#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"

/* General fields hw/emu/caps.c clears, by name (the tests' excuse tables list them). */
static const char *const trace_caps_cleared[] = {
	"vport_group_manager", "eswitch_manager", "nic_flow_table", "cc_query_allowed", "cc_modify_allowed",
};
#define TRACE_CAPS_ETH_TUNNEL_BIT 0x1c   /* tunnel_lro_gre .. tunnel_stateless_vxlan */
#define TRACE_CAPS_ETH_TUNNEL_WIDTH 4

static inline void trace_caps_input(uint8_t *in, uint16_t opcode, uint16_t op_mod)
{
	uint8_t *cap = PRM_ADDR(set_hca_cap_in, in, capability);

	if (opcode != PRM_CMD_OP_SET_HCA_CAP || (op_mod >> 1) != PRM_CAP_GENERAL_DEVICE)
		return;
	for (size_t i = 0; i < sizeof(trace_caps_cleared) / sizeof(trace_caps_cleared[0]); i++) {
		const struct prm_field_desc *f = prm_field_find(prm_struct_find("cmd_hca_cap"), trace_caps_cleared[i]);

		if (f)
			prm_bits_set(cap, f->bit_off, f->width, 0);
	}
}

static inline void trace_caps_output(uint8_t *ours, const uint8_t *real, uint16_t opcode, uint16_t op_mod)
{
	unsigned base = PRM_OFF(query_hca_cap_out, capability);

	if (opcode != PRM_CMD_OP_QUERY_HCA_CAP || (op_mod >> 1) != 1)
		return;
	prm_bits_set(ours, base + TRACE_CAPS_ETH_TUNNEL_BIT, TRACE_CAPS_ETH_TUNNEL_WIDTH,
		     prm_bits_get(real, base + TRACE_CAPS_ETH_TUNNEL_BIT, TRACE_CAPS_ETH_TUNNEL_WIDTH));
}

#endif
