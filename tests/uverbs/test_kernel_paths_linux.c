/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The kernel's files for our devices (uverbs/kernel_paths_linux.c), seen by a program
 * linked with libuverbs.so: its stat, access and open come first in the lookup order,
 * as they do under LD_PRELOAD.  The device node and the GID-type file are what UCX
 * checks before it uses a device; every other path must behave exactly as libc's.
 * Linux only (the file is; CMake leaves it out of a macOS build). */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "tests/uverbs/uv_test.h"

#define UT_KP_DEVS "emu:ip=127.45.0.2,emu:ip=127.45.0.3"

/* Everything open() gives for `path`, NUL-terminated; the length, or -errno. */
static ssize_t read_all(const char *path, char *out, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, out, cap - 1);
	int e = errno;
	close(fd);
	if (n < 0)
		return -e;
	out[n] = 0;
	return n;
}

Test(kernel_paths, device_node_is_a_character_device_readable_and_writable)
{
	struct stat st;

	ut_devices(UT_KP_DEVS);
	cr_assert_eq(ut_ndev, 2);
	for (int i = 0; i < 2; i++) {
		char path[96];
		snprintf(path, sizeof(path), "/dev/infiniband/%s", ut_list[i]->dev_name);
		cr_assert_eq(stat(path, &st), 0, "stat %s: %s", path, strerror(errno));
		cr_assert(S_ISCHR(st.st_mode), "%s mode 0%o", path, st.st_mode);
		cr_assert_eq(st.st_mode & 0777, 0666);
		/* Linux uverbs_main.c: IB_UVERBS_MAJOR 231, minors from IB_UVERBS_BASE_MINOR 192 */
		cr_assert_eq(major(st.st_rdev), 231);
		cr_assert_eq(minor(st.st_rdev), 192u + (unsigned)i);
		cr_assert_eq(access(path, R_OK | W_OK), 0, "access %s: %s", path, strerror(errno));
		cr_assert_eq(access(path, F_OK), 0);
		errno = 0;
		cr_assert_eq(access(path, X_OK), -1);
		cr_assert_eq(errno, EACCES);
	}
}

/* A node name that is not one of the listed devices is libc's business: the answer is
 * the kernel's own (the newfstatat system call, which nothing interposes), through
 * stat, fstatat, lstat and statx alike. */
Test(kernel_paths, paths_other_than_our_devices_are_answered_by_libc)
{
	static const char *const paths[] = { "/dev/infiniband/uverbs2", "/dev/infiniband/uverbs0x",
		"/dev/infiniband/", "/dev/null", "/sys/class/infiniband/uverbs2/ports/1/state",
		"/nonexistent/uverbs0" };
	ut_devices(UT_KP_DEVS);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct stat a, b;
		errno = 0;
		int ra = stat(paths[i], &a), ea = errno;
		errno = 0;
		int rb = (int)syscall(SYS_newfstatat, AT_FDCWD, paths[i], &b, 0), eb = rb ? errno : 0;
		if (rb)
			rb = -1;
		cr_assert_eq(ra, rb, "%s: stat %d, fstatat %d", paths[i], ra, rb);
		cr_assert_eq(ea, eb, "%s: errno %d vs %d", paths[i], ea, eb);
		if (!ra) {
			cr_assert_eq(a.st_mode, b.st_mode, "%s", paths[i]);
			cr_assert_eq(a.st_rdev, b.st_rdev, "%s", paths[i]);
			cr_assert_eq(a.st_ino, b.st_ino, "%s", paths[i]);
		}
		cr_assert_eq(access(paths[i], F_OK), faccessat(AT_FDCWD, paths[i], F_OK, 0), "%s", paths[i]);
		struct stat c;
		struct statx x;
		errno = 0;
		cr_assert_eq(fstatat(AT_FDCWD, paths[i], &c, 0), ra, "%s", paths[i]);
		cr_assert_eq(errno, ea, "%s", paths[i]);
		errno = 0;
		cr_assert_eq(statx(AT_FDCWD, paths[i], 0, STATX_BASIC_STATS, &x), ra, "%s", paths[i]);
		cr_assert_eq(errno, ea, "%s", paths[i]);
		if (!ra) {
			cr_assert_eq(x.stx_mode, a.st_mode, "%s", paths[i]);
			cr_assert_eq(x.stx_ino, a.st_ino, "%s", paths[i]);
		}
	}
}

