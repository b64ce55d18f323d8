/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* UVERBS_LOG=error|warn|info|debug, read the same way by every layer's logger
 * (hw/mlx5/device.c mx5_log, hw/emu/log.c emu_log, uverbs/log.c uv_log), and the one
 * line format they print.  No platform difference: one copy here, below all three. */
#ifndef UVERBS_HW_PLATFORM_LOG_LEVEL_H
#define UVERBS_HW_PLATFORM_LOG_LEVEL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum plat_log_level { PLAT_LOG_NONE = 0, PLAT_LOG_ERROR, PLAT_LOG_WARN, PLAT_LOG_INFO, PLAT_LOG_DEBUG };

/* The level UVERBS_LOG asks for now; PLAT_LOG_NONE when unset, empty or unknown. */
static inline enum plat_log_level plat_log_level_env(void)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };
	const char *s = getenv("UVERBS_LOG");

	for (unsigned i = 0; s && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return (enum plat_log_level)(PLAT_LOG_ERROR + i);
	return PLAT_LOG_NONE;
}

/* Print one message on stderr as "uverbs[ <source>] <level>: <message>" (source: NULL
 * for the verbs library, "mx5" for the driver, the device's name for the emulator).
 * The caller has already decided the level is wanted. */
__attribute__((format(printf, 3, 0))) static inline void plat_log_vprint(const char *source,
									 enum plat_log_level lvl,
									 const char *fmt, va_list ap)
{
	static const char *const names[] = { "", "error", "warn", "info", "debug" };
	char msg[512];

	if ((unsigned)lvl >= sizeof(names) / sizeof(names[0]))
		lvl = PLAT_LOG_DEBUG;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "uverbs%s%s %s: %s\n", source ? " " : "", source ? source : "", names[lvl], msg);
}

#endif
