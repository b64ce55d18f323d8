/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The IOMMU model: IOVAs unlike VAs, page-by-page scattering of pins, and DMA to an
 * IOVA nobody pinned refused and reported, in both iova modes and both copy kinds. */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hw/emu/emu_dev.h"
#include "hw/platform/guarded_copy.h"
#include "tests/emu/emu_test.h"

Test(emu_iommu, dma_alloc_gives_a_contiguous_iova_unlike_the_va)
{
	struct et t;
	struct shim_dma m;

	et_open(&t, "emu:iova=scatter");
	cr_assert_eq(shim_dma_alloc(t.dev, 3 * 4096, 4096, &m), 0);
	cr_assert_neq(m.iova, (uint64_t)(uintptr_t)m.va);
	cr_assert_eq(m.iova % 4096, 0);
	shim_dma_free(t.dev, &m);
	et_close(&t);
}

Test(emu_iommu, offset_mode_pins_in_one_segment)
{
	struct et t;
	struct shim_pin p;
	uint8_t *buf = aligned_alloc(4096, 4 * 4096);

	et_open(&t, "emu:iova=offset");
	cr_assert_eq(shim_dma_pin(t.dev, buf + 100, 3 * 4096, &p), 0);
	cr_assert_eq(p.nseg, 1);
	cr_assert_eq(p.seg[0].iova % 4096, 100, "offset inside the page is kept");
	cr_assert_neq(p.seg[0].iova, (uint64_t)(uintptr_t)(buf + 100));
	shim_dma_unpin(t.dev, &p);
	et_close(&t);
	free(buf);
}

Test(emu_iommu, scatter_mode_fragments_pins_page_by_page)
{
	struct et t;
	struct shim_pin p;
	uint8_t *buf = aligned_alloc(16384, 8 * 16384);

	et_open(&t, "emu:iova=scatter,page=16k");
	cr_assert_eq(shim_dma_pin(t.dev, buf, 4 * 16384, &p), 0);
	cr_assert_eq(p.nseg, 4);
	for (unsigned i = 0; i + 1 < p.nseg; i++) {
		cr_assert_eq(p.seg[i].len, 16384);
		cr_assert_neq(p.seg[i].iova + p.seg[i].len, p.seg[i + 1].iova, "segments %u/%u not adjacent", i, i + 1);
	}
	shim_dma_unpin(t.dev, &p);
	et_close(&t);
	free(buf);
}

/* An EQ on application memory that the driver unpins behind the device's back: the
 * next EQE is a DMA to an unpinned IOVA, refused, counted and logged. */
static void eq_after_unpin(const char *uri)
{
	struct et t;
	struct et_eq eq;
	struct shim_pin p;
	struct emu_counters c;
	uint64_t pas[2] = { 0, 0 };
	size_t page = 4096;
	uint8_t *buf = aligned_alloc(4096, 2 * page);

	memset(buf, 0, 2 * page);
	et_open(&t, uri);
	et_bringup(&t);
	cr_assert_eq(shim_dma_pin(t.dev, buf, 2 * page, &p), 0);
	/* 128 EQEs = 8 KiB = two 4 KiB pages, one per segment when scattered */
	for (unsigned i = 0; i < 2; i++) {
		uint64_t off = i * page;
		for (unsigned s = 0; s < p.nseg; s++) {
			if (off < p.seg[s].len) {
				pas[i] = p.seg[s].iova + off;
				break;
			}
			off -= p.seg[s].len;
		}
	}
	/* et_create_eq_at sends one pas entry when overridden: use a 64-entry EQ (one page). */
	et_expect(&t, et_create_eq_at(&t, &eq, et_alloc_uar(&t), 6, 0, ET_EVBIT(0x0b), pas), 0, 0);
	cr_assert_eq(emu_pages_request(t.emu, 1), 0);
	cr_assert_eq(PRM_GET(eqe, buf, event_type), 0x0b, "first EQE landed in pinned memory");
	shim_dma_unpin(t.dev, &p);
	emu_counters(t.emu, &c);
	uint64_t before = c.dma_faults;
	cr_assert_eq(emu_pages_request(t.emu, 1), -EFAULT);
	emu_counters(t.emu, &c);
	cr_assert_eq(c.dma_faults, before + 1);
	cr_assert(emu_drverr_find(t.emu, "unmapped IOVA"));
	et_close(&t);
	free(buf);
}

Test(emu_iommu, dma_to_an_unpinned_iova_is_refused_with_iova_offset)
{
	eq_after_unpin("emu:iova=offset");
}

Test(emu_iommu, dma_to_an_unpinned_iova_is_refused_with_iova_scatter)
{
	eq_after_unpin("emu:iova=scatter");
}

Test(emu_iommu, pages_beyond_the_end_of_a_mapping_are_not_pinned)
{
	struct et t;
	struct shim_dma m;
	uint64_t p;

	et_open(&t, "emu:");
	et_simple(&t, PRM_CMD_OP_ENABLE_HCA, 0, PRM_SIZE(enable_hca_in), 16);
	cr_assert_eq(shim_dma_alloc(t.dev, 4096, 4096, &m), 0);
	p = m.iova + 4096; /* the guard page after the mapping */
	et_expect(&t, et_give_pages(&t, &p, 1), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_PAGE_NOT_PINNED);
	et_close(&t);
}

struct pin_arg {
	struct shim_dev *dev;
	int failures;
};

