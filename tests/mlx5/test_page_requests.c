/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Page requests in the middle of a command (PRM "Page Request Event"): firmware that
 * needs pages for a command raises PAGE_REQUEST and completes the command only once
 * it got them.  The emulator holds such commands (hw/emu/hold.c: icm=N, pagehold=);
 * the driver must answer from inside the command's wait, with MANAGE_PAGES on the
 * command queue's second slot (hw/mlx5/eq.c), and the pages must balance at teardown.
 * Commands time out after CMD_TIMEOUT_MS here, so a driver that only serves page
 * requests after the command fails in a second instead of hanging for 60. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "firmware-cmd/cmdq.h"
#include "firmware-cmd/names.h"
#include "hw/emu/emu.h"
#include "hw/mlx5/mx5.h"

#define CMD_TIMEOUT_MS 1000

static struct mx5_device *open_dev(const char *uri)
{
	struct mx5_open_attr a = { .cmd_timeout_ms = CMD_TIMEOUT_MS };
	struct mx5_device *dev = NULL;
	int rc = mx5_device_open_attr(uri, &a, &dev);
	cr_assert_eq(rc, 0, "open %s: %s", uri, mx5_open_error());
	return dev;
}

static struct emu_dev *emu_of(struct mx5_device *dev)
{
	struct emu_dev *e = emu_device_from_shim(mx5_device_shim(dev));
	cr_assert_not_null(e);
	return e;
}

static struct emu_counters *counters(struct emu_dev *e)
{
	static struct emu_counters c;
	emu_counters(e, &c);
	return &c;
}

/* Teardown hands every page back: the device holds none, gave back all it got, and the
 * driver's account is zero. */
static void shutdown_balanced(struct mx5_device *dev, struct emu_dev *e)
{
	struct mx5_page_stats st;
	cr_assert_eq(mx5_device_shutdown(dev), 0, "%s", mx5_device_error(dev));
	struct emu_counters *c = counters(e);
	cr_assert_eq(emu_pages_held(e), 0, "device still holds %llu pages",
		     (unsigned long long)emu_pages_held(e));
	cr_assert_eq(c->pages_given, c->pages_taken, "given %llu, taken back %llu",
		     (unsigned long long)c->pages_given, (unsigned long long)c->pages_taken);
	mx5_device_page_stats(dev, &st);
	cr_assert_eq(st.given, 0);
	mx5_device_close(dev);
}

static int make_cq(struct mx5_device *dev, struct mx5_cq **cq)
{
	struct mx5_cq_attr a = { .cqe = 16 };
	return mx5_cq_create(dev, &a, cq);
}

Test(mlx5_page_requests, cq_held_for_pages_completes_when_they_are_given_from_the_wait)
{
	struct mx5_device *dev = open_dev("emu:pagehold=CREATE_CQ:64");
	struct emu_dev *e = emu_of(dev);
	struct mx5_page_stats before, after;
	struct mx5_cq *cq = NULL;

	mx5_device_page_stats(dev, &before);
	int rc = make_cq(dev, &cq);
	cr_assert_eq(rc, 0, "CREATE_CQ held for pages: rc %d: %s", rc, mx5_device_error(dev));
	cr_assert_eq(counters(e)->cmds_held, 1, "the emulator held the command");
	mx5_device_page_stats(dev, &after);
	cr_assert_eq(after.given, before.given + 64);
	cr_assert_geq(after.served_in_wait, 1, "served inside the wait, on the second slot");
	cr_assert_eq(emu_pages_held(e), after.given);
	cr_assert_eq(mx5_cq_destroy(cq), 0, "%s", mx5_device_error(dev));
	shutdown_balanced(dev, e);
}

