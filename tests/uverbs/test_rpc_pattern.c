/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* llama.cpp's RPC transport over RDMA, as a pattern (docs/tools.md, "llama.cpp RPC over
 * RDMA"): the verbs calls and settings of ggml/src/ggml-rpc/transport.cpp's Linux RC
 * transport (ggml-org/llama.cpp, read for this test, not copied), so that a change in
 * uverbs that would break llama.cpp shows here without llama.cpp:
 *  - the GID is found by matching ::ffff:<the TCP socket's local IPv4> against the port's
 *    GID table, RoCE v2 first (rdma_probe), unless GGML_RDMA_GID names an index;
 *  - one RC QP, send CQ of 16 and receive CQ of 24 + 4 on one completion channel;
 *    max_send_wr 4, max_recv_wr 28, one SGE, max_inline_data 256 asked;
 *  - a 256 KiB registered send buffer (local write only) and a 6 MiB receive ring of 24
 *    slots of 256 KiB (local and remote write), the ring posted after INIT, before RTR;
 *  - RTR: the port's active MTU, max_dest_rd_atomic 1, min_rnr_timer 1, GRH hop_limit 1;
 *    RTS: timeout 14, retry_cnt 7, rnr_retry 7 (infinite), max_rd_atomic 1; PSN = QPN;
 *  - send_data: chunks of at most 256 KiB, each an IBV_WR_SEND signalled and awaited on
 *    the send CQ, inline when it fits max_inline, else copied into the registered buffer;
 *    recv_data: each receive completion's byte_len copied out and its slot re-posted;
 *  - a command is three send_data calls: the command byte, the 8-byte size, the payload;
 *    the answer is the 8-byte size and the data;
 *  - waiting: poll the CQ, and after a spell without completions arm it, poll once more,
 *    and sleep on the channel's descriptor (rdma_poll / rdma_wait_event).
 * Two emulated NICs in one process; the server side runs in a thread and reports its
 * errors to the test's thread, which alone asserts. */
#include <arpa/inet.h>
#include <pthread.h>
#include <unistd.h>

#include "uv_test.h"

#define RP_CHUNK (256u * 1024)
#define RP_RX_DEPTH 24

struct rp_conn {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	uint8_t *tx_buf, *rx_buf;
	struct ibv_mr *tx_mr, *rx_mr;
	uint32_t max_inline;
	int gid_idx;
	enum ibv_mtu mtu;
	union ibv_gid gid;
	uint32_t psn;
	double spin_ms;              /* poll this long after the last completion, then sleep */
	double last_active;
	unsigned sleeps;             /* times the channel was slept on */
	char err[256];
};

/* rdma_probe's lookup: the GID whose bytes equal ::ffff:ip, RoCE v2 before v1; -1 if none. */
static int rp_find_gid(struct ibv_context *ctx, const char *ip)
{
	uint8_t target[16] = { 0 };
	target[10] = target[11] = 0xff;
	cr_assert_eq(inet_pton(AF_INET, ip, target + 12), 1);
	struct ibv_port_attr pa;
	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	int v2 = -1, v1 = -1;
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		struct ibv_gid_entry e;
		if (ibv_query_gid_ex(ctx, 1, (uint32_t)i, &e, 0) || memcmp(e.gid.raw, target, 16))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 && v2 < 0)
			v2 = i;
		else if (e.gid_type == IBV_GID_TYPE_ROCE_V1 && v1 < 0)
			v1 = i;
	}
	return v2 >= 0 ? v2 : v1;
}

