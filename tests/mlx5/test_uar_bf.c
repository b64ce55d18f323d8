/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* BlueFlame registers (PRM "UAR Page", "BlueFlame"): the data path bursts a WQE into
 * its QP's register without a lock, so no two QPs may share one -- two threads posting
 * to two QPs would otherwise interleave their bursts in one buffer.  The driver gives
 * each QP a register of its own, allocating UAR pages as the first one fills, creates
 * the QP on that UAR (the device takes a QP's doorbells only through its own UAR: the
 * emulator logs a driver error otherwise), and past its UAR limit gives QPs doorbells
 * only, on one register no QP bursts into -- as every QP does on a shim that maps the
 * BAR without write-combining (VFIO). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "hw/shim/shim.h"
#include "tests/mlx5/mx5_loop.h"

static void setup(void)
{
	loop_open("emu:");
}

static void teardown(void)
{
	loop_close();
}

TestSuite(uar_bf, .init = setup, .fini = teardown, .timeout = 60);

static uint64_t uars_live(void)
{
	static struct emu_counters c;
	emu_counters(emu, &c);
	return c.objects_live[EMU_OBJ_UAR];
}

/* The register a send queue writes: its base (the halves alternate inside it). */
static uint64_t reg_of(struct mx5_qp *qp)
{
	const struct mx5_sq *sq = mx5_qp_sq_state(qp);
	return sq->bf_off & ~((uint64_t)sq->bf_size * 2 - 1);
}

/* One signalled inline WRITE from a to b (a loopback pair), completed successfully. */
static void write_once(struct mx5_cq *cq, struct mx5_qp *a, uint8_t *src, uint8_t *dst,
		       struct mx5_mr *mr, uint64_t id)
{
	struct mx5_mr_info mi;
	mx5_mr_query(mr, &mi);
	loop_post_rdma(a, IBV_WR_RDMA_WRITE, id, src, 8, mi.lkey, (uintptr_t)dst, mi.rkey,
		       IBV_SEND_SIGNALED | IBV_SEND_INLINE);
	struct ibv_wc wc;
	loop_wait(cq, &wc, 10000);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "wr %llu: status %d", (unsigned long long)id,
		     wc.status);
	cr_assert_eq(wc.wr_id, id);
	cr_assert_eq(memcmp(src, dst, 8), 0);
}

