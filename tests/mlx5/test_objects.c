/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Driver objects against the emulated ConnectX: boundary sizes (depth 1 and the caps'
 * maximum), requests the driver must refuse before asking the firmware (with a
 * message naming the limit or the missing attribute), and firmware errors by name. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "hw/emu/emu.h"
#include "hw/mlx5/mx5.h"

static struct mx5_device *dev;
static struct emu_dev *emu;
static struct emu_counters ctr;

static void open_dev(const char *uri)
{
	int rc = mx5_device_open(uri, &dev);
	cr_assert_eq(rc, 0, "open %s: %s", uri, mx5_open_error());
	emu = emu_device_from_shim(mx5_device_shim(dev));
	cr_assert_not_null(emu);
}

static void setup(void) { open_dev("emu:"); }
static void teardown(void)
{
	if (dev)
		mx5_device_close(dev);
	dev = NULL;
}

static uint64_t live(enum emu_obj_type t)
{
	emu_counters(emu, &ctr);
	return ctr.objects_live[t];
}

static unsigned gen(const char *field_name)
{
	const void *cur = mx5_device_caps(dev, MX5_CAP_GENERAL, 1);
	const struct prm_struct_desc *s = prm_struct_find("cmd_hca_cap");
	const struct prm_field_desc *f = prm_field_find(s, field_name);
	cr_assert_not_null(f, "%s", field_name);
	return (unsigned)prm_bits_get(cur, f->bit_off, f->width);
}

TestSuite(mlx5_objects, .init = setup, .fini = teardown);

