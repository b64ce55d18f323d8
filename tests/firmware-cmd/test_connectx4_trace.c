/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Real firmware, decoded by our tables (../shared/fixtures/README.md): the Linux mlx5_core driver
 * bringing up a ConnectX-4 (firmware 14.12.1220), every command's entry and mailboxes
 * logged (../shared/fixtures/mlx5_core-connectx4-bringup-trace.txt.gz).  Each command
 * is rebuilt with the engine's cmdq_join (tests/common/fixture_trace.c) and decoded
 * with the firmware-cmd/prm.h getters only.
 *
 * The expected values were read off the hex dump by hand, or come from a second
 * source inside the trace: the driver's own log lines ("requested 6 boot pages",
 * "allocated uar index 0x10", "allocated completion EQN 19", "Current Pkey table size
 * 128"), or another command (MANAGE_PAGES gives what QUERY_PAGES asked; CREATE_EQ uses
 * the UAR ALLOC_UAR returned).  tests/oracle/run_connectx4_trace.sh checks every field
 * again against mlx5_ifc.h's DEVX_GET on the same bytes.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "firmware-cmd/cmdq.h"
#include "firmware-cmd/prm.h"
#include "tests/common/fixture_trace.h"

/* PRM opcodes seen in the trace */
enum {
	OP_QUERY_HCA_CAP = 0x100, OP_QUERY_ADAPTER = 0x101, OP_INIT_HCA = 0x102,
	OP_ENABLE_HCA = 0x104, OP_QUERY_PAGES = 0x107, OP_MANAGE_PAGES = 0x108,
	OP_SET_HCA_CAP = 0x109, OP_QUERY_ISSI = 0x10a, OP_SET_ISSI = 0x10b,
	OP_CREATE_EQ = 0x301, OP_ALLOC_UAR = 0x802, OP_ACCESS_REG = 0x805,
};

/* PRM QUERY_HCA_CAP op_mod: capability type << 1 | 1 for current values */
#define CAP_MAX(type) ((type) << 1)
#define CAP_CUR(type) ((type) << 1 | 1)
enum { CAP_GENERAL = 0x0, CAP_ETHERNET = 0x1, CAP_ATOMIC = 0x3, CAP_ROCE = 0x4, CAP_FLOW_TABLE = 0x7 };

#define NCMDS 42

static struct fixture_trace *trace;
static unsigned mismatches;

static void load(void)
{
	char err[512];
	int rc = fixture_trace_load_default(&trace, err, sizeof(err));

	cr_assert_eq(rc, 0, "cannot read the ConnectX-4 trace: %s", err);
	mismatches = 0;
}

static void unload(void)
{
	fixture_trace_free(trace);
	trace = NULL;
}

TestSuite(connectx4_trace, .init = load, .fini = unload);

static void expect(const char *what, uint64_t got, uint64_t want)
{
	if (got == want)
		return;
	mismatches++;
	cr_log_error("%s: decoded 0x%llx, expected 0x%llx", what, (unsigned long long)got,
		     (unsigned long long)want);
}

static const struct fixture_trace_cmd *cmd(uint16_t opcode, int op_mod, unsigned nth)
{
	const struct fixture_trace_cmd *c = fixture_trace_find(trace, opcode, op_mod, nth);

	cr_assert_not_null(c, "no command 0x%x op_mod %d #%u in the trace", opcode, op_mod, nth);
	cr_assert(c->in.present && c->out.present);
	return c;
}

static const uint8_t *cap_of(uint16_t op_mod, unsigned nth)
{
	return PRM_ADDR(query_hca_cap_out, cmd(OP_QUERY_HCA_CAP, op_mod, nth)->out.data, capability);
}

/* The number in a driver log line after `prefix`, from the first line holding it at
 * or after `from`. */
static unsigned long log_number(const char *prefix, unsigned nth)
{
	const struct fixture_trace_log *l = NULL;
	unsigned from = 0;

	for (unsigned i = 0; i <= nth; i++) {
		l = fixture_trace_log_find(trace, prefix, from);
		cr_assert_not_null(l, "no log line \"%s\" #%u", prefix, i);
		from = l->line + 1;
	}
	return strtoul(strstr(l->text, prefix) + strlen(prefix), NULL, 0);
}

/* ---- groups of checks: each adds to `mismatches` ---- */

