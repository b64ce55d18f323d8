/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/shim/kext.c: the macOS shim, the userspace client of the uvshim kext
 * (shim-kext/include/uvshim_abi.h is the whole contract; docs/hardware.md, "macOS (kext shim)").
 *
 * URI: kext:<N> opens the N-th ConnectX function the kext has matched (kext: is kext:0).
 *
 * Open, in order: find the service (IOServiceGetMatchingServices on
 * UVSHIM_SERVICE_CLASS), IOServiceOpen (the kext admits one owner: root or its
 * configured group), HELLO (ABI major must match), RESET (FLR, then memory space and
 * bus mastering on, as vfio-pci and Linux give a driver its function), DEVICE_INFO (ids, link, BAR0 and UAR
 * layout, page size), map BAR0 uncached and the UAR region for BlueFlame
 * (MAP_BAR + IOConnectMapMemory64), and arm the MSI-X vectors.
 *
 * Cache modes: IOConnectMapMemory64 takes the cache mode from our map options, not from
 * the kext (xnu iokit/Kernel/IOUserClient.cpp, IOUserClient::mapClientMemory64), so we
 * pass it; the kext refuses a mode its window does not allow (shim-kext/core/window.c).
 * BAR0 is mapped kIOMapInhibitCache. The UAR window's mode is UVERBS_KEXT_BLUEFLAME:
 *   gre  kIOMapPostedCombinedReordered, Device-GRE on arm64 (xnu osfmk/arm/pmap/pmap.c),
 *        the mode Apple provides for combining MMIO writes; default on Apple Silicon
 *        with macOS 12 or later (Darwin 21, where IOMapTypes.h gained it);
 *   wc   kIOMapWriteCombineCache, Normal-NC on arm64, which Apple Silicon may refuse
 *        for PCIe BARs; write-combining on x86, the default on Intel Macs;
 *   off  no UAR window: no BlueFlame, the driver rings 64-bit doorbells through the
 *        uncached BAR0 mapping; the default on Apple Silicon before macOS 12.
 *
 * Interrupts: the kext sends one async message per interrupt to a mach port. The driver
 * needs what every shim gives it: a pollable fd per vector from which it reads 8 bytes
 * to acknowledge (shim.h). A kqueue with EVFILT_MACHPORT is pollable, but reading it is
 * kevent() plus mach_msg(), not read(): the driver would need a macOS branch. So each
 * vector gets a pipe; the IONotificationPort is served on a private dispatch queue
 * (one thread, made by libdispatch), whose callback writes 8 bytes into the vector's
 * pipe only when the pipe is empty, so wakeups coalesce like an eventfd counter and the
 * pipe can never fill. The kext's per-vector count lets us see dropped messages; they
 * need no action since one pending record already wakes the poller.
 *
 * Pins: the kext pins whole pages (16 KiB on Apple Silicon) and returns DART segments,
 * possibly more than one reply holds (PIN then PIN_SEGS). The first and last segments
 * are trimmed here so that the list describes exactly [va, va+len).
 *
 * Built on a Mac against IOKit, and on Linux against the IOKit stand-in
 * (shim-kext/standin), whose function is the emulated ConnectX: what differs between
 * the two is in kext_plat.h (kext_plat_macos.c, kext_plat_linux.c).
 */
#include "hw/shim/kext_guest.h"
#include "hw/shim/kext_plat.h"
#include "hw/shim/shim.h"
#include "hw/shim/backend.h"
#include "shim-kext/include/uvshim_abi.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <IOKit/IOKitLib.h>
#include <dispatch/dispatch.h>
#include <mach/mach.h>
#include <mach/mach_error.h>

extern const struct shim_ops shim_kext_ops;

struct kext_rec {                 /* one DMA buffer or pin the kext holds for us */
	struct plat_list link;        /* in kext_dev.recs */
	uint64_t handle;
	int is_dma;
	uint32_t memory_type;         /* DMA: what IOConnectMapMemory64 mapped */
	mach_vm_address_t map_addr;
	struct shim_iova_seg *seg;    /* pin: trimmed segment list */
};

struct kext_vec {
	struct kext_dev *k;
	unsigned vector;
	int rfd, wfd;
	int armed;
	uint64_t last_count;          /* the kext's count at the last message */
};

struct kext_dev {
	struct shim_dev dev;          /* first: shim.c sees a struct shim_dev */
	io_service_t service;
	io_connect_t conn;
	struct uvshim_hello_rep hello;
	struct uvshim_info_rep info;
	uint32_t bar_type, wc_type;   /* window memory types, 0 if not mapped */
	mach_vm_address_t bar_addr, wc_addr;
	mach_vm_size_t bar_size, wc_size;
	struct shim_mmio_hook hook;   /* kext_plat.h: the stand-in's BAR needs one */
	int have_hook;
	IONotificationPortRef notify;
	dispatch_queue_t queue;
	unsigned nvec;
	struct kext_vec *vec;
	pthread_mutex_t lock;
	struct plat_list recs;        /* every kext_rec */
};

#define kerr(k, ...) shim_errf(&(k)->dev, __VA_ARGS__)

static struct kext_dev *to_kext(struct shim_dev *d)
{
	return (struct kext_dev *)d;
}

/* IOReturn -> negative errno. The kext's own statuses (UVSHIM_IORETURN) below 256 are
 * the errno numbers Darwin and Linux share; the ABI-specific ones get the nearest. */
