/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvcp: file copy over RDMA (docs/tools.md, "uvcp"; docs/man/uvcp.1).
 *
 *   uvcp [options] SRC... HOST:DEST         the client: sends files and trees
 *   uvcp --serve --root DIR [options]       the server: receives under DIR
 *
 * A plain verbs program: it includes <infiniband/verbs.h> and nothing of uverbs, so it
 * builds against libuverbs or the system's libibverbs alike (tests/tools/CMakeLists.txt
 * builds it both ways).
 *
 * Shape of a copy:
 *  - a TCP side channel carries set-up and per-file messages (chan.c): HELLO with the
 *    queue shape, the server's QPs and slot addresses, the client's QPs, then per file
 *    FILE (path, size, identity) -> FILE_ACK (resume point) ... FILE_END (digest) ->
 *    FILE_DONE (verified and renamed);
 *  - data moves by RDMA WRITE_WITH_IMM (ep.c): nqps RC QPs, striped over the devices
 *    given (QP q on device q % ndev), each with `depth` slots of 64 + chunk bytes in a
 *    registered staging buffer on each side.  A chunk goes into the client's slot s of
 *    QP q and is written to the server's slot s of the same QP; the immediate names s.
 *    The client may use slot s again only when the server has acknowledged it (receive
 *    credits: the server re-posts its receive, then sends a zero-byte SEND_WITH_IMM
 *    naming s back), and every WRITE is signalled so the send CQ returns send-queue
 *    credits;
 *  - integrity: each slot starts with a header holding the chunk's index, length and
 *    XXH3-64; the server checks it before writing to the temporary file and answers a
 *    mismatch with a NAK (the client sends the chunk again).  The file digest is
 *    XXH3-64 over the chunks' XXH3-64 values in order; both sides compute it and the
 *    server compares it before renaming the temporary file to its name;
 *  - resume: next to the temporary file a small state file records the source's size,
 *    mtime and chunk size and how many leading chunks are verified on disk; a copy of
 *    the same source starts there after re-hashing that prefix (serve.c).
 */
#ifndef UVERBS_TOOLS_UVCP_UVCP_H
#define UVERBS_TOOLS_UVCP_UVCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#define UC_DEFAULT_PORT 18516
#define UC_MAX_QPS 32
#define UC_MAX_DEVS 8
#define UC_MAX_DEPTH 64
#define UC_HDR 64u                 /* bytes of chunk header at the start of each slot */
#define UC_MIN_CHUNK (4u << 10)
#define UC_MAX_CHUNK (64u << 20)
#define UC_PATH_MAX 4096
#define UC_MSG_MAX (UC_PACK_MAX_FILES * (24 + UC_PATH_MAX) + 8)
#define UC_ERR_MAX 512
/* uc_chan_expect's "the peer sent an error message" (Linux's EREMOTEIO, which macOS
 * lacks): past every errno value */
#define UC_EPEER 0x10000

/* ------------------------------------------------------------------ side channel */

enum uc_msg {
	UC_M_HELLO = 1, UC_M_HELLO_ACK, UC_M_QPINFO, UC_M_READY,
	UC_M_STAT, UC_M_STAT_ACK, UC_M_MKDIR, UC_M_MKDIR_ACK,
	UC_M_FILE, UC_M_FILE_ACK, UC_M_FILE_END, UC_M_FILE_DONE,
	UC_M_BYE, UC_M_ERROR,
	UC_M_PACK,                     /* the entries of the pack the next FILE carries */
};

#define UC_MAGIC 0x75766370u       /* "uvcp" */
#define UC_VERSION 1

struct uc_hello {
	uint32_t magic, version;
	uint32_t nqps, depth, chunk, pad;
};

struct uc_qpinfo {
	uint32_t qpn, psn;
	uint8_t gid[16];
	uint32_t mtu;                  /* enum ibv_mtu active on the port */
	uint32_t rkey;
	uint64_t addr;                 /* server: base of this QP's slots */
};

struct uc_hello_ack {
	uint32_t status;               /* 0, else an errno and err says why */
	uint32_t nqps;
	char err[UC_ERR_MAX];
	char devices[256];             /* the server's devices, for the client's report */
	struct uc_qpinfo qp[UC_MAX_QPS];
};

struct uc_status {                 /* STAT_ACK, MKDIR_ACK, FILE_DONE */
	uint32_t status;               /* 0, else an errno */
	uint32_t kind;                 /* STAT_ACK: UC_K_* */
	char err[UC_ERR_MAX];
};

enum { UC_K_NONE = 0, UC_K_FILE = 1, UC_K_DIR = 2, UC_K_OTHER = 3 };

struct uc_file {
	uint64_t size;
	int64_t mtime_ns;
	uint32_t mode;
	uint32_t chunk;
	uint32_t seq;                  /* file number in this session, checked in every slot */
	uint32_t flags;                /* UC_F_PACK: the small files UC_M_PACK listed, end to end */
	char path[UC_PATH_MAX];        /* relative to the server's root, NUL-terminated */
};

/* Small files travel packed: one FILE (UC_F_PACK, no name, never resumed) carries many
 * files end to end through the same chunks and digest, and the server splits it into
 * the files UC_M_PACK listed, each through its own temporary and rename.  A tree of
 * small files then costs a few round trips per pack instead of per file. */
#define UC_F_PACK 1u
#define UC_PACK_MAX_FILES 1024
#define UC_PACK_MAX_BYTES (64u << 20)

struct uc_pack_entry {             /* UC_M_PACK is a count (uint32) and these, each */
	uint64_t size;                 /* followed by pathlen bytes of path (no NUL) */
	int64_t mtime_ns;
	uint32_t mode;
	uint32_t pathlen;
};

