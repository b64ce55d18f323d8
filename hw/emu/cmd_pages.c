/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* QUERY_PAGES (0x107) and MANAGE_PAGES (0x108), PRM "Firmware Pages".
 *
 * The device wants boot pages (op_mod 1) before INIT_HCA can start, init pages
 * (op_mod 2) for INIT_HCA itself, and regular pages (op_mod 3) afterwards, as
 * PAGE_REQUEST events ask (num_pages > 0: wants more; < 0: offers some back).
 * MANAGE_PAGES op_mod 1 gives pages (each 4 KiB aligned, mapped by the IOMMU, not
 * duplicated, not already held), op_mod 2 takes them back: while the HCA is
 * initialised only pages beyond what boot+init need come back; after TEARDOWN_HCA all
 * of them do.  op_mod 0 tells the device the driver could not allocate what it asked.
 */
#include <stdlib.h>
#include <string.h>

#include "hw/emu/caps_seed.h"
#include "hw/emu/emu_dev.h"

enum { QP_BOOT = 1, QP_INIT = 2, QP_REGULAR = 3 };
enum { MP_ALLOC_FAIL = 0, MP_GIVE = 1, MP_TAKE = 2 };

/* Pages the firmware cannot do without in the current state. */
static size_t pages_needed(struct emu_dev *d)
{
	if (d->hca == EMU_HCA_INITIALIZED)
		return (size_t)EMU_CAPS_SEED_BOOT_PAGES + EMU_CAPS_SEED_INIT_PAGES;
	return 0;
}

static int query_pages(struct emu_dev *d, struct emu_cmd *c)
{
	int32_t n;

	if (PRM_GET(query_pages_in, c->in, function_id) != 0)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_FUNCTION_ID);
	switch (c->op_mod) {
	case QP_BOOT:
		n = (int32_t)d->boot_pages;
		break;
	case QP_INIT:
		n = (int32_t)d->init_pages;
		break;
	case QP_REGULAR:
		n = d->regular_pages;
		break;
	default:
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_OP_MOD);
	}
	PRM_SET(query_pages_out, c->out, function_id, 0);
	PRM_SET(query_pages_out, c->out, num_pages, (uint32_t)n);
	return 0;
}

static void account_given(struct emu_dev *d, uint32_t n)
{
	uint32_t k = n < d->boot_pages ? n : d->boot_pages;

	d->boot_pages -= k;
	n -= k;
	if (d->hca != EMU_HCA_DISABLED && !d->boot_pages) {
		k = n < d->init_pages ? n : d->init_pages;
		d->init_pages -= k;
		n -= k;
	}
	if (n && d->regular_pages > 0)
		d->regular_pages = (int32_t)n >= d->regular_pages ? 0 : d->regular_pages - (int32_t)n;
}

static int manage_pages(struct emu_dev *d, struct emu_cmd *c)
{
	uint32_t n = (uint32_t)PRM_GET(manage_pages_in, c->in, input_num_entries);
	size_t pas_off = PRM_OFF(manage_pages_in, pas) / 8;

	if (PRM_GET(manage_pages_in, c->in, function_id) != 0)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_FUNCTION_ID);
	switch (c->op_mod) {
	case MP_ALLOC_FAIL:
		/* The driver could not supply what was asked: stop asking. */
		if (d->regular_pages > 0)
			d->regular_pages = 0;
		emu_hold_alloc_failed(d);
		return 0;
	case MP_GIVE: {
		uint64_t *pages;
		uint32_t synd = 0;
		int rc;

		if (c->inlen < pas_off + (size_t)n * 8)
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_INP_LEN, PRM_SYND_INPUT_TOO_SHORT);
		pages = malloc((n ? n : 1) * sizeof(*pages));
		if (!pages)
			return emu_cmd_fail(c, PRM_CMD_STAT_NO_RES, PRM_SYND_NO_RESOURCES);
		for (uint32_t i = 0; i < n; i++)
			pages[i] = prm_bits_get64(c->in + pas_off, i * 64);
		rc = emu_pages_hold(d, pages, n, &synd);
		free(pages);
		if (rc < 0)
			return emu_cmd_fail(c, synd ? PRM_CMD_STAT_BAD_PARAM : PRM_CMD_STAT_NO_RES,
					    synd ? synd : PRM_SYND_NO_RESOURCES);
		account_given(d, n);
		emu_hold_given(d, n);
		emu_pages_auto(d);
		return 0;
	}
	case MP_TAKE: {
		size_t out_off = PRM_OFF(manage_pages_out, pas) / 8;
		size_t need = pages_needed(d), spare = d->pages.n > need ? d->pages.n - need : 0;
		size_t k = n < spare ? n : spare;
		uint64_t *pages;

		if (c->outlen < out_off + (size_t)n * 8)
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_OUTP_LEN, PRM_SYND_OUTPUT_TOO_SHORT);
		pages = malloc((k ? k : 1) * sizeof(*pages));
		if (!pages)
			return emu_cmd_fail(c, PRM_CMD_STAT_NO_RES, PRM_SYND_NO_RESOURCES);
		k = emu_pages_release(d, pages, k);
		for (size_t i = 0; i < k; i++)
			prm_bits_set64(c->out + out_off, (unsigned)(i * 64), pages[i]);
		free(pages);
		PRM_SET(manage_pages_out, c->out, output_num_entries, k);
		emu_hold_taken(d, (uint32_t)k);
		if (d->regular_pages < 0)
			d->regular_pages = (int32_t)k >= -d->regular_pages ? 0 : d->regular_pages + (int32_t)k;
		return 0;
	}
	default:
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_OP_MOD);
	}
}

static const struct emu_cmd_desc cmds[] = {
	EMU_CMD(QUERY_PAGES, EMU_CMDF_ENABLED, query_pages_in, query_pages_out, query_pages),
	EMU_CMD(MANAGE_PAGES, EMU_CMDF_ENABLED, manage_pages_in, manage_pages_out, manage_pages),
};

const struct emu_cmd_area emu_area_pages = { .name = "pages", .cmds = cmds, .ncmds = EMU_NCMDS(cmds) };
