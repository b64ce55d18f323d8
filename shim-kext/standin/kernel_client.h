/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The user half's side of a stand-in kernel in its own process (kernel_proto.h): this
 * process is one task of the daemon named by UVERBS_KEXT_STANDIN_KERNEL.  Used by
 * iokit_user.c only; each call answers an IOReturn as IOKitLib's would. */
#ifndef UVSHIM_STANDIN_KERNEL_CLIENT_H
#define UVSHIM_STANDIN_KERNEL_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include <IOKit/IOKitLib.h>

struct standin_method_args;

/* Is the kernel a daemon (UVERBS_KEXT_STANDIN_KERNEL set)? */
bool skc_remote(void);
kern_return_t skc_count(unsigned *n);
kern_return_t skc_open(unsigned index, uint32_t type, uint32_t *conn);
kern_return_t skc_close(uint32_t conn);
kern_return_t skc_call(uint32_t conn, struct standin_method_args *a);
/* Map the memory type into this task (MAP_SHARED of the kernel's memory). */
kern_return_t skc_map(uint32_t conn, uint32_t memory_type, IOOptionBits options, uint64_t *addr, uint64_t *size);
kern_return_t skc_unmap(uint32_t conn, uint32_t memory_type, uint64_t addr);
void skc_mmio(uint32_t conn, int op, uint64_t off, unsigned size);
uint32_t skc_ipv4(uint32_t conn);

#endif
