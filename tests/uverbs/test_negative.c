/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Bad input and unsupported features (docs/architecture.md, "The verbs layer"): bad arguments fail as the verbs
 * man pages say (NULL or errno, post_send returning the errno with *bad_wr on the first
 * WR not posted), features the driver lacks fail with EOPNOTSUPP and one line under
 * UVERBS_LOG, and nothing crashes. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/uverbs/uv_test.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static uint8_t buf[8192] __attribute__((aligned(4096)));
static struct ibv_mr *mr;

static void setup(void)
{
	ut_devices("emu:ip=127.0.70.2");
	ctx = ut_open(0);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	cr_assert(pd && cq && mr);
}

TestSuite(negative, .init = setup);

static struct ibv_qp *new_qp(enum ibv_qp_type t, uint32_t inl)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = t,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = inl },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	cr_assert_not_null(qp, "ibv_create_qp: %s", strerror(errno));
	return qp;
}

/* An RC QP connected to itself: in RTS, so posting reaches the WR checks. */
static struct ibv_qp *rts_qp(uint32_t inl)
{
	struct ut_ep e = { .ctx = ctx };
	e.qp = new_qp(IBV_QPT_RC, inl);
	e.mtu = IBV_MTU_1024;
	cr_assert_eq(ibv_query_gid(ctx, 1, 0, &e.gid), 0);
	ut_connect(&e, e.qp->qp_num, &e.gid);
	cr_assert_eq(e.qp->state, IBV_QPS_RTS);
	return e.qp;
}

Test(negative, null_arguments_fail_without_crashing)
{
	errno = 0;
	cr_assert_null(ibv_open_device(NULL));
	cr_assert_null(ibv_alloc_pd(NULL));
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(ibv_reg_mr(NULL, buf, 64, 0));
	cr_assert_null(ibv_create_qp(pd, NULL));
	cr_assert_null(ibv_create_qp(NULL, NULL));
	cr_assert_null(ibv_create_comp_channel(NULL));
	cr_assert_eq(ibv_modify_qp(NULL, NULL, IBV_QP_STATE), EINVAL);
	cr_assert_eq(ibv_destroy_qp(NULL), EINVAL);
	cr_assert_eq(ibv_destroy_cq(NULL), EINVAL);
	cr_assert_eq(ibv_dereg_mr(NULL), EINVAL);
	cr_assert_eq(ibv_dealloc_pd(NULL), EINVAL);
	cr_assert_eq(ibv_query_device(ctx, NULL), EINVAL);
	cr_assert_null(ibv_create_ah(pd, NULL));
	cr_assert_null(ibv_get_device_name(NULL));
	cr_assert_eq(ibv_get_async_event(ctx, NULL), -1);
}

Test(negative, cq_size_and_vector_beyond_the_device_are_einval)
{
	struct ibv_device_attr a;
	cr_assert_eq(ibv_query_device(ctx, &a), 0);
	errno = 0;
	cr_assert_null(ibv_create_cq(ctx, a.max_cqe + 1, NULL, NULL, 0));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(ibv_create_cq(ctx, 0, NULL, NULL, 0));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(ibv_create_cq(ctx, 16, NULL, NULL, ctx->num_comp_vectors));
	cr_assert_eq(errno, EINVAL);
}

Test(negative, qp_caps_beyond_the_device_are_einval)
{
	struct ibv_device_attr a;
	cr_assert_eq(ibv_query_device(ctx, &a), 0);
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = (uint32_t)a.max_qp_wr + 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	errno = 0;
	cr_assert_null(ibv_create_qp(pd, &ia));
	cr_assert_eq(errno, EINVAL);
	ia.cap.max_send_wr = 1;
	ia.cap.max_send_sge = (uint32_t)a.max_sge + 1;
	errno = 0;
	cr_assert_null(ibv_create_qp(pd, &ia));
	cr_assert_eq(errno, EINVAL);
	ia.cap.max_send_sge = 1;
	ia.send_cq = NULL;
	errno = 0;
	cr_assert_null(ibv_create_qp(pd, &ia));
	cr_assert_eq(errno, EINVAL);
}

