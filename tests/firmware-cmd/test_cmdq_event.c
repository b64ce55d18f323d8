/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Completion by event (PRM "Command Completion": once an EQ exists the device reports a
 * finished command with a CMD completion EQE).  The scripted device answers but keeps
 * ownership; the test's wait callback plays the EQ: it releases the entry and forwards
 * the completion vector with cmdq_event_complete(). */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "tests/firmware-cmd/cmdq_testlib.h"

struct eq_sim {
	struct cmdq_fix *f;
	unsigned calls;
	unsigned owned_at_first_call;  /* entry still owned by hardware when the wait began */
	uint32_t vector;               /* what the "EQE" reports */
	bool deliver;
};

static void reply_hold(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	uint8_t out[32];

	(void)ctx;
	cmdq_fill_out(out, sizeof(out));
	scripted_cmd_reply(d, c, out, sizeof(out));
	scripted_cmd_complete(d, c, 0, true);
}

static int eq_wait(void *ctx, unsigned timeout_ms)
{
	struct eq_sim *s = ctx;
	uint64_t iova = scripted_dev_cmdq_iova(s->f->d);
	const uint8_t *e = scripted_dev_iova_to_va(s->f->d, iova, 64);

	(void)timeout_ms;
	if (s->calls++ == 0)
		s->owned_at_first_call = (unsigned)PRM_GET(cmd_queue_entry, e, ownership);
	if (!s->deliver) {
		struct timespec ts = { 0, 2000000 };

		nanosleep(&ts, NULL);
		return -ETIMEDOUT;
	}
	scripted_dev_release(s->f->d, 0);
	cmdq_event_complete(s->f->q, s->vector);
	return 0;
}

Test(cmdq_event, completes_when_the_event_reports_the_slot)
{
	struct cmdq_fix f;
	struct eq_sim s = { .f = &f, .vector = 1u << 0, .deliver = true };
	uint8_t in[16], out[32], want[32];

	cmdq_fix_up(&f, NULL, false);
	scripted_dev_set_responder(f.d, reply_hold, NULL);
	cmdq_set_event_mode(f.q, eq_wait, &s);
	cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_CREATE_CQ);
	cmdq_fill_out(want, sizeof(want));
	cr_assert_eq(cmdq_exec(f.q, in, sizeof(in), out, sizeof(out)), 0, "%s", cmdq_error(f.q));
	cr_assert_geq(s.calls, 1, "the engine never waited for the event");
	cr_assert_eq(s.owned_at_first_call, 1, "the device still owned the entry when the wait began");
	cr_assert_eq(memcmp(out, want, sizeof(out)), 0);
	cmdq_fix_down(&f);
}

Test(cmdq_event, no_event_times_out_within_the_bound)
{
	struct cmdq_config cfg = { .timeout_ms = 40 };
	struct cmdq_fix f;
	struct eq_sim s = { .f = &f, .vector = 1u << 0, .deliver = false };
	uint8_t in[16], out[16];

	cmdq_fix_up(&f, &cfg, false);
	scripted_dev_set_responder(f.d, reply_hold, NULL);
	cmdq_set_event_mode(f.q, eq_wait, &s);
	cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_CREATE_EQ);
	cr_assert_eq(cmdq_exec(f.q, in, sizeof(in), out, sizeof(out)), -ETIMEDOUT);
	cr_assert_str_eq(cmdq_error(f.q), "CREATE_EQ: timeout after 40 ms");
	cr_assert_gt(s.calls, 1, "the engine must keep waiting until the deadline");
	cmdq_fix_down(&f);
}

