/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The PRM accessor machinery (firmware-cmd/prm.h) and the descriptor tables
 * (prm_tables.c): bit placement at dword edges, neighbours untouched, 64-bit order,
 * byte arrays and sub-structures, and lookups.  The bit-for-bit agreement of every
 * row with mlx5_ifc.h is tests/oracle's job; here the machinery itself is pinned down
 * on hand-computed bytes. */
#include "firmware-cmd/prm.h"

#include <criterion/criterion.h>
#include <string.h>

static uint8_t buf[0x4000] __attribute__((aligned(8)));

static void fill(uint8_t v)
{
	memset(buf, v, sizeof(buf));
}

/* Every byte except [from, to) still holds v. */
static void expect_untouched_except(size_t from, size_t to, uint8_t v)
{
	for (size_t i = 0; i < sizeof(buf); i++)
		if (i < from || i >= to)
			cr_assert_eq(buf[i], v, "byte 0x%zx changed to 0x%02x", i, buf[i]);
}

Test(prm_bits, one_bit_field_at_the_last_bit_of_a_dword)
{
	/* cmd_queue_entry.ownership is bit 0x1ff: the LSB of byte 0x3f. */
	fill(0x00);
	PRM_SET(cmd_queue_entry, buf, ownership, 1);
	cr_assert_eq(buf[0x3f], 0x01);
	expect_untouched_except(0x3f, 0x40, 0x00);
	fill(0xff);
	PRM_SET(cmd_queue_entry, buf, ownership, 0);
	cr_assert_eq(buf[0x3f], 0xfe);
	expect_untouched_except(0x3f, 0x40, 0xff);
	cr_assert_eq(PRM_GET(cmd_queue_entry, buf, ownership), 0);
}

Test(prm_bits, one_bit_field_at_the_first_bit_of_a_dword)
{
	/* initial_seg.initializing is bit 0xfe0: the MSB of byte 0x1fc. */
	fill(0x00);
	PRM_SET(initial_seg, buf, initializing, 1);
	cr_assert_eq(buf[0x1fc], 0x80);
	expect_untouched_except(0x1fc, 0x1fd, 0x00);
	cr_assert_eq(PRM_GET(initial_seg, buf, initializing), 1);
}

Test(prm_bits, seven_bit_field_beside_a_one_bit_field)
{
	/* cmd_queue_entry.status (bits 0x1f8..0x1fe) shares byte 0x3f with ownership. */
	fill(0x00);
	PRM_SET(cmd_queue_entry, buf, ownership, 1);
	PRM_SET(cmd_queue_entry, buf, status, 0x7f);
	cr_assert_eq(buf[0x3f], 0xff);
	PRM_SET(cmd_queue_entry, buf, status, 0x05);
	cr_assert_eq(buf[0x3f], 0x0b);
	cr_assert_eq(PRM_GET(cmd_queue_entry, buf, status), 0x05);
	cr_assert_eq(PRM_GET(cmd_queue_entry, buf, ownership), 1);
	expect_untouched_except(0x3f, 0x40, 0x00);
}

Test(prm_bits, value_wider_than_the_field_is_truncated_not_spilled)
{
	fill(0x00);
	PRM_SET(cmd_queue_entry, buf, status, 0xffffffffu);
	cr_assert_eq(buf[0x3f], 0xfe);
	cr_assert_eq(PRM_GET(cmd_queue_entry, buf, ownership), 0);
	expect_untouched_except(0x3f, 0x40, 0x00);
}

