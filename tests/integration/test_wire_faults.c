/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RC over a faulty wire: loss, reordering and duplication at 1% and 5% on both NICs'
 * transmit sides; a mix of SEND, WRITE, READ and FETCH_ADD, up to 16 in flight, must
 * all complete successfully with exact data (xxHash per operation) and an exact final
 * atomic counter, while the counters show the faults and the recoveries
 * (retransmissions, duplicates).  TP_FAULT_OPS sets the count (default 10,000). */
#include "tp_pair.h"

static struct tp_nic A, B;
static struct tp_ep qa, qb;
static uint8_t *abuf, *bbuf;
static struct mx5_mr *amr, *bmr;

#define SLOTS 16u
#define SLOT (16u << 10)
#define BUFLEN (SLOTS * SLOT + 4096)
#define CTR_OFF (SLOTS * SLOT)

static const struct tp_fixture fx = { &A, &B, &qa, &qb, &abuf, &bbuf, &amr, &bmr, BUFLEN };

static void teardown(void)
{
	tp_fixture_close(&fx);
}

struct op {
	enum ibv_wr_opcode code;
	uint32_t len;
	uint64_t hash;
	bool busy;
};

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

static void run_mix(double rate, unsigned nops)
{
	struct tp_conn c = { .mtu = 3, .sq_psn = 0xffff00, .rq_psn = 77, .timeout = 12, .retry_cnt = 7,
			     .rnr_retry = 7, .min_rnr_timer = 1 };
	struct emu_wire_faults f = { .loss = rate, .reorder = rate, .dup = rate, .seed = 12345 };
	unsigned acc = MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ |
		       MX5_ACCESS_REMOTE_ATOMIC;
	struct op ops[SLOTS];
	uint64_t send_fifo[SLOTS * 2];
	unsigned fifo_h = 0, fifo_t = 0, posted = 0, done = 0, recv_posted = 0, recvs_done = 0, inflight = 0;
	uint64_t fa_sum = 0, t_end;
	struct ibv_wc wc;
	const char *env = getenv("TP_FAULT_OPS");

	if (env && atoi(env) > 0)
		nops = (unsigned)atoi(env);
	tp_fixture_open(&fx, "emu:", "emu:", 8192, MX5_QPT_RC, 64, acc, &c);
	memset(ops, 0, sizeof(ops));
	cr_assert_eq(emu_wire_faults_set(A.emu, &f), 0);
	f.seed = 999;
	cr_assert_eq(emu_wire_faults_set(B.emu, &f), 0);
	/* B's receive slots: the upper half of each B slot */
	for (; recv_posted < 32; recv_posted++)
		cr_assert_eq(tp_post_recv(&qb, recv_posted, bbuf + (recv_posted % SLOTS) * SLOT + SLOT / 2, SLOT / 2,
					  tp_lkey(bmr)), 0);
	t_end = tp_now_ms() + 240000;
	while (done < nops) {
		cr_assert_lt(tp_now_ms(), t_end, "%u of %u operations done in 240 s", done, nops);
		while (posted < nops && inflight < SLOTS) {
			unsigned s = posted % SLOTS, kind = rnd() % 4;
			uint8_t *la = abuf + s * SLOT;
			struct op *o = &ops[s];

			cr_assert(!o->busy);
			o->len = 1 + rnd() % (SLOT / 2 - 1);
			switch (kind) {
			case 0:   /* SEND into B's next receive */
				o->code = IBV_WR_SEND;
				tp_fill(la, o->len, posted);
				o->hash = XXH64(la, o->len, 0);
				send_fifo[fifo_t++ % (SLOTS * 2)] = o->hash ^ o->len;
				cr_assert_eq(tp_post(&qa, IBV_WR_SEND, s, la, o->len, tp_lkey(amr), 0, 0, IBV_SEND_SIGNALED), 0);
				break;
			case 1:   /* WRITE into B's slot */
				o->code = IBV_WR_RDMA_WRITE;
				tp_fill(la, o->len, posted);
				o->hash = XXH64(la, o->len, 0);
				cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE, s, la, o->len, tp_lkey(amr),
						     (uintptr_t)(bbuf + s * SLOT), tp_rkey(bmr), IBV_SEND_SIGNALED), 0);
				break;
			case 2:   /* READ B's slot (its lower half, filled by B's "application") */
				o->code = IBV_WR_RDMA_READ;
				tp_fill(bbuf + s * SLOT, o->len, posted ^ 0xabcdef);
				o->hash = XXH64(bbuf + s * SLOT, o->len, 0);
				cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_READ, s, la, o->len, tp_lkey(amr),
						     (uintptr_t)(bbuf + s * SLOT), tp_rkey(bmr), IBV_SEND_SIGNALED), 0);
				break;
			default:  /* FETCH_ADD on the shared counter */
				o->code = IBV_WR_ATOMIC_FETCH_AND_ADD;
				o->len = 8;
				fa_sum += posted;
				cr_assert_eq(tp_post_atomic(&qa, IBV_WR_ATOMIC_FETCH_AND_ADD, s, la, tp_lkey(amr),
							    (uintptr_t)(bbuf + CTR_OFF), tp_rkey(bmr), posted, 0), 0);
				break;
			}
			o->busy = true;
			posted++;
			inflight++;
		}
		while (tp_poll(&B, &wc, 0)) {
			uint8_t *p = bbuf + (wc.wr_id % SLOTS) * SLOT + SLOT / 2;

			cr_assert_eq(wc.status, IBV_WC_SUCCESS, "receive status %d", wc.status);
			cr_assert_neq(fifo_h, fifo_t);
			cr_assert_eq(XXH64(p, wc.byte_len, 0) ^ wc.byte_len, send_fifo[fifo_h++ % (SLOTS * 2)],
				     "SEND %u: data differs", recvs_done);
			recvs_done++;
			cr_assert_eq(tp_post_recv(&qb, recv_posted, bbuf + (recv_posted % SLOTS) * SLOT + SLOT / 2,
						  SLOT / 2, tp_lkey(bmr)), 0);
			recv_posted++;
		}
		if (tp_poll(&A, &wc, 1)) {
			struct op *o = &ops[wc.wr_id % SLOTS];
			uint8_t *la = abuf + (wc.wr_id % SLOTS) * SLOT;

			cr_assert_eq(wc.status, IBV_WC_SUCCESS, "op %u (%d, %u bytes): status %d vendor 0x%x", done,
				     o->code, o->len, wc.status, wc.vendor_err);
			cr_assert(o->busy);
			if (o->code == IBV_WR_RDMA_WRITE)
				cr_assert_eq(XXH64(bbuf + (wc.wr_id % SLOTS) * SLOT, o->len, 0), o->hash, "WRITE data differs");
			else if (o->code == IBV_WR_RDMA_READ)
				cr_assert_eq(XXH64(la, o->len, 0), o->hash, "READ data differs");
			o->busy = false;
			done++;
			inflight--;
		}
	}
	/* drain the receives of the last SENDs */
	for (uint64_t end = tp_now_ms() + 10000; fifo_h != fifo_t && tp_now_ms() < end;) {
		if (tp_poll(&B, &wc, 10)) {
			uint8_t *p = bbuf + (wc.wr_id % SLOTS) * SLOT + SLOT / 2;

			cr_assert_eq(wc.status, IBV_WC_SUCCESS);
			cr_assert_eq(XXH64(p, wc.byte_len, 0) ^ wc.byte_len, send_fifo[fifo_h++ % (SLOTS * 2)]);
		}
	}
	cr_assert_eq(fifo_h, fifo_t, "receives missing");
	cr_assert_eq(*(uint64_t *)(bbuf + CTR_OFF), fa_sum, "FETCH_ADD counter: atomics executed twice or lost");
	{
		struct emu_tp_counters ca = tp_ctr(&A), cb = tp_ctr(&B);

		cr_log_info("%u ops at %.0f%% loss/reorder/dup: A lost %llu dup %llu reordered %llu rtx %llu timeouts %llu;"
			    " B dups seen %llu read replays %llu atomic replays %llu naks(seq) sent %llu",
			    nops, rate * 100, (unsigned long long)ca.fault_lost, (unsigned long long)ca.fault_dup,
			    (unsigned long long)ca.fault_reordered, (unsigned long long)ca.retransmits,
			    (unsigned long long)ca.timeouts, (unsigned long long)cb.duplicates,
			    (unsigned long long)cb.read_replays, (unsigned long long)cb.atomic_replays,
			    (unsigned long long)cb.naks_sent[0]);
		cr_assert_gt(ca.fault_lost + cb.fault_lost, 0);
		cr_assert_gt(ca.fault_dup, 0);
		cr_assert_gt(ca.fault_reordered, 0);
		cr_assert_gt(ca.retransmits, 0);
		cr_assert_gt(cb.duplicates, 0);
	}
}

