/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The command-queue engine (docs/architecture.md, "The command interface"): PRM "Command Interface".
 *
 * One command at a time goes through slot 0 of the command queue, serialised by a
 * mutex so threads can share a device.  The queue's last entry is a second slot for
 * the one kind of command that must run while slot 0 is outstanding: MANAGE_PAGES
 * answering a PAGE_REQUEST the firmware raised because it needs pages to finish the
 * slot 0 command (cmdq_exec_nested; rdma-core providers/mlx5/mlx5_vfio.c keeps slot
 * MLX5_MAX_COMMANDS - 1 for it, Linux pagealloc.c runs it from its own work queue).
 * The steps, each citing the PRM part it follows:
 *   cmdq_create   "Initialization Segment" + "Command Queue": check cmd_interface_rev,
 *                 read log_cmdq_size/stride, hand the queue page to the device;
 *   cmdq_exec     "Command Queue Entry" + "Command Mailbox": build the entry and the
 *                 mailbox chains, sign them, pass ownership, ring the doorbell vector;
 *                 then wait ("Command Completion": ownership back to software, or the
 *                 CMD completion EQE), check delivery status, token and (only when
 *                 checksums are on, verify_signatures) signatures, and decode the output's status and syndrome ("Command Status").
 * Behaviour cross-checked with Linux mlx5_core cmd.c and rdma-core mlx5_vfio.c.
 */
#include "firmware-cmd/cmdq.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "hw/shim/mmio.h"

#define CMDQ_IF_REV 5               /* PRM: cmd_interface_rev this interface speaks */
#define CMDQ_TYPE_PCIE 0x7          /* cmd_queue_entry.type: PCIe command interface */
#define CMDQ_QUEUE_BYTES 4096       /* the queue lives in one 4 KiB adapter page */
#define CMDQ_MIN_LOG_STRIDE 6       /* an entry is 64 bytes */
#define CMDQ_POOL_DATA_BYTES 8192   /* mailbox data kept ready per direction */
#define CMDQ_DEFAULT_MAX_MAILBOX (1u << 20)
#define CMDQ_SLOT 0u

/* One slot the engine uses: its entry number and its own ready mailbox blocks (a
 * nested command must not touch the boxes of the command it runs beside). */
struct cmdq_slot {
	unsigned index;
	struct shim_dma pool;       /* a view into cmdq.pool: in_boxes then out_boxes, or
	                             * (pool_own) one of its own, after a move */
	bool pool_own;
};

struct cmdq {
	struct shim_dev *dev;
	struct shim_bar bar;
	pthread_mutex_t lock;

	struct shim_dma queue;      /* 2^log_size entries of 2^log_stride bytes */
	unsigned log_size, log_stride;

	/* Ready mailbox blocks, CMDQ_BOX_STRIDE apart: per used slot, in_boxes then
	 * out_boxes.  slots[0] is CMDQ_SLOT; slots[1] the nested slot, the queue's last
	 * entry, when the queue has more than one (nslots == 2). */
	struct shim_dma pool;
	size_t pool_boxes;          /* per direction and slot */
	struct cmdq_slot slots[2];
	unsigned nslots;

	/* The thread inside the wait function of a slot 0 command (the only one allowed
	 * to issue a nested command), and whether a nested command is in flight. */
	atomic_bool in_wait;
	pthread_t wait_thread;
	bool nested_busy;

	unsigned timeout_ms;
	bool use_signatures;        /* sign what we post */
	bool verify_signatures;     /* check what the device completes (cmdif_checksum on) */
	size_t max_mailbox_bytes;
	uint8_t token;

	cmdq_wait_fn wait;          /* NULL: polling mode */
	void *wait_ctx;
	atomic_uint completed;      /* vector bits reported by cmdq_event_complete */

	/* The device's error state (cmdq_set_down): down_err is 0 while it is up, then the
	 * errno every wait and every later command ends with.  down_claimed lets one caller
	 * write down_why before down_err is published. */
	atomic_int down_err;
	atomic_bool down_claimed;
	char down_why[CMDQ_ERR_LEN];
	cmdq_health_fn health;      /* looked at by the waiting thread (cmdq_set_health_check) */
	void *health_ctx;

	uint8_t last_status;
	uint32_t last_syndrome;
	char err[CMDQ_ERR_LEN];

	/* Mailboxes allocated for a command that timed out: the device may still DMA into
	 * them (it owns the slot until a reset), so they are freed only with the queue. */
	struct shim_dma *stale;
	size_t nstale;
	/* Entries a timed-out command left owned by the device (bit per index): slot 0's
	 * commands moved to another entry (cmdq_move_main_slot); one comes back when the
	 * device hands it back. */
	uint32_t abandoned;
	unsigned moves;             /* times the main slot moved (cmdq_slot_moves) */
};

/* ---- ordering between host memory the device reads by DMA and the doorbell ----
 * Named by purpose (conventions: "Errors and logging", "The data path"): the same
 * reasoning as rdma-core's udma_to_device_barrier / udma_from_device_barrier. */

/* One barrier per architecture: the aarch64 instruction, or on other machines a C11
 * fence of the given order.  On x86-64 stores are not reordered with stores nor loads
 * with loads, so a compiler barrier suffices. */
#if defined(__aarch64__)
#define CMDQ_BARRIER(aarch64_insn, c11_order) __asm__ volatile(aarch64_insn ::: "memory")
#elif defined(__x86_64__) || defined(__i386__)
#define CMDQ_BARRIER(aarch64_insn, c11_order) __asm__ volatile("" ::: "memory")
#else
#define CMDQ_BARRIER(aarch64_insn, c11_order) atomic_thread_fence(c11_order)
#endif

/* Entry and mailboxes must be visible to the device before it sees ownership and the
 * doorbell: on aarch64 a dsb st orders normal-memory stores before the device-memory
 * store. */
static inline void cmdq_barrier_to_device(void)
{
	CMDQ_BARRIER("dsb st", memory_order_seq_cst);
}

/* After ownership reads as "software", the rest of the entry and the output boxes the
 * device wrote must not be read from before that check. */
static inline void cmdq_barrier_from_device(void)
{
	CMDQ_BARRIER("dmb oshld", memory_order_acquire);
}

/* ---- errors ---- */

/* Word the error into an error buffer (the queue's, or before there is a queue the
 * device's) and return rc. */
