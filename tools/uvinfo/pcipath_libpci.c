/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tools/uvinfo on Linux: the PCI scan through libpci (pcipath.h); the macOS scan is
 * pcipath_iokit.c. */
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
