/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The IOMMU model (docs/architecture.md, "The emulated ConnectX"): the device reaches host memory only through
 * IOVAs the shim mapped (dma_alloc, dma_pin).  A table of {iova, len, va} entries,
 * sorted by IOVA; anything outside is a DMA fault — counted, logged as a driver error,
 * and the access does not happen.
 *
 * IOVA assignment is deliberately unlike the VAs (docs/architecture.md, "The shim interface and its MMIO hook": the driver must
 * never assume IOVA == VA):
 *   offset   each mapping gets one contiguous IOVA range in a space far from any VA,
 *            keeping the offset inside the host page, with an unmapped guard page after
 *            it (so running off the end of a buffer faults instead of reading the next);
 *   scatter  pinned memory is fragmented host page by host page: consecutive VA pages
 *            get non-adjacent IOVA pages, in reverse order, so every MTT path is used.
 *            dma_alloc memory (EMU_IOMMU_CONTIGUOUS) stays IOVA-contiguous in both
 *            modes, as the PRM requires for command queues and mailboxes.
 *
 * Application memory (EMU_IOMMU_APP: the shim's dma_pin, memory registration) can
 * disappear under the device: the application may munmap it, or mprotect it read-only,
 * after registering it.  A ConnectX behind an IOMMU keeps the pages pinned and never
 * notices; this model runs inside the application's process, where a plain memcpy
 * into such memory would kill the process with SIGSEGV in the device thread.  So the
 * device reaches application memory only through copies that answer -EFAULT for a page
 * that is gone or not writable: the access fails like a DMA fault, the engines complete
 * the WQE with a protection or remote access error, and the process lives.  Two kinds:
 *   guarded  (default) hw/platform/guarded_copy.h: a memcpy whose SIGSEGV/SIGBUS inside
 *            the application's range jumps back out as -EFAULT; every other fault goes
 *            on to the application's handler or the default action.  No system call.
 *   syscall  (option copy=syscall) hw/platform/vm.h: Linux
 *            process_vm_readv/process_vm_writev on our own pid, macOS
 *            vm_read_overwrite/vm_write, one system call (about 3 us) per access, and
 *            no signal handler.
 * The guarded copy re-claims the two signals at device open and at every registration
 * of application memory (plat_guarded_copy_claim), in case the application installed
 * its own handler since.  The driver's own memory (dma_alloc: queues, CQEs, EQEs,
 * doorbell records, mailboxes) is owned by the shim, which takes it out of this table
 * before freeing it, so it is copied with plain memcpy.  Figures for both in
 * docs/benchmarks.md.  A cached "still mapped" flag would not be safe: another thread
 * can unmap between the check and the copy, and the C library unmaps freed memory
 * without going through any function a library could interpose.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/emu_dev.h"
#include "hw/platform/guarded_copy.h"
#include "hw/platform/peer.h"
#include "hw/platform/vm.h"

#define EMU_IOVA_BASE 0x00000a5e10000000ull   /* ~10 TiB, both address halves nonzero; no user VA lives there */
#define EMU_IOVA_ALIGN (64u * 1024u)          /* every contiguous mapping starts 64 KiB aligned */

struct emu_map_ent {
	uint64_t iova;
	uint64_t len;
	uint8_t *va;
	uint64_t map_id;
	pid_t pid;      /* 0: va is ours; > 0: va is in process pid (a device daemon's client);
			 * EMU_PID_NONE: a reservation, no memory (emu_iommu_reserve) */
	bool app;           /* application memory: reached through hw/platform/vm.h */
};

struct emu_iommu {
	struct emu_map_ent *e;
	size_t n, cap;
	uint64_t next_iova;
	uint64_t next_id;
	bool plain_copy;    /* the system refused the fault-safe copies: memcpy (warned once) */
	bool syscall_copy;  /* copy=syscall: hw/platform/vm.h instead of guarded_copy.h */
	bool remote;        /* another process's memory was mapped (plat_peer_copy, a system call) */
};

int emu_iommu_create(struct emu_dev *d)
{
	struct emu_iommu *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->next_iova = EMU_IOVA_BASE;
	m->next_id = 1;
	m->syscall_copy = d->cfg.copy_syscall != 0;
	if (!m->syscall_copy && plat_guarded_copy_claim() < 0) {
		emu_log(d, EMU_LOG_WARN, "cannot install the SIGSEGV/SIGBUS handler for guarded copies: "
			"copying application memory with system calls");
		m->syscall_copy = true;
	}
	d->iommu = m;
	return 0;
}