Test(uar_bf, every_qp_bursts_into_a_register_of_its_own_on_its_own_uar)
{
	enum { N = 12 };
	uint64_t before = uars_live();
	struct mx5_cq *cq = loop_cq(64, NULL);
	struct mx5_qp *qp[N];
	for (int i = 0; i < N; i++) {
		qp[i] = loop_qp(cq, cq, NULL, 8);
		const struct mx5_sq *sq = mx5_qp_sq_state(qp[i]);
		cr_assert_gt(sq->bf_size, 0, "QP %d has BlueFlame", i);
		for (int j = 0; j < i; j++)
			cr_assert_neq(reg_of(qp[i]), reg_of(qp[j]), "QPs %d and %d share a register", i, j);
	}
	/* 2 KiB of registers per UAR page at 512 bytes: 3 left in the first (one is kept
	 * for doorbells), 4 in each new one */
	cr_assert_eq(uars_live() - before, 3, "%llu UAR pages added",
		     (unsigned long long)(uars_live() - before));
	static uint8_t buf[4096];
	struct mx5_mr *mr;
	cr_assert_eq(mx5_mr_reg(pd, buf, sizeof(buf), MX5_ACCESS_LOCAL_WRITE |
			       MX5_ACCESS_REMOTE_WRITE, &mr), 0, "%s", mx5_device_error(dev));
	for (int i = 0; i < N; i += 2) {
		loop_connect(qp[i], mx5_qp_num(qp[i + 1]));
		loop_connect(qp[i + 1], mx5_qp_num(qp[i]));
	}
	static struct emu_counters c0, c1;
	emu_counters(emu, &c0);
	for (int i = 0; i < N; i++) {
		memset(buf + 64 * i, 0xa0 + i, 8);
		write_once(cq, qp[i], buf + 64 * i, buf + 2048 + 64 * i, mr, (uint64_t)i);
	}
	emu_counters(emu, &c1);
	cr_assert_eq(c1.bf_writes - c0.bf_writes, N, "one BlueFlame burst per post");
	cr_assert_eq(c1.driver_errors, 0, "a doorbell came through a UAR the QP was not created on");
	/* destroyed QPs give their registers back, and the pages go at close */
	for (int i = 0; i < N; i++)
		cr_assert_eq(mx5_qp_destroy(qp[i]), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_device_shutdown(dev), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(uars_live(), 0, "every UAR page deallocated");
}

Test(uar_bf, a_destroyed_qps_register_is_handed_out_again)
{
	struct mx5_cq *cq = loop_cq(16, NULL);
	struct mx5_qp *a = loop_qp(cq, cq, NULL, 8), *b = loop_qp(cq, cq, NULL, 8);
	struct mx5_qp *c = loop_qp(cq, cq, NULL, 8);
	uint64_t rb = reg_of(b), uars = uars_live();
	cr_assert_eq(mx5_qp_destroy(b), 0);
	struct mx5_qp *d = loop_qp(cq, cq, NULL, 8);
	cr_assert_eq(reg_of(d), rb, "the free register first");
	cr_assert_eq(uars_live(), uars, "no new UAR page for it");
	cr_assert_neq(reg_of(d), reg_of(a));
	cr_assert_neq(reg_of(d), reg_of(c));
}

Test(uar_bf, past_the_uar_limit_qps_ring_doorbells_on_a_register_nobody_bursts_into)
{
	mx5_device_set_uar_limit(dev, 1);
	struct mx5_cq *cq = loop_cq(64, NULL);
	enum { OWN = 3 + 4 };
	struct mx5_qp *qp[OWN + 2];
	for (int i = 0; i < OWN + 2; i++)
		qp[i] = loop_qp(cq, cq, NULL, 8);
	const struct mx5_sq *first = mx5_qp_sq_state(qp[0]);
	/* the first UAR's register 0: just below the first QP's (register 1) */
	uint64_t shared = reg_of(qp[0]) - (uint64_t)first->bf_size * 2;
	for (int i = 0; i < OWN; i++)
		cr_assert_gt(((const struct mx5_sq *)mx5_qp_sq_state(qp[i]))->bf_size, 0);
	for (int i = OWN; i < OWN + 2; i++) {
		const struct mx5_sq *sq = mx5_qp_sq_state(qp[i]);
		cr_assert_eq(sq->bf_size, 0, "QP %d: doorbells only", i);
		cr_assert_eq(sq->bf_off, shared, "QP %d rings the kept-back register", i);
		for (int j = 0; j < OWN; j++)
			cr_assert_neq(reg_of(qp[j]), shared);
	}
	static uint8_t buf[4096];
	struct mx5_mr *mr;
	cr_assert_eq(mx5_mr_reg(pd, buf, sizeof(buf), MX5_ACCESS_LOCAL_WRITE |
			       MX5_ACCESS_REMOTE_WRITE, &mr), 0, "%s", mx5_device_error(dev));
	loop_connect(qp[OWN], mx5_qp_num(qp[OWN + 1]));
	loop_connect(qp[OWN + 1], mx5_qp_num(qp[OWN]));
	static struct emu_counters c0, c1;
	emu_counters(emu, &c0);
	memset(buf, 0x5c, 8);
	write_once(cq, qp[OWN], buf, buf + 2048, mr, 1);
	emu_counters(emu, &c1);
	cr_assert_eq(c1.bf_writes - c0.bf_writes, 0, "no burst from a doorbell-only QP");
	cr_assert_geq(c1.send_doorbells - c0.send_doorbells, 1, "a 64-bit doorbell instead");
	cr_assert_eq(c1.driver_errors, 0);
}

/* "nowc:" -- the emulated device behind a shim that, like VFIO, offers no
 * write-combining mapping of the BAR. */
static struct shim_ops nowc_ops;
static const struct shim_ops *nowc_inner;
static struct emu_dev *nowc_emu;

static int nowc_bar(struct shim_dev *d, unsigned index, struct shim_bar *out)
{
	int rc = nowc_inner->bar(d, index, out);
	if (rc == 0)
		out->wc_base = NULL;
	return rc;
}

static int nowc_open(const char *args, struct shim_dev **out)
{
	char err[SHIM_ERR_LEN];
	(void)args;
	int rc = shim_open("emu:", out, err, sizeof(err));
	if (rc)
		return rc;
	nowc_emu = emu_device_from_shim(*out);
	(*out)->ops = &nowc_ops;
	return 0;
}

static void nowc_close(struct shim_dev *d)
{
	d->ops = nowc_inner;
	nowc_inner->close(d);
}

Test(uar_bf, without_write_combining_every_qp_rings_doorbells)
{
	loop_close();   /* this test brings its own device */
	struct shim_dev *probe;
	char err[SHIM_ERR_LEN];
	cr_assert_eq(shim_open("emu:", &probe, err, sizeof(err)), 0, "%s", err);
	nowc_inner = probe->ops;
	shim_close(probe);
	nowc_ops = *nowc_inner;
	nowc_ops.scheme = "nowc";
	nowc_ops.open = nowc_open;
	nowc_ops.close = nowc_close;
	nowc_ops.bar = nowc_bar;
	cr_assert_eq(shim_register(&nowc_ops), 0);
	cr_assert_eq(mx5_device_open("nowc:", &dev), 0, "%s", mx5_open_error());
	emu = nowc_emu;
	cr_assert_not_null(emu);
	cr_assert_eq(mx5_pd_alloc(dev, &pd), 0, "%s", mx5_device_error(dev));
	uint32_t ip = emu_ipv4(emu);
	struct mx5_gid_entry g;
	uint8_t mac[6];
	emu_roce_mac_from_ipv4(ip, mac);
	mx5_gid_entry_ipv4(&g, ip, mac);
	cr_assert_eq(mx5_gid_set(dev, 1, 0, &g), 0, "%s", mx5_device_error(dev));
	uint64_t uars = uars_live();
	struct mx5_cq *cq = loop_cq(16, NULL);
	struct mx5_qp *a = loop_qp(cq, cq, NULL, 8), *b = loop_qp(cq, cq, NULL, 8);
	for (int i = 0; i < 2; i++) {
		const struct mx5_sq *sq = mx5_qp_sq_state(i ? b : a);
		cr_assert_eq(sq->bf_size, 0, "no BlueFlame without write-combining");
	}
	cr_assert_eq(uars_live(), uars, "no UAR pages for registers nobody bursts into");
	static uint8_t buf[4096];
	struct mx5_mr *mr;
	cr_assert_eq(mx5_mr_reg(pd, buf, sizeof(buf), MX5_ACCESS_LOCAL_WRITE |
			       MX5_ACCESS_REMOTE_WRITE, &mr), 0, "%s", mx5_device_error(dev));
	loop_connect(a, mx5_qp_num(b));
	loop_connect(b, mx5_qp_num(a));
	static struct emu_counters c0, c1;
	emu_counters(emu, &c0);
	memset(buf, 0x3e, 8);
	write_once(cq, a, buf, buf + 2048, mr, 1);
	emu_counters(emu, &c1);
	cr_assert_eq(c1.bf_writes - c0.bf_writes, 0);
	cr_assert_geq(c1.send_doorbells - c0.send_doorbells, 1);
	cr_assert_eq(c1.driver_errors, 0);
}
