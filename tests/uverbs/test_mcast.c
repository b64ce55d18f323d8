/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Multicast through the verbs: ibv_attach_mcast / ibv_detach_mcast on UD QPs (the
 * driver's ATTACH_TO_MCG / DETACH_FROM_MCG), and UD sends to a multicast GID
 * (::ffff:239.x.y.z, DestQP 0xFFFFFF) between two emulated NICs in this process.  Every
 * QP attached to the group gets a copy (two on the other NIC, one beside the sender),
 * a QP not attached gets none, a detached QP stops getting them, the sending QP gets its
 * own copy only without IBV_QP_CREATE_BLOCK_SELF_MCAST_LB; bad input is EINVAL as on
 * Linux (ib_attach_mcast), a QP still attached is not destroyed (EBUSY, as Linux
 * uverbs_free_qp); the limits reported are the device's capabilities. */
#include "uv_test.h"

#include <endian.h>
#include <unistd.h>

#define MC_QPN 0xffffff
#define QKEY 0x11111111u   /* ut_to_init's Q_Key */
#define MSG 200

/* Each test its own group: ctest may run other multicast tests beside this one. */
static union ibv_gid group_gid(uint8_t last)
{
	union ibv_gid g;

	memset(&g, 0, sizeof(g));
	g.raw[10] = g.raw[11] = 0xff;
	g.raw[12] = 239;
	g.raw[13] = 77;
	g.raw[14] = (uint8_t)(getpid() & 0xff);
	g.raw[15] = last;
	return g;
}

static struct ibv_context *ca, *cb;

/* Criterion runs each test in a process of its own, at once: each its own addresses. */
static void open_two(int n)
{
	char uris[64];

	snprintf(uris, sizeof(uris), "emu:ip=127.0.77.%d,emu:ip=127.0.77.%d", 2 * n, 2 * n + 1);
	ut_devices(uris);
	ca = ut_open(0);
	cb = ut_open(1);
}

/* A UD endpoint in RTS with receives posted, optionally created with create_flags. */
static void ud_ep(struct ut_ep *e, struct ibv_context *c, uint32_t create_flags)
{
	ut_ep_init(e, c, IBV_QPT_UD, 64 * 1024, NULL);
	if (create_flags) {
		struct ibv_qp_init_attr_ex ia = {
			.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_UD,
			.cap = { .max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 1, .max_recv_sge = 1 },
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
			.pd = e->pd, .create_flags = create_flags,
		};
		cr_assert_eq(ibv_destroy_qp(e->qp), 0);
		e->qp = ibv_create_qp_ex(c, &ia);
		cr_assert_not_null(e->qp, "ibv_create_qp_ex: %s", strerror(errno));
	}
	ut_connect(e, 0, NULL);
	for (int i = 0; i < 16; i++)
		ut_post_recv(e, (uint64_t)i, e->buf + 4096 + (size_t)i * 1024, 1024);
}

static void ep_free(struct ut_ep *e)
{
	cr_assert_eq(ibv_destroy_qp(e->qp), 0);
	cr_assert_eq(ibv_dereg_mr(e->mr), 0);
	cr_assert_eq(ibv_destroy_cq(e->cq), 0);
	cr_assert_eq(ibv_dealloc_pd(e->pd), 0);
	free(e->buf);
}

static void close_two(void)
{
	cr_assert_eq(ibv_close_device(ca), 0);
	cr_assert_eq(ibv_close_device(cb), 0);
	ibv_free_device_list(ut_list);
}

static struct ibv_ah *group_ah(struct ut_ep *e, const union ibv_gid *g)
{
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1 };

	a.grh.dgid = *g;
	a.grh.hop_limit = 64;
	struct ibv_ah *ah = ibv_create_ah(e->pd, &a);
	cr_assert_not_null(ah, "ibv_create_ah: %s", strerror(errno));
	return ah;
}

static void send_to_group(struct ut_ep *s, struct ibv_ah *ah, uint32_t tag)
{
	struct ibv_sge sg = { .addr = (uintptr_t)s->buf, .length = MSG, .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = tag, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(tag) }, *bad = NULL;
	struct ibv_wc wc;

	memset(s->buf, (int)(tag & 0xff), MSG);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = MC_QPN;
	wr.wr.ud.remote_qkey = QKEY;
	cr_assert_eq(ibv_post_send(s->qp, &wr, &bad), 0);
	/* the send's own completion (the sender's CQ may also get its own copy: skip it) */
	for (;;) {
		cr_assert_eq(ut_poll(s->cq, &wc, 5000), 1, "no send completion");
		if (wc.opcode == IBV_WC_SEND)
			break;
	}
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
}

