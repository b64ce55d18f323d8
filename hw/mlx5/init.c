/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Bring-up and teardown of one function, in the order real drivers use (Linux mlx5_core's mlx5_function_setup/mlx5_load and rdma-core's
 * mlx5_vfio.c agree, and so does the ConnectX-4 trace in shared/fixtures):
 *
 *   wait initializing -> cmdif_rev 5 -> cmdq -> wait initializing -> ENABLE_HCA ->
 *   QUERY_ISSI/SET_ISSI 1 -> boot pages -> (HOST_ENDIANNESS) -> QUERY_HCA_CAP/SET_HCA_CAP
 *   (general; atomic: host-order 8-byte atomics) ->
 *   init pages -> INIT_HCA -> RoCE on the NIC vport -> ALLOC_UAR -> async EQ -> event mode
 *
 * Each step records progress in the device, so a failure part-way (or a device that
 * dies) is undone by the same teardown, which runs the steps in reverse and skips the
 * commands when the device can no longer answer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/mlx5/mx5_internal.h"

#define MX5_CMDIF_REV 5  /* initial_seg.cmd_interface_rev the PRM's command layout needs */

void mx5_iseg_load(struct mx5_device *dev, unsigned bit_off, unsigned width)
{
	unsigned first = bit_off / 32, last = (bit_off + (width ? width : 1) - 1) / 32;
	for (unsigned dw = first; dw <= last; dw++) {
		uint32_t v = shim_mmio_read32(&dev->bar0, (uint64_t)dw * 4);
		uint32_t be = htobe32(v);
		memcpy(dev->iseg + dw * 4, &be, 4);
	}
}

/* Raw first dword: fw_rev_major/minor.  All-ones means the function does not answer:
 * gone (surprise removal), or still coming back from the reset vfio-pci does at open. */
static bool mx5_device_all_ones(struct mx5_device *dev)
{
	mx5_iseg_load(dev, 0, 32);
	uint32_t raw;
	memcpy(&raw, dev->iseg, 4);
	return raw == 0xffffffffu;
}

/* initial_seg.initializing is set while the firmware boots.  Wait up to
 * attr.init_timeout_ms (default 120 s, Linux main.c FW_PRE_INIT_TIMEOUT_MILI and
 * wait_fw_init; rdma-core mlx5_vfio.c setup_function), reading the bit again and again
 * as Linux does.  All-ones reads are tolerated for as long: right after the function
 * level reset at open a function answers all-ones until it is back.  A device that
 * stays all-ones to the deadline is reported removed, one that stays initializing
 * timed out; either way the wait ends. */
static int mx5_wait_initializing(struct mx5_device *dev, const char *when)
{
	uint64_t t0 = mx5_now_ns();
	uint64_t deadline = t0 + (uint64_t)dev->attr.init_timeout_ms * 1000000ull;
	unsigned delay = 10;
	for (;;) {
		bool gone = mx5_device_all_ones(dev);
		if (!gone && !MX5_ISEG_GET(dev, initializing)) {
			dev->init_wait_ns += mx5_now_ns() - t0;
			return 0;
		}
		if (mx5_now_ns() > deadline) {
			dev->init_wait_ns += mx5_now_ns() - t0;
			if (gone) {
				dev->health = MX5_HEALTH_REMOVED;
				return mx5_fail(dev, -ENODEV,
						"bring-up: %s: device not responding (BAR reads all-ones "
						"for %u ms)", when, dev->attr.init_timeout_ms);
			}
			return mx5_fail(dev, -ETIMEDOUT,
					"bring-up: %s: firmware still initializing after %u ms", when,
					dev->attr.init_timeout_ms);
		}
		mx5_sleep_us(delay);
		if (delay < 10000)
			delay *= 2;
	}
}

static int mx5_enable_hca(struct mx5_device *dev)
{
	uint8_t out[PRM_SIZE(enable_hca_out)];
	int rc = mx5_exec_bare(dev, PRM_CMD_OP_ENABLE_HCA, PRM_SIZE(enable_hca_in), out, sizeof(out), "bring-up");
	if (rc)
		return rc;
	dev->hca_enabled = true;
	return 0;
}

