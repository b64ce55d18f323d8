/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Firmware pages (PRM "Firmware Pages"; QUERY_PAGES 0x107, MANAGE_PAGES 0x108,
 * PAGE_REQUEST event 0xb).
 *
 * The device asks for 4 KiB pages at boot (op_mod 1), before INIT_HCA (op_mod 2) and at
 * any time after (PAGE_REQUEST events, positive to give, negative to reclaim).  Host
 * memory comes from the shim in chunks that are whole host pages (16 KiB on Apple
 * Silicon, whose DART maps at 16 KiB) and are carved into firmware pages; a chunk goes
 * back to the shim when the device holds none of its pages. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw/mlx5/mx5_internal.h"

/* Pages per MANAGE_PAGES command: 8 bytes of pas each, within the engine's default
 * 1 MiB mailbox limit and small enough to keep one command short. */
#define MX5_PAGES_PER_CMD 512u
#define MX5_CHUNK_MIN_BYTES (256u * 1024u)
#define MX5_CHUNK_MAX_FW_PAGES 64u

enum { MX5_MANAGE_PAGES_GIVE = 1, MX5_MANAGE_PAGES_TAKE = 2 };

static size_t mx5_chunk_bytes(struct mx5_device *dev)
{
	if (!dev->pages.chunk_bytes) {
		size_t b = dev->host_page > MX5_CHUNK_MIN_BYTES ? dev->host_page : MX5_CHUNK_MIN_BYTES;
		if (b / MX5_FW_PAGE_SIZE > MX5_CHUNK_MAX_FW_PAGES)
			b = dev->host_page; /* very large host pages: one page per chunk */
		dev->pages.chunk_bytes = b;
	}
	return dev->pages.chunk_bytes;
}

int mx5_pages_query(struct mx5_device *dev, unsigned op_mod, int32_t *npages)
{
	uint8_t in[PRM_SIZE(query_pages_in)] = { 0 }, out[PRM_SIZE(query_pages_out)];
	PRM_SET(query_pages_in, in, opcode, PRM_CMD_OP_QUERY_PAGES);
	PRM_SET(query_pages_in, in, op_mod, op_mod);
	int rc = mx5_exec(dev, in, sizeof(in), out, sizeof(out));
	if (rc)
		return mx5_cmd_fail(dev, rc, op_mod == 1 ? "bring-up: boot pages"
					     : op_mod == 2 ? "bring-up: init pages" : "pages");
	/* num_pages is signed: negative means the device has pages to return */
	*npages = (int32_t)(uint32_t)PRM_GET(query_pages_out, out, num_pages);
	return 0;
}

/* Chunks are kept sorted by IOVA so that a returned page finds its chunk by binary
 * search (a ConnectX-4 wants ~12,900 init pages: linear scans would cost seconds). */
static size_t mx5_chunk_find(const struct mx5_pages *p, uint64_t iova)
{
	size_t lo = 0, hi = p->nchunks;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->chunks[mid].dma.iova <= iova)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;  /* first chunk above iova; the candidate is lo - 1 */
}

static bool mx5_chunk_full(const struct mx5_page_chunk *c)
{
	uint64_t full = c->npages == 64 ? ~0ull : ((1ull << c->npages) - 1);
	return c->used == full;
}

