/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Option string of the "emu:" URI: ip=127.0.0.N, page=4k|16k, iova=offset|scatter,
 * fail=OPCODE:STATUS[:SYNDROME][@SKIP], hang=OPCODE, fatal=SYNDROME, port=down,
 * init_ms=N, pages=N (PAGE_REQUEST traffic on its own after INIT_HCA), icm=N (every
 * CREATE_* held until the driver gave N more pages), pagehold=OPCODE:N|-N|all[@SKIP]
 * (one command held for a page exchange, hw/emu/hold.c), cmdq_entries=N (queue size the
 * init segment reports), msix=N (interrupt vectors offered), the wire faults
 * (loss|reorder|dup|corrupt=RATE, seed=N, link=up|down), sched=fifo|normal (the
 * device thread's scheduling, rx_thread.c) and hold_us=N (how long the socket stays
 * left to an application's polls after its last call, transport.h EMU_POLL_HOLD_NS).
 * Opcodes may be numbers or names (CREATE_EQ). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "hw/emu/emu.h"
#include "hw/emu/transport.h"
#include "hw/platform/bits.h"

static int parse_num(const char *s, unsigned long *v)
{
	char *end;

	if (!*s)
		return -EINVAL;
	*v = strtoul(s, &end, 0);
	return *end ? -EINVAL : 0;
}

static int parse_opcode(const char *s, uint16_t *op)
{
	unsigned long v;

	if (parse_num(s, &v) == 0 && v < 0x10000) {
		*op = (uint16_t)v;
		return 0;
	}
	return prm_opcode_from_name(s, op);
}

/* "VALUE@SKIP": cut the @SKIP suffix off val and parse it into *skip (0 without one). */
static int take_skip(char *val, unsigned *skip)
{
	char *at = strchr(val, '@');
	unsigned long v;

	*skip = 0;
	if (!at)
		return 0;
	*at++ = '\0';
	if (parse_num(at, &v) < 0 || v > UINT32_MAX)
		return -EINVAL;
	*skip = (unsigned)v;
	return 0;
}

/* A number in [lo, hi]. */
static int parse_range(const char *s, unsigned long lo, unsigned long hi, unsigned long *v)
{
	return parse_num(s, v) < 0 || *v < lo || *v > hi ? -EINVAL : 0;
}

/* One of two words: *flag = 1 for `one`, 0 for `zero`. */
static int parse_choice(const char *s, const char *one, const char *zero, unsigned *flag)
{
	if (!strcmp(s, one))
		*flag = 1;
	else if (!strcmp(s, zero))
		*flag = 0;
	else
		return -EINVAL;
	return 0;
}

/* The next free fault rule, or NULL when all EMU_MAX_FAIL_RULES are taken. */
static struct emu_fail_rule *new_rule(struct emu_config *cfg)
{
	if (cfg->nfail == EMU_MAX_FAIL_RULES)
		return NULL;
	memset(&cfg->fail[cfg->nfail], 0, sizeof(cfg->fail[0]));
	return &cfg->fail[cfg->nfail];
}

/* An option: its name, its parser, the help text a refused option string quotes and,
 * for a plain number, the emu_config field and its bounds. */
struct emu_opt {
	const char *name;
	int (*parse)(struct emu_config *cfg, const struct emu_opt *opt, char *val);
	const char *help;
	size_t field;                /* offsetof(struct emu_config, the field) */
	unsigned long lo, hi;        /* EMU_OPT_UINT: bounds */
	const char *one, *zero;      /* EMU_OPT_FLAG: the words for 1 and 0 */
};

/* ---- one parser per kind of option: (cfg, option, value) -> 0 or -errno ---- */

/* A plain number, stored in the field opt->field: a flag (EMU_OPT_FLAG) is one of two
 * words, opt->one (1) or opt->zero (0), in an int field; any other (EMU_OPT_UINT) a
 * number within [opt->lo, opt->hi] in an unsigned field.  Both are stored as an
 * unsigned: a flag's 0 or 1 has the same bytes as an int (C11 6.2.6.2). */
_Static_assert(sizeof(int) == sizeof(unsigned), "flag fields are int, number fields unsigned");
static int opt_number(struct emu_config *cfg, const struct emu_opt *opt, char *val)
{
	unsigned long v;
	unsigned u;

	if (opt->one) {
		if (parse_choice(val, opt->one, opt->zero, &u) < 0)
			return -EINVAL;
	} else {
		if (parse_range(val, opt->lo, opt->hi, &v) < 0)
			return -EINVAL;
		u = (unsigned)v;
	}
	memcpy((char *)cfg + opt->field, &u, sizeof(u));
	return 0;
}


static int opt_ip(struct emu_config *cfg, const struct emu_opt *opt, char *val)
{
	struct in_addr a;

	(void)opt;
	if (inet_pton(AF_INET, val, &a) != 1)
		return -EINVAL;
	cfg->ipv4 = ntohl(a.s_addr);
	return 0;
}

static int opt_page(struct emu_config *cfg, const struct emu_opt *opt, char *val)
{
	(void)opt;
	if (!strcmp(val, "4k") || !strcmp(val, "4096"))
		cfg->host_page_size = 4096;
	else if (!strcmp(val, "16k") || !strcmp(val, "16384"))
		cfg->host_page_size = 16384;
	else
		return -EINVAL;
	return 0;
}

static int opt_iova(struct emu_config *cfg, const struct emu_opt *opt, char *val)
{
	unsigned scatter;

	(void)opt;
	if (parse_choice(val, "scatter", "offset", &scatter) < 0)
		return -EINVAL;
	cfg->iova_mode = scatter ? EMU_IOVA_SCATTER : EMU_IOVA_OFFSET;
	return 0;
}

/* fail=OPCODE:STATUS[:SYNDROME][@SKIP] and hang=OPCODE[@SKIP]. */
static int opt_fail(struct emu_config *cfg, const struct emu_opt *opt, char *val)
{
	struct emu_fail_rule *r = new_rule(cfg);
	char *parts[3] = { val, NULL, NULL };
	unsigned long v;

	if (!r)
		return -ENOSPC;
	if (take_skip(val, &r->skip) < 0)
		return -EINVAL;
	for (int i = 1; i < 3; i++) {
		parts[i] = parts[i - 1] ? strchr(parts[i - 1], ':') : NULL;
		if (parts[i])
			*parts[i]++ = '\0';
	}
	if (parse_opcode(parts[0], &r->opcode) < 0)
		return -EINVAL;
	if (!strcmp(opt->name, "hang")) {
		r->hang = 1;
	} else {
		if (!parts[1] || parse_range(parts[1], 1, 0xff, &v) < 0)
			return -EINVAL;
		r->status = (uint8_t)v;
		if (parts[2]) {
			if (parse_range(parts[2], 0, UINT32_MAX, &v) < 0)
				return -EINVAL;
			r->syndrome = (uint32_t)v;
		}
	}
	cfg->nfail++;
	return 0;
}

/* pagehold=OPCODE:N|-N|all[@SKIP] (hw/emu/hold.c). */
static int opt_pagehold(struct emu_config *cfg, const struct emu_opt *opt, char *val)
{
	struct emu_fail_rule *r = new_rule(cfg);
	char *colon, *end;
	long n;

	(void)opt;
	if (!r)
		return -ENOSPC;
	r->page_hold = 1;
	if (take_skip(val, &r->skip) < 0 || !(colon = strchr(val, ':')))
		return -EINVAL;
	*colon++ = '\0';
	if (parse_opcode(val, &r->opcode) < 0)
		return -EINVAL;
	if (!strcmp(colon, "all")) {
		r->release_all = 1;
	} else {
		n = strtol(colon, &end, 0);
		if (!*colon || *end || n == 0 || n > (1l << 20) || n < -(1l << 20))
			return -EINVAL;
		r->pages = (int32_t)n;
	}
	cfg->nfail++;
	return 0;
}

static int opt_cmdq_entries(struct emu_config *cfg, const struct emu_opt *opt, char *val)
{
	unsigned long v;

	(void)opt;
	if (parse_range(val, 1, 32, &v) < 0 || !plat_is_pow2(v))
		return -EINVAL;
	cfg->cmdq_entries = (unsigned)v;
	return 0;
}

static int opt_fatal(struct emu_config *cfg, const struct emu_opt *opt, char *val)
{
	unsigned long v;

	(void)opt;
	if (parse_range(val, 1, 0xff, &v) < 0)
		return -EINVAL;
	cfg->fatal_synd = (uint8_t)v;
	return 0;
}

static bool rate_ok(double r)
{
	return r >= 0.0 && r <= 1.0;
}

/* The wire faults' own syntax (transport.h), also the test API's. */
int emu_wire_faults_parse(const char *opts, struct emu_wire_faults *f, int *link_up)
{
	char buf[256], *save = NULL, *tok;

	if (!opts || !f)
		return -EINVAL;
	if (strlen(opts) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, opts);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *val = strchr(tok, '='), *end;
		double v;

		if (!val)
			return -EINVAL;
		*val++ = '\0';
		if (!strcmp(tok, "link")) {
			if (!strcmp(val, "up") || !strcmp(val, "down")) {
				if (link_up)
					*link_up = !strcmp(val, "up");
				continue;
			}
			return -EINVAL;
		}
		if (!strcmp(tok, "seed")) {
			f->seed = strtoull(val, &end, 0);
			if (*end)
				return -EINVAL;
			continue;
		}
		v = strtod(val, &end);
		if (*end || !rate_ok(v))
			return -EINVAL;
		if (!strcmp(tok, "loss"))
			f->loss = v;
		else if (!strcmp(tok, "reorder"))
			f->reorder = v;
		else if (!strcmp(tok, "dup"))
			f->dup = v;
		else if (!strcmp(tok, "corrupt"))
			f->corrupt = v;
		else
			return -EINVAL;
	}
	return 0;
}

