/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* HCA life cycle, ISSI, QUERY_ADAPTER and the command framework's generic answers
 * (unknown opcode, lengths, state), each with its documented status and syndrome. */
#include "tests/emu/emu_test.h"

Test(emu_hca, query_issi_reports_0_and_1_and_set_issi_1_sticks)
{
	struct et t;

	et_open(&t, "emu:");
	et_expect(&t, et_simple(&t, PRM_CMD_OP_QUERY_ISSI, 0, PRM_SIZE(query_issi_in), PRM_SIZE(query_issi_out)), 0, 0);
	cr_assert_eq(PRM_GET(query_issi_out, t.out, supported_issi_dw0), 0x3);
	cr_assert_eq(PRM_GET(query_issi_out, t.out, current_issi), 0);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_ENABLE_HCA, 0, PRM_SIZE(enable_hca_in), 16), 0, 0);
	{
		ET_IN(set_issi_in);
		PRM_SET(set_issi_in, in, opcode, PRM_CMD_OP_SET_ISSI);
		PRM_SET(set_issi_in, in, current_issi, 1);
		et_expect(&t, et_exec(&t, in, sizeof(in), 16), 0, 0);
	}
	et_simple(&t, PRM_CMD_OP_QUERY_ISSI, 0, PRM_SIZE(query_issi_in), PRM_SIZE(query_issi_out));
	cr_assert_eq(PRM_GET(query_issi_out, t.out, current_issi), 1);
	et_close(&t);
}

Test(emu_hca, set_issi_2_is_bad_param_bad_issi)
{
	struct et t;
	ET_IN(set_issi_in);

	et_open(&t, "emu:");
	et_simple(&t, PRM_CMD_OP_ENABLE_HCA, 0, PRM_SIZE(enable_hca_in), 16);
	PRM_SET(set_issi_in, in, opcode, PRM_CMD_OP_SET_ISSI);
	PRM_SET(set_issi_in, in, current_issi, 2);
	et_expect(&t, et_exec(&t, in, sizeof(in), 16), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_ISSI);
	et_close(&t);
}

Test(emu_hca, command_before_enable_hca_is_bad_system_state)
{
	struct et t;
	int32_t n;

	et_open(&t, "emu:");
	et_expect(&t, et_query_pages(&t, 1, &n), PRM_CMD_STAT_BAD_SYS_STATE, PRM_SYND_BAD_SYSTEM_STATE);
	et_close(&t);
}

Test(emu_hca, command_needing_init_hca_before_it_is_bad_system_state)
{
	struct et t;

	et_open(&t, "emu:");
	et_simple(&t, PRM_CMD_OP_ENABLE_HCA, 0, PRM_SIZE(enable_hca_in), 16);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_ALLOC_PD, 0, PRM_SIZE(alloc_pd_in), PRM_SIZE(alloc_pd_out)),
		  PRM_CMD_STAT_BAD_SYS_STATE, PRM_SYND_BAD_SYSTEM_STATE);
	et_close(&t);
}

Test(emu_hca, enable_hca_twice_is_bad_system_state)
{
	struct et t;

	et_open(&t, "emu:");
	et_expect(&t, et_simple(&t, PRM_CMD_OP_ENABLE_HCA, 0, PRM_SIZE(enable_hca_in), 16), 0, 0);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_ENABLE_HCA, 0, PRM_SIZE(enable_hca_in), 16), PRM_CMD_STAT_BAD_SYS_STATE,
		  PRM_SYND_BAD_SYSTEM_STATE);
	et_close(&t);
}

Test(emu_hca, enable_hca_for_another_function_is_bad_param)
{
	struct et t;
	ET_IN(enable_hca_in);

	et_open(&t, "emu:");
	PRM_SET(enable_hca_in, in, opcode, PRM_CMD_OP_ENABLE_HCA);
	PRM_SET(enable_hca_in, in, function_id, 3);
	et_expect(&t, et_exec(&t, in, sizeof(in), 16), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_FUNCTION_ID);
	et_close(&t);
}

Test(emu_hca, init_hca_without_pages_is_bad_system_state_not_enough_pages)
{
	struct et t;

	et_open(&t, "emu:");
	et_simple(&t, PRM_CMD_OP_ENABLE_HCA, 0, PRM_SIZE(enable_hca_in), 16);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_INIT_HCA, 0, PRM_SIZE(init_hca_in), 16), PRM_CMD_STAT_BAD_SYS_STATE,
		  PRM_SYND_NOT_ENOUGH_PAGES);
	et_close(&t);
}