static int kext_errno(kern_return_t kr)
{
	if (kr == KERN_SUCCESS)
		return 0;
	if (UVSHIM_IORETURN_IS_STATUS((uint32_t)kr)) {
		switch (UVSHIM_STATUS_OF_IORETURN((uint32_t)kr)) {
		case UVSHIM_EPERM: return -EPERM;
		case UVSHIM_ENOENT: return -ENOENT;
		case UVSHIM_EIO: return -EIO;
		case UVSHIM_ENOMEM: return -ENOMEM;
		case UVSHIM_EACCES: return -EACCES;
		case UVSHIM_EFAULT: return -EFAULT;
		case UVSHIM_EBUSY: return -EBUSY;
		case UVSHIM_EEXIST: return -EEXIST;
		case UVSHIM_ENODEV: return -ENODEV;
		case UVSHIM_EINVAL: return -EINVAL;
		case UVSHIM_ENOSPC: return -ENOSPC;
		case UVSHIM_ERANGE: return -ERANGE;
		case UVSHIM_ENOSYS: return -ENOSYS;
		case UVSHIM_EPINLIMIT: return -ENOMEM;
		default: return -EPROTO;   /* EBADSIZE, EVERSION, ENOHELLO: client/kext mismatch */
		}
	}
	switch (kr) {
	case kIOReturnNotPrivileged: return -EACCES;
	case kIOReturnExclusiveAccess: return -EBUSY;
	case kIOReturnNoDevice:
	case kIOReturnNotAttached:
	case kIOReturnNotResponding: return -ENODEV;
	case kIOReturnNoMemory:
	case kIOReturnNoResources: return -ENOMEM;
	case kIOReturnBadArgument: return -EINVAL;
	case kIOReturnUnsupported: return -ENOTSUP;
	default: return -EIO;
	}
}

static const char *kext_strerror(kern_return_t kr)
{
	if (UVSHIM_IORETURN_IS_STATUS((uint32_t)kr))
		return uvshim_status_name(UVSHIM_STATUS_OF_IORETURN((uint32_t)kr));
	return mach_error_string(kr);
}

/* One struct method: exact request and reply sizes (the kext checks both). */
static int kcall(struct kext_dev *k, uint32_t sel, const char *what, const void *in, size_t in_len,
		 void *out, size_t out_len)
{
	size_t got = out_len;
	kern_return_t kr = IOConnectCallStructMethod(k->conn, sel, in, in_len, out, out_len ? &got : NULL);

	if (kr != KERN_SUCCESS) {
		kerr(k, "kext %s: %s: %s (0x%x)", k->dev.pci.bdf[0] ? k->dev.pci.bdf : "", what,
		     kext_strerror(kr), (unsigned)kr);
		return kext_errno(kr);
	}
	if (got != out_len) {
		kerr(k, "kext: %s: reply of %zu bytes, expected %zu (ABI mismatch)", what, got, out_len);
		return -EPROTO;
	}
	return 0;
}

/* Declare a BAR0 window and map it into this task with IOKit cache mode map_mode. */
static int map_window(struct kext_dev *k, uint32_t cache, IOOptionBits map_mode, uint64_t off, uint64_t len,
		      uint32_t *type, mach_vm_address_t *addr, mach_vm_size_t *size)
{
	struct uvshim_map_bar_req req = { .bar = 0, .cache = cache, .offset = off, .length = len };
	struct uvshim_map_bar_rep rep;
	kern_return_t kr;
	int rc = kcall(k, UVSHIM_SEL_MAP_BAR, cache == UVSHIM_CACHE_WC ? "MAP_BAR (UAR, BlueFlame)" :
		       "MAP_BAR (BAR0, uncached)", &req, sizeof(req), &rep, sizeof(rep));

	if (rc < 0)
		return rc;
	*addr = 0;
	*size = 0;
	/* The cache mode is ours to give; the kext's window refuses one it does not allow. */
	kr = IOConnectMapMemory64(k->conn, rep.memory_type, mach_task_self(), addr, size,
				  kIOMapAnywhere | map_mode);
	if (kr != KERN_SUCCESS || *size < len) {
		struct uvshim_unmap_bar_req u = { .memory_type = rep.memory_type };
		if (kr == KERN_SUCCESS)
			IOConnectUnmapMemory64(k->conn, rep.memory_type, mach_task_self(), *addr);
		kcall(k, UVSHIM_SEL_UNMAP_BAR, "UNMAP_BAR", &u, sizeof(u), NULL, 0);
		kerr(k, "kext: mapping BAR0 window 0x%llx+0x%llx: %s", (unsigned long long)off,
		     (unsigned long long)len, kr != KERN_SUCCESS ? kext_strerror(kr) : "short mapping");
		return kr != KERN_SUCCESS ? kext_errno(kr) : -EIO;
	}
	*type = rep.memory_type;
	return 0;
}

static void unmap_window(struct kext_dev *k, uint32_t *type, mach_vm_address_t addr)
{
	struct uvshim_unmap_bar_req u = { .memory_type = *type };

	if (!*type)
		return;
	IOConnectUnmapMemory64(k->conn, *type, mach_task_self(), addr);
	kcall(k, UVSHIM_SEL_UNMAP_BAR, "UNMAP_BAR", &u, sizeof(u), NULL, 0);
	*type = 0;
}

