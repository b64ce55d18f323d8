/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Driver bring-up and teardown against the emulated ConnectX (docs/architecture.md, "Bring-up, teardown, pages, health"): the
 * order, the page supply, the health watch, and errors that name the step and the
 * firmware's answer.  Every check reads the device's own counters. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "hw/emu/emu.h"
#include "hw/mlx5/mx5.h"

static struct emu_dev *emu_of(struct mx5_device *dev)
{
	struct emu_dev *e = emu_device_from_shim(mx5_device_shim(dev));
	cr_assert_not_null(e, "an emu: device");
	return e;
}

static struct mx5_device *open_or_fail(const char *uri)
{
	struct mx5_device *dev = NULL;
	int rc = mx5_device_open(uri, &dev);
	cr_assert_eq(rc, 0, "open %s: %d: %s", uri, rc, mx5_open_error());
	return dev;
}

/* Up to INIT_HCA only: for checks that need no EQ or UAR. */
static struct mx5_device *open_inspect(const char *uri)
{
	struct mx5_open_attr a = { .flags = MX5_OPEN_INSPECT };
	struct mx5_device *dev = NULL;
	int rc = mx5_device_open_attr(uri, &a, &dev);
	cr_assert_eq(rc, 0, "open %s: %d: %s", uri, rc, mx5_open_error());
	return dev;
}

static uint64_t live_objects(const struct emu_counters *c)
{
	uint64_t n = 0;
	for (int t = 0; t < EMU_OBJ_NTYPES; t++)
		n += c->objects_live[t];
	return n;
}

Test(mlx5_bringup, bringup_and_teardown_100_times_leave_no_page_or_object)
{
	static struct emu_counters c;
	uint64_t first_pages = 0;
	for (int i = 0; i < 100; i++) {
		struct mx5_device *dev = open_or_fail("emu:");
		struct emu_dev *e = emu_of(dev);
		struct mx5_page_stats st;
		mx5_device_page_stats(dev, &st);
		cr_assert_gt(st.given, 0, "the device asked for pages");
		cr_assert_eq(emu_pages_held(e), st.given, "device holds what the driver gave");
		if (!first_pages)
			first_pages = st.given;
		cr_assert_eq(st.given, first_pages, "the same supply every time");
		emu_counters(e, &c);
		cr_assert_gt(c.objects_live[EMU_OBJ_EQ], 0, "async EQ exists");
		cr_assert_gt(c.objects_live[EMU_OBJ_UAR], 0, "UAR exists");

		int rc = mx5_device_shutdown(dev);
		cr_assert_eq(rc, 0, "shutdown %d: %s", i, mx5_device_error(dev));
		emu_counters(e, &c);
		cr_assert_eq(c.pages_held, 0, "iteration %d: %llu pages left", i,
			     (unsigned long long)c.pages_held);
		cr_assert_eq(c.pages_given, c.pages_taken);
		cr_assert_eq(live_objects(&c), 0, "iteration %d: objects left", i);
		cr_assert_eq(emu_hca_state(e), 0, "HCA disabled at the end");
		cr_assert_eq(c.driver_errors, 0, "no driver error logged");
		mx5_device_close(dev);
	}
}

Test(mlx5_bringup, bringup_runs_each_step_once_in_design_order)
{
	static struct emu_counters c;
	struct mx5_device *dev = open_or_fail("emu:");
	emu_counters(emu_of(dev), &c);
	cr_assert_eq(c.cmd_by_opcode[PRM_CMD_OP_ENABLE_HCA], 1);
	cr_assert_eq(c.cmd_by_opcode[PRM_CMD_OP_QUERY_ISSI], 1);
	cr_assert_eq(c.cmd_by_opcode[PRM_CMD_OP_INIT_HCA], 1);
	cr_assert_eq(c.cmd_by_opcode[PRM_CMD_OP_SET_HCA_CAP], 2, "general and atomic");
	cr_assert_eq(c.cmd_by_opcode[PRM_CMD_OP_QUERY_PAGES], 2, "boot and init");
	cr_assert_eq(c.cmd_by_opcode[PRM_CMD_OP_ALLOC_UAR], 1);
	cr_assert_eq(c.cmd_by_opcode[PRM_CMD_OP_CREATE_EQ], 1);
	cr_assert_eq(c.cmds_failed, 0);
	mx5_device_close(dev);
}

