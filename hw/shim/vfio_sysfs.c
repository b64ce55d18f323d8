/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* sysfs checks and the locked-memory check before opening VFIO; see vfio_sysfs.h. */
#include "hw/shim/vfio_sysfs.h"
#include "hw/shim/vfio_pcicfg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* snprintf into a path buffer; a path that does not fit is an error, not a truncation. */
#define PATHF(buf, ...) (snprintf(buf, sizeof(buf), __VA_ARGS__) >= (int)sizeof(buf) ? -ENAMETOOLONG : 0)

#define ERR(...) do { if (err && errlen) snprintf(err, errlen, __VA_ARGS__); } while (0)

/* Last path component of a symlink's target ("../../../bus/pci/drivers/mlx5_core"). */
static int link_basename(const char *path, char *out, size_t outlen)
{
	char target[PATH_MAX];
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	const char *slash;

	if (n < 0)
		return -errno;
	target[n] = '\0';
	slash = strrchr(target, '/');
	/* A driver or group name longer than the caller's buffer is not one sysfs makes. */
	return snprintf(out, outlen, "%s", slash ? slash + 1 : target) < (int)outlen ? 0 : -ENAMETOOLONG;
}

static int read_hex16(const char *path, uint16_t *out)
{
	char buf[32];
	char *end;
	ssize_t n;
	unsigned long v;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	v = strtoul(buf, &end, 16);
	if (end == buf || v > 0xffff)
		return -EIO;
	*out = (uint16_t)v;
	return 0;
}

int shim_vfio_sysfs_probe(const char *root, const char *bdf, struct shim_vfio_sysfs *out,
			  char *err, size_t errlen)
{
	char dir[PATH_MAX], path[PATH_MAX], grp[32];
	struct stat st;
	char *end;
	long g;
	int rc;

	memset(out, 0, sizeof(*out));
	out->group = -1;
	if (PATHF(dir, "%s/bus/pci/devices/%s", root, bdf) < 0) {
		ERR("vfio: sysfs path for %s too long", bdf);
		return -ENAMETOOLONG;
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		ERR("vfio: PCI device %s not found (no %s); `lspci -D -d 15b3:` lists ConnectX functions",
		    bdf, dir);
		return -ENODEV;
	}
	rc = PATHF(path, "%s/vendor", dir);
	if (rc == 0)
		rc = read_hex16(path, &out->vendor_id);
	if (rc == 0)
		rc = PATHF(path, "%s/device", dir);
	if (rc == 0)
		rc = read_hex16(path, &out->device_id);
	if (rc < 0) {
		ERR("vfio: %s: cannot read its vendor/device ids from sysfs (%s)", bdf, strerror(-rc));
		return rc == -EIO ? -EIO : -ENODEV;
	}
	if (out->vendor_id != SHIM_PCI_VENDOR_MELLANOX) {
		ERR("vfio: %s is not a Mellanox/NVIDIA ConnectX (vendor 0x%04x device 0x%04x; "
		    "uverbs drives vendor 0x15b3 only)", bdf, out->vendor_id, out->device_id);
		return -ENODEV;
	}
	if (PATHF(path, "%s/iommu_group", dir) < 0 || link_basename(path, grp, sizeof(grp)) < 0) {
		ERR("vfio: %s has no IOMMU group: the IOMMU is off. Enable VT-d/AMD-Vi in the firmware "
		    "setup and boot with intel_iommu=on (Intel; AMD has amd_iommu on by default), "
		    "then run tools/vfio-bind %s", bdf, bdf);
		return -ENODEV;
	}
	g = strtol(grp, &end, 10);
	if (end == grp || *end != '\0' || g < 0 || g > INT_MAX) {
		ERR("vfio: %s: IOMMU group link names '%s', not a group number", bdf, grp);
		return -EIO;
	}
	out->group = (int)g;
	if (PATHF(path, "%s/driver", dir) < 0 || link_basename(path, out->driver, sizeof(out->driver)) < 0)
		out->driver[0] = '\0';
	if (strcmp(out->driver, "vfio-pci") != 0) {
		if (out->driver[0])
			ERR("vfio: %s is bound to %s, not vfio-pci: run tools/vfio-bind %s "
			    "(tools/vfio-bind --restore %s gives it back to mlx5_core)", bdf, out->driver, bdf, bdf);
		else
			ERR("vfio: %s is not bound to any driver (vfio-pci needed): run tools/vfio-bind %s", bdf, bdf);
		return -EBUSY;
	}
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int shim_vfio_group_blockers(const char *root, int group, char *list, size_t len)
{
	char dir[PATH_MAX], path[PATH_MAX], drv[64];
	char **names = NULL;
	size_t n = 0, cap = 0, used = 0;
	struct dirent *de;
	int count = 0;
	DIR *d;

	if (list && len)
		list[0] = '\0';
	if (PATHF(dir, "%s/kernel/iommu_groups/%d/devices", root, group) < 0)
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap ? cap * 2 : 8) * sizeof(*names));
			if (!nn)
				break;
			names = nn;
			cap = cap ? cap * 2 : 8;
		}
		names[n] = strdup(de->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		if (PATHF(path, "%s/%s/driver", dir, names[i]) < 0 || link_basename(path, drv, sizeof(drv)) < 0)
			drv[0] = '\0';
		if (drv[0] && strcmp(drv, "vfio-pci") != 0 && strcmp(drv, "pci-stub") != 0 &&
		    strcmp(drv, "pcieport") != 0) {
			if (list && used < len) {
				int w = snprintf(list + used, len - used, "%s%s (%s)", count ? ", " : "", names[i], drv);
				used += w > 0 ? (size_t)w : 0;
			}
			count++;
		}
		free(names[i]);
	}
	free(names);
	return count;
}

int shim_vfio_memlock_check(uint64_t rlim_cur, int unlimited, int cap_ipc_lock, uint64_t need,
			    char *err, size_t errlen)
{
	if (need == 0 || unlimited || cap_ipc_lock || rlim_cur >= need)
		return 0;
	ERR("vfio: locked-memory limit (RLIMIT_MEMLOCK) is %llu KiB but the device needs at least "
	    "%llu KiB pinned (firmware pages, queues, registered memory): raise it with "
	    "`ulimit -l unlimited` or a memlock line in /etc/security/limits.conf, or run with CAP_IPC_LOCK",
	    (unsigned long long)(rlim_cur >> 10), (unsigned long long)(need >> 10));
	return -ENOMEM;
}

int shim_vfio_status_has_ipc_lock(const char *status_text)
{
	const char *p = status_text ? strstr(status_text, "\nCapEff:") : NULL;
	unsigned long long caps;

	if (!p)
		return 0;
	p += strlen("\nCapEff:");
	if (sscanf(p, "%llx", &caps) != 1)
		return 0;
	return (caps >> 14) & 1;  /* CAP_IPC_LOCK is capability 14 (linux/capability.h) */
}
