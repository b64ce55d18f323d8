/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What the verbs report is what the device says: limits from its capability blocks,
 * identity from its PCI function and QUERY_ADAPTER, port state/MTU from its registers,
 * the RoCE v2 GIDs from its MAC and address.  The reference is a second emulated device opened
 * through the driver directly (hw/mlx5), so the two paths are independent. */
#include <arpa/inet.h>

#include "hw/mlx5/mx5.h"
#include "tests/uverbs/uv_test.h"

static struct ibv_context *ctx;
static struct mx5_device *ref;
static struct mx5_device_info info;

static void setup(void)
{
	ut_devices("emu:ip=127.0.69.2");
	ctx = ut_open(0);
	cr_assert_eq(mx5_device_open("emu:ip=127.0.69.3", &ref), 0, "%s", mx5_open_error());
	cr_assert_eq(mx5_device_query(ref, &info), 0);
}

static void teardown(void)
{
	if (ref)
		mx5_device_close(ref);
	ref = NULL;
}

TestSuite(query, .init = setup, .fini = teardown);

Test(query, device_limits_are_the_capabilities)
{
	struct ibv_device_attr a;
	cr_assert_eq(ibv_query_device(ctx, &a), 0);
	cr_assert_eq(a.vendor_id, 0x02c9);          /* QUERY_ADAPTER ieee_vendor_id */
	cr_assert_eq(a.vendor_part_id, info.device_id);
	cr_assert_eq(a.vendor_part_id, 4121);       /* ConnectX-5 Ex, 15b3:1019 */
	char fw[64];
	snprintf(fw, sizeof(fw), "%u.%u.%04u", info.fw_major, info.fw_minor, info.fw_subminor);
	cr_assert_str_eq(a.fw_ver, fw);
	cr_assert_eq((uint32_t)a.max_qp, info.max_qp);
	cr_assert_eq((uint32_t)a.max_qp_wr, info.max_qp_wr);
	cr_assert_eq((uint32_t)a.max_sge, info.max_sge);
	cr_assert_eq((uint32_t)a.max_cq, info.max_cq);
	cr_assert_eq((uint32_t)a.max_cqe, info.max_cqe);
	cr_assert_eq((uint32_t)a.max_mr, info.max_mr);
	cr_assert_eq((uint32_t)a.max_pd, info.max_pd);
	cr_assert_eq((uint32_t)a.max_qp_rd_atom, info.max_qp_rd_atom);
	cr_assert_eq((uint32_t)a.max_qp_init_rd_atom, info.max_qp_init_rd_atom);
	cr_assert_eq((uint32_t)a.max_srq, info.max_srq);
	cr_assert_eq((uint32_t)a.max_srq_wr, info.max_srq_wr);
	cr_assert_eq((uint32_t)a.max_srq_sge, info.max_srq_sge);
	cr_assert_eq(a.max_mr_size, info.max_mr_size);
	cr_assert_eq(a.atomic_cap, info.atomic ? IBV_ATOMIC_HCA : IBV_ATOMIC_NONE);
	cr_assert_eq(a.phys_port_cnt, info.num_ports);
	cr_assert_eq(a.local_ca_ack_delay, info.local_ca_ack_delay);
	cr_assert_eq((uint32_t)ctx->num_comp_vectors, info.num_comp_vectors);
}

Test(query, port_state_mtu_and_link_layer_are_the_registers)
{
	struct mx5_port_info p;
	struct ibv_port_attr a;
	cr_assert_eq(mx5_port_query(ref, 1, &p), 0);
	cr_assert_eq(ibv_query_port(ctx, 1, &a), 0);
	cr_assert_eq(a.state, IBV_PORT_ACTIVE);
	cr_assert_eq((int)a.state, (int)p.state);
	cr_assert_eq(a.active_mtu, p.active_mtu);
	/* PMTU's max_mtu is the Ethernet MTU; the IB MTU is the largest of 256..4096 in it */
	cr_assert_eq(a.max_mtu, p.max_mtu >= 4096 ? IBV_MTU_4096 : p.max_mtu >= 2048 ? IBV_MTU_2048 : IBV_MTU_1024);
	cr_assert_eq(a.link_layer, IBV_LINK_LAYER_ETHERNET);
	cr_assert_eq((uint32_t)a.gid_tbl_len, info.gid_table_len);
	cr_assert_eq(a.pkey_tbl_len, 1);
	cr_assert_eq(a.phys_state, 5);
	cr_assert_eq(a.lid, 0);
	cr_assert_neq(ibv_query_port(ctx, 2, &a), 0, "the device has one port");
}

/* GID 0: the link-local fe80::EUI-64 of the MAC 02:00:7f:00:45:02; GID 1: the device's
 * address IPv4-mapped; both RoCE v2.  Entry 2 is empty. */
