/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/random.h on macOS. */
#include <stdlib.h>

#include "hw/platform/random.h"

int plat_random(void *buf, size_t len)
{
	arc4random_buf(buf, len);
	return 0;
}
