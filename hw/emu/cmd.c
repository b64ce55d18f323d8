/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The command processor (PRM "Command Interface"): triggered by a store to
 * command_doorbell_vector, it fetches each rung entry and its mailbox chains by DMA,
 * checks them as the device's command interface does (delivery status), decodes the
 * command with firmware-cmd's tables, dispatches it by opcode to the handler that an
 * area file (cmd_<area>.c) registered, writes the output and the entry back, clears
 * ownership, and posts the CMD completion EQE when an EQ asked for it.
 *
 * Delivery checks, in the order hardware meets them: entry type (0x7, PCIe command
 * interface), entry signature (checksums on: XOR of the 64 bytes as posted, ownership
 * included, must be 0xff), input/output lengths within what the device accepts,
 * mailbox pointers 1 KiB aligned and mapped, each block's block_number (0, 1, 2, ...)
 * and token (the entry's), block signatures (checksums on), and a chain that does not
 * loop back on itself.
 *
 * Signatures follow the current cmd_hca_cap.cmdif_checksum (PRM "HCA Capabilities":
 * 0 disabled, 3 enabled; drivers set it with SET_HCA_CAP, Linux main.c handle_hca_cap
 * and rdma-core mlx5_vfio.c set 0).  With checksums off, as on the real ConnectX-4 in
 * ../shared/fixtures/mlx5_core-connectx4-bringup-trace.txt.gz, nothing is checked and
 * nothing is signed: the completed entry keeps the driver's signature byte (none of the
 * trace's completions XORs to 0xff: ownership cleared, signature left; QUERY_PAGES is
 * the one exception, completion_signature) and the output mailboxes keep their control
 * part as the driver posted it (zero signatures in the trace).  With
 * checksums on, inputs are checked and the completion is signed.  The value is read
 * when the entry is fetched, so the SET_HCA_CAP that changes it completes as before.
 *
 * Every slot of the queue works (command_doorbell_vector has one bit per entry).  A
 * command firmware needs pages for is held (hold.c): its entry stays owned by the
 * device until MANAGE_PAGES, on another slot, brought the pages; then it runs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "firmware-cmd/cmdq.h"
#include "hw/emu/emu_dev.h"

#define EMU_CMD_MAX_BYTES (4u << 20)     /* largest input/output the device accepts */
#define EMU_CMD_TYPE_PCIE 0x7             /* cmd_queue_entry.type: PCIe command interface */
#define BOX_BYTES PRM_SIZE(cmd_if_box)
#define BOX_ALIGN 1024u                   /* mailboxes are 1 KiB aligned (next_pointer_31_10) */

/* ---- opcode table, built once from every area's descriptors ---- */

static const struct emu_cmd_desc *emu_cmd_by_op[EMU_OPCODE_SLOTS];
static pthread_once_t emu_cmd_once = PTHREAD_ONCE_INIT;

static void emu_cmd_build(void)
{
	for (size_t a = 0; a < emu_nareas; a++)
		for (size_t i = 0; i < emu_areas[a]->ncmds; i++) {
			const struct emu_cmd_desc *c = &emu_areas[a]->cmds[i];

			if (c->opcode < EMU_OPCODE_SLOTS && !emu_cmd_by_op[c->opcode])
				emu_cmd_by_op[c->opcode] = c;
		}
}

const struct emu_cmd_desc *emu_cmd_find(uint16_t opcode)
{
	pthread_once(&emu_cmd_once, emu_cmd_build);
	return opcode < EMU_OPCODE_SLOTS ? emu_cmd_by_op[opcode] : NULL;
}

/* ---- mailbox chains ---- */

struct chain {
	uint64_t *iova;       /* each block's address, in chain order */
	uint8_t *img;         /* each block's image, BOX_BYTES apart */
	size_t n;
};

static void chain_free(struct chain *c)
{
	free(c->iova);
	free(c->img);
	c->iova = NULL;
	c->img = NULL;
	c->n = 0;
}

