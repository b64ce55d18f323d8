/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* XRC through the verbs API (IBTA 14.2 "XRC"; ibv_open_xrcd(3), ibv_create_srq_ex(3)
 * IBV_SRQT_XRC, ibv_create_qp_ex(3) IBV_QPT_XRC_SEND / IBV_QPT_XRC_RECV), between two
 * emulated NICs: device a holds the initiator, device b the XRC domain with two XRC SRQs
 * on one CQ and the target QP.  A send names the SRQ it lands in (wr.qp_type.xrc.
 * remote_srqn, or ibv_wr_set_xrc_srqn); its receive completion comes on that SRQ's CQ
 * naming the target QP and carrying the WQE posted to that SRQ.  A send naming an SRQ
 * that does not exist is NAKed as an invalid request (IBTA 9.7.4.1): the sender's
 * completion is IBV_WC_REM_INV_REQ_ERR. */
#include <fcntl.h>
#include <unistd.h>

#include "tests/uverbs/uv_test.h"

struct xrc_run {
	struct ibv_context *ca, *cb;
	/* a: the initiator */
	struct ibv_pd *pda;
	struct ibv_cq *cqa;
	struct ibv_qp *ini;
	struct ibv_mr *mra;
	uint8_t bufa[256];
	/* b: the target side */
	struct ibv_xrcd *xrcd;
	struct ibv_pd *pdb;
	struct ibv_cq *cqb;
	struct ibv_srq *srq[2];
	uint32_t srqn[2];
	struct ibv_qp *tgt;
	struct ibv_mr *mrb;
	uint8_t bufb[256];
	union ibv_gid ga, gb;
	enum ibv_mtu mtu;
};

static struct xrc_run r;

static struct ibv_xrcd *open_xrcd(struct ibv_context *c)
{
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
					 .fd = -1, .oflags = O_CREAT };
	return ibv_open_xrcd(c, &xa);
}

static struct ibv_srq *xrc_srq(struct ibv_xrcd *xrcd, struct ibv_cq *cq, uint32_t mask)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 8, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | mask,
		.srq_type = IBV_SRQT_XRC, .pd = r.pdb, .xrcd = xrcd, .cq = cq,
	};
	return ibv_create_srq_ex(r.cb, &sa);
}

static void post_srq(int i, uint64_t wr_id, uint32_t off)
{
	struct ibv_sge sg = { .addr = (uintptr_t)r.bufb + off, .length = 64, .lkey = r.mrb->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sg, .num_sge = 1 }, *bad = NULL;
	cr_assert_eq(ibv_post_srq_recv(r.srq[i], &wr, &bad), 0);
}

static void modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	int rc = ibv_modify_qp(qp, a, mask);
	cr_assert_eq(rc, 0, "ibv_modify_qp QP 0x%x to state %d: %s", qp->qp_num, a->qp_state, strerror(rc));
}

/* RESET -> INIT -> RTR (-> RTS) with the attributes the IBTA asks of each XRC kind
 * (Linux verbs.c qp_state_table, XRC_INI and XRC_TGT columns). */
static void xrc_connect(struct ibv_qp *qp, uint32_t peer, const union ibv_gid *gid)
{
	bool tgt = qp->qp_type == IBV_QPT_XRC_RECV;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC };
	modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = r.mtu;
	a.dest_qp_num = peer;
	a.rq_psn = 0x77;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	modify(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			       (tgt ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x77;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			       (tgt ? 0 : IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC));
}

