/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvperf: the client's tests and the server's side of them (run.h, uvperf.h).
 *
 * A test runs in rounds.  A round is up to `slots` messages per QP (the messages that fit
 * the QP's buffer one per slot) when verifying, else up to 64 Ki; message n of a QP
 * uses slot n % slots on both sides.  SEND tests announce each round to the server
 * (UP_M_SEG with verify 0 ... see below) so it posts exactly as many receives as will be
 * consumed: nothing is left on a receive queue for the next test.  After a round every
 * WR has completed; with --verify the sink checks the round's slots against the
 * source's hashes and zeroes them.
 */
#include "tools/uvperf/run.h"

#include "hw/platform/byteorder.h"
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Server-side round announcement: counts per QP, and whether to check afterwards. */
struct up_round {
	uint64_t count[UP_MAX_QPS];
	uint32_t check;             /* 1: these completed, check them; 0: permit receives */
	uint32_t pad;
	uint64_t first_msg;         /* message number of the round's first message */
	uint64_t first_slot;        /* its slot: first_msg % slots */
};

#define UP_M_ROUND 100
/* --duration: messages per timed round, shared by the QPs (at least four queue depths
 * a QP), so the run ends within a few ms of it */
#define UP_TIMED_ROUND 1024u

static const char *op_names[UP_NOPS] = { "WRITE", "READ", "SEND", "FADD", "CSWAP" };

const char *up_op_name(enum up_op op)
{
	return (unsigned)op < UP_NOPS ? op_names[op] : "?";
}

int up_op_parse(const char *s)
{
	for (int i = 0; i < UP_NOPS; i++)
		if (!strcasecmp(s, op_names[i]))
			return i;
	if (!strcasecmp(s, "fetch_add") || !strcasecmp(s, "fetch-add"))
		return UP_FADD;
	if (!strcasecmp(s, "cmp_swap") || !strcasecmp(s, "compare-swap") || !strcasecmp(s, "atomic"))
		return UP_CSWAP;
	return -1;
}

void up_device_uri(int index, char *buf, size_t len)
{
	const char *env = getenv("UVERBS_DEVICES");
	snprintf(buf, len, "%s", index == 0 ? "emu: (default)" : "?");
	if (!env || !*env)
		return;
	char tmp[1024];
	snprintf(tmp, sizeof(tmp), "%s", env);
	int k = -1;
	/* A token without a scheme continues the previous URI's options (emu:ip=..,page=16k). */
	for (char *save = NULL, *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strchr(tok, ':') || k < 0) {
			if (++k == index)
				snprintf(buf, len, "%s", tok);
		} else if (k == index) {
			size_t l = strlen(buf);
			snprintf(buf + l, len - l, ",%s", tok);
		}
	}
}

uint64_t up_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t test_slots(const struct up_ep *ep, const struct up_test *t)
{
	if (up_is_atomic((enum up_op)t->op))
		return ep->bufsize / 8;
	uint64_t s = ep->bufsize / t->size;
	return s ? s : 1;
}

/* ------------------------------------------------------------------ progress */

struct progress {
	int on;
	uint64_t total, last_ns;
	/* --duration: the bar shows the timed share of the duration, not messages; timed
	 * time is what the result's seconds count (rounds, not the checks between them) */
	uint64_t span_ns;        /* the duration; 0: count messages */
	uint64_t active_ns;      /* timed time of the rounds already done */
	uint64_t round_from;     /* start of the round in progress (0: between rounds) */
	char label[48];
};

static void progress_draw(struct progress *p, uint64_t done, int final)
{
	if (!p->on || !p->total)
		return;
	uint64_t now = up_now_ns();
	if (!final && now - p->last_ns < 100000000ull)
		return;
	p->last_ns = now;
	if (p->span_ns) {
		uint64_t gone = p->active_ns + (p->round_from ? now - p->round_from : 0);
		double share = gone >= p->span_ns ? 1.0 : (double)gone / (double)p->span_ns;
		done = final ? p->total : (uint64_t)(share * (double)p->total);
	}
	if (done > p->total)
		done = p->total;
	unsigned pct = (unsigned)(done * 100 / p->total);
	int fill = (int)(done * 30 / p->total);
	fprintf(stderr, "\r%-18s [%.*s%*s] %3u%%", p->label, fill, "##############################",
		30 - fill, "", pct);
	if (final)
		fputs("\r\033[K", stderr);
	fflush(stderr);
}

