/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* PCIe transactions of the data path, counted by the emulated ConnectX (docs/architecture.md,
 * "The data path"; docs/benchmarks.md): these are correctness properties of post_send and
 * poll_cq, not speed figures -- an MMIO read stalls the CPU for a full PCIe round trip
 * (microseconds behind Thunderbolt), and a single-WQE post that is not one BlueFlame
 * burst costs the device a doorbell-record read and a WQE fetch by DMA.
 * tools/bench-pcie.c prints the same counters per operation as a table.
 *
 * Two emulated NICs connected by an RC QP pair through the driver (tests/integration's
 * tp_pair.h); the counters are read before and after the data-path calls only. */
#include "tests/integration/tp_pair.h"

static struct tp_nic A, B;
static struct tp_ep qa, qb;
static uint8_t *abuf, *bbuf;
static struct mx5_mr *amr, *bmr;

#define BUF (64u << 10)
#define N 64u

static const struct tp_fixture fx = { &A, &B, &qa, &qb, &abuf, &bbuf, &amr, &bmr, BUF };

static void setup(void)
{
	/* ACK timeout 4.096 us x 2^18 = 1 s: a retransmission (payload read again) must not
	 * come from a slow machine, only from a lost packet, and loopback loses none. */
	struct tp_conn c = { .mtu = 3, .sq_psn = 0x10, .rq_psn = 0x20, .timeout = 18, .retry_cnt = 7,
			     .rnr_retry = 7, .min_rnr_timer = 1 };
	tp_fixture_open(&fx, "emu:", "emu:", 256, MX5_QPT_RC, 64,
			MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ, &c);
}

static void teardown(void)
{
	tp_fixture_close(&fx);
}

TestSuite(pcie_counters, .init = setup, .fini = teardown, .timeout = 60);

enum kind { INLINE8, WRITE4K, READ4K };

static int post_kind(enum kind k, uint64_t id)
{
	if (k == INLINE8)
		return tp_post(&qa, IBV_WR_RDMA_WRITE, id, abuf, 8, 0, (uintptr_t)bbuf, tp_rkey(bmr),
			       IBV_SEND_SIGNALED | IBV_SEND_INLINE);
	return tp_post(&qa, k == WRITE4K ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ, id, abuf, 4096, tp_lkey(amr),
		       (uintptr_t)bbuf, tp_rkey(bmr), IBV_SEND_SIGNALED);
}

/* Post one WR of kind k and reap its completion; *pb, *pa and *done are the requester's
 * counters just before and just after the post_send call, and once the CQE was reaped.
 * Only the MMIO counters of the post window belong to the post alone: the device thread
 * may already have taken the answer from the wire and written the CQE before *pa. */
static void one_op(enum kind k, uint64_t id, struct emu_counters *pb, struct emu_counters *pa,
		   struct emu_counters *done)
{
	struct ibv_wc wc;

	emu_counters(A.emu, pb);
	cr_assert_eq(post_kind(k, id), 0, "post_send of kind %d", k);
	emu_counters(A.emu, pa);
	snprintf(tp_what, sizeof(tp_what), "operation kind %d #%llu", k, (unsigned long long)id);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	cr_assert_eq(wc.wr_id, id);
	emu_counters(A.emu, done);
}

Test(pcie_counters, data_path_makes_no_mmio_reads)
{
	static struct emu_counters b0, b1, pb, pa, dn;

	emu_counters(A.emu, &b0);
	for (unsigned i = 0; i < N; i++)
		one_op((enum kind)(i % 3), i, &pb, &pa, &dn);
	for (unsigned i = 0; i < N; i++) {
		struct ibv_wc wc;

		cr_assert_eq(mx5_poll_cq(A.cqr, 1, &wc), 0, "CQ should be empty");
	}
	emu_counters(A.emu, &b1);
	cr_assert_eq(b1.mmio_reads - b0.mmio_reads, 0,
		     "%llu MMIO reads over %u posts, polls and empty polls (the data path must never load "
		     "from the BAR)", (unsigned long long)(b1.mmio_reads - b0.mmio_reads), N);
}

Test(pcie_counters, single_wqe_post_is_one_blueflame_write_and_no_doorbell)
{
	static struct emu_counters pb, pa, dn;

	for (unsigned i = 0; i < N; i++) {
		enum kind k = (enum kind)(i % 3);

		one_op(k, i, &pb, &pa, &dn);
		cr_assert_eq(pa.bf_writes - pb.bf_writes, 1, "post #%u (kind %d): %llu BlueFlame writes", i, k,
			     (unsigned long long)(pa.bf_writes - pb.bf_writes));
		cr_assert_eq(pa.send_doorbells - pb.send_doorbells, 0, "post #%u (kind %d): %llu 64-bit doorbells", i,
			     k, (unsigned long long)(pa.send_doorbells - pb.send_doorbells));
		cr_assert_eq(pa.mmio_writes - pb.mmio_writes, 1, "post #%u (kind %d): %llu MMIO writes", i, k,
			     (unsigned long long)(pa.mmio_writes - pb.mmio_writes));
		cr_assert_eq(pa.mmio_reads - pb.mmio_reads, 0);
	}
}

