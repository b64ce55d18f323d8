/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Memory registration judged by the device: the emulated ConnectX reaches the
 * registered memory only through the MKey's translation (MTT entries, KLM entries over
 * direct MKeys) and its IOMMU, so data that arrives intact proves the translation.
 *
 *  - a region split over several direct MKeys under an indirect (KLM) one, on IOVAs
 *    scattered page by page, carries an RDMA WRITE and READ through every part;
 *  - a region that must be split keeps every KLM entry within the 2 GiB a KLM's
 *    byte_count can describe (Linux mlx5_ifc.h MLX5_MAX_KLM_BYTE_COUNT);
 *  - memory a shim could pin for reading only (VFIO maps unwritable pages read-only)
 *    registers for reading, and is refused for any write access. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "hw/emu/objects.h"
#include "hw/shim/shim.h"
#include "tests/mlx5/mx5_loop.h"

static void teardown(void)
{
	loop_close();
}

TestSuite(mr_dma, .fini = teardown, .timeout = 60);

Test(mr_dma, split_mr_on_scattered_pages_carries_data_through_every_part)
{
	loop_open("emu:iova=scatter");
	/* four MTT entries per direct MKey: a 64 KiB region becomes 5 parts (it starts
	 * mid-page) under one indirect MKey */
	mx5_device_set_mkey_mtt_limit(dev, 4);
	size_t len = 16 * 4096;
	uint8_t *src = aligned_alloc(4096, len), *dstpages = aligned_alloc(4096, len + 4096);
	uint8_t *back = aligned_alloc(4096, len);
	cr_assert(src && dstpages && back);
	uint8_t *dst = dstpages + 100;
	for (size_t i = 0; i < len; i++)
		src[i] = (uint8_t)(i * 7 + 3);
	memset(dstpages, 0, len + 4096);
	memset(back, 0, len);
	struct mx5_mr *smr, *dmr, *bmr;
	unsigned acc = MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ;
	cr_assert_eq(mx5_mr_reg(pd, src, len, acc, &smr), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_mr_reg(pd, dst, len, acc, &dmr), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_mr_reg(pd, back, len, acc, &bmr), 0, "%s", mx5_device_error(dev));
	struct mx5_mr_info di;
	mx5_mr_query(dmr, &di);
	cr_assert_eq(di.indirect, 1);
	cr_assert_eq(di.nparts, 5, "%u parts", di.nparts);
	cr_assert_eq(di.log_page_size, 12);

	struct mx5_cq *cq = loop_cq(16, NULL);
	struct mx5_qp *a = loop_qp(cq, cq, NULL, 8), *b = loop_qp(cq, cq, NULL, 8);
	loop_connect(a, mx5_qp_num(b));
	loop_connect(b, mx5_qp_num(a));
	struct ibv_wc wc;
	loop_post_rdma(a, IBV_WR_RDMA_WRITE, 1, src, (uint32_t)len, loop_lkey(smr),
		       (uintptr_t)dst, di.rkey, IBV_SEND_SIGNALED);
	loop_wait(cq, &wc, 10000);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "WRITE: status %d", wc.status);
	cr_assert_eq(memcmp(dst, src, len), 0, "the WRITE landed where every part translates");
	for (size_t i = 0; i < 100; i++)
		cr_assert_eq(dstpages[i], 0, "nothing before the region");
	for (size_t i = 100 + len; i < len + 4096; i++)
		cr_assert_eq(dstpages[i], 0, "nothing after the region");
	loop_post_rdma(a, IBV_WR_RDMA_READ, 2, back, (uint32_t)len, loop_lkey(bmr), (uintptr_t)dst,
		       di.rkey, IBV_SEND_SIGNALED);
	loop_wait(cq, &wc, 10000);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "READ: status %d", wc.status);
	cr_assert_eq(memcmp(back, src, len), 0, "the READ came back through every part");
	free(src);
	free(dstpages);
	free(back);
}

