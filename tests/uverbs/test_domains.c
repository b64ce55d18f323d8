/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Thread domains and parent domains (ibv_alloc_td(3), ibv_alloc_parent_domain(3)): the
 * single-thread hint a QP or CQ made on a parent domain with a thread domain carries.
 * The objects work as on the plain PD, and the domains cannot be freed under what uses
 * them. */
#include "tests/uverbs/uv_test.h"

static struct ibv_context *ca, *cb;

static void setup(void)
{
	ut_devices("emu:ip=127.61.2.1,emu:ip=127.61.2.2");
	ca = ut_open(0);
	cb = ut_open(1);
}

TestSuite(domains, .init = setup, .timeout = 60);

Test(domains, qp_and_cq_on_a_parent_domain_with_a_thread_domain_carry_traffic)
{
	struct ut_ep a, b;
	struct ibv_td_init_attr ta = { 0 };
	struct ibv_wc wc;

	ut_ep_init(&b, cb, IBV_QPT_RC, 4096, NULL);
	memset(&a, 0, sizeof(a));
	a.ctx = ca;
	a.pd = ibv_alloc_pd(ca);
	cr_assert_not_null(a.pd);
	struct ibv_td *td = ibv_alloc_td(ca, &ta);
	cr_assert_not_null(td, "ibv_alloc_td: %s", strerror(errno));
	struct ibv_parent_domain_init_attr pa = { .pd = a.pd, .td = td };
	struct ibv_pd *par = ibv_alloc_parent_domain(ca, &pa);
	cr_assert_not_null(par, "ibv_alloc_parent_domain: %s", strerror(errno));
	struct ibv_cq_init_attr_ex ca_ex = { .cqe = 16, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
					     .parent_domain = par };
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(ca, &ca_ex);
	cr_assert_not_null(cqx, "ibv_create_cq_ex on a parent domain: %s", strerror(errno));
	a.cq = ibv_cq_ex_to_cq(cqx);
	a.len = 4096;
	a.buf = aligned_alloc(4096, 4096);
	memset(a.buf, 0x3c, 4096);
	a.mr = ibv_reg_mr(par, a.buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(a.mr, "ibv_reg_mr on a parent domain: %s", strerror(errno));
	struct ibv_qp_init_attr ia = { .send_cq = a.cq, .recv_cq = a.cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
						.max_recv_sge = 1 } };
	a.qp = ibv_create_qp(par, &ia);
	cr_assert_not_null(a.qp, "ibv_create_qp on a parent domain: %s", strerror(errno));
	struct ibv_port_attr pt;
	cr_assert_eq(ibv_query_port(ca, 1, &pt), 0);
	a.mtu = pt.active_mtu;
	cr_assert_eq(ibv_query_gid(ca, 1, 0, &a.gid), 0);
	ut_pair(&a, &b);

	struct ibv_sge sg = { .addr = (uintptr_t)a.buf, .length = 256, .lkey = a.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 42, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	wr.wr.rdma.remote_addr = (uintptr_t)b.buf;
	wr.wr.rdma.rkey = b.mr->rkey;
	cr_assert_eq(ibv_post_send(a.qp, &wr, &bad), 0);
	ut_expect(a.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 42);
	for (int i = 0; i < 256; i++)
		cr_assert_eq(b.buf[i], 0x3c);

	/* in use: the thread domain by the parent domain, the PD by both */
	cr_assert_eq(ibv_dealloc_td(td), EBUSY);
	cr_assert_eq(ibv_dealloc_pd(a.pd), EBUSY);
	cr_assert_eq(ibv_destroy_qp(a.qp), 0);
	cr_assert_eq(ibv_dereg_mr(a.mr), 0);
	cr_assert_eq(ibv_destroy_cq(a.cq), 0);
	cr_assert_eq(ibv_dealloc_pd(par), 0);
	cr_assert_eq(ibv_dealloc_td(td), 0);
	cr_assert_eq(ibv_dealloc_pd(a.pd), 0);
}

Test(domains, parent_domain_with_custom_allocators_is_refused)
{
	struct ibv_pd *pd = ibv_alloc_pd(ca);
	struct ibv_parent_domain_init_attr pa = { .pd = pd,
						  .comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS };

	cr_assert_not_null(pd);
	errno = 0;
	cr_assert_null(ibv_alloc_parent_domain(ca, &pa));
	cr_assert_eq(errno, EOPNOTSUPP);
}

/* A parent domain on a new PD of ca, and that PD. */
static struct ibv_pd *new_parent(struct ibv_pd **base)
{
	*base = ibv_alloc_pd(ca);
	cr_assert_not_null(*base);
	struct ibv_parent_domain_init_attr pa = { .pd = *base };
	struct ibv_pd *par = ibv_alloc_parent_domain(ca, &pa);
	cr_assert_not_null(par, "ibv_alloc_parent_domain: %s", strerror(errno));
	return par;
}

/* An SRQ made on pd. */
static struct ibv_srq *srq_on(struct ibv_pd *pd)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *s = ibv_create_srq(pd, &sa);

	cr_assert_not_null(s, "ibv_create_srq on a parent domain: %s", strerror(errno));
	return s;
}

/* ibv_dealloc_pd of par while an object made on it lives: EBUSY, as rdma-core's mlx5
 * refuses (providers/mlx5/verbs.c mlx5_dealloc_parent_domain); par then still makes
 * objects (an SRQ here). */
static void expect_parent_busy(struct ibv_pd *par)
{
	cr_assert_eq(ibv_dealloc_pd(par), EBUSY, "a parent domain in use was freed");
	cr_assert_eq(ibv_destroy_srq(srq_on(par)), 0);
}

/* Once nothing uses them, the parent domain and then its PD go. */
static void free_parent_and_pd(struct ibv_pd *par, struct ibv_pd *pd)
{
	cr_assert_eq(ibv_dealloc_pd(par), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
}

Test(domains, dealloc_of_a_parent_domain_a_qp_uses_is_refused_until_the_qp_goes)
{
	struct ibv_pd *pd, *par = new_parent(&pd);
	struct ibv_cq *cq = ibv_create_cq(ca, 8, NULL, NULL, 0);
	cr_assert_not_null(cq);
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
						.max_recv_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(par, &ia);
	cr_assert_not_null(qp, "ibv_create_qp on a parent domain: %s", strerror(errno));

	expect_parent_busy(par);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	free_parent_and_pd(par, pd);
}

Test(domains, dealloc_of_a_parent_domain_a_cq_uses_is_refused_until_the_cq_goes)
{
	struct ibv_pd *pd, *par = new_parent(&pd);
	struct ibv_cq_init_attr_ex ca_ex = { .cqe = 8, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = par };
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(ca, &ca_ex);
	cr_assert_not_null(cqx, "ibv_create_cq_ex on a parent domain: %s", strerror(errno));

	expect_parent_busy(par);
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
	free_parent_and_pd(par, pd);
}

Test(domains, dealloc_of_a_parent_domain_an_srq_uses_is_refused_until_the_srq_goes)
{
	struct ibv_pd *pd, *par = new_parent(&pd);
	struct ibv_srq *srq = srq_on(par);

	expect_parent_busy(par);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
	free_parent_and_pd(par, pd);
}
