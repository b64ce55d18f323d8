/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/shim/vfio.c: the Linux shim. A ConnectX function bound to vfio-pci is driven from
 * this process: VFIO maps its BARs, pins memory at IOVAs we choose, and forwards MSI-X
 * interrupts to eventfds (Linux Documentation/driver-api/vfio.rst, include/uapi/linux/vfio.h).
 *
 * Open, in order: the URI (vfio_uri.c); sysfs (vfio_sysfs.c: device present, a ConnectX,
 * IOMMU group, bound to vfio-pci); /dev/vfio/vfio (API version, type1v2 IOMMU); the
 * locked-memory limit; the group (viable), set container, set IOMMU, IOMMU info (valid
 * IOVA ranges, page sizes: vfio_info.c); the device fd; config space (ids, PCIe link:
 * vfio_pcicfg.c); bus mastering on; BAR0 mapped; MSI-X vectors with one eventfd each.
 * Each failure leaves its reason, naming the device and the remedy, in dev->err.
 *
 * Memory: every IOMMU mapping (driver allocations and application pins) is recorded,
 * so that close can turn bus mastering off and unmap all of it. IOVAs come from our own
 * allocator (vfio_iova.c) and never equal the VA (docs/architecture.md, "The shim interface and its MMIO hook").
 *
 * Registers are plain loads and stores into the BAR mapping (no hook). Linux VFIO maps
 * BARs uncached and offers no write-combining mapping, so shim_bar.wc_base is NULL here
 * and BlueFlame falls back to ordinary doorbells.
 *
 * What calls this: shim.c (shim_open with a "vfio:" URI). What it calls: the kernel only.
 */
#include "hw/shim/shim.h"
#include "hw/shim/backend.h"
#include "hw/shim/vfio_dev.h"
#include "hw/shim/vfio_info.h"
#include "hw/shim/vfio_iova.h"
#include "hw/shim/vfio_pcicfg.h"
#include "hw/shim/vfio_sysfs.h"
#include "hw/shim/vfio_uri.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <linux/vfio.h>

/* One IOMMU mapping this process made. */
struct vfio_map {
	struct plat_list link;       /* in vfio_dev.maps */
	uint64_t iova;               /* granule aligned */
	uint64_t len;                /* granule multiple */
	void *va;                    /* start of the mapped user range */
	int owned;                   /* dma_alloc memory: munmap it on free */
	struct shim_iova_seg seg;    /* what a pin reports */
};

struct vfio_bar {
	int mapped;
	void *base;
	size_t maplen;
	uint64_t size;
};

struct vfio_dev {
	struct shim_dev dev;         /* first: shim.c sees a struct shim_dev */
	struct shim_vfio_uri uri;
	int container, group, device;
	int group_id;
	uint32_t dev_flags;
	uint32_t num_regions;
	struct shim_vfio_region cfg; /* the config space region */
	struct vfio_bar bar[SHIM_MAX_BARS];
	uint64_t gran;               /* IOMMU mapping granule: max(host page, IOMMU page) */
	struct shim_iova_space iova;
	int iova_ready;
	pthread_mutex_t lock;        /* maps, iova, bars: pins come from any thread */
	struct plat_list maps;       /* every vfio_map */
	uint64_t mapped_bytes;
	unsigned nirq;
	int *irqfd;
	int master_on;
	char sysfs_root[PATH_MAX / 2];
};

#define verr(v, ...) shim_errf(&(v)->dev, __VA_ARGS__)

static struct vfio_dev *to_vfio(struct shim_dev *d)
{
	return (struct vfio_dev *)d;
}

/* ---- config space through the VFIO config region ---- */

static int cfg_read(struct vfio_dev *v, unsigned off, void *buf, size_t len)
{
	ssize_t n = pread(v->device, buf, len, (off_t)(v->cfg.fd_offset + off));

	return n == (ssize_t)len ? 0 : (n < 0 ? -errno : -EIO);
}

static int cfg_write16(struct vfio_dev *v, unsigned off, uint16_t val)
{
	uint8_t b[2] = { (uint8_t)val, (uint8_t)(val >> 8) };  /* config space is little-endian */
	ssize_t n = pwrite(v->device, b, 2, (off_t)(v->cfg.fd_offset + off));

	return n == 2 ? 0 : (n < 0 ? -errno : -EIO);
}

