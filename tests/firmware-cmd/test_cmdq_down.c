/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The device's error state (cmdq_set_down, cmdq_set_health_check): a command waiting
 * when the device dies ends at once, not at the command timeout, and later commands are
 * not sent (Linux health.c mlx5_enter_error_state() -> cmd.c mlx5_cmd_flush(),
 * mlx5_cmd_trigger_completions(), mlx5_cmd_is_down()).  The scripted device never
 * completes the command (firmware in a fatal state executes nothing). */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "tests/firmware-cmd/cmdq_testlib.h"

#define LONG_TIMEOUT_MS 5000
#define DOWN_AFTER_MS 60
#define BOUND_MS 1000   /* generous for a loaded machine; measured a few ms */

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void reply_never(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	(void)d, (void)c, (void)ctx;
}

static void *down_later(void *arg)
{
	struct timespec ts = { 0, DOWN_AFTER_MS * 1000000L };
	nanosleep(&ts, NULL);
	cmdq_set_down(arg, -ENODEV, "health: fatal syndrome 0x7");
	return NULL;
}

static int eq_wait_nothing(void *ctx, unsigned timeout_ms)
{
	(void)ctx;
	struct timespec ts = { 0, (long)(timeout_ms < 5 ? timeout_ms : 5) * 1000000L };
	nanosleep(&ts, NULL);
	return -ETIMEDOUT;
}

/* Another thread puts the queue down while a command waits. */
static void down_from_another_thread(bool events)
{
	struct cmdq_config cfg = { .timeout_ms = LONG_TIMEOUT_MS };
	struct cmdq_fix f;
	uint8_t in[16], out[16];
	pthread_t th;

	cmdq_fix_up(&f, &cfg, false);
	scripted_dev_set_responder(f.d, reply_never, NULL);
	if (events)
		cmdq_set_event_mode(f.q, eq_wait_nothing, NULL);
	cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_CREATE_CQ);
	double t0 = now_ms();
	cr_assert_eq(pthread_create(&th, NULL, down_later, f.q), 0);
	int rc = cmdq_exec(f.q, in, sizeof(in), out, sizeof(out));
	double took = now_ms() - t0;
	pthread_join(th, NULL);
	cr_assert_eq(rc, -ENODEV, "rc %d after %.0f ms: %s", rc, took, cmdq_error(f.q));
	cr_assert_lt(took, DOWN_AFTER_MS + BOUND_MS, "waited %.0f ms", took);
	cr_assert_str_eq(cmdq_error(f.q),
			 "CREATE_CQ: aborted: the device entered the error state (health: fatal syndrome 0x7)");
	cr_assert_eq(cmdq_is_down(f.q), -ENODEV);
	/* the next command is not sent */
	unsigned posted = f.d->doorbells;
	cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_QUERY_HCA_CAP);
	cr_assert_eq(cmdq_exec(f.q, in, sizeof(in), out, sizeof(out)), -ENODEV);
	cr_assert_str_eq(cmdq_error(f.q),
			 "QUERY_HCA_CAP: not sent: the device is in the error state (health: fatal syndrome 0x7)");
	/* a teardown command is not sent either, but succeeds with an OK status, so that the
	 * host's side of the object can go (Linux cmd.c mlx5_internal_err_ret_value()) */
	static const uint16_t teardown[] = { PRM_CMD_OP_DESTROY_CQ, PRM_CMD_OP_DESTROY_QP,
					     PRM_CMD_OP_DESTROY_RMP, PRM_CMD_OP_DEALLOC_PD,
					     PRM_CMD_OP_DESTROY_MKEY, PRM_CMD_OP_MANAGE_PAGES,
					     PRM_CMD_OP_TEARDOWN_HCA };
	for (size_t i = 0; i < sizeof(teardown) / sizeof(teardown[0]); i++) {
		cmdq_fill_in(in, sizeof(in), teardown[i]);
		memset(out, 0xff, sizeof(out));
		cr_assert_eq(cmdq_exec(f.q, in, sizeof(in), out, sizeof(out)), 0, "opcode 0x%x", teardown[i]);
		cr_assert_eq(PRM_GET(cmd_out, out, status), 0, "opcode 0x%x", teardown[i]);
		cr_assert_eq(PRM_GET(cmd_out, out, syndrome), 0, "opcode 0x%x", teardown[i]);
	}
	cr_assert_eq(f.d->doorbells, posted, "nothing rang the doorbell");
	cmdq_fix_down(&f);
}

