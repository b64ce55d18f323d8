/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Name tables for opcodes, statuses and syndromes (see names.h). */
#include "firmware-cmd/names.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct prm_name {
	uint32_t value;
	const char *name;
};

static const struct prm_name prm_opcodes[] = {
#define PRM_CMD_OP(name, value) { (value), #name },
#include "firmware-cmd/opcodes.def"
#undef PRM_CMD_OP
};

static const struct prm_name prm_statuses[] = {
#define PRM_CMD_STAT(name, value, str) { (value), str },
#include "firmware-cmd/cmd_status.def"
#undef PRM_CMD_STAT
};

static const struct prm_name prm_deliv_statuses[] = {
#define PRM_DELIV(name, value, str) { (value), str },
#include "firmware-cmd/deliv_status.def"
#undef PRM_DELIV
};

static const struct prm_name prm_syndromes[] = {
#define PRM_SYND(name, value, str) { (value), str },
#include "firmware-cmd/syndromes.def"
#undef PRM_SYND
};

#define PRM_NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Linear search: the tables are small, and error paths are not hot. */
static const char *prm_lookup(const struct prm_name *t, size_t n, uint32_t value)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].value == value)
			return t[i].name;
	return NULL;
}

const char *prm_opcode_name(uint16_t opcode)
{
	const char *n = prm_lookup(prm_opcodes, PRM_NELEM(prm_opcodes), opcode);

	return n ? n : "UNKNOWN";
}

const char *prm_opcode_str(uint16_t opcode, char *buf, size_t len)
{
	const char *n = prm_lookup(prm_opcodes, PRM_NELEM(prm_opcodes), opcode);

	if (n)
		return n;
	if (!buf || !len)
		return "UNKNOWN";
	snprintf(buf, len, "UNKNOWN(0x%x)", (unsigned)opcode);
	return buf;
}

int prm_opcode_from_name(const char *name, uint16_t *opcode)
{
	if (opcode)
		*opcode = 0;
	if (!name)
		return -EINVAL;
	for (size_t i = 0; i < PRM_NELEM(prm_opcodes); i++)
		if (strcmp(prm_opcodes[i].name, name) == 0) {
			if (opcode)
				*opcode = (uint16_t)prm_opcodes[i].value;
			return 0;
		}
	return -ENOENT;
}

const char *prm_cmd_status_name(uint8_t status)
{
	const char *n = prm_lookup(prm_statuses, PRM_NELEM(prm_statuses), status);

	return n ? n : "unknown status";
}

/* Linux drivers/net/ethernet/mellanox/mlx5/core/cmd.c, cmd_status_to_err: the errno a
 * caller can act on (EINVAL: the request was wrong; EBUSY/EAGAIN: try again later;
 * ENOMEM: a limit; EIO: the device or its firmware failed). */
int prm_cmd_status_errno(uint8_t status)
{
	switch (status) {
	case PRM_CMD_STAT_OK:                 return 0;
	case PRM_CMD_STAT_INT_ERR:            return -EIO;
	case PRM_CMD_STAT_BAD_OP:             return -EINVAL;
	case PRM_CMD_STAT_BAD_PARAM:          return -EINVAL;
	case PRM_CMD_STAT_BAD_SYS_STATE:      return -EIO;
	case PRM_CMD_STAT_BAD_RES:            return -EINVAL;
	case PRM_CMD_STAT_RES_BUSY:           return -EBUSY;
	case PRM_CMD_STAT_NOT_READY:          return -EAGAIN;
	case PRM_CMD_STAT_LIM_ERR:            return -ENOMEM;
	case PRM_CMD_STAT_BAD_RES_STATE:      return -EINVAL;
	case PRM_CMD_STAT_IX_ERR:             return -EINVAL;
	case PRM_CMD_STAT_NO_RES:             return -EAGAIN;
	case PRM_CMD_STAT_BAD_QP_STATE:       return -EINVAL;
	case PRM_CMD_STAT_BAD_PKT:            return -EINVAL;
	case PRM_CMD_STAT_BAD_SIZE_OUTS_CQES: return -EINVAL;
	case PRM_CMD_STAT_BAD_INP_LEN:        return -EIO;
	case PRM_CMD_STAT_BAD_OUTP_LEN:       return -EIO;
	default:                              return -EIO;
	}
}

const char *prm_delivery_status_name(uint8_t status)
{
	const char *n = prm_lookup(prm_deliv_statuses, PRM_NELEM(prm_deliv_statuses), status);

	return n ? n : "unknown delivery status";
}

const char *prm_syndrome_name(uint32_t syndrome)
{
	return prm_lookup(prm_syndromes, PRM_NELEM(prm_syndromes), syndrome);
}
