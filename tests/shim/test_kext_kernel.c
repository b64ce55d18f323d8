/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The kext's guests across real processes: the IOKit stand-in's kernel in a process of
 * its own (shim-kext/standin/kerneld.c), an owner task and a guest task that reach it
 * as on a Mac.  A granted UAR page that the guest maps is the very BAR page the owner
 * sees (shared memory, as IOKit maps a BAR), and each revocation (the guest's own
 * UNMAP_BAR, the owner's REVOKE, the owner's death) takes the guest's mapping away
 * before it returns: the guest then reads zeroes, its stores no longer reach the BAR,
 * and the kernel refuses the BAR hook's messages through the window
 * (shim-kext/core/guest.c, the rules; kernel_proto.h, how the stand-in keeps them).
 *
 * The daemon is $UVSHIM_KERNELD (set by CMake); each test starts its own on a socket
 * and address of its own, and every child has an alarm. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <IOKit/IOKitLib.h>

#include "shim-kext/include/uvshim_abi.h"
#include "shim-kext/standin/kernel_proto.h"
#include "shim-kext/standin/standin.h"

#define MARK_OFF 0x100u           /* where in the granted page the tests store */

static pid_t g_kerneld;
static char g_sock[108];

static void kerneld_start(unsigned ip_last)
{
	const char *bin = getenv("UVSHIM_KERNELD");
	char env[64];

	cr_assert(bin && access(bin, X_OK) == 0, "UVSHIM_KERNELD not set or not executable: build uvshim-kerneld");
	snprintf(g_sock, sizeof(g_sock), "/tmp/uvshim-kerneld-%d.sock", (int)getpid());
	snprintf(env, sizeof(env), "ip=127.0.%u.%u", 180 + (unsigned)getpid() % 40, ip_last);
	g_kerneld = fork();
	cr_assert_geq(g_kerneld, 0);
	if (g_kerneld == 0) {
		setenv("UVERBS_KEXT_STANDIN", env, 1);
		alarm(60);
		execl(bin, bin, "-s", g_sock, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 400; i++) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", g_sock);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(fd);
			setenv("UVERBS_KEXT_STANDIN_KERNEL", g_sock, 1);
			return;
		}
		close(fd);
		usleep(25000);
	}
	cr_assert_fail("uvshim-kerneld did not come up on %s", g_sock);
}

static void kerneld_stop(void)
{
	if (g_kerneld > 0) {
		kill(g_kerneld, SIGKILL);
		waitpid(g_kerneld, NULL, 0);
	}
	unlink(g_sock);
}

/* The kernel's counters (kernel_proto.h SK_STATS), through a task of its own. */
static struct sk_stats stats(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0), sv[2];
	struct sk_msg m = { .len = sizeof(m), .op = SK_HELLO, .a = SK_VERSION };
	struct sk_stats s;
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", g_sock);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	memset(cbuf, 0, sizeof(cbuf));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &sv[1], sizeof(int));
	cr_assert_eq(sendmsg(fd, &mh, 0), (ssize_t)sizeof(m));
	cr_assert_eq(recv(fd, &m, sizeof(m), 0), (ssize_t)sizeof(m));
	m = (struct sk_msg){ .len = sizeof(m), .op = SK_STATS };
	cr_assert_eq(send(fd, &m, sizeof(m), 0), (ssize_t)sizeof(m));
	cr_assert_eq(recv(fd, &s, sizeof(s), 0), (ssize_t)sizeof(s));
	close(fd);
	close(sv[0]);
	close(sv[1]);
	return s;
}

/* ---- one task's connection ---- */

struct conn {
	io_service_t svc;
	io_connect_t c;
	struct uvshim_info_rep info;
};

static IOReturn call(struct conn *k, uint32_t sel, const void *in, size_t inlen, void *out, size_t outlen)
{
	size_t n = outlen;

	return IOConnectCallStructMethod(k->c, sel, in, inlen, out, outlen ? &n : NULL);
}

static IOReturn conn_open(struct conn *k, uint32_t type)
{
	io_iterator_t it;
	struct uvshim_hello_req h = { .abi_major = UVSHIM_ABI_MAJOR, .abi_minor = UVSHIM_ABI_MINOR };
	struct uvshim_hello_rep hr;
	struct uvshim_info_req ir = { 0, 0 };
	IOReturn r;

	memset(k, 0, sizeof(*k));
	if (IOServiceGetMatchingServices(MACH_PORT_NULL, IOServiceMatching(UVSHIM_SERVICE_CLASS), &it))
		return kIOReturnNoDevice;
	k->svc = IOIteratorNext(it);
	IOObjectRelease(it);
	if (!k->svc)
		return kIOReturnNoDevice;
	r = IOServiceOpen(k->svc, mach_task_self(), type, &k->c);
	if (r == KERN_SUCCESS)
		r = call(k, UVSHIM_SEL_HELLO, &h, sizeof(h), &hr, sizeof(hr));
	if (r == KERN_SUCCESS)
		r = call(k, UVSHIM_SEL_DEVICE_INFO, &ir, sizeof(ir), &k->info, sizeof(k->info));
	return r;
}

