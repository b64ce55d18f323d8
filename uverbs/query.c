/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Device, port, GID and P_Key queries, and the sysfs attributes tools read.
 *
 * Every figure comes from the device, through the driver (hw/mlx5/mx5.h): limits,
 * vendor id and board id from mx5_device_query (the capability blocks, QUERY_ADAPTER),
 * the part id from the PCI function, the firmware version from the initialization
 * segment, port state,
 * MTU and speed from QUERY_VPORT_STATE/PAOS/PMTU/PTYS (mx5_port_query).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/platform/byteorder.h"
#include "uverbs/uv.h"

/* enum ibv_gid_type_sysfs of rdma-core's private ABI (driver.h), not in verbs.h. */
enum { UV_GID_TYPE_SYSFS_IB_ROCE_V1 = 0, UV_GID_TYPE_SYSFS_ROCE_V2 = 1 };

static enum ibv_mtu uv_mtu_enum(unsigned bytes)
{
	if (bytes >= 4096) return IBV_MTU_4096;
	if (bytes >= 2048) return IBV_MTU_2048;
	if (bytes >= 1024) return IBV_MTU_1024;
	if (bytes >= 512) return IBV_MTU_512;
	return IBV_MTU_256;
}

/* Ethernet speed as IB width x lane speed, the way mlx5 RoCE ports report it
 * (width: 1 = 1X, 2 = 4X, 16 = 2X; speed: 4 = QDR 10G, 32 = EDR 25G, 64 = HDR 50G,
 * 128 = NDR 100G per lane). */
static void uv_speed(uint32_t mbps, uint8_t *width, uint8_t *speed)
{
	struct { uint32_t mbps; uint8_t w, s; } t[] = {
		{ 400000, 2, 128 }, { 200000, 2, 64 }, { 100000, 2, 32 }, { 50000, 16, 32 },
		{ 40000, 2, 4 }, { 25000, 1, 32 }, { 10000, 1, 4 }, { 1000, 1, 1 },
	};
	*width = 1;
	*speed = 1;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (mbps >= t[i].mbps) {
			*width = t[i].w;
			*speed = t[i].s;
			return;
		}
}

int uv_port_attr(struct uv_dev *d, uint8_t port, struct ibv_port_attr *a)
{
	if (!uv_port_valid(d, port))
		return EINVAL;
	int rc = mx5_port_query(d->mx5, port, &d->port);
	if (rc)
		return uv_err(d, rc, "query port");
	const struct mx5_port_info *p = &d->port;
	memset(a, 0, sizeof(*a));
	a->state = (enum ibv_port_state)p->state;
	a->max_mtu = uv_mtu_enum(p->max_mtu);
	a->active_mtu = p->active_mtu ? (enum ibv_mtu)p->active_mtu : uv_mtu_enum(p->oper_mtu);
	a->gid_tbl_len = (int)d->info.gid_table_len;
	/* RoCE: connection manager over IP-based GIDs (what mlx5 RoCE ports report). */
	a->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	a->max_msg_sz = d->info.log_max_msg ? 1u << d->info.log_max_msg : 1u << 30;
	a->pkey_tbl_len = (uint16_t)d->info.pkey_table_len;
	a->max_vl_num = 1;
	uv_speed(p->speed_mbps, &a->active_width, &a->active_speed);
	/* phys_state (IBTA PortPhysicalState): 5 LinkUp, 3 Disabled */
	a->phys_state = p->state == MX5_PORT_ACTIVE ? 5 : 3;
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	return 0;
}

int uv_query_port_op(struct ibv_context *c, uint8_t port, struct ibv_port_attr *out, size_t len)
{
	if (!c || !out)
		return uv_errno(EINVAL);
	struct uv_dev *d = uv_ctx_dev(c);
	struct ibv_port_attr a;
	pthread_mutex_lock(&d->lock);
	int rc = uv_port_attr(d, port, &a);
	pthread_mutex_unlock(&d->lock);
	if (rc)
		return uv_errno(rc);
	memcpy(out, &a, len < sizeof(a) ? len : sizeof(a));
	return 0;
}

