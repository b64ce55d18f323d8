/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* UC and UD between two emulated NICs: UC SEND/WRITE/WRITE_IMM data at every size,
 * UC messages with a lost packet dropped whole (never delivered partly); UD SEND with
 * the 40-byte GRH area holding the IPv4 header in its last 20 bytes, Q_Key mismatch
 * dropped and counted, UD larger than the MTU refused with LOC_LEN_ERR; the AV: an
 * empty source GID entry refused, a link-local GID delivered by destination MAC, an
 * unknown MAC lost and counted. */
#include "tp_pair.h"

#include <arpa/inet.h>
#include <infiniband/mlx5dv.h>

static struct tp_nic A, B;
static struct tp_ep qa, qb;
static uint8_t *abuf, *bbuf;
static struct mx5_mr *amr, *bmr;
#define LEN (256u << 10)

static const struct tp_fixture fx = { &A, &B, &qa, &qb, &abuf, &bbuf, &amr, &bmr, LEN };

static void open_pair(enum mx5_qp_type t, const struct tp_conn *c)
{
	tp_fixture_open(&fx, "emu:", "emu:", 1024, t, 64, MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE, c);
}

static void teardown(void)
{
	tp_fixture_close(&fx);
}

TestSuite(uc_ud, .fini = teardown, .timeout = 60);

Test(uc_ud, uc_send_and_write_every_size)
{
	struct tp_conn c = { .mtu = 3, .sq_psn = 0xfffffe, .rq_psn = 5 };
	uint32_t sizes[] = { 0, 1, 1023, 1024, 1025, 64u << 10 };
	struct ibv_wc wc;
	uint32_t seed = 1;

	open_pair(MX5_QPT_UC, &c);
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];

		tp_fill(abuf, len, seed);
		cr_assert_eq(tp_post_recv(&qb, seed, bbuf, LEN, tp_lkey(bmr)), 0);
		cr_assert_eq(tp_post(&qa, IBV_WR_SEND_WITH_IMM, seed, abuf, len, tp_lkey(amr), 0, 0, IBV_SEND_SIGNALED), 0);
		tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
		tp_expect(&B, &wc, IBV_WC_SUCCESS, 5000);
		cr_assert_eq(wc.byte_len, len);
		cr_assert_eq(wc.imm_data, htobe32(seed ^ 0x5a5a0000u));
		cr_assert_eq(XXH64(bbuf, len, 0), XXH64(abuf, len, 0));
		seed++;
		tp_fill(abuf, len, seed);
		cr_assert_eq(tp_post_recv(&qb, seed, bbuf, 0, tp_lkey(bmr)), 0);
		cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE_WITH_IMM, seed, abuf, len, tp_lkey(amr),
				     (uintptr_t)bbuf + 4096, tp_rkey(bmr), IBV_SEND_SIGNALED), 0);
		tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
		tp_expect(&B, &wc, IBV_WC_SUCCESS, 5000);
		cr_assert_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
		cr_assert_eq(XXH64(bbuf + 4096, len, 0), XXH64(abuf, len, 0));
		seed++;
	}
	cr_assert_eq(tp_ctr(&B).tx_pkts, 0, "UC has no acknowledgements");
}

Test(uc_ud, uc_message_with_a_lost_packet_is_dropped_whole)
{
	struct tp_conn c = { .mtu = 1 };
	struct emu_wire_faults f = { .loss = 0.05, .seed = 4242 };
	struct ibv_wc wc;
	unsigned got = 0;
	const unsigned n = 60, len = 8 * 256;

	open_pair(MX5_QPT_UC, &c);
	cr_assert_eq(emu_wire_faults_set(A.emu, &f), 0);
	for (unsigned i = 0; i < n; i++)
		cr_assert_eq(tp_post_recv(&qb, i, bbuf + (i % 32) * 4096, 4096, tp_lkey(bmr)), 0);
	for (unsigned i = 0; i < n; i++) {
		tp_fill(abuf + (i % 32) * 4096, len, i);
		cr_assert_eq(tp_post(&qa, IBV_WR_SEND_WITH_IMM, i, abuf + (i % 32) * 4096, len, tp_lkey(amr), 0, 0,
				     IBV_SEND_SIGNALED), 0);
		tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
		while (tp_poll(&B, &wc, 20)) {
			uint32_t id = be32toh(wc.imm_data) ^ 0x5a5a0000u;
			uint8_t *p = bbuf + (wc.wr_id % 32) * 4096;

			cr_assert_eq(wc.status, IBV_WC_SUCCESS);
			cr_assert_eq(wc.byte_len, len);
			tp_fill(abuf + LEN - 4096, len, id);
			cr_assert_eq(memcmp(p, abuf + LEN - 4096, len), 0, "message %u delivered with wrong data", id);
			got++;
		}
	}
	cr_assert_lt(got, n, "5%% loss on 8-packet messages lost none");
	cr_assert_gt(got, n / 3);
	cr_assert_gt(tp_ctr(&B).drops[EMU_ROCE_DROP_PSN], 0);
}

