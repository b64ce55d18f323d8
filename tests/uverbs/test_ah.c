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
