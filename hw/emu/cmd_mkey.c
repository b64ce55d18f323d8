/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Memory keys: CREATE_MKEY (0x200), QUERY_MKEY (0x201), DESTROY_MKEY (0x202), PRM
 * "Memory Key" / mkc, and the translation the data path uses (emu_mkey_translate).
 *
 * Rules, as firmware applies them:
 *  - access mode PA (0), MTT (1) or KLM (2, indirect); qpn must be 0xffffff (an MKey
 *    bound to a QP is a memory window's business, which we do not offer);
 *  - the PD must exist, and the MKey holds it: DEALLOC_PD is refused while it lives;
 *  - remote write or atomic without local write is refused (IBTA 10.6.3.1, o10-35);
 *  - MTT: log_page_size >= 12 (Linux __mlx5_log_page_size_to_bitmap: "the device does
 *    not support lower than 4k page size"), one entry per page of
 *    [start_addr & ~(page-1), start_addr + len), each aligned to the page size, and
 *    every byte of the region pinned in the IOMMU.  The part of a first or last page
 *    outside the region need not be pinned: the device never reaches it, and a real
 *    IOMMU does not care either;
 *  - KLM: every entry names a live, usable MKey (variant included) and stays inside
 *    it; the entries together cover len.  Each listed MKey is held (DESTROY_MKEY on it
 *    fails with bad resource state until the indirect MKey is gone);
 *  - translations_octword_actual_size entries (16 bytes per octword: two MTTs or one
 *    KLM) follow the command, and no more than translations_octword_size;
 *  - len <= 2^log_max_mrw_sz, KLM list <= 2^log_max_klm_list_size (limits, 0x8).
 * A "free" MKey (mkc.free = 1, for UMR) may come without translations; it translates
 * nothing until UMR fills it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/objects.h"

#define EMU_MKEY_QPN_NONE 0xffffffu
#define EMU_MKEY_MIN_LOG_PAGE 12u
#define EMU_MKEY_MAX_DEPTH 4u           /* KLM nesting the translation follows */
#define OCTWORD 16u

static void mkey_dtor(struct emu_dev *d, void *obj)
{
	struct emu_mkey *mk = obj;

	emu_obj_unref_id(d, EMU_OBJ_PD, mk->pdn);
	for (uint32_t i = 0; i < mk->nklm; i++)
		emu_obj_unref_id(d, EMU_OBJ_MKEY, mk->klm[i].mkey >> 8);
	free(mk->mtt);
	free(mk->mtt_flags);
	free(mk->klm);
}

/* Pages of 1 << log_page covering `bytes` (no overflow, even for 2^63-byte pages). */
static uint64_t pages_of(uint64_t bytes, unsigned log_page)
{
	return (bytes >> log_page) + ((bytes & ((1ull << log_page) - 1)) != 0);
}

/* MTT entries of the region: load, check alignment and pinning. */
static int load_mtt(struct emu_dev *d, const uint8_t *list, struct emu_mkey *mk, uint32_t *synd)
{
	uint64_t page = 1ull << mk->log_page;
	uint64_t off0 = mk->start & (page - 1);
	uint64_t total = off0 + mk->len;

	mk->nmtt = mk->len ? (uint32_t)pages_of(total, mk->log_page) : 0;
	if (!mk->nmtt)
		return 0;
	mk->mtt = calloc(mk->nmtt, sizeof(*mk->mtt));
	mk->mtt_flags = calloc(mk->nmtt, 1);
	if (!mk->mtt || !mk->mtt_flags) {
		*synd = PRM_SYND_NO_RESOURCES;
		return PRM_CMD_STAT_NO_RES;
	}
	for (uint32_t i = 0; i < mk->nmtt; i++) {
		const uint8_t *e = list + (size_t)i * PRM_SIZE(mtt);
		uint64_t iova = (PRM_GET(mtt, e, ptag_63_32) << 32) | (PRM_GET(mtt, e, ptag_31_8) << 8);
		uint64_t lo = i == 0 ? off0 : 0;
		uint64_t hi = total - (uint64_t)i * page < page ? total - (uint64_t)i * page : page;

		mk->mtt[i] = iova;
		mk->mtt_flags[i] = (uint8_t)(PRM_GET(mtt, e, rd_en) | (PRM_GET(mtt, e, wr_en) << 1));
		if (iova & (page - 1)) {
			emu_drverr(d, "CREATE_MKEY: MTT entry %u (IOVA 0x%llx) not aligned to the %llu-byte page", i,
				   (unsigned long long)iova, (unsigned long long)page);
			*synd = PRM_SYND_MTT_NOT_ALIGNED;
			return PRM_CMD_STAT_BAD_PARAM;
		}
		if (!emu_iova_mapped(d, iova + lo, hi - lo)) {
			emu_drverr(d, "CREATE_MKEY: MTT entry %u: IOVA 0x%llx..0x%llx not pinned", i,
				   (unsigned long long)(iova + lo), (unsigned long long)(iova + hi - 1));
			*synd = PRM_SYND_MTT_NOT_PINNED;
			return PRM_CMD_STAT_BAD_PARAM;
		}
	}
	return 0;
}

/* KLM entries: each names a live MKey and stays inside it; together they cover len. */
static int load_klm(struct emu_dev *d, const uint8_t *list, uint32_t n, struct emu_mkey *mk, uint32_t *synd)
{
	uint64_t covered = 0;

	mk->klm = calloc(n ? n : 1, sizeof(*mk->klm));
	if (!mk->klm) {
		*synd = PRM_SYND_NO_RESOURCES;
		return PRM_CMD_STAT_NO_RES;
	}
	uint32_t used = 0;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = list + (size_t)i * PRM_SIZE(klm);
		struct emu_klm k = { (uint32_t)PRM_GET(klm, e, byte_count), (uint32_t)PRM_GET(klm, e, mkey),
				     PRM_GET(klm, e, address) };
		/* an all-zero entry pads the list to a multiple of 4 (see create_mkey) */
		if (!k.byte_count && !k.mkey && !k.addr)
			continue;
		struct emu_mkey *t = emu_obj_get(d, EMU_OBJ_MKEY, k.mkey >> 8);

		if (!t || t->variant != (k.mkey & 0xff) || t->free) {
			*synd = PRM_SYND_BAD_MKEY;
			return PRM_CMD_STAT_BAD_RES;
		}
		if (!t->length64 && (k.addr < t->start || k.addr - t->start > t->len ||
				     k.byte_count > t->len - (k.addr - t->start))) {
			*synd = PRM_SYND_KLM_OUT_OF_RANGE;
			return PRM_CMD_STAT_BAD_PARAM;
		}
		mk->klm[used++] = k;
		covered += k.byte_count;
	}
	mk->nklm = used;
	if (covered < mk->len) {
		mk->nklm = 0;
		*synd = PRM_SYND_MTT_OUT_OF_RANGE;
		return PRM_CMD_STAT_BAD_PARAM;
	}
	return 0;
}

static int create_mkey(struct emu_dev *d, struct emu_cmd *c)
{
	const uint8_t *mkc = PRM_ADDR(create_mkey_in, c->in, memory_key_mkey_entry);
	const uint8_t *g = emu_gen_caps(d);
	size_t list_off = PRM_OFF(create_mkey_in, klm_pas_mtt) / 8;
	uint64_t actual = PRM_GET(create_mkey_in, c->in, translations_octword_actual_size);
	struct emu_mkey tmp = { 0 }, *mk;
	uint32_t synd = 0, index;
	int st;

	if (PRM_GET(create_mkey_in, c->in, uid))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_UID);
	/* user memory objects (umem) belong to DEVX contexts, which we do not offer */
	if (PRM_GET(create_mkey_in, c->in, mkey_umem_valid))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_RESERVED_NOT_ZERO);
	/* pg_access: each MTT entry's rd_en/wr_en gate the access to its page (mlx5_ifc.h
	 * mtt; rdma-core's mlx5_vfio reg_mr sets it with both enables on every entry, found
	 * in the VM, tools/vm).  Only MTT entries carry the bits. */
	tmp.pg_access = PRM_GET(create_mkey_in, c->in, pg_access) != 0;
	tmp.mode = (uint8_t)((PRM_GET(mkc, mkc, access_mode_4_2) << 2) | PRM_GET(mkc, mkc, access_mode_1_0));
	if (tmp.mode != EMU_MKEY_PA && tmp.mode != EMU_MKEY_MTT && tmp.mode != EMU_MKEY_KLM)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_ACCESS_MODE);
	if (tmp.pg_access && tmp.mode != EMU_MKEY_MTT)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_ACCESS_MODE);
	tmp.qpn = (uint32_t)PRM_GET(mkc, mkc, qpn);
	if (tmp.qpn != EMU_MKEY_QPN_NONE)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_MKEY_QPN);
	tmp.pdn = (uint32_t)PRM_GET(mkc, mkc, pd);
	if (!emu_obj_get(d, EMU_OBJ_PD, tmp.pdn))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_PD);
	tmp.free = PRM_GET(mkc, mkc, free);
	tmp.umr_en = PRM_GET(mkc, mkc, umr_en);
	tmp.en_rinval = PRM_GET(mkc, mkc, en_rinval);
	tmp.fastreg = tmp.free && tmp.umr_en;
	tmp.lr = PRM_GET(mkc, mkc, lr);
	tmp.lw = PRM_GET(mkc, mkc, lw);
	tmp.rr = PRM_GET(mkc, mkc, rr);
	tmp.rw = PRM_GET(mkc, mkc, rw);
	tmp.a = PRM_GET(mkc, mkc, a);
	if ((tmp.rw || tmp.a) && !tmp.lw)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_ACCESS_NOT_ALLOWED);
	if (tmp.a && g && !PRM_GET(cmd_hca_cap, g, atomic))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_ACCESS_NOT_ALLOWED);
	tmp.variant = (uint8_t)PRM_GET(mkc, mkc, mkey_7_0);
	tmp.length64 = PRM_GET(mkc, mkc, length64);
	tmp.start = PRM_GET(mkc, mkc, start_addr);
	tmp.len = PRM_GET(mkc, mkc, len);
	tmp.log_page = (uint8_t)PRM_GET(mkc, mkc, log_page_size);
	tmp.octwords = (uint32_t)PRM_GET(mkc, mkc, translations_octword_size);

	if (tmp.length64) {
		/* the whole address space: only an untranslated (PA) MKey can cover it */
		if (tmp.mode != EMU_MKEY_PA)
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MTT_OUT_OF_RANGE);
		tmp.len = 0;
	} else {
		unsigned log_mrw = g ? (unsigned)PRM_GET(cmd_hca_cap, g, log_max_mrw_sz) : 64;

		if (tmp.start + tmp.len < tmp.start)
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MTT_OUT_OF_RANGE);
		if (log_mrw < 64 && tmp.len > (1ull << log_mrw))
			return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_SIZE_TOO_LARGE);
	}
	if (actual > tmp.octwords)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MTT_OUT_OF_RANGE);
	if (actual > (c->inlen - list_off) / OCTWORD)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_INP_LEN, PRM_SYND_INPUT_TOO_SHORT);

	if (tmp.mode == EMU_MKEY_MTT) {
		if (tmp.log_page < EMU_MKEY_MIN_LOG_PAGE)
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PAGE_SIZE);
		if (!tmp.free) {
			uint64_t page = 1ull << tmp.log_page;
			uint64_t npages = tmp.len ? pages_of((tmp.start & (page - 1)) + tmp.len, tmp.log_page) : 0;

			/* two 8-byte MTT entries per octword */
			if (npages > actual * 2)
				return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MTT_OUT_OF_RANGE);
			st = load_mtt(d, c->in + list_off, &tmp, &synd);
			if (st)
				goto fail;
		}
	} else if (tmp.mode == EMU_MKEY_KLM) {
		unsigned log_klm = g ? (unsigned)PRM_GET(cmd_hca_cap, g, log_max_klm_list_size) : 16;

		if (tmp.octwords > (1ull << log_klm))
			return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_LIMIT_EXCEEDED);
		/* The KLM list comes in groups of 4 entries (64 bytes), padded with zero
		 * entries: DPDK mlx5_devx_cmd_mkey_create (RTE_ALIGN(klm_num, 4)) and
		 * Linux's UMR (umr.c MLX5_UMR_FLEX_ALIGNMENT) agree on it; the firmware's
		 * own answer to an unpadded list is unverified, this is the strict reading. */
		if (tmp.octwords % 4 || actual % 4)
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_KLM_NOT_PADDED);
		if (!tmp.free) {
			st = load_klm(d, c->in + list_off, (uint32_t)actual, &tmp, &synd);
			if (st)
				goto fail;
		}
	}

	mk = emu_obj_alloc(d, EMU_OBJ_MKEY, sizeof(*mk), mkey_dtor, &index);
	if (!mk) {
		st = PRM_CMD_STAT_LIM_ERR;
		synd = PRM_SYND_LIMIT_EXCEEDED;
		goto fail;
	}
	*mk = tmp;
	mk->index = index;
	emu_obj_ref(emu_obj_get(d, EMU_OBJ_PD, mk->pdn));
	for (uint32_t i = 0; i < mk->nklm; i++)
		emu_obj_ref(emu_obj_get(d, EMU_OBJ_MKEY, mk->klm[i].mkey >> 8));
	PRM_SET(create_mkey_out, c->out, mkey_index, index);
	return 0;
