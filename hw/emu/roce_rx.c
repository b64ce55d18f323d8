/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Parsing and validating RoCE v2 packets (roce_wire.h): what the wire layer can judge
 * without a QP.  The transport engines judge the rest (QPN, state, P_Key, PSN ...)
 * and count their drops in the same enum emu_roce_drop. */
#include "hw/emu/roce_wire.h"

#include <errno.h>
#include <string.h>

static const char *const drop_names[EMU_ROCE_DROP_NR] = {
	[EMU_ROCE_DROP_NONE] = "none",
	[EMU_ROCE_DROP_IP] = "bad_ip_udp",
	[EMU_ROCE_DROP_SHORT] = "short",
	[EMU_ROCE_DROP_TOO_LONG] = "too_long",
	[EMU_ROCE_DROP_ICRC] = "bad_icrc",
	[EMU_ROCE_DROP_TVER] = "bad_tver",
	[EMU_ROCE_DROP_OPCODE] = "bad_opcode",
	[EMU_ROCE_DROP_LENGTH] = "bad_length",
	[EMU_ROCE_DROP_PAD] = "bad_pad",
	[EMU_ROCE_DROP_QPN] = "unknown_qpn",
	[EMU_ROCE_DROP_QP_STATE] = "qp_state",
	[EMU_ROCE_DROP_TRANSPORT] = "wrong_transport",
	[EMU_ROCE_DROP_PKEY] = "bad_pkey",
	[EMU_ROCE_DROP_QKEY] = "bad_qkey",
	[EMU_ROCE_DROP_PSN] = "bad_psn",
	[EMU_ROCE_DROP_OPSEQ] = "bad_opcode_sequence",
	[EMU_ROCE_DROP_SRC] = "wrong_source",
	[EMU_ROCE_DROP_NO_RWQE] = "out_of_buffer",
};

const char *emu_roce_drop_name(enum emu_roce_drop why)
{
	return (unsigned)why < EMU_ROCE_DROP_NR && drop_names[why] ? drop_names[why] : "?";
}

static int drop(struct emu_roce_pkt *p, enum emu_roce_drop why)
{
	p->drop = why;
	return -EBADMSG;
}

/* The checks shared by the socket path (synthesised headers) and the frame path (the
 * real header bytes): iphdr is the 20-byte IPv4 header followed by the UDP header.
 * id_unknown: the socket path, whose header has identification 0 as the emulator's own
 * ports send it; a sender outside the emulated segment (127/8) picks its own, which the
 * socket hides, so its ICRC is checked for some identification (icrc.c). */
static int parse_common(const uint8_t *iphdr, const uint8_t *buf, size_t len, struct emu_roce_pkt *p,
			bool id_unknown)
{
	const struct emu_roce_opinfo *o;
	size_t body;
	int rc;

	memset(p, 0, sizeof(*p));
	if (len > EMU_ROCE_MAX_PKT)
		return drop(p, EMU_ROCE_DROP_TOO_LONG);
	if (len < EMU_ROCE_BTH_LEN + EMU_ROCE_ICRC_LEN)
		return drop(p, EMU_ROCE_DROP_SHORT);
	p->icrc = emu_icrc_get(buf + len - EMU_ROCE_ICRC_LEN);
	if (emu_icrc_ipv4(iphdr, iphdr + EMU_IPV4_HDR_LEN, buf, len - EMU_ROCE_ICRC_LEN) != p->icrc) {
		uint16_t id;

		if (!id_unknown || iphdr[12] == 127 ||
		    emu_icrc_ipv4_solve_id(iphdr, iphdr + EMU_IPV4_HDR_LEN, buf, len - EMU_ROCE_ICRC_LEN, p->icrc, &id))
			return drop(p, EMU_ROCE_DROP_ICRC);
	}
	rc = emu_roce_hdrs_read(buf, len - EMU_ROCE_ICRC_LEN, &p->h);
	/* IBTA 9.6: a transport header version other than 0 is silently dropped */
	if (p->h.bth.tver != 0)
		return drop(p, EMU_ROCE_DROP_TVER);
	if (rc == -EPROTO)
		return drop(p, EMU_ROCE_DROP_OPCODE);
	o = emu_roce_opinfo(p->h.bth.opcode);
	p->op = o;
	if (rc < 0)
		return drop(p, EMU_ROCE_DROP_SHORT);
	p->hdr_len = o->hdr_len;
	body = len - EMU_ROCE_ICRC_LEN - o->hdr_len;
	if (body && !(o->flags & EMU_ROCE_F_PAYLOAD))
		return drop(p, EMU_ROCE_DROP_LENGTH);
	/* 9.2.4: the pad count bytes come out of the packet's data */
	if (p->h.bth.padcnt > body)
		return drop(p, EMU_ROCE_DROP_PAD);
	p->payload = buf + o->hdr_len;
	p->payload_len = body - p->h.bth.padcnt;
	return 0;
}

