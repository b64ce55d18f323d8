/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Helpers for the emulator's tests (header only; tests/emu/test_*.c include it).
 * Each test opens an "emu:" device through the shim, programs the command queue with
 * the real engine (firmware-cmd/cmdq), and talks to the device as a driver would. */
#ifndef UVERBS_TESTS_EMU_EMU_TEST_H
#define UVERBS_TESTS_EMU_EMU_TEST_H

#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "firmware-cmd/cmdq.h"
#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "hw/emu/caps_seed.h"
#include "hw/emu/emu.h"
#include "hw/shim/mmio.h"
#include "hw/shim/shim.h"

struct et {
	struct shim_dev *dev;
	struct shim_bar bar;
	struct cmdq *q;
	struct emu_dev *emu;
	struct shim_dma pages;     /* firmware pages given at bring-up */
	size_t npages;
	uint8_t out[0x1100];       /* last output */
	uint32_t uar;
	size_t uar_page_size;      /* 4096 << log_uar_page_sz (cur caps); tests that change it set this */
};

static inline void et_wait_ready(struct et *t)
{
	struct timespec ts = { 0, 200000 };

	/* An image of the init segment up to the `initializing` dword. */
	uint8_t img[PRM_OFF(initial_seg, initializing) / 8 + 4];
	unsigned off = PRM_OFF(initial_seg, initializing) / 32 * 4;

	for (int i = 0; i < 20000; i++) {
		prm_store_be32(img, off * 8, shim_mmio_read32(&t->bar, off));
		if (!PRM_GET(initial_seg, img, initializing))
			return;
		nanosleep(&ts, NULL);
	}
	cr_assert_fail("device stayed initializing");
}

/* Open and program the command queue (no firmware command sent yet). */
static inline void et_open(struct et *t, const char *uri)
{
	char err[256];
	int rc;

	memset(t, 0, sizeof(*t));
	rc = shim_open(uri, &t->dev, err, sizeof(err));
	cr_assert_eq(rc, 0, "shim_open(%s): %d %s", uri, rc, err);
	t->emu = emu_device_from_shim(t->dev);
	cr_assert_not_null(t->emu);
	t->uar_page_size = 4096;
	cr_assert_eq(shim_bar(t->dev, 0, &t->bar), 0);
	et_wait_ready(t);
	struct cmdq_config cfg = { .timeout_ms = 2000, .use_signatures = 1 };
	rc = cmdq_create(t->dev, &t->bar, &cfg, &t->q);
	cr_assert_eq(rc, 0, "cmdq_create: %d %s", rc, t->dev->err);
	et_wait_ready(t);
}

static inline void et_close(struct et *t)
{
	if (t->q)
		cmdq_destroy(t->q);
	if (t->pages.priv)
		shim_dma_free(t->dev, &t->pages);
	shim_close(t->dev);
	memset(t, 0, sizeof(*t));
}

/* Execute; return the firmware status (0 ok), or -errno for a delivery/timeout error
 * that did not yield a firmware status. */
static inline int et_exec(struct et *t, const void *in, size_t inlen, size_t outlen)
{
	int rc;

	memset(t->out, 0, sizeof(t->out));
	cr_assert_leq(outlen, sizeof(t->out));
	rc = cmdq_exec(t->q, in, inlen, t->out, outlen);
	if (rc == 0)
		return 0;
	if (cmdq_last_status(t->q))
		return cmdq_last_status(t->q);
	return rc;
}

#define ET_IN(type) uint8_t in[PRM_SIZE(type)]; memset(in, 0, sizeof(in))

/* Command with only an opcode/op_mod. */
static inline int et_simple(struct et *t, uint16_t opcode, uint16_t op_mod, size_t inlen, size_t outlen)
{
	uint8_t in[64] = { 0 };

	PRM_SET(cmd_in, in, opcode, opcode);
	PRM_SET(cmd_in, in, op_mod, op_mod);
	/* The engine (and the PRM) always has a 16-byte output header in the entry. */
	return et_exec(t, in, inlen, outlen < CMDQ_INLINE_BYTES ? CMDQ_INLINE_BYTES : outlen);
}

