/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/shim/vfio_pcicfg: what the shim reads from a function's PCI configuration space,
 * decoded from a byte array (the bytes pread from the VFIO config region, or built by a
 * test). Offsets and encodings are those of the PCI Local Bus spec 3.0 (type 0 header)
 * and the PCI Express Base spec (section 7.5.3, PCI Express Capability Structure).
 * Configuration space is little-endian.
 */
#ifndef UVERBS_HW_SHIM_VFIO_PCICFG_H
#define UVERBS_HW_SHIM_VFIO_PCICFG_H

#include <stddef.h>
#include <stdint.h>

#define SHIM_PCI_VENDOR_ID        0x00
#define SHIM_PCI_DEVICE_ID        0x02
#define SHIM_PCI_COMMAND          0x04
#define SHIM_PCI_STATUS           0x06
#define SHIM_PCI_SUBSYS_VENDOR_ID 0x2c
#define SHIM_PCI_SUBSYS_ID        0x2e
#define SHIM_PCI_CAP_PTR          0x34
#define SHIM_PCI_CMD_MEMORY       0x0002  /* Memory Space Enable */
#define SHIM_PCI_CMD_MASTER       0x0004  /* Bus Master Enable: without it the NIC cannot DMA */
#define SHIM_PCI_STATUS_CAP_LIST  0x0010  /* Capabilities List present */
#define SHIM_PCI_CAP_ID_EXP       0x10    /* PCI Express capability */
#define SHIM_PCI_CAP_ID_MSIX      0x11
#define SHIM_PCI_VENDOR_MELLANOX  0x15b3

struct shim_pcie_cfg {
	uint16_t vendor_id, device_id;
	uint16_t subsys_vendor_id, subsys_device_id;
	uint16_t command;
	uint8_t exp_off;            /* offset of the PCIe capability, 0 if absent */
	uint8_t port_type;          /* PCIe Capabilities[7:4]: 0 endpoint, ... */
	uint8_t link_speed;         /* Link Status[3:0]: current speed, 1 = 2.5 GT/s (gen1) .. 6 */
	uint8_t link_width;         /* Link Status[9:4]: negotiated lanes */
	uint8_t max_link_speed;     /* Link Capabilities[3:0] */
	uint8_t max_link_width;     /* Link Capabilities[9:4] */
	uint16_t max_payload;       /* Device Control[7:5] in bytes (the one in force), 0 unknown */
	uint16_t max_payload_cap;   /* Device Capabilities[2:0] in bytes, 0 unknown */
};

/* Offset of capability id in the standard capability list, -ENOENT if absent, -EPROTO
 * if the list is malformed (pointer into the header, past len, or a loop). */
int shim_pci_find_cap(const uint8_t *cfg, size_t len, uint8_t id);

/* Decode ids, command and (when present) the PCIe capability from len bytes of config
 * space (at least the 64-byte header). 0, or -EPROTO for a short or malformed space;
 * a function without a PCIe capability decodes with exp_off 0 and link fields 0. */
int shim_pci_parse_config(const uint8_t *cfg, size_t len, struct shim_pcie_cfg *out);

#endif
