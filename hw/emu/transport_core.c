/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The transport core (hw/emu/transport.h): the device's data-plane state and each QP's
 * transport state (made on first use, made afresh when the context says the QP was
 * reset or reconnected), the device thread's wake-up bookkeeping, counters and the test
 * API.  Both pipelines stand on it; it calls none of them (hw/emu/layers.txt).  Its life
 * cycle is the transport area's (transport_area.c). */
#define EMU_TP_INTERNAL
#include "hw/emu/transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hw/platform/notify.h"
#include "hw/platform/thread.h"

struct emu_tp *emu_tp_get(struct emu_dev *d)
{
	void **slot = emu_area_state(d, "transport");

	return slot ? *slot : NULL;
}

void emu_swqe_release(struct emu_swqe *w)
{
	free(w->inl_data);
	w->inl_data = NULL;
}

/* Release the send WQEs still in flight.  Only [head, tail) can hold anything: every
 * WQE that leaves the ring at head is released there (rc_req.c).  Walking only those
 * slots matters: the ring is 160 KiB, and touching all of it for a new QP cost a
 * millisecond of page faults on its first packet on a virtual machine. */
static void tq_release_inflight(struct emu_tq *tq)
{
	if (!tq->ring)
		return;
	for (uint32_t i = tq->head; i != tq->tail; i++)
		emu_swqe_release(&tq->ring[i % EMU_TP_SWQE_SLOTS]);
}

void emu_tq_free(struct emu_tq *tq)
{
	tq_release_inflight(tq);
	free(tq->ring);
	free(tq);
}

static void tq_reset_req(struct emu_tq *tq)
{
	struct emu_qp *qp = tq->qp;

	tq_release_inflight(tq);
	tq->head = tq->cur = tq->tail = 0;
	tq->sq_prod = qp->eng.sq_pi;
	tq->psn_next = tq->una = tq->rtx_mark = qp->next_send_psn & EMU_ROCE_PSN_MASK;
	tq->timer_at = 0;
	tq->rnr_at = 0;
	tq->rnr_probe = false;
	tq->retry_left = qp->retry_count;
	tq->rnr_left = qp->rnr_retry;
	tq->rd_out = 0;
	tq->last_rtx_ns = 0;
	tq->ctx_sq_psn = qp->next_send_psn;
}

static void tq_reset_resp(struct emu_tq *tq)
{
	struct emu_qp *qp = tq->qp;

	tq->epsn = qp->next_rcv_psn & EMU_ROCE_PSN_MASK;
	tq->msn = 0;
	tq->prev_op = -1;
	tq->nak_seq_sent = false;
	tq->rwqe_valid = false;
	tq->rcv_off = 0;
	tq->wr_left = 0;
	tq->ack_pending = false;
	tq->ack_sent_psn = (qp->next_rcv_psn - 1) & EMU_ROCE_PSN_MASK;
	memset(tq->res, 0, sizeof(tq->res));
	tq->res_next = 0;
	tq->uc_drop = false;
	tq->ctx_rq_psn = qp->next_rcv_psn;
}

void *emu_tp_doorbell_obj(struct emu_dev *d, const char *db, enum emu_obj_type t, uint32_t id, uint32_t uar_index)
{
	void *obj = emu_obj_get(d, t, id);
	const char *kind = t == EMU_OBJ_CQ ? "CQ" : "QP";
	uint32_t uar;

	if (!obj) {
		emu_drverr(d, "%s for %s 0x%x, which does not exist", db, kind, id);
		return NULL;
	}
	uar = t == EMU_OBJ_CQ ? ((struct emu_cq *)obj)->uar : ((struct emu_qp *)obj)->uar;
	if (uar != uar_index)
		emu_drverr(d, "%s for %s 0x%x through UAR %u, %s was created on UAR %u", db, kind, id, uar_index, kind,
			   uar);
	return obj;
}

/* The QP's transport state.  Requester and responder halves are made afresh when the
 * context says the QP was reset or re-connected: new context PSNs, or the hardware
 * counters (which only this engine advances) put back to zero by 2RST_QP. */
struct emu_tq *emu_tq_get(struct emu_tp *tp, struct emu_qp *qp)
{
	unsigned h = qp->qpn & 0xff;
	struct emu_tq *tq, **pp;

