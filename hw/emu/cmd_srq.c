/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Shared receive queues: CREATE_SRQ (0x700), DESTROY_SRQ (0x701), QUERY_SRQ (0x702),
 * ARM_RQ (0x703), PRM "Shared Receive Queue" / srqc; and the same object in the model
 * of ISSI >= 1, the receive memory pool: CREATE_RMP (0x90c), MODIFY_RMP (0x90d),
 * DESTROY_RMP (0x90e), QUERY_RMP (0x90f), rmpc / wq; and XRC SRQs, an SRQ in an XRC
 * domain with a CQ of its own: CREATE_XRC_SRQ (0x705), DESTROY_XRC_SRQ (0x706),
 * QUERY_XRC_SRQ (0x707), ARM_XRC_SRQ (0x708), PRM "XRC SRQ" / xrc_srqc, at any ISSI.
 * The three share one number space and each command acts on its own kind only.  An
 * XRC SRQ takes receive WQEs from XRC target QPs only (cmd_qp.c st XRC), for the
 * requests whose XRCETH names it (rc_resp.c); Linux's mlx5_ib creates one at every
 * probe (main.c mlx5_ib_dev_res_init, devr->s0) and never posts to it.
 *
 * Which model a function speaks follows its ISSI: Linux
 * drivers/infiniband/hw/mlx5/srq_cmd.c create_srq_split / destroy_srq_split /
 * arm_srq_split / query_srq_split use the SRQ commands only when the function runs
 * ISSI 0 and RMPs otherwise (Linux commit 01949d0109ee: "When working in ISSI > 0
 * mode, the model exposed by the device for XRCs and SRQs is different ... plain SRQs
 * are based on RMP").  The emulator holds a driver to that: CREATE_SRQ at ISSI >= 1
 * and CREATE_RMP at ISSI 0 are refused (bad opcode, WRONG_ISSI_SRQ_MODEL; what
 * firmware answers to the other model is unverified, this is the strict reading).
 *
 * The SRQ limit (PRM srqc.lwm / wq.lwm): one SRQ_RQ_LIMIT event when the WQEs left fall
 * below it, after which the limit is disarmed (rq.c, IBTA 10.2.9.3).  An SRQ's lwm at
 * CREATE_SRQ is armed, ARM_RQ re-arms it; an RMP's is armed only by MODIFY_RMP with
 * bitmask.lwm, as Linux's arm_rmp_cmd sends it for ibv_modify_srq(IBV_SRQ_LIMIT): the
 * value CREATE_RMP carries is recorded, never armed.
 *
 * Rules, as firmware applies them:
 *  - log_srq_size <= log_max_srq_sz and the WQE stride (16 << log_rq_stride) <=
 *    max_wqe_sz_rq (limits, 0x8); lwm (the SRQ limit) no larger than the SRQ;
 *  - pd an existing PD, cqn (when given; XRC SRQs report completions there) an
 *    existing CQ, both held;
 *  - dbr_addr 8-byte aligned and pinned; the page list covers the WQE ring, every page
 *    aligned to the page size and pinned;
 *  - an SRQ a QP uses is in use: DESTROY_SRQ fails with bad resource state (0x9).
 */
#include <errno.h>
#include <string.h>

#include "hw/emu/objects.h"

/* What an SRQ holds while it lives: its PD and its CQ. */
static void srq_holds(struct emu_dev *d, const void *obj, emu_obj_hold_fn op)
{
	const struct emu_srq *s = obj;

	emu_obj_hold(emu_obj_get(d, EMU_OBJ_PD, s->pdn), op);
	if (s->cqn)
		emu_obj_hold(emu_obj_get(d, EMU_OBJ_CQ, s->cqn), op);
	if (s->xrc)
		emu_obj_hold(emu_obj_get(d, EMU_OBJ_XRCD, s->xrcd), op);
}

EMU_QUEUE_KIND(srq, srqn, EMU_OBJ_SRQ);

static int create_srq(struct emu_dev *d, struct emu_cmd *c)
{
	const uint8_t *srqc = PRM_ADDR(create_srq_in, c->in, srq_context_entry);
	const uint8_t *g = emu_gen_caps(d);
	struct emu_srq tmp = { .state = EMU_SRQ_STATE_GOOD };
	uint32_t synd = 0;
	int st;

	if (d->issi)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_OP, PRM_SYND_WRONG_ISSI_SRQ_MODEL);
	if (PRM_GET(create_srq_in, c->in, uid))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_UID);
	tmp.log_size = (uint8_t)PRM_GET(srqc, srqc, log_srq_size);
	tmp.stride = (uint16_t)(16u << PRM_GET(srqc, srqc, log_rq_stride));
	if (g && tmp.log_size > PRM_GET(cmd_hca_cap, g, log_max_srq_sz))
		return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_SIZE_TOO_LARGE);
	if (g && tmp.stride > PRM_GET(cmd_hca_cap, g, max_wqe_sz_rq))
		return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_SIZE_TOO_LARGE);
	tmp.lwm = (uint16_t)PRM_GET(srqc, srqc, lwm);
	if (tmp.lwm > (1u << tmp.log_size))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_SRQ_LIMIT);
	/* XRC domains are not offered: an SRQ here is a plain one */
	if (PRM_GET(srqc, srqc, xrcd))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_RESERVED_NOT_ZERO);
	tmp.pdn = (uint32_t)PRM_GET(srqc, srqc, pd);
	if (!emu_obj_get(d, EMU_OBJ_PD, tmp.pdn))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_PD);
	tmp.cqn = (uint32_t)PRM_GET(srqc, srqc, cqn);
	if (tmp.cqn && !emu_obj_get(d, EMU_OBJ_CQ, tmp.cqn))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_CQN);
	tmp.dbr = PRM_GET(srqc, srqc, dbr_addr);
	st = emu_queue_mem_load(d, c, "CREATE_SRQ", tmp.dbr, PRM_OFF(create_srq_in, pas) / 8,
				(unsigned)PRM_GET(srqc, srqc, log_page_size), (unsigned)PRM_GET(srqc, srqc, page_offset),
				(uint64_t)tmp.stride << tmp.log_size, &tmp.buf, &synd);
	if (st)
		return emu_cmd_fail(c, st, synd);
	tmp.wq_signature = PRM_GET(srqc, srqc, wq_signature);
	tmp.rlky = PRM_GET(srqc, srqc, rlky);
	return emu_queue_adopt(d, c, &srq_kind, &tmp, &tmp.buf);
}

