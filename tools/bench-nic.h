/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Set-up shared by the measuring programs (tools/bench-pcie.c, tools/bench-e2e.c,
 * tools/bench-scale.c, tests/interop/wire_traffic.c): their command lines, emulated ConnectX NICs opened through the real driver
 * (hw/mlx5 over the "emu:" shim), an RC QP connected to a peer, MRs, and posting and
 * polling through the driver's data path (wqe.h / doorbell.h / poll.h) -- the same calls
 * libuverbs makes.  Programs, not library code: a failed step prints what failed (with
 * the driver's message) and exits 2.  Static functions: each program includes it once.
 */
#ifndef UVERBS_TOOLS_BENCH_NIC_H
#define UVERBS_TOOLS_BENCH_NIC_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "hw/emu/emu.h"
#include "hw/emu/roce_wire.h"
#include "hw/emu/transport.h"
#include "hw/mlx5/doorbell.h"
#include "hw/mlx5/mx5.h"
#include "hw/mlx5/poll.h"

struct bn_nic {
	struct mx5_device *dev;
	struct emu_dev *emu;
	struct mx5_pd *pd;
	struct mx5_cq *cq;
	struct mx5_cq_ring *cqr;
	uint32_t ip;              /* host order, 127.0.0.N */
};

struct bn_qp {
	struct bn_nic *nic;
	struct mx5_qp *qp;
	struct mx5_sq *sq;
	struct mx5_rq *rq;
	uint32_t qpn;
};

/* What one side tells the other to connect and to address its memory. */
struct bn_peer {
	uint32_t ip, qpn, psn, rkey;
	uint64_t addr;
};

static const char *bn_prog = "bench";
/* Local ACK timeout exponent (4.096 us x 2^n, IBTA 9.7.6.1.3): 14 is 67 ms. */
static uint8_t bn_ack_timeout = 14;

__attribute__((format(printf, 1, 2), noreturn)) static void bn_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", bn_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* The end of a program's option loop: for an unknown option or --help, the usage line
 * on stderr and the status for main to return (0 for 'h', else 2). */
static inline int bn_usage(int c, const char *usage)
{
	fprintf(stderr, "usage: %s\n", usage);
	return c == 'h' ? 0 : 2;
}

/* After the options (getopt's optind): these programs take no operands. */
static inline void bn_no_operands(int argc, char **argv)
{
	if (optind < argc)
		bn_die("unexpected argument '%s'", argv[optind]);
}

static inline uint64_t bn_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* BlueFlame policy the benchmarks open their devices with (mx5.h enum mx5_bf_policy;
 * uv_bench_pcie --bf). */
static unsigned bn_bf_policy = MX5_BF_PREFER;

static inline void bn_nic_open(struct bn_nic *n, const char *uri, uint32_t cqe)
{
	struct mx5_cq_attr ca = { .cqe = cqe };
	struct mx5_gid_entry g;
	struct mx5_open_attr oa = { .bf_policy = bn_bf_policy };
	uint8_t mac[6];

	memset(n, 0, sizeof(*n));
	if (mx5_device_open_attr(uri, &oa, &n->dev) != 0)
		bn_die("open %s: %s", uri, mx5_open_error());
	n->emu = emu_device_from_shim(mx5_device_shim(n->dev));
	if (!n->emu)
		bn_die("%s is not an emulated device (these figures come from its counters)", uri);
	n->ip = emu_ipv4(n->emu);
	if (mx5_pd_alloc(n->dev, &n->pd) != 0 || mx5_cq_create(n->dev, &ca, &n->cq) != 0)
		bn_die("PD/CQ: %s", mx5_device_error(n->dev));
	n->cqr = mx5_cq_state(n->cq);
	/* GID 0: the NIC's RoCE v2 address, MAC derived from it (emulated NICs) */
	emu_roce_mac_from_ipv4(n->ip, mac);
	mx5_gid_entry_ipv4(&g, n->ip, mac);
	if (mx5_gid_set(n->dev, 1, 0, &g) != 0)
		bn_die("GID: %s", mx5_device_error(n->dev));
}

static inline void bn_nic_close(struct bn_nic *n)
{
	if (n->dev)
		mx5_device_close(n->dev);
	memset(n, 0, sizeof(*n));
}

static inline void bn_qp_create(struct bn_qp *q, struct bn_nic *n, uint32_t depth)
{
	struct mx5_qp_init_attr a = { .type = MX5_QPT_RC, .send_cq = n->cq, .recv_cq = n->cq,
				      .cap = { .max_send_wr = depth, .max_recv_wr = depth, .max_send_sge = 1,
					       .max_recv_sge = 1, .max_inline_data = 64 } };

	memset(q, 0, sizeof(*q));
	if (mx5_qp_create(n->pd, &a, &q->qp) != 0)
		bn_die("QP: %s", mx5_device_error(n->dev));
	q->nic = n;
	q->qpn = mx5_qp_num(q->qp);
	q->sq = mx5_qp_sq_state(q->qp);
	q->rq = mx5_qp_rq_state(q->qp);
}

/* RST -> INIT -> RTR -> RTS, connected to the peer's QP; path MTU in the IB encoding
 * (3 = 1024, 5 = 4096); our send PSN is my_psn, the peer's is p->psn. */
static inline void bn_qp_connect(struct bn_qp *q, const struct bn_peer *p, uint32_t my_psn, uint8_t mtu)
{
	struct mx5_device *dev = q->nic->dev;
	struct mx5_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ |
			    MX5_ACCESS_REMOTE_ATOMIC;
	if (mx5_qp_modify(q->qp, &a, MX5_QP_STATE | MX5_QP_PKEY_INDEX | MX5_QP_PORT | MX5_QP_ACCESS_FLAGS))
		bn_die("INIT: %s", mx5_device_error(dev));
	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = p->qpn;
	a.rq_psn = p->psn;
	a.ah.dgid[10] = 0xff;
	a.ah.dgid[11] = 0xff;
	a.ah.dgid[12] = (uint8_t)(p->ip >> 24);
	a.ah.dgid[13] = (uint8_t)(p->ip >> 16);
	a.ah.dgid[14] = (uint8_t)(p->ip >> 8);
	a.ah.dgid[15] = (uint8_t)p->ip;
	emu_roce_mac_from_ipv4(p->ip, a.ah.dmac);
	a.ah.hop_limit = 64;
	a.ah.port_num = 1;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1;
	if (mx5_qp_modify(q->qp, &a, MX5_QP_STATE | MX5_QP_AV | MX5_QP_PATH_MTU | MX5_QP_DEST_QPN |
					     MX5_QP_RQ_PSN | MX5_QP_MAX_DEST_RD_ATOMIC | MX5_QP_MIN_RNR_TIMER))
		bn_die("RTR: %s", mx5_device_error(dev));
	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_RTS;
	a.sq_psn = my_psn;
	a.timeout = bn_ack_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	if (mx5_qp_modify(q->qp, &a, MX5_QP_STATE | MX5_QP_SQ_PSN | MX5_QP_TIMEOUT | MX5_QP_RETRY_CNT |
					     MX5_QP_RNR_RETRY | MX5_QP_MAX_QP_RD_ATOMIC))
		bn_die("RTS: %s", mx5_device_error(dev));
}

static inline void *bn_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		bn_die("mmap %zu bytes: %s", len, strerror(errno));
	memset(p, 0, len);
	return p;
}

