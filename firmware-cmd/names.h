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

/* Command status: cmd_out.status (PRM "Command Interface" -> "Command Status";
 * the values Linux's cmd.c names in cmd_status_str). */
#define PRM_CMD_STATUS_ROWS(X)                                                      \
	X(OK,                  0x00, "ok")                                          \
	X(INT_ERR,             0x01, "internal error")                              \
	X(BAD_OP,              0x02, "bad opcode")                                  \
	X(BAD_PARAM,           0x03, "bad parameter")                               \
	X(BAD_SYS_STATE,       0x04, "bad system state")                            \
	X(BAD_RES,             0x05, "bad resource")                                \
	X(RES_BUSY,            0x06, "resource busy")                               \
	X(NOT_READY,           0x07, "firmware not ready")                          \
	X(LIM_ERR,             0x08, "limits exceeded")                             \
	X(BAD_RES_STATE,       0x09, "bad resource state")                          \
	X(IX_ERR,              0x0a, "bad index")                                   \
	X(NO_RES,              0x0f, "no resources")                                \
	X(BAD_QP_STATE,        0x10, "bad QP state")                                \
	X(BAD_PKT,             0x30, "bad packet")                                  \
	X(BAD_SIZE_OUTS_CQES,  0x40, "bad size of outstanding CQEs")                \
	X(BAD_INP_LEN,         0x50, "bad input length")                            \
	X(BAD_OUTP_LEN,        0x51, "bad output length")

enum prm_cmd_status {
#define PRM_X_(name, value, str) PRM_CMD_STAT_##name = (value),
	PRM_CMD_STATUS_ROWS(PRM_X_)
#undef PRM_X_
};

/* Delivery status: cmd_queue_entry.status, set by the device's command interface before
 * the command reaches the firmware (PRM "Command Queue Entry" -> status; Linux cmd.c
 * MLX5_CMD_DELIVERY_STAT_*, deliv_status_to_str). */
#define PRM_DELIV_STATUS_ROWS(X)                                                    \
	X(OK,                  0x00, "ok")                                          \
	X(SIGNATURE_ERR,       0x01, "signature error")                             \
	X(TOKEN_ERR,           0x02, "token error")                                 \
	X(BAD_BLOCK_NUMBER,    0x03, "bad block number")                            \
	X(OUT_PTR_ALIGN_ERR,   0x04, "output pointer not aligned to block size")    \
	X(IN_PTR_ALIGN_ERR,    0x05, "input pointer not aligned to block size")     \
	X(FW_ERR,              0x06, "firmware internal error")                     \
	X(IN_LENGTH_ERR,       0x07, "command input length error")                  \
	X(OUT_LENGTH_ERR,      0x08, "command output length error")                 \
	X(RES_FLD_NOT_CLR_ERR, 0x09, "reserved fields not cleared")                 \
	X(CMD_DESCR_ERR,       0x10, "bad command descriptor type")

enum prm_deliv_status {
#define PRM_X_(name, value, str) PRM_DELIV_##name = (value),
	PRM_DELIV_STATUS_ROWS(PRM_X_)
#undef PRM_X_
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
