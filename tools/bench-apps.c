/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uv_bench_apps: the application patterns of issue 32's gates (docs/benchmarks.md,
 * "Application gates"), through the verbs API of the library it is linked with, beside
 * the raw loopback UDP floor of the same run.  tools/bench-apps runs it with Debian's
 * perftest and UCX tools and prints the gate table.  Prints figures; asserts nothing.
 *
 *   uv_bench_apps udp      [--iters N]  UDP floor, two processes busy-polling: half round
 *                                       trips of 2 B, 4 KiB, 1 KiB and 64 KiB (sixteen
 *                                       4 KiB datagrams each way), a request/response of
 *                                       the RPC pattern's sizes, a 2 B half round trip
 *                                       whose receiver is woken (udp_woken_half_rtt),
 *                                       the 2 B and 4 KiB ping-pongs and the RPC with every message
 *                                       acknowledged (udp_exchange, acked), and a 4 KiB
 *                                       stream
 *   uv_bench_apps allreduce [--iters N] [--max B] two ranks, JACCL's message pattern: UC QPs, every
 *                                       message a SEND into a posted receive, chunks of
 *                                       at most 1 MiB, 1 KiB to 4 MiB of floats summed
 *   uv_bench_apps rpc      [--iters N]  llama.cpp's RPC pattern over RC: a command is
 *                                       three SENDs (command byte, 8-byte size, payload),
 *                                       each awaited before the next; then a reply
 *   uv_bench_apps open     [--iters N]  ibv_open_device of an emulated device, an empty
 *                                       ibv_poll_cq, and an idle opened device's CPU use
 *
 * Each line printed is "name value [value...]" (microseconds, MB/s, ns), read by
 * tools/bench-apps.  Both ranks are processes of their own, each with its own emulated
 * NIC (UVERBS_DEVICES=emu:ip=127.92.N.1x, N from BENCH_APPS_NET (73), then
 * BENCH_APPS_EMU_OPTS, set before the device list is read).  Linked
 * as uv_bench_apps (libuverbs) and uv_bench_apps_librdma (the librdma name: Apple's UC
 * delivery semantics, as JACCL gets them).  Every wait is bounded. */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "hw/platform/sock.h"

#define WAIT_NS 10000000000ull
#define RPC_PAYLOAD 1024u         /* the command's third SEND */
#define RPC_REPLY 64u
#define AR_CHUNK (1u << 20)       /* all-reduce messages: at most this many bytes */
#define AR_MAX (4u << 20)
#define AR_DEPTH 8u               /* receives posted ahead, sends in flight */

static const char *prog = "uv_bench_apps";
static unsigned iters = 1000;
static uint32_t ar_max = AR_MAX;   /* --max: the largest all-reduce (to study one size) */

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* median and 99th percentile of n samples (ns) times scale, in microseconds */
static void stats(uint64_t *v, unsigned n, double scale, double *med, double *p99)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	*med = (double)v[n / 2] * scale / 1000.0;
	*p99 = (double)v[(size_t)n * 99 / 100] * scale / 1000.0;
}

/* ------------------------------------------------------------ two processes */

static int ctl;        /* socketpair to the other rank */
static int rank;       /* 0: measures and prints; 1: the peer */

static void xfer(void *out, const void *in, size_t n)
{
	if (in && write(ctl, in, n) != (ssize_t)n)
		die("side channel write: %s", strerror(errno));
	for (size_t got = 0; out && got < n;) {
		struct pollfd p = { .fd = ctl, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 60000) <= 0)
			die("side channel: the other rank did not answer within 60 s");
		r = read(ctl, (uint8_t *)out + got, n - got);
		if (r <= 0)
			die("side channel: the other rank is gone");
		got += (size_t)r;
	}
}

static void barrier(void)
{
	char c = 0;

	xfer(&c, &c, 1);
}