/* An SRQ of the plain kind (CREATE_SRQ or CREATE_RMP), or NULL: the SRQ, RMP and XRC
 * SRQ commands share one number space (Linux keeps all three in one table, srq.c
 * mlx5_init_srq_table), and each command acts on its own kind only. */
static struct emu_srq *plain_srq_get(struct emu_dev *d, uint32_t srqn)
{
	struct emu_srq *s = emu_obj_get(d, EMU_OBJ_SRQ, srqn);

	return s && !s->xrc ? s : NULL;
}

static int destroy_srq(struct emu_dev *d, struct emu_cmd *c)
{
	uint32_t srqn = (uint32_t)PRM_GET(destroy_srq_in, c->in, srqn);

	if (emu_obj_get(d, EMU_OBJ_SRQ, srqn) && !plain_srq_get(d, srqn))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_SRQN);
	return emu_cmd_destroy_obj(d, c, EMU_OBJ_SRQ, PRM_GET(destroy_srq_in, c->in, uid), srqn, PRM_SYND_BAD_SRQN);
}

EMU_CMD_QUERY_HANDLER(srq, srqn, EMU_OBJ_SRQ, PRM_SYND_BAD_SRQN)

/* The fields the SRQ and XRC SRQ contexts share, under their own layout's names (PRM
 * SRQC and XRC_SRQC: only the size field's name differs); the WQE stride is stored as
 * log2(stride / 16). */
