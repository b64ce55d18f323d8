/* hw/platform/vm.h on Linux. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
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

/* The maps are sorted by address (proc(5)); walk them with the range's cursor `at`:
 * each line either lies below it, covers it (the cursor moves to the line's end), or
 * starts above it (a hole: -EFAULT). */
int plat_vm_query(const void *addr, size_t len, unsigned *prot)
{
	uint64_t at = (uint64_t)(uintptr_t)addr, end = at + len;
	unsigned rights = PLAT_VM_READ | PLAT_VM_WRITE;
	char buf[4096], line[128];
	size_t ll = 0;
	int fd, rc = -EFAULT;

	if (!len || end < at || !prot)
		return -EINVAL;
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (at < end) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n && at < end; i++) {
			uint64_t s, e;
			unsigned p;

			if (buf[i] != '\n') {
				/* only the start of a line matters; the path may be long */
				if (ll + 1 < sizeof(line))
					line[ll++] = buf[i];
				continue;
			}
			line[ll] = '\0';
			ll = 0;
			if (!parse_line(line, &s, &e, &p) || e <= at)
				continue;
			if (s > at)
				goto out;  /* a hole before the next mapping */
			rights &= p;
			at = e;
		}
	}
	if (at >= end) {
		*prot = rights;
		rc = 0;
	}
out:
	close(fd);
	return rc;
}

/* One whole line of /proc/self/maps: "start-end perms offset major:minor inode path"
 * (proc(5)).  true when it is a shared mapping of a file that covers [at, end). */
static bool shared_file_line(const char *line, uint64_t at, uint64_t end, uint64_t *off, dev_t *dev,
			     ino_t *ino)
{
	uint64_t s, e, o, inode;
	unsigned maj, mn;
	char perms[8];

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64, &s, &e, perms, &o, &maj, &mn,
		   &inode) != 7)
		return false;
	if (s > at || e < end || strlen(perms) < 4 || perms[3] != 's' || !inode)
		return false;
	*off = o + (at - s);
	*dev = makedev(maj, mn);
	*ino = (ino_t)inode;
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
	uint64_t at = (uint64_t)(uintptr_t)addr, end = at + len, off = 0;
	dev_t dev = 0;
	ino_t ino = 0;
	bool found = false;
	char line[512];
	FILE *f;

	if (!len || end < at || !fd_out || !file_off)
		return -EINVAL;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		found = shared_file_line(line, at, end, &off, &dev, &ino);
		/* a path longer than the buffer: skip the rest of its line */
		while (n && line[n - 1] != '\n' && fgets(line, sizeof(line), f))
			n = strlen(line);
	}
	fclose(f);
	if (!found)
		return -ENOENT;
	int fd = fd_of_file(dev, ino);
	if (fd < 0)
		return fd;
	*fd_out = fd;
	*file_off = off;
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