/* ------------------------------------------------------------------ client */

int up_client_start(struct up_client *c, const struct up_hello *hello, char *err, size_t errlen)
{
	int rc = up_chan_send(c->fd, UP_M_HELLO, hello, sizeof(*hello));
	if (rc) {
		snprintf(err, errlen, "side channel: %s", strerror(-rc));
		return rc;
	}
	rc = up_chan_expect(c->fd, UP_M_HELLO_ACK, &c->peer, sizeof(c->peer), err, errlen);
	if (rc < 0)
		return rc;
	if (c->peer.status) {
		snprintf(err, errlen, "server: %s", c->peer.err);
		return -(int)c->peer.status;
	}
	rc = up_chan_send(c->fd, UP_M_QPINFO, c->ep.local, sizeof(struct up_qpinfo) * c->ep.nqps);
	if (rc)
		return rc;
	rc = up_chan_expect(c->fd, UP_M_QPINFO, c->remote, sizeof(struct up_qpinfo) * c->ep.nqps, err, errlen);
	if (rc < 0)
		return rc;
	return up_ep_connect(&c->ep, c->remote, err, errlen);
}

void up_client_stop(struct up_client *c)
{
	up_chan_send(c->fd, UP_M_BYE, NULL, 0);
}

static void build_wr(struct up_client *c, const struct up_test *t, unsigned q, uint64_t n, uint64_t slots,
		     struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	enum up_op op = (enum up_op)t->op;
	uint64_t slot = n % slots;
	uint32_t len = up_is_atomic(op) ? 8 : t->size;
	memset(wr, 0, sizeof(*wr));
	sge->addr = (uint64_t)(uintptr_t)(c->ep.buf + (size_t)q * c->ep.bufsize + slot * len);
	sge->length = len;
	sge->lkey = c->ep.mr->lkey;
	wr->wr_id = up_wr_id(q, n);
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->send_flags = IBV_SEND_SIGNALED;
	switch (op) {
	case UP_WRITE:
	case UP_READ:
		wr->opcode = op == UP_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
		wr->wr.rdma.remote_addr = c->remote[q].addr + slot * len;
		wr->wr.rdma.rkey = c->remote[q].rkey ^ c->test_rkey_xor;
		break;
	case UP_SEND:
		wr->opcode = IBV_WR_SEND;
		break;
	case UP_FADD:
	case UP_CSWAP:
		/* One 8-byte target at the start of the peer's QP buffer; every result in its
		 * own local slot, so each returned value can be checked. */
		wr->opcode = op == UP_FADD ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP;
		wr->wr.atomic.remote_addr = c->remote[q].addr;
		wr->wr.atomic.rkey = c->remote[q].rkey ^ c->test_rkey_xor;
		wr->wr.atomic.compare_add = op == UP_FADD ? 1 : n;
		wr->wr.atomic.swap = n + 1;
		break;
	default:
		break;
	}
}

static int wc_error(const struct ibv_wc *wc, uint64_t n, char *err, size_t errlen)
{
	snprintf(err, errlen, "completion error on QP 0x%x, message %" PRIu64 ": %s (vendor syndrome 0x%x)",
		 wc->qp_num, n, ibv_wc_status_str(wc->status), wc->vendor_err);
	return -EIO;
}

/* Poll up to `max` completions from cq into wc: their number, or -errno with err set
 * when the poll fails or any of them completed in error (which ends the run). */
static int poll_cq_ok(struct ibv_cq *cq, struct ibv_wc *wc, int max, char *err, size_t errlen)
{
	int got = ibv_poll_cq(cq, max, wc);
	if (got < 0) {
		snprintf(err, errlen, "ibv_poll_cq failed (%d)", got);
		return -EIO;
	}
	for (int k = 0; k < got; k++)
		if (wc[k].status != IBV_WC_SUCCESS)
			return wc_error(&wc[k], up_wr_id_seq(wc[k].wr_id), err, errlen);
	return got;
}

