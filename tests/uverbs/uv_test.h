/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Shared helpers of the tests/uverbs criterion programs: open emulated NICs through the
 * verbs API (UVERBS_DEVICES, set before the first ibv_get_device_list of the test's
 * process), build an RC/UC/UD endpoint, connect two, wait for completions. */
#ifndef UVERBS_TESTS_UVERBS_UV_TEST_H
#define UVERBS_TESTS_UVERBS_UV_TEST_H

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(UV_TEST_STANDALONE)
#include "tests/common/standalone_test.h"   /* the ThreadSanitizer build (tools/run-tests) */
#else
#include <criterion/criterion.h>
#endif
#include <infiniband/verbs.h>

/* Exported by libibverbs (IBVERBS_1.0) but declared only in rdma-core's driver.h. */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);

struct ut_ep {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t len;
	union ibv_gid gid;
	enum ibv_mtu mtu;
};

static struct ibv_device **ut_list;
static int ut_ndev;

/* Devices for this test process: "emu:ip=A[,emu:ip=B...]" */
static inline void ut_devices(const char *uris)
{
	setenv("UVERBS_DEVICES", uris, 1);
	ut_list = ibv_get_device_list(&ut_ndev);
	cr_assert_not_null(ut_list);
}

static inline struct ibv_context *ut_open(int i)
{
	cr_assert_lt(i, ut_ndev, "device %d of %d", i, ut_ndev);
	struct ibv_context *c = ibv_open_device(ut_list[i]);
	cr_assert_not_null(c, "ibv_open_device: %s", strerror(errno));
	return c;
}

static inline double ut_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One completion within ms milliseconds (0 if none). */
static inline int ut_poll(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	double end = ut_now_ms() + ms;
	do {
		int n = ibv_poll_cq(cq, 1, wc);
		cr_assert_geq(n, 0, "ibv_poll_cq %d", n);
		if (n)
			return 1;
	} while (ut_now_ms() < end);
	return 0;
}

static inline void ut_expect(struct ibv_cq *cq, struct ibv_wc *wc, enum ibv_wc_status st)
{
	cr_assert_eq(ut_poll(cq, wc, 5000), 1, "no completion within 5 s");
	cr_assert_eq(wc->status, st, "status %s, expected %s", ibv_wc_status_str(wc->status),
		     ibv_wc_status_str(st));
}

/* An endpoint on the caller's buffer of len bytes (zeroed here, never freed here). */
static inline void ut_ep_init_buf(struct ut_ep *e, struct ibv_context *ctx, enum ibv_qp_type t, uint8_t *buf,
				  size_t len, struct ibv_cq *cq)
{
	memset(e, 0, sizeof(*e));
	e->ctx = ctx;
	e->pd = ibv_alloc_pd(ctx);
	cr_assert_not_null(e->pd);
	e->len = len;
	e->buf = buf;
	memset(e->buf, 0, len);
	e->mr = ibv_reg_mr(e->pd, e->buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	cr_assert_not_null(e->mr, "ibv_reg_mr: %s", strerror(errno));
	e->cq = cq ? cq : ibv_create_cq(ctx, 128, NULL, NULL, 0);
	cr_assert_not_null(e->cq);
	struct ibv_qp_init_attr ia = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = t,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
	};
	e->qp = ibv_create_qp(e->pd, &ia);
	cr_assert_not_null(e->qp, "ibv_create_qp: %s", strerror(errno));
	struct ibv_port_attr pa;
	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	e->mtu = pa.active_mtu;
	cr_assert_eq(ibv_query_gid(ctx, 1, 0, &e->gid), 0);
}

static inline void ut_ep_init(struct ut_ep *e, struct ibv_context *ctx, enum ibv_qp_type t, size_t len,
			      struct ibv_cq *cq)
{
	uint8_t *buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);

	cr_assert_not_null(buf);
	ut_ep_init_buf(e, ctx, t, buf, len, cq);
}

static inline void ut_to_init(struct ut_ep *e)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_ATOMIC, .qkey = 0x11111111 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	mask |= e->qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	cr_assert_eq(ibv_modify_qp(e->qp, &a, mask), 0);
}

/* RESET -> INIT -> RTR -> RTS towards peer (qpn/gid); UD needs no peer. */
static inline void ut_connect(struct ut_ep *e, uint32_t peer_qpn, const union ibv_gid *peer_gid)
{
	struct ibv_qp_attr a;
	int t = e->qp->qp_type;
	ut_to_init(e);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	int mask = IBV_QP_STATE;
	if (t != IBV_QPT_UD) {
		a.path_mtu = e->mtu;
		a.dest_qp_num = peer_qpn;
		a.rq_psn = 100;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = *peer_gid;
		a.ah_attr.grh.hop_limit = 1;
		a.ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (t == IBV_QPT_RC) {
			a.max_dest_rd_atomic = 4;
			a.min_rnr_timer = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	cr_assert_eq(ibv_modify_qp(e->qp, &a, mask), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 100;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (t == IBV_QPT_RC) {
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 4;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	cr_assert_eq(ibv_modify_qp(e->qp, &a, mask), 0);
}

static inline void ut_pair(struct ut_ep *a, struct ut_ep *b)
{
	ut_connect(a, b->qp->qp_num, &b->gid);
	ut_connect(b, a->qp->qp_num, &a->gid);
}

/* A signalled RDMA WRITE of the first len bytes of e's buffer to addr/rkey: the status of
 * its completion, which must come within 5 s and carry wr_id. */
static inline enum ibv_wc_status ut_write(struct ut_ep *e, uint32_t len, void *addr, uint32_t rkey, uint64_t wr_id)
{
	struct ibv_sge sg = { .addr = (uintptr_t)e->buf, .length = len, .lkey = e->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	struct ibv_wc wc;

	wr.wr.rdma.remote_addr = (uintptr_t)addr;
	wr.wr.rdma.rkey = rkey;
	cr_assert_eq(ibv_post_send(e->qp, &wr, &bad), 0);
	cr_assert_eq(ut_poll(e->cq, &wc, 5000), 1, "no completion within 5 s");
	cr_assert_eq(wc.wr_id, wr_id);
	return wc.status;
}

static inline void ut_post_recv(struct ut_ep *e, uint64_t wr_id, uint8_t *addr, uint32_t len)
{
	struct ibv_sge sg = { .addr = (uintptr_t)addr, .length = len, .lkey = e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sg, .num_sge = 1 }, *bad = NULL;
	cr_assert_eq(ibv_post_recv(e->qp, &wr, &bad), 0);
}

#endif
