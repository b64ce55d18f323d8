/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The emulated ConnectX's memory and queue objects: MKeys, CQs, QPs and SRQs (PRM
 * "Memory Key", "Completion Queue", "Queue Pair", "Shared Receive Queue").
 *
 * cmd_mkey.c, cmd_cq.c, cmd_qp.c and cmd_srq.c create them from CREATE_* commands after
 * checking every rule firmware checks; the data-plane engines (queue engines, RoCE
 * transmit/receive) read them through emu_obj_get(d, EMU_OBJ_*, number) and keep their
 * run-time state in the fields marked "engine".  Everything here is in device terms:
 * IOVAs (never VAs), sizes in bytes or log2 as the PRM contexts hold them.
 *
 * References ("in use"): an MKey holds its PD (and, for KLM, every MKey it lists); a CQ
 * its EQ and UAR; an SRQ its PD and CQ; a QP its PD, UAR, send/receive CQs and SRQ.
 * Objects keep the NUMBERS of what they reference and the destructor looks them up
 * again, so teardown (emu_obj_destroy_all, in any order within a type) never touches a
 * freed object.
 */
#ifndef UVERBS_HW_EMU_OBJECTS_H
#define UVERBS_HW_EMU_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/emu_dev.h"

/* emu_obj_ref or emu_obj_unref: what a queue object's holds function applies (below). */
typedef void (*emu_obj_hold_fn)(void *obj);

/* ---- queue buffers described by a page list (cqc/qpc/srqc pas) ---- */

/* A queue's memory: pas entries of one page size, the queue starting `offset` bytes
 * into the first page (cqc/qpc/srqc.page_offset, in units of page_size / 64). */
struct emu_qbuf {
	uint64_t *pas;          /* page IOVAs, each aligned to the page size */
	uint32_t npas;
	uint8_t log_page;       /* page bytes = 1 << log_page (4 KiB << *.log_page_size) */
	uint64_t offset;        /* bytes into pas[0] where the queue starts */
	uint64_t len;           /* queue bytes covered */
};

/* IOVA of byte `off` of the queue.  Entries (64-byte CQEs, WQE basic blocks, receive
 * WQEs) never straddle a page: pages are >= 4 KiB and offsets are 64-byte multiples. */
static inline uint64_t emu_qbuf_iova(const struct emu_qbuf *b, uint64_t off)
{
	off += b->offset;
	return b->pas[off >> b->log_page] + (off & ((1ull << b->log_page) - 1));
}

static inline void emu_qbuf_free(struct emu_qbuf *b)
{
	free(b->pas);
	b->pas = NULL;
	b->npas = 0;
}

/* What CREATE_CQ, CREATE_QP and CREATE_SRQ do alike once the object is checked and
 * filled in: one row per kind of queue object (cmd_cq.c, cmd_qp.c, cmd_srq.c). */
struct emu_queue_kind {
	enum emu_obj_type type;
	size_t size;                 /* sizeof(struct emu_cq), ... */
	size_t num_off;              /* offsetof its own number: emu_cq.cqn, emu_qp.qpn, emu_srq.srqn */
	emu_obj_dtor dtor;
	/* What it holds while it lives (its PD, EQ, CQs, UAR page...): applies op to each,
	 * emu_obj_ref when it is created, emu_obj_unref in its dtor. */
	void (*holds)(struct emu_dev *d, const void *obj, emu_obj_hold_fn op);
	/* The output field its number goes to (PRM_OFF/PRM_WIDTH of create_cq_out.cqn ...). */
	unsigned out_num_off, out_num_width;
};

/* Defines, for the queue object struct emu_<obj> numbered by its field `num` and
 * holding what <obj>_holds lists: <obj>_dtor (drops those references, frees the page
 * list `buf`) and <obj>_kind, whose number emu_queue_adopt answers in
 * create_<obj>_out.<num>.  E.g. EMU_QUEUE_KIND(cq, cqn, EMU_OBJ_CQ). */
