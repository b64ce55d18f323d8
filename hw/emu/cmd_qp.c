/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Queue pairs: CREATE_QP (0x500), DESTROY_QP (0x501), QUERY_QP (0x50b) and the PRM
 * state machine: RST2INIT (0x502), INIT2INIT (0x50e), INIT2RTR (0x503), RTR2RTS (0x504),
 * RTS2RTS (0x505), 2ERR (0x507), 2RST (0x50a).  PRM "Queue Pair" / qpc / ads.
 *
 * CREATE_QP checks, as firmware does: service type RC/UC/UD/XRC (and the device offers
 * it), pm_state armed/rearm/migrated, counter_set_id 0 or an allocated Q counter, the
 * PD, UAR (an index of an allocated UAR page, uar_4k included), send CQ (unless no_sq) and receive CQ
 * (unless the RQ is zero-length) exist, the SRQ exists when rq_type is SRQ; queue sizes
 * within log_max_qp_sz and max_wqe_sz_rq (limits, 0x8); the doorbell record and the page
 * list (receive queue first, then the send queue, in one buffer) aligned and pinned.
 * The QP holds everything it names, so DESTROY_CQ/SRQ and DEALLOC_PD refuse while it
 * lives.
 *
 * Transitions: each is allowed from the states in trans_tab (anything else: bad QP
 * state 0x10, ILLEGAL_QP_TRANSITION); its opt_param_mask may only carry the bits
 * trans_tab allows for the service type (facts: Linux mlx5_ib qp.c opt_mask[] table,
 * which mirrors the PRM's per-transition optional parameters; a bit outside: bad
 * parameter, BAD_QP_ATTRIBUTE); the fields a transition requires are taken from qpc
 * and checked (INIT2RTR on RC/UC: path MTU, remote QPN and a RoCE primary path with
 * GRH, remote GID and MAC; RTR2RTS on RC: retry counts, outstanding reads, ACK timeout).
 * 2ERR and 2RST work from every state; 2ERR flushes the queues at once (transport
 * engine), 2RST empties them.  SQERR2RTS and SQD
 * transitions have no layout in our tables and stay unknown opcodes.
 */
#include <errno.h>
#include <string.h>

#include "hw/emu/objects.h"
#include "hw/platform/bits.h"

/* opt_param_mask bits (PRM "Optional Parameter Mask"; Linux enum mlx5_qp_optpar). */
enum {
	OPT_ALT_ADDR_PATH = 1u << 0, OPT_RRE = 1u << 1, OPT_RAE = 1u << 2, OPT_RWE = 1u << 3,
	OPT_PKEY_INDEX = 1u << 4, OPT_Q_KEY = 1u << 5, OPT_RNR_TIMEOUT = 1u << 6,
	OPT_PRIMARY_ADDR_PATH = 1u << 7, OPT_SRA_MAX = 1u << 8, OPT_RRA_MAX = 1u << 9,
	OPT_PM_STATE = 1u << 10, OPT_RETRY_COUNT = 1u << 12, OPT_RNR_RETRY = 1u << 13,
	OPT_ACK_TIMEOUT = 1u << 14, OPT_LAG_TX_AFF = 1u << 15, OPT_PRI_PORT = 1u << 16,
	OPT_SRQN = 1u << 18, OPT_CQN_RCV = 1u << 19,
};

#define QP_MTU_MAX 5u                 /* qpc.mtu 1..5: 256..4096 bytes (IBTA path MTU) */
#define STATES_ALL 0x7fu              /* RST..ERR */
#define S(x) (1u << (x))

enum trans { T_RST2INIT, T_INIT2INIT, T_INIT2RTR, T_RTR2RTS, T_RTS2RTS, T_2ERR, T_2RST };

/* From which states each transition is allowed, the state it leads to, and the
 * optional parameters it accepts per service type [RC, UC, UD] (Linux opt_mask[]).
 * RTS2RTS on RC also accepts ACK_TIMEOUT: the PRM lets RTS2RTS change the primary
 * path's ack_timeout, and IB_QP_TIMEOUT maps to it in Linux's ib_mask_to_mlx5_opt. */
static const struct {
	const char *name;
	uint8_t from;
	uint8_t to;
	uint32_t opt[3];
} trans_tab[] = {
	[T_RST2INIT] = { "RST2INIT", S(EMU_QP_RST), EMU_QP_INIT, { 0, 0, 0 } },
	[T_INIT2INIT] = { "INIT2INIT", S(EMU_QP_INIT), EMU_QP_INIT,
			  { OPT_RRE | OPT_RAE | OPT_RWE | OPT_PKEY_INDEX | OPT_PRI_PORT | OPT_LAG_TX_AFF,
			    OPT_RWE | OPT_PKEY_INDEX | OPT_PRI_PORT | OPT_LAG_TX_AFF,
			    OPT_PKEY_INDEX | OPT_Q_KEY | OPT_PRI_PORT | OPT_LAG_TX_AFF } },
	[T_INIT2RTR] = { "INIT2RTR", S(EMU_QP_INIT), EMU_QP_RTR,
			 { OPT_ALT_ADDR_PATH | OPT_RRE | OPT_RAE | OPT_RWE | OPT_PKEY_INDEX | OPT_LAG_TX_AFF,
			   OPT_ALT_ADDR_PATH | OPT_RWE | OPT_PKEY_INDEX | OPT_LAG_TX_AFF,
			   OPT_PKEY_INDEX | OPT_Q_KEY } },
	[T_RTR2RTS] = { "RTR2RTS", S(EMU_QP_RTR), EMU_QP_RTS,
			{ OPT_ALT_ADDR_PATH | OPT_RRE | OPT_RAE | OPT_RWE | OPT_PM_STATE | OPT_RNR_TIMEOUT,
			  OPT_ALT_ADDR_PATH | OPT_RWE | OPT_PM_STATE,
			  OPT_Q_KEY } },
	[T_RTS2RTS] = { "RTS2RTS", S(EMU_QP_RTS), EMU_QP_RTS,
			{ OPT_RRE | OPT_RAE | OPT_RWE | OPT_RNR_TIMEOUT | OPT_PM_STATE | OPT_ALT_ADDR_PATH |
				  OPT_ACK_TIMEOUT,
			  OPT_RWE | OPT_PM_STATE | OPT_ALT_ADDR_PATH,
			  OPT_Q_KEY | OPT_SRQN | OPT_CQN_RCV } },
	[T_2ERR] = { "2ERR", STATES_ALL, EMU_QP_ERR, { 0, 0, 0 } },
	[T_2RST] = { "2RST", STATES_ALL, EMU_QP_RST, { 0, 0, 0 } },
};

