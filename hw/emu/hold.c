/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Commands held for pages: firmware that needs more ICM to execute a command asks the
 * driver for pages with a PAGE_REQUEST event and completes the command only once it
 * has them (PRM "Firmware Pages", "Page Request Event").  A driver that serves page
 * requests only after the command returned deadlocks here; one that answers from
 * inside its wait, with MANAGE_PAGES on another command slot (rdma-core
 * providers/mlx5/mlx5_vfio.c uses the queue's last entry), sees the command complete.
 *
 * Two sources: the icm=N mode (every CREATE_* after INIT_HCA needs N more pages) and
 * the one-shot page-hold fault rules (fault.c: give, reclaim or release-all around one
 * command).  The held entry keeps its ownership bit; cmd.c runs it again, from the
 * start, once emu_hold_ready says the exchange is done.
 */
#include <string.h>

#include "hw/emu/caps_seed.h"
#include "hw/emu/emu_dev.h"

/* Pages the firmware cannot give back in the current state (cmd_pages.c keeps the
 * same rule for MANAGE_PAGES take). */
static size_t spare_pages(struct emu_dev *d)
{
	size_t need = d->hca == EMU_HCA_INITIALIZED ? (size_t)EMU_CAPS_SEED_BOOT_PAGES + EMU_CAPS_SEED_INIT_PAGES : 0;

	return d->pages.n > need ? d->pages.n - need : 0;
}

/* PRM "Page Request Event" on the EQ that asked for it: -ENOENT when none does. */
static int post_request(struct emu_dev *d, int32_t npages, bool release_all)
{
	uint8_t data[EMU_EQE_DATA_BYTES] = { 0 };

	PRM_SET(pages_req_event, data, function_id, 0);
	PRM_SET(pages_req_event, data, release_all_pages, release_all ? 1 : 0);
	PRM_SET(pages_req_event, data, num_pages, (uint32_t)npages);
	return emu_eq_post_event(d, PRM_EVENT_PAGE_REQUEST, 0, data);
}

/* Firmware lets go of every page and says so with the release-all flag (Linux
 * pagealloc.c: the driver frees them with no MANAGE_PAGES).  num_pages carries the
 * negated count, which Linux ignores when the flag is set: a driver that misses the
 * flag would try to reclaim them and get none. */
static void release_all(struct emu_dev *d)
{
	size_t n = d->pages.n;

	if (post_request(d, -(int32_t)n, true) < 0) {
		emu_log(d, EMU_LOG_INFO, "page hold: no EQ listens for PAGE_REQUEST, pages kept");
		return;
	}
	d->pages.n = 0;
	d->ctr.pages_taken += n;
	d->ctr.pages_released_all += n;
	d->regular_pages = 0;
	emu_log(d, EMU_LOG_INFO, "page hold: released all %zu pages", n);
}

static bool is_create(uint16_t opcode)
{
	const char *name = prm_opcode_name(opcode);

	return name && strncmp(name, "CREATE_", 7) == 0;
}

bool emu_hold_begin(struct emu_dev *d, unsigned slot, uint16_t opcode)
{
	struct emu_fail_rule r = { 0 };
	int32_t n = 0;

	if (d->held_resuming & (1u << slot))
		return false;
	if (emu_fault_page_hold_take(d, opcode, &r)) {
		if (r.release_all) {
			release_all(d);
			return false;
		}
		n = r.pages;
	} else if (d->cfg.icm_pages && is_create(opcode)) {
		n = (int32_t)d->cfg.icm_pages;
	}
	if (!n || d->hca != EMU_HCA_INITIALIZED)
		return false;
	if (n < 0) {
		/* Only pages the firmware can spare come back: never hold for more. */
		size_t spare = spare_pages(d);

		if ((size_t)-(int64_t)n > spare)
			n = -(int32_t)spare;
		if (!n)
			return false;
	}
	if (post_request(d, n, false) < 0) {
		/* Nobody would hear the request: holding would hang for ever. */
		emu_log(d, EMU_LOG_INFO, "page hold: no EQ listens for PAGE_REQUEST, %s runs at once",
			prm_opcode_name(opcode) ? prm_opcode_name(opcode) : "command");
		return false;
	}
	d->regular_pages += n;
	d->held_slots |= 1u << slot;
	d->held_want += n;
	d->ctr.cmds_held++;
	emu_log(d, EMU_LOG_INFO, "page hold: slot %u held until %d pages %s", slot, n < 0 ? -n : n,
		n > 0 ? "are given" : "are taken back");
	return true;
}

void emu_hold_given(struct emu_dev *d, uint32_t n)
{
	if (d->held_want > 0)
		d->held_want = (int64_t)n >= d->held_want ? 0 : d->held_want - n;
}

void emu_hold_taken(struct emu_dev *d, uint32_t n)
{
	if (d->held_want < 0)
		d->held_want = (int64_t)n >= -d->held_want ? 0 : d->held_want + n;
}

/* MANAGE_PAGES op_mod 0: the driver could not supply the pages; held commands fail
 * with "no resources" instead of waiting for pages that will not come. */
void emu_hold_alloc_failed(struct emu_dev *d)
{
	if (d->held_slots && d->held_want > 0) {
		d->held_want = 0;
		d->held_fail = true;
	}
}

uint32_t emu_hold_ready(struct emu_dev *d, bool *fail)
{
	uint32_t s = d->held_slots;

	if (!s || d->held_want)
		return 0;
	*fail = d->held_fail;
	d->held_slots = 0;
	d->held_fail = false;
	return s;
}

void emu_hold_reset(struct emu_dev *d)
{
	d->held_slots = 0;
	d->held_resuming = 0;
	d->held_want = 0;
	d->held_fail = false;
}
