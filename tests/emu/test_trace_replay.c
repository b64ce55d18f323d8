/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Replay of the real ConnectX-4 bring-up (../shared/fixtures/README.md): every command INPUT of
 * ../shared/fixtures/mlx5_core-connectx4-bringup-trace.txt.gz goes through the real
 * command engine (firmware-cmd/cmdq) to the emulated device, in mlx5_core's order.
 *
 * The inputs point at the traced host's memory.  Every address field is replaced by
 * memory of our own that the shim pinned, and object numbers the firmware handed out
 * are mapped to ours:
 *   MANAGE_PAGES (give)   pas[]            -> fresh 4 KiB pages from one dma_alloc
 *                                             (the trace's dump of the 12868-page list is
 *                                             cut short, so the list is rebuilt whole)
 *   CREATE_EQ             pas[]            -> a fresh EQ buffer (owner bits set)
 *                         eqc.uar_page     -> our ALLOC_UAR answer for the traced UAR
 * Every command must complete with status 0, and each output must decode (field by
 * field, with the layout descriptors) to what the real firmware answered, except the
 * fields this device deliberately reports differently as a ConnectX-5 Ex (caps.c) and
 * the object numbers it chose.  Prints `trace replay: N commands, M failures`.
 */
#include <stdio.h>

#include "tests/common/fixture_trace.h"
#include "tests/emu/emu_test.h"
#include "tests/emu/trace_caps.h"

/* Fields allowed to differ from the real ConnectX-4's answer, and why. */
static const struct {
	uint16_t opcode;
	const char *field;
} allowed_diffs[] = {
	{ PRM_CMD_OP_QUERY_HCA_CAP, "pg" },                   /* ConnectX-5: ODP (caps.c) */
	{ PRM_CMD_OP_QUERY_HCA_CAP, "uar_4k" },               /* ConnectX-5: 4 KiB UARs (caps.c) */
	{ PRM_CMD_OP_QUERY_HCA_CAP, "num_of_uars_per_page" }, /* follows uar_4k (caps.c) */
	/* ConnectX-5 Ex: host-order 8-byte atomics may be selected (caps.c) */
	{ PRM_CMD_OP_QUERY_HCA_CAP, "supported_atomic_req_8B_endianness_mode_1" },
	{ PRM_CMD_OP_QUERY_HCA_CAP, "atomic_req_8B_endianness_mode" },
	{ PRM_CMD_OP_QUERY_ISSI, "supported_issi_dw0" },      /* we support ISSI 0 and 1 */
	{ PRM_CMD_OP_CREATE_EQ, "eq_number" },                /* object numbers are ours */
	/* capabilities this device cannot back (caps.c, trace_caps.h) */
	{ PRM_CMD_OP_QUERY_HCA_CAP, "vport_group_manager" },
	{ PRM_CMD_OP_QUERY_HCA_CAP, "eswitch_manager" },
	{ PRM_CMD_OP_QUERY_HCA_CAP, "nic_flow_table" },
	{ PRM_CMD_OP_QUERY_HCA_CAP, "cc_query_allowed" },     /* no congestion control (caps.c) */
	{ PRM_CMD_OP_QUERY_HCA_CAP, "cc_modify_allowed" },
	{ PRM_CMD_OP_QUERY_HCA_CAP, "device_frequency_khz" }, /* ns timer (caps.c) */
};

static bool allowed(uint16_t op, const char *field)
{
	for (size_t i = 0; i < sizeof(allowed_diffs) / sizeof(allowed_diffs[0]); i++)
		if (allowed_diffs[i].opcode == op && !strcmp(allowed_diffs[i].field, field))
			return true;
	return false;
}

/* Compare two images of `layout` field by field; count unexplained differences. */
static unsigned diff_fields(const char *layout, const uint8_t *ours, const uint8_t *real, size_t len,
			    unsigned base_bit, uint16_t op, size_t index)
{
	const struct prm_struct_desc *s = prm_struct_find(layout);
	unsigned bad = 0;

	cr_assert_not_null(s, "layout %s", layout);
	for (size_t i = 0; i < s->nfields; i++) {
		const struct prm_field_desc *f = &s->fields[i];
		unsigned off = base_bit + f->bit_off;

		if (f->kind == PRM_KIND_SUB) {
			bad += diff_fields(f->subtype, ours, real, len, off, op, index);
			continue;
		}
		if (f->kind != PRM_KIND_FIELD || (off + f->width + 7) / 8 > len)
			continue;
		uint64_t a = prm_bits_get(ours, off, f->width), b = prm_bits_get(real, off, f->width);
		if (a == b || allowed(op, f->name))
			continue;
		printf("  command %zu %s: %s.%s = 0x%llx, real firmware 0x%llx\n", index, prm_opcode_name(op), layout,
		       f->name, (unsigned long long)a, (unsigned long long)b);
		bad++;
	}
	return bad;
}