static int cfg_set_master(struct vfio_dev *v, int on)
{
	uint8_t b[2];
	uint16_t cmd;
	int rc = cfg_read(v, SHIM_PCI_COMMAND, b, 2);

	if (rc < 0)
		return rc;
	cmd = (uint16_t)(b[0] | b[1] << 8);
	if (on)
		cmd |= SHIM_PCI_CMD_MEMORY | SHIM_PCI_CMD_MASTER;
	else
		cmd &= (uint16_t)~SHIM_PCI_CMD_MASTER;
	return cfg_write16(v, SHIM_PCI_COMMAND, cmd);
}

/* ---- INFO ioctls: ask, and ask again with the size the kernel wants for its caps ---- */

/* One INFO ioctl whose structure starts with argsz (vfio.h): ask with the structure's
 * size, then again with the argsz the kernel answered, which covers its capability
 * chain.  index_off != 0: the request carries a region index there.  On success *out
 * (freed by the caller) holds *outlen bytes of answer. */
static int vfio_info_ioctl(struct vfio_dev *v, int fd, unsigned long req, const char *what,
			   size_t sz, size_t index_off, uint32_t index, uint64_t **out,
			   size_t *outlen)
{
	uint64_t *buf = NULL;

	for (int tries = 0; tries < 4; tries++) {
		uint64_t *nb = realloc(buf, (sz + 7) & ~(size_t)7);
		uint32_t argsz = (uint32_t)sz;

		if (!nb) {
			free(buf);
			return -ENOMEM;
		}
		buf = nb;
		memset(buf, 0, sz);
		memcpy(buf, &argsz, sizeof(argsz));
		if (index_off)
			memcpy((uint8_t *)buf + index_off, &index, sizeof(index));
		if (ioctl(fd, req, buf) < 0) {
			int rc = -errno;

			verr(v, "vfio: %s: %s: %s", v->dev.pci.bdf, what, strerror(-rc));
			free(buf);
			return rc;
		}
		memcpy(&argsz, buf, sizeof(argsz));
		if (argsz <= sz) {
			*out = buf;
			*outlen = sz;
			return 0;
		}
		sz = argsz;
	}
	free(buf);
	verr(v, "vfio: %s: %s: the answer keeps growing", v->dev.pci.bdf, what);
	return -EPROTO;
}

static int get_region_info(struct vfio_dev *v, uint32_t index, struct shim_vfio_region *out)
{
	char what[48];
	uint64_t *buf;
	size_t len;
	int rc;

	snprintf(what, sizeof(what), "VFIO_DEVICE_GET_REGION_INFO(%u)", index);
	rc = vfio_info_ioctl(v, v->device, VFIO_DEVICE_GET_REGION_INFO, what,
			     sizeof(struct vfio_region_info), offsetof(struct vfio_region_info, index),
			     index, &buf, &len);
	if (rc < 0)
		return rc;
	rc = shim_vfio_decode_region(buf, len, v->dev.page_size, out, v->dev.err, sizeof(v->dev.err));
	free(buf);
	return rc;
}

static int get_iommu_info(struct vfio_dev *v, struct shim_vfio_iommu *out)
{
	uint64_t *buf;
	size_t len;
	int rc = vfio_info_ioctl(v, v->container, VFIO_IOMMU_GET_INFO, "VFIO_IOMMU_GET_INFO",
				 sizeof(struct vfio_iommu_type1_info), 0, 0, &buf, &len);

	if (rc < 0)
		return rc;
	rc = shim_vfio_decode_iommu(buf, len, out, v->dev.err, sizeof(v->dev.err));
	free(buf);
	return rc;
}

/* ---- the steps of open ---- */

static int open_container(struct vfio_dev *v, const char *dev_root)
{
	char path[PATH_MAX];
	int api;

	snprintf(path, sizeof(path), "%s/vfio/vfio", dev_root);
	v->container = open(path, O_RDWR | O_CLOEXEC);
	if (v->container < 0) {
		int e = errno;
		if (e == ENOENT)
			verr(v, "vfio: %s does not exist: load VFIO (`modprobe vfio-pci`) with the IOMMU on "
			     "(intel_iommu=on on Intel; AMD-Vi/VT-d enabled in firmware)", path);
		else
			verr(v, "vfio: cannot open %s: %s", path, strerror(e));
		return e == ENOENT ? -ENODEV : -e;
	}
	api = ioctl(v->container, VFIO_GET_API_VERSION);
	if (api != VFIO_API_VERSION) {
		verr(v, "vfio: %s is not a VFIO container of API version %d (%s)", path, VFIO_API_VERSION,
		     api < 0 ? strerror(errno) : "other version");
		return -EPROTO;
	}
	/* Type1v2 unmaps exactly what was mapped and allows unmap of partial pages to fail
	 * cleanly; it is what every current kernel offers for PCIe devices. */
	if (ioctl(v->container, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU) != 1) {
		verr(v, "vfio: this kernel's VFIO has no type1v2 IOMMU backend (vfio_iommu_type1 module)");
		return -ENOTSUP;
	}
	return 0;
}

