/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Reader for Linux mlx5_core command traces: see fixture_trace.h for the format and
 * what is checked.  Field decoding goes through firmware-cmd/prm.h only; the payload is
 * rebuilt with the command engine's cmdq_join(). */
#include "tests/common/fixture_trace.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "firmware-cmd/cmdq.h"
#include "firmware-cmd/prm.h"

_Static_assert(FIXTURE_TRACE_ENTRY_BYTES == PRM_SIZE(cmd_queue_entry),
	       "dump_command() prints the whole cmd_queue_entry");
_Static_assert(FIXTURE_TRACE_BOX_BYTES == PRM_SIZE(cmd_if_box),
	       "dump_command() prints each whole cmd_if_box (mlx5_cmd_prot_block)");

/* PRM "Command Queue Entry": type 0x7 is the PCIe command interface, the only one. */
#define TRACE_ENTRY_TYPE_PCIE 0x7

struct parse {
	struct fixture_trace *t;
	struct fixture_trace_dump *cur; /* dump receiving hex rows, or NULL */
	uint8_t *rows;                  /* bytes of the open dump */
	size_t nrows_bytes, cap;
	char *err;
	size_t errlen;
};

static int fail(struct parse *p, int rc, unsigned line, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (!p->err || !p->errlen)
		return rc;
	if (line)
		n = snprintf(p->err, p->errlen, "line %u: ", line);
	if (n < 0 || (size_t)n >= p->errlen)
		return rc;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return rc;
}

/* Kernel log prefix "[  +0.000002] " or "[12345.678901] " is optional. */
static const char *strip_prefix(const char *s)
{
	if (*s == '[') {
		const char *e = strchr(s, ']');

		if (e)
			s = e + 1;
	}
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* "OFF: w0 w1 w2 w3" with OFF 3..8 hex digits and each word 8 hex digits. */
static int parse_row(const char *s, size_t *off, uint8_t bytes[16])
{
	size_t o = 0;
	int nd = 0;

	for (; hexval((unsigned char)*s) >= 0; s++, nd++) {
		if (nd >= 8)
			return 0;
		o = o * 16 + (size_t)hexval((unsigned char)*s);
	}
	if (nd < 3 || *s++ != ':')
		return 0;
	for (int w = 0; w < 4; w++) {
		if (*s != ' ' && *s != '\t')
			return 0;
		while (*s == ' ' || *s == '\t')
			s++;
		for (int i = 0; i < 4; i++) {
			int hi = hexval((unsigned char)s[0]), lo = hi < 0 ? -1 : hexval((unsigned char)s[1]);

			if (lo < 0)
				return 0;
			bytes[w * 4 + i] = (uint8_t)(hi * 16 + lo);
			s += 2;
		}
	}
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s)
		return 0;
	*off = o;
	return 1;
}

/* "dump command NAME(0xOPCODE) INPUT|OUTPUT" */
static int parse_header(const char *s, char *name, size_t namelen, unsigned *opcode, int *is_input)
{
	const char *h = strstr(s, "dump command ");
	const char *paren, *tail;
	char *end;
	unsigned long op;
	size_t n;

	if (!h)
		return 0;
	h += strlen("dump command ");
	paren = strrchr(h, '(');
	if (!paren || strncmp(paren, "(0x", 3) != 0)
		return 0;
	op = strtoul(paren + 3, &end, 16);
	if (end == paren + 3 || *end != ')' || op > 0xffff)
		return 0;
	tail = end + 1;
	while (*tail == ' ')
		tail++;
	if (strncmp(tail, "INPUT", 5) == 0 && !tail[5])
		*is_input = 1;
	else if (strncmp(tail, "OUTPUT", 6) == 0 && !tail[6])
		*is_input = 0;
	else
		return 0;
	n = (size_t)(paren - h);
	if (n >= namelen)
		n = namelen - 1;
	memcpy(name, h, n);
	name[n] = 0;
	*opcode = (unsigned)op;
	return 1;
}

static uint64_t box_next_pointer(const uint8_t *box)
{
	/* cmd_if_box.next_pointer_31_10 holds address bits 31:10 (1 KiB-aligned boxes) */
	return (PRM_GET(cmd_if_box, box, next_pointer_63_32) << 32) |
	       (PRM_GET(cmd_if_box, box, next_pointer_31_10) << 10);
}