static int cmdq_errf(char *err, size_t len, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int cmdq_errf(char *err, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return rc;
}
#define cmdq_fail(q, rc, ...) cmdq_errf((q)->err, sizeof((q)->err), (rc), __VA_ARGS__)
#define cmdq_dev_fail(dev, rc, ...) cmdq_errf((dev)->err, sizeof((dev)->err), (rc), __VA_ARGS__)

/* ---- initialization segment registers ----
 * Registers are read and written as whole big-endian dwords through hw/shim/mmio.h;
 * the field inside the dword is picked by the initial_seg accessors on a local image of
 * the segment's first dwords, so no shift or mask is written here. */

#define CMDQ_ISEG_IMAGE_BYTES 32

static uint64_t cmdq_iseg_dword_off(unsigned bit_off)
{
	return (bit_off / 32u) * 4u;
}

/* Load the dword holding the field at bit_off into the image. */
static void cmdq_iseg_load(const struct shim_bar *bar, uint8_t *img, unsigned bit_off)
{
	prm_store_be32(img, bit_off, shim_mmio_read32(bar, cmdq_iseg_dword_off(bit_off)));
}

/* Store the image's dword holding the field at bit_off to the register. */
static void cmdq_iseg_store(const struct shim_bar *bar, const uint8_t *img, unsigned bit_off)
{
	shim_mmio_write32(bar, cmdq_iseg_dword_off(bit_off), prm_load_be32(img, bit_off));
}

/* ---- creation ---- */

/* DMA memory for the queue or its mailbox pool: `len` bytes asked for at `align`, whose
 * IOVA must be a multiple of `need` (initial_seg.cmdq_phy_addr_31_12 and
 * cmd_if_box.next_pointer_31_10 have no low bits).  On failure m->va is
 * NULL, the error is worded in dev->err. */
static int cmdq_dma_alloc(struct shim_dev *dev, size_t len, size_t align, size_t need, struct shim_dma *m,
			  const char *what)
{
	int rc = shim_dma_alloc(dev, len, align, m);

	if (rc < 0) {
		m->va = NULL;
		return cmdq_dev_fail(dev, rc, "cmdq: cannot allocate the %s memory (%zu bytes): %s", what, len,
				     strerror(-rc));
	}
	if (m->iova & (need - 1))
		return cmdq_dev_fail(dev, -EINVAL, "cmdq: %s IOVA 0x%llx is not %zu KiB aligned", what,
				     (unsigned long long)m->iova, need / 1024);
	return 0;
}

int cmdq_create(struct shim_dev *dev, const struct shim_bar *bar, const struct cmdq_config *cfg,
		struct cmdq **out)
{
	uint8_t img[CMDQ_ISEG_IMAGE_BYTES] = { 0 };
	struct cmdq *q;
	unsigned rev;
	size_t pool_data;
	int rc;

	if (out)
		*out = NULL;
	if (!dev || !bar || !out)
		return -EINVAL;
	if (!bar->base || bar->len < CMDQ_ISEG_IMAGE_BYTES)
		return cmdq_dev_fail(dev, -EINVAL, "cmdq: BAR 0 is not mapped or too short (%zu bytes)", bar->len);

	/* PRM "Initialization Segment": cmd_interface_rev must be 5.  All-ones means the
	 * device is gone (surprise removal): a BAR read of a vanished function returns it. */
	cmdq_iseg_load(bar, img, PRM_OFF(initial_seg, cmd_interface_rev));
	rev = (unsigned)PRM_GET(initial_seg, img, cmd_interface_rev);
	if (prm_load_be32(img, PRM_OFF(initial_seg, cmd_interface_rev)) == 0xffffffffu)
		return cmdq_dev_fail(dev, -ENODEV, "cmdq: device not responding (init segment reads all-ones)");
	if (rev != CMDQ_IF_REV)
		return cmdq_dev_fail(dev, -EOPNOTSUPP,
				     "cmdq: unsupported cmd_interface_rev %u (0x%x), this driver speaks %u",
				     rev, rev, CMDQ_IF_REV);

	q = calloc(1, sizeof(*q));
	if (!q)
		return cmdq_dev_fail(dev, -ENOMEM, "cmdq: out of memory");
	q->dev = dev;
	q->bar = *bar;
	q->timeout_ms = cfg && cfg->timeout_ms ? cfg->timeout_ms : CMDQ_DEFAULT_TIMEOUT_MS;
	q->use_signatures = cfg && cfg->use_signatures;
	q->verify_signatures = cfg && cfg->verify_signatures;
	q->max_mailbox_bytes = cfg && cfg->max_mailbox_bytes ? cfg->max_mailbox_bytes : CMDQ_DEFAULT_MAX_MAILBOX;
	atomic_init(&q->completed, 0);
	atomic_init(&q->in_wait, false);
	atomic_init(&q->down_err, 0);
	atomic_init(&q->down_claimed, false);
	rc = pthread_mutex_init(&q->lock, NULL);
	if (rc) {
		free(q);
		return cmdq_dev_fail(dev, -rc, "cmdq: mutex init failed");
	}

	/* PRM "Command Queue": the device owns log_cmdq_size/log_cmdq_stride (the low bits
	 * of the cmdq_phy_addr_31_12 dword); the queue must fit one 4 KiB page. */
	cmdq_iseg_load(bar, img, PRM_OFF(initial_seg, log_cmdq_size));
	q->log_size = (unsigned)PRM_GET(initial_seg, img, log_cmdq_size);
	q->log_stride = (unsigned)PRM_GET(initial_seg, img, log_cmdq_stride);
	if (q->log_stride < CMDQ_MIN_LOG_STRIDE || q->log_size + q->log_stride > 12) {
		rc = cmdq_dev_fail(dev, -EPROTO,
				   "cmdq: device reports log_cmdq_size %u, log_cmdq_stride %u: the queue must hold entries of at least 64 bytes in one 4 KiB page",
				   q->log_size, q->log_stride);
		goto fail;
	}

	rc = cmdq_dma_alloc(dev, CMDQ_QUEUE_BYTES, CMDQ_QUEUE_BYTES, CMDQ_QUEUE_BYTES, &q->queue, "queue");
	if (rc < 0)
		goto fail;
	memset(q->queue.va, 0, CMDQ_QUEUE_BYTES);

	/* PRM "Command Queue": 2^log_cmdq_size entries.  Slot 0 carries every command;
	 * the last entry, when there is more than one, carries nested ones.  A queue of
	 * one entry works as before, with page requests served after the command. */
	q->nslots = q->log_size > 0 ? 2 : 1;
	q->slots[0].index = CMDQ_SLOT;
	q->slots[1].index = (1u << q->log_size) - 1;

	/* Mailbox pool: one cmd_if_box per 1 KiB (which keeps next_pointer_31_10 exact),
	 * enough for ordinary commands in both directions, per slot; bigger ones allocate
	 * on demand. */
	pool_data = q->max_mailbox_bytes < CMDQ_POOL_DATA_BYTES ? q->max_mailbox_bytes : CMDQ_POOL_DATA_BYTES;
	q->pool_boxes = cmdq_boxes_for(pool_data);
	if (q->pool_boxes) {
		size_t per_slot = 2 * q->pool_boxes * CMDQ_BOX_STRIDE;

		rc = cmdq_dma_alloc(dev, q->nslots * per_slot, CMDQ_QUEUE_BYTES, CMDQ_BOX_STRIDE, &q->pool, "mailbox");
		if (rc < 0)
			goto fail;
		for (unsigned i = 0; i < q->nslots; i++) {
			q->slots[i].pool = q->pool;
			q->slots[i].pool.va = (uint8_t *)q->pool.va + i * per_slot;
			q->slots[i].pool.iova = q->pool.iova + i * per_slot;
			q->slots[i].pool.len = per_slot;
		}
	}

	/* PRM "Initialization Segment": high address dword first, then the low one, whose
	 * write makes the device take the address.  Only the address bits are written (the
	 * rest of the image is zero), as Linux and rdma-core do: the size bits are the
	 * device's. */
	memset(img, 0, sizeof(img));
	PRM_SET(initial_seg, img, cmdq_phy_addr_63_32, q->queue.iova >> 32);
	PRM_SET(initial_seg, img, cmdq_phy_addr_31_12, (q->queue.iova & 0xffffffffu) >> 12);
	cmdq_iseg_store(bar, img, PRM_OFF(initial_seg, cmdq_phy_addr_63_32));
	cmdq_iseg_store(bar, img, PRM_OFF(initial_seg, cmdq_phy_addr_31_12));

	*out = q;
	return 0;

fail:
	if (q->pool.va)
		shim_dma_free(dev, &q->pool);
	if (q->queue.va)
		shim_dma_free(dev, &q->queue);
	pthread_mutex_destroy(&q->lock);
	free(q);
	return rc;
}

void cmdq_destroy(struct cmdq *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->nstale; i++)
		shim_dma_free(q->dev, &q->stale[i]);
	free(q->stale);
	if (q->slots[0].pool_own)
		shim_dma_free(q->dev, &q->slots[0].pool);
	if (q->pool.va)
		shim_dma_free(q->dev, &q->pool);
	if (q->queue.va)
		shim_dma_free(q->dev, &q->queue);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

/* ---- settings ---- */

/* True on the thread that is inside the wait function of a slot 0 command (it holds
 * the mutex); wait_thread is written before in_wait is set. */
static bool cmdq_waiting_thread(const struct cmdq *q)
{
	return atomic_load(&q->in_wait) && pthread_equal(q->wait_thread, pthread_self());
}

void cmdq_set_event_mode(struct cmdq *q, cmdq_wait_fn wait, void *ctx)
{
	if (!q)
		return;
	/* Called from inside the wait function (a fatal-error EQE drained there puts the
	 * driver back to polling): this thread already holds the mutex. */
	if (cmdq_waiting_thread(q)) {
		q->wait = wait;
		q->wait_ctx = ctx;
		return;
	}
	pthread_mutex_lock(&q->lock);
	q->wait = wait;
	q->wait_ctx = ctx;
	pthread_mutex_unlock(&q->lock);
}

void cmdq_set_polling_mode(struct cmdq *q)
{
	cmdq_set_event_mode(q, NULL, NULL);
}

/* Called by whoever drains the EQ (any thread, or from inside the wait callback):
 * lock-free so it never waits for the command it completes. */
void cmdq_event_complete(struct cmdq *q, uint32_t vector_mask)
{
	if (q)
		atomic_fetch_or(&q->completed, vector_mask);
}

/* Linux health.c mlx5_enter_error_state() calls cmd.c mlx5_cmd_flush(): every pending
 * command is completed by force (mlx5_cmd_trigger_completions()), since firmware in a
 * fatal state completes none, and from then on mlx5_cmd_is_down() refuses every new one.
 * Here: lock-free, so that any thread (the wait function, the health check, a thread
 * that does not hold the queue) can call it; the waiting thread sees it at its next
 * look (every spin of the poll, every return of the wait function). */
void cmdq_set_down(struct cmdq *q, int err, const char *why)
{
	if (!q || err >= 0)
		return;
	bool was = false;
	if (!atomic_compare_exchange_strong(&q->down_claimed, &was, true))
		return;   /* the first reason stays */
	snprintf(q->down_why, sizeof(q->down_why), "%s", why && *why ? why : "device in error state");
	atomic_store_explicit(&q->down_err, err, memory_order_release);
}

int cmdq_is_down(const struct cmdq *q)
{
	return q ? atomic_load_explicit(&q->down_err, memory_order_acquire) : -EINVAL;
}

void cmdq_set_health_check(struct cmdq *q, cmdq_health_fn fn, void *ctx)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->health = fn;
	q->health_ctx = ctx;
	pthread_mutex_unlock(&q->lock);
}

