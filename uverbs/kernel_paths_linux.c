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
 * openat and openat64 answer an absolute path as open() does (hwloc's way in: see
 * "directories" below); lstat, fstatat, statx and the xattr queries answer what ls,
 * find and tar ask (see "the other stat flavours" at the end).  Not answered: the
 * pre-2.33 glibc entry points (__xstat), which only binaries built against an older
 * glibc call.
 */
/* <fcntl.h> under _FORTIFY_SOURCE defines open() as an inline wrapper, which would
 * clash with the definition below. */
#undef _FORTIFY_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
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

static bool uv_kp_stat_dir(const char *path, struct stat *st);
static bool uv_kp_stat_any(const char *path, bool follow, struct stat *st);
static void uv_kp_to_stat64(const struct stat *s, struct stat64 *st);
static bool uv_kp_absolute(const char *path);

static void uv_kp_copy_stat(const struct stat *s, struct stat *st)
{
	*st = *s;
}

/* stat, lstat and their 64-bit twins: our paths answered (follow: stat, not lstat),
 * every other path passed on to libc's.  On LP64 Linux struct stat64 and struct stat
 * are the same layout (glibc declares stat64 separately for 32-bit ABIs); a 32-bit
 * build answers through stat64's own fields (uv_kp_to_stat64). */
