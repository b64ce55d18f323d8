/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The emulated ConnectX's data plane: queue engines and the RC/UC/UD transports over
 * RoCE v2 (docs/architecture.md, "RoCE v2 on the wire and the transport engines").
 *
 * Threads (docs/architecture.md, "The emulated ConnectX": the transmit path belongs in the posting thread):
 *  - the posting thread runs the send queue inside its doorbell/BlueFlame store
 *    (sq_doorbell.c, the UAR hook, then sq_engine.c): WQEs are fetched, decoded and their packets sent
 *    before the store returns;
 *  - one device thread per emulated NIC (rx_thread.c) always blocks in poll() on the
 *    port's UDP socket for arrivals and wakes for timers (ACK timeout, RNR wait,
 *    reordered packets held back); an application's empty CQ poll may take arrivals
 *    first (emu_poll_assist).
 * Everything runs with the device lock (d->lock) held, so the per-QP state below needs
 * no lock of its own.
 *
 * Files, and the one direction they call in: hw/emu/layers.txt (top first: the
 * transport area, the send and receive entries, the RC/UC/UD transports, the SQ engine,
 * completions, placement, the fault model, the transport core), drawn in
 * docs/architecture.md, "The data plane's call order".
 *
 * The first half of this header is the public test API (counters, faults); the second
 * half is shared by the engine files only.
 */
#ifndef UVERBS_HW_EMU_TRANSPORT_H
#define UVERBS_HW_EMU_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw/emu/emu.h"
#include "hw/emu/roce_wire.h"

/* ================================================================ public test API */

struct emu_tp_counters {
	uint64_t tx_pkts, rx_pkts;
	uint64_t tx_by_opcode[256], rx_by_opcode[256];
	uint64_t tx_no_port;                   /* frames to a MAC no emulated port owns, lost */
	uint64_t mcast_rx;                     /* multicast packets placed, one per member QP */
	uint64_t drops[EMU_ROCE_DROP_NR];      /* received packets dropped, by reason */
	uint64_t naks_sent[5], naks_rcvd[5];   /* by AETH NAK code (PSN seq, inv req, rem access, rem op) */
	uint64_t rnr_naks_sent, rnr_naks_rcvd;
	uint64_t rnr_waits;                    /* RNR timers the requester waited out */
	uint64_t retransmits;                  /* packets sent again (go-back-N, timeouts, RNR) */
	uint64_t timeouts;                     /* local ACK timer expiries */
	uint64_t duplicates;                   /* duplicate requests seen by responders */
	uint64_t read_replays, atomic_replays; /* duplicate READ/atomic answered from resources */
	uint64_t acks_sent, acks_coalesced;
	uint64_t wqes, cqes, cqe_errors, flushed;
	uint64_t cq_overruns;
	uint64_t sq_bf_wqes;                   /* WQEs taken from a BlueFlame buffer (no DMA read) */
	/* wire faults applied on transmit */
	uint64_t fault_lost, fault_dup, fault_reordered, fault_corrupted, link_down_drops;
	uint64_t device_thread_fifo;           /* 1: the device thread runs SCHED_FIFO */
	/* receive path driven by the application's CQ polls (emu_poll_assist) */
	uint64_t assist_polls;                 /* polls that took the device and looked at the wire */
	uint64_t assist_pkts;                  /* packets those polls received and handled */
	uint64_t device_thread_wakeups;        /* device thread returns from poll() with an arrival */
	uint64_t device_thread_idle_wakeups;   /* ... and finds it taken already by a CQ poll */
	uint64_t device_thread_off_socket;     /* sleeps off the socket while an application polls */
	uint64_t hold_rearms;                  /* pushes of that sleep's deadline (timerfd_settime) */
	uint64_t hold_timer_kept;              /* switches off the socket that found the timer still set */
	uint64_t hold_fired_watched;           /* ... and firings of it with the socket watched */
	uint64_t device_thread_app_cpu_moves;  /* moves off the CPU of its application's last doorbell
	                                        * after a wake-up for arrivals (rx_thread.c) */
	uint64_t device_thread_other_wakeups;  /* wake-ups not for arrivals: its timers, a notification,
	                                        * the hold timer (each prepares the next sleep under
	                                        * the device lock) */
	uint64_t hold_found;                   /* ended by a poll returning a WRITE's completion: the
						* socket watched again (sock_watch.c) */
	uint64_t hold_found_on_socket;         /* such polls while the socket was watched already */
	uint64_t msg_spins;                    /* spins for the rest of a message (rx_finish_message) */
	uint64_t msg_spin_passes;              /* ... receive passes in them that found packets */
	uint64_t msg_spin_moves;               /* ... that found none for a while and left the CPU */
	uint64_t found_look_pkts;              /* packets the looks around a found WRITE's switch took
	                                        * (emu_poll_found; not counted as assist_pkts) */
	uint64_t found_with_sends_outstanding; /* polls that returned a WRITE of a QP with more to complete */
	uint64_t found_waits;                  /* such polls that waited for the peer's answer
	                                        * (emu_poll_found, found_wait) */
	uint64_t found_waits_answered;         /* ... that saw a request arrive (the rest ran out,
	                                        * or the socket was watched again) */
	uint64_t found_kept;                   /* such polls, the answer in hand, that left the socket
	                                        * to the polls (EMU_FOUND_KEEP_EARN) */
	uint64_t found_kept_stalls;            /* ... whose hold ran out with arrivals waiting in the socket */
	uint64_t hold_renewed;                 /* hold timers that fired within a hold of the last call: run on */
	uint64_t watch_back_stopped;           /* the socket watched again because the application stopped
	                                        * (its calls went stale, its hold ran out, it armed a CQ) */
	uint64_t hold_expiries;                /* holds that ran out: the thread woken by their timer */
	uint64_t watch_errors;                 /* wait-set switches the kernel refused (never expected) */
	uint64_t passive_spins;                /* spins of a passive responder after an arrival (rx_spin) */
	uint64_t spin_moves;                   /* passive spins that moved off a CPU an application polled on */
	uint64_t spins_skipped;                /* ... that could not move, and blocked instead */
	uint64_t device_thread_cpu_ns;         /* CPU time the device thread has used (plat_thread_cpu_ns) */
	/* system calls of the wire (roce_sock.c batches them) */
	uint64_t tx_calls;                     /* sends: one per run of queued packets */
	uint64_t tx_segmented;                 /* packets that left in segmented datagrams (UDP GSO) */
	uint64_t rx_calls;                     /* receives that took at least one packet */
	uint64_t rx_coalesced;                 /* datagrams that brought several packets (UDP GRO) */
	uint64_t rx_coalescing;                /* 1 once the port's socket coalesces (rx_dispatch) */
	uint64_t payload_read_aheads;          /* multi-packet payload windows read in one DMA read
	                                        * (requests, and READ responses; only when a read
	                                        * costs a system call: emu_payload_read) */
};