static int mx5_set_issi(struct mx5_device *dev)
{
	uint8_t out[PRM_SIZE(query_issi_out)];
	int rc = mx5_exec_bare(dev, PRM_CMD_OP_QUERY_ISSI, PRM_SIZE(query_issi_in), out, sizeof(out), "bring-up");
	if (rc)
		return rc;
	/* supported_issi_dw0: bit n set = ISSI n supported.  We speak ISSI 1 only (the
	 * layouts with uid fields and pas lists after the context, PRM "ISSI"). */
	uint32_t sup = (uint32_t)PRM_GET(query_issi_out, out, supported_issi_dw0);
	if (!(sup & (1u << 1)))
		return mx5_fail(dev, -EOPNOTSUPP,
				"bring-up: QUERY_ISSI: device does not support ISSI 1 (supported 0x%x)",
				sup);
	if (PRM_GET(query_issi_out, out, current_issi) == 1)
		return 0;
	uint8_t sin[PRM_SIZE(set_issi_in)] = { 0 }, sout[PRM_SIZE(set_issi_out)];
	PRM_SET(set_issi_in, sin, opcode, PRM_CMD_OP_SET_ISSI);
	PRM_SET(set_issi_in, sin, current_issi, 1);
	rc = mx5_exec(dev, sin, sizeof(sin), sout, sizeof(sout));
	if (rc)
		return mx5_cmd_fail(dev, rc, "bring-up");
	return 0;
}

/* QUERY_PAGES op_mod (1 boot, 2 init) then MANAGE_PAGES give. */
static int mx5_startup_pages(struct mx5_device *dev, unsigned op_mod)
{
	int32_t n = 0;
	int rc = mx5_pages_query(dev, op_mod, &n);
	if (rc)
		return rc;
	if (n <= 0)
		return 0;
	return mx5_pages_give(dev, (uint32_t)n, op_mod);
}

static int mx5_caps_read(struct mx5_device *dev, unsigned type, bool optional)
{
	for (int cur = 0; cur <= 1; cur++) {
		int rc = mx5_query_caps(dev, type, cur, dev->caps[type][cur], MX5_CAP_BYTES);
		if (rc) {
			if (optional) {
				dev->have_caps[type] = false;
				return 0;
			}
			return mx5_cmd_fail(dev, rc, "bring-up");
		}
	}
	dev->have_caps[type] = true;
	return 0;
}

/* SET_HCA_CAP (0x109) of one capability type: op_mod = type << 1, the whole block. */
static int mx5_set_caps(struct mx5_device *dev, unsigned type, const uint8_t *cap)
{
	uint8_t *in = calloc(1, PRM_SIZE(set_hca_cap_in));
	uint8_t out[PRM_SIZE(set_hca_cap_out)];
	if (!in)
		return mx5_fail(dev, -ENOMEM, "bring-up: SET_HCA_CAP: out of memory");
	memcpy(PRM_ADDR(set_hca_cap_in, in, capability), cap, MX5_CAP_BYTES);
	PRM_SET(set_hca_cap_in, in, opcode, PRM_CMD_OP_SET_HCA_CAP);
	PRM_SET(set_hca_cap_in, in, op_mod, type << 1);
	int rc = mx5_exec(dev, in, PRM_SIZE(set_hca_cap_in), out, sizeof(out));
	free(in);
	if (rc)
		return mx5_cmd_fail(dev, rc, "bring-up");
	return 0;
}

/* log_max_qp asked for: Linux mlx5_core's profile (main.c profile[], the default
 * prof_sel 2).  The ConnectX-4 trace in shared/fixtures shows that driver's
 * SET_HCA_CAP raising log_max_qp from the firmware default 14 to 17 (maximum 23), and
 * the firmware then asking 12,868 init pages (about 50 MB).  Newer kernels use 18.
 * The device maximum would size firmware memory (ICM) for 2^23 QPs: init pages grow
 * with it, all pinned, and VFIO MAP_DMA can hit the memlock limit. */