static pid_t fork_ranks(void)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		die("socketpair: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	rank = pid == 0;
	ctl = sv[rank ? 1 : 0];
	close(sv[rank ? 0 : 1]);
	return pid;
}

static void join_ranks(pid_t pid)
{
	int st = 0;

	if (rank)
		exit(0);
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		die("the peer rank ended with status 0x%x", st);
}

static uint32_t rank_ip(int r)
{
	const char *b = getenv("BENCH_APPS_NET");   /* third octet, so runs do not collide */
	unsigned net = b ? (unsigned)atoi(b) & 255 : 73;

	return (127u << 24) | (92u << 16) | (net << 8) | (10u + (unsigned)r);
}

/* ------------------------------------------------------------ UDP floor */

static int udp_sock(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(rank_ip(rank)) };
	struct sockaddr_in b = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(rank_ip(!rank)) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), big = 4 << 20;
	uint16_t port, peer;
	socklen_t al = sizeof(a);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || getsockname(fd, (struct sockaddr *)&a, &al) < 0)
		die("UDP socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	port = ntohs(a.sin_port);
	xfer(&peer, &port, sizeof(port));
	b.sin_port = htons(peer);
	if (connect(fd, (struct sockaddr *)&b, sizeof(b)) < 0)
		die("UDP connect: %s", strerror(errno));
	return fd;
}

static void udp_send(int fd, const void *p, size_t n)
{
	while (send(fd, p, n, 0) < 0)
		if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR)
			die("UDP send: %s", strerror(errno));
}

/* busy-poll one datagram; its length, or -1 after `ns` */
static ssize_t udp_recv(int fd, void *p, size_t n, uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	for (unsigned k = 1;; k++) {
		ssize_t r = recv(fd, p, n, MSG_DONTWAIT);

		if (r >= 0)
			return r;
		if (errno != EAGAIN && errno != EINTR)
			die("UDP recv: %s", strerror(errno));
		if (k % 1024 == 0 && now_ns() > end)
			return -1;
	}
}

/* An acknowledgement, as an RC transport sends one for every message: a 20-byte
 * datagram, the UDP payload of a RoCE ACK (BTH, AETH, ICRC; IBTA 9.7.5.1.3).  One of
 * another length where an acknowledgement is due ends the run. */
#define UDP_ACK_LEN 20u

static void udp_recv_ack(int fd, uint8_t *buf, size_t n)
{
	ssize_t r = udp_recv(fd, buf, n, WAIT_NS);

	if (r < 0)
		die("UDP: no acknowledgement within 10 s");
	if (r != UDP_ACK_LEN)
		die("UDP: a datagram of %zd bytes where an acknowledgement (%u) was due", r, UDP_ACK_LEN);
}

/* `parts` datagrams of the given sizes one way, `back` bytes back, `n` times; rank 0
 * times each exchange.  A lost datagram (UDP) ends the run.
 * acked: the same exchange as an RC transport puts it on the wire, every message
 * answered by an acknowledgement that its sender awaits, as perftest's latency tests and
 * the RPC client await each completion.  rank 0 sends each part and awaits its
 * acknowledgement, then awaits `back`; rank 1 acknowledges each part, sends `back` right
 * after the last acknowledgement, and awaits the acknowledgement of `back`, which rank 0
 * sends first thing in the next exchange (as the peer's answer follows the ACK of it).
 * Not a gate: the floor of an RC device that sends every ACK as a datagram of its own,
 * as this one, rxe and a ConnectX do.  A device that carried an ACK and the next packet
 * in one coalesced datagram could go below it (docs/benchmarks.md, "2026-12-07, 12:50
 * UTC": tried, not kept). */
