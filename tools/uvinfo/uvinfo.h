/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tools/uvinfo: devices, ports, GIDs and the PCIe path (docs/tools.md, "uvinfo").
 *
 * Two sources, reported side by side:
 *  - the devices uverbs opens (devices.c): the ibv_* API of libuverbs, linked directly,
 *    so uvinfo shows what every verbs program will see (UVERBS_DEVICES, or the default
 *    emulated ConnectX);
 *  - the ConnectX PCI functions of this machine (pcipath.c, libpci) with the bound
 *    driver, IOMMU group and VFIO readiness (hw/shim/vfio_sysfs), and their PCIe path.
 */
#ifndef UVERBS_TOOLS_UVINFO_UVINFO_H
#define UVERBS_TOOLS_UVINFO_UVINFO_H

#include <stdarg.h>
#include <stdio.h>

#include "tools/common/jsonw.h"

/* Open a list: the JSON array k when w is not NULL, else the heading people read above
 * it (a printf format and its arguments). */
__attribute__((format(printf, 4, 5))) static inline void uvi_list_open(FILE *f, struct jw *w, const char *k,
									const char *fmt, ...)
{
	va_list ap;

	if (w) {
		jw_arr(w, k);
		return;
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
}

/* Print every verbs device (human text, or members of the current JSON object when w is
 * not NULL).  Returns the number of devices that failed to open or query. */
int uvi_print_devices(FILE *f, struct jw *w);

/* Print the counters running uverbs processes publish (counters.c), all of them or
 * only_pid's.  Returns 1 when only_pid publishes none (or publishing is off), else 0. */
int uvi_print_counters(FILE *f, struct jw *w, long only_pid);

/* "ConnectX-5" etc. for a Mellanox PCI device id, NULL when not a known ConnectX. */
const char *uvi_connectx_name(unsigned device_id);

#endif
