/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Request validation: sizes, flags, reserved fields and alignment of every request,
 * before any state is looked at.  Anything a client sends is checked here first, so
 * the policy code after it can rely on well-formed values (flags known, reserved
 * fields zero so they can be given a meaning later without breaking old clients).
 *
 * Order of checks, so a client always gets the same answer for the same mistake:
 * unknown selector (ENOSYS), sizes (EBADSIZE), then fields in struct order (EINVAL).
 */
#include "shim-kext/core/uvshim_core.h"

struct sizes {
	uint32_t in, out;
};

static const struct sizes sel_sizes[UVSHIM_SEL_COUNT] = {
	[UVSHIM_SEL_HELLO] = {sizeof(struct uvshim_hello_req), sizeof(struct uvshim_hello_rep)},
	[UVSHIM_SEL_DEVICE_INFO] = {sizeof(struct uvshim_info_req), sizeof(struct uvshim_info_rep)},
	[UVSHIM_SEL_MAP_BAR] = {sizeof(struct uvshim_map_bar_req), sizeof(struct uvshim_map_bar_rep)},
	[UVSHIM_SEL_UNMAP_BAR] = {sizeof(struct uvshim_unmap_bar_req), 0},
	[UVSHIM_SEL_PIN] = {sizeof(struct uvshim_pin_req), sizeof(struct uvshim_pin_rep)},
	[UVSHIM_SEL_PIN_SEGS] = {sizeof(struct uvshim_pin_segs_req), sizeof(struct uvshim_pin_rep)},
	[UVSHIM_SEL_UNPIN] = {sizeof(struct uvshim_handle_req), 0},
	[UVSHIM_SEL_DMA_ALLOC] = {sizeof(struct uvshim_dma_alloc_req), sizeof(struct uvshim_dma_alloc_rep)},
	[UVSHIM_SEL_DMA_FREE] = {sizeof(struct uvshim_handle_req), 0},
	[UVSHIM_SEL_IRQ_ARM] = {sizeof(struct uvshim_irq_req), 0},
	[UVSHIM_SEL_IRQ_DISARM] = {sizeof(struct uvshim_irq_req), 0},
	[UVSHIM_SEL_RESET] = {sizeof(struct uvshim_reset_req), 0},
	[UVSHIM_SEL_GRANT] = {sizeof(struct uvshim_grant_req), 0},
	[UVSHIM_SEL_REVOKE] = {sizeof(struct uvshim_grant_req), 0},
	[UVSHIM_SEL_PIN_FOR] = {sizeof(struct uvshim_pin_for_req), sizeof(struct uvshim_pin_rep)},
};

int uvshim_request_sizes(uint32_t selector, size_t *in_len, size_t *out_len)
{
	if (selector >= UVSHIM_SEL_COUNT)
		return -UVSHIM_ENOSYS;
	if (in_len)
		*in_len = sel_sizes[selector].in;
	if (out_len)
		*out_len = sel_sizes[selector].out;
	return 0;
}

static bool page_aligned(uint64_t v, uint64_t page) { return (v & (page - 1)) == 0; }

/* The request structs are read through a copy: the caller's buffer may be unaligned
 * (a fuzzer's bytes, or IOKit's inline struct input). */
#define COPY_IN(type, var, in)                                              \
	struct type var;                                                    \
	do {                                                                \
		const unsigned char *src_ = (const unsigned char *)(in);    \
		unsigned char *dst_ = (unsigned char *)&var;                \
		for (size_t i_ = 0; i_ < sizeof(var); i_++)                 \
			dst_[i_] = src_[i_];                                \
	} while (0)

/* The requests whose rule is one condition on their fields: the name of the check, the
 * request struct, and the condition that refuses it (EINVAL), on the copy `r`. */
#define FIELDS_CHECK(name, type, bad)                                       \
	static int name(const void *in)                                     \
	{                                                                   \
		COPY_IN(type, r, in);                                       \
		return (bad) ? -UVSHIM_EINVAL : 0;                          \
	}

/* HELLO: the major version is a policy decision (EVERSION), taken in dispatch, so the
 * client gets the kext's version back in the reply even on a mismatch. */
FIELDS_CHECK(check_hello, uvshim_hello_req, r.flags != 0 || r.reserved != 0)
FIELDS_CHECK(check_info, uvshim_info_req, r.flags != 0 || r.reserved != 0)
FIELDS_CHECK(check_pin_segs, uvshim_pin_segs_req, r.handle == 0 || r.reserved != 0)
FIELDS_CHECK(check_handle, uvshim_handle_req, r.handle == 0)
FIELDS_CHECK(check_reset, uvshim_reset_req, r.flags != 0 || r.reserved != 0)
/* GRANT and REVOKE: a process (pid 0 is the kernel); the index is checked against
 * the device's UAR region by the policy (guest.c). */
FIELDS_CHECK(check_grant, uvshim_grant_req, r.pid == 0)

