/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvinfo: every device uverbs can open, the ConnectX PCI functions of this machine and
 * the PCIe path from the root port to each (see uvinfo.h). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/shim/vfio_sysfs.h"
#include "tools/common/cli.h"
#include "tools/common/jsonw.h"
#include "tools/common/parse.h"
#include "tools/uvinfo/pcipath.h"
#include "tools/uvinfo/uvinfo.h"

#define UVI_MAX_PARAMS 8
#define UVI_MAX_PATHS 16

struct opts {
	int json;
	int devices;          /* list the verbs devices */
	int pci;              /* list ConnectX PCI functions */
	const char *method;
	char *params[UVI_MAX_PARAMS];
	size_t nparams;
	const char *paths[UVI_MAX_PATHS];   /* --path BDF: any function */
	size_t npaths;
	const char *sysfs;    /* sysfs root for driver / IOMMU group, NULL: none (dumps) */
	int counters;         /* --counters: what running processes publish, nothing else */
	long pid;             /* --pid: only this process's counters */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: uvinfo [--json] [--no-devices] [--no-pci] [-A METHOD] [-O NAME=VALUE]... [--path BDF]...\n"
		"       uvinfo --counters [--pid PID] [--json]\n"
		"       uvinfo --help | --version\n"
		"  lists the devices uverbs opens (UVERBS_DEVICES, or the default emulated ConnectX)\n"
		"  with ports, MTU, speed, GIDs and firmware, then every ConnectX PCI function\n"
		"  (vendor 15b3) with its driver, IOMMU group, VFIO readiness and PCIe path (on macOS:\n"
		"  the driver IOKit attached, and whether kext: can open it).\n"
		"  -A, --method METHOD       libpci access method, as lspci -A (e.g. dump)\n"
		"  -O, --param NAME=VALUE    libpci parameter, as lspci -O (e.g. dump.name=FILE)\n"
		"  --path BDF      also show the PCIe path of this function (any vendor)\n"
		"  --no-devices    skip the verbs devices;  --no-pci  skip the PCI scan\n"
		"  --counters      the queue counters running uverbs processes publish (out_of_buffer:\n"
		"                  messages dropped or RNR-NAKed for want of a posted receive)\n"
		"  --pid PID       with --counters: that process only (exit 1 if it publishes none)\n"
		"  --json          one JSON object on stdout\n"
		"  -h, --help      this text;  --version  the version and the build\n"
		"exit: 0 ok; 1 a runtime error (a device or function could not be read, the PCI scan\n"
		"      failed, the output could not be written), one line on stderr says which;\n"
		"      2 a usage error\n");
}

static void fn_ids(const struct uvi_pci_fn *f, char *buf, size_t len)
{
	snprintf(buf, len, "%04x:%04x", f->vendor_id, f->device_id);
}

static void link_str(unsigned gen, unsigned width, char *buf, size_t len)
{
	if (!gen && !width)
		snprintf(buf, len, "unknown");
	else
		snprintf(buf, len, "Gen%u x%u (%s)", gen, width, uvi_pcie_speed_str(gen));
}

/* One line per hop, root first; warnings under the hop they concern.  Returns the
 * number of warnings. */
