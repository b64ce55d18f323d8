/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The emulated ConnectX refuses what firmware refuses: each test sends one bad input
 * through the real command engine, asserts the status and syndrome, and that no object
 * was created (objects_live unchanged).
 *
 * Command-processor checks, the rule each mirrors, and where it is tested
 * (status: PRM_CMD_STAT_*, syndrome: firmware-cmd/syndromes.def):
 *
 * | check                                         | rule                                          | status / syndrome              | test |
 * |-----------------------------------------------|-----------------------------------------------|--------------------------------|------|
 * | unknown opcode                                | PRM "Command Interface"                       | 0x2 BAD_OPCODE                 | emu_hca.unknown_opcode_is_bad_opcode |
 * | input shorter than the command's layout       | PRM input_length; mlx5_ifc <cmd>_in size      | 0x50 INPUT_TOO_SHORT           | emu_hca.input_shorter_than_the_command_is_bad_input_length |
 * | output shorter than the command's layout      | PRM output_length                             | 0x51 OUTPUT_TOO_SHORT          | emu_hca.output_shorter_than_the_command_is_bad_output_length |
 * | page/translation list longer than the input   | PRM pas[] / klm_pas_mtt[]                     | 0x50 INPUT_TOO_SHORT           | emu_cq.page_list_shorter_than_the_cq_is_bad_input_length, emu_mkey.input_shorter_than_its_translations_is_bad_input_length |
 * | command before ENABLE_HCA / INIT_HCA          | PRM HCA life cycle                            | 0x4 BAD_SYSTEM_STATE           | emu_hca.command_before_enable_hca_is_bad_system_state |
 * | uid not 0 (no user contexts offered)          | mlx5_ifc cmd uid; log_max_uctx 0              | 0x3 BAD_UID                    | here: uid_on_a_command_is_bad_uid |
 * | op_mod on a command that defines none         | PRM: reserved must be 0                       | 0x3 BAD_OP_MOD                 | here: op_mod_on_a_command_without_one_is_bad_op_mod |
 * | op_mod outside a command's values             | PRM QUERY_PAGES/MANAGE_PAGES/ACCESS_REG/...   | 0x3 BAD_OP_MOD                 | here: vport_state_op_mod_above_uplink_is_bad_op_mod |
 * | any reserved field of the input not 0         | PRM: reserved must be 0 (mlx5_ifc reserved_*) | 0x3 RESERVED_NOT_ZERO          | here: header_reserved_bits_are_refused, create_*_refuses_every_reserved_range |
 * | more objects than 2^log_max_qp (cq, srq, ...) | PRM "HCA Capabilities" log_max_*              | 0x8 OBJECT_LIMIT               | here: qp_beyond_log_max_qp_is_limits_exceeded |
 * | object table full                             | firmware resources                            | 0x8 LIMIT_EXCEEDED             | (emu_obj_alloc) |
 * | CQ/SRQ/QP/EQ size above log_max_*_sz          | PRM caps log_max_cq_sz/srq_sz/qp_sz/eq_sz     | 0x8 SIZE_TOO_LARGE             | emu_cq.cq_larger_than_log_max_cq_sz_is_limits_exceeded, emu_eq.create_eq_larger_than_log_max_eq_sz_is_limits |
 * | receive WQE above max_wqe_sz_rq               | PRM caps max_wqe_sz_rq                        | 0x8 SIZE_TOO_LARGE             | emu_qp.receive_wqe_larger_than_max_wqe_sz_rq_is_limits_exceeded |
 * | CQE size not 64/128                           | PRM cqc.cqe_sz                                | 0x3 BAD_CQE_SIZE               | emu_cq.reserved_cqe_size_is_bad_parameter |
 * | cq_period_mode not 0/1, or 1 without the cap  | Linux enum mlx5_cq_period_mode; caps          | 0x3 BAD_CQ_PERIOD_MODE         | here: cq_period_mode_2_is_refused |
 * | unknown UAR (uar_4k: outside allocated pages) | PRM uar_page                                  | 0x5 BAD_UAR                    | emu_cq.unallocated_uar_is_bad_resource; here: cq_on_a_4k_uar_holds_its_uar_page |
 * | unknown EQ / CQ / PD / SRQ / QP / MKey        | PRM object numbers                            | 0x5 BAD_EQN/CQN/PD/SRQN/QPN/MKEY | emu_cq.unknown_eq_is_bad_resource, emu_qp.unknown_send_cq_is_bad_resource, emu_qp.missing_pd_is_bad_resource, emu_qp.unknown_srq_for_an_srq_receive_queue_is_bad_resource |
 * | counter_set_id not an allocated Q counter     | PRM qpc.counter_set_id (ALLOC_Q_COUNTER)      | 0x3 BAD_COUNTER_SET_ID         | here: qp_with_an_unallocated_counter_set_is_refused, rst2init_with_an_unallocated_counter_set_is_refused |
 * | doorbell record / queue pages not pinned      | PRM dbr_addr, pas (IOMMU)                     | 0x3 BAD_DOORBELL_RECORD / BUFFER_NOT_PINNED | emu_cq.unpinned_doorbell_record_is_refused_and_logged |
 * | QP service type / pm_state / rq_type          | PRM qpc.st, pm_state, rq_type                 | 0x3 BAD_QP_TYPE/BAD_PM_STATE/BAD_RQ_TYPE | emu_qp.unknown_service_type_is_bad_parameter |
 * | transition from the wrong state               | PRM QP state machine                          | 0x10 ILLEGAL_QP_TRANSITION     | emu_qp.rst2init_twice_is_an_illegal_transition |
 * | destroy of an object in use                   | PRM                                           | 0x9 OBJECT_IN_USE              | emu_cq.destroy_of_a_cq_a_qp_uses_is_bad_resource_state |
 * | multicast attach of a QP that is not UD         | ibv_attach_mcast(3): UD QPs only              | 0x3 MCG_QP_NOT_UD              | uverbs_test_mcast (EINVAL) |
 * | multicast GID not ff00::/8 or ::ffff:224/4    | Linux rdma_is_multicast_addr                  | 0x3 MCG_NOT_MULTICAST          | uverbs_test_mcast (EINVAL, checked by the driver first) |
 * | detach of a QP not attached to the group      | PRM DETACH_FROM_MCG                           | 0x3 MCG_NOT_ATTACHED           | uverbs_test_mcast (EINVAL) |
 * | more QPs in a group than max_qp_mcg           | PRM caps max_qp_mcg                           | 0x8 LIMIT_EXCEEDED             | uverbs_test_mcast (ENOMEM) |
 *
 * The reserved ranges are hw/emu/cmd_reserved.def (generated from Linux mlx5_ifc.h by
 * tools/gen-emu-reserved); the create_*_refuses_every_reserved_range tests walk the
 * same table, setting the first and the last bit of each range in an otherwise valid
 * input.
 */
