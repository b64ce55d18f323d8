/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Declared differences between our PRM tables and Linux's mlx5_ifc.h.
 *
 * The oracle (ifc_oracle.c) checks every row of firmware-cmd/layouts/all.def against
 * the structure and field of the same name in mlx5_ifc.h.  A structure or field that
 * the header lacks, or names differently, must be declared here with the reason; the
 * oracle then reports it as unverified, by name, with that reason.  Anything missing
 * from the header and not declared here fails to compile, so nothing is skipped
 * silently.
 *
 *   #define ORACLE_STRUCT_EXCEPT_<type>          ORACLE_EXCEPT("reason")
 *   #define ORACLE_FIELD_EXCEPT_<type>__<field>  ORACLE_EXCEPT("reason")
 *
 * The rows of firmware-cmd/layouts/wqe.def (WQE segments, CQE) are reported unverified
 * as a whole, without entries here: they are not in mlx5_ifc.h and tests/mlx5 checks
 * them against rdma-core's mlx5dv.h.
 */
#ifndef UVERBS_TESTS_ORACLE_IFC_EXCEPTIONS_H
#define UVERBS_TESTS_ORACLE_IFC_EXCEPTIONS_H

/* PRM "KLM" entry (indirect mkey translation list).  mlx5_ifc.h has no _bits layout
 * for it; Linux spells it struct mlx5_klm in include/linux/mlx5/device.h. */
#define ORACLE_STRUCT_EXCEPT_klm \
	ORACLE_EXCEPT("not in mlx5_ifc.h (Linux: struct mlx5_klm in linux/mlx5/device.h)")

/* The generic command header: mlx5_ifc.h calls bits 0x10..0x1f of cmd_in reserved_at_10;
 * every command that takes a user context names the same bits uid (create_cq_in.uid,
 * create_qp_in.uid, ... all checked by their own rows). */
#define ORACLE_FIELD_EXCEPT_cmd_in__uid \
	ORACLE_EXCEPT("mlx5_ifc.h cmd_in: reserved_at_10; the same bits are uid in create_cq_in etc.")

/* PAGE_REQUEST event flags in the first 16 bits of pages_req_event, which mlx5_ifc.h
 * leaves reserved (reserved_at_0); Linux reads them through struct mlx5_eqe_page_req
 * ec_function (include/linux/mlx5/device.h) with pagealloc.c's EC_FUNCTION_MASK 0x8000
 * and RELEASE_ALL_PAGES_MASK 0x4000. */
#define ORACLE_FIELD_EXCEPT_pages_req_event__ec_function \
	ORACLE_EXCEPT("reserved_at_0 in mlx5_ifc.h; Linux mlx5_eqe_page_req.ec_function & 0x8000")
#define ORACLE_FIELD_EXCEPT_pages_req_event__release_all_pages \
	ORACLE_EXCEPT("reserved_at_0 in mlx5_ifc.h; Linux mlx5_eqe_page_req.ec_function & 0x4000")

/* initial_seg bits 10:8 of the cmdq_addr_l dword as the device reports its state.
 * mlx5_ifc.h names only the low two (nic_interface, what a driver writes); Linux reads
 * all three in mlx5_get_nic_state (drivers/net/ethernet/mellanox/mlx5/core/
 * mlx5_core.h / device.h: MLX5_NIC_IFC_SW_RESET = 7). */
#define ORACLE_FIELD_EXCEPT_initial_seg__nic_interface_state \
	ORACLE_EXCEPT("3-bit read of Linux mlx5_get_nic_state; mlx5_ifc.h has the 2-bit nic_interface")

#endif
