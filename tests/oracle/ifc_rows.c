/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Generates the rows of ifc_rows.h from firmware-cmd/layouts/all.def by X-macros:
 * our offsets/widths from the rows, the header's from mlx5_ifc.h by the same names,
 * and DEVX_SET/DEVX_GET encoders per integer field.  A structure or field the header
 * lacks must be declared in ifc_exceptions.h (else this file does not compile); the
 * rows of wqe.def are unverified as a whole (checked against mlx5dv.h by tests/mlx5).
 */
#include "tests/oracle/ifc_compat.h"
#include "tests/oracle/ifc_exceptions.h"
#include "tests/oracle/ifc_rows.h"
#include "firmware-cmd/prm.h"

#include <string.h>

/* ---- compile-time selection on declared exceptions ----
 * ORACLE_EXCEPT("why") expands to three arguments with a 1 in the middle; an
 * undeclared ORACLE_*_EXCEPT_* name stays one token, so the 0 that follows it moves
 * into the middle.  OR_FLAG is then 0 or 1 and picks a macro by token pasting. */
#define ORACLE_EXCEPT(reason) ~, 1, reason
#define OR_ARG1(...) OR_ARG1_(__VA_ARGS__)
#define OR_ARG1_(a, f, ...) f
#define OR_ARG2(...) OR_ARG2_(__VA_ARGS__)
#define OR_ARG2_(a, f, r, ...) r
#define OR_FLAG(probe) OR_ARG1(probe, 0, "", ~)
#define OR_REASON(probe) OR_ARG2(probe, 0, "", ~)
#define OR_CAT(a, b) OR_CAT_(a, b)
#define OR_CAT_(a, b) a##b
#define OR_CAT2(a, b) OR_CAT2_(a, b)
#define OR_CAT2_(a, b) a##b

#define OR_SX(type) ORACLE_STRUCT_EXCEPT_##type
#define OR_FX(type, field) ORACLE_FIELD_EXCEPT_##type##__##field
/* Open-ended byte arrays are the rows whose width is the literal 0. */
#define OR_ZW_0 ORACLE_EXCEPT("")

#define OR_HDR(type) struct mlx5_ifc_##type##_bits

static const char or_wqe_reason[] = "not in mlx5_ifc.h; checked against mlx5dv.h by tests/mlx5";

/* ---- pass 1: a DEVX setter and getter per verified field ---- */
#define OR_DX_FNS_0(type, field)                                                          \
	static void or_dxset_##type##__##field(void *p, uint64_t v)                          \
	{                                                                                    \
		if (__devx_bit_sz(type, field) == 64)                                        \
			DEVX_SET64(type, p, field, v);                                       \
		else                                                                         \
			DEVX_SET(type, p, field, (uint32_t)v);                               \
	}                                                                                    \
	static uint64_t or_dxget_##type##__##field(const void *p)                            \
	{                                                                                    \
		if (__devx_bit_sz(type, field) == 64)                                        \
			return DEVX_GET64(type, p, field);                                   \
		return DEVX_GET(type, p, field);                                             \
	}
#define OR_DX_FNS_1(type, field)
#define OR_DX_FNS_S0(type, field) OR_CAT2(OR_DX_FNS_, OR_FLAG(OR_FX(type, field)))(type, field)
#define OR_DX_FNS_S1(type, field)

#define PRM_STRUCT(type, size_bits)
#define PRM_FIELD(type, field, off, width) OR_CAT(OR_DX_FNS_S, OR_FLAG(OR_SX(type)))(type, field)
#define PRM_BYTES(type, field, off, width)
#define PRM_SUB(type, field, off, subtype)
#define PRM_ALL_NO_WQE
#include "firmware-cmd/layouts/all.def"
#undef PRM_STRUCT
#undef PRM_FIELD
#undef PRM_BYTES
#undef PRM_SUB

