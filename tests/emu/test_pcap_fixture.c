/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Real wire: shared/fixtures/roce-v2-hardware-capture.pcap (RC traffic between two
 * hardware RoCE NICs, 123 frames, 105 RoCE v2).  Our parser must accept every RoCE
 * packet, our ICRC must reproduce every one the NICs computed (over the real IPv4
 * header bytes), and the decoded headers must show IBTA sequencing: SEND FIRST /
 * SEND LAST WITH IMMEDIATE at path MTU 1024, PSNs +1 per packet, AckReq on the last
 * packet of each message, ACKs with credits and an MSN counting completed messages. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/roce_wire.h"
#include "tests/common/pcap_file.h"

#define MAX_PKTS 256

struct fx_pkt {
	unsigned frame;
	struct emu_roce_ip env;
	struct emu_roce_hdrs h;
	size_t payload_len;
	unsigned opflags;
};

struct fx {
	unsigned frames, roce, parsed, verified, failures, other;
	unsigned n;
	struct fx_pkt pkt[MAX_PKTS];
};

static void fx_path(char *buf, size_t len)
{
	const char *dir = getenv("UVERBS_FIXTURES");

	cr_assert_not_null(dir, "UVERBS_FIXTURES is not set");
	snprintf(buf, len, "%s/roce-v2-hardware-capture.pcap", dir);
}

static void fx_load(struct fx *fx)
{
	static uint8_t frame[65536];
	struct pcap_file pf;
	char path[4096];
	size_t caplen;
	int rc;

	memset(fx, 0, sizeof(*fx));
	fx_path(path, sizeof(path));
	cr_assert_eq(pcap_file_open(&pf, path), 0, "cannot read %s", path);
	cr_assert_eq(pf.linktype, PCAP_FILE_LINKTYPE_ETHERNET);
	while ((rc = pcap_file_next(&pf, frame, sizeof(frame), &caplen, NULL, NULL)) == 1) {
		struct emu_roce_pkt p;
		struct emu_roce_ip env;
		const uint8_t *ip = frame + EMU_ETH_HDR_LEN;
		size_t iplen;
		int prc;

		fx->frames++;
		prc = emu_roce_parse_frame(frame, caplen, &p, &env);
		if (prc == -ENOENT) {
			fx->other++;
			continue;
		}
		fx->roce++;
		/* the ICRC recomputed directly over the frame's own IPv4 and UDP header
		 * bytes, independently of the parser's verdict */
		iplen = (size_t)ip[2] << 8 | ip[3];
		if (iplen >= 20 + 8 + 16 && iplen <= caplen - EMU_ETH_HDR_LEN &&
		    emu_icrc_ipv4(ip, ip + 20, ip + 28, iplen - 28 - 4) == emu_icrc_get(ip + iplen - 4))
			fx->verified++;
		if (prc != 0) {
			fx->failures++;
			cr_log_error("frame %u: dropped (%s)", fx->frames, emu_roce_drop_name(p.drop));
			continue;
		}
		fx->parsed++;
		cr_assert_lt(fx->n, MAX_PKTS);
		fx->pkt[fx->n].frame = fx->frames;
		fx->pkt[fx->n].env = env;
		fx->pkt[fx->n].h = p.h;
		fx->pkt[fx->n].payload_len = p.payload_len;
		fx->pkt[fx->n].opflags = p.op->flags;
		fx->n++;
	}
	cr_assert_eq(rc, 0, "pcap read error %d", rc);
	pcap_file_close(&pf);
}

Test(pcap_fixture, parser_accepts_every_roce_packet_and_icrc_reproduces_all)
{
	static struct fx fx;

	fx_load(&fx);
	printf("roce fixture: %u packets parsed, %u ICRCs verified, %u failures\n", fx.parsed, fx.verified,
	       fx.failures + (fx.roce - fx.verified));
	fflush(stdout);
	cr_expect_eq(fx.frames, 123);
	cr_expect_eq(fx.roce, 105);
	cr_expect_eq(fx.parsed, 105);
	cr_expect_eq(fx.verified, 105);
	cr_expect_eq(fx.failures, 0);
}

Test(pcap_fixture, envelope_is_ipv4_df_id0_ect0_from_ports_69_and_72)
{
	static struct fx fx;

	fx_load(&fx);
	for (unsigned i = 0; i < fx.n; i++) {
		const struct emu_roce_ip *e = &fx.pkt[i].env;

		cr_expect_eq(e->dport, EMU_ROCE_PORT);
		cr_expect(e->sport == 69 || e->sport == 72, "frame %u sport %u", fx.pkt[i].frame, e->sport);
		cr_expect_eq(e->id, 0);
		cr_expect_eq(e->frag_off, EMU_IPV4_DF);
		cr_expect_eq(e->tos & 3, 2, "ECT(0)");
		cr_expect_eq(fx.pkt[i].h.bth.tver, 0);
		cr_expect_eq(fx.pkt[i].h.bth.pkey, 0xffff);
		cr_expect(fx.pkt[i].h.bth.migreq);
	}
}

