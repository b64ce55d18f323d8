/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The emulated device's memory keys through the real command engine: CREATE_MKEY,
 * QUERY_MKEY, DESTROY_MKEY over memory pinned through the shim (offset and scattered
 * IOVAs), MTT and KLM (indirect) translation, and every rule of cmd_mkey.c. */
#include "hw/emu/objects.h"
#include "tests/emu/emu_obj_test.h"

enum { MODE_PA = 0, MODE_MTT = 1, MODE_KLM = 2 };

/* Application memory pinned through the shim: len bytes at `off` into a page. */
struct omr {
	uint8_t *mem;
	uint8_t *va;
	size_t len;
	struct shim_pin pin;
};

static void pin(struct ot *o, struct omr *m, size_t len, size_t off)
{
	m->mem = aligned_alloc(o->page, (len + off + o->page - 1) / o->page * o->page + o->page);
	cr_assert_not_null(m->mem);
	m->va = m->mem + off;
	m->len = len;
	cr_assert_eq(shim_dma_pin(o->t.dev, m->va, len, &m->pin), 0);
}

/* IOVA of VA v (inside the region, or within its first page before it). */
static uint64_t iova_of(const struct omr *m, uint64_t v)
{
	uint64_t sva = (uint64_t)(uintptr_t)m->va;

	for (uint32_t k = 0; k < m->pin.nseg; k++) {
		if (v < sva + m->pin.seg[k].len || k + 1 == m->pin.nseg)
			return m->pin.seg[k].iova + (v - sva);
		sva += m->pin.seg[k].len;
	}
	return 0;
}

static size_t npages(const struct omr *m, unsigned log_page)
{
	uint64_t page = 1ull << log_page, va = (uint64_t)(uintptr_t)m->va;

	return (size_t)((((va + m->len + page - 1) & ~(page - 1)) - (va & ~(page - 1))) >> log_page);
}

/* CREATE_MKEY (MTT) over the region with host-page entries, local read/write and
 * remote read/write. */
static uint8_t *mtt_in(struct ot *o, const struct omr *m, size_t *inlen)
{
	unsigned lp = o->page == 16384 ? 14 : 12;
	uint64_t page = 1ull << lp, va = (uint64_t)(uintptr_t)m->va, base = va & ~(page - 1);
	size_t n = npages(m, lp), octo = (n + 1) / 2;

	*inlen = PRM_SIZE(create_mkey_in) + octo * 16;
	uint8_t *in = calloc(1, *inlen);
	PRM_SET(create_mkey_in, in, opcode, PRM_CMD_OP_CREATE_MKEY);
	uint8_t *mkc = PRM_ADDR(create_mkey_in, in, memory_key_mkey_entry);
	PRM_SET(mkc, mkc, access_mode_1_0, MODE_MTT);
	PRM_SET(mkc, mkc, lr, 1);
	PRM_SET(mkc, mkc, lw, 1);
	PRM_SET(mkc, mkc, rr, 1);
	PRM_SET(mkc, mkc, rw, 1);
	PRM_SET(mkc, mkc, qpn, 0xffffff);
	PRM_SET(mkc, mkc, mkey_7_0, 0x5a);
	PRM_SET(mkc, mkc, pd, o->pd);
	PRM_SET(mkc, mkc, start_addr, va);
	PRM_SET(mkc, mkc, len, m->len);
	PRM_SET(mkc, mkc, log_page_size, lp);
	PRM_SET(mkc, mkc, translations_octword_size, octo);
	PRM_SET(create_mkey_in, in, translations_octword_actual_size, octo);
	for (size_t i = 0; i < n; i++) {
		uint8_t *e = PRM_ADDR(create_mkey_in, in, klm_pas_mtt) + i * PRM_SIZE(mtt);
		uint64_t iova = iova_of(m, base + i * page);

		PRM_SET(mtt, e, ptag_63_32, iova >> 32);
		PRM_SET(mtt, e, ptag_31_8, (iova & 0xffffffffu) >> 8);
		PRM_SET(mtt, e, rd_en, 1);
		PRM_SET(mtt, e, wr_en, 1);
	}
	return in;
}

