/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Packets built by our RoCE v2 TX code (hw/emu/roce_tx.c), for tools we did not write to
 * judge: tshark's infiniband dissector and scapy's scapy.contrib.roce ICRC.
 *
 *   interop_roce_packets pcap OUT.pcap OUT.jsonl
 *       every opcode we send, as Ethernet/IPv4/UDP frames the way the kernel frames
 *       them (DF, ID 0), into a pcap; one JSON line per packet with the fields a
 *       dissector must find (named as tshark names them).
 *   interop_roce_packets live OUT.jsonl
 *       the same packets sent between two emulated ports' sockets on loopback
 *       (127.0.0.N:flow port -> 127.0.0.M:4791), each received and parsed back; for
 *       a capture on "lo" to check what the kernel really put on the wire.
 *   interop_roce_packets listen COUNT OUT.jsonl
 *       claim a port, print "listening A.B.C.D" and judge the next COUNT datagrams
 *       that arrive (5 s each at most) with our parser: one JSON line per packet with
 *       the verdict (drop reason name, "none" when accepted) and what was decoded.
 *       For packets crafted elsewhere, e.g. hostile ones made with scapy.
 * Exit 0 when every packet was built (and, live, received and accepted), else 1. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "hw/emu/netaddr.h"
#include "hw/emu/roce_wire.h"
#include "tests/common/pcap_file.h"

#define F(x) EMU_ROCE_F_##x
#define MTU 256

struct spec {
	uint8_t opcode;
	size_t len;             /* payload bytes */
	uint8_t syndrome;       /* AETH */
	bool se;
};

/* Every opcode we send, with message positions at MTU 256 and odd sizes for padding. */
static const struct spec specs[] = {
	/* RC SEND: a 612-byte message, then ONLY of 0, 1 and 13 bytes, immediate, invalidate */
	{ EMU_ROCE_RC_SEND_FIRST, MTU }, { EMU_ROCE_RC_SEND_MIDDLE, MTU }, { EMU_ROCE_RC_SEND_LAST, 100 },
	{ EMU_ROCE_RC_SEND_ONLY, 0 }, { EMU_ROCE_RC_SEND_ONLY, 1 }, { EMU_ROCE_RC_SEND_ONLY_IMM, 13, 0, true },
	{ EMU_ROCE_RC_SEND_FIRST, MTU }, { EMU_ROCE_RC_SEND_LAST_IMM, 3 },
	{ EMU_ROCE_RC_SEND_FIRST, MTU }, { EMU_ROCE_RC_SEND_LAST_INV, 2 }, { EMU_ROCE_RC_SEND_ONLY_INV, 5 },
	/* RC RDMA WRITE */
	{ EMU_ROCE_RC_WRITE_FIRST, MTU }, { EMU_ROCE_RC_WRITE_MIDDLE, MTU }, { EMU_ROCE_RC_WRITE_LAST, 7 },
	{ EMU_ROCE_RC_WRITE_FIRST, MTU }, { EMU_ROCE_RC_WRITE_LAST_IMM, 64 },
	{ EMU_ROCE_RC_WRITE_ONLY, 7 }, { EMU_ROCE_RC_WRITE_ONLY_IMM, 0 },
	/* RC RDMA READ and its responses */
	{ EMU_ROCE_RC_READ_REQUEST, 0 },
	{ EMU_ROCE_RC_READ_RESP_FIRST, MTU, 0x1f }, { EMU_ROCE_RC_READ_RESP_MIDDLE, MTU },
	{ EMU_ROCE_RC_READ_RESP_LAST, 9, 0x1f }, { EMU_ROCE_RC_READ_RESP_ONLY, 33, 0x1f },
	/* RC ACK, RNR NAK (timer 14 = 1.28 ms), NAK PSN sequence error, remote access error */
	{ EMU_ROCE_RC_ACK, 0, 0x06 }, { EMU_ROCE_RC_ACK, 0, 0x2e }, { EMU_ROCE_RC_ACK, 0, 0x60 },
	{ EMU_ROCE_RC_ACK, 0, 0x62 },
	/* RC atomics and their ACK */
	{ EMU_ROCE_RC_CMP_SWAP, 0 }, { EMU_ROCE_RC_FETCH_ADD, 0 }, { EMU_ROCE_RC_ATOMIC_ACK, 0, 0x1f },
	/* UC */
	{ EMU_ROCE_UC_SEND_FIRST, MTU }, { EMU_ROCE_UC_SEND_MIDDLE, MTU }, { EMU_ROCE_UC_SEND_LAST_IMM, 1 },
	{ EMU_ROCE_UC_SEND_ONLY, 77 }, { EMU_ROCE_UC_SEND_LAST, 0 }, /* after ONLY: a LAST alone, hostile */
	{ EMU_ROCE_UC_SEND_ONLY_IMM, 2 },
	{ EMU_ROCE_UC_WRITE_FIRST, MTU }, { EMU_ROCE_UC_WRITE_LAST, 10 }, { EMU_ROCE_UC_WRITE_ONLY, 4 },
	{ EMU_ROCE_UC_WRITE_FIRST, MTU }, { EMU_ROCE_UC_WRITE_MIDDLE, MTU }, { EMU_ROCE_UC_WRITE_LAST_IMM, 11 },
	{ EMU_ROCE_UC_WRITE_ONLY_IMM, 6 },
	/* UD, with DETH */
	{ EMU_ROCE_UD_SEND_ONLY, 40 }, { EMU_ROCE_UD_SEND_ONLY_IMM, 1 },
	/* congestion notification (Annex A17.9.3) */
	{ EMU_ROCE_CNP, 0 },
};
#define NSPECS (sizeof(specs) / sizeof(specs[0]))

