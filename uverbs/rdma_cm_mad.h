/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* IBTA chapter 12 communication-management MADs, as the in-library CM (rdma_cm_linux.c)
 * sends and receives them on the GSI QP: encoding and validating decoding, with no
 * state.  Field offsets are IBTA vol. 1 tables 106-120 (the same offsets as Linux's
 * include/rdma/ibta_vol1_c12.h), counted from the start of the MAD's data, after the
 * 24-byte common MAD header (IBTA 13.4.2). */
#ifndef UV_RDMA_CM_MAD_H
#define UV_RDMA_CM_MAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UV_MAD_LEN 256
#define UV_MAD_HDR_LEN 24
/* IBTA 13.4.4: management class 0x07 (communication management), class version 2 */
#define UV_MAD_CLASS_CM 0x07
#define UV_MAD_CM_CLASS_VERSION 2
#define UV_MAD_METHOD_SEND 0x03
/* IBTA 13.5.1 / A17: the GSI's well-known Q_Key */
#define UV_MAD_GSI_QKEY 0x80010000u

/* IBTA table 97: the CM's attribute IDs */
enum uv_cm_attr {
	UV_CM_REQ = 0x0010, UV_CM_MRA = 0x0011, UV_CM_REJ = 0x0012, UV_CM_REP = 0x0013,
	UV_CM_RTU = 0x0014, UV_CM_DREQ = 0x0015, UV_CM_DREP = 0x0016,
	UV_CM_SIDR_REQ = 0x0017, UV_CM_SIDR_REP = 0x0018,
};

/* Private data sizes (IBTA tables 106-113) */
#define UV_CM_REQ_PD 92
#define UV_CM_REP_PD 196
#define UV_CM_REJ_PD 148
#define UV_CM_RTU_PD 224
#define UV_CM_DREQ_PD 220
#define UV_CM_DREP_PD 224
#define UV_CM_MRA_PD 222
#define UV_CM_SIDR_REQ_PD 216   /* table 119 */
#define UV_CM_SIDR_REP_PD 136   /* table 120 */

/* REQ transport service type 3 with extended transport type 1: XRC (IBTA 12.6.5
 * table 106 / 14.2; Linux cm.c cm_req_set_qp_type) */
#define UV_CM_TRANSPORT_EXT 3
#define UV_CM_EXT_TRANSPORT_XRC 1
/* REJ reasons used here (IBTA table 109) */
enum { UV_CM_REJ_TIMEOUT = 1, UV_CM_REJ_INVALID_SERVICE_ID = 8, UV_CM_REJ_CONSUMER_DEFINED = 28 };
/* SIDR_REP status (IBTA table 121) */
enum { UV_CM_SIDR_SUCCESS = 0, UV_CM_SIDR_UNSUPPORTED = 1, UV_CM_SIDR_REJECT = 2 };

/* One CM message, decoded: the union of the fields the CM uses.  A field a message
 * does not carry is 0. */
struct uv_cm_msg {
	uint16_t attr;             /* enum uv_cm_attr */
	uint64_t tid;              /* MAD transaction ID */
	uint32_t local_comm_id, remote_comm_id;   /* SIDR: the request ID is local in a
						   * SIDR_REQ, remote in the SIDR_REP */
	uint64_t service_id;
	uint64_t ca_guid;
	uint32_t qkey;
	uint32_t qpn;              /* local QPN (REQ/REP), remote QPN (DREQ) */
	uint32_t psn;              /* starting PSN */
	uint8_t responder_resources, initiator_depth;
	uint8_t remote_cm_timeout, local_cm_timeout; /* 4.096 us * 2^t (IBTA 12.6.5) */
	uint8_t retry_count, rnr_retry_count, max_cm_retries;
	uint8_t transport;         /* REQ transport service type: 0 RC, 1 UC, 3 extended */
	uint8_t ext_transport;     /* REQ extended transport type (transport 3): 1 XRC */
	uint32_t eecn;             /* REP local EE context number: an XRC target's QPN */
	uint8_t flow_control, srq;
	uint8_t mtu;               /* path MTU, IBTA enum (1 = 256 ... 5 = 4096) */
	uint8_t ack_timeout, hop_limit, traffic_class;
	uint16_t pkey;
	uint8_t local_gid[16], remote_gid[16];  /* REQ primary path */
	uint8_t msg_rejected;      /* REJ: 0 REQ, 1 REP, 2 other; MRA: message MRAed */
	uint16_t reason;           /* REJ; SIDR_REP status */
	uint8_t service_timeout;   /* MRA */
	uint8_t pd[UV_CM_RTU_PD];  /* private data */
	size_t pd_len;
};

/* Encodes m into out (UV_MAD_LEN bytes); -EINVAL for an attribute not offered. */
int uv_cm_mad_encode(const struct uv_cm_msg *m, uint8_t out[UV_MAD_LEN]);
/* Decodes a MAD received on the GSI QP.  -EPROTO for anything that is not a CM Send
 * MAD of a known attribute, or too short for it (the caller counts and drops it). */
int uv_cm_mad_decode(const uint8_t *mad, size_t len, struct uv_cm_msg *m);

/* Linux cma.c struct cma_hdr: what rdma_cm puts ahead of the user's private data in a
 * REQ (and SIDR_REQ) for the IP port spaces: version 0, IP version in the high nibble,
 * the source port, then source and destination addresses (IPv4 in the last 4 bytes). */
#define UV_CMA_HDR_LEN 36
struct uv_cma_hdr {
	uint16_t src_port;         /* host order */
	uint32_t src_ip, dst_ip;   /* host order, IPv4 */
};
void uv_cma_hdr_put(uint8_t out[UV_CMA_HDR_LEN], const struct uv_cma_hdr *h);
int uv_cma_hdr_get(const uint8_t *in, size_t len, struct uv_cma_hdr *h);

#endif
