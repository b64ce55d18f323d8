/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uverbs: the libibverbs API over hw/mlx5, in the application's process (docs/architecture.md,
 * "The verbs layer").  Internal header shared by the files of libuverbs.so.
 *
 * What it owns: the verbs objects (laid out as <infiniband/verbs.h> expects, because
 * applications' inline functions such as ibv_post_send, ibv_poll_cq, ibv_query_port,
 * ibv_create_qp_ex and ibv_wr_* call through them), the device list (UVERBS_DEVICES),
 * completion channels and async events as file descriptors, and one service thread
 * per open device that takes the device's EQ interrupts.
 * What it may call: hw/mlx5 (mx5.h and the data-path headers) and nothing below it.
 * Who calls it: applications, linked directly or through LD_PRELOAD.
 *
 * Locking: every hw/mlx5 control call (commands, EQ service) runs under the device's
 * lock (mx5.h: "the caller serialises").  The data path is thread-safe as rdma-core's
 * mlx5 is: ibv_post_send takes the QP's send-queue lock, ibv_post_recv its
 * receive-queue lock, ibv_post_srq_recv the SRQ's, ibv_poll_cq, ibv_req_notify_cq and
 * start_poll..end_poll the CQ's (hw/mlx5 sq.h says what each protects).  The
 * single-thread hints turn a queue's lock into one test of a flag (domain.c):
 * UVERBS_SINGLE_THREADED=1, a parent domain with a thread domain, or
 * IBV_CREATE_CQ_ATTR_SINGLE_THREADED for a CQ.
 * Lock order: uv_dev.lock, then a CQ's, then a queue's (SQ, RQ, SRQ); uv_dev.lock, then
 * a channel's or a context's event lock, never reversed.
 */
#ifndef UVERBS_UVERBS_UV_H
#define UVERBS_UVERBS_UV_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "hw/mlx5/mx5.h"
#include "hw/mlx5/sq.h"
#include "hw/mlx5/cq.h"
#include "hw/platform/list.h"

/* The exported libibverbs API; everything else in libuverbs.so stays hidden
 * (-fvisibility=hidden and the version script uverbs.map). */
#define UV_EXPORT __attribute__((visibility("default")))

#define UV_MAX_EQS 64
#define UV_PORTS 1

/* ------------------------------------------------------------------ logging */

enum uv_log_level { UV_LOG_NONE = 0, UV_LOG_ERROR, UV_LOG_WARN, UV_LOG_INFO, UV_LOG_DEBUG };
/* One line on stderr when UVERBS_LOG asks for this level (error|warn|info|debug). */
void uv_log(enum uv_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Unsupported feature: log the reason, set errno = EOPNOTSUPP. */
void uv_unsupported(const char *what);
/* A verb this driver does not offer, written as one row: the function `name(params)`
 * logs `what` through uv_unsupported and returns `fail`, which is NULL for a verb
 * that returns an object and EOPNOTSUPP for one that returns an errno (its man page).
 * Its parameters go unused: rows stand between UV_NOT_OFFERED_BEGIN and _END, which
 * silence -Wunused-parameter for them alone. */
#define UV_NOT_OFFERED(ret, name, params, what, fail) \
	ret name params { uv_unsupported(what); return fail; }
#define UV_NOT_OFFERED_BEGIN \
	_Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wunused-parameter\"")
#define UV_NOT_OFFERED_END _Pragma("GCC diagnostic pop")
/* How a verb that returns a pointer (NULL) or a libc-style int (-1) fails: errno says why. */
static inline void *uv_null(int err)
{
	errno = err;
	return NULL;
}
static inline int uv_minus1(int err)
{
	errno = err;
	return -1;
}
/* ... and one that returns an errno value leaves it in errno too: rdma-core's verbs
 * leave it there through the system call that failed (ibv_modify_qp(3): "returns 0 on
 * success, or the value of errno on failure"), and applications print it with perror. */
static inline int uv_errno(int rc)
{
	if (rc > 0)
		errno = rc;
	return rc;
}
/* True (errno = ENOMEM) when environment variable `env`, one of rdma-core's
 * MLX_{CQ,QP,SRQ}_ALLOC_TYPE, asks for huge-page-only queue buffers (log.c). */
bool uv_alloc_type_refused(const char *env);

/* rdma_cm_linux.c: librdmacm's character device, answered in the library (Linux) */
#define UV_RCM_PATH "/dev/infiniband/rdma_cm"
int uv_rcm_open(int flags);

/* ------------------------------------------------------------------ delivery */

