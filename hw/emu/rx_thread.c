/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The receive pipeline's two drivers (docs/architecture.md, "Progress whatever the
 * application does").  The device thread is the NIC: it blocks in poll() on the port's
 * UDP socket and its wake notification, takes every arrival it is woken for, and wakes
 * for the nearest timer (ACK timeout, RNR wait, held packet).  An application thread
 * that polls an empty CQ takes the arrivals first (emu_poll_assist, through the shim's
 * poll-assist hook, on one empty poll in EMU_ASSIST_EVERY), non-blocking; while it
 * polls, the device thread sleeps off the socket behind a deadline the polls push
 * (app_polling_now, emu_tp_hold), so it is never woken for nothing, and it is back on
 * the socket within EMU_POLL_HOLD_NS of the application stopping.  So a request to a
 * peer that spins on memory, blocks on a completion channel or is busy elsewhere is
 * served, and its ACK sent, without that peer calling the library.  The device thread
 * never transmits new work: that is the posting thread's, inside its doorbell.  Each
 * packet goes to rx_check.c (checks and dispatch); the timers to the requester and the
 * fault model. */
#define EMU_TP_INTERNAL
#include "hw/emu/transport.h"

#include <errno.h>
#include <poll.h>
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

#define EMU_RX_BATCH 64
#define EMU_RX_IDLE_NS 10000000ull   /* wake at least every 10 ms to look at timers */
/* After an arrival with no application polling, the device thread keeps looking at the
 * socket (non-blocking) this long before it blocks again: the next request of a
 * ping-pong whose responder is passive (ib_read_lat's server) then needs no wake-up. */
#define EMU_RX_SPIN_NS 50000ull

/* Hand each datagram of a batch just received to the checks (rx_check.c); one too
 * long for any RoCE packet is counted and dropped. */
