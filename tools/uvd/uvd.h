/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvd, the device daemon: internal interface between its files.
 *
 * main.c    options, bring-up through libuverbs' device code, the listening socket
 * client.c  one thread per client: requests, UAR stores, death and cleanup
 * policy.c  which commands a client may send, and the objects each one names
 * uar.c     a client's UAR pages, in whole host pages (uar_group.c: the arithmetic)
 * share.c   on the kext: grants of UAR host pages, pins in a client's task
 * engine.c  engines (no -R): each client's own address and socket for the engine it runs
 */
#ifndef UVERBS_TOOLS_UVD_UVD_H
#define UVERBS_TOOLS_UVD_UVD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hw/shim/shim.h"
#include "hw/shim/uvd_proto.h"
#include "tools/uvd/uar_group.h"

struct uv_dev;

/* UAR pages per client: hw/mlx5 takes one, plus up to 256 for BlueFlame registers. */
#define UVD_MAX_UARS 260
/* A connection must send HELLO within UVD_HELLO_MS, and at most UVD_HELLO_PENDING wait
 * for theirs at once: they count against -c only once they said HELLO (client.c). */
#define UVD_HELLO_MS 2000
#define UVD_HELLO_PENDING 256u

enum uvd_obj_type { UVD_UAR = 1, UVD_PD, UVD_MKEY, UVD_CQ, UVD_QP, UVD_SRQ, UVD_QCNT, UVD_NTYPES };

struct uvd_obj {
	uint8_t type;
	uint32_t num;
};

/* Memory the device may reach for this client: queue memory (a memfd mapped here too)
 * or a pin of the client's own pages.  [iova, iova+len) as the shim gave it. */
struct uvd_mem {
	uint64_t id;
	bool is_dma;
	void *va;                 /* is_dma: our mapping of the memfd */
	size_t maplen;
	struct shim_pin pin;      /* is_dma: of our mapping; else of the client's pages */
	uint64_t emu_map;         /* pin through the emulator's remote map (emu_iommu_map_remote) */
	bool pinned_for;          /* pin of the client's task by the kext (share.c) */
	bool shared;              /* PIN_SHARED: our mapping (va, maplen) of the client's file, pinned */
	struct shim_iova_seg *segs;
	uint32_t nseg;
	uint64_t quota_bytes;     /* counted against the client's locked (is_dma, shared) or pinned bytes */
};

/* One QP of a client attached to one multicast group (ATTACH_TO_MCG). */
struct uvd_mcg_att {
	uint32_t qpn;
	uint8_t gid[16];
};

struct uvd_client {
	struct uvd_server *srv;
	struct uvd_client *next;
	int ctl, evs;             /* control socket, our end of the event socket */
	int exit_fd;              /* readable once the process that connected exits (-1: none) */
	pid_t pid;
	uid_t uid;
	unsigned id;
	bool hello_done;          /* under dev->lock: counted in nclients, not npending */
	pthread_t thread;
	/* under srv->dev->lock: the service thread routes events by these */
	struct uvd_obj *objs;
	size_t nobj, capobj;
	unsigned nobj_type[UVD_NTYPES];  /* of objs, by type: the quotas (struct uvd_limits) */
	uint64_t locked;          /* bytes pinned in this daemon for it: queue memory, PIN_SHARED */
	uint64_t pinned;          /* bytes of its own pages pinned or mapped for the device (PIN) */
	uint64_t last_req_ns;     /* when its last request came (idle connections time out) */
	struct uvd_mem *mem;
	size_t nmem, capmem;
	unsigned nshared;         /* of mem: PIN_SHARED mappings (a limit per client) */
	unsigned mem_pending;     /* under dev->lock: regions whose quota is taken, not yet in nmem (uvd_quota_take) */
	uint64_t next_id;
	bool dead;
	/* its UAR pages again, for the store path: written and read by the client's own
	 * thread only, so a doorbell takes no lock */
	uint32_t uars[UVD_MAX_UARS];
	unsigned nuar;
	/* under srv->dev->lock: the host pages of UAR pages it holds (uar.c) */
	struct uvd_uar_groups uar_set;
	bool uar_revoked;         /* dead: its grants of them revoked already (share.c) */
	/* its doorbell ring (hw/shim/uvd_proto.h), the client's own thread only */
	struct uvd_ring *ring;
	size_t ring_len;
	uint32_t ring_cons;       /* records taken: ours, never read back from the ring */
	uint64_t ring_dropped;    /* records refused (outside its UAR pages, bad size or kind) */
	uint32_t engine_ipv4;     /* engines: the address of its engine's socket (host order), or 0 */
	/* under srv->dev->lock: its QPs' multicast attachments (policy.c), detached before
	 * its QPs are destroyed when it dies */
	struct uvd_mcg_att *mcg;
	size_t nmcg, capmcg;
};

