/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Scripted device for the command-queue tests (see scripted_dev.h).  This is the
 * device side of PRM "Command Interface", written independently of firmware-cmd/cmdq.c:
 * it reads the queue address from the init segment, the entry from the queue page and
 * walks each mailbox chain through next_pointer, IOVA by IOVA. */
#include "tests/common/scripted_dev.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "firmware-cmd/cmdq.h"
#include "firmware-cmd/prm.h"

#define SCRIPTED_IOVA_BASE 0x0000004280000000ull /* high dword non-zero, unlike any VA */
#define SCRIPTED_IOVA_GAP 0x10000ull

static struct scripted_dev *scripted_of(struct shim_dev *dev)
{
	return (struct scripted_dev *)dev;
}

uint64_t scripted_iseg_dword(unsigned bit_off)
{
	return (bit_off / 32u) * 4u;
}

/* ---- DMA with a translation table ---- */

static int scripted_dma_alloc(struct shim_dev *dev, size_t len, size_t align, struct shim_dma *out)
{
	struct scripted_dev *d = scripted_of(dev);
	size_t a = align < 64 ? 64 : align;
	size_t rlen = (len + a - 1) / a * a;
	void *va;

	if (!len || (a & (a - 1)))
		return -EINVAL;
	for (size_t i = 0; i < SCRIPTED_MAX_DMA; i++) {
		if (d->dma[i].live)
			continue;
		va = aligned_alloc(a, rlen);
		if (!va)
			return -ENOMEM;
		memset(va, 0, rlen);
		d->next_iova = (d->next_iova + a - 1) / a * a;
		d->dma[i] = (struct scripted_dma_map){ .va = va, .iova = d->next_iova, .len = rlen, .live = true };
		d->next_iova += rlen + SCRIPTED_IOVA_GAP;
		out->va = va;
		out->iova = d->dma[i].iova;
		out->len = len;
		out->priv = &d->dma[i];
		d->live_dma++;
		return 0;
	}
	return -ENOSPC;
}

static void scripted_dma_free(struct shim_dev *dev, struct shim_dma *dma)
{
	struct scripted_dev *d = scripted_of(dev);
	struct scripted_dma_map *m = dma ? dma->priv : NULL;

	if (!m || !m->live)
		return;
	free(m->va);
	m->live = false;
	d->live_dma--;
	dma->va = NULL;
}

void *scripted_dev_iova_to_va(struct scripted_dev *d, uint64_t iova, size_t len)
{
	for (size_t i = 0; i < SCRIPTED_MAX_DMA; i++) {
		const struct scripted_dma_map *m = &d->dma[i];

		if (m->live && iova >= m->iova && iova - m->iova <= m->len && len <= m->len - (iova - m->iova))
			return (uint8_t *)m->va + (iova - m->iova);
	}
	d->dma_faults++;
	return NULL;
}

/* ---- the init segment ---- */

uint64_t scripted_dev_cmdq_iova(const struct scripted_dev *d)
{
	return (PRM_GET(initial_seg, d->bar_mem, cmdq_phy_addr_63_32) << 32) |
	       (PRM_GET(initial_seg, d->bar_mem, cmdq_phy_addr_31_12) << 12);
}

/* The size bits share a dword with the low address bits but belong to the device
 * (PRM "Initialization Segment"): restore them after any driver write. */
static void scripted_restore_owned_bits(struct scripted_dev *d)
{
	PRM_SET(initial_seg, d->bar_mem, log_cmdq_size, d->cfg.log_cmdq_size);
	PRM_SET(initial_seg, d->bar_mem, log_cmdq_stride, d->cfg.log_cmdq_stride);
}

/* ---- entries and chains ---- */

static void scripted_sign_entry(uint8_t *entry)
{
	PRM_SET(cmd_queue_entry, entry, signature, 0);
	PRM_SET(cmd_queue_entry, entry, signature, (uint8_t)~cmdq_xor8(entry, 64));
}

/* Box signatures, device side (PRM "Command Mailbox"): ctrl_signature over bytes
 * 512..573 (control part through the token), signature over bytes 0..574. */
static void scripted_sign_box(uint8_t *box)
{
	PRM_SET(cmd_if_box, box, ctrl_signature, (uint8_t)~cmdq_xor8(box + 512, 62));
	PRM_SET(cmd_if_box, box, signature, (uint8_t)~cmdq_xor8(box, 575));
}

