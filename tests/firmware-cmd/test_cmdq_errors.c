/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What the engine does when the device or the firmware says no: delivery statuses,
 * tokens, signatures, timeouts, firmware statuses and syndromes, bad arguments.
 * Each error is an errno plus the exact message docs/architecture.md ("The command interface") gives. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/firmware-cmd/cmdq_testlib.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int run(struct cmdq_fix *f, uint16_t opcode, size_t inlen, uint8_t *out, size_t outlen)
{
	uint8_t in[64];

	cmdq_fill_in(in, inlen, opcode);
	return cmdq_exec(f->q, in, inlen, out, outlen);
}

/* ---- delivery status (cmd_queue_entry.status) ---- */

static void reply_delivery(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	scripted_cmd_reply(d, c, NULL, 0);
	scripted_cmd_complete(d, c, (uint8_t)(uintptr_t)ctx, false);
}

static void check_delivery(uint8_t status, const char *want)
{
	struct cmdq_fix f;
	uint8_t out[16];
	int rc;

	cmdq_fix_up(&f, NULL, false);
	scripted_dev_set_responder(f.d, reply_delivery, (void *)(uintptr_t)status);
	rc = run(&f, PRM_CMD_OP_QUERY_HCA_CAP, 16, out, sizeof(out));
	cr_assert_eq(rc, -EIO, "delivery status 0x%x: rc %d", status, rc);
	cr_assert_str_eq(cmdq_error(f.q), want);
	cr_assert_eq(cmdq_last_status(f.q), 0, "no firmware status when delivery failed");
	cmdq_fix_down(&f);
}

Test(cmdq_delivery, signature_error_0x1) { check_delivery(0x1, "QUERY_HCA_CAP: delivery status signature error (0x1)"); }
Test(cmdq_delivery, token_error_0x2) { check_delivery(0x2, "QUERY_HCA_CAP: delivery status token error (0x2)"); }
Test(cmdq_delivery, bad_block_number_0x3) { check_delivery(0x3, "QUERY_HCA_CAP: delivery status bad block number (0x3)"); }
Test(cmdq_delivery, output_pointer_not_aligned_0x4) { check_delivery(0x4, "QUERY_HCA_CAP: delivery status output pointer not aligned to block size (0x4)"); }
Test(cmdq_delivery, input_pointer_not_aligned_0x5) { check_delivery(0x5, "QUERY_HCA_CAP: delivery status input pointer not aligned to block size (0x5)"); }
Test(cmdq_delivery, firmware_internal_error_0x6) { check_delivery(0x6, "QUERY_HCA_CAP: delivery status firmware internal error (0x6)"); }
Test(cmdq_delivery, input_length_error_0x7) { check_delivery(0x7, "QUERY_HCA_CAP: delivery status command input length error (0x7)"); }
Test(cmdq_delivery, output_length_error_0x8) { check_delivery(0x8, "QUERY_HCA_CAP: delivery status command output length error (0x8)"); }
Test(cmdq_delivery, reserved_fields_not_cleared_0x9) { check_delivery(0x9, "QUERY_HCA_CAP: delivery status reserved fields not cleared (0x9)"); }
Test(cmdq_delivery, bad_command_descriptor_type_0x10) { check_delivery(0x10, "QUERY_HCA_CAP: delivery status bad command descriptor type (0x10)"); }

/* ---- tokens ---- */

static void reply_wrong_entry_token(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	(void)ctx;
	scripted_cmd_reply(d, c, NULL, 0);
	PRM_SET(cmd_queue_entry, c->entry, token, (uint8_t)(c->token + 1));
	scripted_cmd_complete(d, c, 0, false);
}

Test(cmdq_token, wrong_token_in_the_entry_is_an_io_error)
{
	struct cmdq_fix f;
	uint8_t out[16];

	cmdq_fix_up(&f, NULL, false);
	scripted_dev_set_responder(f.d, reply_wrong_entry_token, NULL);
	cr_assert_eq(run(&f, PRM_CMD_OP_CREATE_QP, 16, out, sizeof(out)), -EIO);
	cr_assert(strstr(cmdq_error(f.q), "CREATE_QP: entry returned with token") != NULL, "%s", cmdq_error(f.q));
	cmdq_fix_down(&f);
}

