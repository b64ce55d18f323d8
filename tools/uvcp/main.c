/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvcp: the command line and the client side of a copy (uvcp.h says how a copy goes).
 * Exit status: 0 copied and verified, 1 a runtime error (one line on stderr naming the
 * cause), 2 a usage error. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "uvcp.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#ifndef UVCP_VERSION
#define UVCP_VERSION "0"
#endif
#ifndef UVCP_BUILD
#define UVCP_BUILD "unknown"
#endif
const char uc_version[] = UVCP_VERSION;
const char uc_build[] = UVCP_BUILD;

double uc_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

struct opts {
	int serve, once, json, progress, quiet, no_pack, map;
	const char *root, *addr;
	int port;
	const char *devs[UC_MAX_DEVS];
	unsigned ndev;
	int gid;
	unsigned qps, depth, chunk, timeout_s;
	uint64_t bwlimit;
};

struct pk_entry {                  /* a small file waiting in the pack */
	char *src, *dst;
	uint64_t size, off;
	int64_t mtime_ns;
	uint32_t mode;
};

struct cl {
	struct opts *o;
	struct uc_chan ch;
	struct uc_ep ep;
	const char *host;
	uint32_t seq;
	/* per slot: what it holds, for a resend after a NAK */
	uint64_t slot_index[UC_MAX_QPS][UC_MAX_DEPTH];
	uint32_t slot_len[UC_MAX_QPS][UC_MAX_DEPTH];
	uint8_t slot_busy[UC_MAX_QPS][UC_MAX_DEPTH];
	/* a chunk sent from a source window: its data there, the window's lkey on the
	 * slot's device and the window's index; NULL src: the data is in the slot */
	const uint8_t *slot_src[UC_MAX_QPS][UC_MAX_DEPTH];
	uint32_t slot_lkey[UC_MAX_QPS][UC_MAX_DEPTH];
	uint8_t slot_win[UC_MAX_QPS][UC_MAX_DEPTH];
	unsigned nbusy;
	unsigned resends;
	/* totals */
	uint64_t total_bytes, done_bytes, sent_bytes, resumed_bytes;
	uint64_t files, dirs, skipped;
	double t0, last_draw;
	const char *cur;
	char err[UC_ERR_MAX + UC_PATH_MAX];
	char server_devs[256];
	struct reader *rd;
	unsigned pending_done;         /* FILE_ENDs sent whose FILE_DONE is not read yet */
	uint64_t pending_files;        /* files those FILE_DONEs will confirm */
	struct pk_entry *pack;
	unsigned npack;
	uint64_t pack_bytes, packed;
};

static int fail(struct cl *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct cl *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return -1;
}

/* ------------------------------------------------------------------ progress */

static void human(char *out, size_t len, double b)
{
	const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int i = 0;
	while (b >= 1024 && i < 4) {
		b /= 1024;
		i++;
	}
	snprintf(out, len, i ? "%.2f %s" : "%.0f %s", b, u[i]);
}

static void draw(struct cl *c, int final)
{
	if (!c->o->progress)
		return;
	double now = uc_now();
	if (!final && now - c->last_draw < 0.2)
		return;
	c->last_draw = now;
	double el = now - c->t0;
	double rate = el > 0 ? (double)c->sent_bytes / el : 0;
	char done[32], tot[32];
	human(done, sizeof(done), (double)c->done_bytes);
	human(tot, sizeof(tot), (double)c->total_bytes);
	unsigned pct = c->total_bytes ? (unsigned)(c->done_bytes * 100 / c->total_bytes) : 100;
	char bar[26];
	unsigned fill = pct / 4;
	for (unsigned i = 0; i < 25; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[25] = 0;
	double eta = rate > 0 ? (double)(c->total_bytes - c->done_bytes) / rate : 0;
	fprintf(stderr, "\r[%s] %3u%% %s / %s  %.1f MB/s  ETA %u:%02u  %-24.24s", bar, pct, done, tot, rate / 1e6,
		(unsigned)eta / 60, (unsigned)eta % 60, c->cur ? c->cur : "");
	if (final)
		fputc('\n', stderr);
	fflush(stderr);
}

/* ------------------------------------------------------------------ the data pump */

/* The reader thread: it fills free slots with the file's next chunks (pread, XXH3,
 * header) while this thread posts the filled ones and takes the acknowledgements, so
 * that reading and hashing overlap with the transfer (on the emulated NIC the posting
 * thread sends the packets itself).  Slots pass between the two under the mutex: free
 * (freeq) -> filled (readyq) -> posted (slot_busy) -> free. */
#define UC_NSLOTS (UC_MAX_QPS * UC_MAX_DEPTH)

/* Source windows (--map): a file's chunks go out from a read-only mapping of the
 * file, registered a window at a time (local read only), the WRITE gathering the
 * slot's header and the data where it is (uc_ep_write_from), instead of being read
 * into the slot: one copy of every byte less on the client, and no pread.  Windows,
 * not the whole file, so that a kernel driver pins a bounded amount (ibv_reg_mr pins
 * every page it covers).  A window is unmapped only when every chunk sent from it is
 * acknowledged (a resend after a NAK reads it again).  Whatever cannot be mapped or
 * registered (RLIMIT_MEMLOCK, a chunk not a multiple of the page) goes through pread
 * into the slot, as every file does by default: on the emulated NIC the mapping took
 * the reader thread's CPU down by about 45% but the copy got no faster
 * (docs/benchmarks.md, "uvcp"). */
#define UC_NWIN 3
#define UC_NO_WIN UINT64_MAX

struct win {
	uint64_t k;                    /* window number in the file, UC_NO_WIN: none */
	uint8_t *map;
	size_t len;
	struct ibv_mr *mr[UC_MAX_DEVS];
	unsigned pending;              /* chunks sent or waiting from it, not acknowledged */
};

struct reader {
	pthread_t t;
	int started, stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int wake[2];                   /* the reader writes a byte when a slot is filled */
	/* the current file */
	int job, fd;                   /* fd < 0: the chunks come from the pack's files */
	const struct pk_entry *pk;
	unsigned npk;
	uint64_t size, chunk, next, end, *hash;
	uint32_t seq;
	int err;
	unsigned freeq[UC_NSLOTS], nfree;
	unsigned readyq[UC_NSLOTS], rhead, rcount;
	/* source windows of the current file (map_ok: use them) */
	int map_ok;
	uint64_t wsize;
	unsigned nwin;
	struct win win[UC_NWIN];
};

/* A source file cut short while mapped: touching a page past its new end raises
 * SIGBUS.  In the reader's hash, the handler puts a page of zeros there (so the access
 * completes) and notes it; the copy then fails with "the file shrank" instead of the
 * process dying.  A device reading the window sees it its own way (a NIC reads the
 * pinned pages; libuverbs' emulated NIC completes the WRITE with a local protection
 * error, hw/platform/guarded_copy_common.c), which handle_wc also reports as the
 * file shrinking.  Faults elsewhere go to the handler that was there before, as the
 * kernel would have called it (a library's own guard, or the default action). */
static struct reader *volatile bus_reader;
static volatile sig_atomic_t bus_hit;
static uintptr_t page_size;
static struct sigaction bus_prev;

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	struct reader *r = bus_reader;
	uintptr_t a = (uintptr_t)si->si_addr;
	for (unsigned i = 0; r && i < r->nwin; i++) {
		uintptr_t b = (uintptr_t)r->win[i].map;
		if (b && a >= b && a < b + r->win[i].len &&
		    mmap((void *)(a & ~(page_size - 1)), page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			 -1, 0) != MAP_FAILED) {
			bus_hit = 1;
			return;
		}
	}
	if ((bus_prev.sa_flags & SA_SIGINFO) && bus_prev.sa_sigaction) {
		bus_prev.sa_sigaction(sig, si, ctx);
	} else if (bus_prev.sa_handler != SIG_DFL && bus_prev.sa_handler != SIG_IGN) {
		bus_prev.sa_handler(sig);
	} else {
		struct sigaction dfl = { .sa_handler = SIG_DFL };
		sigemptyset(&dfl.sa_mask);
		sigaction(sig, &dfl, NULL);   /* returning faults again, with the default */
	}
}