Test(negative, post_send_on_a_reset_qp_is_einval_with_bad_wr)
{
	struct ibv_qp *qp = new_qp(IBV_QPT_RC, 0);
	struct ibv_sge sg = { .addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND }, *bad = NULL;
	cr_assert_eq(ibv_post_send(qp, &wr, &bad), EINVAL);
	cr_assert_eq(bad, &wr);
	struct ibv_recv_wr rw = { .wr_id = 2, .sg_list = &sg, .num_sge = 1 }, *rbad = NULL;
	cr_assert_eq(ibv_post_recv(qp, &rw, &rbad), EINVAL, "receives need INIT or later");
	cr_assert_eq(rbad, &rw);
	/* after INIT: receives yes, sends still no */
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	cr_assert_eq(ibv_post_recv(qp, &rw, &rbad), 0);
	bad = NULL;
	cr_assert_eq(ibv_post_send(qp, &wr, &bad), EINVAL);
	cr_assert_eq(bad, &wr);
}

Test(negative, too_many_sges_fail_at_that_wr_of_the_chain)
{
	struct ibv_qp *qp = rts_qp(0);
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	cr_assert_eq(ibv_query_qp(qp, &qa, 0, &qi), 0);
	uint32_t n = qi.cap.max_send_sge + 1;
	struct ibv_sge sg[64];
	cr_assert_leq(n, 64);
	for (uint32_t i = 0; i < n; i++)
		sg[i] = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey };
	struct ibv_send_wr w2 = { .wr_id = 2, .sg_list = sg, .num_sge = (int)n, .opcode = IBV_WR_SEND };
	struct ibv_send_wr w1 = { .wr_id = 1, .next = &w2, .sg_list = sg, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad = NULL;
	cr_assert_eq(ibv_post_send(qp, &w1, &bad), EINVAL);
	cr_assert_eq(bad, &w2, "the first WR was fine, the second is the bad one");
	struct ibv_recv_wr rw = { .sg_list = sg, .num_sge = (int)qi.cap.max_recv_sge + 1 }, *rbad = NULL;
	cr_assert_eq(ibv_post_recv(qp, &rw, &rbad), EINVAL);
	cr_assert_eq(rbad, &rw);
}

Test(negative, inline_data_past_max_inline_is_einval)
{
	struct ibv_qp *qp = rts_qp(64);
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	cr_assert_eq(ibv_query_qp(qp, &qa, 0, &qi), 0);
	cr_assert_geq(qi.cap.max_inline_data, 64);
	struct ibv_sge sg = { .addr = (uintptr_t)buf, .length = qi.cap.max_inline_data + 1, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_INLINE }, *bad = NULL;
	cr_assert_eq(ibv_post_send(qp, &wr, &bad), EINVAL);
	cr_assert_eq(bad, &wr);
	/* READ cannot be inline at all */
	sg.length = 8;
	wr.opcode = IBV_WR_RDMA_READ;
	bad = NULL;
	cr_assert_eq(ibv_post_send(qp, &wr, &bad), EINVAL);
	/* the new post API: inline past the limit fails at wr_complete */
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, buf, qi.cap.max_inline_data + 1);
	cr_assert_eq(ibv_wr_complete(x), EINVAL);
}

Test(negative, atomic_needs_one_8_byte_sge)
{
	struct ibv_qp *qp = rts_qp(0);
	struct ibv_sge sg = { .addr = (uintptr_t)buf, .length = 4, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD }, *bad = NULL;
	cr_assert_eq(ibv_post_send(qp, &wr, &bad), EINVAL);
	cr_assert_eq(bad, &wr);
}

