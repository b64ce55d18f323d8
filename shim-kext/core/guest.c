/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Guests: the owner shares its function with client processes, by consent.
 *
 * A device daemon (tools/uvd) owns the function; each of its clients runs its own data
 * path and needs to store into its own UAR page (PRM "UAR": doorbells, BlueFlame) and
 * to have its registered memory wired for the device.  The owner decides who gets
 * what; the kext enforces it:
 *
 *   GRANT(pid, uar_index)   the owner lets pid map one host page of the UAR region
 *   guest open              pid opens its own connection (UVSHIM_CLIENT_TYPE_GUEST)
 *   guest MAP_BAR           windows inside pages granted to its pid only, with the
 *                           cache rules of window.c (write-combining only in the UAR
 *                           region, never over the init segment)
 *   PIN_FOR(pid, va, len)   the owner wires a guest task's pages; the entry is the
 *                           owner's, charged to its limits, released by its UNPIN or
 *                           its death like any pin
 *   REVOKE(pid, uar_index)  the owner takes a page back: the guest's windows that
 *                           touch it are unmapped (platform revoke) and forgotten
 *   owner death             in DYING, before bus mastering goes off and the function
 *                           is reset: every guest window is revoked, every grant
 *                           forgotten, every guest orphaned (EPERM until it closes),
 *                           so no guest store reaches a function being reset or
 *                           handed to the next owner.
 *
 * The kernel's equivalent on Linux is the mlx5 driver handing a process its own UAR
 * page through mmap of the uverbs device (drivers/infiniband/hw/mlx5/main.c,
 * mlx5_ib_mmap, uar_mmap) while the driver keeps the function.
 */
#include "shim-kext/core/uvshim_core.h"

static void zero_bytes(void *p, size_t n)
{
	unsigned char *b = (unsigned char *)p;
	for (size_t i = 0; i < n; i++)
		b[i] = 0;
}

static struct uvshim_guest *find_guest(const struct uvshim_dev *d, const void *token)
{
	if (!token)
		return NULL;
	for (uint32_t i = 0; i < UVSHIM_MAX_GUESTS; i++)
		if (d->guest[i].token == token)
			return (struct uvshim_guest *)&d->guest[i];
	return NULL;
}

/* The live (not orphaned) guest of a process; the newest when it opened several. */
static struct uvshim_guest *guest_of_pid(struct uvshim_dev *d, uint32_t pid)
{
	struct uvshim_guest *g = NULL;
	for (uint32_t i = 0; i < UVSHIM_MAX_GUESTS; i++)
		if (d->guest[i].token && !d->guest[i].orphan && d->guest[i].pid == pid)
			g = &d->guest[i];
	return g;
}

bool uvshim_is_guest(const struct uvshim_dev *d, const void *token)
{
	return find_guest(d, token) != NULL;
}

static uint64_t uar_pages(const struct uvshim_dev *d)
{
	return d->info.uar_len / d->info.page_size;
}

static bool granted(const struct uvshim_dev *d, uint32_t pid, uint64_t index)
{
	for (uint32_t i = 0; i < UVSHIM_MAX_GRANTS; i++)
		if (d->grant[i].used && d->grant[i].pid == pid && d->grant[i].uar_index == index)
			return true;
	return false;
}

/* Is every host page of [offset, offset + length) granted to pid? */
static bool window_granted(const struct uvshim_dev *d, uint32_t pid, uint64_t offset, uint64_t length)
{
	uint64_t page = d->info.page_size;
	if (offset < d->info.uar_offset)
		return false;
	for (uint64_t o = offset; o < offset + length; o += page)
		if (!granted(d, pid, (o - d->info.uar_offset) / page))
			return false;
	return true;
}

static void revoke_window(struct uvshim_dev *d, struct uvshim_guest *g, uint32_t w);