fail:
	free(tmp.mtt);
	free(tmp.mtt_flags);
	free(tmp.klm);
	return emu_cmd_fail(c, st, synd);
}

EMU_CMD_DESTROY_HANDLER(mkey, mkey_index, EMU_OBJ_MKEY, PRM_SYND_BAD_MKEY)

static void put_mtt(uint8_t *e, uint64_t iova, uint8_t flags)
{
	PRM_SET(mtt, e, ptag_63_32, iova >> 32);
	PRM_SET(mtt, e, ptag_31_8, (iova & 0xffffffffu) >> 8);
	PRM_SET(mtt, e, rd_en, flags & 1);
	PRM_SET(mtt, e, wr_en, (flags >> 1) & 1);
}

static void put_klm(uint8_t *e, const struct emu_klm *k)
{
	PRM_SET(klm, e, byte_count, k->byte_count);
	PRM_SET(klm, e, mkey, k->mkey);
	PRM_SET(klm, e, address, k->addr);
}

EMU_CMD_QUERY_HANDLER(mkey, mkey_index, EMU_OBJ_MKEY, PRM_SYND_BAD_MKEY)

static int answer_mkey(struct emu_dev *d, struct emu_cmd *c, const struct emu_mkey *mk)
{
	uint8_t *mkc = PRM_ADDR(query_mkey_out, c->out, memory_key_mkey_entry);
	uint8_t *t01 = PRM_ADDR(query_mkey_out, c->out, bsf0_klm0_pas_mtt0_1);
	uint8_t *t23 = PRM_ADDR(query_mkey_out, c->out, bsf1_klm1_pas_mtt2_3);

	(void)d;
	PRM_SET(mkc, mkc, free, mk->free);
	PRM_SET(mkc, mkc, access_mode_4_2, mk->mode >> 2);
	PRM_SET(mkc, mkc, access_mode_1_0, mk->mode & 3);
	PRM_SET(mkc, mkc, umr_en, mk->umr_en);
	PRM_SET(mkc, mkc, en_rinval, mk->en_rinval);
	PRM_SET(mkc, mkc, a, mk->a);
	PRM_SET(mkc, mkc, rw, mk->rw);
	PRM_SET(mkc, mkc, rr, mk->rr);
	PRM_SET(mkc, mkc, lw, mk->lw);
	PRM_SET(mkc, mkc, lr, mk->lr);
	PRM_SET(mkc, mkc, qpn, mk->qpn);
	PRM_SET(mkc, mkc, mkey_7_0, mk->variant);
	PRM_SET(mkc, mkc, length64, mk->length64);
	PRM_SET(mkc, mkc, pd, mk->pdn);
	PRM_SET(mkc, mkc, start_addr, mk->start);
	PRM_SET(mkc, mkc, len, mk->len);
	PRM_SET(mkc, mkc, translations_octword_size, mk->octwords);
	PRM_SET(mkc, mkc, log_page_size, mk->log_page);
	/* the first translation entries, as the query output carries them */
	for (uint32_t i = 0; i < mk->nmtt && i < 4; i++)
		put_mtt((i < 2 ? t01 : t23) + (i % 2) * PRM_SIZE(mtt), mk->mtt[i], mk->mtt_flags[i]);
	for (uint32_t i = 0; i < mk->nklm && i < 2; i++)
		put_klm(i ? t23 : t01, &mk->klm[i]);
	return 0;
}

