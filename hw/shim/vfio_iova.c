/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* First-fit IOVA allocator; the rules are in vfio_iova.h. */
#include "hw/shim/vfio_iova.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void shim_iova_init(struct shim_iova_space *s)
{
	memset(s, 0, sizeof(*s));
}

void shim_iova_fini(struct shim_iova_space *s)
{
	free(s->free);
	free(s->ranges);
	memset(s, 0, sizeof(*s));
}

static int reserve(struct shim_iova_extent **v, size_t *cap, size_t need)
{
	struct shim_iova_extent *n;
	size_t ncap;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	n = realloc(*v, ncap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	*v = n;
	*cap = ncap;
	return 0;
}

static void remove_at(struct shim_iova_extent *v, size_t *n, size_t at)
{
	memmove(&v[at], &v[at + 1], (*n - at - 1) * sizeof(*v));
	(*n)--;
}

/* Index of the first extent whose start is above x (binary search). */
static size_t upper_bound(const struct shim_iova_extent *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].start <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int overlaps(const struct shim_iova_extent *v, size_t n, uint64_t start, uint64_t last)
{
	size_t i = upper_bound(v, n, last); /* extents [0, i) start at or below last */

	return i > 0 && v[i - 1].last >= start;
}

/* Put [start, last] into a sorted extent list, coalescing with adjacent extents. The
 * caller has checked that it overlaps nothing and reserved room for one more entry, so
 * this cannot fail. */
static void ext_insert(struct shim_iova_extent *v, size_t *n, uint64_t start, uint64_t last)
{
	size_t i = upper_bound(v, *n, start);
	int merge_prev = i > 0 && v[i - 1].last != UINT64_MAX && v[i - 1].last + 1 == start;
	int merge_next = i < *n && last != UINT64_MAX && last + 1 == v[i].start;

	if (merge_prev && merge_next) {
		v[i - 1].last = v[i].last;
		remove_at(v, n, i);
	} else if (merge_prev) {
		v[i - 1].last = last;
	} else if (merge_next) {
		v[i].start = start;
	} else {
		memmove(&v[i + 1], &v[i], (*n - i) * sizeof(*v));
		v[i] = (struct shim_iova_extent){ .start = start, .last = last };
		(*n)++;
	}
}

int shim_iova_add_range(struct shim_iova_space *s, uint64_t start, uint64_t last)
{
	if (start > last || overlaps(s->ranges, s->nranges, start, last))
		return -EINVAL;
	if (reserve(&s->free, &s->capfree, s->nfree + 1) < 0 ||
	    reserve(&s->ranges, &s->capranges, s->nranges + 1) < 0)
		return -ENOMEM;
	/* Adjacent ranges merge, so that an allocation spanning both can be freed. */
	ext_insert(s->ranges, &s->nranges, start, last);
	ext_insert(s->free, &s->nfree, start, last);
	/* A range of the whole 64-bit space has 2^64 bytes: saturate the statistic. */
	if (last - start == UINT64_MAX || s->total + (last - start + 1) < s->total)
		s->total = UINT64_MAX;
	else
		s->total += last - start + 1;
	return 0;
}

/* Take [a, a+len) out of free extent i (which holds it); room for one more extent was
 * reserved by the caller. */
static void take_at(struct shim_iova_space *s, size_t i, uint64_t a, uint64_t len)
{
	struct shim_iova_extent e = s->free[i];
	uint64_t alast = a + (len - 1);

	if (a == e.start && alast == e.last) {
		remove_at(s->free, &s->nfree, i);
	} else if (a == e.start) {
		s->free[i].start = alast + 1;
	} else if (alast == e.last) {
		s->free[i].last = a - 1;
	} else {
		s->free[i].last = a - 1;
		/* room was reserved by the caller */
		memmove(&s->free[i + 2], &s->free[i + 1], (s->nfree - i - 1) * sizeof(*s->free));
		s->free[i + 1] = (struct shim_iova_extent){ .start = alast + 1, .last = e.last };
		s->nfree++;
	}
	s->used += len;
}

/* First fit of len bytes at an address a with a % mod == residue (mod a power of two,
 * residue < mod): alignment is residue 0. */
static int alloc_at_residue(struct shim_iova_space *s, uint64_t len, uint64_t mod, uint64_t residue,
			    uint64_t *iova)
{
	if (len == 0 || mod == 0 || (mod & (mod - 1)) != 0 || residue >= mod || !iova)
		return -EINVAL;
	/* The split may need one more extent: make room first so that a failed allocation
	 * of list memory cannot leave the space half-updated. */
	if (reserve(&s->free, &s->capfree, s->nfree + 1) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < s->nfree; i++) {
		struct shim_iova_extent e = s->free[i];
		uint64_t a = (e.start & ~(mod - 1)) + residue;

		if (a < e.start)
			a += mod;
		if (a < e.start || a > e.last)  /* wrapped past 2^64, or no such address */
			continue;
		if (e.last - a < len - 1)       /* fewer than len bytes from a to e.last */
			continue;
		take_at(s, i, a, len);
		*iova = a;
		return 0;
	}
	return -ENOSPC;
}

int shim_iova_alloc(struct shim_iova_space *s, uint64_t len, uint64_t align, uint64_t *iova)
{
	return alloc_at_residue(s, len, align ? align : 1, 0, iova);
}

int shim_iova_alloc_congruent(struct shim_iova_space *s, uint64_t len, uint64_t mod, uint64_t va,
			      uint64_t *iova)
{
	return alloc_at_residue(s, len, mod, mod ? va & (mod - 1) : 0, iova);
}

int shim_iova_free(struct shim_iova_space *s, uint64_t iova, uint64_t len)
{
	uint64_t last;
	size_t r;

	if (len == 0 || iova + (len - 1) < iova)
		return -EINVAL;
	last = iova + (len - 1);
	r = upper_bound(s->ranges, s->nranges, iova);
	if (r == 0 || s->ranges[r - 1].last < last)
		return -EINVAL;                 /* not inside one managed range */
	if (overlaps(s->free, s->nfree, iova, last))
		return -EINVAL;                 /* double free, or a range never handed out */
	if (reserve(&s->free, &s->capfree, s->nfree + 1) < 0)
		return -ENOMEM;
	ext_insert(s->free, &s->nfree, iova, last);
	s->used -= len;
	return 0;
}

int shim_iova_is_allocated(const struct shim_iova_space *s, uint64_t iova, uint64_t len)
{
	uint64_t last;
	size_t r;

	if (len == 0 || iova + (len - 1) < iova)
		return 0;
	last = iova + (len - 1);
	r = upper_bound(s->ranges, s->nranges, iova);
	if (r == 0 || s->ranges[r - 1].last < last)
		return 0;
	return !overlaps(s->free, s->nfree, iova, last);
}

int shim_iova_span(uint64_t va, uint64_t len, uint64_t gran, uint64_t *start, uint64_t *maplen,
		   uint64_t *offset)
{
	uint64_t last, s, e;

	if (len == 0 || gran == 0 || (gran & (gran - 1)) || va + (len - 1) < va)
		return -EINVAL;
	last = va + (len - 1);
	s = va & ~(gran - 1);
	e = (last | (gran - 1));                /* last byte of the last page */
	if (e == UINT64_MAX)                     /* the span's length would be 2^64 - s */
		return -EINVAL;
	*start = s;
	*maplen = e - s + 1;
	*offset = va - s;
	return 0;
}