void emu_iommu_destroy(struct emu_dev *d)
{
	struct emu_iommu *m = d->iommu;

	if (!m)
		return;
	free(m->e);
	free(m);
	d->iommu = NULL;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct emu_map_ent *x = a, *y = b;

	return x->iova < y->iova ? -1 : x->iova > y->iova;
}

static int reserve(struct emu_iommu *m, size_t more)
{
	if (m->n + more <= m->cap)
		return 0;
	size_t cap = m->cap ? m->cap : 64;
	while (cap < m->n + more)
		cap *= 2;
	struct emu_map_ent *e = realloc(m->e, cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	m->e = e;
	m->cap = cap;
	return 0;
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static int map_pid(struct emu_dev *d, pid_t pid, void *va, size_t len, unsigned flags,
		   struct emu_iova_seg **segs, uint32_t *nseg, uint64_t *map_id);

int emu_iommu_map(struct emu_dev *d, void *va, size_t len, unsigned flags, struct emu_iova_seg **segs,
		  uint32_t *nseg, uint64_t *map_id)
{
	return map_pid(d, 0, va, len, flags, segs, nseg, map_id);
}

int emu_iommu_map_remote(struct emu_dev *d, pid_t pid, uint64_t rva, size_t len, struct emu_iova_seg **segs,
			 uint32_t *nseg, uint64_t *map_id)
{
	if (pid <= 0)
		return -EINVAL;
	return map_pid(d, pid, (void *)(uintptr_t)rva, len, 0, segs, nseg, map_id);
}

/* A reservation has no memory behind it: pid EMU_PID_NONE, any access faults. */
#define EMU_PID_NONE ((pid_t)-1)

int emu_iommu_reserve(struct emu_dev *d, uint64_t rva, size_t len, struct emu_iova_seg **segs, uint32_t *nseg,
		      uint64_t *map_id)
{
	/* one contiguous range whatever the mode: nothing is reached through it, and a
	 * long registration costs one entry, not one per page */
	return map_pid(d, EMU_PID_NONE, (void *)(uintptr_t)rva, len, EMU_IOMMU_CONTIGUOUS, segs, nseg, map_id);
}

static int map_pid(struct emu_dev *d, pid_t pid, void *va, size_t len, unsigned flags,
		   struct emu_iova_seg **segs, uint32_t *nseg, uint64_t *map_id)
{
	struct emu_iommu *m;
	uint64_t page, off, first_new, id;
	size_t npages, n_new;
	struct emu_iova_seg *s;
	bool app = (flags & EMU_IOMMU_APP) != 0;
	int contiguous = (flags & EMU_IOMMU_CONTIGUOUS) != 0;
	int rc = 0;

	if (!d || !va || !len || !segs || !nseg || !map_id)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	m = d->iommu;
	if (app && !m->syscall_copy)
		(void)plat_guarded_copy_claim();  /* the application may have taken SIGSEGV since */
	page = d->cfg.host_page_size;
	off = (uintptr_t)va % page;
	npages = (size_t)((off + len + page - 1) / page);
	contiguous = contiguous || d->cfg.iova_mode == EMU_IOVA_OFFSET || npages == 1;
	n_new = contiguous ? 1 : npages;
	s = calloc(n_new, sizeof(*s));
	if (!s || reserve(m, n_new) < 0) {
		free(s);
		rc = -ENOMEM;
		goto out;
	}
	id = m->next_id++;
	first_new = m->n;
	if (pid > 0)
		m->remote = true;
	if (contiguous) {
		uint64_t base = round_up(m->next_iova, EMU_IOVA_ALIGN);

		m->e[m->n++] = (struct emu_map_ent){ base + off, len, va, id, pid, app };
		s[0] = (struct emu_iova_seg){ base + off, len };
		m->next_iova = base + npages * page + page; /* guard page */
	} else {
		/* Reserve 2*npages pages; VA page i goes to IOVA page 2*(npages-1-i): reverse
		 * order with a hole between neighbours, so no two segments merge. */
		uint64_t base = round_up(m->next_iova, EMU_IOVA_ALIGN);
		uint8_t *p = va;
		size_t left = len;

		for (size_t i = 0; i < npages; i++) {
			uint64_t in = i == 0 ? off : 0;
			uint64_t chunk = page - in < left ? page - in : left;
			uint64_t iova = base + 2 * (npages - 1 - i) * page + in;

			m->e[m->n++] = (struct emu_map_ent){ iova, chunk, p, id, pid, app };
			s[i] = (struct emu_iova_seg){ iova, chunk };
			p += chunk;
			left -= chunk;
		}
		m->next_iova = base + 2 * npages * page + page;
	}
	/* New IOVAs are above every older one: only the new tail needs sorting. */
	qsort(m->e + first_new, m->n - first_new, sizeof(*m->e), ent_cmp);
	*segs = s;
	*nseg = (uint32_t)n_new;
	*map_id = id;
out:
	pthread_mutex_unlock(&d->lock);
	return rc;
}

int emu_iommu_map_at(struct emu_dev *d, void *va, size_t len, unsigned flags, const struct emu_iova_seg *segs,
		     uint32_t nseg, uint64_t *map_id)
{
	struct emu_iommu *m;
	uint64_t total = 0, id;
	uint8_t *p = va;
	int rc = 0;

	if (!d || !va || !len || !segs || !nseg || !map_id)
		return -EINVAL;
	for (uint32_t i = 0; i < nseg; i++) {
		if (!segs[i].len || segs[i].iova + segs[i].len < segs[i].iova)
			return -EINVAL;
		total += segs[i].len;
	}
	if (total != len)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	m = d->iommu;
	if ((flags & EMU_IOMMU_APP) && !m->syscall_copy)
		(void)plat_guarded_copy_claim();
	for (uint32_t i = 0; i < nseg && !rc; i++)
		for (size_t k = 0; k < m->n; k++)
			if (segs[i].iova < m->e[k].iova + m->e[k].len && m->e[k].iova < segs[i].iova + segs[i].len)
				rc = -EEXIST;
	if (!rc)
		rc = reserve(m, nseg);
	if (!rc) {
		id = m->next_id++;
		for (uint32_t i = 0; i < nseg; i++) {
			m->e[m->n++] = (struct emu_map_ent){ segs[i].iova, segs[i].len, p, id, 0, (flags & EMU_IOMMU_APP) != 0 };
			p += segs[i].len;
		}
		/* IOVAs come in any order here: the whole table is sorted again */
		qsort(m->e, m->n, sizeof(*m->e), ent_cmp);
		*map_id = id;
	}
	pthread_mutex_unlock(&d->lock);
	return rc;
}

int emu_iommu_unmap(struct emu_dev *d, uint64_t map_id)
{
	struct emu_iommu *m;
	size_t w = 0, before;

	if (!d)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	m = d->iommu;
	before = m->n;
	for (size_t r = 0; r < m->n; r++)
		if (m->e[r].map_id != map_id)
			m->e[w++] = m->e[r];
	m->n = w;
	pthread_mutex_unlock(&d->lock);
	return w == before ? -ENOENT : 0;
}

/* Entry containing iova, or NULL. */
static struct emu_map_ent *find(struct emu_iommu *m, uint64_t iova)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		struct emu_map_ent *e = &m->e[mid];

		if (iova < e->iova)
			hi = mid;
		else if (iova - e->iova >= e->len)
			lo = mid + 1;
		else
			return e;
	}
	return NULL;
}

