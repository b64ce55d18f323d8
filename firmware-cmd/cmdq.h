/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The command-queue engine (docs/architecture.md, "The command interface"): how commands reach the firmware.
 *
 * The engine owns the command queue page (PRM "Command Queue": 2^log_cmdq_size entries
 * of 2^log_cmdq_stride bytes, each a cmd_queue_entry), the mailbox chains for inputs
 * and outputs longer than the 16 inline bytes (cmd_if_box: 512 data bytes per block,
 * blocks 1 KiB aligned), tokens, optional signatures, the ownership bit and the doorbell
 * vector in the initialization segment.  It completes a command by polling the ownership
 * bit, or, once the driver has an EQ, by the CMD completion event the driver forwards
 * with cmdq_event_complete().
 *
 * Commands go one at a time through slot 0, serialised by a mutex: any thread may call
 * cmdq_exec().  The queue's last entry is a second slot, used only from inside the wait
 * for a slot 0 command (cmdq_exec_nested): firmware may hold a command until it is
 * given pages, so the MANAGE_PAGES that gives them cannot wait its turn behind it.
 * Every wait is bounded by the timeout.  Opcode/status/syndrome names
 * used in messages come from firmware-cmd/names.h.
 *
 * It may call hw/shim only.  hw/mlx5 calls it; tests drive it with a scripted responder.
 */
#ifndef UVERBS_FIRMWARE_CMD_CMDQ_H
#define UVERBS_FIRMWARE_CMD_CMDQ_H

#include <stddef.h>
#include <stdint.h>

#include "hw/shim/shim.h"

#define CMDQ_INLINE_BYTES 16       /* command_input_inline_data / command_output_inline_data */
#define CMDQ_BOX_DATA_BYTES 512    /* cmd_if_box.mailbox_data */
#define CMDQ_BOX_STRIDE 1024       /* one cmd_if_box (576 B) per 1 KiB, which keeps next_pointer_31_10 exact */
#define CMDQ_ERR_LEN 256
#define CMDQ_DEFAULT_TIMEOUT_MS 60000 /* PRM default command execution timeout */

struct cmdq;

struct cmdq_config {
	unsigned timeout_ms;          /* 0: CMDQ_DEFAULT_TIMEOUT_MS */
	/* Sign the entry and every mailbox posted (PRM signature and ctrl_signature).
	 * Harmless when the device ignores them; Linux cmd.c always signs the entry. */
	int use_signatures;
	/* Check the signatures of the completed entry and of the output mailboxes.  Only
	 * for a device whose cmd_hca_cap.cmdif_checksum is 3 (enabled): with checksums
	 * off, real firmware leaves the entry's signature byte as posted and returns the
	 * mailboxes unsigned (the ConnectX-4 trace in ../shared/fixtures), and neither
	 * Linux (cmd.c checksum_disabled) nor rdma-core mlx5_vfio.c ever verifies. */
	int verify_signatures;
	unsigned max_mailbox_bytes;   /* largest in/out payload beyond the inline bytes; 0: 1 MiB */
};

/* Program the command queue into the device whose init segment is at BAR offset 0:
 * reads cmd_interface_rev (must be 5), log_cmdq_size/stride, allocates the queue page
 * and mailboxes through the shim, writes cmdq_phy_addr.  Does not wait for
 * `initializing` to clear: the caller does, before and after (hw/mlx5/init.c).
 * Errors (message in dev->err): -EOPNOTSUPP for another cmd_interface_rev, -ENODEV when
 * the init segment reads all-ones (device gone), -EPROTO for a queue geometry that does
 * not fit a 4 KiB page, or the shim's error from dma_alloc. */
int cmdq_create(struct shim_dev *dev, const struct shim_bar *bar, const struct cmdq_config *cfg,
		struct cmdq **out);
void cmdq_destroy(struct cmdq *q);

/* Execute one command: `in` starts with the common header (opcode, op_mod), `out` gets
 * the whole output including status and syndrome.  Returns 0 when delivery succeeded and
 * the firmware status is 0; otherwise a negative errno and cmdq_error() says which
 * command, status and syndrome by name:
 *   -ETIMEDOUT  no completion in time        "CREATE_QP: timeout after 60000 ms"
 *   -ENODEV     the device vanished while waiting (BAR reads all-ones)
 *                                            "CREATE_QP: device not responding (BAR reads all-ones)"
 *   -EIO        delivery status, token or signature error
 *                                            "QUERY_HCA_CAP: delivery status token error (0x2)"
 *   errno of the firmware status (prm_cmd_status_errno)
 *                                            "CREATE_QP: bad parameter (0x3), syndrome 0x2a1b3c"
 *               (the syndrome's name follows in parentheses when it is one of ours)
 *   -EINVAL     outlen < 16 or a NULL buffer;  -E2BIG  beyond max_mailbox_bytes
 *   err of cmdq_set_down  the device entered the error state while the command waited,
 *               or before it was sent
 *                                            "CREATE_QP: aborted: the device entered the error state (...)"
 *   -EBUSY      every entry is still owned by the device after earlier timeouts (a timed-out
 *               command leaves its entry to the device and the next one takes another,
 *               as Linux cmd.c does; a reset frees them)
 * `out` is filled whenever the firmware answered. */
int cmdq_exec(struct cmdq *q, const void *in, size_t inlen, void *out, size_t outlen);

/* Completion by event: once the driver's EQ delivers CMD completion EQEs, it calls
 * cmdq_set_event_mode() with a wait function (blocks until an EQE arrives or the timeout)
 * and forwards each completion vector with cmdq_event_complete(). */
