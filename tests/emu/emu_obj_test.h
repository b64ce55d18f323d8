/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Helpers for the tests of the emulator's memory and queue objects (test_mkey.c,
 * test_cq.c, test_qp.c, test_srq.c): a device brought up as mlx5_core does, with a
 * UAR, a PD and an EQ, and command inputs with valid defaults that a test then
 * changes field by field (through the layouts' accessors) to break one rule. */
#ifndef UVERBS_TESTS_EMU_EMU_OBJ_TEST_H
#define UVERBS_TESTS_EMU_EMU_OBJ_TEST_H

#include "tests/emu/emu_test.h"

struct ot {
	struct et t;
	size_t page;                               /* host page size */
	uint32_t uar, pd, eqn;
	uint8_t gen[PRM_SIZE(cmd_hca_cap)];        /* general caps, current */
};

/* Queue memory as the driver allocates it: the ring (page-rounded) and, in the page
 * after it, the doorbell record. */
struct oq {
	struct shim_dma mem;
	size_t ring_bytes;
	uint64_t dbr;
	size_t npas;
};

static inline uint32_t ot_simple_id(struct ot *o, uint16_t op, size_t outlen, unsigned id_off, unsigned id_w)
{
	uint8_t in[PRM_SIZE(cmd_in) > 16 ? PRM_SIZE(cmd_in) : 16];

	memset(in, 0, sizeof(in));
	PRM_SET(cmd_in, in, opcode, op);
	et_expect(&o->t, et_exec(&o->t, in, sizeof(in), outlen), 0, 0);
	return (uint32_t)prm_bits_get(o->t.out, id_off, id_w);
}

static inline uint32_t ot_alloc_pd(struct ot *o)
{
	return ot_simple_id(o, PRM_CMD_OP_ALLOC_PD, PRM_SIZE(alloc_pd_out), PRM_OFF(alloc_pd_out, pd),
			    PRM_WIDTH(alloc_pd_out, pd));
}

static inline int ot_dealloc_pd(struct ot *o, uint32_t pd)
{
	ET_IN(dealloc_pd_in);
	PRM_SET(dealloc_pd_in, in, opcode, PRM_CMD_OP_DEALLOC_PD);
	PRM_SET(dealloc_pd_in, in, pd, pd);
	return et_exec(&o->t, in, sizeof(in), PRM_SIZE(dealloc_pd_out));
}

static inline void oq_alloc(struct ot *o, struct oq *q, size_t bytes)
{
	memset(q, 0, sizeof(*q));
	q->ring_bytes = (bytes + o->page - 1) / o->page * o->page;
	cr_assert_eq(shim_dma_alloc(o->t.dev, q->ring_bytes + o->page, o->page, &q->mem), 0);
	memset(q->mem.va, 0, q->ring_bytes + o->page);
	q->dbr = q->mem.iova + q->ring_bytes;
	q->npas = q->ring_bytes / o->page;
}

static inline void oq_pas(struct ot *o, const struct oq *q, uint8_t *pas)
{
	for (size_t i = 0; i < q->npas; i++)
		prm_bits_set64(pas, (unsigned)(i * 64), q->mem.iova + i * o->page);
}

/* log2 of the host page in 4 KiB units, as *.log_page_size wants it */
static inline unsigned ot_log_pg(struct ot *o)
{
	return o->page == 16384 ? 2 : 0;
}

static inline int ot_create_eq(struct ot *o, uint32_t *eqn)
{
	struct oq q;
	size_t inlen;
	uint8_t *in;
	int st;

	oq_alloc(o, &q, 64u << 6);
	inlen = PRM_SIZE(create_eq_in) + q.npas * 8;
	in = calloc(1, inlen);
	PRM_SET(create_eq_in, in, opcode, PRM_CMD_OP_CREATE_EQ);
	uint8_t *eqc = PRM_ADDR(create_eq_in, in, eq_context_entry);
	PRM_SET(eqc, eqc, log_eq_size, 6);
	PRM_SET(eqc, eqc, uar_page, o->uar);
	PRM_SET(eqc, eqc, log_page_size, ot_log_pg(o));
	oq_pas(o, &q, PRM_ADDR(create_eq_in, in, pas));
	st = et_exec(&o->t, in, inlen, PRM_SIZE(create_eq_out));
	free(in);
	*eqn = (uint32_t)PRM_GET(create_eq_out, o->t.out, eq_number);
	return st;
}

/* Open, bring up (mlx5_core's order), and allocate a UAR, a PD and an EQ. */
static inline void ot_up(struct ot *o, const char *uri)
{
	memset(o, 0, sizeof(*o));
	et_open(&o->t, uri);
	et_bringup(&o->t);
	o->page = o->t.dev->page_size ? o->t.dev->page_size : 4096;
	{
		ET_IN(query_hca_cap_in);
		PRM_SET(query_hca_cap_in, in, opcode, PRM_CMD_OP_QUERY_HCA_CAP);
		PRM_SET(query_hca_cap_in, in, op_mod, 1); /* general, current */
		et_expect(&o->t, et_exec(&o->t, in, sizeof(in), PRM_SIZE(query_hca_cap_out)), 0, 0);
		memcpy(o->gen, PRM_ADDR(query_hca_cap_out, o->t.out, capability), sizeof(o->gen));
	}
	o->uar = ot_simple_id(o, PRM_CMD_OP_ALLOC_UAR, PRM_SIZE(alloc_uar_out), PRM_OFF(alloc_uar_out, uar),
			      PRM_WIDTH(alloc_uar_out, uar));
	o->pd = ot_alloc_pd(o);
	et_expect(&o->t, ot_create_eq(o, &o->eqn), 0, 0);
	{
		/* RoCE address 0, as the driver programs it: the paths below send from it */
		static const uint8_t ll[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xfe, 0, 0, 2 };
		ET_IN(set_roce_address_in);
		uint8_t *e = PRM_ADDR(set_roce_address_in, in, roce_address);
		PRM_SET(set_roce_address_in, in, opcode, PRM_CMD_OP_SET_ROCE_ADDRESS);
		PRM_SET(set_roce_address_in, in, vhca_port_num, 1);
		memcpy(PRM_ADDR(roce_addr_layout, e, source_l3_address), ll, 16);
		PRM_SET(roce_addr_layout, e, roce_version, 2);
		PRM_SET(roce_addr_layout, e, roce_l3_type, 1);
		PRM_SET(roce_addr_layout, e, source_mac_47_32, 0x0200);
		PRM_SET(roce_addr_layout, e, source_mac_31_0, 0x7f000002);
		et_expect(&o->t, et_exec(&o->t, in, sizeof(in), PRM_SIZE(set_roce_address_out)), 0, 0);
	}
}

static inline uint64_t ot_live(struct ot *o, enum emu_obj_type ty)
{
	struct emu_counters c;

	emu_counters(o->t.emu, &c);
	return c.objects_live[ty];
}

/* TEARDOWN_HCA (which destroys whatever is left, as firmware does), reclaim pages,
 * DISABLE_HCA; every object type must be back to zero. */
static inline void ot_down(struct ot *o)
{
	struct emu_counters c;

	et_teardown(&o->t);
	emu_counters(o->t.emu, &c);
	for (int i = 0; i < EMU_OBJ_NTYPES; i++)
		cr_assert_eq(c.objects_live[i], 0, "%s objects left after teardown", emu_obj_type_name(i));
	et_close(&o->t);
}

/* ---- CQ ---- */

/* CREATE_CQ input with valid defaults: 64-byte CQEs, 2^log CQEs in q (allocated here),
 * the test's UAR and EQ.  *inlen set; free() the result. */
static inline uint8_t *ot_cq_in(struct ot *o, struct oq *q, unsigned log, size_t *inlen)
{
	oq_alloc(o, q, (size_t)64 << log);
	*inlen = PRM_SIZE(create_cq_in) + q->npas * 8;
	uint8_t *in = calloc(1, *inlen);
	PRM_SET(create_cq_in, in, opcode, PRM_CMD_OP_CREATE_CQ);
	uint8_t *cqc = PRM_ADDR(create_cq_in, in, cq_context);
	PRM_SET(cqc, cqc, cqe_sz, 0);
	PRM_SET(cqc, cqc, log_cq_size, log);
	PRM_SET(cqc, cqc, uar_page, o->uar);
	PRM_SET(cqc, cqc, c_eqn_or_apu_element, o->eqn);
	PRM_SET(cqc, cqc, log_page_size, ot_log_pg(o));
	PRM_SET(cqc, cqc, dbr_addr, q->dbr);
	oq_pas(o, q, PRM_ADDR(create_cq_in, in, pas));
	return in;
}

static inline uint32_t ot_cq(struct ot *o, unsigned log)
{
	struct oq q;
	size_t inlen;
	uint8_t *in = ot_cq_in(o, &q, log, &inlen);

	et_expect(&o->t, et_exec(&o->t, in, inlen, PRM_SIZE(create_cq_out)), 0, 0);
	free(in);
	return (uint32_t)PRM_GET(create_cq_out, o->t.out, cqn);
}

static inline int ot_destroy(struct ot *o, uint16_t op, uint32_t id)
{
	uint8_t in[16] = { 0 };

	switch (op) {
	case PRM_CMD_OP_DESTROY_CQ:
		PRM_SET(destroy_cq_in, in, opcode, op);
		PRM_SET(destroy_cq_in, in, cqn, id);
		break;
	case PRM_CMD_OP_DESTROY_QP:
		PRM_SET(destroy_qp_in, in, opcode, op);
		PRM_SET(destroy_qp_in, in, qpn, id);
		break;
	case PRM_CMD_OP_DESTROY_SRQ:
		PRM_SET(destroy_srq_in, in, opcode, op);
		PRM_SET(destroy_srq_in, in, srqn, id);
		break;
	case PRM_CMD_OP_DESTROY_RMP:
		PRM_SET(destroy_rmp_in, in, opcode, op);
		PRM_SET(destroy_rmp_in, in, rmpn, id);
		break;
	case PRM_CMD_OP_DESTROY_EQ:
		PRM_SET(destroy_eq_in, in, opcode, op);
		PRM_SET(destroy_eq_in, in, eq_number, id);
		break;
	default:
		PRM_SET(destroy_mkey_in, in, opcode, op);
		PRM_SET(destroy_mkey_in, in, mkey_index, id);
		break;
	}
	return et_exec(&o->t, in, sizeof(in), CMDQ_INLINE_BYTES);
}

/* ---- SRQ ---- */

static inline uint8_t *ot_srq_in(struct ot *o, struct oq *q, unsigned log, unsigned log_stride, size_t *inlen)
{
	oq_alloc(o, q, (size_t)(16u << log_stride) << log);
	*inlen = PRM_SIZE(create_srq_in) + q->npas * 8;
	uint8_t *in = calloc(1, *inlen);
	PRM_SET(create_srq_in, in, opcode, PRM_CMD_OP_CREATE_SRQ);
	uint8_t *s = PRM_ADDR(create_srq_in, in, srq_context_entry);
	PRM_SET(srqc, s, log_srq_size, log);
	PRM_SET(srqc, s, log_rq_stride, log_stride);
	PRM_SET(srqc, s, log_page_size, ot_log_pg(o));
	PRM_SET(srqc, s, pd, o->pd);
	PRM_SET(srqc, s, dbr_addr, q->dbr);
	oq_pas(o, q, PRM_ADDR(create_srq_in, in, pas));
	return in;
}

/* The wq inside a CREATE_RMP input. */
static inline uint8_t *ot_rmp_wq(uint8_t *in)
{
	return PRM_ADDR(rmpc, PRM_ADDR(create_rmp_in, in, ctx), wq);
}

/* CREATE_RMP as Linux create_rmp_cmd sends it (state RDY, a linked-list wq), WQEs of
 * 16 << log_stride bytes: the ISSI 1 SRQ. */
static inline uint8_t *ot_rmp_in(struct ot *o, struct oq *q, unsigned log, unsigned log_stride, size_t *inlen)
{
	oq_alloc(o, q, (size_t)(16u << log_stride) << log);
	size_t pas_off = (PRM_OFF(create_rmp_in, ctx) + PRM_OFF(rmpc, wq) + PRM_OFF(wq, pas)) / 8;
	*inlen = pas_off + q->npas * 8;
	uint8_t *in = calloc(1, *inlen);
	PRM_SET(create_rmp_in, in, opcode, PRM_CMD_OP_CREATE_RMP);
	PRM_SET(rmpc, PRM_ADDR(create_rmp_in, in, ctx), state, 1);
	uint8_t *wq = ot_rmp_wq(in);
	PRM_SET(wq, wq, log_wq_sz, log);
	PRM_SET(wq, wq, log_wq_stride, log_stride + 4);
	PRM_SET(wq, wq, log_wq_pg_sz, ot_log_pg(o));
	PRM_SET(wq, wq, pd, o->pd);
	PRM_SET(wq, wq, dbr_addr, q->dbr);
	oq_pas(o, q, in + pas_off);
	return in;
}

/* An SRQ in the model of the ISSI the device runs (et_issi): an RMP at ISSI 1. */
static inline uint32_t ot_srq(struct ot *o, unsigned log)
{
	struct oq q;
	size_t inlen;
	uint8_t *in = et_issi ? ot_rmp_in(o, &q, log, 1, &inlen) : ot_srq_in(o, &q, log, 1, &inlen);

	et_expect(&o->t, et_exec(&o->t, in, inlen, PRM_SIZE(create_srq_out)), 0, 0);
	free(in);
	return (uint32_t)PRM_GET(create_srq_out, o->t.out, srqn);
}

static inline uint16_t ot_destroy_srq_op(void)
{
	return et_issi ? PRM_CMD_OP_DESTROY_RMP : PRM_CMD_OP_DESTROY_SRQ;
}

/* ---- QP ---- */

/* qpc.st values and the transitions' opt_param_mask bits (PRM; Linux MLX5_QP_ST_*,
 * MLX5_QP_OPTPAR_*), spelled here so the tests state the facts they rely on. */
enum { OT_ST_RC = 0, OT_ST_UC = 1, OT_ST_UD = 2 };
enum { OT_OPT_RRE = 1u << 1, OT_OPT_RAE = 1u << 2, OT_OPT_RWE = 1u << 3, OT_OPT_PKEY = 1u << 4,
       OT_OPT_QKEY = 1u << 5, OT_OPT_RNR_TIMEOUT = 1u << 6, OT_OPT_PRI_PATH = 1u << 7,
       OT_OPT_SRA_MAX = 1u << 8, OT_OPT_ACK_TIMEOUT = 1u << 14, OT_OPT_CQN_RCV = 1u << 19 };

/* CREATE_QP with valid defaults: service type st, 2^log_sq basic blocks, 2^log_rq
 * receive WQEs of 64 bytes, both CQs = cqn. */
static inline uint8_t *ot_qp_in(struct ot *o, struct oq *q, unsigned st, uint32_t cqn, unsigned log_sq,
				unsigned log_rq, size_t *inlen)
{
	oq_alloc(o, q, ((size_t)64 << log_rq) + ((size_t)64 << log_sq));
	*inlen = PRM_SIZE(create_qp_in) + q->npas * 8;
	uint8_t *in = calloc(1, *inlen);
	PRM_SET(create_qp_in, in, opcode, PRM_CMD_OP_CREATE_QP);
	uint8_t *c = PRM_ADDR(create_qp_in, in, qpc);
	PRM_SET(qpc, c, st, st);
	PRM_SET(qpc, c, pm_state, 3);
	PRM_SET(qpc, c, pd, o->pd);
	PRM_SET(qpc, c, uar_page, o->uar);
	PRM_SET(qpc, c, log_page_size, ot_log_pg(o));
	PRM_SET(qpc, c, log_sq_size, log_sq);
	PRM_SET(qpc, c, rq_type, 0);
	PRM_SET(qpc, c, log_rq_size, log_rq);
	PRM_SET(qpc, c, log_rq_stride, 2); /* 64-byte receive WQEs */
	PRM_SET(qpc, c, cqn_snd, cqn);
	PRM_SET(qpc, c, cqn_rcv, cqn);
	PRM_SET(qpc, c, dbr_addr, q->dbr);
	oq_pas(o, q, PRM_ADDR(create_qp_in, in, pas));
	return in;
}

static inline uint32_t ot_qp(struct ot *o, unsigned st, uint32_t cqn)
{
	struct oq q;
	size_t inlen;
	uint8_t *in = ot_qp_in(o, &q, st, cqn, 4, 4, &inlen);

	et_expect(&o->t, et_exec(&o->t, in, inlen, PRM_SIZE(create_qp_out)), 0, 0);
	free(in);
	return (uint32_t)PRM_GET(create_qp_out, o->t.out, qpn);
}

/* UD's INIT2RTR as Linux mlx5_ib sends it (qp.c __mlx5_ib_modify_qp): mtu 4096 and
 * log_msg_max 12. */
static inline uint8_t *ot_trans_in(uint16_t op, uint32_t qpn, uint32_t opt);
static inline uint8_t *ot_ud_init2rtr_in(uint32_t qpn)
{
	uint8_t *in = ot_trans_in(PRM_CMD_OP_INIT2RTR_QP, qpn, 0);
	uint8_t *c = PRM_ADDR(rst2init_qp_in, in, qpc);
	PRM_SET(qpc, c, mtu, 5);
	PRM_SET(qpc, c, log_msg_max, 12);
	return in;
}

/* A transition input (every transition with a qpc has rst2init_qp_in's layout). */
static inline uint8_t *ot_trans_in(uint16_t op, uint32_t qpn, uint32_t opt)
{
	uint8_t *in = calloc(1, PRM_SIZE(rst2init_qp_in));
	PRM_SET(rst2init_qp_in, in, opcode, op);
	PRM_SET(rst2init_qp_in, in, qpn, qpn);
	PRM_SET(rst2init_qp_in, in, opt_param_mask, opt);
	return in;
}

static inline int ot_trans_exec(struct ot *o, uint8_t *in)
{
	int st = et_exec(&o->t, in, PRM_SIZE(rst2init_qp_in), PRM_SIZE(rst2init_qp_out));
	free(in);
	return st;
}

static inline int ot_2state(struct ot *o, uint16_t op, uint32_t qpn)
{
	ET_IN(qp_2rst_in);
	PRM_SET(qp_2rst_in, in, opcode, op);
	PRM_SET(qp_2rst_in, in, qpn, qpn);
	return et_exec(&o->t, in, sizeof(in), PRM_SIZE(qp_2rst_out));
}

/* Valid transition inputs, as hw/mlx5 sends them for a RoCE v2 connection. */
static inline uint8_t *ot_rst2init_in(uint32_t qpn)
{
	uint8_t *in = ot_trans_in(PRM_CMD_OP_RST2INIT_QP, qpn, 0);
	uint8_t *c = PRM_ADDR(rst2init_qp_in, in, qpc);
	uint8_t *ads = PRM_ADDR(qpc, c, primary_address_path);
	PRM_SET(ads, ads, vhca_port_num, 1);
	PRM_SET(qpc, c, pm_state, 3);
	PRM_SET(qpc, c, rre, 1);
	PRM_SET(qpc, c, rwe, 1);
	PRM_SET(qpc, c, q_key, 0x11111111);
	return in;
}

static const uint8_t ot_rgid[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 9 };

static inline uint8_t *ot_init2rtr_in(uint32_t qpn, uint32_t rqpn)
{
	uint8_t *in = ot_trans_in(PRM_CMD_OP_INIT2RTR_QP, qpn, 0);
	uint8_t *c = PRM_ADDR(rst2init_qp_in, in, qpc);
	uint8_t *ads = PRM_ADDR(qpc, c, primary_address_path);
	PRM_SET(qpc, c, mtu, 3); /* 1024 */
	/* the QP's message limit, sent here beside mtu as every reference does
	 * (rdma-core tests/mlx5_base.py: 20) */
	PRM_SET(qpc, c, log_msg_max, 20);
	PRM_SET(qpc, c, remote_qpn, rqpn);
	PRM_SET(qpc, c, next_rcv_psn, 0x123456);
	PRM_SET(qpc, c, log_rra_max, 2);
	PRM_SET(qpc, c, min_rnr_nak, 12);
	PRM_SET(ads, ads, grh, 1);
	PRM_SET(ads, ads, src_addr_index, 0);
	PRM_SET(ads, ads, hop_limit, 64);
	PRM_SET(ads, ads, udp_sport, 0xc123);
	PRM_SET(ads, ads, vhca_port_num, 1);
	memcpy(PRM_ADDR(ads, ads, rgid_rip), ot_rgid, 16);
	PRM_SET(ads, ads, rmac_47_32, 0x0200);
	PRM_SET(ads, ads, rmac_31_0, 0x7f000009);
	return in;
}

static inline uint8_t *ot_rtr2rts_in(uint32_t qpn)
{
	uint8_t *in = ot_trans_in(PRM_CMD_OP_RTR2RTS_QP, qpn, 0);
	uint8_t *c = PRM_ADDR(rst2init_qp_in, in, qpc);
	uint8_t *ads = PRM_ADDR(qpc, c, primary_address_path);
	PRM_SET(qpc, c, next_send_psn, 0x654321);
	PRM_SET(qpc, c, retry_count, 7);
	PRM_SET(qpc, c, rnr_retry, 7);
	PRM_SET(qpc, c, log_sra_max, 2);
	PRM_SET(ads, ads, ack_timeout, 14);
	return in;
}

static inline void ot_qp_to_rts(struct ot *o, uint32_t qpn)
{
	et_expect(&o->t, ot_trans_exec(o, ot_rst2init_in(qpn)), 0, 0);
	et_expect(&o->t, ot_trans_exec(o, ot_init2rtr_in(qpn, qpn)), 0, 0);
	et_expect(&o->t, ot_trans_exec(o, ot_rtr2rts_in(qpn)), 0, 0);
}

/* QUERY_QP; the qpc is at PRM_ADDR(query_qp_out, o->t.out, qpc). */
static inline const uint8_t *ot_query_qp(struct ot *o, uint32_t qpn)
{
	ET_IN(query_qp_in);
	PRM_SET(query_qp_in, in, opcode, PRM_CMD_OP_QUERY_QP);
	PRM_SET(query_qp_in, in, qpn, qpn);
	et_expect(&o->t, et_exec(&o->t, in, sizeof(in), PRM_SIZE(query_qp_out)), 0, 0);
	return PRM_ADDR(query_qp_out, o->t.out, qpc);
}

#endif