/* Which layout decodes a command's output, and where (the capability block is decoded
 * with its own structure). */
static unsigned check_output(const struct fixture_trace_cmd *c, const uint8_t *ours, size_t len)
{
	const uint8_t *real = c->out.data;
	size_t n = len < c->out.len ? len : c->out.len;

	switch (c->opcode) {
	case PRM_CMD_OP_QUERY_HCA_CAP: {
		static const char *const cap_layout[] = { [0] = "cmd_hca_cap", [2] = "odp_cap", [3] = "atomic_caps",
							  [4] = "roce_cap" };
		unsigned type = c->op_mod >> 1, off = PRM_OFF(query_hca_cap_out, capability);
		unsigned bad = diff_fields("query_hca_cap_out", ours, real, n, 0, c->opcode, c->index);

		if (type < sizeof(cap_layout) / sizeof(cap_layout[0]) && cap_layout[type])
			return bad + diff_fields(cap_layout[type], ours + off / 8, real + off / 8, n - off / 8, 0,
						 c->opcode, c->index);
		/* Blocks without a layout (Ethernet offloads, flow table): byte for byte. */
		if (memcmp(ours + off / 8, real + off / 8, n - off / 8)) {
			printf("  command %zu QUERY_HCA_CAP type %u differs from the real firmware\n", c->index, type);
			bad++;
		}
		return bad;
	}
	case PRM_CMD_OP_QUERY_ISSI:
		return diff_fields("query_issi_out", ours, real, n, 0, c->opcode, c->index);
	case PRM_CMD_OP_QUERY_PAGES:
		return diff_fields("query_pages_out", ours, real, n, 0, c->opcode, c->index);
	case PRM_CMD_OP_QUERY_ADAPTER:
		return diff_fields("query_adapter_out", ours, real, n, 0, c->opcode, c->index) +
		       (memcmp(ours, real, n) ? 1 : 0);
	case PRM_CMD_OP_ALLOC_UAR:
		return diff_fields("alloc_uar_out", ours, real, n, 0, c->opcode, c->index);
	case PRM_CMD_OP_CREATE_EQ:
		return diff_fields("create_eq_out", ours, real, n, 0, c->opcode, c->index);
	default:
		return diff_fields("cmd_out", ours, real, n < 8 ? n : 8, 0, c->opcode, c->index);
	}
}

#define MAX_UARS 16

