/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The device daemon's protocol (tools/uvd is the server, hw/shim/uvd.c the client).
 *
 * Two AF_UNIX connections of whole messages per client (hw/platform/local_msg.h:
 * SOCK_SEQPACKET on Linux, SOCK_STREAM framed by uvd_hdr.len on macOS):
 *  - the control socket, at the daemon's path: one request, one reply, in order;
 *  - the event socket, a socketpair the daemon hands over in the HELLO reply
 *    (SCM_RIGHTS): the daemon sends the events it routed to this client; the client
 *    sends a header-only KICK on it when the daemon's thread sleeps (below).
 * Stores into the client's UAR pages (doorbells, BlueFlame bursts, CQ arms) take no
 * message: they go into the client's doorbell ring (struct uvd_ring), a memfd the daemon
 * hands over in the RING reply, shared by the client and the daemon and nobody else.
 *
 * Every message starts with struct uvd_hdr, whose len is the whole message; the
 * receiver reads into a buffer of UVD_MAX_MSG bytes, drops a truncated message
 * (plat_lmsg_recv answers more than the buffer) and one whose len differs from what arrived, and checks each payload's
 * size for its op before it reads a field.  A client that breaks the protocol is
 * disconnected and its objects destroyed.  Fields are host order: both ends run on
 * one machine.  Reply rc: 0 or -errno.
 */
#ifndef UVERBS_HW_SHIM_UVD_PROTO_H
#define UVERBS_HW_SHIM_UVD_PROTO_H

#include <stdint.h>

#include "hw/shim/shim.h"

/* 3: ENGINE and UVD_FEAT_ENGINE.  A daemon without engines (-R, or a device that is
 * not emulated) still serves version 2 clients, which know only the doorbell ring. */
#define UVD_VERSION 3u
#define UVD_VERSION_RING_ONLY 2u
#define UVD_MAX_MSG (256u * 1024u)
#define UVD_MSG_LEN 192u           /* error text in a reply */
#define UVD_MAX_SEGS 4096u         /* IOVA segments in one PIN reply */
#define UVD_MAX_STORE 512u         /* bytes of one UAR store (a BlueFlame register) */
#define UVD_MAX_ADDRS 8u

enum uvd_op {
	UVD_OP_HELLO = 1,      /* uvd_hello -> uvd_hello_rep + the event socket */
	UVD_OP_CMD = 2,        /* uvd_cmd + input -> uvd_cmd_rep + output */
	UVD_OP_READ = 3,       /* uvd_read -> uvd_read_rep: a register of the init segment */
	UVD_OP_DMA_ALLOC = 4,  /* uvd_dma_alloc -> uvd_dma_rep + a memfd of the memory */
	UVD_OP_DMA_FREE = 5,   /* uvd_id */
	UVD_OP_PIN = 6,        /* uvd_pin -> uvd_pin_rep + segments */
	UVD_OP_UNPIN = 7,      /* uvd_id */
	UVD_OP_PORT_ADDRS = 8, /* -> uvd_addrs_rep */
	UVD_OP_NEIGH = 9,      /* uvd_neigh -> uvd_neigh_rep */
	UVD_OP_RING = 10,      /* -> uvd_ring_rep + a memfd holding struct uvd_ring (once) */
	UVD_OP_COUNTERS = 11,  /* -> uvd_counters_rep: the emulated device's PCIe counters */
	UVD_OP_PIN_SHARED = 12, /* uvd_pin_shared + the file's descriptor -> uvd_pin_rep + segments
				  * (only to a daemon whose HELLO reply offers UVD_FEAT_PIN_SHARED) */
	UVD_OP_ENGINE = 13,    /* -> uvd_engine_rep + its data-plane options + a UDP socket bound
				* for the client's engine (only to a daemon whose HELLO reply
				* offers UVD_FEAT_ENGINE) */
	/* 16 was the UAR store message of version 1 */
	UVD_OP_EVENT = 17,     /* event socket, daemon -> client: struct shim_remote_event */
	UVD_OP_KICK = 18,      /* event socket, client -> daemon: header only, "look at the ring" */
};

struct uvd_hdr {
	uint32_t len;          /* whole message, header included */
	uint16_t op;
	uint16_t flags;
	int32_t rc;            /* replies */
	uint32_t seq;          /* echoed in the reply */
};

