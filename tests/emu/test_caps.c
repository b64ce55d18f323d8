/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* QUERY_HCA_CAP / SET_HCA_CAP: seeded values, the ConnectX-5 Ex changes, and the
 * settable-field rules. */
#include "tests/emu/emu_test.h"

static void enable(struct et *t)
{
	et_expect(t, et_simple(t, PRM_CMD_OP_ENABLE_HCA, 0, PRM_SIZE(enable_hca_in), 16), 0, 0);
}

static int query_cap(struct et *t, unsigned type, int cur)
{
	ET_IN(query_hca_cap_in);
	PRM_SET(query_hca_cap_in, in, opcode, PRM_CMD_OP_QUERY_HCA_CAP);
	PRM_SET(query_hca_cap_in, in, op_mod, (type << 1) | (cur ? 1 : 0));
	return et_exec(t, in, sizeof(in), PRM_SIZE(query_hca_cap_out));
}

static int set_cap(struct et *t, unsigned type, const uint8_t *cap)
{
	uint8_t *in = calloc(1, PRM_SIZE(set_hca_cap_in));
	int st;

	PRM_SET(set_hca_cap_in, in, opcode, PRM_CMD_OP_SET_HCA_CAP);
	PRM_SET(set_hca_cap_in, in, op_mod, type << 1);
	memcpy(PRM_ADDR(set_hca_cap_in, in, capability), cap, 0x1000);
	st = et_exec(t, in, PRM_SIZE(set_hca_cap_in), 16);
	free(in);
	return st;
}

Test(emu_caps, general_max_matches_the_connectx4_seed_except_documented_changes)
{
	struct et t;
	const uint8_t *cap;

	et_open(&t, "emu:");
	enable(&t);
	et_expect(&t, query_cap(&t, 0, 0), 0, 0);
	cap = PRM_ADDR(query_hca_cap_out, t.out, capability);
	cr_assert_eq(PRM_GET(cmd_hca_cap, cap, log_max_qp), PRM_GET(cmd_hca_cap, emu_caps_seed_general_max, log_max_qp));
	cr_assert_eq(PRM_GET(cmd_hca_cap, cap, log_max_cq), PRM_GET(cmd_hca_cap, emu_caps_seed_general_max, log_max_cq));
	cr_assert_eq(PRM_GET(cmd_hca_cap, cap, port_type), 1, "Ethernet");
	cr_assert_eq(PRM_GET(cmd_hca_cap, cap, roce), 1);
	cr_assert_eq(PRM_GET(cmd_hca_cap, cap, pg), 1, "ConnectX-5: ODP");
	cr_assert_eq(PRM_GET(cmd_hca_cap, cap, uar_4k), 1, "ConnectX-5: 4 KiB UARs");
	et_close(&t);
}

Test(emu_caps, odp_block_reports_rc_operations)
{
	struct et t;
	const uint8_t *cap, *tr, *rc;

	et_open(&t, "emu:");
	enable(&t);
	et_expect(&t, query_cap(&t, 2, 1), 0, 0);
	cap = PRM_ADDR(query_hca_cap_out, t.out, capability);
	tr = PRM_ADDR(odp_cap, cap, transport_page_fault_scheme_cap);
	rc = PRM_ADDR(odp_scheme_cap, tr, rc_odp_caps);
	cr_assert_eq(PRM_GET(odp_per_transport_service_cap, rc, write), 1);
	cr_assert_eq(PRM_GET(odp_per_transport_service_cap, rc, read), 1);
	et_close(&t);
}

Test(emu_caps, roce_block_is_the_seed_and_atomic_block_the_seed_plus_host_order)
{
	struct et t;
	uint8_t want[0x1000];
	const uint8_t *cap;

	et_open(&t, "emu:");
	enable(&t);
	et_expect(&t, query_cap(&t, 4, 0), 0, 0);
	cr_assert_eq(memcmp(PRM_ADDR(query_hca_cap_out, t.out, capability), emu_caps_seed_roce_max, 0x1000), 0);
	/* atomic cur: the ConnectX-4's answer with supported_atomic_req_8B_endianness_mode_1
	 * raised (caps.c), the mode itself still big-endian (0) */
	memcpy(want, emu_caps_seed_atomic_cur, sizeof(want));
	PRM_SET(atomic_caps, want, supported_atomic_req_8B_endianness_mode_1, 1);
	et_expect(&t, query_cap(&t, 3, 1), 0, 0);
	cap = PRM_ADDR(query_hca_cap_out, t.out, capability);
	cr_assert_eq(memcmp(cap, want, 0x1000), 0);
	cr_assert_eq(PRM_GET(atomic_caps, cap, atomic_req_8B_endianness_mode), 0);
	et_close(&t);
}

