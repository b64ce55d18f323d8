/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uverbs-cm-guard: speaks for a process's connections once the process is gone.
 *
 * Linux's kernel CM outlives a killed process and sends a DREQ for each of its
 * connections (drivers/infiniband/core/cm.c cm_destroy_id; IBTA 12.9.6); the CM of
 * libuverbs lives in the process.  So the process starts this program at its CM's first
 * use (uverbs/rdma_cm_guard_linux.c, with posix_spawn: a new program, so nothing of the
 * process's memory or locks comes along) and keeps, in shared memory, the one MAD that
 * would end each connection.  This program waits until the process has exited or
 * exec'd another program (cm_guard_records.h: the file descriptors it starts with),
 * then sends each armed record once, as Linux's cm_destroy_id sends its DREQ once, as a
 * RoCE v2 UD SEND from QP 1 to QP 1 (BTH, DETH, the MAD, the ICRC: IBTA A17.4) from the
 * NIC's address, and exits.
 *
 * It detaches first (a second fork, the first child exiting at once, so the process
 * reaps one short-lived child and never has a long-lived one to wait for), leaves the
 * session (a terminal's ^C or a harness's kill of the process group does not reach it)
 * and blocks every signal.  It takes no arguments and prints nothing; a wrong start
 * (missing descriptors, records of another version) exits 2 at once. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hw/emu/roce_wire.h"
#include "hw/platform/sock.h"
#include "uverbs/guard/cm_guard_records.h"

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424   /* the same on every architecture (Linux 5.1) */
#endif
#ifndef SYS_close_range
#define SYS_close_range 436     /* the same on every architecture (Linux 5.9) */
#endif

/* IBTA 13.5.1: the GSI QP is QP 1 and its MADs carry Q_Key 0x80010000. */
#define GSI_QPN 1
#define GSI_QKEY 0x80010000u
#define DEFAULT_PKEY 0xffff

/* One MAD from src_ip to the GSI QP at dst_ip.  From a port of the kernel's choosing:
 * the source port is flow entropy (A17.5.1.1), the ICRC is computed for the one bound,
 * and the NIC's own port 4791 stays free for a process that opens the address again. */
static void send_mad(uint32_t src_ip, uint32_t dst_ip, const uint8_t *mad)
{
	int fd = plat_socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(src_ip) };
	socklen_t sl = sizeof(sa);

	if (fd < 0)
		return;
	if (plat_sock_set_df(fd) == 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &sl) == 0) {
		struct emu_roce_ip ip;
		struct emu_roce_hdrs h;
		uint8_t pkt[UV_CM_GUARD_MAD_LEN + 64];
		struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(EMU_ROCE_PORT),
					  .sin_addr.s_addr = htonl(dst_ip) };
		int n;

		emu_roce_ip_init(&ip, src_ip, dst_ip, ntohs(sa.sin_port), 0);
		memset(&h, 0, sizeof(h));
		h.bth.opcode = EMU_ROCE_UD_SEND_ONLY;
		h.bth.pkey = DEFAULT_PKEY;
		h.bth.dqpn = GSI_QPN;
		h.deth.qkey = GSI_QKEY;
		h.deth.sqpn = GSI_QPN;
		n = emu_roce_build(pkt, sizeof(pkt), &ip, &h, mad, UV_CM_GUARD_MAD_LEN);
		if (n > 0)
			(void)sendto(fd, pkt, (size_t)n, 0, (struct sockaddr *)&to, sizeof(to));
	}
	close(fd);
}

static void send_armed(const struct uv_cm_guard_area *a)
{
	for (unsigned i = 0; i < UV_CM_GUARD_SLOTS; i++) {
		const struct uv_cm_guard_rec *r = &a->rec[i];
		uint32_t s = atomic_load_explicit(&r->seq, memory_order_acquire), src, dst;
		uint8_t mad[UV_CM_GUARD_MAD_LEN];

		if ((s & 1) || !r->armed)
			continue;   /* being written when the process died: its content is torn */
		src = r->src_ip;
		dst = r->dst_ip;
		memcpy(mad, r->mad, sizeof(mad));
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&r->seq, memory_order_relaxed) == s)
			send_mad(src, dst, mad);
	}
}