#include <stdio.h>

#include "tests/emu/emu_obj_test.h"

/* ---- helpers ---- */

static uint64_t live(struct ot *o, enum emu_obj_type ty)
{
	return ot_live(o, ty);
}

/* Bring up with the current general capabilities edited before INIT_HCA (SET_HCA_CAP,
 * as mlx5_core's handle_hca_cap does), then allocate the UAR, PD and EQ as ot_up. */
static void ot_up_caps(struct ot *o, const char *uri, void (*edit)(uint8_t *cap, void *arg), void *arg)
{
	struct et *t = &o->t;
	uint8_t *in = calloc(1, PRM_SIZE(set_hca_cap_in));
	uint8_t q[PRM_SIZE(query_hca_cap_in)] = { 0 };

	memset(o, 0, sizeof(*o));
	et_open(t, uri);
	o->page = t->dev->page_size ? t->dev->page_size : 4096;
	et_expect(t, et_simple(t, PRM_CMD_OP_ENABLE_HCA, 0, PRM_SIZE(enable_hca_in), 16), 0, 0);
	PRM_SET(query_hca_cap_in, q, opcode, PRM_CMD_OP_QUERY_HCA_CAP);
	PRM_SET(query_hca_cap_in, q, op_mod, 1);
	et_expect(t, et_exec(t, q, sizeof(q), PRM_SIZE(query_hca_cap_out)), 0, 0);
	PRM_SET(set_hca_cap_in, in, opcode, PRM_CMD_OP_SET_HCA_CAP);
	memcpy(PRM_ADDR(set_hca_cap_in, in, capability), PRM_ADDR(query_hca_cap_out, t->out, capability),
	       PRM_SIZE(cmd_hca_cap));
	edit(PRM_ADDR(set_hca_cap_in, in, capability), arg);
	et_expect(t, et_exec(t, in, PRM_SIZE(set_hca_cap_in), 16), 0, 0);
	free(in);
	et_pages_and_init_hca(t);
	o->uar = ot_simple_id(o, PRM_CMD_OP_ALLOC_UAR, PRM_SIZE(alloc_uar_out), PRM_OFF(alloc_uar_out, uar),
			      PRM_WIDTH(alloc_uar_out, uar));
	o->pd = ot_alloc_pd(o);
	et_expect(t, ot_create_eq(o, &o->eqn), 0, 0);
}