/* The dumps that lack mailboxes: dump_command() printed none for the boot MANAGE_PAGES
 * input and for ACCESS_REG, and stopped after 179 of 202 for the init MANAGE_PAGES. */
static int expect_truncated(size_t index, int input)
{
	return (index == 4 && input) || (index == 5) || (index == 10 && input);
}

static void check_rebuild(void)
{
	expect("commands", trace->ncmds, NCMDS);
	for (size_t i = 0; i < trace->ncmds; i++) {
		const struct fixture_trace_cmd *c = &trace->cmds[i];
		char what[160];

		snprintf(what, sizeof(what), "#%zu %s: present", i, c->name);
		expect(what, c->in.present && c->out.present, 1);
		if (!c->in.present || !c->out.present)
			continue;
		snprintf(what, sizeof(what), "#%zu %s: delivery status", i, c->name);
		expect(what, c->delivery_status, 0);
		snprintf(what, sizeof(what), "#%zu %s: cmd_in.opcode", i, c->name);
		expect(what, PRM_GET(cmd_in, c->in.data, opcode), c->opcode);
		snprintf(what, sizeof(what), "#%zu %s: cmd_out.status", i, c->name);
		expect(what, PRM_GET(cmd_out, c->out.data, status), 0);
		snprintf(what, sizeof(what), "#%zu %s: cmd_out.syndrome", i, c->name);
		expect(what, PRM_GET(cmd_out, c->out.data, syndrome), 0);
		for (int input = 1; input >= 0; input--) {
			const struct fixture_trace_dump *d = input ? &c->in : &c->out;

			snprintf(what, sizeof(what), "#%zu %s %s: truncated", i, c->name,
				 input ? "input" : "output");
			expect(what, d->truncated, expect_truncated(i, input));
			snprintf(what, sizeof(what), "#%zu %s %s: rebuilt bytes", i, c->name,
				 input ? "input" : "output");
			expect(what, d->len,
			       d->truncated ? CMDQ_INLINE_BYTES + d->nboxes * CMDQ_BOX_DATA_BYTES
					    : d->declared_len);
		}
	}
}

static void check_order(void)
{
	static const uint16_t order[NCMDS] = {
		OP_ENABLE_HCA, OP_QUERY_ISSI, OP_SET_ISSI, OP_QUERY_PAGES, OP_MANAGE_PAGES,
		OP_ACCESS_REG, OP_QUERY_HCA_CAP, OP_QUERY_HCA_CAP, OP_SET_HCA_CAP, OP_QUERY_PAGES,
		OP_MANAGE_PAGES, OP_INIT_HCA,
		OP_QUERY_HCA_CAP, OP_QUERY_HCA_CAP, OP_QUERY_HCA_CAP, OP_QUERY_HCA_CAP,
		OP_QUERY_HCA_CAP, OP_QUERY_HCA_CAP, OP_QUERY_HCA_CAP, OP_QUERY_HCA_CAP,
		OP_QUERY_HCA_CAP, OP_QUERY_HCA_CAP, OP_QUERY_ADAPTER,
		OP_ALLOC_UAR, OP_ALLOC_UAR, OP_ALLOC_UAR, OP_ALLOC_UAR,
		OP_CREATE_EQ, OP_CREATE_EQ, OP_CREATE_EQ, OP_CREATE_EQ, OP_CREATE_EQ,
		OP_CREATE_EQ, OP_CREATE_EQ, OP_CREATE_EQ, OP_CREATE_EQ, OP_CREATE_EQ,
		OP_CREATE_EQ, OP_CREATE_EQ, OP_CREATE_EQ, OP_CREATE_EQ, OP_CREATE_EQ,
	};
	/* mlx5_core asks current before maximum, type by type */
	static const uint16_t cap_op_mods[] = {
		CAP_MAX(CAP_GENERAL), CAP_CUR(CAP_GENERAL), CAP_CUR(CAP_GENERAL), CAP_MAX(CAP_GENERAL),
		CAP_CUR(CAP_ETHERNET), CAP_MAX(CAP_ETHERNET), CAP_CUR(CAP_ATOMIC), CAP_MAX(CAP_ATOMIC),
		CAP_CUR(CAP_ROCE), CAP_MAX(CAP_ROCE), CAP_CUR(CAP_FLOW_TABLE), CAP_MAX(CAP_FLOW_TABLE),
	};
	size_t k = 0;

	for (size_t i = 0; i < NCMDS && i < trace->ncmds; i++) {
		char what[64];

		snprintf(what, sizeof(what), "#%zu opcode", i);
		expect(what, trace->cmds[i].opcode, order[i]);
		if (trace->cmds[i].opcode == OP_QUERY_HCA_CAP && k < sizeof(cap_op_mods) / 2) {
			snprintf(what, sizeof(what), "#%zu QUERY_HCA_CAP op_mod", i);
			expect(what, trace->cmds[i].op_mod, cap_op_mods[k++]);
		}
	}
	expect("QUERY_HCA_CAP count", k, sizeof(cap_op_mods) / 2);
}

