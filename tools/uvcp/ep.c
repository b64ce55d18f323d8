/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvcp: one side's verbs objects (uvcp.h): devices picked by name as ibv_rc_pingpong's
 * -d does, RC QPs striped over them, one staging buffer of slots, a CQ and a completion
 * channel per device, and the three work requests the copy uses. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "uvcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* A port's GID for RoCE v2 routing: the first RoCE v2 entry holding an IPv4-mapped
 * address (::ffff:a.b.c.d, the form Linux's RoCE GID table and our devices give an
 * IPv4 interface), else the first RoCE v2 entry, else index 0.  A wrong choice fails
 * at RTR or silently goes nowhere, so --gid-index overrides it. */
static int pick_gid(struct ibv_context *ctx, int tbl_len)
{
	int v2 = -1;
	for (int i = 0; i < tbl_len; i++) {
		struct ibv_gid_entry e;
		if (ibv_query_gid_ex(ctx, 1, (uint32_t)i, &e, 0))
			continue;
		if (e.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
		if (!memcmp(e.gid.raw, mapped, 12))
			return i;
		if (v2 < 0)
			v2 = i;
	}
	return v2 >= 0 ? v2 : 0;
}

static int open_dev(struct uc_dev *d, struct ibv_device *dev, int gid, char *err, size_t errlen)
{
	snprintf(d->name, sizeof(d->name), "%s", ibv_get_device_name(dev));
	d->ctx = ibv_open_device(dev);
	if (!d->ctx) {
		snprintf(err, errlen, "cannot open device %s: %s", d->name, strerror(errno));
		return -ENODEV;
	}
	struct ibv_port_attr pa;
	if (ibv_query_port(d->ctx, 1, &pa)) {
		snprintf(err, errlen, "%s: cannot query port 1: %s", d->name, strerror(errno));
		return -EIO;
	}
	if (pa.state != IBV_PORT_ACTIVE) {
		snprintf(err, errlen, "%s port 1 is not active (state %d)", d->name, pa.state);
		return -ENETDOWN;
	}
	d->mtu = pa.active_mtu;
	if (gid >= 0) {
		union ibv_gid g;
		if (gid >= pa.gid_tbl_len || ibv_query_gid(d->ctx, 1, gid, &g)) {
			snprintf(err, errlen, "%s has no GID index %d", d->name, gid);
			return -EINVAL;
		}
		d->gid_index = (unsigned)gid;
	} else {
		d->gid_index = (unsigned)pick_gid(d->ctx, pa.gid_tbl_len);
	}
	d->pd = ibv_alloc_pd(d->ctx);
	d->ch = d->pd ? ibv_create_comp_channel(d->ctx) : NULL;
	if (!d->pd || !d->ch) {
		snprintf(err, errlen, "%s: cannot allocate a PD or completion channel: %s", d->name, strerror(errno));
		return -ENOMEM;
	}
	d->scratch = aligned_alloc(64, 64);
	if (!d->scratch) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	d->scratch_mr = ibv_reg_mr(d->pd, d->scratch, 64, IBV_ACCESS_LOCAL_WRITE);
	if (!d->scratch_mr) {
		snprintf(err, errlen, "%s: cannot register memory: %s", d->name, strerror(errno));
		return -ENOMEM;
	}
	return 0;
}

int uc_ep_open(struct uc_ep *ep, const char *const *names, unsigned nnames, int gid, unsigned nqps,
	       unsigned depth, unsigned chunk, int server, char *err, size_t errlen)
{
	memset(ep, 0, sizeof(*ep));
	ep->server = server;
	ep->nqps = nqps;
	ep->depth = depth;
	ep->slot_size = UC_HDR + (size_t)chunk;
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list || n <= 0) {
		snprintf(err, errlen, "no RDMA device found (set UVERBS_DEVICES, or load the kernel driver)");
		if (list)
			ibv_free_device_list(list);
		return -ENODEV;
	}
	int rc = 0;
	ep->ndev = nnames ? nnames : 1;
	for (unsigned i = 0; i < ep->ndev && !rc; i++) {
		struct ibv_device *dev = NULL;
		if (!nnames) {
			dev = list[0];
		} else {
			for (int k = 0; k < n; k++)
				if (!strcmp(ibv_get_device_name(list[k]), names[i]))
					dev = list[k];
			for (unsigned j = 0; j < i; j++)
				if (!strcmp(names[j], names[i])) {
					snprintf(err, errlen, "device %s given twice", names[i]);
					rc = -EINVAL;
				}
		}
		if (!rc && !dev) {
			char have[256] = "";
			for (int k = 0; k < n; k++)
				snprintf(have + strlen(have), sizeof(have) - strlen(have), "%s%s", k ? ", " : "",
					 ibv_get_device_name(list[k]));
			snprintf(err, errlen, "no RDMA device named '%s' (there are: %s)", names[i], have);
			rc = -ENODEV;
		}
		if (!rc)
			rc = open_dev(&ep->dev[i], dev, gid, err, errlen);
	}
	ibv_free_device_list(list);
	if (rc)
		return rc;

	long pg = sysconf(_SC_PAGESIZE);
	ep->buflen = ((size_t)nqps * depth * ep->slot_size + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	void *b = mmap(NULL, ep->buflen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED) {
		snprintf(err, errlen, "cannot allocate %zu bytes of staging buffer: %s", ep->buflen, strerror(errno));
		ep->buflen = 0;
		return -ENOMEM;
	}
	ep->buf = b;
	for (unsigned i = 0; i < ep->ndev; i++) {
		struct uc_dev *d = &ep->dev[i];
		/* One registration of the whole buffer per device: a QP's slots are reached
		 * through its own device's keys. */
		d->mr = ibv_reg_mr(d->pd, ep->buf, ep->buflen,
				   IBV_ACCESS_LOCAL_WRITE | (server ? IBV_ACCESS_REMOTE_WRITE : 0));
		if (!d->mr) {
			snprintf(err, errlen, "%s: cannot register %zu bytes: %s%s", d->name, ep->buflen, strerror(errno),
				 errno == ENOMEM || errno == EPERM ? " (RLIMIT_MEMLOCK? try fewer --qps, --depth or --chunk)" : "");
			return -ENOMEM;
		}
		unsigned myqps = 0;
		for (unsigned q = i; q < nqps; q += ep->ndev)
			myqps++;
		int cqe = (int)(myqps * (3 * depth) + 8);
		d->cq = ibv_create_cq(d->ctx, cqe, NULL, d->ch, 0);
		if (!d->cq) {
			snprintf(err, errlen, "%s: cannot create a CQ of %d: %s", d->name, cqe, strerror(errno));
			return -ENOMEM;
		}
	}
	uint32_t seed = (uint32_t)getpid() * 2654435761u ^ (uint32_t)time(NULL);
	for (unsigned q = 0; q < nqps; q++) {
		struct uc_qp *p = &ep->qp[q];
		p->dev = q % ep->ndev;
		struct uc_dev *d = &ep->dev[p->dev];
		p->slots = ep->buf + (size_t)q * depth * ep->slot_size;
		struct ibv_qp_init_attr ia = {
			.send_cq = d->cq, .recv_cq = d->cq,
			/* the client's writes (one a slot) and the server's acks (one a slot, the
			 * previous round's completions maybe not yet polled): twice the slots */
			.cap = { .max_send_wr = 2 * depth, .max_recv_wr = depth, .max_send_sge = 2, .max_recv_sge = 1 },
			.qp_type = IBV_QPT_RC,
		};
		p->qp = ibv_create_qp(d->pd, &ia);
		if (!p->qp) {
			snprintf(err, errlen, "%s: cannot create an RC QP of %u/%u WRs: %s", d->name, 2 * depth, depth,
				 strerror(errno));
			return -ENOMEM;
		}
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_INIT, .port_num = 1,
			.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | (server ? IBV_ACCESS_REMOTE_WRITE : 0),
		};
		if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
			snprintf(err, errlen, "%s: QP to INIT: %s", d->name, strerror(errno));
			return -EIO;
		}
		union ibv_gid g;
		if (ibv_query_gid(d->ctx, 1, (int)d->gid_index, &g)) {
			snprintf(err, errlen, "%s: cannot read GID %u", d->name, d->gid_index);
			return -EIO;
		}
		p->local.qpn = p->qp->qp_num;
		p->local.psn = (seed + q * 7919u) & 0xffffff;
		memcpy(p->local.gid, g.raw, 16);
		p->local.mtu = d->mtu;
		p->local.rkey = d->mr->rkey;
		p->local.addr = (uint64_t)(uintptr_t)p->slots;
		/* Receives go in before the peer can send (IBTA C9-226: a SEND or WRITE with
		 * immediate finding no receive is answered with RNR NAK). */
		for (unsigned s = 0; s < depth; s++)
			if (uc_ep_post_recv(ep, q, s)) {
				snprintf(err, errlen, "%s: cannot post a receive: %s", d->name, strerror(errno));
				return -EIO;
			}
	}
	return 0;
}

