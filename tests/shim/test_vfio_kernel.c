/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The whole VFIO shim (hw/shim/vfio.c) against a scripted VFIO kernel: this test
 * program defines ioctl(), so the shim's VFIO ioctls land in a model of the kernel's
 * behaviour (include/uapi/linux/vfio.h) while everything else is real: the device fd
 * is a memfd holding BAR0 at offset 0 and config space at CFG_OFF (so pread/pwrite of
 * config space and mmap of the BAR are the shim's real calls), interrupts are real
 * eventfds, and fake sysfs and /dev trees live in a temporary directory.
 * The model refuses what the kernel refuses (overlapping IOVAs, IOVAs outside the valid
 * ranges, unaligned maps, unmaps of ranges never mapped), and records every call, so
 * the tests assert on what the shim asked the kernel to do. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/vfio.h>

#include "hw/shim/shim.h"
#include "hw/shim/vfio_dev.h"

#define BAR0_LEN (32u << 20)
#define CFG_OFF (64ull << 20)
#define MAXMAP 64

static struct {
	int devfd;
	int viable;
	int info_calls;
	int set_container, set_iommu, resets;
	struct { uint64_t iova, size, vaddr; uint32_t flags; } map[MAXMAP];
	unsigned nmap, map_calls, unmap_calls;
	uint64_t ro_vaddr;               /* pages at this VA are not writable (EFAULT) */
	uint64_t gone_vaddr;             /* nothing is mapped at this VA (EFAULT either way) */
	unsigned irq_count;
	int irq_fds[64];
	uint32_t irq_flags;
} K;

/* The IOMMU's valid ranges: everything below 48 bits except the x86 MSI window. */
static const struct vfio_iova_range ranges[] = { { 0, 0xfedfffff }, { 0xfef00000, 0xffffffffffffull } };

static int in_ranges(uint64_t iova, uint64_t size)
{
	for (unsigned i = 0; i < 2; i++)
		if (iova >= ranges[i].start && iova + size - 1 <= ranges[i].end)
			return 1;
	return 0;
}

static int fake_iommu_info(struct vfio_iommu_type1_info *ii)
{
	size_t need = 24 + sizeof(struct vfio_iommu_type1_info_cap_iova_range) + sizeof(ranges);

	K.info_calls++;
	ii->flags = VFIO_IOMMU_INFO_PGSIZES | VFIO_IOMMU_INFO_CAPS;
	ii->iova_pgsizes = 0x40201000;
	if (ii->argsz < need) {          /* too small: say how much, no chain (vfio.h) */
		ii->argsz = (uint32_t)need;
		ii->cap_offset = 0;
		return 0;
	}
	ii->cap_offset = 24;
	struct vfio_iommu_type1_info_cap_iova_range *cr = (void *)((uint8_t *)ii + 24);
	cr->header.id = VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE;
	cr->header.version = 1;
	cr->header.next = 0;
	cr->nr_iovas = 2;
	memcpy(cr->iova_ranges, ranges, sizeof(ranges));
	ii->argsz = (uint32_t)need;
	return 0;
}

static int fake_region(struct vfio_region_info *ri)
{
	ri->cap_offset = 0;
	if (ri->index == VFIO_PCI_BAR0_REGION_INDEX) {
		ri->flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE | VFIO_REGION_INFO_FLAG_MMAP;
		ri->size = BAR0_LEN;
		ri->offset = 0;
	} else if (ri->index == VFIO_PCI_CONFIG_REGION_INDEX) {
		ri->flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE;
		ri->size = 256;
		ri->offset = CFG_OFF;
	} else {
		ri->flags = 0;
		ri->size = 0;
		ri->offset = 0;
	}
	return 0;
}

static int fake_map(const struct vfio_iommu_type1_dma_map *m)
{
	K.map_calls++;
	if ((m->iova | m->size | m->vaddr) & 0xfff || m->size == 0)
		return errno = EINVAL, -1;
	/* vfio_iommu_type1 pins with FOLL_WRITE when the mapping is writable */
	if (K.ro_vaddr && m->vaddr == K.ro_vaddr && (m->flags & VFIO_DMA_MAP_FLAG_WRITE))
		return errno = EFAULT, -1;
	if (K.gone_vaddr && m->vaddr == K.gone_vaddr)
		return errno = EFAULT, -1;
	if (!in_ranges(m->iova, m->size))
		return errno = EINVAL, -1;
	for (unsigned i = 0; i < K.nmap; i++)
		if (m->iova < K.map[i].iova + K.map[i].size && K.map[i].iova < m->iova + m->size)
			return errno = EEXIST, -1;
	if (K.nmap == MAXMAP)
		return errno = ENOSPC, -1;
	K.map[K.nmap].iova = m->iova;
	K.map[K.nmap].size = m->size;
	K.map[K.nmap].vaddr = m->vaddr;
	K.map[K.nmap].flags = m->flags;
	K.nmap++;
	return 0;
}

static int fake_unmap(const struct vfio_iommu_type1_dma_unmap *u)
{
	K.unmap_calls++;
	for (unsigned i = 0; i < K.nmap; i++)
		if (K.map[i].iova == u->iova && K.map[i].size == u->size) {
			K.map[i] = K.map[--K.nmap];
			return 0;
		}
	return errno = EINVAL, -1;
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);

	switch (req) {
	case VFIO_GET_API_VERSION: return VFIO_API_VERSION;
	case VFIO_CHECK_EXTENSION: return ((uintptr_t)arg & 0xffffffffu) == VFIO_TYPE1v2_IOMMU;
	case VFIO_GROUP_GET_STATUS:
		((struct vfio_group_status *)arg)->flags = K.viable ? VFIO_GROUP_FLAGS_VIABLE : 0;
		return 0;
	case VFIO_GROUP_SET_CONTAINER: K.set_container++; return 0;
	case VFIO_SET_IOMMU: K.set_iommu += ((uintptr_t)arg & 0xffffffffu) == VFIO_TYPE1v2_IOMMU; return 0;
	case VFIO_IOMMU_GET_INFO: return fake_iommu_info(arg);
	case VFIO_GROUP_GET_DEVICE_FD:
		if (strcmp(arg, "0000:03:00.0") != 0)
			return errno = ENODEV, -1;
		return dup(K.devfd);
	case VFIO_DEVICE_GET_INFO: {
		struct vfio_device_info *di = arg;
		di->flags = VFIO_DEVICE_FLAGS_PCI | VFIO_DEVICE_FLAGS_RESET;
		di->num_regions = VFIO_PCI_NUM_REGIONS;
		di->num_irqs = VFIO_PCI_NUM_IRQS;
		return 0;
	}
	case VFIO_DEVICE_GET_REGION_INFO: return fake_region(arg);
	case VFIO_DEVICE_GET_IRQ_INFO: {
		struct vfio_irq_info *ii = arg;
		ii->flags = ii->index == VFIO_PCI_MSIX_IRQ_INDEX ? VFIO_IRQ_INFO_EVENTFD | VFIO_IRQ_INFO_NORESIZE : 0;
		ii->count = ii->index == VFIO_PCI_MSIX_IRQ_INDEX ? 64 : 0;
		return 0;
	}
	case VFIO_DEVICE_SET_IRQS: {
		struct vfio_irq_set *s = arg;
		K.irq_flags = s->flags;
		K.irq_count = s->count;
		if (s->count <= 64 && (s->flags & VFIO_IRQ_SET_DATA_EVENTFD))
			memcpy(K.irq_fds, s->data, s->count * sizeof(int));
		return 0;
	}
	case VFIO_DEVICE_RESET: K.resets++; return 0;
	case VFIO_IOMMU_MAP_DMA: return fake_map(arg);
	case VFIO_IOMMU_UNMAP_DMA: return fake_unmap(arg);
	default:
		return (int)syscall(SYS_ioctl, fd, req, arg);
	}
}

