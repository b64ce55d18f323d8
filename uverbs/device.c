/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Devices: the list from UVERBS_DEVICES, bring-up on first open, contexts laid out as
 * <infiniband/verbs.h> expects, and the per-device service thread that takes the EQ
 * interrupts (async: page requests, port and QP events; completion: CQ events).
 *
 * UVERBS_DEVICES is a comma-separated list of shim URIs ("emu:", "emu:ip=127.0.0.7",
 * "vfio:0000:03:00.0", "kext:0").  The emulated device's own options are comma-separated
 * too ("emu:ip=127.0.0.9,page=16k"), so a new URI starts at a token that begins with a
 * scheme ("name:"); other tokens continue the previous URI.  With nothing set, every
 * ConnectX function bound to vfio-pci is used, and with none of those one emulated
 * ConnectX-5 Ex ("emu:").
 */
#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hw/platform/byteorder.h"
#include "hw/platform/notify.h"
#include "hw/platform/run_dir.h"
#include "hw/platform/sock.h"
#include "hw/platform/thread.h"
#include "uverbs/uv.h"

static pthread_mutex_t uv_list_lock = PTHREAD_MUTEX_INITIALIZER;
/* The devices, one per URI, made once (uv_devices) and kept for the life of the
 * process: applications hold their struct ibv_device pointers.  No fixed limit: the
 * URIs are collected first, then the array is allocated at its final size. */
static struct uv_dev *uv_devs;
static unsigned uv_ndevs;
static bool uv_listed;
static char **uv_uris;
static unsigned uv_nuris, uv_cap_uris;
static bool uv_list_nomem;

int uv_err(struct uv_dev *d, int rc, const char *what)
{
	int e = rc < 0 ? -rc : (rc ? rc : EIO);
	uv_log(UV_LOG_ERROR, "%s: %s: %s", d ? d->ibdev.name : "uverbs", what,
	       d && d->mx5 ? mx5_device_error(d->mx5) : strerror(e));
	return e;
}

int uv_err_unlock(struct uv_dev *d, int rc, const char *what)
{
	rc = uv_err(d, rc, what);
	pthread_mutex_unlock(&d->lock);
	return rc;
}

void *uv_create_fail(struct uv_dev *d, int rc, const char *verb, void *obj)
{
	rc = uv_err_unlock(d, rc, verb);
	free(obj);
	return uv_null(rc);
}

