/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Protection domains (PRM ALLOC_PD 0x800 / DEALLOC_PD 0x801).  Every MKey, QP and SRQ
 * names its PD; the device checks that a WQE's keys and its QP share one. */
#include <errno.h>
#include <stdlib.h>

#include "hw/mlx5/mx5_objects.h"

int mx5_pd_alloc(struct mx5_device *dev, struct mx5_pd **out)
{
	if (!dev || !out)
		return -EINVAL;
	*out = NULL;
	struct mx5_pd *pd = calloc(1, sizeof(*pd));
	if (!pd)
		return mx5_fail(dev, -ENOMEM, "ALLOC_PD: out of memory");
	uint8_t in[PRM_SIZE(alloc_pd_in)] = { 0 }, o[PRM_SIZE(alloc_pd_out)];
	PRM_SET(alloc_pd_in, in, opcode, PRM_CMD_OP_ALLOC_PD);
	int rc = mx5_exec(dev, in, sizeof(in), o, sizeof(o));
	if (rc) {
		free(pd);
		return rc;
	}
	pd->dev = dev;
	pd->pdn = (uint32_t)PRM_GET(alloc_pd_out, o, pd);
	plat_list_add(&dev->pds, &pd->link);
	*out = pd;
	return 0;
}

int mx5_pd_free(struct mx5_pd *pd)
{
	if (!pd)
		return -EINVAL;
	struct mx5_device *dev = pd->dev;
	if (pd->refs)
		return mx5_fail(dev, -EBUSY, "DEALLOC_PD: PD 0x%x still has %u objects", pd->pdn,
				pd->refs);
	int rc = 0;
	if (dev->health == MX5_HEALTH_OK) {
		uint8_t in[PRM_SIZE(dealloc_pd_in)] = { 0 }, o[PRM_SIZE(dealloc_pd_out)];
		PRM_SET(dealloc_pd_in, in, opcode, PRM_CMD_OP_DEALLOC_PD);
		PRM_SET(dealloc_pd_in, in, pd, pd->pdn);
		rc = mx5_exec(dev, in, sizeof(in), o, sizeof(o));
		if (rc && rc != -ENODEV)
			return rc;
	}
	plat_list_del(&pd->link);
	free(pd);
	return 0;
}

uint32_t mx5_pd_num(const struct mx5_pd *pd)
{
	return pd->pdn;
}
