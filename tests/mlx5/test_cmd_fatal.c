/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A command waiting when the device enters the error state completes at once with a
 * clear error, instead of waiting out the command timeout (Linux health.c
 * mlx5_enter_error_state() -> cmd.c mlx5_cmd_flush(), mlx5_cmd_trigger_completions():
 * every pending command is completed by force; firmware in a fatal state executes
 * nothing, so no real completion would ever come).
 *
 * The emulated device holds ALLOC_PD (a "hang" rule: no completion), then a second
 * thread raises a fatal health syndrome (emu_fault_fatal: health buffer synd with rfr,
 * health counter stopped; no event is posted, as a firmware assert posts none).  The
 * command timeout is long (CMD_TIMEOUT_MS); the command must end within ABORT_BOUND_MS
 * of the fatal error, in event mode and in polling mode. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "hw/emu/emu.h"
#include "hw/mlx5/mx5.h"

#define CMD_TIMEOUT_MS 4000
#define FATAL_AFTER_MS 150
#define ABORT_BOUND_MS 1000   /* generous for a loaded 2-CPU machine; measured ~10 ms */

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void *raise_fatal(void *arg)
{
	struct timespec d = { 0, FATAL_AFTER_MS * 1000000L };
	nanosleep(&d, NULL);
	emu_fault_fatal(arg, 0x7);
	return NULL;
}

static int fatal_events;

static void on_event(void *ctx, const struct mx5_event *ev)
{
	(void)ctx;
	if (ev->type == MX5_EVENT_DEVICE_FATAL)
		fatal_events++;
}

static void command_waiting_at_fatal_ends_promptly(unsigned flags)
{
	struct mx5_open_attr a = { .flags = flags, .cmd_timeout_ms = CMD_TIMEOUT_MS };
	struct mx5_device *dev = NULL;
	cr_assert_eq(mx5_device_open_attr("emu:", &a, &dev), 0, "%s", mx5_open_error());
	struct emu_dev *e = emu_device_from_shim(mx5_device_shim(dev));
	cr_assert_not_null(e);
	fatal_events = 0;
	mx5_device_set_event_handler(dev, on_event, NULL);
	cr_assert_eq(emu_fault_hang(e, PRM_CMD_OP_ALLOC_PD), 0);

	pthread_t th;
	struct mx5_pd *pd = NULL;
	double t0 = now_ms();
	cr_assert_eq(pthread_create(&th, NULL, raise_fatal, e), 0);
	int rc = mx5_pd_alloc(dev, &pd);
	double took = now_ms() - t0;
	pthread_join(th, NULL);

	cr_assert_eq(rc, -ENODEV, "rc %d after %.0f ms: %s", rc, took, mx5_device_error(dev));
	cr_assert_lt(took, FATAL_AFTER_MS + ABORT_BOUND_MS, "the command waited %.0f ms (timeout %u ms)", took,
		     CMD_TIMEOUT_MS);
	const char *msg = mx5_device_error(dev);
	cr_assert(strstr(msg, "ALLOC_PD") && strstr(msg, "error state") && strstr(msg, "syndrome 0x7"), "%s", msg);
	cr_assert_eq(mx5_device_is_fatal(dev), 1);
	cr_assert_eq(fatal_events, 1);
	/* and the next command is refused at once */
	t0 = now_ms();
	cr_assert_eq(mx5_pd_alloc(dev, &pd), -ENODEV);
	cr_assert_lt(now_ms() - t0, 100);
	cr_log_info("command ended %.0f ms after it was posted (fatal at %d ms, timeout %d ms)", took,
		    FATAL_AFTER_MS, CMD_TIMEOUT_MS);
	mx5_device_close(dev);
}

Test(cmd_fatal, a_command_waiting_in_event_mode_ends_when_the_device_goes_fatal, .timeout = 30)
{
	command_waiting_at_fatal_ends_promptly(0);
}

Test(cmd_fatal, a_command_waiting_in_polling_mode_ends_when_the_device_goes_fatal, .timeout = 30)
{
	command_waiting_at_fatal_ends_promptly(MX5_OPEN_CMD_POLLING);
}
