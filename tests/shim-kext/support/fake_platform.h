/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A fake platform for shim-kext/core: what the IOKit glue would do, recorded.
 *
 * It hands out IOVAs unlike the VAs (from 0x10_0000_0000 up), can fragment a pin into
 * page-sized segments in descending IOVA order (as a machine without a mapper would),
 * can be told to fail any step or to return a bad segment list, and logs every call
 * with the device state seen at that moment, so tests can assert the teardown order.
 * Used by the criterion tests and the libFuzzer target (no criterion in here).
 */
#ifndef UVSHIM_TEST_FAKE_PLATFORM_H
#define UVSHIM_TEST_FAKE_PLATFORM_H

#include <stdbool.h>
#include <stdint.h>

#include "shim-kext/core/uvshim_core.h"

enum fake_event {
	EV_PIN = 1, EV_UNPIN, EV_DMA_ALLOC, EV_DMA_FREE, EV_BM_OFF, EV_BM_ON, EV_RESET,
	EV_IRQ_ARM, EV_IRQ_DISARM, EV_PIN_FOR, EV_REVOKE,
};

enum fake_bad_segs {
	BAD_NONE = 0,
	BAD_MISALIGNED,    /* first segment's IOVA off by 0x100 */
	BAD_SHORT,         /* segments cover one page less than asked */
	BAD_REUSE_IOVA,    /* hand out the previous pin's IOVA again */
	BAD_SELF_OVERLAP,  /* two segments of the pin at the same IOVA */
	BAD_ZERO_SEGS,
};

#define FAKE_LOG_MAX 512
#define FAKE_MAX_LIVE 4096

struct fake_log {
	enum fake_event ev;
	enum uvshim_state state;
	uint64_t arg;
};

struct fake_pin {
	bool live;
	bool dma;
	uint64_t va, len;
	uint32_t nseg;
	struct uvshim_seg *seg;
};

struct fake {
	struct uvshim_dev dev;
	struct uvshim_pin_entry *storage;
	uint32_t capacity;
	char owner_a, owner_b;            /* addresses used as owner tokens */
	char guest_a, guest_b;            /* and as guest tokens */

	/* knobs */
	bool fragment;                    /* one segment per page, descending IOVA */
	enum fake_bad_segs bad;
	int fail_pin, fail_dma, fail_bm_off, fail_bm_on, fail_reset, fail_irq;

	/* state */
	uint64_t next_iova, last_iova;
	struct fake_pin live[FAKE_MAX_LIVE];
	uint32_t live_pins, live_dma;
	uint32_t armed_mask_lo;           /* vectors 0..31 armed in the "hardware" */
	bool bus_master_on;
	uint32_t resets;
	const void *pin_for_guest;        /* the guest whose task the last PIN_FOR wired */
	uint32_t revoked;                 /* guest windows unmapped */

	struct fake_log log[FAKE_LOG_MAX];
	uint32_t nlog;

	/* called after each logged event (tests re-enter the core from here) */
	void (*hook)(struct fake *f, enum fake_event ev);
	int hook_rc;                      /* what the hook saw, for the test to assert */
};

/* Set up a device: page size, pin limit (0 = capacity), byte limit (0 = default). */
int fake_init(struct fake *f, uint64_t page_size, uint32_t capacity, uint32_t max_pins,
	      uint64_t max_bytes);
void fake_fini(struct fake *f);
/* Open as root with owner_a and say HELLO with this ABI's version. */
int fake_open_hello(struct fake *f);
/* Dispatch with the selector's exact sizes. */
int fake_call(struct fake *f, const void *owner, uint32_t sel, const void *req, void *rep);
int fake_pin(struct fake *f, uint64_t va, uint64_t len, uint32_t flags, struct uvshim_pin_rep *rep);
int fake_dma(struct fake *f, uint64_t len, uint64_t align, struct uvshim_dma_alloc_rep *rep);
/* Open a guest connection (root) for pid with this token and say HELLO. */
int fake_guest_open_hello(struct fake *f, const void *guest, uint32_t pid);
/* Index of the first log entry with this event at or after from, or -1. */
int fake_find(const struct fake *f, enum fake_event ev, uint32_t from);
uint32_t fake_count(const struct fake *f, enum fake_event ev);
void fake_clear_log(struct fake *f);

#endif
