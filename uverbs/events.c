/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Completion channels and async events: real file descriptors (eventfd in semaphore
 * mode) fed from the device's EQ interrupts by the service thread (device.c).  An
 * application may poll()/epoll the fd, or set it non-blocking, exactly as with the
 * kernel's uverbs event files. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/platform/notify.h"
#include "uverbs/uv.h"

int uv_evq_init(struct uv_evq *q)
{
	memset(q, 0, sizeof(*q));
	q->fd = plat_notify_open(0, PLAT_NOTIFY_SEMAPHORE);
	if (q->fd < 0)
		return q->fd;
	pthread_mutex_init(&q->lock, NULL);
	return 0;
}

void *uv_evq_alloc(size_t size, size_t evq_off)
{
	char *p = calloc(1, size);
	if (!p)
		return uv_null(ENOMEM);
	int rc = uv_evq_init((struct uv_evq *)(void *)(p + evq_off));
	if (rc) {
		free(p);
		return uv_null(-rc);
	}
	return p;
}

void uv_evq_fini(struct uv_evq *q)
{
	struct uv_event_node *n = q->head;
	while (n) {
		struct uv_event_node *x = n->next;
		free(n);
		n = x;
	}
	q->head = q->tail = NULL;
	plat_notify_close(q->fd);
	q->fd = -1;
	pthread_mutex_destroy(&q->lock);
}

int uv_evq_push(struct uv_evq *q, const struct uv_event_node *in)
{
	struct uv_event_node *n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	*n = *in;
	n->next = NULL;
	pthread_mutex_lock(&q->lock);
	/* counted and queued under the lock together, or neither (uv_evq_pop relies on
	 * the count never being below the list's length) */
	int w = plat_notify_signal(q->fd);
	if (w) {
		pthread_mutex_unlock(&q->lock);
		free(n);
		return w;
	}
	if (q->tail)
		q->tail->next = n;
	else
		q->head = n;
	q->tail = n;
	pthread_mutex_unlock(&q->lock);
	return 0;
}

/* Take back one entry's count, under q->lock.  The count equals the list's length
 * whenever the lock is free (every change to either is made under it), so this never
 * waits; the poll keeps it from blocking all the same if an application read the fd
 * itself.  The fd's O_NONBLOCK flag is the application's and is left alone: setting it
 * for a moment here once made a concurrent blocking pop return EAGAIN. */
static void uv_evq_take_count(struct uv_evq *q)
{
	struct pollfd p = { .fd = q->fd, .events = POLLIN };
	if (poll(&p, 1, 0) > 0 && plat_notify_read(q->fd, NULL) < 0) {
		/* nothing was counted after all */
	}
}

/* The count is taken and the entry unlinked under one hold of the lock.  Taking the
 * count first and the lock after once let uv_evq_drop remove the very entry whose count
 * a reader had just taken: the reader found the list empty and the application got EIO
 * from ibv_get_async_event at teardown (issue 34; tests/uverbs/test_evq.c).  Waiting is
 * done with poll(), which takes nothing, so an entry dropped while a reader waits only
 * sends it back to waiting. */
int uv_evq_pop(struct uv_evq *q, struct uv_event_node *out)
{
	return uv_evq_pop_hook(q, out, NULL);
}

int uv_evq_pop_hook(struct uv_evq *q, struct uv_event_node *out, void (*taken)(const struct uv_event_node *))
{
	for (;;) {
		pthread_mutex_lock(&q->lock);
		struct uv_event_node *n = q->head;
		if (n) {
			uv_evq_take_count(q);
			q->head = n->next;
			if (!q->head)
				q->tail = NULL;
			if (taken)
				taken(n);
			pthread_mutex_unlock(&q->lock);
			*out = *n;
			free(n);
			return 0;
		}
		pthread_mutex_unlock(&q->lock);
		/* Nothing queued: EAGAIN if the application made the fd non-blocking, else
		 * wait until something is counted (an entry may be dropped again before this
		 * thread gets the lock: then it waits again). */
		int fl = fcntl(q->fd, F_GETFL);
		if (fl < 0)
			return -errno;
		if (fl & O_NONBLOCK)
			return -EAGAIN;
		struct pollfd p = { .fd = q->fd, .events = POLLIN };
		if (poll(&p, 1, -1) < 0)
			return -errno;         /* EINTR as a blocking read(2) gives it */
		if (p.revents & POLLNVAL)
			return -EBADF;
	}
}

