/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Firmware object tables: numbers, lookup, "in use" references, destroy-all.
 *
 * Each object type has a table of slots; an object's number is base + slot.  Storage
 * is one allocation: a header (number, references, destructor) followed by the
 * handler's own structure, whose pointer is what emu_obj_alloc/emu_obj_get return.
 * Counters objects_live/objects_created follow every change, so tests can prove that
 * teardown leaves nothing behind.
 */
#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>

#include "hw/emu/emu_dev.h"

struct emu_obj_hdr {
	uint32_t id;
	uint32_t type;
	int refs;
	emu_obj_dtor dtor;
	alignas(16) unsigned char data[];
};

#define HDR(obj) ((struct emu_obj_hdr *)((unsigned char *)(obj) - offsetof(struct emu_obj_hdr, data)))

/* Numbering and limits per type.  Bases follow what real firmware does where it
 * matters: UAR numbers start above the init segment (EMU_UAR_FIRST_INDEX), QP numbers
 * 0 and 1 are the special QPs, MKey indexes start at 1 (0 would be a null key). */
static const struct {
	const char *name;
	uint32_t base, max;
} emu_obj_defaults[EMU_OBJ_NTYPES] = {
	[EMU_OBJ_UAR] = { "UAR", EMU_UAR_FIRST_INDEX, 1024 },
	[EMU_OBJ_PD] = { "PD", 1, 1u << 16 },
	[EMU_OBJ_TD] = { "TD", 1, 1u << 16 },
	[EMU_OBJ_XRCD] = { "XRCD", 1, 1u << 16 },
	[EMU_OBJ_EQ] = { "EQ", 0, 256 },          /* eq_number is 8 bits */
	[EMU_OBJ_CQ] = { "CQ", 1, 1u << 16 },
	[EMU_OBJ_SRQ] = { "SRQ", 1, 1u << 16 },
	[EMU_OBJ_MKEY] = { "MKEY", 0x10, 1u << 20 },   /* keys (index << 8) above the special ones */
	[EMU_OBJ_QP] = { "QP", 0x100, 1u << 16 },
	[EMU_OBJ_Q_COUNTER] = { "Q_COUNTER", 1, 256 },
};

const char *emu_obj_type_name(enum emu_obj_type t)
{
	return (unsigned)t < EMU_OBJ_NTYPES ? emu_obj_defaults[t].name : "?";
}

void emu_objtab_init(struct emu_dev *d)
{
	for (unsigned t = 0; t < EMU_OBJ_NTYPES; t++) {
		d->obj[t].base = emu_obj_defaults[t].base;
		d->obj[t].max = emu_obj_defaults[t].max;
	}
}

/* Room for at least `want` slots (doubling from 16, at most tab->max). */
static int objtab_grow(struct emu_objtab *tab, uint32_t want)
{
	uint32_t n = tab->nslots ? tab->nslots : 16;
	struct emu_obj_hdr **s;

	while (n < want)
		n *= 2;
	if (n > tab->max)
		n = tab->max;
	if (n < want)
		return -ENOSPC;
	s = realloc(tab->slots, n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (uint32_t i = tab->nslots; i < n; i++)
		s[i] = NULL;
	tab->slots = s;
	tab->nslots = n;
	return 0;
}

void *emu_obj_alloc(struct emu_dev *d, enum emu_obj_type t, size_t size, emu_obj_dtor dtor, uint32_t *id)
{
	struct emu_objtab *tab;
	struct emu_obj_hdr *h;
	uint32_t slot;

	if ((unsigned)t >= EMU_OBJ_NTYPES)
		return NULL;
	tab = &d->obj[t];
	if (tab->force) {
		/* the number another device gave (engine.c): that slot, or nothing */
		tab->force = false;
		if (tab->force_id < tab->base || tab->force_id - tab->base >= tab->max)
			return NULL;
		slot = tab->force_id - tab->base;
		if (slot >= tab->nslots && objtab_grow(tab, slot + 1) < 0)
			return NULL;
		if (tab->slots[slot])
			return NULL;
	} else {
		for (slot = 0; slot < tab->nslots; slot++)
			if (!tab->slots[(tab->hint + slot) % tab->nslots])
				break;
		if (slot < tab->nslots) {
			slot = (tab->hint + slot) % tab->nslots;
		} else {
			/* full: grow, the new slot is the first one past the old end */
			if (tab->nslots >= tab->max || objtab_grow(tab, tab->nslots + 1) < 0)
				return NULL;
		}
	}
	h = calloc(1, sizeof(*h) + size);
	if (!h)
		return NULL;
	h->id = tab->base + slot;
	h->type = t;
	h->dtor = dtor;
	tab->slots[slot] = h;
	/* Next allocation starts after this one: numbers are not reused at once, as on
	 * hardware, so a stale number in a driver bug hits "unknown object". */
	tab->hint = slot + 1;
	d->ctr.objects_live[t]++;
	d->ctr.objects_created[t]++;
	if (id)
		*id = h->id;
	return h->data;
}

void *emu_obj_get(struct emu_dev *d, enum emu_obj_type t, uint32_t id)
{
	struct emu_objtab *tab;

	if ((unsigned)t >= EMU_OBJ_NTYPES)
		return NULL;
	tab = &d->obj[t];
	if (id < tab->base || id - tab->base >= tab->nslots || !tab->slots[id - tab->base])
		return NULL;
	return tab->slots[id - tab->base]->data;
}

uint32_t emu_obj_id(const void *obj)
{
	return HDR(obj)->id;
}

void emu_obj_ref(void *obj)
{
	HDR(obj)->refs++;
}

void emu_obj_unref(void *obj)
{
	if (HDR(obj)->refs > 0)
		HDR(obj)->refs--;
}

static void obj_release(struct emu_dev *d, struct emu_objtab *tab, uint32_t slot)
{
	struct emu_obj_hdr *h = tab->slots[slot];

	for (size_t a = 0; a < emu_nareas; a++)
		if (emu_areas[a]->obj_gone)
			emu_areas[a]->obj_gone(d, (enum emu_obj_type)h->type, h->data);
	if (h->dtor)
		h->dtor(d, h->data);
	tab->slots[slot] = NULL;
	d->ctr.objects_live[h->type]--;
	free(h);
}

int emu_obj_free(struct emu_dev *d, enum emu_obj_type t, uint32_t id)
{
	struct emu_objtab *tab;
	void *o = emu_obj_get(d, t, id);

	if (!o)
		return -ENOENT;
	if (HDR(o)->refs > 0)
		return -EBUSY;
	tab = &d->obj[t];
	obj_release(d, tab, id - tab->base);
	return 0;
}

void emu_obj_foreach(struct emu_dev *d, enum emu_obj_type t, void (*fn)(struct emu_dev *, void *, void *),
		     void *arg)
{
	struct emu_objtab *tab;

	if ((unsigned)t >= EMU_OBJ_NTYPES)
		return;
	tab = &d->obj[t];
	for (uint32_t s = 0; s < tab->nslots; s++)
		if (tab->slots[s])
			fn(d, tab->slots[s]->data, arg);
}

void emu_obj_destroy_all(struct emu_dev *d)
{
	for (unsigned t = EMU_OBJ_NTYPES; t-- > 0;) {
		struct emu_objtab *tab = &d->obj[t];

		for (uint32_t s = 0; s < tab->nslots; s++)
			if (tab->slots[s])
				obj_release(d, tab, s);
		tab->hint = 0;
	}
}