/* The exported symbol: older binaries pass rdma-core's _compat_ibv_port_attr, which is
 * struct ibv_port_attr up to and including `flags`; write no more than that. */
#undef ibv_query_port
UV_EXPORT int ibv_query_port(struct ibv_context *context, uint8_t port_num,
			     struct _compat_ibv_port_attr *port_attr)
{
	return uv_query_port_op(context, port_num, (struct ibv_port_attr *)(void *)port_attr,
				offsetof(struct ibv_port_attr, flags) + 1);
}

static void uv_fw_ver(const struct uv_dev *d, char *buf, size_t len)
{
	/* mlx5's format: major.minor.subminor with four digits */
	snprintf(buf, len, "%u.%u.%04u", d->info.fw_major, d->info.fw_minor, d->info.fw_subminor);
}

void uv_device_attr(struct uv_dev *d, struct ibv_device_attr *a)
{
	const struct mx5_device_info *i = &d->info;
	memset(a, 0, sizeof(*a));
	uv_fw_ver(d, a->fw_ver, sizeof(a->fw_ver));
	a->node_guid = htobe64(d->node_guid);
	a->sys_image_guid = htobe64(d->node_guid);
	a->max_mr_size = i->max_mr_size;
	/* any multiple of the host page (memory is pinned in host pages) */
	a->page_size_cap = ~((uint64_t)i->host_page_size - 1);
	a->vendor_id = d->info.ieee_vendor_id;
	a->vendor_part_id = i->device_id;
	a->hw_ver = 0;
	a->max_qp = (int)i->max_qp;
	a->max_qp_wr = (int)i->max_qp_wr;
	a->device_cap_flags = IBV_DEVICE_PORT_ACTIVE_EVENT | IBV_DEVICE_RC_RNR_NAK_GEN |
			      IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_CHANGE_PHY_PORT;
	/* Linux mlx5_ib_query_device: IB_DEVICE_XRC with cmd_hca_cap.xrc */
	if (i->xrc)
		a->device_cap_flags |= IBV_DEVICE_XRC;
	a->max_sge = (int)i->max_sge;
	a->max_sge_rd = (int)i->max_sge;
	a->max_cq = (int)i->max_cq;
	a->max_cqe = (int)i->max_cqe;
	a->max_mr = (int)i->max_mr;
	a->max_pd = (int)i->max_pd;
	a->max_qp_rd_atom = (int)i->max_qp_rd_atom;
	a->max_qp_init_rd_atom = (int)i->max_qp_init_rd_atom;
	uint64_t res = (uint64_t)i->max_qp_rd_atom * i->max_qp;
	a->max_res_rd_atom = res > 0x7fffffff ? 0x7fffffff : (int)res;
	a->atomic_cap = i->atomic ? IBV_ATOMIC_HCA : IBV_ATOMIC_NONE;
	a->max_ah = 0x7fffffff;   /* address handles live in host memory only */
	a->max_srq = (int)i->max_srq;
	/* Linux mlx5_ib_query_device: groups, QPs per group, and their product */
	a->max_mcast_grp = (int)i->max_mcast_grp;
	a->max_mcast_qp_attach = (int)i->max_mcast_qp_attach;
	a->max_total_mcast_qp_attach = (int)((uint64_t)i->max_mcast_grp * i->max_mcast_qp_attach > 0x7fffffff
						     ? 0x7fffffff
						     : (uint64_t)i->max_mcast_grp * i->max_mcast_qp_attach);
	a->max_srq_wr = (int)i->max_srq_wr;
	a->max_srq_sge = (int)i->max_srq_sge;
	a->max_pkeys = (uint16_t)i->pkey_table_len;
	a->local_ca_ack_delay = (uint8_t)i->local_ca_ack_delay;
	a->phys_port_cnt = i->num_ports;
}

