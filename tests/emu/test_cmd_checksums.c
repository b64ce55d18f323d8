/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Command-interface signatures on the emulated device, both modes of
 * cmd_hca_cap.cmdif_checksum (PRM "HCA Capabilities": 0 disabled, 3 enabled).
 *
 * Off, the state the real ConnectX-4 in
 * ../shared/fixtures/mlx5_core-connectx4-bringup-trace.txt.gz was in (and the one
 * Linux, rdma-core and hw/mlx5 keep): nothing posted is checked, the completed entry
 * keeps the driver's signature byte (so with ownership cleared it XORs to 0xfe), and
 * the output mailboxes keep the control part the driver wrote.
 * On: the entry and input mailboxes must be signed (delivery status 0x1 otherwise),
 * and the device signs the completed entry and every output mailbox.
 *
 * Commands are written at the entry level (tests/emu/emu_raw.h) so the completed entry
 * and mailboxes can be read as the device left them. */
#include "tests/emu/emu_raw.h"
#include "tests/emu/emu_test.h"

#define CAP_OUT_BYTES PRM_SIZE(query_hca_cap_out)

static void enable_hca(struct er *r, bool sign)
{
	uint8_t in[PRM_SIZE(enable_hca_in)] = { 0 }, out[16];

	PRM_SET(enable_hca_in, in, opcode, PRM_CMD_OP_ENABLE_HCA);
	cr_assert_eq(er_exec(r, in, sizeof(in), out, sizeof(out), 0x11, sign), 0);
	cr_assert_eq(PRM_GET(cmd_out, out, status), 0);
}

/* The general capability block, current (cur=1) or maximum. */
static void query_general(struct er *r, int cur, uint8_t *out, bool sign)
{
	uint8_t in[PRM_SIZE(query_hca_cap_in)] = { 0 };

	PRM_SET(query_hca_cap_in, in, opcode, PRM_CMD_OP_QUERY_HCA_CAP);
	PRM_SET(query_hca_cap_in, in, op_mod, cur ? 1 : 0);
	cr_assert_eq(er_exec(r, in, sizeof(in), out, CAP_OUT_BYTES, 0x12, sign), 0);
	cr_assert_eq(PRM_GET(cmd_out, out, status), 0);
}

/* SET_HCA_CAP on the current general block with cmdif_checksum = value, as a driver
 * does (copy the current block, change the field). */
static void set_cmdif_checksum(struct er *r, unsigned value, bool sign)
{
	uint8_t *cap = calloc(1, CAP_OUT_BYTES), *in = calloc(1, PRM_SIZE(set_hca_cap_in)), out[16];
	uint8_t *blk = PRM_ADDR(set_hca_cap_in, in, capability);

	query_general(r, 1, cap, sign);
	memcpy(blk, PRM_ADDR(query_hca_cap_out, cap, capability), PRM_WIDTH(set_hca_cap_in, capability) / 8);
	PRM_SET(set_hca_cap_in, in, opcode, PRM_CMD_OP_SET_HCA_CAP);
	PRM_SET(cmd_hca_cap, blk, cmdif_checksum, value);
	cr_assert_eq(er_exec(r, in, PRM_SIZE(set_hca_cap_in), out, sizeof(out), 0x13, sign), 0);
	cr_assert_eq(PRM_GET(cmd_out, out, status), 0, "SET_HCA_CAP status 0x%x",
		     (unsigned)PRM_GET(cmd_out, out, status));
	query_general(r, 1, cap, !!value);
	cr_assert_eq(PRM_GET(cmd_hca_cap, PRM_ADDR(query_hca_cap_out, cap, capability), cmdif_checksum), value);
	free(cap);
	free(in);
}

/* QUERY_ISSI with its input padded into `nin` mailboxes, one output mailbox. */
static void post_query_issi(struct er *r, struct er_cmd *c, size_t nin, uint8_t token, bool sign)
{
	uint8_t in[16 + 2 * CMDQ_BOX_DATA_BYTES] = { 0 };

	cr_assert_leq(nin, 2);
	PRM_SET(cmd_in, in, opcode, PRM_CMD_OP_QUERY_ISSI);
	er_cmd_post(r, c, in, 16 + nin * CMDQ_BOX_DATA_BYTES, PRM_SIZE(query_issi_out), token, sign);
}

