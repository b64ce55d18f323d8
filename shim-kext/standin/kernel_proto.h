/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The IOKit stand-in's kernel in a process of its own (README.md beside this file):
 * what a task's user half (kernel_client.c) and the stand-in kernel daemon (kerneld.c)
 * say to each other, where on a Mac the Mach traps of IOKitLib reach xnu.
 *
 * Each process is one task with one connection (AF_UNIX, whole messages,
 * hw/platform/local_msg.h): request and reply, one at a time, under a lock.  In its
 * HELLO the task passes one end of a socketpair, its async channel, on which the
 * kernel sends what a Mac sends to the task unasked: async results to a notification
 * port (IOUserClient::sendAsyncResult64) and the redirect of a guest's revoked mapping
 * (IOMemoryMap::redirect), which the task acknowledges on the same channel.
 *
 * Memory is shared as IOKit maps it: the BAR and every DMA buffer are memfds of the
 * kernel, passed with the MAP reply (SCM_RIGHTS) and mapped MAP_SHARED by the task, so
 * a store lands in the very pages the emulated device reads.  Pins of a task's memory
 * reach it as another process's (emu_iommu_map_remote).  The emulated device learns
 * of a BAR access only through the task's MMIO message (the BAR hook,
 * hw/shim/kext_plat_linux.c): the kernel acts on it only inside a window the task has
 * mapped and that was not revoked, so a revoked mapping reaches nothing.
 *
 * A task is gone when its connection closes: every connection it had open is closed
 * as clientDied does (an owner's release, a guest's windows revoked).
 */
#ifndef UVSHIM_STANDIN_KERNEL_PROTO_H
#define UVSHIM_STANDIN_KERNEL_PROTO_H

#include <stdint.h>

#define SK_VERSION 1u
#define SK_MAX_MSG 16384u
#define SK_MAX_STRUCT 8192u         /* a struct method's input or output, in the message */
#define SK_REF_COUNT 8u             /* kOSAsyncRef64Count */
#define SK_IRQ_NARGS 3u
#define SK_REVOKE_ACK_MS 2000       /* how long the kernel waits for a redirect's ack */

enum sk_op {
	SK_HELLO = 1,      /* + the async channel's fd; reply: version, functions, kernel pid */
	SK_COUNT,          /* functions matched (IOServiceGetMatchingServices) */
	SK_OPEN,           /* IOServiceOpen: a = index, b = type; reply: conn */
	SK_CLOSE,          /* IOServiceClose */
	SK_CALL,           /* IOConnectCall*Method */
	SK_MAP,            /* IOConnectMapMemory64: a = memory type, b = options; reply + fd */
	SK_UNMAP,          /* IOConnectUnmapMemory64: a = memory type */
	SK_MMIO,           /* the BAR hook: a = op, b = size, x = BAR offset */
	SK_EMU_INFO,       /* the emulated function's RoCE address (kext_plat port_addrs) */
	SK_STATS,          /* the kernel's counters (struct sk_stats), for tests */
	/* on the async channel */
	SK_A_IRQ = 100,    /* kernel -> task: an async result for a notification port */
	SK_A_REVOKE,       /* kernel -> task: redirect the mapping of conn's memory type a */
	SK_A_REVOKED,      /* task -> kernel: done (seq as asked) */
};

/* Every message; in a reply `status` is the IOReturn. */
struct sk_msg {
	uint32_t len;      /* the whole message (plat_lmsg's length word) */
	uint32_t op;
	uint32_t conn;     /* a connection of this task, or 0 */
	int32_t status;
	uint32_t a, b;
	uint64_t x, y;
};

struct sk_hello_rep {
	struct sk_msg m;   /* a = version, b = functions, x = the kernel's pid */
};

/* SK_CALL: a = selector, b = flags; struct input follows. */
#define SK_CALL_IN_OOL 1u
#define SK_CALL_OUT_OOL 2u
#define SK_CALL_ASYNC 4u
struct sk_call {
	struct sk_msg m;
	uint32_t scalar_in, scalar_out;
	uint32_t wake_port, ref_count;
	uint64_t ref[SK_REF_COUNT];
	uint64_t out_size;
	uint64_t in_size;
	/* uint8_t in[in_size] */
};
struct sk_call_rep {
	struct sk_msg m;   /* x = out_size, a = scalar_out */
	/* uint8_t out[x] */
};

/* SK_MAP reply: x = size, y = offset into the passed fd; a = 1 for a BAR window
 * (b = nothing), and the window's BAR offset in the offset. */

struct sk_irq {
	struct sk_msg m;   /* a = the task's port, b = nargs */
	uint64_t ref[SK_REF_COUNT];
	uint64_t args[SK_IRQ_NARGS];
};

/* SK_A_REVOKE / SK_A_REVOKED: conn, a = memory type, x = seq. */

struct sk_stats {
	struct sk_msg m;
	uint64_t tasks, guest_opens;
	uint64_t mmio_owner, mmio_guest;     /* BAR accesses acted on */
	uint64_t mmio_refused;               /* outside a live window of the connection */
	uint64_t revokes_sent, revokes_acked;
};

#endif
