/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The RDMA connection manager for our devices, in the library (Linux only).
 *
 * Debian's librdmacm (rdma-core 44) is used unchanged: this file answers the kernel
 * interface it is written against, the rdma_cm character device
 * (/usr/include/rdma/rdma_user_cm.h, ABI 4; Linux drivers/infiniband/core/ucma.c), in
 * the process, the way kernel_paths_linux.c answers UCX's file checks.  What librdmacm
 * does with it (rdma-core v44.0 librdmacm/cma.c and util/open_cdev.c):
 *  - ucma_init: asks RDMA netlink for the "rdma_cm" chardev (fails: the kernel has no
 *    RDMA device of ours), then reads /sys/class/misc/rdma_cm/abi_version through
 *    ibv_read_sysfs_file (query.c answers "4");
 *  - rdma_create_event_channel: open("/dev/infiniband/rdma_cm", O_RDWR | O_CLOEXEC),
 *    then fstat() must give a character device.  The fd is a real eventfd (semaphore
 *    mode), readable while the channel holds an event, so poll() works on it;
 *  - every command is write(fd, rdma_ucm_cmd_hdr + command) with a pointer to the
 *    response inside; it is answered before write() returns.  GET_EVENT blocks unless
 *    the fd was made non-blocking (fcntl O_NONBLOCK);
 *  - close() of the fd destroys its IDs, as ucma_close does.
 * So this file defines open's hook (uv_rcm_open, called from kernel_paths_linux.c),
 * write, close, fstat and fstat64; for any fd that is not one of ours they cost one
 * load and compare before libc's.
 *
 * The CM itself (IBTA chapter 12) runs per device on the GSI QP, a UD QP created with
 * IBV_QP_CREATE_SOURCE_QPN 1 (qp.c; the emulator and the PRM's qpc.st QP1 make it send
 * and receive as QPN 1), so its MADs are real RoCE v2 packets on UDP 4791 (BTH dest QP
 * 1, DETH Q_Key 0x80010000, IBTA A17).  Offered: port space TCP (RC) with the REQ /
 * REP / RTU / REJ / DREQ / DREP exchange, port space UDP (UD) with SIDR_REQ / SIDR_REP
 * (IBTA 12.11), retransmission after the CM response timeout (up to the REQ's Max CM
 * Retries), MRA received (the timer waits longer), IPv4 addresses of the devices'
 * IPv4-mapped GIDs, MIGRATE_ID, and a DREQ for every connection still up when the
 * process exits, and multicast joins (JOIN_IP_MCAST, JOIN_MCAST, LEAVE_MCAST: IPv4 groups,
 * no SA on RoCE).  Not yet offered (EOPNOTSUPP / EAFNOSUPPORT to librdmacm): AF_IB, LAP/APR, options other than TOS, REUSEADDR, AFONLY and ACK_TIMEOUT (TOS
 * and REUSEADDR accepted and ignored), IPv6 addresses other than the wildcard [::]
 * (bind_addr).
 */
#undef _FORTIFY_SOURCE
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_user_cm.h>

#include "hw/platform/thread.h"
#include "uverbs/rdma_cm_guard.h"
#include "uverbs/rdma_cm_mad.h"
#include "uverbs/uv.h"

/* An IPv4 address in host order, as printf's "%u.%u.%u.%u" arguments. */
#define RCM_IP4_ARGS(ip) (ip) >> 24, ((ip) >> 16) & 0xff, ((ip) >> 8) & 0xff, (ip) & 0xff

#define RCM_MAX_FD 4096
#define RCM_MAX_IDS 1024
#define RCM_MAX_AGENTS 8
#define RCM_NRECV 64
#define RCM_NSEND 64
#define RCM_GRH 40
#define RCM_AHS 16
/* Linux cma.c: CMA_CM_RESPONSE_TIMEOUT 20 (4.096 us * 2^20 = 4.3 s), CMA_MAX_CM_RETRIES
 * 15.  UVERBS_CM_TIMEOUT (exponent) shortens it for tests of the timeout path. */
#define RCM_RESPONSE_TIMEOUT 20
#define RCM_MAX_CM_RETRIES 15
/* enum rdma_cm_event_type, the values ucma reports (Linux include/rdma/rdma_cm.h;
 * librdmacm's rdma_cma.h repeats them) */
enum { RCM_EV_ADDR_RESOLVED = 0, RCM_EV_ROUTE_RESOLVED = 2, RCM_EV_CONNECT_REQUEST = 4,
       RCM_EV_CONNECT_RESPONSE = 5, RCM_EV_CONNECT_ERROR = 6, RCM_EV_UNREACHABLE = 7,
       RCM_EV_REJECTED = 8, RCM_EV_ESTABLISHED = 9, RCM_EV_DISCONNECTED = 10 };
enum { RCM_EV_MULTICAST_JOIN = 12 };

enum rcm_state { ST_IDLE, ST_ADDR, ST_ROUTE, ST_LISTEN, ST_REQ_SENT, ST_REQ_RCVD, ST_REP_SENT, ST_REP_RCVD,
		 ST_ESTABLISHED, ST_DREQ_SENT, ST_DREQ_RCVD, ST_CLOSED,
		 ST_UD_READY /* SIDR done: a UD ID that knows its peer's QPN and Q_Key */ };
/* Linux include/rdma/rdma_cm.h RDMA_UDP_QKEY: the Q_Key of the UDP port space's QPs */
#define RCM_UDP_QKEY 0x01234567u

struct rcm_evt {
	struct rcm_evt *next;
	uint32_t owner;          /* the ID it is counted on: the listener for a CONNECT_REQUEST */
	struct rdma_ucm_event_resp r;
};

struct rcm_chan {
	int fd;
	pthread_cond_t cond;
	struct rcm_evt *head, *tail;
	unsigned waiting;
};

struct rcm_agent {
	struct ibv_device *dev;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;            /* RCM_NRECV receive slots (GRH + MAD), then send slots */
	unsigned send_next;
	uint32_t ip;             /* host order */
	uint8_t gid[16];
	int gid_index;
	uint64_t guid;           /* network order, as ibv_get_device_guid */
	uint8_t mtu;             /* IBTA enum */
	uint8_t max_rd_atom, max_init_rd_atom;   /* ibv_query_device: the QP's limits */
	struct { uint32_t ip; struct ibv_ah *ah; } ahs[RCM_AHS];
	pthread_t thread;
	bool thread_up;
	atomic_uint sends_done;  /* send completions seen (the exit path waits on them) */
};

struct rcm_id {
	bool used;
	uint32_t handle;
	uint64_t uid;
	struct rcm_chan *ch;
	uint16_t ps;
	uint8_t qp_type;
	enum rcm_state state;
	struct sockaddr_in src, dst;
	struct rcm_agent *ag;
	uint32_t lcomm, rcomm;
	uint32_t lqpn, rqpn;
	/* Starting PSNs: the one our REQ or REP carried (lpsn) is our receive queue's, the
	 * peer's (rpsn) our send queue's.  That is how Linux reads the field (cm.c:
	 * ib_send_cm_req sets rq_psn from its REQ, cm_req_handler sq_psn from the REQ it
	 * got, ib_send_cm_rep rq_psn from its REP, cm_rep_handler sq_psn from the REP it
	 * got), so a Linux peer sends from the PSN we said and expects the one it said. */
	uint32_t lpsn, rpsn;
	uint8_t mtu, rr, idepth, retry, rnr, srq;
	unsigned events_reported;
	bool route;
	/* the last request sent, resent until answered (IBTA 12.6.x timers) */
	uint8_t mad[UV_MAD_LEN];
	bool mad_armed;
	uint64_t deadline_ns, timeout_ns;
	int retries_left;
	uint8_t last_reply[UV_MAD_LEN];  /* REP/RTU/DREP, sent again for a duplicate */
	bool have_reply;
	int reg_fd;              /* a listener's name in the address's registry, when reg */
	bool reg;
	uint8_t ack_timeout;     /* RDMA_OPTION_ID_ACK_TIMEOUT, when ack_timeout_set */
	bool ack_timeout_set;
	/* Bound to the IPv6 wildcard [::] (src then holds 0.0.0.0 and the port), and
	 * Linux's id_priv->afonly: see bind_addr. */
	bool v6;
	bool afonly;
	bool afonly_set;         /* RDMA_OPTION_ID_AFONLY given (CMA_OPTION_AFONLY) */
};
_Static_assert(RCM_MAX_IDS == UV_CM_GUARD_SLOTS && UV_MAD_LEN == UV_CM_GUARD_MAD_LEN,
	       "a guardian record per ID slot, each a MAD");

static pthread_mutex_t rcm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rcm_chan *_Atomic rcm_fds[RCM_MAX_FD];
static atomic_int rcm_open_chans;
static struct rcm_id rcm_ids[RCM_MAX_IDS];
/* What the guardian holds for each ID slot (guard_sync): kept apart from the IDs, which
 * id_new clears while the record may still be armed. */
static struct { uint16_t attr; uint32_t lcomm, rcomm; } rcm_guarded[RCM_MAX_IDS];
static struct rcm_agent rcm_agents[RCM_MAX_AGENTS];
static unsigned rcm_nagents;
static bool rcm_agents_probed;
static bool rcm_exiting;         /* the exit destructor ran: the guardian's records stay as they are */
static uint32_t rcm_next_comm;   /* the comm ID counter (new_comm), from a random start (agents_probe) */
static pid_t rcm_pid;            /* the process the agents belong to (not a fork child) */
static uint16_t rcm_next_port = 40000;

/* MADs received, sent, dropped as malformed (or of a class or attribute this CM does
 * not read), dropped as matching no connection; a drop is logged at info with the count. */
static atomic_ulong rcm_rx, rcm_tx, rcm_bad, rcm_unmatched;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cm_timeout_ns(void)
{
	const char *e = getenv("UVERBS_CM_TIMEOUT");
	int t = e ? atoi(e) : RCM_RESPONSE_TIMEOUT;
	if (t < 8 || t > 31)
		t = RCM_RESPONSE_TIMEOUT;
	return 4096ull << t;   /* 4.096 us * 2^t (IBTA 12.7.30's encoding) */
}

/* ------------------------------------------------------------------ libc's names */

static void *next_sym(void *_Atomic *cache, const char *name)
{
	void *f = atomic_load(cache);
	if (!f) {
		f = dlsym(RTLD_NEXT, name);
		atomic_store(cache, f);
	}
	return f;
}

static struct rcm_chan *chan_of(int fd)
{
	if (fd < 0 || fd >= RCM_MAX_FD || !atomic_load_explicit(&rcm_open_chans, memory_order_relaxed))
		return NULL;
	return atomic_load(&rcm_fds[fd]);
}

/* ------------------------------------------------------------------ events */

static struct rcm_evt *evt_push(struct rcm_id *id, uint32_t event, int status,
				 const struct rdma_ucm_conn_param *conn, uint64_t uid)
{
	struct rcm_chan *ch = id->ch;
	struct rcm_evt *e = calloc(1, sizeof(*e));
	if (!ch || !e) {
		free(e);
		return NULL;
	}
	e->r.uid = uid;
	e->r.id = id->handle;
	e->owner = id->handle;
	e->r.event = event;
	e->r.status = (uint32_t)status;
	if (conn)
		e->r.param.conn = *conn;
	if (ch->tail)
		ch->tail->next = e;
	else
		ch->head = e;
	ch->tail = e;
	uint64_t one = 1;
	/* eventfd_write would come back through write() below */
	if (syscall(SYS_write, ch->fd, &one, sizeof(one)) < 0)
		uv_log(UV_LOG_WARN, "rdma_cm: event fd write: %s", strerror(errno));
	pthread_cond_broadcast(&ch->cond);
	return e;
}

/* ------------------------------------------------------------------ agents */

static int gid_ipv4(const uint8_t g[16], uint32_t *ip)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	if (memcmp(g, pfx, 12))
		return -1;
	*ip = (uint32_t)g[12] << 24 | (uint32_t)g[13] << 16 | (uint32_t)g[14] << 8 | g[15];
	return 0;
}

static void ip_gid(uint32_t ip, uint8_t g[16])
{
	memset(g, 0, 16);
	g[10] = g[11] = 0xff;
	g[12] = (uint8_t)(ip >> 24);
	g[13] = (uint8_t)(ip >> 16);
	g[14] = (uint8_t)(ip >> 8);
	g[15] = (uint8_t)ip;
}

static void *agent_thread(void *arg);
static uint32_t rcm_rand(void);
static void listen_unregister(struct rcm_id *id);
static pthread_once_t rcm_atfork_once = PTHREAD_ONCE_INIT;
static void rcm_atfork_register(void);

static int post_recv(struct rcm_agent *a, unsigned slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(a->buf + slot * (RCM_GRH + UV_MAD_LEN)),
			       .length = RCM_GRH + UV_MAD_LEN, .lkey = a->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;
	return ibv_post_recv(a->qp, &wr, &bad);
}

/* The GSI QP of a device and its receive buffers (IBTA 13.5.1: UD, QPN 1, Q_Key
 * 0x80010000, P_Key index 0) and the thread that receives MADs and runs the timers. */
