/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Test support for the data-plane integration tests: emulated NICs opened through the
 * driver (hw/mlx5), connected QPs, posting and polling through the driver's data path
 * (wqe.h / doorbell.h / poll.h).  Static functions: each test program includes it once.
 * Every wait is bounded. */
#ifndef UVERBS_TESTS_INTEGRATION_TP_PAIR_H
#define UVERBS_TESTS_INTEGRATION_TP_PAIR_H

#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "hw/emu/emu.h"
#include "hw/emu/roce_wire.h"
#include "hw/emu/transport.h"
#include "hw/mlx5/doorbell.h"
#include "hw/mlx5/mx5.h"
#include "hw/mlx5/poll.h"

struct tp_nic {
	struct mx5_device *dev;
	struct emu_dev *emu;
	struct mx5_pd *pd;
	struct mx5_cq *cq;
	struct mx5_cq_ring *cqr;
	uint32_t ip;
	uint8_t gid[16];
	uint8_t mac[6];
};

struct tp_ep {
	struct tp_nic *nic;
	struct mx5_qp *qp;
	struct mx5_sq *sq;
	struct mx5_rq *rq;
	uint32_t qpn;
	enum mx5_qp_type type;
};

static inline uint64_t tp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static inline uint64_t tp_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static inline void tp_nic_open(struct tp_nic *n, const char *uri, uint32_t cqe)
{
	struct mx5_cq_attr ca = { .cqe = cqe };
	struct mx5_gid_entry g;
	uint8_t mac[6];
	int rc = mx5_device_open(uri, &n->dev);

	cr_assert_eq(rc, 0, "open %s: %s", uri, mx5_open_error());
	n->emu = emu_device_from_shim(mx5_device_shim(n->dev));
	cr_assert_not_null(n->emu);
	n->ip = emu_ipv4(n->emu);
	cr_assert_eq(mx5_pd_alloc(n->dev, &n->pd), 0, "%s", mx5_device_error(n->dev));
	cr_assert_eq(mx5_cq_create(n->dev, &ca, &n->cq), 0, "%s", mx5_device_error(n->dev));
	n->cqr = mx5_cq_state(n->cq);
	/* GID 0: the NIC's RoCE v2 address, MAC derived from it (emulated NICs) */
	emu_roce_mac_from_ipv4(n->ip, mac);
	mx5_gid_entry_ipv4(&g, n->ip, mac);
	cr_assert_eq(mx5_gid_set(n->dev, 1, 0, &g), 0, "%s", mx5_device_error(n->dev));
	memcpy(n->gid, g.gid, 16);
	memcpy(n->mac, g.mac, 6);
}

static inline void tp_nic_close(struct tp_nic *n)
{
	if (n->dev)
		mx5_device_close(n->dev);
	memset(n, 0, sizeof(*n));
}

static inline void tp_qp_create(struct tp_ep *e, struct tp_nic *n, enum mx5_qp_type t, uint32_t depth,
				struct mx5_srq *srq)
{
	struct mx5_qp_init_attr a = { .type = t, .send_cq = n->cq, .recv_cq = n->cq, .srq = srq,
				      .cap = { .max_send_wr = depth, .max_recv_wr = srq ? 0 : depth,
					       .max_send_sge = 4, .max_recv_sge = 4, .max_inline_data = 128 } };
	int rc = mx5_qp_create(n->pd, &a, &e->qp);

	cr_assert_eq(rc, 0, "%s", mx5_device_error(n->dev));
	e->nic = n;
	e->type = t;
	e->qpn = mx5_qp_num(e->qp);
	e->sq = mx5_qp_sq_state(e->qp);
	e->rq = mx5_qp_rq_state(e->qp);
}

struct tp_conn {
	uint8_t mtu;          /* IB encoding 1..5 */
	uint32_t sq_psn, rq_psn;
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint8_t rd_atomic;
	uint8_t sgid_index;           /* the source GID's index in this NIC's table (0: the default) */
	uint32_t qkey;
	bool no_responder_resources;  /* max_dest_rd_atomic 0 (READs and atomics refused) */
	unsigned access;              /* RC/UC qp_access_flags; 0: all the service allows */
};

/* RST -> INIT -> RTR -> RTS of e, connected to the remote QP rqpn on NIC ip (RC/UC), or
 * ready to send datagrams (UD). */