int uv_queue_destroy(struct uv_queue q, struct uv_handle h)
{
	static const char *const verb[] = {
		[UV_QUEUE_CQ] = "ibv_destroy_cq",
		[UV_QUEUE_QP] = "ibv_destroy_qp",
		[UV_QUEUE_SRQ] = "ibv_destroy_srq",
	};
	struct uv_context *ctx = uv_ctx(h.context);
	struct uv_dev *d = uv_dev_lock(h.context);
	int rc = -EINVAL;
	switch (q.kind) {
	case UV_QUEUE_CQ: rc = mx5_cq_destroy(q.cq->m); break;
	case UV_QUEUE_QP: rc = mx5_qp_destroy(q.qp->m); break;
	case UV_QUEUE_SRQ: rc = mx5_srq_destroy(q.srq->m); break;
	}
	if (rc)
		return uv_err_unlock(d, rc, verb[q.kind]);
	switch (q.kind) {
	case UV_QUEUE_CQ:
		UV_LIST_DEL(&ctx->cqs, q.cq);
		if (q.cq->cqx.channel)
			q.cq->cqx.channel->refcnt--;   /* ibv_destroy_comp_channel counts it */
		uv_parent_put(q.cq->parent);
		break;
	case UV_QUEUE_QP:
		UV_LIST_DEL(&ctx->qps, q.qp);
		uv_parent_put(q.qp->parent);
		break;
	case UV_QUEUE_SRQ:
		UV_LIST_DEL(&ctx->srqs, q.srq);
		uv_parent_put(q.srq->parent);
		break;
	}
	struct ibv_comp_channel *channel = q.kind == UV_QUEUE_CQ ? q.cq->cqx.channel : NULL;
	pthread_mutex_unlock(&d->lock);
	uv_evq_drop(&ctx->async, h.obj);
	/* no completion event can name a destroyed CQ any more: drop the ones not yet read,
	 * before reading how many were handed out (the drop and ibv_get_cq_event's count
	 * both run under the channel's lock) */
	if (channel)
		uv_evq_drop(&uv_from(channel, struct uv_channel, ch)->q, h.obj);
	/* ibv_get_async_event(3): the object's events already handed out are acknowledged
	 * before it goes, as rdma-core's destroy waits (libibverbs/cmd_qp.c,
	 * ibv_cmd_destroy_qp(): until events_completed reaches the kernel's
	 * events_reported).  Without the wait UCX 1.13's async thread, holding a
	 * LAST_WQE_REACHED event for a QP the main thread was destroying, went on to
	 * dispatch it into a device the main thread had meanwhile torn down
	 * (uct_ib_device_cleanup()), and the process died of SIGSEGV. */
	unsigned reported = 0;
	switch (q.kind) {
	case UV_QUEUE_CQ: reported = __atomic_load_n(&q.cq->async_reported, __ATOMIC_ACQUIRE); break;
	case UV_QUEUE_QP: reported = __atomic_load_n(&q.qp->async_reported, __ATOMIC_ACQUIRE); break;
	case UV_QUEUE_SRQ: reported = __atomic_load_n(&q.srq->async_reported, __ATOMIC_ACQUIRE); break;
	}
	/* ibv_get_cq_event(3): "ibv_destroy_cq() will wait for all completion events to be
	 * acknowledged", as rdma-core's ibv_cmd_destroy_cq() waits for both
	 * comp_events_completed and async_events_completed (libibverbs/cmd_cq.c). */
	unsigned comp = q.kind == UV_QUEUE_CQ ? __atomic_load_n(&q.cq->comp_reported, __ATOMIC_ACQUIRE) : 0;
	const unsigned *comp_done = q.kind == UV_QUEUE_CQ ? &q.cq->cqx.comp_events_completed : &comp;
	pthread_mutex_lock(h.mutex);
	while (__atomic_load_n(h.completed, __ATOMIC_ACQUIRE) != reported ||
	       __atomic_load_n(comp_done, __ATOMIC_ACQUIRE) != comp)
		pthread_cond_wait(h.cond, h.mutex);
	pthread_mutex_unlock(h.mutex);
	pthread_mutex_destroy(h.mutex);
	pthread_cond_destroy(h.cond);
	return 0;
}

