/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The PRM's data-plane and device constants, one copy for the driver (hw/mlx5) and the
 * emulator (hw/emu): send WQE opcodes, CQE opcodes, error CQE syndromes, event types,
 * UAR page offsets and capability types.  The values live as rows in the .def files
 * next to opcodes.def (wqe_opcodes.def, cqe_opcodes.def, cqe_syndromes.def,
 * event_types.def, uar.def, cap_types.def); this header only turns them into enums.
 * tests/oracle/consts_oracle.c checks every row against rdma-core's mlx5dv.h or
 * Linux's mlx5 headers. */
#ifndef UVERBS_FIRMWARE_CMD_CONSTS_H
#define UVERBS_FIRMWARE_CMD_CONSTS_H

enum prm_wqe_opcode {
#define PRM_WQE_OP(name, value) PRM_WQE_OP_##name = (value),
#include "firmware-cmd/wqe_opcodes.def"
#undef PRM_WQE_OP
};

enum prm_cqe_opcode {
#define PRM_CQE_OP(name, value) PRM_CQE_##name = (value),
#include "firmware-cmd/cqe_opcodes.def"
#undef PRM_CQE_OP
};

enum prm_cqe_syndrome {
#define PRM_CQE_SYND(name, value, str) PRM_CQE_SYND_##name = (value),
#include "firmware-cmd/cqe_syndromes.def"
#undef PRM_CQE_SYND
};

enum prm_event_type {
#define PRM_EVENT(name, value) PRM_EVENT_##name = (value),
#define PRM_PORT_CHANGE(name, value)
#include "firmware-cmd/event_types.def"
#undef PRM_PORT_CHANGE
#undef PRM_EVENT
};

enum prm_port_change {
#define PRM_EVENT(name, value)
#define PRM_PORT_CHANGE(name, value) PRM_PORT_CHANGE_##name = (value),
#include "firmware-cmd/event_types.def"
#undef PRM_PORT_CHANGE
#undef PRM_EVENT
};

enum prm_uar_offset {
#define PRM_UAR(name, value) PRM_UAR_##name = (value),
#include "firmware-cmd/uar.def"
#undef PRM_UAR
};

enum prm_cap_type {
#define PRM_CAP_TYPE(name, value, layout) PRM_CAP_##name = (value),
#include "firmware-cmd/cap_types.def"
#undef PRM_CAP_TYPE
};

#endif