#define EMU_SRQ_CTX_ANSWER(layout, ctx, s, size_field)                          \
	do {                                                                     \
		unsigned log_stride_ = 0;                                        \
		while ((16u << log_stride_) < (s)->stride)                       \
			log_stride_++;                                           \
		PRM_SET(layout, ctx, state, (s)->state);                         \
		PRM_SET(layout, ctx, size_field, (s)->log_size);                 \
		PRM_SET(layout, ctx, wq_signature, (s)->wq_signature);           \
		PRM_SET(layout, ctx, rlky, (s)->rlky);                           \
		PRM_SET(layout, ctx, log_rq_stride, log_stride_);                \
		PRM_SET(layout, ctx, cqn, (s)->cqn);                             \
		PRM_SET(layout, ctx, pd, (s)->pdn);                              \
		PRM_SET(layout, ctx, lwm, (s)->lwm);                             \
		PRM_SET(layout, ctx, wqe_cnt, (s)->wqe_cnt);                     \
	} while (0)

static int answer_srq(struct emu_dev *d, struct emu_cmd *c, const struct emu_srq *s)
{
	uint8_t *srqc = PRM_ADDR(query_srq_out, c->out, srq_context_entry);

	(void)d;
	if (s->xrc)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_SRQN);
	EMU_SRQ_CTX_ANSWER(srqc, srqc, s, log_srq_size);
	EMU_QUEUE_MEM_ANSWER(srqc, srqc, s, c, PRM_OFF(query_srq_out, pas) / 8);
	return 0;
}

/* ARM_RQ op_mod 1 (SRQ) at ISSI 0: a new limit, armed (Linux srq_cmd.c arm_srq_cmd). */
static int arm_rq(struct emu_dev *d, struct emu_cmd *c)
{
	struct emu_srq *s;
	uint32_t lwm = (uint32_t)PRM_GET(arm_rq_in, c->in, lwm);

	if (d->issi)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_OP, PRM_SYND_WRONG_ISSI_SRQ_MODEL);
	if (PRM_GET(arm_rq_in, c->in, uid))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_UID);
	if (PRM_GET(arm_rq_in, c->in, op_mod) != 1)   /* MLX5_ARM_RQ_IN_OP_MOD_SRQ */
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_OP_MOD);
	s = plain_srq_get(d, (uint32_t)PRM_GET(arm_rq_in, c->in, srq_number));
	if (!s)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_SRQN);
	if (lwm > (1u << s->log_size))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_SRQ_LIMIT);
	s->lwm = (uint16_t)lwm;
	return 0;
}

/* ---- RMP (ISSI >= 1) ---- */

/* rmpc.state (PRM; Linux MLX5_RMPC_STATE_RDY / _ERR) */
enum { RMPC_STATE_RDY = 0x1, RMPC_STATE_ERR = 0x3 };

/* create_rmp_out.rmpn sits where create_srq_out.srqn does: srq_kind answers both. */
_Static_assert((unsigned)PRM_OFF(create_rmp_out, rmpn) == (unsigned)PRM_OFF(create_srq_out, srqn) &&
	       (unsigned)PRM_WIDTH(create_rmp_out, rmpn) == (unsigned)PRM_WIDTH(create_srq_out, srqn),
	       "rmpn != srqn");

#define RMP_WQ_OFF (PRM_OFF(create_rmp_in, ctx) + PRM_OFF(rmpc, wq))

/* CREATE_RMP as Linux create_rmp_cmd sends it: rmpc.state RDY and a linked-list wq
 * (set_wq: stride, page size, size, page offset, lwm, pd, doorbell record; pas after
 * the wq).  Checked as CREATE_SRQ is. */
