/* UVERBS_LOG=error|warn|info|debug: one line per message on stderr, nothing otherwise
 * (library code never prints unasked; conventions "Errors and logging"). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uverbs/uv.h"

static int uv_log_level(void)
{
	static int level = -1;
	if (level < 0) {
		const char *s = getenv("UVERBS_LOG");
		int l = UV_LOG_NONE;
		if (s) {
			if (!strcmp(s, "error")) l = UV_LOG_ERROR;
			else if (!strcmp(s, "warn")) l = UV_LOG_WARN;
			else if (!strcmp(s, "info")) l = UV_LOG_INFO;
			else if (!strcmp(s, "debug")) l = UV_LOG_DEBUG;
		}
		level = l;
	}
	return level;
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
