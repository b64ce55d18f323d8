/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The receive pipeline's two drivers (docs/architecture.md, "Progress whatever the
 * application does").  The device thread is the NIC: it sleeps in a wait set
 * (hw/platform/waitset.h) of the port's UDP socket, its wake notification and the hold
 * timer, takes every arrival it is woken for, and wakes for the nearest timer (ACK
 * timeout, RNR wait, held packet).  An application thread that polls an empty CQ takes
 * the arrivals first (emu_poll_assist, through the shim's poll-assist hook, on one
 * empty poll in EMU_ASSIST_EVERY), non-blocking; while it polls, the socket is not
 * watched (sock_watch.c: switched by the thread after a wake-up and by the
 * application's doorbells, found WRITEs and armed CQs, behind a deadline the polls
 * push), so the thread is never woken for nothing, and it watches the socket again
 * within EMU_POLL_HOLD_NS of the application stopping.  So a request to a
 * peer that spins on memory, blocks on a completion channel or is busy elsewhere is
 * served, and its ACK sent, without that peer calling the library.  The device thread
 * never transmits new work: that is the posting thread's, inside its doorbell.  Each
 * packet goes to rx_check.c (checks and dispatch); the timers to the requester and the
 * fault model. */
#define EMU_TP_INTERNAL
#include "hw/emu/transport.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hw/emu/cpu_hints.h"
#include "hw/platform/cpu.h"
#include "hw/platform/deadline.h"
#include "hw/platform/notify.h"
#include "hw/platform/thread.h"
#include "hw/platform/waitset.h"

#define EMU_RX_BATCH 64
#define EMU_RX_IDLE_NS 10000000ull   /* wake at least every 10 ms to look at timers */
/* After an arrival with no application polling, the device thread keeps looking at the
 * socket (non-blocking) this long before it blocks again: the next request of a
 * ping-pong whose responder is passive (ib_read_lat's server) then needs no wake-up. */
#define EMU_RX_SPIN_NS 50000ull

/* A coalescing socket costs every arrival a little: a 2-byte ib_send_lat went from
 * 4.70 to 4.99 us a half round trip (and a bare loopback UDP ping-pong from 2.25 to
 * 2.41), where a run of 64 KiB took a third less.  So the port's socket asks for it
 * only once a peer is seen sending runs: two datagrams of one length, at least
 * EMU_GRO_RUN_MIN bytes, from one address back to back in a batch (a peer whose runs
 * the kernel cut up, or one without segmentation).  Not shorter: a 2-byte SEND and an
 * ACK are 20 bytes each, and a ping-pong's batches hold both.  Best effort: without it
 * each packet of a run arrives on its own. */
#define EMU_GRO_RUN_MIN 512u

static void coalesce_once_runs_arrive(struct emu_tp *tp, const struct emu_roce_rx_batch *b)
{
	for (unsigned i = 1; i < b->n; i++)
		if (b->len[i] >= EMU_GRO_RUN_MIN && b->len[i] == b->len[i - 1] &&
		    b->env[i].saddr == b->env[i - 1].saddr) {
			tp->gro_allowed = false;
			if (emu_roce_sock_coalesce(&tp->sock) == 0)
				tp->ctr.rx_coalescing = 1;
			else
				emu_log(tp->d, EMU_LOG_DEBUG, "the port's socket does not coalesce arrivals");
			return;
		}
}

/* Hand each packet of a batch just received to the checks (rx_check.c): a datagram
 * is one packet, or a coalesced run of them (b->seg, emu_roce_sock_coalesce) taken in
 * the order they were sent.  A datagram too long for any RoCE packet is counted and
 * dropped.  How many packets. */
static unsigned rx_dispatch(struct emu_tp *tp, struct emu_roce_rx_batch *b)
{
	unsigned pkts = 0;

	tp->ctr.rx_calls++;
	if (tp->gro_allowed)
		coalesce_once_runs_arrive(tp, b);
	for (unsigned i = 0; i < b->n; i++) {
		size_t off = 0, len;
		uint8_t *pkt;

		if (b->len[i] > EMU_ROCE_MAX_PKT) {
			tp->ctr.rx_pkts++;
			tp->ctr.drops[EMU_ROCE_DROP_TOO_LONG]++;
			pkts++;
			continue;
		}
		if (b->seg[i] && b->seg[i] < b->len[i])
			tp->ctr.rx_coalesced++;
		while ((len = emu_roce_rx_next(b, i, &off, &pkt)) != 0) {
			emu_tp_rx_packet(tp, pkt, len, &b->env[i]);
			pkts++;
		}
	}
	return pkts;
}

/* Take up to EMU_RX_BATCH arrivals off the socket, non-blocking, EMU_ROCE_RX_BATCH a
 * system call; how many were handled.  A short batch means the socket is empty. */
static unsigned rx_batch(struct emu_tp *tp)
{
	struct emu_roce_rx_batch *b = &tp->rxb;
	unsigned n = 0;

	while (n < EMU_RX_BATCH) {
		int got = emu_roce_sock_recv_many(&tp->sock, b, MSG_DONTWAIT);

		if (got <= 0)
			break;
		n += rx_dispatch(tp, b);
		if (b->n < EMU_ROCE_RX_BATCH)
			break;
	}
	/* the multicast groups' sockets (cmd_mcg.c): with no group joined, a call that
	 * returns at once */
	while (n < EMU_RX_BATCH) {
		int got = emu_mcg_recv_many(tp->d, b);

		if (got <= 0)
			break;
		n += rx_dispatch(tp, b);
	}
	return n;
}