static void rp_probe(struct rp_conn *c, int dev, const char *ip)
{
	memset(c, 0, sizeof(*c));
	c->ctx = ut_open(dev);
	c->gid_idx = rp_find_gid(c->ctx, ip);
	cr_assert_geq(c->gid_idx, 0, "no RoCE GID equal to ::ffff:%s", ip);
	struct ibv_gid_entry e;
	cr_assert_eq(ibv_query_gid_ex(c->ctx, 1, (uint32_t)c->gid_idx, &e, 0), 0);
	cr_assert_eq(e.gid_type, IBV_GID_TYPE_ROCE_V2, "the matched GID is not RoCE v2");
	struct ibv_port_attr pa;
	cr_assert_eq(ibv_query_port(c->ctx, 1, &pa), 0);
	c->mtu = pa.active_mtu;
	c->pd = ibv_alloc_pd(c->ctx);
	c->ch = ibv_create_comp_channel(c->ctx);
	cr_assert(c->pd && c->ch);
	c->scq = ibv_create_cq(c->ctx, 16, NULL, c->ch, 0);
	c->rcq = ibv_create_cq(c->ctx, RP_RX_DEPTH + 4, NULL, c->ch, 0);
	cr_assert(c->scq && c->rcq, "ibv_create_cq: %s", strerror(errno));
	struct ibv_qp_init_attr qia = {
		.send_cq = c->scq, .recv_cq = c->rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = RP_RX_DEPTH + 4, .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 256 },
	};
	c->qp = ibv_create_qp(c->pd, &qia);
	cr_assert_not_null(c->qp, "ibv_create_qp: %s", strerror(errno));
	/* llama.cpp takes the inline limit the device writes back into qia.cap */
	c->max_inline = qia.cap.max_inline_data;
	cr_assert_geq(c->max_inline, 256, "max_inline_data %u < the 256 asked", c->max_inline);
	c->tx_buf = aligned_alloc(4096, RP_CHUNK);
	c->rx_buf = aligned_alloc(4096, (size_t)RP_RX_DEPTH * RP_CHUNK);
	cr_assert(c->tx_buf && c->rx_buf);
	c->tx_mr = ibv_reg_mr(c->pd, c->tx_buf, RP_CHUNK, IBV_ACCESS_LOCAL_WRITE);
	c->rx_mr = ibv_reg_mr(c->pd, c->rx_buf, (size_t)RP_RX_DEPTH * RP_CHUNK,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	cr_assert(c->tx_mr && c->rx_mr, "ibv_reg_mr 256 KiB / 6 MiB: %s", strerror(errno));
	cr_assert_eq(ibv_query_gid(c->ctx, 1, c->gid_idx, &c->gid), 0);
	c->psn = c->qp->qp_num & 0xffffff;
}

static int rp_post_rx(struct rp_conn *c, int i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(c->rx_buf + (size_t)i * RP_CHUNK), .length = RP_CHUNK,
			       .lkey = c->rx_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;
	return ibv_post_recv(c->qp, &wr, &bad);
}

static void rp_activate(struct rp_conn *c, const struct rp_conn *peer)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .pkey_index = 0,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_LOCAL_WRITE };
	cr_assert_eq(ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	for (int i = 0; i < RP_RX_DEPTH; i++)
		cr_assert_eq(rp_post_rx(c, i), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = c->mtu;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.grh.sgid_index = (uint8_t)c->gid_idx;
	a.ah_attr.port_num = 1;
	cr_assert_eq(ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
		     0, "RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = c->psn;
	a.max_rd_atomic = 1;
	cr_assert_eq(ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					       IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
		     0, "RTS: %s", strerror(errno));
	c->last_active = ut_now_ms();
}

/* One completion from cq within deadline_ms, waiting as llama.cpp's rdma_poll does.
 * Returns 1 with *wc, 0 on timeout, -1 on a verbs error (c->err says). */
static int rp_poll(struct rp_conn *c, struct ibv_cq *cq, struct ibv_wc *wc, double deadline_ms)
{
	double end = ut_now_ms() + deadline_ms;
	int armed = 0;
	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);
		if (n < 0) {
			snprintf(c->err, sizeof(c->err), "ibv_poll_cq %d", n);
			return -1;
		}
		if (n) {
			c->last_active = ut_now_ms();
			return 1;
		}
		if (ut_now_ms() > end)
			return 0;
		if (armed) {
			struct pollfd p = { .fd = c->ch->fd, .events = POLLIN };
			int r = poll(&p, 1, 100);
			if (r > 0) {
				struct ibv_cq *ecq;
				void *ectx;
				if (ibv_get_cq_event(c->ch, &ecq, &ectx)) {
					snprintf(c->err, sizeof(c->err), "ibv_get_cq_event: %s", strerror(errno));
					return -1;
				}
				ibv_ack_cq_events(ecq, 1);
				c->sleeps++;
				armed = 0;
			}
			continue;
		}
		/* a completion that came before the arming raises no event: look again after */
		if (ut_now_ms() - c->last_active >= c->spin_ms) {
			/* both CQs share the channel; arm this one */
			if (ibv_req_notify_cq(cq, 0)) {
				snprintf(c->err, sizeof(c->err), "ibv_req_notify_cq: %s", strerror(errno));
				return -1;
			}
			armed = 1;
		}
	}
}

