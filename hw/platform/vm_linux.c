/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/vm.h on Linux. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "hw/platform/vm.h"

/* One line of /proc/self/maps starts "start-end perms ..." in hex (proc(5)). */
static bool parse_line(const char *s, uint64_t *start, uint64_t *end, unsigned *prot)
{
	uint64_t v[2] = { 0, 0 };

	for (int k = 0; k < 2; k++) {
		int digits = 0;

		for (;; s++, digits++) {
			unsigned c = (unsigned char)*s, d;

			if (c >= '0' && c <= '9')
				d = c - '0';
			else if (c >= 'a' && c <= 'f')
				d = c - 'a' + 10;
			else
				break;
			if (digits >= 16)
				return false;
			v[k] = v[k] << 4 | d;
		}
		if (!digits || *s != (k == 0 ? '-' : ' '))
			return false;
		s++;
	}
	*start = v[0];
	*end = v[1];
	*prot = (s[0] == 'r' ? PLAT_VM_READ : 0) | (s[0] && s[1] == 'w' ? PLAT_VM_WRITE : 0);
	return true;
}

/* Call fn with each line of /proc/self/maps (proc(5)) until it returns true; a line
 * longer than the buffer reaches fn cut (only its start matters: the path comes
 * last).  0, or -errno when the file cannot be read. */
static int maps_walk(bool (*fn)(const char *line, void *arg), void *arg)
{
	char line[512];
	bool done = false;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return -errno;
	while (!done && fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		done = fn(line, arg);
		while (n && line[n - 1] != '\n' && fgets(line, sizeof(line), f))
			n = strlen(line);   /* the rest of a long line */
	}
	fclose(f);
	return 0;
}

/* plat_vm_query's walk: the maps are sorted by address, so each line either lies
 * below the cursor `at`, covers it (the cursor moves to the line's end), or starts
 * above it (a hole: -EFAULT). */
struct vm_query_walk {
	uint64_t at, end;
	unsigned rights;
	int rc;
};

static bool vm_query_line(const char *line, void *arg)
{
	struct vm_query_walk *w = arg;
	uint64_t s, e;
	unsigned p;

	if (!parse_line(line, &s, &e, &p) || e <= w->at)
		return false;
	if (s > w->at)
		return true;   /* a hole before the next mapping: rc stays -EFAULT */
	w->rights &= p;
	w->at = e;
	if (w->at >= w->end)
		w->rc = 0;
	return w->at >= w->end;
}

int plat_vm_query(const void *addr, size_t len, unsigned *prot)
{
	struct vm_query_walk w = { .at = (uint64_t)(uintptr_t)addr, .rights = PLAT_VM_READ | PLAT_VM_WRITE,
				   .rc = -EFAULT };

	w.end = w.at + len;
	if (!len || w.end < w.at || !prot)
		return -EINVAL;
	int rc = maps_walk(vm_query_line, &w);
	if (rc)
		return rc;
	if (w.rc == 0)
		*prot = w.rights;
	return w.rc;
}

/* plat_vm_shared_file's walk: the one line that is a shared mapping of a file covering
 * [at, end), "start-end perms offset major:minor inode path" (proc(5)). */
struct vm_file_walk {
	uint64_t at, end, off;
	dev_t dev;
	ino_t ino;
	bool found;
};

static bool shared_file_line(const char *line, void *arg)
{
	struct vm_file_walk *w = arg;
	uint64_t s, e, o, inode;
	unsigned maj, mn;
	char perms[8];

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64, &s, &e, perms, &o, &maj, &mn,
		   &inode) != 7)
		return false;
	if (s > w->at || e < w->end || strlen(perms) < 4 || perms[3] != 's' || !inode)
		return false;
	w->off = o + (w->at - s);
	w->dev = makedev(maj, mn);
	w->ino = (ino_t)inode;
	w->found = true;
	return true;
}