static bool uv_is_scheme(const char *tok)
{
	const char *c = strchr(tok, ':');
	if (!c || c == tok)
		return false;
	for (const char *p = tok; p < c; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
			return false;
	return true;
}

static void uv_add_dev(const char *uri)
{
	if (uv_nuris == uv_cap_uris) {
		unsigned cap = uv_cap_uris ? 2 * uv_cap_uris : 16;
		char **u = realloc(uv_uris, cap * sizeof(*u));
		if (!u) {
			uv_list_nomem = true;
			return;
		}
		uv_uris = u;
		uv_cap_uris = cap;
	}
	char *dup = strdup(uri);
	if (!dup) {
		uv_list_nomem = true;
		return;
	}
	uv_uris[uv_nuris++] = dup;
}

static void uv_init_dev(struct uv_dev *d, unsigned index, const char *uri)
{
	d->index = index;
	snprintf(d->uri, sizeof(d->uri), "%s", uri);
	pthread_mutex_init(&d->lock, NULL);
	d->wake_fd = -1;
	struct ibv_device *ib = &d->ibdev;
	ib->node_type = IBV_NODE_CA;
	/* RoCE devices report the IB transport (rdma-core does the same for mlx5). */
	ib->transport_type = IBV_TRANSPORT_IB;
	snprintf(ib->name, sizeof(ib->name), "uverbs%u", d->index);
	snprintf(ib->dev_name, sizeof(ib->dev_name), "uverbs%u", d->index);
	snprintf(ib->dev_path, sizeof(ib->dev_path), "/sys/class/infiniband_verbs/uverbs%u", d->index);
	/* Not a kernel path: ibv_read_sysfs_file answers under it from the device itself
	 * (query.c), since no kernel driver owns the function. */
	snprintf(ib->ibdev_path, sizeof(ib->ibdev_path), "/sys/class/infiniband/uverbs%u", d->index);
}

/* In a child of fork(): the device locks as if new.  Another thread of the parent (the
 * service thread's health or counter command, an application's) may have held one at
 * the fork, and in the child no thread would ever release it, so the child's first
 * verbs call would wait forever instead of being refused with EPERM (mx5_exec: a
 * child may not use its parent's device, ibv_fork_init(3)). */
static void uv_devs_after_fork_child(void)
{
	for (unsigned i = 0; i < uv_ndevs; i++)
		pthread_mutex_init(&uv_devs[i].lock, NULL);
}

/* The collected URIs become the device array. */
static void uv_make_devs(void)
{
	static bool atfork_registered;
	if (!atfork_registered && pthread_atfork(NULL, NULL, uv_devs_after_fork_child) == 0)
		atfork_registered = true;
	if (uv_nuris)
		uv_devs = calloc(uv_nuris, sizeof(*uv_devs));
	if (uv_nuris && !uv_devs)
		uv_list_nomem = true;
	for (unsigned i = 0; i < uv_nuris; i++) {
		if (uv_devs)
			uv_init_dev(&uv_devs[i], i, uv_uris[i]);
		free(uv_uris[i]);
	}
	if (uv_devs)
		uv_ndevs = uv_nuris;
	free(uv_uris);
	uv_uris = NULL;
	uv_nuris = uv_cap_uris = 0;
	/* the list is all an application has to go on: an incomplete one is said, whatever
	 * UVERBS_LOG says */
	if (uv_list_nomem)
		fprintf(stderr, "uverbs: Warning: out of memory while listing devices: %u listed\n", uv_ndevs);
}

/* ConnectX functions (vendor 0x15b3) bound to vfio-pci, as "vfio:<BDF>" URIs. */
static void uv_scan_vfio(void)
{
	DIR *dir = opendir("/sys/bus/pci/drivers/vfio-pci");
	if (!dir)
		return;
	struct dirent *e;
	while ((e = readdir(dir))) {
		if (!strchr(e->d_name, ':') || strlen(e->d_name) > 32)
			continue;
		char path[128], buf[16] = "";
		snprintf(path, sizeof(path), "/sys/bus/pci/drivers/vfio-pci/%s/vendor", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && strtoul(buf, NULL, 16) == 0x15b3) {
			char uri[64];
			snprintf(uri, sizeof(uri), "vfio:%s", e->d_name);
			uv_add_dev(uri);
		}
		fclose(f);
	}
	closedir(dir);
}

/* A daemon's socket file that someone accepts on (a killed daemon leaves its file). */
static bool uv_daemon_answers(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(a.sun_path))
		return false;
	memcpy(a.sun_path, path, strlen(path));
	/* Where the system has no SOCK_SEQPACKET unix sockets (macOS) this is -errno: no daemon. */
	int fd = plat_socket(AF_UNIX, SOCK_SEQPACKET, 0);
	bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

static void uv_build_list(void)
{
	const char *env = getenv("UVERBS_DEVICES");
	if (env && *env) {
		char *s = strdup(env), *save = NULL;
		char cur[256] = "";
		if (!s)
			return;
		for (char *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			while (*tok == ' ')
				tok++;
			if (!*tok)
				continue;
			if (uv_is_scheme(tok)) {
				if (cur[0])
					uv_add_dev(cur);
				snprintf(cur, sizeof(cur), "%s", tok);
			} else if (cur[0]) {
				size_t l = strlen(cur);
				snprintf(cur + l, sizeof(cur) - l, ",%s", tok);
			} else {
				uv_log(UV_LOG_WARN, "UVERBS_DEVICES: '%s' is not a URI (scheme:...)", tok);
			}
		}
		if (cur[0])
			uv_add_dev(cur);
		free(s);
		return;
	}
	/* A device daemon (tools/uvd) serving in the run dir owns its function: use it --
	 * only in a run dir that is ours and 0700 (hw/platform/run_dir.h): a socket another
	 * user put in a /tmp/uverbs-<uid> they made would see all our requests. */
	char sock[200], dir[160], why[300];
	struct stat st;
	int drc = plat_run_dir(dir, sizeof(dir));
	if (drc == -ENOENT)   /* UVERBS_RUN_DIR=off publishes no counters; a daemon is still looked for */
		drc = snprintf(dir, sizeof(dir), "/tmp/uverbs-%u", (unsigned)getuid()) < 0;
	if (drc == 0) {
		snprintf(sock, sizeof(sock), "%s/uvd.sock", dir);
		if (lstat(dir, &st) == 0 && plat_run_dir_check(dir, false, why, sizeof(why))) {
			uv_log(UV_LOG_WARN, "no device daemon looked for: %s", why);
		} else if (stat(sock, &st) == 0 && S_ISSOCK(st.st_mode) && uv_daemon_answers(sock)) {
			char uri[256];
			snprintf(uri, sizeof(uri), "uvd:%s", sock);
			uv_add_dev(uri);
			return;
		}
	}
	uv_scan_vfio();
	if (!uv_nuris)
		uv_add_dev("emu:");
}

struct uv_dev *uv_devices(unsigned *n)
{
	pthread_mutex_lock(&uv_list_lock);
	if (!uv_listed) {
		uv_build_list();
		uv_make_devs();
		uv_listed = true;
	}
	pthread_mutex_unlock(&uv_list_lock);
	*n = uv_ndevs;
	return uv_devs;
}

/* ------------------------------------------------------------------ service thread */

static void uv_wake(struct uv_dev *d)
{
	int rc = d->wake_fd >= 0 ? plat_notify_signal(d->wake_fd) : 0;
	if (rc < 0)
		uv_log(UV_LOG_WARN, "%s: wake: %s", d->ibdev.name, strerror(-rc));
}

/* Blocks in poll() on the interrupt fds; serves what fired under the device lock.  The
 * health registers are read once a second, on a clock of their own and not only when
 * poll() found nothing: under a steady stream of interrupts a dead device must still be
 * noticed (Linux health.c samples from a timer, mlx5_start_health_poll). */
#define UV_HEALTH_PERIOD_NS 1000000000ull
static uint64_t uv_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static void *uv_service(void *arg)
{
	struct uv_dev *d = arg;
	struct pollfd p[UV_MAX_EQS + 2];
	struct mx5_eq *eqs[UV_MAX_EQS];
	uint64_t next_health = uv_now_ns() + UV_HEALTH_PERIOD_NS;

	while (!d->stop) {
		unsigned n = 0, neq;
		pthread_mutex_lock(&d->lock);
		p[n++] = (struct pollfd){ .fd = d->wake_fd, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = mx5_device_async_fd(d->mx5), .events = POLLIN };
		neq = d->neqs;
		for (unsigned i = 0; i < neq; i++) {
			eqs[i] = d->eqs[i];
			p[n++] = (struct pollfd){ .fd = mx5_eq_fd(eqs[i]), .events = POLLIN };
		}
		pthread_mutex_unlock(&d->lock);

		int r = poll(p, n, 1000);
		if (d->stop)
			break;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			uv_log(UV_LOG_ERROR, "%s: service thread: poll: %s", d->ibdev.name, strerror(errno));
			break;
		}
		if (p[0].revents & POLLIN) {
			if (plat_notify_read(d->wake_fd, NULL) < 0)
				continue;
		}
		pthread_mutex_lock(&d->lock);
		/* Health first: the stats tick below sends a command (QUERY_Q_COUNTER), and
		 * firmware in a fatal state executes none, so sent before the health sample it
		 * would hold this thread (and the device lock) for the whole command timeout
		 * before the dead device was noticed.  Once marked fatal, mx5_exec refuses it. */
		uint64_t now = uv_now_ns();
		if (r == 0 || now >= next_health) {
			next_health = now + UV_HEALTH_PERIOD_NS;
			mx5_device_check_health(d->mx5, NULL);
		}
		uv_stats_tick(d);
		if (r > 0) {
			if (p[1].revents & POLLIN)
				mx5_device_poll_events(d->mx5);
			for (unsigned i = 0; i < neq; i++)
				if (p[2 + i].revents & POLLIN)
					mx5_eq_poll(eqs[i]);
		}
		pthread_mutex_unlock(&d->lock);
	}
	return NULL;
}

