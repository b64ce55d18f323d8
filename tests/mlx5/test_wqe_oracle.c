/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Oracle: our data-path layouts (firmware-cmd/layouts/wqe.def) and WQE builders
 * (hw/mlx5/wqe.h) against rdma-core's installed <infiniband/mlx5dv.h>, an independent
 * encoder: its segment structs, mlx5dv_set_ctrl_seg, mlx5dv_set_data_seg,
 * mlx5dv_set_dgram_seg and its enum values.  Byte for byte. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "firmware-cmd/prm.h"
#include "mlx5dv_oracle.h"

/* ------------------------------------------------------------ layout rows */

static unsigned n_checked, n_bad;
static char checked[256][64];
static unsigned n_names;

static void note(const char *type, const char *field, int ok, const char *why)
{
	n_checked++;
	if (n_names < 256)
		snprintf(checked[n_names++], sizeof(checked[0]), "%s.%s", type, field);
	if (!ok) {
		n_bad++;
		cr_log_error("%s.%s disagrees with mlx5dv.h: %s", type, field, why);
	}
}

/* A whole mlx5dv member (big-endian integer or byte array): same offset, same width,
 * and a value set through our accessor reads back through the member. */
static void member(const char *type, const char *field, void (*set)(void *, uint64_t),
		   unsigned bit_off, unsigned width, size_t dv_off, size_t dv_size)
{
	uint8_t buf[64];
	uint64_t v = 0x8877665544332211ull, got = 0;
	int ok = bit_off == dv_off * 8 && width == dv_size * 8;

	if (ok && set) {
		if (width < 64)
			v &= (1ull << width) - 1;
		memset(buf, 0, sizeof(buf));
		set(buf, v);
		for (size_t i = 0; i < dv_size; i++)
			got = (got << 8) | buf[dv_off + i];
		ok = got == v;
	}
	note(type, field, ok, "offset/width/byte order of the member");
}

#define MEMBER(pt, pf, dt, dm)                                                          \
	member(#pt, #pf, prm_##pt##_set_##pf, PRM_OFF(pt, pf), PRM_WIDTH(pt, pf),       \
	       offsetof(struct dt, dm), sizeof(((struct dt *)0)->dm))
#define MEMBER_BYTES(pt, pf, dt, dm)                                                    \
	member(#pt, #pf, NULL, PRM_OFF(pt, pf), PRM_WIDTH(pt, pf),                      \
	       offsetof(struct dt, dm), sizeof(((struct dt *)0)->dm))

/* A packed field: our setter alone must produce the bytes the oracle encoder produces. */
static void packed(const char *type, const char *field, const uint8_t *ours,
		   const uint8_t *dv, size_t len)
{
	note(type, field, memcmp(ours, dv, len) == 0, "bytes of a packed field");
}

