/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Delivery checks of the command interface (PRM "Command Queue Entry" status), driven
 * by a tiny raw command writer instead of the engine, so each error can be provoked:
 * bad token, misaligned or unmapped mailbox, wrong block number, a chain that loops,
 * wrong entry type, and a doorbell for an entry software still owns.  Signatures are
 * checked only with cmdif_checksum on: test_cmd_checksums.c. */
#include "tests/emu/emu_test.h"

#define BOX PRM_SIZE(cmd_if_box)

struct raw {
	struct shim_dev *dev;
	struct shim_bar bar;
	struct emu_dev *emu;
	struct shim_dma q, boxes;
};

static void iseg_store(struct raw *r, unsigned bit_off, uint8_t *img)
{
	unsigned off = bit_off / 32 * 4;
	shim_mmio_write32(&r->bar, off, prm_load_be32(img, off * 8));
}

static void raw_wait(struct raw *r)
{
	uint8_t img[0x200] = { 0 };
	unsigned off = PRM_OFF(initial_seg, initializing) / 32 * 4;
	struct timespec ts = { 0, 200000 };

	for (int i = 0; i < 10000; i++) {
		prm_store_be32(img, off * 8, shim_mmio_read32(&r->bar, off));
		if (!PRM_GET(initial_seg, img, initializing))
			return;
		nanosleep(&ts, NULL);
	}
	cr_assert_fail("initializing never cleared");
}

static void raw_open(struct raw *r)
{
	char err[256];
	uint8_t img[0x20] = { 0 };

	memset(r, 0, sizeof(*r));
	cr_assert_eq(shim_open("emu:", &r->dev, err, sizeof(err)), 0, "%s", err);
	r->emu = emu_device_from_shim(r->dev);
	cr_assert_eq(shim_bar(r->dev, 0, &r->bar), 0);
	raw_wait(r);
	cr_assert_eq(shim_dma_alloc(r->dev, 4096, 4096, &r->q), 0);
	cr_assert_eq(shim_dma_alloc(r->dev, 8 * 1024, 1024, &r->boxes), 0);
	PRM_SET(initial_seg, img, cmdq_phy_addr_63_32, r->q.iova >> 32);
	PRM_SET(initial_seg, img, cmdq_phy_addr_31_12, (r->q.iova & 0xffffffffu) >> 12);
	iseg_store(r, PRM_OFF(initial_seg, cmdq_phy_addr_63_32), img);
	iseg_store(r, PRM_OFF(initial_seg, cmdq_phy_addr_31_12), img);
	raw_wait(r);
}

static void raw_close(struct raw *r)
{
	shim_close(r->dev);
}

static uint8_t *entry(struct raw *r)
{
	return r->q.va;
}

static uint8_t *box(struct raw *r, unsigned i)
{
	return (uint8_t *)r->boxes.va + i * 1024;
}

static uint64_t box_iova(struct raw *r, unsigned i)
{
	return r->boxes.iova + i * 1024;
}

/* QUERY_ISSI with a 0x70-byte output: one output mailbox; `nin` input boxes chained. */
static void prepare(struct raw *r, unsigned nin, uint8_t token)
{
	uint8_t *e = entry(r);
	uint8_t in[16] = { 0 };

	memset(e, 0, 64);
	memset(r->boxes.va, 0, 8 * 1024);
	PRM_SET(cmd_in, in, opcode, PRM_CMD_OP_QUERY_ISSI);
	PRM_SET(cmd_queue_entry, e, type, 7);
	PRM_SET(cmd_queue_entry, e, input_length, 16 + nin * 512);
	PRM_SET(cmd_queue_entry, e, output_length, PRM_SIZE(query_issi_out));
	memcpy(PRM_ADDR(cmd_queue_entry, e, command_input_inline_data), in, 16);
	PRM_SET(cmd_queue_entry, e, token, token);
	for (unsigned i = 0; i < nin; i++) {
		PRM_SET(cmd_if_box, box(r, i), block_number, i);
		PRM_SET(cmd_if_box, box(r, i), token, token);
		if (i + 1 < nin) {
			PRM_SET(cmd_if_box, box(r, i), next_pointer_63_32, box_iova(r, i + 1) >> 32);
			PRM_SET(cmd_if_box, box(r, i), next_pointer_31_10, (box_iova(r, i + 1) & 0xffffffffu) >> 10);
		}
	}
	if (nin) {
		PRM_SET(cmd_queue_entry, e, input_mailbox_pointer_63_32, box_iova(r, 0) >> 32);
		PRM_SET(cmd_queue_entry, e, input_mailbox_pointer_31_9, (box_iova(r, 0) & 0xffffffffu) >> 9);
	}
	/* output box: slot 7 */
	PRM_SET(cmd_if_box, box(r, 7), token, token);
	PRM_SET(cmd_queue_entry, e, output_mailbox_pointer_63_32, box_iova(r, 7) >> 32);
	PRM_SET(cmd_queue_entry, e, output_mailbox_pointer_31_9, (box_iova(r, 7) & 0xffffffffu) >> 9);
	PRM_SET(cmd_queue_entry, e, ownership, 1);
}

