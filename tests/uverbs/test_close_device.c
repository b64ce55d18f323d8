/* ibv_close_device with objects still open refuses with EBUSY and leaves the context
 * usable, as a kernel refuses to free an object others still hold: closing used to
 * return 0 and free the context under its PDs, CQs, QPs, SRQs and completion channels,
 * whose later destroy then read freed memory. */
#include "tests/uverbs/uv_test.h"

static struct ibv_context *ctx(void)
{
	ut_devices("emu:ip=127.62.4.2");
	return ut_open(0);
}

Test(close_device, with_a_pd_open_is_ebusy_and_the_pd_still_works)
{
	struct ibv_context *c = ctx();
	struct ibv_pd *pd = ibv_alloc_pd(c);
	static uint8_t buf[4096] __attribute__((aligned(4096)));

	cr_assert_not_null(pd);
	cr_assert_eq(ibv_close_device(c), EBUSY);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(mr, "the context is still usable: %s", strerror(errno));
	cr_assert_eq(ibv_close_device(c), EBUSY, "an MR holds its PD, and so the context");
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(c), 0);
}

Test(close_device, with_a_cq_open_is_ebusy)
{
	struct ibv_context *c = ctx();
	struct ibv_cq *cq = ibv_create_cq(c, 16, NULL, NULL, 0);
	struct ibv_wc wc;

	cr_assert_not_null(cq);
	cr_assert_eq(ibv_close_device(c), EBUSY);
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_close_device(c), 0);
}

Test(close_device, with_a_completion_channel_open_is_ebusy)
{
	struct ibv_context *c = ctx();
	struct ibv_comp_channel *ch = ibv_create_comp_channel(c);

	cr_assert_not_null(ch);
	cr_assert_eq(ibv_close_device(c), EBUSY);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
	cr_assert_eq(ibv_close_device(c), 0);
}

Test(close_device, with_a_qp_and_srq_open_is_ebusy_until_all_are_gone)
{
	struct ibv_context *c = ctx();
	struct ibv_pd *pd = ibv_alloc_pd(c);
	struct ibv_cq *cq = ibv_create_cq(c, 16, NULL, NULL, 0);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_send_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	cr_assert(pd && cq && srq && qp);
	cr_assert_eq(ibv_close_device(c), EBUSY);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_close_device(c), EBUSY);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_close_device(c), EBUSY);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(c), 0);
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
