/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Differential oracle: rdma-core's own data path (Debian's unmodified libibverbs.so.1 and
 * mlx5 provider, rdma-core 44) beside ours (hw/mlx5 doorbell.h, wqe.h, poll.h).
 *
 * rdma-core's libmlx5 is reached only through its public API.  Its queues are real: the
 * provider creates them through the uverbs kernel ABI, which this program answers itself
 * (a "kernel" of about a dozen commands, laid out by the uapi headers <rdma/ib_user_verbs.h>
 * and <rdma/mlx5-abi.h> of Debian's linux-libc-dev):
 *   - libibverbs finds the device in a made-up sysfs tree (SYSFS_PATH, libibverbs
 *     sysfs.c ibv_get_sysfs_path), after the RDMA netlink socket is refused (init.c
 *     ibverbs_get_device_list falls back to find_sysfs_devs);
 *   - /dev/infiniband/uverbs0 opens /dev/zero: a character device whose ioctls answer
 *     ENOTTY (so libibverbs uses the write() ABI, cmd_fallback.c _execute_ioctl_fallback)
 *     and whose shared mappings are plain memory (the UAR pages, so the BlueFlame
 *     register and doorbells are RAM this program reads back);
 *   - write() on that descriptor is the command channel: GET_CONTEXT, QUERY_DEVICE,
 *     QUERY_PORT, ALLOC_PD, CREATE_CQ, CREATE_QP, MODIFY_QP and the destroys.
 * mlx5dv_init_obj (public) then gives the SQ/RQ buffers, doorbell record, BlueFlame
 * register and CQ buffer rdma-core's provider allocated.  Our queues are built with the
 * same geometry (QPN, ring size, max inline, SGEs, BlueFlame register offset and half).
 *
 * Then the same work requests go through ibv_post_send/ibv_post_recv (rdma-core) and
 * mx5_post_send/mx5_post_recv (ours) and after every post the whole send ring, receive
 * ring, doorbell record and BlueFlame register (both halves) are compared byte for byte;
 * every opcode an RC QP has, inline data, 0..max SGEs (empty ones too), fences and
 * flags, chains, until the producer counter has passed 2^16 basic blocks (the ring end
 * and the 16-bit wqe_index wrap many times).  The same CQEs (good ones of every opcode,
 * requester and responder, and error CQEs of every syndrome) are written into both CQs
 * and the ibv_wc each poller returns are compared field by field.
 * Then the BlueFlame policies (run_bf_policy): rdma-core contexts opened under
 * MLX5_POST_SEND_PREFER_BF=0 and MLX5_SHUT_UP_BF=1 (and neither) beside our send queue
 * with the same mx5_bf_policy, inline, ctrl-only, multi-unit and chained WQEs compared.
 * Prints "rdma-core differential: N work requests, M CQEs compared, K mismatches" and
 * exits 1 on any mismatch; 77 (skip) when the prerequisites are missing (CI=true: 1).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <linux/netlink.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/mlx5-abi.h>

#include "hw/mlx5/doorbell.h"
#include "hw/mlx5/mx5.h"
#include "hw/mlx5/poll.h"
#include "hw/mlx5/sq.h"
#include "hw/mlx5/wqe.h"

/* ------------------------------------------------------------ the made-up kernel */

#define CDEV "/dev/infiniband/uverbs0"
#define QPN 0x000abcu
#define CQN 0x000077u
#define BF_REG_SIZE 512u   /* resp.bf_reg_size: 1 << log_bf_reg_size (9) */
#define QP_BFREG 1u        /* bfreg_index given to the QP: UAR page 0, register 1 */
#define AV_GRH_BIT 0x40u   /* grh_gid_fl bit 30, in the AV's byte 28 (excused, see run_ud) */
static unsigned n_excused;

static int kfd = -1;       /* the "uverbs" descriptor (a /dev/zero open) */
static uint64_t kfds;      /* every such descriptor (one per context: run_bf_policy opens more) */
static int is_kfd(int fd) { return fd >= 0 && fd < 64 && (kfds >> fd & 1); }
static uint32_t qp_uidx;   /* the user index the provider chose at the first CREATE_QP */
static uint32_t ud_uidx;   /* ... and at the second (the UD QP) */
static uint32_t srq_qp_uidx; /* ... and at the third (an RC QP on the SRQ) */
#define SRQN 0x000051u
static unsigned nqps;      /* QPs created: QPN QPN + n, bfreg_index QP_BFREG + n */
static unsigned kcmds;     /* commands answered */
static char kerr[256];

static void kfail(const char *fmt, ...)
{
	va_list ap;

	if (kerr[0])
		return;
	va_start(ap, fmt);
	vsnprintf(kerr, sizeof(kerr), fmt, ap);
	va_end(ap);
}

/* Interposed: the uverbs character device is /dev/zero (see the file comment). */
int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (strcmp(path, CDEV) == 0) {
		int fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/zero", O_RDWR | O_CLOEXEC);
		if (fd >= 0)
			kfd = fd;
		if (fd >= 0 && fd < 64)
			kfds |= 1ull << fd;
		return fd;
	}
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...) __attribute__((alias("open")));

int stat(const char *restrict path, struct stat *restrict st)
{
	if (strcmp(path, CDEV) == 0)
		path = "/dev/zero";
	return (int)syscall(SYS_newfstatat, AT_FDCWD, path, st, 0);
}

/* Interposed: a mapping of the "uverbs" descriptor is plain shared memory whatever the
 * offset says.  libmlx5 encodes a command and a page index in the offset (mlx5.c
 * get_uar_mmap_offset: MLX5_IB_MMAP_NC_PAGE under MLX5_SHUT_UP_BF); /dev/zero's shared
 * memory has nothing behind a non-zero offset (a store there is SIGBUS), so the offset
 * is dropped: each mapping is its own zeroed memory either way. */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (is_kfd(fd))
		off = 0;
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) __attribute__((alias("mmap")));

/* Interposed: a closed "uverbs" descriptor's number is an ordinary file's again. */
int close(int fd)
{
	if (fd >= 0 && fd < 64)
		kfds &= ~(1ull << fd);
	return (int)syscall(SYS_close, fd);
}

/* The RDMA netlink socket is refused, so libibverbs reads SYSFS_PATH instead. */
int socket(int domain, int type, int protocol)
{
	if (domain == AF_NETLINK && protocol == NETLINK_RDMA) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	return (int)syscall(SYS_socket, domain, type, protocol);
}

static void kresp(uint64_t to, const void *src, size_t len, size_t room)
{
	if (!to)
		return;
	memcpy((void *)(uintptr_t)to, src, len < room ? len : room);
}

/* One uverbs write() command (include/uapi/rdma/ib_user_verbs.h; legacy commands carry
 * the response address first in their body, extended ones in ib_uverbs_ex_cmd_hdr). */