/* One receive pass under the device lock: the arrivals, then the ACKs they leave due,
 * every packet they make sent together at the end.  How many arrived. */
static unsigned rx_pass(struct emu_tp *tp, uint64_t now)
{
	unsigned n;

	emu_roce_sock_cork(&tp->sock);
	(void)now;
	n = rx_batch(tp);
	emu_resp_flush_acks(tp);   /* ACKs leave with the pass (rc_resp.c queue_ack) */
	emu_roce_sock_uncork(&tp->sock);
	return n;
}

/* Busy-poll the socket for EMU_RX_SPIN_NS after the last arrival, the lock taken only
 * to receive, while nothing asks the thread to stop -- only in a process whose
 * application is a passive responder, blocked or busy elsewhere: it has not polled or
 * posted on this device for EMU_RX_PASSIVE_NS, nor posted for EMU_RX_PASSIVE_POST_NS.
 * A real-time spinner beside an application that polls or spins on memory would take
 * the CPU it runs on, and such an application posts about once a round trip (perftest's
 * WRITE latency loop; a 1 MiB round trip here takes about 1 ms).  Only with more than
 * one CPU.  Until 2026-12-07 one bound of 10 ms covered polls and posts alike, and an
 * application that polls in short bursts a millisecond or two apart and posts nothing
 * never had a spinning responder: UCX's ucx_perftest server progresses its worker
 * about every 1.5 ms while the client's gets come every 5 us, so every READ woke the
 * device thread, on the idle CPU where a woken real-time thread stays (20-30 us a
 * wake-up on these virtual CPUs), and ucp_get took 29-44 us a get in every run against
 * 5.2-5.5 with polls bounded at 0.5 ms (docs/benchmarks.md, "2026-12-07, 04:00 UTC").
 * A spin is cut short by the application's next poll or post (poll_seen). */
#define EMU_RX_PASSIVE_NS 500000ull
#define EMU_RX_PASSIVE_POST_NS 10000000ull

/* A spin on the CPU where an application was polling a moment ago (it was preempted
 * by this thread's wake-up, hw/emu/cpu_hints.h) keeps that application off its CPU
 * until the spin ends, and it is most often the requester whose next packet the spin
 * waits for: ib_read_lat -s 2 with server and client pinned to one CPU took 141-155 us
 * a READ against 17-18 on two, and unpinned runs came out at 18 or 76-78 us by where
 * the device thread last ran (a waking real-time thread stays there).  So the thread
 * first moves to another CPU, or, when it may run on no other, does not spin.  (The
 * socket's SO_INCOMING_CPU, the sender's CPU on loopback, would say it directly, but
 * Linux keeps it only for connected UDP sockets, __udp_queue_rcv_skb.)  False: do not
 * spin. */
#define EMU_SPIN_POLLER_NS 20000ull

static bool spin_off_a_pollers_cpu(struct emu_tp *tp)
{
	int here = plat_current_cpu();

	if (!emu_cpu_hint_polled_recently(here, emu_now_ns(), EMU_SPIN_POLLER_NS))
		return true;
	if (plat_thread_leave_cpu(here) == 1) {
		tp->ctr.spin_moves++;
		return true;
	}
	tp->ctr.spins_skipped++;
	return false;
}

/* How many CPUs this machine has online: a spinner on one CPU only keeps what it
 * waits for from running. */
static long online_cpus(void)
{
	static long ncpu_cached;   /* every device thread of the process may fill it */
	long ncpu = __atomic_load_n(&ncpu_cached, __ATOMIC_RELAXED);

	if (!ncpu) {
		ncpu = plat_online_cpus();
		__atomic_store_n(&ncpu_cached, ncpu, __ATOMIC_RELAXED);
	}
	return ncpu;
}

/* One receive pass by a spinning device thread, if the device lock is free this
 * moment (a doorbell or a poll assist holds it for microseconds: the spin just looks
 * again); how many packets arrived. */
static unsigned rx_try_pass(struct emu_tp *tp)
{
	unsigned n;

	if (!emu_lock_try(tp->d))
		return 0;
	tp->wake_at = 0;   /* awake: a timer armed meanwhile needs no notification (prepared again after) */
	n = rx_pass(tp, 0);
	emu_unlock(tp->d);
	if (n)
		emu_found_verdict(tp, EMU_FOUND_THREAD_FIRST);
	return n;
}

