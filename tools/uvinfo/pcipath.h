/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tools/uvinfo: the PCI side of uvinfo -- every function libpci sees, the bridge
 * topology between them, and the PCIe path from a root port down to a NIC with each
 * hop judged against what the NIC could use.
 *
 * libpci is only the reader of configuration space (sysfs on a live machine, or its
 * dump access method on an `lspci -xxxx` file: lspci's -A dump -O dump.name=FILE); the
 * decoding of the PCIe capability is hw/shim/vfio_pcicfg's, the same code the VFIO shim
 * trusts.  The topology is rebuilt from the type 1 headers' secondary bus numbers
 * (PCI-to-PCI Bridge spec 1.2, 3.2.5.3), which every access method has, rather than
 * from sysfs links, which a dump has not.
 */
#ifndef UVERBS_TOOLS_UVINFO_PCIPATH_H
#define UVERBS_TOOLS_UVINFO_PCIPATH_H

#include <stddef.h>
#include <stdint.h>

#include "hw/shim/vfio_pcicfg.h"

struct uvi_pci_fn {
	char bdf[16];               /* "0000:03:00.0" */
	int domain;
	uint8_t bus, dev, func;
	uint16_t vendor_id, device_id;
	uint32_t class_code;        /* base << 16 | sub << 8 | prog-if */
	uint8_t header_type;        /* 0 endpoint, 1 PCI-to-PCI bridge */
	uint8_t sec_bus, sub_bus;   /* type 1 only */
	int cfg_ok;                 /* config space was readable and decoded */
	struct shim_pcie_cfg cfg;   /* cfg.exp_off 0: no PCIe capability */
	uint16_t max_read_req;      /* Device Control [14:12] in bytes, 0 unknown */
	int parent;                 /* index of the bridge above, -1 at the top */
	int tunnelled;              /* macOS: behind a Thunderbolt PCIe tunnel (IOPCITunnelled) */
	char driver[64];            /* macOS: the class of the driver attached (IOService plane) */
	int driver_ethernet;        /* macOS: that driver is (or has below it) an IOEthernetController */
};

struct uvi_pci_list {
	struct uvi_pci_fn *fn;
	size_t n;
	int drivers_known;          /* the scan filled driver (macOS: the IORegistry knows it) */
};

/* Who owns a ConnectX function on macOS, and what to do about it: 1 and a sentence in
 * buf when the uvshim kext does (kext: can open it), 0 and what to do when another
 * driver does (Apple's AppleEthernetMLX5 is an IOEthernetController) or none. */
int uvi_kext_owner_status(const struct uvi_pci_fn *f, char *buf, size_t len);

/* Scan the functions: libpci on Linux (pcipath_libpci.c), the IORegistry on macOS
 * (pcipath_iokit.c, which takes no method or parameters).  Linux, method: NULL for libpci's automatic choice, else an access method
 * name ("dump", "linux-sysfs", ...); params: "name=value" strings passed to
 * pci_set_param ("dump.name=/tmp/x").  Returns 0 or a negative errno with err set. */
int uvi_pci_scan(const char *method, char *const *params, size_t nparams,
		 struct uvi_pci_list *out, char *err, size_t errlen);
void uvi_pci_free(struct uvi_pci_list *l);

/* Index of a function by "0000:03:00.0" or "03:00.0", -1 when absent. */
int uvi_pci_find(const struct uvi_pci_list *l, const char *bdf);

/* The path to function idx, topmost bridge first and idx last; returns its length. */
size_t uvi_pci_path(const struct uvi_pci_list *l, int idx, int *path, size_t max);

/* One hop judged against the NIC at the end of the path. */
struct uvi_hop_eval {
	int narrower;       /* current width below the NIC's capable width */
	int slower;         /* current speed below the NIC's capable speed */
	int small_mps;      /* max payload in force below the NIC's max payload capability */
	int degraded;       /* the link runs below its own capability */
	double gbps;        /* this link's data rate per direction after line coding */
};
void uvi_pci_eval_hop(const struct uvi_pci_fn *hop, const struct uvi_pci_fn *nic,
		      struct uvi_hop_eval *ev);

/* Per-lane data rate of PCIe generation gen (1..6) after line coding (8b/10b for Gen1-2,
 * 128b/130b for Gen3-5, FLIT for Gen6 counted at the raw rate), Gbit/s; 0 unknown. */
double uvi_pcie_lane_gbps(unsigned gen);
/* "2.5 GT/s" .. "64 GT/s", "unknown". */
const char *uvi_pcie_speed_str(unsigned gen);
/* "root port", "upstream port", "downstream port", "endpoint", ... from port_type. */
const char *uvi_pcie_port_type_str(const struct uvi_pci_fn *f);

#endif
