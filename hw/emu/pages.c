/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Firmware pages the driver gave the device (MANAGE_PAGES): a sorted set of 4 KiB
 * IOVAs.  The device never touches them here, but holds them as firmware does, so the
 * accounting (given, taken, held) is exact and teardown can prove every page back. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/emu_dev.h"

#define EMU_FW_PAGE 4096u   /* firmware pages are 4 KiB whatever the host page size */

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

bool emu_page_held(struct emu_dev *d, uint64_t iova)
{
	return d->pages.n && bsearch(&iova, d->pages.iova, d->pages.n, sizeof(uint64_t), u64_cmp) != NULL;
}

/* Check the whole list first, then take it: a bad entry leaves nothing held. */
int emu_pages_hold(struct emu_dev *d, const uint64_t *pages, size_t n, uint32_t *syndrome)
{
	uint64_t *sorted;
	size_t need;

	if (!n)
		return 0;
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, pages, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), u64_cmp);
	for (size_t i = 0; i < n; i++) {
		uint32_t s = 0;

		if (sorted[i] % EMU_FW_PAGE)
			s = PRM_SYND_PAGE_NOT_ALIGNED;
		else if (!emu_iova_mapped(d, sorted[i], EMU_FW_PAGE))
			s = PRM_SYND_PAGE_NOT_PINNED;
		else if (i && sorted[i] == sorted[i - 1])
			s = PRM_SYND_DUPLICATE_PAGE;
		else if (emu_page_held(d, sorted[i]))
			s = PRM_SYND_PAGE_IN_USE;
		if (s) {
			emu_drverr(d, "MANAGE_PAGES gives page 0x%llx: %s", (unsigned long long)sorted[i],
				   prm_syndrome_name(s));
			*syndrome = s;
			free(sorted);
			return -EINVAL;
		}
	}
	need = d->pages.n + n;
	if (need > d->pages.cap) {
		size_t cap = d->pages.cap ? d->pages.cap : 256;
		uint64_t *p;

		while (cap < need)
			cap *= 2;
		p = realloc(d->pages.iova, cap * sizeof(*p));
		if (!p) {
			free(sorted);
			return -ENOMEM;
		}
		d->pages.iova = p;
		d->pages.cap = cap;
	}
	/* Merge the sorted batch in from the back: the driver gives 12,868 pages at
	 * INIT_HCA in many batches, and sorting the whole set again after each one was most
	 * of an ibv_open_device's CPU once the pages stopped being zeroed (issue 32). */
	for (size_t i = d->pages.n, j = n, k = need; j;) {
		if (i && d->pages.iova[i - 1] > sorted[j - 1])
			d->pages.iova[--k] = d->pages.iova[--i];
		else
			d->pages.iova[--k] = sorted[--j];
	}
	d->pages.n = need;
	d->ctr.pages_given += n;
	free(sorted);
	return 0;
}

size_t emu_pages_release(struct emu_dev *d, uint64_t *out, size_t n)
{
	if (n > d->pages.n)
		n = d->pages.n;
	/* Give back the highest addresses first: any order is valid for the driver. */
	for (size_t i = 0; i < n; i++)
		out[i] = d->pages.iova[d->pages.n - 1 - i];
	d->pages.n -= n;
	d->ctr.pages_taken += n;
	return n;
}

uint64_t emu_pages_held(struct emu_dev *d)
{
	size_t n;

	emu_read_locked(d, &n, &d->pages.n, sizeof(n));
	return n;
}

int emu_pages_request(struct emu_dev *d, int32_t npages)
{
	uint8_t data[EMU_EQE_DATA_BYTES] = { 0 };
	int rc;

	pthread_mutex_lock(&d->lock);
	if (d->hca != EMU_HCA_INITIALIZED) {
		pthread_mutex_unlock(&d->lock);
		return -EPERM;
	}
	/* PRM "Page Request Event": num_pages > 0 asks for pages, < 0 offers them back. */
	PRM_SET(pages_req_event, data, function_id, 0);
	PRM_SET(pages_req_event, data, num_pages, (uint32_t)npages);
	rc = emu_eq_post_event(d, PRM_EVENT_PAGE_REQUEST, 0, data);
	if (rc == -ENOENT)
		rc = -EAGAIN;
	if (rc == 0)
		d->regular_pages += npages;
	pthread_mutex_unlock(&d->lock);
	return rc;
}

/* pages=N: the firmware asks for N more pages as soon as an EQ can carry the request,
 * and once it holds them offers half back — the exchange real firmware starts on its
 * own, so a driver's PAGE_REQUEST service is exercised without a test hook. */
void emu_pages_auto(struct emu_dev *d)
{
	int32_t n = (int32_t)d->cfg.auto_pages;

	if (!n || d->hca != EMU_HCA_INITIALIZED)
		return;
	if (d->auto_pages_phase == 0) {
		if (emu_pages_request(d, n) == 0)
			d->auto_pages_phase = 1;
	} else if (d->auto_pages_phase == 1 && d->regular_pages == 0 && n / 2 > 0) {
		if (emu_pages_request(d, -(n / 2)) == 0)
			d->auto_pages_phase = 2;
	}
}
