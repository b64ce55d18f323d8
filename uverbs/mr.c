/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Protection domains and memory regions (PRM ALLOC_PD, CREATE_MKEY through hw/mlx5).
 * The keys translate virtual addresses (iova = addr), which is what mx5_mr_reg makes;
 * a region at another IOVA, on-demand paging and dma-buf regions are not offered. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uverbs/uv.h"

UV_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	if (!context)
		return uv_null(EINVAL);
	struct uv_dev *d = uv_ctx_dev(context);
	struct uv_pd *p = calloc(1, sizeof(*p));
	if (!p)
		return uv_null(ENOMEM);
	pthread_mutex_lock(&d->lock);
	int rc = mx5_pd_alloc(d->mx5, &p->m);
	if (rc)
		rc = uv_err(d, rc, "ibv_alloc_pd");
	else
		uv_ctx(context)->npds++;
	pthread_mutex_unlock(&d->lock);
	if (rc) {
		free(p);
		return uv_null(rc);
	}
	p->pd.context = context;
	p->pd.handle = mx5_pd_num(p->m);
	return &p->pd;
}

static int uv_dealloc_pd_body(struct ibv_pd *pd)
{
	if (!pd)
		return EINVAL;
	struct uv_pd *p = uv_from(pd, struct uv_pd, pd);
	bool handled;
	struct uv_dev *d = uv_dev_lock(pd->context);
	unsigned ahs = p->ahs;
	pthread_mutex_unlock(&d->lock);
	if (ahs) {
		uv_log(UV_LOG_ERROR, "%s: ibv_dealloc_pd: %u address handles use it (EBUSY)", d->ibdev.name, ahs);
		return EBUSY;
	}
	int rc = uv_pd_dealloc_domain(p, &handled);   /* parent domains (domain.c) */
	if (handled)
		return rc;
	d = uv_dev_lock(pd->context);
	rc = mx5_pd_free(p->m);
	if (rc)
		rc = uv_err(d, rc, "ibv_dealloc_pd");  /* EBUSY while MRs/QPs/SRQs use it */
	else
		uv_ctx(pd->context)->npds--;
	pthread_mutex_unlock(&d->lock);
	if (!rc)
		free(p);
	return rc;
}

UV_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	return uv_errno(uv_dealloc_pd_body(pd));
}

/* Access flags hw/mlx5 programs; the optional ones (relaxed ordering, which a host
 * may ignore by the verbs definition) are accepted and have no effect. */
#define UV_ACCESS_KNOWN (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_RELAXED_ORDERING)
/* The access bits the verbs define below the optional range: through IBV_ACCESS_HUGETLB
 * (bit 7) in rdma-core 44's verbs.h, and the two flush bits after it that later
 * kernels and rdma-core define (IB_ACCESS_FLUSH_GLOBAL, IB_ACCESS_FLUSH_PERSISTENT). */
#define UV_ACCESS_DEFINED ((1u << 10) - 1)

/* The access bits both layers know, one row each: converted in either direction. */
static const struct {
	unsigned ibv, mx5;
} uv_access_map[] = {
	{ IBV_ACCESS_LOCAL_WRITE, MX5_ACCESS_LOCAL_WRITE },
	{ IBV_ACCESS_REMOTE_WRITE, MX5_ACCESS_REMOTE_WRITE },
	{ IBV_ACCESS_REMOTE_READ, MX5_ACCESS_REMOTE_READ },
	{ IBV_ACCESS_REMOTE_ATOMIC, MX5_ACCESS_REMOTE_ATOMIC },
};

static unsigned uv_access_convert(unsigned a, bool from_mx5)
{
	unsigned r = 0;

	for (size_t i = 0; i < sizeof(uv_access_map) / sizeof(uv_access_map[0]); i++)
		if (a & (from_mx5 ? uv_access_map[i].mx5 : uv_access_map[i].ibv))
			r |= from_mx5 ? uv_access_map[i].ibv : uv_access_map[i].mx5;
	return r;
}

unsigned uv_access_to_mx5(unsigned ibv_access) { return uv_access_convert(ibv_access, false); }
unsigned uv_access_from_mx5(unsigned mx5_access) { return uv_access_convert(mx5_access, true); }

