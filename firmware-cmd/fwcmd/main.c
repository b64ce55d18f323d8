/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* fwcmd: query and decode a ConnectX through its firmware command interface
 * (docs/tools.md, "fwcmd").  Runs on any shim URI; the device is brought up by the driver
 * (hw/mlx5) and every command goes through its command queue.
 *
 * Exit status (tools/common/cli.h): 0 success; 1 a runtime error: the device answered a
 * command with an error (status and syndrome printed by name, also for a bring-up
 * command), could not be reached or did not answer, or stdout could not be written;
 * 2 the arguments are wrong. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "firmware-cmd/fwcmd/out.h"
#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "hw/mlx5/mx5.h"
#include "tools/common/cli.h"
#include "tools/common/parse.h"

enum { EXIT_OK = UVT_EXIT_OK, EXIT_FAIL = UVT_EXIT_FAIL, EXIT_USAGE = UVT_EXIT_USAGE };

static const char usage[] =
"NAME\n"
"    fwcmd - query and decode a ConnectX device through its firmware commands\n"
"\n"
"SYNOPSIS\n"
"    fwcmd [--device URI] [--json] COMMAND [ARGS...]\n"
"    fwcmd --help | --version\n"
"\n"
"DESCRIPTION\n"
"    fwcmd opens the device named by URI with the uverbs driver (bring-up through the\n"
"    firmware command queue), runs one inspection command and prints the answer as a\n"
"    readable table, or as JSON with --json.  Structures are printed field by field\n"
"    with the PRM's field names, from the layout tables in firmware-cmd/layouts.\n"
"\n"
"OPTIONS\n"
"    --device URI, -d URI\n"
"        The device: emu:[opts] (emulated ConnectX), vfio:BDF, kext:N.  Default: the\n"
"        first entry of $UVERBS_DEVICES, else emu:.\n"
"    --json, -j\n"
"        Print JSON (one object) instead of a table.\n"
"    --outlen N\n"
"        raw only: bytes of output to ask for (default 4112).\n"
"    --help, -h\n"
"        This text.\n"
"    --version\n"
"        The version and the build (git describe, build type, compiler).\n"
"\n"
"COMMANDS\n"
"    adapter                    QUERY_ADAPTER, PCI ids, firmware revision\n"
"    caps [general|roce|atomic|odp]\n"
"                               QUERY_HCA_CAP: every field, maximum and current\n"
"    pages                      QUERY_PAGES (boot, init, regular) and pages held\n"
"    bringup                    what bring-up chose (log_max_qp, async EQ events,\n"
"                               driver version, ...) and the init pages it cost\n"
"    health                     health counter, syndrome and health buffer\n"
"    vport                      QUERY_VPORT_STATE and the NIC vport context\n"
"    gids                       the RoCE GID table (QUERY_ROCE_ADDRESS)\n"
"    reg paos|pmtu|ptys         ACCESS_REG read of a port register (port 1)\n"
"    raw OPCODE [HEX...]        run any command: OPCODE, then the input dwords that\n"
"                               follow the opcode dword (op_mod first), in hex\n"
"    wctest                     write-combining self-test (Linux wc.c's method): 255\n"
"                               NOPs through BlueFlame; result supported, not_supported\n"
"                               (set MLX5_SHUT_UP_BF=1) or no_blueflame\n"
"\n"
"EXIT STATUS\n"
"    0  success\n"
"    1  the device answered a command with an error (status and syndrome by name,\n"
"       also when that command was part of bring-up), or could not be reached or did\n"
"       not answer (no device, removed, in fatal error, timeout), or the output could\n"
"       not be written; one line on stderr says which\n"
"    2  the arguments are wrong (a line on stderr, see --help)\n"
"\n"
"EXAMPLES\n"
"    fwcmd caps general\n"
"    fwcmd --json --device emu:page=16k caps roce\n"
"    fwcmd raw 0x10a              (QUERY_ISSI)\n";

