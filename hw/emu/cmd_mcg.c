/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Multicast groups: ATTACH_TO_MCG (0x806) and DETACH_FROM_MCG (0x807) (PRM "Multicast
 * Group"; layouts attach_to_mcg_in / detach_from_mcg_in, as Linux mlx5_cmd_attach_mcg
 * and mlx5_cmd_detach_mcg send them).  Each device keeps its groups: a multicast GID
 * and the QPNs attached to it, within what the device advertises in its general
 * capabilities (max_qp_mcg QPs per group, 2^log_max_mcg groups; the ConnectX-4 trace
 * gives 48 and 2^21).
 *
 * Checked, as firmware does: the QP exists (bad resource, BAD_QPN); it is a UD QP
 * (ibv_attach_mcast(3): "Only QPs of Transport Service Type IBV_QPT_UD may be attached
 * to multicast groups"; bad parameter otherwise, MCG_QP_NOT_UD); the GID is a multicast GID (ff00::/8, or for
 * RoCE v2 over IPv4 ::ffff:224.0.0.0/100, the form Linux cma_iboe_set_mgid gives;
 * MCG_NOT_MULTICAST); a group with max_qp_mcg QPs or one group more than 2^log_max_mcg
 * is a limits error (LIMIT_EXCEEDED).  Attaching a QP already attached succeeds and
 * changes nothing (ibv_attach_mcast(3): such a QP still receives a single copy); detaching a QP that is not attached is a bad parameter
 * (MCG_NOT_ATTACHED).  A QP that goes (DESTROY_QP, teardown) leaves its groups.
 *
 * The wire (docs/architecture.md section 10): the first QP attached to an IPv4-mapped
 * group opens the port's socket for that IPv4 group (roce_sock.c emu_roce_mc_open, an
 * IP_ADD_MEMBERSHIP on the loopback interface, as Linux cma_igmp_send joins the group
 * on the netdev for RoCE v2); the last QP to leave closes it.  The device thread and the
 * poll assist receive from every group socket through one pollable fd (emu_mcg_fd: an
 * epoll set on Linux, made with the device, so that a thread asleep on it wakes for a
 * group joined later).  A group the IPv4 wire cannot carry (an IPv6 multicast GID) is
 * kept and receives nothing; elsewhere than Linux no group socket can be opened and
 * attaching to an IPv4 group fails with no resources (MCG_NO_SOCKET). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/epoll.h>
#endif

#include "hw/emu/objects.h"
#include "hw/emu/roce_wire.h"

struct mcg {
	uint8_t gid[16];
	uint32_t group;         /* IPv4 group (host order), 0 for a GID the wire cannot carry */
	int fd;                 /* its socket, -1 if none */
	uint32_t nqp;
	uint32_t *qpn;          /* [max_qp] */
};

struct mcg_tab {
	int ep;                 /* epoll set of the group sockets, -1 until the first */
	unsigned nsock;         /* group sockets open */
	unsigned n, cap;
	uint32_t max_qp;        /* cmd_hca_cap.max_qp_mcg */
	uint64_t max_groups;    /* 1 << cmd_hca_cap.log_max_mcg */
	struct mcg *g;
};

static struct mcg_tab *tab_of(struct emu_dev *d)
{
	return d->mcg_tab;
}

static int mcg_init(struct emu_dev *d)
{
	uint8_t *gc = emu_cap(d, PRM_CAP_GENERAL_DEVICE, 1);
	struct mcg_tab *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	/* the epoll set exists from the start, so that a device thread already asleep on
	 * it (rx_thread.c) wakes for a group socket added later */
#ifdef __linux__
	t->ep = epoll_create1(EPOLL_CLOEXEC);
#else
	t->ep = -1;
#endif
	t->max_qp = gc ? (uint32_t)PRM_GET(cmd_hca_cap, gc, max_qp_mcg) : 0;
	t->max_groups = gc ? 1ull << (PRM_GET(cmd_hca_cap, gc, log_max_mcg) & 63) : 0;
	d->mcg_tab = t;
	return 0;
}

static void group_drop(struct mcg_tab *t, unsigned i)
{
	struct mcg *g = &t->g[i];

	if (g->fd >= 0) {
		close(g->fd);   /* leaves the IP group and the epoll set */
		__atomic_fetch_sub(&t->nsock, 1, __ATOMIC_RELAXED);
	}
	free(g->qpn);
	t->g[i] = t->g[--t->n];
}

static void mcg_teardown(struct emu_dev *d)
{
	struct mcg_tab *t = tab_of(d);

	while (t && t->n)
		group_drop(t, t->n - 1);
}