/* Whether it spun (and so took the lock again). */
static bool rx_spin(struct emu_tp *tp)
{
	uint64_t now = emu_now_ns(), until = now + EMU_RX_SPIN_NS;
	uint64_t seen = __atomic_load_n(&tp->poll_seen, __ATOMIC_RELAXED);
	uint64_t posted = __atomic_load_n(&tp->post_seen, __ATOMIC_RELAXED);

	if (online_cpus() < 2 || (seen && now - seen < EMU_RX_PASSIVE_NS) ||
	    (posted && now - posted < EMU_RX_PASSIVE_POST_NS))
		return false;
	if (!spin_off_a_pollers_cpu(tp))
		return false;
	__atomic_fetch_add(&tp->ctr.passive_spins, 1, __ATOMIC_RELAXED);
	for (;;) {
		now = emu_now_ns();
		if (now >= until || __atomic_load_n(&tp->poll_seen, __ATOMIC_RELAXED) != seen ||
		    __atomic_load_n(&tp->stop, __ATOMIC_ACQUIRE))
			return true;
		if (rx_try_pass(tp))
			until = emu_now_ns() + EMU_RX_SPIN_NS;
	}
}

/* A receive pass that ended inside a message (its last packet a FIRST or MIDDLE): the
 * thread keeps taking arrivals, busy, until that message's last packet or until
 * EMU_RX_MSG_SPIN_NS pass with nothing new.  The sender's sendmmsg delivers a message's
 * packets over tens of microseconds (loopback hands each to the receiver inside the
 * sender's system call), and a thread that slept between them was woken for most of
 * them: a 64 KiB ib_write_lat at MTU 4096, 16 packets, took 7-17 wake-ups per message
 * and 90-220 us a half round trip.  An application that waits for this message cannot
 * go on before its last packet anyway (docs/benchmarks.md, "2026-12-06, 17:45 UTC").
 * But a real-time thread woken on the sender's own CPU keeps the sender from sending
 * while it spins: nothing comes, and every packet cost a wake-up and a whole spin
 * (20 WRITEs of 64 packets: 700-850 wake-ups).  So when nothing has come for
 * EMU_RX_MSG_STALL_NS the thread leaves this CPU once (plat_thread_leave_cpu, as
 * rx_spin does for a poller's CPU) and spins on from another, where the next wake-up
 * finds it too; when it cannot leave, it sleeps.  Only with more than one CPU. */
#define EMU_RX_MSG_SPIN_NS 20000ull
#define EMU_RX_MSG_STALL_NS 5000ull
/* ... and never longer in all, so that its timers (ACK timeouts, RNR waits) and its
 * wake notification are not left behind a stream whose passes never end on a LAST. */
#define EMU_RX_MSG_SPIN_MAX_NS 200000ull

/* A wake-up is cheapest on the waker's CPU: the woken real-time thread preempts the
 * sender as its system call returns, where any other CPU must first be interrupted.
 * The thread wakes where it last ran.  Found there on the CPU of its own application's
 * last doorbell -- an application that now spins on memory or polls there, while the
 * peer that sends to it runs elsewhere -- it moves once to another CPU, where its next
 * wake-up finds the peer.  Pinned by hand, Debian's ib_write_lat -s 2 between two
 * processes on 2 CPUs: 32.5-33.0 us a half round trip with each device thread on its
 * application's CPU, 19.9 on the other one; unpinned runs came out at either by where
 * the threads first ran (docs/benchmarks.md, "2026-12-07, 02:30 UTC").  Only with more
 * than one CPU, after the pass (the move is three system calls), and only after a
 * wake-up that took a short message (EMU_LEAVE_MAX_PKTS: one packet, perhaps an ACK):
 * on the sender's CPU a thread woken by the first packet of a long one preempts that
 * sender in the middle of its sendmmsg, then spins for packets that cannot come until
 * it moves off again (rx_finish_message); moving back at every wake-up, a 64 KiB
 * ib_write_lat took 74.5 us against 58, the thread moving twice a message. */
#define EMU_LEAVE_MAX_PKTS 2u

static void leave_the_applications_cpu(struct emu_tp *tp)
{
	int here;

	if (online_cpus() < 2)
		return;
	here = plat_current_cpu();
	if (here < 0 || here != __atomic_load_n(&tp->app_cpu, __ATOMIC_RELAXED))
		return;
	if (plat_thread_leave_cpu(here) == 1)
		__atomic_fetch_add(&tp->ctr.device_thread_app_cpu_moves, 1, __ATOMIC_RELAXED);
}

/* Whether it spun (and so took the lock again). */
static bool rx_finish_message(struct emu_tp *tp)
{
	uint64_t last = emu_now_ns(), end = last + EMU_RX_MSG_SPIN_MAX_NS;
	bool moved = false;

	if (online_cpus() < 2 || !__atomic_load_n(&tp->rx_mid_msg, __ATOMIC_RELAXED))
		return false;
	__atomic_fetch_add(&tp->ctr.msg_spins, 1, __ATOMIC_RELAXED);   /* outside the lock */
	while (__atomic_load_n(&tp->rx_mid_msg, __ATOMIC_RELAXED) && !__atomic_load_n(&tp->stop, __ATOMIC_ACQUIRE)) {
		uint64_t now = emu_now_ns();

		if (now - last >= EMU_RX_MSG_SPIN_NS || now >= end) {
			/* a message whose last packet was lost, or one of another QP: not
			 * waited for again until a packet says so */
			__atomic_store_n(&tp->rx_mid_msg, false, __ATOMIC_RELAXED);
			return true;
		}
		if (!moved && now - last >= EMU_RX_MSG_STALL_NS) {
			moved = true;
			if (plat_thread_leave_cpu(plat_current_cpu()) != 1)
				return true;   /* one CPU it may run on, or macOS (no affinity): sleep */
			__atomic_fetch_add(&tp->ctr.msg_spin_moves, 1, __ATOMIC_RELAXED);
		}
		if (rx_try_pass(tp)) {
			last = emu_now_ns();
			__atomic_fetch_add(&tp->ctr.msg_spin_passes, 1, __ATOMIC_RELAXED);   /* outside the lock */
		}
	}
	return true;
}