static void check_ctrl(void)
{
	struct mlx5_wqe_ctrl_seg dv;
	uint8_t o[16];

#define CTRL(field, v, pi, opc, opm, qpn, fcs, ds, sig, imm)                           \
	do {                                                                             \
		memset(o, 0, 16);                                                        \
		memset(&dv, 0, sizeof(dv));                                              \
		PRM_SET(wqe_ctrl_seg, o, field, v);                                      \
		mlx5dv_set_ctrl_seg(&dv, pi, opc, opm, qpn, fcs, ds, sig, imm);          \
		packed("wqe_ctrl_seg", #field, o, (uint8_t *)&dv, 16);                   \
	} while (0)
	CTRL(opmod, 0xa5, 0, 0, 0xa5, 0, 0, 0, 0, 0);
	CTRL(wqe_index, 0xbeef, 0xbeef, 0, 0, 0, 0, 0, 0, 0);
	CTRL(opcode, MLX5_OPCODE_ATOMIC_FA, 0, MLX5_OPCODE_ATOMIC_FA, 0, 0, 0, 0, 0, 0);
	CTRL(qpn, 0xabcdef, 0, 0, 0, 0xabcdef, 0, 0, 0, 0);
	CTRL(ds, 0x3f, 0, 0, 0, 0, 0, 0x3f, 0, 0);
	CTRL(signature, 0x5a, 0, 0, 0, 0, 0, 0, 0x5a, 0);
	CTRL(fm_ce_se, 0xaa, 0, 0, 0, 0, 0xaa, 0, 0, 0);
	CTRL(fm, MX5_FM_FENCE, 0, 0, 0, 0, MLX5_WQE_CTRL_FENCE, 0, 0, 0);
	CTRL(ce, MX5_CE_ALWAYS, 0, 0, 0, 0, MLX5_WQE_CTRL_CQ_UPDATE, 0, 0, 0);
	CTRL(se, 1, 0, 0, 0, 0, MLX5_WQE_CTRL_SOLICITED, 0, 0, 0);
	CTRL(imm, 0x12345678, 0, 0, 0, 0, 0, 0, 0, htobe32(0x12345678));
#undef CTRL
	MEMBER(wqe_ctrl_seg, dci_stream_channel_id, mlx5_wqe_ctrl_seg, dci_stream_channel_id);
	note("wqe_ctrl_seg", "(size)", PRM_SIZE(wqe_ctrl_seg) == sizeof(struct mlx5_wqe_ctrl_seg), "size");
}

static void check_segments(void)
{
	MEMBER(wqe_raddr_seg, raddr, mlx5_wqe_raddr_seg, raddr);
	MEMBER(wqe_raddr_seg, rkey, mlx5_wqe_raddr_seg, rkey);
	note("wqe_raddr_seg", "(size)", PRM_SIZE(wqe_raddr_seg) == sizeof(struct mlx5_wqe_raddr_seg), "size");
	MEMBER(wqe_atomic_seg, swap_add, mlx5_wqe_atomic_seg, swap_add);
	MEMBER(wqe_atomic_seg, compare, mlx5_wqe_atomic_seg, compare);
	note("wqe_atomic_seg", "(size)", PRM_SIZE(wqe_atomic_seg) == sizeof(struct mlx5_wqe_atomic_seg), "size");
	MEMBER(wqe_data_seg, byte_count, mlx5_wqe_data_seg, byte_count);
	MEMBER(wqe_data_seg, lkey, mlx5_wqe_data_seg, lkey);
	MEMBER(wqe_data_seg, addr, mlx5_wqe_data_seg, addr);
	note("wqe_data_seg", "(size)", PRM_SIZE(wqe_data_seg) == sizeof(struct mlx5_wqe_data_seg), "size");

	{	/* inline header: byte_count | MLX5_INLINE_SEG, big-endian (libmlx5 qp.c) */
		struct mlx5_wqe_inl_data_seg dv;
		uint8_t o[4] = { 0 };
		PRM_SET(wqe_inline_seg, o, inline, 1);
		dv.byte_count = htobe32(MLX5_INLINE_SEG);
		packed("wqe_inline_seg", "inline", o, (uint8_t *)&dv, 4);
		memset(o, 0, 4);
		PRM_SET(wqe_inline_seg, o, byte_count, 0x7edcba98);
		dv.byte_count = htobe32(0x7edcba98);
		packed("wqe_inline_seg", "byte_count", o, (uint8_t *)&dv, 4);
		note("wqe_inline_seg", "(size)", PRM_SIZE(wqe_inline_seg) == sizeof(dv), "size");
	}

	{	/* datagram segment through mlx5dv_set_dgram_seg, one argument at a time */
		struct mlx5_wqe_datagram_seg dv;
		uint8_t o[48], mac0[6] = { 0 }, gid0[16] = { 0 };
		uint8_t mac[6] = { 1, 2, 3, 4, 5, 6 }, gid[16];
		for (int i = 0; i < 16; i++)
			gid[i] = (uint8_t)(0xf0 + i);
#define DG(field, v, key, dqp, ext, srsl, flm, rlid, rmac, tc, hl, gf, rgid)            \
	do {                                                                             \
		memset(o, 0, 48);                                                        \
		memset(&dv, 0, sizeof(dv));                                              \
		PRM_SET(wqe_datagram_seg, o, field, v);                                  \
		mlx5dv_set_dgram_seg(&dv, key, dqp, ext, srsl, flm, rlid, rmac, tc, hl, gf, rgid); \
		packed("wqe_datagram_seg", #field, o, (uint8_t *)&dv, 48);               \
	} while (0)
		/* "Always put 64 bits, in q_key, the reserved part will be 0": qkey is the
		 * upper half of the 64-bit key. */
		DG(qkey, 0x80010002u, 0x80010002ull << 32, 0, 0, 0, 0, 0, mac0, 0, 0, 0, gid0);
		DG(ext, 1, 0, 0, 1, 0, 0, 0, mac0, 0, 0, 0, gid0);
		DG(dqpn, 0xfedcba, 0, 0xfedcba, 0, 0, 0, 0, mac0, 0, 0, 0, gid0);
		DG(stat_rate_sl, 0x9c, 0, 0, 0, 0x9c, 0, 0, mac0, 0, 0, 0, gid0);
		DG(fl_mlid, 0x81, 0, 0, 0, 0, 0x81, 0, mac0, 0, 0, 0, gid0);
		DG(rlid, 0xc0de, 0, 0, 0, 0, 0, 0xc0de, mac0, 0, 0, 0, gid0);
		DG(tclass, 0x2e, 0, 0, 0, 0, 0, 0, mac0, 0x2e, 0, 0, gid0);
		DG(hop_limit, 0x40, 0, 0, 0, 0, 0, 0, mac0, 0, 0x40, 0, gid0);
		/* libmlx5 create_ah: grh_gid_fl = flow_label | grh << 30 | sgid_index << 20 */
		DG(grh, 1, 0, 0, 0, 0, 0, 0, mac0, 0, 0, 1u << 30, gid0);
		DG(sgid_index, 0xa7, 0, 0, 0, 0, 0, 0, mac0, 0, 0, 0xa7u << 20, gid0);
		DG(flow_label, 0xabcde, 0, 0, 0, 0, 0, 0, mac0, 0, 0, 0xabcde, gid0);
#undef DG
		memset(o, 0, 48);
		memset(&dv, 0, sizeof(dv));
		memcpy(PRM_ADDR(wqe_datagram_seg, o, rmac), mac, 6);
		memcpy(PRM_ADDR(wqe_datagram_seg, o, rgid), gid, 16);
		mlx5dv_set_dgram_seg(&dv, 0, 0, 0, 0, 0, 0, mac, 0, 0, 0, gid);
		packed("wqe_datagram_seg", "rmac", o, (uint8_t *)&dv, 48);
		packed("wqe_datagram_seg", "rgid", o, (uint8_t *)&dv, 48);
		MEMBER_BYTES(wqe_datagram_seg, rmac, mlx5_wqe_av, rmac);
		note("wqe_datagram_seg", "(size)", PRM_SIZE(wqe_datagram_seg) == sizeof(dv), "size");
	}

	MEMBER(wqe_umr_ctrl_seg, flags, mlx5_wqe_umr_ctrl_seg, flags);
	MEMBER(wqe_umr_ctrl_seg, klm_octowords, mlx5_wqe_umr_ctrl_seg, klm_octowords);
	MEMBER(wqe_umr_ctrl_seg, translation_offset, mlx5_wqe_umr_ctrl_seg, translation_offset);
	MEMBER(wqe_umr_ctrl_seg, mkey_mask, mlx5_wqe_umr_ctrl_seg, mkey_mask);
	note("wqe_umr_ctrl_seg", "(size)",
	     PRM_SIZE(wqe_umr_ctrl_seg) == sizeof(struct mlx5_wqe_umr_ctrl_seg), "size");
	/* the mkey context segment of a UMR WQE is the mkc: the bytes libmlx5 names */
	{
		struct mlx5_wqe_mkey_context_seg dv;
		uint8_t o[64] = { 0 };

		memset(&dv, 0, sizeof(dv));
		PRM_SET(mkc, o, rr, 1);
		PRM_SET(mkc, o, a, 1);
		PRM_SET(mkc, o, pd, 0x123456);
		PRM_SET(mkc, o, free, 1);
		dv.access_flags = MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ |
				  MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_ATOMIC;
		dv.flags_pd = htobe32(0x123456);
		dv.free = MLX5_WQE_MKEY_CONTEXT_FREE;
		note("wqe_umr_ctrl_seg", "(mkey context = mkc)",
		     sizeof(dv) == 64 && PRM_SIZE(mkc) == 64 && memcmp(o, &dv, 64) == 0, "mkc bytes");
	}
	MEMBER(wqe_srq_next_seg, next_wqe_index, mlx5_wqe_srq_next_seg, next_wqe_index);
	MEMBER(wqe_srq_next_seg, signature, mlx5_wqe_srq_next_seg, signature);
	note("wqe_srq_next_seg", "(size)",
	     PRM_SIZE(wqe_srq_next_seg) == sizeof(struct mlx5_wqe_srq_next_seg), "size");
}

/* A field packed in a big-endian member: value set through us, read through the
 * member with libmlx5's own extraction (cq.c). */
static void in_member(const char *type, const char *field, int ok)
{
	note(type, field, ok, "value read back through the mlx5dv member");
}

static void check_cqe(void)
{
	struct mlx5_cqe64 c;
	struct mlx5_err_cqe e;

	MEMBER(cqe64, wqe_id, mlx5_cqe64, wqe_id);
	MEMBER(cqe64, slid, mlx5_cqe64, slid);
	MEMBER(cqe64, vlan_info, mlx5_cqe64, vlan_info);
	MEMBER(cqe64, imm_inval_pkey, mlx5_cqe64, imm_inval_pkey);
	MEMBER(cqe64, byte_cnt, mlx5_cqe64, byte_cnt);
	MEMBER(cqe64, timestamp, mlx5_cqe64, timestamp);
	MEMBER(cqe64, wqe_counter, mlx5_cqe64, wqe_counter);
	MEMBER(cqe64, signature, mlx5_cqe64, signature);
	note("cqe64", "(size)", PRM_SIZE(cqe64) == sizeof(c), "size");

#define CQ(field, v, expr)                                                              \
	do {                                                                             \
		memset(&c, 0, sizeof(c));                                                \
		PRM_SET(cqe64, &c, field, v);                                            \
		in_member("cqe64", #field, (uint64_t)(expr) == (uint64_t)(v));          \
	} while (0)
	CQ(ml_path, 0x5b, c.ml_path & 0x7f);
	CQ(grh, 2, (be32toh(c.flags_rqpn) >> 28) & 3);
	CQ(sl, 0xd, (be32toh(c.flags_rqpn) >> 24) & 0xf);
	CQ(rqpn, 0xa1b2c3, be32toh(c.flags_rqpn) & 0xffffff);
	CQ(srqn, 0x3c4d5e, be32toh(c.srqn_uidx) & 0xffffff);
	CQ(pkey, 0xffe1, be32toh(c.imm_inval_pkey) & 0xffff);
	CQ(s_wqe_opcode, MLX5_OPCODE_RDMA_READ, be32toh(c.sop_drop_qpn) >> 24);
	CQ(qpn, 0xfedcba, be32toh(c.sop_drop_qpn) & 0xffffff);
	CQ(opcode, MLX5_CQE_RESP_SEND_INV, mlx5dv_get_cqe_opcode(&c));
	CQ(cqe_format, 3, mlx5dv_get_cqe_format(&c));
	CQ(se, 1, mlx5dv_get_cqe_se(&c));
	CQ(owner, 1, mlx5dv_get_cqe_owner(&c));
#undef CQ

	MEMBER(err_cqe, vendor_err_synd, mlx5_err_cqe, vendor_err_synd);
	MEMBER(err_cqe, syndrome, mlx5_err_cqe, syndrome);
	MEMBER(err_cqe, wqe_counter, mlx5_err_cqe, wqe_counter);
	MEMBER(err_cqe, signature, mlx5_err_cqe, signature);
	note("err_cqe", "(size)", PRM_SIZE(err_cqe) == sizeof(e), "size");
#define EC(field, v, expr)                                                              \
	do {                                                                             \
		memset(&e, 0, sizeof(e));                                                \
		PRM_SET(err_cqe, &e, field, v);                                          \
		in_member("err_cqe", #field, (uint64_t)(expr) == (uint64_t)(v));         \
	} while (0)
	EC(srqn, 0x123456, be32toh(e.srqn) & 0xffffff);
	EC(s_wqe_opcode, MLX5_OPCODE_ATOMIC_CS, be32toh(e.s_wqe_opcode_qpn) >> 24);
	EC(qpn, 0x654321, be32toh(e.s_wqe_opcode_qpn) & 0xffffff);
	EC(opcode, MLX5_CQE_REQ_ERR, e.op_own >> 4);
	EC(owner, 1, e.op_own & MLX5_CQE_OWNER_MASK);
#undef EC
}

static void check_doorbells(void)
{
	uint32_t dw[2];

	/* QP record: dword MLX5_RCV_DBR = htobe32(rq.head & 0xffff), MLX5_SND_DBR likewise. */
	memset(dw, 0, sizeof(dw));
	PRM_SET(qp_dbrec, dw, receive_counter, 0xfeed);
	in_member("qp_dbrec", "receive_counter", be32toh(dw[MLX5_RCV_DBR]) == 0xfeed && dw[MLX5_SND_DBR] == 0);
	memset(dw, 0, sizeof(dw));
	PRM_SET(qp_dbrec, dw, send_counter, 0xbeef);
	in_member("qp_dbrec", "send_counter", be32toh(dw[MLX5_SND_DBR]) == 0xbeef && dw[MLX5_RCV_DBR] == 0);

	/* CQ record (libmlx5 cq.c): dbrec[0] = ci & 0xffffff; dbrec[1] = sn << 28 | cmd | ci,
	 * cmd MLX5_CQ_DB_REQ_NOT_SOL or MLX5_CQ_DB_REQ_NOT. */
	memset(dw, 0, sizeof(dw));
	PRM_SET(cq_dbrec, dw, update_ci, 0xabcdef);
	in_member("cq_dbrec", "update_ci", be32toh(dw[0]) == 0xabcdef && dw[1] == 0);
	memset(dw, 0, sizeof(dw));
	PRM_SET(cq_dbrec, dw, arm_sn, 3);
	in_member("cq_dbrec", "arm_sn", be32toh(dw[1]) == 3u << 28);
	memset(dw, 0, sizeof(dw));
	PRM_SET(cq_dbrec, dw, arm_cmd, 1);
	in_member("cq_dbrec", "arm_cmd", be32toh(dw[1]) == (uint32_t)MLX5_CQ_DB_REQ_NOT_SOL);
	memset(dw, 0, sizeof(dw));
	PRM_SET(cq_dbrec, dw, arm_ci, 0x123456);
	in_member("cq_dbrec", "arm_ci", be32toh(dw[1]) == 0x123456);

	/* UAR CQ doorbell at MLX5_CQ_DOORBELL: { sn << 28 | cmd | ci, cqn }, big-endian. */
	in_member("cq_uar_db", "(offset)", (int)PRM_UAR_CQ_DOORBELL == (int)MLX5_CQ_DOORBELL);
	memset(dw, 0, sizeof(dw));
	PRM_SET(cq_uar_db, dw, arm_sn, 2);
	in_member("cq_uar_db", "arm_sn", be32toh(dw[0]) == 2u << 28);
	memset(dw, 0, sizeof(dw));
	PRM_SET(cq_uar_db, dw, cmd, 1);
	in_member("cq_uar_db", "cmd", be32toh(dw[0]) == (uint32_t)MLX5_CQ_DB_REQ_NOT_SOL);
	memset(dw, 0, sizeof(dw));
	PRM_SET(cq_uar_db, dw, ci, 0xfffffe);
	in_member("cq_uar_db", "ci", be32toh(dw[0]) == 0xfffffe);
	memset(dw, 0, sizeof(dw));
	PRM_SET(cq_uar_db, dw, cqn, 0x00abcd);
	in_member("cq_uar_db", "cqn", be32toh(dw[1]) == 0x00abcd && dw[0] == 0);
}

/* Every row of every data-path table must have been checked above. */
static void check_coverage(void)
{
	static const char *types[] = { "wqe_ctrl_seg", "wqe_raddr_seg", "wqe_atomic_seg",
		"wqe_data_seg", "wqe_inline_seg", "wqe_datagram_seg", "wqe_srq_next_seg",
		"wqe_umr_ctrl_seg", "cqe64", "err_cqe", "qp_dbrec", "cq_dbrec", "cq_uar_db" };

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		const struct prm_struct_desc *s = prm_struct_find(types[t]);
		if (!s) {
			n_bad++;
			cr_log_error("%s: not in the layout tables", types[t]);
			continue;
		}
		for (size_t i = 0; i < s->nfields; i++) {
			char name[64];
			int found = 0;
			snprintf(name, sizeof(name), "%s.%s", types[t], s->fields[i].name);
			for (unsigned k = 0; k < n_names && !found; k++)
				found = strcmp(checked[k], name) == 0;
			if (!found) {
				n_bad++;
				cr_log_error("%s: row has no mlx5dv check", name);
			}
		}
	}
}

Test(mlx5dv_oracle, every_wqe_def_row_agrees_with_mlx5dv_h)
{
	n_checked = n_bad = n_names = 0;
	check_ctrl();
	check_segments();
	check_cqe();
	check_doorbells();
	check_coverage();
	printf("mlx5dv oracle: %u layouts/fields checked, %u mismatches\n", n_checked, n_bad);
	fflush(stdout);
	cr_assert_eq(n_bad, 0, "%u of %u data-path layout checks disagree with mlx5dv.h", n_bad,
		     n_checked);
	cr_assert_gt(n_checked, 80);
}

/* ------------------------------------------------------------ whole WQEs */

static const struct {
	enum ibv_wr_opcode op;
	uint8_t dv_opcode;
} ops[] = {
	{ IBV_WR_RDMA_WRITE, MLX5_OPCODE_RDMA_WRITE },
	{ IBV_WR_RDMA_WRITE_WITH_IMM, MLX5_OPCODE_RDMA_WRITE_IMM },
	{ IBV_WR_SEND, MLX5_OPCODE_SEND },
	{ IBV_WR_SEND_WITH_IMM, MLX5_OPCODE_SEND_IMM },
	{ IBV_WR_SEND_WITH_INV, MLX5_OPCODE_SEND_INVAL },
	{ IBV_WR_RDMA_READ, MLX5_OPCODE_RDMA_READ },
	{ IBV_WR_ATOMIC_CMP_AND_SWP, MLX5_OPCODE_ATOMIC_CS },
	{ IBV_WR_ATOMIC_FETCH_AND_ADD, MLX5_OPCODE_ATOMIC_FA },
};

static uint8_t payload[1024];

/* The oracle's WQE, built only with mlx5dv.h: bytes in `out`, which bytes matter in
 * `care` (inline padding does not); returns its length (ds * 16). */
static size_t dv_wqe(uint8_t *out, uint8_t *care, const struct ibv_send_wr *wr, uint8_t dv_op,
		     uint16_t pi, uint32_t qpn, int sig_all, const struct mx5_av_attr *av)
{
	uint8_t *p = out + sizeof(struct mlx5_wqe_ctrl_seg);
	uint8_t fm_ce_se = 0;
	uint32_t imm = 0;
	size_t len;

	memset(out, 0, 1024);
	memset(care, 1, 1024);
	if (av) {
		struct mlx5_wqe_datagram_seg *d = (void *)p;
		mlx5dv_set_dgram_seg(d, (uint64_t)wr->wr.ud.remote_qkey << 32, wr->wr.ud.remote_qpn, 1,
				     av->stat_rate_sl, 0, av->udp_sport, (uint8_t *)av->dmac, av->tclass,
				     av->hop_limit, (1u << 30) | ((uint32_t)av->sgid_index << 20) | av->flow_label,
				     (uint8_t *)av->dgid);
		p += sizeof(*d);
	}
	if (dv_op == MLX5_OPCODE_RDMA_WRITE || dv_op == MLX5_OPCODE_RDMA_WRITE_IMM ||
	    dv_op == MLX5_OPCODE_RDMA_READ) {
		struct mlx5_wqe_raddr_seg *r = (void *)p;
		r->raddr = htobe64(wr->wr.rdma.remote_addr);
		r->rkey = htobe32(wr->wr.rdma.rkey);
		r->reserved = 0;
		p += sizeof(*r);
	}
	if (dv_op == MLX5_OPCODE_ATOMIC_CS || dv_op == MLX5_OPCODE_ATOMIC_FA) {
		struct mlx5_wqe_raddr_seg *r = (void *)p;
		struct mlx5_wqe_atomic_seg *a = (void *)(p + sizeof(*r));
		r->raddr = htobe64(wr->wr.atomic.remote_addr);
		r->rkey = htobe32(wr->wr.atomic.rkey);
		r->reserved = 0;
		if (dv_op == MLX5_OPCODE_ATOMIC_CS) {
			a->swap_add = htobe64(wr->wr.atomic.swap);
			a->compare = htobe64(wr->wr.atomic.compare_add);
		} else {
			a->swap_add = htobe64(wr->wr.atomic.compare_add);
			a->compare = 0;
		}
		p += sizeof(*r) + sizeof(*a);
	}
	if (wr->send_flags & IBV_SEND_INLINE) {
		uint32_t total = 0;
		for (int i = 0; i < wr->num_sge; i++)
			total += wr->sg_list[i].length;
		if (total) {
			struct mlx5_wqe_inl_data_seg *h = (void *)p;
			uint8_t *d = p + sizeof(*h);
			size_t seg = (sizeof(*h) + total + 15) & ~(size_t)15;
			h->byte_count = htobe32(total | MLX5_INLINE_SEG);
			for (int i = 0; i < wr->num_sge; i++) {
				memcpy(d, (void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
				d += wr->sg_list[i].length;
			}
			memset(care + (d - out), 0, (size_t)(p + seg - d));
			p += seg;
		}
	} else {
		for (int i = 0; i < wr->num_sge; i++) {
			if (!wr->sg_list[i].length)
				continue;
			mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)p, wr->sg_list[i].length,
					    wr->sg_list[i].lkey, (uintptr_t)wr->sg_list[i].addr);
			p += sizeof(struct mlx5_wqe_data_seg);
		}
	}
	if (wr->send_flags & IBV_SEND_FENCE)
		fm_ce_se |= MLX5_WQE_CTRL_FENCE;
	if ((wr->send_flags & IBV_SEND_SIGNALED) || sig_all)
		fm_ce_se |= MLX5_WQE_CTRL_CQ_UPDATE;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		fm_ce_se |= MLX5_WQE_CTRL_SOLICITED;
	/* mlx5dv_set_ctrl_seg: immediates as is (network order), SEND_INV htobe32(rkey). */
	if (dv_op == MLX5_OPCODE_SEND_IMM || dv_op == MLX5_OPCODE_RDMA_WRITE_IMM)
		imm = wr->imm_data;
	else if (dv_op == MLX5_OPCODE_SEND_INVAL)
		imm = htobe32(wr->invalidate_rkey);
	len = (size_t)(p - out);
	mlx5dv_set_ctrl_seg((struct mlx5_wqe_ctrl_seg *)out, pi, dv_op, 0, qpn, fm_ce_se,
			    (uint8_t)(len / 16), 0, imm);
	return len;
}

static int same(const uint8_t *ours, const uint8_t *dv, const uint8_t *care, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (care[i] && ours[i] != dv[i])
			return 0;
	return 1;
}

static void fill_wr(struct ibv_send_wr *wr, struct ibv_sge *sge, enum ibv_wr_opcode op,
		    unsigned flags, int nsge, const uint32_t *lens)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = 0x1122334455667788ull ^ (uint64_t)op;
	wr->opcode = op;
	wr->send_flags = flags;
	wr->num_sge = nsge;
	wr->sg_list = sge;
	for (int i = 0; i < nsge; i++) {
		sge[i].addr = (uintptr_t)(payload + 100 * i);
		sge[i].length = lens[i];
		sge[i].lkey = 0x1000u + (uint32_t)i;
	}
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr->wr.atomic.remote_addr = 0xdead0000beef0008ull;
		wr->wr.atomic.rkey = 0xcafe01;
		wr->wr.atomic.compare_add = 0x0102030405060708ull;
		wr->wr.atomic.swap = 0xf1f2f3f4f5f6f7f8ull;
	} else {
		wr->wr.rdma.remote_addr = 0xdead0000beef0000ull;
		wr->wr.rdma.rkey = 0xcafe02;
	}
	if (op == IBV_WR_SEND_WITH_INV)
		wr->invalidate_rkey = 0xabcdef12;
	else
		wr->imm_data = htobe32(0x76543210);
}

/* Every RC opcode x every fence/signal/solicited combination x gather shapes, posted at
 * every basic block of a 16-BB ring (so multi-BB WQEs wrap): our bytes = mlx5dv's. */
Test(mlx5dv_oracle, every_rc_opcode_flag_and_sge_combination_matches_mlx5dv)
{
	static const uint32_t lens_sets[][4] = {
		{ 0 }, { 4096 }, { 16, 32 }, { 7, 0, 9 }, { 1, 2, 3, 4 },
	};
	static const int nsges[] = { 0, 1, 2, 3, 4 };
	struct fx_sq f;
	unsigned cases = 0;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	for (int sig_all = 0; sig_all < 2; sig_all++)
	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
	for (unsigned flags = 0; flags < 8; flags++)
	for (size_t s = 0; s < sizeof(nsges) / sizeof(nsges[0]); s++) {
		struct ibv_send_wr wr;
		struct ibv_sge sge[4];
		int atomic = ops[o].op == IBV_WR_ATOMIC_CMP_AND_SWP ||
			     ops[o].op == IBV_WR_ATOMIC_FETCH_AND_ADD;
		uint32_t eight[1] = { 8 };

		if (atomic && s != 1)
			continue;
		fill_wr(&wr, sge, ops[o].op, flags, nsges[s], atomic ? eight : lens_sets[s]);
		cr_assert_eq(fx_sq_init(&f, IBV_QPT_RC, 256, 4, sig_all), 0);
		for (uint32_t pos = 0; pos < FX_BBS; pos++) {
			uint8_t dv[1024], care[1024], ours[1024];
			size_t len;

			memset(f.ring, 0xa5, sizeof(f.ring));   /* stale bytes must not survive */
			fx_sq_at(&f, pos + 65536 - 8);          /* also cross the 16-bit index */
			cr_assert_eq(mx5_sq_build(&f.sq, &wr), 0, "op %d flags %u sges %d", ops[o].op,
				     flags, nsges[s]);
			len = dv_wqe(dv, care, &wr, ops[o].dv_opcode, (uint16_t)(pos + 65536 - 8),
				     0x1234a5, sig_all, NULL);
			fx_sq_read(&f, pos + 65536 - 8, ours, len);
			cr_assert(same(ours, dv, care, len),
				  "op %d flags %u sges %d at BB %u: WQE differs from mlx5dv",
				  ops[o].op, flags, nsges[s], pos);
			cr_assert_eq(f.sq.cur_post - (pos + 65536 - 8), (len + 63) / 64);
			cases++;
		}
	}
	cr_assert_gt(cases, 1000);
}

/* Inline data of every size from 0 to max_inline (>= 220), split over SGEs, posted at
 * every ring position: header, data and ds equal mlx5dv's, wrapping included. */
Test(mlx5dv_oracle, inline_data_up_to_max_inline_matches_mlx5dv_and_wraps)
{
	static const enum ibv_wr_opcode iops[] = { IBV_WR_SEND, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND_WITH_IMM };
	static const uint8_t dvops[] = { MLX5_OPCODE_SEND, MLX5_OPCODE_RDMA_WRITE,
		MLX5_OPCODE_RDMA_WRITE_IMM, MLX5_OPCODE_SEND_IMM };
	struct fx_sq f;
	const uint32_t max_inline = 476;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 13 + 1);
	cr_assert_eq(fx_sq_init(&f, IBV_QPT_RC, max_inline, 4, 0), 0);
	for (size_t o = 0; o < 4; o++)
	for (uint32_t total = 0; total <= max_inline; total += (total < 64 ? 1 : 17)) {
		struct ibv_send_wr wr;
		struct ibv_sge sge[3];
		uint32_t lens[3] = { total / 3, total / 2 - total / 3, total - total / 2 };

		fill_wr(&wr, sge, iops[o], IBV_SEND_INLINE | IBV_SEND_SIGNALED, 3, lens);
		for (uint32_t pos = 0; pos < FX_BBS; pos++) {
			uint8_t dv[1024], care[1024], ours[1024];
			size_t len;

			memset(f.ring, 0x5a, sizeof(f.ring));
			fx_sq_at(&f, pos);
			cr_assert_eq(mx5_sq_build(&f.sq, &wr), 0, "inline %u", total);
			len = dv_wqe(dv, care, &wr, dvops[o], (uint16_t)pos, 0x1234a5, 0, NULL);
			fx_sq_read(&f, pos, ours, len);
			cr_assert(same(ours, dv, care, len), "inline %u bytes at BB %u differs", total, pos);
		}
	}
	/* one byte more than max_inline is refused, nothing written */
	{
		struct ibv_send_wr wr;
		struct ibv_sge sge[1];
		uint32_t lens[1] = { max_inline + 1 };
		fill_wr(&wr, sge, IBV_WR_SEND, IBV_SEND_INLINE, 1, lens);
		fx_sq_at(&f, 0);
		cr_assert_eq(mx5_sq_build(&f.sq, &wr), -EINVAL);
		cr_assert_eq(f.sq.cur_post, 0);
	}
}

