/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RoCE v2 packets (hw/emu/roce_wire.h): what we build parses back to the same headers
 * and payload; every wire-level drop reason is reached by a packet made to hit it;
 * frames carry the IPv4/UDP header the kernel sends; the UD GRH area. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "hw/emu/roce_wire.h"

#define A_IP 0x7f00000au    /* 127.0.0.10 */
#define B_IP 0x7f00000bu    /* 127.0.0.11 */

static struct emu_roce_ip env(void)
{
	struct emu_roce_ip ip;

	emu_roce_ip_init(&ip, A_IP, B_IP, 0xc123, 0x02);
	return ip;
}

static void hdrs(struct emu_roce_hdrs *h, uint8_t op)
{
	memset(h, 0, sizeof(*h));
	h->bth.opcode = op;
	h->bth.pkey = 0xffff;
	h->bth.dqpn = 0x11;
	h->bth.psn = 0xfffffd;
	h->bth.ackreq = true;
	h->reth.va = 0x7000;
	h->reth.rkey = 0x1234;
	h->reth.dlen = 7;
	h->aeth.syndrome = 0x1f;
	h->aeth.msn = 9;
	h->atomic.va = 0x8000;
	h->atomic.rkey = 0x55;
	h->atomic.swap_add = 3;
	h->atomic.compare = 4;
	h->atomic_ack_orig = 5;
	h->imm = 0xa1b2c3d4;
	h->ieth_rkey = 0x77;
	h->deth.qkey = 0x11111111;
	h->deth.sqpn = 0x22;
}

Test(roce_wire, every_opcode_and_payload_size_round_trips)
{
	uint8_t payload[9], buf[128];
	struct emu_roce_ip ip = env();

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(0xe0 + i);
	for (unsigned op = 0; op < 256; op++) {
		const struct emu_roce_opinfo *o = emu_roce_opinfo((uint8_t)op);

		if (!o)
			continue;
		for (size_t len = 0; len <= (o->flags & EMU_ROCE_F_PAYLOAD ? sizeof(payload) : 0); len++) {
			struct emu_roce_hdrs h;
			struct emu_roce_pkt p;
			int n;

			hdrs(&h, (uint8_t)op);
			n = emu_roce_build(buf, sizeof(buf), &ip, &h, payload, len);
			cr_assert_eq(n, (int)(o->hdr_len + len + emu_roce_padcnt(len) + 4), "op 0x%02x len %zu", op, len);
			cr_assert_eq(n % 4, 0);
			cr_assert_eq(emu_roce_parse(buf, (size_t)n, &ip, &p), 0, "op 0x%02x len %zu: %s", op, len,
				     emu_roce_drop_name(p.drop));
			cr_expect_eq(p.op, o);
			cr_expect_eq(p.hdr_len, o->hdr_len);
			cr_expect_eq(p.payload_len, len);
			cr_expect_eq(p.h.bth.padcnt, emu_roce_padcnt(len));
			cr_expect_eq(p.h.bth.psn, 0xfffffd);
			cr_expect(p.h.bth.ackreq);
			if (len)
				cr_expect_arr_eq(p.payload, payload, len);
			if (o->flags & EMU_ROCE_F_IMMDT)
				cr_expect_eq(p.h.imm, 0xa1b2c3d4);
			if (o->flags & EMU_ROCE_F_RETH)
				cr_expect_eq(p.h.reth.rkey, 0x1234);
		}
	}
}

Test(roce_wire, pad_bytes_are_zero)
{
	uint8_t buf[64];
	struct emu_roce_ip ip = env();
	struct emu_roce_hdrs h;
	int n;

	memset(buf, 0xaa, sizeof(buf));
	hdrs(&h, EMU_ROCE_RC_SEND_ONLY);
	n = emu_roce_build(buf, sizeof(buf), &ip, &h, "x", 1);
	cr_assert_eq(n, 12 + 1 + 3 + 4);
	cr_expect_eq(buf[13], 0);
	cr_expect_eq(buf[14], 0);
	cr_expect_eq(buf[15], 0);
	cr_expect_eq((buf[1] >> 4) & 3, 3);
}