static int uv_query_device_body(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	if (!context || !device_attr)
		return EINVAL;
	struct uv_dev *d = uv_dev_lock(context);
	uv_device_attr(d, device_attr);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

UV_EXPORT int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	return uv_errno(uv_query_device_body(context, device_attr));
}

int uv_query_device_ex_op(struct ibv_context *c, const struct ibv_query_device_ex_input *in,
			  struct ibv_device_attr_ex *a, size_t len)
{
	if (!c || !a)
		return EINVAL;
	if (in && in->comp_mask)
		return EINVAL;
	struct ibv_device_attr_ex x;
	memset(&x, 0, sizeof(x));
	struct uv_dev *d = uv_dev_lock(c);
	uv_device_attr(d, &x.orig_attr);
	pthread_mutex_unlock(&d->lock);
	/* no ODP, timestamps, TSO, RSS, pacing, TM or device memory: all zero */
	x.phys_port_cnt_ex = x.orig_attr.phys_port_cnt;
	size_t n = len < sizeof(x) ? len : sizeof(x);
	memcpy(a, &x, n);
	return 0;
}

/* ------------------------------------------------------------------ GIDs */

static const uint8_t uv_v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

static bool uv_is_v4mapped(const uint8_t gid[16])
{
	return !memcmp(gid, uv_v4mapped, 12);
}

/* The port's GID table, the same on every device (emulated, vfio, kext):
 *   0  fe80::EUI-64(permanent MAC), RoCE v2: the link-local address, always there
 *   1  ::ffff:a.b.c.d, RoCE v2: the port's first IPv4 address, when it has one
 *   2… the other addresses, in the order given, RoCE v2
 * The addresses are the device's own (an emulated port answers on its loopback address,
 * mx5_port_addrs) followed by the user's (UVERBS_GIDS / UVERBS_CONFIG, netcfg.c).
 * Index 0 matches Linux's first default GID and Apple's Thunderbolt RDMA ports; index 1
 * is where Apple's ports publish the IPv4-mapped GID and where MLX's JACCL looks
 * (docs/architecture.md, "RoCE addressing", gives the reasons and Linux's order). */
int uv_program_gids(struct uv_dev *d)
{
	uint8_t addrs[UV_MAX_ADDRS][16];
	struct shim_dev *s = mx5_device_shim(d->mx5);
	unsigned n = (unsigned)mx5_port_addrs(d->mx5, 1, addrs, UV_MAX_ADDRS);
	uint8_t user[UV_MAX_ADDRS][16];
	unsigned nu = uv_netcfg_addrs(d->ibdev.name, s ? s->pci.bdf : "", user, UV_MAX_ADDRS);
	for (unsigned i = 0; i < nu && n < UV_MAX_ADDRS; i++) {
		bool dup = false;
		for (unsigned j = 0; j < n; j++)
			dup = dup || !memcmp(addrs[j], user[i], 16);
		if (!dup)
			memcpy(addrs[n++], user[i], 16);
	}
	/* the first IPv4 address goes to index 1, ahead of the rest */
	for (unsigned i = 0; i < n; i++)
		if (uv_is_v4mapped(addrs[i])) {
			uint8_t t[16];
			memcpy(t, addrs[i], 16);
			memmove(addrs[1], addrs[0], (size_t)i * 16);
			memcpy(addrs[0], t, 16);
			break;
		}

	static const uint8_t nomac[6];
	unsigned len = d->info.gid_table_len;
	struct mx5_gid_entry e;
	int rc;
	if (!memcmp(d->mac, nomac, 6)) {
		uv_log(UV_LOG_WARN, "%s: the port reports no MAC address: GID table left empty", d->ibdev.name);
		return 0;
	}
	if (len == 0)
		return 0;
	mx5_gid_entry_link_local(&e, d->mac);
	if ((rc = mx5_gid_set(d->mx5, 1, 0, &e)))
		return rc;
	for (unsigned i = 0; i < n; i++) {
		char txt[INET6_ADDRSTRLEN];
		uv_format_addr(addrs[i], txt, sizeof(txt));
		if (1 + i >= len) {
			uv_log(UV_LOG_WARN, "%s: GID table full (%u entries): %s left out", d->ibdev.name, len, txt);
			break;
		}
		mx5_gid_entry_ip(&e, addrs[i], d->mac);
		if ((rc = mx5_gid_set(d->mx5, 1, 1 + i, &e)))
			return rc;
		uv_log(UV_LOG_INFO, "%s: GID %u = %s", d->ibdev.name, 1 + i, txt);
	}
	if (!n)
		uv_log(UV_LOG_INFO, "%s: no IP address configured (UVERBS_GIDS): only the link-local GID 0",
		       d->ibdev.name);
	return 0;
}

