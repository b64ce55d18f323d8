/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Addresses and neighbours the user configures.
 *
 * On Linux the kernel owns both: roce_gid_mgmt.c adds a GID for every IP address of the
 * netdev behind a RoCE port, and ib_resolve_eth_dmac (drivers/infiniband/core/verbs.c)
 * asks the neighbour table for a peer's MAC.  A ConnectX driven from user space on macOS
 * has no netdev, so the user says both, in the environment or in a file:
 *
 *   UVERBS_GIDS="uverbs0=192.168.10.1,fd00::1;0000:03:00.0=10.0.0.1"
 *       addresses of a port, per device named by its verbs name or its function; an
 *       entry without "NAME=" applies to every device
 *   UVERBS_NEIGH="192.168.10.2=0c:42:a1:00:00:02,fd00::2=0c:42:a1:00:00:02"
 *       the static neighbour table: IP address -> MAC
 *   UVERBS_CONFIG=/path/file, lines of
 *       gids NAME|* ADDR [ADDR...]
 *       neigh ADDR MAC
 *       # comment
 *
 * Everything is read again on each use (bring-up, modify QP, create AH), so there is no
 * cache to go stale.  A malformed entry is skipped with a warning (UVERBS_LOG=warn).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uverbs/uv.h"

static const uint8_t uv_v4mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

int uv_parse_addr(const char *s, uint8_t gid[16])
{
	struct in_addr a4;
	struct in6_addr a6;
	static const uint8_t zero[16];
	if (inet_pton(AF_INET, s, &a4) == 1) {
		memcpy(gid, uv_v4mapped_prefix, 12);
		memcpy(gid + 12, &a4.s_addr, 4);
	} else if (inet_pton(AF_INET6, s, &a6) == 1) {
		memcpy(gid, a6.s6_addr, 16);
	} else {
		return -EINVAL;
	}
	/* the unspecified address names no one (RFC 4291 2.5.2) */
	if (!memcmp(gid, zero, 16) || (!memcmp(gid, uv_v4mapped_prefix, 12) && !memcmp(gid + 12, zero, 4)))
		return -EINVAL;
	return 0;
}

int uv_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned b[6];
	char tail;
	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6 &&
	    sscanf(s, "%2x-%2x-%2x-%2x-%2x-%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	/* a neighbour is one station: no group address (IEEE 802 I/G bit), not all zero */
	if ((mac[0] & 1) || !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]))
		return -EINVAL;
	return 0;
}

void uv_format_addr(const uint8_t gid[16], char *buf, size_t len)
{
	if (!memcmp(gid, uv_v4mapped_prefix, 12))
		inet_ntop(AF_INET, gid + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, gid, buf, (socklen_t)len);
}

/* ------------------------------------------------------------------ the sources */

struct uv_cfg_walk {
	/* addresses of one device */
	const char *ibdev, *bdf;
	uint8_t (*addrs)[16];
	unsigned max, n;
	/* one neighbour */
	const uint8_t *want;
	uint8_t *mac;
	int found;
};

static void uv_cfg_addr(struct uv_cfg_walk *w, const char *dev, const char *addr, const char *src)
{
	uint8_t g[16];
	if (!w->addrs)
		return;
	if (dev && strcmp(dev, "*") && strcmp(dev, w->ibdev) && strcmp(dev, w->bdf))
		return;
	if (uv_parse_addr(addr, g)) {
		uv_log(UV_LOG_WARN, "%s: '%s' is not an IPv4 or IPv6 address: ignored", src, addr);
		return;
	}
	for (unsigned i = 0; i < w->n; i++)
		if (!memcmp(w->addrs[i], g, 16))
			return;
	if (w->n == w->max) {
		uv_log(UV_LOG_WARN, "%s: more than %u addresses for %s: '%s' ignored", src, w->max, w->ibdev, addr);
		return;
	}
	memcpy(w->addrs[w->n++], g, 16);
}

static void uv_cfg_neigh(struct uv_cfg_walk *w, const char *addr, const char *mac, const char *src)
{
	uint8_t g[16], m[6];
	if (!w->want || w->found)
		return;
	if (uv_parse_addr(addr, g) || uv_parse_mac(mac, m)) {
		uv_log(UV_LOG_WARN, "%s: '%s=%s' is not ADDRESS=MAC: ignored", src, addr, mac);
		return;
	}
	if (!memcmp(g, w->want, 16)) {
		memcpy(w->mac, m, 6);
		w->found = 1;
	}
}

