/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The port: NIC vport context (MAC from the RoCE address, roce_en, mtu), vport state,
 * the RoCE address table, ACCESS_REG PAOS/PMTU/PTYS/HOST_ENDIANNESS, PORT_CHANGE. */
#include <arpa/inet.h>

#include "tests/emu/emu_test.h"

#define REG_PMTU 0x5003
#define REG_PTYS 0x5004
#define REG_PAOS 0x5006
#define REG_HOST_ENDIANNESS 0x7004

static int reg(struct et *t, int read, uint16_t id, const uint8_t *data, size_t size)
{
	uint8_t in[16 + 64] = { 0 };

	PRM_SET(access_register_in, in, opcode, PRM_CMD_OP_ACCESS_REG);
	PRM_SET(access_register_in, in, op_mod, read ? 1 : 0);
	PRM_SET(access_register_in, in, register_id, id);
	memcpy(PRM_ADDR(access_register_in, in, register_data), data, size);
	return et_exec(t, in, 16 + size, 16 + size);
}

static const uint8_t *reg_out(struct et *t)
{
	return PRM_ADDR(access_register_out, t->out, register_data);
}

static int vport_state(struct et *t)
{
	et_expect(t, et_simple(t, PRM_CMD_OP_QUERY_VPORT_STATE, 0, PRM_SIZE(query_vport_state_in), 16), 0, 0);
	return (int)PRM_GET(query_vport_state_out, t->out, state);
}

Test(emu_port, nic_vport_mac_is_derived_from_the_roce_address)
{
	struct et t;
	const uint8_t *ctx, *mac;
	uint32_t ip;

	et_open(&t, "emu:");
	ip = emu_ipv4(t.emu);
	cr_assert_eq(ip >> 8, 0x7f0000);
	et_bringup(&t);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_QUERY_NIC_VPORT_CONTEXT, 0, PRM_SIZE(query_nic_vport_context_in),
				PRM_SIZE(query_nic_vport_context_out)),
		  0, 0);
	ctx = PRM_ADDR(query_nic_vport_context_out, t.out, nic_vport_context);
	mac = PRM_ADDR(nic_vport_context, ctx, permanent_address);
	cr_assert_eq(PRM_GET(mac_address_layout, mac, mac_addr_47_32), 0x0200);
	cr_assert_eq(PRM_GET(mac_address_layout, mac, mac_addr_31_0), ip, "02:00 then the IPv4 address");
	cr_assert_eq(PRM_GET(nic_vport_context, ctx, roce_en), 0);
	et_close(&t);
}

Test(emu_port, modify_nic_vport_enables_roce_and_sets_mtu)
{
	struct et t;
	uint8_t *in = calloc(1, PRM_SIZE(modify_nic_vport_context_in));
	uint8_t *sel = PRM_ADDR(modify_nic_vport_context_in, in, field_select);
	uint8_t *ctx = PRM_ADDR(modify_nic_vport_context_in, in, nic_vport_context);

	et_open(&t, "emu:");
	et_bringup(&t);
	PRM_SET(modify_nic_vport_context_in, in, opcode, PRM_CMD_OP_MODIFY_NIC_VPORT_CONTEXT);
	PRM_SET(modify_nic_vport_field_select, sel, roce_en, 1);
	PRM_SET(modify_nic_vport_field_select, sel, mtu, 1);
	PRM_SET(nic_vport_context, ctx, roce_en, 1);
	PRM_SET(nic_vport_context, ctx, mtu, 4200);
	et_expect(&t, et_exec(&t, in, PRM_SIZE(modify_nic_vport_context_in), 16), 0, 0);
	et_simple(&t, PRM_CMD_OP_QUERY_NIC_VPORT_CONTEXT, 0, PRM_SIZE(query_nic_vport_context_in),
		  PRM_SIZE(query_nic_vport_context_out));
	const uint8_t *q = PRM_ADDR(query_nic_vport_context_out, t.out, nic_vport_context);
	cr_assert_eq(PRM_GET(nic_vport_context, q, roce_en), 1);
	cr_assert_eq(PRM_GET(nic_vport_context, q, mtu), 4200);
	/* An absurd MTU is refused. */
	PRM_SET(nic_vport_context, ctx, mtu, 20);
	et_expect(&t, et_exec(&t, in, PRM_SIZE(modify_nic_vport_context_in), 16), PRM_CMD_STAT_BAD_PARAM,
		  PRM_SYND_BAD_MTU);
	free(in);
	et_close(&t);
}

Test(emu_port, query_of_another_vport_is_bad_param)
{
	struct et t;
	ET_IN(query_nic_vport_context_in);

	et_open(&t, "emu:");
	et_bringup(&t);
	PRM_SET(query_nic_vport_context_in, in, opcode, PRM_CMD_OP_QUERY_NIC_VPORT_CONTEXT);
	PRM_SET(query_nic_vport_context_in, in, other_vport, 1);
	PRM_SET(query_nic_vport_context_in, in, vport_number, 3);
	et_expect(&t, et_exec(&t, in, sizeof(in), PRM_SIZE(query_nic_vport_context_out)), PRM_CMD_STAT_BAD_PARAM,
		  PRM_SYND_BAD_PORT);
	et_close(&t);
}

