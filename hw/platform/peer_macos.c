/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/peer.h on macOS: getpeereid(3) and LOCAL_PEERPID; no cross-task copies. */
#include "hw/platform/peer.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/event.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int plat_peer_cred(int fd, pid_t *pid, uid_t *uid)
{
	gid_t g;
	socklen_t l = sizeof(*pid);
	if (getpeereid(fd, uid, &g) < 0 || getsockopt(fd, SOL_LOCAL, LOCAL_PEERPID, pid, &l) < 0)
		return -errno;
	return 0;
}

int plat_allow_peer_access(pid_t pid)
{
	(void)pid;
	return 0;
}

int plat_peer_copy(pid_t pid, uint64_t raddr, void *buf, size_t len, int write)
{
	(void)pid; (void)raddr; (void)buf; (void)len; (void)write;
	return -EOPNOTSUPP;
}

int plat_peer_exit_fd(int sock, pid_t pid)
{
	(void)sock;
	/* The pid can have gone to another process between connect(2) and here.  The
	 * equivalent of Linux's SO_PEERPIDFD is the peer's audit token (getsockopt
	 * SOL_LOCAL LOCAL_PEERTOKEN, sys/un.h), whose pid version (audit_token_to_pidversion,
	 * libbsm) names one process; after adding the kevent below it would be compared
	 * with the watched process's own.  Not done: that needs the watched process's
	 * token too (task_name_for_pid, which wants privileges), not a trivial change.
	 * A kqueue polls readable while an event is pending (kqueue(2)); NOTE_EXIT names
	 * the process, and fails with ESRCH when it is gone already */
	int kq = kqueue();
	if (kq < 0)
		return -errno;
	struct kevent ev;
	EV_SET(&ev, (uintptr_t)pid, EVFILT_PROC, EV_ADD | EV_ONESHOT, NOTE_EXIT, 0, NULL);
	if (kevent(kq, &ev, 1, NULL, 0, NULL) < 0) {
		int e = errno;
		close(kq);
		return -e;
	}
	fcntl(kq, F_SETFD, FD_CLOEXEC);
	return kq;
}
