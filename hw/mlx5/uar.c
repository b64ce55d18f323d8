/* The driver's UAR page (PRM "UAR Page"; ALLOC_UAR 0x802, DEALLOC_UAR 0x803).
 *
 * A UAR page is 2^log_uar_page_sz 4 KiB units of BAR0 (we set it to the host page size
 * in SET_HCA_CAP), at index × page size.  It holds the CQ doorbell (0x20), the EQ
 * doorbells (0x40 arm, 0x48 no arm) and, from 0x800, the BlueFlame registers: pairs of
 * buffers of bf_reg_size = 2^log_bf_reg_size bytes each, so register k starts at
 * 0x800 + k·2·bf_reg_size and a QP alternates between its two halves. */
#include <errno.h>

#include "hw/mlx5/mx5_internal.h"

#define MX5_UAR_BF_BASE 0x800u

int mx5_uar_alloc(struct mx5_device *dev)
{
	uint8_t in[PRM_SIZE(alloc_uar_in)] = { 0 }, out[PRM_SIZE(alloc_uar_out)];
	PRM_SET(alloc_uar_in, in, opcode, PRM_CMD_OP_ALLOC_UAR);
	int rc = mx5_exec(dev, in, sizeof(in), out, sizeof(out));
	if (rc)
		return mx5_cmd_fail(dev, rc, "bring-up");
	dev->uar.index = (uint32_t)PRM_GET(alloc_uar_out, out, uar);
	dev->uar.page_bytes = (size_t)MX5_FW_PAGE_SIZE << MX5_CAP_GEN(dev, log_uar_page_sz);
	dev->uar.bar_off = (uint64_t)dev->uar.index * dev->uar.page_bytes;
	dev->uar.allocated = true;
	if (dev->uar.bar_off + dev->uar.page_bytes > dev->bar0.len)
		return mx5_fail(dev, -ERANGE,
				"bring-up: ALLOC_UAR: UAR %u lies past BAR0 (0x%zx bytes)",
				dev->uar.index, dev->bar0.len);
	return 0;
}

void mx5_uar_free(struct mx5_device *dev)
{
	if (!dev->uar.allocated)
		return;
	dev->uar.allocated = false;
	if (dev->health != MX5_HEALTH_OK)
		return;
	uint8_t in[PRM_SIZE(dealloc_uar_in)] = { 0 }, out[PRM_SIZE(dealloc_uar_out)];
	PRM_SET(dealloc_uar_in, in, opcode, PRM_CMD_OP_DEALLOC_UAR);
	PRM_SET(dealloc_uar_in, in, uar, dev->uar.index);
	if (mx5_exec(dev, in, sizeof(in), out, sizeof(out)))
		mx5_cmd_fail(dev, -EIO, "teardown");
}

/* BAR0 offset of the next BlueFlame register, handed out round robin (QPs may share
 * one: the data path writes a register only from the QP's own posting thread, and
 * rdma-core shares them the same way when it runs out of dedicated ones). */
uint64_t mx5_uar_bf_offset(struct mx5_device *dev, uint32_t *bf_size)
{
	uint32_t size = 1u << MX5_CAP_GEN(dev, log_bf_reg_size);
	if (size < 128)
		size = 512;
	/* only the first 4 KiB of the UAR page carries BlueFlame registers */
	uint32_t nregs = (MX5_FW_PAGE_SIZE - MX5_UAR_BF_BASE) / size;
	if (!nregs)
		nregs = 1;
	uint32_t k = dev->uar_bf_next++ % nregs;
	*bf_size = size / 2;   /* one of the two alternating buffers */
	return dev->uar.bar_off + MX5_UAR_BF_BASE + (uint64_t)k * size;
}