/* One receive pass in the application's thread, if the device lock is free this moment
 * (else the device thread or a doorbell is at work, and the application polls again);
 * how many packets it took. */
static unsigned app_look(struct emu_tp *tp, uint64_t now, bool assist)
{
	unsigned n;

	if (!emu_lock_try(tp->d))
		return 0;
	__atomic_fetch_add(&tp->app_in_call, 1, __ATOMIC_SEQ_CST);
	n = rx_pass(tp, now);
	__atomic_fetch_sub(&tp->app_in_call, 1, __ATOMIC_SEQ_CST);
	if (assist) {   /* an empty poll's look */
		tp->ctr.assist_polls++;
		tp->ctr.assist_pkts += n;
	} else {        /* a look around a found WRITE's switch (emu_poll_found) */
		tp->ctr.found_look_pkts += n;
	}
	emu_unlock(tp->d);
	return n;
}

/* An empty CQ poll.  One in EMU_ASSIST_EVERY looks at the wire (one recvmmsg, about
 * 300 ns here even when nothing is there); the others return at once, so an empty
 * ibv_poll_cq costs tens of nanoseconds, not a system call.  The count is per device
 * and not atomic: racing pollers only shift which poll looks.  Nothing waits on this:
 * the device thread takes whatever the skipped polls leave. */
void emu_poll_assist(struct emu_dev *d)
{
	struct emu_tp *tp = d ? d->tp : NULL;
	uint64_t now;
	unsigned n, brisk;

	if (!tp || !tp->sock_ok || !tp->rxb.slots)
		return;
	n = __atomic_load_n(&tp->assist_skip, __ATOMIC_RELAXED) + 1;
	__atomic_store_n(&tp->assist_skip, n, __ATOMIC_RELAXED);
	brisk = __atomic_load_n(&tp->assist_brisk, __ATOMIC_RELAXED);
	if (n % (brisk ? EMU_ASSIST_EVERY_BRISK : EMU_ASSIST_EVERY))
		return;
	if (brisk)
		__atomic_store_n(&tp->assist_brisk, brisk - 1, __ATOMIC_RELAXED);
	now = emu_now_ns();
	__atomic_store_n(&tp->poll_seen, now, __ATOMIC_RELAXED);
	emu_found_verdict(tp, EMU_FOUND_APP_FIRST);
	emu_cpu_hint_polled(now);
	emu_tp_hold(tp, now);
	n = app_look(tp, now, true);
	if (n)   /* the peer is talking: its next packet is most often close behind */
		__atomic_store_n(&tp->assist_brisk, EMU_ASSIST_BRISK_LOOKS, __ATOMIC_RELAXED);
	/* ACKs that open the send window make the pass send the window's worth: 48-64
	 * packets took 180-230 us at MTU 1024 beside the peer's device thread, and the hold
	 * pushed before the pass lapsed under a poller that had not stopped */
	if (n)
		emu_tp_app_done(tp);
}

/* Whether QP qpn has signalled sends the application will poll for (the device lock
 * taken if free; busy, as if none). */
static bool sends_outstanding(struct emu_tp *tp, uint32_t qpn)
{
	struct emu_qp *qp;
	struct emu_tq *tq;
	bool busy = false;

	if (!emu_lock_try(tp->d))
		return false;
	qp = emu_obj_get(tp->d, EMU_OBJ_QP, qpn);
	tq = qp ? emu_tq_find(tp, qp) : NULL;
	if (tq && emu_req_signalled_outstanding(tq)) {
		busy = true;
		tp->ctr.found_with_sends_outstanding++;
	}
	emu_unlock(tp->d);
	return busy;
}

/* A request arrived since the application's last post (rx_requests, whoever took it). */
static bool request_since_post(struct emu_tp *tp)
{
	return __atomic_load_n(&tp->rx_requests, __ATOMIC_RELAXED) !=
	       __atomic_load_n(&tp->requests_at_post, __ATOMIC_RELAXED);
}

static bool found_wait_earned(struct emu_tp *tp)
{
	unsigned credit = __atomic_load_n(&tp->found_wait_credit, __ATOMIC_RELAXED);
	unsigned skips;

	if (online_cpus() < 2)
		return false;   /* the peer could not answer while this thread spins */
	if (request_since_post(tp))
		return false;   /* most often the answer, taken with the ACK */
	if (credit)
		return true;
	skips = __atomic_load_n(&tp->found_wait_skips, __ATOMIC_RELAXED) + 1;
	__atomic_store_n(&tp->found_wait_skips, skips, __ATOMIC_RELAXED);
	return skips % EMU_FOUND_WAIT_PROBE == 0;
}