/* ---- translation for the data path ---- */

static int add_seg(struct emu_iova_seg *segs, unsigned max, unsigned *n, uint64_t iova, uint64_t len)
{
	if (*n && segs[*n - 1].iova + segs[*n - 1].len == iova) {
		segs[*n - 1].len += len;
		return 0;
	}
	if (*n >= max)
		return -E2BIG;
	segs[*n] = (struct emu_iova_seg){ iova, len };
	(*n)++;
	return 0;
}

static int translate(struct emu_dev *d, const struct emu_mkey *mk, uint64_t va, uint64_t len, unsigned access,
		     struct emu_iova_seg *segs, unsigned max, unsigned *n, unsigned depth)
{
	if (mk->free)
		return -ENOENT;
	if (!mk->length64 && (va < mk->start || va - mk->start > mk->len || len > mk->len - (va - mk->start)))
		return -ERANGE;
	if (!len)
		return 0;
	switch (mk->mode) {
	case EMU_MKEY_PA:
		return add_seg(segs, max, n, va, len);
	case EMU_MKEY_MTT: {
		uint64_t page = 1ull << mk->log_page;

		while (len) {
			uint64_t idx = (va >> mk->log_page) - (mk->start >> mk->log_page);
			uint64_t in = va & (page - 1);
			uint64_t chunk = page - in < len ? page - in : len;
			int rc;

			if (idx >= mk->nmtt)
				return -ERANGE;
			/* pg_access: reads need the page's rd_en (bit 0), writes and atomics
			 * its wr_en (bit 1) */
			if (mk->pg_access &&
			    (((access & (EMU_MKEY_ACC_LR | EMU_MKEY_ACC_RR)) && !(mk->mtt_flags[idx] & 1)) ||
			     ((access & (EMU_MKEY_ACC_LW | EMU_MKEY_ACC_RW | EMU_MKEY_ACC_ATOMIC)) &&
			      !(mk->mtt_flags[idx] & 2))))
				return -EACCES;
			rc = add_seg(segs, max, n, mk->mtt[idx] + in, chunk);
			if (rc)
				return rc;
			va += chunk;
			len -= chunk;
		}
		return 0;
	}
	case EMU_MKEY_KLM: {
		uint64_t pos = va - mk->start;

		if (depth >= EMU_MKEY_MAX_DEPTH)
			return -ERANGE;
		for (uint32_t i = 0; i < mk->nklm && len; i++) {
			const struct emu_klm *k = &mk->klm[i];
			const struct emu_mkey *t;
			uint64_t chunk;
			int rc;

			if (pos >= k->byte_count) {
				pos -= k->byte_count;
				continue;
			}
			chunk = k->byte_count - pos < len ? k->byte_count - pos : len;
			t = emu_obj_get(d, EMU_OBJ_MKEY, k->mkey >> 8);
			if (!t || t->variant != (k->mkey & 0xff))
				return -ENOENT;
			rc = translate(d, t, k->addr + pos, chunk, access, segs, max, n, depth + 1);
			if (rc)
				return rc;
			pos = 0;
			len -= chunk;
		}
		return len ? -ERANGE : 0;
	}
	default:
		return -ENOENT;
	}
}