Test(negative, ud_send_without_an_address_handle_is_einval)
{
	struct ut_ep e = { .ctx = ctx };
	e.qp = new_qp(IBV_QPT_UD, 0);
	ut_connect(&e, 0, NULL);
	struct ibv_sge sg = { .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND }, *bad = NULL;
	cr_assert_eq(ibv_post_send(e.qp, &wr, &bad), EINVAL);
	cr_assert_eq(bad, &wr);
	/* and a READ on UD is not a UD operation */
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	cr_assert_eq(ibv_query_gid(ctx, 1, 0, &aa.grh.dgid), 0);
	wr.wr.ud.ah = ibv_create_ah(pd, &aa);
	cr_assert_not_null(wr.wr.ud.ah);
	wr.opcode = IBV_WR_RDMA_READ;
	cr_assert_eq(ibv_post_send(e.qp, &wr, &bad), EINVAL);
	/* in a chain the WRs before the one without an AH are posted (ibv_post_send(3): *bad_wr
	 * is the first WR not posted); until 2026-12-07 the whole chain was refused, and
	 * the first WR's completion never came */
	struct ibv_send_wr w1 = { .wr_id = 77, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND };
	struct ibv_send_wr w0 = { .wr_id = 76, .next = &w1, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	w0.wr.ud.ah = wr.wr.ud.ah;
	w0.wr.ud.remote_qpn = e.qp->qp_num;
	w0.wr.ud.remote_qkey = 0x11111111;
	bad = NULL;
	cr_assert_eq(ibv_post_send(e.qp, &w0, &bad), EINVAL);
	cr_assert_eq(bad, &w1, "the second WR, the one without an AH, is the first not posted");
	struct ibv_wc wc;
	ut_expect(cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 76);
	/* an AH holds its PD (Linux: rdma_create_ah takes a use count on it) */
	cr_assert_eq(ibv_dealloc_pd(pd), EBUSY, "a PD an AH uses was freed");
	cr_assert_eq(ibv_destroy_qp(e.qp), 0);
	cr_assert_eq(ibv_destroy_ah(wr.wr.ud.ah), 0);
}

/* The port of an address vector and a P_Key index are checked as the kernel checks
 * them: ibv_create_ah and an RTR's AV name one of the device's ports
 * (ib_uverbs_create_ah, ib_uverbs_modify_qp: rdma_is_port_valid), and pkey_index is
 * within the port's table (mlx5_ib's modify_qp).  Until 2026-12-07 port 0 stood for
 * port 1 and any pkey_index was taken and reported back. */
Test(negative, ah_port_zero_and_pkey_index_past_the_table_are_einval)
{
	struct ibv_port_attr pa;
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 0 };

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	cr_assert_eq(ibv_query_gid(ctx, 1, 0, &aa.grh.dgid), 0);
	errno = 0;
	cr_assert_null(ibv_create_ah(pd, &aa), "an AH on port 0");
	cr_assert_eq(errno, EINVAL);
	struct ibv_qp *qp = new_qp(IBV_QPT_RC, 0);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .pkey_index = pa.pkey_tbl_len };
	const int init = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	cr_assert_eq(ibv_modify_qp(qp, &a, init), EINVAL, "pkey_index %u of a table of %u", a.pkey_index,
		     pa.pkey_tbl_len);
	cr_assert_eq(qp->state, IBV_QPS_RESET);
	a.pkey_index = 0;
	cr_assert_eq(ibv_modify_qp(qp, &a, init), 0);
	struct ibv_qp_attr r = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = qp->qp_num,
				 .max_dest_rd_atomic = 1, .min_rnr_timer = 1,
				 .ah_attr = { .is_global = 1, .port_num = 0, .grh.dgid = aa.grh.dgid, .grh.hop_limit = 1 } };
	const int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	cr_assert_eq(ibv_modify_qp(qp, &r, rtr), EINVAL, "an AV on port 0");
	cr_assert_eq(qp->state, IBV_QPS_INIT);
	r.ah_attr.port_num = 1;
	cr_assert_eq(ibv_modify_qp(qp, &r, rtr), 0);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
}

Test(negative, illegal_transitions_and_missing_attributes_are_einval)
{
	struct ibv_qp *qp = new_qp(IBV_QPT_RC, 0);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS };
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL, "RESET -> RTS");
	a.qp_state = IBV_QPS_INIT;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL, "INIT without port/pkey/access");
	cr_assert_eq(qp->state, IBV_QPS_RESET);
	a.ah_attr.is_global = 0;
	cr_assert_neq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV), 0, "RoCE needs a GRH");
}

/* A verb that returns an errno value leaves it in errno too, as rdma-core's do (the
 * system call that failed sets it), so that perror says why; ibv_query_gid and
 * ibv_query_pkey return -1 with errno set.  Until 2026-12-07 errno stayed as it was. */
