/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Decoding of VFIO INFO replies; the rules are in vfio_info.h. */
#include "hw/shim/vfio_info.h"
#include "hw/shim/vfio_uri.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define ERR(...) do { if (err && errlen) snprintf(err, errlen, __VA_ARGS__); } while (0)

int shim_vfio_cap_find(const void *buf, size_t buflen, size_t fixed_len, uint32_t first_off,
		       uint16_t id, size_t min_len, const struct vfio_info_cap_header **out)
{
	const uint8_t *b = buf;
	uint64_t off = first_off, prev = 0;

	if (!buf || ((uintptr_t)buf & 7) != 0)
		return -EINVAL;
	if (min_len < sizeof(struct vfio_info_cap_header))
		min_len = sizeof(struct vfio_info_cap_header);
	while (off != 0) {
		const struct vfio_info_cap_header *h;

		/* The kernel places capabilities after the fixed part, each after the one
		 * before (vfio_info_cap_add), 4-byte aligned at least: before Linux 6.7 it
		 * did not pad them to 8 bytes, and type1's IOMMU info on Debian 12's 6.1
		 * puts the IOVA-range capability at offset 68, after the 12-byte DMA-avail
		 * one (found in the VM, tools/vm).  Readers copy the fields out (memcpy), so
		 * a 4-byte aligned capability is read without a misaligned access. */
		if (off < fixed_len || off <= prev || (off & 3) != 0 ||
		    off > buflen || buflen - off < sizeof(*h))
			return -EPROTO;
		h = (const struct vfio_info_cap_header *)(b + off);
		if (h->id == id) {
			if (buflen - off < min_len)
				return -EPROTO;
			*out = h;
			return 0;
		}
		prev = off;
		off = h->next;
	}
	return -ENOENT;
}

/* shim_vfio_cap_find for the decoders: a broken chain is reported as `what`'s and gives
 * -EPROTO; otherwise 0, with *h the capability or NULL where there is none. */
static int cap_find(const void *buf, size_t buflen, size_t fixed_len, uint32_t first_off, uint16_t id,
		    size_t min_len, const struct vfio_info_cap_header **h, const char *what, char *err,
		    size_t errlen)
{
	int rc = shim_vfio_cap_find(buf, buflen, fixed_len, first_off, id, min_len, h);

	if (rc == -EPROTO) {
		ERR("%s: malformed capability chain", what);
		return rc;
	}
	if (rc != 0)
		*h = NULL;
	return 0;
}

int shim_vfio_decode_region(const void *buf, size_t buflen, uint64_t page_size,
			    struct shim_vfio_region *out, char *err, size_t errlen)
{
	struct vfio_region_info ri;
	const struct vfio_info_cap_header *h;

	if (err && errlen)
		err[0] = '\0';
	memset(out, 0, sizeof(*out));
	if (!buf || buflen < sizeof(ri) || page_size == 0 || (page_size & (page_size - 1))) {
		ERR("region info reply too short (%zu bytes, need %zu)", buflen, sizeof(ri));
		return -EPROTO;
	}
	memcpy(&ri, buf, sizeof(ri));
	/* argsz may say more than we were given (the kernel asks for a bigger buffer);
	 * only the bytes we hold count. */
	if (ri.argsz < buflen)
		buflen = ri.argsz;
	if (buflen < sizeof(ri)) {
		ERR("region info reply argsz %u is below the structure size %zu", ri.argsz, sizeof(ri));
		return -EPROTO;
	}
	out->index = ri.index;
	out->flags = ri.flags;
	out->size = ri.size;
	out->fd_offset = ri.offset;
	if (ri.size && ri.offset + ri.size < ri.offset) {
		ERR("region %u: offset 0x%llx + size 0x%llx wraps", ri.index,
		    (unsigned long long)ri.offset, (unsigned long long)ri.size);
		return -EPROTO;
	}
	if (!(ri.flags & VFIO_REGION_INFO_FLAG_MMAP) || ri.size == 0)
		return 0;
	if ((ri.offset & (page_size - 1)) != 0) {
		ERR("region %u: device fd offset 0x%llx is not page aligned", ri.index,
		    (unsigned long long)ri.offset);
		return -EPROTO;
	}