int emu_mkey_translate(struct emu_dev *d, uint32_t key, uint32_t pdn, unsigned access, uint64_t va,
		       uint64_t len, struct emu_iova_seg *segs, unsigned max_segs)
{
	const struct emu_mkey *mk = emu_obj_get(d, EMU_OBJ_MKEY, key >> 8);
	unsigned n = 0;
	int rc;

	if (!mk || mk->variant != (key & 0xff) || mk->free)
		return -ENOENT;
	if (pdn != 0xffffffffu && mk->pdn != pdn)
		return -EACCES;
	if (((access & EMU_MKEY_ACC_LR) && !mk->lr) || ((access & EMU_MKEY_ACC_LW) && !mk->lw) ||
	    ((access & EMU_MKEY_ACC_RR) && !mk->rr) || ((access & EMU_MKEY_ACC_RW) && !mk->rw) ||
	    ((access & EMU_MKEY_ACC_ATOMIC) && !mk->a))
		return -EACCES;
	rc = translate(d, mk, va, len, access, segs, max_segs, &n, 0);
	return rc ? rc : (int)n;
}

/* UMR, as far as this device models it: the access rights and the PD of an MKey
 * created with umr_en, changed in place so that its key stays (Linux mlx5_ib
 * umr.c mlx5r_umr_rereg_pd_access does this for ibv_rereg_mr).  The same rules as
 * CREATE_MKEY: remote write or atomic needs local write, atomic needs the capability,
 * the PD must exist (the MKey's reference moves to it).  Translation changes are not
 * modelled: a mask naming anything else is refused. */