/* Wire faults (wire_faults.c): validated now, kept as text and applied by the transport
 * area once the device's transport exists (transport_area.c). */
static int opt_wire(struct emu_config *cfg, const struct emu_opt *opt, char *val)
{
	struct emu_wire_faults wf = { 0 };
	size_t used = strlen(cfg->wire_faults);
	char one[96];

	snprintf(one, sizeof(one), "%s=%s", opt->name, val);
	if (emu_wire_faults_parse(one, &wf, NULL) < 0 ||
	    used + strlen(one) + 2 > sizeof(cfg->wire_faults))
		return -EINVAL;
	snprintf(cfg->wire_faults + used, sizeof(cfg->wire_faults) - used, "%s%s", used ? "," : "", one);
	return 0;
}

/* cap=BLOCK.FIELD:VALUE and capmax=BLOCK.FIELD:VALUE (the block's current and maximum,
 * or its maximum only; field names from firmware-cmd/layouts/caps.def). */
static int opt_cap(struct emu_config *cfg, const struct emu_opt *opt, char *val)
{
	static const struct { const char *name, *layout; uint8_t type; } blocks[] = {
		{ "general", "cmd_hca_cap", PRM_CAP_GENERAL_DEVICE }, { "odp", "odp_cap", PRM_CAP_ODP },
		{ "atomic", "atomic_caps", PRM_CAP_ATOMIC }, { "roce", "roce_cap", PRM_CAP_ROCE },
	};
	char *dot = strchr(val, '.'), *colon = strrchr(val, ':');
	struct emu_cap_override *o;
	unsigned long v;
	size_t b = 0;

	if (!dot || !colon || colon < dot || cfg->ncap_override >= 8)
		return -EINVAL;
	*dot = *colon = '\0';
	while (b < sizeof(blocks) / sizeof(blocks[0]) && strcmp(blocks[b].name, val))
		b++;
	if (b == sizeof(blocks) / sizeof(blocks[0]) ||
	    !prm_field_find(prm_struct_find(blocks[b].layout), dot + 1) ||
	    strlen(dot + 1) >= sizeof(o->field) || parse_range(colon + 1, 0, UINT32_MAX, &v) < 0)
		return -EINVAL;
	o = &cfg->cap_override[cfg->ncap_override++];
	o->type = blocks[b].type;
	o->max_only = !strcmp(opt->name, "capmax");
	snprintf(o->field, sizeof(o->field), "%s", dot + 1);
	o->value = (uint32_t)v;
	return 0;
}