static int caps_have_ipc_lock(void)
{
	char buf[4096];
	ssize_t n;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return shim_vfio_status_has_ipc_lock(buf);
}

static int check_memlock(struct vfio_dev *v)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0)
		return 0;
	return shim_vfio_memlock_check(rl.rlim_cur, rl.rlim_cur == RLIM_INFINITY, caps_have_ipc_lock(),
				       v->uri.memlock_need, v->dev.err, sizeof(v->dev.err));
}

static int open_group(struct vfio_dev *v, const char *dev_root)
{
	struct vfio_group_status st = { .argsz = sizeof(st) };
	char path[PATH_MAX];
	int rc;

	snprintf(path, sizeof(path), "%s/vfio/%d", dev_root, v->group_id);
	v->group = open(path, O_RDWR | O_CLOEXEC);
	if (v->group < 0) {
		int e = errno;
		if (e == EBUSY)
			verr(v, "vfio: %s: IOMMU group %d is already open in another process (another "
			     "uverbs program, or a VM)", v->dev.pci.bdf, v->group_id);
		else if (e == EACCES || e == EPERM)
			verr(v, "vfio: no permission to open %s: run as root or give it to your user "
			     "(sudo chown $USER %s)", path, path);
		else if (e == ENOENT)
			verr(v, "vfio: %s missing although %s is bound to vfio-pci: rerun tools/vfio-bind %s",
			     path, v->dev.pci.bdf, v->dev.pci.bdf);
		else
			verr(v, "vfio: cannot open %s: %s", path, strerror(e));
		return e == ENOENT ? -ENODEV : -e;
	}
	if (ioctl(v->group, VFIO_GROUP_GET_STATUS, &st) < 0) {
		rc = -errno;
		verr(v, "vfio: %s: VFIO_GROUP_GET_STATUS: %s", path, strerror(-rc));
		return rc;
	}
	if (!(st.flags & VFIO_GROUP_FLAGS_VIABLE)) {
		char list[160];
		int n = shim_vfio_group_blockers(v->sysfs_root, v->group_id, list, sizeof(list));

		if (n > 0)
			verr(v, "vfio: IOMMU group %d is not viable: %s share it and are bound to other "
			     "drivers; bind them to vfio-pci too (tools/vfio-bind) or unbind them",
			     v->group_id, list);
		else
			verr(v, "vfio: IOMMU group %d is not viable: every device in "
			     "/sys/kernel/iommu_groups/%d/devices must be bound to vfio-pci or unbound",
			     v->group_id, v->group_id);
		return -EBUSY;
	}
	if (ioctl(v->group, VFIO_GROUP_SET_CONTAINER, &v->container) < 0) {
		rc = -errno;
		verr(v, "vfio: group %d: VFIO_GROUP_SET_CONTAINER: %s", v->group_id, strerror(-rc));
		return rc;
	}
	if (ioctl(v->container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU) < 0) {
		rc = -errno;
		verr(v, "vfio: group %d: VFIO_SET_IOMMU(type1v2): %s", v->group_id, strerror(-rc));
		return rc;
	}
	return 0;
}

static int setup_iova(struct vfio_dev *v)
{
	struct shim_vfio_iommu mmu;
	int rc = get_iommu_info(v, &mmu);

	if (rc < 0)
		return rc;
	v->gran = v->dev.page_size;
	/* An IOMMU whose smallest page is larger than the host page (a 16 KiB-granule
	 * SMMU under a 4 KiB kernel) can only map whole IOMMU pages. */
	if (mmu.min_pgsize > v->gran)
		v->gran = mmu.min_pgsize;
	rc = shim_vfio_iova_setup(&v->iova, &mmu, v->uri.iova_base, v->uri.iova_end, v->gran);
	if (rc < 0) {
		verr(v, "vfio: %s: no usable IOVA range between iova_base 0x%llx and iova_end 0x%llx "
		     "inside the IOMMU's valid ranges", v->dev.pci.bdf, (unsigned long long)v->uri.iova_base,
		     (unsigned long long)v->uri.iova_end);
		return rc;
	}
	v->iova_ready = 1;
	return 0;
}

