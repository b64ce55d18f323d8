/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uv_bench_scale: how the driver scales on the emulated ConnectX (docs/benchmarks.md):
 * 1 to 1,024 QPs, queue depth 1 to 32K, MR 4 KiB to 1 GiB (time, memory, MTT
 * entries).  Prints figures; asserts nothing (timing on a shared machine is not a
 * test; the correctness of every path measured here is tested elsewhere).
 *
 *   uv_bench_scale [--max-qps N] [--max-depth N] [--max-mr BYTES]
 *
 * Two emulated NICs in this process, opened through the real driver (hw/mlx5):
 *  - QPs: N RC QPs created on each NIC (queue depth 64) and connected pairwise to RTS,
 *    then one 64-byte RDMA WRITE on every QP, round robin, then all destroyed.  Per QP:
 *    create, connect (three MODIFY_QP commands), destroy times; the process's resident
 *    memory and the firmware pages the device holds, before and after.
 *  - Queue depth: one connected RC QP pair whose send queue holds D WQEs, filled with D
 *    signalled 64-byte RDMA WRITEs in one go (doorbell per post), then drained: create
 *    time, the queue's memory, and the rate at which the full queue completes.
 *  - Memory regions: mx5_mr_reg / mx5_mr_dereg of a buffer of each size (every page
 *    touched first, as an application's buffer would be): time, the MTT page size the
 *    driver chose, translation entries written, and whether it took an indirect (KLM)
 *    MKey.  The emulated shim translates page by page, so the time is the driver's and
 *    the emulated IOMMU's, not a kernel's get_user_pages.
 * Times are wall clock (CLOCK_MONOTONIC) around the driver calls.
 */
#include <getopt.h>
#include <unistd.h>

#include "tools/bench-nic.h"
#include "tools/common/parse.h"

static double ms_since(uint64_t t0)
{
	return (double)(bn_now_ns() - t0) / 1e6;
}

/* Resident set size of this process, KiB (/proc/self/statm field 2, in pages). */
static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long size = 0, res = 0;

	if (!f || fscanf(f, "%ld %ld", &size, &res) != 2)
		res = 0;
	if (f)
		fclose(f);
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

static uint64_t fw_pages(struct bn_nic *n)
{
	struct emu_counters c;

	emu_counters(n->emu, &c);
	return c.pages_held;
}

/* Poll n's CQ until `want` completions arrived (each must be a success); bounded. */
static void drain(struct bn_nic *n, uint64_t want, const char *what)
{
	uint64_t got = 0, deadline = bn_now_ns() + 120ull * 1000000000ull;

	while (got < want) {
		struct ibv_wc wc[64];
		int k = mx5_poll_cq(n->cqr, 64, wc);

		if (k < 0)
			bn_die("%s: poll_cq %d", what, k);
		for (int i = 0; i < k; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				bn_die("%s: completion status %d", what, wc[i].status);
		got += (uint64_t)k;
		if (bn_now_ns() > deadline)
			bn_die("%s: %llu of %llu completions in 120 s", what, (unsigned long long)got,
			       (unsigned long long)want);
	}
}

static struct bn_peer peer_of(struct bn_nic *n, struct bn_qp *q, uint32_t psn)
{
	return (struct bn_peer){ .ip = n->ip, .qpn = q->qpn, .psn = psn };
}

static void qps(uint32_t max_qps)
{
	static const uint32_t counts[] = { 1, 16, 128, 1024, 4096 };
	uint8_t *buf = bn_alloc(1u << 20);

	printf("QPs (RC, depth 64, connected to RTS in pairs between two NICs), ms per QP:\n");
	printf("%7s %9s %9s %9s %10s %12s %12s %10s\n", "QPs", "create", "connect", "destroy", "WRITE us",
	       "RSS KiB/QP", "fw pages/QP", "MTT 1 MiB");
	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]) && counts[k] <= max_qps; k++) {
		uint32_t n = counts[k];
		struct bn_nic a, b;
		struct bn_qp *qa = calloc(n, sizeof(*qa)), *qb = calloc(n, sizeof(*qb));
		uint32_t lkey, rkey_b, lkey_b, rkey;
		struct mx5_mr *mra, *mrb;
		struct mx5_mr_info info;
		uint64_t t0, fw0;
		long rss0;
		double t_create, t_conn, t_write, t_destroy;

		if (!qa || !qb)
			bn_die("out of memory");
		bn_nic_open(&a, "emu:", 8192);
		bn_nic_open(&b, "emu:", 8192);
		mra = bn_mr(&a, buf, 1u << 20, &lkey, &rkey);
		mrb = bn_mr(&b, buf, 1u << 20, &lkey_b, &rkey_b);
		mx5_mr_query(mra, &info);
		rss0 = rss_kib();
		fw0 = fw_pages(&a) + fw_pages(&b);
		t0 = bn_now_ns();
		for (uint32_t i = 0; i < n; i++) {
			bn_qp_create(&qa[i], &a, 64);
			bn_qp_create(&qb[i], &b, 64);
		}
		t_create = ms_since(t0) / (2.0 * n);
		t0 = bn_now_ns();
		for (uint32_t i = 0; i < n; i++) {
			struct bn_peer pa = peer_of(&a, &qa[i], 0x100), pb = peer_of(&b, &qb[i], 0x200);

			bn_qp_connect(&qa[i], &pb, 0x100, 3);
			bn_qp_connect(&qb[i], &pa, 0x200, 3);
		}
		t_conn = ms_since(t0) / (2.0 * n);
		t0 = bn_now_ns();
		for (uint32_t i = 0; i < n; i++) {
			if (bn_post(&qa[i], IBV_WR_RDMA_WRITE, i, buf, 64, lkey, (uintptr_t)buf + 4096, rkey_b,
				    IBV_SEND_SIGNALED))
				bn_die("post on QP %u", i);
			if ((i + 1) % 64 == 0)
				drain(&a, 64, "WRITE round robin");
		}
		drain(&a, n % 64, "WRITE round robin");
		t_write = (double)(bn_now_ns() - t0) / 1e3 / n;
		long rss1 = rss_kib();
		uint64_t fw1 = fw_pages(&a) + fw_pages(&b);
		t0 = bn_now_ns();
		for (uint32_t i = 0; i < n; i++) {
			if (mx5_qp_destroy(qa[i].qp) || mx5_qp_destroy(qb[i].qp))
				bn_die("destroy QP %u", i);
		}
		t_destroy = ms_since(t0) / (2.0 * n);
		printf("%7u %9.3f %9.3f %9.3f %10.1f %12.1f %12.2f %10llu\n", n, t_create, t_conn, t_destroy, t_write,
		       (double)(rss1 - rss0) / (2.0 * n), (double)(fw1 - fw0) / (2.0 * n),
		       (unsigned long long)info.mtt_entries);
		(void)mrb;
		bn_nic_close(&a);
		bn_nic_close(&b);
		free(qa);
		free(qb);
	}
	munmap(buf, 1u << 20);
	printf("(WRITE us: one signalled 64-byte WRITE on every QP in turn, 64 in flight, per QP;\n"
	       " RSS and firmware pages: growth while the QPs existed, per QP, both NICs)\n\n");
}

