/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RoCE v2 header layer (hw/emu/roce_hdr.h): the opcode table against the IBTA's
 * header combinations, byte layouts, PSN arithmetic, AETH encodings, P_Key rules,
 * UDP source port entropy. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "hw/emu/roce_hdr.h"

#define F(x) EMU_ROCE_F_##x

/* IBTA 9.2: BTH + extension headers of each opcode we implement, written out by hand
 * from the spec's "valid packet header combinations" (and rxe_opcode.c, which agrees). */
static const struct { uint8_t op; uint8_t len; uint32_t hdrs; } expect[] = {
	{ 0x00, 12, 0 }, { 0x01, 12, 0 }, { 0x02, 12, 0 }, { 0x03, 16, F(IMMDT) },
	{ 0x04, 12, 0 }, { 0x05, 16, F(IMMDT) }, { 0x06, 28, F(RETH) }, { 0x07, 12, 0 },
	{ 0x08, 12, 0 }, { 0x09, 16, F(IMMDT) }, { 0x0a, 28, F(RETH) }, { 0x0b, 32, F(RETH) | F(IMMDT) },
	{ 0x0c, 28, F(RETH) }, { 0x0d, 16, F(AETH) }, { 0x0e, 12, 0 }, { 0x0f, 16, F(AETH) },
	{ 0x10, 16, F(AETH) }, { 0x11, 16, F(AETH) }, { 0x12, 24, F(AETH) | F(ATOMICACKETH) },
	{ 0x13, 40, F(ATOMICETH) }, { 0x14, 40, F(ATOMICETH) }, { 0x16, 16, F(IETH) }, { 0x17, 16, F(IETH) },
	{ 0x20, 12, 0 }, { 0x21, 12, 0 }, { 0x22, 12, 0 }, { 0x23, 16, F(IMMDT) },
	{ 0x24, 12, 0 }, { 0x25, 16, F(IMMDT) }, { 0x26, 28, F(RETH) }, { 0x27, 12, 0 },
	{ 0x28, 12, 0 }, { 0x29, 16, F(IMMDT) }, { 0x2a, 28, F(RETH) }, { 0x2b, 32, F(RETH) | F(IMMDT) },
	{ 0x64, 20, F(DETH) }, { 0x65, 24, F(DETH) | F(IMMDT) }, { 0x81, 28, F(CNPPAD) },
	/* XRC (9.2: the RC layouts with an XRCETH after the BTH on every request; READ
	 * RESPONSEs and ACKs carry none) */
	{ 0xa0, 16, F(XRCETH) }, { 0xa1, 16, F(XRCETH) }, { 0xa2, 16, F(XRCETH) },
	{ 0xa3, 20, F(XRCETH) | F(IMMDT) }, { 0xa4, 16, F(XRCETH) }, { 0xa5, 20, F(XRCETH) | F(IMMDT) },
	{ 0xa6, 32, F(XRCETH) | F(RETH) }, { 0xa7, 16, F(XRCETH) }, { 0xa8, 16, F(XRCETH) },
	{ 0xa9, 20, F(XRCETH) | F(IMMDT) }, { 0xaa, 32, F(XRCETH) | F(RETH) },
	{ 0xab, 36, F(XRCETH) | F(RETH) | F(IMMDT) }, { 0xac, 32, F(XRCETH) | F(RETH) },
	{ 0xad, 16, F(AETH) }, { 0xae, 12, 0 }, { 0xaf, 16, F(AETH) }, { 0xb0, 16, F(AETH) },
	{ 0xb1, 16, F(AETH) }, { 0xb2, 24, F(AETH) | F(ATOMICACKETH) }, { 0xb3, 44, F(XRCETH) | F(ATOMICETH) },
	{ 0xb4, 44, F(XRCETH) | F(ATOMICETH) }, { 0xb6, 20, F(XRCETH) | F(IETH) }, { 0xb7, 20, F(XRCETH) | F(IETH) },
};
#define HDR_FLAGS (F(XRCETH) | F(DETH) | F(RETH) | F(ATOMICETH) | F(AETH) | F(ATOMICACKETH) | F(IMMDT) | F(IETH) | F(CNPPAD))

