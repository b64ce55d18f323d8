/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The verbs data path between two emulated NICs in one process: ibv_post_send /
 * ibv_poll_cq, the ibv_wr_* API, the extended CQ, completion channels and async events
 * as file descriptors, UD with address handles made from a completion, SRQs, and a
 * local key from another PD failing as hardware does (a completion in error). */
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include "tests/uverbs/uv_test.h"

static struct ibv_context *ca, *cb;
static struct ut_ep A, B;

static void setup(void)
{
	ut_devices("emu:ip=127.0.71.2,emu:ip=127.0.71.3");
	ca = ut_open(0);
	cb = ut_open(1);
}

TestSuite(datapath, .init = setup, .timeout = 60);

static void rc_pair(void)
{
	ut_ep_init(&A, ca, IBV_QPT_RC, 65536, NULL);
	ut_ep_init(&B, cb, IBV_QPT_RC, 65536, NULL);
	ut_pair(&A, &B);
}

static void send_one(struct ut_ep *e, uint64_t wr_id, enum ibv_wr_opcode op, uint8_t *addr, uint32_t len,
		     unsigned flags, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sg = { .addr = (uintptr_t)addr, .length = len, .lkey = e->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sg, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED | flags }, *bad = NULL;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	cr_assert_eq(ibv_post_send(e->qp, &wr, &bad), 0);
}

Test(datapath, send_recv_delivers_bytes_and_completion_fields)
{
	struct ibv_wc wc;
	rc_pair();
	ut_post_recv(&B, 77, B.buf, 4096);
	for (int i = 0; i < 3000; i++)
		A.buf[8192 + i] = (uint8_t)(i * 13 + 1);
	send_one(&A, 11, IBV_WR_SEND, A.buf + 8192, 3000, 0, 0, 0);
	ut_expect(B.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 77);
	cr_assert_eq(wc.opcode, IBV_WC_RECV);
	cr_assert_eq(wc.byte_len, 3000);
	cr_assert_eq(wc.qp_num, B.qp->qp_num);
	cr_assert_eq(memcmp(B.buf, A.buf + 8192, 3000), 0);
	ut_expect(A.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 11);
	cr_assert_eq(wc.opcode, IBV_WC_SEND);
	cr_assert_eq(wc.qp_num, A.qp->qp_num);
}

Test(datapath, write_then_read_back_across_the_mtu)
{
	struct ibv_wc wc;
	rc_pair();
	for (int i = 0; i < 20000; i++)
		A.buf[i] = (uint8_t)(i ^ (i >> 7));
	send_one(&A, 1, IBV_WR_RDMA_WRITE, A.buf, 20000, 0, (uintptr_t)(B.buf + 1000), B.mr->rkey);
	ut_expect(A.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RDMA_WRITE);
	cr_assert_eq(memcmp(B.buf + 1000, A.buf, 20000), 0);
	send_one(&A, 2, IBV_WR_RDMA_READ, A.buf + 32768, 20000, 0, (uintptr_t)(B.buf + 1000), B.mr->rkey);
	ut_expect(A.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RDMA_READ);
	cr_assert_eq(wc.byte_len, 20000);
	cr_assert_eq(memcmp(A.buf + 32768, A.buf, 20000), 0);
}

Test(datapath, inline_send_reaches_the_peer)
{
	struct ibv_wc wc;
	rc_pair();
	ut_post_recv(&B, 5, B.buf, 128);
	memcpy(A.buf, "inline payload 0123456789", 26);
	send_one(&A, 6, IBV_WR_SEND, A.buf, 26, IBV_SEND_INLINE, 0, 0);
	memset(A.buf, 0, 26);   /* inline: the data was copied at post time */
	ut_expect(B.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 26);
	cr_assert_str_eq((char *)B.buf, "inline payload 0123456789");
	ut_expect(A.cq, &wc, IBV_WC_SUCCESS);
}

