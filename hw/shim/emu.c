/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The emulated shim: "emu:[opts]" opens an emulated ConnectX-5 Ex (hw/emu) inside
 * this process and gives the driver what any shim gives (hw/shim/shim.h): its BAR
 * (plain memory with the device's MMIO hook), DMA memory and pins mapped through the
 * device's IOMMU model (IOVAs deliberately unlike VAs), and an eventfd per interrupt
 * vector.  Options: see emu_config_parse() in hw/emu/emu.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hw/emu/emu.h"
#include "hw/platform/thread.h"
#include "hw/platform/vm.h"
#include "hw/shim/shim.h"
#include "hw/shim/backend.h"

/* dma_alloc of at least this many bytes maps fresh anonymous memory (emu_shim_dma_alloc). */
#define EMU_DMA_MMAP_MIN (64u * 1024)

struct emu_dma_rec {
	struct plat_list link;  /* in emu_shim.recs */
	void *mem;              /* dma_alloc: memory we own; pin: NULL */
	size_t mapped;          /* mem came from mmap, this long (0: from posix_memalign) */
	uint64_t map_id;
	struct shim_iova_seg *segs;
	uint64_t locked;        /* pin: bytes counted against RLIMIT_MEMLOCK */
};

/* Bytes of application memory pinned by every emulated device of this process: the
 * emulated shim keeps the locked-memory budget as vfio_iommu_type1 does
 * (drivers/vfio/vfio_iommu_type1.c: vfio_pin_pages_remote accounts each pinned page in
 * the process's locked_vm and fails with ENOMEM past RLIMIT_MEMLOCK unless the process
 * has CAP_IPC_LOCK), so a program that registers more than its limit fails here as it
 * would on VFIO.  Counted in whole system pages, per pin, as VFIO counts them.  The
 * driver's own memory (dma_alloc: queues, firmware pages) is not counted: on VFIO it
 * is, and hw/shim/vfio.c checks the limit against what bring-up needs at open. */
static pthread_mutex_t emu_locked_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t emu_locked_bytes;

static int emu_lock_acct(struct shim_dev *dev, void *va, size_t len, uint64_t *locked)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)va & ~(pg - 1);
	uint64_t bytes = ((uintptr_t)va + len + pg - 1 - a) & ~(uint64_t)(pg - 1);
	uint64_t limit = plat_vm_lock_limit(), had;
	int rc = 0;

	pthread_mutex_lock(&emu_locked_lock);
	had = emu_locked_bytes;
	if (limit != UINT64_MAX && (bytes > limit || had > limit - bytes))
		rc = -ENOMEM;
	else
		emu_locked_bytes += bytes;
	pthread_mutex_unlock(&emu_locked_lock);
	if (rc) {
		snprintf(dev->err, sizeof(dev->err),
			 "emu: pinning %llu KiB failed: locked-memory limit is %llu KiB and %llu KiB are pinned "
			 "already; raise it with `ulimit -l unlimited` (or limits.conf memlock), as VFIO needs",
			 (unsigned long long)(bytes >> 10), (unsigned long long)(limit >> 10),
			 (unsigned long long)(had >> 10));
		return rc;
	}
	*locked = bytes;
	return 0;
}

static void emu_lock_unacct(uint64_t bytes)
{
	pthread_mutex_lock(&emu_locked_lock);
	emu_locked_bytes -= bytes;
	pthread_mutex_unlock(&emu_locked_lock);
}

struct emu_shim {
	struct shim_dev base;
	struct emu_dev *emu;
	struct shim_mmio_hook hook;
	struct plat_list recs;     /* live allocations and pins (emu_dma_rec) */
	uint64_t vec_routed;       /* vectors whose fd the driver took: unmasked in the table */
	pthread_mutex_t recs_lock; /* applications pin and allocate from many threads; also
				    * guards vec_routed */
};

extern const struct shim_ops shim_emu_ops;

static struct emu_shim *to_emu(struct shim_dev *d)
{
	return (struct emu_shim *)d;
}

struct emu_dev *emu_device_from_shim(struct shim_dev *s)
{
	return s && s->ops->emulated ? (struct emu_dev *)s->ops->emulated(s) : NULL;
}

static void *emu_shim_emulated(struct shim_dev *s)
{
	return to_emu(s)->emu;
}

static void hook_access(void *ctx, enum shim_mmio_op op, uint64_t off, unsigned size)
{
	emu_mmio_access(ctx, (int)op, off, size);
}

