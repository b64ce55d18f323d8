/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvshim kext: the provider side (see UvShim.hpp).  Thin by design: each function
 * either hands a decision to shim-kext/core or carries one out with IOKit. */
#include "UvShim.hpp"

#include <IOKit/IOLib.h>
#include <IOKit/IOMapper.h>
#include <kern/task.h>
#include <sys/kauth.h>

#define super IOService
OSDefineMetaClassAndStructors(org_uverbs_UvShim, IOService)

/* PCI Express capability registers (PCIe Base Specification, "PCI Express Capability
 * Structure"): Device Capabilities bit 28 = Function Level Reset capable; Device
 * Control bit 15 = Initiate FLR, bits 7:5 = Max_Payload_Size; Device Status bit 5 =
 * Transactions Pending; Link Status bits 3:0 = speed, 9:4 = width. */
#define PCIE_DEVCAP 0x04
#define PCIE_DEVCAP_FLR (1u << 28)
#define PCIE_DEVCTL 0x08
#define PCIE_DEVCTL_FLR 0x8000
#define PCIE_DEVSTA 0x0a
#define PCIE_DEVSTA_TRPND 0x0020
#define PCIE_LNKSTA 0x12
/* MSI-X capability (PCI Local Bus Specification 3.0, "MSI-X Capability"): Message
 * Control at +2, bits 10:0 = Table Size - 1. */
#define PCI_MSIX_CTL 0x02
#define PCI_MSIX_CTL_TABLE_SIZE 0x07ff

/* Bus mastering under the names of the deployment target's IOPCIFamily (the "master"
 * names are deprecated from macOS 12.4 on). */
#if UVSHIM_PCI_MACOS13
static void busLead(IOPCIDevice *pci, bool on) { pci->setBusLeadEnable(on); }
#define UVSHIM_PCI_COMMAND_BUS_LEAD kIOPCICommandBusLead
#else
static void busLead(IOPCIDevice *pci, bool on) { pci->setBusMasterEnable(on); }
#define UVSHIM_PCI_COMMAND_BUS_LEAD kIOPCICommandBusMaster
#endif

static uint64_t pageSize() { return PAGE_SIZE; } /* 16 KiB on Apple Silicon */

static bool isMember(const void *ctx, uint32_t gid)
{
	int member = 0;
	kauth_cred_t cred = (kauth_cred_t)ctx;
	return kauth_cred_ismember_gid(cred, (gid_t)gid, &member) == 0 && member;
}

/* The credential of the thread that is opening: ownerOpen and guestOpen run in it
 * (IOServiceOpen -> newUserClient -> start). */
static struct uvshim_cred openerCred()
{
	kauth_cred_t cred = kauth_cred_get();
	struct uvshim_cred c = {};
	c.uid = kauth_cred_getuid(cred);
	c.is_member = isMember;
	c.ctx = cred;
	return c;
}

static uint32_t plistNumber(IOService *s, const char *key, uint32_t dflt)
{
	OSNumber *n = OSDynamicCast(OSNumber, s->getProperty(key));
	return n ? n->unsigned32BitValue() : dflt;
}

IOReturn org_uverbs_UvShim::toIOReturn(int status)
{
	if (status == 0)
		return kIOReturnSuccess;
	return (IOReturn)UVSHIM_IORETURN(status < 0 ? -status : status);
}