/* Declare and map the host page `index` of the UAR region (a guest: write-combining). */
static IOReturn map_page(struct conn *k, uint32_t index, uint32_t *type, volatile uint8_t **va)
{
	struct uvshim_map_bar_req q = { .bar = 0, .cache = UVSHIM_CACHE_WC,
					.offset = k->info.uar_offset + (uint64_t)index * k->info.page_size,
					.length = k->info.page_size };
	struct uvshim_map_bar_rep r;
	mach_vm_address_t a = 0;
	mach_vm_size_t sz = 0;
	IOReturn kr = call(k, UVSHIM_SEL_MAP_BAR, &q, sizeof(q), &r, sizeof(r));

	if (kr)
		return kr;
	*type = r.memory_type;
	kr = IOConnectMapMemory64(k->c, r.memory_type, mach_task_self(), &a, &sz,
				  kIOMapAnywhere | kIOMapWriteCombineCache);
	*va = (volatile uint8_t *)(uintptr_t)a;
	return kr;
}

/* The owner's view: all of BAR0, uncached. */
static volatile uint8_t *map_bar0(struct conn *k)
{
	struct uvshim_map_bar_req q = { .bar = 0, .cache = UVSHIM_CACHE_UNCACHED, .offset = 0,
					.length = k->info.bar0_len };
	struct uvshim_map_bar_rep r;
	mach_vm_address_t a = 0;
	mach_vm_size_t sz = 0;

	cr_assert_eq(call(k, UVSHIM_SEL_MAP_BAR, &q, sizeof(q), &r, sizeof(r)), KERN_SUCCESS);
	cr_assert_eq(IOConnectMapMemory64(k->c, r.memory_type, mach_task_self(), &a, &sz,
					  kIOMapAnywhere | kIOMapInhibitCache), KERN_SUCCESS);
	return (volatile uint8_t *)(uintptr_t)a;
}

static IOReturn grant(struct conn *k, uint32_t sel, pid_t pid, uint32_t index)
{
	struct uvshim_grant_req g = { .pid = (uint32_t)pid, .uar_index = index };

	return call(k, sel, &g, sizeof(g), NULL, 0);
}

static volatile uint64_t *mark(volatile uint8_t *page)
{
	return (volatile uint64_t *)(volatile void *)(page + MARK_OFF);
}

/* ---- a child, driven one step at a time over a pipe pair ---- */

struct child {
	pid_t pid;
	int to, from;
};

