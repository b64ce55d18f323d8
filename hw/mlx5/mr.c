/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Memory registration (PRM CREATE_MKEY 0x200, DESTROY_MKEY 0x202, mkc, mtt, klm).
 *
 * The application's memory is pinned through the shim, which returns IOVA segments (the
 * emulator scatters them host page by host page on request).  A direct MKey translates
 * the region with MTT entries of one page size: the largest power of two at which every
 * segment keeps its offset (IOVA ≡ VA) and every inner segment boundary falls on a page
 * boundary -- the fewer entries, the fewer translation misses on the device.  A region
 * needing more entries than one MKey may carry is split into direct MKeys under one
 * indirect MKey whose KLM entries list them (access mode KLM). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw/mlx5/mx5_objects.h"
#include "hw/platform/random.h"

/* mkc.access_mode_1_0 (PRM "MKey Context": 0 PA, 1 MTT, 2 KLM). */
enum { MX5_MKC_ACCESS_MODE_MTT = 0x1, MX5_MKC_ACCESS_MODE_KLM = 0x2 };
#define MX5_MKEY_MAX_LOG_PAGE 30u      /* 1 GiB pages at most */
/* Largest translation list one CREATE_MKEY carries: the command engine's mailbox
 * limit (1 MiB) less the command itself, 8 bytes per MTT entry. */
#define MX5_MKEY_MAX_MTT ((1u << 20) / 8u - 256u)

void mx5_device_set_mkey_mtt_limit(struct mx5_device *dev, uint64_t entries)
{
	dev->mkey_mtt_limit = entries;
}

static uint64_t mx5_mtt_limit(struct mx5_device *dev)
{
	uint64_t l = MX5_MKEY_MAX_MTT;
	if (dev->mkey_mtt_limit && dev->mkey_mtt_limit < l)
		l = dev->mkey_mtt_limit;
	return l;
}

/* The largest page shift every segment allows (see the file comment). */
static unsigned mx5_best_page_shift(uint64_t va, const struct shim_pin *p)
{
	uint64_t mask = 0, sva = va;
	for (uint32_t k = 0; k < p->nseg; k++) {
		mask |= p->seg[k].iova ^ sva;           /* same offset within a page */
		if (k > 0)
			mask |= p->seg[k].iova;         /* inner boundary: page aligned */
		if (k + 1 < p->nseg)
			mask |= p->seg[k].iova + p->seg[k].len;
		sva += p->seg[k].len;
	}
	unsigned shift = mask ? (unsigned)__builtin_ctzll(mask) : MX5_MKEY_MAX_LOG_PAGE;
	if (shift > MX5_MKEY_MAX_LOG_PAGE)
		shift = MX5_MKEY_MAX_LOG_PAGE;
	/* never finer than a firmware page (pins are host-page granular anyway) */
	if (shift < MX5_FW_PAGE_SHIFT)
		shift = MX5_FW_PAGE_SHIFT;
	return shift;
}

/* Walks the pinned segments in VA order: MTT entries are written in increasing VA, so
 * each lookup resumes where the last one stopped (a page-by-page scattered pin of a
 * large region would otherwise cost entries x segments). */
struct mx5_seg_cursor {
	const struct shim_pin *p;
	uint32_t k;             /* segment holding sva */
	uint64_t sva;           /* VA where segment k starts */
};

/* IOVA that VA `v` (inside the region, or within its first page) translates to; v never
 * decreases from one call to the next. */
static uint64_t mx5_va_to_iova(struct mx5_seg_cursor *c, uint64_t v)
{
	while (c->k + 1 < c->p->nseg && v >= c->sva + c->p->seg[c->k].len) {
		c->sva += c->p->seg[c->k].len;
		c->k++;
	}
	return c->p->seg[c->k].iova + (v - c->sva);  /* v < sva only for the first page */
}

/* Part i of a region split over several direct MKeys: `limit` pages of the page grid
 * starting at base, clipped to the region [va, va + len). */
