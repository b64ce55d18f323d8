/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The field-set oracle: the fields our driver sets in each command it sends, against the
 * fields firmware-proven drivers set in the same command (Linux mlx5_ib/mlx5_core,
 * Linux's VFIO mlx5 driver, rdma-core's mlx5_vfio.c and DEVX test, DPDK's DEVX
 * commands, and Linux 6.1's own commands recorded in the VM, reference K, which
 * tests/vm/field_set_linux.py checks against the recording), from
 * tests/oracle/field_set_table.txt.
 *
 * The driver runs against the emulator through its whole life: bring-up (EQs), a CQ,
 * RC, UC and UD QPs walked RST -> INIT -> RTR -> RTS (RC also RTS -> RTS), to ERR and
 * RST, an MR by MTT and one by an indirect KLM MKey, an SRQ (an RMP) and its limit.
 * The emulator's command observer (hw/emu/emu.h emu_set_cmd_observer) captures every
 * command input as the device fetched it.  For each form of each command in the table,
 * every field all its references set must be non-zero in at least one captured input
 * of that form, or be excused in the table with a reason; the excused are printed in
 * one list.  The test prints
 *   field-set oracle: N commands, M fields compared, K excused, 0 missing
 * and fails on a missing field, on a table row that names no field of our layouts, or
 * on a table form the run did not send.
 *
 * The device runs 16 KiB host pages (emu:page=16k), so log_page_size fields are
 * non-zero, as they are on Apple Silicon. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "hw/emu/emu.h"
#include "tests/mlx5/mx5_loop.h"

/* ---- capture ---- */

struct fs_cmd {
	uint16_t opcode;
	uint8_t *in;
	size_t inlen;
	uint8_t out[16];
	int status;
};

static struct {
	pthread_mutex_t lock;
	struct fs_cmd *v;
	size_t n, cap;
} fs_log = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void fs_observe(void *ctx, uint16_t opcode, uint16_t op_mod, const uint8_t *in, size_t inlen,
		       const uint8_t *out, size_t outlen, int status)
{
	(void)ctx;
	(void)op_mod;
	pthread_mutex_lock(&fs_log.lock);
	if (fs_log.n == fs_log.cap) {
		fs_log.cap = fs_log.cap ? fs_log.cap * 2 : 256;
		fs_log.v = realloc(fs_log.v, fs_log.cap * sizeof(*fs_log.v));
	}
	struct fs_cmd *c = &fs_log.v[fs_log.n++];
	memset(c, 0, sizeof(*c));
	c->opcode = opcode;
	c->inlen = inlen;
	c->in = malloc(inlen ? inlen : 1);
	memcpy(c->in, in, inlen);
	memcpy(c->out, out, outlen < sizeof(c->out) ? outlen : sizeof(c->out));
	c->status = status;
	pthread_mutex_unlock(&fs_log.lock);
}

/* ---- classification: a captured command's table key ---- */

#define FS_MAX_QPS 64
static struct {
	uint32_t qpn;
	unsigned st;
} fs_qps[FS_MAX_QPS];
static size_t fs_nqps;

static const char *fs_st_name(unsigned st)
{
	return st == 0 ? "RC" : st == 1 ? "UC" : st == 2 ? "UD" : "?";
}