bool emu_iommu_reads_syscall(struct emu_dev *d)
{
	const struct emu_iommu *m = d->iommu;

	return m && !m->plain_copy && (m->syscall_copy || m->remote);
}

int emu_iova_mapped(struct emu_dev *d, uint64_t iova, size_t len)
{
	struct emu_iommu *m = d->iommu;

	while (len) {
		struct emu_map_ent *e = find(m, iova);
		uint64_t avail;

		if (!e)
			return 0;
		avail = e->len - (iova - e->iova);
		if (avail >= len)
			return 1;
		iova += avail;
		len -= avail;
	}
	return 1;
}

/* Under ThreadSanitizer (cmake -DUVERBS_TSAN=ON) the copies to and from host memory
 * are not recorded: they stand for a PCIe device's DMA, ordered with the driver by the
 * PRM's owner bits, doorbells and fences, which TSan cannot model (it sees no device
 * and no fences), and on hardware they are no thread of the process.  The emulator's
 * own state stays checked: only the copies are hidden. */
#if defined(UVERBS_TSAN)
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);
#define emu_dma_unseen_begin() __tsan_ignore_thread_begin()
#define emu_dma_unseen_end() __tsan_ignore_thread_end()
#else
#define emu_dma_unseen_begin() ((void)0)
#define emu_dma_unseen_end() ((void)0)
#endif

