/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Byte order conversions under glibc's <endian.h> names (htobe32, be64toh, ...), on
 * every platform: glibc and musl provide <endian.h>; Apple's libc has none and names
 * the same operations OSSwapHostToBigInt32 and friends in <libkern/OSByteOrder.h>. */
#ifndef UV_PLATFORM_BYTEORDER_H
#define UV_PLATFORM_BYTEORDER_H

#if defined(__APPLE__)
#include <libkern/OSByteOrder.h>

#define htobe16(x) OSSwapHostToBigInt16(x)
#define htobe32(x) OSSwapHostToBigInt32(x)
#define htobe64(x) OSSwapHostToBigInt64(x)
#define be16toh(x) OSSwapBigToHostInt16(x)
#define be32toh(x) OSSwapBigToHostInt32(x)
#define be64toh(x) OSSwapBigToHostInt64(x)
#define htole16(x) OSSwapHostToLittleInt16(x)
#define htole32(x) OSSwapHostToLittleInt32(x)
#define htole64(x) OSSwapHostToLittleInt64(x)
#define le16toh(x) OSSwapLittleToHostInt16(x)
#define le32toh(x) OSSwapLittleToHostInt32(x)
#define le64toh(x) OSSwapLittleToHostInt64(x)
#else
#include <endian.h>
#endif

#endif
