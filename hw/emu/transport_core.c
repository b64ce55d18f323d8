/* The data plane's device state (hw/emu/transport.h): created with the device (the
 * area's init registers the doorbell hooks and starts the device thread), per-QP
 * transport state made on first use and dropped at HCA teardown, counters and the
 * test API.  This area has no commands: it only uses the area registry's life-cycle
 * callbacks (README "Adding command handlers"). */
#define EMU_TP_INTERNAL
#include "hw/emu/transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hw/platform/notify.h"

struct emu_tp *emu_tp_get(struct emu_dev *d)
{
	void **slot = emu_area_state(d, "transport");

	return slot ? *slot : NULL;
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

static void tq_free(struct emu_tq *tq)
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
	tq->sq_prod = qp->sq_pi;
	tq->psn_next = tq->una = tq->rtx_mark = qp->next_send_psn & EMU_ROCE_PSN_MASK;
	tq->timer_at = 0;
	tq->rnr_at = 0;
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
		tq_free(tq);
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
		if (tq->ctx_sq_psn != qp->next_send_psn || (qp->sq_pi == 0 && tq->sq_prod != 0 && tq->head == tq->tail))
			tq_reset_req(tq);
		if (tq->ctx_rq_psn != qp->next_rcv_psn)
			tq_reset_resp(tq);
		if (qp->state != EMU_QP_ERR)
			tq->flushed = false;
	}
	tq->ctx_state = qp->state;
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

void emu_tp_app_sleeps(struct emu_tp *tp)
{
	__atomic_store_n(&tp->poll_seen, 0, __ATOMIC_RELAXED);
	if (__atomic_load_n(&tp->thr_deaf, __ATOMIC_RELAXED) && tp->wake_fd >= 0) {
		__atomic_store_n(&tp->thr_deaf, 0, __ATOMIC_RELAXED);
		if (plat_notify_signal(tp->wake_fd) < 0) {
			/* the counter is saturated: the thread wakes anyway */
		}
	}
}

static void tq_drop_all(struct emu_tp *tp)
{
	for (unsigned h = 0; h < 256; h++) {
		struct emu_tq *tq = tp->qtab[h], *next;

		for (; tq; tq = next) {
			next = tq->next;
			tq_free(tq);
		}
		tp->qtab[h] = NULL;
	}
	tp->nackq = 0;
}

/* A QP is about to be freed (DESTROY_QP, teardown, reset): its transport queue keeps a
 * pointer to it, so the queue goes first, with whatever it still held.  Other objects
 * are reached through their QP or looked up by number, never kept. */
static void tp_obj_gone(struct emu_dev *d, enum emu_obj_type type, void *obj)
{
	struct emu_tp *tp = emu_tp_get(d);

	if (!tp || type != EMU_OBJ_QP)
		return;
	/* the QP's bucket only: the table is keyed by qpn & 0xff (emu_tq_get) */
	for (struct emu_tq **pp = &tp->qtab[((struct emu_qp *)obj)->qpn & 0xff], *tq; (tq = *pp);) {
		if (tq->qp == obj) {
			*pp = tq->next;
			emu_resp_ack_now(tp, tq);
			tq_free(tq);
		} else {
			pp = &tq->next;
		}
	}
}

/* 2RST_QP: the QP's requester and responder state goes with it, requests in flight
 * included.  Guessing the reset later from the context (emu_tq_get) misses a QP taken
 * back to RTS with the same PSNs before any packet or doorbell: its old requests would
 * still be in flight behind the new ones. */
static void tp_qp_reset(struct emu_dev *d, void *qp)
{
	tp_obj_gone(d, EMU_OBJ_QP, qp);
}

/* 2ERR_QP (IBTA 10.3.1 Error state, C10-26): every outstanding WQE completes with a
 * flush error now, receive WQEs included, whether or not the QP ever moved a packet.
 * WQEs posted later flush too: sends at their doorbell (emu_sq_run), receives, which
 * have no doorbell, when the device thread's timers next read the QP's doorbell record
 * (emu_req_timers, at least every EMU_RX_IDLE_NS). */
static void tp_qp_error(struct emu_dev *d, void *obj)
{
	struct emu_tp *tp = emu_tp_get(d);
	struct emu_tq *tq = tp ? emu_tq_get(tp, obj) : NULL;

	if (tq)
		emu_qp_flush(tp, tq);
}

