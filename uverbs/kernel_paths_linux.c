/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The kernel's files for our devices, answered from the library (Linux only).
 *
 * Some verbs clients do not stop at ibv_get_device_list: they also look at the files
 * the kernel's RDMA core makes for each device, which do not exist for ours (no kernel
 * driver owns an emulated or VFIO-bound ConnectX).  The one client this answers today
 * is UCX 1.13 (Debian's libucx0 1.13.1, used by ucx_info, ucx_perftest and Open MPI's
 * pml ucx).  What it does with a device from ibv_get_device_list, read from UCX's
 * v1.13.1 sources:
 *
 *  - src/uct/ib/base/ib_md.c, uct_ib_device_is_accessible(): stat() of
 *    "/dev/infiniband/<ibv_device.dev_name>" must succeed and give a character device,
 *    and access(R_OK | W_OK) of it must succeed; otherwise the device is dropped
 *    without a word (ucx_info -d lists no rc_verbs/ud_verbs, UCX_NET_DEVICES=uverbs0:1
 *    "is not available").  This is the one check that decides whether UCX uses us.
 *  - src/uct/ib/base/ib_device.c, uct_ib_device_query_gid_info(): open() and read()
 *    of "/sys/class/infiniband/<name>/ports/<port>/gid_attrs/types/<index>" for the
 *    GID's RoCE version ("RoCE v2" / "IB/RoCE v1").  Unreadable means RoCE v1: UCX
 *    would then advertise v1 in its addresses and skip its RoCE v2 handling (the
 *    subnet check of ib_iface.c, uct_ib_iface_init_roce_addr_prefix()) while our
 *    entries, and so our packets, are RoCE v2; the answer keeps the two in agreement.
 *  - Also read there, and left unanswered on purpose because UCX falls back cleanly:
 *    ".../device/local_cpus" (all CPUs local), ".../device/numa_node" (none),
 *    ".../ports/<port>/gid_attrs/ndevs/<index>" (no netdev: RoCE LAG level 1), and
 *    realpath() of ibv_device.ibdev_path (no PCI function: PCI bandwidth not limited).
 *
 * So this file defines stat, stat64, access and open, open64 (the names UCX's
 * libuct_ib.so and libucs.so import from glibc 2.36: stat@GLIBC_2.33, access, open),
 * exported through uverbs.map.  Each one answers only a path naming one of OUR devices
 * (the ibv_device.dev_name and ibdev_path that device.c gives them) and hands every
 * other path to the next definition, libc's, found with dlsym(RTLD_NEXT), so a process
 * that links libuverbs.so directly, or runs under LD_PRELOAD, sees no change for any
 * other file.  The answers mirror the kernel's:
 *
 *  - the node: a character device, mode 0666, major 231 and minor 192 + index (Linux
 *    drivers/infiniband/core/uverbs_main.c: uverbs_devnode() sets mode 0666;
 *    IB_UVERBS_MAJOR, IB_UVERBS_BASE_MINOR); access() grants read and write, not
 *    execute.  Opening the node is not answered: nothing of ours needs the kernel's
 *    command channel, and libuverbs itself never opens it.
 *  - a sysfs file: what ibv_read_sysfs_file() answers for it (query.c), with the
 *    trailing newline sysfs adds, in an anonymous in-memory file (memfd) opened
 *    read-only; a file the device does not have is ENOENT, a write open EACCES.
 *
 * Not answered: the other stat flavours (lstat, fstatat, statx) and openat, which no
 * client of ours uses on these paths, and the pre-2.33 glibc entry points (__xstat),
 * which only binaries built against an older glibc call.
 */
/* <fcntl.h> under _FORTIFY_SOURCE defines open() as an inline wrapper, which would
 * clash with the definition below. */
#undef _FORTIFY_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "uverbs/uv.h"

/* rdma-core's infiniband/driver.h; query.c defines it. */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);

#define UV_KP_DEV_DIR "/dev/infiniband/"
#define UV_KP_SYSFS_DIR "/sys/class/infiniband/"
/* drivers/infiniband/core/uverbs_main.c: IB_UVERBS_MAJOR, IB_UVERBS_BASE_MINOR */
#define UV_KP_UVERBS_MAJOR 231
#define UV_KP_UVERBS_BASE_MINOR 192

/* The device whose node is `path` ("/dev/infiniband/<dev_name>"), or NULL.  The
 * device list is only consulted for paths under /dev/infiniband/, so that every other
 * stat() or access() costs one string comparison. */
static struct uv_dev *uv_kp_node(const char *path)
{
	if (!path || strncmp(path, UV_KP_DEV_DIR, sizeof(UV_KP_DEV_DIR) - 1))
		return NULL;
	const char *name = path + sizeof(UV_KP_DEV_DIR) - 1;
	unsigned n;
	struct uv_dev *devs = uv_devices(&n);
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(name, devs[i].ibdev.dev_name))
			return &devs[i];
	return NULL;
}

/* The device whose sysfs directory (ibdev_path) holds `path`, with *file set to the
 * part below it ("ports/1/gid_attrs/types/0"), or NULL. */
