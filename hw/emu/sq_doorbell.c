/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The send doorbell (PRM "Doorbell Record", "BlueFlame"): a store at UAR offset 0x800
 * and up, in the posting thread.  Doorbell (one 8-byte store of the last WQE's first 8
 * bytes): the QPN comes from the stored ctrl bytes, the producer counter from the
 * doorbell record's send_counter, and the SQ engine reads the WQEs from the ring.
 * BlueFlame (a write-combining burst of a whole WQE): the WQE is taken from the stored
 * bytes when it is the next one expected.  This entry sits on top of the send engine
 * (hw/emu/layers.txt). */
#define EMU_TP_INTERNAL
#include "hw/emu/transport.h"

#include "hw/platform/cpu.h"
#include "hw/shim/mmio.h"

/* Doorbell / BlueFlame store at UAR offset 0x800 and up. */
static void sq_doorbell(struct emu_tp *tp, struct emu_tq *tq, int op, uint32_t idx, const uint8_t *b, unsigned n);

static void sq_db_hook(struct emu_dev *d, uint32_t uar_index, uint32_t off, unsigned size, int op,
		       const volatile uint8_t *page, void *arg)
{
	struct emu_tp *tp = emu_tp_get(d);
	uint8_t b[EMU_TP_WQE_MAX_BYTES + 64];
	struct emu_qp *qp;
	struct emu_tq *tq;
	uint32_t qpn, idx;
	uint32_t psz = emu_uar_page_size(d);
	unsigned n;

	(void)arg;
	if (!tp || d->fatal || d->removed)
		return;
	n = op == SHIM_MMIO_WC_WRITE ? size : 8;
	if (n < 8 || off + n > psz || n > sizeof(b)) {
		emu_drverr(d, "send doorbell: %u bytes at UAR %u offset 0x%x", size, uar_index, off);
		return;
	}
	for (unsigned i = 0; i < n; i++)
		b[i] = page[off + i];
	qpn = (uint32_t)PRM_GET(wqe_ctrl_seg, b, qpn);
	idx = (uint32_t)PRM_GET(wqe_ctrl_seg, b, wqe_index);
	qp = emu_tp_doorbell_obj(d, "send doorbell", EMU_OBJ_QP, qpn, uar_index);
	if (!qp)
		return;
	if (qp->state == EMU_QP_RST || qp->state == EMU_QP_INIT || qp->state == EMU_QP_RTR) {
		emu_drverr(d, "send doorbell for QP 0x%x in state %u (before RTS)", qpn, qp->state);
		return;
	}
	tq = emu_tq_get(tp, qp);
	if (!tq)
		return;
	emu_tp_app_posts(tp);
	__atomic_store_n(&tp->app_cpu, plat_current_cpu(), __ATOMIC_RELAXED);   /* rx_thread.c */
	__atomic_store_n(&tp->assist_brisk, EMU_ASSIST_BRISK_LOOKS, __ATOMIC_RELAXED);   /* its answer is due */
	__atomic_fetch_add(&tp->app_in_call, 1, __ATOMIC_SEQ_CST);   /* the hold does not run out meanwhile */
	/* the WQEs' packets leave in one system call */
	emu_roce_sock_cork(&tp->sock);
	sq_doorbell(tp, tq, op, idx, b, n);
	emu_roce_sock_uncork(&tp->sock);
	__atomic_fetch_sub(&tp->app_in_call, 1, __ATOMIC_SEQ_CST);
	emu_tp_app_done(tp);
}

/* The doorbell's work once its QP is known: b holds the store's n bytes. */
static void sq_doorbell(struct emu_tp *tp, struct emu_tq *tq, int op, uint32_t idx, const uint8_t *b, unsigned n)
{
	struct emu_dev *d = tp->d;
	struct emu_qp *qp = tq->qp;

	/* bf=torn: the burst came in pieces; like a device that got a partial BlueFlame
	 * write, ignore its bytes and take the WQE from the ring (Linux wc.c relies on it) */
	if (op == SHIM_MMIO_WC_WRITE && !d->cfg.bf_torn && idx == (qp->eng.sq_pi & 0xffff) &&
	    qp->eng.sq_pi == tq->sq_prod &&
	    tq->tail - tq->head < EMU_TP_SWQE_SLOTS && qp->state == EMU_QP_RTS) {
		/* BlueFlame: the whole WQE came with the store. */
		unsigned ds = (unsigned)PRM_GET(wqe_ctrl_seg, b, ds);
		unsigned nbb = ds ? (ds + 3) / 4 : 1;

		if ((size_t)nbb * 64 <= n) {
			emu_sq_take_bf(tp, tq, b, n, nbb);
			return;
		}
	}
	{
		/* Doorbell: the record's send_counter says how far to read (16 bits). */
		uint8_t rec[8];

		if (emu_dma_read(d, qp->dbr, rec, sizeof(rec)))
			return;
		tq->sq_prod += (uint16_t)((uint16_t)PRM_GET(qp_dbrec, rec, send_counter) - (uint16_t)tq->sq_prod);
		if ((uint16_t)(idx - (uint16_t)qp->eng.sq_pi) >= (uint16_t)(tq->sq_prod - qp->eng.sq_pi))
			emu_drverr(d, "send doorbell for QP 0x%x names WQE %u outside [%u, %u) of the record", qp->qpn, idx,
				   qp->eng.sq_pi & 0xffff, tq->sq_prod & 0xffff);
	}
	emu_sq_run(tp, tq);
}

int emu_sq_area_init(struct emu_dev *d)
{
	return emu_uar_hook(d, PRM_UAR_BF_OFFSET, 0xffff, sq_db_hook, NULL);
}
