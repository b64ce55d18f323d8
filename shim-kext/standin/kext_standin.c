/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The IOKit stand-in's kernel half (README.md beside this file): the uvshim kext as
 * shim-kext/macos builds it, with the same portable core (shim-kext/core) and, in place
 * of IOKit, an IOPCIDevice that is the emulated ConnectX (hw/emu) with its PCI function
 * model (hw/emu/pci.c).  What shim-kext/macos does in IOKit is done here in the same
 * order, each step naming the method it stands for:
 *   start            (UvShim::start) memory space on, bus mastering off, MSI-X
 *                    configured (IOPCIDevice::configureInterrupts), vectors masked
 *   newUserClient    (UvShim::newUserClient + UvShimUserClient::initWithTask/start)
 *   externalMethod   (UvShimUserClient::externalMethod, UvShim::call)
 *   clientMemoryForType + createMappingInTask (UvShim::memoryForType, UvShimWindow)
 *   platform calls   (UvShim::pPin ... pIrqArm): pins and buffers through the device's
 *                    IOMMU model as IODMACommand through the DART; bus mastering and
 *                    the function reset through config space; a vector armed is a
 *                    vector unmasked in the MSI-X table (IOInterruptEventSource::enable)
 *   interrupts       (UvShim::interruptOccurred): a thread takes the function's MSI-X
 *                    messages (the emulator's eventfds) and sends one async result
 *                    per interrupt to the owner's notification port.
 * In its own process (standin_kernel_own_process, the stand-in kernel daemon kerneld.c)
 * it also does what only a kernel with several tasks can: guests (UvShim::guestOpen,
 * pPinFor, pRevoke), pins of another task's memory, the BAR and DMA buffers in shared
 * memory the tasks map; the host (kerneld.c) redirects a revoked guest mapping.
 * Configuration, UVERBS_KEXT_STANDIN="functions=N,vectors=N,pinned_mb=N,gid=N,uid=N,<emu
 * options>": how many functions the kext matched (1), MSI-X vectors it asks for
 * (Info.plist UvShimMSIXVectors, 16), wired memory per owner (UvShimMaxPinnedMB), the
 * owner group (Info.plist UvShimGroupID; default the
 * process's own group, standing for an admin user), the uid the kext sees (this
 * process's), and hw/emu options for every function (emu_config_parse).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/mman.h>

#include "hw/emu/emu.h"
#include "hw/platform/shm.h"
#include "hw/platform/vm.h"
#include "shim-kext/core/uvshim_core.h"
#include "shim-kext/standin/standin.h"

#define STANDIN_MAX_FUNCTIONS 4u
#define PCI_COMMAND 0x04
#define PCI_CMD_MEMORY 0x0002u
#define PCI_CMD_MASTER 0x0004u   /* UvShim.hpp UVSHIM_PCI_COMMAND_BUS_LEAD */
#define MSIX_CTRL (EMU_PCI_CAP_MSIX + 2)

struct standin_cfg {
	unsigned functions, vectors;
	uint32_t pinned_mb;           /* Info.plist UvShimMaxPinnedMB, 0: the default */
	uint32_t gid, uid;
	bool uid_set;
	char emu_opts[256];
};

/* The kernel lives in its own process (standin_kernel_own_process): guests, shared BAR
 * and DMA memory, pins of other tasks. */
static bool g_own_process;

struct standin_map {            /* UvShimMapping: one pin or DMA buffer */
	void *mem;                  /* DMA buffer: ours */
	int fd;                     /* DMA buffer in its own process: its memfd, else -1 */
	uint64_t map_id;
	struct uvshim_seg *seg;
	uint32_t nseg;
	uint64_t len;
};

struct standin_kext {
	unsigned index;
	unsigned refs;              /* service objects and connections */
	pthread_mutex_t lock;       /* UvShim::fLock */
	struct emu_dev *emu;        /* the IOPCIDevice */
	struct uvshim_dev dev;
	struct uvshim_pin_entry *pins;
	uint32_t gid, uid;
	bool uid_set;
	int32_t owner_pid;          /* the owner's task */
	unsigned nvec;              /* fIrqCount */
	bool armed[UVSHIM_MAX_VECTORS];
	int irq_fd[UVSHIM_MAX_VECTORS];
	uint64_t irq_ref[UVSHIM_MAX_VECTORS][kOSAsyncRef64Count];
	const uint64_t *pending_ref;        /* fPendingRef: the async call in progress */
	uint32_t pending_ref_count;
	pthread_t irq_thread;
	int wake[2];
	bool stop;
	struct standin_client *clients;     /* open user clients, under g_kext_lock */
};

struct standin_client {             /* UvShimUserClient */
	struct standin_kext *k;
	struct standin_task task;       /* fTask: who opened it */
	bool owner, guest;
	struct standin_client *next;    /* the function's open clients (k->clients) */
};

static pthread_mutex_t g_kext_lock = PTHREAD_MUTEX_INITIALIZER;
static struct standin_kext *g_kext[STANDIN_MAX_FUNCTIONS];

static IOReturn to_ioreturn(int status)   /* UvShim::toIOReturn */
{
	return status == 0 ? kIOReturnSuccess : (IOReturn)UVSHIM_IORETURN(status < 0 ? -status : status);
}

static int config(struct standin_cfg *c)
{
	const char *env = getenv("UVERBS_KEXT_STANDIN");
	char buf[512], *save = NULL;
	size_t used = 0;

	memset(c, 0, sizeof(*c));
	c->functions = 1;
	c->vectors = UVSHIM_DEFAULT_MSIX_VECTORS;
	c->gid = (uint32_t)getgid();
	c->uid = (uint32_t)getuid();
	if (!env)
		return 0;
	snprintf(buf, sizeof(buf), "%s", env);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		unsigned long v;
		if (sscanf(t, "functions=%lu", &v) == 1 && v >= 1 && v <= STANDIN_MAX_FUNCTIONS)
			c->functions = (unsigned)v;
		else if (sscanf(t, "vectors=%lu", &v) == 1 && v >= 1 && v <= UVSHIM_MAX_VECTORS)
			c->vectors = (unsigned)v;
		else if (sscanf(t, "pinned_mb=%lu", &v) == 1 && v >= 1 && v <= (1ul << 20))
			c->pinned_mb = (uint32_t)v;
		else if (sscanf(t, "gid=%lu", &v) == 1)
			c->gid = (uint32_t)v;
		else if (sscanf(t, "uid=%lu", &v) == 1) {
			c->uid = (uint32_t)v;
			c->uid_set = true;
		}
		else if (used + strlen(t) + 2 < sizeof(c->emu_opts))
			used += (size_t)snprintf(c->emu_opts + used, sizeof(c->emu_opts) - used, "%s%s",
						 used ? "," : "", t);
	}
	return 0;
}

/* ---- config space, as IOPCIDevice::configRead16/configWrite16 ---- */

static uint16_t cfg_read16(struct standin_kext *k, unsigned off)
{
	uint8_t b[2] = { 0xff, 0xff };

	emu_pci_cfg_read(k->emu, off, b, 2);
	return (uint16_t)(b[0] | b[1] << 8);
}

static void cfg_write16(struct standin_kext *k, unsigned off, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)v, (uint8_t)(v >> 8) };

	emu_pci_cfg_write(k->emu, off, b, 2);
}

