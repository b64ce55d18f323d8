/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Device-side oracle: every command of the real ConnectX-4 bring-up
 * (../shared/fixtures/mlx5_core-connectx4-bringup-trace.txt.gz, firmware 14.12.1220) is
 * posted to the emulated device the way mlx5_core posted it, at the level of the
 * command queue (tests/emu/emu_raw.h: the 64-byte entry and the mailbox blocks written
 * by hand, the doorbell rung by hand), and what the device writes back is compared
 * with what the real firmware wrote back, field by field:
 *
 *   the completed entry   every cmd_queue_entry field (type, lengths, token, signature,
 *                         status, ownership, input inline bytes) against the trace's
 *                         OUTPUT entry; the mailbox pointers, which hold our addresses,
 *                         must come back as we posted them;
 *   each output mailbox   every cmd_if_box control field (block_number, token,
 *                         ctrl_signature, signature, and the reserved bytes) against
 *                         the trace's block; next_pointer as "our next block" where the
 *                         trace has a next block, else 0;
 *   the output            status, syndrome and every field of the command's output
 *                         layout (capability blocks with their own layout), and every
 *                         byte no field covers.
 *
 * What is posted is the trace's own INPUT: the entry as dumped (token and signature byte
 * included; only the mailbox pointers are ours), the input blocks as dumped (control
 * part included; the next pointers are ours) and, where mlx5_core printed no block, the
 * block it would have posted.  Addresses in the inputs are replaced by memory our shim
 * pinned (MANAGE_PAGES pas[], CREATE_EQ pas[]) and the traced UAR numbers by the ones
 * our ALLOC_UARs returned.  Output blocks are posted as Linux cmd.c prepares them with
 * checksums off: zeroed, chained, block_number and token set, signatures 0.
 *
 * Output fields whose value depends on the card model are excused in one table below,
 * each with its reason, and listed when the test runs.  Capability fields are otherwise
 * compared too: the emulator's blocks are seeded from this trace (hw/emu/caps_seed.c),
 * so only the fields hw/emu/caps.c changes to make it a ConnectX-5 Ex differ.
 *
 * Prints `device-side trace oracle: N answers compared, M mismatches, K fields
 * excused` and fails on any mismatch. */
#include <stdio.h>

#include "tests/common/fixture_trace.h"
#include "tests/emu/emu_raw.h"
#include "tests/emu/trace_caps.h"

/* The one table of output fields excused from the comparison. */
static struct excuse {
	uint16_t opcode;
	const char *layout;
	const char *field;
	const char *why;
	unsigned seen, differed;
} excused[] = {
	{ PRM_CMD_OP_QUERY_HCA_CAP, "cmd_hca_cap", "pg",
	  "capability: the emulated ConnectX-5 Ex offers on-demand paging (hw/emu/caps.c)" },
	{ PRM_CMD_OP_QUERY_HCA_CAP, "cmd_hca_cap", "uar_4k",
	  "capability: the emulated ConnectX-5 Ex offers 4 KiB UARs (hw/emu/caps.c)" },
	{ PRM_CMD_OP_QUERY_HCA_CAP, "cmd_hca_cap", "num_of_uars_per_page",
	  "capability: follows uar_4k (hw/emu/caps.c)" },
	{ PRM_CMD_OP_QUERY_HCA_CAP, "atomic_caps", "supported_atomic_req_8B_endianness_mode_1",
	  "capability: the emulated ConnectX-5 Ex answers 8-byte atomics in host order (hw/emu/caps.c)" },
	{ PRM_CMD_OP_QUERY_HCA_CAP, "atomic_caps", "atomic_req_8B_endianness_mode",
	  "capability: current mode follows the one above (hw/emu/caps.c)" },
	{ PRM_CMD_OP_QUERY_ISSI, "query_issi_out", "supported_issi_dw0",
	  "capability: interface versions; the ConnectX-4 reports ISSI 1 only (0x2), the emulator 0 and 1 (0x3)" },
	{ PRM_CMD_OP_CREATE_EQ, "create_eq_out", "eq_number", "object number: the device picks it" },
	{ PRM_CMD_OP_QUERY_HCA_CAP, "cmd_hca_cap", "vport_group_manager",
	  "capability: no vports to manage here; Linux went for them (hw/emu/caps.c, tests/emu/trace_caps.h)" },
	{ PRM_CMD_OP_QUERY_HCA_CAP, "cmd_hca_cap", "eswitch_manager", "capability: no e-switch here (hw/emu/caps.c)" },
	{ PRM_CMD_OP_QUERY_HCA_CAP, "cmd_hca_cap", "nic_flow_table", "capability: no NIC flow tables here (hw/emu/caps.c)" },
	{ PRM_CMD_OP_QUERY_HCA_CAP, "cmd_hca_cap", "cc_query_allowed", "capability: no congestion control here (hw/emu/caps.c)" },
	{ PRM_CMD_OP_QUERY_HCA_CAP, "cmd_hca_cap", "cc_modify_allowed", "capability: no congestion control here (hw/emu/caps.c)" },
	{ PRM_CMD_OP_QUERY_HCA_CAP, "cmd_hca_cap", "device_frequency_khz",
	  "capability: the internal timer counts nanoseconds (hw/emu/caps.c)" },
};
#define NEXCUSED (sizeof(excused) / sizeof(excused[0]))

