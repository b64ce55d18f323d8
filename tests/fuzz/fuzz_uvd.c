/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the device daemon's policy (tools/uvd/policy.c) between two
 * clients of one emulated ConnectX.  Invariant: no client affects another client's
 * objects.
 *
 * Set-up: an "emu:" device brought up through the command engine as mlx5_core does
 * (ENABLE_HCA, SET_ISSI, pages, INIT_HCA) and the daemon's completion EQ; then two
 * clients as uvd keeps them (struct uvd_client), each with its own 64 KiB of queue
 * memory and, created through the policy as a client's commands are, a UAR, a PD, a
 * CQ, an SRQ, an RC QP on that SRQ and an MTT MKey.  One is the victim, one the
 * attacker.
 *
 * An input is one command of the attacker: byte 0 flags, byte 1 the output length
 * (16 + 32 * byte), the rest the command input.  F_PATCH_MEM points its doorbell record
 * and page list at the attacker's memory, F_PATCH_OBJ names the attacker's objects in
 * the fields that take them, F_VICTIM_REF names the victim's objects in the fields that
 * refer to other objects (a QP's CQs and SRQ, a CQ's UAR, an SRQ's CQ, an MKey's PD),
 * F_VICTIM_OBJ names the victim's object as the one acted on (the number at 0x48: QP,
 * CQ, SRQ, MKey, PD).  The command goes through uvd_policy_check as the attacker's; if
 * let through, the device runs it and uvd_policy_done records it, as client.c does.
 *
 * After each input the invariant is checked against the device itself, not the
 * policy's tables: the victim's QP, CQ, SRQ and MKey answer their QUERY exactly as at
 * set-up, its PD and UAR still exist, and every QP, CQ, SRQ and MKey the attacker holds
 * names none of the victim's objects (QUERY_QP cqn_snd, cqn_rcv, srqn, pd; QUERY_CQ
 * uar_page; QUERY_RMP pd; QUERY_MKEY pd).  A violation aborts: a finding.  Then
 * what the attacker created is destroyed; when its own baseline went, the device is
 * brought up again, so every input meets the same two clients.
 *
 * With FUZZ_UVD_SEEDS=<dir> the program writes its seed corpus there and exits.  At
 * exit it prints `fuzz_uvd: N commands, P let through by the policy, K completed with
 * status 0, R rebuilds`, which run-fuzz-uvd.sh checks.
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
#include "hw/emu/emu_dev.h"
#include "hw/shim/mmio.h"
#include "hw/shim/shim.h"
#include "tools/uvd/uvd.h"

#define F_PATCH_MEM 0x01
#define F_PATCH_OBJ 0x02
#define F_VICTIM_REF 0x04
#define F_VICTIM_OBJ 0x08
#define F_UD 0x10                     /* a transition acts on the attacker's UD QP, in RTS */
#define BUF_BYTES (64u << 10)
#define BUF_DBR (BUF_BYTES - 64)
#define BUF_PAGES 15u
#define MAX_IN (16u << 10)
#define OUT_BYTES(b) (16u + 32u * (b))

struct side {
	struct uvd_client c;
	struct uvd_mem mem;
	struct shim_dma buf;
	uint32_t uar, pd, cq, srq, qp, mkey;
	uint32_t udqp;             /* the attacker's: a UD QP on its SRQ, in RTS (RTS2RTS takes CQN_RCV, SRQN) */
};

static struct {
	struct shim_dev *sh;
	struct shim_bar bar;
	struct cmdq *q;
	struct emu_dev *emu;
	struct shim_dma pages, eqbuf;
	uint32_t eqn;
	bool up;
} D;
static struct uvd_server SRV;
static struct side V, A;
static uint8_t out[OUT_BYTES(255) + 16];
static uint8_t snap[4][PRM_SIZE(query_mkey_out) + PRM_SIZE(query_qp_out)];
static uint64_t ncmds, npass, nok, nrebuild;

__attribute__((noreturn)) static void die(const char *what)
{
	fprintf(stderr, "fuzz_uvd: set-up failed: %s (%s)\n", what, D.q ? cmdq_error(D.q) : "");
	exit(2);
}

__attribute__((noreturn)) static void finding(const char *what, uint32_t a, uint32_t b)
{
	fprintf(stderr, "fuzz_uvd: INVARIANT BROKEN: %s (0x%x, 0x%x): one client affected another's objects\n",
		what, a, b);
	abort();
}

static int exec(const void *in, size_t inlen, size_t outlen)
{
	memset(out, 0, outlen);
	int rc = cmdq_exec(D.q, in, inlen, out, outlen);
	return rc == 0 ? 0 : cmdq_last_status(D.q) ? cmdq_last_status(D.q) : rc;
}

