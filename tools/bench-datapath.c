/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uv_bench_datapath: software cost of the data path (docs/benchmarks.md), printed, never
 * asserted.  Everything runs over plain memory: SQ/CQ rings, doorbell records and a
 * "BAR" buffer without a hook, so what is measured is the driver's own work (WQE build,
 * doorbell record, BlueFlame copy with its fences; CQE decode), not a device.
 *
 *   uv_bench_datapath [--iters N] [--bf prefer|inline|off] [--only FUNC --qps N [--locks]]
 *
 * Each measured function takes the queue's lock around the inline builder or poller,
 * as the verbs entry points do (uverbs/qp.c uv_post_send_op, uverbs/cq.c
 * uv_poll_cq_op): with --locks a real one (pthread spinlock on Linux), without it the
 * single-thread hint's (plat_spin_init single = 1: one flag test each way).  The
 * default run prints both.
 * Default: every operation at 1 and 1,024 QPs (round-robin), ns/op from
 * clock_gettime(CLOCK_MONOTONIC) around batches (the untimed part of each batch resets
 * the rings: completes the posted WQEs, or has the "device" write the next lap of CQEs).
 * --only runs one measured function exactly --iters times at --qps QPs and prints
 * nothing else; tools/bench-datapath-callgrind uses it to count instructions per call
 * with valgrind --tool=callgrind --toggle-collect=FUNC.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hw/mlx5/cq.h"
#include "hw/mlx5/doorbell.h"
#include "hw/mlx5/mx5.h"
#include "hw/mlx5/poll.h"
#include "hw/mlx5/sq.h"
#include "hw/mlx5/wqe.h"
#include "tools/common/parse.h"

#define SQ_BBS 64u
#define CQ_N 64u
#define BAR_LEN (16u * 4096u)

struct qp {
	struct mx5_sq sq;
	struct mx5_cq_ring cq;
	struct mx5_wq_table *tab;
	struct mx5_wq_ref ref;
	uint8_t *sq_buf, *cq_buf;
	uint64_t wrid[SQ_BBS];
	uint32_t next[SQ_BBS];
	uint8_t sq_dbrec[8], cq_dbrec[8];
	uint32_t produced;
};

static struct shim_bar bar;
static struct qp *qps;
static unsigned nqps;
static uint8_t payload[4096] __attribute__((aligned(64)));
static uint64_t remote[512];
static int use_locks;   /* --locks: the queues' locks are real (else single-thread hint) */
/* --bf prefer|inline|off: the BlueFlame policy (hw/mlx5/mx5.h enum mx5_bf_policy);
 * prefer (rdma-core's default) unless told */
static int bf_policy;

/* ---- the measured functions: not inlined, distinct, so callgrind can attribute ---- */
/* noipa is GCC's (no inlining, cloning or interprocedural propagation); clang has no
 * such attribute, and noinline on an external function is the nearest it offers. */
#if defined(__clang__)
#define BENCH_NOIPA __attribute__((noinline))
#else
#define BENCH_NOIPA __attribute__((noipa))
#endif

/* What uverbs/qp.c and uverbs/cq.c call. */
static inline int post_locked(struct mx5_sq *sq, struct ibv_send_wr *wr)
{
	return mx5_post_send_mt(sq, wr, NULL);
}

static inline int poll_locked(struct mx5_cq_ring *cq, struct ibv_wc *wc)
{
	return mx5_poll_cq_mt(cq, 1, wc);
}

BENCH_NOIPA int bench_post_write_inline8(struct mx5_sq *sq, struct ibv_send_wr *wr)
{
	return post_locked(sq, wr);
}

BENCH_NOIPA int bench_post_write_4k(struct mx5_sq *sq, struct ibv_send_wr *wr)
{
	return post_locked(sq, wr);
}

BENCH_NOIPA int bench_post_read(struct mx5_sq *sq, struct ibv_send_wr *wr)
{
	return post_locked(sq, wr);
}

BENCH_NOIPA int bench_poll_one(struct mx5_cq_ring *cq, struct ibv_wc *wc)
{
	return poll_locked(cq, wc);
}

BENCH_NOIPA int bench_poll_empty(struct mx5_cq_ring *cq, struct ibv_wc *wc)
{
	return poll_locked(cq, wc);
}

/* ---- set-up ---- */

static void *xalloc(size_t len)
{
	void *p = NULL;
	if (posix_memalign(&p, 4096, len) != 0) {
		fprintf(stderr, "uv_bench_datapath: out of memory\n");
		exit(2);
	}
	memset(p, 0, len);
	return p;
}