int uc_ep_connect(struct uc_ep *ep, char *err, size_t errlen)
{
	for (unsigned q = 0; q < ep->nqps; q++) {
		struct uc_qp *p = &ep->qp[q];
		struct uc_dev *d = &ep->dev[p->dev];
		enum ibv_mtu mtu = p->remote.mtu < (uint32_t)d->mtu ? (enum ibv_mtu)p->remote.mtu : d->mtu;
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_RTR, .path_mtu = mtu, .dest_qp_num = p->remote.qpn,
			.rq_psn = p->remote.psn, .max_dest_rd_atomic = 1, .min_rnr_timer = 12,
			.ah_attr = { .is_global = 1, .port_num = 1,
				     .grh = { .sgid_index = (uint8_t)d->gid_index, .hop_limit = 64 } },
		};
		memcpy(a.ah_attr.grh.dgid.raw, p->remote.gid, 16);
		if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
						  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
			snprintf(err, errlen, "%s: QP 0x%x to RTR (peer QP 0x%x): %s", d->name, p->local.qpn, p->remote.qpn,
				 strerror(errno));
			return -EIO;
		}
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		/* 4.096 us x 2^14 = 67 ms a try, 7 retries: a peer that is gone shows as
		 * RETRY_EXC_ERR in about half a second (IBTA 9.7.6.1.3, C9-140). */
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.sq_psn = p->local.psn;
		a.max_rd_atomic = 1;
		if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)) {
			snprintf(err, errlen, "%s: QP 0x%x to RTS: %s", d->name, p->local.qpn, strerror(errno));
			return -EIO;
		}
	}
	return 0;
}