static int rp_send(struct rp_conn *c, const void *data, size_t size)
{
	const uint8_t *src = data;
	while (size) {
		size_t chunk = size < RP_CHUNK ? size : RP_CHUNK;
		struct ibv_sge sge = { .addr = (uintptr_t)src, .length = (uint32_t)chunk };
		struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;
		if (chunk <= c->max_inline) {
			wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
		} else {
			memcpy(c->tx_buf, src, chunk);
			sge.addr = (uintptr_t)c->tx_buf;
			sge.lkey = c->tx_mr->lkey;
			wr.send_flags = IBV_SEND_SIGNALED;
		}
		if (ibv_post_send(c->qp, &wr, &bad)) {
			snprintf(c->err, sizeof(c->err), "ibv_post_send: %s", strerror(errno));
			return -1;
		}
		struct ibv_wc wc;
		int r = rp_poll(c, c->scq, &wc, 10000);
		if (r <= 0) {
			if (!r)
				snprintf(c->err, sizeof(c->err), "send of %zu B: no completion in 10 s", chunk);
			return -1;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			snprintf(c->err, sizeof(c->err), "send of %zu B: %s", chunk, ibv_wc_status_str(wc.status));
			return (int)wc.status;
		}
		src += chunk;
		size -= chunk;
	}
	return 0;
}

static int rp_recv(struct rp_conn *c, void *data, size_t size)
{
	uint8_t *dst = data;
	while (size) {
		struct ibv_wc wc;
		int r = rp_poll(c, c->rcq, &wc, 10000);
		if (r <= 0) {
			if (!r)
				snprintf(c->err, sizeof(c->err), "receive: nothing in 10 s (%zu B outstanding)", size);
			return -1;
		}
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV || wc.byte_len > size) {
			snprintf(c->err, sizeof(c->err), "receive: %s, opcode %d, %u B for %zu expected",
				 ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len, size);
			return -1;
		}
		memcpy(dst, c->rx_buf + (size_t)wc.wr_id * RP_CHUNK, wc.byte_len);
		if (rp_post_rx(c, (int)wc.wr_id)) {
			snprintf(c->err, sizeof(c->err), "re-post: %s", strerror(errno));
			return -1;
		}
		dst += wc.byte_len;
		size -= wc.byte_len;
	}
	return 0;
}

static void rp_close(struct rp_conn *c)
{
	if (c->qp)
		ibv_destroy_qp(c->qp);
	ibv_dereg_mr(c->tx_mr);
	ibv_dereg_mr(c->rx_mr);
	ibv_destroy_cq(c->scq);
	ibv_destroy_cq(c->rcq);
	ibv_destroy_comp_channel(c->ch);
	ibv_dealloc_pd(c->pd);
	ibv_close_device(c->ctx);
	free(c->tx_buf);
	free(c->rx_buf);
}

/* ------------------------------------------------------------------ the server thread */

struct rp_server {
	struct rp_conn *c;
	unsigned commands;
	unsigned delay_ms;           /* before it first looks at its receive CQ */
	int rc;
};

