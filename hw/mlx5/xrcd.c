/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* XRC domains (PRM ALLOC_XRCD 0x80e / DEALLOC_XRCD 0x80f; IBTA 14.2 "XRC"), and the
 * device's own XRC objects every XRC QP's context names.
 *
 * An XRC QP's qpc carries an xrcd and an srqn even where the QP uses neither: Linux
 * mlx5_ib gives an initiator (IB_QPT_XRC_INI) its devr->xrcdn1, devr->s0 and devr->c0
 * (qp.c create_qp_common, "Set default resources"), and a target (create_xrc_tgt_qp)
 * devr->p0, devr->c0 for both CQs and devr->s0, with the domain the user gave.  devr->s0
 * is an XRC SRQ in devr->xrcdn0 on devr->c0 (main.c mlx5_ib_dev_res_init /
 * mlx5_ib_dev_res_srq_init).  Linux makes them at probe; this driver at its first XRC
 * QP, so that devices which never see XRC spend nothing on it.  They live on the
 * device's object lists: teardown (objects.c) removes them with the rest. */
#include <errno.h>
#include <stdlib.h>

#include "hw/mlx5/mx5_objects.h"

int mx5_xrcd_alloc(struct mx5_device *dev, struct mx5_xrcd **out)
{
	if (!dev || !out)
		return -EINVAL;
	*out = NULL;
	if (dev->health != MX5_HEALTH_OK)
		return mx5_fail(dev, -ENODEV, "ALLOC_XRCD: device is in fatal error");
	if (!MX5_CAP_GEN(dev, xrc))
		return mx5_fail(dev, -EOPNOTSUPP, "ALLOC_XRCD: device does not offer XRC (cmd_hca_cap.xrc 0)");
	if (dev->remote)
		return mx5_fail(dev, -EOPNOTSUPP, "ALLOC_XRCD: XRC is not offered to clients of the device daemon");
	struct mx5_xrcd *x = calloc(1, sizeof(*x));
	if (!x)
		return mx5_fail(dev, -ENOMEM, "ALLOC_XRCD: out of memory");
	uint8_t in[PRM_SIZE(alloc_xrcd_in)] = { 0 }, o[PRM_SIZE(alloc_xrcd_out)];
	PRM_SET(alloc_xrcd_in, in, opcode, PRM_CMD_OP_ALLOC_XRCD);
	int rc = mx5_exec(dev, in, sizeof(in), o, sizeof(o));
	if (rc) {
		free(x);
		return rc;
	}
	x->dev = dev;
	x->xrcdn = (uint32_t)PRM_GET(alloc_xrcd_out, o, xrcd);
	plat_list_add(&dev->xrcds, &x->link);
	*out = x;
	return 0;
}

static int mx5_xrcd_dealloc(struct mx5_xrcd *x, bool forced)
{
	struct mx5_device *dev = x->dev;
	if (x->refs && !forced)
		return mx5_fail(dev, -EBUSY, "DEALLOC_XRCD: XRC domain 0x%x still has %u SRQs and QPs", x->xrcdn,
				x->refs);
	int rc = 0;
	if (dev->health == MX5_HEALTH_OK) {
		uint8_t in[PRM_SIZE(dealloc_xrcd_in)] = { 0 }, o[PRM_SIZE(dealloc_xrcd_out)];
		PRM_SET(dealloc_xrcd_in, in, opcode, PRM_CMD_OP_DEALLOC_XRCD);
		PRM_SET(dealloc_xrcd_in, in, xrcd, x->xrcdn);
		rc = mx5_exec(dev, in, sizeof(in), o, sizeof(o));
		if (rc && rc != -ENODEV && !forced)
			return rc;
	}
	plat_list_del(&x->link);
	free(x);
	return 0;
}

int mx5_xrcd_free(struct mx5_xrcd *x)
{
	return x ? mx5_xrcd_dealloc(x, false) : -EINVAL;
}

uint32_t mx5_xrcd_num(const struct mx5_xrcd *x)
{
	return x->xrcdn;
}

/* After every QP and SRQ is gone (objects.c mx5_objects_destroy_all). */
void mx5_xrcds_destroy_all(struct mx5_device *dev)
{
	while (!plat_list_empty(&dev->xrcds))
		mx5_xrcd_dealloc(plat_container_of(dev->xrcds.next, struct mx5_xrcd, link), true);
	free(dev->xrc_devr);
	dev->xrc_devr = NULL;
}

int mx5_xrc_devr_get(struct mx5_device *dev, struct mx5_xrc_devr **out)
{
	if (dev->xrc_devr) {
		*out = dev->xrc_devr;
		return 0;
	}
	struct mx5_xrc_devr *r = calloc(1, sizeof(*r));
	if (!r)
		return mx5_fail(dev, -ENOMEM, "XRC: out of memory");
	/* s0 as Linux mlx5_ib_dev_res_srq_init makes it: one WQE, one SGE */
	const struct mx5_srq_attr sa = { .max_wr = 1, .max_sge = 1 };
	const struct mx5_cq_attr ca = { .cqe = 1 };
	int rc = mx5_pd_alloc(dev, &r->p0);
	if (!rc)
		rc = mx5_cq_create(dev, &ca, &r->c0);
	if (!rc)
		rc = mx5_xrcd_alloc(dev, &r->x0);
	if (!rc)
		rc = mx5_xrcd_alloc(dev, &r->x1);
	if (!rc)
		rc = mx5_xrc_srq_create(r->p0, r->x0, r->c0, &sa, &r->s0);
	if (rc) {
		/* keep the message of the step that failed */
		if (r->s0)
			mx5_srq_destroy(r->s0);
		if (r->x1)
			mx5_xrcd_free(r->x1);
		if (r->x0)
			mx5_xrcd_free(r->x0);
		if (r->c0)
			mx5_cq_destroy(r->c0);
		if (r->p0)
			mx5_pd_free(r->p0);
		free(r);
		return rc;
	}
	dev->xrc_devr = r;
	*out = r;
	return 0;
}
