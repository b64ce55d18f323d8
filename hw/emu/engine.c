/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A device daemon's client engine (emu.h, "a device daemon's client engine";
 * docs/architecture.md, "Several processes: uvd").
 *
 * tools/uvd owns the emulated NIC: its device allocates every number and runs every
 * command, after checking that the client owns what the command names.  A client that
 * runs the data plane itself keeps an engine: a device of its own in its own process,
 * created with cfg.engine (initialized at once, no command queue) and with the UDP
 * socket the daemon bound for it.  Each command the daemon ran with success is applied
 * here too, so the engine holds the same PDs, MKeys, CQs, SRQs and QPs under the same
 * numbers, and the IOVAs the commands and WQEs carry reach the client's memory
 * (emu_iommu_map_at).  The client's doorbells then go to the engine's BAR hook and its
 * CQ polls take arrivals off the engine's socket, as in one process: no daemon thread
 * between a post and the wire.  An engine reaches nothing but its own process's memory,
 * so a client that lies to it harms itself only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/emu_dev.h"

/* Commands that create an object: the number the daemon gave is the engine's too
 * (objtab.c force_id); and the command that destroys it, which the daemon gets when
 * the engine refuses the creation (emu_engine_undo). */
static const struct engine_num {
	uint16_t opcode;
	enum emu_obj_type type;
	unsigned off, width;           /* the number in the output */
	uint16_t undo;                 /* its DESTROY / DEALLOC */
	unsigned undo_off, undo_width; /* the number in that one's input */
} engine_nums[] = {
#define NUM(op, t, layout, field, undo, ulayout, ufield)                                                   \
	{ PRM_CMD_OP_##op, EMU_OBJ_##t, PRM_OFF(layout, field), PRM_WIDTH(layout, field), PRM_CMD_OP_##undo, \
	  PRM_OFF(ulayout, ufield), PRM_WIDTH(ulayout, ufield) }
	NUM(CREATE_CQ, CQ, create_cq_out, cqn, DESTROY_CQ, destroy_cq_in, cqn),
	NUM(CREATE_QP, QP, create_qp_out, qpn, DESTROY_QP, destroy_qp_in, qpn),
	NUM(CREATE_SRQ, SRQ, create_srq_out, srqn, DESTROY_SRQ, destroy_srq_in, srqn),
	/* the SRQ of a function at ISSI 1 (cmd_srq.c) */
	NUM(CREATE_RMP, SRQ, create_rmp_out, rmpn, DESTROY_RMP, destroy_rmp_in, rmpn),
	NUM(CREATE_MKEY, MKEY, create_mkey_out, mkey_index, DESTROY_MKEY, destroy_mkey_in, mkey_index),
	NUM(ALLOC_PD, PD, alloc_pd_out, pd, DEALLOC_PD, dealloc_pd_in, pd),
	NUM(ALLOC_UAR, UAR, alloc_uar_out, uar, DEALLOC_UAR, dealloc_uar_in, uar),
	NUM(ALLOC_Q_COUNTER, Q_COUNTER, alloc_q_counter_out, counter_set_id, DEALLOC_Q_COUNTER, dealloc_q_counter_in,
	    counter_set_id),
#undef NUM
};

/* Every other command the engine runs: the rest of the objects' lives, and the RoCE
 * address table (the client's own address, programmed by its driver).  Only what a
 * daemon lets a client send and the emulator has a handler for (tests/emu/
 * test_engine.c checks the handlers). */
static const uint16_t engine_runs[] = {
	PRM_CMD_OP_DESTROY_CQ, PRM_CMD_OP_QUERY_CQ, PRM_CMD_OP_MODIFY_CQ,
	PRM_CMD_OP_DESTROY_QP, PRM_CMD_OP_QUERY_QP, PRM_CMD_OP_RST2INIT_QP, PRM_CMD_OP_INIT2INIT_QP,
	PRM_CMD_OP_INIT2RTR_QP, PRM_CMD_OP_RTR2RTS_QP, PRM_CMD_OP_RTS2RTS_QP, PRM_CMD_OP_2ERR_QP, PRM_CMD_OP_2RST_QP,
	PRM_CMD_OP_DESTROY_SRQ, PRM_CMD_OP_QUERY_SRQ,
	PRM_CMD_OP_DESTROY_RMP, PRM_CMD_OP_QUERY_RMP, PRM_CMD_OP_MODIFY_RMP,
	PRM_CMD_OP_DESTROY_MKEY, PRM_CMD_OP_QUERY_MKEY,
	PRM_CMD_OP_DEALLOC_PD, PRM_CMD_OP_DEALLOC_UAR,
	PRM_CMD_OP_DEALLOC_Q_COUNTER, PRM_CMD_OP_QUERY_Q_COUNTER,
	PRM_CMD_OP_SET_ROCE_ADDRESS, PRM_CMD_OP_QUERY_ROCE_ADDRESS, PRM_CMD_OP_QUERY_NIC_VPORT_CONTEXT,
	/* multicast groups: the engine places its QPs' receives, so it joins their groups
	 * on the wire (cmd_mcg.c; the daemon's device keeps the table and joins nothing) */
	PRM_CMD_OP_ATTACH_TO_MCG, PRM_CMD_OP_DETACH_FROM_MCG,
};