/* During a long round the server waits on the side channel: tell it now and then that
 * this client is still there. */
static int client_alive(struct up_client *c, uint64_t now, char *err, size_t errlen)
{
	if (now - c->alive_ns < UP_ALIVE_NS)
		return 0;
	c->alive_ns = now;
	int rc = up_chan_send(c->fd, UP_M_ALIVE, NULL, 0);
	if (rc)
		snprintf(err, errlen, "side channel: %s", strerror(-rc));
	return rc;
}

/* One round of the latency test: counts[0] messages on QP 0, one at a time. */
static int lat_round(struct up_client *c, const struct up_test *t, uint64_t base, uint64_t count,
		     uint64_t slots, struct up_result *r, struct progress *pg, char *err, size_t errlen)
{
	struct ibv_cq *cq = up_ep_cq(&c->ep, 0);
	for (uint64_t k = 0; k < count; k++) {
		uint64_t n = base + k;
		struct ibv_send_wr wr, *bad = NULL;
		struct ibv_sge sge;
		struct ibv_wc wc;
		build_wr(c, t, 0, n, slots, &wr, &sge);
		uint64_t t0 = up_now_ns();
		int rc = ibv_post_send(c->ep.qp[0], &wr, &bad);
		uint64_t t1 = up_now_ns();
		if (rc) {
			snprintf(err, errlen, "ibv_post_send(%s, message %" PRIu64 "): %s", up_op_name((enum up_op)t->op),
				 n, strerror(rc));
			return -rc;
		}
		int got;
		uint64_t spins = 0, t2;
		for (;;) {
			got = ibv_poll_cq(cq, 1, &wc);
			if (got)
				break;
			if ((++spins & 0xffff) == 0 && up_now_ns() - t1 > (uint64_t)c->timeout_ms * 1000000ull) {
				snprintf(err, errlen, "no completion for %s message %" PRIu64 " within %u ms",
					 up_op_name((enum up_op)t->op), n, c->timeout_ms);
				return -ETIMEDOUT;
			}
		}
		t2 = up_now_ns();
		if (got < 0) {
			snprintf(err, errlen, "ibv_poll_cq failed (%d)", got);
			return -EIO;
		}
		if (wc.status != IBV_WC_SUCCESS)
			return wc_error(&wc, n, err, errlen);
		if (n >= t->warmup && n - t->warmup < r->nsamples) {
			struct up_sample *s = &r->samples[n - t->warmup];
			s->total_ns = t2 - t0;
			s->post_ns = t1 - t0;
			s->poll_ns = t2 - t1;
		}
		int arc = client_alive(c, t2, err, errlen);
		if (arc)
			return arc;
		if (c->verify && up_is_atomic((enum up_op)t->op)) {
			/* FADD by 1 and CSWAP n -> n+1 both return n when every earlier one landed.
			 * The returned original is a host integer: libuverbs reports atomics
			 * (IBV_ATOMIC_HCA) only once the device answers in host order (PRM
			 * atomic_req_8B_endianness_mode 1); the wire carries it big-endian. */
			uint64_t v;
			memcpy(&v, (const void *)(uintptr_t)sge.addr, 8);
			if (v != n) {
				r->verified = -1;
				snprintf(r->verify_text, sizeof(r->verify_text),
					 "%s message %" PRIu64 " returned %" PRIu64 ", expected %" PRIu64,
					 up_op_name((enum up_op)t->op), n, v, n);
				snprintf(err, errlen, "verify: %s", r->verify_text);
				return -EBADMSG;
			}
			r->verified_bytes += 8;
		}
		progress_draw(pg, n + 1, 0);
	}
	return 0;
}