void cmdq_set_timeout(struct cmdq *q, unsigned timeout_ms)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->timeout_ms = timeout_ms ? timeout_ms : CMDQ_DEFAULT_TIMEOUT_MS;
	pthread_mutex_unlock(&q->lock);
}

void cmdq_set_verify_signatures(struct cmdq *q, int on)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->verify_signatures = on != 0;
	pthread_mutex_unlock(&q->lock);
}

const char *cmdq_error(const struct cmdq *q)
{
	return q ? q->err : "no command queue";
}

uint8_t cmdq_last_status(const struct cmdq *q)
{
	return q ? q->last_status : 0;
}

uint32_t cmdq_last_syndrome(const struct cmdq *q)
{
	return q ? q->last_syndrome : 0;
}

/* ---- one command ---- */

/* The mailbox blocks of one command: nin input boxes, then nout output boxes. */
struct cmdq_boxes {
	struct shim_dma dma;    /* the pool, or an on-demand allocation */
	bool on_demand;
	size_t nin, nout;
};

static uint8_t *cmdq_box_va(const struct cmdq_boxes *b, size_t i)
{
	return (uint8_t *)b->dma.va + i * CMDQ_BOX_STRIDE;
}

static uint64_t cmdq_box_iova(const struct cmdq_boxes *b, size_t i)
{
	return b->dma.iova + i * CMDQ_BOX_STRIDE;
}