struct ctx {
	struct mx5_device *dev;
	struct fw_out out;
	const char *uri;
	size_t raw_outlen;
};

/* Something failed with message msg: when the firmware answered with status st, name
 * the status and syndrome and exit 1 ("the device said no"); otherwise the device was
 * not reached or did not answer, exit 2.  The same rule for bring-up and for the
 * inspection command itself. */
static int report_failure(const char *msg, int rc, uint8_t st, uint32_t synd)
{
	if (st) {
		const char *sname = prm_syndrome_name(synd);
		/* one line (tools/common/cli.h): the message, then status and syndrome by name */
		fprintf(stderr, "fwcmd: %s; status %s (0x%x), syndrome 0x%x%s%s%s\n", msg,
			prm_cmd_status_name(st), st, synd, sname ? " (" : "", sname ? sname : "",
			sname ? ")" : "");
		return EXIT_FAIL;
	}
	fprintf(stderr, "fwcmd: %s (%s)\n", msg, strerror(-rc));
	return EXIT_FAIL;
}

/* A command failed: say which and how, pick the exit status. */
static int cmd_error(struct ctx *c, int rc)
{
	return report_failure(mx5_device_error(c->dev), rc, mx5_cmd_status(c->dev),
			      mx5_cmd_syndrome(c->dev));
}

static int run_adapter(struct ctx *c)
{
	uint8_t in[PRM_SIZE(query_adapter_in)] = { 0 };
	uint8_t out[PRM_SIZE(query_adapter_out)];
	PRM_SET(query_adapter_in, in, opcode, PRM_CMD_OP_QUERY_ADAPTER);
	int rc = mx5_cmd(c->dev, in, sizeof(in), out, sizeof(out));
	if (rc)
		return cmd_error(c, rc);
	struct mx5_device_info info;
	mx5_device_query(c->dev, &info);
	struct shim_dev *s = mx5_device_shim(c->dev);
	char buf[64];
	out_begin(&c->out);
	out_str(&c->out, "device", c->uri);
	out_str(&c->out, "bdf", s->pci.bdf);
	snprintf(buf, sizeof(buf), "%04x:%04x", info.vendor_id, info.device_id);
	out_str(&c->out, "pci_id", buf);
	snprintf(buf, sizeof(buf), "%u.%u.%u", info.fw_major, info.fw_minor, info.fw_subminor);
	out_str(&c->out, "fw_version", buf);
	out_u64(&c->out, "cmd_interface_rev", info.cmdif_rev);
	out_u64(&c->out, "host_page_size", info.host_page_size);
	const uint8_t *blk = PRM_ADDR(query_adapter_out, out, query_adapter_struct);
	char psid[17];
	memcpy(psid, PRM_ADDR(query_adapter_param_block, blk, vsd_contd_psid), 16);
	psid[16] = '\0';
	for (int i = 0; i < 16; i++)
		if (psid[i] && (psid[i] < 0x20 || psid[i] > 0x7e))
			psid[i] = '.';
	out_str(&c->out, "psid", psid);
	out_obj_begin(&c->out, "query_adapter_param_block", "QUERY_ADAPTER");
	out_struct(&c->out, "query_adapter_param_block", blk);
	out_obj_end(&c->out);
	out_end(&c->out);
	return EXIT_OK;
}

static const struct { const char *name; unsigned type; const char *layout; } cap_kinds[] = {
	{ "general", MX5_CAP_GENERAL, "cmd_hca_cap" },
	{ "roce", MX5_CAP_ROCE, "roce_cap" },
	{ "atomic", MX5_CAP_ATOMIC, "atomic_caps" },
	{ "odp", MX5_CAP_ODP, "odp_cap" },
};