void uv_evq_drop(struct uv_evq *q, const void *obj)
{
	pthread_mutex_lock(&q->lock);
	struct uv_event_node **pp = &q->head, *last = NULL;
	while (*pp) {
		struct uv_event_node *n = *pp;
		/* element's pointers share storage; port events hold a small integer there */
		if ((const void *)n->cq == obj || (const void *)n->ev.element.qp == obj) {
			*pp = n->next;
			free(n);
			uv_evq_take_count(q);
			continue;
		}
		last = n;
		pp = &n->next;
	}
	q->tail = last;
	pthread_mutex_unlock(&q->lock);
}

/* ------------------------------------------------------------------ async events */

static void uv_async_to(struct uv_context *c, const struct ibv_async_event *ev)
{
	struct uv_event_node n = { .ev = *ev };
	if (uv_evq_push(&c->async, &n))
		uv_log(UV_LOG_WARN, "%s: async event %s lost (out of memory)",
		       c->dev->ibdev.name, ibv_event_type_str(ev->event_type));
}

static enum ibv_event_type uv_qp_event(enum mx5_event_type t)
{
	switch (t) {
	case MX5_EVENT_QP_FATAL: return IBV_EVENT_QP_FATAL;
	case MX5_EVENT_QP_REQ_ERROR: return IBV_EVENT_QP_REQ_ERR;
	case MX5_EVENT_QP_ACCESS_ERROR: return IBV_EVENT_QP_ACCESS_ERR;
	case MX5_EVENT_COMM_EST: return IBV_EVENT_COMM_EST;
	case MX5_EVENT_SQ_DRAINED: return IBV_EVENT_SQ_DRAINED;
	case MX5_EVENT_LAST_WQE_REACHED: return IBV_EVENT_QP_LAST_WQE_REACHED;
	case MX5_EVENT_PATH_MIG: return IBV_EVENT_PATH_MIG;
	default: return IBV_EVENT_PATH_MIG_ERR;
	}
}

/* hw/mlx5's event handler: runs in the service thread with the device lock held.
 * Port and device events go to every context of the device, object events to the
 * context that owns the object (as the kernel's uverbs does). */
void uv_device_event(void *arg, const struct mx5_event *e)
{
	struct uv_dev *d = arg;
	struct ibv_async_event ev;
	memset(&ev, 0, sizeof(ev));

	switch (e->type) {
	case MX5_EVENT_DEVICE_FATAL:
	case MX5_EVENT_PORT_ACTIVE:
	case MX5_EVENT_PORT_DOWN:
		if (e->type == MX5_EVENT_DEVICE_FATAL) {
			ev.event_type = IBV_EVENT_DEVICE_FATAL;
		} else {
			ev.event_type = e->type == MX5_EVENT_PORT_ACTIVE ? IBV_EVENT_PORT_ACTIVE
									 : IBV_EVENT_PORT_ERR;
			ev.element.port_num = (int)(e->num ? e->num : 1);
			mx5_port_query(d->mx5, 1, &d->port);
		}
		for (struct uv_context *c = d->ctxs; c; c = c->next)
			uv_async_to(c, &ev);
		return;
	case MX5_EVENT_CQ_ERROR:
		for (struct uv_context *c = d->ctxs; c; c = c->next)
			for (struct uv_cq *q = c->cqs; q; q = q->next)
				if (mx5_cq_num(q->m) == e->num) {
					ev.event_type = IBV_EVENT_CQ_ERR;
					ev.element.cq = (struct ibv_cq *)&q->cqx;
					uv_async_to(c, &ev);
					return;
				}
		return;
	case MX5_EVENT_SRQ_LIMIT:
	case MX5_EVENT_SRQ_ERROR:
		for (struct uv_context *c = d->ctxs; c; c = c->next)
			for (struct uv_srq *s = c->srqs; s; s = s->next)
				if (mx5_srq_num(s->m) == e->num) {
					ev.event_type = e->type == MX5_EVENT_SRQ_LIMIT
							? IBV_EVENT_SRQ_LIMIT_REACHED : IBV_EVENT_SRQ_ERR;
					ev.element.srq = &s->srq;
					uv_async_to(c, &ev);
					return;
				}
		return;
	default:
		for (struct uv_context *c = d->ctxs; c; c = c->next)
			for (struct uv_qp *q = c->qps; q; q = q->next)
				if (q->qpx.qp_base.qp_num == e->num) {
					ev.event_type = uv_qp_event(e->type);
					ev.element.qp = &q->qpx.qp_base;
					uv_async_to(c, &ev);
					return;
				}
		return;
	}
}