struct uc_file_ack {
	uint32_t status;
	uint32_t pad;
	uint64_t resume_chunks;        /* leading chunks already verified on the server */
	char err[UC_ERR_MAX];
};

struct uc_file_end {
	uint64_t nchunks;
	uint64_t digest;               /* XXH3-64 over the chunk hashes */
};

struct uc_mkdir {
	uint32_t mode, pad;
	char path[UC_PATH_MAX];
};

/* The header at the start of every slot, written by the client with the chunk. */
struct uc_chunk_hdr {
	uint32_t magic;                /* UC_MAGIC */
	uint32_t seq;                  /* uc_file.seq */
	uint64_t index;                /* chunk number in the file */
	uint32_t len;                  /* data bytes after the header */
	uint32_t pad;
	uint64_t hash;                 /* XXH3-64 of the data */
};

/* The acknowledgement's immediate: slot in the low 16 bits, verdict above. */
enum { UC_ACK_OK = 0, UC_ACK_BADHASH = 1, UC_ACK_BAD = 2 };
static inline uint32_t uc_ack_imm(unsigned slot, unsigned verdict) { return (uint32_t)slot | ((uint32_t)verdict << 16); }

struct uc_chan {
	int fd;
	unsigned timeout_ms;           /* every blocking read is bounded by this */
};

int uc_chan_send(struct uc_chan *c, uint32_t type, const void *p, size_t len);
/* Receive exactly one message of `type` of at most `max` bytes; UC_M_ERROR from the
 * peer becomes "server: TEXT"/"client: TEXT" in err (-UC_EPEER).  Returns the length. */
int uc_chan_expect(struct uc_chan *c, uint32_t type, void *p, size_t max, char *err, size_t errlen);
/* Receive any message; returns its length and type. */
int uc_chan_recv(struct uc_chan *c, uint32_t *type, void *p, size_t max);
void uc_chan_error(struct uc_chan *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int uc_chan_listen(const char *addr, int port, char *err, size_t errlen);
int uc_chan_connect(const char *host, int port, unsigned timeout_ms, char *err, size_t errlen);
const char *uc_chan_why(int rc);

/* ------------------------------------------------------------------ verbs endpoint */

struct uc_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;             /* send and receive completions of this device's QPs */
	struct ibv_mr *mr;             /* over the staging slots of this device's QPs */
	struct ibv_mr *scratch_mr;
	uint8_t *scratch;
	unsigned gid_index;
	enum ibv_mtu mtu;
	char name[64];
	unsigned armed;
};

struct uc_qp {
	struct ibv_qp *qp;
	unsigned dev;
	uint8_t *slots;                /* depth slots of UC_HDR + chunk bytes */
	struct uc_qpinfo local, remote;
	unsigned sq_out;               /* signalled sends not yet completed */
};

struct uc_ep {
	unsigned ndev, nqps, depth;
	size_t slot_size;
	struct uc_dev dev[UC_MAX_DEVS];
	struct uc_qp qp[UC_MAX_QPS];
	uint8_t *buf;                  /* all slots, page aligned */
	size_t buflen;
	int server;
};

/* Open the named devices (none: the first the verbs list gives), make nqps RC QPs over
 * them in turn, one staging buffer, and post the receives.  gid < 0: pick each port's
 * first RoCE v2 GID (IPv4-mapped first). */
int uc_ep_open(struct uc_ep *ep, const char *const *names, unsigned nnames, int gid, unsigned nqps,
	       unsigned depth, unsigned chunk, int server, char *err, size_t errlen);
int uc_ep_connect(struct uc_ep *ep, char *err, size_t errlen);
void uc_ep_close(struct uc_ep *ep);
void uc_ep_names(const struct uc_ep *ep, char *out, size_t len);
static inline uint8_t *uc_slot(struct uc_ep *ep, unsigned q, unsigned s)
{
	return ep->qp[q].slots + (size_t)s * ep->slot_size;
}
int uc_ep_post_recv(struct uc_ep *ep, unsigned q, unsigned s);
int uc_ep_write(struct uc_ep *ep, unsigned q, unsigned s, uint32_t len);
int uc_ep_write_from(struct uc_ep *ep, unsigned q, unsigned s, uint32_t len, const void *data, uint32_t lkey);
int uc_ep_ack(struct uc_ep *ep, unsigned q, unsigned s, unsigned verdict);
/* Poll every CQ once into wc (at most max); the entry's QP index is in wr_id >> 16. */
int uc_ep_poll(struct uc_ep *ep, struct ibv_wc *wc, int max);
/* Sleep until a completion, the side channel or wake_fd (-1: none) is readable, or
 * timeout_ms; 1: the side channel is readable, 0 otherwise, negative errno. */
int uc_ep_wait(struct uc_ep *ep, int chan_fd, int wake_fd, int timeout_ms);
static inline uint64_t uc_wr_id(unsigned q, unsigned s) { return ((uint64_t)q << 16) | s; }

/* ------------------------------------------------------------------ server paths */

/* A relative path under the root: refused when absolute, with a ".." component, empty
 * components aside, or reaching outside the root through a symlink.  On success *dirfd
 * is the open parent directory (its real path inside the root) and leaf its last
 * component ("" for the root itself).  mkdirs: create missing parents (mode 0755). */
int uc_path_open_parent(const char *root, const char *rel, int mkdirs, int *dirfd, char *leaf, size_t leaflen,
			char *err, size_t errlen);

int uc_serve(const char *root, const char *addr, int port, const char *const *devs, unsigned ndev, int gid,
	     int once, unsigned timeout_s);

/* ------------------------------------------------------------------ misc */

double uc_now(void);
extern const char uc_version[];
extern const char uc_build[];

#endif
