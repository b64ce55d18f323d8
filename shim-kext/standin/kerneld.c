/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvshim-kerneld: the IOKit stand-in's kernel in a process of its own (README.md beside
 * this file, kernel_proto.h for what travels).  It holds the kext (kext_standin.c: the
 * core's state and the emulated functions) as a Mac's kernel does, and every process
 * that sets UVERBS_KEXT_STANDIN_KERNEL to its socket reaches it as a task: an owner
 * (tools/uvd, a verbs program) and guests (uvd's clients) meet the same function.
 *
 *   uvshim-kerneld -s PATH [-v]     UVERBS_KEXT_STANDIN configures the functions
 *
 * One thread per task serves its requests in order; a task whose connection closes is
 * dead, and its connections are closed as clientDied does.  A guest's revoked window
 * (REVOKE, its own UNMAP_BAR, the owner's death) is redirected in the guest's task
 * before the call that revoked it returns, as IOMemoryMap::redirect does, and the BAR
 * hook's messages through it are refused from the moment of the revocation.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "hw/emu/emu.h"
#include "hw/platform/local_msg.h"
#include "hw/platform/peer.h"
#include "shim-kext/include/uvshim_abi.h"
#include "shim-kext/standin/kernel_proto.h"
#include "shim-kext/standin/standin.h"

#define KD_MAX_CONNS 256u
#define KD_MAX_MAPS 64u
#define KD_MAX_PENDING 256u

struct kd_task {
	int fd, async_fd;
	unsigned refs;                  /* its thread, pending redirects */
	bool dead;
	pthread_mutex_t async_lock;     /* one redirect at a time on its channel */
	uint64_t seq;
	struct standin_task cred;
};

struct kd_map {
	bool used, window, revoked;
	uint32_t memory_type;
	uint64_t off, len;
};

struct kd_conn {
	uint32_t id;                    /* 0: free */
	struct kd_task *task;
	struct standin_client *c;
	struct standin_kext *k;         /* the service reference the open took */
	bool guest;
	struct kd_map map[KD_MAX_MAPS];
};

struct kd_pending {
	struct kd_task *task;
	uint32_t conn, memory_type;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kd_conn g_conn[KD_MAX_CONNS];
static uint32_t g_next_id = 1;
static struct kd_pending g_pending[KD_MAX_PENDING];
static unsigned g_npending;
static struct sk_stats g_stats;
static bool g_verbose;

static void say(const char *fmt, ...)
{
	va_list ap;

	if (!g_verbose)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "uvshim-kerneld: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void task_put(struct kd_task *t)
{
	bool last;

	pthread_mutex_lock(&g_lock);
	last = --t->refs == 0;
	pthread_mutex_unlock(&g_lock);
	if (!last)
		return;
	close(t->fd);
	if (t->async_fd >= 0)
		close(t->async_fd);
	pthread_mutex_destroy(&t->async_lock);
	free(t);
}

/* Under g_lock. */
static struct kd_conn *conn_of(struct kd_task *t, uint32_t id)
{
	for (unsigned i = 0; i < KD_MAX_CONNS; i++)
		if (g_conn[i].id && g_conn[i].id == id && g_conn[i].task == t)
			return &g_conn[i];
	return NULL;
}

/* ---- what the kernel half asks of its host (standin.h) ---- */

/* sendAsyncResult64 to a task's port: the port named in the call was rewritten to
 * (connection id's low 7 bits) << 25 | (connection slot + 1) << 16 | the task's own
 * port name (call below), so a result for a closed connection does not reach the task
 * whose connection took its slot since (unless 128 connection ids apart). */
#define KD_PORT_GEN(id) ((uint32_t)(id) & 0x7fu)
void standin_port_send(mach_port_t port, const uint64_t *ref, const uint64_t *args, uint32_t nargs)
{
	unsigned slot = ((port >> 16) & 0x1ffu) - 1u;
	uint32_t gen = port >> 25;
	struct sk_irq msg;
	int fd = -1;

	if (slot >= KD_MAX_CONNS)
		return;
	memset(&msg, 0, sizeof(msg));
	msg.m.len = sizeof(msg);
	msg.m.op = SK_A_IRQ;
	msg.m.a = port & 0xffffu;
	msg.m.b = nargs < SK_IRQ_NARGS ? nargs : SK_IRQ_NARGS;
	memcpy(msg.ref, ref, sizeof(msg.ref));
	msg.ref[0] = msg.m.a;
	for (uint32_t i = 0; i < msg.m.b; i++)
		msg.args[i] = args[i];
	pthread_mutex_lock(&g_lock);
	if (g_conn[slot].id && KD_PORT_GEN(g_conn[slot].id) == gen && !g_conn[slot].task->dead)
		fd = g_conn[slot].task->async_fd;
	if (fd >= 0) {
		/* A task that does not read its channel loses messages, as a full port does. */
		struct iovec iov = { &msg, sizeof(msg) };
		plat_lmsg_send(fd, &iov, 1, -1, PLAT_LMSG_DONTWAIT);
	}
	pthread_mutex_unlock(&g_lock);
}

/* Called by the core under the function's lock: the window stops reaching the BAR now;
 * the task is told once the call in progress has let the lock go (flush_revokes). */
void standin_revoke_mapping(struct standin_client *guest, uint32_t memory_type)
{
	pthread_mutex_lock(&g_lock);
	for (unsigned i = 0; i < KD_MAX_CONNS; i++) {
		struct kd_conn *c = &g_conn[i];
		if (!c->id || c->c != guest)
			continue;
		for (unsigned m = 0; m < KD_MAX_MAPS; m++)
			if (c->map[m].used && c->map[m].memory_type == memory_type)
				c->map[m].revoked = true;
		if (g_npending < KD_MAX_PENDING && !c->task->dead) {
			c->task->refs++;
			g_pending[g_npending++] = (struct kd_pending){ c->task, c->id, memory_type };
		}
	}
	pthread_mutex_unlock(&g_lock);
}

/* Redirect each revoked mapping in its task and wait for the task to say so. */
static void flush_revokes(void)
{
	for (;;) {
		struct kd_pending p;
		struct sk_msg msg, ack;

		pthread_mutex_lock(&g_lock);
		if (!g_npending) {
			pthread_mutex_unlock(&g_lock);
			return;
		}
		p = g_pending[--g_npending];
		pthread_mutex_unlock(&g_lock);
		pthread_mutex_lock(&p.task->async_lock);
		memset(&msg, 0, sizeof(msg));
		msg.len = sizeof(msg);
		msg.op = SK_A_REVOKE;
		msg.conn = p.conn;
		msg.a = p.memory_type;
		msg.x = ++p.task->seq;
		struct iovec iov = { &msg, sizeof(msg) };
		pthread_mutex_lock(&g_lock);
		bool dead = p.task->dead;
		pthread_mutex_unlock(&g_lock);
		if (!dead && plat_lmsg_send(p.task->async_fd, &iov, 1, -1, 0) == 0) {
			struct timespec t0, t1;
			__atomic_add_fetch(&g_stats.revokes_sent, 1, __ATOMIC_RELAXED);
			clock_gettime(CLOCK_MONOTONIC, &t0);
			for (;;) {
				struct pollfd pf = { p.task->async_fd, POLLIN, 0 };
				long waited;
				clock_gettime(CLOCK_MONOTONIC, &t1);
				waited = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
				if (waited >= SK_REVOKE_ACK_MS || poll(&pf, 1, (int)(SK_REVOKE_ACK_MS - waited)) <= 0) {
					say("task %d did not confirm the redirect of a revoked window", (int)p.task->cred.pid);
					break;
				}
				ssize_t n = plat_lmsg_recv(p.task->async_fd, &ack, sizeof(ack), NULL, 0);
				if (n <= 0)
					break;
				if (n == (ssize_t)sizeof(ack) && ack.op == SK_A_REVOKED && ack.x == msg.x) {
					__atomic_add_fetch(&g_stats.revokes_acked, 1, __ATOMIC_RELAXED);
					break;
				}
			}
		}
		pthread_mutex_unlock(&p.task->async_lock);
		task_put(p.task);
	}
}

/* ---- requests ---- */

static int reply(struct kd_task *t, struct sk_msg *m, size_t len, const void *tail, size_t tail_len, int fd)
{
	struct iovec iov[2] = { { m, len }, { (void *)(uintptr_t)tail, tail_len } };

	m->len = (uint32_t)(len + tail_len);
	return plat_lmsg_send(t->fd, iov, tail_len ? 2 : 1, fd, 0);
}

static void do_open(struct kd_task *t, struct sk_msg *m)
{
	struct standin_kext *k = standin_kext_get(m->a);
	struct standin_client *c = NULL;
	IOReturn r;

	m->conn = 0;
	if (!k) {
		m->status = kIOReturnBadArgument;
		return;
	}
	r = standin_client_open(k, &t->cred, m->b, &c);
	if (r != kIOReturnSuccess) {
		standin_kext_put(k);
		m->status = r;
		return;
	}
	pthread_mutex_lock(&g_lock);
	for (unsigned i = 0; i < KD_MAX_CONNS; i++)
		if (!g_conn[i].id) {
			memset(&g_conn[i], 0, sizeof(g_conn[i]));
			g_conn[i].id = g_next_id++;
			g_conn[i].task = t;
			g_conn[i].c = c;
			g_conn[i].k = k;
			g_conn[i].guest = m->b == UVSHIM_CLIENT_TYPE_GUEST;
			m->conn = g_conn[i].id;
			break;
		}
	if (m->conn && m->b == UVSHIM_CLIENT_TYPE_GUEST)
		g_stats.guest_opens++;
	pthread_mutex_unlock(&g_lock);
	if (!m->conn) {
		standin_client_close(c);
		standin_kext_put(k);
		m->status = kIOReturnNoResources;
		return;
	}
	say("task %d opened kext:%u as %s (connection %u)", (int)t->cred.pid, m->a,
	    m->b == UVSHIM_CLIENT_TYPE_GUEST ? "a guest" : "the owner", m->conn);
	m->status = kIOReturnSuccess;
}

/* Close connection slot (already taken out of the table by the caller). */
static void close_conn(struct standin_client *c, struct standin_kext *k)
{
	standin_client_close(c);
	standin_kext_put(k);
}

static int take_conn(struct kd_task *t, uint32_t id, struct standin_client **c, struct standin_kext **k)
{
	struct kd_conn *kc;

	pthread_mutex_lock(&g_lock);
	kc = conn_of(t, id);
	if (kc) {
		*c = kc->c;
		*k = kc->k;
		kc->id = 0;
	}
	pthread_mutex_unlock(&g_lock);
	return kc ? 0 : -1;
}

static struct standin_client *client_of(struct kd_task *t, uint32_t id, unsigned *slot)
{
	struct kd_conn *kc;
	struct standin_client *c = NULL;

	pthread_mutex_lock(&g_lock);
	kc = conn_of(t, id);
	if (kc) {
		c = kc->c;
		if (slot)
			*slot = (unsigned)(kc - g_conn);
	}
	pthread_mutex_unlock(&g_lock);
	return c;
}

static void do_call(struct kd_task *t, struct sk_call *q, size_t got, uint8_t *out, size_t *out_len)
{
	struct standin_method_args a;
	uint64_t ref[SK_REF_COUNT];
	unsigned slot = 0;
	struct standin_client *c = client_of(t, q->m.conn, &slot);

	*out_len = 0;
	if (!c) {
		q->m.status = kIOReturnBadArgument;
		return;
	}
	if (got < sizeof(*q) || q->in_size > SK_MAX_STRUCT || got != sizeof(*q) + q->in_size ||
	    q->out_size > SK_MAX_STRUCT || q->ref_count > SK_REF_COUNT) {
		q->m.status = kIOReturnBadArgument;
		return;
	}
	memset(&a, 0, sizeof(a));
	a.selector = q->m.a;
	a.scalar_in_count = q->scalar_in;
	a.scalar_out_count = q->scalar_out;
	a.struct_in = q->in_size ? (const void *)(q + 1) : NULL;
	a.struct_in_size = q->in_size;
	a.struct_in_ool = (q->m.b & SK_CALL_IN_OOL) != 0;
	a.struct_out = q->out_size ? out : NULL;
	a.struct_out_size = q->out_size;
	a.struct_out_ool = (q->m.b & SK_CALL_OUT_OOL) != 0;
	if (q->m.b & SK_CALL_ASYNC) {
		/* The wake port is a right of the caller's task: the kernel's name for it
		 * carries the connection, so the result goes back to that task. */
		memcpy(ref, q->ref, sizeof(ref));
		a.wake_port = (mach_port_t)(KD_PORT_GEN(q->m.conn) << 25 | (slot + 1u) << 16 |
					    (q->wake_port & 0xffffu));
		a.async_ref = ref;
		a.async_ref_count = q->ref_count;
	}
	q->m.status = standin_external_method(c, &a);
	/* no output on failure: the buffer is the thread's, and may hold an earlier call's */
	*out_len = q->m.status == kIOReturnSuccess ? a.struct_out_size : 0;
	q->m.a = a.scalar_out_count;
}

static void do_map(struct kd_task *t, struct sk_msg *m, int *fd)
{
	struct standin_client *c = client_of(t, m->conn, NULL);
	struct standin_backing b = { -1, 0, false };
	uint64_t addr = 0, size = 0;

	*fd = -1;
	if (!c) {
		m->status = kIOReturnBadArgument;
		return;
	}
	m->status = standin_client_map(c, m->a, m->b, &addr, &size, &b);
	if (m->status != kIOReturnSuccess)
		return;
	if (b.fd < 0) {
		m->status = kIOReturnNoMemory;
		return;
	}
	*fd = b.fd;
	m->x = size;
	m->y = b.offset;
	pthread_mutex_lock(&g_lock);
	struct kd_conn *kc = conn_of(t, m->conn);
	if (kc && b.window) {
		struct kd_map *free_map = NULL, *same = NULL;
		for (unsigned i = 0; i < KD_MAX_MAPS; i++) {
			if (kc->map[i].used && kc->map[i].memory_type == m->a)
				same = &kc->map[i];
			else if (!kc->map[i].used && !free_map)
				free_map = &kc->map[i];
		}
		if (!same)
			same = free_map;
		if (same)
			*same = (struct kd_map){ true, true, false, m->a, b.offset, size };
	}
	pthread_mutex_unlock(&g_lock);
	m->a = b.window;
}

static void do_unmap(struct kd_task *t, struct sk_msg *m)
{
	struct standin_client *c = client_of(t, m->conn, NULL);

	if (!c) {
		m->status = kIOReturnBadArgument;
		return;
	}
	pthread_mutex_lock(&g_lock);
	struct kd_conn *kc = conn_of(t, m->conn);
	for (unsigned i = 0; kc && i < KD_MAX_MAPS; i++)
		if (kc->map[i].used && kc->map[i].memory_type == m->a)
			kc->map[i].used = false;
	pthread_mutex_unlock(&g_lock);
	m->status = standin_client_unmap(c, m->a);
}

/* The BAR hook: acted on only inside a live window this connection mapped. */
static void do_mmio(struct kd_task *t, struct sk_msg *m)
{
	struct emu_dev *e = NULL;
	bool guest = false;

	/* enum shim_mmio_op: a read (before the load), a store, a write-combining burst
	 * (a BlueFlame copy, up to a UAR page) */
	if (m->a > 2 || m->b == 0 || m->b > 4096) {
		pthread_mutex_lock(&g_lock);
		g_stats.mmio_refused++;
		pthread_mutex_unlock(&g_lock);
		m->status = kIOReturnBadArgument;
		return;
	}
	pthread_mutex_lock(&g_lock);
	struct kd_conn *kc = conn_of(t, m->conn);
	for (unsigned i = 0; kc && i < KD_MAX_MAPS; i++) {
		const struct kd_map *w = &kc->map[i];
		if (w->used && !w->revoked && m->x >= w->off && m->b <= w->len && m->x - w->off <= w->len - m->b) {
			e = standin_client_emu(kc->c);
			guest = kc->guest;
			break;
		}
	}
	if (!e)
		g_stats.mmio_refused++;
	else if (guest)
		g_stats.mmio_guest++;
	else
		g_stats.mmio_owner++;
	pthread_mutex_unlock(&g_lock);
	if (!e) {
		m->status = kIOReturnNotPermitted;
		return;
	}
	emu_mmio_access(e, (int)m->a, m->x, m->b);
	m->status = kIOReturnSuccess;
}

/* The task's groups, as kauth has them (/proc/PID/status "Groups:"). */
static void task_groups(struct standin_task *cred, gid_t gid)
{
	char path[64], line[1024];
	FILE *f;

	cred->gid = (uint32_t)gid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)cred->pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Gid:", 4) == 0) {
			/* real, effective, saved, fs: the effective one, as SO_PEERCRED's uid */
			unsigned long egid;
			if (sscanf(line + 4, "%*u %lu", &egid) == 1)
				cred->gid = (uint32_t)egid;
		} else if (strncmp(line, "Groups:", 7) == 0) {
			char *p = line + 7, *end;
			for (;;) {
				unsigned long v = strtoul(p, &end, 10);
				if (end == p || cred->ngroups >= STANDIN_TASK_GROUPS)
					break;
				cred->groups[cred->ngroups++] = (uint32_t)v;
				p = end;
			}
		}
	}
	fclose(f);
}

/* The task is gone (clientDied for each of its connections). */
static void task_died(struct kd_task *t)
{
	pthread_mutex_lock(&g_lock);
	t->dead = true;
	pthread_mutex_unlock(&g_lock);
	for (;;) {
		struct standin_client *c = NULL;
		struct standin_kext *k = NULL;
		pthread_mutex_lock(&g_lock);
		for (unsigned i = 0; i < KD_MAX_CONNS && !c; i++)
			if (g_conn[i].id && g_conn[i].task == t) {
				c = g_conn[i].c;
				k = g_conn[i].k;
				g_conn[i].id = 0;
			}
		pthread_mutex_unlock(&g_lock);
		if (!c)
			break;
		close_conn(c, k);
		flush_revokes();
	}
	say("task %d is gone", (int)t->cred.pid);
}

/* tasks connected now: one thread each, so at most KD_MAX_TASKS */
#define KD_MAX_TASKS 256u
static unsigned g_live_tasks;

static void *task_main(void *arg)
{
	struct kd_task *t = arg;
	static _Thread_local uint8_t buf[SK_MAX_MSG], out[SK_MAX_STRUCT];

	for (;;) {
		int fd = -1;
		ssize_t n = plat_lmsg_recv(t->fd, buf, sizeof(buf), &fd, 0);
		struct sk_msg *m = (struct sk_msg *)buf;
		size_t out_len = 0;
		int pass = -1;

		if (n <= 0 || (size_t)n > sizeof(buf) || (size_t)n < sizeof(*m)) {
			if (fd >= 0)
				close(fd);
			break;
		}
		if (m->op == SK_HELLO) {
			if (t->async_fd >= 0 || fd < 0) {
				if (fd >= 0)
					close(fd);
				break;
			}
			t->async_fd = fd;
			m->a = SK_VERSION;
			m->b = standin_kext_count();
			m->x = (uint64_t)getpid();
			m->status = kIOReturnSuccess;
			if (reply(t, m, sizeof(*m), NULL, 0, -1))
				break;
			continue;
		}
		if (fd >= 0)
			close(fd);
		if (t->async_fd < 0)
			break;                   /* HELLO first */
		m->status = kIOReturnSuccess;
		switch (m->op) {
		case SK_COUNT:
			m->a = standin_kext_count();
			break;
		case SK_OPEN:
			do_open(t, m);
			break;
		case SK_CLOSE: {
			struct standin_client *c;
			struct standin_kext *k;
			if (take_conn(t, m->conn, &c, &k) == 0)
				close_conn(c, k);
			else
				m->status = kIOReturnBadArgument;
			break;
		}
		case SK_CALL:
			do_call(t, (struct sk_call *)buf, (size_t)n, out, &out_len);
			m->x = out_len;
			n = sizeof(struct sk_call_rep);
			break;
		case SK_MAP:
			do_map(t, m, &pass);
			break;
		case SK_UNMAP:
			do_unmap(t, m);
			break;
		case SK_MMIO:
			do_mmio(t, m);
			break;
		case SK_EMU_INFO: {
			struct standin_client *c = client_of(t, m->conn, NULL);
			m->a = c ? emu_ipv4(standin_client_emu(c)) : 0;
			break;
		}
		case SK_STATS: {
			struct sk_stats s;
			pthread_mutex_lock(&g_lock);
			s = g_stats;
			pthread_mutex_unlock(&g_lock);
			s.revokes_sent = __atomic_load_n(&g_stats.revokes_sent, __ATOMIC_RELAXED);
			s.revokes_acked = __atomic_load_n(&g_stats.revokes_acked, __ATOMIC_RELAXED);
			s.m = *m;
			s.m.status = kIOReturnSuccess;
			flush_revokes();
			if (reply(t, &s.m, sizeof(s), NULL, 0, -1))
				goto out;
			continue;
		}
		default:
			m->status = kIOReturnUnsupported;
			break;
		}
		/* Redirects the call caused are done before it returns. */
		flush_revokes();
		if (reply(t, m, m->op == SK_CALL ? sizeof(struct sk_call_rep) : sizeof(*m), out, out_len, pass))
			break;
	}
out:
	task_died(t);
	task_put(t);
	__atomic_sub_fetch(&g_live_tasks, 1, __ATOMIC_RELAXED);
	return NULL;
}

static int usage(void)
{
	fprintf(stderr, "usage: uvshim-kerneld -s SOCKET [-v]\n"
			"  the IOKit stand-in's kernel (shim-kext/standin): tasks reach it with\n"
			"  UVERBS_KEXT_STANDIN_KERNEL=SOCKET; UVERBS_KEXT_STANDIN configures the functions\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	struct sockaddr_un sa;
	int lfd, opt;

	while ((opt = getopt(argc, argv, "s:vh")) != -1) {
		if (opt == 's')
			path = optarg;
		else if (opt == 'v')
			g_verbose = true;
		else
			return usage();
	}
	if (!path || strlen(path) >= sizeof(sa.sun_path))
		return usage();
	signal(SIGPIPE, SIG_IGN);
	standin_kernel_own_process();
	lfd = plat_lmsg_socket();
	if (lfd < 0) {
		fprintf(stderr, "uvshim-kerneld: socket: %s\n", strerror(-lfd));
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0600) < 0 || listen(lfd, 16) < 0) {
		fprintf(stderr, "uvshim-kerneld: %s: %s\n", path, strerror(errno));
		return 1;
	}
	/* The functions attach now, as the kext starts at boot. */
	for (unsigned i = 0; i < standin_kext_count(); i++) {
		struct standin_kext *k = standin_kext_get(i);
		if (!k) {
			fprintf(stderr, "uvshim-kerneld: function %u did not attach (UVERBS_KEXT_STANDIN?)\n", i);
			return 1;
		}
		(void)k;   /* the boot reference stays: the functions live as long as the kernel */
	}
	fprintf(stderr, "uvshim-kerneld: serving %u function%s on %s\n", standin_kext_count(),
		standin_kext_count() == 1 ? "" : "s", path);
	for (;;) {
		int fd = accept(lfd, NULL, NULL);
		struct kd_task *t;
		pthread_t th;
		uid_t uid;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			fprintf(stderr, "uvshim-kerneld: accept: %s\n", strerror(errno));
			return 1;
		}
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		if (__atomic_load_n(&g_live_tasks, __ATOMIC_RELAXED) >= KD_MAX_TASKS) {
			say("connection refused: %u tasks connected already (at most %u)",
			    KD_MAX_TASKS, KD_MAX_TASKS);
			close(fd);
			continue;
		}
		t = calloc(1, sizeof(*t));
		if (!t) {
			close(fd);
			continue;
		}
		t->fd = fd;
		t->async_fd = -1;
		t->refs = 1;
		pthread_mutex_init(&t->async_lock, NULL);
		if (plat_peer_cred(fd, (pid_t *)&t->cred.pid, &uid) < 0) {
			task_put(t);
			continue;
		}
		t->cred.uid = (uint32_t)uid;
		task_groups(&t->cred, (gid_t)-1);
		pthread_mutex_lock(&g_lock);
		g_stats.tasks++;
		pthread_mutex_unlock(&g_lock);
		__atomic_add_fetch(&g_live_tasks, 1, __ATOMIC_RELAXED);
		if (pthread_create(&th, NULL, task_main, t)) {
			__atomic_sub_fetch(&g_live_tasks, 1, __ATOMIC_RELAXED);
			task_put(t);
			continue;
		}
		pthread_detach(th);
	}
}
