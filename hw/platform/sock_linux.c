/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/sock.h on Linux. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stddef.h>
#include <string.h>

#include "hw/platform/sock.h"

int plat_socket(int domain, int type, int protocol)
{
	int fd = socket(domain, type | SOCK_CLOEXEC, protocol);

	return fd < 0 ? -errno : fd;
}

int plat_socketpair(int domain, int type, int protocol, int sv[2])
{
	return socketpair(domain, type | SOCK_CLOEXEC, protocol, sv) < 0 ? -errno : 0;
}

int plat_accept(int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

ssize_t plat_send(int fd, const void *buf, size_t len, int flags)
{
	return send(fd, buf, len, flags | MSG_NOSIGNAL);
}

int plat_sock_set_df(int fd)
{
	/* ip(7): IP_PMTUDISC_DO sets DF on every packet and never fragments locally. */
	int v = IP_PMTUDISC_DO;

	return setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof(v)) < 0 ? -errno : 0;
}

/* struct plat_dgram is struct mmsghdr (recvmmsg(2)) under another name. */
_Static_assert(sizeof(struct plat_dgram) == sizeof(struct mmsghdr) &&
		       offsetof(struct plat_dgram, len) == offsetof(struct mmsghdr, msg_len),
	       "struct plat_dgram must have struct mmsghdr's layout");

int plat_recv_many(int fd, struct plat_dgram *v, unsigned n, int flags)
{
	/* MSG_WAITFORONE: once one has arrived, take only what is already queued */
	int r = recvmmsg(fd, (struct mmsghdr *)v, n, flags | MSG_WAITFORONE, NULL);

	return r < 0 ? -errno : r;
}

int plat_send_many(int fd, struct plat_dgram *v, unsigned n)
{
	int r = sendmmsg(fd, (struct mmsghdr *)v, n, 0);

	return r < 0 ? -errno : r;
}

size_t plat_udp_segment_cmsg(struct cmsghdr *c, unsigned short seg)
{
	c->cmsg_level = SOL_UDP;
	c->cmsg_type = UDP_SEGMENT;
	c->cmsg_len = CMSG_LEN(sizeof(seg));
	memcpy(CMSG_DATA(c), &seg, sizeof(seg));
	return PLAT_UDP_SEGMENT_SPACE;
}

bool plat_udp_segment_supported(int fd)
{
	int v = 0;
	socklen_t len = sizeof(v);

	return getsockopt(fd, SOL_UDP, UDP_SEGMENT, &v, &len) == 0;
}

int plat_udp_gro_enable(int fd)
{
	int one = 1;

	return setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one)) == 0 ? 0 : -errno;
}

/* udp(7): "the size of each segment is stored in a cmsg of type UDP_GRO", an int
 * (Linux udp_cmsg_recv) */
unsigned plat_udp_gro_segment(const struct cmsghdr *c)
{
	int seg;

	if (c->cmsg_level != SOL_UDP || c->cmsg_type != UDP_GRO || c->cmsg_len < CMSG_LEN(sizeof(int)))
		return 0;
	memcpy(&seg, CMSG_DATA(c), sizeof(seg));
	return seg > 0 ? (unsigned)seg : 0;
}