/* A request's payload is read ahead this much at a time (one DMA read) when reading
 * application memory costs a system call (emu_payload_read). */
#define EMU_TP_STAGE_BYTES (64u * 1024)

/* One empty CQ poll in this many runs the poll assist (emu_poll_assist, rx_thread.c):
 * its recvmmsg costs 0.3 us on an idle machine and 3-4 us on this 2-CPU one under load,
 * and an empty ibv_poll_cq should cost a few tens of nanoseconds (issue 32: <= 100 ns).
 * Measured, mean of 10^6 empty polls at load 15: every 8th 500 ns, every 32nd 105-130,
 * every 64th see docs/benchmarks.md.  An arrival then waits at most 64 polls (about
 * 1.5 us) for a poller. */
#define EMU_ASSIST_EVERY 64u
/* After a send doorbell the answer is due: the next EMU_ASSIST_BRISK_LOOKS looks at the
 * wire come every EMU_ASSIST_EVERY_BRISK empty polls (about 0.1 us apart, plus the
 * look itself), then the cadence is EMU_ASSIST_EVERY again.  So after a look that took
 * packets: the peer is talking, and a command of several messages (llama.cpp's RPC:
 * three SENDs, each awaited) has its next part close behind.  An application that
 * polls with nothing arriving and without posting (the empty-poll gate) never sees
 * the brisk cadence.  Every 2, 4 and 8 measured (docs/benchmarks.md, "2026-12-06,
 * 22:45 UTC"; after an arrival, "2026-12-07, 01:45 UTC"). */
#define EMU_ASSIST_EVERY_BRISK 4u
#define EMU_ASSIST_BRISK_LOOKS 64u

/* While an application polls, the device thread does not watch the socket (its
 * arrivals are the polls'), but only until EMU_POLL_HOLD_NS after the last poll or
 * post: each poll assist and doorbell pushes that deadline forward (a timerfd, re-armed
 * when less than EMU_POLL_HOLD_PUSH_NS of it is left), so the thread is never woken while the
 * application polls, and watches the socket again at most this long after the
 * application stops (to spin on memory, compute, or sleep without arming a CQ).  An
 * arrival then waits at most this long.  Linux only (timerfd); elsewhere the thread
 * always watches the socket.  sock_watch.c, docs/architecture.md "Progress".  100 us,
 * not 50 (2026-12-06): a poller preempted for more than half the hold (a device
 * thread's wake-up or passive spin on its CPU, EMU_RX_SPIN_NS) let it lapse, and each
 * lapse cost two wake-ups; ib_read_lat went from 18.3 to 11.2 us and the RPC pattern
 * from 78 to 51 (medians of eight runs: docs/benchmarks.md, "2026-12-06, 14:05-14:50
 * UTC").  300 us, not 100 (since 2026-12-06, 19:15): each push is a timerfd_settime,
 * and on the CI machine class's virtual CPUs arming a timer this near costs what its
 * distance decides (20,000 pushes in a row: 7.7 us each at 100 us ahead, 5.5 at 200,
 * 4.5 at 300, 1.8 at 1 ms, 0.5 at 4 ms), so a poller paid 15% of its time for the
 * hold; ib_send_lat went from 12.8 to 9.3 us and the RPC pattern from 57 to 52
 * (docs/benchmarks.md, "2026-12-06, 19:15 UTC").  A poll that returns an RDMA WRITE's
 * completion ends the hold at once, unless the answer is in hand already
 * (emu_poll_found: the application may now spin on memory for the peer's answer,
 * which only the device thread can place; EMU_FOUND_KEEP_EARN).  Only WRITEs: ended
 * after any completion, the hold lapsed under pollers of SENDs and READs (ib_send_lat 13 -> 28 us,
 * ib_read_lat 19 -> 28, ucp_get 19 -> 37 with a 30 us end; docs/benchmarks.md,
 * 2026-12-06 "A poll that returns a WRITE").  Still 300 us, pushed when less than half
 * is left, though on 2026-12-07 this machine class's virtual CPUs charged about 17 us
 * for every arm less than a tick (4 ms, HZ 250) ahead, whatever its distance (20,000
 * arms in a row: median 17.1 us at 100 us ahead, 16.9 at 300, 15.7 at 1 ms, 0.25 at
 * 4 ms): a 600 us hold pushed when a quarter was left took a third of the arms, and
 * the RPC pattern's median from 27.0-27.7 to 24.6-26.8 us.  It was reverted when
 * vm_rxe's lossy ping-pong failed, which turned out to be that test's own race (the
 * peer had exited; docs/benchmarks.md, "2026-12-07, 10:10 UTC"), and not taken again:
 * it doubles how long arrivals wait for the device thread after an application stops
 * calling, for a few percent of the RPC pattern. */
