/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Mailbox chain helpers: cmdq_split spreads a payload over the inline bytes and the
 * cmd_if_box data areas exactly as the PRM chains them, cmdq_join undoes it, and
 * cmdq_xor8 is the plain XOR the signatures are built from. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "firmware-cmd/cmdq.h"
#include "firmware-cmd/prm.h"

#define BOX PRM_SIZE(cmd_if_box)

static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 7 + 3 + (i >> 8));
}

static void roundtrip(size_t len, size_t stride)
{
	size_t nboxes = cmdq_boxes_for(len > CMDQ_INLINE_BYTES ? len - CMDQ_INLINE_BYTES : 0);
	size_t st = stride ? stride : BOX;
	uint8_t *src = calloc(1, len + 1), *dst = calloc(1, len + 1);
	uint8_t *boxes = malloc(nboxes * st + 1);
	uint8_t inl[CMDQ_INLINE_BYTES];

	for (size_t i = 0; i < len; i++)
		src[i] = pattern(i);
	memset(boxes, 0xee, nboxes * st + 1);
	memset(inl, 0xee, sizeof(inl));
	cmdq_split(src, len, inl, boxes, nboxes, stride);

	/* Byte-level placement: inline first, then 512 data bytes per box, control untouched. */
	for (size_t i = 0; i < len; i++) {
		uint8_t got = i < CMDQ_INLINE_BYTES
				      ? inl[i]
				      : boxes[((i - CMDQ_INLINE_BYTES) / CMDQ_BOX_DATA_BYTES) * st +
					      (i - CMDQ_INLINE_BYTES) % CMDQ_BOX_DATA_BYTES];
		cr_assert_eq(got, src[i], "len %zu byte %zu: 0x%02x != 0x%02x", len, i, got, src[i]);
	}
	for (size_t i = len; i < CMDQ_INLINE_BYTES; i++)
		cr_assert_eq(inl[i], 0, "inline tail byte %zu not zeroed", i);
	for (size_t b = 0; b < nboxes; b++)
		for (size_t i = CMDQ_BOX_DATA_BYTES; i < BOX; i++)
			cr_assert_eq(boxes[b * st + i], 0xee, "box %zu control byte %zu touched", b, i);

	memset(dst, 0x55, len + 1);
	cr_assert_eq(cmdq_join(dst, len, inl, boxes, nboxes, stride), len);
	cr_assert_eq(memcmp(dst, src, len), 0, "join(split(x)) != x for len %zu", len);
	cr_assert_eq(dst[len], 0x55, "join wrote past len %zu", len);
	free(src);
	free(dst);
	free(boxes);
}

Test(cmdq_chain, split_join_roundtrip_at_every_boundary_length)
{
	const size_t lens[] = { 0, 1, 15, 16, 17, 527, 528, 529, 1040, 1041, 0x1010 };

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		roundtrip(lens[i], 0);
}

Test(cmdq_chain, split_join_honour_a_1k_box_stride)
{
	roundtrip(0x1010, CMDQ_BOX_STRIDE);
}

Test(cmdq_chain, boxes_for_counts_512_byte_blocks)
{
	cr_assert_eq(cmdq_boxes_for(0), 0);
	cr_assert_eq(cmdq_boxes_for(1), 1);
	cr_assert_eq(cmdq_boxes_for(512), 1);
	cr_assert_eq(cmdq_boxes_for(513), 2);
	cr_assert_eq(cmdq_boxes_for(0x1010 - 16), 8);
}

Test(cmdq_chain, join_stops_at_available_bytes)
{
	uint8_t inl[CMDQ_INLINE_BYTES], box[BOX], dst[600];

	memset(inl, 1, sizeof(inl));
	memset(box, 2, sizeof(box));
	cr_assert_eq(cmdq_join(dst, sizeof(dst), inl, box, 1, 0), CMDQ_INLINE_BYTES + CMDQ_BOX_DATA_BYTES);
	cr_assert_eq(dst[15], 1);
	cr_assert_eq(dst[16], 2);
	cr_assert_eq(dst[527], 2);
}

Test(cmdq_chain, split_zeroes_unused_data_of_the_last_box)
{
	uint8_t inl[CMDQ_INLINE_BYTES], box[BOX], src[20];

	memset(src, 0xab, sizeof(src));
	memset(box, 0xee, sizeof(box));
	cmdq_split(src, sizeof(src), inl, box, 1, 0);
	cr_assert_eq(box[3], 0xab);
	cr_assert_eq(box[4], 0);
	cr_assert_eq(box[511], 0);
	cr_assert_eq(box[512], 0xee);
}

Test(cmdq_chain, xor8_is_the_plain_xor_of_the_bytes)
{
	const uint8_t b[] = { 0x01, 0x02, 0x04, 0x80, 0xff };

	cr_assert_eq(cmdq_xor8(b, 0), 0);
	cr_assert_eq(cmdq_xor8(b, 1), 0x01);
	cr_assert_eq(cmdq_xor8(b, 4), 0x87);
	cr_assert_eq(cmdq_xor8(b, 5), 0x78);
}

Test(cmdq_chain, signature_as_complement_makes_the_block_xor_0xff)
{
	uint8_t box[BOX];

	for (size_t i = 0; i < sizeof(box); i++)
		box[i] = pattern(i);
	box[BOX - 1] = (uint8_t)~cmdq_xor8(box, BOX - 1);
	cr_assert_eq(cmdq_xor8(box, BOX), 0xff);
}