static void depths(uint32_t max_depth)
{
	struct bn_nic a, b;
	struct mx5_device_info di;
	uint8_t *buf = bn_alloc(1u << 20);
	uint32_t lkey, rkey, lkey_b, rkey_b;

	bn_nic_open(&a, "emu:", 65536);
	bn_nic_open(&b, "emu:", 65536);
	if (mx5_device_query(a.dev, &di))
		bn_die("query device");
	if (max_depth > di.max_qp_wr)
		max_depth = di.max_qp_wr;
	bn_mr(&a, buf, 1u << 20, &lkey, &rkey);
	bn_mr(&b, buf, 1u << 20, &lkey_b, &rkey_b);
	printf("Queue depth (one RC QP pair; the send queue filled with signalled 64-byte WRITEs, then\n"
	       "drained; device limit max_qp_wr %u):\n", di.max_qp_wr);
	printf("%7s %11s %11s %11s %12s %13s\n", "depth", "create ms", "SQ KiB", "RSS KiB", "fill ms", "WRITEs/s");
	for (uint32_t d = 1; d <= max_depth; d = d < 64 ? 64 : d * 8 > max_depth && d < max_depth ? max_depth : d * 8) {
		struct bn_qp qa, qb;
		long rss0 = rss_kib();
		uint64_t t0 = bn_now_ns();
		double t_create, t_fill;

		/* no inline data: a WRITE with one SGE is one 64-byte basic block, so the
		 * send queue can hold max_qp_wr of them */
		struct mx5_qp_init_attr qi = { .type = MX5_QPT_RC, .send_cq = a.cq, .recv_cq = a.cq,
					       .cap = { .max_send_wr = d, .max_recv_wr = 1, .max_send_sge = 1,
							.max_recv_sge = 1 } };

		memset(&qa, 0, sizeof(qa));
		if (mx5_qp_create(a.pd, &qi, &qa.qp) != 0)
			bn_die("QP of depth %u: %s", d, mx5_device_error(a.dev));
		qa.nic = &a;
		qa.qpn = mx5_qp_num(qa.qp);
		qa.sq = mx5_qp_sq_state(qa.qp);
		qa.rq = mx5_qp_rq_state(qa.qp);
		t_create = ms_since(t0);
		bn_qp_create(&qb, &b, 64);
		struct mx5_qp_attr qattr;
		struct mx5_qp_init_attr granted;

		if (mx5_qp_query(qa.qp, &qattr, &granted))
			bn_die("query QP");
		struct bn_peer pa = peer_of(&a, &qa, 0x100), pb = peer_of(&b, &qb, 0x200);

		bn_qp_connect(&qa, &pb, 0x100, 3);
		bn_qp_connect(&qb, &pa, 0x200, 3);
		t0 = bn_now_ns();
		for (uint32_t i = 0; i < d; i++)
			if (bn_post(&qa, IBV_WR_RDMA_WRITE, i, buf, 64, lkey, (uintptr_t)buf + 4096, rkey_b,
				    IBV_SEND_SIGNALED))
				bn_die("post %u of %u", i, d);
		drain(&a, d, "full queue");
		t_fill = ms_since(t0);
		printf("%7u %11.3f %11.1f %11ld %12.2f %13.0f\n", d, t_create, granted.cap.max_send_wr * 64.0 / 1024.0,
		       rss_kib() - rss0, t_fill, (double)d / (t_fill / 1e3));
		if (mx5_qp_destroy(qa.qp) || mx5_qp_destroy(qb.qp))
			bn_die("destroy");
		if (d == max_depth)
			break;
	}
	printf("(SQ KiB: the send ring the driver granted, 64 bytes a WQE; RSS: the process's growth\n"
	       " from before creating the QP to after its queue was filled and drained)\n\n");
	bn_nic_close(&a);
	bn_nic_close(&b);
	munmap(buf, 1u << 20);
}

