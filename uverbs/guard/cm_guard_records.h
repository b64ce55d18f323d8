/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What the CM (uverbs/rdma_cm_guard_linux.c) and its guardian program
 * (uverbs/guard/cm_guard_linux.c) share: the records of each connection's last word, in a
 * memfd both map, and the file descriptors the guardian starts with.
 * docs/architecture.md section 18, "Process exit". */
#ifndef UVERBS_GUARD_CM_GUARD_RECORDS_H
#define UVERBS_GUARD_CM_GUARD_RECORDS_H

#include <stdatomic.h>
#include <stdint.h>

#define UV_CM_GUARD_SLOTS 1024          /* one per CM ID slot */
#define UV_CM_GUARD_MAD_LEN 256         /* a MAD (IBTA 13.4.2) */
#define UV_CM_GUARD_MAGIC 0x676d6375u   /* "ucmg" */
#define UV_CM_GUARD_VERSION 2

/* The guardian's file descriptors, set up by posix_spawn's file actions:
 *  - a pidfd of the process (pidfd_open(2)): readable once the process has exited;
 *  - the records' memfd;
 *  - the read end of a pipe whose write end only the process holds, close-on-exec: it
 *    hangs up when the process execs another program, as the rdma_cm file of Linux's
 *    librdmacm, opened O_CLOEXEC, closes at exec and its connections end.  A hang-up
 *    counts as an exec only when the process no longer maps the records (a stray
 *    close of the write end by the application ends nothing). */
#define UV_CM_GUARD_FD_PIDFD 3
#define UV_CM_GUARD_FD_AREA 4
#define UV_CM_GUARD_FD_LIFE 5

/* One record, a seqlock: seq is odd while the process writes it, and a record found
 * odd (the process died mid-write) is not sent. */
struct uv_cm_guard_rec {
	_Atomic uint32_t seq;
	uint32_t armed;
	uint32_t src_ip, dst_ip;        /* IPv4, host order: the NIC's and the peer's */
	uint8_t mad[UV_CM_GUARD_MAD_LEN];
};

struct uv_cm_guard_area {
	uint32_t magic, version, slots, rec_size;
	_Atomic int32_t guard_pid;      /* the guardian's process ID, written by its first half */
	int32_t app_pid;                /* the process it watches, written before the start */
	struct uv_cm_guard_rec rec[UV_CM_GUARD_SLOTS];
};

#endif
