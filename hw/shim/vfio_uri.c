/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Parsing of "vfio:" URIs; see vfio_uri.h for the accepted forms. */
#include "hw/shim/vfio_uri.h"
#include "hw/shim/backend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Reads 1..maxdigits hex digits from s[*pos..len). */
static int take_hex(const char *s, size_t len, size_t *pos, unsigned maxdigits, unsigned long *out)
{
	unsigned long v = 0;
	unsigned n = 0;

	while (*pos < len && hexval(s[*pos]) >= 0) {
		if (++n > maxdigits)
			return -EINVAL;
		v = v * 16 + (unsigned long)hexval(s[*pos]);
		(*pos)++;
	}
	if (n == 0)
		return -EINVAL;
	*out = v;
	return 0;
}

int shim_vfio_parse_bdf(const char *s, size_t len, char out[16])
{
	unsigned long f[4];
	size_t pos = 0;
	unsigned nfields = 0;
	unsigned long domain, bus, dev, fn;

	/* Fields before the dot are colon-separated: [domain:]bus:device. */
	for (;;) {
		if (nfields == 3)
			return -EINVAL;
		/* A domain can exceed 16 bits (Intel VMD domains are 0x10000 and up); six
		 * digits keep the normalised address within 16 bytes. */
		if (take_hex(s, len, &pos, 6, &f[nfields]) < 0)
			return -EINVAL;
		nfields++;
		if (pos < len && s[pos] == ':') {
			pos++;
			continue;
		}
		break;
	}
	if (nfields < 2 || pos >= len || s[pos] != '.')
		return -EINVAL;
	pos++;
	if (pos + 1 != len || s[pos] < '0' || s[pos] > '7')
		return -EINVAL;
	fn = (unsigned long)(s[pos] - '0');
	if (nfields == 3) {
		domain = f[0];
		bus = f[1];
		dev = f[2];
	} else {
		domain = 0;
		bus = f[0];
		dev = f[1];
	}
	/* PCI: 8-bit bus number, 5-bit device number, 3-bit function. */
	if (bus > 0xff || dev > 0x1f || domain > 0xffffffUL)
		return -EINVAL;
	return snprintf(out, 16, "%04lx:%02lx:%02lx.%lu", domain, bus, dev, fn) < 16 ? 0 : -EINVAL;
}

/* A number with an optional K/M/G/T suffix (powers of 1024). */
static int parse_u64(const char *s, size_t len, uint64_t *out)
{
	char buf[40];
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (buf[0] == '-' || buf[0] == '+' || buf[0] == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(buf, &end, 0);
	if (errno || end == buf)
		return -EINVAL;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: return -EINVAL;
	}
	if (*end != '\0')
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

int shim_vfio_parse_uri(const char *args, struct shim_vfio_uri *out, char *err, size_t errlen)
{
	const char *comma, *p;
	size_t bdflen;

	if (err && errlen)
		err[0] = '\0';
	if (!args || !out)
		return shim_errbuf(err, errlen, -EINVAL, "vfio: no PCI address given (expected vfio:0000:03:00.0)");
	memset(out, 0, sizeof(*out));
	out->iova_base = SHIM_VFIO_IOVA_BASE_DEFAULT;
	out->msix = SHIM_VFIO_MSIX_DEFAULT;
	out->memlock_need = SHIM_VFIO_MEMLOCK_DEFAULT;

	comma = strchr(args, ',');
	bdflen = comma ? (size_t)(comma - args) : strlen(args);
	if (shim_vfio_parse_bdf(args, bdflen, out->bdf) < 0)
		return shim_errbuf(err, errlen, -EINVAL, "vfio:%.*s: not a PCI address (expected domain:bus:device.function "
			 "such as vfio:0000:03:00.0, or bus:device.function)", (int)(bdflen > 64 ? 64 : bdflen), args);

	for (p = comma; p; p = comma) {
		const char *opt = p + 1, *eq, *val;
		size_t optlen, keylen, vallen;
		uint64_t v;

		comma = strchr(opt, ',');
		optlen = comma ? (size_t)(comma - opt) : strlen(opt);
		eq = memchr(opt, '=', optlen);
		if (!eq)
			return shim_errbuf(err, errlen, -EINVAL, "vfio:%s: option '%.*s' needs a value (name=value)", out->bdf,
				 (int)(optlen > 64 ? 64 : optlen), opt);
		keylen = (size_t)(eq - opt);
		val = eq + 1;
		vallen = optlen - keylen - 1;
		if (!((keylen == 9 && memcmp(opt, "iova_base", 9) == 0) ||
		      (keylen == 8 && memcmp(opt, "iova_end", 8) == 0) ||
		      (keylen == 4 && memcmp(opt, "msix", 4) == 0) ||
		      (keylen == 7 && memcmp(opt, "memlock", 7) == 0)))
			return shim_errbuf(err, errlen, -EINVAL, "vfio:%s: unknown option '%.*s' (known: iova_base, iova_end, msix, memlock)",
				 out->bdf, (int)(keylen > 32 ? 32 : keylen), opt);
		if (parse_u64(val, vallen, &v) < 0)
			return shim_errbuf(err, errlen, -EINVAL, "vfio:%s: option %.*s: '%.*s' is not a number", out->bdf,
				 (int)(keylen > 32 ? 32 : keylen), opt, (int)(vallen > 32 ? 32 : vallen), val);
		if (opt[0] == 'i' && keylen == 9) {
			out->iova_base = v;
		} else if (opt[0] == 'i') {
			out->iova_end = v;
		} else if (opt[0] == 'm' && keylen == 4) {
			if (v > SHIM_VFIO_MSIX_MAX)
			return shim_errbuf(err, errlen, -EINVAL, "vfio:%s: msix=%llu exceeds the PCI limit of %u vectors",
					 out->bdf, (unsigned long long)v, SHIM_VFIO_MSIX_MAX);
			out->msix = (unsigned)v;
		} else {
			out->memlock_need = v;
		}
	}
	if (out->iova_end && out->iova_end <= out->iova_base)
		return shim_errbuf(err, errlen, -EINVAL, "vfio:%s: iova_end 0x%llx is not above iova_base 0x%llx", out->bdf,
			 (unsigned long long)out->iova_end, (unsigned long long)out->iova_base);
	return 0;
}
