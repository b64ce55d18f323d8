/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the emulated ConnectX's command processor (hw/emu/cmd.c and every
 * cmd_<area>.c handler).  Whatever one command carries, the emulator never crashes,
 * never trips ASan/UBSan and never leaks; it answers with a status.
 *
 * Set-up: an "emu:" device opened through the shim, its command queue programmed by the
 * real command engine (firmware-cmd/cmdq), and brought up as mlx5_core does (ENABLE_HCA,
 * SET_ISSI 1, boot and init pages, INIT_HCA), then a baseline of objects a command can
 * name: a UAR, a PD, an EQ, a CQ and an RC QP, and a pinned 64 KiB queue buffer.
 *
 * An input: byte 0 flags, byte 1 the output length (16 + 32 * byte), the rest the
 * command input as the driver would write it (header, opcode first), which the engine
 * sends inline and in mailboxes.  With F_PATCH_MEM the harness points the command's
 * doorbell record and page list (CQ, QP, SRQ, EQ, MTT MKey) at the queue buffer, so
 * creations are not all stopped by the IOMMU check; with F_PATCH_OBJ it names the
 * baseline objects (UAR, PD, EQ, CQ, QP) in the fields that take them.
 *
 * After each input the harness undoes what a successful command changed (destroys what
 * it created, resets the baseline QP); after what it cannot undo, or a delivery error,
 * the device is closed and brought up again, so every input meets the same device.
 *
 * With FUZZ_CMD_SEEDS=<dir> the program writes its seed corpus there and exits: every
 * command input of the ConnectX-4 bring-up trace (tests/common/fixture_trace.c), and a
 * valid input of each object command against the baseline.
 *
 * At exit it prints `fuzz_cmd: N commands, K completed with status 0 (D opcodes),
 * R rebuilds`, which run-fuzz-cmd.sh checks.  Built with clang
 * -fsanitize=fuzzer,address,undefined by run-fuzz-cmd.sh.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "firmware-cmd/cmdq.h"
#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "hw/emu/emu.h"
#include "hw/shim/mmio.h"
#include "hw/shim/shim.h"
#include "tests/common/fixture_trace.h"

#define F_PATCH_MEM 0x01
#define F_PATCH_OBJ 0x02
#define QBUF_BYTES (64u << 10)
#define QBUF_DBR (QBUF_BYTES - 64)   /* doorbell record: the last 64 bytes */
#define QBUF_PAGES 15u                /* pages before the doorbell record's */
#define MAX_IN (64u << 10)
#define OUT_BYTES(b) (16u + 32u * (b))

struct dev {
	struct shim_dev *sh;
	struct shim_bar bar;
	struct cmdq *q;
	struct emu_dev *emu;
	struct shim_dma pages, eqbuf, qbuf;
	uint32_t uar, pd, eqn, cqn, qpn;
	bool up;
};

static struct dev D;
static uint8_t out[OUT_BYTES(255) + 16];
static uint64_t ncmds, nok, nrebuild;
static uint8_t ok_ops[0x1000];

__attribute__((noreturn)) static void die(const char *what)
{
	fprintf(stderr, "fuzz_cmd: set-up failed: %s (%s)\n", what, D.q ? cmdq_error(D.q) : "");
	exit(2);
}

static int exec(const void *in, size_t inlen, size_t outlen)
{
	memset(out, 0, outlen);
	int rc = cmdq_exec(D.q, in, inlen, out, outlen);

	return rc == 0 ? 0 : cmdq_last_status(D.q) ? cmdq_last_status(D.q) : rc;
}

static void must(int st, const char *what)
{
	if (st != 0)
		die(what);
}

static int simple(uint16_t op, uint16_t op_mod, size_t inlen, size_t outlen)
{
	uint8_t in[64] = { 0 };

	PRM_SET(cmd_in, in, opcode, op);
	PRM_SET(cmd_in, in, op_mod, op_mod);
	return exec(in, inlen, outlen < 16 ? 16 : outlen);
}

