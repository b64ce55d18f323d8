/* tools/uvinfo: PCI scan through libpci and the PCIe path (see pcipath.h). */
#include "tools/uvinfo/pcipath.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pci/pci.h>

/* PCI Express Capability Structure, Device Control (PCIe Base spec 7.5.3.4):
 * Max_Read_Request_Size in bits 14:12, 128 << code bytes. */
#define UVI_EXP_DEVCTL 0x08

/* libpci reports fatal errors through acc->error, which must not return.  A tool may
 * exit; say what failed first. */
__attribute__((format(printf, 1, 2)))
static _Noreturn void uvi_pci_error(char *msg, ...)
{
	va_list ap;
	va_start(ap, msg);
	fputs("uvinfo: libpci: ", stderr);
	vfprintf(stderr, msg, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static void uvi_pci_quiet(char *msg, ...)
{
	(void)msg;
}

static int fn_cmp(const void *a, const void *b)
{
	const struct uvi_pci_fn *x = a, *y = b;
	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	unsigned kx = (unsigned)x->bus << 8 | (unsigned)x->dev << 3 | x->func;
	unsigned ky = (unsigned)y->bus << 8 | (unsigned)y->dev << 3 | y->func;
	return kx < ky ? -1 : kx > ky;
}

static void read_fn(struct pci_dev *d, struct uvi_pci_fn *f)
{
	uint8_t cfg[256];
	int len = 0;

	memset(f, 0, sizeof(*f));
	f->domain = d->domain;
	f->bus = d->bus;
	f->dev = d->dev;
	f->func = d->func;
	f->parent = -1;
	snprintf(f->bdf, sizeof(f->bdf), "%04x:%02x:%02x.%x", (unsigned)d->domain & 0xffff,
		 d->bus, d->dev, d->func);
	/* The whole 256-byte legacy space holds the capability list; an unprivileged sysfs
	 * read gives only the 64-byte header, which still names and links the function. */
	memset(cfg, 0xff, sizeof(cfg));
	if (pci_read_block(d, 0, cfg, 256))
		len = 256;
	else if (pci_read_block(d, 0, cfg, 64))
		len = 64;
	if (len) {
		f->vendor_id = (uint16_t)(cfg[0] | cfg[1] << 8);
		f->device_id = (uint16_t)(cfg[2] | cfg[3] << 8);
		f->class_code = (uint32_t)cfg[0x0b] << 16 | (uint32_t)cfg[0x0a] << 8 | cfg[0x09];
		f->header_type = cfg[0x0e] & 0x7f;
		if (f->header_type == 1) {
			/* Type 1 header: primary 0x18, secondary 0x19, subordinate 0x1a. */
			f->sec_bus = cfg[0x19];
			f->sub_bus = cfg[0x1a];
		}
		if (!shim_pci_parse_config(cfg, (size_t)len, &f->cfg)) {
			f->cfg_ok = 1;
			if (f->cfg.exp_off && (size_t)f->cfg.exp_off + UVI_EXP_DEVCTL + 2 <= (size_t)len) {
				unsigned ctl = cfg[f->cfg.exp_off + UVI_EXP_DEVCTL] |
					       cfg[f->cfg.exp_off + UVI_EXP_DEVCTL + 1] << 8;
				unsigned code = (ctl >> 12) & 0x7;
				f->max_read_req = code <= 5 ? (uint16_t)(128u << code) : 0;
			}
		}
	} else {
		pci_fill_info(d, PCI_FILL_IDENT | PCI_FILL_CLASS);
		f->vendor_id = d->vendor_id;
		f->device_id = d->device_id;
		f->class_code = (uint32_t)d->device_class << 8;
	}
}

int uvi_pci_scan(const char *method, char *const *params, size_t nparams,
		 struct uvi_pci_list *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	struct pci_access *a = pci_alloc();
	if (!a) {
		snprintf(err, errlen, "libpci: out of memory");
		return -ENOMEM;
	}
	a->error = uvi_pci_error;
	a->warning = uvi_pci_quiet;
	a->debug = uvi_pci_quiet;
	if (method) {
		int m = pci_lookup_method((char *)method);
		if (m < 0) {
			snprintf(err, errlen, "libpci has no access method '%s' (see lspci -A help)", method);
			pci_cleanup(a);
			return -EINVAL;
		}
		a->method = (unsigned)m;
	}
	for (size_t i = 0; i < nparams; i++) {
		char buf[512];
		snprintf(buf, sizeof(buf), "%s", params[i]);
		char *eq = strchr(buf, '=');
		if (!eq) {
			snprintf(err, errlen, "libpci parameter '%s' is not name=value", params[i]);
			pci_cleanup(a);
			return -EINVAL;
		}
		*eq = 0;
		/* dump.name is the one parameter whose absence target libpci turns into an exit;
		 * check the file here so that a typo is an error message, not a libpci abort. */
		if (!strcmp(buf, "dump.name")) {
			FILE *fh = fopen(eq + 1, "r");
			if (!fh) {
				snprintf(err, errlen, "cannot open dump %s: %s", eq + 1, strerror(errno));
				pci_cleanup(a);
				return -ENOENT;
			}
			fclose(fh);
		}
		if (pci_set_param(a, buf, eq + 1)) {
			snprintf(err, errlen, "libpci has no parameter '%s' (see lspci -O help)", buf);
			pci_cleanup(a);
			return -EINVAL;
		}
	}
	pci_init(a);
	pci_scan_bus(a);

	size_t n = 0;
	for (struct pci_dev *d = a->devices; d; d = d->next)
		n++;
	out->fn = calloc(n ? n : 1, sizeof(*out->fn));
	if (!out->fn) {
		pci_cleanup(a);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (struct pci_dev *d = a->devices; d; d = d->next)
		read_fn(d, &out->fn[out->n++]);
	pci_cleanup(a);
	qsort(out->fn, out->n, sizeof(*out->fn), fn_cmp);

	/* A function on bus B sits under the bridge of its domain whose secondary bus is B. */
	for (size_t i = 0; i < out->n; i++) {
		struct uvi_pci_fn *f = &out->fn[i];
		for (size_t j = 0; j < out->n; j++) {
			const struct uvi_pci_fn *b = &out->fn[j];
			if (j != i && b->header_type == 1 && b->domain == f->domain &&
			    b->sec_bus == f->bus && b->sec_bus != 0) {
				f->parent = (int)j;
				break;
			}
		}
	}
	return 0;
}

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