#define EMU_POLL_HOLD_US 300   /* 30, 50, 100, 150, 200, 300, 600 us measured: docs/benchmarks.md */
#define EMU_POLL_HOLD_NS (EMU_POLL_HOLD_US * 1000ull)
#define EMU_HOLD_PUSH_NS(hold) ((hold) / 2)   /* pushed when less than this is left */
#define EMU_POLL_HOLD_PUSH_NS EMU_HOLD_PUSH_NS(EMU_POLL_HOLD_NS)
/* The URI's hold_us= lengthens a device's hold (emu_tp.hold_ns; pushed, as the default,
 * when less than half is left), up to 5 ms: a hold past the timer tick (4 ms at HZ 250)
 * is armed without the trapped reprogram a nearer one costs on some virtual machines
 * (17 us on 2026-12-07's; docs/benchmarks.md, "2026-12-07, 14:58 UTC"), and arrivals
 * wait up to that long for the device thread once an application stops calling
 * without arming a CQ or spinning on memory after a WRITE's completion (from
 * EMU_POLL_NOW_NS on, a wake-up of the thread's own ends the hold: emu_tp_hold_fired,
 * want_off).  Never shorter than the default, which the found wait's limit is checked
 * against below; and well within the device thread's idle wake-up (rx_thread.c
 * EMU_RX_IDLE_NS, 10 ms). */
#define EMU_POLL_HOLD_MAX_US 5000
#define EMU_POLL_HOLD_MAX_NS (EMU_POLL_HOLD_MAX_US * 1000ull)

/* A poll that returns an RDMA WRITE's completion while the socket is left to the polls
 * looks at the wire for up to EMU_FOUND_WAIT_NS (longer after a WRITE that took long:
 * EMU_FOUND_WAIT_MAX_NS) before it returns, for the peer's
 * answer (emu_poll_found, rx_thread.c).  An application that waits for that answer by
 * watching memory (perftest's ib_write_lat) would otherwise have it placed by its
 * device thread, woken for it, 15-25 us later when the wake-up crosses CPUs.  The wait
 * is bounded and earned: a wait that saw no request spends one of
 * EMU_FOUND_WAIT_CREDITS, one that saw a request (not an ACK of another QP) restores
 * them all, and with none left only one found WRITE in EMU_FOUND_WAIT_PROBE waits, so
 * an application that computes after its WRITEs loses EMU_FOUND_WAIT_CREDITS waits at
 * first, then at most a wait's length (below) / EMU_FOUND_WAIT_PROBE a WRITE.  Nor does a poll
 * wait when a request arrived after the application's last post: the answer came with
 * the ACK.  Debian's ib_write_lat -s 2, waits of 0, 3 and 6 us: 10.5-10.8, 7.1-7.6 and
 * 6.6-6.9 us a half round trip; 12 and 20 us were slower (7.2-7.3 and 8.0-8.3: where
 * both sides waited for each other, a longer wait was a longer stall); with the arrival
 * rule 5.8-6.0 (docs/benchmarks.md, "2026-12-07, 06:50 UTC"). */
#define EMU_FOUND_WAIT_NS 6000ull
/* A larger answer takes longer to come back: the peer's device thread or polls place
 * our WRITE, its application answers with as much, and the answer's sendmsg alone takes
 * tens of microseconds for 64 KiB on loopback.  So the wait lasts twice what the WRITE
 * took from the application's last doorbell to the poll that returned it, when that is
 * more than EMU_FOUND_WAIT_NS / 2, up to this; and a look that takes part of a message
 * waits on for the rest (rx_mid_msg).  Debian's ib_write_lat -s 65536: A's device
 * thread woke for 4,969 of 5,000 answers with the wait fixed, 128 with it scaled;
 * 54.2-57.5 -> 39.3-39.8 us a half round trip; 2 B and 4 KiB unchanged
 * (docs/benchmarks.md, "2026-12-07, 14:50 UTC").  An application that computes after
 * its WRITEs loses at most EMU_FOUND_WAIT_CREDITS such waits, then one in
 * EMU_FOUND_WAIT_PROBE: about 6% of what each WRITE took. */
#define EMU_FOUND_WAIT_MAX_NS 100000ull
/* A wait neither pushes the hold nor counts as a call (found_wait): it must end before
 * the EMU_POLL_HOLD_PUSH_NS that the poll's last look left on the hold. */
_Static_assert(EMU_FOUND_WAIT_MAX_NS < EMU_POLL_HOLD_PUSH_NS, "a found wait would outlast the hold");
#define EMU_FOUND_WAIT_CREDITS 8u
#define EMU_FOUND_WAIT_PROBE 32u
/* A poll that returns a WRITE's completion with the peer's answer already taken (a
 * request arrived since the application's last post) need not give the socket back:
 * the application has what it waits for and most often posts next, as ib_write_lat
 * does.  The switch (an EPOLL_CTL_MOD, then a look for what arrived in between) cost
 * about a microsecond on the round trip's path: Debian's ib_write_lat -s 2 4.8-4.9 ->
 * 3.75-3.85 us a half round trip (docs/benchmarks.md, "2026-12-07, 10:27 UTC").  But an
 * application that then watches memory for a further message would leave it in the
 * socket until the hold ran out (EMU_POLL_HOLD_NS).  So keeping is earned: each such
 * poll is judged by what comes next -- the application's own call (a doorbell, a poll
 * that looks, an armed CQ), or the device thread taking packets first.
 * EMU_FOUND_KEEP_EARN calls first in a row earn keeping; the device thread first
 * resets the count.  A kept socket whose hold ran out with arrivals waiting in it (a
 * stall: the hold and the thread's wake-up) doubles what must be earned, up to
 * EMU_FOUND_KEEP_EARN_MAX, and as many kept polls that went well halve it again.  Not
 * while a message is half in (rx_mid_msg): the answer is in hand only when whole. */