static uint64_t cmdq_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The entry's last dword holds token, signature, status and ownership; the device
 * flips ownership there, so it is read with one atomic load into an image. */
static uint8_t cmdq_entry_ownership(const uint8_t *entry)
{
	uint8_t img[PRM_SIZE(cmd_queue_entry)] = { 0 };
	const unsigned off = PRM_OFF(cmd_queue_entry, ownership);
	uint32_t dw = __atomic_load_n((const uint32_t *)(entry + (off / 32) * 4), __ATOMIC_ACQUIRE);

	memcpy(img + (off / 32) * 4, &dw, sizeof(dw));
	return (uint8_t)PRM_GET(cmd_queue_entry, img, ownership);
}

/* Chain a direction's boxes: PRM "Command Mailbox": next_pointer (0 ends the chain),
 * block_number counting from 0, the command's token in every block. */
static void cmdq_chain_boxes(const struct cmdq_boxes *b, size_t first, size_t n, uint8_t token)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t *box = cmdq_box_va(b, first + i);
		uint64_t next = i + 1 < n ? cmdq_box_iova(b, first + i + 1) : 0;

		PRM_SET(cmd_if_box, box, next_pointer_63_32, next >> 32);
		PRM_SET(cmd_if_box, box, next_pointer_31_10, (next & 0xffffffffu) >> 10);
		PRM_SET(cmd_if_box, box, block_number, i);
		PRM_SET(cmd_if_box, box, token, token);
	}
}

/* Mailbox signatures (PRM "Command Mailbox"; Linux calc_block_sig): ctrl_signature
 * covers the control part from the end of mailbox_data up to and including the token
 * (bytes 512..573); signature covers the whole block except itself (bytes 0..574).
 * Each is the complement of the XOR, so the XOR over the covered bytes plus the
 * signature is 0xff. */
#define CMDQ_BOX_CTRL_OFF (PRM_OFF(cmd_if_box, mailbox_data) / 8 + PRM_WIDTH(cmd_if_box, mailbox_data) / 8)
#define CMDQ_BOX_CTRL_SIG_OFF (PRM_OFF(cmd_if_box, ctrl_signature) / 8)
#define CMDQ_BOX_SIG_OFF (PRM_OFF(cmd_if_box, signature) / 8)

static void cmdq_sign_box(uint8_t *box)
{
	PRM_SET(cmd_if_box, box, ctrl_signature,
		(uint8_t)~cmdq_xor8(box + CMDQ_BOX_CTRL_OFF, CMDQ_BOX_CTRL_SIG_OFF - CMDQ_BOX_CTRL_OFF));
	PRM_SET(cmd_if_box, box, signature, (uint8_t)~cmdq_xor8(box, CMDQ_BOX_SIG_OFF));
}

static bool cmdq_box_signature_ok(const uint8_t *box)
{
	return cmdq_xor8(box + CMDQ_BOX_CTRL_OFF, CMDQ_BOX_CTRL_SIG_OFF + 1 - CMDQ_BOX_CTRL_OFF) == 0xff &&
	       cmdq_xor8(box, PRM_SIZE(cmd_if_box)) == 0xff;
}

static int cmdq_get_boxes(struct cmdq *q, const struct cmdq_slot *slot, const char *name, size_t nin, size_t nout,
			  struct cmdq_boxes *b)
{
	int rc;

	memset(b, 0, sizeof(*b));
	b->nin = nin;
	b->nout = nout;
	if (nin + nout == 0)
		return 0;
	if (nin <= q->pool_boxes && nout <= q->pool_boxes) {
		b->dma = slot->pool;
		return 0;
	}
	rc = shim_dma_alloc(q->dev, (nin + nout) * CMDQ_BOX_STRIDE, CMDQ_QUEUE_BYTES, &b->dma);
	if (rc < 0)
		return cmdq_fail(q, rc, "%s: cannot allocate %zu mailbox blocks: %s", name, nin + nout,
				 strerror(-rc));
	if (b->dma.iova & (CMDQ_BOX_STRIDE - 1)) {
		shim_dma_free(q->dev, &b->dma);
		return cmdq_fail(q, -EINVAL, "%s: mailbox IOVA 0x%llx is not 1 KiB aligned", name,
				 (unsigned long long)b->dma.iova);
	}
	b->on_demand = true;
	return 0;
}

static void cmdq_put_boxes(struct cmdq *q, struct cmdq_boxes *b, bool device_owns)
{
	if (!b->on_demand)
		return;
	if (device_owns) {
		/* Keep them mapped for a device that may still answer; if even the list
		 * cannot grow, leak rather than let the device write freed memory. */
		struct shim_dma *n = realloc(q->stale, (q->nstale + 1) * sizeof(*n));
		if (n) {
			q->stale = n;
			q->stale[q->nstale++] = b->dma;
		}
		return;
	}
	shim_dma_free(q->dev, &b->dma);
}

/* Wait for the device to hand the entry back (PRM "Command Completion").  Polling reads
 * ownership in host memory (DMA memory, never MMIO); event mode waits for the CMD
 * completion EQE forwarded through cmdq_event_complete.  Every wait is bounded by the
 * deadline. */
/* A function that was surprise-removed (a Thunderbolt cable pulled) answers every BAR
 * read with all-ones and will never hand the entry back: a wait longer than a moment
 * looks at the init segment's first dword once per millisecond, so it ends at once
 * instead of at the command timeout. */
static bool cmdq_device_gone(struct cmdq *q, uint64_t now, uint64_t *next_check)
{
	if (now < *next_check)
		return false;
	*next_check = now + 1;
	return shim_mmio_read32(&q->bar, 0) == 0xffffffffu;
}