struct mx5_mr_part {
	uint64_t first, n;      /* pages of the grid */
	uint64_t start, len;    /* the VA range the part translates */
};

static struct mx5_mr_part mx5_mr_part(uint32_t i, uint64_t limit, uint64_t npages, uint64_t va,
				      uint64_t len, uint64_t base, uint64_t page)
{
	struct mx5_mr_part p;
	p.first = (uint64_t)i * limit;
	p.n = npages - p.first < limit ? npages - p.first : limit;
	/* each part translates its own VA range; the first starts at the region */
	p.start = i == 0 ? va : base + p.first * page;
	uint64_t end = base + (p.first + p.n) * page;
	if (end > va + len)
		end = va + len;
	p.len = end - p.start;
	return p;
}

/* The key part of a new MKey (mkc.mkey_7_0, PRM "MKey Context": software's choice,
 * carried in every lkey and rkey as their low byte).  Random, so that one rkey tells
 * a peer nothing about the next: the MKey index above it is the device's, and a
 * ConnectX hands indices out in order, so with a counter here (Linux mlx5_ib's
 * mkey_var) a guessed neighbour rkey would be right at the first try.  With a random
 * byte a blind guess at a known index lands once in 256 tries, and a responder that
 * sees a wrong key NAKs and moves the QP to error.  getrandom(2) costs one system call
 * per registration, which already costs a firmware command; should it fail, the
 * counter is kept so registration still works. */
static uint8_t mx5_mkey_variant(struct mx5_device *dev)
{
	uint8_t v;

	if (plat_random(&v, sizeof(v)) == 0)
		return v;
	return (uint8_t)(++dev->mkey_variant);
}

static unsigned mx5_mkc_access(uint8_t *mkc, unsigned access)
{
	PRM_SET(mkc, mkc, lr, 1);
	PRM_SET(mkc, mkc, lw, (access & MX5_ACCESS_LOCAL_WRITE) ? 1 : 0);
	PRM_SET(mkc, mkc, rr, (access & MX5_ACCESS_REMOTE_READ) ? 1 : 0);
	PRM_SET(mkc, mkc, rw, (access & MX5_ACCESS_REMOTE_WRITE) ? 1 : 0);
	PRM_SET(mkc, mkc, a, (access & MX5_ACCESS_REMOTE_ATOMIC) ? 1 : 0);
	return 0;
}

static int mx5_create_mkey(struct mx5_device *dev, uint8_t *in, size_t inlen, uint32_t *index)
{
	uint8_t o[PRM_SIZE(create_mkey_out)];
	PRM_SET(create_mkey_in, in, opcode, PRM_CMD_OP_CREATE_MKEY);
	int rc = mx5_exec(dev, in, inlen, o, sizeof(o));
	if (rc)
		return rc;
	*index = (uint32_t)PRM_GET(create_mkey_out, o, mkey_index);
	return 0;
}

static void mx5_destroy_mkey(struct mx5_device *dev, uint32_t index)
{
	if (dev->health != MX5_HEALTH_OK)
		return;
	uint8_t in[PRM_SIZE(destroy_mkey_in)] = { 0 }, o[PRM_SIZE(destroy_mkey_out)];
	PRM_SET(destroy_mkey_in, in, opcode, PRM_CMD_OP_DESTROY_MKEY);
	PRM_SET(destroy_mkey_in, in, mkey_index, index);
	mx5_exec(dev, in, sizeof(in), o, sizeof(o));
}

