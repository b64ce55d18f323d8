/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* ibv_close_device with objects still open returns 0, as rdma-core's does (perftest's
 * ib_send_bw closes with one left and fails otherwise), and frees nothing under them:
 * the objects stay valid and their later use and destroy are safe (ASan would report a
 * use after free).  Closing used to free the context under its PDs, CQs, QPs, SRQs and
 * completion channels, whose later destroy then read freed memory. */
#include "tests/uverbs/uv_test.h"

static struct ibv_context *ctx(void)
{
	ut_devices("emu:ip=127.62.4.2");
	return ut_open(0);
}

Test(close_device, with_a_pd_open_succeeds_and_the_pd_still_works)
{
	struct ibv_context *c = ctx();
	static char buf[4096];
	struct ibv_pd *pd = ibv_alloc_pd(c);

	cr_assert_not_null(pd);
	cr_assert_eq(ibv_close_device(c), 0);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(mr, "the PD still works after close: %s", strerror(errno));
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
}

Test(close_device, with_a_cq_open_succeeds_and_the_cq_still_polls)
{
	struct ibv_context *c = ctx();
	struct ibv_cq *cq = ibv_create_cq(c, 4, NULL, NULL, 0);
	struct ibv_wc wc;

	cr_assert_not_null(cq);
	cr_assert_eq(ibv_close_device(c), 0);
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
}

Test(close_device, with_a_completion_channel_open_succeeds)
{
	struct ibv_context *c = ctx();
	struct ibv_comp_channel *ch = ibv_create_comp_channel(c);

	cr_assert_not_null(ch);
	cr_assert_eq(ibv_close_device(c), 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
}

Test(close_device, with_a_qp_and_srq_open_each_is_destroyed_afterwards)
{
	struct ibv_context *c = ctx();
	struct ibv_pd *pd = ibv_alloc_pd(c);
	struct ibv_cq *cq = ibv_create_cq(c, 8, NULL, NULL, 0);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq = pd ? ibv_create_srq(pd, &sa) : NULL;
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_send_sge = 1 } };
	struct ibv_qp *qp = srq ? ibv_create_qp(pd, &qa) : NULL;

	cr_assert(pd && cq && srq && qp);
	cr_assert_eq(ibv_close_device(c), 0);
	cr_assert_eq(ibv_close_device(c), 0, "a second close changes nothing");
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
}

Test(close_device, objects_of_another_context_do_not_hold_this_one)
{
	ut_devices("emu:ip=127.62.4.3");
	struct ibv_context *a = ut_open(0), *b = ut_open(0);
	struct ibv_pd *pd = ibv_alloc_pd(a);

	cr_assert_not_null(pd);
	cr_assert_eq(ibv_close_device(b), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(a), 0);
}
