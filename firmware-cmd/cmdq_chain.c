/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Mailbox chain layout helpers shared by the engine, the emulator and the trace tests.
 *
 * PRM "Command Interface" / "Command Queue Entry": a command's input (and output) is
 * the 16 inline bytes of the entry followed by the 512-byte mailbox_data of each
 * cmd_if_box in chain order.  These helpers only move payload bytes; the control part
 * of each box (next_pointer, block_number, token, signatures) is the engine's business.
 */
#include "firmware-cmd/cmdq.h"

#include <string.h>

#include "firmware-cmd/prm.h"

static size_t cmdq_box_stride(size_t box_stride)
{
	return box_stride ? box_stride : (size_t)PRM_SIZE(cmd_if_box);
}

size_t cmdq_join(void *dst, size_t len, const uint8_t inline_data[CMDQ_INLINE_BYTES],
		 const uint8_t *boxes, size_t nboxes, size_t box_stride)
{
	uint8_t *d = dst;
	size_t done, stride = cmdq_box_stride(box_stride);

	if (!dst || len == 0)
		return 0;
	done = len < CMDQ_INLINE_BYTES ? len : CMDQ_INLINE_BYTES;
	if (inline_data)
		memcpy(d, inline_data, done);
	else
		memset(d, 0, done);
	for (size_t i = 0; i < nboxes && done < len && boxes; i++) {
		size_t n = len - done < CMDQ_BOX_DATA_BYTES ? len - done : CMDQ_BOX_DATA_BYTES;

		memcpy(d + done, PRM_ADDR(cmd_if_box, boxes + i * stride, mailbox_data), n);
		done += n;
	}
	return done;
}

/* Unused payload bytes are zeroed: the PRM treats the tail of the inline area and of
 * the last box as reserved, and a device may check reserved bytes (delivery status 9). */
void cmdq_split(const void *src, size_t len, uint8_t inline_data[CMDQ_INLINE_BYTES],
		uint8_t *boxes, size_t nboxes, size_t box_stride)
{
	const uint8_t *s = src;
	size_t done, stride = cmdq_box_stride(box_stride);

	if (!src)
		len = 0;
	done = len < CMDQ_INLINE_BYTES ? len : CMDQ_INLINE_BYTES;
	if (inline_data) {
		if (done)
			memcpy(inline_data, s, done);
		memset(inline_data + done, 0, CMDQ_INLINE_BYTES - done);
	}
	for (size_t i = 0; i < nboxes && boxes; i++) {
		uint8_t *data = PRM_ADDR(cmd_if_box, boxes + i * stride, mailbox_data);
		size_t n = len > done ? len - done : 0;

		if (n > CMDQ_BOX_DATA_BYTES)
			n = CMDQ_BOX_DATA_BYTES;
		if (n)
			memcpy(data, s + done, n);
		memset(data + n, 0, CMDQ_BOX_DATA_BYTES - n);
		done += n;
	}
}

uint8_t cmdq_xor8(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t x = 0;

	for (size_t i = 0; i < len; i++)
		x ^= b[i];
	return x;
}
