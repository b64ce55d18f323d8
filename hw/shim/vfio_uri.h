/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/shim/vfio_uri: the argument part of a "vfio:" device URI, parsed without touching
 * the system so that it can be tested anywhere.
 *
 *   vfio:0000:03:00.0                         domain:bus:device.function (sysfs spelling)
 *   vfio:03:00.0                              domain 0000 implied
 *   vfio:03:00.0,iova_base=0x100000000,msix=4,memlock=256M
 *
 * Options:
 *   iova_base=N   lowest IOVA handed to the device (default 1 MiB: an IOVA of 0 would
 *                 look like a NULL pointer in a trace, and low IOVAs are often reserved)
 *   iova_end=N    first IOVA not handed out (default: what the IOMMU reports, else 2^39,
 *                 the narrowest address width of common x86 IOMMUs with 3-level tables)
 *   msix=N        MSI-X vectors to enable, each with its own eventfd (default 16, capped
 *                 at what the function has)
 *   memlock=SIZE  locked memory the device needs at least (K/M/G suffixes; default 64M,
 *                 see SHIM_VFIO_MEMLOCK_DEFAULT); 0 skips the check
 */
#ifndef UVERBS_HW_SHIM_VFIO_URI_H
#define UVERBS_HW_SHIM_VFIO_URI_H

#include <stddef.h>
#include <stdint.h>

#define SHIM_VFIO_IOVA_BASE_DEFAULT 0x100000ull
#define SHIM_VFIO_IOVA_END_DEFAULT (1ull << 39)
#define SHIM_VFIO_MSIX_DEFAULT 16u
#define SHIM_VFIO_MSIX_MAX 2048u   /* PCI: MSI-X Table Size is 11 bits (N-1 encoded) */
/* The reference ConnectX-4 bring-up (shared/fixtures) gives 6 boot pages and 12,868
 * init pages of 4 KiB, about 50 MiB pinned before the first queue: 64 MiB is the least
 * that lets bring-up finish. */
#define SHIM_VFIO_MEMLOCK_DEFAULT (64ull << 20)

struct shim_vfio_uri {
	char bdf[16];             /* normalised "dddd:bb:dd.f", lower-case hex */
	uint64_t iova_base;
	uint64_t iova_end;        /* 0: take it from the IOMMU */
	unsigned msix;
	uint64_t memlock_need;
};

/* Parse the text after "vfio:". Returns 0, or -EINVAL with the reason in err. */
int shim_vfio_parse_uri(const char *args, struct shim_vfio_uri *out, char *err, size_t errlen);

/* Normalise a PCI address ("3:0.0", "0000:03:00.0") to sysfs spelling. 0 or -EINVAL. */
int shim_vfio_parse_bdf(const char *s, size_t len, char out[16]);

#endif
