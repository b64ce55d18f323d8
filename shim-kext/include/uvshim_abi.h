/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvshim ABI: the user-client interface between the macOS kext (shim-kext/macos) and
 * its userspace client (hw/shim/kext.c).  docs/hardware.md, "macOS (kext shim)".
 *
 * This header is the whole contract.  It is plain C11 with no dependency beyond
 * <stdint.h> and <stddef.h>, so the kext (Kernel.framework headers), the userspace
 * shim, the portable policy in shim-kext/core and the Linux tests all include the
 * same bytes.  Layout is pinned by _Static_assert below, one per row of
 * uvshim_abi_layout.def (the only other file of the contract): every struct is made of
 * fixed-width fields, naturally aligned, with explicit padding, and a multiple of 8
 * bytes, so a 32-bit or 64-bit build, gcc or clang, kernel or user, sees the same
 * offsets.
 *
 * How a client talks to the kext (IOKit user client, IOConnectCall*Method):
 *  1. IOServiceOpen(service of class UVSHIM_SERVICE_CLASS, task, UVSHIM_CLIENT_TYPE).
 *     The kext accepts one owner at a time: root, or a member of the group set in the
 *     kext's Info.plist (UVSHIM_PLIST_GROUP); a second opener gets UVSHIM_EBUSY.
 *  2. UVSHIM_SEL_HELLO first: the major versions must match, or every later call
 *     fails with UVSHIM_EVERSION (calls before HELLO fail with UVSHIM_ENOHELLO).
 *  3. Every method is a struct method: the input is the request struct of the
 *     selector, the output the reply struct; both sizes must be exact
 *     (UVSHIM_EBADSIZE otherwise).  UVSHIM_SEL_IRQ_ARM is called with
 *     IOConnectCallAsyncStructMethod so the kext gets the notification port.
 *  4. Memory is mapped with IOConnectMapMemory64(memory_type, options) where
 *     memory_type comes from a MAP_BAR or DMA_ALLOC reply (UVSHIM_MEMTYPE_*).  IOKit
 *     takes the cache mode from the caller's options, so the client passes it: an
 *     uncached window (the one holding the init segment) only with kIOMapInhibitCache,
 *     a write-combining (UAR, BlueFlame) window with kIOMapPostedCombinedReordered,
 *     kIOMapWriteCombineCache or an uncached mode; the kext refuses any other.
 *  5. Closing the connection, or the owner task dying, makes the kext disable bus
 *     mastering, reset the function and unpin every page, in that order, before
 *     anyone may open the device again.
 *
 * Guests (ABI 1.1): the owner (a device daemon, tools/uvd) may share the function with
 * client processes by consent.  It GRANTs a client's pid one host page of the UAR
 * region; the client opens its own connection with UVSHIM_CLIENT_TYPE_GUEST (same
 * credential rule as the owner), says HELLO, and may MAP_BAR exactly the pages granted
 * to its pid (write-combining or uncached; DEVICE_INFO too; nothing else).  The owner
 * wires a guest's memory for the device with PIN_FOR(pid, va, length): the pages are
 * the guest task's, the handle and IOVAs the owner's, charged to the owner's limits,
 * freed with UNPIN.  REVOKE takes a grant back and unmaps the guest's windows on that
 * page; when the owner closes, every guest mapping is revoked before the function is
 * reset, and the guests' connections answer UVSHIM_EPERM from then on.
 *
 * Errors: a method returns kIOReturnSuccess or UVSHIM_IORETURN(status), with status
 * one of enum uvshim_status.  Status values below 256 are the classic errno numbers
 * that Linux and Darwin share (1..34), so they read the same on both.
 */
#ifndef UVSHIM_ABI_H
#define UVSHIM_ABI_H

#include <stddef.h>
#include <stdint.h>

/* The kext is C++ (IOKit), everything else C11. */
#ifdef __cplusplus
#define UVSHIM_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define UVSHIM_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* ---- identity and version ---------------------------------------------------------- */

/* Major changes break the ABI (struct layout, selector meaning); minor ones add. */
#define UVSHIM_ABI_MAJOR 1u
#define UVSHIM_ABI_MINOR 1u   /* 1: guests (GRANT, REVOKE, PIN_FOR, UVSHIM_CLIENT_TYPE_GUEST) */

