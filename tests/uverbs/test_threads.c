/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The verbs data path shared between threads, as applications (UCX, MPI) share it:
 * several pollers on one CQ, several posters on one QP, posters and pollers together
 * on both sides of an RC connection between two emulated NICs.  Every work request
 * must complete exactly once (wr_id counted), and the data must arrive (RDMA WRITE
 * slots and SEND payloads checked).  The tools/run-tests "tsan" stage runs these under
 * ThreadSanitizer.  With UVERBS_SINGLE_THREADED=1 (locks off) they lose and duplicate
 * completions, which is what the locks are for. */
#include <pthread.h>
#include <stdatomic.h>

#include "tests/uverbs/uv_test.h"

#define DEPTH 64            /* send and receive queue depth */
#define CQ_DEPTH 512
#define RUN_MS 150000       /* bound on one test's traffic (TSan is slow) */

static struct ibv_context *ca, *cb;

static void setup(void)
{
	ut_devices("emu:ip=127.61.0.1,emu:ip=127.61.0.2");
	ca = ut_open(0);
	cb = ut_open(1);
}

TestSuite(threads, .init = setup, .timeout = 240);

/* An RC endpoint with DEPTH-deep queues and its own CQ (uv_test.h's are 32 deep). */
static void ep_init(struct ut_ep *e, struct ibv_context *ctx, size_t len)
{
	memset(e, 0, sizeof(*e));
	e->ctx = ctx;
	e->pd = ibv_alloc_pd(ctx);
	cr_assert_not_null(e->pd);
	e->len = len;
	e->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	cr_assert_not_null(e->buf);
	memset(e->buf, 0, len);
	e->mr = ibv_reg_mr(e->pd, e->buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	cr_assert_not_null(e->mr, "ibv_reg_mr: %s", strerror(errno));
	e->cq = ibv_create_cq(ctx, CQ_DEPTH, NULL, NULL, 0);
	cr_assert_not_null(e->cq);
	struct ibv_qp_init_attr ia = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	e->qp = ibv_create_qp(e->pd, &ia);
	cr_assert_not_null(e->qp, "ibv_create_qp: %s", strerror(errno));
	struct ibv_port_attr pa;
	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	e->mtu = pa.active_mtu;
	cr_assert_eq(ibv_query_gid(ctx, 1, 0, &e->gid), 0);
}

/* Completions seen per wr_id, and everything a thread needs. */
struct run {
	struct ut_ep *a, *b;
	unsigned nops;              /* work requests in all */
	unsigned nposters;
	_Atomic unsigned *seen;     /* send completions per wr_id */
	_Atomic unsigned *recvd;    /* received payloads per value (SEND test) */
	atomic_uint done;           /* send completions counted */
	atomic_uint rdone;          /* receive completions counted */
	atomic_uint errors;         /* bad status, bad wr_id, post errors */
	atomic_int stop;
	double end_ms;
};

static void run_init(struct run *r, struct ut_ep *a, struct ut_ep *b, unsigned nops, unsigned nposters)
{
	memset(r, 0, sizeof(*r));
	r->a = a;
	r->b = b;
	r->nops = nops;
	r->nposters = nposters;
	r->seen = calloc(nops, sizeof(*r->seen));
	r->recvd = calloc(nops, sizeof(*r->recvd));
	cr_assert(r->seen && r->recvd);
	r->end_ms = ut_now_ms() + RUN_MS;
}

static bool run_over(struct run *r)
{
	return atomic_load(&r->stop) || ut_now_ms() > r->end_ms;
}

/* Post one signalled WR, retrying while the send queue is full (ENOMEM). */
static void post_retry(struct run *r, struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad = NULL;
	int rc;

	while ((rc = ibv_post_send(qp, wr, &bad)) == ENOMEM && !run_over(r))
		sched_yield();
	if (rc && rc != ENOMEM)
		atomic_fetch_add(&r->errors, 1);
}

/* Count the send-side completions of one poll batch. */
static void count_sends(struct run *r, const struct ibv_wc *wc, int n)
{
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS || wc[i].wr_id >= r->nops) {
			atomic_fetch_add(&r->errors, 1);
			continue;
		}
		atomic_fetch_add(&r->seen[wc[i].wr_id], 1);
		atomic_fetch_add(&r->done, 1);
	}
}

