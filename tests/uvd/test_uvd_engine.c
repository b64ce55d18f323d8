/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Clients of a daemon of engines (uvd on an emulated device, without -R; docs/
 * architecture.md "Several processes: uvd"): each client runs the NIC's data plane in
 * its own engine (hw/emu/engine.c), on an address the daemon bound for it, so a post
 * costs what it costs in one process and no daemon thread moves a packet.
 *
 * The daemon is $UVD_BIN, started here on 127.86.1.1.  Two hw/mlx5 devices of this
 * process are two clients of it ("uvd:<socket>" twice), connected by an RC QP pair
 * through the driver (tests/integration/tp_pair.h); a third NIC is a plain emulated
 * one in this process (127.86.1.50), a peer outside the daemon.  A raw connection reads
 * the daemon's own device counters (COUNTERS).  Suite uvd_engine_opts starts a daemon
 * of its own on 127.86.2.1, with data-plane options for its engines. */
#include "firmware-cmd/names.h"
#include "tests/integration/tp_pair.h"
#include "tests/uvd/uvd_daemon.h"

static struct uvd_daemon dmn = { .pid = -1 };
static int raw = -1, raw_evs = -1;
static uint32_t raw_seq;
static struct tp_nic A, B;
static struct tp_ep qa, qb;
static uint8_t *abuf, *bbuf;
static struct mx5_mr *amr, *bmr;
static char uri[160];

#define BUF (64u << 10)
#define DAEMON_IP 0x7f560101u   /* 127.86.1.1 */

static const struct tp_conn conn = { .mtu = 3, .sq_psn = 0x10, .rq_psn = 0x20, .timeout = 14, .retry_cnt = 2,
				     .rnr_retry = 7, .min_rnr_timer = 1 };

static void daemon_counters(struct uvd_counters_rep *out)
{
	cr_assert_eq(uvd_raw_rpc(raw, &raw_seq, UVD_OP_COUNTERS, NULL, 0, -1, out, sizeof(*out), NULL), 0, "COUNTERS");
}

static void setup(void)
{
	struct uvd_hello hq = { .version = UVD_VERSION };
	struct uvd_hello_rep hr;
	const unsigned access = MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ;

	raw = uvd_daemon_start(&dmn, "engine", "127.86.1.1");
	cr_assert_eq(uvd_raw_rpc(raw, &raw_seq, UVD_OP_HELLO, &hq, sizeof(hq), -1, &hr, sizeof(hr), &raw_evs), 0);
	cr_assert(hr.features & UVD_FEAT_ENGINE, "a daemon of an emulated device offers engines");
	snprintf(uri, sizeof(uri), "uvd:%s", dmn.sock);
	tp_nic_open(&A, uri, 256);
	tp_nic_open(&B, uri, 256);
	tp_qp_create(&qa, &A, MX5_QPT_RC, 64, NULL);
	tp_qp_create(&qb, &B, MX5_QPT_RC, 64, NULL);
	tp_connect(&qa, &qb, &conn);
	abuf = tp_alloc(BUF);
	bbuf = tp_alloc(BUF);
	amr = tp_mr(&A, abuf, BUF, access);
	bmr = tp_mr(&B, bbuf, BUF, access);
}

static void teardown(void)
{
	tp_nic_close(&A);
	tp_nic_close(&B);
	uvd_daemon_stop(&dmn);
}

TestSuite(uvd_engine, .init = setup, .fini = teardown, .timeout = 120);

Test(uvd_engine, each_client_answers_on_an_address_of_its_own)
{
	cr_assert_neq(A.ip, B.ip);
	for (unsigned i = 0; i < 2; i++) {
		uint32_t ip = i ? B.ip : A.ip;
		cr_assert_eq(ip >> 8, DAEMON_IP >> 8, "0x%08x: in the device's /24", ip);
		cr_assert_geq(ip & 0xff, 128, "0x%08x: from .128 up, apart from the device's own", ip);
	}
}

/* The post of one WR, in the engine's counters: what one process's own device counts
 * (tests/mlx5/test_pcie_counters.c); and the daemon's device counts no data-path work. */
