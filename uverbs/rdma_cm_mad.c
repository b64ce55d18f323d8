/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* CM MAD encoding and decoding (rdma_cm_mad.h).  Offsets: IBTA vol. 1 tables 106-113;
 * a field "at byte B, width W" with W < 8 sits in the high bits of byte B, a 24-bit
 * field in the high three bytes of the 32-bit word at B (IBTA's bit numbering, which
 * Linux's ibta_vol1_c12.h spells as CM_FIELD*_LOC). */
#include "uverbs/rdma_cm_mad.h"

#include <errno.h>
#include <string.h>

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static void put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}
static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}
static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}
static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}
static uint32_t get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}
static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}
static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* Where each message's private data starts and how long it is (IBTA tables 106-113). */
static int pd_place(uint16_t attr, size_t *off, size_t *len)
{
	switch (attr) {
	case UV_CM_REQ: *off = 140; *len = UV_CM_REQ_PD; return 0;
	case UV_CM_MRA: *off = 10; *len = UV_CM_MRA_PD; return 0;
	case UV_CM_REJ: *off = 84; *len = UV_CM_REJ_PD; return 0;
	case UV_CM_REP: *off = 36; *len = UV_CM_REP_PD; return 0;
	case UV_CM_RTU: *off = 8; *len = UV_CM_RTU_PD; return 0;
	case UV_CM_DREQ: *off = 12; *len = UV_CM_DREQ_PD; return 0;
	case UV_CM_DREP: *off = 8; *len = UV_CM_DREP_PD; return 0;
	case UV_CM_SIDR_REQ: *off = 16; *len = UV_CM_SIDR_REQ_PD; return 0;
	case UV_CM_SIDR_REP: *off = 96; *len = UV_CM_SIDR_REP_PD; return 0;
	default: return -EINVAL;
	}
}

int uv_cm_mad_encode(const struct uv_cm_msg *m, uint8_t out[UV_MAD_LEN])
{
	size_t off, len;

	if (!m || !out || pd_place(m->attr, &off, &len) || m->pd_len > len)
		return -EINVAL;
	memset(out, 0, UV_MAD_LEN);
	/* IBTA 13.4.2 common MAD header: base version 1, class, class version, method,
	 * status, class specific, transaction ID, attribute ID, reserved, modifier */
	out[0] = 1;
	out[1] = UV_MAD_CLASS_CM;
	out[2] = UV_MAD_CM_CLASS_VERSION;
	out[3] = UV_MAD_METHOD_SEND;
	put64(out + 8, m->tid);
	put16(out + 16, m->attr);
	uint8_t *d = out + UV_MAD_HDR_LEN;
	put32(d, m->local_comm_id);
	switch (m->attr) {
	case UV_CM_REQ:    /* table 106 */
		put64(d + 8, m->service_id);
		put64(d + 16, m->ca_guid);
		put32(d + 28, m->qkey);
		put24(d + 32, m->qpn);
		d[35] = m->responder_resources;
		d[39] = m->initiator_depth;
		d[43] = (uint8_t)((m->remote_cm_timeout & 0x1f) << 3 | (m->transport & 3) << 1 | (m->flow_control & 1));
		put24(d + 44, m->psn);
		d[47] = (uint8_t)((m->local_cm_timeout & 0x1f) << 3 | (m->retry_count & 7));
		put16(d + 48, m->pkey);
		d[50] = (uint8_t)((m->mtu & 0xf) << 4 | (m->rnr_retry_count & 7));
		d[51] = (uint8_t)((m->max_cm_retries & 0xf) << 4 | (m->srq & 1) << 3 | (m->ext_transport & 7));
		/* primary path: LIDs 0xffff (permissive) on RoCE as Linux cm.c sends them */
		put16(d + 52, 0xffff);
		put16(d + 54, 0xffff);
		memcpy(d + 56, m->local_gid, 16);
		memcpy(d + 72, m->remote_gid, 16);
		d[92] = m->traffic_class;
		d[93] = m->hop_limit;
		/* SL 0; SubnetLocal only when the path stays in the subnet (hop limit
		 * <= 1), as Linux cm.c cm_format_req sets it: RoCE v2 is routed (64) */
		d[94] = (uint8_t)((m->hop_limit <= 1) << 3);
		d[95] = (uint8_t)((m->ack_timeout & 0x1f) << 3);
		break;
	case UV_CM_REP:    /* table 110 */
		put32(d + 4, m->remote_comm_id);
		put32(d + 8, m->qkey);
		put24(d + 12, m->qpn);
		put24(d + 16, m->eecn);   /* Linux cm.c cm_format_rep: an XRC target's QPN */
		put24(d + 20, m->psn);
		d[24] = m->responder_resources;
		d[25] = m->initiator_depth;
		d[26] = (uint8_t)((m->flow_control & 1));
		d[27] = (uint8_t)((m->rnr_retry_count & 7) << 5 | (m->srq & 1) << 4);
		put64(d + 28, m->ca_guid);
		break;
	case UV_CM_REJ:    /* table 108 */
		put32(d + 4, m->remote_comm_id);
		d[8] = (uint8_t)((m->msg_rejected & 3) << 6);
		put16(d + 10, m->reason);
		break;
	case UV_CM_MRA:    /* table 107 */
		put32(d + 4, m->remote_comm_id);
		d[8] = (uint8_t)((m->msg_rejected & 3) << 6);
		d[9] = (uint8_t)((m->service_timeout & 0x1f) << 3);
		break;
	case UV_CM_DREQ:   /* table 112 */
		put32(d + 4, m->remote_comm_id);
		put24(d + 8, m->qpn);
		break;
	case UV_CM_SIDR_REQ:   /* table 119: request ID (at 0), P_Key, service ID */
		put16(d + 4, m->pkey);
		put64(d + 8, m->service_id);
		break;
	case UV_CM_SIDR_REP:   /* table 120: the request ID it answers, status, QPN, service
				* ID, Q_Key; no additional information (length 0) */
		put32(d, m->remote_comm_id);
		d[4] = (uint8_t)m->reason;
		put24(d + 8, m->qpn);
		put64(d + 12, m->service_id);
		put32(d + 20, m->qkey);
		break;
	default:           /* RTU, DREP: table 111, 113 */
		put32(d + 4, m->remote_comm_id);
		break;
	}
	memcpy(d + off, m->pd, m->pd_len);
	return 0;
}

