/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* UAR, PD, transport domain, special contexts: allocate, use, free; unknown numbers. */
#include "tests/emu/emu_test.h"

static int dealloc(struct et *t, uint16_t op, uint32_t id)
{
	uint8_t in[16] = { 0 };

	PRM_SET(cmd_in, in, opcode, op);
	/* uar / pd / transport_domain share bit offset 0x48 (24 bits) in their inputs. */
	PRM_SET(dealloc_pd_in, in, pd, id);
	return et_exec(t, in, sizeof(in), 16);
}

Test(emu_objects, uar_pd_td_allocate_and_free)
{
	struct et t;
	struct emu_counters c;
	uint32_t uar, pd, td;

	et_open(&t, "emu:");
	et_bringup(&t);
	uar = et_alloc_uar(&t);
	cr_assert_geq(uar, 0x10, "UARs above the init segment, as on real firmware");
	et_expect(&t, et_simple(&t, PRM_CMD_OP_ALLOC_PD, 0, PRM_SIZE(alloc_pd_in), 16), 0, 0);
	pd = (uint32_t)PRM_GET(alloc_pd_out, t.out, pd);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_ALLOC_TRANSPORT_DOMAIN, 0, PRM_SIZE(alloc_transport_domain_in), 16), 0,
		  0);
	td = (uint32_t)PRM_GET(alloc_transport_domain_out, t.out, transport_domain);
	emu_counters(t.emu, &c);
	cr_assert_eq(c.objects_live[EMU_OBJ_UAR], 1);
	cr_assert_eq(c.objects_live[EMU_OBJ_PD], 1);
	cr_assert_eq(c.objects_live[EMU_OBJ_TD], 1);
	et_expect(&t, dealloc(&t, PRM_CMD_OP_DEALLOC_TRANSPORT_DOMAIN, td), 0, 0);
	et_expect(&t, dealloc(&t, PRM_CMD_OP_DEALLOC_PD, pd), 0, 0);
	et_expect(&t, dealloc(&t, PRM_CMD_OP_DEALLOC_UAR, uar), 0, 0);
	emu_counters(t.emu, &c);
	for (int i = 0; i < EMU_OBJ_NTYPES; i++)
		cr_assert_eq(c.objects_live[i], 0, "%s", emu_obj_type_name(i));
	et_teardown(&t);
	et_close(&t);
}

Test(emu_objects, dealloc_unknown_pd_is_bad_resource)
{
	struct et t;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, dealloc(&t, PRM_CMD_OP_DEALLOC_PD, 0x4242), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_PD);
	et_close(&t);
}

Test(emu_objects, dealloc_unknown_uar_is_bad_resource)
{
	struct et t;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, dealloc(&t, PRM_CMD_OP_DEALLOC_UAR, 0x77), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_UAR);
	et_close(&t);
}

Test(emu_objects, dealloc_unknown_transport_domain_is_bad_resource)
{
	struct et t;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, dealloc(&t, PRM_CMD_OP_DEALLOC_TRANSPORT_DOMAIN, 9), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_TD);
	et_close(&t);
}

Test(emu_objects, special_contexts_report_the_reserved_keys)
{
	struct et t;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_QUERY_SPECIAL_CONTEXTS, 0, PRM_SIZE(query_special_contexts_in),
				PRM_SIZE(query_special_contexts_out)),
		  0, 0);
	cr_assert_eq(PRM_GET(query_special_contexts_out, t.out, terminate_scatter_list_mkey), 0x100);
	cr_assert_neq(PRM_GET(query_special_contexts_out, t.out, resd_lkey), 0);
	cr_assert_neq(PRM_GET(query_special_contexts_out, t.out, null_mkey), 0);
	et_close(&t);
}

Test(emu_objects, store_into_an_unallocated_uar_page_is_a_driver_error)
{
	struct et t;

	et_open(&t, "emu:");
	et_bringup(&t);
	shim_mmio_write32(&t.bar, 0x40 * 4096 + 0x20, 1);
	cr_assert(emu_drverr_find(t.emu, "is not allocated"));
	et_close(&t);
}
