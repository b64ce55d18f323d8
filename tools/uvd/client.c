/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvd: one thread per client.  It answers the client's requests on the control
 * socket, performs the stores the client makes into its own UAR pages (taken from the
 * client's doorbell ring, hw/shim/uvd_proto.h),
 * and when the client goes away -- closed, crashed or killed -- destroys every object
 * and mapping it still had, so its peers see errors (their QPs' retries run out), not
 * hangs, and its resources return to the device. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "hw/emu/emu.h"
#include "hw/emu/transport.h"
#include "hw/mlx5/mx5.h"
#include "hw/platform/local_msg.h"
#include "hw/platform/peer.h"
#include "hw/platform/shm.h"
#include "hw/platform/thread.h"
#include "tools/uvd/uvd.h"
#include "uverbs/uv.h"

void uvd_log(const char *fmt, ...)
{
	char b[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	fprintf(stderr, "uvd: %s\n", b);
}

static uint64_t uvd_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int uvd_send(int fd, uint16_t op, uint32_t seq, int32_t rc, const void *a, size_t alen,
		    const void *b, size_t blen, int pass_fd)
{
	struct uvd_hdr h = { .len = (uint32_t)(sizeof(h) + alen + blen), .op = op, .rc = rc, .seq = seq };
	struct iovec iov[3] = { { &h, sizeof(h) }, { (void *)a, alen }, { (void *)b, blen } };
	return plat_lmsg_send(fd, iov, 3, pass_fd, 0);
}

/* ------------------------------------------------------------------ events */

static struct uvd_client *uvd_owner(struct uvd_server *srv, enum uvd_obj_type t, uint32_t num)
{
	for (struct uvd_client *c = srv->clients; c; c = c->next)
		if (!c->dead && uvd_owns(c, t, num))
			return c;
	return NULL;
}

static void uvd_event_to(struct uvd_client *c, const struct shim_remote_event *ev)
{
	/* Never block the service thread: a client that does not read its events loses
	 * them (its queue of 200 KiB or so is full). */
	struct uvd_hdr h = { .len = (uint32_t)(sizeof(h) + sizeof(*ev)), .op = UVD_OP_EVENT };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)ev, sizeof(*ev) } };
	int rc = plat_lmsg_send(c->evs, iov, 2, -1, PLAT_LMSG_DONTWAIT);
	if (rc < 0 && c->srv->verbose)
		uvd_log("client %u: event lost: %s", c->id, strerror(-rc));
}

void uvd_route_comp(void *ctx, uint32_t cqn)
{
	struct uvd_client *c = uvd_owner(ctx, UVD_CQ, cqn);
	if (c) {
		struct shim_remote_event ev = { .kind = SHIM_REMOTE_COMP, .num = cqn };
		uvd_event_to(c, &ev);
	}
}

void uvd_route_event(void *ctx, const struct mx5_event *e)
{
	struct uvd_server *srv = ctx;
	struct shim_remote_event ev = { .kind = SHIM_REMOTE_ASYNC, .type = (uint32_t)e->type, .num = e->num,
					.eqe_type = e->eqe_type, .syndrome = e->syndrome };
	enum uvd_obj_type t;
	switch (e->type) {
	case MX5_EVENT_DEVICE_FATAL:
	case MX5_EVENT_PORT_ACTIVE:
	case MX5_EVENT_PORT_DOWN:
		for (struct uvd_client *c = srv->clients; c; c = c->next)
			if (!c->dead)
				uvd_event_to(c, &ev);
		return;
	case MX5_EVENT_CQ_ERROR: t = UVD_CQ; break;
	case MX5_EVENT_SRQ_LIMIT:
	case MX5_EVENT_SRQ_ERROR: t = UVD_SRQ; break;
	default: t = UVD_QP; break;
	}
	struct uvd_client *c = uvd_owner(srv, t, e->num);
	if (c)
		uvd_event_to(c, &ev);
}

/* ------------------------------------------------------------------ memory */

struct uvd_mem *uvd_mem_new(struct uvd_client *c)
{
	struct uvd_mem *mem = uvd_grow(c->mem, c->nmem, &c->capmem, sizeof(*mem), 32);
	if (!mem)
		return NULL;
	c->mem = mem;
	struct uvd_mem *m = &c->mem[c->nmem];
	memset(m, 0, sizeof(*m));
	m->id = ++c->next_id;
	return m;
}

static void uvd_mem_release(struct uvd_client *c, struct uvd_mem *m)
{
	struct shim_dev *shim = c->srv->shim;
	if (m->is_dma || m->shared)
		__atomic_fetch_sub(&c->locked, m->quota_bytes, __ATOMIC_RELAXED);
	else
		__atomic_fetch_sub(&c->pinned, m->quota_bytes, __ATOMIC_RELAXED);
	if (m->shared)
		c->nshared--;
	if (m->shared || m->is_dma)   /* its slot among the daemon's mappings (uvd_map_reserve) */
		__atomic_fetch_sub(&c->srv->nshared, 1u, __ATOMIC_RELAXED);
	if (m->is_dma || m->shared) {
		shim_dma_unpin(shim, &m->pin);
		munmap(m->va, m->maplen);
	} else if (m->pinned_for) {
		shim_dma_unpin(shim, &m->pin);
	} else {
		emu_iommu_unmap(emu_device_from_shim(shim), m->emu_map);
		free(m->segs);
	}
}

static int uvd_mem_drop(struct uvd_client *c, uint64_t id, bool dma)
{
	for (size_t i = 0; i < c->nmem; i++)
		if (c->mem[i].id == id && c->mem[i].is_dma == dma) {
			uvd_mem_release(c, &c->mem[i]);
			c->mem[i] = c->mem[c->nmem - 1];
			__atomic_store_n(&c->nmem, c->nmem - 1, __ATOMIC_RELAXED);
			return 0;
		}
	return -ENOENT;
}

/* The end of a registration of our mapping [va, va + maplen) of a shared file: after a
 * failure (rc) the mapping goes; else m, fresh from uvd_mem_new and pinned, keeps it
 * (its release unmaps it) and is counted, the device's segments being the pin's. */
static int uvd_mem_settle(struct uvd_client *c, struct uvd_mem *m, void *va, size_t maplen, int rc)
{
	if (rc) {
		munmap(va, maplen);
		return rc;
	}
	m->va = va;
	m->maplen = maplen;
	m->segs = m->pin.seg;
	m->nseg = m->pin.nseg;
	__atomic_store_n(&c->nmem, c->nmem + 1, __ATOMIC_RELAXED);
	return 0;
}

/* One more memory region of len bytes for this client's process, within its quotas
 * (struct uvd_limits): the count of regions, and its locked bytes (memory pinned in this
 * daemon: queue memory, PIN_SHARED, which count against the daemon's RLIMIT_MEMLOCK)
 * or its pinned bytes (its own pages, PIN), each summed over every connection of the
 * same pid so that more connections (-C) bring no more.  Taken under the device lock,
 * which serializes takers; another connection's counts are read atomically, as each
 * connection's thread writes its own atomically (releases run without the lock).  0,
 * or -EDQUOT with the reason in msg; the caller ends it with uvd_quota_end. */
static int uvd_quota_take(struct uvd_client *c, uint64_t len, bool locked, char *msg, size_t msglen)
{
	struct uvd_server *srv = c->srv;
	const struct uvd_limits *l = &srv->lim;
	uint64_t have = 0, max = locked ? l->locked : l->pinned;
	size_t nmem = 0;
	int rc = 0;
	uvd_lock(srv);
	for (const struct uvd_client *o = srv->clients; o; o = o->next)
		if (o->pid == c->pid) {
			have += __atomic_load_n(locked ? &o->locked : &o->pinned, __ATOMIC_RELAXED);
			nmem += __atomic_load_n(&o->nmem, __ATOMIC_RELAXED) + o->mem_pending;
		}
	if (l->mems && nmem >= l->mems) {
		snprintf(msg, msglen, "quota: this client's process holds %zu memory regions, at most %u (4 x uvd -o)",
			 nmem, l->mems);
		rc = -EDQUOT;
	} else if (max && (len > max || have > max - len)) {
		snprintf(msg, msglen, "quota: %llu more bytes would make %llu %s bytes for this client's process, at "
			 "most %llu (uvd %s)", (unsigned long long)len, (unsigned long long)(have + len),
			 locked ? "locked" : "pinned", (unsigned long long)max, locked ? "-m" : "-M");
		rc = -EDQUOT;
	} else {
		/* taken now, before the long work: two connections of one process that ask
		 * together cannot both pass on the same room */
		__atomic_fetch_add(locked ? &c->locked : &c->pinned, len, __ATOMIC_RELAXED);
		c->mem_pending++;
	}
	uvd_unlock(srv);
	return rc;
}

