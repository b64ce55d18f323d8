/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Random bytes from the kernel's generator: Linux getrandom(2), macOS arc4random_buf(3)
 * (which never fails).  0 or -errno. */
#ifndef UV_PLATFORM_RANDOM_H
#define UV_PLATFORM_RANDOM_H

#include <stddef.h>

int plat_random(void *buf, size_t len);

#endif
