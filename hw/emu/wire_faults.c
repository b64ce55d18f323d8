/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Wire faults on demand (hw/emu/README.md): what leaves an emulated
 * port can be lost, held back and sent after the next packet (reordering), sent twice,
 * or corrupted (one bit flipped after the ICRC, so the receiver drops it as a bad ICRC),
 * each at a given rate, from a seeded generator so that a run can be repeated; link
 * down drops everything in both directions.  Counted per fault. */
#define EMU_TP_INTERNAL
#include "hw/emu/transport.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define EMU_REORDER_HOLD_NS 1000000ull   /* a held packet leaves after 1 ms at most */

static double rnd(struct emu_tp_fault_state *s)
{
	/* xorshift64*: fast, and repeatable for a given seed */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return (double)((s->rng * 0x2545f4914f6cdd1dull) >> 11) / (double)(1ull << 53);
}

static void send_held(struct emu_tp *tp)
{
	struct emu_tp_fault_state *s = &tp->flt;

	if (!s->held)
		return;
	(void)emu_roce_sock_send(&tp->sock, &s->held_ip, s->held, s->held_len, NULL);
	free(s->held);
	s->held = NULL;
}

int emu_tp_xmit(struct emu_tp *tp, const struct emu_roce_ip *ip, uint8_t *pkt, size_t len)
{
	struct emu_tp_fault_state *s = &tp->flt;
	int rc;

	if (!tp->sock_ok)
		return -ENOTCONN;
	if (s->link_down) {
		tp->ctr.link_down_drops++;
		return 0;
	}
	if (s->f.loss > 0 && rnd(s) < s->f.loss) {
		tp->ctr.fault_lost++;
		return 0;
	}
	if (s->f.corrupt > 0 && rnd(s) < s->f.corrupt && len) {
		size_t at = (size_t)(rnd(s) * (double)len);

		pkt[at < len ? at : len - 1] ^= (uint8_t)(1u << (s->rng & 7));
		tp->ctr.fault_corrupted++;
	}
	if (s->f.reorder > 0 && !s->held && rnd(s) < s->f.reorder) {
		s->held = malloc(len);
		if (s->held) {
			memcpy(s->held, pkt, len);
			s->held_len = len;
			s->held_ip = *ip;
			s->held_at = emu_now_ns() + EMU_REORDER_HOLD_NS;
			tp->ctr.fault_reordered++;
			emu_tp_timer_kick(tp, s->held_at);
			return 0;
		}
	}
	rc = emu_roce_sock_send(&tp->sock, ip, pkt, len, NULL);
	if (s->f.dup > 0 && rnd(s) < s->f.dup) {
		(void)emu_roce_sock_send(&tp->sock, ip, pkt, len, NULL);
		tp->ctr.fault_dup++;
	}
	send_held(tp);
	return rc < 0 ? rc : 0;
}

void emu_tp_faults_timer(struct emu_tp *tp, uint64_t now, uint64_t *next)
{
	if (!tp->flt.held)
		return;
	if (now >= tp->flt.held_at)
		send_held(tp);
	else if (tp->flt.held_at < *next)
		*next = tp->flt.held_at;
}

void emu_tp_faults_fini(struct emu_tp *tp)
{
	free(tp->flt.held);
	tp->flt.held = NULL;
}

static bool rate_ok(double r)
{
	return r >= 0.0 && r <= 1.0;
}

int emu_wire_faults_set(struct emu_dev *d, const struct emu_wire_faults *f)
{
	struct emu_tp *tp;

	if (!d || !f || !rate_ok(f->loss) || !rate_ok(f->reorder) || !rate_ok(f->dup) || !rate_ok(f->corrupt))
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	tp = emu_tp_get(d);
	if (tp) {
		tp->flt.f = *f;
		if (f->seed) {
			/* the engines of one daemon all take its seed= (tools/uvd/engine.c): each
			 * mixes its own address in, so two clients do not lose the same packets
			 * in step; a run is repeated as long as the clients get the same addresses */
			uint64_t r = f->seed ^ (d->cfg.engine ? (uint64_t)d->ipv4 << 32 : 0);

			tp->flt.rng = r ? r : f->seed;
		}
	}
	pthread_mutex_unlock(&d->lock);
	return tp ? 0 : -ENODEV;
}

void emu_wire_link_set(struct emu_dev *d, int up)
{
	struct emu_tp *tp;

	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	tp = emu_tp_get(d);
	if (tp)
		tp->flt.link_down = !up;
	pthread_mutex_unlock(&d->lock);
}