	if ((ri.flags & VFIO_REGION_INFO_FLAG_CAPS) && ri.cap_offset) {
		char what[32];

		snprintf(what, sizeof(what), "region %u", ri.index);
		if (cap_find(buf, buflen, sizeof(ri), ri.cap_offset, VFIO_REGION_INFO_CAP_MSIX_MAPPABLE, 0, &h,
			     what, err, errlen) < 0)
			return -EPROTO;
		out->msix_mappable = h != NULL;
		if (cap_find(buf, buflen, sizeof(ri), ri.cap_offset, VFIO_REGION_INFO_CAP_SPARSE_MMAP,
			     sizeof(struct vfio_region_info_cap_sparse_mmap), &h, what, err, errlen) < 0)
			return -EPROTO;
		if (h) {
			const struct vfio_region_info_cap_sparse_mmap *sp = (const void *)h;
			size_t room = buflen - (size_t)((const uint8_t *)h - (const uint8_t *)buf);

			if (sp->nr_areas > (room - sizeof(*sp)) / sizeof(sp->areas[0])) {
				ERR("region %u: sparse mmap capability claims %u areas, reply holds fewer",
				    ri.index, sp->nr_areas);
				return -EPROTO;
			}
			out->sparse = 1;
			for (uint32_t i = 0; i < sp->nr_areas; i++) {
				uint64_t o = sp->areas[i].offset, sz = sp->areas[i].size;

				if (sz == 0)
					continue;
				if (o > ri.size || sz > ri.size - o || ((o | sz) & (page_size - 1))) {
					ERR("region %u: sparse area %u (0x%llx+0x%llx) is outside the region "
					    "(0x%llx) or not page aligned", ri.index, i,
					    (unsigned long long)o, (unsigned long long)sz,
					    (unsigned long long)ri.size);
					return -EPROTO;
				}
				if (out->narea == SHIM_VFIO_MAX_AREAS) {
					ERR("region %u: more than %d sparse mmap areas", ri.index, SHIM_VFIO_MAX_AREAS);
					return -E2BIG;
				}
				out->area[out->narea].offset = o;
				out->area[out->narea].size = sz;
				out->narea++;
			}
			return 0;
		}
	}
	/* mmap maps whole pages: a BAR smaller than a page is still mapped as a page, the
	 * kernel allows it (vfio-pci rounds small BARs up to a page for this). */
	out->narea = 1;
	out->area[0].offset = 0;
	out->area[0].size = (ri.size + page_size - 1) & ~(page_size - 1);
	return 0;
}

int shim_vfio_decode_iommu(const void *buf, size_t buflen, struct shim_vfio_iommu *out,
			   char *err, size_t errlen)
{
	struct vfio_iommu_type1_info ii;
	size_t fixed = offsetof(struct vfio_iommu_type1_info, cap_offset) + sizeof(ii.cap_offset);
	const struct vfio_info_cap_header *h;

	if (err && errlen)
		err[0] = '\0';
	memset(out, 0, sizeof(*out));
	memset(&ii, 0, sizeof(ii));
	if (!buf || buflen < offsetof(struct vfio_iommu_type1_info, cap_offset)) {
		ERR("IOMMU info reply too short (%zu bytes)", buflen);
		return -EPROTO;
	}
	memcpy(&ii, buf, buflen < sizeof(ii) ? buflen : sizeof(ii));
	if (ii.argsz < buflen)
		buflen = ii.argsz;
	if (ii.flags & VFIO_IOMMU_INFO_PGSIZES) {
		out->pgsizes = ii.iova_pgsizes;
		out->min_pgsize = ii.iova_pgsizes & -ii.iova_pgsizes; /* lowest set bit */
	}
	/* Kernels before 5.4 have no cap_offset: the fixed part ends at iova_pgsizes. */
	if (!(ii.flags & VFIO_IOMMU_INFO_CAPS) || buflen < fixed || ii.cap_offset == 0)
		return 0;

	if (cap_find(buf, buflen, fixed, ii.cap_offset, VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE,
		     sizeof(struct vfio_iommu_type1_info_cap_iova_range), &h, "IOMMU info", err, errlen) < 0)
		return -EPROTO;
	if (h) {
		/* copied out field by field: the capability may be only 4-byte aligned */
		const uint8_t *cb = (const uint8_t *)h;
		size_t room = buflen - (size_t)(cb - (const uint8_t *)buf);
		size_t ranges_off = offsetof(struct vfio_iommu_type1_info_cap_iova_range, iova_ranges);
		uint32_t nr;

		memcpy(&nr, cb + offsetof(struct vfio_iommu_type1_info_cap_iova_range, nr_iovas), sizeof(nr));
		if (nr > (room - ranges_off) / sizeof(struct vfio_iova_range)) {
			ERR("IOMMU info: IOVA range capability claims %u ranges, reply holds fewer", nr);
			return -EPROTO;
		}
		if (nr > SHIM_VFIO_MAX_IOVA_RANGES) {
			ERR("IOMMU info: %u IOVA ranges, more than the %d this shim keeps", nr, SHIM_VFIO_MAX_IOVA_RANGES);
			return -E2BIG;
		}
		for (uint32_t i = 0; i < nr; i++) {
			struct vfio_iova_range r;

			memcpy(&r, cb + ranges_off + i * sizeof(r), sizeof(r));
			if (r.start > r.end) {
				ERR("IOMMU info: IOVA range %u has start 0x%llx above end 0x%llx", i,
				    (unsigned long long)r.start, (unsigned long long)r.end);
				return -EPROTO;
			}
			out->range[i] = r;
		}
		out->have_ranges = 1;
		out->nranges = nr;
	}
	if (cap_find(buf, buflen, fixed, ii.cap_offset, VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL,
		     sizeof(struct vfio_iommu_type1_info_dma_avail), &h, "IOMMU info", err, errlen) < 0)
		return -EPROTO;
	if (h) {
		out->have_dma_avail = 1;
		memcpy(&out->dma_avail, (const uint8_t *)h + offsetof(struct vfio_iommu_type1_info_dma_avail, avail),
		       sizeof(out->dma_avail));
	}
	return 0;
}