Test(roce_hdr, opcode_table_has_exactly_the_ibta_header_combinations)
{
	unsigned known = 0;

	for (unsigned op = 0; op < 256; op++) {
		const struct emu_roce_opinfo *o = emu_roce_opinfo((uint8_t)op);
		int idx = -1;

		for (unsigned i = 0; i < sizeof(expect) / sizeof(expect[0]); i++)
			if (expect[i].op == op)
				idx = (int)i;
		if (idx < 0) {
			cr_expect_null(o, "opcode 0x%02x should be unsupported", op);
			cr_expect_eq(emu_roce_hdr_len((uint8_t)op), 0);
			continue;
		}
		known++;
		cr_assert_not_null(o, "opcode 0x%02x missing", op);
		cr_expect_eq(o->hdr_len, expect[idx].len, "0x%02x len %u", op, o->hdr_len);
		cr_expect_eq(o->flags & HDR_FLAGS, expect[idx].hdrs, "0x%02x headers", op);
		cr_expect_eq(emu_roce_hdr_len((uint8_t)op), expect[idx].len);
	}
	cr_expect_eq(known, 38 + 23);
}

Test(roce_hdr, names_follow_the_ibta_spelling)
{
	cr_expect_str_eq(emu_roce_opinfo(0x03)->name, "RC_SEND_LAST_WITH_IMMEDIATE");
	cr_expect_str_eq(emu_roce_opinfo(0x0d)->name, "RC_RDMA_READ_RESPONSE_FIRST");
	cr_expect_str_eq(emu_roce_opinfo(0x2b)->name, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");
	cr_expect_str_eq(emu_roce_opinfo(0x17)->name, "RC_SEND_ONLY_WITH_INVALIDATE");
	cr_expect_str_eq(emu_roce_opinfo(0x64)->name, "UD_SEND_ONLY");
	cr_expect_str_eq(emu_roce_opinfo(0x11)->name, "RC_ACKNOWLEDGE");
}

Test(roce_hdr, only_payload_opcodes_may_carry_data)
{
	cr_expect(emu_roce_opinfo(0x00)->flags & F(PAYLOAD));
	cr_expect(emu_roce_opinfo(0x0e)->flags & F(PAYLOAD));
	cr_expect(emu_roce_opinfo(0x65)->flags & F(PAYLOAD));
	cr_expect_not(emu_roce_opinfo(0x0c)->flags & F(PAYLOAD));   /* READ request */
	cr_expect_not(emu_roce_opinfo(0x11)->flags & F(PAYLOAD));   /* ACK */
	cr_expect_not(emu_roce_opinfo(0x12)->flags & F(PAYLOAD));
	cr_expect_not(emu_roce_opinfo(0x13)->flags & F(PAYLOAD));
	cr_expect_not(emu_roce_opinfo(0x81)->flags & F(PAYLOAD));
}

Test(roce_hdr, transport_is_the_top_three_opcode_bits)
{
	cr_expect_eq(emu_roce_op_transport(0x0a), EMU_ROCE_TR_RC);
	cr_expect_eq(emu_roce_op_transport(0x2a), EMU_ROCE_TR_UC);
	cr_expect_eq(emu_roce_op_transport(0x64), EMU_ROCE_TR_UD);
	cr_expect_eq(emu_roce_op_transport(0x81), EMU_ROCE_TR_CNP);
	cr_expect_eq(emu_roce_op_transport(0xa4), EMU_ROCE_TR_XRC);
	cr_expect_eq(emu_roce_op_transport(0xbf), EMU_ROCE_TR_XRC);
	cr_expect_eq(emu_roce_op_transport(0xc0), EMU_ROCE_TR_CNP);
}

Test(roce_hdr, bth_bits_land_where_the_ibta_puts_them)
{
	struct emu_roce_bth b = { .opcode = 0x0b, .se = true, .migreq = true, .padcnt = 3, .tver = 0,
				  .pkey = 0x8001, .fecn = true, .becn = false, .dqpn = 0xabcdef,
				  .ackreq = true, .psn = 0x123456 };
	uint8_t w[12];
	static const uint8_t want[12] = { 0x0b, 0xf0, 0x80, 0x01, 0x80, 0xab, 0xcd, 0xef, 0x80, 0x12, 0x34, 0x56 };
	struct emu_roce_bth r;

	emu_roce_bth_write(w, &b);
	cr_assert_arr_eq(w, want, 12);
	emu_roce_bth_read(w, &r);
	cr_expect_eq(r.opcode, 0x0b);
	cr_expect(r.se && r.migreq && r.fecn && !r.becn && r.ackreq);
	cr_expect_eq(r.padcnt, 3);
	cr_expect_eq(r.pkey, 0x8001);
	cr_expect_eq(r.dqpn, 0xabcdef);
	cr_expect_eq(r.psn, 0x123456);
}

Test(roce_hdr, bth_tver_and_reserved_bits_round_trip)
{
	struct emu_roce_bth b = { .opcode = 0x04, .tver = 0xf, .resv6 = 0x3f, .becn = true, .resv7 = 0x7f };
	uint8_t w[12];
	struct emu_roce_bth r;

	emu_roce_bth_write(w, &b);
	cr_expect_eq(w[1], 0x0f);
	cr_expect_eq(w[4], 0x7f);
	cr_expect_eq(w[8], 0x7f);
	emu_roce_bth_read(w, &r);
	cr_expect_eq(r.tver, 0xf);
	cr_expect_eq(r.resv6, 0x3f);
	cr_expect_eq(r.resv7, 0x7f);
	cr_expect(r.becn && !r.fecn);
}

static void fill_all(struct emu_roce_hdrs *h, uint8_t op)
{
	memset(h, 0, sizeof(*h));
	h->bth.opcode = op;
	h->bth.pkey = 0xffff;
	h->bth.dqpn = 0x000123;
	h->bth.psn = 0xfffffe;
	h->reth.va = 0x1122334455667788ull;
	h->reth.rkey = 0x99aabbcc;
	h->reth.dlen = 0x1000;
	h->aeth.syndrome = 0x1f;
	h->aeth.msn = 0x00abcd;
	h->atomic.va = 0x0102030405060708ull;
	h->atomic.rkey = 0x0a0b0c0d;
	h->atomic.swap_add = 0x1111222233334444ull;
	h->atomic.compare = 0x5555666677778888ull;
	h->atomic_ack_orig = 0xdeadbeefcafef00dull;
	h->imm = 0x01020304;
	h->ieth_rkey = 0x00c0ffee;
	h->deth.qkey = 0x11111111;
	h->deth.sqpn = 0x000042;
	h->xrc_srqn = 0x00beef;
}

Test(roce_hdr, every_opcode_writes_and_reads_back_only_its_headers)
{
	for (unsigned op = 0; op < 256; op++) {
		const struct emu_roce_opinfo *o = emu_roce_opinfo((uint8_t)op);
		struct emu_roce_hdrs h, r;
		uint8_t buf[64];

		if (!o)
			continue;
		fill_all(&h, (uint8_t)op);
		cr_assert_eq(emu_roce_hdrs_write(buf, sizeof(buf), &h), o->hdr_len, "0x%02x", op);
		cr_assert_eq(emu_roce_hdrs_read(buf, o->hdr_len, &r), o->hdr_len, "0x%02x", op);
		cr_expect_eq(r.bth.psn, 0xfffffe);
		cr_expect_eq(r.reth.va, o->flags & F(RETH) ? h.reth.va : 0, "0x%02x reth", op);
		cr_expect_eq(r.reth.dlen, o->flags & F(RETH) ? 0x1000u : 0);
		cr_expect_eq(r.aeth.msn, o->flags & F(AETH) ? 0xabcdu : 0, "0x%02x aeth", op);
		cr_expect_eq(r.atomic.compare, o->flags & F(ATOMICETH) ? h.atomic.compare : 0);
		cr_expect_eq(r.atomic.swap_add, o->flags & F(ATOMICETH) ? h.atomic.swap_add : 0);
		cr_expect_eq(r.atomic_ack_orig, o->flags & F(ATOMICACKETH) ? h.atomic_ack_orig : 0);
		cr_expect_eq(r.imm, o->flags & F(IMMDT) ? 0x01020304u : 0, "0x%02x imm", op);
		cr_expect_eq(r.ieth_rkey, o->flags & F(IETH) ? 0xc0ffeeu : 0);
		cr_expect_eq(r.deth.sqpn, o->flags & F(DETH) ? 0x42u : 0);
		cr_expect_eq(r.deth.qkey, o->flags & F(DETH) ? 0x11111111u : 0);
		cr_expect_eq(r.xrc_srqn, o->flags & F(XRCETH) ? 0xbeefu : 0, "0x%02x xrceth", op);
	}
}

Test(roce_hdr, extension_headers_follow_the_bth_in_ibta_order)
{
	struct emu_roce_hdrs h;
	uint8_t b[64];

	fill_all(&h, 0x0b);     /* RDMA WRITE ONLY with immediate: BTH, RETH, ImmDt */
	emu_roce_hdrs_write(b, sizeof(b), &h);
	cr_expect_eq(b[12], 0x11);      /* RETH.VA, most significant byte first */
	cr_expect_eq(b[20], 0x99);      /* R_Key */
	cr_expect_eq(b[26], 0x10);      /* DMA length 0x1000 */
	cr_expect_eq(b[28], 0x01);      /* ImmDt */
	fill_all(&h, 0x12);     /* ATOMIC ACK: BTH, AETH, AtomicAckETH */
	emu_roce_hdrs_write(b, sizeof(b), &h);
	cr_expect_eq(b[12], 0x1f);
	cr_expect_eq(b[15], 0xcd);
	cr_expect_eq(b[16], 0xde);
	fill_all(&h, 0x13);     /* CMP_SWAP: VA, R_Key, swap, compare */
	emu_roce_hdrs_write(b, sizeof(b), &h);
	cr_expect_eq(b[24], 0x11);
	cr_expect_eq(b[32], 0x55);
	fill_all(&h, 0x65);     /* UD: BTH, DETH, ImmDt */
	emu_roce_hdrs_write(b, sizeof(b), &h);
	cr_expect_eq(b[12], 0x11);
	cr_expect_eq(b[19], 0x42);
	cr_expect_eq(b[20], 0x01);
	/* XRC RDMA WRITE ONLY with immediate: BTH, XRCETH (8 reserved bits, then the
	 * 24-bit XRC SRQ number), RETH, ImmDt */
	fill_all(&h, 0xab);
	h.xrc_srqn = 0xfedcba98;        /* only 24 bits go out */
	emu_roce_hdrs_write(b, sizeof(b), &h);
	cr_expect_eq(b[12], 0x00);
	cr_expect_eq(b[13], 0xdc);
	cr_expect_eq(b[15], 0x98);
	cr_expect_eq(b[16], 0x11);
	cr_expect_eq(b[24], 0x99);
	cr_expect_eq(b[32], 0x01);
	b[12] = 0xff;                   /* the reserved byte is ignored on receipt */
	cr_expect_eq(emu_roce_hdrs_read(b, 36, &h), 36);
	cr_expect_eq(h.xrc_srqn, 0xdcba98u);
}

Test(roce_hdr, short_or_unknown_headers_are_refused)
{
	struct emu_roce_hdrs h;
	uint8_t b[64] = { 0x06 };

	cr_expect_eq(emu_roce_hdrs_read(b, 27, &h), -EMSGSIZE);
	cr_expect_eq(emu_roce_hdrs_read(b, 11, &h), -EMSGSIZE);
	b[0] = 0x15;
	cr_expect_eq(emu_roce_hdrs_read(b, 64, &h), -EPROTO);
	cr_expect_eq(h.bth.opcode, 0x15);
	fill_all(&h, 0x13);
	cr_expect_eq(emu_roce_hdrs_write(b, 39, &h), -ENOSPC);
}

Test(roce_hdr, opcode_for_maps_message_positions)
{
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_RC, F(SEND), F(FIRST), false, false), 0x00);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_RC, F(SEND), F(LAST), true, false), 0x03);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_RC, F(SEND), F(LAST), false, true), 0x16);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_RC, F(SEND), F(ONLY), false, true), 0x17);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_RC, F(WRITE), F(ONLY), true, false), 0x0b);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_RC, F(READ_RESP), F(MIDDLE), false, false), 0x0e);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_UC, F(WRITE), F(FIRST), false, false), 0x26);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_UC, F(SEND), F(LAST), true, false), 0x23);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_UD, F(SEND), F(ONLY), true, false), 0x65);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_UD, F(SEND), F(ONLY), false, false), 0x64);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_XRC, F(SEND), F(ONLY), false, false), 0xa4);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_XRC, F(SEND), F(ONLY), false, true), 0xb7);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_XRC, F(WRITE), F(LAST), true, false), 0xa9);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_XRC, F(READ_RESP), F(FIRST), false, false), 0xad);
}