/* The destination MAC of a RoCE peer, as Linux's ib_resolve_eth_dmac (drivers/
 * infiniband/core/verbs.c) finds it, with the user's static table standing in for the
 * kernel's neighbour table:
 *   1. the static neighbour table (UVERBS_NEIGH / UVERBS_CONFIG),
 *   2. one of this port's own GIDs: the port's MAC,
 *   3. a link-local fe80::/64 address with an EUI-64 interface id: the MAC inside it
 *      (rdma_get_ll_mac in include/rdma/ib_addr.h; RFC 4291 appendix A),
 *   4. a multicast address: 33:33 + the low 32 bits (RFC 2464 s.7), or for IPv4
 *      01:00:5e + the low 23 bits (RFC 1112 6.4) (rdma_get_mcast_mac, ib_addr.h),
 *   5. the device's own network, when it is one (the emulator's segment),
 * otherwise EHOSTUNREACH, with a line naming the missing entry: never a made-up MAC. */
int uv_resolve_dmac(struct uv_dev *d, const uint8_t gid[16], uint8_t mac[6])
{
	if (!uv_netcfg_neigh(gid, mac))
		return 0;
	if (d->mx5)
		for (unsigned i = 0; i < d->info.gid_table_len; i++) {
			struct mx5_gid_entry e;
			if (!mx5_gid_get(d->mx5, 1, i, &e) && e.valid && !memcmp(e.gid, gid, 16)) {
				memcpy(mac, e.mac, 6);
				return 0;
			}
		}
	if (gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80 && gid[11] == 0xff && gid[12] == 0xfe) {
		mac[0] = gid[8] ^ 0x02;
		mac[1] = gid[9];
		mac[2] = gid[10];
		mac[3] = gid[13];
		mac[4] = gid[14];
		mac[5] = gid[15];
		return 0;
	}
	if (gid[0] == 0xff) {
		mac[0] = 0x33;
		mac[1] = 0x33;
		memcpy(mac + 2, gid + 12, 4);
		return 0;
	}
	if (uv_is_v4mapped(gid) && (gid[12] & 0xf0) == 0xe0) {
		mac[0] = 0x01;
		mac[1] = 0x00;
		mac[2] = 0x5e;
		mac[3] = gid[13] & 0x7f;
		mac[4] = gid[14];
		mac[5] = gid[15];
		return 0;
	}
	if (d->mx5 && !mx5_port_neigh(d->mx5, gid, mac))
		return 0;
	char txt[INET6_ADDRSTRLEN];
	uv_format_addr(gid, txt, sizeof(txt));
	uv_log(UV_LOG_ERROR, "%s: no neighbour entry for %s: give its MAC in UVERBS_NEIGH "
	       "(%s=xx:xx:xx:xx:xx:xx) or a 'neigh' line of UVERBS_CONFIG", d->ibdev.name, txt, txt);
	memset(mac, 0, 6);
	return EHOSTUNREACH;
}

