/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Small allocations every later object refers to (PRM "Command Reference"):
 * ALLOC_UAR/DEALLOC_UAR (the doorbell page: index × UAR page size into BAR0),
 * ALLOC_PD/DEALLOC_PD, ALLOC_TRANSPORT_DOMAIN/DEALLOC_TRANSPORT_DOMAIN,
 * ALLOC_XRCD/DEALLOC_XRCD (an XRC domain: a number XRC SRQs and QPs name; Linux's
 * mlx5_ib allocates two when the xrc capability is set, main.c create_dev_resources), and
 * QUERY_SPECIAL_CONTEXTS (the reserved memory keys).  A UAR an EQ uses, or a PD an
 * MKey/QP uses, is "in use" and cannot be freed (status 0x9). */
#include <errno.h>
#include <string.h>

#include "hw/emu/emu_dev.h"

struct emu_uar {
	uint32_t index;
};
/* A PD or a transport domain is only its number. */
struct emu_numbered {
	uint32_t n;
};

static int alloc_uar(struct emu_dev *d, struct emu_cmd *c)
{
	struct emu_uar *u;
	uint32_t id, idx;
	volatile uint8_t *page;

	u = emu_obj_alloc(d, EMU_OBJ_UAR, sizeof(*u), NULL, &id);
	if (!u)
		return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_LIMIT_EXCEEDED);
	idx = emu_uar_index_of(d, id);
	page = emu_uar_page(d, idx);
	if (!page || (uint64_t)(page - (volatile uint8_t *)d->bar) + emu_uar_page_size(d) > d->bar_len) {
		emu_obj_free(d, EMU_OBJ_UAR, id);
		return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_LIMIT_EXCEEDED);
	}
	/* A fresh doorbell page: no stale BlueFlame data from an earlier owner. */
	memset((uint8_t *)page, 0, emu_uar_page_size(d));
	u->index = idx;
	PRM_SET(alloc_uar_out, c->out, uar, idx);
	return 0;
}

static int dealloc_uar(struct emu_dev *d, struct emu_cmd *c)
{
	uint32_t idx = (uint32_t)PRM_GET(dealloc_uar_in, c->in, uar);
	void *u = emu_uar_obj(d, idx);

	/* Only the index ALLOC_UAR returned names the allocation (uar_4k: its first UAR). */
	if (!u || emu_uar_index_of(d, emu_obj_id(u)) != idx)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_UAR);
	return emu_cmd_free_obj(d, c, EMU_OBJ_UAR, emu_obj_id(u), PRM_SYND_BAD_UAR);
}

/* ALLOC_PD, ALLOC_TRANSPORT_DOMAIN: a new object of type t; its number goes to the
 * output field at out_bit_off (alloc_pd_out.pd, alloc_transport_domain_out.transport_domain). */
static int alloc_numbered(struct emu_dev *d, struct emu_cmd *c, enum emu_obj_type t, unsigned out_bit_off,
			  unsigned out_width)
{
	uint32_t n;
	struct emu_numbered *o = emu_obj_alloc(d, t, sizeof(*o), NULL, &n);

	if (!o)
		return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_LIMIT_EXCEEDED);
	o->n = n;
	prm_bits_set(c->out, out_bit_off, out_width, n);
	return 0;
}

static int alloc_pd(struct emu_dev *d, struct emu_cmd *c)
{
	return alloc_numbered(d, c, EMU_OBJ_PD, PRM_OFF(alloc_pd_out, pd), PRM_WIDTH(alloc_pd_out, pd));
}

static int dealloc_pd(struct emu_dev *d, struct emu_cmd *c)
{
	return emu_cmd_free_obj(d, c, EMU_OBJ_PD, (uint32_t)PRM_GET(dealloc_pd_in, c->in, pd), PRM_SYND_BAD_PD);
}

static int alloc_transport_domain(struct emu_dev *d, struct emu_cmd *c)
{
	return alloc_numbered(d, c, EMU_OBJ_TD, PRM_OFF(alloc_transport_domain_out, transport_domain),
			      PRM_WIDTH(alloc_transport_domain_out, transport_domain));
}

static int dealloc_transport_domain(struct emu_dev *d, struct emu_cmd *c)
{
	return emu_cmd_free_obj(d, c, EMU_OBJ_TD, (uint32_t)PRM_GET(dealloc_transport_domain_in, c->in, transport_domain),
				PRM_SYND_BAD_TD);
}

static int alloc_xrcd(struct emu_dev *d, struct emu_cmd *c)
{
	return alloc_numbered(d, c, EMU_OBJ_XRCD, PRM_OFF(alloc_xrcd_out, xrcd), PRM_WIDTH(alloc_xrcd_out, xrcd));
}

static int dealloc_xrcd(struct emu_dev *d, struct emu_cmd *c)
{
	return emu_cmd_free_obj(d, c, EMU_OBJ_XRCD, (uint32_t)PRM_GET(dealloc_xrcd_in, c->in, xrcd), PRM_SYND_BAD_XRCD);
}

static int query_special_contexts(struct emu_dev *d, struct emu_cmd *c)
{
	(void)d;
	PRM_SET(query_special_contexts_out, c->out, dump_fill_mkey, EMU_DUMP_FILL_MKEY);
	PRM_SET(query_special_contexts_out, c->out, resd_lkey, EMU_RESD_LKEY);
	PRM_SET(query_special_contexts_out, c->out, null_mkey, EMU_NULL_MKEY);
	PRM_SET(query_special_contexts_out, c->out, terminate_scatter_list_mkey, EMU_TERMINATE_SCATTER_MKEY);
	PRM_SET(query_special_contexts_out, c->out, repeated_mkey, EMU_REPEATED_MKEY);
	return 0;
}

static const struct emu_cmd_desc cmds[] = {
	EMU_CMDS_ALLOC(UAR, uar),
	EMU_CMDS_ALLOC(PD, pd),
	EMU_CMDS_ALLOC(TRANSPORT_DOMAIN, transport_domain),
	EMU_CMDS_ALLOC(XRCD, xrcd),
	EMU_CMD(QUERY_SPECIAL_CONTEXTS, EMU_CMDF_INIT, query_special_contexts_in, query_special_contexts_out,
		query_special_contexts),
};

const struct emu_cmd_area emu_area_uar_pd = { .name = "uar_pd", .cmds = cmds, .ncmds = EMU_NCMDS(cmds) };