static uint8_t *mkc_of(uint8_t *in)
{
	return PRM_ADDR(create_mkey_in, in, memory_key_mkey_entry);
}

static uint8_t *mtt_entry(uint8_t *in, size_t i)
{
	return PRM_ADDR(create_mkey_in, in, klm_pas_mtt) + i * PRM_SIZE(mtt);
}

/* inlen by pointer: the builder that sets it is evaluated in the same call */
static int create(struct ot *o, uint8_t *in, const size_t *inlen)
{
	int st = et_exec(&o->t, in, *inlen, PRM_SIZE(create_mkey_out));
	free(in);
	return st;
}

static uint32_t mkey_mtt(struct ot *o, const struct omr *m)
{
	size_t inlen;

	et_expect(&o->t, create(o, mtt_in(o, m, &inlen), &inlen), 0, 0);
	return (uint32_t)PRM_GET(create_mkey_out, o->t.out, mkey_index);
}

/* Translate under the device lock, as a data-plane engine would. */
static int translate(struct ot *o, uint32_t key, unsigned acc, uint64_t va, uint64_t len,
		     struct emu_iova_seg *segs, unsigned max)
{
	pthread_mutex_lock(&o->t.emu->lock);
	int n = emu_mkey_translate(o->t.emu, key, 0xffffffffu, acc, va, len, segs, max);
	pthread_mutex_unlock(&o->t.emu->lock);
	return n;
}

static void close_mr(struct ot *o, struct omr *m)
{
	ot_down(o);
	free(m->mem);
}

static void create_query_translate_destroy(const char *uri, size_t len, size_t off)
{
	struct ot o;
	struct omr m;
	struct emu_iova_seg segs[64];

	ot_up(&o, uri);
	pin(&o, &m, len, off);
	uint32_t idx = mkey_mtt(&o, &m);
	cr_assert_neq(idx, 0, "MKey index 0 would make a null key");
	cr_assert_eq(ot_live(&o, EMU_OBJ_MKEY), 1);

	ET_IN(query_mkey_in);
	PRM_SET(query_mkey_in, in, opcode, PRM_CMD_OP_QUERY_MKEY);
	PRM_SET(query_mkey_in, in, mkey_index, idx);
	et_expect(&o.t, et_exec(&o.t, in, sizeof(in), PRM_SIZE(query_mkey_out)), 0, 0);
	const uint8_t *c = PRM_ADDR(query_mkey_out, o.t.out, memory_key_mkey_entry);
	unsigned lp = o.page == 16384 ? 14 : 12;
	cr_assert_eq(PRM_GET(mkc, c, access_mode_1_0), MODE_MTT);
	cr_assert_eq(PRM_GET(mkc, c, lr), 1);
	cr_assert_eq(PRM_GET(mkc, c, lw), 1);
	cr_assert_eq(PRM_GET(mkc, c, rr), 1);
	cr_assert_eq(PRM_GET(mkc, c, rw), 1);
	cr_assert_eq(PRM_GET(mkc, c, a), 0);
	cr_assert_eq(PRM_GET(mkc, c, qpn), 0xffffff);
	cr_assert_eq(PRM_GET(mkc, c, mkey_7_0), 0x5a);
	cr_assert_eq(PRM_GET(mkc, c, pd), o.pd);
	cr_assert_eq(PRM_GET(mkc, c, start_addr), (uint64_t)(uintptr_t)m.va);
	cr_assert_eq(PRM_GET(mkc, c, len), len);
	cr_assert_eq(PRM_GET(mkc, c, log_page_size), lp);
	cr_assert_eq(PRM_GET(mkc, c, translations_octword_size), (npages(&m, lp) + 1) / 2);
	const uint8_t *e0 = PRM_ADDR(query_mkey_out, o.t.out, bsf0_klm0_pas_mtt0_1);
	uint64_t first = (PRM_GET(mtt, e0, ptag_63_32) << 32) | (PRM_GET(mtt, e0, ptag_31_8) << 8);
	cr_assert_eq(first, iova_of(&m, (uint64_t)(uintptr_t)m.va & ~((1ull << lp) - 1)));

	/* the whole region translates to exactly the pinned segments */
	int n = translate(&o, (idx << 8) | 0x5a, EMU_MKEY_ACC_LW | EMU_MKEY_ACC_RR, (uint64_t)(uintptr_t)m.va, len,
			  segs, 64);
	cr_assert_eq(n, (int)m.pin.nseg, "%d segments, pin has %u", n, m.pin.nseg);
	for (int i = 0; i < n; i++) {
		cr_assert_eq(segs[i].iova, m.pin.seg[i].iova);
		cr_assert_eq(segs[i].len, m.pin.seg[i].len);
	}
	cr_assert_eq(translate(&o, (idx << 8) | 0x5b, EMU_MKEY_ACC_LR, (uint64_t)(uintptr_t)m.va, 1, segs, 64), -ENOENT,
		     "wrong variant");
	cr_assert_eq(translate(&o, (idx << 8) | 0x5a, EMU_MKEY_ACC_ATOMIC, (uint64_t)(uintptr_t)m.va, 8, segs, 64),
		     -EACCES, "no atomic access");
	cr_assert_eq(translate(&o, (idx << 8) | 0x5a, EMU_MKEY_ACC_LR, (uint64_t)(uintptr_t)m.va + len - 1, 2, segs,
			       64),
		     -ERANGE, "past the end");

	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_MKEY, idx), 0, 0);
	cr_assert_eq(ot_live(&o, EMU_OBJ_MKEY), 0);
	close_mr(&o, &m);
}