/* One round of the bandwidth test: counts[q] messages on each QP, depth outstanding. */
static int bw_round(struct up_client *c, const struct up_test *t, uint64_t base, const uint64_t *counts,
		    uint64_t slots, struct progress *pg, uint64_t *pdone, char *err, size_t errlen)
{
	unsigned nq = c->ep.nqps;
	uint64_t next[UP_MAX_QPS] = { 0 }, comp[UP_MAX_QPS] = { 0 };
	unsigned out[UP_MAX_QPS] = { 0 };
	uint64_t left = 0;
	for (unsigned q = 0; q < nq; q++)
		left += counts[q];
	uint64_t last = up_now_ns();
	while (left) {
		for (unsigned q = 0; q < nq; q++) {
			while (out[q] < t->depth && next[q] < counts[q]) {
				struct ibv_send_wr wr, *bad = NULL;
				struct ibv_sge sge;
				build_wr(c, t, q, base + next[q], slots, &wr, &sge);
				int rc = ibv_post_send(c->ep.qp[q], &wr, &bad);
				if (rc) {
					snprintf(err, errlen, "ibv_post_send(%s, QP %u): %s",
						 up_op_name((enum up_op)t->op), q, strerror(rc));
					return -rc;
				}
				next[q]++;
				out[q]++;
			}
		}
		unsigned ncq = c->ep.shared_cq ? 1 : nq;
		int any = 0;
		for (unsigned i = 0; i < ncq; i++) {
			struct ibv_wc wc[32];
			int got = poll_cq_ok(c->ep.cq[i], wc, 32, err, errlen);
			if (got < 0)
				return got;
			for (int k = 0; k < got; k++) {
				unsigned q = up_wr_id_qp(wc[k].wr_id);
				if (q >= nq || !out[q]) {
					snprintf(err, errlen, "completion for unknown work request 0x%" PRIx64, wc[k].wr_id);
					return -EPROTO;
				}
				out[q]--;
				comp[q]++;
				left--;
				(*pdone)++;
			}
			any |= got > 0;
		}
		if (any) {
			last = up_now_ns();
			progress_draw(pg, *pdone, 0);
			int arc = client_alive(c, last, err, errlen);
			if (arc)
				return arc;
		} else if (up_now_ns() - last > (uint64_t)c->timeout_ms * 1000000ull) {
			snprintf(err, errlen, "no completion within %u ms (%" PRIu64 " outstanding)", c->timeout_ms, left);
			return -ETIMEDOUT;
		}
	}
	return 0;
}

/* After a round: the sink checks its slots.  The server's answer is needed in any case
 * (it confirms a SEND round was fully received). */
static int round_check(struct up_client *c, const struct up_test *t, const struct up_round *rd,
		       uint64_t slots, const uint64_t *hashes, struct up_result *r, char *err, size_t errlen)
{
	struct up_vres mine = { .ok = 1 };
	if (hashes && !up_client_is_source((enum up_op)t->op)) {
		up_verify_slots(&c->ep, t->size, slots, rd->first_slot, rd->count, hashes, t->seed, rd->first_msg, &mine);
		r->verified_bytes += mine.checked_bytes;
		for (unsigned q = 0; q < c->ep.nqps; q++)
			memset(c->ep.buf + (size_t)q * c->ep.bufsize, 0, c->ep.bufsize);
	}
	struct up_round chk = *rd;
	chk.check = 1;
	int rc = up_chan_send(c->fd, UP_M_ROUND, &chk, sizeof(chk));
	if (rc)
		return rc;
	struct up_vres theirs;
	rc = up_chan_expect(c->fd, UP_M_SEGRES, &theirs, sizeof(theirs), err, errlen);
	if (rc < 0)
		return rc;
	r->verified_bytes += theirs.checked_bytes;
	const struct up_vres *bad = !mine.ok ? &mine : !theirs.ok ? &theirs : NULL;
	if (bad) {
		r->verified = -1;
		snprintf(r->verify_text, sizeof(r->verify_text), "%s %u B: %s", up_op_name((enum up_op)t->op),
			 t->size, bad->text);
		snprintf(err, errlen, "verify failed: %s", r->verify_text);
		return -EBADMSG;
	}
	return 0;
}

