/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tools/uvinfo on macOS: the PCI scan from the IORegistry (pcipath.h).  Userspace on
 * macOS cannot read configuration space; IOPCIFamily publishes what uvinfo needs as
 * properties of each IOPCIDevice (IOPCIFamily IOPCIFamilyDefinitions.h and
 * IOPCIBridge.cpp): "vendor-id", "device-id", "class-code" (4-byte little-endian
 * data), "pcidebug" ("bus:dev:fn", and "(secondary:subordinate)" for a bridge),
 * "IOPCIExpressCapabilities", "IOPCIExpressLinkCapabilities", "IOPCIExpressLinkStatus"
 * (those registers' values) and "IOPCITunnelled" (true below a Thunderbolt PCIe
 * tunnel).  The tree comes from the IOService plane: a function's provider is the
 * IOPCIBridge of the IOPCIDevice above it.  Device Control (max payload, max read
 * request) is not published: those stay 0, "unknown".  Each root complex starts a bus
 * 0 of its own: the domain is the index of the root a function hangs from.
 *
 * zig (the macOS check on Linux) has no IOKit or CoreFoundation headers, so the few
 * functions used are declared here as IOKitLib.h and CFBase.h declare them; the tool
 * links with -undefined dynamic_lookup there and against IOKit and CoreFoundation on a
 * Mac (tools/CMakeLists.txt). */
#include "tools/uvinfo/pcipath.h"

#include <errno.h>
#include <mach/mach.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- IOKit and CoreFoundation, as declared by IOKitLib.h, CFBase.h, CFData.h,
 * CFNumber.h and CFString.h ---- */
typedef const void *CFTypeRef;
typedef const void *CFAllocatorRef;
typedef const void *CFStringRef;
typedef const void *CFDataRef;
typedef const void *CFNumberRef;
typedef const void *CFBooleanRef;
typedef void *CFMutableDictionaryRef;
typedef unsigned long CFTypeID;
typedef long CFIndex;
typedef unsigned char Boolean;
typedef mach_port_t io_object_t;
typedef io_object_t io_iterator_t;
typedef io_object_t io_registry_entry_t;

#define UVI_CF_UTF8 0x08000100u            /* kCFStringEncodingUTF8 */
#define UVI_CF_SINT64 4                    /* kCFNumberSInt64Type */

extern CFMutableDictionaryRef IOServiceMatching(const char *name);
extern kern_return_t IOServiceGetMatchingServices(mach_port_t mainPort, CFMutableDictionaryRef matching,
						  io_iterator_t *existing);
extern io_object_t IOIteratorNext(io_iterator_t iterator);
extern kern_return_t IOObjectRelease(io_object_t object);
extern Boolean IOObjectConformsTo(io_object_t object, const char *className);
extern CFTypeRef IORegistryEntryCreateCFProperty(io_registry_entry_t entry, CFStringRef key,
						 CFAllocatorRef allocator, uint32_t options);
extern kern_return_t IORegistryEntryGetParentEntry(io_registry_entry_t entry, const char *plane,
						   io_registry_entry_t *parent);
extern kern_return_t IORegistryEntryGetRegistryEntryID(io_registry_entry_t entry, uint64_t *id);
extern kern_return_t IORegistryEntryGetChildIterator(io_registry_entry_t entry, const char *plane,
						     io_iterator_t *iterator);
extern kern_return_t IOObjectGetClass(io_object_t object, char className[128]);
extern CFStringRef CFStringCreateWithCString(CFAllocatorRef alloc, const char *s, uint32_t encoding);
extern Boolean CFStringGetCString(CFStringRef s, char *buf, CFIndex size, uint32_t encoding);
extern CFTypeID CFGetTypeID(CFTypeRef cf);
extern CFTypeID CFDataGetTypeID(void);
extern CFTypeID CFNumberGetTypeID(void);
extern CFTypeID CFBooleanGetTypeID(void);
extern CFTypeID CFStringGetTypeID(void);
extern CFIndex CFDataGetLength(CFDataRef d);
extern const uint8_t *CFDataGetBytePtr(CFDataRef d);
extern Boolean CFNumberGetValue(CFNumberRef n, int type, void *value);
extern Boolean CFBooleanGetValue(CFBooleanRef b);
extern void CFRelease(CFTypeRef cf);

/* ---- properties ---- */

static CFTypeRef uvi_prop(io_registry_entry_t e, const char *key)
{
	CFStringRef k = CFStringCreateWithCString(NULL, key, UVI_CF_UTF8);
	CFTypeRef v;

	if (!k)
		return NULL;
	v = IORegistryEntryCreateCFProperty(e, k, NULL, 0);
	CFRelease(k);
	return v;
}