/* The end of a registration that took its quota with uvd_quota_take: on success the
 * region is now in c->nmem and keeps its bytes; on failure they are given back. */
static void uvd_quota_end(struct uvd_client *c, uint64_t len, bool locked, int rc)
{
	uvd_lock(c->srv);
	c->mem_pending--;
	if (rc)
		__atomic_fetch_sub(locked ? &c->locked : &c->pinned, len, __ATOMIC_RELAXED);
	uvd_unlock(c->srv);
}

static int uvd_map_reserve(struct uvd_client *c, bool take, bool shared, char *msg, size_t msglen);

/* Queue memory: a memfd mapped here and pinned with our own shim, so the same pages
 * are reachable by the device (through our pin) and by the client (its mapping).  Each
 * is one of the daemon's mappings, as a PIN_SHARED is: they share UVD_SHARED_ALL. */
static int uvd_dma_alloc(struct uvd_client *c, const struct uvd_dma_alloc *q, struct uvd_dma_rep *r, int *fd,
			 char *msg, size_t msglen)
{
	size_t page = c->srv->shim->page_size;
	if (!q->len || q->len > (1ull << 30) || (q->align & (q->align - 1)) || q->align > 65536) {
		snprintf(msg, msglen, "DMA memory: %llu bytes aligned to %llu is not offered",
			 (unsigned long long)q->len, (unsigned long long)q->align);
		return -EINVAL;
	}
	size_t maplen = (q->len + page - 1) / page * page;
	/* Only the quota and the slot among the daemon's mappings are taken under the
	 * device lock: making, mapping and pinning a GiB of memory takes long. */
	int rc = uvd_quota_take(c, maplen, true, msg, msglen);
	if (rc)
		return rc;
	rc = uvd_map_reserve(c, true, false, msg, msglen);
	if (rc) {
		uvd_quota_end(c, maplen, true, rc);
		return rc;
	}
	void *va = MAP_FAILED;
	struct uvd_mem *m = NULL;
	*fd = plat_shm_create("uvd-queue", maplen);
	if (*fd < 0) {
		rc = *fd;
	} else if ((va = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0)) == MAP_FAILED) {
		rc = -errno;
	} else if (!(m = uvd_mem_new(c))) {
		munmap(va, maplen);
		rc = -ENOMEM;
	} else {
		rc = shim_dma_pin(c->srv->shim, va, maplen, &m->pin);
		if (rc == 0 && m->pin.nseg != 1) {
			shim_dma_unpin(c->srv->shim, &m->pin);
			snprintf(msg, msglen, "queue memory needs one IOVA range; the device gave %u (emu iova=scatter?)",
				 m->pin.nseg);
			rc = -EOPNOTSUPP;
		}
		m->is_dma = true;
		if (rc == 0)
			m->quota_bytes = maplen;
		rc = uvd_mem_settle(c, m, va, maplen, rc);
	}
	uvd_quota_end(c, maplen, true, rc);
	if (rc) {
		uvd_map_reserve(c, false, false, NULL, 0);
		return rc;
	}
	*r = (struct uvd_dma_rep){ .id = m->id, .iova = m->pin.seg[0].iova, .len = q->len };
	return 0;
}

/* The emulated IOMMU's segment list as the shim reports one (a new array, NULL when
 * out of memory); segs is freed either way. */
static struct shim_iova_seg *uvd_segs_from_emu(struct emu_iova_seg *segs, uint32_t nseg)
{
	struct shim_iova_seg *out = calloc(nseg, sizeof(*out));
	for (uint32_t i = 0; out && i < nseg; i++)
		out[i] = (struct shim_iova_seg){ segs[i].iova, segs[i].len };
	free(segs);
	return out;
}

/* Registration of memory the client shares: the file behind its mapping came with the
 * request.  We map the same pages and pin our mapping with our own shim, as queue
 * memory is, so any shim reaches them (VFIO maps them through our container; the
 * emulator copies to and from them in this process).  Only a file in memory (tmpfs,
 * memfd, hugetlbfs: a disk or network file could stall our page faults under the device
 * lock), and mapped with the descriptor's own rights: read-only for an O_RDONLY
 * descriptor or a write-sealed memfd, which the pin then reports, so the client gains
 * nothing it did not have.  A client that truncates the file under us makes the
 * emulator's copies fault (hw/platform/guarded_copy.h: a DMA error, not a crash); a real
 * device keeps the pages it pinned.  Each mapping is one of the daemon's
 * (vm.max_map_count, 65530 by default): a client may hold UVD_SHARED_PER_CLIENT, all
 * clients UVD_SHARED_ALL together with their queue memory (DMA_ALLOC), so that one
 * cannot lock the others out. */
#define UVD_SHARED_PER_CLIENT 4096u
#define UVD_SHARED_ALL 32768u

/* A slot among the daemon's mappings, PIN_SHARED (shared) or DMA_ALLOC (take, or give
 * back): takers are serialized by the device lock, and a release, which may run
 * without it (the client's end), gives back atomically. */
static int uvd_map_reserve(struct uvd_client *c, bool take, bool shared, char *msg, size_t msglen)
{
	struct uvd_server *srv = c->srv;
	int rc = 0;
	if (!take) {
		__atomic_fetch_sub(&srv->nshared, 1u, __ATOMIC_RELAXED);
		return 0;
	}
	uvd_lock(srv);
	unsigned all = __atomic_load_n(&srv->nshared, __ATOMIC_RELAXED);
	if ((shared && c->nshared >= UVD_SHARED_PER_CLIENT) || all >= UVD_SHARED_ALL) {
		snprintf(msg, msglen, "%s: %u shared regions held by this client (at most %u), %u mappings of "
			 "queue memory and shared regions in the daemon (at most %u)",
			 shared ? "shared registration" : "DMA memory", c->nshared, UVD_SHARED_PER_CLIENT, all,
			 UVD_SHARED_ALL);
		rc = -ENOSPC;
	} else {
		__atomic_fetch_add(&srv->nshared, 1u, __ATOMIC_RELAXED);
	}
	uvd_unlock(srv);
	return rc;
}

static int uvd_pin_shared_map(struct uvd_client *c, const struct uvd_pin_shared *q, int fd, struct uvd_mem **out,
			      char *msg, size_t msglen);
static int uvd_pin_shared_pin(struct uvd_client *c, const struct uvd_pin_shared *q, int fd, uint64_t off0,
			      uint64_t delta, size_t maplen, struct uvd_mem **out, char *msg, size_t msglen);

static int uvd_pin_shared(struct uvd_client *c, const struct uvd_pin_shared *q, int fd, struct uvd_mem **out,
			  char *msg, size_t msglen)
{
	if (fd < 0) {
		snprintf(msg, msglen, "shared registration: no descriptor came with the request");
		return -EBADF;
	}
	if (!q->len || q->len > (1ull << 40) || q->file_off + q->len < q->file_off) {
		snprintf(msg, msglen, "shared registration: bad range");
		return -EINVAL;
	}
	int rc = uvd_map_reserve(c, true, true, msg, msglen);
	if (rc)
		return rc;
	rc = uvd_pin_shared_map(c, q, fd, out, msg, msglen);
	if (rc)
		uvd_map_reserve(c, false, true, NULL, 0);
	return rc;
}

/* uvd_pin_shared's work, without the device lock: mapping and pinning a large file
 * takes long, and c->mem is this client's thread's alone. */
