/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The emulated ConnectX as a PCI function (hw/emu/pci.c): config space with its IDs and
 * capabilities, and the rules a real card enforces through it: no MMIO without memory
 * space enable, no DMA and no MSI-X message without bus mastering (a command then
 * times out), MSI-X enable, function mask and per-vector mask with pending bits, and a
 * Function Level Reset that clears the function. */
#include <endian.h>
#include <poll.h>
#include <unistd.h>

#include "hw/emu/emu_dev.h"
#include "tests/emu/emu_test.h"

#define CMD_MEMORY 0x2
#define CMD_MASTER 0x4
#define MSIX_CTRL (EMU_PCI_CAP_MSIX + 2)
#define DEVCTL (EMU_PCI_CAP_EXP + 8)
#define EV_PAGE_REQ 0x0b

static uint16_t cfg16(struct emu_dev *d, unsigned off)
{
	uint8_t b[2];

	cr_assert_eq(emu_pci_cfg_read(d, off, b, 2), 0);
	return (uint16_t)(b[0] | b[1] << 8);
}

static uint32_t cfg32(struct emu_dev *d, unsigned off)
{
	return cfg16(d, off) | (uint32_t)cfg16(d, off + 2) << 16;
}

static void cfg16_set(struct emu_dev *d, unsigned off, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)v, (uint8_t)(v >> 8) };

	cr_assert_eq(emu_pci_cfg_write(d, off, b, 2), 0);
}

/* The MSI-X table and PBA are little-endian (PCI 3.0 6.8.2); shim_mmio_* speak the
 * ConnectX's big-endian registers. */
static uint32_t le_read(struct et *t, uint64_t off)
{
	return le32toh(htobe32(shim_mmio_read32(&t->bar, off)));
}

static void le_write(struct et *t, uint64_t off, uint32_t v)
{
	shim_mmio_write32(&t->bar, off, be32toh(htole32(v)));
}

static int irq_count(struct et *t, unsigned vec)
{
	struct pollfd p = { .fd = shim_irq_fd(t->dev, vec), .events = POLLIN };
	uint64_t v;

	if (poll(&p, 1, 0) != 1)
		return 0;
	cr_assert_eq(read(p.fd, &v, sizeof(v)), 8);
	return (int)v;
}

static struct emu_dev *bare_device(void)
{
	struct emu_config cfg;
	struct emu_dev *d = NULL;
	char err[256] = "";

	memset(&cfg, 0, sizeof(cfg));
	cr_assert_eq(emu_create(&cfg, &d, err, sizeof(err)), 0, "%s", err);
	return d;
}

Test(emu_pci, config_space_has_ids_and_capabilities)
{
	struct emu_dev *d = bare_device();
	unsigned cap, seen = 0;

	cr_assert_eq(cfg16(d, 0x00), 0x15b3);
	cr_assert_eq(cfg16(d, 0x02), 0x1019);
	cr_assert_eq(cfg32(d, 0x08) >> 8, 0x020000, "class: Ethernet controller");
	cr_assert_eq(cfg16(d, 0x2c), 0x15b3);
	cr_assert(cfg16(d, 0x06) & 0x10, "capabilities list");
	for (cap = cfg16(d, 0x34) & 0xff; cap; cap = cfg16(d, cap) >> 8) {
		uint8_t id = (uint8_t)cfg16(d, cap);

		if (id == 0x10) {
			seen |= 1;
			cr_assert(cfg32(d, cap + 4) & (1u << 28), "Device Capabilities: FLR capable");
		} else if (id == 0x11) {
			seen |= 2;
			cr_assert_eq((cfg16(d, cap + 2) & 0x7ff) + 1, EMU_NUM_VECTORS);
			cr_assert_eq(cfg32(d, cap + 4), EMU_MSIX_TABLE_OFF | 0, "table in BAR0");
			cr_assert_eq(cfg32(d, cap + 8), EMU_MSIX_PBA_OFF | 0, "PBA in BAR0");
		}
	}
	cr_assert_eq(seen, 3, "PCI Express and MSI-X capabilities");
	/* BAR sizing: all-ones written, the size comes back. */
	uint8_t ones[4] = { 0xff, 0xff, 0xff, 0xff };
	cr_assert_eq(emu_pci_cfg_write(d, 0x10, ones, 4), 0);
	cr_assert_eq(cfg32(d, 0x10) & ~0xfu, ~(uint32_t)(EMU_BAR0_LEN - 1));
	/* Read-only fields stay. */
	cfg16_set(d, 0x00, 0x1234);
	cr_assert_eq(cfg16(d, 0x00), 0x15b3);
	emu_destroy(d);
}

