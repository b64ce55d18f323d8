/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tools/uvinfo: the devices uverbs opens, through the standard verbs API (uvinfo.h). */
#include "tools/uvinfo/uvinfo.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

static const char *port_state_str(enum ibv_port_state s)
{
	switch (s) {
	case IBV_PORT_DOWN: return "DOWN";
	case IBV_PORT_INIT: return "INIT";
	case IBV_PORT_ARMED: return "ARMED";
	case IBV_PORT_ACTIVE: return "ACTIVE";
	case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
	default: return "NOP";
	}
}

static unsigned mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
}

/* ibv_port_attr active_speed x active_width in Gbit/s (IBTA PortInfo encodings, as
 * ibv_devinfo prints them). */
static double port_gbps(const struct ibv_port_attr *pa)
{
	double lane;
	switch (pa->active_speed) {
	case 1: lane = 2.5; break;
	case 2: lane = 5.0; break;
	case 4: case 8: lane = 10.0; break;
	case 16: lane = 14.0; break;
	case 32: lane = 25.0; break;
	case 64: lane = 50.0; break;
	case 128: lane = 100.0; break;
	default: lane = 0; break;
	}
	unsigned w;
	switch (pa->active_width) {
	case 1: w = 1; break;
	case 2: w = 4; break;
	case 4: w = 8; break;
	case 8: w = 12; break;
	case 16: w = 2; break;
	default: w = 0; break;
	}
	return lane * w;
}

static const char *link_layer_str(uint8_t l)
{
	return l == IBV_LINK_LAYER_ETHERNET ? "Ethernet" :
	       l == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand" : "unspecified";
}

static void gid_str(const union ibv_gid *g, char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, g->raw, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

/* The URI of device i as UVERBS_DEVICES lists them (the order uverbs opens them in). */
static void device_uri(int i, char *buf, size_t len)
{
	const char *env = getenv("UVERBS_DEVICES");
	snprintf(buf, len, "%s", "");
	if (!env || !*env) {
		if (i == 0)
			snprintf(buf, len, "emu: (default)");
		return;
	}
	char tmp[1024];
	snprintf(tmp, sizeof(tmp), "%s", env);
	int k = 0;
	for (char *save = NULL, *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		/* Options of one emu: URI are comma-separated too; a token without a scheme
		 * continues the previous URI. */
		if (!strchr(tok, ':') && k > 0) {
			if (k - 1 == i) {
				size_t l = strlen(buf);
				snprintf(buf + l, len - l, ",%s", tok);
			}
			continue;
		}
		if (k == i)
			snprintf(buf, len, "%s", tok);
		k++;
	}
}

int uvi_print_devices(FILE *f, struct jw *w)
{
	int n = 0, failed = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list) {
		if (w) {
			jw_arr(w, "devices");
			jw_arr_end(w);
			jw_str(w, "devices_error", "ibv_get_device_list failed");
		} else {
			fprintf(f, "uverbs devices: none (ibv_get_device_list failed)\n");
		}
		return 1;
	}
	uvi_list_open(f, w, "devices", "uverbs devices (%d):\n", n);
	for (int i = 0; i < n; i++) {
		char uri[256];
		device_uri(i, uri, sizeof(uri));
		const char *name = ibv_get_device_name(list[i]);
		struct ibv_context *ctx = ibv_open_device(list[i]);
		struct ibv_device_attr da;
		if (!ctx || ibv_query_device(ctx, &da)) {
			failed++;
			if (w) {
				jw_obj(w, NULL);
				jw_str(w, "name", name);
				jw_str(w, "uri", uri);
				jw_str(w, "error", ctx ? "ibv_query_device failed" : "ibv_open_device failed");
				jw_obj_end(w);
			} else {
				fprintf(f, "  %s  %s  error: %s\n", name, uri,
					ctx ? "ibv_query_device failed" : "ibv_open_device failed");
			}
			if (ctx)
				ibv_close_device(ctx);
			continue;
		}
		const char *model = uvi_connectx_name(da.vendor_part_id);
		if (w) {
			jw_obj(w, NULL);
			jw_str(w, "name", name);
			jw_str(w, "uri", uri);
			jw_u64(w, "vendor_id", da.vendor_id);
			jw_u64(w, "vendor_part_id", da.vendor_part_id);
			jw_str(w, "model", model);
			jw_str(w, "fw_ver", da.fw_ver);
			jw_u64(w, "max_qp", (uint64_t)da.max_qp);
			jw_u64(w, "max_qp_wr", (uint64_t)da.max_qp_wr);
			jw_u64(w, "max_mr_size", da.max_mr_size);
			jw_arr(w, "ports");
		} else {
			fprintf(f, "  %-10s %s\n", name, uri);
			fprintf(f, "    vendor 0x%04x part %u (%s)  firmware %s  max_qp %d  max_qp_wr %d\n",
				da.vendor_id, da.vendor_part_id, model ? model : "?", da.fw_ver,
				da.max_qp, da.max_qp_wr);
		}
		for (unsigned p = 1; p <= da.phys_port_cnt; p++) {
			struct ibv_port_attr pa;
			if (ibv_query_port(ctx, (uint8_t)p, &pa)) {
				failed++;
				if (!w)
					fprintf(f, "    port %u: ibv_query_port failed\n", p);
				continue;
			}
			double gbps = port_gbps(&pa);
			if (w) {
				jw_obj(w, NULL);
				jw_u64(w, "port", p);
				jw_str(w, "state", port_state_str(pa.state));
				jw_u64(w, "active_mtu", mtu_bytes(pa.active_mtu));
				jw_u64(w, "max_mtu", mtu_bytes(pa.max_mtu));
				jw_dbl(w, "speed_gbps", gbps);
				jw_u64(w, "active_speed", pa.active_speed);
				jw_u64(w, "active_width", pa.active_width);
				jw_str(w, "link_layer", link_layer_str(pa.link_layer));
				jw_arr(w, "gids");
			} else {
				fprintf(f, "    port %u: %s  MTU %u (max %u)  speed %.0f Gbit/s  %s\n", p,
					port_state_str(pa.state), mtu_bytes(pa.active_mtu),
					mtu_bytes(pa.max_mtu), gbps, link_layer_str(pa.link_layer));
			}
			for (int g = 0; g < pa.gid_tbl_len && g < 256; g++) {
				union ibv_gid gid;
				static const uint8_t zero[16];
				if (ibv_query_gid(ctx, (uint8_t)p, g, &gid) || !memcmp(gid.raw, zero, 16))
					continue;
				struct ibv_gid_entry ge;
				int have_type = !ibv_query_gid_ex(ctx, p, (uint32_t)g, &ge, 0);
				const char *ts = !have_type ? "?" :
						 ge.gid_type == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" :
						 ge.gid_type == IBV_GID_TYPE_ROCE_V1 ? "RoCE v1" : "IB";
				char s[64];
				gid_str(&gid, s, sizeof(s));
				if (w) {
					jw_obj(w, NULL);
					jw_u64(w, "index", (uint64_t)g);
					jw_str(w, "gid", s);
					jw_str(w, "type", ts);
					jw_obj_end(w);
				} else {
					fprintf(f, "      gid[%d] %s  %s\n", g, s, ts);
				}
			}
			if (w) {
				jw_arr_end(w);
				jw_obj_end(w);
			}
		}
		if (w) {
			jw_arr_end(w);
			jw_obj_end(w);
		}
		ibv_close_device(ctx);
	}
	if (w)
		jw_arr_end(w);
	ibv_free_device_list(list);
	return failed;
}
