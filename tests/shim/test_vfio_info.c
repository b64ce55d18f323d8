/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Decoding of VFIO INFO replies (hw/shim/vfio_info.c) against replies built here the way
 * the kernel lays them out (include/uapi/linux/vfio.h): region info with and without
 * the sparse-mmap and MSI-X-mappable capabilities, type1 IOMMU info with IOVA ranges
 * and the DMA-available count, malformed chains, IRQ info and the SET_IRQS argument. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "hw/shim/vfio_info.h"

#define PG 4096u

static uint64_t buf[512];   /* 8-byte aligned, as the kernel's replies land in our buffer */
static char err[256];

/* A BAR0 reply of a ConnectX-5: 32 MiB BAR, mmappable, at region offset 0. */
static struct vfio_region_info *region_reply(uint64_t size, uint32_t flags)
{
	struct vfio_region_info *ri = (void *)buf;

	memset(buf, 0, sizeof(buf));
	ri->argsz = sizeof(*ri);
	ri->flags = flags;
	ri->index = VFIO_PCI_BAR0_REGION_INDEX;
	ri->size = size;
	ri->offset = 0;
	return ri;
}

/* Append a capability at off (kernel: after the last one; 8-byte aligned since Linux 6.7,
 * only 4-byte aligned before). */
static struct vfio_info_cap_header *cap_at(size_t off, uint16_t id, size_t len, uint32_t *prev_next)
{
	struct vfio_info_cap_header *h = (void *)((uint8_t *)buf + off);

	h->id = id;
	h->version = 1;
	h->next = 0;
	*prev_next = (uint32_t)off;
	(void)len;
	return h;
}

