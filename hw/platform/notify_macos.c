/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/notify.h on macOS: a pipe per notification, one byte per count.  macOS
 * has no eventfd; a pipe's read end is what poll(), kqueue and an application's event
 * loop all accept, which a kqueue EVFILT_USER fd would not give a verbs application
 * polling a completion channel.
 *
 * The read end is the notification's fd; the write end, the mode and the count that
 * did not fit in the pipe live in a table indexed by that fd.  The write end is
 * non-blocking so that a signal never blocks: when the pipe is full the fd is
 * readable anyway, which is all counter mode promises, and semaphore mode keeps the
 * surplus in `held` and puts one byte back for each byte read, so every signal is
 * still exactly one read. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "hw/platform/notify.h"

struct plat_notify_ent {
	bool used;
	int wfd;
	unsigned flags;
	uint64_t held;      /* semaphore mode: signals the full pipe did not take */
};

static pthread_mutex_t plat_notify_lock = PTHREAD_MUTEX_INITIALIZER;
static struct plat_notify_ent *plat_notify_tab;
static size_t plat_notify_n;

/* Under the lock. */
static struct plat_notify_ent *plat_notify_find(int fd)
{
	if (fd < 0 || (size_t)fd >= plat_notify_n || !plat_notify_tab[fd].used)
		return NULL;
	return &plat_notify_tab[fd];
}

static int plat_notify_fd_flags(int fd, int fdflags, int flflags)
{
	if (fdflags && fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | fdflags) < 0)
		return -errno;
	if (flflags && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | flflags) < 0)
		return -errno;
	return 0;
}

/* Under the lock: one byte into the pipe, or into `held` when it is full. */
static int plat_notify_put(struct plat_notify_ent *e)
{
	static const char b = 1;

	if (write(e->wfd, &b, 1) == 1)
		return 0;
	if (errno != EAGAIN)
		return -errno;
	if (e->flags & PLAT_NOTIFY_SEMAPHORE)
		e->held++;
	return 0;
}

int plat_notify_open(uint32_t initial, unsigned flags)
{
	int p[2], rc;

	if (pipe(p) < 0)
		return -errno;
	rc = plat_notify_fd_flags(p[0], FD_CLOEXEC, flags & PLAT_NOTIFY_NONBLOCK ? O_NONBLOCK : 0);
	if (!rc)
		rc = plat_notify_fd_flags(p[1], FD_CLOEXEC, O_NONBLOCK);
	pthread_mutex_lock(&plat_notify_lock);
	if (!rc && (size_t)p[0] >= plat_notify_n) {
		size_t n = (size_t)p[0] + 64;
		struct plat_notify_ent *t = realloc(plat_notify_tab, n * sizeof(*t));

		if (!t) {
			rc = -ENOMEM;
		} else {
			for (size_t i = plat_notify_n; i < n; i++)
				t[i] = (struct plat_notify_ent){ .used = false, .wfd = -1 };
			plat_notify_tab = t;
			plat_notify_n = n;
		}
	}
	if (!rc) {
		struct plat_notify_ent *e = &plat_notify_tab[p[0]];

		*e = (struct plat_notify_ent){ .used = true, .wfd = p[1], .flags = flags };
		for (uint32_t i = 0; i < initial && !rc; i++)
			rc = plat_notify_put(e);
		if (rc)
			*e = (struct plat_notify_ent){ .used = false, .wfd = -1 };
	}
	pthread_mutex_unlock(&plat_notify_lock);
	if (rc) {
		close(p[0]);
		close(p[1]);
		return rc;
	}
	return p[0];
}

int plat_notify_signal(int fd)
{
	struct plat_notify_ent *e;
	int rc;

	pthread_mutex_lock(&plat_notify_lock);
	e = plat_notify_find(fd);
	rc = e ? plat_notify_put(e) : -EBADF;
	pthread_mutex_unlock(&plat_notify_lock);
	return rc;
}

int plat_notify_read(int fd, uint64_t *count)
{
	struct plat_notify_ent *e;
	unsigned flags = 0;
	char buf[256];
	uint64_t n = 0;
	ssize_t r;

	if (fd < 0)
		return -EBADF;
	pthread_mutex_lock(&plat_notify_lock);
	e = plat_notify_find(fd);
	if (e)
		flags = e->flags;
	pthread_mutex_unlock(&plat_notify_lock);

	/* The first read may block (as the fd's owner asked); the lock is not held. */
	r = read(fd, buf, flags & PLAT_NOTIFY_SEMAPHORE ? 1 : sizeof(buf));
	if (r <= 0)
		return r < 0 ? -errno : -EIO;
	n = (uint64_t)r;
	if (flags & PLAT_NOTIFY_SEMAPHORE) {
		pthread_mutex_lock(&plat_notify_lock);
		e = plat_notify_find(fd);
		if (e && e->held && write(e->wfd, buf, 1) == 1)
			e->held--;
		pthread_mutex_unlock(&plat_notify_lock);
	} else {
		/* Counter mode takes everything pending, as one eventfd read does. */
		struct pollfd p = { .fd = fd, .events = POLLIN };

		while (r == (ssize_t)sizeof(buf) && poll(&p, 1, 0) > 0 && (r = read(fd, buf, sizeof(buf))) > 0)
			n += (uint64_t)r;
	}
	if (count)
		*count = n;
	return 0;
}

void plat_notify_close(int fd)
{
	struct plat_notify_ent *e;

	if (fd < 0)
		return;
	pthread_mutex_lock(&plat_notify_lock);
	e = plat_notify_find(fd);
	if (e) {
		close(e->wfd);
		*e = (struct plat_notify_ent){ .used = false, .wfd = -1 };
	}
	pthread_mutex_unlock(&plat_notify_lock);
	close(fd);
}
