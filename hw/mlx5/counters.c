/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The function's queue counter set (PRM "Q Counters": ALLOC_Q_COUNTER 0x771,
 * DEALLOC_Q_COUNTER 0x772, QUERY_Q_COUNTER 0x773).
 *
 * One set per device, named by every QP at RST2INIT (qpc.counter_set_id), as Linux's
 * mlx5_ib does with its per-port set.  What the responder dropped or RNR-NAKed for want
 * of a posted receive is counted there as out_of_buffer: on a real ConnectX this is
 * the only trace a message lost on UC or UD leaves.  A device that does not know the
 * commands (status bad opcode) simply has no set: QPs name set 0, and the counters
 * read as unavailable (-EOPNOTSUPP). */
#include <errno.h>

#include "hw/mlx5/mx5_internal.h"

int mx5_counters_alloc(struct mx5_device *dev)
{
	uint8_t in[PRM_SIZE(alloc_q_counter_in)] = { 0 }, out[PRM_SIZE(alloc_q_counter_out)];

	PRM_SET(alloc_q_counter_in, in, opcode, PRM_CMD_OP_ALLOC_Q_COUNTER);
	int rc = mx5_exec(dev, in, sizeof(in), out, sizeof(out));
	if (rc) {
		if (mx5_cmd_status(dev) != PRM_CMD_STAT_BAD_OP)
			return mx5_cmd_fail(dev, rc, "bring-up");
		dev->err[0] = '\0';
		return 0;
	}
	dev->q_counter_set = (uint8_t)PRM_GET(alloc_q_counter_out, out, counter_set_id);
	return 0;
}

void mx5_counters_free(struct mx5_device *dev)
{
	uint8_t in[PRM_SIZE(dealloc_q_counter_in)] = { 0 }, out[PRM_SIZE(dealloc_q_counter_out)];

	if (!dev->q_counter_set)
		return;
	if (dev->health == MX5_HEALTH_OK) {
		PRM_SET(dealloc_q_counter_in, in, opcode, PRM_CMD_OP_DEALLOC_Q_COUNTER);
		PRM_SET(dealloc_q_counter_in, in, counter_set_id, dev->q_counter_set);
		if (mx5_exec(dev, in, sizeof(in), out, sizeof(out)))
			mx5_cmd_fail(dev, -EIO, "teardown");
	}
	dev->q_counter_set = 0;
}

int mx5_counters_query(struct mx5_device *dev, struct mx5_counters *c)
{
	uint8_t in[PRM_SIZE(query_q_counter_in)] = { 0 }, out[PRM_SIZE(query_q_counter_out)];

	if (!dev || !c)
		return -EINVAL;
	if (!dev->q_counter_set)
		return -EOPNOTSUPP;
	PRM_SET(query_q_counter_in, in, opcode, PRM_CMD_OP_QUERY_Q_COUNTER);
	PRM_SET(query_q_counter_in, in, counter_set_id, dev->q_counter_set);
	int rc = mx5_exec(dev, in, sizeof(in), out, sizeof(out));
	if (rc)
		return mx5_cmd_fail(dev, rc, "query counters");
	c->out_of_buffer = (uint32_t)PRM_GET(query_q_counter_out, out, out_of_buffer);
	c->out_of_sequence = (uint32_t)PRM_GET(query_q_counter_out, out, out_of_sequence);
	c->duplicate_request = (uint32_t)PRM_GET(query_q_counter_out, out, duplicate_request);
	c->rnr_nak_retry_err = (uint32_t)PRM_GET(query_q_counter_out, out, rnr_nak_retry_err);
	c->local_ack_timeout_err = (uint32_t)PRM_GET(query_q_counter_out, out, local_ack_timeout_err);
	return 0;
}

uint8_t mx5_counters_set_id(const struct mx5_device *dev)
{
	return dev->q_counter_set;
}
