/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvd: UAR pages grouped by host page (tools/uvd/uar_group.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/uvd/uar_group.h"

static int uvd_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

int uvd_uar_group_size(uint64_t host_page, uint64_t uar_page, unsigned *out)
{
	if (!out || !uvd_pow2(host_page) || !uvd_pow2(uar_page))
		return -EINVAL;
	uint64_t n = host_page > uar_page ? host_page / uar_page : 1;
	if (n > UVD_UAR_GROUP_MAX)
		return -EINVAL;
	*out = (unsigned)n;
	return 0;
}

static uint64_t uvd_full(unsigned per_group)
{
	return per_group >= 64 ? ~0ull : (1ull << per_group) - 1;
}

/* The entry for the group of uar in arr[0..n), or NULL. */
static struct uvd_uar_grp *uvd_grp_find(struct uvd_uar_grp *arr, size_t n, unsigned per_group, uint32_t uar)
{
	uint32_t first = uar / per_group * per_group;
	for (size_t i = 0; i < n; i++)
		if (arr[i].first == first)
			return &arr[i];
	return NULL;
}

/* A new entry at the end of *arr (n used of *cap), zeroed; NULL when out of memory. */
static struct uvd_uar_grp *uvd_grp_new(struct uvd_uar_grp **arr, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct uvd_uar_grp *g = realloc(*arr, ncap * sizeof(*g));
		if (!g)
			return NULL;
		*arr = g;
		*cap = ncap;
	}
	struct uvd_uar_grp *e = &(*arr)[(*n)++];
	memset(e, 0, sizeof(*e));
	return e;
}

static void uvd_grp_del(struct uvd_uar_grp *arr, size_t *n, struct uvd_uar_grp *e)
{
	*e = arr[--*n];
}

void uvd_uar_groups_init(struct uvd_uar_groups *p, unsigned per_group)
{
	memset(p, 0, sizeof(*p));
	p->per_group = per_group ? per_group : 1;
}

void uvd_uar_groups_fini(struct uvd_uar_groups *p)
{
	free(p->g);
	uvd_uar_groups_init(p, p->per_group);   /* empty, and still safe to use */
}

int uvd_uar_pool_add(struct uvd_uar_groups *p, uint32_t uar)
{
	struct uvd_uar_grp *e = uvd_grp_find(p->g, p->n, p->per_group, uar);
	uint64_t bit = 1ull << (uar % p->per_group);
	if (e && (e->mask & bit))
		return -EEXIST;
	if (!e) {
		e = uvd_grp_new(&p->g, &p->n, &p->cap);
		if (!e)
			return -ENOMEM;
		e->first = uar / p->per_group * p->per_group;
	}
	e->mask |= bit;
	return 0;
}

int uvd_uar_pool_take(struct uvd_uar_groups *p, uint32_t *first)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->g[i].mask == uvd_full(p->per_group)) {
			*first = p->g[i].first;
			uvd_grp_del(p->g, &p->n, &p->g[i]);
			return 0;
		}
	return -ENOENT;
}

size_t uvd_uar_pool_count(const struct uvd_uar_groups *p)
{
	size_t k = 0;
	for (size_t i = 0; i < p->n; i++)
		k += (size_t)__builtin_popcountll(p->g[i].mask);
	return k;
}

int uvd_uar_set_add(struct uvd_uar_groups *s, uint32_t first)
{
	if (first % s->per_group)
		return -EINVAL;
	if (uvd_grp_find(s->g, s->n, s->per_group, first))
		return -EEXIST;
	struct uvd_uar_grp *e = uvd_grp_new(&s->g, &s->n, &s->cap);
	if (!e)
		return -ENOMEM;
	e->first = first;
	return 0;
}

int uvd_uar_set_get(struct uvd_uar_groups *s, uint32_t *uar)
{
	uint64_t full = uvd_full(s->per_group);
	struct uvd_uar_grp *best = NULL;
	unsigned best_k = 0;
	for (size_t i = 0; i < s->n; i++) {
		uint64_t free_bits = ~(s->g[i].mask | s->g[i].gone) & full;
		if (!free_bits)
			continue;
		unsigned k = (unsigned)__builtin_ctzll(free_bits);
		if (!best || s->g[i].first + k < best->first + best_k) {
			best = &s->g[i];
			best_k = k;
		}
	}
	if (!best)
		return -ENOENT;
	best->mask |= 1ull << best_k;
	*uar = best->first + best_k;
	return 0;
}

int uvd_uar_set_put(struct uvd_uar_groups *s, uint32_t uar, uint32_t *first)
{
	struct uvd_uar_grp *e = uvd_grp_find(s->g, s->n, s->per_group, uar);
	uint64_t bit = 1ull << (uar % s->per_group);
	if (!e || !(e->mask & bit))
		return -ENOENT;
	e->mask &= ~bit;
	if (e->mask)
		return 0;
	*first = e->first;
	uvd_grp_del(s->g, &s->n, e);
	return 1;
}

struct uvd_uar_grp *uvd_uar_set_group(const struct uvd_uar_groups *s, uint32_t uar)
{
	return uvd_grp_find(s->g, s->n, s->per_group, uar);
}