int emu_mkey_umr(struct emu_dev *d, uint32_t key, uint64_t mask, const uint8_t *mkc)
{
	const uint64_t known = EMU_UMR_MASK_PD | EMU_UMR_MASK_LR | EMU_UMR_MASK_LW | EMU_UMR_MASK_RR |
			       EMU_UMR_MASK_RW | EMU_UMR_MASK_A;
	struct emu_mkey *mk = emu_obj_get(d, EMU_OBJ_MKEY, key >> 8);
	const uint8_t *g = emu_gen_caps(d);
	struct emu_mkey n;

	if (mask & ~known) {
		emu_drverr(d, "UMR on MKey 0x%x: mkey_mask 0x%llx names fields this device does not model", key,
			   (unsigned long long)mask);
		return -EINVAL;
	}
	if (!mk || mk->variant != (key & 0xff) || !mk->umr_en || mk->mode == EMU_MKEY_KLM)
		return -ENOENT;
	n = *mk;
	if (mask & EMU_UMR_MASK_LR)
		n.lr = PRM_GET(mkc, mkc, lr);
	if (mask & EMU_UMR_MASK_LW)
		n.lw = PRM_GET(mkc, mkc, lw);
	if (mask & EMU_UMR_MASK_RR)
		n.rr = PRM_GET(mkc, mkc, rr);
	if (mask & EMU_UMR_MASK_RW)
		n.rw = PRM_GET(mkc, mkc, rw);
	if (mask & EMU_UMR_MASK_A)
		n.a = PRM_GET(mkc, mkc, a);
	if (mask & EMU_UMR_MASK_PD)
		n.pdn = (uint32_t)PRM_GET(mkc, mkc, pd);
	if (((n.rw || n.a) && !n.lw) || (n.a && g && !PRM_GET(cmd_hca_cap, g, atomic)))
		return -EACCES;
	if (n.pdn != mk->pdn) {
		void *pd = emu_obj_get(d, EMU_OBJ_PD, n.pdn);

		if (!pd)
			return -EACCES;
		emu_obj_ref(pd);
		emu_obj_unref_id(d, EMU_OBJ_PD, mk->pdn);
	}
	mk->lr = n.lr;
	mk->lw = n.lw;
	mk->rr = n.rr;
	mk->rw = n.rw;
	mk->a = n.a;
	mk->pdn = n.pdn;
	return 0;
}

static const struct emu_cmd_desc cmds[] = {
	EMU_CMDS_OBJ(MKEY, mkey),
};

const struct emu_cmd_area emu_area_mkey = { .name = "mkey", .cmds = cmds, .ncmds = EMU_NCMDS(cmds) };

/* IBTA vol. 1, 10.6 (memory regions and windows): a remote invalidation names a memory window or a region
 * registered by a fast-register work request, never one registered by the verbs call
 * (rxe: rxe_invalidate_mr refuses a plain MR, invalidate_rkey).  The device decides it
 * from the MKey context: mkc.en_rinval (PRM "MKey Context"; Linux mlx5_ib sets it only
 * for type-2 memory windows, drivers/infiniband/hw/mlx5/mr.c mlx5_ib_alloc_mw), or an
 * MKey created free and UMR-enabled for fast registration (mr.c mlx5_set_umr_free_mkey,
 * which the kernel's NVMe and iSER initiators invalidate remotely).  A plain region --
 * created in use, umr_en or not -- stays. */
bool emu_mkey_remote_inval_ok(const struct emu_mkey *mk)
{
	return mk->en_rinval || mk->fastreg;
}
