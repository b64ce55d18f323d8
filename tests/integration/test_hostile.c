/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Hostile packets against an emulated NIC's RC QP, forged with the wire layer's builder
 * and sent from the connected peer's own address and socket (so only the property under
 * test is wrong): wrong rkey, out of bounds, no remote-write right, another PD's MR,
 * unknown QPN, bad ICRC, PSN far ahead, bad P_Key.  Each is rejected as the IBTA says
 * (NAK or silent drop), counted by reason, and the target page and the guard pages
 * around it stay byte for byte unchanged.  A well-formed forged WRITE is accepted, so
 * the forging itself is known to work. */
#include "tp_pair.h"

static struct tp_nic A, B;
static struct tp_ep qa, qb;
static uint8_t *area;               /* guard page | target page | guard page */
static struct mx5_mr *bmr;
#define RQ_PSN 1000u   /* what B expects next: A's sq_psn */
#define PG 4096u

static void victim(unsigned access, int other_pd)
{
	struct tp_conn c = { .mtu = 3, .sq_psn = RQ_PSN, .rq_psn = 50, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
			     .min_rnr_timer = 1 };
	struct mx5_pd *pd2;

	tp_nic_open(&A, "emu:", 256);
	tp_nic_open(&B, "emu:", 256);
	tp_qp_create(&qa, &A, MX5_QPT_RC, 16, NULL);
	tp_qp_create(&qb, &B, MX5_QPT_RC, 16, NULL);
	tp_connect(&qa, &qb, &c);
	area = tp_alloc(3 * PG);
	memset(area, 0xab, 3 * PG);
	memset(area + PG, 0x5c, PG);
	if (other_pd) {
		struct mx5_mr *mr = NULL;

		cr_assert_eq(mx5_pd_alloc(B.dev, &pd2), 0);
		cr_assert_eq(mx5_mr_reg(pd2, area + PG, PG, access, &mr), 0, "%s", mx5_device_error(B.dev));
		bmr = mr;
	} else {
		bmr = tp_mr(&B, area + PG, PG, access);
	}
}

static void teardown(void)
{
	tp_nic_close(&A);
	tp_nic_close(&B);
	if (area)
		munmap(area, 3 * PG);
	area = NULL;
}

static void assert_untouched(void)
{
	for (unsigned i = 0; i < PG; i++) {
		cr_assert_eq(area[i], 0xab, "guard page before the MR changed at %u", i);
		cr_assert_eq(area[PG + i], 0x5c, "target page changed at %u", i);
		cr_assert_eq(area[2 * PG + i], 0xab, "guard page after the MR changed at %u", i);
	}
}

struct forge_opts {
	uint32_t dqpn, psn, rkey, dlen;
	uint64_t va;
	uint16_t pkey;
	uint32_t icrc_xor;
	uint8_t opcode;         /* 0: RC RDMA WRITE ONLY */
};

/* A forged RC RDMA WRITE ONLY of dlen bytes of 0xee, from A's address to B. */
static void send_forged(const struct forge_opts *o)
{
	uint8_t payload[4096];
	struct emu_roce_hdrs h;
	struct emu_roce_forge f = { .icrc_xor = o->icrc_xor };

	memset(&h, 0, sizeof(h));
	memset(payload, 0xee, sizeof(payload));
	h.bth.opcode = o->opcode ? o->opcode : EMU_ROCE_RC_WRITE_ONLY;
	h.bth.pkey = o->pkey ? o->pkey : EMU_ROCE_DEFAULT_PKEY;
	h.bth.dqpn = o->dqpn ? o->dqpn : qb.qpn;
	h.bth.psn = o->psn;
	h.bth.ackreq = true;
	h.reth.va = o->va;
	h.reth.rkey = o->rkey;
	h.reth.dlen = o->dlen;
	tp_inject_forged(&A, &B, &h, payload, o->dlen, &f);
	usleep(30000);   /* let B's device thread judge it */
}

static struct forge_opts good(void)
{
	struct forge_opts o = { .psn = RQ_PSN, .rkey = tp_rkey(bmr), .va = (uintptr_t)(area + PG + 128), .dlen = 64 };

	return o;
}

static const unsigned RW = MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ;

TestSuite(hostile, .fini = teardown, .timeout = 60);

Test(hostile, well_formed_forged_write_is_accepted)
{
	struct forge_opts o;

	victim(RW, 0);
	o = good();
	send_forged(&o);
	for (unsigned i = 0; i < 64; i++)
		cr_assert_eq(area[PG + 128 + i], 0xee);
	cr_assert_eq(area[PG + 127], 0x5c);
	cr_assert_eq(area[PG + 192], 0x5c);
	cr_assert_eq(tp_ctr(&B).acks_sent, 1);
}

