/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvcp --serve: receive files under a root directory (uvcp.h).
 *
 * One session at a time: a client connects on the side channel, the devices are opened
 * for it and closed after it.  Within a session one file is open at a time; its chunks
 * arrive in any order over the QPs, are checked against their XXH3-64, written to
 * ".NAME.uvcp-part" at their offset, and the count of leading chunks verified is kept
 * in ".NAME.uvcp-state" so that a copy cut short resumes there.  FILE_END carries the
 * client's digest; only when it equals ours is the temporary renamed to NAME. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "uvcp.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#define UC_STATE_MAGIC 0x75637374u  /* "ucst" */

struct uc_state_rec {              /* the .uvcp-state file */
	uint32_t magic, version;
	uint64_t size;
	int64_t mtime_ns;
	uint64_t chunk;
	uint64_t verified;             /* leading chunks on disk and checked */
};

struct sv_file {
	int active, pack;
	uint32_t seq;
	int dirfd, fd, sfd;
	char leaf[NAME_MAX + 1], tmp[NAME_MAX + 1], st[NAME_MAX + 1];
	char path[UC_PATH_MAX];
	struct uc_state_rec rec;
	uint64_t nchunks, resume, contiguous, received;
	uint64_t *hash;
	uint8_t *done;
	uint32_t mode;
};

struct sv {
	const char *root;
	struct uc_chan ch;
	struct uc_ep ep;
	unsigned chunk;
	struct sv_file f;
	unsigned pend[UC_MAX_QPS][UC_MAX_DEPTH];   /* acks waiting for send-queue room */
	unsigned npend[UC_MAX_QPS];
	char err[UC_ERR_MAX + 64];
	int bye;
	/* the pack the next FILE carries (UC_M_PACK) */
	struct sv_pack {
		uint64_t size, off;
		int64_t mtime_ns;
		uint32_t mode;
		char *path;
	} *pack;
	unsigned npack;
	uint64_t pack_bytes;
	char *packbuf;                 /* the message itself; the paths point into it */
	uint8_t *msg;                  /* UC_MSG_MAX bytes for any message */
};

static void file_close(struct sv_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	if (f->sfd >= 0)
		close(f->sfd);
	if (f->dirfd >= 0)
		close(f->dirfd);
	free(f->hash);
	free(f->done);
	memset(f, 0, sizeof(*f));
	f->fd = f->sfd = f->dirfd = -1;
}

static const char *io_why(int e)
{
	switch (e) {
	case ENOSPC: return " (the server's disk is full)";
	case EDQUOT: return " (the server's disk quota is used up)";
	case EFBIG: return " (the server's file size limit)";
	case EACCES: case EPERM: return " (permission)";
	default: return "";
	}
}

static int state_write(struct sv_file *f)
{
	if (f->sfd < 0)
		return 0;              /* a pack: never resumed */
	f->rec.verified = f->contiguous;
	ssize_t k = pwrite(f->sfd, &f->rec, sizeof(f->rec), 0);
	return k == (ssize_t)sizeof(f->rec) ? 0 : (k < 0 ? -errno : -EIO);
}

/* Re-hash the verified prefix of an earlier attempt from disk; 0 when all of it reads
 * back. */
static int rehash_prefix(struct sv *s, struct sv_file *f, uint64_t n)
{
	uint8_t *b = malloc(s->chunk);
	if (!b)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t off = i * s->chunk;
		size_t len = (size_t)(f->rec.size - off < s->chunk ? f->rec.size - off : s->chunk);
		ssize_t k = pread(f->fd, b, len, (off_t)off);
		if (k != (ssize_t)len) {
			free(b);
			return -EIO;
		}
		f->hash[i] = XXH3_64bits(b, len);
		f->done[i] = 1;
	}
	free(b);
	return 0;
}

static void file_ack_err(struct sv *s, int e, const char *fmt, const char *a, const char *b)
{
	struct uc_file_ack ack = { .status = (uint32_t)e };
	snprintf(ack.err, sizeof(ack.err), fmt, a, b);
	uc_chan_send(&s->ch, UC_M_FILE_ACK, &ack, sizeof(ack));
}