void uc_ep_names(const struct uc_ep *ep, char *out, size_t len)
{
	out[0] = 0;
	for (unsigned i = 0; i < ep->ndev; i++)
		snprintf(out + strlen(out), len - strlen(out), "%s%s", i ? "," : "", ep->dev[i].name);
}

void uc_ep_close(struct uc_ep *ep)
{
	for (unsigned q = 0; q < UC_MAX_QPS; q++)
		if (ep->qp[q].qp)
			ibv_destroy_qp(ep->qp[q].qp);
	for (unsigned i = 0; i < UC_MAX_DEVS; i++) {
		struct uc_dev *d = &ep->dev[i];
		if (d->cq)
			ibv_destroy_cq(d->cq);
		if (d->mr)
			ibv_dereg_mr(d->mr);
		if (d->scratch_mr)
			ibv_dereg_mr(d->scratch_mr);
		free(d->scratch);
		if (d->ch)
			ibv_destroy_comp_channel(d->ch);
		if (d->pd)
			ibv_dealloc_pd(d->pd);
		if (d->ctx)
			ibv_close_device(d->ctx);
	}
	if (ep->buf)
		munmap(ep->buf, ep->buflen);
	memset(ep, 0, sizeof(*ep));
}

/* The receive's scatter entry points at a 64-byte scratch area: a WRITE_WITH_IMM puts
 * its data where its RETH says and only consumes the receive, and the acks are
 * zero-byte SENDs; nothing lands there. */
int uc_ep_post_recv(struct uc_ep *ep, unsigned q, unsigned s)
{
	struct uc_dev *d = &ep->dev[ep->qp[q].dev];
	struct ibv_sge sge = { .addr = (uintptr_t)d->scratch, .length = 64, .lkey = d->scratch_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = uc_wr_id(q, s), .sg_list = &sge, .num_sge = 1 }, *bad = NULL;
	return ibv_post_recv(ep->qp[q].qp, &wr, &bad);
}

