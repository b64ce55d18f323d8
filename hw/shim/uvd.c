/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The device daemon's client shim: "uvd:<socket path>" ("uvd:" alone: the daemon in
 * $UVERBS_RUN_DIR, default /tmp/uverbs-<uid>).  tools/uvd owns the function's control
 * path; this process keeps its own data path (docs/architecture.md, "Several
 * processes: uvd"):
 *  - commands go to the daemon one by one (shim_ops.cmd), which checks each against
 *    the objects this process owns;
 *  - queue memory (dma_alloc) is a memfd the daemon created and pinned, mapped here
 *    too, so WQEs, CQEs and doorbell records are shared memory, written and read
 *    with no hop;
 *  - memory registration (dma_pin) asks the daemon to pin this process's pages
 *    (process_vm_readv/writev on the emulator, allowed by plat_allow_peer_access);
 *  - BAR0 is a private proxy: each store into it (doorbell, BlueFlame burst, CQ arm)
 *    is copied by the BAR hook into this process's doorbell ring, memory shared with
 *    the daemon alone (uvd_proto.h struct uvd_ring, its ordering rules); no system call,
 *    unless the daemon's thread announced it sleeps: then one KICK on the event socket.
 *    The daemon checks the page is ours and performs the store.  When the daemon's
 *    device is the kext and it granted us a UAR page's host page, we map that page as
 *    the kext's guest and the hook copies the store there instead: no daemon at all
 *    (uvd_guest.h; any failure keeps the ring, logged once).  Reads of the
 *    initialization segment (health, firmware revision) ask the daemon, and read
 *    all-ones once the daemon is gone, as a removed device does;
 *  - events the daemon routes here are queued for next_event and signal the one
 *    interrupt fd every vector shares;
 *  - with a daemon of engines (uvd on an emulated device without -R, UVD_FEAT_ENGINE) the emulated NIC's data plane
 *    runs here, in an engine (hw/emu/engine.c) on the socket the daemon bound for us:
 *    every command the daemon ran is applied to it, our memory is mapped into it at
 *    the daemon's IOVAs, stores go to its BAR hook and CQ polls take its arrivals,
 *    as in one process.  Its events join the daemon's in next_event.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "hw/platform/local_msg.h"
#include "hw/platform/log_level.h"
#include "hw/platform/notify.h"
#include "hw/platform/peer.h"
#include "hw/platform/run_dir.h"
#include "hw/platform/thread.h"
#include "hw/platform/vm.h"
#include "hw/shim/shim.h"
#include "hw/shim/backend.h"
#include "hw/shim/kext_guest.h"
#include "hw/shim/uvd_engine.h"
#include "hw/shim/uvd_guest.h"
#include "hw/shim/uvd_proto.h"

#define UVD_EVQ 1024u
#define UVD_GUEST_MAX 16u     /* host pages of UAR pages mapped as the kext's guest */

struct uvd_rec {
	uint64_t id;
	void *va;                    /* dma_alloc: our mapping of the daemon's memory, */
	size_t maplen;               /* of this many bytes (0 for a pin) */
	struct shim_iova_seg *segs;  /* dma_pin */
	uint64_t eng_map;            /* the engine's mapping of this memory (0: none) */
};

struct uvd_shim {
	struct shim_dev base;
	int ctl, evs;                /* control and event sockets */
	pthread_mutex_t ctl_lock;    /* one request at a time on the control socket */
	uint32_t seq;
	uint8_t *buf;                /* UVD_MAX_MSG bytes for replies (under ctl_lock) */
	uint8_t *bar;
	size_t bar_len;
	struct shim_mmio_hook hook;
	struct emu_dev *eng;         /* engines (UVD_FEAT_ENGINE): our engine of the NIC's data plane, or NULL */
	struct uvd_engine_sink sink; /* where its events go: evq */
	struct uvd_ring *ring;       /* shared with the daemon (RING); NULL with an engine */
	size_t ring_len;
	struct plat_spinlock ring_lock; /* one producer at a time: any thread may ring */
	uint32_t prod;               /* under ring_lock: our copy of ring->prod */
	uint32_t cons_seen;          /* under ring_lock: ring->cons as last loaded */
	uint32_t comp_eqn;
	uint32_t kext_fn;            /* HELLO: 1 + the daemon's kext function, or 0 */
	uint32_t features;           /* HELLO: UVD_FEAT_* the daemon serves */
	uint32_t uar_page_bytes;
	/* UAR host pages we map ourselves (uvd_guest.h): entries are only added (under
	 * ctl_lock), published by nguest (release), read by the hook (acquire) */
	struct uvd_guest_page guest[UVD_GUEST_MAX];
	unsigned nguest;
	bool guest_logged;           /* why stores stay on the ring: said once */
	pid_t daemon;
	int irq;                     /* notification every irq_fd returns */
	pthread_t reader;
	bool reader_running;
	volatile int gone;           /* the daemon closed the connection */
	pthread_mutex_t evq_lock;
	struct shim_remote_event evq[UVD_EVQ];
	unsigned evq_head, evq_n;
};

extern const struct shim_ops shim_uvd_ops;

static struct uvd_shim *to_uvd(struct shim_dev *d)
{
	return (struct uvd_shim *)d;
}

/* shim_ops.emulated: our engine, when we run one */
static void *uvd_emulated(struct shim_dev *dev)
{
	return to_uvd(dev)->eng;
}

static void uvd_mark_gone(struct uvd_shim *s)
{
	if (!s->gone) {
		s->gone = 1;
		/* our engine stops too: no packet of ours moves, no DMA into our memory,
		 * as when the device is pulled */
		if (s->eng)
			uvd_engine_remove(s->eng);
		if (s->irq >= 0)
			plat_notify_signal(s->irq);
	}
}

/* How long a request waits for the daemon's reply: $UVERBS_UVD_TIMEOUT seconds, default
 * 120 (a registration of a few hundred GiB takes seconds on the emulated device).  A
 * daemon that stops answering -- stopped, stuck, or hostile -- then costs an error, never
 * a hang; the connection is given up (a late reply would answer the wrong request). */
static int uvd_reply_timeout_ms(void)
{
	const char *e = getenv("UVERBS_UVD_TIMEOUT");
	char *end;
	long v = e && *e ? strtol(e, &end, 10) : 0;
	if (!e || !*e || *end || v <= 0 || v > 86400)
		v = 120;
	return (int)v * 1000;
}

/* connect() to the daemon, bounded by the same timeout as a reply: a blocking connect
 * to a listener that does not accept and whose backlog is full waits for ever.  On
 * Linux a non-blocking AF_UNIX connect then fails with EAGAIN at once (net/unix/af_unix.c
 * unix_wait_for_peer is not reached), so it is retried every 10 ms; where it returns
 * EINPROGRESS the socket's writability says when it is done (connect(2)).  The socket
 * is blocking again on return.  0, -ETIMEDOUT, or connect's error. */
static int uvd_connect(int fd, const struct sockaddr_un *a, int tmo_ms)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	int rc = -ETIMEDOUT;
	for (int waited = 0; waited < tmo_ms; waited += 10) {
		if (connect(fd, (const struct sockaddr *)a, sizeof(*a)) == 0) {
			rc = 0;
			break;
		}
		if (errno == EINPROGRESS || errno == EALREADY) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			int pr = poll(&p, 1, tmo_ms - waited);
			int err = 0;
			socklen_t len = sizeof(err);
			if (pr == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0)
				rc = -err;
			break;
		}
		if (errno != EAGAIN && errno != EINTR) {
			rc = -errno;
			break;
		}
		poll(NULL, 0, 10);
	}
	if (fcntl(fd, F_SETFL, fl) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

/* One request and its reply.  The reply lands in s->buf; *fd receives a passed fd. */
__attribute__((format(printf, 1, 2))) static void uvd_info(const char *fmt, ...);

static int uvd_rpc_locked_fd(struct uvd_shim *s, uint16_t op, const void *req, size_t reqlen,
			     const void *tail, size_t taillen, int pass_fd, size_t *replen, int *fd)
{
	if (s->gone)
		return -ENODEV;
	struct uvd_hdr h = { .len = (uint32_t)(sizeof(h) + reqlen + taillen), .op = op, .seq = ++s->seq };
	if (h.len > UVD_MAX_MSG)
		return -E2BIG;
	struct iovec iov[3] = { { &h, sizeof(h) }, { (void *)req, reqlen }, { (void *)tail, taillen } };
	if (plat_lmsg_send(s->ctl, iov, 3, pass_fd, 0) < 0) {
		uvd_mark_gone(s);
		return -ENODEV;
	}
	int got_fd = -1;
	struct pollfd p = { .fd = s->ctl, .events = POLLIN };
	int tmo = uvd_reply_timeout_ms(), pr;
	while ((pr = poll(&p, 1, tmo)) < 0 && errno == EINTR)
		;
	if (pr == 0) {
		snprintf(s->base.err, sizeof(s->base.err),
			 "uvd: the daemon did not answer request %u within %d s (UVERBS_UVD_TIMEOUT): device given up",
			 (unsigned)op, tmo / 1000);
		uvd_mark_gone(s);
		return -ETIMEDOUT;
	}
	ssize_t n = plat_lmsg_recv(s->ctl, s->buf, UVD_MAX_MSG, &got_fd, 0);
	if (n <= 0) {
		uvd_mark_gone(s);
		return -ENODEV;
	}
	struct uvd_hdr *rh = (struct uvd_hdr *)s->buf;
	if ((size_t)n > UVD_MAX_MSG || (size_t)n < sizeof(*rh) || rh->len != (uint32_t)n ||
	    rh->op != op || rh->seq != h.seq) {
		if (got_fd >= 0)
			close(got_fd);
		snprintf(s->base.err, sizeof(s->base.err), "uvd: malformed reply from the daemon");
		uvd_mark_gone(s);
		return -EPROTO;
	}
	if (fd)
		*fd = got_fd;
	else if (got_fd >= 0)
		close(got_fd);
	*replen = (size_t)n - sizeof(*rh);
	return rh->rc;
}

static int uvd_rpc_locked(struct uvd_shim *s, uint16_t op, const void *req, size_t reqlen,
			  const void *tail, size_t taillen, size_t *replen, int *fd)
{
	return uvd_rpc_locked_fd(s, op, req, reqlen, tail, taillen, -1, replen, fd);
}

/* A request and its fixed reply; with taillen, also up to tailmax of the bytes that
 * follow the reply into tail (*taillen: how many).  Bytes past what is wanted are a
 * later daemon's, and ignored. */
static int uvd_rpc_tail(struct uvd_shim *s, uint16_t op, const void *req, size_t reqlen, void *rep,
			size_t replen_want, void *tail, size_t tailmax, size_t *taillen, int *fd)
{
	size_t got = 0;
	pthread_mutex_lock(&s->ctl_lock);
	int rc = uvd_rpc_locked(s, op, req, reqlen, NULL, 0, &got, fd);
	if (rc == 0 && rep) {
		const uint8_t *b = s->buf + sizeof(struct uvd_hdr);
		if (got < replen_want) {
			rc = -EPROTO;
		} else {
			memcpy(rep, b, replen_want);
			if (taillen) {
				*taillen = got - replen_want < tailmax ? got - replen_want : tailmax;
				memcpy(tail, b + replen_want, *taillen);
			}
		}
	}
	pthread_mutex_unlock(&s->ctl_lock);
	return rc;
}

static int uvd_rpc(struct uvd_shim *s, uint16_t op, const void *req, size_t reqlen, void *rep,
		   size_t replen_want, int *fd)
{
	return uvd_rpc_tail(s, op, req, reqlen, rep, replen_want, NULL, 0, NULL, fd);
}

static void uvd_evq_put(struct uvd_shim *s, const struct shim_remote_event *ev);

static void *uvd_reader(void *arg)
{
	struct uvd_shim *s = arg;
	uint8_t b[sizeof(struct uvd_hdr) + sizeof(struct shim_remote_event) + 64];
	for (;;) {
		ssize_t n = plat_lmsg_recv(s->evs, b, sizeof(b), NULL, 0);
		if (n <= 0)
			break;
		struct uvd_hdr h;
		if ((size_t)n > sizeof(b) || (size_t)n < sizeof(h) + sizeof(struct shim_remote_event))
			continue;
		memcpy(&h, b, sizeof(h));
		if (h.op != UVD_OP_EVENT || h.len != (uint32_t)n)
			continue;
		struct shim_remote_event ev;
		memcpy(&ev, b + sizeof(h), sizeof(ev));
		uvd_evq_put(s, &ev);
	}
	uvd_mark_gone(s);
	return NULL;
}

/* "Look at the ring": only when the daemon's thread said it sleeps.  A full socket
 * buffer means kicks are already waiting for it. */
static void uvd_kick(struct uvd_shim *s)
{
	struct uvd_hdr h = { .len = sizeof(h), .op = UVD_OP_KICK };
	struct iovec iov = { &h, sizeof(h) };
	int rc = plat_lmsg_send(s->evs, &iov, 1, -1, PLAT_LMSG_DONTWAIT);

	if (rc < 0 && rc != -EAGAIN && rc != -EINTR)
		uvd_mark_gone(s);
}

/* One store the driver just made into our BAR proxy, into the doorbell ring
 * (uvd_proto.h gives the ordering; the daemon performs it). */
static void uvd_ring_store(struct uvd_shim *s, enum shim_mmio_op op, uint64_t off, unsigned size)
{
	struct uvd_ring *r = s->ring;
	plat_spin_lock(&s->ring_lock);
	uint32_t p = s->prod;
	while (p - s->cons_seen >= UVD_RING_SLOTS) {
		/* full: the daemon is behind (or asleep with a kick lost); wait for a slot */
		s->cons_seen = uvd_ring_cons(&r->cons);
		if (p - s->cons_seen < UVD_RING_SLOTS)
			break;
		if (s->gone) {
			plat_spin_unlock(&s->ring_lock);
			return;
		}
		uvd_kick(s);
		sched_yield();
	}
	struct uvd_ring_rec *e = &r->rec[p & (UVD_RING_SLOTS - 1)];
	e->off = off;
	e->size = size;
	e->op = (uint32_t)op;
	memcpy(e->bytes, (const void *)(s->bar + off), size);
	s->prod = p + 1;
	uvd_ring_publish(&r->prod, p + 1);
	uvd_ring_fence_wake_check();
	int asleep = !__atomic_load_n(&r->awake, __ATOMIC_RELAXED);
	plat_spin_unlock(&s->ring_lock);
	if (asleep)
		uvd_kick(s);
}

/* BAR hook: reads ask the daemon (init segment only), stores go to the ring. */
static void uvd_hook(void *ctx, enum shim_mmio_op op, uint64_t off, unsigned size)
{
	struct uvd_shim *s = ctx;
	if (off + size > s->bar_len || size > UVD_MAX_STORE || !size)
		return;
	if (op == SHIM_MMIO_READ) {
		/* the answer lands in our BAR0; with an engine that is the engine's BAR, whose
		 * initialization segment nothing in the engine uses (it has no command queue) */
		struct uvd_read q = { .off = off, .size = size };
		struct uvd_read_rep r;
		if (size > 8 || uvd_rpc(s, UVD_OP_READ, &q, sizeof(q), &r, sizeof(r), NULL))
			memset(s->bar + off, 0xff, size);   /* gone, or refused: all-ones */
		else
			memcpy(s->bar + off, &r.val, size);
		return;
	}
	if (s->gone)
		return;
	if (s->eng) {
		/* the store is in the engine's BAR already (it is our BAR0) */
		uvd_engine_store(s->eng, op, off, size);
		return;
	}
	unsigned ng = __atomic_load_n(&s->nguest, __ATOMIC_ACQUIRE);
	if (__builtin_expect(ng != 0, 0)) {
		const struct uvd_guest_page *g = uvd_guest_find(s->guest, ng, off, size);
		if (g) {
			/* one window for the page, write-combining when BlueFlame is on
			 * (shim_kext_guest_open): a plain doorbell is flushed out too */
			uvd_guest_store(g, off, s->bar + off, size, 1);
			uvd_guest_stored(g, op, off, size);
			return;
		}
	}
	if (!s->ring)
		return;
	uvd_ring_store(s, op, off, size);
}

/* A CQ poll found nothing: the engine takes arrivals off its socket in this thread. */
static void uvd_poll_assist(void *ctx)
{
	struct uvd_shim *s = ctx;

	if (!s->gone)
		uvd_engine_poll(s->eng);
}

/* As the emu: shim's: the engine is this process's emulated NIC (hw/shim/emu.c). */
static void uvd_poll_found(void *ctx, uint32_t qpn)
{
	struct uvd_shim *s = ctx;

	if (!s->gone)
		uvd_engine_found(s->eng, qpn);
}

/* An event of the engine (under its lock): queued beside the daemon's. */
static void uvd_evq_put(struct uvd_shim *s, const struct shim_remote_event *ev)
{
	pthread_mutex_lock(&s->evq_lock);
	if (s->evq_n < UVD_EVQ) {
		s->evq[(s->evq_head + s->evq_n) % UVD_EVQ] = *ev;
		s->evq_n++;
	}
	pthread_mutex_unlock(&s->evq_lock);
	plat_notify_signal(s->irq);
}

static void uvd_engine_event(void *arg, const struct shim_remote_event *ev)
{
	uvd_evq_put(arg, ev);
}

/* Engines: the socket the daemon bound for us, and an engine on it. */
static int uvd_engine_open(struct uvd_shim *s)
{
	struct uvd_engine_rep r;
	char opts[UVD_ENGINE_OPTS_MAX + 1] = "";   /* the options, then a NUL */
	size_t olen = 0;
	int fd = -1;
	int rc = uvd_rpc_tail(s, UVD_OP_ENGINE, NULL, 0, &r, sizeof(r), opts, UVD_ENGINE_OPTS_MAX, &olen, &fd);

	if (rc == 0 && r.opts_len > olen) {
		if (fd >= 0)
			close(fd);
		snprintf(s->base.err, sizeof(s->base.err), "uvd: malformed ENGINE reply (options %u bytes, %zu came)",
			 r.opts_len, olen);
		return -EPROTO;
	}
	if (rc || fd < 0) {
		if (fd >= 0)
			close(fd);
		snprintf(s->base.err, sizeof(s->base.err), "uvd: no engine socket from the daemon: %s",
			 strerror(rc ? -rc : EPROTO));
		return rc ? rc : -EPROTO;
	}
	opts[r.opts_len] = '\0';   /* the tail carries none */
	s->sink = (struct uvd_engine_sink){ uvd_engine_event, s };
	rc = uvd_engine_create(r.ipv4, fd, opts, s->base.page_size, &s->sink, &s->eng, s->base.err,
			       sizeof(s->base.err));
	if (rc)
		return rc;
	size_t len;
	s->bar = uvd_engine_bar(s->eng, &len);
	if (s->bar_len > len)
		s->bar_len = len;
	s->hook.poll_assist = uvd_poll_assist;
	s->hook.poll_found = uvd_poll_found;
	uvd_info("engine at %u.%u.%u.%u: this process runs the emulated NIC's data plane%s%s", r.ipv4 >> 24,
		 (r.ipv4 >> 16) & 0xff, (r.ipv4 >> 8) & 0xff, r.ipv4 & 0xff, opts[0] ? ", with " : "", opts);
	return 0;
}

/* ---- UAR pages we map ourselves, as the kext's guest (uvd_guest.h) */

__attribute__((format(printf, 1, 2))) static void uvd_info(const char *fmt, ...)
{
	if (plat_log_level_env() < PLAT_LOG_INFO)
		return;
	va_list ap;
	va_start(ap, fmt);
	plat_log_vprint("uvd", PLAT_LOG_INFO, fmt, ap);
	va_end(ap);
}

/* The daemon granted us, with an ALLOC_UAR, the host page of UAR page granted_uar - 1:
 * map it if we can (the page then serves the other UAR pages the daemon gives us in
 * it too), else say once why stores stay on the ring. */
static void uvd_guest_add(struct uvd_shim *s, uint32_t granted_uar)
{
	uint32_t uar = granted_uar - 1u;
	struct uvd_guest_page g;
	char why[256];
	pthread_mutex_lock(&s->ctl_lock);
	unsigned n = s->nguest;
	int mapped = 0;
	if (n >= UVD_GUEST_MAX)
		snprintf(why, sizeof(why), "UAR page 0x%x: %u host pages mapped already", uar, n);
	else
		mapped = uvd_guest_choose(s->kext_fn, granted_uar, uar, s->uar_page_bytes, &uvd_guest_kext_opener, &g, why,
					  sizeof(why));
	if (mapped) {
		s->guest[n] = g;
		__atomic_store_n(&s->nguest, n + 1, __ATOMIC_RELEASE);
	}
	bool say = !mapped && !s->guest_logged;
	if (say)
		s->guest_logged = true;
	pthread_mutex_unlock(&s->ctl_lock);
	if (say)
		uvd_info("%s; stores go through the daemon", why);
}

static void uvd_close(struct shim_dev *dev)
{
	struct uvd_shim *s = to_uvd(dev);
	if (!s)
		return;
	if (s->ctl >= 0)
		shutdown(s->ctl, SHUT_RDWR);
	if (s->evs >= 0)
		shutdown(s->evs, SHUT_RDWR);
	if (s->reader_running)
		pthread_join(s->reader, NULL);
	if (s->ctl >= 0)
		close(s->ctl);
	if (s->evs >= 0)
		close(s->evs);
	if (s->eng)
		uvd_engine_destroy(s->eng);   /* its BAR is our BAR0 */
	else if (s->bar)
		munmap(s->bar, s->bar_len);
	if (s->ring)
		munmap(s->ring, s->ring_len);
	for (unsigned i = 0; i < s->nguest; i++)
		shim_kext_guest_close(s->guest[i].handle);
	plat_notify_close(s->irq);
	free(s->buf);
	pthread_mutex_destroy(&s->ctl_lock);
	pthread_mutex_destroy(&s->evq_lock);
	free(s);
}

/* The daemon's socket in the run dir, which must be ours and 0700 (hw/platform/run_dir.h):
 * a socket another user put there would see all our requests.  0, or -errno with the
 * reason in why. */
static int uvd_default_path(char *out, size_t len, char *why, size_t whylen)
{
	char dir[160];
	int rc = plat_run_dir(dir, sizeof(dir));
	if (rc == -ENOENT)   /* UVERBS_RUN_DIR=off: no counters, the default place for the daemon */
		rc = snprintf(dir, sizeof(dir), "/tmp/uverbs-%u", (unsigned)getuid()) < 0 ? -EINVAL : 0;
	if (rc) {
		snprintf(why, whylen, "uvd: run directory path too long");
		return rc;
	}
	rc = plat_run_dir_check(dir, false, why, whylen);
	if (rc)
		return rc;
	int n = snprintf(out, len, "%s/%s", dir, UVD_SOCK_NAME);
	if (n < 0 || (size_t)n >= len) {
		snprintf(why, whylen, "uvd: socket path too long");
		return -ENAMETOOLONG;
	}
	return 0;
}

/* The daemon at the other end of ctl, by the kernel's word (SO_PEERCRED, getpeereid:
 * hw/platform/peer.h), never by what it says: it must run as us or as root, and be the
 * process whose pid its HELLO gives.  Its pid is what PR_SET_PTRACER is given. */
static int uvd_check_daemon(struct uvd_shim *s, const char *path, pid_t said)
{
	pid_t pid = 0;
	uid_t uid = 0;
	int rc = plat_peer_cred(s->ctl, &pid, &uid);
	if (rc) {
		snprintf(s->base.err, sizeof(s->base.err), "uvd: cannot tell who serves %s: %s", path, strerror(-rc));
		return rc;
	}
	if (uid != geteuid() && uid != 0) {
		snprintf(s->base.err, sizeof(s->base.err),
			 "uvd: %s is served by uid %u, neither us (uid %u) nor root: refused", path, (unsigned)uid,
			 (unsigned)geteuid());
		return -EPERM;
	}
	if (pid <= 0 || pid != said) {
		snprintf(s->base.err, sizeof(s->base.err), "uvd: the daemon at %s says it is pid %d, the kernel says %d: "
			 "refused", path, (int)said, (int)pid);
		return -EPERM;
	}
	return 0;
}

static int uvd_open(const char *args, struct shim_dev **out)
{
	struct uvd_shim *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->base.ops = &shim_uvd_ops;
	s->ctl = s->evs = s->irq = -1;
	pthread_mutex_init(&s->ctl_lock, NULL);
	pthread_mutex_init(&s->evq_lock, NULL);
	*out = &s->base;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int rc = 0;
	if (!args || !*args) {
		rc = uvd_default_path(a.sun_path, sizeof(a.sun_path), s->base.err, sizeof(s->base.err));
		if (rc)
			return rc;
	} else if (strlen(args) >= sizeof(a.sun_path)) {
		snprintf(s->base.err, sizeof(s->base.err), "uvd: socket path of %zu bytes, at most %zu",
			 strlen(args), sizeof(a.sun_path) - 1);
		return -ENAMETOOLONG;
	} else {
		memcpy(a.sun_path, args, strlen(args));
	}
	s->buf = malloc(UVD_MAX_MSG);
	s->irq = plat_notify_open(0, PLAT_NOTIFY_NONBLOCK);
	if (!s->buf || s->irq < 0)
		return s->irq < 0 ? s->irq : -ENOMEM;
	s->ctl = plat_lmsg_socket();
	rc = s->ctl < 0 ? s->ctl : uvd_connect(s->ctl, &a, uvd_reply_timeout_ms());
	if (rc == -ETIMEDOUT) {
		snprintf(s->base.err, sizeof(s->base.err),
			 "uvd: the daemon at %s did not accept our connection within %d s (UVERBS_UVD_TIMEOUT)",
			 a.sun_path, uvd_reply_timeout_ms() / 1000);
		return rc;
	}
	if (rc) {
		snprintf(s->base.err, sizeof(s->base.err),
			 "uvd: no device daemon at %s (%s): start tools/uvd, or name its socket in uvd:<path>",
			 a.sun_path, strerror(-rc));
		return rc;
	}
	struct uvd_hello hq = { .version = UVD_VERSION };
	struct uvd_hello_rep hr;
	rc = uvd_rpc(s, UVD_OP_HELLO, &hq, sizeof(hq), &hr, sizeof(hr), &s->evs);
	if (rc || s->evs < 0 || hr.version != UVD_VERSION || hr.bar_len < 0x1000 ||
	    hr.bar_len > (1ull << 34) || !hr.page_size) {
		snprintf(s->base.err, sizeof(s->base.err), "uvd: the daemon at %s refused us: %s",
			 a.sun_path, rc ? strerror(-rc) : "protocol version or geometry");
		return rc ? rc : -EPROTO;
	}
	s->base.page_size = hr.page_size;
	s->base.pci = hr.pci;
	s->comp_eqn = hr.comp_eqn;
	s->kext_fn = hr.kext_fn;
	s->features = hr.features;
	s->uar_page_bytes = hr.uar_page_bytes ? hr.uar_page_bytes : hr.page_size;
	rc = uvd_check_daemon(s, a.sun_path, (pid_t)hr.daemon_pid);
	if (rc)
		return rc;
	s->daemon = hr.daemon_pid;
	s->bar_len = hr.bar_len;
	/* The emulated device lives in the daemon and reaches memory we register by
	 * address with process_vm_readv/writev: let it, unless it takes only shared files
	 * or our own engine reaches our memory. */
	rc = (s->features & (UVD_FEAT_SHARED_ONLY | UVD_FEAT_ENGINE)) ? 0 : plat_allow_peer_access(s->daemon);
	if (rc) {
		snprintf(s->base.err, sizeof(s->base.err), "uvd: cannot let the daemon (pid %d) reach our memory: %s",
			 (int)s->daemon, strerror(-rc));
		return rc;
	}
	s->hook.access = uvd_hook;
	s->hook.ctx = s;
	if (s->features & UVD_FEAT_ENGINE) {
		rc = uvd_engine_open(s);
		if (rc)
			return rc;
		goto reader;
	}
	s->bar = mmap(NULL, s->bar_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s->bar == MAP_FAILED) {
		s->bar = NULL;
		return -ENOMEM;
	}
	/* The doorbell ring: a memfd the daemon created for us alone. */
	struct uvd_ring_rep rr;
	int rfd = -1;
	rc = uvd_rpc(s, UVD_OP_RING, NULL, 0, &rr, sizeof(rr), &rfd);
	if (rc || rfd < 0 || rr.slots != UVD_RING_SLOTS || rr.bytes < sizeof(struct uvd_ring) ||
	    rr.bytes > 2 * sizeof(struct uvd_ring) + hr.page_size) {
		if (rfd >= 0)
			close(rfd);
		snprintf(s->base.err, sizeof(s->base.err), "uvd: no doorbell ring from the daemon: %s",
			 rc ? strerror(-rc) : "bad geometry");
		return rc ? rc : -EPROTO;
	}
	void *ring = mmap(NULL, rr.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
	close(rfd);
	if (ring == MAP_FAILED)
		return -ENOMEM;
	s->ring = ring;
	s->ring_len = rr.bytes;
	s->prod = s->cons_seen = __atomic_load_n(&s->ring->prod, __ATOMIC_RELAXED);
	rc = plat_spin_init(&s->ring_lock, 0);
	if (rc)
		return rc;
reader:
	rc = -plat_thread_create_quiet(&s->reader, uvd_reader, s);   /* the process's signals are not ours */
	if (rc)
		return rc;
	s->reader_running = true;
	return 0;
}

static int uvd_bar(struct shim_dev *dev, unsigned index, struct shim_bar *out)
{
	struct uvd_shim *s = to_uvd(dev);
	if (!out)
		return -EINVAL;
	if (index != 0)
		return -ENOENT;
	out->base = s->bar;
	out->len = s->bar_len;
	out->wc_base = s->bar;
	out->hook = &s->hook;
	return 0;
}

static void uvd_release(struct shim_dev *dev, void *priv);

static int uvd_dma_alloc(struct shim_dev *dev, size_t len, size_t align, struct shim_dma *out)
{
	struct uvd_shim *s = to_uvd(dev);
	if (!out || !len || (align & (align - 1)))
		return -EINVAL;
	struct uvd_dma_alloc q = { .len = len, .align = align };
	struct uvd_dma_rep r;
	int fd = -1;
	int rc = uvd_rpc(s, UVD_OP_DMA_ALLOC, &q, sizeof(q), &r, sizeof(r), &fd);
	if (rc || fd < 0) {
		if (fd >= 0)
			close(fd);
		snprintf(dev->err, sizeof(dev->err), "uvd: DMA memory of %zu bytes: %s", len, strerror(rc ? -rc : EPROTO));
		return rc ? rc : -EPROTO;
	}
	struct uvd_rec *rec = calloc(1, sizeof(*rec));
	size_t maplen = (len + dev->page_size - 1) / dev->page_size * dev->page_size;
	void *va = rec ? mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
	close(fd);
	if (va == MAP_FAILED) {
		struct uvd_id id = { r.id };
		uvd_rpc(s, UVD_OP_DMA_FREE, &id, sizeof(id), NULL, 0, NULL);
		free(rec);
		return -ENOMEM;
	}
	*rec = (struct uvd_rec){ .id = r.id, .va = va, .maplen = maplen };
	if (s->eng) {
		/* queues, doorbell records: the engine reaches them at the daemon's IOVA */
		struct shim_iova_seg seg = { r.iova, len };
		rc = uvd_engine_map(s->eng, va, len, false, &seg, 1, &rec->eng_map);
		if (rc) {
			snprintf(dev->err, sizeof(dev->err), "uvd: engine: DMA memory at IOVA 0x%llx: %s",
				 (unsigned long long)r.iova, strerror(-rc));
			rec->eng_map = 0;
			uvd_release(dev, rec);
			return rc;
		}
	}
	*out = (struct shim_dma){ .va = va, .iova = r.iova, .len = len, .priv = rec };
	return 0;
}

/* dma_free and dma_unpin: the daemon frees the memory or unpins the pages, and we drop
 * our view of them (a DMA buffer's mapping, a pin's segment list). */
static void uvd_release(struct shim_dev *dev, void *priv)
{
	struct uvd_rec *rec = priv;
	struct uvd_id id = { rec->id };
	struct uvd_shim *s = to_uvd(dev);
	/* the engine lets go first: it never reaches memory the daemon gave back */
	if (rec->eng_map)
		uvd_engine_unmap(s->eng, rec->eng_map);
	uvd_rpc(s, rec->maplen ? UVD_OP_DMA_FREE : UVD_OP_UNPIN, &id, sizeof(id), NULL, 0, NULL);
	if (rec->maplen)
		munmap(rec->va, rec->maplen);
	free(rec->segs);
	free(rec);
}

static void uvd_dma_free(struct shim_dev *dev, struct shim_dma *dma)
{
	shim_handle_release(dev, NULL, dma, sizeof(*dma), dma ? dma->priv : NULL, uvd_release);
}

/* Registration: the daemon pins [va, va + len) for the device.  Memory in a shared
 * mapping of a file we hold open goes as that file first (PIN_SHARED): the daemon maps
 * the same pages and the device reaches them as the daemon's own memory, on any shim.
 * Other memory, or a file the daemon would not take (not in memory, its locked-memory
 * limit), goes as an address (PIN): the emulator reaches it in our address space, the
 * kext wires it in our task, and a daemon that can do neither says so.  The daemon's
 * reason for the last refusal ends in s->buf. */
static int uvd_pin_request(struct uvd_shim *s, void *va, size_t len, size_t *got, bool *shared)
{
	int fd = -1;
	uint64_t file_off = 0;
	int rc = -ENOENT;

	/* with an engine the daemon's device reaches none of our memory: by address is
	 * IOVAs only, and the file would only be one more mapping of it in the daemon */
	if ((s->features & UVD_FEAT_PIN_SHARED) && !s->eng)
		rc = plat_vm_shared_file(va, len, &fd, &file_off);
	*shared = rc == 0;
	if (rc == 0) {
		struct uvd_pin_shared q = { .va = (uint64_t)(uintptr_t)va, .len = len, .file_off = file_off };
		rc = uvd_rpc_locked_fd(s, UVD_OP_PIN_SHARED, &q, sizeof(q), NULL, 0, fd, got, NULL);
		close(fd);
		if (rc == 0 || rc == -ENODEV || rc == -EPROTO || (s->features & UVD_FEAT_SHARED_ONLY))
			return rc;
		uvd_info("the daemon did not take the shared file behind %p (%s): registered by address instead",
			 va, strerror(-rc));
		*shared = false;
	} else if (rc == -EBADF) {
		uvd_info("registered memory at %p lies in a shared mapping whose file this process holds no "
			 "descriptor of: registered by address instead", va);
	}
	struct uvd_pin q = { .va = (uint64_t)(uintptr_t)va, .len = len };
	return uvd_rpc_locked(s, UVD_OP_PIN, &q, sizeof(q), NULL, 0, got, NULL);
}

static int uvd_dma_pin(struct shim_dev *dev, void *va, size_t len, struct shim_pin *out)
{
	struct uvd_shim *s = to_uvd(dev);
	if (!out || !va || !len)
		return -EINVAL;
	size_t got = 0;
	bool shared = false;
	int engine_ro = 0;
	/* our engine reaches the pages, not the daemon: they must be ours now */
	if (s->eng) {
		int rc = shim_pin_check(dev, "uvd", va, len, &engine_ro);
		if (rc)
			return rc;
	}
	pthread_mutex_lock(&s->ctl_lock);
	int rc = uvd_pin_request(s, va, len, &got, &shared);
	struct uvd_pin_rep r = { 0 };
	struct uvd_rec *rec = NULL;
	bool held = rc == 0 && got >= sizeof(r);   /* the daemon holds a pin we must give back */
	if (rc == 0 && got < sizeof(r))
		rc = -EPROTO;
	if (rc == 0) {
		memcpy(&r, s->buf + sizeof(struct uvd_hdr), sizeof(r));
		if (!r.nseg || r.nseg > UVD_MAX_SEGS || got != sizeof(r) + r.nseg * sizeof(struct shim_iova_seg))
			rc = -EPROTO;
	}
	if (rc == 0) {
		rec = calloc(1, sizeof(*rec));
		if (rec)
			rec->segs = calloc(r.nseg, sizeof(*rec->segs));
		if (!rec || !rec->segs) {
			free(rec);
			rec = NULL;
			rc = -ENOMEM;
		} else {
			memcpy(rec->segs, s->buf + sizeof(struct uvd_hdr) + sizeof(r), r.nseg * sizeof(*rec->segs));
			rec->id = r.id;
		}
	} else if (rc != -ENODEV && got > 0) {
		/* the daemon's reason, a string */
		char why[UVD_MSG_LEN];
		size_t n = got < sizeof(why) ? got : sizeof(why) - 1;
		memcpy(why, s->buf + sizeof(struct uvd_hdr), n);
		why[n] = '\0';
		snprintf(dev->err, sizeof(dev->err), "uvd: %s", why[0] ? why : strerror(-rc));
	}
	if (rc && held) {
		/* a reply we cannot use: the daemon's pin goes back now, not at our exit */
		struct uvd_id id = { r.id };
		size_t ignored;
		uvd_rpc_locked(s, UVD_OP_UNPIN, &id, sizeof(id), NULL, 0, &ignored, NULL);
	}
	pthread_mutex_unlock(&s->ctl_lock);
	if (rc == 0 && s->eng) {
		/* registered memory: the engine reaches it at the IOVAs the daemon chose */
		rc = uvd_engine_map(s->eng, va, len, true, rec->segs, r.nseg, &rec->eng_map);
		if (rc) {
			snprintf(dev->err, sizeof(dev->err), "uvd: engine: registration at %p: %s", va, strerror(-rc));
			rec->eng_map = 0;
			uvd_release(dev, rec);
			return rc;
		}
	}
	if (rc)
		return rc;
	uvd_info("%zu bytes at %p registered %s", len, va, shared ? "as the shared file behind them" : "by address");
	*out = (struct shim_pin){ .va = va, .len = len, .nseg = r.nseg, .seg = rec->segs, .priv = rec,
				  .readonly = (int)r.readonly || engine_ro };
	return 0;
}

static void uvd_dma_unpin(struct shim_dev *dev, struct shim_pin *pin)
{
	shim_handle_release(dev, NULL, pin, sizeof(*pin), pin ? pin->priv : NULL, uvd_release);
}

static int uvd_irq_fd(struct shim_dev *dev, unsigned vector)
{
	(void)vector;
	return to_uvd(dev)->irq;
}

static unsigned uvd_irq_count(struct shim_dev *dev)
{
	(void)dev;
	return 2;   /* vector 0 for async events, 1 for completions: one fd behind both */
}

static int uvd_port_addrs(struct shim_dev *dev, unsigned port, uint8_t (*addrs)[16], unsigned max)
{
	struct uvd_shim *s = to_uvd(dev);
	if (s->eng) {
		/* our engine's own address, IPv4-mapped (RFC 4291 2.5.5.2), as emu: gives it */
		uint32_t a = uvd_engine_ipv4(s->eng);
		if (port != 1 || !max)
			return 0;
		memset(addrs[0], 0, 16);
		addrs[0][10] = addrs[0][11] = 0xff;
		for (int i = 0; i < 4; i++)
			addrs[0][12 + i] = (uint8_t)(a >> (24 - 8 * i));
		return 1;
	}
	struct uvd_addrs_rep r;
	if (port != 1 || uvd_rpc(to_uvd(dev), UVD_OP_PORT_ADDRS, NULL, 0, &r, sizeof(r), NULL))
		return 0;
	unsigned n = r.n < max ? r.n : max;
	if (n > UVD_MAX_ADDRS)
		n = UVD_MAX_ADDRS;
	memcpy(addrs, r.addrs, (size_t)n * 16);
	return (int)n;
}

static int uvd_neigh(struct shim_dev *dev, const uint8_t addr[16], uint8_t mac[6])
{
	struct uvd_neigh q;
	struct uvd_neigh_rep r;
	memcpy(q.addr, addr, 16);
	int rc = uvd_rpc(to_uvd(dev), UVD_OP_NEIGH, &q, sizeof(q), &r, sizeof(r), NULL);
	if (rc)
		return rc;
	memcpy(mac, r.mac, 6);
	return 0;
}

static int uvd_cmd(struct shim_dev *dev, const void *in, size_t inlen, void *out, size_t outlen,
		   uint8_t *status, uint32_t *syndrome, char *msg, size_t msglen)
{
	struct uvd_shim *s = to_uvd(dev);
	uint32_t granted_uar = 0;
	struct uvd_cmd q = { .inlen = (uint32_t)inlen, .outlen = (uint32_t)outlen };
	struct uvd_cmd_rep r;
	size_t got = 0;
	*status = 0;
	*syndrome = 0;
	if (msglen)
		msg[0] = '\0';
	if (inlen > UVD_MAX_MSG / 2 || outlen > UVD_MAX_MSG / 2)
		return -E2BIG;
	pthread_mutex_lock(&s->ctl_lock);
	int rc = uvd_rpc_locked(s, UVD_OP_CMD, &q, sizeof(q), in, inlen, &got, NULL);
	if (got >= sizeof(r)) {
		memcpy(&r, s->buf + sizeof(struct uvd_hdr), sizeof(r));
		r.msg[UVD_MSG_LEN - 1] = '\0';
		*status = r.status;
		*syndrome = r.syndrome;
		if (msglen)
			snprintf(msg, msglen, "%s", r.msg);
		if (rc == 0) {
			if (r.outlen != outlen || got != sizeof(r) + outlen)
				rc = -EPROTO;
			else
				memcpy(out, s->buf + sizeof(struct uvd_hdr) + sizeof(r), outlen);
			granted_uar = r.granted_uar;
		}
	} else if (rc == 0) {
		rc = -EPROTO;
	}
	if (rc == 0 && *status == 0 && s->eng) {
		rc = uvd_engine_apply(s->eng, in, inlen, out, outlen, msg, msglen);   /* in the daemon's order */
		uint8_t undo[16];
		size_t ulen = rc ? uvd_engine_undo(in, out, undo, sizeof(undo)) : 0;
		if (ulen) {
			/* the object cannot run here: the daemon's goes back now, not at our exit */
			struct uvd_cmd uq = { .inlen = (uint32_t)ulen, .outlen = 16 };
			size_t ignored;
			uvd_rpc_locked(s, UVD_OP_CMD, &uq, sizeof(uq), undo, ulen, &ignored, NULL);
		}
	}
	pthread_mutex_unlock(&s->ctl_lock);
	if (rc == -ENODEV && msglen && !msg[0])
		snprintf(msg, msglen, "the device daemon is gone");
	if (rc == 0 && granted_uar && s->kext_fn)
		uvd_guest_add(s, granted_uar);
	return rc;
}

static uint32_t uvd_comp_eqn(struct shim_dev *dev)
{
	return to_uvd(dev)->comp_eqn;
}

static int uvd_next_event(struct shim_dev *dev, struct shim_remote_event *ev)
{
	struct uvd_shim *s = to_uvd(dev);
	int rc = 0;
	pthread_mutex_lock(&s->evq_lock);
	if (s->evq_n) {
		*ev = s->evq[s->evq_head];
		s->evq_head = (s->evq_head + 1) % UVD_EVQ;
		s->evq_n--;
		rc = 1;
	} else if (s->gone) {
		rc = -ENODEV;
	}
	pthread_mutex_unlock(&s->evq_lock);
	return rc;
}

const struct shim_ops shim_uvd_ops = {
	SHIM_OPS_CORE("uvd", uvd),
	SHIM_OPS_NETWORK(uvd),
	.cmd = uvd_cmd,
	.comp_eqn = uvd_comp_eqn,
	.next_event = uvd_next_event,
	.emulated = uvd_emulated,
};