static ssize_t kcmd(const uint8_t *buf, size_t len)
{
	struct ib_uverbs_cmd_hdr h;

	if (len < sizeof(h)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&h, buf, sizeof(h));
	kcmds++;
	if (h.command & IB_USER_VERBS_CMD_FLAG_EXTENDED) {
		struct ib_uverbs_ex_cmd_hdr ex;
		uint32_t cmd = h.command & ~IB_USER_VERBS_CMD_FLAG_EXTENDED;
		size_t room;

		memcpy(&ex, buf + sizeof(h), sizeof(ex));
		room = (size_t)h.out_words * 8 + (size_t)ex.provider_out_words * 8;
		if (cmd == IB_USER_VERBS_EX_CMD_QUERY_DEVICE) {
			struct ib_uverbs_ex_query_device_resp r = { 0 };
			r.base.phys_port_cnt = 1;
			r.base.max_qp = 1 << 18;
			r.base.max_qp_wr = 1 << 15;
			r.base.max_sge = 30;
			r.base.max_cq = 1 << 24;
			r.base.max_cqe = (1 << 22) - 1;
			r.base.atomic_cap = IBV_ATOMIC_HCA;   /* qp->atomics_enabled (verbs.c) */
			r.response_length = (uint32_t)(room < sizeof(r) ? room : sizeof(r));
			kresp(ex.response, &r, sizeof(r), room);
			return (ssize_t)len;
		}
		if (cmd == IB_USER_VERBS_EX_CMD_MODIFY_QP) {
			struct ib_uverbs_ex_modify_qp_resp r = { 0 };
			r.response_length = sizeof(r);
			kresp(ex.response, &r, sizeof(r), room);
			return (ssize_t)len;
		}
		kfail("extended uverbs command %u not answered by this test", cmd);
		errno = EOPNOTSUPP;
		return -1;
	}

	const uint8_t *body = buf + sizeof(h);
	size_t room = (size_t)h.out_words * 4;
	uint64_t resp;

	memcpy(&resp, body, sizeof(resp));
	switch (h.command) {
	case IB_USER_VERBS_CMD_GET_CONTEXT: {
		struct mlx5_ib_alloc_ucontext_req_v2 rq = { 0 };
		struct {
			struct ib_uverbs_get_context_resp c;
			struct mlx5_ib_alloc_ucontext_resp m;
		} r;

		memcpy(&rq, body + sizeof(struct ib_uverbs_get_context),
		       len - sizeof(h) - sizeof(struct ib_uverbs_get_context) < sizeof(rq)
			       ? len - sizeof(h) - sizeof(struct ib_uverbs_get_context) : sizeof(rq));
		memset(&r, 0, sizeof(r));
		r.c.async_fd = (uint32_t)eventfd(0, EFD_CLOEXEC);
		r.c.num_comp_vectors = 1;
		/* Values a ConnectX-5 gives (mlx5_ib main.c mlx5_ib_alloc_ucontext). */
		r.m.qp_tab_size = 1u << 18;
		r.m.bf_reg_size = BF_REG_SIZE;
		r.m.tot_bfregs = rq.total_num_bfregs;
		r.m.cache_line_size = 64;
		r.m.max_sq_desc_sz = 512;
		r.m.max_rq_desc_sz = 512;
		r.m.max_send_wqebb = 1u << 15;
		r.m.max_recv_wr = 1u << 15;
		r.m.max_srq_recv_wr = 1u << 15;
		r.m.num_ports = 1;
		r.m.cqe_version = rq.max_cqe_version ? 1 : 0;
		/* the kernel resolves a RoCE AH's MAC (mlx5_create_ah asks by CREATE_AH) */
		r.m.cmds_supp_uhw = MLX5_USER_CMDS_SUPP_UHW_CREATE_AH;
		r.m.response_length = sizeof(r.m);
		kresp(resp, &r, sizeof(r), room);
		return (ssize_t)len;
	}
	case IB_USER_VERBS_CMD_QUERY_DEVICE: {
		struct ib_uverbs_query_device_resp r = { 0 };
		r.phys_port_cnt = 1;
		r.max_qp = 1 << 18;
		r.max_qp_wr = 1 << 15;
		r.max_sge = 30;
		r.max_cq = 1 << 24;
		r.max_cqe = (1 << 22) - 1;
		r.atomic_cap = IBV_ATOMIC_HCA;
		kresp(resp, &r, sizeof(r), room);
		return (ssize_t)len;
	}
	case IB_USER_VERBS_CMD_QUERY_PORT: {
		struct ib_uverbs_query_port_resp r = { 0 };
		r.state = IBV_PORT_ACTIVE;
		r.max_mtu = IBV_MTU_4096;
		r.active_mtu = IBV_MTU_1024;
		r.max_msg_sz = 1u << 30;
		r.gid_tbl_len = 255;
		r.pkey_tbl_len = 1;
		r.link_layer = IBV_LINK_LAYER_ETHERNET;
		r.phys_state = 5;
		kresp(resp, &r, sizeof(r), room);
		return (ssize_t)len;
	}
	case IB_USER_VERBS_CMD_ALLOC_PD: {
		uint32_t r[2] = { 1, 0x33 };   /* pd_handle, mlx5_ib_alloc_pd_resp.pdn */
		kresp(resp, r, sizeof(r), room);
		return (ssize_t)len;
	}
	case IB_USER_VERBS_CMD_CREATE_CQ: {
		struct ib_uverbs_create_cq c;
		struct {
			struct ib_uverbs_create_cq_resp c;
			struct mlx5_ib_create_cq_resp m;
		} r;

		memcpy(&c, body, sizeof(c));
		memset(&r, 0, sizeof(r));
		r.c.cq_handle = 2;
		r.c.cqe = c.cqe;
		r.m.cqn = CQN;
		kresp(resp, &r, sizeof(r), room);
		return (ssize_t)len;
	}
	case IB_USER_VERBS_CMD_CREATE_QP: {
		struct ib_uverbs_create_qp c;
		struct mlx5_ib_create_qp m = { 0 };
		struct {
			struct ib_uverbs_create_qp_resp c;
			struct mlx5_ib_create_qp_resp m;
		} r;
		size_t dl = len - sizeof(h) - sizeof(c);

		memcpy(&c, body, sizeof(c));
		memcpy(&m, body + sizeof(c), dl < sizeof(m) ? dl : sizeof(m));
		if (nqps == 0)
			qp_uidx = m.uidx;
		else if (nqps == 1)
			ud_uidx = m.uidx;
		else if (nqps == 2)
			srq_qp_uidx = m.uidx;
		memset(&r, 0, sizeof(r));
		r.c.qp_handle = 3 + nqps;
		r.c.qpn = QPN + nqps;
		r.c.max_send_wr = c.max_send_wr;
		r.c.max_recv_wr = c.max_recv_wr;
		r.c.max_send_sge = c.max_send_sge;
		r.c.max_recv_sge = c.max_recv_sge;
		r.c.max_inline_data = c.max_inline_data;
		/* each QP its own register; the later ones (run_bf_policy) each in a context of
		 * its own, so register 1 again: a register on the context's first UAR page,
		 * the only one whose /dev/zero mapping has memory behind it (offset 0) */
		r.m.bfreg_index = nqps < 3 ? QP_BFREG + nqps : QP_BFREG;
		nqps++;
		kresp(resp, &r, sizeof(r), room);
		return (ssize_t)len;
	}
	case IB_USER_VERBS_CMD_CREATE_AH: {
		struct {
			struct ib_uverbs_create_ah_resp c;
			struct mlx5_ib_create_ah_resp m;
		} r;
		memset(&r, 0, sizeof(r));
		r.c.ah_handle = 9;
		r.m.response_length = sizeof(r.m);
		memcpy(r.m.dmac, "\x02\x00\x5e\x10\x20\x42", 6);   /* the kernel resolves it */
		kresp(resp, &r, sizeof(r), room);
		return (ssize_t)len;
	}
	case IB_USER_VERBS_CMD_DESTROY_AH:
		return (ssize_t)len;
	case IB_USER_VERBS_CMD_CREATE_SRQ: {
		struct ib_uverbs_create_srq c;
		struct {
			struct ib_uverbs_create_srq_resp c;
			struct mlx5_ib_create_srq_resp m;
		} r;
		memcpy(&c, body, sizeof(c));
		memset(&r, 0, sizeof(r));
		r.c.srq_handle = 11;
		r.c.max_wr = c.max_wr;
		r.c.max_sge = c.max_sge;
		r.c.srqn = SRQN;
		r.m.srqn = SRQN;
		kresp(resp, &r, sizeof(r), room);
		return (ssize_t)len;
	}
	case IB_USER_VERBS_CMD_DESTROY_SRQ: {
		struct ib_uverbs_destroy_srq_resp r = { 0 };
		kresp(resp, &r, sizeof(r), room);
		return (ssize_t)len;
	}
	case IB_USER_VERBS_CMD_MODIFY_QP:
	case IB_USER_VERBS_CMD_DEALLOC_PD:
		return (ssize_t)len;
	case IB_USER_VERBS_CMD_DESTROY_CQ: {
		struct ib_uverbs_destroy_cq_resp r = { 0 };
		kresp(resp, &r, sizeof(r), room);
		return (ssize_t)len;
	}
	case IB_USER_VERBS_CMD_DESTROY_QP: {
		struct ib_uverbs_destroy_qp_resp r = { 0 };
		kresp(resp, &r, sizeof(r), room);
		return (ssize_t)len;
	}
	default:
		kfail("uverbs command %u not answered by this test", h.command);
		errno = EOPNOTSUPP;
		return -1;
	}
}

ssize_t write(int fd, const void *buf, size_t len)
{
	if (is_kfd(fd))
		return kcmd(buf, len);
	return (ssize_t)syscall(SYS_write, fd, buf, len);
}

/* ------------------------------------------------------------ the made-up sysfs */

static char sysroot[64];

