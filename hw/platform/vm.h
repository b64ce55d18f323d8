/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The process's own address space, as a device sees it: is a range mapped with the
 * rights a registration asks for, copies to and from application memory that fail with
 * -EFAULT instead of a signal when the memory has gone, and the locked-memory budget.
 *
 * Linux: /proc/self/maps (proc(5)), process_vm_readv/process_vm_writev(2) on our own
 * pid (they pin the pages the way the kernel pins them for a device and answer EFAULT
 * for an unmapped or unwritable page; no FOLL_FORCE, so a read-only page stays
 * read-only), getrlimit(RLIMIT_MEMLOCK) and capget(2) for CAP_IPC_LOCK.
 * macOS: mach_vm_region_recurse, mach_vm_read_overwrite and mach_vm_write on
 * mach_task_self(), which return KERN_INVALID_ADDRESS / KERN_PROTECTION_FAILURE, and
 * getrlimit(RLIMIT_MEMLOCK).
 *
 * All functions return 0 or a negative errno. */
#ifndef UV_PLATFORM_VM_H
#define UV_PLATFORM_VM_H

#include <stddef.h>
#include <stdint.h>

#define PLAT_VM_READ 1u
#define PLAT_VM_WRITE 2u

/* The rights every page of [addr, addr + len) has (PLAT_VM_READ | PLAT_VM_WRITE, the
 * intersection over the range) in *prot.  -EFAULT if any byte of it is not mapped;
 * -EINVAL for an empty or wrapping range.  A mapping with no access at all
 * (PROT_NONE) is mapped, with *prot 0. */
int plat_vm_query(const void *addr, size_t len, unsigned *prot);

/* Copy len bytes from application memory at src into dst (memory the caller owns), or
 * from src into application memory at dst.  -EFAULT when a page of the application
 * range is not mapped, or not readable / writable; part of the bytes may have been
 * copied then, as a device's DMA stops at the page that faults.  -ENOSYS when the
 * system refuses the call itself (a seccomp filter): the caller decides what to do. */
int plat_vm_read(void *dst, const void *src, size_t len);
int plat_vm_write(void *dst, const void *src, size_t len);

/* The file behind [addr, addr + len) when one MAP_SHARED mapping of a regular file (a
 * memfd, a POSIX shared-memory object, a tmpfs file) covers the whole range: a new
 * close-on-exec descriptor of that file in *fd and the offset of addr in it in
 * *file_off, so another process can map the same pages.  The descriptor comes from one
 * the process holds open.  -ENOENT when no single shared file mapping covers the range
 * (private or anonymous memory), -EBADF when one does but the process holds no
 * descriptor of its file, -EOPNOTSUPP where the system cannot say (macOS: no /proc;
 * a Mach region names no descriptor).
 * Linux: /proc/self/maps' offset, device and inode columns (proc(5)), matched by
 * fstat(2) against the descriptors of /proc/self/fd. */
int plat_vm_shared_file(const void *addr, size_t len, int *fd, uint64_t *file_off);

/* How many bytes this process may pin (RLIMIT_MEMLOCK's soft limit); UINT64_MAX when
 * unlimited: an infinite limit, or on Linux the CAP_IPC_LOCK capability, which
 * vfio_iommu_type1 (drivers/vfio/vfio_iommu_type1.c, vfio_lock_acct) lets pin past the
 * limit. */
uint64_t plat_vm_lock_limit(void);

#endif