/* What a QP holds while it lives: its PD, its UAR page, its CQs and its SRQ. */
static void qp_holds(struct emu_dev *d, const void *obj, emu_obj_hold_fn op)
{
	const struct emu_qp *qp = obj;

	if (!qp->umr || qp->pdn)
		emu_obj_hold(emu_obj_get(d, EMU_OBJ_PD, qp->pdn), op);
	emu_obj_hold(emu_uar_obj(d, qp->uar), op);
	if (qp->cqn_snd)
		emu_obj_hold(emu_obj_get(d, EMU_OBJ_CQ, qp->cqn_snd), op);
	if (qp->cqn_rcv)
		emu_obj_hold(emu_obj_get(d, EMU_OBJ_CQ, qp->cqn_rcv), op);
	if (qp->rq_type == EMU_RQ_SRQ)
		emu_obj_hold(emu_obj_get(d, EMU_OBJ_SRQ, qp->srqn), op);
	if (qp->st == EMU_QP_ST_XRC)
		emu_obj_hold(emu_obj_get(d, EMU_OBJ_XRCD, qp->xrcd), op);
}

EMU_QUEUE_KIND(qp, qpn, EMU_OBJ_QP);

/* The SRQ a QP's qpc may name: for an RC, UC or UD QP a plain one (CREATE_SRQ or
 * CREATE_RMP); an XRC SRQ takes its WQEs for XRC target QPs only, which name it in
 * each packet's XRCETH (PRM "XRC SRQ"), so naming one there is a bad SRQ number.  An
 * XRC QP names an XRC SRQ (any domain's: Linux gives devr->s0), which it holds but
 * never receives through. */
static bool qp_srq_ok(struct emu_dev *d, uint32_t srqn, bool xrc)
{
	const struct emu_srq *s = emu_obj_get(d, EMU_OBJ_SRQ, srqn);

	return s && s->xrc == xrc;
}

/* RC and XRC share the reliable transport's attributes (Linux opt_mask[] gives
 * MLX5_QP_ST_XRC the RC column; IBTA 14.2: XRC is RC with the receive side in an XRC
 * domain). */
static bool reliable(const struct emu_qp *q)
{
	return q->st == EMU_QP_ST_RC || q->st == EMU_QP_ST_XRC;
}

/* trans_tab's opt[] column for a QP's service */
static unsigned opt_col(const struct emu_qp *q)
{
	return q->st == EMU_QP_ST_XRC ? EMU_QP_ST_RC : q->st;
}

/* ---- device limits ---- */

static unsigned num_ports(struct emu_dev *d)
{
	const uint8_t *g = emu_gen_caps(d);

	return g && PRM_GET(cmd_hca_cap, g, num_ports) ? (unsigned)PRM_GET(cmd_hca_cap, g, num_ports) : 1;
}

/* P_Key table entries: 128 << pkey_table_size (Linux mlx5_to_sw_pkey_sz). */
static uint32_t pkey_table_len(struct emu_dev *d)
{
	const uint8_t *g = emu_gen_caps(d);
	unsigned v = g ? (unsigned)PRM_GET(cmd_hca_cap, g, pkey_table_size) : 0;

	return v < 16 ? 128u << v : 128u;
}

/* RoCE address (GID) table entries: roce_address_table_size (RoCE caps), as Linux
 * reads the GID table length of an Ethernet port. */
static uint32_t gid_table_len(struct emu_dev *d)
{
	const uint8_t *r = emu_cap(d, PRM_CAP_ROCE, 1);
	const uint8_t *g = emu_gen_caps(d);

	if (r && PRM_GET(roce_cap, r, roce_address_table_size))
		return (uint32_t)PRM_GET(roce_cap, r, roce_address_table_size);
	return g ? (uint32_t)PRM_GET(cmd_hca_cap, g, gid_table_size) : 0;
}

/* qpc.counter_set_id: 0 (the function's default counters) or a Q counter set the
 * driver allocated (ALLOC_Q_COUNTER; Linux mlx5_ib sets it from mlx5_ib_get_counters_id
 * only after allocating one). */
static bool counter_set_ok(struct emu_dev *d, uint32_t id)
{
	return id == 0 || emu_obj_get(d, EMU_OBJ_Q_COUNTER, id) != NULL;
}

/* ---- the address path (ads) ---- */

static void path_load(const uint8_t *ads, struct emu_path *p)
{
	uint32_t hi = (uint32_t)PRM_GET(ads, ads, rmac_47_32), lo = (uint32_t)PRM_GET(ads, ads, rmac_31_0);

	p->grh = PRM_GET(ads, ads, grh);
	p->ack_timeout = (uint8_t)PRM_GET(ads, ads, ack_timeout);
	p->src_addr_index = (uint8_t)PRM_GET(ads, ads, src_addr_index);
	p->stat_rate = (uint8_t)PRM_GET(ads, ads, stat_rate);
	p->hop_limit = (uint8_t)PRM_GET(ads, ads, hop_limit);
	p->tclass = (uint8_t)PRM_GET(ads, ads, tclass);
	p->flow_label = (uint32_t)PRM_GET(ads, ads, flow_label);
	memcpy(p->rgid, PRM_ADDR(ads, ads, rgid_rip), sizeof(p->rgid));
	p->dscp = (uint8_t)PRM_GET(ads, ads, dscp);
	p->ecn = (uint8_t)PRM_GET(ads, ads, ecn);
	p->udp_sport = (uint16_t)PRM_GET(ads, ads, udp_sport);
	p->eth_prio = (uint8_t)PRM_GET(ads, ads, eth_prio);
	p->sl = (uint8_t)PRM_GET(ads, ads, sl);
	emu_mac_from_prm(p->rmac, hi, lo);
}