Test(emu_cmd_checksums, checksums_are_off_at_power_on_as_on_the_connectx4)
{
	struct er r;
	uint8_t *cap = calloc(1, CAP_OUT_BYTES);

	er_open(&r, "emu:");
	enable_hca(&r, false);
	query_general(&r, 0, cap, false);
	cr_assert_eq(PRM_GET(cmd_hca_cap, PRM_ADDR(query_hca_cap_out, cap, capability), cmdif_checksum), 3,
		     "maximum: checksums can be enabled");
	query_general(&r, 1, cap, false);
	cr_assert_eq(PRM_GET(cmd_hca_cap, PRM_ADDR(query_hca_cap_out, cap, capability), cmdif_checksum), 0,
		     "current: disabled");
	free(cap);
	er_close(&r);
}

Test(emu_cmd_checksums, with_checksums_off_the_completion_keeps_the_posted_signature_byte)
{
	struct er r;
	struct er_cmd c;
	uint8_t in[16] = { 0 }, out[16];

	er_open(&r, "emu:");
	PRM_SET(cmd_in, in, opcode, PRM_CMD_OP_ENABLE_HCA);
	er_cmd_post(&r, &c, in, sizeof(in), sizeof(out), 0x01, true);
	cr_assert_eq(er_cmd_run(&r, &c, out), 0);
	cr_assert_eq(PRM_GET(cmd_out, out, status), 0);
	cr_assert_eq(PRM_GET(cmd_queue_entry, er_entry(&r), signature),
		     PRM_GET(cmd_queue_entry, c.posted, signature), "signature byte left as posted");
	cr_assert_eq(cmdq_xor8(er_entry(&r), ER_ENTRY_BYTES), 0xfe,
		     "ownership cleared, nothing re-signed (the trace's ENABLE_HCA, trace.txt:34)");
	er_cmd_free(&r, &c);
	er_close(&r);
}

Test(emu_cmd_checksums, with_checksums_off_signatures_posted_are_not_checked)
{
	struct er r;
	struct er_cmd c;
	uint8_t out[PRM_SIZE(query_issi_out)];

	er_open(&r, "emu:");
	enable_hca(&r, false);
	post_query_issi(&r, &c, 2, 0x21, true);
	PRM_SET(cmd_queue_entry, er_entry(&r), signature, PRM_GET(cmd_queue_entry, er_entry(&r), signature) ^ 0x5a);
	PRM_SET(cmd_if_box, er_box(&c.in, 1), signature, 0x77);
	cr_assert_eq(er_cmd_run(&r, &c, out), 0, "delivered");
	cr_assert_eq(PRM_GET(cmd_out, out, status), 0);
	cr_assert_eq(PRM_GET(query_issi_out, out, supported_issi_dw0), 0x3);
	er_cmd_free(&r, &c);
	er_close(&r);
}

Test(emu_cmd_checksums, with_checksums_off_output_mailboxes_keep_the_posted_control_part)
{
	struct er r;
	struct er_cmd c;
	uint8_t in[PRM_SIZE(query_hca_cap_in)] = { 0 }, *out = calloc(1, CAP_OUT_BYTES);
	uint8_t ctrl[9][ER_BOX_BYTES - CMDQ_BOX_DATA_BYTES];

	er_open(&r, "emu:");
	enable_hca(&r, false);
	PRM_SET(query_hca_cap_in, in, opcode, PRM_CMD_OP_QUERY_HCA_CAP);
	PRM_SET(query_hca_cap_in, in, op_mod, 1);
	/* Unsigned, as Linux posts them (the trace's output blocks, e.g. trace.txt:211). */
	er_cmd_post(&r, &c, in, sizeof(in), CAP_OUT_BYTES, 0x07, false);
	cr_assert_eq(c.out.n, 8);
	for (size_t k = 0; k < c.out.n; k++)
		memcpy(ctrl[k], er_box(&c.out, k) + CMDQ_BOX_DATA_BYTES, sizeof(ctrl[k]));
	cr_assert_eq(er_cmd_run(&r, &c, out), 0);
	cr_assert_eq(PRM_GET(cmd_out, out, status), 0);
	for (size_t k = 0; k < c.out.n; k++) {
		const uint8_t *box = er_box(&c.out, k);

		cr_assert_eq(PRM_GET(cmd_if_box, box, ctrl_signature), 0, "block %zu", k);
		cr_assert_eq(PRM_GET(cmd_if_box, box, signature), 0, "block %zu", k);
		cr_assert_eq(memcmp(box + CMDQ_BOX_DATA_BYTES, ctrl[k], sizeof(ctrl[k])), 0,
			     "block %zu: control part as posted", k);
	}
	/* The data did arrive: the current block says what the emulator is. */
	cr_assert_eq(PRM_GET(cmd_hca_cap, PRM_ADDR(query_hca_cap_out, out, capability), cmdif_checksum), 0);
	cr_assert_neq(PRM_GET(cmd_hca_cap, PRM_ADDR(query_hca_cap_out, out, capability), log_max_qp), 0);
	er_cmd_free(&r, &c);
	free(out);
	er_close(&r);
}

