/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RoCE v2 transport headers: the opcode table (IBTA vol 1 9.2 "valid packet header
 * combinations" per opcode), header (de)serialisation, AETH encodings, UDP source
 * port entropy.  See roce_hdr.h. */
#include "hw/emu/roce_hdr.h"

#include <errno.h>
#include <string.h>

#define F(x) EMU_ROCE_F_##x
/* BTH + the extension headers a flag set names. */
#define HLEN(f)                                                                          \
	(EMU_ROCE_BTH_LEN + (((f) & F(XRCETH)) ? EMU_ROCE_XRCETH_LEN : 0) +                  \
	 (((f) & F(DETH)) ? EMU_ROCE_DETH_LEN : 0) +                                        \
	 (((f) & F(RETH)) ? EMU_ROCE_RETH_LEN : 0) +                                        \
	 (((f) & F(ATOMICETH)) ? EMU_ROCE_ATOMICETH_LEN : 0) +                              \
	 (((f) & F(AETH)) ? EMU_ROCE_AETH_LEN : 0) +                                        \
	 (((f) & F(ATOMICACKETH)) ? EMU_ROCE_ATOMICACKETH_LEN : 0) +                        \
	 (((f) & F(IMMDT)) ? EMU_ROCE_IMMDT_LEN : 0) + (((f) & F(IETH)) ? EMU_ROCE_IETH_LEN : 0) + \
	 (((f) & F(CNPPAD)) ? EMU_ROCE_CNP_PAD_LEN : 0))
#define OP(code, nm, f) [code] = { .name = nm, .flags = (f), .hdr_len = HLEN(f) }

/* Requests of the SEND / RDMA WRITE family, shared by RC (base 0x00), UC (0x20) and
 * XRC (0xa0): IBTA 9.2 gives them the same layouts for opcodes 0x00-0x0b, XRC's with
 * an XRCETH (x) after the BTH. */
#define SEND_WRITE_OPS(base, tr, x)                                                                       \
	OP(base + 0x00, tr "_SEND_FIRST", x | F(PAYLOAD) | F(FIRST) | F(SEND) | F(REQ)),                      \
	OP(base + 0x01, tr "_SEND_MIDDLE", x | F(PAYLOAD) | F(MIDDLE) | F(SEND) | F(REQ)),                    \
	OP(base + 0x02, tr "_SEND_LAST", x | F(PAYLOAD) | F(LAST) | F(SEND) | F(REQ) | F(COMP)),              \
	OP(base + 0x03, tr "_SEND_LAST_WITH_IMMEDIATE",                                                       \
	   x | F(IMMDT) | F(PAYLOAD) | F(LAST) | F(SEND) | F(REQ) | F(COMP)),                                 \
	OP(base + 0x04, tr "_SEND_ONLY", x | F(PAYLOAD) | F(ONLY) | F(SEND) | F(REQ) | F(COMP)),              \
	OP(base + 0x05, tr "_SEND_ONLY_WITH_IMMEDIATE",                                                       \
	   x | F(IMMDT) | F(PAYLOAD) | F(ONLY) | F(SEND) | F(REQ) | F(COMP)),                                 \
	OP(base + 0x06, tr "_RDMA_WRITE_FIRST", x | F(RETH) | F(PAYLOAD) | F(FIRST) | F(WRITE) | F(REQ)),     \
	OP(base + 0x07, tr "_RDMA_WRITE_MIDDLE", x | F(PAYLOAD) | F(MIDDLE) | F(WRITE) | F(REQ)),             \
	OP(base + 0x08, tr "_RDMA_WRITE_LAST", x | F(PAYLOAD) | F(LAST) | F(WRITE) | F(REQ)),                 \
	OP(base + 0x09, tr "_RDMA_WRITE_LAST_WITH_IMMEDIATE",                                                 \
	   x | F(IMMDT) | F(PAYLOAD) | F(LAST) | F(WRITE) | F(REQ) | F(COMP)),                                \
	OP(base + 0x0a, tr "_RDMA_WRITE_ONLY", x | F(RETH) | F(PAYLOAD) | F(ONLY) | F(WRITE) | F(REQ)),       \
	OP(base + 0x0b, tr "_RDMA_WRITE_ONLY_WITH_IMMEDIATE",                                                 \
	   x | F(RETH) | F(IMMDT) | F(PAYLOAD) | F(ONLY) | F(WRITE) | F(REQ) | F(COMP))

/* The rest of the reliable services' opcodes (0x0c-0x17), RC's and XRC's: requests
 * carry x, responses (READ RESPONSE, ACK) never an XRCETH (9.2 "valid packet header
 * combinations": the response goes back on the requester's own QP). */
#define RELIABLE_OPS(base, tr, x)                                                                         \
	OP(base + 0x0c, tr "_RDMA_READ_REQUEST", x | F(RETH) | F(ONLY) | F(READ_REQ) | F(REQ)),               \
	OP(base + 0x0d, tr "_RDMA_READ_RESPONSE_FIRST", F(AETH) | F(PAYLOAD) | F(FIRST) | F(READ_RESP) | F(RESP)), \
	/* 9.3.5: the AETH is absent from READ RESPONSE MIDDLE packets only */                               \
	OP(base + 0x0e, tr "_RDMA_READ_RESPONSE_MIDDLE", F(PAYLOAD) | F(MIDDLE) | F(READ_RESP) | F(RESP)),    \
	OP(base + 0x0f, tr "_RDMA_READ_RESPONSE_LAST", F(AETH) | F(PAYLOAD) | F(LAST) | F(READ_RESP) | F(RESP)), \
	OP(base + 0x10, tr "_RDMA_READ_RESPONSE_ONLY", F(AETH) | F(PAYLOAD) | F(ONLY) | F(READ_RESP) | F(RESP)), \
	OP(base + 0x11, tr "_ACKNOWLEDGE", F(AETH) | F(ONLY) | F(ACK) | F(RESP)),                             \
	OP(base + 0x12, tr "_ATOMIC_ACKNOWLEDGE", F(AETH) | F(ATOMICACKETH) | F(ONLY) | F(ACK) | F(RESP)),    \
	OP(base + 0x13, tr "_COMPARE_SWAP", x | F(ATOMICETH) | F(ONLY) | F(ATOMIC) | F(REQ)),                 \
	OP(base + 0x14, tr "_FETCH_ADD", x | F(ATOMICETH) | F(ONLY) | F(ATOMIC) | F(REQ)),                    \
	/* 0x15 is reserved; SEND with invalidate exists for RC and XRC only */                              \
	OP(base + 0x16, tr "_SEND_LAST_WITH_INVALIDATE",                                                      \
	   x | F(IETH) | F(PAYLOAD) | F(LAST) | F(SEND) | F(REQ) | F(COMP) | F(INV)),                         \
	OP(base + 0x17, tr "_SEND_ONLY_WITH_INVALIDATE",                                                      \
	   x | F(IETH) | F(PAYLOAD) | F(ONLY) | F(SEND) | F(REQ) | F(COMP) | F(INV))

static const struct emu_roce_opinfo optab[256] = {
	SEND_WRITE_OPS(0x00, "RC", 0),
	RELIABLE_OPS(0x00, "RC", 0),
	SEND_WRITE_OPS(0x20, "UC", 0),
	/* UD: single-packet SENDs only, each with a DETH (9.8) */
	OP(0x64, "UD_SEND_ONLY", F(DETH) | F(PAYLOAD) | F(ONLY) | F(SEND) | F(REQ) | F(COMP)),
	OP(0x65, "UD_SEND_ONLY_WITH_IMMEDIATE",
	   F(DETH) | F(IMMDT) | F(PAYLOAD) | F(ONLY) | F(SEND) | F(REQ) | F(COMP)),
	/* Annex A17.9.3: congestion notification packet, BTH + 16 reserved bytes */
	OP(0x81, "CNP", F(CNPPAD) | F(CNP)),
	SEND_WRITE_OPS(0xa0, "XRC", F(XRCETH)),
	RELIABLE_OPS(0xa0, "XRC", F(XRCETH)),
};

const struct emu_roce_opinfo *emu_roce_opinfo(uint8_t opcode)
{
	return optab[opcode].name ? &optab[opcode] : NULL;
}

size_t emu_roce_hdr_len(uint8_t opcode)
{
	return optab[opcode].name ? optab[opcode].hdr_len : 0;
}

int emu_roce_opcode_for(enum emu_roce_transport tr, uint32_t kind, uint32_t pos, bool imm, bool inv)
{
	unsigned base;
	int op;

	switch (tr) {
	case EMU_ROCE_TR_RC: base = 0x00; break;
	case EMU_ROCE_TR_UC: base = 0x20; break;
	case EMU_ROCE_TR_UD: base = 0x60; break;
	case EMU_ROCE_TR_XRC: base = 0xa0; break;
	default: return -EINVAL;
	}
	if (pos != F(FIRST) && pos != F(MIDDLE) && pos != F(LAST) && pos != F(ONLY))
		return -EINVAL;
	if (imm && inv)
		return -EINVAL;
	/* immediate data and invalidate ride on the last packet of a message only */
	if ((imm || inv) && !(pos & F(LAST)))
		return -EINVAL;
	switch (kind) {
	case F(SEND):
		if (pos == F(FIRST))
			op = 0x00;
		else if (pos == F(MIDDLE))
			op = 0x01;
		else if (pos == F(LAST))
			op = imm ? 0x03 : inv ? 0x16 : 0x02;
		else
			op = imm ? 0x05 : inv ? 0x17 : 0x04;
		if (inv && tr != EMU_ROCE_TR_RC && tr != EMU_ROCE_TR_XRC)
			return -EINVAL;
		if (tr == EMU_ROCE_TR_UD && pos != F(ONLY))
			return -EINVAL;
		break;
	case F(WRITE):
		if (inv || tr == EMU_ROCE_TR_UD)
			return -EINVAL;
		if (pos == F(FIRST))
			op = 0x06;
		else if (pos == F(MIDDLE))
			op = 0x07;
		else if (pos == F(LAST))
			op = imm ? 0x09 : 0x08;
		else
			op = imm ? 0x0b : 0x0a;
		break;
	case F(READ_RESP):
		if (imm || inv || (tr != EMU_ROCE_TR_RC && tr != EMU_ROCE_TR_XRC))
			return -EINVAL;
		op = pos == F(FIRST) ? 0x0d : pos == F(MIDDLE) ? 0x0e : pos == F(LAST) ? 0x0f : 0x10;
		break;
	default:
		return -EINVAL;
	}
	return (int)base + op;
}

#define KINDS (F(SEND) | F(WRITE) | F(READ_RESP))

bool emu_roce_opcode_follows(int prev, uint8_t opcode)
{
	const struct emu_roce_opinfo *o = emu_roce_opinfo(opcode);
	const struct emu_roce_opinfo *p = prev >= 0 && prev < 256 ? emu_roce_opinfo((uint8_t)prev) : NULL;

	if (!o)
		return false;
	if (o->flags & F(CNP))
		return true;    /* congestion notification is outside any message */
	if (p && (p->flags & (F(FIRST) | F(MIDDLE))) && !(p->flags & F(LAST))) {
		/* a multi-packet message is open: only its MIDDLE or LAST may come next */
		return emu_roce_op_transport(opcode) == emu_roce_op_transport((uint8_t)prev) &&
		       (o->flags & KINDS) == (p->flags & KINDS) && (o->flags & (F(MIDDLE) | F(LAST))) &&
		       !(o->flags & F(FIRST));
	}
	return (o->flags & F(FIRST)) != 0;
}

void emu_roce_bth_write(uint8_t b[EMU_ROCE_BTH_LEN], const struct emu_roce_bth *h)
{
	b[0] = h->opcode;
	b[1] = (uint8_t)((h->se ? 0x80 : 0) | (h->migreq ? 0x40 : 0) | (h->padcnt & 3) << 4 | (h->tver & 0xf));
	emu_be16_put(b + 2, h->pkey);
	b[4] = (uint8_t)((h->fecn ? 0x80 : 0) | (h->becn ? 0x40 : 0) | (h->resv6 & 0x3f));
	emu_be24_put(b + 5, h->dqpn);
	b[8] = (uint8_t)((h->ackreq ? 0x80 : 0) | (h->resv7 & 0x7f));
	emu_be24_put(b + 9, h->psn);
}

void emu_roce_bth_read(const uint8_t b[EMU_ROCE_BTH_LEN], struct emu_roce_bth *h)
{
	h->opcode = b[0];
	h->se = b[1] & 0x80;
	h->migreq = b[1] & 0x40;
	h->padcnt = (b[1] >> 4) & 3;
	h->tver = b[1] & 0xf;
	h->pkey = emu_be16_get(b + 2);
	h->fecn = b[4] & 0x80;
	h->becn = b[4] & 0x40;
	h->resv6 = b[4] & 0x3f;
	h->dqpn = emu_be24_get(b + 5);
	h->ackreq = b[8] & 0x80;
	h->resv7 = b[8] & 0x7f;
	h->psn = emu_be24_get(b + 9);
}

int emu_roce_hdrs_write(uint8_t *buf, size_t cap, const struct emu_roce_hdrs *h)
{
	const struct emu_roce_opinfo *o = emu_roce_opinfo(h->bth.opcode);
	uint32_t f = o ? o->flags : 0;
	size_t len = o ? o->hdr_len : EMU_ROCE_BTH_LEN;
	uint8_t *p = buf + EMU_ROCE_BTH_LEN;

	if (!buf || cap < len)
		return -ENOSPC;
	emu_roce_bth_write(buf, &h->bth);
	/* wire order of the extension headers: IBTA 9.2 */
	if (f & F(XRCETH)) {
		p[0] = 0;
		emu_be24_put(p + 1, h->xrc_srqn);
		p += EMU_ROCE_XRCETH_LEN;
	}
	if (f & F(DETH)) {
		emu_be32_put(p, h->deth.qkey);
		p[4] = h->deth.resv8;
		emu_be24_put(p + 5, h->deth.sqpn);
		p += EMU_ROCE_DETH_LEN;
	}
	if (f & F(RETH)) {
		emu_be64_put(p, h->reth.va);
		emu_be32_put(p + 8, h->reth.rkey);
		emu_be32_put(p + 12, h->reth.dlen);
		p += EMU_ROCE_RETH_LEN;
	}
	if (f & F(ATOMICETH)) {
		emu_be64_put(p, h->atomic.va);
		emu_be32_put(p + 8, h->atomic.rkey);
		emu_be64_put(p + 12, h->atomic.swap_add);
		emu_be64_put(p + 20, h->atomic.compare);
		p += EMU_ROCE_ATOMICETH_LEN;
	}
	if (f & F(AETH)) {
		p[0] = h->aeth.syndrome;
		emu_be24_put(p + 1, h->aeth.msn);
		p += EMU_ROCE_AETH_LEN;
	}
	if (f & F(ATOMICACKETH)) {
		emu_be64_put(p, h->atomic_ack_orig);
		p += EMU_ROCE_ATOMICACKETH_LEN;
	}
	if (f & F(IMMDT)) {
		emu_be32_put(p, h->imm);
		p += EMU_ROCE_IMMDT_LEN;
	}
	if (f & F(IETH)) {
		emu_be32_put(p, h->ieth_rkey);
		p += EMU_ROCE_IETH_LEN;
	}
	if (f & F(CNPPAD)) {
		memset(p, 0, EMU_ROCE_CNP_PAD_LEN);
		p += EMU_ROCE_CNP_PAD_LEN;
	}
	return (int)(p - buf);
}

int emu_roce_hdrs_read(const uint8_t *buf, size_t len, struct emu_roce_hdrs *h)
{
	const struct emu_roce_opinfo *o;
	const uint8_t *p;
	uint32_t f;

	memset(h, 0, sizeof(*h));
	if (!buf || len < EMU_ROCE_BTH_LEN)
		return -EMSGSIZE;
	emu_roce_bth_read(buf, &h->bth);
	o = emu_roce_opinfo(h->bth.opcode);
	if (!o)
		return -EPROTO;
	if (len < o->hdr_len)
		return -EMSGSIZE;
	f = o->flags;
	p = buf + EMU_ROCE_BTH_LEN;
	if (f & F(XRCETH)) {
		h->xrc_srqn = emu_be24_get(p + 1);
		p += EMU_ROCE_XRCETH_LEN;
	}
	if (f & F(DETH)) {
		h->deth.qkey = emu_be32_get(p);
		h->deth.resv8 = p[4];
		h->deth.sqpn = emu_be24_get(p + 5);
		p += EMU_ROCE_DETH_LEN;
	}
	if (f & F(RETH)) {
		h->reth.va = emu_be64_get(p);
		h->reth.rkey = emu_be32_get(p + 8);
		h->reth.dlen = emu_be32_get(p + 12);
		p += EMU_ROCE_RETH_LEN;
	}
	if (f & F(ATOMICETH)) {
		h->atomic.va = emu_be64_get(p);
		h->atomic.rkey = emu_be32_get(p + 8);
		h->atomic.swap_add = emu_be64_get(p + 12);
		h->atomic.compare = emu_be64_get(p + 20);
		p += EMU_ROCE_ATOMICETH_LEN;
	}
	if (f & F(AETH)) {
		h->aeth.syndrome = p[0];
		h->aeth.msn = emu_be24_get(p + 1);
		p += EMU_ROCE_AETH_LEN;
	}
	if (f & F(ATOMICACKETH)) {
		h->atomic_ack_orig = emu_be64_get(p);
		p += EMU_ROCE_ATOMICACKETH_LEN;
	}
	if (f & F(IMMDT)) {
		h->imm = emu_be32_get(p);
		p += EMU_ROCE_IMMDT_LEN;
	}
	if (f & F(IETH)) {
		h->ieth_rkey = emu_be32_get(p);
		p += EMU_ROCE_IETH_LEN;
	}
	return (int)o->hdr_len;
}

/* End-to-end credits per AETH credit code: 0-4 then doubling with a 1.5x step between. */
static const uint16_t credit_tab[31] = {
	0,   1,   2,   3,    4,    6,    8,    12,   16,   24,    32,    48,    64,    96,    128,  192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
};

int emu_aeth_credits(unsigned code)
{
	return code < 31 ? credit_tab[code] : -1;
}

unsigned emu_aeth_credit_code(uint32_t n)
{
	unsigned c = 0;

	while (c + 1 < 31 && credit_tab[c + 1] <= n)
		c++;
	return c;
}

/* RNR NAK timer codes in µs; code 0 is the longest, 655.36 ms. */
static const uint32_t rnr_us[32] = {
	655360, 10,    20,    30,    40,    60,     80,     120,    160,    240,    320,
	480,    640,   960,   1280,  1920,  2560,   3840,   5120,   7680,   10240,  15360,
	20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

uint32_t emu_aeth_rnr_timer_us(unsigned code)
{
	return rnr_us[code & 31];
}

uint16_t emu_roce_flow_label_to_sport(uint32_t fl)
{
	uint32_t lo = fl & 0x3fff, hi = fl & 0xfc000;

	lo ^= hi >> 14;
	return (uint16_t)(lo | 0xc000);
}

uint32_t emu_roce_calc_flow_label(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t v = (uint64_t)lqpn * rqpn;

	v ^= v >> 20;
	v ^= v >> 40;
	return (uint32_t)(v & 0xfffff);
}

uint16_t emu_roce_udp_sport(uint32_t fl, uint32_t lqpn, uint32_t rqpn)
{
	if (!(fl & 0xfffff))
		fl = emu_roce_calc_flow_label(lqpn, rqpn);
	return emu_roce_flow_label_to_sport(fl);
}
