/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A raw command-interface driver for the emulator's tests (header only): it writes the
 * 64-byte cmd_queue_entry and the mailbox blocks into memory the shim mapped, rings
 * command_doorbell_vector itself, and leaves the completed entry and output mailboxes
 * in place to be read byte by byte.  firmware-cmd/cmdq hides those (it checks and
 * joins them), so tests of what the device writes back, such as signatures or the
 * mailbox control part, use this instead.  Layouts: PRM "Command Queue Entry",
 * "Command Mailbox" (cmd_queue_entry, cmd_if_box in firmware-cmd/layouts/cmd.def). */
#ifndef UVERBS_TESTS_EMU_EMU_RAW_H
#define UVERBS_TESTS_EMU_EMU_RAW_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "firmware-cmd/cmdq.h"
#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "hw/emu/emu.h"
#include "hw/shim/mmio.h"
#include "hw/shim/shim.h"

#define ER_ENTRY_BYTES PRM_SIZE(cmd_queue_entry)
#define ER_BOX_BYTES PRM_SIZE(cmd_if_box)

struct er {
	struct shim_dev *dev;
	struct shim_bar bar;
	struct emu_dev *emu;
	struct shim_dma queue;      /* the command queue page; slot 0 at its start */
};

/* One chain of mailbox blocks, CMDQ_BOX_STRIDE apart in one allocation. */
struct er_chain {
	struct shim_dma mem;
	size_t n;
};

static inline void er_iseg_store(struct er *r, unsigned bit_off, const uint8_t *img)
{
	unsigned off = bit_off / 32 * 4;

	shim_mmio_write32(&r->bar, off, prm_load_be32(img, off * 8));
}

static inline void er_wait_ready(struct er *r)
{
	uint8_t img[PRM_OFF(initial_seg, initializing) / 8 + 4];
	unsigned off = PRM_OFF(initial_seg, initializing) / 32 * 4;
	struct timespec ts = { 0, 200000 };

	for (int i = 0; i < 20000; i++) {
		prm_store_be32(img, off * 8, shim_mmio_read32(&r->bar, off));
		if (!PRM_GET(initial_seg, img, initializing))
			return;
		nanosleep(&ts, NULL);
	}
	cr_assert_fail("device stayed initializing");
}

/* Open the device and hand it the command queue page (no command sent yet). */
static inline void er_open(struct er *r, const char *uri)
{
	uint8_t img[0x20] = { 0 };
	char err[256];

	memset(r, 0, sizeof(*r));
	cr_assert_eq(shim_open(uri, &r->dev, err, sizeof(err)), 0, "shim_open(%s): %s", uri, err);
	r->emu = emu_device_from_shim(r->dev);
	cr_assert_not_null(r->emu);
	cr_assert_eq(shim_bar(r->dev, 0, &r->bar), 0);
	er_wait_ready(r);
	cr_assert_eq(shim_dma_alloc(r->dev, 4096, 4096, &r->queue), 0);
	PRM_SET(initial_seg, img, cmdq_phy_addr_63_32, r->queue.iova >> 32);
	PRM_SET(initial_seg, img, cmdq_phy_addr_31_12, (r->queue.iova & 0xffffffffu) >> 12);
	er_iseg_store(r, PRM_OFF(initial_seg, cmdq_phy_addr_63_32), img);
	er_iseg_store(r, PRM_OFF(initial_seg, cmdq_phy_addr_31_12), img);
	er_wait_ready(r);
}

/* Closing the shim releases every DMA allocation and the device. */
static inline void er_close(struct er *r)
{
	shim_close(r->dev);
	memset(r, 0, sizeof(*r));
}

static inline uint8_t *er_entry(struct er *r)
{
	return r->queue.va;
}

static inline uint8_t *er_box(const struct er_chain *c, size_t k)
{
	return (uint8_t *)c->mem.va + k * CMDQ_BOX_STRIDE;
}

static inline uint64_t er_box_iova(const struct er_chain *c, size_t k)
{
	return c->mem.iova + k * CMDQ_BOX_STRIDE;
}