TestSuite(wire_faults, .fini = teardown, .timeout = 300);

Test(wire_faults, mixed_ops_complete_exactly_with_1_percent_loss_reorder_dup)
{
	run_mix(0.01, 10000);
}

Test(wire_faults, mixed_ops_complete_exactly_with_5_percent_loss_reorder_dup)
{
	run_mix(0.05, 10000);
}

Test(wire_faults, link_down_drops_everything_and_link_up_recovers)
{
	struct tp_conn c = { .mtu = 3, .timeout = 12, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1 };
	struct ibv_wc wc;
	unsigned acc = MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE;

	tp_fixture_open(&fx, "emu:", "emu:", 256, MX5_QPT_RC, 16, acc, &c);
	emu_wire_link_set(B.emu, 0);
	tp_fill(abuf, 5000, 1);
	cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE, 1, abuf, 5000, tp_lkey(amr), (uintptr_t)bbuf, tp_rkey(bmr),
			     IBV_SEND_SIGNALED), 0);
	usleep(40000);
	cr_assert_eq(tp_poll(&A, &wc, 1), 0);
	cr_assert_gt(tp_ctr(&B).link_down_drops, 0);
	emu_wire_link_set(B.emu, 1);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	cr_assert_eq(memcmp(abuf, bbuf, 5000), 0);
	cr_assert_gt(tp_ctr(&A).timeouts, 0);
}