static int open_device(struct vfio_dev *v)
{
	struct vfio_device_info di = { .argsz = sizeof(di) };
	uint8_t cfg[256];
	struct shim_pcie_cfg pc;
	int rc;

	v->device = ioctl(v->group, VFIO_GROUP_GET_DEVICE_FD, v->dev.pci.bdf);
	if (v->device < 0) {
		rc = -errno;
		verr(v, "vfio: group %d has no device %s (VFIO_GROUP_GET_DEVICE_FD: %s)", v->group_id,
		     v->dev.pci.bdf, strerror(-rc));
		return rc;
	}
	if (ioctl(v->device, VFIO_DEVICE_GET_INFO, &di) < 0) {
		rc = -errno;
		verr(v, "vfio: %s: VFIO_DEVICE_GET_INFO: %s", v->dev.pci.bdf, strerror(-rc));
		return rc;
	}
	if (!(di.flags & VFIO_DEVICE_FLAGS_PCI) || di.num_regions <= VFIO_PCI_CONFIG_REGION_INDEX) {
		verr(v, "vfio: %s is not presented as a PCI device by VFIO", v->dev.pci.bdf);
		return -ENODEV;
	}
	v->dev_flags = di.flags;
	v->num_regions = di.num_regions;

	rc = get_region_info(v, VFIO_PCI_CONFIG_REGION_INDEX, &v->cfg);
	if (rc < 0)
		return rc;
	if (v->cfg.size < 64) {
		verr(v, "vfio: %s: config region of %llu bytes", v->dev.pci.bdf, (unsigned long long)v->cfg.size);
		return -EPROTO;
	}
	memset(cfg, 0, sizeof(cfg));
	rc = cfg_read(v, 0, cfg, v->cfg.size < sizeof(cfg) ? (size_t)v->cfg.size : sizeof(cfg));
	if (rc < 0) {
		verr(v, "vfio: %s: reading config space: %s", v->dev.pci.bdf, strerror(-rc));
		return rc;
	}
	rc = shim_pci_parse_config(cfg, v->cfg.size < sizeof(cfg) ? (size_t)v->cfg.size : sizeof(cfg), &pc);
	if (rc < 0) {
		verr(v, "vfio: %s: malformed config space (capability list)", v->dev.pci.bdf);
		return rc;
	}
	if (pc.vendor_id != SHIM_PCI_VENDOR_MELLANOX) {
		verr(v, "vfio: %s is not a Mellanox/NVIDIA ConnectX (config space vendor 0x%04x)",
		     v->dev.pci.bdf, pc.vendor_id);
		return -ENODEV;
	}
	v->dev.pci.vendor_id = pc.vendor_id;
	v->dev.pci.device_id = pc.device_id;
	v->dev.pci.subsys_vendor_id = pc.subsys_vendor_id;
	v->dev.pci.subsys_device_id = pc.subsys_device_id;
	v->dev.pci.link_speed_gen = pc.link_speed <= 6 ? pc.link_speed : 0;
	v->dev.pci.link_width = pc.link_width;
	v->dev.pci.max_payload_bytes = pc.max_payload;

	/* The NIC reaches the command queue, mailboxes and firmware pages by DMA: without
	 * Bus Master Enable every one of those reads is dropped. */
	rc = cfg_set_master(v, 1);
	if (rc < 0) {
		verr(v, "vfio: %s: enabling bus mastering: %s", v->dev.pci.bdf, strerror(-rc));
		return rc;
	}
	v->master_on = 1;
	return 0;
}

static int map_bar_locked(struct vfio_dev *v, unsigned index)
{
	struct shim_vfio_region r;
	struct vfio_bar *b = &v->bar[index];
	uint8_t *base;
	size_t maplen;
	int rc;

	rc = get_region_info(v, VFIO_PCI_BAR0_REGION_INDEX + index, &r);
	if (rc < 0)
		return rc;
	if (r.size == 0) {
		verr(v, "vfio: %s: BAR%u is not implemented", v->dev.pci.bdf, index);
		return -ENOENT;
	}
	if (r.narea == 0 || !(r.flags & VFIO_REGION_INFO_FLAG_READ) || !(r.flags & VFIO_REGION_INFO_FLAG_WRITE)) {
		verr(v, "vfio: %s: BAR%u cannot be mmapped read-write (region flags 0x%x)", v->dev.pci.bdf,
		     index, r.flags);
		return -ENOTSUP;
	}
	maplen = (size_t)((r.size + v->dev.page_size - 1) & ~((uint64_t)v->dev.page_size - 1));
	if (!r.sparse) {
		base = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, v->device, (off_t)r.fd_offset);
		if (base == MAP_FAILED) {
			rc = -errno;
			verr(v, "vfio: %s: mmap of BAR%u (%llu bytes): %s", v->dev.pci.bdf, index,
			     (unsigned long long)r.size, strerror(-rc));
			return rc;
		}
	} else {
		/* The kernel keeps part of the BAR (the MSI-X table) to itself: reserve the
		 * whole window, then map the allowed areas in place. The driver never touches
		 * the MSI-X table, so the holes stay unused. */
		base = mmap(NULL, maplen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (base == MAP_FAILED) {
			rc = -errno;
			verr(v, "vfio: %s: reserving %zu bytes for BAR%u: %s", v->dev.pci.bdf, maplen, index,
			     strerror(-rc));
			return rc;
		}
		for (unsigned i = 0; i < r.narea; i++) {
			void *p = mmap(base + r.area[i].offset, (size_t)r.area[i].size, PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_FIXED, v->device, (off_t)(r.fd_offset + r.area[i].offset));
			if (p == MAP_FAILED) {
				rc = -errno;
				munmap(base, maplen);
				verr(v, "vfio: %s: mmap of BAR%u area 0x%llx+0x%llx: %s", v->dev.pci.bdf, index,
				     (unsigned long long)r.area[i].offset, (unsigned long long)r.area[i].size,
				     strerror(-rc));
				return rc;
			}
		}
	}
	b->base = base;
	b->maplen = maplen;
	b->size = r.size;
	b->mapped = 1;
	return 0;
}