#define UVSHIM_SERVICE_CLASS "org_uverbs_UvShim"   /* IOService class to match */
#define UVSHIM_CLIENT_TYPE   0x75767368u           /* 'uvsh', IOServiceOpen type */
#define UVSHIM_CLIENT_TYPE_GUEST 0x75767367u       /* 'uvsg': a guest of the owner (ABI 1.1) */
#define UVSHIM_PLIST_GROUP   "UvShimGroupID"       /* Info.plist: gid allowed to open */
#define UVSHIM_PLIST_MAX_PINS "UvShimMaxPins"
#define UVSHIM_PLIST_MAX_PINNED_MB "UvShimMaxPinnedMB"
#define UVSHIM_PLIST_MSIX_VECTORS "UvShimMSIXVectors"  /* MSI-X vectors to allocate */

/* ---- selectors --------------------------------------------------------------------- */

enum uvshim_selector {
	UVSHIM_SEL_HELLO = 0,       /* version handshake; must be first */
	UVSHIM_SEL_DEVICE_INFO = 1, /* PCI identity, link, BAR0 size, UAR region, vectors */
	UVSHIM_SEL_MAP_BAR = 2,     /* declare a BAR0 window -> memory type to map */
	UVSHIM_SEL_UNMAP_BAR = 3,   /* forget a window (after IOConnectUnmapMemory64) */
	UVSHIM_SEL_PIN = 4,         /* pin user memory -> handle + IOVA segments */
	UVSHIM_SEL_PIN_SEGS = 5,    /* further IOVA segments of a pin */
	UVSHIM_SEL_UNPIN = 6,
	UVSHIM_SEL_DMA_ALLOC = 7,   /* driver DMA memory -> handle, IOVA, memory type */
	UVSHIM_SEL_DMA_FREE = 8,
	UVSHIM_SEL_IRQ_ARM = 9,     /* async: forward MSI-X vector N to the notification port */
	UVSHIM_SEL_IRQ_DISARM = 10,
	UVSHIM_SEL_RESET = 11,      /* function level reset, bus mastering kept on after */
	UVSHIM_SEL_GRANT = 12,      /* owner: let pid map one host page of the UAR region (1.1) */
	UVSHIM_SEL_REVOKE = 13,     /* owner: take a grant back, unmapping the guest's windows (1.1) */
	UVSHIM_SEL_PIN_FOR = 14,    /* owner: pin a guest task's memory -> handle + IOVA segments (1.1) */
	UVSHIM_SEL_COUNT = 15
};

/* ---- status codes ------------------------------------------------------------------ */

enum uvshim_status {
	UVSHIM_OK = 0,
	UVSHIM_EPERM = 1,       /* operation not allowed in this state (not the owner) */
	UVSHIM_ENOENT = 2,      /* unknown or stale handle, window or vector */
	UVSHIM_EIO = 5,         /* the platform failed (DMA mapping, config access) */
	UVSHIM_ENOMEM = 12,     /* kernel allocation failed */
	UVSHIM_EACCES = 13,     /* caller is neither root nor in the configured group */
	UVSHIM_EFAULT = 14,     /* address outside the user address space */
	UVSHIM_EBUSY = 16,      /* device already owned, or being torn down */
	UVSHIM_EEXIST = 17,     /* an IOVA range the platform returned overlaps another */
	UVSHIM_ENODEV = 19,     /* device gone (surprise removal) */
	UVSHIM_EINVAL = 22,     /* a field has a bad value (flags, alignment, zero length) */
	UVSHIM_ENOSPC = 28,     /* table full: pins, windows */
	UVSHIM_ERANGE = 34,     /* window or segment index outside the object */
	UVSHIM_ENOSYS = 256,    /* unknown selector */
	UVSHIM_EBADSIZE = 257,  /* request or reply size differs from the selector's struct */
	UVSHIM_EVERSION = 258,  /* ABI major version mismatch */
	UVSHIM_ENOHELLO = 259,  /* method called before a successful HELLO */
	UVSHIM_EPINLIMIT = 260, /* per-owner pinned byte limit would be exceeded */
};

/* IOReturn carrying a status: iokit_vendor_specific_err(status), i.e.
 * sys_iokit (0x38 << 26) | sub_iokit_vendor_specific (0xffe << 14) | status.
 * Spelled out so userspace and tests need no IOKit header. */
