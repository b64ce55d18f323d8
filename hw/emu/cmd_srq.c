/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Shared receive queues: CREATE_SRQ (0x700), DESTROY_SRQ (0x701), QUERY_SRQ (0x702),
 * PRM "Shared Receive Queue" / srqc.
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
}

EMU_QUEUE_KIND(srq, srqn, EMU_OBJ_SRQ);

static int create_srq(struct emu_dev *d, struct emu_cmd *c)
{
	const uint8_t *srqc = PRM_ADDR(create_srq_in, c->in, srq_context_entry);
	const uint8_t *g = emu_gen_caps(d);
	struct emu_srq tmp = { .state = EMU_SRQ_STATE_GOOD };
	uint32_t synd = 0;
	int st;

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

EMU_CMD_DESTROY_HANDLER(srq, srqn, EMU_OBJ_SRQ, PRM_SYND_BAD_SRQN)
EMU_CMD_QUERY_HANDLER(srq, srqn, EMU_OBJ_SRQ, PRM_SYND_BAD_SRQN)

static int answer_srq(struct emu_dev *d, struct emu_cmd *c, const struct emu_srq *s)
{
	uint8_t *srqc = PRM_ADDR(query_srq_out, c->out, srq_context_entry);
	unsigned log_stride = 0;

	(void)d;
	while ((16u << log_stride) < s->stride)
		log_stride++;
	PRM_SET(srqc, srqc, state, s->state);
	PRM_SET(srqc, srqc, log_srq_size, s->log_size);
	PRM_SET(srqc, srqc, wq_signature, s->wq_signature);
	PRM_SET(srqc, srqc, rlky, s->rlky);
	PRM_SET(srqc, srqc, log_rq_stride, log_stride);
	PRM_SET(srqc, srqc, cqn, s->cqn);
	PRM_SET(srqc, srqc, pd, s->pdn);
	PRM_SET(srqc, srqc, lwm, s->lwm);
	PRM_SET(srqc, srqc, wqe_cnt, s->wqe_cnt);
	EMU_QUEUE_MEM_ANSWER(srqc, srqc, s, c, PRM_OFF(query_srq_out, pas) / 8);
	return 0;
}

static const struct emu_cmd_desc cmds[] = {
	EMU_CMDS_OBJ(SRQ, srq),
};

const struct emu_cmd_area emu_area_srq = { .name = "srq", .cmds = cmds, .ncmds = EMU_NCMDS(cmds) };