static int setup_irqs(struct vfio_dev *v)
{
	struct vfio_irq_info ii = { .argsz = sizeof(ii), .index = VFIO_PCI_MSIX_IRQ_INDEX };
	unsigned n;
	size_t need;
	void *set;
	int rc;

	if (ioctl(v->device, VFIO_DEVICE_GET_IRQ_INFO, &ii) < 0) {
		rc = -errno;
		verr(v, "vfio: %s: VFIO_DEVICE_GET_IRQ_INFO(MSI-X): %s", v->dev.pci.bdf, strerror(-rc));
		return rc;
	}
	rc = shim_vfio_irq_plan(&ii, v->uri.msix, &n, v->dev.err, sizeof(v->dev.err));
	if (rc < 0 || n == 0)
		return rc;
	v->irqfd = calloc(n, sizeof(int));
	if (!v->irqfd)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++)
		v->irqfd[i] = -1;
	v->nirq = n;
	for (unsigned i = 0; i < n; i++) {
		/* Non-blocking: a poller that finds nothing to read must not hang. */
		v->irqfd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (v->irqfd[i] < 0) {
			rc = -errno;
			verr(v, "vfio: %s: eventfd for MSI-X vector %u: %s", v->dev.pci.bdf, i, strerror(-rc));
			return rc;
		}
	}
	need = shim_vfio_irq_set_build(NULL, 0, VFIO_PCI_MSIX_IRQ_INDEX, v->irqfd, n);
	set = calloc(1, need);
	if (!set)
		return -ENOMEM;
	shim_vfio_irq_set_build(set, need, VFIO_PCI_MSIX_IRQ_INDEX, v->irqfd, n);
	rc = ioctl(v->device, VFIO_DEVICE_SET_IRQS, set) < 0 ? -errno : 0;
	free(set);
	if (rc < 0)
		verr(v, "vfio: %s: enabling %u MSI-X vectors (VFIO_DEVICE_SET_IRQS): %s", v->dev.pci.bdf, n,
		     strerror(-rc));
	return rc;
}

int shim_vfio_open_at(const char *args, const char *sysfs_root, const char *dev_root,
		      struct shim_dev **out)
{
	struct shim_vfio_sysfs sf;
	struct shim_dev *d;
	struct vfio_dev *v;
	long pg;
	int rc = shim_dev_new(out, sizeof(*v), &shim_vfio_ops, &d);

	if (rc < 0)
		return rc;
	v = to_vfio(d);
	v->container = v->group = v->device = -1;
	pthread_mutex_init(&v->lock, NULL);
	plat_list_init(&v->maps);
	shim_iova_init(&v->iova);
	snprintf(v->sysfs_root, sizeof(v->sysfs_root), "%s", sysfs_root ? sysfs_root : "/sys");
	if (!dev_root)
		dev_root = "/dev";
	pg = sysconf(_SC_PAGESIZE);
	v->dev.page_size = pg > 0 ? (size_t)pg : 4096;
	*out = &v->dev;

	rc = shim_vfio_parse_uri(args, &v->uri, v->dev.err, sizeof(v->dev.err));
	if (rc < 0)
		return rc;
	snprintf(v->dev.pci.bdf, sizeof(v->dev.pci.bdf), "%s", v->uri.bdf);
	rc = shim_vfio_sysfs_probe(v->sysfs_root, v->uri.bdf, &sf, v->dev.err, sizeof(v->dev.err));
	if (rc < 0)
		return rc;
	v->group_id = sf.group;
	v->dev.pci.vendor_id = sf.vendor_id;
	v->dev.pci.device_id = sf.device_id;

