/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/shim/uvd_guest.h: does a daemon's client store into a UAR page it maps itself? */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hw/shim/uvd_guest.h"

#include "hw/shim/kext_guest.h"

static int kext_open(void *ctx, unsigned fn, uint64_t bar_off, void **handle, volatile void **va, size_t *len,
		     char *err, size_t errlen)
{
	struct shim_kext_guest *g = NULL;
	int rc = shim_kext_guest_open(fn, bar_off, &g, va, len, err, errlen);

	(void)ctx;
	*handle = g;
	return rc;
}

static void kext_close(void *ctx, void *handle)
{
	(void)ctx;
	shim_kext_guest_close(handle);
}

static const struct shim_mmio_hook *kext_hook(void *ctx, void *handle)
{
	(void)ctx;
	return shim_kext_guest_hook(handle);
}

const struct uvd_guest_opener uvd_guest_kext_opener = { kext_open, kext_close, NULL, kext_hook };

int uvd_guest_choose(uint32_t kext_fn, uint32_t granted_uar, uint32_t uar, uint64_t uar_page_bytes,
		     const struct uvd_guest_opener *op, struct uvd_guest_page *out, char *why, size_t whylen)
{
	uint64_t off = (uint64_t)uar * uar_page_bytes;
	void *handle = NULL;
	volatile void *va = NULL;
	size_t len = 0;
	char err[160] = "";

	if (!kext_fn) {
		snprintf(why, whylen, "the daemon's device is not the kext: stores go through the daemon");
		return 0;
	}
	if (granted_uar != uar + 1u) {
		snprintf(why, whylen, "UAR page 0x%x: its host page was not granted to this process", uar);
		return 0;
	}
	if (!op || !op->open) {
		snprintf(why, whylen, "UAR page 0x%x: no guest access to the kext in this build", uar);
		return 0;
	}
	int rc = op->open(op->ctx, kext_fn - 1u, off, &handle, &va, &len, err, sizeof(err));
	if (rc) {
		snprintf(why, whylen, "UAR page 0x%x: opening kext:%u as a guest: %s", uar, kext_fn - 1u,
			 err[0] ? err : strerror(-rc));
		return 0;
	}
	/* the page it mapped must be a power-of-two host page holding the whole UAR page */
	uint64_t page = len;
	if (!va || !page || (page & (page - 1)) || page < uar_page_bytes ||
	    (off & ~(page - 1)) + page < off + uar_page_bytes) {
		if (op->close)
			op->close(op->ctx, handle);
		snprintf(why, whylen, "UAR page 0x%x: the kext mapped %zu bytes, not its host page", uar, len);
		return 0;
	}
	*out = (struct uvd_guest_page){ .bar_off = off & ~(page - 1), .len = len, .va = (volatile uint8_t *)va,
					.handle = handle, .hook = op->hook ? op->hook(op->ctx, handle) : NULL };
	return 1;
}
