/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uv_bench_e2e: end-to-end latency and bandwidth between two emulated ConnectX NICs in
 * two processes (docs/benchmarks.md), each figure beside the raw loopback UDP
 * figure measured in the same run between the same two addresses, reported as ratios.
 * Prints figures; asserts nothing (timing on a shared machine is not a test).
 *
 *   uv_bench_e2e [--iters N] [--bw-iters N] [--mtu 1024|4096] [--warmup N] [--yield]
 *                [--copy guarded|syscall] [--csv FILE]
 *
 * --copy syscall opens both NICs as "emu:copy=syscall" (hw/emu/README.md): the device
 * copies registered memory with process_vm_readv/writev instead of the default guarded
 * memcpy, so one build measures both.
 *
 * --csv writes the raw samples of the gate's latency pairs -- RDMA WRITE ping-pong and
 * the UDP ping-pong it is held against, half round trips, both sizes -- as a uvperf
 * latency CSV (ops WRITE and UDP), so that tools/uvplot draws both on one CDF.
 *
 * The process forks; each side opens its own emulated NIC ("emu:", 127.0.0.N) through
 * the real driver and creates an RC QP; QPN, PSN, rkey and buffer address go over a
 * socketpair, which also sequences the tests.  The posting and polling are the driver's
 * data path (mx5_post_send / mx5_poll_cq, what libuverbs calls).  Every wait is bounded.
 *
 * Tests, in the order ib_write_lat / ib_read_lat / ib_send_lat / ib_write_bw measure:
 *  - RDMA WRITE ping-pong, 8 B (inline) and 4 KiB, as perftest's run_iter_lat_write
 *    does it: each side spins on the last byte of its buffer for the peer's WRITE,
 *    posts its own signalled WRITE, and polls the send CQ for its completion; half the
 *    round trip;
 *  - RDMA READ, 8 B and 4 KiB: post a READ, spin on poll_cq; the whole operation;
 *  - SEND ping-pong, 8 B (inline) and 4 KiB: each side polls its CQ for the peer's
 *    SEND, reposts the receive and answers; half the round trip, as ib_send_lat;
 *  - RDMA WRITE bandwidth as ib_write_bw measures it: 64 KiB messages, BW_QPS RC QPs,
 *    BW_DEPTH messages in flight in all;
 * and the baselines, on UDP sockets bound to the same two addresses:
 *  - UDP ping-pong of the same sizes, both receivers busy-polling (recv MSG_DONTWAIT);
 *  - UDP stream of path-MTU-sized datagrams, goodput counted by a busy-polling receiver;
 *  - for reference, not as a target: UDP ping-pong with blocking receives, the price of
 *    one thread wake-up per hop (the emulated NIC's device thread blocks in poll());
 *  - and the floor of this architecture: UDP "hand-off" ping-pong, where the application
 *    thread spins on memory and a second thread, blocked in poll() with the device
 *    thread's scheduling (SCHED_FIFO when allowed), receives each datagram and stores
 *    it there: the emulated NIC's shape with no NIC in it.
 * Latencies: median and 99th percentile over --iters round trips after --warmup.
 */
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hw/platform/sock.h"
#include "hw/platform/thread.h"
#include "tools/bench-nic.h"
#include "tools/common/parse.h"

#define REGION (1u << 20)
#define RBUF_OFF 0u             /* where the peer writes (ping-pong, bandwidth) */
#define SBUF_OFF (512u << 10)   /* what we send; READ target */
#define BW_MSG (64u << 10)
#define BW_QPS 4u               /* QPs the bandwidth run spreads its messages over */
#define BW_DEPTH 64u            /* messages in flight, all QPs together */
#define LAT_QP 0                /* the QP of the latency tests */
#define RECV_DEPTH 32u          /* receives kept posted on the latency QP (SEND test) */
#ifndef SIG_EVERY
#define SIG_EVERY 16u
#endif
#define WAIT_NS 5000000000ull

struct cmd {
	char op;                /* 'W' write ping-pong, 'R' read, 'P' SEND ping-pong, 'B' bandwidth,
				 * 'U' UDP ping-pong,
				 * 'V' UDP ping-pong with blocking receives,
				 * 'H' UDP hand-off ping-pong (a blocked receiving thread),
				 * 'S' UDP stream, 'Q' quit */
	uint32_t size, iters;
};

struct reply {
	int32_t status;
	uint64_t n, bytes, t_first, t_last;
	uint64_t app_cpu_ns, dev_cpu_ns;   /* the replying side's CPU time so far: its
					    * application thread, its NIC's device thread */
};

struct side {
	struct bn_nic nic;
	struct bn_qp qps[BW_QPS]; /* qps[LAT_QP] carries the latency tests */
	uint8_t *mem;
	uint32_t lkey, rkey;
	struct bn_peer me, peer;
	int ctl;                /* side channel */
	int udp;                /* baseline socket, connected to the peer's */
	uint64_t posted;        /* WRs posted (every SIG_EVERY-th signalled) */
	uint64_t send_cqes;     /* send completions reaped (SEND ping-pong) */
	uint64_t recv_cqes;     /* receive completions reaped */
};

static void xwrite(int fd, const void *p, size_t n)
{
	if (write(fd, p, n) != (ssize_t)n)
		bn_die("side channel write: %s", strerror(errno));
}

static void xread(int fd, void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&pfd, 1, 60000) <= 0)
			bn_die("side channel: the other process did not answer within 60 s");
		r = read(fd, (uint8_t *)p + got, n - got);
		if (r <= 0)
			bn_die("side channel read: %s", r == 0 ? "the other process is gone" : strerror(errno));
		got += (size_t)r;
	}
}