	/* The order of Linux's Documentation/driver-api/vfio.rst ("VFIO Usage Example"):
	 * container, group, IOMMU, device; then BAR0 and the interrupts. */
	if ((rc = open_container(v, dev_root)) < 0 || (rc = check_memlock(v)) < 0 ||
	    (rc = open_group(v, dev_root)) < 0 || (rc = setup_iova(v)) < 0 ||
	    (rc = open_device(v)) < 0 || (rc = map_bar_locked(v, 0)) < 0)
		return rc;
	return setup_irqs(v);
}

static int vfio_open(const char *args, struct shim_dev **out)
{
	return shim_vfio_open_at(args, "/sys", "/dev", out);
}

/* ---- IOMMU mappings ---- */

static int dma_map(struct vfio_dev *v, void *va, uint64_t len, uint64_t iova, int *readonly)
{
	struct vfio_iommu_type1_dma_map m = {
		.argsz = sizeof(m),
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr = (uint64_t)(uintptr_t)va,
		.iova = iova,
		.size = len,
	};
	int e;

	*readonly = 0;
	if (ioctl(v->container, VFIO_IOMMU_MAP_DMA, &m) == 0)
		return 0;
	e = errno;
	/* Read-only user memory cannot be pinned for writing; the device may still read
	 * it (a registration without local/remote write access). */
	if (e == EFAULT) {
		m.flags = VFIO_DMA_MAP_FLAG_READ;
		if (ioctl(v->container, VFIO_IOMMU_MAP_DMA, &m) == 0) {
			*readonly = 1;
			return 0;
		}
		e = errno;
	}
	if (e == EFAULT) {
		/* vfio_iommu_type1 could not pin the pages even for reading */
		verr(v, "vfio: %s: %llu bytes at %p are not mapped, or not accessible, in this process",
		     v->dev.pci.bdf, (unsigned long long)len, va);
	} else if (e == ENOMEM) {
		struct rlimit rl = { 0, 0 };
		getrlimit(RLIMIT_MEMLOCK, &rl);
		verr(v, "vfio: %s: pinning %llu KiB failed: locked-memory limit is %llu KiB and %llu KiB are "
		     "pinned already; raise it with `ulimit -l unlimited` (or limits.conf memlock)",
		     v->dev.pci.bdf, (unsigned long long)(len >> 10),
		     (unsigned long long)(rl.rlim_cur == RLIM_INFINITY ? 0 : rl.rlim_cur >> 10),
		     (unsigned long long)(v->mapped_bytes >> 10));
	} else if (e == ENOSPC) {
		verr(v, "vfio: %s: the IOMMU mapping limit is reached (vfio_iommu_type1 dma_entry_limit, "
		     "65535 by default)", v->dev.pci.bdf);
	} else {
		verr(v, "vfio: %s: VFIO_IOMMU_MAP_DMA va %p len 0x%llx iova 0x%llx: %s", v->dev.pci.bdf, va,
		     (unsigned long long)len, (unsigned long long)iova, strerror(e));
	}
	return -e;
}

static void dma_unmap(struct vfio_dev *v, uint64_t iova, uint64_t len)
{
	struct vfio_iommu_type1_dma_unmap u = { .argsz = sizeof(u), .iova = iova, .size = len };

	ioctl(v->container, VFIO_IOMMU_UNMAP_DMA, &u);
}

static void link_map(struct vfio_dev *v, struct vfio_map *m)
{
	plat_list_add(&v->maps, &m->link);
	v->mapped_bytes += m->len;
}

static void unlink_map(struct vfio_dev *v, struct vfio_map *m)
{
	plat_list_del(&m->link);
	v->mapped_bytes -= m->len;
}

/* Unmap, return the IOVA, free the memory if it is ours. Called with the lock held. */
static void release_map(struct vfio_dev *v, struct vfio_map *m)
{
	unlink_map(v, m);
	dma_unmap(v, m->iova, m->len);
	shim_iova_free(&v->iova, m->iova, m->len);
	if (m->owned)
		munmap(m->va, (size_t)m->len);
	free(m);
}

/* What dma_alloc and dma_pin share: map [va, va+maplen) (whole granules) at a free
 * IOVA aligned to align, and record it; `what` ends the message when the IOVA space
 * is full.  0 with *mp and *ro (dma_map's read-only fallback), or -errno. */