static int uvd_pin_shared_map(struct uvd_client *c, const struct uvd_pin_shared *q, int fd, struct uvd_mem **out,
			      char *msg, size_t msglen)
{
	size_t granule = 0;
	struct stat st;
	int rc = fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ? -EINVAL : plat_shm_memory_granule(fd, &granule);
	if (rc) {
		snprintf(msg, msglen, "shared registration: the descriptor is not a file in memory (a memfd, "
			 "shared-memory object or tmpfs file)%s", rc == -EOPNOTSUPP ? ": not told on this system" : "");
		return rc;
	}
	if ((uint64_t)st.st_size < q->file_off + q->len) {
		snprintf(msg, msglen, "shared registration: bytes %llu..%llu lie past the file's end (%llu)",
			 (unsigned long long)q->file_off, (unsigned long long)(q->file_off + q->len),
			 (unsigned long long)st.st_size);
		return -EINVAL;
	}
	uint64_t off0 = q->file_off / granule * granule, delta = q->file_off - off0;
	size_t maplen = (size_t)((delta + q->len + granule - 1) / granule * granule);
	rc = uvd_quota_take(c, maplen, true, msg, msglen);
	if (rc)
		return rc;
	rc = uvd_pin_shared_pin(c, q, fd, off0, delta, maplen, out, msg, msglen);
	uvd_quota_end(c, maplen, true, rc);
	return rc;
}

/* uvd_pin_shared_map's mapping and pin, its quota taken. */
static int uvd_pin_shared_pin(struct uvd_client *c, const struct uvd_pin_shared *q, int fd, uint64_t off0,
			      uint64_t delta, size_t maplen, struct uvd_mem **out, char *msg, size_t msglen)
{
	struct shim_dev *shim = c->srv->shim;
	int rc;
	int mode = fcntl(fd, F_GETFL);
	int prot = mode >= 0 && (mode & O_ACCMODE) == O_RDWR ? PROT_READ | PROT_WRITE : PROT_READ;
	uint8_t *va = mmap(NULL, maplen, prot, MAP_SHARED, fd, (off_t)off0);
	if (va == MAP_FAILED && errno == EPERM && prot != PROT_READ) {
		prot = PROT_READ;   /* a memfd sealed against writing (F_SEAL_WRITE) */
		va = mmap(NULL, maplen, prot, MAP_SHARED, fd, (off_t)off0);
	}
	if (va == MAP_FAILED) {
		int e = errno;
		snprintf(msg, msglen, "shared registration: cannot map the client's file: %s", strerror(e));
		return -e;
	}
	struct uvd_mem *m = uvd_mem_new(c);
	if (!m) {
		munmap(va, maplen);
		return -ENOMEM;
	}
	rc = shim_dma_pin(shim, va + delta, (size_t)q->len, &m->pin);
	if (rc == 0 && m->pin.nseg > UVD_MAX_SEGS) {
		shim_dma_unpin(shim, &m->pin);
		snprintf(msg, msglen, "shared registration: %u segments, at most %u per region", m->pin.nseg,
			 UVD_MAX_SEGS);
		rc = -E2BIG;
	} else if (rc) {
		snprintf(msg, msglen, "shared registration: the device cannot pin it%s: %.*s",
			 rc == -ENOMEM ? " (the daemon's ulimit -l bounds it)" : "", 60,
			 shim->err[0] ? shim->err : strerror(-rc));
	}
	m->shared = true;
	rc = uvd_mem_settle(c, m, va, maplen, rc);
	if (rc == 0) {
		m->pin.readonly |= prot == PROT_READ;
		m->quota_bytes = maplen;
		c->nshared++;   /* srv->nshared: counted by uvd_map_reserve */
		*out = m;
	}
	return rc;
}

static int uvd_pin_emu(struct uvd_client *c, const struct uvd_pin *q, struct uvd_mem **out, char *msg,
		       size_t msglen);

/* Registration of the client's own pages.  The emulated device reaches them with
 * process_vm_readv/writev; hardware would need the pages pinned for its IOMMU, which
 * only the kext can do for another task, and VFIO only for the container's owner:
 * refused here with the reason (docs/architecture.md). */
static int uvd_pin(struct uvd_client *c, const struct uvd_pin *q, struct uvd_mem **out, char *msg,
		   size_t msglen)
{
	/* Called without the device lock: checking and mapping a region of 128 GiB takes
	 * seconds, during which every other client must go on.  The lock is taken only
	 * for the quota (uvd_quota_take, uvd_quota_end). */
	struct emu_dev *emu = emu_device_from_shim(c->srv->shim);
	/* Engines (no -R): the client's engine reaches its pages, never this daemon, and
	 * the client checked them (shim_pin_check); the device here gets IOVAs with no
	 * memory behind them (emu_iommu_reserve), so -S has nothing to refuse. */
	bool reserve = c->srv->engines;
	if (c->srv->shared_only && !reserve) {
		snprintf(msg, msglen, "this daemon (%s%s) registers only memory its clients share: put the buffer "
			 "in a MAP_SHARED mapping of a memfd (memfd_create(2)) or shared-memory object and keep "
			 "its descriptor open", c->srv->shim->ops->scheme,
			 emu || c->srv->shim->ops->pin_for ? ", -S" : "");
		return -EOPNOTSUPP;
	}
	if (!q->len || q->va + q->len < q->va || q->len > (1ull << 40)) {
		snprintf(msg, msglen, "pin: bad range");
		return -EINVAL;
	}
	int rc = uvd_quota_take(c, q->len, false, msg, msglen);
	if (rc)
		return rc;
	if (c->srv->shim->ops->pin_for) {
		/* the kext wires it in the client's task, under its own lock: wiring 128 GiB
		 * takes long, and c->mem is this thread's */
		rc = uvd_pin_for(c, q, out, msg, msglen);
		if (rc == 0)
			(*out)->quota_bytes = q->len;
	} else {
		rc = uvd_pin_emu(c, q, out, msg, msglen);
	}
	uvd_quota_end(c, q->len, false, rc);
	return rc;
}

/* uvd_pin on the emulated device, its quota taken. */
static int uvd_pin_emu(struct uvd_client *c, const struct uvd_pin *q, struct uvd_mem **out, char *msg,
		       size_t msglen)
{
	struct emu_dev *emu = emu_device_from_shim(c->srv->shim);
	bool reserve = c->srv->engines;
	int rc;
	/* Every page must be mapped in the client now, as get_user_pages would demand. */
	uint64_t pg = c->srv->shim->page_size;
	for (uint64_t a = q->va; !reserve && a < q->va + q->len; a = (a / pg + 1) * pg) {
		uint8_t b;
		rc = plat_peer_copy(c->pid, a, &b, 1, 0);
		if (rc == -EOPNOTSUPP) {
			snprintf(msg, msglen, "memory registration across processes on the emulated device needs "
				 "the daemon to reach process %d's memory, which this system does not allow "
				 "(on macOS the kext pins a client's memory instead)", (int)c->pid);
			return rc;
		}
		if (rc) {
			snprintf(msg, msglen, "pin: 0x%llx is not readable in process %d: %s",
				 (unsigned long long)a, (int)c->pid, strerror(-rc));
			return rc == -EACCES ? -EACCES : -EFAULT;
		}
	}
	/* the emulator's IOMMU keeps its own lock */
	struct emu_iova_seg *segs = NULL;
	uint32_t nseg = 0;
	uint64_t map = 0;
	rc = reserve ? emu_iommu_reserve(emu, q->va, q->len, &segs, &nseg, &map)
		     : emu_iommu_map_remote(emu, c->pid, q->va, q->len, &segs, &nseg, &map);
	if (rc)
		return rc;
	if (nseg > UVD_MAX_SEGS) {
		emu_iommu_unmap(emu, map);
		free(segs);
		snprintf(msg, msglen, "pin: %u segments, at most %u per region", nseg, UVD_MAX_SEGS);
		return -E2BIG;
	}
	struct shim_iova_seg *ssegs = uvd_segs_from_emu(segs, nseg);
	struct uvd_mem *m = ssegs ? uvd_mem_new(c) : NULL;   /* c->mem is this thread's */
	if (m) {
		m->emu_map = map;
		m->segs = ssegs;
		m->nseg = nseg;
		m->quota_bytes = q->len;
		__atomic_store_n(&c->nmem, c->nmem + 1, __ATOMIC_RELAXED);
		*out = m;
	}
	if (!m) {
		emu_iommu_unmap(emu, map);
		free(ssegs);
		return -ENOMEM;
	}
	return 0;
}