static void file_ack_err(struct sv *s, int e, const char *fmt, const char *a, const char *b);

/* UC_M_PACK: a count, then per file an entry and its path.  Checked whole before any of
 * it is used; the paths themselves are checked when the pack is split. */
static int on_pack_msg(struct sv *s, uint8_t *b, size_t n)
{
	free(s->pack);
	free(s->packbuf);
	s->pack = NULL;
	s->npack = 0;
	s->pack_bytes = 0;
	s->packbuf = malloc(n + 1);
	uint32_t count;
	if (!s->packbuf || n < 4)
		goto bad;
	memcpy(s->packbuf, b, n);
	memcpy(&count, b, 4);
	if (!count || count > UC_PACK_MAX_FILES)
		goto bad;
	s->pack = calloc(count, sizeof(*s->pack));
	if (!s->pack)
		goto bad;
	size_t at = 4;
	for (uint32_t i = 0; i < count; i++) {
		struct uc_pack_entry e;
		if (n - at < sizeof(e))
			goto bad;
		memcpy(&e, s->packbuf + at, sizeof(e));
		at += sizeof(e);
		if (!e.pathlen || e.pathlen >= UC_PATH_MAX || n - at < e.pathlen || e.size > UC_PACK_MAX_BYTES)
			goto bad;
		/* the path, NUL-terminated in a copy of its own */
		char *p = malloc(e.pathlen + 1);
		if (!p)
			goto bad;
		memcpy(p, s->packbuf + at, e.pathlen);
		p[e.pathlen] = 0;
		at += e.pathlen;
		if (memchr(p, 0, e.pathlen)) {
			free(p);
			goto bad;
		}
		s->pack[i] = (struct sv_pack){ .size = e.size, .off = s->pack_bytes, .mtime_ns = e.mtime_ns,
					       .mode = e.mode, .path = p };
		s->npack = i + 1;
		s->pack_bytes += e.size;
	}
	if (at != n || s->pack_bytes > UC_PACK_MAX_BYTES)
		goto bad;
	return 0;
bad:
	snprintf(s->err, sizeof(s->err), "client sent a malformed pack list (%zu bytes)", n);
	uc_chan_error(&s->ch, "server: %s", s->err);
	return -EPROTO;
}

static void pack_free(struct sv *s)
{
	for (unsigned i = 0; i < s->npack; i++)
		free(s->pack[i].path);
	free(s->pack);
	free(s->packbuf);
	s->pack = NULL;
	s->packbuf = NULL;
	s->npack = 0;
	s->pack_bytes = 0;
}