static void reply_wrong_box_token(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	size_t k = (size_t)(uintptr_t)ctx;

	scripted_cmd_reply(d, c, NULL, 0);
	cr_assert_gt(c->nout, k);
	PRM_SET(cmd_if_box, c->out_box[k], token, (uint8_t)(c->token ^ 0x80));
	scripted_cmd_complete(d, c, 0, false);
}

Test(cmdq_token, wrong_token_in_an_output_mailbox_names_the_block)
{
	struct cmdq_fix f;
	uint8_t out[0x1010];

	cmdq_fix_up(&f, NULL, false);
	scripted_dev_set_responder(f.d, reply_wrong_box_token, (void *)(uintptr_t)3);
	cr_assert_eq(run(&f, PRM_CMD_OP_QUERY_HCA_CAP, 16, out, sizeof(out)), -EIO);
	cr_assert(strstr(cmdq_error(f.q), "QUERY_HCA_CAP: output mailbox 3 returned with token") != NULL, "%s",
		  cmdq_error(f.q));
	cmdq_fix_down(&f);
}

/* ---- signatures ---- */

static void reply_bad_entry_sig(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	(void)ctx;
	scripted_cmd_reply(d, c, NULL, 0);
	scripted_cmd_complete(d, c, 0, false);
	PRM_SET(cmd_queue_entry, c->entry, signature, PRM_GET(cmd_queue_entry, c->entry, signature) ^ 0x01);
}

static void reply_bad_box_sig(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	(void)ctx;
	scripted_cmd_reply(d, c, NULL, 0);
	/* One data byte changed after signing: only the whole-block signature catches it. */
	PRM_ADDR(cmd_if_box, c->out_box[1], mailbox_data)[100] ^= 0x40;
	scripted_cmd_complete(d, c, 0, false);
}

static void reply_bad_ctrl_sig(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	(void)ctx;
	scripted_cmd_reply(d, c, NULL, 0);
	/* Both signature bytes changed together: the block XOR still holds, only the
	 * control signature (bytes 512..574) shows the damage. */
	PRM_SET(cmd_if_box, c->out_box[0], ctrl_signature, PRM_GET(cmd_if_box, c->out_box[0], ctrl_signature) ^ 0x10);
	PRM_SET(cmd_if_box, c->out_box[0], signature, PRM_GET(cmd_if_box, c->out_box[0], signature) ^ 0x10);
	scripted_cmd_complete(d, c, 0, false);
}

Test(cmdq_signature, bad_entry_signature_is_an_io_error_when_verification_is_on)
{
	struct cmdq_config cfg = { .use_signatures = 1, .verify_signatures = 1 };
	struct cmdq_fix f;
	uint8_t out[16];

	cmdq_fix_up(&f, &cfg, true);
	scripted_dev_set_responder(f.d, reply_bad_entry_sig, NULL);
	cr_assert_eq(run(&f, PRM_CMD_OP_CREATE_EQ, 16, out, sizeof(out)), -EIO);
	cr_assert_str_eq(cmdq_error(f.q), "CREATE_EQ: bad entry signature on completion");
	cmdq_fix_down(&f);
}

Test(cmdq_signature, bad_output_mailbox_signature_names_the_block)
{
	struct cmdq_config cfg = { .use_signatures = 1, .verify_signatures = 1 };
	struct cmdq_fix f;
	uint8_t out[16 + 1024];

	cmdq_fix_up(&f, &cfg, true);
	scripted_dev_set_responder(f.d, reply_bad_box_sig, NULL);
	cr_assert_eq(run(&f, PRM_CMD_OP_QUERY_HCA_CAP, 16, out, sizeof(out)), -EIO);
	cr_assert_str_eq(cmdq_error(f.q), "QUERY_HCA_CAP: bad signature on output mailbox 1");
	cmdq_fix_down(&f);
}

