/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvperf: RDMA latency and bandwidth on libuverbs, through the standard ibv_* API only
 * (docs/tools.md, "uvperf").
 *
 * Roles: the client drives every test; the server answers over a TCP side channel
 * (127.0.0.1 by default).  --loopback runs the server in a thread of the same process
 * on a second device, over a socketpair, so both shapes share one protocol (chan.c).
 *
 * What is measured (and what is not):
 *  - latency: one signaled WR at a time on one RC QP; each sample is the time from just
 *    before ibv_post_send to the ibv_poll_cq that returned its completion (a full round
 *    trip: request out, response or ACK back), split into the post call and the polling
 *    that followed.  Never divided into a "throughput".
 *  - bandwidth: up to `depth` WRs outstanding on each of `qps` QPs, bytes and messages
 *    completed over the time from the first post to the last completion.
 *  - --verify: the data source fills its buffer with a seeded pattern and sends one
 *    XXH3 hash per message slot over the side channel; each message lands in its own
 *    slot, and after every pass over the slots the sink hashes what arrived, compares,
 *    names the first bad byte, and zeroes the slots before the next pass.
 */
#ifndef UVERBS_TOOLS_UVPERF_UVPERF_H
#define UVERBS_TOOLS_UVPERF_UVPERF_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#define UP_MAX_QPS 64
#define UP_MAX_SIZES 32
#define UP_DEFAULT_PORT 18515

enum up_op { UP_WRITE = 0, UP_READ, UP_SEND, UP_FADD, UP_CSWAP, UP_NOPS };
enum up_mode { UP_LAT = 0, UP_BW = 1 };

const char *up_op_name(enum up_op op);
int up_op_parse(const char *s);
/* The side whose buffer the payload leaves from (1: client). */
static inline int up_client_is_source(enum up_op op) { return op != UP_READ; }
static inline int up_is_atomic(enum up_op op) { return op == UP_FADD || op == UP_CSWAP; }

/* ------------------------------------------------------------------ side channel */

enum up_msg {
	UP_M_HELLO = 1, UP_M_HELLO_ACK, UP_M_QPINFO, UP_M_TEST, UP_M_HASHES, UP_M_READY,
	UP_M_SEG, UP_M_SEGRES, UP_M_END, UP_M_END_ACK, UP_M_BYE, UP_M_ERROR,
	UP_M_ALIVE,                 /* client to server during a long test: still here */
};

#define UP_MAGIC 0x75767066u   /* "uvpf" */
#define UP_VERSION 2             /* 2: UP_M_ALIVE during tests */

struct up_hello {
	uint32_t magic, version;
	uint32_t nqps, shared_cq, depth, rx_depth;
	uint64_t bufsize;           /* bytes per QP on each side */
	uint32_t verify;
	uint32_t gid_index;
};

struct up_hello_ack {
	uint32_t status;            /* 0 ok, else an errno */
	char device[128];           /* the server's device, as it names it */
	char uri[128];              /* and as UVERBS_DEVICES named it */
	char model[64];
	char fw[64];
	char err[256];
};

struct up_qpinfo {
	uint32_t qpn, psn;
	uint8_t gid[16];
	uint64_t addr;
	uint32_t rkey;
	uint32_t mtu;               /* enum ibv_mtu, active on the port */
};

struct up_test {
	uint32_t op, mode, size, depth;
	uint64_t iters, warmup;
	uint64_t seed;
	int64_t corrupt;            /* byte offset in the source's QP 0 slots to flip, -1 none */
	uint32_t verify;
	uint32_t pad;
};

struct up_vres {
	uint32_t ok;
	uint32_t qp;
	uint64_t msg;               /* message index since the test started (warm-up included) */
	uint64_t offset;            /* byte offset of the first bad byte in the QP's buffer */
	uint64_t msg_offset;        /* the same, within the message */
	uint32_t got, expected;
	uint64_t checked_bytes;
	char text[256];
};

int up_chan_send(int fd, uint32_t type, const void *p, size_t len);
/* Receive one message of the expected type (an UP_M_ERROR's text is put in err).
 * Returns the payload length, or a negative errno. */
int up_chan_recv(int fd, uint32_t *type, void *p, size_t max);
/* Receive exactly one message of `type` and `len` bytes.  Every read is bounded: a peer's
 * UP_M_ERROR becomes "peer: TEXT" in err (returns -EREMOTEIO); a message of another type
 * or length is read, dropped and reported (-EPROTO). */