int uvshim_guest_open(struct uvshim_dev *d, const struct uvshim_cred *cred, const void *guest,
		      uint32_t pid)
{
	if (!guest || pid == 0)
		return -UVSHIM_EINVAL;
	int rc = uvshim_open_check(d, cred);
	if (rc)
		return rc;
	/* Without a way to take mappings back, consent could not be withdrawn. */
	if (!d->plat.revoke)
		return -UVSHIM_ENOSYS;
	if (d->state == UVSHIM_STATE_DYING || d->state == UVSHIM_STATE_RESETTING)
		return -UVSHIM_EBUSY;
	if (d->state != UVSHIM_STATE_OWNED || guest == d->owner || find_guest(d, guest))
		return -UVSHIM_EPERM;
	for (uint32_t i = 0; i < UVSHIM_MAX_GUESTS; i++) {
		struct uvshim_guest *g = &d->guest[i];
		if (g->token)
			continue;
		zero_bytes(g, sizeof(*g));
		g->token = guest;
		g->pid = pid;
		g->hello = UVSHIM_HELLO_NONE;
		return 0;
	}
	return -UVSHIM_ENOSPC;
}

int uvshim_guest_release(struct uvshim_dev *d, const void *guest)
{
	struct uvshim_guest *g = find_guest(d, guest);
	if (!g)
		return -UVSHIM_EPERM;
	/* Its mappings go with its connection: once the connection is gone, no REVOKE
	 * could find them any more. */
	for (uint32_t w = 0; w < UVSHIM_MAX_GUEST_WINDOWS; w++)
		revoke_window(d, g, w);
	zero_bytes(g, sizeof(*g));
	return 0;
}

static void revoke_window(struct uvshim_dev *d, struct uvshim_guest *g, uint32_t w)
{
	if (!g->win[w].used)
		return;
	d->plat.revoke(d->plat.ctx, g->token, UVSHIM_MEMTYPE(UVSHIM_MEMTYPE_WINDOW, w));
	g->win[w].used = false;
}

void uvshim_guests_revoke_all(struct uvshim_dev *d)
{
	for (uint32_t i = 0; i < UVSHIM_MAX_GUESTS; i++) {
		struct uvshim_guest *g = &d->guest[i];
		if (!g->token)
			continue;
		for (uint32_t w = 0; w < UVSHIM_MAX_GUEST_WINDOWS; w++)
			revoke_window(d, g, w);
		g->orphan = true;
	}
	for (uint32_t i = 0; i < UVSHIM_MAX_GRANTS; i++)
		d->grant[i].used = false;
}

int uvshim_grant(struct uvshim_dev *d, const struct uvshim_grant_req *r)
{
	if (r->uar_index >= uar_pages(d))
		return -UVSHIM_ERANGE;
	struct uvshim_grant *free_slot = NULL;
	for (uint32_t i = 0; i < UVSHIM_MAX_GRANTS; i++) {
		struct uvshim_grant *x = &d->grant[i];
		if (!x->used) {
			if (!free_slot)
				free_slot = x;
			continue;
		}
		if (x->uar_index != r->uar_index)
			continue;
		/* A page is one process's: another's doorbells would ring its queues. */
		return x->pid == r->pid ? 0 : -UVSHIM_EBUSY;
	}
	if (!free_slot)
		return -UVSHIM_ENOSPC;
	free_slot->used = true;
	free_slot->pid = r->pid;
	free_slot->uar_index = r->uar_index;
	return 0;
}

int uvshim_revoke(struct uvshim_dev *d, const struct uvshim_grant_req *r)
{
	struct uvshim_grant *x = NULL;
	for (uint32_t i = 0; i < UVSHIM_MAX_GRANTS && !x; i++)
		if (d->grant[i].used && d->grant[i].pid == r->pid && d->grant[i].uar_index == r->uar_index)
			x = &d->grant[i];
	if (!x)
		return -UVSHIM_ENOENT;
	x->used = false;
	/* Every window of that process that touches the page goes, mapped or not. */
	uint64_t page = d->info.page_size;
	uint64_t lo = d->info.uar_offset + (uint64_t)r->uar_index * page;
	for (uint32_t i = 0; i < UVSHIM_MAX_GUESTS; i++) {
		struct uvshim_guest *g = &d->guest[i];
		if (!g->token || g->pid != r->pid)
			continue;
		for (uint32_t w = 0; w < UVSHIM_MAX_GUEST_WINDOWS; w++)
			if (g->win[w].used && g->win[w].offset < lo + page &&
			    lo < g->win[w].offset + g->win[w].length)
				revoke_window(d, g, w);
	}
	return 0;
}