static struct excuse *excuse_for(uint16_t op, const char *layout, const char *field)
{
	for (size_t i = 0; i < NEXCUSED; i++)
		if (excused[i].opcode == op && !strcmp(excused[i].layout, layout) && !strcmp(excused[i].field, field))
			return &excused[i];
	return NULL;
}

/* Output layout of each traced opcode (firmware-cmd/layouts). */
static const char *out_layout(uint16_t op)
{
	switch (op) {
	case PRM_CMD_OP_ENABLE_HCA: return "enable_hca_out";
	case PRM_CMD_OP_QUERY_ISSI: return "query_issi_out";
	case PRM_CMD_OP_SET_ISSI: return "set_issi_out";
	case PRM_CMD_OP_QUERY_PAGES: return "query_pages_out";
	case PRM_CMD_OP_MANAGE_PAGES: return "manage_pages_out";
	case PRM_CMD_OP_ACCESS_REG: return "access_register_out";
	case PRM_CMD_OP_QUERY_HCA_CAP: return "query_hca_cap_out";
	case PRM_CMD_OP_SET_HCA_CAP: return "set_hca_cap_out";
	case PRM_CMD_OP_INIT_HCA: return "init_hca_out";
	case PRM_CMD_OP_QUERY_ADAPTER: return "query_adapter_out";
	case PRM_CMD_OP_ALLOC_UAR: return "alloc_uar_out";
	case PRM_CMD_OP_CREATE_EQ: return "create_eq_out";
	default: return "cmd_out";
	}
}

/* Capability blocks with a layout, by type (QUERY_HCA_CAP op_mod >> 1); the others
 * (Ethernet offloads, flow table, ...) are compared byte by byte. */
static const char *cap_layout(unsigned type)
{
	static const char *const l[] = { [0] = "cmd_hca_cap", [2] = "odp_cap", [3] = "atomic_caps", [4] = "roce_cap" };

	return type < sizeof(l) / sizeof(l[0]) ? l[type] : NULL;
}

/* ---- comparison ---- */

struct cmp {
	const struct fixture_trace_cmd *c;
	const char *where;        /* "entry", "output mailbox 3", "output" */
	uint8_t *covered;         /* per byte of the image: some field was looked at */
	size_t len;               /* bytes of the image both sides have */
	unsigned mismatches;
	unsigned printed;
};

static void mismatch(struct cmp *k, const char *what, uint64_t ours, uint64_t real)
{
	k->mismatches++;
	if (k->printed++ < 12)
		printf("  command %zu %s (trace line %u) %s: %s = 0x%llx, real firmware 0x%llx\n", k->c->index,
		       prm_opcode_name(k->c->opcode), k->c->out.line, k->where, what, (unsigned long long)ours,
		       (unsigned long long)real);
}

static void cover(struct cmp *k, unsigned bit_off, unsigned width)
{
	for (unsigned b = bit_off / 8; b < (bit_off + width + 7) / 8 && b < k->len; b++)
		k->covered[b] = 1;
}

/* Every FIELD of `layout` at base_bit, recursing into sub-structures.  `skip` names
 * fields the caller compares itself (NULL-terminated). */