static void udp_exchange(int fd, const uint32_t *parts, unsigned nparts, uint32_t back, bool acked, uint64_t *t,
			 unsigned n)
{
	static uint8_t buf[65536];

	barrier();
	for (unsigned i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		if (rank == 0) {
			if (acked && i)
				udp_send(fd, buf, UDP_ACK_LEN);   /* the previous answer's */
			for (unsigned k = 0; k < nparts; k++) {
				udp_send(fd, buf, parts[k]);
				if (acked)
					udp_recv_ack(fd, buf, sizeof(buf));
			}
			if (udp_recv(fd, buf, sizeof(buf), WAIT_NS) < 0)
				die("UDP: no answer within 10 s");
			t[i] = now_ns() - t0;
		} else {
			for (unsigned k = 0; k < nparts; k++) {
				if (udp_recv(fd, buf, sizeof(buf), WAIT_NS) < 0)
					die("UDP: nothing within 10 s");
				if (acked)
					udp_send(fd, buf, UDP_ACK_LEN);
			}
			udp_send(fd, buf, back);
			if (acked && i + 1 < n)
				udp_recv_ack(fd, buf, sizeof(buf));
		}
	}
	barrier();
}

/* The floor of a device that must be woken: each rank's main thread spins on memory, as
 * perftest's WRITE latency test spins on its buffer, while a receiving thread at the
 * lowest SCHED_FIFO priority (the emulated NIC's device thread, hw/emu/rx_thread.c)
 * sleeps in recv, stores the arrival's flag and sleeps again; the spinner sees the flag
 * and sends the next datagram itself, as the application's doorbell does.  What this
 * costs over the busy-polling floor is one wake-up of a thread that preempts a spinner
 * on each side: no emulated device that shares its CPUs with spinning applications can
 * go below it. */
struct woken {
	int fd;
	unsigned n;
	_Atomic unsigned arrived;
};

static void *woken_receiver(void *arg)
{
	struct woken *w = arg;
	uint8_t buf[64];
	struct sched_param sp = { .sched_priority = 1 };

	(void)pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);   /* as the device thread: best effort */
	for (unsigned i = 0; i < w->n; i++) {
		if (recv(w->fd, buf, sizeof(buf), 0) < 0) {
			if (errno == EINTR) {
				i--;
				continue;
			}
			die("UDP recv: %s", strerror(errno));
		}
		atomic_store_explicit(&w->arrived, i + 1, memory_order_release);
	}
	return NULL;
}

static void udp_woken_half_rtt(int fd, uint64_t *t, unsigned n)
{
	struct woken w = { .fd = fd, .n = n };
	struct timeval tv = { .tv_sec = 10 };
	pthread_t th;
	uint8_t buf[2] = { 0 };
	double med, p99;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));   /* a lost datagram ends the run */
	if (pthread_create(&th, NULL, woken_receiver, &w))
		die("pthread_create failed");
	barrier();
	for (unsigned i = 0; i < n; i++) {
		uint64_t t0 = now_ns(), end = t0 + WAIT_NS;

		if (rank == 0)
			udp_send(fd, buf, sizeof(buf));
		for (unsigned k = 1; atomic_load_explicit(&w.arrived, memory_order_acquire) < i + 1; k++)
			if (k % 4096 == 0 && now_ns() > end)
				die("UDP (woken receiver): nothing within 10 s");
		if (rank == 0)
			t[i] = now_ns() - t0;
		else
			udp_send(fd, buf, sizeof(buf));
	}
	pthread_join(th, NULL);
	tv.tv_sec = 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	barrier();
	if (!rank) {
		stats(t, n, 0.5, &med, &p99);
		printf("udp_half_rtt_woken %u %.2f %.2f\n", 2u, med, p99);
	}
}

/* The sender's half of a stream of `count` 4 KiB datagrams: one send each, or (segmented)
 * UDP_STREAM_SEGS of them a sendmsg that the kernel cuts (UDP GSO, hw/platform/sock.h),
 * as the emulated NIC's sends to loopback are since 2026-12-06 (hw/emu/roce_sock.c).
 * False where the system cannot segment. */
#define UDP_STREAM_SEGS 15   /* 15 x 4096 B: a UDP datagram holds at most 65507 */