#define MX5_PROFILE_LOG_MAX_QP 17u

/* SET_HCA_CAP general: what this driver needs from the function (Linux handle_hca_cap
 * makes the same choices). */
static int mx5_set_general_caps(struct mx5_device *dev)
{
	uint8_t cap[MX5_CAP_BYTES];
	memcpy(cap, dev->caps[MX5_CAP_GENERAL][1], MX5_CAP_BYTES);
	const uint8_t *max = dev->caps[MX5_CAP_GENERAL][0];

	/* UAR pages as large as the host page, so one UAR maps into the process with one
	 * host page (log_uar_page_sz counts 4 KiB units). */
	PRM_SET(cmd_hca_cap, cap, log_uar_page_sz, dev->log_host_page - MX5_FW_PAGE_SHIFT);
	/* No command interface checksums: the engine does not compute them by default. */
	PRM_SET(cmd_hca_cap, cap, cmdif_checksum, 0);
	/* uar_4k stays off: a UAR index then counts whole UAR pages of the size above. */
	PRM_SET(cmd_hca_cap, cap, uar_4k, 0);
	/* Tear down may hand back every page at once (release_all_pages). */
	if (PRM_GET(cmd_hca_cap, max, release_all_pages))
		PRM_SET(cmd_hca_cap, cap, release_all_pages, 1);
	/* The profile's QP count, never above what the device offers (Linux handle_hca_cap
	 * clamps its profile to MLX5_CAP_GEN_MAX(dev, log_max_qp) the same way). */
	unsigned qmax = (unsigned)PRM_GET(cmd_hca_cap, max, log_max_qp);
	dev->bi.log_max_qp_max = (uint8_t)qmax;
	dev->bi.log_max_qp_default = (uint8_t)PRM_GET(cmd_hca_cap, cap, log_max_qp);
	dev->bi.log_max_qp = (uint8_t)(qmax < MX5_PROFILE_LOG_MAX_QP ? qmax : MX5_PROFILE_LOG_MAX_QP);
	PRM_SET(cmd_hca_cap, cap, log_max_qp, dev->bi.log_max_qp);
	/* 128-byte CQE/padding alignment on hosts whose cache line is 128 bytes (Apple
	 * M-series): Linux handle_hca_cap sets cache_line_128byte = cache_line_size() >= 128
	 * whenever the maximum block allows the bit. */
	dev->bi.host_cache_line = dev->attr.cache_line;
	if (PRM_GET(cmd_hca_cap, max, cache_line_128byte))
		PRM_SET(cmd_hca_cap, cap, cache_line_128byte, dev->attr.cache_line >= 128 ? 1 : 0);
	return mx5_set_caps(dev, MX5_CAP_GENERAL, cap);
}

/* SET_HCA_CAP RoCE: let the driver choose each QP's UDP source port (the ads.udp_sport
 * mx5_set_av writes); otherwise firmware ignores it and picks its own.  Linux main.c
 * handle_hca_cap_roce and rdma-core mlx5_vfio.c set_hca_cap_roce: only when the current
 * block has it off and the maximum block allows it. */
static int mx5_set_roce_caps(struct mx5_device *dev)
{
	const uint8_t *cur = dev->caps[MX5_CAP_ROCE][1], *max = dev->caps[MX5_CAP_ROCE][0];
	if (!dev->have_caps[MX5_CAP_ROCE] || PRM_GET(roce_cap, cur, sw_r_roce_src_udp_port) ||
	    !PRM_GET(roce_cap, max, sw_r_roce_src_udp_port))
		return 0;
	uint8_t cap[MX5_CAP_BYTES];
	memcpy(cap, cur, MX5_CAP_BYTES);
	PRM_SET(roce_cap, cap, sw_r_roce_src_udp_port, 1);
	int rc = mx5_set_caps(dev, MX5_CAP_ROCE, cap);
	if (rc)
		return rc;
	return mx5_caps_read(dev, MX5_CAP_ROCE, false);
}

