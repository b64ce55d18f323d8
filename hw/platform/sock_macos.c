/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/sock.h on macOS. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <unistd.h>

#include "hw/platform/sock.h"

/* FD_CLOEXEC, and SO_NOSIGPIPE on a stream socket (macOS has no MSG_NOSIGNAL). */
static int plat_sock_prepare(int fd, int type)
{
	int one = 1;

	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return -errno;
	if (type == SOCK_STREAM && setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one)) < 0)
		return -errno;
	return 0;
}

/* fd as socket() or accept() returned it, prepared: fd, or -errno (fd closed). */
static int plat_sock_ready(int fd, int type)
{
	int rc;

	if (fd < 0)
		return -errno;
	rc = plat_sock_prepare(fd, type);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

int plat_socket(int domain, int type, int protocol)
{
	return plat_sock_ready(socket(domain, type, protocol), type);
}

int plat_socketpair(int domain, int type, int protocol, int sv[2])
{
	int rc;

	if (socketpair(domain, type, protocol, sv) < 0)
		return -errno;
	rc = plat_sock_prepare(sv[0], type);
	if (!rc)
		rc = plat_sock_prepare(sv[1], type);
	if (rc) {
		close(sv[0]);
		close(sv[1]);
	}
	return rc;
}

int plat_accept(int lfd)
{
	return plat_sock_ready(accept(lfd, NULL, NULL), SOCK_STREAM);
}

ssize_t plat_send(int fd, const void *buf, size_t len, int flags)
{
	/* SO_NOSIGPIPE was set when the socket was made here. */
	return send(fd, buf, len, flags);
}

int plat_sock_set_df(int fd)
{
	/* ip(4): IP_DONTFRAG sets DF on outgoing datagrams of this socket. */
	int one = 1;

	return setsockopt(fd, IPPROTO_IP, IP_DONTFRAG, &one, sizeof(one)) < 0 ? -errno : 0;
}

/* macOS has no recvmmsg/sendmmsg in its public headers: one call per datagram, the
 * ones after the first never waiting. */
static int one_by_one(int fd, struct plat_dgram *v, unsigned n, int flags, int send)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		ssize_t r = send ? sendmsg(fd, &v[i].hdr, 0)
				 : recvmsg(fd, &v[i].hdr, i ? flags | MSG_DONTWAIT : flags);

		if (r < 0) {
			if (i)
				break;
			return -errno;
		}
		v[i].len = (unsigned int)r;
	}
	return (int)i;
}

int plat_recv_many(int fd, struct plat_dgram *v, unsigned n, int flags)
{
	return one_by_one(fd, v, n, flags, 0);
}

int plat_send_many(int fd, struct plat_dgram *v, unsigned n)
{
	return one_by_one(fd, v, n, 0, 1);
}

size_t plat_udp_segment_cmsg(struct cmsghdr *c, unsigned short seg)
{
	(void)c;
	(void)seg;
	return 0;   /* no UDP segmentation offload */
}

bool plat_udp_segment_supported(int fd)
{
	(void)fd;
	return false;
}

int plat_udp_gro_enable(int fd)
{
	(void)fd;
	return -EOPNOTSUPP;   /* no UDP receive coalescing */
}

unsigned plat_udp_gro_segment(const struct cmsghdr *c)
{
	(void)c;
	return 0;
}
