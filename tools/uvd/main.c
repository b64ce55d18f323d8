/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvd: the device daemon.  It opens one device through any shim, brings it up with
 * libuverbs' own device code (GID table, service thread for page requests and events,
 * counters published for uvinfo), and serves its control path to client processes on
 * a unix socket (hw/shim/uvd_proto.h).  Clients keep their data path: they post and
 * poll their own queues in memory shared with the device (docs/architecture.md,
 * "Several processes: uvd").
 *
 *   uvd [-d URI] [-s SOCKET] [-p USEC] [-P BYTES] [-S] [-R] [-v]
 *       [-c N] [-C N] [-o N] [-q N] [-m BYTES] [-M BYTES] [-i SECONDS]
 *     -d  the device (default "emu:"); any shim URI
 *     -s  socket path (default $UVERBS_RUN_DIR/uvd.sock, UVERBS_RUN_DIR defaulting
 *         to /tmp/uverbs-<uid>, which must be ours and mode 0700: uverbs/run_dir.c).
 *         At most 107 bytes (sockaddr_un.sun_path); an existing file there is
 *         replaced only when it is a socket of ours that nobody accepts on
 *     -p  how long a client's thread keeps looking at its doorbell ring after a store
 *         before it sleeps (default 20 us with more than two CPUs, else 0; never on
 *         one CPU)
 *     -P  the host page clients map UAR pages in (default: the shim's page size).
 *         Each client gets UAR pages in whole host pages of this size (uar.c); a
 *         larger one lets a 4 KiB-page host be tested as a 16 KiB-page one
 *     -S  register only memory a client shares (a MAP_SHARED mapping of a memfd or
 *         shared-memory object whose descriptor it holds), never its private memory by
 *         address: what a daemon over VFIO does anyway, here for the emulator too (its
 *         clients then need not let the daemon into their address space)
 *     -R  (emulated device) run the device's data plane here, for every client: their
 *         doorbells come through a ring each and this daemon's threads move their
 *         packets, as a daemon of real hardware does with its BAR.  Without -R each
 *         client runs the data plane in an engine of its own, on an address the daemon
 *         binds for it next to the device's (engine.c), and its doorbells and packets
 *         take no daemon thread, as in one process
 *     -v  log clients, refusals and cleanups on stderr
 *   Limits (struct uvd_limits; past one a request fails with EDQUOT, or the connection
 *   is closed, and the message names the flag):
 *     -c  connections at once past HELLO, all clients (default 128); a connection
 *         must say HELLO within 2 s, and at most 256 wait for theirs at once
 *     -C  connections at once from one process (default 32)
 *     -o  objects of each kind (PD, MKey, CQ, QP, SRQ) per client process, all its
 *         connections (default 4096; and 4 x this many memory regions)
 *     -q  counter sets per client process (default 4; the device has a few hundred in all)
 *     -m  bytes pinned in this daemon per client process: queue memory and shared registrations
 *         (default 1 GiB, or a quarter of the daemon's RLIMIT_MEMLOCK when that is lower
 *         and the daemon is not root)
 *     -M  bytes of a client's own memory registered per client process (default 256 GiB)
 *     -i  a connection that holds nothing and sent nothing is closed
 *         after this many seconds (default 30)
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "hw/emu/emu.h"
#include "hw/mlx5/mx5.h"
#include "hw/platform/local_msg.h"
#include "hw/platform/run_dir.h"
#include "hw/platform/sock.h"
#include "tools/common/cli.h"
#include "tools/common/parse.h"
#include "tools/uvd/uvd.h"
#include "uverbs/uv.h"

static const char uvd_usage[] =
"usage: uvd [-d URI] [-s SOCKET] [-p USEC] [-P BYTES] [-S] [-R] [-v]\n"
"           [-c N] [-C N] [-o N] [-q N] [-m BYTES] [-M BYTES] [-i SECONDS]\n"
"       uvd --help | --version\n"
"  the device daemon: opens one device and serves its control path to client processes\n"
"  (UVERBS_DEVICES=uvd:SOCKET), which keep their own data path.\n"
"  -d, --device URI       the device (default emu:); any shim URI but uvd:\n"
"  -s, --socket PATH      the socket (default $UVERBS_RUN_DIR/uvd.sock, UVERBS_RUN_DIR\n"
"                         defaulting to /tmp/uverbs-<uid>)\n"
"  -p, --spin-us USEC     how long a client's thread watches its doorbell ring after a\n"
"                         store before it sleeps (default 20 with more than two CPUs,\n"
"                         else 0; never on one CPU)\n"
"  -P, --host-page BYTES  the host page clients map UAR pages in (default the shim's\n"
"                         page size; a power of two, k suffix allowed)\n"
"  -S, --shared-only      register only memory a client shares (a memfd it holds)\n"
"  -R, --ring             (emulated device) run the data plane in the daemon, doorbells\n"
"                         through a ring per client, as with real hardware\n"
"  -v, --verbose          log clients, refusals and cleanups on stderr\n"
"  limits (past one: EDQUOT, or the connection closed; docs/tools.md \"uvd\"):\n"
"  -c, --connections N    connections at once past HELLO, all clients (default 128;\n"
"                         HELLO within 2 s, at most 256 waiting for theirs)\n"
"  -C, --connections-per-process N  from one process (default 32)\n"
"  -o, --objects N        PDs, MKeys, CQs, QPs, SRQs per client process, each kind\n"
"                         (default 4096)\n"
"  -q, --counter-sets N   counter sets per client process (default 4)\n"
"  -m, --locked-bytes B   bytes pinned in the daemon per client process (default 1 GiB, or a\n"
"                         quarter of RLIMIT_MEMLOCK when lower and not root)\n"
"  -M, --pinned-bytes B   bytes of a client's own memory registered per client process\n"
"                         (default 256 GiB)\n"
"  -i, --idle-seconds S   close a connection holding nothing and silent after S\n"
"                         seconds (default 30)\n"
"  -h, --help             this text;  --version  the version and the build\n"
"exit: 0 stopped by SIGTERM/SIGINT; 1 a runtime error (no device, bring-up failed, the\n"
"      socket is taken, the run directory is not ours and 0700), one line on stderr;\n"
"      2 a usage error\n";

static volatile sig_atomic_t uvd_stop;

static void uvd_on_signal(int sig)
{
	(void)sig;
	uvd_stop = 1;
}

/* The socket file a dead daemon left at path: replaced only when it is provably one --
 * a socket (lstat: not a link to one), owned by us, that nobody accepts on.  Anything
 * else at the path is left alone and the start refused (-EEXIST), so `uvd -s FILE`
 * never deletes a file of ours or another user's. */
static int uvd_clear_stale(const char *path, const struct sockaddr_un *a)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid())
		return -EEXIST;
	int fd = plat_lmsg_socket();
	if (fd < 0)
		return fd;
	int rc = connect(fd, (const struct sockaddr *)a, sizeof(*a)) == 0 ? -EADDRINUSE : 0;
	close(fd);
	if (rc)
		return rc;
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

