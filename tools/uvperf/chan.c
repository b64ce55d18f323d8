/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
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
#include <sys/time.h>
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
		/* SO_RCVTIMEO (up_chan_set_timeout) ran out: the peer went quiet */
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return -ETIMEDOUT;
		if (k <= 0)
			return k < 0 ? -errno : -ECONNRESET;
		b += k;
		len -= (size_t)k;
	}
	return 0;
}

/* Read and drop n payload bytes, so the stream stays in step after a message that is
 * not read (too long, or not the one expected). */
static int discard(int fd, size_t n)
{
	uint8_t sink[4096];
	while (n) {
		size_t k = n < sizeof(sink) ? n : sizeof(sink);
		int rc = read_all(fd, sink, k);
		if (rc)
			return rc;
		n -= k;
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
	if (hdr[1] > max || hdr[1] > INT32_MAX) {
		rc = discard(fd, hdr[1]);
		return rc ? rc : -EMSGSIZE;
	}
	rc = read_all(fd, p, hdr[1]);
	return rc ? rc : (int)hdr[1];
}

/* An UP_M_ERROR's text: at most UP_ERR_TEXT-1 bytes are kept (the rest is read and
 * dropped), ended with a NUL, and anything unprintable shown as '?' (the peer may not
 * be a uvperf at all). */
#define UP_ERR_TEXT 512

static int recv_error_text(int fd, size_t n, char *text)
{
	size_t keep = n < UP_ERR_TEXT - 1 ? n : UP_ERR_TEXT - 1;
	int rc = read_all(fd, text, keep);
	if (!rc)
		rc = discard(fd, n - keep);
	if (rc)
		return rc;
	text[keep] = 0;
	for (size_t i = 0; i < keep; i++)
		if ((unsigned char)text[i] < 0x20 || (unsigned char)text[i] > 0x7e)
			text[i] = '?';
	return 0;
}

static void chan_err(char *err, size_t errlen, int rc)
{
	if (rc == -ECONNRESET)
		snprintf(err, errlen, "side channel: peer closed the connection");
	else if (rc == -ETIMEDOUT)
		snprintf(err, errlen, "side channel: the peer sent nothing for too long");
	else
		snprintf(err, errlen, "side channel: %s", strerror(-rc));
}

int up_chan_expect(int fd, uint32_t type, void *p, size_t len, char *err, size_t errlen)
{
	uint32_t hdr[2];
	int rc = read_all(fd, hdr, sizeof(hdr));
	if (rc) {
		chan_err(err, errlen, rc);
		return rc;
	}
	uint32_t t = hdr[0], n = hdr[1];
	if (t == UP_M_ERROR && type != UP_M_ERROR) {
		char text[UP_ERR_TEXT];
		rc = recv_error_text(fd, n, text);
		if (rc) {
			chan_err(err, errlen, rc);
			return rc;
		}
		snprintf(err, errlen, "peer: %s", text);
		return -EREMOTEIO;
	}
	if (t != type || n != len) {
		rc = discard(fd, n);
		if (rc) {
			chan_err(err, errlen, rc);
			return rc;
		}
		snprintf(err, errlen, "side channel: expected message %u of %zu bytes, got %u of %u", type, len, t, n);
		return -EPROTO;
	}
	rc = read_all(fd, p, len);
	if (rc) {
		chan_err(err, errlen, rc);
		return rc;
	}
	return (int)n;
}

int up_chan_set_timeout(int fd, unsigned ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
	return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ? -errno : 0;
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
