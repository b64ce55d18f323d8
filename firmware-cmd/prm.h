/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* PRM layouts as data, and the one place that turns a field into bits.
 *
 * Every structure the driver or the emulator touches (command entries, mailboxes,
 * command inputs/outputs, contexts, capability blocks, registers) is described once,
 * in the files under firmware-cmd/layouts/ (all.def includes them), as X-macro rows with the PRM's own field names:
 *
 *   PRM_STRUCT(type, size_bits)                  a structure of size_bits bits
 *   PRM_FIELD(type, field, bit_offset, width)    an integer field, width 1..32 or 64
 *   PRM_BYTES(type, field, bit_offset, width)    a byte array (MAC, GID, inline data);
 *                                                width 0 = open-ended array at the end
 *                                                (page lists, register data)
 *   PRM_SUB(type, field, bit_offset, subtype)    an embedded structure (qpc in CREATE_QP)
 *
 * Bit numbering follows the PRM and mlx5_ifc.h: bit offset 0 is the most significant
 * bit of byte 0, structures are arrays of big-endian dwords, and a field of width <= 32
 * never crosses a dword.  Rows must be in the order of the structure (offsets rising);
 * a structure's rows follow its PRM_STRUCT row.  Widths are plain literals (tests/oracle
 * recognises open-ended arrays by the literal 0).  A union in the PRM (capability block,
 * EQE event data) is a PRM_BYTES; its alternatives are tables of their own.
 *
 * From the rows this header generates, for each field:
 *   prm_<type>_get_<field>(const void *p)  -> uint64_t
 *   prm_<type>_set_<field>(void *p, uint64_t v)
 *   prm_<type>_addr_<field>(p)             (PRM_BYTES / PRM_SUB) -> uint8_t *
 * and the convenience spellings PRM_GET(type, p, field), PRM_SET(type, p, field, v),
 * PRM_ADDR(type, p, field), PRM_SIZE(type) (bytes), PRM_OFF(type, field) (bits),
 * PRM_WIDTH(type, field) (bits).  No other file writes shifts or masks for a PRM field.
 *
 * prm_tables.c turns the same rows into descriptors (prm_struct_find) for tools that
 * print every field of a structure, and tests/oracle checks every row against Linux's
 * mlx5_ifc.h through rdma-core's DEVX_SET/DEVX_GET.
 */
#ifndef UVERBS_FIRMWARE_CMD_PRM_H
#define UVERBS_FIRMWARE_CMD_PRM_H

#include "firmware-cmd/consts.h"
#include "hw/platform/byteorder.h"
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- bit access: big-endian dwords, PRM bit numbering ---- */

static inline uint32_t prm_load_be32(const void *base, unsigned bit_off)
{
	uint32_t dw;
	memcpy(&dw, (const uint8_t *)base + (bit_off / 32) * 4, sizeof(dw));
	return be32toh(dw);
}

static inline void prm_store_be32(void *base, unsigned bit_off, uint32_t v)
{
	uint32_t dw = htobe32(v);
	memcpy((uint8_t *)base + (bit_off / 32) * 4, &dw, sizeof(dw));
}

static inline uint32_t prm_mask32(unsigned width)
{
	return width >= 32 ? 0xffffffffu : ((1u << width) - 1u);
}

/* Field of width 1..32 inside one dword. */
static inline uint32_t prm_bits_get32(const void *base, unsigned bit_off, unsigned width)
{
	unsigned shift = 32u - width - (bit_off & 31u);
	return (prm_load_be32(base, bit_off) >> shift) & prm_mask32(width);
}

static inline void prm_bits_set32(void *base, unsigned bit_off, unsigned width, uint32_t v)
{
	unsigned shift = 32u - width - (bit_off & 31u);
	uint32_t mask = prm_mask32(width) << shift;
	uint32_t dw = prm_load_be32(base, bit_off);
	prm_store_be32(base, bit_off, (dw & ~mask) | ((v << shift) & mask));
}

/* 64-bit field on a dword boundary: high dword first (PRM is big-endian throughout). */
static inline uint64_t prm_bits_get64(const void *base, unsigned bit_off)
{
	return ((uint64_t)prm_load_be32(base, bit_off) << 32) | prm_load_be32(base, bit_off + 32);
}