int uc_ep_write(struct uc_ep *ep, unsigned q, unsigned s, uint32_t len)
{
	struct uc_qp *p = &ep->qp[q];
	struct uc_dev *d = &ep->dev[p->dev];
	struct ibv_sge sge = { .addr = (uintptr_t)uc_slot(ep, q, s), .length = UC_HDR + len, .lkey = d->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = uc_wr_id(q, s), .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(s),
		.wr.rdma = { .remote_addr = p->remote.addr + (uint64_t)s * ep->slot_size, .rkey = p->remote.rkey },
	}, *bad = NULL;
	int rc = ibv_post_send(p->qp, &wr, &bad);
	if (!rc)
		p->sq_out++;
	return rc;
}

/* The same WRITE_WITH_IMM, gathered from two places: the slot's header and the chunk's
 * data where it already is (a registered window of the source file's mapping, lkey on
 * this QP's device), so that the data is not copied into the slot first. */
int uc_ep_write_from(struct uc_ep *ep, unsigned q, unsigned s, uint32_t len, const void *data, uint32_t lkey)
{
	struct uc_qp *p = &ep->qp[q];
	struct uc_dev *d = &ep->dev[p->dev];
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)uc_slot(ep, q, s), .length = UC_HDR, .lkey = d->mr->lkey },
		{ .addr = (uintptr_t)data, .length = len, .lkey = lkey },
	};
	struct ibv_send_wr wr = {
		.wr_id = uc_wr_id(q, s), .sg_list = sge, .num_sge = len ? 2 : 1,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(s),
		.wr.rdma = { .remote_addr = p->remote.addr + (uint64_t)s * ep->slot_size, .rkey = p->remote.rkey },
	}, *bad = NULL;
	int rc = ibv_post_send(p->qp, &wr, &bad);
	if (!rc)
		p->sq_out++;
	return rc;
}

int uc_ep_ack(struct uc_ep *ep, unsigned q, unsigned s, unsigned verdict)
{
	struct uc_qp *p = &ep->qp[q];
	struct ibv_send_wr wr = {
		.wr_id = uc_wr_id(q, s), .sg_list = NULL, .num_sge = 0,
		.opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(uc_ack_imm(s, verdict)),
	}, *bad = NULL;
	int rc = ibv_post_send(p->qp, &wr, &bad);
	if (!rc)
		p->sq_out++;
	return rc;
}

int uc_ep_poll(struct uc_ep *ep, struct ibv_wc *wc, int max)
{
	int got = 0;
	for (unsigned i = 0; i < ep->ndev && got < max; i++) {
		int n = ibv_poll_cq(ep->dev[i].cq, max - got, wc + got);
		if (n < 0)
			return -EIO;
		got += n;
	}
	return got;
}

int uc_ep_wait(struct uc_ep *ep, int chan_fd, int wake_fd, int timeout_ms)
{
	struct pollfd pf[UC_MAX_DEVS + 2];
	/* Arm every CQ and return at once, so that the caller looks once more before
	 * sleeping: a completion that came before the arming raises no event
	 * (ibv_req_notify_cq(3)). */
	int armed_now = 0;
	for (unsigned i = 0; i < ep->ndev; i++) {
		if (!ep->dev[i].armed) {
			if (ibv_req_notify_cq(ep->dev[i].cq, 0))
				return -EIO;
			ep->dev[i].armed = 1;
			armed_now = 1;
		}
	}
	if (armed_now)
		return 0;
	unsigned n = 0;
	for (unsigned i = 0; i < ep->ndev; i++)
		pf[n++] = (struct pollfd){ .fd = ep->dev[i].ch->fd, .events = POLLIN };
	pf[n++] = (struct pollfd){ .fd = wake_fd, .events = POLLIN };   /* a negative fd is ignored */
	pf[n++] = (struct pollfd){ .fd = chan_fd, .events = POLLIN };
	int r = poll(pf, n, timeout_ms);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	for (unsigned i = 0; i < ep->ndev; i++) {
		if (pf[i].revents & POLLIN) {
			struct ibv_cq *cq;
			void *cctx;
			if (!ibv_get_cq_event(ep->dev[i].ch, &cq, &cctx)) {
				ibv_ack_cq_events(cq, 1);
				ep->dev[i].armed = 0;
			}
		}
	}
	return (pf[n - 1].revents & (POLLIN | POLLHUP | POLLERR)) ? 1 : 0;
}
