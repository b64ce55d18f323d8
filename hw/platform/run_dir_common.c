/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/run_dir.h: the same on Linux and macOS (POSIX open, fstat, mkdir). */
#include "hw/platform/run_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int plat_run_dir(char *buf, size_t len)
{
	const char *s = getenv("UVERBS_RUN_DIR");
	int n;
	if (s && !strcmp(s, "off"))
		return -ENOENT;
	if (s && *s)
		n = snprintf(buf, len, "%s", s);
	else
		n = snprintf(buf, len, "/tmp/uverbs-%u", (unsigned)getuid());
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int plat_run_dir_check(const char *dir, bool create, char *why, size_t whylen)
{
	if (create && mkdir(dir, 0700) < 0 && errno != EEXIST) {
		int e = errno;
		snprintf(why, whylen, "cannot make the run directory %s: %s", dir, strerror(e));
		return -e;
	}
	/* O_NOFOLLOW: a link at dir is refused (ELOOP), never followed to someone's directory */
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(why, whylen, "run directory %s: %s%s", dir, strerror(e),
			 e == ELOOP || e == ENOTDIR ? " (a link or not a directory: refused)" : "");
		return e == ELOOP || e == ENOTDIR ? -EPERM : -e;
	}
	struct stat st;
	int rc = fstat(fd, &st) < 0 ? -errno : 0;
	close(fd);
	if (rc) {
		snprintf(why, whylen, "run directory %s: %s", dir, strerror(-rc));
		return rc;
	}
	if (st.st_uid != geteuid()) {
		snprintf(why, whylen, "run directory %s belongs to uid %u, not to us (uid %u): refused; remove it, or "
			 "set UVERBS_RUN_DIR to a directory of ours", dir, (unsigned)st.st_uid, (unsigned)geteuid());
		return -EPERM;
	}
	if (st.st_mode & 077) {
		snprintf(why, whylen, "run directory %s has mode %04o, not 0700: refused; chmod 700 it", dir,
			 (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

int plat_create_private(const char *path)
{
	for (int tries = 0; tries < 2; tries++) {
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST || tries)
			return -errno;
		/* unlink removes a link itself, never its target */
		if (unlink(path) < 0 && errno != ENOENT)
			return -errno;
	}
	return -EEXIST;
}