static void setup(void)
{
	struct ibv_port_attr pa;

	memset(&r, 0, sizeof(r));
	ut_devices("emu:ip=127.0.131.2,emu:ip=127.0.131.3");
	r.ca = ut_open(0);
	r.cb = ut_open(1);
	cr_assert_eq(ibv_query_port(r.ca, 1, &pa), 0);
	r.mtu = pa.active_mtu;
	cr_assert_eq(ibv_query_gid(r.ca, 1, 0, &r.ga), 0);
	cr_assert_eq(ibv_query_gid(r.cb, 1, 0, &r.gb), 0);
	r.pda = ibv_alloc_pd(r.ca);
	r.pdb = ibv_alloc_pd(r.cb);
	r.cqa = ibv_create_cq(r.ca, 16, NULL, NULL, 0);
	r.cqb = ibv_create_cq(r.cb, 16, NULL, NULL, 0);
	cr_assert(r.pda && r.pdb && r.cqa && r.cqb);
	r.mra = ibv_reg_mr(r.pda, r.bufa, sizeof(r.bufa), IBV_ACCESS_LOCAL_WRITE);
	r.mrb = ibv_reg_mr(r.pdb, r.bufb, sizeof(r.bufb),
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	cr_assert(r.mra && r.mrb);
	r.xrcd = open_xrcd(r.cb);
	cr_assert_not_null(r.xrcd, "ibv_open_xrcd: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		r.srq[i] = xrc_srq(r.xrcd, r.cqb, IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ);
		cr_assert_not_null(r.srq[i], "ibv_create_srq_ex XRC: %s", strerror(errno));
		cr_assert_eq(ibv_get_srq_num(r.srq[i], &r.srqn[i]), 0);
	}
	cr_assert_neq(r.srqn[0], r.srqn[1]);
	struct ibv_qp_init_attr_ex tq = { .qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD,
					  .xrcd = r.xrcd };
	r.tgt = ibv_create_qp_ex(r.cb, &tq);
	cr_assert_not_null(r.tgt, "ibv_create_qp_ex XRC_RECV: %s", strerror(errno));
	struct ibv_qp_init_attr_ex iq = {
		.qp_type = IBV_QPT_XRC_SEND, .send_cq = r.cqa, .pd = r.pda,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM,
		.cap = { .max_send_wr = 8, .max_send_sge = 1, .max_inline_data = 16 },
	};
	r.ini = ibv_create_qp_ex(r.ca, &iq);
	cr_assert_not_null(r.ini, "ibv_create_qp_ex XRC_SEND: %s", strerror(errno));
	xrc_connect(r.tgt, r.ini->qp_num, &r.ga);
	xrc_connect(r.ini, r.tgt->qp_num, &r.gb);
}

static void teardown(void)
{
	if (r.ini)
		ibv_destroy_qp(r.ini);
	if (r.tgt)
		ibv_destroy_qp(r.tgt);
	for (int i = 0; i < 2; i++)
		if (r.srq[i])
			ibv_destroy_srq(r.srq[i]);
	if (r.xrcd)
		cr_expect_eq(ibv_close_xrcd(r.xrcd), 0);
}

TestSuite(xrc, .init = setup, .fini = teardown, .timeout = 60);

static void send_to(uint32_t srqn, uint64_t wr_id, const char *msg)
{
	struct ibv_sge sg = { .addr = (uintptr_t)r.bufa, .length = (uint32_t)strlen(msg) + 1, .lkey = r.mra->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	memcpy(r.bufa, msg, strlen(msg) + 1);
	wr.qp_type.xrc.remote_srqn = srqn;
	cr_assert_eq(ibv_post_send(r.ini, &wr, &bad), 0);
}

Test(xrc, a_send_lands_in_the_srq_it_names_and_completes_on_that_srqs_cq)
{
	struct ibv_wc wc;

	post_srq(0, 100, 0);
	post_srq(1, 200, 64);
	send_to(r.srqn[1], 1, "to the second SRQ");
	ut_expect(r.cqa, &wc, IBV_WC_SUCCESS);
	cr_expect_eq(wc.wr_id, 1);
	cr_expect_eq(wc.opcode, IBV_WC_SEND);
	ut_expect(r.cqb, &wc, IBV_WC_SUCCESS);
	cr_expect_eq(wc.wr_id, 200, "the WQE of the SRQ the send named (wr_id %llu)", (unsigned long long)wc.wr_id);
	cr_expect_eq(wc.qp_num, r.tgt->qp_num, "the target QP took it");
	cr_expect_eq(wc.opcode, IBV_WC_RECV);
	cr_expect_eq(wc.byte_len, strlen("to the second SRQ") + 1);
	cr_expect_str_eq((char *)r.bufb + 64, "to the second SRQ");
	cr_expect_eq(r.bufb[0], 0, "nothing in the first SRQ's buffer");

	/* the extended post API: ibv_wr_set_xrc_srqn names the first SRQ */
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(r.ini);
	cr_assert_not_null(x);
	ibv_wr_start(x);
	x->wr_id = 2;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(x, htobe32(0x1234));
	ibv_wr_set_xrc_srqn(x, r.srqn[0]);
	ibv_wr_set_inline_data(x, "by wr_set_xrc_srqn", sizeof("by wr_set_xrc_srqn"));
	cr_assert_eq(ibv_wr_complete(x), 0);
	ut_expect(r.cqa, &wc, IBV_WC_SUCCESS);
	cr_expect_eq(wc.wr_id, 2);
	ut_expect(r.cqb, &wc, IBV_WC_SUCCESS);
	cr_expect_eq(wc.wr_id, 100);
	cr_expect_eq(wc.qp_num, r.tgt->qp_num);
	cr_expect(wc.wc_flags & IBV_WC_WITH_IMM);
	cr_expect_eq(be32toh(wc.imm_data), 0x1234);
	cr_expect_str_eq((char *)r.bufb, "by wr_set_xrc_srqn");
}

/* RDMA WRITE and atomics name an XRC SRQ too (its XRCETH); the target has no PD of its
 * own, the memory's PD is checked against that SRQ's (IBTA 14.2) -- here r.pdb, while
 * the target QP's context names the driver's own PD. */
Test(xrc, rdma_write_and_atomics_reach_memory_of_the_srqs_pd)
{
	struct ibv_wc wc;
	struct ibv_sge sg = { .addr = (uintptr_t)r.bufa, .length = 8, .lkey = r.mra->lkey };
	struct ibv_send_wr wr = { .wr_id = 5, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	uint64_t v = 0x1122334455667788ull, got;

	memcpy(r.bufa, &v, 8);
	wr.qp_type.xrc.remote_srqn = r.srqn[1];
	wr.wr.rdma.remote_addr = (uintptr_t)r.bufb + 128;
	wr.wr.rdma.rkey = r.mrb->rkey;
	cr_assert_eq(ibv_post_send(r.ini, &wr, &bad), 0);
	ut_expect(r.cqa, &wc, IBV_WC_SUCCESS);
	memcpy(&got, r.bufb + 128, 8);
	cr_expect_eq(got, v, "RDMA WRITE landed: 0x%llx", (unsigned long long)got);
	/* compare-and-swap: the old value comes back, the new one is in place */
	wr.wr_id = 6;
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.remote_addr = (uintptr_t)r.bufb + 128;
	wr.wr.atomic.rkey = r.mrb->rkey;
	wr.wr.atomic.compare_add = v;
	wr.wr.atomic.swap = 42;
	memset(r.bufa, 0, 8);
	cr_assert_eq(ibv_post_send(r.ini, &wr, &bad), 0);
	ut_expect(r.cqa, &wc, IBV_WC_SUCCESS);
	cr_expect_eq(wc.opcode, IBV_WC_COMP_SWAP);
	memcpy(&got, r.bufa, 8);
	cr_expect_eq(got, v, "the old value comes back");
	memcpy(&got, r.bufb + 128, 8);
	cr_expect_eq(got, 42, "swapped: 0x%llx", (unsigned long long)got);
	/* fetch-and-add */
	wr.wr_id = 7;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.compare_add = 8;
	cr_assert_eq(ibv_post_send(r.ini, &wr, &bad), 0);
	ut_expect(r.cqa, &wc, IBV_WC_SUCCESS);
	memcpy(&got, r.bufb + 128, 8);
	cr_expect_eq(got, 50);
	cr_expect_eq(ut_poll(r.cqb, &wc, 20), 0, "no receive completion for RDMA or atomics");
}

Test(xrc, a_send_naming_no_srq_is_a_remote_invalid_request)
{
	struct ibv_wc wc;

	post_srq(0, 100, 0);
	send_to(0xabcdef & ~r.srqn[0] & ~r.srqn[1], 3, "nowhere");
	ut_expect(r.cqa, &wc, IBV_WC_REM_INV_REQ_ERR);
	cr_expect_eq(wc.wr_id, 3);
	cr_expect_eq(ut_poll(r.cqb, &wc, 50), 0, "no receive completion");
}

/* A domain named by a file is the inode's (Linux uverbs_cmd.c ib_uverbs_open_xrcd):
 * opened again it is the same domain, O_EXCL refuses it then (EINVAL), and without
 * O_CREAT a file with no domain is EAGAIN; the last close frees it. */
Test(xrc, a_domain_named_by_a_file_is_shared_by_its_opens)
{
	char path[] = "/tmp/uverbs_test_xrc_XXXXXX";
	int fd = mkstemp(path), fd2;
	struct ibv_xrcd *x1, *x2;
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS, .fd = fd };

	cr_assert_geq(fd, 0);
	/* fd -1: a domain of its own, O_CREAT or not (Linux ib_uverbs_open_xrcd) */
	struct ibv_xrcd_init_attr anon = { .comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS, .fd = -1 };
	struct ibv_xrcd *x0 = ibv_open_xrcd(r.cb, &anon);
	cr_assert_not_null(x0, "ibv_open_xrcd(fd -1, no O_CREAT): %s", strerror(errno));
	cr_expect_eq(ibv_close_xrcd(x0), 0);
	errno = 0;
	cr_expect_null(ibv_open_xrcd(r.cb, &xa), "no domain for the file yet, no O_CREAT");
	cr_expect_eq(errno, EAGAIN, "errno %d (Linux ib_uverbs_open_xrcd: EAGAIN)", errno);
	xa.oflags = O_CREAT;
	x1 = ibv_open_xrcd(r.cb, &xa);
	cr_assert_not_null(x1, "ibv_open_xrcd: %s", strerror(errno));
	fd2 = open(path, O_RDONLY);   /* another descriptor of the same file */
	cr_assert_geq(fd2, 0);
	xa.fd = fd2;
	xa.oflags = 0;
	x2 = ibv_open_xrcd(r.cb, &xa);
	cr_assert_not_null(x2);
	struct ibv_srq *s = xrc_srq(x2, r.cqb, IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ);
	cr_assert_not_null(s);
	xa.oflags = O_CREAT | O_EXCL;
	errno = 0;
	cr_expect_null(ibv_open_xrcd(r.cb, &xa));
	cr_expect_eq(errno, EINVAL, "errno %d (Linux ib_uverbs_open_xrcd: O_EXCL on an existing domain is EINVAL)", errno);
	cr_expect_eq(ibv_close_xrcd(x1), 0, "one open of two closed");
	cr_expect_eq(ibv_close_xrcd(x2), EBUSY, "the last open, with an SRQ in the domain");
	cr_expect_eq(ibv_destroy_srq(s), 0);
	cr_expect_eq(ibv_close_xrcd(x2), 0);
	close(fd2);
	close(fd);
	unlink(path);
}

/* An XRC target has no queue: the capabilities it is given are not looked at (Linux
 * create_xrc_tgt_qp uses none), and it reports none. */
Test(xrc, an_xrc_recv_qp_ignores_the_capabilities_it_is_given)
{
	struct ibv_qp_init_attr_ex tq = { .qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD,
					  .xrcd = r.xrcd, .cap = { .max_send_wr = 1u << 30, .max_recv_sge = 1000 } };
	struct ibv_qp *q = ibv_create_qp_ex(r.cb, &tq);

	cr_assert_not_null(q, "ibv_create_qp_ex: %s", strerror(errno));
	cr_expect_eq(tq.cap.max_send_wr, 0);
	cr_expect_eq(tq.cap.max_recv_sge, 0);
	cr_expect_eq(ibv_destroy_qp(q), 0);
}

/* ibv_open_qp(3): another handle on the target QP, found by its number in its XRC
 * domain.  It queries and modifies that QP; the QP is not destroyed while a handle is
 * open (Linux ib_destroy_qp_user: EBUSY). */
Test(xrc, ibv_open_qp_gives_a_handle_on_the_target_qp)
{
	struct ibv_qp_open_attr oa = { .comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
						    IBV_QP_OPEN_ATTR_TYPE | IBV_QP_OPEN_ATTR_CONTEXT,
				       .qp_num = r.tgt->qp_num, .xrcd = r.xrcd, .qp_context = &r,
				       .qp_type = IBV_QPT_XRC_RECV };
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	struct ibv_qp *h = ibv_open_qp(r.cb, &oa);

	cr_assert_not_null(h, "ibv_open_qp: %s", strerror(errno));
	cr_expect_eq(h->qp_num, r.tgt->qp_num);
	cr_expect_eq(h->qp_type, IBV_QPT_XRC_RECV);
	cr_expect_eq(h->qp_context, &r);
	cr_assert_eq(ibv_query_qp(h, &a, IBV_QP_STATE, &ia), 0);
	cr_expect_eq(a.qp_state, IBV_QPS_RTS);
	cr_expect_eq(ibv_destroy_qp(r.tgt), EBUSY, "the QP stays while a handle is open");
	/* the handle moves the QP itself */
	a.qp_state = IBV_QPS_ERR;
	cr_assert_eq(ibv_modify_qp(h, &a, IBV_QP_STATE), 0);
	cr_assert_eq(ibv_query_qp(r.tgt, &a, IBV_QP_STATE, &ia), 0);
	cr_expect_eq(a.qp_state, IBV_QPS_ERR);
	cr_expect_eq(ibv_destroy_qp(h), 0);
	/* no such QP in the domain; only XRC_RECV QPs are opened */
	oa.qp_num = r.tgt->qp_num + 0x1000;
	errno = 0;
	cr_expect_null(ibv_open_qp(r.cb, &oa));
	cr_expect_eq(errno, EINVAL);
	oa.qp_num = r.tgt->qp_num;
	oa.qp_type = IBV_QPT_RC;
	errno = 0;
	cr_expect_null(ibv_open_qp(r.cb, &oa));
	cr_expect_eq(errno, EINVAL);
}

Test(xrc, bad_input_is_refused)
{
	struct ibv_wc wc;
	struct ibv_device_attr da;

	cr_assert_eq(ibv_query_device(r.cb, &da), 0);
	cr_expect(da.device_cap_flags & IBV_DEVICE_XRC, "the device says it offers XRC");

	/* an XRC SRQ without its domain, or without a CQ */
	errno = 0;
	cr_expect_null(xrc_srq(NULL, r.cqb, IBV_SRQ_INIT_ATTR_CQ));
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_null(xrc_srq(r.xrcd, NULL, IBV_SRQ_INIT_ATTR_XRCD));
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_null(xrc_srq(r.xrcd, r.cqb, IBV_SRQ_INIT_ATTR_XRCD));   /* CQ not flagged */
	cr_expect_eq(errno, EINVAL);
	/* an XRC_RECV QP without its domain */
	struct ibv_qp_init_attr_ex tq = { .qp_type = IBV_QPT_XRC_RECV };
	errno = 0;
	cr_expect_null(ibv_create_qp_ex(r.cb, &tq));
	cr_expect_eq(errno, EINVAL);
	/* a file descriptor that is not open */
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
					 .fd = 1000, .oflags = O_CREAT };
	errno = 0;
	cr_expect_null(ibv_open_xrcd(r.cb, &xa));
	cr_expect_eq(errno, EBADF);
	/* a domain SRQs and QPs still use */
	cr_expect_eq(ibv_close_xrcd(r.xrcd), EBUSY);
	/* the target has no send queue */
	struct ibv_sge sg = { .addr = (uintptr_t)r.bufb, .length = 1, .lkey = r.mrb->lkey };
	struct ibv_send_wr wr = { .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND }, *bad = NULL;
	cr_expect_eq(ibv_post_send(r.tgt, &wr, &bad), EINVAL);
	cr_expect_eq(bad, &wr);
	/* the CQ an XRC SRQ completes on is busy while it lives */
	cr_expect_eq(ibv_destroy_cq(r.cqb), EBUSY);
	cr_expect_eq(ut_poll(r.cqb, &wc, 10), 0);
}

/* Destroying an XRC SRQ takes its unpolled receive CQEs out of the CQ, as destroying a
 * QP does: the poller meets neither a completion of a queue that no longer exists nor,
 * once the number is reused, one of a WQE the new SRQ never posted.  The other SRQ's
 * completion on the same CQ stays, in order. */
Test(xrc, destroying_an_xrc_srq_takes_its_unpolled_completions_with_it)
{
	struct ibv_wc wc;

	post_srq(1, 200, 64);
	post_srq(0, 100, 0);
	send_to(r.srqn[1], 1, "to the second SRQ");
	ut_expect(r.cqa, &wc, IBV_WC_SUCCESS);   /* ACKed: the receive CQE is written */
	send_to(r.srqn[0], 2, "to the first SRQ");
	ut_expect(r.cqa, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(ibv_destroy_srq(r.srq[1]), 0);
	r.srq[1] = NULL;
	ut_expect(r.cqb, &wc, IBV_WC_SUCCESS);
	cr_expect_eq(wc.wr_id, 100, "the first SRQ's completion (wr_id %llu)", (unsigned long long)wc.wr_id);
	cr_expect_eq(ut_poll(r.cqb, &wc, 50), 0, "nothing of the destroyed SRQ is left");
}

/* A domain named by a file is the device's, whichever context opened it first: a
 * second context of the same device opens the same file and makes an XRC SRQ and a
 * target QP in it (ibv_xsrq_pingpong's server opens its contexts one per connection). */
Test(xrc, a_file_named_domain_serves_every_context_of_its_device)
{
	char path[] = "/tmp/uverbs_test_xrc_ctx_XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	struct ibv_context *c2 = ut_open(1);
	struct ibv_pd *pd2 = ibv_alloc_pd(c2);
	struct ibv_cq *cq2 = ibv_create_cq(c2, 8, NULL, NULL, 0);
	cr_assert(pd2 && cq2);
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS, .fd = fd,
					 .oflags = O_CREAT };
	struct ibv_xrcd *x1 = ibv_open_xrcd(r.cb, &xa), *x2 = ibv_open_xrcd(c2, &xa);
	cr_assert(x1 && x2, "ibv_open_xrcd: %s", strerror(errno));
	struct ibv_srq_init_attr_ex sa = { .attr = { .max_wr = 4, .max_sge = 1 }, .srq_type = IBV_SRQT_XRC,
					   .pd = pd2, .xrcd = x2, .cq = cq2,
					   .comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
							IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ };
	struct ibv_srq *s = ibv_create_srq_ex(c2, &sa);
	cr_expect_not_null(s, "an XRC SRQ of the second context in the shared domain: %s", strerror(errno));
	struct ibv_qp_init_attr_ex tq = { .qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x2 };
	struct ibv_qp *t = ibv_create_qp_ex(c2, &tq);
	cr_expect_not_null(t, "a target QP of the second context in the shared domain: %s", strerror(errno));
	if (t)
		cr_expect_eq(ibv_destroy_qp(t), 0);
	if (s)
		cr_expect_eq(ibv_destroy_srq(s), 0);
	cr_expect_eq(ibv_close_xrcd(x2), 0);
	cr_expect_eq(ibv_close_xrcd(x1), 0);
	ibv_destroy_cq(cq2);
	ibv_dealloc_pd(pd2);
	ibv_close_device(c2);
	close(fd);
	unlink(path);
}