/* SET_HCA_CAP atomic: 8-byte atomics answered in host byte order (PRM atomic_caps
 * atomic_req_8B_endianness_mode 1), as Linux handle_hca_cap_atomic selects whenever
 * supported_atomic_req_8B_endianness_mode_1 says the device can.  In the default mode
 * (0) the requester writes the returned original value big-endian into local memory,
 * and verbs applications, which read it as a host integer, would see it byte-swapped;
 * so without mode 1 the device reports no atomics at all (mx5_device_query). */
static int mx5_set_atomic_caps(struct mx5_device *dev)
{
	const uint8_t *cur = dev->caps[MX5_CAP_ATOMIC][1];
	if (!dev->have_caps[MX5_CAP_ATOMIC] ||
	    !PRM_GET(atomic_caps, cur, supported_atomic_req_8B_endianness_mode_1) ||
	    PRM_GET(atomic_caps, cur, atomic_req_8B_endianness_mode) == MX5_ATOMIC_REQ_HOST_ENDIANNESS)
		return 0;
	uint8_t cap[MX5_CAP_BYTES];
	memcpy(cap, cur, MX5_CAP_BYTES);
	PRM_SET(atomic_caps, cap, atomic_req_8B_endianness_mode, MX5_ATOMIC_REQ_HOST_ENDIANNESS);
	int rc = mx5_set_caps(dev, MX5_CAP_ATOMIC, cap);
	if (rc)
		return rc;
	return mx5_caps_read(dev, MX5_CAP_ATOMIC, false);
}

static int mx5_init_hca(struct mx5_device *dev)
{
	uint8_t in[PRM_SIZE(init_hca_in)] = { 0 }, out[PRM_SIZE(init_hca_out)];
	PRM_SET(init_hca_in, in, opcode, PRM_CMD_OP_INIT_HCA);
	int rc = mx5_exec(dev, in, sizeof(in), out, sizeof(out));
	if (rc)
		return mx5_cmd_fail(dev, rc, "bring-up");
	dev->hca_inited = true;
	return 0;
}

/* SET_DRIVER_VERSION (0x10d) when the function wants it (general cap driver_version):
 * a string firmware keeps for diagnostics.  Linux main.c mlx5_set_driver_version sends
 * "Linux,mlx5_core,<version>" right after INIT_HCA; ours names this driver.  A refusal
 * costs nothing but the diagnostic, so it does not stop bring-up (Linux ignores it too). */
#define MX5_DRIVER_VERSION_STRING "uverbs,mx5,0.1.0"

static void mx5_set_driver_version(struct mx5_device *dev)
{
	if (!MX5_CAP_GEN(dev, driver_version))
		return;
	uint8_t in[PRM_SIZE(set_driver_version_in)] = { 0 }, out[PRM_SIZE(set_driver_version_out)];
	PRM_SET(set_driver_version_in, in, opcode, PRM_CMD_OP_SET_DRIVER_VERSION);
	memcpy(PRM_ADDR(set_driver_version_in, in, driver_version), MX5_DRIVER_VERSION_STRING,
	       sizeof(MX5_DRIVER_VERSION_STRING) - 1);
	if (mx5_exec(dev, in, sizeof(in), out, sizeof(out)) == 0)
		dev->bi.driver_version_set = 1;
	else
		dev->err[0] = '\0';
}

/* Read every capability block again after INIT_HCA: some current values are settled
 * only then (Linux mlx5_function_setup/mlx5_load calls mlx5_query_hca_caps after
 * INIT_HCA; the ConnectX-4 trace shows its 10 QUERY_HCA_CAP there). */
static int mx5_caps_requery(struct mx5_device *dev)
{
	static const unsigned types[] = { MX5_CAP_GENERAL, MX5_CAP_ROCE, MX5_CAP_ATOMIC, MX5_CAP_ODP };
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		unsigned t = types[i];
		if (!dev->have_caps[t])
			continue;
		int rc = mx5_caps_read(dev, t, t != MX5_CAP_GENERAL);
		if (rc)
			return rc;
		if (dev->have_caps[t])
			dev->bi.caps_requeried++;
	}
	return 0;
}