static void make(unsigned i, struct emu_roce_hdrs *h, uint8_t *payload)
{
	const struct spec *s = &specs[i];
	const struct emu_roce_opinfo *o = emu_roce_opinfo(s->opcode);

	memset(h, 0, sizeof(*h));
	h->bth.opcode = s->opcode;
	h->bth.se = s->se;
	h->bth.pkey = EMU_ROCE_DEFAULT_PKEY;
	h->bth.dqpn = emu_roce_op_transport(s->opcode) == EMU_ROCE_TR_UD ? 0x0012 : 0x0011 + i % 3;
	h->bth.psn = emu_psn_add(0xfffff0, i);  /* crosses the 2^24 wrap */
	/* AckReq on the last packet of a request (9.7.2), as our RC engine will set it */
	h->bth.ackreq = (o->flags & F(REQ)) && (o->flags & F(LAST)) && emu_roce_op_transport(s->opcode) == EMU_ROCE_TR_RC;
	h->reth.va = 0x00007f0012340000ull + i * 0x1000;
	h->reth.rkey = 0x00a10000u + i;
	h->reth.dlen = s->opcode == EMU_ROCE_RC_READ_REQUEST ? 4096 : (uint32_t)(s->len ? s->len * 3 : 0);
	h->aeth.syndrome = s->syndrome;
	h->aeth.msn = 0x000100 + i;
	h->atomic.va = 0x00007f0055550000ull + i * 8;
	h->atomic.rkey = 0x00b20000u + i;
	h->atomic.swap_add = 0x0102030405060708ull;
	h->atomic.compare = s->opcode == EMU_ROCE_RC_CMP_SWAP ? 0x1112131415161718ull : 0;
	h->atomic_ack_orig = 0x2122232425262728ull;
	h->imm = 0xc0de0000u + i;
	h->ieth_rkey = 0x00c30000u + i;
	h->deth.qkey = 0x11111111u;
	h->deth.sqpn = 0x000033;
	for (size_t k = 0; k < s->len; k++)
		payload[k] = (uint8_t)(k * 17 + i);
}