static void setup(unsigned n)
{
	static struct mx5_wq_table tab;   /* one device-wide QPN table, as the driver has */

	bar.base = xalloc(BAR_LEN);
	bar.len = BAR_LEN;
	bar.wc_base = NULL;
	bar.hook = NULL;
	nqps = n;
	qps = xalloc(sizeof(*qps) * n);
	for (unsigned i = 0; i < n; i++) {
		struct qp *q = &qps[i];
		struct mx5_sq_attr a;

		memset(&a, 0, sizeof(a));
		q->sq_buf = xalloc(SQ_BBS * MX5_SEND_WQE_BB);
		q->cq_buf = xalloc(CQ_N * MX5_CQE_SIZE);
		a.buf = q->sq_buf;
		a.wqe_cnt = SQ_BBS;
		a.qpn = 0x100 + i;
		a.max_inline = 220;
		a.max_sge = 4;
		a.qp_type = IBV_QPT_RC;
		a.wrid = q->wrid;
		a.wqe_next = q->next;
		a.dbrec = q->sq_dbrec;
		a.bar = &bar;
		/* QPs share 16 UAR pages, BlueFlame register at 0x800 of each (PRM "UAR") */
		a.bf_off = (uint64_t)(i % 16) * 4096 + 0x800;
		a.bf_size = bf_policy == MX5_BF_OFF ? 0 : 256;
		a.bf_inline_only = bf_policy == MX5_BF_INLINE_ONLY;
		if (mx5_sq_init(&q->sq, &a) != 0) {
			fprintf(stderr, "uv_bench_datapath: mx5_sq_init failed\n");
			exit(2);
		}
		plat_spin_init(&q->sq.lock, !use_locks);
		plat_spin_init(&q->cq.lock, !use_locks);
		q->ref.sq = &q->sq;
		if (mx5_wq_table_set(&tab, a.qpn, &q->ref) != 0 ||
		    mx5_cq_ring_init(&q->cq, q->cq_buf, CQ_N, 0x40 + i, q->cq_dbrec, &bar,
				     (uint64_t)(i % 16) * 4096 + PRM_UAR_CQ_DOORBELL, &tab) != 0) {
			fprintf(stderr, "uv_bench_datapath: CQ set-up failed\n");
			exit(2);
		}
	}
}

/* The "device": write the next lap of CQ_N requester CQEs into a CQ. */
static void device_fill_cq(struct qp *q)
{
	for (unsigned k = 0; k < CQ_N; k++) {
		uint8_t *c = q->cq.buf + (size_t)(q->produced % CQ_N) * MX5_CQE_SIZE;

		memset(c, 0, MX5_CQE_SIZE);
		PRM_SET(cqe64, c, s_wqe_opcode, PRM_WQE_OP_RDMA_WRITE);
		PRM_SET(cqe64, c, qpn, q->sq.qpn);
		PRM_SET(cqe64, c, wqe_counter, k % SQ_BBS);
		PRM_SET(cqe64, c, opcode, PRM_CQE_REQ);
		PRM_SET(cqe64, c, owner, (q->produced / CQ_N) & 1);
		q->produced++;
	}
}

enum kind { POST_INLINE8, POST_WRITE4K, POST_READ, POLL_ONE, POLL_EMPTY, NKINDS };
static const char *const kind_fn[NKINDS] = { "bench_post_write_inline8", "bench_post_write_4k",
	"bench_post_read", "bench_poll_one", "bench_poll_empty" };
static const char *const kind_name[NKINDS] = { "post_send 8 B inline RDMA WRITE",
	"post_send 4 KiB RDMA WRITE, 1 SGE", "post_send RDMA READ, 1 SGE",
	"poll_cq, one requester CQE", "poll_cq, empty CQ" };
/* rdma-core 691953d's libmlx5 in its default build (-O2, BlueFlame preferred), counted
 * with callgrind through ibv_post_send / ibv_poll_cq on the same operations: with its
 * locks, and without them and without the valgrind annotation (MLX5_SINGLE_THREADED=1,
 * built without valgrind headers).  Targets (design: 0.7 x libmlx5) against the figure
 * of the same kind: locked against locked, single-threaded against single-threaded. */
/* The measured function of each posting kind, called through the pointer so that the
 * timed loop is one loop for all three. */
static int (*const kind_post[POLL_ONE])(struct mx5_sq *, struct ibv_send_wr *) = {
	bench_post_write_inline8, bench_post_write_4k, bench_post_read };
static const unsigned kind_libmlx5_locks[NKINDS] = { 386, 356, 356, 187, 90 };
static const unsigned kind_libmlx5_nolocks[NKINDS] = { 376, 346, 346, 166, 80 };

