/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* CQEs (PRM "Completion Queue", "CQE Format"): written by DMA with the owner bit of
 * their lap, the op_own byte last so that software never sees a half-written entry;
 * CQ arming through the UAR CQ doorbell (arm sequence number, solicited-only), the
 * completion EQE for an armed CQ, and overrun detection (PRM "CQ overrun": the CQ goes
 * to error and a CQ error event is posted unless cqc.oi is set). */
#define EMU_TP_INTERNAL
#include "hw/emu/transport.h"

#include <errno.h>
#include <string.h>

/* cq_error event syndrome (PRM "CQ Error Event": 0x1 CQ overrun). */
#define EMU_CQ_ERR_OVERRUN 0x1
#define EMU_CQ_CMD_SOLICITED 1   /* cq_uar_db.cmd: 0 next CQE, 1 next solicited CQE */

static uint32_t cq_ci_read(struct emu_tp *tp, const struct emu_cq *cq)
{
	uint8_t rec[8];
	uint32_t ci = cq->pi;
	unsigned h = cq->cqn & 1023;

	if (emu_dma_read(tp->d, cq->dbr, rec, sizeof(rec)) == 0)
		ci = (uint32_t)PRM_GET(cq_dbrec, rec, update_ci);
	tp->cqci[h].cqn = cq->cqn;
	tp->cqci[h].ci = ci;
	return ci;
}

static uint32_t cq_ci_cached(struct emu_tp *tp, const struct emu_cq *cq)
{
	unsigned h = cq->cqn & 1023;

	return tp->cqci[h].cqn == cq->cqn ? tp->cqci[h].ci : 0;
}

static void cq_fire(struct emu_dev *d, struct emu_cq *cq)
{
	cq->st = EMU_CQ_ST_FIRED;
	cq->last_notified = cq->pi;
	emu_eq_post_comp(d, cq->eqn, cq->cqn);
}

static void cq_overrun(struct emu_tp *tp, struct emu_cq *cq)
{
	uint8_t data[EMU_EQE_DATA_BYTES] = { 0 };

	cq->status = EMU_CQ_STATUS_OVERFLOW;
	tp->ctr.cq_overruns++;
	PRM_SET(cq_error, data, cqn, cq->cqn);
	PRM_SET(cq_error, data, syndrome, EMU_CQ_ERR_OVERRUN);
	emu_log(tp->d, EMU_LOG_WARN, "CQ 0x%x overrun: producer %u, CQ moved to error", cq->cqn, cq->pi);
	emu_eq_post_event(tp->d, PRM_EVENT_CQ_ERROR, 0, data);
}