Test(cmdq_signature, bad_output_mailbox_control_signature_is_caught)
{
	struct cmdq_config cfg = { .use_signatures = 1, .verify_signatures = 1 };
	struct cmdq_fix f;
	uint8_t out[16 + 512];

	cmdq_fix_up(&f, &cfg, true);
	scripted_dev_set_responder(f.d, reply_bad_ctrl_sig, NULL);
	cr_assert_eq(run(&f, PRM_CMD_OP_QUERY_HCA_CAP, 16, out, sizeof(out)), -EIO);
	cr_assert_str_eq(cmdq_error(f.q), "QUERY_HCA_CAP: bad signature on output mailbox 0");
	cmdq_fix_down(&f);
}

Test(cmdq_signature, signatures_are_not_checked_when_off)
{
	struct cmdq_fix f;
	uint8_t out[16 + 1024];

	cmdq_fix_up(&f, NULL, false);
	scripted_dev_set_responder(f.d, reply_bad_box_sig, NULL);
	cr_assert_eq(run(&f, PRM_CMD_OP_QUERY_HCA_CAP, 16, out, sizeof(out)), 0, "%s", cmdq_error(f.q));
	cmdq_fix_down(&f);
}

/* ---- timeout ---- */

static void reply_never(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	(void)d, (void)c, (void)ctx;
}

Test(cmdq_timeout, device_that_keeps_ownership_times_out_with_the_command_name)
{
	struct cmdq_config cfg = { .timeout_ms = 60 };
	struct cmdq_fix f;
	uint8_t out[16];
	uint64_t t0, dt;

	cmdq_fix_up(&f, &cfg, false);
	scripted_dev_set_responder(f.d, reply_never, NULL);
	t0 = now_ms();
	cr_assert_eq(run(&f, PRM_CMD_OP_CREATE_QP, 16, out, sizeof(out)), -ETIMEDOUT);
	dt = now_ms() - t0;
	cr_assert_str_eq(cmdq_error(f.q), "CREATE_QP: timeout after 60 ms");
	cr_assert_geq(dt, 60, "gave up after %llu ms", (unsigned long long)dt);
	cr_assert_lt(dt, 2000, "took %llu ms for a 60 ms timeout", (unsigned long long)dt);
	cmdq_fix_down(&f);
}

Test(cmdq_timeout, set_timeout_changes_the_bound)
{
	struct cmdq_fix f;
	uint8_t out[16];

	cmdq_fix_up(&f, NULL, false);
	scripted_dev_set_responder(f.d, reply_never, NULL);
	cmdq_set_timeout(f.q, 25);
	cr_assert_eq(run(&f, PRM_CMD_OP_ALLOC_PD, 16, out, sizeof(out)), -ETIMEDOUT);
	cr_assert_str_eq(cmdq_error(f.q), "ALLOC_PD: timeout after 25 ms");
	cmdq_fix_down(&f);
}

/* The device that never answers records the entries it was handed. */
static unsigned never_slots[8], never_n;
static void reply_never_note(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	if (never_n < 8)
		never_slots[never_n++] = c->slot;
	reply_never(d, c, ctx);
}

/* A timed-out command leaves its entry to the device (which may still write it and its
 * mailboxes), and the next command goes out on another entry, as Linux's cmd.c does
 * (mlx5_cmd_comp_handler: "only real completion can free the cmd slot").  With a
 * queue of two entries (one main, one nested), the next one has nowhere to go: EBUSY,
 * without ringing the doorbell. */
Test(cmdq_timeout, slot_still_owned_after_a_timeout_moves_the_next_command_to_another_entry)
{
	struct cmdq_config cfg = { .timeout_ms = 20 };
	struct cmdq_fix f;
	uint8_t out[16];

	cmdq_fix_up(&f, &cfg, false);
	never_n = 0;
	scripted_dev_set_responder(f.d, reply_never_note, NULL);
	cr_assert_eq(run(&f, PRM_CMD_OP_CREATE_QP, 16, out, sizeof(out)), -ETIMEDOUT);
	cr_assert_eq(run(&f, PRM_CMD_OP_QUERY_QP, 16, out, sizeof(out)), -ETIMEDOUT);
	cr_assert_eq(f.d->doorbells, 2, "the second command goes out");
	cr_assert_eq(never_n, 2);
	cr_assert_neq(never_slots[0], never_slots[1], "on another entry");
	cr_assert_eq(f.d->stray_doorbells, 0, "never on an entry the device still owns");
	cmdq_fix_down(&f);
}

