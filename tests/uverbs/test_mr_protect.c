/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Registration that cannot be turned into a crash, and keys that are not guessable.
 *
 * ibv_reg_mr refuses what a pinning kernel refuses (Linux ib_umem_get: EFAULT for
 * unmapped memory, and for read-only memory registered with a write right).  Memory
 * unmapped or made read-only after registration is an application's mistake; the
 * device must answer it with an error completion, never a signal in its thread: a peer's
 * RDMA WRITE gets a remote access error, a READ response or a local SEND a local
 * protection error.  Every MKey's key byte (mkc.mkey_7_0) is random. */
#include <sys/mman.h>
#include <unistd.h>

#include "tests/uverbs/uv_test.h"

#define RW_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static size_t pg(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static uint8_t *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(p, MAP_FAILED);
	memset(p, 0x11, len);
	return p;
}

static struct ibv_pd *one_pd(void)
{
	ut_devices("emu:ip=127.62.1.2");
	struct ibv_pd *pd = ibv_alloc_pd(ut_open(0));

	cr_assert_not_null(pd);
	return pd;
}

Test(mr_protect, read_only_memory_with_local_write_is_efault)
{
	struct ibv_pd *pd = one_pd();
	uint8_t *p = map(2 * pg());

	cr_assert_eq(mprotect(p, 2 * pg(), PROT_READ), 0);
	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, p, 2 * pg(), IBV_ACCESS_LOCAL_WRITE));
	cr_assert_eq(errno, EFAULT, "errno %d (%s)", errno, strerror(errno));
	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, p, 2 * pg(), RW_ACCESS));
	cr_assert_eq(errno, EFAULT);
	struct ibv_mr *mr = ibv_reg_mr(pd, p, 2 * pg(), IBV_ACCESS_REMOTE_READ);
	cr_assert_not_null(mr, "reading read-only memory is allowed: %s", strerror(errno));
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

/* ibv_rereg_mr cannot add a write right to read-only memory either: the in-place
 * change (UMR) refuses, and the re-registration it falls back to fails like the first. */
Test(mr_protect, rereg_adding_write_access_to_read_only_memory_fails)
{
	struct ibv_pd *pd = one_pd();
	uint8_t *p = map(pg());

	cr_assert_eq(mprotect(p, pg(), PROT_READ), 0);
	struct ibv_mr *mr = ibv_reg_mr(pd, p, pg(), IBV_ACCESS_REMOTE_READ);
	cr_assert_not_null(mr, "%s", strerror(errno));
	uint32_t rkey = mr->rkey;
	cr_assert_neq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, RW_ACCESS), 0);
	cr_assert_eq(mr->rkey, rkey, "the region is unchanged");
	cr_assert_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_RELAXED_ORDERING), 0,
		     "a change that asks no write is fine");
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

Test(mr_protect, one_read_only_page_inside_the_range_is_efault)
{
	struct ibv_pd *pd = one_pd();
	uint8_t *p = map(3 * pg());

	cr_assert_eq(mprotect(p + pg(), pg(), PROT_READ), 0);
	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, p, 3 * pg(), IBV_ACCESS_LOCAL_WRITE));
	cr_assert_eq(errno, EFAULT);
}

Test(mr_protect, unmapped_range_is_efault)
{
	struct ibv_pd *pd = one_pd();
	uint8_t *p = map(3 * pg());

	cr_assert_eq(munmap(p + pg(), pg()), 0);
	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, p, 3 * pg(), IBV_ACCESS_REMOTE_READ));
	cr_assert_eq(errno, EFAULT);
}

Test(mr_protect, prot_none_memory_is_efault)
{
	struct ibv_pd *pd = one_pd();
	uint8_t *p = map(pg());

	cr_assert_eq(mprotect(p, pg(), PROT_NONE), 0);
	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, p, pg(), IBV_ACCESS_REMOTE_READ));
	cr_assert_eq(errno, EFAULT);
}

/* mkc.mkey_7_0 is the driver's choice: a counter makes the next rkey a sure guess. */
Test(mr_protect, key_bytes_of_successive_mrs_are_neither_sequential_nor_constant)
{
	enum { N = 64 };
	struct ibv_pd *pd = one_pd();
	static uint8_t buf[4096] __attribute__((aligned(4096)));
	struct ibv_mr *mr[N];
	unsigned seen[256] = { 0 }, distinct = 0, steps_of_one = 0;

	for (int i = 0; i < N; i++) {
		mr[i] = ibv_reg_mr(pd, buf, sizeof(buf), RW_ACCESS);
		cr_assert_not_null(mr[i], "MR %d: %s", i, strerror(errno));
		cr_assert_eq(mr[i]->lkey & 0xff, mr[i]->rkey & 0xff);
		if (!seen[mr[i]->rkey & 0xff]++)
			distinct++;
		if (i && (uint8_t)(mr[i]->rkey - mr[i - 1]->rkey) == 1)
			steps_of_one++;
	}
	/* 64 random bytes: about 57 distinct values and 0.25 steps of +1 expected; the
	 * bounds fail for a counter (64 and 63) with margin for chance (p < 1e-9) */
	cr_assert_gt(distinct, 40, "only %u distinct key bytes in %d MRs", distinct, N);
	cr_assert_lt(steps_of_one, 8, "%u of %d successive key bytes step by one", steps_of_one, N - 1);
	for (int i = 0; i < N; i++)
		cr_assert_eq(ibv_dereg_mr(mr[i]), 0);
}

