/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uverbs example: RDMA between two emulated ConnectX NICs in one process, through the
 * standard verbs API, linked directly against libuverbs (no preload, no libibverbs).
 * Built from an installed uverbs:  cc pingpong.c $(pkg-config --cflags --libs uverbs)
 * or, with CMake, find_package(uverbs) and target_link_libraries(... uverbs::uverbs).
 *
 *   uverbs_pingpong [--ip-a 127.0.0.2] [--ip-b 127.0.0.3] [--iters N] [--size BYTES]
 *
 * NIC A and NIC B each get an RC QP; they are connected to each other (RoCE v2 over
 * UDP on loopback) and exchange N SEND/RECV round trips whose payloads are checked
 * byte by byte, then A does an RDMA WRITE into B's buffer, an RDMA READ back, a
 * fetch-and-add and a compare-and-swap on B's memory, each verified.  It prints the
 * round-trip latency (median, p99) and exits 0 only if every check passed.
 *
 * Without UVERBS_DEVICES in the environment, it asks for "emu:ip=A,emu:ip=B".
 */
#define _POSIX_C_SOURCE 200809L   /* setenv, clock_gettime */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <uverbs.h>

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *buf;             /* [0, size): send/recv; [size, 2 size): RDMA target */
	struct ibv_mr *mr;        /* of buf */
	uint64_t *word;           /* 8-byte atomic target */
	struct ibv_mr *wmr;       /* of word */
	union ibv_gid gid;
	enum ibv_mtu mtu;
};

static size_t size = 4096;

static int fail(const char *what)
{
	fprintf(stderr, "FAIL: %s: %s\n", what, strerror(errno));
	return -1;
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* One completion from cq, at most 5 s of polling; it must be a success. */
static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	double end = now_us() + 5e6;
	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);
		if (n < 0) {
			fprintf(stderr, "FAIL: %s: ibv_poll_cq %d\n", what, n);
			return -1;
		}
		if (n == 1)
			break;
		if (now_us() > end) {
			fprintf(stderr, "FAIL: %s: no completion in 5 s\n", what);
			return -1;
		}
	}
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "FAIL: %s: completion status %s\n", what, ibv_wc_status_str(wc->status));
		return -1;
	}
	return 0;
}

static int open_side(struct ibv_device *dev, struct side *s)
{
	struct ibv_port_attr port;

	s->ctx = ibv_open_device(dev);
	if (!s->ctx)
		return fail("ibv_open_device");
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		return fail("ibv_alloc_pd");
	s->buf = aligned_alloc(4096, 2 * size);
	s->word = aligned_alloc(64, 64);
	if (!s->buf || !s->word)
		return fail("memory");
	memset(s->buf, 0, 2 * size);
	*s->word = 0;
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_REMOTE_ATOMIC;
	s->mr = ibv_reg_mr(s->pd, s->buf, 2 * size, acc);
	s->wmr = ibv_reg_mr(s->pd, s->word, 64, acc);
	if (!s->mr || !s->wmr)
		return fail("ibv_reg_mr");
	s->cq = ibv_create_cq(s->ctx, 64, NULL, NULL, 0);
	if (!s->cq)
		return fail("ibv_create_cq");
	struct ibv_qp_init_attr ia = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};
	s->qp = ibv_create_qp(s->pd, &ia);
	if (!s->qp)
		return fail("ibv_create_qp");
	if (ibv_query_port(s->ctx, 1, &port) || port.state != IBV_PORT_ACTIVE)
		return fail("port 1 not active");
	s->mtu = port.active_mtu;
	if (ibv_query_gid(s->ctx, 1, 0, &s->gid))
		return fail("ibv_query_gid");
	return 0;
}

/* RESET -> INIT -> RTR -> RTS towards the peer (IBTA 10.3; ibv_modify_qp(3) table). */
static int connect_qp(struct side *s, const struct side *peer)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_ATOMIC };
	if ((errno = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					  IBV_QP_ACCESS_FLAGS)))
		return fail("modify to INIT");
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = s->mtu,
		.dest_qp_num = peer->qp->qp_num,
		.rq_psn = 0x1234,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .grh = { .dgid = peer->gid, .sgid_index = 0, .hop_limit = 1 },
			     .port_num = 1 },
	};
	if ((errno = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)))
		return fail("modify to RTR");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 0x1234, .timeout = 14, .retry_cnt = 7,
				  .rnr_retry = 7, .max_rd_atomic = 1 };
	if ((errno = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
					  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					  IBV_QP_MAX_QP_RD_ATOMIC)))
		return fail("modify to RTS");
	return 0;
}

