/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Shim registry: picks the implementation for a device URI by its scheme. */
#include "hw/shim/shim.h"
#include "hw/shim/backend.h"
#include "hw/platform/vm.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHIM_MAX_IMPLS 8

static const struct shim_ops *shim_impls[SHIM_MAX_IMPLS];
static size_t shim_nimpls;

/* Built-in implementations, each defined in its own file when the build compiles it in
 * (hw/shim/CMakeLists.txt sets SHIM_HAVE_*).  The references are strong where the file
 * is built, so a static link always carries the implementation along. */
#if SHIM_HAVE_EMU
extern const struct shim_ops shim_emu_ops;
#define SHIM_EMU (&shim_emu_ops)
#define SHIM_EMU_NAME " emu:"
#else
#define SHIM_EMU NULL
#define SHIM_EMU_NAME ""
#endif
#if SHIM_HAVE_VFIO
extern const struct shim_ops shim_vfio_ops;
#define SHIM_VFIO (&shim_vfio_ops)
#define SHIM_VFIO_NAME " vfio:<BDF>"
#else
#define SHIM_VFIO NULL
#define SHIM_VFIO_NAME ""
#endif
#if SHIM_HAVE_KEXT
extern const struct shim_ops shim_kext_ops;
#define SHIM_KEXT (&shim_kext_ops)
#define SHIM_KEXT_NAME " kext:<N>"
#else
#define SHIM_KEXT NULL
#define SHIM_KEXT_NAME ""
#endif

#if SHIM_HAVE_UVD
extern const struct shim_ops shim_uvd_ops;
#define SHIM_UVD (&shim_uvd_ops)
#else
#define SHIM_UVD NULL
#endif

int shim_register(const struct shim_ops *ops)
{
	if (!ops || !ops->scheme || !ops->open)
		return -EINVAL;
	for (size_t i = 0; i < shim_nimpls; i++)
		if (strcmp(shim_impls[i]->scheme, ops->scheme) == 0) {
			shim_impls[i] = ops;
			return 0;
		}
	if (shim_nimpls == SHIM_MAX_IMPLS)
		return -ENOSPC;
	shim_impls[shim_nimpls++] = ops;
	return 0;
}

static const struct shim_ops *shim_find(const char *scheme, size_t len)
{
	const struct shim_ops *builtin[] = { SHIM_EMU, SHIM_VFIO, SHIM_KEXT, SHIM_UVD };

	for (size_t i = 0; i < shim_nimpls; i++)
		if (strlen(shim_impls[i]->scheme) == len && strncmp(shim_impls[i]->scheme, scheme, len) == 0)
			return shim_impls[i];
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (builtin[i] != NULL && strlen(builtin[i]->scheme) == len &&
		    strncmp(builtin[i]->scheme, scheme, len) == 0)
			return builtin[i];
	return NULL;
}

int shim_open(const char *uri, struct shim_dev **out, char *err, size_t errlen)
{
	const char *colon;
	const struct shim_ops *ops;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!uri || !out)
		return shim_errbuf(err, errlen, -EINVAL, "no device URI given");
	colon = strchr(uri, ':');
	if (!colon)
		return shim_errbuf(err, errlen, -EINVAL, "device URI '%s' has no scheme (expected emu:, vfio:<BDF> or kext:<N>)", uri);
	ops = shim_find(uri, (size_t)(colon - uri));
	if (!ops)
		return shim_errbuf(err, errlen, -ENODEV, "unknown device scheme in '%s' (this build knows"
			 SHIM_EMU_NAME SHIM_VFIO_NAME SHIM_KEXT_NAME ")", uri);
	*out = NULL;
	rc = ops->open(colon + 1, out);
	if (rc < 0 && err) {
		if (*out)
			snprintf(err, errlen, "%s", (*out)->err);
		else
			snprintf(err, errlen, "%s: %s", uri, strerror(-rc));
	}
	if (rc < 0 && *out) {
		ops->close(*out);
		*out = NULL;
	}
	return rc;
}

void shim_close(struct shim_dev *dev)
{
	if (dev)
		dev->ops->close(dev);
}

int shim_errbuf(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

void shim_errf(struct shim_dev *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->err, sizeof(d->err), fmt, ap);
	va_end(ap);
}

int shim_dev_new(struct shim_dev **out, size_t size, const struct shim_ops *ops, struct shim_dev **dev)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	*dev = calloc(1, size);
	if (!*dev)
		return -ENOMEM;
	(*dev)->ops = ops;
	return 0;
}

void shim_handle_release(struct shim_dev *dev, pthread_mutex_t *lock, void *handle, size_t size, void *priv,
			 void (*release)(struct shim_dev *dev, void *priv))
{
	if (!handle || !priv)
		return;
	if (lock)
		pthread_mutex_lock(lock);
	release(dev, priv);
	if (lock)
		pthread_mutex_unlock(lock);
	memset(handle, 0, size);
}

int shim_pin_check(struct shim_dev *dev, const char *who, void *va, size_t len, int *readonly)
{
	unsigned prot = 0;
	int rc = plat_vm_query(va, len, &prot);

	if (rc == -EFAULT || (rc == 0 && !(prot & PLAT_VM_READ))) {
		shim_errf(dev, "%s: %zu bytes at %p are %s in this process", who, len, va,
			  rc ? "not mapped" : "not accessible (PROT_NONE)");
		return -EFAULT;
	}
	if (rc < 0) {
		shim_errf(dev, rc == -EINVAL ? "%s: %zu bytes at %p wrap around"
			  : "%s: cannot read the memory map for %zu bytes at %p", who, len, va);
		return rc;
	}
	*readonly = !(prot & PLAT_VM_WRITE);
	return 0;
}