Test(emu_caps, atomic_host_endianness_mode_is_settable_and_bounded)
{
	struct et t;
	uint8_t cap[0x1000];

	et_open(&t, "emu:");
	enable(&t);
	query_cap(&t, 3, 1);
	memcpy(cap, PRM_ADDR(query_hca_cap_out, t.out, capability), sizeof(cap));
	/* mode 2 is beyond the maximum block's 1: refused, nothing changed */
	PRM_SET(atomic_caps, cap, atomic_req_8B_endianness_mode, 2);
	et_expect(&t, set_cap(&t, 3, cap), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_LIMIT_EXCEEDED);
	query_cap(&t, 3, 1);
	cr_assert_eq(PRM_GET(atomic_caps, PRM_ADDR(query_hca_cap_out, t.out, capability), atomic_req_8B_endianness_mode), 0);
	PRM_SET(atomic_caps, cap, atomic_req_8B_endianness_mode, 1);
	et_expect(&t, set_cap(&t, 3, cap), 0, 0);
	query_cap(&t, 3, 1);
	cr_assert_eq(PRM_GET(atomic_caps, PRM_ADDR(query_hca_cap_out, t.out, capability), atomic_req_8B_endianness_mode), 1);
	et_close(&t);
}

Test(emu_caps, unknown_capability_type_is_bad_param)
{
	struct et t;

	et_open(&t, "emu:");
	enable(&t);
	et_expect(&t, query_cap(&t, 0x1d, 0), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_CAP_TYPE);
	et_close(&t);
}

Test(emu_caps, set_log_max_qp_within_max_is_accepted)
{
	struct et t;
	uint8_t cap[0x1000];

	et_open(&t, "emu:");
	enable(&t);
	query_cap(&t, 0, 1);
	memcpy(cap, PRM_ADDR(query_hca_cap_out, t.out, capability), sizeof(cap));
	PRM_SET(cmd_hca_cap, cap, log_max_qp, 0x11);
	et_expect(&t, set_cap(&t, 0, cap), 0, 0);
	query_cap(&t, 0, 1);
	cr_assert_eq(PRM_GET(cmd_hca_cap, PRM_ADDR(query_hca_cap_out, t.out, capability), log_max_qp), 0x11);
	et_close(&t);
}

Test(emu_caps, set_above_max_is_bad_param_limit_exceeded)
{
	struct et t;
	uint8_t cap[0x1000];

	et_open(&t, "emu:");
	enable(&t);
	query_cap(&t, 0, 1);
	memcpy(cap, PRM_ADDR(query_hca_cap_out, t.out, capability), sizeof(cap));
	PRM_SET(cmd_hca_cap, cap, log_max_qp, 0x1f);
	et_expect(&t, set_cap(&t, 0, cap), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_LIMIT_EXCEEDED);
	et_close(&t);
}

Test(emu_caps, set_of_a_read_only_field_is_ignored)
{
	struct et t;
	uint8_t cap[0x1000];

	et_open(&t, "emu:");
	enable(&t);
	query_cap(&t, 0, 1);
	memcpy(cap, PRM_ADDR(query_hca_cap_out, t.out, capability), sizeof(cap));
	uint64_t before = PRM_GET(cmd_hca_cap, cap, log_max_cq);
	PRM_SET(cmd_hca_cap, cap, log_max_cq, 3);
	et_expect(&t, set_cap(&t, 0, cap), 0, 0);
	query_cap(&t, 0, 1);
	cr_assert_eq(PRM_GET(cmd_hca_cap, PRM_ADDR(query_hca_cap_out, t.out, capability), log_max_cq), before);
	et_close(&t);
}

Test(emu_caps, set_with_bad_op_mod_current_is_bad_param)
{
	struct et t;
	uint8_t *in = calloc(1, PRM_SIZE(set_hca_cap_in));

	et_open(&t, "emu:");
	enable(&t);
	PRM_SET(set_hca_cap_in, in, opcode, PRM_CMD_OP_SET_HCA_CAP);
	PRM_SET(set_hca_cap_in, in, op_mod, 1);
	et_expect(&t, et_exec(&t, in, PRM_SIZE(set_hca_cap_in), 16), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_OP_MOD);
	free(in);
	et_close(&t);
}

Test(emu_caps, set_uar_page_size_changes_the_uar_stride)
{
	struct et t;
	uint8_t cap[0x1000];

	et_open(&t, "emu:page=16k");
	cr_assert_eq(t.dev->page_size, 16384);
	enable(&t);
	query_cap(&t, 0, 1);
	memcpy(cap, PRM_ADDR(query_hca_cap_out, t.out, capability), sizeof(cap));
	PRM_SET(cmd_hca_cap, cap, log_uar_page_sz, 2);
	et_expect(&t, set_cap(&t, 0, cap), 0, 0);
	query_cap(&t, 0, 1);
	cr_assert_eq(PRM_GET(cmd_hca_cap, PRM_ADDR(query_hca_cap_out, t.out, capability), log_uar_page_sz), 2);
	et_close(&t);
}
