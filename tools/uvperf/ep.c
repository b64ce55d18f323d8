/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvperf: one side's verbs objects -- device, PD, one MR over all QPs' slots, CQs and RC
 * QPs -- and the RESET -> INIT -> RTR -> RTS walk (uvperf.h).  Standard verbs only. */
#include "tools/uvperf/uvperf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hw/platform/random.h"
#include "hw/platform/shm.h"

struct ibv_cq *up_ep_cq(struct up_ep *ep, unsigned q)
{
	return ep->shared_cq ? ep->cq[0] : ep->cq[q];
}

static const char *model_name(uint32_t part)
{
	switch (part) {
	case 4115: return "ConnectX-4";
	case 4117: return "ConnectX-4 Lx";
	case 4119: return "ConnectX-5";
	case 4121: return "ConnectX-5 Ex";
	case 4123: return "ConnectX-6";
	case 4125: return "ConnectX-6 Dx";
	case 4129: return "ConnectX-7";
	default: return "unknown part";
	}
}

static bool ep_shared_memory;

void up_ep_use_shared_memory(bool on)
{
	ep_shared_memory = on;
}

/* The buffer: page-aligned heap memory, or with --memfd a shared mapping of a
 * shared-memory object whose descriptor the endpoint holds. */
static int ep_buffer_alloc(struct up_ep *ep, size_t alloc)
{
	if (!ep_shared_memory)
		return posix_memalign((void **)&ep->buf, (size_t)sysconf(_SC_PAGESIZE), alloc) ? -ENOMEM : 0;
	int fd = plat_shm_create("uvperf-buffer", alloc);
	if (fd < 0)
		return fd;
	void *va = mmap(NULL, alloc, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (va == MAP_FAILED) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	ep->buf = va;
	ep->bufmap = alloc;
	ep->buf_fd = fd;
	return 0;
}

static void ep_buffer_free(struct up_ep *ep)
{
	if (!ep->bufmap) {
		free(ep->buf);
		return;
	}
	munmap(ep->buf, ep->bufmap);
	close(ep->buf_fd);
}

int up_ep_create(struct up_ep *ep, int index, unsigned nqps, int shared_cq, unsigned depth,
		 unsigned rx_depth, size_t bufsize, unsigned gid_index, char *err, size_t errlen)
{
	*ep = (struct up_ep){ .nqps = nqps, .shared_cq = shared_cq, .depth = depth, .rx_depth = rx_depth,
			      .bufsize = bufsize, .gid_index = gid_index, .buf_fd = -1 };

	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list || index >= n) {
		snprintf(err, errlen, "verbs device %d not found (%d device%s; set UVERBS_DEVICES or --device)",
			 index, n, n == 1 ? "" : "s");
		if (list)
			ibv_free_device_list(list);
		return -ENODEV;
	}
	snprintf(ep->name, sizeof(ep->name), "%s", ibv_get_device_name(list[index]));
	ep->ctx = ibv_open_device(list[index]);
	ibv_free_device_list(list);
	if (!ep->ctx) {
		snprintf(err, errlen, "ibv_open_device(%s): %s", ep->name, strerror(errno));
		return -ENODEV;
	}
	struct ibv_device_attr da;
	if (ibv_query_device(ep->ctx, &da)) {
		snprintf(err, errlen, "ibv_query_device(%s) failed", ep->name);
		return -EIO;
	}
	ep->part_id = da.vendor_part_id;
	snprintf(ep->model, sizeof(ep->model), "%s", model_name(da.vendor_part_id));
	snprintf(ep->fw, sizeof(ep->fw), "%s", da.fw_ver);
	ep->max_rd_atomic = da.max_qp_rd_atom > 16 ? 16 : (uint32_t)da.max_qp_rd_atom;
	if (!ep->max_rd_atomic)
		ep->max_rd_atomic = 1;
	if ((int)(depth > rx_depth ? depth : rx_depth) > da.max_qp_wr) {
		snprintf(err, errlen, "queue depth %u exceeds the device's max_qp_wr %d", depth > rx_depth ? depth : rx_depth,
			 da.max_qp_wr);
		return -EINVAL;
	}
	struct ibv_port_attr pa;
	if (ibv_query_port(ep->ctx, 1, &pa)) {
		snprintf(err, errlen, "ibv_query_port(%s, 1) failed", ep->name);
		return -EIO;
	}
	if (pa.state != IBV_PORT_ACTIVE) {
		snprintf(err, errlen, "%s port 1 is not ACTIVE (state %d)", ep->name, pa.state);
		return -ENETDOWN;
	}
	ep->active_mtu = pa.active_mtu;
	/* An index past the port's GIDs would only fail later, at RTR, with whatever errno
	 * the device's address-vector check gives: say what is wrong here.  The table has
	 * gid_tbl_len slots; the set ones are the GIDs (an unset slot reads ENODATA). */
	unsigned ngids = 0;
	int asked_set = 0;
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		struct ibv_gid_entry ge;
		if (!ibv_query_gid_ex(ep->ctx, 1, (uint32_t)i, &ge, 0)) {
			ngids++;
			asked_set |= (unsigned)i == gid_index;
		}
	}
	if (!asked_set) {
		snprintf(err, errlen, "GID index %u is beyond %s port 1's GID table of %u entr%s (uvinfo lists them)",
			 gid_index, ep->name, ngids, ngids == 1 ? "y" : "ies");
		return -EINVAL;
	}

	ep->pd = ibv_alloc_pd(ep->ctx);
	if (!ep->pd) {
		snprintf(err, errlen, "ibv_alloc_pd: %s", strerror(errno));
		return -ENOMEM;
	}
	ep->buflen = (size_t)nqps * bufsize;
	long pg = sysconf(_SC_PAGESIZE);
	size_t alloc = (ep->buflen + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	int arc = ep_buffer_alloc(ep, alloc);
	if (arc) {
		snprintf(err, errlen, "cannot allocate %zu bytes%s: %s", alloc, ep_shared_memory ? " of shared memory" : "",
			 strerror(-arc));
		return arc;
	}
	memset(ep->buf, 0, alloc);
	ep->mr = ibv_reg_mr(ep->pd, ep->buf, ep->buflen,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC);
	if (!ep->mr) {
		snprintf(err, errlen, "ibv_reg_mr(%zu bytes): %s", ep->buflen, strerror(errno));
		return -ENOMEM;
	}
	unsigned ncq = shared_cq ? 1 : nqps;
	/* A CQ carries the QP's send and receive completions. */
	unsigned cqe = (depth + rx_depth) * (shared_cq ? nqps : 1) + 16;
	for (unsigned i = 0; i < ncq; i++) {
		ep->cq[i] = ibv_create_cq(ep->ctx, (int)cqe, NULL, NULL, 0);
		if (!ep->cq[i]) {
			snprintf(err, errlen, "ibv_create_cq(%u): %s", cqe, strerror(errno));
			return -ENOMEM;
		}
	}
	uint32_t psn_seed = 0;
	if (plat_random(&psn_seed, sizeof(psn_seed)) < 0)
		psn_seed = (uint32_t)getpid() * 2654435761u;
	union ibv_gid gid;
	if (ibv_query_gid(ep->ctx, 1, (int)gid_index, &gid)) {
		snprintf(err, errlen, "ibv_query_gid(%s, port 1, index %u): %s", ep->name, gid_index, strerror(errno));
		return -EIO;
	}
	for (unsigned q = 0; q < nqps; q++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = up_ep_cq(ep, q),
			.recv_cq = up_ep_cq(ep, q),
			.cap = { .max_send_wr = depth, .max_recv_wr = rx_depth,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.qp_type = IBV_QPT_RC,
			.sq_sig_all = 0,
		};
		ep->qp[q] = ibv_create_qp(ep->pd, &ia);
		if (!ep->qp[q]) {
			snprintf(err, errlen, "ibv_create_qp(RC, depth %u/%u): %s", depth, rx_depth, strerror(errno));
			return -ENOMEM;
		}
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_INIT,
			.pkey_index = 0,
			.port_num = 1,
			.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
		};
		if (ibv_modify_qp(ep->qp[q], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						   IBV_QP_ACCESS_FLAGS)) {
			snprintf(err, errlen, "ibv_modify_qp(INIT): %s", strerror(errno));
			return -EIO;
		}
		struct up_qpinfo *li = &ep->local[q];
		li->qpn = ep->qp[q]->qp_num;
		li->psn = (psn_seed + q * 7919u) & 0xffffff;
		memcpy(li->gid, gid.raw, 16);
		li->addr = (uint64_t)(uintptr_t)(ep->buf + (size_t)q * bufsize);
		li->rkey = ep->mr->rkey;
		li->mtu = ep->active_mtu;
	}
	return 0;
}