/* The wait function runs with the queue's mutex held: it must not call cmdq_exec() or
 * the cmdq_set_* functions, only cmdq_event_complete() and cmdq_exec_nested().  Return 0 (woken), -ETIMEDOUT,
 * -EINTR or -EAGAIN to keep waiting until the deadline; any other negative errno aborts
 * the command with that errno. */
typedef int (*cmdq_wait_fn)(void *ctx, unsigned timeout_ms);
void cmdq_set_event_mode(struct cmdq *q, cmdq_wait_fn wait, void *ctx);
void cmdq_set_polling_mode(struct cmdq *q);
void cmdq_event_complete(struct cmdq *q, uint32_t vector_mask);

/* The device entered its error state (a fatal health syndrome, a fatal-error event):
 * it will complete no command.  As Linux health.c mlx5_enter_error_state() does with
 * cmd.c mlx5_cmd_flush() and mlx5_cmd_is_down(), the command waiting ends at once with
 * `err` (negative) and every later command fails without being sent, each with the
 * message "<OPCODE>: aborted: the device entered the error state (<why>)" or "...: not
 * sent: ...".  Lock-free: any thread may call it, the wait function and the health
 * check too.  The first call's err and why stay; a queue once down stays down (the
 * device is brought up again with a new queue). */
void cmdq_set_down(struct cmdq *q, int err, const char *why);
/* 0 while the device is up, else the err given to cmdq_set_down. */
int cmdq_is_down(const struct cmdq *q);

/* A look at the device's health while a command waits, in either mode: the waiting
 * thread calls fn at most every CMDQ_HEALTH_CHECK_MS (the first one that long after the
 * post, so a command that completes in time never pays for it; the event-mode wait is
 * then given slices no longer than that).  fn runs with the mutex held, as the wait
 * function does: it may call cmdq_set_down and cmdq_set_polling_mode, never cmdq_exec.
 * Linux polls health from a timer every 2 s (health.c poll_health); a driver whose
 * waiting thread holds the device's lock must look itself.  NULL: no check. */
#define CMDQ_HEALTH_CHECK_MS 20
typedef void (*cmdq_health_fn)(void *ctx);
void cmdq_set_health_check(struct cmdq *q, cmdq_health_fn fn, void *ctx);

/* Execute one command on the second slot, the queue's last entry, while the command on
 * slot 0 is outstanding: for the driver's wait function to answer a PAGE_REQUEST with
 * MANAGE_PAGES (PRM "Firmware Pages": firmware may complete a command only after it
 * got the pages it asked for meanwhile; rdma-core providers/mlx5/mlx5_vfio.c issues
 * it on slot MLX5_MAX_COMMANDS - 1, Linux pagealloc.c from separate work on another
 * slot).  Same results and messages as cmdq_exec().  It completes by polling the
 * ownership bit and never calls the wait function, so it cannot recurse; a page
 * request seen meanwhile waits for the next drain.  Further errors:
 *   -EPERM       not called from inside the wait function of a slot 0 command
 *   -EOPNOTSUPP  the queue has a single entry (log_cmdq_size 0): no second slot
 *   -EDEADLK     a nested command is already in flight
 *   -EBUSY       the second slot is still owned after an earlier timeout */
int cmdq_exec_nested(struct cmdq *q, const void *in, size_t inlen, void *out, size_t outlen);

/* Entry number of the second slot (2^log_cmdq_size - 1), or -EOPNOTSUPP when the
 * device's queue has a single entry. */
int cmdq_nested_slot(const struct cmdq *q);

void cmdq_set_timeout(struct cmdq *q, unsigned timeout_ms);

/* Start or stop verifying completion signatures (cmdq_config.verify_signatures), for a
 * driver that turned cmdif_checksum on or off with SET_HCA_CAP. */
void cmdq_set_verify_signatures(struct cmdq *q, int on);

/* Last error, e.g. "CREATE_QP: bad parameter (0x3), syndrome 0x2a1b3c"; "" after a
 * success.  The string belongs to the queue and changes with the next command. */
const char *cmdq_error(const struct cmdq *q);

/* Firmware status of the last command (0 when it succeeded or never got an answer). */
uint8_t cmdq_last_status(const struct cmdq *q);
uint32_t cmdq_last_syndrome(const struct cmdq *q);

/* ---- mailbox chain layout, shared with the emulator and the trace tests ---- */

/* Number of mailbox blocks needed for a payload of `len` bytes (inline bytes excluded
 * by the caller: pass max(len - 16, 0)). */
static inline size_t cmdq_boxes_for(size_t mailbox_bytes)
{
	return (mailbox_bytes + CMDQ_BOX_DATA_BYTES - 1) / CMDQ_BOX_DATA_BYTES;
}

/* Join the bytes of a command as the firmware sees it: the 16 inline bytes of the
 * entry, then 512 data bytes from each mailbox block in order. `boxes` points at
 * consecutive cmd_if_box images (576 bytes each, or `box_stride` apart). Returns the
 * number of bytes written to `dst` (min(len, available)). */
size_t cmdq_join(void *dst, size_t len, const uint8_t inline_data[CMDQ_INLINE_BYTES],
		 const uint8_t *boxes, size_t nboxes, size_t box_stride);

/* The opposite: spread `len` bytes into the inline area and the boxes' data. */
void cmdq_split(const void *src, size_t len, uint8_t inline_data[CMDQ_INLINE_BYTES],
		uint8_t *boxes, size_t nboxes, size_t box_stride);

/* Plain XOR of `len` bytes.  A PRM signature byte is the complement of the XOR of the
 * other signed bytes, so that the XOR over all signed bytes (signature included) is 0xff. */
uint8_t cmdq_xor8(const void *p, size_t len);

#endif
