/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Thread naming and real-time scheduling of the calling thread.
 *
 * Name: Linux pthread_setname_np(thread, name), at most 15 characters (seen in top -H,
 * ps -L, gdb); macOS pthread_setname_np(name), the calling thread only (seen in
 * Instruments, lldb, spindump).
 * Real time: Linux SCHED_FIFO at `prio` (needs RLIMIT_RTPRIO or CAP_SYS_NICE); macOS
 * has no SCHED_FIFO for ordinary processes that preempts the way Linux's does: the
 * Mach time-constraint policy (mach/thread_policy.h, what Core Audio's I/O threads
 * use) asks for the CPU within a bounded latency whenever the thread becomes
 * runnable, with no privilege needed; `prio` is not used there. */
#ifndef UV_PLATFORM_THREAD_H
#define UV_PLATFORM_THREAD_H

#include <pthread.h>
#include <signal.h>
#include <time.h>

#if defined(__APPLE__)
#include <os/lock.h>
#endif

/* Name the calling thread: 0 or -errno. */
int plat_thread_set_name(const char *name);
/* Run the calling thread real-time (see above): 0, or -errno when refused. */
int plat_thread_set_realtime(int prio);
/* Back to the ordinary time-sharing policy: 0 or -errno. */
int plat_thread_set_normal(void);
/* Move the calling thread off CPU `cpu` to another CPU it may run on, leaving its
 * affinity as it was: 1 when it moved, 0 when it may run nowhere else (or is not
 * allowed on `cpu` anyway), -errno on failure.  Linux: sched_setaffinity(2) without
 * `cpu` (the kernel migrates the thread at once), then the old mask again; a waking
 * real-time thread then stays where it last ran (kernel/sched/rt.c select_task_rq_rt
 * looks elsewhere only when a real-time task runs there).  macOS has no CPU affinity
 * for threads: 0. */
int plat_thread_leave_cpu(int cpu);

/* CPU time thread t has used so far (user and system), in nanoseconds, into *ns: 0 or
 * -errno.  Linux: pthread_getcpuclockid(3) and clock_gettime on that clock (any thread
 * of the process); macOS has no pthread_getcpuclockid: thread_info(THREAD_BASIC_INFO)
 * of pthread_mach_thread_np(t) (mach/thread_info.h), microsecond resolution.  For
 * benchmarks that say which thread a figure is spent in. */
int plat_thread_cpu_ns(pthread_t t, unsigned long long *ns);

/* pthread_mutex_timedlock (deadline on CLOCK_REALTIME), with its return convention:
 * 0, ETIMEDOUT or another error number.  macOS has no pthread_mutex_timedlock: there
 * it tries the lock, yielding and then sleeping 20 us between tries, until the
 * deadline. */
int plat_mutex_timedlock(pthread_mutex_t *m, const struct timespec *deadline);

/* pthread_create for a thread of ours inside another program's process (the device's
 * and the CM's threads), with every asynchronous signal blocked in it: the pthread_create
 * return convention (0 or an error number).  POSIX (XSH 2.4.1) delivers a signal sent
 * to the process to any one thread that does not block it, and a program that waits
 * for its own signals in one thread (sigprocmask + signalfd or sigwait: tgt's tgtd
 * sends itself SIGUSR2 from its backing-store threads, usr/bs.c) blocks them in its
 * threads, not in ours, which may already run: the signal would land in ours and
 * its default action end the process.  On Linux this work is the kernel's, which never
 * takes a process's signals; glibc's own helper thread for SIGEV_THREAD timers blocks
 * them all the same way (timer_routines.c).  Faults stay unblocked (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL, SIGTRAP, SIGSYS): they are the thread's own, guarded_copy.h catches
 * SIGSEGV/SIGBUS, and a blocked fault kills the process. */
static inline int plat_thread_create_quiet(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, was;
	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGTRAP);
	sigdelset(&all, SIGSYS);
	int rc = pthread_sigmask(SIG_BLOCK, &all, &was);
	if (rc)
		return rc;
	rc = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &was, NULL);
	return rc;
}

/* A spinlock for sections of a few dozen instructions (a verbs queue's post or poll),
 * where a mutex's sleep and wake-up would cost more than the wait.
 *  - Linux: pthread_spinlock_t (pthread_spin_lock(3)), what rdma-core's providers use
 *    (providers/mlx5/mlx5.h mlx5_spin_lock); a user-space test-and-set, no syscall.
 *    It is an int whose unlocked value the C library chooses: glibc's x86 spinlock
 *    is a decrement, unlocked at 1 (sysdeps/x86/nptl/pthread_spin_init.c), its
 *    generic one (arm64) unlocked at 0.
 *  - macOS: os_unfair_lock (<os/lock.h>, macOS 10.12+), Apple's replacement for the
 *    deprecated OSSpinLock: uncontended it is one atomic compare-and-swap; contended it
 *    waits in the kernel with priority donation instead of spinning.
 *    OS_UNFAIR_LOCK_INIT is all zeroes.
 * So a zero-filled struct plat_spinlock (calloc) is a held lock on x86 Linux: every
 * lock is made with plat_spin_init, which also chooses.  single = 1 makes lock and unlock a
 * test of one flag: the owner promised that one thread at a time uses the object (the
 * verbs single-thread hints, docs/architecture.md "Threading").  Neither
 * implementation holds resources, so there is no destroy. */
struct plat_spinlock {
#if defined(__APPLE__)
	os_unfair_lock l;
#define PLAT_SPIN_OP(op) os_unfair_lock_##op    /* PLAT_SPIN_OP(lock): os_unfair_lock_lock */
#else
	pthread_spinlock_t l;
#define PLAT_SPIN_OP(op) pthread_spin_##op      /* PLAT_SPIN_OP(lock): pthread_spin_lock */
#endif
	int single;
};

/* 0, or -errno from pthread_spin_init.  Not while the lock is held. */
static inline int plat_spin_init(struct plat_spinlock *s, int single)
{
	s->single = single != 0;
#if defined(__APPLE__)
	s->l = OS_UNFAIR_LOCK_INIT;
	return 0;
#else
	return -pthread_spin_init(&s->l, PTHREAD_PROCESS_PRIVATE);
#endif
}

static inline void plat_spin_lock(struct plat_spinlock *s)
{
	if (__builtin_expect(!s->single, 1))
		PLAT_SPIN_OP(lock)(&s->l);
}

static inline void plat_spin_unlock(struct plat_spinlock *s)
{
	if (__builtin_expect(!s->single, 1))
		PLAT_SPIN_OP(unlock)(&s->l);
}

#endif