/* Find a free firmware page, adding a chunk when none is left. */
static int mx5_page_get(struct mx5_device *dev, uint64_t *iova)
{
	struct mx5_pages *p = &dev->pages;
	for (size_t n = 0; n < p->nchunks; n++) {
		size_t i = (p->hint + n) % p->nchunks;
		struct mx5_page_chunk *c = &p->chunks[i];
		if (!mx5_chunk_full(c)) {
			unsigned b = (unsigned)__builtin_ctzll(~c->used);
			c->used |= 1ull << b;
			*iova = c->dma.iova + (uint64_t)b * MX5_FW_PAGE_SIZE;
			p->hint = i;
			return 0;
		}
	}
	if (p->nchunks == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 16;
		struct mx5_page_chunk *n = realloc(p->chunks, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->chunks = n;
		p->cap = ncap;
	}
	struct mx5_page_chunk c;
	memset(&c, 0, sizeof(c));
	size_t bytes = mx5_chunk_bytes(dev);
	int rc = shim_dma_alloc(dev->shim, bytes, dev->host_page, &c.dma);
	if (rc)
		return rc;
	/* The firmware addresses each page by its IOVA; pas entries need 4 KiB
	 * alignment (low 12 bits reserved). */
	if (c.dma.iova & (MX5_FW_PAGE_SIZE - 1)) {
		shim_dma_free(dev->shim, &c.dma);
		return -EFAULT;
	}
	c.npages = (unsigned)(bytes / MX5_FW_PAGE_SIZE);
	c.used = 1;
	size_t at = mx5_chunk_find(p, c.dma.iova);
	memmove(&p->chunks[at + 1], &p->chunks[at], (p->nchunks - at) * sizeof(c));
	p->chunks[at] = c;
	p->nchunks++;
	p->hint = at;
	p->st.host_bytes += bytes;
	*iova = c.dma.iova;
	return 0;
}

/* Release one firmware page by IOVA; frees its chunk when it became empty. */
static int mx5_page_put(struct mx5_device *dev, uint64_t iova)
{
	struct mx5_pages *p = &dev->pages;
	size_t i = mx5_chunk_find(p, iova);
	if (i == 0)
		return -ENOENT;
	i--;
	struct mx5_page_chunk *c = &p->chunks[i];
	if (iova >= c->dma.iova + (uint64_t)c->npages * MX5_FW_PAGE_SIZE)
		return -ENOENT;
	unsigned b = (unsigned)((iova - c->dma.iova) / MX5_FW_PAGE_SIZE);
	if (!(c->used & (1ull << b)))
		return -EINVAL;
	c->used &= ~(1ull << b);
	if (!c->used) {
		p->st.host_bytes -= (uint64_t)c->npages * MX5_FW_PAGE_SIZE;
		shim_dma_free(dev->shim, &c->dma);
		memmove(&p->chunks[i], &p->chunks[i + 1], (p->nchunks - i - 1) * sizeof(*c));
		p->nchunks--;
		if (p->hint >= p->nchunks)
			p->hint = 0;
	}
	return 0;
}

int mx5_pages_give(struct mx5_device *dev, uint32_t n, unsigned stage)
{
	const char *what = stage == 1 ? "bring-up: boot pages" : stage == 2 ? "bring-up: init pages"
							      : "page request";
	size_t inlen = PRM_SIZE(manage_pages_in) + (size_t)MX5_PAGES_PER_CMD * 8;
	uint8_t *in = malloc(inlen);
	uint8_t out[PRM_SIZE(manage_pages_out)];
	uint64_t *iovas = malloc(MX5_PAGES_PER_CMD * sizeof(uint64_t));
	int rc = 0;
	if (!in || !iovas) {
		rc = mx5_fail(dev, -ENOMEM, "%s: out of memory", what);
		goto out;
	}
	while (n) {
		uint32_t batch = n < MX5_PAGES_PER_CMD ? n : MX5_PAGES_PER_CMD;
		uint32_t got = 0;
		for (; got < batch; got++) {
			rc = mx5_page_get(dev, &iovas[got]);
			if (rc)
				break;
		}
		memset(in, 0, inlen);
		PRM_SET(manage_pages_in, in, opcode, PRM_CMD_OP_MANAGE_PAGES);
		/* op_mod 1: allocation success -- the device gets the pages in pas.  When the
		 * host ran out of memory part-way, op_mod 0 (allocation fail) tells it so. */
		PRM_SET(manage_pages_in, in, op_mod, got ? MX5_MANAGE_PAGES_GIVE : 0);
		PRM_SET(manage_pages_in, in, input_num_entries, got);
		uint8_t *pas = PRM_ADDR(manage_pages_in, in, pas);
		for (uint32_t i = 0; i < got; i++) {
			uint64_t be = htobe64(iovas[i]);
			memcpy(pas + (size_t)i * 8, &be, 8);
		}
		int crc = mx5_exec(dev, in, PRM_SIZE(manage_pages_in) + (size_t)got * 8, out,
				   sizeof(out));
		if (crc) {
			for (uint32_t i = 0; i < got; i++)
				mx5_page_put(dev, iovas[i]);
			rc = mx5_cmd_fail(dev, crc, what);
			goto out;
		}
		if (rc) {
			/* Name the numbers: the firmware decides how many pages it needs (QUERY_PAGES,
			 * PAGE_REQUEST) and the driver sets no cap below it, so the remedy is on the
			 * host (a pinned-memory limit: ulimit -l for VFIO, UvShimMaxPinnedMB for the
			 * kext) and the user needs to know how much to allow. */
			uint64_t total = dev->pages.st.given + n;
			rc = mx5_fail(dev, rc, "%s: the host could not pin firmware page %llu of %llu "
				      "(%llu MiB of 4 KiB pages asked by the firmware): %s%s%s", what,
				      (unsigned long long)(dev->pages.st.given + got + 1), (unsigned long long)total,
				      (unsigned long long)((total * MX5_FW_PAGE_SIZE + (1u << 20) - 1) >> 20),
				      strerror(-rc), dev->shim->err[0] ? ": " : "", dev->shim->err);
			goto out;
		}
		dev->pages.st.given += got;
		if (stage == 1)
			dev->pages.st.boot += got;
		else if (stage == 2)
			dev->pages.st.init += got;
		else
			dev->pages.st.regular += got;
		n -= got;
	}
out:
	free(in);
	free(iovas);
	return rc;
}

int mx5_pages_reclaim(struct mx5_device *dev, uint32_t n, uint32_t *got)
{
	uint8_t in[PRM_SIZE(manage_pages_in)] = { 0 };
	uint32_t batch = n < MX5_PAGES_PER_CMD ? n : MX5_PAGES_PER_CMD;
	size_t outlen = PRM_SIZE(manage_pages_out) + (size_t)batch * 8;
	uint8_t *out = malloc(outlen);
	*got = 0;
	if (!out)
		return mx5_fail(dev, -ENOMEM, "page reclaim: out of memory");
	PRM_SET(manage_pages_in, in, opcode, PRM_CMD_OP_MANAGE_PAGES);
	PRM_SET(manage_pages_in, in, op_mod, MX5_MANAGE_PAGES_TAKE);
	PRM_SET(manage_pages_in, in, input_num_entries, batch);
	int rc = mx5_exec(dev, in, sizeof(in), out, outlen);
	if (rc) {
		free(out);
		return mx5_cmd_fail(dev, rc, "page reclaim");
	}
	uint32_t ret = (uint32_t)PRM_GET(manage_pages_out, out, output_num_entries);
	if (ret > batch) {
		free(out);
		return mx5_fail(dev, -EPROTO, "page reclaim: MANAGE_PAGES returned %u pages, asked %u",
				ret, batch);
	}
	const uint8_t *pas = PRM_ADDR(manage_pages_out, out, pas);
	for (uint32_t i = 0; i < ret; i++) {
		uint64_t be;
		memcpy(&be, pas + (size_t)i * 8, 8);
		uint64_t iova = be64toh(be) & ~(uint64_t)(MX5_FW_PAGE_SIZE - 1);
		if (mx5_page_put(dev, iova)) {
			free(out);
			return mx5_fail(dev, -EPROTO,
					"page reclaim: device returned page 0x%llx it was never given",
					(unsigned long long)iova);
		}
		dev->pages.st.given--;
		dev->pages.st.reclaimed++;
	}
	free(out);
	*got = ret;
	return 0;
}

int mx5_pages_reclaim_all(struct mx5_device *dev)
{
	/* Bounded: each round must return something, else the device keeps pages it was
	 * asked for and we stop rather than loop. */
	while (dev->pages.st.given) {
		uint32_t got = 0;
		int rc = mx5_pages_reclaim(dev, (uint32_t)(dev->pages.st.given > UINT32_MAX
							   ? UINT32_MAX : dev->pages.st.given), &got);
		if (rc)
			return rc;
		if (!got)
			return mx5_fail(dev, -EBUSY, "teardown: device still holds %llu pages and returns none",
					(unsigned long long)dev->pages.st.given);
	}
	return 0;
}

void mx5_pages_free_all(struct mx5_device *dev)
{
	struct mx5_pages *p = &dev->pages;
	for (size_t i = 0; i < p->nchunks; i++)
		shim_dma_free(dev->shim, &p->chunks[i].dma);
	free(p->chunks);
	p->chunks = NULL;
	p->nchunks = p->cap = 0;
	p->hint = 0;
	p->st.given = 0;
	p->st.host_bytes = 0;
}

/* A PAGE_REQUEST event: positive num_pages to give, negative to reclaim.  Inside a
 * command's wait (dev->cmd_nested) these MANAGE_PAGES go through the second slot. */
int mx5_pages_request(struct mx5_device *dev, int32_t npages)
{
	if (npages > 0)
		return mx5_pages_give(dev, (uint32_t)npages, 3);
	uint32_t want = (uint32_t)(-(int64_t)npages), got = 0;
	while (want) {
		int rc = mx5_pages_reclaim(dev, want, &got);
		if (rc)
			return rc;
		if (!got)
			break;
		want -= got < want ? got : want;
	}
	return 0;
}

/* A PAGE_REQUEST with the release-all flag: the firmware let go of every page it held,
 * so they are freed here with no MANAGE_PAGES (Linux pagealloc.c release_all_pages). */
void mx5_pages_released_all(struct mx5_device *dev)
{
	uint64_t n = dev->pages.st.given;

	mx5_pages_free_all(dev);
	dev->pages.st.reclaimed += n;
	dev->pages.st.released_all++;
}

void mx5_device_page_stats(const struct mx5_device *dev, struct mx5_page_stats *st)
{
	*st = dev->pages.st;
}