static inline void et_expect(struct et *t, int st, uint8_t status, uint32_t synd)
{
	cr_assert_eq(st, status, "status 0x%x, expected 0x%x (%s)", st, status, cmdq_error(t->q));
	if (status)
		cr_assert_eq(cmdq_last_syndrome(t->q), synd, "syndrome 0x%x (%s), expected 0x%x (%s)",
			     cmdq_last_syndrome(t->q), prm_syndrome_name(cmdq_last_syndrome(t->q)), synd,
			     prm_syndrome_name(synd));
}

static inline int et_query_pages(struct et *t, uint16_t op_mod, int32_t *n)
{
	ET_IN(query_pages_in);
	PRM_SET(query_pages_in, in, opcode, PRM_CMD_OP_QUERY_PAGES);
	PRM_SET(query_pages_in, in, op_mod, op_mod);
	int st = et_exec(t, in, sizeof(in), PRM_SIZE(query_pages_out));
	*n = (int32_t)PRM_GET(query_pages_out, t->out, num_pages);
	return st;
}

/* MANAGE_PAGES give of n page IOVAs. */
static inline int et_give_pages(struct et *t, const uint64_t *pages, size_t n)
{
	size_t len = PRM_SIZE(manage_pages_in) + n * 8;
	uint8_t *in = calloc(1, len);

	PRM_SET(manage_pages_in, in, opcode, PRM_CMD_OP_MANAGE_PAGES);
	PRM_SET(manage_pages_in, in, op_mod, 1);
	PRM_SET(manage_pages_in, in, input_num_entries, n);
	for (size_t i = 0; i < n; i++)
		prm_bits_set64(in + PRM_SIZE(manage_pages_in), (unsigned)(i * 64), pages[i]);
	int st = et_exec(t, in, len, PRM_SIZE(manage_pages_out));
	free(in);
	return st;
}

/* Give n pages from one fresh DMA allocation (appended to t->pages bookkeeping only
 * for the first call). */
static inline int et_give_fresh(struct et *t, struct shim_dma *mem, size_t n)
{
	uint64_t *p = calloc(n ? n : 1, sizeof(*p));

	cr_assert_eq(shim_dma_alloc(t->dev, n * 4096, 4096, mem), 0);
	for (size_t i = 0; i < n; i++)
		p[i] = mem->iova + i * 4096;
	int st = et_give_pages(t, p, n);
	free(p);
	return st;
}

/* MANAGE_PAGES take: ask for n, returns how many came back (or -status). */
static inline int et_take_pages(struct et *t, size_t n)
{
	ET_IN(manage_pages_in);
	size_t outlen = PRM_SIZE(manage_pages_out) + n * 8;
	uint8_t *out = calloc(1, outlen);

	PRM_SET(manage_pages_in, in, opcode, PRM_CMD_OP_MANAGE_PAGES);
	PRM_SET(manage_pages_in, in, op_mod, 2);
	PRM_SET(manage_pages_in, in, input_num_entries, n);
	int rc = cmdq_exec(t->q, in, sizeof(in), out, outlen);
	int got = rc ? -(int)(cmdq_last_status(t->q) ? cmdq_last_status(t->q) : 1)
		     : (int)PRM_GET(manage_pages_out, out, output_num_entries);
	free(out);
	return got;
}

/* The ISSI et_bringup selects: 1, as mlx5_core does; a test of the ISSI 0 object
 * model (CREATE_SRQ, ARM_RQ) sets 0 before bringing the device up. */
static unsigned et_issi = 1;