/* UvShim.cpp busLead: Bus Master Enable on or off. */
static void bus_lead(struct standin_kext *k, bool on)
{
	uint16_t cmd = cfg_read16(k, PCI_COMMAND);

	cfg_write16(k, PCI_COMMAND, on ? (uint16_t)(cmd | PCI_CMD_MASTER) : (uint16_t)(cmd & ~PCI_CMD_MASTER));
}

/* The MSI-X table's vector control, as IOPCIMessagedInterruptController masks and
 * unmasks a vector when its event source is disabled or enabled. */
static void vector_mask(struct standin_kext *k, unsigned v, bool masked)
{
	volatile uint8_t *bar = emu_bar_base(k->emu);
	uint64_t off = EMU_MSIX_TABLE_OFF + v * 16u + 12u;

	bar[off] = masked ? 1 : 0;
	bar[off + 1] = bar[off + 2] = bar[off + 3] = 0;
	emu_mmio_access(k->emu, 1 /* SHIM_MMIO_WRITE */, off, 4);
}

/* ---- the platform (UvShim::p*) ---- */

static void wake_irq_thread(struct standin_kext *k)
{
	char c = 1;

	(void)!write(k->wake[1], &c, 1);
}

/* remote_pid > 0: va is that task's (IOMemoryDescriptor::withAddressRange on its task):
 * the device reaches it as another process's memory (emu_iommu_map_remote). */
static int p_map(struct standin_kext *k, int32_t remote_pid, void *va, uint64_t len, unsigned flags,
		 struct standin_map **out)
{
	struct standin_map *m = calloc(1, sizeof(*m));
	struct emu_iova_seg *segs = NULL;
	uint32_t n = 0;
	int rc;