	for (pp = &tp->qtab[h]; (tq = *pp); pp = &tq->next)
		if (tq->qpn == qp->qpn)
			break;
	if (tq && tq->qp != qp) {
		*pp = tq->next;
		emu_tq_free(tq);
		tq = NULL;
	}
	if (!tq) {
		tq = calloc(1, sizeof(*tq));
		if (!tq)
			return NULL;
		tq->ring = calloc(EMU_TP_SWQE_SLOTS, sizeof(*tq->ring));
		if (!tq->ring) {
			free(tq);
			return NULL;
		}
		tq->qp = qp;
		tq->qpn = qp->qpn;
		tq->next = tp->qtab[h];
		tp->qtab[h] = tq;
		tq_reset_req(tq);
		tq_reset_resp(tq);
		tq->ctx_state = qp->state;
		return tq;
	}
	if (qp->state == EMU_QP_RST || qp->state == EMU_QP_INIT) {
		tq_reset_req(tq);
		tq_reset_resp(tq);
		tq->flushed = false;
	} else {
		if (tq->ctx_sq_psn != qp->next_send_psn || (qp->eng.sq_pi == 0 && tq->sq_prod != 0 && tq->head == tq->tail))
			tq_reset_req(tq);
		if (tq->ctx_rq_psn != qp->next_rcv_psn)
			tq_reset_resp(tq);
		if (qp->state != EMU_QP_ERR)
			tq->flushed = false;
	}
	tq->ctx_state = qp->state;
	return tq;
}

struct emu_tq *emu_tq_find(struct emu_tp *tp, const struct emu_qp *qp)
{
	struct emu_tq *tq = tp->qtab[qp->qpn & 0xff];

	while (tq && tq->qp != qp)
		tq = tq->next;
	return tq;
}

void emu_tp_foreach_tq(struct emu_tp *tp, void (*fn)(struct emu_tp *, struct emu_tq *, void *), void *arg)
{
	for (unsigned h = 0; h < 256; h++) {
		struct emu_tq *tq = tp->qtab[h], *next;

		for (; tq; tq = next) {
			next = tq->next;
			fn(tp, tq, arg);
		}
	}
}

void emu_tp_timer_kick(struct emu_tp *tp, uint64_t at)
{
	if (tp->wake_fd < 0 || !tp->wake_at || at >= tp->wake_at)
		return;
	tp->wake_at = at;
	if (plat_notify_signal(tp->wake_fd) < 0) {
		/* the counter is saturated: the thread wakes anyway */
	}
}

/* Every QP's transport state goes (HCA teardown, device close). */
void emu_tq_drop_all(struct emu_tp *tp)
{
	for (unsigned h = 0; h < 256; h++) {
		struct emu_tq *tq = tp->qtab[h], *next;

		for (; tq; tq = next) {
			next = tq->next;
			emu_tq_free(tq);
		}
		tp->qtab[h] = NULL;
	}
	tp->nackq = 0;
}

void emu_tp_counters(struct emu_dev *d, struct emu_tp_counters *out)
{
	struct emu_tp *tp;

	memset(out, 0, sizeof(*out));
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	tp = emu_tp_get(d);
	if (tp) {
		unsigned long long cpu = 0;

		*out = tp->ctr;
		out->tx_calls = tp->sock.tx_calls;
		out->tx_segmented = tp->sock.tx_segmented;
		if (tp->thr_running && plat_thread_cpu_ns(tp->thr, &cpu) == 0)
			out->device_thread_cpu_ns = cpu;
	}
	pthread_mutex_unlock(&d->lock);
}

int emu_tp_inject(struct emu_dev *d, uint32_t daddr, uint16_t sport, const void *pkt, size_t len)
{
	struct sockaddr_in sa;
	int fd, rc = 0;

	(void)sport;
	if (!d || !pkt)
		return -EINVAL;
	fd = d->udp_fd;
	if (fd < 0)
		return -ENOTCONN;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(EMU_ROCE_PORT);
	sa.sin_addr.s_addr = htonl(daddr);
	if (sendto(fd, pkt, len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		rc = -errno;
	return rc;
}

