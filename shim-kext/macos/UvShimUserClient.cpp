/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvshim kext: the user client.  Copy in, ask the provider (which asks the core), copy
 * out.  One instance per IOServiceOpen; it is the owner (or guest) token the core
 * compares. */
#include "UvShim.hpp"

#include <IOKit/IOLib.h>
#include <sys/proc.h>

#undef super
#define super IOUserClient
OSDefineMetaClassAndStructors(org_uverbs_UvShimUserClient, IOUserClient)

bool org_uverbs_UvShimUserClient::initWithTask(task_t owningTask, void *securityToken,
					       UInt32 type, OSDictionary *properties)
{
	if (type != UVSHIM_CLIENT_TYPE && type != UVSHIM_CLIENT_TYPE_GUEST)
		return false;
	if (!super::initWithTask(owningTask, securityToken, type, properties))
		return false;
	fTask = owningTask;
	fGuest = type == UVSHIM_CLIENT_TYPE_GUEST;
	/* IOServiceOpen runs newUserClient in the opener's thread: its pid is the one the
	 * owner's GRANT and PIN_FOR name (sys/proc.h, proc_selfpid). */
	fPid = (uint32_t)proc_selfpid();
	return true;
}

bool org_uverbs_UvShimUserClient::start(IOService *provider)
{
	fShim = OSDynamicCast(org_uverbs_UvShim, provider);
	if (!fShim || !super::start(provider))
		return false;
	/* root or the configured group, one owner at a time (core: uvshim_owner_open),
	 * guests only while there is an owner (uvshim_guest_open); a refusal makes
	 * IOServiceOpen fail in the caller. */
	if (fGuest) {
		fOpenStatus = fShim->guestOpen(this, fPid);
		if (fOpenStatus != kIOReturnSuccess) {
			fGuest = false;
			return false;
		}
		return true;
	}
	fOpenStatus = fShim->ownerOpen(this);
	if (fOpenStatus != kIOReturnSuccess)
		return false;
	fOwner = true;
	fShim->setOwnerTask(fTask);
	return true;
}

IOReturn org_uverbs_UvShimUserClient::clientClose()
{
	if (fOwner && fShim) {
		fShim->ownerRelease(this);
		fOwner = false;
	}
	if (fGuest && fShim) {
		fShim->guestRelease(this);
		fGuest = false;
	}
	terminate();
	return kIOReturnSuccess;
}

IOReturn org_uverbs_UvShimUserClient::clientDied()
{
	/* The owner task died with the connection open: same teardown as a close. */
	return clientClose();
}

IOReturn org_uverbs_UvShimUserClient::externalMethod(uint32_t selector, IOExternalMethodArguments *a,
						     IOExternalMethodDispatch *dispatch, OSObject *target,
						     void *reference)
{
	(void)dispatch;
	(void)target;
	(void)reference;
	if (!fOwner && !fGuest)
		return kIOReturnNotOpen;
	/* Struct methods only; scalars and out-of-line descriptors are refused so the
	 * only bytes the core sees are the ones it validates. */
	if (a->scalarInputCount || a->scalarOutputCount || a->structureInputDescriptor ||
	    a->structureOutputDescriptor)
		return org_uverbs_UvShim::toIOReturn(-UVSHIM_EBADSIZE);
	bool async = a->asyncWakePort != MACH_PORT_NULL;
	if (async != (selector == UVSHIM_SEL_IRQ_ARM))
		return org_uverbs_UvShim::toIOReturn(-UVSHIM_EINVAL);

	uint8_t out[sizeof(struct uvshim_pin_rep)];
	size_t outLen = a->structureOutputSize;
	if (outLen > sizeof(out))
		return org_uverbs_UvShim::toIOReturn(-UVSHIM_EBADSIZE);
	IOReturn r = fShim->call(this, selector, a->structureInput, a->structureInputSize,
				 outLen ? out : NULL, outLen,
				 async ? a->asyncReference : NULL, async ? a->asyncReferenceCount : 0);
	/* HELLO reports the kext's version even on a mismatch; the core cleared the
	 * reply before anything else, so a failed call returns zeros, never kernel bytes. */
	if (outLen && a->structureOutput)
		bcopy(out, a->structureOutput, outLen);
	return r;
}

IOReturn org_uverbs_UvShimUserClient::clientMemoryForType(UInt32 type, IOOptionBits *options,
							     IOMemoryDescriptor **memory)
{
	/* IOConnectMapMemory64 -> IOUserClient::mapClientMemory64 (not virtual) -> here.  It
	 * replaces the cache bits of *options with the caller's, so the cache mode is
	 * checked by the window descriptor when the mapping is made (UvShimWindow below).
	 * This runs in the calling thread: only the task that opened this connection may
	 * map, and a guest only the windows the core allows it (its granted pages). */
	if ((!fOwner && !fGuest) || current_task() != fTask)
		return kIOReturnNotPermitted;
	*options = 0;
	return fShim->memoryForType(this, type, memory);
}

IOReturn org_uverbs_UvShimUserClient::sendInterrupt(OSAsyncReference64 ref, io_user_reference_t *args,
						    UInt32 nargs)
{
	/* Never block the work loop on a slow client: a dropped message is seen by the
	 * client as a jump in the count. */
	return sendAsyncResult64WithOptions(ref, kIOReturnSuccess, args, nargs, kIOUserNotifyOptionCanDrop);
}