/* ENABLE_HCA, SET_ISSI, boot and init pages, INIT_HCA: the mlx5_core order. */
static inline void et_bringup(struct et *t)
{
	int32_t boot = 0, init = 0;
	struct shim_dma boot_mem;

	et_expect(t, et_simple(t, PRM_CMD_OP_ENABLE_HCA, 0, PRM_SIZE(enable_hca_in), PRM_SIZE(enable_hca_out)), 0, 0);
	{
		ET_IN(set_issi_in);
		PRM_SET(set_issi_in, in, opcode, PRM_CMD_OP_SET_ISSI);
		PRM_SET(set_issi_in, in, current_issi, et_issi);
		et_expect(t, et_exec(t, in, sizeof(in), PRM_SIZE(set_issi_out)), 0, 0);
	}
	et_expect(t, et_query_pages(t, 1, &boot), 0, 0);
	et_expect(t, et_query_pages(t, 2, &init), 0, 0);
	cr_assert_gt(boot, 0);
	/* One allocation for boot + init pages, given in two commands as mlx5_core does. */
	t->npages = (size_t)boot + (size_t)init;
	cr_assert_eq(shim_dma_alloc(t->dev, t->npages * 4096, 4096, &t->pages), 0);
	{
		uint64_t *p = calloc(t->npages, sizeof(*p));

		for (size_t i = 0; i < t->npages; i++)
			p[i] = t->pages.iova + i * 4096;
		et_expect(t, et_give_pages(t, p, (size_t)boot), 0, 0);
		et_expect(t, et_give_pages(t, p + boot, (size_t)init), 0, 0);
		free(p);
	}
	(void)boot_mem;
	et_expect(t, et_simple(t, PRM_CMD_OP_INIT_HCA, 0, PRM_SIZE(init_hca_in), PRM_SIZE(init_hca_out)), 0, 0);
}

/* After ENABLE_HCA/SET_ISSI and whatever SET_HCA_CAP a test wants: boot and init pages
 * in one MANAGE_PAGES, then INIT_HCA. */
static inline void et_pages_and_init_hca(struct et *t)
{
	int32_t boot = 0, init = 0;

	et_query_pages(t, 1, &boot);
	et_query_pages(t, 2, &init);
	t->npages = (size_t)boot + (size_t)init;
	cr_assert_eq(shim_dma_alloc(t->dev, t->npages * 4096, 4096, &t->pages), 0);
	uint64_t *p = calloc(t->npages, sizeof(*p));
	for (size_t i = 0; i < t->npages; i++)
		p[i] = t->pages.iova + i * 4096;
	et_expect(t, et_give_pages(t, p, t->npages), 0, 0);
	free(p);
	et_expect(t, et_simple(t, PRM_CMD_OP_INIT_HCA, 0, PRM_SIZE(init_hca_in), 16), 0, 0);
}

/* TEARDOWN_HCA, reclaim every page, DISABLE_HCA. */
static inline void et_teardown(struct et *t)
{
	int got;

	et_expect(t, et_simple(t, PRM_CMD_OP_TEARDOWN_HCA, 0, PRM_SIZE(teardown_hca_in), PRM_SIZE(teardown_hca_out)),
		  0, 0);
	do {
		got = et_take_pages(t, 512);
		cr_assert_geq(got, 0, "MANAGE_PAGES take failed: %s", cmdq_error(t->q));
	} while (got > 0);
	et_expect(t, et_simple(t, PRM_CMD_OP_DISABLE_HCA, 0, PRM_SIZE(disable_hca_in), PRM_SIZE(disable_hca_out)),
		  0, 0);
}

/* ---- UARs and EQs ---- */

static inline uint32_t et_alloc_uar(struct et *t)
{
	et_expect(t, et_simple(t, PRM_CMD_OP_ALLOC_UAR, 0, PRM_SIZE(alloc_uar_in), PRM_SIZE(alloc_uar_out)), 0, 0);
	return (uint32_t)PRM_GET(alloc_uar_out, t->out, uar);
}

