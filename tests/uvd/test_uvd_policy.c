/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The daemon's policy (tools/uvd/policy.c) on commands built here: every object number
 * a client names -- at creation and in every QP transition, RTS2RTS included -- must be
 * its own, and a client past its quota of one kind is refused with -EDQUOT and the flag
 * that raises it.  Plain data: no device, no daemon. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "tools/uvd/uvd.h"

/* opt_param_mask bits (PRM "Optional Parameter Mask"; Linux MLX5_QP_OPTPAR_*) */
#define OPT_SRQN (1u << 18)
#define OPT_CQN_RCV (1u << 19)

static struct uvd_server srv;
static struct uvd_client victim, attacker;
static char msg[192];

static void setup(void)
{
	memset(&srv, 0, sizeof(srv));
	srv.lim = (struct uvd_limits){ .objs = 8, .qcnt = 2 };
	memset(&victim, 0, sizeof(victim));
	memset(&attacker, 0, sizeof(attacker));
	victim.srv = attacker.srv = &srv;
	/* the victim's objects */
	cr_assert_eq(uvd_obj_add(&victim, UVD_CQ, 0x80), 0);
	cr_assert_eq(uvd_obj_add(&victim, UVD_SRQ, 0x90), 0);
	cr_assert_eq(uvd_obj_add(&victim, UVD_PD, 0x9), 0);
	/* the attacker's: a QP on its own PD and CQ */
	cr_assert_eq(uvd_obj_add(&attacker, UVD_QP, 0x100), 0);
	cr_assert_eq(uvd_obj_add(&attacker, UVD_CQ, 0x81), 0);
	cr_assert_eq(uvd_obj_add(&attacker, UVD_SRQ, 0x91), 0);
	cr_assert_eq(uvd_obj_add(&attacker, UVD_PD, 0xa), 0);
}

static void teardown(void)
{
	free(victim.objs);
	free(attacker.objs);
}

TestSuite(uvd_policy, .init = setup, .fini = teardown);

/* A transition of the attacker's QP 0x100, its qpc naming receive CQ cqn and SRQ srqn
 * under opt_param_mask opt. */
static int transition(uint16_t op, uint32_t opt, uint32_t cqn, uint32_t srqn)
{
	static uint8_t in[PRM_SIZE(rst2init_qp_in)];
	bool noop;
	memset(in, 0, sizeof(in));
	PRM_SET(rst2init_qp_in, in, opcode, op);
	PRM_SET(rst2init_qp_in, in, qpn, 0x100);
	PRM_SET(rst2init_qp_in, in, opt_param_mask, opt);
	uint8_t *qpc = PRM_ADDR(rst2init_qp_in, in, qpc);
	PRM_SET(qpc, qpc, cqn_rcv, cqn);
	PRM_SET(qpc, qpc, srqn_rmpn_xrqn, srqn);
	msg[0] = '\0';
	return uvd_policy_check(&attacker, in, sizeof(in), msg, sizeof(msg), &noop);
}

Test(uvd_policy, rts2rts_naming_another_clients_receive_cq_is_refused)
{
	int rc = transition(PRM_CMD_OP_RTS2RTS_QP, OPT_CQN_RCV, 0x80, 0);
	cr_assert_eq(rc, -EPERM, "rc %d: %s", rc, msg);
	cr_assert(strstr(msg, "receive CQ"), "%s", msg);
	cr_assert_eq(transition(PRM_CMD_OP_RTS2RTS_QP, OPT_CQN_RCV, 0x81, 0), 0, "its own CQ: %s", msg);
}

Test(uvd_policy, rts2rts_naming_another_clients_srq_is_refused)
{
	int rc = transition(PRM_CMD_OP_RTS2RTS_QP, OPT_SRQN, 0, 0x90);
	cr_assert_eq(rc, -EPERM, "rc %d: %s", rc, msg);
	cr_assert(strstr(msg, "SRQ"), "%s", msg);
	cr_assert_eq(transition(PRM_CMD_OP_RTS2RTS_QP, OPT_SRQN, 0, 0x91), 0, "its own SRQ: %s", msg);
}