/* Each command's answer is its payload with every byte XORed with the command byte. */
static void *rp_serve(void *arg)
{
	struct rp_server *s = arg;
	if (s->delay_ms)
		usleep(s->delay_ms * 1000);
	for (unsigned i = 0; i < s->commands; i++) {
		uint8_t cmd;
		uint64_t size;
		if (rp_recv(s->c, &cmd, 1) || rp_recv(s->c, &size, 8)) {
			s->rc = -1;
			return NULL;
		}
		uint8_t *b = malloc(size ? size : 1);
		if (!b || rp_recv(s->c, b, size)) {
			free(b);
			s->rc = -1;
			return NULL;
		}
		for (uint64_t k = 0; k < size; k++)
			b[k] ^= cmd;
		if (rp_send(s->c, &size, 8) || rp_send(s->c, b, size)) {
			free(b);
			s->rc = -1;
			return NULL;
		}
		free(b);
	}
	return NULL;
}

static void rp_setup(struct rp_conn *cl, struct rp_conn *sv, const char *ipc, const char *ips)
{
	char uris[96];
	snprintf(uris, sizeof(uris), "emu:ip=%s,emu:ip=%s", ipc, ips);
	ut_devices(uris);
	rp_probe(cl, 0, ipc);
	rp_probe(sv, 1, ips);
	rp_activate(cl, sv);
	rp_activate(sv, cl);
}

static void rp_command(struct rp_conn *cl, uint8_t cmd, size_t size, unsigned seed)
{
	uint8_t *out = malloc(size ? size : 1), *in = malloc(size ? size : 1);
	cr_assert(out && in);
	for (size_t k = 0; k < size; k++)
		out[k] = (uint8_t)((k * 131 + seed) >> 3);
	uint64_t sz = size;
	cr_assert_eq(rp_send(cl, &cmd, 1), 0, "command byte: %s", cl->err);
	cr_assert_eq(rp_send(cl, &sz, 8), 0, "size: %s", cl->err);
	cr_assert_eq(rp_send(cl, out, size), 0, "payload of %zu B: %s", size, cl->err);
	uint64_t back = 0;
	cr_assert_eq(rp_recv(cl, &back, 8), 0, "answer size: %s", cl->err);
	cr_assert_eq(back, size);
	cr_assert_eq(rp_recv(cl, in, size), 0, "answer of %zu B: %s", size, cl->err);
	for (size_t k = 0; k < size; k++)
		if (in[k] != (out[k] ^ cmd))
			cr_assert_fail("command %u, %zu B: byte %zu is 0x%02x, expected 0x%02x", cmd, size, k, in[k],
				       out[k] ^ cmd);
	free(out);
	free(in);
}

/* Sizes about the inline limit, the 256 KiB chunk and the 24-slot ring (6 MiB + 3 B is 25
 * chunks: the 25th needs a slot the receiver has re-posted). */
static const size_t rp_sizes[] = { 1, 200, 256, 257, 4096, RP_CHUNK - 1, RP_CHUNK, RP_CHUNK + 1,
				   (size_t)RP_RX_DEPTH * RP_CHUNK + 3 };
#define RP_NSIZES (sizeof(rp_sizes) / sizeof(rp_sizes[0]))

static void rp_run(double spin_ms, const char *ipc, const char *ips)
{
	struct rp_conn cl, sv;
	rp_setup(&cl, &sv, ipc, ips);
	cl.spin_ms = sv.spin_ms = spin_ms;
	struct rp_server s = { .c = &sv, .commands = RP_NSIZES };
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, rp_serve, &s), 0);
	for (unsigned i = 0; i < RP_NSIZES; i++)
		rp_command(&cl, (uint8_t)(0x11 + i), rp_sizes[i], i);
	pthread_join(t, NULL);
	cr_assert_eq(s.rc, 0, "server: %s", sv.err);
	if (spin_ms == 0)
		cr_assert_gt(cl.sleeps + sv.sleeps, 0, "the completion channel was never slept on");
	rp_close(&cl);
	rp_close(&sv);
}