Test(uvd_engine, post_is_one_blueflame_write_and_the_daemon_moves_nothing)
{
	struct uvd_counters_rep d0, d1;
	struct emu_counters pb, pa;
	struct ibv_wc wc;
	uint64_t id = 0;

	daemon_counters(&d0);
	for (unsigned k = 0; k < 2; k++)
		for (unsigned i = 0; i < 32; i++) {
			uint32_t len = k ? 4096 : 8;

			tp_fill(abuf, len, (uint32_t)++id);
			emu_counters(A.emu, &pb);
			cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE, id, abuf, len, tp_lkey(amr), (uintptr_t)bbuf + 4096,
					     tp_rkey(bmr), IBV_SEND_SIGNALED | (k ? 0 : IBV_SEND_INLINE)), 0);
			emu_counters(A.emu, &pa);
			snprintf(tp_what, sizeof(tp_what), "%u-byte WRITE #%u", len, i);
			tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
			cr_assert_eq(wc.wr_id, id);
			cr_assert_eq(memcmp(bbuf + 4096, abuf, len), 0, "%s: data differ", tp_what);
			cr_assert_eq(pa.bf_writes - pb.bf_writes, 1, "%s: %llu BlueFlame writes", tp_what,
				     (unsigned long long)(pa.bf_writes - pb.bf_writes));
			cr_assert_eq(pa.send_doorbells - pb.send_doorbells, 0, "%s: 64-bit send doorbells", tp_what);
			cr_assert_eq(pa.mmio_reads - pb.mmio_reads, 0, "%s: %llu MMIO reads", tp_what,
				     (unsigned long long)(pa.mmio_reads - pb.mmio_reads));
		}
	daemon_counters(&d1);
	cr_assert_eq(d1.bf_writes, d0.bf_writes, "the daemon's device took %llu BlueFlame writes",
		     (unsigned long long)(d1.bf_writes - d0.bf_writes));
	cr_assert_eq(d1.send_doorbells, d0.send_doorbells);
	cr_assert_eq(d1.cq_doorbells, d0.cq_doorbells);
}

/* A client's poll that returns an RDMA WRITE's completion reaches its engine as it
 * reaches an emu: device (the shim's poll_found hook, hw/shim/uvd.c): the engine's
 * device thread watches the socket again, or the poll waits a moment for the answer
 * (emu_poll_found).  Without the hook, which engine clients lacked until 2026-12-07,
 * an application that spins on memory for its peer's answer after its WRITE completed
 * had it only when the hold ran out.  Here A polls, WRITEs to B and polls for the
 * completion, ten times: the engine saw each found WRITE. */
Test(uvd_engine, a_poll_that_returns_a_writes_completion_reaches_the_engine)
{
	struct emu_tp_counters c0, c1;
	struct ibv_wc wc;

	emu_tp_counters(A.emu, &c0);
	for (unsigned i = 0; i < 10; i++) {
		for (uint64_t end = tp_now_ms() + 1; tp_now_ms() < end;)
			cr_assert_eq(mx5_poll_cq(A.cqr, 1, &wc), 0);
		cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE, 700 + i, abuf, 8, 0, (uintptr_t)bbuf, tp_rkey(bmr),
				     IBV_SEND_SIGNALED | IBV_SEND_INLINE),
			     0);
		snprintf(tp_what, sizeof(tp_what), "WRITE %u", i);
		tp_expect(&A, &wc, IBV_WC_SUCCESS, 5000);
	}
	emu_tp_counters(A.emu, &c1);
	uint64_t found = (c1.hold_found - c0.hold_found) + (c1.hold_found_on_socket - c0.hold_found_on_socket) +
			 (c1.found_with_sends_outstanding - c0.found_with_sends_outstanding);
	cr_assert_geq(found, 10, "the engine saw %llu of 10 polls that returned a WRITE's completion",
		      (unsigned long long)found);
}

/* The engine reaches the client's pages, so the client checks them, as get_user_pages
 * would: memory it has not mapped is refused (EFAULT), read-only memory is registered
 * for reading only. */
Test(uvd_engine, memory_the_client_has_not_mapped_is_refused)
{
	struct mx5_mr *mr = NULL;
	uint8_t *p = tp_alloc(8192);

	cr_assert_eq(munmap(p, 8192), 0);
	cr_assert_eq(mx5_mr_reg(A.pd, p, 8192, MX5_ACCESS_LOCAL_WRITE, &mr), -EFAULT, "%s", mx5_device_error(A.dev));
	p = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(p, MAP_FAILED);
	cr_assert_eq(mx5_mr_reg(A.pd, p, 8192, MX5_ACCESS_LOCAL_WRITE, &mr), -EFAULT, "writable registration of "
		     "read-only memory");
	cr_assert_eq(mx5_mr_reg(A.pd, p, 8192, 0, &mr), 0, "%s", mx5_device_error(A.dev));
	mx5_mr_dereg(mr);
	munmap(p, 8192);
}

static struct mx5_event seen[16];
static unsigned nseen;

