/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* One user-client call: validation (validate.c), then state and policy, then the
 * platform.  The kext's externalMethod is a copy-in, this call, a copy-out.
 *
 * Order, so the same mistake always gets the same answer:
 *   selector and sizes, fields (validate.c) -> device gone (ENODEV) -> caller owns the
 *   device (EPERM, or EBUSY while it is being torn down) -> HELLO done with a matching
 *   major version (ENOHELLO / EVERSION) -> the request's own policy.
 */
#include "shim-kext/core/uvshim_core.h"

static void copy_bytes(void *dst, const void *src, size_t n)
{
	unsigned char *d = (unsigned char *)dst;
	const unsigned char *s = (const unsigned char *)src;
	for (size_t i = 0; i < n; i++)
		d[i] = s[i];
}

static void zero_bytes(void *p, size_t n)
{
	unsigned char *b = (unsigned char *)p;
	for (size_t i = 0; i < n; i++)
		b[i] = 0;
}

static uint64_t round_up(uint64_t v, uint64_t page) { return (v + page - 1) & ~(page - 1); }

int uvshim_hello_answer(enum uvshim_hello *state, uint32_t page_size, const struct uvshim_hello_req *r,
			struct uvshim_hello_rep *o)
{
	/* The reply always carries the kext's version, so a mismatched client can say
	 * which side to update. */
	o->abi_major = UVSHIM_ABI_MAJOR;
	o->abi_minor = UVSHIM_ABI_MINOR;
	if (r->abi_major != UVSHIM_ABI_MAJOR) {
		*state = UVSHIM_HELLO_BAD_VERSION;
		return -UVSHIM_EVERSION;
	}
	o->page_size = page_size;
	o->max_segs_per_reply = UVSHIM_MAX_SEGS_PER_REPLY;
	*state = UVSHIM_HELLO_OK;
	return 0;
}

static int do_hello(struct uvshim_dev *d, const struct uvshim_hello_req *r, struct uvshim_hello_rep *o)
{
	int rc = uvshim_hello_answer(&d->hello, d->info.page_size, r, o);
	if (rc)
		return rc;
	o->num_vectors = d->info.num_vectors;
	o->max_pins = d->pins.max_pins;
	o->max_pinned_bytes = d->pins.max_bytes;
	return 0;
}

static int do_map_bar(struct uvshim_dev *d, const struct uvshim_map_bar_req *r,
		      struct uvshim_map_bar_rep *o)
{
	int rc = uvshim_bar_window_check(&d->info, r->bar, r->cache, r->offset, r->length);
	if (rc)
		return rc;
	return uvshim_window_declare(d->win, UVSHIM_MAX_WINDOWS, r, o);
}

static int fill_pin_rep(const struct uvshim_dev *d, uint64_t handle, uint32_t first,
			struct uvshim_pin_rep *o)
{
	const struct uvshim_pin_entry *e;
	int rc = uvshim_pins_lookup(&d->pins, handle, UVSHIM_PIN_USER, &e, NULL);
	if (rc)
		return rc;
	if (first >= e->nseg)
		return -UVSHIM_ERANGE;
	uint32_t n = e->nseg - first;
	if (n > UVSHIM_MAX_SEGS_PER_REPLY)
		n = UVSHIM_MAX_SEGS_PER_REPLY;
	o->handle = handle;
	o->length = e->len;
	o->nseg_total = e->nseg;
	o->first_seg = first;
	o->nseg = n;
	for (uint32_t i = 0; i < n; i++)
		o->seg[i] = e->seg[first + i];
	return 0;
}

int uvshim_pin_wire(struct uvshim_dev *d, const void *guest, uint64_t va, uint64_t len, uint32_t flags,
		    uint32_t *slot_out)
{
	uint32_t slot;
	int rc = uvshim_pins_reserve(&d->pins, UVSHIM_PIN_USER, va, len, flags, &slot);
	if (rc)
		return rc;
	const struct uvshim_seg *seg = NULL;
	uint32_t nseg = 0;
	void *cookie = NULL;
	rc = guest ? d->plat.pin_for(d->plat.ctx, guest, va, len, flags, &seg, &nseg, &cookie)
		   : d->plat.pin(d->plat.ctx, va, len, flags, &seg, &nseg, &cookie);
	if (rc) {
		uvshim_pins_abort(&d->pins, slot);
		return rc < 0 ? rc : -UVSHIM_EIO;
	}
	rc = uvshim_pins_commit(&d->pins, slot, seg, nseg, cookie);
	if (rc) {
		d->plat.unpin(d->plat.ctx, cookie);
		uvshim_pins_abort(&d->pins, slot);
		return rc;
	}
	*slot_out = slot;
	return 0;
}