int up_client_test(struct up_client *c, const struct up_test *t0, struct up_result *r,
		   char *err, size_t errlen)
{
	struct up_test t = *t0;
	enum up_op op = (enum up_op)t.op;
	if (up_is_atomic(op))
		t.size = 8;
	memset(r, 0, sizeof(*r));
	r->mode = (enum up_mode)t.mode;
	r->op = op;
	r->size = t.size;
	r->qps = t.mode == UP_LAT ? 1 : c->ep.nqps;
	r->depth = t.mode == UP_LAT ? 1 : t.depth;
	r->warmup = t.warmup;
	r->min = r->median = r->p95 = r->p99 = r->p999 = r->max = NAN;
	r->post_median = r->poll_median = NAN;
	if (t.size > c->ep.bufsize) {
		snprintf(err, errlen, "message size %u is larger than the session's buffer slot (%zu)", t.size,
			 c->ep.bufsize);
		return -EINVAL;
	}
	uint64_t slots = test_slots(&c->ep, &t);
	unsigned nq = t.mode == UP_LAT ? 1 : c->ep.nqps;
	int verify_data = t.verify && !up_is_atomic(op);
	uint64_t *hashes = NULL;
	if (verify_data) {
		hashes = calloc(c->ep.nqps * slots, sizeof(*hashes));
		if (!hashes)
			return -ENOMEM;
	}
	if (t.mode == UP_LAT) {
		r->nsamples = t.iters;
		r->samples = calloc(t.iters ? t.iters : 1, sizeof(*r->samples));
		if (!r->samples) {
			free(hashes);
			return -ENOMEM;
		}
	}
	/* The source's buffer holds the pattern; the sink starts from zeroes. */
	int rc;
	if (verify_data && up_client_is_source(op)) {
		up_pattern_fill(c->ep.buf, c->ep.buflen, t.seed, 0);
		up_hash_slots(&c->ep, t.size, slots, hashes);
	} else {
		memset(c->ep.buf, 0, c->ep.buflen);
	}
	rc = up_chan_send(c->fd, UP_M_TEST, &t, sizeof(t));
	if (!rc && verify_data && up_client_is_source(op))
		rc = up_chan_send(c->fd, UP_M_HASHES, hashes, c->ep.nqps * slots * sizeof(*hashes));
	if (rc) {
		snprintf(err, errlen, "side channel: %s", strerror(-rc));
		goto out;
	}
	/* Hidden test option: damage one byte after it was hashed, as if on its way. */
	if (verify_data && up_client_is_source(op) && t.corrupt >= 0 && (uint64_t)t.corrupt < c->ep.bufsize)
		c->ep.buf[t.corrupt] ^= 0x5a;
	uint32_t ready;
	rc = up_chan_expect(c->fd, UP_M_READY, &ready, sizeof(ready), err, errlen);
	if (rc < 0)
		goto out;
	if (verify_data && !up_client_is_source(op)) {
		rc = up_chan_expect(c->fd, UP_M_HASHES, hashes, c->ep.nqps * slots * sizeof(*hashes), err, errlen);
		if (rc < 0)
			goto out;
	}
	if (verify_data || (t.verify && up_is_atomic(op)))
		r->verified = 1;

	struct progress pg = { .on = c->progress };
	snprintf(pg.label, sizeof(pg.label), "%s %s %u B", t.mode == UP_LAT ? "lat" : "bw", up_op_name(op), t.size);
	uint64_t per_qp = t.warmup + t.iters;
	pg.total = per_qp * nq;
	uint64_t base = 0, done_msgs = 0, active_ns = 0;
	/* --duration: the timed rounds run until their time adds up to the duration;
	 * rounds are kept short (timed_round messages a QP) so that the run stops
	 * within a few milliseconds of it */
	const bool by_time = c->duration_s > 0 && t.mode == UP_BW;
	const uint64_t duration_ns = by_time ? (uint64_t)(c->duration_s * 1e9) : 0;
	/* UP_TIMED_ROUND messages a round over all the QPs, so that more QPs do not make
	 * the run overshoot; but a round drains the queue at its end: keep several queue
	 * depths in each */
	const uint64_t timed_share = UP_TIMED_ROUND / nq;
	const uint64_t timed_round = (uint64_t)t.depth * 4 > timed_share ? (uint64_t)t.depth * 4 : timed_share;
	rc = 0;
	for (;;) {
		/* Rounds end at the warm-up boundary (the timed part starts with nothing in
		 * flight) and, when verifying, at every pass over the slots. */
		uint64_t cap = verify_data ? slots - base % slots : 65536;
		if (by_time && cap > timed_round)
			cap = timed_round;
		uint64_t n;
		if (base < t.warmup)
			n = t.warmup - base;
		else if (by_time)
			n = cap;
		else
			n = per_qp - base;
		if (n > cap)
			n = cap;
		if (!n)
			break;
		struct up_round rd = { .first_msg = base, .first_slot = base % slots };
		for (unsigned q = 0; q < nq; q++)
			rd.count[q] = n;
		if (op == UP_SEND) {
			rc = up_chan_send(c->fd, UP_M_ROUND, &rd, sizeof(rd));
			if (rc)
				break;
		}
		int timed = base >= t.warmup;
		uint64_t r0 = up_now_ns();
		if (timed && by_time) {
			pg.span_ns = duration_ns;
			pg.round_from = r0;
		}
		if (t.mode == UP_LAT)
			rc = lat_round(c, &t, base, n, slots, r, &pg, err, errlen);
		else
			rc = bw_round(c, &t, base, rd.count, slots, &pg, &done_msgs, err, errlen);
		uint64_t r1 = up_now_ns();
		if (rc)
			break;
		if (timed) {
			active_ns += r1 - r0;
			r->messages += n * nq;
			pg.active_ns = active_ns;
			pg.round_from = 0;
		}
		/* The check also confirms that the server consumed every receive of a SEND round. */
		if (verify_data || op == UP_SEND) {
			rc = round_check(c, &t, &rd, slots, hashes, r, err, errlen);
			if (rc)
				break;
		}
		base += n;
		if (by_time && timed && active_ns >= duration_ns)
			break;
	}
	progress_draw(&pg, pg.total, 1);
	if (!rc) {
		rc = up_chan_send(c->fd, UP_M_END, NULL, 0);
		if (!rc) {
			uint64_t ack;
			rc = up_chan_expect(c->fd, UP_M_END_ACK, &ack, sizeof(ack), err, errlen);
			rc = rc < 0 ? rc : 0;
		}
	}
	r->bytes = r->messages * t.size;
	r->seconds = active_ns / 1e9;
	if (t.mode == UP_BW && r->seconds > 0) {
		r->gbit_s = (double)r->bytes * 8 / r->seconds / 1e9;
		r->msg_s = (double)r->messages / r->seconds;
	}
	if (!rc)
		up_stats(r);
out:
	if (rc) {
		/* A test that ended in an error has no figures and is not verified, whatever
		 * the bytes checked before the error said. */
		r->failed = 1;
		r->verified = -1;
		if (!r->verify_text[0])
			snprintf(r->verify_text, sizeof(r->verify_text), "%s", err);
		r->gbit_s = r->msg_s = NAN;
	}
	free(hashes);
	return rc;
}