static int run_caps(struct ctx *c, const char *which)
{
	size_t k = 0;
	if (which) {
		for (k = 0; k < sizeof(cap_kinds) / sizeof(cap_kinds[0]); k++)
			if (!strcmp(cap_kinds[k].name, which))
				break;
		if (k == sizeof(cap_kinds) / sizeof(cap_kinds[0])) {
			return uvt_usage_error("fwcmd", "caps: unknown block '%s' (general, roce, atomic, odp)",
					       which);
		}
	}
	uint8_t *max = calloc(1, 0x1000), *cur = calloc(1, 0x1000);
	int ret = EXIT_OK;
	if (!max || !cur) {
		ret = EXIT_FAIL;
		goto done;
	}
	int rc = mx5_query_caps(c->dev, cap_kinds[k].type, 0, max, 0x1000);
	if (!rc)
		rc = mx5_query_caps(c->dev, cap_kinds[k].type, 1, cur, 0x1000);
	if (rc) {
		ret = cmd_error(c, rc);
		goto done;
	}
	out_begin(&c->out);
	out_str(&c->out, "device", c->uri);
	out_str(&c->out, "caps", cap_kinds[k].name);
	out_str(&c->out, "layout", cap_kinds[k].layout);
	out_obj_begin(&c->out, "fields", cap_kinds[k].layout);
	out_struct2(&c->out, cap_kinds[k].layout, max, cur);
	out_obj_end(&c->out);
	out_end(&c->out);
done:
	free(max);
	free(cur);
	return ret;
}

static int run_pages(struct ctx *c)
{
	static const char *names[] = { NULL, "boot", "init", "regular" };
	int32_t want[4] = { 0 };
	for (unsigned op = 1; op <= 3; op++) {
		uint8_t in[PRM_SIZE(query_pages_in)] = { 0 }, out[PRM_SIZE(query_pages_out)];
		PRM_SET(query_pages_in, in, opcode, PRM_CMD_OP_QUERY_PAGES);
		PRM_SET(query_pages_in, in, op_mod, op);
		int rc = mx5_cmd(c->dev, in, sizeof(in), out, sizeof(out));
		if (rc)
			return cmd_error(c, rc);
		want[op] = (int32_t)(uint32_t)PRM_GET(query_pages_out, out, num_pages);
	}
	struct mx5_page_stats st;
	mx5_device_page_stats(c->dev, &st);
	out_begin(&c->out);
	out_str(&c->out, "device", c->uri);
	out_obj_begin(&c->out, "query_pages", "QUERY_PAGES (pages the device still wants)");
	for (unsigned op = 1; op <= 3; op++) {
		if (c->out.json) {
			out_u64(&c->out, names[op], (uint64_t)(int64_t)want[op]);
		} else {
			char b[32];
			snprintf(b, sizeof(b), "%d", want[op]);
			out_str(&c->out, names[op], b);
		}
	}
	out_obj_end(&c->out);
	const struct fw_num held[] = {
		{ .key = "pages_held", .v = st.given },
		{ .key = "boot_pages", .v = st.boot },
		{ .key = "init_pages", .v = st.init },
		{ .key = "regular_pages", .v = st.regular },
		{ .key = "page_requests", .v = st.requests },
		{ .key = "pages_reclaimed", .v = st.reclaimed },
		{ .key = "host_bytes", .v = st.host_bytes },
	};
	out_nums(&c->out, "driver", "held by the device (given by this driver)", held, FW_NNUMS(held));
	out_end(&c->out);
	return EXIT_OK;
}

