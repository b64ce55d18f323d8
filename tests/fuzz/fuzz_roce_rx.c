/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the emulated ConnectX's RoCE v2 receive path (hw/emu/rx_check.c, roce_hdr.c):
 * hostile packets never crash the emulator, and nothing is ever written outside a
 * registered memory window.
 *
 * Set-up (LLVMFuzzerInitialize): two emulated NICs opened through the real driver
 * (hw/mlx5 over the "emu:" shim).  NIC B, the one under attack, has an RC, a UC and a
 * UD QP; the RC and UC ones are connected to peers on NIC A.  B registers one MR per QP
 * with every remote right, each in the middle of an mmap whose first and last pages are
 * unregistered guards filled with a pattern; B's receive WQEs point into those MRs.
 * NIC A's link is down, so whatever B answers (ACKs, NAKs, READ responses) is dropped
 * on arrival at A and never comes back.
 *
 * An input: byte 0 chooses the target QP and what the harness patches, the rest is the
 * InfiniBand transport part of a RoCE v2 packet (BTH onward, without the ICRC).  The
 * harness wraps it in the IPv4/UDP envelope A's port would send it in, appends the
 * ICRC that envelope gives (IBTA A17.3.3) unless told to corrupt it, and hands it to
 * B's receive path (emu_tp_rx_packet) under B's device lock, as B's device thread does.
 *
 * Requester mode (byte 0 = F_REQ_MODE plus flags): B's RC QP is renewed and first posts
 * a WRITE, a FETCH_ADD and a READ to A (never answered), so the packet, delivered as a
 * response with its PSN inside B's outstanding range, reaches the requester side
 * (rc_req.c) beyond its "unexpected response" checks; B's own completions are counted
 * and the QP is renewed again afterwards, so nothing stays in flight.
 *
 * After every input (a violation traps, which libFuzzer reports as a crash):
 *  - every guard page still holds its pattern;
 *  - B's CQ is polled through the driver; each receive completion is replaced by a new
 *    receive WQE, and a QP the packet sent to the error state is brought back
 *    RST -> INIT -> RTR -> RTS through the driver, so coverage does not stall.
 * ASan/UBSan watch the emulator itself.
 *
 * QP1: B also has a GSI QP (UD created as QP 1, qpc.st QP1, as the in-library CM makes
 * it: uverbs/rdma_cm_linux.c), which every packet with BTH.DestQP 1 reaches (F_KEEP_QPN
 * and DestQP 1; F_FIX_HDR then gives DETH the GSI Q_Key 0x80010000).  Each MAD it
 * receives goes through the CM's decoder (uverbs/rdma_cm_mad.c) as the CM's agent
 * thread reads it: refused (counted as dropped) or decoded into fields that encode and
 * decode back the same.  The seeds hold one valid CM MAD of each attribute.
 *
 * Multicast: B's UD QP is attached to the group 239.1.2.3 (ATTACH_TO_MCG through the
 * driver).  A packet whose BTH.DestQP is 0xFFFFFF (F_KEEP_QPN) arrives addressed to that
 * group, so it reaches rx_check.c's multicast delivery with a member to place it in;
 * with F_FOREIGN_SRC it arrives addressed to B's unicast address instead, which must be
 * dropped.
 *
 * With FUZZ_ROCE_SEEDS=<dir> in the environment the program writes its seed corpus
 * (valid packets of each kind, built with hw/emu/roce_hdr.h) there and exits.
 *
 * Built and run by run-fuzz-roce.sh with clang -fsanitize=fuzzer,address,undefined.
 */
#define EMU_TP_INTERNAL
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hw/emu/emu.h"
#include "hw/emu/emu_dev.h"
#include "hw/emu/objects.h"
#include "hw/emu/roce_wire.h"
#include "hw/emu/transport.h"
#include "hw/mlx5/doorbell.h"
#include "hw/mlx5/mx5.h"
#include "hw/mlx5/poll.h"
#include "uverbs/rdma_cm_mad.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

/* Byte 0 of an input. */
#define F_TARGET 0x03       /* 0 RC, 1 UC, 2 UD, 3 RC renewed first (no message open) */
#define F_KEEP_QPN 0x04     /* leave BTH.DestQP as the input has it */
#define F_PATCH_KEYS 0x08   /* RETH/AtomicETH R_Key = the target's MR, VA inside it */
#define F_PATCH_PSN 0x10    /* BTH.PSN = the PSN the target expects */
#define F_BAD_ICRC 0x20     /* flip a bit of the ICRC */
#define F_FIX_HDR 0x40      /* BTH.TVer 0, P_Key default, UD DETH.Q_Key = the QP's */
#define F_FOREIGN_SRC 0x80  /* from an address that is not the connected peer */
/* "RC renewed first" with a corrupted ICRC only ever tested the ICRC drop, which every
 * other target tests too: that combination instead means "B's RC QP has requests of its
 * own in flight" (requester mode).  The ICRC is then left intact, and F_PATCH_PSN puts
 * the BTH.PSN inside B's outstanding range: una + (input PSN mod outstanding PSNs), so
 * ACKs, READ responses and atomic ACKs reach rc_req.c's expected-response paths. */