int up_ep_connect(struct up_ep *ep, const struct up_qpinfo *remote, char *err, size_t errlen)
{
	for (unsigned q = 0; q < ep->nqps; q++) {
		const struct up_qpinfo *r = &remote[q];
		enum ibv_mtu mtu = r->mtu < (uint32_t)ep->active_mtu ? (enum ibv_mtu)r->mtu : ep->active_mtu;
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_RTR,
			.path_mtu = mtu,
			.dest_qp_num = r->qpn,
			.rq_psn = r->psn,
			.max_dest_rd_atomic = (uint8_t)ep->max_rd_atomic,
			.min_rnr_timer = 1,
			.ah_attr = {
				.is_global = 1,
				.port_num = 1,
				.grh = { .sgid_index = (uint8_t)ep->gid_index, .hop_limit = 64 },
			},
		};
		memcpy(a.ah_attr.grh.dgid.raw, r->gid, 16);
		if (ibv_modify_qp(ep->qp[q], &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
						   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
						   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
			snprintf(err, errlen, "ibv_modify_qp(RTR, QP 0x%x -> 0x%x): %s", ep->local[q].qpn, r->qpn,
				 strerror(errno));
			return -EIO;
		}
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;        /* infinite: a SEND waits for the receiver's repost */
		a.sq_psn = ep->local[q].psn;
		a.max_rd_atomic = (uint8_t)ep->max_rd_atomic;
		if (ibv_modify_qp(ep->qp[q], &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
						   IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)) {
			snprintf(err, errlen, "ibv_modify_qp(RTS): %s", strerror(errno));
			return -EIO;
		}
	}
	return 0;
}

