/* Health watch (PRM "Health Buffer" and initialization segment health_counter /
 * health_syndrome; Linux mlx5 health.c polls the same registers).
 *
 * The firmware increments health_counter while it is alive and sets health_syndrome
 * on a fatal error.  A read of all-ones from the BAR means the function is gone (a
 * Thunderbolt cable pulled): the same outcome as fatal, and no register is ever
 * polled again in a loop.  On either, every queue is failed with flush errors through
 * the objects' state, and MX5_EVENT_DEVICE_FATAL is raised once. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hw/mlx5/mx5_internal.h"

void mx5_device_set_health_stall(struct mx5_device *dev, unsigned stall_ms)
{
	dev->health_stall_ms = stall_ms;
	dev->health_primed = false;
}

int mx5_device_is_fatal(const struct mx5_device *dev)
{
	return dev->health != MX5_HEALTH_OK;
}

void mx5_mark_fatal(struct mx5_device *dev, enum mx5_health_state why, uint8_t synd)
{
	if (dev->health != MX5_HEALTH_OK)
		return;
	dev->health = why;
	/* Commands can no longer complete: the queue's owner is gone. */
	if (dev->cmdq && dev->cmd_event_mode) {
		cmdq_set_polling_mode(dev->cmdq);
		dev->cmd_event_mode = false;
	}
	mx5_objects_flush(dev);
	mx5_raise_event(dev, MX5_EVENT_DEVICE_FATAL, 0, 0, synd);
}

enum mx5_health_state mx5_device_check_health(struct mx5_device *dev, struct mx5_health *h)
{
	struct mx5_health tmp;
	if (!h)
		h = &tmp;
	memset(h, 0, sizeof(*h));
	if (!dev)
		return MX5_HEALTH_FATAL;
	if (dev->health == MX5_HEALTH_REMOVED) {
		h->state = dev->health;
		h->fw_rev = 0xffffffffu;
		return dev->health;
	}

	mx5_iseg_load(dev, 0, 32);
	memcpy(&h->fw_rev, dev->iseg, 4);
	h->fw_rev = be32toh(h->fw_rev);
	if (h->fw_rev == 0xffffffffu) {
		snprintf(dev->err, sizeof(dev->err),
			 "health: device removed (BAR reads all-ones)");
		mx5_mark_fatal(dev, MX5_HEALTH_REMOVED, 0);
		h->state = dev->health;
		return dev->health;
	}

	h->health_counter = (uint32_t)MX5_ISEG_GET(dev, health_counter);
	h->health_syndrome = (uint8_t)MX5_ISEG_GET(dev, health_syndrome);
	mx5_iseg_load(dev, PRM_OFF(initial_seg, health_buffer), PRM_WIDTH(initial_seg, health_buffer));
	const uint8_t *hb = PRM_ADDR(initial_seg, dev->iseg, health_buffer);
	h->synd = (uint8_t)PRM_GET(health_buffer, hb, synd);
	h->ext_synd = (uint16_t)PRM_GET(health_buffer, hb, ext_synd);
	h->severity = (uint8_t)PRM_GET(health_buffer, hb, severity);
	h->irisc_index = (uint8_t)PRM_GET(health_buffer, hb, irisc_index);
	h->assert_existptr = (uint32_t)PRM_GET(health_buffer, hb, assert_existptr);
	h->assert_callra = (uint32_t)PRM_GET(health_buffer, hb, assert_callra);
	h->fw_version = (uint32_t)PRM_GET(health_buffer, hb, fw_version);
	h->hw_id = (uint32_t)PRM_GET(health_buffer, hb, hw_id);

	if (dev->health == MX5_HEALTH_OK && h->health_syndrome) {
		snprintf(dev->err, sizeof(dev->err),
			 "health: fatal syndrome 0x%x (health buffer synd 0x%x, ext_synd 0x%x)",
			 h->health_syndrome, h->synd, h->ext_synd);
		mx5_mark_fatal(dev, MX5_HEALTH_FATAL, h->health_syndrome);
	}

	/* Counter stall: it must move within health_stall_ms of calls.  The first call
	 * (or the first after a change) starts the clock. */
	uint64_t now = mx5_now_ns();
	if (!dev->health_primed || h->health_counter != dev->last_health_counter) {
		dev->health_primed = true;
		dev->last_health_counter = h->health_counter;
		dev->health_counter_since_ns = now;
	} else if (dev->health == MX5_HEALTH_OK && dev->health_stall_ms &&
		   now - dev->health_counter_since_ns > (uint64_t)dev->health_stall_ms * 1000000ull) {
		snprintf(dev->err, sizeof(dev->err),
			 "health: counter stuck at %u for %u ms", h->health_counter,
			 dev->health_stall_ms);
		mx5_mark_fatal(dev, MX5_HEALTH_FATAL, 0);
	}
	h->state = dev->health;
	return dev->health;
}