int uvshim_pin_for(struct uvshim_dev *d, const struct uvshim_pin_for_req *r, uint32_t *slot_out)
{
	if (!d->plat.pin_for)
		return -UVSHIM_ENOSYS;
	struct uvshim_guest *g = guest_of_pid(d, r->pid);
	if (!g)
		return -UVSHIM_ENOENT;
	return uvshim_pin_wire(d, g->token, r->va, r->length, r->flags, slot_out);
}

int uvshim_guest_map_bar(struct uvshim_dev *d, struct uvshim_guest *g, const struct uvshim_map_bar_req *r,
			 struct uvshim_map_bar_rep *o)
{
	int rc = uvshim_bar_window_check(&d->info, r->bar, r->cache, r->offset, r->length);
	if (rc)
		return rc;
	if (!window_granted(d, g->pid, r->offset, r->length))
		return -UVSHIM_EPERM;
	return uvshim_window_declare(g->win, UVSHIM_MAX_GUEST_WINDOWS, r, o);
}

struct uvshim_guest *uvshim_guest_of(const struct uvshim_dev *d, const void *token)
{
	return find_guest(d, token);
}

int uvshim_guest_admit(const struct uvshim_dev *d, const struct uvshim_guest *g, uint32_t selector)
{
	if (g->orphan || d->state != UVSHIM_STATE_OWNED)
		return -UVSHIM_EPERM;
	/* What a guest may ask: its handshake, the device's description, its windows. */
	if (selector != UVSHIM_SEL_HELLO && selector != UVSHIM_SEL_DEVICE_INFO &&
	    selector != UVSHIM_SEL_MAP_BAR && selector != UVSHIM_SEL_UNMAP_BAR)
		return -UVSHIM_EPERM;
	if (selector != UVSHIM_SEL_HELLO && g->hello != UVSHIM_HELLO_OK)
		return uvshim_hello_status(g->hello);
	return 0;
}

int uvshim_guest_memory_for_type(const struct uvshim_dev *d, const void *guest,
				 uint32_t memory_type, struct uvshim_memory *out)
{
	if (d->gone)
		return -UVSHIM_ENODEV;
	const struct uvshim_guest *g = find_guest(d, guest);
	if (!g || g->orphan || d->state != UVSHIM_STATE_OWNED)
		return -UVSHIM_EPERM;
	int rc = uvshim_hello_status(g->hello);
	if (rc)
		return rc;
	zero_bytes(out, sizeof(*out));
	if ((memory_type >> UVSHIM_MEMTYPE_KIND_SHIFT) != UVSHIM_MEMTYPE_WINDOW)
		return -UVSHIM_EPERM;   /* driver DMA memory is the owner's */
	rc = uvshim_window_memory(g->win, UVSHIM_MAX_GUEST_WINDOWS, memory_type, out);
	/* Checked again here: a REVOKE may have come between MAP_BAR and the mapping. */
	if (rc == 0 && !window_granted(d, g->pid, out->offset, out->length)) {
		zero_bytes(out, sizeof(*out));
		rc = -UVSHIM_EPERM;
	}
	return rc;
}

/* A guest's UNMAP_BAR.  Its window may already be mapped in its task (clientMemoryForType
 * came between MAP_BAR and now); forgetting the slot alone would leave that mapping live
 * with nothing to find it by, so neither REVOKE nor the owner's death could take it back.
 * The mapping goes now (platform revoke), then the slot.  The owner's own UNMAP_BAR stays
 * a forget: its mappings go with its death (owner.c). */
int uvshim_guest_unmap_bar(struct uvshim_dev *d, struct uvshim_guest *g, uint32_t memory_type)
{
	uint32_t slot = memory_type & UVSHIM_MEMTYPE_INDEX_MASK;
	if (slot >= UVSHIM_MAX_GUEST_WINDOWS || !g->win[slot].used)
		return -UVSHIM_ENOENT;
	revoke_window(d, g, slot);
	return 0;
}