static uint64_t entry_mailbox_pointer(const uint8_t *entry, int input)
{
	if (input)
		return (PRM_GET(cmd_queue_entry, entry, input_mailbox_pointer_63_32) << 32) |
		       (PRM_GET(cmd_queue_entry, entry, input_mailbox_pointer_31_9) << 9);
	return (PRM_GET(cmd_queue_entry, entry, output_mailbox_pointer_63_32) << 32) |
	       (PRM_GET(cmd_queue_entry, entry, output_mailbox_pointer_31_9) << 9);
}

/* Turn the rows of the open dump into entry + boxes, check them, rebuild the payload. */
static int finish_dump(struct parse *p, int input)
{
	struct fixture_trace_dump *d = p->cur;
	const uint8_t *inl;
	uint8_t token;
	size_t use;

	if (!d)
		return 0;
	p->cur = NULL;
	if (p->nrows_bytes < FIXTURE_TRACE_ENTRY_BYTES)
		return fail(p, -EBADMSG, d->line, "dump has %zu bytes, less than the 64-byte entry",
			    p->nrows_bytes);
	if ((p->nrows_bytes - FIXTURE_TRACE_ENTRY_BYTES) % FIXTURE_TRACE_BOX_BYTES)
		return fail(p, -EBADMSG, d->line, "dump of %#zx bytes is not entry + whole boxes",
			    p->nrows_bytes);
	memcpy(d->entry, p->rows, FIXTURE_TRACE_ENTRY_BYTES);
	d->nboxes = (p->nrows_bytes - FIXTURE_TRACE_ENTRY_BYTES) / FIXTURE_TRACE_BOX_BYTES;
	if (d->nboxes) {
		d->boxes = malloc(d->nboxes * FIXTURE_TRACE_BOX_BYTES);
		if (!d->boxes)
			return fail(p, -ENOMEM, d->line, "out of memory");
		memcpy(d->boxes, p->rows + FIXTURE_TRACE_ENTRY_BYTES,
		       d->nboxes * FIXTURE_TRACE_BOX_BYTES);
	}
	if (d->block_headers != d->nboxes)
		return fail(p, -EBADMSG, d->line, "%u \"command block:\" headers for %zu boxes",
			    d->block_headers, d->nboxes);
	if (PRM_GET(cmd_queue_entry, d->entry, type) != TRACE_ENTRY_TYPE_PCIE)
		return fail(p, -EBADMSG, d->line, "entry type %#x is not the PCIe interface (0x7)",
			    (unsigned)PRM_GET(cmd_queue_entry, d->entry, type));
	/* Posted entries belong to hardware (ownership 1), completed ones to software. */
	if (PRM_GET(cmd_queue_entry, d->entry, ownership) != (input ? 1u : 0u))
		return fail(p, -EBADMSG, d->line, "%s entry with ownership %u", input ? "INPUT" : "OUTPUT",
			    (unsigned)PRM_GET(cmd_queue_entry, d->entry, ownership));

	d->declared_len = input ? PRM_GET(cmd_queue_entry, d->entry, input_length)
				: PRM_GET(cmd_queue_entry, d->entry, output_length);
	d->needed_boxes = d->declared_len > CMDQ_INLINE_BYTES
				  ? cmdq_boxes_for(d->declared_len - CMDQ_INLINE_BYTES) : 0;
	if (d->needed_boxes && !entry_mailbox_pointer(d->entry, input))
		return fail(p, -EBADMSG, d->line, "length %#zx needs mailboxes but the pointer is 0",
			    d->declared_len);

	token = (uint8_t)PRM_GET(cmd_queue_entry, d->entry, token);
	for (size_t i = 0; i < d->nboxes; i++) {
		const uint8_t *b = d->boxes + i * FIXTURE_TRACE_BOX_BYTES;

		if (PRM_GET(cmd_if_box, b, block_number) != i)
			return fail(p, -EBADMSG, d->line, "box %zu has block_number %u", i,
				    (unsigned)PRM_GET(cmd_if_box, b, block_number));
		if (PRM_GET(cmd_if_box, b, token) != token)
			return fail(p, -EBADMSG, d->line, "box %zu token %#x, entry token %#x", i,
				    (unsigned)PRM_GET(cmd_if_box, b, token), token);
		if (i + 1 < d->nboxes && !box_next_pointer(b))
			return fail(p, -EBADMSG, d->line, "box %zu ends the chain but box %zu follows",
				    i, i + 1);
	}
	d->truncated = d->nboxes < d->needed_boxes;
	/* A dump that stops early must stop in the middle of a chain, not at its end. */
	if (d->truncated && d->nboxes &&
	    !box_next_pointer(d->boxes + (d->nboxes - 1) * FIXTURE_TRACE_BOX_BYTES))
		return fail(p, -EBADMSG, d->line, "chain ends after %zu boxes, length %#zx needs %zu",
			    d->nboxes, d->declared_len, d->needed_boxes);

	d->data = calloc(1, d->declared_len ? d->declared_len : 1);
	if (!d->data)
		return fail(p, -ENOMEM, d->line, "out of memory");
	inl = input ? PRM_ADDR(cmd_queue_entry, d->entry, command_input_inline_data)
		    : PRM_ADDR(cmd_queue_entry, d->entry, command_output_inline_data);
	use = d->nboxes < d->needed_boxes ? d->nboxes : d->needed_boxes;
	d->len = cmdq_join(d->data, d->declared_len, inl, d->boxes, use, FIXTURE_TRACE_BOX_BYTES);
	d->present = 1;
	return 0;
}