Test(vfio_info, plain_mmappable_bar_is_one_area)
{
	struct shim_vfio_region r;
	region_reply(32u << 20, VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE | VFIO_REGION_INFO_FLAG_MMAP);
	cr_assert_eq(shim_vfio_decode_region(buf, sizeof(struct vfio_region_info), PG, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.size, 32u << 20);
	cr_assert_eq(r.narea, 1);
	cr_assert_eq(r.area[0].offset, 0);
	cr_assert_eq(r.area[0].size, 32u << 20);
	cr_assert_eq(r.sparse, 0);
}

Test(vfio_info, region_without_mmap_flag_has_no_areas)
{
	struct shim_vfio_region r;
	region_reply(256, VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE);
	cr_assert_eq(shim_vfio_decode_region(buf, sizeof(struct vfio_region_info), PG, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.narea, 0);
	cr_assert_eq(r.size, 256);
}

Test(vfio_info, small_bar_is_rounded_to_a_page)
{
	struct shim_vfio_region r;
	region_reply(0x800, VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE | VFIO_REGION_INFO_FLAG_MMAP);
	cr_assert_eq(shim_vfio_decode_region(buf, sizeof(struct vfio_region_info), 16384, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.area[0].size, 16384);
}

/* Kernels before 4.16 exclude the MSI-X table from the BAR mmap with a sparse-mmap
 * capability: two areas around the table. */
static size_t build_sparse(uint32_t nr_areas, const uint64_t (*areas)[2], int with_msix_cap)
{
	struct vfio_region_info *ri = region_reply(32u << 20, VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE |
						   VFIO_REGION_INFO_FLAG_MMAP | VFIO_REGION_INFO_FLAG_CAPS);
	size_t off = (sizeof(*ri) + 7) & ~(size_t)7;
	uint32_t *link = &ri->cap_offset;

	if (with_msix_cap) {
		struct vfio_info_cap_header *m = cap_at(off, VFIO_REGION_INFO_CAP_MSIX_MAPPABLE, sizeof(*m), link);
		link = &m->next;
		off += sizeof(*m);
	}
	struct vfio_region_info_cap_sparse_mmap *sp =
		(void *)cap_at(off, VFIO_REGION_INFO_CAP_SPARSE_MMAP, 0, link);
	sp->nr_areas = nr_areas;
	for (uint32_t i = 0; i < nr_areas; i++) {
		sp->areas[i].offset = areas[i][0];
		sp->areas[i].size = areas[i][1];
	}
	off += sizeof(*sp) + nr_areas * sizeof(sp->areas[0]);
	ri->argsz = (uint32_t)off;
	return off;
}

Test(vfio_info, sparse_mmap_capability_gives_the_areas_around_the_msix_table)
{
	static const uint64_t areas[][2] = { { 0, 0x2000 }, { 0x3000, (32u << 20) - 0x3000 } };
	struct shim_vfio_region r;
	size_t len = build_sparse(2, areas, 0);

	cr_assert_eq(shim_vfio_decode_region(buf, len, PG, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.sparse, 1);
	cr_assert_eq(r.narea, 2);
	cr_assert_eq(r.area[0].offset, 0);
	cr_assert_eq(r.area[0].size, 0x2000);
	cr_assert_eq(r.area[1].offset, 0x3000);
	cr_assert_eq(r.area[1].size, (32u << 20) - 0x3000);
	cr_assert_eq(r.msix_mappable, 0);
}

Test(vfio_info, sparse_capability_found_after_another_capability)
{
	static const uint64_t areas[][2] = { { 0, 0x1000 } };
	struct shim_vfio_region r;
	size_t len = build_sparse(1, areas, 1);

	cr_assert_eq(shim_vfio_decode_region(buf, len, PG, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.msix_mappable, 1);
	cr_assert_eq(r.narea, 1);
	cr_assert_eq(r.area[0].size, 0x1000);
}

Test(vfio_info, zero_sized_sparse_areas_are_dropped)
{
	static const uint64_t areas[][2] = { { 0, 0 }, { 0x4000, 0x1000 } };
	struct shim_vfio_region r;
	size_t len = build_sparse(2, areas, 0);

	cr_assert_eq(shim_vfio_decode_region(buf, len, PG, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.narea, 1);
	cr_assert_eq(r.area[0].offset, 0x4000);
}

Test(vfio_info, sparse_area_outside_the_region_is_eproto)
{
	static const uint64_t areas[][2] = { { 32u << 20, 0x1000 } };
	struct shim_vfio_region r;
	size_t len = build_sparse(1, areas, 0);

	cr_assert_eq(shim_vfio_decode_region(buf, len, PG, &r, err, sizeof(err)), -EPROTO);
	cr_assert(strstr(err, "sparse area 0") != NULL, "%s", err);
}

Test(vfio_info, unaligned_sparse_area_is_eproto)
{
	static const uint64_t areas[][2] = { { 0x800, 0x1000 } };
	struct shim_vfio_region r;
	size_t len = build_sparse(1, areas, 0);

	cr_assert_eq(shim_vfio_decode_region(buf, len, PG, &r, err, sizeof(err)), -EPROTO);
}

Test(vfio_info, sparse_count_beyond_the_reply_is_eproto)
{
	static const uint64_t areas[][2] = { { 0, 0x1000 } };
	struct shim_vfio_region r;
	size_t len = build_sparse(1, areas, 0);
	struct vfio_region_info *ri = (void *)buf;
	struct vfio_region_info_cap_sparse_mmap *sp = (void *)((uint8_t *)buf + ri->cap_offset);

	sp->nr_areas = 1000;
	cr_assert_eq(shim_vfio_decode_region(buf, len, PG, &r, err, sizeof(err)), -EPROTO);
	cr_assert(strstr(err, "1000 areas") != NULL, "%s", err);
}

Test(vfio_info, too_many_sparse_areas_is_e2big)
{
	uint64_t areas[SHIM_VFIO_MAX_AREAS + 1][2];
	struct shim_vfio_region r;

	for (unsigned i = 0; i <= SHIM_VFIO_MAX_AREAS; i++) {
		areas[i][0] = (uint64_t)i * 0x2000;
		areas[i][1] = 0x1000;
	}
	size_t len = build_sparse(SHIM_VFIO_MAX_AREAS + 1, (const uint64_t (*)[2])areas, 0);
	cr_assert_eq(shim_vfio_decode_region(buf, len, PG, &r, err, sizeof(err)), -E2BIG);
}

Test(vfio_info, truncated_reply_with_caps_flag_but_no_cap_offset_maps_whole_bar)
{
	/* argsz was too small: the kernel raised argsz and left cap_offset 0. We decode what
	 * we hold; the caller asks again with the bigger size. */
	struct shim_vfio_region r;
	struct vfio_region_info *ri = region_reply(1u << 20, VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE |
						   VFIO_REGION_INFO_FLAG_MMAP | VFIO_REGION_INFO_FLAG_CAPS);
	ri->argsz = 200;
	cr_assert_eq(shim_vfio_decode_region(buf, sizeof(*ri), PG, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.narea, 1);
}

Test(vfio_info, short_reply_is_eproto)
{
	struct shim_vfio_region r;
	region_reply(4096, VFIO_REGION_INFO_FLAG_MMAP);
	cr_assert_eq(shim_vfio_decode_region(buf, 8, PG, &r, err, sizeof(err)), -EPROTO);
}

Test(vfio_info, unaligned_region_fd_offset_is_eproto)
{
	struct shim_vfio_region r;
	struct vfio_region_info *ri = region_reply(4096, VFIO_REGION_INFO_FLAG_MMAP);
	ri->offset = 0x100;
	cr_assert_eq(shim_vfio_decode_region(buf, sizeof(*ri), PG, &r, err, sizeof(err)), -EPROTO);
}

/* ---- the generic chain walk ---- */

Test(vfio_info, chain_walk_finds_each_capability_and_reports_absent_ones)
{
	const struct vfio_info_cap_header *h;
	uint32_t first = 0;
	struct vfio_info_cap_header *a = cap_at(32, 7, 8, &first);
	uint32_t dummy;
	struct vfio_info_cap_header *b = cap_at(48, 9, 8, &dummy);

	memset(buf, 0, 32);
	a->id = 7; a->next = 48;
	b->id = 9; b->next = 0;
	cr_assert_eq(shim_vfio_cap_find(buf, 64, 32, 32, 9, 0, &h), 0);
	cr_assert_eq((const uint8_t *)h - (const uint8_t *)buf, 48);
	cr_assert_eq(shim_vfio_cap_find(buf, 64, 32, 32, 7, 0, &h), 0);
	cr_assert_eq(shim_vfio_cap_find(buf, 64, 32, 32, 5, 0, &h), -ENOENT);
	cr_assert_eq(shim_vfio_cap_find(buf, 64, 32, 0, 7, 0, &h), -ENOENT);
}

Test(vfio_info, chain_loop_or_backward_link_is_eproto)
{
	const struct vfio_info_cap_header *h;
	struct vfio_info_cap_header *a = (void *)((uint8_t *)buf + 32);

	memset(buf, 0, sizeof(buf));
	a->id = 1;
	a->next = 32;   /* points at itself */
	cr_assert_eq(shim_vfio_cap_find(buf, 64, 32, 32, 2, 0, &h), -EPROTO);
	a->next = 40;
	((struct vfio_info_cap_header *)((uint8_t *)buf + 40))->next = 32; /* back to the first */
	cr_assert_eq(shim_vfio_cap_find(buf, 64, 32, 32, 2, 0, &h), -EPROTO);
}

Test(vfio_info, chain_into_fixed_part_past_end_or_unaligned_is_eproto)
{
	const struct vfio_info_cap_header *h;

	memset(buf, 0, sizeof(buf));
	cr_assert_eq(shim_vfio_cap_find(buf, 64, 32, 16, 1, 0, &h), -EPROTO);  /* inside fixed part */
	cr_assert_eq(shim_vfio_cap_find(buf, 64, 32, 60, 1, 0, &h), -EPROTO);  /* header past end */
	cr_assert_eq(shim_vfio_cap_find(buf, 64, 32, 34, 1, 0, &h), -EPROTO);  /* not 4-aligned */
	((struct vfio_info_cap_header *)((uint8_t *)buf + 32))->id = 1;
	cr_assert_eq(shim_vfio_cap_find(buf, 64, 32, 32, 1, 40, &h), -EPROTO); /* body past end */
	cr_assert_eq(shim_vfio_cap_find(buf, 64, 32, 32, 1, 32, &h), 0);
}

/* ---- type1 IOMMU info ---- */

static size_t iommu_reply(const struct vfio_iova_range *r, unsigned n, int with_avail, uint32_t avail)
{
	struct vfio_iommu_type1_info *ii = (void *)buf;
	size_t off = (sizeof(*ii) + 7) & ~(size_t)7;
	uint32_t *link = &ii->cap_offset;

	memset(buf, 0, sizeof(buf));
	ii->flags = VFIO_IOMMU_INFO_PGSIZES | VFIO_IOMMU_INFO_CAPS;
	ii->iova_pgsizes = 0x40201000;  /* 4 KiB, 2 MiB, 1 GiB: x86 VT-d */
	if (n) {
		struct vfio_iommu_type1_info_cap_iova_range *cr =
			(void *)cap_at(off, VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE, 0, link);
		cr->nr_iovas = n;
		memcpy(cr->iova_ranges, r, n * sizeof(*r));
		link = &cr->header.next;
		off += sizeof(*cr) + n * sizeof(*r);
		off = (off + 7) & ~(size_t)7;
	}
	if (with_avail) {
		struct vfio_iommu_type1_info_dma_avail *da =
			(void *)cap_at(off, VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL, 0, link);
		da->avail = avail;
		off += sizeof(*da);
		off = (off + 7) & ~(size_t)7;
	}
	ii->argsz = (uint32_t)off;
	return off;
}

Test(vfio_info, iommu_info_gives_page_sizes_ranges_and_dma_avail)
{
	/* What a VT-d machine reports: everything below 48 bits except the MSI window. */
	const struct vfio_iova_range r[] = { { 0, 0xfedfffff }, { 0xfef00000, 0xffffffffffffull } };
	struct shim_vfio_iommu m;
	size_t len = iommu_reply(r, 2, 1, 65535);

	cr_assert_eq(shim_vfio_decode_iommu(buf, len, &m, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(m.pgsizes, 0x40201000);
	cr_assert_eq(m.min_pgsize, 4096);
	cr_assert_eq(m.have_ranges, 1);
	cr_assert_eq(m.nranges, 2);
	cr_assert_eq(m.range[1].start, 0xfef00000);
	cr_assert_eq(m.range[1].end, 0xffffffffffffull);
	cr_assert_eq(m.have_dma_avail, 1);
	cr_assert_eq(m.dma_avail, 65535);
}

Test(vfio_info, old_kernel_iommu_info_without_caps_decodes_page_sizes_only)
{
	struct vfio_iommu_type1_info *ii = (void *)buf;
	struct shim_vfio_iommu m;

	memset(buf, 0, sizeof(buf));
	ii->argsz = offsetof(struct vfio_iommu_type1_info, cap_offset);
	ii->flags = VFIO_IOMMU_INFO_PGSIZES;
	ii->iova_pgsizes = 0xfffffffffffff000ull;
	cr_assert_eq(shim_vfio_decode_iommu(buf, ii->argsz, &m, err, sizeof(err)), 0);
	cr_assert_eq(m.min_pgsize, 4096);
	cr_assert_eq(m.have_ranges, 0);
}

Test(vfio_info, iova_range_with_start_above_end_is_eproto)
{
	const struct vfio_iova_range r[] = { { 0x2000, 0x1000 } };
	struct shim_vfio_iommu m;
	size_t len = iommu_reply(r, 1, 0, 0);

	cr_assert_eq(shim_vfio_decode_iommu(buf, len, &m, err, sizeof(err)), -EPROTO);
}

Test(vfio_info, iova_setup_cuts_the_reserved_window_and_honours_base_and_end)
{
	const struct vfio_iova_range r[] = { { 0, 0xfedfffff }, { 0xfef00000, 0xffffffffffffull } };
	struct shim_vfio_iommu m;
	struct shim_iova_space s;
	size_t len = iommu_reply(r, 2, 0, 0);

	cr_assert_eq(shim_vfio_decode_iommu(buf, len, &m, err, sizeof(err)), 0);
	shim_iova_init(&s);
	cr_assert_eq(shim_vfio_iova_setup(&s, &m, 0x100000, 0x200000000ull, 4096), 0);
	cr_assert_eq(s.nranges, 2);
	cr_assert_eq(s.ranges[0].start, 0x100000);
	cr_assert_eq(s.ranges[0].last, 0xfedfffff);
	cr_assert_eq(s.ranges[1].start, 0xfef00000);
	cr_assert_eq(s.ranges[1].last, 0x1ffffffffull);
	shim_iova_fini(&s);
}

Test(vfio_info, iova_setup_without_ranges_uses_base_to_default_end)
{
	struct shim_vfio_iommu m;
	struct shim_iova_space s;

	memset(&m, 0, sizeof(m));
	shim_iova_init(&s);
	cr_assert_eq(shim_vfio_iova_setup(&s, &m, 0x100000, 0, 16384), 0);
	cr_assert_eq(s.nranges, 1);
	cr_assert_eq(s.ranges[0].start, 0x100000);
	cr_assert_eq(s.ranges[0].last, (1ull << 39) - 1);
	shim_iova_fini(&s);
}

Test(vfio_info, iova_setup_trims_to_the_granule_and_fails_when_nothing_is_left)
{
	const struct vfio_iova_range r[] = { { 0x1234, 0x5fff }, { 0x10000, 0x10fff } };
	struct shim_vfio_iommu m;
	struct shim_iova_space s;
	size_t len = iommu_reply(r, 2, 0, 0);

	cr_assert_eq(shim_vfio_decode_iommu(buf, len, &m, err, sizeof(err)), 0);
	shim_iova_init(&s);
	/* 16 KiB granule: 0x1234..0x5fff has only 0x4000..0x5fff, not a whole granule;
	 * 0x10000..0x10fff is 4 KiB. Neither holds 16 KiB. */
	cr_assert_eq(shim_vfio_iova_setup(&s, &m, 0, 0, 16384), -ENOSPC);
	cr_assert_eq(shim_vfio_iova_setup(&s, &m, 0, 0, 4096), 0);
	cr_assert_eq(s.ranges[0].start, 0x2000);
	cr_assert_eq(s.ranges[0].last, 0x5fff);
	shim_iova_fini(&s);
}

/* ---- interrupts ---- */

Test(vfio_info, irq_plan_caps_at_what_the_function_has)
{
	struct vfio_irq_info ii = { .argsz = sizeof(ii), .flags = VFIO_IRQ_INFO_EVENTFD | VFIO_IRQ_INFO_NORESIZE,
				    .index = VFIO_PCI_MSIX_IRQ_INDEX, .count = 64 };
	unsigned n;

	cr_assert_eq(shim_vfio_irq_plan(&ii, 16, &n, err, sizeof(err)), 0);
	cr_assert_eq(n, 16);
	ii.count = 3;
	cr_assert_eq(shim_vfio_irq_plan(&ii, 16, &n, err, sizeof(err)), 0);
	cr_assert_eq(n, 3);
	ii.count = 0;
	cr_assert_eq(shim_vfio_irq_plan(&ii, 16, &n, err, sizeof(err)), 0);
	cr_assert_eq(n, 0);
}

Test(vfio_info, irq_without_eventfd_support_is_enotsup)
{
	struct vfio_irq_info ii = { .argsz = sizeof(ii), .flags = 0, .index = VFIO_PCI_MSIX_IRQ_INDEX, .count = 8 };
	unsigned n = 99;

	cr_assert_eq(shim_vfio_irq_plan(&ii, 4, &n, err, sizeof(err)), -ENOTSUP);
	cr_assert_eq(n, 0);
	cr_assert(strstr(err, "eventfd") != NULL);
}

Test(vfio_info, irq_set_carries_one_eventfd_per_vector)
{
	const int fds[3] = { 11, 12, 13 };
	uint8_t b[64];
	struct vfio_irq_set set;
	int32_t got[3];
	size_t need = shim_vfio_irq_set_build(NULL, 0, VFIO_PCI_MSIX_IRQ_INDEX, fds, 3);

	cr_assert_eq(need, sizeof(struct vfio_irq_set) + 3 * sizeof(int32_t));
	cr_assert_eq(shim_vfio_irq_set_build(b, sizeof(b), VFIO_PCI_MSIX_IRQ_INDEX, fds, 3), need);
	memcpy(&set, b, sizeof(set));
	cr_assert_eq(set.argsz, need);
	cr_assert_eq(set.flags, VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER);
	cr_assert_eq(set.index, VFIO_PCI_MSIX_IRQ_INDEX);
	cr_assert_eq(set.start, 0);
	cr_assert_eq(set.count, 3);
	memcpy(got, b + sizeof(set), sizeof(got));
	cr_assert_eq(got[0], 11);
	cr_assert_eq(got[2], 13);
}

Test(vfio_info, irq_set_with_no_vectors_disables_the_index)
{
	uint8_t b[sizeof(struct vfio_irq_set)];
	struct vfio_irq_set set;

	cr_assert_eq(shim_vfio_irq_set_build(b, sizeof(b), VFIO_PCI_MSIX_IRQ_INDEX, NULL, 0), sizeof(b));
	memcpy(&set, b, sizeof(set));
	cr_assert_eq(set.flags, VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER);
	cr_assert_eq(set.count, 0);
}

/* Linux 6.1 (Debian 12), found in the VM (tools/vm): type1 adds the migration (32
 * bytes), DMA-available (12 bytes) and IOVA-range capabilities in that order, unpadded,
 * so the IOVA ranges start at a 4-byte aligned offset (68). */
Test(vfio_info, linux_6_1_iommu_info_with_unpadded_capabilities_decodes)
{
	struct vfio_iommu_type1_info *ii = (void *)buf;
	struct vfio_iova_range r = { 0x0, 0xfedfffff };
	uint8_t *b = (uint8_t *)buf;
	struct shim_vfio_iommu m;
	uint32_t v;
	uint16_t id;

	memset(buf, 0, sizeof(buf));
	ii->flags = VFIO_IOMMU_INFO_PGSIZES | VFIO_IOMMU_INFO_CAPS;
	ii->iova_pgsizes = 0x40201000;
	ii->cap_offset = 24;
	/* migration at 24, next 56 */
	id = VFIO_IOMMU_TYPE1_INFO_CAP_MIGRATION, memcpy(b + 24, &id, 2);
	v = 56, memcpy(b + 28, &v, 4);
	/* DMA avail at 56 (12 bytes), next 68 */
	id = VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL, memcpy(b + 56, &id, 2);
	v = 68, memcpy(b + 60, &v, 4);
	v = 65535, memcpy(b + 64, &v, 4);
	/* IOVA range at 68: header, nr_iovas, reserved, then the ranges at 84 */
	id = VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE, memcpy(b + 68, &id, 2);
	v = 1, memcpy(b + 76, &v, 4);
	memcpy(b + 84, &r, sizeof(r));
	ii->argsz = 84 + sizeof(r);
	cr_assert_eq(shim_vfio_decode_iommu(buf, ii->argsz, &m, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(m.have_ranges, 1);
	cr_assert_eq(m.nranges, 1);
	cr_assert_eq(m.range[0].end, 0xfedfffffu);
	cr_assert_eq(m.have_dma_avail, 1);
	cr_assert_eq(m.dma_avail, 65535u);
}