/* One direction of the RC connection: requests from `req` and the ACKs coming back. */
static void check_direction(const struct fx *fx, uint32_t req, unsigned *nreq, unsigned *nmsg, unsigned *nack)
{
	int prev = -1;
	uint32_t next_psn = 0, qpn = 0, last_ack_psn = 0;
	bool first = true, any_ack = false;
	uint32_t done_psn[MAX_PKTS];
	unsigned ndone = 0;

	for (unsigned i = 0; i < fx->n; i++) {
		const struct fx_pkt *k = &fx->pkt[i];
		const struct emu_roce_bth *b = &k->h.bth;

		if (k->env.saddr == req && (k->opflags & EMU_ROCE_F_REQ)) {
			(*nreq)++;
			if (first) {
				next_psn = b->psn;
				qpn = b->dqpn;
				first = false;
			}
			cr_expect_eq(b->psn, next_psn, "frame %u PSN", k->frame);
			cr_expect_eq(b->dqpn, qpn);
			cr_expect(emu_roce_opcode_follows(prev, b->opcode), "frame %u: 0x%02x after 0x%02x", k->frame,
				  b->opcode, prev);
			/* path MTU 1024: FIRST and MIDDLE packets are full and unpadded */
			if (k->opflags & (EMU_ROCE_F_MIDDLE) ||
			    (k->opflags & EMU_ROCE_F_FIRST && !(k->opflags & EMU_ROCE_F_LAST))) {
				cr_expect_eq(k->payload_len, 1024, "frame %u", k->frame);
				cr_expect_eq(b->padcnt, 0);
			} else {
				cr_expect_leq(k->payload_len, 1024);
				cr_expect_eq(b->padcnt, emu_roce_padcnt(k->payload_len), "frame %u", k->frame);
			}
			if (k->opflags & EMU_ROCE_F_LAST) {
				cr_expect(b->ackreq, "frame %u: last packet without AckReq", k->frame);
				done_psn[ndone++] = b->psn;
				(*nmsg)++;
			}
			next_psn = emu_psn_add(next_psn, 1);
			prev = b->opcode;
		} else if (k->env.daddr == req && (k->opflags & EMU_ROCE_F_ACK)) {
			unsigned msgs = 0;

			(*nack)++;
			cr_expect_eq(emu_aeth_kind(k->h.aeth.syndrome), EMU_AETH_ACK, "frame %u", k->frame);
			cr_expect_gt(emu_aeth_credits(emu_aeth_value(k->h.aeth.syndrome)), 0);
			cr_expect(emu_psn_lt(k->h.bth.psn, next_psn), "frame %u acks an unsent PSN", k->frame);
			if (any_ack)
				cr_expect(emu_psn_ge(k->h.bth.psn, last_ack_psn), "frame %u ACK PSN went back", k->frame);
			/* MSN: messages completed up to and including the acknowledged PSN */
			for (unsigned j = 0; j < ndone; j++)
				msgs += emu_psn_le(done_psn[j], k->h.bth.psn);
			cr_expect_eq(k->h.aeth.msn, msgs, "frame %u MSN %u, %u messages done", k->frame, k->h.aeth.msn,
				     msgs);
			last_ack_psn = k->h.bth.psn;
			any_ack = true;
		}
	}
}

Test(pcap_fixture, decoded_headers_follow_rc_sequencing_and_msn)
{
	static struct fx fx;
	unsigned nreq = 0, nmsg = 0, nack = 0;
	uint32_t a = 0xc0a84604u, b = 0xc0a84606u; /* 192.168.70.4 and .6 */

	fx_load(&fx);
	check_direction(&fx, a, &nreq, &nmsg, &nack);
	check_direction(&fx, b, &nreq, &nmsg, &nack);
	printf("roce fixture sequencing: %u requests, %u messages, %u ACKs checked\n", nreq, nmsg, nack);
	fflush(stdout);
	cr_expect_eq(nreq + nack, 105);
	/* .6 sends 33 two-packet messages and one SEND ONLY; .4 one SEND ONLY */
	cr_expect_eq(nmsg, 35);
}

Test(pcap_fixture, send_first_and_last_with_immediate_carry_mtu_and_imm)
{
	static struct fx fx;
	unsigned first = 0, last_imm = 0;

	fx_load(&fx);
	for (unsigned i = 0; i < fx.n; i++) {
		const struct fx_pkt *k = &fx.pkt[i];

		if (k->h.bth.opcode == EMU_ROCE_RC_SEND_FIRST) {
			first++;
			cr_expect_eq(k->payload_len, 1024);
		} else if (k->h.bth.opcode == EMU_ROCE_RC_SEND_LAST_IMM) {
			last_imm++;
			cr_expect_eq(k->h.imm, 1, "frame %u imm", k->frame);
			cr_expect_geq(k->payload_len, 1);
		}
	}
	cr_expect_eq(first, 33);
	cr_expect_eq(last_imm, 33);
}

Test(pcap_fixture, a_corrupted_fixture_packet_is_dropped_for_its_icrc)
{
	static uint8_t frame[65536];
	struct pcap_file pf;
	char path[4096];
	size_t caplen;
	unsigned dropped = 0, seen = 0;

	fx_path(path, sizeof(path));
	cr_assert_eq(pcap_file_open(&pf, path), 0);
	while (pcap_file_next(&pf, frame, sizeof(frame), &caplen, NULL, NULL) == 1) {
		struct emu_roce_pkt p;

		if (emu_roce_parse_frame(frame, caplen, &p, NULL) == -ENOENT)
			continue;
		seen++;
		/* one bit of the last payload/header byte before the ICRC */
		frame[caplen - 5] ^= 0x20;
		if (emu_roce_parse_frame(frame, caplen, &p, NULL) == -EBADMSG && p.drop == EMU_ROCE_DROP_ICRC)
			dropped++;
	}
	pcap_file_close(&pf);
	cr_expect_eq(seen, 105);
	cr_expect_eq(dropped, 105);
}