static inline struct mx5_mr *bn_mr(struct bn_nic *n, void *buf, size_t len, uint32_t *lkey, uint32_t *rkey)
{
	struct mx5_mr *mr = NULL;
	struct mx5_mr_info i;

	if (mx5_mr_reg(n->pd, buf, len, MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ |
						MX5_ACCESS_REMOTE_ATOMIC, &mr) != 0)
		bn_die("MR of %zu bytes: %s", len, mx5_device_error(n->dev));
	mx5_mr_query(mr, &i);
	if (lkey)
		*lkey = i.lkey;
	if (rkey)
		*rkey = i.rkey;
	return mr;
}

/* The device bn_side_open opens (wire_traffic: one datagram per packet for its capture). */
static const char *bn_side_uri = "emu:";

/* One side of a run between two NICs (bench-pcie, wire_traffic): its NIC with a CQ of
 * cqe entries, an RC QP of depth, and a zeroed buffer of len bytes registered with
 * every access (lkey in *lkey).  *peer is what the other side connects to and
 * addresses: this side's IP, QPN, send PSN psn, rkey and buffer.  Returns the buffer. */
static inline uint8_t *bn_side_open(struct bn_nic *n, struct bn_qp *q, uint32_t cqe, uint32_t depth, size_t len,
				    uint32_t psn, uint32_t *lkey, struct bn_peer *peer)
{
	uint8_t *buf;
	uint32_t rkey;

	bn_nic_open(n, bn_side_uri, cqe);
	bn_qp_create(q, n, depth);
	buf = bn_alloc(len);
	bn_mr(n, buf, len, lkey, &rkey);
	*peer = (struct bn_peer){ .ip = n->ip, .qpn = q->qpn, .psn = psn, .rkey = rkey, .addr = (uintptr_t)buf };
	return buf;
}