/* Look at the wire until a look takes packets that leave no message half in, a request
 * arrives by another way (the device thread, another thread's poll), the socket is
 * watched again, or the wait's time has passed: EMU_FOUND_WAIT_NS, or twice what the
 * WRITE took from the application's last doorbell to this poll, up to
 * EMU_FOUND_WAIT_MAX_NS (transport.h says why).  Only a request earns the next waits
 * (an ACK of another QP is not the answer); a wait that saw none spends one
 * (EMU_FOUND_WAIT_CREDITS).  rx_mid_msg is the device's: a message of another QP half
 * in, or one whose last packet was lost, keeps the wait to its time at worst.  Cutting
 * the wait at a 20 us gap between packets instead (as rx_finish_message does) cost
 * ib_write_lat -s 65536 at MTU 1024 30 us a half round trip (106-108 -> 138-139): the
 * answer's 64 packets came with longer gaps (docs/benchmarks.md, "2026-12-07, 15:25
 * UTC").  When it ended. */
static uint64_t found_wait(struct emu_tp *tp, uint64_t start)
{
	uint64_t now = start, posted = __atomic_load_n(&tp->post_seen, __ATOMIC_RELAXED);
	uint64_t limit = start > posted ? 2 * (start - posted) : 0;   /* twice what the WRITE took */
	unsigned credit = __atomic_load_n(&tp->found_wait_credit, __ATOMIC_RELAXED);
	bool answered;

	if (limit < EMU_FOUND_WAIT_NS)
		limit = EMU_FOUND_WAIT_NS;
	else if (limit > EMU_FOUND_WAIT_MAX_NS)
		limit = EMU_FOUND_WAIT_MAX_NS;
	__atomic_fetch_add(&tp->ctr.found_waits, 1, __ATOMIC_RELAXED);
	while (!__atomic_load_n(&tp->stop, __ATOMIC_ACQUIRE) && now - start < limit &&
	       (!request_since_post(tp) || __atomic_load_n(&tp->rx_mid_msg, __ATOMIC_RELAXED)) &&
	       __atomic_load_n(&tp->thr_off, __ATOMIC_RELAXED)) {
		if (app_look(tp, now, false) && !__atomic_load_n(&tp->rx_mid_msg, __ATOMIC_RELAXED))
			break;
		plat_spin_pause();
		now = emu_now_ns();
	}
	answered = request_since_post(tp);
	if (answered) {
		__atomic_fetch_add(&tp->ctr.found_waits_answered, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&tp->found_wait_credit, EMU_FOUND_WAIT_CREDITS, __ATOMIC_RELAXED);
	} else if (credit) {
		__atomic_store_n(&tp->found_wait_credit, credit - 1, __ATOMIC_RELAXED);
	}
	return now;
}

/* transport.h EMU_FOUND_KEEP_EARN: keeping is earned (sock_watch.c, emu_found_verdict). */
static bool found_keep_earned(struct emu_tp *tp)
{
	return __atomic_load_n(&tp->found_keep_score, __ATOMIC_RELAXED) >=
	       __atomic_load_n(&tp->found_keep_need, __ATOMIC_RELAXED);
}

/* A CQ poll returned an RDMA WRITE's completion (the driver's mx5_poll_found): the
 * application got what it waited for and may now wait for the peer's answer by
 * watching memory, as perftest's ib_write_lat does (run_iter_lat_write: post, poll the
 * send CQ until the WRITE completes, spin on the receive buffer), and only the device
 * thread can place that answer.  So the thread watches the socket again from now
 * (sock_watch.c), without being woken for it; an application that polls on takes it
 * off again with its next doorbell, or the thread does after its next wake-up.  A
 * poll while the socket is watched costs one store and one count.  Unless the answer
 * is in hand already and keeping the socket has been earned (EMU_FOUND_KEEP_EARN): the
 * switch only delays the next post then.
 * Not while the socket is left to the polls and the QP has signalled sends
 * outstanding: the application will poll for them, as a bandwidth loop does
 * (ib_write_bw keeps 128 WRITEs posted); the socket watched after each of its found
 * WRITEs woke the device thread for the next ACK, and its next doorbell left the
 * socket again (ib_write_bw 64 KiB: 1,233 of 1,267 holds ended so, 6,682 wake-ups in
 * 20,000 messages; docs/benchmarks.md, "2026-12-06, 20:00 UTC").
 * Around the switch this thread looks at the wire once before and once after
 * (app_look, about 0.3 us each when nothing is there).  The peer's answer is often on
 * its way already: its application saw our WRITE placed while its device thread was
 * still sending the ACK this poll took, and posted at once.  Waiting in the socket,
 * it made the switch (an EPOLL_CTL_MOD that finds the socket readable) wake the
 * device thread, most often on the other CPU (rx_thread.c, leave_the_applications_cpu):
 * a wake-up there took about 20 us on these virtual CPUs (perf sched timehist), on the
 * round trip's critical path.  Taken here, it is placed before the application starts
 * to watch memory.  Debian's ib_write_lat -s 2: 21.7-22.3 us a half round trip before,
 * 9.6-10.9 after (docs/benchmarks.md, "2026-12-07, 04:45 UTC").
 * When the first look finds nothing, the poll waits for the answer a few microseconds
 * more (EMU_FOUND_WAIT_NS; after a WRITE that took long, twice what it took, up to
 * EMU_FOUND_WAIT_MAX_NS), if such waits have been answered of late (found_wait): the
 * peer's ACK, which completed this WRITE, left before its application saw our WRITE,
 * so the answer is most often one doorbell behind it.  Not when a request arrived
 * since the application's last post: a look of its polls took the answer with the ACK,
 * and a wait would hold the application back from answering it in turn (both sides of
 * ib_write_lat then waited for each other, 17% of the waits).  The device thread was
 * woken for 46% of ib_write_lat's WRITEs without the wait, 1.3-1.8% with it.  Each look
 * takes the device lock by a trylock for one receive pass, so another thread's doorbell
 * or the device thread may spin a moment for it meanwhile. */