/* Access bits an MR may not have (the optional range's dropped first by the caller,
 * relaxed ordering apart): EINVAL for a bit the verbs do not define, as Linux's
 * ib_check_mr_access (flags & ~IB_ACCESS_SUPPORTED) makes it; EOPNOTSUPP for one they
 * define but this driver lacks (memory windows, zero-based, huge pages, flush); EINVAL
 * for remote write or atomic without local write (IBTA 10.6.3.1, ibv_reg_mr(3)); 0. */
static int uv_access_refused(unsigned access)
{
	if (access & ~(UV_ACCESS_DEFINED | IBV_ACCESS_RELAXED_ORDERING))
		return EINVAL;
	if (access & ~(unsigned)UV_ACCESS_KNOWN)
		return EOPNOTSUPP;
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(access & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	return 0;
}

static struct ibv_mr *uv_reg(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			     unsigned access)
{
	if (!pd || !length)
		return uv_null(EINVAL);
	if (access & IBV_ACCESS_ON_DEMAND) {
		uv_unsupported("on-demand paging (IBV_ACCESS_ON_DEMAND)");
		return NULL;
	}
	/* a device may ignore the optional range's bits (verbs.h IBV_ACCESS_OPTIONAL_RANGE;
	 * relaxed ordering is one) */
	access &= ~(unsigned)IBV_ACCESS_OPTIONAL_RANGE | IBV_ACCESS_RELAXED_ORDERING;
	int refused = uv_access_refused(access);
	if (refused) {
		uv_log(UV_LOG_WARN, "ibv_reg_mr: access flags 0x%x refused (%s)", access,
		       refused == EOPNOTSUPP ? "EOPNOTSUPP: not supported" : "EINVAL");
		return uv_null(refused);
	}
	if (iova != (uint64_t)(uintptr_t)addr) {
		uv_unsupported("memory region at an IOVA other than its address (ibv_reg_mr_iova)");
		return NULL;
	}
	struct uv_pd *p = uv_from(pd, struct uv_pd, pd);
	struct uv_dev *d = uv_ctx_dev(pd->context);
	struct uv_mr *m = calloc(1, sizeof(*m));
	if (!m)
		return uv_null(ENOMEM);
	pthread_mutex_lock(&d->lock);
	int rc = mx5_mr_reg(p->m, addr, length, uv_access_to_mx5(access), &m->m);
	if (rc)
		rc = uv_err(d, rc, "ibv_reg_mr");
	pthread_mutex_unlock(&d->lock);
	if (rc) {
		free(m);
		return uv_null(rc);
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

static int uv_dereg_mr_body(struct ibv_mr *mr)
{
	if (!mr)
		return EINVAL;
	struct uv_mr *m = uv_from(mr, struct uv_mr, mr);
	struct uv_dev *d = uv_dev_lock(mr->context);
	int rc = mx5_mr_dereg(m->m);
	if (rc)
		rc = uv_err(d, rc, "ibv_dereg_mr");
	pthread_mutex_unlock(&d->lock);
	if (!rc)
		free(m);
	return rc;
}

UV_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	return uv_errno(uv_dereg_mr_body(mr));
}

/* ------------------------------------------------------------------ rereg by UMR */

void uv_umr_release(struct uv_dev *d)
{
	if (d->umr_qp)
		mx5_qp_destroy(d->umr_qp);
	if (d->umr_cq)
		mx5_cq_destroy(d->umr_cq);
	if (d->umr_pd)
		mx5_pd_free(d->umr_pd);
	d->umr_qp = NULL;
	d->umr_cq = NULL;
	d->umr_pd = NULL;
}

/* The QP UMR WQEs go through (hw/mlx5/umr.c): an RC QP of its own PD and CQ, connected
 * to itself through GID 0, as Linux mlx5_ib keeps one UMR QP per device.  Made on first
 * use, kept while the device is up.  d->lock held.  0 or a negative errno (a port
 * without a GID: the caller re-registers instead). */
static int uv_umr_qp(struct uv_dev *d)
{
	if (d->umr_qp)
		return 0;
	struct mx5_gid_entry g;
	int rc = mx5_gid_get(d->mx5, 1, 0, &g);
	if (rc || !g.valid)
		return rc ? rc : -ENOENT;
	struct mx5_cq_attr ca = { .cqe = 4 };
	rc = mx5_pd_alloc(d->mx5, &d->umr_pd);
	if (!rc)
		rc = mx5_cq_create(d->mx5, &ca, &d->umr_cq);
	struct mx5_qp_init_attr ia = { .type = MX5_QPT_RC, .send_cq = d->umr_cq, .recv_cq = d->umr_cq,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 1, .max_send_sge = 1,
						.max_recv_sge = 1 },
				       .fre = 1 };   /* UMR needs qpc.fre (hw/mlx5/qp_ctrl.c) */
	if (!rc)
		rc = mx5_qp_create(d->umr_pd, &ia, &d->umr_qp);
	struct mx5_qp_attr a = { .qp_state = MX5_QPS_INIT, .port_num = 1 };
	if (!rc)
		rc = mx5_qp_modify(d->umr_qp, &a, MX5_QP_STATE | MX5_QP_PKEY_INDEX | MX5_QP_PORT |
						   MX5_QP_ACCESS_FLAGS);
	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_RTR;
	a.path_mtu = 3;
	a.dest_qp_num = d->umr_qp ? mx5_qp_num(d->umr_qp) : 0;
	a.ah.sgid_index = 0;
	memcpy(a.ah.dgid, g.gid, 16);
	memcpy(a.ah.dmac, g.mac, 6);
	a.ah.hop_limit = 64;
	a.ah.port_num = 1;
	a.max_dest_rd_atomic = 1;
	if (!rc)
		rc = mx5_qp_modify(d->umr_qp, &a, MX5_QP_RTR_RC);
	a = (struct mx5_qp_attr){ .qp_state = MX5_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
				  .max_rd_atomic = 1 };
	if (!rc)
		rc = mx5_qp_modify(d->umr_qp, &a, MX5_QP_RTS_RC);
	if (rc) {
		uv_log(UV_LOG_INFO, "%s: no UMR QP (%s): ibv_rereg_mr re-registers", d->ibdev.name,
		       mx5_device_error(d->mx5));
		uv_umr_release(d);
	}
	return rc;
}

/* Access and/or PD changed in place, keys kept, as a real mlx5 does (Linux mlx5_ib
 * rereg_user_mr: umr_rereg_pd_access); rdma-core's tests/test_mr.py test_mr_rereg_access
 * keeps using the rkey it exchanged before.  0, or -errno to re-register instead. */
static int uv_rereg_in_place(struct uv_mr *m, int flags, struct ibv_pd *npd, unsigned nacc)
{
	struct uv_dev *d = uv_dev_lock(m->mr.context);
	/* through a device daemon no MKey takes UMR (tools/uvd/policy.c): no UMR QP */
	int rc = mx5_device_is_remote(d->mx5) ? -EOPNOTSUPP : uv_umr_qp(d);
	if (!rc)
		rc = mx5_mr_umr_rereg(m->m, d->umr_qp, d->umr_cq, uv_from(npd, struct uv_pd, pd)->m,
				      uv_access_to_mx5(nacc), (flags & IBV_REREG_MR_CHANGE_PD) != 0,
				      (flags & IBV_REREG_MR_CHANGE_ACCESS) != 0);
	if (rc && rc != -EOPNOTSUPP && rc != -ENOENT)
		uv_log(UV_LOG_INFO, "%s: ibv_rereg_mr in place: %s; re-registering", d->ibdev.name,
		       mx5_device_error(d->mx5));
	pthread_mutex_unlock(&d->lock);
	if (rc)
		return rc;
	m->access = nacc;
	m->mr.pd = npd;
	return 0;
}

/* ibv_rereg_mr(3): change translation, PD or access.  Without a new translation the
 * region changes in place and keeps its keys (uv_rereg_in_place); otherwise, or when
 * that is not possible, a new registration replaces the old one (the old one stays
 * valid if that fails) and the keys change, as ibv_rereg_mr(3) allows. */
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
	if (!(flags & IBV_REREG_MR_CHANGE_TRANSLATION)) {
		if ((flags & IBV_REREG_MR_CHANGE_ACCESS) && uv_access_refused(nacc))
			return IBV_REREG_MR_ERR_INPUT;
		if (uv_rereg_in_place(m, flags, npd, nacc) == 0)
			return 0;
	}
	struct ibv_mr *n = uv_reg(npd, naddr, nlen, (uint64_t)(uintptr_t)naddr, nacc);
	if (!n)
		return IBV_REREG_MR_ERR_INPUT;
	struct uv_mr *nm = uv_from(n, struct uv_mr, mr);
	struct uv_dev *d = uv_dev_lock(mr->context);
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
