/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* UVERBS_PORT_MTU: the port MTU a process sets when it brings a device up.
 *
 * On Linux the port MTU follows the netdev (`ip link set dev ethN mtu 9000`, which mlx5e
 * turns into a PMTU write), and RoCE's active_mtu follows the port MTU (Linux
 * include/rdma/ib_addr.h iboe_get_mtu).  A Mac has no netdev for the card and the
 * emulated device none at all, so the port keeps the firmware's 1500-byte default and
 * every RC QP is limited to a 1024-byte path MTU unless the user says otherwise here:
 * UVERBS_PORT_MTU=9000 gives active_mtu 4096, as jumbo frames do on Linux.  The value
 * is the netdev MTU in bytes (what `ip link` takes), for every device the process
 * opens; a device the process does not own keeps its daemon's: one hw/mlx5 attached to
 * (mx5_attach, because its shim runs commands in a device daemon, tools/uvd) rather
 * than brought up, whatever its URI says (mx5_device_is_remote). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "uverbs/uv.h"

int uv_port_mtu_apply(struct uv_dev *d, char *why, size_t why_len)
{
	const char *s = getenv("UVERBS_PORT_MTU");
	if (!s || !*s)
		return 0;
	char *end = NULL;
	errno = 0;
	unsigned long mtu = strtoul(s, &end, 10);
	if (errno || *end || end == s || mtu > 65535 || *s == '-' || *s == '+') {
		snprintf(why, why_len, "UVERBS_PORT_MTU=%s: expected the port's MTU in bytes, such as 9000", s);
		return -EINVAL;
	}
	if (mx5_device_is_remote(d->mx5)) {
		uv_log(UV_LOG_WARN, "%s: UVERBS_PORT_MTU=%s ignored: the daemon behind %s owns the port",
		       d->ibdev.name, s, d->uri);
		return 0;
	}
	int rc = mx5_port_set_mtu(d->mx5, 1, (unsigned)mtu);
	if (rc)
		snprintf(why, why_len, "UVERBS_PORT_MTU=%s: %s", s, mx5_device_error(d->mx5));
	return rc;
}