/* ------------------------------------------------------------------ commands */

static int uvd_destroy_cmd(struct uvd_client *c, uint16_t op, uint32_t num)
{
	uint8_t in[PRM_SIZE(destroy_qp_in)] = { 0 }, out[16];
	PRM_SET(destroy_qp_in, in, opcode, op);
	switch (op) {
	case PRM_CMD_OP_DESTROY_QP: PRM_SET(destroy_qp_in, in, qpn, num); break;
	case PRM_CMD_OP_DESTROY_MKEY: PRM_SET(destroy_mkey_in, in, mkey_index, num); break;
	case PRM_CMD_OP_DESTROY_SRQ: PRM_SET(destroy_srq_in, in, srqn, num); break;
	case PRM_CMD_OP_DESTROY_RMP: PRM_SET(destroy_rmp_in, in, rmpn, num); break;
	case PRM_CMD_OP_DESTROY_CQ: PRM_SET(destroy_cq_in, in, cqn, num); break;
	case PRM_CMD_OP_DEALLOC_PD: PRM_SET(dealloc_pd_in, in, pd, num); break;
	case PRM_CMD_OP_DEALLOC_Q_COUNTER: PRM_SET(dealloc_q_counter_in, in, counter_set_id, num); break;
	case PRM_CMD_OP_DEALLOC_UAR: PRM_SET(dealloc_uar_in, in, uar, num); break;
	default: return -EINVAL;
	}
	int rc = mx5_cmd(c->srv->dev->mx5, in, sizeof(in), out, sizeof(out));
	if (rc && c->srv->verbose)
		uvd_log("client %u: cleanup 0x%x of 0x%x: %s", c->id, op, num, mx5_device_error(c->srv->dev->mx5));
	return rc;
}

/* Linux detaches a dead process's QPs from their groups before it destroys them
 * (drivers/infiniband/core/uverbs_std_types_qp.c uverbs_free_qp), so firmware never
 * sees DESTROY_QP of an attached QP from it; the daemon does the same for a dead
 * client.  A detach the device refuses is forgotten: the QP's destroy follows. */
static unsigned uvd_detach_all(struct uvd_client *c, unsigned max)
{
	unsigned n = 0;
	while (c->nmcg && n < max) {
		struct uvd_mcg_att *a = &c->mcg[--c->nmcg];
		uint8_t in[PRM_SIZE(detach_from_mcg_in)] = { 0 }, out[PRM_SIZE(detach_from_mcg_out)];
		PRM_SET(detach_from_mcg_in, in, opcode, PRM_CMD_OP_DETACH_FROM_MCG);
		PRM_SET(detach_from_mcg_in, in, qpn, a->qpn);
		memcpy(PRM_ADDR(detach_from_mcg_in, in, multicast_gid), a->gid, 16);
		if (mx5_cmd(c->srv->dev->mx5, in, sizeof(in), out, sizeof(out)) && c->srv->verbose)
			uvd_log("client %u: cleanup: detach of QP 0x%x: %s", c->id, a->qpn,
				mx5_device_error(c->srv->dev->mx5));
		n++;
	}
	return n;
}

void uvd_lock(struct uvd_server *srv)
{
	__atomic_fetch_add(&srv->lock_waiting, 1u, __ATOMIC_RELAXED);
	pthread_mutex_lock(&srv->dev->lock);
	__atomic_fetch_sub(&srv->lock_waiting, 1u, __ATOMIC_RELAXED);
	__atomic_fetch_add(&srv->lock_turns, 1u, __ATOMIC_RELEASE);
}

void uvd_unlock(struct uvd_server *srv)
{
	pthread_mutex_unlock(&srv->dev->lock);
}

/* Between two holds of a cleanup: a request waiting for the device lock takes it
 * first.  A mutex is not fair -- the thread that lets it go takes it again before a
 * woken waiter runs -- so the cleanup sleeps until one waiter has had its turn, up to
 * 20 ms (a waiter the scheduler keeps off the CPU), so that a stream of requests slows
 * a cleanup, one request per batch, but cannot stall it. */
static void uvd_reap_pause(struct uvd_server *srv)
{
	if (!__atomic_load_n(&srv->lock_waiting, __ATOMIC_ACQUIRE))
		return;
	unsigned turns = __atomic_load_n(&srv->lock_turns, __ATOMIC_ACQUIRE);
	uint64_t t0 = uvd_now_ns();
	while (__atomic_load_n(&srv->lock_turns, __ATOMIC_ACQUIRE) == turns && uvd_now_ns() - t0 < 20000000u) {
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
	}
}

/* Up to UVD_REAP_BATCH of the dead client's objects of kind t from *i on, destroyed in
 * one hold of the device lock.  Entries are moved, not shifted, out of the way: the
 * table of a dead client is never searched again (uvd_owner skips it), so its order
 * (policy.c uvd_obj_pos) no longer matters.  An object leaves the client's table in the same hold as
 * its destroy, so its number, once the firmware may give it to another client, is
 * never the dead one's.  A destroy the firmware refuses keeps the object (the firmware
 * keeps its number too) for the second pass (last: dropped, logged as leaked).
 * Returns the commands sent; *more when objects of that kind may remain. */
static unsigned uvd_reap_batch(struct uvd_client *c, enum uvd_obj_type t, uint16_t op, size_t *i, bool last,
			       unsigned *n, unsigned *leaked, bool *more)
{
	unsigned cmds = 0;
	*more = false;
	while (*i < c->nobj) {
		if (c->objs[*i].type != t) {
			++*i;
			continue;
		}
		if (cmds == UVD_REAP_BATCH) {
			*more = true;
			break;
		}
		cmds++;
		int rc = uvd_destroy_cmd(c, op, c->objs[*i].num);
		if (rc && !last) {
			++*i;   /* kept for the second pass */
			continue;
		}
		if (rc)
			++*leaked;
		c->objs[*i] = c->objs[--c->nobj];
		c->nobj_type[t]--;
		++*n;
	}
	return cmds;
}

void uvd_policy_destroy_all(struct uvd_client *c)
{
	static const struct { enum uvd_obj_type t; uint16_t op; } order[] = {
		{ UVD_QP, PRM_CMD_OP_DESTROY_QP },     { UVD_MKEY, PRM_CMD_OP_DESTROY_MKEY },
		{ UVD_SRQ, PRM_CMD_OP_DESTROY_RMP },   { UVD_CQ, PRM_CMD_OP_DESTROY_CQ },
		{ UVD_PD, PRM_CMD_OP_DEALLOC_PD },     { UVD_QCNT, PRM_CMD_OP_DEALLOC_Q_COUNTER },
	};
	struct uvd_server *srv = c->srv;
	c->nuar = 0;
	unsigned n = 0, leaked = 0, most = 0;
	uint64_t t0 = uvd_now_ns();
	/* Its grants of UAR host pages go first (the kext): the pages themselves go back
	 * only after its objects, which the firmware refuses to outlive them, and a
	 * cleanup may take a while; until then a process given the dead one's pid must
	 * not be able to map them. */
	pthread_mutex_lock(&srv->dev->lock);
	for (size_t i = 0; i < c->uar_set.n; i++)
		uvd_share_uar(c, c->uar_set.g[i].first, false);
	c->uar_revoked = true;
	pthread_mutex_unlock(&srv->dev->lock);
	/* one cleanup at a time: two would only take turns at the device lock, and each
	 * turn they take is one a waiting request does not get */
	pthread_mutex_lock(&srv->reap_lock);
	unsigned ndetached = 0;
	for (;;) {
		pthread_mutex_lock(&srv->dev->lock);
		unsigned cmds = uvd_detach_all(c, UVD_REAP_BATCH);
		pthread_mutex_unlock(&srv->dev->lock);
		ndetached += cmds;
		most = cmds > most ? cmds : most;
		if (!cmds)
			break;
		uvd_reap_pause(srv);
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
			size_t i = 0;
			bool more = true;
			while (more) {
				pthread_mutex_lock(&srv->dev->lock);
				unsigned cmds = uvd_reap_batch(c, order[k].t, order[k].op, &i, pass == 1, &n, &leaked,
							       &more);
				pthread_mutex_unlock(&srv->dev->lock);
				most = cmds > most ? cmds : most;
				uvd_reap_pause(srv);
			}
		}
	/* UAR pages go back by whole host pages, one at a time: no longer its process's to
	 * map (a pid may be reused), and back to the firmware.  Its other UAR entries in
	 * the table go with them. */
	for (;;) {
		pthread_mutex_lock(&srv->dev->lock);
		unsigned cmds = uvd_uar_release_one(c);
		if (!cmds) {
			n += c->nobj_type[UVD_UAR];
			for (size_t i = 0; i < c->nobj;)
				if (c->objs[i].type == UVD_UAR) {
					c->objs[i] = c->objs[--c->nobj];
					c->nobj_type[UVD_UAR]--;
				} else {
					i++;
				}
		}
		pthread_mutex_unlock(&srv->dev->lock);
		most = cmds > most ? cmds : most;
		if (!cmds)
			break;
		uvd_reap_pause(srv);
	}
	pthread_mutex_unlock(&srv->reap_lock);
	/* Its memory last, when nothing of the device names it any more, and without the
	 * device lock: c->mem is this thread's, and the shims and the emulator's IOMMU keep
	 * their own locks. */
	while (c->nmem) {
		uvd_mem_release(c, &c->mem[c->nmem - 1]);
		__atomic_store_n(&c->nmem, c->nmem - 1, __ATOMIC_RELAXED);
	}
	if (n)
		uvd_log("client %u (pid %d) gone: %u objects destroyed%s in %llu us, at most %u under one hold of "
			"the device lock", c->id, (int)c->pid, n, leaked ? " (some refused by the firmware: leaked)" : "",
			(unsigned long long)((uvd_now_ns() - t0) / 1000u), most);
	if (ndetached)
		uvd_log("client %u (pid %d) gone: %u multicast attachments detached before its QPs were destroyed",
			c->id, (int)c->pid, ndetached);
}

