/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Device open/close over any shim URI, per-device error messages, command execution,
 * and the capability view.  Bring-up itself is in init.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "hw/mlx5/mx5_objects.h"
#include "hw/platform/log_level.h"
#include "hw/platform/cpu.h"

static _Thread_local char mx5_open_err[MX5_ERR_LEN];
/* Firmware status and syndrome of the command that failed this thread's last open:
 * tools tell "the device said no" (status set) from "could not reach it" (zero). */
static _Thread_local uint8_t mx5_open_st;
static _Thread_local uint32_t mx5_open_synd;

const char *mx5_open_error(void)
{
	return mx5_open_err;
}

uint8_t mx5_open_status(void)
{
	return mx5_open_st;
}

uint32_t mx5_open_syndrome(void)
{
	return mx5_open_synd;
}

uint64_t mx5_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void mx5_sleep_us(unsigned us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000 };
	nanosleep(&ts, NULL);
}


void mx5_log(enum mx5_log_level lvl, const char *fmt, ...)
{
	if ((int)lvl > (int)plat_log_level_env())
		return;
	va_list ap;
	va_start(ap, fmt);
	plat_log_vprint("mx5", (enum plat_log_level)lvl, fmt, ap);
	va_end(ap);
}

int mx5_device_bringup_info(const struct mx5_device *dev, struct mx5_bringup_info *bi)
{
	if (!dev || !bi)
		return -EINVAL;
	*bi = dev->bi;
	return 0;
}

int mx5_fail(struct mx5_device *dev, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dev->err, sizeof(dev->err), fmt, ap);
	va_end(ap);
	return err;
}

int mx5_cmd_fail(struct mx5_device *dev, int err, const char *what)
{
	/* cmdq_error already names the command, status and syndrome. */
	char tmp[MX5_ERR_LEN];
	snprintf(tmp, sizeof(tmp), "%s", dev->cmdq ? cmdq_error(dev->cmdq) : "no command queue");
	return mx5_fail(dev, err, "%s: %s", what, tmp);
}

/* Attached: the daemon runs the command (it checks it against what we own). */
static int mx5_exec_remote(struct mx5_device *dev, const void *in, size_t inlen, void *out,
			   size_t outlen)
{
	char msg[MX5_ERR_LEN];
	if (dev->health != MX5_HEALTH_OK)
		return mx5_fail(dev, -ENODEV, "device is %s: command refused",
				dev->health == MX5_HEALTH_REMOVED ? "gone (device daemon)" : "in fatal error");
	memset(out, 0, outlen);
	int rc = dev->shim->ops->cmd(dev->shim, in, inlen, out, outlen, &dev->cmd_status,
				     &dev->cmd_syndrome, msg, sizeof(msg));
	if (rc) {
		snprintf(dev->err, sizeof(dev->err), "%s", msg[0] ? msg : strerror(-rc));
		if (rc == -ENODEV)
			mx5_remote_events(dev);   /* the daemon is gone: fatal, queues flushed */
	}
	return rc;
}

int mx5_device_is_remote(const struct mx5_device *dev)
{
	return dev && dev->remote;
}

/* A child of fork() shares its parent's queues, doorbell records and (through a device
 * daemon) its connection: its commands would interleave with the parent's.  rdma-core
 * documents the same misuse (ibv_fork_init(3): a child may not use its parent's verbs
 * resources).  Refused on the command path, where a getpid() costs nothing beside the
 * command, and before any memory is taken or pinned for a new object (mx5_qbuf_alloc,
 * mx5_mr_reg): the emulated device maps memory under its device lock, which a thread of
 * the parent (its device thread, a doorbell) may have held at the fork, and a child
 * waiting for it would wait for ever.  The data path (post, poll) is not checked, so a
 * child that only polls an inherited CQ is not caught (docs/architecture.md). */
int mx5_refuse_fork_child(struct mx5_device *dev)
{
	if (getpid() == dev->owner_pid)
		return 0;
	return mx5_fail(dev, -EPERM, "this device was opened by process %d: a child of fork() must open "
			"its own (ibv_fork_init(3))", (int)dev->owner_pid);
}