#define F_REQ_MODE (F_BAD_ICRC | 3)
#define req_mode(flags) (((flags) & (F_TARGET | F_BAD_ICRC)) == F_REQ_MODE)

#define NQP 4               /* RC, UC, UD, and the GSI QP (QP 1) */
#define GSI 3
#define RQ_DEPTH 8
#define MR_PAGES 4
#define GUARD_BYTE 0xa7
#define UD_QKEY 0x11111111u
#define MC_GROUP 0xef010203u   /* 239.1.2.3: B's UD QP is attached to ::ffff:239.1.2.3 */
#define B_RQ_PSN 0x100
#define A_SQ_PSN 0x100
#define PATH_MTU 3          /* IB encoding: 1024 bytes */
/* Requester mode: B's RC QP posts an RDMA WRITE (1 PSN), then an RDMA READ and a
 * FETCH_ADD (1 PSN), all signalled.  READ responses and atomic ACKs are matched to the
 * oldest outstanding READ/atomic (IBTA 9.7.5.2), so only the first of the two can be
 * answered in order by one packet: the two top bits of the input's BTH.PSN choose
 * FETCH_ADD before READ (bit 23) and a READ of REQ_READ_LONG bytes, 3 PSNs at 1024-byte
 * MTU, instead of one MTU (bit 22).  The READ lands at the end of the RC QP's guarded MR
 * and the atomic's original value in the 8 bytes before the longest READ window, so a
 * response written past its window overwrites the trailing guard page. */
#define REQ_WRITE_LEN 64
#define REQ_READ_SHORT 1024
#define REQ_READ_LONG 3072
#define REQ_PSN_FA_FIRST 0x800000u
#define REQ_PSN_LONG_READ 0x400000u
#define REQ_PSN_OFF 0x3fffffu    /* the rest: offset into the outstanding PSNs */
#define REQ_WRID 0x5e00u     /* wr_id tag of B's own sends (receives use the QP index) */
#define REQ_RADDR 0x10000u   /* A's side: never checked, A never answers */
#define REQ_RKEY 0x4321u

struct nic {
	struct mx5_device *dev;
	struct emu_dev *emu;
	struct mx5_pd *pd;
	struct mx5_cq *cq;
	struct mx5_cq_ring *cqr;
	uint32_t ip;
};

struct ep {
	struct mx5_qp *qp;
	struct mx5_rq *rq;
	uint32_t qpn;
	enum mx5_qp_type type;
	/* B only: the MR behind this QP's receives and remote accesses */
	uint8_t *map;             /* guard page, MR_PAGES registered pages, guard page */
	uint8_t *buf;             /* map + page */
	size_t len;               /* registered bytes */
	uint32_t lkey, rkey;
	uint32_t peer_qpn;
	bool gsi;
};

static struct nic A, B;
static struct ep qa[NQP], qb[NQP];
static size_t page;
static uint64_t nrecovered, nrecv_ok, nrecv_err;
static uint64_t nreq_runs, nreq_full, nsend_ok, nsend_err;
static uint64_t nmad_rx, nmad_ok, nmad_bad;

static const enum mx5_qp_type qp_types[NQP] = { MX5_QPT_RC, MX5_QPT_UC, MX5_QPT_UD, MX5_QPT_UD };

__attribute__((noreturn)) static void die(const char *what, struct mx5_device *dev)
{
	fprintf(stderr, "fuzz_roce_rx: %s: %s\n", what, dev ? mx5_device_error(dev) : mx5_open_error());
	exit(2);
}

static void nic_open(struct nic *n)
{
	struct mx5_cq_attr ca = { .cqe = 256 };
	struct mx5_gid_entry g;
	uint8_t mac[6];

	if (mx5_device_open("emu:", &n->dev) != 0)
		die("open emu:", NULL);
	n->emu = emu_device_from_shim(mx5_device_shim(n->dev));
	if (!n->emu)
		die("not an emulated device", n->dev);
	n->ip = emu_ipv4(n->emu);
	if (mx5_pd_alloc(n->dev, &n->pd) != 0 || mx5_cq_create(n->dev, &ca, &n->cq) != 0)
		die("PD/CQ", n->dev);
	n->cqr = mx5_cq_state(n->cq);
	/* GID 0: the NIC's RoCE v2 address, MAC derived from it (emulated NICs) */
	emu_roce_mac_from_ipv4(n->ip, mac);
	mx5_gid_entry_ipv4(&g, n->ip, mac);
	if (mx5_gid_set(n->dev, 1, 0, &g) != 0)
		die("GID", n->dev);
}

static void qp_create(struct ep *e, struct nic *n, enum mx5_qp_type t)
{
	struct mx5_qp_init_attr a = { .type = t, .send_cq = n->cq, .recv_cq = n->cq,
				      .cap = { .max_send_wr = 16, .max_recv_wr = RQ_DEPTH, .max_send_sge = 1,
					       .max_recv_sge = 1, .max_inline_data = 64 } };

	a.gsi = e->gsi;
	if (mx5_qp_create(n->pd, &a, &e->qp) != 0)
		die("QP", n->dev);
	e->type = t;
	e->qpn = mx5_qp_num(e->qp);
	e->rq = mx5_qp_rq_state(e->qp);
}

