/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* XRC domains (ibv_open_xrcd(3), ibv_close_xrcd; IBTA 14.2 "XRC"), through hw/mlx5's
 * ALLOC_XRCD / DEALLOC_XRCD (hw/mlx5/xrcd.c).  XRC SRQs are srq_ah.c's, XRC QPs qp.c's.
 *
 * ibv_open_xrcd with fd -1 (and O_CREAT, or no oflags) opens a domain of its own, as
 * librdmacm (cma.c ucma_get_xrcd) and ibv_xsrq_pingpong do.  A domain named by a file
 * (fd >= 0), which Linux's uverbs shares between the processes that open the same
 * inode (drivers/infiniband/core/uverbs_cmd.c ib_uverbs_open_xrcd, xrcd_table), is
 * refused with EOPNOTSUPP: each process here drives its own device function and holds
 * its own XRC domains, so there is nothing another process could join. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>

#include "uverbs/uv.h"

struct ibv_xrcd *uv_open_xrcd_op(struct ibv_context *c, struct ibv_xrcd_init_attr *a)
{
	if (!c || !a)
		return uv_null(EINVAL);
	/* ibv_open_xrcd(3): comp_mask must name fd and oflags */
	if ((a->comp_mask & ~(uint32_t)(IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS)) ||
	    !(a->comp_mask & IBV_XRCD_INIT_ATTR_FD) || !(a->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS) ||
	    (a->oflags & ~(O_CREAT | O_EXCL)))
		return uv_null(EINVAL);
	if (a->fd != -1) {
		uv_log(UV_LOG_WARN, "ibv_open_xrcd: an XRC domain shared through a file (fd %d) is not offered: "
		       "only fd -1, a domain of this process; EOPNOTSUPP", a->fd);
		return uv_null(EOPNOTSUPP);
	}
	struct uv_dev *d = uv_ctx_dev(c);
	struct uv_xrcd *x = calloc(1, sizeof(*x));
	if (!x)
		return uv_null(ENOMEM);
	pthread_mutex_lock(&d->lock);
	int rc = mx5_xrcd_alloc(d->mx5, &x->m);
	if (rc)
		rc = uv_err(d, rc, "ibv_open_xrcd");
	else
		uv_ctx(c)->nxrcds++;
	pthread_mutex_unlock(&d->lock);
	if (rc) {
		free(x);
		return uv_null(rc);
	}
	x->xrcd.context = c;
	return &x->xrcd;
}

int uv_close_xrcd_op(struct ibv_xrcd *xrcd)
{
	if (!xrcd)
		return EINVAL;
	struct uv_xrcd *x = uv_xrcd_of(xrcd);
	struct uv_dev *d = uv_dev_lock(xrcd->context);
	int rc = mx5_xrcd_free(x->m);   /* EBUSY while XRC SRQs or QPs use it */
	if (rc)
		rc = uv_err(d, rc, "ibv_close_xrcd");
	else
		uv_ctx(xrcd->context)->nxrcds--;
	pthread_mutex_unlock(&d->lock);
	if (!rc)
		free(x);
	return rc;
}
