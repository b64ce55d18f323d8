/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Facts about the host CPU that the device must be told, one function per fact, each
 * with where it comes from (a header only: the answer is a compile-time or one sysconf
 * fact, so there is no _linux.c/_macos.c pair).  Callers take these as defaults and let a parameter
 * override them (tests, and hosts this file does not know).
 */
#ifndef UV_PLATFORM_CPU_H
#define UV_PLATFORM_CPU_H

#include <stddef.h>
#if defined(__linux__)
#include <unistd.h>
#endif

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

#endif