static void make_wr(enum kind k, struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	*sge = (struct ibv_sge){ .addr = (uintptr_t)payload, .length = k == POST_INLINE8 ? 8 : 4096,
				 .lkey = 0x1234 };
	*wr = (struct ibv_send_wr){
		.sg_list = sge,
		.num_sge = 1,
		.opcode = (k == POST_INLINE8 || k == POST_WRITE4K) ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED | (k == POST_INLINE8 ? IBV_SEND_INLINE : 0),
		.wr.rdma = { .remote_addr = (uintptr_t)remote, .rkey = 0x5678 },
	};
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Run about `iters` calls of kind k round-robin over the QPs, rounded up to whole
 * batches (every QP sees the same number, every CQ ends on a lap boundary); returns
 * the timed ns and the exact number of calls in *calls. */
static double run(enum kind k, uint64_t iters, uint64_t *calls)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct ibv_wc wc;
	double ns = 0;
	uint64_t done = 0;
	/* one batch: as many ops per QP as its ring holds */
	uint64_t batch = (uint64_t)nqps * (k == POLL_EMPTY ? 64 : (k >= POLL_ONE ? CQ_N : SQ_BBS));

	make_wr(k, &wr, &sge);
	iters = (iters + batch - 1) / batch * batch;
	while (done < iters) {
		uint64_t n = batch;
		double t0;
		int rc = 0;

		/* untimed: free the rings */
		for (unsigned i = 0; i < nqps; i++) {
			qps[i].sq.tail = qps[i].sq.cur_post;
			if (k == POLL_ONE)
				device_fill_cq(&qps[i]);
		}
		t0 = now_ns();
		if (k < POLL_ONE) {
			int (*post)(struct mx5_sq *, struct ibv_send_wr *) = kind_post[k];
			for (uint64_t j = 0; j < n; j++)
				rc |= post(&qps[j % nqps].sq, &wr);
		} else {
			/* one CQE per call on a full CQ, none on an empty one */
			int want = k == POLL_ONE;
			int (*poll)(struct mx5_cq_ring *, struct ibv_wc *) = want ? bench_poll_one : bench_poll_empty;
			for (uint64_t j = 0; j < n; j++)
				rc |= poll(&qps[j % nqps].cq, &wc) != want;
		}
		ns += now_ns() - t0;
		if (rc) {
			fprintf(stderr, "uv_bench_datapath: %s failed during the run\n", kind_fn[k]);
			exit(1);
		}
		done += n;
	}
	*calls = done;
	return ns;
}

static void bad_arg(const char *opt, const char *val, const char *range)
{
	fprintf(stderr, "uv_bench_datapath: %s: '%s' is not %s\n", opt, val, range);
	exit(2);
}

static void usage(void)
{
	fprintf(stderr, "usage: uv_bench_datapath [--iters N] [--bf prefer|inline|off] [--only FUNC --qps N [--locks]]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t iters = 2000000;
	const char *only = NULL;
	unsigned only_qps = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
			if (uvt_parse_u64(argv[++i], 1ull << 40, &iters) || iters == 0)
				bad_arg("--iters", argv[i], "1..2^40");
		} else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
			only = argv[++i];
		} else if (!strcmp(argv[i], "--qps") && i + 1 < argc) {
			/* QPNs are 0x100 + index: keep them well inside the 24-bit QPN */
			if (uvt_parse_unsigned(argv[++i], 1, 65536, &only_qps))
				bad_arg("--qps", argv[i], "1..65536");
		} else if (!strcmp(argv[i], "--bf") && i + 1 < argc) {
			i++;
			if (!strcmp(argv[i], "prefer"))
				bf_policy = MX5_BF_PREFER;
			else if (!strcmp(argv[i], "inline"))
				bf_policy = MX5_BF_INLINE_ONLY;
			else if (!strcmp(argv[i], "off"))
				bf_policy = MX5_BF_OFF;
			else
				bad_arg("--bf", argv[i], "prefer, inline or off");
		} else if (!strcmp(argv[i], "--locks")) {
			use_locks = 1;
		} else {
			usage();
		}
	}
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)i;

	if (only) {
		uint64_t calls;
		int k;

		for (k = 0; k < NKINDS; k++)
			if (!strcmp(only, kind_fn[k]))
				break;
		if (k == NKINDS || only_qps == 0)
			usage();
		setup(only_qps);
		run((enum kind)k, iters, &calls);
		printf("calls=%llu\n", (unsigned long long)calls);
		return 0;
	}

	printf("uverbs data-path benchmark: ns per operation (clock_gettime(CLOCK_MONOTONIC)\n"
	       "around batches of %u ops per QP, %llu ops per row, QPs round-robin; plain-memory\n"
	       "SQ/CQ/BAR without hook: driver software cost only, BlueFlame copy and fences\n"
	       "included).  Instructions per op: tools/bench-datapath-callgrind.\n",
	       SQ_BBS, (unsigned long long)iters);
#if defined(__SANITIZE_ADDRESS__)
	printf("NOTE: built with AddressSanitizer: figures are not representative.\n");
#endif
	printf("%-36s %-7s %6s %9s %28s\n", "operation", "locks", "QPs", "ns/op",
	       "instr target (libmlx5 instr)");
	for (unsigned v = 0; v < 4; v++) {
		unsigned qn = (v & 1) ? 1024 : 1;
		const unsigned *ref = (v & 2) ? kind_libmlx5_locks : kind_libmlx5_nolocks;

		use_locks = (v & 2) != 0;
		setup(qn);
		for (int k = 0; k < NKINDS; k++) {
			uint64_t calls;
			double ns = run((enum kind)k, iters, &calls);
			printf("%-36s %-7s %6u %9.1f %21u (%u)\n", kind_name[k], use_locks ? "yes" : "hint",
			       qn, ns / (double)calls, ref[k] * 7 / 10, ref[k]);
		}
		for (unsigned i = 0; i < nqps; i++) {
			free(qps[i].sq_buf);
			free(qps[i].cq_buf);
		}
		free(qps);
		free((void *)bar.base);
	}
	return 0;
}
