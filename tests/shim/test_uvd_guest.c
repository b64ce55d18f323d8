/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/shim/uvd_guest.c: a device daemon's client stores into a UAR page it maps itself
 * only when the daemon's device is the kext, the daemon granted that page's host page
 * with the ALLOC_UAR, and opening the kext as a guest mapped it; every other outcome
 * keeps the doorbell ring.  The kext exists only on a Mac: the opener here is a fake
 * one that counts its calls, and the real one of a Linux build (no kext shim). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hw/shim/kext_guest.h"
#include "hw/shim/uvd_guest.h"

#define UARPG 4096u

static uint8_t page[16384] __attribute__((aligned(16384)));
static struct {
	unsigned opens, closes;
	unsigned fn;
	uint64_t bar_off;
	int rc;
	size_t len;
} fake;

static int fake_open(void *ctx, unsigned fn, uint64_t bar_off, void **handle, volatile void **va, size_t *len,
		     char *err, size_t errlen)
{
	(void)ctx;
	fake.opens++;
	fake.fn = fn;
	fake.bar_off = bar_off;
	if (fake.rc) {
		snprintf(err, errlen, "no owner");
		return fake.rc;
	}
	*handle = &fake;
	*va = page;
	*len = fake.len;
	return 0;
}

static void fake_close(void *ctx, void *handle)
{
	(void)ctx;
	cr_assert_eq(handle, &fake);
	fake.closes++;
}

static const struct uvd_guest_opener opener = { fake_open, fake_close, NULL };

static void reset(void)
{
	memset(&fake, 0, sizeof(fake));
	fake.len = sizeof(page);
}

TestSuite(uvd_guest, .init = reset);

/* uvd_guest_choose for UAR 0x13 of 4 KiB pages keeps the doorbell ring, after `opens`
 * calls of the fake opener in all, and says `reason` in its why. */
static void expect_ring(unsigned kext_fn, uint32_t granted_uar, const struct uvd_guest_opener *op, unsigned opens,
			const char *reason)
{
	struct uvd_guest_page g;
	char why[256] = "";
	cr_assert_eq(uvd_guest_choose(kext_fn, granted_uar, 0x13, UARPG, op, &g, why, sizeof(why)), 0,
		     "kext_fn %u, granted_uar 0x%x chose the page", kext_fn, granted_uar);
	cr_assert_eq(fake.opens, opens);
	cr_assert(strstr(why, reason), "%s", why);
}

Test(uvd_guest, granted_page_of_a_kext_daemon_is_mapped)
{
	struct uvd_guest_page g;
	char why[256] = "";
	/* UAR 0x13 of 4 KiB pages: BAR0 0x13000, in the 16 KiB host page at 0x10000 */
	cr_assert_eq(uvd_guest_choose(2, 0x14, 0x13, UARPG, &opener, &g, why, sizeof(why)), 1, "%s", why);
	cr_assert_eq(fake.opens, 1);
	cr_assert_eq(fake.fn, 1, "kext_fn 2 is kext:1");
	cr_assert_eq(fake.bar_off, 0x13000);
	cr_assert_eq(g.bar_off, 0x10000);
	cr_assert_eq(g.len, sizeof(page));
	cr_assert_eq((void *)g.va, (void *)page);
	cr_assert_eq(fake.closes, 0);
}

Test(uvd_guest, daemon_of_another_device_keeps_the_ring_and_opens_nothing)
{
	expect_ring(0, 0x14, &opener, 0, "not the kext");
}

Test(uvd_guest, page_not_granted_keeps_the_ring_and_opens_nothing)
{
	expect_ring(1, 0, &opener, 0, "not granted");
	expect_ring(1, 0x13, &opener, 0, "not granted");   /* granted_uar names UAR 0x12, not 0x13 */
}

Test(uvd_guest, failed_open_keeps_the_ring_and_says_why)
{
	fake.rc = -EPERM;
	expect_ring(1, 0x14, &opener, 1, "no owner");
}

Test(uvd_guest, mapping_that_does_not_hold_the_uar_page_is_closed_and_keeps_the_ring)
{
	struct uvd_guest_page g;
	char why[256] = "";
	fake.len = 2048;   /* smaller than the UAR page */
	cr_assert_eq(uvd_guest_choose(1, 0x14, 0x13, UARPG, &opener, &g, why, sizeof(why)), 0);
	cr_assert_eq(fake.closes, 1);
	fake.len = 12288;  /* not a power of two */
	cr_assert_eq(uvd_guest_choose(1, 0x14, 0x13, UARPG, &opener, &g, why, sizeof(why)), 0);
	cr_assert_eq(fake.closes, 2);
}

/* What a Linux build links: hw/shim/kext_guest_none.c, no kext. */
/* The real opener where no kext takes guests: a build without the kext shim ("no kext
 * shim"), or Linux's IOKit stand-in, whose kernel is per process and refuses a guest
 * ("unsupported"): either way the ring stays. */
Test(uvd_guest, no_kext_that_takes_guests_keeps_the_ring)
{
	expect_ring(1, 0x14, &uvd_guest_kext_opener, 0, "kext:0");
}

Test(uvd_guest, store_lands_at_its_offset_in_the_newest_mapping_of_its_host_page)
{
	static uint8_t stale[16384], proxy[0x20000];
	struct uvd_guest_page pages[2] = {
		{ .bar_off = 0x10000, .len = sizeof(stale), .va = stale },   /* revoked, mapped before */
		{ .bar_off = 0x10000, .len = sizeof(page), .va = page },
	};
	memset(page, 0, sizeof(page));
	cr_assert_null(uvd_guest_find(pages, 2, 0x20000, 8), "another host page");
	struct uvd_guest_page *g = uvd_guest_find(pages, 2, 0x13800, 64);
	cr_assert_eq(g, &pages[1]);
	for (unsigned i = 0; i < 64; i++)
		proxy[0x13800 + i] = (uint8_t)(i + 1);
	uvd_guest_store(g, 0x13800, proxy + 0x13800, 64, 1);
	cr_assert_eq(memcmp(page + 0x3800, proxy + 0x13800, 64), 0);
	cr_assert_eq(page[0x3800 + 64], 0);
	cr_assert_eq(stale[0x3800], 0, "the stale mapping is not written");
}
