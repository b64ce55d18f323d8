/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The mlx5_core trace reader (tests/common/fixture_trace.c) on synthetic logs: it must
 * pair dumps, skip noise, rebuild payloads through the mailbox chain, flag a chain the
 * log cut short, and refuse dumps whose boxes contradict their entry. */
#include <criterion/criterion.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "firmware-cmd/cmdq.h"
#include "firmware-cmd/prm.h"
#include "tests/common/fixture_trace.h"

#define BOX FIXTURE_TRACE_BOX_BYTES

static char tmp_path[64];
static int noise_in_rows; /* print a foreign log line between the rows of every dump */

static FILE *open_tmp(void)
{
	int fd;

	snprintf(tmp_path, sizeof(tmp_path), "/tmp/uv-fixture-trace-XXXXXX");
	fd = mkstemp(tmp_path);
	cr_assert(fd >= 0);
	return fdopen(fd, "w");
}

static void rows(FILE *f, const uint8_t *p, size_t len, size_t off)
{
	for (size_t i = 0; i < len; i += 16) {
		uint32_t w[4];

		memcpy(w, p + i, 16);
		fprintf(f, "[  +0.000001] %03zx: %08x %08x %08x %08x\n", off + i, be32toh(w[0]),
			be32toh(w[1]), be32toh(w[2]), be32toh(w[3]));
		if (noise_in_rows && i == 16)
			fprintf(f, "[  +0.000116] usb 3-12: cp210x converter now attached to ttyUSB0\n");
	}
}

/* One dump as mlx5_core's dump_command() prints it. */
static void dump(FILE *f, const char *name, unsigned opcode, int input, const uint8_t *entry,
		 const uint8_t *boxes, size_t nboxes)
{
	fprintf(f, "[  +0.000004] mlx5_core 0000:02:00.0: 0000:02:00.0:dump_command:587:(pid 87): "
		   "dump command %s(0x%x) %s\n", name, opcode, input ? "INPUT" : "OUTPUT");
	rows(f, entry, 64, 0);
	fprintf(f, "\n");
	for (size_t i = 0; i < nboxes; i++) {
		fprintf(f, "[  +0.000005] mlx5_core 0000:02:00.0: 0000:02:00.0:dump_command:608:"
			   "(pid 87): command block:\n");
		rows(f, boxes + i * BOX, BOX, 64 + i * BOX);
		fprintf(f, "\n");
	}
}

static void make_entry(uint8_t *e, const uint8_t *in, size_t inlen, size_t outlen, uint8_t token,
		       int owner)
{
	memset(e, 0, 64);
	PRM_SET(cmd_queue_entry, e, type, 7);
	PRM_SET(cmd_queue_entry, e, input_length, inlen);
	PRM_SET(cmd_queue_entry, e, output_length, outlen);
	PRM_SET(cmd_queue_entry, e, input_mailbox_pointer_63_32, 7);
	PRM_SET(cmd_queue_entry, e, output_mailbox_pointer_63_32, 7);
	PRM_SET(cmd_queue_entry, e, token, token);
	PRM_SET(cmd_queue_entry, e, ownership, owner);
	memcpy(PRM_ADDR(cmd_queue_entry, e, command_input_inline_data), in, 16);
}

/* Boxes for `len` payload bytes (inline part excluded by cmdq_split), chained. */
static uint8_t *make_boxes(const uint8_t *payload, size_t len, uint8_t inl[16], size_t nboxes,
			   uint8_t token)
{
	uint8_t *b = calloc(nboxes ? nboxes : 1, BOX);

	cmdq_split(payload, len, inl, b, nboxes, BOX);
	for (size_t i = 0; i < nboxes; i++) {
		PRM_SET(cmd_if_box, b + i * BOX, block_number, i);
		PRM_SET(cmd_if_box, b + i * BOX, token, token);
		if (i + 1 < nboxes)
			PRM_SET(cmd_if_box, b + i * BOX, next_pointer_63_32, 7);
	}
	return b;
}