/* Add [start, last] trimmed inward to multiples of gran. */
static int add_trimmed(struct shim_iova_space *s, uint64_t start, uint64_t last, uint64_t gran)
{
	uint64_t a = (start + (gran - 1)) & ~(gran - 1);
	uint64_t end1;

	if (a < start || a > last)
		return 0;
	/* last + 1 rounded down; a range ending at 2^64-1 ends on every boundary. */
	end1 = last == UINT64_MAX ? 0 : ((last + 1) & ~(gran - 1));
	if (end1 != 0 && end1 <= a)
		return 0;
	return shim_iova_add_range(s, a, end1 == 0 ? UINT64_MAX : end1 - 1);
}

int shim_vfio_iova_setup(struct shim_iova_space *s, const struct shim_vfio_iommu *mmu,
			 uint64_t base, uint64_t end, uint64_t gran)
{
	int rc;

	if (gran == 0 || (gran & (gran - 1)))
		return -EINVAL;
	if (!mmu || !mmu->have_ranges) {
		if (end == 0)
			end = SHIM_VFIO_IOVA_END_DEFAULT;
		if (end <= base)
			return -ENOSPC;
		rc = add_trimmed(s, base, end - 1, gran);
		if (rc < 0)
			return rc;
		return s->nranges ? 0 : -ENOSPC;
	}
	for (unsigned i = 0; i < mmu->nranges; i++) {
		uint64_t lo = mmu->range[i].start, hi = mmu->range[i].end;

		if (lo < base)
			lo = base;
		if (end != 0 && hi > end - 1)
			hi = end - 1;
		if (lo > hi)
			continue;
		rc = add_trimmed(s, lo, hi, gran);
		if (rc < 0)
			return rc;
	}
	return s->nranges ? 0 : -ENOSPC;
}

int shim_vfio_irq_plan(const struct vfio_irq_info *info, unsigned want, unsigned *n,
		       char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	*n = 0;
	if (!info || info->count == 0)
		return 0;
	if (!(info->flags & VFIO_IRQ_INFO_EVENTFD)) {
		ERR("interrupt index %u has %u vectors but cannot signal an eventfd", info->index, info->count);
		return -ENOTSUP;
	}
	*n = info->count < want ? info->count : want;
	return 0;
}

size_t shim_vfio_irq_set_build(void *buf, size_t buflen, uint32_t index, const int *fds, unsigned n)
{
	struct vfio_irq_set set;
	size_t need = sizeof(set) + (size_t)n * sizeof(int32_t);

	if (!buf || buflen < need)
		return need;
	memset(&set, 0, sizeof(set));
	set.argsz = (uint32_t)need;
	set.index = index;
	set.start = 0;
	set.count = n;
	/* count 0 with DATA_NONE|ACTION_TRIGGER disables the index (vfio.h, SET_IRQS). */
	set.flags = VFIO_IRQ_SET_ACTION_TRIGGER | (n ? VFIO_IRQ_SET_DATA_EVENTFD : VFIO_IRQ_SET_DATA_NONE);
	memcpy(buf, &set, sizeof(set));
	for (unsigned i = 0; i < n; i++) {
		int32_t fd = fds[i];
		memcpy((uint8_t *)buf + sizeof(set) + i * sizeof(fd), &fd, sizeof(fd));
	}
	return need;
}