Test(datapath, wr_api_write_imm_and_inline_send_in_one_batch)
{
	struct ibv_wc wc;
	rc_pair();
	ut_post_recv(&B, 100, B.buf + 60000, 16);
	ut_post_recv(&B, 101, B.buf + 61000, 64);
	for (int i = 0; i < 5000; i++)
		A.buf[i] = (uint8_t)(i * 7);
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(A.qp);
	char msg[] = "hello over ibv_wr";
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write_imm(x, B.mr->rkey, (uintptr_t)B.buf, htobe32(0xabcd1234));
	ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)A.buf, 5000);
	x->wr_id = 2;
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, msg, sizeof(msg));
	memset(msg, 0, sizeof(msg));   /* copied by the setter */
	cr_assert_eq(ibv_wr_complete(x), 0);

	ut_expect(B.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	cr_assert(wc.wc_flags & IBV_WC_WITH_IMM);
	cr_assert_eq(be32toh(wc.imm_data), 0xabcd1234);
	cr_assert_eq(wc.wr_id, 100);
	cr_assert_eq(memcmp(B.buf, A.buf, 5000), 0);
	ut_expect(B.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 101);
	cr_assert_str_eq((char *)B.buf + 61000, "hello over ibv_wr");
	ut_expect(A.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 1);
	ut_expect(A.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 2);
}

Test(datapath, wr_abort_posts_nothing_and_the_ring_stays_usable)
{
	struct ibv_wc wc;
	rc_pair();
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(A.qp);
	ibv_wr_start(x);
	x->wr_id = 9;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, B.mr->rkey, (uintptr_t)B.buf);
	ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)A.buf, 64);
	ibv_wr_abort(x);
	cr_assert_eq(ut_poll(A.cq, &wc, 200), 0, "an aborted WR completed");
	memset(A.buf, 0x3c, 64);
	ibv_wr_start(x);
	x->wr_id = 10;
	ibv_wr_rdma_write(x, B.mr->rkey, (uintptr_t)B.buf);
	ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)A.buf, 64);
	cr_assert_eq(ibv_wr_complete(x), 0);
	ut_expect(A.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 10);
	cr_assert_eq(B.buf[63], 0x3c);
}

Test(datapath, wr_api_atomics_return_the_original)
{
	struct ibv_wc wc;
	rc_pair();
	uint64_t *rw = (uint64_t *)(void *)(B.buf + 4096), *lw = (uint64_t *)(void *)A.buf;
	const uint64_t ones = 0x0101010101010101ull;   /* same in either byte order */
	*rw = 5 * ones;
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(A.qp);
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_fetch_add(x, B.mr->rkey, (uintptr_t)rw, 2 * ones);
	ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)lw, 8);
	cr_assert_eq(ibv_wr_complete(x), 0);
	ut_expect(A.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_FETCH_ADD);
	cr_assert_eq(*lw, 5 * ones);
	cr_assert_eq(*rw, 7 * ones);
	ibv_wr_start(x);
	ibv_wr_atomic_cmp_swp(x, B.mr->rkey, (uintptr_t)rw, 7 * ones, 9 * ones);
	ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)lw, 8);
	cr_assert_eq(ibv_wr_complete(x), 0);
	ut_expect(A.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_COMP_SWAP);
	cr_assert_eq(*lw, 7 * ones);
	cr_assert_eq(*rw, 9 * ones);
}

Test(datapath, cq_ex_polls_fields_in_order)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 32, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM |
							  IBV_WC_EX_WITH_IMM };
	struct ibv_cq_ex *bx = ibv_create_cq_ex(cb, &a);
	cr_assert_not_null(bx);
	ut_ep_init(&A, ca, IBV_QPT_RC, 65536, NULL);
	ut_ep_init(&B, cb, IBV_QPT_RC, 65536, ibv_cq_ex_to_cq(bx));
	ut_pair(&A, &B);
	ut_post_recv(&B, 200, B.buf, 1024);
	ut_post_recv(&B, 201, B.buf + 1024, 1024);
	struct ibv_sge sg = { .addr = (uintptr_t)A.buf, .length = 100, .lkey = A.mr->lkey };
	struct ibv_send_wr w2 = { .wr_id = 2, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM,
				  .imm_data = htobe32(42), .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr w1 = { .wr_id = 1, .next = &w2, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND },
			   *bad;
	cr_assert_eq(ibv_post_send(A.qp, &w1, &bad), 0);
	struct ibv_poll_cq_attr pa = { 0 };
	double end = ut_now_ms() + 5000;
	int rc;
	while ((rc = ibv_start_poll(bx, &pa)) == ENOENT)
		cr_assert_lt(ut_now_ms(), end, "no completion");
	cr_assert_eq(rc, 0);
	cr_assert_eq(bx->status, IBV_WC_SUCCESS);
	cr_assert_eq(bx->wr_id, 200);
	cr_assert_eq(ibv_wc_read_opcode(bx), IBV_WC_RECV);
	cr_assert_eq(ibv_wc_read_byte_len(bx), 100);
	cr_assert_eq(ibv_wc_read_qp_num(bx), B.qp->qp_num);
	while ((rc = ibv_next_poll(bx)) == ENOENT)
		cr_assert_lt(ut_now_ms(), end, "no second completion");
	cr_assert_eq(bx->wr_id, 201);
	cr_assert(ibv_wc_read_wc_flags(bx) & IBV_WC_WITH_IMM);
	cr_assert_eq(be32toh(ibv_wc_read_imm_data(bx)), 42);
	cr_assert_eq(ibv_next_poll(bx), ENOENT);
	ibv_end_poll(bx);
	struct ibv_wc wc;
	ut_expect(A.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 2, "the unsignalled WR was retired by the signalled one after it");
}