static int map_new(struct vfio_dev *v, void *va, uint64_t maplen, uint64_t align, const char *what,
		   struct vfio_map **mp, int *ro)
{
	struct vfio_map *m = calloc(1, sizeof(*m));
	uint64_t iova;
	int rc = -ENOSPC;

	if (!m)
		return -ENOMEM;
	pthread_mutex_lock(&v->lock);
	/* A pin (align 0 here: the granule) goes at an IOVA congruent to its VA modulo
	 * the largest of 1 GiB / 2 MiB it spans, so the driver's MKey can use pages that
	 * large (hw/mlx5/mr.c mx5_best_page_shift: the largest page every segment allows),
	 * as Linux mlx5_ib does with mlx5_umem_find_best_pgsz over the DMA addresses.
	 * Anywhere else when no such range is free. */
	if (!align) {
		uint64_t vaddr = (uint64_t)(uintptr_t)va;
		uint64_t mod = maplen >= (1ull << 30) ? 1ull << 30 : maplen >= (2ull << 20) ? 2ull << 20 : 0;
		if (mod)
			rc = shim_iova_alloc_congruent(&v->iova, maplen, mod, vaddr, &iova);
		align = v->gran;
	}
	if (rc < 0)
		rc = shim_iova_alloc(&v->iova, maplen, align, &iova);
	if (rc < 0)
		verr(v, "vfio: %s: no free IOVA range of %llu bytes %s", v->dev.pci.bdf,
		     (unsigned long long)maplen, what);
	else if ((rc = dma_map(v, va, maplen, iova, ro)) < 0)
		shim_iova_free(&v->iova, iova, maplen);
	if (rc == 0) {
		*m = (struct vfio_map){ .iova = iova, .len = maplen, .va = va };
		link_map(v, m);
	}
	pthread_mutex_unlock(&v->lock);
	if (rc < 0)
		free(m);
	else
		*mp = m;
	return rc;
}

