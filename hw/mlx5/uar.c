/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The driver's UAR page (PRM "UAR Page"; ALLOC_UAR 0x802, DEALLOC_UAR 0x803).
 *
 * A UAR page is 2^log_uar_page_sz 4 KiB units of BAR0 (we set it to the host page size
 * in SET_HCA_CAP), at index × page size.  It holds the CQ doorbell (0x20), the EQ
 * doorbells (0x40 arm, 0x48 no arm) and, from 0x800, the BlueFlame registers of
 * bf_reg_size = 2^log_bf_reg_size bytes: register k starts at 0x800 + k·bf_reg_size and
 * is two buffers of bf_reg_size/2 that a QP alternates between (rdma-core mlx5 lays
 * them out the same way). */
#include <errno.h>
#include <string.h>

#include "hw/mlx5/mx5_internal.h"

static int mx5_uar_alloc_one(struct mx5_device *dev, struct mx5_uar *u)
{
	uint8_t out[PRM_SIZE(alloc_uar_out)];
	int rc = mx5_exec_bare(dev, PRM_CMD_OP_ALLOC_UAR, PRM_SIZE(alloc_uar_in), out, sizeof(out), "bring-up");
	if (rc)
		return rc;
	u->index = (uint32_t)PRM_GET(alloc_uar_out, out, uar);
	u->page_bytes = (size_t)MX5_FW_PAGE_SIZE << MX5_CAP_GEN(dev, log_uar_page_sz);
	u->bar_off = (uint64_t)u->index * u->page_bytes;
	u->allocated = true;
	if (u->bar_off + u->page_bytes > dev->bar0.len)
		return mx5_fail(dev, -ERANGE,
				"bring-up: ALLOC_UAR: UAR %u lies past BAR0 (0x%zx bytes)",
				u->index, dev->bar0.len);
	return 0;
}

static void mx5_uar_free_one(struct mx5_device *dev, struct mx5_uar *u)
{
	if (!u->allocated)
		return;
	u->allocated = false;
	if (dev->health != MX5_HEALTH_OK)
		return;
	uint8_t in[PRM_SIZE(dealloc_uar_in)] = { 0 }, out[PRM_SIZE(dealloc_uar_out)];
	PRM_SET(dealloc_uar_in, in, opcode, PRM_CMD_OP_DEALLOC_UAR);
	PRM_SET(dealloc_uar_in, in, uar, u->index);
	if (mx5_exec(dev, in, sizeof(in), out, sizeof(out)))
		mx5_cmd_fail(dev, -EIO, "teardown");
}

int mx5_uar_alloc(struct mx5_device *dev)
{
	return mx5_uar_alloc_one(dev, &dev->uar);
}

void mx5_uar_free(struct mx5_device *dev)
{
	while (dev->nxuar)
		mx5_uar_free_one(dev, &dev->xuar[--dev->nxuar]);
	memset(dev->bf_busy, 0, sizeof(dev->bf_busy));
	mx5_uar_free_one(dev, &dev->uar);
}

void mx5_device_set_uar_limit(struct mx5_device *dev, unsigned extra_uars)
{
	dev->xuar_limit = extra_uars < MX5_MAX_XUARS ? extra_uars : MX5_MAX_XUARS;
}

/* Bytes of one BlueFlame register (two alternating halves) and how many fit the
 * first 4 KiB of a UAR page, which alone carries them. */
static uint32_t mx5_bf_reg_bytes(struct mx5_device *dev, uint32_t *nregs)
{
	uint32_t size = 1u << MX5_CAP_GEN(dev, log_bf_reg_size);
	if (size < 128)
		size = 512;
	*nregs = (MX5_FW_PAGE_SIZE - PRM_UAR_BF_OFFSET) / size;
	if (*nregs > 16)
		*nregs = 16;
	return size;
}

static void mx5_bf_fill(struct mx5_bf_reg *r, const struct mx5_uar *u, int slot, unsigned reg,
			uint32_t size, uint32_t half)
{
	r->uar_index = u->index;
	r->off = u->bar_off + PRM_UAR_BF_OFFSET + (uint64_t)reg * size;
	r->half = half;
	r->uar_slot = (int16_t)slot;
	r->reg = (uint8_t)reg;
}

/* A BlueFlame register for one QP, its own: the data path writes it without a lock, so
 * two QPs posted from two threads must never share one (rdma-core locks a shared
 * register; we do not share).  Register 0 of the first UAR is kept back: QPs that find
 * no register of their own (no BlueFlame, the UAR limit reached, ALLOC_UAR refused)
 * ring 64-bit doorbells there, which are single stores and need no lock.
 * A BlueFlame burst is meant to reach the device as write-combined 64-byte writes; a
 * shim without a write-combining mapping (VFIO maps BARs uncached) gets doorbells
 * only, as its header promises, rather than bursts split into 8-byte uncached stores. */
void mx5_uar_bf_get(struct mx5_device *dev, struct mx5_bf_reg *out)
{
	uint32_t nregs, size = mx5_bf_reg_bytes(dev, &nregs);
	if (MX5_CAP_GEN(dev, bf) && nregs >= 2 && dev->bar0.wc_base &&
	    dev->attr.bf_policy != MX5_BF_OFF) {
		for (unsigned u = 0; u <= dev->nxuar; u++) {
			for (unsigned r = u ? 0 : 1; r < nregs; r++) {
				if (dev->bf_busy[u] & (1u << r))
					continue;
				dev->bf_busy[u] |= (uint16_t)(1u << r);
				mx5_bf_fill(out, u ? &dev->xuar[u - 1] : &dev->uar, (int)u, r, size,
					    size / 2);
				return;
			}
		}
		unsigned limit = dev->xuar_limit ? dev->xuar_limit : MX5_MAX_XUARS;
		if (dev->nxuar < limit && dev->nxuar < MX5_MAX_XUARS) {
			struct mx5_uar *nu = &dev->xuar[dev->nxuar];
			char keep[MX5_ERR_LEN];
			memcpy(keep, dev->err, sizeof(keep));
			if (mx5_uar_alloc_one(dev, nu) == 0) {
				unsigned u = ++dev->nxuar;
				dev->bf_busy[u] = 1;
				mx5_bf_fill(out, nu, (int)u, 0, size, size / 2);
				return;
			}
			/* not an error: this QP rings doorbells instead */
			mx5_uar_free_one(dev, nu);
			memcpy(dev->err, keep, sizeof(keep));
		}
	}
	mx5_bf_fill(out, &dev->uar, -1, 0, size, 0);
}

void mx5_uar_bf_put(struct mx5_device *dev, const struct mx5_bf_reg *r)
{
	if (r->uar_slot < 0 || (unsigned)r->uar_slot > dev->nxuar)
		return;
	dev->bf_busy[r->uar_slot] &= (uint16_t)~(1u << r->reg);
}