#define UVSHIM_IORETURN_BASE 0xe3ff8000u
#define UVSHIM_IORETURN(status) ((uint32_t)(UVSHIM_IORETURN_BASE | ((uint32_t)(status) & 0x3fffu)))
#define UVSHIM_IORETURN_IS_STATUS(ret) (((uint32_t)(ret) & ~0x3fffu) == UVSHIM_IORETURN_BASE)
#define UVSHIM_STATUS_OF_IORETURN(ret) ((int)((uint32_t)(ret) & 0x3fffu))

static inline const char *uvshim_status_name(int status)
{
	switch (status < 0 ? -status : status) {
	case UVSHIM_OK: return "ok";
	case UVSHIM_EPERM: return "not allowed in this state";
	case UVSHIM_ENOENT: return "no such handle";
	case UVSHIM_EIO: return "platform I/O failure";
	case UVSHIM_ENOMEM: return "out of kernel memory";
	case UVSHIM_EACCES: return "access denied (not root or configured group)";
	case UVSHIM_EFAULT: return "bad user address";
	case UVSHIM_EBUSY: return "device busy (owned or being reset)";
	case UVSHIM_EEXIST: return "IOVA range overlaps an existing pin";
	case UVSHIM_ENODEV: return "device removed";
	case UVSHIM_EINVAL: return "invalid argument";
	case UVSHIM_ENOSPC: return "table full";
	case UVSHIM_ERANGE: return "out of range";
	case UVSHIM_ENOSYS: return "unknown selector";
	case UVSHIM_EBADSIZE: return "request/reply size mismatch";
	case UVSHIM_EVERSION: return "ABI version mismatch";
	case UVSHIM_ENOHELLO: return "HELLO not done";
	case UVSHIM_EPINLIMIT: return "pinned memory limit reached";
	default: return "unknown status";
	}
}

/* ---- limits ------------------------------------------------------------------------ */

#define UVSHIM_MAX_SEGS_PER_REPLY 64u        /* IOVA segments carried by one reply */
#define UVSHIM_MAX_PINS_HARD (1u << 20)      /* ceiling for the configured pin count */
#define UVSHIM_DEFAULT_MAX_PINS 16384u       /* pins + DMA buffers per owner */
#define UVSHIM_DEFAULT_MAX_PINNED_BYTES (16ull << 30) /* wired bytes per owner */
#define UVSHIM_MAX_PIN_BYTES (64ull << 30)   /* one pin */
#define UVSHIM_MAX_DMA_BYTES (1ull << 30)    /* one DMA buffer */
#define UVSHIM_MAX_DMA_ALIGN (1ull << 21)    /* IOVA alignment a DMA buffer may ask for */
#define UVSHIM_MAX_WINDOWS 8u                /* BAR windows declared at once */
#define UVSHIM_MAX_VECTORS 64u               /* MSI-X vectors forwarded */
#define UVSHIM_MAX_GUESTS 32u                /* guest connections open at once */
#define UVSHIM_MAX_GRANTS 256u               /* UAR pages granted at once */
#define UVSHIM_MAX_GUEST_WINDOWS 4u          /* BAR windows one guest declares at once */
/* MSI-X vectors the kext allocates unless its Info.plist says otherwise: one per EQ of
 * the driver (the async EQ and up to 15 completion EQs). */
#define UVSHIM_DEFAULT_MSIX_VECTORS 16u
/* User addresses live below 2^47 on x86-64 and arm64 macOS alike; anything above is a
 * kernel or non-canonical address and is refused before IOKit sees it. */
#define UVSHIM_USER_VA_LIMIT (1ull << 47)

/* The init segment (PRM "Initialization Segment": fw_rev at 0x0 ... health_counter at
 * 0x1010, clr_intx at 0x104c) spans the first two 4 KiB pages of BAR0.  It must only
 * ever be mapped uncached: write-combining could merge or reorder the command doorbell
 * and health reads.  The UAR pages used for BlueFlame follow it. */
#define UVSHIM_INIT_SEG_END 0x2000ull

/* ---- memory types for IOConnectMapMemory64 ---------------------------------------- */

/* bits 31..24 kind, bits 23..0 index (window slot or DMA buffer slot). */
#define UVSHIM_MEMTYPE_KIND_SHIFT 24
#define UVSHIM_MEMTYPE_INDEX_MASK 0x00ffffffu
#define UVSHIM_MEMTYPE_WINDOW 0x01u
#define UVSHIM_MEMTYPE_DMA    0x02u
#define UVSHIM_MEMTYPE(kind, index) \
	((uint32_t)(((uint32_t)(kind) << UVSHIM_MEMTYPE_KIND_SHIFT) | ((uint32_t)(index) & UVSHIM_MEMTYPE_INDEX_MASK)))

