/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The event queue behind a completion channel and a context's async fd (uverbs/events.c):
 * a count in an eventfd (semaphore mode) and a list of entries.  ibv_get_async_event and
 * ibv_get_cq_event pop; destroying a CQ, QP or SRQ drops the entries that name it.  The
 * two ran apart once (issue 34): a pop that had taken an entry's count found the list
 * empty because a drop had just removed that entry, and the application saw EIO (UCX
 * warned at teardown in 2 of about 60 runs).  These tests call the queue directly: the
 * program is linked with the verbs layer's objects, as uvd is. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "uverbs/uv.h"

static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	return poll(&p, 1, 0) > 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

Test(evq, fd_is_readable_exactly_while_an_entry_is_queued)
{
	struct uv_evq q;
	int x, y;
	cr_assert_eq(uv_evq_init(&q), 0);
	cr_assert_not(readable(q.fd));
	struct uv_event_node a = { .cq = (struct ibv_cq *)(void *)&x }, b = { .cq = (struct ibv_cq *)(void *)&y };
	cr_assert_eq(uv_evq_push(&q, &a), 0);
	cr_assert_eq(uv_evq_push(&q, &b), 0);
	cr_assert_eq(uv_evq_push(&q, &a), 0);
	uv_evq_drop(&q, &x);                 /* both entries naming x, and their counts */
	cr_assert(readable(q.fd));
	struct uv_event_node out;
	cr_assert_eq(uv_evq_pop(&q, &out), 0);
	cr_assert_eq((void *)out.cq, (void *)&y);
	cr_assert_not(readable(q.fd), "the fd stayed readable with nothing queued");
	fcntl(q.fd, F_SETFL, fcntl(q.fd, F_GETFL) | O_NONBLOCK);
	cr_assert_eq(uv_evq_pop(&q, &out), -EAGAIN);
	uv_evq_fini(&q);
}

struct churn {
	struct uv_evq *q;
	atomic_int stop;
	unsigned long rounds;
};

/* What an object's owner does at teardown while events still arrive for it: one event
 * queued, then every entry naming the object dropped. */
static void *push_and_drop(void *p)
{
	struct churn *c = p;
	int obj;
	struct uv_event_node n = { .cq = (struct ibv_cq *)(void *)&obj };
	while (!atomic_load(&c->stop)) {
		if (uv_evq_push(c->q, &n))
			break;
		uv_evq_drop(c->q, &obj);
		c->rounds++;
	}
	return NULL;
}

/* A non-blocking reader (as UCX's async thread polls the fd, then reads) beside the
 * churn: each pop gets the entry or EAGAIN, never EIO.  Bounded to 2 s, or fewer once
 * a failure is seen; before the fix this failed within the first few thousand rounds
 * on a 2-CPU machine. */
Test(evq, pop_beside_drop_never_reports_eio, .timeout = 30)
{
	struct uv_evq q;
	cr_assert_eq(uv_evq_init(&q), 0);
	fcntl(q.fd, F_SETFL, fcntl(q.fd, F_GETFL) | O_NONBLOCK);
	struct churn c = { .q = &q };
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, push_and_drop, &c), 0);
	unsigned long got = 0, empty = 0, eio = 0, other = 0;
	double end = now_s() + 2.0;
	while (now_s() < end && !eio) {
		struct uv_event_node out;
		int rc = uv_evq_pop(&q, &out);
		if (!rc)
			got++;
		else if (rc == -EAGAIN)
			empty++;
		else if (rc == -EIO)
			eio++;
		else
			other++;
	}
	atomic_store(&c.stop, 1);
	pthread_join(th, NULL);
	cr_log_info("evq race: %lu push/drop rounds, %lu popped, %lu empty, %lu EIO", c.rounds, got, empty, eio);
	cr_expect_eq(eio, 0, "a pop returned EIO beside a drop (%lu of %lu pops)", eio, got + empty + eio);
	cr_expect_eq(other, 0);
	/* nothing is left, and the count agrees */
	struct uv_event_node out;
	while (uv_evq_pop(&q, &out) == 0)
		;
	cr_expect_not(readable(q.fd), "the count outlived the entries");
	uv_evq_fini(&q);
}

struct waiter {
	struct uv_evq *q;
	int rc;
	struct uv_event_node out;
	struct ibv_cq *stays;
};

/* Pops until the entry that stays: an entry about to be dropped may be popped first (the
 * application then sees an event of an object it is destroying, as with rdma-core). */
static void *blocking_pop(void *p)
{
	struct waiter *w = p;
	do
		w->rc = uv_evq_pop(w->q, &w->out);
	while (!w->rc && w->out.cq != w->stays);
	return NULL;
}

/* A blocking reader waits through any number of entries queued and dropped beside it
 * (teardown of other objects) without an error, up to the event that stays. */
Test(evq, blocking_pop_waits_through_dropped_entries, .timeout = 30)
{
	struct uv_evq q;
	cr_assert_eq(uv_evq_init(&q), 0);
	int gone, stays;
	struct waiter w = { .q = &q, .rc = 1, .stays = (struct ibv_cq *)(void *)&stays };
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, blocking_pop, &w), 0);
	struct uv_event_node n = { .cq = (struct ibv_cq *)(void *)&gone };
	for (int i = 0; i < 20000; i++) {
		cr_assert_eq(uv_evq_push(&q, &n), 0);
		uv_evq_drop(&q, &gone);
	}
	struct uv_event_node s = { .cq = (struct ibv_cq *)(void *)&stays };
	cr_assert_eq(uv_evq_push(&q, &s), 0);
	pthread_join(th, NULL);
	cr_assert_eq(w.rc, 0, "blocking pop: %d", w.rc);
	cr_assert_eq((void *)w.out.cq, (void *)&stays);
	cr_assert_not(readable(q.fd));
	uv_evq_fini(&q);
}