Test(mlx5_bringup, capabilities_set_uar_page_to_host_page_and_checksums_off)
{
	struct mx5_device *dev = open_inspect("emu:page=16k");
	const void *cur = mx5_device_caps(dev, MX5_CAP_GENERAL, 1);
	cr_assert_not_null(cur);
	/* 16 KiB host pages: 4 units of 4 KiB */
	cr_assert_eq(PRM_GET(cmd_hca_cap, cur, log_uar_page_sz), 2);
	cr_assert_eq(PRM_GET(cmd_hca_cap, cur, cmdif_checksum), 0);
	struct mx5_page_stats st;
	mx5_device_page_stats(dev, &st);
	/* firmware pages stay 4 KiB; host memory comes in whole 16 KiB pages */
	cr_assert_eq(emu_pages_held(emu_of(dev)), st.given);
	cr_assert_eq(st.host_bytes % 16384, 0);
	cr_assert_geq(st.host_bytes, st.given * 4096);
	cr_assert_eq(mx5_device_shutdown(dev), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(emu_pages_held(emu_of(dev)), 0);
	mx5_device_close(dev);
}

Test(mlx5_bringup, atomics_are_switched_to_host_order_and_only_then_reported)
{
	struct mx5_device *dev = open_or_fail("emu:");
	const void *atomic = mx5_device_caps(dev, MX5_CAP_ATOMIC, 1);
	cr_assert_not_null(atomic);
	/* PRM atomic_caps: the device offered mode 1 and the driver took it */
	cr_assert_eq(PRM_GET(atomic_caps, atomic, supported_atomic_req_8B_endianness_mode_1), 1);
	cr_assert_eq(PRM_GET(atomic_caps, atomic, atomic_req_8B_endianness_mode), 1);
	struct mx5_device_info info;
	cr_assert_eq(mx5_device_query(dev, &info), 0);
	cr_assert_eq(info.atomic, 1);
	mx5_device_close(dev);
}

Test(mlx5_bringup, inspect_open_stops_after_init_hca)
{
	static struct emu_counters c;
	struct mx5_open_attr a = { .flags = MX5_OPEN_INSPECT };
	struct mx5_device *dev = NULL;
	cr_assert_eq(mx5_device_open_attr("emu:", &a, &dev), 0, "%s", mx5_open_error());
	struct emu_dev *e = emu_of(dev);
	emu_counters(e, &c);
	cr_assert_eq(emu_hca_state(e), 2, "INIT_HCA done");
	cr_assert_eq(c.cmd_by_opcode[PRM_CMD_OP_CREATE_EQ], 0);
	cr_assert_eq(c.cmd_by_opcode[PRM_CMD_OP_ALLOC_UAR], 0);
	cr_assert_eq(mx5_device_shutdown(dev), 0, "%s", mx5_device_error(dev));
	emu_counters(e, &c);
	cr_assert_eq(c.pages_held, 0);
	mx5_device_close(dev);
}

Test(mlx5_bringup, init_hca_failure_names_step_status_and_syndrome)
{
	struct mx5_device *dev = NULL;
	int rc = mx5_device_open("emu:fail=0x102:0x4:0x1234", &dev);
	cr_assert_lt(rc, 0);
	cr_assert_null(dev);
	const char *m = mx5_open_error();
	cr_assert(strstr(m, "bring-up") && strstr(m, "INIT_HCA") && strstr(m, "bad system state") &&
		  strstr(m, "0x1234"), "message: %s", m);
}

Test(mlx5_bringup, manage_pages_failure_is_reported_and_nothing_leaks)
{
	struct mx5_device *dev = NULL;
	int rc = mx5_device_open("emu:fail=0x108:0x3", &dev);
	cr_assert_lt(rc, 0);
	const char *m = mx5_open_error();
	cr_assert(strstr(m, "MANAGE_PAGES") && strstr(m, "bad parameter"), "message: %s", m);
}

Test(mlx5_bringup, firmware_that_never_finishes_initializing_times_out)
{
	struct mx5_open_attr a = { .init_timeout_ms = 50 };
	struct mx5_device *dev = NULL;
	int rc = mx5_device_open_attr("emu:init_ms=5000", &a, &dev);
	cr_assert_eq(rc, -ETIMEDOUT, "rc %d: %s", rc, mx5_open_error());
	cr_assert(strstr(mx5_open_error(), "initializing"), "%s", mx5_open_error());
}

Test(mlx5_bringup, command_that_hangs_times_out_naming_it)
{
	struct mx5_open_attr a = { .cmd_timeout_ms = 200 };
	struct mx5_device *dev = NULL;
	int rc = mx5_device_open_attr("emu:hang=0x100", &a, &dev);
	cr_assert_eq(rc, -ETIMEDOUT, "rc %d: %s", rc, mx5_open_error());
	cr_assert(strstr(mx5_open_error(), "QUERY_HCA_CAP"), "%s", mx5_open_error());
}

/* One command that never completes must not wedge the command interface: as Linux
 * (cmd.c wait_func_handle_exec_timeout, mlx5_cmd_comp_handler: "only real completion
 * can free the cmd slot") the timed-out entry is left to the device and the next
 * command goes out on another entry, so later commands, TEARDOWN_HCA among them, work. */
Test(mlx5_bringup, a_timed_out_command_leaves_its_slot_and_the_next_command_runs)
{
	struct mx5_open_attr a = { .cmd_timeout_ms = 300 };
	struct mx5_device *dev = NULL;
	cr_assert_eq(mx5_device_open_attr("emu:", &a, &dev), 0, "%s", mx5_open_error());
	struct emu_dev *e = emu_of(dev);
	struct mx5_pd *pd = NULL, *pd2 = NULL;
	cr_assert_eq(emu_fault_hang(e, PRM_CMD_OP_ALLOC_PD), 0);
	cr_assert_eq(mx5_pd_alloc(dev, &pd), -ETIMEDOUT, "%s", mx5_device_error(dev));
	emu_fault_clear(e);
	cr_assert_eq(mx5_pd_alloc(dev, &pd2), 0, "the command after a timeout: %s", mx5_device_error(dev));
	cr_assert_eq(mx5_device_is_fatal(dev), 0);
	cr_assert_eq(mx5_pd_free(pd2), 0, "%s", mx5_device_error(dev));
	mx5_device_close(dev);
}

Test(mlx5_bringup, unknown_uri_is_an_open_error)
{
	struct mx5_device *dev = NULL;
	cr_assert_lt(mx5_device_open("bogus:", &dev), 0);
	cr_assert_null(dev);
	cr_assert(strstr(mx5_open_error(), "bogus"), "%s", mx5_open_error());
}

Test(mlx5_bringup, page_requests_give_and_reclaim_through_the_async_eq)
{
	struct mx5_device *dev = open_or_fail("emu:");
	struct emu_dev *e = emu_of(dev);
	struct mx5_page_stats before, after;
	mx5_device_page_stats(dev, &before);
	cr_assert_eq(emu_pages_request(e, 100), 0);
	cr_assert_gt(mx5_device_poll_events(dev), 0, "the EQE was seen");
	mx5_device_page_stats(dev, &after);
	cr_assert_eq(after.given, before.given + 100);
	cr_assert_eq(after.regular, 100);
	cr_assert_eq(emu_pages_held(e), after.given);
	cr_assert_eq(emu_pages_request(e, -40), 0);
	cr_assert_gt(mx5_device_poll_events(dev), 0);
	mx5_device_page_stats(dev, &after);
	cr_assert_eq(after.given, before.given + 60);
	cr_assert_eq(after.reclaimed, 40);
	cr_assert_eq(emu_pages_held(e), after.given);
	cr_assert_eq(mx5_device_shutdown(dev), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(emu_pages_held(e), 0);
	mx5_device_close(dev);
}

static int fatal_events;
static void on_event(void *ctx, const struct mx5_event *ev)
{
	(void)ctx;
	if (ev->type == MX5_EVENT_DEVICE_FATAL)
		fatal_events++;
}

Test(mlx5_bringup, fatal_health_syndrome_marks_device_fatal_and_raises_one_event)
{
	struct mx5_device *dev = open_inspect("emu:");
	fatal_events = 0;
	mx5_device_set_event_handler(dev, on_event, NULL);
	struct mx5_health h;
	cr_assert_eq(mx5_device_check_health(dev, &h), MX5_HEALTH_OK);
	emu_fault_fatal(emu_of(dev), 0x5);
	cr_assert_eq(mx5_device_check_health(dev, &h), MX5_HEALTH_FATAL);
	cr_assert_eq(h.health_syndrome, 0x5);
	cr_assert_eq(mx5_device_check_health(dev, &h), MX5_HEALTH_FATAL);
	cr_assert_eq(fatal_events, 1, "raised once");
	cr_assert(strstr(mx5_device_error(dev), "fatal syndrome 0x5"), "%s", mx5_device_error(dev));
	struct mx5_pd *pd;
	cr_assert_eq(mx5_pd_alloc(dev, &pd), -ENODEV, "no command after fatal");
	mx5_device_close(dev);
}

Test(mlx5_bringup, surprise_removal_is_fatal_and_close_does_not_spin)
{
	struct mx5_device *dev = open_inspect("emu:");
	fatal_events = 0;
	mx5_device_set_event_handler(dev, on_event, NULL);
	emu_surprise_remove(emu_of(dev));
	struct mx5_health h;
	cr_assert_eq(mx5_device_check_health(dev, &h), MX5_HEALTH_REMOVED);
	cr_assert_eq(h.fw_rev, 0xffffffffu);
	cr_assert_eq(fatal_events, 1);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	mx5_device_close(dev);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert_lt(t1.tv_sec - t0.tv_sec, 2, "teardown of a removed device is immediate");
}

Test(mlx5_bringup, device_info_reports_seeded_limits)
{
	struct mx5_device *dev = open_inspect("emu:");
	struct mx5_device_info in;
	cr_assert_eq(mx5_device_query(dev, &in), 0);
	const void *cur = mx5_device_caps(dev, MX5_CAP_GENERAL, 1);
	cr_assert_eq(in.vendor_id, 0x15b3);
	cr_assert_eq(in.cmdif_rev, 5);
	cr_assert_eq(in.max_qp, 1u << PRM_GET(cmd_hca_cap, cur, log_max_qp));
	cr_assert_eq(in.max_cqe, (1u << PRM_GET(cmd_hca_cap, cur, log_max_cq_sz)) - 1);
	cr_assert_geq(in.max_inline_data, 220u);
	mx5_device_close(dev);
}
