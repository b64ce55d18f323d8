/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RoCE v2 packets on the wire: build (roce_tx.c), parse and validate (roce_rx.c), and
 * move them through the port's UDP socket (roce_sock.c).  docs/architecture.md, "RoCE v2 on the wire and the transport engines".
 *
 * A RoCE v2 packet here is the UDP payload: BTH, extension headers, payload, pad,
 * ICRC.  The IPv4 and UDP headers around it are the kernel's (we send through a UDP
 * socket), described by struct emu_roce_ip.  The ICRC covers them, so both ends must
 * know them exactly: an emulated port sends from an unconnected socket with
 * IP_PMTUDISC_DO, for which Linux sends DF=1 and Identification 0 (checked on a real
 * loopback capture by tests/interop/test_roce_wire.py); TOS, TTL and checksums are
 * masked out of the ICRC.  A receiver reconstructs the header from the sender's
 * address and port (recvmsg), its own address, the datagram length, DF and ID 0.
 *
 * Who calls this: the RC/UC/UD transport engines, tests and tools (hostile packets,
 * pcap writers).  Errors: 0 / a length, or a negative errno.
 */
#ifndef UVERBS_HW_EMU_ROCE_WIRE_H
#define UVERBS_HW_EMU_ROCE_WIRE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hw/emu/icrc.h"
#include "hw/emu/roce_hdr.h"

#define EMU_ROCE_PORT 4791          /* IANA RoCE v2 UDP destination port (A17.2) */
#define EMU_ROCE_SPORT_MIN 0xc000   /* source ports carry flow entropy (A17.5.1.1) */
#define EMU_IPV4_DF 0x4000          /* IPv4 flags/fragment: Don't Fragment */
#define EMU_IPV4_TTL 64             /* Linux ip_default_ttl: what the kernel puts */
#define EMU_ETH_HDR_LEN 14
#define EMU_ETHERTYPE_IPV4 0x0800
#define EMU_ETHERTYPE_VLAN 0x8100
/* Largest UDP payload over IPv4: 65535 - 20 - 8. */
#define EMU_ROCE_MAX_PKT 65507

/* The IPv4 + UDP envelope of a RoCE v2 packet, host order. */
struct emu_roce_ip {
	uint32_t saddr, daddr;
	uint16_t sport, dport;
	uint8_t tos;            /* traffic class: DSCP << 2 | ECN */
	uint8_t ttl;
	uint16_t id;            /* Identification: 0 for what an emulated port sends */
	uint16_t frag_off;      /* flags + fragment offset: EMU_IPV4_DF */
};

/* The envelope an emulated port's socket produces: ID 0, DF, TTL 64, dport 4791. */
void emu_roce_ip_init(struct emu_roce_ip *ip, uint32_t saddr, uint32_t daddr, uint16_t sport, uint8_t tos);

/* The 20-byte IPv4 header (with its checksum) and the 8-byte UDP header for a RoCE
 * packet of roce_len bytes.  If roce is given the UDP checksum is computed over it,
 * otherwise it is 0 ("none", RFC 768), which the ICRC masks anyway. */
void emu_roce_ipv4_udp_write(uint8_t out[EMU_IPV4_HDR_LEN + EMU_UDP_HDR_LEN], const struct emu_roce_ip *ip,
			     const uint8_t *roce, size_t roce_len);

/* ICRC of a RoCE packet (BTH .. before the ICRC, ib_len bytes) inside `ip`. */
uint32_t emu_roce_icrc(const struct emu_roce_ip *ip, const uint8_t *ib, size_t ib_len);

/* ---- transmit (roce_tx.c) ---- */

/* One valid packet: the opcode's headers (from h; BTH.PadCnt is set from len, the rest
 * as given), the payload, zero pad bytes and the ICRC for `ip`.  -EPROTO: opcode not
 * supported; -EINVAL: payload on an opcode that carries none, or too long; -ENOSPC.
 * Returns the packet length. */
int emu_roce_build(uint8_t *buf, size_t cap, const struct emu_roce_ip *ip, const struct emu_roce_hdrs *h,
		   const void *payload, size_t len);

/* The same in two steps, for callers that DMA the payload straight into the packet:
 * write the headers for a payload of `len` bytes (returns the header length; the
 * payload goes at buf + that), then seal: pad and ICRC appended (returns the length). */
