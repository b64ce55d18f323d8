/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RoCE v2 transport headers as the IBTA defines them (vol 1, ch. 9 "Transport layer",
 * Annex A17 "RoCEv2"): layouts, the opcode table, pad counts, PSN arithmetic, AETH
 * syndromes, P_Key matching.  Pure functions over bytes; no device state.
 *
 * Who calls this: the packet builder/parser (roce_tx.c, roce_rx.c) and the RC/UC/UD
 * transport engines.  Everything on the wire is big-endian (IBTA 9.2 "bit and byte
 * ordering"); values in the structs below are host order.
 */
#ifndef UVERBS_HW_EMU_ROCE_HDR_H
#define UVERBS_HW_EMU_ROCE_HDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Header lengths in bytes (IBTA 9.2 "base transport header", 9.3 ETHs). */
#define EMU_ROCE_BTH_LEN 12
#define EMU_ROCE_RETH_LEN 16
#define EMU_ROCE_AETH_LEN 4
#define EMU_ROCE_ATOMICETH_LEN 28
#define EMU_ROCE_ATOMICACKETH_LEN 8
#define EMU_ROCE_IMMDT_LEN 4
#define EMU_ROCE_IETH_LEN 4
#define EMU_ROCE_DETH_LEN 8
#define EMU_ROCE_XRCETH_LEN 4       /* 8 reserved bits, the 24-bit XRC SRQ number (9.3.7) */
#define EMU_ROCE_CNP_PAD_LEN 16     /* CNP: BTH + 16 reserved bytes (Annex A17.9.3) */
#define EMU_ROCE_ICRC_LEN 4
#define EMU_ROCE_GRH_LEN 40         /* GRH area at the head of a UD receive buffer */
#define EMU_ROCE_MAX_HDR_LEN (EMU_ROCE_BTH_LEN + EMU_ROCE_XRCETH_LEN + EMU_ROCE_ATOMICETH_LEN) /* largest BTH+ETHs */

#define EMU_ROCE_PSN_MASK 0xffffffu /* PSNs are 24 bits (9.7.1) */
#define EMU_ROCE_QPN_MASK 0xffffffu
#define EMU_ROCE_MSN_MASK 0xffffffu
#define EMU_ROCE_DEFAULT_PKEY 0xffff /* full member of the default partition (10.9.1.1) */
#define EMU_ROCE_MCAST_QPN 0xffffff  /* BTH DestQP of a multicast packet (Linux IB_MULTICAST_QPN) */
#define EMU_ROCE_PKEY_MEMBER 0x8000  /* P_Key bit 15: full (1) or limited (0) member */

/* BTH.OpCode: bits 7:5 the transport service, bits 4:0 the operation (IBTA 9.2.1). */
enum emu_roce_transport {
	EMU_ROCE_TR_RC = 0,
	EMU_ROCE_TR_UC = 1,
	EMU_ROCE_TR_RD = 2,
	EMU_ROCE_TR_UD = 3,
	EMU_ROCE_TR_CNP = 4,    /* 0x80 range: manufacturer/congestion (A17.9.3 CNP 0x81) */
	EMU_ROCE_TR_XRC = 5,    /* 0xa0-0xbf: extended reliable connected (9.2.1, 14.2) */
};

enum emu_roce_opcode {
	EMU_ROCE_RC_SEND_FIRST = 0x00,
	EMU_ROCE_RC_SEND_MIDDLE = 0x01,
	EMU_ROCE_RC_SEND_LAST = 0x02,
	EMU_ROCE_RC_SEND_LAST_IMM = 0x03,
	EMU_ROCE_RC_SEND_ONLY = 0x04,
	EMU_ROCE_RC_SEND_ONLY_IMM = 0x05,
	EMU_ROCE_RC_WRITE_FIRST = 0x06,
	EMU_ROCE_RC_WRITE_MIDDLE = 0x07,
	EMU_ROCE_RC_WRITE_LAST = 0x08,
	EMU_ROCE_RC_WRITE_LAST_IMM = 0x09,
	EMU_ROCE_RC_WRITE_ONLY = 0x0a,
	EMU_ROCE_RC_WRITE_ONLY_IMM = 0x0b,
	EMU_ROCE_RC_READ_REQUEST = 0x0c,
	EMU_ROCE_RC_READ_RESP_FIRST = 0x0d,
	EMU_ROCE_RC_READ_RESP_MIDDLE = 0x0e,
	EMU_ROCE_RC_READ_RESP_LAST = 0x0f,
	EMU_ROCE_RC_READ_RESP_ONLY = 0x10,
	EMU_ROCE_RC_ACK = 0x11,
	EMU_ROCE_RC_ATOMIC_ACK = 0x12,
	EMU_ROCE_RC_CMP_SWAP = 0x13,
	EMU_ROCE_RC_FETCH_ADD = 0x14,
	EMU_ROCE_RC_SEND_LAST_INV = 0x16,
	EMU_ROCE_RC_SEND_ONLY_INV = 0x17,

	EMU_ROCE_UC_SEND_FIRST = 0x20,
	EMU_ROCE_UC_SEND_MIDDLE = 0x21,
	EMU_ROCE_UC_SEND_LAST = 0x22,
	EMU_ROCE_UC_SEND_LAST_IMM = 0x23,
	EMU_ROCE_UC_SEND_ONLY = 0x24,
	EMU_ROCE_UC_SEND_ONLY_IMM = 0x25,
	EMU_ROCE_UC_WRITE_FIRST = 0x26,
	EMU_ROCE_UC_WRITE_MIDDLE = 0x27,
	EMU_ROCE_UC_WRITE_LAST = 0x28,
	EMU_ROCE_UC_WRITE_LAST_IMM = 0x29,
	EMU_ROCE_UC_WRITE_ONLY = 0x2a,
	EMU_ROCE_UC_WRITE_ONLY_IMM = 0x2b,

	EMU_ROCE_UD_SEND_ONLY = 0x64,
	EMU_ROCE_UD_SEND_ONLY_IMM = 0x65,

	EMU_ROCE_CNP = 0x81,
};

/* What an opcode carries and means (flags of struct emu_roce_opinfo). */
enum {
	/* extension headers present, in wire order after the BTH (IBTA 9.2, "valid packet
	 * header combinations") */
	EMU_ROCE_F_DETH = 1u << 0,
	EMU_ROCE_F_RETH = 1u << 1,
	EMU_ROCE_F_ATOMICETH = 1u << 2,
	EMU_ROCE_F_AETH = 1u << 3,
	EMU_ROCE_F_ATOMICACKETH = 1u << 4,
	EMU_ROCE_F_IMMDT = 1u << 5,
	EMU_ROCE_F_IETH = 1u << 6,
	EMU_ROCE_F_CNPPAD = 1u << 7,
	/* packet may carry a payload (and so a non-zero pad count) */
	EMU_ROCE_F_PAYLOAD = 1u << 8,
	/* position in its message (ONLY = FIRST|LAST) */
	EMU_ROCE_F_FIRST = 1u << 9,
	EMU_ROCE_F_MIDDLE = 1u << 10,
	EMU_ROCE_F_LAST = 1u << 11,
	/* kind */
	EMU_ROCE_F_SEND = 1u << 12,
	EMU_ROCE_F_WRITE = 1u << 13,
	EMU_ROCE_F_READ_REQ = 1u << 14,
	EMU_ROCE_F_READ_RESP = 1u << 15,
	EMU_ROCE_F_ATOMIC = 1u << 16,
	EMU_ROCE_F_ACK = 1u << 17,          /* ACK and ATOMIC ACK */
	EMU_ROCE_F_CNP = 1u << 18,
	/* requests go requester -> responder; responses come back (9.2.1) */
	EMU_ROCE_F_REQ = 1u << 19,
	EMU_ROCE_F_RESP = 1u << 20,
	/* what the responder does on completion */
	EMU_ROCE_F_COMP = 1u << 21,         /* consumes a receive WQE: SEND LAST/ONLY, WRITE w/ IMM */
	EMU_ROCE_F_INV = 1u << 22,
	/* XRCETH right after the BTH: every XRC request (9.2, 9.3.7) */
	EMU_ROCE_F_XRCETH = 1u << 23,
};
#define EMU_ROCE_F_ONLY (EMU_ROCE_F_FIRST | EMU_ROCE_F_LAST)

struct emu_roce_opinfo {
	const char *name;     /* IBTA name, e.g. "RC_RDMA_WRITE_FIRST" */
	uint32_t flags;
	uint8_t hdr_len;      /* BTH + extension headers, bytes */
};

/* NULL for an opcode we do not implement (RD, reserved, vendor other than CNP). */
const struct emu_roce_opinfo *emu_roce_opinfo(uint8_t opcode);
static inline enum emu_roce_transport emu_roce_op_transport(uint8_t opcode)
{
	if ((opcode >> 5) == EMU_ROCE_TR_XRC)
		return EMU_ROCE_TR_XRC;
	return opcode >= 0x80 ? EMU_ROCE_TR_CNP : (enum emu_roce_transport)(opcode >> 5);
}

/* A FIRST or MIDDLE packet: more of its message is to come (IBTA 9.2, the opcode's
 * position in its message). */
static inline bool emu_roce_op_mid_message(uint8_t opcode)
{
	const struct emu_roce_opinfo *oi = emu_roce_opinfo(opcode);

	return oi && (oi->flags & (EMU_ROCE_F_FIRST | EMU_ROCE_F_MIDDLE)) && !(oi->flags & EMU_ROCE_F_LAST);
}

/* The opcode for one packet of a message: transport RC/UC/UD/XRC, kind one of
 * EMU_ROCE_F_SEND / _WRITE / _READ_RESP, pos FIRST / MIDDLE / LAST / ONLY flags, with
 * immediate or invalidate (valid only on LAST/ONLY of SEND, or WRITE for imm).
 * Returns the opcode (0..255) or -EINVAL when the IBTA defines no such packet. */
int emu_roce_opcode_for(enum emu_roce_transport tr, uint32_t kind, uint32_t pos, bool imm, bool inv);

/* Opcode sequence rule (IBTA 9.7.4.1 responder checks; rxe_resp.c check_op_seq has the
 * same table): after a FIRST or MIDDLE of a SEND/WRITE message only a MIDDLE
 * or LAST of the same kind may follow; otherwise a FIRST or ONLY.  prev < 0: no
 * message in progress.  Responses (READ RESPONSE) follow the same rule. */
bool emu_roce_opcode_follows(int prev, uint8_t opcode);

/* ---- decoded headers (host order) ---- */
struct emu_roce_bth {
	uint8_t opcode;
	bool se;              /* solicited event */
	bool migreq;
	uint8_t padcnt;       /* 0..3 bytes of pad before the ICRC (9.2.4) */
	uint8_t tver;         /* transport header version: 0, anything else is dropped (9.6) */
	uint16_t pkey;
	bool fecn, becn;      /* RoCE: the top bits of resv8a (A17.9.3) */
	uint8_t resv6;        /* rest of resv8a, sent 0, ignored */
	uint32_t dqpn;        /* 24 bits */
	bool ackreq;
	uint8_t resv7;        /* sent 0, ignored */
	uint32_t psn;         /* 24 bits */
};

struct emu_roce_hdrs {
	struct emu_roce_bth bth;
	struct { uint64_t va; uint32_t rkey; uint32_t dlen; } reth;
	struct { uint8_t syndrome; uint32_t msn; } aeth;
	struct { uint64_t va; uint32_t rkey; uint64_t swap_add; uint64_t compare; } atomic;
	uint64_t atomic_ack_orig;   /* AtomicAckETH: original remote data */
	uint32_t imm;               /* ImmDt: the 4 wire bytes read big-endian */
	uint32_t ieth_rkey;         /* IETH: R_Key to invalidate */
	struct { uint32_t qkey; uint8_t resv8; uint32_t sqpn; } deth;
	uint32_t xrc_srqn;          /* XRCETH: the responder's XRC SRQ (24 bits) */
};

/* Bytes of BTH + extension headers for this opcode; 0 for an unknown opcode. */
size_t emu_roce_hdr_len(uint8_t opcode);

/* Write the BTH and the opcode's extension headers (unknown opcode: BTH only).
 * Returns the bytes written, or -ENOSPC. */
int emu_roce_hdrs_write(uint8_t *buf, size_t cap, const struct emu_roce_hdrs *h);
/* Read them back; -EMSGSIZE if `len` is shorter than the opcode's headers,
 * -EPROTO for an unknown opcode (the BTH is still decoded into h->bth). */
int emu_roce_hdrs_read(const uint8_t *buf, size_t len, struct emu_roce_hdrs *h);

void emu_roce_bth_write(uint8_t b[EMU_ROCE_BTH_LEN], const struct emu_roce_bth *bth);
void emu_roce_bth_read(const uint8_t b[EMU_ROCE_BTH_LEN], struct emu_roce_bth *bth);

/* Pad count: payload + pad is a multiple of 4 (9.2.4). */
static inline uint8_t emu_roce_padcnt(size_t payload_len)
{
	return (uint8_t)((4 - (payload_len & 3)) & 3);
}

/* ---- PSN arithmetic modulo 2^24 (9.7.1: a PSN is "ahead" within half the space) ---- */
static inline uint32_t emu_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & EMU_ROCE_PSN_MASK;
}
/* a - b as a signed distance in [-2^23, 2^23). */
static inline int32_t emu_psn_diff(uint32_t a, uint32_t b)
{
	uint32_t d = (a - b) & EMU_ROCE_PSN_MASK;

	return d & 0x800000u ? (int32_t)d - 0x1000000 : (int32_t)d;
}
static inline bool emu_psn_lt(uint32_t a, uint32_t b) { return emu_psn_diff(a, b) < 0; }
static inline bool emu_psn_le(uint32_t a, uint32_t b) { return emu_psn_diff(a, b) <= 0; }
static inline bool emu_psn_gt(uint32_t a, uint32_t b) { return emu_psn_diff(a, b) > 0; }
static inline bool emu_psn_ge(uint32_t a, uint32_t b) { return emu_psn_diff(a, b) >= 0; }