Test(negative, failing_verbs_leave_their_errno_in_errno)
{
	struct ibv_qp *qp = new_qp(IBV_QPT_RC, 0);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS };
	struct ibv_port_attr pa;
	union ibv_gid g;
	__be16 pk;

	errno = 0;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
	cr_assert_eq(errno, EINVAL, "ibv_modify_qp left errno %d", errno);
	errno = 0;
	cr_assert_eq(ibv_destroy_cq(cq), EBUSY);
	cr_assert_eq(errno, EBUSY, "ibv_destroy_cq left errno %d", errno);
	errno = 0;
	cr_assert_eq(ibv_dealloc_pd(pd), EBUSY);
	cr_assert_eq(errno, EBUSY, "ibv_dealloc_pd left errno %d", errno);
	errno = 0;
	cr_assert_neq(ibv_query_port(ctx, 2, &pa), 0);
	cr_assert_eq(errno, EINVAL, "ibv_query_port left errno %d", errno);
	errno = 0;
	cr_assert_eq(ibv_query_gid(ctx, 1, 100000, &g), -1);
	cr_assert_eq(errno, EINVAL, "ibv_query_gid left errno %d", errno);
	errno = 0;
	cr_assert_eq(ibv_query_pkey(ctx, 1, 100000, &pk), -1);
	cr_assert_eq(errno, EINVAL, "ibv_query_pkey left errno %d", errno);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
}

Test(negative, remote_write_without_local_write_is_einval)
{
	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, buf, 64, IBV_ACCESS_REMOTE_WRITE));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE));
	cr_assert_eq(errno, EINVAL);
}

/* ibv_reg_mr's access flags as Linux's ib_check_mr_access judges them: a bit the verbs
 * do not define is EINVAL, one they define that this driver lacks EOPNOTSUPP, and the
 * optional range's (IBV_ACCESS_OPTIONAL_RANGE) may be ignored, and are.  Memory at
 * address 0 is EFAULT, as pinning it fails (ib_umem_get).  Until 2026-12-07 any unknown
 * bit was EOPNOTSUPP and address 0 EINVAL. */
Test(negative, reg_mr_access_bits_and_address_zero_as_linux_has_them)
{
	struct ibv_mr *m;

	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE | (1u << 13)));
	cr_assert_eq(errno, EINVAL, "bit 13: errno %d", errno);
	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE | (1u << 30)));
	cr_assert_eq(errno, EINVAL, "bit 30: errno %d", errno);
	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ZERO_BASED));
	cr_assert_eq(errno, EOPNOTSUPP, "zero-based: errno %d", errno);
	m = ibv_reg_mr(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE | (1u << 21));
	cr_assert_not_null(m, "an optional bit: %s", strerror(errno));
	cr_assert_eq(ibv_dereg_mr(m), 0);
	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, NULL, 4096, IBV_ACCESS_LOCAL_WRITE));
	cr_assert_eq(errno, EFAULT, "address 0: errno %d", errno);
}

Test(negative, objects_in_use_are_busy)
{
	struct ibv_qp *qp = new_qp(IBV_QPT_RC, 0);
	cr_assert_eq(ibv_dealloc_pd(pd), EBUSY);
	cr_assert_eq(ibv_destroy_cq(cq), EBUSY);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *c2 = ibv_create_cq(ctx, 4, NULL, ch, 0);
	cr_assert_not_null(c2);
	cr_assert_eq(ibv_destroy_comp_channel(ch), EBUSY);
	cr_assert_eq(ibv_destroy_cq(c2), 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
}

Test(negative, srq_in_use_is_busy)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	cr_assert_not_null(srq, "%s", strerror(errno));
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 1, .max_send_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &qa);
	cr_assert_not_null(qp, "%s", strerror(errno));
	cr_assert_eq(ibv_destroy_srq(srq), EBUSY);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
}

/* ---- unsupported features: EOPNOTSUPP ---- */

Test(negative, odp_iova_and_dmabuf_registration_are_eopnotsupp)
{
	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND));
	cr_assert_eq(errno, EOPNOTSUPP);
	errno = 0;
	cr_assert_null(ibv_reg_mr_iova(pd, buf, 64, 0x1000, IBV_ACCESS_LOCAL_WRITE));
	cr_assert_eq(errno, EOPNOTSUPP);
	errno = 0;
	cr_assert_null(ibv_reg_dmabuf_mr(pd, 0, 64, 0, 3, IBV_ACCESS_LOCAL_WRITE));
	cr_assert_eq(errno, EOPNOTSUPP);
	/* iova2 with iova == addr is an ordinary registration */
	struct ibv_mr *m = ibv_reg_mr_iova2(pd, buf, 64, (uintptr_t)buf,
					    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING);
	cr_assert_not_null(m);
	cr_assert_eq(ibv_dereg_mr(m), 0);
}