/* UD sends: the datagram segment built from the AV equals mlx5dv_set_dgram_seg's, with
 * the WR's remote QPN and Q_Key, for SEND and SEND_IMM, gather and inline, any position. */
Test(mlx5dv_oracle, ud_datagram_segment_matches_mlx5dv_set_dgram_seg)
{
	struct fx_sq f;
	struct fx_ah ah;
	struct mx5_av_attr av = {
		.dmac = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 },
		.sgid_index = 3, .hop_limit = 64, .tclass = 0x68, .flow_label = 0x5a5a5,
		.udp_sport = 0xc123, .stat_rate_sl = 0x03,
	};

	for (int i = 0; i < 16; i++)
		av.dgid[i] = (uint8_t)(i == 10 || i == 11 ? 0xff : (i == 15 ? 7 : (i == 12 ? 127 : 0)));
	memset(&ah, 0, sizeof(ah));
	mx5_av_build(ah.av, &av);
	cr_assert_eq(fx_sq_init(&f, IBV_QPT_UD, 64, 2, 0), 0);
	for (int op = 0; op < 2; op++)
	for (int inl = 0; inl < 2; inl++)
	for (uint32_t pos = 0; pos < FX_BBS; pos++) {
		struct ibv_send_wr wr;
		struct ibv_sge sge[2];
		uint32_t lens[2] = { 20, 24 };
		uint8_t dv[1024], care[1024], ours[1024];
		size_t len;

		fill_wr(&wr, sge, op ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
			IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0), 2, lens);
		wr.wr.ud.ah = &ah.ibv;
		wr.wr.ud.remote_qpn = 0x00beef;
		wr.wr.ud.remote_qkey = 0x11111111;
		memset(f.ring, 0xee, sizeof(f.ring));
		fx_sq_at(&f, pos);
		cr_assert_eq(mx5_sq_build(&f.sq, &wr), 0);
		len = dv_wqe(dv, care, &wr, op ? MLX5_OPCODE_SEND_IMM : MLX5_OPCODE_SEND, (uint16_t)pos,
			     0x1234a5, 0, &av);
		fx_sq_read(&f, pos, ours, len);
		cr_assert(same(ours, dv, care, len), "UD op %d inline %d at BB %u differs", op, inl, pos);
	}
}

