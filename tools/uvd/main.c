/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvd: the device daemon.  It opens one device through any shim, brings it up with
 * libuverbs' own device code (GID table, service thread for page requests and events,
 * counters published for uvinfo), and serves its control path to client processes on
 * a unix socket (hw/shim/uvd_proto.h).  Clients keep their data path: they post and
 * poll their own queues in memory shared with the device (docs/architecture.md,
 * "Several processes: uvd").
 *
 *   uvd [-d URI] [-s SOCKET] [-p USEC] [-P BYTES] [-S] [-R] [-v]
 *     -d  the device (default "emu:"); any shim URI
 *     -s  socket path (default $UVERBS_RUN_DIR/uvd.sock, UVERBS_RUN_DIR defaulting
 *         to /tmp/uverbs-<uid>)
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
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "hw/emu/emu.h"
#include "hw/mlx5/mx5.h"
#include "hw/platform/local_msg.h"
#include "hw/platform/sock.h"
#include "tools/common/cli.h"
#include "tools/common/parse.h"
#include "tools/uvd/uvd.h"
#include "uverbs/uv.h"

static const char uvd_usage[] =
"usage: uvd [-d URI] [-s SOCKET] [-p USEC] [-P BYTES] [-S] [-R] [-v]\n"
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
"  -h, --help             this text;  --version  the version and the build\n"
"exit: 0 stopped by SIGTERM/SIGINT; 1 a runtime error (no device, bring-up failed, the\n"
"      socket is taken), one line on stderr; 2 a usage error\n";

static volatile sig_atomic_t uvd_stop;

static void uvd_on_signal(int sig)
{
	(void)sig;
	uvd_stop = 1;
}

static int uvd_listen(struct uvd_server *srv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(srv->path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	memcpy(a.sun_path, srv->path, strlen(srv->path));
	int fd = plat_lmsg_socket();
	if (fd < 0)
		return fd;
	/* A socket file left by a daemon that died: nobody answers on it. */
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
		close(fd);
		return -EADDRINUSE;
	}
	unlink(srv->path);
	mode_t old = umask(077);
	int rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
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

int main(int argc, char **argv)
{
	const char *uri = "emu:";
	struct uvd_server srv = { .lfd = -1 };
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
		{ "version", no_argument, NULL, 'V' }, { NULL, 0, NULL, 0 },
	};
	int opt;
	uint64_t v;
	opterr = 0;    /* errors as one line each (tools/common/cli.h) */
	while ((opt = getopt_long(argc, argv, ":d:s:p:P:SRvh", lo, NULL)) != -1) {
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
	/* A spinning real-time thread on the only CPU would starve the client it waits for
	 * (the emulator's rx_spin keeps the same rule). */
	if (ncpu > 1 && spin_us <= 1000000)
		srv.spin_ns = (uint64_t)spin_us * 1000u;
	if (!srv.path[0]) {
		const char *dir = getenv("UVERBS_RUN_DIR");
		char def[96];
		snprintf(def, sizeof(def), "/tmp/uverbs-%u", (unsigned)getuid());
		if (!dir || !*dir)
			dir = def;
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			fprintf(stderr, "uvd: %s: %s\n", dir, strerror(errno));
			return 1;
		}
		snprintf(srv.path, sizeof(srv.path), "%s/%s", dir, UVD_SOCK_NAME);
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
			rc == -EADDRINUSE ? " (another uvd serves there)" : "");
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
		if (fd >= 0)
			uvd_client_start(&srv, fd);
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
