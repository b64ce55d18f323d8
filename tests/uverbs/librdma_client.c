/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* An application written for Apple's RDMA, as MLX's JACCL is: it reaches the verbs only
 * through dlopen() of the library's name and dlsym() of the entry points JACCL looks up
 * (ibv_get_device_list ... ibv_dereg_mr), and posts and polls through verbs.h's inline
 * ibv_post_send / ibv_post_recv / ibv_poll_cq.  It links no verbs library.
 *
 * Two emulated NICs (UVERBS_DEVICES) in one process, UC queue pairs with JACCL's
 * attributes (32-entry queues, one SGE, no inline, path MTU 1024, PSN 7, the first
 * IPv4-mapped GID advertised and sgid_index 1 used), and JACCL's pattern: the sender
 * sends as soon as it may, the receiver posts its receive --late-ms later.
 *   --expect delivered: every message (1 KiB .. 4 MiB, --rounds each) arrives intact;
 *   --expect dropped:   the late message is lost (UC as the IBTA has it), and the next
 *                       one lands in the receive that was posted late.
 * --hold-ms keeps the process (and its published counters) alive at the end, so that a
 * test can read them with uvinfo.  Exit 0 when what was expected happened. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

static struct {
	struct ibv_device **(*get_device_list)(int *);
	const char *(*get_device_name)(struct ibv_device *);
	struct ibv_context *(*open_device)(struct ibv_device *);
	void (*free_device_list)(struct ibv_device **);
	int (*close_device)(struct ibv_context *);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *);
	struct ibv_qp *(*create_qp)(struct ibv_pd *, struct ibv_qp_init_attr *);
	struct ibv_cq *(*create_cq)(struct ibv_context *, int, void *, struct ibv_comp_channel *, int);
	int (*destroy_cq)(struct ibv_cq *);
	int (*destroy_qp)(struct ibv_qp *);
	int (*dealloc_pd)(struct ibv_pd *);
	int (*query_port)(struct ibv_context *, uint8_t, struct _compat_ibv_port_attr *);
	int (*query_gid)(struct ibv_context *, uint8_t, int, union ibv_gid *);
	int (*modify_qp)(struct ibv_qp *, struct ibv_qp_attr *, int);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *, void *, size_t, int);
	int (*dereg_mr)(struct ibv_mr *);
	int (*query_qp)(struct ibv_qp *, struct ibv_qp_attr *, int, struct ibv_qp_init_attr *);
} v;

#define MAX_MSG (4u << 20)
#define QDEPTH 32
#define PSN 7

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
};

static int fail(const char *what)
{
	fprintf(stderr, "librdma_client: %s\n", what);
	return 1;
}

static int load(const char *name)
{
	void *h = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		fprintf(stderr, "librdma_client: dlopen(%s): %s\n", name, dlerror());
		return -1;
	}
#define SYM(field, symbol)                                                            \
	do {                                                                          \
		*(void **)(&v.field) = dlsym(h, #symbol);                             \
		if (!v.field) {                                                       \
			fprintf(stderr, "librdma_client: dlsym(%s): %s\n", #symbol, dlerror()); \
			return -1;                                                    \
		}                                                                     \
	} while (0)
	SYM(get_device_list, ibv_get_device_list);
	SYM(get_device_name, ibv_get_device_name);
	SYM(open_device, ibv_open_device);
	SYM(free_device_list, ibv_free_device_list);
	SYM(close_device, ibv_close_device);
	SYM(alloc_pd, ibv_alloc_pd);
	SYM(create_qp, ibv_create_qp);
	SYM(create_cq, ibv_create_cq);
	SYM(destroy_cq, ibv_destroy_cq);
	SYM(destroy_qp, ibv_destroy_qp);
	SYM(dealloc_pd, ibv_dealloc_pd);
	SYM(query_port, ibv_query_port);
	SYM(query_gid, ibv_query_gid);
	SYM(modify_qp, ibv_modify_qp);
	SYM(reg_mr, ibv_reg_mr);
	SYM(dereg_mr, ibv_dereg_mr);
	SYM(query_qp, ibv_query_qp);
#undef SYM
	return 0;
}

/* JACCL's choice: the first IPv4-mapped (::ffff:a.b.c.d) entry of the table. */
static int find_ipv4_gid(struct side *s)
{
	struct ibv_port_attr pa;
	memset(&pa, 0, sizeof(pa));
	if (v.query_port(s->ctx, 1, (struct _compat_ibv_port_attr *)&pa))
		return -1;
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		union ibv_gid g;
		static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
		if (v.query_gid(s->ctx, 1, i, &g) == 0 && !memcmp(g.raw, prefix, 12)) {
			s->gid = g;
			return i;
		}
	}
	return -1;
}