int uv_dev_watch_eq(struct uv_dev *d, unsigned vector)
{
	struct mx5_eq *eq;
	int rc = mx5_comp_eq_get(d->mx5, vector, &eq);
	if (rc)
		return rc;
	for (unsigned i = 0; i < d->neqs; i++)
		if (d->eqs[i] == eq)
			return 0;
	if (d->neqs >= UV_MAX_EQS)
		return -ENOSPC;
	d->eqs[d->neqs++] = eq;
	uv_wake(d);
	return 0;
}

/* ------------------------------------------------------------------ bring-up */

/* A listed device that cannot be opened (its RoCE address taken by another process, a
 * function in use, a missing permission) would otherwise show up with GUID 0 and no
 * word of why.  The first failure is told on stderr whatever UVERBS_LOG says, once per
 * device, as libibverbs itself warns about a device it cannot use (rdma-core
 * libibverbs/init.c: "libibverbs: Warning: ..."); later ones only under UVERBS_LOG.
 * The list itself opens nothing: that would hold the port of every listed device. */
static void uv_open_failed(struct uv_dev *d, const char *why)
{
	if (d->open_fail_said) {
		uv_log(UV_LOG_ERROR, "%s: open %s: %s", d->ibdev.name, d->uri, why);
		return;
	}
	d->open_fail_said = true;
	/* the driver's message names the URI and the cause ("... Address already in use") */
	fprintf(stderr, "uverbs: Warning: %s cannot be used: %s\n", d->ibdev.name, why);
}

