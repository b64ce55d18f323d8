/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Building RoCE v2 packets: headers, payload, pad, ICRC (roce_wire.h); the IPv4/UDP
 * envelope the kernel puts around them; Ethernet frames for pcap files. */
#include "hw/emu/roce_wire.h"

#include <errno.h>
#include <string.h>

void emu_roce_ip_init(struct emu_roce_ip *ip, uint32_t saddr, uint32_t daddr, uint16_t sport, uint8_t tos)
{
	*ip = (struct emu_roce_ip){ .saddr = saddr, .daddr = daddr, .sport = sport, .dport = EMU_ROCE_PORT,
				    .tos = tos, .ttl = EMU_IPV4_TTL, .id = 0, .frag_off = EMU_IPV4_DF };
}

/* RFC 1071 one's-complement sum, continued from `sum`. */
static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	while (len > 1) {
		sum += (uint32_t)p[0] << 8 | p[1];
		p += 2;
		len -= 2;
	}
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void ipv4_write(uint8_t *h, const struct emu_roce_ip *ip, size_t roce_len)
{
	h[0] = 0x45;            /* version 4, IHL 5: RoCE v2 carries no IP options */
	h[1] = ip->tos;
	emu_be16_put(h + 2, (uint16_t)(EMU_IPV4_HDR_LEN + EMU_UDP_HDR_LEN + roce_len));
	emu_be16_put(h + 4, ip->id);
	emu_be16_put(h + 6, ip->frag_off);
	h[8] = ip->ttl;
	h[9] = 17;              /* UDP */
	h[10] = h[11] = 0;
	emu_be32_put(h + 12, ip->saddr);
	emu_be32_put(h + 16, ip->daddr);
	emu_be16_put(h + 10, csum_fold(csum_add(0, h, EMU_IPV4_HDR_LEN)));
}

void emu_roce_ipv4_udp_write(uint8_t out[EMU_IPV4_HDR_LEN + EMU_UDP_HDR_LEN], const struct emu_roce_ip *ip,
			     const uint8_t *roce, size_t roce_len)
{
	uint8_t *u = out + EMU_IPV4_HDR_LEN;
	uint16_t ulen = (uint16_t)(EMU_UDP_HDR_LEN + roce_len);

	ipv4_write(out, ip, roce_len);
	emu_be16_put(u, ip->sport);
	emu_be16_put(u + 2, ip->dport);
	emu_be16_put(u + 4, ulen);
	u[6] = u[7] = 0;
	if (roce) {
		/* RFC 768: pseudo header (addresses, protocol, UDP length), header, data;
		 * a computed 0 is sent as 0xffff */
		uint8_t ph[12];
		uint32_t sum;
		uint16_t c;

		emu_be32_put(ph, ip->saddr);
		emu_be32_put(ph + 4, ip->daddr);
		ph[8] = 0;
		ph[9] = 17;
		emu_be16_put(ph + 10, ulen);
		sum = csum_add(0, ph, sizeof(ph));
		sum = csum_add(sum, u, EMU_UDP_HDR_LEN);
		/* an odd-length header sum would misalign the data: the header is 8 bytes */
		sum = csum_add(sum, roce, roce_len);
		c = csum_fold(sum);
		emu_be16_put(u + 6, c ? c : 0xffff);
	}
}

uint32_t emu_roce_icrc(const struct emu_roce_ip *ip, const uint8_t *ib, size_t ib_len)
{
	uint8_t hdr[EMU_IPV4_HDR_LEN + EMU_UDP_HDR_LEN];

	/* the headers as the sender's kernel writes them; masked fields do not matter */
	emu_roce_ipv4_udp_write(hdr, ip, NULL, ib_len + EMU_ROCE_ICRC_LEN);
	return emu_icrc_ipv4(hdr, hdr + EMU_IPV4_HDR_LEN, ib, ib_len);
}

int emu_roce_build_hdrs(uint8_t *buf, size_t cap, const struct emu_roce_hdrs *h, size_t len)
{
	const struct emu_roce_opinfo *o;
	struct emu_roce_hdrs hh;

	if (!buf || !h)
		return -EINVAL;
	o = emu_roce_opinfo(h->bth.opcode);
	if (!o)
		return -EPROTO;
	if (len && !(o->flags & EMU_ROCE_F_PAYLOAD))
		return -EINVAL;
	if (len > (size_t)EMU_ROCE_MAX_PKT - o->hdr_len - 3 - EMU_ROCE_ICRC_LEN)
		return -EINVAL;
	if (cap < o->hdr_len + len + emu_roce_padcnt(len) + EMU_ROCE_ICRC_LEN)
		return -ENOSPC;
	hh = *h;
	hh.bth.padcnt = emu_roce_padcnt(len);
	return emu_roce_hdrs_write(buf, cap, &hh);
}

