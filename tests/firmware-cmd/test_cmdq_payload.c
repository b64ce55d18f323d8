/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Payloads through the command queue, checked byte by byte on the device side: the
 * scripted device joins the input from the entry and the mailbox chain by itself and
 * answers with a pattern the engine must join back exactly (PRM "Command Mailbox"). */
#include <errno.h>
#include <stdlib.h>

#include "tests/firmware-cmd/cmdq_testlib.h"

struct echo {
	size_t outlen_seen;
	unsigned calls;
};

/* Device: answers every command with the output pattern, delivery ok. */
static void reply_pattern(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	struct echo *e = ctx;
	uint8_t *out = malloc(c->outlen + 1);

	cmdq_fill_out(out, c->outlen);
	scripted_cmd_reply(d, c, out, c->outlen);
	scripted_cmd_complete(d, c, 0, false);
	free(out);
	if (e) {
		e->outlen_seen = c->outlen;
		e->calls++;
	}
}

static void check_input(size_t inlen, bool sigs)
{
	struct cmdq_config cfg = { .use_signatures = sigs };
	struct cmdq_fix f;
	uint8_t *in = malloc(inlen + 1), out[16];
	int rc;

	cmdq_fix_up(&f, &cfg, sigs);
	scripted_dev_set_responder(f.d, reply_pattern, NULL);
	cmdq_fill_in(in, inlen, PRM_CMD_OP_CREATE_MKEY);
	rc = cmdq_exec(f.q, in, inlen, out, sizeof(out));
	cr_assert_eq(rc, 0, "inlen %zu: %d %s", inlen, rc, cmdq_error(f.q));
	cr_assert_eq(f.d->last_chain_status, 0, "device rejected the chain");
	cr_assert_eq(f.d->last_inlen, inlen, "input_length %zu, sent %zu", f.d->last_inlen, inlen);
	for (size_t i = 0; i < inlen; i++)
		cr_assert_eq(f.d->last_in[i], in[i], "inlen %zu: device saw byte %zu = 0x%02x, sent 0x%02x", inlen, i,
			     f.d->last_in[i], in[i]);
	cr_assert_eq(f.d->dma_faults, 0);
	free(in);
	cmdq_fix_down(&f);
}

static void check_output(size_t box_bytes, bool sigs)
{
	struct cmdq_config cfg = { .use_signatures = sigs };
	struct cmdq_fix f;
	struct echo e = { 0 };
	size_t outlen = CMDQ_INLINE_BYTES + box_bytes;
	uint8_t in[16], *out = malloc(outlen + 1), *want = malloc(outlen + 1);
	int rc;

	cmdq_fix_up(&f, &cfg, sigs);
	scripted_dev_set_responder(f.d, reply_pattern, &e);
	cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_QUERY_HCA_CAP);
	memset(out, 0xcc, outlen + 1);
	cmdq_fill_out(want, outlen);
	rc = cmdq_exec(f.q, in, sizeof(in), out, outlen);
	cr_assert_eq(rc, 0, "outlen %zu: %d %s", outlen, rc, cmdq_error(f.q));
	cr_assert_eq(e.outlen_seen, outlen, "output_length %zu, asked %zu", e.outlen_seen, outlen);
	for (size_t i = 0; i < outlen; i++)
		cr_assert_eq(out[i], want[i], "outlen %zu: byte %zu = 0x%02x, device wrote 0x%02x", outlen, i, out[i],
			     want[i]);
	cr_assert_eq(out[outlen], 0xcc, "engine wrote past outlen");
	free(out);
	free(want);
	cmdq_fix_down(&f);
}

Test(cmdq_payload, input_of_0_bytes) { check_input(0, false); }
Test(cmdq_payload, input_of_1_byte) { check_input(1, false); }
Test(cmdq_payload, input_of_16_bytes_stays_inline) { check_input(16, false); }
Test(cmdq_payload, input_of_17_bytes_uses_one_mailbox) { check_input(17, false); }
Test(cmdq_payload, input_of_528_bytes_fills_one_mailbox) { check_input(528, false); }
Test(cmdq_payload, input_of_529_bytes_chains_two_mailboxes) { check_input(529, false); }
Test(cmdq_payload, input_of_0x1010_bytes_chains_eight_mailboxes) { check_input(0x1010, false); }
Test(cmdq_payload, input_of_0x1010_bytes_signed_passes_device_checks) { check_input(0x1010, true); }

Test(cmdq_payload, output_of_0_mailbox_bytes) { check_output(0, false); }
Test(cmdq_payload, output_of_1_mailbox_byte) { check_output(1, false); }
Test(cmdq_payload, output_of_16_mailbox_bytes) { check_output(16, false); }
Test(cmdq_payload, output_of_17_mailbox_bytes) { check_output(17, false); }
Test(cmdq_payload, output_of_528_mailbox_bytes) { check_output(528, false); }
Test(cmdq_payload, output_of_529_mailbox_bytes) { check_output(529, false); }
Test(cmdq_payload, output_of_0x1010_mailbox_bytes) { check_output(0x1010, false); }
Test(cmdq_payload, output_of_0x1010_mailbox_bytes_with_signatures_checked) { check_output(0x1010, true); }

