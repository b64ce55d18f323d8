/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Which commands a client of the daemon may send, and whose objects they name.
 *
 * A client runs hw/mlx5's own object code; its commands come here whole.  Each is let
 * through only if every object number it names (PD, CQ, QP, SRQ, MKey, UAR, counter
 * set) was created by this client, every address it gives the device (queue pages,
 * doorbell records, MTT entries) lies in memory this client shared or pinned, and its
 * completion EQ is the daemon's.  Commands that change the whole function (pages,
 * HCA state, capabilities, EQs, vport, GID table) are refused.  The kernel's
 * mlx5_ib DEVX interface keeps a client to its own objects the same way
 * (drivers/infiniband/hw/mlx5/devx.c, devx_is_obj_create_cmd / devx_is_valid_obj_id).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "hw/mlx5/mx5.h"
#include "tools/uvd/uvd.h"

/* mkc.access_mode_1_0 (PRM "MKey Context": 1 MTT, 2 KLM). */
enum { UVD_MKC_MTT = 1, UVD_MKC_KLM = 2 };
/* qpc.rq_type (PRM "QP Context": 1 SRQ). */
enum { UVD_RQ_SRQ = 1 };

void *uvd_grow(void *arr, size_t n, size_t *cap, size_t elem, size_t first)
{
	if (n < *cap)
		return arr;
	size_t ncap = *cap ? *cap * 2 : first;
	void *grown = realloc(arr, ncap * elem);
	if (grown)
		*cap = ncap;
	return grown;
}

/* A client's table is kept sorted by (type, number), so that a lookup -- each object a
 * command names, and the owner of each event's CQ, QP or SRQ among all clients -- costs
 * a binary search under the device lock, not a walk of every object: one client's
 * 20,000 objects would otherwise slow every other client's events.  The first entry
 * not below (t, num). */
static size_t uvd_obj_pos(const struct uvd_client *c, enum uvd_obj_type t, uint32_t num)
{
	size_t lo = 0, hi = c->nobj;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct uvd_obj *o = &c->objs[mid];
		if (o->type < t || (o->type == t && o->num < num))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool uvd_owns(const struct uvd_client *c, enum uvd_obj_type t, uint32_t num)
{
	size_t i = uvd_obj_pos(c, t, num);
	return i < c->nobj && c->objs[i].type == t && c->objs[i].num == num;
}

int uvd_obj_add(struct uvd_client *c, enum uvd_obj_type t, uint32_t num)
{
	struct uvd_obj *o = uvd_grow(c->objs, c->nobj, &c->capobj, sizeof(*o), 64);
	if (!o)
		return -ENOMEM;
	c->objs = o;
	size_t i = uvd_obj_pos(c, t, num);
	memmove(&c->objs[i + 1], &c->objs[i], (c->nobj - i) * sizeof(*o));
	c->objs[i] = (struct uvd_obj){ (uint8_t)t, num };
	c->nobj++;
	c->nobj_type[t]++;
	if (t == UVD_UAR && c->nuar < UVD_MAX_UARS)
		c->uars[c->nuar++] = num;
	return 0;
}

void uvd_obj_del(struct uvd_client *c, enum uvd_obj_type t, uint32_t num)
{
	size_t i = uvd_obj_pos(c, t, num);
	if (i < c->nobj && c->objs[i].type == t && c->objs[i].num == num) {
		memmove(&c->objs[i], &c->objs[i + 1], (c->nobj - i - 1) * sizeof(c->objs[0]));
		c->nobj--;
		c->nobj_type[t]--;
	}
	if (t == UVD_UAR)
		for (unsigned i = 0; i < c->nuar; i++)
			if (c->uars[i] == num) {
				c->uars[i] = c->uars[--c->nuar];
				break;
			}
}

/* [a, a+len) inside memory this client shared or pinned, each mapping rounded out to
 * `round` bytes. */
static bool uvd_addr_ok(const struct uvd_client *c, uint64_t a, uint64_t len, uint64_t round)
{
	if (!len || a + len < a)
		return false;
	for (size_t i = 0; i < c->nmem; i++)
		for (uint32_t k = 0; k < c->mem[i].nseg; k++) {
			const struct shim_iova_seg *s = &c->mem[i].segs[k];
			uint64_t lo = s->iova / round * round;
			uint64_t hi = (s->iova + s->len + round - 1) / round * round;
			if (a >= lo && a + len <= hi)
				return true;
		}
	return false;
}

static uint64_t be64_at(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* The 8-byte page addresses after a command's fixed part, each naming a page of 2^(12+lps). */
static int uvd_check_pas(const struct uvd_client *c, const uint8_t *in, size_t inlen, size_t fixed,
			 unsigned lps, char *msg, size_t msglen)
{
	uint64_t page = 4096ull << lps;
	for (size_t o = fixed; o + 8 <= inlen; o += 8) {
		uint64_t a = be64_at(in + o);
		if (!uvd_addr_ok(c, a & ~(page - 1), page, page > 4096 ? page : 4096)) {
			snprintf(msg, msglen, "page address 0x%llx is not memory of this client",
				 (unsigned long long)a);
			return -EPERM;
		}
	}
	return 0;
}

#define DENY(...) do { snprintf(msg, msglen, __VA_ARGS__); return -EPERM; } while (0)
#define NEED(sz) do { if (inlen < (sz)) { snprintf(msg, msglen, "command too short (%zu bytes)", inlen); \
			return -EINVAL; } } while (0)