int emu_roce_parse(const uint8_t *buf, size_t len, const struct emu_roce_ip *ip, struct emu_roce_pkt *p)
{
	uint8_t hdr[EMU_IPV4_HDR_LEN + EMU_UDP_HDR_LEN];

	if (!p || !ip || (!buf && len))
		return -EINVAL;
	emu_roce_ipv4_udp_write(hdr, ip, NULL, len > EMU_ROCE_MAX_PKT ? EMU_ROCE_MAX_PKT : len);
	return parse_common(hdr, buf, len, p, true);
}

int emu_roce_parse_ipv4(const uint8_t *ipkt, size_t len, struct emu_roce_pkt *p, struct emu_roce_ip *env)
{
	const uint8_t *u;
	size_t ihl, tot, ulen;

	if (!p || !ipkt)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	if (len < EMU_IPV4_HDR_LEN || (ipkt[0] >> 4) != 4 || ipkt[9] != 17)
		return -ENOENT;
	ihl = (size_t)(ipkt[0] & 0xf) * 4;
	if (ihl < EMU_IPV4_HDR_LEN || len < ihl + EMU_UDP_HDR_LEN)
		return drop(p, EMU_ROCE_DROP_IP);
	u = ipkt + ihl;
	if (emu_be16_get(u + 2) != EMU_ROCE_PORT)
		return -ENOENT;
	/* RoCE v2 (A17.4) carries no IP options and is never fragmented */
	if (ihl != EMU_IPV4_HDR_LEN || (emu_be16_get(ipkt + 6) & 0x3fff))
		return drop(p, EMU_ROCE_DROP_IP);
	tot = emu_be16_get(ipkt + 2);
	ulen = emu_be16_get(u + 4);
	if (tot > len || tot < EMU_IPV4_HDR_LEN + EMU_UDP_HDR_LEN || ulen != tot - EMU_IPV4_HDR_LEN)
		return drop(p, EMU_ROCE_DROP_IP);
	if (env) {
		env->saddr = emu_be32_get(ipkt + 12);
		env->daddr = emu_be32_get(ipkt + 16);
		env->sport = emu_be16_get(u);
		env->dport = emu_be16_get(u + 2);
		env->tos = ipkt[1];
		env->ttl = ipkt[8];
		env->id = emu_be16_get(ipkt + 4);
		env->frag_off = emu_be16_get(ipkt + 6);
	}
	return parse_common(ipkt, u + EMU_UDP_HDR_LEN, ulen - EMU_UDP_HDR_LEN, p, false);
}

int emu_roce_parse_frame(const uint8_t *frame, size_t len, struct emu_roce_pkt *p, struct emu_roce_ip *env)
{
	size_t off = 12;

	if (!p || !frame)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	if (len < EMU_ETH_HDR_LEN)
		return -ENOENT;
	if (emu_be16_get(frame + off) == EMU_ETHERTYPE_VLAN) {
		off += 4;
		if (len < off + 2)
			return -ENOENT;
	}
	if (emu_be16_get(frame + off) != EMU_ETHERTYPE_IPV4)
		return -ENOENT;
	off += 2;
	return emu_roce_parse_ipv4(frame + off, len - off, p, env);
}

void emu_roce_grh_write(uint8_t out[EMU_ROCE_GRH_LEN], const struct emu_roce_ip *ip, size_t roce_len)
{
	uint8_t hdr[EMU_IPV4_HDR_LEN + EMU_UDP_HDR_LEN];

	emu_roce_ipv4_udp_write(hdr, ip, NULL, roce_len);
	memset(out, 0, EMU_ROCE_GRH_LEN - EMU_IPV4_HDR_LEN);
	memcpy(out + EMU_ROCE_GRH_LEN - EMU_IPV4_HDR_LEN, hdr, EMU_IPV4_HDR_LEN);
}