static int alloc_pd_with(struct ot *o, unsigned bit, uint16_t op_mod)
{
	uint8_t in[PRM_SIZE(alloc_pd_in)] = { 0 };

	PRM_SET(alloc_pd_in, in, opcode, PRM_CMD_OP_ALLOC_PD);
	PRM_SET(cmd_in, in, op_mod, op_mod);
	if (bit)
		prm_bits_set32(in, bit, 1, 1);
	return et_exec(&o->t, in, sizeof(in), PRM_SIZE(alloc_pd_out));
}

/* ---- command header ---- */

Test(emu_refusals, uid_on_a_command_is_bad_uid)
{
	struct ot o;
	uint64_t pds;

	ot_up(&o, "emu:");
	pds = live(&o, EMU_OBJ_PD);
	/* bit 0x1f: the lowest bit of cmd_in.uid */
	et_expect(&o.t, alloc_pd_with(&o, 0x1f, 0), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_UID);
	cr_assert_eq(live(&o, EMU_OBJ_PD), pds, "no PD allocated");
	et_expect(&o.t, alloc_pd_with(&o, 0, 0), 0, 0);
	ot_down(&o);
}

Test(emu_refusals, op_mod_on_a_command_without_one_is_bad_op_mod)
{
	struct ot o;
	uint64_t pds;

	ot_up(&o, "emu:");
	pds = live(&o, EMU_OBJ_PD);
	et_expect(&o.t, alloc_pd_with(&o, 0, 1), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_OP_MOD);
	cr_assert_eq(live(&o, EMU_OBJ_PD), pds, "no PD allocated");
	ot_down(&o);
}

Test(emu_refusals, vport_state_op_mod_above_uplink_is_bad_op_mod)
{
	struct ot o;

	ot_up(&o, "emu:");
	/* 0 vNIC vport, 1 e-switch vport, 2 uplink (Linux MLX5_VPORT_STATE_OP_MOD_*) */
	et_expect(&o.t, et_simple(&o.t, PRM_CMD_OP_QUERY_VPORT_STATE, 2, PRM_SIZE(query_vport_state_in),
				  PRM_SIZE(query_vport_state_out)), 0, 0);
	et_expect(&o.t, et_simple(&o.t, PRM_CMD_OP_QUERY_VPORT_STATE, 3, PRM_SIZE(query_vport_state_in),
				  PRM_SIZE(query_vport_state_out)), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_OP_MOD);
	ot_down(&o);
}

Test(emu_refusals, header_reserved_bits_are_refused)
{
	struct ot o;
	uint64_t pds;

	ot_up(&o, "emu:");
	pds = live(&o, EMU_OBJ_PD);
	/* cmd_in bits 0x20..0x2f: mlx5_ifc reserved_at_20 in every command */
	et_expect(&o.t, alloc_pd_with(&o, 0x20, 0), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_RESERVED_NOT_ZERO);
	et_expect(&o.t, alloc_pd_with(&o, 0x2f, 0), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_RESERVED_NOT_ZERO);
	/* alloc_pd_in bits 0x40..0x7f: reserved_at_40 */
	et_expect(&o.t, alloc_pd_with(&o, 0x5a, 0), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_RESERVED_NOT_ZERO);
	cr_assert_eq(live(&o, EMU_OBJ_PD), pds, "no PD allocated");
	ot_down(&o);
}

/* ---- every reserved range of the object-creating commands ---- */

static const struct rsv {
	uint16_t opcode;
	uint32_t off, width;
	const char *field;
} rsv_tab[] = {
#define EMU_RSV(op, o, w, f) { PRM_CMD_OP_##op, (o), (w), (f) },
#include "hw/emu/cmd_reserved.def"
#undef EMU_RSV
};