/* RST -> INIT -> RTR -> RTS: RC/UC connected to peer QP rqpn at rip, UD with its Q_Key.
 * Returns 0 or the failing step's error. */
static int qp_connect(struct ep *e, uint32_t rip, uint32_t rqpn, uint32_t rq_psn,
		      uint32_t sq_psn)
{
	struct mx5_qp_attr a;
	unsigned m;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_INIT;
	a.port_num = 1;
	a.qkey = e->gsi ? UV_MAD_GSI_QKEY : UD_QKEY;
	a.qp_access_flags = MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE;
	if (e->type == MX5_QPT_RC)
		a.qp_access_flags |= MX5_ACCESS_REMOTE_READ | MX5_ACCESS_REMOTE_ATOMIC;
	m = MX5_QP_STATE | MX5_QP_PKEY_INDEX | MX5_QP_PORT | (e->type == MX5_QPT_UD ? MX5_QP_QKEY : MX5_QP_ACCESS_FLAGS);
	if ((rc = mx5_qp_modify(e->qp, &a, m)) != 0)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_RTR;
	m = MX5_QP_STATE;
	if (e->type != MX5_QPT_UD) {
		a.path_mtu = PATH_MTU;
		a.dest_qp_num = rqpn;
		a.rq_psn = rq_psn;
		a.ah.dgid[10] = 0xff;
		a.ah.dgid[11] = 0xff;
		a.ah.dgid[12] = (uint8_t)(rip >> 24);
		a.ah.dgid[13] = (uint8_t)(rip >> 16);
		a.ah.dgid[14] = (uint8_t)(rip >> 8);
		a.ah.dgid[15] = (uint8_t)rip;
		emu_roce_mac_from_ipv4(rip, a.ah.dmac);
		a.ah.hop_limit = 64;
		a.ah.port_num = 1;
		m |= MX5_QP_AV | MX5_QP_PATH_MTU | MX5_QP_DEST_QPN | MX5_QP_RQ_PSN;
		if (e->type == MX5_QPT_RC) {
			a.max_dest_rd_atomic = 16;
			a.min_rnr_timer = 1;
			m |= MX5_QP_MAX_DEST_RD_ATOMIC | MX5_QP_MIN_RNR_TIMER;
		}
	}
	if ((rc = mx5_qp_modify(e->qp, &a, m)) != 0)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_RTS;
	a.sq_psn = sq_psn;
	m = MX5_QP_STATE | MX5_QP_SQ_PSN;
	if (e->type == MX5_QPT_RC) {
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 16;
		m |= MX5_QP_TIMEOUT | MX5_QP_RETRY_CNT | MX5_QP_RNR_RETRY | MX5_QP_MAX_QP_RD_ATOMIC;
	}
	return mx5_qp_modify(e->qp, &a, m);
}

static int post_recv(struct ep *e, uint64_t wr_id)
{
	/* Every receive scatters into the first page of the QP's MR (UD: GRH area first). */
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf, .length = (uint32_t)page, .lkey = e->lkey };
	struct ibv_recv_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return mx5_post_recv(e->rq, &wr, &bad);
}