static int agent_up(struct rcm_agent *a)
{
	struct ibv_port_attr pa;
	if (ibv_query_port(a->ctx, 1, &pa))
		return -1;
	a->mtu = (uint8_t)pa.active_mtu;
	struct ibv_device_attr da;
	if (ibv_query_device(a->ctx, &da))
		return -1;
	a->max_rd_atom = (uint8_t)(da.max_qp_rd_atom > 255 ? 255 : da.max_qp_rd_atom);
	a->max_init_rd_atom = (uint8_t)(da.max_qp_init_rd_atom > 255 ? 255 : da.max_qp_init_rd_atom);
	a->gid_index = -1;
	for (int i = 0; i < pa.gid_tbl_len && i < 256; i++) {
		union ibv_gid g;
		uint32_t ip;
		if (!ibv_query_gid(a->ctx, 1, i, &g) && !gid_ipv4(g.raw, &ip)) {
			a->gid_index = i;
			a->ip = ip;
			memcpy(a->gid, g.raw, 16);
			break;
		}
	}
	if (a->gid_index < 0)
		return -1;
	a->pd = ibv_alloc_pd(a->ctx);
	a->cc = a->pd ? ibv_create_comp_channel(a->ctx) : NULL;
	a->cq = a->cc ? ibv_create_cq(a->ctx, RCM_NRECV + RCM_NSEND, NULL, a->cc, 0) : NULL;
	size_t len = (size_t)(RCM_NRECV + RCM_NSEND) * (RCM_GRH + UV_MAD_LEN);
	a->buf = a->cq ? calloc(1, len) : NULL;
	a->mr = a->buf ? ibv_reg_mr(a->pd, a->buf, len, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!a->mr)
		return -1;
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_UD, .send_cq = a->cq, .recv_cq = a->cq, .pd = a->pd,
		.cap = { .max_send_wr = RCM_NSEND, .max_recv_wr = RCM_NRECV, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.create_flags = IBV_QP_CREATE_SOURCE_QPN, .source_qpn = 1,
	};
	a->qp = ibv_create_qp_ex(a->ctx, &ia);
	if (!a->qp)
		return -1;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				  .qkey = UV_MAD_GSI_QKEY };
	if (ibv_modify_qp(a->qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	qa.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(a->qp, &qa, IBV_QP_STATE))
		return -1;
	qa.qp_state = IBV_QPS_RTS;
	qa.sq_psn = 0;
	if (ibv_modify_qp(a->qp, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return -1;
	for (unsigned i = 0; i < RCM_NRECV; i++)
		if (post_recv(a, i))
			return -1;
	if (ibv_req_notify_cq(a->cq, 0))
		return -1;
	if (plat_thread_create_quiet(&a->thread, agent_thread, a))
		return -1;
	a->thread_up = true;
	return 0;
}

/* Every device of ours with an IPv4 GID gets an agent, at the first command that needs
 * an address (under rcm_lock). */
static void agents_probe(void)
{
	if (rcm_agents_probed)
		return;
	rcm_agents_probed = true;
	rcm_pid = getpid();
	rcm_next_comm = rcm_rand() | 1;
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);
	for (int i = 0; l && i < n && rcm_nagents < RCM_MAX_AGENTS; i++) {
		struct rcm_agent *a = &rcm_agents[rcm_nagents];
		a->dev = l[i];
		a->ctx = ibv_open_device(l[i]);
		a->guid = ibv_get_device_guid(l[i]);
		if (a->ctx && !agent_up(a)) {
			rcm_nagents++;
			continue;
		}
		uv_log(UV_LOG_WARN, "rdma_cm: device %s has no usable GSI QP or IPv4 GID", l[i]->name);
		memset(a, 0, sizeof(*a));
	}
	/* the list is kept: the agents hold its devices for the process's life */
	pthread_once(&rcm_atfork_once, rcm_atfork_register);
	uint32_t ips[RCM_MAX_AGENTS];
	for (unsigned i = 0; i < rcm_nagents; i++)
		ips[i] = rcm_agents[i].ip;
	char why[PATH_MAX + 128] = "";
	int rc = rcm_nagents ? rcm_guard_start(ips, rcm_nagents, why, sizeof(why)) : -ENODEV;
	if (!rc)
		uv_log(UV_LOG_INFO, "rdma_cm: guardian process %d sends this process's DREQs should it die",
		       rcm_guard_pid());
	else if (rc != -EADDRNOTAVAIL && rc != -ENODEV)
		uv_log(UV_LOG_WARN, "rdma_cm: no guardian: %s%s; should this process die, its idle peers "
		       "learn it only when they next send", why,
		       rc == -ENOENT ? " (UVERBS_CM_GUARD names it)" : "");
}

static struct rcm_agent *agent_by_ip(uint32_t ip)
{
	agents_probe();
	for (unsigned i = 0; i < rcm_nagents; i++)
		if (rcm_agents[i].ip == ip || (!ip && i == 0))
			return &rcm_agents[i];
	return NULL;
}

static struct rcm_agent *agent_by_ip_exact(uint32_t ip)
{
	for (unsigned i = 0; i < rcm_nagents; i++)
		if (rcm_agents[i].ip == ip)
			return &rcm_agents[i];
	return NULL;
}

static struct ibv_ah *agent_ah(struct rcm_agent *a, uint32_t ip)
{
	unsigned free_slot = RCM_AHS;
	for (unsigned i = 0; i < RCM_AHS; i++) {
		if (a->ahs[i].ah && a->ahs[i].ip == ip)
			return a->ahs[i].ah;
		if (!a->ahs[i].ah && free_slot == RCM_AHS)
			free_slot = i;
	}
	if (free_slot == RCM_AHS) {
		ibv_destroy_ah(a->ahs[0].ah);
		a->ahs[0].ah = NULL;
		free_slot = 0;
	}
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	ip_gid(ip, aa.grh.dgid.raw);
	aa.grh.sgid_index = (uint8_t)a->gid_index;
	aa.grh.hop_limit = 64;
	struct ibv_ah *ah = ibv_create_ah(a->pd, &aa);
	if (ah) {
		a->ahs[free_slot].ah = ah;
		a->ahs[free_slot].ip = ip;
	}
	return ah;
}

static const char *attr_name(uint16_t attr)
{
	static const char *const n[] = { "REQ", "MRA", "REJ", "REP", "RTU", "DREQ", "DREP", "SIDR_REQ", "SIDR_REP" };
	return attr >= UV_CM_REQ && attr <= UV_CM_SIDR_REP ? n[attr - UV_CM_REQ] : "?";
}

/* Sends one MAD to the GSI QP at `ip` (IBTA 13.5.1: QPN 1, Q_Key 0x80010000). */
static int mad_send(struct rcm_agent *a, uint32_t ip, const uint8_t mad[UV_MAD_LEN])
{
	struct ibv_ah *ah = agent_ah(a, ip);
	if (!ah)
		return -1;
	unsigned slot = RCM_NRECV + (a->send_next % RCM_NSEND);
	uint8_t *b = a->buf + slot * (RCM_GRH + UV_MAD_LEN);
	memcpy(b, mad, UV_MAD_LEN);
	struct ibv_sge sge = { .addr = (uintptr_t)b, .length = UV_MAD_LEN, .lkey = a->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 1;
	wr.wr.ud.remote_qkey = UV_MAD_GSI_QKEY;
	int rc = ibv_post_send(a->qp, &wr, &bad);
	if (!rc) {
		a->send_next++;   /* a post that failed (the send queue full) leaves its slot free */
		atomic_fetch_add(&rcm_tx, 1);
	}
	uv_log(UV_LOG_DEBUG, "rdma_cm: tx %s to %u.%u.%u.%u, comm 0x%08x -> 0x%08x%s",
	       attr_name((uint16_t)(mad[16] << 8 | mad[17])), RCM_IP4_ARGS(ip),
	       (unsigned)(mad[24] << 24 | mad[25] << 16 | mad[26] << 8 | mad[27]),
	       (unsigned)(mad[28] << 24 | mad[29] << 16 | mad[30] << 8 | mad[31]), rc ? " (post failed)" : "");
	return rc;
}

static void id_send(struct rcm_id *id, const struct uv_cm_msg *m, bool request)
{
	uint8_t mad[UV_MAD_LEN];
	if (uv_cm_mad_encode(m, mad))
		return;
	if (request) {
		memcpy(id->mad, mad, sizeof(mad));
		id->mad_armed = true;
		id->timeout_ns = cm_timeout_ns();
		id->deadline_ns = now_ns() + id->timeout_ns;
		id->retries_left = RCM_MAX_CM_RETRIES;
	} else {
		memcpy(id->last_reply, mad, sizeof(mad));
		id->have_reply = true;
	}
	mad_send(id->ag, ntohl(id->dst.sin_addr.s_addr), mad);
}

/* ------------------------------------------------------------------ IDs */

static struct rcm_id *id_get(uint32_t h)
{
	return h < RCM_MAX_IDS && rcm_ids[h].used ? &rcm_ids[h] : NULL;
}

static struct rcm_id *id_new(struct rcm_chan *ch)
{
	for (uint32_t i = 1; i < RCM_MAX_IDS; i++) {
		if (!rcm_ids[i].used) {
			struct rcm_id *id = &rcm_ids[i];
			memset(id, 0, sizeof(*id));
			id->used = true;
			id->handle = i;
			id->ch = ch;
			id->src.sin_family = AF_INET;
			id->dst.sin_family = AF_INET;
			return id;
		}
	}
	return NULL;
}

/* The CM's own random numbers (starting PSNs, IBTA 9.7.1; the first local comm ID), from
 * a private xorshift64 seeded by the clock and the pid: the application's random()
 * sequence is left alone, and two processes on one address (a test's server run twice)
 * do not reuse each other's comm IDs. */
static uint64_t rcm_rand_state;
static uint32_t rcm_rand(void)
{
	if (!rcm_rand_state)
		rcm_rand_state = (now_ns() ^ ((uint64_t)getpid() << 32)) | 1;
	rcm_rand_state ^= rcm_rand_state << 13;
	rcm_rand_state ^= rcm_rand_state >> 7;
	rcm_rand_state ^= rcm_rand_state << 17;
	return (uint32_t)(rcm_rand_state >> 16);
}

static bool comm_in_use(uint32_t c)
{
	for (uint32_t i = 1; i < RCM_MAX_IDS; i++)
		if (rcm_ids[i].used && rcm_ids[i].lcomm == c)
			return true;
	return false;
}

/* A local comm ID, never 0 (0 is "none" in a REJ's remote comm ID), unique among the
 * processes that share a device.  Every process's CM sees every MAD of the device
 * (hw/emu/rx_check.c gives each GSI QP a copy) and takes a REP, RTU, REJ, DREQ or DREP
 * by the comm ID it names (IBTA chapter 12: a CM tells its communications apart by the
 * Local Communication ID it issued; Linux cm.c keeps one ID space per host,
 * cm_alloc_id_priv's xa_alloc_cyclic XORed with random_id_operand).  So the ID carries the pid in its upper 22 bits (pid_max is at
 * most 2^22, Linux include/linux/threads.h PID_MAX_LIMIT) and a counter, from a
 * random start, in its lower 10, skipping the ones this process still uses: two
 * processes of one pid namespace never issue the same ID. */
static uint32_t new_comm(void)
{
	uint32_t hi = ((uint32_t)getpid() & 0x3fffff) << 10, c = 0;
	for (unsigned tries = 0; tries < 1024; tries++) {
		c = hi | (rcm_next_comm++ & 0x3ff);
		if (c && !comm_in_use(c))
			break;
	}
	return c;
}

static uint32_t rnd24(void)
{
	return rcm_rand() & 0xffffff;
}

static void conn_param_from(struct rdma_ucm_conn_param *p, const struct uv_cm_msg *m, size_t pd_off)
{
	memset(p, 0, sizeof(*p));
	p->qp_num = m->qpn;
	size_t l = m->pd_len > pd_off ? m->pd_len - pd_off : 0;
	if (l > sizeof(p->private_data))
		l = sizeof(p->private_data);
	memcpy(p->private_data, m->pd + pd_off, l);
	p->private_data_len = (uint8_t)l;
	/* the peer's initiator depth is our responder resources and back (Linux cm.c,
	 * cm_format_req_event / cm_format_rep_event) */
	p->responder_resources = m->initiator_depth;
	p->initiator_depth = m->responder_resources;
	p->flow_control = m->flow_control;
	p->retry_count = m->retry_count;
	p->rnr_retry_count = m->rnr_retry_count;
	p->srq = m->srq;
	p->valid = 1;
}

static void id_reply(struct rcm_id *id, uint16_t attr, const uint8_t *pd, size_t pd_len)
{
	struct uv_cm_msg m = { .attr = attr, .tid = ((uint64_t)id->lcomm << 32) | attr,
			       .local_comm_id = id->lcomm, .remote_comm_id = id->rcomm };
	if (pd && pd_len <= sizeof(m.pd)) {
		memcpy(m.pd, pd, pd_len);
		m.pd_len = pd_len;
	}
	id_send(id, &m, false);
}

static void mc_drop_id(const struct rcm_id *id);

/* An event queued for the ID with this handle, or counted on it (a listener's
 * CONNECT_REQUEST); a multicast join's event of the multicast with this handle. */
static bool evt_of_id(const struct rcm_evt *e, uint32_t handle)
{
	return e->r.id == handle || e->owner == handle;
}

static bool evt_of_mc(const struct rcm_evt *e, uint32_t handle)
{
	return e->r.event == RCM_EV_MULTICAST_JOIN && e->r.id == handle;
}

/* Drop the channel's queued events that match, each with its count on the channel's
 * eventfd (semaphore mode: one read each), so poll() on the channel stays true to the
 * queue; the queue's tail is found again. */
static void chan_drop_events(struct rcm_chan *ch, bool (*match)(const struct rcm_evt *, uint32_t), uint32_t handle)
{
	for (struct rcm_evt **pp = &ch->head; *pp;) {
		if (match(*pp, handle)) {
			struct rcm_evt *e = *pp;
			*pp = e->next;
			free(e);
			uint64_t v;
			if (syscall(SYS_read, ch->fd, &v, sizeof(v)) < 0)
				uv_log(UV_LOG_WARN, "rdma_cm: event fd read: %s", strerror(errno));
		} else {
			pp = &(*pp)->next;
		}
	}
	ch->tail = NULL;
	for (struct rcm_evt *e = ch->head; e; e = e->next)
		ch->tail = e;
}

/* The MAD that ends a connection whose process goes without a word, as Linux's CM sends
 * it when the process's rdma_cm file closes (cm.c cm_destroy_id; IBTA 12.9.6): a DREQ
 * while the connection is up (or being set up past the REP), the DREP a received DREQ
 * still waits for; false when the ID owes its peer nothing. */
static bool last_word(const struct rcm_id *id, struct uv_cm_msg *m)
{
	memset(m, 0, sizeof(*m));
	if (id->state == ST_ESTABLISHED || id->state == ST_REP_SENT || id->state == ST_REP_RCVD) {
		m->attr = UV_CM_DREQ;
		m->qpn = id->rqpn;
	} else if (id->state == ST_DREQ_RCVD) {
		m->attr = UV_CM_DREP;
	} else {
		return false;
	}
	m->local_comm_id = id->lcomm;
	m->remote_comm_id = id->rcomm;
	m->tid = ((uint64_t)id->lcomm << 32) | m->attr;
	return true;
}

/* Keeps the guardian's records (rdma_cm_guard.h) equal to every ID's last word: called
 * under rcm_lock before each entry point lets go of it (a command, a pass of an agent
 * thread, a channel's close, the exit path), so a process killed at any moment leaves
 * the words of the states its peers last saw. */
static void guard_sync(void)
{
	if (!rcm_guard_pid() || rcm_exiting)
		return;
	for (uint32_t i = 1; i < RCM_MAX_IDS; i++) {
		const struct rcm_id *id = &rcm_ids[i];
		struct uv_cm_msg m;
		bool want = id->used && id->ag && last_word(id, &m);
		uint16_t attr = want ? m.attr : 0;
		if (attr == rcm_guarded[i].attr &&
		    (!want || (rcm_guarded[i].lcomm == id->lcomm && rcm_guarded[i].rcomm == id->rcomm)))
			continue;
		uint8_t mad[UV_MAD_LEN];
		if (want && !uv_cm_mad_encode(&m, mad)) {
			rcm_guard_arm(i, id->ag->ip, ntohl(id->dst.sin_addr.s_addr), mad);
		} else {
			rcm_guard_disarm(i);
			attr = 0;
		}
		rcm_guarded[i].attr = attr;
		rcm_guarded[i].lcomm = id->lcomm;
		rcm_guarded[i].rcomm = id->rcomm;
	}
}

static void id_destroy(struct rcm_id *id)
{
	if (id->state == ST_ESTABLISHED) {
		/* IBTA 12.9.6: a connection torn down without a word would leave the peer
		 * waiting; a DREQ is sent once */
		struct uv_cm_msg m = { .attr = UV_CM_DREQ, .local_comm_id = id->lcomm,
				       .remote_comm_id = id->rcomm, .qpn = id->rqpn };
		id_send(id, &m, false);
	} else if (id->state == ST_DREQ_RCVD) {
		id_reply(id, UV_CM_DREP, NULL, 0);
	}
	mc_drop_id(id);
	/* events still queued for it are dropped, as ucma_destroy_id does */
	if (id->ch)
		chan_drop_events(id->ch, evt_of_id, id->handle);
	listen_unregister(id);
	id->used = false;
}

/* ------------------------------------------------------------------ MADs received */

static struct rcm_id *id_by_comm(uint32_t lcomm)
{
	for (uint32_t i = 1; i < RCM_MAX_IDS; i++)
		if (rcm_ids[i].used && rcm_ids[i].lcomm == lcomm && rcm_ids[i].state >= ST_REQ_SENT)
			return &rcm_ids[i];
	return NULL;
}

/* Listeners of one address, whichever process holds them.  Several processes share a
 * device through uvd, each with its own CM, and each CM gets a copy of every REQ and
 * SIDR_REQ (hw/emu/rx_check.c).  The one that listens on the service answers it; the
 * others must stay silent rather than REJ it as unknown (IBTA chapter 12's REJ reason 8, Invalid Service ID), and
 * only when nobody listens does a REJ go.  Linux's CM keeps its listeners in one table
 * per host (cm.c, cm_insert_listen / cm_find_listen); ours is a name in the abstract
 * AF_UNIX namespace (of the network namespace) per address, port space and port,
 * bound by the listener's process for as long as it listens: binding it is the claim
 * (a second process gets EADDRINUSE, as a second listener on a port does), and the
 * kernel drops it when the socket closes or the process dies. */
static void listen_name(struct sockaddr_un *u, socklen_t *len, uint32_t ip, uint16_t ps, uint16_t port, bool v6)
{
	memset(u, 0, sizeof(*u));
	u->sun_family = AF_UNIX;
	/* an afonly [::] listener hears no IPv4 request: a name of its own, so that it
	 * and another process's 0.0.0.0 listener on the port both stand (a dual-stack one
	 * claims the IPv4 wildcard's name: it hears those requests) */
	int n = v6 ? snprintf(u->sun_path + 1, sizeof(u->sun_path) - 1, "uverbs-rdma-cm/in6any/%04x/%u", ps, port)
		   : snprintf(u->sun_path + 1, sizeof(u->sun_path) - 1, "uverbs-rdma-cm/%08x/%04x/%u", ip, ps, port);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* In a child of fork(): the parent's listeners are not the child's (its CM is the
 * parent's, unusable here), so the child lets go of their names at once; otherwise a
 * forked worker would keep a port claimed after its parent stopped listening. */
static void listen_after_fork_child(void)
{
	for (uint32_t i = 1; i < RCM_MAX_IDS; i++)
		if (rcm_ids[i].reg) {
			close(rcm_ids[i].reg_fd);
			rcm_ids[i].reg = false;
		}
}

static void after_fork_child(void)
{
	listen_after_fork_child();
	rcm_guard_forget();
}

static void rcm_atfork_register(void)
{
	if (pthread_atfork(NULL, NULL, after_fork_child))
		uv_log(UV_LOG_WARN, "rdma_cm: pthread_atfork failed: a fork child keeps its parent's listener names "
		       "and guardian records");
}

/* Claims the listener's name; -EADDRINUSE when another process listens there. */
static int listen_register(struct rcm_id *id)
{
	pthread_once(&rcm_atfork_once, rcm_atfork_register);
	struct sockaddr_un u;
	socklen_t len;
	listen_name(&u, &len, ntohl(id->src.sin_addr.s_addr), id->ps, ntohs(id->src.sin_port), id->v6 && id->afonly);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (const struct sockaddr *)&u, len)) {
		int e = errno;
		close(fd);
		return e == EADDRINUSE ? -EADDRINUSE : -e;
	}
	id->reg_fd = fd;
	id->reg = true;
	return 0;
}

static void listen_unregister(struct rcm_id *id)
{
	if (id->reg)
		close(id->reg_fd);
	id->reg = false;
}

/* Does a process other than this one listen on the service ID at agent a's address
 * (or the wildcard)?  A datagram socket connects to a bound name and is refused
 * (ECONNREFUSED) by a free one. */
static bool listened_elsewhere(const struct rcm_agent *a, uint64_t service_id)
{
	uint32_t ips[2] = { a->ip, 0 };
	bool found = false;
	for (int i = 0; i < 2 && !found; i++) {
		struct sockaddr_un u;
		socklen_t len;
		listen_name(&u, &len, ips[i], (uint16_t)(service_id >> 16), (uint16_t)service_id, false);
		int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		found = connect(fd, (const struct sockaddr *)&u, len) == 0;
		close(fd);
	}
	return found;
}

static void reject_unmatched(struct rcm_agent *a, uint32_t ip, const struct uv_cm_msg *req, uint16_t reason)
{
	struct uv_cm_msg m = { .attr = UV_CM_REJ, .tid = req->tid, .remote_comm_id = req->local_comm_id,
			       .msg_rejected = 0, .reason = reason };
	uint8_t mad[UV_MAD_LEN];
	if (!uv_cm_mad_encode(&m, mad))
		mad_send(a, ip, mad);
}

/* A REQ for a port this process uses but does not listen on at this moment is held a
 * short while before the REJ: perftest -R's server accepts its control connection on
 * a port, destroys that listener and listens on the same port again for the test
 * connection, while its client sends the test connection's REQ as soon as the control
 * connection is up.  Linux's CM would REJ such a REQ at once too (reason 8), and Debian's
 * perftest 4.5 client then fails (its retry path crashes); on a slow machine (the VM,
 * TCG) the REQ wins that race every time.  IBTA leaves the passive side free to answer
 * within the REQ's remote CM response timeout, so holding it is within the protocol:
 * a LISTEN on the port takes it up, or the REJ goes when the hold ends. */
#define RCM_HELD 8
#define RCM_HOLD_NS 2000000000ull
static struct {
	bool used;
	struct rcm_agent *a;
	uint32_t ip;
	uint64_t deadline;
	struct uv_cm_msg m;
} rcm_held[RCM_HELD];

static void on_req(struct rcm_agent *a, uint32_t peer_ip, const struct uv_cm_msg *m);

static bool req_hold(struct rcm_agent *a, uint32_t peer_ip, const struct uv_cm_msg *m, uint16_t ps, uint16_t port)
{
	bool in_use = false;
	for (uint32_t i = 1; i < RCM_MAX_IDS && !in_use; i++) {
		const struct rcm_id *c = &rcm_ids[i];
		in_use = c->used && c->ps == ps && ntohs(c->src.sin_port) == port && (c->ag == a || !c->ag);
	}
	if (!in_use)
		return false;
	int free_slot = -1;
	for (int i = 0; i < RCM_HELD; i++) {
		if (rcm_held[i].used && rcm_held[i].ip == peer_ip && rcm_held[i].m.local_comm_id == m->local_comm_id)
			return true;   /* the same REQ sent again: still held */
		if (!rcm_held[i].used && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0)
		return false;
	/* at most half the peer's wait for our answer (IBTA 12.7.20: 4.096 us * 2^t) */
	uint64_t wait = (4096ull << (m->remote_cm_timeout & 0x1f)) / 2;
	rcm_held[free_slot].used = true;
	rcm_held[free_slot].a = a;
	rcm_held[free_slot].ip = peer_ip;
	rcm_held[free_slot].deadline = now_ns() + (wait < RCM_HOLD_NS ? wait : RCM_HOLD_NS);
	rcm_held[free_slot].m = *m;
	return true;
}

/* A LISTEN (listener != NULL) takes up the REQs held for its port space and port; the
 * timers REJ those whose hold ended. */
static void held_reqs(const struct rcm_id *listener, uint64_t t)
{
	for (int i = 0; i < RCM_HELD; i++) {
		if (!rcm_held[i].used)
			continue;
		if (listener) {
			if ((uint16_t)(rcm_held[i].m.service_id >> 16) != listener->ps ||
			    (uint16_t)rcm_held[i].m.service_id != ntohs(listener->src.sin_port))
				continue;
			struct uv_cm_msg m = rcm_held[i].m;
			rcm_held[i].used = false;
			on_req(rcm_held[i].a, rcm_held[i].ip, &m);
		} else if (t >= rcm_held[i].deadline) {
			rcm_held[i].used = false;
			uv_log(UV_LOG_INFO, "rdma_cm: held REQ for service ID 0x%016llx: still no listener, REJ",
			       (unsigned long long)rcm_held[i].m.service_id);
			reject_unmatched(rcm_held[i].a, rcm_held[i].ip, &rcm_held[i].m, UV_CM_REJ_INVALID_SERVICE_ID);
		}
	}
}

/* A REQ or SIDR_REQ sent again (IBTA 12.9.2, 12.11): the ID it already made, if any;
 * ud_only limits the search to UD IDs (a SIDR_REQ). */
static struct rcm_id *id_for_repeat(uint32_t rcomm, uint32_t peer_ip, bool ud_only)
{
	for (uint32_t i = 1; i < RCM_MAX_IDS; i++) {
		struct rcm_id *d = &rcm_ids[i];
		if (d->used && (!ud_only || d->qp_type == IBV_QPT_UD) && d->rcomm == rcomm &&
		    d->state >= ST_REQ_RCVD && ntohl(d->dst.sin_addr.s_addr) == peer_ip)
			return d;
	}
	return NULL;
}

/* The listener of a service ID on this agent's address or the wildcard: a UD one for a
 * SIDR_REQ, a connected one for a REQ (their IDs share the port space). */
static struct rcm_id *listener_for(const struct rcm_agent *a, uint64_t service_id, bool ud)
{
	uint16_t ps = (uint16_t)(service_id >> 16), port = (uint16_t)service_id;
	for (uint32_t i = 1; i < RCM_MAX_IDS; i++) {
		struct rcm_id *c = &rcm_ids[i];
		/* an afonly [::] listener hears IPv6 requests only, and ours are all IPv4
		 * (Linux cma.c cma_match_private_data) */
		if (c->used && c->state == ST_LISTEN && c->ps == ps && (c->qp_type == IBV_QPT_UD) == ud &&
		    ntohs(c->src.sin_port) == port && (service_id >> 32) == 0 && !(c->v6 && c->afonly) &&
		    (c->ag == a || !c->src.sin_addr.s_addr))
			return c;
	}
	return NULL;
}

/* A new ID made by listener l for a request from dst_ip:dst_port: what REQ and
 * SIDR_REQ set alike (Linux cma.c cma_ib_new_conn_id / cma_ib_new_udp_id). */
static void id_from_request(struct rcm_id *id, const struct rcm_id *l, struct rcm_agent *a, uint16_t port,
			    uint32_t dst_ip, uint16_t dst_port, uint32_t rcomm)
{
	id->ps = l->ps;
	id->qp_type = l->qp_type;
	id->ag = a;
	id->state = ST_REQ_RCVD;
	id->src.sin_addr.s_addr = htonl(a->ip);
	id->src.sin_port = htons(port);
	id->dst.sin_addr.s_addr = htonl(dst_ip);
	id->dst.sin_port = htons(dst_port);
	id->rcomm = rcomm;
	id->lcomm = new_comm();
	id->route = true;
}

static void on_req(struct rcm_agent *a, uint32_t peer_ip, const struct uv_cm_msg *m)
{
	struct uv_cma_hdr h;
	uint32_t sip;
	/* a duplicate REQ (IBTA 12.9.2): the REP again if one went, else nothing */
	struct rcm_id *d = id_for_repeat(m->local_comm_id, peer_ip, false);
	if (d) {
		if (d->have_reply)
			mad_send(a, peer_ip, d->last_reply);
		return;
	}
	/* RC, or XRC (transport 3, extended type 1: an XRC_SEND initiator; IBTA 14.2) */
	bool xrc = m->transport == UV_CM_TRANSPORT_EXT && m->ext_transport == UV_CM_EXT_TRANSPORT_XRC;
	if (uv_cma_hdr_get(m->pd, m->pd_len, &h) || gid_ipv4(m->local_gid, &sip) || (m->transport != 0 && !xrc)) {
		atomic_fetch_add(&rcm_bad, 1);
		return;
	}
	uint16_t ps = (uint16_t)(m->service_id >> 16);
	uint16_t port = (uint16_t)m->service_id;
	struct rcm_id *l = listener_for(a, m->service_id, false);
	if (!l && listened_elsewhere(a, m->service_id)) {
		uv_log(UV_LOG_DEBUG, "rdma_cm: REQ for service ID 0x%016llx: another process listens",
		       (unsigned long long)m->service_id);
		return;
	}
	if (!l && req_hold(a, peer_ip, m, ps, port)) {
		uv_log(UV_LOG_INFO, "rdma_cm: REQ for service ID 0x%016llx from %u.%u.%u.%u: port in use but "
		       "not listened on, held", (unsigned long long)m->service_id, RCM_IP4_ARGS(peer_ip));
		return;
	}
	if (!l) {
		uv_log(UV_LOG_INFO, "rdma_cm: REQ for service ID 0x%016llx from %u.%u.%u.%u: no listener, REJ",
		       (unsigned long long)m->service_id, RCM_IP4_ARGS(peer_ip));
		reject_unmatched(a, peer_ip, m, UV_CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	/* the listener's QP type must be the one the REQ asks for: an XRC REQ reaches
	 * XRC_RECV listeners (RDMA_PS_IB), an RC one the others (Linux cma.c
	 * cma_check_req_qp_type; the REQ is refused otherwise) */
	if (xrc != (l->qp_type == IBV_QPT_XRC_RECV)) {
		uv_log(UV_LOG_INFO, "rdma_cm: %s REQ for service ID 0x%016llx: the listener's QP type is %u, REJ",
		       xrc ? "XRC" : "RC", (unsigned long long)m->service_id, l->qp_type);
		reject_unmatched(a, peer_ip, m, UV_CM_REJ_CONSUMER_DEFINED);
		return;
	}
	struct rcm_id *id = id_new(l->ch);
	if (!id) {
		reject_unmatched(a, peer_ip, m, UV_CM_REJ_CONSUMER_DEFINED);
		return;
	}
	id_from_request(id, l, a, port, sip, h.src_port, m->local_comm_id);
	id->rqpn = m->qpn;
	id->rpsn = m->psn;
	id->lpsn = rnd24();
	id->mtu = m->mtu < a->mtu ? m->mtu : a->mtu;
	id->retry = m->retry_count;
	id->rnr = m->rnr_retry_count;
	id->rr = m->initiator_depth;
	id->idepth = m->responder_resources;
	struct rdma_ucm_conn_param p;
	conn_param_from(&p, m, UV_CMA_HDR_LEN);
	evt_push(id, RCM_EV_CONNECT_REQUEST, 0, &p, l->uid);
	/* ucma counts a connection request on the listener (ucma.c ucma_get_event; and
	 * librdmacm acks it there, cma.c ucma_process_conn_req) */
	if (l->ch->tail)
		l->ch->tail->owner = l->handle;
}

/* IBTA 12.11: a SIDR_REQ asks the listener of a service ID for its UD QPN and Q_Key.
 * rdma_cm sends it for the UDP port space (Linux cma.c cma_resolve_ib_udp: service ID
 * 0x0111 << 16 | port, the cma_hdr ahead of the user's private data); the listener's
 * program gets CONNECT_REQUEST and answers with rdma_accept (SIDR_REP, status 0) or
 * rdma_reject (status 2).  No listener: status 1, "service ID not supported" (Linux
 * cm.c cm_sidr_req_handler). */
static void sidr_rep_send(struct rcm_agent *a, uint32_t ip, uint32_t req_id, uint64_t service_id, uint8_t status)
{
	struct uv_cm_msg m = { .attr = UV_CM_SIDR_REP, .tid = ((uint64_t)req_id << 32) | UV_CM_SIDR_REP,
			       .remote_comm_id = req_id, .service_id = service_id, .reason = status };
	uint8_t mad[UV_MAD_LEN];
	if (!uv_cm_mad_encode(&m, mad))
		mad_send(a, ip, mad);
}

static void on_sidr_req(struct rcm_agent *a, uint32_t peer_ip, const struct uv_cm_msg *m)
{
	struct uv_cma_hdr h;
	/* a SIDR_REQ sent again: the SIDR_REP again once there is one */
	struct rcm_id *d = id_for_repeat(m->local_comm_id, peer_ip, true);
	if (d) {
		if (d->have_reply)
			mad_send(a, peer_ip, d->last_reply);
		return;
	}
	if (uv_cma_hdr_get(m->pd, m->pd_len, &h)) {
		atomic_fetch_add(&rcm_bad, 1);
		return;
	}
	uint16_t port = (uint16_t)m->service_id;
	struct rcm_id *l = listener_for(a, m->service_id, true);
	if (!l && listened_elsewhere(a, m->service_id)) {
		uv_log(UV_LOG_DEBUG, "rdma_cm: SIDR_REQ for service ID 0x%016llx: another process listens",
		       (unsigned long long)m->service_id);
		return;
	}
	struct rcm_id *id = l ? id_new(l->ch) : NULL;
	if (!id) {
		uv_log(UV_LOG_INFO, "rdma_cm: SIDR_REQ for service ID 0x%016llx from %u.%u.%u.%u: no listener",
		       (unsigned long long)m->service_id, RCM_IP4_ARGS(peer_ip));
		sidr_rep_send(a, peer_ip, m->local_comm_id, m->service_id,
			      l ? UV_CM_SIDR_REJECT : UV_CM_SIDR_UNSUPPORTED);
		return;
	}
	id_from_request(id, l, a, port, peer_ip, h.src_port, m->local_comm_id);
	id->mtu = a->mtu;
	struct rcm_evt *e = evt_push(id, RCM_EV_CONNECT_REQUEST, 0, NULL, l->uid);
	if (e) {
		/* Linux cma.c cma_ib_req_handler: the user's private data, after the header */
		struct rdma_ucm_ud_param *u = &e->r.param.ud;
		size_t n = m->pd_len > UV_CMA_HDR_LEN ? m->pd_len - UV_CMA_HDR_LEN : 0;
		if (n > sizeof(u->private_data))
			n = sizeof(u->private_data);
		memcpy(u->private_data, m->pd + UV_CMA_HDR_LEN, n);
		u->private_data_len = (uint8_t)n;
		e->owner = l->handle;
	}
}

/* The peer's address handle attributes for a UD ID, as ucma reports them with
 * ESTABLISHED (Linux cma.c cma_sidr_rep_handler: ib_init_ah_attr_from_path) */
static void ud_ah_attr(const struct rcm_id *id, struct ib_uverbs_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ip_gid(ntohl(id->dst.sin_addr.s_addr), ah->grh.dgid);
	ah->grh.sgid_index = (uint8_t)id->ag->gid_index;
	ah->grh.hop_limit = 64;
	ah->is_global = 1;
	ah->port_num = 1;
}

static void on_sidr_rep(struct rcm_id *id, const struct uv_cm_msg *m)
{
	if (id->state != ST_REQ_SENT || id->qp_type != IBV_QPT_UD)
		return;
	id->mad_armed = false;
	if (m->reason != UV_CM_SIDR_SUCCESS) {
		id->state = ST_CLOSED;
		evt_push(id, RCM_EV_UNREACHABLE, m->reason, NULL, id->uid);
		return;
	}
	id->state = ST_UD_READY;
	id->rqpn = m->qpn;
	struct rcm_evt *e = evt_push(id, RCM_EV_ESTABLISHED, 0, NULL, id->uid);
	if (e) {
		struct rdma_ucm_ud_param *u = &e->r.param.ud;
		u->qp_num = m->qpn;
		u->qkey = m->qkey;
		ud_ah_attr(id, &u->ah_attr);
		memcpy(u->private_data, m->pd, UV_CM_SIDR_REP_PD);
		u->private_data_len = UV_CM_SIDR_REP_PD;
	}
}

static void on_msg(struct rcm_agent *a, uint32_t peer_ip, const struct uv_cm_msg *m)
{
	if (m->attr == UV_CM_REQ) {
		on_req(a, peer_ip, m);
		return;
	}
	if (m->attr == UV_CM_SIDR_REQ) {
		on_sidr_req(a, peer_ip, m);
		return;
	}
	struct rcm_id *id = id_by_comm(m->remote_comm_id);
	if (!id || id->ag != a || ((m->attr == UV_CM_DREQ || m->attr == UV_CM_DREP) && id->rcomm != m->local_comm_id)) {
		/* both comm IDs must be the connection's (Linux cm.c cm_acquire_id takes the
		 * pair): a stale DREQ whose remote comm ID now names another connection (a
		 * dead process's guardian sending late, an old duplicate) ends nothing.  Not
		 * answered with a DREP, as Linux's cm_dreq_handler would (cm_issue_drep): on a
		 * device shared through uvd every process's CM gets every MAD, and the one
		 * whose connection it is answers it */
		atomic_fetch_add(&rcm_unmatched, 1);
		return;
	}
	struct rdma_ucm_conn_param p;
	switch (m->attr) {
	case UV_CM_SIDR_REP:
		on_sidr_rep(id, m);
		break;
	case UV_CM_REP:
		if (id->state == ST_ESTABLISHED && id->have_reply && id->rcomm == m->local_comm_id) {
			mad_send(a, peer_ip, id->last_reply);   /* a duplicate REP: RTU again */
			return;
		}
		if (id->state != ST_REQ_SENT)
			return;
		id->mad_armed = false;
		id->rcomm = m->local_comm_id;
		/* an XRC target's QPN is in the REP's local EE context number (Linux cm.c
		 * cm_rep_get_qpn for IB_QPT_XRC_INI) */
		id->rqpn = id->qp_type == IBV_QPT_XRC_SEND ? m->eecn : m->qpn;
		id->rpsn = m->psn;
		/* Linux cm.c cm_rep_handler: our responder resources are the peer's
		 * initiator depth, our initiator depth its responder resources */
		id->rr = m->initiator_depth;
		id->idepth = m->responder_resources;
		id->state = ST_REP_RCVD;   /* answered: waits for librdmacm's ACCEPT (RTU) */
		conn_param_from(&p, m, 0);
		evt_push(id, RCM_EV_CONNECT_RESPONSE, 0, &p, id->uid);
		break;
	case UV_CM_RTU:
		if (id->state != ST_REP_SENT || id->rcomm != m->local_comm_id)
			return;
		id->mad_armed = false;
		id->state = ST_ESTABLISHED;
		evt_push(id, RCM_EV_ESTABLISHED, 0, NULL, id->uid);
		break;
	case UV_CM_REJ:
		if (id->state != ST_REQ_SENT && id->state != ST_REP_SENT && id->state != ST_REP_RCVD)
			return;
		id->mad_armed = false;
		id->state = ST_CLOSED;
		memset(&p, 0, sizeof(p));
		memcpy(p.private_data, m->pd, UV_CM_REJ_PD);
		p.private_data_len = UV_CM_REJ_PD;
		evt_push(id, RCM_EV_REJECTED, m->reason, &p, id->uid);
		break;
	case UV_CM_MRA:
		/* IBTA 12.6.6: the peer needs longer; the timer waits its service timeout */
		if (id->mad_armed)
			id->deadline_ns = now_ns() + (4096ull << (m->service_timeout & 0x1f)) + id->timeout_ns;
		break;
	case UV_CM_DREQ:
	case UV_CM_DREP:
		if (m->attr == UV_CM_DREP) {
			if (id->state != ST_DREQ_SENT)
				return;
			id->mad_armed = false;
			id->state = ST_CLOSED;
			evt_push(id, RCM_EV_DISCONNECTED, 0, NULL, id->uid);
			return;
		}
		if (id->state == ST_DREQ_RCVD || id->state == ST_CLOSED) {
			if (id->have_reply)
				mad_send(a, peer_ip, id->last_reply);
			else
				id_reply(id, UV_CM_DREP, NULL, 0);
			return;
		}
		if (id->state == ST_DREQ_SENT) {
			/* both sides disconnected at once (IBTA 12.9.6): answer, and we are done */
			id->mad_armed = false;
			id_reply(id, UV_CM_DREP, NULL, 0);
			id->state = ST_CLOSED;
			evt_push(id, RCM_EV_DISCONNECTED, 0, NULL, id->uid);
			return;
		}
		if (id->state != ST_ESTABLISHED && id->state != ST_REP_SENT && id->state != ST_REP_RCVD)
			return;
		id->mad_armed = false;
		id->state = ST_DREQ_RCVD;
		evt_push(id, RCM_EV_DISCONNECTED, 0, NULL, id->uid);
		break;
	default:
		atomic_fetch_add(&rcm_unmatched, 1);
		break;
	}
}

/* A request unanswered after its timeout is sent again, up to Max CM Retries (IBTA
 * 12.6.5); then the connection fails as Linux cma reports it: UNREACHABLE for a REQ,
 * CONNECT_ERROR for a REP, DISCONNECTED for a DREQ. */
static void timers(uint64_t t)
{
	held_reqs(NULL, t);
	for (uint32_t i = 1; i < RCM_MAX_IDS; i++) {
		struct rcm_id *id = &rcm_ids[i];
		if (!id->used || !id->mad_armed || t < id->deadline_ns)
			continue;
		if (id->retries_left-- > 0) {
			id->deadline_ns = t + id->timeout_ns;
			mad_send(id->ag, ntohl(id->dst.sin_addr.s_addr), id->mad);
			continue;
		}
		id->mad_armed = false;
		enum rcm_state was = id->state;
		id->state = ST_CLOSED;
		if (was == ST_REQ_SENT)
			evt_push(id, RCM_EV_UNREACHABLE, -ETIMEDOUT, NULL, id->uid);
		else if (was == ST_REP_SENT)
			evt_push(id, RCM_EV_CONNECT_ERROR, -ETIMEDOUT, NULL, id->uid);
		else
			evt_push(id, RCM_EV_DISCONNECTED, 0, NULL, id->uid);
	}
}

static void *agent_thread(void *arg)
{
	struct rcm_agent *a = arg;
	for (;;) {
		struct pollfd pfd = { .fd = a->cc->fd, .events = POLLIN };
		int pr = poll(&pfd, 1, 20);
		if (pr > 0) {
			struct ibv_cq *cq;
			void *cctx;
			if (!ibv_get_cq_event(a->cc, &cq, &cctx)) {
				ibv_ack_cq_events(cq, 1);
				ibv_req_notify_cq(cq, 0);
			}
		}
		struct ibv_wc wc[16];
		int n;
		pthread_mutex_lock(&rcm_lock);
		while ((n = ibv_poll_cq(a->cq, 16, wc)) > 0) {
			for (int i = 0; i < n; i++) {
				if (wc[i].wr_id >= RCM_NRECV) {
					atomic_fetch_add(&a->sends_done, 1);   /* a send completed */
					continue;
				}
				unsigned slot = (unsigned)wc[i].wr_id;
				const uint8_t *b = a->buf + slot * (RCM_GRH + UV_MAD_LEN);
				if (wc[i].status == IBV_WC_SUCCESS) {
					atomic_fetch_add(&rcm_rx, 1);
					struct uv_cm_msg m;
					/* RoCE v2 GRH slot: the IPv4 header in its last 20 bytes
					 * (source address at 12) */
					uint32_t ip = (uint32_t)b[32] << 24 | (uint32_t)b[33] << 16 |
						      (uint32_t)b[34] << 8 | b[35];
					size_t len = wc[i].byte_len > RCM_GRH ? wc[i].byte_len - RCM_GRH : 0;
					if (uv_cm_mad_decode(b + RCM_GRH, len, &m))
						uv_log(UV_LOG_INFO, "rdma_cm: MAD of %zu bytes dropped (not a CM "
						       "MAD this CM reads), %lu so far", len,
						       atomic_fetch_add(&rcm_bad, 1) + 1);
					else {
						uv_log(UV_LOG_DEBUG, "rdma_cm: rx %s from %u.%u.%u.%u, comm "
						       "0x%08x -> 0x%08x, reason %u", attr_name(m.attr),
						       RCM_IP4_ARGS(ip),
						       m.local_comm_id, m.remote_comm_id, m.reason);
						on_msg(a, ip, &m);
					}
				}
				if (post_recv(a, slot))
					uv_log(UV_LOG_WARN, "rdma_cm: GSI receive repost failed");
			}
		}
		timers(now_ns());
		guard_sync();
		pthread_mutex_unlock(&rcm_lock);
	}
	return NULL;
}

/* ------------------------------------------------------------------ commands */

static int put_resp(uint64_t ptr, const void *v, size_t len)
{
	if (!ptr)
		return -EFAULT;
	memcpy((void *)(uintptr_t)ptr, v, len);
	return 0;
}

static void mc_event_reported(const struct rdma_ucm_event_resp *r);

/* A thread cancelled while it waits for an event (libiscsi 1.19.0's iSER disconnect
 * cancels its cm_thread there: lib/iser.c iser_free_iser_conn_res).  The kernel's
 * ucma_get_event waits interruptibly (drivers/infiniband/core/ucma.c,
 * wait_event_interruptible: -ERESTARTSYS), so the thread goes with no event taken and
 * nothing held; pthread_cond_wait takes rcm_lock back before the cancellation unwinds,
 * and this gives it back. */
static void get_event_cancelled(void *arg)
{
	struct rcm_chan *ch = arg;

	ch->waiting--;
	pthread_mutex_unlock(&rcm_lock);
}

static int cmd_get_event(struct rcm_chan *ch, const struct rdma_ucm_get_event *c, int fd)
{
	while (!ch->head) {
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0 && (fl & O_NONBLOCK))
			return -EAGAIN;
		ch->waiting++;
		pthread_cleanup_push(get_event_cancelled, ch);
		pthread_cond_wait(&ch->cond, &rcm_lock);
		pthread_cleanup_pop(0);
		ch->waiting--;
		/* a channel closed under a waiting thread: the kernel's file stays open
		 * while a write() is in it, so the thread waits on (rping's cm_thread) */
	}
	struct rcm_evt *e = ch->head;
	ch->head = e->next;
	if (!ch->head)
		ch->tail = NULL;
	uint64_t v;
	if (syscall(SYS_read, ch->fd, &v, sizeof(v)) < 0)
		uv_log(UV_LOG_WARN, "rdma_cm: event fd read: %s", strerror(errno));
	struct rcm_id *id = id_get(e->owner);
	if (id)
		id->events_reported++;
	mc_event_reported(&e->r);
	int rc = put_resp(c->response, &e->r, sizeof(e->r));
	free(e);
	return rc;
}

static void sin_put(struct sockaddr_in6 *out, const struct sockaddr_in *in)
{
	memset(out, 0, sizeof(*out));
	memcpy(out, in, sizeof(*in));
}

static int cmd_query_route(struct rcm_id *id, uint64_t resp_ptr)
{
	struct rdma_ucm_query_route_resp r;
	memset(&r, 0, sizeof(r));
	sin_put(&r.src_addr, &id->src);
	sin_put(&r.dst_addr, &id->dst);
	if (id->v6) {
		/* bound to [::]: reported as bound (Linux keeps the sockaddr given to
		 * rdma_bind_addr as the ID's source, and sets the destination's family to
		 * it) */
		memset(&r.src_addr, 0, sizeof(r.src_addr));
		r.src_addr.sin6_family = AF_INET6;
		r.src_addr.sin6_port = id->src.sin_port;
		memset(&r.dst_addr, 0, sizeof(r.dst_addr));
		r.dst_addr.sin6_family = AF_INET6;
	}
	if (id->ag) {
		r.node_guid = id->ag->guid;
		r.port_num = 1;
		r.ibdev_index = (uint32_t)ibv_get_device_index(id->ag->dev);
		if (id->route) {
			/* one path, RoCE v2: GIDs are the IPv4-mapped addresses */
			struct ib_user_path_rec *p = &r.ib_route[0];
			ip_gid(ntohl(id->dst.sin_addr.s_addr), p->dgid);
			memcpy(p->sgid, id->ag->gid, 16);
			p->pkey = htons(0xffff);
			p->mtu = id->mtu ? id->mtu : id->ag->mtu;
			p->mtu_selector = 2;
			p->hop_limit = 64;
			p->reversible = 1;
			p->numb_path = 1;
			p->packet_life_time = 18;
			r.num_paths = 1;
		}
	}
	return put_resp(resp_ptr, &r, sizeof(r));
}

/* Linux /proc/sys/net/ipv6/bindv6only (0 unless the administrator changed it): what
 * an AF_INET6 bind without RDMA_OPTION_ID_AFONLY takes as its afonly. */
static bool bindv6only(void)
{
	char c = '0';
	int fd = open("/proc/sys/net/ipv6/bindv6only", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = '0';
		close(fd);
	}
	return c == '1';
}

/* A bind of an IPv4 address, or of the IPv6 wildcard.  Linux cma.c rdma_bind_addr:
 * without RDMA_OPTION_ID_AFONLY an AF_INET ID is afonly and an AF_INET6 one takes
 * net.ipv6.bindv6only (0 by default: dual-stack, it hears IPv4 requests too,
 * cma_match_private_data: "cma_any_addr(addr) && !id_priv->afonly").  Our wire is IPv4
 * (the devices' GIDs are IPv4-mapped, RoCE v2 over UDP/IPv4), so an afonly [::]
 * listener never receives a REQ, and any other IPv6 address names no address of a
 * device: EAFNOSUPPORT, as before.  tgt's iSER target binds one listener per
 * getaddrinfo(NULL, port, AI_PASSIVE) answer: 0.0.0.0, then [::] with AFONLY 1. */
static int bind_addr(struct rcm_id *id, const void *addr)
{
	struct sockaddr_in6 a6;
	struct sockaddr_in a4;
	memcpy(&a4, addr, sizeof(a4));
	bool v6 = false;
	if (a4.sin_family == AF_INET6) {
		memcpy(&a6, addr, sizeof(a6));
		if (!IN6_IS_ADDR_UNSPECIFIED(&a6.sin6_addr))
			return -EAFNOSUPPORT;
		v6 = true;
		memset(&a4, 0, sizeof(a4));
		a4.sin_family = AF_INET;
		a4.sin_port = a6.sin6_port;
	} else if (a4.sin_family != AF_INET) {
		return -EAFNOSUPPORT;
	}
	const struct sockaddr_in *a = &a4;
	bool afonly = id->afonly_set ? id->afonly : (v6 ? bindv6only() : true);
	uint32_t ip = ntohl(a->sin_addr.s_addr);
	struct rcm_agent *ag = NULL;
	/* a wildcard listener needs every device's GSI QP up to hear its REQs */
	agents_probe();
	if (ip == INADDR_LOOPBACK && !agent_by_ip_exact(ip) && rcm_nagents) {
		/* Linux cma.c cma_bind_loopback: a bind to the loopback address binds to the
		 * first RDMA device.  Here every device is its own host on a loopback
		 * address, so the ID takes that device's address: what the program then
		 * reads back and hands to its peer (libfabric's verbs provider binds
		 * 127.0.0.1 for a passive endpoint given no address, fi_pingpong -e msg)
		 * is an address the peer can reach. */
		ag = &rcm_agents[0];
		ip = ag->ip;
	} else if (ip) {
		ag = agent_by_ip(ip);
		if (!ag || ag->ip != ip)
			return -EADDRNOTAVAIL;
	}
	uint16_t port = ntohs(a->sin_port);
	if (!port)
		port = rcm_next_port++;
	/* Linux cma.c cma_check_port: two IDs of different families that are both afonly
	 * never conflict; otherwise a wildcard on either side does (EADDRNOTAVAIL), and
	 * the same address does (EADDRINUSE). */
	for (uint32_t i = 1; i < RCM_MAX_IDS; i++) {
		struct rcm_id *o = &rcm_ids[i];
		if (o != id && o->used && o->ps == id->ps && ntohs(o->src.sin_port) == port &&
		    (o->state == ST_LISTEN || o->state == ST_IDLE) &&
		    (o->src.sin_port || o->state == ST_LISTEN)) {
			if (afonly && o->afonly && v6 != o->v6)
				continue;
			if (!ip || !o->src.sin_addr.s_addr)
				return -EADDRNOTAVAIL;
			if (o->src.sin_addr.s_addr == htonl(ip))
				return -EADDRINUSE;
		}
	}
	id->v6 = v6;
	id->afonly = afonly;
	id->src.sin_addr.s_addr = htonl(ip);
	id->src.sin_port = htons(port);
	id->ag = ag;
	return 0;
}

static void fill_init_attr(struct rcm_id *id, uint32_t state, struct ib_uverbs_qp_attr *q)
{
	memset(q, 0, sizeof(*q));
	q->qp_state = state;
	q->port_num = 1;
	q->ah_attr.port_num = 1;
	if (id->qp_type == IBV_QPT_UD) {
		/* Linux cma.c cma_ib_init_qp_attr for a UD ID: the port space's Q_Key
		 * (librdmacm asks for INIT only and moves the QP to RTR and RTS itself,
		 * cma.c ucma_init_ud_qp) */
		q->qp_attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
		q->qkey = RCM_UDP_QKEY;
		return;
	}
	if (state == IBV_QPS_INIT) {
		q->qp_attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
		/* Linux cm.c cm_init_qp_init_attr: remote write always, read and atomics when
		 * the connection grants responder resources (librdmacm moves the QP to INIT
		 * again with these just before RTR, cma.c ucma_modify_qp_rtr); before a
		 * connection, read and write */
		q->qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE;
		if (id->rr)
			q->qp_access_flags |= IBV_ACCESS_REMOTE_ATOMIC;
	} else if (state == IBV_QPS_RTR) {
		q->qp_attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		/* responder attributes for the QPs that respond: not an XRC initiator
		 * (Linux cm.c cm_init_qp_rtr_attr: IB_QPT_RC and IB_QPT_XRC_TGT) */
		if (id->qp_type != IBV_QPT_XRC_SEND)
			q->qp_attr_mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		q->path_mtu = id->mtu ? id->mtu : 3;
		q->dest_qp_num = id->rqpn;
		q->rq_psn = id->lpsn;
		/* never more than the device takes: a peer may grant more responder
		 * resources than our REQ asked for (perftest's server on rxe answers with
		 * rxe's 128), and the QP would refuse them (Linux's kernel consumers get the
		 * same clamp from cma.c's conn_param handling) */
		q->max_dest_rd_atomic = id->ag && id->rr > id->ag->max_rd_atom ? id->ag->max_rd_atom : id->rr;
		/* Linux cm.c cm_init_qp_rtr_attr: min_rnr_timer 0 for RC, the longest wait
		 * of IBTA's RNR NAK timer encoding, 655.36 ms (hw/emu/roce_hdr.c): a sender
		 * that meets an empty receive queue waits that long per RNR retry.
		 * rdma-core's tests rely on it: their client posts its receive only after its
		 * own send completed, and the server's answer may come first. */
		q->min_rnr_timer = 0;
		ip_gid(ntohl(id->dst.sin_addr.s_addr), q->ah_attr.grh.dgid);
		q->ah_attr.grh.sgid_index = (uint8_t)(id->ag ? id->ag->gid_index : 0);
		q->ah_attr.grh.hop_limit = 64;
		q->ah_attr.is_global = 1;
	} else if (state == IBV_QPS_RTS) {
		q->qp_attr_mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				  IBV_QP_MAX_QP_RD_ATOMIC;
		/* an XRC target sends nothing but responses: the ACK timeout only (Linux
		 * cm.c cm_init_qp_rts_attr, IB_QPT_XRC_TGT) */
		if (id->qp_type == IBV_QPT_XRC_RECV)
			q->qp_attr_mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN;
		q->timeout = 14;   /* Linux cma CMA_IBOE_PACKET_LIFETIME 16 - 2 */
		if (id->ack_timeout_set)   /* Linux cma.c rdma_init_qp_attr: timeout_set */
			q->timeout = id->ack_timeout;
		q->retry_cnt = id->retry ? id->retry : 7;
		q->rnr_retry = id->rnr;
		q->sq_psn = id->rpsn;
		q->max_rd_atomic = id->ag && id->idepth > id->ag->max_init_rd_atom ? id->ag->max_init_rd_atom : id->idepth;
	} else {
		q->qp_attr_mask = IBV_QP_STATE;
	}
}

/* A UD ID's CONNECT sends a SIDR_REQ (Linux cma.c cma_resolve_ib_udp), sent again
 * after the CM response timeout like a REQ */
static int cmd_connect_ud(struct rcm_id *id, const struct rdma_ucm_conn_param *p)
{
	if (p->private_data_len > UV_CM_SIDR_REQ_PD - UV_CMA_HDR_LEN)
		return -EINVAL;
	id->lqpn = p->qp_num;
	id->lcomm = new_comm();
	struct uv_cm_msg m = { .attr = UV_CM_SIDR_REQ, .tid = ((uint64_t)id->lcomm << 32) | UV_CM_SIDR_REQ,
			       .local_comm_id = id->lcomm, .pkey = 0xffff,
			       .service_id = ((uint64_t)id->ps << 16) | ntohs(id->dst.sin_port) };
	struct uv_cma_hdr h = { .src_port = ntohs(id->src.sin_port), .src_ip = id->ag->ip,
				.dst_ip = ntohl(id->dst.sin_addr.s_addr) };
	uv_cma_hdr_put(m.pd, &h);
	memcpy(m.pd + UV_CMA_HDR_LEN, p->private_data, p->private_data_len);
	m.pd_len = UV_CM_SIDR_REQ_PD;
	id->state = ST_REQ_SENT;
	id_send(id, &m, true);
	return 0;
}

static int cmd_connect(struct rcm_id *id, const struct rdma_ucm_connect *c)
{
	if (!id->route || !id->ag)
		return -EINVAL;
	if (id->qp_type == IBV_QPT_UD && (id->ps == RDMA_PS_UDP || id->ps == RDMA_PS_IB))
		return cmd_connect_ud(id, &c->conn_param);
	if (id->ps != RDMA_PS_TCP && id->ps != RDMA_PS_IB)
		return -EOPNOTSUPP;
	const struct rdma_ucm_conn_param *p = &c->conn_param;
	if (p->private_data_len > UV_CM_REQ_PD - UV_CMA_HDR_LEN)
		return -EINVAL;
	id->lqpn = p->qp_num;
	id->lcomm = new_comm();
	id->lpsn = rnd24();
	id->rr = p->responder_resources;
	id->idepth = p->initiator_depth;
	id->retry = p->retry_count;
	id->rnr = p->rnr_retry_count;
	id->mtu = id->ag->mtu;
	struct uv_cm_msg m = {
		.attr = UV_CM_REQ, .tid = ((uint64_t)id->lcomm << 32) | UV_CM_REQ, .local_comm_id = id->lcomm,
		.service_id = ((uint64_t)id->ps << 16) | ntohs(id->dst.sin_port), .ca_guid = be64toh(id->ag->guid),
		.qpn = p->qp_num, .psn = id->lpsn, .responder_resources = p->responder_resources,
		.initiator_depth = p->initiator_depth, .remote_cm_timeout = RCM_RESPONSE_TIMEOUT,
		.local_cm_timeout = RCM_RESPONSE_TIMEOUT, .retry_count = p->retry_count,
		.rnr_retry_count = p->rnr_retry_count, .max_cm_retries = RCM_MAX_CM_RETRIES,
		.flow_control = p->flow_control, .srq = p->srq, .mtu = id->mtu, .pkey = 0xffff,
		.hop_limit = 64, .ack_timeout = 14,
	};
	/* XRC (Linux cm.c cm_req_set_qp_type, cm_format_req): transport 3, extended type
	 * XRC; an initiator has no responder resources, retries or SRQ to announce */
	if (id->qp_type == IBV_QPT_XRC_SEND) {
		m.transport = UV_CM_TRANSPORT_EXT;
		m.ext_transport = UV_CM_EXT_TRANSPORT_XRC;
		m.responder_resources = 0;
		m.retry_count = 0;
		m.rnr_retry_count = 0;
		m.srq = 0;
	}
	memcpy(m.local_gid, id->ag->gid, 16);
	ip_gid(ntohl(id->dst.sin_addr.s_addr), m.remote_gid);
	struct uv_cma_hdr h = { .src_port = ntohs(id->src.sin_port), .src_ip = id->ag->ip,
				.dst_ip = ntohl(id->dst.sin_addr.s_addr) };
	uv_cma_hdr_put(m.pd, &h);
	memcpy(m.pd + UV_CMA_HDR_LEN, p->private_data, p->private_data_len);
	m.pd_len = UV_CM_REQ_PD;
	id->state = ST_REQ_SENT;
	id_send(id, &m, true);
	return 0;
}

static int cmd_accept(struct rcm_id *id, const struct rdma_ucm_accept *c)
{
	if (id->state == ST_REP_RCVD) {
		/* the active side: librdmacm's ACCEPT after CONNECT_RESPONSE sends the RTU */
		id_reply(id, UV_CM_RTU, NULL, 0);
		id->state = ST_ESTABLISHED;
		return 0;
	}
	if (id->state != ST_REQ_RCVD)
		return -EINVAL;
	const struct rdma_ucm_conn_param *p = &c->conn_param;
	if (id->qp_type == IBV_QPT_UD) {
		/* Linux cma.c cma_send_sidr_rep: our QPN, the port space's Q_Key */
		if (p->private_data_len > UV_CM_SIDR_REP_PD)
			return -EINVAL;
		id->uid = c->uid;
		id->lqpn = p->qp_num;
		struct uv_cm_msg m = { .attr = UV_CM_SIDR_REP, .tid = ((uint64_t)id->rcomm << 32) | UV_CM_SIDR_REP,
				       .remote_comm_id = id->rcomm, .reason = UV_CM_SIDR_SUCCESS, .qpn = p->qp_num,
				       .qkey = RCM_UDP_QKEY,
				       .service_id = ((uint64_t)id->ps << 16) | ntohs(id->src.sin_port) };
		memcpy(m.pd, p->private_data, p->private_data_len);
		m.pd_len = p->private_data_len;
		id_send(id, &m, false);
		id->state = ST_UD_READY;
		return 0;
	}
	if (p->private_data_len > UV_CM_REP_PD)
		return -EINVAL;
	id->uid = c->uid;
	id->lqpn = p->qp_num;
	/* Linux cm.c ib_send_cm_rep: what the REP grants is what the QP gets */
	id->rr = p->responder_resources;
	id->idepth = p->initiator_depth;
	struct uv_cm_msg m = {
		.attr = UV_CM_REP, .tid = ((uint64_t)id->lcomm << 32) | UV_CM_REP, .local_comm_id = id->lcomm,
		.remote_comm_id = id->rcomm, .qpn = p->qp_num, .psn = id->lpsn,
		.responder_resources = p->responder_resources, .initiator_depth = p->initiator_depth,
		.flow_control = p->flow_control, .rnr_retry_count = p->rnr_retry_count, .srq = p->srq,
		.ca_guid = be64toh(id->ag->guid),
	};
	/* an XRC target answers with its QPN as the local EE context number, SRQ set,
	 * and no initiator depth or flow control (Linux cm.c cm_format_rep) */
	if (id->qp_type == IBV_QPT_XRC_RECV) {
		m.qpn = 0;
		m.eecn = p->qp_num;
		m.srq = 1;
		m.initiator_depth = 0;
		m.flow_control = 0;
	}
	memcpy(m.pd, p->private_data, p->private_data_len);
	m.pd_len = p->private_data_len;
	id->state = ST_REP_SENT;
	id_send(id, &m, true);
	memcpy(id->last_reply, id->mad, UV_MAD_LEN);
	id->have_reply = true;
	return 0;
}

static int cmd_disconnect(struct rcm_id *id)
{
	struct uv_cm_msg m;
	if ((id->state == ST_ESTABLISHED || id->state == ST_REP_SENT) && last_word(id, &m)) {
		id->state = ST_DREQ_SENT;
		id_send(id, &m, true);
		return 0;
	}
	if (id->state == ST_DREQ_RCVD) {
		id_reply(id, UV_CM_DREP, NULL, 0);
		id->state = ST_CLOSED;
		return 0;
	}
	if (id->state == ST_UD_READY)
		return 0;   /* SIDR leaves nothing to tear down on the wire */
	return -EINVAL;
}

static int cmd_reject(struct rcm_id *id, const struct rdma_ucm_reject *c)
{
	if (id->state != ST_REQ_RCVD || c->private_data_len > UV_CM_REJ_PD)
		return -EINVAL;
	if (id->qp_type == IBV_QPT_UD) {
		sidr_rep_send(id->ag, ntohl(id->dst.sin_addr.s_addr), id->rcomm,
			      ((uint64_t)id->ps << 16) | ntohs(id->src.sin_port), UV_CM_SIDR_REJECT);
		id->state = ST_CLOSED;
		return 0;
	}
	struct uv_cm_msg m = { .attr = UV_CM_REJ, .local_comm_id = id->lcomm, .remote_comm_id = id->rcomm,
			       .msg_rejected = 0, .reason = UV_CM_REJ_CONSUMER_DEFINED };
	memcpy(m.pd, c->private_data, c->private_data_len);
	m.pd_len = c->private_data_len;
	id_send(id, &m, false);
	id->state = ST_CLOSED;
	return 0;
}

/* MIGRATE_ID, written on the new channel and naming the old one's fd (Linux ucma.c
 * ucma_migrate_id): the ID and the events queued for it move to the new channel.
 * librdmacm uses it for every connection a synchronous listener accepts
 * (rdma_get_request: cma.c ucma_process_conn_req), which is how rsocket accepts. */
static int cmd_migrate(struct rcm_chan *ch, const struct rdma_ucm_migrate_id *c)
{
	struct rcm_chan *old = chan_of((int)c->fd);
	struct rcm_id *id = id_get(c->id);
	if (!old || !id || id->ch != old)
		return -EINVAL;
	struct rdma_ucm_migrate_resp r = { .events_reported = id->events_reported };
	if (old != ch) {
		for (struct rcm_evt **pp = &old->head; *pp;) {
			struct rcm_evt *e = *pp;
			if (e->owner != id->handle) {
				pp = &e->next;
				continue;
			}
			*pp = e->next;
			e->next = NULL;
			uint64_t v = 1;
			if (syscall(SYS_read, old->fd, &v, sizeof(v)) < 0)
				uv_log(UV_LOG_WARN, "rdma_cm: event fd read: %s", strerror(errno));
			if (ch->tail)
				ch->tail->next = e;
			else
				ch->head = e;
			ch->tail = e;
			v = 1;
			if (syscall(SYS_write, ch->fd, &v, sizeof(v)) < 0)
				uv_log(UV_LOG_WARN, "rdma_cm: event fd write: %s", strerror(errno));
		}
		old->tail = NULL;
		for (struct rcm_evt *e = old->head; e; e = e->next)
			old->tail = e;
		id->ch = ch;
		pthread_cond_broadcast(&ch->cond);
	}
	return put_resp(c->response, &r, sizeof(r));
}

/* One command (rdma_user_cm.h).  Returns 0 or a negative errno. */
/* ------------------------------------------------------------------ multicast */

/* RoCE multicast needs no SA (Linux cma.c cma_iboe_join_multicast): the IPv4 group maps
 * to the MGID ::ffff:G (cma_iboe_set_mgid for a RoCE v2 GID), the join completes at once
 * with RDMA_CM_EVENT_MULTICAST_JOIN carrying the UD parameters to send to the group (an
 * address handle to the MGID, QPN 0xFFFFFF, the port space's Q_Key, hop limit 64 for
 * RoCE v2 over IPv4), and librdmacm attaches the ID's QP itself with ibv_attach_mcast
 * (cma.c ucma_process_join; not for a send-only member), which makes the NIC join the IP
 * group on the wire, as cma_igmp_send joins it on the netdev. */
#define RCM_MAX_MCS 256
#define RCM_MC_BASE 0x10000u   /* multicast handles: never an ID's (id_destroy matches r.id) */

struct rcm_mc {
	bool used;
	uint32_t id;             /* the ID that joined */
	uint64_t uid;
	struct sockaddr_in addr;
	unsigned events_reported;
};

static struct rcm_mc rcm_mcs[RCM_MAX_MCS];

static struct rcm_mc *mc_get(uint32_t h)
{
	if (h < RCM_MC_BASE || h - RCM_MC_BASE >= RCM_MAX_MCS || !rcm_mcs[h - RCM_MC_BASE].used)
		return NULL;
	return &rcm_mcs[h - RCM_MC_BASE];
}

static void mc_event_reported(const struct rdma_ucm_event_resp *r)
{
	struct rcm_mc *mc = r->event == RCM_EV_MULTICAST_JOIN ? mc_get(r->id) : NULL;
	if (mc)
		mc->events_reported++;
}

/* An ID that goes leaves its groups (Linux ucma_destroy_id: ucma_cleanup_multicast). */
static void mc_drop_id(const struct rcm_id *id)
{
	for (unsigned i = 0; i < RCM_MAX_MCS; i++)
		if (rcm_mcs[i].used && rcm_mcs[i].id == id->handle)
			rcm_mcs[i].used = false;
}

static int cmd_join_mcast(struct rcm_id *id, uint64_t uid, const struct sockaddr *sa, size_t len,
			  uint16_t flags, uint64_t resp_ptr)
{
	struct sockaddr_in a;
	if (len < sizeof(sa_family_t) || flags >= RDMA_MC_JOIN_FLAG_RESERVED)
		return -EINVAL;
	/* Linux rdma_join_multicast: the ID must be bound to a device (ADDR_BOUND or
	 * ADDR_RESOLVED) */
	if (!id->ag)
		return -EINVAL;
	if (sa->sa_family == AF_INET6)
		return -EOPNOTSUPP;   /* cma_iboe_join_multicast: IPv6 groups not on RoCE v2 */
	if (sa->sa_family != AF_INET || len < sizeof(a))
		return -EAFNOSUPPORT;
	memcpy(&a, sa, sizeof(a));
	if (!a.sin_addr.s_addr)
		return -EINVAL;       /* cma_zero_addr */
	if (id->ps != RDMA_PS_UDP && id->ps != RDMA_PS_IB)
		return -EOPNOTSUPP;   /* RDMA_PS_IPOIB's Q_Key would come from the SA */
	unsigned i = 0;
	while (i < RCM_MAX_MCS && rcm_mcs[i].used)
		i++;
	if (i == RCM_MAX_MCS)
		return -ENOMEM;
	struct rcm_mc *mc = &rcm_mcs[i];
	memset(mc, 0, sizeof(*mc));
	mc->used = true;
	mc->id = id->handle;
	mc->uid = uid;
	mc->addr = a;
	struct rdma_ucm_create_id_resp r = { .id = RCM_MC_BASE + i };
	int rc = put_resp(resp_ptr, &r, sizeof(r));
	if (rc) {
		mc->used = false;
		return rc;
	}
	/* a test (or a person) can start a sender once a receiver got here */
	uv_log(UV_LOG_INFO, "rdma_cm: joined multicast group %u.%u.%u.%u%s", RCM_IP4_ARGS(ntohl(a.sin_addr.s_addr)),
	       flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER ? " (send only)" : "");
	struct rcm_evt *e = evt_push(id, RCM_EV_MULTICAST_JOIN, 0, NULL, uid);
	if (e) {
		/* ucma's event for a multicast carries the multicast's uid and handle */
		e->r.id = RCM_MC_BASE + i;
		struct rdma_ucm_ud_param *u = &e->r.param.ud;
		u->qp_num = 0xffffff;      /* IB_MULTICAST_QPN */
		u->qkey = RCM_UDP_QKEY;    /* cma_iboe_join_multicast, RDMA_PS_UDP and RDMA_PS_IB */
		ip_gid(ntohl(a.sin_addr.s_addr), u->ah_attr.grh.dgid);
		u->ah_attr.grh.sgid_index = (uint8_t)id->ag->gid_index;
		u->ah_attr.grh.hop_limit = 64;   /* IPV6_DEFAULT_HOPLIMIT for RoCE v2 over IPv4 */
		u->ah_attr.is_global = 1;
		u->ah_attr.port_num = 1;
	}
	return 0;
}

static int cmd_leave_mcast(struct rcm_chan *ch, const struct rdma_ucm_destroy_id *c)
{
	struct rcm_mc *mc = mc_get(c->id);
	struct rcm_id *id = mc ? id_get(mc->id) : NULL;
	if (!mc || !id || id->ch != ch)
		return -ENOENT;   /* ucma_leave_multicast: no such multicast */
	struct rdma_ucm_destroy_id_resp r = { .events_reported = mc->events_reported };
	/* its events not yet read are dropped (ucma_leave_multicast: ucma_cleanup_mc_events) */
	chan_drop_events(ch, evt_of_mc, c->id);
	mc->used = false;
	return put_resp(c->response, &r, sizeof(r));
}

static int rcm_cmd(struct rcm_chan *ch, int fd, uint32_t cmd, const void *in, size_t inlen)
{
#define NEED(type) do { if (inlen < sizeof(type)) return -EINVAL; } while (0)
	struct rcm_id *id;
	switch (cmd) {
	case RDMA_USER_CM_CMD_CREATE_ID: {
		NEED(struct rdma_ucm_create_id);
		const struct rdma_ucm_create_id *c = in;
		if (c->ps != RDMA_PS_TCP && c->ps != RDMA_PS_UDP && c->ps != RDMA_PS_IB && c->ps != RDMA_PS_IPOIB)
			return -EINVAL;
		id = id_new(ch);
		if (!id)
			return -ENOMEM;
		id->uid = c->uid;
		id->ps = c->ps;
		id->qp_type = c->qp_type;
		struct rdma_ucm_create_id_resp r = { .id = id->handle };
		int rc = put_resp(c->response, &r, sizeof(r));
		if (rc)
			id->used = false;
		return rc;
	}
	case RDMA_USER_CM_CMD_DESTROY_ID: {
		NEED(struct rdma_ucm_destroy_id);
		const struct rdma_ucm_destroy_id *c = in;
		if (!(id = id_get(c->id)) || id->ch != ch)
			return -EINVAL;
		struct rdma_ucm_destroy_id_resp r = { .events_reported = id->events_reported };
		id_destroy(id);
		return put_resp(c->response, &r, sizeof(r));
	}
	case RDMA_USER_CM_CMD_BIND_IP: {
		NEED(struct rdma_ucm_bind_ip);
		const struct rdma_ucm_bind_ip *c = in;
		if (!(id = id_get(c->id)) || id->ch != ch)
			return -EINVAL;
		return bind_addr(id, &c->addr);
	}
	case RDMA_USER_CM_CMD_BIND:
	case RDMA_USER_CM_CMD_RESOLVE_ADDR:
		/* AF_IB addressing is not offered: librdmacm then keeps to the IP commands
		 * (cma.c, ucma_set_af_ib_support), JOIN_IP_MCAST among them */
		return -EAFNOSUPPORT;
	case RDMA_USER_CM_CMD_JOIN_IP_MCAST: {
		NEED(struct rdma_ucm_join_ip_mcast);
		const struct rdma_ucm_join_ip_mcast *c = in;
		if (!(id = id_get(c->id)) || id->ch != ch)
			return -EINVAL;
		return cmd_join_mcast(id, c->uid, (const struct sockaddr *)&c->addr, sizeof(c->addr),
				      RDMA_MC_JOIN_FLAG_FULLMEMBER, c->response);
	}
	case RDMA_USER_CM_CMD_JOIN_MCAST: {
		NEED(struct rdma_ucm_join_mcast);
		const struct rdma_ucm_join_mcast *c = in;
		if (!(id = id_get(c->id)) || id->ch != ch)
			return -EINVAL;
		return cmd_join_mcast(id, c->uid, (const struct sockaddr *)&c->addr,
				      c->addr_size <= sizeof(c->addr) ? c->addr_size : 0, c->join_flags, c->response);
	}
	case RDMA_USER_CM_CMD_LEAVE_MCAST: {
		NEED(struct rdma_ucm_destroy_id);
		return cmd_leave_mcast(ch, in);
	}
	case RDMA_USER_CM_CMD_RESOLVE_IP: {
		NEED(struct rdma_ucm_resolve_ip);
		const struct rdma_ucm_resolve_ip *c = in;
		if (!(id = id_get(c->id)) || id->ch != ch)
			return -EINVAL;
		struct sockaddr_in s, d;
		memcpy(&s, &c->src_addr, sizeof(s));
		memcpy(&d, &c->dst_addr, sizeof(d));
		if (d.sin_family != AF_INET)
			return -EAFNOSUPPORT;
		if (s.sin_family == AF_INET && s.sin_addr.s_addr && !id->ag) {
			int rc = bind_addr(id, &s);
			if (rc)
				return rc;
		}
		if (!id->ag) {
			/* the source is the device's own address: each of our devices is its
			 * own IPv4 host on loopback (rdma_resolve_addr(3): "If no source
			 * address is given, ... a source address is chosen") */
			id->ag = agent_by_ip(0);
			if (!id->ag)
				return -EADDRNOTAVAIL;
			id->src.sin_addr.s_addr = htonl(id->ag->ip);
		}
		if (!id->src.sin_port)
			id->src.sin_port = htons(rcm_next_port++);
		if (!id->src.sin_addr.s_addr)
			id->src.sin_addr.s_addr = htonl(id->ag->ip);
		id->dst = d;
		id->state = ST_ADDR;
		evt_push(id, RCM_EV_ADDR_RESOLVED, 0, NULL, id->uid);
		return 0;
	}
	case RDMA_USER_CM_CMD_RESOLVE_ROUTE: {
		NEED(struct rdma_ucm_resolve_route);
		const struct rdma_ucm_resolve_route *c = in;
		if (!(id = id_get(c->id)) || id->ch != ch || id->state != ST_ADDR)
			return -EINVAL;
		id->route = true;
		id->mtu = id->ag->mtu;
		id->state = ST_ROUTE;
		evt_push(id, RCM_EV_ROUTE_RESOLVED, 0, NULL, id->uid);
		return 0;
	}
	case RDMA_USER_CM_CMD_QUERY_ROUTE: {
		NEED(struct rdma_ucm_query);
		const struct rdma_ucm_query *c = in;
		if (!(id = id_get(c->id)) || id->ch != ch)
			return -EINVAL;
		return cmd_query_route(id, c->response);
	}
	case RDMA_USER_CM_CMD_QUERY:
		return -ENOSYS;   /* AF_IB queries: never reached with AF_IB refused */
	case RDMA_USER_CM_CMD_CONNECT: {
		NEED(struct rdma_ucm_connect);
		const struct rdma_ucm_connect *c = in;
		if (!(id = id_get(c->id)) || id->ch != ch || id->state != ST_ROUTE)
			return -EINVAL;
		return cmd_connect(id, c);
	}
	case RDMA_USER_CM_CMD_LISTEN: {
		NEED(struct rdma_ucm_listen);
		const struct rdma_ucm_listen *c = in;
		if (!(id = id_get(c->id)) || id->ch != ch)
			return -EINVAL;
		if (id->ps != RDMA_PS_TCP && id->ps != RDMA_PS_UDP && id->ps != RDMA_PS_IB)
			return -EOPNOTSUPP;
		if (!id->src.sin_port) {
			struct sockaddr_in any = { .sin_family = AF_INET };
			int rc = bind_addr(id, &any);
			if (rc)
				return rc;
		}
		if (id->state != ST_LISTEN) {
			int rc = listen_register(id);
			if (rc)
				return rc;
		}
		id->state = ST_LISTEN;
		/* a test (or a person) starting a client can wait for this line
		 * (UVERBS_LOG=info) instead of guessing how long the server takes */
		uint32_t lip = ntohl(id->src.sin_addr.s_addr);
		if (id->v6)
			uv_log(UV_LOG_INFO, "rdma_cm: listening on [::] port %u (port space 0x%x)%s",
			       ntohs(id->src.sin_port), id->ps,
			       id->afonly ? ", IPv6 only: no request reaches it on our IPv4 wire" : ", IPv4 too");
		else
			uv_log(UV_LOG_INFO, "rdma_cm: listening on %u.%u.%u.%u port %u (port space 0x%x)",
			       RCM_IP4_ARGS(lip), ntohs(id->src.sin_port), id->ps);
		held_reqs(id, 0);
		return 0;
	}
	case RDMA_USER_CM_CMD_ACCEPT: {
		NEED(struct rdma_ucm_accept);
		const struct rdma_ucm_accept *c = in;
		if (!(id = id_get(c->id)) || id->ch != ch)
			return -EINVAL;
		return cmd_accept(id, c);
	}
	case RDMA_USER_CM_CMD_REJECT: {
		NEED(struct rdma_ucm_reject);
		const struct rdma_ucm_reject *c = in;
		if (!(id = id_get(c->id)) || id->ch != ch)
			return -EINVAL;
		return cmd_reject(id, c);
	}
	case RDMA_USER_CM_CMD_DISCONNECT: {
		NEED(struct rdma_ucm_disconnect);
		const struct rdma_ucm_disconnect *c = in;
		if (!(id = id_get(c->id)) || id->ch != ch)
			return -EINVAL;
		return cmd_disconnect(id);
	}
	case RDMA_USER_CM_CMD_INIT_QP_ATTR: {
		NEED(struct rdma_ucm_init_qp_attr);
		const struct rdma_ucm_init_qp_attr *c = in;
		if (!(id = id_get(c->id)) || id->ch != ch || !id->ag)
			return -EINVAL;
		if ((c->qp_state == IBV_QPS_RTR || c->qp_state == IBV_QPS_RTS) && !id->rqpn)
			return -EINVAL;
		struct ib_uverbs_qp_attr q;
		fill_init_attr(id, c->qp_state, &q);
		uv_log(UV_LOG_DEBUG, "rdma_cm: QP attributes for state %u: dest QPN 0x%x, rq_psn 0x%x, sq_psn 0x%x, "
		       "path MTU %u", c->qp_state, q.dest_qp_num, q.rq_psn, q.sq_psn, q.path_mtu);
		return put_resp(c->response, &q, sizeof(q));
	}
	case RDMA_USER_CM_CMD_GET_EVENT:
		NEED(struct rdma_ucm_get_event);
		return cmd_get_event(ch, in, fd);
	case RDMA_USER_CM_CMD_SET_OPTION: {
		NEED(struct rdma_ucm_set_option);
		const struct rdma_ucm_set_option *c = in;
		if (!(id = id_get(c->id)) || id->ch != ch)
			return -EINVAL;
		if (c->level == RDMA_OPTION_ID && c->optname == RDMA_OPTION_ID_ACK_TIMEOUT) {
			/* Linux ucma.c ucma_set_option_id: one byte; cma.c rdma_set_ack_timeout:
			 * connected QPs only, the QP's local ACK timeout from then on */
			uint8_t t;
			if (c->optlen != sizeof(t))
				return -EINVAL;
			if (id->qp_type != IBV_QPT_RC && id->qp_type != IBV_QPT_XRC_SEND)
				return -EINVAL;
			if (!c->optval)
				return -EFAULT;
			memcpy(&t, (const void *)(uintptr_t)c->optval, sizeof(t));
			id->ack_timeout = t;
			id->ack_timeout_set = true;
			return 0;
		}
		if (c->level == RDMA_OPTION_ID && c->optname == RDMA_OPTION_ID_AFONLY) {
			/* Linux ucma.c ucma_set_option_id: an int; cma.c rdma_set_afonly: while
			 * the ID is idle or bound (not yet listening) */
			int v;
			if (c->optlen != sizeof(v))
				return -EINVAL;
			if (!c->optval)
				return -EFAULT;
			if (id->state != ST_IDLE)
				return -EINVAL;
			memcpy(&v, (const void *)(uintptr_t)c->optval, sizeof(v));
			id->afonly = v != 0;
			id->afonly_set = true;
			return 0;
		}
		if (c->level == RDMA_OPTION_ID &&
		    (c->optname == RDMA_OPTION_ID_TOS || c->optname == RDMA_OPTION_ID_REUSEADDR))
			return 0;
		return -ENOSYS;
	}
	case RDMA_USER_CM_CMD_NOTIFY:
		return 0;
	case RDMA_USER_CM_CMD_MIGRATE_ID:
		NEED(struct rdma_ucm_migrate_id);
		return cmd_migrate(ch, in);
	default:
		return -ENOSYS;
	}
#undef NEED
}

/* ------------------------------------------------------------------ process exit */

/* A process that exits with connections open: the kernel's ucma would close the
 * channel file at exit (ucma_close) and its CM send a DREQ for each connection (Linux
 * cm.c cm_destroy_id, IBTA 12.9.6); a program that never calls rdma_disconnect or
 * rdma_destroy_id before exit (perftest's ib_atomic_lat server) would otherwise leave
 * its peer waiting out a DREQ's 16 timeouts.  So the library's destructor sends that
 * DREQ (once, no retry: the process is going), or the DREP a received DREQ still
 * waits for, and waits up to RCM_EXIT_WAIT_MS for the sends to leave the NIC.  Not in
 * a child of fork() (its parent's connections are not its own), and not when the lock
 * cannot be had (a thread died holding it). */
#define RCM_EXIT_WAIT_MS 200
static void rcm_exit_notify(void) __attribute__((destructor));
static void rcm_exit_notify(void)
{
	if (!rcm_agents_probed || getpid() != rcm_pid)
		return;
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_nsec += RCM_EXIT_WAIT_MS * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	if (pthread_mutex_timedlock(&rcm_lock, &dl))
		return;
	unsigned want[RCM_MAX_AGENTS] = { 0 };
	unsigned sent = 0;
	for (unsigned i = 0; i < rcm_nagents; i++)
		want[i] = atomic_load(&rcm_agents[i].sends_done);
	for (uint32_t i = 1; i < RCM_MAX_IDS; i++) {
		struct rcm_id *id = &rcm_ids[i];
		if (!id->used || !id->ag)
			continue;
		unsigned before = id->ag->send_next;
		struct uv_cm_msg m;
		if (!last_word(id, &m))
			continue;
		id_send(id, &m, false);
		id->state = ST_CLOSED;
		id->mad_armed = false;
		if (id->ag->send_next != before) {
			want[id->ag - rcm_agents]++;
			sent++;
		}
	}
	/* The records keep every DREQ just posted: should the process be killed before they
	 * leave the NIC (the wait below), or had a post failed, the guardian sends them; a
	 * peer answers a second DREQ with its DREP again (IBTA 12.9.6). */
	rcm_exiting = true;
	pthread_mutex_unlock(&rcm_lock);
	if (sent)
		uv_log(UV_LOG_INFO, "rdma_cm: process exit: DREQ/DREP sent for %u connection(s)", sent);
	/* the agent threads count the send completions; wait for ours, bounded */
	uint64_t end = now_ns() + RCM_EXIT_WAIT_MS * 1000000ull;
	for (unsigned i = 0; i < rcm_nagents && sent; i++)
		while ((int)(atomic_load(&rcm_agents[i].sends_done) - want[i]) < 0 && now_ns() < end)
			usleep(1000);
}

/* ------------------------------------------------------------------ libc entry points */

int uv_rcm_open(int flags)
{
	if ((flags & O_ACCMODE) != O_RDWR)
		return uv_minus1(EACCES);
	struct rcm_chan *ch = calloc(1, sizeof(*ch));
	if (!ch)
		return uv_minus1(ENOMEM);
	ch->fd = eventfd(0, EFD_SEMAPHORE | ((flags & O_CLOEXEC) ? EFD_CLOEXEC : 0));
	if (ch->fd < 0 || ch->fd >= RCM_MAX_FD) {
		int e = ch->fd < 0 ? errno : EMFILE;
		if (ch->fd >= 0)
			syscall(SYS_close, ch->fd);
		free(ch);
		return uv_minus1(e);
	}
	pthread_cond_init(&ch->cond, NULL);
	atomic_store(&rcm_fds[ch->fd], ch);
	atomic_fetch_add(&rcm_open_chans, 1);
	return ch->fd;
}

UV_EXPORT ssize_t write(int fd, const void *buf, size_t count)
{
	static void *_Atomic next;
	struct rcm_chan *ch = chan_of(fd);
	if (__builtin_expect(!ch, 1)) {
		ssize_t (*f)(int, const void *, size_t) = (ssize_t (*)(int, const void *, size_t))next_sym(&next, "write");
		return f ? f(fd, buf, count) : syscall(SYS_write, fd, buf, count);
	}
	struct rdma_ucm_cmd_hdr h;
	if (!buf || count < sizeof(h))
		return uv_minus1(EINVAL);
	memcpy(&h, buf, sizeof(h));
	if (h.in > count - sizeof(h))
		return uv_minus1(EINVAL);
	/* the command is copied out (the kernel's copy_from_user), aligned for its u64s */
	uint64_t cmdbuf[(sizeof(struct rdma_ucm_accept) + 64) / 8 + 1];
	memset(cmdbuf, 0, sizeof(cmdbuf));
	size_t inl = h.in < sizeof(cmdbuf) ? h.in : sizeof(cmdbuf);
	memcpy(cmdbuf, (const uint8_t *)buf + sizeof(h), inl);
	pthread_mutex_lock(&rcm_lock);
	int rc = rcm_cmd(ch, fd, h.cmd, cmdbuf, inl);
	guard_sync();
	pthread_mutex_unlock(&rcm_lock);
	if (rc)
		uv_log(UV_LOG_INFO, "rdma_cm: command %u: %s", h.cmd, strerror(-rc));
	if (rc)
		return uv_minus1(-rc);
	return (ssize_t)count;
}

UV_EXPORT int close(int fd)
{
	static void *_Atomic next;
	struct rcm_chan *ch = chan_of(fd);
	if (ch) {
		pthread_mutex_lock(&rcm_lock);
		atomic_store(&rcm_fds[fd], NULL);
		atomic_fetch_sub(&rcm_open_chans, 1);
		for (uint32_t i = 1; i < RCM_MAX_IDS; i++)
			if (rcm_ids[i].used && rcm_ids[i].ch == ch)
				id_destroy(&rcm_ids[i]);
		while (ch->head) {
			struct rcm_evt *e = ch->head;
			ch->head = e->next;
			free(e);
		}
		pthread_cond_broadcast(&ch->cond);
		bool waited = ch->waiting;
		guard_sync();
		pthread_mutex_unlock(&rcm_lock);
		/* a thread still blocked in GET_EVENT keeps the channel: it is leaked */
		if (!waited) {
			pthread_cond_destroy(&ch->cond);
			free(ch);
		}
	}
	int (*f)(int) = (int (*)(int))next_sym(&next, "close");
	return f ? f(fd) : (int)syscall(SYS_close, fd);
}

static void rcm_stat(struct stat *st)
{
	memset(st, 0, sizeof(*st));
	/* a character device, as the kernel's misc device rdma_cm (major 10, a dynamic
	 * minor).  When the kernel has one too (rdma_ucm loaded), RDMA netlink gives
	 * librdmacm its number and open_cdev (rdma-core util/open_cdev.c,
	 * open_cdev_internal) refuses a node whose st_rdev differs, then opens the
	 * kernel's own (open_cdev_robust), which cannot serve our devices: so ours
	 * reports the real node's number. */
	struct stat real;
	st->st_mode = S_IFCHR | 0666;
	st->st_rdev = makedev(10, 58);
	if (!stat("/dev/infiniband/rdma_cm", &real) && S_ISCHR(real.st_mode))
		st->st_rdev = real.st_rdev;
}

UV_EXPORT int fstat(int fd, struct stat *st)
{
	static void *_Atomic next;
	if (__builtin_expect(chan_of(fd) != NULL, 0)) {
		rcm_stat(st);
		return 0;
	}
	int (*f)(int, struct stat *) = (int (*)(int, struct stat *))next_sym(&next, "fstat");
	return f ? f(fd, st) : uv_minus1(ENOSYS);
}

UV_EXPORT int fstat64(int fd, struct stat64 *st)
{
	static void *_Atomic next;
	if (__builtin_expect(chan_of(fd) != NULL, 0)) {
		struct stat s;
		rcm_stat(&s);
		memset(st, 0, sizeof(*st));
		st->st_mode = s.st_mode;
		st->st_rdev = s.st_rdev;
		return 0;
	}
	int (*f)(int, struct stat64 *) = (int (*)(int, struct stat64 *))next_sym(&next, "fstat64");
	return f ? f(fd, st) : uv_minus1(ENOSYS);
}
