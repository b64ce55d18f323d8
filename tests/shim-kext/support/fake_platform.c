/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The fake platform behind shim-kext/core in tests and the fuzzer (see the header). */
#include "tests/shim-kext/support/fake_platform.h"

#include <stdlib.h>
#include <string.h>

static void logev(struct fake *f, enum fake_event ev, uint64_t arg)
{
	if (f->nlog < FAKE_LOG_MAX)
		f->log[f->nlog++] = (struct fake_log){ev, f->dev.state, arg};
	if (f->hook)
		f->hook(f, ev);
}

static struct fake_pin *slot_new(struct fake *f)
{
	for (uint32_t i = 0; i < f->capacity && i < FAKE_MAX_LIVE; i++)
		if (!f->live[i].live)
			return &f->live[i];
	return NULL;
}

static int do_pin(struct fake *f, uint64_t va, uint64_t len, uint32_t flags,
		  const struct uvshim_seg **seg, uint32_t *nseg, void **cookie)
{
	uint64_t page = f->dev.info.page_size;
	(void)flags;
	if (f->fail_pin)
		return f->fail_pin;
	struct fake_pin *p = slot_new(f);
	if (!p)
		return -UVSHIM_ENOMEM;
	uint64_t pages = len / page;
	uint32_t n = f->fragment ? (uint32_t)(pages > UVSHIM_MAX_SEGS_PER_PIN + 1 ? UVSHIM_MAX_SEGS_PER_PIN + 1 : pages) : 1;
	p->seg = calloc(n + 1, sizeof(*p->seg));
	if (!p->seg)
		return -UVSHIM_ENOMEM;
	uint64_t base = f->next_iova;
	f->next_iova += len + page; /* a guard page between pins, like a real IOVA allocator */
	if (f->fragment && n == pages) {
		for (uint32_t i = 0; i < n; i++) /* descending: later pages at lower IOVAs */
			p->seg[i] = (struct uvshim_seg){base + (uint64_t)(n - 1 - i) * page, page};
	} else if (f->fragment) {
		/* more pages than the cap: n-1 single pages, then the rest */
		for (uint32_t i = 0; i + 1 < n; i++)
			p->seg[i] = (struct uvshim_seg){base + (uint64_t)i * page, page};
		p->seg[n - 1] = (struct uvshim_seg){base + (uint64_t)(n - 1) * page, len - (uint64_t)(n - 1) * page};
	} else {
		p->seg[0] = (struct uvshim_seg){base, len};
	}
	switch (f->bad) {
	case BAD_MISALIGNED: p->seg[0].iova += 0x100; break;
	case BAD_SHORT:
		if (p->seg[n - 1].len > page)
			p->seg[n - 1].len -= page;
		else
			n--; /* drop a one-page segment */
		break;
	case BAD_REUSE_IOVA: p->seg[0].iova = f->last_iova; break;
	case BAD_SELF_OVERLAP:
		if (n >= 2)
			p->seg[1].iova = p->seg[0].iova;
		break;
	case BAD_ZERO_SEGS: n = 0; break;
	case BAD_NONE: break;
	}
	f->last_iova = base;
	p->live = true;
	p->dma = false;
	p->va = va;
	p->len = len;
	p->nseg = n;
	f->live_pins++;
	*seg = p->seg;
	*nseg = n;
	*cookie = p;
	return 0;
}

/* A guest task's pages: pinned as the owner's would be, logged apart. */
static int p_pin_for(void *ctx, const void *guest, uint64_t va, uint64_t len, uint32_t flags,
		     const struct uvshim_seg **seg, uint32_t *nseg, void **cookie)
{
	struct fake *f = ctx;
	logev(f, EV_PIN_FOR, va);
	f->pin_for_guest = guest;
	return do_pin(f, va, len, flags, seg, nseg, cookie);
}

static void p_revoke(void *ctx, const void *guest, uint32_t memory_type)
{
	struct fake *f = ctx;
	(void)guest;
	logev(f, EV_REVOKE, memory_type);
	f->revoked++;
}

static int p_pin(void *ctx, uint64_t va, uint64_t len, uint32_t flags,
		 const struct uvshim_seg **seg, uint32_t *nseg, void **cookie)
{
	struct fake *f = ctx;
	logev(f, EV_PIN, va);
	return do_pin(f, va, len, flags, seg, nseg, cookie);
}

