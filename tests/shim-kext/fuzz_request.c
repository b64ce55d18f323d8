/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the kext's request decoder and the policy behind it.
 *
 * An input is a program of operations on one fake device (support/fake_platform.c):
 * user-client calls with arbitrary selectors, sizes and bytes (optionally patched with
 * handles and memory types from earlier replies, so deep paths are reachable), owner
 * death and re-open, interrupts, clientMemoryForType lookups, platform failures and
 * surprise removal.  After every operation the invariants the kext relies on are
 * checked, and a violation traps so libFuzzer reports it like a crash:
 *  - a call returns 0 or a known negative status;
 *  - nothing is written past the reply size;
 *  - the pin table agrees with what the platform has wired (count and bytes), and stays
 *    within the owner's limits;
 *  - after owner release every pin and DMA buffer is unwired (unless quarantined) and
 *    bus mastering was turned off before the first unpin.
 *
 * Built and run by run-fuzz.sh with clang -fsanitize=fuzzer,address,undefined.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/shim-kext/support/fake_platform.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

struct cursor {
	const uint8_t *p;
	size_t n;
};

static uint8_t take8(struct cursor *c)
{
	if (!c->n)
		return 0;
	c->n--;
	return *c->p++;
}

static void take(struct cursor *c, void *dst, size_t len)
{
	size_t k = len < c->n ? len : c->n;
	memcpy(dst, c->p, k);
	memset((uint8_t *)dst + k, 0, len - k);
	c->p += k;
	c->n -= k;
}

static bool st_ok(int rc)
{
	if (rc > 0)
		return false;
	return rc == 0 || strcmp(uvshim_status_name(-rc), "unknown status") != 0;
}

static bool other_member(const void *ctx, uint32_t gid) { return gid == *(const uint32_t *)ctx; }

static void check_table(const struct fake *f)
{
	const struct uvshim_pins *t = &f->dev.pins;
	uint64_t bytes = 0;
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->capacity; i++)
		if (f->live[i].live) {
			n++;
			bytes += f->live[i].len;
		}
	CHECK(n == f->live_pins + f->live_dma);
	CHECK(t->count == n);
	CHECK(t->bytes == bytes);
	CHECK(t->count <= t->max_pins);
	CHECK(t->bytes <= t->max_bytes);
}