Test(roce_wire, two_step_build_equals_one_step)
{
	uint8_t a[2048], b[2048], data[1027];
	struct emu_roce_ip ip = env();
	struct emu_roce_hdrs h;
	int n1, hl, n2;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	hdrs(&h, EMU_ROCE_RC_WRITE_FIRST);
	n1 = emu_roce_build(a, sizeof(a), &ip, &h, data, sizeof(data));
	hl = emu_roce_build_hdrs(b, sizeof(b), &h, sizeof(data));
	cr_assert_eq(hl, 28);
	memcpy(b + hl, data, sizeof(data));
	n2 = emu_roce_seal(b, sizeof(b), (size_t)hl + sizeof(data), &ip);
	cr_assert_eq(n1, n2);
	cr_expect_arr_eq(a, b, (size_t)n1);
}

Test(roce_wire, build_refuses_what_it_cannot_send)
{
	uint8_t buf[64];
	struct emu_roce_ip ip = env();
	struct emu_roce_hdrs h;

	hdrs(&h, EMU_ROCE_RC_ACK);
	cr_expect_eq(emu_roce_build(buf, sizeof(buf), &ip, &h, "abcd", 4), -EINVAL);
	hdrs(&h, 0x15);
	cr_expect_eq(emu_roce_build(buf, sizeof(buf), &ip, &h, NULL, 0), -EPROTO);
	hdrs(&h, EMU_ROCE_RC_SEND_ONLY);
	cr_expect_eq(emu_roce_build(buf, 19, &ip, &h, "abcd", 4), -ENOSPC);
	cr_expect_eq(emu_roce_build(buf, sizeof(buf), &ip, &h, NULL, 4), -EINVAL);
}

static int parse_drop(const uint8_t *buf, int n, const struct emu_roce_ip *ip)
{
	struct emu_roce_pkt p;

	cr_assert_geq(n, 0);
	if (emu_roce_parse(buf, (size_t)n, ip, &p) == 0)
		return EMU_ROCE_DROP_NONE;
	return p.drop;
}

Test(roce_wire, corrupted_packet_is_dropped_for_its_icrc)
{
	uint8_t buf[64];
	struct emu_roce_ip ip = env();
	struct emu_roce_hdrs h;
	struct emu_roce_forge f = { .icrc_xor = 1 };
	int n;

	hdrs(&h, EMU_ROCE_RC_SEND_ONLY);
	n = emu_roce_build(buf, sizeof(buf), &ip, &h, "abcdefgh", 8);
	buf[15] ^= 0x80;
	cr_expect_eq(parse_drop(buf, n, &ip), EMU_ROCE_DROP_ICRC);
	n = emu_roce_forge(buf, sizeof(buf), &ip, &h, "abcdefgh", 8, &f);
	cr_expect_eq(parse_drop(buf, n, &ip), EMU_ROCE_DROP_ICRC);
}

Test(roce_wire, icrc_binds_the_packet_to_its_ip_and_udp_envelope)
{
	uint8_t buf[64];
	struct emu_roce_ip ip = env(), other;
	struct emu_roce_hdrs h;
	int n;

	hdrs(&h, EMU_ROCE_RC_SEND_ONLY);
	n = emu_roce_build(buf, sizeof(buf), &ip, &h, "abcd", 4);
	other = ip;
	other.sport = 0xc124;
	cr_expect_eq(parse_drop(buf, n, &other), EMU_ROCE_DROP_ICRC);
	other = ip;
	other.saddr = 0x7f000009;
	cr_expect_eq(parse_drop(buf, n, &other), EMU_ROCE_DROP_ICRC);
	other = ip;
	other.id = 1;
	cr_expect_eq(parse_drop(buf, n, &other), EMU_ROCE_DROP_ICRC);
	/* TOS and TTL are variant: a router (or ECN marking) may change them */
	other = ip;
	other.tos = 0x03;
	other.ttl = 1;
	cr_expect_eq(parse_drop(buf, n, &other), EMU_ROCE_DROP_NONE);
}

Test(roce_wire, nonzero_tver_is_dropped)
{
	uint8_t buf[64];
	struct emu_roce_ip ip = env();
	struct emu_roce_hdrs h;

	hdrs(&h, EMU_ROCE_RC_SEND_ONLY);
	h.bth.tver = 1;
	cr_expect_eq(parse_drop(buf, emu_roce_forge(buf, sizeof(buf), &ip, &h, "abcd", 4, NULL), &ip),
		     EMU_ROCE_DROP_TVER);
}

