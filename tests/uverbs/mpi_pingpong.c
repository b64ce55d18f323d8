/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A two-rank MPI check for test_ucx_mpi.py: a ping-pong and an all-reduce whose data
 * is verified byte for byte.  Not built by CMake (it needs Open MPI's mpicc, which the
 * library does not): the test compiles it into the build tree when it runs.
 *
 * Ping-pong: rank 0 sends a pattern of each size, rank 1 checks it and sends back its
 * complement, rank 0 checks that.  The sizes span UCX's protocols (eager short, eager
 * copy, rendezvous: zero-copy RDMA between the two buffers).
 * All-reduce: each rank contributes (rank + 1) * i for i in [0, n), so the sum is
 * 3 * i for two ranks; checked on both ranks.
 *
 * Prints one "pingpong ... half round trip" line per size (rank 0) and, on success,
 *   verified: pingpong <sizes> sizes x <iters>, allreduce <n> ints
 * Any mismatch prints what and where, and ends the job with MPI_Abort (exit status 1).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pattern(size_t i, int iter, size_t size)
{
	return (unsigned char)((i * 131u + (size_t)iter * 7u + size) & 0xff);
}

static void fail(const char *what, int rank, size_t size, int iter, size_t at,
		 unsigned got, unsigned want)
{
	fprintf(stderr, "rank %d: %s: size %zu iteration %d byte %zu: got 0x%02x, want 0x%02x\n",
		rank, what, size, iter, at, got, want);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
	int rank, nranks, iters = argc > 1 ? atoi(argv[1]) : 20;
	static const size_t sizes[] = { 8, 4096, 65536, 1 << 20 };
	const size_t nsizes = sizeof(sizes) / sizeof(sizes[0]);
	const int nints = argc > 2 ? atoi(argv[2]) : 100000;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (nranks != 2 || iters < 1 || nints < 1) {
		if (rank == 0)
			fprintf(stderr, "needs exactly 2 ranks (got %d), iterations and ints > 0\n", nranks);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	unsigned char *buf = malloc(sizes[nsizes - 1]);
	int *in = malloc(sizeof(int) * (size_t)nints), *out = malloc(sizeof(int) * (size_t)nints);
	if (!buf || !in || !out)
		MPI_Abort(MPI_COMM_WORLD, 3);

	for (size_t s = 0; s < nsizes; s++) {
		size_t size = sizes[s];
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		for (int it = 0; it < iters; it++) {
			if (rank == 0) {
				for (size_t i = 0; i < size; i++)
					buf[i] = pattern(i, it, size);
				MPI_Send(buf, (int)size, MPI_BYTE, 1, it, MPI_COMM_WORLD);
				memset(buf, 0, size);
				MPI_Recv(buf, (int)size, MPI_BYTE, 1, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				for (size_t i = 0; i < size; i++)
					if (buf[i] != (unsigned char)~pattern(i, it, size))
						fail("echo", rank, size, it, i, buf[i],
						     (unsigned char)~pattern(i, it, size));
			} else {
				MPI_Status st;
				int count;
				MPI_Recv(buf, (int)size, MPI_BYTE, 0, it, MPI_COMM_WORLD, &st);
				MPI_Get_count(&st, MPI_BYTE, &count);
				if ((size_t)count != size)
					fail("message length", rank, size, it, (size_t)count, 0, 0);
				for (size_t i = 0; i < size; i++) {
					if (buf[i] != pattern(i, it, size))
						fail("ping", rank, size, it, i, buf[i], pattern(i, it, size));
					buf[i] = (unsigned char)~buf[i];
				}
				MPI_Send(buf, (int)size, MPI_BYTE, 0, it, MPI_COMM_WORLD);
			}
		}
		double us = (MPI_Wtime() - t0) * 1e6 / iters / 2;
		if (rank == 0)
			printf("pingpong %7zu B x %d: %.1f us half round trip\n", size, iters, us);
	}

	for (int i = 0; i < nints; i++)
		in[i] = (rank + 1) * i;
	memset(out, 0, sizeof(int) * (size_t)nints);
	MPI_Allreduce(in, out, nints, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < nints; i++)
		if (out[i] != 3 * i) {
			fprintf(stderr, "rank %d: allreduce element %d: got %d, want %d\n",
				rank, i, out[i], 3 * i);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("verified: pingpong %zu sizes x %d, allreduce %d ints\n", nsizes, iters, nints);
	free(buf);
	free(in);
	free(out);
	MPI_Finalize();
	return 0;
}
