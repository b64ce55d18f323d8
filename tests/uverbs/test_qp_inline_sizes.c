/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A QP's inline room as rdma-core's libmlx5 gives it (hw/mlx5/qp_ctrl.c
 * mx5_wqe_overhead): a QP created with ibv_create_qp reserves, for RC and UC, room
 * for a memory-window bind in every send WQE (providers/mlx5/verbs.c _sq_overhead with
 * the legacy ops: ctrl 16 + UMR ctrl 48 + mkey context 64 + 64 of KLMs = 192), and
 * max_inline_data is what is left of the WQE after it (mlx5_calc_send_wqe,
 * calc_sq_size: wqe_size - overhead - 4).  With one SGE and no inline data asked:
 * RC/UC align(192 + 16, 64) - 192 - 4 = 60, UD (ctrl 16 + datagram 48)
 * align(64 + 16, 64) - 64 - 4 = 60.  Programs rely on it: librdmacm's rdma_xclient
 * posts 16 bytes inline on a QP that asked for none. */
#include "tests/uverbs/uv_test.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;

static void setup(void)
{
	ut_devices("emu:ip=127.0.71.2");
	ctx = ut_open(0);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	cr_assert(pd && cq);
}

TestSuite(qp_inline_sizes, .init = setup);

static struct ibv_qp *new_qp(enum ibv_qp_type t, uint32_t wrs)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = t,
		.cap = { .max_send_wr = wrs, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	cr_assert_not_null(qp, "ibv_create_qp: %s", strerror(errno));
	return qp;
}

static uint32_t inline_of(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	cr_assert_eq(ibv_query_qp(qp, &a, IBV_QP_CAP, &ia), 0);
	return ia.cap.max_inline_data;
}

Test(qp_inline_sizes, one_sge_and_no_inline_asked_gives_libmlx5s_60_bytes)
{
	enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
	const char *names[] = { "RC", "UC", "UD" };

	for (unsigned i = 0; i < 3; i++) {
		struct ibv_qp *qp = new_qp(types[i], 8);
		cr_assert_eq(inline_of(qp), 60, "%s: max_inline_data %u, libmlx5 gives 60", names[i], inline_of(qp));
		ibv_destroy_qp(qp);
	}
}

Test(qp_inline_sizes, a_16_byte_inline_send_on_a_qp_that_asked_for_none_is_posted)
{
	static uint8_t msg[16] = "rdma_xclient";
	struct ut_ep e = { .ctx = ctx };
	struct ibv_wc wc;

	e.qp = new_qp(IBV_QPT_RC, 8);
	e.mtu = IBV_MTU_1024;
	cr_assert_eq(ibv_query_gid(ctx, 1, 0, &e.gid), 0);
	ut_connect(&e, e.qp->qp_num, &e.gid);
	/* lkey 0: inline data is copied from addr, no memory region is looked at */
	struct ibv_sge sg = { .addr = (uintptr_t)msg, .length = sizeof(msg), .lkey = 0 };
	struct ibv_send_wr wr = { .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED }, *bad = NULL;
	static uint8_t dst[64] __attribute__((aligned(64)));
	struct ibv_mr *mr = ibv_reg_mr(pd, dst, sizeof(dst), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	cr_assert_not_null(mr);
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = mr->rkey;
	cr_assert_eq(ibv_post_send(e.qp, &wr, &bad), 0, "16 bytes inline refused (max_inline_data %u)", inline_of(e.qp));
	int n = 0;
	for (int spins = 0; spins < 2000000 && n == 0; spins++)
		n = ibv_poll_cq(cq, 1, &wc);
	cr_assert_eq(n, 1, "no completion");
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(memcmp(dst, msg, sizeof(msg)), 0);
	ibv_destroy_qp(e.qp);
	ibv_dereg_mr(mr);
}

Test(qp_inline_sizes, a_queue_of_the_device_maximum_still_creates_with_less_inline_room)
{
	struct ibv_device_attr da;

	cr_assert_eq(ibv_query_device(ctx, &da), 0);
	/* libmlx5's 4 basic blocks a WQE would make this queue deeper than the device takes */
	struct ibv_qp *qp = new_qp(IBV_QPT_RC, (uint32_t)da.max_qp_wr);
	cr_assert_eq(inline_of(qp), 12, "ctrl + raddr + atomic in one 64-byte WQE leave 12, not %u", inline_of(qp));
	ibv_destroy_qp(qp);
}