/* ---- interrupts ---- */

static void kext_irq_cb(void *refcon, IOReturn result, void **args, uint32_t nargs)
{
	struct kext_vec *v = refcon;
	uint64_t one = 1;
	int pending = 0;

	if (result != kIOReturnSuccess || !v)
		return;
	if (nargs > UVSHIM_IRQ_ARG_COUNT)
		v->last_count = (uint64_t)(uintptr_t)args[UVSHIM_IRQ_ARG_COUNT];
	/* Write only into an empty pipe: a record already there will wake the poller, and
	 * the driver drains its EQ on each wake, so the pipe cannot fill up. */
	if (ioctl(v->rfd, FIONREAD, &pending) == 0 && pending > 0)
		return;
	(void)!write(v->wfd, &one, sizeof(one));
}

static void queue_flush(void *ctx)
{
	(void)ctx;
}

static int set_nonblock_cloexec(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return -errno;
	return 0;
}

static int arm_vector(struct kext_dev *k, struct kext_vec *v)
{
	struct uvshim_irq_req req = { .vector = v->vector, .flags = 0, .cookie = (uint64_t)(uintptr_t)v };
	uint64_t ref[kOSAsyncRef64Count];
	kern_return_t kr;

	memset(ref, 0, sizeof(ref));
	ref[kIOAsyncCalloutFuncIndex] = (uint64_t)(uintptr_t)kext_irq_cb;
	ref[kIOAsyncCalloutRefconIndex] = (uint64_t)(uintptr_t)v;
	kr = IOConnectCallAsyncStructMethod(k->conn, UVSHIM_SEL_IRQ_ARM, IONotificationPortGetMachPort(k->notify),
					    ref, kOSAsyncRef64Count, &req, sizeof(req), NULL, NULL);
	if (kr != KERN_SUCCESS) {
		kerr(k, "kext %s: arming MSI-X vector %u: %s", k->dev.pci.bdf, v->vector, kext_strerror(kr));
		return kext_errno(kr);
	}
	v->armed = 1;
	return 0;
}