static int uv_gid_get(struct ibv_context *c, uint32_t port, uint32_t index, struct mx5_gid_entry *e)
{
	struct uv_dev *d = uv_ctx_dev(c);
	if (!uv_port_valid(d, port) || index >= d->info.gid_table_len)
		return EINVAL;
	pthread_mutex_lock(&d->lock);
	int rc = mx5_gid_get(d->mx5, (uint8_t)port, index, e);
	pthread_mutex_unlock(&d->lock);
	return rc ? EINVAL : 0;
}

UV_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
			    union ibv_gid *gid)
{
	struct mx5_gid_entry e;
	if (!context || !gid || index < 0)
		return uv_minus1(EINVAL);
	if (uv_gid_get(context, port_num, (uint32_t)index, &e))
		return uv_minus1(EINVAL);
	/* an unset entry reads as the zero GID, as the kernel's table does */
	memset(gid, 0, sizeof(*gid));
	if (e.valid)
		memcpy(gid->raw, e.gid, 16);
	return 0;
}

UV_EXPORT int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
				uint32_t gid_index, struct ibv_gid_entry *entry, uint32_t flags,
				size_t entry_size)
{
	struct mx5_gid_entry e;
	if (!context || !entry || flags)
		return EINVAL;
	if (entry_size < sizeof(struct ibv_gid_entry))
		return EINVAL;
	int rc = uv_gid_get(context, port_num, gid_index, &e);
	if (rc)
		return rc;
	if (!e.valid)
		return ENODATA;
	memset(entry, 0, entry_size);
	memcpy(entry->gid.raw, e.gid, 16);
	entry->gid_index = gid_index;
	entry->port_num = port_num;
	entry->gid_type = e.type == MX5_GID_ROCE_V1 ? IBV_GID_TYPE_ROCE_V1 : IBV_GID_TYPE_ROCE_V2;
	entry->ndev_ifindex = 0;   /* no kernel net device behind it */
	return 0;
}

UV_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
				       size_t max_entries, uint32_t flags, size_t entry_size)
{
	if (!context || !entries || flags || entry_size < sizeof(struct ibv_gid_entry))
		return -EINVAL;
	struct uv_dev *d = uv_ctx_dev(context);
	size_t n = 0;
	for (uint32_t port = 1; port <= d->info.num_ports; port++)
		for (uint32_t i = 0; i < d->info.gid_table_len; i++) {
			struct ibv_gid_entry *e = (struct ibv_gid_entry *)(void *)((char *)entries + n * entry_size);
			struct ibv_gid_entry tmp;
			if (_ibv_query_gid_ex(context, port, i, &tmp, 0, sizeof(tmp)))
				continue;
			if (n == max_entries)
				return -EINVAL;
			memset(e, 0, entry_size);
			*e = tmp;
			n++;
		}
	return (ssize_t)n;
}

/* rdma-core's private ABI (IBVERBS_PRIVATE_34), imported by Debian's ibv_devinfo. */
UV_EXPORT int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
				 unsigned int index, int *type);
UV_EXPORT int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
				 unsigned int index, int *type)
{
	struct mx5_gid_entry e;
	if (!context || !type)
		return EINVAL;
	if (uv_gid_get(context, port_num, index, &e) || !e.valid)
		return uv_minus1(EINVAL);
	*type = e.type == MX5_GID_ROCE_V1 ? UV_GID_TYPE_SYSFS_IB_ROCE_V1 : UV_GID_TYPE_SYSFS_ROCE_V2;
	return 0;
}

UV_EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
			     __be16 *pkey)
{
	if (!context || !pkey)
		return uv_minus1(EINVAL);
	struct uv_dev *d = uv_ctx_dev(context);
	if (!uv_port_valid(d, port_num) || index < 0 || (uint32_t)index >= d->info.pkey_table_len)
		return uv_minus1(EINVAL);
	/* RoCE has the one default, full-membership P_Key (IBTA A17.4.1) */
	*pkey = htobe16(0xffff);
	return 0;
}

UV_EXPORT int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	__be16 p;
	if (ibv_query_pkey(context, port_num, 0, &p))
		return -1;
	if ((be16toh(pkey) & 0x7fff) == (be16toh(p) & 0x7fff))
		return 0;
	return uv_minus1(ENOENT);
}