Test(emu_cmd_checksums, query_pages_completion_keeps_the_entry_xor_as_the_connectx4_does)
{
	/* trace.txt:113 and :123: the firmware folds num_pages into the signature byte, so
	 * the entry XORs to 0xfe with a non-zero output in the entry. */
	struct er r;
	struct er_cmd c;
	uint8_t in[PRM_SIZE(query_pages_in)] = { 0 }, out[PRM_SIZE(query_pages_out)];

	er_open(&r, "emu:");
	enable_hca(&r, false);
	PRM_SET(query_pages_in, in, opcode, PRM_CMD_OP_QUERY_PAGES);
	PRM_SET(query_pages_in, in, op_mod, 1);
	er_cmd_post(&r, &c, in, sizeof(in), sizeof(out), 0x04, true);
	cr_assert_eq(er_cmd_run(&r, &c, out), 0);
	cr_assert_gt(PRM_GET(query_pages_out, out, num_pages), 0);
	cr_assert_neq(PRM_GET(cmd_queue_entry, er_entry(&r), signature), PRM_GET(cmd_queue_entry, c.posted, signature));
	cr_assert_eq(cmdq_xor8(er_entry(&r), ER_ENTRY_BYTES), 0xfe);
	er_cmd_free(&r, &c);
	er_close(&r);
}

Test(emu_cmd_checksums, with_checksums_on_a_bad_entry_signature_is_refused)
{
	struct er r;
	struct er_cmd c;

	er_open(&r, "emu:");
	enable_hca(&r, false);
	set_cmdif_checksum(&r, 3, false);
	post_query_issi(&r, &c, 0, 0x31, true);
	PRM_SET(cmd_queue_entry, er_entry(&r), signature, PRM_GET(cmd_queue_entry, er_entry(&r), signature) ^ 0x01);
	cr_assert_eq(er_cmd_run(&r, &c, NULL), PRM_DELIV_SIGNATURE_ERR);
	er_cmd_free(&r, &c);
	er_close(&r);
}

Test(emu_cmd_checksums, with_checksums_on_an_unsigned_input_mailbox_is_refused)
{
	struct er r;
	struct er_cmd c;

	er_open(&r, "emu:");
	enable_hca(&r, false);
	set_cmdif_checksum(&r, 3, false);
	post_query_issi(&r, &c, 2, 0x32, true);
	PRM_SET(cmd_if_box, er_box(&c.in, 1), ctrl_signature, 0);
	PRM_SET(cmd_if_box, er_box(&c.in, 1), signature, 0);
	cr_assert_eq(er_cmd_run(&r, &c, NULL), PRM_DELIV_SIGNATURE_ERR);
	er_cmd_free(&r, &c);
	er_close(&r);
}

