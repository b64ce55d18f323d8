/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvshim kext: the IOKit side of shim-kext (shim-kext/README.md; docs/hardware.md "macOS (kext shim)").
 *
 * org_uverbs_UvShim matches a ConnectX PCI function (Info.plist) and owns it.  It
 * offers the owner task exactly: BAR0 windows (only the UAR region combining), pinned
 * user memory as IOVA segments through the system mapper (DART), driver DMA buffers,
 * MSI-X interrupts as async notifications, and a function reset.  Every decision --
 * argument checks, limits, who may open, what owner death does and in which order --
 * is made by the portable core (shim-kext/core, tested on Linux); this file only
 * carries it out with IOKit calls.  Not built or loaded in CI: see shim-kext/README.md.
 *
 * Guests (ABI 1.1): a second kind of user client (UVSHIM_CLIENT_TYPE_GUEST) that maps
 * only the UAR pages the owner granted its pid, and whose task the owner may have
 * wired (PIN_FOR).  The core decides; here guestOpen/guestRelease, pPinFor (the
 * guest's task in withAddressRange) and pRevoke (the guest's window mappings taken
 * away) carry it out.
 *
 * Locking: fLock (an IOLock, so callbacks may sleep in IODMACommand) serialises every
 * call into the core.  Event sources are added and removed outside it.
 *
 * PCI interfaces by deployment target: IOPCIDevice::configureInterrupts (MSI-X with
 * several vectors), reset(kIOPCIDeviceResetTypeFunctionReset) and setBusLeadEnable are
 * in the IOPCIFamily of macOS 13 (IOPCIFamily-583, IOKit/pci/IOPCIDevice.h), and
 * configureInterrupts sits in a vtable slot that is a reserved stub before it.  So a
 * build for macOS 13 or later uses them (UVSHIM_PCI_MACOS13); a build for macOS 11/12
 * (make MINOS=11.0) gets one MSI vector and the function reset written in config space.
 */
#ifndef UVSHIM_MACOS_UVSHIM_HPP
#define UVSHIM_MACOS_UVSHIM_HPP

#include <IOKit/IOService.h>
#include <IOKit/IOLocks.h>
#include <IOKit/IOWorkLoop.h>
#include <IOKit/IOInterruptEventSource.h>
#include <IOKit/IOUserClient.h>
#include <IOKit/IODMACommand.h>
#include <IOKit/IOBufferMemoryDescriptor.h>
#include <IOKit/IOSubMemoryDescriptor.h>
#include <IOKit/pci/IOPCIDevice.h>
#include <IOKit/IOMessage.h>
#include <IOKit/pwr_mgt/IOPM.h>
#include <IOKit/pwr_mgt/RootDomain.h>

extern "C" {
#include "shim-kext/core/uvshim_core.h"
}

#if defined(__ENVIRONMENT_MAC_OS_X_VERSION_MIN_REQUIRED__) && \
	__ENVIRONMENT_MAC_OS_X_VERSION_MIN_REQUIRED__ >= 130000
#define UVSHIM_PCI_MACOS13 1
#else
#define UVSHIM_PCI_MACOS13 0
#endif

class org_uverbs_UvShimUserClient;

/* The platform's cookie for one pin or DMA buffer (struct uvshim_platform). */
struct UvShimMapping {
	IOMemoryDescriptor *md;          /* the user range, or the IOBufferMemoryDescriptor */
	IOBufferMemoryDescriptor *buf;   /* DMA buffers only */
	IODMACommand *dma;               /* holds the IOVA mapping while prepared */
	struct uvshim_seg *seg;
	uint32_t nseg;
};

class org_uverbs_UvShim : public IOService {
	OSDeclareDefaultStructors(org_uverbs_UvShim)

public:
	bool start(IOService *provider) override;
	void stop(IOService *provider) override;
	void free() override;
	bool willTerminate(IOService *provider, IOOptionBits options) override;
	/* Power (shim-kext/core/power.c): the function's own power state, off or on. */
	IOReturn setPowerState(unsigned long state, IOService *device) override;
	/* IOServiceOpen: as IOService's, but a refused open answers the core's reason. */
	IOReturn newUserClient(task_t owningTask, void *securityID, UInt32 type, OSDictionary *properties,
			       IOUserClient **handler) override;

	/* Called by the user client, which is the owner token handed to the core. */
	IOReturn ownerOpen(org_uverbs_UvShimUserClient *client);
	void ownerRelease(org_uverbs_UvShimUserClient *client);
	IOReturn call(org_uverbs_UvShimUserClient *client, uint32_t selector,
		      const void *in, size_t inLen, void *out, size_t outLen,
		      io_user_reference_t *asyncRef, uint32_t asyncRefCount);
	IOReturn memoryForType(org_uverbs_UvShimUserClient *client, uint32_t type,
			       IOMemoryDescriptor **mem);
	IOReturn guestOpen(org_uverbs_UvShimUserClient *client, uint32_t pid);
	void guestRelease(org_uverbs_UvShimUserClient *client);
	task_t ownerTask() const { return fOwnerTask; }
	void setOwnerTask(task_t t) { fOwnerTask = t; }