Test(cmdq_down, a_polling_command_ends_when_another_thread_puts_the_queue_down, .timeout = 20)
{
	down_from_another_thread(false);
}

Test(cmdq_down, an_event_mode_command_ends_when_another_thread_puts_the_queue_down, .timeout = 20)
{
	down_from_another_thread(true);
}

struct health_sim {
	struct cmdq *q;
	unsigned calls, down_at;
	bool on_waiting_thread;
};

static void health_check(void *ctx)
{
	struct health_sim *h = ctx;
	/* it may switch the queue to polling from here (the mutex is this thread's) */
	cmdq_set_polling_mode(h->q);
	h->on_waiting_thread = true;
	if (++h->calls == h->down_at)
		cmdq_set_down(h->q, -ENODEV, "health: NIC interface disabled");
}

static void health_check_finds_death(bool events)
{
	struct cmdq_config cfg = { .timeout_ms = LONG_TIMEOUT_MS };
	struct cmdq_fix f;
	struct health_sim h = { .down_at = 3 };
	uint8_t in[16], out[16];

	cmdq_fix_up(&f, &cfg, false);
	h.q = f.q;
	scripted_dev_set_responder(f.d, reply_never, NULL);
	if (events)
		cmdq_set_event_mode(f.q, eq_wait_nothing, NULL);
	cmdq_set_health_check(f.q, health_check, &h);
	cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_QUERY_HCA_CAP);
	double t0 = now_ms();
	int rc = cmdq_exec(f.q, in, sizeof(in), out, sizeof(out));
	double took = now_ms() - t0;
	cr_assert_eq(rc, -ENODEV, "rc %d after %.0f ms: %s", rc, took, cmdq_error(f.q));
	cr_assert_eq(h.calls, 3);
	/* three looks, CMDQ_HEALTH_CHECK_MS apart, the first that long after the post */
	cr_assert_geq(took, 3 * CMDQ_HEALTH_CHECK_MS - 2, "%.0f ms", took);
	cr_assert_lt(took, 3 * CMDQ_HEALTH_CHECK_MS + BOUND_MS, "%.0f ms", took);
	cr_assert(strstr(cmdq_error(f.q), "QUERY_HCA_CAP: aborted") &&
		  strstr(cmdq_error(f.q), "NIC interface disabled"), "%s", cmdq_error(f.q));
	cmdq_fix_down(&f);
}

Test(cmdq_down, the_health_check_ends_a_polling_command_when_it_finds_the_device_dead, .timeout = 20)
{
	health_check_finds_death(false);
}

Test(cmdq_down, the_health_check_ends_an_event_mode_command_when_it_finds_the_device_dead, .timeout = 20)
{
	health_check_finds_death(true);
}

static void reply_ok(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	uint8_t o[16];
	(void)ctx;
	cmdq_fill_out(o, sizeof(o));
	scripted_cmd_reply(d, c, o, sizeof(o));
	scripted_cmd_complete(d, c, 0, false);
}

Test(cmdq_down, a_command_that_completes_in_time_never_runs_the_health_check)
{
	struct cmdq_fix f;
	struct health_sim h = { .down_at = 1 };
	uint8_t in[16], out[16];

	cmdq_fix_up(&f, NULL, false);
	h.q = f.q;
	scripted_dev_set_responder(f.d, reply_ok, NULL);
	cmdq_set_health_check(f.q, health_check, &h);
	for (int i = 0; i < 50; i++) {
		cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_QUERY_HCA_CAP);
		cr_assert_eq(cmdq_exec(f.q, in, sizeof(in), out, sizeof(out)), 0, "%s", cmdq_error(f.q));
	}
	cr_assert_eq(h.calls, 0);
	cr_assert_eq(cmdq_is_down(f.q), 0);
	cmdq_fix_down(&f);
}