static inline uint64_t er_box_next(const uint8_t *box)
{
	return (PRM_GET(cmd_if_box, box, next_pointer_63_32) << 32) |
	       (PRM_GET(cmd_if_box, box, next_pointer_31_10) << 10);
}

static inline void er_box_set_next(uint8_t *box, uint64_t next)
{
	PRM_SET(cmd_if_box, box, next_pointer_63_32, next >> 32);
	PRM_SET(cmd_if_box, box, next_pointer_31_10, (next & 0xffffffffu) >> 10);
}

/* n zeroed blocks chained in order, each with its block_number and the token (and no
 * signatures), as a driver prepares them.  n may be 0. */
static inline void er_chain_alloc(struct er *r, struct er_chain *c, size_t n, uint8_t token)
{
	memset(c, 0, sizeof(*c));
	c->n = n;
	if (!n)
		return;
	cr_assert_eq(shim_dma_alloc(r->dev, n * CMDQ_BOX_STRIDE, CMDQ_BOX_STRIDE, &c->mem), 0);
	memset(c->mem.va, 0, n * CMDQ_BOX_STRIDE);
	for (size_t k = 0; k < n; k++) {
		PRM_SET(cmd_if_box, er_box(c, k), block_number, k);
		PRM_SET(cmd_if_box, er_box(c, k), token, token);
		er_box_set_next(er_box(c, k), k + 1 < n ? er_box_iova(c, k + 1) : 0);
	}
}

static inline void er_chain_free(struct er *r, struct er_chain *c)
{
	if (c->n)
		shim_dma_free(r->dev, &c->mem);
	memset(c, 0, sizeof(*c));
}

static inline void er_entry_set_in(uint8_t *e, uint64_t iova)
{
	PRM_SET(cmd_queue_entry, e, input_mailbox_pointer_63_32, iova >> 32);
	PRM_SET(cmd_queue_entry, e, input_mailbox_pointer_31_9, (iova & 0xffffffffu) >> 9);
}

static inline void er_entry_set_out(uint8_t *e, uint64_t iova)
{
	PRM_SET(cmd_queue_entry, e, output_mailbox_pointer_63_32, iova >> 32);
	PRM_SET(cmd_queue_entry, e, output_mailbox_pointer_31_9, (iova & 0xffffffffu) >> 9);
}

/* Sign as the PRM says when checksums are on: the entry over its 64 bytes (ownership
 * included), a block's ctrl_signature over bytes 512..573 and its signature over
 * bytes 0..574; each makes the XOR of what it covers 0xff. */
static inline void er_sign_entry(uint8_t *e)
{
	PRM_SET(cmd_queue_entry, e, signature, 0);
	PRM_SET(cmd_queue_entry, e, signature, (uint8_t)~cmdq_xor8(e, ER_ENTRY_BYTES));
}

static inline void er_sign_box(uint8_t *box)
{
	size_t ctrl = CMDQ_BOX_DATA_BYTES;
	size_t csig = PRM_OFF(cmd_if_box, ctrl_signature) / 8, sig = PRM_OFF(cmd_if_box, signature) / 8;

	PRM_SET(cmd_if_box, box, ctrl_signature, 0);
	PRM_SET(cmd_if_box, box, signature, 0);
	PRM_SET(cmd_if_box, box, ctrl_signature, (uint8_t)~cmdq_xor8(box + ctrl, csig - ctrl));
	PRM_SET(cmd_if_box, box, signature, (uint8_t)~cmdq_xor8(box, sig));
}

static inline bool er_box_signed(const uint8_t *box)
{
	size_t ctrl = CMDQ_BOX_DATA_BYTES, csig = PRM_OFF(cmd_if_box, ctrl_signature) / 8;

	return cmdq_xor8(box + ctrl, csig + 1 - ctrl) == 0xff && cmdq_xor8(box, ER_BOX_BYTES) == 0xff;
}