/* For every range of `opcode` past the header (uid has its own syndrome), set its first
 * bit, then its last, in a copy of the valid input: each must be refused with
 * RESERVED_NOT_ZERO and create nothing.  The valid input must then succeed. */
static void refuses_every_reserved_range(struct ot *o, uint16_t opcode, const uint8_t *valid, size_t inlen,
					 size_t outlen, enum emu_obj_type ty)
{
	uint8_t *in = malloc(inlen);
	uint64_t before = live(o, ty);
	unsigned n = 0;

	for (size_t i = 0; i < sizeof(rsv_tab) / sizeof(rsv_tab[0]); i++) {
		const struct rsv *r = &rsv_tab[i];

		if (r->opcode != opcode || r->off < 0x20 || r->off + r->width > inlen * 8)
			continue;
		for (int end = 0; end < 2; end++) {
			unsigned bit = end ? r->off + r->width - 1 : r->off;
			int st;

			memcpy(in, valid, inlen);
			prm_bits_set32(in, bit, 1, 1);
			st = et_exec(&o->t, in, inlen, outlen);
			cr_assert_eq(st, PRM_CMD_STAT_BAD_PARAM, "%s bit 0x%x: status 0x%x (%s)", r->field, bit, st,
				     cmdq_error(o->t.q));
			cr_assert_eq(cmdq_last_syndrome(o->t.q), PRM_SYND_RESERVED_NOT_ZERO, "%s bit 0x%x: syndrome %s",
				     r->field, bit, prm_syndrome_name(cmdq_last_syndrome(o->t.q)));
			cr_assert_eq(live(o, ty), before, "%s bit 0x%x: an object was created", r->field, bit);
			n++;
		}
	}
	cr_assert_gt(n, 0, "no reserved range for opcode 0x%x", opcode);
	et_expect(&o->t, et_exec(&o->t, valid, inlen, outlen), 0, 0);
	cr_assert_eq(live(o, ty), before + 1);
	free(in);
}

Test(emu_refusals, create_cq_refuses_every_reserved_range)
{
	struct ot o;
	struct oq q;
	size_t inlen;
	uint8_t *in;

	ot_up(&o, "emu:");
	in = ot_cq_in(&o, &q, 6, &inlen);
	refuses_every_reserved_range(&o, PRM_CMD_OP_CREATE_CQ, in, inlen, PRM_SIZE(create_cq_out), EMU_OBJ_CQ);
	free(in);
	ot_down(&o);
}

Test(emu_refusals, create_qp_refuses_every_reserved_range)
{
	struct ot o;
	struct oq q;
	size_t inlen;
	uint8_t *in;

	ot_up(&o, "emu:");
	in = ot_qp_in(&o, &q, OT_ST_RC, ot_cq(&o, 6), 4, 4, &inlen);
	refuses_every_reserved_range(&o, PRM_CMD_OP_CREATE_QP, in, inlen, PRM_SIZE(create_qp_out), EMU_OBJ_QP);
	free(in);
	ot_down(&o);
}

Test(emu_refusals, create_srq_refuses_every_reserved_range)
{
	struct ot o;
	struct oq q;
	size_t inlen;
	uint8_t *in;

	et_issi = 0;   /* CREATE_SRQ is the ISSI 0 model */
	ot_up(&o, "emu:");
	in = ot_srq_in(&o, &q, 4, 1, &inlen);
	refuses_every_reserved_range(&o, PRM_CMD_OP_CREATE_SRQ, in, inlen, PRM_SIZE(create_srq_out), EMU_OBJ_SRQ);
	free(in);
	ot_down(&o);
}

Test(emu_refusals, create_rmp_refuses_every_reserved_range)
{
	struct ot o;
	struct oq q;
	size_t inlen;
	uint8_t *in;

	ot_up(&o, "emu:");
	in = ot_rmp_in(&o, &q, 4, 1, &inlen);
	refuses_every_reserved_range(&o, PRM_CMD_OP_CREATE_RMP, in, inlen, PRM_SIZE(create_rmp_out), EMU_OBJ_SRQ);
	free(in);
	ot_down(&o);
}