Test(emu_mkey, mtt_create_query_translate_destroy)
{
	create_query_translate_destroy("emu:", 5 * 4096, 0);
}

Test(emu_mkey, mtt_create_query_translate_destroy_with_scattered_iovas)
{
	create_query_translate_destroy("emu:iova=scatter", 7 * 4096, 0);
}

Test(emu_mkey, unaligned_region_needs_only_its_own_bytes_pinned)
{
	/* first and last pages are partly outside the region: not pinned there */
	create_query_translate_destroy("emu:iova=scatter", 3 * 4096 + 100, 1000);
}

Test(emu_mkey, mtt_create_query_translate_destroy_with_16k_host_pages)
{
	create_query_translate_destroy("emu:page=16k,iova=scatter", 3 * 16384 + 10, 40);
}

static void mtt_fails(const char *uri, void (*breakit)(struct ot *, uint8_t *, size_t *), uint8_t status,
		      uint32_t synd)
{
	struct ot o;
	struct omr m;
	size_t inlen;

	ot_up(&o, uri);
	pin(&o, &m, 4 * 4096, 0);
	uint8_t *in = mtt_in(&o, &m, &inlen);
	breakit(&o, in, &inlen);
	et_expect(&o.t, create(&o, in, &inlen), status, synd);
	cr_assert_eq(ot_live(&o, EMU_OBJ_MKEY), 0);
	close_mr(&o, &m);
}

static void unpinned_entry(struct ot *o, uint8_t *in, size_t *inlen)
{
	(void)o;
	(void)inlen;
	PRM_SET(mtt, mtt_entry(in, 2), ptag_63_32, 0x70);
	PRM_SET(mtt, mtt_entry(in, 2), ptag_31_8, 0);
}

static void misaligned_entry(struct ot *o, uint8_t *in, size_t *inlen)
{
	(void)o;
	(void)inlen;
	PRM_SET(mtt, mtt_entry(in, 1), ptag_31_8, PRM_GET(mtt, mtt_entry(in, 1), ptag_31_8) + 1);
}

static void too_few_entries(struct ot *o, uint8_t *in, size_t *inlen)
{
	(void)o;
	/* 4 pages need 2 octwords; say 1 */
	PRM_SET(mkc, mkc_of(in), translations_octword_size, 1);
	PRM_SET(create_mkey_in, in, translations_octword_actual_size, 1);
	*inlen -= 16;
}