static void path_store(uint8_t *ads, const struct emu_path *p)
{
	PRM_SET(ads, ads, pkey_index, p->pkey_index);
	PRM_SET(ads, ads, grh, p->grh);
	PRM_SET(ads, ads, ack_timeout, p->ack_timeout);
	PRM_SET(ads, ads, src_addr_index, p->src_addr_index);
	PRM_SET(ads, ads, stat_rate, p->stat_rate);
	PRM_SET(ads, ads, hop_limit, p->hop_limit);
	PRM_SET(ads, ads, tclass, p->tclass);
	PRM_SET(ads, ads, flow_label, p->flow_label);
	memcpy(PRM_ADDR(ads, ads, rgid_rip), p->rgid, sizeof(p->rgid));
	PRM_SET(ads, ads, dscp, p->dscp);
	PRM_SET(ads, ads, ecn, p->ecn);
	PRM_SET(ads, ads, udp_sport, p->udp_sport);
	PRM_SET(ads, ads, eth_prio, p->eth_prio);
	PRM_SET(ads, ads, sl, p->sl);
	PRM_SET(ads, ads, vhca_port_num, p->vhca_port_num);
	PRM_SET(ads, ads, rmac_47_32, emu_mac_47_32(p->rmac));
	PRM_SET(ads, ads, rmac_31_0, emu_mac_31_0(p->rmac));
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* ---- CREATE/DESTROY/QUERY ---- */

static int create_qp(struct emu_dev *d, struct emu_cmd *c)
{
	const uint8_t *qpc = PRM_ADDR(create_qp_in, c->in, qpc);
	const uint8_t *g = emu_gen_caps(d);
	unsigned log_max = g ? (unsigned)PRM_GET(cmd_hca_cap, g, log_max_qp_sz) : 15;
	struct emu_qp tmp = { .state = EMU_QP_RST, .pri.vhca_port_num = 1 };
	uint32_t synd = 0;
	int st;

	if (PRM_GET(create_qp_in, c->in, uid))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_UID);
	if (PRM_GET(create_qp_in, c->in, wq_umem_valid) || PRM_GET(qpc, qpc, dbr_umem_valid) ||
	    PRM_GET(create_qp_in, c->in, qpc_ext) || PRM_GET(create_qp_in, c->in, input_qpn))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_RESERVED_NOT_ZERO);
	tmp.st = (uint8_t)PRM_GET(qpc, qpc, st);
	/* The GSI QP (IBTA 13.5: QP1 carries the general services' MADs, the CM's among
	 * them): a UD QP in every other respect, as Linux mlx5_ib (gsi.c) drives it. */
	if (tmp.st == EMU_QP_ST_QP1) {
		tmp.st = EMU_QP_ST_UD;
		tmp.gsi = true;
		/* One GSI QP per process that shares the device through uvd, at most
		 * EMU_MAX_GSI live at once (a real ConnectX takes one per port, which Linux
		 * mlx5_ib's gsi.c multiplexes in software: docs/architecture.md, section 18). */
		unsigned live = 0;
		for (unsigned i = 0; i < EMU_MAX_GSI; i++) {
			const struct emu_qp *o = d->gsi_qpns[i] ? emu_obj_get(d, EMU_OBJ_QP, d->gsi_qpns[i]) : NULL;
			live += o && o->gsi;
		}
		if (live == EMU_MAX_GSI)
			return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_LIMIT_EXCEEDED);
	}
	/* The UMR QP (PRM "QP Context" st REG_UMR): a send queue for UMR WQEs, which are
	 * local operations, with no peer and no receive queue.  Linux mlx5_ib creates one
	 * at every probe and takes it to RTS with the state alone (umr.c
	 * mlx5r_umr_resource_init, mlx5r_umr_qp_rst2rts), without a PD.  Kept as RC with `umr` set: the
	 * transitions take no path (init2rtr, rtr2rts) and the send pipeline refuses any
	 * other WQE (sq_engine.c). */
	if (tmp.st == EMU_QP_ST_REG_UMR) {
		tmp.st = EMU_QP_ST_RC;
		tmp.umr = true;
	}
	/* An XRC QP (st XRC, PRM "QP Context"; IBTA 14.2), in an XRC domain (qpc.xrcd) and
	 * with rq_type SRQ naming an XRC SRQ, as Linux mlx5_ib creates both kinds: a target
	 * (qp.c create_xrc_tgt_qp: no_sq) receives into the XRC SRQ of its domain each
	 * request's XRCETH names (rc_resp.c); an initiator (create_qp_common's defaults for
	 * IB_QPT_XRC_INI: devr->s0, devr->xrcdn1) sends, each WQE naming the remote XRC SRQ
	 * (sq_engine.c) and receives nothing. */
	if (tmp.st == EMU_QP_ST_XRC) {
		if (g && !PRM_GET(cmd_hca_cap, g, xrc))
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_QP_TYPE);
		if (PRM_GET(qpc, qpc, rq_type) != EMU_RQ_SRQ)
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_QP_TYPE);
		tmp.xrcd = (uint32_t)PRM_GET(qpc, qpc, xrcd);
		if (!emu_obj_get(d, EMU_OBJ_XRCD, tmp.xrcd))
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_XRCD);
	} else if (tmp.st != EMU_QP_ST_RC && tmp.st != EMU_QP_ST_UC && tmp.st != EMU_QP_ST_UD)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_QP_TYPE);
	if (g && ((tmp.st == EMU_QP_ST_RC && !PRM_GET(cmd_hca_cap, g, rc)) ||
		  (tmp.st == EMU_QP_ST_UC && !PRM_GET(cmd_hca_cap, g, uc)) ||
		  (tmp.st == EMU_QP_ST_UD && !PRM_GET(cmd_hca_cap, g, ud))))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_QP_TYPE);
	/* qpc.ts_format (0 free-running, 1 default, 2 real-time, 3 reserved) against what
	 * the device supports (roce_cap.qp_ts_format: 0 free-running only, 1 real-time
	 * only, 2 both; Linux mlx5_ifc.h MLX5_TIMESTAMP_FORMAT_CAP_*): a real-time-only
	 * device (ConnectX-6 Dx/ConnectX-7 with the real-time clock on) refuses a
	 * free-running QP, an older one knows nothing but free-running. */
	{
		const uint8_t *roce = emu_cap(d, PRM_CAP_ROCE, 1);
		unsigned ts = (unsigned)PRM_GET(qpc, qpc, ts_format);
		unsigned cap = roce ? (unsigned)PRM_GET(roce_cap, roce, qp_ts_format) : 0;

		if (ts == 3 || (cap == 0 && ts != 0) || (cap == 1 && ts == 0))
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_QP_ATTRIBUTE);
	}
	tmp.pm_state = (uint8_t)PRM_GET(qpc, qpc, pm_state);
	if (tmp.pm_state != EMU_PM_ARMED && tmp.pm_state != EMU_PM_REARM && tmp.pm_state != EMU_PM_MIGRATED)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PM_STATE);
	tmp.pdn = (uint32_t)PRM_GET(qpc, qpc, pd);
	/* A UMR QP needs no PD: each UMR WQE's MKey context names its own, and Linux
	 * leaves qpc.pd 0 on it (qp.c create_kernel_qp: pd only for QPs other than
	 * MLX5_IB_QPT_REG_UMR, which get latency_sensitive instead). */
	if ((!tmp.umr || tmp.pdn) && !emu_obj_get(d, EMU_OBJ_PD, tmp.pdn))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_PD);
	tmp.uar = (uint32_t)PRM_GET(qpc, qpc, uar_page);
	/* uar_page is a UAR index (uar_4k: of a 4 KiB UAR inside an allocated page) */
	if (!emu_uar_obj(d, tmp.uar))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_UAR);
	if (!counter_set_ok(d, (uint32_t)PRM_GET(qpc, qpc, counter_set_id)))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_COUNTER_SET_ID);

	/* the send queue: 64-byte basic blocks */
	tmp.no_sq = PRM_GET(qpc, qpc, no_sq);
	tmp.log_sq_size = (uint8_t)PRM_GET(qpc, qpc, log_sq_size);
	if (!tmp.no_sq) {
		if (tmp.log_sq_size > log_max)
			return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_SIZE_TOO_LARGE);
		tmp.sq_bytes = 64ull << tmp.log_sq_size;
	}
	/* the receive queue: regular (its own WQEs), an SRQ, or none */
	tmp.rq_type = (uint8_t)PRM_GET(qpc, qpc, rq_type);
	if (tmp.rq_type != EMU_RQ_REGULAR && tmp.rq_type != EMU_RQ_SRQ && tmp.rq_type != EMU_RQ_ZERO)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_RQ_TYPE);
	if (tmp.rq_type == EMU_RQ_REGULAR) {
		tmp.log_rq_size = (uint8_t)PRM_GET(qpc, qpc, log_rq_size);
		tmp.rq_stride = (uint16_t)(16u << PRM_GET(qpc, qpc, log_rq_stride));
		if (tmp.log_rq_size > log_max)
			return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_SIZE_TOO_LARGE);
		if (g && tmp.rq_stride > PRM_GET(cmd_hca_cap, g, max_wqe_sz_rq))
			return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_SIZE_TOO_LARGE);
		tmp.rq_bytes = (uint64_t)tmp.rq_stride << tmp.log_rq_size;
	}
	/* A log_msg_max given here is checked against the device's limit but does not
	 * make the QP's message limit: INIT2RTR does (see init2rtr). */
	if (g && PRM_GET(qpc, qpc, log_msg_max) > PRM_GET(cmd_hca_cap, g, log_max_msg))
		return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_SIZE_TOO_LARGE);

	tmp.cqn_snd = (uint32_t)PRM_GET(qpc, qpc, cqn_snd);
	tmp.cqn_rcv = (uint32_t)PRM_GET(qpc, qpc, cqn_rcv);
	if ((!tmp.no_sq || tmp.cqn_snd) && !emu_obj_get(d, EMU_OBJ_CQ, tmp.cqn_snd))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_CQN);
	if ((tmp.rq_type != EMU_RQ_ZERO || tmp.cqn_rcv) && !emu_obj_get(d, EMU_OBJ_CQ, tmp.cqn_rcv))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_CQN);
	if (tmp.rq_type == EMU_RQ_SRQ) {
		tmp.srqn = (uint32_t)PRM_GET(qpc, qpc, srqn_rmpn_xrqn);
		if (!qp_srq_ok(d, tmp.srqn, tmp.st == EMU_QP_ST_XRC))
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_SRQN);
	}

	tmp.dbr = PRM_GET(qpc, qpc, dbr_addr);
	tmp.sq_offset = tmp.rq_bytes;
	st = emu_queue_mem_load(d, c, "CREATE_QP", tmp.dbr, PRM_OFF(create_qp_in, pas) / 8,
				(unsigned)PRM_GET(qpc, qpc, log_page_size), (unsigned)PRM_GET(qpc, qpc, page_offset),
				tmp.rq_bytes + tmp.sq_bytes, &tmp.buf, &synd);
	if (st)
		return emu_cmd_fail(c, st, synd);
	tmp.user_index = (uint32_t)PRM_GET(qpc, qpc, user_index);
	tmp.wq_signature = PRM_GET(qpc, qpc, wq_signature);
	tmp.rlky = PRM_GET(qpc, qpc, rlky);
	tmp.fre = PRM_GET(qpc, qpc, fre);
	/* qpc.block_lb_mc: the QP gets no copy of its own multicast sends (Linux mlx5_ib
	 * sets it for IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK; rx_check.c honours it) */
	tmp.block_lb_mc = PRM_GET(qpc, qpc, block_lb_mc);
	tmp.counter_set_id = (uint8_t)PRM_GET(qpc, qpc, counter_set_id);
	emu_qp_reset_engine(&tmp);
	int rc = emu_queue_adopt(d, c, &qp_kind, &tmp, &tmp.buf);
	if (!rc && tmp.gsi) {
		/* a free slot, or one whose QP1 is gone (DESTROY_QP leaves it: rx_check.c
		 * skips a slot whose QP is not a GSI QP) */
		uint32_t qpn = (uint32_t)PRM_GET(create_qp_out, c->out, qpn);
		for (unsigned i = 0; i < EMU_MAX_GSI; i++) {
			const struct emu_qp *o = d->gsi_qpns[i] ? emu_obj_get(d, EMU_OBJ_QP, d->gsi_qpns[i]) : NULL;
			if (!o || !o->gsi || d->gsi_qpns[i] == qpn) {
				__atomic_store_n(&d->gsi_qpns[i], qpn, __ATOMIC_RELEASE);
				break;
			}
		}
	}
	return rc;
}