struct et_eq {
	struct shim_dma buf;
	uint32_t eqn, log_size, cc, uar;
};

/* event mask word 0 (types 0..63); buffer initialised with owner = 1 (PRM). */
static inline int et_create_eq_at(struct et *t, struct et_eq *eq, uint32_t uar, unsigned log_size, unsigned intr,
				  uint64_t mask0, const uint64_t *pas_override)
{
	/* With pas_override the caller passes one page address (enough for the checks
	 * the device makes before reading the rest). */
	size_t bytes = (size_t)64 << log_size, npas = pas_override ? 1 : (bytes + 4095) / 4096;
	size_t len = PRM_SIZE(create_eq_in) + npas * 8;
	uint8_t *in = calloc(1, len), *eqc = PRM_ADDR(create_eq_in, in, eq_context_entry);
	int st;

	memset(eq, 0, sizeof(*eq));
	eq->log_size = log_size;
	eq->uar = uar;
	if (!pas_override) {
		cr_assert_eq(shim_dma_alloc(t->dev, bytes, 4096, &eq->buf), 0);
		for (size_t i = 0; i < ((size_t)1 << log_size); i++)
			PRM_SET(eqe, (uint8_t *)eq->buf.va + i * 64, owner, 1);
	}
	PRM_SET(create_eq_in, in, opcode, PRM_CMD_OP_CREATE_EQ);
	PRM_SET(eqc, eqc, log_eq_size, log_size);
	PRM_SET(eqc, eqc, uar_page, uar);
	PRM_SET(eqc, eqc, intr, intr);
	prm_bits_set64(PRM_ADDR(create_eq_in, in, event_bitmask), 0, mask0);
	for (size_t i = 0; i < npas; i++)
		prm_bits_set64(in + PRM_SIZE(create_eq_in), (unsigned)(i * 64),
			       pas_override ? pas_override[i] : eq->buf.iova + i * 4096);
	st = et_exec(t, in, len, PRM_SIZE(create_eq_out));
	free(in);
	eq->eqn = (uint32_t)PRM_GET(create_eq_out, t->out, eq_number);
	return st;
}

static inline int et_create_eq(struct et *t, struct et_eq *eq, uint32_t uar, unsigned log_size, unsigned intr,
			       uint64_t mask0)
{
	return et_create_eq_at(t, eq, uar, log_size, intr, mask0, NULL);
}

static inline int et_destroy_eq(struct et *t, uint32_t eqn)
{
	ET_IN(destroy_eq_in);
	PRM_SET(destroy_eq_in, in, opcode, PRM_CMD_OP_DESTROY_EQ);
	PRM_SET(destroy_eq_in, in, eq_number, eqn);
	return et_exec(t, in, sizeof(in), 16);
}

/* The UAR EQ doorbell: eqn in bits 31:24, consumer index in 23:0 (PRM "EQ Doorbell"). */
static inline void et_eq_doorbell(struct et *t, struct et_eq *eq, int arm, uint32_t ci)
{
	uint8_t img[4] = { 0 };

	prm_bits_set32(img, 0, 8, eq->eqn);
	prm_bits_set32(img, 8, 24, ci & 0xffffff);
	shim_mmio_write32(&t->bar, (uint64_t)eq->uar * t->uar_page_size + (arm ? 0x40 : 0x48), prm_load_be32(img, 0));
}

/* Next EQE if software owns it (owner == lap parity), else NULL. */
static inline const uint8_t *et_eq_next(struct et_eq *eq)
{
	uint32_t size = 1u << eq->log_size;
	const uint8_t *e = (const uint8_t *)eq->buf.va + (size_t)(eq->cc & (size - 1)) * 64;

	if (PRM_GET(eqe, e, owner) != ((eq->cc >> eq->log_size) & 1))
		return NULL;
	eq->cc++;
	return e;
}

#define ET_EVBIT(t) (1ull << (t))

#endif