Test(query, gid_table_is_link_local_then_the_device_address)
{
	union ibv_gid g;
	const uint8_t ll[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xfe, 0, 69, 2 };
	const uint8_t v4[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 69, 2 };
	struct ibv_gid_entry e;
	cr_assert_eq(ibv_query_gid(ctx, 1, 0, &g), 0);
	cr_assert_eq(memcmp(g.raw, ll, 16), 0);
	cr_assert_eq(ibv_query_gid_ex(ctx, 1, 0, &e, 0), 0);
	cr_assert_eq(e.gid_type, IBV_GID_TYPE_ROCE_V2);
	cr_assert_eq(ibv_query_gid(ctx, 1, 1, &g), 0);
	cr_assert_eq(memcmp(g.raw, v4, 16), 0);
	cr_assert_eq(ibv_query_gid_ex(ctx, 1, 1, &e, 0), 0);
	cr_assert_eq(e.gid_type, IBV_GID_TYPE_ROCE_V2);
	cr_assert_eq(memcmp(e.gid.raw, v4, 16), 0);
	cr_assert_eq(ibv_query_gid_ex(ctx, 1, 2, &e, 0), ENODATA, "entry 2 is empty");
	cr_assert_eq(ibv_query_gid(ctx, 1, 2, &g), 0);
	cr_assert_eq(g.global.interface_id, 0, "an empty entry reads as zero");
	cr_assert_neq(ibv_query_gid(ctx, 1, 100000, &g), 0);
}

/* rdma-core's private ABI (driver.h), imported by Debian's ibv_devinfo */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index, int *type);

