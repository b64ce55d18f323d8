/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvperf: summaries of latency samples (uvperf.h).  Percentiles by nearest rank: the
 * p-th percentile is the smallest sample with at least p% of the samples at or below
 * it, so p99 of 1,000 samples is the 990th smallest -- an observed value, never an
 * interpolation. */
#include "tools/uvperf/uvperf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double rank(const uint64_t *sorted, uint64_t n, double p)
{
	if (!n)
		return NAN;
	double r = ceil(p / 100.0 * (double)n);
	uint64_t i = r < 1 ? 0 : (uint64_t)r - 1;
	return (double)sorted[i < n ? i : n - 1];
}

void up_stats(struct up_result *r)
{
	if (r->mode != UP_LAT || !r->nsamples) {
		r->min = r->median = r->p95 = r->p99 = r->p999 = r->max = NAN;
		r->post_median = r->poll_median = NAN;
		return;
	}
	uint64_t *v = malloc(r->nsamples * sizeof(*v));
	if (!v)
		return;
	for (uint64_t i = 0; i < r->nsamples; i++)
		v[i] = r->samples[i].total_ns;
	qsort(v, r->nsamples, sizeof(*v), cmp_u64);
	r->min = (double)v[0];
	r->max = (double)v[r->nsamples - 1];
	r->median = rank(v, r->nsamples, 50);
	r->p95 = rank(v, r->nsamples, 95);
	r->p99 = rank(v, r->nsamples, 99);
	r->p999 = rank(v, r->nsamples, 99.9);
	for (uint64_t i = 0; i < r->nsamples; i++)
		v[i] = r->samples[i].post_ns;
	qsort(v, r->nsamples, sizeof(*v), cmp_u64);
	r->post_median = rank(v, r->nsamples, 50);
	for (uint64_t i = 0; i < r->nsamples; i++)
		v[i] = r->samples[i].poll_ns;
	qsort(v, r->nsamples, sizeof(*v), cmp_u64);
	r->poll_median = rank(v, r->nsamples, 50);
	free(v);
}
