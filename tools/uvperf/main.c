/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvperf: RDMA latency and bandwidth over libuverbs (see uvperf.h for what is measured).
 *
 *   uvperf --server [--port P] [--device URI]              one side, waits for a client
 *   uvperf --client 127.0.0.1 [--port P] [--device URI] …   the other side, runs the tests
 *   uvperf --loopback [--device A --device B] …             both sides in this process
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hw/platform/errno.h"
#include "hw/platform/sock.h"
#include "tools/common/cli.h"
#include "tools/common/jsonw.h"
#include "tools/common/parse.h"
#include "tools/uvperf/run.h"

#ifndef UVPERF_BUILD
#define UVPERF_BUILD "unknown"
#endif
#ifndef UVPERF_COMPILER
#define UVPERF_COMPILER "unknown"
#endif

enum role { R_CLIENT, R_SERVER, R_LOOPBACK };

struct opts {
	enum role role;
	const char *addr;
	int port;
	const char *devices[2];
	int ndevices;
	int modes[2];
	int nmodes;
	int ops[UP_NOPS];
	int nops;
	uint32_t sizes[UP_MAX_SIZES];
	int nsizes;                 /* 0: the defaults, 4 KiB latency and 64 KiB bandwidth */
	uint64_t iters, warmup;
	int iters_set;
	unsigned depth, qps;
	int shared_cq;
	double duration;
	uint64_t bytes;
	int verify;
	const char *csv, *bw_csv;
	int json, quiet;
	unsigned timeout_ms;
	unsigned gid_index;
	unsigned sessions;
	unsigned idle_s;            /* server: drop a client quiet this long */
	uint32_t test_rkey_xor;
	int64_t corrupt;
	uint64_t seed;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: uvperf --server [--port P] [--addr A] [--device URI] [--sessions N] [--idle-timeout S]\n"
"       uvperf --client ADDR [options]      (ADDR of the server's side channel, e.g. 127.0.0.1)\n"
"       uvperf --loopback [--device URI --device URI] [options]\n"
"options (client and loopback):\n"
"  --mode lat|bw|lat,bw     latency (one WR at a time) and/or bandwidth (default lat)\n"
"  --op LIST                write,read,send (and for latency fadd,cswap) (default write)\n"
"  --size N | --sizes N,M.. | --sweep MIN:MAX   message sizes (powers of two for a sweep;\n"
"                           k, m, g: KiB, MiB, GiB; default 4k latency, 64k bandwidth)\n"
"  --iters N                measured messages (per QP for bandwidth; default 1000 / 2000)\n"
"  --warmup N               unmeasured messages first (default 100)\n"
"  --depth N --qps N        bandwidth: WRs outstanding per QP (default 64), QPs (default 4);\n"
"                           at depth 1 the figure is a message rate, not a bandwidth\n"
"  --per-qp-cq              bandwidth: one CQ per QP (default: one shared CQ)\n"
"  --duration S | --bytes N bandwidth: run each size S seconds, or N bytes in total\n"
"  --verify                 check every transferred byte (XXH3 over the side channel)\n"
"  --csv FILE               latency samples (ns: total, post, poll) with a header comment\n"
"  --bw-csv FILE            bandwidth results per size\n"
"  --json                   results as JSON on stdout instead of the table\n"
"  --timeout MS             longest wait for a completion (default 10000)\n"
"  --memfd                  buffers in shared memory (a memfd) instead of the heap: what a\n"
"                           device daemon that registers only shared memory needs (uvd -S)\n"
"  --gid-index N            source GID index (default 0)\n"
"server: --addr A to listen on (default 127.0.0.1), --sessions N clients one after another\n"
"  (default 1), --idle-timeout S: drop a client that sends nothing for S s (default 30)\n"
"  --quiet                  no progress bar (it is drawn only when stderr is a terminal)\n"
"devices: --device URI, else UVERBS_DEVICES (loopback: its first two, default emu:,emu:)\n"
"       uvperf --help | --version\n"
"exit: 0 ok; 1 a runtime error: a test failed (completion error, verification mismatch),\n"
"      set-up failed (no device, no server) or the output could not be written (one line\n"
"      on stderr names the cause); 2 a usage error\n");
}

static int add_size(struct opts *o, uint64_t v)
{
	if (!v || v > (1u << 30) || o->nsizes == UP_MAX_SIZES)
		return -1;
	o->sizes[o->nsizes++] = (uint32_t)v;
	return 0;
}