/* Cache mode of a BAR window. */
enum uvshim_cache {
	UVSHIM_CACHE_UNCACHED = 0,  /* kIOMapInhibitCache: registers, init segment */
	UVSHIM_CACHE_WC = 1,        /* kIOMapWriteCombineCache: UAR pages, BlueFlame */
};

/* ---- request and reply structs ----------------------------------------------------- */

/* One IOVA range the device may use.  len is a multiple of the host page size. */
struct uvshim_seg {
	uint64_t iova;
	uint64_t len;
};

/* UVSHIM_SEL_HELLO */
struct uvshim_hello_req {
	uint32_t abi_major;       /* UVSHIM_ABI_MAJOR of the client */
	uint32_t abi_minor;
	uint32_t flags;           /* 0 */
	uint32_t reserved;        /* 0 */
};
struct uvshim_hello_rep {
	uint32_t abi_major;       /* the kext's */
	uint32_t abi_minor;
	uint32_t page_size;       /* host page size: pin/map granularity (16 KiB on arm64) */
	uint32_t num_vectors;     /* MSI-X vectors the kext can forward */
	uint32_t max_segs_per_reply;
	uint32_t max_pins;        /* pins + DMA buffers this owner may hold */
	uint64_t max_pinned_bytes;
};

/* UVSHIM_SEL_DEVICE_INFO */
struct uvshim_info_req {
	uint32_t flags;           /* 0 */
	uint32_t reserved;        /* 0 */
};
struct uvshim_info_rep {
	uint16_t vendor_id;
	uint16_t device_id;
	uint16_t subsys_vendor_id;
	uint16_t subsys_device_id;
	uint32_t pci_domain;
	uint8_t bus;
	uint8_t device;
	uint8_t function;
	uint8_t link_speed_gen;   /* 1..6, 0 unknown */
	uint8_t link_width;       /* lanes, 0 unknown */
	uint8_t tunnelled;        /* 1 behind a Thunderbolt tunnel */
	uint16_t max_payload_bytes;
	uint32_t page_size;
	uint32_t num_vectors;
	uint32_t reserved;
	uint64_t bar0_len;
	uint64_t uar_offset;      /* first byte of BAR0 that may be mapped write-combining */
	uint64_t uar_len;
};

/* UVSHIM_SEL_MAP_BAR: declare a window; map it with IOConnectMapMemory64(memory_type). */
struct uvshim_map_bar_req {
	uint32_t bar;             /* 0: the only BAR a ConnectX function exposes to us */
	uint32_t cache;           /* enum uvshim_cache */
	uint64_t offset;          /* page aligned */
	uint64_t length;          /* page multiple, > 0 */
};
struct uvshim_map_bar_rep {
	uint32_t memory_type;     /* UVSHIM_MEMTYPE(UVSHIM_MEMTYPE_WINDOW, slot) */
	uint32_t cache;
	uint64_t offset;
	uint64_t length;
};

/* UVSHIM_SEL_UNMAP_BAR */
struct uvshim_unmap_bar_req {
	uint32_t memory_type;
	uint32_t reserved;        /* 0 */
};

/* UVSHIM_SEL_PIN: va and length are multiples of the host page size (the DART maps
 * whole pages; the client rounds and keeps the offset itself). */
#define UVSHIM_PIN_DEVICE_READ  0x1u   /* device reads the memory (send, RDMA READ response) */
#define UVSHIM_PIN_DEVICE_WRITE 0x2u   /* device writes it (receive, RDMA WRITE target) */
#define UVSHIM_PIN_FLAGS_ALL (UVSHIM_PIN_DEVICE_READ | UVSHIM_PIN_DEVICE_WRITE)
struct uvshim_pin_req {
	uint64_t va;
	uint64_t length;
	uint32_t flags;           /* UVSHIM_PIN_*, at least one */
	uint32_t reserved;        /* 0 */
};
/* Reply of PIN and PIN_SEGS: segments [first_seg, first_seg + nseg) of nseg_total. */
struct uvshim_pin_rep {
	uint64_t handle;
	uint64_t length;
	uint32_t nseg_total;
	uint32_t first_seg;
	uint32_t nseg;
	uint32_t reserved;
	struct uvshim_seg seg[UVSHIM_MAX_SEGS_PER_REPLY];
};