static int add_log(struct parse *p, unsigned line, const char *text)
{
	struct fixture_trace *t = p->t;
	struct fixture_trace_log *l;

	if (!*text)
		return 0;
	l = realloc(t->log, (t->nlog + 1) * sizeof(*l));
	if (!l)
		return fail(p, -ENOMEM, line, "out of memory");
	t->log = l;
	l[t->nlog].line = line;
	l[t->nlog].text = strdup(text);
	if (!l[t->nlog].text)
		return fail(p, -ENOMEM, line, "out of memory");
	t->nlog++;
	return 0;
}

static int add_row(struct parse *p, unsigned line, size_t off, const uint8_t bytes[16])
{
	if (off != p->nrows_bytes)
		return fail(p, -EBADMSG, line, "row at offset %#zx, expected %#zx", off, p->nrows_bytes);
	if (p->nrows_bytes + 16 > p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 4096;
		uint8_t *r = realloc(p->rows, cap);

		if (!r)
			return fail(p, -ENOMEM, line, "out of memory");
		p->rows = r;
		p->cap = cap;
	}
	memcpy(p->rows + p->nrows_bytes, bytes, 16);
	p->nrows_bytes += 16;
	return 0;
}

/* Which command an OUTPUT dump completes: the oldest one still waiting with the same
 * opcode and token (mlx5_core may have several commands in flight). */
static struct fixture_trace_cmd *pending_for(struct fixture_trace *t, unsigned opcode, uint8_t token)
{
	for (size_t i = 0; i < t->ncmds; i++) {
		struct fixture_trace_cmd *c = &t->cmds[i];

		if (!c->out.present && c->out.line == 0 && c->opcode == opcode && c->token == token)
			return c;
	}
	return NULL;
}

/* Checks that need both halves of a command. */
static int pair_checks(struct parse *p, struct fixture_trace_cmd *c)
{
	const uint8_t *a = c->in.entry, *b = c->out.entry;

	if (memcmp(PRM_ADDR(cmd_queue_entry, a, command_input_inline_data),
		   PRM_ADDR(cmd_queue_entry, b, command_input_inline_data), CMDQ_INLINE_BYTES) != 0)
		return fail(p, -EBADMSG, c->out.line, "OUTPUT entry changed the input inline data");
	if (PRM_GET(cmd_queue_entry, a, input_length) != PRM_GET(cmd_queue_entry, b, input_length) ||
	    PRM_GET(cmd_queue_entry, a, output_length) != PRM_GET(cmd_queue_entry, b, output_length))
		return fail(p, -EBADMSG, c->out.line, "INPUT and OUTPUT entries disagree on lengths");
	c->delivery_status = (uint8_t)PRM_GET(cmd_queue_entry, b, status);
	return 0;
}

static int close_dump(struct parse *p)
{
	struct fixture_trace_dump *d = p->cur;
	struct fixture_trace *t = p->t;
	int rc;

	if (!d)
		return 0;
	/* d points into t->cmds; find the command it belongs to */
	for (size_t i = 0; i < t->ncmds; i++) {
		struct fixture_trace_cmd *c = &t->cmds[i];

		if (d == &c->in) {
			rc = finish_dump(p, 1);
			if (rc)
				return rc;
			if (c->in.len < PRM_SIZE(cmd_in))
				return fail(p, -EBADMSG, c->in.line, "input shorter than the header");
			if (PRM_GET(cmd_in, c->in.data, opcode) != c->opcode)
				return fail(p, -EBADMSG, c->in.line, "header says 0x%x, input opcode 0x%x",
					    c->opcode, (unsigned)PRM_GET(cmd_in, c->in.data, opcode));
			c->op_mod = (uint16_t)PRM_GET(cmd_in, c->in.data, op_mod);
			c->token = (uint8_t)PRM_GET(cmd_queue_entry, c->in.entry, token);
			return 0;
		}
		if (d == &c->out) {
			rc = finish_dump(p, 0);
			return rc ? rc : pair_checks(p, c);
		}
	}
	return fail(p, -EINVAL, 0, "internal: open dump not found");
}