static int mx5_teardown_hca(struct mx5_device *dev)
{
	uint8_t out[PRM_SIZE(teardown_hca_out)];
	return mx5_exec_bare(dev, PRM_CMD_OP_TEARDOWN_HCA, PRM_SIZE(teardown_hca_in), out, sizeof(out), "teardown");
}

static int mx5_disable_hca(struct mx5_device *dev)
{
	uint8_t out[PRM_SIZE(disable_hca_out)];
	return mx5_exec_bare(dev, PRM_CMD_OP_DISABLE_HCA, PRM_SIZE(disable_hca_in), out, sizeof(out), "teardown");
}

int mx5_vport_roce(struct mx5_device *dev, bool enable);

/* qpc.ts_format values (PRM "QP Context" ts_format; Linux MLX5_TIMESTAMP_FORMAT_*). */
enum { MX5_TS_FORMAT_FREE_RUNNING = 0, MX5_TS_FORMAT_DEFAULT = 1 };

/* Linux include/linux/mlx5/qp.h mlx5_get_qp_default_ts: DEFAULT whenever the device
 * supports any timestamp format choice (roce_cap.qp_ts_format with RoCE on, else
 * cmd_hca_cap.sq_ts_format), else FREE_RUNNING.  DEFAULT lets the firmware use the
 * clock it runs: ConnectX-6 Dx/ConnectX-7 with the real-time clock enabled refuse a
 * free-running QP. */
uint8_t mx5_qp_default_ts(const struct mx5_device *dev)
{
	unsigned cap = dev->have_caps[MX5_CAP_ROCE] ? (unsigned)MX5_CAP_ROCE(dev, qp_ts_format)
						      : (unsigned)MX5_CAP_GEN(dev, sq_ts_format);
	return cap ? MX5_TS_FORMAT_DEFAULT : MX5_TS_FORMAT_FREE_RUNNING;
}

void mx5_bringup_summary(struct mx5_device *dev)
{
	struct mx5_bringup_info *bi = &dev->bi;
	bi->boot_pages = dev->pages.st.boot;
	bi->init_pages = dev->pages.st.init;
	bi->init_wait_ms = (unsigned)(dev->init_wait_ns / 1000000ull);
	bi->cache_line_128byte = (int)MX5_CAP_GEN(dev, cache_line_128byte);
	bi->roce_udp_sport = dev->have_caps[MX5_CAP_ROCE] &&
			     MX5_CAP_ROCE(dev, sw_r_roce_src_udp_port);
	bi->qp_ts_format = mx5_qp_default_ts(dev);
	mx5_log(MX5_LOG_INFO,
		"bring-up: log_max_qp %u (device max %u, firmware default %u): %llu init pages "
		"(%.1f MiB) + %llu boot pages; cache line %u B (cache_line_128byte %d); "
		"driver version %s; RoCE UDP source port %s; QP ts_format %u",
		bi->log_max_qp, bi->log_max_qp_max, bi->log_max_qp_default,
		(unsigned long long)bi->init_pages, (double)bi->init_pages * MX5_FW_PAGE_SIZE / 1048576.0,
		(unsigned long long)bi->boot_pages, bi->host_cache_line, bi->cache_line_128byte,
		bi->driver_version_set ? "sent" : "not asked for",
		bi->roce_udp_sport ? "driver's" : "firmware's", bi->qp_ts_format);
}

/* HOST_ENDIANNESS (ACCESS_REG 0x7004, write): tell the device the host's byte order,
 * after the boot pages and before SET_HCA_CAP, where Linux main.c mlx5_function_open
 * (set_hca_ctrl) and rdma-core mlx5_vfio.c mlx5_vfio_setup_function
 * (mlx5_vfio_set_hca_ctrl) write it on every bring-up: he 0 on a little-endian host
 * (Linux include/linux/mlx5/device.h MLX5_SET_HOST_ENDIANNESS). */