/* ------------------------------------------------------------------ server */

struct srv_test {
	struct up_test t;
	uint64_t slots;
	uint64_t *hashes;
	uint64_t allowed[UP_MAX_QPS], posted[UP_MAX_QPS], done[UP_MAX_QPS];
};

static int srv_poll_recv(struct up_ep *ep, struct srv_test *st, char *err, size_t errlen)
{
	unsigned nq = ep->nqps;
	for (unsigned q = 0; q < nq; q++) {
		while (st->posted[q] < st->allowed[q] && st->posted[q] - st->done[q] < ep->rx_depth) {
			int rc = up_ep_post_recv(ep, q, st->posted[q], st->t.size, st->slots);
			if (rc) {
				snprintf(err, errlen, "ibv_post_recv(QP %u): %s", q, strerror(rc));
				return -rc;
			}
			st->posted[q]++;
		}
	}
	unsigned ncq = ep->shared_cq ? 1 : nq;
	int got_any = 0;
	for (unsigned i = 0; i < ncq; i++) {
		struct ibv_wc wc[32];
		int got = poll_cq_ok(ep->cq[i], wc, 32, err, errlen);
		if (got < 0)
			return got;
		for (int k = 0; k < got; k++) {
			unsigned q = up_wr_id_qp(wc[k].wr_id);
			if (q < nq && wc[k].opcode == IBV_WC_RECV) {
				if (wc[k].byte_len != st->t.size) {
					snprintf(err, errlen, "QP %u received %u bytes, expected %u", q, wc[k].byte_len,
						 st->t.size);
					return -EPROTO;
				}
				st->done[q]++;
			}
		}
		got_any |= got > 0;
	}
	return got_any;
}