static inline void tp_qp_connect_to(struct tp_ep *e, uint32_t rip, uint32_t rqpn, const struct tp_conn *c)
{
	struct mx5_device *dev = e->nic->dev;
	struct mx5_qp_attr a;
	unsigned m;

	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_INIT;
	a.port_num = 1;
	a.pkey_index = 0;
	a.qkey = c->qkey;
	a.qp_access_flags = MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ |
			    MX5_ACCESS_REMOTE_ATOMIC;
	if (e->type == MX5_QPT_UC)
		a.qp_access_flags = MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE;
	if (c->access)
		a.qp_access_flags = c->access;
	m = MX5_QP_STATE | MX5_QP_PKEY_INDEX | MX5_QP_PORT |
	    (e->type == MX5_QPT_UD ? MX5_QP_QKEY : MX5_QP_ACCESS_FLAGS);
	cr_assert_eq(mx5_qp_modify(e->qp, &a, m), 0, "INIT: %s", mx5_device_error(dev));
	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_RTR;
	m = MX5_QP_STATE;
	if (e->type != MX5_QPT_UD) {
		a.path_mtu = c->mtu;
		a.dest_qp_num = rqpn;
		a.rq_psn = c->rq_psn;
		a.ah.sgid_index = c->sgid_index;
		a.ah.dgid[10] = 0xff;
		a.ah.dgid[11] = 0xff;
		a.ah.dgid[12] = (uint8_t)(rip >> 24);
		a.ah.dgid[13] = (uint8_t)(rip >> 16);
		a.ah.dgid[14] = (uint8_t)(rip >> 8);
		a.ah.dgid[15] = (uint8_t)rip;
		emu_roce_mac_from_ipv4(rip, a.ah.dmac);
		a.ah.hop_limit = 64;
		a.ah.port_num = 1;
		m |= MX5_QP_AV | MX5_QP_PATH_MTU | MX5_QP_DEST_QPN | MX5_QP_RQ_PSN;
		if (e->type == MX5_QPT_RC) {
			a.max_dest_rd_atomic = c->no_responder_resources ? 0 : c->rd_atomic ? c->rd_atomic : 4;
			a.min_rnr_timer = c->min_rnr_timer;
			m |= MX5_QP_MAX_DEST_RD_ATOMIC | MX5_QP_MIN_RNR_TIMER;
		}
	}
	cr_assert_eq(mx5_qp_modify(e->qp, &a, m), 0, "RTR: %s", mx5_device_error(dev));
	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_RTS;
	a.sq_psn = c->sq_psn;
	m = MX5_QP_STATE | MX5_QP_SQ_PSN;
	if (e->type == MX5_QPT_RC) {
		a.timeout = c->timeout;
		a.retry_cnt = c->retry_cnt;
		a.rnr_retry = c->rnr_retry;
		a.max_rd_atomic = c->rd_atomic ? c->rd_atomic : 4;
		m |= MX5_QP_TIMEOUT | MX5_QP_RETRY_CNT | MX5_QP_RNR_RETRY | MX5_QP_MAX_QP_RD_ATOMIC;
	}
	cr_assert_eq(mx5_qp_modify(e->qp, &a, m), 0, "RTS: %s", mx5_device_error(dev));
}

static inline void tp_connect(struct tp_ep *a, struct tp_ep *b, const struct tp_conn *c)
{
	struct tp_conn ca = *c, cb = *c;

	ca.sq_psn = c->sq_psn;
	ca.rq_psn = c->rq_psn;
	cb.sq_psn = c->rq_psn;
	cb.rq_psn = c->sq_psn;
	tp_qp_connect_to(a, b->nic->ip, b->qpn, &ca);
	tp_qp_connect_to(b, a->nic->ip, a->qpn, &cb);
}

static inline struct mx5_mr *tp_mr(struct tp_nic *n, void *buf, size_t len, unsigned access)
{
	struct mx5_mr *mr = NULL;
	int rc = mx5_mr_reg(n->pd, buf, len, access, &mr);

	cr_assert_eq(rc, 0, "MR: %s", mx5_device_error(n->dev));
	return mr;
}

static inline uint32_t tp_lkey(struct mx5_mr *mr)
{
	struct mx5_mr_info i;

	mx5_mr_query(mr, &i);
	return i.lkey;
}

static inline uint32_t tp_rkey(struct mx5_mr *mr)
{
	struct mx5_mr_info i;

	mx5_mr_query(mr, &i);
	return i.rkey;
}

static inline void *tp_alloc(size_t len)
{
	void *p = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(p, MAP_FAILED);
	return p;
}

/* The fixture most data-plane tests start from, kept in each test file's own statics:
 * NICs a and b, a QP on each, a buffer of len bytes on each NIC with its MR. */
struct tp_fixture {
	struct tp_nic *a, *b;
	struct tp_ep *qa, *qb;
	uint8_t **abuf, **bbuf;
	struct mx5_mr **amr, **bmr;
	size_t len;
};

/* Open both NICs (CQs of cqe entries); when c is given, create a QP of type t and depth
 * on each and connect them with c; allocate and register both buffers with acc. */
static inline void tp_fixture_open(const struct tp_fixture *f, const char *uri_a, const char *uri_b, uint32_t cqe,
				   enum mx5_qp_type t, uint32_t depth, unsigned acc, const struct tp_conn *c)
{
	tp_nic_open(f->a, uri_a, cqe);
	tp_nic_open(f->b, uri_b, cqe);
	if (c) {
		tp_qp_create(f->qa, f->a, t, depth, NULL);
		tp_qp_create(f->qb, f->b, t, depth, NULL);
		tp_connect(f->qa, f->qb, c);
	}
	*f->abuf = tp_alloc(f->len);
	*f->bbuf = tp_alloc(f->len);
	*f->amr = tp_mr(f->a, *f->abuf, f->len, acc);
	*f->bmr = tp_mr(f->b, *f->bbuf, f->len, acc);
}

