/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* mlx5_ifc.h oracle: every row of our PRM tables against Linux's mlx5_ifc.h, encoded
 * independently by rdma-core's DEVX_SET/DEVX_GET (docs/architecture.md, "PRM layouts as data, and the oracles").
 *
 * Generated from the rows themselves (X-macros over firmware-cmd/layouts/all.def), so a
 * new row is checked without touching this file.  For each row:
 *   PRM_STRUCT  our size == sizeof the header's structure
 *   PRM_FIELD   offset and width equal; on several backgrounds (zeros, ones, random)
 *               and several values (all ones, a distinctive pattern, lowest and highest
 *               bit, random), our setter and DEVX_SET(64) leave identical bytes in the
 *               whole structure (so neighbouring bits are untouched), and our getter
 *               reads back the value; on random contents our getter == DEVX_GET(64)
 *   PRM_BYTES   byte offset and size equal (width 0 = open-ended array: offset equal
 *               and the header's member is the open-ended last one)
 *   PRM_SUB     byte offset and size equal and the header's member has the same type
 * A structure or field the header lacks must be declared in ifc_exceptions.h (else
 * ifc_rows.c does not compile) and is reported unverified with the reason; the rows of
 * wqe.def are reported unverified as a whole (checked against mlx5dv.h by tests/mlx5).
 *
 * Prints every mismatch and every unverified field by name, then exactly one line
 *   mlx5_ifc oracle: N fields checked, M mismatches, K unverified
 * (N = every field of every table, K of them unverified) and exits 1 on any mismatch.
 * The rows and their DEVX encoders come from ifc_rows.c; built and run by
 * run_mlx5_ifc.sh with -I<source dir> -I<mlx5_ifc include dir>.
 */
#include "tests/oracle/ifc_rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- runtime checks ---- */

#define OR_BUF_BYTES 0x10000
static _Alignas(64) uint8_t or_a[OR_BUF_BYTES], or_b[OR_BUF_BYTES];

static uint64_t or_rng = 0x9e3779b97f4a7c15ull;
static uint64_t or_rand(void)
{
	/* xorshift64*: fixed seed, so a failure reproduces. */
	or_rng ^= or_rng >> 12;
	or_rng ^= or_rng << 25;
	or_rng ^= or_rng >> 27;
	return or_rng * 0x2545f4914f6cdd1dull;
}

static void or_fill(uint8_t *p, size_t n, int bg)
{
	for (size_t i = 0; i < n; i++)
		p[i] = bg == 0 ? 0x00 : bg == 1 ? 0xff : (uint8_t)or_rand();
}

static unsigned long or_mismatches, or_unverified, or_fields;

static void or_mismatch(const struct or_row *r, const char *fmt, unsigned long a, unsigned long b)
{
	printf("MISMATCH %s%s%s: ", r->tname, r->fname[0] ? "." : "", r->fname);
	printf(fmt, a, b);
	printf("\n");
}

/* Returns 1 if the field disagrees. */
static int or_check_field(const struct or_row *r)
{
	if (r->our_off != r->hdr_off || r->our_w != r->hdr_w) {
		printf("MISMATCH %s.%s: ours bit 0x%lx width %lu, mlx5_ifc.h bit 0x%lx width %lu\n",
		       r->tname, r->fname, r->our_off, r->our_w, r->hdr_off, r->hdr_w);
		return 1;
	}
	/* The DEVX macros take 1..32-bit fields inside a dword, and 64-bit ones 64-bit
	 * aligned; anything else cannot be encoded by them, so it is a disagreement. */
	if (!((r->hdr_w >= 1 && r->hdr_w <= 32 && (r->hdr_off % 32) + r->hdr_w <= 32) ||
	      (r->hdr_w == 64 && r->hdr_off % 64 == 0))) {
		or_mismatch(r, "DEVX cannot encode bit 0x%lx width %lu", r->hdr_off, r->hdr_w);
		return 1;
	}
	size_t n = (r->our_st > r->hdr_st ? r->our_st : r->hdr_st) / 8;
	if (n > OR_BUF_BYTES || (r->hdr_off + r->hdr_w) / 8 > n) {
		or_mismatch(r, "structure of %lu bytes does not fit the %lu-byte buffer",
			    (unsigned long)n, OR_BUF_BYTES);
		return 1;
	}
	uint64_t mask = r->our_w == 64 ? ~0ull : ((1ull << r->our_w) - 1);
	for (int bg = 0; bg < 3; bg++) {
		uint64_t vals[] = { mask, 0xa5c396e15a3c691eull & mask, 1, 1ull << (r->our_w - 1),
				    or_rand() & mask, (0xa5c396e15a3c691eull | 1 |
						       (1ull << (r->our_w - 1))) & mask };
		for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
			or_fill(or_a, n, bg);
			memcpy(or_b, or_a, n);
			r->dx_set(or_a, vals[i]);
			r->our_set(or_b, vals[i]);
			for (size_t j = 0; j < n; j++)
				if (or_a[j] != or_b[j]) {
					printf("MISMATCH %s.%s: set 0x%llx on background %d: byte 0x%zx "
					       "DEVX_SET 0x%02x, ours 0x%02x\n",
					       r->tname, r->fname, (unsigned long long)vals[i], bg, j,
					       or_a[j], or_b[j]);
					return 1;
				}
			uint64_t got = r->our_get(or_b);
			if (got != vals[i]) {
				printf("MISMATCH %s.%s: set 0x%llx, our getter read 0x%llx\n", r->tname,
				       r->fname, (unsigned long long)vals[i], (unsigned long long)got);
				return 1;
			}
		}
	}
	for (int k = 0; k < 8; k++) {
		or_fill(or_a, n, 2);
		uint64_t want = r->dx_get(or_a), got = r->our_get(or_a);
		if (want != got) {
			printf("MISMATCH %s.%s: random contents: DEVX_GET 0x%llx, ours 0x%llx\n", r->tname,
			       r->fname, (unsigned long long)want, (unsigned long long)got);
			return 1;
		}
	}
	return 0;
}