void emu_poll_found(struct emu_dev *d, uint32_t qpn)
{
	struct emu_tp *tp = d ? d->tp : NULL;
	uint64_t now;

	if (!tp)
		return;
	emu_found_verdict(tp, EMU_FOUND_APP_FIRST);   /* the application called again */
	if (__atomic_load_n(&tp->thr_off, __ATOMIC_RELAXED) && sends_outstanding(tp, qpn))
		return;
	now = emu_now_ns();
	/* arrived already, or due within the wait (found_wait): placed here */
	if (__atomic_load_n(&tp->thr_off, __ATOMIC_RELAXED) && !app_look(tp, now, false) &&
	    found_wait_earned(tp))
		now = found_wait(tp, now);
	/* the answer in hand, whole: the socket stays with the polls, if that has been earned */
	if (__atomic_load_n(&tp->thr_off, __ATOMIC_RELAXED) && request_since_post(tp) &&
	    !__atomic_load_n(&tp->rx_mid_msg, __ATOMIC_RELAXED)) {
		bool keep = found_keep_earned(tp);

		__atomic_store_n(&tp->found_judged, keep ? EMU_FOUND_KEPT : EMU_FOUND_SWITCHED, __ATOMIC_RELAXED);
		if (keep) {
			__atomic_fetch_add(&tp->ctr.found_kept, 1, __ATOMIC_RELAXED);
			return;
		}
	}
	__atomic_store_n(&tp->found_at, now, __ATOMIC_SEQ_CST);   /* before thr_off: see emu_tp_watch_update */
	if (__atomic_load_n(&tp->thr_off, __ATOMIC_SEQ_CST)) {
		(void)emu_tp_watch_update(tp, now, true);
		/* arrived in between: the switch found the socket readable and woke the thread */
		(void)app_look(tp, now, false);
	} else
		__atomic_fetch_add(&tp->ctr.hold_found_on_socket, 1, __ATOMIC_RELAXED);   /* not under the lock */
}

static void timers_one(struct emu_tp *tp, struct emu_tq *tq, void *arg)
{
	uint64_t *a = arg;

	emu_req_timers(tp, tq, a[0], &a[1]);
}

/* Take the device lock, giving up when asked to stop (emu_destroy holds the lock while
 * it stops this thread).  The holder is a posting thread inside a doorbell or a poll
 * assist, for microseconds, most often on the other CPU: spin first, up to
 * EMU_THREAD_LOCK_SPIN_NS, then block.  The lock does not lend this thread's real-time
 * priority to the holder (device.c says why), and napping instead of blocking was
 * worse: each nap's end preempts a holder on this CPU again (a 64 KiB ib_write_lat
 * went from 0.3-0.5 ms to 4 ms a round trip). */
#define EMU_THREAD_LOCK_SPIN_NS 20000ull

static bool lock_or_stop(struct emu_tp *tp)
{
	bool taken = emu_lock_try(tp->d), busy = !taken;

	if (busy)
		taken = !__atomic_load_n(&tp->stop, __ATOMIC_ACQUIRE) && emu_lock_spin(tp->d, EMU_THREAD_LOCK_SPIN_NS);
	if (taken) {
		if (!__atomic_load_n(&tp->stop, __ATOMIC_ACQUIRE)) {
			tp->d->ctr.thread_lock_takes++;
			tp->d->ctr.thread_lock_busy += busy;
			return true;
		}
		emu_unlock(tp->d);
		return false;
	}
	for (;;) {
		struct timespec ts;

		if (__atomic_load_n(&tp->stop, __ATOMIC_ACQUIRE))
			return false;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		int rc = plat_mutex_timedlock(&tp->d->lock, &ts);
		if (rc == 0) {
			if (__atomic_load_n(&tp->stop, __ATOMIC_ACQUIRE)) {
				emu_unlock(tp->d);
				return false;
			}
			__atomic_store_n(&tp->d->lock_cpu, plat_current_cpu(), __ATOMIC_RELAXED);
			tp->d->ctr.thread_lock_sleeps++;
			tp->d->ctr.thread_lock_takes++;
			tp->d->ctr.thread_lock_busy++;
			return true;
		}
		if (rc != ETIMEDOUT) {
			/* never expected; a real-time thread must not retry it in a tight loop */
			struct timespec pause = { 0, 1000000 };

			emu_log(tp->d, EMU_LOG_ERROR, "device thread: locking the device failed (%s)", strerror(rc));
			nanosleep(&pause, NULL);
		}
	}
}