/* SET_ROCE_ADDRESS from a client: the GID table is the daemon's.  The same entry as
 * the one programmed is answered with success, nothing sent; anything else refused. */
static int uvd_gid_same(struct uvd_client *c, const uint8_t *in, size_t inlen, char *msg, size_t msglen)
{
	if (inlen < PRM_SIZE(set_roce_address_in))
		return -EINVAL;
	uint8_t q[PRM_SIZE(query_roce_address_in)] = { 0 }, o[PRM_SIZE(query_roce_address_out)];
	PRM_SET(query_roce_address_in, q, opcode, PRM_CMD_OP_QUERY_ROCE_ADDRESS);
	PRM_SET(query_roce_address_in, q, roce_address_index,
		PRM_GET(set_roce_address_in, in, roce_address_index));
	int rc = mx5_cmd(c->srv->dev->mx5, q, sizeof(q), o, sizeof(o));
	if (rc)
		return rc;
	if (memcmp(PRM_ADDR(query_roce_address_out, o, roce_address), PRM_ADDR(set_roce_address_in, in, roce_address),
		   PRM_SIZE(roce_addr_layout))) {
		snprintf(msg, msglen, "GID %u belongs to the device daemon: set it there (UVERBS_GIDS of uvd)",
			 (unsigned)PRM_GET(set_roce_address_in, in, roce_address_index));
		return -EPERM;
	}
	return 0;
}

/* A reply that hands over a descriptor we made for it (DMA_ALLOC's memfd, RING's,
 * ENGINE's socket) and is followed by `tail` (ENGINE's options) when rc is 0; ours is
 * closed either way. */
static int uvd_reply_fd(struct uvd_client *c, const struct uvd_hdr *h, int rc, const void *rep, size_t replen,
			const void *tail, size_t taillen, int fd)
{
	int src = uvd_send(c->ctl, h->op, h->seq, rc, rep, replen, tail, rc ? 0 : taillen, rc ? -1 : fd);
	if (fd >= 0)
		close(fd);
	return src;
}

static void uvd_do_cmd(struct uvd_client *c, const struct uvd_hdr *h, const uint8_t *p, size_t plen)
{
	struct uvd_cmd q;
	struct uvd_cmd_rep r;
	memset(&r, 0, sizeof(r));
	int rc = -EINVAL;
	uint8_t *out = NULL;
	uint32_t outlen = 0;
	if (plen < sizeof(q)) {
		snprintf(r.msg, sizeof(r.msg), "command: short request");
		goto reply;
	}
	memcpy(&q, p, sizeof(q));
	if (q.inlen != plen - sizeof(q) || q.inlen < 8 || q.outlen < 8 ||
	    q.outlen > UVD_MAX_MSG - sizeof(struct uvd_hdr) - sizeof(r)) {
		snprintf(r.msg, sizeof(r.msg), "command: lengths %u/%u do not fit the request", q.inlen, q.outlen);
		goto reply;
	}
	out = calloc(1, q.outlen);
	if (!out) {
		rc = -ENOMEM;
		goto reply;
	}
	const uint8_t *in = p + sizeof(q);
	struct uv_dev *d = c->srv->dev;
	bool gid;
	uvd_lock(c->srv);
	rc = uvd_policy_check(c, in, q.inlen, r.msg, sizeof(r.msg), &gid);
	uint16_t op = (uint16_t)PRM_GET(alloc_uar_in, in, opcode);
	if (rc == 0 && gid) {
		/* an engine's client programs its own address, into its engine alone */
		rc = uvd_engine_gid_own(c, q.inlen) ? 0 : uvd_gid_same(c, in, q.inlen, r.msg, sizeof(r.msg));
	} else if (rc == 0 && (op == PRM_CMD_OP_ALLOC_UAR || op == PRM_CMD_OP_DEALLOC_UAR)) {
		/* answered from the client's host pages of UAR pages (uar.c) */
		uint32_t u = 0;
		if (op == PRM_CMD_OP_ALLOC_UAR && q.outlen < PRM_SIZE(alloc_uar_out)) {
			snprintf(r.msg, sizeof(r.msg), "ALLOC_UAR: output of %u bytes", q.outlen);
			rc = -EINVAL;
		} else if (op == PRM_CMD_OP_ALLOC_UAR) {
			bool granted = false;
			rc = uvd_uar_alloc(c, &u, &granted, r.msg, sizeof(r.msg));
			if (rc == 0)
				PRM_SET(alloc_uar_out, out, uar, u);
			/* the client may map it itself (hw/shim/uvd_guest.h) */
			if (rc == 0 && granted)
				r.granted_uar = u + 1u;
		} else {
			rc = uvd_uar_dealloc(c, (uint32_t)PRM_GET(dealloc_uar_in, in, uar), r.msg, sizeof(r.msg));
		}
		if (rc == 0)
			uvd_policy_done(c, in, q.inlen, out, q.outlen);
		else if (c->srv->verbose)
			uvd_log("client %u: %s", c->id, r.msg[0] ? r.msg : strerror(-rc));
	} else if (rc == 0) {
		rc = mx5_cmd(d->mx5, in, q.inlen, out, q.outlen);
		r.status = mx5_cmd_status(d->mx5);
		r.syndrome = mx5_cmd_syndrome(d->mx5);
		if (rc) {
			snprintf(r.msg, sizeof(r.msg), "%s", mx5_device_error(d->mx5));
		} else {
			uvd_policy_done(c, in, q.inlen, out, q.outlen);
		}
	} else if (c->srv->verbose) {
		uvd_log("client %u: refused: %s", c->id, r.msg);
	}
	uvd_unlock(c->srv);
	if (rc == 0)
		outlen = q.outlen;
reply:
	r.outlen = outlen;
	uvd_send(c->ctl, h->op, h->seq, rc, &r, sizeof(r), out, outlen, -1);
	free(out);
}

/* ------------------------------------------------------------------ requests */

static bool uvd_uar_store_ok(struct uvd_client *c, uint64_t off, uint32_t size)
{
	size_t pb = c->srv->uar_page_bytes;
	if (!size || size > UVD_MAX_STORE || off + size > c->srv->bar0.len || off / pb != (off + size - 1) / pb)
		return false;
	for (unsigned i = 0; i < c->nuar; i++)
		if (c->uars[i] == (uint32_t)(off / pb))
			return true;
	return false;
}

