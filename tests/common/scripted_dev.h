/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A byte-level scripted device for tests: a shim_dev whose BAR 0 is plain memory holding
 * an initialization segment, whose DMA memory has IOVAs deliberately unlike its VAs
 * (through a translation table, as an IOMMU would), and whose doorbell write runs a
 * responder callback.
 *
 * The device side decodes the command queue entry and walks the mailbox chains by
 * itself (IOVA translation, block numbers, tokens, signatures), with the same
 * firmware-cmd/prm.h accessors firmware would use, and never through the engine's own
 * join/split: a test that compares bytes seen here with bytes the driver sent checks
 * the engine against an independent reading of the PRM.
 *
 * Use:
 *   struct scripted_dev *d = scripted_dev_create(NULL);      (cmd_interface_rev 5)
 *   scripted_dev_set_responder(d, my_responder, ctx);
 *   cmdq_create(&d->shim, &d->bar, &cfg, &q);
 * A responder looks at c->in/c->inlen, then calls scripted_cmd_reply() with the output
 * bytes and scripted_cmd_complete() with a delivery status.  It may tamper with the
 * entry or mailboxes between the two (or after) to script a faulty device.
 */
#ifndef UVERBS_TESTS_COMMON_SCRIPTED_DEV_H
#define UVERBS_TESTS_COMMON_SCRIPTED_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw/shim/shim.h"

#define SCRIPTED_BAR_BYTES 0x10000
#define SCRIPTED_MAX_DMA 256
#define SCRIPTED_MAX_WRITES 64

struct scripted_dev;

/* One command as the device decoded it from the queue. */
struct scripted_cmd {
	unsigned slot;
	uint8_t *entry;          /* VA of the entry in the queue page */
	uint8_t token;           /* token the driver wrote in the entry */
	uint16_t opcode;         /* cmd_in.opcode of the joined input (0 if inlen < 2) */
	uint8_t *in;             /* joined input: inline bytes then mailbox data */
	size_t inlen;            /* cmd_queue_entry.input_length */
	size_t outlen;           /* cmd_queue_entry.output_length */
	size_t nin, nout;        /* mailbox blocks in each chain */
	uint8_t **in_box;        /* VAs of the input blocks, chain order */
	uint8_t **out_box;       /* VAs of the output blocks, chain order */
	uint8_t chain_status;    /* delivery status the chain walk found (0: chains fine) */
	char chain_error[160];   /* why, when chain_status != 0 */
};

typedef void (*scripted_responder_fn)(struct scripted_dev *d, struct scripted_cmd *c, void *ctx);

struct scripted_dma_map {
	void *va;
	uint64_t iova;
	size_t len;
	bool live;
};

struct scripted_mmio_write {
	uint64_t off;
	uint32_t value;
};

struct scripted_config {
	uint16_t cmd_interface_rev;   /* written to the init segment as is */
	unsigned log_cmdq_size;
	unsigned log_cmdq_stride;
	bool check_signatures;        /* verify input signatures, report delivery status 1 */
};

struct scripted_dev {
	struct shim_dev shim;         /* first: the shim_ops cast back to scripted_dev */
	struct shim_bar bar;
	struct shim_mmio_hook hook;
	uint8_t *bar_mem;             /* SCRIPTED_BAR_BYTES of plain memory */
	struct scripted_config cfg;

	scripted_responder_fn respond; /* NULL: reply all-zero output, delivery ok */
	void *respond_ctx;

	struct scripted_dma_map dma[SCRIPTED_MAX_DMA];
	uint64_t next_iova;

	/* What the driver did, for tests to assert on. */
	unsigned doorbells;           /* writes to command_doorbell_vector */
	unsigned commands;            /* entries decoded */
	unsigned dma_faults;          /* IOVAs that did not translate */
	unsigned stray_doorbells;     /* doorbell for an entry the device does not own */
	unsigned live_dma;            /* allocations not yet freed */
	struct scripted_mmio_write writes[SCRIPTED_MAX_WRITES];
	unsigned nwrites;
	uint8_t last_entry[64];       /* entry image as the driver handed it over */
	uint8_t *last_in;             /* copy of the last joined input (owned here) */
	size_t last_inlen;
	uint8_t last_chain_status;
};

/* NULL cfg: cmd_interface_rev 5, log_cmdq_size 5, log_cmdq_stride 6, no signature checks. */
struct scripted_dev *scripted_dev_create(const struct scripted_config *cfg);
void scripted_dev_destroy(struct scripted_dev *d);

void scripted_dev_set_responder(struct scripted_dev *d, scripted_responder_fn fn, void *ctx);

/* IOVA -> VA through the translation table; NULL (and dma_faults++) if [iova, iova+len)
 * is not inside one live allocation. */
void *scripted_dev_iova_to_va(struct scripted_dev *d, uint64_t iova, size_t len);

/* IOVA of the command queue as programmed in the init segment. */
uint64_t scripted_dev_cmdq_iova(const struct scripted_dev *d);

/* Write `len` output bytes into the entry's output inline data and the output mailbox
 * data (len is clipped to c->outlen), and sign the output blocks (ctrl_signature and
 * signature, as the device does when signatures are on).  Tokens and block numbers
 * the driver put in the output blocks are left as they are. */
void scripted_cmd_reply(struct scripted_dev *d, struct scripted_cmd *c, const void *out, size_t len);

/* Finish the entry: delivery status, entry signature, and ownership back to software
 * unless hold_ownership (then scripted_dev_release() does it later, e.g. from an event
 * mode test's wait callback). */
void scripted_cmd_complete(struct scripted_dev *d, struct scripted_cmd *c, uint8_t delivery_status,
			   bool hold_ownership);

/* Hand slot's entry back to software (and re-sign it). */
void scripted_dev_release(struct scripted_dev *d, unsigned slot);

/* Offset in BAR 0 of the dword holding an initial_seg field (PRM bit offset). */
uint64_t scripted_iseg_dword(unsigned bit_off);

#endif
