/* uvperf: the TCP side channel (uvperf.h).  Messages are a 4-byte type, a 4-byte length
 * and the payload, in host order: both ends are the same program on machines of one
 * byte order (the hwcheck peers are x86-64 and arm64, both little-endian). */
#include "tools/uvperf/uvperf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hw/platform/errno.h"
#include "hw/platform/sock.h"

static int write_all(int fd, const void *p, size_t len)
{
	const uint8_t *b = p;
	while (len) {
		ssize_t k = plat_send(fd, b, len, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EPIPE;
		b += k;
		len -= (size_t)k;
	}
	return 0;
}

static int read_all(int fd, void *p, size_t len)
{
	uint8_t *b = p;
	while (len) {
		ssize_t k = recv(fd, b, len, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -ECONNRESET;
		b += k;
		len -= (size_t)k;
	}
	return 0;
}

int up_chan_send(int fd, uint32_t type, const void *p, size_t len)
{
	uint32_t hdr[2] = { type, (uint32_t)len };
	int rc = write_all(fd, hdr, sizeof(hdr));
	return rc ? rc : write_all(fd, p, len);
}

int up_chan_recv(int fd, uint32_t *type, void *p, size_t max)
{
	uint32_t hdr[2];
	int rc = read_all(fd, hdr, sizeof(hdr));
	if (rc)
		return rc;
	*type = hdr[0];
	if (hdr[1] > max)
		return -EMSGSIZE;
	rc = read_all(fd, p, hdr[1]);
	return rc ? rc : (int)hdr[1];
}

int up_chan_expect(int fd, uint32_t type, void *p, size_t len, char *err, size_t errlen)
{
	uint32_t t = 0;
	char tmp[512];
	int n;
	if (type == UP_M_ERROR || len >= sizeof(tmp))
		n = up_chan_recv(fd, &t, p, len);
	else {
		n = up_chan_recv(fd, &t, tmp, sizeof(tmp) - 1);
		if (n >= 0 && t == type)
			memcpy(p, tmp, (size_t)n < len ? (size_t)n : len);
	}
	if (n < 0) {
		snprintf(err, errlen, "side channel: %s", n == -ECONNRESET ? "peer closed the connection" : strerror(-n));
		return n;
	}
	if (t == UP_M_ERROR) {
		tmp[n < (int)sizeof(tmp) ? n : (int)sizeof(tmp) - 1] = 0;
		snprintf(err, errlen, "peer: %s", tmp);
		return -EREMOTEIO;
	}
	if (t != type || (size_t)n != len) {
		snprintf(err, errlen, "side channel: expected message %u of %zu bytes, got %u of %d", type, len, t, n);
		return -EPROTO;
	}
	return n;
}

int up_chan_ready(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, 0);
	return n < 0 ? -errno : n > 0;
}

static int make_addr(const char *addr, int port, struct sockaddr_in *sa, char *err, size_t errlen)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, addr, &sa->sin_addr) != 1) {
		snprintf(err, errlen, "'%s' is not an IPv4 address", addr);
		return -EINVAL;
	}
	return 0;
}

int up_chan_listen(const char *addr, int port, char *err, size_t errlen)
{
	struct sockaddr_in sa;
	int rc = make_addr(addr, port, &sa, err, errlen);
	if (rc)
		return rc;
	int fd = plat_socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return fd;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 4)) {
		rc = -errno;
		snprintf(err, errlen, "listen on %s:%d: %s", addr, port, strerror(errno));
		close(fd);
		return rc;
	}
	return fd;
}

int up_chan_accept(int lfd, char *err, size_t errlen)
{
	int fd = plat_accept(lfd);
	if (fd < 0) {
		snprintf(err, errlen, "accept: %s", strerror(-fd));
		return fd;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int up_chan_connect(const char *addr, int port, unsigned timeout_ms, char *err, size_t errlen)
{
	struct sockaddr_in sa;
	int rc = make_addr(addr, port, &sa, err, errlen);
	if (rc)
		return rc;
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* The server may still be bringing its device up: retry until the timeout. */
	for (;;) {
		int fd = plat_socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			return fd;
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			int one = 1;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return fd;
		}
		rc = -errno;
		close(fd);
		clock_gettime(CLOCK_MONOTONIC, &now);
		long ms = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
		if ((rc != -ECONNREFUSED && rc != -EAGAIN) || ms >= (long)timeout_ms) {
			snprintf(err, errlen, "connect to %s:%d: %s", addr, port, strerror(-rc));
			return rc;
		}
		usleep(50000);
	}
}