int mx5_exec(struct mx5_device *dev, const void *in, size_t inlen, void *out, size_t outlen)
{
	dev->cmd_status = 0;
	dev->cmd_syndrome = 0;
	if (mx5_refuse_fork_child(dev))
		return -EPERM;
	if (dev->remote)
		return mx5_exec_remote(dev, in, inlen, out, outlen);
	if (!dev->cmdq)
		return mx5_fail(dev, -ENODEV, "no command queue");
	if (dev->health != MX5_HEALTH_OK)
		return mx5_fail(dev, -ENODEV, "device is %s: command refused",
				dev->health == MX5_HEALTH_REMOVED ? "removed" : "in fatal error");
	memset(out, 0, outlen);
	/* The PRM's shortest outputs (e.g. enable_hca_out, 12 bytes) are shorter than the
	 * 16 inline output bytes the queue entry always carries: ask for those. */
	uint8_t small_in[CMDQ_INLINE_BYTES] = { 0 }, small_out[CMDQ_INLINE_BYTES] = { 0 };
	void *o = out;
	size_t olen = outlen;
	if (inlen < CMDQ_INLINE_BYTES) {
		memcpy(small_in, in, inlen);
		in = small_in;
		inlen = CMDQ_INLINE_BYTES;
	}
	if (outlen < CMDQ_INLINE_BYTES) {
		o = small_out;
		olen = CMDQ_INLINE_BYTES;
	}
	/* From inside a command's wait (page requests served there, eq.c) the engine's
	 * second slot carries the command: the first is the one being waited for. */
	int rc = dev->cmd_nested ? cmdq_exec_nested(dev->cmdq, in, inlen, o, olen)
				 : cmdq_exec(dev->cmdq, in, inlen, o, olen);
	if (o != out)
		memcpy(out, small_out, outlen);
	/* Kept here, not read back from the engine: page requests served below run
	 * commands of their own, which would replace the engine's status and message. */
	uint8_t st = cmdq_last_status(dev->cmdq);
	uint32_t synd = cmdq_last_syndrome(dev->cmdq);
	char err[MX5_ERR_LEN] = "";
	if (rc) {
		snprintf(err, sizeof(err), "%s", cmdq_error(dev->cmdq));
		/* A command that times out, or whose device vanished, may mean the device
		 * died under us: look (marks it fatal or removed, flushes every queue). */
		if ((rc == -ETIMEDOUT || rc == -ENODEV) && !dev->cmd_nested)
			mx5_device_check_health(dev, NULL);
	}
	if (!dev->cmd_nested)
		mx5_after_cmd(dev);
	if (rc)
		snprintf(dev->err, sizeof(dev->err), "%s", err);
	dev->cmd_status = st;
	dev->cmd_syndrome = synd;
	return rc;
}

/* A command whose input is its opcode and zeroes (ENABLE_HCA, DISABLE_HCA, QUERY_ISSI,
 * ALLOC_UAR, QUERY_VPORT_STATE of the own vport; TEARDOWN_HCA, whose profile 0 is the
 * graceful close): inlen bytes, at most the 16 each of those is (PRM cmd_in header),
 * the reply into out.  step names the phase in the device's message. */
int mx5_exec_bare(struct mx5_device *dev, uint16_t opcode, size_t inlen, void *out, size_t outlen,
		  const char *step)
{
	uint8_t in[16] = { 0 };

	if (inlen < PRM_SIZE(cmd_in) || inlen > sizeof(in))
		return -EINVAL;
	PRM_SET(cmd_in, in, opcode, opcode);
	int rc = mx5_exec(dev, in, inlen, out, outlen);
	return rc ? mx5_cmd_fail(dev, rc, step) : 0;
}

int mx5_cmd(struct mx5_device *dev, const void *in, size_t inlen, void *out, size_t outlen)
{
	if (!dev || !in || !out || inlen < 8 || outlen < 8)
		return -EINVAL;
	return mx5_exec(dev, in, inlen, out, outlen);
}

uint8_t mx5_cmd_status(const struct mx5_device *dev)
{
	return dev->cmd_status;
}

uint32_t mx5_cmd_syndrome(const struct mx5_device *dev)
{
	return dev->cmd_syndrome;
}

const char *mx5_device_error(const struct mx5_device *dev)
{
	return dev ? dev->err : mx5_open_err;
}

struct shim_dev *mx5_device_shim(struct mx5_device *dev)
{
	return dev->shim;
}

struct cmdq *mx5_device_cmdq(struct mx5_device *dev)
{
	return dev->cmdq;
}

int mx5_device_open(const char *uri, struct mx5_device **out)
{
	return mx5_device_open_attr(uri, NULL, out);
}

