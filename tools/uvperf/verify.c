/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvperf: the payload pattern and its XXH3 check (uvperf.h). */
#include "tools/uvperf/uvperf.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <xxhash.h>

/* SplitMix64 (Steele, Lea, Flood 2014): every 8-byte word of the pattern is a function
 * of the seed and its offset alone, so the sink can say which byte should have been
 * where without a copy of the source. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint8_t up_pattern_byte(uint64_t seed, uint64_t off)
{
	return (uint8_t)(mix(seed ^ (off >> 3)) >> ((off & 7) * 8));
}

void up_pattern_fill(uint8_t *buf, size_t len, uint64_t seed, uint64_t base)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = up_pattern_byte(seed, base + i);
}

void up_hash_slots(const struct up_ep *ep, uint32_t size, uint64_t slots, uint64_t *out)
{
	for (unsigned q = 0; q < ep->nqps; q++)
		for (uint64_t s = 0; s < slots; s++)
			out[q * slots + s] = XXH3_64bits(ep->buf + (size_t)q * ep->bufsize + (size_t)s * size, size);
}

void up_verify_slots(const struct up_ep *ep, uint32_t size, uint64_t slots, uint64_t first_slot,
		     const uint64_t *counts,
		     const uint64_t *hashes, uint64_t seed, uint64_t first_msg, struct up_vres *res)
{
	memset(res, 0, sizeof(*res));
	res->ok = 1;
	for (unsigned q = 0; q < ep->nqps; q++) {
		uint64_t end = first_slot + counts[q] < slots ? first_slot + counts[q] : slots;
		for (uint64_t s = first_slot; s < end; s++) {
			const uint8_t *p = ep->buf + (size_t)q * ep->bufsize + (size_t)s * size;
			res->checked_bytes += size;
			if (XXH3_64bits(p, size) == hashes[q * slots + s])
				continue;
			res->ok = 0;
			res->qp = q;
			res->msg = first_msg + (s - first_slot);
			uint64_t base = (uint64_t)q * ep->bufsize + s * size;
			/* The first byte that differs from the pattern the source was filled with. */
			for (uint32_t i = 0; i < size; i++) {
				uint8_t want = up_pattern_byte(seed, base + i);
				if (p[i] != want) {
					res->offset = (uint64_t)s * size + i;
					res->msg_offset = i;
					res->got = p[i];
					res->expected = want;
					snprintf(res->text, sizeof(res->text),
						 "QP %u message %" PRIu64 ": first bad byte at buffer offset %" PRIu64
						 " (message offset %u): got 0x%02x, expected 0x%02x",
						 q, res->msg, res->offset, i, p[i], want);
					return;
				}
			}
			res->offset = (uint64_t)s * size;
			snprintf(res->text, sizeof(res->text),
				 "QP %u message %" PRIu64 " at buffer offset %" PRIu64
				 ": XXH3 differs from the source's, though every byte matches the pattern "
				 "(the source's own buffer was not the pattern)", q, res->msg, res->offset);
			return;
		}
	}
}
