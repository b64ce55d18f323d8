/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The device daemon for a criterion test program of tests/uvd: $UVD_BIN started on an
 * emulated device at `ip`, listening at a socket of this process's own, and the
 * connection that proved it up (the caller keeps it or closes it).  On Linux the daemon
 * also dies with the test process, so a failed assertion in the suite's setup (which
 * skips the teardown) leaves no daemon behind. */
#ifndef UVERBS_TESTS_UVD_UVD_DAEMON_H
#define UVERBS_TESTS_UVD_UVD_DAEMON_H

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "hw/shim/uvd_proto.h"
#include "tests/uverbs/uv_test.h"

struct uvd_daemon {
	pid_t pid;
	char sock[108];
	const char *opt;   /* one more option for the daemon ("-S"), or NULL */
	const char *dev_opts;   /* more options of its emu: URI ("loss=0.1,hold_us=4200"), or NULL */
};

/* Start it (the daemon's environment without UVERBS_PORT_MTU: its port keeps the
 * firmware's default) and return a SOCK_SEQPACKET connection to it, within 20 s. */
static inline int uvd_daemon_start(struct uvd_daemon *d, const char *name, const char *ip)
{
	const char *bin = getenv("UVD_BIN");
	char dev[192];
	cr_assert(bin && *bin, "UVD_BIN not set: build tools/uvd");
	snprintf(d->sock, sizeof(d->sock), "/tmp/uvd-%s-%d.sock", name, (int)getpid());
	snprintf(dev, sizeof(dev), "emu:ip=%s%s%s", ip, d->dev_opts ? "," : "", d->dev_opts ? d->dev_opts : "");
	d->pid = fork();
	cr_assert_geq(d->pid, 0);
	if (d->pid == 0) {
#if defined(__linux__)
		/* prctl(2) PR_SET_PDEATHSIG: SIGKILL when this test process goes; elsewhere
		 * (macOS has no such call) uvd_daemon_stop in the teardown is the only stop. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		unsetenv("UVERBS_PORT_MTU");
		execl(bin, bin, "-d", dev, "-s", d->sock, d->opt, (char *)NULL);
		_exit(127);
	}
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	memcpy(a.sun_path, d->sock, strlen(d->sock));
	double end = ut_now_ms() + 20000;
	for (;;) {
		int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0)
			return s;
		close(s);
		cr_assert_lt(ut_now_ms(), end, "uvd did not come up at %s", d->sock);
		usleep(50000);
	}
}

/* One request on a raw connection `sock` (hw/shim/uvd_proto.h), pass_fd >= 0 travelling
 * with it; the reply's rc, its first replen bytes in rep (the reply must hold that
 * many), and a descriptor that came with it in *fd_out (when not NULL).  -ECONNRESET
 * when the daemon closed the connection instead of answering. */
static inline int uvd_raw_rpc(int sock, uint32_t *seq, uint16_t op, const void *req, size_t reqlen, int pass_fd,
			      void *rep, size_t replen, int *fd_out)
{
	uint8_t msg[512];
	struct uvd_hdr h = { .len = (uint32_t)(sizeof(h) + reqlen), .op = op, .seq = ++*seq };
	union {
		struct cmsghdr c;
		char b[CMSG_SPACE(sizeof(int))];
	} cm;
	memset(&cm, 0, sizeof(cm));
	memcpy(msg, &h, sizeof(h));
	if (reqlen)
		memcpy(msg + sizeof(h), req, reqlen);
	struct iovec iov = { msg, h.len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (pass_fd >= 0) {
		m.msg_control = cm.b;
		m.msg_controllen = sizeof(cm.b);
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
	}
	cr_assert_eq(sendmsg(sock, &m, 0), (ssize_t)h.len);
	iov = (struct iovec){ msg, sizeof(msg) };
	m = (struct msghdr){ .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b, .msg_controllen = sizeof(cm.b) };
	ssize_t n = recvmsg(sock, &m, 0);
	if (n == 0)
		return -ECONNRESET;   /* the daemon hung up on us */
	cr_assert_geq(n, (ssize_t)(sizeof(h) + replen), "reply of %zd bytes to op %u", n, op);
	memcpy(&h, msg, sizeof(h));
	cr_assert_eq(h.op, op);
	if (replen)
		memcpy(rep, msg + sizeof(h), replen);
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	if (fd_out && c && c->cmsg_type == SCM_RIGHTS)
		memcpy(fd_out, CMSG_DATA(c), sizeof(int));
	return h.rc;
}

/* Two verbs contexts of this process as two clients of the daemon (uvd:<socket> twice),
 * an RC endpoint with a len-byte buffer on each, connected to each other: the callers'
 * buffers abuf and bbuf, or, when they are NULL, buffers of its own on the heap. */
static inline void uvd_daemon_rc_pair_on(const struct uvd_daemon *d, struct ut_ep *a, struct ut_ep *b,
					 uint8_t *abuf, uint8_t *bbuf, size_t len)
{
	char uris[2 * sizeof(d->sock) + 16];

	snprintf(uris, sizeof(uris), "uvd:%s,uvd:%s", d->sock, d->sock);
	ut_devices(uris);
	if (abuf)
		ut_ep_init_buf(a, ut_open(0), IBV_QPT_RC, abuf, len, NULL);
	else
		ut_ep_init(a, ut_open(0), IBV_QPT_RC, len, NULL);
	if (bbuf)
		ut_ep_init_buf(b, ut_open(1), IBV_QPT_RC, bbuf, len, NULL);
	else
		ut_ep_init(b, ut_open(1), IBV_QPT_RC, len, NULL);
	ut_pair(a, b);
}

static inline void uvd_daemon_rc_pair(const struct uvd_daemon *d, struct ut_ep *a, struct ut_ep *b, size_t len)
{
	uvd_daemon_rc_pair_on(d, a, b, NULL, NULL, len);
}

static inline void uvd_daemon_stop(struct uvd_daemon *d)
{
	if (d->pid > 0) {
		kill(d->pid, SIGKILL);
		waitpid(d->pid, NULL, 0);
		d->pid = -1;
	}
	unlink(d->sock);
}

#endif