static int mx5_set_host_endianness(struct mx5_device *dev)
{
	uint8_t he[PRM_SIZE(register_host_endianness)] = { 0 }, out[PRM_SIZE(register_host_endianness)];
	PRM_SET(register_host_endianness, he, he, htobe32(1) == 1 ? 1 : 0);
	int rc = mx5_access_reg(dev, MX5_REG_HOST_ENDIANNESS, 1, 0, he, out, sizeof(he));
	return rc ? mx5_cmd_fail(dev, rc, "bring-up: HOST_ENDIANNESS") : 0;
}

/* PAOS admin_status up on every port (ase set), as Linux's mlx5e does when its netdev
 * opens (en_main.c mlx5e_open -> core/port.c mlx5_set_port_admin_status(MLX5_PORT_UP)):
 * a port a previous driver left administratively down (ip link set down) comes up. */
static int mx5_ports_admin_up(struct mx5_device *dev)
{
	unsigned nports = (unsigned)PRM_GET(cmd_hca_cap, dev->caps[MX5_CAP_GENERAL][1], num_ports);
	for (unsigned port = 1; port <= (nports ? nports : 1) && port <= MX5_MAX_PORTS; port++) {
		uint8_t paos[PRM_SIZE(paos_reg)] = { 0 }, out[PRM_SIZE(paos_reg)];
		PRM_SET(paos_reg, paos, local_port, port);
		PRM_SET(paos_reg, paos, admin_status, MX5_PAOS_UP);
		PRM_SET(paos_reg, paos, ase, 1);
		int rc = mx5_access_reg(dev, MX5_REG_PAOS, 1, 0, paos, out, sizeof(paos));
		if (rc)
			return mx5_cmd_fail(dev, rc, "bring-up: PAOS admin up");
	}
	return 0;
}