/* Bigger than the ready pool: the engine allocates blocks for this command only. */
Test(cmdq_payload, input_beyond_the_pool_uses_on_demand_mailboxes_and_frees_them)
{
	struct cmdq_fix f;
	size_t inlen = 16 + 20000;
	uint8_t *in = malloc(inlen), out[16];
	unsigned live;

	cmdq_fix_up(&f, NULL, false);
	live = f.d->live_dma;
	scripted_dev_set_responder(f.d, reply_pattern, NULL);
	cmdq_fill_in(in, inlen, PRM_CMD_OP_MANAGE_PAGES);
	cr_assert_eq(cmdq_exec(f.q, in, inlen, out, sizeof(out)), 0, "%s", cmdq_error(f.q));
	cr_assert_eq(f.d->last_inlen, inlen);
	cr_assert_eq(memcmp(f.d->last_in, in, inlen), 0);
	cr_assert_eq(f.d->live_dma, live, "on-demand mailboxes leaked");
	free(in);
	cmdq_fix_down(&f);
}

Test(cmdq_payload, entry_carries_type_7_and_both_lengths)
{
	struct cmdq_fix f;
	uint8_t in[40], out[600];

	cmdq_fix_up(&f, NULL, false);
	cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_CREATE_CQ);
	cr_assert_eq(cmdq_exec(f.q, in, sizeof(in), out, sizeof(out)), 0, "%s", cmdq_error(f.q));
	cr_assert_eq(PRM_GET(cmd_queue_entry, f.d->last_entry, type), 0x7);
	cr_assert_eq(PRM_GET(cmd_queue_entry, f.d->last_entry, input_length), sizeof(in));
	cr_assert_eq(PRM_GET(cmd_queue_entry, f.d->last_entry, output_length), sizeof(out));
	cr_assert_eq(PRM_GET(cmd_queue_entry, f.d->last_entry, ownership), 1);
	cr_assert_eq(PRM_GET(cmd_queue_entry, f.d->last_entry, status), 0);
	cmdq_fix_down(&f);
}

Test(cmdq_payload, entry_signature_makes_the_entry_xor_0xff)
{
	struct cmdq_config cfg = { .use_signatures = 1 };
	struct cmdq_fix f;
	uint8_t in[16], out[16];

	cmdq_fix_up(&f, &cfg, true);
	cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_NOP);
	cr_assert_eq(cmdq_exec(f.q, in, sizeof(in), out, sizeof(out)), 0, "%s", cmdq_error(f.q));
	cr_assert_eq(cmdq_xor8(f.d->last_entry, 64), 0xff);
	cmdq_fix_down(&f);
}

/* Tokens (PRM "Command Queue Entry": token): fresh per command, never 0, wrapping. */
Test(cmdq_payload, tokens_are_fresh_per_command_never_zero_and_wrap)
{
	struct cmdq_fix f;
	uint8_t in[16], out[16], prev = 0;
	bool wrapped = false;

	cmdq_fix_up(&f, NULL, false);
	cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_NOP);
	for (int i = 0; i < 600; i++) {
		uint8_t t;

		cr_assert_eq(cmdq_exec(f.q, in, sizeof(in), out, sizeof(out)), 0, "%s", cmdq_error(f.q));
		t = (uint8_t)PRM_GET(cmd_queue_entry, f.d->last_entry, token);
		cr_assert_neq(t, 0, "token 0 used at command %d", i);
		cr_assert_neq(t, prev, "token repeated at command %d", i);
		if (t < prev)
			wrapped = true;
		prev = t;
	}
	cr_assert(wrapped, "600 commands must wrap an 8-bit token");
	cr_assert_eq(f.d->commands, 600);
	cmdq_fix_down(&f);
}

/* The input chain's blocks are numbered from 0 and carry the token (the device checks
 * both and would answer delivery status 3 / 2): a 0x1010-byte input is 8 blocks. */
Test(cmdq_payload, input_blocks_are_numbered_and_carry_the_token)
{
	struct cmdq_fix f;
	uint8_t in[0x1010], out[16];

	cmdq_fix_up(&f, NULL, false);
	cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_SET_HCA_CAP);
	cr_assert_eq(cmdq_exec(f.q, in, sizeof(in), out, sizeof(out)), 0, "%s", cmdq_error(f.q));
	cr_assert_eq(f.d->last_chain_status, 0);
	cmdq_fix_down(&f);
}

/* PRM "Initialization Segment": command_doorbell_vector gets one bit per slot, and the
 * entry must already be owned by hardware when the device sees it (else a stray ring). */
Test(cmdq_payload, doorbell_rings_slot_0_bit_after_ownership_passes_to_the_device)
{
	struct cmdq_fix f;
	uint8_t in[16], out[16];
	const uint64_t db = scripted_iseg_dword(PRM_OFF(initial_seg, command_doorbell_vector));
	unsigned rings = 0;

	cmdq_fix_up(&f, NULL, false);
	cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_NOP);
	cr_assert_eq(cmdq_exec(f.q, in, sizeof(in), out, sizeof(out)), 0, "%s", cmdq_error(f.q));
	for (unsigned i = 0; i < f.d->nwrites; i++)
		if (f.d->writes[i].off == db) {
			cr_assert_eq(f.d->writes[i].value, 1u, "doorbell value 0x%x", f.d->writes[i].value);
			rings++;
		}
	cr_assert_eq(rings, 1);
	cr_assert_eq(f.d->stray_doorbells, 0);
	cr_assert_eq(f.d->commands, 1);
	cmdq_fix_down(&f);
}