static int simple(uint16_t op, uint16_t op_mod, size_t inlen, size_t outlen)
{
	uint8_t in[64] = { 0 };
	PRM_SET(cmd_in, in, opcode, op);
	PRM_SET(cmd_in, in, op_mod, op_mod);
	return exec(in, inlen, outlen < 16 ? 16 : outlen);
}

static void must(int st, const char *what)
{
	if (st)
		die(what);
}

/* A client's command as client.c runs it: the policy, then the device, then the record. */
static int client_cmd(struct side *s, const uint8_t *in, size_t inlen, size_t outlen, bool *passed)
{
	char msg[UVD_MSG_LEN];
	bool gid = false;
	int rc = uvd_policy_check(&s->c, in, inlen, msg, sizeof(msg), &gid);
	if (passed)
		*passed = rc == 0;
	if (rc || gid)
		return rc ? rc : -EPERM;   /* SET_ROCE_ADDRESS: answered by the daemon, never sent */
	rc = exec(in, inlen, outlen);
	if (rc == 0)
		uvd_policy_done(&s->c, in, inlen, out, outlen);
	return rc;
}

/* ---- valid inputs of a client (the baselines and the seeds) ---- */

static void pages_of(const struct side *s, uint8_t *pas, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		prm_bits_set64(pas, i * 64, s->buf.iova + (uint64_t)i * 4096);
}

static size_t cq_in(const struct side *s, uint8_t *in)
{
	uint8_t *cqc = PRM_ADDR(create_cq_in, in, cq_context);
	PRM_SET(create_cq_in, in, opcode, PRM_CMD_OP_CREATE_CQ);
	PRM_SET(cqc, cqc, log_cq_size, 6);
	PRM_SET(cqc, cqc, uar_page, s->uar);
	PRM_SET(cqc, cqc, c_eqn_or_apu_element, D.eqn);
	PRM_SET(cqc, cqc, dbr_addr, s->buf.iova + BUF_DBR);
	pages_of(s, PRM_ADDR(create_cq_in, in, pas), 1);
	return PRM_SIZE(create_cq_in) + 8;
}

/* An SRQ is an RMP at ISSI 1, as the driver makes it (hw/mlx5/srq.c; Linux srq_cmd.c
 * create_srq_split): rmpc RDY, a linked-list wq of 16 WQEs of 64 bytes. */
static size_t srq_in(const struct side *s, uint8_t *in)
{
	uint8_t *c = PRM_ADDR(create_rmp_in, in, ctx);
	uint8_t *w = PRM_ADDR(rmpc, c, wq);
	PRM_SET(create_rmp_in, in, opcode, PRM_CMD_OP_CREATE_RMP);
	PRM_SET(rmpc, c, state, 1);   /* RDY */
	PRM_SET(wq, w, log_wq_stride, 6);
	PRM_SET(wq, w, log_wq_sz, 4);
	PRM_SET(wq, w, pd, s->pd);
	PRM_SET(wq, w, dbr_addr, s->buf.iova + BUF_DBR - 64);
	pages_of(s, PRM_ADDR(wq, w, pas), 1);
	return PRM_SIZE(create_rmp_in) + 8;
}

static size_t qp_in(const struct side *s, uint8_t *in, bool srq, unsigned st)
{
	uint8_t *c = PRM_ADDR(create_qp_in, in, qpc);
	PRM_SET(create_qp_in, in, opcode, PRM_CMD_OP_CREATE_QP);
	PRM_SET(qpc, c, st, st);
	PRM_SET(qpc, c, pm_state, 3);
	PRM_SET(qpc, c, pd, s->pd);
	PRM_SET(qpc, c, uar_page, s->uar);
	PRM_SET(qpc, c, log_sq_size, 4);
	PRM_SET(qpc, c, cqn_snd, s->cq);
	PRM_SET(qpc, c, cqn_rcv, s->cq);
	if (srq) {
		PRM_SET(qpc, c, rq_type, 1);
		PRM_SET(qpc, c, srqn_rmpn_xrqn, s->srq);
	} else {
		PRM_SET(qpc, c, log_rq_size, 4);
		PRM_SET(qpc, c, log_rq_stride, 2);
	}
	PRM_SET(qpc, c, dbr_addr, s->buf.iova + BUF_DBR - 128);
	pages_of(s, PRM_ADDR(create_qp_in, in, pas), 2);
	return PRM_SIZE(create_qp_in) + 16;
}

