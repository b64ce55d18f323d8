/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The run directory: where a device daemon's socket (tools/uvd) and the counters files
 * of verbs programs (uverbs/stats.c) live, $UVERBS_RUN_DIR or /tmp/uverbs-<uid>.
 *
 * /tmp is everyone's: another user who makes /tmp/uverbs-<uid> first would own what is
 * in it -- a socket that answers as our device daemon, a link our counters file would be
 * written through.  So a run directory is used only when it is a directory (not a link)
 * owned by this user (the effective uid) with no access for group or others (0700), as
 * systemd's and OpenSSH's private directories are checked; anything else is refused with
 * the reason (docs/architecture.md, "Threat model"). */
#ifndef UV_PLATFORM_RUN_DIR_H
#define UV_PLATFORM_RUN_DIR_H

#include <stdbool.h>
#include <stddef.h>

/* The run directory's path into buf: 0, -ENOENT when UVERBS_RUN_DIR=off, or
 * -ENAMETOOLONG. */
int plat_run_dir(char *buf, size_t len);
/* dir usable as ours: made (mode 0700) when create and missing, then checked.  0, or
 * -errno with the reason in why (-EPERM: another owner, group or other access, or not
 * a directory). */
int plat_run_dir_check(const char *dir, bool create, char *why, size_t whylen);
/* A new file at path for writing, created with O_CREAT|O_EXCL|O_NOFOLLOW (mode 0600):
 * never through a link and never an existing file.  A file already there (a tmp file a
 * killed writer left) is removed once and the create tried again.  fd or -errno. */
int plat_create_private(const char *path);

#endif