Test(datapath, completion_channel_fd_wakes_after_arming)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(cb);
	int token;
	struct ibv_cq *bcq = ibv_create_cq(cb, 32, &token, ch, 0);
	cr_assert(ch && bcq);
	ut_ep_init(&A, ca, IBV_QPT_RC, 65536, NULL);
	ut_ep_init(&B, cb, IBV_QPT_RC, 65536, bcq);
	ut_pair(&A, &B);
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	for (int round = 0; round < 3; round++) {
		cr_assert_eq(ibv_req_notify_cq(bcq, 0), 0);
		ut_post_recv(&B, (uint64_t)round, B.buf, 64);
		send_one(&A, 1, IBV_WR_SEND, A.buf, 64, 0, 0, 0);
		cr_assert_eq(poll(&p, 1, 5000), 1, "no completion event (round %d)", round);
		struct ibv_cq *ev_cq;
		void *ev_ctx;
		cr_assert_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
		cr_assert_eq(ev_cq, bcq);
		cr_assert_eq(ev_ctx, &token);
		ibv_ack_cq_events(ev_cq, 1);
		struct ibv_wc wc;
		ut_expect(bcq, &wc, IBV_WC_SUCCESS);
		cr_assert_eq(wc.wr_id, (uint64_t)round);
		ut_expect(A.cq, &wc, IBV_WC_SUCCESS);
		cr_assert_eq(poll(&p, 1, 0), 0, "one event per arm");
	}
	cr_assert_eq(bcq->comp_events_completed, 3);
	/* unarmed: a completion raises no event */
	ut_post_recv(&B, 9, B.buf, 64);
	send_one(&A, 1, IBV_WR_SEND, A.buf, 64, 0, 0, 0);
	struct ibv_wc wc;
	ut_expect(bcq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(poll(&p, 1, 100), 0, "event without a request");
	/* a non-blocking channel answers EAGAIN when empty */
	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	errno = 0;
	cr_assert_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), -1);
	cr_assert_eq(errno, EAGAIN);
}

