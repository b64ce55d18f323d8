/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Fault injection (hw/emu/README.md; URI options in hw/emu/config.c): fail or hang chosen
 * commands, a fatal health syndrome, the link going down and up, surprise removal. */
#include <errno.h>
#include <string.h>

#include "hw/emu/emu_dev.h"

/* Returns 0 (run normally), 1 (fail with the status and syndrome set) or 2 (hang).
 * Page-hold rules are hold.c's (emu_fault_page_hold_take). */
int emu_fault_check(struct emu_dev *d, uint16_t opcode, uint8_t *status, uint32_t *syndrome)
{
	for (unsigned i = 0; i < d->nfail; i++) {
		struct emu_fail_rule *r = &d->fail[i];

		if (r->opcode != opcode || r->page_hold)
			continue;
		if (r->skip) {
			r->skip--;
			continue;
		}
		if (r->hang)
			return 2;
		*status = r->status;
		*syndrome = r->syndrome;
		return 1;
	}
	return 0;
}

/* The first page-hold rule for this opcode: 1 when it fires now (it is then used up,
 * *r gets a copy), 0 otherwise. */
int emu_fault_page_hold_take(struct emu_dev *d, uint16_t opcode, struct emu_fail_rule *out)
{
	for (unsigned i = 0; i < d->nfail; i++) {
		struct emu_fail_rule *r = &d->fail[i];

		if (r->opcode != opcode || !r->page_hold)
			continue;
		if (r->skip) {
			r->skip--;
			return 0;
		}
		*out = *r;
		memmove(&d->fail[i], &d->fail[i + 1], (d->nfail - i - 1) * sizeof(*r));
		d->nfail--;
		return 1;
	}
	return 0;
}

static int add_rule(struct emu_dev *d, const struct emu_fail_rule *r)
{
	int rc = 0;

	pthread_mutex_lock(&d->lock);
	if (d->nfail == EMU_MAX_FAIL_RULES)
		rc = -ENOSPC;
	else
		d->fail[d->nfail++] = *r;
	pthread_mutex_unlock(&d->lock);
	return rc;
}

int emu_fault_fail(struct emu_dev *d, uint16_t opcode, uint8_t status, uint32_t syndrome, unsigned skip)
{
	struct emu_fail_rule r = { .opcode = opcode, .status = status, .syndrome = syndrome, .skip = skip };

	if (!status)
		return -EINVAL;
	return add_rule(d, &r);
}

int emu_fault_hang(struct emu_dev *d, uint16_t opcode)
{
	struct emu_fail_rule r = { .opcode = opcode, .hang = 1 };

	return add_rule(d, &r);
}

int emu_fault_page_hold(struct emu_dev *d, uint16_t opcode, int32_t npages, unsigned skip)
{
	struct emu_fail_rule r = { .opcode = opcode, .page_hold = 1, .pages = npages, .skip = skip };

	if (!npages)
		return -EINVAL;
	return add_rule(d, &r);
}

int emu_fault_release_all(struct emu_dev *d, uint16_t opcode, unsigned skip)
{
	struct emu_fail_rule r = { .opcode = opcode, .page_hold = 1, .release_all = 1, .skip = skip };

	return add_rule(d, &r);
}

void emu_fault_clear(struct emu_dev *d)
{
	pthread_mutex_lock(&d->lock);
	d->nfail = 0;
	pthread_mutex_unlock(&d->lock);
}

void emu_fault_fatal(struct emu_dev *d, uint8_t synd)
{
	uint8_t *hb;

	pthread_mutex_lock(&d->lock);
	hb = PRM_ADDR(initial_seg, d->bar, health_buffer);
	/* PRM "Health Buffer": a nonzero synd is a fatal firmware error; the health
	 * counter stops advancing (Linux poll_health treats either as a dead device). */
	PRM_SET(health_buffer, hb, synd, synd ? synd : 1);
	/* rfr: the firmware asks the driver for a reset; a syndrome with rfr is what Linux
	 * health.c (sensor_fw_synd_rfr) takes as fatal. */
	PRM_SET(health_buffer, hb, rfr, 1);
	PRM_SET(health_buffer, hb, valid, 1);
	PRM_SET(health_buffer, hb, severity, 0); /* emergency */
	PRM_SET(initial_seg, d->bar, health_syndrome, synd ? synd : 1);
	d->fatal = true;
	emu_log(d, EMU_LOG_WARN, "fault: fatal health syndrome 0x%x raised", synd);
	pthread_mutex_unlock(&d->lock);
}

void emu_fault_counter_stall(struct emu_dev *d)
{
	pthread_mutex_lock(&d->lock);
	d->counter_stalled = true;
	emu_log(d, EMU_LOG_WARN, "fault: health counter stalled");
	pthread_mutex_unlock(&d->lock);
}

bool emu_port_oper(const struct emu_dev *d)
{
	return d->port_up && d->paos_admin == 1;
}

void emu_port_changed(struct emu_dev *d, bool was_oper)
{
	uint8_t data[EMU_EQE_DATA_BYTES] = { 0 };
	bool now = emu_port_oper(d);

	if (now == was_oper)
		return;
	/* PRM "Port State Change Event": port_num and DOWN/ACTIVE sub type, to the EQ
	 * that asked for PORT_CHANGE (none yet is not an error). */
	PRM_SET(port_state_change_event, data, port_num, 1);
	emu_eq_post_event(d, PRM_EVENT_PORT_CHANGE, now ? PRM_PORT_CHANGE_ACTIVE : PRM_PORT_CHANGE_DOWN, data);
	emu_log(d, EMU_LOG_INFO, "port 1 %s", now ? "up" : "down");
}

int emu_port_set(struct emu_dev *d, int up)
{
	bool was;

	pthread_mutex_lock(&d->lock);
	was = emu_port_oper(d);
	d->port_up = !!up;
	emu_port_changed(d, was);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

void emu_surprise_remove(struct emu_dev *d)
{
	pthread_mutex_lock(&d->lock);
	d->removed = true;
	/* As when a Thunderbolt cable is pulled: reads return all-ones, DMA stops. */
	memset(d->bar, 0xff, d->bar_len);
	emu_log(d, EMU_LOG_WARN, "fault: surprise removal");
	pthread_mutex_unlock(&d->lock);
}

int emu_removed(struct emu_dev *d)
{
	bool r;

	emu_read_locked(d, &r, &d->removed, sizeof(r));
	return r;
}