EMU_CMD_DESTROY_HANDLER(qp, qpn, EMU_OBJ_QP, PRM_SYND_BAD_QPN)

/* What the transitions (RST2INIT_QP ... RTS2RTS_QP) set, the connection, as QUERY_QP
 * answers it (in qpc order). */
static void qpc_store_connection(uint8_t *qpc, const struct emu_qp *qp)
{
	PRM_SET(qpc, qpc, state, qp->state);
	PRM_SET(qpc, qpc, lag_tx_port_affinity, qp->lag_tx_port_affinity);
	PRM_SET(qpc, qpc, mtu, qp->mtu);
	PRM_SET(qpc, qpc, remote_qpn, qp->remote_qpn);
	path_store(PRM_ADDR(qpc, qpc, primary_address_path), &qp->pri);
	PRM_SET(qpc, qpc, log_ack_req_freq, qp->log_ack_req_freq);
	PRM_SET(qpc, qpc, log_sra_max, qp->log_sra_max);
	PRM_SET(qpc, qpc, retry_count, qp->retry_count);
	PRM_SET(qpc, qpc, rnr_retry, qp->rnr_retry);
	PRM_SET(qpc, qpc, next_send_psn, qp->next_send_psn);
	PRM_SET(qpc, qpc, log_rra_max, qp->log_rra_max);
	PRM_SET(qpc, qpc, atomic_mode, qp->atomic_mode);
	PRM_SET(qpc, qpc, rre, qp->rre);
	PRM_SET(qpc, qpc, rwe, qp->rwe);
	PRM_SET(qpc, qpc, rae, qp->rae);
	PRM_SET(qpc, qpc, min_rnr_nak, qp->min_rnr_nak);
	PRM_SET(qpc, qpc, next_rcv_psn, qp->next_rcv_psn);
	PRM_SET(qpc, qpc, q_key, qp->q_key);
}