#define EMU_OPT_UINT(n, f, l, h, help) { n, opt_number, help, offsetof(struct emu_config, f), l, h, NULL, NULL }
#define EMU_OPT_STR_(x) #x
#define EMU_OPT_STR(x) EMU_OPT_STR_(x)   /* a bound in an option's help, as the compiler has it */
#define EMU_OPT_FLAG(n, f, one, zero, help) { n, opt_number, help, offsetof(struct emu_config, f), 0, 0, one, zero }

/* The options of the emu: URI. */
static const struct emu_opt emu_opts[] = {
	{ "ip", opt_ip, "ip=127.0.0.N" },
	{ "page", opt_page, "page=4k|16k" },
	{ "iova", opt_iova, "iova=offset|scatter" },
	{ "fail", opt_fail, "fail=OP:STATUS[:SYND][@SKIP]" },
	{ "hang", opt_fail, "hang=OP[@SKIP]" },
	{ "fatal", opt_fatal, "fatal=SYND" },
	EMU_OPT_FLAG("port", port_down, "down", "up", "port=up|down"),
	EMU_OPT_UINT("init_ms", init_delay_ms, 0, 60000, "init_ms=N"),
	EMU_OPT_UINT("flr_ms", flr_ms, 0, 60000, "flr_ms=N"),
	EMU_OPT_UINT("pages", auto_pages, 0, 1u << 20, "pages=N"),
	EMU_OPT_UINT("icm", icm_pages, 0, 1u << 20, "icm=N"),
	EMU_OPT_UINT("msix", msix, 1, EMU_NUM_VECTORS, "msix=1..64"),
	EMU_OPT_FLAG("nic_ifc", nic_ifc_disabled, "disabled", "full", "nic_ifc=full|disabled"),
	EMU_OPT_FLAG("admin", admin_down, "down", "up", "admin=up|down"),
	EMU_OPT_FLAG("ptys", ptys_ext, "ext", "legacy", "ptys=legacy|ext"),
	{ "pagehold", opt_pagehold, "pagehold=OP:N|-N|all[@SKIP]" },
	{ "cmdq_entries", opt_cmdq_entries, "cmdq_entries=1..32" },
	{ "loss", opt_wire, "loss|reorder|dup|corrupt=RATE" },
	{ "reorder", opt_wire, NULL },
	{ "dup", opt_wire, NULL },
	{ "corrupt", opt_wire, NULL },
	{ "seed", opt_wire, "seed=N" },
	{ "link", opt_wire, "link=up|down" },
	EMU_OPT_FLAG("sched", sched_normal, "normal", "fifo", "sched=fifo|normal"),
	EMU_OPT_FLAG("copy", copy_syscall, "syscall", "guarded", "copy=guarded|syscall"),
	EMU_OPT_FLAG("bf", bf_torn, "torn", "whole", "bf=whole|torn"),
	EMU_OPT_FLAG("gso", gso_off, "off", "on", "gso=on|off"),
	EMU_OPT_FLAG("gro", gro_off, "off", "on", "gro=on|off"),
	EMU_OPT_UINT("hold_us", poll_hold_us, EMU_POLL_HOLD_US, EMU_POLL_HOLD_MAX_US,
		     "hold_us=" EMU_OPT_STR(EMU_POLL_HOLD_US) ".." EMU_OPT_STR(EMU_POLL_HOLD_MAX_US)),
	{ "cap", opt_cap, "cap|capmax=BLOCK.FIELD:VALUE" },
	{ "capmax", opt_cap, NULL },
};
#define EMU_NOPTS (sizeof(emu_opts) / sizeof(emu_opts[0]))

