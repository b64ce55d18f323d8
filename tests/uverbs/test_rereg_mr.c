/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* ibv_rereg_mr without a new translation keeps the keys, as a real mlx5 does (Linux
 * mlx5_ib changes access and PD in place with a UMR WQE; rdma-core's
 * tests/test_mr.py test_mr_rereg_access keeps using the rkey it exchanged before), and
 * the new rights and PD are what the device then enforces.  A new translation still
 * makes a new registration. */
#include "tests/uverbs/uv_test.h"

static struct ibv_context *ctx;
static struct ut_ep e, r;         /* requester e and responder r: two RC QPs on one NIC */
static uint8_t target[8192] __attribute__((aligned(4096)));

static void setup(void)
{
	ut_devices("emu:ip=127.0.74.2");
	ctx = ut_open(0);
	ut_ep_init(&e, ctx, IBV_QPT_RC, 8192, NULL);
	ut_ep_init(&r, ctx, IBV_QPT_RC, 8192, NULL);
	ut_pair(&e, &r);
}

TestSuite(rereg_mr, .init = setup, .timeout = 60);

Test(rereg_mr, access_change_keeps_both_keys_and_grants_the_new_right)
{
	struct ibv_mr *m = ibv_reg_mr(r.pd, target, sizeof(target), IBV_ACCESS_LOCAL_WRITE);
	uint32_t lkey, rkey;

	cr_assert_not_null(m);
	lkey = m->lkey;
	rkey = m->rkey;
	cr_assert_eq(ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE), 0);
	cr_assert_eq(m->lkey, lkey, "lkey 0x%x became 0x%x", lkey, m->lkey);
	cr_assert_eq(m->rkey, rkey, "rkey 0x%x became 0x%x", rkey, m->rkey);
	memset(e.buf, 0x5c, 64);
	cr_assert_eq(ut_write(&e, 64, target, rkey, 1), IBV_WC_SUCCESS, "WRITE through the kept rkey");
	cr_assert_eq(target[0], 0x5c);
	cr_assert_eq(target[63], 0x5c);
	cr_assert_eq(ibv_dereg_mr(m), 0);
}

Test(rereg_mr, access_change_that_drops_remote_write_is_enforced_on_the_same_rkey)
{
	struct ibv_mr *m = ibv_reg_mr(r.pd, target, sizeof(target), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	uint32_t rkey;

	cr_assert_not_null(m);
	rkey = m->rkey;
	cr_assert_eq(ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_LOCAL_WRITE), 0);
	cr_assert_eq(m->rkey, rkey);
	{ enum ibv_wc_status st = ut_write(&e, 64, target, rkey, 2); cr_assert_eq(st, IBV_WC_REM_ACCESS_ERR, "a WRITE the MR no longer allows: %s", ibv_wc_status_str(st)); }
}

Test(rereg_mr, pd_change_keeps_the_keys_and_moves_the_region_to_the_new_pd)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_mr *m;
	uint32_t lkey, rkey;

	cr_assert_not_null(pd2);
	m = ibv_reg_mr(pd2, target, sizeof(target), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	cr_assert_not_null(m);
	lkey = m->lkey;
	rkey = m->rkey;
	/* on pd2 the responder's QP (PD r.pd) may not use it */
	cr_assert_eq(ut_write(&e, 64, target, rkey, 3), IBV_WC_REM_ACCESS_ERR, "a WRITE across PDs");
	/* both QPs are in error now: back through RESET and connected again */
	{
		struct ibv_qp_attr rst = { .qp_state = IBV_QPS_RESET };

		cr_assert_eq(ibv_modify_qp(e.qp, &rst, IBV_QP_STATE), 0);
		cr_assert_eq(ibv_modify_qp(r.qp, &rst, IBV_QP_STATE), 0);
		ut_pair(&e, &r);
	}
	cr_assert_eq(ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_PD, r.pd, NULL, 0, 0), 0);
	cr_assert_eq(m->lkey, lkey);
	cr_assert_eq(m->rkey, rkey);
	cr_assert_eq(m->pd, r.pd);
	memset(e.buf, 0x3a, 64);
	cr_assert_eq(ut_write(&e, 64, target, rkey, 4), IBV_WC_SUCCESS, "a WRITE in the MR's new PD");
	cr_assert_eq(target[10], 0x3a);
	cr_assert_eq(ibv_dealloc_pd(pd2), 0, "pd2 no longer holds the MR");
	cr_assert_eq(ibv_dereg_mr(m), 0);
}

Test(rereg_mr, translation_change_is_a_new_registration_at_the_new_address)
{
	static uint8_t other[4096] __attribute__((aligned(4096)));
	struct ibv_mr *m = ibv_reg_mr(r.pd, target, sizeof(target), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);

	cr_assert_not_null(m);
	cr_assert_eq(ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, other, sizeof(other), 0), 0);
	cr_assert_eq(m->addr, (void *)other);
	memset(e.buf, 0x77, 64);
	cr_assert_eq(ut_write(&e, 64, other, m->rkey, 5), IBV_WC_SUCCESS);
	cr_assert_eq(other[0], 0x77);
}