static int parse_list(char *s, int (*fn)(struct opts *, const char *), struct opts *o)
{
	for (char *save = NULL, *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (fn(o, tok))
			return -1;
	return 0;
}

static int add_mode(struct opts *o, const char *s)
{
	int m = !strcmp(s, "lat") || !strcmp(s, "latency") ? UP_LAT :
		!strcmp(s, "bw") || !strcmp(s, "bandwidth") ? UP_BW : -1;
	if (m < 0 || o->nmodes == 2)
		return -1;
	o->modes[o->nmodes++] = m;
	return 0;
}

static int add_op(struct opts *o, const char *s)
{
	int op = up_op_parse(s);
	if (op < 0 || o->nops == UP_NOPS)
		return -1;
	o->ops[o->nops++] = op;
	return 0;
}

static int add_size_str(struct opts *o, const char *s)
{
	uint64_t v;
	return uvt_parse_size(s, 1u << 30, &v) ? -1 : add_size(o, v);
}

/* ------------------------------------------------------------------ output */

/* The verified column: FAILED for a test that ended in an error, whatever was checked
 * before it. */
static const char *verdict(const struct up_result *r)
{
	return r->failed || r->verified < 0 ? "FAILED" : r->verified > 0 ? "yes" : "no";
}

/* Microseconds in a table cell, "-" for a figure that does not exist (failed test). */
static const char *cell(char *buf, double ns, int prec)
{
	if (isnan(ns))
		snprintf(buf, 16, "%8s", "-");
	else
		snprintf(buf, 16, "%8.*f", prec, ns / 1000.0);
	return buf;
}

static void print_table(FILE *f, const struct opts *o, struct up_client *c, struct up_result *res, int n)
{
	int lat = 0, bw = 0;
	for (int i = 0; i < n; i++)
		*(res[i].mode == UP_LAT ? &lat : &bw) += 1;
	unsigned mtu = 128u << c->remote[0].mtu;
	if ((uint32_t)c->ep.active_mtu < c->remote[0].mtu)
		mtu = 128u << c->ep.active_mtu;
	char uri[128];
	up_device_uri(0, uri, sizeof(uri));
	fprintf(f, "uvperf, %s: %s %s (%s, fw %s) -> %s %s (%s, fw %s)\n",
		o->role == R_LOOPBACK ? "one process, two devices" : "two processes",
		c->ep.name, uri, c->ep.model, c->ep.fw, c->peer.device, c->peer.uri, c->peer.model, c->peer.fw);
	fprintf(f, "RC, MTU %u, %s, build %s\n", mtu, o->verify ? "every byte verified (XXH3)" : "not verified",
		UVPERF_BUILD);
	if (lat) {
		fprintf(f, "\nlatency: post to completion (a full round trip), queue depth 1, microseconds\n");
		fprintf(f, "%-6s %7s %7s %8s %8s %8s %8s %8s %8s  %s\n", "op", "bytes", "samples", "min",
			"median", "p95", "p99", "p99.9", "max", "verified");
		for (int i = 0; i < n; i++) {
			const struct up_result *r = &res[i];
			if (r->mode != UP_LAT)
				continue;
			char b[6][16];
			fprintf(f, "%-6s %7u %7" PRIu64 " %s %s %s %s %s %s  %s\n", up_op_name(r->op), r->size,
				r->nsamples, cell(b[0], r->min, 2), cell(b[1], r->median, 2), cell(b[2], r->p95, 2),
				cell(b[3], r->p99, 2), cell(b[4], r->p999, 2), cell(b[5], r->max, 2), verdict(r));
		}
	}
	if (bw) {
		/* As ib_write_bw measures: `depth` WRs in flight on each of `qps` QPs.  At depth
		 * 1 the figure is one round trip per message, a message rate; its bytes/second
		 * would read as a throughput it is not, so no Gbit/s is printed for it. */
		fprintf(f, "\nbandwidth: bytes completed / time from first post to last completion, "
			   "with depth WRs in flight on each of qps QPs\n");
		fprintf(f, "%-6s %7s %4s %5s %10s %8s %9s %10s  %s\n", "op", "bytes", "qps", "depth", "messages",
			"seconds", "Gbit/s", "msg/s", "verified");
		int depth1 = 0;
		for (int i = 0; i < n; i++) {
			const struct up_result *r = &res[i];
			if (r->mode != UP_BW)
				continue;
			char g[16], m[16];
			if (r->failed || r->depth == 1 || isnan(r->gbit_s))
				snprintf(g, sizeof(g), "%9s", "-");
			else
				snprintf(g, sizeof(g), "%9.3f", r->gbit_s);
			if (r->failed || isnan(r->msg_s))
				snprintf(m, sizeof(m), "%10s", "-");
			else
				snprintf(m, sizeof(m), "%10.0f", r->msg_s);
			depth1 |= r->depth == 1 && !r->failed;
			fprintf(f, "%-6s %7u %4u %5u %10" PRIu64 " %8.3f %s %s  %s\n", up_op_name(r->op), r->size,
				r->qps, r->depth, r->messages, r->seconds, g, m, verdict(r));
		}
		if (depth1)
			fprintf(f, "depth 1: one message in flight, so msg/s is a message rate bound by the round "
				   "trip; for a bandwidth use --depth 64 or more\n");
	}
}

static void print_json(const struct opts *o, struct up_client *c, struct up_result *res, int n, const char *error)
{
	struct jw w;
	jw_init(&w, stdout);
	jw_obj(&w, NULL);
	jw_str(&w, "tool", "uvperf");
	jw_str(&w, "build", UVPERF_BUILD);
	jw_str(&w, "compiler", UVPERF_COMPILER);
	jw_u64(&w, "processes", o->role == R_LOOPBACK ? 1 : 2);
	jw_str(&w, "transport", "RC");
	jw_obj(&w, "device");
	jw_str(&w, "name", c->ep.name);
	jw_str(&w, "model", c->ep.model);
	jw_str(&w, "fw", c->ep.fw);
	jw_u64(&w, "part_id", c->ep.part_id);
	char uri[128];
	up_device_uri(0, uri, sizeof(uri));
	jw_str(&w, "uri", uri);
	jw_obj_end(&w);
	jw_obj(&w, "peer");
	jw_str(&w, "name", c->peer.device);
	jw_str(&w, "uri", c->peer.uri);
	jw_str(&w, "model", c->peer.model);
	jw_str(&w, "fw", c->peer.fw);
	jw_obj_end(&w);
	unsigned mtu = 128u << (c->remote[0].mtu < (uint32_t)c->ep.active_mtu ? c->remote[0].mtu : (uint32_t)c->ep.active_mtu);
	jw_u64(&w, "mtu", mtu);
	jw_bool(&w, "verify", o->verify);
	jw_arr(&w, "results");
	for (int i = 0; i < n; i++) {
		const struct up_result *r = &res[i];
		jw_obj(&w, NULL);
		jw_str(&w, "mode", r->mode == UP_LAT ? "latency" : "bandwidth");
		jw_str(&w, "op", up_op_name(r->op));
		jw_u64(&w, "size", r->size);
		jw_u64(&w, "qps", r->qps);
		jw_u64(&w, "depth", r->depth);
		jw_u64(&w, "warmup", r->warmup);
		if (r->mode == UP_LAT) {
			jw_u64(&w, "samples", r->nsamples);
			jw_dbl(&w, "min_ns", r->min);
			jw_dbl(&w, "median_ns", r->median);
			jw_dbl(&w, "p95_ns", r->p95);
			jw_dbl(&w, "p99_ns", r->p99);
			jw_dbl(&w, "p999_ns", r->p999);
			jw_dbl(&w, "max_ns", r->max);
			jw_dbl(&w, "post_median_ns", r->post_median);
			jw_dbl(&w, "poll_median_ns", r->poll_median);
		} else {
			jw_u64(&w, "messages", r->messages);
			jw_u64(&w, "bytes", r->bytes);
			jw_dbl(&w, "seconds", r->seconds);
			/* depth 1: a message rate only (see print_table) */
			if (r->depth == 1 || r->failed)
				jw_null(&w, "gbit_s");
			else
				jw_dbl(&w, "gbit_s", r->gbit_s);
			if (r->failed)
				jw_null(&w, "msg_s");
			else
				jw_dbl(&w, "msg_s", r->msg_s);
		}
		jw_bool(&w, "failed", r->failed);
		if (r->failed)
			jw_bool(&w, "verified", 0);
		else if (r->verified > 0)
			jw_bool(&w, "verified", 1);
		else if (r->verified < 0)
			jw_bool(&w, "verified", 0);
		else
			jw_null(&w, "verified");
		jw_u64(&w, "verified_bytes", r->verified_bytes);
		if (r->verified < 0 || r->failed)
			jw_str(&w, "verify_error", r->verify_text);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	if (error)
		jw_str(&w, "error", error);
	jw_obj_end(&w);
}

static void csv_header(FILE *f, const struct opts *o, struct up_client *c, const char *what)
{
	unsigned mtu = 128u << (c->remote[0].mtu < (uint32_t)c->ep.active_mtu ? c->remote[0].mtu : (uint32_t)c->ep.active_mtu);
	fprintf(f, "# uvperf %s\n", what);
	fprintf(f, "# build: %s\n# compiler: %s\n", UVPERF_BUILD, UVPERF_COMPILER);
	fprintf(f, "# device: %s (%s, fw %s)\n", c->ep.name, c->ep.model, c->ep.fw);
	char uri[128];
	up_device_uri(0, uri, sizeof(uri));
	fprintf(f, "# uri: %s\n", uri);
	fprintf(f, "# peer: %s %s (%s, fw %s)\n", c->peer.device, c->peer.uri, c->peer.model, c->peer.fw);
	fprintf(f, "# sizes:");
	for (int i = 0; i < o->nsizes; i++)
		fprintf(f, "%s%u", i ? "," : " ", o->sizes[i]);
	fprintf(f, "\n# samples: %" PRIu64 " per test\n", o->iters);
	fprintf(f, "# processes: %d\n# transport: RC\n# mtu: %u\n", o->role == R_LOOPBACK ? 1 : 2, mtu);
	fprintf(f, "# warmup: %" PRIu64 "\n# verify: %s\n", o->warmup, o->verify ? "xxh3" : "off");
}

/* Close an output file and say so when its bytes did not all reach it (a full disk,
 * /dev/full): a result that was not written is a failure, not exit 0. */
static int close_out(FILE *f, const char *name)
{
	int bad = ferror(f);
	int e = errno;
	if (fclose(f) && !bad) {
		bad = 1;
		e = errno;
	}
	if (bad)
		fprintf(stderr, "uvperf: cannot write %s: %s\n", name, strerror(e));
	return bad ? -1 : 0;
}

static void lat_rows(FILE *f, const struct up_result *r)
{
	for (uint64_t k = 0; k < r->nsamples; k++)
		fprintf(f, "%s,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", up_op_name(r->op), r->size, k,
			r->samples[k].total_ns, r->samples[k].post_ns, r->samples[k].poll_ns);
}

static void bw_row(FILE *f, const struct up_result *r)
{
	/* depth 1 or a failed test: no Gbit/s (an empty cell), as in the table */
	char g[32] = "", m[32] = "";
	if (!r->failed && r->depth != 1 && !isnan(r->gbit_s))
		snprintf(g, sizeof(g), "%.4f", r->gbit_s);
	if (!r->failed && !isnan(r->msg_s))
		snprintf(m, sizeof(m), "%.1f", r->msg_s);
	fprintf(f, "%s,%u,%u,%u,%" PRIu64 ",%" PRIu64 ",%.6f,%s,%s,%s\n", up_op_name(r->op), r->size,
		r->qps, r->depth, r->messages, r->bytes, r->seconds, g, m, verdict(r));
}

/* One CSV file (nothing when name is NULL): csv_header saying what it holds, the
 * column lines, then rows() of every result of that mode.  0 or -1 (said). */
static int write_csv_of(const char *name, const struct opts *o, struct up_client *c, const char *what,
			const char *columns, enum up_mode mode, void (*rows)(FILE *, const struct up_result *),
			const struct up_result *res, int n)
{
	if (!name)
		return 0;
	FILE *f = fopen(name, "w");
	if (!f) {
		fprintf(stderr, "uvperf: %s: %s\n", name, strerror(errno));
		return -1;
	}
	csv_header(f, o, c, what);
	fputs(columns, f);
	for (int i = 0; i < n; i++)
		if (res[i].mode == mode)
			rows(f, &res[i]);
	return close_out(f, name);
}

static int write_csv(const struct opts *o, struct up_client *c, struct up_result *res, int n)
{
	if (write_csv_of(o->csv, o, c, "latency samples",
			 "# total_ns: from before ibv_post_send to the ibv_poll_cq that returned the completion\n"
			 "# post_ns: the ibv_post_send call; poll_ns: polling until the completion\n"
			 "op,size,iter,total_ns,post_ns,poll_ns\n",
			 UP_LAT, lat_rows, res, n))
		return -1;
	return write_csv_of(o->bw_csv, o, c, "bandwidth",
			    "op,size,qps,depth,messages,bytes,seconds,gbit_s,msg_s,verified\n",
			    UP_BW, bw_row, res, n);
}

/* Output that did not reach stdout (a full disk, /dev/full) is an error, exit 2. */
static int flush_stdout(int rc)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "uvperf: cannot write to stdout: %s\n", strerror(errno));
		return 1;
	}
	return rc;
}

