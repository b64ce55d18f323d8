/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Opcode, status and syndrome names: the values the PRM (and Linux's mlx5_ifc.h /
 * cmd.c) define, the strings the command engine's messages are built from. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "firmware-cmd/names.h"

Test(names, opcode_constants_have_the_prm_values)
{
	cr_assert_eq(PRM_CMD_OP_QUERY_HCA_CAP, 0x100);
	cr_assert_eq(PRM_CMD_OP_ENABLE_HCA, 0x104);
	cr_assert_eq(PRM_CMD_OP_MANAGE_PAGES, 0x108);
	cr_assert_eq(PRM_CMD_OP_CREATE_MKEY, 0x200);
	cr_assert_eq(PRM_CMD_OP_CREATE_EQ, 0x301);
	cr_assert_eq(PRM_CMD_OP_GEN_EQE, 0x304);
	cr_assert_eq(PRM_CMD_OP_CREATE_CQ, 0x400);
	cr_assert_eq(PRM_CMD_OP_CREATE_QP, 0x500);
	cr_assert_eq(PRM_CMD_OP_2ERR_QP, 0x507);
	cr_assert_eq(PRM_CMD_OP_2RST_QP, 0x50a);
	cr_assert_eq(PRM_CMD_OP_CREATE_SRQ, 0x700);
	cr_assert_eq(PRM_CMD_OP_CREATE_DCT, 0x710);
	cr_assert_eq(PRM_CMD_OP_QUERY_VPORT_STATE, 0x750);
	cr_assert_eq(PRM_CMD_OP_QUERY_HCA_VPORT_GID, 0x764);
	cr_assert_eq(PRM_CMD_OP_ALLOC_Q_COUNTER, 0x771);
	cr_assert_eq(PRM_CMD_OP_DEALLOC_Q_COUNTER, 0x772);
	cr_assert_eq(PRM_CMD_OP_QUERY_Q_COUNTER, 0x773);
	cr_assert_eq(PRM_CMD_OP_ALLOC_PD, 0x800);
	cr_assert_eq(PRM_CMD_OP_ALLOC_UAR, 0x802);
	cr_assert_eq(PRM_CMD_OP_ACCESS_REG, 0x805);
	cr_assert_eq(PRM_CMD_OP_NOP, 0x80d);
	cr_assert_eq(PRM_CMD_OP_ALLOC_TRANSPORT_DOMAIN, 0x816);
	cr_assert_eq(PRM_CMD_OP_CREATE_TIR, 0x900);
	cr_assert_eq(PRM_CMD_OP_CREATE_SQ, 0x904);
	cr_assert_eq(PRM_CMD_OP_CREATE_RQ, 0x908);
	cr_assert_eq(PRM_CMD_OP_CREATE_TIS, 0x912);
	cr_assert_eq(PRM_CMD_OP_CREATE_RQT, 0x916);
}