#define UV_KP_STAT_AS(name, stat_t, follow, fill)                                          \
	UV_EXPORT int name(const char *path, stat_t *st)                                   \
	{                                                                                  \
		static void *next;                                                         \
		struct stat s;                                                             \
		if (uv_kp_stat_any(path, follow, &s)) {                                    \
			fill(&s, st);                                                      \
			return 0;                                                          \
		}                                                                          \
		int (*f)(const char *, stat_t *) = (int (*)(const char *, stat_t *))uv_kp_next(&next, #name); \
		return f ? f(path, st) : uv_minus1(ENOSYS);                                \
	}
UV_KP_STAT_AS(stat, struct stat, true, uv_kp_copy_stat)
UV_KP_STAT_AS(stat64, struct stat64, true, uv_kp_to_stat64)
UV_KP_STAT_AS(lstat, struct stat, false, uv_kp_copy_stat)
UV_KP_STAT_AS(lstat64, struct stat64, false, uv_kp_to_stat64)

/* fstatat and fstatat64: absolute paths of ours only (a path relative to a directory
 * descriptor is passed on). */
#define UV_KP_FSTATAT_AS(name, stat_t, fill)                                               \
	UV_EXPORT int name(int dirfd, const char *path, stat_t *st, int flags)             \
	{                                                                                  \
		static void *next;                                                         \
		struct stat s;                                                             \
		if (uv_kp_absolute(path) && uv_kp_stat_any(path, !(flags & AT_SYMLINK_NOFOLLOW), &s)) { \
			fill(&s, st);                                                      \
			return 0;                                                          \
		}                                                                          \
		int (*f)(int, const char *, stat_t *, int) =                               \
			(int (*)(int, const char *, stat_t *, int))uv_kp_next(&next, #name); \
		return f ? f(dirfd, path, st, flags) : uv_minus1(ENOSYS);                  \
	}
UV_KP_FSTATAT_AS(fstatat, struct stat, uv_kp_copy_stat)
UV_KP_FSTATAT_AS(fstatat64, struct stat64, uv_kp_to_stat64)

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
	char val[192];
	int len = ibv_read_sysfs_file(d->ibdev.ibdev_path, file, val, sizeof(val) - 1);
	if (len < 0)
		return uv_minus1(ENOENT);
	if (flags & O_DIRECTORY)   /* a file, not a directory; one that is not there: ENOENT */
		return uv_minus1(ENOTDIR);
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

static int uv_kp_open_dir(const char *path, int flags);

/* open(2) of a path this library answers: true, and *fd is the descriptor or -1 with
 * errno set.  Anything else: false, and libc opens it. */
static bool uv_kp_open_ours(const char *path, int flags, int *fd)
{
	const char *file;
	struct uv_dev *d;
	if ((*fd = uv_kp_open_dir(path, flags)) != -2)
		return true;
	if ((d = uv_kp_sysfs(path, &file))) {
		*fd = uv_kp_open_sysfs(d, file, flags);
		return true;
	}
	if (path && !strcmp(path, UV_RCM_PATH)) {
		*fd = uv_rcm_open(flags);   /* librdmacm's event channel: rdma_cm.c */
		return true;
	}
	return false;
}

static int uv_kp_open(void **next, const char *name, const char *path, int flags, mode_t mode)
{
	int fd;
	if (uv_kp_open_ours(path, flags, &fd))
		return fd;
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

/* glibc declares the path arguments nonnull; the kernel answers EFAULT for NULL, which
 * libc's definition below still gives. */
static bool uv_kp_absolute(const char *path)
{
	return path && path[0] == '/';
}

/* openat(2) and openat64, which hwloc reads sysfs with (hwloc 2.9 src/topology-linux.c,
 * hwloc_openat() and hwloc_opendirat(): openat(root_fd, path, ...), root_fd -1 and the
 * path absolute when the file-system root is "/").  Only an absolute path is ours: the
 * kernel ignores the directory descriptor for one, so the answer is the one open()
 * gives.  A relative path (below a HWLOC_FSROOT copy, say) is libc's. */
#define UV_KP_OPENAT_AS(name)                                                         \
	UV_EXPORT int name(int dirfd, const char *path, int flags, ...)               \
	{                                                                             \
		static void *next;                                                    \
		va_list ap;                                                           \
		va_start(ap, flags);                                                  \
		mode_t mode = uv_kp_mode(flags, ap);                                  \
		va_end(ap);                                                           \
		int fd;                                                               \
		if (uv_kp_absolute(path) && uv_kp_open_ours(path, flags, &fd))        \
			return fd;                                                    \
		int (*f)(int, const char *, int, ...) =                               \
			(int (*)(int, const char *, int, ...))uv_kp_next(&next, #name); \
		return f ? f(dirfd, path, flags, mode) : uv_minus1(ENOSYS);           \
	}
UV_KP_OPENAT_AS(openat)
UV_KP_OPENAT_AS(openat64)

/* ------------------------------------------------------------------ directories */
/* The directories the kernel's RDMA core would show for our devices (Linux
 * drivers/infiniband/core/sysfs.c: the class directory holds one entry per device, each
 * a symbolic link to the device; a device directory holds its attribute files and
 * ports/, which holds one directory per port).  Programs that look before they open:
 *
 *  - Open MPI 4.1's openib BTL (opal/mca/common/verbs/common_verbs_basics.c,
 *    opal_common_verbs_check_basics()): stat() of "<ibv_get_sysfs_path()>/class/
 *    infiniband" must give a directory, or the BTL gives up before its first verbs
 *    call, without a word;
 *  - libibumad (ibstat: libibumad/umad.c, umad_get_cas_names(), get_ca(), get_port())
 *    lists the class directory and a device's ports/ and ports/1/pkeys/ with scandir()
 *    and opendir(), then reads the files below (query.c answers them);
 *  - hwloc 2.9 (lstopo; src/topology-linux.c, hwloc_linuxfs_lookup_infiniband_class())
 *    reads sysfs relative to its root descriptor, -1 with absolute paths for "/":
 *    openat(-1, "/sys/class/infiniband", O_RDONLY | O_DIRECTORY) then fdopendir
 *    (hwloc_opendirat()) and readdir; readlinkat() of each entry, whose target places the
 *    device (hwloc_linuxfs_find_osdev_parent(): under the PCI function the link names,
 *    dropped when it is under devices/virtual unless HWLOC_VIRTUAL_LINUX_OSDEV is set);
 *    then openat() and read() of node_guid, sys_image_guid and ports/<n>/{state, lid,
 *    lid_mask_count, gids/<i>} (hwloc_linuxfs_infiniband_class_fillinfos()).
 *
 * Answered: stat/stat64 of /sys/class/infiniband, of each device's directory, its
 * ports/, ports/1/, ports/1/pkeys/, ports/1/gids/, ports/1/gid_attrs/ and
 * ports/1/gid_attrs/types/ (a directory, mode 0755), device/ and device/net/ (with the
 * netdev's name in it) when the device's address is on a netdev (uv_kp_netdev()), and
 * opendir/readdir/readdir_r/rewinddir/telldir/seekdir/closedir (and the 64 forms) and
 * scandir of each: our devices, a device's files and ports/, port 1, the port's files,
 * and its P_Key, GID and GID-type entries; open/openat of each directory (a descriptor
 * that fdopendir turns into the same listing) and readlink/readlinkat of each device's
 * class entry (uv_kp_class_link()).  The class directory is ours only while the
 * machine has none of its own (no kernel RDMA device): a machine that has one keeps its
 * listing, and our devices' own directories are still answered.  Not answered:
 * getdents (glibc's opendir/readdir call it inside libc, never through our names) and
 * a path relative to a directory descriptor (find's fts walks with those), which these
 * programs do not use on these paths. */
enum uv_kp_dir { UV_KP_NONE, UV_KP_CLASS, UV_KP_DEV, UV_KP_PORTS, UV_KP_PORT, UV_KP_PKEYS, UV_KP_GIDS,
		 UV_KP_GID_ATTRS, UV_KP_GID_TYPES, UV_KP_DEVICE, UV_KP_NET };

/* The network interface of a device: the kernel's netdev (found with getifaddrs(),
 * which asks the kernel over netlink) that carries one of the device's IPv4 RoCE v2
 * addresses (the IPv4-mapped GIDs of port 1), exactly.  A RoCE device's kernel driver
 * names its netdev under <ibdev_path>/device/net/ (Linux drivers/net/ethernet/mellanox/
 * mlx5/core: the PCI function's net/ directory), and rdma-core's pyverbs tests read
 * it there (tests/base.py, RDMATestCase.get_net_name(), then `ip addr show` of it).
 * An emulated NIC on a loopback address (127.x) has none: lo carries 127.0.0.1, not
 * the NIC's address, so it is not claimed.  *name is set when one is found. */
static bool uv_kp_netdev(struct uv_dev *d, char *name, size_t len)
{
	char v[64];
	uint32_t ips[8];
	unsigned nip = 0;
	/* An emulated NIC's address is its URI's ip= (hw/emu/config.c), read without
	 * bringing the device up: a child process (pyverbs' `ls`) would otherwise start an
	 * emulator of its own on the address its parent's already holds. */
	if (!strncmp(d->uri, "emu:", 4)) {
		const char *t = d->uri + 4;
		while (*t && !nip) {
			size_t tl = strcspn(t, ",");
			struct in_addr a;
			if (tl > 3 && tl - 3 < sizeof(v) && !strncmp(t, "ip=", 3)) {
				memcpy(v, t + 3, tl - 3);
				v[tl - 3] = 0;
				if (inet_pton(AF_INET, v, &a) == 1)
					ips[nip++] = a.s_addr;
			}
			t += tl + (t[tl] == ',');
		}
	}
	bool from_uri = nip > 0;
	if (!from_uri && ibv_read_sysfs_file(d->ibdev.ibdev_path, "node_type", v, sizeof(v)) < 0)
		return false;   /* brings the device up once, so gid_table_len is known */
	for (uint32_t i = 0; !from_uri && i < d->info.gid_table_len && i < 32 && nip < 8; i++) {
		char f[32];
		unsigned g[8];
		snprintf(f, sizeof(f), "ports/1/gids/%u", i);
		if (ibv_read_sysfs_file(d->ibdev.ibdev_path, f, v, sizeof(v)) < 0 ||
		    sscanf(v, "%x:%x:%x:%x:%x:%x:%x:%x", &g[0], &g[1], &g[2], &g[3], &g[4], &g[5], &g[6], &g[7]) != 8)
			continue;
		if (g[0] || g[1] || g[2] || g[3] || g[4] || g[5] != 0xffff)   /* ::ffff:a.b.c.d */
			continue;
		ips[nip++] = htonl((uint32_t)g[6] << 16 | g[7]);
	}
	struct ifaddrs *ifa = NULL;
	bool found = false;
	if (!nip || getifaddrs(&ifa))
		return false;
	for (struct ifaddrs *i = ifa; i && !found; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !i->ifa_name)
			continue;
		uint32_t a = ((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr.s_addr;
		for (unsigned k = 0; k < nip && !found; k++)
			if (a == ips[k] && strlen(i->ifa_name) < len) {
				snprintf(name, len, "%s", i->ifa_name);
				found = true;
			}
	}
	freeifaddrs(ifa);
	return found;
}

/* libc's stat for a path of ours: does the machine have this directory itself? */
static int uv_kp_libc_stat(const char *path, struct stat *st);

/* Which of our directories `path` names (trailing slashes allowed), with *dev set for
 * a device's. */
static enum uv_kp_dir uv_kp_dir_of(const char *path, struct uv_dev **dev)
{
	if (!path || strncmp(path, UV_KP_SYSFS_DIR, sizeof(UV_KP_SYSFS_DIR) - 2))
		return UV_KP_NONE;
	char p[256];
	size_t l = strlen(path);
	if (l >= sizeof(p))
		return UV_KP_NONE;
	memcpy(p, path, l + 1);
	while (l > 1 && p[l - 1] == '/')
		p[--l] = 0;
	if (!strcmp(p, "/sys/class/infiniband")) {
		struct stat st;
		unsigned n;
		uv_devices(&n);
		if (!n || uv_kp_libc_stat(p, &st) == 0)
			return UV_KP_NONE;
		return UV_KP_CLASS;
	}
	unsigned n;
	struct uv_dev *devs = uv_devices(&n);
	for (unsigned i = 0; i < n; i++) {
		const char *dir = devs[i].ibdev.ibdev_path;
		size_t dl = strlen(dir);
		if (strncmp(p, dir, dl))
			continue;
		*dev = &devs[i];
		if (!p[dl])
			return UV_KP_DEV;
		if (!strcmp(p + dl, "/ports"))
			return UV_KP_PORTS;
		if (!strcmp(p + dl, "/ports/1"))   /* one port per ConnectX function */
			return UV_KP_PORT;
		if (!strcmp(p + dl, "/ports/1/pkeys"))
			return UV_KP_PKEYS;
		if (!strcmp(p + dl, "/ports/1/gids"))
			return UV_KP_GIDS;
		if (!strcmp(p + dl, "/ports/1/gid_attrs"))
			return UV_KP_GID_ATTRS;
		if (!strcmp(p + dl, "/ports/1/gid_attrs/types"))
			return UV_KP_GID_TYPES;
		/* device/ holds net/ only, and is there only when net/ is */
		char nd[IF_NAMESIZE];
		if (!strcmp(p + dl, "/device") && uv_kp_netdev(*dev, nd, sizeof(nd)))
			return UV_KP_DEVICE;
		if (!strcmp(p + dl, "/device/net") && uv_kp_netdev(*dev, nd, sizeof(nd)))
			return UV_KP_NET;
	}
	return UV_KP_NONE;
}

static bool uv_kp_stat_dir(const char *path, struct stat *st)
{
	struct uv_dev *d = NULL;
	if (uv_kp_dir_of(path, &d) == UV_KP_NONE)
		return false;
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFDIR | 0755;   /* sysfs directories: drwxr-xr-x */
	st->st_nlink = 2;
	st->st_blksize = 4096;
	return true;
}

/* A listing of ours: a fixed set of names handed out by readdir.  The DIR pointers
 * given to the application are these, told apart from libc's by a registry, so that
 * every dirent call on every other directory goes to libc untouched. */
struct uv_kp_listing {
	/* first: glibc's dirfd() reads the descriptor at the start of its DIR
	 * (dirent/dirstream.h, struct __dirstream { int fd; __libc_lock_define (, lock) ...}),
	 * so dirfd() of ours gives fdopendir's descriptor, or -1 ("none", rather than a
	 * stranger's descriptor) for opendir's. */
	int fd;
	/* second, 0: where glibc keeps the DIR's lock.  Every call that takes it (readdir,
	 * readdir_r, rewinddir, telldir, seekdir, closedir and their 64 forms) is answered
	 * here for ours, but should one reach libc anyway it finds the lock free, not a word
	 * that looks held. */
	int glibc_lock;
	unsigned magic;
	size_t n, next;
	struct dirent ent;
	struct dirent64 ent64;
	char names[40][64];
	unsigned char types[40];
};
#define UV_KP_LISTING_MAGIC 0x75766473u
#define UV_KP_MAX_OPEN 16
static struct uv_kp_listing *uv_kp_open_dirs[UV_KP_MAX_OPEN];
static pthread_mutex_t uv_kp_dirs_lock = PTHREAD_MUTEX_INITIALIZER;
/* How many of uv_kp_open_dirs are set: while none is (nearly always), a dirent call
 * goes straight to libc without the lock.  Raised before a listing is handed out and
 * lowered after it is taken out, so a DIR of ours is never looked up while it reads 0. */
static unsigned uv_kp_nopen;

static void uv_kp_add(struct uv_kp_listing *l, const char *name, unsigned char type)
{
	if (l->n < sizeof(l->names) / sizeof(l->names[0])) {
		snprintf(l->names[l->n], sizeof(l->names[0]), "%s", name);
		l->types[l->n++] = type;
	}
}

/* The entries of one of our directories, "." and ".." first as getdents gives them. */
static void uv_kp_fill(struct uv_kp_listing *l, enum uv_kp_dir kind, struct uv_dev *d)
{
	uv_kp_add(l, ".", DT_DIR);
	uv_kp_add(l, "..", DT_DIR);
	if (kind == UV_KP_CLASS) {
		unsigned n;
		struct uv_dev *devs = uv_devices(&n);
		for (unsigned i = 0; i < n; i++)
			uv_kp_add(l, devs[i].ibdev.name, DT_LNK);
	} else if (kind == UV_KP_DEV) {
		/* the attribute files query.c answers (uv_sysfs_value), and ports/ */
		static const char *const files[] = { "board_id", "fw_ver", "hca_type", "hw_rev", "node_guid",
						     "node_type", "sys_image_guid" };
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
			uv_kp_add(l, files[i], DT_REG);
		uv_kp_add(l, "ports", DT_DIR);
		char nd[IF_NAMESIZE];
		if (uv_kp_netdev(d, nd, sizeof(nd)))   /* device/ holds net/ only */
			uv_kp_add(l, "device", DT_DIR);
	} else if (kind == UV_KP_PORTS) {
		uv_kp_add(l, "1", DT_DIR);
	} else if (kind == UV_KP_DEVICE) {
		/* the PCI function's directory: only its net/, when there is a netdev */
		char nd[IF_NAMESIZE];
		if (uv_kp_netdev(d, nd, sizeof(nd)))
			uv_kp_add(l, "net", DT_DIR);
	} else if (kind == UV_KP_NET) {
		char nd[IF_NAMESIZE];
		if (uv_kp_netdev(d, nd, sizeof(nd)))
			uv_kp_add(l, nd, DT_DIR);
	} else if (kind == UV_KP_PORT) {
		/* the port files query.c answers */
		static const char *const files[] = { "cap_mask", "lid", "lid_mask_count", "link_layer", "phys_state",
						     "rate", "sm_lid", "sm_sl", "state" };
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
			uv_kp_add(l, files[i], DT_REG);
		uv_kp_add(l, "gids", DT_DIR);
		uv_kp_add(l, "gid_attrs", DT_DIR);
		uv_kp_add(l, "pkeys", DT_DIR);
	} else if (kind == UV_KP_GID_ATTRS) {
		/* the GID types query.c answers; not ndevs/ (no netdev: see the top) */
		uv_kp_add(l, "types", DT_DIR);
	} else {
		/* one file per P_Key or GID table entry (ibv_query_pkey's or ibv_query_gid's
		 * table; the kernel lists every entry, set or not: reading an unset entry's
		 * type fails), the first 32 */
		if (!d->info.gid_table_len) {
			/* the tables' sizes are known once the device has been up (uv_dev_up()
			 * fills d->info, which stays when it goes down idle): one sysfs read
			 * brings it up (query.c, ibv_read_sysfs_file()) */
			char v[64];
			(void)ibv_read_sysfs_file(d->ibdev.ibdev_path, "node_type", v, sizeof(v));
		}
		uint32_t len = kind == UV_KP_PKEYS ? d->info.pkey_table_len : d->info.gid_table_len;
		for (uint32_t i = 0; i < len && i < 32; i++) {
			char n[12];
			snprintf(n, sizeof(n), "%u", i);
			uv_kp_add(l, n, DT_REG);
		}
	}
}

static struct uv_kp_listing *uv_kp_listing_of(void *dirp)
{
	struct uv_kp_listing *found = NULL;
	if (!__atomic_load_n(&uv_kp_nopen, __ATOMIC_ACQUIRE))
		return NULL;
	pthread_mutex_lock(&uv_kp_dirs_lock);
	for (int i = 0; i < UV_KP_MAX_OPEN; i++)
		if (uv_kp_open_dirs[i] && (void *)uv_kp_open_dirs[i] == dirp)
			found = uv_kp_open_dirs[i];
	pthread_mutex_unlock(&uv_kp_dirs_lock);
	return found;
}

/* A listing of directory `kind` handed out as a DIR; fd is the descriptor it owns (-1:
 * none), closed by closedir. */
static DIR *uv_kp_new_listing(enum uv_kp_dir kind, struct uv_dev *d, int fd)
{
	struct uv_kp_listing *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->fd = fd;
	l->magic = UV_KP_LISTING_MAGIC;
	uv_kp_fill(l, kind, d);
	pthread_mutex_lock(&uv_kp_dirs_lock);
	int slot = -1;
	for (int i = 0; i < UV_KP_MAX_OPEN && slot < 0; i++)
		if (!uv_kp_open_dirs[i])
			slot = i;
	if (slot >= 0) {
		uv_kp_open_dirs[slot] = l;
		__atomic_add_fetch(&uv_kp_nopen, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&uv_kp_dirs_lock);
	if (slot < 0) {
		free(l);
		errno = EMFILE;
		return NULL;
	}
	return (DIR *)(void *)l;
}

static DIR *uv_kp_opendir(const char *path)
{
	struct uv_dev *d = NULL;
	enum uv_kp_dir kind = uv_kp_dir_of(path, &d);
	if (kind == UV_KP_NONE)
		return NULL;
	return uv_kp_new_listing(kind, d, -1);
}

/* Descriptors of our directories, from open()/openat() (hwloc_opendirat(): openat(...,
 * O_RDONLY | O_DIRECTORY), then fdopendir).  Each is an empty anonymous file (memfd):
 * it has no entries of its own to give getdents, and fdopendir turns it into the
 * listing.  It is known by its descriptor number and its inode, so that a descriptor
 * closed and its number reused for another file is never taken for ours (close() is
 * not watched). */
struct uv_kp_dir_fd {
	int fd;
	dev_t st_dev;
	ino_t st_ino;
	enum uv_kp_dir kind;
	struct uv_dev *d;
};
static struct uv_kp_dir_fd uv_kp_dir_fds[UV_KP_MAX_OPEN];
static unsigned uv_kp_ndir_fds;   /* how many are set: while 0, fdopendir goes to libc */

/* Is entry e still the descriptor we made? */
static bool uv_kp_dir_fd_live(const struct uv_kp_dir_fd *e)
{
	struct stat st;
	return e->kind != UV_KP_NONE && fstat(e->fd, &st) == 0 && st.st_dev == e->st_dev &&
	       st.st_ino == e->st_ino;
}

/* open/openat of `path`: -2 if it is not one of our directories; else a descriptor
 * for fdopendir, or -1 with errno set (sysfs directories are read-only: EISDIR for a
 * write, as the kernel answers; EMFILE past UV_KP_MAX_OPEN at once). */
static int uv_kp_open_dir(const char *path, int flags)
{
	struct uv_dev *d = NULL;
	enum uv_kp_dir kind = uv_kp_dir_of(path, &d);
	if (kind == UV_KP_NONE)
		return -2;
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)))
		return uv_minus1(EISDIR);
	int fd = memfd_create("uverbs-sysfs-dir", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		int e = errno;
		close(fd);
		return uv_minus1(e);
	}
	pthread_mutex_lock(&uv_kp_dirs_lock);
	int slot = -1;
	for (int i = 0; i < UV_KP_MAX_OPEN && slot < 0; i++) {
		struct uv_kp_dir_fd *e = &uv_kp_dir_fds[i];
		if (e->kind != UV_KP_NONE && !uv_kp_dir_fd_live(e)) {   /* closed without fdopendir */
			e->kind = UV_KP_NONE;
			__atomic_sub_fetch(&uv_kp_ndir_fds, 1, __ATOMIC_RELEASE);
		}
		if (e->kind == UV_KP_NONE)
			slot = i;
	}
	if (slot >= 0) {
		uv_kp_dir_fds[slot] = (struct uv_kp_dir_fd){ .fd = fd, .st_dev = st.st_dev, .st_ino = st.st_ino,
							      .kind = kind, .d = d };
		__atomic_add_fetch(&uv_kp_ndir_fds, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&uv_kp_dirs_lock);
	if (slot < 0) {
		close(fd);
		return uv_minus1(EMFILE);
	}
	return fd;
}

/* fdopendir(3): a descriptor of ours becomes the listing, which owns it from then on
 * (closedir closes it, and dirfd gives it back); any other goes to libc. */
UV_EXPORT DIR *fdopendir(int fd)
{
	static void *next;
	if (__atomic_load_n(&uv_kp_ndir_fds, __ATOMIC_ACQUIRE)) {
		struct uv_kp_dir_fd mine = { .kind = UV_KP_NONE };
		pthread_mutex_lock(&uv_kp_dirs_lock);
		for (int i = 0; i < UV_KP_MAX_OPEN; i++) {
			struct uv_kp_dir_fd *e = &uv_kp_dir_fds[i];
			if (e->kind != UV_KP_NONE && e->fd == fd && uv_kp_dir_fd_live(e)) {
				mine = *e;
				e->kind = UV_KP_NONE;
				__atomic_sub_fetch(&uv_kp_ndir_fds, 1, __ATOMIC_RELEASE);
			}
		}
		pthread_mutex_unlock(&uv_kp_dirs_lock);
		if (mine.kind != UV_KP_NONE)
			return uv_kp_new_listing(mine.kind, mine.d, fd);
	}
	DIR *(*f)(int) = (DIR * (*)(int)) uv_kp_next(&next, "fdopendir");
	if (!f) {
		errno = ENOSYS;
		return NULL;
	}
	return f(fd);
}

/* What the class directory's entry for device d links to, as Linux's driver core makes
 * it (drivers/base/core.c, device_add_class_symlinks(): /sys/class/<class>/<name> is a
 * link to the device's directory; get_device_parent(): a class device's directory is
 * below its parent's, or under /sys/devices/virtual when it has none).  A function we
 * reach through VFIO has one: its PCI function, so the link names the PCI path and
 * hwloc (hwloc_linuxfs_find_osdev_parent(), which parses the PCI addresses in this
 * link) places the device under that function.  Any other (the emulated ConnectX, a
 * device behind uvd or the kext) has no PCI function on this machine's bus: it is a
 * software device, like Linux's rxe and siw, under virtual/.  Length, or -1. */
static int uv_kp_class_link(struct uv_dev *d, char *out, size_t cap)
{
	char bdf[64], pci[PATH_MAX];
	if (sscanf(d->uri, "vfio:%63[^,]", bdf) == 1) {
		char bus[128];
		snprintf(bus, sizeof(bus), "/sys/bus/pci/devices/%s", bdf);
		/* realpath's own readlink calls are glibc's internal ones, not ours */
		if (realpath(bus, pci) && !strncmp(pci, "/sys/devices/", 13))
			return snprintf(out, cap, "../../devices/%s/infiniband/%s", pci + 13, d->ibdev.name);
	}
	return snprintf(out, cap, "../../devices/virtual/infiniband/%s", d->ibdev.name);
}

/* readlink(2) of /sys/class/infiniband/<one of ours>: the link above (truncated to
 * `size`, without a NUL, as readlink gives it); true when answered. */
static bool uv_kp_readlink(const char *path, char *buf, size_t size, ssize_t *ret)
{
	if (!path || strncmp(path, UV_KP_SYSFS_DIR, sizeof(UV_KP_SYSFS_DIR) - 1))
		return false;
	unsigned n;
	struct uv_dev *devs = uv_devices(&n);
	for (unsigned i = 0; i < n; i++) {
		if (strcmp(path, devs[i].ibdev.ibdev_path))
			continue;
		char link[PATH_MAX + 64];
		int l = uv_kp_class_link(&devs[i], link, sizeof(link));
		if (l < 0 || (size_t)l >= sizeof(link)) {
			*ret = uv_minus1(ENAMETOOLONG);
			return true;
		}
		if (!size) {
			*ret = uv_minus1(EINVAL);
			return true;
		}
		size_t c = (size_t)l < size ? (size_t)l : size;
		memcpy(buf, link, c);
		*ret = (ssize_t)c;
		return true;
	}
	return false;
}

UV_EXPORT ssize_t readlink(const char *path, char *buf, size_t size)
{
	static void *next;
	ssize_t r;
	if (uv_kp_readlink(path, buf, size, &r))
		return r;
	ssize_t (*f)(const char *, char *, size_t) = (ssize_t (*)(const char *, char *, size_t))uv_kp_next(&next, "readlink");
	return f ? f(path, buf, size) : uv_minus1(ENOSYS);
}

/* readlinkat(2), which hwloc uses (hwloc_readlinkat()); an absolute path only, as openat. */
UV_EXPORT ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t size)
{
	static void *next;
	ssize_t r;
	if (uv_kp_absolute(path) && uv_kp_readlink(path, buf, size, &r))
		return r;
	ssize_t (*f)(int, const char *, char *, size_t) =
		(ssize_t (*)(int, const char *, char *, size_t))uv_kp_next(&next, "readlinkat");
	return f ? f(dirfd, path, buf, size) : uv_minus1(ENOSYS);
}

UV_EXPORT DIR *opendir(const char *path)
{
	static void *next;
	struct uv_dev *d = NULL;
	if (uv_kp_dir_of(path, &d) != UV_KP_NONE)
		return uv_kp_opendir(path);
	DIR *(*f)(const char *) = (DIR * (*)(const char *)) uv_kp_next(&next, "opendir");
	if (!f) {
		errno = ENOSYS;
		return NULL;
	}
	return f(path);
}

/* The next entry of listing l (its name, type and offset); false at the end. */
static bool uv_kp_next_entry(struct uv_kp_listing *l, const char **name, unsigned char *type, long *off)
{
	if (l->next >= l->n)
		return false;
	*name = l->names[l->next];
	*type = l->types[l->next];
	*off = (long)++l->next;
	return true;
}

UV_EXPORT struct dirent *readdir(DIR *dirp)
{
	static void *next;
	struct uv_kp_listing *l = uv_kp_listing_of(dirp);
	if (l) {
		const char *name;
		unsigned char type;
		long off;
		if (!uv_kp_next_entry(l, &name, &type, &off))
			return NULL;
		memset(&l->ent, 0, sizeof(l->ent));
		l->ent.d_ino = (ino_t)off;
		l->ent.d_off = off;
		l->ent.d_reclen = sizeof(l->ent);
		l->ent.d_type = type;
		snprintf(l->ent.d_name, sizeof(l->ent.d_name), "%s", name);
		return &l->ent;
	}
	struct dirent *(*f)(DIR *) = (struct dirent * (*)(DIR *)) uv_kp_next(&next, "readdir");
	return f ? f(dirp) : NULL;
}

UV_EXPORT struct dirent64 *readdir64(DIR *dirp)
{
	static void *next;
	struct uv_kp_listing *l = uv_kp_listing_of(dirp);
	if (l) {
		const char *name;
		unsigned char type;
		long off;
		if (!uv_kp_next_entry(l, &name, &type, &off))
			return NULL;
		memset(&l->ent64, 0, sizeof(l->ent64));
		l->ent64.d_ino = (ino64_t)off;
		l->ent64.d_off = off;
		l->ent64.d_reclen = sizeof(l->ent64);
		l->ent64.d_type = type;
		snprintf(l->ent64.d_name, sizeof(l->ent64.d_name), "%s", name);
		return &l->ent64;
	}
	struct dirent64 *(*f)(DIR *) = (struct dirent64 * (*)(DIR *)) uv_kp_next(&next, "readdir64");
	return f ? f(dirp) : NULL;
}

UV_EXPORT int closedir(DIR *dirp)
{
	static void *next;
	struct uv_kp_listing *l = uv_kp_listing_of(dirp);
	if (l) {
		pthread_mutex_lock(&uv_kp_dirs_lock);
		for (int i = 0; i < UV_KP_MAX_OPEN; i++)
			if (uv_kp_open_dirs[i] == l) {
				uv_kp_open_dirs[i] = NULL;
				__atomic_sub_fetch(&uv_kp_nopen, 1, __ATOMIC_RELEASE);
			}
		pthread_mutex_unlock(&uv_kp_dirs_lock);
		int rc = l->fd >= 0 ? close(l->fd) : 0;   /* fdopendir's descriptor is the DIR's */
		free(l);
		return rc;
	}
	int (*f)(DIR *) = (int (*)(DIR *))uv_kp_next(&next, "closedir");
	return f ? f(dirp) : uv_minus1(ENOSYS);
}

/* readdir_r(3) and readdir64_r: the listing's next entry copied into the caller's
 * struct dirent or dirent64 (the same fields; one macro for both). */
#define UV_KP_READDIR_R(l, entry, result, ino_type)                                   \
	do {                                                                          \
		const char *name_;                                                    \
		unsigned char type_;                                                  \
		long off_;                                                            \
		*(result) = NULL;                                                     \
		if (!uv_kp_next_entry((l), &name_, &type_, &off_))                    \
			return 0;                                                     \
		memset((entry), 0, sizeof(*(entry)));                                 \
		(entry)->d_ino = (ino_type)off_;                                      \
		(entry)->d_off = off_;                                                \
		(entry)->d_reclen = sizeof(*(entry));                                 \
		(entry)->d_type = type_;                                              \
		snprintf((entry)->d_name, sizeof((entry)->d_name), "%s", name_);      \
		*(result) = (entry);                                                  \
		return 0;                                                             \
	} while (0)

/* readdir_r(3) (deprecated, still called): the next entry copied into the caller's. */
UV_EXPORT int readdir_r(DIR *dirp, struct dirent *entry, struct dirent **result)
{
	static void *next;
	struct uv_kp_listing *l = uv_kp_listing_of(dirp);
	if (l)
		UV_KP_READDIR_R(l, entry, result, ino_t);
	int (*f)(DIR *, struct dirent *, struct dirent **) =
		(int (*)(DIR *, struct dirent *, struct dirent **))uv_kp_next(&next, "readdir_r");
	return f ? f(dirp, entry, result) : ENOSYS;
}

UV_EXPORT int readdir64_r(DIR *dirp, struct dirent64 *entry, struct dirent64 **result)
{
	static void *next;
	struct uv_kp_listing *l = uv_kp_listing_of(dirp);
	if (l)
		UV_KP_READDIR_R(l, entry, result, ino64_t);
	int (*f)(DIR *, struct dirent64 *, struct dirent64 **) =
		(int (*)(DIR *, struct dirent64 *, struct dirent64 **))uv_kp_next(&next, "readdir64_r");
	return f ? f(dirp, entry, result) : ENOSYS;
}

/* rewinddir/telldir/seekdir(3): a listing's position is the index of its next entry
 * (the d_off readdir gave the entry before it), as glibc's is the d_off of getdents. */
UV_EXPORT void rewinddir(DIR *dirp)
{
	static void *next;
	struct uv_kp_listing *l = uv_kp_listing_of(dirp);
	if (l) {
		l->next = 0;
		return;
	}
	void (*f)(DIR *) = (void (*)(DIR *))uv_kp_next(&next, "rewinddir");
	if (f)
		f(dirp);
}

UV_EXPORT long telldir(DIR *dirp)
{
	static void *next;
	struct uv_kp_listing *l = uv_kp_listing_of(dirp);
	if (l)
		return (long)l->next;
	long (*f)(DIR *) = (long (*)(DIR *))uv_kp_next(&next, "telldir");
	return f ? f(dirp) : uv_minus1(ENOSYS);
}

UV_EXPORT void seekdir(DIR *dirp, long loc)
{
	static void *next;
	struct uv_kp_listing *l = uv_kp_listing_of(dirp);
	if (l) {
		/* a position telldir never gave: the end, as a getdents offset past it reads */
		l->next = loc >= 0 && (size_t)loc <= l->n ? (size_t)loc : l->n;
		return;
	}
	void (*f)(DIR *, long) = (void (*)(DIR *, long))uv_kp_next(&next, "seekdir");
	if (f)
		f(dirp, loc);
}

/* scandir(3) over one of our listings: filter, then sort, as glibc's does. */
typedef int (*uv_kp_filter)(const struct dirent *);
typedef int (*uv_kp_compar)(const struct dirent **, const struct dirent **);
static int uv_kp_scandir(const char *path, struct dirent ***out, uv_kp_filter sel, uv_kp_compar cmp)
{
	struct uv_dev *d = NULL;
	enum uv_kp_dir kind = uv_kp_dir_of(path, &d);
	struct uv_kp_listing l = { .magic = UV_KP_LISTING_MAGIC };
	uv_kp_fill(&l, kind, d);
	struct dirent **v = calloc(l.n ? l.n : 1, sizeof(*v));
	if (!v)
		return uv_minus1(ENOMEM);
	int k = 0;
	for (size_t i = 0; i < l.n; i++) {
		struct dirent *e = calloc(1, sizeof(*e));
		if (!e) {
			while (k)
				free(v[--k]);
			free(v);
			return uv_minus1(ENOMEM);
		}
		e->d_ino = (ino_t)(i + 1);
		e->d_off = (long)(i + 1);
		e->d_reclen = sizeof(*e);
		e->d_type = l.types[i];
		snprintf(e->d_name, sizeof(e->d_name), "%s", l.names[i]);
		if (sel && !sel(e)) {
			free(e);
			continue;
		}
		v[k++] = e;
	}
	if (cmp)
		qsort(v, (size_t)k, sizeof(*v), (int (*)(const void *, const void *))cmp);
	*out = v;
	return k;
}

UV_EXPORT int scandir(const char *path, struct dirent ***out, uv_kp_filter sel, uv_kp_compar cmp)
{
	static void *next;
	struct uv_dev *d = NULL;
	if (uv_kp_dir_of(path, &d) != UV_KP_NONE)
		return uv_kp_scandir(path, out, sel, cmp);
	int (*f)(const char *, struct dirent ***, uv_kp_filter, uv_kp_compar) =
		(int (*)(const char *, struct dirent ***, uv_kp_filter, uv_kp_compar))uv_kp_next(&next, "scandir");
	return f ? f(path, out, sel, cmp) : uv_minus1(ENOSYS);
}

/* On LP64 Linux struct dirent64 and struct dirent are the same layout. */
_Static_assert(sizeof(struct dirent64) == sizeof(struct dirent), "dirent64 differs from dirent");
UV_EXPORT int scandir64(const char *path, struct dirent64 ***out, int (*sel)(const struct dirent64 *),
			int (*cmp)(const struct dirent64 **, const struct dirent64 **))
{
	static void *next;
	struct uv_dev *d = NULL;
	if (uv_kp_dir_of(path, &d) != UV_KP_NONE)
		return uv_kp_scandir(path, (struct dirent ***)out, (uv_kp_filter)sel, (uv_kp_compar)cmp);
	int (*f)(const char *, struct dirent64 ***, int (*)(const struct dirent64 *),
		 int (*)(const struct dirent64 **, const struct dirent64 **)) =
		(int (*)(const char *, struct dirent64 ***, int (*)(const struct dirent64 *),
			 int (*)(const struct dirent64 **, const struct dirent64 **)))uv_kp_next(&next, "scandir64");
	return f ? f(path, out, sel, cmp) : uv_minus1(ENOSYS);
}

/* ------------------------------------------------------------------ the other stat flavours */
/* coreutils' ls (9.1, src/ls.c: do_statx()) looks at every name with statx(2),
 * AT_SYMLINK_NOFOLLOW for the names it lists and for a command-line name under -l;
 * find, cp and tar use lstat/fstatat.  These answer what stat() answers for our
 * paths, plus what only they can tell apart, as the kernel's sysfs shows it:
 *
 *  - /sys/class/infiniband/<dev> itself, not followed: a symbolic link (mode 0777, its
 *    size the target's length: readlink() below gives the target).  Followed (stat, or
 *    a trailing slash), our device's directory;
 *  - an attribute file of ours (one ibv_read_sysfs_file() answers): a regular file,
 *    mode 0444, size 4096 (sysfs gives every attribute a page, whatever it holds:
 *    fs/sysfs/file.c, sysfs_add_file_mode_ns(), PAGE_SIZE);
 *  - getxattr/lgetxattr of one of these: ENODATA (sysfs keeps no POSIX ACL; gnulib's
 *    file_has_acl(), which ls -l calls on every file that is not a link, takes ENODATA
 *    as "no ACL" and anything else as an error it prints).
 *
 * Only an absolute path is ours, as with openat (a descriptor-relative one is libc's);
 * the devices' nodes answer as stat() says. */

/* The device whose class entry is exactly `path` (no trailing slash), or NULL. */
static struct uv_dev *uv_kp_class_entry(const char *path)
{
	if (!path || strncmp(path, UV_KP_SYSFS_DIR, sizeof(UV_KP_SYSFS_DIR) - 1))
		return NULL;
	unsigned n;
	struct uv_dev *devs = uv_devices(&n);
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(path, devs[i].ibdev.ibdev_path))
			return &devs[i];
	return NULL;
}

/* Does one of our directories list `path` as a file (an unset GID's type, say, which
 * is there but cannot be read)? */
static bool uv_kp_listed_file(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[256];
	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return false;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = 0;
	struct uv_dev *d = NULL;
	enum uv_kp_dir kind = uv_kp_dir_of(dir, &d);
	if (kind == UV_KP_NONE)
		return false;
	struct uv_kp_listing *l = calloc(1, sizeof(*l));
	if (!l)
		return false;
	uv_kp_fill(l, kind, d);
	bool found = false;
	for (size_t i = 0; i < l->n && !found; i++)
		found = l->types[i] == DT_REG && !strcmp(l->names[i], slash + 1);
	free(l);
	return found;
}

/* stat of any path of ours (follow: a link is followed); false: not ours. */
static bool uv_kp_stat_any(const char *path, bool follow, struct stat *st)
{
	if (!path || (strncmp(path, UV_KP_DEV_DIR, sizeof(UV_KP_DEV_DIR) - 1) &&
		      strncmp(path, UV_KP_SYSFS_DIR, sizeof(UV_KP_SYSFS_DIR) - 2)))
		return false;   /* one comparison for every other path */
	struct uv_dev *d;
	if (!follow && (d = uv_kp_class_entry(path))) {
		char link[PATH_MAX + 64];
		int l = uv_kp_class_link(d, link, sizeof(link));
		memset(st, 0, sizeof(*st));
		st->st_mode = S_IFLNK | 0777;
		st->st_nlink = 1;
		st->st_size = l > 0 ? l : 0;
		st->st_blksize = 4096;
		return true;
	}
	if (uv_kp_stat_node(path, st) || uv_kp_stat_dir(path, st))
		return true;
	const char *file;
	char val[192];
	if ((d = uv_kp_sysfs(path, &file)) &&
	    (ibv_read_sysfs_file(d->ibdev.ibdev_path, file, val, sizeof(val) - 1) >= 0 ||
	     uv_kp_listed_file(path))) {
		memset(st, 0, sizeof(*st));
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = 4096;
		st->st_blksize = 4096;
		return true;
	}
	return false;
}

/* struct stat64 is struct stat's layout on LP64; filled field by field all the same. */
static void uv_kp_to_stat64(const struct stat *s, struct stat64 *st)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = s->st_mode;
	st->st_nlink = s->st_nlink;
	st->st_rdev = s->st_rdev;
	st->st_size = s->st_size;
	st->st_blksize = s->st_blksize;
}

/* statx(2) (glibc 2.28's wrapper, which ls calls): the same answer in struct statx,
 * with stx_mask saying which fields are filled (STATX_BASIC_STATS; times and inode
 * are 0, as the answers above give them). */
UV_EXPORT int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *stx)
{
	static void *next;
	struct stat s;
	if (uv_kp_absolute(path) && uv_kp_stat_any(path, !(flags & AT_SYMLINK_NOFOLLOW), &s)) {
		/* glibc declares stx nonnull; NULL still gets the kernel's EFAULT, not a crash */
		struct statx *volatile out = stx;
		if (!out)
			return uv_minus1(EFAULT);
		memset(stx, 0, sizeof(*stx));
		stx->stx_mask = STATX_BASIC_STATS;
		stx->stx_blksize = (uint32_t)s.st_blksize;
		stx->stx_nlink = (uint32_t)s.st_nlink;
		stx->stx_mode = (uint16_t)s.st_mode;
		stx->stx_size = (uint64_t)s.st_size;
		stx->stx_rdev_major = major(s.st_rdev);
		stx->stx_rdev_minor = minor(s.st_rdev);
		return 0;
	}
	int (*f)(int, const char *, int, unsigned int, struct statx *) =
		(int (*)(int, const char *, int, unsigned int, struct statx *))uv_kp_next(&next, "statx");
	return f ? f(dirfd, path, flags, mask, stx) : uv_minus1(ENOSYS);
}

