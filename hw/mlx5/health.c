/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Health watch (PRM "Health Buffer" and initialization segment health_counter /
 * nic_interface; the sensors and the miss count are Linux's,
 * drivers/net/ethernet/mellanox/mlx5/core/health.c check_fatal_sensors and poll_health,
 * which rdma-core mlx5_vfio.c mlx5_vfio_poll_health repeats).
 *
 * Fatal sensors: the BAR reads all-ones (the function is gone, e.g. a Thunderbolt cable
 * pulled), nic_interface reads disabled or SW reset, or the health buffer carries a
 * syndrome together with the rfr ("reset for recovery") bit.  A health_syndrome or a
 * health-buffer synd alone is reported in mx5_health but is not fatal: firmware also
 * posts recoverable errors there.  On any of these, every queue is failed with flush
 * errors through the objects' state, and MX5_EVENT_DEVICE_FATAL is raised once; no
 * register is ever polled again in a loop.
 *
 * The firmware increments health_counter while it is alive: samples at least
 * health_poll_ms apart (Linux: every 2 s) that find it unchanged three times in a row
 * (Linux MAX_MISSES 3) mean its health is compromised.  That is reported (mx5_health
 * counter_stuck, the device message), not acted on: Linux health.c poll_health only logs
 * "device's health compromised - reached miss count" and queues its devlink reporter,
 * and the fatal sensors above decide whether the device is dead. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hw/mlx5/mx5_internal.h"

/* initial_seg nic_interface_state values (Linux MLX5_NIC_IFC_DISABLED, _SW_RESET). */
enum { MX5_NIC_IFC_DISABLED = 1, MX5_NIC_IFC_SW_RESET = 7 };

void mx5_device_set_health_poll(struct mx5_device *dev, unsigned interval_ms, unsigned misses)
{
	dev->health_poll_ms = interval_ms;
	dev->health_max_misses = misses;
	dev->health_misses = 0;
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
	/* Commands can no longer complete: the queue's owner is gone.  The one waiting (this
	 * may be its own wait, which found the error) ends now rather than at the command
	 * timeout, and later ones are refused, as Linux health.c mlx5_enter_error_state()
	 * does through cmd.c mlx5_cmd_flush(). */
	if (dev->cmdq) {
		cmdq_set_down(dev->cmdq, -ENODEV, dev->err[0] ? dev->err : "device in fatal error");
		if (dev->cmd_event_mode) {
			cmdq_set_polling_mode(dev->cmdq);
			dev->cmd_event_mode = false;
		}
	}
	mx5_objects_flush(dev);
	mx5_raise_event(dev, MX5_EVENT_DEVICE_FATAL, 0, 0, synd);
}

/* The command engine's look at health while a command waits (cmdq_set_health_check):
 * the sensors above, so that a command outstanding when the firmware dies ends at once
 * (mx5_mark_fatal: cmdq_set_down) instead of at the command timeout.  The waiting thread
 * holds the device (uverbs' device lock), so the service thread's periodic check cannot
 * run meanwhile: the wait looks itself. */
static void mx5_cmd_health(void *ctx)
{
	struct mx5_device *dev = ctx;
	if (dev->health == MX5_HEALTH_OK)
		mx5_device_check_health(dev, NULL);
}

void mx5_health_watch_commands(struct mx5_device *dev)
{
	if (dev->cmdq)
		cmdq_set_health_check(dev->cmdq, mx5_cmd_health, dev);
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
	h->nic_interface = (uint8_t)MX5_ISEG_GET(dev, nic_interface_state);
	mx5_iseg_load(dev, PRM_OFF(initial_seg, health_buffer), PRM_WIDTH(initial_seg, health_buffer));
	const uint8_t *hb = PRM_ADDR(initial_seg, dev->iseg, health_buffer);
	h->synd = (uint8_t)PRM_GET(health_buffer, hb, synd);
	h->rfr = (uint8_t)PRM_GET(health_buffer, hb, rfr);
	h->ext_synd = (uint16_t)PRM_GET(health_buffer, hb, ext_synd);
	h->severity = (uint8_t)PRM_GET(health_buffer, hb, severity);
	h->irisc_index = (uint8_t)PRM_GET(health_buffer, hb, irisc_index);
	h->assert_existptr = (uint32_t)PRM_GET(health_buffer, hb, assert_existptr);
	h->assert_callra = (uint32_t)PRM_GET(health_buffer, hb, assert_callra);
	h->fw_version = (uint32_t)PRM_GET(health_buffer, hb, fw_version);
	h->hw_id = (uint32_t)PRM_GET(health_buffer, hb, hw_id);

	if (dev->health == MX5_HEALTH_OK &&
	    (h->nic_interface == MX5_NIC_IFC_DISABLED || h->nic_interface == MX5_NIC_IFC_SW_RESET)) {
		snprintf(dev->err, sizeof(dev->err), "health: NIC interface %s (nic_interface %u)",
			 h->nic_interface == MX5_NIC_IFC_DISABLED ? "disabled" : "in SW reset",
			 h->nic_interface);
		mx5_mark_fatal(dev, MX5_HEALTH_FATAL, h->health_syndrome);
	}
	if (dev->health == MX5_HEALTH_OK && h->synd && h->rfr) {
		snprintf(dev->err, sizeof(dev->err),
			 "health: fatal syndrome 0x%x, firmware requests reset (health buffer synd "
			 "0x%x, ext_synd 0x%x)", h->health_syndrome, h->synd, h->ext_synd);
		mx5_mark_fatal(dev, MX5_HEALTH_FATAL, h->health_syndrome ? h->health_syndrome : h->synd);
	}

	/* Counter misses: a sample counts once health_poll_ms passed since the last one
	 * (a caller polling faster only sees the same sample again); the first call, or one
	 * after a change, starts over. */
	uint64_t now = mx5_now_ns();
	if (!dev->health_primed || h->health_counter != dev->last_health_counter) {
		dev->health_primed = true;
		dev->last_health_counter = h->health_counter;
		dev->health_sample_ns = now;
		dev->health_misses = 0;
	} else if (now - dev->health_sample_ns >= (uint64_t)dev->health_poll_ms * 1000000ull) {
		dev->health_sample_ns = now;
		dev->health_misses++;
		/* reported once per stall, as Linux reports on reaching MAX_MISSES */
		if (dev->health == MX5_HEALTH_OK && dev->health_max_misses &&
		    dev->health_misses == dev->health_max_misses) {
			snprintf(dev->err, sizeof(dev->err),
				 "health: device's health compromised: counter stuck at %u for %u samples "
				 "%u ms apart (health buffer synd 0x%x)", h->health_counter,
				 dev->health_misses, dev->health_poll_ms, h->synd);
			dev->health_reports++;
		}
	}
	h->counter_misses = dev->health_misses;
	h->counter_stuck = dev->health_max_misses && dev->health_misses >= dev->health_max_misses;
	h->state = dev->health;
	return dev->health;
}