Test(cmdq_timeout, every_entry_owned_after_timeouts_refuses_the_next_command)
{
	struct cmdq_config cfg = { .timeout_ms = 20 };
	/* two entries: the main one and the nested one */
	struct scripted_config sc = { .cmd_interface_rev = 5, .log_cmdq_size = 1, .log_cmdq_stride = 6 };
	struct cmdq_fix f;
	uint8_t out[16];

	f.d = scripted_dev_create(&sc);
	cr_assert_not_null(f.d);
	cr_assert_eq(cmdq_create(&f.d->shim, &f.d->bar, &cfg, &f.q), 0);
	scripted_dev_set_responder(f.d, reply_never, NULL);
	cr_assert_eq(run(&f, PRM_CMD_OP_CREATE_QP, 16, out, sizeof(out)), -ETIMEDOUT);
	cr_assert_eq(run(&f, PRM_CMD_OP_QUERY_QP, 16, out, sizeof(out)), -EBUSY);
	cr_assert_eq(f.d->doorbells, 1, "the second command must not ring the doorbell");
	cmdq_fix_down(&f);
}

/* The function vanishes once the doorbell is rung (a Thunderbolt cable pulled): every
 * BAR read answers all-ones from then on, and the entry never comes back. */
static void reply_then_vanish(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	(void)c, (void)ctx;
	memset(d->bar_mem, 0xff, 64);
}

Test(cmdq_timeout, device_removed_while_waiting_ends_the_wait_at_once)
{
	struct cmdq_fix f;
	uint8_t out[16];
	uint64_t t0, dt;

	cmdq_fix_up(&f, NULL, false);     /* the default 60 s timeout */
	scripted_dev_set_responder(f.d, reply_then_vanish, NULL);
	t0 = now_ms();
	cr_assert_eq(run(&f, PRM_CMD_OP_CREATE_CQ, 16, out, sizeof(out)), -ENODEV);
	dt = now_ms() - t0;
	cr_assert_str_eq(cmdq_error(f.q), "CREATE_CQ: device not responding (BAR reads all-ones)");
	cr_assert_lt(dt, 2000, "waited %llu ms for a device that is gone", (unsigned long long)dt);
	cmdq_fix_down(&f);
}

/* The device kept a command with more output than the ready pool holds: its own
 * output mailboxes must stay mapped, since the device may still answer into them. */
static uint64_t late_out_iova;
static size_t late_out_boxes;

static void reply_never_note_output(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	(void)d, (void)ctx;
	late_out_iova = (uint64_t)PRM_GET(cmd_queue_entry, c->entry, output_mailbox_pointer_63_32) << 32 |
			(uint64_t)PRM_GET(cmd_queue_entry, c->entry, output_mailbox_pointer_31_9) << 9;
	late_out_boxes = c->nout;
}