static int put(const char *rel, const char *text)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", sysroot, rel);
	for (char *s = p + strlen(sysroot) + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		mkdir(p, 0755);
		*s = '/';
	}
	FILE *f = fopen(p, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int make_sysfs(void)
{
	strcpy(sysroot, "/tmp/uv-rdmacore-sysfs-XXXXXX");
	if (!mkdtemp(sysroot))
		return -1;
	int rc = 0;
	rc |= put("class/infiniband_verbs/abi_version", "6\n");
	rc |= put("class/infiniband_verbs/uverbs0/ibdev", "mlx5_0\n");
	rc |= put("class/infiniband_verbs/uverbs0/abi_version", "1\n");
	rc |= put("class/infiniband_verbs/uverbs0/dev", "1:5\n");   /* /dev/zero's numbers */
	rc |= put("class/infiniband/mlx5_0/node_type", "1: CA\n");
	/* ConnectX-5 (15b3:1017): libmlx5's match table (mlx5.c hca_table) */
	rc |= put("class/infiniband/mlx5_0/device/modalias",
		  "pci:v000015B3d00001017sv000015B3sd00000008bc02sc00i00\n");
	/* GID 0 is RoCE v2 (cmd_device.c query_sysfs_gid_entry reads these) */
	rc |= put("class/infiniband/mlx5_0/ports/1/gids/0", "0000:0000:0000:0000:0000:ffff:7f00:0001\n");
	rc |= put("class/infiniband/mlx5_0/ports/1/gid_attrs/types/0", "RoCE v2\n");
	setenv("SYSFS_PATH", sysroot, 1);
	return rc;
}

static void rm_sysfs(void)
{
	char cmd[128];

	if (!sysroot[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sysroot);
	if (system(cmd) != 0)
		fprintf(stderr, "rdmacore_dp: could not remove %s\n", sysroot);
}

/* ------------------------------------------------------------ both sides */

#define SQ_WR 24u
#define MAX_SGE 4u
#define MAX_INLINE 200u
#define RQ_WR 16u

struct theirs {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct mlx5dv_qp dq;
	struct mlx5dv_cq dc;
	uint8_t *bf;            /* their BlueFlame register (both halves) */
	struct ibv_qp *ud;
	struct mlx5dv_qp du;
	uint8_t *udbf;
	struct ibv_ah *ah;
	struct mlx5dv_ah dah;
	struct ibv_srq *srq;
	struct ibv_qp *sqp;      /* an RC QP whose receives come from srq */
	struct mlx5dv_srq dsrq;
	uint32_t srq_cnt;
	uint32_t cq_ci;         /* CQEs the "device" wrote into their CQ */
};

struct ours {
	uint8_t *sbuf, *rbuf;
	uint64_t *swrid, *rwrid;
	uint32_t *snext;
	uint8_t dbrec[8] __attribute__((aligned(8)));
	uint8_t uar[4096] __attribute__((aligned(64)));
	struct shim_bar bar;
	struct mx5_sq sq;
	struct mx5_rq rq;
	uint8_t *cqbuf;
	uint8_t cq_dbrec[8] __attribute__((aligned(8)));
	struct mx5_wq_table *tab;
	struct mx5_wq_ref ref;
	struct mx5_cq_ring cq;
	/* the UD QP: send queue only */
	uint8_t *ubuf;
	uint64_t *uwrid;
	uint32_t *unext;
	uint8_t udbrec[8] __attribute__((aligned(8)));
	struct mx5_sq ud;
	struct mx5_wq_ref uref;
	struct { struct ibv_ah ibv; uint32_t pad; uint8_t av[MX5_AV_SIZE]; } ah;
	/* the SRQ */
	uint8_t *srqbuf;
	uint64_t *srqwrid;
	uint8_t srqdb[8] __attribute__((aligned(8)));
	struct mx5_srq_ring srq;
	struct mx5_wq_ref sref;
};

static struct theirs T;
static struct ours O;
static unsigned n_wr, n_cqe, n_bad;
static uint8_t payload[4096];

static void mismatch(const char *what, unsigned at, const uint8_t *a, const uint8_t *b, size_t n)
{
	if (n_bad++ < 12) {
		size_t i = 0;
		while (i < n && a[i] == b[i])
			i++;
		fprintf(stderr, "rdmacore_dp: MISMATCH %s (work request %u): first differing byte %zu: "
			"rdma-core %02x, ours %02x\n", what, at, i, i < n ? a[i] : 0, i < n ? b[i] : 0);
	}
}

static int setup_theirs(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);

	if (!list || n < 1) {
		fprintf(stderr, "rdmacore_dp: libibverbs found no device in the test's sysfs (%s)\n",
			kerr[0] ? kerr : strerror(errno));
		return -1;
	}
	T.ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!T.ctx) {
		fprintf(stderr, "rdmacore_dp: ibv_open_device: %s %s\n", strerror(errno), kerr);
		return -1;
	}
	T.pd = ibv_alloc_pd(T.ctx);
	T.cq = T.pd ? ibv_create_cq(T.ctx, 63, NULL, NULL, 0) : NULL;
	if (!T.cq) {
		fprintf(stderr, "rdmacore_dp: PD/CQ: %s %s\n", strerror(errno), kerr);
		return -1;
	}
	struct ibv_qp_init_attr ia = {
		.send_cq = T.cq, .recv_cq = T.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = SQ_WR, .max_recv_wr = RQ_WR, .max_send_sge = MAX_SGE,
			 .max_recv_sge = MAX_SGE, .max_inline_data = MAX_INLINE },
	};
	T.qp = ibv_create_qp(T.pd, &ia);
	if (!T.qp) {
		fprintf(stderr, "rdmacore_dp: ibv_create_qp: %s %s\n", strerror(errno), kerr);
		return -1;
	}
	/* post_send refuses SGEs until RTS (verbs.c set_qp_operational_state) */
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	int rc = ibv_modify_qp(T.qp, &qa, IBV_QP_STATE);
	qa.qp_state = IBV_QPS_RTR;
	rc |= ibv_modify_qp(T.qp, &qa, IBV_QP_STATE);
	qa.qp_state = IBV_QPS_RTS;
	rc |= ibv_modify_qp(T.qp, &qa, IBV_QP_STATE);
	if (rc) {
		fprintf(stderr, "rdmacore_dp: ibv_modify_qp: %s %s\n", strerror(rc), kerr);
		return -1;
	}
	struct mlx5dv_obj o = { .qp = { .in = T.qp, .out = &T.dq }, .cq = { .in = T.cq, .out = &T.dc } };
	if (mlx5dv_init_obj(&o, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ)) {
		fprintf(stderr, "rdmacore_dp: mlx5dv_init_obj failed\n");
		return -1;
	}
	if (T.dq.bf.size != BF_REG_SIZE / 2 || T.dc.cqe_size != 64) {
		fprintf(stderr, "rdmacore_dp: unexpected geometry: bf.size %u, cqe_size %u\n",
			T.dq.bf.size, T.dc.cqe_size);
		return -1;
	}
	/* the UAR page is mapped write-only (mlx5.c mlx5_mmap); we read it back */
	uintptr_t page = (uintptr_t)T.dq.bf.reg & ~(uintptr_t)4095;
	if (mprotect((void *)page, 4096, PROT_READ | PROT_WRITE)) {
		fprintf(stderr, "rdmacore_dp: mprotect of the UAR page: %s\n", strerror(errno));
		return -1;
	}
	T.bf = T.dq.bf.reg;

	/* A UD QP and a RoCE v2 address handle (mlx5_create_ah builds the AV). */
	struct ibv_qp_init_attr ua = {
		.send_cq = T.cq, .recv_cq = T.cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1, .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 64 },
	};
	T.ud = ibv_create_qp(T.pd, &ua);
	if (!T.ud) {
		fprintf(stderr, "rdmacore_dp: ibv_create_qp (UD): %s %s\n", strerror(errno), kerr);
		return -1;
	}
	qa = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111 };
	rc = ibv_modify_qp(T.ud, &qa, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_QKEY | IBV_QP_PKEY_INDEX);
	qa.qp_state = IBV_QPS_RTR;
	rc |= ibv_modify_qp(T.ud, &qa, IBV_QP_STATE);
	qa.qp_state = IBV_QPS_RTS;
	rc |= ibv_modify_qp(T.ud, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN);
	struct ibv_ah_attr aha = {
		.is_global = 1, .port_num = 1, .sl = 3,
		.grh = { .sgid_index = 0, .hop_limit = 64, .traffic_class = 0x28, .flow_label = 0x1abcd },
	};
	memcpy(aha.grh.dgid.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff\x7f\x00\x00\x02", 16);
	T.ah = rc ? NULL : ibv_create_ah(T.pd, &aha);
	if (!T.ah) {
		fprintf(stderr, "rdmacore_dp: UD QP / ibv_create_ah: %s %s\n", strerror(errno), kerr);
		return -1;
	}
	struct mlx5dv_obj u = { .qp = { .in = T.ud, .out = &T.du }, .ah = { .in = T.ah, .out = &T.dah } };
	if (mlx5dv_init_obj(&u, MLX5DV_OBJ_QP | MLX5DV_OBJ_AH)) {
		fprintf(stderr, "rdmacore_dp: mlx5dv_init_obj (UD) failed\n");
		return -1;
	}
	T.udbf = T.du.bf.reg;
	/* our AV from the same attributes (mx5_av_build); the UDP source port is
	 * rdma-core's choice (mlx5_ah_set_udp_sport, from the flow label), read from its AV */
	struct mx5_av_attr av = {
		.sgid_index = 0, .hop_limit = 64, .tclass = 0x28, .flow_label = 0x1abcd,
		.stat_rate_sl = 3 << 1,   /* Ethernet: sl in bits 3:1, rate 0 (PRM wqe address vector) */
	};
	memcpy(av.dgid, aha.grh.dgid.raw, 16);
	memcpy(av.dmac, "\x02\x00\x5e\x10\x20\x42", 6);
	uint16_t sport;
	memcpy(&sport, (const uint8_t *)T.dah.av + 14, 2);   /* struct mlx5_wqe_av rlid */
	av.udp_sport = be16toh(sport);
	mx5_av_build(O.ah.av, &av);
	/* dqp_dct (bytes 8..11) is written per WQE by both (remote QPN and the extended-AV
	 * bit, qp.c set_datagram_seg); the WQE comparison checks it.  The rest must agree. */
	uint8_t ta[MX5_AV_SIZE], oa[MX5_AV_SIZE];
	memcpy(ta, T.dah.av, MX5_AV_SIZE);
	memcpy(oa, O.ah.av, MX5_AV_SIZE);
	memset(ta + 8, 0, 4);
	memset(oa + 8, 0, 4);
	ta[28] &= (uint8_t)~AV_GRH_BIT;   /* excused: see run_ud */
	oa[28] &= (uint8_t)~AV_GRH_BIT;
	if (memcmp(ta, oa, MX5_AV_SIZE))
		mismatch("address vector (mlx5_create_ah vs mx5_av_build)", 0, ta, oa, MX5_AV_SIZE);

	/* An SRQ and an RC QP that takes its receives from it. */
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 15, .max_sge = MAX_SGE } };
	T.srq = ibv_create_srq(T.pd, &sa);
	struct ibv_qp_init_attr qa3 = {
		.send_cq = T.cq, .recv_cq = T.cq, .srq = T.srq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_send_sge = 1 },
	};
	T.sqp = T.srq ? ibv_create_qp(T.pd, &qa3) : NULL;
	struct mlx5dv_obj so = { .srq = { .in = T.srq, .out = &T.dsrq } };
	if (!T.sqp || mlx5dv_init_obj(&so, MLX5DV_OBJ_SRQ)) {
		fprintf(stderr, "rdmacore_dp: SRQ / its QP: %s %s\n", strerror(errno), kerr);
		return -1;
	}
	T.srq_cnt = T.dsrq.tail + 1;   /* verbs.c mlx5_create_srq: tail = max - 1 at creation */
	return 0;
}