/* True in the copy of the library built as Apple's librdma (uverbs/name/). */
extern const bool uv_loaded_as_librdma;
/* Apple's delivery for UC queue pairs: under the librdma name unless UVERBS_DELIVERY=ibta,
 * or under any name with UVERBS_DELIVERY=apple (qp.c). */
bool uv_apple_delivery(void);

/* ------------------------------------------------------------------ objects */

struct uv_context;

struct uv_dev {
	struct ibv_device ibdev;      /* what applications see; must be first */
	/* rdma-core's struct verbs_device keeps its provider's ops pointer right after
	 * struct ibv_device; libmlx5's exported mlx5dv_* entry points (which perftest
	 * imports) compare that pointer with their own ops to recognise an mlx5 device.
	 * Keeping a NULL here makes them answer EOPNOTSUPP for our devices instead of
	 * treating our context as theirs. */
	const void *not_a_provider;
	char uri[256];
	unsigned index;
	pthread_mutex_t lock;         /* serialises hw/mlx5 control calls and EQ service */
	struct mx5_device *mx5;       /* brought up while contexts are open */
	struct uv_xrcd *xrcds;        /* XRC domains open on it (xrc.c; under lock) */
	pid_t up_pid;                 /* the process that brought mx5 up (uv_dev_up) */
	unsigned nctx;
	struct uv_context *ctxs;
	struct mx5_device_info info;
	struct mx5_port_info port;    /* refreshed on query and port events */
	uint8_t mac[6];
	uint64_t node_guid;           /* EUI-64 of the port MAC */
	bool have_guid;
	bool open_fail_said;       /* the reason it cannot be opened went to stderr */
	/* the QP ibv_rereg_mr's UMR WQEs go through (mr.c), made on first use */
	struct mx5_pd *umr_pd;
	struct mx5_cq *umr_cq;
	struct mx5_qp *umr_qp;
	/* service thread */
	pthread_t thread;
	bool thread_running;
	int wake_fd;                  /* eventfd: stop, or a new completion EQ to watch */
	volatile int stop;
	struct mx5_eq *eqs[UV_MAX_EQS];
	unsigned neqs;
	/* published counters (stats.c) */
	uint64_t stats_last_ms;
	uint32_t stats_out_of_buffer;
	bool stats_published, stats_warned;
};

struct uv_event_node {
	struct uv_event_node *next;
	struct ibv_async_event ev;
	struct ibv_cq *cq;            /* completion channel entries */
};

/* A queue of events behind an eventfd in semaphore mode: every queued event is one
 * count, so poll() on the fd and the queue always agree (the fd is readable exactly
 * when an event is queued). */
struct uv_evq {
	pthread_mutex_t lock;
	int fd;
	struct uv_event_node *head, *tail;
};
int uv_evq_init(struct uv_evq *q);
/* calloc(size) of a structure whose uv_evq sits at evq_off, the queue set up; NULL with
 * errno set when either fails. */
void *uv_evq_alloc(size_t size, size_t evq_off);
void uv_evq_fini(struct uv_evq *q);
/* Queue a copy of n (allocated here); 0 or -errno. */
int uv_evq_push(struct uv_evq *q, const struct uv_event_node *n);
/* Block (unless the fd is non-blocking: -EAGAIN) for one event; 0 or -errno.  Safe
 * beside uv_evq_drop: a dropped entry is never reported as an error. */
int uv_evq_pop(struct uv_evq *q, struct uv_event_node *out);
/* uv_evq_pop, with taken(entry) called under the queue's lock as the entry leaves it. */
int uv_evq_pop_hook(struct uv_evq *q, struct uv_event_node *out, void (*taken)(const struct uv_event_node *));
/* Drop queued entries naming `obj` (a CQ, QP or SRQ being destroyed). */
void uv_evq_drop(struct uv_evq *q, const void *obj);

struct uv_context {
	struct verbs_context vctx;    /* ibv_context is its last member */
	struct uv_dev *dev;
	struct uv_context *next;
	struct uv_evq async;          /* context.async_fd */
	int cmd_fd;                   /* context.cmd_fd: /dev/null (device.c) */
	struct uv_qp *qps;            /* for async event routing (under dev->lock) */
	struct uv_cq *cqs;
	struct uv_srq *srqs;
	/* the other objects made from this context, so that ibv_close_device can refuse
	 * while any is open (device.c; under dev->lock) */
	unsigned npds, nahs, nchannels, nxrcds, nopened;
	bool closed;     /* ibv_close_device called with objects open: kept until exit */
	pid_t pid;       /* the process that opened it: a fork child's copy is its parent's */
};

struct uv_td {
	struct ibv_td td;
	unsigned users;               /* parent domains using it (under dev->lock) */
};