static void *send_poller(void *arg)
{
	struct run *r = arg;
	struct ibv_wc wc[4];

	while (atomic_load(&r->done) < r->nops && !run_over(r)) {
		int n = ibv_poll_cq(r->a->cq, 4, wc);
		if (n < 0)
			atomic_fetch_add(&r->errors, 1);
		else
			count_sends(r, wc, n);
	}
	return NULL;
}

/* RDMA WRITE of the 8-byte wr_id into the peer's slot wr_id. */
static void write_slot(struct run *r, uint64_t id)
{
	uint64_t *src = (uint64_t *)(void *)r->a->buf + id;
	*src = id ^ 0x5a5a000000000000ull;
	struct ibv_sge sg = { .addr = (uintptr_t)src, .length = 8, .lkey = r->a->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED };
	wr.wr.rdma.remote_addr = (uintptr_t)((uint64_t *)(void *)r->b->buf + id);
	wr.wr.rdma.rkey = r->b->mr->rkey;
	post_retry(r, r->a->qp, &wr);
}

struct poster_arg {
	struct run *r;
	unsigned first, count;
};

static void *write_poster(void *arg)
{
	struct poster_arg *p = arg;

	for (unsigned i = 0; i < p->count && !run_over(p->r); i++)
		write_slot(p->r, p->first + i);
	return NULL;
}

/* Every wr_id completed exactly once, and no error. */
static void check_once(struct run *r, _Atomic unsigned *counts, const char *what)
{
	unsigned lost = 0, dup = 0, first_bad = ~0u;

	for (unsigned i = 0; i < r->nops; i++) {
		unsigned c = atomic_load(&counts[i]);
		if (c != 1 && first_bad == ~0u)
			first_bad = i;
		lost += c == 0;
		dup += c > 1;
	}
	cr_assert_eq(atomic_load(&r->errors), 0, "%s: %u errors (bad status, wr_id or post)", what,
		     atomic_load(&r->errors));
	cr_assert(lost == 0 && dup == 0, "%s: %u of %u lost, %u duplicated (first: %u)", what, lost,
		  r->nops, dup, first_bad);
}

static void check_slots(struct run *r)
{
	const uint64_t *dst = (const uint64_t *)(const void *)r->b->buf;
	for (unsigned i = 0; i < r->nops; i++)
		cr_assert_eq(dst[i], i ^ 0x5a5a000000000000ull, "RDMA WRITE slot %u: 0x%llx", i,
			     (unsigned long long)dst[i]);
}

static void write_pair(struct ut_ep *a, struct ut_ep *b, unsigned nops)
{
	ep_init(a, ca, (size_t)nops * 8);
	ep_init(b, cb, (size_t)nops * 8);
	ut_pair(a, b);
}

Test(threads, pollers_sharing_a_cq_see_each_completion_once)
{
	enum { NOPS = 4000, NPOLL = 3 };
	struct ut_ep a, b;
	struct run r;
	pthread_t t[NPOLL];

	write_pair(&a, &b, NOPS);
	run_init(&r, &a, &b, NOPS, 1);
	for (int i = 0; i < NPOLL; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, send_poller, &r), 0);
	for (unsigned id = 0; id < NOPS && !run_over(&r); id++)
		write_slot(&r, id);
	for (int i = 0; i < NPOLL; i++)
		pthread_join(t[i], NULL);
	check_once(&r, r.seen, "send completions");
	check_slots(&r);
}

Test(threads, posters_sharing_a_qp_lose_no_work_request)
{
	enum { NOPS = 4000, NPOST = 4 };
	struct ut_ep a, b;
	struct run r;
	pthread_t t[NPOST];
	struct poster_arg pa[NPOST];

	write_pair(&a, &b, NOPS);
	run_init(&r, &a, &b, NOPS, NPOST);
	for (int i = 0; i < NPOST; i++) {
		pa[i] = (struct poster_arg){ .r = &r, .first = i * (NOPS / NPOST), .count = NOPS / NPOST };
		cr_assert_eq(pthread_create(&t[i], NULL, write_poster, &pa[i]), 0);
	}
	send_poller(&r);    /* this thread polls */
	for (int i = 0; i < NPOST; i++)
		pthread_join(t[i], NULL);
	check_once(&r, r.seen, "send completions");
	check_slots(&r);
}