Test(emu_refusals, create_mkey_refuses_every_reserved_range)
{
	struct ot o;
	uint8_t in[PRM_SIZE(create_mkey_in)] = { 0 };
	uint8_t *mkc = PRM_ADDR(create_mkey_in, in, memory_key_mkey_entry);

	ot_up(&o, "emu:");
	/* a PA MKey over the whole address space: valid without translations */
	PRM_SET(create_mkey_in, in, opcode, PRM_CMD_OP_CREATE_MKEY);
	PRM_SET(mkc, mkc, lr, 1);
	PRM_SET(mkc, mkc, lw, 1);
	PRM_SET(mkc, mkc, length64, 1);
	PRM_SET(mkc, mkc, qpn, 0xffffff);
	PRM_SET(mkc, mkc, pd, o.pd);
	refuses_every_reserved_range(&o, PRM_CMD_OP_CREATE_MKEY, in, sizeof(in), PRM_SIZE(create_mkey_out),
				     EMU_OBJ_MKEY);
	ot_down(&o);
}

Test(emu_refusals, alloc_pd_refuses_every_reserved_range)
{
	struct ot o;
	uint8_t in[PRM_SIZE(alloc_pd_in)] = { 0 };

	ot_up(&o, "emu:");
	PRM_SET(alloc_pd_in, in, opcode, PRM_CMD_OP_ALLOC_PD);
	refuses_every_reserved_range(&o, PRM_CMD_OP_ALLOC_PD, in, sizeof(in), PRM_SIZE(alloc_pd_out), EMU_OBJ_PD);
	ot_down(&o);
}

/* ---- object counts ---- */

static void set_log_max_qp(uint8_t *cap, void *arg)
{
	PRM_SET(cmd_hca_cap, cap, log_max_qp, *(unsigned *)arg);
}

Test(emu_refusals, qp_beyond_log_max_qp_is_limits_exceeded)
{
	struct ot o;
	unsigned log = 1;
	uint32_t cqn;
	struct oq q;
	size_t inlen;
	uint8_t *in;

	ot_up_caps(&o, "emu:", set_log_max_qp, &log);
	cqn = ot_cq(&o, 6);
	ot_qp(&o, OT_ST_RC, cqn);
	ot_qp(&o, OT_ST_UD, cqn);
	in = ot_qp_in(&o, &q, OT_ST_RC, cqn, 4, 4, &inlen);
	et_expect(&o.t, et_exec(&o.t, in, inlen, PRM_SIZE(create_qp_out)), PRM_CMD_STAT_LIM_ERR,
		  PRM_SYND_OBJECT_LIMIT);
	cr_assert_eq(live(&o, EMU_OBJ_QP), 2, "2^log_max_qp QPs, no more");
	free(in);
	ot_down(&o);
}

/* ---- CQ moderation period mode ---- */

Test(emu_refusals, cq_period_mode_2_is_refused)
{
	struct ot o;
	struct oq q;
	size_t inlen;
	uint8_t *in;

	ot_up(&o, "emu:");
	in = ot_cq_in(&o, &q, 6, &inlen);
	PRM_SET(cqc, PRM_ADDR(create_cq_in, in, cq_context), cq_period_mode, 2);
	et_expect(&o.t, et_exec(&o.t, in, inlen, PRM_SIZE(create_cq_out)), PRM_CMD_STAT_BAD_PARAM,
		  PRM_SYND_BAD_CQ_PERIOD_MODE);
	cr_assert_eq(live(&o, EMU_OBJ_CQ), 0, "no CQ created");
	/* 1 (start from CQE) is offered: cq_period_start_from_cqe */
	cr_assert_eq(PRM_GET(cmd_hca_cap, o.gen, cq_period_start_from_cqe), 1);
	PRM_SET(cqc, PRM_ADDR(create_cq_in, in, cq_context), cq_period_mode, 1);
	et_expect(&o.t, et_exec(&o.t, in, inlen, PRM_SIZE(create_cq_out)), 0, 0);
	free(in);
	ot_down(&o);
}

/* ---- UARs under uar_4k ---- */

static void set_uar_4k(uint8_t *cap, void *arg)
{
	(void)arg;
	PRM_SET(cmd_hca_cap, cap, log_uar_page_sz, 2);
	PRM_SET(cmd_hca_cap, cap, uar_4k, 1);
}

/* uar_4k on a 16 KiB-page host: ALLOC_UAR hands out four 4 KiB UARs; a CQ on the second
 * of them is on that page, and the page cannot be freed under it (PRM: a UAR in use). */