int emu_roce_build_hdrs(uint8_t *buf, size_t cap, const struct emu_roce_hdrs *h, size_t len);
int emu_roce_seal(uint8_t *buf, size_t cap, size_t hdr_and_payload_len, const struct emu_roce_ip *ip);

/* Anything, valid or not, for hostile-packet tests: the BTH and h's extension headers
 * written as given (an unknown opcode gets the BTH only; the payload follows, so a test
 * can put any bytes there), then what `f` asks for. */
struct emu_roce_forge {
	bool keep_padcnt;       /* write h->bth.padcnt as given instead of from len */
	uint8_t pad_bytes;      /* with keep_padcnt: this many zero bytes of pad (0..255) */
	uint32_t icrc_xor;      /* nonzero: the ICRC is corrupted by this */
	bool no_icrc;           /* leave the ICRC out */
	size_t truncate;        /* nonzero: cut the packet to this many bytes */
};
int emu_roce_forge(uint8_t *buf, size_t cap, const struct emu_roce_ip *ip, const struct emu_roce_hdrs *h,
		   const void *payload, size_t len, const struct emu_roce_forge *f);

/* A whole Ethernet II frame (14 + 20 + 8 + roce_len bytes) around a built packet, as
 * the kernel would put it on a wire: for pcap files and raw injection. */
int emu_roce_frame_write(uint8_t *buf, size_t cap, const uint8_t dmac[6], const uint8_t smac[6],
			 const struct emu_roce_ip *ip, const uint8_t *roce, size_t roce_len);

/* The MAC of an emulated port: locally administered unicast 02:00 + the IPv4 address. */
void emu_roce_mac_from_ipv4(uint32_t ipv4, uint8_t mac[6]);

/* ---- receive (roce_rx.c) ---- */

/* Why a packet was dropped.  The wire layer decides the first group; the transport
 * engines use the rest, so one counter array (indexed by this) covers every drop. */
enum emu_roce_drop {
	EMU_ROCE_DROP_NONE = 0,
	/* wire layer (emu_roce_parse) */
	EMU_ROCE_DROP_IP,          /* IPv4/UDP envelope malformed (frames only) */
	EMU_ROCE_DROP_SHORT,       /* shorter than BTH + ICRC, or than the opcode's headers */
	EMU_ROCE_DROP_TOO_LONG,    /* over the receive buffer */
	EMU_ROCE_DROP_ICRC,        /* ICRC mismatch */
	EMU_ROCE_DROP_TVER,        /* BTH.TVer != 0 */
	EMU_ROCE_DROP_OPCODE,      /* opcode not supported (RD, reserved) */
	EMU_ROCE_DROP_LENGTH,      /* payload on an opcode that carries none */
	EMU_ROCE_DROP_PAD,         /* pad count larger than the payload */
	/* transport engines */
	EMU_ROCE_DROP_QPN,         /* no such QP */
	EMU_ROCE_DROP_QP_STATE,    /* QP not in a state that receives */
	EMU_ROCE_DROP_TRANSPORT,   /* opcode's service differs from the QP's */
	EMU_ROCE_DROP_PKEY,        /* P_Key does not match the QP's */
	EMU_ROCE_DROP_QKEY,        /* UD: Q_Key does not match */
	EMU_ROCE_DROP_PSN,         /* PSN out of the window, silently dropped */
	EMU_ROCE_DROP_OPSEQ,       /* opcode sequence error (UC drops, RC NAKs) */
	EMU_ROCE_DROP_SRC,         /* RC/UC: not from the connected peer */
	EMU_ROCE_DROP_NO_RWQE,     /* UC/UD: no receive WQE posted (out_of_buffer) */
	EMU_ROCE_DROP_NR
};
const char *emu_roce_drop_name(enum emu_roce_drop why);

/* A parsed packet; pointers point into the caller's buffer. */
struct emu_roce_pkt {
	struct emu_roce_hdrs h;
	const struct emu_roce_opinfo *op;    /* NULL when dropped before the opcode was known */
	size_t hdr_len;                      /* BTH + extension headers */
	const uint8_t *payload;
	size_t payload_len;                  /* without the pad */
	uint32_t icrc;                       /* as carried */
	enum emu_roce_drop drop;
};

