/* UVERBS_LOG=error|warn|info|debug: one line per message on stderr, nothing otherwise
 * (library code never prints unasked; conventions "Errors and logging"). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uverbs/uv.h"

/* Read on every message (messages are rare: failures and open/close), so a program
 * may change UVERBS_LOG while it runs. */
static int uv_log_level(void)
{
	const char *s = getenv("UVERBS_LOG");
	if (!s)
		return UV_LOG_NONE;
	if (!strcmp(s, "error")) return UV_LOG_ERROR;
	if (!strcmp(s, "warn")) return UV_LOG_WARN;
	if (!strcmp(s, "info")) return UV_LOG_INFO;
	if (!strcmp(s, "debug")) return UV_LOG_DEBUG;
	return UV_LOG_NONE;
}

void uv_log(enum uv_log_level lvl, const char *fmt, ...)
{
	static const char *names[] = { "", "error", "warn", "info", "debug" };
	if ((int)lvl > uv_log_level() || lvl == UV_LOG_NONE)
		return;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "uverbs %s: %s\n", names[lvl], line);
}

void uv_unsupported(const char *what)
{
	uv_log(UV_LOG_WARN, "%s: not supported by this driver (EOPNOTSUPP)", what);
	errno = EOPNOTSUPP;
}
