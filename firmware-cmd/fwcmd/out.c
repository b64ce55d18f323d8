/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* fwcmd output helpers (out.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "firmware-cmd/fwcmd/out.h"

static void indent(struct fw_out *o)
{
	for (int i = 0; i < o->depth; i++)
		fputs("  ", stdout);
}

static void json_key(struct fw_out *o, const char *key)
{
	if (!o->first)
		fputs(",\n", stdout);
	o->first = 0;
	indent(o);
	if (key)
		printf("\"%s\": ", key);
}

void out_begin(struct fw_out *o)
{
	o->first = 1;
	o->depth = 1;
	if (o->json)
		fputs("{\n", stdout);
}

void out_end(struct fw_out *o)
{
	if (o->json)
		fputs("\n}\n", stdout);
}

void out_obj_begin(struct fw_out *o, const char *key, const char *title)
{
	if (o->json) {
		json_key(o, key);
		fputs("{\n", stdout);
		o->first = 1;
	} else {
		indent(o);
		printf("%s:\n", title ? title : key);
	}
	o->depth++;
}

void out_obj_end(struct fw_out *o)
{
	o->depth--;
	if (o->json) {
		fputs("\n", stdout);
		indent(o);
		fputs("}", stdout);
		o->first = 0;
	}
}

void out_str(struct fw_out *o, const char *key, const char *v)
{
	if (o->json) {
		json_key(o, key);
		putchar('"');
		for (const char *s = v; *s; s++) {
			if (*s == '"' || *s == '\\')
				printf("\\%c", *s);
			else if ((unsigned char)*s < 0x20)
				printf("\\u%04x", *s);
			else
				putchar(*s);
		}
		putchar('"');
	} else {
		indent(o);
		printf("%-34s %s\n", key, v);
	}
}

void out_u64(struct fw_out *o, const char *key, uint64_t v)
{
	if (o->json) {
		json_key(o, key);
		printf("%" PRIu64, v);
	} else {
		indent(o);
		if (v > 9)
			printf("%-34s %" PRIu64 " (0x%" PRIx64 ")\n", key, v, v);
		else
			printf("%-34s %" PRIu64 "\n", key, v);
	}
}

void out_hex(struct fw_out *o, const char *key, uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	out_str(o, key, buf);
}

void out_nums(struct fw_out *o, const char *key, const char *title, const struct fw_num *nums, size_t n)
{
	out_obj_begin(o, key, title);
	for (size_t i = 0; i < n; i++) {
		if (nums[i].base == FW_HEX)
			out_hex(o, nums[i].key, nums[i].v);
		else
			out_u64(o, nums[i].key, nums[i].v);
	}
	out_obj_end(o);
}

void out_bytes(struct fw_out *o, const char *key, const uint8_t *p, size_t n)
{
	char buf[2 * 256 + 1];
	if (n > 256)
		n = 256;
	for (size_t i = 0; i < n; i++)
		snprintf(buf + 2 * i, 3, "%02x", p[i]);
	buf[2 * n] = '\0';
	out_str(o, key, buf);
}

static void field_value(const struct prm_field_desc *f, const uint8_t *base, char *buf, size_t len)
{
	uint64_t v = prm_bits_get(base, f->bit_off, f->width);
	if (v > 9)
		snprintf(buf, len, "%" PRIu64 " (0x%" PRIx64 ")", v, v);
	else
		snprintf(buf, len, "%" PRIu64, v);
}

/* Walk a structure: one line (or JSON member) per field; sub-structures nest. */
static int walk(struct fw_out *o, const struct prm_struct_desc *s, const uint8_t *a,
		const uint8_t *b, unsigned base_bits)
{
	for (size_t i = 0; i < s->nfields; i++) {
		const struct prm_field_desc *f = &s->fields[i];
		unsigned off = base_bits + f->bit_off;
		if (f->kind == PRM_KIND_SUB) {
			const struct prm_struct_desc *sub = prm_struct_find(f->subtype);
			if (!sub)
				continue;
			out_obj_begin(o, f->name, f->name);
			walk(o, sub, a, b, off);
			out_obj_end(o);
			continue;
		}
		if (f->kind == PRM_KIND_BYTES) {
			if (!f->width)
				continue;  /* open-ended list: not part of the fixed structure */
			if (b && !o->json) {
				indent(o);
				printf("%-34s (%u bytes)\n", f->name, f->width / 8);
				continue;
			}
			out_bytes(o, f->name, a + off / 8, f->width / 8);
			continue;
		}
		/* a field read through the descriptor: the same bit rule as the accessors */
		struct prm_field_desc shifted = *f;
		shifted.bit_off = off;
		if (!b) {
			out_u64(o, f->name, prm_bits_get(a, off, f->width));
		} else if (o->json) {
			json_key(o, f->name);
			printf("{\"max\": %" PRIu64 ", \"cur\": %" PRIu64 "}",
			       prm_bits_get(a, off, f->width), prm_bits_get(b, off, f->width));
		} else {
			char v1[48], v2[48];
			field_value(&shifted, a, v1, sizeof(v1));
			field_value(&shifted, b, v2, sizeof(v2));
			indent(o);
			printf("%-40s %-22s %s\n", f->name, v1, v2);
		}
	}
	return 0;
}

int out_struct(struct fw_out *o, const char *type, const void *p)
{
	const struct prm_struct_desc *s = prm_struct_find(type);
	if (!s)
		return -1;
	return walk(o, s, p, NULL, 0);
}

int out_struct2(struct fw_out *o, const char *type, const void *max, const void *cur)
{
	const struct prm_struct_desc *s = prm_struct_find(type);
	if (!s)
		return -1;
	if (!o->json) {
		indent(o);
		printf("%-40s %-22s %s\n", "field", "max", "current");
	}
	return walk(o, s, max, cur, 0);
}