static bool box_signature_ok(const uint8_t *box)
{
	size_t ctrl = PRM_OFF(cmd_if_box, next_pointer_63_32) / 8;
	size_t csig = PRM_OFF(cmd_if_box, ctrl_signature) / 8;
	size_t sig = PRM_OFF(cmd_if_box, signature) / 8;

	/* PRM "Command Mailbox": ctrl_signature covers the control part, signature the
	 * whole block; each makes the XOR of what it covers 0xff. */
	return cmdq_xor8(box + ctrl, csig + 1 - ctrl) == 0xff && cmdq_xor8(box, sig + 1) == 0xff;
}

static void box_sign(uint8_t *box)
{
	size_t ctrl = PRM_OFF(cmd_if_box, next_pointer_63_32) / 8;
	size_t csig = PRM_OFF(cmd_if_box, ctrl_signature) / 8;
	size_t sig = PRM_OFF(cmd_if_box, signature) / 8;

	PRM_SET(cmd_if_box, box, ctrl_signature, 0);
	PRM_SET(cmd_if_box, box, signature, 0);
	PRM_SET(cmd_if_box, box, ctrl_signature, (uint8_t)~cmdq_xor8(box + ctrl, csig - ctrl));
	PRM_SET(cmd_if_box, box, signature, (uint8_t)~cmdq_xor8(box, sig));
}

/* Fetch n blocks from `first`; 0 or a delivery status. */
static int chain_fetch(struct emu_dev *d, uint64_t first, size_t n, uint8_t token, bool checksums, bool input,
		       struct chain *c)
{
	uint8_t bad_ptr = input ? PRM_DELIV_IN_PTR_ALIGN_ERR : PRM_DELIV_OUT_PTR_ALIGN_ERR;
	uint64_t p = first;

	c->n = 0;
	if (!n)
		return 0;
	c->iova = calloc(n, sizeof(*c->iova));
	c->img = malloc(n * BOX_BYTES);
	if (!c->iova || !c->img)
		return PRM_DELIV_FW_ERR;
	for (size_t k = 0; k < n; k++) {
		uint8_t *box = c->img + k * BOX_BYTES;

		if (p % BOX_ALIGN) {
			emu_drverr(d, "%s mailbox %zu at 0x%llx not 1 KiB aligned", input ? "input" : "output", k,
				   (unsigned long long)p);
			return bad_ptr;
		}
		for (size_t j = 0; j < k; j++)
			if (c->iova[j] == p) {
				emu_drverr(d, "%s mailbox chain loops: block %zu points back to block %zu",
					   input ? "input" : "output", k, j);
				return PRM_DELIV_BAD_BLOCK_NUMBER;
			}
		if (emu_dma_read(d, p, box, BOX_BYTES) < 0)
			return bad_ptr;
		c->iova[k] = p;
		c->n = k + 1;
		if (PRM_GET(cmd_if_box, box, block_number) != k) {
			emu_drverr(d, "%s mailbox %zu has block_number %llu", input ? "input" : "output", k,
				   (unsigned long long)PRM_GET(cmd_if_box, box, block_number));
			return PRM_DELIV_BAD_BLOCK_NUMBER;
		}
		if (PRM_GET(cmd_if_box, box, token) != token)
			return PRM_DELIV_TOKEN_ERR;
		if (input && checksums && !box_signature_ok(box))
			return PRM_DELIV_SIGNATURE_ERR;
		p = (PRM_GET(cmd_if_box, box, next_pointer_63_32) << 32) |
		    (PRM_GET(cmd_if_box, box, next_pointer_31_10) << 10);
	}
	return 0;
}

/* ---- dispatch ---- */

/* The process's command observer (emu.h emu_set_cmd_observer): fn and ctx change
 * together under the lock; a command reads them under it too. */
static pthread_mutex_t emu_obs_lock = PTHREAD_MUTEX_INITIALIZER;
static emu_cmd_observer_fn emu_obs_fn;
static void *emu_obs_ctx;

void emu_set_cmd_observer(emu_cmd_observer_fn fn, void *ctx)
{
	pthread_mutex_lock(&emu_obs_lock);
	emu_obs_ctx = ctx;
	__atomic_store_n(&emu_obs_fn, fn, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&emu_obs_lock);
}

static int emu_cmd_dispatch_one(struct emu_dev *d, struct emu_cmd *c, int *hang);