static size_t mkey_in(const struct side *s, uint8_t *in)
{
	uint8_t *mkc = PRM_ADDR(create_mkey_in, in, memory_key_mkey_entry);
	PRM_SET(create_mkey_in, in, opcode, PRM_CMD_OP_CREATE_MKEY);
	PRM_SET(mkc, mkc, lr, 1);
	PRM_SET(mkc, mkc, lw, 1);
	PRM_SET(mkc, mkc, rr, 1);
	PRM_SET(mkc, mkc, rw, 1);
	PRM_SET(mkc, mkc, qpn, 0xffffff);
	PRM_SET(mkc, mkc, pd, s->pd);
	PRM_SET(mkc, mkc, access_mode_1_0, 1);
	PRM_SET(mkc, mkc, start_addr, 0x10000);
	PRM_SET(mkc, mkc, len, 4u * 4096);
	PRM_SET(mkc, mkc, log_page_size, 12);
	PRM_SET(mkc, mkc, translations_octword_size, 2);
	PRM_SET(create_mkey_in, in, translations_octword_actual_size, 2);
	pages_of(s, PRM_ADDR(create_mkey_in, in, klm_pas_mtt), 4);
	return PRM_SIZE(create_mkey_in) + 32;
}

/* ---- the device and the two clients ---- */

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

static void give_pages(size_t first, size_t n)
{
	size_t len = PRM_SIZE(manage_pages_in) + n * 8;
	uint8_t *in = calloc(1, len);
	if (!in)
		die("memory");
	PRM_SET(manage_pages_in, in, opcode, PRM_CMD_OP_MANAGE_PAGES);
	PRM_SET(manage_pages_in, in, op_mod, 1);
	PRM_SET(manage_pages_in, in, input_num_entries, n);
	for (size_t i = 0; i < n; i++)
		prm_bits_set64(in + PRM_SIZE(manage_pages_in), (unsigned)(i * 64), D.pages.iova + (first + i) * 4096);
	must(exec(in, len, PRM_SIZE(manage_pages_out)), "MANAGE_PAGES");
	free(in);
}

static void side_up(struct side *s, unsigned id)
{
	uint8_t in[4096];
	memset(s, 0, sizeof(*s));
	s->c.srv = &SRV;
	s->c.id = id;
	s->c.evs = s->c.ctl = -1;
	if (shim_dma_alloc(D.sh, BUF_BYTES, 4096, &s->buf))
		die("client memory");
	memset(s->buf.va, 0, BUF_BYTES);
	s->mem = (struct uvd_mem){ .id = 1, .is_dma = true };
	s->mem.segs = calloc(1, sizeof(*s->mem.segs));
	if (!s->mem.segs)
		die("memory");
	s->mem.segs[0] = (struct shim_iova_seg){ s->buf.iova, BUF_BYTES };
	s->mem.nseg = 1;
	s->c.mem = &s->mem;
	s->c.nmem = s->c.capmem = 1;
#define MADE(what, out_t, field, dst) (dst = (uint32_t)PRM_GET(out_t, out, field))
	memset(in, 0, sizeof(in));
	PRM_SET(cmd_in, in, opcode, PRM_CMD_OP_ALLOC_UAR);
	must(client_cmd(s, in, PRM_SIZE(alloc_uar_in), PRM_SIZE(alloc_uar_out), NULL), "ALLOC_UAR");
	MADE(uar, alloc_uar_out, uar, s->uar);
	memset(in, 0, sizeof(in));
	PRM_SET(cmd_in, in, opcode, PRM_CMD_OP_ALLOC_PD);
	must(client_cmd(s, in, PRM_SIZE(alloc_pd_in), PRM_SIZE(alloc_pd_out), NULL), "ALLOC_PD");
	MADE(pd, alloc_pd_out, pd, s->pd);
	memset(in, 0, sizeof(in));
	must(client_cmd(s, in, cq_in(s, in), PRM_SIZE(create_cq_out), NULL), "CREATE_CQ");
	MADE(cq, create_cq_out, cqn, s->cq);
	memset(in, 0, sizeof(in));
	must(client_cmd(s, in, srq_in(s, in), PRM_SIZE(create_rmp_out), NULL), "CREATE_RMP");
	MADE(srq, create_rmp_out, rmpn, s->srq);
	memset(in, 0, sizeof(in));
	must(client_cmd(s, in, qp_in(s, in, true, 0), PRM_SIZE(create_qp_out), NULL), "CREATE_QP");
	MADE(qp, create_qp_out, qpn, s->qp);
	memset(in, 0, sizeof(in));
	must(client_cmd(s, in, mkey_in(s, in), PRM_SIZE(create_mkey_out), NULL), "CREATE_MKEY");
	MADE(mkey, create_mkey_out, mkey_index, s->mkey);
	if (id == 2) {
		/* PRM qpc.st 0x2: UD, taken to RTS, where RTS2RTS may change its receive CQ and
		 * SRQ (hw/emu/cmd_qp.c trans_tab) */
		memset(in, 0, sizeof(in));
		must(client_cmd(s, in, qp_in(s, in, true, 2), PRM_SIZE(create_qp_out), NULL), "CREATE_QP (UD)");
		MADE(udqp, create_qp_out, qpn, s->udqp);
		static const uint16_t steps[] = { PRM_CMD_OP_RST2INIT_QP, PRM_CMD_OP_INIT2RTR_QP, PRM_CMD_OP_RTR2RTS_QP };
		for (size_t i = 0; i < 3; i++) {
			memset(in, 0, sizeof(in));
			PRM_SET(rst2init_qp_in, in, opcode, steps[i]);
			PRM_SET(rst2init_qp_in, in, qpn, s->udqp);
			uint8_t *c = PRM_ADDR(rst2init_qp_in, in, qpc);
			if (i == 0) {
				PRM_SET(ads, PRM_ADDR(qpc, c, primary_address_path), vhca_port_num, 1);
				PRM_SET(qpc, c, pm_state, 3);
				PRM_SET(qpc, c, q_key, 0x11111111);
			}
			/* a UD QP's MTU and message limit in every transition, as the driver and
			 * Linux __mlx5_ib_modify_qp send them (the emulator refuses a UD QP
			 * without an MTU) */
			PRM_SET(qpc, c, st, 2);
			PRM_SET(qpc, c, mtu, 5);
			PRM_SET(qpc, c, log_msg_max, 12);
			must(client_cmd(s, in, PRM_SIZE(rst2init_qp_in), 16, NULL), "UD QP to RTS");
		}
	}
#undef MADE
}

