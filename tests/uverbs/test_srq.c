/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* ibv_create_srq sizes: max_wr is a minimum the provider rounds up, as rdma-core's
 * mlx5 (providers/mlx5/verbs.c create_srq: max_wr + 1 rounded up to a power of two)
 * and rxe (rxe_srq.c rxe_srq_chk_init raises it to RXE_MIN_SRQ_WR) do, 0 included. */
#include "tests/uverbs/uv_test.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;

static void setup(void)
{
	ut_devices("emu:ip=127.0.75.2");
	ctx = ut_open(0);
	pd = ibv_alloc_pd(ctx);
	cr_assert_not_null(pd);
}

TestSuite(srq, .init = setup);

Test(srq, max_wr_0_is_rounded_up_to_a_usable_srq)
{
	struct ibv_srq_init_attr ia = { .attr = { .max_wr = 0, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &ia);
	static uint8_t buf[64];
	struct ibv_mr *mr;

	cr_assert_not_null(srq, "ibv_create_srq max_wr 0: %s", strerror(errno));
	cr_assert_geq(ia.attr.max_wr, 1, "granted max_wr %u", ia.attr.max_wr);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(mr);
	{
		struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = sizeof(buf), .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;

		cr_assert_eq(ibv_post_srq_recv(srq, &wr, &bad), 0, "one receive fits what was granted");
	}
	cr_assert_eq(ibv_destroy_srq(srq), 0);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

Test(srq, max_wr_beyond_the_device_is_still_einval)
{
	struct ibv_device_attr da;
	struct ibv_srq_init_attr ia = { .attr = { .max_sge = 1 } };

	cr_assert_eq(ibv_query_device(ctx, &da), 0);
	ia.attr.max_wr = (uint32_t)da.max_srq_wr + 1;
	cr_assert_null(ibv_create_srq(pd, &ia));
	cr_assert_eq(errno, EINVAL);
}