static void mcg_fini(struct emu_dev *d)
{
	struct mcg_tab *t = tab_of(d);

	if (!t)
		return;
	mcg_teardown(d);
	if (t->ep >= 0)
		close(t->ep);
	free(t->g);
	free(t);
	d->mcg_tab = NULL;
}

bool emu_gid_is_multicast(const uint8_t gid[16])
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (gid[0] == 0xff)
		return true;   /* IPv6 multicast, and IB's multicast GIDs (IBTA 4.1.1) */
	/* an IPv4 multicast address (224.0.0.0/4, RFC 5771) in its IPv4-mapped form */
	return !memcmp(gid, v4mapped, sizeof(v4mapped)) && (gid[12] & 0xf0) == 0xe0;
}

static struct mcg *group_find(struct mcg_tab *t, const uint8_t gid[16])
{
	for (unsigned i = 0; i < t->n; i++)
		if (!memcmp(t->g[i].gid, gid, 16))
			return &t->g[i];
	return NULL;
}

/* The group's socket on the wire, for an IPv4-mapped group; 0 or -errno. */
static int group_open_wire(struct emu_dev *d, struct mcg_tab *t, struct mcg *g)
{
	if (g->gid[0] == 0xff)
		return 0;   /* IPv6 multicast: the emulated wire is IPv4 (icrc.h) */
	g->group = emu_be32_get(g->gid + 12);
	/* A device daemon's device whose clients run engines (emu_dataplane_off) places
	 * no packet: it keeps the group for the checks and limits above, and each
	 * client's engine, which places its QPs' receives, joins the group on the wire
	 * itself (engine.c runs ATTACH_TO_MCG after the daemon did). */
	if (d->dataplane_off)
		return 0;
#ifdef __linux__
	struct epoll_event ev = { .events = EPOLLIN };
	int fd;

	if (t->ep < 0) {
		t->ep = epoll_create1(EPOLL_CLOEXEC);
		if (t->ep < 0)
			return -errno;
	}
	fd = emu_roce_mc_open(d->ipv4, g->group);
	if (fd < 0)
		return fd;
	ev.data.u32 = g->group;
	if (epoll_ctl(t->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	g->fd = fd;
	__atomic_fetch_add(&t->nsock, 1, __ATOMIC_RELAXED);
	return 0;
#else
	(void)d;
	(void)t;
	return -EOPNOTSUPP;
#endif
}

static int attach_to_mcg(struct emu_dev *d, struct emu_cmd *c)
{
	struct mcg_tab *t = tab_of(d);
	uint32_t qpn = (uint32_t)PRM_GET(attach_to_mcg_in, c->in, qpn);
	const uint8_t *gid = PRM_ADDR(attach_to_mcg_in, c->in, multicast_gid);
	struct emu_qp *qp = emu_obj_get(d, EMU_OBJ_QP, qpn);
	struct mcg *g;
	int rc;

	if (PRM_GET(attach_to_mcg_in, c->in, uid))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_UID);
	if (!qp)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_QPN);
	if (qp->st != EMU_QP_ST_UD || qp->gsi)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MCG_QP_NOT_UD);
	if (!emu_gid_is_multicast(gid))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MCG_NOT_MULTICAST);
	if (!t)
		return emu_cmd_fail(c, PRM_CMD_STAT_INT_ERR, PRM_SYND_MCG_NO_SOCKET);
	g = group_find(t, gid);
	if (g) {
		for (uint32_t i = 0; i < g->nqp; i++)
			if (g->qpn[i] == qpn)
				return 0;
		if (g->nqp >= t->max_qp)
			return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_LIMIT_EXCEEDED);
		g->qpn[g->nqp++] = qpn;
		return 0;
	}
	if (!t->max_qp || t->n >= t->max_groups)
		return emu_cmd_fail(c, PRM_CMD_STAT_LIM_ERR, PRM_SYND_LIMIT_EXCEEDED);
	if (t->n == t->cap) {
		unsigned cap = t->cap ? t->cap * 2 : 8;
		struct mcg *ng = realloc(t->g, cap * sizeof(*ng));

		if (!ng)
			return emu_cmd_fail(c, PRM_CMD_STAT_NO_RES, PRM_SYND_MCG_NO_SOCKET);
		t->g = ng;
		t->cap = cap;
	}
	g = &t->g[t->n];
	memset(g, 0, sizeof(*g));
	memcpy(g->gid, gid, 16);
	g->fd = -1;
	g->qpn = calloc(t->max_qp, sizeof(*g->qpn));
	if (!g->qpn)
		return emu_cmd_fail(c, PRM_CMD_STAT_NO_RES, PRM_SYND_MCG_NO_SOCKET);
	rc = group_open_wire(d, t, g);
	if (rc) {
		free(g->qpn);
		emu_log(d, EMU_LOG_WARN, "ATTACH_TO_MCG: QP 0x%x: the port cannot join IPv4 group %u.%u.%u.%u: %s",
			qpn, gid[12], gid[13], gid[14], gid[15], strerror(-rc));
		return emu_cmd_fail(c, PRM_CMD_STAT_NO_RES, PRM_SYND_MCG_NO_SOCKET);
	}
	g->qpn[g->nqp++] = qpn;
	t->n++;
	return 0;
}