static void actual_above_size(struct ot *o, uint8_t *in, size_t *inlen)
{
	(void)o;
	(void)inlen;
	PRM_SET(create_mkey_in, in, translations_octword_actual_size, 3);
}

static void short_input(struct ot *o, uint8_t *in, size_t *inlen)
{
	(void)o;
	(void)in;
	*inlen -= 8;
}

static void no_pd(struct ot *o, uint8_t *in, size_t *inlen)
{
	(void)inlen;
	PRM_SET(mkc, mkc_of(in), pd, o->pd + 77);
}

static void bound_qpn(struct ot *o, uint8_t *in, size_t *inlen)
{
	(void)o;
	(void)inlen;
	PRM_SET(mkc, mkc_of(in), qpn, 0x100);
}

static void ksm_mode(struct ot *o, uint8_t *in, size_t *inlen)
{
	(void)o;
	(void)inlen;
	PRM_SET(mkc, mkc_of(in), access_mode_1_0, 3);
}

static void remote_write_without_local_write(struct ot *o, uint8_t *in, size_t *inlen)
{
	(void)o;
	(void)inlen;
	PRM_SET(mkc, mkc_of(in), lw, 0);
}

static void page_2k(struct ot *o, uint8_t *in, size_t *inlen)
{
	(void)o;
	(void)inlen;
	PRM_SET(mkc, mkc_of(in), log_page_size, 11);
}

static void start_wraps(struct ot *o, uint8_t *in, size_t *inlen)
{
	(void)o;
	(void)inlen;
	PRM_SET(mkc, mkc_of(in), start_addr, ~0ull - 100);
}

Test(emu_mkey, unpinned_mtt_page_is_refused)
{
	mtt_fails("emu:", unpinned_entry, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MTT_NOT_PINNED);
}

Test(emu_mkey, unpinned_mtt_page_is_refused_with_scattered_iovas)
{
	mtt_fails("emu:iova=scatter", unpinned_entry, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MTT_NOT_PINNED);
}

Test(emu_mkey, mtt_entry_not_aligned_to_the_page_size_is_bad_parameter)
{
	mtt_fails("emu:iova=scatter", misaligned_entry, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MTT_NOT_ALIGNED);
}

Test(emu_mkey, fewer_mtt_entries_than_pages_is_out_of_range)
{
	mtt_fails("emu:", too_few_entries, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MTT_OUT_OF_RANGE);
}

Test(emu_mkey, actual_size_above_translation_size_is_out_of_range)
{
	mtt_fails("emu:", actual_above_size, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MTT_OUT_OF_RANGE);
}

Test(emu_mkey, input_shorter_than_its_translations_is_bad_input_length)
{
	mtt_fails("emu:", short_input, PRM_CMD_STAT_BAD_INP_LEN, PRM_SYND_INPUT_TOO_SHORT);
}

Test(emu_mkey, missing_pd_is_bad_resource)
{
	mtt_fails("emu:", no_pd, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_PD);
}

Test(emu_mkey, mkey_bound_to_a_qp_is_bad_parameter)
{
	mtt_fails("emu:", bound_qpn, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_MKEY_QPN);
}

Test(emu_mkey, ksm_access_mode_is_bad_parameter)
{
	mtt_fails("emu:", ksm_mode, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_ACCESS_MODE);
}

Test(emu_mkey, remote_write_without_local_write_is_refused)
{
	mtt_fails("emu:", remote_write_without_local_write, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_ACCESS_NOT_ALLOWED);
}

Test(emu_mkey, page_smaller_than_4k_is_bad_page_size)
{
	mtt_fails("emu:", page_2k, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PAGE_SIZE);
}

Test(emu_mkey, region_wrapping_the_address_space_is_out_of_range)
{
	mtt_fails("emu:", start_wraps, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MTT_OUT_OF_RANGE);
}