/* UVSHIM_SEL_PIN_SEGS */
struct uvshim_pin_segs_req {
	uint64_t handle;
	uint32_t first_seg;       /* < nseg_total */
	uint32_t reserved;        /* 0 */
};

/* UVSHIM_SEL_UNPIN and UVSHIM_SEL_DMA_FREE (no reply) */
struct uvshim_handle_req {
	uint64_t handle;
};

/* UVSHIM_SEL_DMA_ALLOC: zeroed, device-readable and writable, one IOVA range. */
struct uvshim_dma_alloc_req {
	uint64_t length;          /* > 0; rounded up to the page size by the kext */
	uint64_t align;           /* IOVA alignment: power of two, <= UVSHIM_MAX_DMA_ALIGN */
	uint32_t flags;           /* 0 */
	uint32_t reserved;        /* 0 */
};
struct uvshim_dma_alloc_rep {
	uint64_t handle;
	uint64_t iova;
	uint64_t length;          /* rounded length */
	uint32_t memory_type;     /* UVSHIM_MEMTYPE(UVSHIM_MEMTYPE_DMA, slot) */
	uint32_t reserved;
};

/* UVSHIM_SEL_IRQ_ARM: every interrupt on the vector sends one async result to the
 * port given to IOConnectCallAsyncStructMethod, with args
 * { UVSHIM_IRQ_ARG_VECTOR: vector, UVSHIM_IRQ_ARG_COUNT: interrupts so far,
 *   UVSHIM_IRQ_ARG_COOKIE: cookie }.  The count lets the client notice messages the
 * port dropped when its queue was full. */
struct uvshim_irq_req {
	uint32_t vector;          /* < num_vectors */
	uint32_t flags;           /* 0 */
	uint64_t cookie;          /* echoed in notifications (IRQ_ARM only; 0 for DISARM) */
};
#define UVSHIM_IRQ_ARG_VECTOR 0
#define UVSHIM_IRQ_ARG_COUNT  1
#define UVSHIM_IRQ_ARG_COOKIE 2
#define UVSHIM_IRQ_NARGS      3

/* UVSHIM_SEL_RESET */
struct uvshim_reset_req {
	uint32_t flags;           /* 0 */
	uint32_t reserved;        /* 0 */
};

/* UVSHIM_SEL_GRANT and UVSHIM_SEL_REVOKE (no reply).  uar_index counts host pages
 * (hello_rep.page_size) from info_rep.uar_offset: the kext maps whole pages, so with
 * 16 KiB pages one grant covers four 4 KiB UAR pages (PRM "UAR"), and the owner gives
 * each guest UAR pages from host pages no other guest has.  A page belongs to one pid. */
struct uvshim_grant_req {
	uint32_t pid;             /* > 0 */
	uint32_t uar_index;       /* < info_rep.uar_len / page_size */
};

/* UVSHIM_SEL_PIN_FOR -> struct uvshim_pin_rep (then PIN_SEGS and UNPIN as for PIN).
 * The task is a guest's: pid must have an open guest connection, which is that
 * process's consent. */
struct uvshim_pin_for_req {
	uint64_t va;              /* in the guest's address space, page aligned */
	uint64_t length;
	uint32_t flags;           /* UVSHIM_PIN_*, at least one */
	uint32_t pid;             /* > 0 */
};

/* ---- layout checks ----------------------------------------------------------------- */

#define UVSHIM_ABI_SIZE(type, size) \
	UVSHIM_STATIC_ASSERT(sizeof(struct type) == (size), #type " size is part of the ABI"); \
	UVSHIM_STATIC_ASSERT(sizeof(struct type) % 8 == 0, #type " must be a multiple of 8 bytes");
#define UVSHIM_ABI_OFF(type, field, off) \
	UVSHIM_STATIC_ASSERT(offsetof(struct type, field) == (off), #type "." #field " offset is part of the ABI");
#include "uvshim_abi_layout.def"
#undef UVSHIM_ABI_SIZE
#undef UVSHIM_ABI_OFF

/* Struct methods move up to 4096 bytes inline; larger ones need an out-of-line
 * descriptor the kext would have to map.  Keep the biggest reply inline. */
UVSHIM_STATIC_ASSERT(sizeof(struct uvshim_pin_rep) <= 4096, "pin reply must fit an inline struct method");

#endif /* UVSHIM_ABI_H */