Test(emu_port, vport_state_and_paos_follow_link_down_and_up_with_port_change_events)
{
	struct et t;
	struct et_eq eq;
	const uint8_t *e;
	uint8_t paos[16] = { 0 };

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, et_create_eq(&t, &eq, et_alloc_uar(&t), 4, 0, ET_EVBIT(0x09)), 0, 0);
	cr_assert_eq(vport_state(&t), 1);
	cr_assert_eq(emu_port_set(t.emu, 0), 0);
	cr_assert_eq(vport_state(&t), 0);
	PRM_SET(paos_reg, paos, local_port, 1);
	et_expect(&t, reg(&t, 1, REG_PAOS, paos, sizeof(paos)), 0, 0);
	cr_assert_eq(PRM_GET(paos_reg, reg_out(&t), oper_status), 2, "down");
	e = et_eq_next(&eq);
	cr_assert_not_null(e);
	cr_assert_eq(PRM_GET(eqe, e, event_type), 0x09);
	cr_assert_eq(PRM_GET(eqe, e, event_sub_type), 0x1, "DOWN");
	cr_assert_eq(PRM_GET(port_state_change_event, PRM_ADDR(eqe, e, event_data), port_num), 1);
	emu_port_set(t.emu, 1);
	e = et_eq_next(&eq);
	cr_assert_not_null(e);
	cr_assert_eq(PRM_GET(eqe, e, event_sub_type), 0x4, "ACTIVE");
	cr_assert_eq(vport_state(&t), 1);
	et_close(&t);
}

Test(emu_port, paos_admin_down_takes_the_port_down)
{
	struct et t;
	uint8_t paos[16] = { 0 };

	et_open(&t, "emu:");
	et_bringup(&t);
	PRM_SET(paos_reg, paos, local_port, 1);
	PRM_SET(paos_reg, paos, ase, 1);
	PRM_SET(paos_reg, paos, admin_status, 2);
	et_expect(&t, reg(&t, 0, REG_PAOS, paos, sizeof(paos)), 0, 0);
	cr_assert_eq(vport_state(&t), 0);
	PRM_SET(paos_reg, paos, admin_status, 1);
	et_expect(&t, reg(&t, 0, REG_PAOS, paos, sizeof(paos)), 0, 0);
	cr_assert_eq(vport_state(&t), 1);
	et_close(&t);
}

Test(emu_port, ptys_reports_100gbase_cr4)
{
	struct et t;
	uint8_t ptys[64] = { 0 };

	et_open(&t, "emu:");
	et_bringup(&t);
	PRM_SET(ptys_reg, ptys, local_port, 1);
	PRM_SET(ptys_reg, ptys, proto_mask, 4);
	et_expect(&t, reg(&t, 1, REG_PTYS, ptys, sizeof(ptys)), 0, 0);
	cr_assert_eq(PRM_GET(ptys_reg, reg_out(&t), eth_proto_oper), 1u << 20);
	cr_assert_eq(PRM_GET(ptys_reg, reg_out(&t), eth_proto_capability), 1u << 20);
	et_close(&t);
}

Test(emu_port, pmtu_write_within_max_is_read_back_and_above_is_refused)
{
	struct et t;
	uint8_t pmtu[16] = { 0 };

	et_open(&t, "emu:");
	et_bringup(&t);
	PRM_SET(pmtu_reg, pmtu, local_port, 1);
	et_expect(&t, reg(&t, 1, REG_PMTU, pmtu, sizeof(pmtu)), 0, 0);
	uint64_t max = PRM_GET(pmtu_reg, reg_out(&t), max_mtu);
	cr_assert_geq(max, 9000);
	PRM_SET(pmtu_reg, pmtu, admin_mtu, 4096);
	et_expect(&t, reg(&t, 0, REG_PMTU, pmtu, sizeof(pmtu)), 0, 0);
	et_expect(&t, reg(&t, 1, REG_PMTU, pmtu, sizeof(pmtu)), 0, 0);
	cr_assert_eq(PRM_GET(pmtu_reg, reg_out(&t), oper_mtu), 4096);
	PRM_SET(pmtu_reg, pmtu, admin_mtu, max + 1);
	et_expect(&t, reg(&t, 0, REG_PMTU, pmtu, sizeof(pmtu)), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_MTU);
	et_close(&t);
}

Test(emu_port, host_endianness_write_before_init_is_accepted)
{
	struct et t;
	uint8_t he[16] = { 0 };

	et_open(&t, "emu:");
	et_simple(&t, PRM_CMD_OP_ENABLE_HCA, 0, PRM_SIZE(enable_hca_in), 16);
	PRM_SET(register_host_endianness, he, he, 1);
	et_expect(&t, reg(&t, 0, REG_HOST_ENDIANNESS, he, sizeof(he)), 0, 0);
	et_expect(&t, reg(&t, 1, REG_HOST_ENDIANNESS, he, sizeof(he)), 0, 0);
	cr_assert_eq(PRM_GET(register_host_endianness, reg_out(&t), he), 1);
	et_close(&t);
}

