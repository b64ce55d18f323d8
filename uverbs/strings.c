/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The libibverbs helpers that carry no device state: *_str names (texts as
 * ibv_*_str(3) and the IBTA define them), rate conversions, and the import verbs this
 * driver cannot offer (they need a kernel object to share). */
#include <errno.h>
#include <stddef.h>

#include "uverbs/uv.h"

/* Which function a name belongs to: one table holds them all (verbs_names.def). */
enum uv_name_table { UV_NAMES_NODE_TYPE, UV_NAMES_PORT_STATE, UV_NAMES_EVENT_TYPE, UV_NAMES_WC_STATUS };

static const struct {
	enum uv_name_table table;
	int value;
	const char *text;
} uv_names[] = {
#define UV_NAME(table, value, text) { UV_NAMES_##table, value, text },
#include "uverbs/verbs_names.def"
#undef UV_NAME
};

/* The text of value in one table; "unknown" for a value it does not name. */
static const char *uv_name_of(enum uv_name_table table, int value)
{
	for (size_t i = 0; i < sizeof(uv_names) / sizeof(uv_names[0]); i++)
		if (uv_names[i].table == table && uv_names[i].value == value)
			return uv_names[i].text;
	return "unknown";
}

UV_EXPORT const char *ibv_node_type_str(enum ibv_node_type t) { return uv_name_of(UV_NAMES_NODE_TYPE, t); }
UV_EXPORT const char *ibv_port_state_str(enum ibv_port_state s) { return uv_name_of(UV_NAMES_PORT_STATE, s); }
UV_EXPORT const char *ibv_event_type_str(enum ibv_event_type e) { return uv_name_of(UV_NAMES_EVENT_TYPE, e); }
UV_EXPORT const char *ibv_wc_status_str(enum ibv_wc_status s) { return uv_name_of(UV_NAMES_WC_STATUS, s); }

/* Static rate encodings (IBTA 9.7 / verbs.h enum ibv_rate) and their speeds. */
static const struct { enum ibv_rate rate; int mult; int mbps; } uv_rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500 }, { IBV_RATE_5_GBPS, 2, 5000 }, { IBV_RATE_10_GBPS, 4, 10000 },
	{ IBV_RATE_20_GBPS, 8, 20000 }, { IBV_RATE_30_GBPS, 12, 30000 }, { IBV_RATE_40_GBPS, 16, 40000 },
	{ IBV_RATE_60_GBPS, 24, 60000 }, { IBV_RATE_80_GBPS, 32, 80000 }, { IBV_RATE_120_GBPS, 48, 120000 },
	{ IBV_RATE_14_GBPS, 0, 14062 }, { IBV_RATE_56_GBPS, 0, 56250 }, { IBV_RATE_112_GBPS, 0, 112500 },
	{ IBV_RATE_168_GBPS, 0, 168750 }, { IBV_RATE_25_GBPS, 10, 25781 }, { IBV_RATE_100_GBPS, 40, 103125 },
	{ IBV_RATE_200_GBPS, 80, 206250 }, { IBV_RATE_300_GBPS, 120, 309375 },
	{ IBV_RATE_28_GBPS, 11, 28125 }, { IBV_RATE_50_GBPS, 20, 53125 }, { IBV_RATE_400_GBPS, 160, 425000 },
	{ IBV_RATE_600_GBPS, 240, 637500 }, { IBV_RATE_800_GBPS, 320, 850000 },
	{ IBV_RATE_1200_GBPS, 480, 1275000 },
};
#define UV_NRATES (sizeof(uv_rates) / sizeof(uv_rates[0]))

UV_EXPORT int ibv_rate_to_mult(enum ibv_rate rate)
{
	for (size_t i = 0; i < UV_NRATES; i++)
		if (uv_rates[i].rate == rate && uv_rates[i].mult)
			return uv_rates[i].mult;
	return -1;
}

UV_EXPORT enum ibv_rate mult_to_ibv_rate(int mult)
{
	for (size_t i = 0; i < UV_NRATES; i++)
		if (uv_rates[i].mult == mult && mult)
			return uv_rates[i].rate;
	return IBV_RATE_MAX;
}

UV_EXPORT int ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (size_t i = 0; i < UV_NRATES; i++)
		if (uv_rates[i].rate == rate)
			return uv_rates[i].mbps;
	return -1;
}

UV_EXPORT enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < UV_NRATES; i++)
		if (uv_rates[i].mbps == mbps)
			return uv_rates[i].rate;
	return IBV_RATE_MAX;
}

/* ---- sharing objects between processes needs the kernel's object table ---- */

UV_NOT_OFFERED_BEGIN
UV_EXPORT UV_NOT_OFFERED(struct ibv_context *, ibv_import_device, (int cmd_fd), "ibv_import_device", NULL)
UV_EXPORT UV_NOT_OFFERED(struct ibv_pd *, ibv_import_pd, (struct ibv_context *context, uint32_t pd_handle),
			 "ibv_import_pd", NULL)
UV_EXPORT UV_NOT_OFFERED(struct ibv_mr *, ibv_import_mr, (struct ibv_pd *pd, uint32_t mr_handle),
			 "ibv_import_mr", NULL)
UV_EXPORT UV_NOT_OFFERED(struct ibv_dm *, ibv_import_dm, (struct ibv_context *context, uint32_t dm_handle),
			 "ibv_import_dm", NULL)
/* Nothing can have been imported, so there is nothing to let go. */
UV_EXPORT void ibv_unimport_pd(struct ibv_pd *pd) {}
UV_EXPORT void ibv_unimport_mr(struct ibv_mr *mr) {}
UV_EXPORT void ibv_unimport_dm(struct ibv_dm *dm) {}
UV_NOT_OFFERED_END