/* Ring slot 0 and wait (bounded) for the device to hand the entry back. */
static inline void er_ring(struct er *r)
{
	uint8_t img[0x20] = { 0 };
	struct timespec ts = { 0, 100000 };

	PRM_SET(initial_seg, img, command_doorbell_vector, 1);
	er_iseg_store(r, PRM_OFF(initial_seg, command_doorbell_vector), img);
	for (int i = 0; i < 50000 && PRM_GET(cmd_queue_entry, er_entry(r), ownership); i++)
		nanosleep(&ts, NULL);
	cr_assert_eq(PRM_GET(cmd_queue_entry, er_entry(r), ownership), 0, "the device never completed the entry");
}

/* A whole command the way a driver posts it: the entry and both chains (inline bytes
 * and mailbox data from `in`), ownership set, signed when `sign`.  The caller may
 * tamper with er_entry() and the chains before er_cmd_run(). */
struct er_cmd {
	struct er_chain in, out;
	uint8_t posted[ER_ENTRY_BYTES];   /* the entry as rung */
	size_t outlen;
};

static inline void er_cmd_post(struct er *r, struct er_cmd *c, const void *in, size_t inlen, size_t outlen,
			       uint8_t token, bool sign)
{
	uint8_t *e = er_entry(r);

	memset(c, 0, sizeof(*c));
	c->outlen = outlen;
	er_chain_alloc(r, &c->in, cmdq_boxes_for(inlen > CMDQ_INLINE_BYTES ? inlen - CMDQ_INLINE_BYTES : 0), token);
	er_chain_alloc(r, &c->out, cmdq_boxes_for(outlen > CMDQ_INLINE_BYTES ? outlen - CMDQ_INLINE_BYTES : 0),
		       token);
	memset(e, 0, ER_ENTRY_BYTES);
	cmdq_split(in, inlen, PRM_ADDR(cmd_queue_entry, e, command_input_inline_data), c->in.n ? er_box(&c->in, 0) : NULL,
		   c->in.n, CMDQ_BOX_STRIDE);
	PRM_SET(cmd_queue_entry, e, type, 0x7); /* PCIe command interface */
	PRM_SET(cmd_queue_entry, e, input_length, inlen);
	PRM_SET(cmd_queue_entry, e, output_length, outlen);
	if (c->in.n)
		er_entry_set_in(e, er_box_iova(&c->in, 0));
	if (c->out.n)
		er_entry_set_out(e, er_box_iova(&c->out, 0));
	PRM_SET(cmd_queue_entry, e, token, token);
	PRM_SET(cmd_queue_entry, e, ownership, 1);
	if (sign) {
		for (size_t k = 0; k < c->in.n; k++)
			er_sign_box(er_box(&c->in, k));
		for (size_t k = 0; k < c->out.n; k++)
			er_sign_box(er_box(&c->out, k));
		er_sign_entry(e);
	}
}

/* Ring; returns the delivery status.  `out` (c->outlen bytes, may be NULL) gets the
 * joined output. */
static inline unsigned er_cmd_run(struct er *r, struct er_cmd *c, uint8_t *out)
{
	memcpy(c->posted, er_entry(r), ER_ENTRY_BYTES);
	er_ring(r);
	if (out)
		cmdq_join(out, c->outlen, PRM_ADDR(cmd_queue_entry, er_entry(r), command_output_inline_data),
			  c->out.n ? er_box(&c->out, 0) : NULL, c->out.n, CMDQ_BOX_STRIDE);
	return (unsigned)PRM_GET(cmd_queue_entry, er_entry(r), status);
}

static inline void er_cmd_free(struct er *r, struct er_cmd *c)
{
	er_chain_free(r, &c->in);
	er_chain_free(r, &c->out);
}

/* Post, run and free one command; returns the delivery status, output in `out`. */
static inline unsigned er_exec(struct er *r, const void *in, size_t inlen, uint8_t *out, size_t outlen, uint8_t token,
			       bool sign)
{
	struct er_cmd c;
	unsigned st;

	er_cmd_post(r, &c, in, inlen, outlen, token, sign);
	st = er_cmd_run(r, &c, out);
	er_cmd_free(r, &c);
	return st;
}

#endif
