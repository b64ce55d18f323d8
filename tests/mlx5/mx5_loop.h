/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Test support for tests/mlx5: one emulated NIC opened through the driver, with its own
 * RoCE v2 address in GID 0, and RC QPs connected to QPs of the same NIC (loopback over
 * its UDP socket) or to a QPN nobody has.  Static functions: include once per test.
 * The state is in the caller's globals `dev`, `emu` and `pd`. */
#ifndef UVERBS_TESTS_MLX5_MX5_LOOP_H
#define UVERBS_TESTS_MLX5_MX5_LOOP_H

#include <criterion/criterion.h>
#include <string.h>

#include "hw/emu/emu.h"
#include "hw/emu/roce_wire.h"
#include "hw/mlx5/doorbell.h"
#include "hw/mlx5/mx5.h"
#include "hw/mlx5/poll.h"

static struct mx5_device *dev;
static struct emu_dev *emu;
static struct mx5_pd *pd;

/* A QPN no QP of this NIC has: packets to it are dropped, so nothing is ever answered. */
#define LOOP_NOBODY_QPN 0xabcdeu

static inline void loop_open(const char *uri)
{
	int rc = mx5_device_open(uri, &dev);
	cr_assert_eq(rc, 0, "open %s: %s", uri, mx5_open_error());
	emu = emu_device_from_shim(mx5_device_shim(dev));
	cr_assert_not_null(emu);
	cr_assert_eq(mx5_pd_alloc(dev, &pd), 0, "%s", mx5_device_error(dev));
	/* GID 0: the NIC's own RoCE v2 address */
	uint32_t ip = emu_ipv4(emu);
	struct mx5_gid_entry g;
	uint8_t mac[6];
	emu_roce_mac_from_ipv4(ip, mac);
	mx5_gid_entry_ipv4(&g, ip, mac);
	cr_assert_eq(mx5_gid_set(dev, 1, 0, &g), 0, "%s", mx5_device_error(dev));
}

static inline void loop_close(void)
{
	if (dev)
		mx5_device_close(dev);
	dev = NULL;
	emu = NULL;
	pd = NULL;
}

static inline struct mx5_cq *loop_cq(uint32_t depth, void (*comp_fn)(void *, struct mx5_cq *))
{
	struct mx5_cq *cq;
	struct mx5_cq_attr a = { .cqe = depth, .comp_fn = comp_fn };
	cr_assert_eq(mx5_cq_create(dev, &a, &cq), 0, "%s", mx5_device_error(dev));
	return cq;
}

static inline struct mx5_qp *loop_qp(struct mx5_cq *scq, struct mx5_cq *rcq, struct mx5_srq *srq,
			      uint32_t depth)
{
	struct mx5_qp_init_attr a = { .type = MX5_QPT_RC, .send_cq = scq, .recv_cq = rcq,
				      .srq = srq,
				      .cap = { .max_send_wr = depth, .max_recv_wr = srq ? 0 : depth,
					       .max_send_sge = 2, .max_recv_sge = 2,
					       .max_inline_data = 64 } };
	struct mx5_qp *qp = NULL;
	cr_assert_eq(mx5_qp_create(pd, &a, &qp), 0, "%s", mx5_device_error(dev));
	return qp;
}

/* RST -> INIT -> RTR -> RTS, connected to rqpn on this NIC's own address.  ACK timeout
 * 4.096 us x 2^20 (about 4 s): nothing times out while a test runs. */
static inline void loop_connect(struct mx5_qp *qp, uint32_t rqpn)
{
	struct mx5_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ;
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_STATE | MX5_QP_PKEY_INDEX | MX5_QP_PORT |
				   MX5_QP_ACCESS_FLAGS), 0, "INIT: %s", mx5_device_error(dev));
	struct mx5_gid_entry g;
	cr_assert_eq(mx5_gid_get(dev, 1, 0, &g), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_RTR;
	a.path_mtu = 3;
	a.dest_qp_num = rqpn;
	a.rq_psn = 0x100;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	memcpy(a.ah.dgid, g.gid, 16);
	memcpy(a.ah.dmac, g.mac, 6);
	a.ah.hop_limit = 64;
	a.ah.port_num = 1;
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_RTR_RC), 0, "RTR: %s", mx5_device_error(dev));
	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_RTS;
	a.sq_psn = 0x100;
	a.timeout = 20;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_RTS_RC), 0, "RTS: %s", mx5_device_error(dev));
}

static inline uint32_t loop_lkey(struct mx5_mr *mr)
{
	struct mx5_mr_info i;
	mx5_mr_query(mr, &i);
	return i.lkey;
}

/* One signalled RDMA WRITE (or READ) of len bytes from laddr to raddr. */
static inline void loop_post_rdma(struct mx5_qp *qp, enum ibv_wr_opcode op, uint64_t id, void *laddr,
			   uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey, int flags)
{
	struct ibv_sge sge = { .addr = (uintptr_t)laddr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = (unsigned)flags };
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	struct ibv_send_wr *bad = NULL;
	cr_assert_eq(mx5_post_send(mx5_qp_sq_state(qp), &wr, &bad), 0, "post_send %llu",
		     (unsigned long long)id);
}

/* Poll one completion, bounded by ms milliseconds. */
static inline void loop_wait(struct mx5_cq *cq, struct ibv_wc *wc, unsigned ms)
{
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = mx5_poll_cq(mx5_cq_state(cq), 1, wc);
		cr_assert_geq(n, 0);
		if (n)
			return;
		clock_gettime(CLOCK_MONOTONIC, &now);
		cr_assert_lt((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000,
			     (long)ms, "no completion within %u ms", ms);
		struct timespec ts = { 0, 100000 };
		nanosleep(&ts, NULL);
	}
}

#endif
