/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The process at the other end of a local (AF_UNIX) socket, and letting a named process
 * reach this one's memory: what a device daemon (tools/uvd) and its clients
 * (hw/shim/uvd.c) need from the system.
 *
 * Linux: SO_PEERCRED (socket(7), unix(7)); process_vm_readv/writev(2) for the daemon,
 * allowed by PR_SET_PTRACER (prctl(2)) where the Yama LSM restricts ptrace access.
 * macOS: getpeereid(3) and LOCAL_PEERPID (sys/un.h); a task's memory is not reachable
 * from another process, so remote access answers -EOPNOTSUPP (the kext pins on the
 * daemon's behalf instead, docs/architecture.md "Several processes: uvd"). */
#ifndef UV_PLATFORM_PEER_H
#define UV_PLATFORM_PEER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* pid and uid of the peer of a connected AF_UNIX socket (both required); 0 or -errno. */
int plat_peer_cred(int fd, pid_t *pid, uid_t *uid);
/* Let process `pid` read and write this process's memory (Yama's PR_SET_PTRACER on
 * Linux; nothing to do where no such restriction exists).  0 or -errno. */
int plat_allow_peer_access(pid_t pid);
/* Copy between this process and another's memory at remote address `raddr`;
 * write != 0 copies buf into the other process.  0, or -errno (-EFAULT for memory the
 * other process has not mapped, -ESRCH once it is gone). */
int plat_peer_copy(pid_t pid, uint64_t raddr, void *buf, size_t len, int write);
/* A descriptor that polls readable (POLLIN) once the peer of connected AF_UNIX socket
 * `sock`, whose pid plat_peer_cred gave as `pid` -- that process, not a later one given
 * the same pid -- has exited; call it on accepting the connection.  Linux: SO_PEERPIDFD
 * (6.5), else pidfd_open(2) (5.3) checked against the process's start time; macOS: a
 * kqueue watching EVFILT_PROC NOTE_EXIT.  The descriptor, or -errno (-ESRCH: gone
 * already, or its pid is another process's now; -ENOSYS: the kernel has no such thing). */
int plat_peer_exit_fd(int sock, pid_t pid);

#endif