/* "emu: bad option 'TOK' in 'OPTS' (ip=127.0.0.N, page=4k|16k, ...)". */
static void bad_option(char *err, size_t errlen, const char *tok, const char *opts)
{
	size_t n;

	if (!err || !errlen)
		return;
	n = (size_t)snprintf(err, errlen, "emu: bad option '%s' in '%s' (", tok, opts);
	for (size_t i = 0, first = 1; i < EMU_NOPTS && n < errlen; i++) {
		if (!emu_opts[i].help)
			continue;
		n += (size_t)snprintf(err + n, errlen - n, "%s%s", first ? "" : ", ", emu_opts[i].help);
		first = 0;
	}
	if (n < errlen)
		snprintf(err + n, errlen - n, ")");
}

int emu_config_parse(const char *opts, struct emu_config *cfg, char *err, size_t errlen)
{
	char buf[512], *save = NULL, *tok;

	if (!cfg)
		return -EINVAL;
	if (!opts || !*opts)
		return 0;
	if (strlen(opts) >= sizeof(buf)) {
		if (err)
			snprintf(err, errlen, "emu: option string too long");
		return -EINVAL;
	}
	strcpy(buf, opts);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *val = strchr(tok, '=');
		size_t i = 0;
		int rc;

		if (val)
			*val++ = '\0';
		while (i < EMU_NOPTS && strcmp(emu_opts[i].name, tok))
			i++;
		rc = !val || i == EMU_NOPTS ? -EINVAL : emu_opts[i].parse(cfg, &emu_opts[i], val);
		if (rc < 0) {
			bad_option(err, errlen, tok, opts);
			return rc;
		}
	}
	return 0;
}