static inline void prm_bits_set64(void *base, unsigned bit_off, uint64_t v)
{
	prm_store_be32(base, bit_off, (uint32_t)(v >> 32));
	prm_store_be32(base, bit_off + 32, (uint32_t)v);
}

static inline uint64_t prm_bits_get(const void *base, unsigned bit_off, unsigned width)
{
	return width == 64 ? prm_bits_get64(base, bit_off) : prm_bits_get32(base, bit_off, width);
}

static inline void prm_bits_set(void *base, unsigned bit_off, unsigned width, uint64_t v)
{
	if (width == 64)
		prm_bits_set64(base, bit_off, v);
	else
		prm_bits_set32(base, bit_off, width, (uint32_t)v);
}

/* ---- generated accessors ---- */

#define PRM_STRUCT(type, size_bits) enum { PRM_SZ_BITS_##type = (size_bits) };

#define PRM_FIELD(type, field, off, width)                                              \
	enum { PRM_OFF_##type##__##field = (off), PRM_W_##type##__##field = (width) };       \
	_Static_assert((width) == 64 ? ((off) % 32) == 0                                     \
				     : ((width) >= 1 && (width) <= 32 &&                  \
					((off) % 32) + (width) <= 32),                     \
		       #type "." #field ": a field must fit in a dword (or be 64-bit)");        \
	static inline uint64_t prm_##type##_get_##field(const void *p)                      \
	{                                                                                    \
		return prm_bits_get(p, (off), (width));                                      \
	}                                                                                    \
	static inline void prm_##type##_set_##field(void *p, uint64_t v)                    \
	{                                                                                    \
		prm_bits_set(p, (off), (width), v);                                          \
	}

#define PRM_BYTES(type, field, off, width)                                              \
	enum { PRM_OFF_##type##__##field = (off), PRM_W_##type##__##field = (width) };       \
	_Static_assert((off) % 8 == 0 && (width) % 8 == 0,                                  \
		       #type "." #field ": byte arrays are byte aligned");                      \
	static inline uint8_t *prm_##type##_addr_##field(const void *p)                     \
	{                                                                                    \
		return (uint8_t *)p + (off) / 8;                                             \
	}

#define PRM_SUB(type, field, off, subtype)                                              \
	enum { PRM_OFF_##type##__##field = (off),                                            \
	       PRM_W_##type##__##field = PRM_SZ_BITS_##subtype };                            \
	_Static_assert((off) % 32 == 0, #type "." #field ": sub-structures are dword aligned"); \
	static inline uint8_t *prm_##type##_addr_##field(const void *p)                     \
	{                                                                                    \
		return (uint8_t *)p + (off) / 8;                                             \
	}

#include "firmware-cmd/layouts/all.def"

#undef PRM_STRUCT
#undef PRM_FIELD
#undef PRM_BYTES
#undef PRM_SUB

#define PRM_GET(type, p, field) prm_##type##_get_##field(p)
#define PRM_SET(type, p, field, v) prm_##type##_set_##field((p), (v))
#define PRM_ADDR(type, p, field) prm_##type##_addr_##field(p)
#define PRM_SIZE(type) (PRM_SZ_BITS_##type / 8)
#define PRM_OFF(type, field) PRM_OFF_##type##__##field
#define PRM_WIDTH(type, field) PRM_W_##type##__##field

/* ---- descriptors, for tools and the emulator's dumps (prm_tables.c) ---- */

enum prm_kind { PRM_KIND_FIELD, PRM_KIND_BYTES, PRM_KIND_SUB };

struct prm_field_desc {
	const char *name;
	uint32_t bit_off;
	uint32_t width;
	enum prm_kind kind;
	const char *subtype; /* PRM_KIND_SUB only */
};

struct prm_struct_desc {
	const char *name;
	uint32_t size_bits;
	const struct prm_field_desc *fields;
	size_t nfields;
};

/* Every structure in the layout tables, in table order. */
extern const struct prm_struct_desc prm_structs[];
extern const size_t prm_nstructs;

const struct prm_struct_desc *prm_struct_find(const char *name);
const struct prm_field_desc *prm_field_find(const struct prm_struct_desc *s, const char *name);

#endif