static int on_pack_file(struct sv *s, struct uc_file *m)
{
	struct sv_file *f = &s->f;
	if (!s->npack || m->size != s->pack_bytes) {
		snprintf(s->err, sizeof(s->err), "a pack of %llu bytes does not match its list of %u files",
			 (unsigned long long)m->size, s->npack);
		uc_chan_error(&s->ch, "server: %s", s->err);
		return -EPROTO;
	}
	f->dirfd = open(s->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(f->leaf, sizeof(f->leaf), ".uvcp-pack.%d", (int)getpid());
	snprintf(f->tmp, sizeof(f->tmp), "%s", f->leaf);
	snprintf(f->path, sizeof(f->path), "(a pack of %u files)", s->npack);
	f->fd = f->dirfd < 0 ? -1 : openat(f->dirfd, f->tmp, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	f->sfd = -1;
	f->nchunks = (m->size + s->chunk - 1) / s->chunk;
	f->hash = calloc(f->nchunks ? f->nchunks : 1, sizeof(uint64_t));
	f->done = calloc(f->nchunks ? f->nchunks : 1, 1);
	if (f->fd < 0 || !f->hash || !f->done) {
		int e = f->fd < 0 ? errno : ENOMEM;
		file_ack_err(s, e, "cannot create the pack file on the server: %s%s", strerror(e), "");
		file_close(f);
		return 0;
	}
	f->rec = (struct uc_state_rec){ .size = m->size, .chunk = s->chunk };
	f->seq = m->seq;
	f->pack = 1;
	f->resume = f->contiguous = f->received = 0;
	f->active = 1;
	struct uc_file_ack ack = { .status = 0, .resume_chunks = 0 };
	return uc_chan_send(&s->ch, UC_M_FILE_ACK, &ack, sizeof(ack));
}

/* The pack arrived whole and its digest matched: each file from it through its own
 * temporary and rename, as a single FILE would go. */
static int pack_split(struct sv *s, struct uc_status *st)
{
	struct sv_file *f = &s->f;
	uint8_t *b = malloc(1u << 20);
	if (!b) {
		st->status = ENOMEM;
		snprintf(st->err, sizeof(st->err), "out of memory");
		return -1;
	}
	int ret = 0;
	for (unsigned i = 0; i < s->npack && !ret; i++) {
		struct sv_pack *e = &s->pack[i];
		char err[UC_ERR_MAX], leaf[NAME_MAX + 1], tmp[NAME_MAX + 1];
		int dfd;
		int rc = uc_path_open_parent(s->root, e->path, 1, &dfd, leaf, sizeof(leaf), err, sizeof(err));
		if (rc) {
			st->status = (uint32_t)-rc;
			snprintf(st->err, sizeof(st->err), "%s", err);
			ret = -1;
			break;
		}
		struct stat ls;
		if (!leaf[0] || strlen(leaf) > NAME_MAX - 16 || (!fstatat(dfd, leaf, &ls, 0) && S_ISDIR(ls.st_mode))) {
			st->status = EISDIR;
			snprintf(st->err, sizeof(st->err), "'%.200s' is a directory on the server, or not a file name", e->path);
			close(dfd);
			ret = -1;
			break;
		}
		snprintf(tmp, sizeof(tmp), ".%s.uvcp-part", leaf);
		int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			st->status = (uint32_t)errno;
			snprintf(st->err, sizeof(st->err), "cannot create '%.200s' on the server: %s", e->path, strerror(errno));
			close(dfd);
			ret = -1;
			break;
		}
		for (uint64_t done = 0; done < e->size && !ret;) {
			size_t k = (size_t)(e->size - done < (1u << 20) ? e->size - done : (1u << 20));
			ssize_t r = pread(f->fd, b, k, (off_t)(e->off + done));
			ssize_t w = r == (ssize_t)k ? write(fd, b, k) : -1;
			if (w != (ssize_t)k) {
				int er = r != (ssize_t)k ? (r < 0 ? errno : EIO) : (w < 0 ? errno : ENOSPC);
				st->status = (uint32_t)er;
				snprintf(st->err, sizeof(st->err), "writing '%.200s': %s%s", e->path, strerror(er), io_why(er));
				ret = -1;
			}
			done += k;
		}
		if (!ret) {
			fchmod(fd, e->mode & 07777);
			struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
						  { .tv_sec = e->mtime_ns / 1000000000, .tv_nsec = e->mtime_ns % 1000000000 } };
			futimens(fd, ts);
			if (renameat(dfd, tmp, dfd, leaf)) {
				st->status = (uint32_t)errno;
				snprintf(st->err, sizeof(st->err), "cannot rename to '%.200s': %s", e->path, strerror(errno));
				ret = -1;
			}
		}
		if (ret) {
			unlinkat(dfd, tmp, 0);
		} else {
			/* the temporary of an interrupted copy of a bigger file of that name was
			 * this one (now renamed); its state goes too */
			char stname[NAME_MAX + 1];
			snprintf(stname, sizeof(stname), ".%s.uvcp-state", leaf);
			unlinkat(dfd, stname, 0);
		}
		close(fd);
		close(dfd);
	}
	free(b);
	return ret;
}