#define OWN(t, n, what) do { uint32_t n_ = (uint32_t)(n); if (!uvd_owns(c, (t), n_)) \
			DENY("%s 0x%x is not this client's", (what), n_); } while (0)

/* The commands that name one of the client's objects by number and make, use or end
 * it, with where the number sits (off, width: bits in the input, in the output for
 * UVD_MAKES) and how long the input must be to hold it.  uvd_policy_check lets a
 * UVD_USES or UVD_ENDS command through only for the client's own object;
 * uvd_policy_done records what a UVD_MAKES command created and forgets what a
 * UVD_ENDS command ended. */
enum uvd_role { UVD_MAKES, UVD_USES, UVD_ENDS };
struct uvd_obj_cmd {
	uint16_t op;
	uint8_t type;             /* enum uvd_obj_type */
	uint8_t role;             /* enum uvd_role */
	uint32_t inlen;
	uint32_t off, width;
	const char *what;
};
#define UVD_OBJ_CMD(op, type, role, layout, field, what) \
	{ PRM_CMD_OP_##op, type, role, PRM_SIZE(layout), PRM_OFF(layout, field), PRM_WIDTH(layout, field), what }
static const struct uvd_obj_cmd uvd_obj_cmds[] = {
	UVD_OBJ_CMD(ALLOC_UAR, UVD_UAR, UVD_MAKES, alloc_uar_out, uar, "UAR page"),
	UVD_OBJ_CMD(DEALLOC_UAR, UVD_UAR, UVD_ENDS, dealloc_uar_in, uar, "UAR page"),
	UVD_OBJ_CMD(ALLOC_PD, UVD_PD, UVD_MAKES, alloc_pd_out, pd, "PD"),
	UVD_OBJ_CMD(DEALLOC_PD, UVD_PD, UVD_ENDS, dealloc_pd_in, pd, "PD"),
	UVD_OBJ_CMD(ALLOC_Q_COUNTER, UVD_QCNT, UVD_MAKES, alloc_q_counter_out, counter_set_id, "counter set"),
	UVD_OBJ_CMD(DEALLOC_Q_COUNTER, UVD_QCNT, UVD_ENDS, dealloc_q_counter_in, counter_set_id, "counter set"),
	UVD_OBJ_CMD(QUERY_Q_COUNTER, UVD_QCNT, UVD_USES, query_q_counter_in, counter_set_id, "counter set"),
	UVD_OBJ_CMD(CREATE_MKEY, UVD_MKEY, UVD_MAKES, create_mkey_out, mkey_index, "MKey"),
	UVD_OBJ_CMD(DESTROY_MKEY, UVD_MKEY, UVD_ENDS, destroy_mkey_in, mkey_index, "MKey"),
	UVD_OBJ_CMD(QUERY_MKEY, UVD_MKEY, UVD_USES, destroy_mkey_in, mkey_index, "MKey"),
	UVD_OBJ_CMD(CREATE_CQ, UVD_CQ, UVD_MAKES, create_cq_out, cqn, "CQ"),
	UVD_OBJ_CMD(DESTROY_CQ, UVD_CQ, UVD_ENDS, destroy_cq_in, cqn, "CQ"),
	UVD_OBJ_CMD(QUERY_CQ, UVD_CQ, UVD_USES, destroy_cq_in, cqn, "CQ"),
	UVD_OBJ_CMD(CREATE_QP, UVD_QP, UVD_MAKES, create_qp_out, qpn, "QP"),
	UVD_OBJ_CMD(DESTROY_QP, UVD_QP, UVD_ENDS, destroy_qp_in, qpn, "QP"),
	UVD_OBJ_CMD(QUERY_QP, UVD_QP, UVD_USES, destroy_qp_in, qpn, "QP"),
	UVD_OBJ_CMD(2ERR_QP, UVD_QP, UVD_USES, destroy_qp_in, qpn, "QP"),
	UVD_OBJ_CMD(2RST_QP, UVD_QP, UVD_USES, destroy_qp_in, qpn, "QP"),
	UVD_OBJ_CMD(CREATE_SRQ, UVD_SRQ, UVD_MAKES, create_srq_out, srqn, "SRQ"),
	UVD_OBJ_CMD(DESTROY_SRQ, UVD_SRQ, UVD_ENDS, destroy_srq_in, srqn, "SRQ"),
	UVD_OBJ_CMD(QUERY_SRQ, UVD_SRQ, UVD_USES, destroy_srq_in, srqn, "SRQ"),
	/* the SRQ of a function at ISSI 1 (hw/mlx5/srq.c): an RMP; MODIFY_RMP arms its
	 * limit, nothing else (the device refuses any other bitmask bit) */
	UVD_OBJ_CMD(CREATE_RMP, UVD_SRQ, UVD_MAKES, create_rmp_out, rmpn, "SRQ"),
	UVD_OBJ_CMD(DESTROY_RMP, UVD_SRQ, UVD_ENDS, destroy_rmp_in, rmpn, "SRQ"),
	UVD_OBJ_CMD(QUERY_RMP, UVD_SRQ, UVD_USES, query_rmp_in, rmpn, "SRQ"),
	UVD_OBJ_CMD(MODIFY_RMP, UVD_SRQ, UVD_USES, modify_rmp_in, rmpn, "SRQ"),
	/* a multicast group's member QP (PRM "ATTACH_TO_MCG", "DETACH_FROM_MCG"): the
	 * group is the port's, shared by every client; the QP must be the client's.  Each
	 * attachment is remembered (uvd_mcg_done) and detached when the client dies,
	 * before its QPs are destroyed (client.c uvd_detach_all). */
	UVD_OBJ_CMD(ATTACH_TO_MCG, UVD_QP, UVD_USES, attach_to_mcg_in, qpn, "QP"),
	UVD_OBJ_CMD(DETACH_FROM_MCG, UVD_QP, UVD_USES, detach_from_mcg_in, qpn, "QP"),
};

/* The row for opcode op that names its object in the input (UVD_USES, UVD_ENDS) or
 * in the output (UVD_MAKES), or NULL. */
static const struct uvd_obj_cmd *uvd_obj_cmd_find(uint16_t op, bool in_output)
{
	for (size_t i = 0; i < sizeof(uvd_obj_cmds) / sizeof(uvd_obj_cmds[0]); i++)
		if (uvd_obj_cmds[i].op == op && (uvd_obj_cmds[i].role == UVD_MAKES) == in_output)
			return &uvd_obj_cmds[i];
	return NULL;
}

/* opt_param_mask bits of a QP transition that name another object (PRM "Optional
 * Parameter Mask"; Linux MLX5_QP_OPTPAR_SRQN, MLX5_QP_OPTPAR_CQN_RCV): firmware takes
 * qpc.srqn_rmpn_xrqn and qpc.cqn_rcv from any transition that sets them, RTS2RTS
 * included (hw/emu/cmd_qp.c take_optional). */
enum { UVD_OPT_SRQN = 1u << 18, UVD_OPT_CQN_RCV = 1u << 19 };

/* Every object number a QP context names, for CREATE_QP (create) and for each
 * transition that carries a qpc (opt: its opt_param_mask).  A transition's field is
 * checked when its mask bit is set or when it is not zero, so a device that took the
 * field unmasked would still get only this client's object. */
static int uvd_check_qpc(struct uvd_client *c, const uint8_t *qpc, bool create, uint32_t opt, char *msg,
			 size_t msglen)
{
	/* qpc.fre (PRM "QP Context": fast registration enabled) lets a QP post UMR and
	 * fast-registration WQEs, which change MKeys the device does not check against
	 * this client (Linux sets it for kernel QPs only, drivers/infiniband/hw/mlx5/qp.c
	 * create_kernel_qp). */
	if (PRM_GET(qpc, qpc, fre))
		DENY("qpc.fre (UMR and fast registration) is not offered to clients of the daemon");
	/* qpc.rlky (PRM "QP Context": reserved lkey enable) lets the QP's WQEs use the
	 * reserved lkey, which reaches every address of the function -- the daemon's whole
	 * IOVA space, every client's memory (Linux sets it for kernel QPs only). */
	if (PRM_GET(qpc, qpc, rlky))
		DENY("qpc.rlky (the reserved lkey) is not offered to clients of the daemon");
	uint32_t cs = (uint32_t)PRM_GET(qpc, qpc, counter_set_id);
	if (cs && !uvd_owns(c, UVD_QCNT, cs))
		DENY("counter set %u is not this client's", cs);
	if (!create) {
		if (PRM_GET(qpc, qpc, pd))
			OWN(UVD_PD, PRM_GET(qpc, qpc, pd), "PD");
		if (PRM_GET(qpc, qpc, uar_page))
			OWN(UVD_UAR, PRM_GET(qpc, qpc, uar_page), "UAR page");
		if (PRM_GET(qpc, qpc, cqn_snd))
			OWN(UVD_CQ, PRM_GET(qpc, qpc, cqn_snd), "send CQ");
		if ((opt & UVD_OPT_CQN_RCV) || PRM_GET(qpc, qpc, cqn_rcv))
			OWN(UVD_CQ, PRM_GET(qpc, qpc, cqn_rcv), "receive CQ");
		if ((opt & UVD_OPT_SRQN) || PRM_GET(qpc, qpc, srqn_rmpn_xrqn))
			OWN(UVD_SRQ, PRM_GET(qpc, qpc, srqn_rmpn_xrqn), "SRQ");
		return 0;
	}
	OWN(UVD_PD, PRM_GET(qpc, qpc, pd), "PD");
	OWN(UVD_UAR, PRM_GET(qpc, qpc, uar_page), "UAR page");
	if (PRM_GET(qpc, qpc, cqn_snd))
		OWN(UVD_CQ, PRM_GET(qpc, qpc, cqn_snd), "send CQ");
	if (PRM_GET(qpc, qpc, cqn_rcv))
		OWN(UVD_CQ, PRM_GET(qpc, qpc, cqn_rcv), "receive CQ");
	/* an SRQ named by any rq_type is checked, not only rq_type SRQ */
	if (PRM_GET(qpc, qpc, rq_type) == UVD_RQ_SRQ || PRM_GET(qpc, qpc, srqn_rmpn_xrqn))
		OWN(UVD_SRQ, PRM_GET(qpc, qpc, srqn_rmpn_xrqn), "SRQ");
	if (!uvd_addr_ok(c, PRM_GET(qpc, qpc, dbr_addr), 64, 4096))
		DENY("doorbell record 0x%llx is not memory of this client",
		     (unsigned long long)PRM_GET(qpc, qpc, dbr_addr));
	return 0;
}

/* One more object of type t for this client's process, within its quota (struct
 * uvd_limits): the count is of every connection of the same pid (the device lock held,
 * under which the client list and the counts change), so that more connections (-C)
 * bring no more objects.  0, or -EDQUOT with the limit and the flag that raises it in
 * msg.  UAR pages have their own bound (UVD_MAX_UARS), per connection. */
static int uvd_quota_obj(const struct uvd_client *c, enum uvd_obj_type t, const char *what, char *msg, size_t msglen)
{
	const struct uvd_limits *l = &c->srv->lim;
	unsigned max = t == UVD_QCNT ? l->qcnt : t == UVD_UAR ? UVD_MAX_UARS : l->objs;
	unsigned have = c->nobj_type[t];
	for (const struct uvd_client *o = c->srv->clients; t != UVD_UAR && o; o = o->next)
		if (o != c && o->pid == c->pid)
			have += o->nobj_type[t];
	if (max && have >= max) {
		snprintf(msg, msglen, "quota: this client's process holds %u of %u %s objects allowed (uvd %s)", have,
			 max, what, t == UVD_QCNT ? "-q" : t == UVD_UAR ? "fixed" : "-o");
		return -EDQUOT;
	}
	return 0;
}

int uvd_policy_check(struct uvd_client *c, const uint8_t *in, size_t inlen, char *msg, size_t msglen,
		     bool *gid_noop)
{
	*gid_noop = false;
	msg[0] = '\0';
	NEED(8);
	uint16_t op = (uint16_t)PRM_GET(create_qp_in, in, opcode);
	uint16_t op_mod = (uint16_t)PRM_GET(create_qp_in, in, op_mod);
	if (PRM_GET(create_qp_in, in, uid))
		DENY("a non-zero uid is not offered");
	const struct uvd_obj_cmd *mk = uvd_obj_cmd_find(op, true);
	if (mk) {
		int rc = uvd_quota_obj(c, (enum uvd_obj_type)mk->type, mk->what, msg, msglen);
		if (rc)
			return rc;
	}
	/* each attachment is remembered until detached (uvd_policy_done): as many as the
	 * client may hold objects of a kind (-o) */
	if (op == PRM_CMD_OP_ATTACH_TO_MCG && c->srv->lim.objs && c->nmcg >= c->srv->lim.objs) {
		snprintf(msg, msglen, "quota: this client holds %zu multicast attachments of %u allowed (uvd -o)",
			 c->nmcg, c->srv->lim.objs);
		return -EDQUOT;
	}
	const struct uvd_obj_cmd *oc = uvd_obj_cmd_find(op, false);
	if (oc) {
		NEED(oc->inlen);
		OWN(oc->type, prm_bits_get(in, oc->off, oc->width), oc->what);
		return 0;
	}
	switch (op) {
	/* reading the function: harmless */
	case PRM_CMD_OP_QUERY_HCA_CAP:
	case PRM_CMD_OP_QUERY_ADAPTER:
	case PRM_CMD_OP_QUERY_ISSI:
	case PRM_CMD_OP_QUERY_VPORT_STATE:
	case PRM_CMD_OP_QUERY_NIC_VPORT_CONTEXT:
	case PRM_CMD_OP_QUERY_ROCE_ADDRESS:
		return 0;
	case PRM_CMD_OP_ACCESS_REG:
		/* access_register_in op_mod: 0 write, 1 read (PRM "ACCESS_REG") */
		if (op_mod != 1)
			DENY("ACCESS_REG writes belong to the device daemon");
		return 0;
	case PRM_CMD_OP_SET_ROCE_ADDRESS:
		/* answered in client.c: only the entry the daemon already has */
		*gid_noop = true;
		return 0;
	case PRM_CMD_OP_ALLOC_UAR:
		if (c->nuar >= UVD_MAX_UARS)
			DENY("at most %u UAR pages per client", UVD_MAX_UARS);
		return 0;
	case PRM_CMD_OP_ALLOC_PD:
	case PRM_CMD_OP_ALLOC_Q_COUNTER:
		return 0;
	case PRM_CMD_OP_CREATE_MKEY: {
		NEED(PRM_SIZE(create_mkey_in));
		const uint8_t *mkc = PRM_ADDR(create_mkey_in, in, memory_key_mkey_entry);
		OWN(UVD_PD, PRM_GET(mkc, mkc, pd), "PD");
		/* mkc.qpn: 0xffffff, or the QP a memory window is bound to (PRM "MKey
		 * Context"; Linux mlx5_ib sets 0xffffff for every MKey it creates, mr.c) */
		if ((uint32_t)PRM_GET(mkc, mkc, qpn) != 0xffffff)
			OWN(UVD_QP, PRM_GET(mkc, mkc, qpn), "QP the MKey is bound to");
		/* An MKey with mkc.umr_en (PRM "MKey Context") can be changed by a UMR WQE
		 * that names it, from any QP the device lets post UMR.  The daemon never sees
		 * data-path WQEs, so it could not keep another client from changing this
		 * one's rights or PD: no client MKey takes UMR (ibv_rereg_mr re-registers,
		 * uverbs/mr.c). */
		/* mkc.length64 (PRM "MKey Context"): a 2^64-byte MKey, ignoring len -- the
		 * MTT check below bounds len only */
		if (PRM_GET(mkc, mkc, length64))
			DENY("mkc.length64 (an MKey of 2^64 bytes) is not offered to clients of the daemon");
		if (PRM_GET(mkc, mkc, umr_en))
			DENY("mkc.umr_en (changes by UMR) is not offered to clients of the daemon");
		unsigned mode = (unsigned)PRM_GET(mkc, mkc, access_mode_1_0) |
				(unsigned)PRM_GET(mkc, mkc, access_mode_4_2) << 2;
		size_t fixed = PRM_SIZE(create_mkey_in);
		if (mode == UVD_MKC_MTT) {
			unsigned lps = (unsigned)PRM_GET(mkc, mkc, log_page_size);
			if (lps < 12 || lps > 40)
				DENY("MTT page size 2^%u is not offered", lps);
			/* The device reaches, through entry k, the part of page k that the
			 * region [start_addr, start_addr + len) covers: that part must lie in
			 * memory this client shared or pinned.  The list is padded with zero
			 * entries to whole octwords (translations_octword_size). */
			uint64_t P = 1ull << lps;
			uint64_t start = PRM_GET(mkc, mkc, start_addr), len = PRM_GET(mkc, mkc, len);
			uint64_t need = len ? ((start + len - 1) >> lps) - (start >> lps) + 1 : 0;
			size_t k = 0;
			for (size_t o = fixed; o + 8 <= inlen; o += 8, k++) {
				uint64_t a = be64_at(in + o) & ~(P - 1);
				if (k >= need && a == 0)
					continue;
				uint64_t lo = k == 0 ? start & (P - 1) : 0;
				uint64_t hi = k + 1 == need ? ((start + len - 1) & (P - 1)) + 1 : P;
				if (k >= need || !uvd_addr_ok(c, a + lo, hi - lo, 1))
					DENY("MTT entry 0x%llx is not memory of this client", (unsigned long long)a);
			}
			return 0;
		}
		if (mode == UVD_MKC_KLM) {
			for (size_t o = fixed; o + PRM_SIZE(klm) <= inlen; o += PRM_SIZE(klm))
				OWN(UVD_MKEY, PRM_GET(klm, in + o, mkey) >> 8, "MKey under the KLM list");
			return 0;
		}
		DENY("MKey access mode %u is not offered", mode);
	}
	case PRM_CMD_OP_CREATE_CQ: {
		NEED(PRM_SIZE(create_cq_in));
		const uint8_t *cqc = PRM_ADDR(create_cq_in, in, cq_context);
		if ((uint32_t)PRM_GET(cqc, cqc, c_eqn_or_apu_element) != c->srv->comp_eqn)
			DENY("EQ %u: completions go through the daemon's EQ %u",
			     (unsigned)PRM_GET(cqc, cqc, c_eqn_or_apu_element), c->srv->comp_eqn);
		OWN(UVD_UAR, PRM_GET(cqc, cqc, uar_page), "UAR page");
		if (!uvd_addr_ok(c, PRM_GET(cqc, cqc, dbr_addr), 64, 4096))
			DENY("doorbell record is not memory of this client");
		return uvd_check_pas(c, in, inlen, PRM_SIZE(create_cq_in),
				     (unsigned)PRM_GET(cqc, cqc, log_page_size), msg, msglen);
	}
	case PRM_CMD_OP_MODIFY_CQ:
		NEED(PRM_SIZE(modify_cq_in));
		OWN(UVD_CQ, PRM_GET(modify_cq_in, in, cqn), "CQ");
		if (inlen > PRM_SIZE(modify_cq_in))
			DENY("CQ resize is not offered through the daemon");
		return 0;
	case PRM_CMD_OP_CREATE_QP: {
		NEED(PRM_SIZE(create_qp_in));
		const uint8_t *qpc = PRM_ADDR(create_qp_in, in, qpc);
		int rc = uvd_check_qpc(c, qpc, true, 0, msg, msglen);
		if (rc)
			return rc;
		return uvd_check_pas(c, in, inlen, PRM_SIZE(create_qp_in),
				     (unsigned)PRM_GET(qpc, qpc, log_page_size), msg, msglen);
	}
	case PRM_CMD_OP_RST2INIT_QP:
	case PRM_CMD_OP_INIT2RTR_QP:
	case PRM_CMD_OP_RTR2RTS_QP:
	case PRM_CMD_OP_RTS2RTS_QP:
	case PRM_CMD_OP_INIT2INIT_QP:
	case PRM_CMD_OP_SQD_RTS_QP:
		NEED(PRM_SIZE(rst2init_qp_in));
		OWN(UVD_QP, PRM_GET(rst2init_qp_in, in, qpn), "QP");
		return uvd_check_qpc(c, PRM_ADDR(rst2init_qp_in, in, qpc), false,
				     (uint32_t)PRM_GET(rst2init_qp_in, in, opt_param_mask), msg, msglen);
	case PRM_CMD_OP_CREATE_SRQ: {
		NEED(PRM_SIZE(create_srq_in));
		const uint8_t *srqc = PRM_ADDR(create_srq_in, in, srq_context_entry);
		OWN(UVD_PD, PRM_GET(srqc, srqc, pd), "PD");
		/* srqc.rlky: the reserved lkey, as qpc.rlky (uvd_check_qpc) */
		if (PRM_GET(srqc, srqc, rlky))
			DENY("srqc.rlky (the reserved lkey) is not offered to clients of the daemon");
		if (PRM_GET(srqc, srqc, cqn))
			OWN(UVD_CQ, PRM_GET(srqc, srqc, cqn), "CQ");
		if (!uvd_addr_ok(c, PRM_GET(srqc, srqc, dbr_addr), 64, 4096))
			DENY("doorbell record is not memory of this client");
		return uvd_check_pas(c, in, inlen, PRM_SIZE(create_srq_in),
				     (unsigned)PRM_GET(srqc, srqc, log_page_size), msg, msglen);
	}
	case PRM_CMD_OP_CREATE_RMP: {
		NEED(PRM_SIZE(create_rmp_in));
		const uint8_t *wq = PRM_ADDR(rmpc, PRM_ADDR(create_rmp_in, in, ctx), wq);
		OWN(UVD_PD, PRM_GET(wq, wq, pd), "PD");
		/* rmpc and its wq carry no rlky (PRM "RMP Context", "WQ"; Linux mlx5_ifc.h
		 * mlx5_ifc_wq_bits): an RMP's receives use the lkeys its WQEs name. */
		if (!uvd_addr_ok(c, PRM_GET(wq, wq, dbr_addr), 64, 4096))
			DENY("doorbell record is not memory of this client");
		return uvd_check_pas(c, in, inlen, PRM_SIZE(create_rmp_in),
				     (unsigned)PRM_GET(wq, wq, log_wq_pg_sz), msg, msglen);
	}
	default:
		DENY("opcode 0x%x belongs to the device daemon, not to its clients", op);
	}
}

/* The client's attachment of qpn to gid, or c->nmcg. */
static size_t uvd_mcg_find(const struct uvd_client *c, uint32_t qpn, const uint8_t *gid)
{
	size_t i = 0;
	while (i < c->nmcg && (c->mcg[i].qpn != qpn || memcmp(c->mcg[i].gid, gid, 16)))
		i++;
	return i;
}

/* Multicast attachments as the device took them: attaching a QP already attached
 * changes nothing (hw/emu/cmd_mcg.c), a QP destroyed leaves its groups. */
static void uvd_mcg_done(struct uvd_client *c, uint16_t op, const uint8_t *in, size_t inlen)
{
	if (op == PRM_CMD_OP_DESTROY_QP) {
		uint32_t qpn = (uint32_t)PRM_GET(destroy_qp_in, in, qpn);
		for (size_t i = c->nmcg; i-- > 0;)
			if (c->mcg[i].qpn == qpn)
				c->mcg[i] = c->mcg[--c->nmcg];
		return;
	}
	if (inlen < PRM_SIZE(attach_to_mcg_in))
		return;
	/* attach_to_mcg_in and detach_from_mcg_in share their layout (qp.def) */
	uint32_t qpn = (uint32_t)PRM_GET(attach_to_mcg_in, in, qpn);
	const uint8_t *gid = PRM_ADDR(attach_to_mcg_in, in, multicast_gid);
	size_t i = uvd_mcg_find(c, qpn, gid);
	if (op == PRM_CMD_OP_DETACH_FROM_MCG && i < c->nmcg) {
		c->mcg[i] = c->mcg[--c->nmcg];
	} else if (op == PRM_CMD_OP_ATTACH_TO_MCG && i == c->nmcg) {
		struct uvd_mcg_att *m = uvd_grow(c->mcg, c->nmcg, &c->capmcg, sizeof(*m), 4);
		if (!m)
			return;   /* not remembered: its QP's destroy still leaves the group */
		c->mcg = m;
		m[c->nmcg].qpn = qpn;
		memcpy(m[c->nmcg].gid, gid, 16);
		c->nmcg++;
	}
}

void uvd_policy_done(struct uvd_client *c, const uint8_t *in, size_t inlen, const uint8_t *out,
		     size_t outlen)
{
	if (outlen < 16)
		return;
	uint16_t op = (uint16_t)PRM_GET(create_qp_in, in, opcode);
	if (op == PRM_CMD_OP_ATTACH_TO_MCG || op == PRM_CMD_OP_DETACH_FROM_MCG || op == PRM_CMD_OP_DESTROY_QP)
		uvd_mcg_done(c, op, in, inlen);
	const struct uvd_obj_cmd *made = uvd_obj_cmd_find(op, true), *named = uvd_obj_cmd_find(op, false);
	if (made)
		uvd_obj_add(c, made->type, (uint32_t)prm_bits_get(out, made->off, made->width));
	else if (named && named->role == UVD_ENDS)
		uvd_obj_del(c, named->type, (uint32_t)prm_bits_get(in, named->off, named->width));
}
