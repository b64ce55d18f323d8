/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The pin table: every range of memory the device may reach through the IOMMU on
 * behalf of one owner, user pins and driver DMA buffers alike.
 *
 * Rules, and why:
 *  - limits are taken at reserve time, before the platform wires anything, so a
 *    refused request costs no kernel work;
 *  - user VAs may overlap (two memory regions over one buffer are ordinary verbs
 *    usage), but IOVAs may not: lookup by IOVA must name exactly one pin, and two pins
 *    sharing an IOVA would mean the mapper handed out a live address twice;
 *  - everything is page aligned: the DART (16 KiB pages on Apple Silicon) and VT-d map
 *    whole pages, so a sub-page pin would silently expose its neighbours;
 *  - handles carry a generation, so a stale handle from a freed slot is refused
 *    instead of unpinning someone else's memory.
 */
#include "shim-kext/core/uvshim_core.h"

#define HANDLE_SLOT_MASK 0xffffffffull

static bool aligned(uint64_t v, uint64_t a) { return (v & (a - 1)) == 0; }

static void entry_clear(struct uvshim_pin_entry *e)
{
	uint32_t gen = e->gen;
	struct uvshim_pin_entry z = {0};
	*e = z;
	e->gen = gen;
}

int uvshim_pins_init(struct uvshim_pins *t, struct uvshim_pin_entry *storage, uint32_t capacity,
		     uint32_t max_pins, uint64_t max_bytes, uint64_t page_size)
{
	if (!t || !storage || capacity == 0 || capacity > UVSHIM_MAX_PINS_HARD)
		return -UVSHIM_EINVAL;
	if (max_pins == 0 || max_pins > capacity || max_bytes == 0)
		return -UVSHIM_EINVAL;
	if (!uvshim_is_pow2(page_size) || page_size < 4096)
		return -UVSHIM_EINVAL;
	t->e = storage;
	t->capacity = capacity;
	t->max_pins = max_pins;
	t->max_bytes = max_bytes;
	t->page_size = page_size;
	t->count = 0;
	t->next = 0;
	t->bytes = 0;
	for (uint32_t i = 0; i < capacity; i++) {
		entry_clear(&storage[i]);
		storage[i].gen = 1;
	}
	return 0;
}

int uvshim_pins_reserve(struct uvshim_pins *t, enum uvshim_pin_kind kind, uint64_t va,
			uint64_t len, uint32_t flags, uint32_t *slot)
{
	if (kind != UVSHIM_PIN_USER && kind != UVSHIM_PIN_DMA)
		return -UVSHIM_EINVAL;
	if (len == 0 || !aligned(len, t->page_size))
		return -UVSHIM_EINVAL;
	if (kind == UVSHIM_PIN_USER) {
		if (!aligned(va, t->page_size))
			return -UVSHIM_EINVAL;
		if ((flags & ~UVSHIM_PIN_FLAGS_ALL) || !(flags & UVSHIM_PIN_FLAGS_ALL))
			return -UVSHIM_EINVAL;
		if (len > UVSHIM_MAX_PIN_BYTES)
			return -UVSHIM_EINVAL;
		/* The NULL page is never user memory worth pinning; above the limit is the
		 * kernel or a non-canonical address. */
		if (va == 0 || va >= UVSHIM_USER_VA_LIMIT || len > UVSHIM_USER_VA_LIMIT - va)
			return -UVSHIM_EFAULT;
	} else {
		if (va != 0 || flags != 0 || len > UVSHIM_MAX_DMA_BYTES)
			return -UVSHIM_EINVAL;
	}
	if (t->count >= t->max_pins)
		return -UVSHIM_ENOSPC;
	if (len > t->max_bytes - t->bytes)
		return -UVSHIM_EPINLIMIT;

	uint32_t n = t->max_pins;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = (t->next + k) % n;
		struct uvshim_pin_entry *e = &t->e[i];
		if (e->kind != UVSHIM_PIN_FREE)
			continue;
		entry_clear(e);
		e->kind = UVSHIM_PIN_RESERVED;
		e->reserved_kind = (uint8_t)kind;
		e->va = va;
		e->len = len;
		e->flags = flags;
		t->count++;
		t->bytes += len;
		t->next = (i + 1) % n;
		*slot = i;
		return 0;
	}
	return -UVSHIM_ENOSPC; /* count < max_pins makes this unreachable */
}

static bool ranges_overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

/* Does seg[0..nseg) share an IOVA with the committed entry o? */
static bool overlaps_entry(const struct uvshim_pin_entry *o, const struct uvshim_seg *seg,
			   uint32_t nseg, uint64_t lo, uint64_t hi)
{
	if (!(lo < o->iova_hi && o->iova_lo < hi))
		return false;
	for (uint32_t i = 0; i < nseg; i++)
		for (uint32_t j = 0; j < o->nseg; j++)
			if (ranges_overlap(seg[i].iova, seg[i].len, o->seg[j].iova, o->seg[j].len))
				return true;
	return false;
}

