/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Registration of memory a client shares, through the device daemon (tools/uvd;
 * docs/architecture.md "Several processes: uvd"): a buffer in a MAP_SHARED mapping of a
 * memfd whose descriptor the process holds goes to the daemon as that file
 * (UVD_OP_PIN_SHARED), and the daemon maps the same pages itself.  That is the only
 * registration a daemon over VFIO can serve; `uvd -S` makes the emulated one serve only
 * that too, so these tests see the shared path or nothing.
 *
 * The daemon is $UVD_BIN -S -R on 127.92.1.1.  Two verbs contexts of this process are two
 * clients of it, connected by an RC QP pair whose buffers are memfd mappings; a third
 * connection speaks the protocol itself to send the daemon bad descriptors. */
#include <sys/mman.h>
#include <sys/stat.h>

#include "tests/uvd/uvd_daemon.h"

#define SHM_BYTES (64 * 1024)

/* -R too: a daemon of engines never registers a client's memory into its own device
 * (its clients' engines reach their pages), so only a daemon that runs the data plane
 * sees the shared path, as one over VFIO does */
static struct uvd_daemon dmn = { .pid = -1, .opt = "-SR" };
static int raw = -1, raw_evs = -1;
static uint32_t raw_seq;
static struct ut_ep A, B;

/* len bytes of a fresh memfd, mapped shared; the descriptor in *fd, left open. */
static uint8_t *shared_buffer(size_t len, int *fd)
{
	*fd = memfd_create("uvd-shared-mr-test", MFD_CLOEXEC);
	cr_assert_geq(*fd, 0, "memfd_create: %s", strerror(errno));
	cr_assert_eq(ftruncate(*fd, (off_t)len), 0);
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	cr_assert_neq(p, MAP_FAILED);
	return p;
}

static void setup(void)
{
	int fa, fb;

	raw = uvd_daemon_start(&dmn, "sharedmr", "127.92.1.1");
	struct uvd_hello hq = { .version = UVD_VERSION };
	struct uvd_hello_rep hr;
	cr_assert_eq(uvd_raw_rpc(raw, &raw_seq, UVD_OP_HELLO, &hq, sizeof(hq), -1, &hr, sizeof(hr), &raw_evs), 0);
	cr_assert(hr.features & UVD_FEAT_PIN_SHARED, "the daemon does not offer PIN_SHARED");
	uvd_daemon_rc_pair_on(&dmn, &A, &B, shared_buffer(SHM_BYTES, &fa), shared_buffer(SHM_BYTES, &fb), SHM_BYTES);
}

static void teardown(void)
{
	uvd_daemon_stop(&dmn);
}

TestSuite(uvd_shared_mr, .init = setup, .fini = teardown, .timeout = 120);