Test(emu_refusals, cq_on_a_4k_uar_holds_its_uar_page)
{
	struct ot o;
	struct oq q;
	size_t inlen;
	uint8_t *in;
	uint32_t cqn, uar2;

	ot_up_caps(&o, "emu:page=16k", set_uar_4k, NULL);
	/* a second UAR page, used by nothing but the CQ */
	uar2 = ot_simple_id(&o, PRM_CMD_OP_ALLOC_UAR, PRM_SIZE(alloc_uar_out), PRM_OFF(alloc_uar_out, uar),
			    PRM_WIDTH(alloc_uar_out, uar));
	cr_assert_eq(uar2 % 4, 0, "index %u: the first 4 KiB UAR of its page", uar2);
	in = ot_cq_in(&o, &q, 6, &inlen);
	PRM_SET(cqc, PRM_ADDR(create_cq_in, in, cq_context), uar_page, uar2 + 1);
	et_expect(&o.t, et_exec(&o.t, in, inlen, PRM_SIZE(create_cq_out)), 0, 0);
	cqn = (uint32_t)PRM_GET(create_cq_out, o.t.out, cqn);
	{
		ET_IN(dealloc_uar_in);
		PRM_SET(dealloc_uar_in, in, opcode, PRM_CMD_OP_DEALLOC_UAR);
		PRM_SET(dealloc_uar_in, in, uar, uar2);
		et_expect(&o.t, et_exec(&o.t, in, sizeof(in), 16), PRM_CMD_STAT_BAD_RES_STATE,
			  PRM_SYND_OBJECT_IN_USE);
		et_expect(&o.t, ot_destroy(&o, PRM_CMD_OP_DESTROY_CQ, cqn), 0, 0);
		et_expect(&o.t, et_exec(&o.t, in, sizeof(in), 16), 0, 0);
	}
	free(in);
	ot_down(&o);
}

/* A UAR index past the allocated pages is no UAR (uar_4k numbering). */
Test(emu_refusals, cq_on_a_4k_uar_of_no_allocated_page_is_bad_uar)
{
	struct ot o;
	struct oq q;
	size_t inlen;
	uint8_t *in;

	ot_up_caps(&o, "emu:page=16k", set_uar_4k, NULL);
	in = ot_cq_in(&o, &q, 6, &inlen);
	PRM_SET(cqc, PRM_ADDR(create_cq_in, in, cq_context), uar_page, o.uar + 4);
	et_expect(&o.t, et_exec(&o.t, in, inlen, PRM_SIZE(create_cq_out)), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_UAR);
	cr_assert_eq(live(&o, EMU_OBJ_CQ), 0);
	free(in);
	ot_down(&o);
}

/* ---- QP counter sets ---- */

Test(emu_refusals, qp_with_an_unallocated_counter_set_is_refused)
{
	struct ot o;
	struct oq q;
	size_t inlen;
	uint8_t *in;

	ot_up(&o, "emu:");
	in = ot_qp_in(&o, &q, OT_ST_RC, ot_cq(&o, 6), 4, 4, &inlen);
	PRM_SET(qpc, PRM_ADDR(create_qp_in, in, qpc), counter_set_id, 5);
	et_expect(&o.t, et_exec(&o.t, in, inlen, PRM_SIZE(create_qp_out)), PRM_CMD_STAT_BAD_PARAM,
		  PRM_SYND_BAD_COUNTER_SET_ID);
	cr_assert_eq(live(&o, EMU_OBJ_QP), 0, "no QP created");
	free(in);
	ot_down(&o);
}

Test(emu_refusals, rst2init_with_an_unallocated_counter_set_is_refused)
{
	struct ot o;
	uint32_t qpn;
	uint8_t *in;

	ot_up(&o, "emu:");
	qpn = ot_qp(&o, OT_ST_RC, ot_cq(&o, 6));
	in = ot_rst2init_in(qpn);
	PRM_SET(qpc, PRM_ADDR(rst2init_qp_in, in, qpc), counter_set_id, 7);
	et_expect(&o.t, ot_trans_exec(&o, in), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_COUNTER_SET_ID);
	cr_assert_eq(PRM_GET(qpc, ot_query_qp(&o, qpn), state), 0, "still in RESET");
	ot_down(&o);
}
