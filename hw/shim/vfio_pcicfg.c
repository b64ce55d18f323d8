/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* PCI configuration space decoding; offsets and sources are in vfio_pcicfg.h. */
#include "hw/shim/vfio_pcicfg.h"

#include <errno.h>
#include <string.h>

/* PCIe capability registers, relative to the capability (PCIe Base spec 7.5.3). */
#define EXP_FLAGS    0x02   /* PCI Express Capabilities Register */
#define EXP_DEVCAP   0x04   /* Device Capabilities */
#define EXP_DEVCTL   0x08   /* Device Control */
#define EXP_LNKCAP   0x0c   /* Link Capabilities */
#define EXP_LNKSTA   0x12   /* Link Status */
#define EXP_V1_END   0x14   /* registers this file reads end here */

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)rd16(p) | (uint32_t)rd16(p + 2) << 16; }

int shim_pci_find_cap(const uint8_t *cfg, size_t len, uint8_t id)
{
	unsigned ptr;
	/* 48 = (256 - 64) / 4: more entries than fit in config space means a loop. */
	unsigned budget = 48;

	if (!cfg || len < 0x40)
		return -EPROTO;
	if (!(rd16(cfg + SHIM_PCI_STATUS) & SHIM_PCI_STATUS_CAP_LIST))
		return -ENOENT;
	ptr = cfg[SHIM_PCI_CAP_PTR] & 0xfc;  /* the low two bits are reserved */
	while (ptr) {
		if (ptr < 0x40 || ptr + 2 > len || budget-- == 0)
			return -EPROTO;
		if (cfg[ptr] == id)
			return (int)ptr;
		ptr = cfg[ptr + 1] & 0xfc;
	}
	return -ENOENT;
}

/* Max_Payload_Size encodings 000b..101b are 128..4096 bytes; 110b and 111b are reserved. */
static uint16_t payload_bytes(unsigned code)
{
	return code <= 5 ? (uint16_t)(128u << code) : 0;
}

int shim_pci_parse_config(const uint8_t *cfg, size_t len, struct shim_pcie_cfg *out)
{
	int off;

	memset(out, 0, sizeof(*out));
	if (!cfg || len < 0x40)
		return -EPROTO;
	out->vendor_id = rd16(cfg + SHIM_PCI_VENDOR_ID);
	out->device_id = rd16(cfg + SHIM_PCI_DEVICE_ID);
	out->command = rd16(cfg + SHIM_PCI_COMMAND);
	out->subsys_vendor_id = rd16(cfg + SHIM_PCI_SUBSYS_VENDOR_ID);
	out->subsys_device_id = rd16(cfg + SHIM_PCI_SUBSYS_ID);

	off = shim_pci_find_cap(cfg, len, SHIM_PCI_CAP_ID_EXP);
	if (off == -ENOENT)
		return 0;
	if (off < 0)
		return off;
	if ((size_t)off + EXP_V1_END > len)
		return -EPROTO;
	out->exp_off = (uint8_t)off;
	out->port_type = (uint8_t)((rd16(cfg + off + EXP_FLAGS) >> 4) & 0xf);
	out->max_payload_cap = payload_bytes(rd32(cfg + off + EXP_DEVCAP) & 0x7);
	out->max_payload = payload_bytes((rd16(cfg + off + EXP_DEVCTL) >> 5) & 0x7);
	out->max_link_speed = (uint8_t)(rd32(cfg + off + EXP_LNKCAP) & 0xf);
	out->max_link_width = (uint8_t)((rd32(cfg + off + EXP_LNKCAP) >> 4) & 0x3f);
	/* Link speed codes name a bit of the Supported Link Speeds Vector; a port supports
	 * every rate up to its highest (PCIe Base 7.5.3.18), so code N is generation N. */
	out->link_speed = (uint8_t)(rd16(cfg + off + EXP_LNKSTA) & 0xf);
	out->link_width = (uint8_t)((rd16(cfg + off + EXP_LNKSTA) >> 4) & 0x3f);
	return 0;
}