static void check_issi(void)
{
	const uint8_t *q = cmd(OP_QUERY_ISSI, -1, 0)->out.data;

	/* a fresh function runs ISSI 0 and supports 0 and 1 (supported_issi_dw0 bit 1) */
	expect("QUERY_ISSI current_issi", PRM_GET(query_issi_out, q, current_issi), 0);
	expect("QUERY_ISSI supported_issi_dw0", PRM_GET(query_issi_out, q, supported_issi_dw0), 0x2);
	expect("SET_ISSI current_issi", PRM_GET(set_issi_in, cmd(OP_SET_ISSI, -1, 0)->in.data, current_issi), 1);
}

static void check_pages(void)
{
	const struct fixture_trace_cmd *boot = cmd(OP_QUERY_PAGES, 1, 0), *init = cmd(OP_QUERY_PAGES, 2, 0);
	const struct fixture_trace_cmd *give_boot = cmd(OP_MANAGE_PAGES, -1, 0);
	const struct fixture_trace_cmd *give_init = cmd(OP_MANAGE_PAGES, -1, 1);

	expect("QUERY_PAGES boot num_pages", PRM_GET(query_pages_out, boot->out.data, num_pages), 6);
	expect("QUERY_PAGES init num_pages", PRM_GET(query_pages_out, init->out.data, num_pages), 12868);
	expect("QUERY_PAGES boot function_id", PRM_GET(query_pages_out, boot->out.data, function_id), 0);
	expect("driver log boot pages", log_number("requested ", 0),
	       PRM_GET(query_pages_out, boot->out.data, num_pages));
	expect("driver log init pages", log_number("requested ", 1),
	       PRM_GET(query_pages_out, init->out.data, num_pages));
	/* MANAGE_PAGES op_mod 1 gives exactly what was asked, 8 bytes of pas per page */
	expect("MANAGE_PAGES boot op_mod", give_boot->op_mod, 1);
	expect("MANAGE_PAGES boot input_num_entries",
	       PRM_GET(manage_pages_in, give_boot->in.data, input_num_entries), 6);
	expect("MANAGE_PAGES init input_num_entries",
	       PRM_GET(manage_pages_in, give_init->in.data, input_num_entries), 12868);
	expect("MANAGE_PAGES init input length", give_init->in.declared_len,
	       PRM_SIZE(manage_pages_in) + 8 * 12868);
}