Test(negative, device_memory_flows_wqs_counters_are_eopnotsupp)
{
	struct ibv_alloc_dm_attr dm = { .length = 4096 };
	errno = 0;
	cr_assert_null(ibv_alloc_dm(ctx, &dm));
	cr_assert_eq(errno, EOPNOTSUPP);
	struct ibv_qp *qp = new_qp(IBV_QPT_UD, 0);
	struct ibv_flow_attr fa = { .size = sizeof(fa), .port = 1 };
	errno = 0;
	cr_assert_null(ibv_create_flow(qp, &fa));
	cr_assert_eq(errno, EOPNOTSUPP);
	struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ, .max_wr = 1, .max_sge = 1, .pd = pd, .cq = cq };
	errno = 0;
	cr_assert_null(ibv_create_wq(ctx, &wa));
	cr_assert_eq(errno, EOPNOTSUPP);
	/* XRC domains are offered: tests/uverbs/test_xrc.c */
	/* thread domains are offered (tests/uverbs/test_domains.c); an unknown comp_mask
	 * bit is refused */
	struct ibv_td_init_attr ta = { .comp_mask = 1 };
	errno = 0;
	cr_assert_null(ibv_alloc_td(ctx, &ta));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(ibv_alloc_mw(pd, IBV_MW_TYPE_1));
	cr_assert_eq(errno, EOPNOTSUPP);
	cr_assert_eq(ibv_resize_cq(cq, 128), EOPNOTSUPP);
	/* multicast is offered (tests/uverbs/test_mcast.c); a QP that is not UD is EINVAL */
	union ibv_gid g = { .raw = { 0xff } };
	cr_assert_eq(ibv_attach_mcast(qp, &g, 0), qp->qp_type == IBV_QPT_UD ? 0 : EINVAL);
}

Test(negative, raw_packet_qp_and_timestamped_cq_are_eopnotsupp)
{
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
						.max_recv_sge = 1 } };
	errno = 0;
	cr_assert_null(ibv_create_qp(pd, &ia));
	cr_assert_eq(errno, EOPNOTSUPP);
	struct ibv_cq_init_attr_ex ca = { .cqe = 4, .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP };
	errno = 0;
	cr_assert_null(ibv_create_cq_ex(ctx, &ca));
	cr_assert_eq(errno, EOPNOTSUPP);
}

Test(negative, unsupported_wr_ops_fail_at_wr_complete)
{
	struct ibv_qp *qp = rts_qp(0);
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	ibv_wr_start(x);
	ibv_wr_local_inv(x, 0x1234);
	cr_assert_eq(ibv_wr_complete(x), EOPNOTSUPP);
	/* a setter without an opcode */
	ibv_wr_start(x);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)buf, 8);
	cr_assert_eq(ibv_wr_complete(x), EINVAL);
}

Test(negative, unsupported_feature_logs_one_line_when_asked)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	int saved = dup(2);
	setenv("UVERBS_LOG", "warn", 1);
	dup2(p[1], 2);
	struct ibv_mr *m = ibv_reg_mr(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND);
	fflush(stderr);
	dup2(saved, 2);
	cr_assert_null(m);
	char out[512] = "";
	ssize_t n = read(p[0], out, sizeof(out) - 1);
	cr_assert_gt(n, 0, "nothing logged");
	out[n] = 0;
	cr_assert(strstr(out, "on-demand paging") && strstr(out, "EOPNOTSUPP"), "%s", out);
	cr_assert_eq(strchr(out, '\n'), out + n - 1, "one line: %s", out);
}

Test(negative, rereg_mr_changes_translation_and_access_or_refuses_bad_flags)
{
	static uint8_t other[4096] __attribute__((aligned(4096)));
	struct ibv_mr *m = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(m);
	cr_assert_eq(ibv_rereg_mr(m, 0, NULL, NULL, 0, 0), IBV_REREG_MR_ERR_INPUT, "no change asked");
	cr_assert_eq(ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS, NULL, other,
				  sizeof(other), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ), 0);
	cr_assert_eq(m->addr, (void *)other);
	cr_assert_eq(m->length, sizeof(other));
	cr_assert_eq(m->pd, pd);
	cr_assert_eq(ibv_dereg_mr(m), 0);
}

/* Clients dup() context->cmd_fd to share a context (ibv_import_device(3); rdma-core's
 * tests/test_shared_pd.py): it must be an open descriptor, and importing it is refused
 * with EOPNOTSUPP since sharing objects needs the kernel's object table. */
