/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* CREATE_EQ (0x301), DESTROY_EQ (0x302), QUERY_EQ (0x303): PRM "Event Queues".
 *
 * CREATE_EQ checks what firmware checks: the UAR exists (0x5 BAD_UAR), the size is
 * within log_max_eq_sz (0x8), the interrupt vector exists (0x3), page_offset is 0, and
 * every page of the buffer (pas, 4 KiB << log_page_size each) is aligned and mapped by
 * the IOMMU (0x3 BUFFER_NOT_PINNED): the device would otherwise write EQEs into memory
 * nobody gave it.  The EQ holds a reference on its UAR.  The area also owns the UAR
 * EQ doorbells (0x40 arm, 0x48 update only).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/eq.h"

static void eq_dtor(struct emu_dev *d, void *obj)
{
	struct emu_eq *eq = obj;

	(void)d;
	if (eq->uar_obj)
		emu_obj_unref(eq->uar_obj);
	free(eq->pas);
}

static int create_eq(struct emu_dev *d, struct emu_cmd *c)
{
	const uint8_t *eqc = PRM_ADDR(create_eq_in, c->in, eq_context_entry);
	const uint8_t *mask = PRM_ADDR(create_eq_in, c->in, event_bitmask);
	size_t pas_off = PRM_OFF(create_eq_in, pas) / 8;
	uint32_t log_size = (uint32_t)PRM_GET(eqc, eqc, log_eq_size);
	uint32_t log_pg = (uint32_t)PRM_GET(eqc, eqc, log_page_size);
	uint32_t uar = (uint32_t)PRM_GET(eqc, eqc, uar_page);
	uint32_t intr = (uint32_t)PRM_GET(eqc, eqc, intr);
	uint8_t *gen = emu_cap(d, PRM_CAP_GENERAL_DEVICE, 1);
	uint64_t bytes, pgsz;
	size_t npas;
	void *uar_obj;
	struct emu_eq *eq;
	uint32_t eqn;

	uar_obj = emu_uar_obj(d, uar);
	if (!uar_obj)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_UAR);
	if (log_size > PRM_GET(cmd_hca_cap, gen, log_max_eq_sz))
		return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_SIZE_TOO_LARGE);
	/* a vector the function has (its MSI-X table: cfg msix) */
	if (intr >= emu_irq_count(d))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_INTR_VECTOR);
	if (PRM_GET(eqc, eqc, page_offset) != 0 || log_pg > 20)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PAGE_SIZE);
	bytes = (uint64_t)EMU_EQE_BYTES << log_size;
	pgsz = 4096ull << log_pg;
	npas = (size_t)((bytes + pgsz - 1) / pgsz);
	if (c->inlen < pas_off + npas * 8)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_INP_LEN, PRM_SYND_INPUT_TOO_SHORT);
	for (size_t i = 0; i < npas; i++) {
		uint64_t a = prm_bits_get64(c->in + pas_off, (unsigned)(i * 64));
		uint64_t need = bytes - i * pgsz < pgsz ? bytes - i * pgsz : pgsz;

		if (a % 4096)
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_PAGE_NOT_ALIGNED);
		if (!emu_iova_mapped(d, a, need)) {
			emu_drverr(d, "CREATE_EQ page %zu at IOVA 0x%llx is not mapped", i, (unsigned long long)a);
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BUFFER_NOT_PINNED);
		}
	}
	eq = emu_obj_alloc(d, EMU_OBJ_EQ, sizeof(*eq), eq_dtor, &eqn);
	if (!eq)
		return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_LIMIT_EXCEEDED);
	eq->pas = malloc(npas * sizeof(*eq->pas));
	if (!eq->pas) {
		emu_obj_free(d, EMU_OBJ_EQ, eqn);
		return emu_cmd_fail(c, PRM_CMD_STAT_NO_RES, PRM_SYND_NO_RESOURCES);
	}
	for (size_t i = 0; i < npas; i++)
		eq->pas[i] = prm_bits_get64(c->in + pas_off, (unsigned)(i * 64));
	eq->npas = npas;
	eq->eqn = eqn;
	eq->log_size = (uint8_t)log_size;
	eq->log_page_size = (uint8_t)log_pg;
	eq->uar = uar;
	eq->intr = (uint16_t)intr;
	eq->oi = PRM_GET(eqc, eqc, oi);
	/* A new EQ interrupts only once the driver arms it (Linux arms right after). */
	eq->st = PRM_GET(eqc, eqc, st) == EMU_EQ_ST_ARMED ? EMU_EQ_ST_ARMED : EMU_EQ_ST_FIRED;
	for (unsigned w = 0; w < 4; w++)
		eq->mask[w] = prm_bits_get64(mask, w * 64);
	eq->uar_obj = uar_obj;
	emu_obj_ref(uar_obj);
	PRM_SET(create_eq_out, c->out, eq_number, eqn);
	if (emu_eq_wants(eq, PRM_EVENT_PAGE_REQUEST))
		emu_pages_auto(d);
	return 0;
}