/* The next receive on e: the message tagged tag, its 40-byte GRH area then MSG bytes. */
static void expect_copy(struct ut_ep *e, uint32_t tag, const char *who)
{
	struct ibv_wc wc;

	cr_assert_eq(ut_poll(e->cq, &wc, 5000), 1, "%s: no copy of message %u within 5 s", who, tag);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s: %s", who, ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, IBV_WC_RECV, "%s", who);
	cr_assert_eq(be32toh(wc.imm_data), tag, "%s", who);
	cr_assert_eq(wc.byte_len, 40u + MSG, "%s", who);
	cr_assert(wc.wc_flags & IBV_WC_GRH, "%s", who);
	const uint8_t *m = e->buf + 4096 + (size_t)wc.wr_id * 1024;
	/* RoCE v2 over IPv4: the IPv4 header in the GRH area's last 20 bytes, its
	 * destination the group's address */
	cr_assert_eq(m[20] >> 4, 4, "%s: IPv4 header", who);
	cr_assert_eq(m[20 + 16], 239, "%s: destination", who);
	cr_assert_eq(m[40], (uint8_t)tag, "%s: payload", who);
	cr_assert_eq(m[40 + MSG - 1], (uint8_t)tag, "%s: payload", who);
	ut_post_recv(e, wc.wr_id, e->buf + 4096 + (size_t)wc.wr_id * 1024, 1024);
}

static void expect_none(struct ut_ep *e, int ms, const char *who)
{
	struct ibv_wc wc;

	cr_assert_eq(ut_poll(e->cq, &wc, ms), 0, "%s: got a completion (opcode %d, imm 0x%x)", who, wc.opcode,
		     be32toh(wc.imm_data));
}

TestSuite(mcast, .timeout = 60);

Test(mcast, every_member_on_both_nics_gets_a_copy_and_detach_stops_it)
{
	struct ut_ep s, ra, rb1, rb2, nb;
	union ibv_gid g = group_gid(1);

	open_two(1);
	ud_ep(&s, ca, 0);     /* the sender, not attached */
	ud_ep(&ra, ca, 0);    /* a member beside the sender */
	ud_ep(&rb1, cb, 0);   /* two members on the other NIC */
	ud_ep(&rb2, cb, 0);
	ud_ep(&nb, cb, 0);    /* on the other NIC, not a member */
	cr_assert_eq(ibv_attach_mcast(ra.qp, &g, 0), 0);
	cr_assert_eq(ibv_attach_mcast(rb1.qp, &g, 0), 0);
	cr_assert_eq(ibv_attach_mcast(rb2.qp, &g, 0), 0);
	cr_assert_eq(ibv_attach_mcast(rb2.qp, &g, 0), 0, "attaching twice is allowed (one copy still)");
	struct ibv_ah *ah = group_ah(&s, &g);

	for (uint32_t t = 1; t <= 3; t++)
		send_to_group(&s, ah, t);
	for (uint32_t t = 1; t <= 3; t++) {
		expect_copy(&ra, t, "member beside the sender");
		expect_copy(&rb1, t, "first member on the other NIC");
		expect_copy(&rb2, t, "second member on the other NIC");
	}
	expect_none(&rb2, 200, "second member: one copy per message even attached twice");
	expect_none(&nb, 100, "non-member");
	expect_none(&s, 100, "sender, not attached");

	cr_assert_eq(ibv_detach_mcast(rb2.qp, &g, 0), 0);
	cr_assert_eq(ibv_detach_mcast(rb2.qp, &g, 0), EINVAL, "detached already");
	send_to_group(&s, ah, 4);
	expect_copy(&ra, 4, "member beside the sender");
	expect_copy(&rb1, 4, "member left on the other NIC");
	expect_none(&rb2, 300, "detached member");

	/* the last member of NIC B leaves: NIC B leaves the IP group, NIC A still gets it */
	cr_assert_eq(ibv_detach_mcast(rb1.qp, &g, 0), 0);
	send_to_group(&s, ah, 5);
	expect_copy(&ra, 5, "member beside the sender");
	expect_none(&rb1, 300, "detached member");
	cr_assert_eq(ibv_detach_mcast(ra.qp, &g, 0), 0);
	ibv_destroy_ah(ah);
	ep_free(&s);
	ep_free(&ra);
	ep_free(&rb1);
	ep_free(&rb2);
	ep_free(&nb);
	close_two();
}