static void *page_alloc(size_t n)
{
	return aligned_alloc(4096, (n + 4095) & ~(size_t)4095);
}

static int setup_ours(void)
{
	uint32_t sbbs = T.dq.sq.wqe_cnt, rwqes = T.dq.rq.wqe_cnt;
	uint32_t bf_off = (uint32_t)((uintptr_t)T.bf & 4095);

	O.sbuf = page_alloc((size_t)sbbs * 64);
	O.rbuf = page_alloc((size_t)rwqes * T.dq.rq.stride);
	O.swrid = calloc(sbbs, sizeof(uint64_t));
	O.snext = calloc(sbbs, sizeof(uint32_t));
	O.rwrid = calloc(rwqes, sizeof(uint64_t));
	O.cqbuf = page_alloc((size_t)T.dc.cqe_cnt * 64);
	O.tab = calloc(1, sizeof(*O.tab));
	if (!O.sbuf || !O.rbuf || !O.swrid || !O.snext || !O.rwrid || !O.cqbuf || !O.tab)
		return -1;
	memset(O.sbuf, 0, (size_t)sbbs * 64);
	memset(O.rbuf, 0, (size_t)rwqes * T.dq.rq.stride);
	O.bar.base = O.uar;
	O.bar.len = sizeof(O.uar);
	struct mx5_sq_attr a = {
		.buf = O.sbuf, .wqe_cnt = sbbs, .qpn = T.qp->qp_num,
		.max_inline = MAX_INLINE, .max_sge = MAX_SGE, .qp_type = IBV_QPT_RC,
		.wrid = O.swrid, .wqe_next = O.snext, .dbrec = O.dbrec, .bar = &O.bar,
		.bf_off = bf_off, .bf_size = T.dq.bf.size,
	};
	int rc = mx5_sq_init(&O.sq, &a);
	if (rc) {
		fprintf(stderr, "rdmacore_dp: mx5_sq_init: %d (ring %u BBs)\n", rc, sbbs);
		return -1;
	}
	rc = mx5_rq_init(&O.rq, O.rbuf, rwqes, MAX_SGE, O.rwrid, O.dbrec);
	if (rc || (1u << O.rq.wqe_shift) != T.dq.rq.stride) {
		fprintf(stderr, "rdmacore_dp: mx5_rq_init: %d, stride %u vs rdma-core's %u\n", rc,
			1u << O.rq.wqe_shift, T.dq.rq.stride);
		return -1;
	}
	O.ref.sq = &O.sq;
	O.ref.rq = &O.rq;
	if (mx5_wq_table_set(O.tab, T.qp->qp_num, &O.ref))
		return -1;

	uint32_t ubbs = T.du.sq.wqe_cnt;
	O.ubuf = page_alloc((size_t)ubbs * 64);
	O.uwrid = calloc(ubbs, sizeof(uint64_t));
	O.unext = calloc(ubbs, sizeof(uint32_t));
	if (!O.ubuf || !O.uwrid || !O.unext)
		return -1;
	memset(O.ubuf, 0, (size_t)ubbs * 64);
	struct mx5_sq_attr ua = {
		.buf = O.ubuf, .wqe_cnt = ubbs, .qpn = T.ud->qp_num, .max_inline = 64, .max_sge = 2,
		.qp_type = IBV_QPT_UD, .av_offset = (uint32_t)offsetof(__typeof__(O.ah), av),
		.wrid = O.uwrid, .wqe_next = O.unext, .dbrec = O.udbrec, .bar = &O.bar,
		.bf_off = (uint32_t)((uintptr_t)T.udbf & 4095), .bf_size = T.du.bf.size,
	};
	rc = mx5_sq_init(&O.ud, &ua);
	if (rc) {
		fprintf(stderr, "rdmacore_dp: mx5_sq_init (UD): %d (ring %u BBs)\n", rc, ubbs);
		return -1;
	}
	O.uref.sq = &O.ud;
	if (mx5_wq_table_set(O.tab, T.ud->qp_num, &O.uref))
		return -1;

	O.srqbuf = page_alloc((size_t)T.srq_cnt * T.dsrq.stride);
	O.srqwrid = calloc(T.srq_cnt, sizeof(uint64_t));
	if (!O.srqbuf || !O.srqwrid)
		return -1;
	rc = mx5_srq_ring_init(&O.srq, O.srqbuf, T.srq_cnt, MAX_SGE, O.srqwrid, O.srqdb);
	if (rc || (1u << O.srq.wqe_shift) != T.dsrq.stride) {
		fprintf(stderr, "rdmacore_dp: mx5_srq_ring_init: %d, stride %u vs rdma-core's %u\n", rc,
			1u << O.srq.wqe_shift, T.dsrq.stride);
		return -1;
	}
	O.sref.srq = &O.srq;
	O.sref.sq = &O.sq;   /* never posted to: its requester side is not exercised */
	if (mx5_wq_table_set(O.tab, T.sqp->qp_num, &O.sref))
		return -1;
	/* both CQs start as rdma-core initialised its own (verbs.c create_cq: every entry
	 * MLX5_CQE_INVALID, owner bit 0) */
	for (uint32_t i = 0; i < T.dc.cqe_cnt; i++)
		memcpy(O.cqbuf + (size_t)i * 64, (uint8_t *)T.dc.buf + (size_t)i * 64, 64);
	rc = mx5_cq_ring_init(&O.cq, O.cqbuf, T.dc.cqe_cnt, T.dc.cqn, O.cq_dbrec, &O.bar, 0x20, O.tab);
	if (rc) {
		fprintf(stderr, "rdmacore_dp: mx5_cq_ring_init: %d\n", rc);
		return -1;
	}
	return 0;
}

/* Compare everything the device could see after one post. */
static void compare_queues(unsigned at)
{
	size_t sq_bytes = (size_t)T.dq.sq.wqe_cnt * 64, rq_bytes = (size_t)T.dq.rq.wqe_cnt * T.dq.rq.stride;

	if (memcmp(T.dq.sq.buf, O.sbuf, sq_bytes))
		mismatch("send ring", at, T.dq.sq.buf, O.sbuf, sq_bytes);
	if (memcmp(T.dq.rq.buf, O.rbuf, rq_bytes))
		mismatch("receive ring", at, T.dq.rq.buf, O.rbuf, rq_bytes);
	if (memcmp(T.dq.dbrec, O.dbrec, 8))
		mismatch("doorbell record", at, (const uint8_t *)T.dq.dbrec, O.dbrec, 8);
	if (memcmp(T.bf, O.uar + ((uintptr_t)T.bf & 4095), BF_REG_SIZE))
		mismatch("BlueFlame register / doorbell", at, T.bf, O.uar + ((uintptr_t)T.bf & 4095),
			 BF_REG_SIZE);
	/* The next post's writes are compared alone: rings and register start zeroed on both
	 * sides.  (rdma-core leaves bytes it does not own as the last lap left them: e.g. a
	 * FETCH_ADD's compare field, qp.c set_atomic_seg, which ours writes as 0.) */
	memset(T.dq.sq.buf, 0, sq_bytes);
	memset(O.sbuf, 0, sq_bytes);
	memset(T.dq.rq.buf, 0, rq_bytes);
	memset(O.rbuf, 0, rq_bytes);
	memset(T.bf, 0, BF_REG_SIZE);
	memset(O.uar + ((uintptr_t)T.bf & 4095), 0, BF_REG_SIZE);
}