static bool scripted_box_sig_ok(const uint8_t *box)
{
	return cmdq_xor8(box + 512, 63) == 0xff && cmdq_xor8(box, 576) == 0xff;
}

/* Walk one chain from `first`, `n` blocks; fills boxes[]. Returns a delivery status. */
static uint8_t scripted_walk(struct scripted_dev *d, struct scripted_cmd *c, uint64_t first, size_t n,
			     uint8_t **boxes, uint8_t ptr_status, const char *what)
{
	uint64_t iova = first;

	for (size_t i = 0; i < n; i++) {
		uint8_t *box;

		if (iova & 0x3ff) {
			snprintf(c->chain_error, sizeof(c->chain_error), "%s block %zu at IOVA 0x%llx not 1 KiB aligned",
				 what, i, (unsigned long long)iova);
			return ptr_status;
		}
		box = scripted_dev_iova_to_va(d, iova, 576);
		if (!box) {
			snprintf(c->chain_error, sizeof(c->chain_error), "%s block %zu at IOVA 0x%llx not mapped",
				 what, i, (unsigned long long)iova);
			return ptr_status;
		}
		boxes[i] = box;
		if (PRM_GET(cmd_if_box, box, block_number) != i) {
			snprintf(c->chain_error, sizeof(c->chain_error), "%s block %zu has block_number %llu", what, i,
				 (unsigned long long)PRM_GET(cmd_if_box, box, block_number));
			return 0x3;
		}
		if (PRM_GET(cmd_if_box, box, token) != c->token) {
			snprintf(c->chain_error, sizeof(c->chain_error), "%s block %zu has token 0x%llx, entry 0x%x",
				 what, i, (unsigned long long)PRM_GET(cmd_if_box, box, token), c->token);
			return 0x2;
		}
		if (d->cfg.check_signatures && !scripted_box_sig_ok(box)) {
			snprintf(c->chain_error, sizeof(c->chain_error), "%s block %zu bad signature", what, i);
			return 0x1;
		}
		iova = (PRM_GET(cmd_if_box, box, next_pointer_63_32) << 32) |
		       (PRM_GET(cmd_if_box, box, next_pointer_31_10) << 10);
		if (i + 1 < n && !iova) {
			snprintf(c->chain_error, sizeof(c->chain_error), "%s chain ends after %zu of %zu blocks", what,
				 i + 1, n);
			return ptr_status;
		}
	}
	return 0;
}

static size_t scripted_boxes_for(size_t len)
{
	return len > 16 ? (len - 16 + 511) / 512 : 0;
}

static void scripted_default_responder(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	(void)ctx;
	scripted_cmd_reply(d, c, NULL, 0);
	scripted_cmd_complete(d, c, 0, false);
}

