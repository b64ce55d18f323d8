/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Live counters of the devices a process has open, published for uvinfo.
 *
 * Each open device's service thread (device.c) refreshes, about once a second, a small
 * text file `<run dir>/<pid>-<device>.counters`, where the run dir is $UVERBS_RUN_DIR
 * or /tmp/uverbs-<uid> (mode 0700); UVERBS_RUN_DIR=off publishes nothing.  The file is
 * replaced whole (write, then rename), so a reader sees one refresh or the next.  A
 * hung application can so be looked at while it hangs: `uvinfo --counters [--pid N]`.
 *
 * Format, one "key value" per line:
 *   uverbs-counters 1
 *   pid <pid>
 *   device <name>
 *   uri <shim uri>
 *   updated_ms <CLOCK_REALTIME milliseconds>
 *   port1.<counter> <value>      for each counter of uv_stats_counter_names
 *   (or "port1.counters unavailable" when the device has no counter set)
 * This header is shared by the writer (uverbs/stats.c) and the reader (tools/uvinfo). */
#ifndef UVERBS_STATS_H
#define UVERBS_STATS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UV_STATS_MAGIC "uverbs-counters 1"
#define UV_STATS_SUFFIX ".counters"

/* The run dir into buf; 0, or -1 when publishing is off (UVERBS_RUN_DIR=off). */
static inline int uv_stats_dir(char *buf, size_t len)
{
	const char *s = getenv("UVERBS_RUN_DIR");

	if (s && !strcmp(s, "off"))
		return -1;
	if (s && *s)
		snprintf(buf, len, "%s", s);
	else
		snprintf(buf, len, "/tmp/uverbs-%u", (unsigned)getuid());
	return 0;
}

#endif
