/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The daemon's side of a function shared by the owner's consent (the kext, ABI 1.1;
 * hw/shim/kext_guest.h): each client's UAR pages are granted to its process, which may
 * then map them itself, and its registered memory is wired by the kext in its own task
 * (PIN_FOR) instead of being reached through the emulator's remote copies.  On a shim
 * without these ops (emu, vfio) nothing here runs: stores go through the daemon and
 * registration is decided in client.c (docs/architecture.md, "Several processes"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/uvd/uvd.h"

/* The host page holding UAR page `uar` (BAR0 offset uar * uar_page_bytes, PRM "UAR").
 * uar.c gives a client whole host pages of UAR pages, so no other client's UAR page
 * lies in it: one grant per group, made when the group is given and revoked when it
 * goes back to the firmware or the client dies. */
static uint64_t uvd_uar_host_off(const struct uvd_client *c, uint32_t uar)
{
	uint64_t page = c->srv->host_page;
	return ((uint64_t)uar * c->srv->uar_page_bytes) & ~(page - 1);
}

int uvd_share_uar(struct uvd_client *c, uint32_t uar, bool grant)
{
	struct shim_dev *shim = c->srv->shim;
	if (!shim->ops->share_uar)
		return -EOPNOTSUPP;
	if (!grant && c->uar_revoked)
		return 0;
	uint64_t off = uvd_uar_host_off(c, uar);
	int rc = shim->ops->share_uar(shim, (int32_t)c->pid, off, grant ? 1 : 0);
	/* A refused grant leaves the client on stores through the daemon, which still work. */
	if (rc && c->srv->verbose)
		uvd_log("client %u: %s UAR page 0x%x (BAR0 0x%llx) for pid %d: %s", c->id,
			grant ? "granting" : "revoking", uar, (unsigned long long)off, (int)c->pid, shim->err);
	return rc;
}

uint32_t uvd_share_kext_fn(const struct shim_dev *shim, const char *uri)
{
	if (!shim->ops->share_uar || strncmp(uri, "kext:", 5) != 0)
		return 0;
	char *end;
	unsigned long n = uri[5] ? strtoul(uri + 5, &end, 10) : 0;
	if (uri[5] && (*end || uri[5] < '0' || uri[5] > '9' || n > 255))
		return 0;
	return (uint32_t)n + 1u;
}

int uvd_pin_for(struct uvd_client *c, const struct uvd_pin *q, struct uvd_mem **out, char *msg, size_t msglen)
{
	struct shim_dev *shim = c->srv->shim;
	if (!q->len || q->va + q->len < q->va || q->len > (1ull << 40)) {
		snprintf(msg, msglen, "pin: bad range");
		return -EINVAL;
	}
	struct uvd_mem *m = uvd_mem_new(c);
	if (!m)
		return -ENOMEM;
	int rc = shim->ops->pin_for(shim, (int32_t)c->pid, q->va, (size_t)q->len, &m->pin);
	if (rc) {
		/* pin_for ran without the device lock (uvd_pin): shim->err is copied under it,
		 * so no locked request rewrites it meanwhile.  Another client's pin_for,
		 * unlocked too, still can: the detail may then be that one's (the errno is
		 * ours); a per-call message needs the backend's pin_for to return one. */
		char why[sizeof(shim->err)];
		uvd_lock(c->srv);
		memcpy(why, shim->err, sizeof(why));
		uvd_unlock(c->srv);
		why[sizeof(why) - 1] = 0;
		snprintf(msg, msglen, "pin: 0x%llx+%llu of process %d: %s (the client must have opened the "
			 "device as a guest)", (unsigned long long)q->va, (unsigned long long)q->len, (int)c->pid,
			 why[0] ? why : strerror(-rc));
		return rc;
	}
	if (m->pin.nseg > UVD_MAX_SEGS) {
		shim_dma_unpin(shim, &m->pin);
		snprintf(msg, msglen, "pin: %u segments, at most %u per region", m->pin.nseg, UVD_MAX_SEGS);
		return -E2BIG;
	}
	m->pinned_for = true;
	m->segs = m->pin.seg;
	m->nseg = m->pin.nseg;
	__atomic_store_n(&c->nmem, c->nmem + 1, __ATOMIC_RELAXED);   /* read by uvd_quota_take */
	*out = m;
	return 0;
}