static struct fixture_trace *load(int expect_rc, char *err, size_t errlen)
{
	struct fixture_trace *t = NULL;
	int rc = fixture_trace_load(tmp_path, &t, err, errlen);

	unlink(tmp_path);
	cr_assert_eq(rc, expect_rc, "rc %d (%s)", rc, err);
	return t;
}

/* A QUERY_ADAPTER-like command: 16-byte input, 0x30-byte output (one box). */
static void write_two_commands(FILE *f, uint8_t bad_box_token, uint32_t bad_block)
{
	uint8_t in[16] = { 0x01, 0x01, 0, 0, 0, 0, 0, 0x05 }, e[64], out[0x30], inl[16];
	uint8_t *boxes;

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i * 7 + 1);
	out[0] = 0; /* status */
	fprintf(f, "Hexdump:\n\n[  +0.023976] mlx5_core 0000:02:00.0: firmware version: 14.12.1220\n");
	fprintf(f, "[  +0.019326] EDAC MC: Ver: 3.0.0\n");
	make_entry(e, in, 16, sizeof(out), 0x21, 1);
	dump(f, "QUERY_ADAPTER", 0x101, 1, e, NULL, 0);
	fprintf(f, "[  +0.006464] usbcore: registered new interface driver usbserial\n");
	boxes = make_boxes(out, sizeof(out), inl, 1, 0x21);
	if (bad_box_token)
		PRM_SET(cmd_if_box, boxes, token, bad_box_token);
	if (bad_block)
		PRM_SET(cmd_if_box, boxes, block_number, bad_block);
	make_entry(e, in, 16, sizeof(out), 0x21, 0);
	memcpy(PRM_ADDR(cmd_queue_entry, e, command_output_inline_data), inl, 16);
	dump(f, "QUERY_ADAPTER", 0x101, 0, e, boxes, 1);
	free(boxes);

	uint8_t in2[16] = { 0x08, 0x02 };
	make_entry(e, in2, 16, 16, 0x22, 1);
	dump(f, "ALLOC_UAR", 0x802, 1, e, NULL, 0);
	make_entry(e, in2, 16, 16, 0x22, 0);
	e[0x20 + 11] = 0x13; /* uar index in the output inline data */
	dump(f, "ALLOC_UAR", 0x802, 0, e, NULL, 0);
}

Test(fixture_trace, pairs_dumps_and_rebuilds_output_through_the_chain)
{
	FILE *f = open_tmp();
	char err[256];
	struct fixture_trace *t;
	const struct fixture_trace_cmd *c;

	noise_in_rows = 1;
	write_two_commands(f, 0, 0);
	noise_in_rows = 0;
	fclose(f);
	t = load(0, err, sizeof(err));
	cr_assert_eq(t->ncmds, 2);
	cr_assert_str_eq(t->fw_version, "14.12.1220");
	c = fixture_trace_find(t, 0x101, -1, 0);
	cr_assert_not_null(c);
	cr_assert_eq(c->op_mod, 5);
	cr_assert_eq(c->token, 0x21);
	cr_assert(c->in.present && c->out.present);
	cr_assert_eq(c->out.nboxes, 1);
	cr_assert_eq(c->out.len, 0x30);
	cr_assert_not(c->out.truncated);
	for (size_t i = 1; i < 0x30; i++)
		cr_assert_eq(c->out.data[i], (uint8_t)(i * 7 + 1), "byte %zu", i);
	c = fixture_trace_find(t, 0x802, 0, 0);
	cr_assert_not_null(c);
	cr_assert_eq(c->out.data[11], 0x13);
	cr_assert_null(fixture_trace_find(t, 0x802, 0, 1));
	cr_assert_eq(fixture_trace_count(t, 0x101, -1), 1);
	cr_assert_not_null(fixture_trace_log_find(t, "usbcore", 0));
	cr_assert_not_null(fixture_trace_log_find(t, "ttyUSB0", 0));
	cr_assert_geq(t->noise_lines, 3);
	fixture_trace_free(t);
}