	static IOReturn toIOReturn(int status);

private:
	bool readDeviceInfo(struct uvshim_info_rep *info);
	bool setupInterrupts();
	uint32_t msixVectorsWanted();
	void teardownInterrupts();
	void interruptOccurred(IOInterruptEventSource *src, int count);
	IOReturn mapForDevice(IOMemoryDescriptor *md, uint64_t align, UvShimMapping *m);
	/* Power: the function is losing power (core says whom to tell); the system asks
	 * whether it may sleep or says it will (RootDomain.h sleep/wake interest). */
	void powerDown();
	static IOReturn systemPower(void *target, void *refCon, UInt32 messageType, IOService *provider,
				    void *messageArgument, vm_size_t argSize);

	/* struct uvshim_platform callbacks; ctx is this */
	static int pPin(void *ctx, uint64_t va, uint64_t len, uint32_t flags,
			const struct uvshim_seg **seg, uint32_t *nseg, void **cookie);
	static int pDmaAlloc(void *ctx, uint64_t len, uint64_t align, uint64_t *iova, void **cookie);
	static void pRelease(void *ctx, void *cookie);   /* unpin and dma_free */
	static int pBusMaster(void *ctx, bool enable);
	static int pResetFunction(void *ctx);
	static int pIrqArm(void *ctx, uint32_t vector, bool arm);
	static int pPinFor(void *ctx, const void *guest, uint64_t va, uint64_t len, uint32_t flags,
			   const struct uvshim_seg **seg, uint32_t *nseg, void **cookie);
	static void pRevoke(void *ctx, const void *guest, uint32_t memoryType);
	int pinInTask(task_t task, uint64_t va, uint64_t len, uint32_t flags,
		      const struct uvshim_seg **seg, uint32_t *nseg, void **cookie);
	static void releaseMapping(UvShimMapping *m);

	IOPCIDevice *fPCI;
	IODeviceMemory *fBar0;
	IOLock *fLock;
	IOWorkLoop *fWorkLoop;
	IOInterruptEventSource *fIrq[UVSHIM_MAX_VECTORS];
	uint32_t fIrqCount;
	OSAsyncReference64 fIrqRef[UVSHIM_MAX_VECTORS];
	io_user_reference_t *fPendingRef;    /* async reference of the IRQ_ARM in progress */
	uint32_t fPendingRefCount;
	task_t fOwnerTask;
	struct uvshim_dev fDev;
	struct uvshim_pin_entry *fPins;
	uint32_t fPinCapacity;
	bool fDevReady;
	IONotifier *fSleepNotifier;
	bool fPMJoined;
	static IOPMPowerState sPowerStates[2];
};

class org_uverbs_UvShimWindow;

class org_uverbs_UvShimUserClient : public IOUserClient {
	OSDeclareDefaultStructors(org_uverbs_UvShimUserClient)

public:
	bool initWithTask(task_t owningTask, void *securityToken, UInt32 type,
			  OSDictionary *properties) override;
	bool start(IOService *provider) override;
	IOReturn clientClose() override;
	IOReturn clientDied() override;
	IOReturn externalMethod(uint32_t selector, IOExternalMethodArguments *args,
				IOExternalMethodDispatch *dispatch, OSObject *target,
				void *reference) override;
	IOReturn clientMemoryForType(UInt32 type, IOOptionBits *options,
				     IOMemoryDescriptor **memory) override;
	/* sendAsyncResult64WithOptions is a protected static of IOUserClient, so the
	 * provider's interrupt action sends through here. */
	static IOReturn sendInterrupt(OSAsyncReference64 ref, io_user_reference_t *args, UInt32 nargs);
	task_t task() const { return fTask; }
	/* Why start() refused the open (the core's answer), for newUserClient. */
	IOReturn openStatus() const { return fOpenStatus; }
	/* Guests: the window descriptor handed out for a memory type, kept so that a
	 * revocation can reach the mappings made of it; revokeWindow takes them away. */
	void keepWindow(uint32_t memoryType, org_uverbs_UvShimWindow *w);
	void revokeWindow(uint32_t memoryType);
	void free() override;

private:
	org_uverbs_UvShim *fShim;
	task_t fTask;
	uint32_t fPid;
	bool fOwner;
	bool fGuest;
	IOReturn fOpenStatus;
	org_uverbs_UvShimWindow *fWin[UVSHIM_MAX_GUEST_WINDOWS];
};

/* One BAR0 window as handed to IOConnectMapMemory64.  The caller's map options pick the
 * cache mode (see uvshim_window_map_check), so the window refuses, when the mapping is
 * made, any mode its declared cache class does not allow: nothing but the UAR region
 * can be mapped write-combining or Device-GRE. */
class org_uverbs_UvShimWindow : public IOSubMemoryDescriptor {
	OSDeclareDefaultStructors(org_uverbs_UvShimWindow)

public:
	static org_uverbs_UvShimWindow *withWindow(IOMemoryDescriptor *bar, uint64_t offset,
						   uint64_t length, uint32_t cache);
	IOMemoryMap *makeMapping(IOMemoryDescriptor *owner, task_t intoTask, IOVirtualAddress atAddress,
				 IOOptionBits options, IOByteCount offset, IOByteCount length) override;
	/* A guest's window: point every user mapping made of it at harmless memory (or,
	 * failing that, remove it), so the guest's stores no longer reach BAR0. */
	void revoke();
	void trackMappings() { fTrack = true; }
	void free() override;

private:
	uint32_t fCache; /* enum uvshim_cache of the window */
	IOMemoryMap *fMaps[4]; /* user mappings made of this window (retained) */
	uint32_t fNumMaps;
	bool fTrack;           /* a guest's window: its mappings are recorded */
};

#endif
