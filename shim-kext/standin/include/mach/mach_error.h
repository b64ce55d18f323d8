/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* mach_error_string, for the IOKit stand-in on Linux (shim-kext/standin/README.md). */
#ifndef UVSHIM_STANDIN_MACH_MACH_ERROR_H
#define UVSHIM_STANDIN_MACH_MACH_ERROR_H

#include <mach/mach.h>

/* The name of an IOReturn the stand-in gives ("(iokit/common) bad argument" style, as
 * Apple's mach_error_string prints it), or "unknown error code". */
const char *mach_error_string(kern_return_t kr);

#endif
