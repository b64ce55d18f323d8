/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvperf: the client's test runner and the server's session loop (run.c). */
#ifndef UVERBS_TOOLS_UVPERF_RUN_H
#define UVERBS_TOOLS_UVPERF_RUN_H

#include "tools/uvperf/uvperf.h"

struct up_client {
	int fd;
	struct up_ep ep;
	struct up_qpinfo remote[UP_MAX_QPS];
	struct up_hello_ack peer;
	unsigned timeout_ms;        /* longest wait for one completion */
	int progress;               /* draw a progress bar on stderr */
	double duration_s;          /* bandwidth: run each size this long (0: by count) */
	uint64_t corrupt;           /* hidden test option; UINT64_MAX none */
	int verify;
	uint32_t test_rkey_xor;     /* hidden test option: spoil the rkey (a completion error) */
	uint64_t alive_ns;          /* when the last UP_M_ALIVE went to the server */
};

/* Session set-up: our endpoint is created by the caller; exchange HELLO and QPINFO and
 * connect.  hello carries the session's shape. */
int up_client_start(struct up_client *c, const struct up_hello *hello, char *err, size_t errlen);
/* Run one test; r is filled (samples allocated for latency).  Returns 0, or a negative
 * errno with err set; a verification failure returns -EBADMSG with r->verify_text. */
int up_client_test(struct up_client *c, const struct up_test *t, struct up_result *r,
		   char *err, size_t errlen);
void up_client_stop(struct up_client *c);

/* How often the client says UP_M_ALIVE during a test, so that a server's idle timeout
 * (--idle-timeout, at least 1 s) only ever ends a session whose client went quiet. */
#define UP_ALIVE_NS 250000000ull

/* Serve one session on fd with verbs device `index`.  Returns 0 or a negative errno;
 * -ENOTCONN when the peer never sent a HELLO (closed, went quiet or is no uvperf). */
int up_server_session(int fd, int index, int quiet, char *err, size_t errlen);

/* The URI of verbs device `index` as UVERBS_DEVICES lists it. */
void up_device_uri(int index, char *buf, size_t len);

/* nanoseconds, CLOCK_MONOTONIC */
uint64_t up_now_ns(void);

#endif
