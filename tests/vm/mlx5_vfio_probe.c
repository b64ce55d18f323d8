/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdma-core's own VFIO provider (Debian's libmlx5, mlx5_vfio.c) brings up the emulated
 * ConnectX bound to vfio-pci in the VM (tests/vm/test_mlx5_vfio.sh): device list,
 * open (its whole firmware bring-up: ENABLE_HCA, pages, caps, INIT_HCA, EQs), a DEVX
 * command, the events, a PD and an MR (what mlx5_vfio offers: no CQ or QP verbs).  Prints one line per step and
 * "mlx5_vfio: ok" at the end; exit 1 at the first failure, naming it.
 * Usage: mlx5_vfio_probe 0000:01:00.0 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#define FAIL(...) do { printf("mlx5_vfio: FAILED: " __VA_ARGS__); printf(" (errno %d %s)\n", errno, strerror(errno)); return 1; } while (0)

int main(int argc, char **argv)
{
	struct mlx5dv_vfio_context_attr attr = { .pci_name = argc > 1 ? argv[1] : "0000:01:00.0" };
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	static char buf[1 << 16];

	list = mlx5dv_get_vfio_device_list(&attr);
	if (!list || !list[0])
		FAIL("mlx5dv_get_vfio_device_list(%s)", attr.pci_name);
	printf("device list: %s\n", ibv_get_device_name(list[0]));
	ctx = ibv_open_device(list[0]);
	if (!ctx)
		FAIL("ibv_open_device");
	printf("open: ok (events fd %d)\n", mlx5dv_vfio_get_events_fd(ctx));
	/* mlx5_vfio has no query_device or query_port (ENOSYS/EBADF): a DEVX command asks
	 * the firmware itself, QUERY_HCA_CAP general, current (opcode 0x100, op_mod 1) */
	{
		uint32_t in[4] = { htobe32(0x100u << 16), htobe32(1) };
		static uint8_t out[16 + 4096];
		uint32_t w;

		if (mlx5dv_devx_general_cmd(ctx, in, sizeof(in), out, sizeof(out)))
			FAIL("mlx5dv_devx_general_cmd(QUERY_HCA_CAP)");
		memcpy(&w, out + 16 + 0x9c, 4); /* cmd_hca_cap dword 0x27: device_frequency_khz */
		printf("devx QUERY_HCA_CAP: status %u, device_frequency_khz %u\n", out[0], be32toh(w));
	}
	if (mlx5dv_vfio_process_events(ctx))
		FAIL("mlx5dv_vfio_process_events");
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		FAIL("ibv_alloc_pd");
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr)
		FAIL("ibv_reg_mr");
	printf("pd and mr: lkey 0x%x rkey 0x%x\n", mr->lkey, mr->rkey);
	if (ibv_dereg_mr(mr) || ibv_dealloc_pd(pd))
		FAIL("dereg_mr/dealloc_pd");
	if (ibv_close_device(ctx))
		FAIL("ibv_close_device");
	ibv_free_device_list(list);
	printf("mlx5_vfio: ok\n");
	return 0;
}