static void ud_av(uint8_t av[MX5_AV_SIZE], const struct tp_nic *to)
{
	struct mx5_av_attr a;

	memset(&a, 0, sizeof(a));
	memcpy(a.dgid, to->gid, 16);
	memcpy(a.dmac, to->mac, 6);
	a.hop_limit = 64;
	a.udp_sport = 0xc123;
	mx5_av_build(av, &a);
}

static int ud_send(uint8_t *av, uint32_t qkey, uint64_t id, void *buf, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = lkey };
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = len ? 1 : 0;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = (struct ibv_ah *)(void *)av;
	wr.wr.ud.remote_qpn = qb.qpn;
	wr.wr.ud.remote_qkey = qkey;
	return mx5_post_send(qa.sq, &wr, &bad);
}

Test(uc_ud, uc_send_longer_than_the_receive_buffer_is_loc_len_and_moves_the_qp_to_error)
{
	struct tp_conn c = { .mtu = 3, .sq_psn = 1, .rq_psn = 1 };
	struct mx5_qp_attr qa_attr;
	struct ibv_wc wc;

	open_pair(MX5_QPT_UC, &c);
	memset(bbuf, 0x77, 4096);
	cr_assert_eq(tp_post_recv(&qb, 1, bbuf, 64, tp_lkey(bmr)), 0);
	cr_assert_eq(tp_post_recv(&qb, 2, bbuf + 1024, 64, tp_lkey(bmr)), 0);
	tp_fill(abuf, 2048, 9);
	cr_assert_eq(tp_post(&qa, IBV_WR_SEND, 10, abuf, 2048, tp_lkey(amr), 0, 0, IBV_SEND_SIGNALED), 0);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);   /* UC: the sender knows nothing */
	tp_expect(&B, &wc, IBV_WC_LOC_LEN_ERR, 5000);
	cr_assert_eq(wc.wr_id, 1);
	/* the QP is in error now: the other posted receive is flushed */
	tp_expect(&B, &wc, IBV_WC_WR_FLUSH_ERR, 5000);
	cr_assert_eq(wc.wr_id, 2);
	memset(&qa_attr, 0, sizeof(qa_attr));
	cr_assert_eq(mx5_qp_query(qb.qp, &qa_attr, NULL), 0);
	cr_assert_eq(qa_attr.qp_state, MX5_QPS_ERR);
	/* nothing past the 64-byte buffer was written (the rest of 0x77 is intact) */
	for (unsigned i = 64; i < 1024; i++)
		cr_assert_eq(bbuf[i], 0x77, "byte %u overwritten", i);
}

Test(uc_ud, ud_send_lands_after_a_40_byte_grh_with_the_ipv4_header)
{
	struct tp_conn c = { .qkey = 0x11111111 };
	uint8_t av[MX5_AV_SIZE];
	struct ibv_wc wc;
	uint32_t src, dst;

	open_pair(MX5_QPT_UD, &c);
	ud_av(av, &B);
	tp_fill(abuf, 1000, 3);
	cr_assert_eq(tp_post_recv(&qb, 1, bbuf, 4096, tp_lkey(bmr)), 0);
	cr_assert_eq(ud_send(av, 0x11111111, 1, abuf, 1000, tp_lkey(amr)), 0);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	tp_expect(&B, &wc, IBV_WC_SUCCESS, 5000);
	cr_assert_eq(wc.byte_len, 1040);
	cr_assert_eq(wc.src_qp, qa.qpn);
	cr_assert(wc.wc_flags & IBV_WC_GRH);
	for (int i = 0; i < 20; i++)
		cr_assert_eq(bbuf[i], 0, "GRH area byte %d", i);
	cr_assert_eq(bbuf[20], 0x45, "IPv4 version/IHL");
	cr_assert_eq(bbuf[20 + 9], 17, "protocol UDP");
	memcpy(&src, bbuf + 20 + 12, 4);
	memcpy(&dst, bbuf + 20 + 16, 4);
	cr_assert_eq(ntohl(src), A.ip);
	cr_assert_eq(ntohl(dst), B.ip);
	cr_assert_eq(memcmp(bbuf + 40, abuf, 1000), 0);
}

