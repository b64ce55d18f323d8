/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Fault injection: failed and hung commands (URI and API), a fatal health syndrome,
 * surprise removal, reset; and pages/objects balancing to zero after a bring-up that
 * failed halfway. */
#include "tests/emu/emu_test.h"

static uint32_t iseg32(struct et *t, unsigned bit_off, uint8_t *img)
{
	unsigned off = bit_off / 32 * 4;
	uint32_t v = shim_mmio_read32(&t->bar, off);

	prm_store_be32(img, off * 8, v);
	return v;
}

Test(emu_faults, uri_fail_makes_init_hca_fail_and_teardown_still_balances)
{
	struct et t;
	struct emu_counters c;
	int32_t boot, init;

	et_open(&t, "emu:fail=INIT_HCA:0x3:0x1234");
	et_expect(&t, et_simple(&t, PRM_CMD_OP_ENABLE_HCA, 0, PRM_SIZE(enable_hca_in), 16), 0, 0);
	et_query_pages(&t, 1, &boot);
	et_query_pages(&t, 2, &init);
	t.npages = (size_t)boot + (size_t)init;
	cr_assert_eq(shim_dma_alloc(t.dev, t.npages * 4096, 4096, &t.pages), 0);
	{
		uint64_t *p = calloc(t.npages, sizeof(*p));
		for (size_t i = 0; i < t.npages; i++)
			p[i] = t.pages.iova + i * 4096;
		et_expect(&t, et_give_pages(&t, p, t.npages), 0, 0);
		free(p);
	}
	et_expect(&t, et_simple(&t, PRM_CMD_OP_INIT_HCA, 0, PRM_SIZE(init_hca_in), 16), 0x3, 0x1234);
	/* The driver unwinds: reclaim every page, disable. */
	int got, total = 0;
	while ((got = et_take_pages(&t, 1000)) > 0)
		total += got;
	cr_assert_eq(total, (int)t.npages);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_DISABLE_HCA, 0, PRM_SIZE(disable_hca_in), 16), 0, 0);
	emu_counters(t.emu, &c);
	cr_assert_eq(c.pages_held, 0);
	cr_assert_eq(c.pages_given, c.pages_taken);
	for (int i = 0; i < EMU_OBJ_NTYPES; i++)
		cr_assert_eq(c.objects_live[i], 0);
	et_close(&t);
}

Test(emu_faults, api_fail_halfway_after_objects_exist_and_teardown_balances)
{
	struct et t;
	struct et_eq eq;
	struct emu_counters c;

	et_open(&t, "emu:");
	et_bringup(&t);
	uint32_t uar = et_alloc_uar(&t);
	et_expect(&t, et_create_eq(&t, &eq, uar, 4, 0, 0), 0, 0);
	cr_assert_eq(emu_fault_fail(t.emu, PRM_CMD_OP_ALLOC_PD, PRM_CMD_STAT_NO_RES, PRM_SYND_NO_RESOURCES, 1), 0);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_ALLOC_PD, 0, PRM_SIZE(alloc_pd_in), 16), 0, 0);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_ALLOC_PD, 0, PRM_SIZE(alloc_pd_in), 16), PRM_CMD_STAT_NO_RES,
		  PRM_SYND_NO_RESOURCES);
	et_teardown(&t);
	emu_counters(t.emu, &c);
	cr_assert_eq(c.pages_held, 0);
	for (int i = 0; i < EMU_OBJ_NTYPES; i++)
		cr_assert_eq(c.objects_live[i], 0, "%s", emu_obj_type_name(i));
	et_close(&t);
}

Test(emu_faults, hang_leaves_the_command_pending_until_timeout)
{
	struct et t;
	struct emu_counters c;

	et_open(&t, "emu:hang=0x10a");
	cmdq_set_timeout(t.q, 50);
	int st = et_simple(&t, PRM_CMD_OP_QUERY_ISSI, 0, PRM_SIZE(query_issi_in), PRM_SIZE(query_issi_out));
	cr_assert_eq(st, -ETIMEDOUT, "got %d: %s", st, cmdq_error(t.q));
	emu_counters(t.emu, &c);
	cr_assert_eq(c.cmds, 0);
	et_close(&t);
}