#define EMU_FOUND_KEEP_EARN 64u
#define EMU_FOUND_KEEP_EARN_MAX 65536u
/* The device thread leaves the socket only when the application polled this recently:
 * long, because the thread decides right after its own work, during which it may have
 * kept the application off its CPU (tens of microseconds on 2 virtual CPUs). */
#define EMU_POLL_NOW_NS 1000000ull
/* A hold renewed from the application's last call (sock_watch.c emu_tp_hold_fired)
 * must end this far ahead at least; nearer, it has run out. */
#define EMU_HOLD_RENEW_MIN_NS 2000ull

/* Name of each device's thread (15 characters at most, the kernel's limit). */
#define EMU_DEVICE_THREAD_NAME "uverbs-emu-dev"

/* Snapshot of the data-plane counters (zeros for a device without a data plane). */
void emu_tp_counters(struct emu_dev *d, struct emu_tp_counters *out);

/* Wire faults on this device's transmit side, each a probability in [0, 1]: loss,
 * reordering (a packet is held back and sent after the next one, or after 1 ms),
 * duplication and corruption (one bit flipped after the ICRC: the receiver drops it as
 * ICRC).  seed 0 keeps the current generator.  -EINVAL for a rate outside [0, 1]. */
struct emu_wire_faults {
	double loss, reorder, dup, corrupt;
	uint64_t seed;
};
int emu_wire_faults_set(struct emu_dev *d, const struct emu_wire_faults *f);
/* Link down: every packet this device sends or receives is dropped (counted). */
void emu_wire_link_set(struct emu_dev *d, int up);
/* Parse "loss=0.01,reorder=0.05,dup=0.01,corrupt=0.001,seed=N,link=down" (the emu: URI's
 * fault options; unknown keys are refused). */
int emu_wire_faults_parse(const char *opts, struct emu_wire_faults *f, int *link_up);

/* Inject a raw RoCE packet (the UDP payload) from this device's address and `sport` to
 * daddr:4791, as if it came from the wire (hostile-packet tests build it with
 * emu_roce_forge).  Sent through the device's own socket; returns 0 or -errno. */
int emu_tp_inject(struct emu_dev *d, uint32_t daddr, uint16_t sport, const void *pkt, size_t len);

/* ================================================================ engine internals */
#ifdef EMU_TP_INTERNAL

#include "hw/emu/emu_dev.h"
#include "hw/emu/objects.h"

#define EMU_TP_MAX_SGE 32
#define EMU_TP_SWQE_SLOTS 256u       /* send WQEs in flight per QP (power of two) */
#define EMU_TP_WINDOW 64u            /* packets sent and not yet acknowledged */
#define EMU_TP_ACKREQ_EVERY 16u      /* AckReq on every Nth packet of a long message */
#define EMU_TP_MAX_RES 16u           /* responder resources kept per QP */
#define EMU_TP_PKT_CAP 4400u         /* headers + 4096-byte MTU + pad + ICRC */

struct emu_tp_sge {
	uint32_t lkey;
	uint32_t len;
	uint64_t addr;
};

/* A decoded send WQE and its transport progress. */
struct emu_swqe {
	uint32_t idx;                /* free-running basic-block counter of its first BB */
	uint16_t nbb;
	uint8_t opcode, fm, ce, se;
	uint32_t imm;                /* ctrl imm: immediate (as sent), rkey to invalidate, UMR's MKey */
	uint64_t umr_mask;           /* UMR: umr ctrl mkey_mask, and the mkey context segment */
	uint8_t umr_mkc[64];
	uint64_t raddr;
	uint32_t rkey;
	uint64_t swap_add, compare;
	/* UD address vector */
	uint32_t dqpn, qkey, dip;
	uint32_t xrc_srqn;      /* XRC initiator: the remote XRC SRQ (the WQE's XRC segment) */
	uint16_t sport;
	uint8_t tclass;
	uint64_t len;
	uint8_t nsge;
	bool inl;
	uint64_t seq;                /* unique per fetched WQE: its key in the read-ahead stage */
	struct emu_tp_sge sge[EMU_TP_MAX_SGE];
	uint8_t *inl_data;
	/* progress */
	bool psn_set;
	uint32_t first_psn, npkts;   /* READ: response packets; others: request packets */
	uint32_t sent;               /* request packets sent in this pass */
	uint32_t rd_rcvd;            /* READ response packets received, in order */
	bool acked;                  /* SEND/WRITE acknowledged, READ/atomic answered */
};

/* Responder resource: a READ or atomic kept for duplicate replay (IBTA 9.7.5.1.2). */
struct emu_rres {
	bool valid, atomic;
	uint32_t psn, last_psn;
	uint64_t va;
	uint32_t rkey, len;
	uint64_t orig;               /* atomic: the original value returned */
};

/* A receive WQE (RQ or SRQ) being filled. */
struct emu_rwqe {
	uint32_t wqe_counter;        /* RQ: WQEs consumed; SRQ: the WQE's index */
	uint8_t nsge;
	struct emu_tp_sge sge[EMU_TP_MAX_SGE];
	uint64_t cap;
};

