/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The Mach subset hw/shim/kext.c uses, for the IOKit stand-in on Linux
 * (shim-kext/standin/README.md).  Types and values as in Apple's <mach/port.h>,
 * <mach/kern_return.h>, <mach/mach_types.h> and <mach/vm_types.h>. */
#ifndef UVSHIM_STANDIN_MACH_MACH_H
#define UVSHIM_STANDIN_MACH_MACH_H

#include <stdint.h>

typedef int kern_return_t;
typedef unsigned int natural_t;
typedef natural_t mach_port_t;
typedef mach_port_t task_t;
typedef mach_port_t task_port_t;
typedef uint64_t mach_vm_address_t;
typedef uint64_t mach_vm_size_t;

#define KERN_SUCCESS 0
#define MACH_PORT_NULL ((mach_port_t)0)

/* This task's port (a constant of the stand-in: one task per process). */
mach_port_t mach_task_self(void);

#endif