Test(negative, cmd_fd_is_open_and_import_device_refuses_it_with_eopnotsupp)
{
	int fd = dup(ctx->cmd_fd);
	cr_assert_geq(fd, 0, "dup(cmd_fd %d): %s", ctx->cmd_fd, strerror(errno));
	errno = 0;
	cr_assert_null(ibv_import_device(fd));
	cr_assert_eq(errno, EOPNOTSUPP, "errno %d", errno);
	close(fd);
}

/* rdma-core's mlx5 provider: MLX_{CQ,QP,SRQ}_ALLOC_TYPE=HUGE is huge pages or nothing;
 * we never place queues in huge pages, so each create fails with ENOMEM, and the
 * fall-back values (PREFER_HUGE) still create. */
Test(negative, huge_only_queue_allocation_is_refused_with_enomem)
{
	setenv("MLX_CQ_ALLOC_TYPE", "HUGE", 1);
	errno = 0;
	cr_assert_null(ibv_create_cq(ctx, 16, NULL, NULL, 0));
	cr_assert_eq(errno, ENOMEM, "cq errno %d", errno);
	setenv("MLX_CQ_ALLOC_TYPE", "PREFER_HUGE", 1);
	struct ibv_cq *c2 = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	cr_assert_not_null(c2, "PREFER_HUGE cq: %s", strerror(errno));

	setenv("MLX_QP_ALLOC_TYPE", "HUGE", 1);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	errno = 0;
	cr_assert_null(ibv_create_qp(pd, &ia));
	cr_assert_eq(errno, ENOMEM, "qp errno %d", errno);

	setenv("MLX_SRQ_ALLOC_TYPE", "HUGE", 1);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	errno = 0;
	cr_assert_null(ibv_create_srq(pd, &sa));
	cr_assert_eq(errno, ENOMEM, "srq errno %d", errno);
	ibv_destroy_cq(c2);
}

/* rdma-core's tests/test_qp.py asks UD QPs for IBV_QP_CREATE_BLOCK_SELF_MCAST_LB at
 * random: the flag is honoured (qpc.block_lb_mc; test_mcast.c checks it), so the QP is
 * created; any other create flag is still refused with EOPNOTSUPP. */
Test(negative, block_self_multicast_loopback_is_accepted_other_create_flags_refused)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD, .pd = pd,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &ia);
	cr_assert_not_null(qp, "ibv_create_qp_ex: %s", strerror(errno));
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	ia.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	errno = 0;
	cr_assert_null(ibv_create_qp_ex(ctx, &ia));
	cr_assert_eq(errno, EOPNOTSUPP, "errno %d", errno);
}

/* A child of fork() using its parent's device: rdma-core documents it as misuse
 * (ibv_fork_init(3)); the command path refuses it with EPERM (a getpid() beside each
 * firmware command), so the child's objects never mix with the parent's. */
Test(negative, a_child_of_fork_cannot_use_its_parents_device)
{
	pid_t p = fork();
	cr_assert_geq(p, 0);
	if (p == 0) {
		errno = 0;
		struct ibv_pd *cpd = ibv_alloc_pd(ctx);
		struct ibv_cq *ccq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		_exit(!cpd && errno == EPERM && !ccq ? 0 : 1);
	}
	int st = 0;
	cr_assert_eq(waitpid(p, &st, 0), p);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child's ibv_alloc_pd on its parent's device was not EPERM");
	/* the parent goes on */
	struct ibv_pd *more = ibv_alloc_pd(ctx);
	cr_assert_not_null(more, "%s", strerror(errno));
	cr_assert_eq(ibv_dealloc_pd(more), 0);
}

/* The same misuse while a thread of the parent keeps the device busy: every object a
 * child creates takes or pins memory through the device first (the emulated device maps
 * it under its device lock), and a fork() that lands while that lock is held leaves the
 * child's copy of it held for ever.  Each refusal must come before that memory is
 * touched (mx5_refuse_fork_child), and the child must end within seconds: twenty forks
 * against a thread registering and releasing memory without pause. */
static _Atomic bool busy_stop;

static void *keep_the_device_busy(void *arg)
{
	(void)arg;
	while (!busy_stop) {
		struct ibv_mr *m = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
		if (m)
			ibv_dereg_mr(m);
	}
	return NULL;
}

