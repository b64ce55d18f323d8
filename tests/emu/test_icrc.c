/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The RoCE v2 ICRC (hw/emu/icrc.h): the CRC-32 itself, two real packets from the
 * hardware capture, and which header fields are covered or masked (Annex A17.3.3). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/icrc.h"

/* Bit-at-a-time CRC-32, the textbook definition, to check the sliced one against. */
static uint32_t crc32_ref(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
	}
	return ~c;
}

/* IPv4 packets (frames 16 and 122) of shared/fixtures/roce-v2-hardware-capture.pcap:
 * an RC ACKNOWLEDGE (ECT(0), DF, ID 0, UDP checksum 0) and an RC SEND ONLY with
 * immediate whose BTH resv8a is 0x10; the last four bytes are the NIC's ICRC. */
static const uint8_t ack_pkt[48] = {
	0x45, 0x02, 0x00, 0x30, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x2d, 0x60, 0xc0, 0xa8, 0x46, 0x06,
	0xc0, 0xa8, 0x46, 0x04, 0x00, 0x48, 0x12, 0xb7, 0x00, 0x1c, 0x00, 0x00, 0x11, 0x40, 0xff, 0xff,
	0x00, 0x00, 0x00, 0x45, 0x00, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x01, 0x25, 0x9c, 0xc2, 0x16,
};
static const uint8_t send_pkt[52] = {
	0x45, 0x02, 0x00, 0x34, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x2d, 0x5c, 0xc0, 0xa8, 0x46, 0x06,
	0xc0, 0xa8, 0x46, 0x04, 0x00, 0x48, 0x12, 0xb7, 0x00, 0x20, 0x00, 0x00, 0x05, 0x40, 0xff, 0xff,
	0x10, 0x00, 0x00, 0x45, 0x80, 0x00, 0x00, 0x42, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x37, 0x16, 0x80, 0x1d,
};

static uint32_t icrc_of(const uint8_t *pkt, size_t len)
{
	return emu_icrc_ipv4(pkt, pkt + 20, pkt + 28, len - 28 - 4);
}

Test(icrc, crc32_matches_the_standard_check_value)
{
	cr_expect_eq(emu_crc32(0, "123456789", 9), 0xcbf43926u);
	cr_expect_eq(emu_crc32(0, "", 0), 0);
}

Test(icrc, sliced_crc_equals_bitwise_crc_at_every_length_and_split)
{
	uint8_t buf[300];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	for (size_t n = 0; n <= sizeof(buf); n += (n < 40 ? 1 : 37)) {
		uint32_t ref = crc32_ref(buf, n);

		cr_assert_eq(emu_crc32(0, buf, n), ref, "len %zu", n);
		for (size_t cut = 0; cut <= n; cut += 5)
			cr_expect_eq(emu_crc32(emu_crc32(0, buf, cut), buf + cut, n - cut), ref);
	}
}

/* Long buffers at every alignment: on x86-64 with PCLMULQDQ these take the folding
 * path (64 bytes and more; with AVX-512 VPCLMULQDQ, 256 bytes and more in sixteen
 * lanes), the rest of the time the sliced tables; every path must agree with the
 * textbook CRC, whatever the start offset, length and split. */
static void long_buffers_match_bitwise(void)
{
	static uint8_t buf[65536 + 64];
	static const size_t lens[] = { 63, 64, 65, 79, 80, 127, 128, 129, 191, 255, 256, 257, 271, 319, 320,
				       448, 511, 512, 513, 767, 1000, 1500, 4096, 4111, 4433, 8192, 65536 };
	uint32_t seed = 12345;

	for (size_t i = 0; i < sizeof(buf); i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (uint8_t)(seed >> 16);
	}
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
		for (size_t off = 0; off < 16; off += (lens[l] > 8192 ? 5 : 1)) {
			const uint8_t *p = buf + off;
			uint32_t ref = crc32_ref(p, lens[l]);

			cr_assert_eq(emu_crc32(0, p, lens[l]), ref, "len %zu offset %zu", lens[l], off);
			cr_assert_eq(emu_crc32(emu_crc32(0, p, 70), p + 70, lens[l] > 70 ? lens[l] - 70 : 0),
				     lens[l] > 70 ? ref : crc32_ref(p, 70), "len %zu split at 70", lens[l]);
		}
}

Test(icrc, long_buffers_match_bitwise_crc_at_every_alignment)
{
	long_buffers_match_bitwise();
}