static void fs_key(const struct fs_cmd *c, char *key, size_t len)
{
	const char *op = prm_opcode_name(c->opcode);
	switch (c->opcode) {
	case PRM_CMD_OP_CREATE_QP: {
		unsigned st = (unsigned)PRM_GET(qpc, PRM_ADDR(create_qp_in, c->in, qpc), st);
		if (fs_nqps < FS_MAX_QPS && !c->status) {
			fs_qps[fs_nqps].qpn = (uint32_t)PRM_GET(create_qp_out, c->out, qpn);
			fs_qps[fs_nqps++].st = st;
		}
		snprintf(key, len, "%s.%s", op, fs_st_name(st));
		return;
	}
	case PRM_CMD_OP_RST2INIT_QP:
	case PRM_CMD_OP_INIT2RTR_QP:
	case PRM_CMD_OP_RTR2RTS_QP:
	case PRM_CMD_OP_RTS2RTS_QP: {
		uint32_t qpn = (uint32_t)PRM_GET(rst2init_qp_in, c->in, qpn);
		unsigned st = 3;
		for (size_t i = 0; i < fs_nqps; i++)
			if (fs_qps[i].qpn == qpn)
				st = fs_qps[i].st;
		snprintf(key, len, "%s.%s", op, fs_st_name(st));
		return;
	}
	case PRM_CMD_OP_CREATE_MKEY: {
		const uint8_t *mkc = PRM_ADDR(create_mkey_in, c->in, memory_key_mkey_entry);
		unsigned mode = (unsigned)PRM_GET(mkc, mkc, access_mode_1_0) |
				(unsigned)PRM_GET(mkc, mkc, access_mode_4_2) << 2;
		/* an MKey created free, for UMR to fill in, is its own form (not in the table) */
		snprintf(key, len, "%s.%s", op, PRM_GET(mkc, mkc, free) ? "FREE" : mode == 1 ? "MTT"
						: mode == 2 ? "KLM" : "OTHER");
		return;
	}
	default:
		snprintf(key, len, "%s", op);
	}
}

/* ---- the table ---- */

struct fs_field {
	char path[96];
	unsigned refs;           /* bit per reference letter A..Z */
	uint32_t bit_off, width; /* in the command input; width 0: an open-ended array */
	int excuse;              /* index into fs_excuses, -1 none */
};

struct fs_section {
	char key[48];
	char layout[48];
	unsigned refs;
	char cites[8][160];
	unsigned ncites;
	struct fs_field f[48];
	unsigned nf;
	char excuses[16][2][256]; /* path, reason */
	unsigned nex;
};

static struct fs_section fs_tab[40];
static unsigned fs_ntab;

/* Resolve "a.b.c" in layout `root` to a bit offset and width; false when any
 * component names no field. */
static bool fs_resolve(const char *root, const char *path, uint32_t *off, uint32_t *width)
{
	const struct prm_struct_desc *s = prm_struct_find(root);
	char buf[96];
	snprintf(buf, sizeof(buf), "%s", path);
	*off = 0;
	for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
		if (!s)
			return false;
		const struct prm_field_desc *f = prm_field_find(s, tok);
		if (!f)
			return false;
		*off += f->bit_off;
		*width = f->width;
		s = f->kind == PRM_KIND_SUB ? prm_struct_find(f->subtype) : NULL;
	}
	return true;
}