/* Per-QP transport state, created on first use and dropped when the QP goes. */
struct emu_tq {
	struct emu_tq *next;             /* hash chain */
	struct emu_qp *qp;
	uint32_t qpn;
	uint32_t ctx_sq_psn, ctx_rq_psn; /* context PSNs when this state was made */
	uint8_t ctx_state;
	bool flushed;
	/* requester */
	struct emu_swqe *ring;           /* EMU_TP_SWQE_SLOTS */
	uint32_t head, cur, tail;        /* oldest unfinished, next to transmit, next free */
	uint32_t sq_prod;                /* producer counter the doorbells reported (BBs) */
	uint32_t psn_next;               /* next PSN to put on a new request packet */
	uint32_t una;                    /* oldest PSN not yet acknowledged */
	uint64_t timer_at;               /* local ACK timer deadline (0: off) */
	uint64_t rnr_at;                 /* RNR wait ends (0: not waiting) */
	bool rnr_probe;                  /* after an RNR NAK: one packet in flight until an ACK */
	uint8_t retry_left, rnr_left;
	uint32_t rd_out;                 /* READ/atomic WQEs in flight */
	uint32_t last_rtx_psn;
	uint32_t rtx_mark;               /* packets before this PSN are retransmissions */
	uint64_t last_rtx_ns;
	/* responder */
	uint32_t epsn;
	uint32_t msn;
	int prev_op;                     /* last accepted request opcode of an open message */
	bool nak_seq_sent;
	bool rwqe_valid;
	struct emu_rwqe rwqe;
	uint64_t rcv_off;                /* bytes received into rwqe */
	uint64_t wr_va;                  /* WRITE in progress */
	uint32_t wr_rkey;
	uint64_t wr_left;
	bool ack_pending;
	bool ack_queued;                 /* the QPN is in tp->ackq */
	uint32_t ack_psn;
	uint32_t ack_dip;
	uint32_t ack_sent_psn;           /* PSN of the last positive ACK sent */
	struct emu_rres res[EMU_TP_MAX_RES];
	unsigned res_next;
	bool uc_drop;                    /* UC: rest of this message is dropped */
};

/* The send WQE of free-running index i (EMU_TP_SWQE_SLOTS is a power of two). */
static inline struct emu_swqe *emu_tq_slot(struct emu_tq *tq, uint32_t i)
{
	return &tq->ring[i & (EMU_TP_SWQE_SLOTS - 1)];
}

struct emu_tp_fault_state {
	struct emu_wire_faults f;
	uint64_t rng;
	bool link_down;
	uint8_t *held;                   /* one packet held back for reordering */
	size_t held_len;
	struct emu_roce_ip held_ip;
	uint64_t held_at;
};

/* The device's data plane. */
struct emu_tp {
	struct emu_dev *d;
	struct emu_roce_sock sock;
	bool sock_ok;
	bool gro_allowed;                /* the socket may coalesce, once a run arrives (rx_dispatch) */
	struct emu_tq *qtab[256];        /* hash by QPN */
	struct emu_tp_counters ctr;
	struct emu_tp_fault_state flt;
	uint8_t tx[EMU_TP_PKT_CAP];
	uint8_t scratch[EMU_TP_PKT_CAP];
	uint8_t *tx_cur;                 /* the packet emu_tp_tx_begin is building */
	size_t tx_hl;                    /* ... its headers' length */
	struct { uint32_t cqn, ci; } cqci[1024]; /* last consumer counter read, by CQN */
	uint32_t *ackq;                  /* QPNs with a coalesced ACK pending */
	uint32_t nackq, ackq_cap;
	/* device thread */
	pthread_t thr;
	bool thr_running;
	int wake_fd;
	volatile int stop;
	uint64_t wake_at;                /* when the thread plans to wake (0: not sleeping) */
	/* receive path: application polls (emu_poll_assist) beside the device thread */
	uint64_t poll_seen;              /* last application poll or post (ns; atomic, no lock;
					  * 0: it armed a CQ) */
	unsigned assist_skip;            /* empty polls counted (emu_poll_assist) */
	unsigned assist_brisk;           /* looks at the wire left at the brisk cadence (atomic) */
	int app_cpu;                     /* where the application's last send doorbell ran, -1 not
	                                  * known (atomic; plat_current_cpu in sq_doorbell.c) */
	uint64_t post_seen;              /* when the last send doorbell ran (atomic; 0: never;
	                                  * emu_tp_app_posts, for rx_spin) */
	int hold_fd;                     /* timerfd ending a sleep off the socket (-1: none) */
	uint64_t hold_ns;                /* the hold: EMU_POLL_HOLD_NS, or the URI's hold_us= */
	int ws_fd;                       /* the thread's wait set (hw/platform/waitset.h) */
	int ws_mc_fd;                    /* the multicast groups' set, once in ws_fd (-1: not yet) */
	bool ws_mc_watched;              /* that set is watched (under watch_mu; sock_watch.c) */
	pthread_mutex_t watch_mu;        /* orders the socket's watch switches (sock_watch.c) */
	int thr_off;                     /* 1: the socket is not watched (atomic; changed under
					  * watch_mu) */
	uint64_t timer_at;               /* when the hold ends: the deadline the kernel's hold timer
					  * holds (ns, CLOCK_MONOTONIC; 0: none, or fired; atomic;
					  * sock_watch.c hold_timer_set) */
	uint64_t hold_expired;           /* when it last fired: the application had stopped (atomic) */
	uint64_t found_at;               /* a poll last returned a WRITE's completion (ns; atomic, no
					  * lock; emu_poll_found) */
	unsigned found_wait_credit;      /* found WRITEs that may still wait for the answer in vain
					  * (atomic, relaxed: racing pollers only shift a wait) */
	unsigned found_wait_skips;       /* found WRITEs that did not wait since the credit ran out */
	unsigned found_keep_score;       /* found WRITEs in a row, answer in hand, after which the
					  * application called before the device thread took packets
					  * (atomic, relaxed; EMU_FOUND_KEEP_EARN) */
	unsigned found_keep_need;        /* the score that earns keeping the socket: EMU_FOUND_KEEP_EARN,
					  * doubled per stall, halved back per as many kept polls
					  * that went well (atomic, relaxed) */
	unsigned found_judged;           /* the last such poll awaits its verdict: EMU_FOUND_SWITCHED
					  * or EMU_FOUND_KEPT; 0 none (atomic) */
	uint64_t rx_requests;            /* request packets received (atomic: emu_poll_found reads
					  * it without the device lock) */
	uint64_t requests_at_post;       /* rx_requests at the last send doorbell (atomic) */
	uint32_t app_in_call;            /* application calls at work inside the device now (a poll
					  * assist's pass, a doorbell; atomic): the hold runs on */
	bool rx_mid_msg;                 /* the last packet received left its message unfinished
					  * (a FIRST or MIDDLE; rx_thread.c rx_finish_message; atomic) */
	struct emu_roce_rx_batch rxb;    /* arrivals, for whoever receives under the device lock */
	/* A multi-packet payload read ahead in one DMA read (emu_payload_read) */
	uint64_t stage_keys;             /* last key handed out: a WQE's seq, a READ's responses */
	struct {
		uint64_t key;                /* whose bytes these are; 0: empty */
		uint64_t off, len;           /* message offset and length held */
		uint8_t *buf;                /* EMU_TP_STAGE_BYTES (mr_check.c, stage_buf) */
		bool nomem;                  /* its allocation failed: read packet by packet */
	} stage;
};