int emu_cmd_dispatch(struct emu_dev *d, struct emu_cmd *c, int *hang)
{
	int st = emu_cmd_dispatch_one(d, c, hang);

	if (__atomic_load_n(&emu_obs_fn, __ATOMIC_RELAXED) && !*hang) {
		pthread_mutex_lock(&emu_obs_lock);
		if (emu_obs_fn)
			emu_obs_fn(emu_obs_ctx, c->opcode, c->op_mod, c->in, c->inlen, c->out, c->outlen, st);
		pthread_mutex_unlock(&emu_obs_lock);
	}
	return st;
}

static int emu_cmd_dispatch_one(struct emu_dev *d, struct emu_cmd *c, int *hang)
{
	const struct emu_cmd_desc *desc = emu_cmd_find(c->opcode);
	uint8_t st;
	uint32_t synd;
	int f;

	f = emu_fault_check(d, c->opcode, &st, &synd);
	if (f == 2) {
		*hang = 1;
		return 0;
	}
	if (f == 1)
		return emu_cmd_fail(c, st, synd);
	if (!desc)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_OP, PRM_SYND_BAD_OPCODE);
	if (c->inlen < desc->in_bytes)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_INP_LEN, PRM_SYND_INPUT_TOO_SHORT);
	if (c->outlen < desc->out_bytes)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_OUTP_LEN, PRM_SYND_OUTPUT_TOO_SHORT);
	if (((desc->flags & EMU_CMDF_ENABLED) && d->hca < EMU_HCA_ENABLED) ||
	    ((desc->flags & EMU_CMDF_INIT) && d->hca != EMU_HCA_INITIALIZED))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_SYS_STATE, PRM_SYND_BAD_SYSTEM_STATE);
	f = emu_cmd_check(d, c); /* uid, op_mod, reserved fields (cmd_check.c) */
	return f ? f : desc->fn(d, c);
}

/* PRM cmd_hca_cap.cmdif_checksum: 3 = checksums enabled. */
#define EMU_CMDIF_CHECKSUM_ON 3

static bool checksums_on(struct emu_dev *d)
{
	const uint8_t *cur = emu_cap(d, PRM_CAP_GENERAL_DEVICE, 1);

	return cur && PRM_GET(cmd_hca_cap, cur, cmdif_checksum) == EMU_CMDIF_CHECKSUM_ON;
}

/* The signature byte of a completed entry.  Checksums on: signed (XOR of the 64 bytes
 * as completed is 0xff).  Off: what the driver posted, except for QUERY_PAGES, whose
 * completions on the traced ConnectX-4 (firmware 14.12.1220) carry the posted byte
 * XORed with the output inline bytes the firmware wrote, so that the entry's XOR stays
 * as posted apart from the ownership bit (decompressed trace, lines 113 and 123: 0xfa
 * comes back as 0xfc with num_pages 6; lines 1127 and 1134: 0xf7 as 0x81 with 12868 =
 * 0x3244).  Every other traced command, ALLOC_UAR and CREATE_EQ among them, whose
 * inline outputs are not zero, left the byte alone; other opcodes are not in the
 * trace and leave it too. */
static uint8_t completion_signature(const uint8_t *posted, const uint8_t *ent, uint16_t opcode, bool checksums)
{
	uint8_t sig = (uint8_t)PRM_GET(cmd_queue_entry, posted, signature);
	uint8_t img[PRM_SIZE(cmd_queue_entry)];

	if (checksums) {
		memcpy(img, ent, sizeof(img));
		PRM_SET(cmd_queue_entry, img, ownership, 0);
		PRM_SET(cmd_queue_entry, img, signature, 0);
		return (uint8_t)~cmdq_xor8(img, sizeof(img));
	}
	if (opcode == PRM_CMD_OP_QUERY_PAGES)
		sig ^= cmdq_xor8(PRM_ADDR(cmd_queue_entry, posted, command_output_inline_data), CMDQ_INLINE_BYTES) ^
		       cmdq_xor8(PRM_ADDR(cmd_queue_entry, ent, command_output_inline_data), CMDQ_INLINE_BYTES);
	return sig;
}

