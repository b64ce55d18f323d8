/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Completion signatures as real firmware leaves them.  With checksums off (PRM
 * cmd_hca_cap.cmdif_checksum 0, what Linux main.c handle_hca_cap and rdma-core
 * mlx5_vfio.c set, and what hw/mlx5/init.c sets) the ConnectX-4 in
 * ../shared/fixtures/mlx5_core-connectx4-bringup-trace.txt.gz hands the entry back with
 * the driver's signature byte and the ownership bit cleared (so the entry XORs to 0xfe,
 * not 0xff) and the output mailboxes with ctrl_signature and signature 0.  The engine
 * must accept that unless it was told checksums are on (verify_signatures), and then
 * refuse it.  The scripted device answers the way that firmware does. */
#include <errno.h>

#include "tests/firmware-cmd/cmdq_testlib.h"

/* What the completed entry XORed to, seen from the device side. */
struct fw_reply {
	uint8_t entry_xor;
	unsigned calls;
};

/* Output data in the mailboxes, inline output all zero (status 0), the output
 * mailboxes' signatures zeroed, the entry's signature byte left as the driver wrote it,
 * ownership cleared: ENABLE_HCA at trace.txt:30-34 and QUERY_HCA_CAP at trace.txt:169
 * onwards came back like this. */
static void reply_like_the_connectx4(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	struct fw_reply *r = ctx;

	(void)d;
	memset(PRM_ADDR(cmd_queue_entry, c->entry, command_output_inline_data), 0, CMDQ_INLINE_BYTES);
	for (size_t i = 0; i < c->nout; i++) {
		uint8_t *data = PRM_ADDR(cmd_if_box, c->out_box[i], mailbox_data);

		for (size_t k = 0; k < CMDQ_BOX_DATA_BYTES; k++)
			data[k] = cmdq_pat(i * CMDQ_BOX_DATA_BYTES + k, 0x33);
		PRM_SET(cmd_if_box, c->out_box[i], ctrl_signature, 0);
		PRM_SET(cmd_if_box, c->out_box[i], signature, 0);
	}
	PRM_SET(cmd_queue_entry, c->entry, status, 0);
	PRM_SET(cmd_queue_entry, c->entry, ownership, 0);
	r->entry_xor = cmdq_xor8(c->entry, 64);
	r->calls++;
}

static int run(struct cmdq_fix *f, uint16_t opcode, uint8_t *out, size_t outlen)
{
	uint8_t in[16];

	cmdq_fill_in(in, sizeof(in), opcode);
	return cmdq_exec(f->q, in, sizeof(in), out, outlen);
}

Test(cmdq_checksums, unsigned_completion_like_the_connectx4_is_accepted_when_checksums_are_off)
{
	/* The configuration hw/mlx5/init.c uses: sign what we post, verify nothing. */
	struct cmdq_config cfg = { .use_signatures = 1 };
	struct fw_reply r = { 0 };
	struct cmdq_fix f;
	uint8_t out[16 + 2 * CMDQ_BOX_DATA_BYTES];

	cmdq_fix_up(&f, &cfg, true);
	scripted_dev_set_responder(f.d, reply_like_the_connectx4, &r);
	cr_assert_eq(run(&f, PRM_CMD_OP_QUERY_HCA_CAP, out, sizeof(out)), 0, "%s", cmdq_error(f.q));
	cr_assert_eq(r.calls, 1);
	cr_assert_eq(r.entry_xor, 0xfe, "the completion is left unsigned, as in the trace");
	for (size_t k = 16; k < sizeof(out); k++)
		cr_assert_eq(out[k], cmdq_pat(k - 16, 0x33), "output byte %zu", k);
	cmdq_fix_down(&f);
}

Test(cmdq_checksums, unsigned_completion_is_refused_when_checksums_are_on)
{
	struct cmdq_config cfg = { .use_signatures = 1, .verify_signatures = 1 };
	struct fw_reply r = { 0 };
	struct cmdq_fix f;
	uint8_t out[16 + CMDQ_BOX_DATA_BYTES];

	cmdq_fix_up(&f, &cfg, true);
	scripted_dev_set_responder(f.d, reply_like_the_connectx4, &r);
	cr_assert_eq(run(&f, PRM_CMD_OP_QUERY_HCA_CAP, out, sizeof(out)), -EIO);
	cr_assert_str_eq(cmdq_error(f.q), "QUERY_HCA_CAP: bad entry signature on completion");
	cmdq_fix_down(&f);
}

