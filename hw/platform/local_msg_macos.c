/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/local_msg.h on macOS: AF_UNIX SOCK_STREAM, framed by each message's
 * length word.  POSIX alone, so tests/platform runs it on Linux too. */
#include "hw/platform/local_msg.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hw/platform/local_msg_common.h"
#include "hw/platform/sock.h"

/* One lock per descriptor slot: the threads of this process that send on one socket
 * (a client's posting threads, the daemon's event routing) take turns per message. */
#define LMSG_LOCKS 64
static pthread_mutex_t lmsg_lock[LMSG_LOCKS] = {
#define L4 PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER
	L4, L4, L4, L4, L4, L4, L4, L4, L4, L4, L4, L4, L4, L4, L4, L4
#undef L4
};

int plat_lmsg_socket(void)
{
	return plat_socket(AF_UNIX, SOCK_STREAM, 0);
}

int plat_lmsg_socketpair(int sv[2])
{
	return plat_socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
}

#ifdef MSG_NOSIGNAL
#define LMSG_NOSIGNAL MSG_NOSIGNAL
#else
#define LMSG_NOSIGNAL 0      /* SO_NOSIGPIPE, set by plat_socket */
#endif

int plat_lmsg_send(int fd, const struct iovec *iov_in, int iovcnt, int pass_fd, unsigned flags)
{
	enum { MAXIOV = 8 };
	struct iovec iov[MAXIOV];
	size_t total;
	if (iovcnt > MAXIOV)
		return -EMSGSIZE;
	int rc = plat_lmsg_frame_check(iov_in, iovcnt, &total);
	if (rc)
		return rc;
	for (int i = 0; i < iovcnt; i++)
		iov[i] = iov_in[i];
	union plat_lmsg_cmsg cm;
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = iovcnt };
	plat_lmsg_attach_fd(&m, &cm, pass_fd);
	pthread_mutex_t *lk = &lmsg_lock[(unsigned)fd % LMSG_LOCKS];
	pthread_mutex_lock(lk);
	size_t sent = 0;
	/* The first call may be told not to wait; once part of the message is out, the rest
	 * must follow or the stream loses its framing: those calls wait. */
	int f = LMSG_NOSIGNAL | ((flags & PLAT_LMSG_DONTWAIT) ? MSG_DONTWAIT : 0);
	while (sent < total) {
		ssize_t n = sendmsg(fd, &m, f);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		sent += (size_t)n;
		f = LMSG_NOSIGNAL;
		m.msg_control = NULL;     /* the descriptor went with the first byte */
		m.msg_controllen = 0;
		while (n > 0 && m.msg_iovlen > 0) {
			size_t k = (size_t)n < m.msg_iov[0].iov_len ? (size_t)n : m.msg_iov[0].iov_len;
			m.msg_iov[0].iov_base = (char *)m.msg_iov[0].iov_base + k;
			m.msg_iov[0].iov_len -= k;
			n -= (ssize_t)k;
			if (m.msg_iov[0].iov_len == 0) {
				m.msg_iov++;
				m.msg_iovlen--;
			}
		}
	}
	pthread_mutex_unlock(lk);
	return rc;
}

/* Read exactly len bytes (to buf, or dropped when buf is NULL), collecting a passed
 * descriptor; 1 when all came, 0 at end of stream, -errno. */
static int lmsg_read(int fd, char *buf, size_t len, int *got, int first_flags)
{
	char sink[512];
	int f = first_flags;
	while (len) {
		union plat_lmsg_cmsg cm;
		struct iovec iov = { buf ? (void *)buf : sink, buf ? len : (len < sizeof(sink) ? len : sizeof(sink)) };
		struct msghdr r = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf,
				    .msg_controllen = sizeof(cm.buf) };
		ssize_t n = recvmsg(fd, &r, f);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		plat_lmsg_take_fds(&r, got);
		if (*got >= 0)     /* macOS has no MSG_CMSG_CLOEXEC */
			fcntl(*got, F_SETFD, FD_CLOEXEC);
		if (buf)
			buf += n;
		len -= (size_t)n;
		f = 0;    /* a message that has begun to arrive is read whole */
	}
	return 1;
}

ssize_t plat_lmsg_recv(int fd, void *buf, size_t cap, int *fd_out, unsigned flags)
{
	uint32_t len;
	int got = -1;
	if (fd_out)
		*fd_out = -1;
	if (cap < sizeof(len))
		return -EINVAL;
	int rc = lmsg_read(fd, buf, sizeof(len), &got, (flags & PLAT_LMSG_DONTWAIT) ? MSG_DONTWAIT : 0);
	if (rc == 1) {
		memcpy(&len, buf, sizeof(len));
		if (len < sizeof(len))
			len = sizeof(len);    /* cannot be framed: the word alone, for the caller to drop */
		size_t in = len < cap ? len : cap;
		rc = lmsg_read(fd, (char *)buf + sizeof(len), in - sizeof(len), &got, 0);
		if (rc == 1 && len > in)
			rc = lmsg_read(fd, NULL, len - in, &got, 0);
	}
	if (rc == 1 && fd_out)
		*fd_out = got;
	else if (got >= 0)
		close(got);
	/* end of stream inside a message: the peer is gone all the same */
	return rc == 1 ? (ssize_t)len : rc;
}