/* QUERY of one object into out (0, or the status). */
static int query(uint16_t op, uint32_t num, size_t outlen)
{
	uint8_t in[PRM_SIZE(query_qp_in)] = { 0 };
	PRM_SET(query_qp_in, in, opcode, op);
	PRM_SET(query_qp_in, in, qpn, num);   /* qpn, cqn, rmpn, mkey_index: all at 0x48 */
	return exec(in, sizeof(in), outlen);
}

static const struct { uint16_t op; size_t outlen; } victim_q[4] = {
	{ PRM_CMD_OP_QUERY_QP, PRM_SIZE(query_qp_out) },
	{ PRM_CMD_OP_QUERY_CQ, PRM_SIZE(query_cq_out) },
	{ PRM_CMD_OP_QUERY_RMP, PRM_SIZE(query_rmp_out) },
	{ PRM_CMD_OP_QUERY_MKEY, PRM_SIZE(query_mkey_out) },
};

static uint32_t victim_num(int k)
{
	return k == 0 ? V.qp : k == 1 ? V.cq : k == 2 ? V.srq : V.mkey;
}

static void dev_up(void)
{
	char err[256];
	uint8_t in[4096];
	memset(&D, 0, sizeof(D));
	if (shim_open("emu:init_ms=1,ip=127.98.1.1", &D.sh, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_uvd: shim_open: %s\n", err);
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
	int32_t boot = (int32_t)PRM_GET(query_pages_out, out, num_pages);
	must(simple(PRM_CMD_OP_QUERY_PAGES, 2, PRM_SIZE(query_pages_in), PRM_SIZE(query_pages_out)), "QUERY_PAGES");
	int32_t init = (int32_t)PRM_GET(query_pages_out, out, num_pages);
	if (boot < 0 || init < 0 || shim_dma_alloc(D.sh, ((size_t)boot + (size_t)init) * 4096, 4096, &D.pages))
		die("pages");
	give_pages(0, (size_t)boot);
	give_pages((size_t)boot, (size_t)init);
	must(simple(PRM_CMD_OP_INIT_HCA, 0, PRM_SIZE(init_hca_in), PRM_SIZE(init_hca_out)), "INIT_HCA");
	/* the daemon's own UAR and completion EQ */
	must(simple(PRM_CMD_OP_ALLOC_UAR, 0, PRM_SIZE(alloc_uar_in), PRM_SIZE(alloc_uar_out)), "ALLOC_UAR");
	uint32_t uar = (uint32_t)PRM_GET(alloc_uar_out, out, uar);
	if (shim_dma_alloc(D.sh, 64u << 6, 4096, &D.eqbuf))
		die("EQ memory");
	for (unsigned i = 0; i < 64; i++)
		PRM_SET(eqe, (uint8_t *)D.eqbuf.va + i * 64, owner, 1);
	memset(in, 0, sizeof(in));
	uint8_t *eqc = PRM_ADDR(create_eq_in, in, eq_context_entry);
	PRM_SET(create_eq_in, in, opcode, PRM_CMD_OP_CREATE_EQ);
	PRM_SET(eqc, eqc, log_eq_size, 6);
	PRM_SET(eqc, eqc, uar_page, uar);
	prm_bits_set64(PRM_ADDR(create_eq_in, in, pas), 0, D.eqbuf.iova);
	must(exec(in, PRM_SIZE(create_eq_in) + 8, PRM_SIZE(create_eq_out)), "CREATE_EQ");
	D.eqn = (uint32_t)PRM_GET(create_eq_out, out, eq_number);
	SRV = (struct uvd_server){ .comp_eqn = D.eqn, .lim = { .objs = 64, .qcnt = 2, .mems = 16 } };
	side_up(&V, 1);
	side_up(&A, 2);
	for (int k = 0; k < 4; k++) {
		must(query(victim_q[k].op, victim_num(k), victim_q[k].outlen), "victim QUERY");
		memcpy(snap[k], out, victim_q[k].outlen);
	}
	D.up = true;
}

static void side_down(struct side *s)
{
	free(s->c.objs);
	free(s->mem.segs);
	if (s->buf.priv)
		shim_dma_free(D.sh, &s->buf);
	memset(s, 0, sizeof(*s));
}

static void dev_down(void)
{
	if (D.q)
		cmdq_destroy(D.q);
	side_down(&V);
	side_down(&A);
	if (D.pages.priv)
		shim_dma_free(D.sh, &D.pages);
	if (D.eqbuf.priv)
		shim_dma_free(D.sh, &D.eqbuf);
	if (D.sh)
		shim_close(D.sh);
	memset(&D, 0, sizeof(D));
}

/* ---- the invariant ---- */

static bool victim_has(enum uvd_obj_type t, uint32_t n)
{
	return uvd_owns(&V.c, t, n);
}

static void check_invariant(void)
{
	for (int k = 0; k < 4; k++) {
		int st = query(victim_q[k].op, victim_num(k), victim_q[k].outlen);
		if (st)
			finding("a victim object is gone", victim_q[k].op, victim_num(k));
		if (memcmp(snap[k], out, victim_q[k].outlen))
			finding("a victim object changed", victim_q[k].op, victim_num(k));
	}
	if (!emu_obj_get(D.emu, EMU_OBJ_PD, V.pd))
		finding("the victim's PD is gone", V.pd, 0);
	for (size_t i = 0; i < A.c.nobj; i++) {
		uint32_t n = A.c.objs[i].num;
		switch (A.c.objs[i].type) {
		case UVD_QP: {
			if (query(PRM_CMD_OP_QUERY_QP, n, PRM_SIZE(query_qp_out)))
				break;
			const uint8_t *c = PRM_ADDR(query_qp_out, out, qpc);
			if (victim_has(UVD_PD, (uint32_t)PRM_GET(qpc, c, pd)) ||
			    victim_has(UVD_CQ, (uint32_t)PRM_GET(qpc, c, cqn_snd)) ||
			    victim_has(UVD_CQ, (uint32_t)PRM_GET(qpc, c, cqn_rcv)) ||
			    (PRM_GET(qpc, c, rq_type) == 1 && victim_has(UVD_SRQ, (uint32_t)PRM_GET(qpc, c, srqn_rmpn_xrqn))))
				finding("an attacker's QP names a victim's object", n, (uint32_t)PRM_GET(qpc, c, cqn_rcv));
			break;
		}
		case UVD_CQ:
			if (query(PRM_CMD_OP_QUERY_CQ, n, PRM_SIZE(query_cq_out)) == 0 &&
			    victim_has(UVD_UAR, (uint32_t)PRM_GET(cqc, PRM_ADDR(query_cq_out, out, cq_context), uar_page)))
				finding("an attacker's CQ rings a victim's UAR", n, 0);
			break;
		case UVD_SRQ:
			if (query(PRM_CMD_OP_QUERY_RMP, n, PRM_SIZE(query_rmp_out)) == 0) {
				const uint8_t *c = PRM_ADDR(query_rmp_out, out, rmp_context);
				if (victim_has(UVD_PD, (uint32_t)PRM_GET(wq, PRM_ADDR(rmpc, c, wq), pd)))
					finding("an attacker's SRQ names a victim's object", n, 0);
			}
			break;
		case UVD_MKEY:
			if (query(PRM_CMD_OP_QUERY_MKEY, n, PRM_SIZE(query_mkey_out)) == 0 &&
			    victim_has(UVD_PD, (uint32_t)PRM_GET(mkc, PRM_ADDR(query_mkey_out, out, memory_key_mkey_entry), pd)))
				finding("an attacker's MKey is on a victim's PD", n, 0);
			break;
		default:
			break;
		}
	}
}

/* What the attacker made beyond its baseline goes; true when its baseline is intact. */
static bool attacker_reset(void)
{
	static const struct { uint8_t t; uint16_t op; } order[] = {
		{ UVD_QP, PRM_CMD_OP_DESTROY_QP }, { UVD_MKEY, PRM_CMD_OP_DESTROY_MKEY },
		{ UVD_SRQ, PRM_CMD_OP_DESTROY_SRQ }, { UVD_CQ, PRM_CMD_OP_DESTROY_CQ },
		{ UVD_PD, PRM_CMD_OP_DEALLOC_PD }, { UVD_QCNT, PRM_CMD_OP_DEALLOC_Q_COUNTER },
		{ UVD_UAR, PRM_CMD_OP_DEALLOC_UAR },
	};
	const uint32_t base[] = { [UVD_UAR] = A.uar, [UVD_PD] = A.pd, [UVD_MKEY] = A.mkey, [UVD_CQ] = A.cq,
				  [UVD_QP] = A.qp, [UVD_SRQ] = A.srq, [UVD_QCNT] = 0 };
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++)
		for (size_t i = 0; i < A.c.nobj;) {
			struct uvd_obj o = A.c.objs[i];
			if (o.type != order[k].t || o.num == base[o.type] || (o.type == UVD_QP && o.num == A.udqp)) {
				i++;
				continue;
			}
			uint8_t in[PRM_SIZE(destroy_qp_in)] = { 0 };
			PRM_SET(destroy_qp_in, in, opcode, order[k].op);
			PRM_SET(destroy_qp_in, in, qpn, o.num);   /* every destroy names it at 0x48 */
			exec(in, sizeof(in), 16);
			uvd_obj_del(&A.c, o.type, o.num);
		}
	for (int t = UVD_UAR; t <= UVD_SRQ; t++)
		if (!uvd_owns(&A.c, (enum uvd_obj_type)t, base[t]))
			return false;
	/* the UD QP must still be in RTS (PRM qpc.state 0x3) for the next input's RTS2RTS */
	return uvd_owns(&A.c, UVD_QP, A.udqp) && query(PRM_CMD_OP_QUERY_QP, A.udqp, PRM_SIZE(query_qp_out)) == 0 &&
	       PRM_GET(qpc, PRM_ADDR(query_qp_out, out, qpc), state) == 3;
}

/* ---- patching ---- */

static void set24(uint8_t *in, size_t inlen, unsigned bit, uint32_t v)
{
	if (inlen >= bit / 8 + 3)
		prm_bits_set(in, bit, 24, v);
}

static void patch(uint8_t *in, size_t inlen, uint8_t flags)
{
	uint16_t op = (uint16_t)PRM_GET(cmd_in, in, opcode);
	const struct side *ref = (flags & F_VICTIM_REF) ? &V : &A;
	const struct side *obj = (flags & F_VICTIM_OBJ) ? &V : &A;
	bool refs = flags & (F_PATCH_OBJ | F_VICTIM_REF), objs = flags & (F_PATCH_OBJ | F_VICTIM_OBJ);
	uint32_t primary = 0;
	switch (op) {
	case PRM_CMD_OP_CREATE_CQ:
		if (inlen < PRM_SIZE(create_cq_in))
			break;
		if (flags & F_PATCH_MEM) {
			PRM_SET(cqc, PRM_ADDR(create_cq_in, in, cq_context), dbr_addr, A.buf.iova + BUF_DBR);
			pages_of(&A, PRM_ADDR(create_cq_in, in, pas), (unsigned)((inlen - PRM_SIZE(create_cq_in)) / 8 < BUF_PAGES ?
						   (inlen - PRM_SIZE(create_cq_in)) / 8 : BUF_PAGES));
		}
		if (refs) {
			PRM_SET(cqc, PRM_ADDR(create_cq_in, in, cq_context), uar_page, ref->uar);
			PRM_SET(cqc, PRM_ADDR(create_cq_in, in, cq_context), c_eqn_or_apu_element, D.eqn);
		}
		return;
	case PRM_CMD_OP_CREATE_QP:
		if (inlen < PRM_SIZE(create_qp_in))
			break;
		if (flags & F_PATCH_MEM)
			PRM_SET(qpc, PRM_ADDR(create_qp_in, in, qpc), dbr_addr, A.buf.iova + BUF_DBR - 128);
		/* fall through: the qpc's references */
	case PRM_CMD_OP_RST2INIT_QP:
	case PRM_CMD_OP_INIT2INIT_QP:
	case PRM_CMD_OP_INIT2RTR_QP:
	case PRM_CMD_OP_RTR2RTS_QP:
	case PRM_CMD_OP_RTS2RTS_QP:
	case PRM_CMD_OP_SQD_RTS_QP:
		if (inlen < PRM_SIZE(rst2init_qp_in))
			break;
		if (refs) {
			uint8_t *c = PRM_ADDR(rst2init_qp_in, in, qpc);   /* at 0xc0 in create_qp_in too */
			if (op == PRM_CMD_OP_CREATE_QP) {
				PRM_SET(qpc, c, pd, ref->pd);
				PRM_SET(qpc, c, uar_page, ref->uar);
				PRM_SET(qpc, c, cqn_snd, ref->cq);
			}
			PRM_SET(qpc, c, cqn_rcv, ref->cq);
			if (PRM_GET(qpc, c, rq_type) == 1 || op != PRM_CMD_OP_CREATE_QP)
				PRM_SET(qpc, c, srqn_rmpn_xrqn, ref->srq);
		}
		primary = op == PRM_CMD_OP_CREATE_QP ? 0 : (flags & (F_UD | F_VICTIM_OBJ)) == F_UD ? A.udqp : obj->qp;
		break;
	case PRM_CMD_OP_CREATE_SRQ:
		if (inlen < PRM_SIZE(create_srq_in))
			break;
		if (flags & F_PATCH_MEM)
			PRM_SET(srqc, PRM_ADDR(create_srq_in, in, srq_context_entry), dbr_addr, A.buf.iova + BUF_DBR - 64);
		if (refs) {
			PRM_SET(srqc, PRM_ADDR(create_srq_in, in, srq_context_entry), pd, ref->pd);
			PRM_SET(srqc, PRM_ADDR(create_srq_in, in, srq_context_entry), cqn, ref->cq);
		}
		return;
	case PRM_CMD_OP_CREATE_RMP: {
		if (inlen < PRM_SIZE(create_rmp_in))
			break;
		uint8_t *w = PRM_ADDR(rmpc, PRM_ADDR(create_rmp_in, in, ctx), wq);
		if (flags & F_PATCH_MEM)
			PRM_SET(wq, w, dbr_addr, A.buf.iova + BUF_DBR - 64);
		if (refs)
			PRM_SET(wq, w, pd, ref->pd);
		return;
	}
	case PRM_CMD_OP_CREATE_MKEY:
		if (inlen >= PRM_SIZE(create_mkey_in) && refs)
			PRM_SET(mkc, PRM_ADDR(create_mkey_in, in, memory_key_mkey_entry), pd, ref->pd);
		return;
	case PRM_CMD_OP_DESTROY_QP: case PRM_CMD_OP_QUERY_QP: case PRM_CMD_OP_2ERR_QP: case PRM_CMD_OP_2RST_QP:
		primary = obj->qp;
		break;
	case PRM_CMD_OP_DESTROY_CQ: case PRM_CMD_OP_QUERY_CQ: case PRM_CMD_OP_MODIFY_CQ:
		primary = obj->cq;
		break;
	case PRM_CMD_OP_DESTROY_SRQ: case PRM_CMD_OP_QUERY_SRQ:
	case PRM_CMD_OP_DESTROY_RMP: case PRM_CMD_OP_QUERY_RMP: case PRM_CMD_OP_MODIFY_RMP:
		primary = obj->srq;
		break;
	case PRM_CMD_OP_DESTROY_MKEY: case PRM_CMD_OP_QUERY_MKEY:
		primary = obj->mkey;
		break;
	case PRM_CMD_OP_DEALLOC_PD:
		primary = obj->pd;
		break;
	case PRM_CMD_OP_DEALLOC_UAR:
		primary = obj->uar;
		break;
	default:
		return;
	}
	if (objs && primary)
		set24(in, inlen, 0x48, primary);
}

/* ---- seeds ---- */

static void seed(const char *dir, unsigned *n, uint8_t flags, size_t outlen, const uint8_t *in, size_t inlen)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/seed-%03u", dir, (*n)++);
	FILE *f = fopen(path, "wb");
	if (!f) {
		perror(path);
		exit(2);
	}
	size_t b = outlen <= 16 ? 0 : (outlen - 16 + 31) / 32;
	fputc(flags, f);
	fputc((int)(b > 255 ? 255 : b), f);
	fwrite(in, 1, inlen, f);
	fclose(f);
}

