/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Classic pcap: a 24-byte global header (magic 0xa1b2c3d4 for µs, 0xa1b23c4d for ns,
 * version 2.4, snaplen, link type) then records of a 16-byte header (seconds,
 * fraction, captured length, original length) and the captured bytes. */
#include "tests/common/pcap_file.h"

#include <errno.h>
#include <string.h>

#define MAGIC_US 0xa1b2c3d4u
#define MAGIC_NS 0xa1b23c4du

static uint32_t rd32(const uint8_t *b, bool swap)
{
	uint32_t v;

	memcpy(&v, b, 4);
	return swap ? __builtin_bswap32(v) : v;
}

int pcap_file_open(struct pcap_file *p, const char *path)
{
	uint8_t h[24];
	uint32_t magic;

	memset(p, 0, sizeof(*p));
	p->f = fopen(path, "rb");
	if (!p->f)
		return -errno;
	if (fread(h, 1, sizeof(h), p->f) != sizeof(h))
		goto bad;
	memcpy(&magic, h, 4);
	if (magic == MAGIC_US || magic == MAGIC_NS) {
		p->swap = false;
	} else if (__builtin_bswap32(magic) == MAGIC_US || __builtin_bswap32(magic) == MAGIC_NS) {
		p->swap = true;
		magic = __builtin_bswap32(magic);
	} else {
		goto bad;
	}
	p->nsec = magic == MAGIC_NS;
	p->snaplen = rd32(h + 16, p->swap);
	p->linktype = rd32(h + 20, p->swap);
	return 0;
bad:
	fclose(p->f);
	p->f = NULL;
	return -EBADMSG;
}

int pcap_file_next(struct pcap_file *p, uint8_t *buf, size_t cap, size_t *caplen, size_t *origlen,
		   uint64_t *ts_ns)
{
	uint8_t h[16];
	size_t n = fread(h, 1, sizeof(h), p->f);
	uint32_t incl, orig, sec, frac;

	if (n == 0 && feof(p->f))
		return 0;
	if (n != sizeof(h))
		return -EBADMSG;
	sec = rd32(h, p->swap);
	frac = rd32(h + 4, p->swap);
	incl = rd32(h + 8, p->swap);
	orig = rd32(h + 12, p->swap);
	if (incl > orig || incl > 0x40000)
		return -EBADMSG;
	if (incl > cap)
		return -EMSGSIZE;
	if (fread(buf, 1, incl, p->f) != incl)
		return -EBADMSG;
	*caplen = incl;
	if (origlen)
		*origlen = orig;
	if (ts_ns)
		*ts_ns = (uint64_t)sec * 1000000000u + (uint64_t)frac * (p->nsec ? 1u : 1000u);
	p->records++;
	return 1;
}

int pcap_file_create(struct pcap_file *p, const char *path, uint32_t linktype)
{
	/* host byte order throughout, as libpcap writes: readers detect it by the magic */
	uint32_t magic = MAGIC_US, zero = 0, snap = 65535;
	uint16_t major = 2, minor = 4;
	uint8_t h[24];

	memset(p, 0, sizeof(*p));
	memcpy(h, &magic, 4);
	memcpy(h + 4, &major, 2);
	memcpy(h + 6, &minor, 2);
	memcpy(h + 8, &zero, 4);        /* thiszone */
	memcpy(h + 12, &zero, 4);       /* sigfigs */
	memcpy(h + 16, &snap, 4);
	memcpy(h + 20, &linktype, 4);
	p->f = fopen(path, "wb");
	if (!p->f)
		return -errno;
	p->writing = true;
	p->linktype = linktype;
	p->snaplen = snap;
	if (fwrite(h, 1, sizeof(h), p->f) != sizeof(h))
		return -EIO;
	return 0;
}

int pcap_file_write(struct pcap_file *p, const uint8_t *frame, size_t len, uint64_t ts_ns)
{
	uint32_t h[4];

	if (!p->f || !p->writing || len > p->snaplen)
		return -EINVAL;
	h[0] = (uint32_t)(ts_ns / 1000000000u);
	h[1] = (uint32_t)(ts_ns % 1000000000u / 1000u);
	h[2] = h[3] = (uint32_t)len;
	if (fwrite(h, 1, sizeof(h), p->f) != sizeof(h) || fwrite(frame, 1, len, p->f) != len)
		return -EIO;
	p->records++;
	return 0;
}

int pcap_file_close(struct pcap_file *p)
{
	int rc = 0;

	if (!p->f)
		return 0;
	if (p->writing && (ferror(p->f) || fflush(p->f) != 0))
		rc = -EIO;
	if (fclose(p->f) != 0 && p->writing)
		rc = -EIO;
	p->f = NULL;
	return rc;
}
