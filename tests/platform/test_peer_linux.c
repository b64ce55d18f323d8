/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/peer.h on Linux: the exit descriptor of a connection's peer names the
 * process that connected, not a later one given its pid (docs/architecture.md §16).
 * The pid is reused on purpose: in a new user and pid namespace this test is that
 * namespace's root, and clone3's set_tid (clone(2), Linux 5.5) asks for the pid the
 * connecting process had. */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hw/platform/peer.h"

/* Runs as pid 1 of the new namespace; its exit code is the verdict (0: right process). */
static int reuse_case(int tag)
{
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "uv-peer-test-%d", tag);
	socklen_t al = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a.sun_path + 1));
	if (l < 0 || bind(l, (struct sockaddr *)&a, al) < 0 || listen(l, 1) < 0)
		return 10;
	pid_t x = fork();
	if (x == 0) {
		int c = socket(AF_UNIX, SOCK_STREAM, 0);
		_exit(connect(c, (struct sockaddr *)&a, al) < 0 ? 1 : 0);   /* connects, exits */
	}
	int st;
	if (x < 0 || waitpid(x, &st, 0) != x || !WIFEXITED(st) || WEXITSTATUS(st))
		return 11;
	/* another process now has x's pid */
	pid_t tid = x;
	struct clone_args ca = { .exit_signal = SIGCHLD, .set_tid = (uintptr_t)&tid, .set_tid_size = 1 };
	long y = syscall(SYS_clone3, &ca, sizeof(ca));
	if (y == 0) {
		pause();
		_exit(0);
	}
	if (y != x)
		return 12;
	int s = accept(l, NULL, NULL);
	pid_t pid;
	uid_t uid;
	if (s < 0 || plat_peer_cred(s, &pid, &uid) || pid != x)
		return 13;
	int fd = plat_peer_exit_fd(s, pid);
	int verdict;
	if (fd == -ESRCH) {
		verdict = 0;                   /* gone, as it is */
	} else if (fd < 0) {
		verdict = 14;
	} else {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		verdict = poll(&p, 1, 0) == 1 ? 0 : 1;   /* readable: the connecting one exited */
	}
	kill((pid_t)y, SIGKILL);
	waitpid((pid_t)y, NULL, 0);
	return verdict;
}

Test(peer_exit_fd, names_the_connecting_process_not_a_reused_pid)
{
	pid_t t = fork();
	cr_assert_geq(t, 0);
	if (t == 0) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWPID) < 0)
			_exit(77);
		pid_t r = fork();
		if (r == 0)
			_exit(reuse_case((int)getpid()));
		int st;
		_exit(r > 0 && waitpid(r, &st, 0) == r && WIFEXITED(st) ? WEXITSTATUS(st) : 20);
	}
	int st;
	cr_assert_eq(waitpid(t, &st, 0), t);
	cr_assert(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77) {
		if (getenv("CI"))
			cr_assert_fail("no user namespaces: cannot reuse a pid on purpose");
		cr_skip_test("no user namespaces here: cannot reuse a pid on purpose");
	}
	cr_assert_eq(WEXITSTATUS(st), 0, "verdict %d (1: the descriptor watches the pid's new owner)",
		     WEXITSTATUS(st));
}