static void p_unpin(void *ctx, void *cookie)
{
	struct fake *f = ctx;
	struct fake_pin *p = cookie;
	logev(f, EV_UNPIN, p->va);
	if (!p->live || p->dma)
		abort(); /* the core unpinned something twice, or the wrong kind */
	free(p->seg);
	p->seg = NULL;
	p->live = false;
	f->live_pins--;
}

static int p_dma_alloc(void *ctx, uint64_t len, uint64_t align, uint64_t *iova, void **cookie)
{
	struct fake *f = ctx;
	logev(f, EV_DMA_ALLOC, len);
	if (f->fail_dma)
		return f->fail_dma;
	struct fake_pin *p = slot_new(f);
	if (!p)
		return -UVSHIM_ENOMEM;
	uint64_t base = (f->next_iova + align - 1) & ~(align - 1);
	f->next_iova = base + len + f->dev.info.page_size;
	if (f->bad == BAD_MISALIGNED)
		base += f->dev.info.page_size == align ? 0x100 : f->dev.info.page_size;
	if (f->bad == BAD_REUSE_IOVA)
		base = f->last_iova;
	f->last_iova = base;
	*p = (struct fake_pin){.live = true, .dma = true, .va = 0, .len = len, .nseg = 1};
	f->live_dma++;
	*iova = base;
	*cookie = p;
	return 0;
}

static void p_dma_free(void *ctx, void *cookie)
{
	struct fake *f = ctx;
	struct fake_pin *p = cookie;
	logev(f, EV_DMA_FREE, p->len);
	if (!p->live || !p->dma)
		abort();
	p->live = false;
	f->live_dma--;
}

static int p_bus_master(void *ctx, bool enable)
{
	struct fake *f = ctx;
	logev(f, enable ? EV_BM_ON : EV_BM_OFF, 0);
	int rc = enable ? f->fail_bm_on : f->fail_bm_off;
	if (rc == 0)
		f->bus_master_on = enable;
	return rc;
}

static int p_reset(void *ctx)
{
	struct fake *f = ctx;
	logev(f, EV_RESET, 0);
	if (f->fail_reset)
		return f->fail_reset;
	f->resets++;
	return 0;
}

static int p_irq_arm(void *ctx, uint32_t vector, bool arm)
{
	struct fake *f = ctx;
	logev(f, arm ? EV_IRQ_ARM : EV_IRQ_DISARM, vector);
	if (arm && f->fail_irq)
		return f->fail_irq;
	if (vector < 32) {
		if (arm)
			f->armed_mask_lo |= 1u << vector;
		else
			f->armed_mask_lo &= ~(1u << vector);
	}
	return 0;
}

int fake_init(struct fake *f, uint64_t page_size, uint32_t capacity, uint32_t max_pins,
	      uint64_t max_bytes)
{
	struct uvshim_pin_entry *storage = f->storage;
	uint32_t old_cap = f->capacity;
	/* pins a quarantined device kept are still "wired" here: let them go */
	for (uint32_t i = 0; i < old_cap && i < FAKE_MAX_LIVE; i++)
		if (f->live[i].live && !f->live[i].dma)
			free(f->live[i].seg);
	memset(&f->dev, 0, sizeof(f->dev));
	f->fragment = false;
	f->bad = BAD_NONE;
	f->fail_pin = f->fail_dma = f->fail_bm_off = f->fail_bm_on = f->fail_reset = f->fail_irq = 0;
	f->next_iova = 0x1000000000ull;
	f->last_iova = 0;
	f->live_pins = f->live_dma = 0;
	f->armed_mask_lo = 0;
	f->bus_master_on = true;
	f->resets = 0;
	f->pin_for_guest = NULL;
	f->revoked = 0;
	f->nlog = 0;
	f->hook = NULL;
	f->hook_rc = 0;
	if (!storage || old_cap < capacity) {
		free(storage);
		storage = calloc(capacity, sizeof(*storage));
		if (!storage)
			return -UVSHIM_ENOMEM;
	}
	f->storage = storage;
	f->capacity = capacity;
	memset(f->live, 0, sizeof(f->live[0]) * (capacity < FAKE_MAX_LIVE ? capacity : FAKE_MAX_LIVE));

	struct uvshim_info_rep info = {
		.vendor_id = 0x15b3, .device_id = 0x1017,
		.subsys_vendor_id = 0x15b3, .subsys_device_id = 0x0007,
		.bus = 3, .link_speed_gen = 3, .link_width = 8, .tunnelled = 1,
		.max_payload_bytes = 256, .page_size = (uint32_t)page_size, .num_vectors = 8,
		.bar0_len = 32ull << 20,
	};
	info.uar_offset = page_size > UVSHIM_INIT_SEG_END ? page_size : UVSHIM_INIT_SEG_END;
	info.uar_len = info.bar0_len - info.uar_offset;
	struct uvshim_config cfg = {.group_set = true, .group_id = 600,
				    .max_pins = max_pins ? max_pins : capacity,
				    .max_pinned_bytes = max_bytes};
	struct uvshim_platform plat = {
		.ctx = f, .pin = p_pin, .unpin = p_unpin, .dma_alloc = p_dma_alloc,
		.dma_free = p_dma_free, .bus_master = p_bus_master, .reset_function = p_reset,
		.irq_arm = p_irq_arm, .pin_for = p_pin_for, .revoke = p_revoke,
	};
	return uvshim_dev_init(&f->dev, &info, &cfg, &plat, storage, capacity);
}