static void wait_ready(void)
{
	uint8_t img[PRM_OFF(initial_seg, initializing) / 8 + 4];
	unsigned off = PRM_OFF(initial_seg, initializing) / 32 * 4;
	struct timespec ts = { 0, 100000 };

	for (int i = 0; i < 50000; i++) {
		prm_store_be32(img, off * 8, shim_mmio_read32(&D.bar, off));
		if (!PRM_GET(initial_seg, img, initializing))
			return;
		nanosleep(&ts, NULL);
	}
	die("device stayed initializing");
}

static void give_pages(uint16_t op_mod, size_t first, size_t n)
{
	size_t len = PRM_SIZE(manage_pages_in) + n * 8;
	uint8_t *in = calloc(1, len);

	PRM_SET(manage_pages_in, in, opcode, PRM_CMD_OP_MANAGE_PAGES);
	PRM_SET(manage_pages_in, in, op_mod, 1);
	PRM_SET(manage_pages_in, in, input_num_entries, n);
	for (size_t i = 0; i < n; i++)
		prm_bits_set64(in + PRM_SIZE(manage_pages_in), (unsigned)(i * 64), D.pages.iova + (first + i) * 4096);
	must(exec(in, len, PRM_SIZE(manage_pages_out)), op_mod == 1 ? "boot pages" : "init pages");
	free(in);
}

/* ---- valid object inputs (the baseline and the seeds) ---- */

static size_t eq_in(uint8_t *in)
{
	uint8_t *eqc = PRM_ADDR(create_eq_in, in, eq_context_entry);

	PRM_SET(create_eq_in, in, opcode, PRM_CMD_OP_CREATE_EQ);
	PRM_SET(eqc, eqc, log_eq_size, 6);
	PRM_SET(eqc, eqc, uar_page, D.uar);
	prm_bits_set64(PRM_ADDR(create_eq_in, in, pas), 0, D.eqbuf.iova);
	return PRM_SIZE(create_eq_in) + 8;
}

static void queue_pages(uint8_t *pas, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		prm_bits_set64(pas, i * 64, D.qbuf.iova + (uint64_t)i * 4096);
}

static size_t cq_in(uint8_t *in)
{
	uint8_t *cqc = PRM_ADDR(create_cq_in, in, cq_context);

	PRM_SET(create_cq_in, in, opcode, PRM_CMD_OP_CREATE_CQ);
	PRM_SET(cqc, cqc, log_cq_size, 6);
	PRM_SET(cqc, cqc, uar_page, D.uar);
	PRM_SET(cqc, cqc, c_eqn_or_apu_element, D.eqn);
	PRM_SET(cqc, cqc, dbr_addr, D.qbuf.iova + QBUF_DBR);
	queue_pages(PRM_ADDR(create_cq_in, in, pas), 1);
	return PRM_SIZE(create_cq_in) + 8;
}

static size_t qp_in(uint8_t *in, unsigned st)
{
	uint8_t *c = PRM_ADDR(create_qp_in, in, qpc);

	PRM_SET(create_qp_in, in, opcode, PRM_CMD_OP_CREATE_QP);
	PRM_SET(qpc, c, st, st);
	PRM_SET(qpc, c, pm_state, 3);
	PRM_SET(qpc, c, pd, D.pd);
	PRM_SET(qpc, c, uar_page, D.uar);
	PRM_SET(qpc, c, log_sq_size, 4);
	PRM_SET(qpc, c, log_rq_size, 4);
	PRM_SET(qpc, c, log_rq_stride, 2);
	PRM_SET(qpc, c, cqn_snd, D.cqn);
	PRM_SET(qpc, c, cqn_rcv, D.cqn);
	PRM_SET(qpc, c, dbr_addr, D.qbuf.iova + QBUF_DBR);
	queue_pages(PRM_ADDR(create_qp_in, in, pas), 1);
	return PRM_SIZE(create_qp_in) + 8;
}