Test(emu_pci, powers_on_with_memory_space_and_bus_mastering_off)
{
	struct emu_dev *d = bare_device();

	cr_assert_eq(cfg16(d, 0x04) & (CMD_MEMORY | CMD_MASTER), 0);
	cr_assert_eq(cfg16(d, MSIX_CTRL) & 0xc000, 0, "MSI-X disabled, not function-masked");
	emu_destroy(d);
}

Test(emu_pci, without_memory_space_bar_reads_all_ones_and_stores_are_dropped)
{
	struct emu_dev *d = bare_device();
	volatile uint8_t *bar = emu_bar_base(d);
	struct emu_counters c;
	uint32_t v;

	emu_mmio_access(d, SHIM_MMIO_READ, 0, 4);
	memcpy(&v, (const void *)bar, 4);
	cr_assert_eq(v, 0xffffffffu, "fw_rev reads all-ones while memory space is off");
	/* The command doorbell: dropped, no command looked at. */
	unsigned db = PRM_OFF(initial_seg, command_doorbell_vector) / 32 * 4;
	bar[db + 3] = 1;
	emu_mmio_access(d, SHIM_MMIO_WRITE, db, 4);
	emu_counters(d, &c);
	cr_assert_eq(c.mmio_dropped, 1);
	cr_assert_eq(c.cmd_doorbells, 0);
	cr_assert_eq(emu_pci_host_enable(d), 0);
	emu_mmio_access(d, SHIM_MMIO_READ, 0, 4);
	memcpy(&v, (const void *)bar, 4);
	cr_assert_neq(v, 0xffffffffu, "the init segment reads again once memory space is on");
	cr_assert_eq(prm_load_be32((const uint8_t *)bar, 0) >> 16, 35, "fw_rev_minor");
	emu_destroy(d);
}

/* The command queue is in host memory: without bus mastering the device cannot fetch
 * the entry, so the command never completes (a card behaves the same). */
Test(emu_pci, without_bus_mastering_a_command_times_out)
{
	struct shim_dev *dev;
	struct shim_bar bar;
	struct cmdq *q;
	struct emu_counters c;
	struct cmdq_config cfg = { .timeout_ms = 200, .use_signatures = 1 };
	uint8_t in[16] = { 0 }, out[16];
	char err[256];

	cr_assert_eq(shim_open("emu:", &dev, err, sizeof(err)), 0, "%s", err);
	struct emu_dev *d = emu_device_from_shim(dev);
	cfg16_set(d, 0x04, CMD_MEMORY);
	cr_assert_eq(shim_bar(dev, 0, &bar), 0);
	cr_assert_eq(cmdq_create(dev, &bar, &cfg, &q), 0, "%s", dev->err);
	PRM_SET(cmd_in, in, opcode, PRM_CMD_OP_ENABLE_HCA);
	cr_assert_eq(cmdq_exec(q, in, sizeof(in), out, sizeof(out)), -ETIMEDOUT, "%s", cmdq_error(q));
	emu_counters(d, &c);
	cr_assert_gt(c.dma_blocked, 0);
	cr_assert_eq(c.cmds, 0);
	cr_assert_eq(emu_hca_state(d), 0);
	cr_assert(emu_drverr_find(d, "bus mastering off"));
	cmdq_destroy(q);
	shim_close(dev);
}

