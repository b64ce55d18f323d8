/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Names for what the firmware command interface returns: opcodes, command statuses,
 * delivery statuses and (our emulated device's) syndromes.  Used by the command engine's
 * error messages, by fwcmd, by the emulator and by trace decoders.
 *
 * Every function here is thread-safe: names come from constant tables; the only
 * formatted name (an unknown opcode) goes into the caller's buffer.
 */
#ifndef UVERBS_FIRMWARE_CMD_NAMES_H
#define UVERBS_FIRMWARE_CMD_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* THE opcode list every layer uses (rows in firmware-cmd/opcodes.def). */
enum prm_cmd_op {
#define PRM_CMD_OP(name, value) PRM_CMD_OP_##name = (value),
#include "firmware-cmd/opcodes.def"
#undef PRM_CMD_OP
};

/* Command status: cmd_out.status (rows in firmware-cmd/cmd_status.def). */
enum prm_cmd_status {
#define PRM_CMD_STAT(name, value, str) PRM_CMD_STAT_##name = (value),
#include "firmware-cmd/cmd_status.def"
#undef PRM_CMD_STAT
};

/* Delivery status: cmd_queue_entry.status (rows in firmware-cmd/deliv_status.def). */
enum prm_deliv_status {
#define PRM_DELIV(name, value, str) PRM_DELIV_##name = (value),
#include "firmware-cmd/deliv_status.def"
#undef PRM_DELIV
};

/* Our emulated device's syndromes (rows in firmware-cmd/syndromes.def). */
enum prm_syndrome {
	PRM_SYND_NONE = 0,
#define PRM_SYND(name, value, str) PRM_SYND_##name = (value),
#include "firmware-cmd/syndromes.def"
#undef PRM_SYND
};

/* "CREATE_QP"; "UNKNOWN" for an opcode the table does not know. */
const char *prm_opcode_name(uint16_t opcode);
/* As prm_opcode_name, but an unknown opcode is written as "UNKNOWN(0x7777)" into buf
 * (which is returned); buf of at least 16 bytes. */
const char *prm_opcode_str(uint16_t opcode, char *buf, size_t len);
/* Opcode of a name ("CREATE_QP"); 0 and -ENOENT when unknown. */
int prm_opcode_from_name(const char *name, uint16_t *opcode);

/* "bad parameter"; "unknown status" for values the PRM does not define. */
const char *prm_cmd_status_name(uint8_t status);
/* Negative errno for a firmware status, as Linux's cmd_status_to_err maps them
 * (0 for OK, -EIO for an unknown status). */
int prm_cmd_status_errno(uint8_t status);

/* "token error"; "unknown delivery status" otherwise. */
const char *prm_delivery_status_name(uint8_t status);

/* "illegal QP transition"; NULL when the value is not one of our syndromes
 * (a real device's syndrome is opaque). */
const char *prm_syndrome_name(uint32_t syndrome);

#endif