static void rx_dispatch(struct emu_tp *tp, struct emu_roce_rx_batch *b)
{
	tp->ctr.rx_calls++;
	for (unsigned i = 0; i < b->n; i++) {
		if (b->len[i] > EMU_ROCE_MAX_PKT) {
			tp->ctr.rx_pkts++;
			tp->ctr.drops[EMU_ROCE_DROP_TOO_LONG]++;
			continue;
		}
		emu_tp_rx_packet(tp, b->pkt[i], b->len[i], &b->env[i]);
	}
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
		rx_dispatch(tp, b);
		n += b->n;
		if (b->n < EMU_ROCE_RX_BATCH)
			break;
	}
	/* the multicast groups' sockets (cmd_mcg.c): with no group joined, a call that
	 * returns at once */
	while (n < EMU_RX_BATCH) {
		int got = emu_mcg_recv_many(tp->d, b);

		if (got <= 0)
			break;
		rx_dispatch(tp, b);
		n += b->n;
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

/* When a hold that begins now should end: EMU_POLL_HOLD_NS ahead, unless the
 * application's last sign of life was a poll that returned a WRITE's completion
 * (found_at, emu_poll_found, not older than its last poll or post `seen`): it may be
 * spinning on memory for the peer's answer, which only this thread can place, so the
 * hold ends EMU_POLL_FOUND_NS after that poll, or (0) does not begin.  Most often this
 * thread's own pass delivered the ACK that completed the WRITE, before the poll could
 * bring a hold close; without this a 64 KiB ib_write_lat waited out a whole hold per
 * round trip (docs/benchmarks.md, "2026-12-06, 14:05-14:50 UTC").  Counted once per
 * such poll (hold_found_on_socket). */
static uint64_t found_hold_end(struct emu_tp *tp, uint64_t seen, uint64_t found, uint64_t now)
{
	if (!found || (int64_t)(found - seen) < 0)
		return now + EMU_POLL_HOLD_NS;
	if (found != tp->found_counted) {
		tp->found_counted = found;
		tp->ctr.hold_found_on_socket++;
	}
	if ((int64_t)(found + EMU_POLL_FOUND_NS - now) <= 0)
		return 0;
	return found + EMU_POLL_FOUND_NS;
}

/* An application polled this device within EMU_POLL_NOW_NS, and again since the hold
 * timer last found it stopped: it takes the arrivals itself, so the device thread may
 * sleep off the socket, with the hold timer armed EMU_POLL_HOLD_NS ahead, which the
 * application's next polls and doorbells push further (emu_tp_hold).  When the timer
 * fires the application has stopped (it spins on memory, computes, waits elsewhere):
 * the thread goes back to the socket and stays there until the application polls
 * again.  Woken on every arrival instead, the thread's wake-ups (each preempts an
 * application on 2 CPUs) cost ib_send_lat 46 us a half round trip against 13 us with
 * the hold, under chrt at load 14-15 (docs/benchmarks.md, 2026-12-06).  No hold timer
 * (not Linux): never off the socket. */
static bool app_polling_now(struct emu_tp *tp, uint64_t now)
{
	uint64_t seen = __atomic_load_n(&tp->poll_seen, __ATOMIC_RELAXED), found, until;

	if (tp->hold_fd < 0 || !seen || (int64_t)(now - seen) >= (int64_t)EMU_POLL_NOW_NS ||
	    (int64_t)(seen - tp->hold_expired) <= 0)
		return false;
	/* thr_off before found_at, as emu_poll_found stores found_at before it loads
	 * thr_off (both sequentially consistent): a poll racing this decision is seen
	 * here, or sees the thread off and brings the hold close itself */
	__atomic_store_n(&tp->thr_off, 1, __ATOMIC_SEQ_CST);
	found = __atomic_load_n(&tp->found_at, __ATOMIC_SEQ_CST);
	until = found_hold_end(tp, seen, found, now);
	if (!until || !emu_tp_hold_arm(tp, until)) {
		__atomic_store_n(&tp->thr_off, 0, __ATOMIC_RELAXED);
		return false;
	}
	/* A poll that came between, while hold_until still held the last hold's end, so
	 * that it left the hold alone: the hold ends as that poll asks, at once if its
	 * 5 us are past. */
	uint64_t again = __atomic_load_n(&tp->found_at, __ATOMIC_SEQ_CST);

	if (again != found) {
		uint64_t sooner = found_hold_end(tp, seen, again, now);

		if (!sooner)
			sooner = now;
		if ((int64_t)(sooner - until) < 0)
			(void)emu_tp_hold_arm(tp, sooner);
	}
	tp->ctr.device_thread_off_socket++;
	return true;
}

/* Busy-poll the socket for EMU_RX_SPIN_NS after the last arrival, the lock taken only
 * to receive, while nothing asks the thread to stop -- only in a process whose
 * application has not polled this device for EMU_RX_PASSIVE_NS (a passive responder,
 * blocked elsewhere): a real-time spinner beside an application that polls or spins
 * on memory would take the CPU it runs on.  Only with more than one CPU. */
#define EMU_RX_PASSIVE_NS 10000000ull

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

static void rx_spin(struct emu_tp *tp)
{
	static long ncpu_cached;   /* every device thread of the process may fill it */
	uint64_t until = emu_now_ns() + EMU_RX_SPIN_NS, seen = __atomic_load_n(&tp->poll_seen, __ATOMIC_RELAXED);
	long ncpu = __atomic_load_n(&ncpu_cached, __ATOMIC_RELAXED);

	if (!ncpu) {
		ncpu = plat_online_cpus();
		__atomic_store_n(&ncpu_cached, ncpu, __ATOMIC_RELAXED);
	}
	if (ncpu < 2 || (seen && emu_now_ns() - seen < EMU_RX_PASSIVE_NS))
		return;
	if (!spin_off_a_pollers_cpu(tp))
		return;
	for (;;) {
		uint64_t now = emu_now_ns();

		if (now >= until || __atomic_load_n(&tp->poll_seen, __ATOMIC_RELAXED) != seen ||
		    __atomic_load_n(&tp->stop, __ATOMIC_ACQUIRE))
			return;
		if (!emu_lock_try(tp->d))
			continue;
		if (rx_pass(tp, 0))
			until = emu_now_ns() + EMU_RX_SPIN_NS;
		emu_unlock(tp->d);
	}
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
	unsigned n;

	if (!tp || !tp->sock_ok || !tp->rxb.slots)
		return;
	n = __atomic_load_n(&tp->assist_skip, __ATOMIC_RELAXED) + 1;
	__atomic_store_n(&tp->assist_skip, n, __ATOMIC_RELAXED);
	if (n % EMU_ASSIST_EVERY)
		return;
	now = emu_now_ns();
	__atomic_store_n(&tp->poll_seen, now, __ATOMIC_RELAXED);
	emu_cpu_hint_polled(now);
	emu_tp_hold(tp, now);
	if (!emu_lock_try(d))
		return;   /* the device thread or a doorbell is at work: poll again */
	tp->ctr.assist_polls++;
	n = rx_pass(tp, now);
	tp->ctr.assist_pkts += n;
	emu_unlock(d);
}

/* A CQ poll returned an RDMA WRITE's completion (the driver's mx5_poll_found).  The
 * hold off the socket ends EMU_POLL_FOUND_NS from now, no longer up to EMU_POLL_HOLD_NS
 * after the last poll: the application got what it waited for and may now wait for the
 * peer's answer by watching memory, as perftest's ib_write_lat does (run_iter_lat_write:
 * post, poll the send CQ until the WRITE completes, spin on the receive buffer), and
 * only the device thread can place that answer.  One timerfd_settime per hold at most
 * (a deadline already that close is left alone), and only while the device thread is
 * off the socket; either way the poll's time is noted for the thread's next decision
 * to leave it (app_polling_now, found_hold_end), which then keeps to the same
 * deadline.  An application that polls on pushes it out again with its next poll
 * assist or doorbell (emu_tp_hold). */
void emu_poll_found(struct emu_dev *d)
{
	struct emu_tp *tp = d ? d->tp : NULL;
	uint64_t now;

	if (!tp)
		return;
	now = emu_now_ns();
	/* for the thread's next decision to leave the socket (app_polling_now), whether it
	 * is off now or not; stored before thr_off is loaded, see there */
	__atomic_store_n(&tp->found_at, now, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&tp->thr_off, __ATOMIC_SEQ_CST))
		return;
	if ((int64_t)(__atomic_load_n(&tp->hold_until, __ATOMIC_RELAXED) - now) <= (int64_t)EMU_POLL_FOUND_NS)
		return;
	if (emu_tp_hold_arm(tp, now + EMU_POLL_FOUND_NS))
		__atomic_fetch_add(&tp->ctr.hold_found, 1, __ATOMIC_RELAXED);   /* not under the lock */
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
	if (!__atomic_load_n(&tp->stop, __ATOMIC_ACQUIRE) && emu_lock_spin(tp->d, EMU_THREAD_LOCK_SPIN_NS)) {
		if (!__atomic_load_n(&tp->stop, __ATOMIC_ACQUIRE))
			return true;
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

static void *rx_main(void *arg)
{
	struct emu_tp *tp = arg;
	struct emu_dev *d = tp->d;

	plat_thread_set_name(EMU_DEVICE_THREAD_NAME);   /* for top -H, ps -L, gdb */
	device_thread_sched(tp);
	for (;;) {
		uint64_t now, a[2];
		struct pollfd pfd[3];
		bool off;
		int n, mc_fd;

		if (!lock_or_stop(tp))
			break;
		now = emu_now_ns();
		a[0] = now;
		a[1] = now + EMU_RX_IDLE_NS;
		emu_tp_foreach_tq(tp, timers_one, a);
		emu_tp_faults_timer(tp, now, &a[1]);
		emu_resp_flush_acks(tp);
		off = app_polling_now(tp, now);
		tp->wake_at = a[1];
		mc_fd = emu_mcg_fd(d);
		emu_unlock(d);

		/* The socket, unless an application polls this very moment: then the hold
		 * timer instead, which its polls keep pushing ahead (EMU_POLL_HOLD_NS). */
		pfd[0].fd = tp->wake_fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = off ? tp->hold_fd : tp->sock.fd;
		pfd[1].events = POLLIN;
		/* and the multicast groups' sockets' epoll set, which wakes the thread for a
		 * group joined while it sleeps (while off, the polls take them) */
		pfd[2].fd = off ? -1 : mc_fd;
		pfd[2].events = POLLIN;
		pfd[2].revents = 0;
		n = plat_poll_ns(pfd, 3, a[1] > now ? a[1] - now : 0);
		__atomic_store_n(&tp->thr_off, 0, __ATOMIC_RELAXED);
		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		if (pfd[0].revents & POLLIN) {
			if (plat_notify_read(tp->wake_fd, NULL) < 0) {
				/* nothing to drain */
			}
		}
		if (off) {
			if (plat_deadline_take(tp->hold_fd))
				tp->hold_expired = emu_now_ns();   /* it stopped: off again only once it polls again */
			continue;
		}
		if (!(pfd[1].revents & POLLIN) && !(pfd[2].revents & POLLIN))
			continue;
		if (!lock_or_stop(tp))
			break;
		tp->wake_at = 0;
		tp->ctr.device_thread_wakeups++;
		if (!rx_pass(tp, 0))
			tp->ctr.device_thread_idle_wakeups++;   /* an application's poll took it first */
		emu_unlock(d);
		rx_spin(tp);
	}
	return NULL;
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
	tp->stop = 0;
	/* the host's own threads where it asks for them (emu.h cfg.thread_start) */
	if (tp->d->cfg.thread_start)
		rc = -tp->d->cfg.thread_start(tp->d->cfg.thread_arg, &tp->thr, rx_main, tp);
	else
		rc = pthread_create(&tp->thr, NULL, rx_main, tp);
	if (rc) {
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
	plat_notify_close(tp->wake_fd);
	tp->wake_fd = -1;
	if (tp->hold_fd >= 0)
		close(tp->hold_fd);
	tp->hold_fd = -1;
}
