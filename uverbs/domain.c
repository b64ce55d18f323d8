/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Thread domains, parent domains and the other single-thread hints (ibv_alloc_td(3),
 * ibv_alloc_parent_domain(3)).
 *
 * Every queue takes a lock in its data-path calls (uv.h "Locking").  An application
 * that uses a queue from one thread at a time can say so and skip the lock, the ways
 * rdma-core's mlx5 offers (providers/mlx5/mlx5.h mlx5_spinlock_init_pd, and the
 * MLX5_SINGLE_THREADED variable in providers/mlx5/mlx5.c):
 *  - UVERBS_SINGLE_THREADED=1 in the environment: for every QP, CQ and SRQ made after
 *    (read at each creation);
 *  - a QP, CQ (ibv_create_cq_ex with IBV_CQ_INIT_ATTR_MASK_PD) or SRQ made on a parent
 *    domain that has a thread domain (ibv_alloc_parent_domain(3): "the thread domain
 *    ... an application-level promise that a single thread accesses the objects");
 *  - a CQ made with IBV_CREATE_CQ_ATTR_SINGLE_THREADED (ibv_create_cq_ex(3)).
 * A thread domain here carries no resource of its own: a real ConnectX would give it
 * a dedicated UAR page (rdma-core mlx5_alloc_td), which this driver does not do yet. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uverbs/uv.h"

bool uv_single_threaded(struct ibv_pd *pd)
{
	const char *s = getenv("UVERBS_SINGLE_THREADED");

	if (s && !strcmp(s, "1"))
		return true;
	if (s && *s && strcmp(s, "0"))
		uv_log(UV_LOG_WARN, "UVERBS_SINGLE_THREADED=%s: expected 1 or 0; locks kept", s);
	return pd && uv_from(pd, struct uv_pd, pd)->td != NULL;
}

struct ibv_td *uv_alloc_td_op(struct ibv_context *c, struct ibv_td_init_attr *a)
{
	if (!c || !a)
		return uv_null(EINVAL);
	if (a->comp_mask)
		return uv_null(EINVAL);   /* ibv_alloc_td(3): no comp_mask bit is defined */
	struct uv_td *t = calloc(1, sizeof(*t));
	if (!t)
		return uv_null(ENOMEM);
	t->td.context = c;
	return &t->td;
}

int uv_dealloc_td_op(struct ibv_td *td)
{
	if (!td)
		return EINVAL;
	struct uv_td *t = uv_from(td, struct uv_td, td);
	struct uv_dev *d = uv_ctx_dev(td->context);

	pthread_mutex_lock(&d->lock);
	unsigned users = t->users;
	pthread_mutex_unlock(&d->lock);
	if (users)
		return EBUSY;     /* a parent domain still names it */
	free(t);
	return 0;
}

struct ibv_pd *uv_alloc_parent_domain_op(struct ibv_context *c,
					 struct ibv_parent_domain_init_attr *a)
{
	if (!c || !a || !a->pd || a->pd->context != c || (a->td && a->td->context != c))
		return uv_null(EINVAL);
	if (a->comp_mask & ~(uint32_t)IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT) {
		uv_unsupported("ibv_alloc_parent_domain: custom allocators");
		return NULL;
	}
	struct uv_pd *base = uv_from(a->pd, struct uv_pd, pd);
	if (base->base)
		return uv_null(EINVAL);   /* a parent domain of a parent domain */
	struct uv_pd *p = calloc(1, sizeof(*p));
	if (!p)
		return uv_null(ENOMEM);
	struct uv_dev *d = uv_ctx_dev(c);
	p->pd.context = c;
	p->pd.handle = a->pd->handle;
	p->m = base->m;
	p->base = base;
	p->td = a->td ? uv_from(a->td, struct uv_td, td) : NULL;
	if (a->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		p->pd_context = a->pd_context;
	pthread_mutex_lock(&d->lock);
	base->parents++;
	if (p->td)
		p->td->users++;
	pthread_mutex_unlock(&d->lock);
	return &p->pd;
}

/* rdma-core's mlx5 refuses to free a parent domain while a QP or CQ made on it lives
 * (providers/mlx5/verbs.c: mlx5_dealloc_parent_domain returns EBUSY while mpd.refcount
 * is above the 1 it was made with; mlx5_create_qp and create_cq take a reference,
 * mlx5_destroy_qp and mlx5_destroy_cq drop it).  An SRQ counts here too, which rdma-core
 * does not do: its ibv_srq.pd names the parent domain just as an ibv_qp.pd does, and a
 * freed one would leave that pointer dangling.  MRs hold only the base PD, as in
 * rdma-core, where the registration names the base PD's handle. */
struct uv_pd *uv_parent_hold(struct ibv_pd *pd)
{
	struct uv_pd *p = pd ? uv_from(pd, struct uv_pd, pd) : NULL;

	if (!p || !p->base)
		return NULL;
	p->users++;
	return p;
}

void uv_parent_put(struct uv_pd *parent)
{
	if (parent)
		parent->users--;
}

int uv_pd_dealloc_domain(struct uv_pd *p, bool *handled)
{
	struct uv_dev *d = uv_ctx_dev(p->pd.context);
	int rc = 0;

	*handled = false;
	pthread_mutex_lock(&d->lock);
	if (p->base) {
		*handled = true;
		if (p->users) {
			rc = EBUSY;   /* a QP, CQ or SRQ made on it lives: it stays as it is */
		} else {
			/* objects made on the parent domain hold the base PD in hw/mlx5, so
			 * freeing the base stays refused (EBUSY) while they live */
			p->base->parents--;
			if (p->td)
				p->td->users--;
		}
	} else if (p->parents) {
		rc = EBUSY;
		*handled = true;
	}
	pthread_mutex_unlock(&d->lock);
	if (p->base && !rc)
		free(p);
	return rc;
}
