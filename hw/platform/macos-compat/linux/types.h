/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Stand-in for the Linux UAPI <linux/types.h>, for the macOS build only: rdma-core's
 * <infiniband/verbs.h> (and the rdma/ headers it includes) take their fixed-width and
 * endian-annotated types from it, and Apple's libc has no linux/ headers.  The types
 * are those of include/uapi/linux/types.h and asm-generic/int-ll64.h: the __beNN /
 * __leNN types are plain integers of that width (the annotations exist for sparse),
 * and __aligned_u64 is a u64 aligned to 8 on every ABI.  Used only when building
 * against rdma-core's header (the macOS check on Linux); a Mac builds against the
 * SDK's <infiniband/verbs.h>, which does not need it. */
#ifndef UV_MACOS_COMPAT_LINUX_TYPES_H
#define UV_MACOS_COMPAT_LINUX_TYPES_H

#include <stdint.h>

typedef int8_t __s8;
typedef uint8_t __u8;
typedef int16_t __s16;
typedef uint16_t __u16;
typedef int32_t __s32;
typedef uint32_t __u32;
typedef int64_t __s64;
typedef uint64_t __u64;

typedef __u16 __le16;
typedef __u16 __be16;
typedef __u32 __le32;
typedef __u32 __be32;
typedef __u64 __le64;
typedef __u64 __be64;
typedef __u16 __sum16;
typedef __u32 __wsum;

#define __aligned_u64 __u64 __attribute__((aligned(8)))
#define __aligned_be64 __be64 __attribute__((aligned(8)))
#define __aligned_le64 __le64 __attribute__((aligned(8)))

#endif