static void check_general_caps(void)
{
	const uint8_t *max = cap_of(CAP_MAX(CAP_GENERAL), 0), *cur = cap_of(CAP_CUR(CAP_GENERAL), 0);

	/* read off the first QUERY_HCA_CAP output (dump rows 050-0f0) by hand */
	expect("log_max_qp max", PRM_GET(cmd_hca_cap, max, log_max_qp), 0x17);
	expect("log_max_qp cur", PRM_GET(cmd_hca_cap, cur, log_max_qp), 0xe);
	expect("log_max_qp_sz", PRM_GET(cmd_hca_cap, max, log_max_qp_sz), 0xf);
	expect("log_max_cq", PRM_GET(cmd_hca_cap, max, log_max_cq), 0x18);
	expect("log_max_cq_sz", PRM_GET(cmd_hca_cap, max, log_max_cq_sz), 0x16);
	expect("log_max_eq", PRM_GET(cmd_hca_cap, max, log_max_eq), 0x8);
	expect("log_max_eq_sz", PRM_GET(cmd_hca_cap, max, log_max_eq_sz), 0x16);
	expect("log_max_srq", PRM_GET(cmd_hca_cap, max, log_max_srq), 0x17);
	expect("log_max_mkey", PRM_GET(cmd_hca_cap, max, log_max_mkey), 0x18);
	expect("log_max_pd", PRM_GET(cmd_hca_cap, max, log_max_pd), 0x18);
	expect("log_max_msg", PRM_GET(cmd_hca_cap, max, log_max_msg), 0x1e);
	expect("max_qp_mcg", PRM_GET(cmd_hca_cap, max, max_qp_mcg), 0x30);
	expect("num_ports", PRM_GET(cmd_hca_cap, max, num_ports), 1);
	expect("port_type (1: Ethernet)", PRM_GET(cmd_hca_cap, max, port_type), 1);
	expect("roce", PRM_GET(cmd_hca_cap, max, roce), 1);
	expect("atomic", PRM_GET(cmd_hca_cap, max, atomic), 1);
	expect("gid_table_size max", PRM_GET(cmd_hca_cap, max, gid_table_size), 4);
	expect("bf", PRM_GET(cmd_hca_cap, max, bf), 1);
	expect("log_bf_reg_size", PRM_GET(cmd_hca_cap, max, log_bf_reg_size), 9);
	expect("uar_4k (not on firmware 14.12)", PRM_GET(cmd_hca_cap, max, uar_4k), 0);
	expect("uar_sz", PRM_GET(cmd_hca_cap, max, uar_sz), 5);
	expect("log_pg_sz (4 KiB firmware pages)", PRM_GET(cmd_hca_cap, max, log_pg_sz), 12);
	expect("max_wqe_sz_sq", PRM_GET(cmd_hca_cap, max, max_wqe_sz_sq), 0x400);
	expect("log_max_ra_req_qp", PRM_GET(cmd_hca_cap, max, log_max_ra_req_qp), 4);
	expect("cmdif_checksum max", PRM_GET(cmd_hca_cap, max, cmdif_checksum), 3);
	expect("cmdif_checksum cur", PRM_GET(cmd_hca_cap, cur, cmdif_checksum), 0);
	expect("vport_group_manager", PRM_GET(cmd_hca_cap, max, vport_group_manager), 1);
	/* PRM pkey_table_size: 0 means 128 entries, which the driver logged */
	expect("pkey_table_size cur", PRM_GET(cmd_hca_cap, cur, pkey_table_size), 0);
	expect("driver log pkey table size", log_number("Current Pkey table size ", 0), 128);
	expect("pkey_table_size max (4096)", PRM_GET(cmd_hca_cap, max, pkey_table_size), 5);
}

static void check_set_hca_cap(void)
{
	const struct fixture_trace_cmd *set = cmd(OP_SET_HCA_CAP, -1, 0);
	const uint8_t *in = PRM_ADDR(set_hca_cap_in, set->in.data, capability);
	const uint8_t *cur_before = cap_of(CAP_CUR(CAP_GENERAL), 0);
	const uint8_t *cur_after = cap_of(CAP_CUR(CAP_GENERAL), 1);
	uint8_t want[0x1000];

	expect("SET_HCA_CAP op_mod (general)", set->op_mod, CAP_GENERAL << 1);
	/* mlx5_core's profile raises log_max_qp to 17 and changes nothing else */
	expect("SET_HCA_CAP log_max_qp", PRM_GET(cmd_hca_cap, in, log_max_qp), 17);
	memcpy(want, cur_before, sizeof(want));
	PRM_SET(cmd_hca_cap, want, log_max_qp, 17);
	expect("SET_HCA_CAP = current caps with log_max_qp 17", memcmp(want, in, sizeof(want)) == 0, 1);
	expect("current log_max_qp after SET_HCA_CAP", PRM_GET(cmd_hca_cap, cur_after, log_max_qp), 17);
}

static void check_roce_caps(void)
{
	for (int m = 0; m < 2; m++) {
		const uint8_t *r = cap_of(m ? CAP_CUR(CAP_ROCE) : CAP_MAX(CAP_ROCE), 0);

		expect("roce r_roce_dest_udp_port (4791)", PRM_GET(roce_cap, r, r_roce_dest_udp_port), 4791);
		expect("roce r_roce_min_src_udp_port", PRM_GET(roce_cap, r, r_roce_min_src_udp_port), 0xc000);
		expect("roce r_roce_max_src_udp_port", PRM_GET(roce_cap, r, r_roce_max_src_udp_port), 0xffff);
		expect("roce roce_version (v1, v1.5, v2)", PRM_GET(roce_cap, r, roce_version), 0x7);
		expect("roce l3_type (GRH, IPv4, IPv6)", PRM_GET(roce_cap, r, l3_type), 0x7);
		expect("roce roce_address_table_size", PRM_GET(roce_cap, r, roce_address_table_size), 256);
		expect("roce roce_apm", PRM_GET(roce_cap, r, roce_apm), 0);
	}
}

