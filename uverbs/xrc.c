/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* XRC domains (ibv_open_xrcd(3), ibv_close_xrcd; IBTA 14.2 "XRC"), through hw/mlx5's
 * ALLOC_XRCD / DEALLOC_XRCD (hw/mlx5/xrcd.c).  XRC SRQs are srq_ah.c's, XRC QPs qp.c's.
 *
 * ibv_open_xrcd with fd -1 opens a domain of its own, whatever oflags say, as Linux's
 * does and librdmacm (cma.c ucma_get_xrcd) uses.  With a file's fd (ibv_xsrq_pingpong
 * opens /tmp/xrc_domain) the domain is the one of that file's inode on the device, as
 * Linux's uverbs keeps it (drivers/infiniband/core/uverbs_cmd.c ib_uverbs_open_xrcd,
 * xrcd_table_search/insert), with its error numbers: O_CREAT makes it when there is
 * none, O_EXCL refuses one that exists (EINVAL), without O_CREAT a missing one is
 * EAGAIN, and other oflags bits are not looked at; each open is
 * closed once, the last close frees the domain.  The table is per process: each
 * process here drives its own device function, so a domain named by a file is shared
 * by the contexts of this process on one device, never with another process (which has
 * a device of its own). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "uverbs/uv.h"

struct ibv_xrcd *uv_open_xrcd_op(struct ibv_context *c, struct ibv_xrcd_init_attr *a)
{
	if (!c || !a)
		return uv_null(EINVAL);
	/* ibv_open_xrcd(3): comp_mask must name fd and oflags */
	if ((a->comp_mask & ~(uint32_t)(IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS)) ||
	    !(a->comp_mask & IBV_XRCD_INIT_ATTR_FD) || !(a->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS))
		return uv_null(EINVAL);
	struct uv_dev *d = uv_ctx_dev(c);
	struct stat st;
	if (a->fd != -1 && fstat(a->fd, &st))
		return uv_null(EBADF);
	pthread_mutex_lock(&d->lock);
	if (a->fd != -1) {
		for (struct uv_xrcd *o = d->xrcds; o; o = o->next) {
			if (o->named && o->ino_dev == st.st_dev && o->ino == st.st_ino) {
				int err = (a->oflags & O_EXCL) ? EINVAL : 0;
				if (!err)
					o->opens++;
				pthread_mutex_unlock(&d->lock);
				return err ? uv_null(err) : &o->xrcd;
			}
		}
	}
	if (a->fd != -1 && !(a->oflags & O_CREAT)) {
		pthread_mutex_unlock(&d->lock);
		return uv_null(EAGAIN);
	}
	struct uv_xrcd *x = calloc(1, sizeof(*x));
	int rc = x ? mx5_xrcd_alloc(d->mx5, &x->m) : -ENOMEM;
	if (rc) {
		rc = uv_err(d, rc, "ibv_open_xrcd");
	} else {
		uv_ctx(c)->nxrcds++;
		x->xrcd.context = c;   /* before another open can find it on the list */
		x->ctx = uv_ctx(c);
		x->opens = 1;
		x->named = a->fd != -1;
		x->ino_dev = a->fd != -1 ? st.st_dev : 0;
		x->ino = a->fd != -1 ? st.st_ino : 0;
		x->next = d->xrcds;
		d->xrcds = x;
	}
	pthread_mutex_unlock(&d->lock);
	if (rc) {
		free(x);
		return uv_null(rc);
	}
	return &x->xrcd;
}

int uv_close_xrcd_op(struct ibv_xrcd *xrcd)
{
	if (!xrcd)
		return EINVAL;
	struct uv_xrcd *x = uv_xrcd_of(xrcd);
	struct uv_dev *d = uv_dev_lock(xrcd->context);
	int rc = 0;
	if (x->opens > 1) {
		x->opens--;
		pthread_mutex_unlock(&d->lock);
		return 0;
	}
	rc = mx5_xrcd_free(x->m);   /* EBUSY while XRC SRQs or QPs use it */
	if (rc) {
		rc = uv_err(d, rc, "ibv_close_xrcd");
	} else {
		x->ctx->nxrcds--;
		UV_LIST_DEL(&d->xrcds, x);
	}
	pthread_mutex_unlock(&d->lock);
	if (!rc)
		free(x);
	return rc;
}