int uvshim_pins_commit(struct uvshim_pins *t, uint32_t slot, const struct uvshim_seg *seg,
		       uint32_t nseg, void *cookie)
{
	if (slot >= t->max_pins || t->e[slot].kind != UVSHIM_PIN_RESERVED)
		return -UVSHIM_EINVAL;
	struct uvshim_pin_entry *e = &t->e[slot];
	if (!seg || nseg == 0 || nseg > UVSHIM_MAX_SEGS_PER_PIN)
		return -UVSHIM_EIO;
	if (e->reserved_kind == UVSHIM_PIN_DMA && nseg != 1)
		return -UVSHIM_EIO;

	/* What the platform returned is checked like input: a mapper bug must not turn
	 * into a device writing where nobody expects. */
	uint64_t total = 0, lo = UINT64_MAX, hi = 0;
	for (uint32_t i = 0; i < nseg; i++) {
		uint64_t a = seg[i].iova, l = seg[i].len;
		if (l == 0 || !aligned(a, t->page_size) || !aligned(l, t->page_size))
			return -UVSHIM_EIO;
		if (a > UINT64_MAX - l)
			return -UVSHIM_EIO;
		if (l > e->len - total)
			return -UVSHIM_EIO;
		total += l;
		if (a < lo)
			lo = a;
		if (a + l > hi)
			hi = a + l;
		for (uint32_t j = 0; j < i; j++)
			if (ranges_overlap(a, l, seg[j].iova, seg[j].len))
				return -UVSHIM_EIO;
	}
	if (total != e->len)
		return -UVSHIM_EIO;
	for (uint32_t k = 0; k < t->max_pins; k++) {
		const struct uvshim_pin_entry *o = &t->e[k];
		if (k == slot || (o->kind != UVSHIM_PIN_USER && o->kind != UVSHIM_PIN_DMA))
			continue;
		if (overlaps_entry(o, seg, nseg, lo, hi))
			return -UVSHIM_EEXIST;
	}

	if (e->reserved_kind == UVSHIM_PIN_DMA) {
		e->one = seg[0];
		e->seg = &e->one;
	} else {
		e->seg = seg;
	}
	e->nseg = nseg;
	e->cookie = cookie;
	e->iova_lo = lo;
	e->iova_hi = hi;
	e->kind = e->reserved_kind;
	return 0;
}

static void entry_free(struct uvshim_pins *t, struct uvshim_pin_entry *e)
{
	t->count--;
	t->bytes -= e->len;
	entry_clear(e);
	e->gen++;
	if (e->gen == 0)
		e->gen = 1;
}

void uvshim_pins_abort(struct uvshim_pins *t, uint32_t slot)
{
	if (slot < t->max_pins && t->e[slot].kind == UVSHIM_PIN_RESERVED)
		entry_free(t, &t->e[slot]);
}

uint64_t uvshim_pins_handle(const struct uvshim_pins *t, uint32_t slot)
{
	return ((uint64_t)t->e[slot].gen << 32) | slot;
}

int uvshim_pins_lookup(const struct uvshim_pins *t, uint64_t handle, enum uvshim_pin_kind kind,
		       const struct uvshim_pin_entry **out, uint32_t *slot)
{
	uint64_t s = handle & HANDLE_SLOT_MASK;
	uint32_t gen = (uint32_t)(handle >> 32);
	if (s >= t->max_pins)
		return -UVSHIM_ENOENT;
	const struct uvshim_pin_entry *e = &t->e[s];
	if (e->kind != kind || e->gen != gen)
		return -UVSHIM_ENOENT;
	if (out)
		*out = e;
	if (slot)
		*slot = (uint32_t)s;
	return 0;
}

int uvshim_pins_find_iova(const struct uvshim_pins *t, uint64_t iova, uint64_t *handle,
			  uint64_t *offset)
{
	for (uint32_t k = 0; k < t->max_pins; k++) {
		const struct uvshim_pin_entry *e = &t->e[k];
		if (e->kind != UVSHIM_PIN_USER && e->kind != UVSHIM_PIN_DMA)
			continue;
		if (iova < e->iova_lo || iova >= e->iova_hi)
			continue;
		uint64_t off = 0;
		for (uint32_t i = 0; i < e->nseg; i++) {
			if (iova >= e->seg[i].iova && iova - e->seg[i].iova < e->seg[i].len) {
				if (handle)
					*handle = uvshim_pins_handle(t, k);
				if (offset)
					*offset = off + (iova - e->seg[i].iova);
				return 0;
			}
			off += e->seg[i].len;
		}
	}
	return -UVSHIM_ENOENT;
}

int uvshim_pins_release(struct uvshim_pins *t, uint64_t handle, enum uvshim_pin_kind kind,
			uvshim_release_fn fn, void *ctx)
{
	uint32_t slot;
	int rc = uvshim_pins_lookup(t, handle, kind, NULL, &slot);
	if (rc)
		return rc;
	if (fn)
		fn(ctx, &t->e[slot]);
	entry_free(t, &t->e[slot]);
	return 0;
}

uint32_t uvshim_pins_release_all(struct uvshim_pins *t, uvshim_release_fn fn, void *ctx)
{
	uint32_t n = 0;
	for (uint32_t k = 0; k < t->max_pins; k++) {
		struct uvshim_pin_entry *e = &t->e[k];
		if (e->kind == UVSHIM_PIN_FREE)
			continue;
		if (e->kind != UVSHIM_PIN_RESERVED) {
			if (fn)
				fn(ctx, e);
			n++;
		}
		entry_free(t, e);
	}
	t->next = 0;
	return n;
}
