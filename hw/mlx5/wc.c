/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Write-combining self-test: does a BlueFlame burst reach the device whole?
 *
 * The method is Linux's (drivers/net/ethernet/mellanox/mlx5/core/wc.c,
 * mlx5_core_test_wc / mlx5_wc_post_nop / mlx5_wc_poll_cq), facts only:
 *   - TEST_WC_NUM_WQES = 255 NOP WQEs (one 16-byte ctrl segment, ds 1), each written in
 *     the ring and then as one 64-byte BlueFlame write, the register's halves
 *     alternating (offset ^= (1 << log_bf_reg_size) / 2), the doorbell record carrying
 *     the producer counter before each write;
 *   - in the ring only the last NOP asks for a CQE (CQ_UPDATE); in every BlueFlame copy
 *     CQ_UPDATE is set;
 *   - the device executes the BlueFlame copy when the burst arrives whole and reads the
 *     ring when it does not, so the first requester CQE tells: wqe_counter 254 (the
 *     last NOP) means the bursts were not taken ("Write combining is not supported"),
 *     anything earlier means they were;
 *   - polled for at most 100 ms (TEST_WC_POLLING_MAX_TIME_JIFFIES).
 * Linux posts on an Ethernet SQ; we post on a UD QP of our own (a NOP sends nothing, and
 * a UD QP reaches RTS with no peer).  hwcheck step 6 runs this through `fwcmd wctest`
 * and turns BlueFlame off (MLX5_SHUT_UP_BF=1, mx5.h enum mx5_bf_policy) when it fails.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "hw/mlx5/doorbell.h"
#include "hw/mlx5/mx5_objects.h"
#include "hw/mlx5/poll.h"
#include "hw/mlx5/wqe.h"

enum { MX5_WC_NOPS = 255, MX5_WC_WAIT_MS = 100 };

static uint64_t mx5_wc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* One NOP: `ring_ce` in the ring copy, CQ_UPDATE always in the BlueFlame copy. */
static void mx5_wc_post_nop(struct mx5_sq *sq, int ring_ce)
{
	uint32_t idx = sq->cur_post & (sq->wqe_cnt - 1);
	uint8_t *ctrl = mx5_sq_bb(sq, sq->cur_post);
	uint8_t burst[MX5_SEND_WQE_BB] = { 0 };

	memset(ctrl, 0, MX5_SEND_WQE_BB);
	mx5_set_ctrl_seg(ctrl, sq->cur_post, PRM_WQE_OP_NOP, sq->qpn, 1,
			 (uint8_t)((ring_ce ? MX5_CE_ALWAYS : MX5_CE_ON_ERROR) << 2), 0);
	memcpy(burst, ctrl, PRM_SIZE(wqe_ctrl_seg));
	PRM_SET(wqe_ctrl_seg, burst, ce, MX5_CE_ALWAYS);
	sq->wrid[idx] = sq->cur_post;
	sq->cur_post++;
	sq->wqe_next[idx] = sq->cur_post;

	uint8_t rec[PRM_SIZE(qp_dbrec)] = { 0 };
	const size_t snd = PRM_OFF(qp_dbrec, send_counter) / 32 * 4;
	PRM_SET(qp_dbrec, rec, send_counter, sq->cur_post & 0xffff);
	mx5_wmb_before_dbrec();
	memcpy((uint8_t *)sq->dbrec + snd, rec + snd, 4);
	mx5_wc_start();
	mx5_bf_copy64(sq->bf_map + sq->bf_off, burst);
	mx5_wc_flush();
	shim_mmio_notify(sq->bar, SHIM_MMIO_WC_WRITE, sq->bf_off, MX5_SEND_WQE_BB);
	sq->bf_off ^= sq->bf_size;
}