/* getxattr(2)/lgetxattr of a path of ours: no such attribute (ENODATA), since sysfs
 * keeps none; listxattr/llistxattr: an empty list. */
static bool uv_kp_xattr(const char *path, bool follow)
{
	struct stat s;
	return uv_kp_stat_any(path, follow, &s);
}

UV_EXPORT ssize_t getxattr(const char *path, const char *name, void *value, size_t size)
{
	static void *next;
	if (uv_kp_xattr(path, true))
		return uv_minus1(ENODATA);
	ssize_t (*f)(const char *, const char *, void *, size_t) =
		(ssize_t (*)(const char *, const char *, void *, size_t))uv_kp_next(&next, "getxattr");
	return f ? f(path, name, value, size) : uv_minus1(ENOSYS);
}

UV_EXPORT ssize_t lgetxattr(const char *path, const char *name, void *value, size_t size)
{
	static void *next;
	if (uv_kp_xattr(path, false))
		return uv_minus1(ENODATA);
	ssize_t (*f)(const char *, const char *, void *, size_t) =
		(ssize_t (*)(const char *, const char *, void *, size_t))uv_kp_next(&next, "lgetxattr");
	return f ? f(path, name, value, size) : uv_minus1(ENOSYS);
}

UV_EXPORT ssize_t listxattr(const char *path, char *list, size_t size)
{
	static void *next;
	if (uv_kp_xattr(path, true))
		return 0;
	ssize_t (*f)(const char *, char *, size_t) = (ssize_t (*)(const char *, char *, size_t))uv_kp_next(&next, "listxattr");
	return f ? f(path, list, size) : uv_minus1(ENOSYS);
}

UV_EXPORT ssize_t llistxattr(const char *path, char *list, size_t size)
{
	static void *next;
	if (uv_kp_xattr(path, false))
		return 0;
	ssize_t (*f)(const char *, char *, size_t) = (ssize_t (*)(const char *, char *, size_t))uv_kp_next(&next, "llistxattr");
	return f ? f(path, list, size) : uv_minus1(ENOSYS);
}

static int uv_kp_libc_stat(const char *path, struct stat *st)
{
	static void *next;
	int (*f)(const char *, struct stat *) = (int (*)(const char *, struct stat *))uv_kp_next(&next, "stat");
	return f ? f(path, st) : uv_minus1(ENOSYS);
}