/* The receive CQE says which header came in.  PRM CQE "sl" field (flags_rqpn bits
 * 27:24) on a RoCE port, as UCX's ud_iface.h quotes it: bit 3 set when the frame had a
 * UDP header, bits 2:0 the L3 header type (0 GRH/RoCE v1, 1 IPv6, 2 IPv4: mlx5dv.h
 * MLX5_CQE_L3_HDR_TYPE_*); rdma-core's mlx5 (providers/mlx5/cq.c handle_responder)
 * hands it out unchanged as wc.sl, and UCX's ud_verbs picks the DGID's offset in the
 * 40-byte GRH area from it.  The raw CQE is read through mlx5dv.h's struct mlx5_cqe64. */
Test(uc_ud, ud_receive_completion_names_roce_v2_over_ipv4)
{
	struct tp_conn c = { .qkey = 0x11111111 };
	uint8_t av[MX5_AV_SIZE];
	struct ibv_wc wc;
	const struct mlx5_cqe64 *cqe;
	uint32_t flags_rqpn;

	open_pair(MX5_QPT_UD, &c);
	ud_av(av, &B);
	cr_assert_eq(tp_post_recv(&qb, 1, bbuf, 4096, tp_lkey(bmr)), 0);
	cr_assert_eq(ud_send(av, 0x11111111, 1, abuf, 100, tp_lkey(amr)), 0);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	tp_expect(&B, &wc, IBV_WC_SUCCESS, 5000);
	cqe = (const struct mlx5_cqe64 *)(B.cqr->buf + (size_t)((B.cqr->cons_index - 1) & (B.cqr->cqe_cnt - 1)) * 64);
	flags_rqpn = be32toh(cqe->flags_rqpn);
	cr_assert_eq(flags_rqpn & 0xffffff, qa.qpn, "source QP");
	cr_assert_eq((flags_rqpn >> 24) & 7, MLX5_CQE_L3_HDR_TYPE_IPV4, "L3 header type %u", (flags_rqpn >> 24) & 7);
	cr_assert(flags_rqpn & (1u << 27), "UDP header present (RoCE v2)");
	cr_assert_neq((flags_rqpn >> 28) & 3, 0, "GRH area written");
	/* what libmlx5 reports for that CQE */
	cr_assert_eq(wc.sl, (flags_rqpn >> 24) & 0xf);
	cr_assert(wc.wc_flags & IBV_WC_GRH);
	cr_assert_eq(wc.sl & 7, MLX5_CQE_L3_HDR_TYPE_IPV4);
}

Test(uc_ud, ud_wrong_qkey_is_dropped_and_counted)
{
	struct tp_conn c = { .qkey = 0x11111111 };
	uint8_t av[MX5_AV_SIZE];
	struct ibv_wc wc;

	open_pair(MX5_QPT_UD, &c);
	ud_av(av, &B);
	cr_assert_eq(tp_post_recv(&qb, 1, bbuf, 4096, tp_lkey(bmr)), 0);
	cr_assert_eq(ud_send(av, 0x22222222, 1, abuf, 100, tp_lkey(amr)), 0);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	cr_assert_eq(tp_poll(&B, &wc, 100), 0, "a datagram with the wrong Q_Key was delivered");
	cr_assert_eq(tp_ctr(&B).drops[EMU_ROCE_DROP_QKEY], 1);
}

Test(uc_ud, ud_larger_than_the_mtu_is_a_local_length_error)
{
	struct tp_conn c = { .qkey = 0x11111111 };
	uint8_t av[MX5_AV_SIZE];
	struct ibv_wc wc;

	open_pair(MX5_QPT_UD, &c);
	ud_av(av, &B);
	cr_assert_eq(ud_send(av, 0x11111111, 1, abuf, 8192, tp_lkey(amr)), 0);
	tp_expect(&A, &wc, IBV_WC_LOC_LEN_ERR, 5000);
	cr_assert_eq(tp_ctr(&A).tx_pkts, 0);
}