static void check_atomic_caps(void)
{
	for (int m = 0; m < 2; m++) {
		const uint8_t *a = cap_of(m ? CAP_CUR(CAP_ATOMIC) : CAP_MAX(CAP_ATOMIC), 0);

		/* compare-swap, fetch-add and their masked forms; 8 to 64 bytes */
		expect("atomic_operations", PRM_GET(atomic_caps, a, atomic_operations), 0xf);
		expect("atomic_size_qp", PRM_GET(atomic_caps, a, atomic_size_qp), 0x3c);
		expect("atomic_size_dc", PRM_GET(atomic_caps, a, atomic_size_dc), 0x3c);
		expect("atomic_req_8B_endianness_mode", PRM_GET(atomic_caps, a, atomic_req_8B_endianness_mode), 0);
	}
}

static void check_adapter(void)
{
	const uint8_t *p = PRM_ADDR(query_adapter_out, cmd(OP_QUERY_ADAPTER, -1, 0)->out.data,
				    query_adapter_struct);
	const uint8_t *psid = PRM_ADDR(query_adapter_param_block, p, vsd_contd_psid);

	expect("ieee_vendor_id (Mellanox OUI 00:02:c9)", PRM_GET(query_adapter_param_block, p, ieee_vendor_id), 0x2c9);
	expect("vsd_vendor_id (PCI 15b3)", PRM_GET(query_adapter_param_block, p, vsd_vendor_id), 0x15b3);
	expect("psid", strncmp((const char *)psid, "MT_2430110027", 16) == 0, 1);
}

static void check_access_reg_and_init(void)
{
	const struct fixture_trace_cmd *r = cmd(OP_ACCESS_REG, -1, 0);

	/* mlx5_core writes HOST_ENDIANNESS (register 0x7004, op_mod 0 = write) */
	expect("ACCESS_REG register_id", PRM_GET(access_register_in, r->in.data, register_id), 0x7004);
	expect("ACCESS_REG op_mod", PRM_GET(access_register_in, r->in.data, op_mod), 0);
	expect("ACCESS_REG argument", PRM_GET(access_register_in, r->in.data, argument), 0);
	expect("INIT_HCA op_mod", PRM_GET(init_hca_in, cmd(OP_INIT_HCA, -1, 0)->in.data, op_mod), 0);
	expect("ENABLE_HCA function_id", PRM_GET(enable_hca_in, cmd(OP_ENABLE_HCA, -1, 0)->in.data, function_id), 0);
}

static void check_uar(void)
{
	for (unsigned i = 0; i < 4; i++) {
		uint64_t uar = PRM_GET(alloc_uar_out, cmd(OP_ALLOC_UAR, -1, i)->out.data, uar);

		expect("ALLOC_UAR uar", uar, 0x10 + i);
		expect("driver log uar index", log_number("allocated uar index ", i), uar);
	}
}

