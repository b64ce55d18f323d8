/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The emulated device reaching another process's memory (emu_iommu_map_remote,
 * hw/emu/iommu.c): what the device daemon uses for its clients' registered memory.
 * A forked child holds the memory; the device reads what the child wrote after the
 * fork, writes what the child then sees, and faults once the child is gone. */
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/emu/emu_test.h"
#include "hw/emu/emu_dev.h"

static uint8_t child_buf[3 * 4096] __attribute__((aligned(4096)));

/* The child fills its buffer with 0x5a, says so, then answers one byte with the byte
 * at offset 5000 of its buffer, and waits to be killed. */
static pid_t spawn(int to_child[2], int from_child[2])
{
	cr_assert_eq(pipe(to_child), 0);
	cr_assert_eq(pipe(from_child), 0);
	memset(child_buf, 0x11, sizeof(child_buf));   /* the parent's copy stays 0x11 */
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char c;
		/* never outlive the test, even a failed one (it would hold ctest's pipe) */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		memset(child_buf, 0x5a, sizeof(child_buf));
		if (write(from_child[1], "r", 1) != 1)
			_exit(1);
		if (read(to_child[0], &c, 1) != 1)
			_exit(1);
		if (write(from_child[1], &child_buf[5000], 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	char c;
	cr_assert_eq(read(from_child[0], &c, 1), 1);
	return pid;
}

Test(uvd_remote_dma, device_reads_and_writes_the_other_process_memory)
{
	struct et t;
	int tc[2], fc[2];
	pid_t pid = spawn(tc, fc);
	et_open(&t, "emu:ip=127.67.250.1");
	struct emu_iova_seg *segs = NULL;
	uint32_t nseg = 0;
	uint64_t id = 0;
	cr_assert_eq(emu_iommu_map_remote(t.emu, pid, (uint64_t)(uintptr_t)child_buf, sizeof(child_buf), &segs,
					  &nseg, &id), 0);
	cr_assert_eq(nseg, 1);
	uint8_t b[64];
	cr_assert_eq(emu_dma_read(t.emu, segs[0].iova + 4000, b, sizeof(b)), 0);
	for (size_t i = 0; i < sizeof(b); i++)
		cr_assert_eq(b[i], 0x5a, "the child's memory, not ours (0x11)");
	memset(b, 0xc3, sizeof(b));
	cr_assert_eq(emu_dma_write(t.emu, segs[0].iova + 5000, b, 1), 0);
	char c = 0;
	cr_assert_eq(write(tc[1], "w", 1), 1);
	cr_assert_eq(read(fc[0], &c, 1), 1);
	cr_assert_eq((uint8_t)c, 0xc3, "the child sees what the device wrote");
	cr_assert_eq(child_buf[5000], 0x11, "and our own copy is untouched");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	free(segs);
	emu_iommu_unmap(t.emu, id);
	et_close(&t);
}

Test(uvd_remote_dma, dma_to_a_process_that_is_gone_is_a_fault)
{
	struct et t;
	int tc[2], fc[2];
	pid_t pid = spawn(tc, fc);
	et_open(&t, "emu:ip=127.67.250.2");
	struct emu_iova_seg *segs = NULL;
	uint32_t nseg = 0;
	uint64_t id = 0;
	cr_assert_eq(emu_iommu_map_remote(t.emu, pid, (uint64_t)(uintptr_t)child_buf, sizeof(child_buf), &segs,
					  &nseg, &id), 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	uint8_t b[8];
	uint64_t faults = t.emu->ctr.dma_faults;
	cr_assert_eq(emu_dma_read(t.emu, segs[0].iova, b, sizeof(b)), -EFAULT);
	cr_assert_eq(emu_dma_write(t.emu, segs[0].iova, b, sizeof(b)), -EFAULT);
	cr_assert_eq(t.emu->ctr.dma_faults, faults + 2);
	free(segs);
	emu_iommu_unmap(t.emu, id);
	et_close(&t);
}

Test(uvd_remote_dma, a_remote_mapping_needs_a_process)
{
	struct et t;
	struct emu_iova_seg *segs = NULL;
	uint32_t nseg = 0;
	uint64_t id = 0;
	et_open(&t, "emu:ip=127.67.250.3");
	cr_assert_eq(emu_iommu_map_remote(t.emu, 0, 0x1000, 4096, &segs, &nseg, &id), -EINVAL);
	et_close(&t);
}