	if (!m)
		return -UVSHIM_ENOMEM;
	m->fd = -1;
	if (remote_pid > 0)
		rc = emu_iommu_map_remote(k->emu, remote_pid, (uint64_t)(uintptr_t)va, len, &segs, &n, &m->map_id);
	else
		rc = emu_iommu_map(k->emu, va, len, flags, &segs, &n, &m->map_id);
	if (rc < 0) {
		free(m);
		return rc == -ENOMEM ? -UVSHIM_ENOMEM : -UVSHIM_EIO;
	}
	m->seg = calloc(n, sizeof(*m->seg));
	if (!m->seg) {
		emu_iommu_unmap(k->emu, m->map_id);
		free(segs);
		free(m);
		return -UVSHIM_ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		m->seg[i] = (struct uvshim_seg){ segs[i].iova, segs[i].len };
	free(segs);
	m->nseg = n;
	m->len = len;
	*out = m;
	return 0;
}

static int pin_task(struct standin_kext *k, int32_t pid, uint64_t va, uint64_t len, uint32_t flags,
		    const struct uvshim_seg **seg, uint32_t *nseg, void **cookie);

static int p_pin(void *ctx, uint64_t va, uint64_t len, uint32_t flags, const struct uvshim_seg **seg, uint32_t *nseg,
		 void **cookie)
{
	struct standin_kext *k = ctx;

	return pin_task(k, k->owner_pid, va, len, flags, seg, nseg, cookie);
}

/* UvShim::pPinFor: the guest's task, whose connection is `guest`. */
static int p_pin_for(void *ctx, const void *guest, uint64_t va, uint64_t len, uint32_t flags,
		     const struct uvshim_seg **seg, uint32_t *nseg, void **cookie)
{
	const struct standin_client *g = guest;

	return pin_task(ctx, g->task.pid, va, len, flags, seg, nseg, cookie);
}

/* UvShim::pRevoke: the guest's mappings of that window go now (IOMemoryMap::redirect);
 * the host of this kernel does it in the guest's task. */
static void p_revoke(void *ctx, const void *guest, uint32_t memory_type)
{
	(void)ctx;
	standin_revoke_mapping((struct standin_client *)(uintptr_t)guest, memory_type);
}

static int pin_task(struct standin_kext *k, int32_t pid, uint64_t va, uint64_t len, uint32_t flags,
		    const struct uvshim_seg **seg, uint32_t *nseg, void **cookie)
{
	struct standin_map *m;
	unsigned prot = 0;
	bool other = g_own_process && pid > 0 && pid != (int32_t)getpid();
	int rc = other ? 0 : plat_vm_query((const void *)(uintptr_t)va, (size_t)len, &prot);

	/* IOMemoryDescriptor::prepare refuses memory the task has not mapped, and a
	 * device-writable pin of memory the task cannot write.  Another task's: the
	 * emulated IOMMU finds out (emu_iommu_map_remote refuses unmapped pages). */
	if (!other &&
	    (rc < 0 || !(prot & PLAT_VM_READ) || ((flags & UVSHIM_PIN_DEVICE_WRITE) && !(prot & PLAT_VM_WRITE))))
		return -UVSHIM_EFAULT;
	rc = p_map(k, other ? pid : 0, (void *)(uintptr_t)va, len, EMU_IOMMU_APP, &m);
	if (rc == -UVSHIM_EIO && other)
		rc = -UVSHIM_EFAULT;
	if (rc)
		return rc;
	*seg = m->seg;
	*nseg = m->nseg;
	*cookie = m;
	return 0;
}

static void p_release(void *ctx, void *cookie)
{
	struct standin_kext *k = ctx;
	struct standin_map *m = cookie;

	emu_iommu_unmap(k->emu, m->map_id);
	free(m->seg);
	if (m->fd >= 0) {
		munmap(m->mem, m->len);
		close(m->fd);
	} else {
		free(m->mem);
	}
	free(m);
}

static int p_dma_alloc(void *ctx, uint64_t len, uint64_t align, uint64_t *iova, void **cookie)
{
	struct standin_kext *k = ctx;
	struct standin_map *m;
	void *mem = NULL;
	uint64_t page = k->dev.info.page_size;
	int fd = -1, rc;

	if (g_own_process) {
		/* IOBufferMemoryDescriptor: kernel memory the owner's task maps too, so here
		 * shared memory (zeroed) that the owner maps from its descriptor.  The IOVA
		 * alignment is the emulated IOMMU's (one range per buffer, page aligned). */
		fd = plat_shm_create("uvshim-dma", (size_t)len);
		if (fd < 0)
			return -UVSHIM_ENOMEM;
		mem = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (mem == MAP_FAILED) {
			close(fd);
			return -UVSHIM_ENOMEM;
		}
	} else {
		if (posix_memalign(&mem, align > page ? align : page, len))
			return -UVSHIM_ENOMEM;
		memset(mem, 0, len);
	}
	rc = p_map(k, 0, mem, len, EMU_IOMMU_CONTIGUOUS, &m);
	if (rc || m->nseg != 1) {
		if (!rc)
			p_release(k, m);
		if (fd >= 0) {
			munmap(mem, (size_t)len);
			close(fd);
		} else {
			free(mem);
		}
		return rc ? rc : -UVSHIM_EIO;
	}
	m->mem = mem;
	m->fd = fd;
	*iova = m->seg[0].iova;
	*cookie = m;
	return 0;
}

static int p_bus_master(void *ctx, bool enable)
{
	struct standin_kext *k = ctx;
	uint16_t cmd;

	bus_lead(k, enable);
	cmd = cfg_read16(k, PCI_COMMAND);
	if (cmd == 0xffff)
		return -UVSHIM_ENODEV;
	return (((cmd & PCI_CMD_MASTER) != 0) == enable) ? 0 : -UVSHIM_EIO;
}

/* UvShim::pResetFunction on macOS 13+: IOPCIDevice::reset(FunctionReset) saves the
 * configuration, issues the FLR, waits and restores it; then bus mastering is kept off
 * until the core says otherwise. */
static int p_reset_function(void *ctx)
{
	struct standin_kext *k = ctx;
	uint16_t cmd = cfg_read16(k, PCI_COMMAND), msix = cfg_read16(k, MSIX_CTRL);
	int rc = emu_reset(k->emu);

	if (rc < 0)
		return rc == -ENODEV ? -UVSHIM_ENODEV : -UVSHIM_EIO;
	cfg_write16(k, PCI_COMMAND, cmd);
	cfg_write16(k, MSIX_CTRL, msix);
	for (unsigned v = 0; v < k->nvec; v++)
		vector_mask(k, v, !k->armed[v]);
	bus_lead(k, false);
	return cfg_read16(k, 0) == EMU_VENDOR_ID ? 0 : -UVSHIM_ENODEV;
}

static int p_irq_arm(void *ctx, uint32_t vector, bool arm)
{
	struct standin_kext *k = ctx;

	if (vector >= k->nvec)
		return -UVSHIM_ENOENT;
	if (arm) {
		if (!k->pending_ref || k->pending_ref_count < kOSAsyncRef64Count)
			return -UVSHIM_EINVAL;
		memcpy(k->irq_ref[vector], k->pending_ref, sizeof(k->irq_ref[vector]));
		k->armed[vector] = true;
		vector_mask(k, vector, false);
	} else {
		k->armed[vector] = false;
		vector_mask(k, vector, true);
		memset(k->irq_ref[vector], 0, sizeof(k->irq_ref[vector]));
	}
	wake_irq_thread(k);
	return 0;
}

/* ---- interrupts (UvShim::interruptOccurred) ---- */

static void *irq_main(void *arg)
{
	struct standin_kext *k = arg;
	struct pollfd p[UVSHIM_MAX_VECTORS + 1];
	unsigned vec[UVSHIM_MAX_VECTORS + 1];

	for (;;) {
		unsigned n = 0;

		pthread_mutex_lock(&k->lock);
		if (k->stop) {
			pthread_mutex_unlock(&k->lock);
			return NULL;
		}
		p[n] = (struct pollfd){ .fd = k->wake[0], .events = POLLIN };
		vec[n++] = UVSHIM_MAX_VECTORS;
		for (unsigned v = 0; v < k->nvec; v++)
			if (k->irq_fd[v] >= 0) {
				p[n] = (struct pollfd){ .fd = k->irq_fd[v], .events = POLLIN };
				vec[n++] = v;
			}
		pthread_mutex_unlock(&k->lock);
		if (poll(p, n, 200) <= 0)
			continue;
		for (unsigned i = 0; i < n; i++) {
			uint64_t cnt, total = 0, cookie = 0, ref[kOSAsyncRef64Count];
			char drain[64];
			int notify;

			if (!(p[i].revents & POLLIN))
				continue;
			if (vec[i] == UVSHIM_MAX_VECTORS) {
				(void)!read(p[i].fd, drain, sizeof(drain));
				continue;
			}
			if (read(p[i].fd, &cnt, sizeof(cnt)) != sizeof(cnt))
				continue;
			pthread_mutex_lock(&k->lock);
			notify = uvshim_irq_fire(&k->dev, vec[i], &total, &cookie);
			if (notify == 1)
				memcpy(ref, k->irq_ref[vec[i]], sizeof(ref));
			pthread_mutex_unlock(&k->lock);
			if (notify == 1) {
				uint64_t args[UVSHIM_IRQ_NARGS];
				args[UVSHIM_IRQ_ARG_VECTOR] = vec[i];
				args[UVSHIM_IRQ_ARG_COUNT] = total;
				args[UVSHIM_IRQ_ARG_COOKIE] = cookie;
				standin_port_send((mach_port_t)ref[kIOAsyncReservedIndex], ref, args, UVSHIM_IRQ_NARGS);
			}
		}
	}
}

/* ---- attach and detach (UvShim::start / stop) ---- */

/* UvShim::start: memory space on; bus mastering off until an owner programmed the
 * device; MSI-X configured with as many vectors as asked, each masked until armed.
 * Also what IOPCIFamily restores after a wake. */
static void pci_setup(struct standin_kext *k)
{
	cfg_write16(k, PCI_COMMAND, (uint16_t)(cfg_read16(k, PCI_COMMAND) | PCI_CMD_MEMORY));
	bus_lead(k, false);
	cfg_write16(k, MSIX_CTRL, (uint16_t)((cfg_read16(k, MSIX_CTRL) | 0x8000u) & ~0x4000u));
	for (unsigned v = 0; v < k->nvec; v++)
		vector_mask(k, v, !k->armed[v]);
}

static void kext_free(struct standin_kext *k)
{
	if (k->irq_thread) {
		pthread_mutex_lock(&k->lock);
		k->stop = true;
		pthread_mutex_unlock(&k->lock);
		wake_irq_thread(k);
		pthread_join(k->irq_thread, NULL);
	}
	if (k->emu) {
		/* UvShim::stop: bus mastering off.  Nothing is left pinned: every client
		 * closed before the last reference went. */
		bus_lead(k, false);
		emu_destroy(k->emu);
	}
	if (k->wake[0] >= 0)
		close(k->wake[0]);
	if (k->wake[1] >= 0)
		close(k->wake[1]);
	free(k->pins);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

static struct standin_kext *kext_start(unsigned index, const struct standin_cfg *sc)
{
	struct standin_kext *k = calloc(1, sizeof(*k));
	struct emu_config ec;
	struct uvshim_info_rep info;
	struct uvshim_config cfg;
	struct uvshim_platform plat;
	char err[256] = "";

	if (!k)
		return NULL;
	k->index = index;
	k->wake[0] = k->wake[1] = -1;
	for (unsigned v = 0; v < UVSHIM_MAX_VECTORS; v++)
		k->irq_fd[v] = -1;
	pthread_mutex_init(&k->lock, NULL);
	memset(&ec, 0, sizeof(ec));
	if (emu_config_parse(sc->emu_opts, &ec, err, sizeof(err)) < 0)
		goto fail;
	/* A kernel of its own: the BAR is memory the tasks map (IOKit maps the BAR). */
	ec.bar_shared = g_own_process;
	if (emu_create(&ec, &k->emu, err, sizeof(err)) < 0 || pipe(k->wake) < 0)
		goto fail;
	k->nvec = sc->vectors < EMU_NUM_VECTORS ? sc->vectors : EMU_NUM_VECTORS;
	for (unsigned v = 0; v < k->nvec; v++) {
		k->irq_fd[v] = emu_irq_fd(k->emu, v);
		if (k->irq_fd[v] < 0)
			goto fail;
	}
	pci_setup(k);
	/* UvShim::readDeviceInfo */
	memset(&info, 0, sizeof(info));
	info.vendor_id = cfg_read16(k, 0x00);
	info.device_id = cfg_read16(k, 0x02);
	info.subsys_vendor_id = cfg_read16(k, 0x2c);
	info.subsys_device_id = cfg_read16(k, 0x2e);
	info.bus = (uint8_t)(0x10 + index);
	info.tunnelled = 1;
	{
		uint16_t lnk = cfg_read16(k, EMU_PCI_CAP_EXP + 0x12), ctl = cfg_read16(k, EMU_PCI_CAP_EXP + 0x08);
		info.link_speed_gen = lnk & 0xf;
		info.link_width = (lnk >> 4) & 0x3f;
		info.max_payload_bytes = (uint16_t)(128u << ((ctl >> 5) & 7));
	}
	info.page_size = (uint32_t)emu_host_page_size(k->emu);
	info.num_vectors = k->nvec;
	info.bar0_len = emu_bar_len(k->emu);
	info.uar_offset = (UVSHIM_INIT_SEG_END + info.page_size - 1) & ~(uint64_t)(info.page_size - 1);
	info.uar_len = info.bar0_len - info.uar_offset;
	memset(&cfg, 0, sizeof(cfg));
	cfg.group_set = true;
	cfg.group_id = sc->gid;
	cfg.max_pins = UVSHIM_DEFAULT_MAX_PINS;
	cfg.max_pinned_bytes = (uint64_t)sc->pinned_mb << 20;
	k->gid = sc->gid;
	k->uid = sc->uid;
	k->uid_set = sc->uid_set;
	k->pins = calloc(cfg.max_pins, sizeof(*k->pins));
	if (!k->pins)
		goto fail;
	memset(&plat, 0, sizeof(plat));
	plat.ctx = k;
	plat.pin = p_pin;
	plat.unpin = p_release;
	plat.dma_alloc = p_dma_alloc;
	plat.dma_free = p_release;
	plat.bus_master = p_bus_master;
	plat.reset_function = p_reset_function;
	plat.irq_arm = p_irq_arm;
	plat.pin_for = p_pin_for;
	plat.revoke = p_revoke;
	if (uvshim_dev_init(&k->dev, &info, &cfg, &plat, k->pins, cfg.max_pins))
		goto fail;
	if (pthread_create(&k->irq_thread, NULL, irq_main, k)) {
		k->irq_thread = 0;
		goto fail;
	}
	return k;
fail:
	kext_free(k);
	return NULL;
}

unsigned standin_kext_count(void)
{
	struct standin_cfg sc;

	config(&sc);
	return sc.functions;
}

struct standin_kext *standin_kext_get(unsigned index)
{
	struct standin_cfg sc;
	struct standin_kext *k;

	config(&sc);
	if (index >= sc.functions)
		return NULL;
	pthread_mutex_lock(&g_kext_lock);
	if (!g_kext[index])
		g_kext[index] = kext_start(index, &sc);
	k = g_kext[index];
	if (k)
		k->refs++;
	pthread_mutex_unlock(&g_kext_lock);
	return k;
}

void standin_kext_put(struct standin_kext *k)
{
	bool last;

	pthread_mutex_lock(&g_kext_lock);
	last = --k->refs == 0;
	if (last)
		g_kext[k->index] = NULL;
	pthread_mutex_unlock(&g_kext_lock);
	if (last)
		kext_free(k);
}

/* ---- the user client ---- */

/* kauth_cred_ismember_gid for the opening task: its group and supplementary groups. */
static bool is_member(const void *ctx, uint32_t gid)
{
	const struct standin_task *t = ctx;

	if (t->gid == gid)
		return true;
	for (uint32_t i = 0; i < t->ngroups && i < STANDIN_TASK_GROUPS; i++)
		if (t->groups[i] == gid)
			return true;
	return false;
}

void standin_task_self(struct standin_task *t)
{
	gid_t groups[STANDIN_TASK_GROUPS];
	int n = getgroups(STANDIN_TASK_GROUPS, groups);

	memset(t, 0, sizeof(*t));
	t->pid = (int32_t)getpid();
	t->uid = (uint32_t)getuid();
	t->gid = (uint32_t)getgid();
	for (int i = 0; i < n; i++)
		t->groups[t->ngroups++] = (uint32_t)groups[i];
}

void standin_kernel_own_process(void)
{
	g_own_process = true;
}

IOReturn standin_client_open(struct standin_kext *k, const struct standin_task *task, uint32_t type,
			     struct standin_client **out)
{
	struct standin_client *c;
	struct uvshim_cred cred = { .is_member = is_member };
	bool guest = type == UVSHIM_CLIENT_TYPE_GUEST;
	int rc;

	/* UvShimUserClient::initWithTask refuses other types: IOService::newUserClient
	 * answers kIOReturnBadArgument. */
	if (type != UVSHIM_CLIENT_TYPE && type != UVSHIM_CLIENT_TYPE_GUEST)
		return kIOReturnBadArgument;
	/* Guests live in other processes: only a kernel of its own has them. */
	if (guest && !g_own_process)
		return kIOReturnUnsupported;
	c = calloc(1, sizeof(*c));
	if (!c)
		return kIOReturnNoMemory;
	c->k = k;
	c->task = *task;
	cred.uid = k->uid_set ? k->uid : task->uid;
	cred.ctx = &c->task;
	pthread_mutex_lock(&k->lock);
	if (guest) {
		rc = uvshim_guest_open(&k->dev, &cred, c, (uint32_t)task->pid);
	} else {
		rc = uvshim_owner_open(&k->dev, &cred, c);
		if (rc == 0)
			k->owner_pid = task->pid;
	}
	pthread_mutex_unlock(&k->lock);
	if (rc) {
		free(c);
		/* UvShimUserClient::start refused: UvShim::newUserClient answers the core's
		 * reason (IOService's own would answer kIOReturnUnsupported for any). */
		return to_ioreturn(rc);
	}
	c->owner = !guest;
	c->guest = guest;
	pthread_mutex_lock(&g_kext_lock);
	k->refs++;
	c->next = k->clients;
	k->clients = c;
	pthread_mutex_unlock(&g_kext_lock);
	*out = c;
	return kIOReturnSuccess;
}

/* UvShimUserClient::clientDied: the owner's task is gone; the kext tears down as for a
 * close (interrupts off, bus mastering off, FLR, pins released), and the dead task's
 * connection answers nothing more (kIOReturnNotOpen here). */
static void client_died(struct standin_client *c)
{
	struct standin_kext *k = c->k;

	if (c->owner) {
		pthread_mutex_lock(&k->lock);
		uvshim_owner_release(&k->dev, c);
		k->owner_pid = 0;
		pthread_mutex_unlock(&k->lock);
		c->owner = false;
	} else if (c->guest) {
		/* UvShimUserClient::clientClose of a guest: its windows go with it. */
		pthread_mutex_lock(&k->lock);
		uvshim_guest_release(&k->dev, c);
		pthread_mutex_unlock(&k->lock);
		c->guest = false;
	}
}

int uvshim_standin_owner_died(unsigned index)
{
	struct standin_kext *k = standin_kext_get(index);
	struct standin_client *owner = NULL;

	if (!k)
		return -UVSHIM_ENODEV;
	pthread_mutex_lock(&g_kext_lock);
	for (struct standin_client *c = k->clients; c; c = c->next)
		if (c->owner)
			owner = c;
	pthread_mutex_unlock(&g_kext_lock);
	if (owner)
		client_died(owner);
	standin_kext_put(k);
	return owner ? 0 : -UVSHIM_ENOENT;
}

void standin_client_close(struct standin_client *c)
{
	struct standin_kext *k = c->k;

	/* UvShim::ownerRelease: interrupts off, bus mastering off, FLR, every pin and buffer
	 * unmapped (core: uvshim_owner_release). */
	client_died(c);
	pthread_mutex_lock(&g_kext_lock);
	for (struct standin_client **p = &k->clients; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	pthread_mutex_unlock(&g_kext_lock);
	free(c);
	standin_kext_put(k);
}

IOReturn standin_external_method(struct standin_client *c, struct standin_method_args *a)
{
	struct standin_kext *k = c->k;
	uint8_t out[sizeof(struct uvshim_pin_rep)];
	bool async = a->wake_port != MACH_PORT_NULL;
	int rc;

	if (!c->owner && !c->guest)
		return kIOReturnNotOpen;
	/* UvShimUserClient::externalMethod: struct methods only, in the message. */
	if (a->scalar_in_count || a->scalar_out_count || a->struct_in_ool || a->struct_out_ool)
		return to_ioreturn(-UVSHIM_EBADSIZE);
	if (async != (a->selector == UVSHIM_SEL_IRQ_ARM))
		return to_ioreturn(-UVSHIM_EINVAL);
	if (a->struct_out_size > sizeof(out))
		return to_ioreturn(-UVSHIM_EBADSIZE);
	pthread_mutex_lock(&k->lock);
	k->pending_ref = async ? a->async_ref : NULL;
	k->pending_ref_count = async ? a->async_ref_count : 0;
	if (async) {
		/* is_io_connect_async_method: reference[0] carries the wake port. */
		((uint64_t *)(uintptr_t)a->async_ref)[kIOAsyncReservedIndex] = a->wake_port;
	}
	rc = uvshim_dispatch(&k->dev, c, a->selector, a->struct_in, a->struct_in_size,
			     a->struct_out_size ? out : NULL, a->struct_out_size);
	k->pending_ref = NULL;
	k->pending_ref_count = 0;
	pthread_mutex_unlock(&k->lock);
	if (a->struct_out_size && a->struct_out)
		memcpy(a->struct_out, out, a->struct_out_size);
	return to_ioreturn(rc);
}

IOReturn standin_client_map(struct standin_client *c, uint32_t memory_type, IOOptionBits options, uint64_t *addr,
			    uint64_t *size, struct standin_backing *backing)
{
	struct standin_kext *k = c->k;
	struct uvshim_memory m;
	int rc;

	pthread_mutex_lock(&k->lock);
	rc = uvshim_memory_for_type(&k->dev, c, memory_type, &m);
	if (rc == 0 && m.kind == UVSHIM_MEMTYPE_WINDOW) {
		/* UvShimWindow: the caller's cache mode, checked against the window's. */
		rc = uvshim_window_map_check(m.cache, options);
		*addr = (uint64_t)(uintptr_t)(emu_bar_base(k->emu) + m.offset);
		*size = m.length;
		if (backing)
			*backing = (struct standin_backing){ emu_bar_fd(k->emu), m.offset, true };
	} else if (rc == 0) {
		const struct standin_map *map = m.cookie;
		*addr = (uint64_t)(uintptr_t)map->mem;
		*size = m.length;
		if (backing)
			*backing = (struct standin_backing){ map->fd, 0, false };
	}
	pthread_mutex_unlock(&k->lock);
	return to_ioreturn(rc);
}

IOReturn standin_client_unmap(struct standin_client *c, uint32_t memory_type)
{
	struct standin_kext *k = c->k;
	struct uvshim_memory m;
	int rc;

	pthread_mutex_lock(&k->lock);
	rc = uvshim_memory_for_type(&k->dev, c, memory_type, &m);
	pthread_mutex_unlock(&k->lock);
	return to_ioreturn(rc);
}

/* ---- for tests and hw/shim's platform file ---- */

struct emu_dev *standin_client_emu(struct standin_client *c)
{
	return c->k->emu;
}

struct emu_dev *uvshim_standin_emu(unsigned index)
{
	struct emu_dev *e = NULL;

	pthread_mutex_lock(&g_kext_lock);
	if (index < STANDIN_MAX_FUNCTIONS && g_kext[index])
		e = g_kext[index]->emu;
	pthread_mutex_unlock(&g_kext_lock);
	return e;
}

/* ---- power (UvShim's power handling; the policy is shim-kext/core/power.c) ---- */

int uvshim_standin_power(unsigned index, enum uvshim_standin_power event)
{
	struct standin_kext *k = standin_kext_get(index);
	uint64_t ref[UVSHIM_MAX_VECTORS][kOSAsyncRef64Count], args[UVSHIM_MAX_VECTORS][UVSHIM_IRQ_NARGS];
	uint64_t notify = 0;
	int rc = 0;

	if (!k)
		return -UVSHIM_ENODEV;
	pthread_mutex_lock(&k->lock);
	switch (event) {
	case UVSHIM_STANDIN_CAN_SLEEP:        /* kIOMessageCanSystemSleep */
		rc = uvshim_power_may_sleep(&k->dev);
		break;
	case UVSHIM_STANDIN_SLEEP:            /* setPowerState(off) */
		notify = uvshim_power_down(&k->dev);
		emu_pci_power(k->emu, 0);
		for (unsigned v = 0; v < k->nvec; v++) {
			uint64_t total = 0, cookie = 0;
			if (!(notify >> v & 1) || uvshim_irq_fire(&k->dev, v, &total, &cookie) != 1) {
				notify &= ~(1ull << v);
				continue;
			}
			memcpy(ref[v], k->irq_ref[v], sizeof(ref[v]));
			args[v][UVSHIM_IRQ_ARG_VECTOR] = v;
			args[v][UVSHIM_IRQ_ARG_COUNT] = total;
			args[v][UVSHIM_IRQ_ARG_COOKIE] = cookie;
		}
		break;
	case UVSHIM_STANDIN_WAKE:             /* setPowerState(on) */
		emu_pci_power(k->emu, 1);
		pci_setup(k);
		uvshim_power_up(&k->dev);
		break;
	}
	pthread_mutex_unlock(&k->lock);
	/* The owner is told outside the lock, as sendAsyncResult64 is sent. */
	for (unsigned v = 0; v < k->nvec; v++)
		if (notify >> v & 1)
			standin_port_send((mach_port_t)ref[v][kIOAsyncReservedIndex], ref[v], args[v], UVSHIM_IRQ_NARGS);
	standin_kext_put(k);
	return rc;
}