/* A send WR on one SGE: what bn_post and bn_post_atomic share before their remote part. */
static inline void bn_send_wr_init(struct ibv_send_wr *wr, struct ibv_sge *sge, enum ibv_wr_opcode op,
				   uint64_t wr_id, unsigned flags)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = wr_id;
	wr->opcode = op;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->send_flags = flags;
}

/* One WR through mx5_post_send (the verbs post_send of libuverbs). */
static inline int bn_post(struct bn_qp *q, enum ibv_wr_opcode op, uint64_t wr_id, void *addr, uint32_t len,
			  uint32_t lkey, uint64_t raddr, uint32_t rkey, unsigned flags)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr;

	bn_send_wr_init(&wr, &sge, op, wr_id, flags);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return mx5_post_send(q->sq, &wr, NULL);
}

static inline int bn_post_atomic(struct bn_qp *q, enum ibv_wr_opcode op, uint64_t wr_id, void *addr, uint32_t lkey,
				 uint64_t raddr, uint32_t rkey, uint64_t compare_add, uint64_t swap)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = 8, .lkey = lkey };
	struct ibv_send_wr wr;

	bn_send_wr_init(&wr, &sge, op, wr_id, IBV_SEND_SIGNALED);
	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	return mx5_post_send(q->sq, &wr, NULL);
}

static inline int bn_post_recv(struct bn_qp *q, uint64_t wr_id, void *addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return mx5_post_recv(q->rq, &wr, NULL);
}

/* Busy-poll one completion for at most ms milliseconds; dies on timeout or on an error
 * status (what names the operation). */
static inline void bn_wait_cqe(struct bn_nic *n, struct ibv_wc *wc, unsigned ms, const char *what)
{
	uint64_t end = bn_now_ns() + (uint64_t)ms * 1000000u;

	for (;;) {
		int r = mx5_poll_cq(n->cqr, 1, wc);

		if (r < 0)
			bn_die("%s: poll_cq %d", what, r);
		if (r == 1)
			break;
		if (bn_now_ns() > end)
			bn_die("%s: no completion within %u ms", what, ms);
	}
	if (wc->status != IBV_WC_SUCCESS)
		bn_die("%s: completion status %d (vendor 0x%x)", what, wc->status, wc->vendor_err);
}

static inline void bn_ip_str(uint32_t ip, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

#endif