/* BlueFlame policy from rdma-core's own knobs, read as libmlx5 reads them
 * (providers/mlx5/mlx5.c get_shut_up_bf, get_always_bf): MLX5_SHUT_UP_BF set and not
 * "0" turns BlueFlame off; MLX5_POST_SEND_PREFER_BF="0" keeps it for inline WQEs only;
 * unset, BlueFlame serves every single WQE that fits (rdma-core's default). */
static unsigned uv_bf_policy(void)
{
	const char *off = getenv("MLX5_SHUT_UP_BF");
	const char *prefer = getenv("MLX5_POST_SEND_PREFER_BF");

	if (off && strcmp(off, "0") != 0)
		return MX5_BF_OFF;
	if (prefer && strcmp(prefer, "0") == 0)
		return MX5_BF_INLINE_ONLY;
	return MX5_BF_PREFER;
}

/* In a child of fork(), a device its parent had open: the connection, queues, service
 * thread (not running here) and contexts are the parent's, and the child may not use
 * them (mx5_exec refuses, ibv_fork_init(3)).  On Linux a child's open of
 * /dev/infiniband/uverbsN is a fresh context of its own; so here the child forgets the
 * parent's device state, closing nothing (the parent's connection and objects must not
 * be touched from here), and uv_dev_up brings the device up anew for the child.
 * rdma-core's tests open a Context in the test process, then fork the two sides of
 * an rdma_cm test (tests/utils.py requires_mcast_support, base.py
 * two_nodes_rdmacm_traffic). */
static void uv_dev_forget_parent(struct uv_dev *d)
{
	uv_log(UV_LOG_INFO, "%s: opened in a child of fork() of process %d: the child's own device is brought up",
	       d->ibdev.name, (int)d->up_pid);
	d->mx5 = NULL;
	d->nctx = 0;
	d->ctxs = NULL;
	d->umr_pd = NULL;
	d->umr_cq = NULL;
	d->umr_qp = NULL;
	d->thread_running = false;
	d->wake_fd = -1;
	d->neqs = 0;
	d->stats_published = false;
	d->stats_last_ms = 0;
}

int uv_dev_up(struct uv_dev *d)
{
	if (d->mx5 && d->up_pid == getpid())
		return 0;
	if (d->mx5)
		uv_dev_forget_parent(d);
	struct mx5_device *m;
	struct mx5_open_attr oa = { .bf_policy = uv_bf_policy() };
	int rc = mx5_device_open_attr(d->uri, &oa, &m);
	if (rc) {
		uv_open_failed(d, mx5_open_error());
		return rc;
	}
	d->mx5 = m;
	d->up_pid = getpid();
	char why[256];
	rc = uv_port_mtu_apply(d, why, sizeof(why));
	if (rc) {
		uv_open_failed(d, why);
		goto fail;
	}
	rc = mx5_device_query(m, &d->info);
	if (!rc)
		rc = mx5_port_query(m, 1, &d->port);
	if (rc) {
		uv_err(d, rc, "query");
		goto fail;
	}
	memcpy(d->mac, d->port.mac, 6);
	/* Node GUID: the EUI-64 of the port MAC (universal/local bit flipped, ff:fe in the
	 * middle), what RoCE NICs report when no IB GUID is burnt in. */
	d->node_guid = ((uint64_t)(d->mac[0] ^ 0x02) << 56) | ((uint64_t)d->mac[1] << 48) |
		       ((uint64_t)d->mac[2] << 40) | (0xfffeull << 24) |
		       ((uint64_t)d->mac[3] << 16) | ((uint64_t)d->mac[4] << 8) | d->mac[5];
	d->have_guid = true;
	rc = uv_program_gids(d);
	if (rc) {
		uv_err(d, rc, "GID table");
		goto fail;
	}
	mx5_device_set_event_handler(m, uv_device_event, d);
	d->wake_fd = plat_notify_open(0, PLAT_NOTIFY_NONBLOCK);
	if (d->wake_fd < 0) {
		rc = d->wake_fd;
		goto fail;
	}
	d->stop = 0;
	d->neqs = 0;
	rc = -plat_thread_create_quiet(&d->thread, uv_service, d);
	if (rc)
		goto fail;
	d->thread_running = true;
	return 0;
fail:
	plat_notify_close(d->wake_fd);
	d->wake_fd = -1;
	mx5_device_close(m);
	d->mx5 = NULL;
	return rc;
}