int mx5_device_open_attr(const char *uri, const struct mx5_open_attr *attr,
			 struct mx5_device **out)
{
	mx5_open_err[0] = '\0';
	mx5_open_st = 0;
	mx5_open_synd = 0;
	if (!uri || !out) {
		snprintf(mx5_open_err, sizeof(mx5_open_err), "open: no device URI");
		return -EINVAL;
	}
	*out = NULL;
	struct mx5_device *dev = calloc(1, sizeof(*dev));
	if (!dev) {
		snprintf(mx5_open_err, sizeof(mx5_open_err), "open: out of memory");
		return -ENOMEM;
	}
	if (attr)
		dev->attr = *attr;
	dev->owner_pid = getpid();
	if (!dev->attr.init_timeout_ms)
		dev->attr.init_timeout_ms = MX5_INIT_TIMEOUT_MS;
	if (!dev->attr.cache_line)
		dev->attr.cache_line = (unsigned)plat_host_cache_line();
	/* Linux health.c: poll every MLX5_HEALTH_POLL_INTERVAL (2 s), MAX_MISSES 3. */
	dev->health_poll_ms = 2000;
	dev->health_max_misses = 3;
	plat_list_init(&dev->pds);
	plat_list_init(&dev->mrs);
	plat_list_init(&dev->cqs);
	plat_list_init(&dev->qps);
	plat_list_init(&dev->srqs);
	plat_list_init(&dev->xrcds);

	char serr[SHIM_ERR_LEN] = "";
	int rc = shim_open(uri, &dev->shim, serr, sizeof(serr));
	if (rc) {
		snprintf(mx5_open_err, sizeof(mx5_open_err), "open %s: %s", uri,
			 serr[0] ? serr : strerror(-rc));
		free(dev);
		return rc < 0 ? rc : -ENODEV;
	}
	dev->host_page = dev->shim->page_size ? dev->shim->page_size : MX5_FW_PAGE_SIZE;
	dev->log_host_page = plat_ilog2_ceil(dev->host_page);
	if ((1ull << dev->log_host_page) != dev->host_page || dev->host_page < MX5_FW_PAGE_SIZE) {
		snprintf(mx5_open_err, sizeof(mx5_open_err),
			 "open %s: host page size %zu is not a power of two >= 4096", uri,
			 dev->host_page);
		shim_close(dev->shim);
		free(dev);
		return -EINVAL;
	}
	rc = shim_bar(dev->shim, 0, &dev->bar0);
	if (rc || !dev->bar0.base || dev->bar0.len < 0x1000) {
		snprintf(mx5_open_err, sizeof(mx5_open_err), "open %s: BAR0 not mapped (%s)", uri,
			 dev->shim->err[0] ? dev->shim->err : "no BAR");
		shim_close(dev->shim);
		free(dev);
		return rc ? rc : -ENODEV;
	}

	dev->remote = dev->shim->ops->cmd && dev->shim->ops->next_event && dev->shim->ops->comp_eqn;
	rc = dev->remote ? mx5_attach(dev) : mx5_bringup(dev);
	if (rc) {
		snprintf(mx5_open_err, sizeof(mx5_open_err), "%s", dev->err);
		/* Before teardown, whose own commands would overwrite it.  The engine clears
		 * the status on every command, so a step that failed without a firmware
		 * answer (timeout, unsupported ISSI, allocation) leaves it zero. */
		mx5_open_st = mx5_cmd_status(dev);
		mx5_open_synd = mx5_cmd_syndrome(dev);
		mx5_teardown(dev);
		shim_close(dev->shim);
		free(dev);
		return rc;
	}
	*out = dev;
	return 0;
}

int mx5_device_shutdown(struct mx5_device *dev)
{
	if (!dev)
		return -EINVAL;
	if (dev->shut_down)
		return 0;
	dev->err[0] = '\0';
	mx5_teardown(dev);
	dev->shut_down = true;
	return dev->err[0] ? -EIO : 0;
}

void mx5_device_close(struct mx5_device *dev)
{
	if (!dev)
		return;
	mx5_device_shutdown(dev);
	shim_close(dev->shim);
	mx5_cq_index_free(dev);
	free(dev);
}

const void *mx5_device_caps(const struct mx5_device *dev, enum mx5_cap_type type, int cur)
{
	if (!dev || (unsigned)type >= MX5_CAP_TYPES || !dev->have_caps[type])
		return NULL;
	return dev->caps[type][cur ? 1 : 0];
}