/* Entry signed, output mailbox left with zero signatures. */
static void reply_signed_entry_unsigned_box(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	(void)ctx;
	scripted_cmd_reply(d, c, NULL, 0);
	PRM_SET(cmd_if_box, c->out_box[0], ctrl_signature, 0);
	PRM_SET(cmd_if_box, c->out_box[0], signature, 0);
	scripted_cmd_complete(d, c, 0, false);
}

Test(cmdq_checksums, unsigned_output_mailbox_is_refused_when_checksums_are_on)
{
	struct cmdq_config cfg = { .use_signatures = 1, .verify_signatures = 1 };
	struct cmdq_fix f;
	uint8_t out[16 + CMDQ_BOX_DATA_BYTES];

	cmdq_fix_up(&f, &cfg, true);
	scripted_dev_set_responder(f.d, reply_signed_entry_unsigned_box, NULL);
	cr_assert_eq(run(&f, PRM_CMD_OP_QUERY_HCA_CAP, out, sizeof(out)), -EIO);
	cr_assert_str_eq(cmdq_error(f.q), "QUERY_HCA_CAP: bad signature on output mailbox 0");
	cmdq_fix_down(&f);
}

Test(cmdq_checksums, signed_completion_is_accepted_when_checksums_are_on)
{
	struct cmdq_config cfg = { .use_signatures = 1, .verify_signatures = 1 };
	struct cmdq_fix f;
	uint8_t out[16 + 2 * CMDQ_BOX_DATA_BYTES];

	cmdq_fix_up(&f, &cfg, true);
	/* The default responder signs the entry and every output mailbox. */
	cr_assert_eq(run(&f, PRM_CMD_OP_QUERY_HCA_CAP, out, sizeof(out)), 0, "%s", cmdq_error(f.q));
	cmdq_fix_down(&f);
}

Test(cmdq_checksums, verification_follows_cmdq_set_verify_signatures)
{
	/* A driver that turns cmdif_checksum on with SET_HCA_CAP starts verifying with the
	 * next command, and stops again when it turns it off. */
	struct cmdq_config cfg = { .use_signatures = 1 };
	struct fw_reply r = { 0 };
	struct cmdq_fix f;
	uint8_t out[16 + CMDQ_BOX_DATA_BYTES];

	cmdq_fix_up(&f, &cfg, true);
	scripted_dev_set_responder(f.d, reply_like_the_connectx4, &r);
	cr_assert_eq(run(&f, PRM_CMD_OP_QUERY_HCA_CAP, out, sizeof(out)), 0, "%s", cmdq_error(f.q));
	cmdq_set_verify_signatures(f.q, 1);
	cr_assert_eq(run(&f, PRM_CMD_OP_QUERY_HCA_CAP, out, sizeof(out)), -EIO);
	cmdq_set_verify_signatures(f.q, 0);
	cr_assert_eq(run(&f, PRM_CMD_OP_QUERY_HCA_CAP, out, sizeof(out)), 0, "%s", cmdq_error(f.q));
	cr_assert_eq(r.calls, 3);
	cmdq_fix_down(&f);
}

Test(cmdq_checksums, entry_and_mailboxes_are_still_signed_when_posted)
{
	/* Signing what we post stays on with checksums off (harmless, as Linux cmd.c
	 * signs the entry): the scripted device checks the posted entry and input
	 * mailboxes and would report delivery status 0x1. */
	struct cmdq_config cfg = { .use_signatures = 1 };
	struct fw_reply r = { 0 };
	struct cmdq_fix f;
	uint8_t in[16 + 3 * CMDQ_BOX_DATA_BYTES], out[16];

	cmdq_fix_up(&f, &cfg, true);
	scripted_dev_set_responder(f.d, reply_like_the_connectx4, &r);
	cmdq_fill_in(in, sizeof(in), PRM_CMD_OP_SET_HCA_CAP);
	cr_assert_eq(cmdq_exec(f.q, in, sizeof(in), out, sizeof(out)), 0, "%s", cmdq_error(f.q));
	cr_assert_eq(f.d->last_chain_status, 0);
	cr_assert_eq(cmdq_xor8(f.d->last_entry, 64), 0xff);
	cmdq_fix_down(&f);
}
