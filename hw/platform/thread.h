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
#include <time.h>

/* Name the calling thread: 0 or -errno. */
int plat_thread_set_name(const char *name);
/* Run the calling thread real-time (see above): 0, or -errno when refused. */
int plat_thread_set_realtime(int prio);
/* Back to the ordinary time-sharing policy: 0 or -errno. */
int plat_thread_set_normal(void);

/* pthread_mutex_timedlock (deadline on CLOCK_REALTIME), with its return convention:
 * 0, ETIMEDOUT or another error number.  macOS has no pthread_mutex_timedlock: there
 * it tries the lock, yielding and then sleeping 20 us between tries, until the
 * deadline. */
int plat_mutex_timedlock(pthread_mutex_t *m, const struct timespec *deadline);

#endif