Test(emu_hca, disable_hca_with_pages_held_is_refused)
{
	struct et t;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_TEARDOWN_HCA, 0, PRM_SIZE(teardown_hca_in), 16), 0, 0);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_DISABLE_HCA, 0, PRM_SIZE(disable_hca_in), 16),
		  PRM_CMD_STAT_BAD_SYS_STATE, PRM_SYND_PAGE_IN_USE);
	cr_assert(emu_drverr_find(t.emu, "DISABLE_HCA with"));
	et_close(&t);
}

Test(emu_hca, teardown_hca_before_init_is_bad_system_state)
{
	struct et t;

	et_open(&t, "emu:");
	et_simple(&t, PRM_CMD_OP_ENABLE_HCA, 0, PRM_SIZE(enable_hca_in), 16);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_TEARDOWN_HCA, 0, PRM_SIZE(teardown_hca_in), 16),
		  PRM_CMD_STAT_BAD_SYS_STATE, PRM_SYND_BAD_SYSTEM_STATE);
	et_close(&t);
}

Test(emu_hca, unknown_opcode_is_bad_opcode)
{
	struct et t;

	et_open(&t, "emu:");
	et_expect(&t, et_simple(&t, 0x7777, 0, 16, 16), PRM_CMD_STAT_BAD_OP, PRM_SYND_BAD_OPCODE);
	et_close(&t);
}

Test(emu_hca, input_shorter_than_the_command_is_bad_input_length)
{
	struct et t;

	et_open(&t, "emu:");
	et_simple(&t, PRM_CMD_OP_ENABLE_HCA, 0, PRM_SIZE(enable_hca_in), 16);
	/* SET_ISSI needs 16 input bytes; send 8. */
	et_expect(&t, et_simple(&t, PRM_CMD_OP_SET_ISSI, 0, 8, 16), PRM_CMD_STAT_BAD_INP_LEN, PRM_SYND_INPUT_TOO_SHORT);
	et_close(&t);
}

Test(emu_hca, output_shorter_than_the_command_is_bad_output_length)
{
	struct et t;

	et_open(&t, "emu:");
	/* QUERY_ISSI's output is 0x70 bytes; ask for the 16-byte header only. */
	et_expect(&t, et_simple(&t, PRM_CMD_OP_QUERY_ISSI, 0, PRM_SIZE(query_issi_in), 16), PRM_CMD_STAT_BAD_OUTP_LEN,
		  PRM_SYND_OUTPUT_TOO_SHORT);
	et_close(&t);
}

Test(emu_hca, query_adapter_returns_the_seeded_parameter_block)
{
	struct et t;

	et_open(&t, "emu:");
	et_simple(&t, PRM_CMD_OP_ENABLE_HCA, 0, PRM_SIZE(enable_hca_in), 16);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_QUERY_ADAPTER, 0, PRM_SIZE(query_adapter_in), PRM_SIZE(query_adapter_out)),
		  0, 0);
	const uint8_t *p = PRM_ADDR(query_adapter_out, t.out, query_adapter_struct);
	cr_assert_eq(memcmp(p, emu_caps_seed_adapter, PRM_SIZE(query_adapter_param_block)), 0);
	cr_assert_eq(PRM_GET(query_adapter_param_block, p, ieee_vendor_id),
		     PRM_GET(query_adapter_param_block, emu_caps_seed_adapter, ieee_vendor_id));
	et_close(&t);
}

Test(emu_hca, counters_count_commands_by_opcode_and_status)
{
	struct et t;
	struct emu_counters c;

	et_open(&t, "emu:");
	et_simple(&t, PRM_CMD_OP_QUERY_ISSI, 0, PRM_SIZE(query_issi_in), PRM_SIZE(query_issi_out));
	et_simple(&t, 0x7777, 0, 16, 16);
	emu_counters(t.emu, &c);
	cr_assert_eq(c.cmds, 2);
	cr_assert_eq(c.cmd_by_opcode[PRM_CMD_OP_QUERY_ISSI], 1);
	cr_assert_eq(c.cmd_by_status[PRM_CMD_STAT_BAD_OP], 1);
	cr_assert_eq(c.cmds_failed, 1);
	cr_assert_geq(c.cmd_doorbells, 2);
	cr_assert_gt(c.dma_reads, 0);
	cr_assert_gt(c.mmio_writes, 0);
	et_close(&t);
}