static void compare_fields(struct cmp *k, const char *layout, const uint8_t *ours, const uint8_t *real,
			   unsigned base_bit, const char *const *skip)
{
	const struct prm_struct_desc *s = prm_struct_find(layout);

	cr_assert_not_null(s, "layout %s", layout);
	for (size_t i = 0; i < s->nfields; i++) {
		const struct prm_field_desc *f = &s->fields[i];
		unsigned off = base_bit + f->bit_off;
		bool skipped = false;
		struct excuse *x;
		char what[128];

		if (f->kind == PRM_KIND_SUB) {
			compare_fields(k, f->subtype, ours, real, off, skip);
			continue;
		}
		if (f->kind != PRM_KIND_FIELD || (off + f->width + 7) / 8 > k->len)
			continue;
		for (const char *const *n = skip; n && *n; n++)
			skipped |= !strcmp(*n, f->name);
		cover(k, off, f->width);
		if (skipped)
			continue;
		uint64_t a = prm_bits_get(ours, off, f->width), b = prm_bits_get(real, off, f->width);
		x = excuse_for(k->c->opcode, layout, f->name);
		if (x) {
			x->seen++;
			x->differed += a != b;
			continue;
		}
		if (a != b) {
			snprintf(what, sizeof(what), "%s.%s", layout, f->name);
			mismatch(k, what, a, b);
		}
	}
}

/* Bytes in [from, to) that no field covered: reserved bytes and blocks without a layout. */
static void compare_uncovered(struct cmp *k, const uint8_t *ours, const uint8_t *real, size_t from, size_t to)
{
	char what[64];

	for (size_t b = from; b < to && b < k->len; b++)
		if (!k->covered[b] && ours[b] != real[b]) {
			snprintf(what, sizeof(what), "byte 0x%zx (no field)", b);
			mismatch(k, what, ours[b], real[b]);
		}
}

static unsigned compare_entry(const struct fixture_trace_cmd *c, const uint8_t *ours, const uint8_t *posted)
{
	static const char *const skip[] = { "input_mailbox_pointer_63_32", "input_mailbox_pointer_31_9",
					     "output_mailbox_pointer_63_32", "output_mailbox_pointer_31_9", NULL };
	uint8_t covered[ER_ENTRY_BYTES] = { 0 };
	struct cmp k = { .c = c, .where = "entry", .covered = covered, .len = ER_ENTRY_BYTES };
	const uint8_t *real = c->out.entry;

	compare_fields(&k, "cmd_queue_entry", ours, real, 0, skip);
	/* Our addresses: the device must hand them back untouched. */
	for (const char *const *n = skip; *n; n++) {
		const struct prm_field_desc *f = prm_field_find(prm_struct_find("cmd_queue_entry"), *n);
		uint64_t a = prm_bits_get(ours, f->bit_off, f->width), p = prm_bits_get(posted, f->bit_off, f->width);

		if (a != p) {
			char what[96];

			snprintf(what, sizeof(what), "cmd_queue_entry.%s (posted 0x%llx)", *n, (unsigned long long)p);
			mismatch(&k, what, a, p);
		}
	}
	/* The input inline bytes are compared byte by byte below (they must come back as
	 * the trace shows them); the output inline bytes are part of the output, compared
	 * with its layout. */
	memset(covered + PRM_OFF(cmd_queue_entry, command_output_inline_data) / 8, 1, CMDQ_INLINE_BYTES);
	compare_uncovered(&k, ours, real, 0, ER_ENTRY_BYTES);
	return k.mismatches;
}

static unsigned compare_box(const struct fixture_trace_cmd *c, size_t i, const uint8_t *ours, const uint8_t *real,
			    uint64_t our_next)
{
	static const char *const skip[] = { "next_pointer_63_32", "next_pointer_31_10", NULL };
	uint8_t covered[ER_BOX_BYTES] = { 0 };
	char where[48];
	struct cmp k = { .c = c, .where = where, .covered = covered, .len = ER_BOX_BYTES };
	uint64_t a = er_box_next(ours), b = er_box_next(real);

	snprintf(where, sizeof(where), "output mailbox %zu", i);
	/* mailbox_data is the output, compared with its layout. */
	memset(covered, 1, CMDQ_BOX_DATA_BYTES);
	compare_fields(&k, "cmd_if_box", ours, real, 0, skip);
	if (a != (b ? our_next : 0)) {
		char what[96];

		snprintf(what, sizeof(what), "cmd_if_box.next_pointer (real points %s)", b ? "at the next block" : "nowhere");
		mismatch(&k, what, a, b);
	}
	compare_uncovered(&k, ours, real, 0, ER_BOX_BYTES);
	return k.mismatches;
}

