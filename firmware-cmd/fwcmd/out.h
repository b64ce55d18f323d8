/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* fwcmd output: a readable table by default, JSON with --json.  Every structure is
 * printed from its layout descriptors (prm_struct_find), so a field added to the
 * layout tables appears here without a hand-written list. */
#ifndef UVERBS_FWCMD_OUT_H
#define UVERBS_FWCMD_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "firmware-cmd/prm.h"

struct fw_out {
	int json;
	int first;      /* JSON: no comma before the next member */
	int depth;
};

void out_begin(struct fw_out *o);              /* top-level object */
void out_end(struct fw_out *o);
void out_obj_begin(struct fw_out *o, const char *key, const char *title);
void out_obj_end(struct fw_out *o);
void out_str(struct fw_out *o, const char *key, const char *v);
void out_u64(struct fw_out *o, const char *key, uint64_t v);
void out_hex(struct fw_out *o, const char *key, uint64_t v);
void out_bytes(struct fw_out *o, const char *key, const uint8_t *p, size_t n);

/* A named number of a driver result (mx5_page_stats, mx5_health, ...): decimal (base left
 * out), or hex where it is a register image. */
struct fw_num {
	const char *key;
	uint64_t v;
	enum { FW_DEC, FW_HEX } base;
};
/* Object `key` (titled `title` in the table) holding the n numbers of nums. */
void out_nums(struct fw_out *o, const char *key, const char *title, const struct fw_num *nums, size_t n);
#define FW_NNUMS(a) (sizeof(a) / sizeof((a)[0]))

/* Every field of structure `type` at p (sub-structures nested); with `p2` non-NULL
 * two columns (max and current capabilities). */
int out_struct(struct fw_out *o, const char *type, const void *p);
int out_struct2(struct fw_out *o, const char *type, const void *max, const void *cur);

#endif