static void child_start(struct child *ch, void (*fn)(int in, int out))
{
	int a[2], b[2];

	cr_assert_eq(pipe(a), 0);
	cr_assert_eq(pipe(b), 0);
	ch->pid = fork();
	cr_assert_geq(ch->pid, 0);
	if (ch->pid == 0) {
		close(a[1]);
		close(b[0]);
		alarm(30);
		fn(a[0], b[1]);
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	ch->to = a[1];
	ch->from = b[0];
}

static void put(int fd, uint64_t v)
{
	if (write(fd, &v, sizeof(v)) != sizeof(v))
		_exit(3);
}

static uint64_t get(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return UINT64_MAX;
	return v;
}

static int child_end(struct child *ch)
{
	int st = 0;

	close(ch->to);
	close(ch->from);
	waitpid(ch->pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The guest: open, map the page granted to it, store A; then on each step report what
 * its mapping reads, store the value it is sent and send the BAR hook's message. */
enum { G_UNMAP_BAR = 1, G_STORE = 2, G_INFO = 3 };

static void guest_main(int in, int out)
{
	struct conn k;
	uint32_t type = 0;
	volatile uint8_t *page = NULL;
	IOReturn r;

	if (get(in) != 0)   /* granted */
		_exit(4);
	r = conn_open(&k, UVSHIM_CLIENT_TYPE_GUEST);
	if (r == KERN_SUCCESS)
		r = map_page(&k, 0, &type, &page);
	put(out, (uint64_t)(uint32_t)r);
	if (r)
		_exit(5);
	*mark(page) = 0xa11ce;
	uvshim_standin_mmio(k.c, 1, k.info.uar_offset + MARK_OFF, 8);
	put(out, *mark(page));
	for (;;) {
		uint64_t step = get(in), v;
		switch (step) {
		case G_UNMAP_BAR: {
			/* The guest's own UNMAP_BAR, while its mapping is still there. */
			struct uvshim_unmap_bar_req u = { .memory_type = type };
			put(out, (uint64_t)(uint32_t)call(&k, UVSHIM_SEL_UNMAP_BAR, &u, sizeof(u), NULL, 0));
			break;
		}
		case G_STORE:
			v = get(in);
			put(out, *mark(page));       /* what it reads before the store */
			*mark(page) = v;
			uvshim_standin_mmio(k.c, 1, k.info.uar_offset + MARK_OFF, 8);
			put(out, 0);
			break;
		case G_INFO: {
			struct uvshim_info_req ir = { 0, 0 };
			struct uvshim_info_rep info;
			put(out, (uint64_t)(uint32_t)call(&k, UVSHIM_SEL_DEVICE_INFO, &ir, sizeof(ir), &info, sizeof(info)));
			break;
		}
		default:
			IOServiceClose(k.c);
			IOObjectRelease(k.svc);
			return;
		}
	}
}

/* The owner (test process) grants page 0 to a guest child and sees its store land. */
static void owner_and_guest(struct conn *k, volatile uint8_t **bar, struct child *g)
{
	cr_assert_eq(conn_open(k, UVSHIM_CLIENT_TYPE), KERN_SUCCESS);
	*bar = map_bar0(k);
	child_start(g, guest_main);
	cr_assert_eq(grant(k, UVSHIM_SEL_GRANT, g->pid, 0), KERN_SUCCESS);
	put(g->to, 0);
	cr_assert_eq(get(g->from), KERN_SUCCESS, "the guest opens and maps its granted page");
	cr_assert_eq(get(g->from), 0xa11ce);
	/* One page, two tasks: the store is in the BAR the owner maps. */
	cr_assert_eq(*(volatile uint64_t *)(volatile void *)(*bar + k->info.uar_offset + MARK_OFF), 0xa11ce);
}

/* The guest stores v after a revocation: it read zeroes (its mapping was redirected
 * before the revoking call returned), the BAR still holds `held`, and the kernel
 * refused the BAR hook's message. */
static void expect_revoked(struct conn *k, volatile uint8_t *bar, struct child *g, uint64_t held)
{
	uint64_t refused = stats().mmio_refused;

	put(g->to, G_STORE);
	put(g->to, 0xbadbad);
	cr_assert_eq(get(g->from), 0, "the revoked mapping reads zeroes (redirected)");
	cr_assert_eq(get(g->from), 0);
	cr_assert_eq(*(volatile uint64_t *)(volatile void *)(bar + k->info.uar_offset + MARK_OFF), held,
		     "a store through a revoked mapping never reaches the BAR");
	cr_assert_eq(stats().mmio_refused, refused + 1, "the kernel refuses the hook's message through it");
}

Test(kext_kernel, a_guests_unmap_bar_takes_its_mapping_away_at_once, .timeout = 60)
{
	struct conn k;
	struct child g;
	volatile uint8_t *bar;

	kerneld_start(1);
	owner_and_guest(&k, &bar, &g);
	put(g.to, G_UNMAP_BAR);
	cr_assert_eq(get(g.from), KERN_SUCCESS);
	expect_revoked(&k, bar, &g, 0xa11ce);
	put(g.to, 99);
	cr_assert_eq(child_end(&g), 0);
	IOServiceClose(k.c);
	kerneld_stop();
}

Test(kext_kernel, the_owners_revoke_takes_the_guests_mapping_before_it_returns, .timeout = 60)
{
	struct conn k;
	struct child g;
	volatile uint8_t *bar;

	kerneld_start(2);
	owner_and_guest(&k, &bar, &g);
	/* Before: the guest's stores act (the hook's message is taken). */
	uint64_t guest_mmio = stats().mmio_guest;
	put(g.to, G_STORE);
	put(g.to, 0xb0b);
	cr_assert_eq(get(g.from), 0xa11ce);
	cr_assert_eq(get(g.from), 0);
	cr_assert_eq(*(volatile uint64_t *)(volatile void *)(bar + k.info.uar_offset + MARK_OFF), 0xb0b);
	cr_assert_eq(stats().mmio_guest, guest_mmio + 1);
	struct sk_stats before = stats();
	cr_assert_eq(grant(&k, UVSHIM_SEL_REVOKE, g.pid, 0), KERN_SUCCESS);
	struct sk_stats after = stats();
	cr_assert_eq(after.revokes_acked, before.revokes_acked + 1, "the guest's task confirmed the redirect");
	expect_revoked(&k, bar, &g, 0xb0b);
	put(g.to, 99);
	cr_assert_eq(child_end(&g), 0);
	IOServiceClose(k.c);
	kerneld_stop();
}

/* The owner is the child here; the test process is the guest. */
static void owner_main(int in, int out)
{
	struct conn k;
	pid_t guest = (pid_t)get(in);
	IOReturn r = conn_open(&k, UVSHIM_CLIENT_TYPE);

	if (r == KERN_SUCCESS)
		r = grant(&k, UVSHIM_SEL_GRANT, guest, 0);
	put(out, (uint64_t)(uint32_t)r);
	get(in);            /* then it dies with the connection open: SIGKILL */
	pause();
}

Test(kext_kernel, the_owners_death_redirects_every_guest_and_orphans_it, .timeout = 60)
{
	struct conn k, next;
	struct child o;
	uint32_t type;
	volatile uint8_t *page;
	struct uvshim_info_req ir = { 0, 0 };
	struct uvshim_info_rep info;

	kerneld_start(3);
	child_start(&o, owner_main);
	put(o.to, (uint64_t)getpid());
	cr_assert_eq(get(o.from), KERN_SUCCESS, "the owner opens and grants");
	cr_assert_eq(conn_open(&k, UVSHIM_CLIENT_TYPE_GUEST), KERN_SUCCESS);
	cr_assert_eq(map_page(&k, 0, &type, &page), KERN_SUCCESS);
	*mark(page) = 0xfeed;
	cr_assert_eq(*mark(page), 0xfeed);
	/* A second owner is refused while the first lives. */
	cr_assert_neq(conn_open(&next, UVSHIM_CLIENT_TYPE), KERN_SUCCESS);
	IOServiceClose(next.c);
	kill(o.pid, SIGKILL);
	child_end(&o);
	/* clientDied of the owner: in DYING, before bus mastering goes off, every guest
	 * window is revoked; the redirect reaches this task as soon as the kernel sees the
	 * task gone. */
	for (int i = 0; i < 500 && *mark(page) != 0; i++)
		usleep(10000);
	cr_assert_eq(*mark(page), 0, "the dead owner's guest reads zeroes");
	uint64_t refused = stats().mmio_refused;
	uvshim_standin_mmio(k.c, 1, k.info.uar_offset + MARK_OFF, 8);
	cr_assert_eq(stats().mmio_refused, refused + 1);
	/* An orphan: EPERM for everything until it closes. */
	cr_assert_eq(call(&k, UVSHIM_SEL_DEVICE_INFO, &ir, sizeof(ir), &info, sizeof(info)),
		     (IOReturn)UVSHIM_IORETURN(UVSHIM_EPERM));
	IOServiceClose(k.c);
	/* The function went through its reset and takes the next owner. */
	for (int i = 0; i < 200; i++) {
		if (conn_open(&next, UVSHIM_CLIENT_TYPE) == KERN_SUCCESS)
			break;
		IOServiceClose(next.c);
		usleep(10000);
	}
	cr_assert_neq(next.c, IO_OBJECT_NULL);
	IOServiceClose(next.c);
	kerneld_stop();
}

Test(kext_kernel, a_guest_maps_only_its_own_page_and_never_without_an_owner, .timeout = 60)
{
	struct conn k, g;
	uint32_t type;
	volatile uint8_t *page;

	kerneld_start(4);
	/* No owner: a guest is refused (core: EPERM). */
	cr_assert_eq(conn_open(&g, UVSHIM_CLIENT_TYPE_GUEST), (IOReturn)UVSHIM_IORETURN(UVSHIM_EPERM));
	cr_assert_eq(conn_open(&k, UVSHIM_CLIENT_TYPE), KERN_SUCCESS);
	/* This task as a guest of itself: its own owner connection is another token. */
	cr_assert_eq(grant(&k, UVSHIM_SEL_GRANT, getpid(), 1), KERN_SUCCESS);
	cr_assert_eq(conn_open(&g, UVSHIM_CLIENT_TYPE_GUEST), KERN_SUCCESS);
	cr_assert_eq(map_page(&g, 0, &type, &page), (IOReturn)UVSHIM_IORETURN(UVSHIM_EPERM),
		     "page 0 was not granted to it");
	cr_assert_eq(map_page(&g, 1, &type, &page), KERN_SUCCESS);
	/* A guest's hook outside its window is refused even while the window lives. */
	uint64_t refused = stats().mmio_refused;
	uvshim_standin_mmio(g.c, 1, 0, 4);
	cr_assert_eq(stats().mmio_refused, refused + 1);
	IOServiceClose(g.c);
	IOServiceClose(k.c);
	kerneld_stop();
}
