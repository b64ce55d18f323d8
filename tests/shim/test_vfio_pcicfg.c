/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* PCI configuration space decoding (hw/shim/vfio_pcicfg.c) over config space bytes built
 * here the way a ConnectX-5 presents them (capabilities: power management at 0x40, VPD
 * at 0x48, PCI Express at 0x60, MSI-X at 0x9c), plus broken lists. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "hw/shim/vfio_pcicfg.h"

static uint8_t cfg[256];

static void put16(unsigned off, uint16_t v) { cfg[off] = (uint8_t)v; cfg[off + 1] = (uint8_t)(v >> 8); }
static void put32(unsigned off, uint32_t v) { put16(off, (uint16_t)v); put16(off + 2, (uint16_t)(v >> 16)); }

static void cap(unsigned off, uint8_t id, uint8_t next) { cfg[off] = id; cfg[off + 1] = next; }

/* A ConnectX-5 (15b3:1017, subsystem 15b3:0007) in a gen3 x8 slot, card capable of
 * gen4 x16, MPS 256 in force, 512 supported. */
static void connectx5(void)
{
	memset(cfg, 0, sizeof(cfg));
	put16(0x00, 0x15b3);
	put16(0x02, 0x1017);
	put16(0x04, 0x0002);          /* memory space on, bus master off */
	put16(0x06, 0x0010);          /* capability list */
	put16(0x2c, 0x15b3);
	put16(0x2e, 0x0007);
	cfg[0x34] = 0x40;
	cap(0x40, 0x01, 0x48);        /* power management */
	cap(0x48, 0x03, 0x60);        /* VPD */
	cap(0x60, 0x10, 0x9c);        /* PCI Express */
	put16(0x62, 0x0002);          /* version 2, port type 0 (endpoint) */
	put32(0x64, 0x00000002);      /* DevCap: MPS supported 512 */
	put16(0x68, 0x0020);          /* DevCtl: MPS 256 */
	put32(0x6c, (16u << 4) | 4);  /* LnkCap: x16, 16 GT/s (gen4) */
	put16(0x72, (8u << 4) | 3);   /* LnkSta: x8, 8 GT/s (gen3) */
	cap(0x9c, 0x11, 0x00);        /* MSI-X */
}

Test(vfio_pcicfg, ids_and_subsystem_ids_are_read_little_endian)
{
	struct shim_pcie_cfg pc;
	connectx5();
	cr_assert_eq(shim_pci_parse_config(cfg, sizeof(cfg), &pc), 0);
	cr_assert_eq(pc.vendor_id, 0x15b3);
	cr_assert_eq(pc.device_id, 0x1017);
	cr_assert_eq(pc.subsys_vendor_id, 0x15b3);
	cr_assert_eq(pc.subsys_device_id, 0x0007);
	cr_assert_eq(pc.command, 0x0002);
}

Test(vfio_pcicfg, link_status_gives_current_speed_and_width)
{
	struct shim_pcie_cfg pc;
	connectx5();
	cr_assert_eq(shim_pci_parse_config(cfg, sizeof(cfg), &pc), 0);
	cr_assert_eq(pc.exp_off, 0x60);
	cr_assert_eq(pc.link_speed, 3);
	cr_assert_eq(pc.link_width, 8);
	cr_assert_eq(pc.max_link_speed, 4);
	cr_assert_eq(pc.max_link_width, 16);
}

Test(vfio_pcicfg, max_payload_from_device_control_and_capabilities)
{
	struct shim_pcie_cfg pc;
	connectx5();
	cr_assert_eq(shim_pci_parse_config(cfg, sizeof(cfg), &pc), 0);
	cr_assert_eq(pc.max_payload, 256);
	cr_assert_eq(pc.max_payload_cap, 512);
	put16(0x68, 0x00a0);          /* code 5: 4096 */
	cr_assert_eq(shim_pci_parse_config(cfg, sizeof(cfg), &pc), 0);
	cr_assert_eq(pc.max_payload, 4096);
	put16(0x68, 0x00c0);          /* code 6: reserved */
	cr_assert_eq(shim_pci_parse_config(cfg, sizeof(cfg), &pc), 0);
	cr_assert_eq(pc.max_payload, 0);
}

Test(vfio_pcicfg, find_cap_walks_the_list)
{
	connectx5();
	cr_assert_eq(shim_pci_find_cap(cfg, sizeof(cfg), 0x11), 0x9c);
	cr_assert_eq(shim_pci_find_cap(cfg, sizeof(cfg), 0x01), 0x40);
	cr_assert_eq(shim_pci_find_cap(cfg, sizeof(cfg), 0x05), -ENOENT);
}

Test(vfio_pcicfg, reserved_low_pointer_bits_are_ignored)
{
	connectx5();
	cfg[0x34] = 0x43;
	cfg[0x41] = 0x4b;
	cr_assert_eq(shim_pci_find_cap(cfg, sizeof(cfg), 0x10), 0x60);
}

Test(vfio_pcicfg, no_capability_list_means_no_pcie_fields)
{
	struct shim_pcie_cfg pc;
	connectx5();
	put16(0x06, 0x0000);
	cr_assert_eq(shim_pci_parse_config(cfg, sizeof(cfg), &pc), 0);
	cr_assert_eq(pc.exp_off, 0);
	cr_assert_eq(pc.link_width, 0);
	cr_assert_eq(pc.vendor_id, 0x15b3);
}

Test(vfio_pcicfg, looping_capability_list_is_eproto)
{
	struct shim_pcie_cfg pc;
	connectx5();
	cap(0x48, 0x03, 0x40);        /* VPD points back to PM */
	cr_assert_eq(shim_pci_find_cap(cfg, sizeof(cfg), 0x10), -EPROTO);
	cr_assert_eq(shim_pci_parse_config(cfg, sizeof(cfg), &pc), -EPROTO);
}

Test(vfio_pcicfg, pointer_into_the_header_is_eproto)
{
	connectx5();
	cfg[0x34] = 0x20;
	cr_assert_eq(shim_pci_find_cap(cfg, sizeof(cfg), 0x10), -EPROTO);
}

Test(vfio_pcicfg, pcie_capability_cut_off_by_a_short_read_is_eproto)
{
	struct shim_pcie_cfg pc;
	connectx5();
	cr_assert_eq(shim_pci_parse_config(cfg, 0x70, &pc), -EPROTO);
	cr_assert_eq(shim_pci_parse_config(cfg, 0x3f, &pc), -EPROTO);
}
