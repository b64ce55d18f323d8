/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RoCE addressing through the verbs: the GID table (link-local at 0, the port's IPv4
 * address at 1, then the user's addresses from UVERBS_GIDS / UVERBS_CONFIG), the
 * destination MAC of a peer (static neighbour table, link-local EUI-64, the emulated
 * segment's own answer, otherwise EHOSTUNREACH), and empty GID entries refused. */
#include <arpa/inet.h>
#include <unistd.h>

#include "tests/uverbs/uv_test.h"

static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

static void gid_of(const char *txt, union ibv_gid *g)
{
	memset(g, 0, sizeof(*g));
	if (inet_pton(AF_INET, txt, g->raw + 12) == 1)
		memcpy(g->raw, v4mapped, 12);
	else
		cr_assert_eq(inet_pton(AF_INET6, txt, g->raw), 1, "%s", txt);
}

static void expect_gid(struct ibv_context *c, int idx, const char *txt)
{
	union ibv_gid want, got;
	struct ibv_gid_entry e;
	gid_of(txt, &want);
	cr_assert_eq(ibv_query_gid(c, 1, idx, &got), 0);
	char buf[INET6_ADDRSTRLEN];
	inet_ntop(AF_INET6, got.raw, buf, sizeof(buf));
	cr_assert_eq(memcmp(got.raw, want.raw, 16), 0, "GID %d is %s, expected %s", idx, buf, txt);
	cr_assert_eq(ibv_query_gid_ex(c, 1, (uint32_t)idx, &e, 0), 0);
	cr_assert_eq(e.gid_type, IBV_GID_TYPE_ROCE_V2, "GID %d type", idx);
}

static void expect_empty(struct ibv_context *c, int idx)
{
	union ibv_gid got;
	struct ibv_gid_entry e;
	static const uint8_t zero[16];
	cr_assert_eq(ibv_query_gid(c, 1, idx, &got), 0, "an empty entry in range reads, as zero");
	cr_assert_eq(memcmp(got.raw, zero, 16), 0, "GID %d is not empty", idx);
	cr_assert_eq(ibv_query_gid_ex(c, 1, (uint32_t)idx, &e, 0), ENODATA);
}

static int resolve(struct ibv_context *c, const char *txt, uint8_t mac[6])
{
	struct ibv_ah_attr a;
	memset(&a, 0, sizeof(a));
	a.is_global = 1;
	a.port_num = 1;
	gid_of(txt, &a.grh.dgid);
	return ibv_resolve_eth_l2_from_gid(c, &a, mac, NULL);
}

static void expect_mac(struct ibv_context *c, const char *txt, const uint8_t want[6])
{
	uint8_t mac[6];
	cr_assert_eq(resolve(c, txt, mac), 0, "no MAC for %s", txt);
	cr_assert_eq(memcmp(mac, want, 6), 0, "%s -> %02x:%02x:%02x:%02x:%02x:%02x", txt, mac[0], mac[1],
		     mac[2], mac[3], mac[4], mac[5]);
}

/* An RC QP in INIT and the RTR attributes towards dgid from sgid_index. */
static int rtr(struct ut_ep *e, const char *dgid, uint8_t sgid_index)
{
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x123;
	a.rq_psn = 1;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = sgid_index;
	a.ah_attr.grh.hop_limit = 64;
	gid_of(dgid, &a.ah_attr.grh.dgid);
	return ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

static struct ibv_ah *ah_to(struct ibv_pd *pd, const char *dgid, uint8_t sgid_index)
{
	struct ibv_ah_attr a;
	memset(&a, 0, sizeof(a));
	a.is_global = 1;
	a.port_num = 1;
	a.grh.sgid_index = sgid_index;
	a.grh.hop_limit = 64;
	gid_of(dgid, &a.grh.dgid);
	return ibv_create_ah(pd, &a);
}

static void ep_close(struct ut_ep *e)
{
	cr_assert_eq(ibv_destroy_qp(e->qp), 0);
	cr_assert_eq(ibv_destroy_cq(e->cq), 0);
	cr_assert_eq(ibv_dereg_mr(e->mr), 0);
	cr_assert_eq(ibv_dealloc_pd(e->pd), 0);
	free(e->buf);
	cr_assert_eq(ibv_close_device(e->ctx), 0);
}

/* ------------------------------------------------------------------ the GID table */

Test(gids, link_local_at_0_then_the_port_address_then_the_users_in_order)
{
	setenv("UVERBS_GIDS", "uverbs0=fd00::5,10.1.2.3;uverbs9=10.9.9.9", 1);
	ut_devices("emu:ip=127.0.72.2");
	struct ibv_context *c = ut_open(0);
	/* MAC 02:00:7f:00:48:02: EUI-64 00:00:7f:ff:fe:00:48:02 */
	expect_gid(c, 0, "fe80::7fff:fe00:4802");
	expect_gid(c, 1, "127.0.72.2");
	expect_gid(c, 2, "fd00::5");
	expect_gid(c, 3, "10.1.2.3");
	expect_empty(c, 4);
	char buf[64];
	cr_assert_gt(ibv_read_sysfs_file(ut_list[0]->ibdev_path, "ports/1/gids/2", buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "fd00:0000:0000:0000:0000:0000:0000:0005");
	cr_assert_eq(ibv_close_device(c), 0);
}

Test(gids, an_entry_without_a_device_name_applies_to_every_device)
{
	setenv("UVERBS_GIDS", "fd00::7", 1);
	ut_devices("emu:ip=127.0.72.3,emu:ip=127.0.72.4");
	struct ibv_context *c0 = ut_open(0), *c1 = ut_open(1);
	expect_gid(c0, 2, "fd00::7");
	expect_gid(c1, 1, "127.0.72.4");
	expect_gid(c1, 2, "fd00::7");
	cr_assert_eq(ibv_close_device(c0), 0);
	cr_assert_eq(ibv_close_device(c1), 0);
}

Test(gids, a_malformed_address_is_skipped_and_the_rest_kept)
{
	setenv("UVERBS_GIDS", "uverbs0=10.1.2.300,0.0.0.0,fd00::8", 1);
	ut_devices("emu:ip=127.0.72.5");
	struct ibv_context *c = ut_open(0);
	expect_gid(c, 2, "fd00::8");
	expect_empty(c, 3);
	cr_assert_eq(ibv_close_device(c), 0);
}

static char cfg_path[64];

static void write_config(const char *text)
{
	snprintf(cfg_path, sizeof(cfg_path), "/tmp/uverbs-roceaddr-%d.conf", (int)getpid());
	FILE *f = fopen(cfg_path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	setenv("UVERBS_CONFIG", cfg_path, 1);
}

static void remove_config(void)
{
	if (cfg_path[0])
		unlink(cfg_path);
}

Test(gids, config_file_gids_and_neigh_lines_are_read, .fini = remove_config)
{
	write_config("# a Mac's RoCE port\n"
		     "gids emu:127.0.72.6 192.168.7.1   fd00::71\n"
		     "gids * 192.168.8.1\n"
		     "neigh 192.168.7.2 0c:42:a1:00:00:02   # the peer\n");
	ut_devices("emu:ip=127.0.72.6");
	struct ibv_context *c = ut_open(0);
	expect_gid(c, 2, "192.168.7.1");
	expect_gid(c, 3, "fd00::71");
	expect_gid(c, 4, "192.168.8.1");
	static const uint8_t peer[6] = { 0x0c, 0x42, 0xa1, 0, 0, 2 };
	expect_mac(c, "192.168.7.2", peer);
	cr_assert_eq(ibv_close_device(c), 0);
}

/* ------------------------------------------------------------------ neighbours */

Test(neigh, static_table_gives_the_mac_and_rtr_accepts_the_peer)
{
	setenv("UVERBS_NEIGH", "10.9.8.7=0c:42:a1:0a:0b:0c,fd00::9=0c-42-a1-00-00-09", 1);
	ut_devices("emu:ip=127.0.72.7");
	struct ibv_context *c = ut_open(0);
	static const uint8_t m4[6] = { 0x0c, 0x42, 0xa1, 0x0a, 0x0b, 0x0c }, m6[6] = { 0x0c, 0x42, 0xa1, 0, 0, 9 };
	expect_mac(c, "10.9.8.7", m4);
	expect_mac(c, "fd00::9", m6);
	struct ut_ep e;
	ut_ep_init(&e, c, IBV_QPT_RC, 4096, NULL);
	ut_to_init(&e);
	cr_assert_eq(rtr(&e, "10.9.8.7", 1), 0);
	ep_close(&e);
}

Test(neigh, a_link_local_gid_carries_its_mac)
{
	ut_devices("emu:ip=127.0.72.8");
	struct ibv_context *c = ut_open(0);
	static const uint8_t m[6] = { 0x0c, 0x42, 0xa1, 0x00, 0x00, 0x01 };
	expect_mac(c, "fe80::e42:a1ff:fe00:1", m);
	cr_assert_eq(ibv_close_device(c), 0);
}

Test(neigh, the_emulated_segment_answers_for_its_loopback_peers)
{
	ut_devices("emu:ip=127.0.72.9");
	struct ibv_context *c = ut_open(0);
	static const uint8_t m[6] = { 0x02, 0x00, 127, 0, 72, 10 };
	expect_mac(c, "127.0.72.10", m);
	cr_assert_eq(ibv_close_device(c), 0);
}

Test(neigh, an_unknown_peer_is_ehostunreach_at_rtr_create_ah_and_resolve)
{
	unsetenv("UVERBS_NEIGH");
	ut_devices("emu:ip=127.0.72.11");
	struct ibv_context *c = ut_open(0);
	uint8_t mac[6];
	cr_assert_eq(resolve(c, "10.9.8.6", mac), EHOSTUNREACH);
	cr_assert_eq(resolve(c, "fd00::6", mac), EHOSTUNREACH);
	struct ut_ep e;
	ut_ep_init(&e, c, IBV_QPT_RC, 4096, NULL);
	ut_to_init(&e);
	cr_assert_eq(rtr(&e, "10.9.8.6", 1), EHOSTUNREACH);
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	cr_assert_eq(ibv_query_qp(e.qp, &qa, IBV_QP_STATE, &qi), 0);
	cr_assert_eq(qa.qp_state, IBV_QPS_INIT, "the refused RTR left the QP in INIT");
	cr_assert_eq(e.qp->state, IBV_QPS_INIT, "and the verbs' copy of the state too");
	errno = 0;
	cr_assert_null(ah_to(e.pd, "10.9.8.6", 1));
	cr_assert_eq(errno, EHOSTUNREACH);
	ep_close(&e);
}

/* ------------------------------------------------------------------ empty entries */

Test(gids, an_empty_gid_index_is_einval_at_rtr_and_create_ah)
{
	ut_devices("emu:ip=127.0.72.12");
	struct ibv_context *c = ut_open(0);
	expect_empty(c, 5);
	struct ut_ep e;
	ut_ep_init(&e, c, IBV_QPT_RC, 4096, NULL);
	ut_to_init(&e);
	cr_assert_eq(rtr(&e, "127.0.72.13", 5), EINVAL);
	cr_assert_eq(rtr(&e, "127.0.72.13", 255), EINVAL, "the last entry");
	errno = 0;
	cr_assert_null(ah_to(e.pd, "127.0.72.13", 5));
	cr_assert_eq(errno, EINVAL);
	struct ibv_ah *ah = ah_to(e.pd, "127.0.72.13", 1);
	cr_assert_not_null(ah, "a programmed entry is accepted: %s", strerror(errno));
	cr_assert_eq(ibv_destroy_ah(ah), 0);
	cr_assert_eq(rtr(&e, "127.0.72.13", 1), 0);
	ep_close(&e);
}
