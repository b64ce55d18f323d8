/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* MKey changes in place by UMR (PRM "UMR WQE": ctrl segment with opcode UMR and the
 * MKey in its immediate, UMR control segment, mkey context segment).  There is no
 * command that modifies an MKey: Linux mlx5_ib changes a user MR's access rights and
 * PD for ibv_rereg_mr by posting such a WQE on a QP kept for it (drivers/infiniband/
 * hw/mlx5/umr.c mlx5r_umr_rereg_pd_access), so the keys stay, which applications
 * count on (rdma-core tests/test_mr.py test_mr_rereg_access).  Here the caller owns
 * that QP: an RC QP in RTS on the MR's device, created with qpc.fre (a device completes
 * UMR on any other QP in error), whose send CQ carries nothing else.
 * Control plane only: one WQE, its completion waited for (bounded). */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "hw/mlx5/doorbell.h"
#include "hw/mlx5/mx5_objects.h"
#include "hw/mlx5/poll.h"
#include "hw/mlx5/wqe.h"

enum { MX5_UMR_WAIT_MS = 2000 };
/* mkey_mask bits (Linux include/linux/mlx5/device.h MLX5_MKEY_MASK_*). */
#define MX5_MKEY_MASK_PD (1ull << 7)
#define MX5_MKEY_MASK_ACCESS (0x1full << 17)   /* local read/write, remote read/write, atomic */

static uint64_t mx5_umr_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int mx5_mr_umr_rereg(struct mx5_mr *mr, struct mx5_qp *qp, struct mx5_cq *cq, struct mx5_pd *pd,
		     unsigned access, int change_pd, int change_access)
{
	if (!mr || !qp || !cq || (change_pd && !pd) || (!change_pd && !change_access))
		return -EINVAL;
	struct mx5_device *dev = mr->dev;
	if (mr->nparts != 1)
		return mx5_fail(dev, -EOPNOTSUPP, "UMR: MR of %u MKeys (indirect) is re-registered instead",
				mr->nparts);
	/* a daemon's client has no MKey created with umr_en (tools/uvd/policy.c, mr.c) */
	if (dev->remote)
		return mx5_fail(dev, -EOPNOTSUPP, "UMR: MKeys through a device daemon take no UMR; re-registered instead");
	if (change_pd && pd->dev != dev)
		return mx5_fail(dev, -EINVAL, "UMR: PD of another device");
	if ((access & (MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_ATOMIC)) && !(access & MX5_ACCESS_LOCAL_WRITE))
		return mx5_fail(dev, -EINVAL, "MR: remote write or atomic access needs local write (IBTA 10.6.3.1)");
	/* memory pinned for reading only gains no write right in place: Linux mlx5_ib
	 * (can_use_umr_rereg_access) re-registers a umem that is not writable, and the new
	 * pin then fails with EFAULT */
	if (change_access && mr->pin.readonly &&
	    (access & (MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_ATOMIC)))
		return mx5_fail(dev, -EFAULT, "UMR: the region's memory is read-only: no write right in place");
	if (dev->health != MX5_HEALTH_OK)
		return mx5_fail(dev, -ENODEV, "UMR: device is in fatal error");
	struct mx5_sq *sq = mx5_qp_sq_state(qp);
	struct mx5_cq_ring *ring = mx5_cq_state(cq);
	if (mx5_sq_room(sq) < 2)
		return mx5_fail(dev, -ENOMEM, "UMR: send queue full");

	/* mkey context: the mkc layout (mlx5dv.h struct mlx5_wqe_mkey_context_seg) */
	uint8_t mkc[PRM_SIZE(mkc)] = { 0 };
	uint64_t mask = 0;
	if (change_access) {
		PRM_SET(mkc, mkc, lr, 1);
		PRM_SET(mkc, mkc, lw, (access & MX5_ACCESS_LOCAL_WRITE) ? 1 : 0);
		PRM_SET(mkc, mkc, rr, (access & MX5_ACCESS_REMOTE_READ) ? 1 : 0);
		PRM_SET(mkc, mkc, rw, (access & MX5_ACCESS_REMOTE_WRITE) ? 1 : 0);
		PRM_SET(mkc, mkc, a, (access & MX5_ACCESS_REMOTE_ATOMIC) ? 1 : 0);
		mask |= MX5_MKEY_MASK_ACCESS;
	}
	if (change_pd) {
		PRM_SET(mkc, mkc, pd, pd->pdn);
		mask |= MX5_MKEY_MASK_PD;
	}
	uint32_t idx = sq->cur_post & (sq->wqe_cnt - 1);
	uint8_t *ctrl = mx5_sq_bb(sq, sq->cur_post);
	uint8_t *umr = ctrl + PRM_SIZE(wqe_ctrl_seg);
	uint8_t *second = mx5_sq_bb(sq, sq->cur_post + 1);   /* the ring may wrap here */
	/* ds: ctrl 16 + UMR control 48 + mkey context 64 bytes */
	uint32_t ds = (uint32_t)(PRM_SIZE(wqe_ctrl_seg) + PRM_SIZE(wqe_umr_ctrl_seg) + PRM_SIZE(mkc)) / 16u;
	mx5_set_ctrl_seg(ctrl, sq->cur_post, PRM_WQE_OP_UMR, sq->qpn, ds, /* small initiator fence, as Linux posts UMR; CQE always */
			 (uint8_t)(MX5_FM_INITIATOR_SMALL << 5 | MX5_CE_ALWAYS << 2),
			 mr->info.lkey);
	memset(umr, 0, PRM_SIZE(wqe_umr_ctrl_seg));
	PRM_SET(wqe_umr_ctrl_seg, umr, mkey_mask, mask);
	memcpy(second, mkc, sizeof(mkc));
	sq->wrid[idx] = 0;
	sq->wqe_next[idx] = sq->cur_post + 2;
	sq->cur_post += 2;
	mx5_sq_doorbell(sq, ctrl, 2, 1, NULL);

	struct ibv_wc wc;
	uint64_t end = mx5_umr_now_ms() + MX5_UMR_WAIT_MS;
	int n;
	while ((n = mx5_poll_cq(ring, 1, &wc)) == 0 && mx5_umr_now_ms() < end)
		sched_yield();
	if (n < 0)
		return mx5_fail(dev, n, "UMR: completion of an unknown queue on the UMR CQ");
	if (n == 0)
		return mx5_fail(dev, -ETIMEDOUT, "UMR on MKey 0x%x: no completion within %u ms", mr->info.lkey,
				(unsigned)MX5_UMR_WAIT_MS);
	if (wc.status != IBV_WC_SUCCESS)
		return mx5_fail(dev, -EIO, "UMR on MKey 0x%x: completion status %d, syndrome 0x%x", mr->info.lkey,
				wc.status, wc.vendor_err);
	if (change_pd && pd != mr->pd) {
		mr->pd->refs--;
		pd->refs++;
		mr->pd = pd;
	}
	return 0;
}