void fake_fini(struct fake *f)
{
	for (uint32_t i = 0; i < f->capacity && i < FAKE_MAX_LIVE; i++)
		if (f->live[i].live && !f->live[i].dma)
			free(f->live[i].seg);
	free(f->storage);
	f->storage = NULL;
	f->capacity = 0;
}

static bool not_member(const void *ctx, uint32_t gid) { (void)ctx; (void)gid; return false; }

int fake_open_hello(struct fake *f)
{
	struct uvshim_cred root = {.uid = 0, .is_member = not_member};
	int rc = uvshim_owner_open(&f->dev, &root, &f->owner_a);
	if (rc)
		return rc;
	struct uvshim_hello_req h = {.abi_major = UVSHIM_ABI_MAJOR, .abi_minor = UVSHIM_ABI_MINOR};
	struct uvshim_hello_rep r;
	return fake_call(f, &f->owner_a, UVSHIM_SEL_HELLO, &h, &r);
}

int fake_guest_open_hello(struct fake *f, const void *guest, uint32_t pid)
{
	struct uvshim_cred root = {.uid = 0, .is_member = not_member};
	int rc = uvshim_guest_open(&f->dev, &root, guest, pid);
	if (rc)
		return rc;
	struct uvshim_hello_req h = {.abi_major = UVSHIM_ABI_MAJOR, .abi_minor = UVSHIM_ABI_MINOR};
	struct uvshim_hello_rep r;
	return fake_call(f, guest, UVSHIM_SEL_HELLO, &h, &r);
}

int fake_call(struct fake *f, const void *owner, uint32_t sel, const void *req, void *rep)
{
	size_t in = 0, out = 0;
	if (uvshim_request_sizes(sel, &in, &out))
		return -UVSHIM_ENOSYS;
	return uvshim_dispatch(&f->dev, owner, sel, req, in, rep, out);
}

int fake_pin(struct fake *f, uint64_t va, uint64_t len, uint32_t flags, struct uvshim_pin_rep *rep)
{
	struct uvshim_pin_req r = {.va = va, .length = len, .flags = flags};
	struct uvshim_pin_rep local;
	return fake_call(f, &f->owner_a, UVSHIM_SEL_PIN, &r, rep ? rep : &local);
}

int fake_dma(struct fake *f, uint64_t len, uint64_t align, struct uvshim_dma_alloc_rep *rep)
{
	struct uvshim_dma_alloc_req r = {.length = len, .align = align};
	struct uvshim_dma_alloc_rep local;
	return fake_call(f, &f->owner_a, UVSHIM_SEL_DMA_ALLOC, &r, rep ? rep : &local);
}

int fake_find(const struct fake *f, enum fake_event ev, uint32_t from)
{
	for (uint32_t i = from; i < f->nlog; i++)
		if (f->log[i].ev == ev)
			return (int)i;
	return -1;
}

uint32_t fake_count(const struct fake *f, enum fake_event ev)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->nlog; i++)
		n += f->log[i].ev == ev;
	return n;
}

void fake_clear_log(struct fake *f)
{
	f->nlog = 0;
}