/* transport_core.c */
struct emu_tp *emu_tp_get(struct emu_dev *d);
struct emu_tq *emu_tq_get(struct emu_tp *tp, struct emu_qp *qp);
/* The QP's transport state if it has one (none made). */
struct emu_tq *emu_tq_find(struct emu_tp *tp, const struct emu_qp *qp);
/* The CQ or QP (t: EMU_OBJ_CQ, EMU_OBJ_QP) number `id` a doorbell (named `db` in the log:
 * "CQ doorbell", "send doorbell") rang for through UAR uar_index: NULL, logged as a
 * driver error, when there is none.  One rung through another UAR than the object's is
 * logged and still acted on. */
void *emu_tp_doorbell_obj(struct emu_dev *d, const char *db, enum emu_obj_type t, uint32_t id, uint32_t uar_index);
/* Free one QP's transport state (unlinked by the caller), or every QP's. */
void emu_tq_free(struct emu_tq *tq);
void emu_tq_drop_all(struct emu_tp *tp);
void emu_swqe_release(struct emu_swqe *w);
void emu_tp_foreach_tq(struct emu_tp *tp, void (*fn)(struct emu_tp *, struct emu_tq *, void *), void *arg);
void emu_tp_timer_kick(struct emu_tp *tp, uint64_t at);

/* sock_watch.c: the device thread's watch on the socket, and the hold (docs/
 * architecture.md, "Progress whatever the application does").  The wait set's tags,
 * one bit per member: */
#define EMU_WS_WAKE 1u   /* its wake notification */
#define EMU_WS_HOLD 2u   /* the hold timer */
#define EMU_WS_SOCK 4u   /* the port's socket */
#define EMU_WS_MCG  8u   /* the multicast groups' set */
/* A CQ was armed: the application is about to block for its event: the socket is
 * watched again now, and to rx_spin the application is passive. */
void emu_tp_app_sleeps(struct emu_tp *tp);
/* A send doorbell: noted in post_seen (rx_spin's bound for posts); an application that
 * polls and posts is busy, not passive (rx_spin), unless it armed a CQ since or never
 * polled; it leaves the socket to its polls, or pushes the hold's deadline
 * (EMU_POLL_HOLD_NS) when it is left already. */
void emu_tp_app_posts(struct emu_tp *tp);
/* A doorbell once its packets have left, or a poll assist once its pass is done: the
 * hold timer armed, if the doorbell left the socket to the polls (arming a near timer
 * costs microseconds on virtual CPUs: not before the packets leave), or pushed again if
 * the call's work left less than EMU_POLL_HOLD_PUSH_NS of it. */
void emu_tp_app_done(struct emu_tp *tp);
/* An application is active now (a poll assist, a doorbell): push the hold
 * EMU_POLL_HOLD_NS ahead, if the socket is left to the polls and less than
 * EMU_POLL_HOLD_PUSH_NS of the hold is left (one timerfd_settime). */
void emu_tp_hold(struct emu_tp *tp, uint64_t now);
/* The hold timer fired while the socket is left to the polls (the device thread): the
 * hold runs on if the application is still at work, or it has run out. */
void emu_tp_hold_fired(struct emu_tp *tp);
/* Whether the multicast groups' set is watched beside the socket's state (sock_watch.c:
 * also while the socket is not, as long as no group has a socket open). */
bool emu_tp_groups_watched(struct emu_tp *tp, bool socket_watched);
/* Arm the hold timer to fire at `at` (ns, CLOCK_MONOTONIC); false without one. */
bool emu_tp_hold_arm(struct emu_tp *tp, uint64_t at);
/* Watch the socket, or leave it to the application's polls, as the facts now say: an
 * application polled or posted within EMU_POLL_NOW_NS, since the hold timer last fired
 * and since its last poll that returned a WRITE's completion.  Leaving arms the hold
 * timer EMU_POLL_HOLD_NS ahead; coming back disarms it.  From the device thread or an
 * application thread (found: a poll that returned a WRITE's completion, counted);
 * whether the socket is now left to the polls. */