/* Hardware runs beside the host CPUs, never behind them.  On a machine with fewer
 * cores than busy-polling threads (two processes each spinning on a CQ, two device
 * threads) a SCHED_OTHER device thread woken by an arrival waits for a spinner's time
 * slice: milliseconds per message (ibv_rc_pingpong -s 4096 without -e measured 0.4 to
 * 4 ms per iteration on 2 CPUs, 70 to 100 us with this).  So the device thread asks
 * for SCHED_FIFO at the lowest real-time priority: it preempts a spinner the moment a
 * packet arrives, and gives the CPU back as soon as it blocks again.  It only ever
 * runs for arrivals and timers, and the kernel's RT throttling (95% by default) bounds
 * it anyway.  Its priority is 1, or the creating thread's if that is real-time and
 * higher.  Without the privilege (RLIMIT_RTPRIO 0, no CAP_SYS_NICE) it stays
 * SCHED_OTHER; sched=normal in the emu: URI puts it there on purpose, whatever the
 * creator runs. */
static void device_thread_sched(struct emu_tp *tp)
{
	struct sched_param sp = { .sched_priority = 0 };
	int policy = SCHED_OTHER, rc;

	/* The thread starts with its creator's policy: say which one it runs, always. */
	if (tp->d->cfg.sched_normal) {
		rc = plat_thread_set_normal();
		if (rc)
			emu_log(tp->d, EMU_LOG_WARN, "device thread: SCHED_OTHER refused (%s)", strerror(-rc));
		return;
	}
	/* Above a real-time creator: a spinner at its own priority would starve us (SCHED_FIFO
	 * never preempts at equal priority; measured: a WRITE ping-pong under chrt -f 1
	 * stalled for good). */
	if (pthread_getschedparam(pthread_self(), &policy, &sp) != 0 ||
	    (policy != SCHED_FIFO && policy != SCHED_RR) || sp.sched_priority < 1)
		sp.sched_priority = 1;
	else if (sp.sched_priority < sched_get_priority_max(SCHED_FIFO))
		sp.sched_priority++;
	rc = plat_thread_set_realtime(sp.sched_priority);
	if (rc == 0)
		__atomic_store_n(&tp->ctr.device_thread_fifo, 1, __ATOMIC_RELAXED);
	else
		emu_log(tp->d, EMU_LOG_DEBUG, "device thread stays SCHED_OTHER: SCHED_FIFO refused (%s)",
			strerror(-rc));
}

/* The multicast groups' set joins the wait set once it exists, watched as the socket
 * is (under the watch lock, so that a switch in between cannot be lost). */
static void watch_groups(struct emu_tp *tp, int mc_fd)
{
	bool on;

	if (mc_fd < 0 || mc_fd == tp->ws_mc_fd)
		return;
	pthread_mutex_lock(&tp->watch_mu);
	on = emu_tp_groups_watched(tp, !__atomic_load_n(&tp->thr_off, __ATOMIC_RELAXED));
	if (plat_waitset_add(tp->ws_fd, mc_fd, EMU_WS_MCG, on) == 0) {
		tp->ws_mc_fd = mc_fd;
		tp->ws_mc_watched = on;
	} else
		__atomic_fetch_add(&tp->ctr.watch_errors, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&tp->watch_mu);
}

/* Before the thread sleeps, under the device lock: due timers, ACKs left over, the
 * watch on the socket and the groups' set; when it must wake (ns, CLOCK_MONOTONIC). */
static uint64_t prepare_sleep(struct emu_tp *tp)
{
	uint64_t a[2], now = emu_now_ns();

	a[0] = now;
	a[1] = now + EMU_RX_IDLE_NS;
	emu_tp_foreach_tq(tp, timers_one, a);
	emu_tp_faults_timer(tp, now, &a[1]);
	emu_resp_flush_acks(tp);
	/* the socket, unless an application polls this very moment: then the hold
	 * timer instead, which its polls keep pushing ahead (EMU_POLL_HOLD_NS) */
	(void)emu_tp_watch_update(tp, now, false);
	watch_groups(tp, emu_mcg_fd(tp->d));
	tp->wake_at = a[1];
	return a[1];
}

/* The thread's loop.  A wake-up's receive pass and the next sleep's preparation share
 * one hold of the device lock: taken again after the pass, it was often held by the
 * doorbell of this device's own application, which the pass had just let answer, and
 * the thread spun for it on the CPU it was woken on.  Only a spin that took the lock
 * again (rx_finish_message, rx_spin) needs the preparation again. */