/* ---- AETH syndrome (IBTA 9.3.5 AETH, "syndrome" encoding): bit 7 reserved, bits 6:5 the kind,
 * bits 4:0 credit count (ACK), timer (RNR NAK) or NAK code. ---- */
enum emu_aeth_kind {
	EMU_AETH_ACK = 0,
	EMU_AETH_RNR_NAK = 1,
	EMU_AETH_RESERVED = 2,
	EMU_AETH_NAK = 3,
};
enum emu_aeth_nak_code {
	EMU_AETH_NAK_PSN_SEQ = 0,       /* PSN sequence error */
	EMU_AETH_NAK_INV_REQ = 1,       /* invalid request */
	EMU_AETH_NAK_REM_ACCESS = 2,    /* remote access error */
	EMU_AETH_NAK_REM_OP = 3,        /* remote operational error */
	EMU_AETH_NAK_INV_RD_REQ = 4,    /* invalid RD request */
};
#define EMU_AETH_CREDITS_INVALID 31 /* "no end-to-end credits": SRQ or unlimited */

static inline uint8_t emu_aeth_syndrome(enum emu_aeth_kind kind, unsigned value)
{
	return (uint8_t)(((unsigned)kind & 3) << 5 | (value & 0x1f));
}
static inline enum emu_aeth_kind emu_aeth_kind(uint8_t syndrome)
{
	return (enum emu_aeth_kind)((syndrome >> 5) & 3);
}
static inline unsigned emu_aeth_value(uint8_t syndrome)
{
	return syndrome & 0x1f;
}
/* End-to-end credit count encoding (IBTA 9.7.7.2 "credit count"): code 0..30 -> receive WQEs; -1 for 31 (invalid). */
int emu_aeth_credits(unsigned code);
/* The largest code whose count is <= n (what a responder advertises for n WQEs). */
unsigned emu_aeth_credit_code(uint32_t n);
/* RNR NAK timer encoding (IBTA 9.7.5.2.8, the same codes as the QP's min_rnr_timer): code 0..31 -> µs. */
uint32_t emu_aeth_rnr_timer_us(unsigned code);