static int query_qp(struct emu_dev *d, struct emu_cmd *c)
{
	const struct emu_qp *qp = emu_obj_get(d, EMU_OBJ_QP, (uint32_t)PRM_GET(query_qp_in, c->in, qpn));
	uint8_t *qpc = PRM_ADDR(query_qp_out, c->out, qpc);

	if (PRM_GET(query_qp_in, c->in, qpc_ext))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_RESERVED_NOT_ZERO);
	if (!qp)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_QPN);
	qpc_store_connection(qpc, qp);
	/* ssn, rmsn and the engines' counters run free: PRM_SET stores the low bits each
	 * field holds (firmware-cmd/prm.h: no other file masks a PRM field) */
	PRM_SET(qpc, qpc, st, qp->umr ? EMU_QP_ST_REG_UMR : qp->st);
	PRM_SET(qpc, qpc, pm_state, qp->pm_state);
	PRM_SET(qpc, qpc, wq_signature, qp->wq_signature);
	PRM_SET(qpc, qpc, pd, qp->pdn);
	PRM_SET(qpc, qpc, xrcd, qp->xrcd);
	PRM_SET(qpc, qpc, log_msg_max, qp->log_msg_max);
	PRM_SET(qpc, qpc, log_rq_size, qp->log_rq_size);
	PRM_SET(qpc, qpc, log_rq_stride, qp->rq_stride ? plat_ilog2_ceil(qp->rq_stride) - 4 : 0);
	PRM_SET(qpc, qpc, no_sq, qp->no_sq);
	PRM_SET(qpc, qpc, log_sq_size, qp->log_sq_size);
	PRM_SET(qpc, qpc, rlky, qp->rlky);
	PRM_SET(qpc, qpc, fre, qp->fre);
	PRM_SET(qpc, qpc, counter_set_id, qp->counter_set_id);
	PRM_SET(qpc, qpc, uar_page, qp->uar);
	PRM_SET(qpc, qpc, user_index, qp->user_index);
	PRM_SET(qpc, qpc, cur_rnr_retry, qp->eng.cur_rnr_retry);
	PRM_SET(qpc, qpc, cur_retry_count, qp->eng.cur_retry_count);
	PRM_SET(qpc, qpc, cqn_snd, qp->cqn_snd);
	PRM_SET(qpc, qpc, last_acked_psn, qp->eng.last_acked_psn);
	PRM_SET(qpc, qpc, ssn, qp->eng.ssn);
	PRM_SET(qpc, qpc, cqn_rcv, qp->cqn_rcv);
	PRM_SET(qpc, qpc, rq_type, qp->rq_type);
	PRM_SET(qpc, qpc, srqn_rmpn_xrqn, qp->srqn);
	PRM_SET(qpc, qpc, rmsn, qp->eng.rmsn);
	PRM_SET(qpc, qpc, hw_sq_wqebb_counter, qp->eng.sq_pi);
	PRM_SET(qpc, qpc, hw_rq_counter, qp->eng.rq_pi);
	EMU_QUEUE_MEM_ANSWER(qpc, qpc, qp, c, PRM_OFF(query_qp_out, qp_pas_or_qpc_ext_and_pas) / 8);
	return 0;
}

/* ---- transitions ---- */

struct tctx {
	struct emu_dev *d;
	struct emu_cmd *c;
	const uint8_t *qpc;
	uint32_t opt;
	uint32_t synd;
};

static int tfail(struct tctx *t, int status, uint32_t synd)
{
	t->synd = synd;
	return status;
}