/* Application memory through the fault-safe copies (see the file comment). */
static int app_copy(struct emu_dev *d, struct emu_iommu *m, uint8_t *host, uint8_t *b, size_t n, int write)
{
	int rc;

	if (m->plain_copy)
		goto plain;
	if (!m->syscall_copy) {
		emu_dma_unseen_begin();
		rc = write ? plat_guarded_write(host, b, n) : plat_guarded_read(b, host, n);
		emu_dma_unseen_end();
	} else {
		rc = write ? plat_vm_write(host, b, n) : plat_vm_read(b, host, n);
	}
	if (rc == 0)
		return 0;
	if (rc != -ENOSYS) {
		d->ctr.dma_host_faults++;
		emu_log(d, EMU_LOG_WARN, "DMA %s of %zu bytes at %p: the application's memory is %s", write ? "write" : "read",
			n, (void *)host, write ? "gone or not writable" : "gone");
		return -EFAULT;
	}
	m->plain_copy = true;
	emu_log(d, EMU_LOG_WARN, "the system refuses process_vm_readv/writev: the device copies registered memory "
		"with memcpy, and memory unmapped after registration will crash the process");
plain:
	if (write)
		memcpy(host, b, n);
	else
		memcpy(b, host, n);
	return 0;
}

static int access(struct emu_dev *d, uint64_t iova, void *buf, size_t len, int write)
{
	struct emu_iommu *m = d->iommu;
	uint8_t *b = buf;

	if (d->removed)
		return -EIO; /* the link is gone: no DMA in either direction */
	if (!len)
		return 0;
	if (iova + len < iova || !emu_iova_mapped(d, iova, len)) {
		d->ctr.dma_faults++;
		emu_drverr(d, "DMA %s of %zu bytes at unmapped IOVA 0x%llx", write ? "write" : "read", len,
			   (unsigned long long)iova);
		return -EFAULT;
	}
	while (len) {
		struct emu_map_ent *e = find(m, iova);
		uint64_t in = iova - e->iova;
		size_t n = e->len - in < len ? (size_t)(e->len - in) : len;

		if (e->pid == EMU_PID_NONE) {
			d->ctr.dma_faults++;
			emu_drverr(d, "DMA %s of %zu bytes at IOVA 0x%llx: reserved for a client's engine, no memory here",
				   write ? "write" : "read", n, (unsigned long long)iova);
			return -EFAULT;
		} else if (e->pid) {
			int rc = plat_peer_copy(e->pid, (uint64_t)(uintptr_t)(e->va + in), b, n, write);
			if (rc) {
				d->ctr.dma_faults++;
				emu_drverr(d, "DMA %s of %zu bytes at IOVA 0x%llx: process %d: %d",
					   write ? "write" : "read", n, (unsigned long long)iova, (int)e->pid, rc);
				return -EFAULT;
			}
		} else if (e->app) {
			if (app_copy(d, m, e->va + in, b, n, write))
				return -EFAULT;
		} else {
			emu_dma_unseen_begin();
			if (write)
				memcpy(e->va + in, b, n);
			else
				memcpy(b, e->va + in, n);
			emu_dma_unseen_end();
		}
		b += n;
		iova += n;
		len -= n;
	}
	return 0;
}

int emu_dma_read(struct emu_dev *d, uint64_t iova, void *buf, size_t len)
{
	if (!emu_pci_dma_allowed(d))
		return emu_pci_dma_blocked(d, iova, len, 0);   /* PCI rules: pci.c */
	int rc = access(d, iova, buf, len, 0);

	if (rc == 0) {
		d->ctr.dma_reads++;
		d->ctr.dma_read_bytes += len;
	}
	return rc;
}

int emu_dma_write(struct emu_dev *d, uint64_t iova, const void *buf, size_t len)
{
	if (!emu_pci_dma_allowed(d))
		return emu_pci_dma_blocked(d, iova, len, 1);   /* PCI rules: pci.c */
	int rc = access(d, iova, (void *)buf, len, 1);

	if (rc == 0) {
		d->ctr.dma_writes++;
		d->ctr.dma_write_bytes += len;
	}
	return rc;
}
