/* uvshim kext: the user client.  Copy in, ask the provider (which asks the core), copy
 * out.  One instance per IOServiceOpen; it is the owner token the core compares. */
#include "UvShim.hpp"

#include <IOKit/IOLib.h>

#undef super
#define super IOUserClient
OSDefineMetaClassAndStructors(org_uverbs_UvShimUserClient, IOUserClient)

bool org_uverbs_UvShimUserClient::initWithTask(task_t owningTask, void *securityToken,
					       UInt32 type, OSDictionary *properties)
{
	if (type != UVSHIM_CLIENT_TYPE)
		return false;
	if (!super::initWithTask(owningTask, securityToken, type, properties))
		return false;
	fTask = owningTask;
	return true;
}

bool org_uverbs_UvShimUserClient::start(IOService *provider)
{
	fShim = OSDynamicCast(org_uverbs_UvShim, provider);
	if (!fShim || !super::start(provider))
		return false;
	/* root or the configured group, one owner at a time (core: uvshim_owner_open);
	 * a refusal makes IOServiceOpen fail in the caller. */
	if (fShim->ownerOpen(this) != kIOReturnSuccess)
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
	if (!fOwner)
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

IOMemoryMap *org_uverbs_UvShimUserClient::mapClientMemory64(IOOptionBits type, task_t task,
							    IOOptionBits mapFlags,
							    mach_vm_address_t atAddress)
{
	(void)atAddress;
	/* Overridden (rather than clientMemoryForType) because the default merges the
	 * caller's cache bits over ours: a client must not get the init segment
	 * write-combined by asking for it.  Placement is always anywhere. */
	if (!fOwner || task != fTask)
		return NULL;
	IOMemoryDescriptor *mem = NULL;
	IOOptionBits cache = 0;
	if (fShim->memoryForType(this, type, &mem, &cache) != kIOReturnSuccess || !mem)
		return NULL;
	IOOptionBits options = kIOMapAnywhere | cache | (mapFlags & kIOMapReadOnly);
	IOMemoryMap *map = mem->createMappingInTask(task, 0, options);
	mem->release();
	return map;
}
