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

bool uvd_owns(const struct uvd_client *c, enum uvd_obj_type t, uint32_t num)
{
	for (size_t i = 0; i < c->nobj; i++)
		if (c->objs[i].type == t && c->objs[i].num == num)
			return true;
	return false;
}

int uvd_obj_add(struct uvd_client *c, enum uvd_obj_type t, uint32_t num)
{
	if (c->nobj == c->capobj) {
		size_t cap = c->capobj ? c->capobj * 2 : 64;
		struct uvd_obj *o = realloc(c->objs, cap * sizeof(*o));
		if (!o)
			return -ENOMEM;
		c->objs = o;
		c->capobj = cap;
	}
	c->objs[c->nobj++] = (struct uvd_obj){ (uint8_t)t, num };
	if (t == UVD_UAR && c->nuar < UVD_MAX_UARS)
		c->uars[c->nuar++] = num;
	if (t == UVD_UAR)
		uvd_share_uar(c, num, true);
	return 0;
}

void uvd_obj_del(struct uvd_client *c, enum uvd_obj_type t, uint32_t num)
{
	for (size_t i = 0; i < c->nobj; i++)
		if (c->objs[i].type == t && c->objs[i].num == num) {
			c->objs[i] = c->objs[--c->nobj];
			break;
		}
	if (t == UVD_UAR)
		for (unsigned i = 0; i < c->nuar; i++)
			if (c->uars[i] == num) {
				c->uars[i] = c->uars[--c->nuar];
				uvd_share_uar(c, num, false);
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

static int uvd_check_qpc(struct uvd_client *c, const uint8_t *qpc, bool create, char *msg, size_t msglen)
{
	uint32_t cs = (uint32_t)PRM_GET(qpc, qpc, counter_set_id);
	if (cs && !uvd_owns(c, UVD_QCNT, cs))
		DENY("counter set %u is not this client's", cs);
	if (!create)
		return 0;
	OWN(UVD_PD, PRM_GET(qpc, qpc, pd), "PD");
	OWN(UVD_UAR, PRM_GET(qpc, qpc, uar_page), "UAR page");
	if (PRM_GET(qpc, qpc, cqn_snd))
		OWN(UVD_CQ, PRM_GET(qpc, qpc, cqn_snd), "send CQ");
	if (PRM_GET(qpc, qpc, cqn_rcv))
		OWN(UVD_CQ, PRM_GET(qpc, qpc, cqn_rcv), "receive CQ");
	if (PRM_GET(qpc, qpc, rq_type) == UVD_RQ_SRQ)
		OWN(UVD_SRQ, PRM_GET(qpc, qpc, srqn_rmpn_xrqn), "SRQ");
	if (!uvd_addr_ok(c, PRM_GET(qpc, qpc, dbr_addr), 64, 4096))
		DENY("doorbell record 0x%llx is not memory of this client",
		     (unsigned long long)PRM_GET(qpc, qpc, dbr_addr));
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
	case PRM_CMD_OP_DEALLOC_UAR:
		NEED(PRM_SIZE(dealloc_uar_in));
		OWN(UVD_UAR, PRM_GET(dealloc_uar_in, in, uar), "UAR page");
		return 0;
	case PRM_CMD_OP_DEALLOC_PD:
		NEED(PRM_SIZE(dealloc_pd_in));
		OWN(UVD_PD, PRM_GET(dealloc_pd_in, in, pd), "PD");
		return 0;
	case PRM_CMD_OP_DEALLOC_Q_COUNTER:
		NEED(PRM_SIZE(dealloc_q_counter_in));
		OWN(UVD_QCNT, PRM_GET(dealloc_q_counter_in, in, counter_set_id), "counter set");
		return 0;
	case PRM_CMD_OP_QUERY_Q_COUNTER:
		NEED(PRM_SIZE(query_q_counter_in));
		OWN(UVD_QCNT, PRM_GET(query_q_counter_in, in, counter_set_id), "counter set");
		return 0;
	case PRM_CMD_OP_CREATE_MKEY: {
		NEED(PRM_SIZE(create_mkey_in));
		const uint8_t *mkc = PRM_ADDR(create_mkey_in, in, memory_key_mkey_entry);
		OWN(UVD_PD, PRM_GET(mkc, mkc, pd), "PD");
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
	case PRM_CMD_OP_DESTROY_MKEY:
	case PRM_CMD_OP_QUERY_MKEY:
		NEED(PRM_SIZE(destroy_mkey_in));
		OWN(UVD_MKEY, PRM_GET(destroy_mkey_in, in, mkey_index), "MKey");
		return 0;
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
	case PRM_CMD_OP_DESTROY_CQ:
	case PRM_CMD_OP_QUERY_CQ:
		NEED(PRM_SIZE(destroy_cq_in));
		OWN(UVD_CQ, PRM_GET(destroy_cq_in, in, cqn), "CQ");
		return 0;
	case PRM_CMD_OP_MODIFY_CQ:
		NEED(PRM_SIZE(modify_cq_in));
		OWN(UVD_CQ, PRM_GET(modify_cq_in, in, cqn), "CQ");
		if (inlen > PRM_SIZE(modify_cq_in))
			DENY("CQ resize is not offered through the daemon");
		return 0;
	case PRM_CMD_OP_CREATE_QP: {
		NEED(PRM_SIZE(create_qp_in));
		const uint8_t *qpc = PRM_ADDR(create_qp_in, in, qpc);
		int rc = uvd_check_qpc(c, qpc, true, msg, msglen);
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
		return uvd_check_qpc(c, PRM_ADDR(rst2init_qp_in, in, qpc), false, msg, msglen);
	case PRM_CMD_OP_2ERR_QP:
	case PRM_CMD_OP_2RST_QP:
	case PRM_CMD_OP_DESTROY_QP:
	case PRM_CMD_OP_QUERY_QP:
		NEED(PRM_SIZE(destroy_qp_in));
		OWN(UVD_QP, PRM_GET(destroy_qp_in, in, qpn), "QP");
		return 0;
	case PRM_CMD_OP_CREATE_SRQ: {
		NEED(PRM_SIZE(create_srq_in));
		const uint8_t *srqc = PRM_ADDR(create_srq_in, in, srq_context_entry);
		OWN(UVD_PD, PRM_GET(srqc, srqc, pd), "PD");
		if (PRM_GET(srqc, srqc, cqn))
			OWN(UVD_CQ, PRM_GET(srqc, srqc, cqn), "CQ");
		if (!uvd_addr_ok(c, PRM_GET(srqc, srqc, dbr_addr), 64, 4096))
			DENY("doorbell record is not memory of this client");
		return uvd_check_pas(c, in, inlen, PRM_SIZE(create_srq_in),
				     (unsigned)PRM_GET(srqc, srqc, log_page_size), msg, msglen);
	}
	case PRM_CMD_OP_DESTROY_SRQ:
	case PRM_CMD_OP_QUERY_SRQ:
		NEED(PRM_SIZE(destroy_srq_in));
		OWN(UVD_SRQ, PRM_GET(destroy_srq_in, in, srqn), "SRQ");
		return 0;
	default:
		DENY("opcode 0x%x belongs to the device daemon, not to its clients", op);
	}
}

void uvd_policy_done(struct uvd_client *c, const uint8_t *in, size_t inlen, const uint8_t *out,
		     size_t outlen)
{
	(void)inlen;
	if (outlen < 16)
		return;
	switch ((uint16_t)PRM_GET(create_qp_in, in, opcode)) {
	case PRM_CMD_OP_ALLOC_UAR: uvd_obj_add(c, UVD_UAR, (uint32_t)PRM_GET(alloc_uar_out, out, uar)); break;
	case PRM_CMD_OP_ALLOC_PD: uvd_obj_add(c, UVD_PD, (uint32_t)PRM_GET(alloc_pd_out, out, pd)); break;
	case PRM_CMD_OP_ALLOC_Q_COUNTER:
		uvd_obj_add(c, UVD_QCNT, (uint32_t)PRM_GET(alloc_q_counter_out, out, counter_set_id));
		break;
	case PRM_CMD_OP_CREATE_MKEY:
		uvd_obj_add(c, UVD_MKEY, (uint32_t)PRM_GET(create_mkey_out, out, mkey_index));
		break;
	case PRM_CMD_OP_CREATE_CQ: uvd_obj_add(c, UVD_CQ, (uint32_t)PRM_GET(create_cq_out, out, cqn)); break;
	case PRM_CMD_OP_CREATE_QP: uvd_obj_add(c, UVD_QP, (uint32_t)PRM_GET(create_qp_out, out, qpn)); break;
	case PRM_CMD_OP_CREATE_SRQ: uvd_obj_add(c, UVD_SRQ, (uint32_t)PRM_GET(create_srq_out, out, srqn)); break;
	case PRM_CMD_OP_DEALLOC_UAR: uvd_obj_del(c, UVD_UAR, (uint32_t)PRM_GET(dealloc_uar_in, in, uar)); break;
	case PRM_CMD_OP_DEALLOC_PD: uvd_obj_del(c, UVD_PD, (uint32_t)PRM_GET(dealloc_pd_in, in, pd)); break;
	case PRM_CMD_OP_DEALLOC_Q_COUNTER:
		uvd_obj_del(c, UVD_QCNT, (uint32_t)PRM_GET(dealloc_q_counter_in, in, counter_set_id));
		break;
	case PRM_CMD_OP_DESTROY_MKEY:
		uvd_obj_del(c, UVD_MKEY, (uint32_t)PRM_GET(destroy_mkey_in, in, mkey_index));
		break;
	case PRM_CMD_OP_DESTROY_CQ: uvd_obj_del(c, UVD_CQ, (uint32_t)PRM_GET(destroy_cq_in, in, cqn)); break;
	case PRM_CMD_OP_DESTROY_QP: uvd_obj_del(c, UVD_QP, (uint32_t)PRM_GET(destroy_qp_in, in, qpn)); break;
	case PRM_CMD_OP_DESTROY_SRQ: uvd_obj_del(c, UVD_SRQ, (uint32_t)PRM_GET(destroy_srq_in, in, srqn)); break;
	default: break;
	}
}