static size_t srq_in(uint8_t *in)
{
	uint8_t *s = PRM_ADDR(create_srq_in, in, srq_context_entry);

	PRM_SET(create_srq_in, in, opcode, PRM_CMD_OP_CREATE_SRQ);
	PRM_SET(srqc, s, log_srq_size, 4);
	PRM_SET(srqc, s, log_rq_stride, 2);
	PRM_SET(srqc, s, pd, D.pd);
	PRM_SET(srqc, s, cqn, D.cqn);
	PRM_SET(srqc, s, dbr_addr, D.qbuf.iova + QBUF_DBR);
	queue_pages(PRM_ADDR(create_srq_in, in, pas), 1);
	return PRM_SIZE(create_srq_in) + 8;
}

static size_t mkey_in(uint8_t *in, bool mtt)
{
	uint8_t *mkc = PRM_ADDR(create_mkey_in, in, memory_key_mkey_entry);

	PRM_SET(create_mkey_in, in, opcode, PRM_CMD_OP_CREATE_MKEY);
	PRM_SET(mkc, mkc, lr, 1);
	PRM_SET(mkc, mkc, lw, 1);
	PRM_SET(mkc, mkc, rr, 1);
	PRM_SET(mkc, mkc, rw, 1);
	PRM_SET(mkc, mkc, qpn, 0xffffff);
	PRM_SET(mkc, mkc, pd, D.pd);
	if (!mtt) {
		PRM_SET(mkc, mkc, length64, 1);
		return PRM_SIZE(create_mkey_in);
	}
	PRM_SET(mkc, mkc, access_mode_1_0, 1);
	PRM_SET(mkc, mkc, start_addr, 0x10000);
	PRM_SET(mkc, mkc, len, 4u * 4096);
	PRM_SET(mkc, mkc, log_page_size, 12);
	PRM_SET(mkc, mkc, translations_octword_size, 2);
	PRM_SET(create_mkey_in, in, translations_octword_actual_size, 2);
	for (unsigned i = 0; i < 4; i++)
		prm_bits_set64(PRM_ADDR(create_mkey_in, in, klm_pas_mtt), i * 64, D.qbuf.iova + (uint64_t)i * 4096);
	return PRM_SIZE(create_mkey_in) + 32;
}

/* ---- the device ---- */