bool emu_tp_watch_update(struct emu_tp *tp, uint64_t now, bool found);
/* The verdict on the last poll that returned a WRITE's completion with its answer in
 * hand (EMU_FOUND_KEEP_EARN; rx_thread.c emu_poll_found).  What such a poll awaits
 * (tp->found_judged): */
#define EMU_FOUND_SWITCHED 1u   /* it gave the socket back to the device thread */
#define EMU_FOUND_KEPT 2u       /* it left the socket to the polls (found_kept) */
enum emu_found_verdict {
	EMU_FOUND_APP_FIRST,      /* the application called again: a doorbell, a poll that
				   * looks, a found WRITE, an armed CQ */
	EMU_FOUND_THREAD_FIRST,   /* the device thread took packets before that */
	EMU_FOUND_STALLED,        /* a kept socket's hold ran out with arrivals waiting in it */
};
void emu_found_verdict(struct emu_tp *tp, enum emu_found_verdict v);

/* wire_faults.c: send a sealed packet through the fault model */
int emu_tp_xmit(struct emu_tp *tp, const struct emu_roce_ip *ip, uint8_t *pkt, size_t len);
void emu_tp_faults_timer(struct emu_tp *tp, uint64_t now, uint64_t *next);
void emu_tp_faults_fini(struct emu_tp *tp);

/* sq_doorbell.c: registers the send doorbell/BlueFlame hook */
int emu_sq_area_init(struct emu_dev *d);

/* sq_engine.c */
#define EMU_TP_WQE_MAX_BYTES (63u * 16u)   /* a send WQE's largest size (ctrl ds: 63 segments) */
void emu_sq_run(struct emu_tp *tp, struct emu_tq *tq);
void emu_sq_transmit(struct emu_tp *tp, struct emu_tq *tq);
/* A BlueFlame store carried the whole next WQE (nbb basic blocks in b): take it without
 * a DMA read and transmit. */
void emu_sq_take_bf(struct emu_tp *tp, struct emu_tq *tq, const uint8_t *b, size_t nbytes, unsigned nbb);
void emu_req_arm_timer(struct emu_tp *tp, struct emu_tq *tq);
/* Build and send one packet on a QP's path: headers h (psn etc. filled by caller),
 * payload from buf (may be NULL with len 0). */
int emu_tp_send(struct emu_tp *tp, struct emu_tq *tq, uint32_t dip, uint16_t sport, uint8_t tos,
		struct emu_roce_hdrs *h, const void *payload, size_t len);
/* The same in two steps, for a payload read from memory: begin writes h's headers where
 * the packet will leave from (emu_roce_sock_tx_buf while corked, else tp->tx) and sets
 * *payload to where its len bytes go; the caller writes them there and calls end, which
 * seals and sends it, or drops it unsent (nothing else may send in between).  No port
 * at dip: *payload is scratch room and end counts tx_no_port, as emu_tp_send. */
int emu_tp_tx_begin(struct emu_tp *tp, uint32_t dip, struct emu_roce_hdrs *h, size_t len, uint8_t **payload);
int emu_tp_tx_end(struct emu_tp *tp, uint32_t dip, uint16_t sport, uint8_t tos, const struct emu_roce_hdrs *h,
		  size_t len);
uint32_t emu_qp_dip(const struct emu_qp *qp);
uint16_t emu_qp_sport(const struct emu_qp *qp);
uint32_t emu_qp_mtu_bytes(const struct emu_qp *qp);

/* rc_req.c */
void emu_rc_req_rx(struct emu_tp *tp, struct emu_tq *tq, const struct emu_roce_pkt *p);
void emu_req_timers(struct emu_tp *tp, struct emu_tq *tq, uint64_t now, uint64_t *next);
void emu_req_go_back(struct emu_tp *tp, struct emu_tq *tq, uint32_t psn);

/* rc_resp.c */
void emu_rc_resp_rx(struct emu_tp *tp, struct emu_tq *tq, const struct emu_roce_pkt *p, const struct emu_roce_ip *env);
void emu_resp_send_ack(struct emu_tp *tp, struct emu_tq *tq, uint8_t syndrome, uint32_t psn);
/* Send the ACKs coalesced during a receive pass (rc_resp.c queue_ack). */
void emu_resp_flush_acks(struct emu_tp *tp);
/* The QP goes (destroy, reset, teardown): a held ACK leaves now, or the peer, which
 * already has its completion's data placed here, would retry into nothing. */
void emu_resp_ack_now(struct emu_tp *tp, struct emu_tq *tq);

/* uc_ud.c */
void emu_uc_rx(struct emu_tp *tp, struct emu_tq *tq, const struct emu_roce_pkt *p);
void emu_ud_rx(struct emu_tp *tp, struct emu_tq *tq, const struct emu_roce_pkt *p, const struct emu_roce_ip *env,
	       size_t roce_len);

/* qp_complete.c: send WQEs completed in order from the head; the head fails and the QP
 * goes to error; every WQE of a QP in error flushes. */
void emu_req_complete_head(struct emu_tp *tp, struct emu_tq *tq);
void emu_req_retire(struct emu_tp *tp, struct emu_tq *tq);
/* Whether the QP has sends posted but not yet taken, or taken with a CQE still to come
 * (ctrl ce 2); unsignalled ones complete without one. */
bool emu_req_signalled_outstanding(struct emu_tq *tq);
void emu_qp_error(struct emu_tp *tp, struct emu_tq *tq, int failed_syndrome);
void emu_qp_flush(struct emu_tp *tp, struct emu_tq *tq);

