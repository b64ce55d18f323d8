/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/shim/vfio_iova: the IOVA space a VFIO container hands to the device.
 *
 * VFIO leaves the choice of device addresses to userspace (VFIO_IOMMU_MAP_DMA takes the
 * IOVA as input), inside the ranges the IOMMU accepts (VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE
 * excludes reserved regions such as the x86 MSI window 0xfee00000-0xfeefffff).
 * This is a first-fit allocator over a sorted list of free extents: allocation with a
 * power-of-two alignment, free with coalescing of neighbours, and refusal of a free that
 * overlaps free space or leaves the managed ranges (a double free is an error, never
 * silent corruption). Addresses are inclusive ("last") so that a range may end at
 * 2^64-1 without overflow. Not thread safe: vfio.c holds its lock around it.
 */
#ifndef UVERBS_HW_SHIM_VFIO_IOVA_H
#define UVERBS_HW_SHIM_VFIO_IOVA_H

#include <stddef.h>
#include <stdint.h>

struct shim_iova_extent {
	uint64_t start;
	uint64_t last;   /* inclusive */
};

struct shim_iova_space {
	struct shim_iova_extent *free;   /* sorted by start, disjoint, never adjacent */
	size_t nfree, capfree;
	struct shim_iova_extent *ranges; /* what was added: frees must fall inside one */
	size_t nranges, capranges;
	uint64_t total;                  /* bytes added (saturating) */
	uint64_t used;                   /* bytes allocated */
};

void shim_iova_init(struct shim_iova_space *s);
void shim_iova_fini(struct shim_iova_space *s);

/* Add [start, last] as free space. -EINVAL if it overlaps what was added before or
 * start > last; -ENOMEM if the list cannot grow. */
int shim_iova_add_range(struct shim_iova_space *s, uint64_t start, uint64_t last);

/* Lowest free IOVA aligned to align (a power of two, 0 means 1) with len bytes free
 * after it. 0 with *iova set; -EINVAL for len 0 or a bad alignment; -ENOSPC if no
 * extent fits; -ENOMEM if the list cannot grow. */
int shim_iova_alloc(struct shim_iova_space *s, uint64_t len, uint64_t align, uint64_t *iova);
/* len bytes at an IOVA congruent to va modulo mod (a power of two): the IOVA and the VA
 * then share their offset within every page up to mod, so the device can translate the
 * range with pages that large (an MTT of 2 MiB or 1 GiB pages instead of 4 KiB ones).
 * 0 and *iova, -EINVAL, -ENOMEM or -ENOSPC. */
int shim_iova_alloc_congruent(struct shim_iova_space *s, uint64_t len, uint64_t mod, uint64_t va,
			      uint64_t *iova);

/* Return [iova, iova+len) to the free list, merging with its neighbours. -EINVAL if it
 * is empty, wraps, is not inside one added range, or overlaps free space. */
int shim_iova_free(struct shim_iova_space *s, uint64_t iova, uint64_t len);

/* True if [iova, iova+len) is entirely allocated (for checks and tests). */
int shim_iova_is_allocated(const struct shim_iova_space *s, uint64_t iova, uint64_t len);

/* The IOMMU-page span that covers [va, va+len): VFIO maps whole IOMMU pages, so a pin
 * maps [*start, *start + *maplen) and the device address of va is the mapping's IOVA
 * plus *offset. gran is a power of two. 0, or -EINVAL for an empty range, a bad gran,
 * or a range that wraps at the top of the address space once rounded. */
int shim_iova_span(uint64_t va, uint64_t len, uint64_t gran, uint64_t *start, uint64_t *maplen,
		   uint64_t *offset);

#endif