static void complete_entry(struct emu_dev *d, uint64_t eiova, const uint8_t *posted, uint8_t *ent, uint16_t opcode,
			   uint8_t deliv, bool checksums)
{
	size_t own_dw = PRM_OFF(cmd_queue_entry, ownership) / 32 * 4;

	PRM_SET(cmd_queue_entry, ent, status, deliv);
	PRM_SET(cmd_queue_entry, ent, ownership, 0);
	PRM_SET(cmd_queue_entry, ent, signature, completion_signature(posted, ent, opcode, checksums));
	/* Everything before the ownership dword first, then that dword: the driver must
	 * never see ownership back before the output. */
	emu_dma_write(d, eiova, ent, own_dw);
	emu_dma_write(d, eiova + own_dw, ent + own_dw, 4);
	if (deliv)
		d->ctr.cmd_delivery_errors++;
}

static void run_held(struct emu_dev *d);

/* cfg.cmd_log_fd: one command as Linux's mlx5_core dump_command writes it (cmd.c:
 * "dump command NAME(0xOP) INPUT|OUTPUT", then 16 bytes a line as big-endian words at
 * their offset), with the lengths and the answer's status on the header line.  Lines
 * past the last nonzero one are left out, so a recorded stream stays small. */
static void log_buf(int fd, const char *name, uint16_t opcode, uint16_t op_mod, const char *dir, const uint8_t *b,
		    size_t len, int status, uint32_t syndrome)
{
	char line[96];
	size_t last = 0;

	for (size_t i = 0; i < len; i++)
		if (b[i])
			last = i + 1;
	if (status < 0)
		dprintf(fd, "dump command %s(0x%x) op_mod 0x%x %s len %zu\n", name, opcode, op_mod, dir, len);
	else
		dprintf(fd, "dump command %s(0x%x) op_mod 0x%x %s len %zu status 0x%x syndrome 0x%x\n", name, opcode,
			op_mod, dir, len, status, syndrome);
	for (size_t off = 0; off < last; off += 16) {
		int n = snprintf(line, sizeof(line), "%03zx:", off);

		for (size_t w = off; w < off + 16 && w < len; w += 4) {
			uint32_t v = 0;

			for (size_t k = 0; k < 4; k++)
				v = v << 8 | (w + k < len ? b[w + k] : 0);
			n += snprintf(line + n, sizeof(line) - (size_t)n, " %08x", v);
		}
		dprintf(fd, "%s\n", line);
	}
}

static void log_command(struct emu_dev *d, const struct emu_cmd *c, int status)
{
	const char *name = prm_opcode_name(c->opcode);

	log_buf(d->cfg.cmd_log_fd, name, c->opcode, c->op_mod, "INPUT", c->in, c->inlen, -1, 0);
	log_buf(d->cfg.cmd_log_fd, name, c->opcode, c->op_mod, "OUTPUT", c->out, c->outlen, status,
		status ? c->syndrome : 0);
}

/* cmd_events: an EQ listened for command completions when the doorbell was rung.  A
 * command finished in polling mode gets no EQE, even the CREATE_EQ that makes the EQ
 * asking for them: Linux creates its async EQ (CMD bit set) with polled commands and
 * only then switches to events (eq.c create_async_eqs, mlx5_cmd_use_events); an EQE for
 * that CREATE_EQ finds no command waiting ("Command completion arrived after timeout"
 * and a refcount underflow in cmd.c mlx5_cmd_comp_handler). */
