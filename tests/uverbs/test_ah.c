/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The address vector ibv_create_ah builds for RoCE, decoded with the wqe_datagram_seg
 * layout: on Ethernet the service level goes in bits 3:1 of stat_rate_sl, the static
 * rate in 7:4, and bit 0 stays reserved (rdma-core providers/mlx5/verbs.c
 * mlx5_create_ah: (static_rate << 4) | ((sl & 0x7) << 1)). */
#include "firmware-cmd/prm.h"
#include "tests/uverbs/uv_test.h"
#include "uverbs/uv.h"

Test(ah, roce_service_level_goes_in_bits_3_to_1_of_stat_rate_sl)
{
	ut_devices("emu:ip=127.0.76.2");
	struct ibv_context *ctx = ut_open(0);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	cr_assert_not_null(pd);
	for (uint8_t sl = 0; sl < 8; sl++) {
		struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .sl = sl,
					  .grh = { .hop_limit = 1 } };
		aa.grh.dgid.raw[10] = aa.grh.dgid.raw[11] = 0xff;
		aa.grh.dgid.raw[12] = 127;
		aa.grh.dgid.raw[15] = 9;
		struct ibv_ah *ah = ibv_create_ah(pd, &aa);
		cr_assert_not_null(ah, "sl %u: %s", sl, strerror(errno));
		const uint8_t *av = ((struct uv_ah *)(void *)ah)->av;
		cr_assert_eq(PRM_GET(wqe_datagram_seg, av, stat_rate_sl), (uint64_t)sl << 1, "sl %u", sl);
		ibv_destroy_ah(ah);
	}
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
}

/* The source GID index must name a programmed entry of the port's table: 200 and 255
 * are empty entries of the emulated port's 256 (gid_tbl_len), with no address to send
 * from, as Linux's rdma_create_ah finds no GID attribute for them. */
Test(ah, sgid_index_of_an_empty_or_missing_gid_entry_is_einval)
{
	ut_devices("emu:ip=127.62.5.2");
	struct ibv_context *ctx = ut_open(0);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_port_attr pa;
	union ibv_gid g;
	cr_assert_not_null(pd);
	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 1 } };
	aa.grh.dgid.raw[10] = aa.grh.dgid.raw[11] = 0xff;
	aa.grh.dgid.raw[12] = 127;
	aa.grh.dgid.raw[13] = 62;
	aa.grh.dgid.raw[14] = 5;
	aa.grh.dgid.raw[15] = 3;
	aa.grh.sgid_index = 1;
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	cr_assert_not_null(ah, "GID 1 is the port's IPv4 address: %s", strerror(errno));
	cr_assert_eq(ibv_destroy_ah(ah), 0);
	const unsigned bad[] = { 200, 255, 2 };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (bad[i] < (unsigned)pa.gid_tbl_len) {
			cr_assert_eq(ibv_query_gid(ctx, 1, (int)bad[i], &g), 0);
			for (int k = 0; k < 16; k++)
				cr_assert_eq(g.raw[k], 0, "GID %u is empty", bad[i]);
		}
		aa.grh.sgid_index = (uint8_t)bad[i];
		errno = 0;
		cr_assert_null(ibv_create_ah(pd, &aa), "sgid_index %u", bad[i]);
		cr_assert_eq(errno, EINVAL);
	}
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}