Test(emu_mkey, dealloc_of_a_pd_an_mkey_uses_is_bad_resource_state)
{
	struct ot o;
	struct omr m;

	ot_up(&o, "emu:");
	pin(&o, &m, 8192, 0);
	uint32_t idx = mkey_mtt(&o, &m);
	et_expect(&o.t, ot_dealloc_pd(&o, o.pd), PRM_CMD_STAT_BAD_RES_STATE, PRM_SYND_OBJECT_IN_USE);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_MKEY, idx), 0, 0);
	et_expect(&o.t, ot_dealloc_pd(&o, o.pd), 0, 0);
	close_mr(&o, &m);
}

Test(emu_mkey, destroy_of_an_unknown_mkey_is_bad_resource)
{
	struct ot o;

	ot_up(&o, "emu:");
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_MKEY, 0x4444), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_MKEY);
	ot_down(&o);
}

/* ---- KLM (indirect) ---- */

/* An indirect MKey over `n` regions: entry i is bytes[i] of key keys[i] at addr[i]. */
static uint8_t *klm_in(struct ot *o, uint64_t start, uint64_t len, unsigned n, const uint32_t *keys,
		       const uint64_t *addr, const uint32_t *bytes, size_t *inlen)
{
	/* padded with zero entries to a multiple of 4, as DPDK's mlx5_devx_cmd_mkey_create */
	unsigned padded = (n + 3) & ~3u;
	*inlen = PRM_SIZE(create_mkey_in) + padded * PRM_SIZE(klm);
	uint8_t *in = calloc(1, *inlen);
	PRM_SET(create_mkey_in, in, opcode, PRM_CMD_OP_CREATE_MKEY);
	uint8_t *mkc = mkc_of(in);
	PRM_SET(mkc, mkc, access_mode_1_0, MODE_KLM);
	PRM_SET(mkc, mkc, lr, 1);
	PRM_SET(mkc, mkc, lw, 1);
	PRM_SET(mkc, mkc, qpn, 0xffffff);
	PRM_SET(mkc, mkc, mkey_7_0, 0x11);
	PRM_SET(mkc, mkc, pd, o->pd);
	PRM_SET(mkc, mkc, start_addr, start);
	PRM_SET(mkc, mkc, len, len);
	PRM_SET(mkc, mkc, translations_octword_size, padded);
	PRM_SET(create_mkey_in, in, translations_octword_actual_size, padded);
	for (unsigned i = 0; i < n; i++) {
		uint8_t *e = PRM_ADDR(create_mkey_in, in, klm_pas_mtt) + i * PRM_SIZE(klm);
		PRM_SET(klm, e, byte_count, bytes[i]);
		PRM_SET(klm, e, mkey, keys[i]);
		PRM_SET(klm, e, address, addr[i]);
	}
	return in;
}

struct two {
	struct ot o;
	struct omr a, b;
	uint32_t ia, ib;
	uint32_t keys[2];
	uint64_t addr[2];
	uint32_t bytes[2];
};

static void two_regions(struct two *w, const char *uri)
{
	ot_up(&w->o, uri);
	pin(&w->o, &w->a, 3 * 4096, 0);
	pin(&w->o, &w->b, 2 * 4096, 0);
	w->ia = mkey_mtt(&w->o, &w->a);
	w->ib = mkey_mtt(&w->o, &w->b);
	w->keys[0] = (w->ia << 8) | 0x5a;
	w->keys[1] = (w->ib << 8) | 0x5a;
	w->addr[0] = (uint64_t)(uintptr_t)w->a.va;
	w->addr[1] = (uint64_t)(uintptr_t)w->b.va;
	w->bytes[0] = 3 * 4096;
	w->bytes[1] = 2 * 4096;
}

static void two_close(struct two *w)
{
	ot_down(&w->o);
	free(w->a.mem);
	free(w->b.mem);
}

/* The KLM list is padded to a multiple of 4 entries (DPDK mlx5_devx_cmd_mkey_create,
 * Linux umr.c MLX5_UMR_FLEX_ALIGNMENT): two entries, unpadded, are refused. */