static int open_dump(struct parse *p, unsigned line, const char *name, unsigned opcode, int input)
{
	struct fixture_trace *t = p->t;
	struct fixture_trace_cmd *c;
	int rc = close_dump(p);

	if (rc)
		return rc;
	p->nrows_bytes = 0;
	if (input) {
		c = realloc(t->cmds, (t->ncmds + 1) * sizeof(*c));
		if (!c)
			return fail(p, -ENOMEM, line, "out of memory");
		t->cmds = c;
		c = &t->cmds[t->ncmds];
		memset(c, 0, sizeof(*c));
		c->index = t->ncmds++;
		snprintf(c->name, sizeof(c->name), "%s", name);
		c->opcode = (uint16_t)opcode;
		c->in.line = line;
		p->cur = &c->in;
		return 0;
	}
	/* The OUTPUT's token is only known once its entry row is read: pair it then. */
	p->cur = NULL;
	return 1;
}

static void strip_eol(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = 0;
}

/* An OUTPUT dump is matched to its command by token, which sits in the last row of
 * the entry: its rows are buffered until the whole entry (0x000-0x03f) is read. */
struct pending_out {
	int active;
	unsigned line;
	unsigned opcode;
	char name[64];
	unsigned block_headers;
};

static int attach_output(struct parse *p, struct pending_out *po)
{
	struct fixture_trace_cmd *c;
	uint8_t token = (uint8_t)PRM_GET(cmd_queue_entry, p->rows, token);

	c = pending_for(p->t, po->opcode, token);
	if (!c)
		return fail(p, -EBADMSG, po->line, "OUTPUT of 0x%x token %#x has no INPUT", po->opcode,
			    token);
	c->out.line = po->line;
	c->out.block_headers = po->block_headers;
	p->cur = &c->out;
	po->active = 0;
	return 0;
}

static int parse_stream(struct parse *p, FILE *f)
{
	struct pending_out po = { 0 };
	char *buf = NULL;
	size_t bufcap = 0;
	unsigned line = 0;
	int rc = 0;

	while (getline(&buf, &bufcap, f) >= 0) {
		const char *s;
		char name[64];
		unsigned opcode;
		int input;
		size_t off;
		uint8_t bytes[16];

		line++;
		strip_eol(buf);
		s = strip_prefix(buf);
		if (parse_row(s, &off, bytes)) {
			if (po.active) {
				rc = add_row(p, line, off, bytes);
				if (!rc && p->nrows_bytes == FIXTURE_TRACE_ENTRY_BYTES)
					rc = attach_output(p, &po);
			} else if (p->cur) {
				rc = add_row(p, line, off, bytes);
			} else {
				p->t->noise_lines++;
			}
		} else if (parse_header(s, name, sizeof(name), &opcode, &input)) {
			if (po.active) {
				rc = fail(p, -EBADMSG, po.line, "OUTPUT dump without its entry");
				break;
			}
			rc = open_dump(p, line, name, opcode, input);
			if (rc == 1) {
				po = (struct pending_out){ .active = 1, .line = line, .opcode = opcode };
				snprintf(po.name, sizeof(po.name), "%s", name);
				rc = 0;
			}
		} else if (strstr(s, "command block:")) {
			if (po.active)
				po.block_headers++;
			else if (p->cur)
				p->cur->block_headers++;
			else
				p->t->noise_lines++;
		} else {
			const char *fw = strstr(s, "firmware version: ");

			if (fw && !p->t->fw_version[0]) {
				fw += strlen("firmware version: ");
				snprintf(p->t->fw_version, sizeof(p->t->fw_version), "%.*s",
					 (int)strcspn(fw, " \t"), fw);
			}
			if (*s)
				p->t->noise_lines++;
			rc = add_log(p, line, s);
		}
		if (rc)
			break;
	}
	if (!rc && po.active)
		rc = fail(p, -EBADMSG, po.line, "OUTPUT dump without its entry");
	if (!rc)
		rc = close_dump(p);
	free(buf);
	return rc;
}