/* A 4-byte little-endian data property (vendor-id, device-id, class-code). */
static bool uvi_prop_data32(io_registry_entry_t e, const char *key, uint32_t *out)
{
	CFTypeRef v = uvi_prop(e, key);
	bool ok = false;

	if (v && CFGetTypeID(v) == CFDataGetTypeID() && CFDataGetLength(v) >= 4) {
		const uint8_t *b = CFDataGetBytePtr(v);

		*out = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
		ok = true;
	}
	if (v)
		CFRelease(v);
	return ok;
}

static bool uvi_prop_num(io_registry_entry_t e, const char *key, int64_t *out)
{
	CFTypeRef v = uvi_prop(e, key);
	bool ok = v && CFGetTypeID(v) == CFNumberGetTypeID() && CFNumberGetValue(v, UVI_CF_SINT64, out);

	if (v)
		CFRelease(v);
	return ok;
}

static bool uvi_prop_bool(io_registry_entry_t e, const char *key)
{
	CFTypeRef v = uvi_prop(e, key);
	bool yes = v && CFGetTypeID(v) == CFBooleanGetTypeID() && CFBooleanGetValue(v);

	if (v)
		CFRelease(v);
	return yes;
}

static bool uvi_prop_str(io_registry_entry_t e, const char *key, char *buf, size_t len)
{
	CFTypeRef v = uvi_prop(e, key);
	bool ok = v && CFGetTypeID(v) == CFStringGetTypeID() && CFStringGetCString(v, buf, (CFIndex)len, UVI_CF_UTF8);

	if (v)
		CFRelease(v);
	return ok;
}

/* The registry ID of the IOPCIDevice above e in the IOService plane, 0 at a root. */
static uint64_t uvi_parent_fn(io_registry_entry_t e)
{
	io_registry_entry_t cur = e, p;
	uint64_t id = 0;

	for (int depth = 0; depth < 16; depth++) {
		if (IORegistryEntryGetParentEntry(cur, "IOService", &p) != KERN_SUCCESS)
			break;
		if (cur != e)
			IOObjectRelease(cur);
		cur = p;
		if (IOObjectConformsTo(cur, "IOPCIDevice")) {
			IORegistryEntryGetRegistryEntryID(cur, &id);
			break;
		}
	}
	if (cur != e)
		IOObjectRelease(cur);
	return id;
}

static void uvi_read_fn(io_registry_entry_t e, struct uvi_pci_fn *f)
{
	unsigned bus = 0, dev = 0, fn = 0, sec = 0, sub = 0;
	char dbg[64] = "";
	uint32_t v;
	int64_t caps, lcap, lsta;

	memset(f, 0, sizeof(*f));
	f->parent = -1;
	if (uvi_prop_str(e, "pcidebug", dbg, sizeof(dbg))) {
		int k = sscanf(dbg, "%u:%u:%u(%u:%u)", &bus, &dev, &fn, &sec, &sub);

		if (k == 5) {
			f->sec_bus = (uint8_t)sec;
			f->sub_bus = (uint8_t)sub;
		}
	}
	f->bus = (uint8_t)bus;
	f->dev = (uint8_t)dev;
	f->func = (uint8_t)fn;
	if (uvi_prop_data32(e, "vendor-id", &v))
		f->vendor_id = (uint16_t)v;
	if (uvi_prop_data32(e, "device-id", &v))
		f->device_id = (uint16_t)v;
	if (uvi_prop_data32(e, "class-code", &v))
		f->class_code = v & 0xffffff;
	/* Base class 06 (bridge), sub-class 04 (PCI-to-PCI): a type 1 header. */
	f->header_type = (f->class_code >> 8) == 0x0604 ? 1 : 0;
	f->tunnelled = uvi_prop_bool(e, "IOPCITunnelled");
	f->cfg.vendor_id = f->vendor_id;
	f->cfg.device_id = f->device_id;
	f->cfg_ok = 1;
	if (uvi_prop_num(e, "IOPCIExpressCapabilities", &caps)) {
		/* Present; its offset is not published.  PCI Express Capabilities [7:4]. */
		f->cfg.exp_off = 1;
		f->cfg.port_type = (uint8_t)((caps >> 4) & 0xf);
		if (uvi_prop_num(e, "IOPCIExpressLinkCapabilities", &lcap)) {
			f->cfg.max_link_speed = (uint8_t)(lcap & 0xf);           /* Link Capabilities [3:0] */
			f->cfg.max_link_width = (uint8_t)((lcap >> 4) & 0x3f);   /* [9:4] */
		}
		if (uvi_prop_num(e, "IOPCIExpressLinkStatus", &lsta)) {
			f->cfg.link_speed = (uint8_t)(lsta & 0xf);               /* Link Status [3:0] */
			f->cfg.link_width = (uint8_t)((lsta >> 4) & 0x3f);       /* [9:4] */
		}
	}
}

