/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RoCE addresses of the emulated devices (docs/architecture.md, "RoCE addressing"): each device owns a
 * loopback address 127.0.0.N and a UDP socket bound to it on port 4791. */
#ifndef UVERBS_HW_EMU_NETADDR_H
#define UVERBS_HW_EMU_NETADDR_H

#include <stddef.h>
#include <stdint.h>

/* Claim `want` (host order; 0: the first free 127.0.0.N, N from 2) for this process and
 * bind a UDP socket on it, port 4791.  "Free" means: not claimed by another emulated
 * device of this process, and the bind succeeds (no other process holds it). */
int emu_net_claim(uint32_t want, uint32_t *ipv4, int *fd, char *err, size_t errlen);
void emu_net_release(uint32_t ipv4, int fd);

#endif