/* `events`: wait through the driver's wait function (slot 0 in event mode).  A nested
 * command always polls: its wait must never call the wait function again, which is
 * what would recurse (a page request met there would want a third slot). */
/* The health check (cmdq_set_health_check), at most every CMDQ_HEALTH_CHECK_MS: run as
 * the wait function is, marked as the waiting thread, so that it may call
 * cmdq_set_polling_mode and cmdq_set_down while this thread holds the mutex.  The
 * device's error state, the check's finding or anyone else's: its errno, or 0. */
static int cmdq_look_down(struct cmdq *q, uint64_t now, uint64_t *next_health)
{
	if (q->health && now >= *next_health) {
		*next_health = now + CMDQ_HEALTH_CHECK_MS;
		q->wait_thread = pthread_self();
		atomic_store(&q->in_wait, true);
		q->health(q->health_ctx);
		atomic_store(&q->in_wait, false);
	}
	return atomic_load_explicit(&q->down_err, memory_order_acquire);
}

static int cmdq_wait_done(struct cmdq *q, const uint8_t *entry, uint32_t bit, uint64_t deadline, bool events)
{
	unsigned spins = 0;
	uint64_t next_check = 0;
	/* the first look at the device's health one period after the post: a command that
	 * completes in time never pays for it */
	uint64_t next_health = cmdq_now_ms() + CMDQ_HEALTH_CHECK_MS;
	int down;

	if (events && q->wait) {
		/* q->wait turns NULL when the wait function itself switched to polling. */
		while (q->wait && !(atomic_load(&q->completed) & bit)) {
			uint64_t now = cmdq_now_ms();
			int rc;

			if (now >= deadline)
				return -ETIMEDOUT;
			if (cmdq_device_gone(q, now, &next_check))
				return -ENODEV;
			if ((down = cmdq_look_down(q, now, &next_health)))
				return down;
			if (!q->wait)   /* the health check switched to polling */
				break;
			/* woken at least once per health period to look */
			uint64_t left = deadline - now;
			if (q->health && left > CMDQ_HEALTH_CHECK_MS)
				left = CMDQ_HEALTH_CHECK_MS;
			q->wait_thread = pthread_self();
			atomic_store(&q->in_wait, true);
			rc = q->wait(q->wait_ctx, (unsigned)left);
			atomic_store(&q->in_wait, false);
			if (rc < 0 && rc != -ETIMEDOUT && rc != -EINTR && rc != -EAGAIN)
				return rc;
		}
		/* The event says the entry is done; the ownership bit must agree, and the
		 * bounded poll below covers a device that posts the EQE a moment early. */
	}
	while (cmdq_entry_ownership(entry)) {
		uint64_t now;

		/* a fatal error found by the wait function just now, or by another thread */
		if ((down = atomic_load_explicit(&q->down_err, memory_order_acquire)))
			return down;
		if (++spins < 1000)
			continue;
		now = cmdq_now_ms();
		if (now >= deadline)
			return cmdq_entry_ownership(entry) ? -ETIMEDOUT : 0;
		/* a nested command (inside the wait function) leaves the look to its parent */
		if (!cmdq_waiting_thread(q) && (down = cmdq_look_down(q, now, &next_health)))
			return cmdq_entry_ownership(entry) ? down : 0;
		if (spins >= 2000 && cmdq_device_gone(q, now, &next_check))
			return cmdq_entry_ownership(entry) ? -ENODEV : 0;
		if (spins < 2000) {
			sched_yield();
		} else {
			struct timespec ts = { 0, 20000 };

			nanosleep(&ts, NULL);
		}
	}
	return 0;
}

/* One command on its way through a slot: what the steps of cmdq_exec_locked share. */
struct cmdq_run {
	const char *name;            /* opcode name, for messages */
	uint8_t ent[PRM_SIZE(cmd_queue_entry)]; /* image of the entry */
	struct cmdq_boxes boxes;
	size_t nin, nout;            /* input and output mailboxes */
	uint8_t token;
};

/* Step 1: the lengths fit the entry and the mailbox pool; the mailboxes each needs. */
static int cmdq_check_lengths(struct cmdq *q, struct cmdq_run *r, size_t inlen, size_t outlen)
{
	size_t in_box_bytes, out_box_bytes;

	if (outlen < CMDQ_INLINE_BYTES)
		return cmdq_fail(q, -EINVAL,
				 "%s: output buffer of %zu bytes is shorter than the %d-byte command output header",
				 r->name, outlen, CMDQ_INLINE_BYTES);
	in_box_bytes = inlen > CMDQ_INLINE_BYTES ? inlen - CMDQ_INLINE_BYTES : 0;
	out_box_bytes = outlen - CMDQ_INLINE_BYTES;
	if (in_box_bytes > q->max_mailbox_bytes)
		return cmdq_fail(q, -E2BIG, "%s: input of %zu bytes needs %zu mailbox bytes, more than max_mailbox_bytes %zu",
				 r->name, inlen, in_box_bytes, q->max_mailbox_bytes);
	if (out_box_bytes > q->max_mailbox_bytes)
		return cmdq_fail(q, -E2BIG, "%s: output of %zu bytes needs %zu mailbox bytes, more than max_mailbox_bytes %zu",
				 r->name, outlen, out_box_bytes, q->max_mailbox_bytes);
	if (inlen > UINT32_MAX || outlen > UINT32_MAX)
		return cmdq_fail(q, -E2BIG, "%s: length does not fit the entry's 32-bit length fields", r->name);
	r->nin = cmdq_boxes_for(in_box_bytes);
	r->nout = cmdq_boxes_for(out_box_bytes);
	return 0;
}

/* Step 2: a fresh non-zero token per command (PRM "Command Queue Entry": token; it ties
 * the entry and every mailbox to this command, 0 is never used, as Linux does), and the
 * mailboxes (PRM "Command Mailbox"): zero the whole block so reserved bytes are zero,
 * chain, copy the input; output blocks carry token and block numbers too. */