Test(emu_faults, fatal_health_syndrome_stalls_the_counter_and_stops_commands)
{
	struct et t;
	uint8_t img[0x1020] = { 0 };
	struct timespec ts = { 0, 3000000 };

	et_open(&t, "emu:");
	emu_fault_fatal(t.emu, 0x10);
	iseg32(&t, PRM_OFF(initial_seg, health_counter), img);
	uint64_t a = PRM_GET(initial_seg, img, health_counter);
	cr_assert_eq(PRM_GET(initial_seg, img, health_syndrome), 0x10);
	nanosleep(&ts, NULL);
	iseg32(&t, PRM_OFF(initial_seg, health_counter), img);
	cr_assert_eq(PRM_GET(initial_seg, img, health_counter), a, "counter stalled");
	const unsigned hb = PRM_OFF(initial_seg, health_buffer);
	iseg32(&t, hb + PRM_OFF(health_buffer, synd), img);
	cr_assert_eq(PRM_GET(health_buffer, img + hb / 8, synd), 0x10);
	cmdq_set_timeout(t.q, 50);
	cr_assert_eq(et_simple(&t, PRM_CMD_OP_QUERY_ISSI, 0, PRM_SIZE(query_issi_in), PRM_SIZE(query_issi_out)),
		     -ETIMEDOUT);
	et_close(&t);
}

Test(emu_faults, uri_fatal_is_raised_at_open)
{
	struct et t;
	char err[256];
	uint8_t img[0x1020] = { 0 };

	cr_assert_eq(shim_open("emu:fatal=0x7", &t.dev, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(shim_bar(t.dev, 0, &t.bar), 0);
	iseg32(&t, PRM_OFF(initial_seg, health_syndrome), img);
	cr_assert_eq(PRM_GET(initial_seg, img, health_syndrome), 0x7);
	shim_close(t.dev);
}

Test(emu_faults, surprise_removal_reads_all_ones_and_stops_dma)
{
	struct et t;
	struct emu_counters a, b;

	et_open(&t, "emu:");
	emu_surprise_remove(t.emu);
	cr_assert(emu_removed(t.emu));
	cr_assert_eq(shim_mmio_read32(&t.bar, 0), 0xffffffffu, "fw_rev reads all-ones");
	cr_assert_eq(shim_mmio_read32(&t.bar, 0x1010), 0xffffffffu);
	emu_counters(t.emu, &a);
	cmdq_set_timeout(t.q, 30);
	et_simple(&t, PRM_CMD_OP_QUERY_ISSI, 0, PRM_SIZE(query_issi_in), PRM_SIZE(query_issi_out));
	emu_counters(t.emu, &b);
	cr_assert_eq(b.dma_reads, a.dma_reads, "no DMA after removal");
	cr_assert_eq(b.cmds, a.cmds);
	et_close(&t);
}

Test(emu_faults, port_down_at_open_by_uri)
{
	struct et t;

	et_open(&t, "emu:port=down");
	et_bringup(&t);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_QUERY_VPORT_STATE, 0, PRM_SIZE(query_vport_state_in), 16), 0, 0);
	cr_assert_eq(PRM_GET(query_vport_state_out, t.out, state), 0);
	et_close(&t);
}

Test(emu_faults, reset_drops_everything)
{
	struct et t;
	struct emu_counters c;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_alloc_uar(&t);
	cr_assert_eq(shim_reset(t.dev), 0);
	emu_counters(t.emu, &c);
	cr_assert_eq(c.pages_held, 0);
	cr_assert_eq(c.objects_live[EMU_OBJ_UAR], 0);
	cr_assert_eq(emu_hca_state(t.emu), 0);
	et_close(&t);
}

Test(emu_faults, bad_uri_option_is_refused_with_a_message)
{
	struct shim_dev *d = NULL;
	char err[256];

	cr_assert_eq(shim_open("emu:bogus=1", &d, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "bad option"), "%s", err);
	cr_assert_eq(shim_open("emu:fail=NOT_AN_OPCODE:3", &d, err, sizeof(err)), -EINVAL);
	cr_assert_eq(shim_open("emu:page=8k", &d, err, sizeof(err)), -EINVAL);
}

Test(emu_faults, uri_fail_with_skip_fails_the_second_matching_command)
{
	struct et t;

	et_open(&t, "emu:fail=ALLOC_PD:0xf@1");
	et_bringup(&t);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_ALLOC_PD, 0, PRM_SIZE(alloc_pd_in), 16), 0, 0);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_ALLOC_PD, 0, PRM_SIZE(alloc_pd_in), 16), 0xf, 0);
	et_close(&t);
}

Test(emu_faults, reset_after_surprise_removal_is_refused)
{
	struct et t;

	et_open(&t, "emu:");
	emu_surprise_remove(t.emu);
	cr_assert_eq(shim_reset(t.dev), -ENODEV);
	et_close(&t);
}
