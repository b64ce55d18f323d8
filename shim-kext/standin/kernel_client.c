/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* This process as a task of the stand-in kernel daemon (kernel_client.h,
 * kernel_proto.h).  One connection, made on first use (again in a child after fork,
 * which is a task of its own); requests and replies under one lock.  A thread reads the
 * async channel: results for a notification port go to its dispatch queue
 * (standin_port_send, as the Mach message would), and a revoked mapping is redirected
 * to zeroed memory in place (mmap MAP_FIXED over it, as IOMemoryMap::redirect leaves a
 * task's mapping pointing at a harmless page), then acknowledged. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "hw/platform/local_msg.h"
#include "shim-kext/standin/kernel_client.h"
#include "shim-kext/standin/kernel_proto.h"
#include "shim-kext/standin/standin.h"

#define SKC_MAX_MAPS 512u

/* An entry is taken (pending) before SK_MAP goes to the kernel, so that a REVOKE the
 * kernel sends once it registered the window -- possibly before the reply is read
 * here -- finds it: `revoked` then makes skc_map redirect the mapping as soon as it
 * exists. */
struct skc_map {
	bool used, pending, revoked;
	uint32_t conn, memory_type;
	uint64_t addr, size;
};

static pthread_mutex_t g_req = PTHREAD_MUTEX_INITIALIZER;     /* one request at a time */
static pthread_mutex_t g_maps_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_fd = -1, g_async = -1;
static pid_t g_pid;
static struct skc_map g_maps[SKC_MAX_MAPS];

bool skc_remote(void)
{
	const char *p = getenv("UVERBS_KEXT_STANDIN_KERNEL");

	return p && *p;
}

static void *async_main(void *arg)
{
	int fd = (int)(intptr_t)arg;
	uint8_t buf[sizeof(struct sk_irq) + 64];

	for (;;) {
		ssize_t n = plat_lmsg_recv(fd, buf, sizeof(buf), NULL, 0);
		const struct sk_msg *m = (const struct sk_msg *)buf;

		if (n <= 0)
			return NULL;                     /* the kernel is gone */
		if ((size_t)n == sizeof(struct sk_irq) && m->op == SK_A_IRQ) {
			const struct sk_irq *q = (const struct sk_irq *)buf;
			standin_port_send((mach_port_t)q->m.a, q->ref, q->args, q->m.b);
		} else if ((size_t)n == sizeof(struct sk_msg) && m->op == SK_A_REVOKE) {
			struct sk_msg ack = *m;
			pthread_mutex_lock(&g_maps_lock);
			for (unsigned i = 0; i < SKC_MAX_MAPS; i++) {
				struct skc_map *x = &g_maps[i];
				if (!x->used || x->conn != m->conn || x->memory_type != m->a)
					continue;
				if (x->pending)
					x->revoked = true;       /* skc_map redirects it */
				else
					mmap((void *)(uintptr_t)x->addr, x->size, PROT_READ | PROT_WRITE,
					     MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			}
			pthread_mutex_unlock(&g_maps_lock);
			ack.op = SK_A_REVOKED;
			ack.len = sizeof(ack);
			struct iovec iov = { &ack, sizeof(ack) };
			plat_lmsg_send(fd, &iov, 1, -1, 0);
		}
	}
}

/* Under g_req: connected as this process, or connect now. */
static kern_return_t ensure(void)
{
	const char *path = getenv("UVERBS_KEXT_STANDIN_KERNEL");
	struct sockaddr_un sa;
	struct sk_msg m;
	int sv[2], fd;
	pthread_t th;

	if (g_fd >= 0 && g_pid == getpid())
		return KERN_SUCCESS;
	if (g_fd >= 0) {
		/* A child after fork: the parent's task is not ours. */
		close(g_fd);
		close(g_async);
		g_fd = g_async = -1;
		pthread_mutex_lock(&g_maps_lock);
		memset(g_maps, 0, sizeof(g_maps));
		pthread_mutex_unlock(&g_maps_lock);
	}
	if (!path || strlen(path) >= sizeof(sa.sun_path))
		return kIOReturnNoDevice;
	fd = plat_lmsg_socket();
	if (fd < 0)
		return kIOReturnNoResources;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return kIOReturnNotResponding;   /* no kernel there */
	}
	if (plat_lmsg_socketpair(sv) < 0) {
		close(fd);
		return kIOReturnNoResources;
	}
	memset(&m, 0, sizeof(m));
	m.len = sizeof(m);
	m.op = SK_HELLO;
	m.a = SK_VERSION;
	struct iovec iov = { &m, sizeof(m) };
	if (plat_lmsg_send(fd, &iov, 1, sv[1], 0) < 0 || plat_lmsg_recv(fd, &m, sizeof(m), NULL, 0) != sizeof(m) ||
	    m.op != SK_HELLO || m.a != SK_VERSION) {
		close(fd);
		close(sv[0]);
		close(sv[1]);
		return kIOReturnNotResponding;
	}
	close(sv[1]);
	if (pthread_create(&th, NULL, async_main, (void *)(intptr_t)sv[0])) {
		close(fd);
		close(sv[0]);
		return kIOReturnNoResources;
	}
	pthread_detach(th);
	g_fd = fd;
	g_async = sv[0];
	g_pid = getpid();
	return KERN_SUCCESS;
}

/* One request (m plus tail) and its reply (into rep, cap bytes; *fd_out a descriptor). */
static kern_return_t rpc(struct sk_msg *m, size_t len, const void *tail, size_t tail_len, void *rep, size_t cap,
			 ssize_t *got, int *fd_out)
{
	struct iovec iov[2] = { { m, len }, { (void *)(uintptr_t)tail, tail_len } };
	kern_return_t kr;
	ssize_t n;

	if (fd_out)
		*fd_out = -1;
	pthread_mutex_lock(&g_req);
	kr = ensure();
	if (kr != KERN_SUCCESS) {
		pthread_mutex_unlock(&g_req);
		return kr;
	}
	m->len = (uint32_t)(len + tail_len);
	if (plat_lmsg_send(g_fd, iov, tail_len ? 2 : 1, -1, 0) < 0) {
		pthread_mutex_unlock(&g_req);
		return kIOReturnNotResponding;
	}
	n = plat_lmsg_recv(g_fd, rep, cap, fd_out, 0);
	pthread_mutex_unlock(&g_req);
	if (n < (ssize_t)sizeof(struct sk_msg) || (size_t)n > cap) {
		if (fd_out && *fd_out >= 0) {
			close(*fd_out);
			*fd_out = -1;
		}
		return kIOReturnNotResponding;
	}
	if (got)
		*got = n;
	return ((struct sk_msg *)rep)->status;
}

static kern_return_t simple(uint32_t op, uint32_t conn, uint32_t a, uint32_t b, uint64_t x, struct sk_msg *rep)
{
	struct sk_msg m;

	memset(&m, 0, sizeof(m));
	m.op = op;
	m.conn = conn;
	m.a = a;
	m.b = b;
	m.x = x;
	return rpc(&m, sizeof(m), NULL, 0, rep, sizeof(*rep), NULL, NULL);
}

kern_return_t skc_count(unsigned *n)
{
	struct sk_msg r;
	kern_return_t kr = simple(SK_COUNT, 0, 0, 0, 0, &r);

	*n = kr == KERN_SUCCESS ? r.a : 0;
	return kr;
}

kern_return_t skc_open(unsigned index, uint32_t type, uint32_t *conn)
{
	struct sk_msg r;
	kern_return_t kr = simple(SK_OPEN, 0, index, type, 0, &r);

	*conn = kr == KERN_SUCCESS ? r.conn : 0;
	return kr == KERN_SUCCESS && !r.conn ? kIOReturnError : kr;
}

static void forget_maps(uint32_t conn, uint32_t memory_type, bool all)
{
	pthread_mutex_lock(&g_maps_lock);
	for (unsigned i = 0; i < SKC_MAX_MAPS; i++) {
		struct skc_map *x = &g_maps[i];
		if (x->used && x->conn == conn && (all || x->memory_type == memory_type)) {
			if (!x->pending)   /* a pending one: skc_map finds it gone, unmaps */
				munmap((void *)(uintptr_t)x->addr, x->size);
			x->used = false;
		}
	}
	pthread_mutex_unlock(&g_maps_lock);
}

kern_return_t skc_close(uint32_t conn)
{
	struct sk_msg r;
	kern_return_t kr = simple(SK_CLOSE, conn, 0, 0, 0, &r);

	/* The task's mappings of the connection's memory go with it (IOServiceClose). */
	forget_maps(conn, 0, true);
	return kr;
}

kern_return_t skc_call(uint32_t conn, struct standin_method_args *a)
{
	struct {
		struct sk_call_rep r;
		uint8_t out[SK_MAX_STRUCT];
	} rep;
	struct sk_call q;
	ssize_t got = 0;
	kern_return_t kr;

	if (a->struct_in_size > SK_MAX_STRUCT || a->struct_out_size > SK_MAX_STRUCT)
		return kIOReturnBadArgument;
	memset(&q, 0, sizeof(q));
	q.m.op = SK_CALL;
	q.m.conn = conn;
	q.m.a = a->selector;
	q.m.b = (a->struct_in_ool ? SK_CALL_IN_OOL : 0) | (a->struct_out_ool ? SK_CALL_OUT_OOL : 0) |
		(a->wake_port != MACH_PORT_NULL ? SK_CALL_ASYNC : 0);
	q.scalar_in = a->scalar_in_count;
	q.scalar_out = a->scalar_out_count;
	q.wake_port = a->wake_port;
	q.ref_count = a->async_ref_count;
	for (uint32_t i = 0; a->async_ref && i < a->async_ref_count && i < SK_REF_COUNT; i++)
		q.ref[i] = a->async_ref[i];
	q.out_size = a->struct_out_size;
	q.in_size = a->struct_in_size;
	kr = rpc(&q.m, sizeof(q), a->struct_in, a->struct_in_size, &rep, sizeof(rep), &got, NULL);
	if (got >= (ssize_t)sizeof(rep.r)) {
		size_t n = rep.r.m.x;
		if (n > a->struct_out_size || sizeof(rep.r) + n != (size_t)got)
			return kIOReturnIPCError;
		if (n && a->struct_out)
			memcpy(a->struct_out, rep.out, n);
		a->struct_out_size = n;
		a->scalar_out_count = rep.r.m.a;
	}
	return kr;
}

kern_return_t skc_map(uint32_t conn, uint32_t memory_type, IOOptionBits options, uint64_t *addr, uint64_t *size)
{
	struct sk_msg m, r;
	int fd = -1;
	kern_return_t kr;
	void *p;

	unsigned slot = SKC_MAX_MAPS;
	pthread_mutex_lock(&g_maps_lock);
	for (unsigned i = 0; i < SKC_MAX_MAPS; i++)
		if (!g_maps[i].used) {
			g_maps[i] = (struct skc_map){ .used = true, .pending = true, .conn = conn,
						      .memory_type = memory_type };
			slot = i;
			break;
		}
	pthread_mutex_unlock(&g_maps_lock);
	if (slot == SKC_MAX_MAPS)
		return kIOReturnNoResources;     /* untracked, a REVOKE could not reach it */

	memset(&m, 0, sizeof(m));
	m.op = SK_MAP;
	m.conn = conn;
	m.a = memory_type;
	m.b = options;
	kr = rpc(&m, sizeof(m), NULL, 0, &r, sizeof(r), NULL, &fd);
	pthread_mutex_lock(&g_maps_lock);
	struct skc_map *x = &g_maps[slot];
	bool ours = x->used && x->pending && x->conn == conn && x->memory_type == memory_type;
	if (kr != KERN_SUCCESS || fd < 0 || !ours) {
		if (ours)
			x->used = false;
		pthread_mutex_unlock(&g_maps_lock);
		if (fd >= 0)
			close(fd);
		/* the window, registered in the kernel, goes with the connection */
		return kr != KERN_SUCCESS ? kr : !ours ? kIOReturnNotAttached : kIOReturnIPCError;
	}
	/* The kernel's pages themselves: the BAR's memfd at the window's offset, or the
	 * DMA buffer's.  Mapped under the lock, so a REVOKE waits for the entry. */
	p = mmap(NULL, r.x, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)r.y);
	close(fd);
	if (p == MAP_FAILED) {
		x->used = false;
		pthread_mutex_unlock(&g_maps_lock);
		return kIOReturnNoMemory;
	}
	if (x->revoked)       /* revoked already: what the REVOKE handler would have done */
		mmap(p, r.x, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	*x = (struct skc_map){ .used = true, .conn = conn, .memory_type = memory_type,
			       .addr = (uint64_t)(uintptr_t)p, .size = r.x };
	pthread_mutex_unlock(&g_maps_lock);
	*addr = (uint64_t)(uintptr_t)p;
	*size = r.x;
	return KERN_SUCCESS;
}

kern_return_t skc_unmap(uint32_t conn, uint32_t memory_type, uint64_t addr)
{
	struct sk_msg r;

	pthread_mutex_lock(&g_maps_lock);
	for (unsigned i = 0; i < SKC_MAX_MAPS; i++) {
		struct skc_map *x = &g_maps[i];
		if (x->used && x->conn == conn && x->memory_type == memory_type && x->addr == addr) {
			munmap((void *)(uintptr_t)x->addr, x->size);
			x->used = false;
		}
	}
	pthread_mutex_unlock(&g_maps_lock);
	return simple(SK_UNMAP, conn, memory_type, 0, 0, &r);
}

void skc_mmio(uint32_t conn, int op, uint64_t off, unsigned size)
{
	struct sk_msg r;

	simple(SK_MMIO, conn, (uint32_t)op, size, off, &r);
}

uint32_t skc_ipv4(uint32_t conn)
{
	struct sk_msg r;

	return simple(SK_EMU_INFO, conn, 0, 0, 0, &r) == KERN_SUCCESS ? r.a : 0;
}