bool org_uverbs_UvShim::readDeviceInfo(struct uvshim_info_rep *info)
{
	bzero(info, sizeof(*info));
	info->vendor_id = fPCI->configRead16(kIOPCIConfigVendorID);
	info->device_id = fPCI->configRead16(kIOPCIConfigDeviceID);
	info->subsys_vendor_id = fPCI->configRead16(kIOPCIConfigSubSystemVendorID);
	info->subsys_device_id = fPCI->configRead16(kIOPCIConfigSubSystemID);
	info->bus = fPCI->getBusNumber();
	info->device = fPCI->getDeviceNumber();
	info->function = fPCI->getFunctionNumber();
	info->tunnelled = fPCI->getProperty("IOPCITunnelled") == kOSBooleanTrue;
	IOByteCount cap = 0;
	if (fPCI->extendedFindPCICapability(kIOPCIPCIExpressCapability, &cap)) {
		uint16_t lnk = fPCI->configRead16(cap + PCIE_LNKSTA);
		uint16_t ctl = fPCI->configRead16(cap + PCIE_DEVCTL);
		info->link_speed_gen = lnk & 0xf;
		info->link_width = (lnk >> 4) & 0x3f;
		info->max_payload_bytes = (uint16_t)(128u << ((ctl >> 5) & 7));
	}
	info->page_size = (uint32_t)pageSize();
	info->num_vectors = fIrqCount;
	info->bar0_len = fBar0->getLength();
	uint64_t page = pageSize();
	info->uar_offset = (UVSHIM_INIT_SEG_END + page - 1) & ~(page - 1);
	info->uar_len = info->bar0_len > info->uar_offset ? info->bar0_len - info->uar_offset : 0;
	return info->vendor_id == 0x15b3;
}

bool org_uverbs_UvShim::start(IOService *provider)
{
	if (!super::start(provider))
		return false;
	fPCI = OSDynamicCast(IOPCIDevice, provider);
	if (!fPCI)
		return false;
	fPCI->retain();
	fLock = IOLockAlloc();
	fWorkLoop = getWorkLoop();
	if (!fLock || !fWorkLoop)
		goto fail;
	fWorkLoop->retain();
	fPCI->setMemoryEnable(true);
	/* Bus mastering stays off until an owner has programmed the device. */
	busLead(fPCI, false);
	fBar0 = fPCI->getDeviceMemoryWithRegister(kIOPCIConfigBaseAddress0);
	if (!fBar0)
		goto fail;
	fBar0->retain();
	if (!setupInterrupts())
		goto fail;

	{
		struct uvshim_info_rep info;
		if (!readDeviceInfo(&info))
			goto fail;
		struct uvshim_config cfg = {};
		OSNumber *gid = OSDynamicCast(OSNumber, getProperty(UVSHIM_PLIST_GROUP));
		cfg.group_set = gid != NULL;
		cfg.group_id = gid ? gid->unsigned32BitValue() : 0;
		cfg.max_pins = plistNumber(this, UVSHIM_PLIST_MAX_PINS, UVSHIM_DEFAULT_MAX_PINS);
		cfg.max_pinned_bytes = (uint64_t)plistNumber(this, UVSHIM_PLIST_MAX_PINNED_MB,
			(uint32_t)(UVSHIM_DEFAULT_MAX_PINNED_BYTES >> 20)) << 20;
		if (cfg.max_pins == 0 || cfg.max_pins > UVSHIM_MAX_PINS_HARD)
			goto fail;
		fPinCapacity = cfg.max_pins;
		fPins = (struct uvshim_pin_entry *)IOMallocZero(sizeof(*fPins) * fPinCapacity);
		if (!fPins)
			goto fail;
		struct uvshim_platform plat = {};
		plat.ctx = this;
		plat.pin = pPin;
		plat.unpin = pRelease;
		plat.dma_alloc = pDmaAlloc;
		plat.dma_free = pRelease;
		plat.bus_master = pBusMaster;
		plat.reset_function = pResetFunction;
		plat.irq_arm = pIrqArm;
		plat.pin_for = pPinFor;
		plat.revoke = pRevoke;
		int rc = uvshim_dev_init(&fDev, &info, &cfg, &plat, fPins, fPinCapacity);
		if (rc) {
			IOLog("uvshim: device description refused: %s\n", uvshim_status_name(rc));
			goto fail;
		}
		fDevReady = true;
		IOLog("uvshim: %04x:%04x at %02x:%02x.%x, BAR0 %llu MiB, %u vectors%s\n",
		      info.vendor_id, info.device_id, info.bus, info.device, info.function,
		      (unsigned long long)(info.bar0_len >> 20), info.num_vectors,
		      info.tunnelled ? ", Thunderbolt" : "");
	}
	/* Power (shim-kext/core/power.c): join the power plane under the PCI device with
	 * two states, off and on (IOService.h PMinit, joinPMtree, registerPowerDriver), and
	 * hear the system's sleep: idle sleep is refused while an owner holds the function
	 * (RootDomain.h registerPrioritySleepWakeInterest). */
	PMinit();
	provider->joinPMtree(this);
	fPMJoined = true;
	registerPowerDriver(this, sPowerStates, 2);
	fSleepNotifier = registerPrioritySleepWakeInterest(&org_uverbs_UvShim::systemPower, this, NULL);
	registerService(); /* lets IOServiceOpen find us */
	return true;
fail:
	stop(provider);
	return false;
}

