/* The device thread (docs/architecture.md, "The emulated ConnectX"): blocks in poll() on the port's UDP socket for
 * arrivals and wakes for the nearest timer (ACK timeout, RNR wait, held packet) or when
 * a posting thread arms an earlier one (eventfd).  It never transmits new work: that is
 * the posting thread's, inside its doorbell.
 *
 * Every arriving packet is checked before any transport sees it (IBTA 9.6 "packet
 * header validation", A17.4): length, ICRC, TVer, opcode and headers (emu_roce_parse);
 * then an existing destination QP, the opcode's service equal to the QP's, the P_Key,
 * a QP state that receives, and for connected services the peer's address.  Anything
 * else is dropped and counted by reason. */
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

#include "hw/platform/notify.h"
#include "hw/platform/thread.h"

#define EMU_RX_BATCH 64
#define EMU_RX_IDLE_NS 10000000ull   /* wake at least every 10 ms to look at timers */

static uint16_t port_pkey(void)
{
	/* P_Key table index 0 holds the default partition (full member). */
	return EMU_ROCE_DEFAULT_PKEY;
}

void emu_tp_rx_packet(struct emu_tp *tp, uint8_t *buf, size_t len, const struct emu_roce_ip *env)
{
	struct emu_dev *d = tp->d;
	struct emu_roce_pkt p;
	struct emu_qp *qp;
	struct emu_tq *tq;
	enum emu_roce_transport tr;

	tp->ctr.rx_pkts++;
	if (tp->flt.link_down) {
		tp->ctr.link_down_drops++;
		return;
	}
	if (emu_roce_parse(buf, len, env, &p) < 0) {
		tp->ctr.drops[p.drop < EMU_ROCE_DROP_NR ? p.drop : EMU_ROCE_DROP_OPCODE]++;
		return;
	}
	tp->ctr.rx_by_opcode[p.h.bth.opcode]++;
	tr = emu_roce_op_transport(p.h.bth.opcode);
	if (tr == EMU_ROCE_TR_CNP)
		return;   /* congestion notification: no rate limiter to feed */
	qp = emu_obj_get(d, EMU_OBJ_QP, p.h.bth.dqpn);
	if (!qp) {
		tp->ctr.drops[EMU_ROCE_DROP_QPN]++;
		return;
	}
	if ((tr == EMU_ROCE_TR_RC && qp->st != EMU_QP_ST_RC) || (tr == EMU_ROCE_TR_UC && qp->st != EMU_QP_ST_UC) ||
	    (tr == EMU_ROCE_TR_UD && qp->st != EMU_QP_ST_UD) || tr == EMU_ROCE_TR_RD) {
		tp->ctr.drops[EMU_ROCE_DROP_TRANSPORT]++;
		return;
	}
	if (!emu_roce_pkey_match(p.h.bth.pkey, port_pkey())) {
		tp->ctr.drops[EMU_ROCE_DROP_PKEY]++;
		return;
	}
	if (qp->state != EMU_QP_RTR && qp->state != EMU_QP_RTS && qp->state != EMU_QP_SQD) {
		tp->ctr.drops[EMU_ROCE_DROP_QP_STATE]++;
		return;
	}
	if (tr != EMU_ROCE_TR_UD && env->saddr != emu_qp_dip(qp)) {
		tp->ctr.drops[EMU_ROCE_DROP_SRC]++;
		return;
	}
	tq = emu_tq_get(tp, qp);
	if (!tq)
		return;
	switch (tr) {
	case EMU_ROCE_TR_RC:
		if (p.op->flags & EMU_ROCE_F_REQ)
			emu_rc_resp_rx(tp, tq, &p, env);
		else
			emu_rc_req_rx(tp, tq, &p);
		break;
	case EMU_ROCE_TR_UC:
		emu_uc_rx(tp, tq, &p);
		break;
	case EMU_ROCE_TR_UD:
		emu_ud_rx(tp, tq, &p, env, len);
		break;
	default:
		break;
	}
}

static void timers_one(struct emu_tp *tp, struct emu_tq *tq, void *arg)
{
	uint64_t *a = arg;

	emu_req_timers(tp, tq, a[0], &a[1]);
}

/* Take the device lock, giving up when asked to stop (emu_destroy holds the lock while
 * it stops this thread). */
static bool lock_or_stop(struct emu_tp *tp)
{
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
				pthread_mutex_unlock(&tp->d->lock);
				return false;
			}
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
	/* Never below a real-time creator: a spinner at its priority would starve us. */
	if (pthread_getschedparam(pthread_self(), &policy, &sp) != 0 ||
	    (policy != SCHED_FIFO && policy != SCHED_RR) || sp.sched_priority < 1)
		sp.sched_priority = 1;
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
	uint8_t *buf = malloc(EMU_ROCE_MAX_PKT + 1);

	if (!buf)
		return NULL;
	plat_thread_set_name(EMU_DEVICE_THREAD_NAME);   /* for top -H, ps -L, gdb */
	device_thread_sched(tp);
	for (;;) {
		uint64_t now, a[2];
		struct pollfd pfd[2];
		int n;

		if (!lock_or_stop(tp))
			break;
		now = emu_now_ns();
		a[0] = now;
		a[1] = now + EMU_RX_IDLE_NS;
		emu_tp_foreach_tq(tp, timers_one, a);
		emu_tp_faults_timer(tp, now, &a[1]);
		emu_resp_flush_acks(tp);
		tp->wake_at = a[1];
		pthread_mutex_unlock(&d->lock);

		pfd[0].fd = tp->sock.fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = tp->wake_fd;
		pfd[1].events = POLLIN;
		n = plat_poll_ns(pfd, 2, a[1] - now);
		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		if (pfd[1].revents & POLLIN) {
			if (plat_notify_read(tp->wake_fd, NULL) < 0) {
				/* nothing to drain */
			}
		}
		if (!(pfd[0].revents & POLLIN))
			continue;
		if (!lock_or_stop(tp))
			break;
		tp->wake_at = 0;
		for (int i = 0; i < EMU_RX_BATCH; i++) {
			struct emu_roce_ip env;
			ssize_t r = emu_roce_sock_recv(&tp->sock, buf, EMU_ROCE_MAX_PKT + 1, &env, MSG_DONTWAIT);

			if (r < 0)
				break;
			if ((size_t)r > EMU_ROCE_MAX_PKT) {
				tp->ctr.rx_pkts++;
				tp->ctr.drops[EMU_ROCE_DROP_TOO_LONG]++;
				continue;
			}
			emu_tp_rx_packet(tp, buf, (size_t)r, &env);
		}
		emu_resp_flush_acks(tp);
		pthread_mutex_unlock(&d->lock);
	}
	free(buf);
	return NULL;
}

int emu_rx_start(struct emu_tp *tp)
{
	int rc;

	tp->wake_fd = plat_notify_open(0, PLAT_NOTIFY_NONBLOCK);
	if (tp->wake_fd < 0)
		return tp->wake_fd;
	tp->stop = 0;
	rc = pthread_create(&tp->thr, NULL, rx_main, tp);
	if (rc) {
		plat_notify_close(tp->wake_fd);
		tp->wake_fd = -1;
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
	plat_notify_close(tp->wake_fd);
	tp->wake_fd = -1;
}