static bool udp_stream_send(int fd, unsigned count, bool segmented)
{
	static uint8_t buf[UDP_STREAM_SEGS * 4096];
	union {
		struct cmsghdr h;
		char b[PLAT_UDP_SEGMENT_SPACE];
	} c;

	if (!segmented) {
		for (unsigned i = 0; i < count; i++)
			udp_send(fd, buf, 4096);
		return true;
	}
	for (unsigned i = 0; i < count; i += UDP_STREAM_SEGS) {
		unsigned n = count - i < UDP_STREAM_SEGS ? count - i : UDP_STREAM_SEGS;
		struct iovec iov = { .iov_base = buf, .iov_len = (size_t)n * 4096 };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.b, .msg_controllen = sizeof(c.b) };

		memset(&c, 0, sizeof(c));
		if (!plat_udp_segment_cmsg(CMSG_FIRSTHDR(&m), 4096))
			return false;
		while (sendmsg(fd, &m, 0) < 0)
			if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR)
				return false;   /* refused: no figure */
	}
	return true;
}

/* Stream: 4 KiB datagrams, goodput at the busy-polling receiver ("udp_stream", the
 * gates' floor; "udp_stream_segmented", printed beside it: 0 where not possible). */
static void udp_stream(int fd, bool segmented)
{
	static uint8_t buf[4096];
	unsigned count = 20000, got = 0;
	uint64_t t0 = 0, t1 = 0;
	bool sent;

	if (segmented && !plat_udp_segment_supported(fd))
		return;   /* both ranks, one system: no figure */
	barrier();
	if (rank == 0) {
		sent = udp_stream_send(fd, count, segmented);
		xfer(&got, NULL, sizeof(got));
		xfer(&t1, NULL, sizeof(t1));
		printf("udp_stream%s %u %.1f %u\n", segmented ? "_segmented" : "", 4096,
		       sent && t1 ? (double)(got - 1) * 4096 * 1000.0 / (double)t1 : 0.0,
		       segmented ? UDP_STREAM_SEGS : 1);
	} else {
		while (got < count && udp_recv(fd, buf, sizeof(buf), got ? 300000000ull : WAIT_NS) > 0) {
			if (!got)
				t0 = now_ns();
			got++;
			t1 = now_ns() - t0;
		}
		xfer(NULL, &got, sizeof(got));
		xfer(NULL, &t1, sizeof(t1));
	}
}

static void run_udp(void)
{
	pid_t pid = fork_ranks();
	int fd = udp_sock();
	uint64_t *t = calloc(iters, sizeof(*t));
	static const uint32_t sizes[] = { 2, 1024, 4096 };
	uint32_t big[16], rpc[3] = { 1, 8, RPC_PAYLOAD };
	double med, p99;

	if (!t)
		die("out of memory");
	for (unsigned k = 0; k < 16; k++)
		big[k] = 4096;
	for (unsigned s = 0; s < 3; s++) {
		udp_exchange(fd, &sizes[s], 1, sizes[s], false, t, iters);
		if (!rank) {
			stats(t, iters, 0.5, &med, &p99);
			printf("udp_half_rtt %u %.2f %.2f\n", sizes[s], med, p99);
		}
	}
	/* 64 KiB each way as sixteen 4 KiB datagrams (a UDP datagram holds at most 65507 B) */
	udp_exchange(fd, big, 16, 4096, false, t, iters / 4 + 10);
	/* ... the way back is one datagram: time both directions as two one-way bursts */
	if (!rank) {
		stats(t, iters / 4 + 10, 1.0, &med, &p99);
		printf("udp_oneway_64k_plus_4k %.2f %.2f\n", med, p99);
	}
	udp_exchange(fd, rpc, 3, RPC_REPLY, false, t, iters);
	if (!rank) {
		stats(t, iters, 1.0, &med, &p99);
		printf("udp_rpc_rtt %u %.2f %.2f\n", RPC_PAYLOAD, med, p99);
	}
	udp_stream(fd, false);
	udp_stream(fd, true);
	/* not gates: after the gates' floors, so that a lost datagram here costs none of them */
	udp_woken_half_rtt(fd, t, iters);
	for (unsigned s = 0; s < 3; s += 2) {   /* 2 B and 4 KiB, ib_write_lat's */
		udp_exchange(fd, &sizes[s], 1, sizes[s], true, t, iters);
		if (!rank) {
			stats(t, iters, 0.5, &med, &p99);
			printf("udp_acked_half_rtt %u %.2f %.2f\n", sizes[s], med, p99);
		}
	}
	udp_exchange(fd, rpc, 3, RPC_REPLY, true, t, iters);
	if (!rank) {
		stats(t, iters, 1.0, &med, &p99);
		printf("udp_acked_rpc_rtt %u %.2f %.2f\n", RPC_PAYLOAD, med, p99);
	}
	close(fd);
	free(t);
	join_ranks(pid);
}