Test(prm_bits, thirty_one_bit_fields_at_both_ends_of_a_dword)
{
	fill(0x00);
	prm_bits_set(buf, 0x21, 31, 0x7fffffff); /* low 31 bits of dword 1 */
	cr_assert_eq(buf[4], 0x7f);
	cr_assert_eq(buf[7], 0xff);
	expect_untouched_except(4, 8, 0x00);
	cr_assert_eq(prm_bits_get(buf, 0x21, 31), 0x7fffffff);
	fill(0x00);
	prm_bits_set(buf, 0x20, 31, 0x40000001); /* high 31 bits of dword 1 */
	cr_assert_eq(buf[4], 0x80);
	cr_assert_eq(buf[7], 0x02);
	expect_untouched_except(4, 8, 0x00);
	cr_assert_eq(prm_bits_get(buf, 0x20, 31), 0x40000001);
}

Test(prm_bits, thirty_two_bit_field_is_big_endian)
{
	fill(0xaa);
	PRM_SET(cmd_queue_entry, buf, input_length, 0x01020304);
	cr_assert_eq(memcmp(buf + 4, "\x01\x02\x03\x04", 4), 0);
	expect_untouched_except(4, 8, 0xaa);
	cr_assert_eq(PRM_GET(cmd_queue_entry, buf, input_length), 0x01020304);
}

Test(prm_bits, sixty_four_bit_field_puts_the_high_dword_first)
{
	/* mkc.start_addr: 64 bits at bit 0x80. */
	fill(0x55);
	PRM_SET(mkc, buf, start_addr, 0x1122334455667788ull);
	cr_assert_eq(memcmp(buf + 0x10, "\x11\x22\x33\x44\x55\x66\x77\x88", 8), 0);
	expect_untouched_except(0x10, 0x18, 0x55);
	cr_assert_eq(PRM_GET(mkc, buf, start_addr), 0x1122334455667788ull);
	cr_assert_eq(PRM_WIDTH(mkc, start_addr), 64);
}

Test(prm_bits, known_command_header_bytes)
{
	/* ENABLE_HCA (opcode 0x104), op_mod 0, function_id 0x12: PRM byte layout. */
	fill(0x00);
	PRM_SET(enable_hca_in, buf, opcode, 0x104);
	PRM_SET(enable_hca_in, buf, function_id, 0x12);
	static const uint8_t want[16] = { 0x01, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x12 };
	cr_assert_eq(memcmp(buf, want, sizeof(want)), 0);
	cr_assert_eq(PRM_SIZE(enable_hca_in), 16);
}

Test(prm_bits, byte_array_address_and_size)
{
	cr_assert_eq(PRM_ADDR(cmd_queue_entry, buf, command_input_inline_data), buf + 0x10);
	cr_assert_eq(PRM_WIDTH(cmd_queue_entry, command_input_inline_data), 128);
	cr_assert_eq(PRM_ADDR(roce_addr_layout, buf, source_l3_address), buf);
	cr_assert_eq(PRM_WIDTH(roce_addr_layout, source_l3_address), 128);
	/* Open-ended arrays (width 0) start where the fixed part ends. */
	cr_assert_eq(PRM_ADDR(manage_pages_in, buf, pas), buf + PRM_SIZE(manage_pages_in));
	cr_assert_eq(PRM_WIDTH(manage_pages_in, pas), 0);
}

Test(prm_bits, sub_structure_address_and_nested_access)
{
	uint8_t *qpc = PRM_ADDR(create_qp_in, buf, qpc);
	cr_assert_eq(qpc, buf + PRM_OFF(create_qp_in, qpc) / 8);
	cr_assert_eq(PRM_WIDTH(create_qp_in, qpc), PRM_SIZE(qpc) * 8);
	uint8_t *path = PRM_ADDR(qpc, qpc, primary_address_path);
	fill(0x00);
	PRM_SET(ads, path, vhca_port_num, 1);
	size_t byte = (PRM_OFF(create_qp_in, qpc) + PRM_OFF(qpc, primary_address_path) +
		       PRM_OFF(ads, vhca_port_num)) / 8;
	cr_assert_neq(buf[byte], 0);
	expect_untouched_except(byte, byte + 1, 0x00);
	cr_assert_eq(PRM_GET(ads, path, vhca_port_num), 1);
}