Test(query, gid_type_private_abi_and_sysfs_say_roce_v2)
{
	int t = -1;
	cr_assert_eq(ibv_query_gid_type(ctx, 1, 0, &t), 0);
	cr_assert_eq(t, 1, "IBV_GID_TYPE_SYSFS_ROCE_V2");
	char buf[64];
	cr_assert_gt(ibv_read_sysfs_file(ut_list[0]->ibdev_path, "ports/1/gid_attrs/types/0", buf,
					 sizeof(buf)), 0);
	cr_assert_str_eq(buf, "RoCE v2");
	cr_assert_gt(ibv_read_sysfs_file(ut_list[0]->ibdev_path, "ports/1/gid_attrs/types/1", buf,
					 sizeof(buf)), 0);
	cr_assert_str_eq(buf, "RoCE v2");
	cr_assert_lt(ibv_read_sysfs_file(ut_list[0]->ibdev_path, "ports/1/gid_attrs/types/2", buf,
					 sizeof(buf)), 0);
	cr_assert_gt(ibv_read_sysfs_file(ut_list[0]->ibdev_path, "ports/1/gids/0", buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "fe80:0000:0000:0000:0000:7fff:fe00:4502");
	cr_assert_gt(ibv_read_sysfs_file(ut_list[0]->ibdev_path, "ports/1/gids/1", buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "0000:0000:0000:0000:0000:ffff:7f00:4502");
}

Test(query, node_guid_is_the_eui64_of_the_mac_everywhere)
{
	/* MAC 02:00:7f:00:45:02 (from 127.0.69.2) -> EUI-64 00:00:7f:ff:fe:00:45:02 */
	const uint64_t want = 0x00007ffffe004502ull;
	struct ibv_device_attr a;
	cr_assert_eq(ibv_query_device(ctx, &a), 0);
	cr_assert_eq(be64toh(a.node_guid), want);
	cr_assert_eq(be64toh(ibv_get_device_guid(ut_list[0])), want);
	char buf[64];
	cr_assert_gt(ibv_read_sysfs_file(ut_list[0]->ibdev_path, "node_guid", buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "0000:7fff:fe00:4502");
}

Test(query, sysfs_fw_ver_and_board_id_come_from_the_device)
{
	char buf[64], fw[64];
	snprintf(fw, sizeof(fw), "%u.%u.%04u", info.fw_major, info.fw_minor, info.fw_subminor);
	cr_assert_gt(ibv_read_sysfs_file(ut_list[0]->ibdev_path, "fw_ver", buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, fw);
	cr_assert_gt(ibv_read_sysfs_file(ut_list[0]->ibdev_path, "board_id", buf, sizeof(buf)), 0);
	cr_assert_eq(strncmp(buf, "MT_", 3), 0, "PSID %s", buf);
	cr_assert_lt(ibv_read_sysfs_file(ut_list[0]->ibdev_path, "no_such_attribute", buf, sizeof(buf)), 0);
}

Test(query, pkey_table_is_the_one_default_pkey)
{
	__be16 pk;
	cr_assert_eq(ibv_query_pkey(ctx, 1, 0, &pk), 0);
	cr_assert_eq(be16toh(pk), 0xffff);
	cr_assert_neq(ibv_query_pkey(ctx, 1, 1, &pk), 0);
	cr_assert_eq(ibv_get_pkey_index(ctx, 1, htobe16(0xffff)), 0);
}

Test(query, names_and_indexes)
{
	cr_assert_str_eq(ibv_get_device_name(ut_list[0]), "uverbs0");
	cr_assert_eq(ibv_get_device_index(ut_list[0]), 0);
	cr_assert_eq(ut_list[0]->node_type, IBV_NODE_CA);
	cr_assert_str_eq(ibv_node_type_str(IBV_NODE_CA), "InfiniBand channel adapter");
	cr_assert_str_eq(ibv_port_state_str(IBV_PORT_ACTIVE), "active");
	cr_assert_str_eq(ibv_wc_status_str(IBV_WC_LOC_PROT_ERR), "local protection error");
	cr_assert_str_eq(ibv_event_type_str(IBV_EVENT_PORT_ACTIVE), "port active");
	cr_assert_eq(ibv_rate_to_mbps(IBV_RATE_100_GBPS), 103125);
	cr_assert_eq(mult_to_ibv_rate(4), IBV_RATE_10_GBPS);
}

/* UVERBS_DEVICES: URIs separated by commas, each URI keeping its own comma-separated
 * emulator options. */
Test(devlist, uris_with_options_are_split_at_schemes)
{
	ut_devices("emu:ip=127.0.69.5,page=16k,emu:ip=127.0.69.6");
	cr_assert_eq(ut_ndev, 2);
	cr_assert_str_eq(ibv_get_device_name(ut_list[1]), "uverbs1");
	struct ibv_context *c = ut_open(1);
	union ibv_gid g;
	cr_assert_eq(ibv_query_gid(c, 1, 1, &g), 0);
	cr_assert_eq(g.raw[14], 69);
	cr_assert_eq(g.raw[15], 6);
	struct ibv_context *c0 = ut_open(0);
	struct ibv_device_attr a;
	cr_assert_eq(ibv_query_device(c0, &a), 0);
	cr_assert_eq(a.page_size_cap, ~(uint64_t)(16384 - 1), "page=16k reached the first device");
	cr_assert_eq(ibv_close_device(c), 0);
	cr_assert_eq(ibv_close_device(c0), 0);
	ibv_free_device_list(ut_list);
}

/* "emu:127.100.170.200" is longer than the shim's function name field: the GID must
 * still carry the whole address. */
Test(devlist, gid_of_a_long_address_is_whole)
{
	ut_devices("emu:ip=127.100.170.200");
	struct ibv_context *c = ut_open(0);
	union ibv_gid g;
	const uint8_t want[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 100, 170, 200 };
	cr_assert_eq(ibv_query_gid(c, 1, 1, &g), 0);
	cr_assert_eq(memcmp(g.raw, want, 16), 0, "GID ends %u.%u", g.raw[14], g.raw[15]);
	cr_assert_eq(ibv_close_device(c), 0);
}

/* UVERBS_PORT_MTU sets the port MTU at bring-up, as `ip link set mtu` does on Linux:
 * 9000 gives a 9022-byte PMTU frame and active_mtu 4096 (iboe_get_mtu). */
Test(port_mtu, jumbo_port_mtu_gives_a_4096_active_mtu)
{
	setenv("UVERBS_PORT_MTU", "9000", 1);
	ut_devices("emu:ip=127.0.69.7");
	struct ibv_context *c = ut_open(0);
	struct ibv_port_attr a;
	cr_assert_eq(ibv_query_port(c, 1, &a), 0);
	cr_assert_eq(a.active_mtu, IBV_MTU_4096, "active_mtu %d", a.active_mtu);
	cr_assert_eq(ibv_close_device(c), 0);
	unsetenv("UVERBS_PORT_MTU");
	ut_devices("emu:ip=127.0.69.8");
	c = ut_open(0);
	cr_assert_eq(ibv_query_port(c, 1, &a), 0);
	cr_assert_eq(a.active_mtu, IBV_MTU_1024, "without it the firmware's 1500-byte default: %d", a.active_mtu);
	cr_assert_eq(ibv_close_device(c), 0);
}

/* A value the port cannot take fails the open with EINVAL, never a silent default. */
Test(port_mtu, a_value_the_port_cannot_take_fails_the_open)
{
	const char *bad[] = { "abc", "9000x", "-1", "20", "65536", "9195" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("UVERBS_PORT_MTU", bad[i], 1);
		ut_devices("emu:ip=127.0.69.9");
		errno = 0;
		struct ibv_context *c = ibv_open_device(ut_list[0]);
		cr_assert_null(c, "UVERBS_PORT_MTU=%s opened", bad[i]);
		cr_assert_eq(errno, EINVAL, "UVERBS_PORT_MTU=%s: errno %d", bad[i], errno);
		ibv_free_device_list(ut_list);
	}
	unsetenv("UVERBS_PORT_MTU");
}