static void scripted_process_slot(struct scripted_dev *d, unsigned slot)
{
	struct scripted_cmd c;
	uint64_t entry_iova = scripted_dev_cmdq_iova(d) + ((uint64_t)slot << d->cfg.log_cmdq_stride);
	uint8_t *e = scripted_dev_iova_to_va(d, entry_iova, 64);
	uint64_t in_ptr, out_ptr;

	if (!e || !PRM_GET(cmd_queue_entry, e, ownership)) {
		d->stray_doorbells++;
		return;
	}
	memset(&c, 0, sizeof(c));
	d->commands++;
	memcpy(d->last_entry, e, 64);
	c.slot = slot;
	c.entry = e;
	c.token = (uint8_t)PRM_GET(cmd_queue_entry, e, token);
	c.inlen = PRM_GET(cmd_queue_entry, e, input_length);
	c.outlen = PRM_GET(cmd_queue_entry, e, output_length);
	c.nin = scripted_boxes_for(c.inlen);
	c.nout = scripted_boxes_for(c.outlen);
	c.in = calloc(1, c.inlen + 16);
	c.in_box = calloc(c.nin + 1, sizeof(*c.in_box));
	c.out_box = calloc(c.nout + 1, sizeof(*c.out_box));
	in_ptr = (PRM_GET(cmd_queue_entry, e, input_mailbox_pointer_63_32) << 32) |
		 (PRM_GET(cmd_queue_entry, e, input_mailbox_pointer_31_9) << 9);
	out_ptr = (PRM_GET(cmd_queue_entry, e, output_mailbox_pointer_63_32) << 32) |
		  (PRM_GET(cmd_queue_entry, e, output_mailbox_pointer_31_9) << 9);

	if (PRM_GET(cmd_queue_entry, e, type) != 0x7) {
		c.chain_status = 0x10;
		snprintf(c.chain_error, sizeof(c.chain_error), "entry type 0x%llx",
			 (unsigned long long)PRM_GET(cmd_queue_entry, e, type));
	} else if (d->cfg.check_signatures && cmdq_xor8(e, 64) != 0xff) {
		c.chain_status = 0x1;
		snprintf(c.chain_error, sizeof(c.chain_error), "entry signature");
	}
	if (!c.chain_status)
		c.chain_status = scripted_walk(d, &c, in_ptr, c.nin, c.in_box, 0x5, "input");
	if (!c.chain_status)
		c.chain_status = scripted_walk(d, &c, out_ptr, c.nout, c.out_box, 0x4, "output");

	/* Join the input the device's way: inline bytes, then each block's data. */
	if (!c.chain_status) {
		size_t done = c.inlen < 16 ? c.inlen : 16;

		memcpy(c.in, PRM_ADDR(cmd_queue_entry, e, command_input_inline_data), done);
		for (size_t i = 0; i < c.nin; i++) {
			size_t n = c.inlen - done < 512 ? c.inlen - done : 512;

			memcpy(c.in + done, PRM_ADDR(cmd_if_box, c.in_box[i], mailbox_data), n);
			done += n;
		}
		if (c.inlen >= 2)
			c.opcode = (uint16_t)PRM_GET(cmd_in, c.in, opcode);
	}
	free(d->last_in);
	d->last_in = malloc(c.inlen + 1);
	if (d->last_in)
		memcpy(d->last_in, c.in, c.inlen);
	d->last_inlen = c.inlen;
	d->last_chain_status = c.chain_status;

	if (c.chain_status)
		scripted_cmd_complete(d, &c, c.chain_status, false);
	else if (d->respond)
		d->respond(d, &c, d->respond_ctx);
	else
		scripted_default_responder(d, &c, NULL);
	free(c.in);
	free(c.in_box);
	free(c.out_box);
}

void scripted_cmd_reply(struct scripted_dev *d, struct scripted_cmd *c, const void *out, size_t len)
{
	const uint8_t *s = out;
	uint8_t *inl = PRM_ADDR(cmd_queue_entry, c->entry, command_output_inline_data);
	size_t done;

	(void)d;
	if (len > c->outlen)
		len = c->outlen;
	if (!out)
		len = 0;
	done = len < 16 ? len : 16;
	memset(inl, 0, 16);
	if (done)
		memcpy(inl, s, done);
	for (size_t i = 0; i < c->nout; i++) {
		uint8_t *data = PRM_ADDR(cmd_if_box, c->out_box[i], mailbox_data);
		size_t n = len - done < 512 ? len - done : 512;

		memset(data, 0, 512);
		if (n)
			memcpy(data, s + done, n);
		done += n;
		scripted_sign_box(c->out_box[i]);
	}
}

void scripted_cmd_complete(struct scripted_dev *d, struct scripted_cmd *c, uint8_t delivery_status,
			   bool hold_ownership)
{
	(void)d;
	PRM_SET(cmd_queue_entry, c->entry, status, delivery_status);
	if (!hold_ownership)
		PRM_SET(cmd_queue_entry, c->entry, ownership, 0);
	scripted_sign_entry(c->entry);
}

void scripted_dev_release(struct scripted_dev *d, unsigned slot)
{
	uint64_t iova = scripted_dev_cmdq_iova(d) + ((uint64_t)slot << d->cfg.log_cmdq_stride);
	uint8_t *e = scripted_dev_iova_to_va(d, iova, 64);

	if (!e)
		return;
	PRM_SET(cmd_queue_entry, e, ownership, 0);
	scripted_sign_entry(e);
}

/* ---- the BAR hook: the doorbell runs the responder ---- */