static int create_rmp(struct emu_dev *d, struct emu_cmd *c)
{
	const uint8_t *rmpc = PRM_ADDR(create_rmp_in, c->in, ctx);
	const uint8_t *wq = PRM_ADDR(rmpc, rmpc, wq);
	const uint8_t *g = emu_gen_caps(d);
	struct emu_srq tmp = { .state = EMU_SRQ_STATE_GOOD, .rmp = true };
	uint32_t synd = 0;
	int st;

	if (!d->issi)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_OP, PRM_SYND_WRONG_ISSI_SRQ_MODEL);
	if (PRM_GET(create_rmp_in, c->in, uid))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_UID);
	if (PRM_GET(rmpc, rmpc, state) != RMPC_STATE_RDY)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_RMP_STATE);
	if (PRM_GET(wq, wq, wq_type) != 0)   /* linked list: receive WQEs carry a next segment */
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_WQ_TYPE);
	tmp.log_size = (uint8_t)PRM_GET(wq, wq, log_wq_sz);
	if (PRM_GET(wq, wq, log_wq_stride) < 4)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_SIZE_TOO_LARGE);
	tmp.stride = (uint16_t)(1u << PRM_GET(wq, wq, log_wq_stride));
	if (g && tmp.log_size > PRM_GET(cmd_hca_cap, g, log_max_srq_sz))
		return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_SIZE_TOO_LARGE);
	if (g && tmp.stride > PRM_GET(cmd_hca_cap, g, max_wqe_sz_rq))
		return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_SIZE_TOO_LARGE);
	tmp.lwm_created = (uint16_t)PRM_GET(wq, wq, lwm);
	if (tmp.lwm_created > (1u << tmp.log_size))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_SRQ_LIMIT);
	tmp.pdn = (uint32_t)PRM_GET(wq, wq, pd);
	if (!emu_obj_get(d, EMU_OBJ_PD, tmp.pdn))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_PD);
	tmp.dbr = PRM_GET(wq, wq, dbr_addr);
	st = emu_queue_mem_load(d, c, "CREATE_RMP", tmp.dbr, (RMP_WQ_OFF + PRM_OFF(wq, pas)) / 8,
				(unsigned)PRM_GET(wq, wq, log_wq_pg_sz), (unsigned)PRM_GET(wq, wq, page_offset),
				(uint64_t)tmp.stride << tmp.log_size, &tmp.buf, &synd);
	if (st)
		return emu_cmd_fail(c, st, synd);
	tmp.wq_signature = PRM_GET(wq, wq, wq_signature);
	return emu_queue_adopt(d, c, &srq_kind, &tmp, &tmp.buf);
}

static struct emu_srq *rmp_get(struct emu_dev *d, uint32_t rmpn)
{
	struct emu_srq *s = emu_obj_get(d, EMU_OBJ_SRQ, rmpn);

	return s && s->rmp ? s : NULL;
}

/* MODIFY_RMP RDY -> RDY with bitmask.lwm: the new limit, armed (Linux srq_cmd.c
 * arm_rmp_cmd).  No other field of the rmpc may be modified (rmp_bitmask has only
 * lwm). */
static int modify_rmp(struct emu_dev *d, struct emu_cmd *c)
{
	const uint8_t *rmpc = PRM_ADDR(modify_rmp_in, c->in, ctx);
	const uint8_t *bm = PRM_ADDR(modify_rmp_in, c->in, bitmask);
	struct emu_srq *s;
	uint32_t lwm;

	if (PRM_GET(modify_rmp_in, c->in, uid))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_UID);
	s = rmp_get(d, (uint32_t)PRM_GET(modify_rmp_in, c->in, rmpn));
	if (!s)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_SRQN);
	/* rmp_state is the current state, ctx.state the next: RDY both (an RMP in error
	 * is not modified back) */
	if (PRM_GET(modify_rmp_in, c->in, rmp_state) != RMPC_STATE_RDY || s->state != EMU_SRQ_STATE_GOOD)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES_STATE, PRM_SYND_BAD_RMP_STATE);
	if (PRM_GET(rmpc, rmpc, state) != RMPC_STATE_RDY)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_RMP_STATE);
	if (prm_bits_get(bm, 0, 32) || prm_bits_get(bm, 32, 31))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_MODIFY_BITMASK);
	if (!PRM_GET(rmp_bitmask, bm, lwm))
		return 0;
	lwm = (uint32_t)PRM_GET(wq, PRM_ADDR(rmpc, rmpc, wq), lwm);
	if (lwm > (1u << s->log_size))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_SRQ_LIMIT);
	s->lwm = (uint16_t)lwm;
	return 0;
}