static void release_and_check(struct fake *f, const void *owner)
{
	bool owned = f->dev.state == UVSHIM_STATE_OWNED && owner == f->dev.owner;
	fake_clear_log(f);
	int rc = uvshim_owner_release(&f->dev, owner);
	CHECK(st_ok(rc));
	if (!owned)
		return;
	CHECK(f->dev.state == UVSHIM_STATE_CLOSED);
	if (!f->dev.quarantined) {
		CHECK(f->live_pins == 0 && f->live_dma == 0);
		int first_unpin = fake_find(f, EV_UNPIN, 0), first_free = fake_find(f, EV_DMA_FREE, 0);
		int bm = fake_find(f, EV_BM_OFF, 0);
		if (!f->dev.gone && (first_unpin >= 0 || first_free >= 0))
			CHECK(bm >= 0 && (first_unpin < 0 || bm < first_unpin) && (first_free < 0 || bm < first_free));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fake *f;
	if (!f) {
		f = calloc(1, sizeof(*f));
		if (!f)
			return 0;
	}
	struct cursor c = {data, size};
	uint8_t cfg = take8(&c);
	uint64_t page = (cfg & 1) ? 16384 : 4096;
	uint32_t max_pins = 4 + (cfg >> 4);             /* small limits: reach them */
	uint64_t max_bytes = page * (8 + ((cfg >> 1) & 7) * 64);
	if (fake_init(f, page, 24, max_pins > 24 ? 24 : max_pins, max_bytes))
		__builtin_trap();
	f->dev.cfg.group_id = 600;
	uint32_t gid = 600;

	if (cfg & 0x08) {
		CHECK(fake_open_hello(f) == 0);
	} else {
		struct uvshim_cred root = {.uid = 0};
		CHECK(uvshim_owner_open(&f->dev, &root, &f->owner_a) == 0);
	}

	uint64_t handles[8] = {0};
	uint32_t memtypes[8] = {0};
	unsigned nh = 0, nm = 0;
	static uint8_t in[4200 + 64], out[4200 + 64];

	while (c.n) {
		uint8_t op = take8(&c) % 22;
		if (op <= UVSHIM_SEL_COUNT) {
			uint32_t sel = op;
			if (op == UVSHIM_SEL_COUNT)
				sel = UVSHIM_SEL_COUNT + take8(&c); /* unknown selectors */
			uint8_t s = take8(&c);
			size_t want_in = 16, want_out = 0;
			uvshim_request_sizes(sel, &want_in, &want_out);
			size_t in_len = (s & 0x80) ? (size_t)(take8(&c) % 80) : want_in;
			size_t out_len = (s & 0x10) ? (size_t)(take8(&c) * 17 % 4200) : want_out;
			take(&c, in, in_len);
			if ((s & 0x40) && in_len >= 8 && nh)
				memcpy(in, &handles[(s & 7) % nh], 8);
			if ((s & 0x20) && in_len >= 4 && nm)
				memcpy(in, &memtypes[(s & 7) % nm], 4);
			memset(out, 0xa5, out_len + 64);
			const void *owner = (s & 0x08) ? (const void *)&f->owner_b : (const void *)&f->owner_a;
			int rc = uvshim_dispatch(&f->dev, owner, sel, in, in_len, out, out_len);
			CHECK(st_ok(rc));
			for (size_t i = out_len; i < out_len + 64; i++)
				CHECK(out[i] == 0xa5);
			if (rc == 0 && (sel == UVSHIM_SEL_PIN || sel == UVSHIM_SEL_DMA_ALLOC)) {
				uint64_t h;
				memcpy(&h, out, 8);
				handles[nh++ % 8] = h;
				if (nh > 8)
					nh = 8;
			}
			if (rc == 0 && (sel == UVSHIM_SEL_MAP_BAR || sel == UVSHIM_SEL_DMA_ALLOC)) {
				uint32_t t;
				if (sel == UVSHIM_SEL_MAP_BAR)
					memcpy(&t, out, 4);
				else
					memcpy(&t, out + offsetof(struct uvshim_dma_alloc_rep, memory_type), 4);
				memtypes[nm++ % 8] = t;
				if (nm > 8)
					nm = 8;
			}
			if (rc == 0 && sel == UVSHIM_SEL_PIN) {
				struct uvshim_pin_rep r;
				memcpy(&r, out, sizeof(r));
				CHECK(r.nseg >= 1 && r.nseg <= UVSHIM_MAX_SEGS_PER_REPLY && r.nseg <= r.nseg_total);
			}
		} else {
			switch (op) {
			case 13:
				release_and_check(f, (take8(&c) & 1) ? &f->owner_b : &f->owner_a);
				break;
			case 14: {
				uint8_t u = take8(&c);
				struct uvshim_cred cr = {.uid = (u & 1) ? 501 : 0, .is_member = other_member,
							 .ctx = &gid};
				if (u & 2)
					gid = 601;
				else
					gid = 600;
				int rc = uvshim_owner_open(&f->dev, &cr, (u & 4) ? &f->owner_b : &f->owner_a);
				CHECK(st_ok(rc));
				if (rc == 0 && (u & 8)) {
					struct uvshim_hello_req h = {.abi_major = UVSHIM_ABI_MAJOR};
					struct uvshim_hello_rep hr;
					CHECK(st_ok(fake_call(f, f->dev.owner, UVSHIM_SEL_HELLO, &h, &hr)));
				}
				break;
			}
			case 15: {
				uint64_t cnt, ck;
				int rc = uvshim_irq_fire(&f->dev, take8(&c) % 80, &cnt, &ck);
				CHECK(rc == 0 || rc == 1 || rc == -UVSHIM_EINVAL);
				CHECK(rc != 1 || f->dev.state == UVSHIM_STATE_OWNED);
				break;
			}
			case 16: {
				uint8_t u = take8(&c);
				uint32_t t = (nm && (u & 1)) ? memtypes[u % nm] : ((uint32_t)u << 20) ^ u;
				struct uvshim_memory m;
				int rc = uvshim_memory_for_type(&f->dev, (u & 2) ? &f->owner_b : &f->owner_a, t, &m);
				CHECK(st_ok(rc));
				if (rc == 0 && m.kind == UVSHIM_MEMTYPE_WINDOW) {
					CHECK(uvshim_bar_window_check(&f->dev.info, 0, m.cache, m.offset, m.length) == 0);
					/* Whatever cache mode the caller maps it with, a mapping that
					 * may combine stores never covers the init segment. */
					uint32_t opts = (uint32_t)take8(&c) << UVSHIM_IOMAP_CACHE_SHIFT;
					int mc = uvshim_window_map_check(m.cache, opts);
					CHECK(mc == 0 || mc == -UVSHIM_EINVAL);
					if (mc == 0 && ((opts & UVSHIM_IOMAP_CACHE_MASK) >> UVSHIM_IOMAP_CACHE_SHIFT) != UVSHIM_IOMAP_INHIBIT)
						CHECK(m.offset >= UVSHIM_INIT_SEG_END);
				}
				break;
			}
			case 17: {
				uint8_t u = take8(&c);
				f->fail_pin = (u & 1) ? -UVSHIM_EIO : 0;
				f->fail_dma = (u & 2) ? -UVSHIM_ENOMEM : 0;
				f->fail_bm_off = (u & 4) ? -UVSHIM_EIO : 0;
				f->fail_reset = (u & 8) ? -UVSHIM_EIO : 0;
				f->bad = (enum fake_bad_segs)((u >> 4) % 6);
				break;
			}
			case 18:
				if (take8(&c) == 0x5a)
					uvshim_dev_gone(&f->dev);
				break;
			default:
				f->fragment = !f->fragment;
				break;
			}
		}
		check_table(f);
	}
	if (f->dev.state == UVSHIM_STATE_OWNED)
		release_and_check(f, f->dev.owner);
	check_table(f);
	return 0;
}