void org_uverbs_UvShimUserClient::keepWindow(uint32_t memoryType, org_uverbs_UvShimWindow *w)
{
	uint32_t i = memoryType & UVSHIM_MEMTYPE_INDEX_MASK;
	if (i >= UVSHIM_MAX_GUEST_WINDOWS)
		return;
	OSSafeReleaseNULL(fWin[i]);
	w->trackMappings();
	w->retain();
	fWin[i] = w;
}

void org_uverbs_UvShimUserClient::revokeWindow(uint32_t memoryType)
{
	/* Called by the core under the provider's lock: on REVOKE, and for every window
	 * of every guest when the owner goes (DYING, before the function reset). */
	uint32_t i = memoryType & UVSHIM_MEMTYPE_INDEX_MASK;
	if (i >= UVSHIM_MAX_GUEST_WINDOWS || !fWin[i])
		return;
	fWin[i]->revoke();
	OSSafeReleaseNULL(fWin[i]);
}

void org_uverbs_UvShimUserClient::free()
{
	for (uint32_t i = 0; i < UVSHIM_MAX_GUEST_WINDOWS; i++)
		OSSafeReleaseNULL(fWin[i]);
	super::free();
}

/* ---- BAR0 windows ------------------------------------------------------------------- */

#undef super
#define super IOSubMemoryDescriptor
OSDefineMetaClassAndStructors(org_uverbs_UvShimWindow, IOSubMemoryDescriptor)

/* The core's copy of IOKit's cache-mode encoding (uvshim_window_map_check). */
static_assert(UVSHIM_IOMAP_CACHE_MASK == kIOMapCacheMask, "kIOMapCacheMask");
static_assert(UVSHIM_IOMAP_CACHE_SHIFT == kIOMapCacheShift, "kIOMapCacheShift");
static_assert(UVSHIM_IOMAP_DEFAULT == kIODefaultCache, "kIODefaultCache");
static_assert(UVSHIM_IOMAP_INHIBIT == kIOInhibitCache, "kIOInhibitCache");
static_assert(UVSHIM_IOMAP_WRITE_COMBINE == kIOWriteCombineCache, "kIOWriteCombineCache");
static_assert(UVSHIM_IOMAP_POSTED_WRITE == kIOPostedWrite, "kIOPostedWrite");
static_assert(UVSHIM_IOMAP_POSTED_REORDERED == kIOPostedReordered, "kIOPostedReordered");
static_assert(UVSHIM_IOMAP_POSTED_COMBINED_REORDERED == kIOPostedCombinedReordered,
	      "kIOPostedCombinedReordered");

org_uverbs_UvShimWindow *org_uverbs_UvShimWindow::withWindow(IOMemoryDescriptor *bar, uint64_t offset,
							    uint64_t length, uint32_t cache)
{
	org_uverbs_UvShimWindow *w = OSTypeAlloc(org_uverbs_UvShimWindow);
	if (w && !w->initSubRange(bar, offset, length, kIODirectionNone))
		OSSafeReleaseNULL(w);
	if (w)
		w->fCache = cache;
	return w;
}

IOMemoryMap *org_uverbs_UvShimWindow::makeMapping(IOMemoryDescriptor *owner, task_t intoTask,
						  IOVirtualAddress atAddress, IOOptionBits options,
						  IOByteCount offset, IOByteCount length)
{
	if (uvshim_window_map_check(fCache, options) != 0) {
		IOLog("uvshim: BAR0 window (%s) refused cache mode %u\n",
		      fCache == UVSHIM_CACHE_WC ? "write-combining" : "uncached",
		      (unsigned)((options & kIOMapCacheMask) >> kIOMapCacheShift));
		/* On LP64 atAddress carries the IOMemoryMap that createMappingInTask made, and
		 * makeMapping owns it: the base class releases it when the mapping fails
		 * (xnu iokit/Kernel/IOMemoryDescriptor.cpp, IOMemoryDescriptor::makeMapping). */
		IOMemoryMap *pending = (IOMemoryMap *)atAddress;
		if (pending)
			pending->release();
		return NULL;
	}
	IOMemoryMap *map = super::makeMapping(owner, intoTask, atAddress, options, offset, length);
	/* Remember user mappings, so that revoke() can take them away; a guest maps each
	 * window once, and a window with no room left refuses a further mapping rather
	 * than hold one it could not revoke. */
	if (map && fTrack) {
		if (fNumMaps == sizeof(fMaps) / sizeof(fMaps[0])) {
			map->release();
			return NULL;
		}
		map->retain();
		fMaps[fNumMaps++] = map;
	}
	return map;
}

void org_uverbs_UvShimWindow::revoke()
{
	for (uint32_t i = 0; i < fNumMaps; i++) {
		IOMemoryMap *map = fMaps[i];
		/* Stores after this land in zeroed kernel memory the guest cannot harm: the
		 * mapping keeps its address, so the guest does not fault while it learns,
		 * from its daemon, that its device is gone (IOMemoryMap::redirect, xnu
		 * iokit/Kernel/IOMemoryDescriptor.cpp).  If that fails, the mapping goes. */
		IOBufferMemoryDescriptor *sink = IOBufferMemoryDescriptor::withCapacity(
			map->getLength(), kIODirectionInOut);
		IOReturn r = sink ? map->redirect(sink, 0, (mach_vm_size_t)0) : kIOReturnNoMemory;
		if (r != kIOReturnSuccess)
			map->unmap();
		OSSafeReleaseNULL(sink);
		map->release();
		fMaps[i] = NULL;
	}
	fNumMaps = 0;
}

void org_uverbs_UvShimWindow::free()
{
	for (uint32_t i = 0; i < fNumMaps; i++)
		OSSafeReleaseNULL(fMaps[i]);
	fNumMaps = 0;
	super::free();
}
