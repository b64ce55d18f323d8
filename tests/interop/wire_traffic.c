/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* interop_wire_traffic: a short, known run of RC traffic between two emulated NICs, for
 * tests/interop/test_live_capture.py to capture on lo and judge with tshark and scapy.
 *
 *   interop_wire_traffic OUT.json
 *
 * Two emulated NICs (127.79.B.2 and .3, B from the process id: addresses no other test
 * takes, since an auto-assigned 127.0.0.N pair is another test's before or after this
 * one, within the capture; B apart, so that two runs at once, say CI and a developer,
 * hardly ever meet) in this process, through the driver, one RC QP on each, path MTU
 * 1024.  One operation at a time, each completed before the next:
 *   1. a 4 KiB RDMA WRITE A -> B   (expect FIRST, MIDDLE, MIDDLE, LAST)
 *   2. a 4 KiB RDMA READ  A <- B   (one request, four responses)
 *   3. a 64-byte SEND     A -> B   (into the first of three receives posted on B at the start)
 *   4. an 8-byte FETCH_ADD A -> B  (AtomicETH, answered with AtomicAckETH)
 * Data are checked here (the WRITE and READ byte for byte, the SEND's length, the atomic's
 * original value); OUT.json tells the test the addresses, QPNs, PSNs, rkey and VAs it
 * must find on the wire.  Exit 0 on success, 2 on any failure (with the reason). */
#include "tools/bench-nic.h"

#define BUF (64u << 10)
#define PSN_A 0x1000u
#define PSN_B 0x2000u

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 131u) ^ seed);
}

int main(int argc, char **argv)
{
	struct bn_nic A, B;
	struct bn_qp qa, qb;
	struct bn_peer pa, pb;
	struct ibv_wc wc;
	uint8_t *abuf, *bbuf;
	uint32_t alkey, blkey;
	uint64_t *remote;
	char aip[32], bip[32];
	FILE *f;
	char auri[64], buri[64];
	unsigned net = 1 + (unsigned)getpid() % 250;

	bn_prog = "interop_wire_traffic";
	/* 1 s before a retransmission: the capture must show each packet once, even on a
	 * machine so loaded that an answer takes tens of milliseconds */
	bn_ack_timeout = 18;
	if (argc != 2) {
		fprintf(stderr, "usage: interop_wire_traffic OUT.json\n");
		return 2;
	}
	/* each packet in a datagram of its own: a capture on lo sees a segmented datagram
	 * (UDP GSO, hw/emu/roce_sock.c) before the kernel cuts it, as one packet */
	snprintf(auri, sizeof(auri), "emu:gso=off,ip=127.79.%u.2", net);
	snprintf(buri, sizeof(buri), "emu:gso=off,ip=127.79.%u.3", net);
	bn_side_uri = auri;
	abuf = bn_side_open(&A, &qa, 64, 16, BUF, PSN_A, &alkey, &pa);
	bn_side_uri = buri;
	bbuf = bn_side_open(&B, &qb, 64, 16, BUF, PSN_B, &blkey, &pb);
	bn_qp_connect(&qa, &pb, PSN_A, 3);
	bn_qp_connect(&qb, &pa, PSN_B, 3);

	/* Three receives posted at B before anything is sent: B's ACKs carry 3 end-to-end
	 * credits until the SEND takes one, 2 after (the capture test reads them). */
	if (bn_post_recv(&qb, 3, bbuf + 16384, 1024, blkey) || bn_post_recv(&qb, 30, bbuf + 32768, 1024, blkey) ||
	    bn_post_recv(&qb, 31, bbuf + 36864, 1024, blkey))
		bn_die("post_recv");

	/* 1. WRITE 4 KiB into B at offset 0 */
	fill(abuf, 4096, 1);
	if (bn_post(&qa, IBV_WR_RDMA_WRITE, 1, abuf, 4096, alkey, pb.addr, pb.rkey, IBV_SEND_SIGNALED))
		bn_die("post WRITE");
	bn_wait_cqe(&A, &wc, 5000, "4 KiB WRITE");
	if (memcmp(abuf, bbuf, 4096) != 0)
		bn_die("4 KiB WRITE: B's memory differs");

	/* 2. READ 4 KiB from B at offset 8192 into A at offset 8192 */
	fill(bbuf + 8192, 4096, 2);
	if (bn_post(&qa, IBV_WR_RDMA_READ, 2, abuf + 8192, 4096, alkey, pb.addr + 8192, pb.rkey, IBV_SEND_SIGNALED))
		bn_die("post READ");
	bn_wait_cqe(&A, &wc, 5000, "4 KiB READ");
	if (memcmp(abuf + 8192, bbuf + 8192, 4096) != 0)
		bn_die("4 KiB READ: A's memory differs");

	/* 3. SEND 64 bytes into a receive at B offset 16384 */
	fill(abuf + 16384, 64, 3);
	if (bn_post(&qa, IBV_WR_SEND, 3, abuf + 16384, 64, alkey, 0, 0, IBV_SEND_SIGNALED))
		bn_die("post SEND");
	bn_wait_cqe(&A, &wc, 5000, "SEND (requester)");
	bn_wait_cqe(&B, &wc, 5000, "SEND (responder)");
	if (wc.byte_len != 64 || memcmp(abuf + 16384, bbuf + 16384, 64) != 0)
		bn_die("SEND: received %u bytes / data differs", wc.byte_len);

	/* 4. FETCH_ADD 5 on B's 8 bytes at offset 24576: host order in memory (the driver
	 * selects atomic_req_8B_endianness_mode 1), big-endian on the wire */
	remote = (uint64_t *)(bbuf + 24576);
	*remote = 1000;
	if (bn_post_atomic(&qa, IBV_WR_ATOMIC_FETCH_AND_ADD, 4, abuf + 24576, alkey, pb.addr + 24576, pb.rkey, 5, 0))
		bn_die("post FETCH_ADD");
	bn_wait_cqe(&A, &wc, 5000, "FETCH_ADD");
	if (*(uint64_t *)(abuf + 24576) != 1000 || *remote != 1005)
		bn_die("FETCH_ADD: original %llu, now %llu", (unsigned long long)*(uint64_t *)(abuf + 24576),
		       (unsigned long long)*remote);

	bn_ip_str(A.ip, aip, sizeof(aip));
	bn_ip_str(B.ip, bip, sizeof(bip));
	f = fopen(argv[1], "w");
	if (!f)
		bn_die("%s: %s", argv[1], strerror(errno));
	fprintf(f,
		"{\"a_ip\": \"%s\", \"b_ip\": \"%s\", \"a_qpn\": %u, \"b_qpn\": %u, \"a_psn\": %u, \"b_psn\": %u,\n"
		" \"mtu\": 1024, \"b_rkey\": %u, \"write_va\": %llu, \"read_va\": %llu, \"atomic_va\": %llu,\n"
		" \"ops\": [\"WRITE 4096\", \"READ 4096\", \"SEND 64\", \"FETCH_ADD 8\"]}\n",
		aip, bip, qa.qpn, qb.qpn, PSN_A, PSN_B, pb.rkey, (unsigned long long)pb.addr,
		(unsigned long long)(pb.addr + 8192), (unsigned long long)(pb.addr + 24576));
	fclose(f);
	printf("wire traffic %s <-> %s: 4 KiB WRITE, 4 KiB READ, SEND 64 B, FETCH_ADD at MTU 1024, data checked\n",
	       aip, bip);
	bn_nic_close(&A);
	bn_nic_close(&B);
	munmap(abuf, BUF);
	munmap(bbuf, BUF);
	return 0;
}
