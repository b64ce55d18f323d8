/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* PCIe transactions of a uvd client's data path when the daemon runs the data plane
 * (uvd -R, as a daemon of real hardware does with its BAR), counted by the emulated
 * ConnectX that lives in the daemon (tools/uvd; docs/architecture.md "Several
 * processes: uvd"): a single-WQE post is one BlueFlame write and no MMIO read, as in
 * one process (tests/mlx5/test_pcie_counters.c asserts the same there, and
 * test_uvd_engine.c for a client that runs the data plane in its own engine).
 *
 * The daemon is $UVD_BIN -R, started here on 127.68.1.1.  Two verbs contexts of this
 * process are two clients of it (uvd:<socket> twice), connected by an RC QP pair; a
 * third connection speaks the protocol itself (hw/shim/uvd_proto.h) to read the
 * device's counters before each post and after its completion.  The daemon's own
 * bring-up work (its health check reads the initialization segment once a second)
 * may land in a window, so an MMIO read is counted against the post only if every
 * one of three windows of the same operation saw one. */
#include "hw/shim/uvd_proto.h"
#include "tests/uvd/uvd_daemon.h"

static struct uvd_daemon dmn = { .pid = -1, .opt = "-R" };
static int raw = -1, raw_evs = -1;
static uint32_t raw_seq;
static struct ut_ep A, B;

static int raw_rpc(uint16_t op, const void *req, size_t reqlen, void *rep, size_t replen, int *fd)
{
	return uvd_raw_rpc(raw, &raw_seq, op, req, reqlen, -1, rep, replen, fd);
}

static void counters(struct uvd_counters_rep *out)
{
	cr_assert_eq(raw_rpc(UVD_OP_COUNTERS, NULL, 0, out, sizeof(*out), NULL), 0, "COUNTERS");
}

static void setup(void)
{
	raw = uvd_daemon_start(&dmn, "pcie", "127.68.1.1");
	struct uvd_hello hq = { .version = UVD_VERSION };
	struct uvd_hello_rep hr;
	cr_assert_eq(raw_rpc(UVD_OP_HELLO, &hq, sizeof(hq), &hr, sizeof(hr), &raw_evs), 0, "HELLO");
	uvd_daemon_rc_pair(&dmn, &A, &B, 65536);
}

static void teardown(void)
{
	uvd_daemon_stop(&dmn);
}

TestSuite(uvd_pcie, .init = setup, .fini = teardown, .timeout = 120);

/* Post one signalled RDMA WRITE of len bytes (inline when asked) and reap it; the
 * counters just before the post and once its completion was reaped. */
static void one_write(uint64_t id, uint32_t len, unsigned flags, struct uvd_counters_rep *before,
		      struct uvd_counters_rep *after)
{
	struct ibv_sge sg = { .addr = (uintptr_t)A.buf, .length = len, .lkey = A.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED | flags }, *bad = NULL;
	struct ibv_wc wc;
	wr.wr.rdma.remote_addr = (uintptr_t)B.buf + 8192;
	wr.wr.rdma.rkey = B.mr->rkey;
	for (uint32_t i = 0; i < len; i++)
		A.buf[i] = (uint8_t)(id * 7 + i);
	counters(before);
	cr_assert_eq(ibv_post_send(A.qp, &wr, &bad), 0);
	ut_expect(A.cq, &wc, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, id);
	counters(after);
	cr_assert_eq(memcmp(B.buf + 8192, A.buf, len), 0, "WRITE #%llu of %u bytes: data differ",
		     (unsigned long long)id, len);
}

Test(uvd_pcie, single_wqe_post_through_the_daemon_is_one_blueflame_write_and_no_mmio_read)
{
	static const struct { uint32_t len; unsigned flags; } kind[] = { { 8, IBV_SEND_INLINE }, { 4096, 0 } };
	struct uvd_counters_rep b, a;
	uint64_t id = 0;

	for (unsigned k = 0; k < 2; k++)
		for (unsigned i = 0; i < 32; i++) {
			uint64_t reads = UINT64_MAX;
			for (unsigned t = 0; t < 3 && reads; t++) {
				one_write(++id, kind[k].len, kind[k].flags, &b, &a);
				cr_assert_eq(a.bf_writes - b.bf_writes, 1, "%u-byte WRITE #%u: %llu BlueFlame writes",
					     kind[k].len, i, (unsigned long long)(a.bf_writes - b.bf_writes));
				cr_assert_eq(a.send_doorbells - b.send_doorbells, 0,
					     "%u-byte WRITE #%u: %llu 64-bit send doorbells", kind[k].len, i,
					     (unsigned long long)(a.send_doorbells - b.send_doorbells));
				if (a.mmio_reads - b.mmio_reads < reads)
					reads = a.mmio_reads - b.mmio_reads;
			}
			cr_assert_eq(reads, 0, "%u-byte WRITE #%u: %llu MMIO reads in every one of three windows",
				     kind[k].len, i, (unsigned long long)reads);
		}
}