static int srv_wait_done(struct up_ep *ep, struct srv_test *st, const uint64_t *target, unsigned timeout_ms,
			 char *err, size_t errlen)
{
	uint64_t t0 = up_now_ns();
	for (;;) {
		int all = 1;
		for (unsigned q = 0; q < ep->nqps; q++)
			all &= st->done[q] >= target[q];
		if (all)
			return 0;
		int rc = srv_poll_recv(ep, st, err, errlen);
		if (rc < 0)
			return rc;
		if (!rc && up_now_ns() - t0 > (uint64_t)timeout_ms * 1000000ull) {
			snprintf(err, errlen, "receives did not complete within %u ms", timeout_ms);
			return -ETIMEDOUT;
		}
	}
}

static int srv_test(int fd, struct up_ep *ep, const struct up_test *t, char *err, size_t errlen)
{
	struct srv_test st;
	memset(&st, 0, sizeof(st));
	st.t = *t;
	enum up_op op = (enum up_op)t->op;
	if (op >= UP_NOPS || t->size == 0 || t->size > ep->bufsize) {
		snprintf(err, errlen, "bad test: op %u size %u (slot %zu)", t->op, t->size, ep->bufsize);
		return -EINVAL;
	}
	st.slots = test_slots(ep, t);
	int verify_data = t->verify && !up_is_atomic(op);
	int rc = 0;
	if (verify_data) {
		st.hashes = calloc(ep->nqps * st.slots, sizeof(*st.hashes));
		if (!st.hashes)
			return -ENOMEM;
	}
	if (verify_data && !up_client_is_source(op)) {
		up_pattern_fill(ep->buf, ep->buflen, t->seed, 0);
		up_hash_slots(ep, t->size, st.slots, st.hashes);
		if (t->corrupt >= 0 && (uint64_t)t->corrupt < ep->bufsize)
			ep->buf[t->corrupt] ^= 0x5a;
	} else {
		memset(ep->buf, 0, ep->buflen);
		if (verify_data)
			rc = up_chan_expect(fd, UP_M_HASHES, st.hashes, ep->nqps * st.slots * sizeof(*st.hashes),
					    err, errlen);
		if (rc < 0)
			goto out;
	}
	uint32_t ready = 0;
	rc = up_chan_send(fd, UP_M_READY, &ready, sizeof(ready));
	if (!rc && verify_data && !up_client_is_source(op))
		rc = up_chan_send(fd, UP_M_HASHES, st.hashes, ep->nqps * st.slots * sizeof(*st.hashes));
	if (rc)
		goto out;
	uint64_t target[UP_MAX_QPS] = { 0 };
	for (;;) {
		if (op == UP_SEND) {
			/* Keep receives posted while waiting for the client's next word. */
			int ready_msg;
			while (!(ready_msg = up_chan_ready(fd))) {
				rc = srv_poll_recv(ep, &st, err, errlen);
				if (rc < 0)
					goto out;
			}
			if (ready_msg < 0) {
				rc = ready_msg;
				goto out;
			}
		}
		uint32_t type = 0;
		struct up_round rd;
		int n = up_chan_recv(fd, &type, &rd, sizeof(rd));
		if (n < 0) {
			rc = n;
			snprintf(err, errlen, "side channel: %s", strerror(-n));
			goto out;
		}
		if (type == UP_M_ALIVE && n == 0)
			continue;
		if (type == UP_M_END) {
			uint64_t total = 0;
			for (unsigned q = 0; q < ep->nqps; q++)
				total += st.done[q];
			rc = up_chan_send(fd, UP_M_END_ACK, &total, sizeof(total));
			goto out;
		}
		if (type != UP_M_ROUND || n != (int)sizeof(rd)) {
			snprintf(err, errlen, "unexpected message %u during a test", type);
			rc = -EPROTO;
			goto out;
		}
		if (!rd.check) {
			for (unsigned q = 0; q < ep->nqps; q++) {
				st.allowed[q] += rd.count[q];
				target[q] += rd.count[q];
			}
			continue;
		}
		struct up_vres res = { .ok = 1 };
		if (op == UP_SEND) {
			rc = srv_wait_done(ep, &st, target, 10000, err, errlen);
			if (rc)
				goto out;
		}
		if (verify_data && up_client_is_source(op)) {
			up_verify_slots(ep, t->size, st.slots, rd.first_slot, rd.count, st.hashes, t->seed, rd.first_msg, &res);
			memset(ep->buf, 0, ep->buflen);
		}
		rc = up_chan_send(fd, UP_M_SEGRES, &res, sizeof(res));
		if (rc)
			goto out;
	}
out:
	free(st.hashes);
	return rc;
}

