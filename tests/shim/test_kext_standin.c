/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The Mac path on Linux: hw/shim/kext.c and the kext's core (shim-kext/core) through the
 * IOKit stand-in (shim-kext/standin), whose IOPCIDevice is the emulated ConnectX with
 * its PCI rules (hw/emu/pci.c).  A "kext:" open must leave the function able to run a
 * command (bus mastering on: review 2026-12-05 finding 1) and start clean whatever a
 * previous driver left (FLR); the stand-in must answer as strictly as IOKit and the
 * kext do (selectors, argument counts, inband sizes, mapping types). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <IOKit/IOKitLib.h>

#include "firmware-cmd/cmdq.h"
#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "hw/emu/emu.h"
#include "hw/shim/mmio.h"
#include "hw/shim/shim.h"
#include "shim-kext/include/uvshim_abi.h"
#include "shim-kext/standin/standin.h"

static void wait_ready(struct shim_bar *bar)
{
	unsigned off = PRM_OFF(initial_seg, initializing) / 32 * 4;
	uint8_t img[PRM_OFF(initial_seg, initializing) / 8 + 4];
	struct timespec ts = { 0, 200000 };

	for (int i = 0; i < 20000; i++) {
		prm_store_be32(img, off * 8, shim_mmio_read32(bar, off));
		if (!PRM_GET(initial_seg, img, initializing))
			return;
		nanosleep(&ts, NULL);
	}
	cr_assert_fail("device stayed initializing");
}

/* ENABLE_HCA with a short timeout: on a function without bus mastering the entry is
 * never fetched and this times out, as on a card. */
static int enable_hca(struct shim_dev *dev, char *why, size_t whylen)
{
	struct shim_bar bar;
	struct cmdq *q;
	struct cmdq_config cfg = { .timeout_ms = 500, .use_signatures = 1 };
	uint8_t in[16] = { 0 }, out[16];
	int rc;

	cr_assert_eq(shim_bar(dev, 0, &bar), 0);
	wait_ready(&bar);
	cr_assert_eq(cmdq_create(dev, &bar, &cfg, &q), 0, "%s", dev->err);
	wait_ready(&bar);
	PRM_SET(cmd_in, in, opcode, PRM_CMD_OP_ENABLE_HCA);
	rc = cmdq_exec(q, in, sizeof(in), out, sizeof(out));
	snprintf(why, whylen, "%s", rc ? cmdq_error(q) : "");
	cmdq_destroy(q);
	return rc;
}

static struct shim_dev *open_kext(void)
{
	struct shim_dev *dev = NULL;
	char err[256];

	cr_assert_eq(shim_open("kext:0", &dev, err, sizeof(err)), 0, "kext:0: %s", err);
	return dev;
}

Test(kext_standin, open_leaves_the_function_able_to_run_a_command)
{
	struct shim_dev *dev = open_kext();
	struct emu_dev *e = emu_device_from_shim(dev);
	struct emu_counters c;
	char why[256];

	cr_assert_not_null(e, "the stand-in's function is the emulated ConnectX");
	cr_assert_eq(enable_hca(dev, why, sizeof(why)), 0, "ENABLE_HCA over kext: %s", why);
	emu_counters(e, &c);
	cr_assert_eq(c.dma_blocked, 0, "no DMA refused for bus mastering");
	cr_assert_eq(emu_hca_state(e), 1);
	shim_close(dev);
}

/* A previous driver (Apple's, a crashed owner) left the function enabled with its
 * command queue programmed: the open resets it (FLR) before the first command. */