/* ------------------------------------------------------------ verbs */

struct ep {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t len;
};

struct ep_info {
	uint32_t qpn, psn, rkey;
	uint64_t addr;
	uint8_t gid[16];
};

static struct ibv_context *open_first(void)
{
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);
	struct ibv_context *c;

	if (!l || n < 1)
		die("no RDMA device (is UVERBS_DEVICES set?)");
	c = ibv_open_device(l[0]);
	if (!c)
		die("ibv_open_device(%s): %s", ibv_get_device_name(l[0]), strerror(errno));
	ibv_free_device_list(l);
	return c;
}

/* BENCH_APPS_EMU_OPTS (",hold_us=4200", tools/bench-apps --emu-opts) ends the URI. */
static void use_own_nic(void)
{
	const char *more = getenv("BENCH_APPS_EMU_OPTS");
	char uri[256];
	uint32_t ip = rank_ip(rank);

	if (!more)
		more = "";
	if ((size_t)snprintf(uri, sizeof(uri), "emu:ip=%u.%u.%u.%u%s%s", ip >> 24, (ip >> 16) & 255,
			     (ip >> 8) & 255, ip & 255, *more && *more != ',' ? "," : "", more) >= sizeof(uri))
		die("BENCH_APPS_EMU_OPTS is too long");
	setenv("UVERBS_DEVICES", uri, 1);
}