Test(wire_faults, fault_options_parse_and_refuse_bad_rates)
{
	struct emu_wire_faults f = { 0 };
	int up = 1;

	cr_assert_eq(emu_wire_faults_parse("loss=0.01,reorder=0.05,dup=0.01,corrupt=0.001,link=down", &f, &up), 0);
	cr_assert_float_eq(f.loss, 0.01, 1e-12);
	cr_assert_float_eq(f.reorder, 0.05, 1e-12);
	cr_assert_float_eq(f.dup, 0.01, 1e-12);
	cr_assert_float_eq(f.corrupt, 0.001, 1e-12);
	cr_assert_eq(up, 0);
	cr_assert_eq(emu_wire_faults_parse("loss=1.5", &f, &up), -EINVAL);
	cr_assert_eq(emu_wire_faults_parse("jitter=0.1", &f, &up), -EINVAL);
}

Test(wire_faults, corrupted_packets_are_dropped_as_bad_icrc_and_recovered)
{
	struct tp_conn c = { .mtu = 3, .timeout = 10, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1 };
	struct emu_wire_faults f = { .corrupt = 0.05, .seed = 7 };
	struct ibv_wc wc;
	unsigned acc = MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE;

	tp_fixture_open(&fx, "emu:", "emu:", 256, MX5_QPT_RC, 16, acc, &c);
	cr_assert_eq(emu_wire_faults_set(A.emu, &f), 0);
	for (int i = 0; i < 20; i++) {
		tp_fill(abuf, SLOT * 4, (uint32_t)i);
		cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE, (uint64_t)i, abuf, SLOT * 4, tp_lkey(amr), (uintptr_t)bbuf,
				     tp_rkey(bmr), IBV_SEND_SIGNALED), 0);
		tp_expect(&A, &wc, IBV_WC_SUCCESS, 10000);
		cr_assert_eq(XXH64(abuf, SLOT * 4, 0), XXH64(bbuf, SLOT * 4, 0));
	}
	cr_assert_gt(tp_ctr(&A).fault_corrupted, 0);
	cr_assert_eq(tp_ctr(&B).drops[EMU_ROCE_DROP_ICRC], tp_ctr(&A).fault_corrupted);
}

/* The same faults from the device URI (hw/emu/README.md: URI options and the test API in transport.h). */
Test(wire_faults, uri_options_apply_loss_and_link_state)
{
	struct tp_conn c = { .mtu = 3, .timeout = 12, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1 };
	struct ibv_wc wc;
	unsigned acc = MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE;

	tp_fixture_open(&fx, "emu:loss=0.2,seed=5", "emu:link=down", 256, MX5_QPT_RC, 16, acc, &c);
	tp_fill(abuf, SLOT * 4, 3);
	cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE, 1, abuf, SLOT * 4, tp_lkey(amr), (uintptr_t)bbuf, tp_rkey(bmr),
			     IBV_SEND_SIGNALED), 0);
	usleep(40000);
	cr_assert_gt(tp_ctr(&B).link_down_drops, 0, "link=down from the URI drops arrivals");
	emu_wire_link_set(B.emu, 1);
	tp_expect(&A, &wc, IBV_WC_SUCCESS, 10000);
	cr_assert_eq(XXH64(abuf, SLOT * 4, 0), XXH64(bbuf, SLOT * 4, 0));
	for (int i = 0; i < 20; i++) {
		cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE, (uint64_t)i, abuf, SLOT * 4, tp_lkey(amr), (uintptr_t)bbuf,
				     tp_rkey(bmr), IBV_SEND_SIGNALED), 0);
		tp_expect(&A, &wc, IBV_WC_SUCCESS, 10000);
	}
	cr_assert_gt(tp_ctr(&A).fault_lost, 0, "loss=0.2 from the URI loses packets");
}

Test(wire_faults, uri_refuses_a_bad_fault_rate_naming_the_option)
{
	struct mx5_device *dev = NULL;

	cr_assert_eq(mx5_device_open("emu:loss=1.5", &dev), -EINVAL);
	cr_assert_null(dev);
	cr_assert_not_null(strstr(mx5_open_error(), "loss"), "%s", mx5_open_error());
}
