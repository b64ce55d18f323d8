/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The IOKit user-client API hw/shim/kext.c uses, for the IOKit stand-in on Linux
 * (shim-kext/standin/README.md).  Names, types and values as in Apple's headers:
 * IOKit/IOReturn.h (iokit_common_err codes), IOKit/IOTypes.h and IOMapTypes.h (map
 * options), IOKit/OSMessageNotification.h (async reference layout), IOKitLib.h
 * (prototypes).  Only what kext.c calls is here. */
#ifndef UVSHIM_STANDIN_IOKIT_IOKITLIB_H
#define UVSHIM_STANDIN_IOKIT_IOKITLIB_H

#include <stddef.h>
#include <stdint.h>

#include <dispatch/dispatch.h>
#include <mach/mach.h>

typedef kern_return_t IOReturn;
typedef uint32_t IOOptionBits;
typedef mach_port_t io_object_t;
typedef io_object_t io_service_t;
typedef io_object_t io_connect_t;
typedef io_object_t io_iterator_t;
typedef struct __CFDictionary *CFMutableDictionaryRef;
typedef const struct __CFDictionary *CFDictionaryRef;
typedef struct IONotificationPort *IONotificationPortRef;
typedef void (*IOAsyncCallback)(void *refcon, IOReturn result, void **args, uint32_t numArgs);

#define IO_OBJECT_NULL ((io_object_t)0)

/* IOReturn.h: sys_iokit | sub_iokit_common | code */
#define iokit_common_err(code) ((IOReturn)(0xe0000000u | (uint32_t)(code)))
#define kIOReturnSuccess KERN_SUCCESS
#define kIOReturnError iokit_common_err(0x2bc)
#define kIOReturnNoMemory iokit_common_err(0x2bd)
#define kIOReturnNoResources iokit_common_err(0x2be)
#define kIOReturnIPCError iokit_common_err(0x2bf)
#define kIOReturnNoDevice iokit_common_err(0x2c0)
#define kIOReturnNotPrivileged iokit_common_err(0x2c1)
#define kIOReturnBadArgument iokit_common_err(0x2c2)
#define kIOReturnExclusiveAccess iokit_common_err(0x2c5)
#define kIOReturnUnsupported iokit_common_err(0x2c7)
#define kIOReturnInternalError iokit_common_err(0x2c9)
#define kIOReturnNotOpen iokit_common_err(0x2cd)
#define kIOReturnNotAttached iokit_common_err(0x2d9)
#define kIOReturnNotPermitted iokit_common_err(0x2e2)
#define kIOReturnNotResponding iokit_common_err(0x2ed)

/* IOTypes.h / IOMapTypes.h: cache modes are (kIO*Cache << kIOMapCacheShift). */
enum {
	kIOMapAnywhere = 0x00000001,
	kIOMapDefaultCache = 0x00000000,
	kIOMapInhibitCache = 0x00000100,
	kIOMapWriteThruCache = 0x00000200,
	kIOMapCopybackCache = 0x00000300,
	kIOMapWriteCombineCache = 0x00000400,
	kIOMapCopybackInnerCache = 0x00000500,
	kIOMapPostedWrite = 0x00000600,
	kIOMapRealTimeCache = 0x00000700,
	kIOMapPostedReordered = 0x00000800,
	kIOMapPostedCombinedReordered = 0x00000900,
	kIOMapUserOptionsMask = 0x00000fff,
	kIOMapReadOnly = 0x00001000,
};

/* OSMessageNotification.h */
enum {
	kOSAsyncRef64Count = 8,
	kIOAsyncReservedIndex = 0,
	kIOAsyncCalloutFuncIndex = 1,
	kIOAsyncCalloutRefconIndex = 2,
};
/* The most scalars one call carries (io_scalar_inband64_t) and the largest structure
 * that travels in the message (io_struct_inband_t); a larger one goes out of line, as
 * a memory descriptor (IOKitLib.c, IOConnectCallMethod). */
#define UVSHIM_STANDIN_MAX_SCALARS 16u
#define UVSHIM_STANDIN_INBAND_BYTES 4096u

CFMutableDictionaryRef IOServiceMatching(const char *name);
kern_return_t IOServiceGetMatchingServices(mach_port_t mainPort, CFDictionaryRef matching,
					   io_iterator_t *existing);
io_object_t IOIteratorNext(io_iterator_t iterator);
kern_return_t IOObjectRelease(io_object_t object);
kern_return_t IOServiceOpen(io_service_t service, task_port_t owningTask, uint32_t type, io_connect_t *connect);
kern_return_t IOServiceClose(io_connect_t connect);

kern_return_t IOConnectCallMethod(mach_port_t connection, uint32_t selector, const uint64_t *input,
				  uint32_t inputCnt, const void *inputStruct, size_t inputStructCnt,
				  uint64_t *output, uint32_t *outputCnt, void *outputStruct, size_t *outputStructCnt);
kern_return_t IOConnectCallAsyncMethod(mach_port_t connection, uint32_t selector, mach_port_t wake_port,
				       uint64_t *reference, uint32_t referenceCnt, const uint64_t *input,
				       uint32_t inputCnt, const void *inputStruct, size_t inputStructCnt,
				       uint64_t *output, uint32_t *outputCnt, void *outputStruct,
				       size_t *outputStructCnt);
kern_return_t IOConnectCallStructMethod(mach_port_t connection, uint32_t selector, const void *inputStruct,
					size_t inputStructCnt, void *outputStruct, size_t *outputStructCnt);
kern_return_t IOConnectCallAsyncStructMethod(mach_port_t connection, uint32_t selector, mach_port_t wake_port,
					     uint64_t *reference, uint32_t referenceCnt, const void *inputStruct,
					     size_t inputStructCnt, void *outputStruct, size_t *outputStructCnt);
kern_return_t IOConnectCallScalarMethod(mach_port_t connection, uint32_t selector, const uint64_t *input,
					uint32_t inputCnt, uint64_t *output, uint32_t *outputCnt);

kern_return_t IOConnectMapMemory64(io_connect_t connect, uint32_t memoryType, task_port_t intoTask,
				   mach_vm_address_t *atAddress, mach_vm_size_t *ofSize, IOOptionBits options);
kern_return_t IOConnectUnmapMemory64(io_connect_t connect, uint32_t memoryType, task_port_t fromTask,
				     mach_vm_address_t atAddress);

IONotificationPortRef IONotificationPortCreate(mach_port_t mainPort);
void IONotificationPortDestroy(IONotificationPortRef notify);
mach_port_t IONotificationPortGetMachPort(IONotificationPortRef notify);
void IONotificationPortSetDispatchQueue(IONotificationPortRef notify, dispatch_queue_t queue);

#endif
