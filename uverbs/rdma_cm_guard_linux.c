/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The CM's side of its guardian (rdma_cm_guard.h), Linux.
 *
 * The records live in a memfd both map (uverbs/guard/cm_guard_records.h).  The
 * guardian is a program of its own, uverbs-cm-guard, started with posix_spawn(3): a
 * copy of the process (fork) would keep every page the process had at that moment for
 * as long as the process lives, and could call nothing that takes a lock another
 * thread held or that a preloaded library wraps; a new program has neither problem.
 * It gets a pidfd of the process, the memfd and the read end of a pipe whose write
 * end stays here, close-on-exec, all three at fixed numbers, /dev/null as its standard
 * files, an environment of LD_LIBRARY_PATH alone (no LD_PRELOAD: not this library
 * again), and every signal blocked.  It forks once more and its first half exits at once: reaped here,
 * so the process is left with no child of ours to wait for.
 *
 * Where the program is: $UVERBS_CM_GUARD, else next to this library (the build tree
 * puts it there), else in the folder above (the librdma name's compat/ folder), else
 * where `cmake --install` puts it, found from the library's own folder
 * (UV_CM_GUARD_FROM_LIBDIR, from CMake: libexec/uverbs/ beside lib/, under any prefix;
 * from compat/, two folders up).
 */
#include "uverbs/rdma_cm_guard.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uverbs/guard/cm_guard_records.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434      /* the same on every architecture (Linux 5.3) */
#endif

static struct uv_cm_guard_area *guard;
static int guard_life = -1;     /* the pipe's write end: closing it ends the guardian's wait */
static int guard_child;

static bool executable(const char *path)
{
	return path && access(path, X_OK) == 0;
}

/* This library's own file, made absolute when it is loaded: a relative LD_PRELOAD or
 * LD_LIBRARY_PATH entry would name another file once the program changes directory. */
static char lib_path[PATH_MAX];

static void __attribute__((constructor)) note_lib_path(void)
{
	Dl_info info;

	if (dladdr((void *)rcm_guard_start, &info) && info.dli_fname && !realpath(info.dli_fname, lib_path))
		lib_path[0] = 0;
}

/* The guardian program's path into buf, or NULL.  secure_getenv: a set-user-ID program
 * must not start a program its user names. */
static const char *guard_path(char *buf, size_t len)
{
	const char *env = secure_getenv("UVERBS_CM_GUARD");

	if (env && *env)
		return executable(env) ? env : NULL;
	if (lib_path[0]) {
		static const char *const rel[] = {
			"%.*s/uverbs-cm-guard", "%.*s/../uverbs-cm-guard",
#ifdef UV_CM_GUARD_FROM_LIBDIR
			"%.*s/" UV_CM_GUARD_FROM_LIBDIR, "%.*s/../../" UV_CM_GUARD_FROM_LIBDIR,
#endif
		};
		const char *slash = strrchr(lib_path, '/');
		int dir = slash ? (int)(slash - lib_path) : 0;

		for (size_t i = 0; slash && i < sizeof(rel) / sizeof(rel[0]); i++)
			if (snprintf(buf, len, rel[i], dir, lib_path) < (int)len && executable(buf))
				return buf;
	}
	return NULL;
}

static bool address_is_ours(uint32_t ip)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(ip) };
	bool ok = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

/* posix_spawn of the guardian with its three descriptors; its pid, or -errno. */
static int spawn(const char *path, int pidfd, int memfd, int life_rd)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t all;
	char *const argv[] = { (char *)"uverbs-cm-guard", NULL };
	/* only where its C library is (a minimal root may keep it off the default paths):
	 * no LD_PRELOAD, which would load this library into it again */
	const char *llp = getenv("LD_LIBRARY_PATH");
	char *llp_env = NULL;
	if (llp && asprintf(&llp_env, "LD_LIBRARY_PATH=%s", llp) < 0)
		llp_env = NULL;
	char *const envp[] = { llp_env, NULL };
	pid_t pid;
	int rc;

	sigfillset(&all);
	if ((rc = posix_spawn_file_actions_init(&fa)))
		return -rc;
	if ((rc = posix_spawnattr_init(&at))) {
		posix_spawn_file_actions_destroy(&fa);
		return -rc;
	}
	/* the three at their numbers (dup2 clears close-on-exec), /dev/null for 0-2 */
	rc = posix_spawn_file_actions_adddup2(&fa, pidfd, UV_CM_GUARD_FD_PIDFD);
	rc = rc ? rc : posix_spawn_file_actions_adddup2(&fa, memfd, UV_CM_GUARD_FD_AREA);
	rc = rc ? rc : posix_spawn_file_actions_adddup2(&fa, life_rd, UV_CM_GUARD_FD_LIFE);
	for (int i = 0; i < 3 && !rc; i++)
		rc = posix_spawn_file_actions_addopen(&fa, i, "/dev/null", i ? O_WRONLY : O_RDONLY, 0);
	rc = rc ? rc : posix_spawnattr_setsigmask(&at, &all);
	rc = rc ? rc : posix_spawnattr_setsigdefault(&at, &all);
	rc = rc ? rc : posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (!rc)
		rc = posix_spawn(&pid, path, &fa, &at, argv, envp);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	free(llp_env);
	return rc ? -rc : (int)pid;
}