/* UCX reads a GID's RoCE version from sysfs; our table's entries are RoCE v2. */
Test(kernel_paths, gid_type_file_says_roce_v2_for_each_valid_gid)
{
	char path[320], want[64], got[64];
	union ibv_gid gid;

	ut_devices(UT_KP_DEVS);
	struct ibv_context *ctx = ut_open(0);
	for (int idx = 0; idx < 2; idx++) {
		cr_assert_eq(ibv_query_gid(ctx, 1, idx, &gid), 0);
		snprintf(path, sizeof(path), "%s/ports/1/gid_attrs/types/%d", ut_list[0]->ibdev_path, idx);
		cr_assert_eq(read_all(path, got, sizeof(got)), 8, "%s: '%s'", path, got);
		cr_assert_str_eq(got, "RoCE v2\n");
		/* the same text as ibv_read_sysfs_file, plus sysfs's newline */
		cr_assert_gt(ibv_read_sysfs_file(ut_list[0]->ibdev_path, path + strlen(ut_list[0]->ibdev_path) + 1,
						 want, sizeof(want)), 0);
		strcat(want, "\n");
		cr_assert_str_eq(got, want);
	}
	/* the IPv4 entry's address, as sysfs prints a GID */
	snprintf(path, sizeof(path), "%s/ports/1/gids/1", ut_list[0]->ibdev_path);
	cr_assert_gt(read_all(path, got, sizeof(got)), 0);
	cr_assert_str_eq(got, "0000:0000:0000:0000:0000:ffff:7f2d:0002\n");
	ibv_close_device(ctx);
}

Test(kernel_paths, sysfs_file_the_device_does_not_have_is_enoent)
{
	char path[320], got[64];

	ut_devices(UT_KP_DEVS);
	snprintf(path, sizeof(path), "%s/device/numa_node", ut_list[1]->ibdev_path);
	cr_assert_eq(read_all(path, got, sizeof(got)), -ENOENT);
	snprintf(path, sizeof(path), "%s/ports/1/gid_attrs/ndevs/0", ut_list[1]->ibdev_path);
	cr_assert_eq(read_all(path, got, sizeof(got)), -ENOENT);
}

Test(kernel_paths, sysfs_file_opened_for_writing_is_eacces)
{
	char path[320];

	ut_devices(UT_KP_DEVS);
	snprintf(path, sizeof(path), "%s/ports/1/state", ut_list[0]->ibdev_path);
	errno = 0;
	cr_assert_eq(open(path, O_WRONLY), -1);
	cr_assert_eq(errno, EACCES);
}

/* open()'s optional mode argument reaches libc: a file created through it gets it. */
Test(kernel_paths, open_elsewhere_creates_with_the_callers_mode)
{
	char dir[] = "/tmp/uverbs-kp-XXXXXX", path[64];
	struct stat st;

	ut_devices(UT_KP_DEVS);
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	mode_t old = umask(0);
	int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0604);
	umask(old);
	cr_assert_geq(fd, 0, "open: %s", strerror(errno));
	cr_assert_eq(write(fd, "x", 1), 1);
	close(fd);
	cr_assert_eq(fstatat(AT_FDCWD, path, &st, 0), 0);
	cr_assert_eq(st.st_mode & 0777, 0604);
	cr_assert(S_ISREG(st.st_mode));
	unlink(path);
	rmdir(dir);
}