/* What a QP type does not allow, and malformed WRs, are refused before anything is
 * written. */
Test(mlx5dv_oracle, opcodes_outside_the_qp_type_and_bad_atomics_are_refused)
{
	struct fx_sq f;
	struct ibv_send_wr wr;
	struct ibv_sge sge[5];
	uint32_t lens[5] = { 8, 8, 8, 8, 8 };

	cr_assert_eq(fx_sq_init(&f, IBV_QPT_UD, 64, 4, 0), 0);
	fill_wr(&wr, sge, IBV_WR_RDMA_WRITE, 0, 1, lens);
	cr_assert_eq(mx5_sq_build(&f.sq, &wr), -EINVAL);
	cr_assert_eq(fx_sq_init(&f, IBV_QPT_UC, 64, 4, 0), 0);
	fill_wr(&wr, sge, IBV_WR_RDMA_READ, 0, 1, lens);
	cr_assert_eq(mx5_sq_build(&f.sq, &wr), -EINVAL);
	cr_assert_eq(fx_sq_init(&f, IBV_QPT_RC, 64, 4, 0), 0);
	fill_wr(&wr, sge, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 2, lens);     /* two SGEs */
	cr_assert_eq(mx5_sq_build(&f.sq, &wr), -EINVAL);
	lens[0] = 4;
	fill_wr(&wr, sge, IBV_WR_ATOMIC_CMP_AND_SWP, 0, 1, lens);       /* not 8 bytes */
	cr_assert_eq(mx5_sq_build(&f.sq, &wr), -EINVAL);
	fill_wr(&wr, sge, IBV_WR_SEND, 0, 5, lens);                     /* > max_sge */
	cr_assert_eq(mx5_sq_build(&f.sq, &wr), -EINVAL);
	fill_wr(&wr, sge, IBV_WR_RDMA_READ, IBV_SEND_INLINE, 1, lens);  /* inline READ */
	cr_assert_eq(mx5_sq_build(&f.sq, &wr), -EINVAL);
	fill_wr(&wr, sge, IBV_WR_LOCAL_INV, 0, 0, lens);                /* not implemented */
	cr_assert_eq(mx5_sq_build(&f.sq, &wr), -EINVAL);
	wr.opcode = (enum ibv_wr_opcode)77;
	cr_assert_eq(mx5_sq_build(&f.sq, &wr), -EINVAL);
	cr_assert_eq(f.sq.cur_post, 0);
	cr_assert_eq(f.sq.pending, 0);
}