static void ep_open(struct ep *e, enum ibv_qp_type type, size_t len, unsigned depth)
{
	struct ibv_qp_init_attr ia = { .qp_type = type,
				       .cap = { .max_send_wr = depth, .max_recv_wr = depth, .max_send_sge = 1,
						.max_recv_sge = 1, .max_inline_data = 64 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE };
	struct ep_info mine, theirs;
	union ibv_gid gid;

	use_own_nic();
	e->ctx = open_first();
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = e->pd ? ibv_create_cq(e->ctx, (int)(4 * depth), NULL, NULL, 0) : NULL;
	ia.send_cq = ia.recv_cq = e->cq;
	e->qp = e->cq ? ibv_create_qp(e->pd, &ia) : NULL;
	e->len = len;
	e->buf = aligned_alloc(4096, len);
	e->mr = e->buf && e->qp ? ibv_reg_mr(e->pd, e->buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)
				: NULL;
	if (!e->mr || ibv_query_gid(e->ctx, 1, 0, &gid))
		die("setting up the endpoint: %s", strerror(errno));
	memset(e->buf, 0, len);
	if (ibv_modify_qp(e->qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("INIT: %s", strerror(errno));
	mine = (struct ep_info){ .qpn = e->qp->qp_num, .psn = rank ? 0x2000u : 0x1000u, .rkey = e->mr->rkey,
				 .addr = (uintptr_t)e->buf };
	memcpy(mine.gid, gid.raw, 16);
	xfer(&theirs, &mine, sizeof(mine));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_4096;
	a.dest_qp_num = theirs.qpn;
	a.rq_psn = theirs.psn;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	memcpy(a.ah_attr.grh.dgid.raw, theirs.gid, 16);
	if (ibv_modify_qp(e->qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  (type == IBV_QPT_RC ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0)))
		die("RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = mine.psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	if (ibv_modify_qp(e->qp, &a,
			  IBV_QP_STATE | IBV_QP_SQ_PSN |
				  (type == IBV_QPT_RC ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
								IBV_QP_MAX_QP_RD_ATOMIC
						      : 0)))
		die("RTS: %s", strerror(errno));
	barrier();   /* both in RTS before anything is sent */
}

static void ep_close(struct ep *e)
{
	barrier();
	ibv_destroy_qp(e->qp);
	ibv_dereg_mr(e->mr);
	ibv_destroy_cq(e->cq);
	ibv_dealloc_pd(e->pd);
	ibv_close_device(e->ctx);
	free(e->buf);
}

static void post_recv(struct ep *e, uint64_t id, size_t off, uint32_t len)
{
	struct ibv_sge sg = { .addr = (uintptr_t)(e->buf + off), .length = len, .lkey = e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1 }, *bad;

	if (ibv_post_recv(e->qp, &wr, &bad))
		die("ibv_post_recv: %s", strerror(errno));
}

static void post_send(struct ep *e, uint64_t id, size_t off, uint32_t len)
{
	struct ibv_sge sg = { .addr = (uintptr_t)(e->buf + off), .length = len, .lkey = e->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED | (len <= 64 ? IBV_SEND_INLINE : 0) },
			   *bad;

	if (ibv_post_send(e->qp, &wr, &bad))
		die("ibv_post_send: %s", strerror(errno));
}

/* Completions seen so far, by kind. */
static uint64_t nsends, nrecvs;

/* Poll until at least `sends` send and `recvs` receive completions were seen; dies
 * after 10 s. */
static void wait_for(struct ep *e, uint64_t sends, uint64_t recvs)
{
	uint64_t end = now_ns() + WAIT_NS;

	for (unsigned k = 1; nsends < sends || nrecvs < recvs; k++) {
		struct ibv_wc wc[8];
		int n = ibv_poll_cq(e->cq, 8, wc);

		if (n < 0)
			die("ibv_poll_cq: %d", n);
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				die("completion %s (wr_id %" PRIu64 ")", ibv_wc_status_str(wc[i].status), wc[i].wr_id);
			if (wc[i].opcode & IBV_WC_RECV)
				nrecvs++;
			else
				nsends++;
		}
		if (k % 4096 == 0 && now_ns() > end)
			die("waited 10 s for completions: sends %" PRIu64 "/%" PRIu64 ", receives %" PRIu64 "/%" PRIu64,
			    nsends, sends, nrecvs, recvs);
	}
}

/* ------------------------------------------------------------ RPC pattern */

static void run_rpc(void)
{
	pid_t pid = fork_ranks();
	struct ep e;
	uint64_t *t = calloc(iters, sizeof(*t));
	unsigned warm = iters / 10 + 10;
	uint64_t want_s = 0, want_r = 0;   /* completions expected so far */
	static const uint32_t part[3] = { 1, 8, RPC_PAYLOAD };
	double med, p99;

	if (!t)
		die("out of memory");
	ep_open(&e, IBV_QPT_RC, 64 << 10, 64);
	for (unsigned i = 0; i < 8; i++)
		post_recv(&e, i, 8192 + (size_t)(i % 8) * 4096, 4096);
	barrier();
	for (unsigned i = 0; i < warm + iters; i++) {
		uint64_t t0 = now_ns();

		if (rank == 0) {
			/* the client: each part awaited (rpc_client::send_msg, then the reply) */
			for (unsigned k = 0; k < 3; k++) {
				post_send(&e, 100 + k, 0, part[k]);
				wait_for(&e, ++want_s, want_r);
			}
			wait_for(&e, want_s, ++want_r);
			post_recv(&e, i, 8192 + (size_t)(i % 8) * 4096, 4096);
			if (i >= warm)
				t[i - warm] = now_ns() - t0;
		} else {
			/* the server: the whole command, then the reply */
			for (unsigned k = 0; k < 3; k++) {
				wait_for(&e, want_s, ++want_r);
				post_recv(&e, i * 3 + k, 8192 + (size_t)((i * 3 + k) % 8) * 4096, 4096);
			}
			post_send(&e, 200, 0, RPC_REPLY);
			wait_for(&e, ++want_s, want_r);
		}
	}
	if (!rank) {
		stats(t, iters, 1.0, &med, &p99);
		printf("rpc_rtt %u %.2f %.2f\n", RPC_PAYLOAD, med, p99);
	}
	ep_close(&e);
	free(t);
	join_ranks(pid);
}

/* ------------------------------------------------------------ all-reduce */

/* Two ranks: each posts its receives, sends its whole vector to the other as SENDs of
 * at most AR_CHUNK bytes (JACCL's SEND/RECV over UC), waits for the peer's, and adds it
 * in -- back to back, no barrier between all-reduces: a SEND that meets no receive yet
 * waits for one under the librdma name (Apple's UC delivery semantics), as JACCL relies
 * on.  The time of each all-reduce, on rank 0. */
static void run_allreduce(void)
{
	pid_t pid = fork_ranks();
	struct ep e;
	size_t half = AR_MAX;   /* buf: [0, half) my vector, [half, 2 half) the peer's */
	uint64_t *t = calloc(iters, sizeof(*t));

	if (!t)
		die("out of memory");
	ep_open(&e, IBV_QPT_UC, 2 * half, 4 * AR_DEPTH);
	for (uint32_t size = 1024; size <= ar_max; size *= 4) {
		uint32_t chunk = size < AR_CHUNK ? size : AR_CHUNK, nchunks = size / chunk;
		unsigned n = size >= (1u << 20) ? iters / 20 + 5 : size >= (64u << 10) ? iters / 4 + 5 : iters;
		unsigned warm = n / 10 + 2;
		double med, p99;

		barrier();
		for (unsigned i = 0; i < warm + n; i++) {
			float *mine = (float *)e.buf, *theirs = (float *)(e.buf + half);
			uint64_t s0 = nsends, r0 = nrecvs, t0 = now_ns();
			uint32_t posted = 0, sent = 0;

			for (uint32_t k = 0; k < size / 4; k++)
				mine[k] = (float)(rank + 1);
			for (; posted < nchunks && posted < AR_DEPTH; posted++)
				post_recv(&e, posted, half + (size_t)posted * chunk, chunk);
			while (nrecvs - r0 < nchunks || nsends - s0 < nchunks) {
				while (sent < nchunks && sent - (nsends - s0) < AR_DEPTH) {
					post_send(&e, sent, (size_t)sent * chunk, chunk);
					sent++;
				}
				/* one more completion of either kind still missing */
				wait_for(&e, nrecvs - r0 < nchunks ? 0 : nsends + 1, nrecvs - r0 < nchunks ? nrecvs + 1 : 0);
				for (; posted < nchunks && posted < nrecvs - r0 + AR_DEPTH; posted++)
					post_recv(&e, posted, half + (size_t)posted * chunk, chunk);
			}
			for (uint32_t k = 0; k < size / 4; k++)
				mine[k] += theirs[k];
			if (i >= warm)
				t[i - warm] = now_ns() - t0;
			if (mine[0] != 3.0f || mine[size / 4 - 1] != 3.0f)
				die("all-reduce of %u B: %g, not 3", size, (double)mine[size / 4 - 1]);
		}
		if (!rank) {
			stats(t, n, 1.0, &med, &p99);
			printf("allreduce %u %.2f %.2f %.1f\n", size, med, p99, (double)size / med);
		}
	}
	ep_close(&e);
	free(t);
	join_ranks(pid);
}

/* ------------------------------------------------------------ open, empty poll, idle */

static uint64_t thread_switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_nvcsw + ru.ru_nivcsw);
}