Test(fixture_trace, rejects_a_box_whose_token_differs_from_the_entry)
{
	FILE *f = open_tmp();
	char err[256];

	write_two_commands(f, 0x99, 0);
	fclose(f);
	cr_assert_null(load(-EBADMSG, err, sizeof(err)));
	cr_assert(strstr(err, "token"), "%s", err);
}

Test(fixture_trace, rejects_a_box_out_of_block_number_sequence)
{
	FILE *f = open_tmp();
	char err[256];

	write_two_commands(f, 0, 3);
	fclose(f);
	cr_assert_null(load(-EBADMSG, err, sizeof(err)));
	cr_assert(strstr(err, "block_number"), "%s", err);
}

Test(fixture_trace, rejects_an_output_without_its_input)
{
	FILE *f = open_tmp();
	char err[256];
	uint8_t e[64], in[16] = { 0x01, 0x04 };

	make_entry(e, in, 16, 16, 1, 0);
	dump(f, "ENABLE_HCA", 0x104, 0, e, NULL, 0);
	fclose(f);
	cr_assert_null(load(-EBADMSG, err, sizeof(err)));
	cr_assert(strstr(err, "no INPUT"), "%s", err);
}

Test(fixture_trace, rejects_rows_out_of_order)
{
	FILE *f = open_tmp();
	char err[256];

	fprintf(f, "[ 1.0] x: dump command ENABLE_HCA(0x104) INPUT\n"
		   "[ 1.0] 000: 07000000 00000010 00000000 00000000\n"
		   "[ 1.0] 020: 00000000 00000000 00000000 00000000\n");
	fclose(f);
	cr_assert_null(load(-EBADMSG, err, sizeof(err)));
	cr_assert(strstr(err, "line 3"), "%s", err);
}

Test(fixture_trace, flags_a_chain_the_log_cut_short)
{
	FILE *f = open_tmp();
	char err[256];
	size_t len = 16 + 3 * 512; /* needs 3 boxes; the log shows 2 */
	uint8_t *payload = calloc(1, len), inl[16], e[64], *boxes;
	struct fixture_trace *t;

	for (size_t i = 0; i < len; i++)
		payload[i] = (uint8_t)(i ^ 0x5a);
	payload[0] = 0x01;
	payload[1] = 0x08;
	boxes = make_boxes(payload, len, inl, 3, 4);
	make_entry(e, inl, len, 16, 4, 1);
	dump(f, "MANAGE_PAGES", 0x108, 1, e, boxes, 2);
	make_entry(e, inl, len, 16, 4, 0);
	dump(f, "MANAGE_PAGES", 0x108, 0, e, NULL, 0);
	fclose(f);
	t = load(0, err, sizeof(err));
	cr_assert_eq(t->cmds[0].in.declared_len, len);
	cr_assert_eq(t->cmds[0].in.needed_boxes, 3);
	cr_assert(t->cmds[0].in.truncated);
	cr_assert_eq(t->cmds[0].in.len, 16 + 2 * 512);
	cr_assert_eq(memcmp(t->cmds[0].in.data, payload, 16 + 2 * 512), 0);
	fixture_trace_free(t);
	free(boxes);
	free(payload);
}

Test(fixture_trace, reads_gzip_through_popen)
{
	char err[256], cmd[160];
	FILE *f = open_tmp();
	struct fixture_trace *t = NULL;
	int rc;

	write_two_commands(f, 0, 0);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "gzip -f '%s'", tmp_path);
	cr_assert_eq(system(cmd), 0);
	strcat(tmp_path, ".gz");
	rc = fixture_trace_load(tmp_path, &t, err, sizeof(err));
	unlink(tmp_path);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_eq(t->ncmds, 2);
	fixture_trace_free(t);
}

Test(fixture_trace, missing_file_is_enoent)
{
	struct fixture_trace *t = (void *)1;
	char err[256];

	cr_assert_eq(fixture_trace_load("/nonexistent/trace.txt.gz", &t, err, sizeof(err)), -ENOENT);
	cr_assert_null(t);
}