/* Called with d->lock held; drops it while the service thread stops. */
void uv_dev_down_if_idle(struct uv_dev *d)
{
	if (!d->mx5 || d->nctx)
		return;
	if (d->thread_running) {
		d->stop = 1;
		uv_wake(d);
		pthread_mutex_unlock(&d->lock);
		pthread_join(d->thread, NULL);
		pthread_mutex_lock(&d->lock);
		d->thread_running = false;
	}
	if (d->nctx) {  /* reopened meanwhile: serve it again */
		d->stop = 0;
		if (!plat_thread_create_quiet(&d->thread, uv_service, d))
			d->thread_running = true;
		return;
	}
	uv_stats_unpublish(d);
	uv_umr_release(d);
	mx5_device_close(d->mx5);
	d->mx5 = NULL;
	d->neqs = 0;
	plat_notify_close(d->wake_fd);
	d->wake_fd = -1;
}

/* ------------------------------------------------------------------ unsupported ops */

/* Context operations this driver does not offer.  The inline helpers of verbs.h would
 * already answer EOPNOTSUPP for a NULL pointer; these say why (UVERBS_LOG). */
UV_NOT_OFFERED_BEGIN
static UV_NOT_OFFERED(struct ibv_mw *, uv_alloc_mw, (struct ibv_pd *pd, enum ibv_mw_type t), "memory windows (ibv_alloc_mw)", NULL)
static UV_NOT_OFFERED(int, uv_bind_mw, (struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *b), "memory windows (ibv_bind_mw)", EOPNOTSUPP)
static UV_NOT_OFFERED(struct ibv_dm *, uv_alloc_dm, (struct ibv_context *c, struct ibv_alloc_dm_attr *a), "device memory (ibv_alloc_dm)", NULL)
static UV_NOT_OFFERED(struct ibv_flow *, uv_create_flow, (struct ibv_qp *qp, struct ibv_flow_attr *a), "flow steering (ibv_create_flow)", NULL)
static UV_NOT_OFFERED(struct ibv_wq *, uv_create_wq, (struct ibv_context *c, struct ibv_wq_init_attr *a), "work queues (ibv_create_wq)", NULL)
static UV_NOT_OFFERED(struct ibv_counters *, uv_create_counters, (struct ibv_context *c, struct ibv_counters_init_attr *a),
		     "counters objects (ibv_create_counters)", NULL)
static UV_NOT_OFFERED(struct ibv_rwq_ind_table *, uv_create_rwq_ind_table, (struct ibv_context *c, struct ibv_rwq_ind_table_init_attr *a),
		     "RSS indirection tables (ibv_create_rwq_ind_table)", NULL)
static UV_NOT_OFFERED(int, uv_modify_cq, (struct ibv_cq *cq, struct ibv_modify_cq_attr *a), "CQ moderation (ibv_modify_cq)", EOPNOTSUPP)
static UV_NOT_OFFERED(int, uv_advise_mr, (struct ibv_pd *pd, enum ibv_advise_mr_advice adv, uint32_t flags, struct ibv_sge *sg, uint32_t n),
		     "on-demand paging (ibv_advise_mr)", EOPNOTSUPP)
static UV_NOT_OFFERED(struct ibv_mr *, uv_alloc_null_mr, (struct ibv_pd *pd), "null MR (ibv_alloc_null_mr)", NULL)
static UV_NOT_OFFERED(int, uv_query_rt_values, (struct ibv_context *c, struct ibv_values_ex *v), "device clock (ibv_query_rt_values_ex)", EOPNOTSUPP)
static UV_NOT_OFFERED(int, uv_modify_qp_rate_limit, (struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *a),
		     "packet pacing (ibv_modify_qp_rate_limit)", EOPNOTSUPP)