Test(uvd_policy, every_transition_checks_the_objects_it_names)
{
	static const uint16_t ops[] = { PRM_CMD_OP_RST2INIT_QP, PRM_CMD_OP_INIT2INIT_QP, PRM_CMD_OP_INIT2RTR_QP,
					PRM_CMD_OP_RTR2RTS_QP, PRM_CMD_OP_RTS2RTS_QP, PRM_CMD_OP_SQD_RTS_QP };
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		cr_assert_eq(transition(ops[i], OPT_CQN_RCV, 0x80, 0), -EPERM, "op 0x%x", ops[i]);
		cr_assert_eq(transition(ops[i], OPT_SRQN, 0, 0x90), -EPERM, "op 0x%x", ops[i]);
		/* unmasked but set: still checked */
		cr_assert_eq(transition(ops[i], 0, 0x80, 0), -EPERM, "op 0x%x", ops[i]);
		/* masked and zero: CQ 0 is nobody's here */
		cr_assert_eq(transition(ops[i], OPT_CQN_RCV, 0, 0), -EPERM, "op 0x%x", ops[i]);
		cr_assert_eq(transition(ops[i], 0, 0, 0), 0, "op 0x%x: %s", ops[i], msg);
	}
}

Test(uvd_policy, mkey_bound_to_another_clients_qp_is_refused)
{
	uint8_t in[PRM_SIZE(create_mkey_in)] = { 0 };
	bool noop;
	PRM_SET(create_mkey_in, in, opcode, PRM_CMD_OP_CREATE_MKEY);
	uint8_t *mkc = PRM_ADDR(create_mkey_in, in, memory_key_mkey_entry);
	PRM_SET(mkc, mkc, pd, 0xa);
	PRM_SET(mkc, mkc, qpn, 0x200);
	cr_assert_eq(uvd_policy_check(&attacker, in, sizeof(in), msg, sizeof(msg), &noop), -EPERM);
	cr_assert(strstr(msg, "QP"), "%s", msg);
}

Test(uvd_policy, objects_past_the_quota_are_refused_with_edquot)
{
	uint8_t in[PRM_SIZE(alloc_pd_in)] = { 0 };
	bool noop;
	PRM_SET(alloc_pd_in, in, opcode, PRM_CMD_OP_ALLOC_PD);
	for (uint32_t i = 1; i < 8; i++) {
		cr_assert_eq(uvd_policy_check(&attacker, in, sizeof(in), msg, sizeof(msg), &noop), 0, "%s", msg);
		cr_assert_eq(uvd_obj_add(&attacker, UVD_PD, 0x100 + i), 0);
	}
	cr_assert_eq(uvd_policy_check(&attacker, in, sizeof(in), msg, sizeof(msg), &noop), -EDQUOT);
	cr_assert(strstr(msg, "-o"), "the message names the flag: %s", msg);
	/* the other client's quota is its own */
	cr_assert_eq(uvd_policy_check(&victim, in, sizeof(in), msg, sizeof(msg), &noop), 0, "%s", msg);
	uvd_obj_del(&attacker, UVD_PD, 0x101);
	cr_assert_eq(uvd_policy_check(&attacker, in, sizeof(in), msg, sizeof(msg), &noop), 0, "%s", msg);
}

Test(uvd_policy, counter_sets_past_their_quota_are_refused)
{
	uint8_t in[PRM_SIZE(alloc_q_counter_in)] = { 0 };
	bool noop;
	PRM_SET(alloc_q_counter_in, in, opcode, PRM_CMD_OP_ALLOC_Q_COUNTER);
	cr_assert_eq(uvd_obj_add(&attacker, UVD_QCNT, 1), 0);
	cr_assert_eq(uvd_obj_add(&attacker, UVD_QCNT, 2), 0);
	cr_assert_eq(uvd_policy_check(&attacker, in, sizeof(in), msg, sizeof(msg), &noop), -EDQUOT);
	cr_assert(strstr(msg, "-q"), "%s", msg);
}

/* The reserved lkey (qpc.rlky, srqc.rlky, PRM "QP Context"/"SRQ Context") gives a QP's
 * WQEs the reserved lkey, which on real firmware reaches every address of the function
 * -- the daemon's whole IOVA space, every client's memory -- and an MKey of
 * mkc.length64 spans 2^64 bytes: neither is offered to a client, at creation or in any
 * transition. */
