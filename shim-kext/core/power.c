/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Sleep and wake (review 2026-12-05 finding 4): what the kext does when the Mac's power
 * changes while a driver in userspace owns the function.
 *
 * A ConnectX that loses power loses its command queue address, its firmware pages and
 * every object, while the driver still holds them; on wake it would wait 60 s for each
 * command that can no longer complete.  Linux unloads the function on suspend and loads
 * it again on resume (mlx5_core main.c, mlx5_suspend -> mlx5_unload_one, mlx5_resume ->
 * mlx5_load_one).  Here the driver is in userspace, so:
 *  - idle sleep (kIOMessageCanSystemSleep, which may be refused) is refused while an
 *    owner holds the function;
 *  - a sleep that cannot be refused (lid closed, menu; the function's setPowerState to
 *    off) marks the device gone at once: every call answers ENODEV and the kext touches
 *    the function no more.  The owner is told through every vector it armed, one
 *    message each: its waits wake, it finds the BAR reading all-ones, raises the fatal
 *    event (IBV_EVENT_DEVICE_FATAL) and reopens, instead of waiting out a timeout;
 *  - when power is back the function may be opened again, once the owner that saw it
 *    go has closed (its release unwires the pins: a function without power writes
 *    nothing).
 * The IOKit glue (shim-kext/macos/UvShim.cpp) calls these under the device lock. */
#include "shim-kext/core/uvshim_core.h"

int uvshim_power_may_sleep(const struct uvshim_dev *d)
{
	return d->state == UVSHIM_STATE_CLOSED || d->gone ? 0 : -UVSHIM_EBUSY;
}

uint64_t uvshim_power_down(struct uvshim_dev *d)
{
	uint64_t notify = 0;

	if (d->gone)
		return 0;            /* already gone (unplugged, or asleep) */
	d->gone = true;
	d->asleep = true;
	d->power_back = false;
	if (d->state != UVSHIM_STATE_OWNED)
		return 0;
	for (uint32_t v = 0; v < d->info.num_vectors && v < 64; v++)
		if (d->vec[v].armed)
			notify |= 1ull << v;
	return notify;
}

void uvshim_power_up(struct uvshim_dev *d)
{
	if (!d->asleep)
		return;
	if (d->state == UVSHIM_STATE_CLOSED) {
		d->gone = false;
		d->asleep = false;
	} else {
		d->power_back = true;   /* usable again when this owner has closed */
	}
}

void uvshim_power_released(struct uvshim_dev *d)
{
	if (d->asleep && d->power_back) {
		d->gone = false;
		d->asleep = false;
		d->power_back = false;
	}
}