/* Undo tp_fixture_open, also after a partial one (a test's .fini). */
static inline void tp_fixture_close(const struct tp_fixture *f)
{
	tp_nic_close(f->a);
	tp_nic_close(f->b);
	if (*f->abuf)
		munmap(*f->abuf, f->len);
	if (*f->bbuf)
		munmap(*f->bbuf, f->len);
	*f->abuf = *f->bbuf = NULL;
}

static inline void tp_fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;
	uint64_t x = 0x9e3779b97f4a7c15ull ^ seed;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)x;
	}
}

static inline int tp_post(struct tp_ep *e, enum ibv_wr_opcode op, uint64_t wr_id, void *addr, uint32_t len,
			  uint32_t lkey, uint64_t raddr, uint32_t rkey, unsigned flags)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.sg_list = &sge;
	wr.num_sge = len || (flags & IBV_SEND_INLINE) ? 1 : 0;
	wr.send_flags = flags;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htobe32((uint32_t)wr_id ^ 0x5a5a0000u);
	return mx5_post_send(e->sq, &wr, &bad);
}

static inline int tp_post_atomic(struct tp_ep *e, enum ibv_wr_opcode op, uint64_t wr_id, void *addr, uint32_t lkey,
				 uint64_t raddr, uint32_t rkey, uint64_t compare_add, uint64_t swap)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = 8, .lkey = lkey };
	struct ibv_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	return mx5_post_send(e->sq, &wr, &bad);
}

static inline int tp_post_recv(struct tp_ep *e, uint64_t wr_id, void *addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return mx5_post_recv(e->rq, &wr, &bad);
}

/* Poll one completion within ms milliseconds: 1, or 0 on timeout. */
static inline int tp_poll(struct tp_nic *n, struct ibv_wc *wc, unsigned ms)
{
	uint64_t end = tp_now_ms() + ms;

	do {
		int r = mx5_poll_cq(n->cqr, 1, wc);

		cr_assert_geq(r, 0, "poll_cq: %d", r);
		if (r == 1)
			return 1;
		sched_yield();
	} while (tp_now_ms() < end);
	return 0;
}

static char tp_what[128];   /* what the test is doing, for failure messages */

static inline void tp_expect(struct tp_nic *n, struct ibv_wc *wc, enum ibv_wc_status st, unsigned ms)
{
	if (!tp_poll(n, wc, ms)) {
		struct emu_tp_counters c;

		emu_tp_counters(n->emu, &c);
		cr_assert_fail("%s: no completion within %u ms (this NIC: tx %llu rx %llu timeouts %llu rtx %llu "
			       "rnr %llu naks_rcvd %llu/%llu/%llu/%llu drops psn %llu opseq %llu)",
			       tp_what, ms, (unsigned long long)c.tx_pkts, (unsigned long long)c.rx_pkts,
			       (unsigned long long)c.timeouts, (unsigned long long)c.retransmits,
			       (unsigned long long)c.rnr_naks_rcvd, (unsigned long long)c.naks_rcvd[0],
			       (unsigned long long)c.naks_rcvd[1], (unsigned long long)c.naks_rcvd[2],
			       (unsigned long long)c.naks_rcvd[3], (unsigned long long)c.drops[EMU_ROCE_DROP_PSN],
			       (unsigned long long)c.drops[EMU_ROCE_DROP_OPSEQ]);
	}
	cr_assert_eq(wc->status, st, "%s: status %d, vendor 0x%x, wr_id %llu, expected %d", tp_what, wc->status,
		     wc->vendor_err, (unsigned long long)wc->wr_id, st);
}

/* A packet forged with the wire layer's builder (emu_roce_forge; f may be NULL) and sent
 * from NIC `from`'s own address and socket to NIC `to`, as the connected peer would send
 * it: only what the caller set in h is wrong, if anything. */
static inline void tp_inject_forged(struct tp_nic *from, struct tp_nic *to, const struct emu_roce_hdrs *h,
				    const void *payload, size_t len, const struct emu_roce_forge *f)
{
	uint8_t pkt[EMU_ROCE_MAX_PKT];
	struct emu_roce_ip ip;
	int n;

	emu_roce_ip_init(&ip, from->ip, to->ip, EMU_ROCE_PORT, 0);
	n = emu_roce_forge(pkt, sizeof(pkt), &ip, h, payload, len, f);
	cr_assert_gt(n, 0, "forge: %d", n);
	cr_assert_eq(emu_tp_inject(from->emu, to->ip, EMU_ROCE_PORT, pkt, (size_t)n), 0);
}

static inline struct emu_tp_counters tp_ctr(struct tp_nic *n)
{
	struct emu_tp_counters c;

	emu_tp_counters(n->emu, &c);
	return c;
}

#endif