Test(cmdq_timeout, mailboxes_of_a_timed_out_command_stay_mapped_until_destroy)
{
	struct cmdq_config cfg = { .timeout_ms = 20 };
	struct cmdq_fix f;
	uint8_t in[16];
	size_t outlen = 16 + 40 * 512;      /* 40 output blocks: beyond the 16 kept ready */
	uint8_t *out = malloc(outlen);

	cr_assert_not_null(out);
	cmdq_fix_up(&f, &cfg, false);
	unsigned live = f.d->live_dma;
	scripted_dev_set_responder(f.d, reply_never_note_output, NULL);
	cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_QUERY_HCA_CAP);
	cr_assert_eq(cmdq_exec(f.q, in, sizeof(in), out, outlen), -ETIMEDOUT);
	cr_assert_eq(late_out_boxes, 40);
	cr_assert_eq(f.d->live_dma, live + 1, "the command's own mailboxes are still allocated");
	/* the late answer reaches memory that is still the queue's, not a fault */
	unsigned faults = f.d->dma_faults;
	uint8_t *box = scripted_dev_iova_to_va(f.d, late_out_iova, 40 * 1024);
	cr_assert_not_null(box, "the output chain no longer translates");
	memset(box, 0xee, 512);
	cr_assert_eq(f.d->dma_faults, faults);
	cmdq_destroy(f.q);
	cr_assert_eq(f.d->live_dma, 0, "destroy frees them");
	scripted_dev_destroy(f.d);
	free(out);
}

/* ---- firmware status and syndrome (cmd_out) ---- */

Test(cmdq_status, bad_parameter_gives_einval_and_the_exact_message)
{
	struct cmdq_status_reply r = { 0x3, 0x2a1b3c };
	struct cmdq_fix f;
	uint8_t out[16];

	cmdq_fix_up(&f, NULL, false);
	scripted_dev_set_responder(f.d, cmdq_reply_status, &r);
	cr_assert_eq(run(&f, PRM_CMD_OP_CREATE_QP, 16, out, sizeof(out)), -EINVAL);
	cr_assert_str_eq(cmdq_error(f.q), "CREATE_QP: bad parameter (0x3), syndrome 0x2a1b3c");
	cr_assert_eq(cmdq_last_status(f.q), 0x3);
	cr_assert_eq(cmdq_last_syndrome(f.q), 0x2a1b3c);
	cr_assert_eq(out[0], 0x3, "out holds the firmware's answer");
	cmdq_fix_down(&f);
}

Test(cmdq_status, emulator_syndrome_is_named_in_the_message)
{
	struct cmdq_status_reply r = { 0x10, PRM_SYND_ILLEGAL_QP_TRANSITION };
	struct cmdq_fix f;
	uint8_t out[16];
	char want[128];

	cmdq_fix_up(&f, NULL, false);
	scripted_dev_set_responder(f.d, cmdq_reply_status, &r);
	cr_assert_eq(run(&f, PRM_CMD_OP_INIT2RTR_QP, 16, out, sizeof(out)), -EINVAL);
	snprintf(want, sizeof(want), "INIT2RTR_QP: bad QP state (0x10), syndrome 0x%x (illegal QP transition)",
		 (unsigned)PRM_SYND_ILLEGAL_QP_TRANSITION);
	cr_assert_str_eq(cmdq_error(f.q), want);
	cmdq_fix_down(&f);
}

Test(cmdq_status, bad_opcode_status_says_bad_opcode_and_names_an_unknown_opcode)
{
	struct cmdq_status_reply r = { 0x2, PRM_SYND_BAD_OPCODE };
	struct cmdq_fix f;
	uint8_t out[16];
	char want[128];

	cmdq_fix_up(&f, NULL, false);
	scripted_dev_set_responder(f.d, cmdq_reply_status, &r);
	cr_assert_eq(run(&f, 0x7777, 16, out, sizeof(out)), -EINVAL);
	snprintf(want, sizeof(want), "UNKNOWN(0x7777): bad opcode (0x2), syndrome 0x%x (bad opcode)",
		 (unsigned)PRM_SYND_BAD_OPCODE);
	cr_assert_str_eq(cmdq_error(f.q), want);
	cmdq_fix_down(&f);
}

Test(cmdq_status, resource_busy_maps_to_ebusy)
{
	struct cmdq_status_reply r = { 0x6, 0x1 };
	struct cmdq_fix f;
	uint8_t out[16];

	cmdq_fix_up(&f, NULL, false);
	scripted_dev_set_responder(f.d, cmdq_reply_status, &r);
	cr_assert_eq(run(&f, PRM_CMD_OP_DESTROY_CQ, 16, out, sizeof(out)), -EBUSY);
	cmdq_fix_down(&f);
}