static void dev_up(void)
{
	char err[256];
	uint8_t in[4096];
	int32_t boot, init;

	memset(&D, 0, sizeof(D));
	if (shim_open("emu:init_ms=1", &D.sh, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_cmd: shim_open: %s\n", err);
		exit(2);
	}
	D.emu = emu_device_from_shim(D.sh);
	if (!D.emu || shim_bar(D.sh, 0, &D.bar) != 0)
		die("emulated device");
	wait_ready();
	struct cmdq_config cfg = { .timeout_ms = 500, .use_signatures = 1 };
	if (cmdq_create(D.sh, &D.bar, &cfg, &D.q) != 0)
		die("cmdq_create");
	wait_ready();
	must(simple(PRM_CMD_OP_ENABLE_HCA, 0, PRM_SIZE(enable_hca_in), PRM_SIZE(enable_hca_out)), "ENABLE_HCA");
	memset(in, 0, PRM_SIZE(set_issi_in));
	PRM_SET(set_issi_in, in, opcode, PRM_CMD_OP_SET_ISSI);
	PRM_SET(set_issi_in, in, current_issi, 1);
	must(exec(in, PRM_SIZE(set_issi_in), PRM_SIZE(set_issi_out)), "SET_ISSI");
	must(simple(PRM_CMD_OP_QUERY_PAGES, 1, PRM_SIZE(query_pages_in), PRM_SIZE(query_pages_out)), "QUERY_PAGES");
	boot = (int32_t)PRM_GET(query_pages_out, out, num_pages);
	must(simple(PRM_CMD_OP_QUERY_PAGES, 2, PRM_SIZE(query_pages_in), PRM_SIZE(query_pages_out)), "QUERY_PAGES");
	init = (int32_t)PRM_GET(query_pages_out, out, num_pages);
	if (boot < 0 || init < 0 || shim_dma_alloc(D.sh, ((size_t)boot + (size_t)init) * 4096, 4096, &D.pages))
		die("pages");
	give_pages(1, 0, (size_t)boot);
	give_pages(2, (size_t)boot, (size_t)init);
	must(simple(PRM_CMD_OP_INIT_HCA, 0, PRM_SIZE(init_hca_in), PRM_SIZE(init_hca_out)), "INIT_HCA");
	if (shim_dma_alloc(D.sh, 64u << 6, 4096, &D.eqbuf) || shim_dma_alloc(D.sh, QBUF_BYTES, 4096, &D.qbuf))
		die("queue memory");
	memset(D.qbuf.va, 0, QBUF_BYTES);
	for (unsigned i = 0; i < 64; i++)
		PRM_SET(eqe, (uint8_t *)D.eqbuf.va + i * 64, owner, 1);

	must(simple(PRM_CMD_OP_ALLOC_UAR, 0, PRM_SIZE(alloc_uar_in), PRM_SIZE(alloc_uar_out)), "ALLOC_UAR");
	D.uar = (uint32_t)PRM_GET(alloc_uar_out, out, uar);
	must(simple(PRM_CMD_OP_ALLOC_PD, 0, PRM_SIZE(alloc_pd_in), PRM_SIZE(alloc_pd_out)), "ALLOC_PD");
	D.pd = (uint32_t)PRM_GET(alloc_pd_out, out, pd);
	memset(in, 0, sizeof(in));
	must(exec(in, eq_in(in), PRM_SIZE(create_eq_out)), "CREATE_EQ");
	D.eqn = (uint32_t)PRM_GET(create_eq_out, out, eq_number);
	memset(in, 0, sizeof(in));
	must(exec(in, cq_in(in), PRM_SIZE(create_cq_out)), "CREATE_CQ");
	D.cqn = (uint32_t)PRM_GET(create_cq_out, out, cqn);
	memset(in, 0, sizeof(in));
	must(exec(in, qp_in(in, 0), PRM_SIZE(create_qp_out)), "CREATE_QP");
	D.qpn = (uint32_t)PRM_GET(create_qp_out, out, qpn);
	D.up = true;
}

static void dev_down(void)
{
	if (D.q)
		cmdq_destroy(D.q);
	if (D.pages.priv)
		shim_dma_free(D.sh, &D.pages);
	if (D.eqbuf.priv)
		shim_dma_free(D.sh, &D.eqbuf);
	if (D.qbuf.priv)
		shim_dma_free(D.sh, &D.qbuf);
	if (D.sh)
		shim_close(D.sh);
	memset(&D, 0, sizeof(D));
}

static void report(void)
{
	unsigned ops = 0;

	for (size_t i = 0; i < sizeof(ok_ops); i++)
		ops += ok_ops[i] != 0;
	fprintf(stderr, "fuzz_cmd: %llu commands, %llu completed with status 0 (%u opcodes), %llu rebuilds\n",
		(unsigned long long)ncmds, (unsigned long long)nok, ops, (unsigned long long)nrebuild);
	dev_down();
}

/* ---- patching ---- */

static void patch(uint8_t *in, size_t inlen, uint8_t flags)
{
	uint16_t op = (uint16_t)PRM_GET(cmd_in, in, opcode);
	bool mem = flags & F_PATCH_MEM, obj = flags & F_PATCH_OBJ;

#define HAS(type, field) (inlen >= PRM_OFF(type, field) / 8 + 8)
#define PAS(type, field)                                                                                  \
	do {                                                                                              \
		size_t o_ = PRM_OFF(type, field) / 8;                                                     \
		queue_pages(in + o_, inlen > o_ ? (unsigned)((inlen - o_) / 8 < QBUF_PAGES ? (inlen - o_) / 8 \
											  : QBUF_PAGES) \
						: 0);                                                     \
	} while (0)
	switch (op) {
	case PRM_CMD_OP_CREATE_CQ: {
		uint8_t *cqc = PRM_ADDR(create_cq_in, in, cq_context);

		if (mem) {
			PRM_SET(cqc, cqc, dbr_addr, D.qbuf.iova + QBUF_DBR);
			PAS(create_cq_in, pas);
		}
		if (obj) {
			PRM_SET(cqc, cqc, uar_page, D.uar);
			PRM_SET(cqc, cqc, c_eqn_or_apu_element, D.eqn);
		}
		break;
	}
	case PRM_CMD_OP_CREATE_QP: {
		uint8_t *c = PRM_ADDR(create_qp_in, in, qpc);

		if (mem) {
			PRM_SET(qpc, c, dbr_addr, D.qbuf.iova + QBUF_DBR);
			PAS(create_qp_in, pas);
		}
		if (obj) {
			PRM_SET(qpc, c, pd, D.pd);
			PRM_SET(qpc, c, uar_page, D.uar);
			PRM_SET(qpc, c, cqn_snd, D.cqn);
			PRM_SET(qpc, c, cqn_rcv, D.cqn);
		}
		break;
	}
	case PRM_CMD_OP_CREATE_SRQ: {
		uint8_t *s = PRM_ADDR(create_srq_in, in, srq_context_entry);

		if (mem) {
			PRM_SET(srqc, s, dbr_addr, D.qbuf.iova + QBUF_DBR);
			PAS(create_srq_in, pas);
		}
		if (obj)
			PRM_SET(srqc, s, pd, D.pd);
		break;
	}
	case PRM_CMD_OP_CREATE_EQ:
		if (mem)
			PAS(create_eq_in, pas);
		if (obj)
			PRM_SET(eqc, PRM_ADDR(create_eq_in, in, eq_context_entry), uar_page, D.uar);
		break;
	case PRM_CMD_OP_CREATE_MKEY:
		if (mem)
			PAS(create_mkey_in, klm_pas_mtt);
		if (obj)
			PRM_SET(mkc, PRM_ADDR(create_mkey_in, in, memory_key_mkey_entry), pd, D.pd);
		break;
	case PRM_CMD_OP_RST2INIT_QP:
	case PRM_CMD_OP_INIT2INIT_QP:
	case PRM_CMD_OP_INIT2RTR_QP:
	case PRM_CMD_OP_RTR2RTS_QP:
	case PRM_CMD_OP_RTS2RTS_QP:
	case PRM_CMD_OP_QUERY_QP:
	case PRM_CMD_OP_2ERR_QP:
	case PRM_CMD_OP_2RST_QP:
	case PRM_CMD_OP_DESTROY_QP:
		if (obj && HAS(qp_2rst_in, qpn))
			PRM_SET(qp_2rst_in, in, qpn, D.qpn);
		break;
	default:
		break;
	}
#undef HAS
#undef PAS
	(void)mem;
}

/* ---- seeds ---- */

static void seed(const char *dir, unsigned *n, uint8_t flags, uint8_t outb, const uint8_t *in, size_t inlen)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/seed-%03u", dir, (*n)++);
	f = fopen(path, "wb");
	if (!f) {
		perror(path);
		exit(2);
	}
	fputc(flags, f);
	fputc(outb, f);
	fwrite(in, 1, inlen, f);
	fclose(f);
}