Test(hostile, wrong_rkey_is_naked_remote_access_and_writes_nothing)
{
	struct forge_opts o;

	victim(RW, 0);
	o = good();
	o.rkey ^= 0x5500;
	send_forged(&o);
	assert_untouched();
	cr_assert_eq(tp_ctr(&B).naks_sent[EMU_AETH_NAK_REM_ACCESS], 1);
}

Test(hostile, write_past_the_mr_end_is_naked_and_the_guard_page_unchanged)
{
	struct forge_opts o;

	victim(RW, 0);
	o = good();
	o.va = (uintptr_t)(area + 2 * PG - 32);
	send_forged(&o);
	assert_untouched();
	cr_assert_eq(tp_ctr(&B).naks_sent[EMU_AETH_NAK_REM_ACCESS], 1);
}

Test(hostile, write_before_the_mr_start_is_naked)
{
	struct forge_opts o;

	victim(RW, 0);
	o = good();
	o.va = (uintptr_t)(area + PG - 16);
	send_forged(&o);
	assert_untouched();
	cr_assert_eq(tp_ctr(&B).naks_sent[EMU_AETH_NAK_REM_ACCESS], 1);
}

Test(hostile, write_without_remote_write_right_is_naked)
{
	struct forge_opts o;

	victim(MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_READ, 0);
	o = good();
	send_forged(&o);
	assert_untouched();
	cr_assert_eq(tp_ctr(&B).naks_sent[EMU_AETH_NAK_REM_ACCESS], 1);
}

Test(hostile, write_to_another_pds_mr_is_naked)
{
	struct forge_opts o;

	victim(RW, 1);
	o = good();
	send_forged(&o);
	assert_untouched();
	cr_assert_eq(tp_ctr(&B).naks_sent[EMU_AETH_NAK_REM_ACCESS], 1);
}

Test(hostile, unknown_qpn_is_dropped_and_counted)
{
	struct forge_opts o;

	victim(RW, 0);
	o = good();
	o.dqpn = 0xabcdef;
	send_forged(&o);
	assert_untouched();
	cr_assert_eq(tp_ctr(&B).drops[EMU_ROCE_DROP_QPN], 1);
	cr_assert_eq(tp_ctr(&B).tx_pkts, 0, "a packet for no QP must not be answered");
}

/* IBTA 9.6.1.5: a packet whose opcode's service is not the QP's is silently dropped.
 * An XRC RDMA WRITE ONLY (its XRCETH naming no SRQ of B's) at B's RC QP writes nothing. */
Test(hostile, xrc_packet_at_an_rc_qp_is_dropped_as_wrong_transport)
{
	struct forge_opts o;

	victim(RW, 0);
	o = good();
	o.opcode = 0xaa;        /* XRC_RDMA_WRITE_ONLY */
	send_forged(&o);
	assert_untouched();
	cr_assert_eq(tp_ctr(&B).drops[EMU_ROCE_DROP_TRANSPORT], 1);
	cr_assert_eq(tp_ctr(&B).tx_pkts, 0);
}

Test(hostile, bad_icrc_is_dropped_and_counted)
{
	struct forge_opts o;

	victim(RW, 0);
	o = good();
	o.icrc_xor = 0x1;
	send_forged(&o);
	assert_untouched();
	cr_assert_eq(tp_ctr(&B).drops[EMU_ROCE_DROP_ICRC], 1);
	cr_assert_eq(tp_ctr(&B).tx_pkts, 0);
}

Test(hostile, psn_far_ahead_gets_one_sequence_nak_and_writes_nothing)
{
	struct forge_opts o;

	victim(RW, 0);
	o = good();
	o.psn = RQ_PSN + 0x100000;
	send_forged(&o);
	send_forged(&o);
	assert_untouched();
	cr_assert_eq(tp_ctr(&B).naks_sent[EMU_AETH_NAK_PSN_SEQ], 1, "one NAK per sequence error");
	cr_assert_eq(tp_ctr(&B).drops[EMU_ROCE_DROP_PSN], 2);
}

Test(hostile, bad_pkey_is_dropped_and_counted)
{
	struct forge_opts o;

	victim(RW, 0);
	o = good();
	o.pkey = 0x1234;
	send_forged(&o);
	assert_untouched();
	cr_assert_eq(tp_ctr(&B).drops[EMU_ROCE_DROP_PKEY], 1);
	cr_assert_eq(tp_ctr(&B).tx_pkts, 0);
}
