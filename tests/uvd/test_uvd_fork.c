/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A child of fork() whose parent holds the device open, as pyverbs' rdma_cm multicast
 * tests do (tests/utils.py requires_mcast_support keeps a Context across the fork of
 * the two sides): the parent's context stays unusable in the child (EPERM,
 * ibv_fork_init(3)), but the child's own ibv_open_device brings the device up anew as a
 * client of its own (uverbs/device.c uv_dev_forget_parent), as a child's open of
 * /dev/infiniband/uverbsN does on Linux; the parent goes on.  The daemon is $UVD_BIN
 * with -R, started here on 127.84.2.1. */
#include <errno.h>
#include <sys/wait.h>

#include "tests/uvd/uvd_daemon.h"

static struct uvd_daemon dmn = { .pid = -1, .opt = "-R" };

static void setup(void)
{
	close(uvd_daemon_start(&dmn, "fork", "127.84.2.1"));
}

static void teardown(void)
{
	uvd_daemon_stop(&dmn);
}

TestSuite(uvd_fork, .init = setup, .fini = teardown, .timeout = 60);

/* the child's steps; its exit code names the first that went wrong */
static int child(struct ibv_context *parents)
{
	struct ibv_port_attr pa;

	errno = 0;
	if (ibv_alloc_pd(parents) || errno != EPERM)
		return 2;
	struct ibv_context *own = ibv_open_device(ut_list[0]);
	if (!own)
		return 3;
	if (ibv_query_port(own, 1, &pa) || pa.state != IBV_PORT_ACTIVE)
		return 4;
	struct ibv_pd *pd = ibv_alloc_pd(own);
	struct ibv_cq *cq = ibv_create_cq(own, 16, NULL, NULL, 0);
	if (!pd || !cq)
		return 5;
	if (ibv_destroy_cq(cq) || ibv_dealloc_pd(pd) || ibv_close_device(own))
		return 6;
	/* the parent's context is its parent's to close: nothing happens here */
	if (ibv_close_device(parents))
		return 7;
	return 0;
}

Test(uvd_fork, a_child_opens_its_own_device_while_the_parent_holds_it)
{
	char uri[120];

	snprintf(uri, sizeof(uri), "uvd:%s", dmn.sock);
	ut_devices(uri);
	struct ibv_context *c = ut_open(0);
	pid_t p = fork();
	cr_assert_geq(p, 0);
	if (p == 0)
		_exit(child(c));
	int st = 0;
	cr_assert_eq(waitpid(p, &st, 0), p);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child failed at step %d (status 0x%x)",
		  WIFEXITED(st) ? WEXITSTATUS(st) : -1, st);
	struct ibv_pd *pd = ibv_alloc_pd(c);
	cr_assert_not_null(pd, "the parent after the child: %s", strerror(errno));
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(c), 0);
	ibv_free_device_list(ut_list);
}