/* Which object an async event names (ibv_get_async_event(3)'s table): the one list
 * both the hand-out count and the acknowledgement go by. */
enum uv_async_object { UV_ASYNC_NONE, UV_ASYNC_CQ, UV_ASYNC_SRQ, UV_ASYNC_QP };

static enum uv_async_object uv_async_object_of(enum ibv_event_type t)
{
	switch (t) {
	case IBV_EVENT_CQ_ERR:
		return UV_ASYNC_CQ;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return UV_ASYNC_SRQ;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return UV_ASYNC_QP;
	default:
		return UV_ASYNC_NONE;
	}
}

/* The count of events handed out for the object an async event names, which its
 * destroy waits to see acknowledged (uv_queue_destroy); NULL for port and device
 * events. */
static unsigned *uv_async_reported(const struct ibv_async_event *ev)
{
	switch (uv_async_object_of(ev->event_type)) {
	case UV_ASYNC_CQ:
		return &((struct uv_cq *)(void *)ev->element.cq)->async_reported;   /* ibv_cq is its prefix */
	case UV_ASYNC_SRQ:
		return &uv_from(ev->element.srq, struct uv_srq, srq)->async_reported;
	case UV_ASYNC_QP:
		return &uv_from(ev->element.qp, struct uv_qp, qpx.qp_base)->async_reported;
	default:
		return NULL;
	}
}

/* Under the queue's lock, as the entry leaves it: counted before a destroy of its
 * object can drop the queue's entries (uv_evq_drop takes the same lock), so that destroy
 * sees it and waits for its acknowledgement. */
static void uv_async_taken(const struct uv_event_node *n)
{
	unsigned *r = uv_async_reported(&n->ev);
	if (r)
		__atomic_add_fetch(r, 1, __ATOMIC_RELEASE);
}

UV_EXPORT int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	if (!context || !event)
		return uv_minus1(EINVAL);
	struct uv_event_node n;
	int rc = uv_evq_pop_hook(&uv_ctx(context)->async, &n, uv_async_taken);
	if (rc)
		return uv_minus1(-rc);
	*event = n.ev;
	return 0;
}

/* ibv_get_async_event(3): "destroying an object (CQ, SRQ or QP) will wait for all
 * affiliated events for the object to be acknowledged", so the ack counts the event
 * under the object's mutex and wakes a destroy waiting on its condition variable, as
 * rdma-core's ibv_ack_async_event() does (libibverbs/device.c). */