Test(roce_wire, unsupported_opcodes_are_dropped)
{
	static const uint8_t bad[] = { 0x15, 0x18, 0x1f, 0x2c, 0x40, 0x4c, 0x60, 0x66, 0x80, 0xff };
	uint8_t buf[64];
	struct emu_roce_ip ip = env();
	struct emu_roce_hdrs h;

	for (unsigned i = 0; i < sizeof(bad); i++) {
		hdrs(&h, bad[i]);
		cr_expect_eq(parse_drop(buf, emu_roce_forge(buf, sizeof(buf), &ip, &h, "abcdefghijklmnopqrstuvwx", 24, NULL),
					&ip),
			     EMU_ROCE_DROP_OPCODE, "opcode 0x%02x", bad[i]);
	}
}

Test(roce_wire, short_packets_are_dropped)
{
	uint8_t buf[64];
	struct emu_roce_ip ip = env();
	struct emu_roce_hdrs h;
	int n;

	cr_expect_eq(parse_drop(buf, 15, &ip), EMU_ROCE_DROP_SHORT);
	cr_expect_eq(parse_drop(buf, 0, &ip), EMU_ROCE_DROP_SHORT);
	/* a WRITE FIRST whose RETH is cut, with a valid ICRC over what is there */
	hdrs(&h, EMU_ROCE_RC_WRITE_FIRST);
	emu_roce_bth_write(buf, &h.bth);
	memset(buf + 12, 0, 8);
	emu_icrc_put(buf + 20, emu_roce_icrc(&ip, buf, 20));
	cr_expect_eq(parse_drop(buf, 24, &ip), EMU_ROCE_DROP_SHORT);
	/* the same cut by truncation: the ICRC is gone too */
	struct emu_roce_forge f = { .truncate = 30 };
	n = emu_roce_forge(buf, sizeof(buf), &ip, &h, NULL, 0, &f);
	cr_expect_eq(n, 30);
	cr_expect_neq(parse_drop(buf, n, &ip), EMU_ROCE_DROP_NONE);
}

Test(roce_wire, payload_on_an_ack_is_dropped)
{
	uint8_t buf[64];
	struct emu_roce_ip ip = env();
	struct emu_roce_hdrs h;

	hdrs(&h, EMU_ROCE_RC_ACK);
	cr_expect_eq(parse_drop(buf, emu_roce_forge(buf, sizeof(buf), &ip, &h, "abcd", 4, NULL), &ip),
		     EMU_ROCE_DROP_LENGTH);
	hdrs(&h, EMU_ROCE_RC_READ_REQUEST);
	cr_expect_eq(parse_drop(buf, emu_roce_forge(buf, sizeof(buf), &ip, &h, "abcd", 4, NULL), &ip),
		     EMU_ROCE_DROP_LENGTH);
}

Test(roce_wire, pad_count_larger_than_the_payload_is_dropped)
{
	uint8_t buf[64];
	struct emu_roce_ip ip = env();
	struct emu_roce_hdrs h;
	struct emu_roce_forge f = { .keep_padcnt = true, .pad_bytes = 0 };

	hdrs(&h, EMU_ROCE_RC_SEND_ONLY);
	h.bth.padcnt = 3;
	cr_expect_eq(parse_drop(buf, emu_roce_forge(buf, sizeof(buf), &ip, &h, "ab", 2, &f), &ip), EMU_ROCE_DROP_PAD);
	/* pad on a packet without payload: the ACK's pad count eats into nothing */
	hdrs(&h, EMU_ROCE_RC_ACK);
	h.bth.padcnt = 1;
	cr_expect_eq(parse_drop(buf, emu_roce_forge(buf, sizeof(buf), &ip, &h, NULL, 0, &f), &ip), EMU_ROCE_DROP_PAD);
	/* a pad count the sender did include is honoured */
	hdrs(&h, EMU_ROCE_RC_SEND_ONLY);
	h.bth.padcnt = 2;
	f.pad_bytes = 2;
	cr_expect_eq(parse_drop(buf, emu_roce_forge(buf, sizeof(buf), &ip, &h, "abcdef", 6, &f), &ip),
		     EMU_ROCE_DROP_NONE);
}

Test(roce_wire, oversized_datagram_is_dropped_as_too_long)
{
	uint8_t buf[16] = { 0 };
	struct emu_roce_ip ip = env();

	/* what a receiver sees when recvmsg(MSG_TRUNC) reports more than it kept */
	cr_expect_eq(parse_drop(buf, EMU_ROCE_MAX_PKT + 1, &ip), EMU_ROCE_DROP_TOO_LONG);
}

