/* Protection domains and memory regions (PRM ALLOC_PD, CREATE_MKEY through hw/mlx5).
 * The keys translate virtual addresses (iova = addr), which is what mx5_mr_reg makes;
 * a region at another IOVA, on-demand paging and dma-buf regions are not offered. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uverbs/uv.h"

UV_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	if (!context) {
		errno = EINVAL;
		return NULL;
	}
	struct uv_dev *d = uv_ctx_dev(context);
	struct uv_pd *p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&d->lock);
	int rc = mx5_pd_alloc(d->mx5, &p->m);
	if (rc)
		rc = uv_err(d, rc, "ibv_alloc_pd");
	pthread_mutex_unlock(&d->lock);
	if (rc) {
		free(p);
		errno = rc;
		return NULL;
	}
	p->pd.context = context;
	p->pd.handle = mx5_pd_num(p->m);
	return &p->pd;
}

UV_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	if (!pd)
		return EINVAL;
	struct uv_pd *p = uv_from(pd, struct uv_pd, pd);
	struct uv_dev *d = uv_ctx_dev(pd->context);
	pthread_mutex_lock(&d->lock);
	int rc = mx5_pd_free(p->m);
	if (rc)
		rc = uv_err(d, rc, "ibv_dealloc_pd");  /* EBUSY while MRs/QPs/SRQs use it */
	pthread_mutex_unlock(&d->lock);
	if (!rc)
		free(p);
	return rc;
}

/* Access flags hw/mlx5 programs; the optional ones (relaxed ordering, which a host
 * may ignore by the verbs definition) are accepted and have no effect. */
#define UV_ACCESS_KNOWN (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_RELAXED_ORDERING)

static unsigned uv_mx5_access(unsigned a)
{
	return ((a & IBV_ACCESS_LOCAL_WRITE) ? MX5_ACCESS_LOCAL_WRITE : 0) |
	       ((a & IBV_ACCESS_REMOTE_WRITE) ? MX5_ACCESS_REMOTE_WRITE : 0) |
	       ((a & IBV_ACCESS_REMOTE_READ) ? MX5_ACCESS_REMOTE_READ : 0) |
	       ((a & IBV_ACCESS_REMOTE_ATOMIC) ? MX5_ACCESS_REMOTE_ATOMIC : 0);
}

static struct ibv_mr *uv_reg(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			     unsigned access)
{
	if (!pd || !length) {
		errno = EINVAL;
		return NULL;
	}
	if (access & IBV_ACCESS_ON_DEMAND) {
		uv_unsupported("on-demand paging (IBV_ACCESS_ON_DEMAND)");
		return NULL;
	}
	if (access & ~(unsigned)UV_ACCESS_KNOWN) {
		uv_log(UV_LOG_WARN, "ibv_reg_mr: access flags 0x%x not supported (EOPNOTSUPP)",
		       access & ~(unsigned)UV_ACCESS_KNOWN);
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* IBTA 10.6.3.1 / ibv_reg_mr(3): remote write or atomic needs local write */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE)) {
		errno = EINVAL;
		return NULL;
	}
	if (iova != (uint64_t)(uintptr_t)addr) {
		uv_unsupported("memory region at an IOVA other than its address (ibv_reg_mr_iova)");
		return NULL;
	}
	struct uv_pd *p = uv_from(pd, struct uv_pd, pd);
	struct uv_dev *d = uv_ctx_dev(pd->context);
	struct uv_mr *m = calloc(1, sizeof(*m));
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&d->lock);
	int rc = mx5_mr_reg(p->m, addr, length, uv_mx5_access(access), &m->m);
	if (rc)
		rc = uv_err(d, rc, "ibv_reg_mr");
	pthread_mutex_unlock(&d->lock);
	if (rc) {
		free(m);
		errno = rc;
		return NULL;
	}
	struct mx5_mr_info info;
	mx5_mr_query(m->m, &info);
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = length;
	m->mr.handle = info.lkey;
	m->mr.lkey = info.lkey;
	m->mr.rkey = info.rkey;
	m->access = access;
	return &m->mr;
}

