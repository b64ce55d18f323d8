/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Commands held for pages (hw/emu/hold.c): the device keeps a command's entry owned,
 * raises PAGE_REQUEST, and completes the command only after MANAGE_PAGES on another
 * slot of the queue moved the pages (PRM "Page Request Event").  The test plays the
 * driver: its wait callback drains the EQ and answers the request through the command
 * engine's second slot. */
#include "tests/emu/emu_test.h"

struct drv {
	struct et *t;
	struct et_eq eq;
	int32_t requested;          /* num_pages of the PAGE_REQUEST seen */
	unsigned requests;
	int nested_rc;
	uint64_t creates_at_request; /* CREATE_EQ executed when the request came */
	struct shim_dma mem;        /* pages given in answer */
};

static void give(struct drv *s, int32_t n)
{
	size_t len = PRM_SIZE(manage_pages_in) + (size_t)n * 8;
	uint8_t *in = calloc(1, len), out[16];

	cr_assert_eq(shim_dma_alloc(s->t->dev, (size_t)n * 4096, 4096, &s->mem), 0);
	PRM_SET(manage_pages_in, in, opcode, PRM_CMD_OP_MANAGE_PAGES);
	PRM_SET(manage_pages_in, in, op_mod, 1);
	PRM_SET(manage_pages_in, in, input_num_entries, n);
	for (int32_t i = 0; i < n; i++)
		prm_bits_set64(in + PRM_SIZE(manage_pages_in), (unsigned)(i * 64), s->mem.iova + (uint64_t)i * 4096);
	s->nested_rc = cmdq_exec_nested(s->t->q, in, len, out, sizeof(out));
	free(in);
}

static int drv_wait(void *ctx, unsigned timeout_ms)
{
	struct drv *s = ctx;
	const uint8_t *e;
	struct timespec ts = { 0, 100000 };

	(void)timeout_ms;
	while ((e = et_eq_next(&s->eq))) {
		const uint8_t *data = PRM_ADDR(eqe, e, event_data);
		unsigned type = (unsigned)PRM_GET(eqe, e, event_type);

		if (type == 0x0a) {         /* CMD */
			cmdq_event_complete(s->t->q, (uint32_t)PRM_GET(cmd_inter_comp_event, data,
								       command_completion_vector));
		} else if (type == 0x0b) {  /* PAGE_REQUEST */
			struct emu_counters c;

			emu_counters(s->t->emu, &c);
			s->creates_at_request = c.cmd_by_opcode[PRM_CMD_OP_CREATE_EQ];
			s->requested = (int32_t)(uint32_t)PRM_GET(pages_req_event, data, num_pages);
			s->requests++;
			if (s->requested > 0)
				give(s, s->requested);
		}
	}
	et_eq_doorbell(s->t, &s->eq, 1, s->eq.cc);
	nanosleep(&ts, NULL);
	return 0;
}

Test(emu_hold, held_command_completes_after_manage_pages_on_the_last_slot)
{
	struct et t;
	struct drv s = { .t = &t, .nested_rc = 1 };
	struct et_eq second;
	struct emu_counters c;

	/* @1: the first CREATE_EQ (the async EQ, which nobody could hear a request on
	 * before it exists) runs; the second is held for 16 pages. */
	et_open(&t, "emu:pagehold=CREATE_EQ:16@1");
	et_bringup(&t);
	uint32_t uar = et_alloc_uar(&t);
	et_expect(&t, et_create_eq(&t, &s.eq, uar, 4, 0, ET_EVBIT(0x0a) | ET_EVBIT(0x0b)), 0, 0);
	et_eq_doorbell(&t, &s.eq, 1, 0);
	cmdq_set_event_mode(t.q, drv_wait, &s);

	et_expect(&t, et_create_eq(&t, &second, uar, 4, 1, 0), 0, 0);
	emu_counters(t.emu, &c);
	cr_assert_eq(c.cmds_held, 1);
	cr_assert_eq(s.requests, 1);
	cr_assert_eq(s.requested, 16);
	cr_assert_eq(s.nested_rc, 0, "%s", cmdq_error(t.q));
	cr_assert_eq(s.creates_at_request, 1, "the held CREATE_EQ had not run when the pages were asked for");
	cr_assert_eq(c.cmd_by_opcode[PRM_CMD_OP_CREATE_EQ], 2);
	cr_assert_eq(emu_pages_held(t.emu), t.npages + 16);

	cmdq_set_polling_mode(t.q);
	et_expect(&t, et_destroy_eq(&t, second.eqn), 0, 0);
	et_expect(&t, et_destroy_eq(&t, s.eq.eqn), 0, 0);
	et_teardown(&t);
	emu_counters(t.emu, &c);
	cr_assert_eq(c.pages_held, 0);
	cr_assert_eq(c.pages_given, c.pages_taken);
	shim_dma_free(t.dev, &s.mem);
	shim_dma_free(t.dev, &s.eq.buf);
	shim_dma_free(t.dev, &second.buf);
	et_close(&t);
}

Test(emu_hold, bad_page_hold_options_are_refused)
{
	struct shim_dev *d = NULL;
	char err[256];

	cr_assert_eq(shim_open("emu:pagehold=CREATE_CQ:0", &d, err, sizeof(err)), -EINVAL);
	cr_assert_eq(shim_open("emu:pagehold=CREATE_CQ", &d, err, sizeof(err)), -EINVAL);
	cr_assert_eq(shim_open("emu:pagehold=NOT_AN_OPCODE:8", &d, err, sizeof(err)), -EINVAL);
	cr_assert_eq(shim_open("emu:cmdq_entries=3", &d, err, sizeof(err)), -EINVAL);
	cr_assert_eq(shim_open("emu:icm=many", &d, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "icm=N"), "%s", err);
}