Test(roce_hdr, opcode_for_refuses_what_the_ibta_does_not_define)
{
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_UC, F(SEND), F(LAST), false, true), -EINVAL);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_UC, F(READ_RESP), F(ONLY), false, false), -EINVAL);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_UD, F(SEND), F(FIRST), false, false), -EINVAL);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_UD, F(WRITE), F(ONLY), false, false), -EINVAL);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_RC, F(SEND), F(FIRST), true, false), -EINVAL);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_RC, F(WRITE), F(LAST), false, true), -EINVAL);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_RC, F(SEND), F(ONLY), true, true), -EINVAL);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_RC, F(SEND), F(FIRST) | F(MIDDLE), false, false), -EINVAL);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_RD, F(SEND), F(ONLY), false, false), -EINVAL);
	cr_expect_eq(emu_roce_opcode_for(EMU_ROCE_TR_RC, F(ATOMIC), F(ONLY), false, false), -EINVAL);
}

Test(roce_hdr, opcode_for_results_agree_with_the_table)
{
	static const uint32_t kinds[] = { F(SEND), F(WRITE), F(READ_RESP) };
	static const uint32_t pos[] = { F(FIRST), F(MIDDLE), F(LAST), F(ONLY) };
	unsigned n = 0;

	for (int tr = 0; tr < 6; tr++)
		for (unsigned k = 0; k < 3; k++)
			for (unsigned p = 0; p < 4; p++)
				for (int x = 0; x < 3; x++) {
					int op = emu_roce_opcode_for((enum emu_roce_transport)tr, kinds[k], pos[p],
								     x == 1, x == 2);
					const struct emu_roce_opinfo *o;

					if (op < 0)
						continue;
					n++;
					o = emu_roce_opinfo((uint8_t)op);
					cr_assert_not_null(o);
					cr_expect_eq(o->flags & kinds[k], kinds[k]);
					cr_expect_eq(o->flags & (F(FIRST) | F(MIDDLE) | F(LAST)), pos[p], "op 0x%02x", op);
					cr_expect_eq(!!(o->flags & F(IMMDT)), x == 1);
					cr_expect_eq(!!(o->flags & F(IETH)), x == 2);
					cr_expect_eq(emu_roce_op_transport((uint8_t)op), (enum emu_roce_transport)tr);
				}
	/* RC and XRC: 8 send + 6 write + 4 read resp each; UC: 6 send + 6 write; UD: 2 */
	cr_expect_eq(n, 18 + 12 + 2 + 18);
}

