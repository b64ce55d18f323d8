/* hw/platform/sock.h on Linux. */
#include <errno.h>
#include <netinet/in.h>

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
