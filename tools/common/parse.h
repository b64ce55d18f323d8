/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Strict number parsing for the command-line tools (uvperf, uvinfo, fwcmd, the
 * benchmarks): one place, so every tool refuses the same bad input the same way.
 *
 * strtoull alone accepts what a user did not mean: "-1" becomes 2^64-1 (C11 7.22.1.4:
 * the subject sequence may carry a minus sign, and the result is negated in the return
 * type), leading blanks are skipped, "" and "12abc" leave a partial value unless the end
 * pointer is checked, and a suffix shift ("16g" << 30) overflows silently.  Here a value
 * is digits only (decimal, or hex with 0x), optionally one binary suffix, checked against
 * the caller's maximum after every step.
 *
 * Each parser returns 0, -EINVAL (not a number of that form) or -ERANGE (above max, or
 * below min); uvt_parse_why() names the reason for a message.
 */
#ifndef UVERBS_TOOLS_COMMON_PARSE_H
#define UVERBS_TOOLS_COMMON_PARSE_H

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* Digits in base 10, or 16 after "0x"/"0X" (base 0), or base 16 always (base 16, "0x"
 * allowed).  No sign, no blanks, nothing after the digits. */
static inline int uvt_parse_u64_base(const char *s, int base, uint64_t max, uint64_t *out)
{
	if (!s || !*s)
		return -EINVAL;
	const char *p = s;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && (base == 0 || base == 16)) {
		base = 16;
		p += 2;
	} else if (base == 0) {
		base = 10;
	}
	uint64_t v = 0;
	int any = 0, range = 0;
	for (; *p; p++) {
		unsigned d;
		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			d = (unsigned)(*p - 'A' + 10);
		else
			return -EINVAL;
		if (v > (UINT64_MAX - d) / (unsigned)base)
			range = 1;      /* keep scanning: "99999999999999999999x" is not a number */
		else
			v = v * (unsigned)base + d;
		any = 1;
	}
	if (!any)
		return -EINVAL;
	if (range || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* A count or port: decimal or 0x hex, at most max. */
static inline int uvt_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	return uvt_parse_u64_base(s, 0, max, out);
}

static inline int uvt_parse_unsigned(const char *s, unsigned min, unsigned max, unsigned *out)
{
	uint64_t v;
	int rc = uvt_parse_u64(s, max, &v);
	if (rc)
		return rc;
	if (v < min)
		return -ERANGE;
	*out = (unsigned)v;
	return 0;
}

/* A size: a number as uvt_parse_u64, optionally followed by one of k, m, g (any case;
 * binary: 2^10, 2^20, 2^30), so "64k" is 65536.  The product is checked against max. */
static inline int uvt_parse_size(const char *s, uint64_t max, uint64_t *out)
{
	if (!s || !*s)
		return -EINVAL;
	char buf[64];
	size_t n = 0;
	while (s[n] && n < sizeof(buf) - 1) {
		buf[n] = s[n];
		n++;
	}
	if (s[n])
		return -EINVAL;     /* longer than any number */
	buf[n] = 0;
	unsigned shift = 0;
	/* a hex number's own digits include no k, m or g, but "0x1g" would be odd: allow
	 * the suffix on decimal numbers only */
	int hex = buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X');
	switch (buf[n - 1]) {
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	default: break;
	}
	if (shift) {
		if (hex)
			return -EINVAL;
		buf[--n] = 0;
	}
	uint64_t v;
	int rc = uvt_parse_u64_base(buf, 0, UINT64_MAX, &v);
	if (rc)
		return rc;
	if (v > (UINT64_MAX >> shift) || (v << shift) > max)
		return -ERANGE;
	*out = v << shift;
	return 0;
}

/* A real number such as a duration: digits with an optional fraction ("2", "0.5",
 * "1e-3" too), finite, within [min, max].  No sign, no blanks, nothing after it. */
static inline int uvt_parse_double(const char *s, double min, double max, double *out)
{
	if (!s || !*s || !((*s >= '0' && *s <= '9') || *s == '.'))
		return -EINVAL;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end)
		return -EINVAL;
	if (errno == ERANGE || !isfinite(v) || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static inline const char *uvt_parse_why(int rc)
{
	return rc == -ERANGE ? "out of range" : "not a number";
}

#endif
