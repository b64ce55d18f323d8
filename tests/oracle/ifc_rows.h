/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The rows of our PRM tables paired with Linux's mlx5_ifc.h (ifc_rows.c): for each
 * structure and field, our offset/width and the header's, and for every verified
 * integer field a DEVX_SET/DEVX_GET encoder next to ours.  ifc_oracle.c checks them
 * all; any other oracle program (e.g. one decoding real firmware traces with both
 * our getters and DEVX_GET) can link ifc_rows.c, built like run_mlx5_ifc.sh builds it,
 * and look a field up by name.
 */
#ifndef UVERBS_TESTS_ORACLE_IFC_ROWS_H
#define UVERBS_TESTS_ORACLE_IFC_ROWS_H
#include <stddef.h>
#include <stdint.h>

enum or_kind { OR_STRUCT, OR_FIELD, OR_BYTES, OR_SUB };

struct or_row {
	enum or_kind kind;
	const char *tname, *fname;
	const char *why;    /* non-NULL: unverified, with this reason */
	unsigned long our_off, our_w;    /* bits (struct: size) */
	unsigned long hdr_off, hdr_w;    /* bits (struct: size) */
	unsigned long our_st, hdr_st;    /* structure sizes, bits */
	int flex;                        /* open-ended array (width 0) */
	int same_type;                   /* PRM_SUB: header member has the subtype */
	void (*our_set)(void *, uint64_t);
	uint64_t (*our_get)(const void *);
	void (*dx_set)(void *, uint64_t);
	uint64_t (*dx_get)(const void *);
};

/* Every row of firmware-cmd/layouts/all.def (wqe.def's last), in table order; a
 * structure's own row (OR_STRUCT, fname "") comes before its fields. */
extern const struct or_row or_rows[];
extern const size_t or_nrows;

/* The row of type.field (field "" or NULL: the structure's own row), or NULL. */
const struct or_row *or_row_find(const char *type, const char *field);

#endif