int uv_cm_mad_decode(const uint8_t *mad, size_t len, struct uv_cm_msg *m)
{
	size_t off, pdl;

	if (!mad || !m)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	/* IBTA 13.4.2: a MAD is 256 bytes; the GSI drops a short one */
	if (len < UV_MAD_LEN || mad[0] != 1 || mad[1] != UV_MAD_CLASS_CM || mad[2] != UV_MAD_CM_CLASS_VERSION ||
	    mad[3] != UV_MAD_METHOD_SEND)
		return -EPROTO;
	m->attr = get16(mad + 16);
	if (pd_place(m->attr, &off, &pdl))
		return -EPROTO;
	m->tid = get64(mad + 8);
	const uint8_t *d = mad + UV_MAD_HDR_LEN;
	m->local_comm_id = get32(d);
	switch (m->attr) {
	case UV_CM_REQ:
		m->service_id = get64(d + 8);
		m->ca_guid = get64(d + 16);
		m->qkey = get32(d + 28);
		m->qpn = get24(d + 32);
		m->responder_resources = d[35];
		m->initiator_depth = d[39];
		m->remote_cm_timeout = d[43] >> 3;
		m->transport = (d[43] >> 1) & 3;
		m->flow_control = d[43] & 1;
		m->psn = get24(d + 44);
		m->local_cm_timeout = d[47] >> 3;
		m->retry_count = d[47] & 7;
		m->pkey = get16(d + 48);
		m->mtu = d[50] >> 4;
		m->rnr_retry_count = d[50] & 7;
		m->max_cm_retries = d[51] >> 4;
		m->srq = (d[51] >> 3) & 1;
		m->ext_transport = d[51] & 7;
		memcpy(m->local_gid, d + 56, 16);
		memcpy(m->remote_gid, d + 72, 16);
		m->traffic_class = d[92];
		m->hop_limit = d[93];
		m->ack_timeout = d[95] >> 3;
		/* IBTA 12.6.5: the path MTU is 1..5; RC, UC and XRC (RD is not offered;
		 * Linux cm.c cm_req_get_qp_type knows no other extended type) */
		if (m->mtu < 1 || m->mtu > 5 || m->transport == 2 ||
		    (m->transport == UV_CM_TRANSPORT_EXT && m->ext_transport != UV_CM_EXT_TRANSPORT_XRC))
			return -EPROTO;
		break;
	case UV_CM_REP:
		m->remote_comm_id = get32(d + 4);
		m->qkey = get32(d + 8);
		m->qpn = get24(d + 12);
		m->eecn = get24(d + 16);
		m->psn = get24(d + 20);
		m->responder_resources = d[24];
		m->initiator_depth = d[25];
		m->flow_control = d[26] & 1;
		m->rnr_retry_count = d[27] >> 5;
		m->srq = (d[27] >> 4) & 1;
		m->ca_guid = get64(d + 28);
		break;
	case UV_CM_REJ:
		m->remote_comm_id = get32(d + 4);
		m->msg_rejected = d[8] >> 6;
		m->reason = get16(d + 10);
		break;
	case UV_CM_MRA:
		m->remote_comm_id = get32(d + 4);
		m->msg_rejected = d[8] >> 6;
		m->service_timeout = d[9] >> 3;
		break;
	case UV_CM_DREQ:
		m->remote_comm_id = get32(d + 4);
		m->qpn = get24(d + 8);
		break;
	case UV_CM_SIDR_REQ:
		m->pkey = get16(d + 4);
		m->service_id = get64(d + 8);
		break;
	case UV_CM_SIDR_REP:
		m->remote_comm_id = m->local_comm_id;
		m->local_comm_id = 0;
		m->reason = d[4];
		m->qpn = get24(d + 8);
		m->service_id = get64(d + 12);
		m->qkey = get32(d + 20);
		break;
	default:
		m->remote_comm_id = get32(d + 4);
		break;
	}
	memcpy(m->pd, d + off, pdl);
	m->pd_len = pdl;
	return 0;
}

void uv_cma_hdr_put(uint8_t out[UV_CMA_HDR_LEN], const struct uv_cma_hdr *h)
{
	memset(out, 0, UV_CMA_HDR_LEN);
	out[0] = 0;          /* CMA_VERSION */
	out[1] = 4 << 4;     /* IPv4 */
	put16(out + 2, h->src_port);
	put32(out + 4 + 12, h->src_ip);
	put32(out + 20 + 12, h->dst_ip);
}

int uv_cma_hdr_get(const uint8_t *in, size_t len, struct uv_cma_hdr *h)
{
	if (!in || !h || len < UV_CMA_HDR_LEN || in[0] != 0 || (in[1] >> 4) != 4)
		return -EPROTO;
	h->src_port = get16(in + 2);
	h->src_ip = get32(in + 4 + 12);
	h->dst_ip = get32(in + 20 + 12);
	return 0;
}