/* One record of the client's ring, already copied out of the shared memory: checked,
 * then performed as the client's own store would have been in one process. */
static void uvd_store(struct uvd_client *c, const struct uvd_ring_rec *st)
{
	if ((st->op != SHIM_MMIO_WRITE && st->op != SHIM_MMIO_WC_WRITE) || !uvd_uar_store_ok(c, st->off, st->size)) {
		if (c->ring_dropped++ < 8 || c->srv->verbose)
			uvd_log("client %u: store (kind %u) of %u bytes at 0x%llx outside its UAR pages: dropped", c->id,
				st->op, st->size, (unsigned long long)st->off);
		return;
	}
	const struct shim_bar *bar = &c->srv->bar0;
	const uint8_t *src = st->bytes;
	/* 8-byte stores where the size allows, as a doorbell or BlueFlame copy makes them */
	for (uint32_t i = 0; i < st->size;) {
		if (st->size - i >= 8 && !((st->off + i) & 7)) {
			uint64_t v;
			memcpy(&v, src + i, 8);
			*(volatile uint64_t *)(void *)(bar->base + st->off + i) = v;
			i += 8;
		} else {
			bar->base[st->off + i] = src[i];
			i++;
		}
	}
	if (bar->hook)
		bar->hook->access(bar->hook->ctx, (enum shim_mmio_op)st->op, st->off, st->size);
}

/* Perform what the client published since the last pass: the number of records, or
 * -EPROTO for a producer index no client can reach (more than the ring ahead). */
static int uvd_ring_drain(struct uvd_client *c)
{
	struct uvd_ring *r = c->ring;
	uint32_t p = uvd_ring_prod(&r->prod);
	uint32_t n = p - c->ring_cons;
	if (!n)
		return 0;
	if (n > UVD_RING_SLOTS)
		return -EPROTO;
	struct uvd_ring_rec rec;
	for (; c->ring_cons != p; c->ring_cons++) {
		const struct uvd_ring_rec *e = &r->rec[c->ring_cons & (UVD_RING_SLOTS - 1)];
		/* copied out before it is checked: the client may rewrite the slot meanwhile */
		memcpy(&rec, e, offsetof(struct uvd_ring_rec, bytes));
		if (rec.size && rec.size <= UVD_MAX_STORE)
			memcpy(rec.bytes, e->bytes, rec.size);
		uvd_store(c, &rec);
	}
	uvd_ring_release(&r->cons, c->ring_cons);
	return (int)n;
}

/* The ring: a memfd mapped here and in the client, nowhere else. */
static int uvd_ring_new(struct uvd_client *c, struct uvd_ring_rep *r, int *fd)
{
	size_t page = c->srv->shim->page_size;
	size_t len = (sizeof(struct uvd_ring) + page - 1) / page * page;
	if (c->ring)
		return -EEXIST;
	*fd = plat_shm_create("uvd-doorbells", len);
	if (*fd < 0)
		return *fd;
	void *va = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (va == MAP_FAILED)
		return -errno;
	c->ring = va;
	c->ring_len = len;
	c->ring_cons = 0;
	c->ring->awake = 1;
	*r = (struct uvd_ring_rep){ .bytes = len, .slots = UVD_RING_SLOTS };
	return 0;
}

/* A request's fixed-size payload: copied into q when it is exactly qlen bytes, else
 * -EPROTO. */
static int uvd_take(const uint8_t *p, size_t plen, void *q, size_t qlen)
{
	if (plen != qlen)
		return -EPROTO;
	memcpy(q, p, qlen);
	return 0;
}

static int uvd_request(struct uvd_client *c, const uint8_t *b, size_t n, int fd)
{
	struct uvd_hdr h;
	if (n < sizeof(h))
		return -EPROTO;
	memcpy(&h, b, sizeof(h));
	if (h.len != n)
		return -EPROTO;
	const uint8_t *p = b + sizeof(h);
	size_t plen = n - sizeof(h);
	char msg[UVD_MSG_LEN] = "";
	struct uv_dev *d = c->srv->dev;
	switch (h.op) {
	case UVD_OP_CMD:
		uvd_do_cmd(c, &h, p, plen);
		return 0;
	case UVD_OP_READ: {
		struct uvd_read q;
		struct uvd_read_rep r = { 0 };
		if (uvd_take(p, plen, &q, sizeof(q)))
			return -EPROTO;
		/* the initialization segment only (firmware revision, health) */
		if ((q.size != 4 && q.size != 8) || (q.off & (q.size - 1)) || q.off + q.size > PRM_SIZE(initial_seg))
			return uvd_send(c->ctl, h.op, h.seq, -EPERM, &r, sizeof(r), NULL, 0, -1);
		const struct shim_bar *bar = &c->srv->bar0;
		if (bar->hook)
			bar->hook->access(bar->hook->ctx, SHIM_MMIO_READ, q.off, q.size);
		for (uint32_t i = 0; i < q.size; i += 4) {
			uint32_t v = *(volatile uint32_t *)(void *)(bar->base + q.off + i);
			memcpy((uint8_t *)&r.val + i, &v, 4);
		}
		return uvd_send(c->ctl, h.op, h.seq, 0, &r, sizeof(r), NULL, 0, -1);
	}
	case UVD_OP_DMA_ALLOC: {
		struct uvd_dma_alloc q;
		struct uvd_dma_rep r = { 0 };
		int fd = -1;
		if (uvd_take(p, plen, &q, sizeof(q)))
			return -EPROTO;
		int rc = uvd_dma_alloc(c, &q, &r, &fd, msg, sizeof(msg));   /* takes the device lock where it must */
		return uvd_reply_fd(c, &h, rc, &r, sizeof(r), NULL, 0, fd);
	}
	case UVD_OP_DMA_FREE:
	case UVD_OP_UNPIN: {
		struct uvd_id q;
		if (uvd_take(p, plen, &q, sizeof(q)))
			return -EPROTO;
		/* no device lock: c->mem is this thread's, and unmapping or unpinning a large
		 * region takes long (the shims keep their own locks) */
		int rc = uvd_mem_drop(c, q.id, h.op == UVD_OP_DMA_FREE);
		return uvd_send(c->ctl, h.op, h.seq, rc, NULL, 0, NULL, 0, -1);
	}
	case UVD_OP_PIN:
	case UVD_OP_PIN_SHARED: {
		struct uvd_pin q;
		struct uvd_pin_shared qs;
		if (h.op == UVD_OP_PIN ? uvd_take(p, plen, &q, sizeof(q)) : uvd_take(p, plen, &qs, sizeof(qs)))
			return -EPROTO;
		struct uvd_mem *m = NULL;
		int rc;
		if (h.op == UVD_OP_PIN) {
			rc = uvd_pin(c, &q, &m, msg, sizeof(msg));   /* takes the device lock where it must */
		} else {
			rc = uvd_pin_shared(c, &qs, fd, &m, msg, sizeof(msg));   /* the same */
		}
		/* The reply goes out with no lock held: a client that never reads its socket
		 * blocks only its own thread.  m stays valid: only this thread changes
		 * c->mem. */
		struct uvd_pin_rep r = { 0 };
		if (rc == 0) {
			r.id = m->id;
			r.nseg = m->nseg;
			r.readonly = m->shared ? (uint32_t)m->pin.readonly : 0;
			return uvd_send(c->ctl, h.op, h.seq, 0, &r, sizeof(r), m->segs, m->nseg * sizeof(*m->segs), -1);
		}
		if (c->srv->verbose)
			uvd_log("client %u: %s", c->id, msg);
		return uvd_send(c->ctl, h.op, h.seq, rc, msg, strlen(msg) + 1, NULL, 0, -1);
	}
	case UVD_OP_RING: {
		struct uvd_ring_rep r = { 0 };
		int fd = -1;
		if (plen != 0)
			return -EPROTO;
		/* engines: the device's data plane is off here; a client without an engine
		 * would post into nothing */
		int rc = c->srv->engines ? -EOPNOTSUPP : uvd_ring_new(c, &r, &fd);
		if (rc == -EOPNOTSUPP && c->srv->verbose)
			uvd_log("client %u: asked for a doorbell ring from a daemon of engines (start it with -R for rings)", c->id);
		return uvd_reply_fd(c, &h, rc, &r, sizeof(r), NULL, 0, fd);
	}
	case UVD_OP_ENGINE: {
		struct uvd_engine_rep r = { 0 };
		char opts[UVD_ENGINE_OPTS_MAX];
		int fd = -1;
		if (plen != 0)
			return -EPROTO;
		uvd_lock(c->srv);
		int rc = uvd_engine_new(c, &r, opts, &fd, msg, sizeof(msg));
		uvd_unlock(c->srv);
		if (c->srv->verbose)
			uvd_log("client %u: engine at %u.%u.%u.%u%s%s%s%s", c->id, r.ipv4 >> 24, (r.ipv4 >> 16) & 0xff,
				(r.ipv4 >> 8) & 0xff, r.ipv4 & 0xff, rc ? ": " : "", rc ? msg : "",
				!rc && r.opts_len ? ", options " : "", !rc && r.opts_len ? opts : "");
		return uvd_reply_fd(c, &h, rc, &r, sizeof(r), opts, r.opts_len, fd);
	}
	case UVD_OP_COUNTERS: {
		struct uvd_counters_rep r = { 0 };
		struct emu_dev *emu = emu_device_from_shim(c->srv->shim);
		if (plen != 0)
			return -EPROTO;
		if (!emu)
			return uvd_send(c->ctl, h.op, h.seq, -EOPNOTSUPP, &r, sizeof(r), NULL, 0, -1);
		struct emu_counters *e = malloc(sizeof(*e));
		if (!e)
			return uvd_send(c->ctl, h.op, h.seq, -ENOMEM, &r, sizeof(r), NULL, 0, -1);
		emu_counters(emu, e);
		struct emu_tp_counters tc;
		emu_tp_counters(emu, &tc);
		r = (struct uvd_counters_rep){ .mmio_reads = e->mmio_reads, .mmio_writes = e->mmio_writes,
					       .uar_doorbells = e->uar_doorbells, .send_doorbells = e->send_doorbells,
					       .cq_doorbells = e->cq_doorbells, .bf_writes = e->bf_writes,
					       .dma_reads = e->dma_reads, .dma_writes = e->dma_writes,
					       .rx_packets = tc.rx_pkts };
		for (int t = 0; t < EMU_OBJ_NTYPES; t++)
			r.objects_live += e->objects_live[t];
		free(e);
		return uvd_send(c->ctl, h.op, h.seq, 0, &r, sizeof(r), NULL, 0, -1);
	}
	case UVD_OP_PORT_ADDRS: {
		struct uvd_addrs_rep r = { 0 };
		uvd_lock(c->srv);
		int n2 = mx5_port_addrs(d->mx5, 1, r.addrs, UVD_MAX_ADDRS);
		uvd_unlock(c->srv);
		r.n = n2 > 0 ? (uint32_t)n2 : 0;
		return uvd_send(c->ctl, h.op, h.seq, 0, &r, sizeof(r), NULL, 0, -1);
	}
	case UVD_OP_NEIGH: {
		struct uvd_neigh q;
		struct uvd_neigh_rep r = { 0 };
		if (uvd_take(p, plen, &q, sizeof(q)))
			return -EPROTO;
		uvd_lock(c->srv);
		int rc = mx5_port_neigh(d->mx5, q.addr, r.mac);
		uvd_unlock(c->srv);
		return uvd_send(c->ctl, h.op, h.seq, rc, &r, sizeof(r), NULL, 0, -1);
	}
	default:
		return -EPROTO;
	}
}