Test(emu_pci, without_bus_mastering_no_msix_message)
{
	struct et t;
	struct emu_counters c;

	et_open(&t, "emu:");
	cr_assert_eq(irq_count(&t, 3), 0);   /* routes the vector */
	cfg16_set(t.emu, 0x04, CMD_MEMORY);
	pthread_mutex_lock(&t.emu->lock);
	emu_irq_raise(t.emu, 3);
	pthread_mutex_unlock(&t.emu->lock);
	cr_assert_eq(irq_count(&t, 3), 0, "a message is a memory write: not sent");
	emu_counters(t.emu, &c);
	cr_assert_eq(c.msix_blocked, 1);
	cfg16_set(t.emu, 0x04, CMD_MEMORY | CMD_MASTER);
	pthread_mutex_lock(&t.emu->lock);
	emu_irq_raise(t.emu, 3);
	pthread_mutex_unlock(&t.emu->lock);
	cr_assert_eq(irq_count(&t, 3), 1);
	et_close(&t);
}

Test(emu_pci, msix_disabled_sends_nothing)
{
	struct et t;

	et_open(&t, "emu:");
	cr_assert_eq(irq_count(&t, 2), 0);
	cfg16_set(t.emu, MSIX_CTRL, 0);
	pthread_mutex_lock(&t.emu->lock);
	emu_irq_raise(t.emu, 2);
	pthread_mutex_unlock(&t.emu->lock);
	cr_assert_eq(irq_count(&t, 2), 0);
	et_close(&t);
}

static void page_event(struct et *t, struct et_eq *eq)
{
	et_eq_doorbell(t, eq, 1, eq->cc);
	cr_assert_eq(emu_pages_request(t->emu, 1), 0);
	cr_assert_not_null(et_eq_next(eq));
}

Test(emu_pci, function_mask_holds_the_message_pending_until_cleared)
{
	struct et t;
	struct et_eq eq;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, et_create_eq(&t, &eq, et_alloc_uar(&t), 4, 2, ET_EVBIT(EV_PAGE_REQ)), 0, 0);
	cr_assert_eq(irq_count(&t, 2), 0);
	cfg16_set(t.emu, MSIX_CTRL, 0x8000 | 0x4000);
	page_event(&t, &eq);
	cr_assert_eq(irq_count(&t, 2), 0, "function masked");
	cr_assert_eq(le_read(&t, EMU_MSIX_PBA_OFF), 1u << 2, "pending bit of vector 2 (PBA)");
	cfg16_set(t.emu, MSIX_CTRL, 0x8000);
	cr_assert_eq(irq_count(&t, 2), 1, "sent when the mask clears");
	cr_assert_eq(le_read(&t, EMU_MSIX_PBA_OFF), 0);
	et_close(&t);
}

Test(emu_pci, vector_mask_holds_the_message_pending_until_cleared)
{
	struct et t;
	struct et_eq eq;
	uint64_t ctl = EMU_MSIX_TABLE_OFF + 5 * 16 + 12;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, et_create_eq(&t, &eq, et_alloc_uar(&t), 4, 5, ET_EVBIT(EV_PAGE_REQ)), 0, 0);
	cr_assert_eq(irq_count(&t, 5), 0);
	cr_assert_eq(le_read(&t, ctl), 0, "the shim unmasked the routed vector");
	le_write(&t, ctl, 1);   /* little-endian dword, as on a card */
	cr_assert_eq(le_read(&t, ctl), 1);
	page_event(&t, &eq);
	cr_assert_eq(irq_count(&t, 5), 0, "vector masked");
	cr_assert_eq(le_read(&t, EMU_MSIX_PBA_OFF), 1u << 5);
	le_write(&t, ctl, 0);
	cr_assert_eq(irq_count(&t, 5), 1, "sent when the vector is unmasked");
	et_close(&t);
}

/* Device Control's Initiate FLR: the function's state and its config state go, as on a
 * card (PCIe 6.6.2); the cmdq and every object and page with them. */