/* ------------------------------------------------------------------ sysfs */

/* A port's rate as Linux's rate_show() prints it: lane rate in tenths of Gb/s by IB
 * speed (SDR 2.5 ... NDR 100), times the width, "%d%s Gb/sec (%dX%s)". */
static void uv_sysfs_rate(const struct ibv_port_attr *a, char *out, size_t len)
{
	static const struct { uint8_t speed; unsigned tenths; const char *name; } t[] = {
		{ 1, 25, "" }, { 2, 50, " DDR" }, { 4, 100, " QDR" }, { 8, 100, " FDR10" },
		{ 16, 140, " FDR" }, { 32, 250, " EDR" }, { 64, 500, " HDR" }, { 128, 1000, " NDR" },
	};
	unsigned tenths = 25, w;
	const char *name = "";
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].speed == a->active_speed) {
			tenths = t[i].tenths;
			name = t[i].name;
		}
	switch (a->active_width) {   /* ib_width_enum_to_int() */
	case 2: w = 4; break;
	case 4: w = 8; break;
	case 8: w = 12; break;
	case 16: w = 2; break;
	default: w = 1; break;
	}
	tenths *= w;
	snprintf(out, len, "%u%s Gb/sec (%uX%s)", tenths / 10, tenths % 10 ? ".5" : "", w, name);
}

static int uv_sysfs_value(struct uv_dev *d, const char *file, char *out, size_t len)
{
	unsigned port, idx;
	char tail[64];
	struct mx5_gid_entry e;

	if (!strcmp(file, "board_id")) {
		snprintf(out, len, "%s", d->info.psid);
	} else if (!strcmp(file, "fw_ver")) {
		uv_fw_ver(d, out, len);
	} else if (!strcmp(file, "node_guid") || !strcmp(file, "sys_image_guid")) {
		uint64_t g = d->node_guid;
		snprintf(out, len, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
			 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
	} else if (!strcmp(file, "node_type")) {
		snprintf(out, len, "1: CA");
	} else if (!strcmp(file, "hca_type")) {
		snprintf(out, len, "MT%u", d->info.device_id);
	} else if (!strcmp(file, "hw_rev")) {
		snprintf(out, len, "0x0");
	} else if (sscanf(file, "ports/%u/%63s", &port, tail) == 2) {
		struct ibv_port_attr a;
		if (uv_port_attr(d, (uint8_t)port, &a))
			return -1;
		if (!strcmp(tail, "state")) {
			/* Linux drivers/infiniband/core/sysfs.c, state_show(): "%d: %s" with
			 * its own upper-case names, not ibv_port_state_str()'s */
			static const char *const names[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE",
							     "ACTIVE_DEFER" };
			unsigned st = (unsigned)a.state;
			snprintf(out, len, "%u: %s", st, st < sizeof(names) / sizeof(names[0]) ? names[st] : "UNKNOWN");
		} else if (!strcmp(tail, "link_layer")) {
			snprintf(out, len, "Ethernet");
		} else if (!strcmp(tail, "phys_state")) {
			snprintf(out, len, "%d: %s", a.phys_state, a.phys_state == 5 ? "LinkUp" : "Disabled");
		/* The rest of a port's files, as Linux drivers/infiniband/core/sysfs.c shows
		 * them (lid_show, sm_lid_show: "0x%x"; lid_mask_count_show, sm_sl_show: "%u";
		 * cap_mask_show: "0x%08x"; rate_show; show_port_pkey: "0x%04x"), which
		 * libibumad reads for ibstat (libibumad/umad.c, get_port()). */
		} else if (!strcmp(tail, "lid")) {
			snprintf(out, len, "0x%x", a.lid);
		} else if (!strcmp(tail, "sm_lid")) {
			snprintf(out, len, "0x%x", a.sm_lid);
		} else if (!strcmp(tail, "lid_mask_count")) {
			snprintf(out, len, "%u", a.lmc);
		} else if (!strcmp(tail, "sm_sl")) {
			snprintf(out, len, "%u", a.sm_sl);
		} else if (!strcmp(tail, "cap_mask")) {
			snprintf(out, len, "0x%08x", a.port_cap_flags);
		} else if (!strcmp(tail, "rate")) {
			uv_sysfs_rate(&a, out, len);
		} else if (sscanf(tail, "pkeys/%u", &idx) == 1) {
			if (idx >= d->info.pkey_table_len)
				return -1;
			snprintf(out, len, "0x%04x", idx ? 0 : 0xffff);   /* ibv_query_pkey's table */
		} else if (sscanf(tail, "gids/%u", &idx) == 1 ||
			   sscanf(tail, "gid_attrs/types/%u", &idx) == 1) {
			if (idx >= d->info.gid_table_len || mx5_gid_get(d->mx5, (uint8_t)port, idx, &e))
				return -1;
			if (!strncmp(tail, "gids/", 5)) {   /* the GID, zero when unset */
				uint8_t z[16] = { 0 };
				const uint8_t *g = e.valid ? e.gid : z;
				snprintf(out, len, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
					 g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10],
					 g[11], g[12], g[13], g[14], g[15]);
			} else {
				if (!e.valid)
					return -1;   /* the kernel answers EINVAL for an unset entry */
				snprintf(out, len, "%s", e.type == MX5_GID_ROCE_V1 ? "IB/RoCE v1" : "RoCE v2");
			}
		} else {
			return -1;
		}
	} else {
		return -1;
	}
	return 0;
}