#define EMU_QUEUE_KIND(obj, num, obj_type)                                                             \
	static void obj##_dtor(struct emu_dev *d, void *o)                                              \
	{                                                                                               \
		obj##_holds(d, o, emu_obj_unref);                                                       \
		emu_qbuf_free(&((struct emu_##obj *)o)->buf);                                           \
	}                                                                                               \
	static const struct emu_queue_kind obj##_kind = {                                               \
		.type = (obj_type), .size = sizeof(struct emu_##obj),                                   \
		.num_off = offsetof(struct emu_##obj, num), .dtor = obj##_dtor, .holds = obj##_holds,   \
		.out_num_off = PRM_OFF(create_##obj##_out, num),                                        \
		.out_num_width = PRM_WIDTH(create_##obj##_out, num),                                    \
	}

/* The last step of CREATE_CQ/QP/SRQ: the object built and checked in `tmp` (owning the
 * page list `buf` inside it) becomes a live object of kind k, gets its number (also in
 * the command's output) and takes its references.  0, or, when the table is full, the
 * status emu_obj_alloc's callers answer (PRM_CMD_STAT_LIM_ERR / PRM_SYND_LIMIT_EXCEEDED)
 * with the page list freed. */
static inline int emu_queue_adopt(struct emu_dev *d, struct emu_cmd *c, const struct emu_queue_kind *k,
				  const void *tmp, struct emu_qbuf *buf)
{
	uint32_t num;
	void *obj = emu_obj_alloc(d, k->type, k->size, k->dtor, &num);

	if (!obj) {
		emu_qbuf_free(buf);
		return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_LIMIT_EXCEEDED);
	}
	memcpy(obj, tmp, k->size);
	memcpy((uint8_t *)obj + k->num_off, &num, sizeof(num));
	k->holds(d, obj, emu_obj_ref);
	prm_bits_set(c->out, k->out_num_off, k->out_num_width, num);
	return 0;
}

/* Doorbell records (PRM: dbr_addr 8-byte aligned).  CQ: [0] consumer counter,
 * [1] arm word.  QP: [0] receive counter, [1] send counter.  SRQ: [0] receive counter. */
#define EMU_DBR_BYTES 8u
#define EMU_DBR_ALIGN 8u

/* ---- MKey (mkc) ---- */

/* mkc.access_mode (access_mode_4_2 << 2 | access_mode_1_0): PRM "MKey Context". */
enum emu_mkey_mode { EMU_MKEY_PA = 0x0, EMU_MKEY_MTT = 0x1, EMU_MKEY_KLM = 0x2 };

/* One KLM entry of an indirect MKey: byte_count bytes of the MKey `mkey` (the full
 * 32-bit key: index << 8 | variant) starting at its address `addr`. */
struct emu_klm {
	uint32_t byte_count;
	uint32_t mkey;
	uint64_t addr;
};

struct emu_mkey {
	uint32_t index;         /* mkey_index (key >> 8) */
	uint8_t variant;        /* mkc.mkey_7_0: key = index << 8 | variant */
	uint8_t mode;           /* enum emu_mkey_mode */
	bool free;              /* mkc.free: created for UMR, not usable yet */
	bool umr_en;
	/* A peer's SEND with invalidate may free it (emu_mkey_remote_inval_ok): mkc.en_rinval
	 * (PRM "MKey Context", what Linux mlx5_ib sets for type-2 memory windows), or created
	 * free for fast registration (Linux mlx5_set_umr_free_mkey), never a plain region. */
	bool en_rinval;
	bool fastreg;
	bool lr, lw, rr, rw, a; /* access: local read/write, remote read/write, atomic */
	bool length64;          /* covers the whole 2^64 address space */
	uint32_t pdn;
	uint32_t qpn;           /* mkc.qpn, 0xffffff: not bound to a QP */
	uint64_t start;         /* mkc.start_addr: the first virtual address */
	uint64_t len;           /* mkc.len bytes (ignored when length64) */
	uint8_t log_page;       /* mkc.log_page_size (MTT mode): page = 1 << log_page */
	uint32_t octwords;      /* mkc.translations_octword_size */
	/* MTT mode: one IOVA per page of [start & ~(page-1), start + len), in order. */
	uint64_t *mtt;
	uint8_t *mtt_flags;     /* per entry: bit 0 rd_en, bit 1 wr_en (PRM "MTT") */
	bool pg_access;         /* create_mkey_in.pg_access: those bits gate each page's access */
	uint32_t nmtt;
	/* KLM mode: the regions in order; each entry holds a reference on the MKey it
	 * names (dropped by the destructor). */
	struct emu_klm *klm;
	uint32_t nklm;
};

/* Translate [va, va+len) of MKey `key` (full 32-bit key) for an access needing the
 * given rights (EMU_MKEY_ACC_*), inside PD `pdn` (0xffffffff: any PD).  Fills up to
 * max_segs IOVA segments (fewer when pages are contiguous); returns the number of
 * segments, or a negative errno: -ENOENT no such key (or variant mismatch or free),
 * -EACCES rights or PD, -ERANGE outside the MKey, -E2BIG more than max_segs segments. */
enum { EMU_MKEY_ACC_LR = 1, EMU_MKEY_ACC_LW = 2, EMU_MKEY_ACC_RR = 4, EMU_MKEY_ACC_RW = 8,
       EMU_MKEY_ACC_ATOMIC = 16 };
/* UMR (a UMR WQE's mkey context applied to MKey `key`): the fields mkey_mask names
 * (EMU_UMR_MASK_*) take their values from mkc.  0, or -EINVAL (a field not modelled),
 * -ENOENT (no such MKey, or not created with umr_en), -EACCES (rights or PD refused). */
enum { EMU_UMR_MASK_PD = 1u << 7, EMU_UMR_MASK_LR = 1u << 17, EMU_UMR_MASK_LW = 1u << 18,
       EMU_UMR_MASK_RR = 1u << 19, EMU_UMR_MASK_RW = 1u << 20, EMU_UMR_MASK_A = 1u << 21 };
int emu_mkey_umr(struct emu_dev *d, uint32_t key, uint64_t mask, const uint8_t *mkc);
/* Whether a peer's SEND with invalidate may free this MKey (cmd_mkey.c). */
bool emu_mkey_remote_inval_ok(const struct emu_mkey *mk);
int emu_mkey_translate(struct emu_dev *d, uint32_t key, uint32_t pdn, unsigned access, uint64_t va,
		       uint64_t len, struct emu_iova_seg *segs, unsigned max_segs);

/* ---- CQ (cqc) ---- */

/* cqc.st: arm state (PRM "Completion Queue Context"). */
enum { EMU_CQ_ST_SOLICITED_ARMED = 0x6, EMU_CQ_ST_ARMED = 0x9, EMU_CQ_ST_FIRED = 0xa };
/* cqc.status */
enum { EMU_CQ_STATUS_OK = 0x0, EMU_CQ_STATUS_OVERFLOW = 0x9, EMU_CQ_STATUS_WRITE_FAIL = 0xa };

struct emu_cq {
	uint32_t cqn;
	uint32_t eqn;           /* cqc.c_eqn_or_apu_element */
	uint32_t uar;           /* cqc.uar_page (arming doorbells come through it) */
	uint8_t log_size;       /* entries = 1 << log_size */
	uint16_t cqe_bytes;     /* 64 (cqe_sz 0) or 128 (cqe_sz 1) */
	bool oi;                /* overrun ignore */
	bool cc;                /* collapsed CQ: every CQE written at index 0 */
	uint8_t cq_period_mode; /* 0: timer restarts on event, 1: on CQE */
	uint16_t cq_period;     /* moderation period, 1 us units */
	uint16_t cq_max_count;  /* moderation: CQEs before an event */
	uint64_t dbr;           /* doorbell record IOVA */
	struct emu_qbuf buf;
	/* engine */
	uint8_t st;             /* EMU_CQ_ST_* (arm state) */
	uint8_t status;         /* EMU_CQ_STATUS_* */
	uint32_t pi;            /* CQEs written, free running (producer_counter) */
	uint32_t last_notified; /* last_notified_index */
	uint32_t last_solicit;  /* last_solicit_index */
	uint32_t arm_sn;        /* arm sequence number of the last arm doorbell */
};

/* ---- SRQ (srqc) ---- */

enum { EMU_SRQ_STATE_GOOD = 0x0, EMU_SRQ_STATE_ERROR = 0x1 };

struct emu_srq {
	uint32_t srqn;
	uint32_t pdn;
	uint32_t cqn;           /* srqc.cqn (0: none) */
	uint8_t log_size;       /* WQEs = 1 << log_size */
	uint16_t stride;        /* receive WQE bytes: 16 << srqc.log_rq_stride */
	bool wq_signature, rlky;
	uint16_t lwm;           /* armed limit watermark (SRQ_RQ_LIMIT event when crossed; 0: disarmed) */
	bool rmp;               /* created as an RMP (ISSI >= 1, cmd_srq.c) */
	bool xrc;               /* created by CREATE_XRC_SRQ: in XRC domain `xrcd` */
	uint32_t xrcd;          /* xrc_srqc.xrcd (XRC SRQs only) */
	uint32_t user_index;    /* xrc_srqc.user_index, given back by QUERY_XRC_SRQ */
	uint16_t lwm_created;   /* an RMP's wq.lwm at CREATE_RMP: recorded, not armed */
	uint64_t dbr;
	struct emu_qbuf buf;
	/* engine */
	uint8_t state;          /* EMU_SRQ_STATE_* */
	uint16_t wqe_cnt;       /* WQEs consumed (srqc.wqe_cnt) */
	uint32_t head;          /* next WQE index in the linked list */
};

/* ---- QP (qpc) ---- */

/* qpc.state (PRM "QP Context"; Linux MLX5_QP_STATE_*) */
enum emu_qp_state {
	EMU_QP_RST = 0x0, EMU_QP_INIT = 0x1, EMU_QP_RTR = 0x2, EMU_QP_RTS = 0x3,
	EMU_QP_SQER = 0x4, EMU_QP_SQD = 0x5, EMU_QP_ERR = 0x6
};
/* qpc.st */
enum { EMU_QP_ST_RC = 0x0, EMU_QP_ST_UC = 0x1, EMU_QP_ST_UD = 0x2 };
/* qpc.st XRC (Linux mlx5_ifc.h MLX5_QPC_ST_XRC): an XRC initiator (a send queue whose
 * WQEs name the remote XRC SRQ) or, with no_sq, an XRC target, which receives into the
 * XRC SRQ each request's XRCETH names (cmd_qp.c, sq_engine.c, rc_resp.c) */
#define EMU_QP_ST_XRC 0x3
/* qpc.st QP1 (Linux mlx5_ifc.h MLX5_QP_ST_QP1): the GSI QP, kept as UD with `gsi` set */
#define EMU_QP_ST_QP1 0x8
/* qpc.st REG_UMR (Linux mlx5_ifc.h MLX5_QP_ST_REG_UMR): the UMR QP, kept as RC with `umr` set */
#define EMU_QP_ST_REG_UMR 0xc
/* qpc.rq_type (Linux MLX5_NON_ZERO_RQ, MLX5_SRQ_RQ, MLX5_ZERO_LEN_RQ) */
enum { EMU_RQ_REGULAR = 0x0, EMU_RQ_SRQ = 0x1, EMU_RQ_ZERO = 0x3 };
/* qpc.pm_state */
enum { EMU_PM_ARMED = 0x0, EMU_PM_REARM = 0x1, EMU_PM_MIGRATED = 0x3 };

/* The primary address path (ads) as RoCE v2 uses it. */
struct emu_path {
	bool grh;
	uint16_t pkey_index;
	uint8_t vhca_port_num;
	uint8_t ack_timeout;    /* local ACK timeout: 4.096 us * 2^ack_timeout (0: infinite) */
	uint8_t src_addr_index; /* GID index (RoCE address table) */
	uint8_t stat_rate;
	uint8_t hop_limit;
	uint8_t tclass;
	uint32_t flow_label;
	uint8_t rgid[16];       /* remote GID (IPv4-mapped for RoCE v2 over IPv4) */
	uint8_t dscp, ecn;
	uint16_t udp_sport;
	uint8_t eth_prio, sl;
	uint8_t rmac[6];
};

struct emu_qp {
	uint32_t qpn;
	uint8_t st;             /* EMU_QP_ST_* */
	uint8_t state;          /* enum emu_qp_state */
	uint8_t pm_state;
	uint32_t pdn;
	uint32_t uar;
	uint32_t user_index;
	uint8_t lag_tx_port_affinity;
	uint8_t counter_set_id;
	/* queues: one buffer, receive queue first, then the send queue (PRM) */
	struct emu_qbuf buf;
	uint64_t dbr;           /* [0] receive counter, [1] send counter (big-endian) */
	bool no_sq;
	uint8_t log_sq_size;    /* send queue: 1 << log_sq_size basic blocks of 64 bytes */
	uint8_t rq_type;        /* EMU_RQ_* */
	uint8_t log_rq_size;    /* receive queue: 1 << log_rq_size WQEs ... */
	uint16_t rq_stride;     /* ... of rq_stride bytes (16 << qpc.log_rq_stride) */
	uint64_t sq_offset;     /* send queue's first byte in buf (= receive queue bytes) */
	uint64_t sq_bytes, rq_bytes;
	uint32_t cqn_snd, cqn_rcv;
	uint32_t srqn;          /* rq_type SRQ */
	uint32_t xrcd;          /* st XRC: its XRC domain (held) */
	bool wq_signature, rlky;
	bool fre;               /* qpc.fre: UMR WQEs allowed (sq_engine.c) */
	bool gsi;               /* created as QP1: receives packets for QPN 1, sends as QPN 1 */
	bool block_lb_mc;       /* qpc.block_lb_mc: no copy of its own multicast sends */
	bool umr;               /* created as REG_UMR: UMR (and NOP) WQEs only, no peer */
	/* transport attributes, as the transitions set them */
	uint8_t mtu;            /* qpc.mtu: 1..5 = 256..4096 bytes */
	uint8_t log_msg_max;
	uint32_t remote_qpn;
	uint32_t q_key;
	bool rre, rwe, rae;     /* remote read/write/atomic enables (responder) */
	uint8_t atomic_mode;
	uint8_t log_sra_max;    /* outstanding RDMA READ/atomic as requester: 1 << */
	uint8_t log_rra_max;    /* ... as responder */
	uint8_t retry_count;
	uint8_t rnr_retry;      /* 7: infinite */
	uint8_t min_rnr_nak;    /* RNR NAK timer code we send as responder */
	uint8_t log_ack_req_freq;
	uint32_t next_send_psn;
	uint32_t next_rcv_psn;
	struct emu_path pri;
	bool alt_valid;         /* secondary path given (kept, not used: no APM) */
	/* engine: run-time state the queue engines and RoCE keep; all of it starts at
	 * zero on CREATE_QP and 2RST_QP (emu_qp_reset_engine) */
	struct emu_qp_engine {
		uint32_t sq_pi;         /* send WQE basic blocks consumed (hw_sq_wqebb_counter) */
		uint32_t rq_pi;         /* receive WQEs consumed (hw_rq_counter) */
		uint32_t last_acked_psn;
		uint32_t ssn;           /* send sequence number */
		uint32_t rmsn;          /* responder message sequence number */
		uint8_t cur_retry_count, cur_rnr_retry;
		bool last_wqe_reached;  /* "Last WQE Reached" posted for this stay in the error state */
		uint32_t xrc_srqn;      /* st XRC: the XRC SRQ the request in hand named (rc_resp.c) */
	} eng;
};

/* The SRQ a QP's receive WQEs come from: an XRC target QP's is the one the request's
 * XRCETH named (IBTA 9.3.7), checked by rc_resp.c; any other QP's is its own. */
static inline bool emu_qp_reliable(const struct emu_qp *qp)
{
	return qp->st == EMU_QP_ST_RC || qp->st == EMU_QP_ST_XRC;
}

static inline uint32_t emu_qp_rq_srqn(const struct emu_qp *qp)
{
	return qp->st == EMU_QP_ST_XRC ? qp->eng.xrc_srqn : qp->srqn;
}

/* Reset what the queues and transport keep at run time (2RST_QP; CREATE_QP). */
static inline void emu_qp_reset_engine(struct emu_qp *qp)
{
	qp->eng = (struct emu_qp_engine){ 0 };
}

/* A QP on an SRQ entered the error state: IBTA's affiliated event "Last WQE Reached"
 * tells software it will take no further WQE from the SRQ.  Once per stay in the error
 * state, whether a failure (transport) or a command (2ERR_QP) put it there. */
void emu_qp_srq_last_wqe(struct emu_dev *d, struct emu_qp *qp);

/* ---- helpers shared by the handlers (static: each handler file is self-contained) ---- */

/* What a queue object holds while it lives (its PD, EQ, CQs, UAR page...) is listed once,
 * in a function of its handler file that applies `op` to each: emu_obj_ref when the
 * object is created, emu_obj_unref in its dtor.  One that is not found is skipped. */
static inline void emu_obj_hold(void *obj, emu_obj_hold_fn op)
{
	if (obj)
		op(obj);
}

/* Unreference object `id` of type t if it (still) exists: destructors use numbers. */
static inline void emu_obj_unref_id(struct emu_dev *d, enum emu_obj_type t, uint32_t id)
{
	void *o = emu_obj_get(d, t, id);

	if (o)
		emu_obj_unref(o);
}

/* Capability block values the handlers check against (current values: what the
 * driver set with SET_HCA_CAP, or the defaults). */
static inline const uint8_t *emu_gen_caps(struct emu_dev *d)
{
	const uint8_t *g = emu_cap(d, PRM_CAP_GENERAL_DEVICE, 1);

	return g ? g : emu_cap(d, PRM_CAP_GENERAL_DEVICE, 0);
}

/* Load a queue's page list from the command input at byte pas_off: the queue of `len`
 * bytes starts page_offset * (page / 64) bytes into the first page of 4 KiB <<
 * log_page_size_4k.  Every entry must be aligned to the page size and the part of each
 * page the queue covers must be pinned in the IOMMU.  Returns 0 or a firmware status
 * (syndrome in *synd); on success b->pas is malloc'd (emu_qbuf_free). */
static inline int emu_qbuf_load(struct emu_dev *d, const struct emu_cmd *c, size_t pas_off, const char *what,
				unsigned log_page_size_4k, unsigned page_offset, uint64_t len, struct emu_qbuf *b,
				uint32_t *synd)
{
	uint64_t page, need;

	b->pas = NULL;
	b->npas = 0;
	b->log_page = (uint8_t)(12 + log_page_size_4k);
	page = 1ull << b->log_page;
	b->offset = page_offset * (page / 64);
	b->len = len;
	need = (b->offset + len + page - 1) >> b->log_page;
	if (!len)
		return 0;
	if (need > (c->inlen - pas_off) / 8) {
		*synd = PRM_SYND_INPUT_TOO_SHORT;
		return PRM_CMD_STAT_BAD_INP_LEN;
	}
	b->pas = calloc(need, sizeof(*b->pas));
	if (!b->pas) {
		*synd = PRM_SYND_NO_RESOURCES;
		return PRM_CMD_STAT_NO_RES;
	}
	b->npas = (uint32_t)need;
	for (uint64_t i = 0; i < need; i++) {
		/* pas[] is an array of 64-bit big-endian page addresses (mlx5_ifc cmd_pas) */
		uint64_t iova = prm_bits_get64(c->in + pas_off, (unsigned)(i * 64));
		uint64_t lo = i == 0 ? b->offset : 0;
		uint64_t hi = (i + 1) * page > b->offset + len ? b->offset + len - i * page : page;

		b->pas[i] = iova;
		if (iova & (page - 1)) {
			emu_drverr(d, "%s: page %llu of the queue at IOVA 0x%llx not aligned to its %llu-byte page",
				   what, (unsigned long long)i, (unsigned long long)iova, (unsigned long long)page);
			emu_qbuf_free(b);
			*synd = PRM_SYND_MTT_NOT_ALIGNED;
			return PRM_CMD_STAT_BAD_PARAM;
		}
		if (!emu_iova_mapped(d, iova + lo, hi - lo)) {
			emu_drverr(d, "%s: page %llu of the queue at IOVA 0x%llx is not pinned", what,
				   (unsigned long long)i, (unsigned long long)iova);
			emu_qbuf_free(b);
			*synd = PRM_SYND_BUFFER_NOT_PINNED;
			return PRM_CMD_STAT_BAD_PARAM;
		}
	}
	return 0;
}

/* A doorbell record: 8-byte aligned and pinned. */
static inline int emu_dbr_check(struct emu_dev *d, const char *what, uint64_t dbr, uint32_t *synd)
{
	if ((dbr & (EMU_DBR_ALIGN - 1)) || !emu_iova_mapped(d, dbr, EMU_DBR_BYTES)) {
		emu_drverr(d, "%s: doorbell record at IOVA 0x%llx %s", what, (unsigned long long)dbr,
			   (dbr & (EMU_DBR_ALIGN - 1)) ? "not 8-byte aligned" : "not pinned");
		*synd = PRM_SYND_BAD_DOORBELL_RECORD;
		return PRM_CMD_STAT_BAD_PARAM;
	}
	return 0;
}

/* A new queue's memory (CREATE_QP, CREATE_SRQ): its doorbell record at dbr, then its
 * page list (emu_qbuf_load's arguments).  0 or a firmware status (syndrome in *synd). */
static inline int emu_queue_mem_load(struct emu_dev *d, const struct emu_cmd *c, const char *what, uint64_t dbr,
				     size_t pas_off, unsigned log_page_size_4k, unsigned page_offset, uint64_t len,
				     struct emu_qbuf *b, uint32_t *synd)
{
	int st = emu_dbr_check(d, what, dbr, synd);

	return st ? st : emu_qbuf_load(d, c, pas_off, what, log_page_size_4k, page_offset, len, b, synd);
}

/* Write a queue's page list into a command output at byte off, as many entries as
 * fit in outlen. */
static inline void emu_qbuf_store(const struct emu_qbuf *b, uint8_t *out, size_t outlen, size_t off)
{
	for (uint32_t i = 0; i < b->npas && off + (i + 1) * 8 <= outlen; i++)
		prm_bits_set64(out + off, i * 64, b->pas[i]);
}

/* QUERY_CQ/QP/SRQ: the queue's memory as CREATE gave it.  cqc, qpc and srqc name these
 * fields alike: page_offset (in units of page / 64), log_page_size (pages of 4 KiB <<
 * it) and dbr_addr; the page list goes into the output at byte pas_off.  `q` is the
 * emu_cq/emu_qp/emu_srq, `c` the command. */
#define EMU_QUEUE_MEM_ANSWER(ctx_layout, ctx, q, c, pas_off)                                           \
	do {                                                                                            \
		PRM_SET(ctx_layout, ctx, page_offset, (q)->buf.offset / ((1ull << (q)->buf.log_page) / 64)); \
		PRM_SET(ctx_layout, ctx, log_page_size, (q)->buf.log_page - 12u);                       \
		PRM_SET(ctx_layout, ctx, dbr_addr, (q)->dbr);                                           \
		emu_qbuf_store(&(q)->buf, (c)->out, (c)->outlen, (pas_off));                            \
	} while (0)

#endif
