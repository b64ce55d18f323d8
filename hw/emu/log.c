/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Logging (UVERBS_LOG=error|warn|info|debug, stderr, nothing otherwise), the
 * "driver error" ring (docs/architecture.md, "The emulated ConnectX": what a driver must never do, reported loudly
 * like a hardware model's guest-error trace) and the counters snapshot. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/emu_dev.h"
#include "hw/platform/log_level.h"

/* Read once, at the first message. */
static int emu_log_level(void)
{
	static int level = -1;

	if (level < 0)
		level = (int)plat_log_level_env();
	return level;
}

static void emu_vlog(struct emu_dev *d, enum emu_log_level lvl, const char *fmt, va_list ap)
{
	if ((int)lvl > emu_log_level())
		return;
	plat_log_vprint(d ? d->name : "emu", (enum plat_log_level)lvl, fmt, ap);
}

void emu_log(struct emu_dev *d, enum emu_log_level lvl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emu_vlog(d, lvl, fmt, ap);
	va_end(ap);
}

void emu_drverr(struct emu_dev *d, const char *fmt, ...)
{
	va_list ap;
	char *slot = d->drverr[d->ctr.driver_errors % EMU_DRVERR_RING];

	va_start(ap, fmt);
	vsnprintf(slot, EMU_DRVERR_LEN, fmt, ap);
	va_end(ap);
	d->ctr.driver_errors++;   /* the ring's count too: the newest is at (count - 1) */
	emu_log(d, EMU_LOG_WARN, "driver error: %s", slot);
}

uint64_t emu_drverr_count(struct emu_dev *d)
{
	uint64_t n;

	emu_read_locked(d, &n, &d->ctr.driver_errors, sizeof(n));
	return n;
}

int emu_drverr_get(struct emu_dev *d, unsigned i, char *buf, size_t len)
{
	int rc = 0;

	if (!buf || !len)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	if (i >= EMU_DRVERR_RING || i >= d->ctr.driver_errors)
		rc = -ENOENT;
	else
		snprintf(buf, len, "%s", d->drverr[(d->ctr.driver_errors - 1 - i) % EMU_DRVERR_RING]);
	pthread_mutex_unlock(&d->lock);
	return rc;
}

int emu_drverr_find(struct emu_dev *d, const char *needle)
{
	int found = 0;

	pthread_mutex_lock(&d->lock);
	for (uint64_t i = 0; i < d->ctr.driver_errors && i < EMU_DRVERR_RING && !found; i++)
		found = strstr(d->drverr[(d->ctr.driver_errors - 1 - i) % EMU_DRVERR_RING], needle) != NULL;
	pthread_mutex_unlock(&d->lock);
	return found;
}

void emu_counters(struct emu_dev *d, struct emu_counters *out)
{
	pthread_mutex_lock(&d->lock);
	*out = d->ctr;
	out->pages_held = d->pages.n;
	pthread_mutex_unlock(&d->lock);
}