Test(pcie_counters, inline_write_through_blueflame_needs_no_dma_read)
{
	static struct emu_counters pb, pa, dn;
	struct emu_tp_counters t0, t1;

	emu_tp_counters(A.emu, &t0);
	for (unsigned i = 0; i < N; i++) {
		one_op(INLINE8, i, &pb, &pa, &dn);
		/* Over the whole operation on the requester: neither the WQE (it came in the
		 * BlueFlame burst), nor the doorbell record, nor the payload (inline) is
		 * fetched; the CQ doorbell record is not read either while the CQ (256 deep)
		 * cannot be full. */
		cr_assert_eq(dn.dma_reads - pb.dma_reads, 0, "inline WRITE #%u: %llu DMA reads (%llu bytes)", i,
			     (unsigned long long)(dn.dma_reads - pb.dma_reads),
			     (unsigned long long)(dn.dma_read_bytes - pb.dma_read_bytes));
	}
	emu_tp_counters(A.emu, &t1);
	cr_assert_eq(t1.sq_bf_wqes - t0.sq_bf_wqes, N, "%llu of %u WQEs taken from the BlueFlame buffer",
		     (unsigned long long)(t1.sq_bf_wqes - t0.sq_bf_wqes), N);
}

Test(pcie_counters, write_4k_reads_its_payload_by_dma_but_not_its_wqe)
{
	static struct emu_counters pb, pa, dn;

	for (unsigned i = 0; i < N; i++) {
		one_op(WRITE4K, i, &pb, &pa, &dn);
		/* The payload, and nothing else, is read. */
		cr_assert_eq(dn.dma_read_bytes - pb.dma_read_bytes, 4096, "4 KiB WRITE #%u: %llu bytes read by DMA",
			     i, (unsigned long long)(dn.dma_read_bytes - pb.dma_read_bytes));
	}
}

Test(pcie_counters, chained_post_rings_one_doorbell_instead_of_blueflame)
{
	static struct emu_counters pb, pa;
	struct ibv_sge sge[2] = { { .addr = (uintptr_t)abuf, .length = 64, .lkey = tp_lkey(amr) },
				  { .addr = (uintptr_t)abuf + 64, .length = 64, .lkey = tp_lkey(amr) } };
	struct ibv_send_wr wr[2], *bad = NULL;
	struct ibv_wc wc;

	memset(wr, 0, sizeof(wr));
	for (int i = 0; i < 2; i++) {
		wr[i].wr_id = 100u + (unsigned)i;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = (uintptr_t)bbuf + 64u * (unsigned)i;
		wr[i].wr.rdma.rkey = tp_rkey(bmr);
	}
	wr[0].next = &wr[1];
	emu_counters(A.emu, &pb);
	cr_assert_eq(mx5_post_send(qa.sq, wr, &bad), 0);
	emu_counters(A.emu, &pa);
	cr_assert_eq(pa.send_doorbells - pb.send_doorbells, 1, "two chained WRs: %llu doorbells",
		     (unsigned long long)(pa.send_doorbells - pb.send_doorbells));
	cr_assert_eq(pa.bf_writes - pb.bf_writes, 0, "two chained WRs: %llu BlueFlame writes",
		     (unsigned long long)(pa.bf_writes - pb.bf_writes));
	cr_assert_eq(pa.mmio_reads - pb.mmio_reads, 0);
	strcpy(tp_what, "chained WRITEs");
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	cr_assert_eq(wc.wr_id, 100);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	cr_assert_eq(wc.wr_id, 101);
}

Test(pcie_counters, polling_touches_no_register_and_no_device_memory)
{
	static struct emu_counters b0, b1, pb, pa;
	struct ibv_wc wc;

	/* A completion waiting in the CQ: wait for the device to write it, without polling. */
	struct emu_tp_counters t0, t1;
	uint64_t end;

	emu_tp_counters(A.emu, &t0);
	emu_counters(A.emu, &pb);
	cr_assert_eq(post_kind(INLINE8, 7), 0);
	emu_counters(A.emu, &pa);
	end = tp_now_ms() + 5000;
	do {
		emu_tp_counters(A.emu, &t1);
		cr_assert(tp_now_ms() < end, "the device wrote no CQE within 5 s");
	} while (t1.cqes == t0.cqes);
	emu_counters(A.emu, &b0);
	cr_assert_eq(mx5_poll_cq(A.cqr, 1, &wc), 1);
	cr_assert_eq(wc.wr_id, 7);
	cr_assert_eq(mx5_poll_cq(A.cqr, 1, &wc), 0);
	emu_counters(A.emu, &b1);
	cr_assert_eq(b1.mmio_reads - b0.mmio_reads, 0, "poll: %llu MMIO reads",
		     (unsigned long long)(b1.mmio_reads - b0.mmio_reads));
	cr_assert_eq(b1.mmio_writes - b0.mmio_writes, 0, "poll: %llu MMIO writes (the consumer index goes to "
		     "the doorbell record in host memory)", (unsigned long long)(b1.mmio_writes - b0.mmio_writes));
	cr_assert_eq(b1.dma_reads - b0.dma_reads, 0);
	cr_assert_eq(b1.dma_writes - b0.dma_writes, 0);
}