static void on_event(void *ctx, const struct mx5_event *ev)
{
	(void)ctx;
	if (nseen < 16)
		seen[nseen++] = *ev;
}

/* Poll dev's events until one of `type` was seen (within ms); its index, or -1. */
static int wait_event(struct mx5_device *dev, enum mx5_event_type type, unsigned ms)
{
	uint64_t end = tp_now_ms() + ms;

	do {
		mx5_device_poll_events(dev);
		for (unsigned i = 0; i < nseen; i++)
			if (seen[i].type == type)
				return (int)i;
		usleep(5000);
	} while (tp_now_ms() < end);
	return -1;
}

/* A peer outside the daemon: one process's own emulated NIC at `uri`, a buffer of BUF
 * bytes registered there, an RC QP on it (qc) and one on client A (qa2), not yet
 * connected. */
struct outside {
	struct tp_nic nic;
	uint8_t *buf;
	struct mx5_mr *mr;
	struct tp_ep qc, qa2;
};

static void outside_open(struct outside *o, const char *uri)
{
	tp_nic_open(&o->nic, uri, 64);
	o->buf = tp_alloc(BUF);
	o->mr = tp_mr(&o->nic, o->buf, BUF, MX5_ACCESS_LOCAL_WRITE);
	tp_qp_create(&o->qc, &o->nic, MX5_QPT_RC, 16, NULL);
	tp_qp_create(&o->qa2, &A, MX5_QPT_RC, 16, NULL);
}

/* The daemon's device holds a copy of every client QP, under the same number, but
 * takes no packet: a WRITE sent to the daemon's address naming a client's QP and rkey,
 * from the very peer that QP is connected to and with the PSN it expects next (any
 * local process could send one), lands nowhere, and the sender's retries run out. */
Test(uvd_engine, a_packet_to_the_daemons_address_reaches_no_client)
{
	static struct outside o;
	struct tp_nic *C = &o.nic;
	struct tp_ep forged;
	struct uvd_counters_rep d0, d1;
	struct ibv_wc wc;

	outside_open(&o, "emu:ip=127.86.1.51");
	/* qa2's peer is C, and its source GID is index 1, where uverbs puts a port's IPv4
	 * address (uv_program_gids): in the daemon's own table that entry is the device's
	 * address, so its copy of qa2 would take a packet sent there */
	struct mx5_gid_entry g;
	uint8_t mac[6];
	emu_roce_mac_from_ipv4(A.ip, mac);
	mx5_gid_entry_ipv4(&g, A.ip, mac);
	cr_assert_eq(mx5_gid_set(A.dev, 1, 1, &g), 0, "%s", mx5_device_error(A.dev));
	struct tp_conn ca = conn, cq = conn;
	ca.sgid_index = 1;
	ca.sq_psn = conn.rq_psn;
	ca.rq_psn = conn.sq_psn;
	tp_qp_connect_to(&o.qc, A.ip, o.qa2.qpn, &cq);
	tp_qp_connect_to(&o.qa2, C->ip, o.qc.qpn, &ca);
	tp_qp_create(&forged, C, MX5_QPT_RC, 16, NULL);
	struct tp_conn fc = conn;                /* qa2's responder expects conn.sq_psn next */
	tp_qp_connect_to(&forged, DAEMON_IP, o.qa2.qpn, &fc);
	memset(o.buf, 0x77, 4096);
	memset(abuf, 0, 4096);
	daemon_counters(&d0);
	snprintf(tp_what, sizeof(tp_what), "WRITE to the daemon's address naming a client's QP");
	cr_assert_eq(tp_post(&forged, IBV_WR_RDMA_WRITE, 1, o.buf, 4096, tp_lkey(o.mr), (uintptr_t)abuf, tp_rkey(amr),
			     IBV_SEND_SIGNALED), 0);
	tp_expect(C, &wc, IBV_WC_RETRY_EXC_ERR, 10000);
	daemon_counters(&d1);
	cr_assert_eq(abuf[0], 0, "the daemon's device wrote into a client's memory");
	cr_assert_eq(abuf[4095], 0);
	cr_assert_eq(d1.dma_writes, d0.dma_writes, "the daemon's device made %llu DMA writes",
		     (unsigned long long)(d1.dma_writes - d0.dma_writes));
	cr_assert_gt(d1.rx_packets, d0.rx_packets, "the packets did reach the daemon's socket");
	/* the client's own QP with that peer still works: the engine has it */
	snprintf(tp_what, sizeof(tp_what), "WRITE from C into the client through its engine");
	cr_assert_eq(tp_post(&o.qc, IBV_WR_RDMA_WRITE, 2, o.buf, 4096, tp_lkey(o.mr), (uintptr_t)abuf, tp_rkey(amr),
			     IBV_SEND_SIGNALED), 0);
	tp_expect(C, &wc, IBV_WC_SUCCESS, 5000);
	cr_assert_eq(abuf[4095], 0x77);
	tp_nic_close(C);
}