/* A descriptor moved above the guardian's fixed numbers (and 0-2), close-on-exec: the
 * file actions dup2 onto 3, 4 and 5 in turn, which must not overwrite a source still to
 * be copied.  The old one is closed. */
static int lift(int fd)
{
	int hi = fd < 0 ? fd : fcntl(fd, F_DUPFD_CLOEXEC, UV_CM_GUARD_FD_LIFE + 1);

	if (fd >= 0)
		close(fd);
	return hi;
}

static void set_why(char *why, size_t len, const char *fmt, const char *path, int err)
{
	if (why && len)
		snprintf(why, len, fmt, path, strerror(err));
}

int rcm_guard_start(const uint32_t *ips, unsigned n, char *why, size_t why_len)
{
	char buf[PATH_MAX];
	const char *path;
	bool any = false;
	int memfd, pidfd, life[2] = { -1, -1 }, pid, rc, st;
	struct uv_cm_guard_area *a;

	if (guard)
		return 0;
	for (unsigned i = 0; i < n && !any; i++)
		any = address_is_ours(ips[i]);
	if (!any)
		return -EADDRNOTAVAIL;
	path = guard_path(buf, sizeof(buf));
	if (!path) {
		snprintf(why, why_len, "uverbs-cm-guard is not beside the library nor installed");
		return -ENOENT;
	}
	memfd = lift(memfd_create("uverbs-cm-guard", MFD_CLOEXEC));
	if (memfd < 0 || ftruncate(memfd, sizeof(*a))) {
		rc = -errno;
		set_why(why, why_len, "memfd for %s: %s", path, -rc);
		if (memfd >= 0)
			close(memfd);
		return rc;
	}
	a = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (a == MAP_FAILED) {
		rc = -errno;
		set_why(why, why_len, "mapping the records of %s: %s", path, -rc);
		close(memfd);
		return rc;
	}
	a->magic = UV_CM_GUARD_MAGIC;
	a->version = UV_CM_GUARD_VERSION;
	a->slots = UV_CM_GUARD_SLOTS;
	a->rec_size = sizeof(struct uv_cm_guard_rec);
	a->app_pid = (int32_t)getpid();
	pidfd = lift((int)syscall(SYS_pidfd_open, (long)getpid(), 0L));
	if (pidfd < 0 || pipe2(life, O_CLOEXEC)) {
		rc = -errno;
		set_why(why, why_len, "pidfd or pipe for %s: %s", path, -rc);
		if (pidfd >= 0)
			close(pidfd);
		munmap(a, sizeof(*a));
		close(memfd);
		return rc;
	}
	life[0] = lift(life[0]);
	life[1] = lift(life[1]);
	/* the write end is the fork handler's to close from now on (rcm_guard_forget) */
	guard_life = life[1];
	pid = life[0] < 0 || life[1] < 0 ? -EMFILE : spawn(path, pidfd, memfd, life[0]);
	close(pidfd);
	close(memfd);
	if (life[0] >= 0)
		close(life[0]);
	if (pid < 0) {
		set_why(why, why_len, "starting %s: %s", path, -pid);
		goto fail;
	}
	/* its first half exits at once, after starting the second: reap it.  An exit
	 * status other than 0 means the guardian could not run or refused its start. */
	while ((rc = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	if ((rc == pid && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) || !atomic_load(&a->guard_pid)) {
		if (rc == pid && WIFEXITED(st) && WEXITSTATUS(st) == 127)
			snprintf(why, why_len, "%s could not run (exit 127: its loader or C library was not found)",
				 path);
		else if (rc == pid && WIFEXITED(st))
			snprintf(why, why_len, "%s refused its start (exit %d)", path, WEXITSTATUS(st));
		else
			set_why(why, why_len, "%s did not start: %s", path, ECHILD);
		pid = -ECHILD;
		goto fail;
	}
	guard = a;
	guard_child = atomic_load_explicit(&a->guard_pid, memory_order_acquire);
	return 0;
fail:
	if (guard_life >= 0)
		close(guard_life);
	guard_life = -1;
	munmap(a, sizeof(*a));
	return pid;
}

static void rec_write(unsigned slot, uint32_t armed, uint32_t src_ip, uint32_t dst_ip, const uint8_t *mad)
{
	if (!guard || slot >= UV_CM_GUARD_SLOTS)
		return;
	struct uv_cm_guard_rec *r = &guard->rec[slot];
	uint32_t s = atomic_load_explicit(&r->seq, memory_order_relaxed);
	atomic_store_explicit(&r->seq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	r->armed = armed;
	r->src_ip = src_ip;
	r->dst_ip = dst_ip;
	if (mad)
		memcpy(r->mad, mad, UV_CM_GUARD_MAD_LEN);
	atomic_store_explicit(&r->seq, s + 2, memory_order_release);
}

void rcm_guard_arm(unsigned slot, uint32_t src_ip, uint32_t dst_ip, const uint8_t mad[UV_CM_GUARD_MAD_LEN])
{
	rec_write(slot, 1, src_ip, dst_ip, mad);
}

void rcm_guard_disarm(unsigned slot)
{
	rec_write(slot, 0, 0, 0, NULL);
}

void rcm_guard_forget(void)
{
	if (guard)
		munmap(guard, sizeof(*guard));
	if (guard_life >= 0)
		close(guard_life);
	guard = NULL;
	guard_life = -1;
	guard_child = 0;
}

int rcm_guard_pid(void)
{
	return guard_child;
}