static UV_NOT_OFFERED(struct ibv_flow_action *, uv_create_flow_action_esp, (struct ibv_context *c, struct ibv_flow_action_esp_attr *a),
		     "IPsec flow actions (ibv_create_flow_action_esp)", NULL)
UV_NOT_OFFERED_END
/* Freeing is no error worth a warning: no memory window can exist to be freed. */
static int uv_dealloc_mw(struct ibv_mw *mw)
{
	(void)mw;
	return EOPNOTSUPP;
}
static int uv_post_srq_ops(struct ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad)
{
	(void)srq;
	uv_unsupported("tag matching (ibv_post_srq_ops)");
	if (bad)
		*bad = op;
	return EOPNOTSUPP;
}
static int uv_get_srq_num(struct ibv_srq *srq, uint32_t *num)
{
	struct uv_srq *s = uv_from(srq, struct uv_srq, srq);
	if (!num)
		return EINVAL;
	*num = mx5_srq_num(s->m);
	return 0;
}

static void uv_fill_ops(struct uv_context *c)
{
	struct verbs_context *v = &c->vctx;
	struct ibv_context_ops *o = &v->context.ops;

	o->poll_cq = uv_poll_cq_op;
	o->req_notify_cq = uv_req_notify_cq_op;
	o->post_send = uv_post_send_op;
	o->post_recv = uv_post_recv_op;
	o->post_srq_recv = uv_post_srq_recv_op;
	o->alloc_mw = uv_alloc_mw;
	o->bind_mw = uv_bind_mw;
	o->dealloc_mw = uv_dealloc_mw;

	v->query_port = uv_query_port_op;
	v->query_device_ex = uv_query_device_ex_op;
	v->create_qp_ex = uv_create_qp_ex_op;
	v->create_cq_ex = uv_create_cq_ex_op;
	v->create_srq_ex = uv_create_srq_ex_op;
	v->get_srq_num = uv_get_srq_num;
	v->open_xrcd = uv_open_xrcd_op;
	v->close_xrcd = uv_close_xrcd_op;
	v->open_qp = uv_open_qp_op;
	v->alloc_dm = uv_alloc_dm;
	v->ibv_create_flow = uv_create_flow;
	v->create_wq = uv_create_wq;
	v->alloc_td = uv_alloc_td_op;
	v->dealloc_td = uv_dealloc_td_op;
	v->alloc_parent_domain = uv_alloc_parent_domain_op;
	v->create_counters = uv_create_counters;
	v->create_rwq_ind_table = uv_create_rwq_ind_table;
	v->modify_cq = uv_modify_cq;
	v->advise_mr = uv_advise_mr;
	v->alloc_null_mr = uv_alloc_null_mr;
	v->query_rt_values = uv_query_rt_values;
	v->modify_qp_rate_limit = uv_modify_qp_rate_limit;
	v->create_flow_action_esp = uv_create_flow_action_esp;
	v->post_srq_ops = uv_post_srq_ops;
	/* The inline helpers use an op only when sz covers it (verbs_get_ctx_op). */
	v->sz = sizeof(struct verbs_context);
}

/* ------------------------------------------------------------------ exported API */

UV_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
	unsigned n;
	struct uv_dev *d = uv_devices(&n);
	struct ibv_device **l = calloc(n + 1, sizeof(*l));
	if (!l)
		return uv_null(ENOMEM);
	for (unsigned i = 0; i < n; i++)
		l[i] = &d[i].ibdev;
	if (num_devices)
		*num_devices = (int)n;
	return l;
}

UV_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

UV_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	if (!device)
		return uv_null(EINVAL);
	return device->name;
}

static struct uv_dev *uv_dev_of(struct ibv_device *device)
{
	unsigned n;
	struct uv_dev *d = uv_devices(&n);
	for (unsigned i = 0; i < n; i++)
		if (&d[i].ibdev == device)
			return &d[i];
	return NULL;
}

UV_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	struct uv_dev *d = uv_dev_of(device);
	uint64_t g = 0;
	if (!d) {
		errno = EINVAL;
		return 0;
	}
	int rc = 0;
	pthread_mutex_lock(&d->lock);
	if (!d->have_guid && (rc = uv_dev_up(d)) == 0)
		uv_dev_down_if_idle(d);
	g = d->node_guid;
	pthread_mutex_unlock(&d->lock);
	if (rc)
		errno = -rc;   /* GUID 0: the device could not be opened, and this is why */
	return htobe64(g);
}

