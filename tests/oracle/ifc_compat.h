/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Lets Linux's include/linux/mlx5/mlx5_ifc.h compile in userspace beside rdma-core's
 * installed <infiniband/mlx5dv.h> (whose DEVX_SET/DEVX_GET macros are the independent
 * encoder).  Only the kernel spellings mlx5_ifc.h needs are supplied here. */
#ifndef UVERBS_TESTS_ORACLE_IFC_COMPAT_H
#define UVERBS_TESTS_ORACLE_IFC_COMPAT_H
#include <stddef.h>
#include <stdint.h>
#include <infiniband/mlx5dv.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
#ifndef BIT
#define BIT(n) (1UL << (n))
#endif
#ifndef BIT_ULL
#define BIT_ULL(n) (1ULL << (n))
#endif
#ifndef DECLARE_FLEX_ARRAY
#define DECLARE_FLEX_ARRAY(type, name) struct { struct { } __empty_##name; type name[]; }
#endif
#include <linux/mlx5/mlx5_ifc.h>
#endif