Test(emu_pci, flr_clears_the_function)
{
	struct et t;
	struct emu_counters c;
	uint16_t devctl;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_alloc_uar(&t);
	cr_assert_eq(irq_count(&t, 1), 0);
	emu_counters(t.emu, &c);
	cr_assert_gt(c.pages_held, 0);
	devctl = cfg16(t.emu, DEVCTL);
	cfg16_set(t.emu, DEVCTL, devctl | 0x8000);
	cr_assert_eq(cfg16(t.emu, DEVCTL) & 0x8000, 0, "Initiate FLR reads 0");
	emu_counters(t.emu, &c);
	cr_assert_eq(c.flrs, 1);
	cr_assert_eq(c.pages_held, 0);
	cr_assert_eq(c.objects_live[EMU_OBJ_UAR], 0);
	cr_assert_eq(emu_hca_state(t.emu), 0);
	cr_assert_eq(cfg16(t.emu, 0x04) & (CMD_MEMORY | CMD_MASTER), 0, "bus mastering off");
	cr_assert_eq(cfg16(t.emu, MSIX_CTRL) & 0x8000, 0, "MSI-X disabled");
	cr_assert_eq(emu_pci_host_enable(t.emu), 0);
	cr_assert_eq(le_read(&t, EMU_MSIX_TABLE_OFF + 1 * 16 + 12), 1, "table entries masked again");
	cr_assert_eq(shim_mmio_read32(&t.bar, PRM_OFF(initial_seg, cmdq_phy_addr_31_12) / 8) & ~0xfffu, 0,
		     "command queue forgotten");
	et_close(&t);
}

/* What an FLR leaves and what it resets (PCIe Base 4.0 6.6.2): Max_Payload_Size in
 * Device Control is among the fields it does not affect; every other non-sticky
 * register, BAR0's address and Device Control's other fields included, goes back to its
 * initial value. */
Test(emu_pci, flr_keeps_max_payload_size_and_resets_the_bar)
{
	struct emu_dev *d = bare_device();
	uint16_t devctl = cfg16(d, DEVCTL);

	cr_assert_eq(cfg32(d, 0x10), 0x0000000cu, "BAR0 at power-on: no address, 64-bit prefetchable");
	cfg16_set(d, 0x10, 0x000c);
	cfg16_set(d, 0x12, 0xfe00);                       /* BAR0 at 0x1_fe000000 */
	cfg16_set(d, 0x14, 0x0001);
	cr_assert_eq(cfg32(d, 0x10), 0xfe00000cu);
	/* Max_Payload_Size 256 (bits 7:5 = 1), relaxed ordering (bit 4) cleared */
	uint16_t mine = (uint16_t)((devctl & ~0x00f0u) | 1u << 5);
	cfg16_set(d, DEVCTL, mine);
	cfg16_set(d, DEVCTL, mine | 0x8000);
	cr_assert_eq(cfg16(d, DEVCTL) & 0x00e0, 1u << 5, "Max_Payload_Size is not affected by FLR");
	cr_assert_eq(cfg16(d, DEVCTL) & ~0x00e0u, devctl & ~0x00e0u, "the other Device Control fields reset");
	cr_assert_eq(cfg32(d, 0x10), 0x0000000cu, "BAR0's address resets");
	cr_assert_eq(cfg32(d, 0x14), 0, "BAR0's upper half resets");
	emu_destroy(d);
}

/* shim_reset restores what Linux's pci_reset_function restores (pci_save_state before
 * the FLR, pci_restore_state after): BAR0's address and Device Control as they were. */
Test(emu_pci, shim_reset_restores_the_bar_and_device_control)
{
	struct et t;

	et_open(&t, "emu:");
	cfg16_set(t.emu, 0x12, 0xfe00);
	cfg16_set(t.emu, 0x14, 0x0001);
	uint16_t devctl = (uint16_t)((cfg16(t.emu, DEVCTL) & ~0x00f0u) | 1u << 5);
	cfg16_set(t.emu, DEVCTL, devctl);
	cr_assert_eq(shim_reset(t.dev), 0);
	cr_assert_eq(cfg32(t.emu, 0x10), 0xfe00000cu);
	cr_assert_eq(cfg32(t.emu, 0x14), 1);
	cr_assert_eq(cfg16(t.emu, DEVCTL), devctl);
	et_close(&t);
}

/* shim_reset on emu: is vfio-pci's VFIO_DEVICE_RESET: FLR with the config state saved
 * and restored, so the driver can bring the function up again at once. */
