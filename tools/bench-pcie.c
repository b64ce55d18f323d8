/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uv_bench_pcie: PCIe transactions per data-path operation (docs/benchmarks.md),
 * read from the emulated ConnectX's counters.  Prints figures; the correctness
 * half of them (no MMIO read on the data path, one BlueFlame write per single-WQE post)
 * is asserted by tests/mlx5/test_pcie_counters.c.
 *
 *   uv_bench_pcie [--iters N] [--mtu 256|512|1024|2048|4096] [--bf prefer|inline|off]
 *
 * Two emulated NICs (emu:, auto-assigned 127.0.0.N) in this process, opened through the
 * real driver (hw/mlx5), one RC QP on each, connected over RoCE v2 on loopback.  For each
 * operation kind, N times: snapshot both devices' counters (emu_counters), post one WR
 * through mx5_post_send (the data path libuverbs uses), snapshot the requester again
 * ("post" row: the MMIO the post_send call made -- only MMIO, because the device thread
 * usually has the answer off the wire and the CQE written before post_send has returned
 * to the caller's next line, so the DMA of that window is not the post's alone), wait
 * until the device has written the CQE, snapshot both ("op" rows: requester and
 * responder, from the post to the CQE, every packet and ACK included), then poll that
 * CQE with mx5_poll_cq and snapshot ("poll one CQE").  Empty polls are measured alone.
 *
 * Device-side counters are what crosses PCIe on a real NIC: MMIO = CPU loads/stores to
 * the BAR (the emulator's BAR hook sees each), BlueFlame write = one write-combining burst
 * of a WQE, doorbell = a 64-bit UAR store, DMA = device reads/writes of host memory
 * through the IOMMU model (WQE fetch, doorbell records, payload, CQEs).
 */
#include <getopt.h>

#include "tools/bench-nic.h"
#include "tools/common/parse.h"

#define BUF_LEN (64u << 10)

enum kind { K_WRITE8_INLINE, K_WRITE4K, K_READ4K, NKINDS };
static const char *const kind_name[NKINDS] = { "RDMA WRITE 8 B inline", "RDMA WRITE 4 KiB, 1 SGE",
					       "RDMA READ 4 KiB, 1 SGE" };

/* The counters one table row is made of. */
struct pc {
	uint64_t mmio_rd, mmio_wr, bf, db, cqdb, dma_rd, dma_rd_b, dma_wr, dma_wr_b;
};

static void pc_add(struct pc *acc, const struct emu_counters *a, const struct emu_counters *b)
{
	acc->mmio_rd += b->mmio_reads - a->mmio_reads;
	acc->mmio_wr += b->mmio_writes - a->mmio_writes;
	acc->bf += b->bf_writes - a->bf_writes;
	acc->db += b->send_doorbells - a->send_doorbells;
	acc->cqdb += b->cq_doorbells - a->cq_doorbells;
	acc->dma_rd += b->dma_reads - a->dma_reads;
	acc->dma_rd_b += b->dma_read_bytes - a->dma_read_bytes;
	acc->dma_wr += b->dma_writes - a->dma_writes;
	acc->dma_wr_b += b->dma_write_bytes - a->dma_write_bytes;
}

static void pc_row(const char *what, const char *side, const struct pc *p, uint64_t n)
{
	double d = (double)n;

	if (!strcmp(side, "post")) {
		/* DMA in the post window is not the post's alone (see the header comment) */
		printf("%-26s %-9s %6.2f %6.2f %6.2f %6.2f %6.2f %7s %8s %7s %8s\n", what, side,
		       (double)p->mmio_rd / d, (double)p->mmio_wr / d, (double)p->bf / d, (double)p->db / d,
		       (double)p->cqdb / d, "-", "-", "-", "-");
		return;
	}
	printf("%-26s %-9s %6.2f %6.2f %6.2f %6.2f %6.2f %7.2f %8.1f %7.2f %8.1f\n", what, side,
	       (double)p->mmio_rd / d, (double)p->mmio_wr / d, (double)p->bf / d, (double)p->db / d,
	       (double)p->cqdb / d, (double)p->dma_rd / d, (double)p->dma_rd_b / d, (double)p->dma_wr / d,
	       (double)p->dma_wr_b / d);
}

static struct emu_tp_counters tpc;

static uint64_t cqes_written(struct bn_nic *n)
{
	emu_tp_counters(n->emu, &tpc);
	return tpc.cqes;
}



int main(int argc, char **argv)
{
	static struct emu_counters a0, a1, a2, a3, b0, b2;
	struct pc post[NKINDS], whole_req[NKINDS], whole_resp[NKINDS], poll1, poll0;
	unsigned iters = 1000, mtu_bytes = 4096;
	uint8_t mtu = 5;
	struct bn_nic A, B;
	struct bn_qp qa, qb;
	struct bn_peer pa, pb;
	uint8_t *abuf, *bbuf;
	uint32_t alkey, blkey;

	int c;

	bn_prog = "uv_bench_pcie";
	static const struct option opts[] = { { "iters", required_argument, 0, 'n' },
					      { "mtu", required_argument, 0, 'm' },
					      { "bf", required_argument, 0, 'b' },
					      { "help", no_argument, 0, 'h' },
					      { 0, 0, 0, 0 } };
	while ((c = getopt_long(argc, argv, "n:m:b:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (uvt_parse_unsigned(optarg, 1, 100000000, &iters))
				bn_die("--iters: '%s' is not 1..100000000", optarg);
			break;
		case 'm':
			if (uvt_parse_unsigned(optarg, 256, 4096, &mtu_bytes))
				bn_die("--mtu: '%s' is not 256..4096", optarg);
			break;
		case 'b':   /* BlueFlame policy (hw/mlx5/mx5.h enum mx5_bf_policy) */
			if (!strcmp(optarg, "prefer"))
				bn_bf_policy = MX5_BF_PREFER;
			else if (!strcmp(optarg, "inline"))
				bn_bf_policy = MX5_BF_INLINE_ONLY;
			else if (!strcmp(optarg, "off"))
				bn_bf_policy = MX5_BF_OFF;
			else
				bn_die("--bf: '%s' is not prefer, inline or off", optarg);
			break;
		default:
			return bn_usage(c, "uv_bench_pcie [--iters N] [--mtu 256..4096] [--bf prefer|inline|off]");
		}
	}
	bn_no_operands(argc, argv);
	for (mtu = 1; mtu <= 5 && (128u << mtu) != mtu_bytes; mtu++)
		;
	if (mtu > 5 || iters == 0)
		bn_die("--mtu must be 256, 512, 1024, 2048 or 4096 and --iters > 0");

	abuf = bn_side_open(&A, &qa, 256, 64, BUF_LEN, 0x100, &alkey, &pa);
	bbuf = bn_side_open(&B, &qb, 256, 64, BUF_LEN, 0x200, &blkey, &pb);
	bn_qp_connect(&qa, &pb, pa.psn, mtu);
	bn_qp_connect(&qb, &pa, pb.psn, mtu);

	memset(post, 0, sizeof(post));
	memset(whole_req, 0, sizeof(whole_req));
	memset(whole_resp, 0, sizeof(whole_resp));
	memset(&poll1, 0, sizeof(poll1));
	memset(&poll0, 0, sizeof(poll0));
	for (int k = 0; k < NKINDS; k++) {
		for (unsigned i = 0; i < iters; i++) {
			struct ibv_wc wc;
			uint64_t cq0 = cqes_written(&A), end;
			int rc;

			emu_counters(B.emu, &b0);
			emu_counters(A.emu, &a0);
			if (k == K_WRITE8_INLINE)
				rc = bn_post(&qa, IBV_WR_RDMA_WRITE, i, abuf, 8, 0, pb.addr, pb.rkey,
					     IBV_SEND_SIGNALED | IBV_SEND_INLINE);
			else
				rc = bn_post(&qa, k == K_WRITE4K ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ, i, abuf, 4096,
					     alkey, pb.addr, pb.rkey, IBV_SEND_SIGNALED);
			emu_counters(A.emu, &a1);
			if (rc)
				bn_die("%s: post_send %d", kind_name[k], rc);
			pc_add(&post[k], &a0, &a1);
			end = bn_now_ns() + 5000000000ull;
			while (cqes_written(&A) == cq0)
				if (bn_now_ns() > end)
					bn_die("%s: no CQE within 5 s", kind_name[k]);
			emu_counters(A.emu, &a2);
			emu_counters(B.emu, &b2);
			rc = mx5_poll_cq(A.cqr, 1, &wc);
			emu_counters(A.emu, &a3);
			if (rc != 1 || wc.status != IBV_WC_SUCCESS)
				bn_die("%s: poll_cq %d, status %d", kind_name[k], rc, rc == 1 ? (int)wc.status : -1);
			pc_add(&whole_req[k], &a0, &a2);
			pc_add(&whole_resp[k], &b0, &b2);
			pc_add(&poll1, &a2, &a3);
		}
	}
	for (unsigned i = 0; i < iters; i++) {
		struct ibv_wc wc;
		int rc;

		emu_counters(A.emu, &a0);
		rc = mx5_poll_cq(A.cqr, 1, &wc);
		emu_counters(A.emu, &a1);
		if (rc != 0)
			bn_die("empty poll_cq returned %d", rc);
		pc_add(&poll0, &a0, &a1);
	}

	printf("uverbs PCIe transactions per operation, from the emulated ConnectX's counters\n");
	printf("Two emulated NICs (emu:, 127.0.0.%u -> 127.0.0.%u) in one process, through hw/mlx5; RC QP,\n",
	       A.ip & 255, B.ip & 255);
	printf("path MTU %u, %u operations of each kind, one at a time (post, wait for the CQE, poll).\n", mtu_bytes,
	       iters);
	printf("post = MMIO of the post_send call alone; op = post to CQE written, on the requester (req)\n"
	       "and responder (resp) devices (the requester's DMA reads are its SQ engine's: WQE, payload);\n"
	       "poll = mx5_poll_cq.  MMIO = BAR loads/stores; BF = BlueFlame bursts; DB = 64-bit send\n"
	       "doorbells; CQDB = CQ doorbells (arming); DMA = device reads/writes of host memory.\n\n");
	printf("%-26s %-9s %6s %6s %6s %6s %6s %7s %8s %7s %8s\n", "operation", "counted", "MMIOrd", "MMIOwr", "BF",
	       "DB", "CQDB", "DMArd", "rd B", "DMAwr", "wr B");
	for (int k = 0; k < NKINDS; k++) {
		pc_row(kind_name[k], "post", &post[k], iters);
		pc_row("", "op req", &whole_req[k], iters);
		pc_row("", "op resp", &whole_resp[k], iters);
	}
	pc_row("poll_cq, one CQE", "poll", &poll1, (uint64_t)iters * NKINDS);
	pc_row("poll_cq, empty CQ", "poll", &poll0, iters);
	printf("\nData path: %s MMIO reads; BlueFlame writes per single-WQE post: %.2f.\n",
	       post[0].mmio_rd + post[1].mmio_rd + post[2].mmio_rd + poll1.mmio_rd + poll0.mmio_rd ? "SOME" : "zero",
	       (double)(post[0].bf + post[1].bf + post[2].bf) / (3.0 * iters));

	bn_nic_close(&A);
	bn_nic_close(&B);
	munmap(abuf, BUF_LEN);
	munmap(bbuf, BUF_LEN);
	return 0;
}
