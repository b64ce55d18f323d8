/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Publishing each open device's queue counters for uvinfo (stats.h), and one debug log
 * line a second when messages were dropped for want of a posted receive.  Runs on the
 * device's service thread under the device lock: one QUERY_Q_COUNTER a second, nothing
 * on the data path. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hw/platform/run_dir.h"
#include "uverbs/stats.h"
#include "uverbs/uv.h"

static uint64_t uv_stats_now_ms(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void uv_stats_path(const struct uv_dev *d, const char *dir, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%ld-%s%s", dir, (long)getpid(), d->ibdev.name, UV_STATS_SUFFIX);
}

static void uv_stats_write(struct uv_dev *d, const struct mx5_counters *c, bool have)
{
	char dir[200], path[320], tmp[340];
	FILE *f;
	char why[300];
	int fd;

	if (uv_stats_dir(dir, sizeof(dir)))
		return;
	/* ours and 0700, or nothing is written there (hw/platform/run_dir.h); said once */
	if (plat_run_dir_check(dir, true, why, sizeof(why))) {
		if (!d->stats_warned)
			uv_log(UV_LOG_WARN, "%s: counters not published: %s", d->ibdev.name, why);
		d->stats_warned = true;
		return;
	}
	uv_stats_path(d, dir, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	/* created new (O_EXCL|O_NOFOLLOW), never opened through a link planted there */
	fd = plat_create_private(tmp);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (!d->stats_warned)
			uv_log(UV_LOG_WARN, "%s: counters not published: %s: %s", d->ibdev.name, tmp,
			       strerror(fd < 0 ? -fd : errno));
		if (fd >= 0)
			close(fd);
		d->stats_warned = true;
		return;
	}
	fprintf(f, "%s\npid %ld\ndevice %s\nuri %s\nupdated_ms %llu\n", UV_STATS_MAGIC, (long)getpid(),
		d->ibdev.name, d->uri, (unsigned long long)uv_stats_now_ms(CLOCK_REALTIME));
	if (have)
		fprintf(f, "port1.out_of_buffer %u\nport1.out_of_sequence %u\nport1.duplicate_request %u\n"
			"port1.rnr_nak_retry_err %u\nport1.local_ack_timeout_err %u\n", c->out_of_buffer,
			c->out_of_sequence, c->duplicate_request, c->rnr_nak_retry_err, c->local_ack_timeout_err);
	else
		fprintf(f, "port1.counters unavailable\n");
	if (fclose(f) || rename(tmp, path)) {
		unlink(tmp);
		return;
	}
	d->stats_published = true;
}

void uv_stats_tick(struct uv_dev *d)
{
	struct mx5_counters c;
	uint64_t now = uv_stats_now_ms(CLOCK_MONOTONIC);
	bool have;

	if (d->stats_last_ms && now - d->stats_last_ms < 1000)
		return;
	d->stats_last_ms = now;
	memset(&c, 0, sizeof(c));
	have = mx5_counters_query(d->mx5, &c) == 0;
	if (have && c.out_of_buffer != d->stats_out_of_buffer) {
		/* at most one line a second, whatever the drop rate */
		uv_log(UV_LOG_DEBUG, "%s port 1: %u message(s) dropped (UC/UD) or RNR-NAKed (RC) for want of "
		       "a posted receive in the last second; out_of_buffer now %u", d->ibdev.name,
		       c.out_of_buffer - d->stats_out_of_buffer, c.out_of_buffer);
		d->stats_out_of_buffer = c.out_of_buffer;
	}
	uv_stats_write(d, &c, have);
}

void uv_stats_unpublish(struct uv_dev *d)
{
	char dir[200], path[320];

	d->stats_last_ms = 0;
	d->stats_out_of_buffer = 0;
	if (!d->stats_published || uv_stats_dir(dir, sizeof(dir)))
		return;
	uv_stats_path(d, dir, path, sizeof(path));
	unlink(path);
	d->stats_published = false;
}
