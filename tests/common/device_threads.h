/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The emulated NICs' device threads of this process (named EMU_DEVICE_THREAD_NAME,
 * hw/emu/rx_thread.c), found by name in /proc/self/task: for tests that read their
 * scheduling or hold them to CPUs.  Linux only. */
#ifndef UVERBS_TESTS_COMMON_DEVICE_THREADS_H
#define UVERBS_TESTS_COMMON_DEVICE_THREADS_H

#include <stdbool.h>
#include <sys/types.h>

/* Calls fn(tid, arg) for each device thread until fn returns true; how many it called
 * fn for, or -1 when /proc/self/task cannot be read. */
int test_each_device_thread(bool (*fn)(pid_t tid, void *arg), void *arg);

#endif