/* The fields ibv_poll_cq(3) defines for this completion: wr_id, status, opcode,
 * qp_num and wc_flags always; vendor_err on error; byte_len for receives, READ and
 * atomics; imm_data when a flag says it holds the immediate or the invalidated rkey;
 * src_qp, pkey_index, slid, sl and dlid_path_bits for receives (a requester
 * completion's imm_data is undefined: rdma-core leaves it, cq.c handle_good_req). */
static void compare_wc(const char *what, const struct ibv_wc *a, const struct ibv_wc *b)
{
	int bad = a->wr_id != b->wr_id || a->status != b->status;

	if (a->status != IBV_WC_SUCCESS) {
		bad |= a->vendor_err != b->vendor_err;
	} else {
		int recv = (a->opcode & IBV_WC_RECV) != 0;
		int len = recv || a->opcode == IBV_WC_RDMA_READ || a->opcode == IBV_WC_COMP_SWAP ||
			  a->opcode == IBV_WC_FETCH_ADD;

		bad |= a->opcode != b->opcode || a->qp_num != b->qp_num || a->wc_flags != b->wc_flags;
		bad |= len && a->byte_len != b->byte_len;
		bad |= recv && (a->wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV)) &&
		       a->imm_data != b->imm_data;
		bad |= recv && (a->src_qp != b->src_qp || a->pkey_index != b->pkey_index ||
				a->slid != b->slid || a->sl != b->sl || a->dlid_path_bits != b->dlid_path_bits);
	}
	if (bad && n_bad++ < 12)
		fprintf(stderr, "rdmacore_dp: MISMATCH %s CQE %u: rdma-core {wr_id %llu status %d "
			"opcode %d len %u qp %#x flags %#x imm %#x src_qp %#x pkey %u slid %u sl %u "
			"vendor_err %#x} ours {wr_id %llu status %d opcode %d len %u qp %#x flags %#x "
			"imm %#x src_qp %#x pkey %u slid %u sl %u vendor_err %#x}\n", what, n_cqe,
			(unsigned long long)a->wr_id, a->status, a->opcode, a->byte_len, a->qp_num,
			a->wc_flags, a->imm_data, a->src_qp, a->pkey_index, a->slid, a->sl, a->vendor_err,
			(unsigned long long)b->wr_id, b->status, b->opcode, b->byte_len, b->qp_num,
			b->wc_flags, b->imm_data, b->src_qp, b->pkey_index, b->slid, b->sl, b->vendor_err);
}

/* The device writes one CQE (64 bytes, owner bit of this lap) into both CQs; both
 * pollers take it and their ibv_wc are compared. */
static void feed_cqe(const char *what, const uint8_t cqe[64])
{
	uint32_t n = T.dc.cqe_cnt, i = T.cq_ci & (n - 1);
	uint8_t c[64];
	struct ibv_wc a, b;

	memcpy(c, cqe, 64);
	c[63] = (uint8_t)((c[63] & 0xfe) | ((T.cq_ci / n) & 1));
	memcpy((uint8_t *)T.dc.buf + (size_t)i * 64, c, 64);
	memcpy(O.cqbuf + (size_t)i * 64, c, 64);
	T.cq_ci++;
	memset(&a, 0xa5, sizeof(a));
	memset(&b, 0xa5, sizeof(b));
	int ra = ibv_poll_cq(T.cq, 1, &a);
	int rb = mx5_poll_cq(&O.cq, 1, &b);
	n_cqe++;
	if (ra != 1 || rb != 1) {
		if (n_bad++ < 12)
			fprintf(stderr, "rdmacore_dp: MISMATCH %s CQE %u: rdma-core polled %d, ours %d\n",
				what, n_cqe, ra, rb);
		return;
	}
	compare_wc(what, &a, &b);
	if (memcmp(T.dc.dbrec, O.cq_dbrec, 4))
		mismatch("CQ doorbell record (consumer index)", n_cqe, (const uint8_t *)T.dc.dbrec,
			 O.cq_dbrec, 4);
}

static void put_be32(uint8_t *p, uint32_t v) { v = htobe32(v); memcpy(p, &v, 4); }
static void put_be16(uint8_t *p, uint16_t v) { v = htobe16(v); memcpy(p, &v, 2); }

/* A requester CQE for the WQE at basic block `idx` (PRM "Completion Queue Entry"). */
static void req_cqe_for(uint8_t c[64], uint32_t uidx, uint32_t qpn, uint8_t wqe_opcode, uint16_t idx,
			uint32_t byte_cnt)
{
	memset(c, 0, 64);
	put_be32(c + 32, uidx);                          /* srqn_uidx (CQE version 1) */
	put_be32(c + 44, byte_cnt);
	put_be32(c + 56, (uint32_t)wqe_opcode << 24 | qpn);
	put_be16(c + 60, idx);
	c[63] = MLX5_CQE_REQ << 4;
}

static void req_cqe(uint8_t c[64], uint8_t wqe_opcode, uint16_t idx, uint32_t byte_cnt)
{
	req_cqe_for(c, qp_uidx, T.qp->qp_num, wqe_opcode, idx, byte_cnt);
}

/* ------------------------------------------------------------ the work requests */

static struct ibv_sge sgeset[3][MAX_SGE];   /* one list per WR of a chain */
static struct ibv_sge *sges = sgeset[0];

static void set_sges(struct ibv_send_wr *w, unsigned n, unsigned k)
{
	for (unsigned i = 0; i < n; i++) {
		sges[i].addr = (uintptr_t)payload + 64 * i + (k & 7);
		sges[i].length = (k + i) % 5 == 0 && n > 1 ? 0 : 16 + 8 * ((k + i) % 13);
		sges[i].lkey = 0x1000 + i;
	}
	w->sg_list = sges;
	w->num_sge = (int)n;
}

/* Work request number k of the cycle: every RC opcode, SGE counts, inline, flags. */
static void make_wr(struct ibv_send_wr *w, unsigned k)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND, IBV_WR_SEND_WITH_IMM,
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_SEND_WITH_INV,
	};
	unsigned flagsets[] = { 0, IBV_SEND_SIGNALED, IBV_SEND_FENCE | IBV_SEND_SIGNALED,
				IBV_SEND_SOLICITED, IBV_SEND_FENCE };
	memset(w, 0, sizeof(*w));
	w->wr_id = 0x5000000000ull + k;
	w->opcode = ops[k % (sizeof(ops) / sizeof(ops[0]))];
	w->send_flags = flagsets[(k / 8) % 5];
	w->wr.rdma.remote_addr = 0x7f0000001000ull + 8 * k;
	w->wr.rdma.rkey = 0x4400 + (k & 0xff);
	switch (w->opcode) {
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w->wr.atomic.remote_addr = 0x7f0000002000ull + 8 * (k & 0xff);
		w->wr.atomic.rkey = 0x5500;
		w->wr.atomic.compare_add = 0x1111222233334444ull + k;
		w->wr.atomic.swap = 0x5555666677778888ull ^ k;
		set_sges(w, 1, k);
		sges[0].length = 8;
		return;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_SEND_WITH_IMM:
		w->imm_data = htobe32(0xabc00000u + k);
		break;
	case IBV_WR_SEND_WITH_INV:
		w->invalidate_rkey = 0x9900 + (k & 0xff);
		break;
	default:
		break;
	}
	/* inline on the ops that may carry it, every third time: 1..200 bytes */
	if ((k / 3) % 3 == 0 && w->opcode != IBV_WR_RDMA_READ) {
		unsigned n = 1 + (k / 9) % 3;
		set_sges(w, n, k);
		uint32_t len = 1 + (k * 37) % MAX_INLINE;
		for (unsigned i = 0; i < n; i++)
			sges[i].length = len / n;
		sges[0].length += len % n;
		w->send_flags |= IBV_SEND_INLINE;
		return;
	}
	set_sges(w, (k / 5) % (MAX_SGE + 1), k);
}

/* mlx5 WQE opcode of the last WQE a CQE names (what hardware echoes in sop_drop_qpn). */
static uint8_t wqe_opcode_at(uint32_t bb)
{
	const uint8_t *ctrl = (const uint8_t *)T.dq.sq.buf + (size_t)(bb & (T.dq.sq.wqe_cnt - 1)) * 64;
	return ctrl[3];
}