Test(mlx5_objects, pd_alloc_and_free_are_seen_by_the_device)
{
	struct mx5_pd *pd;
	uint64_t before = live(EMU_OBJ_PD);
	cr_assert_eq(mx5_pd_alloc(dev, &pd), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(live(EMU_OBJ_PD), before + 1);
	cr_assert_eq(mx5_pd_free(pd), 0);
	cr_assert_eq(live(EMU_OBJ_PD), before);
}

Test(mlx5_objects, cq_of_depth_1_and_of_the_device_maximum)
{
	struct mx5_cq *cq;
	struct mx5_cq_attr a = { .cqe = 1 };
	cr_assert_eq(mx5_cq_create(dev, &a, &cq), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_cq_depth(cq), 2, "one spare entry, power of two");
	cr_assert_eq(live(EMU_OBJ_CQ), 1);
	cr_assert_eq(mx5_cq_destroy(cq), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(live(EMU_OBJ_CQ), 0);

	unsigned log = gen("log_max_cq_sz");
	a.cqe = (1u << log) - 1;
	cr_assert_eq(mx5_cq_create(dev, &a, &cq), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_cq_depth(cq), 1u << log);
	cr_assert_eq(mx5_cq_destroy(cq), 0, "%s", mx5_device_error(dev));
}

Test(mlx5_objects, cq_deeper_than_the_device_is_refused_naming_the_limit)
{
	struct mx5_cq *cq;
	unsigned log = gen("log_max_cq_sz");
	struct mx5_cq_attr a = { .cqe = 1u << log };
	emu_counters(emu, &ctr);
	uint64_t cmds = ctr.cmd_by_opcode[PRM_CMD_OP_CREATE_CQ];
	cr_assert_eq(mx5_cq_create(dev, &a, &cq), -EINVAL);
	char want[128];
	snprintf(want, sizeof(want), "CQ depth %u exceeds device limit %u (log_max_cq_sz %u)",
		 1u << log, (1u << log) - 1, log);
	cr_assert_str_eq(mx5_device_error(dev), want);
	emu_counters(emu, &ctr);
	cr_assert_eq(ctr.cmd_by_opcode[PRM_CMD_OP_CREATE_CQ], cmds, "refused before the firmware");
}

Test(mlx5_objects, cq_firmware_error_is_surfaced_by_name)
{
	struct mx5_cq *cq;
	struct mx5_cq_attr a = { .cqe = 16 };
	cr_assert_eq(emu_fault_fail(emu, PRM_CMD_OP_CREATE_CQ, PRM_CMD_STAT_NO_RES, 0x77, 0), 0);
	cr_assert_lt(mx5_cq_create(dev, &a, &cq), 0);
	cr_assert(strstr(mx5_device_error(dev), "CREATE_CQ") &&
		  strstr(mx5_device_error(dev), "no resources") &&
		  strstr(mx5_device_error(dev), "0x77"), "%s", mx5_device_error(dev));
	emu_fault_clear(emu);
	cr_assert_eq(mx5_cq_create(dev, &a, &cq), 0, "%s", mx5_device_error(dev));
}

Test(mlx5_objects, mr_on_one_page_uses_mtt_and_keys)
{
	struct mx5_pd *pd;
	struct mx5_mr *mr;
	cr_assert_eq(mx5_pd_alloc(dev, &pd), 0);
	void *buf = aligned_alloc(4096, 4096);
	cr_assert_eq(mx5_mr_reg(pd, buf, 4096, MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE, &mr),
		     0, "%s", mx5_device_error(dev));
	struct mx5_mr_info in;
	mx5_mr_query(mr, &in);
	cr_assert_eq(in.lkey, in.rkey);
	cr_assert_eq(in.iova, (uint64_t)(uintptr_t)buf);
	cr_assert_eq(in.indirect, 0);
	cr_assert_eq(in.mtt_entries, 1);
	cr_assert_eq(live(EMU_OBJ_MKEY), 1);
	cr_assert_eq(mx5_mr_dereg(mr), 0);
	cr_assert_eq(live(EMU_OBJ_MKEY), 0);
	free(buf);
}

Test(mlx5_objects, mr_on_scattered_iovas_falls_back_to_host_pages)
{
	teardown();
	open_dev("emu:iova=scatter");
	struct mx5_pd *pd;
	struct mx5_mr *mr;
	cr_assert_eq(mx5_pd_alloc(dev, &pd), 0);
	size_t len = 64 * 4096;
	void *buf = aligned_alloc(65536, len);
	cr_assert_eq(mx5_mr_reg(pd, buf, len, MX5_ACCESS_LOCAL_WRITE, &mr), 0, "%s",
		     mx5_device_error(dev));
	struct mx5_mr_info in;
	mx5_mr_query(mr, &in);
	cr_assert_eq(in.log_page_size, 12, "scattered pages allow only 4 KiB entries");
	cr_assert_eq(in.mtt_entries, 64);
	cr_assert_eq(mx5_mr_dereg(mr), 0);
	free(buf);
}

Test(mlx5_objects, mr_past_one_mkey_limit_becomes_indirect_klm)
{
	struct mx5_pd *pd;
	struct mx5_mr *mr;
	teardown();
	open_dev("emu:iova=scatter");
	cr_assert_eq(mx5_pd_alloc(dev, &pd), 0);
	mx5_device_set_mkey_mtt_limit(dev, 4);
	size_t len = 16 * 4096;
	void *buf = aligned_alloc(65536, len);
	cr_assert_eq(mx5_mr_reg(pd, buf, len, MX5_ACCESS_LOCAL_WRITE, &mr), 0, "%s",
		     mx5_device_error(dev));
	struct mx5_mr_info in;
	mx5_mr_query(mr, &in);
	cr_assert_eq(in.indirect, 1);
	cr_assert_eq(in.nparts, 4);
	cr_assert_eq(live(EMU_OBJ_MKEY), 5, "four direct MKeys under one indirect");
	cr_assert_eq(mx5_mr_dereg(mr), 0);
	cr_assert_eq(live(EMU_OBJ_MKEY), 0);
	free(buf);
}

Test(mlx5_objects, mr_over_memory_that_cannot_be_pinned_is_refused)
{
	struct mx5_pd *pd;
	struct mx5_mr *mr;
	cr_assert_eq(mx5_pd_alloc(dev, &pd), 0);
	/* a reserved, inaccessible range: nothing there can be pinned */
	void *p = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(p, MAP_FAILED);
	munmap(p, 8192);
	uint64_t before = live(EMU_OBJ_MKEY);
	mr = NULL;
	int rc = mx5_mr_reg(pd, p, 8192, MX5_ACCESS_LOCAL_WRITE, &mr);
	/* the shim refuses it, as VFIO's and the kext's pinning do */
	cr_assert_eq(rc, -EFAULT, "rc %d: %s", rc, mx5_device_error(dev));
	cr_assert_null(mr);
	cr_assert(strstr(mx5_device_error(dev), "cannot pin") &&
		  strstr(mx5_device_error(dev), "not mapped"), "%s", mx5_device_error(dev));
	cr_assert_eq(live(EMU_OBJ_MKEY), before, "no MKey created");
}

Test(mlx5_objects, mr_partly_over_unmapped_memory_is_refused)
{
	struct mx5_pd *pd;
	struct mx5_mr *mr = NULL;
	cr_assert_eq(mx5_pd_alloc(dev, &pd), 0);
	/* three pages, the middle one gone: the whole range must be refused */
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, (size_t)pg * 3, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	cr_assert_neq(p, MAP_FAILED);
	cr_assert_eq(munmap(p + pg, (size_t)pg), 0);
	cr_assert_eq(mx5_mr_reg(pd, p, (size_t)pg * 3, MX5_ACCESS_LOCAL_WRITE, &mr), -EFAULT);
	cr_assert(strstr(mx5_device_error(dev), "cannot pin"), "%s", mx5_device_error(dev));
	/* the mapped first page alone still registers */
	cr_assert_eq(mx5_mr_reg(pd, p, (size_t)pg, MX5_ACCESS_LOCAL_WRITE, &mr), 0, "%s",
		     mx5_device_error(dev));
	cr_assert_eq(mx5_mr_dereg(mr), 0);
	munmap(p, (size_t)pg);
	munmap(p + 2 * pg, (size_t)pg);
}

Test(mlx5_objects, mr_remote_write_without_local_write_is_refused)
{
	struct mx5_pd *pd;
	struct mx5_mr *mr;
	char buf[64];
	cr_assert_eq(mx5_pd_alloc(dev, &pd), 0);
	cr_assert_eq(mx5_mr_reg(pd, buf, sizeof(buf), MX5_ACCESS_REMOTE_WRITE, &mr), -EINVAL);
	cr_assert(strstr(mx5_device_error(dev), "local write"), "%s", mx5_device_error(dev));
}

Test(mlx5_objects, srq_of_depth_1_and_of_the_device_maximum)
{
	struct mx5_pd *pd;
	struct mx5_cq *cq;
	struct mx5_srq *srq;
	struct mx5_cq_attr ca = { .cqe = 16 };
	cr_assert_eq(mx5_pd_alloc(dev, &pd), 0);
	cr_assert_eq(mx5_cq_create(dev, &ca, &cq), 0, "%s", mx5_device_error(dev));
	struct mx5_srq_attr a = { .max_wr = 1, .max_sge = 1 };
	cr_assert_eq(mx5_srq_create(pd, cq, &a, &srq), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(live(EMU_OBJ_SRQ), 1);
	cr_assert_eq(mx5_srq_destroy(srq), 0, "%s", mx5_device_error(dev));
	a.max_wr = (1u << gen("log_max_srq_sz")) - 1;
	cr_assert_eq(mx5_srq_create(pd, cq, &a, &srq), 0, "%s", mx5_device_error(dev));
	struct mx5_srq_attr q;
	mx5_srq_query(srq, &q);
	cr_assert_geq(q.max_wr, a.max_wr);
	cr_assert_eq(mx5_srq_destroy(srq), 0, "%s", mx5_device_error(dev));
	a.max_wr = 1u << gen("log_max_srq_sz");
	cr_assert_eq(mx5_srq_create(pd, cq, &a, &srq), -EINVAL);
	cr_assert(strstr(mx5_device_error(dev), "exceeds device limit"), "%s", mx5_device_error(dev));
}

static struct mx5_qp *make_qp(struct mx5_pd *pd, struct mx5_cq *cq, enum mx5_qp_type t,
			      uint32_t send, uint32_t recv)
{
	struct mx5_qp_init_attr a = { .type = t, .send_cq = cq, .recv_cq = cq,
				      .cap = { .max_send_wr = send, .max_recv_wr = recv,
					       .max_send_sge = 1, .max_recv_sge = 1,
					       .max_inline_data = 64 } };
	struct mx5_qp *qp = NULL;
	int rc = mx5_qp_create(pd, &a, &qp);
	cr_assert_eq(rc, 0, "%s", mx5_device_error(dev));
	return qp;
}

Test(mlx5_objects, qp_of_depth_1_and_of_the_device_maximum)
{
	struct mx5_pd *pd;
	struct mx5_cq *cq;
	struct mx5_cq_attr ca = { .cqe = 64 };
	cr_assert_eq(mx5_pd_alloc(dev, &pd), 0);
	cr_assert_eq(mx5_cq_create(dev, &ca, &cq), 0, "%s", mx5_device_error(dev));
	struct mx5_qp *qp = make_qp(pd, cq, MX5_QPT_RC, 1, 1);
	struct mx5_qp_attr qa;
	struct mx5_qp_init_attr qi;
	cr_assert_eq(mx5_qp_query(qp, &qa, &qi), 0, "%s", mx5_device_error(dev));
	cr_assert_geq(qi.cap.max_send_wr, 1);
	cr_assert_geq(qi.cap.max_inline_data, 64);
	cr_assert_eq(qa.qp_state, MX5_QPS_RESET);
	cr_assert_eq(mx5_qp_destroy(qp), 0, "%s", mx5_device_error(dev));
	uint32_t max = 1u << gen("log_max_qp_sz");
	/* one basic block per WQE at most fits log_sq_size 15: the cap's maximum */
	struct mx5_qp_init_attr a = { .type = MX5_QPT_UC, .send_cq = cq, .recv_cq = cq,
				      .cap = { .max_send_wr = max, .max_recv_wr = max,
					       .max_send_sge = 1, .max_recv_sge = 1 } };
	cr_assert_eq(mx5_qp_create(pd, &a, &qp), 0, "%s", mx5_device_error(dev));
	mx5_qp_query(qp, &qa, &qi);
	cr_assert_geq(qi.cap.max_send_wr, max);
	cr_assert_geq(qi.cap.max_recv_wr, max);
	cr_assert_eq(mx5_qp_destroy(qp), 0);
	a.cap.max_send_wr = max + 1;
	cr_assert_eq(mx5_qp_create(pd, &a, &qp), -EINVAL);
	cr_assert(strstr(mx5_device_error(dev), "exceeds device limit") &&
		  strstr(mx5_device_error(dev), "log_max_qp_sz"), "%s", mx5_device_error(dev));
}

Test(mlx5_objects, qp_transition_without_a_required_attribute_names_it)
{
	struct mx5_pd *pd;
	struct mx5_cq *cq;
	struct mx5_cq_attr ca = { .cqe = 16 };
	cr_assert_eq(mx5_pd_alloc(dev, &pd), 0);
	cr_assert_eq(mx5_cq_create(dev, &ca, &cq), 0, "%s", mx5_device_error(dev));
	struct mx5_qp *qp = make_qp(pd, cq, MX5_QPT_RC, 8, 8);
	struct mx5_qp_attr a = { .qp_state = MX5_QPS_INIT, .pkey_index = 0,
				 .qp_access_flags = MX5_ACCESS_REMOTE_WRITE };
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_STATE | MX5_QP_PKEY_INDEX | MX5_QP_ACCESS_FLAGS),
		     -EINVAL);
	cr_assert(strstr(mx5_device_error(dev), "missing attribute port_num"), "%s",
		  mx5_device_error(dev));
	cr_assert_eq(mx5_qp_state(qp), MX5_QPS_RESET);
}

Test(mlx5_objects, rc_qp_walks_rst_init_rtr_rts_err_rst)
{
	struct mx5_pd *pd;
	struct mx5_cq *cq;
	struct mx5_cq_attr ca = { .cqe = 16 };
	cr_assert_eq(mx5_pd_alloc(dev, &pd), 0);
	cr_assert_eq(mx5_cq_create(dev, &ca, &cq), 0, "%s", mx5_device_error(dev));
	struct mx5_gid_entry g = { .gid = { [10] = 0xff, [11] = 0xff, 127, 0, 0, 2 },
				   .mac = { 2, 0, 0x7f, 0, 0, 2 }, .type = MX5_GID_ROCE_V2,
				   .vlan_id = 0xffff };
	cr_assert_eq(mx5_gid_set(dev, 1, 0, &g), 0, "%s", mx5_device_error(dev));
	struct mx5_qp *qp = make_qp(pd, cq, MX5_QPT_RC, 8, 8);
	struct mx5_qp_attr a = { .qp_state = MX5_QPS_INIT, .port_num = 1,
				 .qp_access_flags = MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_LOCAL_WRITE };
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_STATE | MX5_QP_PKEY_INDEX | MX5_QP_PORT |
					 MX5_QP_ACCESS_FLAGS), 0, "%s", mx5_device_error(dev));
	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_RTR;
	a.path_mtu = 3;
	a.dest_qp_num = mx5_qp_num(qp);
	a.rq_psn = 0x123456;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah.sgid_index = 0;
	memcpy(a.ah.dgid, g.gid, 16);
	memcpy(a.ah.dmac, g.mac, 6);
	a.ah.hop_limit = 64;
	a.ah.flow_label = 0x12345;
	unsigned m = MX5_QP_RTR_RC;
	cr_assert_eq(mx5_qp_modify(qp, &a, m), 0, "%s", mx5_device_error(dev));
	a.qp_state = MX5_QPS_RTS;
	a.sq_psn = 0x654321;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	m = MX5_QP_RTS_RC;
	cr_assert_eq(mx5_qp_modify(qp, &a, m), 0, "%s", mx5_device_error(dev));
	struct mx5_qp_attr q;
	cr_assert_eq(mx5_qp_query(qp, &q, NULL), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(q.qp_state, MX5_QPS_RTS);
	cr_assert_eq(q.sq_psn, 0x654321);
	cr_assert_eq(q.rq_psn, 0x123456);
	cr_assert_eq(q.path_mtu, 3);
	cr_assert_eq(q.ah.flow_label, 0x12345);
	a.qp_state = MX5_QPS_ERR;
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_STATE), 0, "%s", mx5_device_error(dev));
	a.qp_state = MX5_QPS_RESET;
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_STATE), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_qp_state(qp), MX5_QPS_RESET);
}

