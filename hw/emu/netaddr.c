/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Loopback RoCE addresses: one per emulated device, process-wide registry plus the
 * kernel's own arbitration (bind without SO_REUSEADDR fails if another process holds
 * addr:4791), so devices in several processes never share an address. */
#include "hw/emu/netaddr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hw/emu/emu.h"
#include "hw/emu/roce_wire.h"
#include "hw/platform/sock.h"

static pthread_mutex_t emu_net_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t emu_net_used[256];    /* 127.0.0.N claimed in this process */

static int emu_net_bind(uint32_t ipv4, int *fd)
{
	struct sockaddr_in sa;
	int s = plat_socket(AF_INET, SOCK_DGRAM, 0);

	if (s < 0)
		return s;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(EMU_ROCE_UDP_PORT);
	sa.sin_addr.s_addr = htonl(ipv4);
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int rc = -errno;

		close(s);
		return rc;
	}
	*fd = s;
	return 0;
}

int emu_net_claim(uint32_t want, uint32_t *ipv4, int *fd, char *err, size_t errlen)
{
	int rc = -EADDRNOTAVAIL;

	pthread_mutex_lock(&emu_net_lock);
	if (want) {
		if ((want >> 8) == 0x7f0000 && emu_net_used[want & 0xff]) {
			rc = -EADDRINUSE;
		} else {
			rc = emu_net_bind(want, fd);
			if (rc == 0) {
				*ipv4 = want;
				if ((want >> 8) == 0x7f0000)
					emu_net_used[want & 0xff] = 1;
			}
		}
		if (rc < 0 && err)
			snprintf(err, errlen, "emu: cannot use %u.%u.%u.%u:%d for RoCE: %s", want >> 24, (want >> 16) & 0xff,
				 (want >> 8) & 0xff, want & 0xff, EMU_ROCE_UDP_PORT, strerror(-rc));
	} else {
		for (unsigned n = 2; n < 255; n++) {
			uint32_t a = 0x7f000000u | n;

			if (emu_net_used[n])
				continue;
			rc = emu_net_bind(a, fd);
			if (rc == 0) {
				emu_net_used[n] = 1;
				*ipv4 = a;
				break;
			}
		}
		if (rc < 0 && err)
			snprintf(err, errlen, "emu: no free 127.0.0.N:%d for RoCE (%s)", EMU_ROCE_UDP_PORT, strerror(-rc));
	}
	pthread_mutex_unlock(&emu_net_lock);
	return rc;
}

void emu_net_release(uint32_t ipv4, int fd)
{
	pthread_mutex_lock(&emu_net_lock);
	if (fd >= 0)
		close(fd);
	if ((ipv4 >> 8) == 0x7f0000)
		emu_net_used[ipv4 & 0xff] = 0;
	pthread_mutex_unlock(&emu_net_lock);
}

int emu_neigh(uint32_t ipv4, uint8_t mac[6])
{
	if ((ipv4 >> 24) != 127)
		return -ENOENT;
	emu_roce_mac_from_ipv4(ipv4, mac);
	return 0;
}

uint32_t emu_mac_ipv4(const uint8_t mac[6])
{
	uint32_t ipv4 = (uint32_t)mac[2] << 24 | (uint32_t)mac[3] << 16 | (uint32_t)mac[4] << 8 | mac[5];

	if (mac[0] != 0x02 || mac[1] != 0x00 || (ipv4 >> 24) != 127)
		return 0;
	return ipv4;
}