static unsigned run_sends(void)
{
	unsigned k = 0;
	uint32_t start = O.sq.cur_post;

	/* past 2^16 + a few laps of the ring: every WR kind at every ring position */
	while (O.sq.cur_post - start < 65536u + 4 * T.dq.sq.wqe_cnt && !kerr[0]) {
		struct ibv_send_wr w[3], *bad_t = NULL, *bad_o = NULL;
		unsigned chain = (k % 7 == 6) ? 3 : (k % 11 == 10) ? 2 : 1;

		for (unsigned i = 0; i < chain; i++) {
			sges = sgeset[i];
			make_wr(&w[i], k + i);
			w[i].next = i + 1 < chain ? &w[i + 1] : NULL;
		}
		/* the two libraries get the same WRs (the SGE array is shared and not written) */
		uint32_t before = O.sq.cur_post;
		int rt = ibv_post_send(T.qp, &w[0], &bad_t);
		int ro = -mx5_post_send(&O.sq, &w[0], &bad_o);
		n_wr += chain;
		if (rt != ro || bad_t != bad_o) {
			if (n_bad++ < 12)
				fprintf(stderr, "rdmacore_dp: MISMATCH post %u: rdma-core %d, ours %d\n", k, rt, ro);
			return k;
		}
		compare_queues(k);
		/* the device completes the last WQE: rdma-core retires through it (cq.c
		 * wq->tail = wqe_head[idx] + 1), ours through wqe_next */
		if (O.sq.cur_post != before) {
			uint32_t last = before;
			for (uint32_t p = before; p != O.sq.cur_post; p = O.snext[p & (O.sq.wqe_cnt - 1)])
				last = p;
			uint8_t c[64], op = wqe_opcode_at(last);
			req_cqe(c, op, (uint16_t)last, op == MLX5_OPCODE_RDMA_READ ? 100 :
				(op == MLX5_OPCODE_ATOMIC_CS || op == MLX5_OPCODE_ATOMIC_FA) ? 8 : 0);
			feed_cqe("requester", c);
		}
		k += chain;
	}
	return k;
}

/* Receives: post the same receive WRs, then responder CQEs of every kind. */
static void run_recvs(void)
{
	static const struct { uint8_t op; uint32_t flags; } kinds[] = {
		{ MLX5_CQE_RESP_SEND, 0 }, { MLX5_CQE_RESP_SEND_IMM, 0 }, { MLX5_CQE_RESP_WR_IMM, 0 },
		{ MLX5_CQE_RESP_SEND_INV, 0 }, { MLX5_CQE_RESP_SEND, 1u << 28 /* grh */ },
	};
	for (unsigned r = 0; r < 3 * RQ_WR && !kerr[0]; r++) {
		struct ibv_recv_wr w, *bt = NULL, *bo = NULL;
		struct ibv_sge s[MAX_SGE];
		unsigned n = r % (MAX_SGE + 1);

		for (unsigned i = 0; i < n; i++)
			s[i] = (struct ibv_sge){ (uintptr_t)payload + 128 * i, 64 + 32 * i + r, 0x2000 + i };
		memset(&w, 0, sizeof(w));
		w.wr_id = 0x7000 + r;
		w.sg_list = s;
		w.num_sge = (int)n;
		int rt = ibv_post_recv(T.qp, &w, &bt);
		int ro = -mx5_post_recv(&O.rq, &w, &bo);
		n_wr++;
		if (rt != ro) {
			if (n_bad++ < 12)
				fprintf(stderr, "rdmacore_dp: MISMATCH post_recv %u: rdma-core %d, ours %d\n", r, rt, ro);
			return;
		}
		compare_queues(100000 + r);
		uint8_t c[64] = { 0 };
		unsigned kd = r % (sizeof(kinds) / sizeof(kinds[0]));
		/* struct mlx5_cqe64: ml_path 17, slid 22, flags_rqpn 24 (g 29:28, sl 27:24,
		 * remote QPN 23:0) */
		c[17] = (uint8_t)(r & 0x7f);
		put_be16(c + 22, (uint16_t)(0x100 + r));
		put_be32(c + 24, kinds[kd].flags | (r & 0xfu) << 24 | (0x12345u + r));
		put_be32(c + 32, qp_uidx);
		put_be32(c + 36, 0xfeed0000u + r);                 /* imm_inval_pkey */
		put_be32(c + 44, 17 + r);                          /* byte_cnt */
		put_be32(c + 56, T.qp->qp_num);
		put_be16(c + 60, (uint16_t)r);                     /* wqe_counter */
		c[63] = (uint8_t)(kinds[kd].op << 4);
		feed_cqe("responder", c);
	}
}

/* Error CQEs (PRM "Error CQE"; rdma-core cq.c mlx5_handle_error_cqe): every syndrome,
 * requester and responder. */
static void run_errors(void)
{
	static const uint8_t synd[] = {
		MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR,
		MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, MLX5_CQE_SYNDROME_WR_FLUSH_ERR,
		MLX5_CQE_SYNDROME_MW_BIND_ERR, MLX5_CQE_SYNDROME_BAD_RESP_ERR,
		MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR, MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR,
		MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, MLX5_CQE_SYNDROME_REMOTE_OP_ERR,
		MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR,
		MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR, 0x33 /* one no verbs status names */,
	};
	for (unsigned s = 0; s < sizeof(synd) && !kerr[0]; s++) {
		/* requester: post one WR, complete it in error */
		struct ibv_send_wr w, *bt = NULL, *bo = NULL;
		sges = sgeset[0];
		make_wr(&w, s * 5);
		w.next = NULL;
		uint32_t at = O.sq.cur_post;
		int rt = ibv_post_send(T.qp, &w, &bt);
		int ro = -mx5_post_send(&O.sq, &w, &bo);
		n_wr++;
		if (rt || ro) {
			if (n_bad++ < 12)
				fprintf(stderr, "rdmacore_dp: MISMATCH error-phase post: %d / %d\n", rt, ro);
			return;
		}
		compare_queues(200000 + s);
		uint8_t c[64] = { 0 };
		put_be32(c + 32, qp_uidx);
		c[54] = (uint8_t)(0x80 + s);                       /* vendor_err_synd */
		c[55] = synd[s];                                   /* syndrome */
		put_be32(c + 56, (uint32_t)wqe_opcode_at(at) << 24 | T.qp->qp_num);
		put_be16(c + 60, (uint16_t)at);
		c[63] = MLX5_CQE_REQ_ERR << 4;
		feed_cqe("requester error", c);
		/* responder: one receive, completed in error */
		struct ibv_recv_wr rw = { .wr_id = 0x9000 + s, .sg_list = sges, .num_sge = 1 }, *rb;
		sges[0] = (struct ibv_sge){ (uintptr_t)payload, 256, 0x2222 };
		uint16_t ridx = (uint16_t)O.rq.head;
		rt = ibv_post_recv(T.qp, &rw, &rb);
		ro = -mx5_post_recv(&O.rq, &rw, &rb);
		n_wr++;
		compare_queues(300000 + s);
		c[63] = MLX5_CQE_RESP_ERR << 4;
		put_be32(c + 56, T.qp->qp_num);
		put_be16(c + 60, ridx);
		feed_cqe("responder error", c);
	}
}

/* Excused difference: the AV's grh bit (grh_gid_fl bit 30).  rdma-core leaves it 0 on
 * RoCE ("reserved for RoCE and shouldn't be set", verbs.c mlx5_create_ah); Linux
 * mlx5_ib sets it for every AH with a GRH, RoCE included (ah.c create_ib_ah), and so do
 * we (datapath.c mx5_av_build).  Firmware-proven drivers do both, so neither is wrong. */

static void mask_grh(uint8_t *wqe_ring, uint32_t at, uint32_t cnt, uint8_t *bf)
{
	wqe_ring[(size_t)(at & (cnt - 1)) * 64 + 16 + 28] &= (uint8_t)~AV_GRH_BIT;
	bf[16 + 28] &= (uint8_t)~AV_GRH_BIT;
	bf[BF_REG_SIZE / 2 + 16 + 28] &= (uint8_t)~AV_GRH_BIT;
}

/* UD sends: datagram segment (AV, qkey, remote QPN), inline and gathered, the ring
 * wrapping; the same WR with each library's own AH. */