Test(mlx5_objects, close_destroys_what_the_caller_left)
{
	struct mx5_pd *pd;
	struct mx5_cq *cq;
	struct mx5_mr *mr;
	struct mx5_cq_attr ca = { .cqe = 16 };
	static char buf[8192];
	cr_assert_eq(mx5_pd_alloc(dev, &pd), 0);
	cr_assert_eq(mx5_cq_create(dev, &ca, &cq), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_mr_reg(pd, buf, sizeof(buf), MX5_ACCESS_LOCAL_WRITE, &mr), 0, "%s",
		     mx5_device_error(dev));
	cr_assert_eq(mx5_device_shutdown(dev), 0, "%s", mx5_device_error(dev));
	emu_counters(emu, &ctr);
	for (int t = 0; t < EMU_OBJ_NTYPES; t++)
		cr_assert_eq(ctr.objects_live[t], 0, "%s left", emu_obj_type_name(t));
	cr_assert_eq(ctr.pages_held, 0);
}

/* A PD, a CQ, an SRQ on them and an RC QP that receives through the SRQ. */
struct srq_user {
	struct mx5_pd *pd;
	struct mx5_cq *cq;
	struct mx5_srq *srq;
	struct mx5_qp *qp;
};

static void make_srq_user(struct srq_user *u)
{
	struct mx5_cq_attr ca = { .cqe = 16 };
	struct mx5_srq_attr sa = { .max_wr = 4, .max_sge = 1 };
	cr_assert_eq(mx5_pd_alloc(dev, &u->pd), 0);
	cr_assert_eq(mx5_cq_create(dev, &ca, &u->cq), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_srq_create(u->pd, u->cq, &sa, &u->srq), 0, "%s", mx5_device_error(dev));
	struct mx5_qp_init_attr qa = { .type = MX5_QPT_RC, .send_cq = u->cq, .recv_cq = u->cq,
				       .srq = u->srq, .cap = { .max_send_wr = 1, .max_send_sge = 1 } };
	cr_assert_eq(mx5_qp_create(u->pd, &qa, &u->qp), 0, "%s", mx5_device_error(dev));
}