static void cmdq_fill_boxes(struct cmdq *q, struct cmdq_run *r, const void *in, size_t inlen)
{
	if (++q->token == 0)
		q->token = 1;
	r->token = q->token;
	if (r->nin + r->nout)
		memset(r->boxes.dma.va, 0, (r->nin + r->nout) * CMDQ_BOX_STRIDE);
	cmdq_split(in, inlen, PRM_ADDR(cmd_queue_entry, r->ent, command_input_inline_data),
		   r->nin ? cmdq_box_va(&r->boxes, 0) : NULL, r->nin, CMDQ_BOX_STRIDE);
	cmdq_chain_boxes(&r->boxes, 0, r->nin, r->token);
	cmdq_chain_boxes(&r->boxes, r->nin, r->nout, r->token);
	if (q->use_signatures)
		for (size_t i = 0; i < r->nin + r->nout; i++)
			cmdq_sign_box(cmdq_box_va(&r->boxes, i));
}

/* Step 3: the entry (PRM "Command Queue Entry"), built in an image and signed as the
 * device will see it, with ownership = hardware (entry signature over all 64 bytes). */
static void cmdq_build_entry(struct cmdq_run *r, size_t inlen, size_t outlen)
{
	uint8_t *ent = r->ent;

	PRM_SET(cmd_queue_entry, ent, type, CMDQ_TYPE_PCIE);
	PRM_SET(cmd_queue_entry, ent, input_length, inlen);
	PRM_SET(cmd_queue_entry, ent, output_length, outlen);
	if (r->nin) {
		PRM_SET(cmd_queue_entry, ent, input_mailbox_pointer_63_32, cmdq_box_iova(&r->boxes, 0) >> 32);
		PRM_SET(cmd_queue_entry, ent, input_mailbox_pointer_31_9,
			(cmdq_box_iova(&r->boxes, 0) & 0xffffffffu) >> 9);
	}
	if (r->nout) {
		PRM_SET(cmd_queue_entry, ent, output_mailbox_pointer_63_32, cmdq_box_iova(&r->boxes, r->nin) >> 32);
		PRM_SET(cmd_queue_entry, ent, output_mailbox_pointer_31_9,
			(cmdq_box_iova(&r->boxes, r->nin) & 0xffffffffu) >> 9);
	}
	PRM_SET(cmd_queue_entry, ent, token, r->token);
	PRM_SET(cmd_queue_entry, ent, ownership, 1);
	PRM_SET(cmd_queue_entry, ent, signature, (uint8_t)~cmdq_xor8(ent, PRM_SIZE(cmd_queue_entry)));
}

/* Step 4: publish everything but the ownership dword, then (after the barrier) that
 * dword in one store, so the device never sees ownership before the rest; then ring
 * the doorbell (PRM "Initialization Segment": command_doorbell_vector, one bit per slot). */
static void cmdq_post_entry(struct cmdq *q, struct cmdq_run *r, uint8_t *entry, uint32_t bit)
{
	const unsigned own_dw = PRM_OFF(cmd_queue_entry, ownership) / 32 * 4;
	uint8_t img[CMDQ_ISEG_IMAGE_BYTES] = { 0 };
	uint32_t last_dw;

	memcpy(&last_dw, r->ent + own_dw, sizeof(last_dw));
	PRM_SET(cmd_queue_entry, r->ent, ownership, 0);
	memcpy(entry, r->ent, sizeof(r->ent));
	atomic_fetch_and(&q->completed, ~bit);
	cmdq_barrier_to_device();
	__atomic_store_n((uint32_t *)(entry + own_dw), last_dw, __ATOMIC_RELEASE);
	cmdq_barrier_to_device();

	PRM_SET(initial_seg, img, command_doorbell_vector, bit);
	cmdq_iseg_store(&q->bar, img, PRM_OFF(initial_seg, command_doorbell_vector));
}

/* Step 5: what a failed wait means, as the device error. */
static int cmdq_wait_failed(struct cmdq *q, const struct cmdq_run *r, int rc)
{
	if (rc == -ETIMEDOUT)
		return cmdq_fail(q, rc, "%s: timeout after %u ms", r->name, q->timeout_ms);
	if (rc == atomic_load(&q->down_err))
		return cmdq_fail(q, rc, "%s: aborted: the device entered the error state (%s)", r->name,
				 q->down_why);
	if (rc == -ENODEV)
		return cmdq_fail(q, rc, "%s: device not responding (BAR reads all-ones)", r->name);
	return cmdq_fail(q, rc, "%s: waiting for the completion event failed: %s", r->name, strerror(-rc));
}

/* Step 6: the returned entry and output mailboxes are this command's, intact: delivery
 * status first (it says whether the firmware ran the command at all), then tokens and
 * signatures. */
static int cmdq_check_delivery(struct cmdq *q, struct cmdq_run *r, const uint8_t *entry)
{
	uint8_t deliv;

	memcpy(r->ent, entry, sizeof(r->ent));
	deliv = (uint8_t)PRM_GET(cmd_queue_entry, r->ent, status);
	if (deliv != PRM_DELIV_OK)
		return cmdq_fail(q, -EIO, "%s: delivery status %s (0x%x)", r->name, prm_delivery_status_name(deliv),
				 deliv);
	if (PRM_GET(cmd_queue_entry, r->ent, token) != r->token)
		return cmdq_fail(q, -EIO, "%s: entry returned with token 0x%02x, expected 0x%02x", r->name,
				 (unsigned)PRM_GET(cmd_queue_entry, r->ent, token), r->token);
	if (q->verify_signatures && cmdq_xor8(r->ent, sizeof(r->ent)) != 0xff)
		return cmdq_fail(q, -EIO, "%s: bad entry signature on completion", r->name);
	for (size_t i = 0; i < r->nout; i++) {
		const uint8_t *box = cmdq_box_va(&r->boxes, r->nin + i);

		if (PRM_GET(cmd_if_box, box, token) != r->token)
			return cmdq_fail(q, -EIO, "%s: output mailbox %zu returned with token 0x%02x, expected 0x%02x",
					 r->name, i, (unsigned)PRM_GET(cmd_if_box, box, token), r->token);
		if (q->verify_signatures && !cmdq_box_signature_ok(box))
			return cmdq_fail(q, -EIO, "%s: bad signature on output mailbox %zu", r->name, i);
	}
	return 0;
}

/* Step 7: copy the output out and read its status (PRM "Command Status": cmd_out.status
 * and syndrome). */