int mx5_query_caps(struct mx5_device *dev, unsigned type, int cur, void *buf, size_t len)
{
	uint8_t in[PRM_SIZE(query_hca_cap_in)] = { 0 };
	/* the output carries the whole 0x1000-byte capability union: keep it off the stack */
	uint8_t *o = malloc(PRM_SIZE(query_hca_cap_out));
	if (!o)
		return -ENOMEM;
	PRM_SET(query_hca_cap_in, in, opcode, PRM_CMD_OP_QUERY_HCA_CAP);
	/* op_mod: capability type in bits 15:1, max(0)/current(1) in bit 0 */
	PRM_SET(query_hca_cap_in, in, op_mod, (type << 1) | (cur ? 1u : 0u));
	int rc = mx5_exec(dev, in, sizeof(in), o, PRM_SIZE(query_hca_cap_out));
	if (rc == 0) {
		size_t n = len < PRM_SIZE(query_hca_cap_out) - 0x10 ? len
			   : PRM_SIZE(query_hca_cap_out) - 0x10;
		memcpy(buf, PRM_ADDR(query_hca_cap_out, o, capability), n);
	}
	free(o);
	return rc;
}

/* 8-byte compare-swap and fetch-add on RC, answered in host order: what verbs'
 * IBV_ATOMIC_HCA means (the rule of Linux mlx5_ib get_atomic_caps). */
static int mx5_atomic_usable(const struct mx5_device *dev)
{
	const unsigned ops = MX5_ATOMIC_OPS_CMP_SWAP | MX5_ATOMIC_OPS_FETCH_ADD;
	if (!MX5_CAP_GEN(dev, atomic) || !dev->have_caps[MX5_CAP_ATOMIC])
		return 0;
	return (MX5_CAP_ATOMIC(dev, atomic_operations) & ops) == ops &&
	       (MX5_CAP_ATOMIC(dev, atomic_size_qp) & MX5_ATOMIC_SIZE_QP_8BYTES) &&
	       MX5_CAP_ATOMIC(dev, atomic_req_8B_endianness_mode) == MX5_ATOMIC_REQ_HOST_ENDIANNESS;
}

/* QUERY_ADAPTER once: the IEEE vendor id and the PSID (board id), as Linux's
 * mlx5_core_query_vendor_id and mlx5_query_board_id read them
 * (drivers/net/ethernet/mellanox/mlx5/core/vport.c).  A device that refuses the command
 * keeps 0 and "": neither is needed to drive it. */
static void mx5_query_adapter(struct mx5_device *dev)
{
	uint8_t in[PRM_SIZE(query_adapter_in)] = { 0 };
	uint8_t *out;

	if (dev->adapter_queried || !dev->cmdq)
		return;
	out = calloc(1, PRM_SIZE(query_adapter_out));
	if (!out)
		return;
	dev->adapter_queried = true;
	PRM_SET(query_adapter_in, in, opcode, PRM_CMD_OP_QUERY_ADAPTER);
	if (mx5_exec(dev, in, sizeof(in), out, PRM_SIZE(query_adapter_out)) == 0) {
		const uint8_t *b = PRM_ADDR(query_adapter_out, out, query_adapter_struct);
		dev->ieee_vendor_id = (uint32_t)PRM_GET(query_adapter_param_block, b, ieee_vendor_id);
		memcpy(dev->psid, PRM_ADDR(query_adapter_param_block, b, vsd_contd_psid), MX5_PSID_LEN);
		dev->psid[MX5_PSID_LEN] = 0;
		/* the PSID is space or NUL padded */
		for (size_t i = strlen(dev->psid); i > 0 && dev->psid[i - 1] == ' '; i--)
			dev->psid[i - 1] = 0;
	} else {
		mx5_log(MX5_LOG_ERROR, "QUERY_ADAPTER: %s", dev->err);
	}
	free(out);
}