static void json_line(FILE *f, unsigned i, const struct emu_roce_hdrs *h, size_t len, int pktlen,
		      const struct emu_roce_ip *ip)
{
	const struct emu_roce_opinfo *o = emu_roce_opinfo(h->bth.opcode);

	fprintf(f, "{\"index\": %u, \"name\": \"%s\", \"length\": %d, \"payload_len\": %zu, "
		   "\"saddr\": \"%u.%u.%u.%u\", \"daddr\": \"%u.%u.%u.%u\", \"sport\": %u, \"fields\": {",
		i, o->name, pktlen, len, ip->saddr >> 24, (ip->saddr >> 16) & 255, (ip->saddr >> 8) & 255,
		ip->saddr & 255, ip->daddr >> 24, (ip->daddr >> 16) & 255, (ip->daddr >> 8) & 255, ip->daddr & 255,
		ip->sport);
	fprintf(f, "\"infiniband.bth.opcode\": %u, \"infiniband.bth.se\": %d, \"infiniband.bth.padcnt\": %u, "
		   "\"infiniband.bth.tver\": 0, \"infiniband.bth.p_key\": %u, \"infiniband.bth.destqp\": %u, "
		   "\"infiniband.bth.a\": %d, \"infiniband.bth.psn\": %u",
		h->bth.opcode, h->bth.se, emu_roce_padcnt(len), h->bth.pkey, h->bth.dqpn, h->bth.ackreq, h->bth.psn);
	if (o->flags & F(RETH))
		fprintf(f, ", \"infiniband.reth.va\": %llu, \"infiniband.reth.r_key\": %u, \"infiniband.reth.dmalen\": %u",
			(unsigned long long)h->reth.va, h->reth.rkey, h->reth.dlen);
	if (o->flags & F(AETH))
		fprintf(f, ", \"infiniband.aeth.syndrome\": %u, \"infiniband.aeth.msn\": %u", h->aeth.syndrome,
			h->aeth.msn);
	if (o->flags & F(ATOMICETH))
		fprintf(f, ", \"infiniband.atomiceth.swapdt\": %llu, \"infiniband.atomiceth.cmpdt\": %llu",
			(unsigned long long)h->atomic.swap_add, (unsigned long long)h->atomic.compare);
	if (o->flags & F(ATOMICACKETH))
		fprintf(f, ", \"infiniband.atomicacketh.origremdt\": %llu", (unsigned long long)h->atomic_ack_orig);
	if (o->flags & F(DETH))
		fprintf(f, ", \"infiniband.deth.q_key\": %u, \"infiniband.deth.srcqp\": %u", h->deth.qkey, h->deth.sqpn);
	fprintf(f, "}, \"bytes\": {");
	/* raw header bytes for fields tshark shows only as byte strings */
	if (o->flags & F(IMMDT))
		fprintf(f, "\"infiniband.immdt\": \"%08x\"", h->imm);
	if (o->flags & F(IETH))
		fprintf(f, "\"infiniband.ieth\": \"%08x\"", h->ieth_rkey);
	fprintf(f, "}, \"headers\": [");
	{
		static const struct { uint32_t f; const char *n; } hn[] = {
			{ F(DETH), "deth" }, { F(RETH), "reth" }, { F(ATOMICETH), "atomiceth" }, { F(AETH), "aeth" },
			{ F(ATOMICACKETH), "atomicacketh" }, { F(IMMDT), "immdt" }, { F(IETH), "ieth" },
		};
		bool first = true;

		for (unsigned k = 0; k < sizeof(hn) / sizeof(hn[0]); k++)
			if (o->flags & hn[k].f) {
				fprintf(f, "%s\"%s\"", first ? "" : ", ", hn[k].n);
				first = false;
			}
	}
	fprintf(f, "]}\n");
}