int mx5_bringup(struct mx5_device *dev)
{
	int rc = mx5_wait_initializing(dev, "before command queue");
	if (rc)
		return rc;

	dev->cmdif_rev = (uint16_t)MX5_ISEG_GET(dev, cmd_interface_rev);
	dev->fw_major = (uint16_t)MX5_ISEG_GET(dev, fw_rev_major);
	dev->fw_minor = (uint16_t)MX5_ISEG_GET(dev, fw_rev_minor);
	dev->fw_subminor = (uint16_t)MX5_ISEG_GET(dev, fw_rev_subminor);
	if (dev->attr.flags & MX5_OPEN_REGISTERS_ONLY)
		return 0;
	if (dev->cmdif_rev != MX5_CMDIF_REV)
		return mx5_fail(dev, -EOPNOTSUPP,
				"bring-up: command interface revision %u, this driver speaks %u",
				dev->cmdif_rev, MX5_CMDIF_REV);

	/* Entries and mailboxes go out signed (harmless; Linux cmd.c signs the entry too),
	 * but completions are never verified: SET_HCA_CAP below keeps cmdif_checksum 0, and
	 * firmware with checksums off does not sign what it returns (the ConnectX-4 trace in
	 * ../shared/fixtures; Linux cmd.c checksum_disabled, rdma-core mlx5_vfio.c). */
	struct cmdq_config cfg = { .timeout_ms = dev->attr.cmd_timeout_ms, .use_signatures = 1,
				   .verify_signatures = 0 };
	rc = cmdq_create(dev->shim, &dev->bar0, &cfg, &dev->cmdq);
	if (rc) {
		dev->cmdq = NULL;
		return mx5_fail(dev, rc, "bring-up: command queue: %s",
				dev->shim->err[0] ? dev->shim->err : strerror(-rc));
	}
	rc = mx5_wait_initializing(dev, "after command queue");
	if (rc)
		return rc;
	/* A function already in fatal error answers no command: say so now rather than
	 * after a command timeout.  Only now, with the command interface ours: before it,
	 * nic_interface holds what the previous driver left (rdma-core's fast teardown
	 * leaves DISABLED, mlx5_vfio.c mlx5_vfio_teardown_hca_fast), and writing the queue
	 * address above claimed it.  Linux starts its health poll at the same point
	 * (main.c mlx5_function_enable: mlx5_cmd_enable, wait_fw_init, then
	 * mlx5_start_health_poll). */
	struct mx5_health h;
	if (mx5_device_check_health(dev, &h) != MX5_HEALTH_OK)
		return mx5_fail(dev, -EIO, "bring-up: device in fatal error (health syndrome 0x%x, "
				"health buffer synd 0x%x)", h.health_syndrome, h.synd);
	/* From here a command waiting looks at health too (health.c). */
	mx5_health_watch_commands(dev);
	if ((rc = mx5_enable_hca(dev)) || (rc = mx5_set_issi(dev)))
		return rc;
	if ((rc = mx5_startup_pages(dev, 1)) || (rc = mx5_set_host_endianness(dev)))
		return rc;
	if ((rc = mx5_caps_read(dev, MX5_CAP_GENERAL, false)))
		return rc;
	/* A VPI card whose port runs InfiniBand (port_type 0) has no RoCE: refuse clearly
	 * now.  Linux mlx5_core_roce_gid_set refuses GIDs unless port_type is Ethernet, and
	 * rdma-core's mlx5_vfio_setup_function enables RoCE only for Ethernet. */
	if (PRM_GET(cmd_hca_cap, dev->caps[MX5_CAP_GENERAL][1], port_type) != MX5_CAP_PORT_TYPE_ETH)
		return mx5_fail(dev, -EOPNOTSUPP,
				"bring-up: the port runs InfiniBand (port_type %u), this driver speaks RoCE "
				"over Ethernet: set it to Ethernet with `mlxconfig -d <dev> set LINK_TYPE_P1=2`",
				(unsigned)PRM_GET(cmd_hca_cap, dev->caps[MX5_CAP_GENERAL][1], port_type));
	if ((rc = mx5_set_general_caps(dev)) || (rc = mx5_caps_read(dev, MX5_CAP_GENERAL, false)))
		return rc;
	if (PRM_GET(cmd_hca_cap, dev->caps[MX5_CAP_GENERAL][1], roce))
		if ((rc = mx5_caps_read(dev, MX5_CAP_ROCE, true)) || (rc = mx5_set_roce_caps(dev)))
			return rc;
	if (PRM_GET(cmd_hca_cap, dev->caps[MX5_CAP_GENERAL][1], atomic))
		if ((rc = mx5_caps_read(dev, MX5_CAP_ATOMIC, true)) || (rc = mx5_set_atomic_caps(dev)))
			return rc;
	/* ODP: the pg (page fault) bit says the block exists (Linux MLX5_CAP_GEN(pg)). */
	if (PRM_GET(cmd_hca_cap, dev->caps[MX5_CAP_GENERAL][1], pg))
		if ((rc = mx5_caps_read(dev, MX5_CAP_ODP, true)))
			return rc;
	if ((rc = mx5_startup_pages(dev, 2)) || (rc = mx5_init_hca(dev)))
		return rc;
	mx5_set_driver_version(dev);
	if ((rc = mx5_caps_requery(dev)))
		return rc;
	mx5_bringup_summary(dev);
	if (dev->attr.flags & MX5_OPEN_INSPECT)
		return 0;
	if (dev->have_caps[MX5_CAP_ROCE] && (rc = mx5_vport_roce(dev, true))) {
		/* A function that does not know the command has no vport to gate RoCE
		 * (status bad opcode): carry on; any other answer is an error. */
		if (mx5_cmd_status(dev) != PRM_CMD_STAT_BAD_OP)
			return rc;
		dev->err[0] = '\0';
	}
	if ((rc = mx5_ports_admin_up(dev)))
		return rc;
	if ((rc = mx5_uar_alloc(dev)))
		return rc;
	rc = mx5_eq_create(dev, &dev->async_eq, 0, true, 0);
	if (rc)
		return rc;
	unsigned nvec = shim_irq_count(dev->shim);
	dev->ncomp_vectors = nvec > 1 ? nvec - 1 : 1;
	if (dev->ncomp_vectors > MX5_MAX_COMP_EQS)
		dev->ncomp_vectors = MX5_MAX_COMP_EQS;
	if (!(dev->attr.flags & MX5_OPEN_CMD_POLLING))
		mx5_eq_enable_cmd_events(dev);
	if ((rc = mx5_counters_alloc(dev)))
		return rc;
	/* Page requests raised while the EQ was being set up. */
	rc = mx5_device_poll_events(dev);
	return rc < 0 ? rc : 0;
}