static int run_bringup(struct ctx *c)
{
	struct mx5_bringup_info bi;
	mx5_device_bringup_info(c->dev, &bi);
	char mask[80];
	snprintf(mask, sizeof(mask), "0x%016llx 0x%016llx 0x%016llx 0x%016llx",
		 (unsigned long long)bi.async_event_mask[0], (unsigned long long)bi.async_event_mask[1],
		 (unsigned long long)bi.async_event_mask[2], (unsigned long long)bi.async_event_mask[3]);
	out_begin(&c->out);
	out_str(&c->out, "device", c->uri);
	out_u64(&c->out, "log_max_qp", bi.log_max_qp);
	out_u64(&c->out, "log_max_qp_max", bi.log_max_qp_max);
	out_u64(&c->out, "log_max_qp_firmware_default", bi.log_max_qp_default);
	out_u64(&c->out, "init_pages", bi.init_pages);
	out_u64(&c->out, "init_bytes", bi.init_pages * 4096);
	out_u64(&c->out, "boot_pages", bi.boot_pages);
	out_u64(&c->out, "init_wait_ms", bi.init_wait_ms);
	out_str(&c->out, "async_event_mask", mask);
	out_u64(&c->out, "caps_requeried", bi.caps_requeried);
	out_u64(&c->out, "driver_version_set", (uint64_t)bi.driver_version_set);
	out_u64(&c->out, "roce_udp_sport", (uint64_t)bi.roce_udp_sport);
	out_u64(&c->out, "host_cache_line", bi.host_cache_line);
	out_u64(&c->out, "cache_line_128byte", (uint64_t)bi.cache_line_128byte);
	out_u64(&c->out, "qp_ts_format", bi.qp_ts_format);
	out_end(&c->out);
	return EXIT_OK;
}

static int run_health(struct ctx *c)
{
	struct mx5_health h;
	enum mx5_health_state s = mx5_device_check_health(c->dev, &h);
	static const char *names[] = { "ok", "fatal", "removed" };
	out_begin(&c->out);
	out_str(&c->out, "device", c->uri);
	out_str(&c->out, "state", names[s]);
	out_hex(&c->out, "fw_rev_dword", h.fw_rev);
	out_u64(&c->out, "health_counter", h.health_counter);
	out_hex(&c->out, "health_syndrome", h.health_syndrome);
	const struct fw_num buffer[] = {
		{ .key = "assert_existptr", .v = h.assert_existptr, .base = FW_HEX },
		{ .key = "assert_callra", .v = h.assert_callra, .base = FW_HEX },
		{ .key = "fw_version", .v = h.fw_version, .base = FW_HEX },
		{ .key = "hw_id", .v = h.hw_id, .base = FW_HEX },
		{ .key = "irisc_index", .v = h.irisc_index },
		{ .key = "severity", .v = h.severity },
		{ .key = "synd", .v = h.synd, .base = FW_HEX },
		{ .key = "ext_synd", .v = h.ext_synd, .base = FW_HEX },
	};
	out_nums(&c->out, "health_buffer", "health_buffer", buffer, FW_NNUMS(buffer));
	out_end(&c->out);
	if (s != MX5_HEALTH_OK)
		fprintf(stderr, "fwcmd: %s\n", mx5_device_error(c->dev));
	return s == MX5_HEALTH_OK ? EXIT_OK : EXIT_FAIL;
}

static int run_vport(struct ctx *c)
{
	uint8_t in[PRM_SIZE(query_vport_state_in)] = { 0 }, out[PRM_SIZE(query_vport_state_out)];
	PRM_SET(query_vport_state_in, in, opcode, PRM_CMD_OP_QUERY_VPORT_STATE);
	int rc = mx5_cmd(c->dev, in, sizeof(in), out, sizeof(out));
	if (rc)
		return cmd_error(c, rc);
	uint8_t qin[PRM_SIZE(query_nic_vport_context_in)] = { 0 };
	uint8_t *qout = calloc(1, PRM_SIZE(query_nic_vport_context_out));
	if (!qout)
		return EXIT_FAIL;
	PRM_SET(query_nic_vport_context_in, qin, opcode, PRM_CMD_OP_QUERY_NIC_VPORT_CONTEXT);
	rc = mx5_cmd(c->dev, qin, sizeof(qin), qout, PRM_SIZE(query_nic_vport_context_out));
	if (rc) {
		free(qout);
		return cmd_error(c, rc);
	}
	out_begin(&c->out);
	out_str(&c->out, "device", c->uri);
	out_u64(&c->out, "admin_state", PRM_GET(query_vport_state_out, out, admin_state));
	out_u64(&c->out, "state", PRM_GET(query_vport_state_out, out, state));
	out_obj_begin(&c->out, "nic_vport_context", "nic_vport_context");
	out_struct(&c->out, "nic_vport_context",
		   PRM_ADDR(query_nic_vport_context_out, qout, nic_vport_context));
	out_obj_end(&c->out);
	out_end(&c->out);
	free(qout);
	return EXIT_OK;
}