static FILE *open_trace(const char *path, int *is_pipe)
{
	size_t n = strlen(path);

	*is_pipe = n > 3 && strcmp(path + n - 3, ".gz") == 0;
	if (!*is_pipe)
		return fopen(path, "r");
	/* single-quote the path for the shell; ' becomes '\'' */
	{
		size_t cap = 32 + 4 * n;
		char *cmd = malloc(cap), *q;
		FILE *f;

		if (!cmd)
			return NULL;
		q = cmd + sprintf(cmd, "gzip -dc -- '");
		for (const char *s = path; *s; s++) {
			if (*s == '\'') {
				memcpy(q, "'\\''", 4);
				q += 4;
			} else {
				*q++ = *s;
			}
		}
		strcpy(q, "'");
		f = popen(cmd, "r");
		free(cmd);
		return f;
	}
}

int fixture_trace_load(const char *path, struct fixture_trace **out, char *err, size_t errlen)
{
	struct parse p = { .err = err, .errlen = errlen };
	FILE *f;
	int is_pipe, rc;

	if (err && errlen)
		err[0] = 0;
	if (!out)
		return fail(&p, -EINVAL, 0, "no result pointer");
	*out = NULL;
	if (!path || access(path, R_OK) != 0)
		return fail(&p, -ENOENT, 0, "cannot read %s", path ? path : "(null)");
	p.t = calloc(1, sizeof(*p.t));
	if (!p.t)
		return fail(&p, -ENOMEM, 0, "out of memory");
	f = open_trace(path, &is_pipe);
	if (!f) {
		free(p.t);
		return fail(&p, -EIO, 0, "cannot open %s", path);
	}
	rc = parse_stream(&p, f);
	if (is_pipe) {
		int st = pclose(f);

		if (!rc && st != 0)
			rc = fail(&p, -EIO, 0, "gzip -dc %s failed (status %d)", path, st);
	} else {
		fclose(f);
	}
	free(p.rows);
	if (!rc && p.t->ncmds == 0)
		rc = fail(&p, -EBADMSG, 0, "%s holds no command dump", path);
	if (rc) {
		fixture_trace_free(p.t);
		return rc;
	}
	*out = p.t;
	return 0;
}

int fixture_trace_load_default(struct fixture_trace **out, char *err, size_t errlen)
{
	const char *dir = getenv("UVERBS_FIXTURES");
	char path[4096];

	if (dir && *dir) {
		snprintf(path, sizeof(path), "%s/%s", dir, FIXTURE_TRACE_CONNECTX4);
	} else if ((dir = getenv("UVERBS_SOURCE_DIR")) && *dir) {
		snprintf(path, sizeof(path), "%s/../shared/fixtures/%s", dir, FIXTURE_TRACE_CONNECTX4);
	} else {
		if (err && errlen)
			snprintf(err, errlen, "neither UVERBS_FIXTURES nor UVERBS_SOURCE_DIR is set");
		if (out)
			*out = NULL;
		return -ENOENT;
	}
	return fixture_trace_load(path, out, err, errlen);
}

static void free_dump(struct fixture_trace_dump *d)
{
	free(d->boxes);
	free(d->data);
}

void fixture_trace_free(struct fixture_trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->ncmds; i++) {
		free_dump(&t->cmds[i].in);
		free_dump(&t->cmds[i].out);
	}
	for (size_t i = 0; i < t->nlog; i++)
		free(t->log[i].text);
	free(t->cmds);
	free(t->log);
	free(t);
}

const struct fixture_trace_cmd *fixture_trace_find(const struct fixture_trace *t, uint16_t opcode,
						   int op_mod, unsigned nth)
{
	if (!t)
		return NULL;
	for (size_t i = 0; i < t->ncmds; i++) {
		const struct fixture_trace_cmd *c = &t->cmds[i];

		if (c->opcode == opcode && (op_mod < 0 || c->op_mod == op_mod) && nth-- == 0)
			return c;
	}
	return NULL;
}

size_t fixture_trace_count(const struct fixture_trace *t, uint16_t opcode, int op_mod)
{
	size_t n = 0;

	for (size_t i = 0; t && i < t->ncmds; i++)
		if (t->cmds[i].opcode == opcode && (op_mod < 0 || t->cmds[i].op_mod == op_mod))
			n++;
	return n;
}

const struct fixture_trace_log *fixture_trace_log_find(const struct fixture_trace *t,
						       const char *needle, unsigned from_line)
{
	for (size_t i = 0; t && needle && i < t->nlog; i++)
		if (t->log[i].line >= from_line && strstr(t->log[i].text, needle))
			return &t->log[i];
	return NULL;
}
