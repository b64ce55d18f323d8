/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A device daemon's client that maps its own UAR pages (hw/shim/uvd.c).
 *
 * When the daemon's device is the kext and the daemon granted this process the host
 * page of a UAR page it allocated (tools/uvd/share.c, ALLOC_UAR's reply field
 * granted_uar), the client opens the function as a guest (shim_kext_guest_open,
 * hw/shim/kext_guest.h) and copies each store the driver makes into that UAR page of
 * its private BAR proxy into the mapped page: the doorbell reaches the device with no
 * hop through the daemon.  On any other outcome the store goes through the doorbell
 * ring, as before (docs/architecture.md, "Several processes: uvd").  The decision is a
 * plain function of what the daemon said and whether the page opened, so it is tested
 * on any system (tests/shim/test_uvd_guest.c); opening is the caller's.
 */
#ifndef UVERBS_HW_SHIM_UVD_GUEST_H
#define UVERBS_HW_SHIM_UVD_GUEST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hw/platform/wc_flush.h"
#include "hw/shim/shim.h"

/* A host page of the device's UAR region that this process maps itself. */
struct uvd_guest_page {
	uint64_t bar_off;            /* BAR0 offset of the page */
	size_t len;                  /* bytes, a host page */
	volatile uint8_t *va;        /* our mapping of it */
	void *handle;                /* the opener's, for close */
	/* the device's BAR hook after a store into the page (a software device behind the
	 * page: the IOKit stand-in on Linux), NULL on a Mac */
	const struct shim_mmio_hook *hook;
};

/* Opens kext function fn - 1 as a guest and maps the granted host page holding BAR0
 * offset bar_off (shim_kext_guest_open's contract); 0 or -errno with the reason in err. */
struct uvd_guest_opener {
	int (*open)(void *ctx, unsigned fn, uint64_t bar_off, void **handle, volatile void **va, size_t *len,
		    char *err, size_t errlen);
	void (*close)(void *ctx, void *handle);
	void *ctx;
	/* optional: the hook stores into the opened page need (uvd_guest_page.hook) */
	const struct shim_mmio_hook *(*hook)(void *ctx, void *handle);
};

/* The opener a client uses: hw/shim/kext_guest.h's shim_kext_guest_open/close (on
 * Linux and in builds without kext.c, kext_guest_none.c: -EOPNOTSUPP). */
extern const struct uvd_guest_opener uvd_guest_kext_opener;

/* Where the stores into UAR page `uar` (BAR0 offset uar * uar_page_bytes) go:
 *  kext_fn      the HELLO reply's field: 1 + the daemon's kext function, 0 for another
 *               device (or a daemon that predates it);
 *  granted_uar  the ALLOC_UAR reply's field: 1 + the UAR index whose host page the
 *               daemon granted to this process, else 0.
 * Returns 1 with *out filled (the page is mapped: store into it), or 0 with the reason
 * in why (stores go through the doorbell ring): not a kext, not granted, the open
 * failed, or it mapped a page that does not hold the UAR page. */
int uvd_guest_choose(uint32_t kext_fn, uint32_t granted_uar, uint32_t uar, uint64_t uar_page_bytes,
		     const struct uvd_guest_opener *op, struct uvd_guest_page *out, char *why, size_t whylen);

/* The mapped page of pages[0..n) holding [off, off+size), the newest first: a host
 * page revoked and granted again is mapped again, after the dead mapping; or NULL. */
static inline struct uvd_guest_page *uvd_guest_find(struct uvd_guest_page *pages, unsigned n, uint64_t off,
						    unsigned size)
{
	for (unsigned i = n; i-- > 0;)
		if (off >= pages[i].bar_off && off + size <= pages[i].bar_off + pages[i].len)
			return &pages[i];
	return NULL;
}

/* The store the driver just made at src (its BAR proxy) into the mapped page, in 8-byte
 * stores where alignment allows, as a doorbell or a BlueFlame copy makes them.  The
 * driver's barrier before its own store already ordered the queue memory before it. */
static inline void uvd_guest_store(const struct uvd_guest_page *g, uint64_t off, const volatile uint8_t *src,
				   unsigned size, int wc)
{
	volatile uint8_t *dst = g->va + (off - g->bar_off);
	for (unsigned i = 0; i < size;) {
		if (size - i >= 8 && !((off + i) & 7)) {
			*(volatile uint64_t *)(volatile void *)(dst + i) = *(const volatile uint64_t *)(const volatile void *)(src + i);
			i += 8;
		} else {
			dst[i] = src[i];
			i++;
		}
	}
	if (wc)
		plat_wc_flush();   /* push the copy into the mapped page out */
}

/* After uvd_guest_store: tell a software device behind the page of the store (one
 * predictable branch on a Mac, where there is none). */
static inline void uvd_guest_stored(const struct uvd_guest_page *g, enum shim_mmio_op op, uint64_t off, unsigned size)
{
	if (__builtin_expect(g->hook != NULL, 0))
		g->hook->access(g->hook->ctx, op, off, size);
}

#endif
