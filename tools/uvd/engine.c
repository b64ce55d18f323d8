/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Engines (uvd without -R, on the emulated device): each client runs the emulated NIC's data plane in its own engine
 * (hw/emu/engine.c).  The daemon keeps the control path and every number; for each
 * client it binds a UDP socket on an address of its own, next to the device's, and
 * hands it over (ENGINE).  The client's engine sends its QPs' packets from that socket
 * and receives theirs on it, so the kernel delivers each client only its own traffic
 * and no daemon thread stands between a doorbell or a packet and the client.
 *
 * Addresses: the device's /24, last byte 128 to 254 (skipping the device's own), the
 * first one nobody has bound on port 4791: the kernel's bind is the arbiter between
 * daemons and any other emulated device on the machine, as for emulated devices
 * themselves (hw/emu/netaddr.c).  A client's address is free again when its socket
 * closes, at its exit at the latest.  One process holds at most 16 (one per open of
 * the device), so that it cannot take the addresses of all others.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "firmware-cmd/prm.h"
#include "hw/emu/emu.h"
#include "hw/platform/sock.h"
#include "tools/uvd/uvd.h"

#define UVD_ENGINE_FIRST 128u
#define UVD_ENGINE_LAST 254u
#define UVD_ENGINES_PER_PROCESS 16u

int uvd_engine_new(struct uvd_client *c, struct uvd_engine_rep *r, char opts[UVD_ENGINE_OPTS_MAX], int *fd,
		   char *msg, size_t msglen)
{
	struct emu_dev *emu = emu_device_from_shim(c->srv->shim);
	int rc = -EADDRNOTAVAIL;

	*fd = -1;
	if (!c->srv->engines || !emu) {
		snprintf(msg, msglen, "this daemon performs its clients' data plane itself (-R, or not an emulated device)");
		return -EOPNOTSUPP;
	}
	if (c->engine_ipv4) {
		snprintf(msg, msglen, "an engine was handed over already");
		return -EBUSY;
	}
	/* a process may open the device several times (one connection each), but not take
	 * every address of the /24 from the other clients (device lock held: the list) */
	unsigned mine = 0;
	for (const struct uvd_client *o = c->srv->clients; o; o = o->next)
		mine += o != c && !o->dead && o->pid == c->pid && o->engine_ipv4;
	if (mine >= UVD_ENGINES_PER_PROCESS) {
		snprintf(msg, msglen, "process %d holds %u engines already, the most one process may", (int)c->pid,
			 mine);
		return -ENOSPC;
	}
	/* the engine is this device's data plane in the client: the same faults and hold */
	int olen = emu_dataplane_opts(emu, opts, UVD_ENGINE_OPTS_MAX);
	if (olen < 0) {
		snprintf(msg, msglen, "the device's data-plane options do not fit the ENGINE reply (%u bytes)",
			 UVD_ENGINE_OPTS_MAX);
		return olen;
	}
	r->opts_len = (uint32_t)olen;
	uint32_t dev = emu_ipv4(emu);
	for (uint32_t last = UVD_ENGINE_FIRST; last <= UVD_ENGINE_LAST; last++) {
		uint32_t a = (dev & ~0xffu) | last;
		if (a == dev)
			continue;
		int s = plat_socket(AF_INET, SOCK_DGRAM, 0);
		if (s < 0)
			return s;
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(EMU_ROCE_UDP_PORT),
					  .sin_addr.s_addr = htonl(a) };
		if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			*fd = s;
			c->engine_ipv4 = a;
			r->ipv4 = a;
			return 0;
		}
		rc = -errno;
		close(s);
		if (rc != -EADDRINUSE)
			break;
	}
	snprintf(msg, msglen, "no free address for the client's engine next to %u.%u.%u.%u: %s", dev >> 24,
		 (dev >> 16) & 0xff, (dev >> 8) & 0xff, dev & 0xff, strerror(-rc));
	return rc;
}

/* SET_ROCE_ADDRESS of an engine's client: its GID table is its engine's (the
 * link-local GID of its MAC, its address), which sends from the socket bound to its
 * own address whatever the table says; the daemon's device keeps its own table. */
bool uvd_engine_gid_own(const struct uvd_client *c, size_t inlen)
{
	return c->engine_ipv4 && inlen >= PRM_SIZE(set_roce_address_in);
}