/* What one client may hold, and how many may connect: refused past these with
 * -EDQUOT (-EUSERS for connections) and a message naming the flag that raises the
 * limit.  Defaults and flags in main.c's usage and docs/tools.md ("uvd"). */
struct uvd_limits {
	unsigned conns;           /* -c: connections at once, all clients */
	unsigned conns_per_pid;   /* -C: connections at once from one process */
	unsigned objs;            /* -o: objects of each kind (PD, MKey, CQ, QP, SRQ) per client */
	unsigned qcnt;            /* -q: counter sets per client */
	unsigned mems;            /* memory regions (queue memory, pins) per client: 4 x -o */
	uint64_t locked;          /* -m: bytes pinned in the daemon per client (queue memory, PIN_SHARED) */
	uint64_t pinned;          /* -M: bytes of a client's own pages pinned per client (PIN) */
	unsigned idle_s;          /* -i: a connection that holds nothing and says nothing is closed */
};

struct uvd_server {
	struct uv_dev *dev;       /* the device, up, served by libuverbs' service thread */
	struct shim_dev *shim;
	struct shim_bar bar0;
	uint32_t comp_eqn;
	size_t uar_page_bytes;
	size_t host_page;         /* clients map UAR pages in host pages of this size (-P) */
	unsigned uar_per_group;   /* UAR pages per host page */
	uint32_t kext_fn;         /* 1 + N for kext:N, whose guests map granted pages; else 0 */
	struct uvd_uar_groups uar_pool;  /* under dev->lock: UAR pages no client holds (uar.c) */
	char path[108];
	int lfd;
	ino_t ino;                /* of the socket file we bound */
	unsigned next_client;
	struct uvd_client *clients;   /* under dev->lock */
	unsigned nclients;            /* under dev->lock: of clients past HELLO (-c) */
	unsigned npending;            /* under dev->lock: connections yet to send HELLO */
	struct uvd_limits lim;
	unsigned verbose;
	uint64_t spin_ns;         /* a client thread spins this long after a store (0: 1 CPU) */
	bool shared_only;         /* register only memory clients share (PIN_SHARED): -S, or a shim
				   * that reaches client memory neither by copy nor by pin (VFIO) */
	unsigned nshared;         /* PIN_SHARED and DMA_ALLOC mappings of all clients: taken under
				   * dev->lock, given back atomically (client.c uvd_map_reserve) */
	bool engines;             /* no -R on an emulated device: clients run the data plane in their own engines (engine.c) */
	/* A dying client's cleanup takes the device lock for a few objects at a time and
	 * lets requests waiting for it go first (client.c uvd_reap): */
	unsigned lock_waiting;    /* requests waiting for dev->lock now (uvd_lock), atomic */
	unsigned lock_turns;      /* holds of dev->lock by requests so far (uvd_lock), atomic */
	pthread_mutex_t reap_lock;    /* one cleanup at a time */
};

/* client.c */
void uvd_client_start(struct uvd_server *srv, int fd);
/* The device lock, for a client's request: counted while it waits, so that a dying
 * client's cleanup lets it in between two of its holds (uvd_reap). */