static int tp_init(struct emu_dev *d)
{
	void **slot = emu_area_state(d, "transport");
	struct emu_tp *tp;
	int rc, sz = 4 << 20;

	if (!slot)
		return -ENOENT;
	tp = calloc(1, sizeof(*tp));
	if (!tp)
		return -ENOMEM;
	tp->d = d;
	tp->wake_fd = -1;
	if (emu_roce_rx_batch_init(&tp->rxb)) {
		free(tp);
		return -ENOMEM;
	}
	tp->flt.rng = 0x9e3779b97f4a7c15ull ^ d->ipv4;
	*slot = tp;
	if (d->udp_fd >= 0) {
		/* Room for a window of full-MTU packets from several QPs and peers. */
		(void)setsockopt(d->udp_fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		(void)setsockopt(d->udp_fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		if (emu_roce_sock_init(&tp->sock, d->udp_fd, d->ipv4) == 0)
			tp->sock_ok = true;
	}
	rc = emu_sq_area_init(d);
	if (!rc)
		rc = emu_cqe_area_init(d);
	if (!rc && tp->sock_ok)
		rc = emu_rx_start(tp);
	if (rc) {
		if (tp->sock_ok)
			emu_roce_sock_fini(&tp->sock);
		emu_roce_rx_batch_fini(&tp->rxb);
		free(tp);
		*slot = NULL;
		return rc;
	}
	d->tp = tp;
	return 0;
}

static void tp_teardown(struct emu_dev *d)
{
	struct emu_tp *tp = emu_tp_get(d);

	if (tp) {
		emu_resp_flush_acks(tp, UINT64_MAX, NULL);   /* held ACKs leave before their QPs */
		tq_drop_all(tp);
	}
}

/* One line at close (UVERBS_LOG=info): what the wire did, so a slow or failing run
 * shows its retransmissions, RNR waits and drops without a debugger. */
static void tp_log_summary(struct emu_dev *d, const struct emu_tp *tp)
{
	const struct emu_tp_counters *c = &tp->ctr;
	uint64_t drops = 0, naks_sent = 0, naks_rcvd = 0;

	for (int i = 0; i < EMU_ROCE_DROP_NR; i++)
		drops += c->drops[i];
	for (int i = 0; i < 5; i++) {
		naks_sent += c->naks_sent[i];
		naks_rcvd += c->naks_rcvd[i];
	}
	emu_log(d, EMU_LOG_INFO,
		"wire: %llu packets sent, %llu received; %llu retransmitted, %llu ACK timeouts, "
		"NAKs %llu sent/%llu received, RNR NAKs %llu sent/%llu received (%llu waits), "
		"%llu duplicates, %llu dropped",
		(unsigned long long)c->tx_pkts, (unsigned long long)c->rx_pkts,
		(unsigned long long)c->retransmits, (unsigned long long)c->timeouts,
		(unsigned long long)naks_sent, (unsigned long long)naks_rcvd,
		(unsigned long long)c->rnr_naks_sent, (unsigned long long)c->rnr_naks_rcvd,
		(unsigned long long)c->rnr_waits, (unsigned long long)c->duplicates,
		(unsigned long long)drops);
}

static void tp_fini(struct emu_dev *d)
{
	struct emu_tp *tp = emu_tp_get(d);

	if (!tp)
		return;
	d->tp = NULL;
	emu_rx_stop(tp);
	tp_log_summary(d, tp);
	tq_drop_all(tp);
	emu_tp_faults_fini(tp);
	if (tp->sock_ok)
		emu_roce_sock_fini(&tp->sock);
	free(tp->ackq);
	free(tp->stage.buf);
	free(tp->rd_stage);
	emu_roce_rx_batch_fini(&tp->rxb);
	free(tp);
	*emu_area_state(d, "transport") = NULL;
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
		*out = tp->ctr;
		out->tx_calls = tp->sock.tx_calls;
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

const struct emu_cmd_area emu_area_transport = {
	.name = "transport", .cmds = NULL, .ncmds = 0,
	.init = tp_init, .teardown = tp_teardown, .fini = tp_fini, .obj_gone = tp_obj_gone,
	.qp_reset = tp_qp_reset, .qp_error = tp_qp_error,
};