static int cmdq_read_output(struct cmdq *q, struct cmdq_run *r, void *out, size_t outlen)
{
	uint8_t status;
	uint32_t syndrome;

	cmdq_join(out, outlen, PRM_ADDR(cmd_queue_entry, r->ent, command_output_inline_data),
		  r->nout ? cmdq_box_va(&r->boxes, r->nin) : NULL, r->nout, CMDQ_BOX_STRIDE);
	status = (uint8_t)PRM_GET(cmd_out, out, status);
	syndrome = (uint32_t)PRM_GET(cmd_out, out, syndrome);
	q->last_status = status;
	q->last_syndrome = syndrome;
	if (status != PRM_CMD_STAT_OK) {
		const char *sname = prm_syndrome_name(syndrome);

		return cmdq_fail(q, prm_cmd_status_errno(status), "%s: %s (0x%x), syndrome 0x%x%s%s%s", r->name,
				 prm_cmd_status_name(status), status, syndrome, sname ? " (" : "",
				 sname ? sname : "", sname ? ")" : "");
	}
	q->err[0] = '\0';
	return 0;
}

static void cmdq_keep_stale(struct cmdq *q, const struct shim_dma *m)
{
	struct shim_dma *n = realloc(q->stale, (q->nstale + 1) * sizeof(*n));

	if (n) {
		q->stale = n;
		q->stale[q->nstale++] = *m;
	}
}

static uint8_t *cmdq_entry_at(struct cmdq *q, unsigned index)
{
	return (uint8_t *)q->queue.va + ((size_t)index << q->log_stride);
}

/* A command on the main slot timed out and the device still owns its entry (and may
 * still write its mailboxes).  Do what Linux does (cmd.c wait_func_handle_exec_timeout
 * completes the command with -ETIMEDOUT, and mlx5_cmd_comp_handler frees its entry
 * only when the real completion arrives, "only real completion can free the cmd
 * slot"): leave that entry and its mailboxes to the device, and carry on with the next
 * command on another entry of the queue, with mailboxes of its own.  Entries handed
 * back in the meantime are free again.  -EBUSY when every entry but the nested one is
 * held by the device. */
static int cmdq_move_main_slot(struct cmdq *q, const char *name)
{
	struct cmdq_slot *m = &q->slots[0];
	unsigned n = 1u << q->log_size;

	for (unsigned i = 0; i < n; i++)
		if ((q->abandoned & (1u << i)) && !cmdq_entry_ownership(cmdq_entry_at(q, i)))
			q->abandoned &= ~(1u << i);
	q->abandoned |= 1u << m->index;
	for (unsigned i = 0; i < n; i++) {
		if ((q->abandoned & (1u << i)) || (q->nslots > 1 && i == q->slots[1].index) ||
		    cmdq_entry_ownership(cmdq_entry_at(q, i)))
			continue;
		struct shim_dma pool = { 0 };
		if (q->pool_boxes) {
			size_t per_slot = 2 * q->pool_boxes * CMDQ_BOX_STRIDE;
			int rc = cmdq_dma_alloc(q->dev, per_slot, CMDQ_QUEUE_BYTES, CMDQ_BOX_STRIDE, &pool,
						"mailbox");
			if (rc < 0)
				return cmdq_fail(q, rc, "%s: command slot %u is still owned by the device and no "
						 "mailboxes for another: %s", name, m->index, strerror(-rc));
		}
		/* the old mailboxes stay allocated until the queue goes (the device may
		 * still write them) */
		if (m->pool_own)
			cmdq_keep_stale(q, &m->pool);
		m->pool = pool;
		m->pool_own = q->pool_boxes != 0;
		m->index = i;
		q->moves++;
		return 0;
	}
	return cmdq_fail(q, -EBUSY, "%s: every command slot is still owned by the device (commands timed out)",
			 name);
}

/* The commands that undo something: in the error state they succeed without being sent,
 * since the device holds nothing any more and the host's side must still go (Linux
 * cmd.c mlx5_internal_err_ret_value(), v6.1: MLX5_CMD_STAT_OK for these opcodes). */
static bool cmdq_is_teardown(uint16_t op)
{
	switch (op) {
	case PRM_CMD_OP_TEARDOWN_HCA: case PRM_CMD_OP_DISABLE_HCA: case PRM_CMD_OP_MANAGE_PAGES:
	case PRM_CMD_OP_DESTROY_MKEY: case PRM_CMD_OP_DESTROY_EQ: case PRM_CMD_OP_DESTROY_CQ:
	case PRM_CMD_OP_DESTROY_QP: case PRM_CMD_OP_DESTROY_PSV: case PRM_CMD_OP_DESTROY_SRQ:
	case PRM_CMD_OP_DESTROY_XRC_SRQ: case PRM_CMD_OP_DESTROY_XRQ: case PRM_CMD_OP_DESTROY_DCT:
	case PRM_CMD_OP_DEALLOC_Q_COUNTER: case PRM_CMD_OP_DESTROY_SCHEDULING_ELEMENT:
	case PRM_CMD_OP_DESTROY_QOS_PARA_VPORT: case PRM_CMD_OP_DEALLOC_PD: case PRM_CMD_OP_DEALLOC_UAR:
	case PRM_CMD_OP_DETACH_FROM_MCG: case PRM_CMD_OP_DEALLOC_XRCD:
	case PRM_CMD_OP_DEALLOC_TRANSPORT_DOMAIN: case PRM_CMD_OP_DELETE_VXLAN_UDP_DPORT:
	case PRM_CMD_OP_DELETE_L2_TABLE_ENTRY: case PRM_CMD_OP_DESTROY_LAG:
	case PRM_CMD_OP_DESTROY_VPORT_LAG: case PRM_CMD_OP_DESTROY_TIR: case PRM_CMD_OP_DESTROY_SQ:
	case PRM_CMD_OP_DESTROY_RQ: case PRM_CMD_OP_DESTROY_RMP: case PRM_CMD_OP_DESTROY_TIS:
	case PRM_CMD_OP_MODIFY_RQT: case PRM_CMD_OP_DESTROY_RQT: case PRM_CMD_OP_DESTROY_FLOW_TABLE:
	case PRM_CMD_OP_DESTROY_FLOW_GROUP: case PRM_CMD_OP_DELETE_FLOW_TABLE_ENTRY:
	case PRM_CMD_OP_DEALLOC_FLOW_COUNTER: case PRM_CMD_OP_2ERR_QP: case PRM_CMD_OP_2RST_QP:
	case PRM_CMD_OP_DEALLOC_PACKET_REFORMAT_CONTEXT: case PRM_CMD_OP_DEALLOC_MODIFY_HEADER_CONTEXT:
	case PRM_CMD_OP_DESTROY_GENERAL_OBJECT: case PRM_CMD_OP_DEALLOC_MEMIC: case PRM_CMD_OP_DEALLOC_SF:
	case PRM_CMD_OP_DESTROY_UCTX: case PRM_CMD_OP_DESTROY_UMEM:
		return true;
	default:
		return false;
	}
}

