/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The tools' number parser (tools/common/parse.h): what a user types either becomes the
 * number meant or is refused, never wrapped or truncated. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>

#include "tools/common/parse.h"

Test(tools_parse, minus_one_is_not_a_number)
{
	uint64_t v = 7;
	cr_assert_eq(uvt_parse_u64("-1", UINT64_MAX, &v), -EINVAL);
	cr_assert_eq(uvt_parse_size("-1", UINT64_MAX, &v), -EINVAL);
	cr_assert_eq(v, 7);
}

Test(tools_parse, blanks_empty_and_trailing_garbage_are_refused)
{
	uint64_t v;
	const char *bad[] = { "", " 5", "5 ", "+5", "12abc", "0x", "1.5", "k", "5kk", "0x10k", "5kb" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(uvt_parse_u64(bad[i], UINT64_MAX, &v), -EINVAL, "u64 '%s'", bad[i]);
		cr_expect_eq(uvt_parse_size(bad[i], UINT64_MAX, &v), -EINVAL, "size '%s'", bad[i]);
	}
}

Test(tools_parse, decimal_and_hex_values_are_read_exactly)
{
	uint64_t v;
	cr_assert_eq(uvt_parse_u64("18446744073709551615", UINT64_MAX, &v), 0);
	cr_assert_eq(v, UINT64_MAX);
	cr_assert_eq(uvt_parse_u64("0x10", UINT64_MAX, &v), 0);
	cr_assert_eq(v, 16);
	cr_assert_eq(uvt_parse_u64("010", UINT64_MAX, &v), 0);
	cr_assert_eq(v, 10, "a leading zero is not octal");
	cr_assert_eq(uvt_parse_u64_base("ffffffff", 16, 0xffffffffu, &v), 0);
	cr_assert_eq(v, 0xffffffffu);
}

Test(tools_parse, a_number_past_2_to_the_64_is_out_of_range)
{
	uint64_t v;
	cr_assert_eq(uvt_parse_u64("18446744073709551616", UINT64_MAX, &v), -ERANGE);
	cr_assert_eq(uvt_parse_u64("0x10000000000000000", UINT64_MAX, &v), -ERANGE);
	cr_assert_eq(uvt_parse_u64("99999999999999999999x", UINT64_MAX, &v), -EINVAL);
}

Test(tools_parse, the_caller_maximum_and_minimum_hold)
{
	uint64_t v;
	unsigned u;
	cr_assert_eq(uvt_parse_u64("65536", 65535, &v), -ERANGE);
	cr_assert_eq(uvt_parse_u64("65535", 65535, &v), 0);
	cr_assert_eq(uvt_parse_unsigned("0", 1, 10, &u), -ERANGE);
	cr_assert_eq(uvt_parse_unsigned("4294967297", 0, UINT32_MAX, &u), -ERANGE);
}

Test(tools_parse, suffixes_are_binary_multiples)
{
	uint64_t v;
	cr_assert_eq(uvt_parse_size("64k", UINT64_MAX, &v), 0);
	cr_assert_eq(v, 65536);
	cr_assert_eq(uvt_parse_size("1M", UINT64_MAX, &v), 0);
	cr_assert_eq(v, 1u << 20);
	cr_assert_eq(uvt_parse_size("3g", UINT64_MAX, &v), 0);
	cr_assert_eq(v, 3ull << 30);
	cr_assert_eq(uvt_parse_size("4096", UINT64_MAX, &v), 0);
	cr_assert_eq(v, 4096);
}

Test(tools_parse, a_suffix_that_overflows_is_out_of_range)
{
	uint64_t v = 7;
	/* 2^34 g is 2^64: shifted it wraps to 0 */
	cr_assert_eq(uvt_parse_size("17179869184g", UINT64_MAX, &v), -ERANGE);
	cr_assert_eq(uvt_parse_size("18014398509481984k", UINT64_MAX, &v), -ERANGE);
	cr_assert_eq(uvt_parse_size("2g", 1u << 30, &v), -ERANGE);
	cr_assert_eq(v, 7);
}

Test(tools_parse, durations_are_finite_and_in_range)
{
	double d;
	cr_assert_eq(uvt_parse_double("0.5", 0, 10, &d), 0);
	cr_assert_float_eq(d, 0.5, 1e-12);
	cr_assert_eq(uvt_parse_double("-1", 0, 10, &d), -EINVAL);
	cr_assert_eq(uvt_parse_double("nan", 0, 10, &d), -EINVAL);
	cr_assert_eq(uvt_parse_double("inf", 0, 10, &d), -EINVAL);
	cr_assert_eq(uvt_parse_double("2s", 0, 10, &d), -EINVAL);
	cr_assert_eq(uvt_parse_double("1e999", 0, 1e9, &d), -ERANGE);
	cr_assert_eq(uvt_parse_double("11", 0, 10, &d), -ERANGE);
}
