/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Descriptors of every PRM layout table, for tools that print a whole structure
 * (fwcmd caps), the emulator's dumps and the oracle.  Built from the same rows as the
 * accessors (firmware-cmd/layouts/all.def), so a field cannot be described twice.
 *
 * Each structure's rows follow its PRM_STRUCT row, so the field arrays are emitted as a
 * chain: a PRM_STRUCT row closes the previous array (with a NULL-name sentinel, which
 * also keeps a structure without fields a valid non-empty array) and opens its own. */
#include "firmware-cmd/prm.h"

#include <string.h>

#define PRM_STRUCT(type, size_bits)                                                     \
	{ NULL, 0, 0, PRM_KIND_FIELD, NULL } };                                          \
	static const struct prm_field_desc prm_fields_##type[] = {
#define PRM_FIELD(type, field, off, width) { #field, (off), (width), PRM_KIND_FIELD, NULL },
#define PRM_BYTES(type, field, off, width) { #field, (off), (width), PRM_KIND_BYTES, NULL },
#define PRM_SUB(type, field, off, subtype)                                              \
	{ #field, (off), PRM_SZ_BITS_##subtype, PRM_KIND_SUB, #subtype },

/* Head of the chain: only there so the first PRM_STRUCT row has an array to close. */
__attribute__((unused)) static const struct prm_field_desc prm_fields_chain_head_[] = {
#include "firmware-cmd/layouts/all.def"
	{ NULL, 0, 0, PRM_KIND_FIELD, NULL }
};

#undef PRM_STRUCT
#undef PRM_FIELD
#undef PRM_BYTES
#undef PRM_SUB

#define PRM_STRUCT(type, size_bits)                                                     \
	{ #type, (size_bits), prm_fields_##type,                                         \
	  sizeof(prm_fields_##type) / sizeof(prm_fields_##type[0]) - 1 },
#define PRM_FIELD(type, field, off, width)
#define PRM_BYTES(type, field, off, width)
#define PRM_SUB(type, field, off, subtype)

const struct prm_struct_desc prm_structs[] = {
#include "firmware-cmd/layouts/all.def"
};

#undef PRM_STRUCT
#undef PRM_FIELD
#undef PRM_BYTES
#undef PRM_SUB

const size_t prm_nstructs = sizeof(prm_structs) / sizeof(prm_structs[0]);

const struct prm_struct_desc *prm_struct_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < prm_nstructs; i++)
		if (strcmp(prm_structs[i].name, name) == 0)
			return &prm_structs[i];
	return NULL;
}

const struct prm_field_desc *prm_field_find(const struct prm_struct_desc *s, const char *name)
{
	if (!s || !name)
		return NULL;
	for (size_t i = 0; i < s->nfields; i++)
		if (strcmp(s->fields[i].name, name) == 0)
			return &s->fields[i];
	return NULL;
}
