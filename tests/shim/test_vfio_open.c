/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Opening "vfio:" devices without a device: through shim_open on this machine (a BDF
 * that does not exist, malformed URIs), and through shim_vfio_open_at with fake sysfs
 * and /dev trees to reach the steps after sysfs. Every failure must come back as the
 * right errno with a message naming the device, and release what it opened (the
 * sanitizer build checks for leaks). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hw/shim/shim.h"
#include "hw/shim/vfio_dev.h"

static char err[SHIM_ERR_LEN];

/* shim.c finds the built-in shims through weak references, which do not pull an object
 * out of a static library; registering names shim_vfio_ops, so vfio.o is linked. */
static void setup(void)
{
	cr_assert_eq(shim_register(&shim_vfio_ops), 0);
}

TestSuite(vfio_open, .init = setup);

Test(vfio_open, absent_bdf_is_enodev_naming_it)
{
	struct shim_dev *d = (void *)1;
	/* Domain 0x7ff0 is not one a machine has: VMD domains start at 0x10000. */
	int rc = shim_open("vfio:7ff0:ff:1f.7", &d, err, sizeof(err));
	cr_assert_eq(rc, -ENODEV, "rc %d: %s", rc, err);
	cr_assert_null(d);
	cr_assert(strstr(err, "7ff0:ff:1f.7") != NULL, "%s", err);
	cr_assert(strstr(err, "not found") != NULL, "%s", err);
}

Test(vfio_open, malformed_uri_is_einval)
{
	struct shim_dev *d = (void *)1;
	cr_assert_eq(shim_open("vfio:not-a-bdf", &d, err, sizeof(err)), -EINVAL);
	cr_assert_null(d);
	cr_assert(strstr(err, "not-a-bdf") != NULL, "%s", err);
	cr_assert_eq(shim_open("vfio:", &d, err, sizeof(err)), -EINVAL);
	cr_assert_eq(shim_open("vfio:03:00.0,bogus=1", &d, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "bogus") != NULL, "%s", err);
}

/* ---- fake trees ---- */

static char root[PATH_MAX], sys_root[PATH_MAX + 8], dev_root[PATH_MAX + 8];

static void run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void run(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* A ConnectX-5 at 0000:03:00.0 in IOMMU group 7, bound to the given driver. */
static void fake_tree(const char *driver, int with_group)
{
	snprintf(root, sizeof(root), "/tmp/uv-vfio-open-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	snprintf(sys_root, sizeof(sys_root), "%s/sys", root);
	snprintf(dev_root, sizeof(dev_root), "%s/dev", root);
	run("d='%s/bus/pci/devices/0000:03:00.0'; mkdir -p \"$d\" '%s/bus/pci/drivers/%s' "
	    "'%s/kernel/iommu_groups/7/devices' '%s' && echo 0x15b3 > \"$d/vendor\" && "
	    "echo 0x1017 > \"$d/device\" && ln -s ../../../bus/pci/drivers/%s \"$d/driver\"",
	    sys_root, sys_root, driver, sys_root, dev_root, driver);
	if (with_group)
		run("ln -s ../../../kernel/iommu_groups/7 '%s/bus/pci/devices/0000:03:00.0/iommu_group'", sys_root);
}

static void teardown_tree(void)
{
	if (root[0])
		run("rm -rf '%s'", root);
	root[0] = '\0';
}

Test(vfio_open, missing_dev_vfio_is_enodev_saying_load_vfio, .fini = teardown_tree)
{
	struct shim_dev *d = NULL;
	fake_tree("vfio-pci", 1);
	int rc = shim_vfio_open_at("0000:03:00.0", sys_root, dev_root, &d);
	cr_assert_eq(rc, -ENODEV);
	cr_assert_not_null(d);
	cr_assert(strstr(d->err, "/dev/vfio/vfio does not exist") != NULL || strstr(d->err, "vfio/vfio does not exist"),
		  "%s", d->err);
	cr_assert(strstr(d->err, "modprobe vfio-pci") != NULL, "%s", d->err);
	cr_assert_eq(d->pci.vendor_id, 0x15b3);
	cr_assert_str_eq(d->pci.bdf, "0000:03:00.0");
	d->ops->close(d);
}

Test(vfio_open, container_that_is_not_vfio_is_eproto, .fini = teardown_tree)
{
	struct shim_dev *d = NULL;
	fake_tree("vfio-pci", 1);
	run("mkdir -p '%s/vfio' && : > '%s/vfio/vfio' && : > '%s/vfio/7'", dev_root, dev_root, dev_root);
	int rc = shim_vfio_open_at("03:00.0", sys_root, dev_root, &d);
	cr_assert_eq(rc, -EPROTO, "rc %d: %s", rc, d ? d->err : "");
	cr_assert(strstr(d->err, "not a VFIO container") != NULL, "%s", d->err);
	d->ops->close(d);
}

Test(vfio_open, device_on_mlx5_core_is_ebusy_through_open, .fini = teardown_tree)
{
	struct shim_dev *d = NULL;
	fake_tree("mlx5_core", 1);
	cr_assert_eq(shim_vfio_open_at("03:00.0", sys_root, dev_root, &d), -EBUSY);
	cr_assert(strstr(d->err, "bound to mlx5_core") != NULL, "%s", d->err);
	d->ops->close(d);
}

Test(vfio_open, device_without_iommu_group_is_enodev_iommu_off, .fini = teardown_tree)
{
	struct shim_dev *d = NULL;
	fake_tree("mlx5_core", 0);
	cr_assert_eq(shim_vfio_open_at("03:00.0", sys_root, dev_root, &d), -ENODEV);
	cr_assert(strstr(d->err, "IOMMU is off") != NULL, "%s", d->err);
	d->ops->close(d);
}

Test(vfio_open, ops_table_is_complete_with_scheme_vfio)
{
	cr_assert_str_eq(shim_vfio_ops.scheme, "vfio");
	cr_assert_not_null(shim_vfio_ops.open);
	cr_assert_not_null(shim_vfio_ops.close);
	cr_assert_not_null(shim_vfio_ops.reset);
	cr_assert_not_null(shim_vfio_ops.bar);
	cr_assert_not_null(shim_vfio_ops.dma_alloc);
	cr_assert_not_null(shim_vfio_ops.dma_free);
	cr_assert_not_null(shim_vfio_ops.dma_pin);
	cr_assert_not_null(shim_vfio_ops.dma_unpin);
	cr_assert_not_null(shim_vfio_ops.irq_fd);
	cr_assert_not_null(shim_vfio_ops.irq_count);
}