/* One "key=value" more at *n of buf, after a comma unless first; *n counts what the
 * whole string takes even when buf is too short. */
__attribute__((format(printf, 4, 5))) static void opt_append(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	char one[sizeof(((struct emu_config *)0)->wire_faults) + 32];   /* the longest option */
	va_list ap;
	int w;

	va_start(ap, fmt);
	vsnprintf(one, sizeof(one), fmt, ap);
	va_end(ap);
	w = snprintf(*n < len ? buf + *n : NULL, *n < len ? len - *n : 0, "%s%s", *n ? "," : "", one);
	*n += (size_t)(w > 0 ? w : 0);
}

int emu_config_dataplane_opts(const struct emu_config *cfg, char *buf, size_t len)
{
	size_t n = 0;

	if (len)
		buf[0] = '\0';
	if (cfg->wire_faults[0])
		opt_append(buf, len, &n, "%s", cfg->wire_faults);
	if (cfg->sched_normal)
		opt_append(buf, len, &n, "sched=normal");
	if (cfg->copy_syscall)
		opt_append(buf, len, &n, "copy=syscall");
	if (cfg->bf_torn)
		opt_append(buf, len, &n, "bf=torn");
	if (cfg->gso_off)
		opt_append(buf, len, &n, "gso=off");
	if (cfg->gro_off)
		opt_append(buf, len, &n, "gro=off");
	if (cfg->poll_hold_us)
		opt_append(buf, len, &n, "hold_us=%u", cfg->poll_hold_us);
	if (n >= len) {
		if (len)
			buf[0] = '\0';
		return -ENOSPC;
	}
	return (int)n;
}