static void hook_poll_assist(void *ctx)
{
	emu_poll_assist(ctx);
}

static void hook_poll_found(void *ctx, uint32_t qpn)
{
	emu_poll_found(ctx, qpn);
}

static void rec_link(struct emu_shim *s, struct emu_dma_rec *r)
{
	pthread_mutex_lock(&s->recs_lock);
	plat_list_add(&s->recs, &r->link);
	pthread_mutex_unlock(&s->recs_lock);
}

static void rec_release(struct emu_shim *s, struct emu_dma_rec *r)
{
	pthread_mutex_lock(&s->recs_lock);
	plat_list_del(&r->link);
	pthread_mutex_unlock(&s->recs_lock);
	emu_iommu_unmap(s->emu, r->map_id);
	if (r->locked)
		emu_lock_unacct(r->locked);
	free(r->segs);
	if (r->mapped)
		munmap(r->mem, r->mapped);
	else
		free(r->mem);
	free(r);
}

static void emu_shim_close(struct shim_dev *dev)
{
	struct emu_shim *s = to_emu(dev);

	if (!s)
		return;
	while (s->emu && !plat_list_empty(&s->recs))
		rec_release(s, plat_container_of(s->recs.next, struct emu_dma_rec, link));
	emu_destroy(s->emu);
	pthread_mutex_destroy(&s->recs_lock);
	free(s);
}

/* The device's thread, started with the process's signals blocked in it
 * (plat_thread_create_quiet, hw/platform/thread.h): emu.h cfg.thread_start. */
static int emu_thread_start(void *arg, pthread_t *out, void *(*fn)(void *), void *fn_arg)
{
	(void)arg;
	return -plat_thread_create_quiet(out, fn, fn_arg);
}

static int emu_shim_open(const char *args, struct shim_dev **out)
{
	struct emu_config cfg;
	struct emu_shim *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return -ENOMEM;
	s->base.ops = &shim_emu_ops;
	plat_list_init(&s->recs);
	pthread_mutex_init(&s->recs_lock, NULL);
	*out = &s->base;
	memset(&cfg, 0, sizeof(cfg));
	rc = emu_config_parse(args, &cfg, s->base.err, sizeof(s->base.err));
	if (rc < 0)
		return rc;
	cfg.thread_start = emu_thread_start;
	rc = emu_create(&cfg, &s->emu, s->base.err, sizeof(s->base.err));
	if (rc < 0)
		return rc;
	/* As a host does before a driver runs (Linux pci_enable_device + pci_set_master,
	 * vfio-pci at open): memory space and bus mastering on, MSI-X enabled.  Without it
	 * the function answers no MMIO and issues no DMA (hw/emu/pci.c). */
	rc = emu_pci_host_enable(s->emu);
	if (rc < 0) {
		snprintf(s->base.err, sizeof(s->base.err), "emu: enabling the PCI function: %s", strerror(-rc));
		return rc;
	}
	s->hook.access = hook_access;
	s->hook.ctx = s->emu;
	s->hook.poll_assist = hook_poll_assist;
	s->hook.poll_found = hook_poll_found;
	s->base.page_size = emu_host_page_size(s->emu);
	s->base.pci.vendor_id = EMU_VENDOR_ID;
	s->base.pci.device_id = EMU_DEVICE_ID;
	s->base.pci.subsys_vendor_id = EMU_VENDOR_ID;
	s->base.pci.subsys_device_id = 0x0008;
	{
		uint32_t a = emu_ipv4(s->emu);
		char bdf[32];

		/* "emu:" + a dotted quad (at most 19 characters) fits shim_pci_info.bdf. */
		snprintf(bdf, sizeof(bdf), "emu:%u.%u.%u.%u", a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff);
		memcpy(s->base.pci.bdf, bdf, sizeof(s->base.pci.bdf) - 1);
	}
	/* ConnectX-5 Ex: PCIe 4.0 x16, 256-byte max payload. */
	s->base.pci.link_speed_gen = 4;
	s->base.pci.link_width = 16;
	s->base.pci.max_payload_bytes = 256;
	return 0;
}