struct uvd_hello {
	uint32_t version;
	uint32_t pad;
};
struct uvd_hello_rep {
	uint32_t version;
	uint32_t page_size;
	uint64_t bar_len;
	uint32_t comp_eqn;
	int32_t daemon_pid;
	uint32_t uar_page_bytes;
	/* 1 + N when the daemon's device is kext:N, whose guests may map UAR host pages
	 * granted to them (hw/shim/uvd_guest.h); 0 for any other device.  Was padding:
	 * a daemon that predates it sends 0, a client that predates it ignores it, so
	 * the version stays 2. */
	uint32_t kext_fn;
	struct shim_pci_info pci;
	/* UVD_FEAT_* the daemon serves.  Was tail padding (the struct's size is unchanged),
	 * so a daemon that predates it sends 0 and the client keeps to the old requests. */
	uint32_t features;
};
#define UVD_FEAT_PIN_SHARED 1u   /* PIN_SHARED: registration of memory in a shared file */
#define UVD_FEAT_SHARED_ONLY 2u  /* no registration by address (uvd -S, VFIO): the daemon never
				  * reaches into a client's address space */
#define UVD_FEAT_ENGINE 4u       /* engines (an emulated device, no uvd -R): the client runs the emulated NIC's data plane in an
				  * engine of its own (hw/emu/engine.c) on the socket ENGINE hands
				  * over; no doorbell ring (RING is refused) */

struct uvd_cmd {
	uint32_t inlen, outlen;
	/* inlen bytes of command input follow */
};
struct uvd_cmd_rep {
	uint8_t status;
	uint8_t pad[3];
	uint32_t syndrome;
	uint32_t outlen;
	/* ALLOC_UAR: 1 + the UAR index when, with this ALLOC_UAR, the daemon granted
	 * its host page to the client's process (tools/uvd/share.c, uar.c); else 0.
	 * Later UAR pages of the same host page come with 0: the client's mapping of
	 * the page covers them.  Was padding, as kext_fn. */
	uint32_t granted_uar;
	char msg[UVD_MSG_LEN];
	/* outlen bytes of command output follow */
};

struct uvd_read {
	uint64_t off;
	uint32_t size;
	uint32_t pad;
};
struct uvd_read_rep {
	uint64_t val;
};

struct uvd_dma_alloc {
	uint64_t len, align;
};
struct uvd_dma_rep {
	uint64_t id, iova, len;
};

struct uvd_id {
	uint64_t id;
};

struct uvd_pin {
	uint64_t va, len;
};
/* Registration of client memory that lies in a MAP_SHARED mapping of a file (a memfd,
 * a POSIX shared-memory object, a tmpfs file): the descriptor travels with the request
 * (SCM_RIGHTS) and the daemon maps the same pages itself, so the device reaches them
 * as the daemon's own memory (any shim) instead of through another process's address
 * space (the emulator only).  va is the client's address of byte 0, file_off its offset
 * in the file. */
struct uvd_pin_shared {
	uint64_t va, len, file_off;
};
struct uvd_pin_rep {
	uint64_t id;
	uint32_t nseg;
	uint32_t readonly;
	/* nseg struct shim_iova_seg follow */
};

/* ENGINE: the address (host order) the socket that comes with the reply is bound to,
 * on port 4791; the client's engine, and so its GID, has that address.  opts_len bytes
 * follow (no NUL): the options of the daemon's emu: URI that shape the data plane
 * (emu_dataplane_opts: wire faults, sched=, copy=, bf=, gso=, gro=, hold_us=), which
 * the engine runs with, as the daemon's own data plane would.  opts_len was padding: a
 * daemon that predates it sends 0 (its engines ran with the defaults), a client that
 * predates it ignores the tail, so the version stays 3. */
struct uvd_engine_rep {
	uint32_t ipv4;
	uint32_t opts_len;
};
#define UVD_ENGINE_OPTS_MAX 256u

struct uvd_addrs_rep {
	uint32_t n;
	uint32_t pad;
	uint8_t addrs[UVD_MAX_ADDRS][16];
};

struct uvd_neigh {
	uint8_t addr[16];
};
struct uvd_neigh_rep {
	uint8_t mac[6];
	uint8_t pad[2];
};

/* The emulated device's PCIe counters (hw/emu/emu.h struct emu_counters), for
 * uv_bench_pcie's view of a client's data path; -EOPNOTSUPP on hardware. */
struct uvd_counters_rep {
	uint64_t mmio_reads, mmio_writes;
	uint64_t uar_doorbells, send_doorbells, cq_doorbells, bf_writes;
	uint64_t dma_reads, dma_writes;
	/* version 3: RoCE packets the device took off its socket, and its objects alive
	 * (every kind); a version 2 reader takes the fields above */
	uint64_t rx_packets, objects_live;
};