int mx5_device_query(struct mx5_device *dev, struct mx5_device_info *in)
{
	if (!dev || !in)
		return -EINVAL;
	memset(in, 0, sizeof(*in));
	mx5_query_adapter(dev);
	in->ieee_vendor_id = dev->ieee_vendor_id;
	memcpy(in->psid, dev->psid, sizeof(in->psid));
	in->fw_major = dev->fw_major;
	in->fw_minor = dev->fw_minor;
	in->fw_subminor = dev->fw_subminor;
	in->cmdif_rev = dev->cmdif_rev;
	in->vendor_id = dev->shim->pci.vendor_id;
	in->device_id = dev->shim->pci.device_id;
	in->host_page_size = dev->host_page;
	in->num_comp_vectors = dev->ncomp_vectors;
	if (!dev->have_caps[MX5_CAP_GENERAL])
		return 0;
	in->num_ports = (uint8_t)MX5_CAP_GEN(dev, num_ports);
	in->max_qp = 1u << MX5_CAP_GEN(dev, log_max_qp);
	in->max_qp_wr = 1u << MX5_CAP_GEN(dev, log_max_qp_sz);
	/* A send WQE is one ctrl segment (16 B), a raddr (16 B) and the data segments
	 * (16 B each) within max_wqe_sz_sq (rdma-core mlx5 does the same arithmetic). */
	uint32_t wqe_sz = (uint32_t)MX5_CAP_GEN(dev, max_wqe_sz_sq);
	in->max_sge = wqe_sz > 32 ? (wqe_sz - 32) / 16 : 1;
	uint32_t rq_sge = (uint32_t)MX5_CAP_GEN(dev, max_wqe_sz_rq) / 16;
	if (rq_sge && rq_sge < in->max_sge)
		in->max_sge = rq_sge;
	in->max_cq = 1u << MX5_CAP_GEN(dev, log_max_cq);
	in->max_cqe = (1u << MX5_CAP_GEN(dev, log_max_cq_sz)) - 1;
	in->max_mr = 1u << MX5_CAP_GEN(dev, log_max_mkey);
	in->max_pd = 1u << MX5_CAP_GEN(dev, log_max_pd);
	in->max_srq = MX5_CAP_GEN(dev, log_max_srq) ? 1u << MX5_CAP_GEN(dev, log_max_srq) : 0;
	in->max_srq_wr = (1u << MX5_CAP_GEN(dev, log_max_srq_sz)) - 1;
	in->max_srq_sge = rq_sge ? rq_sge - 1 : 0;
	/* multicast groups, as Linux mlx5_ib_query_device reports them */
	/* Linux mlx5_ib reports 1 << log_max_mcg whatever max_qp_mcg says; a function that
	 * attaches no QP to a group (max_qp_mcg 0: uvd told its clients so until
	 * 2026-12-06) offers no multicast, and says so with 0 groups. */
	in->max_mcast_grp = !MX5_CAP_GEN(dev, max_qp_mcg) ? 0
			    : MX5_CAP_GEN(dev, log_max_mcg) < 31 ? 1u << MX5_CAP_GEN(dev, log_max_mcg) : 1u << 31;
	in->max_mcast_qp_attach = MX5_CAP_GEN(dev, max_qp_mcg);
	in->max_qp_rd_atom = 1u << MX5_CAP_GEN(dev, log_max_ra_res_qp);
	in->max_qp_init_rd_atom = 1u << MX5_CAP_GEN(dev, log_max_ra_req_qp);
	in->gid_table_len = mx5_gid_table_len(dev);
	/* RoCE has the one default P_Key */
	in->pkey_table_len = 1;
	/* inline data: the WQE less ctrl and raddr segments and the 4-byte inline header (an
	 * upper bound: each QP type's own WQE layout decides, qp_ctrl.c mx5_qp_size, which
	 * falls back from libmlx5's memory-window room when a large inline asks for it;
	 * libfabric's verbs provider probes QP creation up to this bound and then asks for
	 * what it found plus its own header) */
	in->max_inline_data = wqe_sz > 36 ? wqe_sz - 36 : 0;
	in->max_mr_size = MX5_CAP_GEN(dev, log_max_mrw_sz) >= 64 ? UINT64_MAX
			  : (1ull << MX5_CAP_GEN(dev, log_max_mrw_sz));
	in->atomic = mx5_atomic_usable(dev);
	/* a device daemon's clients get no XRC (its policy refuses ALLOC_XRCD) */
	in->xrc = MX5_CAP_GEN(dev, xrc) && !dev->remote;
	in->local_ca_ack_delay = (uint16_t)MX5_CAP_GEN(dev, local_ca_ack_delay);
	in->log_max_msg = (uint8_t)MX5_CAP_GEN(dev, log_max_msg);
	return 0;
}