/* Write-combining self-test (hw/mlx5/wc.c).  Exit 0 whatever the verdict: the JSON's
 * "result" is the answer; 1/2 only when the test could not run. */
static int run_wctest(struct ctx *c)
{
	static const char *names[] = { "supported", "not_supported", "no_blueflame" };
	struct mx5_wc_result r;
	int rc = mx5_wc_test(c->dev, &r);
	if (rc)
		return cmd_error(c, rc);
	out_begin(&c->out);
	out_str(&c->out, "device", c->uri);
	out_str(&c->out, "result", names[r.state]);
	out_u64(&c->out, "nops", r.nops);
	out_u64(&c->out, "first_cqe_wqe_counter", r.first_wqe);
	out_u64(&c->out, "ms", r.ms);
	out_end(&c->out);
	return EXIT_OK;
}

static int run_gids(struct ctx *c)
{
	unsigned n = mx5_gid_table_len(c->dev);
	out_begin(&c->out);
	out_str(&c->out, "device", c->uri);
	out_u64(&c->out, "table_size", n);
	out_obj_begin(&c->out, "gids", "GID table (valid entries)");
	for (unsigned i = 0; i < n; i++) {
		uint8_t in[PRM_SIZE(query_roce_address_in)] = { 0 };
		uint8_t out[PRM_SIZE(query_roce_address_out)];
		PRM_SET(query_roce_address_in, in, opcode, PRM_CMD_OP_QUERY_ROCE_ADDRESS);
		PRM_SET(query_roce_address_in, in, roce_address_index, i);
		int rc = mx5_cmd(c->dev, in, sizeof(in), out, sizeof(out));
		if (rc) {
			out_obj_end(&c->out);
			out_end(&c->out);
			return cmd_error(c, rc);
		}
		const uint8_t *a = PRM_ADDR(query_roce_address_out, out, roce_address);
		const uint8_t *g = PRM_ADDR(roce_addr_layout, a, source_l3_address);
		static const uint8_t zero[16];
		if (!memcmp(g, zero, 16))
			continue;
		char key[16];
		snprintf(key, sizeof(key), "%u", i);
		out_obj_begin(&c->out, key, key);
		out_struct(&c->out, "roce_addr_layout", a);
		out_obj_end(&c->out);
	}
	out_obj_end(&c->out);
	out_end(&c->out);
	return EXIT_OK;
}

static int run_reg(struct ctx *c, const char *name)
{
	static const struct { const char *name; uint16_t id; const char *layout; size_t bytes; } regs[] = {
		{ "paos", 0x5006, "paos_reg", PRM_SIZE(paos_reg) },
		{ "pmtu", 0x5003, "pmtu_reg", PRM_SIZE(pmtu_reg) },
		{ "ptys", 0x5004, "ptys_reg", PRM_SIZE(ptys_reg) },
	};
	size_t k;
	for (k = 0; name && k < 3; k++)
		if (!strcmp(regs[k].name, name))
			break;
	if (!name || k == 3) {
		return uvt_usage_error("fwcmd", "reg: which register? paos, pmtu or ptys");
	}
	uint8_t reg[64] = { 0 };
	/* local_port 1, the port this function drives (PRM: local_port in each register) */
	if (k == 0)
		PRM_SET(paos_reg, reg, local_port, 1);
	else if (k == 1)
		PRM_SET(pmtu_reg, reg, local_port, 1);
	else {
		PRM_SET(ptys_reg, reg, local_port, 1);
		PRM_SET(ptys_reg, reg, proto_mask, 1u << 2);  /* Ethernet */
	}
	int rc = mx5_access_reg(c->dev, regs[k].id, 0, 0, reg, reg, regs[k].bytes);
	if (rc)
		return cmd_error(c, rc);
	out_begin(&c->out);
	out_str(&c->out, "device", c->uri);
	out_str(&c->out, "register", regs[k].layout);
	out_obj_begin(&c->out, "fields", regs[k].layout);
	out_struct(&c->out, regs[k].layout, reg);
	out_obj_end(&c->out);
	out_end(&c->out);
	return EXIT_OK;
}