/* Remove qpn from group i; the group goes with its last QP.  Whether it was there. */
static bool group_leave(struct mcg_tab *t, unsigned i, uint32_t qpn)
{
	struct mcg *g = &t->g[i];

	for (uint32_t j = 0; j < g->nqp; j++) {
		if (g->qpn[j] != qpn)
			continue;
		g->qpn[j] = g->qpn[--g->nqp];
		if (!g->nqp)
			group_drop(t, i);
		return true;
	}
	return false;
}

static int detach_from_mcg(struct emu_dev *d, struct emu_cmd *c)
{
	struct mcg_tab *t = tab_of(d);
	uint32_t qpn = (uint32_t)PRM_GET(detach_from_mcg_in, c->in, qpn);
	const uint8_t *gid = PRM_ADDR(detach_from_mcg_in, c->in, multicast_gid);
	struct mcg *g;

	if (PRM_GET(detach_from_mcg_in, c->in, uid))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_UID);
	if (!emu_obj_get(d, EMU_OBJ_QP, qpn))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_QPN);
	g = t ? group_find(t, gid) : NULL;
	if (!g || !group_leave(t, (unsigned)(g - t->g), qpn))
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_MCG_NOT_ATTACHED);
	return 0;
}

static void mcg_obj_gone(struct emu_dev *d, enum emu_obj_type type, void *obj)
{
	struct mcg_tab *t = tab_of(d);
	const struct emu_qp *qp = obj;

	if (!t || type != EMU_OBJ_QP)
		return;
	for (unsigned i = t->n; i-- > 0;)
		group_leave(t, i, qp->qpn);
}

int emu_mcg_fd(struct emu_dev *d)
{
	struct mcg_tab *t = d ? tab_of(d) : NULL;

	return t ? t->ep : -1;
}

/* Whether any group has a socket open (read by the socket's watch switches without the
 * device lock: a group opened meanwhile is watched at the next switch, sock_watch.c). */
bool emu_mcg_sockets_open(struct emu_dev *d)
{
	struct mcg_tab *t = d ? tab_of(d) : NULL;

	return t && __atomic_load_n(&t->nsock, __ATOMIC_RELAXED) != 0;
}

int emu_mcg_recv_many(struct emu_dev *d, struct emu_roce_rx_batch *b)
{
	struct mcg_tab *t = tab_of(d);

	if (!t || !t->nsock)
		return 0;
#ifdef __linux__
	struct epoll_event ev;
	struct mcg *g;

	/* one ready group a call: the caller calls again while batches come back full */
	if (epoll_wait(t->ep, &ev, 1, 0) != 1)
		return 0;
	for (unsigned i = 0; i < t->n; i++) {
		g = &t->g[i];
		if (g->fd >= 0 && g->group == ev.data.u32)
			return emu_roce_mc_recv_many(g->fd, g->group, b, MSG_DONTWAIT);
	}
#else
	(void)b;
#endif
	return 0;
}

unsigned emu_mcg_members(struct emu_dev *d, const uint8_t gid[16], const uint32_t **qpns)
{
	struct mcg_tab *t = tab_of(d);
	struct mcg *g = t ? group_find(t, gid) : NULL;

	*qpns = g ? g->qpn : NULL;
	return g ? g->nqp : 0;
}

static const struct emu_cmd_desc cmds[] = {
	EMU_CMD(ATTACH_TO_MCG, EMU_CMDF_INIT, attach_to_mcg_in, attach_to_mcg_out, attach_to_mcg),
	EMU_CMD(DETACH_FROM_MCG, EMU_CMDF_INIT, detach_from_mcg_in, detach_from_mcg_out, detach_from_mcg),
};

const struct emu_cmd_area emu_area_mcg = {
	.name = "mcg", .cmds = cmds, .ncmds = EMU_NCMDS(cmds),
	.init = mcg_init, .fini = mcg_fini, .teardown = mcg_teardown, .obj_gone = mcg_obj_gone,
};