Test(roce_hdr, opcode_sequence_allows_only_middle_or_last_inside_a_message)
{
	cr_expect(emu_roce_opcode_follows(-1, 0x00));
	cr_expect(emu_roce_opcode_follows(-1, 0x04));
	cr_expect_not(emu_roce_opcode_follows(-1, 0x01));
	cr_expect_not(emu_roce_opcode_follows(-1, 0x02));
	cr_expect(emu_roce_opcode_follows(0x00, 0x01));
	cr_expect(emu_roce_opcode_follows(0x01, 0x03));
	cr_expect_not(emu_roce_opcode_follows(0x00, 0x00));     /* FIRST inside a message */
	cr_expect_not(emu_roce_opcode_follows(0x00, 0x08));     /* WRITE LAST inside a SEND */
	cr_expect_not(emu_roce_opcode_follows(0x06, 0x0c));     /* READ inside a WRITE */
	cr_expect_not(emu_roce_opcode_follows(0x20, 0x02));     /* RC LAST after UC FIRST */
	cr_expect(emu_roce_opcode_follows(0x02, 0x06));
	cr_expect(emu_roce_opcode_follows(0x0a, 0x13));
	cr_expect(emu_roce_opcode_follows(0x0d, 0x0e));
	cr_expect(emu_roce_opcode_follows(0x0e, 0x0f));
	cr_expect_not(emu_roce_opcode_follows(0x0f, 0x0e));
	cr_expect_not(emu_roce_opcode_follows(-1, 0x15));
}

