/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/shim/backend.h: what the shim back-ends (emu.c, vfio.c, kext.c, uvd.c) share beside
 * the interface in shim.h: the device's error text, the start of open, and the list of
 * DMA buffers and pins a back-end holds so that close can release what the driver
 * left.  Private to hw/shim; callers of the shim see shim.h only. */
#ifndef UVERBS_HW_SHIM_BACKEND_H
#define UVERBS_HW_SHIM_BACKEND_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "hw/platform/list.h"
#include "hw/shim/shim.h"

/* Format the device's last error (shim_dev.err), printf style. */
void shim_errf(struct shim_dev *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Write a message into a caller's buffer (err NULL: none) and return rc: the error
 * path of the functions that report into (err, errlen) before any device exists. */
int shim_errbuf(char *err, size_t errlen, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Registration of this process's own pages by a shim whose device reaches them
 * itself (emu.c, uvd.c with an engine): VFIO and the kext pin with get_user_pages /
 * IODMACommand, which refuse memory the process has not mapped (EFAULT) and pin pages
 * that are not writable only for reading, so these shims look at the process's own
 * map (hw/platform/vm.h) the same way.  0 with *readonly set (the driver then refuses
 * a writable registration of it with EFAULT, as Linux's ib_umem_get does), or -errno
 * with the reason in dev->err; `who` starts the message ("emu", "uvd"). */
int shim_pin_check(struct shim_dev *dev, const char *who, void *va, size_t len, int *readonly);

/* The start of every back-end's open: refuses a NULL out (-EINVAL), clears *out,
 * allocates the device zeroed (size bytes, which begin with its struct shim_dev) with
 * ops set, and gives it in *dev; 0 or -ENOMEM. */
int shim_dev_new(struct shim_dev **out, size_t size, const struct shim_ops *ops, struct shim_dev **dev);

/* dma_free and dma_unpin of a back-end whose handle (a struct shim_dma or shim_pin of
 * size bytes) keeps its record in priv: a handle without one is left alone; else
 * release(dev, priv) runs, under lock unless that is NULL, and the handle is cleared. */
void shim_handle_release(struct shim_dev *dev, pthread_mutex_t *lock, void *handle, size_t size, void *priv,
			 void (*release)(struct shim_dev *dev, void *priv));

#endif