/* The driver IOKit attached to a function: its first child in the IOService plane.
 * Apple's ConnectX driver (AppleEthernetMLX5) is an IOEthernetController, or publishes
 * one below it; the uvshim kext is org_uverbs_UvShim. */
static int uvi_has_ethernet_below(io_registry_entry_t e, int depth)
{
	io_iterator_t it;
	io_object_t c;
	int found = 0;

	if (depth > 2 || IORegistryEntryGetChildIterator(e, "IOService", &it) != KERN_SUCCESS)
		return 0;
	while ((c = IOIteratorNext(it)) != 0) {
		if (!found && (IOObjectConformsTo(c, "IOEthernetController") || uvi_has_ethernet_below(c, depth + 1)))
			found = 1;
		IOObjectRelease(c);
	}
	IOObjectRelease(it);
	return found;
}

static void uvi_read_driver(io_registry_entry_t e, struct uvi_pci_fn *f)
{
	io_iterator_t it;
	io_object_t c;
	char cls[128];

	if (IORegistryEntryGetChildIterator(e, "IOService", &it) != KERN_SUCCESS)
		return;
	while ((c = IOIteratorNext(it)) != 0) {
		if (!f->driver[0] && IOObjectGetClass(c, cls) == KERN_SUCCESS)
			snprintf(f->driver, sizeof(f->driver), "%.63s", cls);
		IOObjectRelease(c);
	}
	IOObjectRelease(it);
	f->driver_ethernet = uvi_has_ethernet_below(e, 0);
}

int uvi_pci_scan(const char *method, char *const *params, size_t nparams,
		 struct uvi_pci_list *out, char *err, size_t errlen)
{
	io_iterator_t it;
	io_object_t e;
	uint64_t *id = NULL, *pid = NULL;
	size_t cap = 0;

	memset(out, 0, sizeof(*out));
	if (method || nparams) {
		(void)params;
		snprintf(err, errlen, "PCI access methods are libpci's (Linux); macOS reads the IORegistry");
		return -EINVAL;
	}
	if (IOServiceGetMatchingServices(MACH_PORT_NULL, IOServiceMatching("IOPCIDevice"), &it) != KERN_SUCCESS) {
		snprintf(err, errlen, "IORegistry: no IOPCIDevice services");
		return -ENODEV;
	}
	while ((e = IOIteratorNext(it)) != 0) {
		if (out->n == cap) {
			size_t nc = cap ? cap * 2 : 32;
			struct uvi_pci_fn *nf = realloc(out->fn, nc * sizeof(*nf));
			uint64_t *ni = nf ? realloc(id, nc * sizeof(*ni)) : NULL;
			uint64_t *np = ni ? realloc(pid, nc * sizeof(*np)) : NULL;

			if (nf)
				out->fn = nf;
			if (ni)
				id = ni;
			if (!np) {
				IOObjectRelease(e);
				IOObjectRelease(it);
				free(id);
				uvi_pci_free(out);
				snprintf(err, errlen, "out of memory");
				return -ENOMEM;
			}
			pid = np;
			cap = nc;
		}
		uvi_read_fn(e, &out->fn[out->n]);
		uvi_read_driver(e, &out->fn[out->n]);
		id[out->n] = 0;
		IORegistryEntryGetRegistryEntryID(e, &id[out->n]);
		pid[out->n] = uvi_parent_fn(e);
		out->n++;
		IOObjectRelease(e);
	}
	IOObjectRelease(it);
	out->drivers_known = 1;

	/* Parents by registry ID, then the domain: the index of the root above. */
	int nroots = 0;
	for (size_t i = 0; i < out->n; i++)
		for (size_t j = 0; pid[i] && j < out->n; j++)
			if (id[j] == pid[i]) {
				out->fn[i].parent = (int)j;
				break;
			}
	for (size_t i = 0; i < out->n; i++)
		if (out->fn[i].parent < 0)
			out->fn[i].domain = nroots++;
	for (size_t i = 0; i < out->n; i++) {
		int r = (int)i;

		for (int depth = 0; out->fn[r].parent >= 0 && depth < 64; depth++)
			r = out->fn[r].parent;
		out->fn[i].domain = out->fn[r].domain;
		snprintf(out->fn[i].bdf, sizeof(out->fn[i].bdf), "%04x:%02x:%02x.%x",
			 (unsigned)out->fn[i].domain & 0xffff, out->fn[i].bus, out->fn[i].dev, out->fn[i].func);
	}
	free(id);
	free(pid);
	return 0;
}
