/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvperf's latency summary (tools/uvperf/stats.c): samples are 64-bit nanoseconds, so a
 * round trip past 2^32 ns (4.29 s) is reported as it was, not clamped. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "tools/uvperf/uvperf.h"

Test(uvperf_stats, a_round_trip_longer_than_4_29_s_is_not_clamped)
{
	struct up_sample s[3] = {
		{ .total_ns = 1000, .post_ns = 100, .poll_ns = 900 },
		{ .total_ns = 5000000000ull, .post_ns = 100, .poll_ns = 4999999900ull },
		{ .total_ns = 7000000000ull, .post_ns = 200, .poll_ns = 6999999800ull },
	};
	struct up_result r = { .mode = UP_LAT, .samples = s, .nsamples = 3 };
	up_stats(&r);
	cr_assert_float_eq(r.min, 1000.0, 0.5);
	cr_assert_float_eq(r.median, 5e9, 0.5);
	cr_assert_float_eq(r.max, 7e9, 0.5);
	cr_assert_float_eq(r.poll_median, 4999999900.0, 0.5);
}