static void *pin_loop(void *p)
{
	struct pin_arg *a = p;
	uint8_t *buf = aligned_alloc(4096, 4 * 4096);

	for (int i = 0; i < 300; i++) {
		struct shim_pin pin;
		struct shim_dma m;

		if (shim_dma_pin(a->dev, buf, 4 * 4096, &pin) < 0 || shim_dma_alloc(a->dev, 4096, 4096, &m) < 0) {
			a->failures++;
			continue;
		}
		shim_dma_free(a->dev, &m);
		shim_dma_unpin(a->dev, &pin);
	}
	free(buf);
	return NULL;
}

Test(emu_iommu, pins_and_allocations_from_several_threads_are_safe)
{
	struct shim_dev *d;
	char err[256];
	pthread_t th[4];
	struct pin_arg a[4];

	cr_assert_eq(shim_open("emu:iova=scatter", &d, err, sizeof(err)), 0, "%s", err);
	for (int i = 0; i < 4; i++) {
		a[i] = (struct pin_arg){ d, 0 };
		cr_assert_eq(pthread_create(&th[i], NULL, pin_loop, &a[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		cr_assert_eq(a[i].failures, 0);
	}
	shim_close(d);
}

/* Pinned application memory that the application unmaps or makes read-only while it is
 * still mapped for the device: the device's access is a -EFAULT counted in
 * dma_host_faults, never a SIGSEGV in the caller, in both iova modes. */
static void app_memory_gone(const char *uri, int how)
{
	struct et t;
	struct shim_pin p;
	struct emu_counters c;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *mem = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t b[256];

	cr_assert_neq(mem, MAP_FAILED);
	memset(mem, 0x3c, 2 * pg);
	memset(b, 0xc3, sizeof(b));
	et_open(&t, uri);
	cr_assert_eq(shim_dma_pin(t.dev, mem, 2 * pg, &p), 0);
	cr_assert_eq(p.readonly, 0);
	cr_assert_eq(emu_dma_write(t.emu, p.seg[0].iova, b, sizeof(b)), 0, "writable while mapped");
	if (how == 0)
		cr_assert_eq(munmap(mem, 2 * pg), 0);
	else
		cr_assert_eq(mprotect(mem, 2 * pg, PROT_READ), 0);
	cr_assert_eq(emu_dma_write(t.emu, p.seg[0].iova + 8, b, sizeof(b)), -EFAULT);
	if (how == 0)
		cr_assert_eq(emu_dma_read(t.emu, p.seg[0].iova, b, sizeof(b)), -EFAULT);
	else
		cr_assert_eq(mem[300], 0x3c, "nothing written into read-only memory");
	emu_counters(t.emu, &c);
	cr_assert_eq(c.dma_host_faults, how == 0 ? 2 : 1);
	cr_assert_eq(c.dma_faults, 0, "the IOVA itself was mapped");
	shim_dma_unpin(t.dev, &p);
	et_close(&t);
	if (how == 1)
		munmap(mem, 2 * pg);
}

Test(emu_iommu, dma_to_app_memory_unmapped_behind_the_device_is_efault)
{
	app_memory_gone("emu:iova=offset", 0);
	app_memory_gone("emu:iova=scatter", 0);
	app_memory_gone("emu:iova=scatter,copy=syscall", 0);
}

Test(emu_iommu, dma_write_to_app_memory_made_read_only_behind_the_device_is_efault)
{
	app_memory_gone("emu:iova=offset", 1);
	app_memory_gone("emu:iova=scatter", 1);
	app_memory_gone("emu:iova=scatter,copy=syscall", 1);
}

static void exit_3(int sig)
{
	(void)sig;
	_exit(3);
}

/* An application that installs its own SIGSEGV handler after the device opened: the
 * next registration puts the device's handler back in front, so a DMA into memory
 * unmapped behind the device is still an -EFAULT and not the application's handler. */
Test(emu_iommu, registration_reclaims_sigsegv_from_a_handler_installed_after_open)
{
	struct et t;
	struct shim_pin p;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *mem = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t b[64] = { 0 };

	cr_assert_neq(mem, MAP_FAILED);
	et_open(&t, "emu:");
	cr_assert(plat_guarded_copy_owns_signals());
	cr_assert_neq(signal(SIGSEGV, exit_3), SIG_ERR);
	cr_assert_eq(shim_dma_pin(t.dev, mem, pg, &p), 0);
	cr_assert(plat_guarded_copy_owns_signals());
	cr_assert_eq(munmap(mem, pg), 0);
	cr_assert_eq(emu_dma_write(t.emu, p.seg[0].iova, b, sizeof(b)), -EFAULT);
	shim_dma_unpin(t.dev, &p);
	et_close(&t);
}

Test(emu_iommu, copy_syscall_leaves_the_signal_handlers_alone)
{
	struct et t;
	struct shim_pin p;
	uint8_t mem[64], b[64] = { 0 };

	et_open(&t, "emu:copy=syscall");
	cr_assert_eq(shim_dma_pin(t.dev, mem, sizeof(mem), &p), 0);
	cr_assert_eq(emu_dma_write(t.emu, p.seg[0].iova, b, sizeof(b)), 0);
	cr_assert_not(plat_guarded_copy_owns_signals());
	shim_dma_unpin(t.dev, &p);
	et_close(&t);
}

Test(emu_iommu, pin_of_read_only_memory_is_marked_readonly)
{
	struct et t;
	struct shim_pin p;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *mem = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(mem, MAP_FAILED);
	et_open(&t, "emu:");
	cr_assert_eq(shim_dma_pin(t.dev, mem, pg, &p), 0);
	cr_assert_eq(p.readonly, 1, "the driver must learn the device may not write there");
	shim_dma_unpin(t.dev, &p);
	et_close(&t);
	munmap(mem, pg);
}