Test(rpc_pattern, command_as_three_awaited_sends_round_trips_every_size)
{
	rp_run(100, "127.0.97.1", "127.0.97.2");     /* llama.cpp's RDMA_SPIN_TIME */
}

Test(rpc_pattern, the_same_sleeping_on_the_completion_channel_after_every_send)
{
	rp_run(0, "127.0.97.3", "127.0.97.4");
}

/* The receiver looks at nothing for 300 ms while the sender streams 30 chunks into a
 * ring of 24: the 25th SEND meets RNR NAKs and, with rnr_retry 7 (infinite), waits for
 * the re-posted slot instead of failing. */
Test(rpc_pattern, sender_waits_out_rnr_while_the_receive_ring_is_full)
{
	struct rp_conn cl, sv;
	rp_setup(&cl, &sv, "127.0.97.5", "127.0.97.6");
	cl.spin_ms = sv.spin_ms = 100;
	struct rp_server s = { .c = &sv, .commands = 1, .delay_ms = 300 };
	pthread_t t;
	double t0 = ut_now_ms();
	cr_assert_eq(pthread_create(&t, NULL, rp_serve, &s), 0);
	rp_command(&cl, 0x5a, 30 * (size_t)RP_CHUNK, 7);   /* 2 small SENDs and 30 chunks into 24 slots */
	double ms = ut_now_ms() - t0;
	pthread_join(t, NULL);
	cr_assert_eq(s.rc, 0, "server: %s", sv.err);
	cr_assert_geq(ms, 250, "the stream finished in %.0f ms although the receiver slept 300 ms", ms);
	rp_close(&cl);
	rp_close(&sv);
}

/* With timeout 14 (67 ms) and retry_cnt 7, an awaited SEND to a peer that is gone fails
 * with RETRY_EXC_ERR after 8 tries, about half a second: never a hang. */
Test(rpc_pattern, send_to_a_vanished_peer_fails_with_retry_exceeded_in_bounded_time)
{
	struct rp_conn cl, sv;
	rp_setup(&cl, &sv, "127.0.97.7", "127.0.97.8");
	cl.spin_ms = 100;
	ibv_destroy_qp(sv.qp);
	sv.qp = NULL;
	uint8_t cmd = 1;
	double t0 = ut_now_ms();
	int r = rp_send(&cl, &cmd, 1);
	double ms = ut_now_ms() - t0;
	cr_assert_eq(r, IBV_WC_RETRY_EXC_ERR, "got %d (%s)", r, cl.err);
	cr_assert(ms > 250 && ms < 5000, "RETRY_EXC_ERR after %.0f ms, expected about 540", ms);
	rp_close(&cl);
	rp_close(&sv);
}

/* The trap of GGML_RDMA_GID: without it llama.cpp looks for the GID equal to the TCP
 * socket's local address.  RPC to 127.0.0.1 has that address, and no emulated NIC on
 * 127.0.97.x holds ::ffff:127.0.0.1, so the probe finds nothing and the connection stays
 * on TCP, silently; the NIC's own address matches at its RoCE v2 index. */
Test(rpc_pattern, gid_lookup_by_the_tcp_address_misses_for_127_0_0_1)
{
	ut_devices("emu:ip=127.0.97.9");
	struct ibv_context *ctx = ut_open(0);
	cr_assert_eq(rp_find_gid(ctx, "127.0.0.1"), -1);
	int g = rp_find_gid(ctx, "127.0.97.9");
	cr_assert_geq(g, 0);
	struct ibv_gid_entry e;
	cr_assert_eq(ibv_query_gid_ex(ctx, 1, (uint32_t)g, &e, 0), 0);
	cr_assert_eq(e.gid_type, IBV_GID_TYPE_ROCE_V2);
	ibv_close_device(ctx);
}