static int vfio_dma_alloc(struct shim_dev *d, size_t len, size_t align, struct shim_dma *out)
{
	struct vfio_dev *v = to_vfio(d);
	struct vfio_map *m;
	uint64_t maplen, ialign;
	char what[48];
	int ro, rc;
	void *va;

	if (!out || len == 0 || (align & (align - 1)) != 0) {
		verr(v, "vfio: dma_alloc: length %zu / alignment %zu invalid (alignment must be a power of two)",
		     len, align);
		return -EINVAL;
	}
	if (!v->iova_ready)
		return -ENODEV;
	maplen = ((uint64_t)len + v->gran - 1) & ~(v->gran - 1);
	ialign = align > v->gran ? align : v->gran;
	va = mmap(NULL, (size_t)maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (va == MAP_FAILED) {
		rc = -errno;
		verr(v, "vfio: dma_alloc of %zu bytes: %s", len, strerror(-rc));
		return rc;
	}
	/* A child of fork() must not get copy-on-write copies of pages the device writes. */
	madvise(va, (size_t)maplen, MADV_DONTFORK);

	snprintf(what, sizeof(what), "aligned to 0x%llx", (unsigned long long)ialign);
	rc = map_new(v, va, maplen, ialign, what, &m, &ro);
	if (rc < 0) {
		munmap(va, (size_t)maplen);
		return rc;
	}
	m->owned = 1;  /* release_map munmaps the memory too */
	*out = (struct shim_dma){ .va = va, .iova = m->iova, .len = len, .priv = m };
	return 0;
}

static void vfio_release(struct shim_dev *d, void *m)
{
	release_map(to_vfio(d), m);
}

static void vfio_dma_free(struct shim_dev *d, struct shim_dma *dma)
{
	shim_handle_release(d, &to_vfio(d)->lock, dma, sizeof(*dma), dma ? dma->priv : NULL, vfio_release);
}

static int vfio_dma_pin(struct shim_dev *d, void *va, size_t len, struct shim_pin *out)
{
	struct vfio_dev *v = to_vfio(d);
	uint64_t start, maplen, offset;
	struct vfio_map *m;
	int ro, rc;

	if (!v->iova_ready)
		return -ENODEV;
	/* VFIO maps whole IOMMU pages: widen to the granule, keep the offset in the IOVA
	 * so that seg.iova addresses va itself. */
	if (!out || !va || shim_iova_span((uint64_t)(uintptr_t)va, len, v->gran, &start, &maplen, &offset) < 0) {
		verr(v, "vfio: dma_pin: empty or wrapping range %p+%zu", va, len);
		return -EINVAL;
	}
	rc = map_new(v, (void *)(uintptr_t)start, maplen, 0, "to pin", &m, &ro);
	if (rc < 0)
		return rc;
	m->seg = (struct shim_iova_seg){ m->iova + offset, len };

	/* One MAP_DMA is one contiguous IOVA range (nseg 1).  Mapped for reading only
	 * (dma_map's fallback for unwritable pages): the driver must not let the device
	 * write there. */
	*out = (struct shim_pin){ .va = va, .len = len, .nseg = 1, .seg = &m->seg, .priv = m, .readonly = ro };
	return 0;
}

static void vfio_dma_unpin(struct shim_dev *d, struct shim_pin *pin)
{
	shim_handle_release(d, &to_vfio(d)->lock, pin, sizeof(*pin), pin ? pin->priv : NULL, vfio_release);
}

/* ---- BARs, interrupts, reset, close ---- */

static int vfio_bar(struct shim_dev *d, unsigned index, struct shim_bar *out)
{
	struct vfio_dev *v = to_vfio(d);
	int rc = 0;

	if (!out || index >= SHIM_MAX_BARS || v->device < 0)
		return -EINVAL;
	pthread_mutex_lock(&v->lock);
	if (!v->bar[index].mapped)
		rc = map_bar_locked(v, index);
	if (rc == 0) {
		out->base = v->bar[index].base;
		out->len = (size_t)v->bar[index].size;
		out->wc_base = NULL;   /* VFIO maps BARs uncached only */
		out->hook = NULL;
	}
	pthread_mutex_unlock(&v->lock);
	return rc;
}

static int vfio_irq_fd(struct shim_dev *d, unsigned vector)
{
	struct vfio_dev *v = to_vfio(d);

	if (vector >= v->nirq) {
		verr(v, "vfio: %s: interrupt vector %u out of range (%u enabled; msix=N raises it)",
		     d->pci.bdf, vector, v->nirq);
		return -EINVAL;
	}
	return v->irqfd[vector];
}

static unsigned vfio_irq_count(struct shim_dev *d)
{
	return to_vfio(d)->nirq;
}

static int vfio_reset(struct shim_dev *d)
{
	struct vfio_dev *v = to_vfio(d);
	int rc;

	if (v->device < 0)
		return -ENODEV;
	if (!(v->dev_flags & VFIO_DEVICE_FLAGS_RESET)) {
		verr(v, "vfio: %s: VFIO offers no reset for this function (no FLR and no slot/bus reset "
		     "available)", d->pci.bdf);
		return -ENOTSUP;
	}
	if (ioctl(v->device, VFIO_DEVICE_RESET) < 0) {
		rc = -errno;
		verr(v, "vfio: %s: VFIO_DEVICE_RESET: %s", d->pci.bdf, strerror(-rc));
		return rc;
	}
	/* The kernel restores saved config state around the reset; set bus mastering
	 * again anyway, as the driver cannot work without it. */
	rc = cfg_set_master(v, 1);
	if (rc < 0)
		verr(v, "vfio: %s: bus mastering after reset: %s", d->pci.bdf, strerror(-rc));
	return rc;
}

static void vfio_close(struct shim_dev *d)
{
	struct vfio_dev *v = to_vfio(d);

	if (!v)
		return;
	if (v->device >= 0 && v->nirq) {
		uint8_t set[sizeof(struct vfio_irq_set)];
		shim_vfio_irq_set_build(set, sizeof(set), VFIO_PCI_MSIX_IRQ_INDEX, NULL, 0);
		ioctl(v->device, VFIO_DEVICE_SET_IRQS, set);
	}
	for (unsigned i = 0; i < v->nirq; i++)
		if (v->irqfd[i] >= 0)
			close(v->irqfd[i]);
	free(v->irqfd);
	/* Quiesce first: with bus mastering off the device can no longer reach the pages
	 * about to be unmapped. Releasing the device fd then makes vfio-pci reset it. */
	if (v->master_on)
		cfg_set_master(v, 0);
	pthread_mutex_lock(&v->lock);
	while (!plat_list_empty(&v->maps))
		release_map(v, plat_container_of(v->maps.next, struct vfio_map, link));
	pthread_mutex_unlock(&v->lock);
	for (unsigned i = 0; i < SHIM_MAX_BARS; i++)
		if (v->bar[i].mapped)
			munmap(v->bar[i].base, v->bar[i].maplen);
	if (v->device >= 0)
		close(v->device);
	if (v->group >= 0)
		close(v->group);
	if (v->container >= 0)
		close(v->container);
	shim_iova_fini(&v->iova);
	pthread_mutex_destroy(&v->lock);
	free(v);
}

const struct shim_ops shim_vfio_ops = {
	SHIM_OPS_CORE("vfio", vfio),
	.reset = vfio_reset,
};
