/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Reader for a Linux mlx5_core command trace (tests only).
 *
 * The fixture ../shared/fixtures/mlx5_core-connectx4-bringup-trace.txt.gz (see that
 * folder's README.md) is a kernel log of mlx5_core bringing up a real ConnectX-4
 * (firmware 14.12.1220) with `dyndbg="module mlx5_core +p"`.  For every command the
 * driver's dump_command() logs
 *
 *   ... dump command NAME(0xOPCODE) INPUT        (entry as posted, then input boxes)
 *   ... dump command NAME(0xOPCODE) OUTPUT       (entry as completed, then output boxes)
 *
 * each followed by `OFF: w0 w1 w2 w3` lines of big-endian dwords: 0x000-0x03f is the
 * 64-byte cmd_queue_entry, and from 0x040 on each mailbox block, announced by a
 * "command block:" line, is one whole cmd_if_box image (0x240 bytes: 512 data bytes,
 * then next_pointer, block_number, token, signatures), in chain order.
 *
 * This reader pairs each INPUT dump with its OUTPUT dump, keeps the raw entry and box
 * images, and rebuilds the command's input and output bytes exactly as the firmware
 * saw them with the engine's own cmdq_join() (16 inline bytes of the entry, then each
 * box's mailbox_data).  It checks what a dump lets it check: entry type, ownership,
 * block_number sequence, the token of every box against the entry's, and that the chain
 * covers input_length/output_length.  Otherwise the dump is marked truncated and `data`
 * holds only what was logged (zeros after `len`, up to declared_len): in the ConnectX-4
 * trace dump_command() printed no box for the boot MANAGE_PAGES input nor for either
 * side of ACCESS_REG, and stopped after 179 of the 202 boxes of the 12868-page
 * MANAGE_PAGES.  A replay must not expect those bytes.  Lines that are not
 * part of a dump (other drivers, mlx5_core messages) are kept as `log` lines so that a
 * test can cross-check a decoded value against what the driver printed.
 *
 * Field decoding is NOT done here: callers decode `in.data`/`out.data` with the
 * firmware-cmd/prm.h accessors.  Typical use (replaying the trace into the emulator):
 *
 *   struct fixture_trace *t;
 *   char err[256];
 *   if (fixture_trace_load_default(&t, err, sizeof(err)) < 0) ... err says why
 *   for (size_t i = 0; i < t->ncmds; i++) {
 *           const struct fixture_trace_cmd *c = &t->cmds[i];
 *           feed(c->in.data, c->in.len);                 // what the driver sent
 *           compare(c->out.data, c->out.len);            // what the firmware answered
 *   }
 *   fixture_trace_free(t);
 */
#ifndef UVERBS_TESTS_COMMON_FIXTURE_TRACE_H
#define UVERBS_TESTS_COMMON_FIXTURE_TRACE_H

#include <stddef.h>
#include <stdint.h>

#define FIXTURE_TRACE_CONNECTX4 "mlx5_core-connectx4-bringup-trace.txt.gz"
#define FIXTURE_TRACE_ENTRY_BYTES 64    /* cmd_queue_entry */
#define FIXTURE_TRACE_BOX_BYTES 0x240   /* one cmd_if_box as dump_command() prints it */

/* One `dump command ... INPUT` or `... OUTPUT` block of the log. */
struct fixture_trace_dump {
	int present;                 /* 0: the log has no such dump for this command */
	unsigned line;               /* 1-based line of the "dump command" header */
	uint8_t entry[FIXTURE_TRACE_ENTRY_BYTES]; /* cmd_queue_entry image as dumped */
	uint8_t *boxes;              /* nboxes cmd_if_box images, FIXTURE_TRACE_BOX_BYTES apart */
	size_t nboxes;
	unsigned block_headers;      /* "command block:" lines seen (== nboxes in a sane dump) */
	size_t declared_len;         /* entry input_length (INPUT) or output_length (OUTPUT) */
	size_t needed_boxes;         /* boxes declared_len needs: cmdq_boxes_for(len - 16) */
	int truncated;               /* fewer boxes than needed: data holds only what was logged */
	uint8_t *data;               /* rebuilt input (INPUT) or output (OUTPUT) bytes */
	size_t len;                  /* bytes in data: declared_len, or less if truncated */
};

struct fixture_trace_cmd {
	size_t index;                /* position in the trace, from 0 */
	char name[64];               /* as the log spells it: "QUERY_HCA_CAP",
	                                "MLX5_CMD_OP_ENABLE_HCA", "unknown command opcode" */
	uint16_t opcode;             /* from the header, checked against cmd_in.opcode */
	uint16_t op_mod;             /* cmd_in.op_mod of the rebuilt input */
	uint8_t token;               /* cmd_queue_entry.token */
	uint8_t delivery_status;     /* cmd_queue_entry.status of the OUTPUT entry */
	struct fixture_trace_dump in;
	struct fixture_trace_dump out;
};

/* A line of the log that is not part of a dump (kept for cross-checks). */
struct fixture_trace_log {
	unsigned line;
	char *text;                  /* without the "[ timestamp]" prefix */
};

struct fixture_trace {
	struct fixture_trace_cmd *cmds;
	size_t ncmds;
	struct fixture_trace_log *log;
	size_t nlog;
	char fw_version[32];         /* from "firmware version: X.Y.Z", "" if absent */
	unsigned noise_lines;        /* lines ignored: not a dump, not a hex row of one */
};

/* Read and check a trace.  `path` ending in ".gz" is read through `gzip -dc` (popen),
 * anything else as plain text.  Returns 0, or a negative errno with `err` saying which
 * line and why: -ENOENT (no file), -EIO (gzip failed), -EBADMSG (malformed dump:
 * unpaired INPUT/OUTPUT, offsets out of order, token or block_number mismatch),
 * -ENOMEM. */
int fixture_trace_load(const char *path, struct fixture_trace **out, char *err, size_t errlen);

/* The ConnectX-4 bring-up trace from $UVERBS_FIXTURES (else ../shared/fixtures
 * relative to $UVERBS_SOURCE_DIR). */
int fixture_trace_load_default(struct fixture_trace **out, char *err, size_t errlen);

void fixture_trace_free(struct fixture_trace *t);

/* The nth (from 0) command with this opcode and op_mod (op_mod < 0: any), or NULL. */
const struct fixture_trace_cmd *fixture_trace_find(const struct fixture_trace *t, uint16_t opcode,
						   int op_mod, unsigned nth);

/* Number of commands with this opcode (op_mod < 0: any). */
size_t fixture_trace_count(const struct fixture_trace *t, uint16_t opcode, int op_mod);

/* The first log line at or after `from_line` containing `needle`, or NULL. */
const struct fixture_trace_log *fixture_trace_log_find(const struct fixture_trace *t,
						       const char *needle, unsigned from_line);

#endif