/* rq.c */
int emu_rq_peek(struct emu_dev *d, struct emu_qp *qp, struct emu_rwqe *w);
/* Receive WQEs posted and not yet consumed on the QP's own receive queue; -1 for an
 * SRQ or no receive queue (no end-to-end credits to give). */
int emu_rq_credits(struct emu_dev *d, struct emu_qp *qp);
void emu_rq_consume(struct emu_dev *d, struct emu_qp *qp);
/* Flush every posted receive WQE of a QP in error (WR_FLUSH_ERR CQEs). */
void emu_rq_flush(struct emu_tp *tp, struct emu_qp *qp);
/* Where receive completions go: an XRC target QP's to the CQ of the XRC SRQ the
 * request named (PRM "XRC SRQ": xrc_srqc.cqn), any other QP's to its cqn_rcv. */
uint32_t emu_rq_cqn(struct emu_tp *tp, const struct emu_qp *qp);
/* The SRQ WQE a message took at its first packet (rc_resp.c need_rwqe) when the QP
 * goes to error before the message completes: it completes with a flush error. */
void emu_rq_flush_held(struct emu_tp *tp, struct emu_tq *tq);

/* cqe.c */
struct emu_cqe_info {
	uint8_t opcode;              /* CQE opcode (REQ 0, RESP_* 1..4, REQ_ERR 13, RESP_ERR 14) */
	uint8_t syndrome;            /* error CQEs */
	uint8_t s_wqe_opcode;
	uint32_t qpn;
	uint16_t wqe_counter;
	uint32_t byte_cnt;
	uint32_t imm;
	uint32_t rqpn;
	uint32_t srqn;
	uint8_t grh;
	uint8_t sl;                  /* RoCE UD receive: the L3 header type (EMU_CQE_L3_*) */
	bool se;
};
/* Write a CQE to CQ cqn (owner bit by lap), raise the completion event if the CQ is
 * armed for it.  -ENOSPC on overrun (CQ error event posted), -ENOENT no such CQ. */
int emu_cqe_post(struct emu_tp *tp, uint32_t cqn, const struct emu_cqe_info *ci);
int emu_cqe_area_init(struct emu_dev *d);
/* CQE "sl" of a UD receive on a RoCE port (PRM CQE format; the layout UCX's
 * ud_iface.h quotes): bit 3 the frame carried a UDP header (RoCE v2), bits 2:0 the L3
 * header type: 0 GRH (RoCE v1), 1 IPv6, 2 IPv4 (mlx5dv.h MLX5_CQE_L3_HDR_TYPE_*). */
enum { EMU_CQE_L3_UDP = 0x8, EMU_CQE_L3_GRH = 0x0, EMU_CQE_L3_IPV6 = 0x1, EMU_CQE_L3_IPV4 = 0x2 };

/* mr_check.c: copies between a local SGE list / a remote key's window and buf.  off is
 * the byte offset into the list.  0, or -ENOENT (no such key), -EACCES (PD or rights),
 * -ERANGE (outside the region), -EMSGSIZE (past the list's end), -EFAULT (DMA). */
int emu_sgl_read(struct emu_dev *d, uint32_t pdn, const struct emu_tp_sge *s, unsigned n, uint64_t off, void *buf,
		 size_t len);
int emu_sgl_write(struct emu_dev *d, uint32_t pdn, const struct emu_tp_sge *s, unsigned n, uint64_t off,
		  const void *buf, size_t len);
int emu_rkey_access(struct emu_dev *d, uint32_t pdn, uint32_t rkey, unsigned access, uint64_t va, void *buf,
		    size_t len, bool write);
/* Where a payload's bytes come from: a local SGE list (sge != NULL), or a remote key's
 * window from va (READ responses). */
struct emu_payload_src {
	uint32_t pdn;
	const struct emu_tp_sge *sge;
	unsigned nsge;
	uint32_t rkey;
	uint64_t va;
};
/* Bytes [off, off + len) of a payload of `total` bytes into dst.  When reading
 * application memory costs a system call (emu_iommu_reads_syscall: copy=syscall, or a
 * device daemon's clients' memory), one of several packets is read ahead: up to
 * EMU_TP_STAGE_BYTES in one DMA read (one system call instead of one a packet), kept
 * under `key` (tp->stage_keys hands them out), so no other message ever sees its bytes;
 * later packets and resends under the same key copy from there.  Otherwise (the
 * guarded copy) every packet reads its own bytes straight into dst.  A window that cannot be read whole is dropped
 * and the packet reads its own bytes, so a fault is reported for exactly the packet
 * that meets it.  Returns as emu_sgl_read / emu_rkey_access. */
int emu_payload_read(struct emu_tp *tp, uint64_t key, const struct emu_payload_src *src, uint64_t total, uint64_t off,
		     void *dst, size_t len);
/* Allocate the read-ahead window at the transport's setup if the IOMMU already copies
 * with system calls, so the data path never allocates it (a failure leaves it off). */
void emu_tp_stage_init(struct emu_tp *tp);
/* Check a remote window without touching it. */
int emu_rkey_check(struct emu_dev *d, uint32_t pdn, uint32_t rkey, unsigned access, uint64_t va, uint64_t len);
int emu_sgl_check(struct emu_dev *d, uint32_t pdn, const struct emu_tp_sge *s, unsigned n, unsigned access);

/* rx_thread.c */
int emu_rx_start(struct emu_tp *tp);
void emu_rx_stop(struct emu_tp *tp);

/* rx_check.c: check one arrival and hand it to its transport */
void emu_tp_rx_packet(struct emu_tp *tp, uint8_t *buf, size_t len, const struct emu_roce_ip *env);

#endif /* EMU_TP_INTERNAL */
#endif