Test(datapath, lkey_of_another_pd_completes_with_local_protection_error)
{
	struct ibv_wc wc;
	rc_pair();
	struct ibv_pd *other = ibv_alloc_pd(ca);
	static uint8_t obuf[4096] __attribute__((aligned(4096)));
	struct ibv_mr *omr = ibv_reg_mr(other, obuf, sizeof(obuf), IBV_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(omr);
	struct ibv_sge sg = { .addr = (uintptr_t)obuf, .length = 64, .lkey = omr->lkey };
	struct ibv_send_wr wr = { .wr_id = 3, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	wr.wr.rdma.remote_addr = (uintptr_t)B.buf;
	wr.wr.rdma.rkey = B.mr->rkey;
	/* posting succeeds (keys are checked by the device, as on hardware) ... */
	cr_assert_eq(ibv_post_send(A.qp, &wr, &bad), 0);
	/* ... and the WR completes in error */
	ut_expect(A.cq, &wc, IBV_WC_LOC_PROT_ERR);
	cr_assert_eq(wc.wr_id, 3);
	cr_assert_eq(ibv_dereg_mr(omr), 0);
	cr_assert_eq(ibv_dealloc_pd(other), 0);
}

Test(datapath, remote_access_error_raises_an_async_event_on_the_responder)
{
	struct ibv_wc wc;
	rc_pair();
	send_one(&A, 4, IBV_WR_RDMA_WRITE, A.buf, 64, 0, (uintptr_t)B.buf, B.mr->rkey ^ 0x5500);
	ut_expect(A.cq, &wc, IBV_WC_REM_ACCESS_ERR);
	struct pollfd p = { .fd = cb->async_fd, .events = POLLIN };
	cr_assert_eq(poll(&p, 1, 5000), 1, "no async event on the responder");
	struct ibv_async_event ev;
	cr_assert_eq(ibv_get_async_event(cb, &ev), 0);
	cr_assert_eq(ev.event_type, IBV_EVENT_QP_ACCESS_ERR, "%s", ibv_event_type_str(ev.event_type));
	cr_assert_eq(ev.element.qp, B.qp);
	ibv_ack_async_event(&ev);
	cr_assert_eq(B.qp->events_completed, 1);
}

struct destroy_arg {
	struct ibv_qp *qp;
	int rc;
	volatile int done;
};

static void *destroy_qp_thread(void *p)
{
	struct destroy_arg *a = p;
	a->rc = ibv_destroy_qp(a->qp);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* ibv_get_async_event(3): "destroying an object (CQ, SRQ or QP) will wait for all
 * affiliated events for the object to be acknowledged".  UCX's async thread relies on
 * it: without the wait, ucx_perftest's server died of SIGSEGV now and then at teardown
 * (an event for a QP being destroyed, dispatched after the device was torn down). */
Test(datapath, destroy_waits_until_the_objects_async_event_is_acknowledged)
{
	struct ibv_wc wc;
	rc_pair();
	send_one(&A, 4, IBV_WR_RDMA_WRITE, A.buf, 64, 0, (uintptr_t)B.buf, B.mr->rkey ^ 0x5500);
	ut_expect(A.cq, &wc, IBV_WC_REM_ACCESS_ERR);
	struct pollfd p = { .fd = cb->async_fd, .events = POLLIN };
	cr_assert_eq(poll(&p, 1, 5000), 1, "no async event on the responder");
	struct ibv_async_event ev;
	cr_assert_eq(ibv_get_async_event(cb, &ev), 0);
	cr_assert_eq(ev.element.qp, B.qp);
	struct destroy_arg a = { .qp = B.qp };
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, destroy_qp_thread, &a), 0);
	usleep(300 * 1000);
	cr_assert_eq(__atomic_load_n(&a.done, __ATOMIC_ACQUIRE), 0,
		     "ibv_destroy_qp returned (%d) with its event unacknowledged", a.rc);
	ibv_ack_async_event(&ev);
	for (int i = 0; i < 500 && !__atomic_load_n(&a.done, __ATOMIC_ACQUIRE); i++)
		usleep(10 * 1000);
	cr_assert_eq(__atomic_load_n(&a.done, __ATOMIC_ACQUIRE), 1, "destroy still waiting after the ack");
	pthread_join(t, NULL);
	cr_assert_eq(a.rc, 0);
}

/* An event queued but never handed out does not hold a destroy: it is dropped. */
Test(datapath, destroy_drops_an_async_event_never_handed_out)
{
	struct ibv_wc wc;
	rc_pair();
	send_one(&A, 4, IBV_WR_RDMA_WRITE, A.buf, 64, 0, (uintptr_t)B.buf, B.mr->rkey ^ 0x5500);
	ut_expect(A.cq, &wc, IBV_WC_REM_ACCESS_ERR);
	struct pollfd p = { .fd = cb->async_fd, .events = POLLIN };
	cr_assert_eq(poll(&p, 1, 5000), 1, "no async event on the responder");
	cr_assert_eq(ibv_destroy_qp(B.qp), 0);
	cr_assert_eq(poll(&p, 1, 0), 0, "the destroyed QP's event is gone");
}

Test(datapath, ud_send_and_reply_through_an_ah_from_the_completion)
{
	struct ibv_wc wc;
	ut_ep_init(&A, ca, IBV_QPT_UD, 65536, NULL);
	ut_ep_init(&B, cb, IBV_QPT_UD, 65536, NULL);
	ut_connect(&A, 0, NULL);
	ut_connect(&B, 0, NULL);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .dgid = B.gid, .hop_limit = 1 } };
	struct ibv_ah *ah = ibv_create_ah(A.pd, &aa);
	cr_assert_not_null(ah);
	ut_post_recv(&B, 1, B.buf, 40 + 256);
	ut_post_recv(&A, 2, A.buf + 8192, 40 + 256);
	memcpy(A.buf, "datagram", 9);
	struct ibv_sge sg = { .addr = (uintptr_t)A.buf, .length = 9, .lkey = A.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = B.qp->qp_num;
	wr.wr.ud.remote_qkey = 0x11111111;
	cr_assert_eq(ibv_post_send(A.qp, &wr, &bad), 0);
	ut_expect(B.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 40 + 9, "GRH (40 bytes) then the payload");
	cr_assert(wc.wc_flags & IBV_WC_GRH);
	cr_assert_eq(wc.src_qp, A.qp->qp_num);
	cr_assert_str_eq((char *)B.buf + 40, "datagram");
	struct ibv_ah *back = ibv_create_ah_from_wc(B.pd, &wc, (struct ibv_grh *)(void *)B.buf, 1);
	cr_assert_not_null(back, "ibv_create_ah_from_wc: %s", strerror(errno));
	ut_expect(A.cq, &wc, IBV_WC_SUCCESS);
	memcpy(B.buf + 4096, "reply", 6);
	struct ibv_sge sg2 = { .addr = (uintptr_t)(B.buf + 4096), .length = 6, .lkey = B.mr->lkey };
	struct ibv_send_wr w2 = { .wr_id = 8, .sg_list = &sg2, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	w2.wr.ud.ah = back;
	w2.wr.ud.remote_qpn = A.qp->qp_num;
	w2.wr.ud.remote_qkey = 0x11111111;
	cr_assert_eq(ibv_post_send(B.qp, &w2, &bad), 0);
	ut_expect(A.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_str_eq((char *)A.buf + 8192 + 40, "reply");
	cr_assert_eq(ibv_destroy_ah(back), 0);
	cr_assert_eq(ibv_destroy_ah(ah), 0);
}

Test(datapath, srq_feeds_an_rc_qp)
{
	struct ibv_wc wc;
	ut_ep_init(&A, ca, IBV_QPT_RC, 65536, NULL);
	memset(&B, 0, sizeof(B));
	B.ctx = cb;
	B.pd = ibv_alloc_pd(cb);
	B.buf = aligned_alloc(4096, 65536);
	B.mr = ibv_reg_mr(B.pd, B.buf, 65536, IBV_ACCESS_LOCAL_WRITE);
	B.cq = ibv_create_cq(cb, 64, NULL, NULL, 0);
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(B.pd, &si);
	cr_assert_not_null(srq, "ibv_create_srq: %s", strerror(errno));
	cr_assert_geq(si.attr.max_wr, 16);
	struct ibv_qp_init_attr ia = { .send_cq = B.cq, .recv_cq = B.cq, .srq = srq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 8, .max_send_sge = 1 } };
	B.qp = ibv_create_qp(B.pd, &ia);
	cr_assert_not_null(B.qp);
	B.mtu = A.mtu;
	cr_assert_eq(ibv_query_gid(cb, 1, 0, &B.gid), 0);
	ut_pair(&A, &B);
	for (int i = 0; i < 4; i++) {
		struct ibv_sge sg = { .addr = (uintptr_t)(B.buf + i * 1024), .length = 1024, .lkey = B.mr->lkey };
		struct ibv_recv_wr rw = { .wr_id = 500 + (uint64_t)i, .sg_list = &sg, .num_sge = 1 }, *rbad;
		cr_assert_eq(ibv_post_srq_recv(srq, &rw, &rbad), 0);
	}
	for (int i = 0; i < 4; i++) {
		A.buf[i * 64] = (uint8_t)(0x40 + i);
		send_one(&A, (uint64_t)i, IBV_WR_SEND, A.buf + i * 64, 64, 0, 0, 0);
		ut_expect(B.cq, &wc, IBV_WC_SUCCESS);
		cr_assert_eq(wc.wr_id, 500 + (uint64_t)i);
		cr_assert_eq(B.buf[i * 1024], 0x40 + i);
		ut_expect(A.cq, &wc, IBV_WC_SUCCESS);
	}
	struct ibv_srq_attr sa;
	cr_assert_eq(ibv_query_srq(srq, &sa), 0);
	cr_assert_geq(sa.max_wr, 16);
	cr_assert_eq(ibv_destroy_qp(B.qp), 0);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
}

Test(datapath, arming_waits_for_a_new_completion_not_an_unpolled_one)
{
	/* ibv_req_notify_cq(3): the event comes "upon the addition of a new CQE"; one
	 * already in the CQ (not yet polled) does not raise it. */
	struct ibv_comp_channel *ch = ibv_create_comp_channel(cb);
	struct ibv_cq *bcq = ibv_create_cq(cb, 32, NULL, ch, 0);
	cr_assert(ch && bcq);
	ut_ep_init(&A, ca, IBV_QPT_RC, 65536, NULL);
	ut_ep_init(&B, cb, IBV_QPT_RC, 65536, bcq);
	ut_pair(&A, &B);
	ut_post_recv(&B, 1, B.buf, 64);
	ut_post_recv(&B, 2, B.buf + 64, 64);
	struct ibv_wc wc;
	send_one(&A, 1, IBV_WR_SEND, A.buf, 8, 0, 0, 0);
	ut_expect(A.cq, &wc, IBV_WC_SUCCESS);   /* acknowledged: B's CQE is written */
	cr_assert_eq(ibv_req_notify_cq(bcq, 0), 0);
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	cr_assert_eq(poll(&p, 1, 200), 0, "event for a CQE that was there before the request");
	send_one(&A, 2, IBV_WR_SEND, A.buf, 8, 0, 0, 0);
	cr_assert_eq(poll(&p, 1, 5000), 1, "no event for the new CQE");
	struct ibv_cq *ev;
	void *evctx;
	cr_assert_eq(ibv_get_cq_event(ch, &ev, &evctx), 0);
	ibv_ack_cq_events(ev, 1);
	ut_expect(bcq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 1);
	ut_expect(bcq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 2);
	ut_expect(A.cq, &wc, IBV_WC_SUCCESS);
}

struct destroy_cq_arg {
	struct ibv_cq *cq;
	int rc;
	volatile int done;
};

static void *destroy_cq_thread(void *p)
{
	struct destroy_cq_arg *a = p;
	a->rc = ibv_destroy_cq(a->cq);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* ibv_get_cq_event(3): "ibv_destroy_cq() will wait for all completion events to be
 * acknowledged", as rdma-core's ibv_cmd_destroy_cq() waits for comp_events_completed
 * (libibverbs/cmd_cq.c); without the wait the later ibv_ack_cq_events() wrote into the
 * freed CQ. */
Test(datapath, destroy_cq_waits_until_its_completion_event_is_acknowledged)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(cb);
	cr_assert(ch);
	struct ibv_cq *bcq = ibv_create_cq(cb, 32, NULL, ch, 0);
	cr_assert(bcq);
	ut_ep_init(&A, ca, IBV_QPT_RC, 65536, NULL);
	ut_ep_init(&B, cb, IBV_QPT_RC, 65536, bcq);
	ut_pair(&A, &B);
	cr_assert_eq(ibv_req_notify_cq(bcq, 0), 0);
	ut_post_recv(&B, 1, B.buf, 64);
	send_one(&A, 1, IBV_WR_SEND, A.buf, 64, 0, 0, 0);
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	cr_assert_eq(poll(&p, 1, 5000), 1, "no completion event");
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	cr_assert_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	cr_assert_eq(ev_cq, bcq);
	cr_assert_eq(ibv_destroy_qp(B.qp), 0);
	struct destroy_cq_arg a = { .cq = bcq };
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, destroy_cq_thread, &a), 0);
	usleep(300 * 1000);
	cr_assert_eq(__atomic_load_n(&a.done, __ATOMIC_ACQUIRE), 0,
		     "ibv_destroy_cq returned (%d) with a completion event unacknowledged", a.rc);
	ibv_ack_cq_events(ev_cq, 1);
	for (int i = 0; i < 500 && !__atomic_load_n(&a.done, __ATOMIC_ACQUIRE); i++)
		usleep(10 * 1000);
	cr_assert_eq(__atomic_load_n(&a.done, __ATOMIC_ACQUIRE), 1, "destroy still waiting after the ack");
	pthread_join(t, NULL);
	cr_assert_eq(a.rc, 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
}