int up_server_session(int fd, int index, int quiet, char *err, size_t errlen)
{
	struct up_hello h;
	int rc = up_chan_expect(fd, UP_M_HELLO, &h, sizeof(h), err, errlen);
	if (rc < 0)
		return -ENOTCONN;
	struct up_hello_ack ack;
	memset(&ack, 0, sizeof(ack));
	if (h.magic != UP_MAGIC || h.version != UP_VERSION || !h.nqps || h.nqps > UP_MAX_QPS) {
		ack.status = EPROTO;
		snprintf(ack.err, sizeof(ack.err), "bad hello (magic 0x%x version %u, %u QPs)", h.magic, h.version, h.nqps);
		up_chan_send(fd, UP_M_HELLO_ACK, &ack, sizeof(ack));
		snprintf(err, errlen, "%s", ack.err);
		return -EPROTO;
	}
	struct up_ep ep;
	rc = up_ep_create(&ep, index, h.nqps, (int)h.shared_cq, h.depth, h.rx_depth, h.bufsize, h.gid_index,
			  ack.err, sizeof(ack.err));
	if (rc) {
		ack.status = (uint32_t)-rc;
		up_chan_send(fd, UP_M_HELLO_ACK, &ack, sizeof(ack));
		snprintf(err, errlen, "%s", ack.err);
		up_ep_destroy(&ep);
		return rc;
	}
	snprintf(ack.device, sizeof(ack.device), "%s", ep.name);
	up_device_uri(index, ack.uri, sizeof(ack.uri));
	snprintf(ack.model, sizeof(ack.model), "%s", ep.model);
	snprintf(ack.fw, sizeof(ack.fw), "%s", ep.fw);
	struct up_qpinfo remote[UP_MAX_QPS];
	rc = up_chan_send(fd, UP_M_HELLO_ACK, &ack, sizeof(ack));
	if (!rc)
		rc = up_chan_expect(fd, UP_M_QPINFO, remote, sizeof(remote[0]) * h.nqps, err, errlen);
	if (rc >= 0)
		rc = up_chan_send(fd, UP_M_QPINFO, ep.local, sizeof(ep.local[0]) * h.nqps);
	if (!rc)
		rc = up_ep_connect(&ep, remote, err, errlen);
	while (!rc) {
		struct up_test t;
		uint32_t type = 0;
		int n = up_chan_recv(fd, &type, &t, sizeof(t));
		if (n < 0) {
			snprintf(err, errlen, "side channel: %s", strerror(-n));
			rc = n;
			break;
		}
		if (type == UP_M_BYE)
			break;
		if (type == UP_M_ALIVE && n == 0)
			continue;
		if (type != UP_M_TEST || n != (int)sizeof(t)) {
			snprintf(err, errlen, "unexpected message %u", type);
			rc = -EPROTO;
			break;
		}
		rc = srv_test(fd, &ep, &t, err, errlen);
		if (rc) {
			/* Tell the client why, so it fails with the server's reason. */
			up_chan_send(fd, UP_M_ERROR, err, strlen(err));
		}
	}
	if (!quiet && rc)
		fprintf(stderr, "uvperf server: %s\n", err);
	up_ep_destroy(&ep);
	return rc;
}
