/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* shim-kext/core: every decision the kext makes, in portable C (docs/hardware.md, "macOS (kext shim)").
 *
 * The IOKit glue (shim-kext/macos) owns the hardware: it maps BARs, drives IODMACommand,
 * takes interrupts.  It decides nothing.  Each user-client call goes
 *
 *     externalMethod -> uvshim_dispatch() -> validation and policy here
 *                                          -> struct uvshim_platform callbacks (IOKit)
 *
 * and owner death goes clientDied/clientClose -> uvshim_owner_release().  The same
 * code runs on Linux under criterion and libFuzzer with a fake platform, which is the
 * only place it can be tested: the kext itself is never built or loaded in CI.
 *
 * What this code may use: <stdint.h>, <stddef.h>, <stdbool.h> and the ABI header.  No
 * libc, no allocation (the kext passes in the pin table's storage), no locking: the
 * caller serialises every call on one device (the kext holds its device lock around
 * dispatch, release, memory lookup and interrupt bookkeeping).
 *
 * Errors: 0 or a negative enum uvshim_status (-UVSHIM_EBUSY ...).  Statuses below 256
 * are the errno values Linux and Darwin share, so they also read as negative errno.
 */
#ifndef UVSHIM_CORE_H
#define UVSHIM_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shim-kext/include/uvshim_abi.h"

/* The most IOVA segments one pin may have.  With the system mapper (DART on Apple
 * Silicon, VT-d on Intel Macs) a pin is one contiguous IOVA range; the cap bounds the
 * overlap checks and the reply paging when there is no mapper. */
#define UVSHIM_MAX_SEGS_PER_PIN 1024u

/* Page sizes and DMA alignments are powers of two (owner.c, pins.c, validate.c). */
static inline bool uvshim_is_pow2(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

struct uvshim_memory;

/* ---- owner state ----------------------------------------------------------------- */

enum uvshim_state {
	UVSHIM_STATE_CLOSED = 0,    /* nobody owns the function; it is quiet */
	UVSHIM_STATE_OWNED = 1,     /* one task owns it */
	UVSHIM_STATE_DYING = 2,     /* owner gone: interrupts off, bus mastering going off */
	UVSHIM_STATE_RESETTING = 3, /* function reset, pins being released */
};

enum uvshim_hello {
	UVSHIM_HELLO_NONE = 0,
	UVSHIM_HELLO_OK = 1,
	UVSHIM_HELLO_BAD_VERSION = 2,
};

/* What a call that needs the handshake answers in this HELLO state: 0 once HELLO
 * succeeded, -UVSHIM_ENOHELLO before any, -UVSHIM_EVERSION after one of another major
 * version.  The same rule for the owner and for each guest. */
static inline int uvshim_hello_status(enum uvshim_hello h)
{
	if (h == UVSHIM_HELLO_OK)
		return 0;
	return h == UVSHIM_HELLO_NONE ? -UVSHIM_ENOHELLO : -UVSHIM_EVERSION;
}

/* Who is opening: the kext fills it from the task's kauth credential. */
struct uvshim_cred {
	uint32_t uid;
	/* Is the caller a member of gid?  (kauth_cred_ismember_gid on macOS.) */
	bool (*is_member)(const void *ctx, uint32_t gid);
	const void *ctx;
};

struct uvshim_config {
	bool group_set;             /* members of group_id may open, besides root */
	uint32_t group_id;
	uint32_t max_pins;          /* pins + DMA buffers per owner, 0 = default */
	uint64_t max_pinned_bytes;  /* 0 = default */
};

/* ---- the platform (IOKit in the kext, a fake in the tests) ----------------------- */

struct uvshim_platform {
	void *ctx;
	/* Pin [va, va+len) of the owner task for the device (flags: UVSHIM_PIN_*).  On
	 * success *seg points to nseg segments the platform keeps until unpin. */
	int (*pin)(void *ctx, uint64_t va, uint64_t len, uint32_t flags,
		   const struct uvshim_seg **seg, uint32_t *nseg, void **cookie);
	void (*unpin)(void *ctx, void *cookie);
	/* Zeroed driver memory of len bytes, one IOVA range aligned to align. */
	int (*dma_alloc)(void *ctx, uint64_t len, uint64_t align, uint64_t *iova, void **cookie);
	void (*dma_free)(void *ctx, void *cookie);
	int (*bus_master)(void *ctx, bool enable);
	int (*reset_function)(void *ctx);
	/* Start (arm) or stop forwarding a vector; when arming, the kext takes the async
	 * reference of the call in progress. */
	int (*irq_arm)(void *ctx, uint32_t vector, bool arm);
	/* Guests (guest.c); both optional: without them guests are refused (ENOSYS).
	 * pin_for: as pin, but of the guest task whose connection is `guest`.
	 * revoke: unmap now every mapping the guest made of its window memory_type (the
	 * kext points them at a harmless page), so its stores no longer reach the BAR. */
	int (*pin_for)(void *ctx, const void *guest, uint64_t va, uint64_t len, uint32_t flags,
		       const struct uvshim_seg **seg, uint32_t *nseg, void **cookie);
	void (*revoke)(void *ctx, const void *guest, uint32_t memory_type);
};

/* ---- the pin table ----------------------------------------------------------------- */

enum uvshim_pin_kind {
	UVSHIM_PIN_FREE = 0,
	UVSHIM_PIN_RESERVED = 1,    /* limits taken, platform mapping in progress */
	UVSHIM_PIN_USER = 2,        /* user memory pinned (PIN) */
	UVSHIM_PIN_DMA = 3,         /* driver memory (DMA_ALLOC) */
};

struct uvshim_pin_entry {
	uint64_t va;                /* user VA (USER), 0 for DMA */
	uint64_t len;
	uint64_t iova_lo, iova_hi;  /* span of all segments, for quick overlap rejection */
	const struct uvshim_seg *seg;
	void *cookie;               /* the platform's */
	uint32_t nseg;
	uint32_t flags;
	uint32_t gen;               /* bumped on free, so stale handles are refused */
	uint8_t kind;
	uint8_t reserved_kind;      /* kind the RESERVED slot becomes */
	uint16_t pad;
	struct uvshim_seg one;      /* storage for a DMA buffer's single segment */
};

struct uvshim_pins {
	struct uvshim_pin_entry *e;
	uint32_t capacity;
	uint32_t max_pins;
	uint64_t max_bytes;
	uint64_t page_size;
	uint32_t count;             /* entries not FREE */
	uint32_t next;              /* where the free-slot search starts */
	uint64_t bytes;             /* bytes of entries not FREE */
};

typedef void (*uvshim_release_fn)(void *ctx, const struct uvshim_pin_entry *e);

int uvshim_pins_init(struct uvshim_pins *t, struct uvshim_pin_entry *storage, uint32_t capacity,
		     uint32_t max_pins, uint64_t max_bytes, uint64_t page_size);
/* Take a slot and the limits for a pin of kind USER (va, len page aligned, in the user
 * address space) or DMA (va 0, len page aligned). */
int uvshim_pins_reserve(struct uvshim_pins *t, enum uvshim_pin_kind kind, uint64_t va,
			uint64_t len, uint32_t flags, uint32_t *slot);
/* Fill a reserved slot with what the platform mapped; checks the segments (page
 * aligned, no wrap, lengths add up, no overlap inside the pin or with another pin). */
int uvshim_pins_commit(struct uvshim_pins *t, uint32_t slot, const struct uvshim_seg *seg,
		       uint32_t nseg, void *cookie);
void uvshim_pins_abort(struct uvshim_pins *t, uint32_t slot);
uint64_t uvshim_pins_handle(const struct uvshim_pins *t, uint32_t slot);
int uvshim_pins_lookup(const struct uvshim_pins *t, uint64_t handle, enum uvshim_pin_kind kind,
		       const struct uvshim_pin_entry **out, uint32_t *slot);
/* Which pin holds this IOVA: handle and offset of iova inside the pin's byte range. */
int uvshim_pins_find_iova(const struct uvshim_pins *t, uint64_t iova, uint64_t *handle,
			  uint64_t *offset);
/* Free one entry after calling fn on it (the platform's unmap). */
int uvshim_pins_release(struct uvshim_pins *t, uint64_t handle, enum uvshim_pin_kind kind,
			uvshim_release_fn fn, void *ctx);
/* Free everything, calling fn on each committed entry; returns how many. */
uint32_t uvshim_pins_release_all(struct uvshim_pins *t, uvshim_release_fn fn, void *ctx);

/* ---- BAR windows ------------------------------------------------------------------- */

struct uvshim_window {
	bool used;
	uint32_t cache;
	uint64_t offset;
	uint64_t length;
};

/* Declare the window r in the table win[0..n) and fill o with its memory type: the
 * slot that already holds the same window (declaring it again is how a client recovers
 * after a partial failure), else a free one.  0, or -UVSHIM_ENOSPC when full. */
int uvshim_window_declare(struct uvshim_window *win, uint32_t n, const struct uvshim_map_bar_req *r,
			  struct uvshim_map_bar_rep *o);

/* UNMAP_BAR: forget the window memory_type names in win[0..n).  0, or -UVSHIM_ENOENT
 * when it names no declared window. */
int uvshim_window_forget(struct uvshim_window *win, uint32_t n, uint32_t memory_type);

/* clientMemoryForType of a window: the declared window memory_type names in win[0..n)
 * into out (kind, cache, offset, length; nothing else is written).  0, or
 * -UVSHIM_ENOENT. */
int uvshim_window_memory(const struct uvshim_window *win, uint32_t n, uint32_t memory_type,
			 struct uvshim_memory *out);

/* Is [offset, offset+length) of BAR0 mappable with this cache mode on this device? */
int uvshim_bar_window_check(const struct uvshim_info_rep *info, uint32_t bar, uint32_t cache,
			    uint64_t offset, uint64_t length);

/* The cache mode of a user mapping of a window.  IOConnectMapMemory64 takes it from the
 * caller's map options, not from the kext (xnu iokit/Kernel/IOUserClient.cpp,
 * IOUserClient::mapClientMemory64: options = (options & ~kIOMapUserOptionsMask) |
 * (mapFlags & kIOMapUserOptionsMask)), so the kext checks it when the mapping is made.
 * Values of xnu iokit/IOKit/IOMapTypes.h (kIOMapCacheMask 0xf00, kIOMapCacheShift 8 and
 * the kIO*Cache modes), spelled out so the core needs no IOKit header; the kext
 * static_asserts that they match. */
#define UVSHIM_IOMAP_CACHE_MASK 0x00000f00u
#define UVSHIM_IOMAP_CACHE_SHIFT 8
enum uvshim_iomap_cache {
	UVSHIM_IOMAP_DEFAULT = 0,                  /* kIODefaultCache */
	UVSHIM_IOMAP_INHIBIT = 1,                  /* kIOInhibitCache: Device-nGnRnE on arm64 */
	UVSHIM_IOMAP_WRITE_COMBINE = 4,            /* kIOWriteCombineCache: Normal-NC on arm64 */
	UVSHIM_IOMAP_POSTED_WRITE = 6,             /* kIOPostedWrite: Device-nGnRE */
	UVSHIM_IOMAP_POSTED_REORDERED = 8,         /* kIOPostedReordered: Device-nGRE */
	UVSHIM_IOMAP_POSTED_COMBINED_REORDERED = 9 /* kIOPostedCombinedReordered: Device-GRE */
};

/* May a window declared with this cache mode (enum uvshim_cache) be mapped with these
 * IOKit map options?  An uncached window only uncached (kIOMapInhibitCache, asked for
 * explicitly); a write-combining window, which never covers the init segment, with any
 * device or write-combining mode.  -UVSHIM_EINVAL otherwise. */
int uvshim_window_map_check(uint32_t window_cache, uint32_t map_options);

/* ---- guests (guest.c) ------------------------------------------------------------------ */

struct uvshim_guest {
	const void *token;          /* the guest's user client; NULL = free slot */
	uint32_t pid;
	bool orphan;                /* its owner closed: every call is EPERM until it closes */
	enum uvshim_hello hello;
	struct uvshim_window win[UVSHIM_MAX_GUEST_WINDOWS];
};

struct uvshim_grant {
	bool used;
	uint32_t pid;
	uint32_t uar_index;
};

/* ---- interrupts ------------------------------------------------------------------------ */

struct uvshim_vector {
	bool armed;
	uint64_t cookie;
	uint64_t count;             /* interrupts seen since the owner opened */
};

/* ---- the device ------------------------------------------------------------------------ */

struct uvshim_dev {
	struct uvshim_info_rep info;
	struct uvshim_config cfg;
	struct uvshim_platform plat;
	struct uvshim_pins pins;
	struct uvshim_window win[UVSHIM_MAX_WINDOWS];
	struct uvshim_vector vec[UVSHIM_MAX_VECTORS];
	struct uvshim_guest guest[UVSHIM_MAX_GUESTS];
	struct uvshim_grant grant[UVSHIM_MAX_GRANTS];
	enum uvshim_state state;
	enum uvshim_hello hello;
	const void *owner;          /* the owner's user client (an opaque token) */
	bool gone;                  /* surprise removal seen */
	bool quarantined;           /* pins kept because the device could not be quiesced */
	uint32_t opens;             /* successful opens, for diagnostics */
	/* power (power.c): gone because the function lost power, and power came back */
	bool asleep;
	bool power_back;
};

/* Check the device description the platform read at attach, and set up.  The pin
 * storage must hold at least the configured max_pins entries. */
int uvshim_dev_init(struct uvshim_dev *d, const struct uvshim_info_rep *info,
		    const struct uvshim_config *cfg, const struct uvshim_platform *plat,
		    struct uvshim_pin_entry *pin_storage, uint32_t pin_capacity);

/* What every open checks first, the owner's and a guest's alike: credentials given
 * (-UVSHIM_EINVAL), the device still there (-UVSHIM_ENODEV), and the caller may open
 * it at all: root, or a member of the configured group (-UVSHIM_EACCES).  0 if so. */
int uvshim_open_check(const struct uvshim_dev *d, const struct uvshim_cred *cred);
/* newUserClient: root or the configured group may own; one owner at a time. */
int uvshim_owner_open(struct uvshim_dev *d, const struct uvshim_cred *cred, const void *owner);
/* clientClose / clientDied / stop: interrupts off, bus mastering off, function reset,
 * every pin and DMA buffer released, in that order; then CLOSED.  If the function
 * could be neither quiesced nor reset (and is not gone), pins are kept wired rather
 * than handed back while the device may still write them, and the device refuses
 * further opens (quarantined). */
int uvshim_owner_release(struct uvshim_dev *d, const void *owner);
/* newUserClient of type UVSHIM_CLIENT_TYPE_GUEST from process pid: the same
 * credentials as an owner, and an owner must be there (EPERM otherwise). */
int uvshim_guest_open(struct uvshim_dev *d, const struct uvshim_cred *cred, const void *guest,
		      uint32_t pid);
/* The guest's clientClose / clientDied: its windows are revoked (platform revoke), so
 * no mapping outlives the connection that could be told to give it back.  Its grants
 * stay (they are the owner's to revoke); pins made for it stay the owner's. */
int uvshim_guest_release(struct uvshim_dev *d, const void *guest);
/* Is this token an open guest?  (The kext routes its calls and memory by it.) */
bool uvshim_is_guest(const struct uvshim_dev *d, const void *token);
/* Owner death, in DYING: revoke every guest window, forget every grant, orphan the
 * guests.  Called by uvshim_owner_release before bus mastering goes off. */
void uvshim_guests_revoke_all(struct uvshim_dev *d);
/* The guest side of uvshim_dispatch: the open guest whose user client is token (or
 * NULL); whether it may make this call now (0, -UVSHIM_EPERM for an orphan, without an
 * owner or for a call that is not a guest's, or the HELLO status); its MAP_BAR, inside
 * the pages granted to its pid. */
struct uvshim_guest *uvshim_guest_of(const struct uvshim_dev *d, const void *token);
int uvshim_guest_admit(const struct uvshim_dev *d, const struct uvshim_guest *g, uint32_t selector);
int uvshim_guest_map_bar(struct uvshim_dev *d, struct uvshim_guest *g, const struct uvshim_map_bar_req *r,
			 struct uvshim_map_bar_rep *o);
/* A guest's UNMAP_BAR: its window's mapping revoked now (platform revoke), then forgotten.
 * 0, or -UVSHIM_ENOENT for no such window of this guest. */
int uvshim_guest_unmap_bar(struct uvshim_dev *d, struct uvshim_guest *g, uint32_t memory_type);
/* The guest side of uvshim_memory_for_type. */
int uvshim_guest_memory_for_type(const struct uvshim_dev *d, const void *guest,
				 uint32_t memory_type, struct uvshim_memory *out);
/* The owner's GRANT, REVOKE and PIN_FOR (requests already validated). */
int uvshim_grant(struct uvshim_dev *d, const struct uvshim_grant_req *r);
int uvshim_revoke(struct uvshim_dev *d, const struct uvshim_grant_req *r);
/* Pin [va, va + len) into a new pin-table entry: reserved in the table, wired by the
 * platform (plat.pin for the owner's own task, or plat.pin_for of the guest task whose
 * connection is `guest`), then committed; undone at whichever step fails.  The
 * entry's slot in *slot.  0 or -UVSHIM_*. */
int uvshim_pin_wire(struct uvshim_dev *d, const void *guest, uint64_t va, uint64_t len, uint32_t flags,
		    uint32_t *slot);
int uvshim_pin_for(struct uvshim_dev *d, const struct uvshim_pin_for_req *r, uint32_t *slot);

/* The provider saw the device disappear (Thunderbolt unplug). */
void uvshim_dev_gone(struct uvshim_dev *d);

/* ---- power (power.c) ---------------------------------------------------------------- */
/* kIOMessageCanSystemSleep: 0 if the system may sleep now, -UVSHIM_EBUSY while an
 * owner holds the function. */
int uvshim_power_may_sleep(const struct uvshim_dev *d);
/* The function is losing power (a sleep that cannot be refused): the device is gone from
 * now on; returns the vectors (bit v) through which to tell the owner, one interrupt
 * message each (uvshim_irq_fire, then the async result). */
uint64_t uvshim_power_down(struct uvshim_dev *d);
/* Power is back: openable again now, or when the owner that saw it go has closed. */
void uvshim_power_up(struct uvshim_dev *d);
/* uvshim_owner_release's last step: a function whose power came back is usable again. */
void uvshim_power_released(struct uvshim_dev *d);

/* Field checks that need no device state beyond the page size. */
int uvshim_request_check(uint32_t selector, const void *in, size_t in_len, size_t out_len,
			 uint64_t page_size);
/* Sizes of a selector's request and reply (0 when it has none); -UVSHIM_ENOSYS. */
int uvshim_request_sizes(uint32_t selector, size_t *in_len, size_t *out_len);

/* A request of any selector, and a reply: requests are decoded from an aligned copy
 * (the caller's input may be unaligned), replies built in an aligned local and copied
 * out. */
union uvshim_req {
	struct uvshim_hello_req hello;
	struct uvshim_info_req info;
	struct uvshim_map_bar_req map;
	struct uvshim_unmap_bar_req unmap;
	struct uvshim_pin_req pin;
	struct uvshim_pin_segs_req segs;
	struct uvshim_handle_req handle;
	struct uvshim_dma_alloc_req dma;
	struct uvshim_irq_req irq;
	struct uvshim_reset_req reset;
	struct uvshim_grant_req grant;
	struct uvshim_pin_for_req pin_for;
};
union uvshim_rep {
	struct uvshim_hello_rep hello;
	struct uvshim_info_rep info;
	struct uvshim_map_bar_rep map;
	struct uvshim_pin_rep pin;
	struct uvshim_dma_alloc_rep dma;
};

/* The steps every user-client call starts with, the owner's and a guest's alike:
 * uvshim_request_check, out present when the reply has bytes, out cleared, the device
 * still there (-UVSHIM_ENODEV); then the request copied into *req (zeroed first) and
 * the reply's out_len bytes of *rep zeroed (only this selector's member is used, and
 * it is out_len bytes long).  0 when the call may go on. */
int uvshim_call_begin(const struct uvshim_dev *d, uint32_t selector, const void *in, size_t in_len,
		      void *out, size_t out_len, union uvshim_req *req, union uvshim_rep *rep);
/* HELLO's common part: the kext's version in o whatever happens; on a matching major
 * version the page size and reply paging too, and *state becomes OK (else BAD_VERSION
 * and -UVSHIM_EVERSION). */
int uvshim_hello_answer(enum uvshim_hello *state, uint32_t page_size, const struct uvshim_hello_req *r,
			struct uvshim_hello_rep *o);

/* One user-client call.  out is cleared before anything is written to it, so no
 * kernel bytes reach userspace. */
int uvshim_dispatch(struct uvshim_dev *d, const void *owner, uint32_t selector,
		    const void *in, size_t in_len, void *out, size_t out_len);

/* clientMemoryForType: what a memory type names, for the owner. */
struct uvshim_memory {
	uint32_t kind;              /* UVSHIM_MEMTYPE_WINDOW or UVSHIM_MEMTYPE_DMA */
	uint32_t cache;             /* windows: enum uvshim_cache */
	uint64_t offset;            /* windows: BAR0 offset */
	uint64_t length;
	void *cookie;               /* DMA: the platform's buffer */
};
int uvshim_memory_for_type(const struct uvshim_dev *d, const void *owner, uint32_t memory_type,
			   struct uvshim_memory *out);

/* Interrupt on vector: counts it and says whether to notify the owner (1) or not (0).
 * Called from the kext's interrupt event source action, under the device lock. */
int uvshim_irq_fire(struct uvshim_dev *d, uint32_t vector, uint64_t *count, uint64_t *cookie);

#endif /* UVSHIM_CORE_H */