size_t emu_engine_opcodes(uint16_t *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < sizeof(engine_nums) / sizeof(engine_nums[0]); i++)
		if (n < max)
			out[n++] = engine_nums[i].opcode;
	for (size_t i = 0; i < sizeof(engine_runs) / sizeof(engine_runs[0]); i++)
		if (n < max)
			out[n++] = engine_runs[i];
	return n;
}

static const struct engine_num *engine_num_of(uint16_t opcode)
{
	for (size_t i = 0; i < sizeof(engine_nums) / sizeof(engine_nums[0]); i++)
		if (engine_nums[i].opcode == opcode)
			return &engine_nums[i];
	return NULL;
}

size_t emu_engine_undo(const void *in, const void *ref_out, void *undo, size_t undolen)
{
	const struct engine_num *num = engine_num_of((uint16_t)PRM_GET(cmd_in, (const uint8_t *)in, opcode));

	if (!num || undolen < 16)
		return 0;
	memset(undo, 0, 16);
	PRM_SET(cmd_in, (uint8_t *)undo, opcode, num->undo);
	prm_bits_set(undo, num->undo_off, num->undo_width, prm_bits_get(ref_out, num->off, num->width));
	return 16;
}

int emu_engine_answers(uint16_t opcode)
{
	/* what the data plane changes (a QP moved to ERR by a failed WQE, out_of_buffer)
	 * or what is the client's own (its address, and the MAC and GUIDs it gives) */
	return opcode == PRM_CMD_OP_QUERY_QP || opcode == PRM_CMD_OP_QUERY_Q_COUNTER ||
	       opcode == PRM_CMD_OP_QUERY_SRQ || opcode == PRM_CMD_OP_QUERY_RMP || opcode == PRM_CMD_OP_QUERY_CQ ||
	       opcode == PRM_CMD_OP_QUERY_ROCE_ADDRESS || opcode == PRM_CMD_OP_QUERY_NIC_VPORT_CONTEXT;
}

static bool engine_runs_op(uint16_t opcode)
{
	for (size_t i = 0; i < sizeof(engine_runs) / sizeof(engine_runs[0]); i++)
		if (engine_runs[i] == opcode)
			return true;
	return false;
}

/* The function's own state the engine keeps in step with: capabilities (UAR page
 * size, uar_4k, limits the handlers check) and the port's MTU (segmentation). */
static int engine_learn(struct emu_dev *d, uint16_t opcode, uint16_t op_mod, const uint8_t *out, size_t outlen)
{
	if (opcode == PRM_CMD_OP_QUERY_HCA_CAP && outlen >= PRM_SIZE(query_hca_cap_out)) {
		uint8_t *cap = emu_cap(d, (op_mod >> 1) & 0x7fff, op_mod & 1);

		if (cap)
			memcpy(cap, PRM_ADDR(query_hca_cap_out, (uint8_t *)(uintptr_t)out, capability), EMU_CAP_BYTES);
		return 1;
	}
	if (opcode == PRM_CMD_OP_QUERY_NIC_VPORT_CONTEXT && outlen >= PRM_SIZE(query_nic_vport_context_out)) {
		const uint8_t *ctx = PRM_ADDR(query_nic_vport_context_out, (uint8_t *)(uintptr_t)out, nic_vport_context);
		uint16_t mtu = (uint16_t)PRM_GET(nic_vport_context, ctx, mtu);

		/* the port's settings are the daemon's; then the engine answers, with its
		 * own MAC and GUIDs, which its address gives (cmd_vport.c) */
		if (mtu)
			d->mtu = mtu;
		d->roce_en = PRM_GET(nic_vport_context, ctx, roce_en) != 0;
		return 0;
	}
	return 0;
}