/* A hex word, with or without 0x (tools/common/parse.h: no sign, no blanks). */
static int parse_u32(const char *s, uint32_t *v)
{
	uint64_t x;
	if (uvt_parse_u64_base(s, 16, 0xffffffffu, &x))
		return -1;
	*v = (uint32_t)x;
	return 0;
}

static int run_raw(struct ctx *c, int argc, char **argv)
{
	uint32_t op;
	if (argc < 1 || parse_u32(argv[0], &op) || op > 0xffff) {
		return uvt_usage_error("fwcmd", "raw: OPCODE (hex, 16 bits) expected");
	}
	size_t nwords = (size_t)argc;  /* opcode dword plus the given words */
	size_t inlen = nwords * 4 < 16 ? 16 : nwords * 4;
	uint8_t *in = calloc(1, inlen), *out = calloc(1, c->raw_outlen);
	if (!in || !out) {
		free(in);
		free(out);
		return EXIT_FAIL;
	}
	PRM_SET(cmd_in, in, opcode, op);
	for (int i = 1; i < argc; i++) {
		uint32_t w;
		if (parse_u32(argv[i], &w)) {
			free(in);
			free(out);
			return uvt_usage_error("fwcmd", "raw: '%s' is not a 32-bit hex word", argv[i]);
		}
		uint32_t be = htobe32(w);
		memcpy(in + (size_t)i * 4, &be, 4);
	}
	int rc = mx5_cmd(c->dev, in, inlen, out, c->raw_outlen);
	int ret = EXIT_OK;
	if (rc) {
		ret = cmd_error(c, rc);
	} else {
		char name[32];
		out_begin(&c->out);
		out_str(&c->out, "device", c->uri);
		out_str(&c->out, "command", prm_opcode_str((uint16_t)op, name, sizeof(name)));
		out_u64(&c->out, "status", PRM_GET(cmd_out, out, status));
		out_hex(&c->out, "syndrome", PRM_GET(cmd_out, out, syndrome));
		/* the output, trailing zeros trimmed, as big-endian dwords */
		size_t n = c->raw_outlen;
		while (n > 16 && !out[n - 1])
			n--;
		n = (n + 3) & ~(size_t)3;
		if (c->out.json) {
			out_bytes(&c->out, "output", out, n);
		} else {
			printf("  output:\n");
			for (size_t i = 0; i < n; i += 16) {
				printf("    %03zx:", i);
				for (size_t j = i; j < i + 16 && j < n; j += 4) {
					uint32_t be;
					memcpy(&be, out + j, 4);
					printf(" %08x", be32toh(be));
				}
				printf("\n");
			}
		}
		out_end(&c->out);
	}
	free(in);
	free(out);
	return ret;
}

static const char *default_device(char *buf, size_t len)
{
	const char *env = getenv("UVERBS_DEVICES");
	if (!env || !*env)
		return "emu:";
	snprintf(buf, len, "%s", env);
	char *comma = strchr(buf, ',');
	if (comma)
		*comma = '\0';
	return buf[0] ? buf : "emu:";
}

