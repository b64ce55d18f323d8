/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The EQ engine: EQEs written by DMA with the owner bit, interrupts through the
 * vector's eventfd when the EQ is armed, re-arming through the UAR EQ doorbell, and
 * overrun detection (PRM "Event Queues", "EQ Doorbell").
 *
 * Owner bit: the driver initialises every EQE's owner to 1; the device writes owner =
 * (producer / size) & 1, so the first lap reads 0 and each lap flips it (Linux eq.c
 * next_eqe_sw: valid when owner == !!(cons & size)).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/emu/eq.h"
#include "hw/platform/notify.h"

/* EQ doorbell (PRM "UAR Page" EQ doorbells at 0x40 arm / 0x48 update-only; Linux
 * eq.c eq_update_ci): one big-endian dword, eqn in bits 31:24, consumer index 23:0.
 * No mlx5_ifc.h structure names it, so the two fields are read with prm.h's bit
 * primitive at these PRM bit offsets. */
#define EMU_EQ_DB_EQN_OFF 0
#define EMU_EQ_DB_EQN_W 8
#define EMU_EQ_DB_CI_OFF 8
#define EMU_EQ_DB_CI_W 24

bool emu_eq_wants(const struct emu_eq *eq, uint8_t type)
{
	return (eq->mask[type / 64] >> (type % 64)) & 1;
}

void emu_irq_raise(struct emu_dev *d, unsigned vector)
{
	if (vector >= EMU_NUM_VECTORS)
		return;
	d->ctr.interrupts++;
	if (emu_pci_msix_send(d, vector))
		emu_irq_deliver(d, vector);
}

void emu_irq_deliver(struct emu_dev *d, unsigned vector)
{
	if (d->irq_fds[vector] >= 0) {
		if (plat_notify_signal(d->irq_fds[vector]) < 0)
			emu_log(d, EMU_LOG_WARN, "interrupt vector %u: eventfd write failed", vector);
	} else {
		d->irq_pending[vector]++;
	}
}

unsigned emu_irq_count(const struct emu_dev *d)
{
	return d->cfg.msix ? d->cfg.msix : EMU_NUM_VECTORS;
}

int emu_irq_fd(struct emu_dev *d, unsigned vector)
{
	int fd;

	if (vector >= EMU_NUM_VECTORS)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	if (d->irq_fds[vector] < 0) {
		fd = plat_notify_open((uint32_t)d->irq_pending[vector], PLAT_NOTIFY_NONBLOCK);
		if (fd < 0) {
			pthread_mutex_unlock(&d->lock);
			return fd;
		}
		d->irq_fds[vector] = fd;
		d->irq_pending[vector] = 0;
	}
	fd = d->irq_fds[vector];
	pthread_mutex_unlock(&d->lock);
	return fd;
}

/* A client engine has no EQ: its events go to the sink (engine.c), in the order
 * they happen, as EQEs would. */
static int eq_to_sink(struct emu_dev *d, uint8_t type, uint8_t sub_type, const void *data)
{
	uint8_t zero[EMU_EQE_DATA_BYTES] = { 0 };

	if (d->removed)
		return -EIO;
	d->ctr.eqes++;
	d->sink(d->sink_arg, type, sub_type, data ? data : zero);
	return 0;
}

int emu_eq_post(struct emu_dev *d, uint32_t eqn, uint8_t type, uint8_t sub_type, const void *data)
{
	struct emu_eq *eq = emu_obj_get(d, EMU_OBJ_EQ, eqn);
	uint8_t eqe[EMU_EQE_BYTES];
	uint32_t size, idx;
	uint64_t off, pgsz, iova;

	if (d->sink)
		return eq_to_sink(d, type, sub_type, data);
	if (!eq)
		return -ENOENT;
	if (d->removed)
		return -EIO;
	size = 1u << eq->log_size;
	if (!eq->oi && eq->prod - eq->cons >= size) {
		/* The driver did not consume (or report consuming) a whole queue's worth:
		 * the EQE has nowhere to go.  Hardware marks the EQ in error. */
		if (eq->status != EMU_EQ_STATUS_WRITE_FAILURE)
			emu_drverr(d, "EQ %u overrun: %u EQEs outstanding in a %u-entry queue", eqn,
				   eq->prod - eq->cons, size);
		eq->status = EMU_EQ_STATUS_WRITE_FAILURE;
		d->ctr.eq_overruns++;
		return -ENOSPC;
	}
	memset(eqe, 0, sizeof(eqe));
	PRM_SET(eqe, eqe, event_type, type);
	PRM_SET(eqe, eqe, event_sub_type, sub_type);
	if (data)
		memcpy(PRM_ADDR(eqe, eqe, event_data), data, EMU_EQE_DATA_BYTES);
	PRM_SET(eqe, eqe, owner, (eq->prod >> eq->log_size) & 1);
	idx = eq->prod & (size - 1);
	off = (uint64_t)idx * EMU_EQE_BYTES;
	pgsz = 4096ull << eq->log_page_size;
	if (off / pgsz >= eq->npas)
		return -EFAULT;
	iova = eq->pas[off / pgsz] + off % pgsz;
	if (emu_dma_write(d, iova, eqe, sizeof(eqe)) < 0) {
		eq->status = EMU_EQ_STATUS_WRITE_FAILURE;
		return -EFAULT;
	}
	eq->prod++;
	d->ctr.eqes++;
	if (eq->st == EMU_EQ_ST_ARMED) {
		eq->st = EMU_EQ_ST_FIRED;
		emu_irq_raise(d, eq->intr);
	}
	return 0;
}