static int query_rmp(struct emu_dev *d, struct emu_cmd *c)
{
	const struct emu_srq *s = rmp_get(d, (uint32_t)PRM_GET(query_rmp_in, c->in, rmpn));
	uint8_t *rmpc = PRM_ADDR(query_rmp_out, c->out, rmp_context);
	uint8_t *wq = PRM_ADDR(rmpc, rmpc, wq);
	unsigned log_stride = 0;

	if (!s)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_SRQN);
	while ((1u << log_stride) < s->stride)
		log_stride++;
	PRM_SET(rmpc, rmpc, state, s->state == EMU_SRQ_STATE_GOOD ? RMPC_STATE_RDY : RMPC_STATE_ERR);
	PRM_SET(wq, wq, wq_signature, s->wq_signature);
	PRM_SET(wq, wq, lwm, s->lwm);   /* the armed limit; 0 once the event fired */
	PRM_SET(wq, wq, pd, s->pdn);
	PRM_SET(wq, wq, dbr_addr, s->dbr);
	PRM_SET(wq, wq, hw_counter, s->wqe_cnt);
	PRM_SET(wq, wq, log_wq_stride, log_stride);
	PRM_SET(wq, wq, log_wq_pg_sz, s->buf.log_page - 12u);
	PRM_SET(wq, wq, log_wq_sz, s->log_size);
	PRM_SET(wq, wq, page_offset, s->buf.offset / ((1ull << s->buf.log_page) / 64));
	emu_qbuf_store(&s->buf, c->out, c->outlen,
		       (PRM_OFF(query_rmp_out, rmp_context) + PRM_OFF(rmpc, wq) + PRM_OFF(wq, pas)) / 8);
	return 0;
}

static int destroy_rmp(struct emu_dev *d, struct emu_cmd *c)
{
	uint32_t rmpn = (uint32_t)PRM_GET(destroy_rmp_in, c->in, rmpn);

	if (emu_obj_get(d, EMU_OBJ_SRQ, rmpn) && !rmp_get(d, rmpn))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_SRQN);
	return emu_cmd_destroy_obj(d, c, EMU_OBJ_SRQ, PRM_GET(destroy_rmp_in, c->in, uid), rmpn, PRM_SYND_BAD_SRQN);
}

/* ---- XRC SRQ (any ISSI) ---- */

/* create_xrc_srq_out.xrc_srqn sits where create_srq_out.srqn does: srq_kind answers it. */
_Static_assert((unsigned)PRM_OFF(create_xrc_srq_out, xrc_srqn) == (unsigned)PRM_OFF(create_srq_out, srqn) &&
	       (unsigned)PRM_WIDTH(create_xrc_srq_out, xrc_srqn) == (unsigned)PRM_WIDTH(create_srq_out, srqn),
	       "xrc_srqn != srqn");

static struct emu_srq *xrc_srq_get(struct emu_dev *d, uint32_t srqn)
{
	struct emu_srq *s = emu_obj_get(d, EMU_OBJ_SRQ, srqn);

	return s && s->xrc ? s : NULL;
}

/* xrc_srqc's doorbell record address: db_record_addr_h, then the upper 30 bits of the
 * low word (Linux srq_cmd.c create_xrc_srq_cmd sets both with one MLX5_SET64). */