/* An error the responder's engine sees (a WRITE with a wrong rkey) raises its async
 * event in the client (SHIM_REMOTE_EQE, decoded by hw/mlx5), and the requester's QP
 * that the data plane moved to ERR is ERR in a query, which its engine answers (the
 * daemon's copy never left RTS). */
Test(uvd_engine, an_engines_errors_reach_the_client_as_events_and_queries)
{
	struct ibv_wc wc;
	struct mx5_qp_attr at;
	struct mx5_qp_init_attr ia;

	mx5_device_set_event_handler(B.dev, on_event, NULL);
	snprintf(tp_what, sizeof(tp_what), "WRITE with a wrong rkey");
	cr_assert_eq(tp_post(&qa, IBV_WR_RDMA_WRITE, 7, abuf, 64, tp_lkey(amr), (uintptr_t)bbuf, tp_rkey(bmr) ^ 0x100,
			     IBV_SEND_SIGNALED), 0);
	tp_expect(&A, &wc, IBV_WC_REM_ACCESS_ERR, 5000);
	int i = wait_event(B.dev, MX5_EVENT_QP_ACCESS_ERROR, 5000);
	cr_assert_geq(i, 0, "no access-error event reached the responder's client (%u events)", nseen);
	cr_assert_eq(seen[i].num, qb.qpn);
	memset(&at, 0, sizeof(at));
	cr_assert_eq(mx5_qp_query(qa.qp, &at, &ia), 0, "%s", mx5_device_error(A.dev));
	cr_assert_eq(at.qp_state, MX5_QPS_ERR, "requester QP state %d after a failed WRITE", at.qp_state);
}

/* An object the daemon created but the client's engine refused cannot run: the
 * client gives the daemon's back at once (emu_engine_undo), not at its exit. */
Test(uvd_engine, a_creation_the_engine_refuses_is_undone_in_the_daemon)
{
	struct uvd_counters_rep d0, d1;
	struct mx5_cq_attr ca = { .cqe = 64 };
	struct mx5_cq *cq = NULL;

	daemon_counters(&d0);
	cr_assert_eq(emu_fault_fail(A.emu, PRM_CMD_OP_CREATE_CQ, PRM_CMD_STAT_BAD_PARAM, 0, 0), 0);
	cr_assert_neq(mx5_cq_create(A.dev, &ca, &cq), 0, "the engine refused CREATE_CQ");
	daemon_counters(&d1);
	cr_assert_eq(d1.objects_live, d0.objects_live, "the daemon holds %lld more objects",
		     (long long)(d1.objects_live - d0.objects_live));
	emu_fault_clear(A.emu);
	cr_assert_eq(mx5_cq_create(A.dev, &ca, &cq), 0, "%s", mx5_device_error(A.dev));
	daemon_counters(&d1);
	cr_assert_eq(d1.objects_live, d0.objects_live + 1);
	mx5_cq_destroy(cq);
}

/* A peer outside the daemon (one process's own emulated NIC) and the client's engine
 * speak RoCE to each other; once the daemon is killed the engine stops as a pulled
 * device does: the peer's WRITE into the client's memory no longer lands (the peer's
 * retries run out) and the client's device reports the loss. */
Test(uvd_engine, daemon_death_stops_the_engine)
{
	static struct outside o;
	struct tp_nic *C = &o.nic;
	struct ibv_wc wc;

	outside_open(&o, "emu:ip=127.86.1.50");
	tp_connect(&o.qc, &o.qa2, &conn);
	memset(o.buf, 0x5a, 4096);
	memset(abuf, 0, 4096);
	snprintf(tp_what, sizeof(tp_what), "WRITE into the engine's client");
	cr_assert_eq(tp_post(&o.qc, IBV_WR_RDMA_WRITE, 1, o.buf, 4096, tp_lkey(o.mr), (uintptr_t)abuf, tp_rkey(amr),
			     IBV_SEND_SIGNALED), 0);
	tp_expect(C, &wc, IBV_WC_SUCCESS, 5000);
	cr_assert_eq(abuf[4095], 0x5a);

	mx5_device_set_event_handler(A.dev, on_event, NULL);
	kill(dmn.pid, SIGKILL);
	waitpid(dmn.pid, NULL, 0);
	dmn.pid = -1;
	uint64_t end = tp_now_ms() + 5000;
	while (!emu_removed(A.emu) && tp_now_ms() < end)
		usleep(10000);
	cr_assert(emu_removed(A.emu), "the engine still runs 5 s after its daemon died");
	cr_assert_geq(wait_event(A.dev, MX5_EVENT_DEVICE_FATAL, 5000), 0, "the client's device reported no loss");
	memset(o.buf, 0xa5, 4096);
	snprintf(tp_what, sizeof(tp_what), "WRITE into the client of a dead daemon");
	cr_assert_eq(tp_post(&o.qc, IBV_WR_RDMA_WRITE, 2, o.buf, 4096, tp_lkey(o.mr), (uintptr_t)abuf, tp_rkey(amr),
			     IBV_SEND_SIGNALED), 0);
	tp_expect(C, &wc, IBV_WC_RETRY_EXC_ERR, 10000);
	cr_assert_eq(abuf[0], 0x5a, "a WRITE landed in the memory of a client whose daemon is gone");
	cr_assert_eq(abuf[4095], 0x5a);
	tp_nic_close(C);
}