/* Reap what completed (non-blocking); dies on an error completion. */
static void drain(struct side *s)
{
	struct ibv_wc wc[16];
	int n = mx5_poll_cq(s->nic.cqr, 16, wc);

	if (n < 0)
		bn_die("poll_cq: %d", n);
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS)
			bn_die("completion status %d (vendor 0x%x)", wc[i].status, wc[i].vendor_err);
		if (wc[i].opcode & IBV_WC_RECV) {
			s->recv_cqes++;
			if (bn_post_recv(&s->qps[LAT_QP], 0, s->mem + RBUF_OFF, SBUF_OFF - RBUF_OFF, s->lkey))
				bn_die("post_recv failed");
		} else {
			s->send_cqes++;
		}
	}
}

/* A spin bounded in time: wait_expired() is called once a turn and turns true WAIT_NS
 * after the 4096th turn (the clock is read every 4096 turns only, to keep a turn cheap). */
struct wait_bound {
	uint64_t end;
	unsigned k;
};

static int wait_expired(struct wait_bound *w)
{
	if (++w->k % 4096 != 0)
		return 0;
	if (!w->end) {
		w->end = bn_now_ns() + WAIT_NS;
		return 0;
	}
	return bn_now_ns() > w->end;
}

/* Poll (bounded) until `*count` reaches `want`: the CQ is one for sends and receives. */
static void drain_until(struct side *s, const uint64_t *count, uint64_t want, const char *what)
{
	struct wait_bound w = { 0, 0 };

	while (*count < want) {
		drain(s);
		if (wait_expired(&w))
			bn_die("%s: no completion within 5 s", what);
	}
}

/* Post one WR; every SIG_EVERY-th is signalled so the ring is retired without a CQE per
 * WR (as perftest does); a full ring is waited out. */
static void post_on(struct side *s, unsigned q, enum ibv_wr_opcode op, uint32_t off, uint32_t len, uint64_t raddr,
		    int force_sig)
{
	unsigned flags = 0;
	uint64_t end = 0;
	int rc;

	if (force_sig || s->posted % SIG_EVERY == SIG_EVERY - 1)
		flags |= IBV_SEND_SIGNALED;
	if ((op == IBV_WR_RDMA_WRITE || op == IBV_WR_SEND) && len <= 64)
		flags |= IBV_SEND_INLINE;
	while ((rc = bn_post(&s->qps[q], op, s->posted, s->mem + off, len, s->lkey, raddr, s->peer.rkey, flags)) ==
	       -ENOMEM) {
		if (!end)
			end = bn_now_ns() + WAIT_NS;
		else if (bn_now_ns() > end)
			bn_die("send queue stayed full for 5 s");
		drain(s);
	}
	if (rc)
		bn_die("post_send: %d", rc);
	s->posted++;
}

static void post(struct side *s, enum ibv_wr_opcode op, uint32_t off, uint32_t len, uint64_t raddr, int force_sig)
{
	post_on(s, LAT_QP, op, off, len, raddr, force_sig);
}

/* --yield: spinning threads call sched_yield() between looks, so that the NIC's device
 * thread (woken by an arrival) gets a CPU at once instead of waiting for the scheduler
 * to preempt a spinner -- with two CPUs and two spinning processes it otherwise waits
 * milliseconds. */
static int spin_yield;

static void spin_byte(volatile uint8_t *p, uint8_t want, const char *what)
{
	struct wait_bound w = { 0, 0 };

	while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != want) {
		if (spin_yield)
			sched_yield();
		if (wait_expired(&w))
			bn_die("%s: the peer's data did not arrive within 5 s", what);
	}
}

/* Spin on poll_cq for one completion (bounded), as ib_read_lat does. */
static void wait_cqe(struct side *s, struct ibv_wc *wc)
{
	struct wait_bound w = { 0, 0 };
	int n;

	while ((n = mx5_poll_cq(s->nic.cqr, 1, wc)) == 0) {
		if (spin_yield)
			sched_yield();
		if (wait_expired(&w))
			bn_die("no completion within 5 s");
	}
	if (n < 0 || wc->status != IBV_WC_SUCCESS)
		bn_die("poll_cq %d, status %d", n, n > 0 ? (int)wc->status : -1);
}

static uint8_t tag(uint32_t i)
{
	return (uint8_t)(i % 250u + 1u);
}

/* ---------------------------------------------------------------- UDP baseline */

static int udp_open(uint32_t ip, uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(ip) };
	socklen_t al = sizeof(a);
	int fd = plat_socket(AF_INET, SOCK_DGRAM, 0), big = 4 << 20;

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || getsockname(fd, (struct sockaddr *)&a, &al) < 0)
		bn_die("UDP socket on %u.%u.%u.%u: %s", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255,
		       strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	*port = ntohs(a.sin_port);
	return fd;
}

static void udp_connect(int fd, uint32_t ip, uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(ip) };

	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		bn_die("UDP connect: %s", strerror(errno));
}

/* Busy-poll one datagram (MSG_DONTWAIT spin); returns its length. */
static ssize_t udp_spin_recv(int fd, void *buf, size_t len, uint64_t deadline_ns)
{
	unsigned k = 0;

	for (;;) {
		ssize_t r = recv(fd, buf, len, MSG_DONTWAIT);

		if (r >= 0)
			return r;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			bn_die("UDP recv: %s", strerror(errno));
		if (spin_yield)
			sched_yield();
		if (++k % 1024 == 0 && bn_now_ns() > deadline_ns)
			return -1;
	}
}

/* One datagram with a blocking receive (poll() then recv()): the thread sleeps and is
 * woken by the arrival, as the emulated NIC's device thread is. */
static ssize_t udp_block_recv(int fd, void *buf, size_t len)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (poll(&pfd, 1, (int)(WAIT_NS / 1000000u)) <= 0)
		return -1;
	return recv(fd, buf, len, 0);
}

