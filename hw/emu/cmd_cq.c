/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Completion queues: CREATE_CQ (0x400), DESTROY_CQ (0x401), QUERY_CQ (0x402),
 * MODIFY_CQ (0x403), PRM "Completion Queue" / cqc.
 *
 * Rules, as firmware applies them:
 *  - log_cq_size <= log_max_cq_sz (limits, 0x8); cqe_sz 0 (64-byte CQEs) or 1 (128);
 *    CQE compression is refused: this device does not report the capability;
 *  - cq_period_mode 0 or 1 (1 only with cq_period_start_from_cqe);
 *  - uar_page an allocated UAR, c_eqn an existing EQ (both held: the EQ and the UAR
 *    cannot be destroyed under the CQ);
 *  - dbr_addr 8-byte aligned and pinned; the page list (log_page_size, page_offset)
 *    covers the CQ buffer, every page aligned and pinned where the CQ lies;
 *  - a CQ a QP or SRQ uses is in use: DESTROY_CQ fails with bad resource state (0x9);
 *  - MODIFY_CQ op_mod 0 changes moderation (cq_period, cq_max_count), overrun-ignore
 *    and the EQ per modify_field_select (Linux MLX5_CQ_MODIFY_*); op_mod 1 resizes
 *    (resize_field_select: log size, page offset, page size; new page list).
 */
#include <errno.h>
#include <string.h>

#include "hw/emu/objects.h"

/* modify_field_select bits (PRM MODIFY_CQ; Linux MLX5_CQ_MODIFY_PERIOD/COUNT/OVERRUN/EQN/
 * PERIOD_MODE) and resize_field_select bits (MLX5_MODIFY_CQ_MASK_LOG_SIZE/PG_OFFSET/PG_SIZE). */
enum { CQ_MOD_PERIOD = 1u << 0, CQ_MOD_COUNT = 1u << 1, CQ_MOD_OVERRUN = 1u << 2, CQ_MOD_EQN = 1u << 3,
       CQ_MOD_PERIOD_MODE = 1u << 4 };
enum { CQ_RESIZE_LOG_SIZE = 1u << 0, CQ_RESIZE_PG_OFFSET = 1u << 1, CQ_RESIZE_PG_SIZE = 1u << 2 };
enum { CQ_OPMOD_MODIFY = 0, CQ_OPMOD_RESIZE = 1 };

/* What a CQ holds while it lives: its EQ and its UAR page. */
static void cq_holds(struct emu_dev *d, const void *obj, emu_obj_hold_fn op)
{
	const struct emu_cq *cq = obj;

	emu_obj_hold(emu_obj_get(d, EMU_OBJ_EQ, cq->eqn), op);
	emu_obj_hold(emu_uar_obj(d, cq->uar), op);
}

EMU_QUEUE_KIND(cq, cqn, EMU_OBJ_CQ);

/* cqc.cq_period_mode: 0 the moderation timer starts at an EQE, 1 at a CQE (Linux enum
 * mlx5_cq_period_mode: MLX5_CQ_PERIOD_MODE_START_FROM_EQE/CQE; no other value), the
 * latter only when cmd_hca_cap.cq_period_start_from_cqe offers it. */
static int cq_period_mode_check(struct emu_dev *d, unsigned mode)
{
	const uint8_t *g = emu_gen_caps(d);

	if (mode > 1 || (mode == 1 && g && !PRM_GET(cmd_hca_cap, g, cq_period_start_from_cqe)))
		return PRM_CMD_STAT_BAD_PARAM;
	return 0;
}

/* Size and buffer checks shared by CREATE_CQ and the resize of MODIFY_CQ. */
static int cq_buffer(struct emu_dev *d, struct emu_cmd *c, const char *what, const uint8_t *cqc, size_t pas_off,
		     uint16_t cqe_bytes, struct emu_qbuf *buf, uint32_t *synd)
{
	const uint8_t *g = emu_gen_caps(d);
	unsigned log_size = (unsigned)PRM_GET(cqc, cqc, log_cq_size);

	if (g && log_size > PRM_GET(cmd_hca_cap, g, log_max_cq_sz)) {
		*synd = PRM_SYND_SIZE_TOO_LARGE;
		return PRM_CMD_STAT_LIM_ERR;
	}
	return emu_qbuf_load(d, c, pas_off, what, (unsigned)PRM_GET(cqc, cqc, log_page_size),
			     (unsigned)PRM_GET(cqc, cqc, page_offset), (uint64_t)cqe_bytes << log_size, buf, synd);
}

