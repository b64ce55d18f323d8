/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Firmware pages: QUERY_PAGES counts, MANAGE_PAGES give/take with the page list
 * checked, PAGE_REQUEST events, everything reclaimed at teardown. */
#include "tests/emu/emu_test.h"

static void enable(struct et *t)
{
	et_expect(t, et_simple(t, PRM_CMD_OP_ENABLE_HCA, 0, PRM_SIZE(enable_hca_in), 16), 0, 0);
}

Test(emu_pages, query_pages_reports_the_seeded_boot_and_init_counts)
{
	struct et t;
	int32_t n;

	et_open(&t, "emu:");
	enable(&t);
	et_expect(&t, et_query_pages(&t, 1, &n), 0, 0);
	cr_assert_eq(n, EMU_CAPS_SEED_BOOT_PAGES);
	et_expect(&t, et_query_pages(&t, 2, &n), 0, 0);
	cr_assert_eq(n, EMU_CAPS_SEED_INIT_PAGES);
	et_expect(&t, et_query_pages(&t, 3, &n), 0, 0);
	cr_assert_eq(n, 0);
	et_close(&t);
}

Test(emu_pages, query_pages_with_bad_op_mod_is_bad_param)
{
	struct et t;
	int32_t n;

	et_open(&t, "emu:");
	enable(&t);
	et_expect(&t, et_query_pages(&t, 7, &n), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_OP_MOD);
	et_close(&t);
}

Test(emu_pages, giving_boot_pages_clears_the_boot_count)
{
	struct et t;
	struct shim_dma m;
	int32_t n;

	et_open(&t, "emu:");
	enable(&t);
	et_expect(&t, et_give_fresh(&t, &m, EMU_CAPS_SEED_BOOT_PAGES), 0, 0);
	et_query_pages(&t, 1, &n);
	cr_assert_eq(n, 0);
	cr_assert_eq(emu_pages_held(t.emu), EMU_CAPS_SEED_BOOT_PAGES);
	et_close(&t);
}

Test(emu_pages, page_not_4k_aligned_is_refused)
{
	struct et t;
	struct shim_dma m;
	uint64_t p;

	et_open(&t, "emu:");
	enable(&t);
	cr_assert_eq(shim_dma_alloc(t.dev, 8192, 4096, &m), 0);
	p = m.iova + 512;
	et_expect(&t, et_give_pages(&t, &p, 1), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_PAGE_NOT_ALIGNED);
	cr_assert_eq(emu_pages_held(t.emu), 0);
	et_close(&t);
}

Test(emu_pages, page_not_pinned_is_refused)
{
	struct et t;
	uint64_t p = 0x123456789000ull;

	et_open(&t, "emu:");
	enable(&t);
	et_expect(&t, et_give_pages(&t, &p, 1), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_PAGE_NOT_PINNED);
	cr_assert(emu_drverr_find(t.emu, "page not pinned"));
	et_close(&t);
}

Test(emu_pages, duplicate_page_in_one_list_is_refused)
{
	struct et t;
	struct shim_dma m;
	uint64_t p[3];

	et_open(&t, "emu:");
	enable(&t);
	cr_assert_eq(shim_dma_alloc(t.dev, 8192, 4096, &m), 0);
	p[0] = m.iova;
	p[1] = m.iova + 4096;
	p[2] = m.iova;
	et_expect(&t, et_give_pages(&t, p, 3), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_DUPLICATE_PAGE);
	cr_assert_eq(emu_pages_held(t.emu), 0, "a refused list leaves nothing held");
	et_close(&t);
}

Test(emu_pages, page_already_given_is_refused)
{
	struct et t;
	struct shim_dma m;
	uint64_t p;

	et_open(&t, "emu:");
	enable(&t);
	cr_assert_eq(shim_dma_alloc(t.dev, 4096, 4096, &m), 0);
	p = m.iova;
	et_expect(&t, et_give_pages(&t, &p, 1), 0, 0);
	et_expect(&t, et_give_pages(&t, &p, 1), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_PAGE_IN_USE);
	et_close(&t);
}

Test(emu_pages, page_list_shorter_than_its_count_is_bad_input_length)
{
	struct et t;
	ET_IN(manage_pages_in);

	et_open(&t, "emu:");
	enable(&t);
	PRM_SET(manage_pages_in, in, opcode, PRM_CMD_OP_MANAGE_PAGES);
	PRM_SET(manage_pages_in, in, op_mod, 1);
	PRM_SET(manage_pages_in, in, input_num_entries, 4);
	et_expect(&t, et_exec(&t, in, sizeof(in), 16), PRM_CMD_STAT_BAD_INP_LEN, PRM_SYND_INPUT_TOO_SHORT);
	et_close(&t);
}

Test(emu_pages, initialized_hca_returns_only_pages_beyond_what_it_needs)
{
	struct et t;
	struct shim_dma extra;

	et_open(&t, "emu:");
	et_bringup(&t);
	cr_assert_eq(et_take_pages(&t, 16), 0, "boot+init pages stay while initialised");
	et_expect(&t, et_give_fresh(&t, &extra, 5), 0, 0);
	cr_assert_eq(et_take_pages(&t, 16), 5);
	et_teardown(&t);
	et_close(&t);
}

Test(emu_pages, page_request_without_a_listening_eq_is_refused)
{
	struct et t;

	et_open(&t, "emu:");
	et_bringup(&t);
	cr_assert_eq(emu_pages_request(t.emu, 3), -EAGAIN, "no EQ listens for page requests yet");
	et_close(&t);
}

Test(emu_pages, teardown_reclaims_every_page_and_counters_balance)
{
	struct et t;
	struct emu_counters c;
	struct shim_dma extra;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, et_give_fresh(&t, &extra, 7), 0, 0);
	et_teardown(&t);
	emu_counters(t.emu, &c);
	cr_assert_eq(c.pages_held, 0);
	cr_assert_eq(c.pages_given, (uint64_t)EMU_CAPS_SEED_BOOT_PAGES + EMU_CAPS_SEED_INIT_PAGES + 7);
	cr_assert_eq(c.pages_taken, c.pages_given);
	et_close(&t);
}

Test(emu_pages, uri_pages_asks_on_its_own_then_offers_half_back)
{
	struct et t;
	struct et_eq eq;
	struct shim_dma extra;
	const uint8_t *e;
	int32_t n;

	et_open(&t, "emu:pages=8");
	et_bringup(&t);
	et_expect(&t, et_create_eq(&t, &eq, et_alloc_uar(&t), 4, 0, ET_EVBIT(0x0b)), 0, 0);
	e = et_eq_next(&eq);
	cr_assert_not_null(e, "the device asked for pages as soon as an EQ could carry it");
	cr_assert_eq((int32_t)PRM_GET(pages_req_event, PRM_ADDR(eqe, e, event_data), num_pages), 8);
	et_query_pages(&t, 3, &n);
	cr_assert_eq(n, 8);
	et_expect(&t, et_give_fresh(&t, &extra, 8), 0, 0);
	e = et_eq_next(&eq);
	cr_assert_not_null(e, "and offered half back once it had them");
	cr_assert_eq((int32_t)PRM_GET(pages_req_event, PRM_ADDR(eqe, e, event_data), num_pages), -4);
	cr_assert_eq(et_take_pages(&t, 4), 4);
	et_query_pages(&t, 3, &n);
	cr_assert_eq(n, 0);
	et_teardown(&t);
	cr_assert_eq(emu_pages_held(t.emu), 0);
	et_close(&t);
}
