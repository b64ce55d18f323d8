/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* waitset.h, what both systems share: an epoll set and a kqueue are both a file
 * descriptor, closed alike. */
#include "hw/platform/waitset.h"

#include <unistd.h>

void plat_waitset_close(int ws)
{
	if (ws >= 0)
		close(ws);
}