Test(mcast, the_sender_gets_its_own_copy_unless_it_blocks_self_loopback)
{
	struct ut_ep s, blk, rb;
	union ibv_gid g = group_gid(2);

	open_two(2);
	ud_ep(&s, ca, 0);
	ud_ep(&blk, ca, IBV_QP_CREATE_BLOCK_SELF_MCAST_LB);
	ud_ep(&rb, cb, 0);
	cr_assert_eq(ibv_attach_mcast(s.qp, &g, 0), 0);
	cr_assert_eq(ibv_attach_mcast(blk.qp, &g, 0), 0);
	cr_assert_eq(ibv_attach_mcast(rb.qp, &g, 0), 0);
	struct ibv_ah *sah = group_ah(&s, &g), *bah = group_ah(&blk, &g);

	/* blk sends: rb and s get it, blk does not */
	send_to_group(&blk, bah, 7);
	expect_copy(&rb, 7, "member on the other NIC");
	expect_copy(&s, 7, "member beside the sender");
	expect_none(&blk, 300, "sender with BLOCK_SELF_MCAST_LB");
	/* s sends: its own copy comes back (no block), and blk gets one */
	send_to_group(&s, sah, 8);
	expect_copy(&rb, 8, "member on the other NIC");
	expect_copy(&blk, 8, "member beside the sender");
	expect_copy(&s, 8, "sender without the block");
	ibv_destroy_ah(sah);
	ibv_destroy_ah(bah);
	/* Linux uverbs_free_qp: a QP still attached is not destroyed (EBUSY) */
	cr_assert_eq(ibv_destroy_qp(s.qp), EBUSY);
	cr_assert_eq(ibv_detach_mcast(s.qp, &g, 0), 0);
	cr_assert_eq(ibv_detach_mcast(blk.qp, &g, 0), 0);
	cr_assert_eq(ibv_detach_mcast(rb.qp, &g, 0), 0);
	ep_free(&s);
	ep_free(&blk);
	ep_free(&rb);
	close_two();
}

Test(mcast, bad_input_is_refused_and_limits_are_the_devices)
{
	struct ut_ep ud, rc;
	union ibv_gid g = group_gid(3), uni;
	struct ibv_device_attr da;

	open_two(3);
	ud_ep(&ud, ca, 0);
	ut_ep_init(&rc, ca, IBV_QPT_RC, 4096, NULL);
	/* Linux ib_attach_mcast: UD only, and a multicast GID (rdma_is_multicast_addr) */
	cr_assert_eq(ibv_attach_mcast(rc.qp, &g, 0), EINVAL, "RC QP");
	cr_assert_eq(ibv_query_gid(ca, 1, 0, &uni), 0);
	cr_assert_eq(ibv_attach_mcast(ud.qp, &uni, 0), EINVAL, "the port's own unicast GID");
	union ibv_gid v4uni = g;
	v4uni.raw[12] = 10;   /* ::ffff:10.x.y.z */
	cr_assert_eq(ibv_attach_mcast(ud.qp, &v4uni, 0), EINVAL, "IPv4-mapped unicast");
	cr_assert_eq(ibv_detach_mcast(ud.qp, &g, 0), EINVAL, "never attached");

	cr_assert_eq(ibv_query_device(ca, &da), 0);
	cr_assert_eq(da.max_mcast_grp, 1 << 21, "2^log_max_mcg of the ConnectX-4 trace");
	cr_assert_eq(da.max_mcast_qp_attach, 48, "max_qp_mcg of the ConnectX-4 trace");
	cr_assert_eq(da.max_total_mcast_qp_attach, 48 << 21);
	/* one QP more than max_qp_mcg: a limit (ENOMEM, as Linux maps the PRM's 0x8) */
	struct ibv_qp *q[49];
	struct ibv_qp_init_attr ia = { .send_cq = ud.cq, .recv_cq = ud.cq, .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
						.max_recv_sge = 1 } };
	for (int i = 0; i < 49; i++) {
		q[i] = ibv_create_qp(ud.pd, &ia);
		cr_assert_not_null(q[i]);
		cr_assert_eq(ibv_attach_mcast(q[i], &g, 0), i < 48 ? 0 : ENOMEM, "QP %d", i);
	}
	for (int i = 0; i < 49; i++) {
		if (i < 48)
			cr_assert_eq(ibv_detach_mcast(q[i], &g, 0), 0);
		cr_assert_eq(ibv_destroy_qp(q[i]), 0);
	}
	cr_assert_eq(ibv_attach_mcast(ud.qp, &g, 0), 0);
	cr_assert_eq(ibv_destroy_qp(ud.qp), EBUSY, "still attached");
	cr_assert_eq(ibv_detach_mcast(ud.qp, &g, 0), 0);
	ep_free(&ud);
	ep_free(&rc);
	close_two();
}