Test(emu_pci, shim_reset_restores_bus_mastering_and_routed_vectors)
{
	struct et t;

	et_open(&t, "emu:");
	et_bringup(&t);
	cr_assert_eq(irq_count(&t, 4), 0);
	cr_assert_eq(shim_reset(t.dev), 0);
	cr_assert_eq(cfg16(t.emu, 0x04) & (CMD_MEMORY | CMD_MASTER), CMD_MEMORY | CMD_MASTER);
	cr_assert_eq(le_read(&t, EMU_MSIX_TABLE_OFF + 4 * 16 + 12), 0);
	pthread_mutex_lock(&t.emu->lock);
	emu_irq_raise(t.emu, 4);
	pthread_mutex_unlock(&t.emu->lock);
	cr_assert_eq(irq_count(&t, 4), 1);
	et_close(&t);
}

/* msix=N: the function offers N vectors, and its MSI-X capability says so: Table Size
 * N - 1 (PCIe 7.7.2.2), N table entries, each reset masked; the dwords past the table
 * are not entries (they read 0 and keep nothing written), and the PBA has a bit for each
 * of the N vectors only (one QWORD holds up to 64; PCIe 7.7.2.5: the bits past the
 * table are reserved, read 0).  A host sizes its vectors from this field (Linux
 * pci_msix_vec_count(), vfio-pci's VFIO_DEVICE_GET_IRQ_INFO count). */
Test(emu_pci, msix_option_sizes_the_table_and_its_pending_bits)
{
	struct et t;
	struct et_eq eq;

	et_open(&t, "emu:msix=5");
	cr_assert_eq((cfg16(t.emu, MSIX_CTRL) & 0x7ff) + 1, 5, "Table Size field");
	cr_assert_eq(emu_irq_count(t.emu), 5);
	et_bringup(&t);
	/* the table's last entry, reset masked; the dword after it is none */
	uint64_t last = EMU_MSIX_TABLE_OFF + 4 * 16, past = EMU_MSIX_TABLE_OFF + 5 * 16;
	le_write(&t, last, 0xfee00000u);
	cr_assert_eq(le_read(&t, last), 0xfee00000u);
	le_write(&t, past, 0xfee00000u);
	le_write(&t, past + 12, 0);
	cr_assert_eq(le_read(&t, past), 0, "past the table: no entry");
	cr_assert_eq(le_read(&t, past + 12), 0);
	cr_assert_eq(emu_pci_host_unmask(t.emu, 5), -EINVAL, "no vector 5");
	/* the PBA: vector 4 masked and pending, and nothing above bit 4 */
	et_expect(&t, et_create_eq(&t, &eq, et_alloc_uar(&t), 4, 4, ET_EVBIT(EV_PAGE_REQ)), 0, 0);
	le_write(&t, last + 12, 1);
	page_event(&t, &eq);
	cr_assert_eq(le_read(&t, EMU_MSIX_PBA_OFF), 1u << 4);
	cr_assert_eq(le_read(&t, EMU_MSIX_PBA_OFF + 4), 0);
	le_write(&t, last + 12, 0);
	cr_assert_eq(irq_count(&t, 4), 1, "sent when the vector is unmasked");
	/* an EQ on a vector the table does not have is refused (bad parameter) */
	et_expect(&t, et_create_eq(&t, &eq, et_alloc_uar(&t), 4, 5, ET_EVBIT(EV_PAGE_REQ)), PRM_CMD_STAT_BAD_PARAM,
		  PRM_SYND_BAD_INTR_VECTOR);
	et_close(&t);
}

/* An FLR brings the table back to N masked entries, not 64. */
Test(emu_pci, msix_table_size_survives_an_flr)
{
	struct emu_dev *d;
	struct et t;

	et_open(&t, "emu:msix=3");
	d = t.emu;
	cfg16_set(d, DEVCTL, (uint16_t)(cfg16(d, DEVCTL) | 0x8000));
	cr_assert_eq((cfg16(d, MSIX_CTRL) & 0x7ff) + 1, 3);
	et_close(&t);
}
