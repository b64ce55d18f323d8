/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvd: a client's ALLOC_UAR and DEALLOC_UAR, answered from whole host pages of UAR
 * pages (tools/uvd/uar_group.h).  The daemon takes UAR pages from the firmware until it
 * holds every UAR page of one host page, gives that group to the client, and answers
 * the client's ALLOC_UAR with one index of it; the group's other indices wait for the
 * same client's next ALLOC_UAR.  A group goes back to the firmware when the client
 * uses none of it, or when the client goes.  On a shim that lets a client map its own
 * UAR page (share.c), the whole host page is granted to the client with the group and
 * revoked with it.  Everything here runs under the device lock. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "hw/mlx5/mx5.h"
#include "tools/uvd/uvd.h"
#include "uverbs/uv.h"

/* Bound on firmware allocations for one whole group: a group of n indices needs at
 * most 2n - 1 when the firmware counts up, and indices it holds elsewhere (the
 * daemon's own UAR page) can spoil a group or two. */
#define UVD_UAR_TRIES(n) (4u * (n) + 4u)

static int uvd_fw_alloc_uar(struct uvd_server *srv, uint32_t *uar)
{
	uint8_t in[PRM_SIZE(alloc_uar_in)] = { 0 }, out[PRM_SIZE(alloc_uar_out)] = { 0 };
	PRM_SET(alloc_uar_in, in, opcode, PRM_CMD_OP_ALLOC_UAR);
	int rc = mx5_cmd(srv->dev->mx5, in, sizeof(in), out, sizeof(out));
	if (rc == 0)
		*uar = (uint32_t)PRM_GET(alloc_uar_out, out, uar);
	return rc;
}

static int uvd_fw_dealloc_uar(struct uvd_server *srv, uint32_t uar)
{
	uint8_t in[PRM_SIZE(dealloc_uar_in)] = { 0 }, out[PRM_SIZE(dealloc_uar_out)];
	PRM_SET(dealloc_uar_in, in, opcode, PRM_CMD_OP_DEALLOC_UAR);
	PRM_SET(dealloc_uar_in, in, uar, uar);
	int rc = mx5_cmd(srv->dev->mx5, in, sizeof(in), out, sizeof(out));
	if (rc && srv->verbose)
		uvd_log("DEALLOC_UAR 0x%x: %s", uar, mx5_device_error(srv->dev->mx5));
	return rc;
}

/* The client's group goes back to the firmware, page by page: the firmware decides
 * (DEALLOC_UAR fails while a CQ, QP or EQ still names the page, PRM "DEALLOC_UAR"), and
 * a page it refused stays the client's -- in its set, never in the pool, still granted
 * -- so that no other client is ever given a page the device still uses.  Pages the
 * firmware did take back are marked gone and never handed out again.  The grant is
 * revoked only when the firmware took every page back.  0, or the first refusal. */
static int uvd_uar_group_free(struct uvd_client *c, struct uvd_uar_grp *g, char *msg, size_t msglen)
{
	struct uvd_server *srv = c->srv;
	int first_rc = 0;
	for (unsigned k = 0; k < srv->uar_per_group; k++) {
		if (g->gone & (1ull << k))
			continue;
		int rc = uvd_fw_dealloc_uar(srv, g->first + k);
		if (rc == 0) {
			g->gone |= 1ull << k;
		} else if (!first_rc) {
			first_rc = rc;
			if (msg)
				snprintf(msg, msglen, "DEALLOC_UAR 0x%x: %s", g->first + k,
					 mx5_device_error(srv->dev->mx5));
		}
	}
	if (first_rc == 0)
		uvd_share_uar(c, g->first, false);
	return first_rc;
}

int uvd_uar_alloc(struct uvd_client *c, uint32_t *uar, bool *granted, char *msg, size_t msglen)
{
	struct uvd_server *srv = c->srv;
	*granted = false;
	if (uvd_uar_set_get(&c->uar_set, uar) == 0)
		return 0;
	uint32_t first;
	unsigned tries = 0;
	while (uvd_uar_pool_take(&srv->uar_pool, &first) != 0) {
		uint32_t u;
		if (tries++ >= UVD_UAR_TRIES(srv->uar_per_group)) {
			snprintf(msg, msglen, "ALLOC_UAR: no whole host page of %u UAR pages after %u from the firmware",
				 srv->uar_per_group, tries - 1);
			return -ENOSPC;
		}
		int rc = uvd_fw_alloc_uar(srv, &u);
		if (rc) {
			snprintf(msg, msglen, "%s", mx5_device_error(srv->dev->mx5));
			return rc;
		}
		rc = uvd_uar_pool_add(&srv->uar_pool, u);
		if (rc) {
			uvd_fw_dealloc_uar(srv, u);
			snprintf(msg, msglen, "ALLOC_UAR: index 0x%x: %s", u, strerror(-rc));
			return rc;
		}
	}
	int rc = uvd_uar_set_add(&c->uar_set, first);
	if (rc) {
		/* nothing names these pages yet: a refusal here leaks them, never reuses them */
		for (unsigned k = 0; k < srv->uar_per_group; k++)
			(void)uvd_fw_dealloc_uar(srv, first + k);
		return rc;
	}
	/* granted now: the client maps the page once, for this and the group's other
	 * UAR pages (hw/shim/uvd_guest.h) */
	bool shared = uvd_share_uar(c, first, true) == 0;
	rc = uvd_uar_set_get(&c->uar_set, uar);
	*granted = rc == 0 && shared;
	return rc;
}

int uvd_uar_dealloc(struct uvd_client *c, uint32_t uar, char *msg, size_t msglen)
{
	struct uvd_uar_grp *g = uvd_uar_set_group(&c->uar_set, uar);
	uint64_t bit = 1ull << (uar % c->uar_set.per_group);
	if (!g || !(g->mask & bit))
		return -ENOENT;
	if (g->mask == bit) {
		/* the group's last page in use: the firmware first, the daemon's books after */
		int rc = uvd_uar_group_free(c, g, msg, msglen);
		if (rc)
			return rc;
	}
	uint32_t first;
	int rc = uvd_uar_set_put(&c->uar_set, uar, &first);
	return rc < 0 ? rc : 0;
}

unsigned uvd_uar_release_one(struct uvd_client *c)
{
	/* the client's objects are gone: a page the firmware still refuses now is leaked
	 * (logged), never handed to another client */
	if (!c->uar_set.n) {
		uvd_uar_groups_fini(&c->uar_set);
		return 0;
	}
	struct uvd_uar_grp *g = &c->uar_set.g[c->uar_set.n - 1];
	if (uvd_uar_group_free(c, g, NULL, 0)) {
		uvd_share_uar(c, g->first, false);
		uvd_log("client %u: UAR pages of 0x%x kept by the firmware: leaked", c->id, g->first);
	}
	c->uar_set.n--;
	return c->srv->uar_per_group;
}