static void ring(struct raw *r)
{
	uint8_t img[0x20] = { 0 };

	PRM_SET(initial_seg, img, command_doorbell_vector, 1);
	iseg_store(r, PRM_OFF(initial_seg, command_doorbell_vector), img);
}

static unsigned delivery(struct raw *r)
{
	cr_assert_eq(PRM_GET(cmd_queue_entry, entry(r), ownership), 0, "entry completed");
	return (unsigned)PRM_GET(cmd_queue_entry, entry(r), status);
}

Test(emu_delivery, well_formed_raw_command_completes)
{
	struct raw r;

	raw_open(&r);
	prepare(&r, 1, 0x5a);
	ring(&r);
	cr_assert_eq(delivery(&r), 0);
	cr_assert_eq(PRM_GET(cmd_out, PRM_ADDR(cmd_queue_entry, entry(&r), command_output_inline_data), status), 0);
	cr_assert_eq(PRM_GET(query_issi_out, box(&r, 7) - 16, supported_issi_dw0), 0x3,
		     "output continues in the output mailbox");
	raw_close(&r);
}

Test(emu_delivery, mailbox_token_differs_from_entry_token)
{
	struct raw r;

	raw_open(&r);
	prepare(&r, 2, 0x5a);
	PRM_SET(cmd_if_box, box(&r, 1), token, 0x5b);
	ring(&r);
	cr_assert_eq(delivery(&r), PRM_DELIV_TOKEN_ERR);
	raw_close(&r);
}

Test(emu_delivery, input_mailbox_not_1k_aligned)
{
	struct raw r;
	uint64_t a;

	raw_open(&r);
	prepare(&r, 1, 3);
	a = box_iova(&r, 0) + 512;
	PRM_SET(cmd_queue_entry, entry(&r), input_mailbox_pointer_31_9, (a & 0xffffffffu) >> 9);
	ring(&r);
	cr_assert_eq(delivery(&r), PRM_DELIV_IN_PTR_ALIGN_ERR);
	cr_assert(emu_drverr_find(r.emu, "not 1 KiB aligned"));
	raw_close(&r);
}

Test(emu_delivery, input_mailbox_at_an_unmapped_iova_is_a_dma_fault)
{
	struct raw r;
	struct emu_counters c;

	raw_open(&r);
	prepare(&r, 1, 3);
	PRM_SET(cmd_queue_entry, entry(&r), input_mailbox_pointer_63_32, 0x7777);
	ring(&r);
	cr_assert_eq(delivery(&r), PRM_DELIV_IN_PTR_ALIGN_ERR);
	emu_counters(r.emu, &c);
	cr_assert_eq(c.dma_faults, 1);
	cr_assert(emu_drverr_find(r.emu, "unmapped IOVA"));
	raw_close(&r);
}

Test(emu_delivery, output_mailbox_at_an_unmapped_iova)
{
	struct raw r;

	raw_open(&r);
	prepare(&r, 0, 3);
	PRM_SET(cmd_queue_entry, entry(&r), output_mailbox_pointer_63_32, 0x7777);
	ring(&r);
	cr_assert_eq(delivery(&r), PRM_DELIV_OUT_PTR_ALIGN_ERR);
	raw_close(&r);
}

Test(emu_delivery, wrong_block_number)
{
	struct raw r;

	raw_open(&r);
	prepare(&r, 3, 9);
	PRM_SET(cmd_if_box, box(&r, 1), block_number, 5);
	ring(&r);
	cr_assert_eq(delivery(&r), PRM_DELIV_BAD_BLOCK_NUMBER);
	raw_close(&r);
}

Test(emu_delivery, mailbox_chain_that_loops)
{
	struct raw r;

	raw_open(&r);
	prepare(&r, 3, 9);
	/* block 1 points back to block 0 */
	PRM_SET(cmd_if_box, box(&r, 1), next_pointer_63_32, box_iova(&r, 0) >> 32);
	PRM_SET(cmd_if_box, box(&r, 1), next_pointer_31_10, (box_iova(&r, 0) & 0xffffffffu) >> 10);
	ring(&r);
	cr_assert_eq(delivery(&r), PRM_DELIV_BAD_BLOCK_NUMBER);
	cr_assert(emu_drverr_find(r.emu, "chain loops"));
	raw_close(&r);
}

Test(emu_delivery, entry_type_other_than_pcie)
{
	struct raw r;

	raw_open(&r);
	prepare(&r, 0, 1);
	PRM_SET(cmd_queue_entry, entry(&r), type, 3);
	ring(&r);
	cr_assert_eq(delivery(&r), PRM_DELIV_CMD_DESCR_ERR);
	raw_close(&r);
}

Test(emu_delivery, doorbell_for_a_software_owned_entry_is_a_driver_error)
{
	struct raw r;
	struct emu_counters c;

	raw_open(&r);
	prepare(&r, 0, 1);
	PRM_SET(cmd_queue_entry, entry(&r), ownership, 0);
	ring(&r);
	emu_counters(r.emu, &c);
	cr_assert_eq(c.cmds, 0, "nothing executed");
	cr_assert(emu_drverr_find(r.emu, "ownership bit is clear"));
	raw_close(&r);
}