UV_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	struct uv_dev *d = uv_dev_of(device);
	return d ? (int)d->index : -1;
}

UV_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct uv_dev *d = uv_dev_of(device);
	if (!d)
		return uv_null(ENODEV);
	struct uv_context *c = uv_evq_alloc(sizeof(*c), offsetof(struct uv_context, async));
	if (!c)
		return NULL;
	/* The kernel's cmd_fd is the open /dev/infiniband/uverbsN.  We send no command
	 * through it, but clients dup() it to share the context (ibv_import_device(3):
	 * rdma-core's tests/test_shared_pd.py does os.dup(ctx.cmd_fd)), so it must be a
	 * descriptor: /dev/null, which ibv_import_device() then refuses with EOPNOTSUPP. */
	c->cmd_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (c->cmd_fd < 0) {
		int rc = errno;
		uv_evq_fini(&c->async);
		free(c);
		return uv_null(rc);
	}
	pthread_mutex_lock(&d->lock);
	int rc = uv_dev_up(d);
	if (rc) {
		pthread_mutex_unlock(&d->lock);
		uv_evq_fini(&c->async);
		close(c->cmd_fd);
		free(c);
		return uv_null(rc < 0 ? -rc : EIO);
	}
	c->dev = d;
	c->pid = getpid();
	d->nctx++;
	c->next = d->ctxs;
	d->ctxs = c;
	struct ibv_context *ic = &c->vctx.context;
	ic->device = &d->ibdev;
	ic->cmd_fd = c->cmd_fd;
	ic->async_fd = c->async.fd;
	ic->num_comp_vectors = (int)d->info.num_comp_vectors;
	pthread_mutex_init(&ic->mutex, NULL);
	ic->abi_compat = __VERBS_ABI_IS_EXTENDED;
	uv_fill_ops(c);
	pthread_mutex_unlock(&d->lock);
	uv_log(UV_LOG_INFO, "%s: opened %s (%04x:%04x, fw %u.%u.%u)", d->ibdev.name, d->uri,
	       d->info.vendor_id, d->info.device_id, d->info.fw_major, d->info.fw_minor,
	       d->info.fw_subminor);
	return ic;
}

static int uv_close_device_body(struct ibv_context *context)
{
	if (!context)
		return EINVAL;
	struct uv_context *c = uv_ctx(context);
	struct uv_dev *d = c->dev;
	/* a fork child's copy of its parent's context: the parent's to close, its device
	 * state forgotten here if the child opened its own (uv_dev_forget_parent) */
	if (c->pid != getpid())
		return 0;
	pthread_mutex_lock(&d->lock);
	/* Objects of this context still open.  rdma-core returns 0 here and the kernel
	 * frees what the closed file still holds, so a later destroy of one of them is a
	 * use after free; applications such as perftest close with an object left and
	 * expect success.  Here close succeeds too, and the context, with the device it
	 * keeps up, stays until the process exits: its objects remain valid, can still be
	 * used and destroyed, and nothing is freed under them (docs/architecture.md,
	 * "The verbs layer"). */
	if (c->qps || c->cqs || c->srqs || c->npds || c->nahs || c->nchannels || c->nxrcds || c->nopened) {
		unsigned nq = 0, nc = 0, ns = 0;
		for (struct uv_qp *q = c->qps; q; q = q->next)
			nq++;
		for (struct uv_cq *q = c->cqs; q; q = q->next)
			nc++;
		for (struct uv_srq *q = c->srqs; q; q = q->next)
			ns++;
		if (!c->closed)
			uv_log(UV_LOG_INFO, "%s: ibv_close_device with %u QPs, %u CQs, %u SRQs, %u PDs, %u AHs, "
			       "%u completion channels still open: they stay valid, and the context is kept "
			       "until the process exits", d->ibdev.name, nq, nc, ns, c->npds, c->nahs, c->nchannels);
		c->closed = true;
		pthread_mutex_unlock(&d->lock);
		return 0;
	}
	for (struct uv_context **pp = &d->ctxs; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	d->nctx--;
	uv_dev_down_if_idle(d);
	pthread_mutex_unlock(&d->lock);
	uv_evq_fini(&c->async);
	close(c->cmd_fd);
	pthread_mutex_destroy(&context->mutex);
	free(c);
	return 0;
}

UV_EXPORT int ibv_close_device(struct ibv_context *context)
{
	return uv_errno(uv_close_device_body(context));
}