static int print_path_text(const struct uvi_pci_list *l, int idx)
{
	int path[64];
	size_t n = uvi_pci_path(l, idx, path, 64);
	const struct uvi_pci_fn *nic = &l->fn[idx];
	int warnings = 0;
	double limit = 0;
	int limit_at = -1;

	printf("    PCIe path, root port first (%zu hop%s):\n", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		const struct uvi_pci_fn *h = &l->fn[path[i]];
		char ids[16], cur[48], cap[48];
		fn_ids(h, ids, sizeof(ids));
		if (!h->cfg_ok || !h->cfg.exp_off) {
			printf("      %s  %s  %-16s no PCIe capability (config space %s)\n", h->bdf, ids,
			       uvi_pcie_port_type_str(h), h->cfg_ok ? "has none" : "not readable");
			continue;
		}
		link_str(h->cfg.link_speed, h->cfg.link_width, cur, sizeof(cur));
		link_str(h->cfg.max_link_speed, h->cfg.max_link_width, cap, sizeof(cap));
		printf("      %s  %s  %-16s link %s, capable %s  MPS %u B (capable %u B)  MRRS %u B\n",
		       h->bdf, ids, uvi_pcie_port_type_str(h), cur, cap, h->cfg.max_payload,
		       h->cfg.max_payload_cap, h->max_read_req);
		if (h->tunnelled)
			printf("        through a Thunderbolt PCIe tunnel (the link above is the tunnel's)\n");
		struct uvi_hop_eval ev;
		uvi_pci_eval_hop(h, nic, &ev);
		if (ev.gbps > 0 && (limit_at < 0 || ev.gbps < limit)) {
			limit = ev.gbps;
			limit_at = path[i];
		}
		if (ev.narrower) {
			printf("        warning: x%u link is narrower than the NIC's x%u\n",
			       h->cfg.link_width, nic->cfg.max_link_width);
			warnings++;
		}
		if (ev.slower) {
			printf("        warning: %s link is slower than the NIC's %s (Gen%u)\n",
			       uvi_pcie_speed_str(h->cfg.link_speed),
			       uvi_pcie_speed_str(nic->cfg.max_link_speed), nic->cfg.max_link_speed);
			warnings++;
		}
		if (ev.small_mps) {
			printf("        warning: max payload %u B is below the NIC's %u B (more TLP headers per byte)\n",
			       h->cfg.max_payload, nic->cfg.max_payload_cap);
			warnings++;
		}
	}
	if (limit_at >= 0) {
		const struct uvi_pci_fn *h = &l->fn[limit_at];
		printf("    path limit: %.1f Gbit/s per direction at %s (Gen%u x%u, after line coding, before TLP overhead)\n",
		       limit, h->bdf, h->cfg.link_speed, h->cfg.link_width);
	}
	return warnings;
}

static void print_path_json(struct jw *w, const struct uvi_pci_list *l, int idx)
{
	int path[64];
	size_t n = uvi_pci_path(l, idx, path, 64);
	const struct uvi_pci_fn *nic = &l->fn[idx];
	double limit = 0;
	int limit_at = -1;

	jw_arr(w, "path");
	for (size_t i = 0; i < n; i++) {
		const struct uvi_pci_fn *h = &l->fn[path[i]];
		char ids[16];
		fn_ids(h, ids, sizeof(ids));
		jw_obj(w, NULL);
		jw_str(w, "bdf", h->bdf);
		jw_str(w, "ids", ids);
		jw_str(w, "port_type", uvi_pcie_port_type_str(h));
		jw_bool(w, "pcie", h->cfg_ok && h->cfg.exp_off);
		jw_bool(w, "thunderbolt_tunnel", h->tunnelled);
		if (h->cfg_ok && h->cfg.exp_off) {
			struct uvi_hop_eval ev;
			uvi_pci_eval_hop(h, nic, &ev);
			jw_u64(w, "link_gen", h->cfg.link_speed);
			jw_str(w, "link_speed", uvi_pcie_speed_str(h->cfg.link_speed));
			jw_u64(w, "link_width", h->cfg.link_width);
			jw_u64(w, "cap_gen", h->cfg.max_link_speed);
			jw_str(w, "cap_speed", uvi_pcie_speed_str(h->cfg.max_link_speed));
			jw_u64(w, "cap_width", h->cfg.max_link_width);
			jw_u64(w, "mps", h->cfg.max_payload);
			jw_u64(w, "mps_cap", h->cfg.max_payload_cap);
			jw_u64(w, "mrrs", h->max_read_req);
			jw_dbl(w, "gbps", ev.gbps);
			jw_bool(w, "degraded", ev.degraded);
			jw_arr(w, "warnings");
			if (ev.narrower)
				jw_str(w, NULL, "narrower");
			if (ev.slower)
				jw_str(w, NULL, "slower");
			if (ev.small_mps)
				jw_str(w, NULL, "small_mps");
			jw_arr_end(w);
			if (ev.gbps > 0 && (limit_at < 0 || ev.gbps < limit)) {
				limit = ev.gbps;
				limit_at = path[i];
			}
		}
		jw_obj_end(w);
	}
	jw_arr_end(w);
	if (limit_at >= 0) {
		jw_dbl(w, "path_limit_gbps", limit);
		jw_str(w, "path_limit_at", l->fn[limit_at].bdf);
	} else {
		jw_null(w, "path_limit_gbps");
	}
}

struct sysfs_view {
	char driver[64];
	int group;
	int ready;
	char status[400];
};

