/* Shim registry: picks the implementation for a device URI by its scheme. */
#include "hw/shim/shim.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define SHIM_MAX_IMPLS 8

static const struct shim_ops *shim_impls[SHIM_MAX_IMPLS];
static size_t shim_nimpls;

/* Built-in implementations, each defined in its own file when it is compiled in. */
extern const struct shim_ops shim_emu_ops __attribute__((weak));
extern const struct shim_ops shim_vfio_ops __attribute__((weak));
extern const struct shim_ops shim_kext_ops __attribute__((weak));

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
	const struct shim_ops *builtin[] = { &shim_emu_ops, &shim_vfio_ops, &shim_kext_ops };

	for (size_t i = 0; i < shim_nimpls; i++)
		if (strlen(shim_impls[i]->scheme) == len && strncmp(shim_impls[i]->scheme, scheme, len) == 0)
			return shim_impls[i];
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (builtin[i] && strlen(builtin[i]->scheme) == len &&
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
	if (!uri || !out) {
		if (err)
			snprintf(err, errlen, "no device URI given");
		return -EINVAL;
	}
	colon = strchr(uri, ':');
	if (!colon) {
		if (err)
			snprintf(err, errlen, "device URI '%s' has no scheme (expected emu:, vfio:<BDF> or kext:<N>)", uri);
		return -EINVAL;
	}
	ops = shim_find(uri, (size_t)(colon - uri));
	if (!ops) {
		if (err)
			snprintf(err, errlen, "unknown device scheme in '%s' (this build knows emu:%s%s)", uri,
				 &shim_vfio_ops ? ", vfio:" : "", &shim_kext_ops ? ", kext:" : "");
		return -ENODEV;
	}
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