static uint8_t outb_for(size_t outlen)
{
	size_t b = outlen <= 16 ? 0 : (outlen - 16 + 31) / 32;

	return (uint8_t)(b > 255 ? 255 : b);
}

static void write_seeds(const char *dir)
{
	struct fixture_trace *t;
	char err[256];
	uint8_t in[4096];
	unsigned n = 0;

	if (fixture_trace_load_default(&t, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_cmd: trace: %s\n", err);
		exit(2);
	}
	for (size_t i = 0; i < t->ncmds; i++) {
		const struct fixture_trace_cmd *c = &t->cmds[i];

		if (!c->in.present || c->in.len > MAX_IN || c->in.len < 8)
			continue;
		seed(dir, &n, F_PATCH_MEM | F_PATCH_OBJ, outb_for(c->out.declared_len), c->in.data, c->in.len);
	}
	fixture_trace_free(t);

	dev_up();
#define SEED(outtype, len)                                                               \
	seed(dir, &n, F_PATCH_MEM | F_PATCH_OBJ, outb_for(PRM_SIZE(outtype)), in, (len))
	memset(in, 0, sizeof(in));
	SEED(create_eq_out, eq_in(in));
	memset(in, 0, sizeof(in));
	SEED(create_cq_out, cq_in(in));
	memset(in, 0, sizeof(in));
	SEED(create_qp_out, qp_in(in, 0));
	memset(in, 0, sizeof(in));
	SEED(create_qp_out, qp_in(in, 2));
	memset(in, 0, sizeof(in));
	SEED(create_srq_out, srq_in(in));
	memset(in, 0, sizeof(in));
	SEED(create_mkey_out, mkey_in(in, false));
	memset(in, 0, sizeof(in));
	SEED(create_mkey_out, mkey_in(in, true));
	{
		static const struct {
			uint16_t op;
			size_t inlen, outlen;
		} simple_cmds[] = {
			{ PRM_CMD_OP_ALLOC_PD, PRM_SIZE(alloc_pd_in), PRM_SIZE(alloc_pd_out) },
			{ PRM_CMD_OP_ALLOC_TRANSPORT_DOMAIN, PRM_SIZE(alloc_transport_domain_in),
			  PRM_SIZE(alloc_transport_domain_out) },
			{ PRM_CMD_OP_QUERY_SPECIAL_CONTEXTS, PRM_SIZE(query_special_contexts_in),
			  PRM_SIZE(query_special_contexts_out) },
			{ PRM_CMD_OP_QUERY_VPORT_STATE, PRM_SIZE(query_vport_state_in), PRM_SIZE(query_vport_state_out) },
			{ PRM_CMD_OP_QUERY_NIC_VPORT_CONTEXT, PRM_SIZE(query_nic_vport_context_in),
			  PRM_SIZE(query_nic_vport_context_out) },
			{ PRM_CMD_OP_QUERY_HCA_VPORT_GID, PRM_SIZE(query_hca_vport_gid_in),
			  PRM_SIZE(query_hca_vport_gid_out) },
			{ PRM_CMD_OP_QUERY_ROCE_ADDRESS, PRM_SIZE(query_roce_address_in),
			  PRM_SIZE(query_roce_address_out) },
			{ PRM_CMD_OP_QUERY_ISSI, PRM_SIZE(query_issi_in), PRM_SIZE(query_issi_out) },
		};
		for (size_t i = 0; i < sizeof(simple_cmds) / sizeof(simple_cmds[0]); i++) {
			memset(in, 0, sizeof(in));
			PRM_SET(cmd_in, in, opcode, simple_cmds[i].op);
			seed(dir, &n, 0, outb_for(simple_cmds[i].outlen), in, simple_cmds[i].inlen);
		}
	}
	/* commands on the baseline objects */
	memset(in, 0, sizeof(in));
	PRM_SET(query_cq_in, in, opcode, PRM_CMD_OP_QUERY_CQ);
	PRM_SET(query_cq_in, in, cqn, D.cqn);
	SEED(query_cq_out, PRM_SIZE(query_cq_in));
	memset(in, 0, sizeof(in));
	PRM_SET(query_eq_in, in, opcode, PRM_CMD_OP_QUERY_EQ);
	PRM_SET(query_eq_in, in, eq_number, D.eqn);
	SEED(query_eq_out, PRM_SIZE(query_eq_in));
	memset(in, 0, sizeof(in));
	PRM_SET(query_qp_in, in, opcode, PRM_CMD_OP_QUERY_QP);
	PRM_SET(query_qp_in, in, qpn, D.qpn);
	SEED(query_qp_out, PRM_SIZE(query_qp_in));
	memset(in, 0, sizeof(in));
	PRM_SET(modify_cq_in, in, opcode, PRM_CMD_OP_MODIFY_CQ);
	PRM_SET(modify_cq_in, in, cqn, D.cqn);
	PRM_SET(modify_field_select, PRM_ADDR(modify_cq_in, in, modify_field_select_resize_field_select),
		modify_field_select, 3);
	SEED(modify_cq_out, PRM_SIZE(modify_cq_in));
	memset(in, 0, sizeof(in));
	{
		uint8_t *c = PRM_ADDR(rst2init_qp_in, in, qpc);
		uint8_t *ads = PRM_ADDR(qpc, c, primary_address_path);

		PRM_SET(rst2init_qp_in, in, opcode, PRM_CMD_OP_RST2INIT_QP);
		PRM_SET(rst2init_qp_in, in, qpn, D.qpn);
		PRM_SET(ads, ads, vhca_port_num, 1);
		PRM_SET(qpc, c, pm_state, 3);
		PRM_SET(qpc, c, rre, 1);
		PRM_SET(qpc, c, rwe, 1);
		SEED(rst2init_qp_out, PRM_SIZE(rst2init_qp_in));
		PRM_SET(rst2init_qp_in, in, opcode, PRM_CMD_OP_2ERR_QP);
		SEED(qp_2err_out, PRM_SIZE(qp_2err_in));
		PRM_SET(rst2init_qp_in, in, opcode, PRM_CMD_OP_DESTROY_QP);
		SEED(destroy_qp_out, PRM_SIZE(destroy_qp_in));
	}
	memset(in, 0, sizeof(in));
	PRM_SET(destroy_cq_in, in, opcode, PRM_CMD_OP_DESTROY_CQ);
	PRM_SET(destroy_cq_in, in, cqn, D.cqn);
	SEED(destroy_cq_out, PRM_SIZE(destroy_cq_in));
#undef SEED
	dev_down();
	fprintf(stderr, "fuzz_cmd: wrote %u seeds to %s\n", n, dir);
	exit(0);
}

/* ---- libFuzzer ---- */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("FUZZ_CMD_SEEDS");

	(void)argc;
	(void)argv;
	if (dir && *dir)
		write_seeds(dir);
	dev_up();
	atexit(report);
	return 0;
}