static int uvd_hello(struct uvd_client *c, const uint8_t *b, size_t n)
{
	struct uvd_hdr h;
	struct uvd_hello q;
	if (n != sizeof(h) + sizeof(q))
		return -EPROTO;
	memcpy(&h, b, sizeof(h));
	memcpy(&q, b + sizeof(h), sizeof(q));
	if (h.op != UVD_OP_HELLO || h.len != n)
		return -EPROTO;
	struct uvd_hello_rep r = { .version = UVD_VERSION };
	/* a client that knows only the ring cannot run an engine: served only without them */
	bool ring_only = q.version == UVD_VERSION_RING_ONLY && !c->srv->engines;
	if (q.version != UVD_VERSION && !ring_only) {
		if (c->srv->verbose)
			uvd_log("client %u: protocol version %u refused (this daemon speaks %u%s)", c->id, q.version,
				UVD_VERSION, c->srv->engines ? "; its clients run engines: update the client, or start "
				"the daemon with -R" : "");
		uvd_send(c->ctl, h.op, h.seq, -EPROTONOSUPPORT, &r, sizeof(r), NULL, 0, -1);
		return -EPROTO;
	}
	r.version = q.version;
	int sp[2];
	int rc = plat_lmsg_socketpair(sp);
	if (rc)
		return rc;
	int sz = 1 << 20;
	setsockopt(sp[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(sp[0], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	c->evs = sp[0];
	r.page_size = (uint32_t)c->srv->shim->page_size;
	r.bar_len = c->srv->bar0.len;
	r.comp_eqn = c->srv->comp_eqn;
	r.daemon_pid = (int32_t)getpid();
	r.uar_page_bytes = (uint32_t)c->srv->uar_page_bytes;
	r.kext_fn = c->srv->kext_fn;
	r.features = UVD_FEAT_PIN_SHARED | (c->srv->shared_only ? UVD_FEAT_SHARED_ONLY : 0) |
		     (c->srv->engines ? UVD_FEAT_ENGINE : 0);
	r.pci = c->srv->shim->pci;
	rc = uvd_send(c->ctl, h.op, h.seq, 0, &r, sizeof(r), NULL, 0, sp[1]);
	close(sp[1]);
	return rc;
}

static void *uvd_client_thread(void *arg)
{
	struct uvd_client *c = arg;
	struct uvd_server *srv = c->srv;
	uint8_t *buf = malloc(UVD_MAX_MSG);
	/* a connection that sends no HELLO within UVD_HELLO_MS is closed: until then it
	 * counts only against UVD_HELLO_PENDING, never against -c, so silent connections
	 * cannot shut real clients out */
	struct pollfd hp = { .fd = c->ctl, .events = POLLIN };
	ssize_t n = buf && poll(&hp, 1, UVD_HELLO_MS) == 1 ? plat_lmsg_recv(c->ctl, buf, UVD_MAX_MSG, NULL, 0) : -1;
	if (n > 0) {
		uvd_lock(srv);
		unsigned have = srv->nclients;
		if (have < srv->lim.conns) {
			srv->npending--;
			srv->nclients++;
			c->hello_done = true;
		}
		uvd_unlock(srv);
		if (!c->hello_done) {
			uvd_log("client %u (pid %d) refused: %u connections (at most %u, -c)", c->id, (int)c->pid,
				have, srv->lim.conns);
			goto out;
		}
	}
	if (n <= 0 || uvd_hello(c, buf, (size_t)n)) {
		if (srv->verbose)
			uvd_log("client %u (pid %d): no valid HELLO", c->id, (int)c->pid);
		goto out;
	}
	/* This thread performs the client's doorbells: it is part of the device, and runs
	 * real-time as the emulator's device thread does (docs/architecture.md,
	 * "Scheduling"), or a spinning client would delay each doorbell by a time slice. */
	plat_thread_set_name("uvd-client");
	/* Above a real-time daemon, as the emulator's device thread is (rx_thread.c
	 * device_thread_sched): SCHED_FIFO never preempts at equal priority, so under
	 * chrt -f 1 a client spinning on its CQ at the daemon's priority would starve the
	 * thread that performs its doorbells. */
	struct sched_param sp = { .sched_priority = 0 };
	int policy = SCHED_OTHER;
	if (pthread_getschedparam(pthread_self(), &policy, &sp) != 0 || (policy != SCHED_FIFO && policy != SCHED_RR) ||
	    sp.sched_priority < 1)
		sp.sched_priority = 1;
	else if (sp.sched_priority < sched_get_priority_max(SCHED_FIFO))
		sp.sched_priority++;
	int rt = plat_thread_set_realtime(sp.sched_priority);
	if (srv->verbose)
		uvd_log("client %u: pid %d uid %u%s", c->id, (int)c->pid, (unsigned)c->uid,
			rt ? " (SCHED_FIFO refused)" : "");
	/* Stores come through the ring.  After one, the thread keeps looking at the ring
	 * for srv->spin_ns (a burst of posts, the next ping-pong turn) before it announces
	 * that it sleeps (awake = 0) and blocks on the sockets; the client kicks the event
	 * socket only then (uvd_proto.h, rule 3). */
	uint64_t busy_at = uvd_now_ns();
	unsigned spins = 0;
	for (;;) {
		if (c->ring) {
			int k = uvd_ring_drain(c);
			if (k < 0) {
				uvd_log("client %u: doorbell ring producer index out of range: disconnected", c->id);
				break;
			}
			if (k > 0)
				busy_at = uvd_now_ns();
		}
		int timeout = 0;
		if (!c->ring) {
			timeout = -1;
		} else if (!srv->spin_ns || uvd_now_ns() - busy_at >= srv->spin_ns) {
			__atomic_store_n(&c->ring->awake, 0, __ATOMIC_RELAXED);
			uvd_ring_fence_wake_check();
			if (uvd_ring_prod(&c->ring->prod) != c->ring_cons) {
				__atomic_store_n(&c->ring->awake, 1, __ATOMIC_RELAXED);
				continue;
			}
			timeout = -1;
		} else if (++spins & 63) {
			continue;   /* the sockets every 64 looks: requests are rare */
		}
		/* a client that holds nothing -- no object, no memory -- and says nothing for
		 * idle_s is closed: an idle connection must not hold a thread for ever */
		bool holds = c->nobj || c->nmem || c->ring;
		int ptimeout = timeout;
		if (timeout < 0 && !holds)
			ptimeout = (int)srv->lim.idle_s * 1000;
		struct pollfd p[3] = { { .fd = c->ctl, .events = POLLIN }, { .fd = c->evs, .events = POLLIN },
				       { .fd = c->exit_fd, .events = POLLIN } };
		int pr = poll(p, c->exit_fd >= 0 ? 3 : 2, ptimeout);
		if (pr == 0 && !holds && uvd_now_ns() - c->last_req_ns >= (uint64_t)srv->lim.idle_s * 1000000000u) {
			uvd_log("client %u (pid %d): idle for %u s holding nothing: disconnected (-i)", c->id, (int)c->pid,
				srv->lim.idle_s);
			break;
		}
		if (timeout < 0 && c->ring) {
			__atomic_store_n(&c->ring->awake, 1, __ATOMIC_RELAXED);
			busy_at = uvd_now_ns();
		}
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (c->exit_fd >= 0 && p[2].revents) {
			uvd_log("client %u: process %d exited (a child of it may hold the connection): disconnected",
				c->id, (int)c->pid);
			break;
		}
		if (p[1].revents & POLLIN) {
			/* kicks: the ring is looked at on the next pass */
			for (int k = 0; k < 64; k++) {
				n = plat_lmsg_recv(c->evs, buf, UVD_MAX_MSG, NULL, PLAT_LMSG_DONTWAIT);
				if (n < 0)
					break;
				struct uvd_hdr h;
				if ((size_t)n != sizeof(h))
					goto out;
				memcpy(&h, buf, sizeof(h));
				if (h.op != UVD_OP_KICK || h.len != sizeof(h))
					goto out;
			}
		} else if (p[1].revents & (POLLHUP | POLLERR)) {
			break;
		}
		if (p[0].revents & POLLIN) {
			int rfd = -1;   /* a descriptor travels only with PIN_SHARED; closed after any request */
			n = plat_lmsg_recv(c->ctl, buf, UVD_MAX_MSG, &rfd, 0);
			if (n <= 0 || (size_t)n > UVD_MAX_MSG) {
				if (rfd >= 0)
					close(rfd);
				break;
			}
			struct uvd_hdr rh = { 0 };
			memcpy(&rh, buf, (size_t)n < sizeof(rh) ? (size_t)n : sizeof(rh));
			if (rfd >= 0 && ((size_t)n < sizeof(rh) || rh.op != UVD_OP_PIN_SHARED)) {
				close(rfd);   /* only PIN_SHARED carries one */
				if (srv->verbose)
					uvd_log("client %u: a descriptor came with a request that takes none: disconnected",
						c->id);
				break;
			}
			c->last_req_ns = uvd_now_ns();
			int rc = uvd_request(c, buf, (size_t)n, rfd);
			if (rfd >= 0)
				close(rfd);
			if (rc) {
				if (srv->verbose)
					uvd_log("client %u: protocol error (%s): disconnected", c->id, strerror(-rc));
				break;
			}
		} else if (p[0].revents & (POLLHUP | POLLERR)) {
			break;
		}
	}
out:
	free(buf);
	/* dead: no event is routed to it, and its cleanup takes the device lock a few
	 * objects at a time (uvd_policy_destroy_all) */
	uvd_lock(srv);
	c->dead = true;
	uvd_unlock(srv);
	uvd_policy_destroy_all(c);
	uvd_lock(srv);
	for (struct uvd_client **pp = &srv->clients; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (c->hello_done)
		srv->nclients--;
	else
		srv->npending--;
	uvd_unlock(srv);
	close(c->ctl);
	if (c->evs >= 0)
		close(c->evs);
	if (c->exit_fd >= 0)
		close(c->exit_fd);
	if (c->ring)
		munmap(c->ring, c->ring_len);
	free(c->objs);
	free(c->mcg);
	free(c->mem);
	free(c);
	return NULL;
}

void uvd_client_start(struct uvd_server *srv, int fd)
{
	pid_t pid = 0;
	uid_t uid = 0;
	int rc = plat_peer_cred(fd, &pid, &uid);
	if (rc || (uid != geteuid() && uid != 0)) {
		uvd_log("connection refused: %s", rc ? strerror(-rc) : "another user");
		close(fd);
		return;
	}
	struct uvd_client *c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->srv = srv;
	c->ctl = fd;
	c->evs = -1;
	/* The connection is the process's that made it: a child that inherits it must not
	 * keep it once that process exits, or the pid, given to another process, would be
	 * the one the daemon reads and writes (PIN, the emulator's DMA) for the child. */
	c->exit_fd = plat_peer_exit_fd(fd, pid);
	if (c->exit_fd < 0 && c->exit_fd != -ENOSYS) {
		uvd_log("connection of pid %d refused: %s", (int)pid, strerror(-c->exit_fd));
		close(fd);
		free(c);
		return;
	}
	c->pid = pid;
	c->uid = uid;
	uvd_uar_groups_init(&c->uar_set, srv->uar_per_group);
	c->last_req_ns = uvd_now_ns();
	uvd_lock(srv);
	/* connection quotas (-C, and UVD_HELLO_PENDING handshakes at once; -c counts a
	 * connection once it sent HELLO): past them the connection is closed at once, so
	 * a flood of idle connections costs no thread and no descriptor */
	unsigned same = 0;
	for (struct uvd_client *o = srv->clients; o; o = o->next)
		same += o->pid == pid;
	if (srv->npending >= UVD_HELLO_PENDING || same >= srv->lim.conns_per_pid) {
		static uint64_t said_ns;
		bool say = uvd_now_ns() - said_ns > 1000000000u;
		uvd_unlock(srv);
		if (say) {
			said_ns = uvd_now_ns();
			uvd_log("connection of pid %d refused: %u awaiting HELLO (at most %u), %u of this process "
				"(at most %u, -C)", (int)pid, srv->npending, UVD_HELLO_PENDING, same,
				srv->lim.conns_per_pid);
		}
		close(fd);
		if (c->exit_fd >= 0)
			close(c->exit_fd);
		free(c);
		return;
	}
	srv->npending++;
	c->id = ++srv->next_client;
	c->next = srv->clients;
	srv->clients = c;
	uvd_unlock(srv);
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&c->thread, &a, uvd_client_thread, c)) {
		uvd_lock(srv);
		srv->clients = c->next;
		srv->npending--;
		uvd_unlock(srv);
		close(fd);
		if (c->exit_fd >= 0)
			close(c->exit_fd);
		free(c);
	}
	pthread_attr_destroy(&a);
}
