/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvcp: where a client's path may go on the server (uvcp.h, uc_path_open_parent).
 *
 * The client names every destination relative to the server's root.  A name is refused
 * outright when it is absolute or has a ".." component; every directory on the way is
 * then resolved with realpath(3) and must lie inside the root's own real path, so a
 * symlink in the served tree that leads outside it is refused too, while one that stays
 * inside is followed.  The file itself is created as a temporary with O_EXCL|O_NOFOLLOW
 * in the resolved directory and renamed over the leaf: a symlink at the leaf is
 * replaced, never written through.  (A tree that another process changes between the
 * check and the open is out of scope: uvcp serves a directory its user owns.) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "uvcp.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int inside(const char *root, const char *real)
{
	size_t n = strlen(root);
	if (strncmp(root, real, n))
		return 0;
	return real[n] == 0 || real[n] == '/' || (n == 1 && root[0] == '/');
}

int uc_path_open_parent(const char *root, const char *rel, int mkdirs, int *dirfd, char *leaf, size_t leaflen,
			char *err, size_t errlen)
{
	*dirfd = -1;
	if (strlen(rel) >= UC_PATH_MAX) {
		snprintf(err, errlen, "path too long");
		return -ENAMETOOLONG;
	}
	if (rel[0] == '/') {
		snprintf(err, errlen, "path '%.200s' is absolute: names are relative to the server's root", rel);
		return -EPERM;
	}
	/* Split into components, dropping empty ones and ".". */
	char buf[UC_PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", rel);
	char *comp[UC_PATH_MAX / 2];
	unsigned nc = 0;
	for (char *save = NULL, *t = strtok_r(buf, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
		if (!strcmp(t, "."))
			continue;
		if (!strcmp(t, "..")) {
			snprintf(err, errlen, "path '%.200s' escapes the root (a '..' component)", rel);
			return -EPERM;
		}
		comp[nc++] = t;
	}
	char cur[PATH_MAX];
	snprintf(cur, sizeof(cur), "%s", root);
	for (unsigned i = 0; i + 1 < nc; i++) {
		char next[PATH_MAX + UC_PATH_MAX];
		snprintf(next, sizeof(next), "%s/%s", cur, comp[i]);
		char real[PATH_MAX];
		if (!realpath(next, real)) {
			if (errno != ENOENT || !mkdirs) {
				int e = errno;
				snprintf(err, errlen, "'%.200s': %s", rel, strerror(e));
				return -e;
			}
			struct stat ls;
			if (!lstat(next, &ls) && S_ISLNK(ls.st_mode)) {
				snprintf(err, errlen, "path '%.200s' goes through a dangling symlink '%.200s'", rel, comp[i]);
				return -EPERM;
			}
			if (mkdir(next, 0755) && errno != EEXIST) {
				int e = errno;
				snprintf(err, errlen, "cannot create directory '%.200s': %s", rel, strerror(e));
				return -e;
			}
			if (!realpath(next, real)) {
				int e = errno;
				snprintf(err, errlen, "'%.200s': %s", rel, strerror(e));
				return -e;
			}
		}
		if (!inside(root, real)) {
			snprintf(err, errlen, "path '%.200s' escapes the root through a symlink ('%.200s' leads to %s)", rel, comp[i],
				 real);
			return -EPERM;
		}
		struct stat st;
		if (stat(real, &st) || !S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "'%.200s': '%.200s' is not a directory", rel, comp[i]);
			return -ENOTDIR;
		}
		snprintf(cur, sizeof(cur), "%s", real);
	}
	int fd = open(cur, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "'%.200s': %s", rel, strerror(e));
		return -e;
	}
	snprintf(leaf, leaflen, "%s", nc ? comp[nc - 1] : "");
	/* A leaf that is a symlink: for a directory or a stat, what it leads to must be
	 * inside too (a file replaces the link itself, see above). */
	struct stat ls;
	if (nc && !fstatat(fd, leaf, &ls, AT_SYMLINK_NOFOLLOW) && S_ISLNK(ls.st_mode)) {
		char next[PATH_MAX + UC_PATH_MAX], real[PATH_MAX];
		snprintf(next, sizeof(next), "%s/%s", cur, leaf);
		if (realpath(next, real) && !inside(root, real)) {
			snprintf(err, errlen, "path '%.200s' escapes the root through a symlink ('%.200s' leads to %s)", rel, leaf,
				 real);
			close(fd);
			return -EPERM;
		}
	}
	*dirfd = fd;
	return 0;
}
