/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The emulated device's registers and the life cycle through the real command engine:
 * init segment, bring-up and teardown, counters balancing to zero. */
#include "tests/emu/emu_test.h"

static uint32_t iseg_read(struct et *t, const char *what, unsigned bit_off, uint8_t *img)
{
	unsigned off = bit_off / 32 * 4;
	(void)what;
	prm_store_be32(img, off * 8, shim_mmio_read32(&t->bar, off));
	return 0;
}

Test(emu_device, init_segment_reports_connectx5_ex_with_cmdif_rev_5)
{
	struct et t;
	uint8_t img[0x1020] = { 0 };

	et_open(&t, "emu:");
	cr_assert_eq(t.dev->pci.vendor_id, 0x15b3);
	cr_assert_eq(t.dev->pci.device_id, 0x1019);
	iseg_read(&t, "fw", PRM_OFF(initial_seg, fw_rev_major), img);
	iseg_read(&t, "cmdif", PRM_OFF(initial_seg, cmd_interface_rev), img);
	iseg_read(&t, "cmdq", PRM_OFF(initial_seg, log_cmdq_size), img);
	cr_assert_eq(PRM_GET(initial_seg, img, cmd_interface_rev), 5);
	cr_assert_eq(PRM_GET(initial_seg, img, fw_rev_major), 16);
	cr_assert_eq(PRM_GET(initial_seg, img, log_cmdq_size), 5);
	cr_assert_eq(PRM_GET(initial_seg, img, log_cmdq_stride), 6);
	cr_assert_neq(PRM_GET(initial_seg, img, cmdq_phy_addr_31_12), 0, "cmdq address reads back");
	et_close(&t);
}

Test(emu_device, health_counter_advances)
{
	struct et t;
	uint8_t img[0x1020] = { 0 };
	struct timespec ts = { 0, 3000000 };

	et_open(&t, "emu:");
	iseg_read(&t, "hc", PRM_OFF(initial_seg, health_counter), img);
	uint64_t a = PRM_GET(initial_seg, img, health_counter);
	nanosleep(&ts, NULL);
	iseg_read(&t, "hc", PRM_OFF(initial_seg, health_counter), img);
	cr_assert_neq(PRM_GET(initial_seg, img, health_counter), a);
	et_close(&t);
}

Test(emu_device, bringup_and_teardown_balance_pages_and_objects)
{
	struct et t;
	struct emu_counters c;

	et_open(&t, "emu:");
	et_bringup(&t);
	cr_assert_eq(emu_hca_state(t.emu), 2);
	emu_counters(t.emu, &c);
	cr_assert_eq(c.pages_held, (uint64_t)EMU_CAPS_SEED_BOOT_PAGES + EMU_CAPS_SEED_INIT_PAGES);
	cr_assert_eq(c.cmds_failed, 0);
	et_teardown(&t);
	emu_counters(t.emu, &c);
	cr_assert_eq(c.pages_held, 0);
	cr_assert_eq(c.pages_given, c.pages_taken);
	for (int i = 0; i < EMU_OBJ_NTYPES; i++)
		cr_assert_eq(c.objects_live[i], 0, "%s objects left", emu_obj_type_name(i));
	cr_assert_eq(c.driver_errors, 0);
	cr_assert_eq(emu_hca_state(t.emu), 0);
	et_close(&t);
}