static void fs_load(const char *file)
{
	FILE *fp = fopen(file, "r");
	cr_assert_not_null(fp, "cannot open %s: %s", file, strerror(errno));
	char line[512];
	struct fs_section *cur = NULL;
	unsigned lineno = 0;
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		line[strcspn(line, "\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		if (line[0] == '[') {
			cr_assert_lt(fs_ntab, sizeof(fs_tab) / sizeof(fs_tab[0]));
			cur = &fs_tab[fs_ntab++];
			memset(cur, 0, sizeof(*cur));
			cr_assert_eq(sscanf(line, "[%47[^]]] %47s", cur->key, cur->layout), 2, "%s:%u: %s", file,
				     lineno, line);
			cr_assert_not_null(prm_struct_find(cur->layout), "%s:%u: no layout %s", file, lineno,
					   cur->layout);
			continue;
		}
		cr_assert_not_null(cur, "%s:%u: row before any [section]", file, lineno);
		if (!strncmp(line, "ref ", 4)) {
			char letter = line[4];
			cr_assert(letter >= 'A' && letter <= 'Z', "%s:%u: reference letter", file, lineno);
			cur->refs |= 1u << (letter - 'A');
			if (cur->ncites < 8)
				snprintf(cur->cites[cur->ncites++], sizeof(cur->cites[0]), "%.150s", line + 4);
			continue;
		}
		if (!strncmp(line, "excuse ", 7)) {
			cr_assert_lt(cur->nex, 16u);
			char *p = line + 7, *sp = strchr(p, ' ');
			cr_assert_not_null(sp, "%s:%u: excuse without a reason", file, lineno);
			*sp = 0;
			snprintf(cur->excuses[cur->nex][0], 256, "%.200s", p);
			snprintf(cur->excuses[cur->nex][1], 256, "%.250s", sp + 1);
			cur->nex++;
			continue;
		}
		cr_assert_lt(cur->nf, 48u);
		struct fs_field *f = &cur->f[cur->nf++];
		char *save = NULL, *tok = strtok_r(line, " ", &save);
		snprintf(f->path, sizeof(f->path), "%s", tok);
		cr_assert(fs_resolve(cur->layout, f->path, &f->bit_off, &f->width), "%s:%u: %s names no field of %s",
			  file, lineno, f->path, cur->layout);
		f->excuse = -1;
		while ((tok = strtok_r(NULL, " ", &save))) {
			cr_assert(tok[0] >= 'A' && tok[0] <= 'Z' && !tok[1], "%s:%u: reference letter %s", file,
				  lineno, tok);
			f->refs |= 1u << (tok[0] - 'A');
		}
	}
	fclose(fp);
	for (unsigned s = 0; s < fs_ntab; s++)
		for (unsigned e = 0; e < fs_tab[s].nex; e++) {
			bool found = false;
			for (unsigned i = 0; i < fs_tab[s].nf; i++)
				if (!strcmp(fs_tab[s].f[i].path, fs_tab[s].excuses[e][0])) {
					fs_tab[s].f[i].excuse = (int)e;
					found = true;
				}
			cr_assert(found, "[%s]: excuse for %s, which is not a row", fs_tab[s].key,
				  fs_tab[s].excuses[e][0]);
		}
}

/* The field holds something other than zero in this input. */
static bool fs_set_in(const struct fs_field *f, const struct fs_cmd *c)
{
	size_t first = f->bit_off / 8;
	if (f->width == 0 || (f->width % 8 == 0 && f->width > 64)) {
		/* a byte array (a GID) or an open-ended one (event_bitmask's words, the KLM
		 * list): any non-zero byte in it */
		size_t end = f->width ? first + f->width / 8 : c->inlen;
		for (size_t b = first; b < end && b < c->inlen; b++)
			if (c->in[b])
				return true;
		return false;
	}
	if ((f->bit_off + f->width + 7) / 8 > c->inlen)
		return false;
	return prm_bits_get(c->in, f->bit_off, f->width) != 0;
}

/* ---- the driver's run ---- */

static void fs_modify(struct mx5_qp *qp, struct mx5_qp_attr *a, unsigned mask, const char *what)
{
	cr_assert_eq(mx5_qp_modify(qp, a, mask), 0, "%s: %s", what, mx5_device_error(dev));
}