static int write_pcap(const char *pcap, const char *jsonl)
{
	static uint8_t pkt[4096], frame[4200], payload[MTU];
	uint8_t smac[6], dmac[6];
	struct pcap_file pf;
	FILE *jf;
	int rc = 0;

	if (pcap_file_create(&pf, pcap, PCAP_FILE_LINKTYPE_ETHERNET) < 0 || !(jf = fopen(jsonl, "w"))) {
		perror("create");
		return 1;
	}
	for (unsigned i = 0; i < NSPECS; i++) {
		struct emu_roce_hdrs h;
		struct emu_roce_ip ip;
		uint32_t a = 0x7f00000au, b = 0x7f00000bu;
		bool resp = emu_roce_opinfo(specs[i].opcode)->flags & F(RESP);
		int n, fl;

		make(i, &h, payload);
		/* responses travel the other way, from the responder's flow port */
		emu_roce_ip_init(&ip, resp ? b : a, resp ? a : b, emu_roce_udp_sport(0, h.bth.dqpn, 0x20 + i % 3),
				 (uint8_t)(i % 4 == 0 ? 0x02 : 0));
		emu_roce_mac_from_ipv4(ip.saddr, smac);
		emu_roce_mac_from_ipv4(ip.daddr, dmac);
		n = emu_roce_build(pkt, sizeof(pkt), &ip, &h, payload, specs[i].len);
		if (n < 0) {
			fprintf(stderr, "packet %u (0x%02x): build failed: %s\n", i, specs[i].opcode, strerror(-n));
			rc = 1;
			continue;
		}
		fl = emu_roce_frame_write(frame, sizeof(frame), dmac, smac, &ip, pkt, (size_t)n);
		if (fl < 0 || pcap_file_write(&pf, frame, (size_t)fl, 1700000000000000000ull + i * 1000ull) < 0) {
			rc = 1;
			continue;
		}
		json_line(jf, i, &h, specs[i].len, n, &ip);
	}
	if (pcap_file_close(&pf) < 0 || fclose(jf) != 0)
		rc = 1;
	printf("roce packets: %zu built into %s\n", NSPECS, pcap);
	return rc;
}

#define LIVE_ADDR_A 0x7f0000e6u   /* 127.0.0.230 */
#define LIVE_ADDR_B 0x7f0000e7u   /* 127.0.0.231 */