static void sysfs_check(const char *root, const char *bdf, struct sysfs_view *v)
{
	struct shim_vfio_sysfs s;
	memset(v, 0, sizeof(*v));
	memset(&s, 0, sizeof(s));
	s.group = -1;
	int rc = shim_vfio_sysfs_probe(root, bdf, &s, v->status, sizeof(v->status));
	snprintf(v->driver, sizeof(v->driver), "%s", s.driver);
	v->group = s.group;
	if (rc) {
		/* The probe stops at the first reason a function is not ready; the driver and
		 * group are still worth showing (sysfs: driver and iommu_group links). */
		char link[PATH_MAX], target[PATH_MAX];
		snprintf(link, sizeof(link), "%s/bus/pci/devices/%s/driver", root, bdf);
		ssize_t k = readlink(link, target, sizeof(target) - 1);
		if (!v->driver[0] && k > 0) {
			target[k] = 0;
			const char *base = strrchr(target, '/');
			snprintf(v->driver, sizeof(v->driver), "%.63s", base ? base + 1 : target);
		}
		snprintf(link, sizeof(link), "%s/bus/pci/devices/%s/iommu_group", root, bdf);
		k = readlink(link, target, sizeof(target) - 1);
		if (v->group < 0 && k > 0) {
			target[k] = 0;
			const char *base = strrchr(target, '/');
			v->group = atoi(base ? base + 1 : target);
		}
		return;
	}
	char list[256];
	int blockers = shim_vfio_group_blockers(root, s.group, list, sizeof(list));
	if (blockers > 0) {
		snprintf(v->status, sizeof(v->status),
			 "IOMMU group %d is shared with functions still bound to other drivers: %s",
			 s.group, list);
		return;
	}
	v->ready = 1;
	snprintf(v->status, sizeof(v->status), "ready: bound to vfio-pci, IOMMU group %d viable", s.group);
}

static int run_pci(const struct opts *o, struct jw *w)
{
	struct uvi_pci_list l;
	char err[512];
	int rc = uvi_pci_scan(o->method, o->params, o->nparams, &l, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "uvinfo: PCI scan: %s\n", err);
		if (w)
			jw_str(w, "pci_error", err);
		return UVT_EXIT_FAIL;
	}
	int bad = 0;
	int idx[256];
	size_t n = 0;
	for (size_t i = 0; i < l.n && n < 256; i++)
		if (l.fn[i].vendor_id == SHIM_PCI_VENDOR_MELLANOX)
			idx[n++] = (int)i;
	for (size_t p = 0; p < o->npaths && n < 256; p++) {
		int i = uvi_pci_find(&l, o->paths[p]);
		if (i < 0) {
			fprintf(stderr, "uvinfo: no PCI function %s\n", o->paths[p]);
			bad = 1;
			continue;
		}
		int dup = 0;
		for (size_t k = 0; k < n; k++)
			dup |= idx[k] == i;
		if (!dup)
			idx[n++] = i;
	}

	if (w) {
		jw_str(w, "pci_access", o->method ? o->method : "auto");
		jw_u64(w, "pci_functions_seen", l.n);
		jw_arr(w, "pci");
	} else {
		printf("%sPCI functions (ConnectX, vendor 15b3%s; libpci access %s, %zu functions seen):\n",
		       o->devices ? "\n" : "", o->npaths ? ", and those asked for" : "",
		       o->method ? o->method : "auto", l.n);
		if (!n)
			printf("  none found\n");
	}
	for (size_t k = 0; k < n; k++) {
		const struct uvi_pci_fn *f = &l.fn[idx[k]];
		const char *model = f->vendor_id == SHIM_PCI_VENDOR_MELLANOX ? uvi_connectx_name(f->device_id) : NULL;
		struct sysfs_view sv;
		int have_sysfs = o->sysfs != NULL;
		if (have_sysfs)
			sysfs_check(o->sysfs, f->bdf, &sv);
		char ids[16];
		fn_ids(f, ids, sizeof(ids));
		if (w) {
			jw_obj(w, NULL);
			jw_str(w, "bdf", f->bdf);
			jw_str(w, "ids", ids);
			jw_u64(w, "vendor_id", f->vendor_id);
			jw_u64(w, "device_id", f->device_id);
			jw_str(w, "model", model);
			if (have_sysfs) {
				jw_str(w, "driver", sv.driver[0] ? sv.driver : NULL);
				if (sv.group >= 0)
					jw_i64(w, "iommu_group", sv.group);
				else
					jw_null(w, "iommu_group");
				jw_bool(w, "vfio_ready", sv.ready);
				jw_str(w, "vfio_status", sv.status);
			} else if (l.drivers_known) {
				/* macOS: who owns it, for kext: (Apple's driver or ours) */
				char st[400];
				int ok = uvi_kext_owner_status(f, st, sizeof(st));
				jw_str(w, "driver", f->driver[0] ? f->driver : NULL);
				jw_bool(w, "kext_ready", ok);
				jw_str(w, "kext_status", st);
			} else {
				jw_null(w, "driver");
				jw_null(w, "iommu_group");
				jw_null(w, "vfio_ready");
				jw_str(w, "vfio_status", "not checked (no sysfs with this access method)");
			}
			print_path_json(w, &l, idx[k]);
			jw_obj_end(w);
		} else {
			printf("  %s  %s  %s\n", f->bdf, ids, model ? model : "");
			if (have_sysfs)
				printf("    driver %s  IOMMU group %s  VFIO: %s\n",
				       sv.driver[0] ? sv.driver : "(none)",
				       sv.group >= 0 ? (snprintf(err, sizeof(err), "%d", sv.group), err) : "(none)",
				       sv.status);
			else if (l.drivers_known && f->vendor_id == SHIM_PCI_VENDOR_MELLANOX) {
				char st[400];
				uvi_kext_owner_status(f, st, sizeof(st));
				printf("    driver %s  kext: %s\n", f->driver[0] ? f->driver : "(none)", st);
			}
			print_path_text(&l, idx[k]);
		}
	}
	if (w)
		jw_arr_end(w);
	uvi_pci_free(&l);
	return bad;
}