/* UC or UD QP to RTS, connected to rqpn on this NIC (UC) or open to any (UD). */
static void fs_uc_ud_to_rts(struct mx5_qp *qp, enum mx5_qp_type t, uint32_t rqpn)
{
	struct mx5_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_INIT;
	a.port_num = 1;
	if (t == MX5_QPT_UD) {
		a.qkey = 0x11111111;
		fs_modify(qp, &a, MX5_QP_STATE | MX5_QP_PKEY_INDEX | MX5_QP_PORT | MX5_QP_QKEY, "UD INIT");
	} else {
		a.qp_access_flags = MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE;
		fs_modify(qp, &a, MX5_QP_STATE | MX5_QP_PKEY_INDEX | MX5_QP_PORT | MX5_QP_ACCESS_FLAGS,
			  "UC INIT");
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_RTR;
	if (t == MX5_QPT_UD) {
		fs_modify(qp, &a, MX5_QP_STATE, "UD RTR");
	} else {
		struct mx5_gid_entry g;
		cr_assert_eq(mx5_gid_get(dev, 1, 0, &g), 0);
		a.path_mtu = 3;
		a.dest_qp_num = rqpn;
		a.rq_psn = 0x200;
		memcpy(a.ah.dgid, g.gid, 16);
		memcpy(a.ah.dmac, g.mac, 6);
		a.ah.hop_limit = 64;
		a.ah.port_num = 1;
		fs_modify(qp, &a, MX5_QP_RTR_UC, "UC RTR");
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_RTS;
	a.sq_psn = 0x300;
	fs_modify(qp, &a, MX5_QP_RTS_UC, "RTS");
}

static void fs_qp_down(struct mx5_qp *qp)
{
	struct mx5_qp_attr a = { .qp_state = MX5_QPS_ERR };
	fs_modify(qp, &a, MX5_QP_STATE, "2ERR");
	a.qp_state = MX5_QPS_RESET;
	fs_modify(qp, &a, MX5_QP_STATE, "2RST");
}

static struct mx5_qp *fs_qp(enum mx5_qp_type t, struct mx5_cq *cq)
{
	struct mx5_qp_init_attr a = { .type = t, .send_cq = cq, .recv_cq = cq,
				      .cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2,
					       .max_recv_sge = 2, .max_inline_data = 64 } };
	struct mx5_qp *qp = NULL;
	cr_assert_eq(mx5_qp_create(pd, &a, &qp), 0, "%s", mx5_device_error(dev));
	return qp;
}

static void fs_run_driver(void)
{
	emu_set_cmd_observer(fs_observe, NULL);
	loop_open("emu:page=16k");
	struct mx5_cq *cq = loop_cq(64, NULL);
	/* RC: to RTS, one ACK timeout change (RTS2RTS), then ERR and RESET */
	struct mx5_qp *rc = loop_qp(cq, cq, NULL, 16);
	loop_connect(rc, mx5_qp_num(rc));
	struct mx5_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_RTS;
	a.timeout = 18;
	fs_modify(rc, &a, MX5_QP_STATE | MX5_QP_TIMEOUT, "RTS2RTS");
	fs_qp_down(rc);
	struct mx5_qp *uc = fs_qp(MX5_QPT_UC, cq);
	fs_uc_ud_to_rts(uc, MX5_QPT_UC, mx5_qp_num(uc));
	fs_qp_down(uc);
	struct mx5_qp *ud = fs_qp(MX5_QPT_UD, cq);
	fs_uc_ud_to_rts(ud, MX5_QPT_UD, 0);
	fs_qp_down(ud);
	/* an MR by MTT, and one split into MTT parts under an indirect KLM MKey */
	size_t big = 64 * 16384;
	/* 16 KiB aligned and never 32 KiB aligned: the device maps a region at a 64 KiB
	 * aligned IOVA with the VA's offset in the page, so the driver's best page size
	 * (mx5_best_page_shift) is then 16 KiB, 64 entries, over the limit of 8 below.  A
	 * buffer that happened to be 128 KiB aligned against its IOVA fitted in 8 entries
	 * of 128 KiB and sent no KLM MKey (about one run in 30). */
	uint8_t *raw = aligned_alloc(32768, big + 32768);
	cr_assert_not_null(raw);
	uint8_t *mem = raw + 16384;
	struct mx5_mr *mtt, *klm;
	cr_assert_eq(mx5_mr_reg(pd, mem, 16384, MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE |
					     MX5_ACCESS_REMOTE_READ, &mtt), 0, "%s", mx5_device_error(dev));
	mx5_device_set_mkey_mtt_limit(dev, 8);
	cr_assert_eq(mx5_mr_reg(pd, mem, big, MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_READ, &klm), 0, "%s",
		     mx5_device_error(dev));
	/* an SRQ and its limit */
	struct mx5_srq_attr sa = { .max_wr = 32, .max_sge = 1 };
	struct mx5_srq *srq;
	cr_assert_eq(mx5_srq_create(pd, NULL, &sa, &srq), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_srq_arm(srq, 4), 0, "%s", mx5_device_error(dev));
	loop_close();
	emu_set_cmd_observer(NULL, NULL);
	free(raw);
}

Test(field_set, every_field_all_references_set_is_set_by_the_driver_or_excused)
{
	const char *src = getenv("UVERBS_SOURCE_DIR");
	char file[512];
	snprintf(file, sizeof(file), "%s/tests/oracle/field_set_table.txt", src ? src : ".");
	fs_load(file);
	cr_assert_gt(fs_ntab, 0u);
	fs_run_driver();

	char (*keys)[48] = calloc(fs_log.n, sizeof(*keys));
	for (size_t i = 0; i < fs_log.n; i++)
		fs_key(&fs_log.v[i], keys[i], sizeof(keys[i]));

	unsigned compared = 0, excused = 0, missing = 0, notes = 0;
	char excuse_list[8192] = "", missing_list[4096] = "", note_list[8192] = "";
	for (unsigned s = 0; s < fs_ntab; s++) {
		struct fs_section *sec = &fs_tab[s];
		unsigned sent = 0;
		for (size_t i = 0; i < fs_log.n; i++)
			sent += !fs_log.v[i].status && !strcmp(keys[i], sec->key);
		cr_assert_gt(sent, 0u, "[%s]: the driver's run sent no such command (the table names a form "
			     "the run must exercise)", sec->key);
		for (unsigned k = 0; k < sec->nf; k++) {
			struct fs_field *f = &sec->f[k];
			bool all = (f->refs & sec->refs) == sec->refs;
			bool set = false;
			for (size_t i = 0; i < fs_log.n && !set; i++)
				if (!fs_log.v[i].status && !strcmp(keys[i], sec->key))
					set = fs_set_in(f, &fs_log.v[i]);
			char row[600];
			if (!all) {
				if (!set) {
					snprintf(row, sizeof(row), "  %.60s %.120s (set by some references only)\n",
						 sec->key, f->path);
					strncat(note_list, row, sizeof(note_list) - strlen(note_list) - 1);
					notes++;
				}
				continue;
			}
			compared++;
			if (set)
				continue;
			if (f->excuse >= 0) {
				snprintf(row, sizeof(row), "  %.60s %.120s: %.380s\n", sec->key, f->path,
					 sec->excuses[f->excuse][1]);
				strncat(excuse_list, row, sizeof(excuse_list) - strlen(excuse_list) - 1);
				excused++;
			} else {
				snprintf(row, sizeof(row), "  %.60s %.120s (every reference sets it: %.380s)\n", sec->key,
					 f->path, sec->cites[0]);
				strncat(missing_list, row, sizeof(missing_list) - strlen(missing_list) - 1);
				missing++;
			}
		}
	}
	printf("field-set excused (a field every reference sets that this run leaves 0, and why):\n%s",
	       excuse_list);
	printf("field-set notes (set by some references, not by us; not checked):\n%s", note_list);
	if (missing)
		printf("field-set MISSING:\n%s", missing_list);
	printf("field-set oracle: %u commands, %u fields compared, %u excused, %u missing\n", fs_ntab, compared,
	       excused, missing);
	fflush(stdout);
	for (size_t i = 0; i < fs_log.n; i++)
		free(fs_log.v[i].in);
	free(fs_log.v);
	free(keys);
	cr_assert_eq(missing, 0u, "fields every reference sets and the driver does not:\n%s", missing_list);
}