Test(emu_mkey, klm_list_not_padded_to_four_entries_is_bad_parameter)
{
	struct two w;
	size_t inlen;

	two_regions(&w, "emu:");
	uint8_t *in = klm_in(&w.o, 0x100000000ull, 5 * 4096, 2, w.keys, w.addr, w.bytes, &inlen);
	PRM_SET(mkc, mkc_of(in), translations_octword_size, 2);
	PRM_SET(create_mkey_in, in, translations_octword_actual_size, 2);
	inlen = PRM_SIZE(create_mkey_in) + 2 * PRM_SIZE(klm);
	et_expect(&w.o.t, create(&w.o, in, &inlen), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_KLM_NOT_PADDED);
	cr_assert_eq(ot_live(&w.o, EMU_OBJ_MKEY), 2);
	two_close(&w);
}

Test(emu_mkey, klm_over_two_mkeys_translates_across_them_and_holds_them)
{
	struct two w;
	struct emu_iova_seg segs[8];
	size_t inlen;

	two_regions(&w, "emu:iova=scatter");
	uint64_t start = 0x100000000ull;
	et_expect(&w.o.t, create(&w.o, klm_in(&w.o, start, 5 * 4096, 2, w.keys, w.addr, w.bytes, &inlen), &inlen), 0,
		  0);
	uint32_t top = (uint32_t)PRM_GET(create_mkey_out, w.o.t.out, mkey_index);
	cr_assert_eq(ot_live(&w.o, EMU_OBJ_MKEY), 3);

	/* 16 bytes straddling the two regions: the end of a, then the start of b */
	int n = translate(&w.o, (top << 8) | 0x11, EMU_MKEY_ACC_LR, start + 3 * 4096 - 8, 16, segs, 8);
	cr_assert_eq(n, 2);
	cr_assert_eq(segs[0].iova, iova_of(&w.a, (uint64_t)(uintptr_t)w.a.va + 3 * 4096 - 8));
	cr_assert_eq(segs[0].len, 8);
	cr_assert_eq(segs[1].iova, w.b.pin.seg[0].iova);
	cr_assert_eq(segs[1].len, 8);

	ET_IN(query_mkey_in);
	PRM_SET(query_mkey_in, in, opcode, PRM_CMD_OP_QUERY_MKEY);
	PRM_SET(query_mkey_in, in, mkey_index, top);
	et_expect(&w.o.t, et_exec(&w.o.t, in, sizeof(in), PRM_SIZE(query_mkey_out)), 0, 0);
	cr_assert_eq(PRM_GET(mkc, PRM_ADDR(query_mkey_out, w.o.t.out, memory_key_mkey_entry), access_mode_1_0),
		     MODE_KLM);
	const uint8_t *k0 = PRM_ADDR(query_mkey_out, w.o.t.out, bsf0_klm0_pas_mtt0_1);
	cr_assert_eq(PRM_GET(klm, k0, mkey), w.keys[0]);
	cr_assert_eq(PRM_GET(klm, k0, byte_count), 3 * 4096);

	et_expect(&w.o.t, ot_destroy(&w.o, PRM_CMD_OP_DESTROY_MKEY, w.ib), PRM_CMD_STAT_BAD_RES_STATE,
		  PRM_SYND_OBJECT_IN_USE);
	et_expect(&w.o.t, ot_destroy(&w.o, PRM_CMD_OP_DESTROY_MKEY, top), 0, 0);
	et_expect(&w.o.t, ot_destroy(&w.o, PRM_CMD_OP_DESTROY_MKEY, w.ib), 0, 0);
	et_expect(&w.o.t, ot_destroy(&w.o, PRM_CMD_OP_DESTROY_MKEY, w.ia), 0, 0);
	cr_assert_eq(ot_live(&w.o, EMU_OBJ_MKEY), 0);
	two_close(&w);
}

