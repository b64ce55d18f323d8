/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The CM's last words: what a process's connections say to their peers when the
 * process is gone, however it went (docs/architecture.md, "The connection manager").
 *
 * On Linux a killed process's connections end on the wire all the same: the kernel
 * closes its rdma_cm file (ucma_close) and its CM sends a DREQ for each connection
 * (drivers/infiniband/core/cm.c, cm_destroy_id; IBTA 12.9.6), so an idle peer gets
 * DISCONNECTED at once.  Our CM lives in the process and dies with it.  So the CM keeps,
 * for each connection, the one MAD that would end it (a DREQ, or the DREP a received
 * DREQ still waits for) in memory shared with a guardian program (uverbs-cm-guard,
 * uverbs/guard/), which sleeps until the process has exited or exec'd another program
 * and then sends what is left there, from the emulated NIC's address, as the RoCE v2
 * datagrams the NIC would have sent.
 *
 * The guardian serves devices whose address this host owns (the emulated NIC, also
 * when shared through uvd); none is started when no agent's address can be bound.  The
 * records are a seqlock each: one written while the process died is skipped.
 */
#ifndef UVERBS_RDMA_CM_GUARD_H
#define UVERBS_RDMA_CM_GUARD_H

#include <stddef.h>
#include <stdint.h>

#include "uverbs/guard/cm_guard_records.h"   /* UV_CM_GUARD_SLOTS, UV_CM_GUARD_MAD_LEN */

/* Starts the guardian for a process whose agents have these IPv4 addresses (host
 * order).  0 when one watches (also when it already did), -EADDRNOTAVAIL when no
 * address is this host's, -ENOENT when the program is nowhere to be found, else a
 * negative errno, with what went wrong in why; with no guardian the arm/disarm calls
 * do nothing. */
int rcm_guard_start(const uint32_t *ips, unsigned n, char *why, size_t why_len);

/* Slot `slot`'s last word: a MAD for QP 1 at dst_ip, sent from src_ip (host order). */
void rcm_guard_arm(unsigned slot, uint32_t src_ip, uint32_t dst_ip, const uint8_t mad[UV_CM_GUARD_MAD_LEN]);
void rcm_guard_disarm(unsigned slot);

/* In a child of fork(): its parent's guardian watches the parent, not the child, and
 * the records are the parent's; the child lets go of them (and of its copy of the
 * pipe the guardian watches). */
void rcm_guard_forget(void);

/* The guardian's process ID (0: none), for logs and tests. */
int rcm_guard_pid(void);

#endif
