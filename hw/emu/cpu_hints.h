/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Where applications poll: one time per CPU, shared by every process of this user
 * through a file in the run directory (hw/platform/run_dir.h), so that an emulated
 * NIC's device thread about to busy-poll its socket for a passive responder (rx_thread.c
 * rx_spin) can tell that it has just preempted an application polling on the same CPU,
 * most often the very requester whose next packet it waits for, and move to another
 * CPU instead of keeping that requester off its own.  A hint only: no hint file (run
 * directory refused or off, mapping failed) means no hints, and the spin behaves as
 * before.  docs/architecture.md, "Progress whatever the application does". */
#ifndef UV_EMU_CPU_HINTS_H
#define UV_EMU_CPU_HINTS_H

#include <stdbool.h>
#include <stdint.h>

/* The calling thread polls a CQ of an emulated device now (emu_poll_assist). */
void emu_cpu_hint_polled(uint64_t now_ns);
/* Whether an application thread polled on `cpu` within `within_ns` before now_ns. */
bool emu_cpu_hint_polled_recently(int cpu, uint64_t now_ns, uint64_t within_ns);

#endif