Test(emu_trace_replay, every_command_of_the_connectx4_trace_completes_with_the_seeded_answers,
     .timeout = 300)
{
	struct fixture_trace *tr;
	char err[256];
	struct et t;
	struct shim_dma pages[4], eqbuf[32];
	unsigned npage_allocs = 0, neq = 0, failures = 0, mismatches = 0;
	uint32_t uar_real[MAX_UARS], uar_ours[MAX_UARS];
	unsigned nuar = 0;
	size_t npages_sub = 0;

	cr_assert_eq(fixture_trace_load_default(&tr, err, sizeof(err)), 0, "%s", err);
	cr_assert_gt(tr->ncmds, 40);
	et_open(&t, "emu:");

	for (size_t i = 0; i < tr->ncmds; i++) {
		const struct fixture_trace_cmd *c = &tr->cmds[i];
		size_t inlen = c->in.declared_len, outlen = c->out.declared_len;
		uint8_t *in = calloc(1, inlen + 16);
		uint8_t *out = calloc(1, outlen + 16);
		int rc;

		memcpy(in, c->in.data, c->in.len);
		if (c->opcode == PRM_CMD_OP_MANAGE_PAGES && c->op_mod == 1) {
			size_t n = PRM_GET(manage_pages_in, in, input_num_entries);
			struct shim_dma *m = &pages[npage_allocs++];

			cr_assert_leq(npage_allocs, 4);
			npages_sub += n;
			cr_assert_eq(shim_dma_alloc(t.dev, n * 4096, 4096, m), 0);
			for (size_t k = 0; k < n; k++)
				prm_bits_set64(in + PRM_OFF(manage_pages_in, pas) / 8, (unsigned)(k * 64),
					       m->iova + k * 4096);
		} else if (c->opcode == PRM_CMD_OP_CREATE_EQ) {
			uint8_t *eqc = PRM_ADDR(create_eq_in, in, eq_context_entry);
			unsigned log = (unsigned)PRM_GET(eqc, eqc, log_eq_size);
			size_t bytes = (size_t)64 << log, pgsz = (size_t)4096 << PRM_GET(eqc, eqc, log_page_size);
			size_t npas = (bytes + pgsz - 1) / pgsz;
			uint32_t traced_uar = (uint32_t)PRM_GET(eqc, eqc, uar_page);
			struct shim_dma *m = &eqbuf[neq++];

			cr_assert_leq(neq, 32);
			cr_assert_leq(PRM_SIZE(create_eq_in) + npas * 8, inlen);
			cr_assert_eq(shim_dma_alloc(t.dev, npas * pgsz, pgsz, m), 0);
			for (size_t k = 0; k < ((size_t)1 << log); k++)
				PRM_SET(eqe, (uint8_t *)m->va + k * 64, owner, 1);
			for (size_t k = 0; k < npas; k++)
				prm_bits_set64(in + PRM_SIZE(create_eq_in), (unsigned)(k * 64), m->iova + k * pgsz);
			for (unsigned u = 0; u < nuar; u++)
				if (uar_real[u] == traced_uar)
					PRM_SET(eqc, eqc, uar_page, uar_ours[u]);
		}
		trace_caps_input(in, c->opcode, c->op_mod);
		rc = cmdq_exec(t.q, in, inlen, out, outlen);
		if (rc == 0 && c->out.len >= outlen)
			trace_caps_output(out, c->out.data, c->opcode, c->op_mod);
		if (rc != 0 || PRM_GET(cmd_out, out, status) != 0) {
			printf("  command %zu %s op_mod 0x%x: %s\n", c->index, prm_opcode_name(c->opcode), c->op_mod,
			       cmdq_error(t.q));
			failures++;
		} else {
			unsigned bad = check_output(c, out, outlen);

			mismatches += bad;
			if (bad)
				failures++;
			if (c->opcode == PRM_CMD_OP_ALLOC_UAR && nuar < MAX_UARS) {
				uar_real[nuar] = (uint32_t)PRM_GET(alloc_uar_out, c->out.data, uar);
				uar_ours[nuar++] = (uint32_t)PRM_GET(alloc_uar_out, out, uar);
			}
		}
		free(in);
		free(out);
	}
	printf("trace replay: substituted our own pinned memory for %zu page addresses (%u MANAGE_PAGES) "
	       "and %u EQ buffers, mapped %u UAR numbers\n",
	       npages_sub, npage_allocs, neq, nuar);
	printf("trace replay: %zu commands, %u failures\n", tr->ncmds, failures);
	fflush(stdout);

	struct emu_counters ctr;
	emu_counters(t.emu, &ctr);
	cr_assert_eq(failures, 0, "%u of %zu commands failed or answered unlike the real firmware (%u fields)",
		     failures, tr->ncmds, mismatches);
	cr_assert_eq(ctr.cmds, tr->ncmds);
	cr_assert_eq(ctr.cmds_failed, 0);
	cr_assert_eq(ctr.objects_live[EMU_OBJ_EQ], fixture_trace_count(tr, PRM_CMD_OP_CREATE_EQ, -1));
	cr_assert_eq(ctr.objects_live[EMU_OBJ_UAR], fixture_trace_count(tr, PRM_CMD_OP_ALLOC_UAR, -1));
	cr_assert_eq(ctr.pages_held, (uint64_t)EMU_CAPS_SEED_BOOT_PAGES + EMU_CAPS_SEED_INIT_PAGES);
	cr_assert_eq(ctr.dma_faults, 0);

	/* And the device still tears down cleanly after the real driver's bring-up. */
	et_teardown(&t);
	emu_counters(t.emu, &ctr);
	cr_assert_eq(ctr.pages_held, 0);
	for (int k = 0; k < EMU_OBJ_NTYPES; k++)
		cr_assert_eq(ctr.objects_live[k], 0);
	for (unsigned k = 0; k < npage_allocs; k++)
		shim_dma_free(t.dev, &pages[k]);
	for (unsigned k = 0; k < neq; k++)
		shim_dma_free(t.dev, &eqbuf[k]);
	et_close(&t);
	fixture_trace_free(tr);
}
