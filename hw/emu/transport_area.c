/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The transport area (hw/emu/transport.h): the data plane's life cycle, on top of
 * everything it starts.  Init makes the device's data-plane state, registers the send
 * and CQ doorbell hooks and starts the device thread; teardown sends the ACKs still held
 * and drops every QP's transport state; QP reset, error and destruction reach the
 * transport through the area registry's callbacks (README "Adding command handlers").
 * This area has no commands.  The call order of the files below it: hw/emu/layers.txt. */
#define EMU_TP_INTERNAL
#include "hw/emu/transport.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

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
			emu_tq_free(tq);
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
	struct emu_tq *tq;

	if (d->dataplane_off)
		return;   /* the client's engine flushes its own queues (emu_dataplane_off) */
	tq = tp ? emu_tq_get(tp, obj) : NULL;
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
	tp->hold_fd = -1;
	tp->app_cpu = -1;
	tp->found_wait_credit = EMU_FOUND_WAIT_CREDITS;
	tp->found_keep_need = EMU_FOUND_KEEP_EARN;
	tp->ws_fd = -1;
	tp->ws_mc_fd = -1;
	pthread_mutex_init(&tp->watch_mu, NULL);
	if (emu_roce_rx_batch_init(&tp->rxb)) {
		pthread_mutex_destroy(&tp->watch_mu);
		free(tp);
		return -ENOMEM;
	}
	tp->flt.rng = 0x9e3779b97f4a7c15ull ^ d->ipv4;
	tp->hold_ns = d->cfg.poll_hold_us ? d->cfg.poll_hold_us * 1000ull : EMU_POLL_HOLD_NS;
	emu_tp_stage_init(tp);
	*slot = tp;
	if (d->cfg.wire_faults[0]) {
		struct emu_wire_faults wf = { 0 };
		int link_up = 1;

		/* The URI's wire faults, checked by emu_config_parse already. */
		if (emu_wire_faults_parse(d->cfg.wire_faults, &wf, &link_up) == 0 &&
		    emu_wire_faults_set(d, &wf) == 0)
			emu_wire_link_set(d, link_up);
	}
	if (d->udp_fd >= 0) {
		/* Room for a window of full-MTU packets from several QPs and peers. */
		(void)setsockopt(d->udp_fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		(void)setsockopt(d->udp_fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		if (emu_roce_sock_init(&tp->sock, d->udp_fd, d->ipv4) == 0)
			tp->sock_ok = true;
		if (d->cfg.gso_off)
			tp->sock.seg_off = true;
		/* from the first run that arrives (rx_thread.c rx_dispatch) */
		tp->gro_allowed = tp->sock_ok && !d->cfg.gro_off;
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
		pthread_mutex_destroy(&tp->watch_mu);
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
		emu_resp_flush_acks(tp);   /* pending ACKs leave before their QPs */
		emu_tq_drop_all(tp);
	}
}

/* Two lines at close (UVERBS_LOG=info): what the wire did, so a slow or failing run
 * shows its retransmissions, RNR waits and drops without a debugger, and how the
 * arrivals were taken (the device thread's wake-ups against the application's polls,
 * the holds, the waits for the device lock), which is where a slow ping-pong's time
 * goes on a machine with few CPUs (docs/architecture.md, "Progress whatever the
 * application does"). */
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
	/* three lines: a log message holds 512 bytes (hw/platform/log_level.h), and one
	 * line of all of these lost its last counters */
	emu_log(d, EMU_LOG_INFO,
		"device thread: %llu wake-ups for arrivals (%llu found them taken), %llu others, %llu holds off the socket "
		"(%llu ended by a found WRITE, %llu by the application stopping, %llu ran out, %llu renewed "
		"from the last call), %llu found WRITEs with the socket watched, %llu with sends outstanding, "
		"%llu hold re-arms (%llu switches kept the timer set, %llu firings found the socket watched), "
		"%llu watch switches refused",
		(unsigned long long)c->device_thread_wakeups, (unsigned long long)c->device_thread_idle_wakeups,
		(unsigned long long)__atomic_load_n(&c->device_thread_other_wakeups, __ATOMIC_RELAXED),
		(unsigned long long)c->device_thread_off_socket,
		(unsigned long long)__atomic_load_n(&c->hold_found, __ATOMIC_RELAXED),   /* added outside the lock */
		(unsigned long long)__atomic_load_n(&c->watch_back_stopped, __ATOMIC_RELAXED),
		(unsigned long long)__atomic_load_n(&c->hold_expiries, __ATOMIC_RELAXED),
		(unsigned long long)__atomic_load_n(&c->hold_renewed, __ATOMIC_RELAXED),
		(unsigned long long)c->hold_found_on_socket, (unsigned long long)c->found_with_sends_outstanding,
		(unsigned long long)__atomic_load_n(&c->hold_rearms, __ATOMIC_RELAXED),
		(unsigned long long)__atomic_load_n(&c->hold_timer_kept, __ATOMIC_RELAXED),
		(unsigned long long)__atomic_load_n(&c->hold_fired_watched, __ATOMIC_RELAXED),
		(unsigned long long)__atomic_load_n(&c->watch_errors, __ATOMIC_RELAXED));
	emu_log(d, EMU_LOG_INFO,
		"device thread: sends %llu calls (%llu packets in segmented datagrams); receives %llu calls "
		"(%llu coalesced datagrams); polls looked at the wire %llu times, took %llu packets; device lock "
		"slept for: host %llu, thread %llu; the thread took it %llu times, found it held %llu",
		(unsigned long long)tp->sock.tx_calls, (unsigned long long)tp->sock.tx_segmented,
		(unsigned long long)c->rx_calls, (unsigned long long)c->rx_coalesced,
		(unsigned long long)c->assist_polls, (unsigned long long)c->assist_pkts,
		(unsigned long long)d->ctr.host_lock_sleeps, (unsigned long long)d->ctr.thread_lock_sleeps,
		(unsigned long long)d->ctr.thread_lock_takes,
		(unsigned long long)__atomic_load_n(&d->ctr.thread_lock_busy, __ATOMIC_RELAXED));
	emu_log(d, EMU_LOG_INFO,
		"device thread: looks around found WRITEs took %llu packets (%llu waited for the answer, %llu got "
		"it; %llu kept the socket, %llu of them until the hold's end); passive spins %llu (moved off a "
		"polling CPU %llu, not begun there %llu); spins for the "
		"rest of a message %llu (%llu passes found packets, %llu moved off a stalled CPU); moves off its "
		"application's CPU %llu",
		(unsigned long long)c->found_look_pkts, (unsigned long long)c->found_waits,
		(unsigned long long)c->found_waits_answered, (unsigned long long)c->found_kept,
		(unsigned long long)__atomic_load_n(&c->found_kept_stalls, __ATOMIC_RELAXED),
		(unsigned long long)__atomic_load_n(&c->passive_spins, __ATOMIC_RELAXED),
		(unsigned long long)c->spin_moves, (unsigned long long)c->spins_skipped,
		(unsigned long long)c->msg_spins, (unsigned long long)c->msg_spin_passes,
		(unsigned long long)c->msg_spin_moves,
		(unsigned long long)__atomic_load_n(&c->device_thread_app_cpu_moves, __ATOMIC_RELAXED));
}

static void tp_fini(struct emu_dev *d)
{
	struct emu_tp *tp = emu_tp_get(d);

	if (!tp)
		return;
	d->tp = NULL;
	emu_rx_stop(tp);
	tp_log_summary(d, tp);
	emu_tq_drop_all(tp);
	emu_tp_faults_fini(tp);
	if (tp->sock_ok)
		emu_roce_sock_fini(&tp->sock);
	free(tp->ackq);
	free(tp->stage.buf);
	emu_roce_rx_batch_fini(&tp->rxb);
	pthread_mutex_destroy(&tp->watch_mu);
	free(tp);
	*emu_area_state(d, "transport") = NULL;
}

const struct emu_cmd_area emu_area_transport = {
	.name = "transport", .cmds = NULL, .ncmds = 0,
	.init = tp_init, .teardown = tp_teardown, .fini = tp_fini, .obj_gone = tp_obj_gone,
	.qp_reset = tp_qp_reset, .qp_error = tp_qp_error,
};