static int setup(struct side *s, struct ibv_device *dev)
{
	s->ctx = v.open_device(dev);
	if (!s->ctx)
		return fail("ibv_open_device failed");
	s->pd = v.alloc_pd(s->ctx);
	s->cq = s->pd ? v.create_cq(s->ctx, 2 * QDEPTH, NULL, NULL, 0) : NULL;
	if (!s->cq)
		return fail("ibv_alloc_pd / ibv_create_cq failed");
	struct ibv_qp_init_attr ia;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = s->cq;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = QDEPTH;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	ia.qp_type = IBV_QPT_UC;
	s->qp = v.create_qp(s->pd, &ia);
	if (!s->qp)
		return fail("ibv_create_qp (UC) failed");
	if (posix_memalign((void **)&s->buf, 16384, MAX_MSG))
		return fail("out of memory");
	memset(s->buf, 0, MAX_MSG);
	s->mr = v.reg_mr(s->pd, s->buf, MAX_MSG, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			 IBV_ACCESS_REMOTE_WRITE);
	if (!s->mr)
		return fail("ibv_reg_mr failed");
	int idx = find_ipv4_gid(s);
	if (idx < 0)
		return fail("no IPv4-mapped GID in the table (JACCL needs one)");
	if (idx != 1)
		fprintf(stderr, "librdma_client: first IPv4-mapped GID at index %d, JACCL uses 1\n", idx);
	return idx == 1 ? 0 : 1;
}

static int connect_qp(struct side *s, const struct side *peer)
{
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	if (v.modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return fail("modify to INIT failed");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.rq_psn = PSN;
	a.dest_qp_num = peer->qp->qp_num;
	a.ah_attr.port_num = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = 1;
	if (v.modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN))
		return fail("modify to RTR failed");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = PSN;
	if (v.modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return fail("modify to RTS failed");
	/* whatever carries it, the application sees the UC queue pair it made */
	struct ibv_qp_init_attr ia;
	if (v.query_qp(s->qp, &a, IBV_QP_STATE, &ia) || ia.qp_type != IBV_QPT_UC || a.qp_state != IBV_QPS_RTS ||
	    a.rnr_retry != 0 || a.timeout != 0)
		return fail("ibv_query_qp does not report an RTS UC queue pair");
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One completion from cq within ms, 1 if none came, -1 on a poll error. */
static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, double ms)
{
	double end = now_ms() + ms;
	do {
		int n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			return -1;
		if (n == 1)
			return 0;
	} while (now_ms() < end);
	return 1;
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 2654435761u + seed) >> 11);
}

static int check(const uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (uint8_t)((i * 2654435761u + seed) >> 11))
			return -1;
	return 0;
}

static int post_send(struct side *s, size_t len, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = (uint32_t)len, .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	return ibv_post_send(s->qp, &wr, &bad);
}

static int post_recv(struct side *s, size_t len, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = (uint32_t)len, .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;
	return ibv_post_recv(s->qp, &wr, &bad);
}

