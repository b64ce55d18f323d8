/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Several GSI QPs on one emulated device, as several processes sharing it through uvd -R
 * each create one for their own CM (docs/architecture.md, section 18): a packet for QPN 1
 * reaches every one of them (hw/emu/rx_check.c), at most 16 live at once (cmd_qp.c), and
 * a destroyed one's place is taken by the next. */
#include "tests/uverbs/uv_test.h"

#define GSI_QKEY 0x80010000u   /* IBTA 13.5.1, the GSI's well-known Q_Key */
#define MSG 64

struct gsi {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t buf[40 + MSG];   /* GRH + message */
};

static struct ibv_qp *gsi_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_UD, .send_cq = cq, .recv_cq = cq, .pd = pd,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.create_flags = IBV_QP_CREATE_SOURCE_QPN, .source_qpn = 1,
	};
	return ibv_create_qp_ex(pd->context, &ia);
}

static void ud_up(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qkey = qkey };
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), 0);
	a.qp_state = IBV_QPS_RTR;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
}

static void gsi_up(struct gsi *g, struct ibv_pd *pd)
{
	g->cq = ibv_create_cq(pd->context, 8, NULL, NULL, 0);
	cr_assert_not_null(g->cq);
	g->qp = gsi_qp(pd, g->cq);
	cr_assert_not_null(g->qp, "GSI QP: %s", strerror(errno));
	ud_up(g->qp, GSI_QKEY);
	g->mr = ibv_reg_mr(pd, g->buf, sizeof(g->buf), IBV_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(g->mr);
	struct ibv_sge sge = { .addr = (uintptr_t)g->buf, .length = sizeof(g->buf), .lkey = g->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 }, *bad;
	cr_assert_eq(ibv_post_recv(g->qp, &wr, &bad), 0);
}

static void gsi_down(struct gsi *g)
{
	cr_assert_eq(ibv_destroy_qp(g->qp), 0);
	cr_assert_eq(ibv_dereg_mr(g->mr), 0);
	cr_assert_eq(ibv_destroy_cq(g->cq), 0);
}

Test(gsi_shared, every_gsi_qp_of_the_device_gets_each_qp1_packet, .timeout = 60)
{
	ut_devices("emu:ip=127.62.7.2,emu:ip=127.62.7.3");
	struct ibv_context *rx_ctx = ut_open(0), *tx_ctx = ut_open(1);
	struct ibv_pd *rx_pd = ibv_alloc_pd(rx_ctx), *tx_pd = ibv_alloc_pd(tx_ctx);
	cr_assert(rx_pd && tx_pd);

	/* 16 GSI QPs live at once on the receiving device; a 17th is refused */
	static struct gsi g[16];
	for (int i = 0; i < 16; i++)
		gsi_up(&g[i], rx_pd);
	struct ibv_cq *cq17 = ibv_create_cq(rx_ctx, 8, NULL, NULL, 0);
	cr_assert_not_null(cq17);
	errno = 0;
	cr_assert_null(gsi_qp(rx_pd, cq17), "a 17th live GSI QP");
	cr_assert_eq(ibv_destroy_cq(cq17), 0);
	/* one goes; its place is taken by a new one, which hears QPN 1 too */
	gsi_down(&g[3]);
	gsi_up(&g[3], rx_pd);

	/* the sender: a UD QP on the other device, to QPN 1 at the receiver's IPv4 GID */
	struct ibv_cq *tx_cq = ibv_create_cq(tx_ctx, 8, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_UD, .send_cq = tx_cq, .recv_cq = tx_cq,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 1, .max_send_sge = 1,
						.max_recv_sge = 1 } };
	struct ibv_qp *tx = ibv_create_qp(tx_pd, &ia);
	cr_assert_not_null(tx);
	/* a Q_Key with its high bit set in a work request means the QP's own (IBTA 10.2.5,
	 * controlled Q_Keys): the sender's is the GSI's, as a MAD sender's is */
	ud_up(tx, GSI_QKEY);
	static uint8_t msg[MSG];
	for (int i = 0; i < MSG; i++)
		msg[i] = (uint8_t)(0xa0 + i);
	struct ibv_mr *tx_mr = ibv_reg_mr(tx_pd, msg, sizeof(msg), 0);
	cr_assert_not_null(tx_mr);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 64, .sgid_index = 1 } };
	cr_assert_eq(ibv_query_gid(rx_ctx, 1, 1, &aa.grh.dgid), 0);
	cr_assert_eq(aa.grh.dgid.raw[12], 127, "GID 1 is the receiver's IPv4 address");
	struct ibv_ah *ah = ibv_create_ah(tx_pd, &aa);
	cr_assert_not_null(ah);
	struct ibv_sge sge = { .addr = (uintptr_t)msg, .length = MSG, .lkey = tx_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 1;
	wr.wr.ud.remote_qkey = GSI_QKEY;
	cr_assert_eq(ibv_post_send(tx, &wr, &bad), 0);
	struct ibv_wc wc;
	ut_expect(tx_cq, &wc, IBV_WC_SUCCESS);

	for (int i = 0; i < 16; i++) {
		cr_assert_eq(ut_poll(g[i].cq, &wc, 5000), 1, "GSI QP %d (QPN 0x%x) got nothing", i, g[i].qp->qp_num);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS);
		cr_assert_eq(wc.byte_len, 40 + MSG);
		cr_assert_eq(wc.src_qp, tx->qp_num);
		cr_assert_eq(memcmp(g[i].buf + 40, msg, MSG), 0, "GSI QP %d: the message", i);
	}

	cr_assert_eq(ibv_destroy_ah(ah), 0);
	cr_assert_eq(ibv_destroy_qp(tx), 0);
	cr_assert_eq(ibv_dereg_mr(tx_mr), 0);
	cr_assert_eq(ibv_destroy_cq(tx_cq), 0);
	for (int i = 0; i < 16; i++)
		gsi_down(&g[i]);
	cr_assert_eq(ibv_dealloc_pd(rx_pd), 0);
	cr_assert_eq(ibv_dealloc_pd(tx_pd), 0);
	cr_assert_eq(ibv_close_device(rx_ctx), 0);
	cr_assert_eq(ibv_close_device(tx_ctx), 0);
}
