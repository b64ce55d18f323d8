/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Capability blocks of the emulated device (PRM QUERY_HCA_CAP / SET_HCA_CAP), seeded
 * from what a real ConnectX-4 answered (caps_seed.c, generated from the trace) and
 * turned into a ConnectX-5 Ex.  Changed from the ConnectX-4 trace, and why:
 *  - general pg = 1 (max and cur), and an ODP block (type 2) that the trace lacks: the
 *    ConnectX-5 family supports on-demand paging for RC (send, receive, write, read,
 *    atomic, SRQ receive) and UD send, and drivers look for it there;
 *  - general uar_4k = 1 in max: ConnectX-5 can carve 4 KiB UARs inside larger host
 *    pages, which a 16 KiB-page host (page=16k) needs; cur stays 0 until SET_HCA_CAP;
 *  - general num_of_uars_per_page = 1 (cur): follows log_uar_page_sz and uar_4k;
 *  - atomic supported_atomic_req_8B_endianness_mode_1 = 1 (max and cur), and
 *    atomic_req_8B_endianness_mode may be raised to 1 (max): the requester may answer
 *    8-byte atomics in host order, the mode Linux mlx5_core selects (handle_hca_cap_atomic)
 *    and the one libibverbs' IBV_ATOMIC_HCA promises.  cur stays 0 (big-endian, the
 *    reset value) until a driver sets it.
 *  - general vport_group_manager, eswitch_manager, nic_flow_table = 0 (max and cur):
 *    this device has no e-switch, vports to manage or NIC flow tables (no
 *    CREATE_FLOW_TABLE, no ESWITCH_FLOW_TABLE capability block), and Linux's mlx5_core
 *    goes for all three when they are set (tools/vm: its probe failed on each);
 *  - general device_frequency_khz = 1000000: the internal timer and CQE timestamps
 *    count nanoseconds here (device.c iseg_refresh), and Linux's clock (lib/clock.c)
 *    turns ticks into time with this rate; the trace's 0 left it without one.
 *  - general cc_query_allowed, cc_modify_allowed = 0 (max and cur): no congestion
 *    control (DCQCN, ECN reaction) here, so no QUERY_CONG_STATISTICS, QUERY_CONG_PARAMS
 *    or MODIFY_CONG_*; with cc_query_allowed set Linux's mlx5_ib adds the congestion
 *    counters to its hw_counters and reads them while it registers its device
 *    (counters.c, cong_cnts), and failed there (tools/vm);
 *  - ethernet offloads (type 1) tunnel_lro_gre, tunnel_lro_vxlan, tunnel_stateless_gre,
 *    tunnel_stateless_vxlan = 0: no tunnel offloads here, and with stateless VXLAN set
 *    Linux's mlx5_core registers the IANA VXLAN port with ADD_VXLAN_UDP_DPORT, which
 *    this device does not implement (lib/vxlan.c mlx5_vxlan_create).
 * Everything else is the ConnectX-4's answer as recorded, so decoding our outputs with
 * the same accessors gives the trace's values.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/caps_seed.h"
#include "hw/emu/emu_dev.h"

uint8_t *emu_cap(struct emu_dev *d, unsigned type, int cur)
{
	if (type >= EMU_CAP_TYPES || !d->caps || !d->cap_present[type])
		return NULL;
	return d->caps[type][cur ? 1 : 0];
}

/* The changes listed above, one row each: a field of one capability type's maximum
 * (CX5_MAX), current (CX5_CUR) or both blocks, set to `value`.  A row whose type the
 * seed lacks is skipped, except ODP, which is added here. */
enum { CX5_MAX = 1, CX5_CUR = 2, CX5_BOTH = CX5_MAX | CX5_CUR };

struct cx5_change {
	uint8_t type;     /* PRM_CAP_* */
	uint8_t blocks;   /* CX5_MAX, CX5_CUR, CX5_BOTH */
	uint16_t bit_off; /* the field, from the layout tables */
	uint16_t width;
	uint32_t value;
};

#define CX5_FIELD(layout, field) PRM_OFF(layout, field), PRM_WIDTH(layout, field)
/* odp_cap.transport_page_fault_scheme_cap.<tr>_odp_caps, the bits from `first` to
 * `last` (odp_per_transport_service_cap) */