static void check_eq(void)
{
	/* mlx5_core (4.x): command EQ on vector 1, async on 2, pages on 0, then one
	 * completion EQ per vector from 3; all on the first UAR it allocated */
	static const unsigned intr[3] = { 1, 2, 0 }, log_size[3] = { 8, 9, 8 };
	/* event_bitmask[0], big-endian: CMD is event 0x0a, PAGE_REQUEST 0x0b */
	static const uint8_t cmd_mask[8] = { 0, 0, 0, 0, 0, 0, 0x04, 0x00 };
	static const uint8_t page_mask[8] = { 0, 0, 0, 0, 0, 0, 0x08, 0x00 };
	uint64_t uar = PRM_GET(alloc_uar_out, cmd(OP_ALLOC_UAR, -1, 0)->out.data, uar);

	for (unsigned i = 0; i < 15; i++) {
		const struct fixture_trace_cmd *c = cmd(OP_CREATE_EQ, -1, i);
		const uint8_t *eqc = PRM_ADDR(create_eq_in, c->in.data, eq_context_entry);
		uint64_t eqn = PRM_GET(create_eq_out, c->out.data, eq_number);

		expect("CREATE_EQ eq_number", eqn, 16 + i);
		expect("eqc uar_page", PRM_GET(eqc, eqc, uar_page), uar);
		expect("eqc intr", PRM_GET(eqc, eqc, intr), i < 3 ? intr[i] : i);
		expect("eqc log_eq_size", PRM_GET(eqc, eqc, log_eq_size), i < 3 ? log_size[i] : 11);
		expect("eqc st", PRM_GET(eqc, eqc, st), 0);
		if (i >= 3)
			expect("driver log completion EQN", log_number("allocated completion EQN ", i - 3), eqn);
	}
	expect("command EQ event_bitmask",
	       memcmp(PRM_ADDR(create_eq_in, cmd(OP_CREATE_EQ, -1, 0)->in.data, event_bitmask), cmd_mask, 8) == 0, 1);
	expect("pages EQ event_bitmask",
	       memcmp(PRM_ADDR(create_eq_in, cmd(OP_CREATE_EQ, -1, 2)->in.data, event_bitmask), page_mask, 8) == 0, 1);
	expect("driver log command EQ", log_number("eqn ", 0),
	       PRM_GET(create_eq_out, cmd(OP_CREATE_EQ, -1, 0)->out.data, eq_number));
}

/* ---- one behaviour per test ---- */

Test(connectx4_trace, every_command_is_rebuilt_from_its_entry_and_mailboxes)
{
	check_rebuild();
	cr_assert_eq(mismatches, 0);
	cr_assert_str_eq(trace->fw_version, "14.12.1220");
}

Test(connectx4_trace, bring_up_order_is_mlx5_cores)
{
	check_order();
	cr_assert_eq(mismatches, 0);
}

Test(connectx4_trace, query_issi_offers_issi_1_and_set_issi_selects_it)
{
	check_issi();
	cr_assert_eq(mismatches, 0);
}

Test(connectx4_trace, page_counts_agree_with_the_driver_log_and_manage_pages)
{
	check_pages();
	cr_assert_eq(mismatches, 0);
}

Test(connectx4_trace, general_caps_decode_to_the_connectx4_values)
{
	check_general_caps();
	cr_assert_eq(mismatches, 0);
}

Test(connectx4_trace, set_hca_cap_changes_only_log_max_qp_and_reads_back)
{
	check_set_hca_cap();
	cr_assert_eq(mismatches, 0);
}

Test(connectx4_trace, roce_caps_give_the_rocev2_udp_port)
{
	check_roce_caps();
	cr_assert_eq(mismatches, 0);
}

Test(connectx4_trace, atomic_caps_decode)
{
	check_atomic_caps();
	cr_assert_eq(mismatches, 0);
}

Test(connectx4_trace, query_adapter_names_mellanox_and_the_psid)
{
	check_adapter();
	cr_assert_eq(mismatches, 0);
}

Test(connectx4_trace, access_reg_writes_host_endianness)
{
	check_access_reg_and_init();
	cr_assert_eq(mismatches, 0);
}

Test(connectx4_trace, alloc_uar_indexes_agree_with_the_driver_log)
{
	check_uar();
	cr_assert_eq(mismatches, 0);
}

Test(connectx4_trace, create_eq_contexts_agree_with_the_driver_log)
{
	check_eq();
	cr_assert_eq(mismatches, 0);
}

Test(connectx4_trace, decodes_every_command_without_mismatch)
{
	size_t decoded = 0;

	check_rebuild();
	check_order();
	check_issi();
	check_pages();
	check_general_caps();
	check_set_hca_cap();
	check_roce_caps();
	check_atomic_caps();
	check_adapter();
	check_access_reg_and_init();
	check_uar();
	check_eq();
	for (size_t i = 0; i < trace->ncmds; i++)
		decoded += trace->cmds[i].in.present && trace->cmds[i].out.present;
	printf("connectx4 trace: %zu commands decoded, %u mismatches\n", decoded, mismatches);
	fflush(stdout);
	cr_assert_eq(decoded, NCMDS);
	cr_assert_eq(mismatches, 0);
}