Test(emu_port, unknown_register_is_bad_param)
{
	struct et t;
	uint8_t r[16] = { 0 };

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, reg(&t, 1, 0x9999, r, sizeof(r)), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_REGISTER_ID);
	et_close(&t);
}

Test(emu_port, register_of_another_port_is_bad_param)
{
	struct et t;
	uint8_t paos[16] = { 0 };

	et_open(&t, "emu:");
	et_bringup(&t);
	PRM_SET(paos_reg, paos, local_port, 2);
	et_expect(&t, reg(&t, 1, REG_PAOS, paos, sizeof(paos)), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PORT);
	et_close(&t);
}

static int set_gid(struct et *t, unsigned idx, const uint8_t gid[16], unsigned version, unsigned l3)
{
	ET_IN(set_roce_address_in);
	uint8_t *e = PRM_ADDR(set_roce_address_in, in, roce_address);

	PRM_SET(set_roce_address_in, in, opcode, PRM_CMD_OP_SET_ROCE_ADDRESS);
	PRM_SET(set_roce_address_in, in, roce_address_index, idx);
	PRM_SET(set_roce_address_in, in, vhca_port_num, 1);
	if (gid) {
		memcpy(PRM_ADDR(roce_addr_layout, e, source_l3_address), gid, 16);
		PRM_SET(roce_addr_layout, e, roce_version, version);
		PRM_SET(roce_addr_layout, e, roce_l3_type, l3);
		PRM_SET(roce_addr_layout, e, source_mac_47_32, 0x0200);
		PRM_SET(roce_addr_layout, e, source_mac_31_0, 0x7f000002);
	}
	return et_exec(t, in, sizeof(in), 16);
}

Test(emu_port, gid_table_holds_roce_v2_ipv4_mapped_and_ipv6_entries)
{
	struct et t;
	uint8_t v4[16] = { 0 }, v6[16];
	ET_IN(query_roce_address_in);

	et_open(&t, "emu:");
	et_bringup(&t);
	v4[10] = v4[11] = 0xff;
	uint32_t ip = htonl(emu_ipv4(t.emu));
	memcpy(v4 + 12, &ip, 4);
	cr_assert_eq(inet_pton(AF_INET6, "fe80::2:7fff:fe00:2", v6), 1);
	et_expect(&t, set_gid(&t, 0, v4, 2, 0), 0, 0);
	et_expect(&t, set_gid(&t, 1, v6, 2, 1), 0, 0);
	PRM_SET(query_roce_address_in, in, opcode, PRM_CMD_OP_QUERY_ROCE_ADDRESS);
	PRM_SET(query_roce_address_in, in, roce_address_index, 1);
	PRM_SET(query_roce_address_in, in, vhca_port_num, 1);
	et_expect(&t, et_exec(&t, in, sizeof(in), PRM_SIZE(query_roce_address_out)), 0, 0);
	const uint8_t *e = PRM_ADDR(query_roce_address_out, t.out, roce_address);
	cr_assert_eq(memcmp(PRM_ADDR(roce_addr_layout, e, source_l3_address), v6, 16), 0);
	cr_assert_eq(PRM_GET(roce_addr_layout, e, roce_version), 2);
	{
		ET_IN(query_hca_vport_gid_in);
		PRM_SET(query_hca_vport_gid_in, in, opcode, PRM_CMD_OP_QUERY_HCA_VPORT_GID);
		PRM_SET(query_hca_vport_gid_in, in, gid_index, 0);
		et_expect(&t, et_exec(&t, in, sizeof(in), PRM_SIZE(query_hca_vport_gid_out) + 16), 0, 0);
		cr_assert_eq(PRM_GET(query_hca_vport_gid_out, t.out, gids_num), 1);
		cr_assert_eq(memcmp(t.out + PRM_SIZE(query_hca_vport_gid_out), v4, 16), 0);
	}
	/* Clearing an entry: all zeros. */
	et_expect(&t, set_gid(&t, 1, NULL, 0, 0), 0, 0);
	et_close(&t);
}

Test(emu_port, gid_index_beyond_the_table_is_bad_param)
{
	struct et t;
	uint8_t v6[16];

	et_open(&t, "emu:");
	et_bringup(&t);
	inet_pton(AF_INET6, "2001:db8::1", v6);
	et_expect(&t, set_gid(&t, 0xffff, v6, 2, 1), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_GID_INDEX);
	et_close(&t);
}

Test(emu_port, ipv4_entry_without_ipv4_mapped_address_is_bad_param)
{
	struct et t;
	uint8_t v6[16];

	et_open(&t, "emu:");
	et_bringup(&t);
	inet_pton(AF_INET6, "2001:db8::1", v6);
	et_expect(&t, set_gid(&t, 2, v6, 2, 0), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_ROCE_ADDRESS);
	et_close(&t);
}
