/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvd: UAR pages handed to clients in whole host pages.
 *
 * A process maps device memory in host pages, and a shim that lets a client map its
 * own UAR page (the kext's GRANT, hw/shim/kext_guest.h) grants one host page to one
 * process.  When a UAR page is smaller than a host page (4 KiB UAR pages, 16 KiB host
 * pages on Apple silicon), the UAR pages that share a host page -- a group -- must all
 * belong to one client, or the second client's grant is refused.  The firmware hands
 * out UAR indices one at a time, in its own order (ALLOC_UAR, PRM "UAR"), so the
 * daemon keeps the ones it took in a pool until it holds every index of a group, and
 * gives a client whole groups: the client uses one index of its group per ALLOC_UAR and
 * the others stay its spares; a group goes back to the firmware when none of its
 * indices is in use.  The arithmetic here is plain data, tested on its own
 * (tests/uvd/test_uar_group.c); tools/uvd/uar.c drives the device with it.
 */
#ifndef UVERBS_TOOLS_UVD_UAR_GROUP_H
#define UVERBS_TOOLS_UVD_UAR_GROUP_H

#include <stddef.h>
#include <stdint.h>

/* At most this many UAR pages in one host page (a 256 KiB host page of 4 KiB UARs). */
#define UVD_UAR_GROUP_MAX 64u

struct uvd_uar_grp {
	uint32_t first;     /* the group's first UAR index: a multiple of the group size */
	uint64_t mask;      /* pool: indices the daemon holds; client: indices in use */
	uint64_t gone;      /* client: indices the firmware took back already (DEALLOC_UAR
			     * done while another of the group was refused): never handed out */
};

/* Groups of per_group UAR indices: the daemon's pool (indices it took from the firmware
 * and gave to no client: uvd_uar_pool_*) or one client's set (uvd_uar_set_*). */
struct uvd_uar_groups {
	unsigned per_group;
	struct uvd_uar_grp *g;
	size_t n, cap;
};

/* UAR pages per host page: host_page / uar_page, or 1 when the UAR page is a host page
 * or larger.  -EINVAL for sizes that are not powers of two, or more than
 * UVD_UAR_GROUP_MAX UAR pages in one host page. */
int uvd_uar_group_size(uint64_t host_page, uint64_t uar_page, unsigned *out);

/* Empty, for groups of per_group (0: 1); fini frees and leaves it empty and usable. */
void uvd_uar_groups_init(struct uvd_uar_groups *p, unsigned per_group);
void uvd_uar_groups_fini(struct uvd_uar_groups *p);

/* A UAR index the firmware just gave the daemon.  0, -EEXIST (already held), -ENOMEM. */
int uvd_uar_pool_add(struct uvd_uar_groups *p, uint32_t uar);
/* Take a whole group out of the pool (the daemon holds every index in it): its first
 * index in *first.  0, or -ENOENT when no group is whole. */
int uvd_uar_pool_take(struct uvd_uar_groups *p, uint32_t *first);
/* Indices the pool holds (tests, logs). */
size_t uvd_uar_pool_count(const struct uvd_uar_groups *p);

/* A whole group given to the client, none of it in use.  0, -EINVAL (not a group's
 * first index), -EEXIST, -ENOMEM. */
int uvd_uar_set_add(struct uvd_uar_groups *s, uint32_t first);
/* One index of the client's groups not in use, now in use (the lowest).  0 or -ENOENT. */
int uvd_uar_set_get(struct uvd_uar_groups *s, uint32_t *uar);
/* The client no longer uses uar.  1 when its group is now wholly unused: the group is
 * removed from the set and its first index is in *first (the caller frees the group);
 * 0 when the group still has indices in use; -ENOENT when uar is not in use by it. */
int uvd_uar_set_put(struct uvd_uar_groups *s, uint32_t uar, uint32_t *first);
/* The client's group holding uar (in use or spare), or NULL. */
struct uvd_uar_grp *uvd_uar_set_group(const struct uvd_uar_groups *s, uint32_t uar);

#endif