static void win_drop(struct win *w)
{
	for (unsigned d = 0; d < UC_MAX_DEVS; d++)
		if (w->mr[d]) {
			ibv_dereg_mr(w->mr[d]);
			w->mr[d] = NULL;
		}
	if (w->map)
		munmap(w->map, w->len);
	w->map = NULL;
	w->len = 0;
	w->k = UC_NO_WIN;
	w->pending = 0;
}

/* Every window of the file: the reader is idle or gone and nothing is in flight. */
static void win_drop_all(struct reader *r)
{
	for (unsigned i = 0; i < UC_NWIN; i++)
		win_drop(&r->win[i]);
	r->map_ok = 0;
}

/* Called by the reader with r->mu held: the window holding byte `off` of the file,
 * mapped and registered, its pending count raised for one chunk; NULL when the chunk
 * must be read instead (r->map_ok is then cleared for the rest of the file), or when
 * the reader is told to stop while waiting for the window's old chunks. */
static struct win *win_get(struct cl *c, struct reader *r, int fd, uint64_t off)
{
	uint64_t k = off / r->wsize;
	struct win *w = &r->win[k % r->nwin];
	while (w->k != k && w->pending && !r->stop && r->job)
		pthread_cond_wait(&r->cv, &r->mu);
	if (r->stop || !r->job)
		return NULL;
	if (w->k != k) {
		pthread_mutex_unlock(&r->mu);
		win_drop(w);
		uint64_t base = k * r->wsize;
		size_t len = (size_t)(r->size - base < r->wsize ? r->size - base : r->wsize);
		void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)base);
		int ok = m != MAP_FAILED;
		if (ok) {
			w->map = m;
			w->len = len;
			madvise(m, len, MADV_SEQUENTIAL);
			for (unsigned d = 0; d < c->ep.ndev && ok; d++) {
				w->mr[d] = ibv_reg_mr(c->ep.dev[d].pd, m, len, 0);
				ok = w->mr[d] != NULL;
			}
		}
		if (!ok)
			win_drop(w);
		pthread_mutex_lock(&r->mu);
		if (!ok) {
			r->map_ok = 0;
			return NULL;
		}
		w->k = k;
	}
	w->pending++;
	return w;
}