UV_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	if (!dir || !file || !buf || !size)
		return uv_minus1(EINVAL);
	/* librdmacm's ABI check (cma.c, check_abi_version_sysfs): rdma_cm.c answers the
	 * rdma_cm device's commands at RDMA_USER_CM_ABI_VERSION 4 */
	if (!strcmp(dir, "/sys") && !strcmp(file, "class/misc/rdma_cm/abi_version")) {
		snprintf(buf, size, "4");
		return (int)strlen(buf);
	}
	unsigned n;
	struct uv_dev *devs = uv_devices(&n);
	for (unsigned i = 0; i < n; i++) {
		struct uv_dev *d = &devs[i];
		if (strcmp(dir, d->ibdev.ibdev_path))
			continue;
		char val[128];
		pthread_mutex_lock(&d->lock);
		int rc = d->mx5 ? 0 : uv_dev_up(d);
		if (!rc)
			rc = uv_sysfs_value(d, file, val, sizeof(val));
		uv_dev_down_if_idle(d);
		pthread_mutex_unlock(&d->lock);
		if (rc)
			return uv_minus1(ENOENT);
		size_t l = strlen(val);
		if (l >= size)
			l = size - 1;
		memcpy(buf, val, l);
		buf[l] = 0;
		return (int)l;
	}
	/* anything else is a real file (rdma-core semantics: trailing newline dropped) */
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t len = read(fd, buf, size);
	close(fd);
	if (len < 0)
		return -1;
	if ((size_t)len == size)
		len--;
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	buf[len] = 0;
	return (int)len;
}

UV_EXPORT int ibv_read_ibdev_sysfs_file(char *buf, size_t size, struct ibv_device *dev,
					const char *fmt, ...);
UV_EXPORT int ibv_read_ibdev_sysfs_file(char *buf, size_t size, struct ibv_device *dev,
					const char *fmt, ...)
{
	char file[256];
	va_list ap;
	if (!dev)
		return uv_minus1(EINVAL);
	va_start(ap, fmt);
	vsnprintf(file, sizeof(file), fmt, ap);
	va_end(ap);
	return ibv_read_sysfs_file(dev->ibdev_path, file, buf, size);
}

UV_EXPORT const char *ibv_get_sysfs_path(void)
{
	return "/sys";
}