static void mr_make(struct ep *e)
{
	struct mx5_mr *mr = NULL;
	struct mx5_mr_info i;
	size_t total = (MR_PAGES + 2) * page;

	e->map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (e->map == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	memset(e->map, GUARD_BYTE, page);
	memset(e->map + (MR_PAGES + 1) * page, GUARD_BYTE, page);
	e->buf = e->map + page;
	e->len = MR_PAGES * page;
	if (mx5_mr_reg(B.pd, e->buf, e->len,
		       MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ | MX5_ACCESS_REMOTE_ATOMIC,
		       &mr) != 0)
		die("MR", B.dev);
	mx5_mr_query(mr, &i);
	CHECK(i.iova == (uintptr_t)e->buf);
	e->lkey = i.lkey;
	e->rkey = i.rkey;
}

static void guards_check(void)
{
	for (int q = 0; q < NQP; q++) {
		const uint8_t *g[2] = { qb[q].map, qb[q].map + (MR_PAGES + 1) * page };

		for (int k = 0; k < 2; k++)
			for (size_t i = 0; i < page; i++)
				CHECK(g[k][i] == GUARD_BYTE);
	}
}

/* ---------------------------------------------------------------- seeds */

static void seed_write_payload(const char *dir, const char *name, uint8_t flags, struct emu_roce_hdrs *h,
			       const uint8_t *payload, size_t payload_len);

static void seed_write(const char *dir, const char *name, uint8_t flags, struct emu_roce_hdrs *h,
		       size_t payload_len)
{
	seed_write_payload(dir, name, flags, h, NULL, payload_len);
}

static void seed_write_payload(const char *dir, const char *name, uint8_t flags, struct emu_roce_hdrs *h,
			       const uint8_t *payload, size_t payload_len)
{
	uint8_t buf[64 + 1100];
	char path[4096];
	int hl;
	FILE *f;

	h->bth.pkey = EMU_ROCE_DEFAULT_PKEY;
	buf[0] = flags;
	hl = emu_roce_build_hdrs(buf + 1, sizeof(buf) - 1, h, payload_len);
	CHECK(hl > 0);
	for (size_t i = 0; i < payload_len; i++)
		buf[1 + hl + i] = payload ? payload[i] : (uint8_t)(i * 7 + 1);
	size_t n = 1 + (size_t)hl + payload_len;
	memset(buf + n, 0, emu_roce_padcnt(payload_len));
	n += emu_roce_padcnt(payload_len);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, n, f) != n || fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

/* Valid packets of every kind the receive path handles; the QPN, PSN, R_Key and VA
 * are patched in by the harness (flag bits), so the seeds reach the deep paths. */
static void seeds(const char *dir)
{
	const uint8_t deep = F_PATCH_KEYS | F_PATCH_PSN | F_FIX_HDR;
	struct emu_roce_hdrs h;
	static const struct { const char *name; uint8_t op; size_t len; } rc_ops[] = {
		{ "rc-send-only", EMU_ROCE_RC_SEND_ONLY, 64 },
		{ "rc-send-first", EMU_ROCE_RC_SEND_FIRST, 1024 },
		{ "rc-send-middle", EMU_ROCE_RC_SEND_MIDDLE, 1024 },
		{ "rc-send-last", EMU_ROCE_RC_SEND_LAST, 13 },
		{ "rc-send-only-imm", EMU_ROCE_RC_SEND_ONLY_IMM, 5 },
		{ "rc-send-only-inv", EMU_ROCE_RC_SEND_ONLY_INV, 8 },
		{ "rc-write-only", EMU_ROCE_RC_WRITE_ONLY, 100 },
		{ "rc-write-first", EMU_ROCE_RC_WRITE_FIRST, 1024 },
		{ "rc-write-only-imm", EMU_ROCE_RC_WRITE_ONLY_IMM, 32 },
		{ "rc-read-request", EMU_ROCE_RC_READ_REQUEST, 0 },
		{ "rc-cmp-swap", EMU_ROCE_RC_CMP_SWAP, 0 },
		{ "rc-fetch-add", EMU_ROCE_RC_FETCH_ADD, 0 },
		{ "rc-ack", EMU_ROCE_RC_ACK, 0 },
		{ "rc-read-resp-only", EMU_ROCE_RC_READ_RESP_ONLY, 16 },
	};

	for (size_t i = 0; i < sizeof(rc_ops) / sizeof(rc_ops[0]); i++) {
		memset(&h, 0, sizeof(h));
		h.bth.opcode = rc_ops[i].op;
		h.bth.ackreq = true;
		h.bth.psn = B_RQ_PSN;
		h.reth.va = 256;                      /* offset into the MR once patched */
		h.reth.rkey = 0x1234;
		h.reth.dlen = rc_ops[i].op == EMU_ROCE_RC_WRITE_FIRST ? 2048 :
			      rc_ops[i].op == EMU_ROCE_RC_READ_REQUEST ? 2500 : (uint32_t)rc_ops[i].len;
		h.atomic.va = 64;
		h.atomic.rkey = 0x1234;
		h.atomic.swap_add = 0x1111;
		h.atomic.compare = 0;
		h.imm = 0xdeadbeef;
		h.ieth_rkey = 0x5678;
		h.aeth.syndrome = emu_aeth_syndrome(EMU_AETH_ACK, EMU_AETH_CREDITS_INVALID);
		h.aeth.msn = 1;
		seed_write(dir, rc_ops[i].name, deep | 3, &h, rc_ops[i].len);
	}
	/* remote windows that leave the MR (its last 48 bytes, then 52 past the end): the
	 * responder must refuse them whole (IBTA 9.7.5.1.3 R_Key/VA/length checks) */
	memset(&h, 0, sizeof(h));
	h.bth.opcode = EMU_ROCE_RC_WRITE_ONLY;
	h.bth.ackreq = true;
	h.reth.va = MR_PAGES * page - 48;
	h.reth.dlen = 100;
	seed_write(dir, "rc-write-past-end", deep | 3, &h, 100);
	h.bth.opcode = EMU_ROCE_RC_READ_REQUEST;
	seed_write(dir, "rc-read-past-end", deep | 3, &h, 0);
	/* an R_Key the harness leaves alone: not one of B's */
	h.bth.opcode = EMU_ROCE_RC_WRITE_ONLY;
	h.reth.va = 0x1000;
	h.reth.rkey = 0xabcd01;
	seed_write(dir, "rc-write-foreign-rkey", F_PATCH_PSN | F_FIX_HDR | 3, &h, 100);
	memset(&h, 0, sizeof(h));
	h.bth.opcode = EMU_ROCE_UC_SEND_ONLY;
	h.bth.psn = B_RQ_PSN;
	seed_write(dir, "uc-send-only", deep | 1, &h, 40);
	memset(&h, 0, sizeof(h));
	h.bth.opcode = EMU_ROCE_UC_WRITE_ONLY_IMM;
	h.bth.psn = B_RQ_PSN;
	h.reth.va = 512;
	h.reth.dlen = 64;
	h.imm = 7;
	seed_write(dir, "uc-write-only-imm", deep | 1, &h, 64);
	memset(&h, 0, sizeof(h));
	h.bth.opcode = EMU_ROCE_UD_SEND_ONLY;
	h.deth.qkey = UD_QKEY;
	h.deth.sqpn = 0x42;
	seed_write(dir, "ud-send-only", deep | 2, &h, 200);
	memset(&h, 0, sizeof(h));
	h.bth.opcode = EMU_ROCE_UD_SEND_ONLY_IMM;
	h.deth.qkey = UD_QKEY;
	h.deth.sqpn = 0x43;
	h.imm = 9;
	seed_write(dir, "ud-send-only-imm", deep | 2, &h, 3);
	memset(&h, 0, sizeof(h));
	h.bth.opcode = EMU_ROCE_UD_SEND_ONLY;
	h.bth.dqpn = EMU_ROCE_MCAST_QPN;
	h.deth.qkey = UD_QKEY;
	h.deth.sqpn = 0x44;
	seed_write(dir, "ud-send-multicast", F_KEEP_QPN | F_FIX_HDR | 2, &h, 100);

	/* CM MADs to the GSI QP (QP 1, its Q_Key), one of each attribute the CM reads */
	static const uint16_t mads[] = { UV_CM_REQ, UV_CM_MRA, UV_CM_REJ, UV_CM_REP, UV_CM_RTU,
					 UV_CM_DREQ, UV_CM_DREP, UV_CM_SIDR_REQ, UV_CM_SIDR_REP };
	for (size_t i = 0; i < sizeof(mads) / sizeof(mads[0]); i++) {
		struct uv_cm_msg m = { .attr = mads[i], .tid = 0x77 + i, .local_comm_id = 5, .remote_comm_id = 6,
				       .qpn = 0x123, .psn = 0x456, .mtu = 3, .service_id = 0x0000000001060000ull | 7174 };
		struct uv_cma_hdr ch = { .src_port = 40000, .src_ip = 0x7f000002, .dst_ip = 0x7f000003 };
		uint8_t mad[UV_MAD_LEN];
		char name[64];

		uv_cma_hdr_put(m.pd, &ch);
		m.pd_len = UV_CMA_HDR_LEN;
		CHECK(uv_cm_mad_encode(&m, mad) == 0);
		memset(&h, 0, sizeof(h));
		h.bth.opcode = EMU_ROCE_UD_SEND_ONLY;
		h.bth.dqpn = 1;
		h.deth.qkey = UV_MAD_GSI_QKEY;
		h.deth.sqpn = 1;
		snprintf(name, sizeof(name), "gsi-cm-mad-%04x", mads[i]);
		seed_write_payload(dir, name, F_KEEP_QPN | F_FIX_HDR | 2, &h, mad, sizeof(mad));
	}

	/* requester mode: responses to B's own WRITE (PSN offset 0) and to the READ or the
	 * FETCH_ADD after it (offset 1); the PSN's top bits choose the order and READ length */
	static const struct { const char *name; uint8_t op; uint32_t psn; uint8_t syn; size_t len; } rsp[] = {
		{ "req-ack-write", EMU_ROCE_RC_ACK, 0, EMU_AETH_ACK, 0 },
		{ "req-read-resp-only", EMU_ROCE_RC_READ_RESP_ONLY, 1, EMU_AETH_ACK, REQ_READ_SHORT },
		{ "req-atomic-ack", EMU_ROCE_RC_ATOMIC_ACK, REQ_PSN_FA_FIRST | 1, EMU_AETH_ACK, 0 },
		{ "req-read-resp-first", EMU_ROCE_RC_READ_RESP_FIRST, REQ_PSN_LONG_READ | 1, EMU_AETH_ACK, 1024 },
		{ "req-read-resp-last", EMU_ROCE_RC_READ_RESP_LAST, REQ_PSN_LONG_READ | 3, EMU_AETH_ACK, 1024 },
		{ "req-nak-seq", EMU_ROCE_RC_ACK, 1, EMU_AETH_NAK, 0 },
	};
	for (size_t i = 0; i < sizeof(rsp) / sizeof(rsp[0]); i++) {
		memset(&h, 0, sizeof(h));
		h.bth.opcode = rsp[i].op;
		h.bth.psn = rsp[i].psn;
		h.aeth.syndrome = rsp[i].syn == EMU_AETH_ACK ? emu_aeth_syndrome(EMU_AETH_ACK, EMU_AETH_CREDITS_INVALID)
							     : emu_aeth_syndrome(EMU_AETH_NAK, EMU_AETH_NAK_PSN_SEQ);
		h.aeth.msn = 1 + (rsp[i].psn & REQ_PSN_OFF);
		h.atomic_ack_orig = 0x0123456789abcdefull;
		seed_write(dir, rsp[i].name, F_REQ_MODE | F_PATCH_PSN | F_FIX_HDR, &h, rsp[i].len);
	}
}

/* ---------------------------------------------------------------- set-up */

/* How deep the run went, printed at exit (run-fuzz-roce.sh shows it): a harness whose
 * packets all died in the header checks would prove little. */
static void report(void)
{
	struct emu_tp_counters *c = calloc(1, sizeof(*c));
	uint64_t writes = 0;

	if (!c)
		return;
	emu_tp_counters(B.emu, c);
	for (int op = 0; op < 256; op++)
		if (op == EMU_ROCE_RC_WRITE_ONLY || op == EMU_ROCE_RC_WRITE_FIRST || op == EMU_ROCE_RC_WRITE_ONLY_IMM ||
		    op == EMU_ROCE_UC_WRITE_ONLY || op == EMU_ROCE_UC_WRITE_FIRST || op == EMU_ROCE_UC_WRITE_ONLY_IMM)
			writes += c->rx_by_opcode[op];
	fprintf(stderr, "fuzz_roce_rx: B received %llu packets (%llu parsed as WRITE first/only), sent %llu; "
		"receive completions %llu ok, %llu error; requester mode %llu runs (%llu with all PSNs out), "
		"own-send completions %llu ok, %llu error; QPs recovered %llu; NAKs sent: inv-req %llu, "
		"rem-access %llu, rem-op %llu; multicast copies placed %llu; GSI QP1 MADs %llu received, %llu decoded, %llu dropped; drops:",
		(unsigned long long)c->rx_pkts, (unsigned long long)writes, (unsigned long long)c->tx_pkts,
		(unsigned long long)nrecv_ok, (unsigned long long)nrecv_err, (unsigned long long)nreq_runs,
		(unsigned long long)nreq_full, (unsigned long long)nsend_ok, (unsigned long long)nsend_err,
		(unsigned long long)nrecovered,
		(unsigned long long)c->naks_sent[EMU_AETH_NAK_INV_REQ],
		(unsigned long long)c->naks_sent[EMU_AETH_NAK_REM_ACCESS],
		(unsigned long long)c->naks_sent[EMU_AETH_NAK_REM_OP], (unsigned long long)c->mcast_rx,
		(unsigned long long)nmad_rx,
		(unsigned long long)nmad_ok, (unsigned long long)nmad_bad);
	for (int r = 1; r < EMU_ROCE_DROP_NR; r++)
		if (c->drops[r])
			fprintf(stderr, " %s %llu", emu_roce_drop_name((enum emu_roce_drop)r),
				(unsigned long long)c->drops[r]);
	fputc('\n', stderr);
	free(c);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *sd = getenv("FUZZ_ROCE_SEEDS");

	(void)argc;
	(void)argv;
	page = (size_t)sysconf(_SC_PAGESIZE);
	if (sd) {
		seeds(sd);
		exit(0);
	}
	nic_open(&A);
	nic_open(&B);
	for (int q = 0; q < NQP; q++) {
		/* A has no GSI QP: B's answers are dropped at A anyway */
		qb[q].gsi = q == GSI;
		if (q != GSI)
			qp_create(&qa[q], &A, qp_types[q]);
		qp_create(&qb[q], &B, qp_types[q]);
		qb[q].peer_qpn = q == GSI ? 1 : qa[q].qpn;
		if (q != GSI && qp_connect(&qa[q], B.ip, qb[q].qpn, A_SQ_PSN, B_RQ_PSN) != 0)
			die("connect A", A.dev);
		if (qp_connect(&qb[q], A.ip, qa[q].qpn, B_RQ_PSN, A_SQ_PSN) != 0)
			die("connect B", B.dev);
		mr_make(&qb[q]);
		for (int i = 0; i < RQ_DEPTH; i++)
			if (post_recv(&qb[q], (uint64_t)q) != 0)
				die("post_recv", B.dev);
	}
	uint8_t mgid[16] = { [10] = 0xff, [11] = 0xff };
	emu_be32_put(mgid + 12, MC_GROUP);
	if (mx5_qp_mcast(qb[2].qp, mgid, 1) != 0)
		die("ATTACH_TO_MCG", B.dev);
	emu_wire_link_set(A.emu, 0);
	atexit(report);
	return 0;
}

/* ---------------------------------------------------------------- one input */

static void patch_remote(uint8_t *p, const struct ep *t)
{
	uint64_t va = emu_be64_get(p);

	/* keep the input's offset, folded into the MR: the length (RETH.DMALen) is the
	 * input's, so windows that run off the end are tried too */
	emu_be64_put(p, (uintptr_t)t->buf + va % t->len);
	emu_be32_put(p + 8, t->rkey);
}

static int qp_index(uint32_t qpn)
{
	for (int q = 0; q < NQP; q++)
		if (qb[q].qpn == qpn)
			return q;
	return -1;
}

static unsigned ndone[NQP];   /* receive completions not yet replaced, by QP */

/* A MAD the GSI QP received, read as the CM's agent thread reads it
 * (rdma_cm_linux.c agent_thread): the 40-byte GRH slot, then the MAD.  The decoder
 * refuses it (the CM counts and drops it) or gives fields that encode and decode back
 * the same. */
static void gsi_mad(const struct ep *e, uint32_t byte_len)
{
	struct uv_cm_msg m, m2;
	uint8_t mad[UV_MAD_LEN];

	nmad_rx++;
	CHECK(byte_len <= page);
	if (byte_len < 40 || uv_cm_mad_decode(e->buf + 40, byte_len - 40, &m)) {
		nmad_bad++;
		return;
	}
	CHECK(uv_cm_mad_encode(&m, mad) == 0);
	CHECK(uv_cm_mad_decode(mad, sizeof(mad), &m2) == 0);
	CHECK(memcmp(&m, &m2, sizeof(m)) == 0);
	nmad_ok++;
}

/* Poll B's CQ dry; count completions per QP.  B's own sends (requester mode, wr_id
 * tagged REQ_WRID) complete on the RC QP, successfully or in error: both are fine. */
static void drain_cq(void)
{
	struct ibv_wc wc[16];
	int n;

	while ((n = mx5_poll_cq(B.cqr, 16, wc)) > 0)
		for (int i = 0; i < n; i++) {
			int q = qp_index(wc[i].qp_num);

			CHECK(q >= 0);
			if ((wc[i].wr_id & ~0xffull) == REQ_WRID) {
				CHECK(q == 0);
				if (wc[i].status == IBV_WC_SUCCESS)
					nsend_ok++;
				else
					nsend_err++;
				continue;
			}
			ndone[q]++;
			if (wc[i].status == IBV_WC_SUCCESS)
				nrecv_ok++;
			else
				nrecv_err++;
			if (q == GSI && wc[i].status == IBV_WC_SUCCESS)
				gsi_mad(&qb[q], wc[i].byte_len);
		}
	CHECK(n == 0);
}

/* Back to a fresh RTS through the driver (RST drops the posted receives) and a full
 * receive queue again. */
static void qp_renew(int q)
{
	struct mx5_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_RESET;
	CHECK(mx5_qp_modify(qb[q].qp, &a, MX5_QP_STATE) == 0);
	/* The emulator forgets a QP's transport state lazily, when it meets the QP in RST
	 * or INIT; reconnected with the same PSNs and never touched meanwhile, the QP would
	 * keep its old requests in flight and its old responder state (emulator gap,
	 * reported): meet it here, as a packet arriving in RST would. */
	pthread_mutex_lock(&B.emu->lock);
	{
		struct emu_qp *eq = emu_obj_get(B.emu, EMU_OBJ_QP, qb[q].qpn);

		CHECK(eq != NULL && emu_tq_get(emu_tp_get(B.emu), eq) != NULL);
	}
	pthread_mutex_unlock(&B.emu->lock);
	drain_cq();
	ndone[q] = 0;
	CHECK(qp_connect(&qb[q], A.ip, qb[q].peer_qpn, B_RQ_PSN, A_SQ_PSN) == 0);
	for (int i = 0; i < RQ_DEPTH; i++)
		CHECK(post_recv(&qb[q], (uint64_t)q) == 0);
}

/* Requester mode: B's RC QP (fresh from qp_renew) sends a WRITE, a FETCH_ADD and a READ
 * to A through the driver's data path.  A's link is down, so they stay outstanding. */
static unsigned req_post(uint32_t in_psn)
{
	struct ep *e = &qb[0];
	struct mx5_sq *sq = mx5_qp_sq_state(e->qp);
	uint32_t rlen = (in_psn & REQ_PSN_LONG_READ) ? REQ_READ_LONG : REQ_READ_SHORT;
	uint8_t *end = e->buf + e->len;
	bool fa_first = in_psn & REQ_PSN_FA_FIRST;
	struct ibv_sge sge[3] = {
		{ .addr = (uintptr_t)(e->buf + page), .length = REQ_WRITE_LEN, .lkey = e->lkey },
		{ .addr = (uintptr_t)(end - REQ_READ_LONG - 8), .length = 8, .lkey = e->lkey },
		{ .addr = (uintptr_t)(end - rlen), .length = rlen, .lkey = e->lkey },
	};
	enum ibv_wr_opcode ops[3] = { IBV_WR_RDMA_WRITE, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_RDMA_READ };
	struct ibv_send_wr wr[3], *bad = NULL;

	if (!fa_first) {
		struct ibv_sge t = sge[1];

		sge[1] = sge[2];
		sge[2] = t;
		ops[1] = IBV_WR_RDMA_READ;
		ops[2] = IBV_WR_ATOMIC_FETCH_AND_ADD;
	}

	memset(wr, 0, sizeof(wr));
	for (int i = 0; i < 3; i++) {
		wr[i].wr_id = REQ_WRID | (uint64_t)i;
		wr[i].opcode = ops[i];
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
		if (ops[i] == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr[i].wr.atomic.remote_addr = REQ_RADDR;
			wr[i].wr.atomic.rkey = REQ_RKEY;
			wr[i].wr.atomic.compare_add = 1;
		} else {
			wr[i].wr.rdma.remote_addr = REQ_RADDR;
			wr[i].wr.rdma.rkey = REQ_RKEY;
		}
	}
	CHECK(mx5_post_send(sq, wr, &bad) == 0);
	return 2 + (rlen + 1023) / 1024;   /* PSNs the three requests take */
}

static void recover_and_repost(void)
{
	struct mx5_qp_attr a;
	struct mx5_qp_init_attr ia;

	mx5_device_poll_events(B.dev);
	drain_cq();
	for (int q = 0; q < NQP; q++) {
		CHECK(mx5_qp_query(qb[q].qp, &a, &ia) == 0);
		if (a.qp_state != MX5_QPS_RTS) {
			qp_renew(q);
			nrecovered++;
		}
	}
	for (int q = 0; q < NQP; q++) {
		for (unsigned i = 0; i < ndone[q]; i++)
			if (post_recv(&qb[q], (uint64_t)q) != 0)
				break;   /* full: a completion counted twice costs nothing */
		ndone[q] = 0;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t pkt[EMU_ROCE_MAX_PKT + 8];
	struct emu_roce_ip env;
	struct emu_tp *tp;
	const struct ep *t;
	uint8_t flags;
	unsigned req_npsn = 0;
	size_t n;

	if (size < 1 || size - 1 + EMU_ROCE_ICRC_LEN > EMU_ROCE_MAX_PKT)
		return -1;
	flags = data[0];
	n = size - 1;
	memcpy(pkt, data + 1, n);
	t = &qb[(flags & F_TARGET) == 3 ? 0 : (flags & F_TARGET)];
	if ((flags & F_TARGET) == 3)
		qp_renew(0);   /* the input alone decides what happens: reproducible, and the
				* packet is not just an opcode sequence error behind an open message */
	if (req_mode(flags)) {
		req_npsn = req_post(n >= EMU_ROCE_BTH_LEN ? emu_be24_get(pkt + 9) : 0);
		nreq_runs++;
	}

	pthread_mutex_lock(&B.emu->lock);
	tp = emu_tp_get(B.emu);
	CHECK(tp != NULL);
	if (n >= EMU_ROCE_BTH_LEN) {
		uint8_t op = pkt[0];
		size_t hl = emu_roce_hdr_len(op);
		const struct emu_roce_opinfo *oi = emu_roce_opinfo(op);

		if (!(flags & F_KEEP_QPN))
			emu_be24_put(pkt + 5, t->qpn);                 /* BTH bytes 5..7: DestQP */
		if (flags & F_FIX_HDR) {
			pkt[1] &= 0xf0;                                /* TVer 0 */
			emu_be16_put(pkt + 2, EMU_ROCE_DEFAULT_PKEY);
		}
		if (flags & F_PATCH_PSN) {
			struct emu_qp *qp = emu_obj_get(B.emu, EMU_OBJ_QP, t->qpn);
			struct emu_tq *tq = qp ? emu_tq_get(tp, qp) : NULL;

			if (tq && req_mode(flags)) {
				/* a response: inside B's outstanding PSNs [una, psn_next) */
				uint32_t out = (uint32_t)emu_psn_diff(tq->psn_next, tq->una);

				if (out == req_npsn)
					nreq_full++;
				if (out > 0 && out < 0x800000)
					emu_be24_put(pkt + 9, emu_psn_add(tq->una, (emu_be24_get(pkt + 9) & REQ_PSN_OFF) % out));
			} else if (tq) {
				emu_be24_put(pkt + 9, tq->epsn);       /* BTH bytes 9..11: PSN */
			}
		}
		if (oi && hl && n >= hl) {
			size_t off = EMU_ROCE_BTH_LEN;

			/* extension headers in wire order (IBTA 9.2): DETH, RETH, AtomicETH */
			if (oi->flags & EMU_ROCE_F_DETH) {
				if (flags & F_FIX_HDR)
					emu_be32_put(pkt + off, emu_be24_get(pkt + 5) == 1 ? UV_MAD_GSI_QKEY : UD_QKEY);
				off += EMU_ROCE_DETH_LEN;
			}
			if ((oi->flags & EMU_ROCE_F_RETH) && (flags & F_PATCH_KEYS))
				patch_remote(pkt + off, t);
			if ((oi->flags & EMU_ROCE_F_ATOMICETH) && (flags & F_PATCH_KEYS)) {
				patch_remote(pkt + off, t);
				emu_be64_put(pkt + off, emu_be64_get(pkt + off) & ~7ull);   /* 8-byte aligned */
			}
		}
	}
	emu_roce_ip_init(&env, (flags & F_FOREIGN_SRC) ? A.ip + 100 : A.ip,
			 n >= EMU_ROCE_BTH_LEN && emu_be24_get(pkt + 5) == EMU_ROCE_MCAST_QPN && !(flags & F_FOREIGN_SRC)
				 ? MC_GROUP : B.ip,
			 0xc000 | (uint16_t)(n & 0x3fff), 0);
	emu_icrc_put(pkt + n, emu_roce_icrc(&env, pkt, n) ^ ((flags & F_BAD_ICRC) && !req_mode(flags) ? 0x10u : 0));
	emu_tp_rx_packet(tp, pkt, n + EMU_ROCE_ICRC_LEN, &env);
	emu_resp_flush_acks(tp);   /* the pass's ACKs leave with it, as rx_thread.c sends them */
	pthread_mutex_unlock(&B.emu->lock);

	guards_check();
	if (req_mode(flags)) {
		/* B's own completions first (after RST the driver's ring forgets their wr_ids),
		 * then RST, so nothing stays in flight to time out and retransmit later */
		mx5_device_poll_events(B.dev);
		drain_cq();
		qp_renew(0);
	}
	recover_and_repost();
	return 0;
}