int mx5_wc_test(struct mx5_device *dev, struct mx5_wc_result *res)
{
	struct mx5_pd *pd = NULL;
	struct mx5_cq *cq = NULL;
	struct mx5_qp *qp = NULL;
	int rc;

	if (!dev || !res)
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	res->nops = MX5_WC_NOPS;
	if (!MX5_CAP_GEN(dev, bf) || !dev->bar0.wc_base || dev->attr.bf_policy == MX5_BF_OFF) {
		res->state = MX5_WC_NO_BLUEFLAME;
		return 0;
	}
	rc = mx5_pd_alloc(dev, &pd);
	if (!rc)
		rc = mx5_cq_create(dev, &(struct mx5_cq_attr){ .cqe = MX5_WC_NOPS + 1 }, &cq);
	if (!rc)
		rc = mx5_qp_create(pd, &(struct mx5_qp_init_attr){
			.type = MX5_QPT_UD, .send_cq = cq, .recv_cq = cq,
			.cap = { .max_send_wr = MX5_WC_NOPS + 1, .max_recv_wr = 1, .max_send_sge = 1,
				 .max_recv_sge = 1 } }, &qp);
	if (!rc)
		rc = mx5_qp_modify(qp, &(struct mx5_qp_attr){ .qp_state = MX5_QPS_INIT, .port_num = 1,
					.qkey = 0x11111111 },
				   MX5_QP_STATE | MX5_QP_PKEY_INDEX | MX5_QP_PORT | MX5_QP_QKEY);
	if (!rc)
		rc = mx5_qp_modify(qp, &(struct mx5_qp_attr){ .qp_state = MX5_QPS_RTR }, MX5_QP_STATE);
	if (!rc)
		rc = mx5_qp_modify(qp, &(struct mx5_qp_attr){ .qp_state = MX5_QPS_RTS }, MX5_QP_STATE | MX5_QP_SQ_PSN);
	if (rc)
		goto out;

	struct mx5_sq *sq = mx5_qp_sq_state(qp);
	struct mx5_cq_ring *ring = mx5_cq_state(cq);
	if (sq->bf_size == 0) {   /* no register of its own: doorbells only (uar.c) */
		res->state = MX5_WC_NO_BLUEFLAME;
		goto out;
	}
	if (mx5_sq_room(sq) < MX5_WC_NOPS) {
		rc = mx5_fail(dev, -ENOMEM, "write-combining test: send queue of %u basic blocks", sq->wqe_cnt);
		goto out;
	}
	for (int i = 0; i < MX5_WC_NOPS; i++)
		mx5_wc_post_nop(sq, i == MX5_WC_NOPS - 1);

	struct ibv_wc wc;
	uint64_t t0 = mx5_wc_now_ms(), end = t0 + MX5_WC_WAIT_MS;
	int n;
	while ((n = mx5_poll_cq(ring, 1, &wc)) == 0 && mx5_wc_now_ms() < end)
		sched_yield();
	res->ms = (unsigned)(mx5_wc_now_ms() - t0);
	if (n < 0) {
		rc = mx5_fail(dev, n, "write-combining test: completion of an unknown queue");
		goto out;
	}
	if (n == 0) {
		rc = mx5_fail(dev, -ETIMEDOUT, "write-combining test: no completion within %u ms of %u NOPs",
			      (unsigned)MX5_WC_WAIT_MS, (unsigned)MX5_WC_NOPS);
		goto out;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		rc = mx5_fail(dev, -EIO, "write-combining test: NOP completed with status %d, syndrome 0x%x",
			      wc.status, wc.vendor_err);
		goto out;
	}
	res->first_wqe = (uint32_t)wc.wr_id;
	res->state = wc.wr_id == MX5_WC_NOPS - 1 ? MX5_WC_NOT_SUPPORTED : MX5_WC_SUPPORTED;
out:
	if (qp)
		mx5_qp_destroy(qp);
	if (cq)
		mx5_cq_destroy(cq);
	if (pd)
		mx5_pd_free(pd);
	return rc;
}
