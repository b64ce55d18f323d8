/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/local_msg.h on Linux: AF_UNIX SOCK_SEQPACKET keeps each message whole. */
#include "hw/platform/local_msg.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hw/platform/local_msg_common.h"
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
	size_t total;
	int rc = plat_lmsg_frame_check(iov, iovcnt, &total);
	if (rc)
		return rc;
	union plat_lmsg_cmsg cm;
	struct msghdr m = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt };
	plat_lmsg_attach_fd(&m, &cm, pass_fd);
	int f = MSG_NOSIGNAL | ((flags & PLAT_LMSG_DONTWAIT) ? MSG_DONTWAIT : 0);
	ssize_t n;
	do
		n = sendmsg(fd, &m, f);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : 0;
}

ssize_t plat_lmsg_recv(int fd, void *buf, size_t cap, int *fd_out, unsigned flags)
{
	union plat_lmsg_cmsg cm;
	struct iovec iov = { buf, cap };
	struct msghdr r = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf,
			    .msg_controllen = sizeof(cm.buf) };
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
	plat_lmsg_take_fds(&r, &got);   /* close-on-exec already: MSG_CMSG_CLOEXEC */
	if (fd_out)
		*fd_out = got;
	else if (got >= 0)
		close(got);
	if ((r.msg_flags & MSG_TRUNC) && (size_t)n <= cap)
		n = (ssize_t)cap + 1;
	return n;
}