static int do_pin(struct uvshim_dev *d, const struct uvshim_pin_req *r, struct uvshim_pin_rep *o)
{
	uint32_t slot;
	int rc = uvshim_pin_wire(d, NULL, r->va, r->length, r->flags, &slot);
	if (rc)
		return rc;
	return fill_pin_rep(d, uvshim_pins_handle(&d->pins, slot), 0, o);
}

static void unpin_cb(void *ctx, const struct uvshim_pin_entry *e)
{
	struct uvshim_dev *d = (struct uvshim_dev *)ctx;
	d->plat.unpin(d->plat.ctx, e->cookie);
}

static void dma_free_cb(void *ctx, const struct uvshim_pin_entry *e)
{
	struct uvshim_dev *d = (struct uvshim_dev *)ctx;
	d->plat.dma_free(d->plat.ctx, e->cookie);
}

static int do_dma_alloc(struct uvshim_dev *d, const struct uvshim_dma_alloc_req *r,
			struct uvshim_dma_alloc_rep *o)
{
	uint64_t page = d->info.page_size;
	uint64_t len = round_up(r->length, page); /* length <= 1 GiB: no overflow */
	/* The mapper hands out whole pages, so every buffer is at least page aligned. */
	uint64_t align = r->align < page ? page : r->align;
	uint32_t slot;
	int rc = uvshim_pins_reserve(&d->pins, UVSHIM_PIN_DMA, 0, len, 0, &slot);
	if (rc)
		return rc;
	uint64_t iova = 0;
	void *cookie = NULL;
	rc = d->plat.dma_alloc(d->plat.ctx, len, align, &iova, &cookie);
	if (rc) {
		uvshim_pins_abort(&d->pins, slot);
		return rc < 0 ? rc : -UVSHIM_EIO;
	}
	struct uvshim_seg seg = {iova, len};
	rc = (iova & (align - 1)) ? -UVSHIM_EIO : uvshim_pins_commit(&d->pins, slot, &seg, 1, cookie);
	if (rc) {
		d->plat.dma_free(d->plat.ctx, cookie);
		uvshim_pins_abort(&d->pins, slot);
		return rc;
	}
	o->handle = uvshim_pins_handle(&d->pins, slot);
	o->iova = iova;
	o->length = len;
	o->memory_type = UVSHIM_MEMTYPE(UVSHIM_MEMTYPE_DMA, slot);
	return 0;
}

static int do_irq(struct uvshim_dev *d, const struct uvshim_irq_req *r, bool arm)
{
	if (r->vector >= d->info.num_vectors)
		return -UVSHIM_ENOENT;
	struct uvshim_vector *v = &d->vec[r->vector];
	if (!arm && !v->armed)
		return -UVSHIM_ENOENT;
	/* Re-arming an armed vector replaces the port and cookie (the kext keeps the
	 * newest async reference). */
	int rc = d->plat.irq_arm(d->plat.ctx, r->vector, arm);
	if (rc)
		return rc < 0 ? rc : -UVSHIM_EIO;
	v->armed = arm;
	v->cookie = arm ? r->cookie : 0;
	return 0;
}

static int do_reset(struct uvshim_dev *d)
{
	/* Quiet the device before the reset and give it back its bus mastering after:
	 * the owner keeps its pins and will program the device again. */
	int rc = d->plat.bus_master(d->plat.ctx, false);
	if (rc == 0)
		rc = d->plat.reset_function(d->plat.ctx);
	int rc2 = d->plat.bus_master(d->plat.ctx, true);
	if (rc == 0)
		rc = rc2;
	return rc == 0 ? 0 : (rc < 0 ? rc : -UVSHIM_EIO);
}

int uvshim_call_begin(const struct uvshim_dev *d, uint32_t selector, const void *in, size_t in_len,
		      void *out, size_t out_len, union uvshim_req *req, union uvshim_rep *rep)
{
	int rc = uvshim_request_check(selector, in, in_len, out_len, d->info.page_size);
	if (rc)
		return rc;
	if (out_len && !out)
		return -UVSHIM_EINVAL;
	if (out_len)
		zero_bytes(out, out_len);
	if (d->gone)
		return -UVSHIM_ENODEV;
	zero_bytes(req, sizeof(*req));
	copy_bytes(req, in, in_len);
	zero_bytes(rep, out_len);
	return 0;
}

