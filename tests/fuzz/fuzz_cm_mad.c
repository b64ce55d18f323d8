/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer over the CM's MAD decoder (uverbs/rdma_cm_mad.c), which reads every MAD the
 * GSI QP receives from the wire: any bytes are either refused (-EPROTO, counted and
 * dropped by rdma_cm_linux.c) or decoded into fields that encode back to a MAD that
 * decodes to the same fields.  FUZZ_CM_SEEDS=DIR writes one valid MAD per attribute
 * into DIR and exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uverbs/rdma_cm_mad.h"

static int seeds(const char *dir)
{
	static const uint16_t attrs[] = { UV_CM_REQ, UV_CM_MRA, UV_CM_REJ, UV_CM_REP,
					  UV_CM_RTU, UV_CM_DREQ, UV_CM_DREP, UV_CM_SIDR_REQ, UV_CM_SIDR_REP };
	for (unsigned i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		struct uv_cm_msg m = { .attr = attrs[i], .tid = 0x1234 + i, .local_comm_id = 7,
				       .remote_comm_id = 9, .qpn = 0x101, .psn = 0xabcdef, .mtu = 3,
				       .pd_len = 36 };
		struct uv_cma_hdr h = { .src_port = 4000, .src_ip = 0x7f000002, .dst_ip = 0x7f000003 };
		uv_cma_hdr_put(m.pd, &h);
		uint8_t mad[UV_MAD_LEN];
		char path[4096];
		if (uv_cm_mad_encode(&m, mad))
			return 1;
		snprintf(path, sizeof(path), "%s/seed-%04x", dir, attrs[i]);
		FILE *f = fopen(path, "wb");
		if (!f || fwrite(mad, 1, sizeof(mad), f) != sizeof(mad))
			return 1;
		fclose(f);
	}
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *d = getenv("FUZZ_CM_SEEDS");
	if (d)
		exit(seeds(d));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uv_cm_msg m, m2;
	uint8_t mad[UV_MAD_LEN];
	if (uv_cm_mad_decode(data, size, &m))
		return 0;
	struct uv_cma_hdr h;
	(void)uv_cma_hdr_get(m.pd, m.pd_len, &h);
	/* what was decoded encodes and decodes to the same fields */
	if (uv_cm_mad_encode(&m, mad) || uv_cm_mad_decode(mad, sizeof(mad), &m2) || memcmp(&m, &m2, sizeof(m)))
		abort();
	return 0;
}