static void run_ud(void)
{
	size_t bytes = (size_t)T.du.sq.wqe_cnt * 64;
	uint8_t *obf = O.uar + ((uintptr_t)T.udbf & 4095);

	memset(T.udbf, 0, BF_REG_SIZE / 2 * 2);
	for (unsigned k = 0; k < 4 * T.du.sq.wqe_cnt && !kerr[0]; k++) {
		struct ibv_send_wr w, *bt = NULL, *bo = NULL;
		struct ibv_sge sg[2];
		unsigned n = k % 3;

		memset(&w, 0, sizeof(w));
		w.wr_id = 0x8000 + k;
		w.opcode = (k & 1) ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
		w.imm_data = htobe32(0x1d000000u + k);
		w.send_flags = (k % 4 == 3) ? IBV_SEND_SIGNALED | IBV_SEND_SOLICITED : IBV_SEND_SIGNALED;
		for (unsigned i = 0; i < n; i++)
			sg[i] = (struct ibv_sge){ (uintptr_t)payload + 32 * i, 7 + 11 * i + (k % 9), 0x3000 + i };
		if (k % 5 == 4 && n)
			w.send_flags |= IBV_SEND_INLINE;
		w.sg_list = sg;
		w.num_sge = (int)n;
		w.wr.ud.remote_qpn = 0x1200 + k;
		w.wr.ud.remote_qkey = 0x11111111u ^ k;
		uint32_t at = O.ud.cur_post;
		w.wr.ud.ah = T.ah;
		int rt = ibv_post_send(T.ud, &w, &bt);
		w.wr.ud.ah = &O.ah.ibv;
		int ro = -mx5_post_send(&O.ud, &w, &bo);
		n_wr++;
		if (rt != ro) {
			if (n_bad++ < 12)
				fprintf(stderr, "rdmacore_dp: MISMATCH UD post %u: rdma-core %d, ours %d\n", k, rt, ro);
			return;
		}
		mask_grh(T.du.sq.buf, at, T.du.sq.wqe_cnt, T.udbf);
		mask_grh(O.ubuf, at, T.du.sq.wqe_cnt, obf);
		n_excused++;
		if (memcmp(T.du.sq.buf, O.ubuf, bytes))
			mismatch("UD send ring", k, T.du.sq.buf, O.ubuf, bytes);
		if (memcmp((uint8_t *)T.du.dbrec + 4, O.udbrec + 4, 4))
			mismatch("UD doorbell record", k, (const uint8_t *)T.du.dbrec + 4, O.udbrec + 4, 4);
		if (memcmp(T.udbf, obf, BF_REG_SIZE))
			mismatch("UD BlueFlame register / doorbell", k, T.udbf, obf, BF_REG_SIZE);
		memset(T.du.sq.buf, 0, bytes);
		memset(O.ubuf, 0, bytes);
		memset(T.udbf, 0, BF_REG_SIZE);
		memset(obf, 0, BF_REG_SIZE);
		uint8_t c[64];
		req_cqe_for(c, ud_uidx, T.ud->qp_num, (k & 1) ? MLX5_OPCODE_SEND_IMM : MLX5_OPCODE_SEND,
			    (uint16_t)at, 0);
		feed_cqe("UD requester", c);
	}
}

/* SRQ receives: the free list as both libraries keep it (next_wqe_index links, the
 * tail WQE left free), WQEs completed out of order so the list is reordered, the
 * doorbell record's counter; responder CQEs naming the SRQ WQE by wqe_counter. */
static void run_srq(void)
{
	size_t bytes = (size_t)T.srq_cnt * T.dsrq.stride;

	if (memcmp(T.dsrq.buf, O.srqbuf, bytes))
		mismatch("SRQ ring as created", 0, T.dsrq.buf, O.srqbuf, bytes);
	for (unsigned round = 0; round < 6 && !kerr[0]; round++) {
		uint16_t idx[16];
		unsigned n = 4 + round % 3 * 4;   /* 4, 8 or 12 of the 15 */

		for (unsigned k = 0; k < n; k++) {
			struct ibv_recv_wr w, *bt = NULL, *bo = NULL;
			struct ibv_sge sg[MAX_SGE];
			unsigned ns = (round + k) % (MAX_SGE + 1);

			for (unsigned i = 0; i < ns; i++)
				sg[i] = (struct ibv_sge){ (uintptr_t)payload + 64 * i, 33 + i + k, 0x4000 + i };
			memset(&w, 0, sizeof(w));
			w.wr_id = 0xa000 + round * 100 + k;
			w.sg_list = sg;
			w.num_sge = (int)ns;
			idx[k] = (uint16_t)O.srq.head;
			int rt = ibv_post_srq_recv(T.srq, &w, &bt);
			int ro = -mx5_post_srq_recv(&O.srq, &w, &bo);
			n_wr++;
			if (rt != ro) {
				if (n_bad++ < 12)
					fprintf(stderr, "rdmacore_dp: MISMATCH post_srq_recv %u/%u: rdma-core %d, ours %d\n",
						round, k, rt, ro);
				return;
			}
			if (memcmp(T.dsrq.buf, O.srqbuf, bytes))
				mismatch("SRQ ring", 400000 + round * 100 + k, T.dsrq.buf, O.srqbuf, bytes);
			if (memcmp(T.dsrq.dbrec, O.srqdb, 4))
				mismatch("SRQ doorbell record", 400000 + round * 100 + k,
					 (const uint8_t *)T.dsrq.dbrec, O.srqdb, 4);
		}
		/* the device completes them in an order of its own: every other one first */
		for (unsigned pass = 0; pass < 2; pass++)
			for (unsigned k = pass; k < n; k += 2) {
				uint8_t c[64] = { 0 };
				put_be32(c + 24, 0x777u + k);              /* flags_rqpn: remote QPN */
				put_be32(c + 32, srq_qp_uidx);
				put_be32(c + 44, 40 + k);
				put_be32(c + 56, T.sqp->qp_num);
				put_be16(c + 60, idx[k]);
				c[63] = (uint8_t)((k % 3 == 2 ? MLX5_CQE_RESP_SEND_IMM : MLX5_CQE_RESP_SEND) << 4);
				feed_cqe("SRQ responder", c);
			}
		/* what the pollers gave back to the free list (mlx5_free_srq_wqe: the freed
		 * WQE becomes the tail) must be the same list */
		if (memcmp(T.dsrq.buf, O.srqbuf, bytes))
			mismatch("SRQ ring after completions", 400000 + round * 100 + 99, T.dsrq.buf, O.srqbuf, bytes);
	}
}

/* ------------------------------------------------------------ BlueFlame policies */

/* rdma-core reads MLX5_POST_SEND_PREFER_BF and MLX5_SHUT_UP_BF when a context is created
 * (v44 providers/mlx5/mlx5.c mlx5_init_context: get_always_bf, get_shut_up_bf) and
 * post_send_db (qp.c) decides from them; ours takes the same knobs as mx5_open_attr
 * bf_policy (uverbs/device.c uv_bf_policy), which reaches the send queue as bf_size /
 * bf_inline_only (hw/mlx5/qp_ctrl.c).  For each policy: a new rdma-core context opened
 * with the variable set, one RC QP, and ours with that policy; then the same WQE kinds
 * (small and 3-block inline, ctrl-only, multi-unit SGE lists, an RDMA write, a chain of
 * two) are posted on both and the send ring and the register compared after each post.
 * MX5_BF_OFF: ours rings a register that has no BlueFlame half (mx5_uar_bf_get gives
 * half 0), as rdma-core on a kernel with dynamic UARs does (the context's NC UAR,
 * buf_size 0); the made-up kernel here has none, so rdma-core uses its legacy
 * registers and alternates halves: there the doorbell's 8 bytes are compared wherever
 * each wrote them, and nothing else may be written (no BlueFlame burst). */
static const struct {
	const char *name, *var, *val;
	unsigned policy;
} bf_pol[] = {
	{ "prefer", NULL, NULL, MX5_BF_PREFER },
	{ "inline-only", "MLX5_POST_SEND_PREFER_BF", "0", MX5_BF_INLINE_ONLY },
	{ "off", "MLX5_SHUT_UP_BF", "1", MX5_BF_OFF },
};
static unsigned n_bf_posts, n_bf_bursts, n_bf_dbs;

static int bf_words_nonzero(const uint8_t *p, size_t n)
{
	int c = 0;
	for (size_t i = 0; i < n; i += 8) {
		uint64_t v;
		memcpy(&v, p + i, 8);
		c += v != 0;
	}
	return c;
}

