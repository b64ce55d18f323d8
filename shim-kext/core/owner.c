/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The device and its owner: attach-time checks and the owner state machine.
 *
 *   CLOSED --open (root or group)--> OWNED --close/death--> DYING --> RESETTING --> CLOSED
 *
 * While OWNED, the owner may admit guests (guest.c): processes that map the UAR pages
 * it granted them and whose memory it pins.  In DYING, before anything else, every
 * guest mapping is revoked.
 *
 * One owner at a time, because the driver in userspace owns the whole function
 * (command queue, firmware pages, every queue): two processes would corrupt each
 * other's firmware state.  Teardown order matters for memory safety: the device must
 * be unable to DMA (bus mastering off, then a function reset that also clears its
 * queues) before the pages it could write are unwired and handed back to the system.
 */
#include "shim-kext/core/uvshim_core.h"


static void zero_bytes(void *p, size_t n)
{
	unsigned char *b = (unsigned char *)p;
	for (size_t i = 0; i < n; i++)
		b[i] = 0;
}

int uvshim_dev_init(struct uvshim_dev *d, const struct uvshim_info_rep *info,
		    const struct uvshim_config *cfg, const struct uvshim_platform *plat,
		    struct uvshim_pin_entry *pin_storage, uint32_t pin_capacity)
{
	if (!d || !info || !cfg || !plat)
		return -UVSHIM_EINVAL;
	if (!plat->pin || !plat->unpin || !plat->dma_alloc || !plat->dma_free ||
	    !plat->bus_master || !plat->reset_function || !plat->irq_arm)
		return -UVSHIM_EINVAL;
	uint64_t page = info->page_size;
	if (!uvshim_is_pow2(page) || page < 4096)
		return -UVSHIM_EINVAL;
	if (info->bar0_len == 0 || (info->bar0_len & (page - 1)))
		return -UVSHIM_EINVAL;
	/* The UAR region starts on a page boundary past the init segment and ends inside
	 * the BAR; an empty one means write-combining is not offered. */
	if (info->uar_len) {
		if ((info->uar_offset & (page - 1)) || (info->uar_len & (page - 1)))
			return -UVSHIM_EINVAL;
		if (info->uar_offset < UVSHIM_INIT_SEG_END)
			return -UVSHIM_EINVAL;
		if (info->uar_offset >= info->bar0_len ||
		    info->uar_len > info->bar0_len - info->uar_offset)
			return -UVSHIM_EINVAL;
	}

	zero_bytes(d, sizeof(*d));
	d->info = *info;
	if (d->info.num_vectors > UVSHIM_MAX_VECTORS)
		d->info.num_vectors = UVSHIM_MAX_VECTORS;
	d->cfg = *cfg;
	if (d->cfg.max_pins == 0)
		d->cfg.max_pins = UVSHIM_DEFAULT_MAX_PINS;
	if (d->cfg.max_pinned_bytes == 0)
		d->cfg.max_pinned_bytes = UVSHIM_DEFAULT_MAX_PINNED_BYTES;
	if (d->cfg.max_pins > UVSHIM_MAX_PINS_HARD)
		return -UVSHIM_EINVAL;
	d->plat = *plat;
	int rc = uvshim_pins_init(&d->pins, pin_storage, pin_capacity, d->cfg.max_pins,
				  d->cfg.max_pinned_bytes, page);
	if (rc)
		return rc;
	d->state = UVSHIM_STATE_CLOSED;
	return 0;
}

int uvshim_open_check(const struct uvshim_dev *d, const struct uvshim_cred *cred)
{
	if (!cred)
		return -UVSHIM_EINVAL;
	if (d->gone)
		return -UVSHIM_ENODEV;
	bool ok = cred->uid == 0;

	if (!ok && d->cfg.group_set && cred->is_member)
		ok = cred->is_member(cred->ctx, d->cfg.group_id);
	return ok ? 0 : -UVSHIM_EACCES;
}

int uvshim_owner_open(struct uvshim_dev *d, const struct uvshim_cred *cred, const void *owner)
{
	if (!owner)
		return -UVSHIM_EINVAL;
	/* Credentials first: someone who may not open learns nothing about the owner. */
	int rc = uvshim_open_check(d, cred);
	if (rc)
		return rc;
	if (d->quarantined)
		return -UVSHIM_EIO;
	if (d->state != UVSHIM_STATE_CLOSED)
		return -UVSHIM_EBUSY;
	d->state = UVSHIM_STATE_OWNED;
	d->owner = owner;
	d->hello = UVSHIM_HELLO_NONE;
	for (uint32_t v = 0; v < UVSHIM_MAX_VECTORS; v++) {
		d->vec[v].armed = false;
		d->vec[v].cookie = 0;
		d->vec[v].count = 0;
	}
	for (uint32_t w = 0; w < UVSHIM_MAX_WINDOWS; w++)
		d->win[w].used = false;
	d->opens++;
	return 0;
}