static struct uv_dev *uv_kp_sysfs(const char *path, const char **file)
{
	if (!path || strncmp(path, UV_KP_SYSFS_DIR, sizeof(UV_KP_SYSFS_DIR) - 1))
		return NULL;
	unsigned n;
	struct uv_dev *devs = uv_devices(&n);
	for (unsigned i = 0; i < n; i++) {
		const char *dir = devs[i].ibdev.ibdev_path;
		size_t l = strlen(dir);
		if (!strncmp(path, dir, l) && path[l] == '/' && path[l + 1]) {
			*file = path + l + 1;
			return &devs[i];
		}
	}
	return NULL;
}

/* libc's definition of `name`, looked up once (the pointer is the same for every
 * thread, so a race only looks it up twice). */
static void *uv_kp_next(void **slot, const char *name)
{
	void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!f) {
		f = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, f, __ATOMIC_RELEASE);
	}
	return f;
}

/* stat(2) of a device node this library stands for: true, and *st says what the
 * kernel's character device would (uverbs major, the device's minor, mode 0666).
 * Anything else: false, and libc answers. */
static bool uv_kp_stat_node(const char *path, struct stat *st)
{
	struct uv_dev *d = uv_kp_node(path);
	if (!d)
		return false;
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFCHR | 0666;
	st->st_nlink = 1;
	st->st_rdev = makedev(UV_KP_UVERBS_MAJOR, UV_KP_UVERBS_BASE_MINOR + d->index);
	st->st_blksize = 4096;
	return true;
}

UV_EXPORT int stat(const char *path, struct stat *st)
{
	static void *next;
	if (uv_kp_stat_node(path, st))
		return 0;
	int (*f)(const char *, struct stat *) = (int (*)(const char *, struct stat *))uv_kp_next(&next, "stat");
	return f ? f(path, st) : uv_minus1(ENOSYS);
}

/* On LP64 Linux struct stat64 and struct stat are the same layout (glibc declares
 * stat64 separately for 32-bit ABIs); a 32-bit build answers through stat64's own
 * fields below. */
UV_EXPORT int stat64(const char *path, struct stat64 *st)
{
	static void *next;
	struct stat s;
	if (!uv_kp_stat_node(path, &s)) {
		int (*f)(const char *, struct stat64 *) =
			(int (*)(const char *, struct stat64 *))uv_kp_next(&next, "stat64");
		return f ? f(path, st) : uv_minus1(ENOSYS);
	}
	memset(st, 0, sizeof(*st));
	st->st_mode = s.st_mode;
	st->st_nlink = s.st_nlink;
	st->st_rdev = s.st_rdev;
	st->st_blksize = s.st_blksize;
	return 0;
}

UV_EXPORT int access(const char *path, int mode)
{
	static void *next;
	if (uv_kp_node(path)) {
		if (mode & X_OK)     /* mode 0666: read and write for all, no execute */
			return uv_minus1(EACCES);
		return 0;
	}
	int (*f)(const char *, int) = (int (*)(const char *, int))uv_kp_next(&next, "access");
	if (!f)
		return uv_minus1(ENOSYS);
	return f(path, mode);
}

/* A read-only descriptor holding `file` of device `d` as sysfs shows it, or -1 with
 * errno set. */
static int uv_kp_open_sysfs(struct uv_dev *d, const char *file, int flags)
{
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)))
		return uv_minus1(EACCES);
	if (flags & O_DIRECTORY)
		return uv_minus1(ENOTDIR);
	char val[192];
	int len = ibv_read_sysfs_file(d->ibdev.ibdev_path, file, val, sizeof(val) - 1);
	if (len < 0)
		return uv_minus1(ENOENT);
	val[len++] = '\n';
	int fd = memfd_create("uverbs-sysfs", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
	if (fd < 0)
		return -1;
	if (pwrite(fd, val, (size_t)len, 0) != len) {
		int e = errno ? errno : EIO;
		close(fd);
		return uv_minus1(e);
	}
	return fd;
}

static int uv_kp_open(void **next, const char *name, const char *path, int flags, mode_t mode)
{
	const char *file;
	struct uv_dev *d = uv_kp_sysfs(path, &file);
	if (d)
		return uv_kp_open_sysfs(d, file, flags);
	if (path && !strcmp(path, UV_RCM_PATH))
		return uv_rcm_open(flags);   /* librdmacm's event channel: rdma_cm.c */
	int (*f)(const char *, int, ...) = (int (*)(const char *, int, ...))uv_kp_next(next, name);
	if (!f)
		return uv_minus1(ENOSYS);
	return f(path, flags, mode);
}

/* open(2)'s third argument is read only when the flags create a file. */
static mode_t uv_kp_mode(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

/* open and open64 differ only in the libc definition they hand other paths to. */
#define UV_KP_OPEN_AS(name)                                          \
	UV_EXPORT int name(const char *path, int flags, ...)         \
	{                                                            \
		static void *next;                                   \
		va_list ap;                                          \
		va_start(ap, flags);                                 \
		mode_t mode = uv_kp_mode(flags, ap);                 \
		va_end(ap);                                          \
		return uv_kp_open(&next, #name, path, flags, mode);  \
	}
UV_KP_OPEN_AS(open)
UV_KP_OPEN_AS(open64)
