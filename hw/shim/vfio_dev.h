/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/shim/vfio_dev: the VFIO shim's entry points beyond struct shim_ops, for tests.
 * shim_vfio_ops.open is shim_vfio_open_at(args, "/sys", "/dev", out); tests point the
 * two roots at fake trees to reach each failure without a device.
 */
#ifndef UVERBS_HW_SHIM_VFIO_DEV_H
#define UVERBS_HW_SHIM_VFIO_DEV_H

#include "hw/shim/shim.h"

extern const struct shim_ops shim_vfio_ops;

int shim_vfio_open_at(const char *args, const char *sysfs_root, const char *dev_root,
		      struct shim_dev **out);

#endif
