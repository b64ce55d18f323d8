/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* UVERBS_LOG=error|warn|info|debug: one line per message on stderr, nothing otherwise
 * (library code never prints unasked; conventions "Errors and logging"). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/platform/log_level.h"
#include "uverbs/uv.h"


void uv_log(enum uv_log_level lvl, const char *fmt, ...)
{
	/* UVERBS_LOG is read on every message (messages are rare: failures and open/close),
	 * so a program may change it while it runs. */
	if ((int)lvl > (int)plat_log_level_env() || lvl == UV_LOG_NONE)
		return;
	va_list ap;
	va_start(ap, fmt);
	plat_log_vprint(NULL, (enum plat_log_level)lvl, fmt, ap);
	va_end(ap);
}

/* rdma-core's mlx5 provider reads MLX_{CQ,QP,SRQ}_ALLOC_TYPE (providers/mlx5/buf.c,
 * mlx5_get_alloc_type): "HUGE" means the queue buffer in huge pages or no queue at all
 * (mlx5_alloc_buf_huge, no fallback).  Our queue buffers come from the shim's DMA
 * allocator, never from huge pages, so HUGE is refused as that provider refuses it on a
 * host without huge pages; every other value (ANON, PREFER_HUGE, ...) falls back to
 * ordinary pages, which is what those values allow. */
bool uv_alloc_type_refused(const char *env)
{
	const char *v = getenv(env);
	if (!v || strcmp(v, "HUGE") != 0)
		return false;
	uv_log(UV_LOG_WARN, "%s=HUGE: queue buffers are never in huge pages here (ENOMEM)", env);
	errno = ENOMEM;
	return true;
}

void uv_unsupported(const char *what)
{
	uv_log(UV_LOG_WARN, "%s: not supported by this driver (EOPNOTSUPP)", what);
	errno = EOPNOTSUPP;
}