static uint64_t xrc_dbr(const uint8_t *x)
{
	return PRM_GET(xrc_srqc, x, db_record_addr_h) << 32 | PRM_GET(xrc_srqc, x, db_record_addr_l) << 2;
}

/* CREATE_XRC_SRQ as Linux create_xrc_srq_cmd sends it (the SRQ of devr->s0 that
 * mlx5_ib creates at every probe, main.c mlx5_ib_dev_res_init, and ibv_create_srq_ex of
 * type XRC).  The rules of CREATE_SRQ, and: xrcd an allocated XRC domain and cqn an
 * existing CQ (an XRC SRQ's completions go there, PRM "XRC SRQ": it is not optional),
 * both held; no user memory (umem) here, so dbr_umem_valid and xrc_srq_umem_valid are
 * refused. */
static int create_xrc_srq(struct emu_dev *d, struct emu_cmd *c)
{
	const uint8_t *x = PRM_ADDR(create_xrc_srq_in, c->in, xrc_srq_context_entry);
	const uint8_t *g = emu_gen_caps(d);
	struct emu_srq tmp = { .state = EMU_SRQ_STATE_GOOD, .xrc = true };
	uint32_t synd = 0;
	int st;

	if (PRM_GET(create_xrc_srq_in, c->in, uid))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_UID);
	if (PRM_GET(create_xrc_srq_in, c->in, xrc_srq_umem_valid) || PRM_GET(xrc_srqc, x, dbr_umem_valid))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_RESERVED_NOT_ZERO);
	tmp.log_size = (uint8_t)PRM_GET(xrc_srqc, x, log_xrc_srq_size);
	tmp.stride = (uint16_t)(16u << PRM_GET(xrc_srqc, x, log_rq_stride));
	if (g && tmp.log_size > PRM_GET(cmd_hca_cap, g, log_max_srq_sz))
		return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_SIZE_TOO_LARGE);
	if (g && tmp.stride > PRM_GET(cmd_hca_cap, g, max_wqe_sz_rq))
		return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_SIZE_TOO_LARGE);
	tmp.lwm = (uint16_t)PRM_GET(xrc_srqc, x, lwm);
	if (tmp.lwm > (1u << tmp.log_size))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_SRQ_LIMIT);
	tmp.xrcd = (uint32_t)PRM_GET(xrc_srqc, x, xrcd);
	if (!emu_obj_get(d, EMU_OBJ_XRCD, tmp.xrcd))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_XRCD);
	tmp.pdn = (uint32_t)PRM_GET(xrc_srqc, x, pd);
	if (!emu_obj_get(d, EMU_OBJ_PD, tmp.pdn))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_PD);
	tmp.cqn = (uint32_t)PRM_GET(xrc_srqc, x, cqn);
	if (!emu_obj_get(d, EMU_OBJ_CQ, tmp.cqn))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_CQN);
	tmp.user_index = (uint32_t)PRM_GET(xrc_srqc, x, user_index);
	tmp.dbr = xrc_dbr(x);
	st = emu_queue_mem_load(d, c, "CREATE_XRC_SRQ", tmp.dbr, PRM_OFF(create_xrc_srq_in, pas) / 8,
				(unsigned)PRM_GET(xrc_srqc, x, log_page_size), (unsigned)PRM_GET(xrc_srqc, x, page_offset),
				(uint64_t)tmp.stride << tmp.log_size, &tmp.buf, &synd);
	if (st)
		return emu_cmd_fail(c, st, synd);
	tmp.wq_signature = PRM_GET(xrc_srqc, x, wq_signature);
	tmp.rlky = PRM_GET(xrc_srqc, x, rlky);
	return emu_queue_adopt(d, c, &srq_kind, &tmp, &tmp.buf);
}