/* Validate a RoCE packet (the UDP payload, len bytes as received) that came in `ip`:
 * 0 when accepted, -EBADMSG when dropped (p->drop says why), -EINVAL for bad args.
 * Checks, in order: length >= BTH + ICRC, ICRC (first, so that a corrupted packet is
 * counted as such whatever field the corruption hit), TVer, opcode known, the opcode's
 * headers present, payload allowed, pad count. */
int emu_roce_parse(const uint8_t *buf, size_t len, const struct emu_roce_ip *ip, struct emu_roce_pkt *p);

/* The same from the IPv4 header on (len: bytes available; the IPv4 total length says
 * how many belong to the packet), with the ICRC computed over the header bytes as they
 * are.  -ENOENT: not RoCE v2 (not IPv4/UDP to port 4791); env may be NULL. */
int emu_roce_parse_ipv4(const uint8_t *ipkt, size_t len, struct emu_roce_pkt *p, struct emu_roce_ip *env);
/* And from an Ethernet II frame (optionally one 802.1Q tag). */
int emu_roce_parse_frame(const uint8_t *frame, size_t len, struct emu_roce_pkt *p, struct emu_roce_ip *env);

/* The 40-byte GRH area at the head of a UD receive buffer for a RoCE v2 IPv4 packet, as
 * mlx5 and rxe write it (union rdma_network_hdr): 20 zero bytes, then the IPv4 header. */
void emu_roce_grh_write(uint8_t out[EMU_ROCE_GRH_LEN], const struct emu_roce_ip *ip, size_t roce_len);

/* ---- the port's socket (roce_sock.c) ---- */

#define EMU_ROCE_TX_CACHE 256       /* source-port sockets kept open per port */

/* The port's UDP socket bound to addr:4791 (opened by netaddr.c, not closed here) plus
 * sockets bound to addr:<sport> for the flow-label source ports, opened on first use. */
struct emu_roce_sock {
	int fd;
	uint32_t ipv4;
	pthread_mutex_t lock;
	int *tx_fd;                 /* [sport - 0xc000]: -1 none yet; NULL until first use */
	unsigned ntx;
	uint64_t tx_fallbacks;      /* sends that could not use their source port */
	/* Corked sends (emu_roce_sock_cork): queued, then sent together, one system call
	 * per run of packets leaving from the same socket.  Used under the caller's lock. */
	unsigned cork;              /* nesting depth; 0: every send goes out at once */
	bool cork_off;              /* a queued send failed with EMSGSIZE: send at once from now */
	struct emu_roce_txq *txq;   /* NULL until first corked */
	uint64_t tx_errors;         /* queued sends the socket refused (counted as lost) */
	uint64_t tx_calls;          /* system calls that sent packets, queued or not */
	bool seg_off;               /* queued packets leave one datagram each: emu:gso=off, a
				     * system without UDP segmentation, or the kernel refused it */
	uint64_t tx_segmented;      /* queued packets that left in segmented datagrams */
};

/* Set IP_PMTUDISC_DO (DF=1, ID=0) and IP_RECVTOS/IP_RECVTTL on fd. */
int emu_roce_sock_init(struct emu_roce_sock *s, int fd, uint32_t ipv4);
void emu_roce_sock_fini(struct emu_roce_sock *s);
/* Let the port's socket coalesce arrivals (plat_udp_gro_enable): a run of equal packets
 * that another emulated port sent segmented on loopback (emu_roce_sock_uncork) then
 * arrives as one datagram, which emu_roce_sock_recv_many reports with its segment size.
 * Only batches know segments: emu_roce_sock_recv must not be used on such a socket.
 * 0, or -errno (the socket stays as it was). */
int emu_roce_sock_coalesce(struct emu_roce_sock *s);

/* Send a built packet to ip->daddr:ip->dport from ip->sport (ip->saddr must be the
 * port's).  Source port 4791 uses the port's socket; 0xc000-0xffff a cached socket bound
 * to it; any other port a socket opened for this one send.  If that port cannot be
 * bound the packet leaves from 4791 with its ICRC recomputed (pkt is rewritten) and
 * *sport_used says so (may be NULL).  ip->tos goes out as IP_TOS. */
