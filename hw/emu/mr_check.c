/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Memory keys on the data path (PRM "Memory Key"; IBTA 10.6 memory protection): every
 * local (lkey) and remote (rkey) access is checked for the key's existence, PD, access
 * rights and bounds by emu_mkey_translate (cmd_mkey.c), which turns the virtual range
 * into IOVAs through the MKey's MTT/KLM; the bytes then move only through the IOMMU
 * model (emu_dma_read/write).  Nothing is copied before the whole range checked out, so
 * a rejected access writes nothing. */
#define EMU_TP_INTERNAL
#include "hw/emu/transport.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define EMU_MR_SEGS 64

static int xfer(struct emu_dev *d, uint32_t key, uint32_t pdn, unsigned access, uint64_t va, uint8_t *buf,
		size_t len, bool write)
{
	struct emu_iova_seg segs[EMU_MR_SEGS];
	int n, rc;

	if (!len)
		return 0;
	n = emu_mkey_translate(d, key, pdn, access, va, len, segs, EMU_MR_SEGS);
	if (n == -E2BIG) {
		/* very fragmented: split the range */
		size_t half = len / 2;

		rc = xfer(d, key, pdn, access, va, buf, half, write);
		return rc ? rc : xfer(d, key, pdn, access, va + half, buf + half, len - half, write);
	}
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		rc = write ? emu_dma_write(d, segs[i].iova, buf, segs[i].len)
			   : emu_dma_read(d, segs[i].iova, buf, segs[i].len);
		if (rc)
			return -EFAULT;
		buf += segs[i].len;
	}
	return 0;
}

static int sgl_xfer(struct emu_dev *d, uint32_t pdn, const struct emu_tp_sge *s, unsigned n, uint64_t off,
		    uint8_t *buf, size_t len, bool write)
{
	unsigned i = 0;

	while (i < n && off >= s[i].len) {
		off -= s[i].len;
		i++;
	}
	while (len) {
		size_t chunk;
		int rc;

		if (i >= n)
			return -EMSGSIZE;
		chunk = s[i].len - off < len ? s[i].len - off : len;
		rc = xfer(d, s[i].lkey, pdn, write ? EMU_MKEY_ACC_LW : EMU_MKEY_ACC_LR, s[i].addr + off, buf, chunk,
			  write);
		if (rc)
			return rc;
		buf += chunk;
		len -= chunk;
		off = 0;
		i++;
	}
	return 0;
}

int emu_sgl_read(struct emu_dev *d, uint32_t pdn, const struct emu_tp_sge *s, unsigned n, uint64_t off, void *buf,
		 size_t len)
{
	return sgl_xfer(d, pdn, s, n, off, buf, len, false);
}

int emu_sgl_write(struct emu_dev *d, uint32_t pdn, const struct emu_tp_sge *s, unsigned n, uint64_t off,
		  const void *buf, size_t len)
{
	int rc;
	unsigned i = 0;
	uint64_t o = off;
	size_t l = len;

	/* Check the whole span first: a receive never lands half in memory. */
	while (i < n && o >= s[i].len) {
		o -= s[i].len;
		i++;
	}
	while (l) {
		size_t chunk;

		if (i >= n)
			return -EMSGSIZE;
		chunk = s[i].len - o < l ? s[i].len - o : l;
		rc = emu_mkey_translate(d, s[i].lkey, pdn, EMU_MKEY_ACC_LW, s[i].addr + o, chunk, NULL, 0);
		if (rc < 0 && rc != -E2BIG)
			return rc;
		l -= chunk;
		o = 0;
		i++;
	}
	return sgl_xfer(d, pdn, s, n, off, (uint8_t *)(uintptr_t)buf, len, true);
}

int emu_sgl_check(struct emu_dev *d, uint32_t pdn, const struct emu_tp_sge *s, unsigned n, unsigned access)
{
	for (unsigned i = 0; i < n; i++) {
		int rc = emu_mkey_translate(d, s[i].lkey, pdn, access, s[i].addr, s[i].len, NULL, 0);

		if (rc < 0 && rc != -E2BIG)
			return rc;
	}
	return 0;
}

int emu_rkey_check(struct emu_dev *d, uint32_t pdn, uint32_t rkey, unsigned access, uint64_t va, uint64_t len)
{
	int rc = emu_mkey_translate(d, rkey, pdn, access, va, len, NULL, 0);

	return rc < 0 && rc != -E2BIG ? rc : 0;
}

int emu_rkey_access(struct emu_dev *d, uint32_t pdn, uint32_t rkey, unsigned access, uint64_t va, void *buf,
		    size_t len, bool write)
{
	int rc = emu_rkey_check(d, pdn, rkey, access, va, len);

	return rc ? rc : xfer(d, rkey, pdn, access, va, buf, len, write);
}

static int payload_copy(struct emu_dev *d, const struct emu_payload_src *src, uint64_t off, void *dst, size_t len)
{
	if (src->sge)
		return emu_sgl_read(d, src->pdn, src->sge, src->nsge, off, dst, len);
	return emu_rkey_access(d, src->pdn, src->rkey, EMU_MKEY_ACC_RR, src->va + off, dst, len, false);
}

/* The window's buffer, allocated once: at the transport's setup when the IOMMU copies
 * with system calls from the start (emu_tp_stage_init), else the first time a remote
 * mapping makes it worth having.  A failed allocation is not retried packet by packet. */
static uint8_t *stage_buf(struct emu_tp *tp)
{
	if (!tp->stage.buf && !tp->stage.nomem) {
		tp->stage.buf = malloc(EMU_TP_STAGE_BYTES);
		tp->stage.nomem = !tp->stage.buf;
	}
	return tp->stage.buf;
}

void emu_tp_stage_init(struct emu_tp *tp)
{
	if (emu_iommu_reads_syscall(tp->d))
		(void)stage_buf(tp);
}

int emu_payload_read(struct emu_tp *tp, uint64_t key, const struct emu_payload_src *src, uint64_t total, uint64_t off,
		     void *dst, size_t len)
{
	/* The guarded copy costs no more for a packet than for a window: the window would
	 * only copy every byte twice.  Only a system call a read is worth amortising. */
	if (total <= len || !emu_iommu_reads_syscall(tp->d))
		return payload_copy(tp->d, src, off, dst, len);
	if (tp->stage.key != key || off < tp->stage.off || off + len > tp->stage.off + tp->stage.len) {
		uint64_t want = total - off < EMU_TP_STAGE_BYTES ? total - off : EMU_TP_STAGE_BYTES;
		uint8_t *buf = stage_buf(tp);

		tp->stage.key = 0;
		if (!buf || want < len || payload_copy(tp->d, src, off, buf, (size_t)want))
			return payload_copy(tp->d, src, off, dst, len);
		tp->stage.key = key;
		tp->stage.off = off;
		tp->stage.len = want;
		tp->ctr.payload_read_aheads++;
	}
	memcpy(dst, tp->stage.buf + (off - tp->stage.off), len);
	return 0;
}