static void release_entry(void *ctx, const struct uvshim_pin_entry *e)
{
	struct uvshim_dev *d = (struct uvshim_dev *)ctx;
	if (e->kind == UVSHIM_PIN_USER)
		d->plat.unpin(d->plat.ctx, e->cookie);
	else if (e->kind == UVSHIM_PIN_DMA)
		d->plat.dma_free(d->plat.ctx, e->cookie);
}

int uvshim_owner_release(struct uvshim_dev *d, const void *owner)
{
	if (d->state == UVSHIM_STATE_DYING || d->state == UVSHIM_STATE_RESETTING)
		return -UVSHIM_EBUSY;
	if (d->state != UVSHIM_STATE_OWNED || owner != d->owner)
		return -UVSHIM_EPERM;

	d->state = UVSHIM_STATE_DYING;
	/* No guest store may reach the function from here on: it is about to be reset
	 * and handed to whoever opens next. */
	uvshim_guests_revoke_all(d);
	/* Stop notifications to a port that may already be dead. */
	for (uint32_t v = 0; v < d->info.num_vectors; v++) {
		if (d->vec[v].armed) {
			d->plat.irq_arm(d->plat.ctx, v, false);
			d->vec[v].armed = false;
		}
	}
	int rc_bm = 0, rc_reset = 0;
	if (!d->gone)
		rc_bm = d->plat.bus_master(d->plat.ctx, false);

	d->state = UVSHIM_STATE_RESETTING;
	if (!d->gone)
		rc_reset = d->plat.reset_function(d->plat.ctx);

	int rc = 0;
	if (!d->gone && rc_bm != 0 && rc_reset != 0) {
		/* Neither quiesce step worked and the device is still there: it may still
		 * write into the pinned pages.  Keep them wired (a leak) rather than give
		 * them back to the system, and refuse new owners. */
		d->quarantined = true;
		rc = -UVSHIM_EIO;
	} else {
		uvshim_pins_release_all(&d->pins, release_entry, d);
		if (rc_bm || rc_reset)
			rc = -UVSHIM_EIO;
	}
	for (uint32_t w = 0; w < UVSHIM_MAX_WINDOWS; w++)
		d->win[w].used = false;
	d->owner = NULL;
	d->hello = UVSHIM_HELLO_NONE;
	d->state = UVSHIM_STATE_CLOSED;
	uvshim_power_released(d);
	return rc;
}

void uvshim_dev_gone(struct uvshim_dev *d)
{
	d->gone = true;
}

int uvshim_irq_fire(struct uvshim_dev *d, uint32_t vector, uint64_t *count, uint64_t *cookie)
{
	if (vector >= d->info.num_vectors)
		return -UVSHIM_EINVAL;
	struct uvshim_vector *v = &d->vec[vector];
	v->count++;
	if (count)
		*count = v->count;
	if (cookie)
		*cookie = v->cookie;
	return (d->state == UVSHIM_STATE_OWNED && v->armed) ? 1 : 0;
}

int uvshim_memory_for_type(const struct uvshim_dev *d, const void *owner, uint32_t memory_type,
			   struct uvshim_memory *out)
{
	if (owner != NULL && owner != d->owner && uvshim_is_guest(d, owner))
		return uvshim_guest_memory_for_type(d, owner, memory_type, out);
	if (d->gone)
		return -UVSHIM_ENODEV;
	if (d->state != UVSHIM_STATE_OWNED || owner != d->owner)
		return -UVSHIM_EPERM;
	int rc = uvshim_hello_status(d->hello);
	if (rc)
		return rc;
	uint32_t kind = memory_type >> UVSHIM_MEMTYPE_KIND_SHIFT;
	uint32_t index = memory_type & UVSHIM_MEMTYPE_INDEX_MASK;
	zero_bytes(out, sizeof(*out));
	if (kind == UVSHIM_MEMTYPE_WINDOW)
		return uvshim_window_memory(d->win, UVSHIM_MAX_WINDOWS, memory_type, out);
	if (kind == UVSHIM_MEMTYPE_DMA) {
		if (index >= d->pins.max_pins || d->pins.e[index].kind != UVSHIM_PIN_DMA)
			return -UVSHIM_ENOENT;
		out->kind = kind;
		out->length = d->pins.e[index].len;
		out->cookie = d->pins.e[index].cookie;
		return 0;
	}
	return -UVSHIM_EINVAL;
}