Test(cmdq_status, limits_exceeded_maps_to_enomem)
{
	struct cmdq_status_reply r = { 0x8, PRM_SYND_LIMIT_EXCEEDED };
	struct cmdq_fix f;
	uint8_t out[16];

	cmdq_fix_up(&f, NULL, false);
	scripted_dev_set_responder(f.d, cmdq_reply_status, &r);
	cr_assert_eq(run(&f, PRM_CMD_OP_CREATE_CQ, 16, out, sizeof(out)), -ENOMEM);
	cmdq_fix_down(&f);
}

Test(cmdq_status, success_after_a_failure_clears_error_and_status)
{
	struct cmdq_status_reply r = { 0x3, 0x99 };
	struct cmdq_fix f;
	uint8_t out[16];

	cmdq_fix_up(&f, NULL, false);
	scripted_dev_set_responder(f.d, cmdq_reply_status, &r);
	cr_assert_eq(run(&f, PRM_CMD_OP_CREATE_QP, 16, out, sizeof(out)), -EINVAL);
	r.status = 0;
	r.syndrome = 0;
	cr_assert_eq(run(&f, PRM_CMD_OP_CREATE_QP, 16, out, sizeof(out)), 0);
	cr_assert_str_eq(cmdq_error(f.q), "");
	cr_assert_eq(cmdq_last_status(f.q), 0);
	cr_assert_eq(cmdq_last_syndrome(f.q), 0);
	cmdq_fix_down(&f);
}

/* ---- bad arguments: refused before the device is involved ---- */

Test(cmdq_args, output_shorter_than_16_bytes_is_einval)
{
	struct cmdq_fix f;
	uint8_t out[15];

	cmdq_fix_up(&f, NULL, false);
	cr_assert_eq(run(&f, PRM_CMD_OP_QUERY_ISSI, 16, out, sizeof(out)), -EINVAL);
	cr_assert(strstr(cmdq_error(f.q), "QUERY_ISSI: output buffer of 15 bytes") != NULL, "%s", cmdq_error(f.q));
	cr_assert_eq(f.d->doorbells, 0);
	cmdq_fix_down(&f);
}

Test(cmdq_args, input_beyond_max_mailbox_bytes_is_e2big)
{
	struct cmdq_config cfg = { .max_mailbox_bytes = 1024 };
	struct cmdq_fix f;
	static uint8_t in[16 + 1025];
	uint8_t out[16];

	cmdq_fix_up(&f, &cfg, false);
	cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_MANAGE_PAGES);
	cr_assert_eq(cmdq_exec(f.q, in, sizeof(in), out, sizeof(out)), -E2BIG);
	cr_assert(strstr(cmdq_error(f.q), "MANAGE_PAGES: input of 1041 bytes") != NULL, "%s", cmdq_error(f.q));
	cr_assert_eq(f.d->doorbells, 0);
	cmdq_fix_down(&f);
}

Test(cmdq_args, output_beyond_max_mailbox_bytes_is_e2big)
{
	struct cmdq_config cfg = { .max_mailbox_bytes = 1024 };
	struct cmdq_fix f;
	static uint8_t out[16 + 1025];

	cmdq_fix_up(&f, &cfg, false);
	cr_assert_eq(run(&f, PRM_CMD_OP_QUERY_HCA_CAP, 16, out, sizeof(out)), -E2BIG);
	cr_assert_eq(f.d->doorbells, 0);
	cmdq_fix_down(&f);
}

Test(cmdq_args, null_buffers_are_einval)
{
	struct cmdq_fix f;
	uint8_t out[16];

	cmdq_fix_up(&f, NULL, false);
	cr_assert_eq(cmdq_exec(f.q, NULL, 16, out, sizeof(out)), -EINVAL);
	cr_assert_eq(cmdq_exec(f.q, out, 16, NULL, 16), -EINVAL);
	cr_assert_eq(cmdq_exec(NULL, out, 16, out, 16), -EINVAL);
	cr_assert_eq(f.d->doorbells, 0);
	cmdq_fix_down(&f);
}
