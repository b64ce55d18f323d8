/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Bring-up values chosen as Linux mlx5_core / rdma-core choose them, checked against the
 * emulated ConnectX (whose capabilities are the ConnectX-4 trace's unless a cap= /
 * capmax= URI option stands in for a later device): the QP count asked for and the
 * init pages it costs, the firmware-init wait, the health sensors and miss count, the
 * async EQ's events, capabilities read again after INIT_HCA, SET_DRIVER_VERSION, the RoCE
 * UDP source port and cache-line capabilities, QP ts_format, the receive queue minimum
 * and the RoCE path MTU. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "firmware-cmd/cmdq.h"
#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "hw/emu/emu.h"
#include "hw/mlx5/mx5.h"
#include "hw/mlx5/sq.h"

static struct emu_dev *emu_of(struct mx5_device *dev)
{
	struct emu_dev *e = emu_device_from_shim(mx5_device_shim(dev));
	cr_assert_not_null(e, "an emu: device");
	return e;
}

static struct mx5_device *open_with(const char *uri, const struct mx5_open_attr *a)
{
	struct mx5_device *dev = NULL;
	int rc = mx5_device_open_attr(uri, a, &dev);
	cr_assert_eq(rc, 0, "open %s: %d: %s", uri, rc, mx5_open_error());
	return dev;
}

