/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* ibv_rereg_mr through the device daemon.  The daemon refuses every client MKey that
 * UMR could change (mkc.umr_en, tools/uvd/policy.c), so the library re-registers
 * instead of changing the MKey in place: the call succeeds, the keys may change, and
 * the device enforces the new rights under the new keys (ibv_rereg_mr(3) allows new
 * keys).  Without that fallback, registration through the daemon fails outright.
 *
 * The daemon is $UVD_BIN on 127.81.1.1 (tests/uvd/uvd_daemon.h).  Two verbs contexts of this
 * process are two clients of it, connected by an RC QP pair; the requester writes
 * into a region of the responder's and the bytes are compared. */
#include "tests/uvd/uvd_daemon.h"

static struct uvd_daemon dmn = { .pid = -1 };
static struct ut_ep A, B;
static uint8_t target[8192] __attribute__((aligned(4096)));

static void setup(void)
{
	close(uvd_daemon_start(&dmn, "rereg", "127.81.1.1"));
	uvd_daemon_rc_pair(&dmn, &A, &B, 8192);
}

static void teardown(void)
{
	uvd_daemon_stop(&dmn);
}

TestSuite(uvd_rereg, .init = setup, .fini = teardown, .timeout = 120);

/* RDMA WRITE of 64 bytes of `fill` from A into addr/rkey; the completion status. */
static enum ibv_wc_status write_to(void *addr, uint32_t rkey, uint64_t wr_id, uint8_t fill)
{
	memset(A.buf, fill, 64);
	return ut_write(&A, 64, addr, rkey, wr_id);
}

Test(uvd_rereg, access_change_through_the_daemon_reregisters_and_grants_the_new_right)
{
	struct ibv_mr *m = ibv_reg_mr(B.pd, target, sizeof(target), IBV_ACCESS_LOCAL_WRITE);

	cr_assert_not_null(m, "ibv_reg_mr through the daemon: %s", strerror(errno));
	cr_assert_eq(ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE), 0);
	cr_assert_eq(m->addr, (void *)target);
	cr_assert_eq(m->length, sizeof(target));
	enum ibv_wc_status st = write_to(target + 4096, m->rkey, 1, 0x5c);
	cr_assert_eq(st, IBV_WC_SUCCESS, "WRITE through the re-registered rkey: %s", ibv_wc_status_str(st));
	for (unsigned i = 0; i < 64; i++)
		cr_assert_eq(target[4096 + i], 0x5c, "byte %u: 0x%x", i, target[4096 + i]);
	cr_assert_eq(target[4096 + 64], 0, "the WRITE went past its 64 bytes");
	cr_assert_eq(ibv_dereg_mr(m), 0);
}

Test(uvd_rereg, access_change_through_the_daemon_that_drops_remote_write_is_enforced)
{
	struct ibv_mr *m = ibv_reg_mr(B.pd, target, sizeof(target), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);

	cr_assert_not_null(m, "ibv_reg_mr through the daemon: %s", strerror(errno));
	cr_assert_eq(ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_LOCAL_WRITE), 0);
	enum ibv_wc_status st = write_to(target, m->rkey, 2, 0x3a);
	cr_assert_eq(st, IBV_WC_REM_ACCESS_ERR, "a WRITE the region no longer allows: %s", ibv_wc_status_str(st));
	cr_assert_eq(target[0], 0, "the refused WRITE reached memory");
}