Test(emu_cmd_checksums, with_checksums_on_the_completion_and_output_mailboxes_are_signed)
{
	struct er r;
	struct er_cmd c;
	uint8_t in[PRM_SIZE(query_hca_cap_in)] = { 0 }, *out = calloc(1, CAP_OUT_BYTES);

	er_open(&r, "emu:");
	enable_hca(&r, false);
	set_cmdif_checksum(&r, 3, false);
	PRM_SET(query_hca_cap_in, in, opcode, PRM_CMD_OP_QUERY_HCA_CAP);
	PRM_SET(query_hca_cap_in, in, op_mod, 1);
	er_cmd_post(&r, &c, in, sizeof(in), CAP_OUT_BYTES, 0x33, true);
	cr_assert_eq(er_cmd_run(&r, &c, out), 0);
	cr_assert_eq(PRM_GET(cmd_out, out, status), 0);
	cr_assert_eq(cmdq_xor8(er_entry(&r), ER_ENTRY_BYTES), 0xff, "completed entry signed");
	for (size_t k = 0; k < c.out.n; k++)
		cr_assert(er_box_signed(er_box(&c.out, k)), "output block %zu signed", k);
	er_cmd_free(&r, &c);
	free(out);
	er_close(&r);
}

Test(emu_cmd_checksums, turning_checksums_off_again_stops_signing)
{
	struct er r;
	struct er_cmd c;

	er_open(&r, "emu:");
	enable_hca(&r, false);
	set_cmdif_checksum(&r, 3, false);
	set_cmdif_checksum(&r, 0, true);
	post_query_issi(&r, &c, 0, 0x34, false);
	PRM_SET(cmd_queue_entry, er_entry(&r), signature, 0x42);
	cr_assert_eq(er_cmd_run(&r, &c, NULL), 0);
	cr_assert_eq(PRM_GET(cmd_queue_entry, er_entry(&r), signature), 0x42);
	cr_assert_eq(PRM_GET(cmd_if_box, er_box(&c.out, 0), signature), 0);
	er_cmd_free(&r, &c);
	er_close(&r);
}

Test(emu_cmd_checksums, engine_verifying_signatures_works_once_checksums_are_on)
{
	/* firmware-cmd/cmdq with verify_signatures against the emulator: refused while
	 * the device has checksums off (it does not sign), accepted after SET_HCA_CAP
	 * turned them on. */
	struct et t;
	uint8_t cap_in[PRM_SIZE(query_hca_cap_in)] = { 0 };
	uint8_t *in = calloc(1, PRM_SIZE(set_hca_cap_in)), *cap = calloc(1, CAP_OUT_BYTES);

	et_open(&t, "emu:");
	et_expect(&t, et_simple(&t, PRM_CMD_OP_ENABLE_HCA, 0, PRM_SIZE(enable_hca_in), 16), 0, 0);
	PRM_SET(query_hca_cap_in, cap_in, opcode, PRM_CMD_OP_QUERY_HCA_CAP);
	PRM_SET(query_hca_cap_in, cap_in, op_mod, 1);
	cmdq_set_verify_signatures(t.q, 1);
	cr_assert_eq(cmdq_exec(t.q, cap_in, sizeof(cap_in), cap, CAP_OUT_BYTES), -EIO);
	cr_assert_str_eq(cmdq_error(t.q), "QUERY_HCA_CAP: bad entry signature on completion");
	cmdq_set_verify_signatures(t.q, 0);
	cr_assert_eq(cmdq_exec(t.q, cap_in, sizeof(cap_in), cap, CAP_OUT_BYTES), 0, "%s", cmdq_error(t.q));

	memcpy(PRM_ADDR(set_hca_cap_in, in, capability), PRM_ADDR(query_hca_cap_out, cap, capability),
	       PRM_WIDTH(set_hca_cap_in, capability) / 8);
	PRM_SET(set_hca_cap_in, in, opcode, PRM_CMD_OP_SET_HCA_CAP);
	PRM_SET(cmd_hca_cap, PRM_ADDR(set_hca_cap_in, in, capability), cmdif_checksum, 3);
	et_expect(&t, et_exec(&t, in, PRM_SIZE(set_hca_cap_in), 16), 0, 0);
	cmdq_set_verify_signatures(t.q, 1);
	cr_assert_eq(cmdq_exec(t.q, cap_in, sizeof(cap_in), cap, CAP_OUT_BYTES), 0, "%s", cmdq_error(t.q));
	cr_assert_eq(PRM_GET(cmd_hca_cap, PRM_ADDR(query_hca_cap_out, cap, capability), cmdif_checksum), 3);
	free(in);
	free(cap);
	et_close(&t);
}
