/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvcp: the TCP side channel (uvcp.h).  A message is a 4-byte type, a 4-byte length and
 * the payload, in host order: both ends are this program on little-endian machines (the
 * Mac and the Linux peers it is for), as uvperf's side channel assumes too.  Every read
 * is bounded by the channel's timeout, so a silent peer is an error, never a hang. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "uvcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int write_all(int fd, const void *p, size_t len)
{
	const uint8_t *b = p;
	while (len) {
		ssize_t k = send(fd, b, len, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EPIPE;
		b += k;
		len -= (size_t)k;
	}
	return 0;
}

static int read_all(struct uc_chan *c, void *p, size_t len)
{
	uint8_t *b = p;
	while (len) {
		struct pollfd pf = { .fd = c->fd, .events = POLLIN };
		int n = poll(&pf, 1, c->timeout_ms ? (int)c->timeout_ms : -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ETIMEDOUT;
		ssize_t k = recv(c->fd, b, len, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -ECONNRESET;
		b += k;
		len -= (size_t)k;
	}
	return 0;
}

static int discard(struct uc_chan *c, size_t n)
{
	uint8_t sink[4096];
	while (n) {
		size_t k = n < sizeof(sink) ? n : sizeof(sink);
		int rc = read_all(c, sink, k);
		if (rc)
			return rc;
		n -= k;
	}
	return 0;
}

int uc_chan_send(struct uc_chan *c, uint32_t type, const void *p, size_t len)
{
	uint32_t hdr[2] = { type, (uint32_t)len };
	int rc = write_all(c->fd, hdr, sizeof(hdr));
	return rc ? rc : write_all(c->fd, p, len);
}

int uc_chan_recv(struct uc_chan *c, uint32_t *type, void *p, size_t max)
{
	uint32_t hdr[2];
	int rc = read_all(c, hdr, sizeof(hdr));
	if (rc)
		return rc;
	*type = hdr[0];
	if (hdr[1] > max) {
		rc = discard(c, hdr[1]);
		return rc ? rc : -EMSGSIZE;
	}
	rc = read_all(c, p, hdr[1]);
	return rc ? rc : (int)hdr[1];
}

const char *uc_chan_why(int rc)
{
	switch (rc) {
	case -ECONNRESET: case -EPIPE:
		return "the peer closed the connection (peer gone)";
	case -ETIMEDOUT:
		return "the peer sent nothing for too long";
	default:
		return strerror(-rc);
	}
}

int uc_chan_expect(struct uc_chan *c, uint32_t type, void *p, size_t max, char *err, size_t errlen)
{
	uint32_t hdr[2];
	int rc = read_all(c, hdr, sizeof(hdr));
	if (rc) {
		snprintf(err, errlen, "side channel: %s", uc_chan_why(rc));
		return rc;
	}
	if (hdr[0] == UC_M_ERROR) {
		char text[UC_ERR_MAX];
		size_t k = hdr[1] < sizeof(text) ? hdr[1] : sizeof(text) - 1;
		rc = read_all(c, text, k);
		if (!rc)
			rc = discard(c, hdr[1] - k);
		if (rc) {
			snprintf(err, errlen, "side channel: %s", uc_chan_why(rc));
			return rc;
		}
		text[k] = 0;
		for (size_t i = 0; i < k; i++)
			if ((unsigned char)text[i] < 0x20 || (unsigned char)text[i] > 0x7e)
				text[i] = '?';
		snprintf(err, errlen, "%s", text);
		return -UC_EPEER;
	}
	if (hdr[0] != type || hdr[1] > max) {
		rc = discard(c, hdr[1]);
		snprintf(err, errlen, "side channel: expected message %u, got %u of %u bytes", type, hdr[0], hdr[1]);
		return rc ? rc : -EPROTO;
	}
	rc = read_all(c, p, hdr[1]);
	if (rc) {
		snprintf(err, errlen, "side channel: %s", uc_chan_why(rc));
		return rc;
	}
	return (int)hdr[1];
}

void uc_chan_error(struct uc_chan *c, const char *fmt, ...)
{
	char text[UC_ERR_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	(void)uc_chan_send(c, UC_M_ERROR, text, strlen(text));
}

int uc_chan_listen(const char *addr, int port, char *err, size_t errlen)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		snprintf(err, errlen, "'%s' is not an IPv4 address", addr);
		return -EINVAL;
	}
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 4)) {
		int rc = -errno;
		snprintf(err, errlen, "listen on %s:%d: %s", addr, port, strerror(errno));
		close(fd);
		return rc;
	}
	return fd;
}

int uc_chan_connect(const char *host, int port, unsigned timeout_ms, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai = NULL;
	char ps[16];
	snprintf(ps, sizeof(ps), "%d", port);
	int g = getaddrinfo(host, ps, &hints, &ai);
	if (g || !ai) {
		snprintf(err, errlen, "cannot resolve '%s': %s", host, gai_strerror(g));
		return -EINVAL;
	}
	struct sockaddr_in sa;
	memcpy(&sa, ai->ai_addr, sizeof(sa));
	freeaddrinfo(ai);
	/* The server may be starting: try again until the timeout. */
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0) {
			snprintf(err, errlen, "socket: %s", strerror(errno));
			return -errno;
		}
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			int one = 1;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return fd;
		}
		int e = errno;
		close(fd);
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		double el = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9;
		if ((e != ECONNREFUSED && e != EAGAIN) || el * 1000 >= timeout_ms) {
			snprintf(err, errlen, "cannot connect to %s port %d: %s%s", host, port, strerror(e),
				 e == ECONNREFUSED ? " (is `uvcp --serve` running there?)" : "");
			return -e;
		}
		usleep(100000);
	}
}