static int child_creates_on_parents_device(void)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	int bad = 0;

	errno = 0;
	bad |= ibv_create_qp(pd, &qa) != NULL || errno != EPERM;
	errno = 0;
	bad |= ibv_create_srq(pd, &sa) != NULL || errno != EPERM;
	errno = 0;
	bad |= ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE) != NULL || errno != EPERM;
	errno = 0;
	bad |= ibv_create_cq(ctx, 16, NULL, NULL, 0) != NULL || errno != EPERM;
	/* nor undo the parent's MR: its unpin takes the same locks */
	bad |= ibv_dereg_mr(mr) != EPERM;
	return bad;
}

Test(negative, a_child_of_fork_is_refused_at_once_while_its_parent_is_busy, .timeout = 120)
{
	pthread_t th;

	busy_stop = false;
	cr_assert_eq(pthread_create(&th, NULL, keep_the_device_busy, NULL), 0);
	for (int i = 0; i < 20; i++) {
		pid_t p = fork();
		cr_assert_geq(p, 0);
		if (p == 0)
			_exit(child_creates_on_parents_device());
		int st = 0;
		pid_t got = 0;
		for (int ms = 0; ms < 5000 && got == 0; ms++) {
			got = waitpid(p, &st, WNOHANG);
			if (got == 0)
				usleep(1000);
		}
		if (got == 0) {
			kill(p, SIGKILL);
			waitpid(p, &st, 0);
			busy_stop = true;
			pthread_join(th, NULL);
			cr_assert_fail("fork %d: the child still waited after 5 s (a lock held at the fork)", i);
		}
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			  "fork %d: the child's QP, SRQ, MR or CQ on its parent's device, or its dereg of the parent's MR, "
			  "was not refused with EPERM", i);
	}
	busy_stop = true;
	cr_assert_eq(pthread_join(th, NULL), 0);
}

/* An SGE list at any alignment: the verbs API does not promise an aligned one, and
 * libiscsi 1.19.0's iSER passes one inside a packed structure.  A SEND and its receive,
 * each described by a list one byte off its natural alignment, on an RC QP connected to
 * itself; under UBSan (the test build) a misaligned member read stops the test. */
Test(negative, an_sge_list_at_any_alignment_is_read_whole)
{
	struct ibv_qp *qp = rts_qp(64);
	_Alignas(8) uint8_t raw_s[sizeof(struct ibv_sge) + 1], raw_r[sizeof(struct ibv_sge) + 1];
	struct ibv_sge s = { .addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey };
	struct ibv_sge r = { .addr = (uintptr_t)(buf + 4096), .length = 64, .lkey = mr->lkey };
	struct ibv_sge *odd_s = (struct ibv_sge *)(void *)(raw_s + 1), *odd_r = (struct ibv_sge *)(void *)(raw_r + 1);
	struct ibv_recv_wr rw = { .wr_id = 1, .sg_list = odd_r, .num_sge = 1 }, *rbad;
	struct ibv_send_wr sw = { .wr_id = 2, .sg_list = odd_s, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_wc wc;

	memcpy(raw_s + 1, &s, sizeof(s));
	memcpy(raw_r + 1, &r, sizeof(r));
	memset(buf, 0x5a, 64);
	memset(buf + 4096, 0, 64);
	cr_assert_eq(ibv_post_recv(qp, &rw, &rbad), 0);
	cr_assert_eq(ibv_post_send(qp, &sw, &sbad), 0);
	for (int got = 0; got < 2; got++) {
		cr_assert_eq(ut_poll(cq, &wc, 5000), 1, "no completion within 5 s");
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	}
	cr_assert_eq(memcmp(buf, buf + 4096, 64), 0, "the SEND's bytes did not arrive");
	/* inline from a misaligned list as well */
	memcpy(raw_r + 1, &r, sizeof(r));
	rw.wr_id = 3;
	sw.wr_id = 4;
	sw.send_flags |= IBV_SEND_INLINE;
	s.length = 16;
	memcpy(raw_s + 1, &s, sizeof(s));
	cr_assert_eq(ibv_post_recv(qp, &rw, &rbad), 0);
	cr_assert_eq(ibv_post_send(qp, &sw, &sbad), 0);
	for (int got = 0; got < 2; got++) {
		cr_assert_eq(ut_poll(cq, &wc, 5000), 1, "no completion within 5 s");
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	}
	cr_assert_eq(ibv_destroy_qp(qp), 0);
}
