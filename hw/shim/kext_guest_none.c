/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* shim_kext_guest_open where hw/shim/kext.c is not built (Linux; macOS without IOKit,
 * the zig check build): there is no kext to be a guest of.  A device daemon's client
 * then keeps its stores on the doorbell ring (hw/shim/uvd_guest.h). */
#include <errno.h>
#include <stdio.h>

#include "hw/shim/kext_guest.h"

int shim_kext_guest_open(unsigned index, uint64_t bar_off, struct shim_kext_guest **out, volatile void **uar,
			 size_t *len, char *err, size_t errlen)
{
	(void)bar_off;
	if (out)
		*out = NULL;
	if (uar)
		*uar = NULL;
	if (len)
		*len = 0;
	if (err && errlen)
		snprintf(err, errlen, "kext:%u: this build has no kext shim", index);
	return -EOPNOTSUPP;
}

void shim_kext_guest_close(struct shim_kext_guest *g)
{
	(void)g;
}

const struct shim_mmio_hook *shim_kext_guest_hook(struct shim_kext_guest *g)
{
	(void)g;
	return NULL;
}
