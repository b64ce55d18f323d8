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

#include "tests/uverbs/uv_test.h"

struct uvd_daemon {
	pid_t pid;
	char sock[108];
};

/* Start it (the daemon's environment without UVERBS_PORT_MTU: its port keeps the
 * firmware's default) and return a SOCK_SEQPACKET connection to it, within 20 s. */
static inline int uvd_daemon_start(struct uvd_daemon *d, const char *name, const char *ip)
{
	const char *bin = getenv("UVD_BIN");
	char dev[64];
	cr_assert(bin && *bin, "UVD_BIN not set: build tools/uvd");
	snprintf(d->sock, sizeof(d->sock), "/tmp/uvd-%s-%d.sock", name, (int)getpid());
	snprintf(dev, sizeof(dev), "emu:ip=%s", ip);
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
		execl(bin, bin, "-d", dev, "-s", d->sock, (char *)NULL);
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

/* Two verbs contexts of this process as two clients of the daemon (uvd:<socket> twice),
 * an RC endpoint with a len-byte buffer on each, connected to each other. */
static inline void uvd_daemon_rc_pair(const struct uvd_daemon *d, struct ut_ep *a, struct ut_ep *b, size_t len)
{
	char uris[2 * sizeof(d->sock) + 16];

	snprintf(uris, sizeof(uris), "uvd:%s,uvd:%s", d->sock, d->sock);
	ut_devices(uris);
	ut_ep_init(a, ut_open(0), IBV_QPT_RC, len, NULL);
	ut_ep_init(b, ut_open(1), IBV_QPT_RC, len, NULL);
	ut_pair(a, b);
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