/* One direct MTT MKey over pages [first, first+n) of the region's page grid. */
static int mx5_mkey_mtt(struct mx5_mr *mr, struct mx5_seg_cursor *cur, uint64_t base,
			unsigned shift, uint64_t first, uint64_t n, uint64_t start, uint64_t len,
			uint8_t variant, unsigned access, int umr_en, uint32_t *index)
{
	struct mx5_device *dev = mr->dev;
	uint64_t octo = (n + 1) / 2;            /* an octoword holds two 8-byte MTT entries */
	size_t inlen = PRM_SIZE(create_mkey_in) + octo * 16;
	uint8_t *in = calloc(1, inlen);
	if (!in)
		return mx5_fail(dev, -ENOMEM, "CREATE_MKEY: out of memory for %llu MTT entries",
				(unsigned long long)n);
	uint8_t *mkc = PRM_ADDR(create_mkey_in, in, memory_key_mkey_entry);
	PRM_SET(mkc, mkc, access_mode_1_0, MX5_MKC_ACCESS_MODE_MTT);
	mx5_mkc_access(mkc, access);
	PRM_SET(mkc, mkc, qpn, 0xffffff);  /* not bound to a QP */
	PRM_SET(mkc, mkc, mkey_7_0, variant);
	PRM_SET(mkc, mkc, pd, mr->pd->pdn);
	/* a region in one MKey can later change rights or PD in place by UMR, keys kept
	 * (mx5_mr_umr_rereg; Linux mlx5_ib creates user MKeys with umr_en for this).
	 * Not through a device daemon: it refuses umr_en (tools/uvd/policy.c). */
	PRM_SET(mkc, mkc, umr_en, umr_en ? 1 : 0);
	/* No remote invalidation of a region registered by ibv_reg_mr (IBTA vol. 1, 10.6): Linux
	 * mlx5_ib sets mkc.en_rinval only for type-2 memory windows (mr.c mlx5_ib_alloc_mw),
	 * which we do not offer. */
	PRM_SET(mkc, mkc, en_rinval, 0);
	PRM_SET(mkc, mkc, start_addr, start);
	PRM_SET(mkc, mkc, len, len);
	PRM_SET(mkc, mkc, log_page_size, shift);
	PRM_SET(mkc, mkc, translations_octword_size, octo);
	PRM_SET(create_mkey_in, in, translations_octword_actual_size, octo);
	uint8_t *mtt = PRM_ADDR(create_mkey_in, in, klm_pas_mtt);
	uint64_t page = 1ull << shift;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t iova = mx5_va_to_iova(cur, base + (first + i) * page);
		uint8_t *e = mtt + i * PRM_SIZE(mtt);
		PRM_SET(mtt, e, ptag_63_32, iova >> 32);
		PRM_SET(mtt, e, ptag_31_8, (iova & 0xffffffffu) >> 8);
		PRM_SET(mtt, e, rd_en, 1);
		PRM_SET(mtt, e, wr_en, 1);
	}
	int rc = mx5_create_mkey(dev, in, inlen, index);
	free(in);
	return rc;
}