Test(uvd_policy, reserved_lkey_and_length64_are_refused)
{
	static const uint16_t ops[] = { PRM_CMD_OP_RST2INIT_QP, PRM_CMD_OP_INIT2INIT_QP, PRM_CMD_OP_INIT2RTR_QP,
					PRM_CMD_OP_RTR2RTS_QP, PRM_CMD_OP_RTS2RTS_QP, PRM_CMD_OP_SQD_RTS_QP };
	bool noop;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		static uint8_t in[PRM_SIZE(rst2init_qp_in)];
		memset(in, 0, sizeof(in));
		PRM_SET(rst2init_qp_in, in, opcode, ops[i]);
		PRM_SET(rst2init_qp_in, in, qpn, 0x100);
		PRM_SET(qpc, PRM_ADDR(rst2init_qp_in, in, qpc), rlky, 1);
		cr_assert_eq(uvd_policy_check(&attacker, in, sizeof(in), msg, sizeof(msg), &noop), -EPERM,
			     "op 0x%x", ops[i]);
		cr_assert(strstr(msg, "rlky"), "%s", msg);
	}
	static uint8_t qp[PRM_SIZE(create_qp_in)];
	PRM_SET(create_qp_in, qp, opcode, PRM_CMD_OP_CREATE_QP);
	uint8_t *qpc = PRM_ADDR(create_qp_in, qp, qpc);
	PRM_SET(qpc, qpc, pd, 0xa);
	PRM_SET(qpc, qpc, rlky, 1);
	cr_assert_eq(uvd_policy_check(&attacker, qp, sizeof(qp), msg, sizeof(msg), &noop), -EPERM);
	cr_assert(strstr(msg, "rlky"), "%s", msg);
	static uint8_t srq[PRM_SIZE(create_srq_in)];
	PRM_SET(create_srq_in, srq, opcode, PRM_CMD_OP_CREATE_SRQ);
	uint8_t *srqc = PRM_ADDR(create_srq_in, srq, srq_context_entry);
	PRM_SET(srqc, srqc, pd, 0xa);
	PRM_SET(srqc, srqc, rlky, 1);
	cr_assert_eq(uvd_policy_check(&attacker, srq, sizeof(srq), msg, sizeof(msg), &noop), -EPERM);
	cr_assert(strstr(msg, "rlky"), "%s", msg);
	uint8_t mk[PRM_SIZE(create_mkey_in)] = { 0 };
	PRM_SET(create_mkey_in, mk, opcode, PRM_CMD_OP_CREATE_MKEY);
	uint8_t *mkc = PRM_ADDR(create_mkey_in, mk, memory_key_mkey_entry);
	PRM_SET(mkc, mkc, pd, 0xa);
	PRM_SET(mkc, mkc, qpn, 0xffffff);
	PRM_SET(mkc, mkc, length64, 1);
	cr_assert_eq(uvd_policy_check(&attacker, mk, sizeof(mk), msg, sizeof(msg), &noop), -EPERM);
	cr_assert(strstr(msg, "length64"), "%s", msg);
}

/* Quotas hold for a process, not a connection: a second connection of the attacker's
 * process shares its count (before, each connection had its own -o). */
Test(uvd_policy, quota_counts_every_connection_of_one_process)
{
	static struct uvd_client second;
	memset(&second, 0, sizeof(second));
	second.srv = &srv;
	attacker.pid = second.pid = 4242;
	victim.pid = 4343;
	srv.clients = &attacker;
	attacker.next = &second;
	second.next = &victim;
	uint8_t in[PRM_SIZE(alloc_pd_in)] = { 0 };
	bool noop;
	PRM_SET(alloc_pd_in, in, opcode, PRM_CMD_OP_ALLOC_PD);
	for (uint32_t i = 1; i < 8; i++)     /* the attacker holds PD 0xa: 8 in all */
		cr_assert_eq(uvd_obj_add(i % 2 ? &second : &attacker, UVD_PD, 0x100 + i), 0);
	cr_assert_eq(uvd_policy_check(&second, in, sizeof(in), msg, sizeof(msg), &noop), -EDQUOT);
	cr_assert(strstr(msg, "process"), "the message says whose count: %s", msg);
	cr_assert_eq(uvd_policy_check(&victim, in, sizeof(in), msg, sizeof(msg), &noop), 0, "%s", msg);
	free(second.objs);
	srv.clients = NULL;
}