int emu_roce_seal(uint8_t *buf, size_t cap, size_t n, const struct emu_roce_ip *ip)
{
	size_t pad;

	if (!buf || !ip || n < EMU_ROCE_BTH_LEN)
		return -EINVAL;
	pad = (buf[1] >> 4) & 3;
	if (n + pad + EMU_ROCE_ICRC_LEN > cap || n + pad + EMU_ROCE_ICRC_LEN > EMU_ROCE_MAX_PKT)
		return -ENOSPC;
	memset(buf + n, 0, pad);
	n += pad;
	emu_icrc_put(buf + n, emu_roce_icrc(ip, buf, n));
	return (int)(n + EMU_ROCE_ICRC_LEN);
}

int emu_roce_build(uint8_t *buf, size_t cap, const struct emu_roce_ip *ip, const struct emu_roce_hdrs *h,
		   const void *payload, size_t len)
{
	int hl = emu_roce_build_hdrs(buf, cap, h, len);

	if (hl < 0)
		return hl;
	if (len) {
		if (!payload)
			return -EINVAL;
		memcpy(buf + hl, payload, len);
	}
	return emu_roce_seal(buf, cap, (size_t)hl + len, ip);
}

int emu_roce_forge(uint8_t *buf, size_t cap, const struct emu_roce_ip *ip, const struct emu_roce_hdrs *h,
		   const void *payload, size_t len, const struct emu_roce_forge *f)
{
	static const struct emu_roce_forge none;
	struct emu_roce_hdrs hh;
	size_t pad, n;
	int hl;

	if (!buf || !ip || !h || (len && !payload))
		return -EINVAL;
	if (!f)
		f = &none;
	hh = *h;
	pad = f->keep_padcnt ? f->pad_bytes : emu_roce_padcnt(len);
	if (!f->keep_padcnt)
		hh.bth.padcnt = (uint8_t)pad;
	hl = emu_roce_hdrs_write(buf, cap, &hh);
	if (hl < 0)
		return hl;
	n = (size_t)hl;
	if (n + len + pad + EMU_ROCE_ICRC_LEN > cap)
		return -ENOSPC;
	if (len)
		memcpy(buf + n, payload, len);
	n += len;
	memset(buf + n, 0, pad);
	n += pad;
	if (!f->no_icrc) {
		emu_icrc_put(buf + n, emu_roce_icrc(ip, buf, n) ^ f->icrc_xor);
		n += EMU_ROCE_ICRC_LEN;
	}
	if (f->truncate && f->truncate < n)
		n = f->truncate;
	return (int)n;
}

int emu_roce_frame_write(uint8_t *buf, size_t cap, const uint8_t dmac[6], const uint8_t smac[6],
			 const struct emu_roce_ip *ip, const uint8_t *roce, size_t roce_len)
{
	size_t n = EMU_ETH_HDR_LEN + EMU_IPV4_HDR_LEN + EMU_UDP_HDR_LEN + roce_len;

	if (!buf || !ip || (roce_len && !roce))
		return -EINVAL;
	if (roce_len > EMU_ROCE_MAX_PKT)
		return -EMSGSIZE;
	if (cap < n)
		return -ENOSPC;
	memcpy(buf, dmac, 6);
	memcpy(buf + 6, smac, 6);
	emu_be16_put(buf + 12, EMU_ETHERTYPE_IPV4);
	emu_roce_ipv4_udp_write(buf + EMU_ETH_HDR_LEN, ip, roce, roce_len);
	if (roce_len)
		memcpy(buf + EMU_ETH_HDR_LEN + EMU_IPV4_HDR_LEN + EMU_UDP_HDR_LEN, roce, roce_len);
	return (int)n;
}

void emu_roce_mac_from_ipv4(uint32_t ipv4, uint8_t mac[6])
{
	mac[0] = 0x02;          /* locally administered, unicast */
	mac[1] = 0x00;
	emu_be32_put(mac + 2, ipv4);
}