/* ------------------------------------------------------------------ the data path */

/* Two emulated NICs in this process, one RC QP each, connected. */
struct pair {
	struct ut_ep a, b;
};

static void pair_up(struct pair *p)
{
	ut_devices("emu:ip=127.62.1.3,emu:ip=127.62.1.4");
	ut_ep_init(&p->a, ut_open(0), IBV_QPT_RC, 4096, NULL);
	ut_ep_init(&p->b, ut_open(1), IBV_QPT_RC, 4096, NULL);
	ut_pair(&p->a, &p->b);
}

/* The device thread must survive: a signal would kill the test process, which
 * criterion reports as a crash, so reaching the end of a test is the proof. */
static void post(struct ut_ep *e, enum ibv_wr_opcode op, void *laddr, uint32_t lkey, uint32_t len, uint64_t raddr,
		 uint32_t rkey)
{
	struct ibv_sge sg = { .addr = (uintptr_t)laddr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sg, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	cr_assert_eq(ibv_post_send(e->qp, &wr, &bad), 0);
}

static void expect_qp_error(struct ut_ep *e)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr ia;
	double end = ut_now_ms() + 5000;

	do {
		cr_assert_eq(ibv_query_qp(e->qp, &qa, IBV_QP_STATE, &ia), 0);
		if (qa.qp_state == IBV_QPS_ERR)
			return;
	} while (ut_now_ms() < end);
	cr_assert_fail("QP state %d, expected IBV_QPS_ERR", qa.qp_state);
}

/* The peer's MR whose memory goes away (how: munmap or mprotect) after registration. */
static void remote_write_into_vanished_memory(int how)
{
	struct pair p;
	struct ibv_wc wc;
	size_t len = 4 * pg();
	uint8_t *mem = map(len);

	pair_up(&p);
	struct ibv_mr *mr = ibv_reg_mr(p.b.pd, mem, len, RW_ACCESS);
	cr_assert_not_null(mr);
	if (how == 0)
		cr_assert_eq(munmap(mem, len), 0);
	else
		cr_assert_eq(mprotect(mem, len, PROT_READ), 0);
	memset(p.a.buf, 0x77, 256);
	post(&p.a, IBV_WR_RDMA_WRITE, p.a.buf, p.a.mr->lkey, 256, (uintptr_t)mem + 100, mr->rkey);
	ut_expect(p.a.cq, &wc, IBV_WC_REM_ACCESS_ERR);
	expect_qp_error(&p.b);
	if (how == 1)
		for (size_t i = 0; i < len; i++)
			cr_assert_eq(mem[i], 0x11, "read-only byte %zu changed", i);
	/* the device is still alive: the same QPs' neighbours work, and the MR goes */
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	if (how == 1)
		munmap(mem, len);
}

Test(mr_protect, peer_write_into_memory_unmapped_after_registration_is_a_remote_access_error)
{
	remote_write_into_vanished_memory(0);
}

Test(mr_protect, peer_write_into_memory_made_read_only_after_registration_is_a_remote_access_error)
{
	remote_write_into_vanished_memory(1);
}