int emu_engine_cmd(struct emu_dev *d, const void *in, size_t inlen, const void *ref_out, void *local_out,
		   size_t outlen, uint8_t *status)
{
	const struct engine_num *num = NULL;
	struct emu_cmd c;
	int hang = 0;
	uint8_t *ibuf, *obuf;
	int rc;

	*status = 0;
	if (!d || !in || inlen < 8 || !ref_out || outlen < 16)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.opcode = (uint16_t)PRM_GET(cmd_in, (const uint8_t *)in, opcode);
	c.op_mod = (uint16_t)PRM_GET(cmd_in, (const uint8_t *)in, op_mod);
	if (!d->cfg.engine)
		return -EINVAL;
	num = engine_num_of(c.opcode);
	pthread_mutex_lock(&d->lock);
	rc = engine_learn(d, c.opcode, c.op_mod, ref_out, outlen);
	pthread_mutex_unlock(&d->lock);
	if (rc || (!num && !engine_runs_op(c.opcode)))
		return 0;
	if (!emu_cmd_find(c.opcode))
		return 0;
	/* handlers may read any field of their fixed layouts (EMU_CMD_MIN_BUF) */
	ibuf = calloc(1, inlen > EMU_CMD_MIN_BUF ? inlen : EMU_CMD_MIN_BUF);
	obuf = calloc(1, outlen > EMU_CMD_MIN_BUF ? outlen : EMU_CMD_MIN_BUF);
	if (!ibuf || !obuf) {
		free(ibuf);
		free(obuf);
		return -ENOMEM;
	}
	memcpy(ibuf, in, inlen);
	c.in = ibuf;
	c.inlen = inlen;
	c.out = obuf;
	c.outlen = outlen;
	pthread_mutex_lock(&d->lock);
	if (num) {
		uint32_t n = (uint32_t)prm_bits_get(ref_out, num->off, num->width);

		d->obj[num->type].force = true;
		/* a UAR's number is its index in the driver's units (uar_4k) */
		d->obj[num->type].force_id = num->type == EMU_OBJ_UAR ? emu_uar_obj_of(d, n) : n;
	}
	/* the checks and fault rules every command meets (so tests can make an engine
	 * refuse what its daemon did); a hang is a refusal: nothing waits on an engine */
	rc = emu_cmd_dispatch(d, &c, &hang);
	if (hang)
		rc = emu_cmd_fail(&c, PRM_CMD_STAT_INT_ERR, 0);
	if (num)
		d->obj[num->type].force = false;
	if (rc)
		emu_log(d, EMU_LOG_WARN, "engine: %s (0x%x) failed here (status 0x%x, syndrome 0x%x) after the daemon ran it",
			prm_opcode_name(c.opcode), c.opcode, rc, c.syndrome);
	pthread_mutex_unlock(&d->lock);
	*status = (uint8_t)rc;
	if (local_out)
		memcpy(local_out, obuf, outlen);
	free(ibuf);
	free(obuf);
	return 1;
}

void emu_set_event_sink(struct emu_dev *d, emu_event_sink_fn fn, void *arg)
{
	pthread_mutex_lock(&d->lock);
	d->sink = fn;
	d->sink_arg = arg;
	pthread_mutex_unlock(&d->lock);
}

int emu_event_object(uint8_t type, const uint8_t *data, uint32_t *num, uint8_t *syndrome)
{
	*num = 0;
	*syndrome = 0;
	switch (type) {
	case PRM_EVENT_COMP:
		*num = (uint32_t)PRM_GET(comp_event, data, cq_number);
		return 1;
	case PRM_EVENT_CQ_ERROR:
		*num = (uint32_t)PRM_GET(cq_error, data, cqn);
		*syndrome = (uint8_t)PRM_GET(cq_error, data, syndrome);
		break;
	case PRM_EVENT_PORT_CHANGE:
		*num = (uint32_t)PRM_GET(port_state_change_event, data, port_num);
		break;
	default:
		/* QP, SQ, RQ and SRQ events (PRM "Event Queue Entry" qp_events) */
		*num = (uint32_t)PRM_GET(qp_events, data, qpn_rqn_sqn);
		break;
	}
	return 0;
}

void emu_dataplane_off(struct emu_dev *d)
{
	pthread_mutex_lock(&d->lock);
	d->dataplane_off = true;
	pthread_mutex_unlock(&d->lock);
}