/* ---- posters and pollers on both sides: SENDs whose payload is their wr_id ---- */

static void post_recv_slot(struct run *r, uint64_t slot)
{
	struct ibv_sge sg = { .addr = (uintptr_t)(r->b->buf + slot * 8), .length = 8,
			      .lkey = r->b->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sg, .num_sge = 1 }, *bad = NULL;
	if (ibv_post_recv(r->b->qp, &wr, &bad))
		atomic_fetch_add(&r->errors, 1);
}

static void *send_poster(void *arg)
{
	struct poster_arg *p = arg;
	struct run *r = p->r;

	for (unsigned i = 0; i < p->count && !run_over(r); i++) {
		uint64_t id = p->first + i;
		/* inline: the payload is copied at post time, so the buffer is this frame's */
		struct ibv_sge sg = { .addr = (uintptr_t)&id, .length = 8, .lkey = r->a->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE };
		post_retry(r, r->a->qp, &wr);
	}
	return NULL;
}

/* Receiver: poll B's CQ, record the payload, post the slot's receive again. */
static void *recv_poller(void *arg)
{
	struct run *r = arg;
	struct ibv_wc wc[4];

	while (atomic_load(&r->rdone) < r->nops && !run_over(r)) {
		int n = ibv_poll_cq(r->b->cq, 4, wc);
		if (n < 0)
			atomic_fetch_add(&r->errors, 1);
		for (int i = 0; i < n; i++) {
			uint64_t v;
			if (wc[i].status != IBV_WC_SUCCESS || wc[i].wr_id >= DEPTH || wc[i].byte_len != 8) {
				atomic_fetch_add(&r->errors, 1);
				continue;
			}
			memcpy(&v, r->b->buf + wc[i].wr_id * 8, 8);
			if (v < r->nops)
				atomic_fetch_add(&r->recvd[v], 1);
			else
				atomic_fetch_add(&r->errors, 1);
			atomic_fetch_add(&r->rdone, 1);
			post_recv_slot(r, wc[i].wr_id);
		}
	}
	return NULL;
}

Test(threads, posters_and_pollers_together_deliver_each_send_once)
{
	enum { NOPS = 2000, NPOST = 2, NPOLL = 2, NRECV = 2 };
	struct ut_ep a, b;
	struct run r;
	pthread_t post[NPOST], poll[NPOLL], recv[NRECV];
	struct poster_arg pa[NPOST];

	ep_init(&a, ca, 4096);
	ep_init(&b, cb, DEPTH * 8);
	/* the receive queue is reposted as it drains; a SEND that finds it empty waits for
	 * the RNR retry (unlimited, ut_connect) */
	ut_pair(&a, &b);
	run_init(&r, &a, &b, NOPS, NPOST);
	for (uint64_t s = 0; s < DEPTH; s++)
		post_recv_slot(&r, s);
	for (int i = 0; i < NRECV; i++)
		cr_assert_eq(pthread_create(&recv[i], NULL, recv_poller, &r), 0);
	for (int i = 0; i < NPOLL; i++)
		cr_assert_eq(pthread_create(&poll[i], NULL, send_poller, &r), 0);
	for (int i = 0; i < NPOST; i++) {
		pa[i] = (struct poster_arg){ .r = &r, .first = i * (NOPS / NPOST), .count = NOPS / NPOST };
		cr_assert_eq(pthread_create(&post[i], NULL, send_poster, &pa[i]), 0);
	}
	for (int i = 0; i < NPOST; i++)
		pthread_join(post[i], NULL);
	for (int i = 0; i < NPOLL; i++)
		pthread_join(poll[i], NULL);
	for (int i = 0; i < NRECV; i++)
		pthread_join(recv[i], NULL);
	check_once(&r, r.seen, "send completions");
	check_once(&r, r.recvd, "received payloads");
}
