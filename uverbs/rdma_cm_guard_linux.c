/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The CM's guardian process (rdma_cm_guard.h), Linux.
 *
 * How it is made, and why so:
 *  - A raw clone(2) with no flags: a copy of the process that runs no pthread_atfork
 *    handler (the application's and ours could take locks, and the CM calls this with
 *    its own lock held) and whose exit signal is 0, so the application's wait() and
 *    SIGCHLD never see it (wait(2): only __WALL or __WCLONE reaps such a child).  Once
 *    the process is gone the kernel reparents it with SIGCHLD (kernel/exit.c
 *    reparent_leader) and init reaps it.
 *  - The copy of a multithreaded process may call only what takes no lock another
 *    thread could have held: system calls and the packet builder, which is plain
 *    arithmetic (its CRC table is made before the clone).  No malloc, no stdio, and
 *    close(2) as a system call: the library's own close() (rdma_cm_linux.c) takes the
 *    CM's lock for an fd number that was a CM channel's in the process.
 *  - It leaves the session (setsid), so a terminal's ^C or a harness's kill of the
 *    process group, the usual ways a peer goes, do not take it too; it blocks every
 *    signal and closes every file but a pidfd of the process, so it holds no pipe and
 *    no socket of the application open.
 *  - pidfd_open(2) of the process, made by the process itself before the clone: it
 *    turns readable when the process has exited (Linux 5.3), whichever way, so no pid
 *    can be mistaken for another.
 * Then it sends each armed record once, as Linux's cm_destroy_id sends its DREQ once and
 * cancels the retransmission, and exits.
 */
#include "uverbs/rdma_cm_guard.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hw/emu/roce_wire.h"
#include "hw/platform/sock.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434      /* the same on every architecture (Linux 5.3) */
#endif
#ifndef SYS_close_range
#define SYS_close_range 436     /* the same on every architecture (Linux 5.9) */
#endif

/* IBTA 13.5.1: the GSI QP is QP 1 and its MADs carry Q_Key 0x80010000. */
#define GSI_QPN 1
#define GSI_QKEY 0x80010000u
#define DEFAULT_PKEY 0xffff

struct guard_rec {
	_Atomic uint32_t seq;   /* odd while the process writes the record */
	uint32_t armed;
	uint32_t src_ip, dst_ip;
	uint8_t mad[RCM_GUARD_MAD_LEN];
};

struct guard_area {
	struct guard_rec rec[RCM_GUARD_SLOTS];
};

static struct guard_area *guard;
static int guard_child;

/* ------------------------------------------------------------------ the guardian */

/* One MAD as a RoCE v2 UD SEND from QP 1 to QP 1 (BTH, DETH, MAD, ICRC: IBTA A17.4),
 * from the NIC's address.  The NIC's own port 4791 is free once its process is gone;
 * a device shared through uvd keeps it bound, and then any port of the address serves
 * (the source port is flow entropy, A17.5.1.1, and the ICRC is computed for it). */
static void sys_close(int fd)
{
	syscall(SYS_close, fd);
}

static void send_mad(uint32_t src_ip, uint32_t dst_ip, const uint8_t *mad)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(EMU_ROCE_PORT),
				  .sin_addr.s_addr = htonl(src_ip) };
	socklen_t sl = sizeof(sa);
	if (plat_sock_set_df(fd) ||
	    (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	     (sa.sin_port = 0, bind(fd, (struct sockaddr *)&sa, sizeof(sa)))) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		sys_close(fd);
		return;
	}
	struct emu_roce_ip ip;
	emu_roce_ip_init(&ip, src_ip, dst_ip, ntohs(sa.sin_port), 0);
	struct emu_roce_hdrs h;
	memset(&h, 0, sizeof(h));
	h.bth.opcode = EMU_ROCE_UD_SEND_ONLY;
	h.bth.pkey = DEFAULT_PKEY;
	h.bth.dqpn = GSI_QPN;
	h.deth.qkey = GSI_QKEY;
	h.deth.sqpn = GSI_QPN;
	uint8_t pkt[RCM_GUARD_MAD_LEN + 64];
	int n = emu_roce_build(pkt, sizeof(pkt), &ip, &h, mad, RCM_GUARD_MAD_LEN);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(EMU_ROCE_PORT),
				  .sin_addr.s_addr = htonl(dst_ip) };
	if (n > 0)
		(void)sendto(fd, pkt, (size_t)n, 0, (struct sockaddr *)&to, sizeof(to));
	sys_close(fd);
}

