/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* verbs-layout: the size, alignment and field offsets of every <infiniband/verbs.h>
 * structure libuverbs reads or writes, one line each, and a digest of them all.
 *
 * libuverbs is ABI-compatible with the verbs header it is built against: rdma-core's
 * on Linux, the SDK's on macOS (Apple's librdma, macOS 26.2 and later).  Run on a Mac,
 * this prints what Apple's header lays out; `diff` against the Linux output (or compare
 * the digest line) shows at once whether the two agree, which docs/hardware.md assumes
 * until that run.  Members are named as in rdma-core's verbs.h; a member Apple's header
 * lacks fails to compile, which is itself the answer.
 *
 *   verbs-layout            the lines, then "verbs-layout: N structures, M members, digest H"
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

static uint64_t digest = 0xcbf29ce484222325ull;    /* FNV-1a 64 over every line */
static unsigned nstruct, nmember;

static void line(const char *s)
{
	fputs(s, stdout);
	for (const char *p = s; *p; p++) {
		digest ^= (uint8_t)*p;
		digest *= 0x100000001b3ull;
	}
}

/* One row a structure (member NULL: size and alignment) or a member (offset and size),
 * from verbs_layout.def. */
struct vl_row {
	const char *type, *member;
	size_t a, b;
};

static const struct vl_row vl_rows[] = {
#define VL_STRUCT(t) { #t, NULL, sizeof(struct t), _Alignof(struct t) },
#define VL_MEMBER(t, m) { #t, #m, offsetof(struct t, m), sizeof(((struct t *)0)->m) },
#include "verbs_layout.def"
#undef VL_STRUCT
#undef VL_MEMBER
};

int main(void)
{
	for (size_t i = 0; i < sizeof(vl_rows) / sizeof(vl_rows[0]); i++) {
		const struct vl_row *r = &vl_rows[i];
		char b[200];

		if (r->member) {
			snprintf(b, sizeof(b), "  %s.%s offset %zu size %zu\n", r->type, r->member, r->a, r->b);
			nmember++;
		} else {
			snprintf(b, sizeof(b), "struct %s size %zu align %zu\n", r->type, r->a, r->b);
			nstruct++;
		}
		line(b);
	}
	printf("verbs-layout: %u structures, %u members, digest %016" PRIx64 "\n", nstruct, nmember, digest);
	return 0;
}