/* ------------------------------------------------------------------ roles */

struct srv_arg {
	int fd, index;
	int rc;
	char err[512];
};

static void *loopback_server(void *p)
{
	struct srv_arg *a = p;
	a->rc = up_server_session(a->fd, a->index, 1, a->err, sizeof(a->err));
	close(a->fd);
	return NULL;
}

static int run_server(const struct opts *o)
{
	char err[512];
	int lfd = up_chan_listen(o->addr, o->port, err, sizeof(err));
	if (lfd < 0) {
		fprintf(stderr, "uvperf server: %s\n", err);
		return 1;
	}
	if (!o->quiet)
		fprintf(stderr, "uvperf server: listening on %s:%d\n", o->addr, o->port);
	int rc = 0;
	for (unsigned s = 0; s < o->sessions;) {
		int fd = up_chan_accept(lfd, err, sizeof(err));
		if (fd < 0) {
			fprintf(stderr, "uvperf server: %s\n", err);
			rc = 1;
			break;
		}
		/* One client at a time: one that sends nothing for idle_s is dropped, so a
		 * stray or stuck connection cannot keep the next client waiting for ever. */
		up_chan_set_timeout(fd, o->idle_s * 1000u);
		int r = up_server_session(fd, 0, 1, err, sizeof(err));
		close(fd);
		if (r == -ENOTCONN) {
			/* never said HELLO: not a session, the next client gets its turn */
			fprintf(stderr, "uvperf server: dropped a connection that started no session: %s\n", err);
			continue;
		}
		if (r) {
			fprintf(stderr, "uvperf server: %s\n", err);
			rc = r == -EBADMSG ? 1 : (rc ? rc : 1);
		}
		s++;
	}
	close(lfd);
	return rc;
}