Test(icrc, long_buffers_match_bitwise_crc_with_four_clmul_lanes_only)
{
	/* read once, at the first CRC of this (forked) test process */
	setenv("EMU_CRC_NO_VCLMUL", "1", 1);
	long_buffers_match_bitwise();
}

Test(icrc, long_buffers_match_bitwise_crc_with_the_tables_only)
{
	/* read once, at the first CRC of this (forked) test process */
	setenv("EMU_CRC_NO_CLMUL", "1", 1);
	long_buffers_match_bitwise();
}

Test(icrc, reproduces_a_hardware_ack)
{
	cr_expect_eq(icrc_of(ack_pkt, sizeof(ack_pkt)), emu_icrc_get(ack_pkt + 44));
	cr_expect_eq(emu_icrc_get(ack_pkt + 44), 0x16c29c25u);
}

Test(icrc, reproduces_a_hardware_send_with_reserved_bits_set)
{
	cr_expect_eq(icrc_of(send_pkt, sizeof(send_pkt)), emu_icrc_get(send_pkt + 48));
}

Test(icrc, is_stored_least_significant_byte_first)
{
	uint8_t b[4];

	emu_icrc_put(b, 0x16c29c25u);
	cr_expect_arr_eq(b, ack_pkt + 44, 4);
}

/* Offsets (into the IPv4 packet) of the bytes the ICRC must ignore: TOS, TTL, the IPv4
 * checksum, the UDP checksum, BTH resv8a. */
static bool masked(size_t off)
{
	return off == 1 || off == 8 || off == 10 || off == 11 || off == 26 || off == 27 || off == 32;
}

Test(icrc, variant_fields_are_masked_and_every_other_byte_counts)
{
	uint32_t good = icrc_of(ack_pkt, sizeof(ack_pkt));

	for (size_t off = 0; off < sizeof(ack_pkt) - 4; off++) {
		for (unsigned bit = 0; bit < 8; bit++) {
			uint8_t p[sizeof(ack_pkt)];

			memcpy(p, ack_pkt, sizeof(p));
			p[off] ^= (uint8_t)(1u << bit);
			if (masked(off))
				cr_expect_eq(icrc_of(p, sizeof(p)), good, "byte %zu bit %u should be masked", off, bit);
			else
				cr_expect_neq(icrc_of(p, sizeof(p)), good, "byte %zu bit %u must be covered", off, bit);
		}
	}
}

Test(icrc, identification_and_dont_fragment_are_covered)
{
	uint8_t p[sizeof(ack_pkt)];
	uint32_t good = icrc_of(ack_pkt, sizeof(ack_pkt));

	memcpy(p, ack_pkt, sizeof(p));
	p[5] = 1;               /* ID 1 instead of 0 */
	cr_expect_neq(icrc_of(p, sizeof(p)), good);
	memcpy(p, ack_pkt, sizeof(p));
	p[6] = 0;               /* DF cleared */
	cr_expect_neq(icrc_of(p, sizeof(p)), good);
}

/* A foreign sender's identification (Linux rxe draws one; a UDP socket hides it) is
 * found from the ICRC (icrc.c emu_icrc_ipv4_solve_id; found with rxe in the VM). */
Test(icrc, identification_a_socket_hides_is_solved_from_the_icrc)
{
	uint8_t p[sizeof(send_pkt)], zero[20];
	uint16_t id = 0;

	memcpy(p, send_pkt, sizeof(p));
	p[4] = 0xb3;            /* the sender chose identification 0xb35a */
	p[5] = 0x5a;
	emu_icrc_put(p + sizeof(p) - 4, icrc_of(p, sizeof(p)));
	memcpy(zero, p, 20);
	zero[4] = zero[5] = 0;  /* what the receiving socket can rebuild */
	cr_assert_neq(emu_icrc_ipv4(zero, p + 20, p + 28, sizeof(p) - 32), emu_icrc_get(p + sizeof(p) - 4));
	cr_assert_eq(emu_icrc_ipv4_solve_id(zero, p + 20, p + 28, sizeof(p) - 32, emu_icrc_get(p + sizeof(p) - 4), &id),
		     0);
	cr_assert_eq(id, 0xb35a);
	/* a corrupted payload byte: no identification explains it */
	p[40] ^= 0x04;
	cr_assert_eq(emu_icrc_ipv4_solve_id(zero, p + 20, p + 28, sizeof(p) - 32, emu_icrc_get(p + sizeof(p) - 4), &id),
		     -EBADMSG);
}