static int take_port(struct tctx *t, struct emu_qp *n, const uint8_t *ads, bool zero_keeps)
{
	unsigned port = (unsigned)PRM_GET(ads, ads, vhca_port_num);

	if (port == 0 && zero_keeps)
		return 0;
	/* 0 names the function's own (only) port on a single-port function */
	if (port > num_ports(t->d))
		return tfail(t, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PORT);
	n->pri.vhca_port_num = (uint8_t)(port ? port : 1);
	return 0;
}

static int take_pkey(struct tctx *t, struct emu_qp *n, const uint8_t *ads)
{
	uint32_t ix = (uint32_t)PRM_GET(ads, ads, pkey_index);

	if (ix >= pkey_table_len(t->d))
		return tfail(t, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PKEY_INDEX);
	n->pri.pkey_index = (uint16_t)ix;
	return 0;
}

static int take_pm_state(struct tctx *t, struct emu_qp *n)
{
	uint8_t pm = (uint8_t)PRM_GET(qpc, t->qpc, pm_state);

	if (pm != EMU_PM_ARMED && pm != EMU_PM_REARM && pm != EMU_PM_MIGRATED)
		return tfail(t, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_PM_STATE);
	n->pm_state = pm;
	return 0;
}

/* Responder access: RC has read/write/atomic, UC write only (IBTA 9.4.x), UD none. */
static void take_access(struct emu_qp *n, const uint8_t *qpc, uint32_t bits)
{
	if ((bits & OPT_RRE) && reliable(n))
		n->rre = PRM_GET(qpc, qpc, rre);
	if ((bits & OPT_RWE) && n->st != EMU_QP_ST_UD)
		n->rwe = PRM_GET(qpc, qpc, rwe);
	if ((bits & OPT_RAE) && reliable(n)) {
		n->rae = PRM_GET(qpc, qpc, rae);
		n->atomic_mode = (uint8_t)PRM_GET(qpc, qpc, atomic_mode);
	}
}

/* An outstanding-reads limit (log_sra_max as requester, log_rra_max as responder) is
 * within the device's log_max_ra_req_qp / log_max_ra_res_qp (PRM cmd_hca_cap). */
static int take_ra(struct tctx *t, uint8_t v, uint64_t log_max, uint8_t *dst)
{
	if (emu_gen_caps(t->d) && v > log_max)
		return tfail(t, PRM_CMD_STAT_LIM_ERR, PRM_SYND_LIMIT_EXCEEDED);
	*dst = v;
	return 0;
}

static int take_sra(struct tctx *t, struct emu_qp *n)
{
	const uint8_t *g = emu_gen_caps(t->d);

	return take_ra(t, (uint8_t)PRM_GET(qpc, t->qpc, log_sra_max),
		       g ? PRM_GET(cmd_hca_cap, g, log_max_ra_req_qp) : 0, &n->log_sra_max);
}

static int take_rra(struct tctx *t, struct emu_qp *n)
{
	const uint8_t *g = emu_gen_caps(t->d);

	return take_ra(t, (uint8_t)PRM_GET(qpc, t->qpc, log_rra_max),
		       g ? PRM_GET(cmd_hca_cap, g, log_max_ra_res_qp) : 0, &n->log_rra_max);
}

/* The optional parameters the mask names (already checked against trans_tab). */
static int take_optional(struct tctx *t, struct emu_qp *n)
{
	const uint8_t *qpc = t->qpc, *ads = PRM_ADDR(qpc, qpc, primary_address_path);
	uint32_t o = t->opt;
	int st;

	take_access(n, qpc, o);
	if ((o & OPT_PKEY_INDEX) && (st = take_pkey(t, n, ads)))
		return st;
	if (o & OPT_Q_KEY)
		n->q_key = (uint32_t)PRM_GET(qpc, qpc, q_key);
	if (o & OPT_RNR_TIMEOUT)
		n->min_rnr_nak = (uint8_t)PRM_GET(qpc, qpc, min_rnr_nak);
	if ((o & OPT_PM_STATE) && (st = take_pm_state(t, n)))
		return st;
	if (o & OPT_ALT_ADDR_PATH)
		n->alt_valid = true;
	if (o & OPT_ACK_TIMEOUT)
		n->pri.ack_timeout = (uint8_t)PRM_GET(ads, ads, ack_timeout);
	if (o & OPT_LAG_TX_AFF)
		n->lag_tx_port_affinity = (uint8_t)PRM_GET(qpc, qpc, lag_tx_port_affinity);
	if ((o & OPT_PRI_PORT) && (st = take_port(t, n, ads, false)))
		return st;
	if (o & OPT_CQN_RCV) {
		uint32_t cqn = (uint32_t)PRM_GET(qpc, qpc, cqn_rcv);

		if (!emu_obj_get(t->d, EMU_OBJ_CQ, cqn))
			return tfail(t, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_CQN);
		n->cqn_rcv = cqn;
	}
	if (o & OPT_SRQN) {
		uint32_t srqn = (uint32_t)PRM_GET(qpc, qpc, srqn_rmpn_xrqn);

		if (n->rq_type != EMU_RQ_SRQ)
			return tfail(t, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_RQ_TYPE);
		if (!qp_srq_ok(t->d, srqn, false))
			return tfail(t, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_SRQN);
		n->srqn = srqn;
	}
	return 0;
}

/* RST2INIT: port, P_Key index, path migration state; access (RC/UC) or Q_Key (UD). */
static int rst2init(struct tctx *t, struct emu_qp *n)
{
	const uint8_t *ads = PRM_ADDR(qpc, t->qpc, primary_address_path);
	int st;

	if ((st = take_port(t, n, ads, false)) || (st = take_pkey(t, n, ads)) || (st = take_pm_state(t, n)))
		return st;
	if (n->st == EMU_QP_ST_UD)
		n->q_key = (uint32_t)PRM_GET(qpc, t->qpc, q_key);
	else
		take_access(n, t->qpc, OPT_RRE | OPT_RWE | OPT_RAE);
	if (!counter_set_ok(t->d, (uint32_t)PRM_GET(qpc, t->qpc, counter_set_id)))
		return tfail(t, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_COUNTER_SET_ID);
	n->counter_set_id = (uint8_t)PRM_GET(qpc, t->qpc, counter_set_id);
	return 0;
}