static void process_entry(struct emu_dev *d, unsigned slot, bool cmd_events)
{
	uint64_t eiova = d->cmdq_iova + ((uint64_t)slot << d->log_cmdq_stride);
	uint8_t ent[PRM_SIZE(cmd_queue_entry)], posted[PRM_SIZE(cmd_queue_entry)];
	struct chain in_chain = { 0 }, out_chain = { 0 };
	struct emu_cmd c = { 0 };
	uint8_t *inbuf = NULL, *outbuf = NULL, token, deliv = 0;
	uint64_t in_ptr, out_ptr;
	size_t inlen, outlen, nin, nout;
	bool checksums;
	int status, hang = 0;

	if (emu_dma_read(d, eiova, ent, sizeof(ent)) < 0)
		return; /* fault already logged: the entry itself is not reachable */
	if (!PRM_GET(cmd_queue_entry, ent, ownership)) {
		emu_drverr(d, "doorbell for command entry %u whose ownership bit is clear (software owned)", slot);
		return;
	}
	memcpy(posted, ent, sizeof(posted));
	checksums = checksums_on(d);
	token = (uint8_t)PRM_GET(cmd_queue_entry, ent, token);
	inlen = PRM_GET(cmd_queue_entry, ent, input_length);
	outlen = PRM_GET(cmd_queue_entry, ent, output_length);
	in_ptr = (PRM_GET(cmd_queue_entry, ent, input_mailbox_pointer_63_32) << 32) |
		 (PRM_GET(cmd_queue_entry, ent, input_mailbox_pointer_31_9) << 9);
	out_ptr = (PRM_GET(cmd_queue_entry, ent, output_mailbox_pointer_63_32) << 32) |
		  (PRM_GET(cmd_queue_entry, ent, output_mailbox_pointer_31_9) << 9);

	if (PRM_GET(cmd_queue_entry, ent, type) != EMU_CMD_TYPE_PCIE) {
		deliv = PRM_DELIV_CMD_DESCR_ERR;
		goto done;
	}
	if (checksums && cmdq_xor8(ent, sizeof(ent)) != 0xff) {
		deliv = PRM_DELIV_SIGNATURE_ERR;
		goto done;
	}
	if (inlen > EMU_CMD_MAX_BYTES) {
		deliv = PRM_DELIV_IN_LENGTH_ERR;
		goto done;
	}
	if (outlen > EMU_CMD_MAX_BYTES) {
		deliv = PRM_DELIV_OUT_LENGTH_ERR;
		goto done;
	}
	nin = cmdq_boxes_for(inlen > CMDQ_INLINE_BYTES ? inlen - CMDQ_INLINE_BYTES : 0);
	nout = cmdq_boxes_for(outlen > CMDQ_INLINE_BYTES ? outlen - CMDQ_INLINE_BYTES : 0);
	deliv = (uint8_t)chain_fetch(d, in_ptr, nin, token, checksums, true, &in_chain);
	if (!deliv)
		deliv = (uint8_t)chain_fetch(d, out_ptr, nout, token, checksums, false, &out_chain);
	if (deliv)
		goto done;

	inbuf = calloc(1, inlen > EMU_CMD_MIN_BUF ? inlen : EMU_CMD_MIN_BUF);
	outbuf = calloc(1, outlen > EMU_CMD_MIN_BUF ? outlen : EMU_CMD_MIN_BUF);
	if (!inbuf || !outbuf) {
		deliv = PRM_DELIV_FW_ERR;
		goto done;
	}
	cmdq_join(inbuf, inlen, PRM_ADDR(cmd_queue_entry, ent, command_input_inline_data), in_chain.img, in_chain.n,
		  BOX_BYTES);
	c.in = inbuf;
	c.inlen = inlen;
	c.out = outbuf;
	c.outlen = outlen;
	if (inlen >= PRM_SIZE(cmd_in)) {
		c.opcode = (uint16_t)PRM_GET(cmd_in, inbuf, opcode);
		c.op_mod = (uint16_t)PRM_GET(cmd_in, inbuf, op_mod);
	}
	if (inlen < PRM_SIZE(cmd_in)) {
		status = emu_cmd_fail(&c, PRM_CMD_STAT_BAD_INP_LEN, PRM_SYND_INPUT_TOO_SHORT);
	} else if (emu_hold_begin(d, slot, c.opcode)) {
		goto out; /* owned by the device until the pages came (run_held) */
	} else if (d->held_fail && (d->held_resuming & (1u << slot))) {
		/* the driver answered the page request with "allocation failed" */
		status = emu_cmd_fail(&c, PRM_CMD_STAT_NO_RES, PRM_SYND_NO_RESOURCES);
	} else {
		status = emu_cmd_dispatch(d, &c, &hang);
	}
	if (hang) {
		emu_log(d, EMU_LOG_INFO, "fault: command 0x%x left pending (hang)", c.opcode);
		goto out;
	}
	PRM_SET(cmd_out, outbuf, status, (uint8_t)status);
	PRM_SET(cmd_out, outbuf, syndrome, status ? c.syndrome : 0);
	d->ctr.cmds++;
	d->ctr.cmd_by_opcode[c.opcode % EMU_OPCODE_SLOTS]++;
	d->ctr.cmd_by_status[(uint8_t)status]++;
	if (status) {
		d->ctr.cmds_failed++;
		d->ctr.cmd_failed_by_opcode[c.opcode % EMU_OPCODE_SLOTS]++;
		emu_log(d, EMU_LOG_INFO, "%s: %s (0x%x), syndrome 0x%x (%s)", prm_opcode_name(c.opcode),
			prm_cmd_status_name((uint8_t)status), status, c.syndrome,
			prm_syndrome_name(c.syndrome) ? prm_syndrome_name(c.syndrome) : "-");
	} else {
		emu_log(d, EMU_LOG_DEBUG, "%s op_mod 0x%x: ok", prm_opcode_name(c.opcode), c.op_mod);
	}
	if (d->cfg.cmd_log_fd > 0)
		log_command(d, &c, status);

	/* Output: 16 inline bytes in the entry, the rest into the output chain. */
	cmdq_split(outbuf, outlen, PRM_ADDR(cmd_queue_entry, ent, command_output_inline_data), out_chain.img,
		   out_chain.n, BOX_BYTES);
	if (outlen < CMDQ_INLINE_BYTES)
		memcpy(PRM_ADDR(cmd_queue_entry, ent, command_output_inline_data), outbuf, CMDQ_INLINE_BYTES);
	for (size_t k = 0; k < out_chain.n; k++) {
		uint8_t *box = out_chain.img + k * BOX_BYTES;

		if (checksums)
			box_sign(box);
		if (emu_dma_write(d, out_chain.iova[k], box, BOX_BYTES) < 0) {
			deliv = PRM_DELIV_OUT_PTR_ALIGN_ERR;
			break;
		}
	}
done:
	complete_entry(d, eiova, posted, ent, c.opcode, deliv, checksums);
	if (cmd_events) {
		uint8_t data[EMU_EQE_DATA_BYTES] = { 0 };

		PRM_SET(cmd_inter_comp_event, data, command_completion_vector, 1u << slot);
		emu_eq_post_event(d, PRM_EVENT_CMD, 0, data);
	}
out:
	chain_free(&in_chain);
	chain_free(&out_chain);
	free(inbuf);
	free(outbuf);
	run_held(d);
}