/* A function reset as vfio-pci's VFIO_DEVICE_RESET gives it (Linux pci_reset_function:
 * pci_save_state, pcie_flr, pci_restore_state): the function's state is gone; its
 * config state comes back as saved.  pci_restore_state's order: the PCI Express
 * capability's control registers first (pci_restore_pcie_state: Device Control), then
 * the header (pci_restore_config_space: dwords 10-15, the BARs 4-9, then 0-3 with
 * Command last, so memory decoding starts at the restored address), then MSI-X
 * (pci_restore_msix_state: control, then each vector's entry): memory space, bus
 * mastering and the vectors the driver routed are back. */
static int emu_shim_reset(struct shim_dev *dev)
{
	struct emu_shim *s = to_emu(dev);
	uint8_t hdr[64], devctl[2];
	int rc = emu_pci_cfg_read(s->emu, 0, hdr, sizeof(hdr));

	if (rc == 0)
		rc = emu_pci_cfg_read(s->emu, EMU_PCI_CAP_EXP + 8, devctl, sizeof(devctl));
	if (rc == 0)
		rc = emu_reset(s->emu);
	if (rc == 0)
		rc = emu_pci_cfg_write(s->emu, EMU_PCI_CAP_EXP + 8, devctl, sizeof(devctl));
	if (rc == 0)
		rc = emu_pci_cfg_write(s->emu, 40, hdr + 40, 24);
	if (rc == 0)
		rc = emu_pci_cfg_write(s->emu, 16, hdr + 16, 24);
	if (rc == 0)
		rc = emu_pci_cfg_write(s->emu, 0, hdr, 16);
	if (rc == 0)
		rc = emu_pci_host_enable(s->emu);
	pthread_mutex_lock(&s->recs_lock);
	for (unsigned v = 0; rc == 0 && v < EMU_NUM_VECTORS; v++)
		if (s->vec_routed >> v & 1)
			rc = emu_pci_host_unmask(s->emu, v);
	pthread_mutex_unlock(&s->recs_lock);
	return rc;
}

static int emu_shim_bar(struct shim_dev *dev, unsigned index, struct shim_bar *out)
{
	struct emu_shim *s = to_emu(dev);

	if (!out)
		return -EINVAL;
	if (index != 0) {
		snprintf(dev->err, sizeof(dev->err), "emu: only BAR0 exists (asked for BAR%u)", index);
		return -ENOENT;
	}
	out->base = emu_bar_base(s->emu);
	out->len = emu_bar_len(s->emu);
	out->wc_base = out->base; /* one mapping serves both: the hook sees WC bursts */
	out->hook = &s->hook;
	return 0;
}

static int emu_shim_dma_alloc(struct shim_dev *dev, size_t len, size_t align, struct shim_dma *out)
{
	struct emu_shim *s = to_emu(dev);
	struct emu_dma_rec *r;
	struct emu_iova_seg *segs = NULL;
	uint32_t nseg = 0;
	size_t page = dev->page_size;
	int rc;

	if (!out || !len || (align & (align - 1)))
		return -EINVAL;
	if (align < page)
		align = page;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	/* Large and page-aligned (the driver's firmware pages: 12,868 of them, 50 MiB, at
	 * INIT_HCA): anonymous memory, zero until touched, and the emulated firmware never
	 * touches it.  Zeroing it here took most of an ibv_open_device (35-40 ms, one page
	 * fault per 4 KiB; issue 32).  Smaller or more aligned: the heap, zeroed. */
	if (len >= EMU_DMA_MMAP_MIN && align <= (size_t)sysconf(_SC_PAGESIZE)) {
		size_t bytes = (len + page - 1) / page * page;
		void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED) {
			free(r);
			return -ENOMEM;
		}
		r->mem = m;
		r->mapped = bytes;
	} else {
		if (posix_memalign(&r->mem, align, (len + page - 1) / page * page)) {
			free(r);
			return -ENOMEM;
		}
		memset(r->mem, 0, (len + page - 1) / page * page);
	}
	rc = emu_iommu_map(s->emu, r->mem, len, EMU_IOMMU_CONTIGUOUS, &segs, &nseg, &r->map_id);
	if (rc < 0) {
		if (r->mapped)
			munmap(r->mem, r->mapped);
		else
			free(r->mem);
		free(r);
		return rc;
	}
	*out = (struct shim_dma){ .va = r->mem, .iova = segs[0].iova, .len = len, .priv = r };
	free(segs);
	rec_link(s, r);
	return 0;
}

/* rec_release takes the lock for the list itself: the unmapping runs outside it. */
static void emu_release(struct shim_dev *dev, void *r)
{
	rec_release(to_emu(dev), r);
}

