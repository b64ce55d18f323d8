/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The RoCE v2 invariant CRC (IBTA vol 1 Annex A17.3.3 "ICRC"): CRC-32 (the Ethernet
 * polynomial, as zlib computes it) over a pseudo packet made of 8 bytes of 0xFF standing
 * for the LRH, the IP header, the UDP header, the BTH and everything after it up to the
 * ICRC, with the fields that routers may change masked to all ones:
 *   IPv4: Type of Service (DSCP and ECN), Time to Live, Header Checksum;
 *   UDP:  Checksum;
 *   BTH:  resv8a (the byte with FECN/BECN, A17.9.3).
 * Everything else is covered, the IPv4 Identification and flags included: that is why
 * the emulator sends through an unconnected UDP socket with IP_PMTUDISC_DO, for which
 * Linux puts DF=1 and ID=0 (see roce_wire.h).  The CRC is stored in the last four bytes
 * of the packet least significant byte first (as rxe and scapy store it).
 * Only IPv4 is implemented: the emulated ports use ::ffff:127.0.0.N GIDs. */
#ifndef UVERBS_HW_EMU_ICRC_H
#define UVERBS_HW_EMU_ICRC_H

#include <stddef.h>
#include <stdint.h>

#define EMU_IPV4_HDR_LEN 20
#define EMU_UDP_HDR_LEN 8

/* Plain CRC-32 with zlib's calling convention: emu_crc32(0, buf, len) is crc32(buf);
 * pass the previous result to continue over more bytes.  EMU_CRC_NO_CLMUL in the
 * environment (read at the first call) keeps x86-64 on the table path, for tests. */
uint32_t emu_crc32(uint32_t crc, const void *buf, size_t len);

/* ICRC of a RoCE v2 packet over IPv4.  ip: the 20-byte IPv4 header as sent (options are
 * not part of RoCE v2 and not accepted), udp: its 8-byte UDP header, ib: the BTH and
 * what follows, ib_len bytes, not including the ICRC itself (>= 12). */
uint32_t emu_icrc_ipv4(const uint8_t ip[EMU_IPV4_HDR_LEN], const uint8_t udp[EMU_UDP_HDR_LEN],
		       const uint8_t *ib, size_t ib_len);

/* As emu_icrc_ipv4 with the IPv4 identification unknown (ip's is ignored): 0 and *id
 * when some identification makes the ICRC `want`, -EBADMSG when none does (icrc.c). */
int emu_icrc_ipv4_solve_id(const uint8_t ip[EMU_IPV4_HDR_LEN], const uint8_t udp[EMU_UDP_HDR_LEN],
			   const uint8_t *ib, size_t ib_len, uint32_t want, uint16_t *id);

static inline void emu_icrc_put(uint8_t *p, uint32_t icrc)
{
	p[0] = (uint8_t)icrc;
	p[1] = (uint8_t)(icrc >> 8);
	p[2] = (uint8_t)(icrc >> 16);
	p[3] = (uint8_t)(icrc >> 24);
}

static inline uint32_t emu_icrc_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#endif