int mx5_mr_reg(struct mx5_pd *pd, void *addr, size_t len, unsigned access, struct mx5_mr **out)
{
	if (!pd || !out)
		return -EINVAL;
	struct mx5_device *dev = pd->dev;
	*out = NULL;
	if (!len)
		return mx5_fail(dev, -EINVAL, "MR: empty region");
	/* nothing is mapped at address 0: EFAULT, as pinning it fails in Linux's
	 * ib_umem_get */
	if (!addr)
		return mx5_fail(dev, -EFAULT, "MR at address 0: no memory there");
	if ((access & (MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & MX5_ACCESS_LOCAL_WRITE))
		return mx5_fail(dev, -EINVAL,
				"MR: remote write or atomic access needs local write (IBTA 10.6.3.1)");
	uint64_t max_len = MX5_CAP_GEN(dev, log_max_mrw_sz) >= 64 ? UINT64_MAX
			   : 1ull << MX5_CAP_GEN(dev, log_max_mrw_sz);
	if (len > max_len)
		return mx5_fail(dev, -EINVAL, "MR length %zu exceeds device limit %llu (log_max_mrw_sz %u)",
				len, (unsigned long long)max_len, (unsigned)MX5_CAP_GEN(dev, log_max_mrw_sz));
	if (dev->health != MX5_HEALTH_OK)
		return mx5_fail(dev, -ENODEV, "MR: device is in fatal error");
	int rc = mx5_refuse_fork_child(dev);
	if (rc)
		return rc;
	struct mx5_mr *mr = calloc(1, sizeof(*mr));
	if (!mr)
		return mx5_fail(dev, -ENOMEM, "MR: out of memory");
	mr->dev = dev;
	mr->pd = pd;
	rc = shim_dma_pin(dev->shim, addr, len, &mr->pin);
	if (rc || mr->pin.nseg == 0) {
		rc = mx5_fail(dev, rc ? rc : -EFAULT, "MR: cannot pin %zu bytes at %p: %s", len, addr,
			      dev->shim->err[0] ? dev->shim->err : "no IOVA segments");
		free(mr);
		return rc;
	}
	mr->pinned = true;
	/* Write access over memory the shim could map for reading only (a read-only
	 * mapping): the device's writes would fault in the IOMMU; refuse now, as Linux's
	 * ib_umem_get fails a writable registration of read-only pages. */
	if (mr->pin.readonly && (access & (MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE |
					   MX5_ACCESS_REMOTE_ATOMIC))) {
		rc = mx5_fail(dev, -EFAULT, "MR: cannot pin %zu bytes at %p for writing: the memory is "
			      "read-only", len, addr);
		goto err;
	}
	uint64_t va = (uint64_t)(uintptr_t)addr;
	unsigned shift = mx5_best_page_shift(va, &mr->pin);
	uint64_t page = 1ull << shift;
	uint64_t base = va & ~(page - 1);
	uint64_t npages = ((va + len + page - 1) & ~(page - 1)) - base;
	npages >>= shift;
	uint8_t variant = mx5_mkey_variant(dev);
	uint64_t limit = mx5_mtt_limit(dev);
	if (npages > limit) {
		/* Split: every part becomes one KLM entry, whose byte_count the device takes
		 * up to 2 GiB (Linux mlx5_ifc.h MLX5_MAX_KLM_BYTE_COUNT). */
		uint64_t klm_pages = (1ull << 31) >> shift;
		if (klm_pages < limit)
			limit = klm_pages;
	}
	uint32_t nparts = (uint32_t)((npages + limit - 1) / limit);
	struct mx5_seg_cursor cur = { .p = &mr->pin, .k = 0, .sva = va };

	mr->parts = calloc(nparts, sizeof(uint32_t));
	if (!mr->parts) {
		rc = mx5_fail(dev, -ENOMEM, "MR: out of memory");
		goto err;
	}
	if (nparts > 1) {
		unsigned log_klm = (unsigned)MX5_CAP_GEN(dev, log_max_klm_list_size);
		if (nparts > (1ull << log_klm)) {
			rc = mx5_fail(dev, -EINVAL,
				      "MR of %llu pages needs %u KLM entries, device limit %llu "
				      "(log_max_klm_list_size %u)", (unsigned long long)npages, nparts,
				      1ull << log_klm, log_klm);
			goto err;
		}
	}
	for (uint32_t i = 0; i < nparts; i++) {
		struct mx5_mr_part p = mx5_mr_part(i, limit, npages, va, len, base, page);
		rc = mx5_mkey_mtt(mr, &cur, base, shift, p.first, p.n, p.start, p.len, variant,
				  nparts > 1 ? (access | MX5_ACCESS_LOCAL_WRITE) : access, nparts == 1 && !dev->remote,
				  &mr->parts[i]);
		if (rc)
			goto err;
		mr->nparts++;
	}
	if (nparts == 1) {
		mr->top_index = mr->parts[0];
	} else {
		/* the indirect MKey: one KLM entry (16 bytes = one octoword) per part, the list
		 * padded with zero entries to a multiple of 4 as DPDK's
		 * drivers/common/mlx5/mlx5_devx_cmds.c mlx5_devx_cmd_mkey_create pads it
		 * (RTE_ALIGN(klm_num, 4), in both octword sizes) and Linux's UMR pads its
		 * translation lists to 64 bytes (drivers/infiniband/hw/mlx5/umr.c,
		 * MLX5_UMR_FLEX_ALIGNMENT) */
		uint32_t nklm = (nparts + 3u) & ~3u;
		size_t inlen = PRM_SIZE(create_mkey_in) + (size_t)nklm * PRM_SIZE(klm);
		uint8_t *in = calloc(1, inlen);
		if (!in) {
			rc = mx5_fail(dev, -ENOMEM, "MR: out of memory");
			goto err;
		}
		uint8_t *mkc = PRM_ADDR(create_mkey_in, in, memory_key_mkey_entry);
		PRM_SET(mkc, mkc, access_mode_1_0, MX5_MKC_ACCESS_MODE_KLM);
		mx5_mkc_access(mkc, access);
		PRM_SET(mkc, mkc, qpn, 0xffffff);
		PRM_SET(mkc, mkc, mkey_7_0, variant);
		PRM_SET(mkc, mkc, pd, pd->pdn);
		PRM_SET(mkc, mkc, start_addr, va);
		PRM_SET(mkc, mkc, len, len);
		PRM_SET(mkc, mkc, translations_octword_size, nklm);
		PRM_SET(create_mkey_in, in, translations_octword_actual_size, nklm);
		uint8_t *klm = PRM_ADDR(create_mkey_in, in, klm_pas_mtt);
		for (uint32_t i = 0; i < nparts; i++) {
			struct mx5_mr_part p = mx5_mr_part(i, limit, npages, va, len, base, page);
			uint8_t *e = klm + (size_t)i * PRM_SIZE(klm);
			PRM_SET(klm, e, byte_count, p.len);
			PRM_SET(klm, e, mkey, (mr->parts[i] << 8) | variant);
			PRM_SET(klm, e, address, p.start);
		}
		rc = mx5_create_mkey(dev, in, inlen, &mr->top_index);
		free(in);
		if (rc)
			goto err;
	}
	mr->info.lkey = mr->info.rkey = (mr->top_index << 8) | variant;
	mr->info.iova = va;
	mr->info.length = len;
	mr->info.log_page_size = shift;
	mr->info.mtt_entries = npages + (nparts > 1 ? nparts : 0);
	mr->info.indirect = nparts > 1;
	mr->info.nparts = nparts;
	pd->refs++;
	plat_list_add(&dev->mrs, &mr->link);
	*out = mr;
	return 0;
err:
	for (uint32_t i = 0; i < mr->nparts; i++)
		mx5_destroy_mkey(dev, mr->parts[i]);
	free(mr->parts);
	shim_dma_unpin(dev->shim, &mr->pin);
	free(mr);
	return rc;
}

static void mx5_mr_release(struct mx5_mr *mr)
{
	struct mx5_device *dev = mr->dev;
	if (mr->info.indirect)
		mx5_destroy_mkey(dev, mr->top_index);
	for (uint32_t i = 0; i < mr->nparts; i++)
		mx5_destroy_mkey(dev, mr->parts[i]);
	if (mr->pinned)
		shim_dma_unpin(dev->shim, &mr->pin);
	mr->pd->refs--;
	plat_list_del(&mr->link);
	free(mr->parts);
	free(mr);
}

int mx5_mr_dereg(struct mx5_mr *mr)
{
	if (!mr)
		return -EINVAL;
	/* a child of fork() may not undo its parent's MR: the unpin takes locks a parent
	 * thread may have held at the fork (mx5_refuse_fork_child) */
	int rc = mx5_refuse_fork_child(mr->dev);
	if (rc)
		return rc;
	mx5_mr_release(mr);
	return 0;
}

void mx5_mr_destroy_forced(struct mx5_mr *mr)
{
	mx5_mr_release(mr);
}

void mx5_mr_query(const struct mx5_mr *mr, struct mx5_mr_info *info)
{
	*info = mr->info;
}