Test(mr_dma, klm_entries_of_a_split_region_stay_within_2_gib)
{
	loop_open("emu:iova=offset");
	/* 9 GiB of address space, never touched (MAP_NORESERVE).  The emulated IOMMU maps
	 * it contiguously at a 64 KiB aligned IOVA; a VA 32 KiB past a 64 KiB boundary then
	 * allows 32 KiB MTT pages exactly, and one MKey's 130,816 entries would cover 4 GiB,
	 * more than one KLM entry may say. */
	const size_t gib = 1ull << 30, len = 9 * gib;
	uint8_t *map = mmap(NULL, len + (1u << 17), PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED)
		cr_skip_test("cannot reserve 9 GiB of address space here");
	uint8_t *va = (uint8_t *)((((uintptr_t)map + 0xffff) & ~(uintptr_t)0xffff) + 0x8000);
	struct mx5_mr *mr = NULL;
	int rc = mx5_mr_reg(pd, va, len, MX5_ACCESS_LOCAL_WRITE, &mr);
	cr_assert_eq(rc, 0, "%s", mx5_device_error(dev));
	struct mx5_mr_info in;
	mx5_mr_query(mr, &in);
	cr_assert_eq(in.log_page_size, 15);
	cr_assert_eq(in.indirect, 1);
	uint64_t part_bytes = (1ull << in.log_page_size) * ((1ull << 31) >> in.log_page_size);
	cr_assert_geq((uint64_t)in.nparts * part_bytes, len);
	cr_assert_geq(in.nparts, 5, "9 GiB in parts of at most 2 GiB: %u parts", in.nparts);
	/* the device translates the first and the last byte, 9 GiB - 1 apart in IOVA */
	struct emu_iova_seg s0, s1;
	cr_assert_eq(emu_mkey_translate(emu, in.lkey, 0xffffffffu, EMU_MKEY_ACC_LR,
					(uintptr_t)va, 1, &s0, 1), 1);
	cr_assert_eq(emu_mkey_translate(emu, in.lkey, 0xffffffffu, EMU_MKEY_ACC_LR,
					(uintptr_t)va + len - 1, 1, &s1, 1), 1);
	cr_assert_eq(s1.iova - s0.iova, len - 1);
	cr_assert_eq(mx5_mr_dereg(mr), 0);
	munmap(map, len + (1u << 17));
}

/* "rofake:" -- the emulated device, except that every pin comes back read-only, as VFIO
 * reports pages it could map for reading only. */
static struct shim_ops rofake_ops;
static const struct shim_ops *rofake_inner;

static int rofake_pin(struct shim_dev *d, void *va, size_t len, struct shim_pin *out)
{
	int rc = rofake_inner->dma_pin(d, va, len, out);
	if (rc == 0)
		out->readonly = 1;
	return rc;
}

static int rofake_open(const char *args, struct shim_dev **out)
{
	char err[SHIM_ERR_LEN];
	(void)args;
	int rc = shim_open("emu:", out, err, sizeof(err));
	if (rc)
		return rc;
	(*out)->ops = &rofake_ops;
	return 0;
}

static void rofake_close(struct shim_dev *d)
{
	d->ops = rofake_inner;
	rofake_inner->close(d);
}

Test(mr_dma, read_only_memory_registers_for_reading_and_refuses_write_access)
{
	/* borrow the emulated shim's operations through a first emu: device */
	struct shim_dev *probe;
	char err[SHIM_ERR_LEN];
	cr_assert_eq(shim_open("emu:", &probe, err, sizeof(err)), 0, "%s", err);
	rofake_inner = probe->ops;
	shim_close(probe);
	rofake_ops = *rofake_inner;
	rofake_ops.scheme = "rofake";
	rofake_ops.open = rofake_open;
	rofake_ops.close = rofake_close;
	rofake_ops.dma_pin = rofake_pin;
	cr_assert_eq(shim_register(&rofake_ops), 0);
	/* the emulated device behind another scheme (emu_device_from_shim does not know
	 * it): the driver alone */
	cr_assert_eq(mx5_device_open("rofake:", &dev), 0, "%s", mx5_open_error());
	cr_assert_eq(mx5_pd_alloc(dev, &pd), 0, "%s", mx5_device_error(dev));
	static uint8_t buf[8192];
	struct mx5_mr *mr = NULL;
	cr_assert_eq(mx5_mr_reg(pd, buf, sizeof(buf), MX5_ACCESS_REMOTE_READ, &mr), 0, "%s",
		     mx5_device_error(dev));
	cr_assert_eq(mx5_mr_dereg(mr), 0);
	const unsigned writes[] = { MX5_ACCESS_LOCAL_WRITE,
				    MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE,
				    MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_ATOMIC };
	for (unsigned i = 0; i < 3; i++) {
		mr = NULL;
		cr_assert_eq(mx5_mr_reg(pd, buf, sizeof(buf), writes[i], &mr), -EFAULT, "access 0x%x",
			     writes[i]);
		cr_assert_null(mr);
		cr_assert(strstr(mx5_device_error(dev), "read-only"), "%s", mx5_device_error(dev));
	}
}