/* The AV names its source by GID index; an entry nobody programmed has no address to
 * send from, and the device completes the WQE in error instead of sending. */
Test(uc_ud, ud_av_with_an_empty_source_gid_is_a_local_qp_operation_error)
{
	struct tp_conn c = { .qkey = 0x11111111 };
	uint8_t av[MX5_AV_SIZE];
	struct mx5_av_attr a;
	struct ibv_wc wc;

	open_pair(MX5_QPT_UD, &c);
	memset(&a, 0, sizeof(a));
	memcpy(a.dgid, B.gid, 16);
	memcpy(a.dmac, B.mac, 6);
	a.sgid_index = 7;
	a.hop_limit = 64;
	a.udp_sport = 0xc123;
	mx5_av_build(av, &a);
	cr_assert_eq(tp_post_recv(&qb, 1, bbuf, 4096, tp_lkey(bmr)), 0);
	cr_assert_eq(ud_send(av, 0x11111111, 1, abuf, 100, tp_lkey(amr)), 0);
	tp_expect(&A, &wc, IBV_WC_LOC_QP_OP_ERR, 5000);
	cr_assert_eq(tp_ctr(&A).tx_pkts, 0);
	cr_assert_eq(tp_poll(&B, &wc, 100), 0, "a datagram left from an empty GID entry");
}

/* The port's link-local GID for mac, as the driver derives it (mx5_gid_entry_link_local;
 * its value is checked in tests/uverbs/test_roce_addr.c and test_query.c). */
static void link_local(uint8_t gid[16], const uint8_t mac[6])
{
	struct mx5_gid_entry e;

	mx5_gid_entry_link_local(&e, mac);
	memcpy(gid, e.gid, 16);
}

/* A link-local GID is on-link: the emulated segment delivers it to the port owning
 * the destination MAC, as a switch would. */
Test(uc_ud, ud_to_a_link_local_gid_reaches_the_port_owning_the_mac)
{
	struct tp_conn c = { .qkey = 0x11111111 };
	uint8_t av[MX5_AV_SIZE];
	struct mx5_av_attr a;
	struct ibv_wc wc;

	open_pair(MX5_QPT_UD, &c);
	memset(&a, 0, sizeof(a));
	link_local(a.dgid, B.mac);
	memcpy(a.dmac, B.mac, 6);
	a.hop_limit = 64;
	a.udp_sport = 0xc123;
	mx5_av_build(av, &a);
	tp_fill(abuf, 100, 4);
	cr_assert_eq(tp_post_recv(&qb, 1, bbuf, 4096, tp_lkey(bmr)), 0);
	cr_assert_eq(ud_send(av, 0x11111111, 1, abuf, 100, tp_lkey(amr)), 0);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	tp_expect(&B, &wc, IBV_WC_SUCCESS, 5000);
	cr_assert_eq(memcmp(bbuf + 40, abuf, 100), 0);
}

/* A frame to a MAC no emulated port owns is lost (and counted), not sent anywhere. */
Test(uc_ud, ud_to_a_mac_no_port_owns_is_lost_and_counted)
{
	static const uint8_t stranger[6] = { 0x0c, 0x42, 0xa1, 0x00, 0x00, 0x01 };
	struct tp_conn c = { .qkey = 0x11111111 };
	uint8_t av[MX5_AV_SIZE];
	struct mx5_av_attr a;
	struct ibv_wc wc;

	open_pair(MX5_QPT_UD, &c);
	memset(&a, 0, sizeof(a));
	link_local(a.dgid, stranger);
	memcpy(a.dmac, stranger, 6);
	a.hop_limit = 64;
	a.udp_sport = 0xc123;
	mx5_av_build(av, &a);
	cr_assert_eq(tp_post_recv(&qb, 1, bbuf, 4096, tp_lkey(bmr)), 0);
	cr_assert_eq(ud_send(av, 0x11111111, 1, abuf, 100, tp_lkey(amr)), 0);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);   /* UD: the sender knows nothing */
	cr_assert_eq(tp_poll(&B, &wc, 100), 0);
	cr_assert_eq(tp_ctr(&A).tx_no_port, 1);
}
