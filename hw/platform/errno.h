/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* errno values the code uses that one platform lacks.  macOS has no EREMOTEIO (Linux
 * asm-generic/errno.h: "Remote I/O error", the peer reported the failure); its EREMOTE
 * ("remote" in the name, unused by this project) stands in, so the value stays
 * distinct from EPROTO, EIO and the others a caller compares it with. */
#ifndef UV_PLATFORM_ERRNO_H
#define UV_PLATFORM_ERRNO_H

#include <errno.h>

#ifndef EREMOTEIO
#define EREMOTEIO EREMOTE
#endif

#endif