/* Whether process `pid` still maps the records (its memfd's inode in /proc/PID/maps):
 * after an exec it does not.  True also when the file cannot be read whole, the safe
 * side; false when the process is gone. */
static bool still_maps(pid_t pid, ino_t ino)
{
	static char buf[2 * 8192];
	char path[64];
	size_t have = 0;
	bool found = false;
	ssize_t n = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT && errno != ESRCH;
	/* each line: address perms offset dev inode path; the records' line has the path
	 * "/memfd:uverbs-cm-guard (deleted)" and the memfd's inode */
	while (!found && (n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		char *l = buf, *nl;

		have += (size_t)n;
		buf[have] = 0;
		while (!found && (nl = strchr(l, '\n'))) {
			unsigned long long inode;

			*nl = 0;
			if (strstr(l, "/memfd:uverbs-cm-guard") &&
			    sscanf(l, "%*s %*s %*s %*s %llu", &inode) == 1 && inode == (unsigned long long)ino)
				found = true;
			l = nl + 1;
		}
		have = strlen(l);               /* an unfinished line: finished by the next read */
		memmove(buf, l, have);
		if (have >= sizeof(buf) / 2)
			break;                  /* a line longer than any path: give up, mapped */
	}
	close(fd);
	return found || n != 0;
}

/* Whether the process is gone: its pidfd is readable, or the pipe it holds hung up
 * and it no longer maps the records (it exec'd).  False on any other outcome (an
 * error, a descriptor that is not what it should be): then nothing is sent, for a live
 * process's connections must never be ended. */
static bool wait_for_the_process(pid_t pid, ino_t ino)
{
	bool life = true;

	for (;;) {
		struct pollfd p[2] = { { .fd = UV_CM_GUARD_FD_PIDFD, .events = POLLIN },
				       { .fd = life ? UV_CM_GUARD_FD_LIFE : -1, .events = POLLIN } };
		char c;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		if ((p[0].revents | p[1].revents) & POLLNVAL)
			return false;
		if (p[0].revents & POLLIN)
			return true;
		if (p[0].revents & (POLLERR | POLLHUP))
			return false;
		if (p[1].revents & (POLLHUP | POLLIN)) {
			if (read(UV_CM_GUARD_FD_LIFE, &c, 1) != 0)
				return false;   /* nothing is ever written: not our pipe */
			if (!still_maps(pid, ino))
				return true;
			life = false;           /* a stray close: the pidfd alone from now on */
		} else if (p[1].revents & POLLERR) {
			return false;
		}
	}
}

int main(void)
{
	struct uv_cm_guard_area *a;
	struct stat st, lst;
	sigset_t all;
	pid_t pid;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (fstat(UV_CM_GUARD_FD_AREA, &st) || (size_t)st.st_size < sizeof(*a) ||
	    fstat(UV_CM_GUARD_FD_LIFE, &lst) || !S_ISFIFO(lst.st_mode) ||
	    syscall(SYS_pidfd_send_signal, UV_CM_GUARD_FD_PIDFD, 0, NULL, 0))
		return 2;   /* not the three descriptors it must start with */
	a = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE, MAP_SHARED, UV_CM_GUARD_FD_AREA, 0);
	if (a == MAP_FAILED || a->magic != UV_CM_GUARD_MAGIC || a->version != UV_CM_GUARD_VERSION ||
	    a->slots != UV_CM_GUARD_SLOTS || a->rec_size != sizeof(struct uv_cm_guard_rec) || a->app_pid <= 0)
		return 2;
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid > 0) {
		/* the process reaps this half at once, and then reads who watches */
		atomic_store_explicit(&a->guard_pid, (int32_t)pid, memory_order_release);
		_exit(0);
	}
	setsid();
	if (syscall(SYS_close_range, UV_CM_GUARD_FD_LIFE + 1u, ~0u, 0u)) {
		long max = sysconf(_SC_OPEN_MAX);

		for (long fd = UV_CM_GUARD_FD_LIFE + 1; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
			close((int)fd);
	}
	if (wait_for_the_process(a->app_pid, st.st_ino))
		send_armed(a);
	return 0;
}