int up_chan_expect(int fd, uint32_t type, void *p, size_t len, char *err, size_t errlen);
/* A receive that waits longer than ms fails with -ETIMEDOUT (0: wait for ever). */
int up_chan_set_timeout(int fd, unsigned ms);
/* 1 when a message is waiting, 0 when not, negative on error. */
int up_chan_ready(int fd);
int up_chan_listen(const char *addr, int port, char *err, size_t errlen);
int up_chan_accept(int lfd, char *err, size_t errlen);
int up_chan_connect(const char *addr, int port, unsigned timeout_ms, char *err, size_t errlen);

/* ------------------------------------------------------------------ verbs endpoint */

/* A work request's wr_id: the QP's index in the endpoint in the top 16 bits, the
 * message's sequence number in the low 48, so a shared CQ's completion names both. */
static inline uint64_t up_wr_id(unsigned q, uint64_t n) { return ((uint64_t)q << 48) | (n & 0xffffffffffffull); }
static inline unsigned up_wr_id_qp(uint64_t wr_id) { return (unsigned)(wr_id >> 48); }
static inline uint64_t up_wr_id_seq(uint64_t wr_id) { return wr_id & 0xffffffffffffull; }

struct up_ep {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t buflen;              /* nqps * bufsize */
	size_t bufmap;              /* --memfd: bytes of buf's shared mapping, else 0 */
	int buf_fd;                 /* --memfd: the shared-memory descriptor behind buf, held open */
	size_t bufsize;
	unsigned nqps;
	struct ibv_cq *cq[UP_MAX_QPS];     /* send (and receive) CQs; cq[0] when shared */
	struct ibv_qp *qp[UP_MAX_QPS];
	unsigned depth, rx_depth;
	int shared_cq;
	struct up_qpinfo local[UP_MAX_QPS];
	enum ibv_mtu active_mtu;
	uint32_t max_rd_atomic;
	char name[64];
	char model[64];
	char fw[64];
	uint32_t part_id;
	unsigned gid_index;
};

/* Open device `index` of the verbs device list and create nqps RC QPs with their CQs,
 * one registered buffer of nqps*bufsize bytes (remote read, write and atomic). */
/* --memfd: every endpoint made after this call takes its buffer from a shared-memory
 * descriptor it keeps open (hw/platform/shm.h), not the heap: the memory a device
 * daemon that reaches only shared memory registers (uvd -S, uvd over VFIO). */
void up_ep_use_shared_memory(bool on);
int up_ep_create(struct up_ep *ep, int index, unsigned nqps, int shared_cq, unsigned depth,
		 unsigned rx_depth, size_t bufsize, unsigned gid_index, char *err, size_t errlen);
/* RESET -> INIT -> RTR -> RTS against the peer's QPs. */
int up_ep_connect(struct up_ep *ep, const struct up_qpinfo *remote, char *err, size_t errlen);
void up_ep_destroy(struct up_ep *ep);
struct ibv_cq *up_ep_cq(struct up_ep *ep, unsigned q);
/* Post receives for SEND tests: receive n of QP q lands in slot n % slots. */
int up_ep_post_recv(struct up_ep *ep, unsigned q, uint64_t n, uint32_t size, uint64_t slots);

/* ------------------------------------------------------------------ verification */

void up_pattern_fill(uint8_t *buf, size_t len, uint64_t seed, uint64_t base);
uint8_t up_pattern_byte(uint64_t seed, uint64_t off);
/* One XXH3-64 per message slot of each QP's buffer: nqps * slots hashes. */
void up_hash_slots(const struct up_ep *ep, uint32_t size, uint64_t slots, uint64_t *out);
/* Compare slots first_slot .. first_slot+counts[q]-1 of each QP against the source's
 * hashes; first_msg numbers the first of them.  Fills res (ok = 1 when all match). */
void up_verify_slots(const struct up_ep *ep, uint32_t size, uint64_t slots, uint64_t first_slot,
		     const uint64_t *counts,
		     const uint64_t *hashes, uint64_t seed, uint64_t first_msg, struct up_vres *res);

/* ------------------------------------------------------------------ results */

/* 64-bit nanoseconds: a round trip of more than 4.29 s is reported as it was. */
struct up_sample {
	uint64_t total_ns, post_ns, poll_ns;
};

struct up_result {
	enum up_mode mode;
	enum up_op op;
	uint32_t size;
	unsigned qps, depth;
	uint64_t warmup;
	/* latency */
	struct up_sample *samples;
	uint64_t nsamples;
	double min, median, p95, p99, p999, max;     /* ns, total */
	double post_median, poll_median;
	/* bandwidth */
	uint64_t messages, bytes;
	double seconds, gbit_s, msg_s;
	/* verification */
	int failed;                 /* the test ended in an error (completion error, timeout):
				     * no figures, verified is -1 */
	int verified;               /* 1 verified, 0 not asked, -1 failed */
	uint64_t verified_bytes;
	char verify_text[300];
};

void up_stats(struct up_result *r);

#endif
