/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Queue counter sets (PRM "Q Counters": ALLOC_Q_COUNTER 0x771, DEALLOC_Q_COUNTER 0x772,
 * QUERY_Q_COUNTER 0x773).  A QP names its set in qpc.counter_set_id (cmd_qp.c keeps it);
 * the transport engines count into it through emu_q_counter_out_of_buffer().  Set 0 is
 * "no set": numbers handed out start at 1 (objtab.c). */
#include <string.h>

#include "hw/emu/emu_dev.h"
#include "hw/emu/objects.h"

struct emu_q_counter {
	uint32_t out_of_buffer;   /* messages dropped, or RNR-NAKed, for lack of a receive WQE */
};

static int alloc_q_counter(struct emu_dev *d, struct emu_cmd *c)
{
	uint32_t id;
	struct emu_q_counter *q = emu_obj_alloc(d, EMU_OBJ_Q_COUNTER, sizeof(*q), NULL, &id);

	if (!q)
		return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_LIMIT_EXCEEDED);
	if (id > 0xff) {        /* counter_set_id is 8 bits wide */
		emu_obj_free(d, EMU_OBJ_Q_COUNTER, id);
		return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_LIMIT_EXCEEDED);
	}
	PRM_SET(alloc_q_counter_out, c->out, counter_set_id, id);
	return 0;
}

static int dealloc_q_counter(struct emu_dev *d, struct emu_cmd *c)
{
	uint32_t id = (uint32_t)PRM_GET(dealloc_q_counter_in, c->in, counter_set_id);

	if (!emu_obj_get(d, EMU_OBJ_Q_COUNTER, id) || emu_obj_free(d, EMU_OBJ_Q_COUNTER, id))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_Q_COUNTER);
	return 0;
}

static int query_q_counter(struct emu_dev *d, struct emu_cmd *c)
{
	uint32_t id = (uint32_t)PRM_GET(query_q_counter_in, c->in, counter_set_id);
	struct emu_q_counter *q = emu_obj_get(d, EMU_OBJ_Q_COUNTER, id);

	/* One function, no eswitch: another vport's counters are not ours to read. */
	if (PRM_GET(query_q_counter_in, c->in, other_vport))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_FUNCTION_ID);
	if (!q)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_Q_COUNTER);
	PRM_SET(query_q_counter_out, c->out, out_of_buffer, q->out_of_buffer);
	if (PRM_GET(query_q_counter_in, c->in, clear))
		memset(q, 0, sizeof(*q));
	return 0;
}

void emu_q_counter_out_of_buffer(struct emu_dev *d, uint8_t counter_set_id)
{
	struct emu_q_counter *q = counter_set_id ? emu_obj_get(d, EMU_OBJ_Q_COUNTER, counter_set_id) : NULL;

	if (q)
		q->out_of_buffer++;
}

static const struct emu_cmd_desc cmds[] = {
	EMU_CMD(ALLOC_Q_COUNTER, EMU_CMDF_INIT, alloc_q_counter_in, alloc_q_counter_out, alloc_q_counter),
	EMU_CMD(DEALLOC_Q_COUNTER, EMU_CMDF_INIT, dealloc_q_counter_in, dealloc_q_counter_out, dealloc_q_counter),
	EMU_CMD(QUERY_Q_COUNTER, EMU_CMDF_INIT, query_q_counter_in, query_q_counter_out, query_q_counter),
};

const struct emu_cmd_area emu_area_q_counter = { .name = "q_counter", .cmds = cmds, .ncmds = EMU_NCMDS(cmds) };
