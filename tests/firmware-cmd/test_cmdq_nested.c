/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The second command slot (cmdq_exec_nested): a command issued from inside the wait for
 * a slot 0 command, as MANAGE_PAGES answering a PAGE_REQUEST must be when firmware
 * holds the slot 0 command until it gets pages (rdma-core providers/mlx5/mlx5_vfio.c
 * uses slot MLX5_MAX_COMMANDS - 1).  The scripted device keeps slot 0 owned until the
 * test's wait callback releases it, and answers any other slot at once. */
#include <errno.h>

#include "tests/firmware-cmd/cmdq_testlib.h"

struct nest {
	struct scripted_dev *d;
	struct cmdq *q;
	unsigned slots[8];           /* slot of each command the device saw, in order */
	unsigned ncmds;
	uint8_t nested_status;       /* firmware status the device gives nested commands */
	bool nest;                   /* issue a nested command on the first wait */
	int nested_rc;
	unsigned owned0_at_nested;   /* slot 0 still owned by the device meanwhile */
	unsigned waits, waits_after_nested;
};

static void respond(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	struct nest *s = ctx;
	uint8_t out[16] = { 0 };

	if (s->ncmds < 8)
		s->slots[s->ncmds++] = c->slot;
	if (c->slot != 0)
		PRM_SET(cmd_out, out, status, s->nested_status);
	scripted_cmd_reply(d, c, out, sizeof(out));
	scripted_cmd_complete(d, c, 0, c->slot == 0);
}

static int wait_fn(void *ctx, unsigned timeout_ms)
{
	struct nest *s = ctx;
	const uint8_t *e0 = scripted_dev_iova_to_va(s->d, scripted_dev_cmdq_iova(s->d), 64);

	(void)timeout_ms;
	if (s->waits++ == 0 && s->nest) {
		uint8_t in[16], out[16];

		cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_MANAGE_PAGES);
		s->nested_rc = cmdq_exec_nested(s->q, in, sizeof(in), out, sizeof(out));
		s->owned0_at_nested = (unsigned)PRM_GET(cmd_queue_entry, e0, ownership);
		s->waits_after_nested = s->waits;
	}
	scripted_dev_release(s->d, 0);
	cmdq_event_complete(s->q, 1u << 0);
	return 0;
}

static void up(struct nest *s, unsigned log_cmdq_size)
{
	struct scripted_config cfg = { .cmd_interface_rev = 5, .log_cmdq_size = log_cmdq_size,
				       .log_cmdq_stride = 6 };

	s->d = scripted_dev_create(&cfg);
	cr_assert_not_null(s->d);
	cr_assert_eq(cmdq_create(&s->d->shim, &s->d->bar, NULL, &s->q), 0, "%s", s->d->shim.err);
	scripted_dev_set_responder(s->d, respond, s);
	cmdq_set_event_mode(s->q, wait_fn, s);
}

static void down(struct nest *s)
{
	cmdq_destroy(s->q);
	scripted_dev_destroy(s->d);
}

static int exec_create_cq(struct nest *s)
{
	uint8_t in[16], out[16];

	cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_CREATE_CQ);
	return cmdq_exec(s->q, in, sizeof(in), out, sizeof(out));
}

Test(cmdq_nested, runs_on_the_last_entry_while_slot_0_is_outstanding)
{
	struct nest s = { .nest = true, .nested_rc = 1 };

	up(&s, 5);
	cr_assert_eq(cmdq_nested_slot(s.q), 31);
	cr_assert_eq(exec_create_cq(&s), 0, "%s", cmdq_error(s.q));
	cr_assert_eq(s.nested_rc, 0, "nested: %s", cmdq_error(s.q));
	cr_assert_eq(s.ncmds, 2);
	cr_assert_eq(s.slots[0], 0);
	cr_assert_eq(s.slots[1], 31, "nested command went to slot %u", s.slots[1]);
	cr_assert_eq(s.owned0_at_nested, 1, "slot 0 was still the device's meanwhile");
	cr_assert_eq(s.waits_after_nested, 1, "the nested command must not call the wait function");
	down(&s);
}

Test(cmdq_nested, failure_of_the_nested_command_leaves_the_outer_status_alone)
{
	struct nest s = { .nest = true, .nested_status = PRM_CMD_STAT_BAD_PARAM };

	up(&s, 5);
	cr_assert_eq(exec_create_cq(&s), 0, "%s", cmdq_error(s.q));
	cr_assert_eq(s.nested_rc, prm_cmd_status_errno(PRM_CMD_STAT_BAD_PARAM));
	cr_assert_eq(cmdq_last_status(s.q), 0, "the outer command succeeded");
	cr_assert_str_eq(cmdq_error(s.q), "");
	down(&s);
}

Test(cmdq_nested, outside_a_wait_is_refused_without_touching_the_device)
{
	struct nest s = { 0 };
	uint8_t in[16], out[16];

	up(&s, 5);
	cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_MANAGE_PAGES);
	cr_assert_eq(cmdq_exec_nested(s.q, in, sizeof(in), out, sizeof(out)), -EPERM);
	cr_assert_eq(s.d->doorbells, 0);
	down(&s);
}

Test(cmdq_nested, single_entry_queue_has_no_second_slot)
{
	struct nest s = { .nest = true, .nested_rc = 1 };

	up(&s, 0);
	cr_assert_eq(cmdq_nested_slot(s.q), -EOPNOTSUPP);
	cr_assert_eq(exec_create_cq(&s), 0, "%s", cmdq_error(s.q));
	cr_assert_eq(s.nested_rc, -EOPNOTSUPP);
	cr_assert_eq(s.ncmds, 1, "only the slot 0 command reached the device");
	down(&s);
}