/* The path MTU and the message limit, which INIT2RTR carries together (qpc.mtu,
 * qpc.log_msg_max: a message longer than 2^log_msg_max completes in error, PRM "QP
 * Context").  Every firmware-proven driver sends both at INIT2RTR and none sends the
 * limit at CREATE_QP: Linux mlx5_ib drivers/infiniband/hw/mlx5/qp.c __mlx5_ib_modify_qp
 * (mtu and log_msg_max = log_max_msg under IB_QP_PATH_MTU; on UD mtu 4096 and
 * log_msg_max 12 in every transition), Linux drivers/vfio/pci/mlx5/cmd.c
 * mlx5vf_activate_qp (INIT2RTR), rdma-core tests/mlx5_base.py (INIT2RTR,
 * log_msg_max=20).  So the value INIT2RTR carries is the QP's limit, whatever CREATE_QP
 * said, and 0 is a limit of one byte.  A UD QP without an MTU is refused as a missing
 * attribute: no reference leaves it 0, and the PRM gives no default for it (the
 * firmware's own answer is unverified; this is the strict reading). */
static int take_mtu_msg_max(struct tctx *t, struct emu_qp *n)
{
	const uint8_t *g = emu_gen_caps(t->d);
	uint8_t mtu = (uint8_t)PRM_GET(qpc, t->qpc, mtu);
	uint8_t lmm = (uint8_t)PRM_GET(qpc, t->qpc, log_msg_max);

	if (!mtu)
		return tfail(t, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MISSING_QP_ATTRIBUTE);
	if (mtu > QP_MTU_MAX)
		return tfail(t, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_MTU);
	if (g && lmm > PRM_GET(cmd_hca_cap, g, log_max_msg))
		return tfail(t, PRM_CMD_STAT_LIM_ERR, PRM_SYND_SIZE_TOO_LARGE);
	n->mtu = mtu;
	n->log_msg_max = lmm;
	return 0;
}

/* INIT2RTR: MTU and message limit (take_mtu_msg_max); on a connected QP also the
 * remote QPN, receive PSN and the RoCE primary path (GRH with the remote GID, the
 * remote MAC); RC also the responder's outstanding reads and RNR NAK timer. */
static int init2rtr(struct tctx *t, struct emu_qp *n)
{
	const uint8_t *qpc = t->qpc, *ads = PRM_ADDR(qpc, qpc, primary_address_path);
	struct emu_path p = n->pri;
	int st;

	if (n->umr)   /* local operations only: no MTU, peer or path (mlx5r_umr_qp_rst2rts) */
		return 0;
	if ((st = take_mtu_msg_max(t, n)))
		return st;
	if (n->st == EMU_QP_ST_UD)
		return 0;
	if (!PRM_GET(qpc, qpc, remote_qpn))
		return tfail(t, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MISSING_QP_ATTRIBUTE);
	path_load(ads, &p);
	/* RoCE: every packet carries a GRH; the path names the peer by GID and MAC */
	if (all_zero(p.rgid, sizeof(p.rgid)) || all_zero(p.rmac, sizeof(p.rmac)))
		return tfail(t, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MISSING_QP_ATTRIBUTE);
	if (!p.grh)
		return tfail(t, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_ADDRESS_PATH);
	/* an empty RoCE address entry has no source address to send from */
	if (p.src_addr_index >= gid_table_len(t->d) || !emu_gid_valid(t->d, p.src_addr_index))
		return tfail(t, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_GID_INDEX);
	if ((st = take_port(t, n, ads, true)))
		return st;
	p.vhca_port_num = n->pri.vhca_port_num;
	p.pkey_index = n->pri.pkey_index;   /* only with OPT_PKEY_INDEX */
	p.ack_timeout = n->pri.ack_timeout; /* an RTR2RTS attribute */
	if (reliable(n)) {
		if ((st = take_rra(t, n)))
			return st;
		n->min_rnr_nak = (uint8_t)PRM_GET(qpc, qpc, min_rnr_nak);
	}
	n->pri = p;
	n->remote_qpn = (uint32_t)PRM_GET(qpc, qpc, remote_qpn);
	n->next_rcv_psn = (uint32_t)PRM_GET(qpc, qpc, next_rcv_psn);
	n->log_ack_req_freq = (uint8_t)PRM_GET(qpc, qpc, log_ack_req_freq);
	return 0;
}

/* RTR2RTS: the send PSN; RC also retry and RNR retry counts, outstanding reads as
 * requester and the local ACK timeout. */
static int rtr2rts(struct tctx *t, struct emu_qp *n)
{
	const uint8_t *qpc = t->qpc, *ads = PRM_ADDR(qpc, qpc, primary_address_path);
	int st;

	if (reliable(n) && !n->umr) {
		if ((st = take_sra(t, n)))
			return st;
		n->retry_count = (uint8_t)PRM_GET(qpc, qpc, retry_count);
		n->rnr_retry = (uint8_t)PRM_GET(qpc, qpc, rnr_retry);
		n->pri.ack_timeout = (uint8_t)PRM_GET(ads, ads, ack_timeout);
		n->eng.cur_retry_count = n->retry_count;
		n->eng.cur_rnr_retry = n->rnr_retry;
	}
	n->next_send_psn = (uint32_t)PRM_GET(qpc, qpc, next_send_psn);
	n->eng.last_acked_psn = (n->next_send_psn - 1) & 0xffffff;
	return 0;
}