static int post_recv(struct side *s)
{
	struct ibv_sge sg = { .addr = (uintptr_t)s->buf, .length = (uint32_t)size, .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 2, .sg_list = &sg, .num_sge = 1 }, *bad;
	if ((errno = ibv_post_recv(s->qp, &wr, &bad)))
		return fail("ibv_post_recv");
	return 0;
}

static int post(struct side *s, enum ibv_wr_opcode op, uint8_t *laddr, uint32_t len, uint32_t lkey,
		uint64_t raddr, uint32_t rkey, uint64_t add, uint64_t swap)
{
	struct ibv_sge sg = { .addr = (uintptr_t)laddr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sg, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if ((errno = ibv_post_send(s->qp, &wr, &bad)))
		return fail("ibv_post_send");
	return 0;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

static int check(const uint8_t *p, size_t n, unsigned seed, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (uint8_t)(seed * 131 + i * 7 + (i >> 8))) {
			fprintf(stderr, "FAIL: %s: byte %zu is 0x%02x\n", what, i, p[i]);
			return -1;
		}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *ip_a = "127.0.0.2", *ip_b = "127.0.0.3";
	int iters = 1000;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--ip-a")) ip_a = argv[i + 1];
		else if (!strcmp(argv[i], "--ip-b")) ip_b = argv[i + 1];
		else if (!strcmp(argv[i], "--iters")) iters = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--size")) size = strtoul(argv[i + 1], NULL, 0);
		else {
			fprintf(stderr, "usage: %s [--ip-a A] [--ip-b B] [--iters N] [--size BYTES]\n", argv[0]);
			return 2;
		}
	}
	if (iters < 1 || size < 1 || size > (1u << 20)) {
		fprintf(stderr, "FAIL: --iters >= 1 and 1 <= --size <= 1 MiB\n");
		return 2;
	}
	char devs[128];
	snprintf(devs, sizeof(devs), UVERBS_URI_EMU "ip=%s," UVERBS_URI_EMU "ip=%s", ip_a, ip_b);
	setenv(UVERBS_ENV_DEVICES, devs, 0);   /* unless the user chose devices */

	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list || n < 2) {
		fprintf(stderr, "FAIL: need two devices, have %d\n", n);
		return 1;
	}
	struct side a = { 0 }, b = { 0 };
	struct ibv_wc wc;
	if (open_side(list[0], &a) || open_side(list[1], &b) || connect_qp(&a, &b) || connect_qp(&b, &a))
		return 1;
	printf("%s (%s) <-> %s (%s), RC QPs 0x%x <-> 0x%x, MTU %d\n", ibv_get_device_name(list[0]), ip_a,
	       ibv_get_device_name(list[1]), ip_b, a.qp->qp_num, b.qp->qp_num, 128 << a.mtu);

	/* SEND/RECV ping-pong, every payload checked */
	double *rtt = calloc((size_t)iters, sizeof(double));
	if (!rtt)
		return 1;
	for (int i = 0; i < iters; i++) {
		double t0 = now_us();
		if (post_recv(&b) || post_recv(&a))
			return 1;
		fill(a.buf + size, size, (unsigned)i);
		if (post(&a, IBV_WR_SEND, a.buf + size, (uint32_t)size, a.mr->lkey, 0, 0, 0, 0))
			return 1;
		/* B: the receive (and maybe nothing else yet) */
		if (wait_wc(b.cq, &wc, "B receive") || wc.opcode != IBV_WC_RECV || wc.byte_len != size ||
		    check(b.buf, size, (unsigned)i, "ping payload"))
			return 1;
		memcpy(b.buf + size, b.buf, size);
		if (post(&b, IBV_WR_SEND, b.buf + size, (uint32_t)size, b.mr->lkey, 0, 0, 0, 0))
			return 1;
		/* A: its send completion and the pong, in either order */
		int got_recv = 0, got_send = 0;
		while (!got_recv || !got_send) {
			if (wait_wc(a.cq, &wc, "A completion"))
				return 1;
			if (wc.opcode == IBV_WC_RECV)
				got_recv = 1;
			else
				got_send = 1;
		}
		if (wait_wc(b.cq, &wc, "B send completion") || check(a.buf, size, (unsigned)i, "pong payload"))
			return 1;
		rtt[i] = now_us() - t0;
	}
	qsort(rtt, (size_t)iters, sizeof(double), cmp_double);

	/* RDMA WRITE A -> B, then READ it back into A's receive half */
	fill(a.buf + size, size, 0xabc);
	memset(b.buf + size, 0, size);
	if (post(&a, IBV_WR_RDMA_WRITE, a.buf + size, (uint32_t)size, a.mr->lkey,
		 (uintptr_t)(b.buf + size), b.mr->rkey, 0, 0) ||
	    wait_wc(a.cq, &wc, "RDMA WRITE") || check(b.buf + size, size, 0xabc, "RDMA WRITE data"))
		return 1;
	fill(b.buf + size, size, 0xdef);
	memset(a.buf, 0, size);
	if (post(&a, IBV_WR_RDMA_READ, a.buf, (uint32_t)size, a.mr->lkey, (uintptr_t)(b.buf + size),
		 b.mr->rkey, 0, 0) ||
	    wait_wc(a.cq, &wc, "RDMA READ") || wc.opcode != IBV_WC_RDMA_READ ||
	    check(a.buf, size, 0xdef, "RDMA READ data"))
		return 1;

	/* Atomics on B's word: fetch-add returns the old value, compare-swap swaps on a
	 * match.  The operands repeat one byte and never carry between bytes, so the checks
	 * hold whichever byte order the device applies to memory: ConnectX atomics work on
	 * big-endian memory unless the driver selects host order at bring-up
	 * (atomic_caps.atomic_req_8B_endianness_mode). */
	const uint64_t ones = 0x0101010101010101ull;
	*b.word = 0x28 * ones;
	if (post(&a, IBV_WR_ATOMIC_FETCH_AND_ADD, (uint8_t *)a.word, 8, a.wmr->lkey, (uintptr_t)b.word,
		 b.wmr->rkey, 0x02 * ones, 0) || wait_wc(a.cq, &wc, "fetch-add"))
		return 1;
	if (*a.word != 0x28 * ones || *b.word != 0x2a * ones) {
		fprintf(stderr, "FAIL: fetch-add: old 0x%llx (want 0x28..28), new 0x%llx (want 0x2a..2a)\n",
			(unsigned long long)*a.word, (unsigned long long)*b.word);
		return 1;
	}
	if (post(&a, IBV_WR_ATOMIC_CMP_AND_SWP, (uint8_t *)a.word, 8, a.wmr->lkey, (uintptr_t)b.word,
		 b.wmr->rkey, 0x2a * ones, 0x07 * ones) || wait_wc(a.cq, &wc, "compare-swap"))
		return 1;
	if (*a.word != 0x2a * ones || *b.word != 0x07 * ones) {
		fprintf(stderr, "FAIL: compare-swap: old 0x%llx (want 0x2a..2a), new 0x%llx (want 0x07..07)\n",
			(unsigned long long)*a.word, (unsigned long long)*b.word);
		return 1;
	}

	printf("round trip (send/recv %zu B): median %.1f us, p99 %.1f us, min %.1f us over %d\n", size,
	       rtt[iters / 2], rtt[(size_t)((iters - 1) * 0.99)], rtt[0], iters);
	printf("verified: send/recv %d x %zu B, write %zu B, read %zu B, fetch-add, compare-swap\n", iters,
	       size, size, size);

	free(rtt);
	struct side *sides[2] = { &a, &b };
	for (int i = 0; i < 2; i++) {
		struct side *s = sides[i];
		if (ibv_destroy_qp(s->qp) || ibv_destroy_cq(s->cq) || ibv_dereg_mr(s->mr) ||
		    ibv_dereg_mr(s->wmr) || ibv_dealloc_pd(s->pd) || ibv_close_device(s->ctx)) {
			fprintf(stderr, "FAIL: teardown\n");
			return 1;
		}
		free(s->buf);
		free(s->word);
	}
	ibv_free_device_list(list);
	return 0;
}