static int uvd_listen(struct uvd_server *srv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(srv->path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	memcpy(a.sun_path, srv->path, strlen(srv->path));
	int rc = uvd_clear_stale(srv->path, &a);
	if (rc)
		return rc;
	int fd = plat_lmsg_socket();
	if (fd < 0)
		return fd;
	mode_t old = umask(077);
	rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (rc < 0 || listen(fd, 64) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	srv->lfd = fd;
	struct stat st;
	srv->ino = stat(srv->path, &st) == 0 ? st.st_ino : 0;
	return 0;
}

/* -m's default: 1 GiB, or a quarter of RLIMIT_MEMLOCK when that is lower and we are not
 * root (whose pins the limit does not bound, CAP_IPC_LOCK). */
static uint64_t uvd_default_locked(void)
{
	uint64_t def = 1ull << 30;
	struct rlimit rl;
	if (geteuid() != 0 && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur / 4 < def)
		def = rl.rlim_cur / 4;
	return def;
}

int main(int argc, char **argv)
{
	const char *uri = "emu:";
	struct uvd_server srv = { .lfd = -1, .reap_lock = PTHREAD_MUTEX_INITIALIZER,
				  .lim = { .conns = 128, .conns_per_pid = 32, .objs = 4096, .qcnt = 4,
					   .locked = uvd_default_locked(), .pinned = 256ull << 30, .idle_s = 30 } };
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	/* On two CPUs a real-time spinner takes the CPU the device thread or the peer needs:
	 * measured with tools/bench-uvd under chrt, 20 us of spin made the median 4 KiB WRITE
	 * round trip a quarter slower and 60 us a third (docs/architecture.md, "Several
	 * processes: uvd"). */
	unsigned long spin_us = ncpu > 2 ? 20 : 0;
	unsigned long host_page = 0;
	bool ring = false;
	static const struct option lo[] = {
		{ "device", required_argument, NULL, 'd' }, { "socket", required_argument, NULL, 's' },
		{ "spin-us", required_argument, NULL, 'p' }, { "host-page", required_argument, NULL, 'P' },
		{ "shared-only", no_argument, NULL, 'S' }, { "ring", no_argument, NULL, 'R' },
		{ "verbose", no_argument, NULL, 'v' }, { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "connections", required_argument, NULL, 'c' }, { "connections-per-process", required_argument, NULL, 'C' },
		{ "objects", required_argument, NULL, 'o' }, { "counter-sets", required_argument, NULL, 'q' },
		{ "locked-bytes", required_argument, NULL, 'm' }, { "pinned-bytes", required_argument, NULL, 'M' },
		{ "idle-seconds", required_argument, NULL, 'i' }, { NULL, 0, NULL, 0 },
	};
	int opt;
	uint64_t v;
	opterr = 0;    /* errors as one line each (tools/common/cli.h) */
	while ((opt = getopt_long(argc, argv, ":d:s:p:P:SRvhc:C:o:q:m:M:i:", lo, NULL)) != -1) {
		switch (opt) {
		case 'd': uri = optarg; break;
		case 's':
			if (strlen(optarg) >= sizeof(srv.path))
				return uvt_usage_error("uvd", "--socket: path longer than %zu bytes", sizeof(srv.path) - 1);
			snprintf(srv.path, sizeof(srv.path), "%s", optarg);
			break;
		case 'p':
			if (uvt_parse_u64(optarg, 1000000000, &v))
				return uvt_usage_error("uvd", "--spin-us: '%s' is not a number of microseconds", optarg);
			spin_us = (unsigned long)v;
			break;
		case 'P':
			if (uvt_parse_size(optarg, 1u << 30, &v) || !v)
				return uvt_usage_error("uvd", "--host-page: '%s' is not a size in bytes", optarg);
			host_page = (unsigned long)v;
			break;
		case 'c': case 'C': case 'o': case 'q': case 'i':
			if (uvt_parse_u64(optarg, 1000000, &v) || !v)
				return uvt_usage_error("uvd", "-%c: '%s' is not a number from 1 to 1000000", opt, optarg);
			*(opt == 'c' ? &srv.lim.conns : opt == 'C' ? &srv.lim.conns_per_pid : opt == 'o' ? &srv.lim.objs
			  : opt == 'q' ? &srv.lim.qcnt : &srv.lim.idle_s) = (unsigned)v;
			break;
		case 'm': case 'M':
			if (uvt_parse_size(optarg, UINT64_MAX, &v) || !v)
				return uvt_usage_error("uvd", "-%c: '%s' is not a size in bytes", opt, optarg);
			*(opt == 'm' ? &srv.lim.locked : &srv.lim.pinned) = v;
			break;
		case 'S': srv.shared_only = true; break;
		case 'R': ring = true; break;
		case 'v': srv.verbose++; break;
		case 'h': return uvt_help("uvd", uvd_usage);
		case 'V': return uvt_version("uvd");
		default: return uvt_getopt_error("uvd", opt, argv);
		}
	}
	if (optind < argc)
		return uvt_usage_error("uvd", "unexpected argument '%s'", argv[optind]);
	srv.lim.mems = srv.lim.objs * 4u;
	/* A spinning real-time thread on the only CPU would starve the client it waits for
	 * (the emulator's rx_spin keeps the same rule). */
	if (ncpu > 1 && spin_us <= 1000000)
		srv.spin_ns = (uint64_t)spin_us * 1000u;
	if (!srv.path[0]) {
		/* the run dir must be ours and 0700 (hw/platform/run_dir.h): a socket in a
		 * directory another user made could be replaced under us */
		char dir[160], why[300];
		int drc = plat_run_dir(dir, sizeof(dir));
		if (drc == -ENOENT)
			drc = snprintf(dir, sizeof(dir), "/tmp/uverbs-%u", (unsigned)getuid()) < 0 ? -EINVAL : 0;
		if (drc || plat_run_dir_check(dir, true, why, sizeof(why))) {
			fprintf(stderr, "uvd: %s\n", drc ? "run directory path too long" : why);
			return 1;
		}
		if (snprintf(srv.path, sizeof(srv.path), "%s/%s", dir, UVD_SOCK_NAME) >= (int)sizeof(srv.path)) {
			fprintf(stderr, "uvd: %s/%s: a socket path is at most %zu bytes\n", dir, UVD_SOCK_NAME,
				sizeof(srv.path) - 1);
			return 2;
		}
	}
	if (!strncmp(uri, "uvd:", 4)) {
		return uvt_usage_error("uvd", "%s is a daemon's socket: give the device itself (emu:, vfio:, kext:)", uri);
	}
	/* The device list of libuverbs is built from UVERBS_DEVICES: exactly ours. */
	setenv("UVERBS_DEVICES", uri, 1);
	unsigned n = 0;
	struct uv_dev *devs = uv_devices(&n);
	if (!n) {
		fprintf(stderr, "uvd: %s: no such device\n", uri);
		return 1;
	}
	struct uv_dev *d = &devs[0];
	srv.dev = d;
	pthread_mutex_lock(&d->lock);
	int rc = uv_dev_up(d);
	struct mx5_eq *eq = NULL;
	if (!rc)
		rc = uv_dev_watch_eq(d, 0);
	if (!rc)
		rc = mx5_comp_eq_get(d->mx5, 0, &eq);
	if (rc) {
		pthread_mutex_unlock(&d->lock);
		fprintf(stderr, "uvd: %s: %s\n", uri, d->mx5 ? mx5_device_error(d->mx5) : mx5_open_error());
		return 1;
	}
	srv.comp_eqn = mx5_eq_num(eq);
	srv.shim = mx5_device_shim(d->mx5);
	shim_bar(srv.shim, 0, &srv.bar0);
	/* bring-up sets log_uar_page_sz so that one UAR page is one host page (init.c) */
	srv.uar_page_bytes = srv.shim->page_size;
	srv.host_page = host_page ? host_page : srv.shim->page_size;
	if (srv.host_page < srv.shim->page_size ||
	    uvd_uar_group_size(srv.host_page, srv.uar_page_bytes, &srv.uar_per_group)) {
		pthread_mutex_unlock(&d->lock);
		return uvt_usage_error("uvd", "-P %lu: a power of two from the page size %zu to %u UAR pages of %zu bytes",
				       host_page, srv.shim->page_size, UVD_UAR_GROUP_MAX, srv.uar_page_bytes);
	}
	uvd_uar_groups_init(&srv.uar_pool, srv.uar_per_group);
	srv.kext_fn = uvd_share_kext_fn(srv.shim, uri);
	/* A shim that can neither copy into another process (the emulator) nor pin for it
	 * (the kext) registers only what clients share, -S or not (VFIO). */
	if (!srv.shim->ops->pin_for && !emu_device_from_shim(srv.shim))
		srv.shared_only = true;
	/* An emulated device's data plane runs in each client's engine unless -R: a
	 * device daemon of hardware performs its clients' doorbells into the real BAR */
	struct emu_dev *emu = emu_device_from_shim(srv.shim);
	srv.engines = emu && !ring;
	if (srv.engines)
		emu_dataplane_off(emu);
	mx5_device_set_event_handler(d->mx5, uvd_route_event, &srv);
	mx5_device_set_comp_route(d->mx5, uvd_route_comp, &srv);
	pthread_mutex_unlock(&d->lock);

	rc = uvd_listen(&srv);
	if (rc) {
		fprintf(stderr, "uvd: %s: %s%s\n", srv.path, strerror(-rc),
			rc == -EADDRINUSE ? " (another uvd serves there)"
			: rc == -EEXIST ? " (not a socket of ours that nobody serves: left alone; remove it or "
					  "choose another -s)" : "");
		return 1;
	}
	struct sigaction sa = { .sa_handler = uvd_on_signal };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	printf("uvd: serving %s (%s) at %s\n", uri, srv.shim->pci.bdf, srv.path);
	fflush(stdout);
	while (!uvd_stop) {
		struct pollfd p = { .fd = srv.lfd, .events = POLLIN };
		int r = poll(&p, 1, 200);
		if (r <= 0)
			continue;
		int fd = plat_accept(srv.lfd);
		if (fd >= 0) {
			uvd_client_start(&srv, fd);
		} else if (fd == -EMFILE || fd == -ENFILE || fd == -ENOBUFS || fd == -ENOMEM) {
			/* the connection stays queued and the socket readable: wait, never spin */
			static bool said;
			if (!said)
				uvd_log("accept: %s: new connections wait (see -c)", strerror(-fd));
			said = true;
			poll(NULL, 0, 100);
		}
	}
	/* Clients see their connection close: a fatal event and errors from then on. */
	/* only our own socket file: a newer daemon may have taken the path meanwhile */
	struct stat st;
	if (stat(srv.path, &st) == 0 && st.st_ino == srv.ino)
		unlink(srv.path);
	close(srv.lfd);
	printf("uvd: stopped\n");
	fflush(stdout);
	_exit(0);
}