static int live(const char *jsonl)
{
	static uint8_t pkt[4096], in[4096], payload[MTU];
	uint32_t ipa, ipb;
	int fda, fdb, rc = 0;
	unsigned sent = 0, accepted = 0;
	struct emu_roce_sock sa, sb;
	char err[128];
	FILE *jf = fopen(jsonl, "w");

	/* Addresses of their own, not the first free ones: test_roce_wire.py picks these
	 * packets out of its capture on lo by address pair, and interop_test_live_capture,
	 * which ctest -j2 may run at the same time, claims the first free ones for its own
	 * RoCE traffic (with auto-claimed addresses 7 of its packets were counted here) */
	if (!jf || emu_net_claim(LIVE_ADDR_A, &ipa, &fda, err, sizeof(err)) < 0 ||
	    emu_net_claim(LIVE_ADDR_B, &ipb, &fdb, err, sizeof(err)) < 0) {
		fprintf(stderr, "live: %s\n", jf ? err : strerror(errno));
		return 1;
	}
	if (emu_roce_sock_init(&sa, fda, ipa) < 0 || emu_roce_sock_init(&sb, fdb, ipb) < 0)
		return 1;
	for (unsigned i = 0; i < NSPECS; i++) {
		struct emu_roce_hdrs h;
		struct emu_roce_ip ip, env;
		struct emu_roce_pkt p;
		struct pollfd pfd = { .fd = fdb, .events = POLLIN };
		uint16_t used;
		ssize_t n;
		int len;

		make(i, &h, payload);
		emu_roce_ip_init(&ip, ipa, ipb, emu_roce_udp_sport(0, h.bth.dqpn, 0x20 + i % 3), (uint8_t)(i % 4 == 0 ? 0x02 : 0));
		len = emu_roce_build(pkt, sizeof(pkt), &ip, &h, payload, specs[i].len);
		if (len < 0 || emu_roce_sock_send(&sa, &ip, pkt, (size_t)len, &used) < 0) {
			rc = 1;
			continue;
		}
		sent++;
		ip.sport = used;
		json_line(jf, i, &h, specs[i].len, len, &ip);
		if (poll(&pfd, 1, 2000) != 1) {
			fprintf(stderr, "packet %u: not received\n", i);
			rc = 1;
			continue;
		}
		n = emu_roce_sock_recv(&sb, in, sizeof(in), &env, MSG_DONTWAIT);
		if (n != len || emu_roce_parse(in, (size_t)n, &env, &p) != 0 || env.sport != used ||
		    p.payload_len != specs[i].len || memcmp(p.payload, payload, specs[i].len) != 0) {
			fprintf(stderr, "packet %u: received %zd bytes, not accepted (%s)\n", i, n, emu_roce_drop_name(p.drop));
			rc = 1;
			continue;
		}
		accepted++;
	}
	printf("roce live: %u sent, %u received and accepted, %u fallbacks\n", sent, accepted,
	       (unsigned)sa.tx_fallbacks);
	emu_roce_sock_fini(&sa);
	emu_roce_sock_fini(&sb);
	emu_net_release(ipa, fda);
	emu_net_release(ipb, fdb);
	if (fclose(jf) != 0)
		rc = 1;
	return rc;
}

static int listen_n(unsigned count, const char *jsonl)
{
	static uint8_t in[EMU_ROCE_MAX_PKT + 1];
	struct emu_roce_sock s;
	uint32_t ip;
	int fd;
	char err[128];
	unsigned got = 0;
	FILE *jf = fopen(jsonl, "w");

	if (!jf || emu_net_claim(0, &ip, &fd, err, sizeof(err)) < 0 || emu_roce_sock_init(&s, fd, ip) < 0) {
		fprintf(stderr, "listen: cannot open a port\n");
		return 1;
	}
	printf("listening %u.%u.%u.%u\n", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
	fflush(stdout);
	for (; got < count; got++) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		struct emu_roce_ip env;
		struct emu_roce_pkt p;
		ssize_t n;

		if (poll(&pfd, 1, 5000) != 1)
			break;
		n = emu_roce_sock_recv(&s, in, sizeof(in) - 1, &env, MSG_DONTWAIT);
		if (n < 0)
			break;
		emu_roce_parse(in, (size_t)n, &env, &p);
		fprintf(jf, "{\"index\": %u, \"verdict\": \"%s\", \"length\": %zd, \"sport\": %u, \"opcode\": %u, "
			    "\"tver\": %u, \"pkey\": %u, \"dqpn\": %u, \"psn\": %u, \"payload_len\": %zu}\n",
			got, emu_roce_drop_name(p.drop), n, env.sport, p.h.bth.opcode, p.h.bth.tver, p.h.bth.pkey,
			p.h.bth.dqpn, p.h.bth.psn, p.payload_len);
		fflush(jf);
	}
	emu_roce_sock_fini(&s);
	emu_net_release(ip, fd);
	fclose(jf);
	printf("roce listen: %u of %u packets judged\n", got, count);
	return got == count ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "pcap") == 0)
		return write_pcap(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "live") == 0)
		return live(argv[2]);
	if (argc == 4 && strcmp(argv[1], "listen") == 0)
		return listen_n((unsigned)strtoul(argv[2], NULL, 0), argv[3]);
	fprintf(stderr, "usage: %s pcap OUT.pcap OUT.jsonl | live OUT.jsonl | listen COUNT OUT.jsonl\n", argv[0]);
	return 2;
}
