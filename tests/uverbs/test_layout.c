/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Object layout: applications' inline functions (verbs.h) call through our objects, so
 * they must sit exactly where verbs.h looks: struct verbs_context with the extended
 * ABI marker and sz, the context ops, the extension ops reachable through
 * verbs_get_ctx_op, ibv_qp_ex around ibv_qp, ibv_cq_ex with ibv_cq as its prefix, and
 * the exported ibv_query_port writing no more than the old compat struct. */
#include <fcntl.h>
#include <stddef.h>
#include <unistd.h>

#include "tests/uverbs/uv_test.h"

static struct ibv_context *ctx;

static void setup(void)
{
	ut_devices("emu:ip=127.0.68.2");
	ctx = ut_open(0);
}

TestSuite(layout, .init = setup);

Test(layout, context_is_extended_verbs_context_with_its_size)
{
	cr_assert_eq(ctx->abi_compat, __VERBS_ABI_IS_EXTENDED);
	struct verbs_context *v = verbs_get_ctx(ctx);
	cr_assert_not_null(v);
	cr_assert_eq((char *)ctx - (char *)v, (ptrdiff_t)offsetof(struct verbs_context, context));
	cr_assert_eq(v->sz, sizeof(struct verbs_context));
	cr_assert_eq(ctx->device, ut_list[0]);
}

Test(layout, hot_path_context_ops_are_set)
{
	cr_assert_not_null(ctx->ops.post_send);
	cr_assert_not_null(ctx->ops.post_recv);
	cr_assert_not_null(ctx->ops.poll_cq);
	cr_assert_not_null(ctx->ops.req_notify_cq);
	cr_assert_not_null(ctx->ops.post_srq_recv);
}

Test(layout, extension_ops_reachable_through_verbs_get_ctx_op)
{
	cr_assert_not_null(verbs_get_ctx_op(ctx, query_port));
	cr_assert_not_null(verbs_get_ctx_op(ctx, query_device_ex));
	cr_assert_not_null(verbs_get_ctx_op(ctx, create_qp_ex));
	cr_assert_not_null(verbs_get_ctx_op(ctx, create_cq_ex));
	cr_assert_not_null(verbs_get_ctx_op(ctx, create_srq_ex));
	/* unsupported ones are set too, so that they can say why (they fail EOPNOTSUPP) */
	cr_assert_not_null(verbs_get_ctx_op(ctx, alloc_dm));
}

Test(layout, device_is_not_mistaken_for_a_libmlx5_device)
{
	/* rdma-core's verbs_device keeps its provider ops right after struct ibv_device;
	 * libmlx5 compares that pointer with its own: ours must read NULL. */
	void *const *after = (void *const *)(void *)((char *)ut_list[0] + sizeof(struct ibv_device));
	cr_assert_null(*after);
}

Test(layout, qp_ex_wraps_the_qp_and_every_wr_op_is_set)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	cr_assert(pd && cq);
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &ia);
	cr_assert_not_null(qp);
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	cr_assert_eq((void *)x, (void *)qp);
	cr_assert_eq(&x->qp_base, qp);
	void (*const ops[])(void) = {
		(void (*)(void))x->wr_atomic_cmp_swp, (void (*)(void))x->wr_atomic_fetch_add,
		(void (*)(void))x->wr_rdma_read, (void (*)(void))x->wr_rdma_write,
		(void (*)(void))x->wr_rdma_write_imm, (void (*)(void))x->wr_send,
		(void (*)(void))x->wr_send_imm, (void (*)(void))x->wr_send_inv,
		(void (*)(void))x->wr_set_ud_addr, (void (*)(void))x->wr_set_inline_data,
		(void (*)(void))x->wr_set_inline_data_list, (void (*)(void))x->wr_set_sge,
		(void (*)(void))x->wr_set_sge_list, (void (*)(void))x->wr_start,
		(void (*)(void))x->wr_complete, (void (*)(void))x->wr_abort,
	};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		cr_assert_not_null(ops[i], "wr op %zu", i);
	cr_assert_eq(qp->state, IBV_QPS_RESET);
	cr_assert_eq(qp->qp_type, IBV_QPT_RC);
	cr_assert_eq(qp->send_cq, cq);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
}

Test(layout, cq_ex_has_cq_as_prefix_and_polls_empty)
{
	int token;
	struct ibv_cq_init_attr_ex a = { .cqe = 8, .cq_context = &token,
					 .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM };
	struct ibv_cq_ex *cx = ibv_create_cq_ex(ctx, &a);
	cr_assert_not_null(cx);
	struct ibv_cq *cq = ibv_cq_ex_to_cq(cx);
	cr_assert_eq(cq->context, ctx);
	cr_assert_eq(cq->cq_context, &token);
	cr_assert_geq(cq->cqe, 8);
	struct ibv_wc wc;
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 0);
	struct ibv_poll_cq_attr pa = { 0 };
	cr_assert_eq(ibv_start_poll(cx, &pa), ENOENT);
	cr_assert_not_null(cx->read_byte_len);
	cr_assert_not_null(cx->read_qp_num);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
}

Test(layout, exported_query_port_writes_only_the_compat_struct)
{
	unsigned char buf[sizeof(struct ibv_port_attr) + 16];
	const size_t compat = offsetof(struct ibv_port_attr, flags) + 1;
	memset(buf, 0xa5, sizeof(buf));
	/* the exported symbol, not the verbs.h macro */
	cr_assert_eq((ibv_query_port)(ctx, 1, (struct _compat_ibv_port_attr *)(void *)buf), 0);
	struct ibv_port_attr *p = (struct ibv_port_attr *)(void *)buf;
	cr_assert_eq(p->state, IBV_PORT_ACTIVE);
	cr_assert_eq(p->link_layer, IBV_LINK_LAYER_ETHERNET);
	for (size_t i = compat; i < sizeof(buf); i++)
		cr_assert_eq(buf[i], 0xa5, "byte %zu past the compat struct written", i);
}

Test(layout, query_port_op_writes_no_more_than_asked)
{
	struct verbs_context *v = verbs_get_ctx_op(ctx, query_port);
	unsigned char buf[sizeof(struct ibv_port_attr)];
	memset(buf, 0x5a, sizeof(buf));
	cr_assert_eq(v->query_port(ctx, 1, (struct ibv_port_attr *)(void *)buf, 8), 0);
	cr_assert_eq(((struct ibv_port_attr *)(void *)buf)->state, IBV_PORT_ACTIVE);
	for (size_t i = 8; i < sizeof(buf); i++)
		cr_assert_eq(buf[i], 0x5a);
}

Test(layout, async_and_channel_fds_are_real_idle_descriptors)
{
	cr_assert_geq(fcntl(ctx->async_fd, F_GETFD), 0);
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	cr_assert_not_null(ch);
	cr_assert_geq(fcntl(ch->fd, F_GETFD), 0);
	struct pollfd p[2] = { { .fd = ctx->async_fd, .events = POLLIN }, { .fd = ch->fd, .events = POLLIN } };
	cr_assert_eq(poll(p, 2, 50), 0, "nothing pending yet");
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
}

Test(layout, device_attr_ex_carries_the_plain_attributes)
{
	struct ibv_device_attr_ex x;
	struct ibv_device_attr a;
	memset(&x, 0, sizeof(x));
	cr_assert_eq(ibv_query_device_ex(ctx, NULL, &x), 0);
	cr_assert_eq(ibv_query_device(ctx, &a), 0);
	cr_assert_eq(memcmp(&x.orig_attr, &a, sizeof(a)), 0);
	cr_assert_eq(x.phys_port_cnt_ex, a.phys_port_cnt);
}