/* Output that did not reach stdout (a full disk, /dev/full) is a runtime error, exit 1. */
static int flush_stdout(int rc)
{
	return uvt_flush_stdout("uvinfo", rc);
}

/* A repeatable option already given as often as its list holds: a usage error. */
static int full(size_t n, size_t max, const char *what)
{
	if (n < max)
		return 0;
	return uvt_usage_error("uvinfo", "too many %s", what);
}

int main(int argc, char **argv)
{
	struct opts o = { .devices = 1, .pci = 1 };
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "no-devices", no_argument, NULL, 'D' },
		{ "no-pci", no_argument, NULL, 'P' },
		{ "path", required_argument, NULL, 'p' },
		{ "counters", no_argument, NULL, 'C' },
		{ "pid", required_argument, NULL, 'i' },
		{ "method", required_argument, NULL, 'A' },
		{ "param", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	opterr = 0;    /* errors as one line each (tools/common/cli.h) */
	while ((c = getopt_long(argc, argv, ":A:O:h", lo, NULL)) != -1) {
		switch (c) {
		case 'j': o.json = 1; break;
		case 'D': o.devices = 0; break;
		case 'P': o.pci = 0; break;
		case 'A': o.method = optarg; break;
		case 'O':
			if (full(o.nparams, UVI_MAX_PARAMS, "-O parameters"))
				return UVT_EXIT_USAGE;
			o.params[o.nparams++] = optarg;
			break;
		case 'p':
			if (full(o.npaths, UVI_MAX_PATHS, "--path"))
				return UVT_EXIT_USAGE;
			o.paths[o.npaths++] = optarg;
			break;
		case 'C': o.counters = 1; break;
		case 'i': {
			uint64_t v;
			if (uvt_parse_u64(optarg, INT32_MAX, &v) || !v)
				return uvt_usage_error("uvinfo", "--pid %s: not a process id", optarg);
			o.pid = (long)v;
			break;
		}
		case 'h': usage(stdout); return flush_stdout(0);
		case 'V': return uvt_version("uvinfo");
		default: return uvt_getopt_error("uvinfo", c, argv);
		}
	}
	if (optind < argc)
		return uvt_usage_error("uvinfo", "unexpected argument '%s'", argv[optind]);
	if (o.pid && !o.counters)
		return uvt_usage_error("uvinfo", "--pid goes with --counters");
	/* Driver binding and IOMMU groups exist only for the live machine's functions. */
	if (!o.method || !strcmp(o.method, "linux-sysfs"))
		o.sysfs = "/sys";

	struct jw w;
	struct jw *wp = NULL;
	if (o.json) {
		jw_init(&w, stdout);
		wp = &w;
		jw_obj(wp, NULL);
		jw_str(wp, "tool", "uvinfo");
	}
	int rc = 0;
	if (o.counters) {
		rc = uvi_print_counters(stdout, wp, o.pid);
		if (wp)
			jw_obj_end(wp);
		return flush_stdout(rc);
	}
	if (o.devices && uvi_print_devices(stdout, wp))
		rc = 1;
	if (o.pci) {
		int prc = run_pci(&o, wp);
		if (prc > rc)
			rc = prc;
	}
	if (wp)
		jw_obj_end(wp);
	return flush_stdout(rc);
}