Test(roce_wire, forge_writes_hostile_fields_as_given)
{
	uint8_t buf[64];
	struct emu_roce_ip ip = env();
	struct emu_roce_hdrs h;
	struct emu_roce_pkt p;

	hdrs(&h, EMU_ROCE_RC_WRITE_ONLY);
	h.bth.pkey = 0x1234;
	h.bth.dqpn = 0xffffff;
	h.reth.rkey = 0xdeadbeef;
	cr_assert_eq(emu_roce_parse(buf, (size_t)emu_roce_forge(buf, sizeof(buf), &ip, &h, "abcd", 4, NULL), &ip, &p), 0);
	cr_expect_eq(p.h.bth.pkey, 0x1234);
	cr_expect_eq(p.h.bth.dqpn, 0xffffff);
	cr_expect_eq(p.h.reth.rkey, 0xdeadbeef);
}

Test(roce_wire, drop_reasons_all_have_distinct_names)
{
	for (int i = 0; i < EMU_ROCE_DROP_NR; i++) {
		cr_expect_str_neq(emu_roce_drop_name((enum emu_roce_drop)i), "?");
		for (int j = 0; j < i; j++)
			cr_expect_str_neq(emu_roce_drop_name((enum emu_roce_drop)i), emu_roce_drop_name((enum emu_roce_drop)j));
	}
	cr_expect_str_eq(emu_roce_drop_name(EMU_ROCE_DROP_NR), "?");
}

static uint16_t sum16(const uint8_t *p, size_t n, uint32_t s)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

Test(roce_wire, frames_carry_the_header_the_kernel_sends)
{
	uint8_t pkt[64], fr[128];
	static const uint8_t dmac[6] = { 2, 0, 0x7f, 0, 0, 0x0b }, smac[6] = { 2, 0, 0x7f, 0, 0, 0x0a };
	struct emu_roce_ip ip = env(), got;
	struct emu_roce_hdrs h;
	struct emu_roce_pkt p;
	uint8_t ph[12];
	int n, fl;

	hdrs(&h, EMU_ROCE_RC_SEND_ONLY);
	n = emu_roce_build(pkt, sizeof(pkt), &ip, &h, "hello", 5);
	fl = emu_roce_frame_write(fr, sizeof(fr), dmac, smac, &ip, pkt, (size_t)n);
	cr_assert_eq(fl, 14 + 20 + 8 + n);
	cr_expect_eq(fr[12], 0x08);
	cr_expect_eq(fr[13], 0x00);
	cr_expect_eq(fr[14], 0x45);
	cr_expect_eq(fr[15], 0x02);                     /* TOS as asked */
	cr_expect_eq(emu_be16_get(fr + 16), 28 + n);    /* total length */
	cr_expect_eq(emu_be16_get(fr + 18), 0);         /* ID 0 */
	cr_expect_eq(emu_be16_get(fr + 20), 0x4000);    /* DF */
	cr_expect_eq(fr[22], 64);
	cr_expect_eq(fr[23], 17);
	cr_expect_eq(sum16(fr + 14, 20, 0), 0xffff, "IPv4 header checksum");
	cr_expect_eq(emu_be16_get(fr + 34), 0xc123);
	cr_expect_eq(emu_be16_get(fr + 36), 4791);
	cr_expect_eq(emu_be16_get(fr + 38), 8 + n);
	/* UDP checksum over the pseudo header verifies */
	memcpy(ph, fr + 26, 8);
	ph[8] = 0;
	ph[9] = 17;
	emu_be16_put(ph + 10, (uint16_t)(8 + n));
	cr_expect_eq(sum16(fr + 34, (size_t)(8 + n), sum16(ph, 12, 0)), 0xffff, "UDP checksum");
	/* and the frame parses, with the ICRC over its real header bytes */
	cr_assert_eq(emu_roce_parse_frame(fr, (size_t)fl, &p, &got), 0);
	cr_expect_eq(got.saddr, A_IP);
	cr_expect_eq(got.sport, 0xc123);
	cr_expect_eq(p.payload_len, 5);
	cr_expect_arr_eq(p.payload, "hello", 5);
}

