/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The write-combining self-test (hw/mlx5/wc.c, Linux wc.c's method) on the emulated
 * device: bursts that arrive whole are taken (the first CQE is an early NOP's), bursts
 * the emulator is told to tear (emu: bf=torn) are ignored and the ring is read (the
 * first CQE is the last NOP's: "not supported"); with BlueFlame off by policy there is
 * nothing to test.  Prints the figure line CI greps. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/mlx5/mx5_loop.h"

TestSuite(wc, .timeout = 60);

static struct mx5_wc_result run(const char *uri)
{
	struct mx5_wc_result r;

	loop_open(uri);
	int rc = mx5_wc_test(dev, &r);
	cr_assert_eq(rc, 0, "%s: %s", uri, mx5_device_error(dev));
	loop_close();
	return r;
}

Test(wc, whole_bursts_pass_and_torn_bursts_fail_as_linux_decides)
{
	struct mx5_wc_result whole = run("emu:");
	cr_assert_eq(whole.state, MX5_WC_SUPPORTED, "first CQE for NOP %u", whole.first_wqe);
	cr_assert_eq(whole.nops, 255);
	cr_assert_lt(whole.first_wqe, 254);

	struct mx5_wc_result torn = run("emu:bf=torn");
	cr_assert_eq(torn.state, MX5_WC_NOT_SUPPORTED, "first CQE for NOP %u", torn.first_wqe);
	cr_assert_eq(torn.first_wqe, 254, "only the last NOP's ring copy asked for a CQE");
	printf("write-combining test: whole bursts %s (first CQE NOP %u, %u ms), torn bursts %s "
	       "(first CQE NOP %u, %u ms)\n", whole.state == MX5_WC_SUPPORTED ? "pass" : "FAIL",
	       whole.first_wqe, whole.ms, torn.state == MX5_WC_NOT_SUPPORTED ? "fail as they must" : "PASS?",
	       torn.first_wqe, torn.ms);
	fflush(stdout);
}

/* The torn device still runs the WQEs: correctness never depends on BlueFlame. */
Test(wc, a_torn_burst_still_runs_the_wqe_from_the_ring)
{
	loop_open("emu:bf=torn");
	struct mx5_cq *cq = loop_cq(16, NULL);
	struct mx5_qp *a = loop_qp(cq, cq, NULL, 8), *b = loop_qp(cq, cq, NULL, 8);
	loop_connect(a, mx5_qp_num(b));
	loop_connect(b, mx5_qp_num(a));
	static uint8_t src[64], dst[64];
	for (int i = 0; i < 64; i++)
		src[i] = (uint8_t)(i * 3 + 1);
	struct mx5_mr *mr;
	cr_assert_eq(mx5_mr_reg(pd, dst, sizeof(dst), MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE, &mr), 0);
	struct mx5_mr_info mi;
	mx5_mr_query(mr, &mi);
	loop_post_rdma(a, IBV_WR_RDMA_WRITE, 7, src, 64, mi.lkey, (uintptr_t)dst, mi.rkey,
		       IBV_SEND_SIGNALED | IBV_SEND_INLINE);
	struct ibv_wc wc;
	loop_wait(cq, &wc, 10000);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(memcmp(src, dst, 64), 0);
	mx5_mr_dereg(mr);
	mx5_qp_destroy(a);
	mx5_qp_destroy(b);
	mx5_cq_destroy(cq);
	loop_close();
}

Test(wc, nothing_to_test_when_blueflame_is_off_by_policy)
{
	struct mx5_open_attr oa = { .bf_policy = MX5_BF_OFF };
	struct mx5_device *d;
	cr_assert_eq(mx5_device_open_attr("emu:", &oa, &d), 0, "%s", mx5_open_error());
	struct mx5_wc_result r;
	cr_assert_eq(mx5_wc_test(d, &r), 0);
	cr_assert_eq(r.state, MX5_WC_NO_BLUEFLAME);
	mx5_device_close(d);
}

/* The policy reaches each QP's send queue (mx5.h enum mx5_bf_policy): off gives QPs no
 * register of their own (doorbells only), inline-only keeps the register for inline
 * WQEs, prefer (the default) for every WQE that fits. */
Test(wc, the_blueflame_policy_reaches_every_send_queue)
{
	static const unsigned pol[] = { MX5_BF_PREFER, MX5_BF_INLINE_ONLY, MX5_BF_OFF };
	for (unsigned i = 0; i < 3; i++) {
		struct mx5_open_attr oa = { .bf_policy = pol[i] };
		struct mx5_device *d;
		cr_assert_eq(mx5_device_open_attr("emu:", &oa, &d), 0, "%s", mx5_open_error());
		struct mx5_pd *p;
		struct mx5_cq *cq;
		struct mx5_qp *qp;
		cr_assert_eq(mx5_pd_alloc(d, &p), 0);
		cr_assert_eq(mx5_cq_create(d, &(struct mx5_cq_attr){ .cqe = 16 }, &cq), 0);
		cr_assert_eq(mx5_qp_create(p, &(struct mx5_qp_init_attr){ .type = MX5_QPT_RC, .send_cq = cq,
				.recv_cq = cq, .cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
							.max_recv_sge = 1, .max_inline_data = 64 } }, &qp),
			     0, "%s", mx5_device_error(d));
		const struct mx5_sq *sq = mx5_qp_sq_state(qp);
		if (pol[i] == MX5_BF_OFF) {
			cr_assert_eq(sq->bf_size, 0, "off: no BlueFlame register");
			cr_assert_eq(sq->bf_max, 0);
		} else {
			cr_assert_gt(sq->bf_size, 0);
			cr_assert_eq(sq->bf_inline_only, pol[i] == MX5_BF_INLINE_ONLY);
			cr_assert_eq(sq->bf_max, pol[i] == MX5_BF_INLINE_ONLY ? 0 : sq->bf_size);
		}
		mx5_qp_destroy(qp);
		mx5_cq_destroy(cq);
		mx5_pd_free(p);
		mx5_device_close(d);
	}
}