static void write_seeds(const char *dir)
{
	uint8_t in[4096];
	unsigned n = 0;
	static const uint8_t attacks[] = { F_PATCH_MEM | F_PATCH_OBJ, F_PATCH_MEM | F_VICTIM_REF,
					   F_PATCH_MEM | F_VICTIM_OBJ, F_PATCH_MEM | F_VICTIM_REF | F_VICTIM_OBJ };
	dev_up();
	for (size_t a = 0; a < sizeof(attacks); a++) {
		uint8_t f = attacks[a];
#define SEED(outtype, len) seed(dir, &n, f, PRM_SIZE(outtype), in, (len))
		memset(in, 0, sizeof(in));
		SEED(create_cq_out, cq_in(&A, in));
		memset(in, 0, sizeof(in));
		SEED(create_srq_out, srq_in(&A, in));
		memset(in, 0, sizeof(in));
		SEED(create_qp_out, qp_in(&A, in, true, 0));
		memset(in, 0, sizeof(in));
		SEED(create_qp_out, qp_in(&A, in, false, 0));
		memset(in, 0, sizeof(in));
		SEED(create_mkey_out, mkey_in(&A, in));
		/* every transition with a qpc, the receive CQ and SRQ in its mask */
		static const uint16_t tr[] = { PRM_CMD_OP_RST2INIT_QP, PRM_CMD_OP_INIT2INIT_QP, PRM_CMD_OP_INIT2RTR_QP,
					       PRM_CMD_OP_RTR2RTS_QP, PRM_CMD_OP_RTS2RTS_QP, PRM_CMD_OP_SQD_RTS_QP };
		for (size_t i = 0; i < sizeof(tr) / sizeof(tr[0]); i++) {
			memset(in, 0, sizeof(in));
			PRM_SET(rst2init_qp_in, in, opcode, tr[i]);
			PRM_SET(rst2init_qp_in, in, qpn, A.qp);
			PRM_SET(rst2init_qp_in, in, opt_param_mask, (1u << 18) | (1u << 19));
			uint8_t *c = PRM_ADDR(rst2init_qp_in, in, qpc);
			PRM_SET(ads, PRM_ADDR(qpc, c, primary_address_path), vhca_port_num, 1);
			PRM_SET(qpc, c, pm_state, 3);
			PRM_SET(qpc, c, cqn_rcv, A.cq);
			SEED(rst2init_qp_out, PRM_SIZE(rst2init_qp_in));
		}
		/* RTS2RTS of the attacker's UD QP, its receive CQ and SRQ in the mask */
		memset(in, 0, sizeof(in));
		PRM_SET(rst2init_qp_in, in, opcode, PRM_CMD_OP_RTS2RTS_QP);
		PRM_SET(rst2init_qp_in, in, qpn, A.udqp);
		PRM_SET(rst2init_qp_in, in, opt_param_mask, (1u << 18) | (1u << 19));
		seed(dir, &n, f | F_UD, 16, in, PRM_SIZE(rst2init_qp_in));
		PRM_SET(rst2init_qp_in, in, opt_param_mask, 1u << 19);
		seed(dir, &n, f | F_UD, 16, in, PRM_SIZE(rst2init_qp_in));
		PRM_SET(rst2init_qp_in, in, opt_param_mask, 1u << 18);
		seed(dir, &n, f | F_UD, 16, in, PRM_SIZE(rst2init_qp_in));
		static const struct { uint16_t op; size_t outlen; } one[] = {
			{ PRM_CMD_OP_QUERY_QP, PRM_SIZE(query_qp_out) }, { PRM_CMD_OP_2ERR_QP, 16 },
			{ PRM_CMD_OP_2RST_QP, 16 }, { PRM_CMD_OP_DESTROY_QP, 16 },
			{ PRM_CMD_OP_QUERY_CQ, PRM_SIZE(query_cq_out) }, { PRM_CMD_OP_MODIFY_CQ, 16 },
			{ PRM_CMD_OP_DESTROY_CQ, 16 }, { PRM_CMD_OP_QUERY_SRQ, PRM_SIZE(query_srq_out) },
			{ PRM_CMD_OP_DESTROY_SRQ, 16 }, { PRM_CMD_OP_QUERY_RMP, PRM_SIZE(query_rmp_out) },
			{ PRM_CMD_OP_DESTROY_RMP, 16 }, { PRM_CMD_OP_QUERY_MKEY, PRM_SIZE(query_mkey_out) },
			{ PRM_CMD_OP_DESTROY_MKEY, 16 }, { PRM_CMD_OP_DEALLOC_PD, 16 }, { PRM_CMD_OP_DEALLOC_UAR, 16 },
			{ PRM_CMD_OP_ALLOC_PD, PRM_SIZE(alloc_pd_out) }, { PRM_CMD_OP_ALLOC_Q_COUNTER, 16 },
		};
		for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
			memset(in, 0, sizeof(in));
			PRM_SET(cmd_in, in, opcode, one[i].op);
			seed(dir, &n, f, one[i].outlen, in, one[i].op == PRM_CMD_OP_MODIFY_CQ ? PRM_SIZE(modify_cq_in) : 16);
		}
#undef SEED
	}
	dev_down();
	fprintf(stderr, "fuzz_uvd: wrote %u seeds to %s\n", n, dir);
	exit(0);
}

/* ---- libFuzzer ---- */

static void report(void)
{
	fprintf(stderr, "fuzz_uvd: %llu commands, %llu let through by the policy, %llu completed with status 0, "
		"%llu rebuilds\n", (unsigned long long)ncmds, (unsigned long long)npass, (unsigned long long)nok,
		(unsigned long long)nrebuild);
	dev_down();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *dir = getenv("FUZZ_UVD_SEEDS");
	if (dir && *dir)
		write_seeds(dir);
	dev_up();
	atexit(report);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t in[MAX_IN];
	if (size < 2 + 8 || size - 2 > MAX_IN)
		return 0;
	if (!D.up) {
		dev_down();
		dev_up();
		nrebuild++;
	}
	uint8_t flags = data[0];
	size_t outlen = OUT_BYTES(data[1]), inlen = size - 2;
	memcpy(in, data + 2, inlen);
	patch(in, inlen, flags);
	ncmds++;
	bool passed = false;
	int rc = client_cmd(&A, in, inlen, outlen, &passed);
	npass += passed;
	nok += passed && rc == 0;
	check_invariant();
	if (!attacker_reset())
		D.up = false;   /* its own baseline went: the next input meets a fresh device */
	return 0;
}