static void run_open(void)
{
	unsigned n = iters < 20 ? iters : 20;
	uint64_t *t = calloc(n > 1000 ? n : 1000, sizeof(*t));
	struct ibv_context *c;
	struct ibv_wc wc;
	double med, p99;

	if (!t)
		die("out of memory");
	rank = 0;
	use_own_nic();
	c = open_first();   /* the first open also makes the process's device list */
	ibv_close_device(c);
	for (unsigned i = 0; i < n; i++) {
		int k = 0;
		struct ibv_device **l = ibv_get_device_list(&k);
		uint64_t t0;

		if (!l || k < 1)
			die("no RDMA device");
		t0 = now_ns();
		c = ibv_open_device(l[0]);
		t[i] = now_ns() - t0;
		if (!c)
			die("ibv_open_device: %s", strerror(errno));
		ibv_close_device(c);
		ibv_free_device_list(l);
	}
	stats(t, n, 1.0, &med, &p99);
	printf("open_device_ms %.2f %.2f\n", med / 1000.0, p99 / 1000.0);

	c = open_first();
	struct ibv_pd *pd = ibv_alloc_pd(c);
	struct ibv_cq *cq = pd ? ibv_create_cq(c, 64, NULL, NULL, 0) : NULL;

	if (!cq)
		die("ibv_create_cq: %s", strerror(errno));
	/* an empty poll: 1000 batches of 1000; ns per poll over all of them (the mean: the
	 * one poll in EMU_ASSIST_EVERY that makes a system call counts), then the median
	 * batch's */
	{
		uint64_t total = 0;

		for (unsigned b = 0; b < 1000; b++) {
			uint64_t t0 = now_ns();

			for (unsigned i = 0; i < 1000; i++)
				if (ibv_poll_cq(cq, 1, &wc) != 0)
					die("an empty CQ returned a completion");
			t[b] = now_ns() - t0;
			total += t[b];
		}
		stats(t, 1000, 1.0, &med, &p99);   /* microseconds per 1000 polls = ns per poll */
		printf("empty_poll_ns %.1f %.1f\n", (double)total / 1e6, med);
	}

	/* an idle opened device (a PD, a CQ, nothing posted): the process's CPU over 2 s */
	{
		struct timespec c0, c1;
		uint64_t sw0 = thread_switches(), w0 = now_ns();

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
		sleep(2);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
		double cpu = (double)(c1.tv_sec - c0.tv_sec) * 1e9 + (double)(c1.tv_nsec - c0.tv_nsec);
		printf("idle_cpu_pct %.3f %" PRIu64 "\n", 100.0 * cpu / (double)(now_ns() - w0),
		       thread_switches() - sw0);
	}
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(c);
	free(t);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		die("usage: uv_bench_apps udp|allreduce|rpc|open [--iters N] [--max BYTES (allreduce)]");
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--max") && i + 1 < argc) {
			unsigned long m = strtoul(argv[++i], NULL, 0);

			if (m < 1024 || m > AR_MAX)
				die("--max must be 1024 to %u bytes", AR_MAX);
			ar_max = (uint32_t)m;
		}
		else
			die("unknown option '%s'", argv[i]);
	}
	if (iters < 100)
		die("--iters must be at least 100");
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "udp"))
		run_udp();
	else if (!strcmp(argv[1], "allreduce"))
		run_allreduce();
	else if (!strcmp(argv[1], "rpc"))
		run_rpc();
	else if (!strcmp(argv[1], "open"))
		run_open();
	else
		die("unknown test '%s'", argv[1]);
	return 0;
}