static unsigned compare_output(const struct fixture_trace_cmd *c, const uint8_t *ours, size_t len)
{
	size_t n = len < c->out.len ? len : c->out.len;
	struct cmp k = { .c = c, .where = "output", .covered = calloc(1, n + 1), .len = n };
	const char *layout = out_layout(c->opcode);

	compare_fields(&k, layout, ours, c->out.data, 0, NULL);
	if (c->opcode == PRM_CMD_OP_QUERY_HCA_CAP && cap_layout(c->op_mod >> 1))
		compare_fields(&k, cap_layout(c->op_mod >> 1), ours, c->out.data,
			       PRM_OFF(query_hca_cap_out, capability), NULL);
	compare_uncovered(&k, ours, c->out.data, 0, n);
	free(k.covered);
	return k.mismatches;
}

/* ---- posting the trace's input ---- */

#define MAX_UARS 16

struct oracle {
	struct er r;
	struct shim_dma pages[4], eqbuf[32];
	unsigned npage_allocs, neq;
	uint32_t uar_real[MAX_UARS], uar_ours[MAX_UARS];
	unsigned nuar;
};

/* The trace's input bytes with its host addresses replaced by ours (as
 * tests/emu/test_trace_replay.c does through the engine). */
static uint8_t *input_bytes(struct oracle *o, const struct fixture_trace_cmd *c)
{
	size_t inlen = c->in.declared_len;
	uint8_t *in = calloc(1, inlen + 16);

	memcpy(in, c->in.data, c->in.len);
	trace_caps_input(in, c->opcode, c->op_mod);
	if (c->opcode == PRM_CMD_OP_MANAGE_PAGES && c->op_mod == 1) {
		size_t n = PRM_GET(manage_pages_in, in, input_num_entries);
		struct shim_dma *m = &o->pages[o->npage_allocs++];

		cr_assert_leq(o->npage_allocs, 4);
		cr_assert_leq(PRM_SIZE(manage_pages_in) + n * 8, inlen);
		cr_assert_eq(shim_dma_alloc(o->r.dev, n * 4096, 4096, m), 0);
		for (size_t k = 0; k < n; k++)
			prm_bits_set64(in + PRM_OFF(manage_pages_in, pas) / 8, (unsigned)(k * 64), m->iova + k * 4096);
	} else if (c->opcode == PRM_CMD_OP_CREATE_EQ) {
		uint8_t *eqc = PRM_ADDR(create_eq_in, in, eq_context_entry);
		unsigned log = (unsigned)PRM_GET(eqc, eqc, log_eq_size);
		size_t bytes = (size_t)64 << log, pgsz = (size_t)4096 << PRM_GET(eqc, eqc, log_page_size);
		size_t npas = (bytes + pgsz - 1) / pgsz;
		uint32_t traced_uar = (uint32_t)PRM_GET(eqc, eqc, uar_page);
		struct shim_dma *m = &o->eqbuf[o->neq++];

		cr_assert_leq(o->neq, 32);
		cr_assert_leq(PRM_SIZE(create_eq_in) + npas * 8, inlen);
		cr_assert_eq(shim_dma_alloc(o->r.dev, npas * pgsz, pgsz, m), 0);
		for (size_t k = 0; k < ((size_t)1 << log); k++)
			PRM_SET(eqe, (uint8_t *)m->va + k * 64, owner, 1);
		for (size_t k = 0; k < npas; k++)
			prm_bits_set64(in + PRM_SIZE(create_eq_in), (unsigned)(k * 64), m->iova + k * pgsz);
		for (unsigned u = 0; u < o->nuar; u++)
			if (o->uar_real[u] == traced_uar)
				PRM_SET(eqc, eqc, uar_page, o->uar_ours[u]);
	}
	return in;
}

/* Post the command as mlx5_core did, ring, compare; returns the mismatches.  Output
 * blocks the trace does not show are counted in *unseen_boxes. */
