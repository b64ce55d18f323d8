/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/shim/vfio_info: decoding of the replies of VFIO's *_INFO ioctls, as pure functions
 * over the bytes the kernel returned, so that they are tested against constructed and
 * captured replies without a device (tests/shim/test_vfio_info.c).
 *
 * The kernel's rules these follow (include/uapi/linux/vfio.h):
 *  - an INFO reply may carry a capability chain: cap_offset gives the first header,
 *    each vfio_info_cap_header.next the following one, offsets from the start of the
 *    reply, 0 ends the chain. The kernel appends capabilities in order, so offsets only
 *    grow; a chain that goes backwards, points into the fixed part or past the reply is
 *    malformed (-EPROTO), which also makes every walk terminate;
 *  - if argsz was too small for the chain, the kernel raises argsz to what it needs and
 *    leaves cap_offset 0: the caller asks again with a buffer that large.
 */
#ifndef UVERBS_HW_SHIM_VFIO_INFO_H
#define UVERBS_HW_SHIM_VFIO_INFO_H

#include <stddef.h>
#include <stdint.h>
#include <linux/vfio.h>

#include "hw/shim/vfio_iova.h"

#define SHIM_VFIO_MAX_AREAS 16
#define SHIM_VFIO_MAX_IOVA_RANGES 16

/* Find capability id in the chain of an INFO reply of buflen valid bytes whose fixed
 * part is fixed_len bytes and whose first capability is at first_off (0: none).
 * The capability must have at least min_len bytes (header included) inside the reply.
 * 0 and *out; -ENOENT if absent; -EPROTO if the chain is malformed. */
int shim_vfio_cap_find(const void *buf, size_t buflen, size_t fixed_len, uint32_t first_off,
		       uint16_t id, size_t min_len, const struct vfio_info_cap_header **out);

/* One piece of a region to mmap: offset and size inside the region. */
struct shim_vfio_area {
	uint64_t offset;
	uint64_t size;
};

/* A region as the device shim uses it: where it lives in the device fd, and the pieces
 * of it that may be mmapped (the whole region, or the sparse areas when the kernel
 * keeps part of it, e.g. an MSI-X table on kernels before 4.16, to itself). */
struct shim_vfio_region {
	uint32_t index;
	uint32_t flags;          /* VFIO_REGION_INFO_FLAG_* */
	uint64_t size;
	uint64_t fd_offset;      /* offset of the region in the device fd */
	int sparse;              /* a SPARSE_MMAP capability restricted the areas */
	int msix_mappable;       /* VFIO_REGION_INFO_CAP_MSIX_MAPPABLE present */
	unsigned narea;          /* 0 if the region cannot be mmapped */
	struct shim_vfio_area area[SHIM_VFIO_MAX_AREAS];
};

/* Decode a VFIO_DEVICE_GET_REGION_INFO reply. Areas must be page aligned (mmap works in
 * pages) and inside the region; zero-sized sparse areas are dropped. 0, or -EPROTO for a
 * malformed reply, -E2BIG for more than SHIM_VFIO_MAX_AREAS areas; err says which. */
int shim_vfio_decode_region(const void *buf, size_t buflen, uint64_t page_size,
			    struct shim_vfio_region *out, char *err, size_t errlen);

/* Decode a VFIO_IOMMU_GET_INFO reply (type1). */
struct shim_vfio_iommu {
	uint64_t pgsizes;        /* bitmap of IOMMU page sizes, 0 if not reported */
	uint64_t min_pgsize;     /* smallest of them, 0 if not reported */
	int have_ranges;
	unsigned nranges;
	struct vfio_iova_range range[SHIM_VFIO_MAX_IOVA_RANGES]; /* inclusive ends */
	int have_dma_avail;
	uint32_t dma_avail;      /* mappings still allowed (dma_entry_limit, default 65535) */
};
int shim_vfio_decode_iommu(const void *buf, size_t buflen, struct shim_vfio_iommu *out,
			   char *err, size_t errlen);

/* Fill an IOVA space with [base, end) intersected with the IOMMU's valid ranges (or
 * [base, end) alone when the kernel reports none), each piece trimmed to multiples of
 * gran. end 0 means "up to the IOMMU's limit", or SHIM_VFIO_IOVA_END_DEFAULT without
 * ranges. 0, -ENOSPC if nothing usable remains, -ENOMEM. */
int shim_vfio_iova_setup(struct shim_iova_space *s, const struct shim_vfio_iommu *mmu,
			 uint64_t base, uint64_t end, uint64_t gran);

/* How many MSI-X vectors to enable given a VFIO_DEVICE_GET_IRQ_INFO reply and the
 * number wanted: min(count, want). -ENOTSUP (with err) if vectors exist but cannot
 * signal an eventfd. */
int shim_vfio_irq_plan(const struct vfio_irq_info *info, unsigned want, unsigned *n,
		       char *err, size_t errlen);

/* Build the VFIO_DEVICE_SET_IRQS argument that attaches fds[0..n) as the triggers of
 * vectors 0..n-1 of irq index (n = 0 with fds NULL detaches every trigger). Returns the
 * size of the argument; writes it only if it fits in buflen. */
size_t shim_vfio_irq_set_build(void *buf, size_t buflen, uint32_t index, const int *fds, unsigned n);

#endif
