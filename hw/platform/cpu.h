/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Facts about the host CPU (what the device must be told, and how many CPUs there are),
 * one function per fact, each with where it comes from, and the spin-wait hint (a header only: the answer is a compile-time or one sysconf
 * fact, so there is no _linux.c/_macos.c pair).  Callers take these as defaults and let a parameter
 * override them (tests, and hosts this file does not know).
 */
#ifndef UV_PLATFORM_CPU_H
#define UV_PLATFORM_CPU_H

#include <stddef.h>
#if defined(__linux__)
#include <sched.h>
#endif
#include <unistd.h>

/* Size in bytes of the host's cache line, as Linux cache_line_size() gives it to
 * mlx5_core (main.c handle_hca_cap: cache_line_128byte = cache_line_size() >= 128).
 *  - Apple M-series (macOS on arm64): 128 bytes (sysctl hw.cachelinesize reports 128).
 *  - Linux: the L1 data cache line sysconf reports (glibc reads it from the CPU's
 *    cache description); 64 when it cannot tell.
 *  - anything else: 64, the line of every x86-64 and most arm64 server cores. */
static inline size_t plat_host_cache_line(void)
{
#if defined(__APPLE__) && defined(__aarch64__)
	return 128;
#elif defined(__linux__) && defined(_SC_LEVEL1_DCACHE_LINESIZE)
	long n = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
	return n >= 16 && n <= 1024 ? (size_t)n : 64;
#else
	return 64;
#endif
}

/* Online CPUs (sysconf _SC_NPROCESSORS_ONLN; at least 1), for the choice between
 * spinning and sleeping: with one CPU a spinner only delays the thread it waits for.
 * Not the calling thread's affinity: a thread pinned to one CPU may still wait for a
 * holder running on another.  A cpuset or a CPU quota that leaves a process one CPU
 * is not seen (the spin budgets bound what that costs). */
static inline long plat_online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? n : 1;
}

/* One turn of a spin-wait loop: tells the core the thread is waiting on another, so a
 * hyperthread sibling gets the pipeline.  x86: PAUSE (Intel SDM vol. 2, "PAUSE -- Spin
 * Loop Hint": it also spares the memory-order flush on leaving the loop; Linux
 * cpu_relax); arm64: YIELD (Arm ARM C6.2 "YIELD"; Linux arm64 cpu_relax uses it too);
 * elsewhere a compiler barrier only. */
static inline void plat_spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* The CPU the calling thread runs on, or -1 when the system cannot say.  Linux:
 * sched_getcpu(3), answered from the thread's rseq area or the vDSO without a system
 * call on glibc 2.35+; macOS has no such call: -1.  A hint only: the thread may move
 * the moment after. */
static inline int plat_current_cpu(void)
{
#if defined(__linux__)
	return sched_getcpu();
#else
	return -1;
#endif
}

#endif
