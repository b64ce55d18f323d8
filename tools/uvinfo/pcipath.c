/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tools/uvinfo: the PCIe path (see pcipath.h).  The scan that fills the list is the
 * platform's: pcipath_libpci.c (Linux), pcipath_iokit.c (macOS). */
#include "tools/uvinfo/pcipath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void uvi_pci_free(struct uvi_pci_list *l)
{
	free(l->fn);
	l->fn = NULL;
	l->n = 0;
}

int uvi_pci_find(const struct uvi_pci_list *l, const char *bdf)
{
	char full[32];
	if (strlen(bdf) <= 8)
		snprintf(full, sizeof(full), "0000:%s", bdf);
	else
		snprintf(full, sizeof(full), "%s", bdf);
	for (size_t i = 0; i < l->n; i++)
		if (!strcasecmp(l->fn[i].bdf, full))
			return (int)i;
	return -1;
}

size_t uvi_pci_path(const struct uvi_pci_list *l, int idx, int *path, size_t max)
{
	int rev[64];
	size_t n = 0;
	/* The bound guards against a dump whose bus numbers form a loop. */
	for (int i = idx; i >= 0 && n < 64 && (size_t)i < l->n; i = l->fn[i].parent)
		rev[n++] = i;
	size_t k = 0;
	for (size_t i = n; i > 0 && k < max; i--)
		path[k++] = rev[i - 1];
	return k;
}

double uvi_pcie_lane_gbps(unsigned gen)
{
	static const double rate[] = { 0, 2.0, 4.0, 8.0 * 128 / 130, 16.0 * 128 / 130,
				       32.0 * 128 / 130, 64.0 };
	return gen < sizeof(rate) / sizeof(rate[0]) ? rate[gen] : 0;
}

const char *uvi_pcie_speed_str(unsigned gen)
{
	static const char *s[] = { "unknown", "2.5 GT/s", "5 GT/s", "8 GT/s", "16 GT/s",
				   "32 GT/s", "64 GT/s" };
	return gen < sizeof(s) / sizeof(s[0]) ? s[gen] : "unknown";
}

const char *uvi_pcie_port_type_str(const struct uvi_pci_fn *f)
{
	if (!f->cfg_ok || !f->cfg.exp_off)
		return f->header_type == 1 ? "PCI bridge" : "conventional PCI";
	/* PCI Express Capabilities register [7:4], Device/Port Type. */
	switch (f->cfg.port_type) {
	case 0x0: return "endpoint";
	case 0x1: return "legacy endpoint";
	case 0x4: return "root port";
	case 0x5: return "upstream port";
	case 0x6: return "downstream port";
	case 0x7: return "PCIe-to-PCI bridge";
	case 0x8: return "PCI-to-PCIe bridge";
	case 0x9: return "RC integrated endpoint";
	case 0xa: return "RC event collector";
	default: return "unknown port type";
	}
}

void uvi_pci_eval_hop(const struct uvi_pci_fn *hop, const struct uvi_pci_fn *nic,
		      struct uvi_hop_eval *ev)
{
	memset(ev, 0, sizeof(*ev));
	if (!hop->cfg_ok || !hop->cfg.exp_off)
		return;
	const struct shim_pcie_cfg *h = &hop->cfg, *n = &nic->cfg;
	ev->gbps = uvi_pcie_lane_gbps(h->link_speed) * h->link_width;
	if (!nic->cfg_ok || !nic->cfg.exp_off)
		return;
	ev->narrower = h->link_width && n->max_link_width && h->link_width < n->max_link_width;
	ev->slower = h->link_speed && n->max_link_speed && h->link_speed < n->max_link_speed;
	ev->small_mps = h->max_payload && n->max_payload_cap && h->max_payload < n->max_payload_cap;
	ev->degraded = (h->link_width && h->max_link_width && h->link_width < h->max_link_width) ||
		       (h->link_speed && h->max_link_speed && h->link_speed < h->max_link_speed);
}

int uvi_kext_owner_status(const struct uvi_pci_fn *f, char *buf, size_t len)
{
	if (strcmp(f->driver, "org_uverbs_UvShim") == 0) {
		snprintf(buf, len, "ready: the uvshim kext owns it (kext:N opens it)");
		return 1;
	}
	if (f->driver[0] && f->driver_ethernet)
		snprintf(buf, len, "owned by %s, an Ethernet driver (Apple's ConnectX driver is AppleEthernetMLX5): "
			 "kext:N cannot open it; keep Apple's driver off the function and reload the uvshim kext "
			 "(docs/hardware.md, \"Apple's own driver\")", f->driver);
	else if (f->driver[0])
		snprintf(buf, len, "owned by %s, not the uvshim kext: kext:N cannot open it "
			 "(docs/hardware.md, \"Apple's own driver\")", f->driver);
	else
		snprintf(buf, len, "no driver attached: load the uvshim kext (docs/hardware.md, \"macOS (kext shim)\")");
	return 0;
}