/* A protection domain, or a parent domain (ibv_alloc_parent_domain(3)): that is a PD
 * everywhere a PD is taken, standing for `base` (m is base's), with a thread domain
 * that promises one thread at a time on the queues made with it. */
struct uv_pd {
	struct ibv_pd pd;
	struct mx5_pd *m;
	struct uv_pd *base;           /* parent domain: the PD it stands for; else NULL */
	struct uv_td *td;             /* parent domain: its thread domain, or NULL */
	void *pd_context;             /* parent domain: IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT */
	unsigned parents;             /* parent domains standing for this PD (under dev->lock) */
	unsigned users;               /* parent domain: QPs, CQs and SRQs made on it (dev->lock) */
	unsigned ahs;                 /* address handles made on it (dev->lock): freeing it is
				       * EBUSY while they live, as a kernel AH holds its PD
				       * (Linux rdma_create_ah takes a usecnt on it) */
};

struct uv_mr {
	struct ibv_mr mr;
	struct mx5_mr *m;
	unsigned access;
};

struct uv_channel {
	struct ibv_comp_channel ch;
	struct uv_evq q;
};

struct uv_cq {
	struct ibv_cq_ex cqx;         /* struct ibv_cq is its prefix */
	struct mx5_cq *m;
	struct mx5_cq_ring *ring;
	struct uv_context *ctx;
	struct uv_cq *next;
	struct uv_pd *parent;         /* the parent domain it was made on, or NULL */
	uint64_t wc_flags;            /* ibv_create_cq_attr_ex.wc_flags asked for */
	struct ibv_wc cur;            /* the completion start_poll/next_poll read */
	bool polling;
	unsigned async_reported;      /* async events handed out naming it (events.c) */
	unsigned comp_reported;       /* completion events handed out naming it (events.c) */
};

/* An XRC domain (xrc.c). */
struct uv_xrcd {
	struct ibv_xrcd xrcd;
	struct mx5_xrcd *m;
	struct uv_context *ctx;       /* the context that made it */
	struct uv_xrcd *next;         /* on its device's list (under dev->lock) */
	unsigned opens;               /* ibv_open_xrcd calls not yet closed */
	bool named;                   /* opened through a file: ino_dev/ino name it */
	dev_t ino_dev;
	ino_t ino;
};
static inline struct uv_xrcd *uv_xrcd_of(struct ibv_xrcd *x)
{
	return (struct uv_xrcd *)(void *)x;
}

struct uv_srq {
	struct ibv_srq srq;
	struct mx5_srq *m;
	struct mx5_srq_ring *ring;
	struct uv_context *ctx;
	struct uv_srq *next;
	struct uv_pd *parent;         /* the parent domain it was made on, or NULL */
	uint32_t max_wr, max_sge, limit;
	unsigned async_reported;      /* async events handed out naming it (events.c) */
};

/* The 48-byte address vector sits at a fixed offset of the AH: the send path copies it
 * into each UD WQE from wr->wr.ud.ah + sq->av_offset (hw/mlx5 wqe.h). */
struct uv_ah {
	struct ibv_ah ah;
	uint8_t av[MX5_AV_SIZE] __attribute__((aligned(16)));
	struct ibv_ah_attr attr;
};

/* ibv_wr_* staging: the WR being built between the opcode call and the next one (or
 * wr_complete); data setters copy what they are given, so callers may reuse buffers. */
#define UV_WR_MAX_SGE 32
struct uv_wr_stage {
	struct ibv_send_wr wr;
	struct ibv_sge sge[UV_WR_MAX_SGE];
	uint8_t *inl;                 /* max_inline bytes */
	bool open;                    /* an opcode was given, not yet built */
	int err;                      /* first error since wr_start (positive errno) */
	uint32_t start_post;          /* sq->cur_post at wr_start, for wr_abort */
	uint64_t ops;                 /* send_ops_flags the QP was created with */
};

struct uv_qp {
	struct ibv_qp_ex qpx;         /* struct ibv_qp is its first member */
	struct mx5_qp *m;
	struct mx5_sq *sq;
	struct mx5_rq *rq;
	struct uv_context *ctx;
	struct uv_qp *next;
	struct uv_pd *parent;         /* the parent domain it was made on, or NULL */
	struct mx5_qp_cap cap;
	uint32_t max_inline;
	struct uv_wr_stage st;
	bool uc_as_rc;                /* a UC QP carried as RC (Apple's delivery; qp.c) */
	struct uv_xrcd *xrcd;         /* an XRC_RECV QP's domain */
	/* ibv_open_qp(3): a handle on an XRC_RECV QP stands for `opened_of` (it is on no
	 * list; m is the QP's); the QP counts its handles in `opens` (under dev->lock) */
	struct uv_qp *opened_of;
	unsigned opens;
	bool closing;                 /* being destroyed: ibv_open_qp may not find it (under d->lock) */
	unsigned async_reported;      /* async events handed out naming it (events.c) */
	/* the multicast groups it is attached to (qp.c, as Linux uverbs' mcast_list) */
	uint8_t (*mcast)[16];
	unsigned nmcast, mcast_cap;
};