bool org_uverbs_UvShim::willTerminate(IOService *provider, IOOptionBits options)
{
	/* Termination with a client still attached is a surprise removal (cable pulled)
	 * or a driver unload: either way nothing may touch the device again. */
	if (fLock) {
		IOLockLock(fLock);
		if (fDevReady)
			uvshim_dev_gone(&fDev);
		IOLockUnlock(fLock);
	}
	return super::willTerminate(provider, options);
}

void org_uverbs_UvShim::stop(IOService *provider)
{
	if (fSleepNotifier) {
		fSleepNotifier->remove();
		fSleepNotifier = NULL;
	}
	if (fPMJoined) {
		PMstop();
		fPMJoined = false;
	}
	teardownInterrupts();
	if (fPCI)
		busLead(fPCI, false);
	super::stop(provider);
}

void org_uverbs_UvShim::free()
{
	if (fPins)
		IOFree(fPins, sizeof(*fPins) * fPinCapacity);
	OSSafeReleaseNULL(fBar0);
	OSSafeReleaseNULL(fWorkLoop);
	OSSafeReleaseNULL(fPCI);
	if (fLock)
		IOLockFree(fLock);
	fLock = NULL;
	super::free();
}

/* ---- power ------------------------------------------------------------------------- */

/* IOPM.h IOPMPowerState, version 1: off, and on (usable, needs the parent's power). */
IOPMPowerState org_uverbs_UvShim::sPowerStates[2] = {
	{kIOPMPowerStateVersion1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{kIOPMPowerStateVersion1, kIOPMPowerOn, kIOPMPowerOn, kIOPMPowerOn, 0, 0, 0, 0, 0, 0, 0, 0},
};

void org_uverbs_UvShim::powerDown()
{
	/* The core marks the device gone and names the vectors the owner armed; the owner
	 * gets one interrupt message on each, so that its waits wake and it finds the
	 * function gone at once (all-ones), raises the fatal event and reopens. */
	IOLockLock(fLock);
	uint64_t notify = fDevReady ? uvshim_power_down(&fDev) : 0;
	IOLockUnlock(fLock);
	for (uint32_t v = 0; v < fIrqCount && notify; v++) {
		if (!(notify >> v & 1))
			continue;
		uint64_t total = 0, cookie = 0;
		OSAsyncReference64 ref;
		IOLockLock(fLock);
		int send = uvshim_irq_fire(&fDev, v, &total, &cookie);
		if (send == 1)
			bcopy(fIrqRef[v], ref, sizeof(ref));
		IOLockUnlock(fLock);
		if (send != 1)
			continue;
		io_user_reference_t args[UVSHIM_IRQ_NARGS];
		args[UVSHIM_IRQ_ARG_VECTOR] = v;
		args[UVSHIM_IRQ_ARG_COUNT] = total;
		args[UVSHIM_IRQ_ARG_COOKIE] = cookie;
		org_uverbs_UvShimUserClient::sendInterrupt(ref, args, UVSHIM_IRQ_NARGS);
	}
}

IOReturn org_uverbs_UvShim::setPowerState(unsigned long state, IOService *device)
{
	(void)device;
	if (state == 0) {
		powerDown();
	} else {
		IOLockLock(fLock);
		if (fDevReady)
			uvshim_power_up(&fDev);
		IOLockUnlock(fLock);
	}
	return kIOPMAckImplied;
}

IOReturn org_uverbs_UvShim::systemPower(void *target, void *refCon, UInt32 messageType, IOService *provider,
					void *messageArgument, vm_size_t argSize)
{
	(void)refCon;
	(void)provider;
	(void)argSize;
	org_uverbs_UvShim *self = (org_uverbs_UvShim *)target;
	IOPowerStateChangeNotification *n = (IOPowerStateChangeNotification *)messageArgument;
	switch (messageType) {
	case kIOMessageCanSystemSleep: {
		/* Idle sleep: refused while an owner holds the function. */
		IOLockLock(self->fLock);
		int rc = self->fDevReady ? uvshim_power_may_sleep(&self->fDev) : 0;
		IOLockUnlock(self->fLock);
		if (rc) {
			IOLog("uvshim: idle sleep refused: the ConnectX is in use\n");
			vetoSleepWakeNotification(n->powerRef);
		} else {
			acknowledgeSleepWakeNotification(n->powerRef);
		}
		return kIOReturnSuccess;
	}
	case kIOMessageSystemWillSleep:
		/* A sleep nobody may refuse: tell the owner now, before the card loses power. */
		self->powerDown();
		acknowledgeSleepWakeNotification(n->powerRef);
		return kIOReturnSuccess;
	default:
		return kIOReturnSuccess;
	}
}

/* ---- owner ------------------------------------------------------------------------- */

IOReturn org_uverbs_UvShim::newUserClient(task_t owningTask, void *securityID, UInt32 type,
					  OSDictionary *properties, IOUserClient **handler)
{
	/* IOService::newUserClient (xnu iokit/Kernel/IOService.cpp) answers
	 * kIOReturnUnsupported for any client whose start() fails, so the opener could not
	 * tell "owned by another process" (EBUSY) from "not allowed" (EACCES) or "gone".
	 * The same steps, with the core's answer kept by the client. */
	org_uverbs_UvShimUserClient *client = OSTypeAlloc(org_uverbs_UvShimUserClient);
	if (!client)
		return kIOReturnNoMemory;
	if (!client->initWithTask(owningTask, securityID, type, properties)) {
		client->release();
		return kIOReturnBadArgument;
	}
	if (!client->attach(this)) {
		client->release();
		return kIOReturnUnsupported;
	}
	if (!client->start(this)) {
		IOReturn why = client->openStatus();
		client->detach(this);
		client->release();
		return why != kIOReturnSuccess ? why : kIOReturnUnsupported;
	}
	*handler = client;
	return kIOReturnSuccess;
}

IOReturn org_uverbs_UvShim::ownerOpen(org_uverbs_UvShimUserClient *client)
{
	struct uvshim_cred c = openerCred();
	IOLockLock(fLock);
	int rc = fDevReady ? uvshim_owner_open(&fDev, &c, client) : -UVSHIM_ENODEV;
	IOLockUnlock(fLock);
	return toIOReturn(rc);
}

void org_uverbs_UvShim::ownerRelease(org_uverbs_UvShimUserClient *client)
{
	IOLockLock(fLock);
	/* interrupts off, bus mastering off, FLR, every pin and buffer unmapped */
	int rc = uvshim_owner_release(&fDev, client);
	fOwnerTask = NULL;
	IOLockUnlock(fLock);
	if (rc)
		IOLog("uvshim: owner release: %s%s\n", uvshim_status_name(rc),
		      fDev.quarantined ? " (pins kept: device could not be quiesced)" : "");
}

IOReturn org_uverbs_UvShim::guestOpen(org_uverbs_UvShimUserClient *client, uint32_t pid)
{
	/* The core admits a guest only while an owner holds the device. */
	struct uvshim_cred c = openerCred();
	IOLockLock(fLock);
	int rc = fDevReady ? uvshim_guest_open(&fDev, &c, client, pid) : -UVSHIM_ENODEV;
	IOLockUnlock(fLock);
	return toIOReturn(rc);
}

void org_uverbs_UvShim::guestRelease(org_uverbs_UvShimUserClient *client)
{
	/* Its grants and the pins made for it stay the owner's to take back. */
	IOLockLock(fLock);
	uvshim_guest_release(&fDev, client);
	IOLockUnlock(fLock);
}

IOReturn org_uverbs_UvShim::call(org_uverbs_UvShimUserClient *client, uint32_t selector,
				 const void *in, size_t inLen, void *out, size_t outLen,
				 io_user_reference_t *asyncRef, uint32_t asyncRefCount)
{
	IOLockLock(fLock);
	fPendingRef = asyncRef;
	fPendingRefCount = asyncRefCount;
	int rc = uvshim_dispatch(&fDev, client, selector, in, inLen, out, outLen);
	fPendingRef = NULL;
	fPendingRefCount = 0;
	IOLockUnlock(fLock);
	return toIOReturn(rc);
}

IOReturn org_uverbs_UvShim::memoryForType(org_uverbs_UvShimUserClient *client, uint32_t type,
					  IOMemoryDescriptor **mem)
{
	struct uvshim_memory m;
	IOLockLock(fLock);
	int rc = uvshim_memory_for_type(&fDev, client, type, &m);
	if (rc == 0 && m.kind == UVSHIM_MEMTYPE_DMA) {
		UvShimMapping *map = (UvShimMapping *)m.cookie;
		map->buf->retain();
		*mem = map->buf;
	} else if (rc == 0) {
		/* A descriptor of its own per window, carrying the window's cache class: the
		 * caller's map options choose the mode, the window refuses the wrong ones. */
		org_uverbs_UvShimWindow *w = org_uverbs_UvShimWindow::withWindow(fBar0, m.offset, m.length, m.cache);
		*mem = w;
		if (!w)
			rc = -UVSHIM_ENOMEM;
		else if (uvshim_is_guest(&fDev, client))
			client->keepWindow(type, w);   /* for a revocation to find its mappings */
	}
	IOLockUnlock(fLock);
	return toIOReturn(rc);
}

/* ---- DMA: pins and buffers ----------------------------------------------------------- */

IOReturn org_uverbs_UvShim::mapForDevice(IOMemoryDescriptor *md, uint64_t align, UvShimMapping *m)
{
	/* The function's own mapper: the DART in front of this PCIe port on Apple Silicon,
	 * VT-d on Intel Macs.  IOVAs come from it, never physical addresses. */
	IOMapper *mapper = IOMapper::copyMapperForDevice(fPCI);
	IODMACommand::SegmentOptions opt = {};
	opt.fStructSize = sizeof(opt);
	opt.fNumAddressBits = 64;
	opt.fMaxSegmentSize = 0;
	opt.fMaxTransferSize = 0;
	opt.fAlignment = align;
	opt.fAlignmentLength = 1;
	opt.fAlignmentInternalSegments = 1;
	m->dma = IODMACommand::withSpecification(kIODMACommandOutputHost64, &opt,
						 IODMACommand::kMapped, mapper, NULL);
	OSSafeReleaseNULL(mapper);
	if (!m->dma)
		return kIOReturnNoMemory;
	IOReturn r = m->dma->setMemoryDescriptor(md, true /* prepare: map into the DART */);
	if (r != kIOReturnSuccess)
		return r;

	/* Two passes: count, then fill, so a pin holds exactly its segment list. */
	uint64_t len = md->getLength();
	for (int pass = 0; pass < 2; pass++) {
		UInt64 off = 0;
		uint32_t n = 0;
		while (off < len) {
			IODMACommand::Segment64 s[16];
			UInt32 k = 16;
			r = m->dma->gen64IOVMSegments(&off, s, &k);
			if (r != kIOReturnSuccess || k == 0)
				return r != kIOReturnSuccess ? r : kIOReturnInternalError;
			for (UInt32 i = 0; i < k; i++, n++) {
				if (n >= UVSHIM_MAX_SEGS_PER_PIN)
					return kIOReturnNoResources;
				if (pass == 1)
					m->seg[n] = (struct uvshim_seg){s[i].fIOVMAddr, s[i].fLength};
			}
		}
		if (pass == 0) {
			m->seg = (struct uvshim_seg *)IOMallocZero(sizeof(*m->seg) * n);
			if (!m->seg)
				return kIOReturnNoMemory;
		}
		m->nseg = n;
	}
	return kIOReturnSuccess;
}

void org_uverbs_UvShim::releaseMapping(UvShimMapping *m)
{
	if (m->dma) {
		m->dma->clearMemoryDescriptor(true /* complete: unmap from the DART */);
		m->dma->release();
	}
	if (m->md) {
		if (!m->buf)
			m->md->complete(); /* unwire the user pages */
		m->md->release();
	}
	if (m->seg)
		IOFree(m->seg, sizeof(*m->seg) * m->nseg);
	IOFree(m, sizeof(*m));
}

/* unpin and dma_free alike: a pin and a DMA buffer are both one UvShimMapping. */
void org_uverbs_UvShim::pRelease(void *ctx, void *cookie)
{
	(void)ctx;
	releaseMapping((UvShimMapping *)cookie);
}

int org_uverbs_UvShim::pPin(void *ctx, uint64_t va, uint64_t len, uint32_t flags,
			     const struct uvshim_seg **seg, uint32_t *nseg, void **cookie)
{
	org_uverbs_UvShim *self = (org_uverbs_UvShim *)ctx;
	return self->pinInTask(self->fOwnerTask, va, len, flags, seg, nseg, cookie);
}

/* PIN_FOR: the guest's task, named by its open connection (the core found it by pid).
 * The descriptor keeps its own reference on the task's map while the pages are wired
 * (xnu iokit/Kernel/IOMemoryDescriptor.cpp, IOGeneralMemoryDescriptor::wireVirtual), so
 * the pages stay the device's until the owner unpins them, even if the guest exits. */
int org_uverbs_UvShim::pPinFor(void *ctx, const void *guest, uint64_t va, uint64_t len, uint32_t flags,
			       const struct uvshim_seg **seg, uint32_t *nseg, void **cookie)
{
	org_uverbs_UvShim *self = (org_uverbs_UvShim *)ctx;
	const org_uverbs_UvShimUserClient *g = (const org_uverbs_UvShimUserClient *)guest;
	return self->pinInTask(g->task(), va, len, flags, seg, nseg, cookie);
}

void org_uverbs_UvShim::pRevoke(void *ctx, const void *guest, uint32_t memoryType)
{
	(void)ctx;
	((org_uverbs_UvShimUserClient *)guest)->revokeWindow(memoryType);
}

int org_uverbs_UvShim::pinInTask(task_t task, uint64_t va, uint64_t len, uint32_t flags,
				 const struct uvshim_seg **seg, uint32_t *nseg, void **cookie)
{
	org_uverbs_UvShim *self = this;
	/* Direction is the memory's point of view: the device reading is an "out". */
	IODirection dir = kIODirectionNone;
	if (flags & UVSHIM_PIN_DEVICE_READ)
		dir = (IODirection)(dir | kIODirectionOut);
	if (flags & UVSHIM_PIN_DEVICE_WRITE)
		dir = (IODirection)(dir | kIODirectionIn);
	UvShimMapping *m = (UvShimMapping *)IOMallocZero(sizeof(*m));
	if (!m)
		return -UVSHIM_ENOMEM;
	m->md = IOMemoryDescriptor::withAddressRange(va, len, dir, task);
	if (!m->md || m->md->prepare(dir) != kIOReturnSuccess) {
		OSSafeReleaseNULL(m->md);
		IOFree(m, sizeof(*m));
		return -UVSHIM_EFAULT; /* not mapped in that task, or not wireable */
	}
	if (self->mapForDevice(m->md, pageSize(), m) != kIOReturnSuccess) {
		releaseMapping(m);
		return -UVSHIM_EIO;
	}
	*seg = m->seg;
	*nseg = m->nseg;
	*cookie = m;
	return 0;
}

int org_uverbs_UvShim::pDmaAlloc(void *ctx, uint64_t len, uint64_t align, uint64_t *iova, void **cookie)
{
	org_uverbs_UvShim *self = (org_uverbs_UvShim *)ctx;
	UvShimMapping *m = (UvShimMapping *)IOMallocZero(sizeof(*m));
	if (!m)
		return -UVSHIM_ENOMEM;
	/* KernelUserShared: the owner maps it through clientMemoryForType. */
	m->buf = IOBufferMemoryDescriptor::inTaskWithOptions(kernel_task,
		kIODirectionInOut | kIOMemoryKernelUserShared, len, pageSize());
	if (!m->buf) {
		IOFree(m, sizeof(*m));
		return -UVSHIM_ENOMEM;
	}
	bzero(m->buf->getBytesNoCopy(), len);
	m->md = m->buf;
	if (self->mapForDevice(m->md, align, m) != kIOReturnSuccess || m->nseg != 1) {
		releaseMapping(m);
		return -UVSHIM_EIO;
	}
	*iova = m->seg[0].iova;
	*cookie = m;
	return 0;
}

/* ---- function control ----------------------------------------------------------------- */

int org_uverbs_UvShim::pBusMaster(void *ctx, bool enable)
{
	org_uverbs_UvShim *self = (org_uverbs_UvShim *)ctx;
	busLead(self->fPCI, enable);
	uint16_t cmd = self->fPCI->configRead16(kIOPCIConfigCommand);
	if (cmd == 0xffff)
		return -UVSHIM_ENODEV; /* config reads all-ones: the device is gone */
	return (((cmd & UVSHIM_PCI_COMMAND_BUS_LEAD) != 0) == enable) ? 0 : -UVSHIM_EIO;
}

int org_uverbs_UvShim::pResetFunction(void *ctx)
{
	org_uverbs_UvShim *self = (org_uverbs_UvShim *)ctx;
	IOPCIDevice *pci = self->fPCI;
#if UVSHIM_PCI_MACOS13
	/* IOPCIFamily saves the configuration, issues the FLR if the function supports it,
	 * waits for the function and restores the configuration (IOPCIDevice.h, reset). */
	IOReturn r = pci->reset(kIOPCIDeviceResetTypeFunctionReset);
	if (r != kIOReturnSuccess) {
		IOLog("uvshim: function reset: 0x%x\n", r);
		return r == kIOReturnNoDevice ? -UVSHIM_ENODEV : -UVSHIM_EIO;
	}
#else
	IOByteCount cap = 0;
	if (!pci->extendedFindPCICapability(kIOPCIPCIExpressCapability, &cap))
		return -UVSHIM_EIO;
	if (!(pci->configRead32(cap + PCIE_DEVCAP) & PCIE_DEVCAP_FLR))
		return -UVSHIM_EIO;
	/* Let outstanding requests drain (bus mastering is already off), up to 100 ms. */
	for (int i = 0; i < 10 && (pci->configRead16(cap + PCIE_DEVSTA) & PCIE_DEVSTA_TRPND); i++)
		IOSleep(10);
	pci->saveDeviceState();
	uint16_t ctl = pci->configRead16(cap + PCIE_DEVCTL);
	pci->configWrite16(cap + PCIE_DEVCTL, ctl | PCIE_DEVCTL_FLR);
	IOSleep(100); /* PCIe: 100 ms after FLR before the function must answer config */
	pci->restoreDeviceState();
#endif
	/* The restored command register may have bus mastering on; keep it off until the
	 * core says otherwise. */
	busLead(pci, false);
	return pci->configRead16(kIOPCIConfigVendorID) == 0x15b3 ? 0 : -UVSHIM_ENODEV;
}

/* ---- interrupts --------------------------------------------------------------------- */

uint32_t org_uverbs_UvShim::msixVectorsWanted()
{
	/* One vector per EQ of the driver (UvShimMSIXVectors, default 16), no more than
	 * the function's MSI-X table holds. */
	uint32_t want = plistNumber(this, UVSHIM_PLIST_MSIX_VECTORS, UVSHIM_DEFAULT_MSIX_VECTORS);
	if (want == 0 || want > UVSHIM_MAX_VECTORS)
		want = UVSHIM_DEFAULT_MSIX_VECTORS;
	IOByteCount cap = 0;
	if (!fPCI->extendedFindPCICapability(kIOPCIMSIXCapability, &cap))
		return 0;
	uint32_t table = (fPCI->configRead16(cap + PCI_MSIX_CTL) & PCI_MSIX_CTL_TABLE_SIZE) + 1u;
	return want < table ? want : table;
}

bool org_uverbs_UvShim::setupInterrupts()
{
#if UVSHIM_PCI_MACOS13
	/* Without this IOPCIFamily resolves at most one MSI per function
	 * (IOPCIMessagedInterruptController.cpp); it must come before the first
	 * getInterruptType, which resolves the default. */
	uint32_t want = msixVectorsWanted();
	if (want) {
		IOReturn r = fPCI->configureInterrupts(kIOInterruptTypePCIMessagedX, 1, want);
		if (r != kIOReturnSuccess)
			IOLog("uvshim: MSI-X with %u vectors refused (0x%x), using what IOPCIFamily gives\n",
			      want, r);
	}
#endif
	/* Index 0 is the legacy INTx line; MSI/MSI-X vectors are the message-signalled
	 * sources after it. */
	int type = 0;
	uint32_t n = 0;
	for (int index = 0; n < UVSHIM_MAX_VECTORS; index++) {
		if (fPCI->getInterruptType(index, &type) != kIOReturnSuccess)
			break;
		if (!(type & kIOInterruptTypePCIMessaged))
			continue;
		IOInterruptEventSource *src = IOInterruptEventSource::interruptEventSource(this,
			OSMemberFunctionCast(IOInterruptEventAction, this,
					     &org_uverbs_UvShim::interruptOccurred),
			fPCI, index);
		if (!src || fWorkLoop->addEventSource(src) != kIOReturnSuccess) {
			OSSafeReleaseNULL(src);
			break;
		}
		src->disable(); /* armed by the owner, one vector at a time */
		fIrq[n++] = src;
	}
	fIrqCount = n;
	return n > 0;
}

void org_uverbs_UvShim::teardownInterrupts()
{
	for (uint32_t v = 0; v < fIrqCount; v++) {
		if (!fIrq[v])
			continue;
		fIrq[v]->disable();
		fWorkLoop->removeEventSource(fIrq[v]);
		OSSafeReleaseNULL(fIrq[v]);
	}
	fIrqCount = 0;
}

void org_uverbs_UvShim::interruptOccurred(IOInterruptEventSource *src, int count)
{
	(void)count;
	uint32_t v;
	for (v = 0; v < fIrqCount && fIrq[v] != src; v++)
		;
	uint64_t total = 0, cookie = 0;
	OSAsyncReference64 ref;
	IOLockLock(fLock);
	int notify = uvshim_irq_fire(&fDev, v, &total, &cookie);
	if (notify == 1)
		bcopy(fIrqRef[v], ref, sizeof(ref));
	IOLockUnlock(fLock);
	if (notify != 1)
		return;
	io_user_reference_t args[UVSHIM_IRQ_NARGS];
	args[UVSHIM_IRQ_ARG_VECTOR] = v;
	args[UVSHIM_IRQ_ARG_COUNT] = total;
	args[UVSHIM_IRQ_ARG_COOKIE] = cookie;
	org_uverbs_UvShimUserClient::sendInterrupt(ref, args, UVSHIM_IRQ_NARGS);
}

int org_uverbs_UvShim::pIrqArm(void *ctx, uint32_t vector, bool arm)
{
	org_uverbs_UvShim *self = (org_uverbs_UvShim *)ctx;
	if (vector >= self->fIrqCount || !self->fIrq[vector])
		return -UVSHIM_ENOENT;
	if (arm) {
		/* Only an async call carries a notification port. */
		if (!self->fPendingRef || self->fPendingRefCount < kOSAsyncRef64Count)
			return -UVSHIM_EINVAL;
		bcopy(self->fPendingRef, self->fIrqRef[vector], sizeof(OSAsyncReference64));
		self->fIrq[vector]->enable();
	} else {
		self->fIrq[vector]->disable();
		bzero(self->fIrqRef[vector], sizeof(OSAsyncReference64));
	}
	return 0;
}