Test(roce_hdr, psn_arithmetic_wraps_at_2_to_the_24)
{
	cr_expect_eq(emu_psn_add(0xffffff, 1), 0);
	cr_expect_eq(emu_psn_add(0xfffffe, 5), 3);
	cr_expect_eq(emu_psn_diff(0, 0xffffff), 1);
	cr_expect_eq(emu_psn_diff(0xffffff, 0), -1);
	cr_expect_eq(emu_psn_diff(5, 5), 0);
	cr_expect_eq(emu_psn_diff(0x7fffff, 0), 0x7fffff);
	cr_expect_eq(emu_psn_diff(0x800000, 0), -0x800000);
	cr_expect(emu_psn_lt(0xfffff0, 5));
	cr_expect(emu_psn_gt(5, 0xfffff0));
	cr_expect(emu_psn_le(7, 7) && emu_psn_ge(7, 7));
	cr_expect_not(emu_psn_lt(7, 7));
	/* bits above 24 never leak into results */
	cr_expect_eq(emu_psn_add(0x123456, 0x1000000), 0x123456);
}

Test(roce_hdr, pad_count_rounds_payload_up_to_four_bytes)
{
	static const uint8_t want[8] = { 0, 3, 2, 1, 0, 3, 2, 1 };

	for (size_t n = 0; n < 8; n++)
		cr_expect_eq(emu_roce_padcnt(n), want[n]);
	cr_expect_eq(emu_roce_padcnt(1023), 1);
}

