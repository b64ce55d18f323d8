/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A tiny pcap (libpcap classic format) reader and writer for tests: the RoCE fixture
 * capture, pcaps of packets our TX code builds for tshark/scapy, loopback captures.
 * Reads both byte orders and the microsecond and nanosecond variants; writes
 * microsecond files in host byte order (as libpcap does).  0 or a negative errno. */
#ifndef UVERBS_TESTS_COMMON_PCAP_FILE_H
#define UVERBS_TESTS_COMMON_PCAP_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PCAP_FILE_LINKTYPE_ETHERNET 1

struct pcap_file {
	FILE *f;
	bool swap;            /* file byte order differs from ours */
	bool nsec;            /* timestamps in nanoseconds */
	bool writing;
	uint32_t linktype;
	uint32_t snaplen;
	unsigned records;     /* read or written so far */
};

int pcap_file_open(struct pcap_file *p, const char *path);
/* The next record: 1 with *caplen bytes in buf (at most cap; -EMSGSIZE if larger),
 * 0 at the end of the file, -EBADMSG for a truncated or malformed record. */
int pcap_file_next(struct pcap_file *p, uint8_t *buf, size_t cap, size_t *caplen, size_t *origlen,
		   uint64_t *ts_ns);
int pcap_file_create(struct pcap_file *p, const char *path, uint32_t linktype);
int pcap_file_write(struct pcap_file *p, const uint8_t *frame, size_t len, uint64_t ts_ns);
/* Closes; for a written file, -EIO if anything failed to reach the disk. */
int pcap_file_close(struct pcap_file *p);

#endif