static int setup_irqs(struct kext_dev *k, unsigned want)
{
	unsigned n = k->info.num_vectors;
	int rc;

	if (k->hello.num_vectors < n)
		n = k->hello.num_vectors;
	if (n > UVSHIM_MAX_VECTORS)
		n = UVSHIM_MAX_VECTORS;
	if (n > want)
		n = want;
	if (n == 0)
		return 0;
	k->notify = IONotificationPortCreate(MACH_PORT_NULL);
	k->queue = dispatch_queue_create("org.uverbs.shim.kext.irq", DISPATCH_QUEUE_SERIAL);
	if (!k->notify || !k->queue) {
		kerr(k, "kext %s: cannot create the interrupt notification port", k->dev.pci.bdf);
		return -ENOMEM;
	}
	IONotificationPortSetDispatchQueue(k->notify, k->queue);
	k->vec = calloc(n, sizeof(*k->vec));
	if (!k->vec)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		k->vec[i].rfd = k->vec[i].wfd = -1;
	}
	k->nvec = n;
	for (unsigned i = 0; i < n; i++) {
		struct kext_vec *v = &k->vec[i];
		int p[2];

		v->k = k;
		v->vector = i;
		if (pipe(p) < 0) {
			rc = -errno;
			kerr(k, "kext %s: pipe for MSI-X vector %u: %s", k->dev.pci.bdf, i, strerror(-rc));
			return rc;
		}
		v->rfd = p[0];
		v->wfd = p[1];
		rc = set_nonblock_cloexec(v->rfd);
		if (rc == 0)
			rc = set_nonblock_cloexec(v->wfd);
		if (rc < 0) {
			kerr(k, "kext %s: pipe flags: %s", k->dev.pci.bdf, strerror(-rc));
			return rc;
		}
		rc = arm_vector(k, v);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- open ---- */

static int parse_index(const char *args, unsigned *index)
{
	char *end;
	unsigned long v;

	if (!args || !*args) {
		*index = 0;
		return 0;
	}
	if (*args < '0' || *args > '9')
		return -EINVAL;
	v = strtoul(args, &end, 10);
	if (*end != '\0' || v > 255)
		return -EINVAL;
	*index = (unsigned)v;
	return 0;
}

static int find_service(struct kext_dev *k, unsigned index)
{
	io_iterator_t it = IO_OBJECT_NULL;
	io_service_t s;
	unsigned i = 0;
	kern_return_t kr;

	/* MACH_PORT_NULL selects the default main port (kIOMainPortDefault). */
	kr = IOServiceGetMatchingServices(MACH_PORT_NULL, IOServiceMatching(UVSHIM_SERVICE_CLASS), &it);
	if (kr != KERN_SUCCESS) {
		kerr(k, "kext: looking up %s services: %s", UVSHIM_SERVICE_CLASS, mach_error_string(kr));
		return kext_errno(kr);
	}
	while ((s = IOIteratorNext(it)) != IO_OBJECT_NULL) {
		if (i++ == index) {
			k->service = s;
			break;
		}
		IOObjectRelease(s);
	}
	IOObjectRelease(it);
	if (k->service == IO_OBJECT_NULL) {
		kerr(k, "kext:%u: no such device (%u ConnectX function%s matched by the uvshim kext; is it loaded "
		     "(kmutil showloaded | grep uvshim), approved, and the enclosure connected?)",
		     index, i, i == 1 ? "" : "s");
		return -ENODEV;
	}
	return 0;
}

/* The UAR window's map mode (see the top of this file); 0 means no UAR window. */
static int blueflame_mode(struct kext_dev *k, IOOptionBits *mode)
{
	const char *env = getenv("UVERBS_KEXT_BLUEFLAME");
	struct utsname u;

	if (env && *env) {
		if (strcmp(env, "gre") == 0)
			*mode = kIOMapPostedCombinedReordered;
		else if (strcmp(env, "wc") == 0)
			*mode = kIOMapWriteCombineCache;
		else if (strcmp(env, "off") == 0)
			*mode = 0;
		else {
			kerr(k, "UVERBS_KEXT_BLUEFLAME=%s: expected gre, wc or off", env);
			return -EINVAL;
		}
		return 0;
	}
#if defined(__aarch64__) || defined(__arm64__)
	*mode = uname(&u) == 0 && atoi(u.release) >= 21 ? kIOMapPostedCombinedReordered : 0;
#else
	(void)u;
	*mode = kIOMapWriteCombineCache;
#endif
	return 0;
}

static int kext_open(const char *args, struct shim_dev **out)
{
	struct uvshim_hello_req hreq = { .abi_major = UVSHIM_ABI_MAJOR, .abi_minor = UVSHIM_ABI_MINOR };
	struct uvshim_info_req ireq = { 0, 0 };
	struct uvshim_reset_req rreq = { 0, 0 };
	struct shim_dev *d;
	struct kext_dev *k;
	IOOptionBits bf_mode = 0;
	unsigned index;
	kern_return_t kr;
	int rc = shim_dev_new(out, sizeof(*k), &shim_kext_ops, &d);

	if (rc < 0)
		return rc;
	k = to_kext(d);
	k->dev.page_size = (size_t)getpagesize();
	pthread_mutex_init(&k->lock, NULL);
	plat_list_init(&k->recs);
	*out = &k->dev;

	if (parse_index(args, &index) < 0) {
		kerr(k, "kext:%s: expected kext:<N>, the index of the ConnectX function (kext:0)", args);
		return -EINVAL;
	}
	rc = blueflame_mode(k, &bf_mode);
	if (rc < 0)
		return rc;
	rc = find_service(k, index);
	if (rc < 0)
		return rc;
	kr = IOServiceOpen(k->service, mach_task_self(), UVSHIM_CLIENT_TYPE, &k->conn);
	if (kr != KERN_SUCCESS) {
		rc = kext_errno(kr);
		if (rc == -EBUSY)
			kerr(k, "kext:%u: the device is owned by another process (one owner at a time), or is "
			     "being reset after its owner exited", index);
		else if (rc == -EACCES || rc == -EPERM)
			kerr(k, "kext:%u: not allowed: run as root or as a member of the group set in the kext's "
			     "Info.plist (%s)", index, UVSHIM_PLIST_GROUP);
		else
			kerr(k, "kext:%u: IOServiceOpen: %s", index, kext_strerror(kr));
		k->conn = IO_OBJECT_NULL;
		return rc;
	}
	rc = kcall(k, UVSHIM_SEL_HELLO, "HELLO", &hreq, sizeof(hreq), &k->hello, sizeof(k->hello));
	if (rc < 0 && rc != -EPROTO)
		return rc;
	if (rc < 0 || k->hello.abi_major != UVSHIM_ABI_MAJOR) {
		kerr(k, "kext:%u: the loaded kext speaks uvshim ABI %u.%u, this library %u.%u: rebuild and "
		     "reload the kext from this source tree", index, k->hello.abi_major, k->hello.abi_minor,
		     UVSHIM_ABI_MAJOR, UVSHIM_ABI_MINOR);
		return -EPROTO;
	}
	/* Start as vfio-pci starts a function (its open-time pci_try_reset_function, then
	 * rdma-core's mlx5_vfio_enable_pci_cmd / Linux pci_set_master): RESET is an FLR
	 * and leaves memory space and bus mastering on.  Without it the kext's bus
	 * mastering stays off (it turns it off at start and after every owner), the device
	 * cannot fetch the first command and ENABLE_HCA times out; and whatever another
	 * driver (AppleEthernetMLX5, a crashed owner) left in the function is gone. */
	rc = kcall(k, UVSHIM_SEL_RESET, "RESET (function level reset, bus mastering on)", &rreq, sizeof(rreq),
		   NULL, 0);
	if (rc < 0)
		return rc;
	rc = kcall(k, UVSHIM_SEL_DEVICE_INFO, "DEVICE_INFO", &ireq, sizeof(ireq), &k->info, sizeof(k->info));
	if (rc < 0)
		return rc;
	snprintf(k->dev.pci.bdf, sizeof(k->dev.pci.bdf), "%04x:%02x:%02x.%x", k->info.pci_domain & 0xffff,
		 k->info.bus, k->info.device, k->info.function & 7);
	k->dev.pci.vendor_id = k->info.vendor_id;
	k->dev.pci.device_id = k->info.device_id;
	k->dev.pci.subsys_vendor_id = k->info.subsys_vendor_id;
	k->dev.pci.subsys_device_id = k->info.subsys_device_id;
	k->dev.pci.link_speed_gen = k->info.link_speed_gen;
	k->dev.pci.link_width = k->info.link_width;
	k->dev.pci.max_payload_bytes = k->info.max_payload_bytes;
	/* The kext pins and maps in its page size; the driver must size host memory by it. */
	if (k->info.page_size)
		k->dev.page_size = k->info.page_size;
	if (k->info.bar0_len == 0) {
		kerr(k, "kext %s: the kext reports an empty BAR0", k->dev.pci.bdf);
		return -ENODEV;
	}
	rc = map_window(k, UVSHIM_CACHE_UNCACHED, kIOMapInhibitCache, 0, k->info.bar0_len, &k->bar_type,
			&k->bar_addr, &k->bar_size);
	if (rc < 0)
		return rc;
	k->have_hook = kext_plat_bar_hook((uint32_t)k->conn, &k->hook);
	/* BlueFlame wants the UAR pages combining; without that window the driver rings
	 * plain doorbells through the uncached mapping, so a failure is not fatal. */
	if (bf_mode && k->info.uar_len &&
	    map_window(k, UVSHIM_CACHE_WC, bf_mode, k->info.uar_offset, k->info.uar_len, &k->wc_type,
		       &k->wc_addr, &k->wc_size) < 0) {
		k->wc_type = 0;
		k->dev.err[0] = '\0';
	}
	/* As many vectors as the kext allocated (its UvShimMSIXVectors): one per EQ. */
	return setup_irqs(k, UVSHIM_MAX_VECTORS);
}

/* ---- memory ---- */

static void release_rec(struct kext_dev *k, struct kext_rec *r)
{
	struct uvshim_handle_req h = { .handle = r->handle };

	plat_list_del(&r->link);
	if (r->is_dma) {
		IOConnectUnmapMemory64(k->conn, r->memory_type, mach_task_self(), r->map_addr);
		kcall(k, UVSHIM_SEL_DMA_FREE, "DMA_FREE", &h, sizeof(h), NULL, 0);
	} else {
		kcall(k, UVSHIM_SEL_UNPIN, "UNPIN", &h, sizeof(h), NULL, 0);
	}
	free(r->seg);
	free(r);
}

static int kext_dma_alloc(struct shim_dev *d, size_t len, size_t align, struct shim_dma *out)
{
	struct kext_dev *k = to_kext(d);
	struct uvshim_dma_alloc_req req = { .length = len, .align = align ? align : k->dev.page_size };
	struct uvshim_dma_alloc_rep rep;
	mach_vm_address_t addr = 0;
	mach_vm_size_t size = 0;
	struct kext_rec *r;
	kern_return_t kr;
	int rc;

	if (!out || len == 0 || (align & (align - 1)) || align > UVSHIM_MAX_DMA_ALIGN) {
		kerr(k, "kext: dma_alloc: length %zu / alignment %zu invalid (power of two up to %llu)", len, align,
		     (unsigned long long)UVSHIM_MAX_DMA_ALIGN);
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	pthread_mutex_lock(&k->lock);
	rc = kcall(k, UVSHIM_SEL_DMA_ALLOC, "DMA_ALLOC", &req, sizeof(req), &rep, sizeof(rep));
	if (rc == 0) {
		/* Driver memory is ordinary kernel memory: the default (cached) mode. */
		kr = IOConnectMapMemory64(k->conn, rep.memory_type, mach_task_self(), &addr, &size,
					  kIOMapAnywhere | kIOMapDefaultCache);
		if (kr != KERN_SUCCESS || size < len) {
			struct uvshim_handle_req h = { .handle = rep.handle };
			if (kr == KERN_SUCCESS)
				IOConnectUnmapMemory64(k->conn, rep.memory_type, mach_task_self(), addr);
			kcall(k, UVSHIM_SEL_DMA_FREE, "DMA_FREE", &h, sizeof(h), NULL, 0);
			kerr(k, "kext: mapping DMA buffer of %zu bytes: %s", len,
			     kr != KERN_SUCCESS ? kext_strerror(kr) : "short mapping");
			rc = kr != KERN_SUCCESS ? kext_errno(kr) : -EIO;
		}
	}
	if (rc < 0) {
		pthread_mutex_unlock(&k->lock);
		free(r);
		return rc;
	}
	*r = (struct kext_rec){ .handle = rep.handle, .is_dma = 1, .memory_type = rep.memory_type, .map_addr = addr };
	plat_list_add(&k->recs, &r->link);
	pthread_mutex_unlock(&k->lock);
	*out = (struct shim_dma){ .va = (void *)(uintptr_t)addr, .iova = rep.iova, .len = len, .priv = r };
	return 0;
}

static void kext_release(struct shim_dev *d, void *r)
{
	release_rec(to_kext(d), r);
}

static void kext_dma_free(struct shim_dev *d, struct shim_dma *dma)
{
	shim_handle_release(d, &to_kext(d)->lock, dma, sizeof(*dma), dma ? dma->priv : NULL, kext_release);
}

/* PIN of our own pages (pid 0), or PIN_FOR of a guest's (ABI 1.1): the same reply. */
static int pin_call(struct kext_dev *k, int32_t pid, uint64_t va, uint64_t len, uint32_t flags,
		    struct uvshim_pin_rep *rep)
{
	if (pid == 0) {
		struct uvshim_pin_req req = { .va = va, .length = len, .flags = flags };
		return kcall(k, UVSHIM_SEL_PIN, flags & UVSHIM_PIN_DEVICE_WRITE ? "PIN" : "PIN (read-only)",
			     &req, sizeof(req), rep, sizeof(*rep));
	}
	struct uvshim_pin_for_req req = { .va = va, .length = len, .flags = flags, .pid = (uint32_t)pid };
	return kcall(k, UVSHIM_SEL_PIN_FOR, flags & UVSHIM_PIN_DEVICE_WRITE ? "PIN_FOR" : "PIN_FOR (read-only)",
		     &req, sizeof(req), rep, sizeof(*rep));
}

static int kext_pin_task(struct kext_dev *k, int32_t pid, void *va, size_t len, struct shim_pin *out);

static int kext_dma_pin(struct shim_dev *d, void *va, size_t len, struct shim_pin *out)
{
	return kext_pin_task(to_kext(d), 0, va, len, out);
}

/* The owner wires a guest's pages (tools/uvd, a client's ibv_reg_mr): va is the
 * guest's address; the kext charges the pin to our limits. */
static int kext_pin_for(struct shim_dev *d, int32_t pid, uint64_t va, size_t len, struct shim_pin *out)
{
	if (pid <= 0)
		return -EINVAL;
	return kext_pin_task(to_kext(d), pid, (void *)(uintptr_t)va, len, out);
}

/* GRANT or REVOKE one host page of the UAR region to process pid. */
static int kext_share_uar(struct shim_dev *d, int32_t pid, uint64_t bar_off, int grant)
{
	struct kext_dev *k = to_kext(d);
	struct uvshim_grant_req req;
	int rc = shim_kext_uar_index(&k->info, bar_off, &req.uar_index);

	if (rc < 0 || pid <= 0) {
		kerr(k, "kext: %s: BAR0 offset 0x%llx is not a page of the UAR region", grant ? "GRANT" : "REVOKE",
		     (unsigned long long)bar_off);
		return -EINVAL;
	}
	req.pid = (uint32_t)pid;
	pthread_mutex_lock(&k->lock);
	rc = kcall(k, grant ? UVSHIM_SEL_GRANT : UVSHIM_SEL_REVOKE, grant ? "GRANT" : "REVOKE", &req,
		   sizeof(req), NULL, 0);
	pthread_mutex_unlock(&k->lock);
	return rc;
}

static int kext_pin_task(struct kext_dev *k, int32_t pid, void *va, size_t len, struct shim_pin *out)
{
	uintptr_t addr = (uintptr_t)va, pg = k->dev.page_size, start, end;
	struct uvshim_pin_req req;
	struct uvshim_pin_rep *rep;
	struct kext_rec *r;
	uint32_t total, have = 0;
	int rc;

	if (!out || !va || len == 0 || addr + len < addr) {
		kerr(k, "kext: dma_pin: empty or wrapping range %p+%zu", va, len);
		return -EINVAL;
	}
	/* The DART maps whole pages: pin the covering pages, report exactly [va, va+len). */
	start = addr & ~(pg - 1);
	end = (addr + len + pg - 1) & ~(pg - 1);
	rep = malloc(sizeof(*rep));
	r = calloc(1, sizeof(*r));
	if (!rep || !r) {
		free(rep);
		free(r);
		return -ENOMEM;
	}
	memset(&req, 0, sizeof(req));
	req.va = start;
	req.length = end - start;
	req.flags = UVSHIM_PIN_DEVICE_READ | UVSHIM_PIN_DEVICE_WRITE;
	pthread_mutex_lock(&k->lock);
	rc = pin_call(k, pid, req.va, req.length, req.flags, rep);
	if (rc == -EFAULT) {
		/* Read-only memory can still be read by the device (no write access asked). */
		req.flags = UVSHIM_PIN_DEVICE_READ;
		rc = pin_call(k, pid, req.va, req.length, req.flags, rep);
	}
	if (rc < 0)
		goto fail;
	r->handle = rep->handle;
	total = rep->nseg_total;
	if (total == 0 || total > (end - start) / pg) {
		kerr(k, "kext: PIN returned %u segments for %llu pages", total, (unsigned long long)((end - start) / pg));
		rc = -EPROTO;
		goto fail_unpin;
	}
	r->seg = calloc(total, sizeof(*r->seg));
	if (!r->seg) {
		rc = -ENOMEM;
		goto fail_unpin;
	}
	for (;;) {
		if (rep->first_seg != have || rep->nseg == 0 || rep->nseg > UVSHIM_MAX_SEGS_PER_REPLY ||
		    rep->nseg > total - have) {
			kerr(k, "kext: PIN reply pages segments %u+%u of %u, expected from %u", rep->first_seg,
			     rep->nseg, total, have);
			rc = -EPROTO;
			goto fail_unpin;
		}
		for (uint32_t i = 0; i < rep->nseg; i++) {
			r->seg[have + i].iova = rep->seg[i].iova;
			r->seg[have + i].len = rep->seg[i].len;
		}
		have += rep->nseg;
		if (have == total)
			break;
		struct uvshim_pin_segs_req sreq = { .handle = r->handle, .first_seg = have };
		rc = kcall(k, UVSHIM_SEL_PIN_SEGS, "PIN_SEGS", &sreq, sizeof(sreq), rep, sizeof(*rep));
		if (rc < 0)
			goto fail_unpin;
	}
	/* Trim the page rounding: segments are page multiples, so the head offset lies in
	 * the first and the tail slack in the last. */
	{
		uint64_t head = addr - start, tail = end - (addr + len);
		if (r->seg[0].len <= head || r->seg[total - 1].len <= tail ||
		    (total == 1 && r->seg[0].len < head + tail + 1)) {
			kerr(k, "kext: PIN segments shorter than a page");
			rc = -EPROTO;
			goto fail_unpin;
		}
		r->seg[0].iova += head;
		r->seg[0].len -= head;
		r->seg[total - 1].len -= tail;
	}
	plat_list_add(&k->recs, &r->link);
	pthread_mutex_unlock(&k->lock);
	free(rep);
	/* readonly: pinned by the read-only retry, the driver must not let the device write there */
	*out = (struct shim_pin){ .va = va, .len = len, .nseg = total, .seg = r->seg, .priv = r,
				  .readonly = !(req.flags & UVSHIM_PIN_DEVICE_WRITE) };
	return 0;

fail_unpin:
	{
		struct uvshim_handle_req h = { .handle = r->handle };
		char keep[SHIM_ERR_LEN];
		memcpy(keep, k->dev.err, sizeof(keep));
		kcall(k, UVSHIM_SEL_UNPIN, "UNPIN", &h, sizeof(h), NULL, 0);
		memcpy(k->dev.err, keep, sizeof(keep));
	}
fail:
	pthread_mutex_unlock(&k->lock);
	free(r->seg);
	free(r);
	free(rep);
	return rc;
}

static void kext_dma_unpin(struct shim_dev *d, struct shim_pin *pin)
{
	shim_handle_release(d, &to_kext(d)->lock, pin, sizeof(*pin), pin ? pin->priv : NULL, kext_release);
}

/* ---- BAR, interrupts, reset, close ---- */

static int kext_bar(struct shim_dev *d, unsigned index, struct shim_bar *out)
{
	struct kext_dev *k = to_kext(d);

	if (!out)
		return -EINVAL;
	if (index != 0 || !k->bar_type) {
		kerr(k, "kext %s: only BAR0 is mapped (asked for BAR%u)", d->pci.bdf, index);
		return -ENOENT;
	}
	out->base = (volatile uint8_t *)(uintptr_t)k->bar_addr;
	out->len = (size_t)k->info.bar0_len;
	/* wc_base is indexed with BAR offsets like base (hw/mlx5 uses the same offsets on
	 * both), but only the UAR window [uar_offset, uar_offset+uar_len) is mapped. */
	out->wc_base = k->wc_type ? (volatile uint8_t *)(uintptr_t)(k->wc_addr - k->info.uar_offset) : NULL;
	out->hook = k->have_hook ? &k->hook : NULL;
	return 0;
}

static int kext_irq_fd(struct shim_dev *d, unsigned vector)
{
	struct kext_dev *k = to_kext(d);

	if (vector >= k->nvec) {
		kerr(k, "kext %s: interrupt vector %u out of range (%u armed)", d->pci.bdf, vector, k->nvec);
		return -EINVAL;
	}
	return k->vec[vector].rfd;
}

static unsigned kext_irq_count(struct shim_dev *d)
{
	return to_kext(d)->nvec;
}

static int kext_reset(struct shim_dev *d)
{
	struct kext_dev *k = to_kext(d);
	struct uvshim_reset_req req = { 0, 0 };

	if (k->conn == IO_OBJECT_NULL)
		return -ENODEV;
	return kcall(k, UVSHIM_SEL_RESET, "RESET", &req, sizeof(req), NULL, 0);
}

static void kext_close(struct shim_dev *d)
{
	struct kext_dev *k = to_kext(d);

	if (!k)
		return;
	for (unsigned i = 0; i < k->nvec; i++)
		if (k->vec[i].armed) {
			struct uvshim_irq_req req = { .vector = i };
			kcall(k, UVSHIM_SEL_IRQ_DISARM, "IRQ_DISARM", &req, sizeof(req), NULL, 0);
		}
	if (k->notify)
		IONotificationPortDestroy(k->notify);
	if (k->queue) {
		/* No callback may run once the pipes below are closed. */
		dispatch_sync_f(k->queue, NULL, queue_flush);
		dispatch_release(k->queue);
	}
	for (unsigned i = 0; i < k->nvec; i++) {
		if (k->vec[i].rfd >= 0)
			close(k->vec[i].rfd);
		if (k->vec[i].wfd >= 0)
			close(k->vec[i].wfd);
	}
	free(k->vec);
	if (k->conn != IO_OBJECT_NULL) {
		/* The kext also releases all of this when the connection closes; doing it
		 * here keeps the order explicit and the kext's tables empty. */
		pthread_mutex_lock(&k->lock);
		while (!plat_list_empty(&k->recs))
			release_rec(k, plat_container_of(k->recs.next, struct kext_rec, link));
		pthread_mutex_unlock(&k->lock);
		unmap_window(k, &k->wc_type, k->wc_addr);
		unmap_window(k, &k->bar_type, k->bar_addr);
		IOServiceClose(k->conn);
	}
	if (k->service != IO_OBJECT_NULL)
		IOObjectRelease(k->service);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

static void *kext_emulated(struct shim_dev *d)
{
	return kext_plat_emulated((uint32_t)to_kext(d)->conn);
}

static int kext_port_addrs(struct shim_dev *d, unsigned port, uint8_t (*addrs)[16], unsigned max)
{
	return kext_plat_port_addrs((uint32_t)to_kext(d)->conn, port, addrs, max);
}

static int kext_neigh(struct shim_dev *d, const uint8_t addr[16], uint8_t mac[6])
{
	return kext_plat_neigh((uint32_t)to_kext(d)->conn, addr, mac);
}

const struct shim_ops shim_kext_ops = {
	SHIM_OPS_CORE("kext", kext),
	.reset = kext_reset,
	.emulated = kext_emulated,
	SHIM_OPS_NETWORK(kext),
	.share_uar = kext_share_uar,
	.pin_for = kext_pin_for,
};

/* ---- a guest of the owner (hw/shim/kext_guest.h) ---- */

struct shim_kext_guest {
	struct kext_dev k;            /* its own connection, of type UVSHIM_CLIENT_TYPE_GUEST */
	uint32_t type;
	mach_vm_address_t addr;
	uint64_t bar_off;             /* the window's BAR0 offset */
	struct shim_mmio_hook hook;   /* kext_plat.h: the stand-in's device needs one */
	int have_hook;
};

/* The hook in BAR0 offsets; the guest's page is the window at g->bar_off. */
const struct shim_mmio_hook *shim_kext_guest_hook(struct shim_kext_guest *g)
{
	return g && g->have_hook ? &g->hook : NULL;
}

int shim_kext_guest_open(unsigned index, uint64_t bar_off, struct shim_kext_guest **out, volatile void **uar,
			 size_t *len, char *err, size_t errlen)
{
	struct uvshim_hello_req hreq = { .abi_major = UVSHIM_ABI_MAJOR, .abi_minor = UVSHIM_ABI_MINOR };
	struct uvshim_info_req ireq = { 0, 0 };
	struct uvshim_map_bar_req win;
	struct shim_kext_guest *g;
	IOOptionBits mode = 0;
	mach_vm_size_t size = 0;
	kern_return_t kr;
	int rc;

	if (!out || !uar || !len)
		return -EINVAL;
	*out = NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	struct kext_dev *k = &g->k;
	k->dev.ops = &shim_kext_ops;
	k->dev.page_size = (size_t)getpagesize();
	pthread_mutex_init(&k->lock, NULL);
	rc = blueflame_mode(k, &mode);
	if (rc == 0)
		rc = find_service(k, index);
	if (rc == 0) {
		kr = IOServiceOpen(k->service, mach_task_self(), UVSHIM_CLIENT_TYPE_GUEST, &k->conn);
		if (kr != KERN_SUCCESS) {
			rc = kext_errno(kr);
			kerr(k, "kext:%u: opening as a guest: %s (a guest needs an owner, such as uvd, and the "
			     "owner's or root's rights)", index, kext_strerror(kr));
			k->conn = IO_OBJECT_NULL;
		}
	}
	if (rc == 0) {
		rc = kcall(k, UVSHIM_SEL_HELLO, "HELLO", &hreq, sizeof(hreq), &k->hello, sizeof(k->hello));
		if (rc == 0 && k->hello.abi_minor < 1) {
			kerr(k, "kext:%u: the loaded kext speaks uvshim ABI %u.%u, guests need 1.1", index,
			     k->hello.abi_major, k->hello.abi_minor);
			rc = -EPROTO;
		}
	}
	if (rc == 0)
		rc = kcall(k, UVSHIM_SEL_DEVICE_INFO, "DEVICE_INFO", &ireq, sizeof(ireq), &k->info, sizeof(k->info));
	/* One granted host page, write-combining as the owner maps its own UAR pages, or
	 * uncached when BlueFlame is off. */
	if (rc == 0)
		rc = shim_kext_guest_window(&k->info, bar_off, mode ? UVSHIM_CACHE_WC : UVSHIM_CACHE_UNCACHED, &win);
	if (rc == 0)
		rc = map_window(k, win.cache, mode ? mode : kIOMapInhibitCache, win.offset, win.length, &g->type,
				&g->addr, &size);
	if (rc == 0) {
		g->bar_off = win.offset;
		g->have_hook = kext_plat_bar_hook((uint32_t)k->conn, &g->hook);
	}
	if (rc < 0) {
		if (err && errlen)
			snprintf(err, errlen, "%s", k->dev.err[0] ? k->dev.err : strerror(-rc));
		shim_kext_guest_close(g);
		return rc;
	}
	*out = g;
	*uar = (volatile void *)(uintptr_t)g->addr;
	*len = (size_t)win.length;
	return 0;
}

void shim_kext_guest_close(struct shim_kext_guest *g)
{
	if (!g)
		return;
	if (g->k.conn != IO_OBJECT_NULL) {
		unmap_window(&g->k, &g->type, g->addr);
		IOServiceClose(g->k.conn);
	}
	if (g->k.service != IO_OBJECT_NULL)
		IOObjectRelease(g->k.service);
	pthread_mutex_destroy(&g->k.lock);
	free(g);
}

