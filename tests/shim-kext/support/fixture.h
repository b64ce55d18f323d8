/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Criterion fixtures for the kext core tests: a fake device with 16 KiB pages (Apple
 * Silicon), 64 pin slots, opened by root (owner_a) with HELLO done. */
#ifndef UVSHIM_TEST_FIXTURE_H
#define UVSHIM_TEST_FIXTURE_H

#include <criterion/criterion.h>
#include <stdlib.h>

#include "tests/shim-kext/support/fake_platform.h"

#define PG 16384ull
#define UVA 0x100000000ull /* a user VA, page aligned */

static struct fake *F;

static inline void fx_new(uint64_t page, uint32_t cap, uint32_t max_pins, uint64_t max_bytes)
{
	F = calloc(1, sizeof(*F));
	cr_assert_not_null(F);
	cr_assert_eq(fake_init(F, page, cap, max_pins, max_bytes), 0);
}

static inline void fx_setup_closed(void) { fx_new(PG, 64, 0, 0); }

static inline void fx_setup(void)
{
	fx_setup_closed();
	cr_assert_eq(fake_open_hello(F), 0);
}

static inline void fx_teardown(void)
{
	fake_fini(F);
	free(F);
	F = NULL;
}

static inline int fx_call(uint32_t sel, const void *req, void *rep)
{
	return fake_call(F, &F->owner_a, sel, req, rep);
}

static inline int fx_unpin(uint64_t handle)
{
	struct uvshim_handle_req r = {handle};
	return fx_call(UVSHIM_SEL_UNPIN, &r, NULL);
}

static inline int fx_dma_free(uint64_t handle)
{
	struct uvshim_handle_req r = {handle};
	return fx_call(UVSHIM_SEL_DMA_FREE, &r, NULL);
}

static inline bool fx_never_member(const void *ctx, uint32_t gid)
{
	(void)ctx;
	(void)gid;
	return false;
}

static inline bool fx_member_of_600(const void *ctx, uint32_t gid)
{
	(void)ctx;
	return gid == 600;
}

#endif