int mx5_attach(struct mx5_device *dev)
{
	dev->cmdif_rev = (uint16_t)MX5_ISEG_GET(dev, cmd_interface_rev);
	dev->fw_major = (uint16_t)MX5_ISEG_GET(dev, fw_rev_major);
	dev->fw_minor = (uint16_t)MX5_ISEG_GET(dev, fw_rev_minor);
	dev->fw_subminor = (uint16_t)MX5_ISEG_GET(dev, fw_rev_subminor);
	int rc;
	if ((rc = mx5_caps_read(dev, MX5_CAP_GENERAL, false)))
		return rc;
	if (PRM_GET(cmd_hca_cap, dev->caps[MX5_CAP_GENERAL][1], roce) &&
	    (rc = mx5_caps_read(dev, MX5_CAP_ROCE, true)))
		return rc;
	if (PRM_GET(cmd_hca_cap, dev->caps[MX5_CAP_GENERAL][1], atomic) &&
	    (rc = mx5_caps_read(dev, MX5_CAP_ATOMIC, true)))
		return rc;
	if (PRM_GET(cmd_hca_cap, dev->caps[MX5_CAP_GENERAL][1], pg) &&
	    (rc = mx5_caps_read(dev, MX5_CAP_ODP, true)))
		return rc;
	mx5_bringup_summary(dev);
	if ((rc = mx5_uar_alloc(dev)))
		return rc;
	/* The daemon's EQs carry our events; one completion vector, routed here. */
	dev->async_eq.vector = 0;
	dev->ncomp_vectors = 1;
	return mx5_counters_alloc(dev);
}

void mx5_teardown(struct mx5_device *dev)
{
	char first_err[MX5_ERR_LEN] = "";
	mx5_objects_destroy_all(dev);
	mx5_counters_free(dev);
	mx5_eq_destroy_all_comp(dev);
	if (dev->cmdq && dev->cmd_event_mode) {
		cmdq_set_polling_mode(dev->cmdq);
		dev->cmd_event_mode = false;
	}
	if (dev->async_eq.created)
		mx5_eq_destroy(dev, &dev->async_eq);
	mx5_uar_free(dev);
	if (dev->roce_enabled)
		mx5_vport_roce(dev, false);
	if (dev->hca_inited) {
		if (mx5_teardown_hca(dev) && !first_err[0])
			snprintf(first_err, sizeof(first_err), "%s", dev->err);
		dev->hca_inited = false;
	}
	/* Every page back: the device returns them on MANAGE_PAGES take; a device that
	 * cannot answer any more simply loses them, and we free the host memory. */
	if (dev->pages.st.given && dev->health == MX5_HEALTH_OK && dev->cmdq)
		if (mx5_pages_reclaim_all(dev) && !first_err[0])
			snprintf(first_err, sizeof(first_err), "%s", dev->err);
	if (dev->hca_enabled) {
		if (mx5_disable_hca(dev) && !first_err[0])
			snprintf(first_err, sizeof(first_err), "%s", dev->err);
		dev->hca_enabled = false;
	}
	if (dev->cmdq) {
		cmdq_destroy(dev->cmdq);
		dev->cmdq = NULL;
	}
	mx5_pages_free_all(dev);
	if (first_err[0])
		snprintf(dev->err, sizeof(dev->err), "%s", first_err);
}
