/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Memory that two processes map: a file descriptor for an anonymous shared-memory
 * object, which a daemon passes to a client (SCM_RIGHTS) so both map the same pages
 * (tools/uvd's queue memory).
 *
 * The size is fixed once made, so that no holder can shrink it under another's mapping
 * (a load past the end would raise SIGBUS there).
 * Linux: memfd_create(2) with MFD_CLOEXEC, ftruncate, then sealed against shrinking
 * and growing (F_ADD_SEALS).
 * macOS: no memfd; shm_open(3) of a random name with O_CREAT | O_EXCL, shm_unlink at
 * once so nothing else can open it and nothing outlives the descriptors, FD_CLOEXEC,
 * then ftruncate (a POSIX shared-memory object is sized once, xnu
 * bsd/kern/posix_shm.c pshm_truncate). */
#ifndef UV_PLATFORM_SHM_H
#define UV_PLATFORM_SHM_H

#include <stddef.h>

/* A close-on-exec descriptor of len bytes of zeroed shared memory, to mmap MAP_SHARED;
 * name is a label for debugging (Linux shows it in /proc/PID/maps).  fd or -errno. */
int plat_shm_create(const char *name, size_t len);

/* Whether fd is a file in memory, one another process may map and pin for a device:
 * 0 and *granule, the alignment a mapping's file offset needs (the page, or a
 * hugetlbfs file's huge page); -EINVAL for any other file (a disk or network file
 * could stall the mapper's page faults); -EOPNOTSUPP where the system cannot tell.
 * Linux: fstatfs(2) f_type TMPFS_MAGIC (memfd_create(2), /dev/shm, tmpfs) or
 * HUGETLBFS_MAGIC, whose f_bsize is the huge page (linux/magic.h).
 * macOS: -EOPNOTSUPP; fstat cannot tell a shared-memory object from a file. */
int plat_shm_memory_granule(int fd, size_t *granule);

#endif