/* P_Key match (10.9.3): the low 15 bits equal, at least one of the two a full member,
 * and neither the invalid key (0x0000 / 0x8000 base). */
static inline bool emu_roce_pkey_match(uint16_t a, uint16_t b)
{
	if ((a & 0x7fff) == 0 || (a & 0x7fff) != (b & 0x7fff))
		return false;
	return ((a | b) & EMU_ROCE_PKEY_MEMBER) != 0;
}

/* UDP source port from the flow label, as Linux rdma_flow_label_to_udp_sport() and
 * mlx5 do: the 20-bit label folded to 14 bits, in 0xC000-0xFFFF (A17.5.1.1 asks for
 * entropy there).  A zero label is first derived from the two QPNs
 * (rdma_calc_flow_label). */
uint16_t emu_roce_flow_label_to_sport(uint32_t flow_label);
uint32_t emu_roce_calc_flow_label(uint32_t lqpn, uint32_t rqpn);
uint16_t emu_roce_udp_sport(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn);

/* ---- big-endian field helpers for the wire code ---- */
static inline uint16_t emu_be16_get(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t emu_be24_get(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}
static inline uint32_t emu_be32_get(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t emu_be64_get(const uint8_t *p)
{
	return (uint64_t)emu_be32_get(p) << 32 | emu_be32_get(p + 4);
}
static inline void emu_be16_put(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void emu_be24_put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16); p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)v;
}
static inline void emu_be32_put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static inline void emu_be64_put(uint8_t *p, uint64_t v)
{
	emu_be32_put(p, (uint32_t)(v >> 32));
	emu_be32_put(p + 4, (uint32_t)v);
}

#endif
