/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Two emulated NICs in two processes (fork before either device exists), talking RoCE v2
 * over loopback UDP exactly as in one process.  A socketpair is the side channel for
 * QPN, PSN, rkey and address, and for the target's verdict on every SEND it received.
 * Every RC opcode at sizes 0, 1, MTU-1, MTU, MTU+1, 64 KiB and 1 MiB, MTU 1024 and 4096:
 * SENDs are checked by the target (xxHash of the deterministic pattern), WRITEs by
 * reading the bytes back, READs against the target's pattern, atomics by value. */
#include "tp_pair.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define BIG (1u << 20)
#define REGION (BIG + 4096)
/* target memory: [0] receive buffer, [1] WRITE target, [2] READ source, then 8-byte counter */
#define TLEN (3u * REGION + 4096)

struct hello {
	uint32_t ip;
	uint32_t qpn[2];
	uint32_t rkey;
	uint64_t addr;
};

static int xread(int fd, void *p, size_t n)
{
	uint8_t *b = p;

	while (n) {
		ssize_t r = read(fd, b, n);

		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

static int xwrite(int fd, const void *p, size_t n)
{
	return write(fd, p, n) == (ssize_t)n ? 0 : -1;
}

static const uint8_t mtus[2] = { 3, 5 };

/* The target process: no criterion asserts here, an exit status instead. */
static int target(int fd)
{
	struct tp_nic n;
	struct tp_ep q[2];
	struct mx5_mr *mr;
	struct hello me, peer;
	uint8_t *mem = tp_alloc(TLEN), *chk = tp_alloc(REGION);
	unsigned acc = MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ |
		       MX5_ACCESS_REMOTE_ATOMIC;
	int bad = 0;

	memset(&n, 0, sizeof(n));
	tp_nic_open(&n, "emu:", 1024);
	for (int i = 0; i < 2; i++)
		tp_qp_create(&q[i], &n, MX5_QPT_RC, 64, NULL);
	mr = tp_mr(&n, mem, TLEN, acc);
	tp_fill(mem + 2 * REGION, REGION, 999);
	me.ip = n.ip;
	me.qpn[0] = q[0].qpn;
	me.qpn[1] = q[1].qpn;
	me.rkey = tp_rkey(mr);
	me.addr = (uintptr_t)mem;
	if (xwrite(fd, &me, sizeof(me)) || xread(fd, &peer, sizeof(peer)))
		return 2;
	for (int i = 0; i < 2; i++) {
		struct tp_conn c = { .mtu = mtus[i], .sq_psn = 0x800000u * (uint32_t)i + 7, .rq_psn = 0xfffffa,
				     .timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1 };

		tp_qp_connect_to(&q[i], peer.ip, peer.qpn[i], &c);
		tp_post_recv(&q[i], 0, mem, REGION, tp_lkey(mr));
	}
	if (xwrite(fd, "R", 1))
		return 2;
	/* serve: report on every receive until the driver process says stop */
	for (;;) {
		struct { uint32_t len, seed, qp, op; } ask;
		struct ibv_wc wc;
		uint8_t verdict = 1;

		if (xread(fd, &ask, sizeof(ask)))
			return 2;
		if (ask.op == 0)
			break;
		if (!tp_poll(&n, &wc, 10000) || wc.status != IBV_WC_SUCCESS) {
			verdict = 0;
		} else if (ask.op == 1) {       /* SEND: the pattern, all of it */
			tp_fill(chk, ask.len, ask.seed);
			if (wc.byte_len != ask.len || XXH64(mem, ask.len, 0) != XXH64(chk, ask.len, 0))
				verdict = 0;
		} else if (ask.op == 2) {       /* WRITE with immediate: the immediate */
			if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || wc.imm_data != htobe32(ask.seed ^ 0x5a5a0000u))
				verdict = 0;
		}
		if (!verdict)
			bad++;
		tp_post_recv(&q[ask.qp], 0, mem, REGION, tp_lkey(mr));
		if (xwrite(fd, &verdict, 1))
			return 2;
	}
	tp_nic_close(&n);
	return bad ? 1 : 0;
}

Test(two_procs, every_opcode_and_size_between_two_processes, .timeout = 240)
{
	int sv[2];
	pid_t pid;
	struct tp_nic n;
	struct tp_ep q[2];
	struct hello me, peer;
	uint8_t *mem, *back, ready;
	struct mx5_mr *mr;
	struct ibv_wc wc;
	unsigned acc = MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ |
		       MX5_ACCESS_REMOTE_ATOMIC;
	uint32_t seed = 1;
	int status;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(sv[0]);
		_exit(target(sv[1]));
	}
	close(sv[1]);
	memset(&n, 0, sizeof(n));
	tp_nic_open(&n, "emu:", 1024);
	for (int i = 0; i < 2; i++)
		tp_qp_create(&q[i], &n, MX5_QPT_RC, 64, NULL);
	mem = tp_alloc(REGION);
	back = tp_alloc(REGION);
	mr = tp_mr(&n, mem, REGION, acc);
	cr_assert_eq(xread(sv[0], &peer, sizeof(peer)), 0, "target process did not start");
	me.ip = n.ip;
	me.qpn[0] = q[0].qpn;
	me.qpn[1] = q[1].qpn;
	me.rkey = tp_rkey(mr);
	me.addr = (uintptr_t)mem;
	cr_assert_eq(xwrite(sv[0], &me, sizeof(me)), 0);
	cr_assert_neq(peer.ip, n.ip, "two processes must claim different addresses");
	for (int i = 0; i < 2; i++) {
		struct tp_conn c = { .mtu = mtus[i], .sq_psn = 0xfffffa, .rq_psn = 0x800000u * (uint32_t)i + 7,
				     .timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1 };

		tp_qp_connect_to(&q[i], peer.ip, peer.qpn[i], &c);
	}
	cr_assert_eq(xread(sv[0], &ready, 1), 0);
	for (int m = 0; m < 2; m++) {
		uint32_t mtu = 128u << mtus[m];
		uint32_t sizes[7] = { 0, 1, mtu - 1, mtu, mtu + 1, 64u << 10, BIG };
		struct mx5_mr *bmr = NULL;
		uint32_t back_lkey;

		cr_assert_eq(mx5_mr_reg(n.pd, back, REGION, acc, &bmr), 0);
		back_lkey = tp_lkey(bmr);
		for (int s = 0; s < 7; s++) {
			uint32_t len = sizes[s];
			struct { uint32_t len, seed, qp, op; } ask = { len, seed, (uint32_t)m, 1 };
			uint8_t verdict = 0;

			snprintf(tp_what, sizeof(tp_what), "MTU %u size %u", mtu, len);
			/* SEND, judged by the target */
			tp_fill(mem, len, seed);
			cr_assert_eq(tp_post(&q[m], IBV_WR_SEND, seed, mem, len, tp_lkey(mr), 0, 0, IBV_SEND_SIGNALED), 0);
			tp_expect(&n, &wc, IBV_WC_SUCCESS, 10000);
			cr_assert_eq(xwrite(sv[0], &ask, sizeof(ask)), 0);
			cr_assert_eq(xread(sv[0], &verdict, 1), 0);
			cr_assert_eq(verdict, 1, "%s: SEND data wrong at the target", tp_what);
			seed++;
			/* WRITE with immediate, then READ it back */
			tp_fill(mem, len, seed);
			cr_assert_eq(tp_post(&q[m], IBV_WR_RDMA_WRITE_WITH_IMM, seed, mem, len, tp_lkey(mr),
					     peer.addr + REGION, peer.rkey, IBV_SEND_SIGNALED), 0);
			tp_expect(&n, &wc, IBV_WC_SUCCESS, 10000);
			ask.seed = seed;
			ask.op = 2;
			cr_assert_eq(xwrite(sv[0], &ask, sizeof(ask)), 0);
			cr_assert_eq(xread(sv[0], &verdict, 1), 0);
			cr_assert_eq(verdict, 1, "%s: WRITE_IMM not seen at the target", tp_what);
			memset(back, 0, len + 1);
			cr_assert_eq(tp_post(&q[m], IBV_WR_RDMA_READ, seed, back, len, back_lkey, peer.addr + REGION,
					     peer.rkey, IBV_SEND_SIGNALED), 0);
			tp_expect(&n, &wc, IBV_WC_SUCCESS, 10000);
			cr_assert_eq(XXH64(back, len, 0), XXH64(mem, len, 0), "%s: WRITE then READ differs", tp_what);
			seed++;
			/* READ of the target's own pattern */
			cr_assert_eq(tp_post(&q[m], IBV_WR_RDMA_READ, seed, back, len, back_lkey, peer.addr + 2 * REGION,
					     peer.rkey, IBV_SEND_SIGNALED), 0);
			tp_expect(&n, &wc, IBV_WC_SUCCESS, 10000);
			tp_fill(mem, REGION, 999);
			cr_assert_eq(XXH64(back, len, 0), XXH64(mem, len, 0), "%s: READ differs", tp_what);
			seed++;
		}
		/* atomics on the target's counter (host order in memory: mode 1) */
		uint64_t *res = (uint64_t *)back;
		uint64_t ctr_addr = peer.addr + 3 * REGION;
		cr_assert_eq(tp_post_atomic(&q[m], IBV_WR_ATOMIC_CMP_AND_SWP, 1, res, back_lkey, ctr_addr, peer.rkey, 0,
					    100), 0);
		tp_expect(&n, &wc, IBV_WC_SUCCESS, 5000);
		cr_assert_eq(*res, m == 0 ? 0 : 142);
		cr_assert_eq(tp_post_atomic(&q[m], IBV_WR_ATOMIC_FETCH_AND_ADD, 2, res, back_lkey, ctr_addr, peer.rkey, 42,
					    0), 0);
		tp_expect(&n, &wc, IBV_WC_SUCCESS, 5000);
		cr_assert_eq(*res, m == 0 ? 100 : 142);
		mx5_mr_dereg(bmr);
	}
	{
		struct { uint32_t len, seed, qp, op; } stop = { 0, 0, 0, 0 };

		cr_assert_eq(xwrite(sv[0], &stop, sizeof(stop)), 0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "target process status 0x%x", status);
	tp_nic_close(&n);
	close(sv[0]);
}