/* The owner's calls: while it holds the device, and after its HELLO. */
static int owner_admit(const struct uvshim_dev *d, const void *owner, uint32_t selector)
{
	if (d->state == UVSHIM_STATE_DYING || d->state == UVSHIM_STATE_RESETTING)
		return -UVSHIM_EBUSY;
	if (d->state != UVSHIM_STATE_OWNED || owner == NULL || owner != d->owner)
		return -UVSHIM_EPERM;
	if (selector != UVSHIM_SEL_HELLO && d->hello != UVSHIM_HELLO_OK)
		return uvshim_hello_status(d->hello);
	return 0;
}

int uvshim_dispatch(struct uvshim_dev *d, const void *owner, uint32_t selector,
		    const void *in, size_t in_len, void *out, size_t out_len)
{
	/* A guest's connection (guest.c) makes the first four calls below, on its own
	 * handshake and windows; uvshim_guest_admit refuses the others. */
	struct uvshim_guest *g = owner != NULL && owner != d->owner ? uvshim_guest_of(d, owner) : NULL;
	union uvshim_req req;
	union uvshim_rep rep;
	int rc = uvshim_call_begin(d, selector, in, in_len, out, out_len, &req, &rep);
	if (rc)
		return rc;
	rc = g ? uvshim_guest_admit(d, g, selector) : owner_admit(d, owner, selector);
	if (rc)
		return rc;

	switch (selector) {
	case UVSHIM_SEL_HELLO:
		/* A guest pins nothing itself: its limits (and vectors) are the owner's
		 * business, so its reply has only the common part. */
		rc = g ? uvshim_hello_answer(&g->hello, d->info.page_size, &req.hello, &rep.hello)
		       : do_hello(d, &req.hello, &rep.hello);
		/* The version is worth returning even with EVERSION. */
		copy_bytes(out, &rep, out_len);
		return rc;
	case UVSHIM_SEL_DEVICE_INFO:
		rep.info = d->info;
		break;
	case UVSHIM_SEL_MAP_BAR:
		rc = g ? uvshim_guest_map_bar(d, g, &req.map, &rep.map) : do_map_bar(d, &req.map, &rep.map);
		break;
	case UVSHIM_SEL_UNMAP_BAR:
		rc = g ? uvshim_guest_unmap_bar(d, g, req.unmap.memory_type)
		       : uvshim_window_forget(d->win, UVSHIM_MAX_WINDOWS, req.unmap.memory_type);
		break;
	case UVSHIM_SEL_PIN:
		rc = do_pin(d, &req.pin, &rep.pin);
		break;
	case UVSHIM_SEL_PIN_SEGS:
		rc = fill_pin_rep(d, req.segs.handle, req.segs.first_seg, &rep.pin);
		break;
	case UVSHIM_SEL_UNPIN:
		rc = uvshim_pins_release(&d->pins, req.handle.handle, UVSHIM_PIN_USER, unpin_cb, d);
		break;
	case UVSHIM_SEL_DMA_ALLOC:
		rc = do_dma_alloc(d, &req.dma, &rep.dma);
		break;
	case UVSHIM_SEL_DMA_FREE:
		rc = uvshim_pins_release(&d->pins, req.handle.handle, UVSHIM_PIN_DMA, dma_free_cb, d);
		break;
	case UVSHIM_SEL_IRQ_ARM:
		rc = do_irq(d, &req.irq, true);
		break;
	case UVSHIM_SEL_IRQ_DISARM:
		rc = do_irq(d, &req.irq, false);
		break;
	case UVSHIM_SEL_RESET:
		rc = do_reset(d);
		break;
	case UVSHIM_SEL_GRANT:
		rc = uvshim_grant(d, &req.grant);
		break;
	case UVSHIM_SEL_REVOKE:
		rc = uvshim_revoke(d, &req.grant);
		break;
	case UVSHIM_SEL_PIN_FOR: {
		uint32_t slot;
		rc = uvshim_pin_for(d, &req.pin_for, &slot);
		if (rc == 0)
			rc = fill_pin_rep(d, uvshim_pins_handle(&d->pins, slot), 0, &rep.pin);
		break;
	}
	default:
		return -UVSHIM_ENOSYS;
	}
	if (rc == 0 && out_len)
		copy_bytes(out, &rep, out_len);
	return rc;
}