/* The sizes a mode runs: the asked ones, else 4 KiB for latency and, as ib_write_bw
 * is usually run, 64 KiB for bandwidth. */
static const uint32_t lat_default_size = 4096, bw_default_size = 65536;

static int mode_sizes(const struct opts *o, int mode, const uint32_t **sizes)
{
	if (o->nsizes) {
		*sizes = o->sizes;
		return o->nsizes;
	}
	*sizes = mode == UP_LAT ? &lat_default_size : &bw_default_size;
	return 1;
}

static int run_client(struct opts *o)
{
	char err[512] = "";
	struct up_client c;
	memset(&c, 0, sizeof(c));
	c.timeout_ms = o->timeout_ms;
	c.progress = !o->quiet && isatty(2);
	c.duration_s = o->duration;
	c.verify = o->verify;
	c.test_rkey_xor = o->test_rkey_xor;

	/* The session's shape: one buffer slot per message (verify) or per outstanding WR. */
	uint32_t maxsz = 8;
	for (int m = 0; m < o->nmodes; m++) {
		const uint32_t *sz;
		int nsz = mode_sizes(o, o->modes[m], &sz);
		for (int i = 0; i < nsz; i++)
			maxsz = sz[i] > maxsz ? sz[i] : maxsz;
	}
	uint64_t msgs = o->warmup + o->iters;
	uint64_t slots = o->verify ? (msgs < 1024 ? msgs : 1024) : (o->depth > 1 ? o->depth : 1);
	uint64_t bufsize = maxsz * (slots ? slots : 1);
	uint64_t cap = o->verify ? (8u << 20) : (64u << 20);
	if (bufsize > cap)
		bufsize = cap / maxsz * maxsz;
	if (bufsize < maxsz)
		bufsize = maxsz;
	unsigned depth = o->depth;
	unsigned rx_depth = depth * 2 > 64 ? depth * 2 : 64;
	if (rx_depth > 1024)
		rx_depth = 1024;
	struct up_hello h = {
		.magic = UP_MAGIC, .version = UP_VERSION, .nqps = o->qps, .shared_cq = (uint32_t)o->shared_cq,
		.depth = depth, .rx_depth = rx_depth, .bufsize = bufsize, .verify = (uint32_t)o->verify,
		.gid_index = o->gid_index,
	};

	pthread_t th;
	struct srv_arg sa = { .fd = -1, .index = 1 };
	int have_thread = 0;
	if (o->role == R_LOOPBACK) {
		int sv[2];
		if (plat_socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
			perror("uvperf: socketpair");
			return 1;
		}
		c.fd = sv[0];
		sa.fd = sv[1];
	} else {
		c.fd = up_chan_connect(o->addr, o->port, 10000, err, sizeof(err));
		if (c.fd < 0) {
			fprintf(stderr, "uvperf: %s\n", err);
			return 1;
		}
		/* A server that stops answering fails the run instead of hanging it: it
		 * answers within its own completion wait (10 s) after each round. */
		up_chan_set_timeout(c.fd, o->timeout_ms + 30000u);
	}
	int rc = up_ep_create(&c.ep, 0, o->qps, o->shared_cq, depth, rx_depth, bufsize, o->gid_index, err, sizeof(err));
	if (!rc && o->role == R_LOOPBACK) {
		if (pthread_create(&th, NULL, loopback_server, &sa)) {
			snprintf(err, sizeof(err), "cannot start the loopback server thread");
			rc = -EAGAIN;
		} else {
			have_thread = 1;
		}
	}
	if (!rc)
		rc = up_client_start(&c, &h, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "uvperf: set-up: %s\n", err);
		close(c.fd);
		if (have_thread)
			pthread_join(th, NULL);
		up_ep_destroy(&c.ep);
		return 1;
	}

	struct up_result res[2 * UP_NOPS * UP_MAX_SIZES];
	int nres = 0, failed = 0;
	const char *error = NULL;
	for (int m = 0; m < o->nmodes && !failed; m++) {
		for (int k = 0; k < o->nops && !failed; k++) {
			int op = o->ops[k];
			if (o->modes[m] == UP_BW && up_is_atomic((enum up_op)op))
				continue;    /* atomics are measured for latency only */
			const uint32_t *sizes;
			int nsizes = mode_sizes(o, o->modes[m], &sizes);
			for (int s = 0; s < nsizes && !failed; s++) {
				if (up_is_atomic((enum up_op)op) && s > 0)
					break;   /* 8 bytes, whatever the sizes asked */
				struct up_test t = {
					.op = (uint32_t)op, .mode = (uint32_t)o->modes[m], .size = sizes[s],
					.depth = o->modes[m] == UP_LAT ? 1 : depth,
					.iters = o->iters, .warmup = o->warmup,
					.seed = o->seed + (uint64_t)nres * 0x9e3779b9ull,
					.corrupt = o->corrupt, .verify = (uint32_t)o->verify,
				};
				if (o->modes[m] == UP_BW && o->bytes) {
					uint64_t per = o->bytes / sizes[s] / o->qps;
					t.iters = per ? per : 1;
				}
				/* 2,000 a QP: at the default 4 QPs of 64 KiB, 512 MiB a test (tens of
				 * ms on a 100 Gbit/s link, seconds on the emulator) */
				if (o->modes[m] == UP_BW && !o->iters_set && !o->bytes)
					t.iters = 2000;
				struct up_result *r = &res[nres++];
				rc = up_client_test(&c, &t, r, err, sizeof(err));
				if (rc) {
					r->failed = 1;
					r->verified = -1;
					fprintf(stderr, "uvperf: %s %s %u B: %s\n", o->modes[m] == UP_LAT ? "latency" : "bandwidth",
						up_op_name((enum up_op)op), t.size, err);
					error = err;
					failed = 1;
				}
			}
		}
	}
	if (!failed)
		up_client_stop(&c);
	close(c.fd);
	if (have_thread) {
		pthread_join(th, NULL);
		if (sa.rc && !failed) {
			fprintf(stderr, "uvperf: loopback server: %s\n", sa.err);
			failed = 1;
		}
	}
	if (o->json)
		print_json(o, &c, res, nres, error);
	else
		print_table(stdout, o, &c, res, nres);
	if (write_csv(o, &c, res, nres))
		failed = failed ? failed : 1;
	if (flush_stdout(0))
		failed = failed ? failed : 1;
	for (int i = 0; i < nres; i++)
		free(res[i].samples);
	up_ep_destroy(&c.ep);
	return failed;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.role = R_CLIENT, .addr = "127.0.0.1", .port = UP_DEFAULT_PORT, .iters = 1000, .warmup = 100,
		.depth = 64, .qps = 4, .shared_cq = 1, .timeout_ms = 10000, .sessions = 1, .corrupt = -1,
		.idle_s = 30,
		.seed = 0x75766572627300ull,
	};
	int role_set = 0;
	enum { O_SERVER = 256, O_CLIENT, O_LOOPBACK, O_PORT, O_ADDR, O_DEVICE, O_MODE, O_OP, O_SIZE, O_SIZES,
	       O_SWEEP, O_ITERS, O_WARMUP, O_DEPTH, O_QPS, O_PERQPCQ, O_SHAREDCQ, O_DURATION, O_BYTES,
	       O_VERIFY, O_CSV, O_BWCSV, O_JSON, O_QUIET, O_TIMEOUT, O_GID, O_SESSIONS, O_SEED, O_CORRUPT, O_IDLE, O_BADRKEY, O_MEMFD };
	static const struct option lo[] = {
		{ "server", no_argument, NULL, O_SERVER }, { "client", required_argument, NULL, O_CLIENT },
		{ "loopback", no_argument, NULL, O_LOOPBACK }, { "port", required_argument, NULL, O_PORT },
		{ "addr", required_argument, NULL, O_ADDR }, { "device", required_argument, NULL, O_DEVICE },
		{ "mode", required_argument, NULL, O_MODE }, { "op", required_argument, NULL, O_OP },
		{ "size", required_argument, NULL, O_SIZE }, { "sizes", required_argument, NULL, O_SIZES },
		{ "sweep", required_argument, NULL, O_SWEEP }, { "iters", required_argument, NULL, O_ITERS },
		{ "warmup", required_argument, NULL, O_WARMUP }, { "depth", required_argument, NULL, O_DEPTH },
		{ "qps", required_argument, NULL, O_QPS }, { "per-qp-cq", no_argument, NULL, O_PERQPCQ },
		{ "shared-cq", no_argument, NULL, O_SHAREDCQ }, { "duration", required_argument, NULL, O_DURATION },
		{ "bytes", required_argument, NULL, O_BYTES }, { "verify", no_argument, NULL, O_VERIFY },
		{ "csv", required_argument, NULL, O_CSV }, { "bw-csv", required_argument, NULL, O_BWCSV },
		{ "json", no_argument, NULL, O_JSON }, { "quiet", no_argument, NULL, O_QUIET },
		{ "timeout", required_argument, NULL, O_TIMEOUT }, { "gid-index", required_argument, NULL, O_GID },
		{ "sessions", required_argument, NULL, O_SESSIONS }, { "seed", required_argument, NULL, O_SEED },
		/* Hidden: flip one payload byte at the source after it was hashed (tests prove
		 * that --verify fails). */
		{ "test-corrupt-byte", required_argument, NULL, O_CORRUPT },
		{ "idle-timeout", required_argument, NULL, O_IDLE },
		/* Hidden: use a wrong rkey, so every RDMA op ends in a completion error (tests
		 * prove that such a run is reported as FAILED). */
		{ "test-bad-rkey", no_argument, NULL, O_BADRKEY },
		{ "memfd", no_argument, NULL, O_MEMFD },
		{ "help", no_argument, NULL, 'h' }, { "version", no_argument, NULL, 'V' }, { NULL, 0, NULL, 0 },
	};
	int ch;
	uint64_t v;
	unsigned u = 0;
	char *arg;
	opterr = 0;    /* errors as one line each (tools/common/cli.h) */
	while ((ch = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		int bad = 0;
		switch (ch) {
		case O_SERVER: o.role = R_SERVER; role_set++; break;
		case O_CLIENT: o.role = R_CLIENT; o.addr = optarg; role_set++; break;
		case O_LOOPBACK: o.role = R_LOOPBACK; role_set++; break;
		case O_PORT: bad = uvt_parse_unsigned(optarg, 1, 65535, &u); o.port = (int)u; break;
		case O_ADDR: o.addr = optarg; break;
		case O_DEVICE:
			bad = o.ndevices == 2;
			if (!bad)
				o.devices[o.ndevices++] = optarg;
			break;
		case O_MODE: arg = strdup(optarg); bad = !arg || parse_list(arg, add_mode, &o); free(arg); break;
		case O_OP: arg = strdup(optarg); bad = !arg || parse_list(arg, add_op, &o); free(arg); break;
		case O_SIZE: bad = add_size_str(&o, optarg); break;
		case O_SIZES: arg = strdup(optarg); bad = !arg || parse_list(arg, add_size_str, &o); free(arg); break;
		case O_SWEEP: {
			char *colon = strchr(optarg, ':');
			uint64_t lo_, hi;
			bad = !colon;
			if (!bad) {
				*colon = 0;
				bad = uvt_parse_size(optarg, 1u << 30, &lo_) || uvt_parse_size(colon + 1, 1u << 30, &hi) ||
				      !lo_ || lo_ > hi;
				for (uint64_t s = lo_; !bad && s <= hi; s *= 2)
					bad = add_size(&o, s);
			}
			break;
		}
		case O_ITERS: bad = uvt_parse_size(optarg, 100000000, &o.iters) || !o.iters; o.iters_set = 1; break;
		case O_WARMUP: bad = uvt_parse_size(optarg, 100000000, &o.warmup); break;
		case O_DEPTH: bad = uvt_parse_unsigned(optarg, 1, 32768, &o.depth); break;
		case O_QPS: bad = uvt_parse_unsigned(optarg, 1, UP_MAX_QPS, &o.qps); break;
		case O_PERQPCQ: o.shared_cq = 0; break;
		case O_SHAREDCQ: o.shared_cq = 1; break;
		case O_DURATION: bad = uvt_parse_double(optarg, 1e-6, 86400, &o.duration); break;
		/* up to 2^50 bytes (1 PiB): a message count per QP that fits every counter */
		case O_BYTES: bad = uvt_parse_size(optarg, 1ull << 50, &o.bytes) || !o.bytes; break;
		case O_VERIFY: o.verify = 1; break;
		case O_CSV: o.csv = optarg; break;
		case O_BWCSV: o.bw_csv = optarg; break;
		case O_JSON: o.json = 1; break;
		case O_QUIET: o.quiet = 1; break;
		case O_TIMEOUT: bad = uvt_parse_unsigned(optarg, 1, 3600000, &o.timeout_ms); break;
		case O_GID: bad = uvt_parse_unsigned(optarg, 0, 255, &o.gid_index); break;
		case O_SESSIONS: bad = uvt_parse_unsigned(optarg, 1, 1000000, &o.sessions); break;
		case O_SEED: bad = uvt_parse_u64(optarg, UINT64_MAX, &o.seed); break;
		case O_CORRUPT: bad = uvt_parse_u64(optarg, INT64_MAX, &v); o.corrupt = (int64_t)v; break;
		case O_IDLE: bad = uvt_parse_unsigned(optarg, 1, 86400, &o.idle_s); break;
		case O_BADRKEY: o.test_rkey_xor = 0xff; break;
		case O_MEMFD: up_ep_use_shared_memory(true); break;
		case 'h': usage(stdout); return flush_stdout(0);
		case 'V': return uvt_version("uvperf");
		default: return uvt_getopt_error("uvperf", ch, argv);
		}
		if (bad) {
			return uvt_usage_error("uvperf", "bad value for --%s: '%s'", lo[ch - O_SERVER].name, optarg ? optarg : "");
		}
	}
	if (optind < argc) {
		return uvt_usage_error("uvperf", "unexpected argument '%s' (options only)", argv[optind]);
	}
	if (role_set > 1) {
		return uvt_usage_error("uvperf", "say only one of --server, --client ADDR and --loopback");
	}
	if (!role_set) {
		return uvt_usage_error("uvperf", "say --server, --client ADDR or --loopback");
	}
	if (!o.nmodes)
		o.modes[o.nmodes++] = UP_LAT;
	if (!o.nops)
		o.ops[o.nops++] = UP_WRITE;
	if (o.role != R_LOOPBACK && o.ndevices > 1) {
		return uvt_usage_error("uvperf", "two --device only with --loopback");
	}
	/* libuverbs opens what UVERBS_DEVICES names: a --device becomes that list. */
	char list[1024];
	if (o.ndevices == 2) {
		snprintf(list, sizeof(list), "%s,%s", o.devices[0], o.devices[1]);
		setenv("UVERBS_DEVICES", list, 1);
	} else if (o.ndevices == 1 && o.role != R_LOOPBACK) {
		setenv("UVERBS_DEVICES", o.devices[0], 1);
	} else if (o.role == R_LOOPBACK) {
		const char *e = getenv("UVERBS_DEVICES");
		if (o.ndevices == 1) {
			snprintf(list, sizeof(list), "%s,emu:", o.devices[0]);
			setenv("UVERBS_DEVICES", list, 1);
		} else if (!e || !*e) {
			setenv("UVERBS_DEVICES", "emu:,emu:", 1);
		}
	}
	if (o.role == R_SERVER)
		return run_server(&o);
	return run_client(&o);
}