int up_ep_post_recv(struct up_ep *ep, unsigned q, uint64_t n, uint32_t size, uint64_t slots)
{
	struct ibv_sge sge = {
		.addr = (uint64_t)(uintptr_t)(ep->buf + (size_t)q * ep->bufsize + (size_t)(n % slots) * size),
		.length = size,
		.lkey = ep->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = up_wr_id(q, n), .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad = NULL;
	return ibv_post_recv(ep->qp[q], &wr, &bad);
}

void up_ep_destroy(struct up_ep *ep)
{
	for (unsigned q = 0; q < UP_MAX_QPS; q++)
		if (ep->qp[q])
			ibv_destroy_qp(ep->qp[q]);
	for (unsigned q = 0; q < UP_MAX_QPS; q++)
		if (ep->cq[q])
			ibv_destroy_cq(ep->cq[q]);
	/* The buffer goes once no MR maps it: while the registration holds, the device may
	 * still write there (ibv_dereg_mr(3)); a failed deregistration leaks it instead. */
	if (!ep->mr || !ibv_dereg_mr(ep->mr))
		ep_buffer_free(ep);
	if (ep->pd)
		ibv_dealloc_pd(ep->pd);
	if (ep->ctx)
		ibv_close_device(ep->ctx);
	memset(ep, 0, sizeof(*ep));
}