static struct mx5_device *open_inspect(const char *uri)
{
	struct mx5_open_attr a = { .flags = MX5_OPEN_INSPECT };
	return open_with(uri, &a);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* ---------------------------------------------------------------- log_max_qp */

Test(bringup_values, log_max_qp_is_linux_profile_17_not_the_device_maximum)
{
	struct mx5_device *dev = open_inspect("emu:");
	const void *cur = mx5_device_caps(dev, MX5_CAP_GENERAL, 1);
	const void *max = mx5_device_caps(dev, MX5_CAP_GENERAL, 0);
	cr_assert_eq(PRM_GET(cmd_hca_cap, max, log_max_qp), 23, "the trace's maximum");
	cr_assert_eq(PRM_GET(cmd_hca_cap, cur, log_max_qp), 17, "what Linux SET in the trace");
	struct mx5_bringup_info bi;
	struct mx5_page_stats st;
	cr_assert_eq(mx5_device_bringup_info(dev, &bi), 0);
	mx5_device_page_stats(dev, &st);
	cr_assert_eq(bi.log_max_qp, 17);
	cr_assert_eq(bi.log_max_qp_max, 23);
	cr_assert_eq(bi.log_max_qp_default, 14);
	cr_assert_gt(bi.init_pages, 0);
	cr_assert_eq(bi.init_pages, st.init, "the summary reports the init pages given");
	mx5_device_close(dev);
}

Test(bringup_values, log_max_qp_never_exceeds_a_smaller_device_maximum)
{
	struct mx5_device *dev = open_inspect("emu:cap=general.log_max_qp:12");
	cr_assert_eq(PRM_GET(cmd_hca_cap, mx5_device_caps(dev, MX5_CAP_GENERAL, 1), log_max_qp), 12);
	mx5_device_close(dev);
}

/* ---------------------------------------------------------------- firmware-init wait */

Test(bringup_values, init_wait_rides_out_all_ones_reads_while_the_function_resets)
{
	/* 300 ms of all-ones (the FLR vfio-pci does at open), then a normal device */
	struct mx5_open_attr a = { .flags = MX5_OPEN_INSPECT, .init_timeout_ms = 5000 };
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct mx5_device *dev = open_with("emu:flr_ms=300", &a);
	cr_assert_geq(ms_since(&t0), 300.0, "waited for the function to come back");
	struct mx5_bringup_info bi;
	mx5_device_bringup_info(dev, &bi);
	cr_assert_geq(bi.init_wait_ms, 290u, "wait %u ms", bi.init_wait_ms);
	mx5_device_close(dev);
}

Test(bringup_values, device_that_stays_all_ones_fails_clearly_at_the_timeout)
{
	struct mx5_open_attr a = { .init_timeout_ms = 150 };
	struct mx5_device *dev = NULL;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = mx5_device_open_attr("emu:flr_ms=30000", &a, &dev);
	double ms = ms_since(&t0);
	cr_assert_eq(rc, -ENODEV, "rc %d: %s", rc, mx5_open_error());
	cr_assert_null(dev);
	cr_assert_geq(ms, 150.0, "not given up at the first all-ones read (%.0f ms)", ms);
	cr_assert_lt(ms, 3000.0, "ended at the timeout, no spin (%.0f ms)", ms);
	cr_assert(strstr(mx5_open_error(), "all-ones") && strstr(mx5_open_error(), "150 ms"), "%s",
		  mx5_open_error());
}

/* ---------------------------------------------------------------- health */

static int fatal_events;
static void on_event(void *ctx, const struct mx5_event *ev)
{
	(void)ctx;
	if (ev->type == MX5_EVENT_DEVICE_FATAL)
		fatal_events++;
}

static uint8_t *health_buffer_of(struct emu_dev *e)
{
	return PRM_ADDR(initial_seg, (uint8_t *)emu_bar_base(e), health_buffer);
}

Test(bringup_values, health_syndrome_without_the_rfr_bit_is_not_fatal)
{
	struct mx5_device *dev = open_inspect("emu:");
	struct emu_dev *e = emu_of(dev);
	/* a recoverable error posted in the health buffer: synd set, no reset requested */
	PRM_SET(health_buffer, health_buffer_of(e), synd, 0x9);
	PRM_SET(initial_seg, (uint8_t *)emu_bar_base(e), health_syndrome, 0x9);
	struct mx5_health h;
	cr_assert_eq(mx5_device_check_health(dev, &h), MX5_HEALTH_OK, "%s", mx5_device_error(dev));
	cr_assert_eq(h.synd, 0x9, "reported");
	cr_assert_eq(h.rfr, 0);
	/* the same with rfr: Linux's sensor_fw_synd_rfr */
	PRM_SET(health_buffer, health_buffer_of(e), rfr, 1);
	cr_assert_eq(mx5_device_check_health(dev, &h), MX5_HEALTH_FATAL);
	cr_assert(strstr(mx5_device_error(dev), "requests reset"), "%s", mx5_device_error(dev));
	mx5_device_close(dev);
}

Test(bringup_values, nic_interface_disabled_is_fatal)
{
	struct mx5_device *dev = open_inspect("emu:");
	fatal_events = 0;
	mx5_device_set_event_handler(dev, on_event, NULL);
	PRM_SET(initial_seg, (uint8_t *)emu_bar_base(emu_of(dev)), nic_interface_state, 1);
	struct mx5_health h;
	cr_assert_eq(mx5_device_check_health(dev, &h), MX5_HEALTH_FATAL);
	cr_assert_eq(h.nic_interface, 1);
	cr_assert_eq(fatal_events, 1);
	cr_assert(strstr(mx5_device_error(dev), "disabled"), "%s", mx5_device_error(dev));
	mx5_device_close(dev);
}

/* A stalled counter is reported on the third missed sample, not acted on: Linux
 * health.c poll_health logs "device's health compromised - reached miss count" and
 * queues its devlink reporter; only the fatal sensors fail the device. */
Test(bringup_values, stalled_health_counter_is_reported_on_the_third_missed_sample_not_fatal)
{
	struct mx5_device *dev = open_inspect("emu:");
	struct emu_dev *e = emu_of(dev);
	fatal_events = 0;
	mx5_device_set_event_handler(dev, on_event, NULL);
	mx5_device_set_health_poll(dev, 20, 3);
	emu_fault_counter_stall(e);
	struct timespec ts = { 0, 25 * 1000000 };
	struct mx5_health h;
	cr_assert_eq(mx5_device_check_health(dev, &h), MX5_HEALTH_OK, "first sample");
	for (int miss = 1; miss <= 2; miss++) {
		nanosleep(&ts, NULL);
		cr_assert_eq(mx5_device_check_health(dev, &h), MX5_HEALTH_OK, "miss %d", miss);
		cr_assert_eq(h.counter_stuck, 0, "miss %d", miss);
		/* samples closer than the interval do not count */
		cr_assert_eq(mx5_device_check_health(dev, &h), MX5_HEALTH_OK, "miss %d again", miss);
	}
	nanosleep(&ts, NULL);
	cr_assert_eq(mx5_device_check_health(dev, &h), MX5_HEALTH_OK, "third miss: reported, not fatal");
	cr_assert_eq(h.counter_stuck, 1);
	cr_assert_eq(h.counter_misses, 3);
	cr_assert_eq(fatal_events, 0, "no DEVICE_FATAL for a stalled counter");
	cr_assert(strstr(mx5_device_error(dev), "health compromised"), "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_device_is_fatal(dev), 0);
	mx5_device_close(dev);
}

/* A previous owner left nic_interface DISABLED (rdma-core's fast teardown does): the
 * driver claims the command interface first, which clears it, and only then reads the
 * fatal sensors (Linux starts its health poll after mlx5_cmd_enable). */
Test(bringup_values, nic_interface_left_disabled_by_the_previous_owner_does_not_refuse_the_open)
{
	struct mx5_device *dev = NULL;
	int rc = mx5_device_open("emu:nic_ifc=disabled", &dev);
	cr_assert_eq(rc, 0, "open refused: %s", mx5_open_error());
	cr_assert_eq(mx5_device_check_health(dev, NULL), MX5_HEALTH_OK);
	mx5_device_close(dev);
}

/* ---------------------------------------------------------------- async EQ */

Test(bringup_values, async_eq_asks_for_linux_events_and_not_internal_error)
{
	struct mx5_device *dev = open_with("emu:", NULL);
	struct mx5_bringup_info bi;
	mx5_device_bringup_info(dev, &bi);
	/* 0x001f02be from the ConnectX-4 trace's CREATE_EQ (Linux MLX5_ASYNC_EVENT_MASK),
	 * plus CMD (0x0a) and PAGE_REQUEST (0x0b) that this driver takes on the same EQ */
	cr_assert_eq(bi.async_event_mask[0], 0x001f02beull | (1ull << 0x0a) | (1ull << 0x0b),
		     "mask 0x%llx", (unsigned long long)bi.async_event_mask[0]);
	cr_assert_eq(bi.async_event_mask[0] & (1ull << 0x08), 0, "no INTERNAL_ERROR");
	cr_assert_eq(bi.async_event_mask[1] | bi.async_event_mask[2] | bi.async_event_mask[3], 0);
	mx5_device_close(dev);
}

/* ---------------------------------------------------------------- after INIT_HCA */

Test(bringup_values, capabilities_are_read_again_after_init_hca)
{
	static struct emu_counters c;
	struct mx5_device *dev = open_inspect("emu:");
	struct mx5_bringup_info bi;
	mx5_device_bringup_info(dev, &bi);
	cr_assert_eq(bi.caps_requeried, 4, "general, RoCE, atomic, ODP");
	/* What the device counted, maximum and current of each block: before INIT_HCA
	 * general twice (before and after SET_HCA_CAP), RoCE, atomic twice (SET_HCA_CAP
	 * host-order atomics), ODP = 12; after INIT_HCA the four blocks again = 8. */
	emu_counters(emu_of(dev), &c);
	cr_assert_eq(c.cmd_by_opcode[PRM_CMD_OP_QUERY_HCA_CAP], 12 + 8, "%llu QUERY_HCA_CAP",
		     (unsigned long long)c.cmd_by_opcode[PRM_CMD_OP_QUERY_HCA_CAP]);
	mx5_device_close(dev);
}

Test(bringup_values, driver_version_is_sent_only_when_the_device_asks)
{
	static struct emu_counters c;
	struct mx5_bringup_info bi;
	struct mx5_device *dev = open_inspect("emu:");
	emu_counters(emu_of(dev), &c);
	cr_assert_eq(c.cmd_by_opcode[PRM_CMD_OP_SET_DRIVER_VERSION], 0, "the ConnectX-4 has no cap");
	mx5_device_close(dev);

	dev = open_inspect("emu:cap=general.driver_version:1");
	emu_counters(emu_of(dev), &c);
	cr_assert_eq(c.cmd_by_opcode[PRM_CMD_OP_SET_DRIVER_VERSION], 1);
	cr_assert_eq(c.cmds_failed, 0);
	mx5_device_bringup_info(dev, &bi);
	cr_assert_eq(bi.driver_version_set, 1);
	mx5_device_close(dev);
}

Test(bringup_values, roce_udp_source_port_is_switched_to_the_driver_when_supported)
{
	struct mx5_device *dev = open_inspect("emu:capmax=roce.sw_r_roce_src_udp_port:1");
	const void *roce = mx5_device_caps(dev, MX5_CAP_ROCE, 1);
	cr_assert_not_null(roce);
	cr_assert_eq(PRM_GET(roce_cap, roce, sw_r_roce_src_udp_port), 1);
	struct mx5_bringup_info bi;
	mx5_device_bringup_info(dev, &bi);
	cr_assert_eq(bi.roce_udp_sport, 1);
	mx5_device_close(dev);
}

Test(bringup_values, cache_line_128byte_follows_the_host_cache_line)
{
	struct mx5_open_attr a = { .flags = MX5_OPEN_INSPECT, .cache_line = 128 };
	struct mx5_device *dev = open_with("emu:capmax=general.cache_line_128byte:1", &a);
	cr_assert_eq(PRM_GET(cmd_hca_cap, mx5_device_caps(dev, MX5_CAP_GENERAL, 1), cache_line_128byte), 1);
	mx5_device_close(dev);
	a.cache_line = 64;
	dev = open_with("emu:capmax=general.cache_line_128byte:1", &a);
	cr_assert_eq(PRM_GET(cmd_hca_cap, mx5_device_caps(dev, MX5_CAP_GENERAL, 1), cache_line_128byte), 0);
	mx5_device_close(dev);
}

/* ---------------------------------------------------------------- QPs */

static struct mx5_qp *small_qp(struct mx5_device *dev, struct mx5_pd *pd, struct mx5_cq *cq)
{
	struct mx5_qp_init_attr a = { .type = MX5_QPT_RC, .send_cq = cq, .recv_cq = cq,
				      .cap = { .max_send_wr = 1, .max_recv_wr = 1,
					       .max_send_sge = 1, .max_recv_sge = 1 } };
	struct mx5_qp *qp = NULL;
	cr_assert_eq(mx5_qp_create(pd, &a, &qp), 0, "%s", mx5_device_error(dev));
	return qp;
}

Test(bringup_values, qp_ts_format_is_default_on_a_real_time_only_device)
{
	/* roce_cap.qp_ts_format 1: real-time only (ConnectX-7 with the real-time clock on),
	 * which refuses a free-running QP */
	struct mx5_device *dev = open_with("emu:cap=roce.qp_ts_format:1", NULL);
	struct mx5_pd *pd;
	struct mx5_cq *cq;
	struct mx5_cq_attr ca = { .cqe = 8 };
	cr_assert_eq(mx5_pd_alloc(dev, &pd), 0);
	cr_assert_eq(mx5_cq_create(dev, &ca, &cq), 0);
	struct mx5_qp *qp = small_qp(dev, pd, cq);
	struct mx5_bringup_info bi;
	mx5_device_bringup_info(dev, &bi);
	cr_assert_eq(bi.qp_ts_format, 1, "DEFAULT");
	mx5_qp_destroy(qp);
	mx5_device_close(dev);
}

Test(bringup_values, receive_queue_is_at_least_64_bytes_so_the_send_queue_is_aligned)
{
	struct mx5_device *dev = open_with("emu:", NULL);
	struct mx5_pd *pd;
	struct mx5_cq *cq;
	struct mx5_cq_attr ca = { .cqe = 8 };
	cr_assert_eq(mx5_pd_alloc(dev, &pd), 0);
	cr_assert_eq(mx5_cq_create(dev, &ca, &cq), 0);
	struct mx5_qp *qp = small_qp(dev, pd, cq);
	struct mx5_qp_attr qa;
	struct mx5_qp_init_attr qi;
	cr_assert_eq(mx5_qp_query(qp, &qa, &qi), 0);
	/* one 16-byte receive WQE asked for: four of them fill the 64-byte minimum */
	cr_assert_eq(qa.cap.max_recv_wr, 4, "%u", qa.cap.max_recv_wr);
	const struct mx5_sq *sq = mx5_qp_sq_state(qp);
	cr_assert_eq((uintptr_t)sq->buf % 64, 0, "send queue at %p", (void *)sq->buf);
	mx5_qp_destroy(qp);
	mx5_device_close(dev);
}

/* ---------------------------------------------------------------- path MTU */

static uint8_t active_mtu_at(struct mx5_device *dev, uint16_t port_mtu)
{
	uint8_t reg[PRM_SIZE(pmtu_reg)] = { 0 }, out[PRM_SIZE(pmtu_reg)];
	PRM_SET(pmtu_reg, reg, local_port, 1);
	PRM_SET(pmtu_reg, reg, admin_mtu, port_mtu);
	cr_assert_eq(mx5_access_reg(dev, 0x5003, 1, 0, reg, out, sizeof(out)), 0, "%s",
		     mx5_device_error(dev));
	struct mx5_port_info pi;
	cr_assert_eq(mx5_port_query(dev, 1, &pi), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(pi.oper_mtu, port_mtu);
	return pi.active_mtu;
}

Test(bringup_values, path_mtu_leaves_room_for_the_roce_headers)
{
	struct mx5_device *dev = open_inspect("emu:");
	/* PMTU counts the frame (netdev MTU + 22); iboe_get_mtu takes 96 bytes of RoCE
	 * headers off the netdev MTU */
	cr_assert_eq(active_mtu_at(dev, 1522), 3, "1500-byte netdev: 1024");
	cr_assert_eq(active_mtu_at(dev, 4096), 4, "4096-byte port: 2048, not 4096");
	cr_assert_eq(active_mtu_at(dev, 4170), 4, "4170-byte port: 2048");
	cr_assert_eq(active_mtu_at(dev, 4213), 4, "one byte short of 4096 + 96 + 22");
	cr_assert_eq(active_mtu_at(dev, 4214), 5, "4096 + 96 + 22: 4096");
	cr_assert_eq(active_mtu_at(dev, 9216), 5);
	mx5_device_close(dev);
}

/* mx5_port_set_mtu takes the netdev MTU as Linux's mlx5e does (en_main.c mlx5e_set_mtu):
 * PMTU.admin_mtu and the NIC vport context both get the frame, MTU + 22. */
Test(bringup_values, port_mtu_is_written_as_a_frame_size)
{
	struct mx5_device *dev = open_inspect("emu:");
	struct mx5_port_info pi;
	cr_assert_eq(mx5_port_set_mtu(dev, 1, 9000), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_port_query(dev, 1, &pi), 0);
	cr_assert_eq(pi.oper_mtu, 9022);
	cr_assert_eq(pi.active_mtu, 5);
	uint8_t in[PRM_SIZE(query_nic_vport_context_in)] = { 0 };
	uint8_t *out = calloc(1, PRM_SIZE(query_nic_vport_context_out));
	PRM_SET(query_nic_vport_context_in, in, opcode, PRM_CMD_OP_QUERY_NIC_VPORT_CONTEXT);
	cr_assert_eq(cmdq_exec(mx5_device_cmdq(dev), in, sizeof(in), out, PRM_SIZE(query_nic_vport_context_out)), 0);
	cr_assert_eq(PRM_GET(nic_vport_context, PRM_ADDR(query_nic_vport_context_out, out, nic_vport_context), mtu), 9022);
	free(out);
	cr_assert_eq(mx5_port_set_mtu(dev, 1, 1500), 0);
	cr_assert_eq(mx5_port_query(dev, 1, &pi), 0);
	cr_assert_eq(pi.oper_mtu, 1522);
	cr_assert_eq(pi.active_mtu, 3);
	mx5_device_close(dev);
}

Test(bringup_values, port_mtu_outside_the_port_range_is_refused_and_changes_nothing)
{
	struct mx5_device *dev = open_inspect("emu:");
	struct mx5_port_info pi;
	cr_assert_eq(mx5_port_set_mtu(dev, 1, 67), -EINVAL);
	cr_assert_eq(mx5_port_set_mtu(dev, 1, 9216 - 22 + 1), -EINVAL, "above PMTU max_mtu less 22");
	cr_assert_eq(mx5_port_set_mtu(dev, 2, 1500), -EINVAL, "one port");
	cr_assert_eq(mx5_port_query(dev, 1, &pi), 0);
	cr_assert_eq(pi.oper_mtu, 1522);
	mx5_device_close(dev);
}

/* ---------------------------------------------------------------- port and function registers */

/* The commands the bring-up sent, in order: opcode, and for ACCESS_REG the register
 * and whether it was a write (op_mod 0). */
static struct { uint16_t op, reg; int write; } seen[256];
static unsigned nseen;
static void note_cmd(void *ctx, uint16_t opcode, uint16_t op_mod, const uint8_t *in, size_t inlen,
		     const uint8_t *out, size_t outlen, int status)
{
	(void)ctx, (void)out, (void)outlen, (void)status;
	if (nseen >= 256)
		return;
	seen[nseen].op = opcode;
	seen[nseen].reg = opcode == PRM_CMD_OP_ACCESS_REG && inlen >= 16
				  ? (uint16_t)PRM_GET(access_register_in, in, register_id) : 0;
	seen[nseen].write = op_mod == 0;
	nseen++;
}

static int first_index(uint16_t op, uint16_t reg, int write)
{
	for (unsigned i = 0; i < nseen; i++)
		if (seen[i].op == op && (!reg || (seen[i].reg == reg && seen[i].write == write)))
			return (int)i;
	return -1;
}

/* HOST_ENDIANNESS is written on every bring-up, after the boot pages and before the
 * capabilities are set: Linux main.c mlx5_function_open (set_hca_ctrl before
 * set_hca_cap), rdma-core mlx5_vfio.c mlx5_vfio_setup_function. */
Test(bringup_values, host_endianness_is_written_after_the_boot_pages_before_set_hca_cap)
{
	nseen = 0;
	emu_set_cmd_observer(note_cmd, NULL);
	struct mx5_device *dev = open_with("emu:", NULL);
	emu_set_cmd_observer(NULL, NULL);
	int he = first_index(PRM_CMD_OP_ACCESS_REG, 0x7004, 1);
	int pages = first_index(PRM_CMD_OP_MANAGE_PAGES, 0, 0);
	int set_cap = first_index(PRM_CMD_OP_SET_HCA_CAP, 0, 0);
	cr_assert_geq(he, 0, "no HOST_ENDIANNESS write");
	cr_assert_lt(pages, he, "after the boot pages");
	cr_assert_lt(he, set_cap, "before SET_HCA_CAP");
	mx5_device_close(dev);
}

/* A port a previous driver left administratively down is brought up, as Linux mlx5e's
 * open does (mlx5_set_port_admin_status(MLX5_PORT_UP)). */
Test(bringup_values, port_left_admin_down_is_brought_up_at_open)
{
	struct mx5_device *dev = open_with("emu:admin=down", NULL);
	struct mx5_port_info pi;
	cr_assert_eq(mx5_port_query(dev, 1, &pi), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(pi.admin_status, 1, "PAOS admin up");
	cr_assert_eq(pi.state, MX5_PORT_ACTIVE);
	mx5_device_close(dev);
}

/* ConnectX-6 Dx / ConnectX-7 on an extended protocol: the legacy eth_proto_oper reads
 * 0 and the speed comes from ext_eth_proto_oper (Linux core/port.c
 * mlx5_ptys_ext_supported, mlx5e_ext_link_info). */
Test(bringup_values, extended_ptys_protocols_give_the_port_speed)
{
	struct mx5_device *dev = open_with("emu:ptys=ext", NULL);
	struct mx5_port_info pi;
	cr_assert_eq(mx5_port_query(dev, 1, &pi), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(pi.eth_proto_oper, 0);
	cr_assert_eq(pi.speed_mbps, 200000, "200GAUI-4: %u", pi.speed_mbps);
	mx5_device_close(dev);
}

/* A VPI card whose port runs InfiniBand (cmd_hca_cap.port_type 0): refused at open,
 * naming the cause and the fix (Linux mlx5_core_roce_gid_set: RoCE only on Ethernet). */
Test(bringup_values, vpi_port_in_infiniband_mode_is_refused_naming_the_fix)
{
	struct mx5_device *dev = NULL;
	int rc = mx5_device_open("emu:cap=general.port_type:0", &dev);
	cr_assert_eq(rc, -EOPNOTSUPP, "rc %d: %s", rc, mx5_open_error());
	cr_assert(strstr(mx5_open_error(), "InfiniBand") && strstr(mx5_open_error(), "LINK_TYPE_P1"), "%s",
		  mx5_open_error());
}