static void find_eq(struct emu_dev *d, void *obj, void *arg)
{
	struct emu_eq *eq = obj, **best = arg;
	(void)d;
	if (!*best || eq->eqn < (*best)->eqn)
		*best = eq;
}

struct want_arg {
	uint8_t type;
	struct emu_eq *eq;
};

static void find_wanting(struct emu_dev *d, void *obj, void *arg)
{
	struct want_arg *w = arg;
	struct emu_eq *eq = obj;

	if (emu_eq_wants(eq, w->type))
		find_eq(d, eq, &w->eq);
}

int emu_eq_post_event(struct emu_dev *d, uint8_t type, uint8_t sub_type, const void *data)
{
	struct want_arg w = { type, NULL };

	if (d->sink)
		return eq_to_sink(d, type, sub_type, data);

	emu_obj_foreach(d, EMU_OBJ_EQ, find_wanting, &w);
	if (!w.eq)
		return -ENOENT;
	return emu_eq_post(d, w.eq->eqn, type, sub_type, data);
}

bool emu_eq_listens(struct emu_dev *d, uint8_t type)
{
	struct want_arg w = { type, NULL };

	if (d->sink)
		return true;
	emu_obj_foreach(d, EMU_OBJ_EQ, find_wanting, &w);
	return w.eq != NULL;
}

int emu_eq_post_comp(struct emu_dev *d, uint32_t eqn, uint32_t cqn)
{
	uint8_t data[EMU_EQE_DATA_BYTES] = { 0 };

	PRM_SET(comp_event, data, cq_number, cqn);
	return emu_eq_post(d, eqn, PRM_EVENT_COMP, 0, data);
}

void emu_eq_doorbell(struct emu_dev *d, uint32_t uar_index, uint32_t off, uint32_t value)
{
	uint8_t db[4];
	uint32_t eqn, ci, ahead;
	struct emu_eq *eq;

	prm_store_be32(db, 0, value);
	eqn = prm_bits_get32(db, EMU_EQ_DB_EQN_OFF, EMU_EQ_DB_EQN_W);
	ci = prm_bits_get32(db, EMU_EQ_DB_CI_OFF, EMU_EQ_DB_CI_W);
	d->ctr.eq_doorbells++;
	eq = emu_obj_get(d, EMU_OBJ_EQ, eqn);
	if (!eq) {
		emu_drverr(d, "EQ doorbell on UAR %u for EQ %u, which does not exist", uar_index, eqn);
		return;
	}
	if (eq->uar != uar_index)
		emu_log(d, EMU_LOG_DEBUG, "EQ %u doorbell through UAR %u (EQ uses UAR %u)", eqn, uar_index, eq->uar);
	/* The consumer index is 24 bits of a free-running counter: how far it is behind
	 * the producer says what the driver consumed. */
	ahead = (eq->prod - ci) & 0xffffff;
	if (ahead > (1u << eq->log_size)) {
		emu_drverr(d, "EQ %u armed with consumer index 0x%x beyond the producer (0x%x)", eqn, ci,
			   eq->prod & 0xffffff);
		return;
	}
	eq->cons = eq->prod - ahead;
	if (off == PRM_UAR_EQ_DOORBELL_ARM) {
		eq->st = EMU_EQ_ST_ARMED;
		/* Armed with EQEs still unconsumed: the device interrupts at once. */
		if (eq->cons != eq->prod) {
			eq->st = EMU_EQ_ST_FIRED;
			emu_irq_raise(d, eq->intr);
		}
	}
}
