/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/peer.h on Linux: SO_PEERCRED, PR_SET_PTRACER, process_vm_readv/writev. */
#include "hw/platform/peer.h"

#include <errno.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434   /* the same on every architecture (Linux 5.3) */
#endif

int plat_peer_cred(int fd, pid_t *pid, uid_t *uid)
{
	struct ucred c;
	socklen_t l = sizeof(c);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &l) < 0)
		return -errno;
	*pid = c.pid;
	*uid = c.uid;
	return 0;
}

int plat_allow_peer_access(pid_t pid)
{
	/* EINVAL: no Yama in this kernel, so ptrace access rules alone apply (same uid). */
	if (prctl(PR_SET_PTRACER, (unsigned long)pid, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	return 0;
}

int plat_peer_copy(pid_t pid, uint64_t raddr, void *buf, size_t len, int write)
{
	while (len) {
		struct iovec l = { buf, len }, r = { (void *)(uintptr_t)raddr, len };
		ssize_t n = write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
				  : process_vm_readv(pid, &l, 1, &r, 1, 0);
		if (n < 0)
			return errno == EPERM ? -EACCES : -errno;
		if (n == 0)
			return -EFAULT;
		buf = (char *)buf + n;
		raddr += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int plat_peer_exit_fd(pid_t pid)
{
	/* close-on-exec already (pidfd_open(2)); readable once the process has exited */
	long fd = syscall(SYS_pidfd_open, (long)pid, 0L);
	return fd < 0 ? -errno : (int)fd;
}
