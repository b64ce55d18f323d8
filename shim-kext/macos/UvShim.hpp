/* uvshim kext: the IOKit side of shim-kext (design section 8).
 *
 * org_uverbs_UvShim matches a ConnectX PCI function (Info.plist) and owns it.  It
 * offers the owner task exactly: BAR0 windows (the UAR region write-combined), pinned
 * user memory as IOVA segments through the system mapper (DART), driver DMA buffers,
 * MSI-X interrupts as async notifications, and a function reset.  Every decision --
 * argument checks, limits, who may open, what owner death does and in which order --
 * is made by the portable core (shim-kext/core, tested on Linux); this file only
 * carries it out with IOKit calls.  Not built or loaded in CI: see shim-kext/README.md.
 *
 * Locking: fLock (an IOLock, so callbacks may sleep in IODMACommand) serialises every
 * call into the core.  Event sources are added and removed outside it.
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
#include <IOKit/pci/IOPCIDevice.h>

extern "C" {
#include "shim-kext/core/uvshim_core.h"
}

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

	/* Called by the user client, which is the owner token handed to the core. */
	IOReturn ownerOpen(org_uverbs_UvShimUserClient *client);
	void ownerRelease(org_uverbs_UvShimUserClient *client);
	IOReturn call(org_uverbs_UvShimUserClient *client, uint32_t selector,
		      const void *in, size_t inLen, void *out, size_t outLen,
		      io_user_reference_t *asyncRef, uint32_t asyncRefCount);
	IOReturn memoryForType(org_uverbs_UvShimUserClient *client, uint32_t type,
			       IOMemoryDescriptor **mem, IOOptionBits *cache);
	task_t ownerTask() const { return fOwnerTask; }
	void setOwnerTask(task_t t) { fOwnerTask = t; }

	static IOReturn toIOReturn(int status);

private:
	bool readDeviceInfo(struct uvshim_info_rep *info);
	bool setupInterrupts();
	void teardownInterrupts();
	void interruptOccurred(IOInterruptEventSource *src, int count);
	IOReturn mapForDevice(IOMemoryDescriptor *md, uint64_t align, UvShimMapping *m);

	/* struct uvshim_platform callbacks; ctx is this */
	static int pPin(void *ctx, uint64_t va, uint64_t len, uint32_t flags,
			const struct uvshim_seg **seg, uint32_t *nseg, void **cookie);
	static void pUnpin(void *ctx, void *cookie);
	static int pDmaAlloc(void *ctx, uint64_t len, uint64_t align, uint64_t *iova, void **cookie);
	static void pDmaFree(void *ctx, void *cookie);
	static int pBusMaster(void *ctx, bool enable);
	static int pResetFunction(void *ctx);
	static int pIrqArm(void *ctx, uint32_t vector, bool arm);
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
};

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
	IOMemoryMap *mapClientMemory64(IOOptionBits type, task_t task, IOOptionBits mapFlags,
				       mach_vm_address_t atAddress) override;

private:
	org_uverbs_UvShim *fShim;
	task_t fTask;
	bool fOwner;
};

#endif
