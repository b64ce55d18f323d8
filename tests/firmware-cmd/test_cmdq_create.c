/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* cmdq_create against the scripted device: PRM "Initialization Segment" handling. */
#include <errno.h>

#include "tests/firmware-cmd/cmdq_testlib.h"

static const struct scripted_mmio_write *find_write(const struct scripted_dev *d, unsigned bit_off, unsigned *idx)
{
	for (unsigned i = 0; i < d->nwrites; i++)
		if (d->writes[i].off == scripted_iseg_dword(bit_off)) {
			if (idx)
				*idx = i;
			return &d->writes[i];
		}
	return NULL;
}

Test(cmdq_create, programs_the_queue_iova_which_is_not_its_va)
{
	struct cmdq_fix f;
	uint64_t iova;
	void *va;

	cmdq_fix_up(&f, NULL, false);
	iova = scripted_dev_cmdq_iova(f.d);
	cr_assert_eq(iova & 0xfff, 0, "queue IOVA 0x%llx not 4 KiB aligned", (unsigned long long)iova);
	cr_assert_neq(iova >> 32, 0, "the scripted IOVA has a non-zero high dword; it was lost");
	va = scripted_dev_iova_to_va(f.d, iova, 4096);
	cr_assert_not_null(va, "programmed address is not a DMA allocation's IOVA");
	cr_assert_neq((uint64_t)(uintptr_t)va, iova);
	cmdq_fix_down(&f);
}

Test(cmdq_create, writes_the_high_address_dword_before_the_low_one)
{
	struct cmdq_fix f;
	unsigned hi = 99, lo = 99;

	cmdq_fix_up(&f, NULL, false);
	cr_assert_not_null(find_write(f.d, PRM_OFF(initial_seg, cmdq_phy_addr_63_32), &hi));
	cr_assert_not_null(find_write(f.d, PRM_OFF(initial_seg, cmdq_phy_addr_31_12), &lo));
	cr_assert_lt(hi, lo, "cmdq_phy_addr_63_32 must be written first (write %u vs %u)", hi, lo);
	cmdq_fix_down(&f);
}

Test(cmdq_create, leaves_the_device_owned_size_bits_of_the_low_dword_zero)
{
	struct cmdq_fix f;
	const struct scripted_mmio_write *w;
	uint8_t img[32] = { 0 };

	cmdq_fix_up(&f, NULL, false);
	w = find_write(f.d, PRM_OFF(initial_seg, cmdq_phy_addr_31_12), NULL);
	cr_assert_not_null(w);
	prm_store_be32(img, PRM_OFF(initial_seg, cmdq_phy_addr_31_12), w->value);
	cr_assert_eq(PRM_GET(initial_seg, img, log_cmdq_size), 0);
	cr_assert_eq(PRM_GET(initial_seg, img, log_cmdq_stride), 0);
	cr_assert_eq(PRM_GET(initial_seg, img, nic_interface), 0);
	cmdq_fix_down(&f);
}

Test(cmdq_create, rejects_cmd_interface_rev_4_naming_the_value)
{
	struct scripted_config cfg = { .cmd_interface_rev = 4, .log_cmdq_size = 5, .log_cmdq_stride = 6 };
	struct scripted_dev *d = scripted_dev_create(&cfg);
	struct cmdq *q = (struct cmdq *)1;

	cr_assert_eq(cmdq_create(&d->shim, &d->bar, NULL, &q), -EOPNOTSUPP);
	cr_assert_null(q);
	cr_assert(strstr(d->shim.err, "cmd_interface_rev 4") != NULL, "message: %s", d->shim.err);
	cr_assert_eq(d->live_dma, 0);
	scripted_dev_destroy(d);
}

Test(cmdq_create, reports_a_vanished_device_reading_all_ones)
{
	struct scripted_dev *d = scripted_dev_create(NULL);
	struct cmdq *q;

	memset(d->bar_mem, 0xff, 64);
	cr_assert_eq(cmdq_create(&d->shim, &d->bar, NULL, &q), -ENODEV);
	cr_assert(strstr(d->shim.err, "all-ones") != NULL, "message: %s", d->shim.err);
	scripted_dev_destroy(d);
}

Test(cmdq_create, rejects_a_queue_that_does_not_fit_one_page)
{
	struct scripted_config cfg = { .cmd_interface_rev = 5, .log_cmdq_size = 7, .log_cmdq_stride = 6 };
	struct scripted_dev *d = scripted_dev_create(&cfg);
	struct cmdq *q;

	cr_assert_eq(cmdq_create(&d->shim, &d->bar, NULL, &q), -EPROTO);
	cr_assert(strstr(d->shim.err, "log_cmdq_size 7") != NULL, "message: %s", d->shim.err);
	cr_assert_eq(d->live_dma, 0, "a failed create must free what it allocated");
	scripted_dev_destroy(d);
}

Test(cmdq_create, destroy_frees_every_dma_allocation)
{
	struct cmdq_fix f;

	cmdq_fix_up(&f, NULL, false);
	cr_assert_gt(f.d->live_dma, 0);
	cmdq_destroy(f.q);
	cr_assert_eq(f.d->live_dma, 0);
	scripted_dev_destroy(f.d);
}

Test(cmdq_create, does_not_ring_the_doorbell)
{
	struct cmdq_fix f;

	cmdq_fix_up(&f, NULL, false);
	cr_assert_eq(f.d->doorbells, 0);
	cmdq_fix_down(&f);
}