Test(names, every_opcode_of_issue_2_has_its_name)
{
	static const struct { uint16_t op; const char *name; } t[] = {
		{ PRM_CMD_OP_ENABLE_HCA, "ENABLE_HCA" }, { PRM_CMD_OP_DISABLE_HCA, "DISABLE_HCA" },
		{ PRM_CMD_OP_QUERY_ISSI, "QUERY_ISSI" }, { PRM_CMD_OP_SET_ISSI, "SET_ISSI" },
		{ PRM_CMD_OP_QUERY_PAGES, "QUERY_PAGES" }, { PRM_CMD_OP_MANAGE_PAGES, "MANAGE_PAGES" },
		{ PRM_CMD_OP_QUERY_HCA_CAP, "QUERY_HCA_CAP" }, { PRM_CMD_OP_SET_HCA_CAP, "SET_HCA_CAP" },
		{ PRM_CMD_OP_INIT_HCA, "INIT_HCA" }, { PRM_CMD_OP_TEARDOWN_HCA, "TEARDOWN_HCA" },
		{ PRM_CMD_OP_QUERY_ADAPTER, "QUERY_ADAPTER" }, { PRM_CMD_OP_ACCESS_REG, "ACCESS_REG" },
		{ PRM_CMD_OP_ALLOC_UAR, "ALLOC_UAR" }, { PRM_CMD_OP_DEALLOC_UAR, "DEALLOC_UAR" },
		{ PRM_CMD_OP_CREATE_EQ, "CREATE_EQ" }, { PRM_CMD_OP_DESTROY_EQ, "DESTROY_EQ" },
		{ PRM_CMD_OP_QUERY_EQ, "QUERY_EQ" }, { PRM_CMD_OP_ALLOC_PD, "ALLOC_PD" },
		{ PRM_CMD_OP_DEALLOC_PD, "DEALLOC_PD" },
		{ PRM_CMD_OP_ALLOC_TRANSPORT_DOMAIN, "ALLOC_TRANSPORT_DOMAIN" },
		{ PRM_CMD_OP_DEALLOC_TRANSPORT_DOMAIN, "DEALLOC_TRANSPORT_DOMAIN" },
		{ PRM_CMD_OP_QUERY_SPECIAL_CONTEXTS, "QUERY_SPECIAL_CONTEXTS" },
		{ PRM_CMD_OP_CREATE_MKEY, "CREATE_MKEY" }, { PRM_CMD_OP_DESTROY_MKEY, "DESTROY_MKEY" },
		{ PRM_CMD_OP_QUERY_MKEY, "QUERY_MKEY" }, { PRM_CMD_OP_CREATE_CQ, "CREATE_CQ" },
		{ PRM_CMD_OP_DESTROY_CQ, "DESTROY_CQ" }, { PRM_CMD_OP_QUERY_CQ, "QUERY_CQ" },
		{ PRM_CMD_OP_MODIFY_CQ, "MODIFY_CQ" }, { PRM_CMD_OP_CREATE_QP, "CREATE_QP" },
		{ PRM_CMD_OP_DESTROY_QP, "DESTROY_QP" }, { PRM_CMD_OP_QUERY_QP, "QUERY_QP" },
		{ PRM_CMD_OP_RST2INIT_QP, "RST2INIT_QP" }, { PRM_CMD_OP_INIT2RTR_QP, "INIT2RTR_QP" },
		{ PRM_CMD_OP_RTR2RTS_QP, "RTR2RTS_QP" }, { PRM_CMD_OP_RTS2RTS_QP, "RTS2RTS_QP" },
		{ PRM_CMD_OP_2ERR_QP, "2ERR_QP" }, { PRM_CMD_OP_2RST_QP, "2RST_QP" },
		{ PRM_CMD_OP_CREATE_SRQ, "CREATE_SRQ" }, { PRM_CMD_OP_DESTROY_SRQ, "DESTROY_SRQ" },
		{ PRM_CMD_OP_QUERY_SRQ, "QUERY_SRQ" },
		{ PRM_CMD_OP_QUERY_NIC_VPORT_CONTEXT, "QUERY_NIC_VPORT_CONTEXT" },
		{ PRM_CMD_OP_MODIFY_NIC_VPORT_CONTEXT, "MODIFY_NIC_VPORT_CONTEXT" },
		{ PRM_CMD_OP_QUERY_VPORT_STATE, "QUERY_VPORT_STATE" },
		{ PRM_CMD_OP_QUERY_ROCE_ADDRESS, "QUERY_ROCE_ADDRESS" },
		{ PRM_CMD_OP_SET_ROCE_ADDRESS, "SET_ROCE_ADDRESS" },
		{ PRM_CMD_OP_QUERY_HCA_VPORT_GID, "QUERY_HCA_VPORT_GID" },
		{ PRM_CMD_OP_NOP, "NOP" }, { PRM_CMD_OP_GEN_EQE, "GEN_EQE" },
		{ PRM_CMD_OP_ALLOC_Q_COUNTER, "ALLOC_Q_COUNTER" },
		{ PRM_CMD_OP_QUERY_Q_COUNTER, "QUERY_Q_COUNTER" },
		{ PRM_CMD_OP_CREATE_DCT, "CREATE_DCT" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		cr_assert_str_eq(prm_opcode_name(t[i].op), t[i].name, "opcode 0x%x", t[i].op);
}

Test(names, unknown_opcode_is_named_with_its_value_in_the_callers_buffer)
{
	char buf[32];

	cr_assert_str_eq(prm_opcode_name(0x7777), "UNKNOWN");
	cr_assert_str_eq(prm_opcode_str(0x7777, buf, sizeof(buf)), "UNKNOWN(0x7777)");
	cr_assert_str_eq(prm_opcode_str(PRM_CMD_OP_CREATE_QP, buf, sizeof(buf)), "CREATE_QP");
}

Test(names, opcode_from_name_inverts_the_table)
{
	uint16_t op = 1;

	cr_assert_eq(prm_opcode_from_name("QUERY_HCA_CAP", &op), 0);
	cr_assert_eq(op, 0x100);
	cr_assert_eq(prm_opcode_from_name("NO_SUCH_COMMAND", &op), -ENOENT);
	cr_assert_eq(op, 0);
}

Test(names, command_status_names_follow_the_prm)
{
	cr_assert_str_eq(prm_cmd_status_name(0x0), "ok");
	cr_assert_str_eq(prm_cmd_status_name(0x1), "internal error");
	cr_assert_str_eq(prm_cmd_status_name(0x2), "bad opcode");
	cr_assert_str_eq(prm_cmd_status_name(0x3), "bad parameter");
	cr_assert_str_eq(prm_cmd_status_name(0x4), "bad system state");
	cr_assert_str_eq(prm_cmd_status_name(0x5), "bad resource");
	cr_assert_str_eq(prm_cmd_status_name(0x6), "resource busy");
	cr_assert_str_eq(prm_cmd_status_name(0x8), "limits exceeded");
	cr_assert_str_eq(prm_cmd_status_name(0x9), "bad resource state");
	cr_assert_str_eq(prm_cmd_status_name(0xa), "bad index");
	cr_assert_str_eq(prm_cmd_status_name(0xf), "no resources");
	cr_assert_str_eq(prm_cmd_status_name(0x10), "bad QP state");
	cr_assert_str_eq(prm_cmd_status_name(0x30), "bad packet");
	cr_assert_str_eq(prm_cmd_status_name(0x40), "bad size of outstanding CQEs");
	cr_assert_str_eq(prm_cmd_status_name(0x50), "bad input length");
	cr_assert_str_eq(prm_cmd_status_name(0x51), "bad output length");
	cr_assert_str_eq(prm_cmd_status_name(0x77), "unknown status");
}

Test(names, command_status_errno_follows_linux_cmd_status_to_err)
{
	cr_assert_eq(prm_cmd_status_errno(0x0), 0);
	cr_assert_eq(prm_cmd_status_errno(0x1), -EIO);
	cr_assert_eq(prm_cmd_status_errno(0x2), -EINVAL);
	cr_assert_eq(prm_cmd_status_errno(0x3), -EINVAL);
	cr_assert_eq(prm_cmd_status_errno(0x4), -EIO);
	cr_assert_eq(prm_cmd_status_errno(0x5), -EINVAL);
	cr_assert_eq(prm_cmd_status_errno(0x6), -EBUSY);
	cr_assert_eq(prm_cmd_status_errno(0x7), -EAGAIN);
	cr_assert_eq(prm_cmd_status_errno(0x8), -ENOMEM);
	cr_assert_eq(prm_cmd_status_errno(0x9), -EINVAL);
	cr_assert_eq(prm_cmd_status_errno(0xa), -EINVAL);
	cr_assert_eq(prm_cmd_status_errno(0xf), -EAGAIN);
	cr_assert_eq(prm_cmd_status_errno(0x10), -EINVAL);
	cr_assert_eq(prm_cmd_status_errno(0x30), -EINVAL);
	cr_assert_eq(prm_cmd_status_errno(0x40), -EINVAL);
	cr_assert_eq(prm_cmd_status_errno(0x50), -EIO);
	cr_assert_eq(prm_cmd_status_errno(0x51), -EIO);
	cr_assert_eq(prm_cmd_status_errno(0x77), -EIO);
}

Test(names, delivery_status_names_follow_linux_deliv_status_to_str)
{
	cr_assert_str_eq(prm_delivery_status_name(0x0), "ok");
	cr_assert_str_eq(prm_delivery_status_name(0x1), "signature error");
	cr_assert_str_eq(prm_delivery_status_name(0x2), "token error");
	cr_assert_str_eq(prm_delivery_status_name(0x3), "bad block number");
	cr_assert_str_eq(prm_delivery_status_name(0x4), "output pointer not aligned to block size");
	cr_assert_str_eq(prm_delivery_status_name(0x5), "input pointer not aligned to block size");
	cr_assert_str_eq(prm_delivery_status_name(0x6), "firmware internal error");
	cr_assert_str_eq(prm_delivery_status_name(0x7), "command input length error");
	cr_assert_str_eq(prm_delivery_status_name(0x8), "command output length error");
	cr_assert_str_eq(prm_delivery_status_name(0x9), "reserved fields not cleared");
	cr_assert_str_eq(prm_delivery_status_name(0x10), "bad command descriptor type");
	cr_assert_str_eq(prm_delivery_status_name(0x11), "unknown delivery status");
}

Test(names, emulator_syndromes_have_short_names)
{
	cr_assert_str_eq(prm_syndrome_name(PRM_SYND_BAD_OPCODE), "bad opcode");
	cr_assert_str_eq(prm_syndrome_name(PRM_SYND_ILLEGAL_QP_TRANSITION), "illegal QP transition");
	cr_assert_str_eq(prm_syndrome_name(PRM_SYND_PAGE_NOT_ALIGNED), "page not 4 KiB aligned");
	cr_assert_null(prm_syndrome_name(0x2a1b3c), "a real firmware syndrome is opaque");
	cr_assert_null(prm_syndrome_name(0));
}

/* Each syndrome value and name must be unique, or a message would name the wrong rule. */
Test(names, syndrome_values_and_names_are_unique)
{
	static const struct { uint32_t v; const char *n; } t[] = {
#define PRM_SYND(name, value, str) { (value), str },
#include "firmware-cmd/syndromes.def"
#undef PRM_SYND
	};
	size_t n = sizeof(t) / sizeof(t[0]);

	cr_assert_geq(n, 19);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			cr_assert_neq(t[i].v, t[j].v, "syndrome 0x%x used twice", t[i].v);
			cr_assert_str_neq(t[i].n, t[j].n, "syndrome name '%s' used twice", t[i].n);
		}
}

/* Opcode values are unique too: the name table would otherwise shadow one of them. */
Test(names, opcode_values_are_unique)
{
	static const uint16_t v[] = {
#define PRM_CMD_OP(name, value) (value),
#include "firmware-cmd/opcodes.def"
#undef PRM_CMD_OP
	};
	size_t n = sizeof(v) / sizeof(v[0]);

	cr_assert_geq(n, 150);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			cr_assert_neq(v[i], v[j], "opcode 0x%x listed twice", v[i]);
}