static int create_cq(struct emu_dev *d, struct emu_cmd *c)
{
	const uint8_t *cqc = PRM_ADDR(create_cq_in, c->in, cq_context);
	/* A new CQ is not armed: the driver arms it with a doorbell (Linux mlx5_cq_arm). */
	struct emu_cq tmp = { .st = EMU_CQ_ST_FIRED, .status = EMU_CQ_STATUS_OK };
	uint32_t synd = 0;
	unsigned cqe_sz = (unsigned)PRM_GET(cqc, cqc, cqe_sz);
	int st;

	if (PRM_GET(create_cq_in, c->in, uid))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_UID);
	if (PRM_GET(create_cq_in, c->in, cq_umem_valid) || PRM_GET(cqc, cqc, dbr_umem_valid) ||
	    PRM_GET(cqc, cqc, apu_cq))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_RESERVED_NOT_ZERO);
	if (cqe_sz > 1)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_CQE_SIZE);
	if (PRM_GET(cqc, cqc, cqe_comp_en))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_CQ_FEATURE);
	st = cq_period_mode_check(d, (unsigned)PRM_GET(cqc, cqc, cq_period_mode));
	if (st)
		return emu_cmd_fail(c, st, PRM_SYND_BAD_CQ_PERIOD_MODE);
	tmp.cq_period_mode = (uint8_t)PRM_GET(cqc, cqc, cq_period_mode);
	tmp.cq_period = (uint16_t)PRM_GET(cqc, cqc, cq_period);
	tmp.cq_max_count = (uint16_t)PRM_GET(cqc, cqc, cq_max_count);
	tmp.oi = PRM_GET(cqc, cqc, oi);
	tmp.cc = PRM_GET(cqc, cqc, cc);
	tmp.log_size = (uint8_t)PRM_GET(cqc, cqc, log_cq_size);
	tmp.cqe_bytes = (uint16_t)(64u << cqe_sz);
	tmp.uar = (uint32_t)PRM_GET(cqc, cqc, uar_page);
	/* uar_page is a UAR index (uar_4k: of a 4 KiB UAR inside an allocated page) */
	if (!emu_uar_obj(d, tmp.uar))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_UAR);
	tmp.eqn = (uint32_t)PRM_GET(cqc, cqc, c_eqn_or_apu_element);
	if (!emu_obj_get(d, EMU_OBJ_EQ, tmp.eqn) && !d->sink)   /* an engine's events: to its sink */
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_EQN);
	tmp.dbr = PRM_GET(cqc, cqc, dbr_addr);
	st = emu_dbr_check(d, "CREATE_CQ", tmp.dbr, &synd);
	if (!st)
		st = cq_buffer(d, c, "CREATE_CQ", cqc, PRM_OFF(create_cq_in, pas) / 8, tmp.cqe_bytes, &tmp.buf, &synd);
	if (st)
		return emu_cmd_fail(c, st, synd);
	return emu_queue_adopt(d, c, &cq_kind, &tmp, &tmp.buf);
}

EMU_CMD_DESTROY_HANDLER(cq, cqn, EMU_OBJ_CQ, PRM_SYND_BAD_CQN)
EMU_CMD_QUERY_HANDLER(cq, cqn, EMU_OBJ_CQ, PRM_SYND_BAD_CQN)

static int answer_cq(struct emu_dev *d, struct emu_cmd *c, const struct emu_cq *cq)
{
	uint8_t *cqc = PRM_ADDR(query_cq_out, c->out, cq_context);
	uint8_t dbr[EMU_DBR_BYTES] = { 0 };

	PRM_SET(cqc, cqc, status, cq->status);
	PRM_SET(cqc, cqc, cqe_sz, cq->cqe_bytes == 128 ? 1 : 0);
	PRM_SET(cqc, cqc, cc, cq->cc);
	PRM_SET(cqc, cqc, oi, cq->oi);
	PRM_SET(cqc, cqc, cq_period_mode, cq->cq_period_mode);
	PRM_SET(cqc, cqc, st, cq->st);
	PRM_SET(cqc, cqc, log_cq_size, cq->log_size);
	PRM_SET(cqc, cqc, uar_page, cq->uar);
	PRM_SET(cqc, cqc, cq_period, cq->cq_period);
	PRM_SET(cqc, cqc, cq_max_count, cq->cq_max_count);
	PRM_SET(cqc, cqc, c_eqn_or_apu_element, cq->eqn);
	/* indexes and counters run free: PRM_SET stores the low 24 bits the fields hold
	 * (firmware-cmd/prm.h: no other file masks a PRM field) */
	PRM_SET(cqc, cqc, last_notified_index, cq->last_notified);
	PRM_SET(cqc, cqc, last_solicit_index, cq->last_solicit);
	/* the consumer counter is what the driver last wrote to the doorbell record */
	if (emu_iova_mapped(d, cq->dbr, 4) && emu_dma_read(d, cq->dbr, dbr, 4) == 0)
		PRM_SET(cqc, cqc, consumer_counter, prm_load_be32(dbr, 0));
	PRM_SET(cqc, cqc, producer_counter, cq->pi);
	EMU_QUEUE_MEM_ANSWER(cqc, cqc, cq, c, PRM_OFF(query_cq_out, pas) / 8);
	return 0;
}

