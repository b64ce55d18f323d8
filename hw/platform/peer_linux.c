/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/peer.h on Linux: SO_PEERCRED, SO_PEERPIDFD, PR_SET_PTRACER,
 * process_vm_readv/writev. */
#include "hw/platform/peer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77      /* asm-generic/socket.h, Linux 6.5 */
#endif
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

/* start time of process `pid` in clock ticks since boot (proc(5), /proc/pid/stat
 * field 22, starttime); 0 or -errno (-ESRCH: no such process) */
static int proc_start_ticks(pid_t pid, unsigned long long *ticks)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = 0;
	/* field 2 (comm) is in parentheses and may hold spaces: count from the last ')' */
	char *p = strrchr(buf, ')');
	if (!p)
		return -EIO;
	p++;
	for (int field = 2; field < 21; field++) {       /* to the space before field 22 */
		p = strchr(p + 1, ' ');
		if (!p)
			return -EIO;
	}
	char *end;
	errno = 0;
	*ticks = strtoull(p + 1, &end, 10);
	return errno || end == p + 1 ? -EIO : 0;
}

int plat_peer_exit_fd(int sock, pid_t pid)
{
	/* SO_PEERPIDFD (socket(7), Linux 6.5): a pidfd for the process that connected,
	 * taken by the kernel at connect(2), so it can name no other process; readable at
	 * once if that one has exited meanwhile.  Close-on-exec already. */
	int pfd;
	socklen_t l = sizeof(pfd);
	if (getsockopt(sock, SOL_SOCKET, SO_PEERPIDFD, &pfd, &l) == 0)
		return pfd;
	if (errno != ENOPROTOOPT && errno != EINVAL)
		return -errno;
	/* Older kernels: pidfd_open(2) (5.3) on the pid SO_PEERCRED recorded.  Should that
	 * process have exited and its pid gone to another, the pidfd names the other one:
	 * one that started after now (the caller calls this on accepting) is not the
	 * peer, and the connection counts as ended (-ESRCH).  A reuse between connect(2)
	 * and accept(2) goes unseen here; SO_PEERPIDFD has no such gap. */
	struct timespec now;
	if (clock_gettime(CLOCK_BOOTTIME, &now) < 0)
		return -errno;
	long fd = syscall(SYS_pidfd_open, (long)pid, 0L);
	if (fd < 0)
		return -errno;
	unsigned long long start;
	long hz = sysconf(_SC_CLK_TCK);
	int rc = proc_start_ticks(pid, &start);
	if (rc == 0 && hz > 0 &&
	    start > (unsigned long long)now.tv_sec * (unsigned long long)hz +
			    (unsigned long long)now.tv_nsec * (unsigned long long)hz / 1000000000ull)
		rc = -ESRCH;                 /* a later process under the same pid */
	if (rc) {
		close((int)fd);
		return rc;
	}
	return (int)fd;
}