static void close_all_but(int keep)
{
	if (keep > 0 && syscall(SYS_close_range, 0u, (unsigned)keep - 1, 0u))
		for (int fd = 0; fd < keep; fd++)
			sys_close(fd);
	if (syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0u)) {
		long max = sysconf(_SC_OPEN_MAX);
		for (long fd = keep + 1; fd < (max > 0 ? max : 1024); fd++)
			sys_close((int)fd);
	}
}

static _Noreturn void guardian(int pidfd)
{
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	setsid();
	prctl(PR_SET_NAME, "uverbs-cm-guard", 0, 0, 0);
	close_all_but(pidfd);
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	while (poll(&p, 1, -1) < 0 && errno == EINTR)
		;
	for (unsigned i = 0; i < RCM_GUARD_SLOTS; i++) {
		struct guard_rec *r = &guard->rec[i];
		uint32_t s = atomic_load_explicit(&r->seq, memory_order_acquire);
		if ((s & 1) || !r->armed)
			continue;   /* being written when the process died: its content is torn */
		uint8_t mad[RCM_GUARD_MAD_LEN];
		uint32_t src = r->src_ip, dst = r->dst_ip;
		memcpy(mad, r->mad, sizeof(mad));
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&r->seq, memory_order_relaxed) == s)
			send_mad(src, dst, mad);
	}
	syscall(SYS_exit_group, 0);
	__builtin_unreachable();
}

/* ------------------------------------------------------------------ the process's side */

static bool address_is_ours(uint32_t ip)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(ip) };
	bool ok = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

int rcm_guard_start(const uint32_t *ips, unsigned n)
{
	if (guard)
		return 0;
	bool any = false;
	for (unsigned i = 0; i < n && !any; i++)
		any = address_is_ours(ips[i]);
	if (!any)
		return -EADDRNOTAVAIL;
	struct guard_area *g = mmap(NULL, sizeof(*g), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g == MAP_FAILED)
		return -errno;
	long pidfd = syscall(SYS_pidfd_open, (long)getpid(), 0L);
	if (pidfd < 0) {
		int e = errno;
		munmap(g, sizeof(*g));
		return -e;
	}
	/* the ICRC's table is made once per process (pthread_once): here, not in the copy */
	uint8_t probe[4] = { 0 };
	struct emu_roce_ip ip;
	emu_roce_ip_init(&ip, 0, 0, EMU_ROCE_PORT, 0);
	(void)emu_roce_icrc(&ip, probe, sizeof(probe));
	guard = g;
	/* clone(2) with flags 0: a new process (no CLONE_VM) on a copy of this stack, exit
	 * signal 0; the arguments after the flags are all 0, so their order, which differs
	 * between architectures, does not matter */
	long pid = syscall(SYS_clone, 0L, 0L, 0L, 0L, 0L);
	if (pid == 0)
		guardian((int)pidfd);
	int e = errno;
	close((int)pidfd);
	if (pid < 0) {
		guard = NULL;
		munmap(g, sizeof(*g));
		return -e;
	}
	guard_child = (int)pid;
	return 0;
}

static void rec_write(unsigned slot, uint32_t armed, uint32_t src_ip, uint32_t dst_ip, const uint8_t *mad)
{
	if (!guard || slot >= RCM_GUARD_SLOTS)
		return;
	struct guard_rec *r = &guard->rec[slot];
	uint32_t s = atomic_load_explicit(&r->seq, memory_order_relaxed);
	atomic_store_explicit(&r->seq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	r->armed = armed;
	r->src_ip = src_ip;
	r->dst_ip = dst_ip;
	if (mad)
		memcpy(r->mad, mad, RCM_GUARD_MAD_LEN);
	atomic_store_explicit(&r->seq, s + 2, memory_order_release);
}

void rcm_guard_arm(unsigned slot, uint32_t src_ip, uint32_t dst_ip, const uint8_t mad[RCM_GUARD_MAD_LEN])
{
	rec_write(slot, 1, src_ip, dst_ip, mad);
}

void rcm_guard_disarm(unsigned slot)
{
	rec_write(slot, 0, 0, 0, NULL);
}

void rcm_guard_forget(void)
{
	if (guard)
		munmap(guard, sizeof(*guard));
	guard = NULL;
	guard_child = 0;
}

int rcm_guard_pid(void)
{
	return guard_child;
}