Test(mlx5_page_requests, every_create_held_in_icm_mode_completes_and_nothing_is_lost)
{
	struct mx5_device *dev = open_dev("emu:icm=8");
	struct emu_dev *e = emu_of(dev);
	struct mx5_pd *pd;
	struct mx5_cq *cq;
	struct mx5_mr *mr;
	struct mx5_srq *srq;
	struct mx5_qp *qp;
	uint64_t held0 = counters(e)->cmds_held;

	cr_assert_eq(mx5_pd_alloc(dev, &pd), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(make_cq(dev, &cq), 0, "%s", mx5_device_error(dev));
	void *buf = aligned_alloc(4096, 8192);
	cr_assert_not_null(buf);
	cr_assert_eq(mx5_mr_reg(pd, buf, 8192, MX5_ACCESS_LOCAL_WRITE, &mr), 0, "%s", mx5_device_error(dev));
	struct mx5_srq_attr sa = { .max_wr = 16, .max_sge = 1 };
	cr_assert_eq(mx5_srq_create(pd, cq, &sa, &srq), 0, "%s", mx5_device_error(dev));
	struct mx5_qp_init_attr qa = { .type = MX5_QPT_RC, .send_cq = cq, .recv_cq = cq,
				       .cap = { .max_send_wr = 8, .max_recv_wr = 8,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	cr_assert_eq(mx5_qp_create(pd, &qa, &qp), 0, "%s", mx5_device_error(dev));

	struct emu_counters *c = counters(e);
	/* CQ (and the completion EQ it may need), MKEY, SRQ, QP */
	cr_assert_geq(c->cmds_held - held0, 4, "held %llu", (unsigned long long)(c->cmds_held - held0));
	cr_assert_eq(c->cmd_by_opcode[PRM_CMD_OP_CREATE_QP], 1);
	struct mx5_page_stats st;
	mx5_device_page_stats(dev, &st);
	cr_assert_eq(st.served_in_wait, c->cmds_held - held0);
	cr_assert_eq(emu_pages_held(e), st.given);

	cr_assert_eq(mx5_qp_destroy(qp), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_srq_destroy(srq), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_mr_dereg(mr), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_cq_destroy(cq), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_pd_free(pd), 0, "%s", mx5_device_error(dev));
	shutdown_balanced(dev, e);
	free(buf);
}

Test(mlx5_page_requests, reclaim_request_during_a_command_is_answered_from_the_wait)
{
	struct mx5_device *dev = open_dev("emu:");
	struct emu_dev *e = emu_of(dev);
	struct mx5_page_stats before, after;
	struct mx5_cq *cq = NULL;

	/* Pages beyond what the firmware needs, so it has some to offer back. */
	cr_assert_eq(emu_pages_request(e, 100), 0);
	cr_assert_gt(mx5_device_poll_events(dev), 0);
	mx5_device_page_stats(dev, &before);
	cr_assert_eq(emu_fault_page_hold(e, PRM_CMD_OP_CREATE_CQ, -40, 0), 0);
	int rc = make_cq(dev, &cq);
	cr_assert_eq(rc, 0, "CREATE_CQ held for a reclaim: rc %d: %s", rc, mx5_device_error(dev));
	cr_assert_eq(counters(e)->cmds_held, 1);
	mx5_device_page_stats(dev, &after);
	cr_assert_eq(after.given, before.given - 40);
	cr_assert_eq(after.reclaimed, before.reclaimed + 40);
	cr_assert_geq(after.served_in_wait, 1);
	cr_assert_eq(emu_pages_held(e), after.given);
	cr_assert_eq(mx5_cq_destroy(cq), 0, "%s", mx5_device_error(dev));
	shutdown_balanced(dev, e);
}

Test(mlx5_page_requests, release_all_during_a_command_frees_every_page_without_manage_pages)
{
	struct mx5_device *dev = open_dev("emu:");
	struct emu_dev *e = emu_of(dev);
	struct mx5_page_stats before, after;
	struct mx5_cq *cq = NULL;

	mx5_device_page_stats(dev, &before);
	cr_assert_gt(before.given, 0);
	uint64_t manage0 = counters(e)->cmd_by_opcode[PRM_CMD_OP_MANAGE_PAGES];
	cr_assert_eq(emu_fault_release_all(e, PRM_CMD_OP_CREATE_CQ, 0), 0);
	cr_assert_eq(make_cq(dev, &cq), 0, "%s", mx5_device_error(dev));
	struct emu_counters *c = counters(e);
	cr_assert_eq(c->pages_released_all, before.given, "the device let go of every page");
	mx5_device_page_stats(dev, &after);
	cr_assert_eq(after.given, 0, "the driver freed them: %llu left", (unsigned long long)after.given);
	cr_assert_eq(after.released_all, 1);
	cr_assert_eq(after.host_bytes, 0);
	cr_assert_eq(c->cmd_by_opcode[PRM_CMD_OP_MANAGE_PAGES], manage0, "no MANAGE_PAGES for a release-all");
	cr_assert_eq(mx5_cq_destroy(cq), 0, "%s", mx5_device_error(dev));
	shutdown_balanced(dev, e);
}

Test(mlx5_page_requests, single_entry_queue_serves_page_requests_after_the_command)
{
	/* No second slot: a request met in a command's wait is served once the command
	 * returned (with two slots it would be served inside the wait). */
	struct mx5_device *dev = open_dev("emu:cmdq_entries=1");
	struct emu_dev *e = emu_of(dev);
	struct mx5_page_stats st;
	struct mx5_cq *cq = NULL;

	cr_assert_eq(cmdq_nested_slot(mx5_device_cmdq(dev)), -EOPNOTSUPP);
	cr_assert_eq(emu_pages_request(e, 64), 0);
	cr_assert_eq(make_cq(dev, &cq), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_cq_destroy(cq), 0, "%s", mx5_device_error(dev));
	mx5_device_page_stats(dev, &st);
	cr_assert_eq(st.regular, 64, "the page request was served");
	cr_assert_eq(st.served_in_wait, 0);
	cr_assert_eq(emu_pages_held(e), st.given);
	shutdown_balanced(dev, e);
}