Test(emu_mkey, teardown_frees_a_klm_and_the_mkeys_it_holds)
{
	struct two w;
	size_t inlen;

	two_regions(&w, "emu:");
	et_expect(&w.o.t, create(&w.o, klm_in(&w.o, 0x10000, 5 * 4096, 2, w.keys, w.addr, w.bytes, &inlen), &inlen), 0,
		  0);
	cr_assert_eq(ot_live(&w.o, EMU_OBJ_MKEY), 3);
	two_close(&w); /* every type back to zero, no use after free under ASan */
}

Test(emu_mkey, klm_naming_an_unknown_mkey_is_bad_resource)
{
	struct two w;
	size_t inlen;

	two_regions(&w, "emu:");
	w.keys[1] = (0x777u << 8) | 0x5a;
	et_expect(&w.o.t, create(&w.o, klm_in(&w.o, 0, 5 * 4096, 2, w.keys, w.addr, w.bytes, &inlen), &inlen),
		  PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_MKEY);
	two_close(&w);
}

Test(emu_mkey, klm_naming_a_stale_variant_is_bad_resource)
{
	struct two w;
	size_t inlen;

	two_regions(&w, "emu:");
	w.keys[0] ^= 1;
	et_expect(&w.o.t, create(&w.o, klm_in(&w.o, 0, 5 * 4096, 2, w.keys, w.addr, w.bytes, &inlen), &inlen),
		  PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_MKEY);
	two_close(&w);
}

Test(emu_mkey, klm_entry_past_its_mkey_is_out_of_range)
{
	struct two w;
	size_t inlen;

	two_regions(&w, "emu:");
	w.bytes[1] = 2 * 4096 + 1;
	et_expect(&w.o.t, create(&w.o, klm_in(&w.o, 0, 5 * 4096, 2, w.keys, w.addr, w.bytes, &inlen), &inlen),
		  PRM_CMD_STAT_BAD_PARAM, PRM_SYND_KLM_OUT_OF_RANGE);
	two_close(&w);
}

Test(emu_mkey, klm_entries_shorter_than_the_length_is_out_of_range)
{
	struct two w;
	size_t inlen;

	two_regions(&w, "emu:");
	et_expect(&w.o.t, create(&w.o, klm_in(&w.o, 0, 6 * 4096, 2, w.keys, w.addr, w.bytes, &inlen), &inlen),
		  PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MTT_OUT_OF_RANGE);
	two_close(&w);
}

/* ---- other modes ---- */

Test(emu_mkey, free_mkey_for_umr_needs_no_translations_and_translates_nothing)
{
	struct ot o;
	struct emu_iova_seg segs[2];

	ot_up(&o, "emu:");
	uint8_t in[PRM_SIZE(create_mkey_in)] = { 0 };
	PRM_SET(create_mkey_in, in, opcode, PRM_CMD_OP_CREATE_MKEY);
	uint8_t *mkc = mkc_of(in);
	PRM_SET(mkc, mkc, free, 1);
	PRM_SET(mkc, mkc, umr_en, 1);
	PRM_SET(mkc, mkc, access_mode_1_0, MODE_MTT);
	PRM_SET(mkc, mkc, lr, 1);
	PRM_SET(mkc, mkc, qpn, 0xffffff);
	PRM_SET(mkc, mkc, pd, o.pd);
	PRM_SET(mkc, mkc, log_page_size, 12);
	PRM_SET(mkc, mkc, translations_octword_size, 64);
	et_expect(&o.t, et_exec(&o.t, in, sizeof(in), PRM_SIZE(create_mkey_out)), 0, 0);
	uint32_t idx = (uint32_t)PRM_GET(create_mkey_out, o.t.out, mkey_index);
	cr_assert_eq(translate(&o, idx << 8, EMU_MKEY_ACC_LR, 0, 1, segs, 2), -ENOENT);
	ot_down(&o);
}