#undef ibv_reg_mr
#undef ibv_reg_mr_iova
UV_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return uv_reg(pd, addr, length, (uint64_t)(uintptr_t)addr, (unsigned)access);
}

UV_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
					 uint64_t iova, int access)
{
	return uv_reg(pd, addr, length, iova, (unsigned)access);
}

UV_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
					  uint64_t iova, unsigned int access)
{
	return uv_reg(pd, addr, length, iova, access);
}

UV_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
					   uint64_t iova, int fd, int access)
{
	(void)pd; (void)offset; (void)length; (void)iova; (void)fd; (void)access;
	uv_unsupported("dma-buf memory regions (ibv_reg_dmabuf_mr)");
	return NULL;
}

UV_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	if (!mr)
		return EINVAL;
	struct uv_mr *m = uv_from(mr, struct uv_mr, mr);
	struct uv_dev *d = uv_ctx_dev(mr->context);
	pthread_mutex_lock(&d->lock);
	int rc = mx5_mr_dereg(m->m);
	if (rc)
		rc = uv_err(d, rc, "ibv_dereg_mr");
	pthread_mutex_unlock(&d->lock);
	if (!rc)
		free(m);
	return rc;
}

/* ibv_rereg_mr(3): change translation, PD or access; the keys may change.  Done as a
 * new registration replacing the old one (the old one stays valid if that fails). */
UV_EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
			   size_t length, int access)
{
	if (!mr || !flags || (flags & ~(IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
					IBV_REREG_MR_CHANGE_ACCESS)))
		return IBV_REREG_MR_ERR_INPUT;
	struct uv_mr *m = uv_from(mr, struct uv_mr, mr);
	struct ibv_pd *npd = (flags & IBV_REREG_MR_CHANGE_PD) ? pd : mr->pd;
	void *naddr = (flags & IBV_REREG_MR_CHANGE_TRANSLATION) ? addr : mr->addr;
	size_t nlen = (flags & IBV_REREG_MR_CHANGE_TRANSLATION) ? length : mr->length;
	unsigned nacc = (flags & IBV_REREG_MR_CHANGE_ACCESS) ? (unsigned)access : m->access;
	if (!npd || npd->context != mr->context)
		return IBV_REREG_MR_ERR_INPUT;
	struct ibv_mr *n = uv_reg(npd, naddr, nlen, (uint64_t)(uintptr_t)naddr, nacc);
	if (!n)
		return IBV_REREG_MR_ERR_INPUT;
	struct uv_mr *nm = uv_from(n, struct uv_mr, mr);
	struct uv_dev *d = uv_ctx_dev(mr->context);
	pthread_mutex_lock(&d->lock);
	int rc = mx5_mr_dereg(m->m);
	pthread_mutex_unlock(&d->lock);
	if (rc) {
		ibv_dereg_mr(n);
		return IBV_REREG_MR_ERR_CMD;
	}
	m->m = nm->m;
	m->access = nm->access;
	mr->pd = npd;
	mr->addr = naddr;
	mr->length = nlen;
	mr->lkey = n->lkey;
	mr->rkey = n->rkey;
	mr->handle = n->handle;
	free(nm);
	return 0;
}

/* ------------------------------------------------------------------ fork support */

/* Registered memory is pinned through the shim, and the process's own pages are what
 * the device reaches; after fork() the child must not touch the parent's regions (as
 * with the kernel's verbs).  Nothing needs arming for that here. */
static int uv_fork_inited;

UV_EXPORT int ibv_fork_init(void)
{
	uv_fork_inited = 1;
	return 0;
}

UV_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return uv_fork_inited ? IBV_FORK_ENABLED : IBV_FORK_DISABLED;
}

UV_EXPORT int ibv_dontfork_range(void *base, size_t size)
{
	(void)base; (void)size;
	return 0;
}

UV_EXPORT int ibv_dofork_range(void *base, size_t size)
{
	(void)base; (void)size;
	return 0;
}