/* ---- The doorbell ring: one per client, single producer (the client, under its own
 * lock) and single consumer (the daemon's thread for that client).
 *
 * A store into a UAR page is made in the client's own mapping of BAR0 (a private
 * page: nothing there reaches the device by itself).  The shim's BAR hook, called
 * after the store (hw/shim/mmio.h), copies the bytes the store left there into the
 * next record and publishes it; the daemon's thread takes the record, checks it (a
 * UAR page of this client, a size and kind a store can have) and performs it into the
 * device's BAR, then calls the device's BAR hook, as the store would have in one
 * process.  The bytes travel in the record, not in a shared UAR page: a BlueFlame
 * buffer is reused two posts later, so the page may already hold the next burst when
 * the daemon looks; a record is never rewritten before the daemon released it.
 *
 * Ordering (every arrow is one named helper below):
 *  1. record bytes, then prod (uvd_ring_publish, release): the daemon's acquire load of
 *     prod (uvd_ring_prod) makes every record below it whole -- never half a burst;
 *  2. the daemon copies a record out before it releases its slot (uvd_ring_release,
 *     release store of cons), and the client reuses a slot only after an acquire load
 *     of cons (uvd_ring_cons);
 *  3. sleep and wake, as virtio's notification suppression: the client stores prod and
 *     then loads awake; the daemon stores awake = 0 and then loads prod.  Each side's
 *     store must be visible before its load (uvd_ring_fence_wake_check, a full fence:
 *     store-then-load is the one order x86 does not keep), so at least one of them sees
 *     the other: either the client kicks, or the daemon finds the record and stays up.
 *
 * The daemon trusts nothing in the ring: it reads prod once per pass and refuses one
 * more than UVD_RING_SLOTS ahead (the client is disconnected), copies each record out
 * before it checks it, drops records it refuses, and never reads cons or awake back. */
#define UVD_RING_SLOTS 256u    /* a power of two */

struct uvd_ring_rec {
	uint64_t off;          /* BAR0 offset, inside one of the client's UAR pages */
	uint32_t size;         /* bytes, 1..UVD_MAX_STORE */
	uint32_t op;           /* enum shim_mmio_op: SHIM_MMIO_WRITE or SHIM_MMIO_WC_WRITE */
	uint8_t bytes[UVD_MAX_STORE];
};

struct uvd_ring {
	uint32_t prod;         /* written by the client: records published */
	uint8_t pad0[60];
	uint32_t cons;         /* written by the daemon: records taken */
	uint32_t awake;        /* written by the daemon: 1 while its thread works or spins */
	uint8_t pad1[56];
	struct uvd_ring_rec rec[UVD_RING_SLOTS];
};

struct uvd_ring_rep {
	uint64_t bytes;        /* size of the memfd: sizeof(struct uvd_ring), page-rounded */
	uint32_t slots;        /* UVD_RING_SLOTS */
	uint32_t pad;
};

static inline void uvd_ring_publish(uint32_t *prod, uint32_t v)
{
	__atomic_store_n(prod, v, __ATOMIC_RELEASE);
}

static inline uint32_t uvd_ring_prod(const uint32_t *prod)
{
	return __atomic_load_n(prod, __ATOMIC_ACQUIRE);
}

static inline void uvd_ring_release(uint32_t *cons, uint32_t v)
{
	__atomic_store_n(cons, v, __ATOMIC_RELEASE);
}

static inline uint32_t uvd_ring_cons(const uint32_t *cons)
{
	return __atomic_load_n(cons, __ATOMIC_ACQUIRE);
}

static inline void uvd_ring_fence_wake_check(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

_Static_assert(sizeof(struct uvd_hdr) == 16, "uvd_hdr layout");
/* features took tail padding: the reply's size must not change (older peers). */
_Static_assert(sizeof(struct uvd_hello_rep) == 80 && offsetof(struct uvd_hello_rep, features) == 76,
	       "uvd_hello_rep layout");
_Static_assert(sizeof(struct uvd_cmd_rep) == 16 + UVD_MSG_LEN, "uvd_cmd_rep layout");
_Static_assert(sizeof(struct uvd_ring_rec) == 16 + UVD_MAX_STORE, "uvd_ring_rec layout");
_Static_assert(sizeof(struct uvd_ring) == 128 + UVD_RING_SLOTS * sizeof(struct uvd_ring_rec), "uvd_ring layout");
_Static_assert((UVD_RING_SLOTS & (UVD_RING_SLOTS - 1)) == 0, "ring slots: a power of two");

/* Where a daemon listens when none is named: $UVERBS_RUN_DIR, default
 * /tmp/uverbs-<uid>, file "uvd.sock". */
#define UVD_SOCK_NAME "uvd.sock"

#endif