Test(emu_mkey, pa_mkey_of_the_whole_space_translates_to_the_same_address)
{
	struct ot o;
	struct emu_iova_seg segs[2];

	ot_up(&o, "emu:");
	uint8_t in[PRM_SIZE(create_mkey_in)] = { 0 };
	PRM_SET(create_mkey_in, in, opcode, PRM_CMD_OP_CREATE_MKEY);
	uint8_t *mkc = mkc_of(in);
	PRM_SET(mkc, mkc, access_mode_1_0, MODE_PA);
	PRM_SET(mkc, mkc, lr, 1);
	PRM_SET(mkc, mkc, lw, 1);
	PRM_SET(mkc, mkc, length64, 1);
	PRM_SET(mkc, mkc, qpn, 0xffffff);
	PRM_SET(mkc, mkc, pd, o.pd);
	et_expect(&o.t, et_exec(&o.t, in, sizeof(in), PRM_SIZE(create_mkey_out)), 0, 0);
	uint32_t idx = (uint32_t)PRM_GET(create_mkey_out, o.t.out, mkey_index);
	cr_assert_eq(translate(&o, idx << 8, EMU_MKEY_ACC_LW, 0x123456789ull, 64, segs, 2), 1);
	cr_assert_eq(segs[0].iova, 0x123456789ull);
	ot_down(&o);
}

Test(emu_mkey, mkeys_balance_to_zero_after_destroy)
{
	struct ot o;
	struct omr m;
	uint32_t idx[4];
	struct emu_counters c0, c1;

	ot_up(&o, "emu:iova=scatter");
	pin(&o, &m, 6 * 4096, 0);
	emu_counters(o.t.emu, &c0);
	for (int i = 0; i < 4; i++)
		idx[i] = mkey_mtt(&o, &m);
	cr_assert_eq(ot_live(&o, EMU_OBJ_MKEY), 4);
	for (int i = 0; i < 4; i++)
		et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_MKEY, idx[i]), 0, 0);
	emu_counters(o.t.emu, &c1);
	cr_assert_eq(c1.objects_live[EMU_OBJ_MKEY], 0);
	cr_assert_eq(c1.objects_created[EMU_OBJ_MKEY] - c0.objects_created[EMU_OBJ_MKEY], 4);
	close_mr(&o, &m);
}

/* pg_access (rdma-core's mlx5_vfio sets it on every MKey, found in the VM, tools/vm):
 * each MTT entry's rd_en/wr_en gate its page; without pg_access they are ignored. */
Test(emu_mkey, pg_access_gates_each_page_by_its_rd_en_and_wr_en)
{
	struct ot o;
	struct omr m;
	struct emu_iova_seg segs[8];
	size_t inlen;
	uint8_t *in;
	uint32_t idx, key;
	uint64_t va;

	ot_up(&o, "emu:");
	pin(&o, &m, o.page, 0);
	va = (uint64_t)(uintptr_t)m.va;
	in = mtt_in(&o, &m, &inlen);
	PRM_SET(create_mkey_in, in, pg_access, 1);
	PRM_SET(mtt, mtt_entry(in, 0), wr_en, 0);   /* read-only page */
	et_expect(&o.t, create(&o, in, &inlen), 0, 0);
	idx = (uint32_t)PRM_GET(create_mkey_out, o.t.out, mkey_index);
	key = idx << 8 | 0x5a;
	cr_assert_eq(translate(&o, key, EMU_MKEY_ACC_RR, va, 64, segs, 8), 1, "rd_en: a read is allowed");
	cr_assert_eq(translate(&o, key, EMU_MKEY_ACC_RW, va, 64, segs, 8), -EACCES, "wr_en clear: no write");
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_MKEY, idx), 0, 0);

	in = mtt_in(&o, &m, &inlen);
	PRM_SET(mtt, mtt_entry(in, 0), wr_en, 0);   /* no pg_access: the bits do not gate */
	et_expect(&o.t, create(&o, in, &inlen), 0, 0);
	idx = (uint32_t)PRM_GET(create_mkey_out, o.t.out, mkey_index);
	cr_assert_eq(translate(&o, idx << 8 | 0x5a, EMU_MKEY_ACC_RW, va, 64, segs, 8), 1);
	et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_MKEY, idx), 0, 0);
	close_mr(&o, &m);
}