/* Whether descriptor n is open on the file (dev, ino). */
static bool fd_is_file(int n, dev_t dev, ino_t ino)
{
	struct stat st;

	return fstat(n, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == dev && st.st_ino == ino;
}

/* A descriptor this process holds of the file (dev, ino), duplicated: one open for
 * reading and writing if there is one (the mapper may then write), else any.  The
 * duplicate is checked again, because another thread may have closed and reused the
 * number between the look and the dup. */
static int fd_of_file(dev_t dev, ino_t ino)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *de;
	int found = -EBADF;

	if (!dir)
		return -errno;
	while ((de = readdir(dir)) != NULL) {
		char *endp;
		long n = strtol(de->d_name, &endp, 10);

		if (*endp || endp == de->d_name || n < 0 || n == dirfd(dir) || !fd_is_file((int)n, dev, ino))
			continue;
		int mode = fcntl((int)n, F_GETFL);
		bool rw = mode >= 0 && (mode & O_ACCMODE) == O_RDWR;
		if (found >= 0 && !rw)
			continue;
		int dup = fcntl((int)n, F_DUPFD_CLOEXEC, 0);
		if (dup < 0 || !fd_is_file(dup, dev, ino)) {
			if (dup >= 0)
				close(dup);
			continue;
		}
		if (found >= 0)
			close(found);
		found = dup;
		if (rw)
			break;
	}
	closedir(dir);
	return found;
}

int plat_vm_shared_file(const void *addr, size_t len, int *fd_out, uint64_t *file_off)
{
	struct vm_file_walk w = { .at = (uint64_t)(uintptr_t)addr };

	w.end = w.at + len;
	if (!len || w.end < w.at || !fd_out || !file_off)
		return -EINVAL;
	int rc = maps_walk(shared_file_line, &w);
	if (rc)
		return rc;
	if (!w.found)
		return -ENOENT;
	int fd = fd_of_file(w.dev, w.ino);
	if (fd < 0)
		return fd;
	*fd_out = fd;
	*file_off = w.off;
	return 0;
}

/* Our pid, for the copies: getpid(2) is a system call of its own (glibc stopped
 * caching it), and a copy would cost two.  A fork child forgets the parent's, so it
 * never reads or writes the parent's memory. */
static pid_t vm_self;
static pthread_once_t vm_self_once = PTHREAD_ONCE_INIT;

static void vm_self_forget(void)
{
	__atomic_store_n(&vm_self, 0, __ATOMIC_RELAXED);
}

static void vm_self_watch_fork(void)
{
	pthread_atfork(NULL, NULL, vm_self_forget);
}

static pid_t vm_pid(void)
{
	pid_t p = __atomic_load_n(&vm_self, __ATOMIC_RELAXED);

	if (!p) {
		pthread_once(&vm_self_once, vm_self_watch_fork);
		p = getpid();
		__atomic_store_n(&vm_self, p, __ATOMIC_RELAXED);
	}
	return p;
}

static int vm_copy(void *dst, const void *src, size_t len, bool to_app)
{
	pid_t self = vm_pid();

	while (len) {
		struct iovec local = { to_app ? (void *)(uintptr_t)src : dst, len };
		struct iovec remote = { to_app ? dst : (void *)(uintptr_t)src, len };
		ssize_t n = to_app ? process_vm_writev(self, &local, 1, &remote, 1, 0)
				   : process_vm_readv(self, &local, 1, &remote, 1, 0);

		if (n < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			/* seccomp's default answer, or a kernel built without the calls */
			if (e == ENOSYS || e == EPERM)
				return -ENOSYS;
			return e == ENOMEM ? -EFAULT : -e;
		}
		if (n == 0)
			return -EFAULT;
		/* a partial copy stops at a page that failed: the next call reports it */
		dst = (uint8_t *)dst + n;
		src = (const uint8_t *)src + n;
		len -= (size_t)n;
	}
	return 0;
}

int plat_vm_read(void *dst, const void *src, size_t len)
{
	return vm_copy(dst, src, len, false);
}

int plat_vm_write(void *dst, const void *src, size_t len)
{
	return vm_copy(dst, src, len, true);
}

static bool have_ipc_lock(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &h, data) != 0)
		return false;
	return (data[CAP_IPC_LOCK / 32].effective >> (CAP_IPC_LOCK % 32)) & 1u;
}

uint64_t plat_vm_lock_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || have_ipc_lock())
		return UINT64_MAX;
	return (uint64_t)rl.rlim_cur;
}