static void scripted_mmio(void *ctx, enum shim_mmio_op op, uint64_t off, unsigned size)
{
	struct scripted_dev *d = ctx;
	uint32_t v;

	(void)size;
	if (op != SHIM_MMIO_WRITE)
		return;
	v = prm_load_be32(d->bar_mem, (unsigned)off * 8u);
	if (d->nwrites < SCRIPTED_MAX_WRITES)
		d->writes[d->nwrites++] = (struct scripted_mmio_write){ off, v };
	if (off == scripted_iseg_dword(PRM_OFF(initial_seg, cmdq_phy_addr_31_12)))
		scripted_restore_owned_bits(d);
	if (off == scripted_iseg_dword(PRM_OFF(initial_seg, command_doorbell_vector))) {
		d->doorbells++;
		for (unsigned slot = 0; slot < 32; slot++)
			if (v & (1u << slot))
				scripted_process_slot(d, slot);
	}
}

/* ---- shim_ops ---- */

static int scripted_bar(struct shim_dev *dev, unsigned index, struct shim_bar *out)
{
	if (index != 0)
		return -ENOENT;
	*out = scripted_of(dev)->bar;
	return 0;
}

static int scripted_dma_pin(struct shim_dev *dev, void *va, size_t len, struct shim_pin *out)
{
	(void)dev, (void)va, (void)len, (void)out;
	return -EOPNOTSUPP;
}

static void scripted_dma_unpin(struct shim_dev *dev, struct shim_pin *pin)
{
	(void)dev, (void)pin;
}

static int scripted_irq_fd(struct shim_dev *dev, unsigned vector)
{
	(void)dev, (void)vector;
	return -EOPNOTSUPP;
}

/* No vectors (irq_fd refuses each): what shim_irq_count says for a shim without one. */
static unsigned scripted_irq_count(struct shim_dev *dev)
{
	(void)dev;
	return 0;
}

static int scripted_open(const char *args, struct shim_dev **out);

static void scripted_close(struct shim_dev *dev)
{
	scripted_dev_destroy(scripted_of(dev));
}

static const struct shim_ops scripted_ops = {
	SHIM_OPS_CORE("scripted", scripted),
};

static int scripted_open(const char *args, struct shim_dev **out)
{
	struct scripted_dev *d;

	(void)args;
	d = scripted_dev_create(NULL);
	if (!d)
		return -ENOMEM;
	*out = &d->shim;
	return 0;
}

struct scripted_dev *scripted_dev_create(const struct scripted_config *cfg)
{
	struct scripted_dev *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->bar_mem = aligned_alloc(4096, SCRIPTED_BAR_BYTES);
	if (!d->bar_mem) {
		free(d);
		return NULL;
	}
	memset(d->bar_mem, 0, SCRIPTED_BAR_BYTES);
	if (cfg)
		d->cfg = *cfg;
	else
		d->cfg = (struct scripted_config){ .cmd_interface_rev = 5, .log_cmdq_size = 5, .log_cmdq_stride = 6 };
	d->shim.ops = &scripted_ops;
	d->shim.pci.vendor_id = 0x15b3;
	d->shim.pci.device_id = 0x1017;
	snprintf(d->shim.pci.bdf, sizeof(d->shim.pci.bdf), "scripted:0");
	d->shim.page_size = 4096;
	d->next_iova = SCRIPTED_IOVA_BASE;
	d->hook.access = scripted_mmio;
	d->hook.ctx = d;
	d->bar.base = d->bar_mem;
	d->bar.len = SCRIPTED_BAR_BYTES;
	d->bar.hook = &d->hook;

	PRM_SET(initial_seg, d->bar_mem, fw_rev_major, 16);
	PRM_SET(initial_seg, d->bar_mem, fw_rev_minor, 35);
	PRM_SET(initial_seg, d->bar_mem, fw_rev_subminor, 2000);
	PRM_SET(initial_seg, d->bar_mem, cmd_interface_rev, d->cfg.cmd_interface_rev);
	scripted_restore_owned_bits(d);
	return d;
}

void scripted_dev_destroy(struct scripted_dev *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < SCRIPTED_MAX_DMA; i++)
		if (d->dma[i].live)
			free(d->dma[i].va);
	free(d->last_in);
	free(d->bar_mem);
	free(d);
}

void scripted_dev_set_responder(struct scripted_dev *d, scripted_responder_fn fn, void *ctx)
{
	d->respond = fn;
	d->respond_ctx = ctx;
}