static int or_check_bytes(const struct or_row *r)
{
	if (r->our_off != r->hdr_off) {
		or_mismatch(r, "ours at bit 0x%lx, mlx5_ifc.h at bit 0x%lx", r->our_off, r->hdr_off);
		return 1;
	}
	if (r->flex) {
		/* An open-ended array is the last member: it starts where the header's
		 * structure ends. */
		if (r->hdr_off != r->hdr_st) {
			or_mismatch(r, "open-ended here, but mlx5_ifc.h's member at bit 0x%lx is not "
				       "the open-ended end of its %lu-bit structure",
				    r->hdr_off, r->hdr_st);
			return 1;
		}
		return 0;
	}
	if (r->our_w != r->hdr_w) {
		or_mismatch(r, "ours %lu bits, mlx5_ifc.h %lu bits", r->our_w, r->hdr_w);
		return 1;
	}
	if (r->kind == OR_SUB && !r->same_type) {
		or_mismatch(r, "mlx5_ifc.h's member (%lu bits at 0x%lx) is not of our subtype",
			    r->hdr_w, r->hdr_off);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int quiet = argc > 1 && strcmp(argv[1], "-q") == 0;
	for (size_t i = 0; i < or_nrows; i++) {
		const struct or_row *r = &or_rows[i];
		if (r->kind == OR_STRUCT) {
			if (!r->why && r->our_w != r->hdr_w) {
				printf("MISMATCH %s: size ours %lu bits, mlx5_ifc.h %lu bits\n", r->tname,
				       r->our_w, r->hdr_w);
				or_mismatches++;
			}
			continue;
		}
		or_fields++;
		if (r->why) {
			or_unverified++;
			if (!quiet)
				printf("UNVERIFIED %s.%s: %s\n", r->tname, r->fname, r->why);
			continue;
		}
		int bad = r->kind == OR_FIELD ? or_check_field(r) : or_check_bytes(r);
		or_mismatches += (unsigned long)bad;
	}
	printf("mlx5_ifc oracle: %lu fields checked, %lu mismatches, %lu unverified\n", or_fields,
	       or_mismatches, or_unverified);
	return or_mismatches ? 1 : 0;
}