Test(prm_tables, finds_structures_and_fields_by_name)
{
	const struct prm_struct_desc *s = prm_struct_find("cmd_hca_cap");
	cr_assert_not_null(s);
	cr_assert_eq(s->size_bits, PRM_SIZE(cmd_hca_cap) * 8);
	const struct prm_field_desc *f = prm_field_find(s, "log_max_qp");
	cr_assert_not_null(f);
	cr_assert_eq(f->bit_off, PRM_OFF(cmd_hca_cap, log_max_qp));
	cr_assert_eq(f->width, PRM_WIDTH(cmd_hca_cap, log_max_qp));
	cr_assert_eq(f->kind, PRM_KIND_FIELD);
	f = prm_field_find(prm_struct_find("create_qp_in"), "qpc");
	cr_assert_not_null(f);
	cr_assert_eq(f->kind, PRM_KIND_SUB);
	cr_assert_str_eq(f->subtype, "qpc");
	cr_assert_eq(f->width, PRM_SIZE(qpc) * 8);
	f = prm_field_find(prm_struct_find("roce_addr_layout"), "source_l3_address");
	cr_assert_not_null(f);
	cr_assert_eq(f->kind, PRM_KIND_BYTES);
}

Test(prm_tables, unknown_or_null_names_are_not_found)
{
	cr_assert_null(prm_struct_find("no_such_struct"));
	cr_assert_null(prm_struct_find(NULL));
	cr_assert_null(prm_field_find(prm_struct_find("cmd_hca_cap"), "no_such_field"));
	cr_assert_null(prm_field_find(NULL, "log_max_qp"));
	cr_assert_null(prm_field_find(prm_struct_find("cmd_hca_cap"), NULL));
}

/* Rows follow the structure (prm.h).  Equal offsets are allowed: a table may name a
 * whole byte and the bits inside it (wqe_ctrl_seg.fm_ce_se and fm, ce, se). */
Test(prm_tables, every_table_is_in_offset_order_and_in_bounds)
{
	cr_assert_gt(prm_nstructs, 100);
	for (size_t i = 0; i < prm_nstructs; i++) {
		const struct prm_struct_desc *s = &prm_structs[i];
		cr_assert_eq(s->size_bits % 32, 0, "%s: size not whole dwords", s->name);
		uint32_t prev = 0;
		for (size_t j = 0; j < s->nfields; j++) {
			const struct prm_field_desc *f = &s->fields[j];
			cr_assert_geq(f->bit_off, prev, "%s.%s is out of order", s->name, f->name);
			cr_assert_leq(f->bit_off + f->width, s->size_bits, "%s.%s beyond the end",
				      s->name, f->name);
			if (f->width == 0)
				cr_assert_eq(f->bit_off, s->size_bits,
					     "%s.%s: an open-ended array must be last", s->name, f->name);
			prev = f->bit_off;
		}
	}
}

Test(prm_tables, names_are_unique_and_subtypes_resolve)
{
	for (size_t i = 0; i < prm_nstructs; i++) {
		const struct prm_struct_desc *s = &prm_structs[i];
		cr_assert_eq(prm_struct_find(s->name), s, "structure %s listed twice", s->name);
		for (size_t j = 0; j < s->nfields; j++) {
			const struct prm_field_desc *f = &s->fields[j];
			cr_assert_eq(prm_field_find(s, f->name), f, "%s.%s listed twice", s->name,
				     f->name);
			if (f->kind != PRM_KIND_SUB)
				continue;
			const struct prm_struct_desc *sub = prm_struct_find(f->subtype);
			cr_assert_not_null(sub, "%s.%s: subtype %s", s->name, f->name, f->subtype);
			cr_assert_lt(sub, s, "%s.%s: subtype must come first", s->name, f->name);
			cr_assert_eq(sub->size_bits, f->width);
		}
	}
}