/* ---- pass 2: the rows ---- */
#define OR_UNVERIFIED(k, type, field, reason, off, w)                                     \
	{ .kind = (k), .tname = #type, .fname = #field, .why = (reason), .our_off = (off), \
	  .our_w = (w), .our_st = PRM_SZ_BITS_##type },

/* PRM_STRUCT */
#define OR_STRUCT_0(type, size_bits)                                                      \
	{ .kind = OR_STRUCT, .tname = #type, .fname = "", .our_w = (size_bits),               \
	  .hdr_w = __devx_st_sz_bits(type), .our_st = (size_bits),                          \
	  .hdr_st = __devx_st_sz_bits(type) },
#define OR_STRUCT_1(type, size_bits)                                                      \
	{ .kind = OR_STRUCT, .tname = #type, .fname = "", .why = OR_REASON(OR_SX(type)),   \
	  .our_w = (size_bits), .our_st = (size_bits) },

/* PRM_FIELD */
#define OR_FIELD_F0(type, field, off, width)                                              \
	{ .kind = OR_FIELD, .tname = #type, .fname = #field, .our_off = (off),                \
	  .our_w = (width), .hdr_off = __devx_bit_off(type, field),                          \
	  .hdr_w = __devx_bit_sz(type, field), .our_st = PRM_SZ_BITS_##type,                  \
	  .hdr_st = __devx_st_sz_bits(type), .our_set = prm_##type##_set_##field,            \
	  .our_get = prm_##type##_get_##field, .dx_set = or_dxset_##type##__##field,          \
	  .dx_get = or_dxget_##type##__##field },
#define OR_FIELD_F1(type, field, off, width)                                              \
	OR_UNVERIFIED(OR_FIELD, type, field, OR_REASON(OR_FX(type, field)), off, width)
#define OR_FIELD_S0(type, field, off, width)                                              \
	OR_CAT2(OR_FIELD_F, OR_FLAG(OR_FX(type, field)))(type, field, off, width)
#define OR_FIELD_S1(type, field, off, width)                                              \
	OR_UNVERIFIED(OR_FIELD, type, field, OR_REASON(OR_SX(type)), off, width)

/* PRM_BYTES: the header's size of an open-ended array cannot be taken (sizeof of a
 * flexible array member), so width 0 rows compare the offset and position only. */
#define OR_BSZ_0(type, field) __devx_bit_sz(type, field)
#define OR_BSZ_1(type, field) 0
#define OR_BYTES_F0(type, field, off, width)                                              \
	{ .kind = OR_BYTES, .tname = #type, .fname = #field, .our_off = (off),                \
	  .our_w = (width), .hdr_off = __devx_bit_off(type, field),                          \
	  .hdr_w = OR_CAT2(OR_BSZ_, OR_FLAG(OR_ZW_##width))(type, field),                   \
	  .flex = OR_FLAG(OR_ZW_##width), .our_st = PRM_SZ_BITS_##type,                      \
	  .hdr_st = __devx_st_sz_bits(type) },
#define OR_BYTES_F1(type, field, off, width)                                              \
	OR_UNVERIFIED(OR_BYTES, type, field, OR_REASON(OR_FX(type, field)), off, width)
#define OR_BYTES_S0(type, field, off, width)                                              \
	OR_CAT2(OR_BYTES_F, OR_FLAG(OR_FX(type, field)))(type, field, off, width)
#define OR_BYTES_S1(type, field, off, width)                                              \
	OR_UNVERIFIED(OR_BYTES, type, field, OR_REASON(OR_SX(type)), off, width)

/* PRM_SUB: same type unless the subtype itself is a declared exception. */
#define OR_SAMETYPE_0(type, field, subtype)                                               \
	__builtin_types_compatible_p(__typeof__(__devx_nullp(type)->field), OR_HDR(subtype))
#define OR_SAMETYPE_1(type, field, subtype) 1
#define OR_SUB_F0(type, field, off, subtype)                                              \
	{ .kind = OR_SUB, .tname = #type, .fname = #field, .our_off = (off),                  \
	  .our_w = PRM_SZ_BITS_##subtype, .hdr_off = __devx_bit_off(type, field),            \
	  .hdr_w = __devx_bit_sz(type, field), .our_st = PRM_SZ_BITS_##type,                  \
	  .hdr_st = __devx_st_sz_bits(type),                                                 \
	  .same_type = OR_CAT2(OR_SAMETYPE_, OR_FLAG(OR_SX(subtype)))(type, field, subtype) },
#define OR_SUB_F1(type, field, off, subtype)                                              \
	OR_UNVERIFIED(OR_SUB, type, field, OR_REASON(OR_FX(type, field)), off,              \
		      PRM_SZ_BITS_##subtype)
#define OR_SUB_S0(type, field, off, subtype)                                              \
	OR_CAT2(OR_SUB_F, OR_FLAG(OR_FX(type, field)))(type, field, off, subtype)
#define OR_SUB_S1(type, field, off, subtype)                                              \
	OR_UNVERIFIED(OR_SUB, type, field, OR_REASON(OR_SX(type)), off, PRM_SZ_BITS_##subtype)

const struct or_row or_rows[] = {
#define PRM_STRUCT(type, size_bits) OR_CAT(OR_STRUCT_, OR_FLAG(OR_SX(type)))(type, size_bits)
#define PRM_FIELD(type, field, off, width)                                               \
	OR_CAT(OR_FIELD_S, OR_FLAG(OR_SX(type)))(type, field, off, width)
#define PRM_BYTES(type, field, off, width)                                               \
	OR_CAT(OR_BYTES_S, OR_FLAG(OR_SX(type)))(type, field, off, width)
#define PRM_SUB(type, field, off, subtype)                                               \
	OR_CAT(OR_SUB_S, OR_FLAG(OR_SX(type)))(type, field, off, subtype)
#include "firmware-cmd/layouts/all.def"
#undef PRM_STRUCT
#undef PRM_FIELD
#undef PRM_BYTES
#undef PRM_SUB

/* wqe.def on its own: every row unverified, whatever it grows to. */
#define PRM_STRUCT(type, size_bits)                                                      \
	{ .kind = OR_STRUCT, .tname = #type, .fname = "", .why = or_wqe_reason,           \
	  .our_w = (size_bits), .our_st = (size_bits) },
#define PRM_FIELD(type, field, off, width)                                               \
	OR_UNVERIFIED(OR_FIELD, type, field, or_wqe_reason, off, width)
#define PRM_BYTES(type, field, off, width)                                               \
	OR_UNVERIFIED(OR_BYTES, type, field, or_wqe_reason, off, width)
#define PRM_SUB(type, field, off, subtype)                                               \
	OR_UNVERIFIED(OR_SUB, type, field, or_wqe_reason, off, PRM_SZ_BITS_##subtype)
#include "firmware-cmd/layouts/wqe.def"
#undef PRM_STRUCT
#undef PRM_FIELD
#undef PRM_BYTES
#undef PRM_SUB
};

const size_t or_nrows = sizeof(or_rows) / sizeof(or_rows[0]);

const struct or_row *or_row_find(const char *type, const char *field)
{
	if (!type)
		return NULL;
	if (!field)
		field = "";
	for (size_t i = 0; i < or_nrows; i++)
		if (strcmp(or_rows[i].tname, type) == 0 && strcmp(or_rows[i].fname, field) == 0)
			return &or_rows[i];
	return NULL;
}