/* Commands held for pages whose exchange is now done: run them from the start, the
 * entry and mailboxes being as the driver posted them. */
static void run_held(struct emu_dev *d)
{
	bool fail = false;
	uint32_t ready = emu_hold_ready(d, &fail);

	if (!ready)
		return;
	d->held_fail = fail;
	for (unsigned i = 0; i < 32; i++)
		if (ready & (1u << i)) {
			d->held_resuming |= 1u << i;
			process_entry(d, i, emu_eq_listens(d, PRM_EVENT_CMD));
			d->held_resuming &= ~(1u << i);
		}
	d->held_fail = false;
}

void emu_cmd_doorbell(struct emu_dev *d, uint32_t vector)
{
	unsigned n = 1u << d->log_cmdq_size;
	bool cmd_events;

	if (!d->cmdq_programmed) {
		emu_drverr(d, "command doorbell 0x%x before the command queue address was written", vector);
		return;
	}
	if (d->fatal) {
		/* Firmware that hit a fatal error executes nothing more; the driver learns
		 * it from the health syndrome and the stalled health counter. */
		emu_log(d, EMU_LOG_WARN, "command doorbell 0x%x ignored: firmware in fatal state", vector);
		return;
	}
	if (n < 32 && (vector >> n)) {
		emu_drverr(d, "command doorbell 0x%x rings entries beyond the %u-entry queue", vector, n);
		vector &= (1u << n) - 1;
	}
	cmd_events = emu_eq_listens(d, PRM_EVENT_CMD);
	for (unsigned i = 0; i < n && i < 32; i++) {
		if (!(vector & (1u << i)))
			continue;
		if (d->held_slots & (1u << i)) {
			emu_drverr(d, "command doorbell for entry %u, which the device holds until it gets pages", i);
			continue;
		}
		process_entry(d, i, cmd_events);
	}
}