static inline struct uv_context *uv_ctx(struct ibv_context *c)
{
	return (struct uv_context *)(void *)((char *)c - offsetof(struct uv_context, vctx.context));
}
static inline struct uv_dev *uv_ctx_dev(struct ibv_context *c) { return uv_ctx(c)->dev; }
/* One of the device's ports (Linux rdma_is_port_valid: 1..phys_port_cnt). */
static inline bool uv_port_valid(const struct uv_dev *d, unsigned port)
{
	return port >= 1 && port <= d->info.num_ports;
}
/* The device of context c with its lock taken; the caller unlocks d->lock. */
static inline struct uv_dev *uv_dev_lock(struct ibv_context *c)
{
	struct uv_dev *d = uv_ctx_dev(c);
	pthread_mutex_lock(&d->lock);
	return d;
}
/* Take obj off one of its context's lists (cqs, qps, srqs), chained through next. */
#define UV_LIST_DEL(head, obj)                                                             \
	do {                                                                               \
		for (__typeof__(obj) *uv_pp_ = (head); *uv_pp_; uv_pp_ = &(*uv_pp_)->next) \
			if (*uv_pp_ == (obj)) {                                            \
				*uv_pp_ = (obj)->next;                                     \
				break;                                                     \
			}                                                                  \
	} while (0)
/* The queues a context keeps on its lists (cqs, qps, srqs), for the destroy they share. */
struct uv_queue {
	enum { UV_QUEUE_CQ, UV_QUEUE_QP, UV_QUEUE_SRQ } kind;
	union {
		struct uv_cq *cq;
		struct uv_qp *qp;
		struct uv_srq *srq;
	};
};
/* What every verbs object has (verbs.h: ibv_cq, ibv_qp, ibv_srq): its context, and the
 * mutex and condition variable libibverbs gives it. */
struct uv_handle {
	const void *obj;
	struct ibv_context *context;
	pthread_mutex_t *mutex;
	pthread_cond_t *cond;
	unsigned *completed;          /* its async events acknowledged (the public field) */
};
#define UV_HANDLE(h, done) ((struct uv_handle){ (h), (h)->context, &(h)->mutex, &(h)->cond, &(h)->done })
/* ibv_destroy_cq(3), ibv_destroy_qp(3) and ibv_destroy_srq(3): under the device lock
 * hw/mlx5 destroys the queue (it refuses, EBUSY, while another object uses it) and the
 * context forgets it; then no async event may name it, the events already handed out
 * for it are waited for until acknowledged (ibv_get_async_event(3)), and h's mutex and
 * condition variable go.  0, or an errno with the device's message logged; after 0 the caller
 * frees the queue's memory (device.c). */
int uv_queue_destroy(struct uv_queue q, struct uv_handle h);
#define uv_from(ptr, type, member) plat_container_of(ptr, type, member)

/* device.c */
struct uv_dev *uv_devices(unsigned *n);
int uv_dev_up(struct uv_dev *d);          /* bring up (under d->lock) */
/* stats.c: refresh the published counters (at most once a second; under d->lock) and
 * remove them when the device goes down. */
void uv_stats_tick(struct uv_dev *d);
void uv_stats_unpublish(struct uv_dev *d);
void uv_dev_down_if_idle(struct uv_dev *d); /* under d->lock */
int uv_dev_watch_eq(struct uv_dev *d, unsigned vector); /* under d->lock */
/* errno from a negative mx5 return, with the device's message logged. */
int uv_err(struct uv_dev *d, int rc, const char *what);
/* uv_err, then d->lock released (the message is read while the lock still holds it). */
int uv_err_unlock(struct uv_dev *d, int rc, const char *what);
/* A create verb failed under d->lock: uv_err_unlock, free the half-made obj, NULL with
 * errno set. */
void *uv_create_fail(struct uv_dev *d, int rc, const char *verb, void *obj);

/* query.c */
int uv_port_attr(struct uv_dev *d, uint8_t port, struct ibv_port_attr *a);
void uv_device_attr(struct uv_dev *d, struct ibv_device_attr *a);
int uv_query_port_op(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a, size_t len);
int uv_query_device_ex_op(struct ibv_context *c, const struct ibv_query_device_ex_input *in,
			  struct ibv_device_attr_ex *a, size_t len);