/* The daemon's emu: URI shapes its clients' data plane too: its wire faults, sched=,
 * copy=, bf=, gso=, gro= and hold_us= come with the ENGINE reply (emu_dataplane_opts),
 * and each engine runs with them, as the daemon's own data plane would.  Until
 * 2026-12-07 engines ran with the defaults whatever the daemon was given: a `uvd -d
 * emu:loss=0.01` moved its clients' packets without loss.  Here a daemon of its own
 * duplicates every packet and sends no segmented datagram: two clients' engines say
 * they run with those options, and a 64 KiB WRITE between them (64 packets at path
 * MTU 1024) is sent twice over, none of it segmented, and lands whole. */
static struct uvd_daemon odmn = { .pid = -1, .dev_opts = "dup=1,seed=3,gso=off,hold_us=4200" };

static void opts_fini(void)
{
	uvd_daemon_stop(&odmn);
}

Test(uvd_engine_opts, the_daemons_data_plane_options_are_its_engines, .fini = opts_fini, .timeout = 120)
{
	struct tp_nic C, D;
	struct tp_ep qc, qd;
	struct emu_tp_counters c0, c1;
	struct ibv_wc wc;
	char u[160], got[UVD_ENGINE_OPTS_MAX];
	const unsigned access = MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE;

	close(uvd_daemon_start(&odmn, "engopts", "127.86.2.1"));
	snprintf(u, sizeof(u), "uvd:%s", odmn.sock);
	tp_nic_open(&C, u, 256);
	tp_nic_open(&D, u, 256);
	for (unsigned i = 0; i < 2; i++) {
		cr_assert_geq(emu_dataplane_opts(i ? D.emu : C.emu, got, sizeof(got)), 0);
		cr_assert_str_eq(got, odmn.dev_opts, "client %u's engine runs with '%s'", i, got);
	}
	tp_qp_create(&qc, &C, MX5_QPT_RC, 16, NULL);
	tp_qp_create(&qd, &D, MX5_QPT_RC, 16, NULL);
	tp_connect(&qc, &qd, &conn);
	uint8_t *cbuf = tp_alloc(BUF), *dbuf = tp_alloc(BUF);
	struct mx5_mr *cmr = tp_mr(&C, cbuf, BUF, access), *dmr = tp_mr(&D, dbuf, BUF, access);

	tp_fill(cbuf, BUF, 77);
	emu_tp_counters(C.emu, &c0);
	snprintf(tp_what, sizeof(tp_what), "64 KiB WRITE between engines that duplicate every packet");
	cr_assert_eq(tp_post(&qc, IBV_WR_RDMA_WRITE, 1, cbuf, BUF, tp_lkey(cmr), (uintptr_t)dbuf, tp_rkey(dmr),
			     IBV_SEND_SIGNALED), 0);
	tp_expect(&C, &wc, IBV_WC_SUCCESS, 5000);
	emu_tp_counters(C.emu, &c1);
	cr_assert_eq(memcmp(dbuf, cbuf, BUF), 0, "%s: data differ", tp_what);
	cr_assert_geq(c1.fault_dup - c0.fault_dup, BUF / 1024, "%s: %llu packets duplicated", tp_what,
		      (unsigned long long)(c1.fault_dup - c0.fault_dup));
	cr_assert_eq(c1.tx_segmented - c0.tx_segmented, 0, "gso=off, yet %llu packets left segmented",
		     (unsigned long long)(c1.tx_segmented - c0.tx_segmented));
	tp_nic_close(&C);
	tp_nic_close(&D);
}