static void fill_pattern(uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

Test(uvd_shared_mr, a_write_between_two_shared_buffers_lands_in_the_responders_file)
{
	fill_pattern(A.buf, 16384, 1);
	enum ibv_wc_status st = ut_write(&A, 16384, B.buf + 4096, B.mr->rkey, 7);
	cr_assert_eq(st, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(st));
	cr_assert_eq(memcmp(B.buf + 4096, A.buf, 16384), 0, "the bytes differ");
	for (size_t i = 0; i < 4096; i++)
		cr_assert_eq(B.buf[i], 0, "byte %zu before the target changed", i);
	cr_assert_eq(B.buf[4096 + 16384], 0, "the WRITE went past its end");
}

/* A region that starts inside a page of a mapping at a non-zero offset of its file: the
 * daemon must map the file at the right page and the device see the right bytes. */
Test(uvd_shared_mr, a_region_at_an_offset_of_the_file_is_the_bytes_at_that_offset)
{
	int fd;
	uint8_t *whole = shared_buffer(4 * 4096, &fd);
	uint8_t *view = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 2 * 4096);

	cr_assert_neq(view, MAP_FAILED);
	struct ibv_mr *m = ibv_reg_mr(B.pd, view + 100, 3000, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	cr_assert_not_null(m, "ibv_reg_mr of a shared view: %s", strerror(errno));
	fill_pattern(A.buf, 3000, 2);
	enum ibv_wc_status st = ut_write(&A, 3000, view + 100, m->rkey, 7);
	cr_assert_eq(st, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(st));
	/* the file's bytes 8192+100.., seen through the other mapping */
	cr_assert_eq(memcmp(whole + 2 * 4096 + 100, A.buf, 3000), 0, "the bytes are not at the file's offset");
	cr_assert_eq(whole[2 * 4096 + 99], 0);
	cr_assert_eq(whole[2 * 4096 + 3100], 0);
	cr_assert_eq(ibv_dereg_mr(m), 0);
	munmap(view, 2 * 4096);
	munmap(whole, 4 * 4096);
	close(fd);
}

Test(uvd_shared_mr, private_memory_is_refused_by_a_daemon_that_registers_only_shared_memory)
{
	uint8_t *heap = aligned_alloc(4096, 8192);

	cr_assert_not_null(heap);
	errno = 0;
	struct ibv_mr *m = ibv_reg_mr(B.pd, heap, 8192, IBV_ACCESS_LOCAL_WRITE);
	cr_assert_null(m, "heap memory was registered by uvd -S");
	cr_assert_eq(errno, EOPNOTSUPP, "errno %d (%s)", errno, strerror(errno));
	free(heap);
}

/* Shared, but the process no longer holds the memfd: nothing can hand the file over,
 * so the library asks by address, which uvd -S refuses. */
Test(uvd_shared_mr, a_shared_mapping_whose_descriptor_was_closed_is_refused)
{
	int fd;
	uint8_t *p = shared_buffer(8192, &fd);

	close(fd);
	errno = 0;
	struct ibv_mr *m = ibv_reg_mr(B.pd, p, 8192, IBV_ACCESS_LOCAL_WRITE);
	cr_assert_null(m, "a mapping with no descriptor was registered");
	cr_assert_eq(errno, EOPNOTSUPP, "errno %d (%s)", errno, strerror(errno));
	munmap(p, 8192);
}

/* The daemon checks what a hostile client sends with PIN_SHARED. */
static int raw_pin_shared(uint64_t len, uint64_t file_off, int fd)
{
	struct uvd_pin_shared q = { .va = 0x10000, .len = len, .file_off = file_off };
	char why[UVD_MSG_LEN];

	return uvd_raw_rpc(raw, &raw_seq, UVD_OP_PIN_SHARED, &q, sizeof(q), fd, why, 0, NULL);
}

Test(uvd_shared_mr, the_daemon_refuses_a_shared_registration_without_a_descriptor)
{
	cr_assert_eq(raw_pin_shared(4096, 0, -1), -EBADF);
}

Test(uvd_shared_mr, the_daemon_refuses_a_descriptor_that_is_not_a_regular_file)
{
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(raw_pin_shared(4096, 0, p[0]), -EINVAL);
	close(p[0]);
	close(p[1]);
}

Test(uvd_shared_mr, the_daemon_refuses_a_range_past_the_files_end)
{
	int fd;
	uint8_t *p = shared_buffer(8192, &fd);

	cr_assert_eq(raw_pin_shared(4096, 8192, fd), -EINVAL);
	cr_assert_eq(raw_pin_shared(1, UINT64_MAX, fd), -EINVAL, "a wrapping offset");
	/* and the same descriptor inside its size is taken (then released) */
	struct uvd_pin_rep r;
	struct uvd_pin_shared q = { .va = (uintptr_t)p, .len = 8192, .file_off = 0 };
	cr_assert_eq(uvd_raw_rpc(raw, &raw_seq, UVD_OP_PIN_SHARED, &q, sizeof(q), fd, &r, sizeof(r), NULL), 0);
	struct uvd_id id = { r.id };
	cr_assert_eq(uvd_raw_rpc(raw, &raw_seq, UVD_OP_UNPIN, &id, sizeof(id), -1, NULL, 0, NULL), 0);
	munmap(p, 8192);
	close(fd);
}

/* A read-only descriptor is mapped read-only: the registration says so, and the
 * library then refuses write access to it while a READ of it works. */
Test(uvd_shared_mr, a_read_only_descriptor_registers_read_only_memory)
{
	int fd;
	uint8_t *rw = shared_buffer(8192, &fd);
	char path[64];

	fill_pattern(rw, 8192, 3);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int ro = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(ro, 0);
	munmap(rw, 8192);
	close(fd);   /* only the read-only descriptor is left */
	uint8_t *p = mmap(NULL, 8192, PROT_READ, MAP_SHARED, ro, 0);
	cr_assert_neq(p, MAP_FAILED);
	errno = 0;
	cr_assert_null(ibv_reg_mr(B.pd, p, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE),
		       "write access granted to read-only memory");
	struct ibv_mr *m = ibv_reg_mr(B.pd, p, 8192, IBV_ACCESS_REMOTE_READ);
	cr_assert_not_null(m, "ibv_reg_mr(REMOTE_READ) of read-only shared memory: %s", strerror(errno));
	struct ibv_sge sg = { .addr = (uintptr_t)A.buf, .length = 8192, .lkey = A.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 8, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	struct ibv_wc wc;
	wr.wr.rdma.remote_addr = (uintptr_t)p;
	wr.wr.rdma.rkey = m->rkey;
	cr_assert_eq(ibv_post_send(A.qp, &wr, &bad), 0);
	cr_assert_eq(ut_poll(A.cq, &wc, 5000), 1, "no completion");
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(memcmp(A.buf, p, 8192), 0, "the READ brought other bytes");
	cr_assert_eq(ibv_dereg_mr(m), 0);
	munmap(p, 8192);
	close(ro);
}

/* Truncated under the daemon's mapping: a WRITE into it fails at the responder (the
 * emulator's copy faults), and the daemon goes on serving. */
Test(uvd_shared_mr, a_file_truncated_after_registration_fails_the_write_and_the_daemon_lives)
{
	int fd;
	uint8_t *p = shared_buffer(8192, &fd);
	struct ibv_mr *m = ibv_reg_mr(B.pd, p, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);

	cr_assert_not_null(m, "%s", strerror(errno));
	cr_assert_eq(ftruncate(fd, 0), 0);
	fill_pattern(A.buf, 64, 4);
	enum ibv_wc_status st = ut_write(&A, 64, p, m->rkey, 7);
	cr_assert_eq(st, IBV_WC_REM_ACCESS_ERR, "%s", ibv_wc_status_str(st));
	cr_assert_eq(kill(dmn.pid, 0), 0, "the daemon died");
	/* the daemon still answers: a new registration through it */
	int fd2;
	uint8_t *q = shared_buffer(4096, &fd2);
	struct ibv_mr *m2 = ibv_reg_mr(A.pd, q, 4096, IBV_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(m2, "after the fault: %s", strerror(errno));
	ibv_dereg_mr(m2);
	ibv_dereg_mr(m);
}

/* A regular file that is not in memory (sysfs here, whose files have a size; a disk or
 * network file alike) could stall the daemon's page faults: refused. */
Test(uvd_shared_mr, the_daemon_refuses_a_file_that_is_not_in_memory)
{
	int fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	struct stat st;

	cr_assert_geq(fd, 0);
	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert(S_ISREG(st.st_mode) && st.st_size > 0, "sysfs' cpu/online is not a regular file with a size here");
	cr_assert_eq(raw_pin_shared(1, 0, fd), -EINVAL);
	close(fd);
}

/* Only PIN_SHARED carries a descriptor: the daemon hangs up on a client that sends
 * one with any other request (it would stay open in the daemon otherwise). */
Test(uvd_shared_mr, a_descriptor_with_another_request_ends_the_connection)
{
	int fd;
	uint8_t *p = shared_buffer(4096, &fd);
	struct uvd_counters_rep r;

	cr_assert_eq(uvd_raw_rpc(raw, &raw_seq, UVD_OP_COUNTERS, NULL, 0, fd, &r, sizeof(r), NULL), -ECONNRESET);
	munmap(p, 4096);
	close(fd);
}

/* Each shared registration is a mapping of the daemon's: a client may hold 4096. */
Test(uvd_shared_mr, a_client_holds_at_most_4096_shared_registrations, .timeout = 300)
{
	int fd;
	uint8_t *p = shared_buffer(4096, &fd);
	struct uvd_pin_shared q = { .va = (uintptr_t)p, .len = 4096, .file_off = 0 };
	struct uvd_pin_rep r;
	uint64_t first = 0;

	for (unsigned i = 0; i < 4096; i++) {
		int rc = uvd_raw_rpc(raw, &raw_seq, UVD_OP_PIN_SHARED, &q, sizeof(q), fd, &r, sizeof(r), NULL);
		cr_assert_eq(rc, 0, "registration %u: %d", i, rc);
		if (!i)
			first = r.id;
	}
	char why[UVD_MSG_LEN];
	cr_assert_eq(uvd_raw_rpc(raw, &raw_seq, UVD_OP_PIN_SHARED, &q, sizeof(q), fd, why, 0, NULL), -ENOSPC);
	struct uvd_id id = { first };
	cr_assert_eq(uvd_raw_rpc(raw, &raw_seq, UVD_OP_UNPIN, &id, sizeof(id), -1, NULL, 0, NULL), 0);
	cr_assert_eq(uvd_raw_rpc(raw, &raw_seq, UVD_OP_PIN_SHARED, &q, sizeof(q), fd, &r, sizeof(r), NULL), 0,
		     "a freed one is not given back");
	munmap(p, 4096);
	close(fd);
}