int emu_roce_sock_send(struct emu_roce_sock *s, const struct emu_roce_ip *ip, uint8_t *pkt, size_t len,
		       uint16_t *sport_used);
/* While corked: where the next packet can be built so that emu_roce_sock_send queues it
 * without copying it (the queue's next slot, cap bytes of room), or NULL (not corked,
 * corking off, more than a slot holds): build it elsewhere.  Sending anything else
 * first is fine: the packet is then copied as any other. */
uint8_t *emu_roce_sock_tx_buf(struct emu_roce_sock *s, size_t cap);

/* Receive one datagram (flags: MSG_DONTWAIT or 0).  Returns its full length, which is
 * larger than cap when it was truncated (drop it as TOO_LONG), or -errno.  env is the
 * envelope as the sender's kernel built it: the sender's address and port, ours, TOS
 * and TTL as received, ID 0 and DF (what emulated ports send). */
ssize_t emu_roce_sock_recv(struct emu_roce_sock *s, uint8_t *buf, size_t cap, struct emu_roce_ip *env, int flags);

/* Batches.  A system call costs about a microsecond on the virtual CPUs this runs on
 * (docs/benchmarks.md), as much as a loopback datagram's own work, so the device takes
 * what has arrived in one call and sends what one doorbell or one receive pass made
 * in one call per socket. */
#define EMU_ROCE_RX_BATCH 16

/* Up to EMU_ROCE_RX_BATCH arrivals: pkt[i] holds len[i] bytes (len[i] larger than
 * EMU_ROCE_MAX_PKT: truncated, drop it as TOO_LONG), env[i] as emu_roce_sock_recv.
 * seg[i]: 0, one packet; else a coalesced datagram (emu_roce_sock_coalesce), packets
 * of seg[i] bytes back to back, the last one possibly shorter, all with env[i]. */
struct emu_roce_rx_batch {
	unsigned n;
	uint8_t *pkt[EMU_ROCE_RX_BATCH];
	size_t len[EMU_ROCE_RX_BATCH];
	uint32_t seg[EMU_ROCE_RX_BATCH];
	struct emu_roce_ip env[EMU_ROCE_RX_BATCH];
	struct emu_roce_rx_slots *slots;    /* buffers and message headers */
};

/* The packets of datagram i in order: start with *off = 0; each call sets *pkt to the
 * next one and returns its length, 0 after the last. */
static inline size_t emu_roce_rx_next(const struct emu_roce_rx_batch *b, unsigned i, size_t *off, uint8_t **pkt)
{
	size_t left, n;

	if (*off >= b->len[i])
		return 0;
	left = b->len[i] - *off;
	n = b->seg[i] && b->seg[i] < left ? b->seg[i] : left;
	*pkt = b->pkt[i] + *off;
	*off += n;
	return n;
}

int emu_roce_rx_batch_init(struct emu_roce_rx_batch *b);
void emu_roce_rx_batch_fini(struct emu_roce_rx_batch *b);
/* Receive what is queued, at most EMU_ROCE_RX_BATCH (flags as emu_roce_sock_recv: with
 * 0 the first one is waited for).  How many (b->n too), or -errno. */
int emu_roce_sock_recv_many(struct emu_roce_sock *s, struct emu_roce_rx_batch *b, int flags);
/* Whether a datagram waits in the port's socket (a peek, one system call; nothing taken). */
bool emu_roce_sock_pending(struct emu_roce_sock *s);

/* Multicast (docs/architecture.md section 10): a socket that receives the IPv4 group
 * `group`'s RoCE v2 packets for the port at ifaddr (host order), or -errno; and a batch
 * from it, every envelope's destination the group.  The port's sending sockets leave
 * by the port's address (IP_MULTICAST_IF), so a group's packets stay on loopback. */
int emu_roce_mc_open(uint32_t ifaddr, uint32_t group);
int emu_roce_mc_recv_many(int fd, uint32_t group, struct emu_roce_rx_batch *b, int flags);

/* Hold every send from now until the matching uncork, which sends them, in order. */
void emu_roce_sock_cork(struct emu_roce_sock *s);
void emu_roce_sock_uncork(struct emu_roce_sock *s);

#endif