static void run_bf_policy(unsigned pi)
{
	char what[96];
	int n = 0;

	unsetenv("MLX5_POST_SEND_PREFER_BF");
	unsetenv("MLX5_SHUT_UP_BF");
	if (bf_pol[pi].var)
		setenv(bf_pol[pi].var, bf_pol[pi].val, 1);
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_context *ctx = list && n > 0 ? ibv_open_device(list[0]) : NULL;
	if (list)
		ibv_free_device_list(list);
	unsetenv("MLX5_POST_SEND_PREFER_BF");
	unsetenv("MLX5_SHUT_UP_BF");
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 63, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = SQ_WR, .max_recv_wr = 1, .max_send_sge = MAX_SGE,
			 .max_recv_sge = 1, .max_inline_data = MAX_INLINE },
	};
	struct ibv_qp *qp = cq ? ibv_create_qp(pd, &ia) : NULL;
	struct mlx5dv_qp dq;
	struct mlx5dv_obj o = { .qp = { .in = qp, .out = &dq } };
	int rc = qp ? 0 : -1;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	if (!rc)
		rc = ibv_modify_qp(qp, &qa, IBV_QP_STATE);
	qa.qp_state = IBV_QPS_RTR;
	if (!rc)
		rc = ibv_modify_qp(qp, &qa, IBV_QP_STATE);
	qa.qp_state = IBV_QPS_RTS;
	if (!rc)
		rc = ibv_modify_qp(qp, &qa, IBV_QP_STATE);
	if (!rc)
		rc = mlx5dv_init_obj(&o, MLX5DV_OBJ_QP);
	if (!rc)
		rc = mprotect((void *)((uintptr_t)dq.bf.reg & ~(uintptr_t)4095), 4096, PROT_READ | PROT_WRITE);
	uint32_t half = rc ? 0 : dq.bf.size;
	uint8_t *tbf = rc ? NULL : (uint8_t *)dq.bf.reg;   /* its first half: a new register starts there */
	/* ours, the same geometry, the policy as qp_ctrl.c gives it */
	uint32_t bbs = rc ? 0 : dq.sq.wqe_cnt;
	uint8_t *sbuf = bbs ? page_alloc((size_t)bbs * 64) : NULL;
	uint64_t *wrid = bbs ? calloc(bbs, sizeof(uint64_t)) : NULL;
	uint32_t *next = bbs ? calloc(bbs, sizeof(uint32_t)) : NULL;
	static uint8_t uar[4096] __attribute__((aligned(64)));
	uint8_t dbrec[8] __attribute__((aligned(8))) = { 0 };
	struct shim_bar bar = { .base = uar, .len = sizeof(uar) };
	struct mx5_sq sq;
	uint32_t obf = tbf ? (uint32_t)((uintptr_t)tbf & 4095) : 0;
	if (!rc && sbuf && wrid && next) {
		memset(sbuf, 0, (size_t)bbs * 64);
		memset(uar, 0, sizeof(uar));
		struct mx5_sq_attr a = {
			.buf = sbuf, .wqe_cnt = bbs, .qpn = qp->qp_num, .max_inline = MAX_INLINE,
			.max_sge = MAX_SGE, .qp_type = IBV_QPT_RC, .wrid = wrid, .wqe_next = next,
			.dbrec = dbrec, .bar = &bar, .bf_off = obf,
			.bf_size = bf_pol[pi].policy == MX5_BF_OFF ? 0 : half,
			.bf_inline_only = bf_pol[pi].policy == MX5_BF_INLINE_ONLY,
		};
		rc = mx5_sq_init(&sq, &a);
	} else {
		rc = -1;
	}
	if (rc) {
		snprintf(kerr, sizeof(kerr), "BlueFlame policy %s: setup failed (%s)", bf_pol[pi].name,
			 strerror(errno));
		goto out;
	}
	/* kinds: 0 inline 16 B, 1 inline 150 B (3 blocks), 2 ctrl-only, 3 four SGEs (2 blocks),
	 * 4 RDMA write with one SGE, 5 a chain of two sends */
	for (unsigned k = 0; k < 12 && !kerr[0]; k++) {
		unsigned kind = k % 6;
		struct ibv_sge sg[MAX_SGE];
		struct ibv_send_wr w[2], *bt = NULL, *bo = NULL;
		for (unsigned i = 0; i < MAX_SGE; i++)
			sg[i] = (struct ibv_sge){ .addr = (uintptr_t)payload + 64 * i, .length = 40 + i,
						  .lkey = 0x1234 + i };
		memset(w, 0, sizeof(w));
		w[0].wr_id = 1000 + k;
		w[0].opcode = IBV_WR_SEND;
		w[0].send_flags = IBV_SEND_SIGNALED;
		w[0].sg_list = sg;
		if (kind == 0 || kind == 1) {
			sg[0].length = kind == 0 ? 16 : 150;
			w[0].num_sge = 1;
			w[0].send_flags |= IBV_SEND_INLINE;
		} else if (kind == 2) {
			w[0].num_sge = 0;
		} else if (kind == 3) {
			w[0].num_sge = MAX_SGE;
		} else if (kind == 4) {
			w[0].opcode = IBV_WR_RDMA_WRITE;
			w[0].num_sge = 1;
			w[0].wr.rdma.remote_addr = 0x7000100 + k;
			w[0].wr.rdma.rkey = 0x4321;
		} else {
			w[0].num_sge = 2;
			w[0].next = &w[1];
			w[1] = w[0];
			w[1].next = NULL;
			w[1].wr_id++;
		}
		memset(tbf, 0, 2 * half);
		memset(uar + obf, 0, 2 * half);
		int rt = ibv_post_send(qp, w, &bt);
		int ro = -mx5_post_send(&sq, w, &bo);
		n_bf_posts++;
		snprintf(what, sizeof(what), "BlueFlame policy %s, WQE kind %u: send ring", bf_pol[pi].name, kind);
		if (rt != ro || rt) {
			if (n_bad++ < 12)
				fprintf(stderr, "rdmacore_dp: MISMATCH %s: post rdma-core %d, ours %d\n", what, rt, ro);
			continue;
		}
		if (memcmp(dq.sq.buf, sbuf, (size_t)bbs * 64))
			mismatch(what, k, dq.sq.buf, sbuf, (size_t)bbs * 64);
		if (memcmp(dq.dbrec, dbrec, 8))
			mismatch("BlueFlame policy: doorbell record", k, (const uint8_t *)dq.dbrec, dbrec, 8);
		snprintf(what, sizeof(what), "BlueFlame policy %s, WQE kind %u: register", bf_pol[pi].name, kind);
		int words = bf_words_nonzero(tbf, 2 * half);
		if (words > 1)
			n_bf_bursts++;
		else
			n_bf_dbs++;
		if (bf_pol[pi].policy != MX5_BF_OFF) {
			if (memcmp(tbf, uar + obf, 2 * half))
				mismatch(what, k, tbf, uar + obf, 2 * half);
		} else {
			/* theirs: 8 bytes at the half of this post, ours: 8 bytes at our one offset */
			const uint8_t *th = tbf + (k & 1) * half;
			if (words != 1 || bf_words_nonzero(uar + obf, 2 * half) != 1 || memcmp(th, uar + obf, 8))
				mismatch(what, k, th, uar + obf, 8);
		}
	}
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
	free(sbuf);
	free(wrid);
	free(next);
}

int main(void)
{
	const char *ci = getenv("CI");
	int strict = ci && strcmp(ci, "true") == 0;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	/* rdma-core's defaults, whatever the environment says */
	unsetenv("MLX5_POST_SEND_PREFER_BF");
	unsetenv("MLX5_SHUT_UP_BF");
	unsetenv("MLX5_CQE_SIZE");
	unsetenv("MLX5_TOTAL_UUARS");
	setenv("MLX5_SINGLE_THREADED", "1", 1);
	if (make_sysfs()) {
		fprintf(stderr, "rdmacore_dp: cannot write the test's sysfs tree\n");
		return 1;
	}
	if (setup_theirs() || setup_ours()) {
		rm_sysfs();
		if (!strict && access("/usr/lib/x86_64-linux-gnu/libibverbs/libmlx5-rdmav34.so", F_OK) &&
		    access("/usr/lib/aarch64-linux-gnu/libibverbs/libmlx5-rdmav34.so", F_OK)) {
			printf("rdmacore_dp: SKIP: Debian's ibverbs-providers (libmlx5) is not installed\n");
			return 77;
		}
		return 1;
	}
	unsigned sends = run_sends();
	run_recvs();
	run_errors();
	run_ud();
	run_srq();
	for (unsigned i = 0; i < sizeof(bf_pol) / sizeof(bf_pol[0]) && !kerr[0]; i++)
		run_bf_policy(i);
	if (kerr[0]) {
		fprintf(stderr, "rdmacore_dp: %s\n", kerr);
		n_bad++;
	}
	if (n_excused)
		printf("rdmacore_dp: excused in %u UD WQEs and the AV: the address vector's grh bit on "
		       "RoCE (rdma-core leaves it 0, Linux mlx5_ib ah.c and we set it)\n", n_excused);
	printf("rdma-core differential: %u work requests, %u CQEs compared, %u mismatches "
	       "(rdma-core 44 libmlx5 through %u uverbs commands; send ring %u BBs, %u posts, "
	       "producer counter %u; BlueFlame policies prefer, inline-only (MLX5_POST_SEND_PREFER_BF=0), "
	       "off (MLX5_SHUT_UP_BF=1): %u posts, %u BlueFlame bursts, %u doorbells)\n", n_wr, n_cqe, n_bad,
	       kcmds, T.dq.sq.wqe_cnt, sends, O.sq.cur_post, n_bf_posts, n_bf_bursts, n_bf_dbs);
	ibv_destroy_qp(T.sqp);
	ibv_destroy_srq(T.srq);
	ibv_destroy_ah(T.ah);
	ibv_destroy_qp(T.ud);
	ibv_destroy_qp(T.qp);
	ibv_destroy_cq(T.cq);
	ibv_dealloc_pd(T.pd);
	ibv_close_device(T.ctx);
	rm_sysfs();
	mx5_wq_table_destroy(O.tab);
	free(O.tab);
	free(O.sbuf);
	free(O.rbuf);
	free(O.swrid);
	free(O.snext);
	free(O.rwrid);
	free(O.cqbuf);
	free(O.srqbuf);
	free(O.srqwrid);
	free(O.ubuf);
	free(O.uwrid);
	free(O.unext);
	return n_bad ? 1 : 0;
}