static unsigned run_one(struct oracle *o, const struct fixture_trace_cmd *c, unsigned *unseen_boxes)
{
	struct er *r = &o->r;
	size_t inlen = c->in.declared_len, outlen = c->out.declared_len;
	uint8_t *in = input_bytes(o, c), *out = calloc(1, outlen + 16);
	uint8_t *e = er_entry(r), posted[ER_ENTRY_BYTES];
	struct er_chain ic, oc;
	unsigned bad;

	cr_assert_eq(PRM_GET(cmd_queue_entry, c->in.entry, input_length), inlen);
	cr_assert_eq(PRM_GET(cmd_queue_entry, c->in.entry, output_length), outlen);
	er_chain_alloc(r, &ic, c->in.needed_boxes, c->token);
	er_chain_alloc(r, &oc, c->out.needed_boxes, c->token);

	/* Input blocks: the control part as mlx5_core posted it where the trace shows the
	 * block, our next pointers, the (address-substituted) input as data. */
	for (size_t k = 0; k < ic.n && k < c->in.nboxes; k++) {
		uint8_t *box = er_box(&ic, k);

		memcpy(box, c->in.boxes + k * FIXTURE_TRACE_BOX_BYTES, FIXTURE_TRACE_BOX_BYTES);
		er_box_set_next(box, k + 1 < ic.n ? er_box_iova(&ic, k + 1) : 0);
	}
	memcpy(e, c->in.entry, ER_ENTRY_BYTES);
	cmdq_split(in, inlen, PRM_ADDR(cmd_queue_entry, e, command_input_inline_data), ic.n ? er_box(&ic, 0) : NULL,
		   ic.n, CMDQ_BOX_STRIDE);
	if (ic.n)
		er_entry_set_in(e, er_box_iova(&ic, 0));
	if (oc.n)
		er_entry_set_out(e, er_box_iova(&oc, 0));
	cr_assert_eq(PRM_GET(cmd_queue_entry, e, ownership), 1, "the trace's INPUT entry is hardware owned");
	memcpy(posted, e, sizeof(posted));
	er_ring(r);

	bad = compare_entry(c, e, posted);
	if (PRM_GET(cmd_queue_entry, e, status) == 0) {
		cmdq_join(out, outlen, PRM_ADDR(cmd_queue_entry, e, command_output_inline_data),
			  oc.n ? er_box(&oc, 0) : NULL, oc.n, CMDQ_BOX_STRIDE);
		for (size_t k = 0; k < oc.n && k < c->out.nboxes; k++)
			bad += compare_box(c, k, er_box(&oc, k), c->out.boxes + k * FIXTURE_TRACE_BOX_BYTES,
					   k + 1 < oc.n ? er_box_iova(&oc, k + 1) : ~0ull);
		if (oc.n > c->out.nboxes)
			*unseen_boxes += (unsigned)(oc.n - c->out.nboxes);
		if (c->out.len >= outlen)
			trace_caps_output(out, c->out.data, c->opcode, c->op_mod);
		bad += compare_output(c, out, outlen);
		if (c->opcode == PRM_CMD_OP_ALLOC_UAR && o->nuar < MAX_UARS) {
			o->uar_real[o->nuar] = (uint32_t)PRM_GET(alloc_uar_out, c->out.data, uar);
			o->uar_ours[o->nuar++] = (uint32_t)PRM_GET(alloc_uar_out, out, uar);
		}
	}
	er_chain_free(r, &ic);
	er_chain_free(r, &oc);
	free(in);
	free(out);
	return bad;
}

Test(emu_device_trace_oracle, every_answer_matches_the_real_connectx4_field_by_field, .timeout = 300)
{
	struct fixture_trace *tr;
	struct oracle o;
	char err[256];
	unsigned compared = 0, mismatches = 0, unseen_boxes = 0;

	cr_assert_eq(fixture_trace_load_default(&tr, err, sizeof(err)), 0, "%s", err);
	memset(&o, 0, sizeof(o));
	er_open(&o.r, "emu:");
	for (size_t i = 0; i < tr->ncmds; i++) {
		const struct fixture_trace_cmd *c = &tr->cmds[i];

		cr_assert(c->in.present && c->out.present, "command %zu has both dumps", i);
		mismatches += run_one(&o, c, &unseen_boxes);
		compared++;
	}

	for (size_t i = 0; i < NEXCUSED; i++)
		printf("device-side trace oracle: excused %s %s.%s, %s [%u of %u values differ]\n",
		       prm_opcode_name(excused[i].opcode), excused[i].layout, excused[i].field, excused[i].why,
		       excused[i].differed, excused[i].seen);
	printf("device-side trace oracle: %u output mailboxes absent from the trace (mlx5_core dumped none for "
	       "ACCESS_REG), their control fields not compared\n",
	       unseen_boxes);
	printf("device-side trace oracle: %u answers compared, %u mismatches, %zu fields excused\n", compared,
	       mismatches, NEXCUSED);
	fflush(stdout);

	cr_assert_geq(compared, 40);
	cr_assert_eq(mismatches, 0, "%u fields differ from the real firmware's answers (listed above)", mismatches);
	er_close(&o.r);
	fixture_trace_free(tr);
}