static int cmdq_exec_locked(struct cmdq *q, const struct cmdq_slot *slot, const void *in, size_t inlen, void *out,
			    size_t outlen)
{
	uint8_t hdr[CMDQ_INLINE_BYTES] = { 0 };
	uint8_t *entry = (uint8_t *)q->queue.va + ((size_t)slot->index << q->log_stride);
	uint32_t bit = 1u << slot->index;
	struct cmdq_run r;
	char opbuf[24];
	int rc;

	memset(&r, 0, sizeof(r));
	if (inlen)
		memcpy(hdr, in, inlen < sizeof(hdr) ? inlen : sizeof(hdr));
	r.name = prm_opcode_str((uint16_t)PRM_GET(cmd_in, hdr, opcode), opbuf, sizeof(opbuf));

	/* A device in its error state executes nothing (Linux cmd.c: mlx5_cmd_is_down());
	 * a teardown command succeeds unsent, with a zero (OK) output (cmdq_is_teardown). */
	if ((rc = atomic_load_explicit(&q->down_err, memory_order_acquire))) {
		if (cmdq_is_teardown((uint16_t)PRM_GET(cmd_in, hdr, opcode))) {
			if (out && outlen)
				memset(out, 0, outlen);
			q->last_status = 0;
			q->last_syndrome = 0;
			return 0;
		}
		return cmdq_fail(q, rc, "%s: not sent: the device is in the error state (%s)", r.name, q->down_why);
	}
	/* After a timeout the device may still own the slot and its mailboxes: reusing them
	 * would hand it a half-rewritten command.  The main slot moves to a free entry
	 * (cmdq_move_main_slot); the nested one has nowhere to go. */
	if (cmdq_entry_ownership(entry)) {
		if (slot != &q->slots[0] || q->nslots < 2)
			return cmdq_fail(q, -EBUSY, "%s: command slot %u is still owned by the device (an "
					 "earlier command timed out)", r.name, slot->index);
		if ((rc = cmdq_move_main_slot(q, r.name)) < 0)
			return rc;
		entry = cmdq_entry_at(q, slot->index);
		bit = 1u << slot->index;
	}
	if ((rc = cmdq_check_lengths(q, &r, inlen, outlen)) < 0 ||
	    (rc = cmdq_get_boxes(q, slot, r.name, r.nin, r.nout, &r.boxes)) < 0)
		return rc;
	cmdq_fill_boxes(q, &r, in, inlen);
	cmdq_build_entry(&r, inlen, outlen);
	cmdq_post_entry(q, &r, entry, bit);

	rc = cmdq_wait_done(q, entry, bit, cmdq_now_ms() + q->timeout_ms, slot == &q->slots[0]);
	/* A nested command run inside the wait left its own status behind. */
	q->last_status = 0;
	q->last_syndrome = 0;
	if (rc < 0 && rc == atomic_load_explicit(&q->down_err, memory_order_acquire) &&
	    cmdq_is_teardown((uint16_t)PRM_GET(cmd_in, hdr, opcode))) {
		/* aborted by the error state (cmdq_set_down): a teardown command succeeds all
		 * the same, as if it had not been sent (cmdq_is_teardown) */
		if (out && outlen)
			memset(out, 0, outlen);
		rc = 0;
	} else if (rc < 0)
		rc = cmdq_wait_failed(q, &r, rc);
	else {
		cmdq_barrier_from_device();
		rc = cmdq_check_delivery(q, &r, entry);
		if (rc == 0)
			rc = cmdq_read_output(q, &r, out, outlen);
	}
	/* After a timeout (or a failed wait) the device still owns the entry and may
	 * write the output mailboxes at any time (the pool stays reserved by the -EBUSY
	 * check above). */
	cmdq_put_boxes(q, &r.boxes, cmdq_entry_ownership(entry) != 0);
	return rc;
}

int cmdq_exec(struct cmdq *q, const void *in, size_t inlen, void *out, size_t outlen)
{
	int rc;

	if (!q)
		return -EINVAL;
	if ((!in && inlen) || !out) {
		pthread_mutex_lock(&q->lock);
		rc = cmdq_fail(q, -EINVAL, "cmdq_exec: %s buffer is NULL", out ? "input" : "output");
		pthread_mutex_unlock(&q->lock);
		return rc;
	}
	pthread_mutex_lock(&q->lock);
	q->last_status = 0;
	q->last_syndrome = 0;
	rc = cmdq_exec_locked(q, &q->slots[0], in, inlen, out, outlen);
	pthread_mutex_unlock(&q->lock);
	return rc;
}

int cmdq_nested_slot(const struct cmdq *q)
{
	if (!q)
		return -EINVAL;
	return q->nslots > 1 ? (int)q->slots[1].index : -EOPNOTSUPP;
}

int cmdq_exec_nested(struct cmdq *q, const void *in, size_t inlen, void *out, size_t outlen)
{
	int rc;

	if (!q)
		return -EINVAL;
	/* Only the thread waiting for slot 0 holds the mutex and may come here: anyone
	 * else would race it for q's state.  It cannot write q->err either. */
	if (!cmdq_waiting_thread(q))
		return -EPERM;
	if ((!in && inlen) || !out)
		return cmdq_fail(q, -EINVAL, "cmdq_exec_nested: %s buffer is NULL", out ? "input" : "output");
	if (q->nslots < 2)
		return cmdq_fail(q, -EOPNOTSUPP,
				 "nested command: the device's command queue has one entry (log_cmdq_size %u), no second slot",
				 q->log_size);
	if (q->nested_busy)
		return cmdq_fail(q, -EDEADLK, "nested command: slot %u is already in use", q->slots[1].index);
	q->nested_busy = true;
	q->last_status = 0;
	q->last_syndrome = 0;
	rc = cmdq_exec_locked(q, &q->slots[1], in, inlen, out, outlen);
	q->nested_busy = false;
	return rc;
}