/* A destroy refused with EBUSY and the message fmt gives for the object's number; the
 * device still holds the object. */
__attribute__((format(printf, 3, 0)))
static void assert_refused_busy(int rc, enum emu_obj_type t, const char *fmt, unsigned num)
{
	char want[96];
	snprintf(want, sizeof(want), fmt, num);
	cr_assert_eq(rc, -EBUSY);
	cr_assert_str_eq(mx5_device_error(dev), want);
	cr_assert_eq(live(t), 1, "the device keeps the %s", emu_obj_type_name(t));
}

Test(mlx5_objects, cq_still_used_by_queues_is_refused_naming_its_users)
{
	struct srq_user u;
	make_srq_user(&u);
	/* the QP (its send and receive CQ, counted once) and the SRQ */
	assert_refused_busy(mx5_cq_destroy(u.cq), EMU_OBJ_CQ, "DESTROY_CQ: CQ 0x%x still used by 2 queues",
			    mx5_cq_num(u.cq));
}

Test(mlx5_objects, srq_still_used_by_a_qp_is_refused_naming_its_users)
{
	struct srq_user u;
	make_srq_user(&u);
	assert_refused_busy(mx5_srq_destroy(u.srq), EMU_OBJ_SRQ, "DESTROY_RMP: SRQ 0x%x still used by 1 QPs",
			    mx5_srq_num(u.srq));
}

Test(mlx5_objects, close_destroys_queues_still_in_use)
{
	struct srq_user u;
	make_srq_user(&u);
	cr_assert_eq(mx5_device_shutdown(dev), 0, "%s", mx5_device_error(dev));
	emu_counters(emu, &ctr);
	for (int t = 0; t < EMU_OBJ_NTYPES; t++)
		cr_assert_eq(ctr.objects_live[t], 0, "%s left", emu_obj_type_name(t));
	cr_assert_eq(ctr.pages_held, 0);
}
