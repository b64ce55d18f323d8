/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Several emulated devices: one process, distinct RoCE addresses; an address another
 * process holds (a bound UDP socket on :4791) is skipped. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <stdio.h>
#include <unistd.h>

#include "tests/emu/emu_test.h"

Test(emu_multi, two_devices_in_one_process_get_different_addresses)
{
	struct shim_dev *a, *b;
	char err[256];

	cr_assert_eq(shim_open("emu:", &a, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(shim_open("emu:", &b, err, sizeof(err)), 0, "%s", err);
	uint32_t ia = emu_ipv4(emu_device_from_shim(a)), ib = emu_ipv4(emu_device_from_shim(b));
	cr_assert_neq(ia, ib);
	cr_assert_eq(ia >> 8, 0x7f0000);
	cr_assert_eq(ib >> 8, 0x7f0000);
	cr_assert_geq(emu_udp_fd(emu_device_from_shim(a)), 0);
	cr_assert_neq(strcmp(a->pci.bdf, b->pci.bdf), 0);
	shim_close(a);
	shim_close(b);
}

Test(emu_multi, explicit_address_already_used_is_refused)
{
	struct shim_dev *a, *b = NULL;
	char err[256];

	char uri[64], ip[32];
	int n, rc = -1;

	/* An address nobody else on the machine holds right now. */
	for (n = 201; n < 250 && rc != 0; n++) {
		snprintf(uri, sizeof(uri), "emu:ip=127.0.0.%d", n);
		rc = shim_open(uri, &a, err, sizeof(err));
	}
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_eq(shim_open(uri, &b, err, sizeof(err)), -EADDRINUSE);
	snprintf(ip, sizeof(ip), "127.0.0.%d", n - 1);
	cr_assert_not_null(strstr(err, ip), "%s", err);
	shim_close(a);
}

Test(emu_multi, address_bound_by_another_process_is_skipped)
{
	struct shim_dev *a, *b;
	char err[256];
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(4791) };
	int s;

	cr_assert_eq(shim_open("emu:", &a, err, sizeof(err)), 0, "%s", err);
	uint32_t ia = emu_ipv4(emu_device_from_shim(a));
	/* Hold the next free address as another process would (other test programs may
	 * hold some addresses already: take the first one we can bind). */
	s = socket(AF_INET, SOCK_DGRAM, 0);
	uint32_t held = ia + 1;
	for (; held < 0x7f0000fe; held++) {
		sa.sin_addr.s_addr = htonl(held);
		if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
	}
	cr_assert_lt(held, 0x7f0000fe, "no free loopback address to hold");
	cr_assert_eq(shim_open("emu:", &b, err, sizeof(err)), 0, "%s", err);
	uint32_t ib = emu_ipv4(emu_device_from_shim(b));
	cr_assert_neq(ib, ia);
	cr_assert_neq(ib, held, "the address held elsewhere was skipped");
	close(s);
	shim_close(a);
	shim_close(b);
}

Test(emu_multi, devices_bring_up_independently)
{
	struct et a, b;
	struct emu_counters ca, cb;

	et_open(&a, "emu:");
	et_open(&b, "emu:page=16k,iova=scatter");
	et_bringup(&a);
	et_bringup(&b);
	et_alloc_uar(&a);
	emu_counters(a.emu, &ca);
	emu_counters(b.emu, &cb);
	cr_assert_eq(ca.objects_live[EMU_OBJ_UAR], 1);
	cr_assert_eq(cb.objects_live[EMU_OBJ_UAR], 0);
	et_teardown(&b);
	et_close(&b);
	et_close(&a);
}

/* Two processes, each opening its first device with no shared state: the kernel's
 * bind arbitration on :4791 keeps their addresses apart. */
Test(emu_multi, devices_in_two_processes_get_different_addresses)
{
	int to_parent[2], to_child[2];
	pid_t pid;
	uint32_t child_ip = 0;
	struct shim_dev *a;
	char err[256], c = 0;

	cr_assert_eq(pipe(to_parent), 0);
	cr_assert_eq(pipe(to_child), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct shim_dev *d;
		uint32_t ip = 0;

		if (shim_open("emu:", &d, err, sizeof(err)) == 0)
			ip = emu_ipv4(emu_device_from_shim(d));
		if (write(to_parent[1], &ip, sizeof(ip)) != sizeof(ip) || read(to_child[0], &c, 1) != 1)
			_exit(2);
		_exit(ip ? 0 : 1);
	}
	cr_assert_eq(read(to_parent[0], &child_ip, sizeof(child_ip)), sizeof(child_ip));
	cr_assert_neq(child_ip, 0, "child could not open a device");
	cr_assert_eq(shim_open("emu:", &a, err, sizeof(err)), 0, "%s", err);
	cr_assert_neq(emu_ipv4(emu_device_from_shim(a)), child_ip);
	shim_close(a);
	cr_assert_eq(write(to_child[1], &c, 1), 1);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The function name carries the whole address: peers derive the GID from it. */
Test(emu_multi, a_long_address_is_named_whole)
{
	struct shim_dev *a = NULL;
	char err[256];
	int rc = shim_open("emu:ip=127.0.177.250", &a, err, sizeof(err));

	if (rc == -EADDRINUSE)
		cr_skip_test("127.0.177.250:4791 is held by another program");
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_str_eq(a->pci.bdf, "emu:127.0.177.250");
	shim_close(a);
}
