/* hw/platform/local_msg.h on Linux: AF_UNIX SOCK_SEQPACKET keeps each message whole. */
#include "hw/platform/local_msg.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hw/platform/sock.h"

int plat_lmsg_socket(void)
{
	return plat_socket(AF_UNIX, SOCK_SEQPACKET, 0);
}

int plat_lmsg_socketpair(int sv[2])
{
	return plat_socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv);
}

int plat_lmsg_send(int fd, const struct iovec *iov, int iovcnt, int pass_fd, unsigned flags)
{
	size_t total = 0;
	uint32_t len = 0;
	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	if (iovcnt < 1 || iov[0].iov_len < sizeof(len))
		return -EMSGSIZE;
	memcpy(&len, iov[0].iov_base, sizeof(len));
	if (len != total)
		return -EMSGSIZE;
	union {
		struct cmsghdr c;
		char buf[CMSG_SPACE(sizeof(int))];
	} cm;
	struct msghdr m = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt };
	if (pass_fd >= 0) {
		memset(&cm, 0, sizeof(cm));
		m.msg_control = cm.buf;
		m.msg_controllen = sizeof(cm.buf);
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
	}
	int f = MSG_NOSIGNAL | ((flags & PLAT_LMSG_DONTWAIT) ? MSG_DONTWAIT : 0);
	ssize_t n;
	do
		n = sendmsg(fd, &m, f);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : 0;
}

ssize_t plat_lmsg_recv(int fd, void *buf, size_t cap, int *fd_out, unsigned flags)
{
	union {
		struct cmsghdr c;
		char b[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { buf, cap };
	struct msghdr r = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
			    .msg_controllen = sizeof(cm.b) };
	/* MSG_TRUNC: the real length of a message larger than the buffer (unix(7)). */
	int f = MSG_TRUNC | MSG_CMSG_CLOEXEC | ((flags & PLAT_LMSG_DONTWAIT) ? MSG_DONTWAIT : 0);
	ssize_t n;
	if (fd_out)
		*fd_out = -1;
	do
		n = recvmsg(fd, &r, f);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	int got = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&r); c; c = CMSG_NXTHDR(&r, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(int))) {
			int one;
			memcpy(&one, CMSG_DATA(c), sizeof(int));
			if (got >= 0)
				close(got);
			got = one;
		}
	if (fd_out)
		*fd_out = got;
	else if (got >= 0)
		close(got);
	if ((r.msg_flags & MSG_TRUNC) && (size_t)n <= cap)
		n = (ssize_t)cap + 1;
	return n;
}