/* Each event is routed to the owner of its CQ, QP or SRQ, looked up among every client
 * under the device lock: one client's many objects must not make that lookup a walk of
 * them all (third review: a client's table was walked, so its 131,072 objects made
 * each lookup about 0.1 ms under the lock; now a binary search).  Timed with a bound
 * far from both: 20,000 lookups in well under a second, where walking took 20 s here
 * (ASan, a loaded machine; 0.1 s now). */
Test(uvd_policy, an_objects_owner_is_found_without_walking_the_table)
{
	static struct uvd_client big;
	memset(&big, 0, sizeof(big));
	big.srv = &srv;
	const uint32_t n = 1u << 17;
	int rc = 0;
	for (uint32_t i = 0; i < n; i++)   /* numbers as the firmware gives them: rising */
		rc |= uvd_obj_add(&big, i < n / 2 ? UVD_PD : UVD_MKEY, i);
	cr_assert_eq(rc, 0);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	unsigned found = 0;
	for (uint32_t k = 0; k < 20000; k++)
		found += uvd_owns(&big, UVD_MKEY, n / 2 + k) + uvd_owns(&big, UVD_CQ, k);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	cr_assert_eq(found, 20000u);
	cr_assert_lt(ms, 1000.0, "20,000 lookups in a table of %u objects took %.0f ms", n, ms);
	/* and the table stays right: every object found, deleted ones gone */
	found = 0;
	for (uint32_t i = 0; i < n; i++)
		found += uvd_owns(&big, i < n / 2 ? UVD_PD : UVD_MKEY, i) && !uvd_owns(&big, UVD_QP, i);
	cr_assert_eq(found, n);
	uvd_obj_del(&big, UVD_MKEY, n - 1);
	uvd_obj_add(&big, UVD_MKEY, 3);
	uvd_obj_del(&big, UVD_MKEY, 3);
	cr_assert(!uvd_owns(&big, UVD_MKEY, n - 1) && !uvd_owns(&big, UVD_MKEY, 3) && uvd_owns(&big, UVD_PD, 3));
	cr_assert_eq(big.nobj, n - 1);
	cr_assert_eq(big.nobj_type[UVD_PD] + big.nobj_type[UVD_MKEY], n - 1);
	free(big.objs);
}

/* ATTACH_TO_MCG / DETACH_FROM_MCG of QP qpn to the IPv4-mapped group 230.1.2.3, from c
 * (the command left in mcg_last_in). */
static uint8_t mcg_last_in[PRM_SIZE(attach_to_mcg_in)];
static int mcg(struct uvd_client *c, uint16_t op, uint32_t qpn)
{
	uint8_t *in = mcg_last_in;
	static const uint8_t gid[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 230, 1, 2, 3 };
	bool noop;
	memset(in, 0, sizeof(mcg_last_in));
	PRM_SET(attach_to_mcg_in, in, opcode, op);
	PRM_SET(attach_to_mcg_in, in, qpn, qpn);
	memcpy(PRM_ADDR(attach_to_mcg_in, in, multicast_gid), gid, sizeof(gid));
	msg[0] = '\0';
	return uvd_policy_check(c, in, sizeof(mcg_last_in), msg, sizeof(msg), &noop);
}

/* A daemon that runs its clients' data plane (-R) lets a client attach its own QP to a
 * group and detach it; another client's QP, named by number, is refused. */