static int destroy_eq(struct emu_dev *d, struct emu_cmd *c)
{
	return emu_cmd_free_obj(d, c, EMU_OBJ_EQ, (uint32_t)PRM_GET(destroy_eq_in, c->in, eq_number), PRM_SYND_BAD_EQN);
}

EMU_CMD_QUERY_HANDLER(eq, eq_number, EMU_OBJ_EQ, PRM_SYND_BAD_EQN)

static int answer_eq(struct emu_dev *d, struct emu_cmd *c, const struct emu_eq *eq)
{
	uint8_t *eqc = PRM_ADDR(query_eq_out, c->out, eq_context_entry);
	size_t pas_off = PRM_OFF(query_eq_out, pas) / 8;

	(void)d;
	PRM_SET(eqc, eqc, status, eq->status);
	PRM_SET(eqc, eqc, oi, eq->oi);
	PRM_SET(eqc, eqc, st, eq->st);
	PRM_SET(eqc, eqc, log_eq_size, eq->log_size);
	PRM_SET(eqc, eqc, uar_page, eq->uar);
	PRM_SET(eqc, eqc, intr, eq->intr);
	PRM_SET(eqc, eqc, log_page_size, eq->log_page_size);
	/* the counters run free: PRM_SET stores the low 24 bits the fields hold
	 * (firmware-cmd/prm.h: no other file masks a PRM field) */
	PRM_SET(eqc, eqc, consumer_counter, eq->cons);
	PRM_SET(eqc, eqc, producer_counter, eq->prod);
	PRM_SET(query_eq_out, c->out, event_bitmask, eq->mask[0]);
	for (size_t i = 0; i < eq->npas && pas_off + (i + 1) * 8 <= c->outlen; i++)
		prm_bits_set64(c->out + pas_off, (unsigned)(i * 64), eq->pas[i]);
	return 0;
}

static void eq_db_hook(struct emu_dev *d, uint32_t uar, uint32_t off, unsigned size, int op,
		       const volatile uint8_t *page, void *arg)
{
	uint8_t b[4];

	(void)arg;
	(void)op;
	if ((off != PRM_UAR_EQ_DOORBELL_ARM && off != PRM_UAR_EQ_DOORBELL_NOARM) || size != 4) {
		emu_drverr(d, "store of %u bytes at UAR %u offset 0x%x is not an EQ doorbell", size, uar, off);
		return;
	}
	memcpy(b, (const uint8_t *)page + off, 4);
	emu_eq_doorbell(d, uar, off, prm_load_be32(b, 0));
}

static int eq_area_init(struct emu_dev *d)
{
	return emu_uar_hook(d, PRM_UAR_EQ_DOORBELL_ARM, PRM_UAR_EQ_DOORBELL_NOARM + 7, eq_db_hook, NULL);
}

static const struct emu_cmd_desc cmds[] = {
	EMU_CMDS_OBJ(EQ, eq),
};

const struct emu_cmd_area emu_area_eq = {
	.name = "eq", .cmds = cmds, .ncmds = EMU_NCMDS(cmds), .init = eq_area_init,
};
