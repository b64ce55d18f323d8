/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The kext's kmod_info record (what Xcode generates for a kext target).  _start and
 * _stop come from libkmodc++, which runs the C++ constructors of the IOKit classes. */
#include <mach/mach_types.h>

extern kern_return_t _start(kmod_info_t *ki, void *data);
extern kern_return_t _stop(kmod_info_t *ki, void *data);

KMOD_EXPLICIT_DECL(org.uverbs.UvShim, UVSHIM_KEXT_VERSION, _start, _stop)
__private_extern__ kmod_start_func_t *_realmain = 0;
__private_extern__ kmod_stop_func_t *_antimain = 0;
__private_extern__ int _kext_apple_cc = __APPLE_CC__;