Test(mr_protect, read_response_into_memory_unmapped_after_registration_is_a_local_protection_error)
{
	struct pair p;
	struct ibv_wc wc;
	size_t len = 2 * pg();
	uint8_t *mem = map(len);

	pair_up(&p);
	struct ibv_mr *mr = ibv_reg_mr(p.a.pd, mem, len, RW_ACCESS);
	cr_assert_not_null(mr);
	cr_assert_eq(munmap(mem, len), 0);
	post(&p.a, IBV_WR_RDMA_READ, mem + 64, mr->lkey, 3000, (uintptr_t)p.b.buf, p.b.mr->rkey);
	ut_expect(p.a.cq, &wc, IBV_WC_LOC_PROT_ERR);
	cr_assert_eq(wc.wr_id, 7);
	expect_qp_error(&p.a);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

/* A's READ of read_len bytes at `off` in B's MR whose memory B unmapped (from `gone`
 * bytes on) after registering it: B's responder finds it while building the responses and NAKs the READ, so A
 * completes with a remote access error at once, not a retry timeout (the NAK once
 * carried a PSN past the READ's responses, which A dropped: IBV_WC_RETRY_EXC_ERR after
 * about 2 s). */
static void read_of_vanished_memory(size_t len, size_t gone, size_t off, uint32_t read_len)
{
	struct pair p;
	struct ibv_wc wc;
	uint8_t *mem = map(len);
	double t0;

	pair_up(&p);
	struct ibv_mr *mr = ibv_reg_mr(p.b.pd, mem, len, RW_ACCESS);
	cr_assert_not_null(mr);
	cr_assert_eq(munmap(mem + gone, len - gone), 0);
	t0 = ut_now_ms();
	post(&p.a, IBV_WR_RDMA_READ, p.a.buf, p.a.mr->lkey, read_len, (uintptr_t)mem + off, mr->rkey);
	ut_expect(p.a.cq, &wc, IBV_WC_REM_ACCESS_ERR);
	cr_assert_eq(wc.wr_id, 7);
	cr_assert_lt(ut_now_ms() - t0, 1000.0, "the READ's error took %.0f ms", ut_now_ms() - t0);
	expect_qp_error(&p.b);
	if (gone)
		munmap(mem, gone);
}

Test(mr_protect, a_read_of_memory_unmapped_after_registration_is_a_remote_access_error)
{
	read_of_vanished_memory(2 * pg(), 0, 0, 2000);
}

Test(mr_protect, a_read_meeting_unmapped_memory_after_its_first_responses_is_a_remote_access_error)
{
	/* path MTU 1024 (the port's active MTU, ut_pair): the READ starts 2 KiB before the
	 * end of the one page left, so two responses leave before the fault */
	read_of_vanished_memory(2 * pg(), pg(), pg() - 2048, 3000);
}

Test(mr_protect, send_from_memory_unmapped_after_registration_is_a_local_protection_error)
{
	struct pair p;
	struct ibv_wc wc;
	size_t len = 2 * pg();
	uint8_t *mem = map(len);

	pair_up(&p);
	ut_post_recv(&p.b, 1, p.b.buf, 4096);
	struct ibv_mr *mr = ibv_reg_mr(p.a.pd, mem, len, RW_ACCESS);
	cr_assert_not_null(mr);
	cr_assert_eq(munmap(mem, len), 0);
	post(&p.a, IBV_WR_SEND, mem, mr->lkey, 2000, 0, 0);
	ut_expect(p.a.cq, &wc, IBV_WC_LOC_PROT_ERR);
	expect_qp_error(&p.a);
	cr_assert_eq(ibv_poll_cq(p.b.cq, 1, &wc), 0, "nothing arrived at the peer");
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

Test(mr_protect, receive_into_memory_unmapped_after_registration_is_a_local_protection_error)
{
	struct pair p;
	struct ibv_wc wc;
	size_t len = 2 * pg();
	uint8_t *mem = map(len);

	pair_up(&p);
	struct ibv_mr *mr = ibv_reg_mr(p.b.pd, mem, len, RW_ACCESS);
	cr_assert_not_null(mr);
	struct ibv_sge sg = { .addr = (uintptr_t)mem, .length = (uint32_t)len, .lkey = mr->lkey };
	struct ibv_recv_wr rw = { .wr_id = 9, .sg_list = &sg, .num_sge = 1 }, *bad = NULL;
	cr_assert_eq(ibv_post_recv(p.b.qp, &rw, &bad), 0);
	cr_assert_eq(munmap(mem, len), 0);
	post(&p.a, IBV_WR_SEND, p.a.buf, p.a.mr->lkey, 1000, 0, 0);
	ut_expect(p.b.cq, &wc, IBV_WC_LOC_PROT_ERR);
	cr_assert_eq(wc.wr_id, 9);
	ut_expect(p.a.cq, &wc, IBV_WC_REM_OP_ERR);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

/* A peer's SEND with invalidate naming the rkey of a region registered by ibv_reg_mr:
 * IBTA vol. 1, 10.6 lets a remote invalidation end only a memory window or a region
 * registered by a fast-register work request (rxe refuses a plain MR; the device decides
 * by the MKey context, mkc.en_rinval, which the driver never sets for ibv_reg_mr).  The
 * SEND lands, and the region stays usable: the peer's WRITE to it still succeeds. */
Test(mr_protect, peer_send_with_invalidate_leaves_a_plain_region_usable)
{
	struct pair p;
	struct ibv_wc wc;

	pair_up(&p);
	ut_post_recv(&p.a, 1, p.a.buf, 64);
	struct ibv_sge sg = { .addr = (uintptr_t)p.b.buf, .length = 16, .lkey = p.b.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = p.a.mr->rkey }, *bad = NULL;
	cr_assert_eq(ibv_post_send(p.b.qp, &wr, &bad), 0);
	cr_assert_eq(ut_poll(p.b.cq, &wc, 5000), 1, "no send completion");
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(ut_poll(p.a.cq, &wc, 5000), 1, "no receive completion");
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	memset(p.b.buf, 0x5a, 256);
	enum ibv_wc_status st = ut_write(&p.b, 256, p.a.buf + 1024, p.a.mr->rkey, 3);
	cr_assert_eq(st, IBV_WC_SUCCESS, "the WRITE after the invalidating SEND: %s", ibv_wc_status_str(st));
	cr_assert_eq(p.a.buf[1024], 0x5a);
	cr_assert_eq(p.a.buf[1024 + 255], 0x5a);
}