static int check_map_bar(const void *in, uint64_t page)
{
	COPY_IN(uvshim_map_bar_req, r, in);
	if (r.bar != 0)
		return -UVSHIM_EINVAL;
	if (r.cache != UVSHIM_CACHE_UNCACHED && r.cache != UVSHIM_CACHE_WC)
		return -UVSHIM_EINVAL;
	if (!page_aligned(r.offset, page) || r.length == 0 || !page_aligned(r.length, page))
		return -UVSHIM_EINVAL;
	return 0;
}

static int check_unmap_bar(const void *in)
{
	COPY_IN(uvshim_unmap_bar_req, r, in);
	if (r.reserved != 0)
		return -UVSHIM_EINVAL;
	if ((r.memory_type >> UVSHIM_MEMTYPE_KIND_SHIFT) != UVSHIM_MEMTYPE_WINDOW)
		return -UVSHIM_EINVAL;
	return 0;
}

static int check_pin(const void *in, uint64_t page)
{
	COPY_IN(uvshim_pin_req, r, in);
	if (!page_aligned(r.va, page) || r.length == 0 || !page_aligned(r.length, page))
		return -UVSHIM_EINVAL;
	if (r.length > UVSHIM_MAX_PIN_BYTES)
		return -UVSHIM_EINVAL;
	if (r.va == 0 || r.va >= UVSHIM_USER_VA_LIMIT || r.length > UVSHIM_USER_VA_LIMIT - r.va)
		return -UVSHIM_EFAULT;
	if ((r.flags & ~UVSHIM_PIN_FLAGS_ALL) || !(r.flags & UVSHIM_PIN_FLAGS_ALL))
		return -UVSHIM_EINVAL;
	if (r.reserved != 0)
		return -UVSHIM_EINVAL;
	return 0;
}

static int check_dma_alloc(const void *in, uint64_t page)
{
	COPY_IN(uvshim_dma_alloc_req, r, in);
	if (r.length == 0 || r.length > UVSHIM_MAX_DMA_BYTES)
		return -UVSHIM_EINVAL;
	(void)page; /* length is rounded up to the page by dispatch; the cap keeps it exact */
	if (!uvshim_is_pow2(r.align) || r.align > UVSHIM_MAX_DMA_ALIGN)
		return -UVSHIM_EINVAL;
	if (r.flags != 0 || r.reserved != 0)
		return -UVSHIM_EINVAL;
	return 0;
}

static int check_irq(const void *in, bool arm)
{
	COPY_IN(uvshim_irq_req, r, in);
	if (r.vector >= UVSHIM_MAX_VECTORS || r.flags != 0)
		return -UVSHIM_EINVAL;
	if (!arm && r.cookie != 0)
		return -UVSHIM_EINVAL;
	return 0;
}

/* PIN_FOR: the rules of PIN for the range, and a process. */
static int check_pin_for(const void *in, uint64_t page)
{
	COPY_IN(uvshim_pin_for_req, r, in);
	struct uvshim_pin_req p = {.va = r.va, .length = r.length, .flags = r.flags};
	int rc = check_pin(&p, page);
	if (rc)
		return rc;
	if (r.pid == 0)
		return -UVSHIM_EINVAL;
	return 0;
}

int uvshim_request_check(uint32_t selector, const void *in, size_t in_len, size_t out_len,
			 uint64_t page_size)
{
	if (selector >= UVSHIM_SEL_COUNT)
		return -UVSHIM_ENOSYS;
	if (in_len != sel_sizes[selector].in || out_len != sel_sizes[selector].out)
		return -UVSHIM_EBADSIZE;
	if (!in)
		return -UVSHIM_EINVAL;
	if (!uvshim_is_pow2(page_size) || page_size < 4096)
		return -UVSHIM_EINVAL;
	switch (selector) {
	case UVSHIM_SEL_HELLO: return check_hello(in);
	case UVSHIM_SEL_DEVICE_INFO: return check_info(in);
	case UVSHIM_SEL_MAP_BAR: return check_map_bar(in, page_size);
	case UVSHIM_SEL_UNMAP_BAR: return check_unmap_bar(in);
	case UVSHIM_SEL_PIN: return check_pin(in, page_size);
	case UVSHIM_SEL_PIN_SEGS: return check_pin_segs(in);
	case UVSHIM_SEL_UNPIN: return check_handle(in);
	case UVSHIM_SEL_DMA_ALLOC: return check_dma_alloc(in, page_size);
	case UVSHIM_SEL_DMA_FREE: return check_handle(in);
	case UVSHIM_SEL_IRQ_ARM: return check_irq(in, true);
	case UVSHIM_SEL_IRQ_DISARM: return check_irq(in, false);
	case UVSHIM_SEL_RESET: return check_reset(in);
	case UVSHIM_SEL_GRANT: return check_grant(in);
	case UVSHIM_SEL_REVOKE: return check_grant(in);
	case UVSHIM_SEL_PIN_FOR: return check_pin_for(in, page_size);
	}
	return -UVSHIM_ENOSYS;
}
