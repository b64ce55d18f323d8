/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* UVERBS_PORT_MTU and a device this process does not own (uverbs/port_mtu.c): a client
 * of the device daemon (tools/uvd) is attached to a port the daemon brought up, so the
 * variable leaves that port alone: the open succeeds and the port keeps the daemon's
 * MTU.  The daemon is $UVD_BIN, started here on 127.84.1.1. */
#include "tests/uvd/uvd_daemon.h"

static struct uvd_daemon dmn = { .pid = -1 };

static void setup(void)
{
	close(uvd_daemon_start(&dmn, "port-mtu", "127.84.1.1"));
}

static void teardown(void)
{
	unsetenv("UVERBS_PORT_MTU");
	uvd_daemon_stop(&dmn);
}

TestSuite(uvd_port_mtu, .init = setup, .fini = teardown, .timeout = 60);

Test(uvd_port_mtu, a_client_of_the_daemon_opens_and_keeps_the_daemons_port_mtu)
{
	char uri[120];
	struct ibv_port_attr pa;

	setenv("UVERBS_PORT_MTU", "9000", 1);
	snprintf(uri, sizeof(uri), "uvd:%s", dmn.sock);
	ut_devices(uri);
	struct ibv_context *c = ut_open(0);
	cr_assert_eq(ibv_query_port(c, 1, &pa), 0);
	cr_assert_eq(pa.active_mtu, IBV_MTU_1024, "active_mtu %d: the client changed the daemon's port",
		     pa.active_mtu);
	cr_assert_eq(ibv_close_device(c), 0);
	ibv_free_device_list(ut_list);
}