/* Each entry of environment variable `name`, entries separated by `sep`, to fn. */
static void uv_env_each(struct uv_cfg_walk *w, const char *name, const char *sep,
			void (*fn)(struct uv_cfg_walk *w, char *ent))
{
	const char *env = getenv(name);
	char *copy = env ? strdup(env) : NULL, *save = NULL;
	if (!copy)
		return;
	for (char *ent = strtok_r(copy, sep, &save); ent; ent = strtok_r(NULL, sep, &save))
		fn(w, ent);
	free(copy);
}

/* UVERBS_GIDS: "[NAME=]ADDR[,ADDR...][;...]", one ';' entry */
static void uv_env_gids(struct uv_cfg_walk *w, char *ent)
{
	char *eq = strchr(ent, '='), *list = ent, *dev = NULL, *save = NULL;
	if (eq) {
		*eq = 0;
		dev = ent;
		list = eq + 1;
	}
	for (char *a = strtok_r(list, ",", &save); a; a = strtok_r(NULL, ",", &save))
		uv_cfg_addr(w, dev, a, "UVERBS_GIDS");
}

/* UVERBS_NEIGH: "ADDR=MAC[,ADDR=MAC...]", one ',' entry */
static void uv_env_neigh(struct uv_cfg_walk *w, char *ent)
{
	char *eq = strchr(ent, '=');
	if (!eq) {
		uv_log(UV_LOG_WARN, "UVERBS_NEIGH: '%s' is not ADDRESS=MAC: ignored", ent);
		return;
	}
	*eq = 0;
	uv_cfg_neigh(w, ent, eq + 1, "UVERBS_NEIGH");
}

static void uv_file(struct uv_cfg_walk *w)
{
	const char *path = getenv("UVERBS_CONFIG");
	if (!path || !*path)
		return;
	/* A regular file of at most 1 MiB: a FIFO, a device (/dev/urandom, /dev/zero) or a
	 * huge file would hang or stall the start-up that reads it.  O_NONBLOCK keeps the
	 * open itself from waiting on a FIFO with no writer. */
	int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0) {
		uv_log(UV_LOG_WARN, "UVERBS_CONFIG: cannot open %s: %s", path, strerror(errno));
		return;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (1 << 20)) {
		uv_log(UV_LOG_WARN, "UVERBS_CONFIG: %s is not a regular file of at most 1 MiB: ignored", path);
		close(fd);
		return;
	}
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return;
	}
	char line[1024], src[64];
	unsigned lineno = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		char *hash = strchr(line, '#'), *save = NULL;
		if (hash)
			*hash = 0;
		char *kw = strtok_r(line, " \t\r\n", &save);
		if (!kw)
			continue;
		snprintf(src, sizeof(src), "UVERBS_CONFIG line %u", lineno);
		if (!strcmp(kw, "gids")) {
			char *dev = strtok_r(NULL, " \t\r\n", &save);
			for (char *a = strtok_r(NULL, " \t\r\n", &save); dev && a; a = strtok_r(NULL, " \t\r\n", &save))
				uv_cfg_addr(w, dev, a, src);
		} else if (!strcmp(kw, "neigh")) {
			char *a = strtok_r(NULL, " \t\r\n", &save), *m = strtok_r(NULL, " \t\r\n", &save);
			if (a && m)
				uv_cfg_neigh(w, a, m, src);
			else
				uv_log(UV_LOG_WARN, "%s: expected 'neigh ADDRESS MAC'", src);
		} else {
			uv_log(UV_LOG_WARN, "%s: unknown keyword '%s' (gids, neigh)", src, kw);
		}
	}
	fclose(f);
}

unsigned uv_netcfg_addrs(const char *ibdev, const char *bdf, uint8_t (*addrs)[16], unsigned max)
{
	struct uv_cfg_walk w = { .ibdev = ibdev ? ibdev : "", .bdf = bdf ? bdf : "", .addrs = addrs, .max = max };
	if (w.addrs)
		uv_env_each(&w, "UVERBS_GIDS", ";", uv_env_gids);
	uv_file(&w);
	return w.n;
}

int uv_netcfg_neigh(const uint8_t addr[16], uint8_t mac[6])
{
	struct uv_cfg_walk w = { .want = addr, .mac = mac };
	if (w.want)
		uv_env_each(&w, "UVERBS_NEIGH", ",", uv_env_neigh);
	uv_file(&w);
	return w.found ? 0 : -ENOENT;
}