int emu_cqe_post(struct emu_tp *tp, uint32_t cqn, const struct emu_cqe_info *ci)
{
	struct emu_dev *d = tp->d;
	struct emu_cq *cq = emu_obj_get(d, EMU_OBJ_CQ, cqn);
	const uint32_t mask24 = 0xffffff;
	uint32_t size, idx;
	uint8_t e[64];
	uint64_t iova;
	bool err = ci->opcode == PRM_CQE_REQ_ERR || ci->opcode == PRM_CQE_RESP_ERR;

	if (!cq)
		return -ENOENT;
	if (cq->status != EMU_CQ_STATUS_OK)
		return -ENOSPC;
	size = 1u << cq->log_size;
	/* The consumer counter is read from the doorbell record only when the ring looks
	 * full against the last value read: the common case costs no DMA read. */
	if (!cq->oi && !cq->cc && ((cq->pi - cq_ci_cached(tp, cq)) & mask24) >= size &&
	    ((cq->pi - cq_ci_read(tp, cq)) & mask24) >= size) {
		cq_overrun(tp, cq);
		return -ENOSPC;
	}
	idx = cq->cc ? 0 : (cq->pi & (size - 1));
	memset(e, 0, sizeof(e));
	if (err) {
		PRM_SET(err_cqe, e, syndrome, ci->syndrome);
		PRM_SET(err_cqe, e, vendor_err_synd, ci->syndrome);
		PRM_SET(err_cqe, e, s_wqe_opcode, ci->s_wqe_opcode);
		PRM_SET(err_cqe, e, qpn, ci->qpn);
		PRM_SET(err_cqe, e, wqe_counter, ci->wqe_counter);
		PRM_SET(err_cqe, e, srqn, ci->srqn);
	} else {
		PRM_SET(cqe64, e, byte_cnt, ci->byte_cnt);
		PRM_SET(cqe64, e, imm_inval_pkey, ci->imm);
		PRM_SET(cqe64, e, qpn, ci->qpn);
		PRM_SET(cqe64, e, wqe_counter, ci->wqe_counter);
		PRM_SET(cqe64, e, s_wqe_opcode, ci->s_wqe_opcode);
		PRM_SET(cqe64, e, rqpn, ci->rqpn);
		PRM_SET(cqe64, e, grh, ci->grh);
		PRM_SET(cqe64, e, sl, ci->sl);
		PRM_SET(cqe64, e, srqn, ci->srqn);
	}
	PRM_SET(cqe64, e, opcode, ci->opcode);
	PRM_SET(cqe64, e, se, ci->se ? 1 : 0);
	PRM_SET(cqe64, e, owner, cq->cc ? 0 : (cq->pi >> cq->log_size) & 1);
	/* A 128-byte CQE carries the 64-byte one in its second half (cqe_sz 1). */
	iova = emu_qbuf_iova(&cq->buf, (uint64_t)idx * cq->cqe_bytes + (cq->cqe_bytes - 64u));
	if (emu_dma_write(d, iova, e, 63) < 0) {
		cq->status = EMU_CQ_STATUS_WRITE_FAIL;
		return -EFAULT;
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (emu_dma_write(d, iova + 63, e + 63, 1) < 0) {
		cq->status = EMU_CQ_STATUS_WRITE_FAIL;
		return -EFAULT;
	}
	cq->pi++;
	tp->ctr.cqes++;
	if (err)
		tp->ctr.cqe_errors++;
	if (ci->se || err)
		cq->last_solicit = cq->pi;
	/* Completion event: armed for any CQE, or for a solicited (or error) one. */
	if (cq->st == EMU_CQ_ST_ARMED || (cq->st == EMU_CQ_ST_SOLICITED_ARMED && (ci->se || err)))
		cq_fire(d, cq);
	return 0;
}

/* UAR CQ doorbell (PRM "CQ Doorbell", cq_uar_db): arm for the next CQE or the next
 * solicited one past the consumer index the driver reports.  A CQE already written past
 * that index fires at once, so an arm never misses what raced with it. */
static void cq_db_hook(struct emu_dev *d, uint32_t uar_index, uint32_t off, unsigned size, int op,
		       const volatile uint8_t *page, void *arg)
{
	struct emu_tp *tp = emu_tp_get(d);
	uint8_t db[8];
	struct emu_cq *cq;
	uint32_t cqn, ci, cmd, sn;

	(void)arg;
	(void)op;
	if (!tp || off != PRM_UAR_CQ_DOORBELL || size != 8) {
		emu_drverr(d, "CQ doorbell: %u-byte store at UAR %u offset 0x%x (want one 8-byte store at 0x20)", size,
			   uar_index, off);
		return;
	}
	for (unsigned i = 0; i < 8; i++)
		db[i] = page[PRM_UAR_CQ_DOORBELL + i];
	cqn = (uint32_t)PRM_GET(cq_uar_db, db, cqn);
	ci = (uint32_t)PRM_GET(cq_uar_db, db, ci);
	cmd = (uint32_t)PRM_GET(cq_uar_db, db, cmd);
	sn = (uint32_t)PRM_GET(cq_uar_db, db, arm_sn);
	cq = emu_tp_doorbell_obj(d, "CQ doorbell", EMU_OBJ_CQ, cqn, uar_index);
	if (!cq)
		return;
	if (cq->status != EMU_CQ_STATUS_OK)
		return;
	cq->arm_sn = sn;
	emu_tp_app_sleeps(tp);
	tp->cqci[cqn & 1023].cqn = cqn;
	tp->cqci[cqn & 1023].ci = ci;
	cq->st = cmd == EMU_CQ_CMD_SOLICITED ? EMU_CQ_ST_SOLICITED_ARMED : EMU_CQ_ST_ARMED;
	if (cq->st == EMU_CQ_ST_ARMED && ((cq->pi - ci) & 0xffffff) != 0 && ((cq->pi - ci) & 0xffffff) < 0x800000)
		cq_fire(d, cq);
	else if (cq->st == EMU_CQ_ST_SOLICITED_ARMED && ((cq->last_solicit - ci) & 0xffffff) != 0 &&
		 ((cq->last_solicit - ci) & 0xffffff) < 0x800000)
		cq_fire(d, cq);
}

int emu_cqe_area_init(struct emu_dev *d)
{
	return emu_uar_hook(d, PRM_UAR_CQ_DOORBELL, PRM_UAR_CQ_DOORBELL + 7, cq_db_hook, NULL);
}