int main(int argc, char **argv)
{
	const char *lib = NULL, *expect = NULL;
	unsigned late_ms = 100, rounds = 3, hold_ms = 0;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--lib")) lib = argv[i + 1];
		else if (!strcmp(argv[i], "--expect")) expect = argv[i + 1];
		else if (!strcmp(argv[i], "--late-ms")) late_ms = (unsigned)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--rounds")) rounds = (unsigned)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--hold-ms")) hold_ms = (unsigned)atoi(argv[i + 1]);
		else return fail("usage: --lib NAME --expect delivered|dropped [--late-ms N] [--rounds N] [--hold-ms N]");
	}
	if (!lib || !expect || (strcmp(expect, "delivered") && strcmp(expect, "dropped")))
		return fail("usage: --lib NAME --expect delivered|dropped [--late-ms N] [--rounds N] [--hold-ms N]");
	if (load(lib))
		return 2;
	int n = 0;
	struct ibv_device **devs = v.get_device_list(&n);
	if (!devs || n < 2)
		return fail("need two devices (UVERBS_DEVICES=emu:...,emu:...)");
	struct side a = { 0 }, b = { 0 };
	if (setup(&a, devs[0]) || setup(&b, devs[1]) || connect_qp(&a, &b) || connect_qp(&b, &a))
		return 1;
	printf("librdma_client: %s (%s) -> %s, UC, sgid_index 1, path MTU 1024\n", lib,
	       v.get_device_name(devs[0]), v.get_device_name(devs[1]));
	v.free_device_list(devs);

	struct ibv_wc wc;
	unsigned delivered = 0, lost = 0;
	static const size_t sizes[] = { 1024, 4096, 65536, 1u << 20, 4u << 20 };
	size_t nsizes = !strcmp(expect, "delivered") ? sizeof(sizes) / sizeof(sizes[0]) : 1;
	uint64_t id = 1;
	for (size_t si = 0; si < nsizes; si++) {
		size_t len = !strcmp(expect, "delivered") ? sizes[si] : 4096;
		for (unsigned r = 0; r < rounds; r++, id++) {
			uint32_t seed = (uint32_t)(id * 0x9e3779b9u);
			fill(a.buf, len, seed);
			memset(b.buf, 0, len);
			if (post_send(&a, len, id))
				return fail("ibv_post_send failed");
			usleep(late_ms * 1000);          /* JACCL: the peer posts when it gets there */
			if (post_recv(&b, len, id))
				return fail("ibv_post_recv failed");
			int got = wait_wc(b.cq, &wc, !strcmp(expect, "delivered") ? 10000 : 500);
			if (got < 0)
				return fail("ibv_poll_cq failed");
			if (got == 0) {
				if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV || wc.byte_len != len ||
				    check(b.buf, len, seed)) {
					fprintf(stderr, "librdma_client: %zu B: receive status %d opcode %d len %u, data %s\n",
						len, wc.status, wc.opcode, wc.byte_len,
						check(b.buf, len, seed) ? "wrong" : "right");
					return 1;
				}
				delivered++;
			} else {
				lost++;
			}
			if (wait_wc(a.cq, &wc, 10000) || wc.status != IBV_WC_SUCCESS)
				return fail("the SEND did not complete successfully");
			if (got == 1) {
				/* the late message is gone; the next one lands in that receive */
				seed ^= 0x5a5a5a5au;
				fill(a.buf, len, seed);
				if (post_send(&a, len, ++id) || wait_wc(b.cq, &wc, 5000) || wc.status != IBV_WC_SUCCESS ||
				    check(b.buf, len, seed) || wait_wc(a.cq, &wc, 5000))
					return fail("after a lost message the next one did not arrive intact");
			}
		}
	}
	printf("librdma_client: %u delivered and verified, %u lost (receiver %u ms late)\n", delivered, lost,
	       late_ms);
	fflush(stdout);
	int ok = !strcmp(expect, "delivered") ? (lost == 0 && delivered == nsizes * rounds)
					      : (lost == rounds && delivered == 0);
	if (hold_ms) {
		printf("librdma_client: holding %u ms (pid %ld)\n", hold_ms, (long)getpid());
		fflush(stdout);
		usleep(hold_ms * 1000);
	}
	v.dereg_mr(a.mr), v.dereg_mr(b.mr);
	v.destroy_qp(a.qp), v.destroy_qp(b.qp);
	v.destroy_cq(a.cq), v.destroy_cq(b.cq);
	v.dealloc_pd(a.pd), v.dealloc_pd(b.pd);
	v.close_device(a.ctx), v.close_device(b.ctx);
	free(a.buf), free(b.buf);
	if (!ok)
		fprintf(stderr, "librdma_client: expected every message %s\n", expect);
	return ok ? 0 : 1;
}