/* Bytes [off, off + len) of a pack: the files' contents end to end. */
static int pack_fill(const struct pk_entry *pk, unsigned n, uint8_t *dst, uint64_t off, uint32_t len)
{
	unsigned lo = 0, hi = n;
	while (lo + 1 < hi) {         /* the last entry starting at or before off */
		unsigned mid = (lo + hi) / 2;
		if (pk[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	for (unsigned i = lo; i < n && len; i++) {
		const struct pk_entry *e = &pk[i];
		if (off >= e->off + e->size)
			continue;
		uint64_t in = off - e->off;
		size_t k = (size_t)(e->size - in < len ? e->size - in : len);
		int fd = open(e->src, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return errno;
		ssize_t r = pread(fd, dst, k, (off_t)in);
		int er = errno;
		close(fd);
		if (r != (ssize_t)k)
			return r < 0 ? er : EIO;
		dst += k;
		off += k;
		len -= (uint32_t)k;
	}
	return len ? EIO : 0;
}

static void *reader_main(void *arg)
{
	struct cl *c = arg;
	struct reader *r = c->rd;
	unsigned depth = c->ep.depth;
	pthread_mutex_lock(&r->mu);
	for (;;) {
		while (!r->stop && !(r->job && r->nfree && r->next < r->end))
			pthread_cond_wait(&r->cv, &r->mu);
		if (r->stop)
			break;
		unsigned id = r->freeq[--r->nfree];
		uint64_t i = r->next++;
		int fd = r->fd;
		const struct pk_entry *pk = r->pk;
		unsigned npk = r->npk;
		uint64_t chunk = r->chunk, off = i * chunk;
		uint32_t len = (uint32_t)(r->size - off < chunk ? r->size - off : chunk), seq = r->seq;
		uint64_t *hash = r->hash;
		unsigned q = id / depth, sl = id % depth;
		struct win *w = fd >= 0 && r->map_ok ? win_get(c, r, fd, off) : NULL;
		if (r->stop)
			break;
		pthread_mutex_unlock(&r->mu);

		uint8_t *b = uc_slot(&c->ep, q, sl);
		const uint8_t *data = b + UC_HDR;
		int e = 0;
		if (w) {
			data = w->map + (off - w->k * r->wsize);
			c->slot_src[q][sl] = data;
			c->slot_lkey[q][sl] = w->mr[c->ep.qp[q].dev]->lkey;
			c->slot_win[q][sl] = (uint8_t)(w - r->win);
		} else if (fd >= 0) {
			c->slot_src[q][sl] = NULL;
			ssize_t k = pread(fd, b + UC_HDR, len, (off_t)off);
			e = k == (ssize_t)len ? 0 : k < 0 ? errno : EIO;
		} else {
			c->slot_src[q][sl] = NULL;
			e = pack_fill(pk, npk, b + UC_HDR, off, len);
		}
		if (!e) {
			/* hashed where the data is, in the same pass that faults it in */
			struct uc_chunk_hdr h = { .magic = UC_MAGIC, .seq = seq, .index = i, .len = len,
						  .hash = XXH3_64bits(data, len) };
			if (bus_hit)
				e = EIO;
			memcpy(b, &h, sizeof(h));
			hash[i] = h.hash;
			c->slot_index[q][sl] = i;
			c->slot_len[q][sl] = len;
		}

		pthread_mutex_lock(&r->mu);
		if (e) {
			if (w)
				w->pending--;
			r->err = e;
			r->job = 0;
		} else {
			r->readyq[(r->rhead + r->rcount) % UC_NSLOTS] = id;
			r->rcount++;
		}
		ssize_t wr = write(r->wake[1], "", 1);
		(void)wr;                  /* a full pipe already says "look" */
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

static int reader_start(struct cl *c)
{
	static struct reader r;
	memset(&r, 0, sizeof(r));
	c->rd = &r;
	if (pipe(r.wake))
		return fail(c, "pipe: %s", strerror(errno));
	for (int i = 0; i < 2; i++)
		fcntl(r.wake[i], F_SETFL, fcntl(r.wake[i], F_GETFL) | O_NONBLOCK);
	for (unsigned i = 0; i < UC_NWIN; i++)
		r.win[i].k = UC_NO_WIN;
	if (!page_size) {
		page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
		struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK };
		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, &bus_prev);
	}
	bus_reader = &r;
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.cv, NULL);
	if (pthread_create(&r.t, NULL, reader_main, c))
		return fail(c, "cannot start the reader thread");
	r.started = 1;
	return 0;
}

static void reader_stop(struct cl *c)
{
	struct reader *r = c->rd;
	if (!r)
		return;
	if (r->started) {
		pthread_mutex_lock(&r->mu);
		r->stop = 1;
		pthread_cond_signal(&r->cv);
		pthread_mutex_unlock(&r->mu);
		pthread_join(r->t, NULL);
	}
	bus_reader = NULL;
	win_drop_all(r);
	close(r->wake[0]);
	close(r->wake[1]);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	c->rd = NULL;
}

static void slot_free(struct cl *c, unsigned q, unsigned s)
{
	struct reader *r = c->rd;
	c->slot_busy[q][s] = 0;
	c->nbusy--;
	pthread_mutex_lock(&r->mu);
	if (c->slot_src[q][s])
		r->win[c->slot_win[q][s]].pending--;
	r->freeq[r->nfree++] = q * c->ep.depth + s;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

/* The file being sent is shorter than when it started (or the reader met that). */
static int source_shrank(struct cl *c)
{
	struct reader *r = c->rd;
	struct stat st;
	if (bus_hit)
		return 1;
	return r && r->job && r->fd >= 0 && !fstat(r->fd, &st) && (uint64_t)st.st_size < r->size;
}

/* The slot's chunk, from the slot or from its source window. */
static int post_slot(struct cl *c, unsigned q, unsigned s)
{
	if (c->slot_src[q][s])
		return uc_ep_write_from(&c->ep, q, s, c->slot_len[q][s], c->slot_src[q][s], c->slot_lkey[q][s]);
	return uc_ep_write(&c->ep, q, s, c->slot_len[q][s]);
}

static int handle_wc(struct cl *c, struct ibv_wc *wc)
{
	unsigned q = (unsigned)(wc->wr_id >> 16);
	if (wc->status != IBV_WC_SUCCESS && source_shrank(c))
		return fail(c, "reading '%.200s': the file shrank while copying", c->cur ? c->cur : "?");
	if (wc->status != IBV_WC_SUCCESS)
		return fail(c, "RDMA %s on QP %u (%s): the server is gone or unreachable",
			    ibv_wc_status_str(wc->status), q, q < c->ep.nqps ? c->ep.dev[c->ep.qp[q].dev].name : "?");
	if (q >= c->ep.nqps)
		return 0;
	struct uc_qp *p = &c->ep.qp[q];
	if (!(wc->opcode & IBV_WC_RECV)) {
		p->sq_out--;
		return 0;
	}
	/* an acknowledgement: the server has the chunk of this slot, or asks for it again */
	uint32_t imm = ntohl(wc->imm_data);
	unsigned s = imm & 0xffff, verdict = imm >> 16;
	if (s >= c->ep.depth || !c->slot_busy[q][s])
		return fail(c, "the server acknowledged slot %u of QP %u, which holds nothing", s, q);
	if (uc_ep_post_recv(&c->ep, q, s))
		return fail(c, "cannot post a receive: %s", strerror(errno));
	if (verdict == UC_ACK_BADHASH) {
		/* the chunk arrived damaged: send the slot again, a few times at most */
		if (bus_hit)
			return fail(c, "reading '%.200s': the file shrank while copying", c->cur ? c->cur : "?");
		if (++c->resends > 16)
			return fail(c, "chunks keep arriving damaged at the server (%u resends)", c->resends);
		if (post_slot(c, q, s))
			return fail(c, "cannot post an RDMA write: %s", strerror(errno));
		return 0;
	}
	if (verdict != UC_ACK_OK)
		return fail(c, "the server refused chunk %" PRIu64, c->slot_index[q][s]);
	c->done_bytes += c->slot_len[q][s];
	slot_free(c, q, s);
	draw(c, 0);
	return 0;
}

static void pace(struct cl *c)
{
	if (!c->o->bwlimit)
		return;
	double should = (double)c->sent_bytes / (double)c->o->bwlimit;
	double el = uc_now() - c->t0;
	if (should > el)
		usleep((useconds_t)((should - el) * 1e6));
}

/* Post what the reader filled, take completions, until every chunk from `first` on is
 * posted and acknowledged; the side channel speaks only to say the server failed. */
static int transfer(struct cl *c, const char *src, uint64_t first, uint64_t nchunks)
{
	struct reader *r = c->rd;
	double idle = uc_now();
	uint64_t posted = first;
	while (posted < nchunks || c->nbusy) {
		unsigned ids[UC_NSLOTS], n = 0;
		pthread_mutex_lock(&r->mu);
		int err = r->err;
		while (r->rcount) {
			ids[n++] = r->readyq[r->rhead];
			r->rhead = (r->rhead + 1) % UC_NSLOTS;
			r->rcount--;
		}
		pthread_mutex_unlock(&r->mu);
		if (err)
			return fail(c, "reading '%.200s': %s", src, err == EIO ? "the file shrank while copying" : strerror(err));
		for (unsigned k = 0; k < n; k++) {
			unsigned q = ids[k] / c->ep.depth, s = ids[k] % c->ep.depth;
			/* send credits: a QP's send queue holds 2 x depth WRs, and only the send
			 * CQ gives room back (one slot's WRITE plus a resend at most, so this
			 * waits only if completions are late) */
			double t0 = uc_now();
			while (c->ep.qp[q].sq_out >= 2 * c->ep.depth) {
				struct ibv_wc w[16];
				int g = uc_ep_poll(&c->ep, w, 16);
				if (g < 0)
					return fail(c, "polling the CQ failed");
				for (int i = 0; i < g; i++)
					if (handle_wc(c, &w[i]))
						return -1;
				if (uc_now() - t0 > c->o->timeout_s)
					return fail(c, "no send completion for %u s (peer gone?)", c->o->timeout_s);
			}
			pace(c);
			if (post_slot(c, q, s))
				return fail(c, "cannot post an RDMA write: %s", strerror(errno));
			c->slot_busy[q][s] = 1;
			c->nbusy++;
			c->sent_bytes += c->slot_len[q][s];
			posted++;
		}
		struct ibv_wc wc[64];
		int got = uc_ep_poll(&c->ep, wc, 64);
		if (got < 0)
			return fail(c, "polling the CQ failed");
		for (int i = 0; i < got; i++)
			if (handle_wc(c, &wc[i]))
				return -1;
		if (n || got) {
			idle = uc_now();
			continue;
		}
		int w = uc_ep_wait(&c->ep, c->ch.fd, r->wake[0], 500);
		char sink[64];
		while (read(r->wake[0], sink, sizeof(sink)) > 0)
			;
		if (w < 0)
			return fail(c, "waiting for completions: %s", strerror(-w));
		if (w == 1) {
			char tmp[8];
			int k = uc_chan_expect(&c->ch, UC_M_BYE, tmp, sizeof(tmp), c->err, sizeof(c->err));
			if (k == -UC_EPEER)
				return -1;
			return fail(c, "the server closed the connection mid-copy (peer gone)");
		}
		if (uc_now() - idle > c->o->timeout_s)
			return fail(c, "no progress for %u s: the server stopped answering (peer gone?)", c->o->timeout_s);
	}
	return 0;
}

/* The server answers FILE_END with FILE_DONE once the file is verified and renamed.
 * The client does not wait for it before the next file's FILE (one round trip less a
 * file, which is what a tree of small files costs): the answers are read here, in
 * order, before any other reply is expected, and before the session ends. */
static int collect_done(struct cl *c)
{
	while (c->pending_done) {
		struct uc_status st;
		if (uc_chan_expect(&c->ch, UC_M_FILE_DONE, &st, sizeof(st), c->err, sizeof(c->err)) < 0)
			return -1;
		c->pending_done--;
		if (st.status) {
			st.err[sizeof(st.err) - 1] = 0;
			return fail(c, "server: %s", st.err);
		}
	}
	c->files += c->pending_files;
	c->pending_files = 0;
	return 0;
}

static int send_stream(struct cl *c, const char *src, int fd, struct uc_file *mp, unsigned nfiles);

static int send_file(struct cl *c, const char *src, const char *dst, const struct stat *st)
{
	int fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(c, "cannot open '%.200s': %s", src, strerror(errno));
	c->cur = src;
	static struct uc_file m;
	memset(&m, 0, sizeof(m));
	m.size = (uint64_t)st->st_size;
#ifdef __APPLE__
	m.mtime_ns = (int64_t)st->st_mtimespec.tv_sec * 1000000000 + st->st_mtimespec.tv_nsec;
#else
	m.mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
#endif
	m.mode = st->st_mode & 07777;
	if (strlen(dst) >= sizeof(m.path)) {
		close(fd);
		return fail(c, "destination name too long: '%.200s'", dst);
	}
	snprintf(m.path, sizeof(m.path), "%s", dst);
	return send_stream(c, src, fd, &m, 1);
}

/* One FILE: a file (fd) or a pack (fd < 0, c->pack), from FILE to FILE_END; fd is
 * closed here. */
static int send_stream(struct cl *c, const char *src, int fd, struct uc_file *mp, unsigned nfiles)
{
#define m (*mp)
	const char *dst = m.path;
	m.chunk = c->o->chunk;
	m.seq = ++c->seq;
	struct uc_file_ack ack;
	int rc = uc_chan_send(&c->ch, UC_M_FILE, &m, sizeof(m));
	if (rc) {
		if (fd >= 0)
			close(fd);
		return fail(c, "side channel: %s", uc_chan_why(rc));
	}
	rc = collect_done(c);
	if (!rc)
		rc = uc_chan_expect(&c->ch, UC_M_FILE_ACK, &ack, sizeof(ack), c->err, sizeof(c->err));
	if (rc < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (ack.status) {
		if (fd >= 0)
			close(fd);
		ack.err[sizeof(ack.err) - 1] = 0;
		return fail(c, "server: %s", ack.err);
	}
	uint64_t chunk = c->o->chunk, nchunks = (m.size + chunk - 1) / chunk;
	if (ack.resume_chunks > nchunks || (fd < 0 && ack.resume_chunks)) {
		if (fd >= 0)
			close(fd);
		return fail(c, "the server would resume '%.200s' past its end", dst);
	}
	uint64_t *hash = calloc(nchunks ? nchunks : 1, sizeof(uint64_t));
	uint8_t *b = ack.resume_chunks ? malloc(chunk) : NULL;
	if (!hash || (ack.resume_chunks && !b)) {
		free(hash);
		if (fd >= 0)
			close(fd);
		return fail(c, "out of memory");
	}
	/* The digest covers the whole file: the prefix the server already holds is read and
	 * hashed here too, and a server whose prefix differs fails the comparison. */
	int ret = 0;
	for (uint64_t i = 0; i < ack.resume_chunks && !ret; i++) {
		uint64_t off = i * chunk;
		uint32_t len = (uint32_t)(m.size - off < chunk ? m.size - off : chunk);
		if (pread(fd, b, len, (off_t)off) != (ssize_t)len)
			ret = fail(c, "reading '%.200s': %s", src, strerror(errno ? errno : EIO));
		else
			hash[i] = XXH3_64bits(b, len);
		c->done_bytes += len;
		c->resumed_bytes += len;
	}
	free(b);
	if (!ret && ack.resume_chunks < nchunks) {
		struct reader *r = c->rd;
		pthread_mutex_lock(&r->mu);
		r->fd = fd;
		r->pk = c->pack;
		r->npk = c->npack;
		r->size = m.size;
		r->chunk = chunk;
		r->seq = m.seq;
		r->hash = hash;
		r->next = ack.resume_chunks;
		r->end = nchunks;
		r->err = 0;
		r->rhead = r->rcount = 0;
		r->nfree = 0;
		/* a window holds as many chunks as there are slots, so that when the reader
		 * opens window k + 2 every chunk of window k is acknowledged (at most a
		 * window's worth is in flight, all of it from k + 1): three windows never
		 * make the reader wait, and what is pinned is three times what is in flight */
		r->wsize = (uint64_t)c->ep.nqps * c->ep.depth * chunk;
		r->nwin = UC_NWIN;
		r->map_ok = fd >= 0 && c->o->map && r->wsize % page_size == 0;
		bus_hit = 0;
		for (unsigned q = 0; q < c->ep.nqps; q++)
			for (unsigned s = 0; s < c->ep.depth; s++)
				r->freeq[r->nfree++] = q * c->ep.depth + s;
		r->job = 1;
		pthread_cond_signal(&r->cv);
		pthread_mutex_unlock(&r->mu);
		ret = transfer(c, src, ack.resume_chunks, nchunks);
		/* the reader leaves this file: after an error it may still be reading a
		 * chunk, so wait until it is idle before the descriptor goes */
		pthread_mutex_lock(&r->mu);
		r->job = 0;
		r->end = r->next;
		pthread_mutex_unlock(&r->mu);
		if (!ret)              /* everything acknowledged, the reader idle */
			win_drop_all(r);
	}
	if (ret) {
		/* the thread is stopped (and joined) before the hashes and descriptor go */
		reader_stop(c);
	}
	if (fd >= 0)
		close(fd);
	if (!ret) {
		struct uc_file_end e = { .nchunks = nchunks, .digest = XXH3_64bits(hash, (size_t)nchunks * sizeof(uint64_t)) };
		rc = uc_chan_send(&c->ch, UC_M_FILE_END, &e, sizeof(e));
		if (rc)
			ret = fail(c, "side channel: %s", uc_chan_why(rc));
		else {
			c->pending_done++;
			c->pending_files += nfiles;
		}
	}
	free(hash);
	return ret;
#undef m
}

/* Send the small files gathered so far as one pack (uvcp.h, UC_F_PACK). */
static int flush_pack(struct cl *c)
{
	if (!c->npack)
		return 0;
	size_t len = 4;
	for (unsigned i = 0; i < c->npack; i++)
		len += sizeof(struct uc_pack_entry) + strlen(c->pack[i].dst);
	uint8_t *msg = malloc(len);
	if (!msg)
		return fail(c, "out of memory");
	uint32_t count = c->npack;
	memcpy(msg, &count, 4);
	size_t at = 4;
	for (unsigned i = 0; i < c->npack; i++) {
		struct pk_entry *e = &c->pack[i];
		struct uc_pack_entry pe = { .size = e->size, .mtime_ns = e->mtime_ns, .mode = e->mode,
					    .pathlen = (uint32_t)strlen(e->dst) };
		memcpy(msg + at, &pe, sizeof(pe));
		at += sizeof(pe);
		memcpy(msg + at, e->dst, pe.pathlen);
		at += pe.pathlen;
	}
	int rc = uc_chan_send(&c->ch, UC_M_PACK, msg, len);
	free(msg);
	int ret;
	if (rc) {
		ret = fail(c, "side channel: %s", uc_chan_why(rc));
	} else {
		static struct uc_file m;
		memset(&m, 0, sizeof(m));
		m.size = c->pack_bytes;
		m.flags = UC_F_PACK;
		c->cur = c->pack[c->npack - 1].src;
		ret = send_stream(c, c->pack[0].src, -1, &m, c->npack);
		if (!ret)
			c->packed += c->npack;
	}
	for (unsigned i = 0; i < c->npack; i++) {
		free(c->pack[i].src);
		free(c->pack[i].dst);
	}
	c->npack = 0;
	c->pack_bytes = 0;
	return ret;
}

/* A small file inside a tree joins the pack; it is sent when the pack is full, before
 * a large file, and at the end. */
static int pack_add(struct cl *c, const char *src, const char *dst, const struct stat *st)
{
	if (strlen(dst) >= UC_PATH_MAX)
		return fail(c, "destination name too long: '%.200s'", dst);
	if (c->npack == UC_PACK_MAX_FILES || c->pack_bytes + (uint64_t)st->st_size > UC_PACK_MAX_BYTES)
		if (flush_pack(c))
			return -1;
	if (!c->pack) {
		c->pack = calloc(UC_PACK_MAX_FILES, sizeof(*c->pack));
		if (!c->pack)
			return fail(c, "out of memory");
	}
	struct pk_entry *e = &c->pack[c->npack];
	e->src = strdup(src);
	e->dst = strdup(dst);
	if (!e->src || !e->dst) {
		free(e->src);
		free(e->dst);
		return fail(c, "out of memory");
	}
	e->size = (uint64_t)st->st_size;
	e->off = c->pack_bytes;
#ifdef __APPLE__
	e->mtime_ns = (int64_t)st->st_mtimespec.tv_sec * 1000000000 + st->st_mtimespec.tv_nsec;
#else
	e->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
#endif
	e->mode = st->st_mode & 07777;
	c->npack++;
	c->pack_bytes += e->size;
	return 0;
}

static int remote_mkdir(struct cl *c, const char *dst, mode_t mode)
{
	static struct uc_mkdir m;
	memset(&m, 0, sizeof(m));
	m.mode = mode & 07777;
	if (strlen(dst) >= sizeof(m.path))
		return fail(c, "destination name too long: '%.200s'", dst);
	snprintf(m.path, sizeof(m.path), "%s", dst);
	struct uc_status st;
	int rc = uc_chan_send(&c->ch, UC_M_MKDIR, &m, sizeof(m));
	if (rc)
		return fail(c, "side channel: %s", uc_chan_why(rc));
	if (collect_done(c) || uc_chan_expect(&c->ch, UC_M_MKDIR_ACK, &st, sizeof(st), c->err, sizeof(c->err)) < 0)
		return -1;
	if (st.status) {
		st.err[sizeof(st.err) - 1] = 0;
		return fail(c, "server: %s", st.err);
	}
	c->dirs++;
	return 0;
}

/* Sizes first, for the progress bar's total. */
static void measure(struct cl *c, const char *src, int top)
{
	struct stat st;
	if ((top ? stat(src, &st) : lstat(src, &st)))
		return;
	if (S_ISREG(st.st_mode)) {
		c->total_bytes += (uint64_t)st.st_size;
	} else if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(src);
		if (!d)
			return;
		struct dirent *e;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			char p[PATH_MAX];
			if ((size_t)snprintf(p, sizeof(p), "%s/%s", src, e->d_name) < sizeof(p))
				measure(c, p, 0);
		}
		closedir(d);
	}
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int copy_tree(struct cl *c, const char *src, const char *dst, int top)
{
	struct stat st;
	/* a symlink named on the command line is followed; one inside a tree is skipped */
	if ((top ? stat(src, &st) : lstat(src, &st)))
		return fail(c, "cannot read '%.200s': %s", src, strerror(errno));
	if (S_ISREG(st.st_mode)) {
		if (!top && !c->o->no_pack && (uint64_t)st.st_size < c->o->chunk)
			return pack_add(c, src, dst, &st);
		return flush_pack(c) ? -1 : send_file(c, src, dst, &st);
	}
	if (!S_ISDIR(st.st_mode)) {
		c->skipped++;
		return 0;
	}
	DIR *d = opendir(src);
	if (!d)
		return fail(c, "cannot read directory '%.200s': %s", src, strerror(errno));
	if (remote_mkdir(c, dst, st.st_mode)) {
		closedir(d);
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			char **nn = realloc(names, cap * sizeof(*names));
			if (!nn)
				break;
			names = nn;
		}
		names[n] = strdup(e->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		char s[PATH_MAX], t[UC_PATH_MAX];
		if (!rc && ((size_t)snprintf(s, sizeof(s), "%s/%s", src, names[i]) >= sizeof(s) ||
			    (size_t)snprintf(t, sizeof(t), "%s%s%s", dst, dst[0] ? "/" : "", names[i]) >= sizeof(t)))
			rc = fail(c, "path too long under '%.200s'", src);
		if (!rc)
			rc = copy_tree(c, s, t, 0);
		free(names[i]);
	}
	free(names);
	return rc;
}

static const char *base_name(const char *p, char *buf, size_t len)
{
	snprintf(buf, len, "%s", p);
	size_t n = strlen(buf);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = 0;
	const char *s = strrchr(buf, '/');
	return s && s[1] ? s + 1 : buf;
}

static int stat_remote(struct cl *c, const char *path, unsigned *kind)
{
	int rc = uc_chan_send(&c->ch, UC_M_STAT, path, strlen(path) + 1);
	if (rc)
		return fail(c, "side channel: %s", uc_chan_why(rc));
	struct uc_status st;
	if (collect_done(c) || uc_chan_expect(&c->ch, UC_M_STAT_ACK, &st, sizeof(st), c->err, sizeof(c->err)) < 0)
		return -1;
	if (st.status) {
		st.err[sizeof(st.err) - 1] = 0;
		return fail(c, "server: %s", st.err);
	}
	*kind = st.kind;
	return 0;
}

static int client(struct opts *o, char **srcs, int nsrc, const char *host, const char *dest)
{
	static struct cl c;
	memset(&c, 0, sizeof(c));
	c.o = o;
	c.host = host;
	for (int i = 0; i < nsrc; i++) {
		struct stat st;
		if (stat(srcs[i], &st)) {
			fprintf(stderr, "uvcp: cannot read '%.200s': %s\n", srcs[i], strerror(errno));
			return 1;
		}
	}
	char err[UC_ERR_MAX];
	int fd = uc_chan_connect(host, o->port, 5000, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "uvcp: %s\n", err);
		return 1;
	}
	c.ch = (struct uc_chan){ .fd = fd, .timeout_ms = o->timeout_s * 1000 };
	int ret = 0;
	struct uc_hello h = { .magic = UC_MAGIC, .version = UC_VERSION, .nqps = o->qps, .depth = o->depth,
			      .chunk = o->chunk };
	static struct uc_hello_ack ack;
	int rc = uc_chan_send(&c.ch, UC_M_HELLO, &h, sizeof(h));
	if (rc) {
		ret = fail(&c, "side channel: %s", uc_chan_why(rc));
		goto out;
	}
	rc = uc_ep_open(&c.ep, o->devs, o->ndev, o->gid, o->qps, o->depth, o->chunk, 0, c.err, sizeof(c.err));
	if (rc) {
		ret = -1;
		uc_chan_error(&c.ch, "client: %s", c.err);
		goto out;
	}
	if (uc_chan_expect(&c.ch, UC_M_HELLO_ACK, &ack, sizeof(ack), c.err, sizeof(c.err)) < 0) {
		ret = -1;
		goto out;
	}
	if (ack.status || ack.nqps != o->qps) {
		ack.err[sizeof(ack.err) - 1] = 0;
		ret = fail(&c, "server: %s", ack.err[0] ? ack.err : "refused the queue shape");
		goto out;
	}
	ack.devices[sizeof(ack.devices) - 1] = 0;
	snprintf(c.server_devs, sizeof(c.server_devs), "%s", ack.devices);
	struct uc_qpinfo mine[UC_MAX_QPS];
	for (unsigned q = 0; q < o->qps; q++) {
		c.ep.qp[q].remote = ack.qp[q];
		mine[q] = c.ep.qp[q].local;
	}
	if (uc_ep_connect(&c.ep, c.err, sizeof(c.err))) {
		uc_chan_error(&c.ch, "client: %s", c.err);
		ret = -1;
		goto out;
	}
	rc = uc_chan_send(&c.ch, UC_M_QPINFO, mine, o->qps * sizeof(mine[0]));
	char tmp[8];
	if (rc || uc_chan_expect(&c.ch, UC_M_READY, tmp, sizeof(tmp), c.err, sizeof(c.err)) < 0) {
		if (rc)
			fail(&c, "side channel: %s", uc_chan_why(rc));
		ret = -1;
		goto out;
	}

	if (reader_start(&c)) {
		ret = -1;
		goto out;
	}
	/* Where each source goes, as cp(1) decides: into DEST when it is a directory (or
	 * several sources are given, or DEST ends in '/'), else to DEST itself. */
	char d[UC_PATH_MAX];
	snprintf(d, sizeof(d), "%s", dest);
	size_t dl = strlen(d);
	int slash = dl && d[dl - 1] == '/';
	while (dl && d[dl - 1] == '/')
		d[--dl] = 0;
	if (!strcmp(d, "."))
		d[0] = 0;
	unsigned kind = UC_K_DIR;
	if (d[0] && stat_remote(&c, d, &kind)) {
		ret = -1;
		goto out;
	}
	int into = kind == UC_K_DIR;
	if (!into && (nsrc > 1 || slash)) {
		if (kind != UC_K_NONE) {
			ret = fail(&c, "target '%.200s' on the server is not a directory", dest);
			goto out;
		}
		if (remote_mkdir(&c, d, 0755)) {
			ret = -1;
			goto out;
		}
		c.dirs--;
		into = 1;
	}
	for (int i = 0; i < nsrc; i++)
		measure(&c, srcs[i], 1);
	c.t0 = uc_now();
	for (int i = 0; i < nsrc && !ret; i++) {
		char t[UC_PATH_MAX], bb[PATH_MAX];
		if (into)
			snprintf(t, sizeof(t), "%s%s%s", d, d[0] ? "/" : "", base_name(srcs[i], bb, sizeof(bb)));
		else
			snprintf(t, sizeof(t), "%s", d);
		ret = copy_tree(&c, srcs[i], t, 1);
	}
	if (!ret)
		ret = flush_pack(&c);
	if (!ret)
		ret = collect_done(&c);
	if (!ret)
		uc_chan_send(&c.ch, UC_M_BYE, NULL, 0);
out:
	reader_stop(&c);
	for (unsigned i = 0; i < c.npack; i++) {
		free(c.pack[i].src);
		free(c.pack[i].dst);
	}
	free(c.pack);
	double el = c.t0 ? uc_now() - c.t0 : 0;
	if (o->progress && c.t0)
		draw(&c, 1);
	double rate = el > 0 ? (double)c.sent_bytes / el : 0;
	char names[256];
	uc_ep_names(&c.ep, names, sizeof(names));
	if (o->json) {
		printf("{\"status\":\"%s\",\"files\":%" PRIu64 ",\"dirs\":%" PRIu64 ",\"skipped\":%" PRIu64
		       ",\"bytes\":%" PRIu64 ",\"sent_bytes\":%" PRIu64 ",\"resumed_bytes\":%" PRIu64
		       ",\"packed_files\":%" PRIu64 ",\"seconds\":%.3f,\"rate_MBps\":%.1f,\"qps\":%u,\"depth\":%u,\"chunk\":%u,\"resends\":%u,"
		       "\"devices\":\"%s\",\"server_devices\":\"%s\"",
		       ret ? "error" : "ok", c.files, c.dirs, c.skipped, c.done_bytes, c.sent_bytes, c.resumed_bytes, c.packed, el,
		       rate / 1e6, o->qps, o->depth, o->chunk, c.resends, names, c.server_devs);
		if (ret) {
			printf(",\"error\":\"");
			for (const char *p = c.err; *p; p++)
				if (*p == '"' || *p == '\\')
					printf("\\%c", *p);
				else if ((unsigned char)*p >= 0x20)
					putchar(*p);
			printf("\"");
		}
		printf("}\n");
	} else if (!ret && !o->quiet) {
		char tot[32], res[32];
		human(tot, sizeof(tot), (double)c.done_bytes);
		human(res, sizeof(res), (double)c.resumed_bytes);
		fprintf(o->progress ? stderr : stdout,
			"uvcp: %" PRIu64 " file%s, %" PRIu64 " director%s, %s in %.2f s, %.1f MB/s over %u QP%s on %s%s%s%s, digests verified\n",
			c.files, c.files == 1 ? "" : "s", c.dirs, c.dirs == 1 ? "y" : "ies", tot, el, rate / 1e6, o->qps,
			o->qps == 1 ? "" : "s", names, c.resumed_bytes ? " (resumed " : "", c.resumed_bytes ? res : "",
			c.resumed_bytes ? " already there)" : "");
	}
	if (ret) {
		if (c.ch.fd > 0 && c.err[0])
			uc_chan_error(&c.ch, "%s", c.err);
		fprintf(stderr, "uvcp: %s\n", c.err);
	}
	uc_ep_close(&c.ep);
	if (fd >= 0)
		close(fd);
	return ret ? 1 : 0;
}

/* ------------------------------------------------------------------ command line */

static void usage(FILE *f)
{
	fprintf(f,
"usage: uvcp [options] SRC... HOST:DEST        copy files and trees to a uvcp server\n"
"       uvcp --serve --root DIR [options]      receive under DIR\n"
"\n"
"DEST is relative to the server's --root (\"\" or \".\" is the root itself).\n"
"Both sides:\n"
"  -p, --port N          side-channel TCP port (default %d)\n"
"  -d, --device NAME     RDMA device, as ibv_devices names it (repeat to stripe over\n"
"                        several); default the first (libuverbs: from UVERBS_DEVICES)\n"
"  -g, --gid-index N     GID index (default: the port's first RoCE v2 IPv4 GID)\n"
"  -t, --timeout S       give up when the peer shows no progress for S seconds (30)\n"
"Client:\n"
"  -q, --qps N           RC QPs in flight, over the devices in turn (default 4, max %d)\n"
"  -D, --depth N         chunks in flight per QP (default 8, max %d)\n"
"  -c, --chunk SIZE      chunk size, k/m suffix (default 1m, 4k..64m)\n"
"      --bwlimit RATE    at most RATE bytes/s (k/m/g suffix)\n"
"      --map             send files from a registered mapping of the file, window by\n"
"                        window, instead of reading them into the staging slots\n"
"      --no-pack         send every file of a tree on its own (default: files smaller\n"
"                        than a chunk travel packed, many to a transfer)\n"
"      --json            one JSON object on stdout\n"
"      --no-progress     no progress bar even on a terminal\n"
"  -Q, --quiet           no summary line\n"
"Server:\n"
"      --serve           be the server\n"
"  -r, --root DIR        where files go (required with --serve)\n"
"      --addr A          listen address (default 0.0.0.0)\n"
"      --once            exit after one client (status 1 if its copy failed)\n"
"  -h, --help            this text\n"
"      --version         version and build\n",
		UC_DEFAULT_PORT, UC_MAX_QPS, UC_MAX_DEPTH);
}

static int parse_u64(const char *s, uint64_t max, int suffix, uint64_t *out)
{
	if (!s || !*s || *s < '0' || *s > '9')
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	unsigned shift = 0;
	if (suffix && *end) {
		switch (*end) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		default: return -1;
		}
		end++;
	}
	if (*end || v > (max >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int bad(const char *fmt, const char *a)
{
	fprintf(stderr, "uvcp: ");
	fprintf(stderr, fmt, a);
	fprintf(stderr, "\n(uvcp --help for usage)\n");
	return 2;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);  /* a file size limit is an EFBIG error, not a death */
	struct opts o = { .port = UC_DEFAULT_PORT, .gid = -1, .qps = 4, .depth = 8, .chunk = 1u << 20,
			  .timeout_s = 30, .addr = "0.0.0.0" };
	enum { O_SERVE = 256, O_ADDR, O_ONCE, O_JSON, O_NOPROG, O_BW, O_VERSION, O_NOPACK, O_MAP };
	static const struct option lo[] = {
		{ "port", required_argument, NULL, 'p' }, { "device", required_argument, NULL, 'd' },
		{ "gid-index", required_argument, NULL, 'g' }, { "timeout", required_argument, NULL, 't' },
		{ "qps", required_argument, NULL, 'q' }, { "depth", required_argument, NULL, 'D' },
		{ "chunk", required_argument, NULL, 'c' }, { "bwlimit", required_argument, NULL, O_BW },
		{ "json", no_argument, NULL, O_JSON }, { "no-progress", no_argument, NULL, O_NOPROG },
		{ "quiet", no_argument, NULL, 'Q' }, { "serve", no_argument, NULL, O_SERVE },
		{ "root", required_argument, NULL, 'r' }, { "addr", required_argument, NULL, O_ADDR },
		{ "once", no_argument, NULL, O_ONCE }, { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION }, { "no-pack", no_argument, NULL, O_NOPACK },
		{ "map", no_argument, NULL, O_MAP },
		{ NULL, 0, NULL, 0 },
	};
	int opt, noprog = 0;
	uint64_t v;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":p:d:g:t:q:D:c:Qr:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (parse_u64(optarg, 65535, 0, &v) || !v)
				return bad("--port: '%.200s' is not a port (1..65535)", optarg);
			o.port = (int)v;
			break;
		case 'd':
			if (o.ndev == UC_MAX_DEVS)
				return bad("at most %s --device", "8");
			o.devs[o.ndev++] = optarg;
			break;
		case 'g':
			if (parse_u64(optarg, 255, 0, &v))
				return bad("--gid-index: '%.200s' is not an index (0..255)", optarg);
			o.gid = (int)v;
			break;
		case 't':
			if (parse_u64(optarg, 86400, 0, &v) || !v)
				return bad("--timeout: '%.200s' is not a number of seconds (1..86400)", optarg);
			o.timeout_s = (unsigned)v;
			break;
		case 'q':
			if (parse_u64(optarg, UC_MAX_QPS, 0, &v) || !v)
				return bad("--qps: '%.200s' is not a count (1..32)", optarg);
			o.qps = (unsigned)v;
			break;
		case 'D':
			if (parse_u64(optarg, UC_MAX_DEPTH, 0, &v) || !v)
				return bad("--depth: '%.200s' is not a count (1..64)", optarg);
			o.depth = (unsigned)v;
			break;
		case 'c':
			if (parse_u64(optarg, UC_MAX_CHUNK, 1, &v) || v < UC_MIN_CHUNK)
				return bad("--chunk: '%.200s' is not a size (4k..64m)", optarg);
			o.chunk = (unsigned)v;
			break;
		case O_BW:
			if (parse_u64(optarg, UINT64_MAX, 1, &v) || !v)
				return bad("--bwlimit: '%.200s' is not a rate in bytes/s", optarg);
			o.bwlimit = v;
			break;
		case O_JSON: o.json = 1; break;
		case O_NOPROG: noprog = 1; break;
		case O_NOPACK: o.no_pack = 1; break;
		case O_MAP: o.map = 1; break;
		case 'Q': o.quiet = 1; break;
		case O_SERVE: o.serve = 1; break;
		case 'r': o.root = optarg; break;
		case O_ADDR: o.addr = optarg; break;
		case O_ONCE: o.once = 1; break;
		case 'h':
			usage(stdout);
			return 0;
		case O_VERSION:
			printf("uvcp (uverbs) %s\nbuild: %s\n", uc_version, uc_build);
			return 0;
		case ':':
			return bad("option '%.200s' needs a value", argv[optind - 1]);
		default:
			return bad("unknown option '%.200s'", argv[optind - 1]);
		}
	}
	if (o.serve) {
		if (!o.root)
			return bad("--serve needs --root DIR%s", "");
		if (optind != argc)
			return bad("--serve takes no operands ('%.200s')", argv[optind]);
		return uc_serve(o.root, o.addr, o.port, o.devs, o.ndev, o.gid, o.once, o.timeout_s);
	}
	if (o.root || o.once)
		return bad("--root and --once go with --serve%s", "");
	if (argc - optind < 2)
		return bad("need SRC... HOST:DEST%s", "");
	const char *target = argv[argc - 1];
	const char *colon = strchr(target, ':');
	if (!colon || colon == target)
		return bad("the last operand must be HOST:DEST, not '%.200s'", target);
	char host[256];
	if ((size_t)(colon - target) >= sizeof(host))
		return bad("host name too long in '%.200s'", target);
	memcpy(host, target, (size_t)(colon - target));
	host[colon - target] = 0;
	o.progress = !noprog && !o.json && !o.quiet && isatty(2);
	return client(&o, argv + optind, argc - optind - 1, host, colon + 1);
}
