/* Bring-up and teardown of one function, in the order real drivers use (design
 * section 5; Linux mlx5_core's mlx5_function_setup/mlx5_load and rdma-core's
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

/* Raw first dword: fw_rev_major/minor.  All-ones means the function is gone (a
 * surprise removal answers every read with all-ones). */
static bool mx5_device_gone(struct mx5_device *dev)
{
	mx5_iseg_load(dev, 0, 32);
	uint32_t raw;
	memcpy(&raw, dev->iseg, 4);
	return raw == 0xffffffffu;
}

/* initial_seg.initializing is set while the firmware boots; bounded wait, and an
 * all-ones read ends it at once (a removed device never clears the bit). */
static int mx5_wait_initializing(struct mx5_device *dev, const char *when)
{
	uint64_t deadline = mx5_now_ns() + (uint64_t)dev->attr.init_timeout_ms * 1000000ull;
	unsigned delay = 10;
	for (;;) {
		if (mx5_device_gone(dev)) {
			dev->health = MX5_HEALTH_REMOVED;
			return mx5_fail(dev, -ENODEV,
					"bring-up: %s: device not responding (BAR reads all-ones)", when);
		}
		if (!MX5_ISEG_GET(dev, initializing))
			return 0;
		if (mx5_now_ns() > deadline)
			return mx5_fail(dev, -ETIMEDOUT,
					"bring-up: %s: firmware still initializing after %u ms", when,
					dev->attr.init_timeout_ms);
		mx5_sleep_us(delay);
		if (delay < 10000)
			delay *= 2;
	}
}

static int mx5_enable_hca(struct mx5_device *dev)
{
	uint8_t in[PRM_SIZE(enable_hca_in)] = { 0 }, out[PRM_SIZE(enable_hca_out)];
	PRM_SET(enable_hca_in, in, opcode, PRM_CMD_OP_ENABLE_HCA);
	int rc = mx5_exec(dev, in, sizeof(in), out, sizeof(out));
	if (rc)
		return mx5_cmd_fail(dev, rc, "bring-up");
	dev->hca_enabled = true;
	return 0;
}

static int mx5_set_issi(struct mx5_device *dev)
{
	uint8_t in[PRM_SIZE(query_issi_in)] = { 0 }, out[PRM_SIZE(query_issi_out)];
	PRM_SET(query_issi_in, in, opcode, PRM_CMD_OP_QUERY_ISSI);
	int rc = mx5_exec(dev, in, sizeof(in), out, sizeof(out));
	if (rc)
		return mx5_cmd_fail(dev, rc, "bring-up");
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
	/* Largest QP count the device offers. */
	PRM_SET(cmd_hca_cap, cap, log_max_qp, PRM_GET(cmd_hca_cap, max, log_max_qp));
	return mx5_set_caps(dev, MX5_CAP_GENERAL, cap);
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

static int mx5_teardown_hca(struct mx5_device *dev)
{
	uint8_t in[PRM_SIZE(teardown_hca_in)] = { 0 }, out[PRM_SIZE(teardown_hca_out)];
	PRM_SET(teardown_hca_in, in, opcode, PRM_CMD_OP_TEARDOWN_HCA);
	PRM_SET(teardown_hca_in, in, profile, 0);  /* graceful close */
	int rc = mx5_exec(dev, in, sizeof(in), out, sizeof(out));
	if (rc)
		return mx5_cmd_fail(dev, rc, "teardown");
	return 0;
}

static int mx5_disable_hca(struct mx5_device *dev)
{
	uint8_t in[PRM_SIZE(disable_hca_in)] = { 0 }, out[PRM_SIZE(disable_hca_out)];
	PRM_SET(disable_hca_in, in, opcode, PRM_CMD_OP_DISABLE_HCA);
	int rc = mx5_exec(dev, in, sizeof(in), out, sizeof(out));
	if (rc)
		return mx5_cmd_fail(dev, rc, "teardown");
	return 0;
}

int mx5_vport_roce(struct mx5_device *dev, bool enable);

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
	/* A function already in fatal error answers no command: say so now rather than
	 * after a command timeout (Linux checks the same sensors before its commands). */
	struct mx5_health h;
	if (mx5_device_check_health(dev, &h) != MX5_HEALTH_OK)
		return mx5_fail(dev, -EIO, "bring-up: device in fatal error (health syndrome 0x%x, "
				"health buffer synd 0x%x)", h.health_syndrome, h.synd);
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
	if ((rc = mx5_enable_hca(dev)) || (rc = mx5_set_issi(dev)))
		return rc;
	if ((rc = mx5_startup_pages(dev, 1)))
		return rc;
	/* HOST_ENDIANNESS (ACCESS_REG 0x7004) is only needed on big-endian hosts; every
	 * host this driver targets (x86-64, aarch64) is little-endian, which is the
	 * device's default. */
	if ((rc = mx5_caps_read(dev, MX5_CAP_GENERAL, false)))
		return rc;
	if ((rc = mx5_set_general_caps(dev)) || (rc = mx5_caps_read(dev, MX5_CAP_GENERAL, false)))
		return rc;
	if (PRM_GET(cmd_hca_cap, dev->caps[MX5_CAP_GENERAL][1], roce))
		if ((rc = mx5_caps_read(dev, MX5_CAP_ROCE, true)))
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
	if (dev->attr.flags & MX5_OPEN_INSPECT)
		return 0;
	if (dev->have_caps[MX5_CAP_ROCE] && (rc = mx5_vport_roce(dev, true))) {
		/* A function that does not know the command has no vport to gate RoCE
		 * (status bad opcode): carry on; any other answer is an error. */
		if (mx5_cmd_status(dev) != PRM_CMD_STAT_BAD_OP)
			return rc;
		dev->err[0] = '\0';
	}
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