static int destroy_xrc_srq(struct emu_dev *d, struct emu_cmd *c)
{
	uint32_t srqn = (uint32_t)PRM_GET(destroy_xrc_srq_in, c->in, xrc_srqn);

	if (emu_obj_get(d, EMU_OBJ_SRQ, srqn) && !xrc_srq_get(d, srqn))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_SRQN);
	return emu_cmd_destroy_obj(d, c, EMU_OBJ_SRQ, PRM_GET(destroy_xrc_srq_in, c->in, uid), srqn, PRM_SYND_BAD_SRQN);
}

static int query_xrc_srq(struct emu_dev *d, struct emu_cmd *c)
{
	const struct emu_srq *s = xrc_srq_get(d, (uint32_t)PRM_GET(query_xrc_srq_in, c->in, xrc_srqn));
	uint8_t *x = PRM_ADDR(query_xrc_srq_out, c->out, xrc_srq_context_entry);

	if (!s)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_SRQN);
	EMU_SRQ_CTX_ANSWER(xrc_srqc, x, s, log_xrc_srq_size);
	PRM_SET(xrc_srqc, x, xrcd, s->xrcd);
	PRM_SET(xrc_srqc, x, user_index, s->user_index);
	PRM_SET(xrc_srqc, x, page_offset, s->buf.offset / ((1ull << s->buf.log_page) / 64));
	PRM_SET(xrc_srqc, x, log_page_size, s->buf.log_page - 12u);
	PRM_SET(xrc_srqc, x, db_record_addr_h, s->dbr >> 32);
	PRM_SET(xrc_srqc, x, db_record_addr_l, (s->dbr & 0xffffffffu) >> 2);
	emu_qbuf_store(&s->buf, c->out, c->outlen, PRM_OFF(query_xrc_srq_out, pas) / 8);
	return 0;
}

/* ARM_XRC_SRQ op_mod 1 (Linux MLX5_ARM_XRC_SRQ_IN_OP_MOD_XRC_SRQ): a new limit, armed
 * (srq_cmd.c arm_xrc_srq_cmd). */
static int arm_xrc_srq(struct emu_dev *d, struct emu_cmd *c)
{
	struct emu_srq *s;
	uint32_t lwm = (uint32_t)PRM_GET(arm_xrc_srq_in, c->in, lwm);

	if (PRM_GET(arm_xrc_srq_in, c->in, uid))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_UID);
	if (PRM_GET(arm_xrc_srq_in, c->in, op_mod) != 1)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_OP_MOD);
	s = xrc_srq_get(d, (uint32_t)PRM_GET(arm_xrc_srq_in, c->in, xrc_srqn));
	if (!s)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_SRQN);
	if (lwm > (1u << s->log_size))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_SRQ_LIMIT);
	s->lwm = (uint16_t)lwm;
	return 0;
}

static const struct emu_cmd_desc cmds[] = {
	EMU_CMDS_OBJ(SRQ, srq),
	EMU_CMD(ARM_RQ, EMU_CMDF_INIT, arm_rq_in, arm_rq_out, arm_rq),
	EMU_CMD(CREATE_RMP, EMU_CMDF_INIT, create_rmp_in, create_rmp_out, create_rmp),
	EMU_CMD(MODIFY_RMP, EMU_CMDF_INIT, modify_rmp_in, modify_rmp_out, modify_rmp),
	EMU_CMD(DESTROY_RMP, EMU_CMDF_INIT, destroy_rmp_in, destroy_rmp_out, destroy_rmp),
	EMU_CMD(QUERY_RMP, EMU_CMDF_INIT, query_rmp_in, query_rmp_out, query_rmp),
	EMU_CMDS_OBJ(XRC_SRQ, xrc_srq),
	EMU_CMD(ARM_XRC_SRQ, EMU_CMDF_INIT, arm_xrc_srq_in, arm_xrc_srq_out, arm_xrc_srq),
};

const struct emu_cmd_area emu_area_srq = { .name = "srq", .cmds = cmds, .ncmds = EMU_NCMDS(cmds) };
