/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Event queues inside the device (PRM "Event Queues"): the object CREATE_EQ makes
 * (cmd_eq.c) and the engine that writes EQEs into it (eq.c). */
#ifndef UVERBS_HW_EMU_EQ_H
#define UVERBS_HW_EMU_EQ_H

#include "hw/emu/emu_dev.h"

/* eqc.st (PRM "EQ Context"): armed EQs interrupt on the next EQE, fired ones wait for
 * the driver to re-arm through the UAR EQ doorbell. */
enum { EMU_EQ_ST_ARMED = 0x9, EMU_EQ_ST_FIRED = 0xa };
/* eqc.status: 0 ok, 0xa EQ write failure (overrun) */
enum { EMU_EQ_STATUS_OK = 0x0, EMU_EQ_STATUS_WRITE_FAILURE = 0xa };

struct emu_eq {
	uint32_t eqn;
	uint8_t log_size;
	uint8_t log_page_size;     /* eqc.log_page_size: pages of 4 KiB << this */
	uint8_t st;
	uint8_t status;
	bool oi;                   /* overrun ignore */
	uint32_t uar;
	uint16_t intr;
	uint64_t mask[4];          /* event_bitmask: bit n of word n/64 = event type n */
	uint64_t *pas;             /* page addresses (IOVAs) */
	size_t npas;
	uint32_t prod;             /* EQEs written (free running) */
	uint32_t cons;             /* last consumer index the driver reported (free running) */
	void *uar_obj;             /* referenced UAR */
};

bool emu_eq_wants(const struct emu_eq *eq, uint8_t type);

#endif
