/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The IOKit stand-in (shim-kext/standin/README.md): inside, between its user half
 * (iokit_user.c: what IOKitLib, Mach and libdispatch give a macOS process) and its
 * kernel half (kext_standin.c: the uvshim kext, its user client and an IOPCIDevice
 * that is the emulated ConnectX of hw/emu), plus the few entry points for tests and for
 * hw/shim's platform file (kext_plat_linux.c).
 *
 * The kernel half runs in the calling process, as a kext runs in the kernel: one
 * instance per process, so a test that opens kext:0 twice meets the same function.  Or
 * it runs in a process of its own, the stand-in kernel daemon (kerneld.c), which every
 * process reaches through its user half (kernel_proto.h): then guests, other tasks'
 * pins and memory shared between tasks work as on a Mac.
 */
#ifndef UVSHIM_STANDIN_STANDIN_H
#define UVSHIM_STANDIN_STANDIN_H

#include <stdbool.h>
#include <stdint.h>

#include <IOKit/IOKitLib.h>

struct emu_dev;
struct standin_kext;
struct standin_client;

/* The task that opens a connection, as the kext sees it (kauth credential, pid). */
#define STANDIN_TASK_GROUPS 32u
struct standin_task {
	int32_t pid;
	uint32_t uid, gid;
	uint32_t ngroups;
	uint32_t groups[STANDIN_TASK_GROUPS];
};
/* This process's. */
void standin_task_self(struct standin_task *t);

/* What a mapping is backed by, for a kernel in its own process: the descriptor
 * (the BAR's memfd or the DMA buffer's, the kernel's: the caller dups it) and the
 * offset in it; fd -1 in a kernel that lives in its caller. */
struct standin_backing {
	int fd;
	uint64_t offset;
	bool window;                   /* a BAR0 window (offset is its BAR offset) */
};

/* ---- the kernel half (kext_standin.c) ---- */

/* How many ConnectX functions the kext matched (they attach on first use, as the kext
 * starts at boot; UVERBS_KEXT_STANDIN configures them). */
unsigned standin_kext_count(void);
/* The kernel half is the stand-in kernel daemon's (kerneld.c): call before anything else. */
void standin_kernel_own_process(void);
/* Function `index`, with a reference the caller gives back with standin_kext_put. */
struct standin_kext *standin_kext_get(unsigned index);
void standin_kext_put(struct standin_kext *k);

/* IOServiceOpen: UvShim::newUserClient -> initWithTask -> attach -> start: a type
 * initWithTask refuses is kIOReturnBadArgument (as xnu's IOService::newUserClient), a
 * start the core refused is the core's status (UvShim overrides IOService's
 * kIOReturnUnsupported there). */
IOReturn standin_client_open(struct standin_kext *k, const struct standin_task *task, uint32_t type,
			     struct standin_client **out);
/* IOServiceClose: clientClose (or clientDied: the same teardown). */
void standin_client_close(struct standin_client *c);

struct standin_method_args {
	uint32_t selector;
	uint32_t scalar_in_count, scalar_out_count;
	const void *struct_in;
	size_t struct_in_size;
	bool struct_in_ool;            /* larger than the inband limit: a memory descriptor */
	void *struct_out;
	size_t struct_out_size;
	bool struct_out_ool;
	mach_port_t wake_port;         /* async calls only */
	const uint64_t *async_ref;
	uint32_t async_ref_count;
};
/* IOUserClient::externalMethod of the kext's user client. */
IOReturn standin_external_method(struct standin_client *c, struct standin_method_args *a);
/* clientMemoryForType and createMappingInTask: where memory_type maps with these
 * options, or a refusal (the caller answers kIOReturnBadArgument, as xnu's
 * is_io_connect_map_memory_into_task does for any failed mapping). */
IOReturn standin_client_map(struct standin_client *c, uint32_t memory_type, IOOptionBits options, uint64_t *addr,
			    uint64_t *size, struct standin_backing *backing);
IOReturn standin_client_unmap(struct standin_client *c, uint32_t memory_type);
struct emu_dev *standin_client_emu(struct standin_client *c);

/* ---- the user half (iokit_user.c), for the kernel half ---- */

/* Send an async result to a notification port (IOUserClient::sendAsyncResult64): the
 * port's dispatch queue calls ref[kIOAsyncCalloutFuncIndex] with
 * ref[kIOAsyncCalloutRefconIndex] and args.  A port that is gone drops it. */
void standin_port_send(mach_port_t port, const uint64_t *ref, const uint64_t *args, uint32_t nargs);
/* A guest's window memory_type is revoked (IOMemoryMap::redirect of its mappings): its
 * task's mappings of it must stop reaching the BAR.  Called under the function's lock. */
void standin_revoke_mapping(struct standin_client *guest, uint32_t memory_type);

/* ---- for hw/shim/kext_plat_linux.c and tests ---- */

/* The emulated function behind a connection (its BAR hook, counters), or NULL. */
struct emu_dev *uvshim_standin_emu_of(io_connect_t connect);
/* With the kernel in its own process (UVERBS_KEXT_STANDIN_KERNEL): whether connect is a
 * connection to it (1), the BAR hook's message for an access through it (the kernel acts
 * on it inside a live window of the connection only), and its function's RoCE address
 * (host order, 0 if none). */
int uvshim_standin_remote_of(io_connect_t connect);
void uvshim_standin_mmio(io_connect_t connect, int op, uint64_t off, unsigned size);
uint32_t uvshim_standin_ipv4(io_connect_t connect);
/* The emulated function behind matched function `index` while it is attached. */
struct emu_dev *uvshim_standin_emu(unsigned index);

/* The owner's task died (UvShimUserClient::clientDied): the kext tears the function down
 * as for a close, and the dead owner's connection answers nothing more.  0, or
 * -UVSHIM_ENOENT when there is no owner. */
int uvshim_standin_owner_died(unsigned index);

/* Power of function `index` (UvShim's power handling, shim-kext/core/power.c): may the
 * system sleep now (0 or the core's -UVSHIM_EBUSY), it sleeps anyway (the slot loses
 * power; the owner is told through its vectors), it wakes. */
enum uvshim_standin_power { UVSHIM_STANDIN_CAN_SLEEP, UVSHIM_STANDIN_SLEEP, UVSHIM_STANDIN_WAKE };
int uvshim_standin_power(unsigned index, enum uvshim_standin_power event);

#endif