static void uv_ack_one(pthread_mutex_t *m, pthread_cond_t *c, unsigned *completed)
{
	pthread_mutex_lock(m);
	__atomic_add_fetch(completed, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(c);
	pthread_mutex_unlock(m);
}

UV_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	if (!event)
		return;
	switch (uv_async_object_of(event->event_type)) {
	case UV_ASYNC_CQ:
		if (event->element.cq)
			uv_ack_one(&event->element.cq->mutex, &event->element.cq->cond,
				   &event->element.cq->async_events_completed);
		break;
	case UV_ASYNC_SRQ:
		if (event->element.srq)
			uv_ack_one(&event->element.srq->mutex, &event->element.srq->cond,
				   &event->element.srq->events_completed);
		break;
	case UV_ASYNC_QP:
		if (event->element.qp)
			uv_ack_one(&event->element.qp->mutex, &event->element.qp->cond,
				   &event->element.qp->events_completed);
		break;
	default:
		break;
	}
}

/* ------------------------------------------------------------------ completion channels */

UV_EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	if (!context)
		return uv_null(EINVAL);
	struct uv_channel *ch = uv_evq_alloc(sizeof(*ch), offsetof(struct uv_channel, q));
	if (!ch)
		return NULL;
	ch->ch.context = context;
	ch->ch.fd = ch->q.fd;
	ch->ch.refcnt = 0;
	struct uv_dev *d = uv_dev_lock(context);
	uv_ctx(context)->nchannels++;   /* ibv_close_device refuses while it exists */
	pthread_mutex_unlock(&d->lock);
	return &ch->ch;
}

static int uv_destroy_comp_channel_body(struct ibv_comp_channel *channel)
{
	if (!channel)
		return EINVAL;
	struct uv_channel *ch = uv_from(channel, struct uv_channel, ch);
	struct uv_dev *d = uv_dev_lock(channel->context);
	int busy = channel->refcnt;
	if (!busy)
		uv_ctx(channel->context)->nchannels--;
	pthread_mutex_unlock(&d->lock);
	if (busy) {
		uv_log(UV_LOG_WARN, "ibv_destroy_comp_channel: %d CQs still use it (EBUSY)", busy);
		return EBUSY;
	}
	uv_evq_fini(&ch->q);
	free(ch);
	return 0;
}

UV_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	return uv_errno(uv_destroy_comp_channel_body(channel));
}

/* CQ handler of hw/mlx5 (service thread, device lock held): one event per EQE. */
void uv_cq_comp_event(void *arg, struct mx5_cq *m)
{
	struct uv_cq *cq = arg;
	(void)m;
	struct ibv_comp_channel *channel = cq->cqx.channel;
	if (!channel)
		return;
	struct uv_channel *ch = uv_from(channel, struct uv_channel, ch);
	struct uv_event_node n = { .cq = (struct ibv_cq *)&cq->cqx };
	uv_log(UV_LOG_DEBUG, "completion event: CQ 0x%x", mx5_cq_num(cq->m));
	if (uv_evq_push(&ch->q, &n))
		uv_log(UV_LOG_WARN, "completion event lost (out of memory)");
}

/* Under the channel's lock, as the entry leaves it: counted before ibv_destroy_cq can
 * drop the channel's entries for the CQ (uv_queue_destroy), so that destroy sees it and
 * waits for its acknowledgement, as uv_async_taken does for async events. */
static void uv_comp_taken(const struct uv_event_node *n)
{
	__atomic_add_fetch(&((struct uv_cq *)(void *)n->cq)->comp_reported, 1, __ATOMIC_RELEASE);
}

UV_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
			       void **cq_context)
{
	if (!channel || !cq)
		return uv_minus1(EINVAL);
	struct uv_channel *ch = uv_from(channel, struct uv_channel, ch);
	struct uv_event_node n = { 0 };
	int rc = uv_evq_pop_hook(&ch->q, &n, uv_comp_taken);
	if (rc)
		return uv_minus1(-rc);
	*cq = n.cq;
	if (cq_context)
		*cq_context = n.cq->cq_context;
	return 0;
}

UV_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	if (!cq)
		return;
	/* counted under the CQ's mutex, waking a destroy waiting for it, as rdma-core's
	 * ibv_ack_cq_events() does (libibverbs/device.c) */
	pthread_mutex_lock(&cq->mutex);
	__atomic_add_fetch(&cq->comp_events_completed, nevents, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}