/* Undo what a successful command did to the device, so the next input meets the same
 * baseline: destroy what it created, reset the baseline QP it moved.  Returns false
 * when only a fresh bring-up restores the baseline (a baseline object destroyed, the HCA
 * life cycle moved, capabilities or ISSI changed, or the undo itself failed). */
static bool undo(uint16_t op)
{
	uint8_t in[64] = { 0 };
	uint16_t dop;
	uint32_t id;

	switch (op) {
#define UNDO(cop, outtype, field, dop_, intype, infield)                 	case PRM_CMD_OP_##cop:                                           		id = (uint32_t)PRM_GET(outtype, out, field);             		dop = PRM_CMD_OP_##dop_;                                 		PRM_SET(intype, in, opcode, dop);                        		PRM_SET(intype, in, infield, id);                        		return exec(in, PRM_SIZE(intype), 16) == 0;
	UNDO(CREATE_CQ, create_cq_out, cqn, DESTROY_CQ, destroy_cq_in, cqn)
	UNDO(CREATE_QP, create_qp_out, qpn, DESTROY_QP, destroy_qp_in, qpn)
	UNDO(CREATE_SRQ, create_srq_out, srqn, DESTROY_SRQ, destroy_srq_in, srqn)
	UNDO(CREATE_MKEY, create_mkey_out, mkey_index, DESTROY_MKEY, destroy_mkey_in, mkey_index)
	UNDO(CREATE_EQ, create_eq_out, eq_number, DESTROY_EQ, destroy_eq_in, eq_number)
	UNDO(ALLOC_PD, alloc_pd_out, pd, DEALLOC_PD, dealloc_pd_in, pd)
	UNDO(ALLOC_UAR, alloc_uar_out, uar, DEALLOC_UAR, dealloc_uar_in, uar)
	UNDO(ALLOC_TRANSPORT_DOMAIN, alloc_transport_domain_out, transport_domain, DEALLOC_TRANSPORT_DOMAIN,
	     dealloc_transport_domain_in, transport_domain)
#undef UNDO
	case PRM_CMD_OP_RST2INIT_QP:
	case PRM_CMD_OP_INIT2INIT_QP:
	case PRM_CMD_OP_INIT2RTR_QP:
	case PRM_CMD_OP_RTR2RTS_QP:
	case PRM_CMD_OP_RTS2RTS_QP:
	case PRM_CMD_OP_2ERR_QP:
	case PRM_CMD_OP_2RST_QP:
		PRM_SET(qp_2rst_in, in, opcode, PRM_CMD_OP_2RST_QP);
		PRM_SET(qp_2rst_in, in, qpn, D.qpn);
		return exec(in, PRM_SIZE(qp_2rst_in), 16) == 0;
	case PRM_CMD_OP_ENABLE_HCA:
	case PRM_CMD_OP_DISABLE_HCA:
	case PRM_CMD_OP_INIT_HCA:
	case PRM_CMD_OP_TEARDOWN_HCA:
	case PRM_CMD_OP_SET_HCA_CAP:
	case PRM_CMD_OP_DESTROY_QP: {
		/* the baseline QP is the only baseline object nothing else holds: make a new one */
		uint8_t qin[PRM_SIZE(create_qp_in) + 8] = { 0 };

		if (exec(qin, qp_in(qin, 0), PRM_SIZE(create_qp_out)) != 0)
			return false;
		D.qpn = (uint32_t)PRM_GET(create_qp_out, out, qpn);
		return true;
	}
	case PRM_CMD_OP_SET_ISSI:
	case PRM_CMD_OP_DESTROY_CQ:
	case PRM_CMD_OP_DESTROY_SRQ:
	case PRM_CMD_OP_DESTROY_MKEY:
	case PRM_CMD_OP_DESTROY_EQ:
	case PRM_CMD_OP_DEALLOC_PD:
	case PRM_CMD_OP_DEALLOC_UAR:
	case PRM_CMD_OP_DEALLOC_TRANSPORT_DOMAIN:
		return false;
	default:
		/* queries, MODIFY_CQ, registers, vport and RoCE address updates, pages given
		 * or taken beyond what INIT_HCA needs: the baseline is all still there */
		return true;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t in[MAX_IN];
	size_t inlen, outlen;
	uint16_t op;
	int st;

	if (size < 2 + 8 || size - 2 > MAX_IN)
		return -1;
	if (!D.up)
		dev_up();
	inlen = size - 2;
	memcpy(in, data + 2, inlen);
	outlen = OUT_BYTES(data[1]);
	patch(in, inlen, data[0]);
	op = (uint16_t)PRM_GET(cmd_in, in, opcode);
	st = exec(in, inlen, outlen);
	ncmds++;
	if (st == 0) {
		nok++;
		ok_ops[op % sizeof(ok_ops)] = 1;
	}
	/* A command the engine could not complete, or a change undo() cannot take back:
	 * start the next input from a fresh bring-up. */
	if (st == -ETIMEDOUT || st == -ENODEV || st == -EIO || (st == 0 && !undo(op))) {
		if (getenv("FUZZ_CMD_DEBUG"))
			fprintf(stderr, "fuzz_cmd: rebuild after 0x%x, %d\n", op, st);
		dev_down();
		dev_up();
		nrebuild++;
	}
	return 0;
}
