/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The engine of a device daemon's client (private to hw/shim): what hw/shim/uvd.c needs
 * of the emulated NIC's data plane when the daemon's clients run it themselves
 * (UVD_FEAT_ENGINE; hw/emu/engine.c, docs/architecture.md "Several processes: uvd").
 * Only uvd_engine.c calls the emulator, as only emu.c does for the "emu:" shim; uvd.c
 * sees an opaque device.  Errors: 0 or -errno. */
#ifndef UVERBS_HW_SHIM_UVD_ENGINE_H
#define UVERBS_HW_SHIM_UVD_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw/shim/shim.h"

struct emu_dev;

/* Where an engine's events go: fn(arg, event), with the engine's lock held (fn must not
 * call back into it).  The caller keeps it alive as long as the engine. */
struct uvd_engine_sink {
	void (*fn)(void *arg, const struct shim_remote_event *ev);
	void *arg;
};
/* An engine on the socket `fd` the daemon bound to ipv4:4791 (taken over: closed with
 * the engine, or on failure), with the daemon's data-plane options `opts` (the ENGINE
 * reply's tail, emu: URI syntax, "" for the defaults); host pages of page_size. */
int uvd_engine_create(uint32_t ipv4, int fd, const char *opts, size_t page_size, struct uvd_engine_sink *sink,
		      struct emu_dev **out, char *err, size_t errlen);
void uvd_engine_destroy(struct emu_dev *e);
/* Its BAR0, which is the client's BAR0: the driver stores there, then calls store. */
uint8_t *uvd_engine_bar(struct emu_dev *e, size_t *len);
void uvd_engine_store(struct emu_dev *e, enum shim_mmio_op op, uint64_t off, unsigned size);
/* A CQ poll found nothing: take the arrivals off the socket in this thread. */
void uvd_engine_poll(struct emu_dev *e);
/* A CQ poll returned an RDMA WRITE's completion of QP qpn (emu_poll_found). */
void uvd_engine_found(struct emu_dev *e, uint32_t qpn);
/* The client's memory at the daemon's IOVAs (app: registered memory, which may vanish
 * under the device), and back. */
int uvd_engine_map(struct emu_dev *e, void *va, size_t len, bool app, const struct shim_iova_seg *segs,
		   uint32_t nseg, uint64_t *map_id);
void uvd_engine_unmap(struct emu_dev *e, uint64_t map_id);
/* A command the daemon ran with success: applied here too; a query of what only the
 * engine knows gets its answer in out.  -EIO, with msg, when the engine refuses it. */
int uvd_engine_apply(struct emu_dev *e, const void *in, size_t inlen, void *out, size_t outlen, char *msg,
		     size_t msglen);
/* A CREATE or ALLOC the engine refused: the 16-byte DESTROY or DEALLOC that gives the
 * daemon's object back (written to undo), or 0. */
size_t uvd_engine_undo(const void *in, const void *out, void *undo, size_t undolen);
/* The daemon is gone: the engine stops as a pulled device (no packet, no DMA). */
void uvd_engine_remove(struct emu_dev *e);
/* Its address, host order. */
uint32_t uvd_engine_ipv4(struct emu_dev *e);

#endif