static int modify_cq(struct emu_dev *d, struct emu_cmd *c)
{
	struct emu_cq *cq = emu_obj_get(d, EMU_OBJ_CQ, (uint32_t)PRM_GET(modify_cq_in, c->in, cqn));
	const uint8_t *sel = PRM_ADDR(modify_cq_in, c->in, modify_field_select_resize_field_select);
	const uint8_t *cqc = PRM_ADDR(modify_cq_in, c->in, cq_context);
	const uint8_t *g = emu_gen_caps(d);

	if (PRM_GET(modify_cq_in, c->in, uid))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_UID);
	if (!cq)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_CQN);
	if (c->op_mod == CQ_OPMOD_MODIFY) {
		uint32_t m = (uint32_t)PRM_GET(modify_field_select, sel, modify_field_select);
		uint32_t eqn = (uint32_t)PRM_GET(cqc, cqc, c_eqn_or_apu_element);

		if (m & ~(uint32_t)(CQ_MOD_PERIOD | CQ_MOD_COUNT | CQ_MOD_OVERRUN | CQ_MOD_EQN | CQ_MOD_PERIOD_MODE))
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_FIELD_SELECT);
		if ((m & (CQ_MOD_PERIOD | CQ_MOD_COUNT)) && g && !PRM_GET(cmd_hca_cap, g, cq_moderation))
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_CQ_FEATURE);
		if ((m & CQ_MOD_PERIOD_MODE) && g && !PRM_GET(cmd_hca_cap, g, cq_period_mode_modify))
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_CQ_FEATURE);
		if ((m & CQ_MOD_OVERRUN) && g && !PRM_GET(cmd_hca_cap, g, cq_oi))
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_CQ_FEATURE);
		if ((m & CQ_MOD_EQN) && !emu_obj_get(d, EMU_OBJ_EQ, eqn) && !d->sink)
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_EQN);
		if (m & CQ_MOD_PERIOD)
			cq->cq_period = (uint16_t)PRM_GET(cqc, cqc, cq_period);
		if (m & CQ_MOD_COUNT)
			cq->cq_max_count = (uint16_t)PRM_GET(cqc, cqc, cq_max_count);
		if (m & CQ_MOD_OVERRUN)
			cq->oi = PRM_GET(cqc, cqc, oi);
		if (m & CQ_MOD_PERIOD_MODE)
			cq->cq_period_mode = (uint8_t)PRM_GET(cqc, cqc, cq_period_mode);
		if ((m & CQ_MOD_EQN) && eqn != cq->eqn) {
			emu_obj_hold(emu_obj_get(d, EMU_OBJ_EQ, eqn), emu_obj_ref);
			emu_obj_unref_id(d, EMU_OBJ_EQ, cq->eqn);
			cq->eqn = eqn;
		}
		return 0;
	}
	if (c->op_mod == CQ_OPMOD_RESIZE) {
		uint32_t m = (uint32_t)PRM_GET(resize_field_select, sel, resize_field_select);
		struct emu_qbuf nb;
		uint32_t synd = 0;
		int st;

		if (m & ~(uint32_t)(CQ_RESIZE_LOG_SIZE | CQ_RESIZE_PG_OFFSET | CQ_RESIZE_PG_SIZE))
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_FIELD_SELECT);
		if (!(m & CQ_RESIZE_LOG_SIZE))
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_FIELD_SELECT);
		if (g && !PRM_GET(cmd_hca_cap, g, cq_resize))
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_CQ_FEATURE);
		if (PRM_GET(modify_cq_in, c->in, cq_umem_valid))
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_RESERVED_NOT_ZERO);
		st = cq_buffer(d, c, "MODIFY_CQ resize", cqc, PRM_OFF(modify_cq_in, pas) / 8, cq->cqe_bytes, &nb,
			       &synd);
		if (st)
			return emu_cmd_fail(c, st, synd);
		/* The device writes the next CQE into the new buffer; the driver copies the
		 * ones it has not polled (Linux mlx5_ib_resize_cq, copy_resize_cqes). */
		emu_qbuf_free(&cq->buf);
		cq->buf = nb;
		cq->log_size = (uint8_t)PRM_GET(cqc, cqc, log_cq_size);
		return 0;
	}
	return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_OP_MOD);
}

static const struct emu_cmd_desc cmds[] = {
	EMU_CMDS_OBJ(CQ, cq),
	EMU_CMD(MODIFY_CQ, EMU_CMDF_INIT, modify_cq_in, modify_cq_out, modify_cq),
};

const struct emu_cmd_area emu_area_cq = { .name = "cq", .cmds = cmds, .ncmds = EMU_NCMDS(cmds) };
