/* UVERBS_LOG=error|warn|info|debug, read the same way by every layer's logger
 * (hw/mlx5/device.c mx5_log, hw/emu/log.c emu_log, uverbs/log.c uv_log).  No platform
 * difference: one copy here, below all three. */
#ifndef UVERBS_HW_PLATFORM_LOG_LEVEL_H
#define UVERBS_HW_PLATFORM_LOG_LEVEL_H

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

#endif