Test(roce_hdr, aeth_syndrome_packs_kind_and_value)
{
	cr_expect_eq(emu_aeth_syndrome(EMU_AETH_ACK, 6), 0x06);
	cr_expect_eq(emu_aeth_syndrome(EMU_AETH_RNR_NAK, 14), 0x2e);
	cr_expect_eq(emu_aeth_syndrome(EMU_AETH_NAK, EMU_AETH_NAK_REM_ACCESS), 0x62);
	cr_expect_eq(emu_aeth_syndrome(EMU_AETH_NAK, EMU_AETH_NAK_PSN_SEQ), 0x60);
	cr_expect_eq(emu_aeth_kind(0x62), EMU_AETH_NAK);
	cr_expect_eq(emu_aeth_value(0x62), 2);
	cr_expect_eq(emu_aeth_kind(0x1f), EMU_AETH_ACK);
	cr_expect_eq(emu_aeth_kind(0x2e), EMU_AETH_RNR_NAK);
}

Test(roce_hdr, aeth_credit_codes_decode_and_encode)
{
	cr_expect_eq(emu_aeth_credits(0), 0);
	cr_expect_eq(emu_aeth_credits(5), 6);
	cr_expect_eq(emu_aeth_credits(6), 8);
	cr_expect_eq(emu_aeth_credits(30), 32768);
	cr_expect_eq(emu_aeth_credits(EMU_AETH_CREDITS_INVALID), -1);
	for (unsigned c = 1; c < 31; c++)
		cr_expect_gt(emu_aeth_credits(c), emu_aeth_credits(c - 1));
	cr_expect_eq(emu_aeth_credit_code(0), 0);
	cr_expect_eq(emu_aeth_credit_code(7), 5);
	cr_expect_eq(emu_aeth_credit_code(8), 6);
	cr_expect_eq(emu_aeth_credit_code(100000), 30);
	for (unsigned c = 0; c < 31; c++)
		cr_expect_eq(emu_aeth_credit_code((uint32_t)emu_aeth_credits(c)), c);
}