static void *rx_main(void *arg)
{
	struct emu_tp *tp = arg;
	struct emu_dev *d = tp->d;
	uint64_t wake = 0;
	bool prepared = false;

	plat_thread_set_name(EMU_DEVICE_THREAD_NAME);   /* for top -H, ps -L, gdb */
	device_thread_sched(tp);
	for (;;) {
		uint64_t now;
		uint32_t ready = 0;
		unsigned got;
		int n;

		if (!prepared) {
			if (!lock_or_stop(tp))
				break;
			wake = prepare_sleep(tp);
			emu_unlock(d);
		}
		prepared = false;
		now = emu_now_ns();
		n = plat_waitset_wait(tp->ws_fd, wake > now ? wake - now : 0, &ready);
		if (n < 0 && n != -EINTR) {
			emu_log(d, EMU_LOG_ERROR, "device thread: waiting for the socket failed (%s); it stops, and "
				"arrivals are taken only by the application's polls", strerror(-n));
			break;
		}
		if (n <= 0) {
			/* its timers' time (EMU_RX_IDLE_NS at the latest), or a signal */
			__atomic_fetch_add(&tp->ctr.device_thread_other_wakeups, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (ready & EMU_WS_WAKE) {
			if (plat_notify_read(tp->wake_fd, NULL) < 0) {
				/* nothing to drain */
			}
		}
		/* the application stopped: off again only once it polls again.  A timer a
		 * racing poll armed after the socket was watched again says nothing. */
		if ((ready & EMU_WS_HOLD) && plat_deadline_take(tp->hold_fd)) {
			/* fired: no timer set now (an arm since would have reset the expiry) */
			__atomic_store_n(&tp->timer_at, 0, __ATOMIC_RELAXED);
			if (__atomic_load_n(&tp->thr_off, __ATOMIC_RELAXED))
				emu_tp_hold_fired(tp);
			else   /* kept past the switch back (sock_watch.c): a wake-up for nothing */
				__atomic_fetch_add(&tp->ctr.hold_fired_watched, 1, __ATOMIC_RELAXED);
		}
		if (!(ready & (EMU_WS_SOCK | EMU_WS_MCG))) {
			/* a notification or the hold timer: the next sleep is prepared again */
			__atomic_fetch_add(&tp->ctr.device_thread_other_wakeups, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (!lock_or_stop(tp))
			break;
		tp->wake_at = 0;
		tp->ctr.device_thread_wakeups++;
		got = rx_pass(tp, 0);
		if (!got)
			tp->ctr.device_thread_idle_wakeups++;   /* an application's poll took it first */
		else
			emu_found_verdict(tp, EMU_FOUND_THREAD_FIRST);
		wake = prepare_sleep(tp);
		prepared = true;
		emu_unlock(d);
		if (got && got <= EMU_LEAVE_MAX_PKTS)
			leave_the_applications_cpu(tp);
		if (got && rx_finish_message(tp))   /* the rest of a message begun */
			prepared = false;
		if (rx_spin(tp))
			prepared = false;
	}
	return NULL;
}

/* The thread's wait set: its wake notification and hold timer always watched, the
 * socket from the start (sock_watch.c switches it). */
static int waitset_open(struct emu_tp *tp)
{
	int rc;

	tp->ws_mc_fd = -1;
	tp->ws_fd = plat_waitset_open();
	if (tp->ws_fd < 0)
		return tp->ws_fd;
	rc = plat_waitset_add(tp->ws_fd, tp->wake_fd, EMU_WS_WAKE, true);
	if (!rc && tp->hold_fd >= 0)
		rc = plat_waitset_add(tp->ws_fd, tp->hold_fd, EMU_WS_HOLD, true);
	if (!rc)
		rc = plat_waitset_add(tp->ws_fd, tp->sock.fd, EMU_WS_SOCK, true);
	if (rc) {
		plat_waitset_close(tp->ws_fd);
		tp->ws_fd = -1;
	}
	return rc;
}

int emu_rx_start(struct emu_tp *tp)
{
	int rc;

	tp->wake_fd = plat_notify_open(0, PLAT_NOTIFY_NONBLOCK);
	if (tp->wake_fd < 0)
		return tp->wake_fd;
	tp->hold_fd = plat_deadline_open();   /* none (macOS): never off the socket */
	if (tp->hold_fd < 0)
		tp->hold_fd = -1;
	rc = waitset_open(tp);
	if (rc) {
		plat_notify_close(tp->wake_fd);
		tp->wake_fd = -1;
		if (tp->hold_fd >= 0)
			close(tp->hold_fd);
		tp->hold_fd = -1;
		return rc;
	}
	tp->stop = 0;
	/* the host's own threads where it asks for them (emu.h cfg.thread_start) */
	if (tp->d->cfg.thread_start)
		rc = -tp->d->cfg.thread_start(tp->d->cfg.thread_arg, &tp->thr, rx_main, tp);
	else
		rc = pthread_create(&tp->thr, NULL, rx_main, tp);
	if (rc) {
		plat_waitset_close(tp->ws_fd);
		tp->ws_fd = -1;
		plat_notify_close(tp->wake_fd);
		tp->wake_fd = -1;
		if (tp->hold_fd >= 0)
			close(tp->hold_fd);
		tp->hold_fd = -1;
		return -rc;
	}
	tp->thr_running = true;
	return 0;
}

void emu_rx_stop(struct emu_tp *tp)
{
	if (!tp->thr_running)
		return;
	__atomic_store_n(&tp->stop, 1, __ATOMIC_RELEASE);
	if (plat_notify_signal(tp->wake_fd) < 0) {
		/* the thread also notices within 1 ms */
	}
	pthread_join(tp->thr, NULL);
	tp->thr_running = false;
	__atomic_store_n(&tp->thr_off, 0, __ATOMIC_RELAXED);   /* no poll pushes a closed timer */
	plat_waitset_close(tp->ws_fd);
	tp->ws_fd = -1;
	plat_notify_close(tp->wake_fd);
	tp->wake_fd = -1;
	if (tp->hold_fd >= 0)
		close(tp->hold_fd);
	tp->hold_fd = -1;
}