Test(kext_standin, open_resets_what_a_previous_driver_left)
{
	io_iterator_t it;
	io_service_t svc;
	struct emu_dev *e;
	struct emu_counters c;
	struct shim_dev *dev;
	char why[256];

	/* Hold the service, as the kext stays attached between owners. */
	cr_assert_eq(IOServiceGetMatchingServices(MACH_PORT_NULL, IOServiceMatching(UVSHIM_SERVICE_CLASS), &it), 0);
	svc = IOIteratorNext(it);
	IOObjectRelease(it);
	cr_assert_neq(svc, IO_OBJECT_NULL);
	e = uvshim_standin_emu(0);
	cr_assert_not_null(e);
	/* The other driver: bus mastering on, a command queue programmed. */
	cr_assert_eq(emu_pci_host_enable(e), 0);
	volatile uint8_t *bar = emu_bar_base(e);
	unsigned lo = PRM_OFF(initial_seg, cmdq_phy_addr_31_12) / 32 * 4;
	bar[lo] = 0x12;
	bar[lo + 1] = 0x34;
	emu_mmio_access(e, 1, lo, 4);

	dev = open_kext();
	emu_counters(e, &c);
	cr_assert_geq(c.flrs, 1, "the open reset the function");
	cr_assert_eq(enable_hca(dev, why, sizeof(why)), 0, "ENABLE_HCA after the reset: %s", why);
	shim_close(dev);
	/* The owner's release resets it again and leaves bus mastering off. */
	uint8_t cmd[2];
	cr_assert_eq(emu_pci_cfg_read(e, 4, cmd, 2), 0);
	cr_assert_eq(cmd[0] & 0x4, 0, "bus mastering off between owners");
	IOObjectRelease(svc);
}

/* ---- the stand-in is as strict as IOKit and the kext ---- */

struct conn {
	io_service_t svc;
	io_connect_t c;
};

static void conn_open(struct conn *k)
{
	io_iterator_t it;
	struct uvshim_hello_req h = { .abi_major = UVSHIM_ABI_MAJOR, .abi_minor = UVSHIM_ABI_MINOR };
	struct uvshim_hello_rep r;
	size_t n = sizeof(r);

	cr_assert_eq(IOServiceGetMatchingServices(MACH_PORT_NULL, IOServiceMatching(UVSHIM_SERVICE_CLASS), &it), 0);
	k->svc = IOIteratorNext(it);
	IOObjectRelease(it);
	cr_assert_eq(IOServiceOpen(k->svc, mach_task_self(), UVSHIM_CLIENT_TYPE, &k->c), KERN_SUCCESS);
	cr_assert_eq(IOConnectCallStructMethod(k->c, UVSHIM_SEL_HELLO, &h, sizeof(h), &r, &n), KERN_SUCCESS);
}

static void conn_close(struct conn *k)
{
	IOServiceClose(k->c);
	IOObjectRelease(k->svc);
}

Test(kext_standin, unknown_class_matches_nothing_and_wrong_client_type_is_refused)
{
	io_iterator_t it;
	io_connect_t c;
	struct conn k;

	cr_assert_eq(IOServiceGetMatchingServices(MACH_PORT_NULL, IOServiceMatching("AppleEthernetMLX5"), &it), 0);
	cr_assert_eq(IOIteratorNext(it), IO_OBJECT_NULL);
	IOObjectRelease(it);
	conn_open(&k);
	/* A second owner: the core's EBUSY (UvShim::newUserClient passes it on). */
	cr_assert_eq(IOServiceOpen(k.svc, mach_task_self(), UVSHIM_CLIENT_TYPE, &c),
		     (IOReturn)UVSHIM_IORETURN(UVSHIM_EBUSY));
	cr_assert_eq(IOServiceOpen(k.svc, mach_task_self(), 0x1234, &c), kIOReturnBadArgument);
	conn_close(&k);
}

