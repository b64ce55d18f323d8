/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The checks the VFIO shim makes in sysfs before touching VFIO (hw/shim/vfio_sysfs.c),
 * against fake sysfs trees built in a temporary directory: each way of not being ready
 * gets its errno and a message naming the device and the remedy. Also the
 * locked-memory check and CAP_IPC_LOCK detection. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hw/shim/vfio_sysfs.h"

static char root[PATH_MAX];
static char err[256];

static void run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void run(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	cr_assert(n > 0 && n < (int)sizeof(cmd));
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* A PCI function as sysfs shows it: ids, optional IOMMU group (with the group's
 * devices/ link back), optional driver link. */
static void device(const char *bdf, const char *vendor, const char *dev, int group, const char *driver)
{
	run("d='%s/bus/pci/devices/%s'; mkdir -p \"$d\" && echo %s > \"$d/vendor\" && echo %s > \"$d/device\"",
	    root, bdf, vendor, dev);
	if (group >= 0)
		run("cd '%s' && mkdir -p kernel/iommu_groups/%d/devices && "
		    "ln -s ../../../kernel/iommu_groups/%d bus/pci/devices/%s/iommu_group && "
		    "ln -s ../../../../bus/pci/devices/%s kernel/iommu_groups/%d/devices/%s",
		    root, group, group, bdf, bdf, group, bdf);
	if (driver)
		run("cd '%s' && mkdir -p bus/pci/drivers/%s && ln -s ../../../bus/pci/drivers/%s bus/pci/devices/%s/driver",
		    root, driver, driver, bdf);
}

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/uv-vfio-sysfs-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(vfio_sysfs, .init = setup, .fini = teardown);

Test(vfio_sysfs, ready_function_reports_ids_group_and_driver)
{
	struct shim_vfio_sysfs sf;
	device("0000:03:00.0", "0x15b3", "0x1017", 12, "vfio-pci");
	cr_assert_eq(shim_vfio_sysfs_probe(root, "0000:03:00.0", &sf, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sf.vendor_id, 0x15b3);
	cr_assert_eq(sf.device_id, 0x1017);
	cr_assert_eq(sf.group, 12);
	cr_assert_str_eq(sf.driver, "vfio-pci");
}

Test(vfio_sysfs, missing_device_is_enodev_naming_the_bdf)
{
	struct shim_vfio_sysfs sf;
	run("mkdir -p '%s/bus/pci/devices'", root);
	cr_assert_eq(shim_vfio_sysfs_probe(root, "0000:42:00.0", &sf, err, sizeof(err)), -ENODEV);
	cr_assert(strstr(err, "0000:42:00.0 not found") != NULL, "%s", err);
}

Test(vfio_sysfs, other_vendor_is_enodev_not_a_mellanox_device)
{
	struct shim_vfio_sysfs sf;
	device("0000:00:02.0", "0x8086", "0x1237", 1, "i915");
	cr_assert_eq(shim_vfio_sysfs_probe(root, "0000:00:02.0", &sf, err, sizeof(err)), -ENODEV);
	cr_assert(strstr(err, "not a Mellanox") != NULL, "%s", err);
	cr_assert(strstr(err, "0x8086") != NULL, "%s", err);
}

Test(vfio_sysfs, no_iommu_group_says_the_iommu_is_off)
{
	struct shim_vfio_sysfs sf;
	device("0000:03:00.0", "0x15b3", "0x1017", -1, "mlx5_core");
	cr_assert_eq(shim_vfio_sysfs_probe(root, "0000:03:00.0", &sf, err, sizeof(err)), -ENODEV);
	cr_assert(strstr(err, "IOMMU is off") != NULL, "%s", err);
	cr_assert(strstr(err, "intel_iommu=on") != NULL, "%s", err);
}

Test(vfio_sysfs, bound_to_mlx5_core_is_ebusy_naming_driver_and_vfio_bind)
{
	struct shim_vfio_sysfs sf;
	device("0000:03:00.0", "0x15b3", "0x1017", 12, "mlx5_core");
	cr_assert_eq(shim_vfio_sysfs_probe(root, "0000:03:00.0", &sf, err, sizeof(err)), -EBUSY);
	cr_assert(strstr(err, "bound to mlx5_core") != NULL, "%s", err);
	cr_assert(strstr(err, "tools/vfio-bind 0000:03:00.0") != NULL, "%s", err);
	cr_assert_str_eq(sf.driver, "mlx5_core");
	cr_assert_eq(sf.group, 12);
}

Test(vfio_sysfs, unbound_function_is_ebusy)
{
	struct shim_vfio_sysfs sf;
	device("0000:03:00.0", "0x15b3", "0x1017", 12, NULL);
	cr_assert_eq(shim_vfio_sysfs_probe(root, "0000:03:00.0", &sf, err, sizeof(err)), -EBUSY);
	cr_assert(strstr(err, "not bound to any driver") != NULL, "%s", err);
}

Test(vfio_sysfs, group_blockers_name_devices_with_other_drivers_only)
{
	char list[256];
	device("0000:03:00.0", "0x15b3", "0x1017", 12, "vfio-pci");
	device("0000:03:00.1", "0x15b3", "0x1017", 12, "mlx5_core");
	device("0000:00:01.0", "0x8086", "0x1901", 12, "pcieport");
	device("0000:03:00.2", "0x15b3", "0x1018", 12, NULL);
	device("0000:02:00.0", "0x8086", "0x15f3", 12, "igc");
	cr_assert_eq(shim_vfio_group_blockers(root, 12, list, sizeof(list)), 2);
	cr_assert_str_eq(list, "0000:02:00.0 (igc), 0000:03:00.1 (mlx5_core)");
}

Test(vfio_sysfs, group_of_vfio_devices_has_no_blockers)
{
	char list[64];
	device("0000:03:00.0", "0x15b3", "0x1017", 5, "vfio-pci");
	device("0000:03:00.1", "0x15b3", "0x1017", 5, "pci-stub");
	cr_assert_eq(shim_vfio_group_blockers(root, 5, list, sizeof(list)), 0);
	cr_assert_str_eq(list, "");
}

Test(vfio_sysfs, missing_group_directory_is_enoent)
{
	char list[64];
	cr_assert_eq(shim_vfio_group_blockers(root, 99, list, sizeof(list)), -ENOENT);
}

Test(vfio_sysfs, memlock_below_need_is_enomem_with_both_numbers_and_ulimit)
{
	cr_assert_eq(shim_vfio_memlock_check(8u << 20, 0, 0, 64u << 20, err, sizeof(err)), -ENOMEM);
	cr_assert(strstr(err, "8192 KiB") != NULL, "%s", err);
	cr_assert(strstr(err, "65536 KiB") != NULL, "%s", err);
	cr_assert(strstr(err, "ulimit -l") != NULL, "%s", err);
}

Test(vfio_sysfs, memlock_passes_when_unlimited_capable_sufficient_or_unchecked)
{
	cr_assert_eq(shim_vfio_memlock_check(8u << 20, 1, 0, 64u << 20, err, sizeof(err)), 0);
	cr_assert_eq(shim_vfio_memlock_check(8u << 20, 0, 1, 64u << 20, err, sizeof(err)), 0);
	cr_assert_eq(shim_vfio_memlock_check(64u << 20, 0, 0, 64u << 20, err, sizeof(err)), 0);
	cr_assert_eq(shim_vfio_memlock_check(0, 0, 0, 0, err, sizeof(err)), 0);
}

Test(vfio_sysfs, cap_ipc_lock_is_bit_14_of_capeff)
{
	cr_assert(shim_vfio_status_has_ipc_lock("Name:\tx\nCapInh:\t0\nCapEff:\t000001ffffffffff\n"));
	cr_assert(shim_vfio_status_has_ipc_lock("Name:\tx\nCapEff:\t0000000000004000\n"));
	cr_assert_not(shim_vfio_status_has_ipc_lock("Name:\tx\nCapEff:\t0000000000000000\n"));
	cr_assert_not(shim_vfio_status_has_ipc_lock("Name:\tx\nCapPrm:\t0000000000004000\n"));
	cr_assert_not(shim_vfio_status_has_ipc_lock(NULL));
}