static int on_file(struct sv *s, struct uc_file *m)
{
	struct sv_file *f = &s->f;
	if (f->active)
		file_close(f);
	m->path[UC_PATH_MAX - 1] = 0;
	char err[UC_ERR_MAX];
	if (m->chunk != s->chunk) {
		file_ack_err(s, EPROTO, "the chunk size differs from the session's%s%s", "", "");
		return -EPROTO;
	}
	if (m->flags & UC_F_PACK)
		return on_pack_file(s, m);
	int dfd;
	int rc = uc_path_open_parent(s->root, m->path, 1, &dfd, f->leaf, sizeof(f->leaf), err, sizeof(err));
	if (rc) {
		file_ack_err(s, -rc, "%s%s", err, "");
		return 0;
	}
	f->dirfd = dfd;
	if (!f->leaf[0] || strlen(f->leaf) > NAME_MAX - 16) {
		file_ack_err(s, EINVAL, "'%.200s': not a file name%s", m->path, "");
		file_close(f);
		return 0;
	}
	snprintf(f->path, sizeof(f->path), "%s", m->path);
	snprintf(f->tmp, sizeof(f->tmp), ".%s.uvcp-part", f->leaf);
	snprintf(f->st, sizeof(f->st), ".%s.uvcp-state", f->leaf);
	struct stat ls;
	if (!fstatat(dfd, f->leaf, &ls, 0) && S_ISDIR(ls.st_mode)) {
		file_ack_err(s, EISDIR, "'%.200s' is a directory on the server%s", m->path, "");
		file_close(f);
		return 0;
	}
	f->seq = m->seq;
	f->mode = m->mode;
	f->nchunks = (m->size + s->chunk - 1) / s->chunk;
	f->hash = calloc(f->nchunks ? f->nchunks : 1, sizeof(uint64_t));
	f->done = calloc(f->nchunks ? f->nchunks : 1, 1);
	if (!f->hash || !f->done) {
		file_ack_err(s, ENOMEM, "out of memory for '%.200s'%s", m->path, "");
		file_close(f);
		return 0;
	}
	f->rec = (struct uc_state_rec){ .magic = UC_STATE_MAGIC, .version = 1, .size = m->size,
					.mtime_ns = m->mtime_ns, .chunk = s->chunk };
	/* An earlier attempt of the same source (size, mtime and chunk size equal)? */
	uint64_t resume = 0;
	f->sfd = openat(dfd, f->st, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	f->fd = openat(dfd, f->tmp, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (f->sfd >= 0 && f->fd >= 0) {
		struct uc_state_rec old;
		if (pread(f->sfd, &old, sizeof(old), 0) == (ssize_t)sizeof(old) && old.magic == UC_STATE_MAGIC &&
		    old.version == 1 && old.size == m->size && old.mtime_ns == m->mtime_ns && old.chunk == s->chunk &&
		    old.verified <= f->nchunks && !rehash_prefix(s, f, old.verified))
			resume = old.verified;
	}
	if (!resume) {
		if (f->sfd >= 0)
			close(f->sfd);
		if (f->fd >= 0)
			close(f->fd);
		memset(f->done, 0, f->nchunks ? f->nchunks : 1);
		f->fd = openat(dfd, f->tmp, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		f->sfd = f->fd < 0 ? -1 : openat(dfd, f->st, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (f->fd < 0 || f->sfd < 0) {
			int e = errno;
			char where[UC_PATH_MAX + NAME_MAX + 8];
			snprintf(where, sizeof(where), "%s", m->path);
			char *sl = strrchr(where, '/');
			snprintf(sl ? sl + 1 : where, sizeof(where) - (size_t)(sl ? sl + 1 - where : 0), "%s",
				 f->fd < 0 ? f->tmp : f->st);
			file_ack_err(s, e, "cannot create '%.200s' on the server: %s", where, strerror(e));
			file_close(f);
			return 0;
		}
	}
	f->resume = f->contiguous = resume;
	f->received = 0;
	rc = state_write(f);
	if (rc) {
		file_ack_err(s, -rc, "cannot write the state of '%.200s': %s", m->path, strerror(-rc));
		file_close(f);
		return 0;
	}
	f->active = 1;
	struct uc_file_ack ack = { .status = 0, .resume_chunks = resume };
	return uc_chan_send(&s->ch, UC_M_FILE_ACK, &ack, sizeof(ack));
}

static int on_file_end(struct sv *s, const struct uc_file_end *e)
{
	struct sv_file *f = &s->f;
	struct uc_status st = { 0 };
	if (!f->active) {
		st.status = EPROTO;
		snprintf(st.err, sizeof(st.err), "no file open");
		return uc_chan_send(&s->ch, UC_M_FILE_DONE, &st, sizeof(st));
	}
	uint64_t digest = XXH3_64bits(f->hash, (size_t)f->nchunks * sizeof(uint64_t));
	if (e->nchunks != f->nchunks || f->contiguous != f->nchunks) {
		st.status = EIO;
		snprintf(st.err, sizeof(st.err), "'%.200s': %llu of %llu chunks arrived", f->path,
			 (unsigned long long)f->contiguous, (unsigned long long)f->nchunks);
	} else if (digest == e->digest && f->pack) {
		pack_split(s, &st);
		unlinkat(f->dirfd, f->tmp, 0);
	} else if (digest != e->digest) {
		st.status = EIO;
		snprintf(st.err, sizeof(st.err), "'%.200s': file digest mismatch (client %016llx, server %016llx); the partial copy was removed",
			 f->path, (unsigned long long)e->digest, (unsigned long long)digest);
		unlinkat(f->dirfd, f->tmp, 0);
		unlinkat(f->dirfd, f->st, 0);
	} else {
		fchmod(f->fd, f->mode & 07777);
		struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
					  { .tv_sec = f->rec.mtime_ns / 1000000000, .tv_nsec = f->rec.mtime_ns % 1000000000 } };
		futimens(f->fd, ts);
		if (renameat(f->dirfd, f->tmp, f->dirfd, f->leaf)) {
			int er = errno;
			st.status = (uint32_t)er;
			snprintf(st.err, sizeof(st.err), "cannot rename to '%.200s': %s", f->path, strerror(er));
		} else {
			unlinkat(f->dirfd, f->st, 0);
		}
	}
	if (f->pack) {
		unlinkat(f->dirfd, f->tmp, 0);   /* a pack never stays: it is not resumed */
		pack_free(s);
	}
	file_close(f);
	return uc_chan_send(&s->ch, UC_M_FILE_DONE, &st, sizeof(st));
}

static int on_stat(struct sv *s, char *path)
{
	struct uc_status st = { 0 };
	int dfd;
	char leaf[NAME_MAX + 1];
	int rc = uc_path_open_parent(s->root, path, 0, &dfd, leaf, sizeof(leaf), st.err, sizeof(st.err));
	if (rc == -ENOENT) {
		st.kind = UC_K_NONE;
		st.err[0] = 0;
	} else if (rc) {
		st.status = (uint32_t)-rc;
	} else {
		struct stat sb;
		if (!leaf[0])
			st.kind = UC_K_DIR;
		else if (fstatat(dfd, leaf, &sb, 0))
			st.kind = UC_K_NONE;
		else
			st.kind = S_ISDIR(sb.st_mode) ? UC_K_DIR : S_ISREG(sb.st_mode) ? UC_K_FILE : UC_K_OTHER;
		close(dfd);
	}
	return uc_chan_send(&s->ch, UC_M_STAT_ACK, &st, sizeof(st));
}

static int on_mkdir(struct sv *s, struct uc_mkdir *m)
{
	struct uc_status st = { 0 };
	m->path[UC_PATH_MAX - 1] = 0;
	int dfd;
	char leaf[NAME_MAX + 1];
	int rc = uc_path_open_parent(s->root, m->path, 1, &dfd, leaf, sizeof(leaf), st.err, sizeof(st.err));
	if (rc) {
		st.status = (uint32_t)-rc;
	} else {
		struct stat sb;
		if (leaf[0] && mkdirat(dfd, leaf, (m->mode & 07777) | 0700) && errno != EEXIST) {
			st.status = (uint32_t)errno;
			snprintf(st.err, sizeof(st.err), "cannot create directory '%.200s' on the server: %s", m->path,
				 strerror(errno));
		} else if (leaf[0] && (fstatat(dfd, leaf, &sb, 0) || !S_ISDIR(sb.st_mode))) {
			st.status = ENOTDIR;
			snprintf(st.err, sizeof(st.err), "'%.200s' exists on the server and is not a directory", m->path);
		}
		close(dfd);
	}
	return uc_chan_send(&s->ch, UC_M_MKDIR_ACK, &st, sizeof(st));
}

static int send_ack(struct sv *s, unsigned q, unsigned slot, unsigned verdict)
{
	struct uc_qp *p = &s->ep.qp[q];
	if (p->sq_out >= 2 * s->ep.depth) {
		s->pend[q][s->npend[q]++] = uc_ack_imm(slot, verdict);
		return 0;
	}
	return uc_ep_ack(&s->ep, q, slot, verdict) ? -EIO : 0;
}

/* One chunk arrived in slot `slot` of QP q: check, store, give the slot back. */
static int on_chunk(struct sv *s, unsigned q, unsigned slot)
{
	struct sv_file *f = &s->f;
	struct uc_chunk_hdr h;
	uint8_t *b = uc_slot(&s->ep, q, slot);
	memcpy(&h, b, sizeof(h));
	uint64_t off = h.index * s->chunk;
	if (!f->active || h.magic != UC_MAGIC || h.seq != f->seq || h.index >= f->nchunks || h.len > s->chunk ||
	    off + h.len != (f->rec.size - off < s->chunk ? f->rec.size : off + s->chunk)) {
		snprintf(s->err, sizeof(s->err), "a chunk with a bad header arrived (file %u, chunk %llu, %u bytes)", h.seq,
			 (unsigned long long)h.index, h.len);
		uc_chan_error(&s->ch, "server: %s", s->err);
		return -EPROTO;
	}
	unsigned verdict = UC_ACK_OK;
	if (XXH3_64bits(b + UC_HDR, h.len) != h.hash) {
		verdict = UC_ACK_BADHASH;
	} else if (!f->done[h.index]) {
		ssize_t k = pwrite(f->fd, b + UC_HDR, h.len, (off_t)off);
		if (k != (ssize_t)h.len) {
			int e = k < 0 ? errno : ENOSPC;
			snprintf(s->err, sizeof(s->err), "writing '%.200s': %s%s", f->path, strerror(e), io_why(e));
			uc_chan_error(&s->ch, "server: %s; the partial copy is kept to resume", s->err);
			return -e;
		}
		f->done[h.index] = 1;
		f->hash[h.index] = h.hash;
		f->received++;
		uint64_t before = f->contiguous;
		while (f->contiguous < f->nchunks && f->done[f->contiguous])
			f->contiguous++;
		if (f->contiguous != before) {
			int rc = state_write(f);
			if (rc) {
				snprintf(s->err, sizeof(s->err), "writing the state of '%.200s': %s%s", f->path, strerror(-rc),
					 io_why(-rc));
				uc_chan_error(&s->ch, "server: %s", s->err);
				return rc;
			}
		}
	}
	if (uc_ep_post_recv(&s->ep, q, slot))
		return -EIO;
	return send_ack(s, q, slot, verdict);
}

static int on_msg(struct sv *s)
{
	union msg {
		struct uc_file file;
		struct uc_file_end end;
		struct uc_mkdir mk;
		char path[UC_PATH_MAX];
	};
	if (!s->msg)
		s->msg = malloc(UC_MSG_MAX > sizeof(union msg) ? UC_MSG_MAX : sizeof(union msg));
	if (!s->msg) {
		snprintf(s->err, sizeof(s->err), "out of memory");
		return -ENOMEM;
	}
	union msg *mp = (union msg *)s->msg;
#define m (*mp)
	uint32_t t;
	int n = uc_chan_recv(&s->ch, &t, s->msg, UC_MSG_MAX);
	if (n < 0) {
		snprintf(s->err, sizeof(s->err), "client: %s", uc_chan_why(n));
		return n;
	}
	switch (t) {
	case UC_M_FILE:
		if ((size_t)n != sizeof(m.file))
			break;
		return on_file(s, &m.file);
	case UC_M_FILE_END:
		if ((size_t)n != sizeof(m.end))
			break;
		return on_file_end(s, &m.end);
	case UC_M_STAT:
		m.path[n < UC_PATH_MAX ? n : UC_PATH_MAX - 1] = 0;
		return on_stat(s, m.path);
	case UC_M_MKDIR:
		if ((size_t)n != sizeof(m.mk))
			break;
		return on_mkdir(s, &m.mk);
	case UC_M_PACK:
		return on_pack_msg(s, s->msg, (size_t)n);
	case UC_M_BYE:
		s->bye = 1;
		return 0;
	case UC_M_ERROR:
		snprintf(s->err, sizeof(s->err), "client gave up: %.*s", n < 400 ? n : 400, m.path);
		return -ECANCELED;
	default:
		break;
	}
	snprintf(s->err, sizeof(s->err), "client sent an unexpected message %u of %d bytes", t, n);
	return -EPROTO;
#undef m
}

static int session(struct sv *s, unsigned timeout_s, const char *const *devs, unsigned ndev, int gid)
{
	struct uc_hello h;
	int n = uc_chan_expect(&s->ch, UC_M_HELLO, &h, sizeof(h), s->err, sizeof(s->err));
	if (n < 0)
		return n;
	static struct uc_hello_ack ack;
	memset(&ack, 0, sizeof(ack));
	if (n != sizeof(h) || h.magic != UC_MAGIC || h.version != UC_VERSION) {
		snprintf(s->err, sizeof(s->err), "the client is not uvcp version %d", UC_VERSION);
		uc_chan_error(&s->ch, "server: %s", s->err);
		return -EPROTO;
	}
	if (!h.nqps || h.nqps > UC_MAX_QPS || !h.depth || h.depth > UC_MAX_DEPTH || h.chunk < UC_MIN_CHUNK ||
	    h.chunk > UC_MAX_CHUNK) {
		snprintf(s->err, sizeof(s->err), "bad queue shape (%u QPs, depth %u, chunk %u)", h.nqps, h.depth, h.chunk);
		uc_chan_error(&s->ch, "server: %s", s->err);
		return -EINVAL;
	}
	s->chunk = h.chunk;
	int rc = uc_ep_open(&s->ep, devs, ndev, gid, h.nqps, h.depth, h.chunk, 1, s->err, sizeof(s->err));
	if (rc) {
		uc_chan_error(&s->ch, "server: %s", s->err);
		return rc;
	}
	ack.nqps = h.nqps;
	uc_ep_names(&s->ep, ack.devices, sizeof(ack.devices));
	for (unsigned q = 0; q < h.nqps; q++)
		ack.qp[q] = s->ep.qp[q].local;
	rc = uc_chan_send(&s->ch, UC_M_HELLO_ACK, &ack, sizeof(ack));
	struct uc_qpinfo remote[UC_MAX_QPS];
	if (!rc) {
		n = uc_chan_expect(&s->ch, UC_M_QPINFO, remote, sizeof(remote), s->err, sizeof(s->err));
		if (n < 0)
			return n;
		if ((size_t)n != h.nqps * sizeof(remote[0])) {
			snprintf(s->err, sizeof(s->err), "client sent %d bytes of QP information", n);
			return -EPROTO;
		}
		for (unsigned q = 0; q < h.nqps; q++)
			s->ep.qp[q].remote = remote[q];
		rc = uc_ep_connect(&s->ep, s->err, sizeof(s->err));
		if (rc) {
			uc_chan_error(&s->ch, "server: %s", s->err);
			return rc;
		}
		rc = uc_chan_send(&s->ch, UC_M_READY, NULL, 0);
	}
	if (rc) {
		snprintf(s->err, sizeof(s->err), "client: %s", uc_chan_why(rc));
		return rc;
	}

	struct ibv_wc wc[64];
	double idle_since = uc_now();
	while (!s->bye) {
		n = uc_ep_poll(&s->ep, wc, 64);
		if (n < 0) {
			snprintf(s->err, sizeof(s->err), "polling the CQ failed");
			return n;
		}
		for (int i = 0; i < n; i++) {
			unsigned q = (unsigned)(wc[i].wr_id >> 16), slot = (unsigned)(wc[i].wr_id & 0xffff);
			if (wc[i].status != IBV_WC_SUCCESS) {
				snprintf(s->err, sizeof(s->err), "RDMA: %s on QP %u (the client is gone?)",
					 ibv_wc_status_str(wc[i].status), q);
				return -EIO;
			}
			if (q >= s->ep.nqps)
				continue;
			if (wc[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
				slot = ntohl(wc[i].imm_data);
				if (slot >= s->ep.depth) {
					snprintf(s->err, sizeof(s->err), "a write named slot %u of %u", slot, s->ep.depth);
					return -EPROTO;
				}
				rc = on_chunk(s, q, slot);
				if (rc)
					return rc;
			} else if (!(wc[i].opcode & IBV_WC_RECV)) {
				struct uc_qp *p = &s->ep.qp[q];
				p->sq_out--;
				while (s->npend[q] && p->sq_out < 2 * s->ep.depth) {
					uint32_t imm = s->pend[q][0];
					memmove(s->pend[q], s->pend[q] + 1, --s->npend[q] * sizeof(unsigned));
					if (uc_ep_ack(&s->ep, q, imm & 0xffff, imm >> 16))
						return -EIO;
				}
			}
		}
		if (n) {
			idle_since = uc_now();
			continue;
		}
		int w = uc_ep_wait(&s->ep, s->ch.fd, -1, 1000);
		if (w < 0) {
			snprintf(s->err, sizeof(s->err), "waiting for completions: %s", strerror(-w));
			return w;
		}
		if (w == 1) {
			rc = on_msg(s);
			if (rc)
				return rc;
			idle_since = uc_now();
		} else if (uc_now() - idle_since > timeout_s) {
			snprintf(s->err, sizeof(s->err), "the client sent nothing for %u s", timeout_s);
			return -ETIMEDOUT;
		}
	}
	return 0;
}

int uc_serve(const char *root, const char *addr, int port, const char *const *devs, unsigned ndev, int gid,
	     int once, unsigned timeout_s)
{
	char real[PATH_MAX], err[UC_ERR_MAX];
	if (!realpath(root, real)) {
		fprintf(stderr, "uvcp: --root %s: %s\n", root, strerror(errno));
		return 1;
	}
	struct stat st;
	if (stat(real, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "uvcp: --root %s: not a directory\n", root);
		return 1;
	}
	/* A pack is never resumed: one a killed server left in the root goes now. */
	DIR *dir = opendir(real);
	if (dir) {
		struct dirent *de;
		while ((de = readdir(dir)))
			if (!strncmp(de->d_name, ".uvcp-pack.", 11))
				unlinkat(dirfd(dir), de->d_name, 0);
		closedir(dir);
	}
	int lfd = uc_chan_listen(addr, port, err, sizeof(err));
	if (lfd < 0) {
		fprintf(stderr, "uvcp: %s\n", err);
		return 1;
	}
	fprintf(stderr, "uvcp: serving %s on %s port %d\n", real, addr, port);
	fflush(stderr);
	int status = 0;
	for (;;) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		int fd = accept(lfd, (struct sockaddr *)&from, &fl);
		if (fd < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "uvcp: accept: %s\n", strerror(errno));
			status = 1;
			break;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		static struct sv s;
		memset(&s, 0, sizeof(s));
		s.f.fd = s.f.sfd = s.f.dirfd = -1;
		s.root = real;
		s.ch = (struct uc_chan){ .fd = fd, .timeout_ms = timeout_s * 1000 };
		char who[INET_ADDRSTRLEN] = "?";
		inet_ntop(AF_INET, &from.sin_addr, who, sizeof(who));
		double t0 = uc_now();
		int rc = session(&s, timeout_s, devs, ndev, gid);
		if (rc)
			fprintf(stderr, "uvcp: session from %s ended: %s\n", who, s.err);
		else
			fprintf(stderr, "uvcp: session from %s done in %.1f s\n", who, uc_now() - t0);
		fflush(stderr);
		if (s.f.active) {
			if (s.f.pack)
				unlinkat(s.f.dirfd, s.f.tmp, 0);
			file_close(&s.f);
		}
		pack_free(&s);
		free(s.msg);
		uc_ep_close(&s.ep);
		close(fd);
		if (once) {
			status = rc ? 1 : 0;
			break;
		}
	}
	close(lfd);
	return status;
}