/* The port's GID table at bring-up: 0 link-local, 1 the first IPv4 address, then the
 * rest (query.c gives the table). */
int uv_program_gids(struct uv_dev *d);
/* port_mtu.c: UVERBS_PORT_MTU at bring-up; 0, or a negative errno with the reason in why. */
int uv_port_mtu_apply(struct uv_dev *d, char *why, size_t why_len);
/* Verbs access flags (IBV_ACCESS_*) to the driver's (MX5_ACCESS_*) and back, for MRs
 * and QPs alike (mr.c holds the one table); flags with no driver bit are dropped. */
unsigned uv_access_to_mx5(unsigned ibv_access);
unsigned uv_access_from_mx5(unsigned mx5_access);
/* Release the UMR QP of mr.c (d->lock held, before the device closes). */
void uv_umr_release(struct uv_dev *d);
/* QUERY_ADAPTER: vendor id and PSID into d (at bring-up). */
/* Destination MAC of a GID: 0, or EHOSTUNREACH (logged) when nothing knows it. */
int uv_resolve_dmac(struct uv_dev *d, const uint8_t gid[16], uint8_t mac[6]);

/* netcfg.c: addresses and neighbours the user configures (UVERBS_GIDS, UVERBS_NEIGH,
 * UVERBS_CONFIG), since no kernel netdev stands behind the port. */
#define UV_MAX_ADDRS 16
unsigned uv_netcfg_addrs(const char *ibdev, const char *bdf, uint8_t (*addrs)[16], unsigned max);
int uv_netcfg_neigh(const uint8_t addr[16], uint8_t mac[6]);   /* 0 or -ENOENT */
int uv_parse_addr(const char *s, uint8_t gid[16]);              /* IPv4 -> ::ffff:a.b.c.d */
int uv_parse_mac(const char *s, uint8_t mac[6]);
void uv_format_addr(const uint8_t gid[16], char *buf, size_t len);

/* cq.c */
struct ibv_cq_ex *uv_create_cq_ex_op(struct ibv_context *c, struct ibv_cq_init_attr_ex *a);
int uv_poll_cq_op(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int uv_req_notify_cq_op(struct ibv_cq *cq, int solicited);
void uv_cq_comp_event(void *ctx, struct mx5_cq *cq);

/* qp.c, qp_ex.c */
struct ibv_qp *uv_create_qp_ex_op(struct ibv_context *c, struct ibv_qp_init_attr_ex *a);
int uv_post_send_op(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int uv_post_recv_op(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
void uv_qp_ex_init(struct uv_qp *q, uint64_t send_ops);
struct ibv_srq *uv_create_srq_ex_op(struct ibv_context *c, struct ibv_srq_init_attr_ex *a);
struct ibv_xrcd *uv_open_xrcd_op(struct ibv_context *c, struct ibv_xrcd_init_attr *a);
struct ibv_qp *uv_open_qp_op(struct ibv_context *c, struct ibv_qp_open_attr *a);
int uv_close_xrcd_op(struct ibv_xrcd *xrcd);
int uv_post_srq_recv_op(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);

/* domain.c: thread and parent domains, the single-thread hints */
struct ibv_td *uv_alloc_td_op(struct ibv_context *c, struct ibv_td_init_attr *a);
int uv_dealloc_td_op(struct ibv_td *td);
struct ibv_pd *uv_alloc_parent_domain_op(struct ibv_context *c, struct ibv_parent_domain_init_attr *a);
/* ibv_dealloc_pd of a parent domain (freed here: *handled = true; EBUSY while a QP, CQ
 * or SRQ made on it lives), or of a PD parent domains still stand for (EBUSY); 0 with
 * *handled = false for an ordinary PD. */
int uv_pd_dealloc_domain(struct uv_pd *p, bool *handled);
/* A QP, CQ or SRQ is made on pd (NULL: none given), under dev->lock: a parent domain
 * counts it and is returned (the queue keeps it for uv_parent_put); else NULL. */
struct uv_pd *uv_parent_hold(struct ibv_pd *pd);
/* That queue is destroyed (under dev->lock); parent may be NULL. */
void uv_parent_put(struct uv_pd *parent);
/* True when queues made on `pd` (NULL: none given) may skip their locks:
 * UVERBS_SINGLE_THREADED=1, or pd is a parent domain with a thread domain. */
bool uv_single_threaded(struct ibv_pd *pd);

/* events.c */
void uv_device_event(void *ctx, const struct mx5_event *ev);

#endif