Test(uvd_policy, attaching_another_clients_qp_to_a_group_is_refused)
{
	static const uint16_t ops[] = { PRM_CMD_OP_ATTACH_TO_MCG, PRM_CMD_OP_DETACH_FROM_MCG };
	for (size_t i = 0; i < 2; i++) {
		int rc = mcg(&victim, ops[i], 0x100);
		cr_assert_eq(rc, -EPERM, "op 0x%x: rc %d: %s", ops[i], rc, msg);
		cr_assert(strstr(msg, "QP 0x100 is not this client's"), "%s", msg);
		cr_assert_eq(mcg(&attacker, ops[i], 0x100), 0, "op 0x%x, its own QP: %s", ops[i], msg);
	}
}

/* The same with engines: each client's engine places its QPs' receives and joins
 * their groups itself (hw/emu/engine.c), so the policy is the same. */
Test(uvd_policy, a_daemon_of_engines_checks_the_qp_the_same_way)
{
	srv.engines = true;
	cr_assert_eq(mcg(&victim, PRM_CMD_OP_ATTACH_TO_MCG, 0x100), -EPERM, "%s", msg);
	cr_assert_eq(mcg(&attacker, PRM_CMD_OP_ATTACH_TO_MCG, 0x100), 0, "%s", msg);
	cr_assert_eq(mcg(&victim, PRM_CMD_OP_DETACH_FROM_MCG, 0x100), -EPERM, "%s", msg);
}

/* What the daemon detaches when the client dies: each attachment the device took, once
 * (a second ATTACH of the same QP to the same group changes nothing), until its DETACH
 * or its QP's DESTROY_QP; past -o attachments a client is refused with EDQUOT. */
Test(uvd_policy, attachments_are_remembered_until_detached_or_destroyed)
{
	uint8_t out[16] = { 0 };
	static uint8_t in[PRM_SIZE(attach_to_mcg_in)];

	cr_assert_eq(mcg(&attacker, PRM_CMD_OP_ATTACH_TO_MCG, 0x100), 0);
	memcpy(in, mcg_last_in, sizeof(in));
	uvd_policy_done(&attacker, in, sizeof(in), out, sizeof(out));
	uvd_policy_done(&attacker, in, sizeof(in), out, sizeof(out));
	cr_assert_eq(attacker.nmcg, 1, "attached twice, remembered once");
	cr_assert_eq(attacker.mcg[0].qpn, 0x100);
	cr_assert_eq(attacker.mcg[0].gid[12], 230);
	PRM_SET(attach_to_mcg_in, in, opcode, PRM_CMD_OP_DETACH_FROM_MCG);
	uvd_policy_done(&attacker, in, sizeof(in), out, sizeof(out));
	cr_assert_eq(attacker.nmcg, 0, "detached");

	PRM_SET(attach_to_mcg_in, in, opcode, PRM_CMD_OP_ATTACH_TO_MCG);
	uvd_policy_done(&attacker, in, sizeof(in), out, sizeof(out));
	uint8_t d[PRM_SIZE(destroy_qp_in)] = { 0 };
	PRM_SET(destroy_qp_in, d, opcode, PRM_CMD_OP_DESTROY_QP);
	PRM_SET(destroy_qp_in, d, qpn, 0x100);
	uvd_policy_done(&attacker, d, sizeof(d), out, sizeof(out));
	cr_assert_eq(attacker.nmcg, 0, "its QP destroyed");
	cr_assert(!uvd_owns(&attacker, UVD_QP, 0x100));
	cr_assert_eq(uvd_obj_add(&attacker, UVD_QP, 0x100), 0);   /* a new QP, the same number */

	for (unsigned i = 0; i < srv.lim.objs; i++) {
		in[PRM_OFF(attach_to_mcg_in, multicast_gid) / 8 + 15] = (uint8_t)i;
		uvd_policy_done(&attacker, in, sizeof(in), out, sizeof(out));
	}
	cr_assert_eq(attacker.nmcg, srv.lim.objs);
	int rc = mcg(&attacker, PRM_CMD_OP_ATTACH_TO_MCG, 0x100);
	cr_assert_eq(rc, -EDQUOT, "rc %d: %s", rc, msg);
	cr_assert(strstr(msg, "-o"), "%s", msg);
	rc = mcg(&attacker, PRM_CMD_OP_DETACH_FROM_MCG, 0x100);
	cr_assert_eq(rc, 0, "a detach is never past the quota: %d %s", rc, msg);
	free(attacker.mcg);
}