Test(kext_standin, selectors_counts_and_sizes_are_checked)
{
	struct conn k;
	struct uvshim_info_req ireq = { 0, 0 };
	struct uvshim_info_rep irep;
	size_t n = sizeof(irep);
	uint64_t scalar = 1, many[17] = { 0 };
	uint8_t big[5000] = { 0 };

	conn_open(&k);
	cr_assert_eq(IOConnectCallStructMethod(k.c, UVSHIM_SEL_DEVICE_INFO, &ireq, sizeof(ireq), &irep, &n), 0);
	cr_assert_eq(irep.vendor_id, 0x15b3);
	n = sizeof(irep);
	cr_assert_eq(IOConnectCallStructMethod(k.c, UVSHIM_SEL_COUNT, &ireq, sizeof(ireq), &irep, &n),
		     (IOReturn)UVSHIM_IORETURN(UVSHIM_ENOSYS), "unknown selector");
	n = sizeof(irep) - 1;
	cr_assert_eq(IOConnectCallStructMethod(k.c, UVSHIM_SEL_DEVICE_INFO, &ireq, sizeof(ireq), &irep, &n),
		     (IOReturn)UVSHIM_IORETURN(UVSHIM_EBADSIZE), "short reply buffer");
	n = sizeof(irep);
	cr_assert_eq(IOConnectCallMethod(k.c, UVSHIM_SEL_DEVICE_INFO, &scalar, 1, &ireq, sizeof(ireq), NULL, NULL,
					 &irep, &n),
		     (IOReturn)UVSHIM_IORETURN(UVSHIM_EBADSIZE), "a scalar input");
	n = sizeof(irep);
	cr_assert_eq(IOConnectCallMethod(k.c, UVSHIM_SEL_DEVICE_INFO, NULL, 0, big, sizeof(big), NULL, NULL, &irep, &n),
		     (IOReturn)UVSHIM_IORETURN(UVSHIM_EBADSIZE), "an out-of-line structure");
	cr_assert_eq(IOConnectCallScalarMethod(k.c, UVSHIM_SEL_DEVICE_INFO, many, 17, NULL, NULL), -307,
		     "more scalars than the message holds");
	{
		struct uvshim_irq_req r = { .vector = 0 };
		uint64_t ref[kOSAsyncRef64Count] = { 0 };
		cr_assert_eq(IOConnectCallAsyncStructMethod(k.c, UVSHIM_SEL_IRQ_DISARM, 0x1003, ref, kOSAsyncRef64Count, &r,
							    sizeof(r), NULL, NULL),
			     (IOReturn)UVSHIM_IORETURN(UVSHIM_EINVAL), "async call of a synchronous selector");
		cr_assert_eq(IOConnectCallStructMethod(k.c, UVSHIM_SEL_IRQ_ARM, &r, sizeof(r), NULL, NULL),
			     (IOReturn)UVSHIM_IORETURN(UVSHIM_EINVAL), "IRQ_ARM without a notification port");
	}
	conn_close(&k);
}

Test(kext_standin, a_window_maps_only_with_its_cache_mode)
{
	struct conn k;
	struct uvshim_map_bar_req req = { .bar = 0, .cache = UVSHIM_CACHE_UNCACHED, .offset = 0, .length = 0x10000 };
	struct uvshim_map_bar_rep rep;
	size_t n = sizeof(rep);
	mach_vm_address_t a = 0;
	mach_vm_size_t sz = 0;

	conn_open(&k);
	cr_assert_eq(IOConnectCallStructMethod(k.c, UVSHIM_SEL_MAP_BAR, &req, sizeof(req), &rep, &n), 0);
	cr_assert_eq(IOConnectMapMemory64(k.c, rep.memory_type, mach_task_self(), &a, &sz,
					  kIOMapAnywhere | kIOMapWriteCombineCache),
		     kIOReturnBadArgument, "the init segment mapped write-combining");
	cr_assert_eq(IOConnectMapMemory64(k.c, rep.memory_type, mach_task_self(), &a, &sz,
					  kIOMapAnywhere | kIOMapDefaultCache),
		     kIOReturnBadArgument, "the init segment mapped cached");
	cr_assert_eq(IOConnectMapMemory64(k.c, rep.memory_type + 1, mach_task_self(), &a, &sz,
					  kIOMapAnywhere | kIOMapInhibitCache),
		     kIOReturnBadArgument, "a memory type nobody declared");
	cr_assert_eq(IOConnectMapMemory64(k.c, rep.memory_type, mach_task_self(), &a, &sz,
					  kIOMapAnywhere | kIOMapInhibitCache),
		     KERN_SUCCESS);
	cr_assert_eq(sz, 0x10000);
	conn_close(&k);
}

/* ---- the driver over kext: ---- */

#include "hw/mlx5/mx5.h"

/* The whole bring-up (pages, EQs on MSI-X vectors the kext armed, command completions
 * by interrupt) and teardown, twice: the second owner starts from what the first left. */
