/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Shared by the mlx5dv oracle tests: a send queue over plain memory (the "BAR" is a
 * buffer with no hook unless a test installs one), and reading a WQE back out of the
 * ring across its end. */
#ifndef UVERBS_TESTS_MLX5_MLX5DV_ORACLE_H
#define UVERBS_TESTS_MLX5_MLX5DV_ORACLE_H

#include <stdint.h>
#include <string.h>

#include "hw/mlx5/doorbell.h"
#include "hw/mlx5/poll.h"
#include "hw/mlx5/sq.h"
#include "hw/mlx5/wqe.h"

#define FX_BBS 16u
#define FX_BF_OFF 0x800u
#define FX_BF_SIZE 256u

/* An AH object as the verbs layer might lay it out: the AV at some offset inside. */
struct fx_ah {
	struct ibv_ah ibv;
	uint32_t pad;
	uint8_t av[MX5_AV_SIZE];
};

struct fx_sq {
	uint8_t ring[FX_BBS * MX5_SEND_WQE_BB] __attribute__((aligned(64)));
	uint64_t wrid[FX_BBS];
	uint32_t next[FX_BBS];
	uint8_t dbrec[8] __attribute__((aligned(8)));
	uint8_t bar_mem[4096] __attribute__((aligned(64)));
	struct shim_bar bar;
	struct mx5_sq sq;
};

/* (Re)initialise the SQ over f's memory and current BAR mappings. */
static inline int fx_sq_setup(struct fx_sq *f, int qp_type, uint32_t max_inline, uint32_t max_sge,
			      int sig_all)
{
	struct mx5_sq_attr a;

	memset(&a, 0, sizeof(a));
	a.buf = f->ring;
	a.wqe_cnt = FX_BBS;
	a.qpn = 0x1234a5;
	a.max_inline = max_inline;
	a.max_sge = max_sge;
	a.qp_type = qp_type;
	a.sq_sig_all = sig_all;
	a.av_offset = (uint32_t)offsetof(struct fx_ah, av);
	a.wrid = f->wrid;
	a.wqe_next = f->next;
	a.dbrec = f->dbrec;
	a.bar = &f->bar;
	a.bf_off = FX_BF_OFF;
	a.bf_size = FX_BF_SIZE;
	return mx5_sq_init(&f->sq, &a);
}

static inline int fx_sq_init(struct fx_sq *f, int qp_type, uint32_t max_inline, uint32_t max_sge,
			     int sig_all)
{
	memset(f, 0, sizeof(*f));
	f->bar.base = f->bar_mem;
	f->bar.len = sizeof(f->bar_mem);
	return fx_sq_setup(f, qp_type, max_inline, max_sge, sig_all);
}

/* Put the producer (and consumer) at basic block `pos`, as if that many were used. */
static inline void fx_sq_at(struct fx_sq *f, uint32_t pos)
{
	f->sq.cur_post = pos;
	f->sq.tail = pos;
}

/* Copy `len` bytes of the WQE starting at basic block `pos` out of the ring. */
static inline void fx_sq_read(const struct fx_sq *f, uint32_t pos, uint8_t *out, size_t len)
{
	size_t start = (size_t)(pos % FX_BBS) * MX5_SEND_WQE_BB, ring = sizeof(f->ring);

	for (size_t i = 0; i < len; i++)
		out[i] = f->ring[(start + i) % ring];
}

#endif