Test(roce_wire, frame_parser_tells_non_roce_from_broken_roce)
{
	uint8_t pkt[64], fr[128];
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };
	struct emu_roce_ip ip = env();
	struct emu_roce_hdrs h;
	struct emu_roce_pkt p;
	int n, fl;

	hdrs(&h, EMU_ROCE_RC_SEND_ONLY);
	n = emu_roce_build(pkt, sizeof(pkt), &ip, &h, "abcd", 4);
	fl = emu_roce_frame_write(fr, sizeof(fr), mac, mac, &ip, pkt, (size_t)n);
	fr[37] = 53;                            /* UDP to port 4661: not RoCE */
	cr_expect_eq(emu_roce_parse_frame(fr, (size_t)fl, &p, NULL), -ENOENT);
	fr[37] = 0xb7;
	fr[12] = 0x86;                          /* IPv6 ethertype */
	cr_expect_eq(emu_roce_parse_frame(fr, (size_t)fl, &p, NULL), -ENOENT);
	fr[12] = 0x08;
	fr[20] = 0x20;                          /* More Fragments */
	cr_expect_eq(emu_roce_parse_frame(fr, (size_t)fl, &p, NULL), -EBADMSG);
	cr_expect_eq(p.drop, EMU_ROCE_DROP_IP);
	fr[20] = 0x40;
	fr[17] += 1;                            /* total length beyond the frame */
	cr_expect_eq(emu_roce_parse_frame(fr, (size_t)fl, &p, NULL), -EBADMSG);
	cr_expect_eq(p.drop, EMU_ROCE_DROP_IP);
	fr[17] -= 1;
	cr_expect_eq(emu_roce_parse_frame(fr, (size_t)fl, &p, NULL), 0);
	/* trailing Ethernet padding after the IP packet is ignored */
	cr_expect_eq(emu_roce_parse_frame(fr, (size_t)fl + 6, &p, NULL), 0);
}

Test(roce_wire, ud_grh_area_is_twenty_zero_bytes_then_the_ipv4_header)
{
	uint8_t g[40];
	struct emu_roce_ip ip = env();

	memset(g, 0xaa, sizeof(g));
	emu_roce_grh_write(g, &ip, 40);
	for (int i = 0; i < 20; i++)
		cr_expect_eq(g[i], 0);
	cr_expect_eq(g[20], 0x45);
	cr_expect_eq(emu_be16_get(g + 22), 20 + 8 + 40);
	cr_expect_eq(emu_be32_get(g + 32), A_IP);
	cr_expect_eq(emu_be32_get(g + 36), B_IP);
	cr_expect_eq(sum16(g + 20, 20, 0), 0xffff);
}

Test(roce_wire, mac_is_locally_administered_and_carries_the_address)
{
	uint8_t mac[6];
	static const uint8_t want[6] = { 0x02, 0x00, 0x7f, 0x00, 0x00, 0x0a };

	emu_roce_mac_from_ipv4(A_IP, mac);
	cr_expect_arr_eq(mac, want, 6);
}

/* A sender outside the emulated segment (Linux rxe on a veth, in the VM) picks its own
 * IPv4 identification, which the receiving UDP socket does not show: the ICRC is
 * checked for some identification.  The emulator's own ports (127/8) send 0 and stay
 * checked exactly. */
Test(roce_wire, foreign_senders_identification_is_not_needed_to_check_its_icrc)
{
	uint8_t buf[64];
	struct emu_roce_ip sent, seen;
	struct emu_roce_hdrs h;
	int n;

	hdrs(&h, EMU_ROCE_RC_SEND_ONLY);
	emu_roce_ip_init(&sent, 0x0a000001u, 0x0a000002u, 0xc123, 0);   /* 10.0.0.1 -> .2 */
	sent.id = 0x4321;
	n = emu_roce_build(buf, sizeof(buf), &sent, &h, "abcdefgh", 8);
	seen = sent;
	seen.id = 0;                                                    /* what recvfrom gives */
	cr_expect_eq(parse_drop(buf, n, &seen), EMU_ROCE_DROP_NONE);
	buf[14] ^= 0x01;                                                /* and corruption still shows */
	cr_expect_eq(parse_drop(buf, n, &seen), EMU_ROCE_DROP_ICRC);

	emu_roce_ip_init(&sent, A_IP, B_IP, 0xc123, 0);
	sent.id = 0x4321;
	n = emu_roce_build(buf, sizeof(buf), &sent, &h, "abcdefgh", 8);
	seen = sent;
	seen.id = 0;
	cr_expect_eq(parse_drop(buf, n, &seen), EMU_ROCE_DROP_ICRC, "an emulated port's identification is 0");
}