static void mrs(uint64_t max_mr)
{
	static const uint64_t sizes[] = { 4096, 64u << 10, 1u << 20, 64u << 20, 1ull << 30 };
	struct bn_nic a;

	bn_nic_open(&a, "emu:", 64);
	printf("Memory regions (mx5_mr_reg / mx5_mr_dereg, every page touched first):\n");
	printf("%10s %10s %10s %9s %12s %9s %6s\n", "bytes", "reg ms", "dereg ms", "MTT page", "MTT entries",
	       "indirect", "parts");
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]) && sizes[k] <= max_mr; k++) {
		size_t len = (size_t)sizes[k];
		uint8_t *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct mx5_mr *mr = NULL;
		struct mx5_mr_info info;
		uint64_t t0;
		double t_reg, t_dereg;

		if (buf == MAP_FAILED)
			bn_die("mmap %zu bytes: %s", len, strerror(errno));
		memset(buf, 0x5a, len);
		t0 = bn_now_ns();
		if (mx5_mr_reg(a.pd, buf, len, MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ,
			       &mr))
			bn_die("register %zu bytes: %s", len, mx5_device_error(a.dev));
		t_reg = ms_since(t0);
		mx5_mr_query(mr, &info);
		t0 = bn_now_ns();
		if (mx5_mr_dereg(mr))
			bn_die("deregister %zu bytes: %s", len, mx5_device_error(a.dev));
		t_dereg = ms_since(t0);
		printf("%10zu %10.3f %10.3f %8uK %12llu %9s %6u\n", len, t_reg, t_dereg, (1u << info.log_page_size) / 1024,
		       (unsigned long long)info.mtt_entries, info.indirect ? "yes" : "no", info.nparts);
		munmap(buf, len);
	}
	bn_nic_close(&a);
	printf("\n");
}

int main(int argc, char **argv)
{
	unsigned max_qps = 1024, max_depth = 32768;
	uint64_t max_mr = 1ull << 30;
	int c;
	static const struct option opts[] = { { "max-qps", required_argument, 0, 'q' },
					      { "max-depth", required_argument, 0, 'd' },
					      { "max-mr", required_argument, 0, 'm' },
					      { "help", no_argument, 0, 'h' },
					      { 0, 0, 0, 0 } };

	bn_prog = "uv_bench_scale";
	while ((c = getopt_long(argc, argv, "q:d:m:h", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			if (uvt_parse_unsigned(optarg, 1, 1u << 24, &max_qps))
				bn_die("--max-qps: '%s' is not 1..16777216", optarg);
			break;
		case 'd':
			if (uvt_parse_unsigned(optarg, 1, 1u << 24, &max_depth))
				bn_die("--max-depth: '%s' is not 1..16777216", optarg);
			break;
		case 'm':
			if (uvt_parse_size(optarg, 1ull << 40, &max_mr))
				bn_die("--max-mr: '%s' is not a size up to 1T (k, m, g suffixes)", optarg);
			break;
		default:
			return bn_usage(c, "uv_bench_scale [--max-qps N] [--max-depth N] [--max-mr BYTES[K|M|G]]");
		}
	}
	bn_no_operands(argc, argv);
	if (max_qps < 1 || max_depth < 1 || max_mr < 4096)
		bn_die("--max-qps and --max-depth at least 1, --max-mr at least 4096");
	printf("uverbs scale on the emulated ConnectX-5 Ex (%ld CPUs online; wall-clock times)\n\n",
	       sysconf(_SC_NPROCESSORS_ONLN));
	qps(max_qps);
	depths(max_depth);
	mrs(max_mr);
	return 0;
}