Test(kext_standin, driver_brings_the_function_up_and_down_twice)
{
	for (int i = 0; i < 2; i++) {
		struct mx5_device *dev = NULL;
		int rc = mx5_device_open("kext:0", &dev);

		cr_assert_eq(rc, 0, "open kext:0 (%d): %d: %s", i, rc, mx5_open_error());
		struct emu_dev *e = emu_device_from_shim(mx5_device_shim(dev));
		struct emu_counters c;
		cr_assert_not_null(e);
		emu_counters(e, &c);
		cr_assert_gt(c.interrupts, 0, "events arrived by MSI-X");
		cr_assert_eq(c.msix_blocked + c.dma_blocked, 0);
		cr_assert_gt(c.objects_live[EMU_OBJ_EQ], 0);
		cr_assert_eq(mx5_device_shutdown(dev), 0, "%s", mx5_device_error(dev));
		emu_counters(e, &c);
		cr_assert_eq(c.pages_held, 0);
		cr_assert_eq(c.driver_errors, 0, "no driver error");
		mx5_device_close(dev);
	}
}

/* Sleep with an owner (review 2026-12-05 finding 4): idle sleep is refused; a forced
 * sleep tells the owner, whose next command fails at once with the device gone (not a
 * 60 s timeout) and who recovers by reopening after the wake. */
static int fatal_events;

static void on_event(void *ctx, const struct mx5_event *ev)
{
	(void)ctx;
	if (ev->type == MX5_EVENT_DEVICE_FATAL)
		fatal_events++;
}