/* The directories (kernel_paths_linux.c, "directories"): what Open MPI's openib BTL
 * stats and libibumad lists, and hwloc opens with openat and lists with fdopendir.  The class
 * directory is ours only on a machine
 * without kernel RDMA devices (CI's); with them, libc's stays. */
static bool machine_has_rdma_class(void)
{
	/* asked before our devices exist: libc answers */
	return faccessat(AT_FDCWD, "/sys/class/infiniband", F_OK, 0) == 0;
}

static void list_dir(const char *path, char *out, size_t cap)
{
	DIR *d = opendir(path);
	cr_assert_not_null(d, "opendir %s: %s", path, strerror(errno));
	out[0] = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		snprintf(out + strlen(out), cap - strlen(out), "%s%s:%d", out[0] ? " " : "", e->d_name, e->d_type);
	cr_assert_eq(closedir(d), 0);
}

Test(kernel_paths, class_directory_is_a_directory_listing_our_devices)
{
	bool own = machine_has_rdma_class();
	ut_devices(UT_KP_DEVS);
	struct stat st;
	if (own) {
		cr_log_info("this machine has /sys/class/infiniband: its own listing stays");
		return;
	}
	cr_assert_eq(stat("/sys/class/infiniband", &st), 0, "stat: %s", strerror(errno));
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(stat("/sys/class/infiniband/", &st), 0);
	char got[512];
	list_dir("/sys/class/infiniband", got, sizeof(got));
	char want[256];
	snprintf(want, sizeof(want), ".:%d ..:%d %s:%d %s:%d", DT_DIR, DT_DIR, ut_list[0]->name, DT_LNK,
		 ut_list[1]->name, DT_LNK);
	cr_assert_str_eq(got, want);
	DIR *d = opendir("/sys/class/infiniband");
	cr_assert_not_null(d);
	cr_assert_eq(dirfd(d), -1, "dirfd of a listing that has no descriptor");
	cr_assert_eq(closedir(d), 0);
	struct dirent **v;
	int n = scandir("/sys/class/infiniband", &v, NULL, alphasort);
	cr_assert_eq(n, 4);
	cr_assert_str_eq(v[2]->d_name, ut_list[0]->name);
	cr_assert_str_eq(v[3]->d_name, ut_list[1]->name);
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

Test(kernel_paths, device_and_port_directories_list_the_files_that_open_answers)
{
	ut_devices(UT_KP_DEVS);
	char dir[320], got[1024];
	struct stat st;
	snprintf(dir, sizeof(dir), "%s", ut_list[1]->ibdev_path);
	cr_assert_eq(stat(dir, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	list_dir(dir, got, sizeof(got));
	cr_assert(strstr(got, "node_guid:8") && strstr(got, "fw_ver:8") && strstr(got, "ports:4"), "%s", got);
	/* every file listed opens (the names and open's answers agree) */
	char *save, *tok = strtok_r(got, " ", &save);
	for (; tok; tok = strtok_r(NULL, " ", &save)) {
		char name[64], path[400];
		int type;
		cr_assert_eq(sscanf(tok, "%63[^:]:%d", name, &type), 2);
		if (type != DT_REG)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		char buf[256];
		cr_assert_gt(read_all(path, buf, sizeof(buf)), 0, "%s", path);
	}
	snprintf(dir, sizeof(dir), "%s/ports", ut_list[1]->ibdev_path);
	list_dir(dir, got, sizeof(got));
	char want[64];
	snprintf(want, sizeof(want), ".:%d ..:%d 1:%d", DT_DIR, DT_DIR, DT_DIR);
	cr_assert_str_eq(got, want);
	snprintf(dir, sizeof(dir), "%s/ports/1", ut_list[1]->ibdev_path);
	cr_assert_eq(stat(dir, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	list_dir(dir, got, sizeof(got));
	cr_assert(strstr(got, "state:8") && strstr(got, "link_layer:8"), "%s", got);
	/* a port the device does not have, and a name beside ours, are libc's (absent) */
	snprintf(dir, sizeof(dir), "%s/ports/2", ut_list[1]->ibdev_path);
	cr_assert_eq(stat(dir, &st), -1);
	cr_assert_null(opendir("/sys/class/infiniband/uverbs99"));
	cr_assert_eq(errno, ENOENT);
}

Test(kernel_paths, other_directories_are_listed_by_libc)
{
	ut_devices(UT_KP_DEVS);
	char tmpl[] = "/tmp/uverbs-kp-XXXXXX";
	cr_assert_not_null(mkdtemp(tmpl));
	char f[64];
	snprintf(f, sizeof(f), "%s/a", tmpl);
	int fd = open(f, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	char got[256];
	list_dir(tmpl, got, sizeof(got));
	cr_assert(strstr(got, "a:8"), "%s", got);
	struct dirent **v;
	cr_assert_eq(scandir(tmpl, &v, NULL, alphasort), 3);
	for (int i = 0; i < 3; i++)
		free(v[i]);
	free(v);
	unlink(f);
	rmdir(tmpl);
}

/* rewinddir/telldir/seekdir/readdir_r on one of our listings: answered by the library,
 * never by glibc, whose versions take the lock in its own struct __dirstream (a DIR of
 * ours has none: before they were answered, they locked a word of ours). */
Test(kernel_paths, listing_rewinds_tells_and_seeks, .timeout = 20)
{
	bool own = machine_has_rdma_class();
	ut_devices(UT_KP_DEVS);
	if (own) {
		cr_log_info("this machine has /sys/class/infiniband: its own listing stays");
		return;
	}
	DIR *d = opendir("/sys/class/infiniband");
	cr_assert_not_null(d);
	cr_assert_str_eq(readdir(d)->d_name, ".");
	long at1 = telldir(d);
	cr_assert_eq(at1, 1);
	cr_assert_str_eq(readdir(d)->d_name, "..");
	cr_assert_str_eq(readdir(d)->d_name, ut_list[0]->name);
	long at3 = telldir(d);
	cr_assert_str_eq(readdir(d)->d_name, ut_list[1]->name);
	cr_assert_null(readdir(d));
	seekdir(d, at1);
	cr_assert_str_eq(readdir(d)->d_name, "..");
	seekdir(d, at3);
	cr_assert_str_eq(readdir(d)->d_name, ut_list[1]->name);
	rewinddir(d);
	cr_assert_eq(telldir(d), 0);
	struct dirent ent, *res = NULL;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	cr_assert_eq(readdir_r(d, &ent, &res), 0);
	cr_assert_eq(res, &ent);
	cr_assert_str_eq(ent.d_name, ".");
	seekdir(d, 4);
	cr_assert_eq(readdir_r(d, &ent, &res), 0);
	cr_assert_null(res, "past the last entry: the end");
#pragma GCC diagnostic pop
	cr_assert_eq(closedir(d), 0);
	/* libc's own listings still go to libc */
	d = opendir("/");
	cr_assert_not_null(d);
	cr_assert_not_null(readdir(d));
	long p = telldir(d);
	char name[256];
	snprintf(name, sizeof(name), "%s", readdir(d)->d_name);
	seekdir(d, p);
	cr_assert_str_eq(readdir(d)->d_name, name);
	rewinddir(d);
	cr_assert_not_null(readdir(d));
	cr_assert_eq(closedir(d), 0);
}

/* hwloc 2.9 (src/topology-linux.c) reads sysfs as hwloc_opendirat() and
 * hwloc_read_path_by_length() do: openat(-1, "/sys/...", O_RDONLY | O_DIRECTORY), then
 * fdopendir; openat(-1, file, O_RDONLY) and read.  Both answer our directories and files
 * as open() and opendir() do; the DIR owns the descriptor, and closedir closes it. */
static void list_dir_at(const char *path, char *out, size_t cap)
{
	int fd = openat(-1, path, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(fd, 0, "openat %s: %s", path, strerror(errno));
	DIR *d = fdopendir(fd);
	cr_assert_not_null(d, "fdopendir %s: %s", path, strerror(errno));
	cr_assert_eq(dirfd(d), fd);
	out[0] = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		snprintf(out + strlen(out), cap - strlen(out), "%s%s:%d", out[0] ? " " : "", e->d_name, e->d_type);
	cr_assert_eq(closedir(d), 0);
	errno = 0;
	cr_assert_eq(fcntl(fd, F_GETFD), -1, "closedir closed fdopendir's descriptor");
	cr_assert_eq(errno, EBADF);
}

Test(kernel_paths, openat_and_fdopendir_list_what_opendir_lists)
{
	bool own = machine_has_rdma_class();
	ut_devices(UT_KP_DEVS);
	char a[1024], b[1024], dir[320];
	if (!own) {
		list_dir("/sys/class/infiniband", a, sizeof(a));
		list_dir_at("/sys/class/infiniband", b, sizeof(b));
		cr_assert_str_eq(a, b);
	}
	static const char *const subs[] = { "", "/ports", "/ports/1", "/ports/1/pkeys" };
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		snprintf(dir, sizeof(dir), "%s%s", ut_list[1]->ibdev_path, subs[i]);
		list_dir(dir, a, sizeof(a));
		list_dir_at(dir, b, sizeof(b));
		cr_assert_str_eq(a, b, "%s", dir);
	}
	/* a file through openat reads as through open */
	char f[400], x[256], y[256];
	snprintf(f, sizeof(f), "%s/ports/1/state", ut_list[0]->ibdev_path);
	cr_assert_gt(read_all(f, x, sizeof(x)), 0);
	int fd = openat(AT_FDCWD, f, O_RDONLY);
	cr_assert_geq(fd, 0, "openat %s: %s", f, strerror(errno));
	ssize_t n = read(fd, y, sizeof(y) - 1);
	close(fd);
	cr_assert_gt(n, 0);
	y[n] = 0;
	cr_assert_str_eq(x, y);
	cr_assert_str_eq(y, "4: ACTIVE\n");
	/* a directory is not a file to write, and a file is not a directory */
	errno = 0;
	cr_assert_eq(openat(-1, ut_list[0]->ibdev_path, O_WRONLY), -1);
	cr_assert_eq(errno, EISDIR);
	errno = 0;
	cr_assert_eq(openat(-1, f, O_RDONLY | O_DIRECTORY), -1);
	cr_assert_eq(errno, ENOTDIR);
	/* one that is not ours is libc's */
	snprintf(dir, sizeof(dir), "%s/ports/2", ut_list[0]->ibdev_path);
	errno = 0;
	cr_assert_eq(openat(-1, dir, O_RDONLY | O_DIRECTORY), -1);
	cr_assert_eq(errno, ENOENT);
}

/* A descriptor of ours closed without fdopendir, its number then reused for another
 * directory: fdopendir of that number lists the other directory, not ours. */
Test(kernel_paths, fdopendir_of_a_reused_descriptor_is_libcs)
{
	ut_devices(UT_KP_DEVS);
	int fd = openat(-1, ut_list[0]->ibdev_path, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(close(fd), 0);
	int again = openat(-1, "/", O_RDONLY | O_DIRECTORY);
	cr_assert_eq(again, fd, "the lowest free number is reused");
	DIR *d = fdopendir(again);
	cr_assert_not_null(d);
	bool found_etc = false;
	struct dirent *e;
	while ((e = readdir(d)))
		found_etc |= !strcmp(e->d_name, "etc");
	cr_assert(found_etc, "fdopendir of / lists /");
	cr_assert_eq(closedir(d), 0);
}

/* hwloc places an OS device from the link /sys/class/infiniband/<name> points to
 * (hwloc_linuxfs_find_osdev_parent()): the emulated device is a software device
 * (Linux's devices/virtual, as rxe's); a vfio: device is under its PCI function. */
Test(kernel_paths, class_entry_links_to_virtual_or_to_the_pci_function)
{
	/* A vfio: device, named after any PCI function this machine has (its URI alone
	 * makes the list entry; nothing opens it here). */
	char bdf[256] = "", uris[400], real[512] = "", bus[300];
	DIR *pd = opendir("/sys/bus/pci/devices");
	struct dirent *e = NULL;
	while (pd && (e = readdir(pd)) && e->d_name[0] == '.')
		;
	if (e)
		snprintf(bdf, sizeof(bdf), "%s", e->d_name);
	if (pd)
		closedir(pd);
	snprintf(uris, sizeof(uris), "%s%s%s", UT_KP_DEVS, bdf[0] ? ",vfio:" : "", bdf);
	ut_devices(uris);
	char buf[512], want[700];
	ssize_t n = readlinkat(-1, ut_list[0]->ibdev_path, buf, sizeof(buf));
	cr_assert_gt(n, 0, "readlinkat: %s", strerror(errno));
	buf[n] = 0;
	snprintf(want, sizeof(want), "../../devices/virtual/infiniband/%s", ut_list[0]->name);
	cr_assert_str_eq(buf, want);
	n = readlink(ut_list[1]->ibdev_path, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	/* truncated without a NUL, as readlink(2) does */
	memset(buf, 'x', sizeof(buf));
	cr_assert_eq(readlink(ut_list[0]->ibdev_path, buf, 5), 5);
	cr_assert_eq(memcmp(buf, "../..x", 6), 0);
	/* not a link of ours: libc's */
	errno = 0;
	cr_assert_eq(readlink("/sys/class/infiniband/uverbs9", buf, sizeof(buf)), -1);
	cr_assert_eq(errno, ENOENT);

	if (!bdf[0]) {
		cr_log_info("no PCI function on this machine: the vfio: link is not checked");
		return;
	}
	cr_assert_eq(ut_ndev, 3);
	snprintf(bus, sizeof(bus), "/sys/bus/pci/devices/%s", bdf);
	cr_assert_not_null(realpath(bus, real));
	cr_assert_eq(strncmp(real, "/sys/devices/", 13), 0, "%s", real);
	n = readlinkat(AT_FDCWD, ut_list[2]->ibdev_path, buf, sizeof(buf) - 1);
	cr_assert_gt(n, 0);
	buf[n] = 0;
	snprintf(want, sizeof(want), "../../devices/%s/infiniband/%s", real + 13, ut_list[2]->name);
	cr_assert_str_eq(buf, want);
}

/* coreutils' ls (src/ls.c, do_statx()) looks at each name with statx, not following a
 * link for what it lists; find and tar use lstat and fstatat.  Each answers our paths
 * as sysfs would: the class entry a link (followed: the device's directory), the
 * attribute files regular 0444 files of a page, the tables' directories 0755; and
 * ls -l's ACL question (getxattr) finds no attribute. */
Test(kernel_paths, statx_lstat_and_fstatat_see_links_files_and_directories)
{
	ut_devices(UT_KP_DEVS);
	const char *entry = ut_list[0]->ibdev_path;
	char target[512], path[400];
	ssize_t tl = readlink(entry, target, sizeof(target));
	cr_assert_gt(tl, 0);
	struct statx x;
	struct stat st;
	struct stat64 st64;

	cr_assert_eq(statx(AT_FDCWD, entry, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &x), 0, "statx: %s",
		     strerror(errno));
	cr_assert(S_ISLNK(x.stx_mode), "mode 0%o", x.stx_mode);
	cr_assert_eq(x.stx_mode & 0777, 0777);
	cr_assert_eq(x.stx_size, (uint64_t)tl, "a link's size is its target's length");
	cr_assert(x.stx_mask & STATX_TYPE);
	cr_assert_eq(lstat(entry, &st), 0);
	cr_assert(S_ISLNK(st.st_mode));
	cr_assert_eq(lstat64(entry, &st64), 0);
	cr_assert(S_ISLNK(st64.st_mode));
	cr_assert_eq(fstatat(AT_FDCWD, entry, &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert(S_ISLNK(st.st_mode));
	cr_assert_eq(fstatat64(-1, entry, &st64, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert(S_ISLNK(st64.st_mode));
	/* followed: the directory */
	cr_assert_eq(statx(AT_FDCWD, entry, 0, STATX_BASIC_STATS, &x), 0);
	cr_assert(S_ISDIR(x.stx_mode));
	cr_assert_eq(fstatat(AT_FDCWD, entry, &st, 0), 0);
	cr_assert(S_ISDIR(st.st_mode));
	snprintf(path, sizeof(path), "%s/", entry);
	cr_assert_eq(lstat(path, &st), 0);
	cr_assert(S_ISDIR(st.st_mode), "a trailing slash follows the link");

	/* an attribute file, through every flavour */
	snprintf(path, sizeof(path), "%s/ports/1/state", entry);
	cr_assert_eq(statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &x), 0);
	cr_assert(S_ISREG(x.stx_mode));
	cr_assert_eq(x.stx_mode & 0777, 0444);
	cr_assert_eq(x.stx_size, 4096u);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(lstat(path, &st), 0);
	cr_assert_eq(st.st_size, 4096);
	/* the GID table's directories, and an entry of each */
	static const char *const dirs[] = { "ports/1/gids", "ports/1/gid_attrs", "ports/1/gid_attrs/types",
					    "ports/1/pkeys" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", entry, dirs[i]);
		cr_assert_eq(statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &x), 0, "%s", path);
		cr_assert(S_ISDIR(x.stx_mode), "%s", path);
		cr_assert_eq(x.stx_mode & 0777, 0755);
	}
	snprintf(path, sizeof(path), "%s/ports/1/gid_attrs/types/1", entry);
	cr_assert_eq(statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &x), 0);
	cr_assert(S_ISREG(x.stx_mode));
	/* the node, as stat says */
	snprintf(path, sizeof(path), "/dev/infiniband/%s", ut_list[1]->dev_name);
	cr_assert_eq(statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &x), 0);
	cr_assert(S_ISCHR(x.stx_mode));
	cr_assert_eq(x.stx_rdev_major, 231u);
	cr_assert_eq(x.stx_rdev_minor, 193u);
	/* what the device does not have, and a relative name, are libc's (absent here) */
	snprintf(path, sizeof(path), "%s/device/numa_node", entry);
	errno = 0;
	cr_assert_eq(statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &x), -1);
	cr_assert_eq(errno, ENOENT);
	errno = 0;
	cr_assert_eq(lstat(path, &st), -1);
	cr_assert_eq(errno, ENOENT);
	errno = 0;
	cr_assert_eq(statx(AT_FDCWD, "sys/class/infiniband", 0, STATX_BASIC_STATS, &x), -1);
	cr_assert_eq(errno, ENOENT);

	/* no extended attribute: ENODATA, which ls -l takes as "no ACL" */
	snprintf(path, sizeof(path), "%s/node_guid", entry);
	char v[64];
	errno = 0;
	cr_assert_eq(getxattr(path, "system.posix_acl_access", v, sizeof(v)), -1);
	cr_assert_eq(errno, ENODATA);
	errno = 0;
	cr_assert_eq(lgetxattr(entry, "system.posix_acl_access", v, sizeof(v)), -1);
	cr_assert_eq(errno, ENODATA);
	cr_assert_eq(listxattr(path, v, sizeof(v)), 0);
	cr_assert_eq(llistxattr(entry, v, sizeof(v)), 0);
}

/* The GID and P_Key tables' directories list an entry per table entry (the first 32)
 * before anything else has brought the device up: listing first, as ls does. */
Test(kernel_paths, table_directories_list_their_entries_before_any_read)
{
	ut_devices(UT_KP_DEVS);
	char dir[400], got[1024];
	snprintf(dir, sizeof(dir), "%s/ports/1/gid_attrs/types", ut_list[1]->ibdev_path);
	list_dir(dir, got, sizeof(got));
	cr_assert(!strncmp(got, ".:4 ..:4 0:8 1:8", 16), "%s", got);
	snprintf(dir, sizeof(dir), "%s/ports/1/gids", ut_list[1]->ibdev_path);
	list_dir(dir, got, sizeof(got));
	cr_assert(!strncmp(got, ".:4 ..:4 0:8 1:8", 16), "%s", got);
	snprintf(dir, sizeof(dir), "%s/ports/1/gid_attrs", ut_list[1]->ibdev_path);
	list_dir(dir, got, sizeof(got));
	cr_assert_str_eq(got, ".:4 ..:4 types:4");
}

/* rdma-core's pyverbs tests (tests/base.py, RDMATestCase._get_ip_mac) find a device's
 * netdev by listing <ibdev_path>/device/net/.  A device whose address a kernel netdev
 * carries shows that netdev there: the emulated NIC on 127.0.0.1 is on lo.  One on
 * another loopback address (127.45.0.2: lo carries 127.0.0.1/8, not that address
 * exactly) has no device/ at all, as before. */
Test(kernel_paths, device_net_names_the_netdev_that_carries_the_address, .timeout = 20)
{
	ut_devices("emu:ip=127.0.0.1,emu:ip=127.45.0.2");
	char dir[320], out[1024];
	struct stat st;
	snprintf(dir, sizeof(dir), "%s/device/net", ut_list[0]->ibdev_path);
	cr_assert_eq(stat(dir, &st), 0, "stat %s: %s", dir, strerror(errno));
	cr_assert(S_ISDIR(st.st_mode));
	list_dir(dir, out, sizeof(out));
	cr_assert_str_eq(out, ".:4 ..:4 lo:4");
	list_dir(ut_list[0]->ibdev_path, out, sizeof(out));
	cr_assert_not_null(strstr(out, " device:4"), "%s", out);
	snprintf(dir, sizeof(dir), "%s/device", ut_list[0]->ibdev_path);
	list_dir(dir, out, sizeof(out));
	cr_assert_str_eq(out, ".:4 ..:4 net:4");

	/* pyverbs lists it from a child (`ls`) while the parent has the device open: the
	 * child must not need the device (an emulator of its own on the address the
	 * parent's holds would fail to start) */
	struct ibv_context *ctx = ut_open(0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		snprintf(dir, sizeof(dir), "%s/device/net", ut_list[0]->ibdev_path);
		DIR *dd = opendir(dir);
		struct dirent *e;
		bool lo = false;
		while (dd && (e = readdir(dd)))
			lo |= !strcmp(e->d_name, "lo");
		_exit(lo ? 0 : 3);
	}
	int status = 0;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child saw no lo under device/net");
	cr_assert_eq(ibv_close_device(ctx), 0);

	for (int i = 0; i < 2; i++) {
		snprintf(dir, sizeof(dir), i ? "%s/device/net" : "%s/device", ut_list[1]->ibdev_path);
		errno = 0;
		cr_assert_eq(stat(dir, &st), -1, "%s", dir);
		cr_assert_eq(errno, ENOENT);
		cr_assert_null(opendir(dir));
	}
	list_dir(ut_list[1]->ibdev_path, out, sizeof(out));
	cr_assert_null(strstr(out, "device"), "%s", out);
}