static void emu_shim_dma_free(struct shim_dev *dev, struct shim_dma *dma)
{
	shim_handle_release(dev, NULL, dma, sizeof(*dma), dma ? dma->priv : NULL, emu_release);
}

static int emu_shim_dma_pin(struct shim_dev *dev, void *va, size_t len, struct shim_pin *out)
{
	struct emu_shim *s = to_emu(dev);
	struct emu_dma_rec *r;
	struct emu_iova_seg *segs = NULL;
	uint32_t nseg = 0;
	int rc;

	if (!out || !va || !len)
		return -EINVAL;
	int readonly = 0;
	rc = shim_pin_check(dev, "emu", va, len, &readonly);
	if (rc)
		return rc;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	rc = emu_lock_acct(dev, va, len, &r->locked);
	if (rc < 0) {
		free(r);
		return rc;
	}
	rc = emu_iommu_map(s->emu, va, len, EMU_IOMMU_APP, &segs, &nseg, &r->map_id);
	if (rc < 0) {
		emu_lock_unacct(r->locked);
		free(r);
		return rc;
	}
	r->segs = calloc(nseg, sizeof(*r->segs));
	if (!r->segs) {
		emu_iommu_unmap(s->emu, r->map_id);
		emu_lock_unacct(r->locked);
		free(segs);
		free(r);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nseg; i++)
		r->segs[i] = (struct shim_iova_seg){ segs[i].iova, segs[i].len };
	free(segs);
	*out = (struct shim_pin){ .va = va, .len = len, .nseg = nseg, .seg = r->segs, .priv = r,
				  .readonly = readonly };
	rec_link(s, r);
	return 0;
}

static void emu_shim_dma_unpin(struct shim_dev *dev, struct shim_pin *pin)
{
	shim_handle_release(dev, NULL, pin, sizeof(*pin), pin ? pin->priv : NULL, emu_release);
}

/* The vector's eventfd, and its entry in the MSI-X table unmasked, as vfio-pci's
 * VFIO_DEVICE_SET_IRQS routes a vector to an eventfd. */
static int emu_shim_irq_fd(struct shim_dev *dev, unsigned vector)
{
	struct emu_shim *s = to_emu(dev);
	int fd = emu_irq_fd(s->emu, vector);

	if (fd >= 0) {
		int rc = 0;

		pthread_mutex_lock(&s->recs_lock);   /* EQs may be made from several threads */
		if (!(s->vec_routed >> vector & 1)) {
			rc = emu_pci_host_unmask(s->emu, vector);
			if (rc == 0)
				s->vec_routed |= 1ull << vector;
		}
		pthread_mutex_unlock(&s->recs_lock);
		if (rc < 0)
			return rc;
	}
	return fd;
}

static unsigned emu_shim_irq_count(struct shim_dev *dev)
{
	return emu_irq_count(to_emu(dev)->emu);
}

/* The port answers on the emulated device's loopback address (hw/emu/netaddr.c): the
 * driver builds its GID from it as it would from an address the user assigned. */
static int emu_shim_port_addrs(struct shim_dev *dev, unsigned port, uint8_t (*addrs)[16], unsigned max)
{
	uint32_t a = emu_ipv4(to_emu(dev)->emu);

	if (port != 1 || max < 1 || !a)
		return 0;
	memset(addrs[0], 0, 16);
	addrs[0][10] = addrs[0][11] = 0xff;
	addrs[0][12] = (uint8_t)(a >> 24);
	addrs[0][13] = (uint8_t)(a >> 16);
	addrs[0][14] = (uint8_t)(a >> 8);
	addrs[0][15] = (uint8_t)a;
	return 1;
}

/* ARP on the emulated segment: IPv4 only, as the emulated wire is IPv4 only. */
static int emu_shim_neigh(struct shim_dev *dev, const uint8_t addr[16], uint8_t mac[6])
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	(void)dev;
	if (memcmp(addr, v4mapped, 12))
		return -ENOENT;
	return emu_neigh((uint32_t)addr[12] << 24 | (uint32_t)addr[13] << 16 | (uint32_t)addr[14] << 8 | addr[15],
			 mac);
}

const struct shim_ops shim_emu_ops = {
	SHIM_OPS_CORE("emu", emu_shim),
	.reset = emu_shim_reset,
	SHIM_OPS_NETWORK(emu_shim),
	.emulated = emu_shim_emulated,
};