void uvd_lock(struct uvd_server *srv);
void uvd_unlock(struct uvd_server *srv);
/* Route an event to the client owning the object (called by the service thread with
 * the device lock held). */
void uvd_route_comp(void *ctx, uint32_t cqn);
struct mx5_event;
void uvd_route_event(void *ctx, const struct mx5_event *ev);
void uvd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* policy.c: room for one more entry in a growing array arr of n used entries of elem
 * bytes out of *cap (first: the capacity of an empty one, doubled after): the array,
 * perhaps moved, or NULL (out of memory, arr left as it was). */
void *uvd_grow(void *arr, size_t n, size_t *cap, size_t elem, size_t first);
/* client.c: a new entry of c->mem (not yet counted in nmem). */
struct uvd_mem *uvd_mem_new(struct uvd_client *c);

/* share.c: on a shim that shares its function by consent (the kext): grant or revoke
 * the host page holding UAR page uar to the client's process (0, or -errno: no such
 * shim, or refused), and wire a client's memory in its own task. */
int uvd_share_uar(struct uvd_client *c, uint32_t uar, bool grant);
/* The HELLO reply's kext_fn for the daemon's device uri: 1 + N for "kext:N" ("kext:"
 * is kext:0) on a shim that grants UAR pages, else 0. */
uint32_t uvd_share_kext_fn(const struct shim_dev *shim, const char *uri);
int uvd_pin_for(struct uvd_client *c, const struct uvd_pin *q, struct uvd_mem **out, char *msg, size_t msglen);

/* engine.c: bind the socket of a client's engine on an address of its own (engines;
 * device lock held); and whether the client's SET_ROCE_ADDRESS goes to its engine
 * alone (any entry: its engine sends from its own address whatever the table says). */
int uvd_engine_new(struct uvd_client *c, struct uvd_engine_rep *r, char opts[UVD_ENGINE_OPTS_MAX], int *fd,
		   char *msg, size_t msglen);
bool uvd_engine_gid_own(const struct uvd_client *c, size_t inlen);

/* uar.c: a client's ALLOC_UAR (an index of a host page only it holds; *granted: this
 * call granted that host page to its process) and DEALLOC_UAR
 * (0, -ENOENT, or the firmware's refusal: the page stays the client's), and the release of its UAR pages when it goes (device lock held). */
int uvd_uar_alloc(struct uvd_client *c, uint32_t *uar, bool *granted, char *msg, size_t msglen);
int uvd_uar_dealloc(struct uvd_client *c, uint32_t uar, char *msg, size_t msglen);
/* One of a dead client's host pages of UAR pages back to the firmware (device lock
 * held): the firmware commands it sent (0 when it has none left). */
unsigned uvd_uar_release_one(struct uvd_client *c);

/* policy.c: every command a client sends passes here first (device lock held).
 * Returns 0 to run it, or -EPERM/-EINVAL with the reason in msg.  *gid_noop is set
 * for a SET_ROCE_ADDRESS that equals the entry the daemon programmed: answered with
 * success, nothing sent. */
int uvd_policy_check(struct uvd_client *c, const uint8_t *in, size_t inlen, char *msg, size_t msglen,
		     bool *gid_noop);
/* After the device ran it: record what it created, forget what it destroyed. */
void uvd_policy_done(struct uvd_client *c, const uint8_t *in, size_t inlen, const uint8_t *out,
		     size_t outlen);
bool uvd_owns(const struct uvd_client *c, enum uvd_obj_type t, uint32_t num);
int uvd_obj_add(struct uvd_client *c, enum uvd_obj_type t, uint32_t num);
void uvd_obj_del(struct uvd_client *c, enum uvd_obj_type t, uint32_t num);
/* client.c: destroy everything a dead client (c->dead) still owns, QPs first; called
 * without the device lock, which it takes for at most UVD_REAP_BATCH firmware commands
 * at a time. */
#define UVD_REAP_BATCH 8u
void uvd_policy_destroy_all(struct uvd_client *c);

#endif