Test(cmdq_event, event_for_another_slot_does_not_complete_the_command)
{
	struct cmdq_config cfg = { .timeout_ms = 40 };
	struct cmdq_fix f;
	struct eq_sim s = { .f = &f, .vector = 1u << 1, .deliver = true };
	uint8_t in[16], out[16];

	cmdq_fix_up(&f, &cfg, false);
	scripted_dev_set_responder(f.d, reply_hold, NULL);
	cmdq_set_event_mode(f.q, eq_wait, &s);
	cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_CREATE_EQ);
	cr_assert_eq(cmdq_exec(f.q, in, sizeof(in), out, sizeof(out)), -ETIMEDOUT);
	cmdq_fix_down(&f);
}

static int eq_wait_fails(void *ctx, unsigned timeout_ms)
{
	(void)ctx, (void)timeout_ms;
	return -EIO;
}

Test(cmdq_event, failing_wait_callback_is_reported)
{
	struct cmdq_fix f;
	uint8_t in[16], out[16];

	cmdq_fix_up(&f, NULL, false);
	scripted_dev_set_responder(f.d, reply_hold, NULL);
	cmdq_set_event_mode(f.q, eq_wait_fails, NULL);
	cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_DESTROY_EQ);
	cr_assert_eq(cmdq_exec(f.q, in, sizeof(in), out, sizeof(out)), -EIO);
	cr_assert(strstr(cmdq_error(f.q), "DESTROY_EQ: waiting for the completion event failed") != NULL, "%s",
		  cmdq_error(f.q));
	cmdq_fix_down(&f);
}

Test(cmdq_event, polling_mode_again_completes_without_the_callback)
{
	struct cmdq_fix f;
	struct eq_sim s = { .f = &f, .vector = 1u << 0, .deliver = true };
	uint8_t in[16], out[16];

	cmdq_fix_up(&f, NULL, false);
	cmdq_set_event_mode(f.q, eq_wait, &s);
	cmdq_set_polling_mode(f.q);
	cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_NOP);
	cr_assert_eq(cmdq_exec(f.q, in, sizeof(in), out, sizeof(out)), 0, "%s", cmdq_error(f.q));
	cr_assert_eq(s.calls, 0);
	cmdq_fix_down(&f);
}

/* ---- threads sharing one queue (the mutex serialises them on slot 0) ---- */

struct worker {
	struct cmdq *q;
	uint16_t opcode;
	int failures;
};

static void reply_echo_opcode(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	uint8_t out[16 + 600] = { 0 };

	(void)ctx;
	/* Echo the opcode and the last input byte, so a mixed-up command shows. */
	PRM_SET(cmd_out, out, command_output, ((uint32_t)c->opcode << 8) | c->in[c->inlen - 1]);
	out[sizeof(out) - 1] = (uint8_t)c->opcode;
	scripted_cmd_reply(d, c, out, sizeof(out));
	scripted_cmd_complete(d, c, 0, false);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint8_t in[700], out[16 + 600];

	cmdq_fill_in(in, sizeof(in), w->opcode);
	for (int i = 0; i < 300; i++) {
		in[sizeof(in) - 1] = (uint8_t)i;
		if (cmdq_exec(w->q, in, sizeof(in), out, sizeof(out)) != 0 ||
		    PRM_GET(cmd_out, out, command_output) != (((uint32_t)w->opcode << 8) | (uint8_t)i) ||
		    out[sizeof(out) - 1] != (uint8_t)w->opcode)
			w->failures++;
	}
	return NULL;
}

Test(cmdq_threads, two_threads_share_the_queue_without_mixing_commands)
{
	struct cmdq_fix f;
	struct worker w[2];
	pthread_t t[2];

	cmdq_fix_up(&f, NULL, false);
	scripted_dev_set_responder(f.d, reply_echo_opcode, NULL);
	w[0] = (struct worker){ .q = f.q, .opcode = PRM_CMD_OP_CREATE_QP };
	w[1] = (struct worker){ .q = f.q, .opcode = PRM_CMD_OP_CREATE_CQ };
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	cr_assert_eq(w[0].failures, 0);
	cr_assert_eq(w[1].failures, 0);
	cr_assert_eq(f.d->commands, 600);
	cmdq_fix_down(&f);
}