int main(int argc, char **argv)
{
	struct ctx c = { .raw_outlen = 0x1010 };
	char devbuf[256];
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			return uvt_help("fwcmd", usage);
		} else if (!strcmp(a, "--version")) {
			return uvt_version("fwcmd");
		} else if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (!strcmp(a, "--json") || !strcmp(a, "-j")) {
			c.out.json = 1;
		} else if (!strcmp(a, "--device") || !strcmp(a, "-d") || !strcmp(a, "--outlen")) {
			if (i + 1 >= argc)
				return uvt_usage_error("fwcmd", "option '%s' needs a value", a);
			const char *val = argv[++i];
			if (strcmp(a, "--outlen")) {
				c.uri = val;
				continue;
			}
			uint64_t v;
			if (uvt_parse_size(val, 1u << 20, &v) || v < 16)
				return uvt_usage_error("fwcmd", "--outlen: '%s' is not 16..1048576 bytes", val);
			c.raw_outlen = v;
		} else if (!strncmp(a, "--device=", 9)) {
			if (!a[9])
				return uvt_usage_error("fwcmd", "option '--device' needs a value");
			c.uri = a + 9;
		} else {
			return uvt_usage_error("fwcmd", "unknown option '%s'", a);
		}
	}
	if (i >= argc)
		return uvt_usage_error("fwcmd", "which command? adapter, caps, pages, bringup, health, vport, gids, reg or raw");
	const char *cmd = argv[i++];
	static const char *known[] = { "adapter", "caps", "pages", "health", "vport", "gids",
				       "reg", "raw", "bringup", "wctest" };
	size_t k;
	for (k = 0; k < sizeof(known) / sizeof(known[0]); k++)
		if (!strcmp(cmd, known[k]))
			break;
	if (k == sizeof(known) / sizeof(known[0]))
		return uvt_usage_error("fwcmd", "unknown command '%s'", cmd);
	/* Arguments a command does not take are refused, not ignored: caps and reg take
	 * one (the group or register), raw any number of words, the rest none. */
	int max_args = !strcmp(cmd, "raw") ? argc : !strcmp(cmd, "caps") || !strcmp(cmd, "reg") ? 1 : 0;
	if (argc - i > max_args)
		return uvt_usage_error("fwcmd", "%s: unexpected argument '%s'", cmd, argv[i + max_args]);
	if (!c.uri)
		c.uri = default_device(devbuf, sizeof(devbuf));

	/* Inspection needs the function initialised (INIT_HCA) but no EQ, UAR or vport
	 * change: the tool leaves the device as it found it. */
	struct mx5_open_attr oa = { .flags = MX5_OPEN_INSPECT };
	/* health reads registers only, so it reports a device that is dead */
	if (!strcmp(cmd, "health"))
		oa.flags = MX5_OPEN_REGISTERS_ONLY;
	/* bringup reports the whole bring-up, async EQ included; close undoes it */
	if (!strcmp(cmd, "bringup"))
		oa.flags = 0;
	/* wctest posts on a QP of its own: the whole bring-up (UAR, EQs) */
	if (!strcmp(cmd, "wctest"))
		oa.flags = 0;
	int rc = mx5_device_open_attr(c.uri, &oa, &c.dev);
	if (rc)
		return report_failure(mx5_open_error(), rc, mx5_open_status(), mx5_open_syndrome());
	int ret;
	if (!strcmp(cmd, "adapter"))
		ret = run_adapter(&c);
	else if (!strcmp(cmd, "caps"))
		ret = run_caps(&c, i < argc ? argv[i] : NULL);
	else if (!strcmp(cmd, "pages"))
		ret = run_pages(&c);
	else if (!strcmp(cmd, "bringup"))
		ret = run_bringup(&c);
	else if (!strcmp(cmd, "health"))
		ret = run_health(&c);
	else if (!strcmp(cmd, "vport"))
		ret = run_vport(&c);
	else if (!strcmp(cmd, "gids"))
		ret = run_gids(&c);
	else if (!strcmp(cmd, "reg"))
		ret = run_reg(&c, i < argc ? argv[i] : NULL);
	else if (!strcmp(cmd, "wctest"))
		ret = run_wctest(&c);
	else
		ret = run_raw(&c, argc - i, argv + i);
	mx5_device_close(c.dev);
	/* Output that did not reach stdout (a full disk, /dev/full) is a failure. */
	return uvt_flush_stdout("fwcmd", ret);
}