/* ---- the fake system ---- */

static char root[PATH_MAX], sys_root[PATH_MAX + 8], dev_root[PATH_MAX + 8];

static void run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void run(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

static void cfg_put16(unsigned off, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	cr_assert_eq(pwrite(K.devfd, b, 2, (off_t)(CFG_OFF + off)), 2);
}

static uint16_t cfg_get16(unsigned off)
{
	uint8_t b[2];
	cr_assert_eq(pread(K.devfd, b, 2, (off_t)(CFG_OFF + off)), 2);
	return (uint16_t)(b[0] | b[1] << 8);
}

static void setup(void)
{
	memset(&K, 0, sizeof(K));
	K.viable = 1;
	snprintf(root, sizeof(root), "/tmp/uv-vfio-kernel-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	snprintf(sys_root, sizeof(sys_root), "%s/sys", root);
	snprintf(dev_root, sizeof(dev_root), "%s/dev", root);
	run("d='%s/bus/pci/devices/0000:03:00.0'; mkdir -p \"$d\" '%s/bus/pci/drivers/vfio-pci' "
	    "'%s/kernel/iommu_groups/7/devices' '%s/vfio' && echo 0x15b3 > \"$d/vendor\" && "
	    "echo 0x1017 > \"$d/device\" && ln -s ../../../bus/pci/drivers/vfio-pci \"$d/driver\" && "
	    "ln -s ../../../kernel/iommu_groups/7 \"$d/iommu_group\" && "
	    "ln -s ../../../../bus/pci/devices/0000:03:00.0 '%s/kernel/iommu_groups/7/devices/0000:03:00.0' && "
	    ": > '%s/vfio/vfio' && : > '%s/vfio/7'",
	    sys_root, sys_root, sys_root, dev_root, sys_root, dev_root, dev_root);

	K.devfd = memfd_create("uv-fake-connectx", MFD_CLOEXEC);
	cr_assert_geq(K.devfd, 0);
	cr_assert_eq(ftruncate(K.devfd, (off_t)(CFG_OFF + 4096)), 0);
	/* ConnectX-5 config space: ids, capability list with the PCIe capability at 0x60
	 * (gen3 x8 link, MPS 256), memory decoding on, bus mastering off. */
	cfg_put16(0x00, 0x15b3);
	cfg_put16(0x02, 0x1017);
	cfg_put16(0x04, 0x0002);
	cfg_put16(0x06, 0x0010);
	cfg_put16(0x2c, 0x15b3);
	cfg_put16(0x2e, 0x0008);
	cfg_put16(0x34, 0x60);
	cfg_put16(0x60, 0x0010);      /* id 0x10, next 0 */
	cfg_put16(0x68, 0x0020);
	cfg_put16(0x72, (8u << 4) | 3);
}

static void teardown(void)
{
	close(K.devfd);
	run("rm -rf '%s'", root);
}

TestSuite(vfio_kernel, .init = setup, .fini = teardown);

static struct shim_dev *open_ok(const char *args)
{
	struct shim_dev *d = NULL;
	int rc = shim_vfio_open_at(args, sys_root, dev_root, &d);
	cr_assert_eq(rc, 0, "open: %d %s", rc, d ? d->err : "");
	return d;
}

Test(vfio_kernel, open_reports_ids_and_link_from_config_space)
{
	struct shim_dev *d = open_ok("03:00.0,memlock=0");
	cr_assert_eq(d->pci.vendor_id, 0x15b3);
	cr_assert_eq(d->pci.device_id, 0x1017);
	cr_assert_eq(d->pci.subsys_device_id, 0x0008);
	cr_assert_eq(d->pci.link_speed_gen, 3);
	cr_assert_eq(d->pci.link_width, 8);
	cr_assert_eq(d->pci.max_payload_bytes, 256);
	cr_assert_eq(d->page_size, (size_t)sysconf(_SC_PAGESIZE));
	cr_assert_eq(K.set_container, 1);
	cr_assert_eq(K.set_iommu, 1, "type1v2 must be the IOMMU set");
	d->ops->close(d);
}

Test(vfio_kernel, iommu_info_is_asked_again_with_the_size_the_kernel_wants)
{
	struct shim_dev *d = open_ok("03:00.0,memlock=0");
	cr_assert_eq(K.info_calls, 2);
	d->ops->close(d);
}

Test(vfio_kernel, bus_mastering_is_on_after_open_and_off_after_close)
{
	struct shim_dev *d = open_ok("03:00.0,memlock=0");
	cr_assert_eq(cfg_get16(0x04) & 0x6, 0x6, "memory + bus master enable");
	d->ops->close(d);
	cr_assert_eq(cfg_get16(0x04) & 0x4, 0, "bus master must be off after close");
}

Test(vfio_kernel, bar0_is_the_device_mapping_without_wc_or_hook)
{
	struct shim_dev *d = open_ok("03:00.0,memlock=0");
	struct shim_bar b;
	uint32_t got = 0;

	cr_assert_eq(d->ops->bar(d, 0, &b), 0);
	cr_assert_eq(b.len, BAR0_LEN);
	cr_assert_null(b.wc_base);
	cr_assert_null(b.hook);
	*(volatile uint32_t *)(b.base + 0x1000) = 0x12345678;
	cr_assert_eq(pread(K.devfd, &got, 4, 0x1000), 4);
	cr_assert_eq(got, 0x12345678, "a store through the BAR must reach the device fd's region");
	cr_assert_eq(d->ops->bar(d, 2, &b), -ENOENT, "an absent BAR is ENOENT: %s", d->err);
	d->ops->close(d);
}

Test(vfio_kernel, dma_alloc_maps_zeroed_memory_at_an_aligned_iova_unlike_the_va)
{
	struct shim_dev *d = open_ok("03:00.0,memlock=0");
	struct shim_dma a, b;

	cr_assert_eq(d->ops->dma_alloc(d, 4096, 4096, &a), 0, "%s", d->err);
	cr_assert_eq(d->ops->dma_alloc(d, 10000, 1 << 16, &b), 0, "%s", d->err);
	cr_assert_eq(K.nmap, 2);
	cr_assert_neq(a.iova, (uint64_t)(uintptr_t)a.va);
	cr_assert_eq(b.iova & 0xffff, 0, "64 KiB alignment asked");
	cr_assert_geq(a.iova, 0x100000, "iova_base default");
	cr_assert_eq(K.map[1].vaddr, (uint64_t)(uintptr_t)b.va);
	cr_assert_eq(K.map[1].size, 12288);
	cr_assert_eq(K.map[1].flags, VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE);
	cr_assert_eq(((uint8_t *)b.va)[9999], 0);
	memset(b.va, 0xab, 10000);
	d->ops->dma_free(d, &a);
	cr_assert_eq(K.nmap, 1);
	cr_assert_null(a.priv);
	d->ops->close(d);
	cr_assert_eq(K.nmap, 0, "close must unmap what is still mapped");
}

Test(vfio_kernel, iova_base_option_moves_every_allocation_above_it)
{
	struct shim_dev *d = open_ok("03:00.0,memlock=0,iova_base=0x100000000");
	struct shim_dma a;

	cr_assert_eq(d->ops->dma_alloc(d, 4096, 0, &a), 0, "%s", d->err);
	cr_assert_eq(a.iova, 0x100000000ull);
	d->ops->close(d);
}

Test(vfio_kernel, pin_of_an_unaligned_buffer_keeps_its_offset_in_the_iova)
{
	struct shim_dev *d = open_ok("03:00.0,memlock=0");
	size_t pg = d->page_size;
	uint8_t *buf = aligned_alloc(pg, 4 * pg);
	struct shim_pin p;

	cr_assert_eq(d->ops->dma_pin(d, buf + 100, 2 * pg, &p), 0, "%s", d->err);
	cr_assert_eq(p.nseg, 1);
	cr_assert_eq(p.seg[0].len, 2 * pg);
	cr_assert_eq(p.seg[0].iova & (pg - 1), 100);
	cr_assert_eq(K.nmap, 1);
	cr_assert_eq(K.map[0].vaddr, (uint64_t)(uintptr_t)buf);
	cr_assert_eq(K.map[0].size, 3 * pg, "the range touches three pages");
	cr_assert_eq(p.seg[0].iova - 100, K.map[0].iova);
	d->ops->dma_unpin(d, &p);
	cr_assert_eq(K.nmap, 0);
	cr_assert_eq(K.unmap_calls, 1);
	d->ops->close(d);
	free(buf);
}

/* A pin of 2 MiB or more goes at an IOVA congruent to its VA modulo 2 MiB, so the
 * driver's MKey can use 2 MiB pages (hw/mlx5/mr.c mx5_best_page_shift; Linux mlx5_ib
 * mlx5_umem_find_best_pgsz), not 4 KiB ones. */
Test(vfio_kernel, large_pin_iova_is_congruent_to_its_va_modulo_2_mib)
{
	struct shim_dev *d = open_ok("03:00.0,memlock=0");
	size_t len = 6u << 20;
	uint8_t *buf = aligned_alloc(1u << 21, len + (1u << 21));
	uint8_t *va = buf + 0x123000;   /* not 2 MiB aligned */
	struct shim_pin p;

	cr_assert_eq(d->ops->dma_pin(d, va, len, &p), 0, "%s", d->err);
	cr_assert_eq(p.nseg, 1);
	cr_assert_eq((p.seg[0].iova ^ (uint64_t)(uintptr_t)va) & ((2u << 20) - 1), 0,
		     "iova 0x%llx, va %p", (unsigned long long)p.seg[0].iova, (void *)va);
	d->ops->dma_unpin(d, &p);
	d->ops->close(d);
	free(buf);
}

Test(vfio_kernel, pin_of_read_only_pages_is_mapped_for_reading_and_says_so)
{
	struct shim_dev *d = open_ok("03:00.0,memlock=0");
	size_t pg = d->page_size;
	uint8_t *buf = aligned_alloc(pg, 2 * pg);
	struct shim_pin p, w;

	K.ro_vaddr = (uint64_t)(uintptr_t)buf;
	cr_assert_eq(shim_dma_pin(d, buf, pg, &p), 0, "%s", d->err);
	cr_assert_eq(p.readonly, 1, "the driver must learn the device may not write there");
	cr_assert_eq(K.map[0].flags, VFIO_DMA_MAP_FLAG_READ);
	cr_assert_eq(shim_dma_pin(d, buf + pg, pg, &w), 0, "%s", d->err);
	cr_assert_eq(w.readonly, 0, "writable pages are mapped for writing");
	d->ops->dma_unpin(d, &p);
	d->ops->dma_unpin(d, &w);
	K.ro_vaddr = 0;
	d->ops->close(d);
	free(buf);
}

/* get_user_pages finds nothing at the address: EFAULT whether asked for writing or
 * reading, and the pin fails with -EFAULT (as ib_umem_get makes ibv_reg_mr fail),
 * its IOVA range given back. */
Test(vfio_kernel, pin_of_unmapped_memory_is_efault_and_maps_nothing)
{
	struct shim_dev *d = open_ok("03:00.0,memlock=0");
	size_t pg = d->page_size;
	uint8_t *buf = aligned_alloc(pg, 2 * pg);
	struct shim_pin p, q;

	K.gone_vaddr = (uint64_t)(uintptr_t)buf;
	cr_assert_eq(shim_dma_pin(d, buf, pg, &p), -EFAULT);
	cr_assert_eq(K.nmap, 0);
	cr_assert(strstr(d->err, "not mapped"), "names the cause: %s", d->err);
	K.gone_vaddr = 0;
	cr_assert_eq(shim_dma_pin(d, buf, pg, &q), 0, "%s", d->err);
	d->ops->dma_unpin(d, &q);
	d->ops->close(d);
	free(buf);
}

Test(vfio_kernel, close_unmaps_every_allocation_and_pin)
{
	struct shim_dev *d = open_ok("03:00.0,memlock=0");
	uint8_t *buf = aligned_alloc(4096, 8 * 4096);
	struct shim_dma a[3];
	struct shim_pin p[2];

	for (int i = 0; i < 3; i++)
		cr_assert_eq(d->ops->dma_alloc(d, 4096 * (i + 1), 4096, &a[i]), 0, "%s", d->err);
	cr_assert_eq(d->ops->dma_pin(d, buf, 4096, &p[0]), 0);
	cr_assert_eq(d->ops->dma_pin(d, buf, 4096, &p[1]), 0, "the same memory may be pinned twice");
	cr_assert_neq(p[0].seg[0].iova, p[1].seg[0].iova);
	cr_assert_eq(K.nmap, 5);
	d->ops->close(d);
	cr_assert_eq(K.nmap, 0);
	cr_assert_eq(K.unmap_calls, 5);
	free(buf);
}

Test(vfio_kernel, msix_vectors_get_one_eventfd_each_and_are_disabled_at_close)
{
	struct shim_dev *d = open_ok("03:00.0,memlock=0,msix=4");
	uint64_t one = 1, got = 0;

	cr_assert_eq(d->ops->irq_count(d), 4);
	cr_assert_eq(K.irq_count, 4);
	cr_assert_eq(K.irq_flags, VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER);
	for (unsigned i = 0; i < 4; i++)
		cr_assert_eq(d->ops->irq_fd(d, i), K.irq_fds[i]);
	cr_assert_eq(d->ops->irq_fd(d, 4), -EINVAL);
	/* What the kernel does on an interrupt: signal the eventfd; the driver reads 8 bytes. */
	cr_assert_eq(write(K.irq_fds[2], &one, 8), 8);
	cr_assert_eq(read(d->ops->irq_fd(d, 2), &got, 8), 8);
	cr_assert_eq(got, 1);
	cr_assert_eq(read(d->ops->irq_fd(d, 1), &got, 8), -1, "no interrupt pending, and non-blocking");
	d->ops->close(d);
	cr_assert_eq(K.irq_count, 0);
	cr_assert_eq(K.irq_flags, VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER);
}

Test(vfio_kernel, reset_asks_the_kernel_and_keeps_bus_mastering)
{
	struct shim_dev *d = open_ok("03:00.0,memlock=0");
	cfg_put16(0x04, 0x0000);       /* as if the reset had cleared the command register */
	cr_assert_eq(d->ops->reset(d), 0, "%s", d->err);
	cr_assert_eq(K.resets, 1);
	cr_assert_eq(cfg_get16(0x04) & 0x4, 0x4);
	d->ops->close(d);
}

Test(vfio_kernel, group_not_viable_is_ebusy_naming_the_other_device)
{
	struct shim_dev *d = NULL;
	K.viable = 0;
	run("d='%s/bus/pci/devices/0000:03:00.1'; mkdir -p \"$d\" '%s/bus/pci/drivers/mlx5_core' && "
	    "ln -s ../../../bus/pci/drivers/mlx5_core \"$d/driver\" && "
	    "ln -s ../../../../bus/pci/devices/0000:03:00.1 '%s/kernel/iommu_groups/7/devices/0000:03:00.1'",
	    sys_root, sys_root, sys_root);
	cr_assert_eq(shim_vfio_open_at("03:00.0,memlock=0", sys_root, dev_root, &d), -EBUSY);
	cr_assert(strstr(d->err, "0000:03:00.1 (mlx5_core)") != NULL, "%s", d->err);
	d->ops->close(d);
}

Test(vfio_kernel, config_space_of_another_vendor_is_enodev)
{
	struct shim_dev *d = NULL;
	cfg_put16(0x00, 0x8086);
	cr_assert_eq(shim_vfio_open_at("03:00.0,memlock=0", sys_root, dev_root, &d), -ENODEV);
	cr_assert(strstr(d->err, "not a Mellanox") != NULL, "%s", d->err);
	d->ops->close(d);
}

Test(vfio_kernel, iova_range_without_room_is_enospc_at_alloc)
{
	/* 64 KiB of IOVA space: the second 64 KiB allocation cannot fit. */
	struct shim_dev *d = open_ok("03:00.0,memlock=0,iova_base=0x100000,iova_end=0x110000");
	struct shim_dma a, b;

	cr_assert_eq(d->ops->dma_alloc(d, 0x10000, 0, &a), 0, "%s", d->err);
	cr_assert_eq(d->ops->dma_alloc(d, 0x10000, 0, &b), -ENOSPC);
	cr_assert(strstr(d->err, "no free IOVA") != NULL, "%s", d->err);
	cr_assert_eq(K.nmap, 1);
	d->ops->close(d);
}
