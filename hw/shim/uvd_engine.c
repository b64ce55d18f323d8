/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The engine of a device daemon's client (uvd_engine.h): hw/emu's client engine
 * (hw/emu/engine.c) behind the few calls hw/shim/uvd.c makes.  Like emu.c, the one
 * file of hw/shim that drives the emulator (docs/architecture.md, "Layer rules"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/emu/emu.h"
#include "hw/shim/uvd_engine.h"

static void engine_event(void *arg, uint8_t type, uint8_t sub_type, const uint8_t *data)
{
	const struct uvd_engine_sink *s = arg;
	struct shim_remote_event ev = { .kind = SHIM_REMOTE_EQE, .type = type, .eqe_type = sub_type };

	if (emu_event_object(type, data, &ev.num, &ev.syndrome))
		ev = (struct shim_remote_event){ .kind = SHIM_REMOTE_COMP, .num = ev.num };
	s->fn(s->arg, &ev);
}

int uvd_engine_create(uint32_t ipv4, int fd, const char *opts, size_t page_size, struct uvd_engine_sink *sink,
		      struct emu_dev **out, char *err, size_t errlen)
{
	struct emu_config cfg;
	char why[400];
	int rc;

	memset(&cfg, 0, sizeof(cfg));
	rc = emu_config_parse(opts, &cfg, why, sizeof(why));
	if (rc) {
		snprintf(err, errlen, "uvd: the daemon's data-plane options for the engine: %s", why);
		close(fd);
		return rc;
	}
	cfg.ipv4 = ipv4;
	cfg.udp_fd = fd;
	cfg.engine = 1;
	cfg.host_page_size = page_size;
	rc = emu_create(&cfg, out, err, errlen);
	if (rc) {
		close(fd);
		return rc;
	}
	emu_set_event_sink(*out, engine_event, sink);
	return 0;
}

void uvd_engine_destroy(struct emu_dev *e)
{
	emu_destroy(e);
}

uint8_t *uvd_engine_bar(struct emu_dev *e, size_t *len)
{
	*len = emu_bar_len(e);
	return (uint8_t *)(uintptr_t)emu_bar_base(e);
}

void uvd_engine_store(struct emu_dev *e, enum shim_mmio_op op, uint64_t off, unsigned size)
{
	emu_mmio_access(e, (int)op, off, size);
}

void uvd_engine_poll(struct emu_dev *e)
{
	emu_poll_assist(e);
}

void uvd_engine_found(struct emu_dev *e, uint32_t qpn)
{
	emu_poll_found(e, qpn);
}

int uvd_engine_map(struct emu_dev *e, void *va, size_t len, bool app, const struct shim_iova_seg *segs,
		   uint32_t nseg, uint64_t *map_id)
{
	_Static_assert(sizeof(struct emu_iova_seg) == sizeof(struct shim_iova_seg), "IOVA segments");
	return emu_iommu_map_at(e, va, len, app ? EMU_IOMMU_APP : EMU_IOMMU_CONTIGUOUS,
				(const struct emu_iova_seg *)segs, nseg, map_id);
}

void uvd_engine_unmap(struct emu_dev *e, uint64_t map_id)
{
	emu_iommu_unmap(e, map_id);
}

int uvd_engine_apply(struct emu_dev *e, const void *in, size_t inlen, void *out, size_t outlen, char *msg,
		     size_t msglen)
{
	uint8_t st = 0;
	uint16_t op = (uint16_t)(((const uint8_t *)in)[0] << 8 | ((const uint8_t *)in)[1]);
	void *local = emu_engine_answers(op) ? malloc(outlen) : NULL;
	int rc = emu_engine_cmd(e, in, inlen, out, local, outlen, &st);

	if (rc == 1 && st == 0 && local)
		memcpy(out, local, outlen);
	free(local);
	if (rc < 0 || (rc == 1 && st != 0)) {
		if (msglen)
			snprintf(msg, msglen, "the client's engine refused command 0x%x that the daemon ran (%s)", op,
				 rc < 0 ? strerror(-rc) : "firmware status");
		return rc < 0 ? rc : -EIO;
	}
	return 0;
}

size_t uvd_engine_undo(const void *in, const void *out, void *undo, size_t undolen)
{
	return emu_engine_undo(in, out, undo, undolen);
}

void uvd_engine_remove(struct emu_dev *e)
{
	emu_surprise_remove(e);
}

uint32_t uvd_engine_ipv4(struct emu_dev *e)
{
	return emu_ipv4(e);
}
