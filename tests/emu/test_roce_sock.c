/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The port's UDP sockets (hw/emu/roce_sock.c) on real loopback: packets leave from the
 * flow's source port, arrive with an envelope the receiver can rebuild exactly (so
 * their ICRC verifies), and a taken source port falls back to 4791 with a fresh ICRC. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hw/emu/netaddr.h"
#include "hw/emu/roce_wire.h"

struct port {
	uint32_t ip;
	int fd;
	struct emu_roce_sock s;
};

static struct port pa, pb;

static void open_port(struct port *p)
{
	char err[128];

	cr_assert_eq(emu_net_claim(0, &p->ip, &p->fd, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(emu_roce_sock_init(&p->s, p->fd, p->ip), 0);
}

static void setup(void)
{
	open_port(&pa);
	open_port(&pb);
}

static void teardown(void)
{
	emu_roce_sock_fini(&pa.s);
	emu_roce_sock_fini(&pb.s);
	emu_net_release(pa.ip, pa.fd);
	emu_net_release(pb.ip, pb.fd);
}

static ssize_t recv_one(struct port *p, uint8_t *buf, size_t cap, struct emu_roce_ip *env)
{
	struct pollfd pfd = { .fd = p->fd, .events = POLLIN };

	cr_assert_eq(poll(&pfd, 1, 2000), 1, "nothing arrived in 2 s");
	return emu_roce_sock_recv(&p->s, buf, cap, env, MSG_DONTWAIT);
}

static int build_send(uint16_t sport, uint8_t tos, const char *msg, uint8_t *pkt, size_t cap, uint16_t *used)
{
	struct emu_roce_ip ip;
	struct emu_roce_hdrs h;
	int n;

	emu_roce_ip_init(&ip, pa.ip, pb.ip, sport, tos);
	memset(&h, 0, sizeof(h));
	h.bth.opcode = EMU_ROCE_RC_SEND_ONLY_IMM;
	h.bth.pkey = 0xffff;
	h.bth.dqpn = 0x42;
	h.bth.psn = 7;
	h.imm = 0xfeedface;
	n = emu_roce_build(pkt, cap, &ip, &h, msg, strlen(msg));
	cr_assert_gt(n, 0);
	cr_assert_eq(emu_roce_sock_send(&pa.s, &ip, pkt, (size_t)n, used), 0);
	return n;
}

static void expect_arrival(uint16_t sport, const char *msg)
{
	uint8_t buf[256];
	struct emu_roce_ip env;
	struct emu_roce_pkt p;
	ssize_t n = recv_one(&pb, buf, sizeof(buf), &env);

	cr_assert_gt(n, 0);
	cr_expect_eq(env.saddr, pa.ip);
	cr_expect_eq(env.daddr, pb.ip);
	cr_expect_eq(env.sport, sport);
	cr_expect_eq(env.dport, EMU_ROCE_PORT);
	cr_assert_eq(emu_roce_parse(buf, (size_t)n, &env, &p), 0, "dropped: %s", emu_roce_drop_name(p.drop));
	cr_expect_eq(p.h.imm, 0xfeedface);
	cr_expect_eq(p.payload_len, strlen(msg));
	cr_expect_arr_eq(p.payload, msg, strlen(msg));
}

TestSuite(roce_sock, .init = setup, .fini = teardown);

Test(roce_sock, packet_from_a_flow_port_arrives_with_a_valid_icrc)
{
	uint8_t pkt[256];
	uint16_t used = 0;

	build_send(0xc123, 0, "hello over loopback", pkt, sizeof(pkt), &used);
	cr_expect_eq(used, 0xc123);
	expect_arrival(0xc123, "hello over loopback");
	/* the socket is kept for the next packet of the flow */
	cr_expect_eq(pa.s.ntx, 1);
	build_send(0xc123, 0, "again", pkt, sizeof(pkt), &used);
	expect_arrival(0xc123, "again");
	cr_expect_eq(pa.s.ntx, 1);
}

Test(roce_sock, packet_from_4791_uses_the_port_socket)
{
	uint8_t pkt[256];
	uint16_t used = 0;

	build_send(EMU_ROCE_PORT, 0, "x", pkt, sizeof(pkt), &used);
	cr_expect_eq(used, EMU_ROCE_PORT);
	expect_arrival(EMU_ROCE_PORT, "x");
	cr_expect_eq(pa.s.ntx, 0);
}

Test(roce_sock, traffic_class_travels_as_tos_and_stays_out_of_the_icrc)
{
	uint8_t pkt[256], buf[256];
	struct emu_roce_ip env;
	struct emu_roce_pkt p;
	ssize_t n;

	build_send(0xc200, 0x6a, "dscp 26, ECT(0)", pkt, sizeof(pkt), NULL);
	n = recv_one(&pb, buf, sizeof(buf), &env);
	cr_assert_gt(n, 0);
	cr_expect_eq(env.tos, 0x6a);
	cr_expect_eq(env.ttl, EMU_IPV4_TTL);
	cr_expect_eq(emu_roce_parse(buf, (size_t)n, &env, &p), 0);
}

Test(roce_sock, odd_source_port_is_sent_from_a_one_off_socket)
{
	uint8_t pkt[256];
	uint16_t used = 0;

	build_send(5000, 0, "hostile", pkt, sizeof(pkt), &used);
	cr_expect_eq(used, 5000);
	expect_arrival(5000, "hostile");
	cr_expect_eq(pa.s.ntx, 0);
}

Test(roce_sock, taken_source_port_falls_back_to_4791_with_a_new_icrc)
{
	uint8_t pkt[256];
	uint16_t used = 0;
	struct sockaddr_in sa;
	int squat = socket(AF_INET, SOCK_DGRAM, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(0xc321);
	sa.sin_addr.s_addr = htonl(pa.ip);
	cr_assert_eq(bind(squat, (struct sockaddr *)&sa, sizeof(sa)), 0);
	build_send(0xc321, 0, "fallback", pkt, sizeof(pkt), &used);
	cr_expect_eq(used, EMU_ROCE_PORT);
	cr_expect_eq(pa.s.tx_fallbacks, 1);
	expect_arrival(EMU_ROCE_PORT, "fallback");
	close(squat);
}

Test(roce_sock, send_refuses_a_foreign_source_address)
{
	uint8_t pkt[64] = { 0 };
	struct emu_roce_ip ip;

	emu_roce_ip_init(&ip, pb.ip, pa.ip, 0xc000, 0);
	cr_expect_eq(emu_roce_sock_send(&pa.s, &ip, pkt, sizeof(pkt), NULL), -EINVAL);
	emu_roce_ip_init(&ip, pa.ip, pb.ip, 0xc000, 0);
	cr_expect_eq(emu_roce_sock_send(&pa.s, &ip, pkt, 8, NULL), -EINVAL);
}

Test(roce_sock, oversized_datagram_reports_its_real_length)
{
	uint8_t big[3000], small[64], data[1000];
	struct emu_roce_ip ip, env;
	struct emu_roce_hdrs h;
	struct emu_roce_pkt p;
	ssize_t n;
	int len;

	memset(data, 0x5a, sizeof(data));
	emu_roce_ip_init(&ip, pa.ip, pb.ip, 0xc001, 0);
	memset(&h, 0, sizeof(h));
	h.bth.opcode = EMU_ROCE_RC_SEND_ONLY;
	len = emu_roce_build(big, sizeof(big), &ip, &h, data, sizeof(data));
	cr_assert_gt(len, 1000);
	cr_assert_eq(emu_roce_sock_send(&pa.s, &ip, big, (size_t)len, NULL), 0);
	n = recv_one(&pb, small, sizeof(small), &env);
	cr_expect_eq(n, len);
	cr_expect_gt((size_t)n, sizeof(small));
	/* the caller drops it: only `sizeof(small)` bytes were kept */
	cr_expect_eq(emu_roce_parse(small, sizeof(small), &env, &p), -EBADMSG);
}

Test(roce_sock, recv_on_an_empty_socket_says_eagain)
{
	uint8_t buf[64];
	struct emu_roce_ip env;

	cr_expect_eq(emu_roce_sock_recv(&pb.s, buf, sizeof(buf), &env, MSG_DONTWAIT), -EAGAIN);
}

/* Batches (roce_wire.h): corked sends are held until the uncork, then leave in their
 * order, one system call per run of packets from the same socket; a receive takes
 * what is queued, EMU_ROCE_RX_BATCH a call. */
static void send_numbered(uint16_t sport, unsigned i)
{
	char msg[16];
	uint8_t pkt[256];

	snprintf(msg, sizeof(msg), "packet %02u", i);
	build_send(sport, 0, msg, pkt, sizeof(pkt), NULL);
}

/* Receive `n` packets with emu_roce_sock_recv_many, each parsed (its ICRC checked) and
 * handed to check(i, p, arg) in arrival order, and nothing more; how many receive calls
 * that took (each takes what is queued, up to EMU_ROCE_RX_BATCH).  A coalesced datagram
 * (emu_roce_sock_coalesce) is taken apart with emu_roce_rx_next, as the device does;
 * `coalesced` counts them. */
static unsigned coalesced;

typedef void packet_check(unsigned i, const struct emu_roce_pkt *p, const void *arg);

static unsigned receive_parsed(unsigned n, packet_check *check, const void *arg)
{
	struct emu_roce_rx_batch b;
	struct pollfd pfd = { .fd = pb.fd, .events = POLLIN };
	unsigned got = 0, calls = 0;

	cr_assert_eq(emu_roce_rx_batch_init(&b), 0);
	while (got < n) {
		cr_assert_eq(poll(&pfd, 1, 2000), 1, "%u of %u packets arrived", got, n);
		cr_assert_gt(emu_roce_sock_recv_many(&pb.s, &b, MSG_DONTWAIT), 0);
		calls++;
		for (unsigned i = 0; i < b.n; i++) {
			size_t off = 0, len;
			uint8_t *pkt;

			if (b.seg[i] && b.seg[i] < b.len[i])
				coalesced++;
			while ((len = emu_roce_rx_next(&b, i, &off, &pkt)) != 0) {
				struct emu_roce_pkt p;

				cr_assert_lt(got, n, "more packets arrived than were sent");
				cr_assert_eq(emu_roce_parse(pkt, len, &b.env[i], &p), 0, "packet %u dropped: %s", got,
					     emu_roce_drop_name(p.drop));
				check(got++, &p, arg);
			}
		}
	}
	cr_expect_eq(emu_roce_sock_recv_many(&pb.s, &b, MSG_DONTWAIT), -EAGAIN);
	emu_roce_rx_batch_fini(&b);
	return calls;
}

/* "packet 00", "packet 01" ... in order */
static void check_numbered(unsigned i, const struct emu_roce_pkt *p, const void *arg)
{
	char want[16];

	(void)arg;
	snprintf(want, sizeof(want), "packet %02u", i);
	cr_assert_eq(p->payload_len, strlen(want));
	cr_assert_arr_eq(p->payload, want, strlen(want), "packet %u out of order", i);
}

static void expect_numbered(unsigned n, unsigned *calls)
{
	*calls = receive_parsed(n, check_numbered, NULL);
}

Test(roce_sock, corked_packets_leave_at_the_uncork_in_one_call_in_order)
{
	struct pollfd pfd = { .fd = pb.fd, .events = POLLIN };
	uint64_t calls0 = pa.s.tx_calls;
	unsigned calls;

	emu_roce_sock_cork(&pa.s);
	for (unsigned i = 0; i < 20; i++)
		send_numbered(0xc123, i);
	cr_expect_eq(pa.s.tx_calls, calls0, "a corked packet was sent before the uncork");
	cr_expect_eq(poll(&pfd, 1, 50), 0, "a corked packet arrived before the uncork");
	emu_roce_sock_uncork(&pa.s);
	cr_expect_eq(pa.s.tx_calls - calls0, 1, "20 packets from one socket took %llu calls",
		     (unsigned long long)(pa.s.tx_calls - calls0));
	expect_numbered(20, &calls);
	cr_expect_eq(calls, 2, "20 queued packets took %u receives, not 2 of at most %u", calls, EMU_ROCE_RX_BATCH);
}

Test(roce_sock, a_packet_that_cannot_be_queued_leaves_after_the_queued_ones)
{
	unsigned calls;

	/* source port 5000 has no cached socket: a one-off socket sends it at once */
	emu_roce_sock_cork(&pa.s);
	send_numbered(0xc123, 0);
	send_numbered(0xc123, 1);
	send_numbered(5000, 2);
	send_numbered(0xc124, 3);
	send_numbered(0xc123, 4);
	emu_roce_sock_uncork(&pa.s);
	expect_numbered(5, &calls);
}

Test(roce_sock, nested_corks_send_at_the_outermost_uncork)
{
	struct pollfd pfd = { .fd = pb.fd, .events = POLLIN };
	unsigned calls;

	emu_roce_sock_cork(&pa.s);
	emu_roce_sock_cork(&pa.s);
	send_numbered(0xc123, 0);
	emu_roce_sock_uncork(&pa.s);
	cr_expect_eq(poll(&pfd, 1, 50), 0, "sent at the inner uncork");
	send_numbered(0xc123, 1);
	emu_roce_sock_uncork(&pa.s);
	expect_numbered(2, &calls);
	/* uncorked: a send leaves at once */
	send_numbered(0xc123, 0);
	expect_numbered(1, &calls);
}

/* Segmented datagrams (UDP GSO, roce_sock.c seg_run): a run of queued packets of one
 * length to one destination leaves in one datagram the kernel cuts into the packets
 * again, so the receiver takes them one by one, in order, each with its own ICRC. */
static void send_sized(uint8_t tos, unsigned i, size_t len)
{
	struct emu_roce_ip ip;
	struct emu_roce_hdrs h;
	uint8_t pkt[2048];
	char msg[1500];
	int n;

	cr_assert_lt(len, sizeof(msg));
	memset(msg, 'a' + (int)(i % 26), len);
	emu_roce_ip_init(&ip, pa.ip, pb.ip, 0xc123, tos);
	memset(&h, 0, sizeof(h));
	h.bth.opcode = EMU_ROCE_RC_SEND_MIDDLE;
	h.bth.pkey = 0xffff;
	h.bth.dqpn = 0x42;
	h.bth.psn = i;
	n = emu_roce_build(pkt, sizeof(pkt), &ip, &h, msg, len);
	cr_assert_gt(n, 0);
	cr_assert_eq(emu_roce_sock_send(&pa.s, &ip, pkt, (size_t)n, NULL), 0);
}

/* packet i: PSN i, len[i] bytes of 'a' + i % 26 */
static void check_sized(unsigned i, const struct emu_roce_pkt *p, const void *arg)
{
	const size_t *len = arg;

	cr_assert_eq(p->h.bth.psn, i, "packet %u arrived as %u", i, p->h.bth.psn);
	cr_assert_eq(p->payload_len, len[i], "packet %u: %u bytes, not %zu", i, p->payload_len, len[i]);
	cr_assert_eq(p->payload[0], 'a' + (int)(i % 26));
	cr_assert_eq(p->payload[p->payload_len - 1], 'a' + (int)(i % 26));
}

static void expect_sized(unsigned n, const size_t *len)
{
	(void)receive_parsed(n, check_sized, len);
}

static void send_all_corked(unsigned n, const size_t *len, const uint8_t *tos)
{
	emu_roce_sock_cork(&pa.s);
	for (unsigned i = 0; i < n; i++)
		send_sized(tos ? tos[i] : 0, i, len[i]);
	emu_roce_sock_uncork(&pa.s);
}

Test(roce_sock, equal_packets_leave_segmented_and_arrive_one_by_one)
{
	/* a message's MIDDLE packets and a shorter LAST; then two more after it: a shorter
	 * one ends a run, so they start the next */
	const size_t len[] = { 1024, 1024, 1024, 1024, 1024, 300, 1024, 1024 };
	uint64_t seg0 = pa.s.tx_segmented, calls0 = pa.s.tx_calls;

	send_all_corked(8, len, NULL);
#ifdef __linux__
	cr_expect_eq(pa.s.tx_segmented - seg0, 8, "%llu of 8 packets left in segmented datagrams",
		     (unsigned long long)(pa.s.tx_segmented - seg0));
#endif
	cr_expect_eq(pa.s.tx_calls - calls0, 1, "one socket's queue took %llu calls",
		     (unsigned long long)(pa.s.tx_calls - calls0));
	expect_sized(8, len);
}

Test(roce_sock, a_longer_packet_a_lone_one_or_another_tos_leaves_in_a_datagram_of_its_own)
{
	const size_t len[] = { 1040, 1024, 1024, 1024, 900, 1000, 1000, 1000 };
	const uint8_t tos[] = { 0, 0, 0, 0, 0, 0x60, 0x60, 0 };
	uint64_t seg0 = pa.s.tx_segmented;

	/* 1040 alone, as a message's FIRST (the 1024s that follow lead a run of their
	 * own, not its tail: taking one would leave 1040+1024 and 1024+1024+900, 7); 1024
	 * x3 and 900, its last; 1000 x2 with TOS 0x60; the last 1000 alone (TOS 0) */
	send_all_corked(8, len, tos);
#ifdef __linux__
	cr_expect_eq(pa.s.tx_segmented - seg0, 6, "%llu packets left in segmented datagrams, not 6",
		     (unsigned long long)(pa.s.tx_segmented - seg0));
#endif
	expect_sized(8, len);
}

/* Coalesced arrivals (UDP GRO, emu_roce_sock_coalesce): the receiving port takes a
 * segmented run as the one datagram it left as, and its packets apart again exactly:
 * each parses, with its own ICRC, in order.  A shorter last packet ends its run; a
 * lone packet arrives on its own. */
Test(roce_sock, a_coalescing_port_takes_a_segmented_run_as_one_datagram_and_its_packets_apart)
{
	const size_t len[] = { 1024, 1024, 1024, 1024, 1024, 300, 700 };
	unsigned calls;

#ifdef __linux__
	cr_assert_eq(emu_roce_sock_coalesce(&pb.s), 0);
	coalesced = 0;
	send_all_corked(7, len, NULL);
	calls = receive_parsed(7, check_sized, len);
	cr_expect_eq(coalesced, 1, "%u datagrams brought several packets, not 1 (the run of six)", coalesced);
	cr_expect_eq(calls, 1, "%u receive calls", calls);
#else
	cr_expect_eq(emu_roce_sock_coalesce(&pb.s), -EOPNOTSUPP);
	(void)len;
	(void)calls;
#endif
}

Test(roce_sock, with_segmentation_off_each_packet_is_its_own_datagram)
{
	const size_t len[] = { 512, 512, 512, 512 };
	uint64_t seg0 = pa.s.tx_segmented;

	pa.s.seg_off = true;   /* emu:gso=off */
	send_all_corked(4, len, NULL);
	cr_expect_eq(pa.s.tx_segmented, seg0, "segmented with emu:gso=off");
	expect_sized(4, len);
}
