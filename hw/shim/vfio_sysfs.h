/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/shim/vfio_sysfs: what sysfs says about a PCI function before VFIO is touched, so
 * that each way of not being ready gets its own message and remedy (not found, not a
 * ConnectX, IOMMU off, bound to another driver, group shared with a device still in use),
 * and the locked-memory check. The sysfs root is a parameter so that tests build a fake
 * tree (tests/shim/test_vfio_sysfs.c); the shim passes "/sys".
 */
#ifndef UVERBS_HW_SHIM_VFIO_SYSFS_H
#define UVERBS_HW_SHIM_VFIO_SYSFS_H

#include <stddef.h>
#include <stdint.h>

struct shim_vfio_sysfs {
	uint16_t vendor_id, device_id;
	char driver[64];      /* bound driver, "" if none */
	int group;            /* IOMMU group number */
};

/* Check, in this order, that <root>/bus/pci/devices/<bdf> exists (-ENODEV), is a
 * Mellanox function (-ENODEV), has an IOMMU group (-ENODEV: IOMMU off) and is bound to
 * vfio-pci (-EBUSY). Fills out as far as it got; err names the BDF and the remedy. */
int shim_vfio_sysfs_probe(const char *root, const char *bdf, struct shim_vfio_sysfs *out,
			  char *err, size_t errlen);

/* Devices of IOMMU group that keep it from being viable for VFIO: bound to a driver
 * other than vfio-pci, pci-stub or pcieport (the drivers that leave DMA to the owner:
 * Linux "PCI: portdrv: Set driver_managed_dma"). Writes "0000:03:00.1 (mlx5_core), ..."
 * sorted by address into list and returns how many, or a negative errno. */
int shim_vfio_group_blockers(const char *root, int group, char *list, size_t len);

/* RLIMIT_MEMLOCK against what the device needs: vfio_iommu_type1 charges every pinned
 * page to the locked-memory limit unless the process has CAP_IPC_LOCK. 0, or -ENOMEM
 * with the two numbers and `ulimit -l` in err. need 0 skips the check. */
int shim_vfio_memlock_check(uint64_t rlim_cur, int unlimited, int cap_ipc_lock, uint64_t need,
			    char *err, size_t errlen);

/* True if the CapEff line of a /proc/<pid>/status text has CAP_IPC_LOCK (bit 14). */
int shim_vfio_status_has_ipc_lock(const char *status_text);

#endif