static void udp_send(int fd, const void *buf, size_t len)
{
	while (send(fd, buf, len, 0) < 0) {
		if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR)
			bn_die("UDP send: %s", strerror(errno));
	}
}

/* The hand-off receiver: blocks in poll()/recv() like the device thread, with its
 * scheduling policy, and publishes each datagram's sequence number for a spinner. */
struct handoff {
	int fd;
	uint32_t count;
	pthread_t thr;
	uint32_t seen;          /* sequence number of the last datagram (atomic) */
	int fifo;               /* 1: the thread got SCHED_FIFO */
};

static void *handoff_main(void *arg)
{
	struct handoff *h = arg;
	static uint8_t buf[65536];

	h->fifo = plat_thread_set_realtime(1) == 0;
	for (uint32_t i = 0; i < h->count; i++) {
		uint32_t seq;
		ssize_t n = udp_block_recv(h->fd, buf, sizeof(buf));

		if (n < (ssize_t)sizeof(seq))
			break;
		memcpy(&seq, buf, sizeof(seq));
		__atomic_store_n(&h->seen, seq, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void handoff_start(struct handoff *h, int fd, uint32_t count)
{
	h->fd = fd;
	h->count = count;
	h->seen = 0;
	if (pthread_create(&h->thr, NULL, handoff_main, h))
		bn_die("pthread_create failed");
}

static void handoff_wait(struct handoff *h, uint32_t seq, const char *what)
{
	uint64_t deadline = bn_now_ns() + WAIT_NS;
	unsigned k = 0;

	while (__atomic_load_n(&h->seen, __ATOMIC_ACQUIRE) != seq) {
		if (spin_yield)
			sched_yield();
		if (++k % 1024 == 0 && bn_now_ns() > deadline)
			bn_die("%s: nothing within 5 s", what);
	}
}

/* ---------------------------------------------------------------- the passive side */

/* CPU time used so far by the calling (application) thread and by this side's NIC's
 * device thread, in ns (0 where the system cannot tell). */
static void cpu_now(struct side *s, uint64_t *app, uint64_t *dev)
{
	unsigned long long a = 0;
	struct emu_tp_counters c;

	(void)plat_thread_cpu_ns(pthread_self(), &a);
	emu_tp_counters(s->nic.emu, &c);
	*app = a;
	*dev = c.device_thread_cpu_ns;
}

static void server(struct side *s)
{
	static uint8_t ubuf[65536];

	for (;;) {
		struct cmd c;
		struct reply r;

		memset(&r, 0, sizeof(r));
		xread(s->ctl, &c, sizeof(c));
		if (c.op == 'Q')
			return;
		memset(s->mem + RBUF_OFF, 0, SBUF_OFF - RBUF_OFF);
		cpu_now(s, &r.app_cpu_ns, &r.dev_cpu_ns);
		xwrite(s->ctl, &r, sizeof(r));   /* ready */
		switch (c.op) {
		case 'W':
			for (uint32_t i = 0; i < c.iters; i++) {
				uint64_t want = s->send_cqes + 1;

				spin_byte(s->mem + RBUF_OFF + c.size - 1, tag(i), "WRITE ping-pong (server)");
				s->mem[SBUF_OFF + c.size - 1] = tag(i);
				post(s, IBV_WR_RDMA_WRITE, SBUF_OFF, c.size, s->peer.addr + RBUF_OFF, 1);
				drain_until(s, &s->send_cqes, want, "WRITE ping-pong (server)");
			}
			break;
		case 'P': {
			uint64_t base = s->recv_cqes;

			for (uint32_t i = 0; i < c.iters; i++) {
				drain_until(s, &s->recv_cqes, base + i + 1, "SEND ping-pong (server)");
				post(s, IBV_WR_SEND, SBUF_OFF, c.size, 0, 1);
			}
			break;
		}
		case 'U':
		case 'V':
			for (uint32_t i = 0; i < c.iters; i++) {
				ssize_t n = c.op == 'U' ? udp_spin_recv(s->udp, ubuf, sizeof(ubuf), bn_now_ns() + WAIT_NS)
							: udp_block_recv(s->udp, ubuf, sizeof(ubuf));

				if (n < 0)
					bn_die("UDP ping-pong (server): nothing within 5 s");
				udp_send(s->udp, ubuf, (size_t)n);
			}
			break;
		case 'H': {
			struct handoff h;

			memset(ubuf, 0, c.size);
			handoff_start(&h, s->udp, c.iters);
			for (uint32_t i = 1; i <= c.iters; i++) {
				handoff_wait(&h, i, "UDP hand-off ping-pong (server)");
				memcpy(ubuf, &i, sizeof(i));
				udp_send(s->udp, ubuf, c.size);
			}
			pthread_join(h.thr, NULL);
			break;
		}
		case 'S': {
			uint64_t last = bn_now_ns();

			while (r.n < c.iters) {
				ssize_t n = udp_spin_recv(s->udp, ubuf, sizeof(ubuf), last + 300000000ull);

				if (n < 0)
					break;   /* the rest was dropped: 300 ms of silence */
				last = bn_now_ns();
				if (!r.n)
					r.t_first = last;
				r.t_last = last;
				r.n++;
				r.bytes += (uint64_t)n;
			}
			break;
		}
		default:   /* 'R', 'B': the responder answers by itself; nothing to do here */
			break;
		}
		drain(s);
		xread(s->ctl, &c, sizeof(c));    /* client finished */
		cpu_now(s, &r.app_cpu_ns, &r.dev_cpu_ns);
		xwrite(s->ctl, &r, sizeof(r));
	}
}

/* ---------------------------------------------------------------- the measuring side */

/* Where the CPU time of the last test went, ns: each side's application thread and
 * its NIC's device thread, between start() and finish(), with the wall time. */
struct cpu_use {
	uint64_t wall, app, dev, peer_app, peer_dev;
};
static struct cpu_use cpu_at_start, cpu_last;

static void cpu_mark(struct side *s, const struct reply *r, struct cpu_use *m)
{
	m->wall = bn_now_ns();
	cpu_now(s, &m->app, &m->dev);
	m->peer_app = r->app_cpu_ns;
	m->peer_dev = r->dev_cpu_ns;
}

static void start(struct side *s, char op, uint32_t size, uint32_t iters)
{
	struct cmd c = { .op = op, .size = size, .iters = iters };
	struct reply r;

	/* completions of the previous test still on their way (a last ACK) are reaped first */
	usleep(2000);
	drain(s);
	memset(s->mem + RBUF_OFF, 0, SBUF_OFF - RBUF_OFF);
	xwrite(s->ctl, &c, sizeof(c));
	xread(s->ctl, &r, sizeof(r));
	cpu_mark(s, &r, &cpu_at_start);
}

static void finish(struct side *s, struct reply *r)
{
	struct cmd c = { .op = '.' };
	struct cpu_use e;

	xwrite(s->ctl, &c, sizeof(c));
	xread(s->ctl, r, sizeof(*r));
	cpu_mark(s, r, &e);
	cpu_last = (struct cpu_use){ e.wall - cpu_at_start.wall, e.app - cpu_at_start.app, e.dev - cpu_at_start.dev,
				     e.peer_app - cpu_at_start.peer_app, e.peer_dev - cpu_at_start.peer_dev };
}

/* One line: where a test's CPU went, per unit (a 64 KiB message's worth of bytes), in us,
 * and each thread's share of the wall time (100% = one CPU kept busy). */
static void cpu_row(const char *what, const struct cpu_use *u, double units)
{
	const double us = 1000.0 * units;
	const double w = u->wall ? (double)u->wall : 1.0;

	printf("%-26s %7.2f  %5.1f | %5.2f %4.0f%% | %5.2f %4.0f%% | %5.2f %4.0f%% | %5.2f %4.0f%%\n", what, u->wall / us,
	       100.0, u->app / us, 100.0 * u->app / w, u->dev / us, 100.0 * u->dev / w, u->peer_app / us,
	       100.0 * u->peer_app / w, u->peer_dev / us, 100.0 * u->peer_dev / w);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct lat {
	double med, p99;   /* microseconds */
};

/* --csv: where the samples of the test being summarized go (csv_op NULL: nowhere). */
static FILE *csv_out;
static const char *csv_op;
static uint32_t csv_size;

static void csv_samples(const uint64_t *ns, uint32_t n, double scale)
{
	if (!csv_out || !csv_op)
		return;
	for (uint32_t i = 0; i < n; i++)
		fprintf(csv_out, "%s,%u,%u,%.0f\n", csv_op, csv_size, i, (double)ns[i] * scale);
	csv_op = NULL;
}

static struct lat summarize(uint64_t *ns, uint32_t n, double scale)
{
	struct lat l;

	csv_samples(ns, n, scale);

	qsort(ns, n, sizeof(*ns), cmp_u64);
	l.med = (double)ns[n / 2] * scale / 1000.0;
	l.p99 = (double)ns[(uint64_t)n * 99 / 100] * scale / 1000.0;
	return l;
}

static struct lat write_pingpong(struct side *s, uint32_t size, uint32_t warm, uint32_t iters, uint64_t *ns)
{
	struct reply r;
	struct emu_tp_counters c0, c1;
	struct lat l;

	emu_tp_counters(s->nic.emu, &c0);

	start(s, 'W', size, warm + iters);
	for (uint32_t i = 0; i < warm + iters; i++) {
		uint64_t t0 = bn_now_ns(), want = s->send_cqes + 1;

		/* perftest's run_iter_lat_write: post, poll the send CQ, spin on the buffer */
		s->mem[SBUF_OFF + size - 1] = tag(i);
		post(s, IBV_WR_RDMA_WRITE, SBUF_OFF, size, s->peer.addr + RBUF_OFF, 1);
		drain_until(s, &s->send_cqes, want, "WRITE ping-pong");
		spin_byte(s->mem + RBUF_OFF + size - 1, tag(i), "WRITE ping-pong");
		if (i >= warm)
			ns[i - warm] = bn_now_ns() - t0;
	}
	finish(s, &r);
	emu_tp_counters(s->nic.emu, &c1);
	l = summarize(ns, iters, 0.5);
	if (getenv("BENCH_DEBUG"))
		fprintf(stderr, "W %u: p10 %.1f p25 %.1f med %.1f wakeups %llu (idle %llu) assist_pkts %llu acks %llu rx %llu\n", size,
			(double)ns[iters / 10] / 2000.0, (double)ns[iters / 4] / 2000.0, l.med,
			(unsigned long long)(c1.device_thread_wakeups - c0.device_thread_wakeups),
			(unsigned long long)(c1.device_thread_idle_wakeups - c0.device_thread_idle_wakeups),
			(unsigned long long)(c1.assist_pkts - c0.assist_pkts),
			(unsigned long long)(c1.acks_sent - c0.acks_sent), (unsigned long long)(c1.rx_pkts - c0.rx_pkts));
	return l;
}

static struct lat read_lat(struct side *s, uint32_t size, uint32_t warm, uint32_t iters, uint64_t *ns)
{
	struct reply r;

	start(s, 'R', size, warm + iters);
	for (uint32_t i = 0; i < warm + iters; i++) {
		struct ibv_wc wc;
		uint64_t t0 = bn_now_ns();

		post(s, IBV_WR_RDMA_READ, RBUF_OFF, size, s->peer.addr + SBUF_OFF, 1);
		wait_cqe(s, &wc);
		if (i >= warm)
			ns[i - warm] = bn_now_ns() - t0;
	}
	finish(s, &r);
	return summarize(ns, iters, 1.0);
}

/* SEND ping-pong (ib_send_lat): a signalled SEND each way, each side polling its CQ for
 * the peer's message; half the round trip. */
static struct lat send_pingpong(struct side *s, uint32_t size, uint32_t warm, uint32_t iters, uint64_t *ns)
{
	struct reply r;
	uint64_t base;

	start(s, 'P', size, warm + iters);
	base = s->recv_cqes;
	for (uint32_t i = 0; i < warm + iters; i++) {
		uint64_t t0 = bn_now_ns();

		post(s, IBV_WR_SEND, SBUF_OFF, size, 0, 1);
		drain_until(s, &s->recv_cqes, base + i + 1, "SEND ping-pong");
		if (i >= warm)
			ns[i - warm] = bn_now_ns() - t0;
	}
	finish(s, &r);
	return summarize(ns, iters, 0.5);
}

static struct lat udp_pingpong(struct side *s, uint32_t size, uint32_t warm, uint32_t iters, uint64_t *ns,
			       double scale, int blocking)
{
	static uint8_t buf[65536];
	struct reply r;

	start(s, blocking ? 'V' : 'U', size, warm + iters);
	for (uint32_t i = 0; i < warm + iters; i++) {
		uint64_t t0 = bn_now_ns();
		ssize_t n;

		udp_send(s->udp, buf, size);
		n = blocking ? udp_block_recv(s->udp, buf, sizeof(buf)) : udp_spin_recv(s->udp, buf, sizeof(buf), t0 + WAIT_NS);
		if (n != (ssize_t)size)
			bn_die("UDP ping-pong: no answer within 5 s");
		if (i >= warm)
			ns[i - warm] = bn_now_ns() - t0;
	}
	finish(s, &r);
	return summarize(ns, iters, scale);
}

/* Hand-off ping-pong: half round trips, both sides spinning on what their blocked
 * receiving thread stored.  *fifo: whether this side's receiver got SCHED_FIFO. */
static struct lat udp_handoff(struct side *s, uint32_t size, uint32_t warm, uint32_t iters, uint64_t *ns, int *fifo)
{
	static uint8_t buf[65536];
	struct handoff h;
	struct reply r;

	start(s, 'H', size, warm + iters);
	memset(buf, 0, size);
	handoff_start(&h, s->udp, warm + iters);
	for (uint32_t i = 1; i <= warm + iters; i++) {
		uint64_t t0 = bn_now_ns();

		memcpy(buf, &i, sizeof(i));
		udp_send(s->udp, buf, size);
		handoff_wait(&h, i, "UDP hand-off ping-pong");
		if (i > warm)
			ns[i - 1 - warm] = bn_now_ns() - t0;
	}
	pthread_join(h.thr, NULL);
	*fifo = h.fifo;
	finish(s, &r);
	return summarize(ns, iters, 0.5);
}

/* WRITE bandwidth as ib_write_bw measures it: BW_DEPTH messages of BW_MSG in flight,
 * spread round-robin over BW_QPS QPs, all signalled; MB/s (10^6). */
static double write_bw(struct side *s, uint32_t iters, struct cpu_use *cpu)
{
	struct reply r;
	uint64_t t0, done = 0, end, base = s->send_cqes;
	uint32_t posted = 0;

	start(s, 'B', BW_MSG, iters);
	t0 = bn_now_ns();
	end = t0 + 60 * 1000000000ull;
	while (done < iters) {
		while (posted < iters && posted - done < BW_DEPTH) {
			post_on(s, posted % BW_QPS, IBV_WR_RDMA_WRITE, SBUF_OFF, BW_MSG, s->peer.addr + RBUF_OFF, 1);
			posted++;
		}
		drain(s);
		done = s->send_cqes - base;
		if (bn_now_ns() > end)
			bn_die("WRITE bandwidth: %llu of %u messages done in 60 s", (unsigned long long)done, iters);
	}
	t0 = bn_now_ns() - t0;
	finish(s, &r);
	*cpu = cpu_last;
	return (double)iters * BW_MSG * 1000.0 / (double)t0;
}

/* UDP stream: `count` datagrams of `size` bytes as fast as send() goes; goodput at the
 * busy-polling receiver, MB/s; *loss the fraction that never arrived. */
static double udp_stream(struct side *s, uint32_t size, uint32_t count, double *loss, struct cpu_use *cpu)
{
	static uint8_t buf[65536];
	struct reply r;

	start(s, 'S', size, count);
	for (uint32_t i = 0; i < count; i++)
		udp_send(s->udp, buf, size);
	finish(s, &r);
	*cpu = cpu_last;
	*loss = 1.0 - (double)r.n / (double)count;
	if (r.n < 2 || r.t_last <= r.t_first)
		return 0;
	return (double)(r.bytes - r.bytes / r.n) * 1000.0 / (double)(r.t_last - r.t_first);
}

/* The first three fields of /proc/loadavg: how busy the machine was (the figures
 * depend on it far more than on anything in the code). */
static const char *loadavg(char *buf, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "r");
	float a = 0, b = 0, c = 0;

	if (!f || fscanf(f, "%f %f %f", &a, &b, &c) != 3)
		snprintf(buf, len, "unknown");
	else
		snprintf(buf, len, "%.2f %.2f %.2f", a, b, c);
	if (f)
		fclose(f);
	return buf;
}

static void row(const char *what, uint32_t size, struct lat a, struct lat u)
{
	printf("%-30s %6u %8.2f %8.2f %8.2f %8.2f %7.2fx %7.2fx\n", what, size, a.med, a.p99, u.med, u.p99,
	       a.med / u.med, a.p99 / u.p99);
}

static void gate(const char *what, double v, double base, const char *base_is, double target, int at_least)
{
	double ratio = base > 0 ? v / base : 0.0;
	int met = at_least ? ratio >= target : ratio <= target;

	printf("%-34s %9.2f %9.2f  %-22s %7.2fx %s%4.1fx %s\n", what, v, base, base_is, ratio, at_least ? ">=" : "<=",
	       target, base > 0 ? (met ? "met" : "NOT MET") : "no baseline");
}

static void client(struct side *s, uint32_t iters, uint32_t warm, uint32_t bw_iters, unsigned mtu_bytes)
{
	uint64_t *ns = malloc(sizeof(*ns) * iters);
	static const uint32_t sizes[2] = { 8, 4096 };
	struct lat w[2], rd[2], sp[2], uh[2], ur[2], ub[2], uo[2];
	int handoff_fifo = 0;
	double bw, ubw, loss;
	struct cpu_use bw_cpu, ubw_cpu;
	static struct emu_tp_counters t0, t1, l0;
	char a[32], b[32], la[64];
	struct cmd q = { .op = 'Q' };

	int policy, rt_app;
	struct sched_param spar;

	if (!ns)
		bn_die("out of memory");
	rt_app = pthread_getschedparam(pthread_self(), &policy, &spar) == 0 &&
		 (policy == SCHED_FIFO || policy == SCHED_RR);
	if (rt_app)
		printf("(the application threads run real-time, policy %d priority %d: the hand-off floor is skipped)\n",
		       policy, spar.sched_priority);
	emu_tp_counters(s->nic.emu, &l0);
	for (int k = 0; k < 2; k++) {
		/* baseline first and last around the RDMA figures would be fairer still; one
		 * pass each, interleaved by size, keeps the run short */
		csv_op = "UDP", csv_size = sizes[k];
		uh[k] = udp_pingpong(s, sizes[k], warm, iters, ns, 0.5, 0);
		csv_op = "WRITE", csv_size = sizes[k];
		w[k] = write_pingpong(s, sizes[k], warm, iters, ns);
		ur[k] = udp_pingpong(s, sizes[k], warm, iters, ns, 1.0, 0);
		ub[k] = udp_pingpong(s, sizes[k], warm, iters, ns, 0.5, 1);
		/* under chrt (a real-time application, how an idle machine is imitated on a
		 * busy one) the hand-off thread could not preempt the spinners: skipped */
		if (!rt_app)
			uo[k] = udp_handoff(s, sizes[k], warm, iters, ns, &handoff_fifo);
		else
			uo[k] = (struct lat){ 0, 0 };
		rd[k] = read_lat(s, sizes[k], warm, iters, ns);
		sp[k] = send_pingpong(s, sizes[k], warm, iters, ns);
	}
	emu_tp_counters(s->nic.emu, &t0);
	bw = write_bw(s, bw_iters, &bw_cpu);
	emu_tp_counters(s->nic.emu, &t1);
	ubw = udp_stream(s, mtu_bytes, bw_iters * (BW_MSG / mtu_bytes), &loss, &ubw_cpu);
	xwrite(s->ctl, &q, sizeof(q));

	bn_ip_str(s->me.ip, a, sizeof(a));
	bn_ip_str(s->peer.ip, b, sizeof(b));
	printf("uverbs end to end on the emulated ConnectX: two processes, %s <-> %s, RC, path MTU %u\n", a, b,
	       mtu_bytes);
	printf("Each process: one emulated NIC through hw/mlx5 (post/poll = mx5_post_send/mx5_poll_cq), the\n"
	       "application thread busy-polling%s; the NIC's device thread (%s) blocks in poll()\n"
	       "for arrivals and the posting thread transmits inside its doorbell.  Baseline: UDP sockets on\n"
	       "the same two addresses, busy-polling receivers (recv MSG_DONTWAIT spin%s), in the same run.\n",
	       spin_yield ? " with sched_yield() between looks" : "", t0.device_thread_fifo ? "SCHED_FIFO" : "SCHED_OTHER",
	       spin_yield ? ", same yield" : "");
	printf("%u round trips per latency figure after %u warm-up; %u x 64 KiB WRITEs (%u in flight over %u\n"
	       "QPs) for bandwidth against %u-byte UDP datagrams carrying the same bytes.  Host: %ld CPUs\n"
	       "online, load average %s at the end of the run.\n\n",
	       iters, warm, bw_iters, BW_DEPTH, BW_QPS, mtu_bytes, sysconf(_SC_NPROCESSORS_ONLN),
	       loadavg(la, sizeof(la)));
	printf("%-30s %6s %8s %8s %8s %8s %8s %8s\n", "test (microseconds)", "bytes", "median", "p99", "UDP med",
	       "UDP p99", "ratio", "ratio99");
	for (int k = 0; k < 2; k++)
		row("RDMA WRITE ping-pong, half RTT", sizes[k], w[k], uh[k]);
	for (int k = 0; k < 2; k++)
		row("RDMA READ, full op vs UDP RTT", sizes[k], rd[k], ur[k]);
	for (int k = 0; k < 2; k++)
		row("SEND ping-pong, half RTT", sizes[k], sp[k], uh[k]);
	/* not a target: what one thread wake-up per hop costs on this machine in this run */
	for (int k = 0; k < 2; k++)
		row("(UDP, blocking recv, half RTT)", sizes[k], ub[k], uh[k]);
	/* the floor for a NIC whose device thread blocks: RDMA against it */
	printf("\n%-30s %6s %8s %8s %8s %8s %8s %8s\n", "vs the hand-off floor", "bytes", "RDMA med", "RDMA p99",
	       "floor", "floor99", "ratio", "ratio99");
	for (int k = 0; k < 2; k++)
		row("RDMA WRITE ping-pong, half RTT", sizes[k], w[k], uo[k]);
	printf("(floor: UDP ping-pong where a %s thread blocked in poll() receives each datagram\n"
	       "and hands it to the spinning application thread: the device thread's wake-up, no NIC)\n",
	       handoff_fifo ? "SCHED_FIFO" : "SCHED_OTHER");
	printf("\n%-30s %6s %10s %10s %8s\n", "bandwidth (MB/s, 10^6)", "bytes", "RDMA", "UDP", "ratio");
	printf("%-30s %6u %10.1f %10.1f %7.2fx   (UDP receiver lost %.1f%%)\n", "RDMA WRITE vs UDP stream", BW_MSG, bw,
	       ubw, ubw > 0 ? bw / ubw : 0.0, loss * 100.0);
	printf("\nwhere the CPU went, us per 64 KiB (and %% of the wall time; app = the application\n"
	       "thread, dev = its NIC's device thread; the UDP stream's receiver busy-polls, so 100%%)\n");
	printf("%-26s %7s  %5s | %11s | %11s | %11s | %11s\n", "", "wall", "", "sender app", "sender dev",
	       "receiver app", "receiver dev");
	cpu_row("RDMA WRITE bandwidth", &bw_cpu, bw_iters);
	cpu_row("UDP stream", &ubw_cpu, (double)bw_iters);
	printf("During the WRITE bandwidth run the sending NIC sent %llu packets (%llu retransmitted, %llu\n"
	       "ACK timeouts) in %llu system calls and received %llu (ACKs), %llu of them taken by CQ polls;\n"
	       "its device thread was woken %llu times by an arrival.\n",
	       (unsigned long long)(t1.tx_pkts - t0.tx_pkts), (unsigned long long)(t1.retransmits - t0.retransmits),
	       (unsigned long long)(t1.timeouts - t0.timeouts), (unsigned long long)(t1.tx_calls - t0.tx_calls),
	       (unsigned long long)(t1.rx_pkts - t0.rx_pkts), (unsigned long long)(t1.assist_pkts - t0.assist_pkts),
	       (unsigned long long)(t1.device_thread_wakeups - t0.device_thread_wakeups));
	printf("During the latency tests the measuring NIC's device thread was woken %llu times by an\n"
	       "arrival (%llu of them found it taken already by a CQ poll); CQ polls took %llu packets off\n"
	       "the wire themselves (%llu polls looked); %llu ACKs sent.  It slept off the socket %llu\n"
	       "times while the application polled; polls and doorbells pushed that sleep %llu times.\n",
	       (unsigned long long)(t0.device_thread_wakeups - l0.device_thread_wakeups),
	       (unsigned long long)(t0.device_thread_idle_wakeups - l0.device_thread_idle_wakeups),
	       (unsigned long long)(t0.assist_pkts - l0.assist_pkts), (unsigned long long)(t0.assist_polls - l0.assist_polls),
	       (unsigned long long)(t0.acks_sent - l0.acks_sent),
	       (unsigned long long)(t0.device_thread_off_socket - l0.device_thread_off_socket),
	       (unsigned long long)(t0.hold_rearms - l0.hold_rearms));
	/* The gate: one line per figure, its baseline from this run, the ratio and the
	 * target (docs/benchmarks.md).  Read, never asserted: timing on a shared machine. */
	printf("\n%-34s %9s %9s  %-22s %8s %8s\n", "gate (one line per figure)", "value", "baseline", "(baseline is)",
	       "ratio", "target");
	for (int k = 0; k < 2; k++) {
		char what[64];

		snprintf(what, sizeof(what), "WRITE ping-pong %u B median", sizes[k]);
		gate(what, w[k].med, uh[k].med, "UDP ping-pong median", 2.0, 0);
		snprintf(what, sizeof(what), "WRITE ping-pong %u B p99", sizes[k]);
		gate(what, w[k].p99, uh[k].p99, "UDP ping-pong p99", 5.0, 0);
	}
	for (int k = 0; k < 2; k++) {
		char what[64];

		snprintf(what, sizeof(what), "READ %u B median", sizes[k]);
		gate(what, rd[k].med, ur[k].med, "UDP round trip median", 2.5, 0);
	}
	for (int k = 0; k < 2; k++) {
		char what[64];

		snprintf(what, sizeof(what), "SEND ping-pong %u B median", sizes[k]);
		gate(what, sp[k].med, uh[k].med, "UDP ping-pong median", 2.5, 0);
	}
	gate("WRITE bandwidth 64 KiB, MB/s", bw, ubw, "UDP stream goodput", 0.8, 1);
	printf("(latencies in microseconds, half round trips except READ; targets from docs/benchmarks.md)\n");
	free(ns);
}

int main(int argc, char **argv)
{
	unsigned iters = 5000, warm = 200, bw_iters = 2000, mtu_bytes = 4096;
	const char *csv_path = NULL, *uri = "emu:";
	uint8_t mtu;
	int sv[2], c, status = 0;
	pid_t pid;
	struct side s;
	uint16_t uport;
	struct { struct bn_peer p; uint16_t uport; uint32_t qpns[BW_QPS]; } mine, theirs;

	bn_prog = "uv_bench_e2e";
	static const struct option opts[] = { { "iters", required_argument, 0, 'n' },
					      { "bw-iters", required_argument, 0, 'b' },
					      { "warmup", required_argument, 0, 'w' },
					      { "mtu", required_argument, 0, 'm' },
					      { "yield", no_argument, 0, 'y' },
					      { "csv", required_argument, 0, 'c' },
					      { "copy", required_argument, 0, 'k' },
					      { "help", no_argument, 0, 'h' },
					      { 0, 0, 0, 0 } };
	/* The numbers, by option letter: decimal or 0x hex, min..max (tools/common/parse.h). */
	const struct { int c; const char *name; unsigned *v, min, max; } nums[] = {
		{ 'n', "--iters", &iters, 100, 100000000 }, { 'b', "--bw-iters", &bw_iters, 1, 100000000 },
		{ 'w', "--warmup", &warm, 0, 100000000 },   { 'm', "--mtu", &mtu_bytes, 256, 4096 },
	};
	while ((c = getopt_long(argc, argv, "n:b:w:m:yc:k:h", opts, NULL)) != -1) {
		size_t k = 0;

		while (k < sizeof(nums) / sizeof(nums[0]) && nums[k].c != c)
			k++;
		if (k < sizeof(nums) / sizeof(nums[0])) {
			if (uvt_parse_unsigned(optarg, nums[k].min, nums[k].max, nums[k].v))
				bn_die("%s: '%s' is not %u..%u", nums[k].name, optarg, nums[k].min, nums[k].max);
		} else if (c == 'y') {
			spin_yield = 1;
		} else if (c == 'c') {
			csv_path = optarg;
		} else if (c == 'k' && !strcmp(optarg, "guarded")) {
			uri = "emu:";
		} else if (c == 'k' && !strcmp(optarg, "syscall")) {
			uri = "emu:copy=syscall";
		} else if (c == 'k') {
			bn_die("--copy: '%s' is not guarded or syscall", optarg);
		} else {
			return bn_usage(c, "uv_bench_e2e [--iters N] [--bw-iters N] [--warmup N] [--mtu 256..4096] "
					   "[--yield] [--copy guarded|syscall] [--csv FILE]");
		}
	}
	bn_no_operands(argc, argv);
	for (mtu = 1; mtu <= 5 && (128u << mtu) != mtu_bytes; mtu++)
		;
	if (mtu > 5 || iters < 100 || bw_iters == 0)
		bn_die("--mtu must be 256..4096 (a power of two), --iters at least 100, --bw-iters > 0");

	if (csv_path) {
		csv_out = fopen(csv_path, "w");
		if (!csv_out)
			bn_die("--csv %s: %s", csv_path, strerror(errno));
		fprintf(csv_out, "# uv_bench_e2e latency samples: RDMA WRITE ping-pong and the UDP ping-pong it is held "
				 "against, same run\n# device: emulated ConnectX (%s)\n# mtu: %u\n# samples: %u per test\n"
				 "# processes: 2\n# warmup: %u\n# total_ns: half the round trip, as ib_write_lat reports it\n"
				 "op,size,iter,total_ns\n", uri, mtu_bytes, iters, warm);
	}
	if (plat_socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		bn_die("socketpair: %s", strerror(errno));
	fflush(stdout);
	if (csv_out)
		fflush(csv_out);   /* or the passive side writes the header again at its exit */
	pid = fork();
	if (pid < 0)
		bn_die("fork: %s", strerror(errno));
	memset(&s, 0, sizeof(s));
	s.ctl = pid == 0 ? sv[1] : sv[0];
	close(pid == 0 ? sv[0] : sv[1]);
	if (pid == 0)
		bn_prog = "uv_bench_e2e (passive side)";   /* exits when the side channel closes */
	bn_nic_open(&s.nic, uri, 1024);
	for (unsigned q = 0; q < BW_QPS; q++)
		bn_qp_create(&s.qps[q], &s.nic, 64);
	s.mem = bn_alloc(REGION);
	bn_mr(&s.nic, s.mem, REGION, &s.lkey, &s.rkey);
	s.udp = udp_open(s.nic.ip, &uport);
	s.me = (struct bn_peer){ .ip = s.nic.ip, .qpn = s.qps[LAT_QP].qpn, .psn = pid == 0 ? 0x2000u : 0x1000u,
				 .rkey = s.rkey, .addr = (uintptr_t)s.mem };
	memset(&mine, 0, sizeof(mine));
	mine.p = s.me;
	mine.uport = uport;
	for (unsigned q = 0; q < BW_QPS; q++)
		mine.qpns[q] = s.qps[q].qpn;
	xwrite(s.ctl, &mine, sizeof(mine));
	xread(s.ctl, &theirs, sizeof(theirs));
	s.peer = theirs.p;
	udp_connect(s.udp, s.peer.ip, theirs.uport);
	for (unsigned q = 0; q < BW_QPS; q++) {
		struct bn_peer p = s.peer;

		p.qpn = theirs.qpns[q];
		bn_qp_connect(&s.qps[q], &p, s.me.psn, mtu);
	}
	for (unsigned i = 0; i < RECV_DEPTH; i++)
		if (bn_post_recv(&s.qps[LAT_QP], 0, s.mem + RBUF_OFF, SBUF_OFF - RBUF_OFF, s.lkey))
			bn_die("post_recv failed");
	/* both QPs in RTS before anything is sent */
	xwrite(s.ctl, &mine, 1);
	xread(s.ctl, &theirs, 1);

	if (pid == 0) {
		server(&s);
	} else {
		client(&s, iters, warm, bw_iters, mtu_bytes);
		if (csv_out && fclose(csv_out) != 0)
			bn_die("--csv %s: %s", csv_path, strerror(errno));
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fprintf(stderr, "uv_bench_e2e: the passive side ended with status 0x%x\n", status);
	}
	close(s.udp);
	bn_nic_close(&s.nic);
	munmap(s.mem, REGION);
	close(s.ctl);
	return 0;
}