Test(roce_hdr, rnr_timer_codes_match_the_spec_table)
{
	cr_expect_eq(emu_aeth_rnr_timer_us(0), 655360);
	cr_expect_eq(emu_aeth_rnr_timer_us(1), 10);
	cr_expect_eq(emu_aeth_rnr_timer_us(12), 640);
	cr_expect_eq(emu_aeth_rnr_timer_us(25), 61440);
	cr_expect_eq(emu_aeth_rnr_timer_us(31), 491520);
	for (unsigned c = 2; c < 32; c++)
		cr_expect_gt(emu_aeth_rnr_timer_us(c), emu_aeth_rnr_timer_us(c - 1));
}

Test(roce_hdr, pkey_needs_same_partition_and_one_full_member)
{
	cr_expect(emu_roce_pkey_match(0xffff, 0xffff));
	cr_expect(emu_roce_pkey_match(0xffff, 0x7fff));
	cr_expect(emu_roce_pkey_match(0x7fff, 0xffff));
	cr_expect_not(emu_roce_pkey_match(0x7fff, 0x7fff));    /* two limited members */
	cr_expect_not(emu_roce_pkey_match(0xffff, 0x8001));    /* other partition */
	cr_expect_not(emu_roce_pkey_match(0x8000, 0x8000));    /* invalid key */
	cr_expect_not(emu_roce_pkey_match(0x0000, 0x8000));
}

Test(roce_hdr, udp_source_port_folds_the_flow_label_into_0xc000_up)
{
	/* rdma_flow_label_to_udp_sport: low 14 bits xor the high 6, or 0xc000 */
	cr_expect_eq(emu_roce_flow_label_to_sport(0x12345), 0xc000 | (0x2345 ^ 0x4));
	cr_expect_eq(emu_roce_flow_label_to_sport(0), 0xc000);
	cr_expect_eq(emu_roce_flow_label_to_sport(0xfffff), 0xc000 | (0x3fff ^ 0x3f));
	/* rdma_calc_flow_label: product of the QPNs folded to 20 bits */
	cr_expect_eq(emu_roce_calc_flow_label(2, 3), 6);
	cr_expect_eq(emu_roce_calc_flow_label(0x100000, 1), 0x1);
	cr_expect_eq(emu_roce_udp_sport(0, 2, 3), 0xc006);
	cr_expect_eq(emu_roce_udp_sport(0x12345, 2, 3), emu_roce_flow_label_to_sport(0x12345));
	for (uint32_t q = 1; q < 5000; q += 7)
		cr_expect_geq(emu_roce_udp_sport(0, q, q * 3 + 1), 0xc000);
}