#define CX5_ODP(tr, first, last)                                                                  \
	PRM_OFF(odp_cap, transport_page_fault_scheme_cap) + PRM_OFF(odp_scheme_cap, tr##_odp_caps) + \
		PRM_OFF(odp_per_transport_service_cap, first),                                     \
		PRM_OFF(odp_per_transport_service_cap, last) + 1 - PRM_OFF(odp_per_transport_service_cap, first)

_Static_assert(PRM_OFF(odp_per_transport_service_cap, srq_receive) - PRM_OFF(odp_per_transport_service_cap, send) == 5,
	       "send, receive, write, read, atomic, srq_receive are six adjacent bits");

/* QUERY_HCA_CAP type 1, per_protocol_networking_offload_caps (no layout table here: the
 * driver does not read it): bits 0x1c-0x1f of its first dword are tunnel_lro_gre,
 * tunnel_lro_vxlan, tunnel_stateless_gre, tunnel_stateless_vxlan (Linux mlx5_ifc.h). */
#define CX5_CAP_ETHERNET_OFFLOADS 1
#define CX5_ETH_TUNNEL_BITS 0x1c, 4

static const struct cx5_change cx5_changes[] = {
	{ PRM_CAP_GENERAL_DEVICE, CX5_BOTH, CX5_FIELD(cmd_hca_cap, pg), 1 },
	{ PRM_CAP_GENERAL_DEVICE, CX5_MAX, CX5_FIELD(cmd_hca_cap, uar_4k), 1 },
	{ PRM_CAP_GENERAL_DEVICE, CX5_CUR, CX5_FIELD(cmd_hca_cap, num_of_uars_per_page), 1 },
	/* RC: send, receive, write, read, atomic, srq_receive (six bits, all set) */
	{ PRM_CAP_GENERAL_DEVICE, CX5_BOTH, CX5_FIELD(cmd_hca_cap, vport_group_manager), 0 },
	{ PRM_CAP_GENERAL_DEVICE, CX5_BOTH, CX5_FIELD(cmd_hca_cap, eswitch_manager), 0 },
	{ PRM_CAP_GENERAL_DEVICE, CX5_BOTH, CX5_FIELD(cmd_hca_cap, nic_flow_table), 0 },
	{ PRM_CAP_GENERAL_DEVICE, CX5_BOTH, CX5_FIELD(cmd_hca_cap, device_frequency_khz), 1000000 },
	{ PRM_CAP_GENERAL_DEVICE, CX5_BOTH, CX5_FIELD(cmd_hca_cap, cc_query_allowed), 0 },
	{ PRM_CAP_GENERAL_DEVICE, CX5_BOTH, CX5_FIELD(cmd_hca_cap, cc_modify_allowed), 0 },
	{ CX5_CAP_ETHERNET_OFFLOADS, CX5_BOTH, CX5_ETH_TUNNEL_BITS, 0 },
	{ PRM_CAP_ODP, CX5_BOTH, CX5_ODP(rc, send, srq_receive), 0x3f },
	{ PRM_CAP_ODP, CX5_BOTH, CX5_ODP(ud, send, send), 1 },
	{ PRM_CAP_ATOMIC, CX5_BOTH, CX5_FIELD(atomic_caps, supported_atomic_req_8B_endianness_mode_1), 1 },
	{ PRM_CAP_ATOMIC, CX5_MAX, CX5_FIELD(atomic_caps, atomic_req_8B_endianness_mode), 1 },
};

int emu_caps_init(struct emu_dev *d)
{
	d->caps = calloc(EMU_CAP_TYPES, sizeof(*d->caps));
	if (!d->caps)
		return -ENOMEM;
	for (size_t i = 0; i < emu_caps_seed_ncaps; i++) {
		const struct emu_caps_seed_cap *s = &emu_caps_seed_caps[i];

		if (s->cap_type >= EMU_CAP_TYPES)
			continue;
		memcpy(d->caps[s->cap_type][0], s->max, EMU_CAP_BYTES);
		memcpy(d->caps[s->cap_type][1], s->cur, EMU_CAP_BYTES);
		d->cap_present[s->cap_type] = true;
	}
	if (!d->cap_present[PRM_CAP_GENERAL_DEVICE])
		return -ENODATA;
	d->cap_present[PRM_CAP_ODP] = true;
	for (size_t i = 0; i < sizeof(cx5_changes) / sizeof(cx5_changes[0]); i++) {
		const struct cx5_change *ch = &cx5_changes[i];

		for (int cur = 0; cur < 2 && d->cap_present[ch->type]; cur++)
			if (ch->blocks & (cur ? CX5_CUR : CX5_MAX))
				prm_bits_set(d->caps[ch->type][cur], ch->bit_off, ch->width, ch->value);
	}
	/* cap= / capmax= from the URI: a later device's capability values. */
	for (unsigned i = 0; i < d->cfg.ncap_override; i++) {
		static const char *const layouts[EMU_CAP_TYPES] = {
			[0] = "cmd_hca_cap", [2] = "odp_cap", [3] = "atomic_caps", [4] = "roce_cap",
		};
		const struct emu_cap_override *o = &d->cfg.cap_override[i];
		const struct prm_field_desc *f =
			o->type < EMU_CAP_TYPES && layouts[o->type] && d->cap_present[o->type]
				? prm_field_find(prm_struct_find(layouts[o->type]), o->field) : NULL;

		if (!f || f->kind != PRM_KIND_FIELD)
			return -EINVAL;
		for (int cur = 0; cur < (o->max_only ? 1 : 2); cur++)
			prm_bits_set(d->caps[o->type][cur], f->bit_off, f->width, o->value);
	}
	return 0;
}
