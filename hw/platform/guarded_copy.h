/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Copies to and from the process's own memory that fail with -EFAULT instead of killing
 * the process when a page of the application's range is unmapped, or not writable: a
 * memcpy under a SIGSEGV/SIGBUS handler that, for a fault inside the application's range
 * on the thread doing a guarded copy, jumps back out of the copy (POSIX sigsetjmp /
 * siglongjmp, sigaction(2) with SA_SIGINFO, whose si_addr names the faulting address).
 * The same promise as hw/platform/vm.h's plat_vm_read/plat_vm_write without their system
 * call per copy; those stay for a caller that wants no signal handler at all.
 *
 * Every other SIGSEGV or SIGBUS goes on to the disposition that was in place when the
 * handler was installed: an application's handler is called as the kernel would have
 * called it (its sa_mask, SA_SIGINFO or not, SA_RESETHAND), and SIG_DFL or SIG_IGN is set
 * back to SIG_DFL and the handler returns, so the faulting instruction runs again and the
 * process dies of the signal as it would have without us.
 *
 * An application that installs its own SIGSEGV/SIGBUS handler after
 * plat_guarded_copy_claim() takes the signals from us: a fault in a guarded copy then
 * reaches the application's handler, which may end the process.  A handler that chains
 * to the one it replaced (calls it, or restores it and returns) keeps guarded copies
 * working.  plat_guarded_copy_claim() puts ours back in front, forwarding to the
 * application's; callers call it where a system call is cheap (the emulator: at device
 * open and at each memory registration).
 *
 * All functions return 0 or a negative errno. */
#ifndef UV_PLATFORM_GUARDED_COPY_H
#define UV_PLATFORM_GUARDED_COPY_H

#include <stdbool.h>
#include <stddef.h>

/* Install the handlers if they are not the current SIGSEGV and SIGBUS dispositions
 * (remembering the current ones to forward to).  Cheap to repeat: two sigaction(2)
 * queries when nothing changed.  -errno if sigaction refuses. */
int plat_guarded_copy_claim(void);

/* Whether our handler is the current disposition of both signals (two sigaction(2)
 * queries; for tests and diagnostics). */
bool plat_guarded_copy_owns_signals(void);

/* Copy len bytes from application memory at src into dst (memory the caller owns), or
 * from src into application memory at dst.  -EFAULT when a page of the application's
 * range is not mapped or not readable / writable; the bytes before the faulting page
 * may have been copied then, as a device's DMA stops at the page that faults.  A fault
 * in the caller's own buffer is not caught: it is a bug, and goes on like any other.
 * Installs the handlers on first use (plat_guarded_copy_claim); -errno if that fails.
 * Safe from any number of threads at once; not from a signal handler. */
int plat_guarded_read(void *dst, const void *src, size_t len);
int plat_guarded_write(void *dst, const void *src, size_t len);

#endif