static int transition(struct emu_dev *d, struct emu_cmd *c, enum trans tr, uint32_t qpn, uint32_t opt,
		      const uint8_t *qpc)
{
	struct emu_qp *qp = emu_obj_get(d, EMU_OBJ_QP, qpn), n;
	struct tctx t = { d, c, qpc, opt, 0 };
	int st = 0;

	if (!qp)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_QPN);
	if (!(trans_tab[tr].from & S(qp->state))) {
		emu_log(d, EMU_LOG_INFO, "%s_QP on QP 0x%x in state %u: not allowed", trans_tab[tr].name, qpn,
			qp->state);
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_QP_STATE, PRM_SYND_ILLEGAL_QP_TRANSITION);
	}
	if (opt & ~trans_tab[tr].opt[opt_col(qp)]) {
		emu_log(d, EMU_LOG_INFO, "%s_QP on QP 0x%x: opt_param_mask 0x%x outside allowed 0x%x",
			trans_tab[tr].name, qpn, opt, trans_tab[tr].opt[opt_col(qp)]);
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_QP_ATTRIBUTE);
	}
	n = *qp;
	switch (tr) {
	case T_RST2INIT:
		st = rst2init(&t, &n);
		break;
	case T_INIT2RTR:
		st = init2rtr(&t, &n);
		break;
	case T_RTR2RTS:
		st = rtr2rts(&t, &n);
		break;
	case T_2RST:
		emu_qp_reset_engine(&n);
		break;
	default:
		break;
	}
	if (!st && qpc)
		st = take_optional(&t, &n);
	if (st)
		return emu_cmd_fail(c, st, t.synd);
	/* references follow a changed receive CQ or SRQ (RTS2RTS on UD) */
	if (n.cqn_rcv != qp->cqn_rcv) {
		emu_obj_ref(emu_obj_get(d, EMU_OBJ_CQ, n.cqn_rcv));
		if (qp->cqn_rcv)
			emu_obj_unref_id(d, EMU_OBJ_CQ, qp->cqn_rcv);
	}
	if (n.srqn != qp->srqn) {
		emu_obj_ref(emu_obj_get(d, EMU_OBJ_SRQ, n.srqn));
		emu_obj_unref_id(d, EMU_OBJ_SRQ, qp->srqn);
	}
	n.state = trans_tab[tr].to;
	*qp = n;
	if (tr == T_2ERR) {
		emu_qp_srq_last_wqe(d, qp);
		for (size_t a = 0; a < emu_nareas; a++)
			if (emu_areas[a]->qp_error)
				emu_areas[a]->qp_error(d, qp);
	}
	if (tr == T_2RST)
		for (size_t a = 0; a < emu_nareas; a++)
			if (emu_areas[a]->qp_reset)
				emu_areas[a]->qp_reset(d, qp);
	return 0;
}

void emu_qp_srq_last_wqe(struct emu_dev *d, struct emu_qp *qp)
{
	uint8_t data[EMU_EQE_DATA_BYTES] = { 0 };

	/* a daemon's device whose clients run the data plane: their engines say it */
	if (qp->rq_type != EMU_RQ_SRQ || qp->eng.last_wqe_reached || d->dataplane_off)
		return;
	qp->eng.last_wqe_reached = true;
	PRM_SET(qp_events, data, type, 0);   /* a QP (not SRQ/RQ/SQ object) */
	PRM_SET(qp_events, data, qpn_rqn_sqn, qp->qpn);
	emu_eq_post_event(d, PRM_EVENT_SRQ_LAST_WQE, 0, data);
}

/* The transitions with a qpc share one layout: init2init_qp_in is not in our tables,
 * and mlx5_ifc.h gives it exactly rst2init_qp_in's fields and offsets. */
#define TRANS_WITH_QPC(fn, tr, type)                                                                  \
	static int fn(struct emu_dev *d, struct emu_cmd *c)                                           \
	{                                                                                             \
		if (PRM_GET(type, c->in, uid))                                                        \
			return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_UID);            \
		return transition(d, c, tr, (uint32_t)PRM_GET(type, c->in, qpn),                      \
				  (uint32_t)PRM_GET(type, c->in, opt_param_mask), PRM_ADDR(type, c->in, qpc)); \
	}
TRANS_WITH_QPC(rst2init_qp, T_RST2INIT, rst2init_qp_in)
TRANS_WITH_QPC(init2init_qp, T_INIT2INIT, rst2init_qp_in)
TRANS_WITH_QPC(init2rtr_qp, T_INIT2RTR, init2rtr_qp_in)
TRANS_WITH_QPC(rtr2rts_qp, T_RTR2RTS, rtr2rts_qp_in)
TRANS_WITH_QPC(rts2rts_qp, T_RTS2RTS, rts2rts_qp_in)

static int qp_2err(struct emu_dev *d, struct emu_cmd *c)
{
	if (PRM_GET(qp_2err_in, c->in, uid))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_UID);
	return transition(d, c, T_2ERR, (uint32_t)PRM_GET(qp_2err_in, c->in, qpn), 0, NULL);
}

static int qp_2rst(struct emu_dev *d, struct emu_cmd *c)
{
	if (PRM_GET(qp_2rst_in, c->in, uid))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_UID);
	return transition(d, c, T_2RST, (uint32_t)PRM_GET(qp_2rst_in, c->in, qpn), 0, NULL);
}

static const struct emu_cmd_desc cmds[] = {
	EMU_CMDS_OBJ(QP, qp),
	EMU_CMD(RST2INIT_QP, EMU_CMDF_INIT, rst2init_qp_in, rst2init_qp_out, rst2init_qp),
	EMU_CMD(INIT2INIT_QP, EMU_CMDF_INIT, rst2init_qp_in, rst2init_qp_out, init2init_qp),
	EMU_CMD(INIT2RTR_QP, EMU_CMDF_INIT, init2rtr_qp_in, init2rtr_qp_out, init2rtr_qp),
	EMU_CMD(RTR2RTS_QP, EMU_CMDF_INIT, rtr2rts_qp_in, rtr2rts_qp_out, rtr2rts_qp),
	EMU_CMD(RTS2RTS_QP, EMU_CMDF_INIT, rts2rts_qp_in, rts2rts_qp_out, rts2rts_qp),
	EMU_CMD(2ERR_QP, EMU_CMDF_INIT, qp_2err_in, qp_2err_out, qp_2err),
	EMU_CMD(2RST_QP, EMU_CMDF_INIT, qp_2rst_in, qp_2rst_out, qp_2rst),
};

const struct emu_cmd_area emu_area_qp = { .name = "qp", .cmds = cmds, .ncmds = EMU_NCMDS(cmds) };