Test(kext_standin, sleep_is_refused_or_tells_the_owner_who_reopens_after_wake, .timeout = 60)
{
	io_iterator_t it;
	io_service_t svc;
	struct mx5_device *dev = NULL;
	struct timespec t0, t1;
	uint8_t in[16] = { 0 }, out[16];
	int rc;

	cr_assert_eq(IOServiceGetMatchingServices(MACH_PORT_NULL, IOServiceMatching(UVSHIM_SERVICE_CLASS), &it), 0);
	svc = IOIteratorNext(it);
	IOObjectRelease(it);
	cr_assert_eq(uvshim_standin_power(0, UVSHIM_STANDIN_CAN_SLEEP), 0, "no owner: sleep allowed");
	cr_assert_eq(mx5_device_open("kext:0", &dev), 0, "%s", mx5_open_error());
	mx5_device_set_event_handler(dev, on_event, NULL);
	cr_assert_eq(uvshim_standin_power(0, UVSHIM_STANDIN_CAN_SLEEP), -UVSHIM_EBUSY, "idle sleep refused");
	cr_assert_eq(uvshim_standin_power(0, UVSHIM_STANDIN_SLEEP), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	PRM_SET(cmd_in, in, opcode, PRM_CMD_OP_QUERY_ISSI);
	rc = mx5_cmd(dev, in, sizeof(in), out, sizeof(out));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert_neq(rc, 0, "a command on an unpowered function");
	cr_assert_lt(t1.tv_sec - t0.tv_sec, 5, "failed at once (%s), no timeout", mx5_device_error(dev));
	cr_assert(mx5_device_is_fatal(dev), "the driver raised the fatal state");
	cr_assert_eq(fatal_events, 1, "one device-fatal event (IBV_EVENT_DEVICE_FATAL to verbs)");
	mx5_device_close(dev);
	cr_assert_eq(uvshim_standin_power(0, UVSHIM_STANDIN_WAKE), 0);
	cr_assert_eq(mx5_device_open("kext:0", &dev), 0, "reopened after wake: %s", mx5_open_error());
	cr_assert_eq(mx5_device_shutdown(dev), 0, "%s", mx5_device_error(dev));
	mx5_device_close(dev);
	IOObjectRelease(svc);
}

/* The firmware asks for 12,874 pages at bring-up (the ConnectX-4 trace's figures; a peer
 * driver with a fixed 8,192-page pool could not bring such a card up): the driver sets
 * no cap below what QUERY_PAGES asks, and when the host cannot pin them the open fails
 * with a message that names the numbers. */
Test(kext_standin, a_page_request_the_host_cannot_pin_names_the_pages)
{
	struct mx5_device *dev = NULL;
	int rc;

	setenv("UVERBS_KEXT_STANDIN", "pinned_mb=16", 1);
	rc = mx5_device_open("kext:0", &dev);
	cr_assert_neq(rc, 0, "16 MiB of wired memory cannot hold 50 MiB of firmware pages");
	cr_assert_not_null(strstr(mx5_open_error(), "of 12874"), "%s", mx5_open_error());
	cr_assert_not_null(strstr(mx5_open_error(), "51 MiB"), "%s", mx5_open_error());
	unsetenv("UVERBS_KEXT_STANDIN");
	cr_assert_eq(mx5_device_open("kext:0", &dev), 0, "%s", mx5_open_error());
	struct mx5_page_stats st;
	mx5_device_page_stats(dev, &st);
	cr_assert_geq(st.given, 12874, "every page the firmware asked for");
	mx5_device_close(dev);
}

/* Owner death (clientDied) while the owner had the function enabled, buffers and pins
 * mapped and vectors armed: the kext turns interrupts and bus mastering off, resets
 * the function and only then unwires the pages; the next owner opens at once and
 * brings the function up from scratch.  (The dead owner is a bare kext: shim that
 * makes no call after its death, as a dead process makes none.) */
Test(kext_standin, owner_death_resets_the_function_and_the_next_owner_opens, .timeout = 60)
{
	io_iterator_t it;
	io_service_t svc;
	struct shim_dev *dead;
	struct shim_dma buf;
	struct shim_pin pin;
	struct mx5_device *next = NULL;
	struct emu_counters c0, c;
	uint8_t cmd[2];
	char why[256];
	void *mem = aligned_alloc(65536, 65536);

	cr_assert_eq(IOServiceGetMatchingServices(MACH_PORT_NULL, IOServiceMatching(UVSHIM_SERVICE_CLASS), &it), 0);
	svc = IOIteratorNext(it);
	IOObjectRelease(it);
	dead = open_kext();
	cr_assert_eq(enable_hca(dead, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(shim_dma_alloc(dead, 65536, 4096, &buf), 0, "%s", dead->err);
	cr_assert_eq(shim_dma_pin(dead, mem, 65536, &pin), 0, "%s", dead->err);
	struct emu_dev *e = uvshim_standin_emu(0);
	emu_counters(e, &c0);
	cr_assert_eq(emu_hca_state(e), 1);
	cr_assert_eq(uvshim_standin_owner_died(0), 0);
	emu_counters(e, &c);
	cr_assert_eq(c.flrs, c0.flrs + 1, "the function was reset");
	cr_assert_eq(emu_hca_state(e), 0, "the dead owner's HCA is gone");
	cr_assert_eq(emu_pci_cfg_read(e, 4, cmd, 2), 0);
	cr_assert_eq(cmd[0] & 0x4, 0, "bus mastering off until the next owner");
	cr_assert_eq(mx5_device_open("kext:0", &next), 0, "the next owner: %s", mx5_open_error());
	cr_assert_eq(mx5_device_shutdown(next), 0, "%s", mx5_device_error(next));
	mx5_device_close(next);
	shim_close(dead);   /* the dead connection answers nothing; nothing crashes */
	free(mem);
	IOObjectRelease(svc);
}

/* kext.c's messages for a refused open reach the user now that UvShim::newUserClient
 * passes the core's reason on (IOService's own answer would be kIOReturnUnsupported). */
Test(kext_standin, a_refused_open_says_busy_or_not_allowed)
{
	struct shim_dev *a = open_kext(), *b = NULL;
	char err[256];

	cr_assert_eq(shim_open("kext:0", &b, err, sizeof(err)), -EBUSY, "%s", err);
	cr_assert_not_null(strstr(err, "owned by another process"), "%s", err);
	shim_close(a);
	/* a user outside the kext's owner group (Info.plist UvShimGroupID) */
	setenv("UVERBS_KEXT_STANDIN", "uid=501,gid=54321", 1);
	cr_assert_eq(shim_open("kext:0", &b, err, sizeof(err)), -EACCES, "%s", err);
	cr_assert_not_null(strstr(err, "not allowed"), "%s", err);
	unsetenv("UVERBS_KEXT_STANDIN");
}

/* What a peer Mac driver saw after AppleEthernetMLX5 had the card (review 2026-12-05
 * finding 2): the command interface left in the "disabled" NIC-interface mode and a
 * command queue programmed.  The kext starts (bus mastering off); our open resets the
 * function, so the driver's health check finds the interface enabled and brings the
 * function up. */
Test(kext_standin, open_starts_clean_after_apples_driver_left_the_interface_disabled, .timeout = 60)
{
	io_iterator_t it;
	io_service_t svc;
	struct mx5_device *dev = NULL;
	uint8_t cmd[2];

	cr_assert_eq(IOServiceGetMatchingServices(MACH_PORT_NULL, IOServiceMatching(UVSHIM_SERVICE_CLASS), &it), 0);
	svc = IOIteratorNext(it);
	IOObjectRelease(it);
	struct emu_dev *e = uvshim_standin_emu(0);
	volatile uint8_t *bar = emu_bar_base(e);
	unsigned dw = PRM_OFF(initial_seg, cmdq_phy_addr_31_12) / 32 * 4;
	uint8_t img[PRM_SIZE(initial_seg)];

	/* Apple's driver: function enabled, a queue at 0x7f000, nic_interface 1
	 * (disabled, Linux MLX5_NIC_IFC_DISABLED) in the same dword. */
	cr_assert_eq(emu_pci_host_enable(e), 0);
	memset(img, 0, sizeof(img));
	PRM_SET(initial_seg, img, cmdq_phy_addr_31_12, 0x7f);
	PRM_SET(initial_seg, img, nic_interface, 1);
	memcpy((void *)(bar + dw), img + dw, 4);
	emu_mmio_access(e, 1, dw, 4);
	/* then it unloaded, and the uvshim kext started: bus mastering off */
	cr_assert_eq(emu_pci_cfg_read(e, 4, cmd, 2), 0);
	cmd[0] &= (uint8_t)~0x4;
	cr_assert_eq(emu_pci_cfg_write(e, 4, cmd, 2), 0);

	cr_assert_eq(mx5_device_open("kext:0", &dev), 0, "after Apple's driver: %s", mx5_open_error());
	cr_assert_eq(mx5_device_shutdown(dev), 0, "%s", mx5_device_error(dev));
	mx5_device_close(dev);
	IOObjectRelease(svc);
}

/* Mach port names carry a generation (MACH_PORT_MAKE): a notification port made after
 * another was destroyed gets a different name even in the same entry, and a callout the
 * kernel still sends to the old name is dropped, as a message to a dead receive right
 * is.  Without it a late interrupt for a closed device reached the next device's queue
 * with the closed device's vector as refcon (a use-after-free in kext_irq_cb, seen once
 * in a full CI run). */
static int callouts;

static void count_callout(void *refcon, IOReturn result, void **args, uint32_t nargs)
{
	(void)refcon, (void)result, (void)args, (void)nargs;
	__atomic_fetch_add(&callouts, 1, __ATOMIC_RELAXED);
}

static void flush_nothing(void *ctx)
{
	(void)ctx;
}

Test(kext_standin, a_callout_to_a_destroyed_notification_port_is_dropped)
{
	dispatch_queue_t q = dispatch_queue_create("test", DISPATCH_QUEUE_SERIAL);
	IONotificationPortRef p1 = IONotificationPortCreate(MACH_PORT_NULL);
	cr_assert(q && p1);
	IONotificationPortSetDispatchQueue(p1, q);
	mach_port_t old = IONotificationPortGetMachPort(p1);
	IONotificationPortDestroy(p1);
	IONotificationPortRef p2 = IONotificationPortCreate(MACH_PORT_NULL);
	cr_assert_not_null(p2);
	IONotificationPortSetDispatchQueue(p2, q);
	mach_port_t now = IONotificationPortGetMachPort(p2);
	cr_assert_neq(now, old, "the new port took the destroyed port's name 0x%x", (unsigned)old);

	uint64_t ref[kOSAsyncRef64Count] = { 0 }, args[1] = { 7 };
	ref[kIOAsyncCalloutFuncIndex] = (uint64_t)(uintptr_t)count_callout;
	callouts = 0;
	standin_port_send(old, ref, args, 1);
	dispatch_sync_f(q, NULL, flush_nothing);
	cr_assert_eq(callouts, 0, "a callout to the destroyed port ran on the new port's queue");
	standin_port_send(now, ref, args, 1);
	dispatch_sync_f(q, NULL, flush_nothing);
	cr_assert_eq(callouts, 1, "the live port's callout did not run");
	IONotificationPortDestroy(p2);
	dispatch_release(q);
}
