/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/mlx5 internals shared by the control-plane files (device.c, init.c, pages.c,
 * health.c, eq.c, uar.c, pd.c, mr.c, cq_ctrl.c, qp_ctrl.c, srq.c, gid.c, port.c).
 * Not for uverbs or tools: they use mx5.h. */
#ifndef UVERBS_HW_MLX5_MX5_INTERNAL_H
#define UVERBS_HW_MLX5_MX5_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "firmware-cmd/cmdq.h"
#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "hw/mlx5/mx5.h"
#include "hw/platform/bits.h"
#include "hw/platform/list.h"
#include "hw/shim/mmio.h"
#include "hw/shim/shim.h"

/* Firmware pages are 4 KiB whatever the host page is (PRM "Firmware Pages";
 * MANAGE_PAGES pas entries address 4 KiB pages). */
#define MX5_FW_PAGE_SHIFT 12
#define MX5_FW_PAGE_SIZE (1u << MX5_FW_PAGE_SHIFT)

/* Capability blocks are 0x800 bits (cmd_hca_cap, roce_cap, atomic_caps, odp_cap). */
#define MX5_CAP_BYTES 0x100
#define MX5_CAP_TYPES 5

#define MX5_MAX_COMP_EQS 64
#define MX5_MAX_PORTS 2
#define MX5_GID_MAX 256

/* One host allocation carved into firmware pages (host page >= 4 KiB). */
struct mx5_page_chunk {
	struct shim_dma dma;
	uint64_t used;          /* bit i: firmware page i of this chunk is held by the device */
	unsigned npages;        /* firmware pages in the chunk */
};

struct mx5_pages {
	struct mx5_page_chunk *chunks;
	size_t nchunks, cap;
	size_t hint;             /* a chunk that recently had a free page */
	size_t chunk_bytes;
	struct mx5_page_stats st;
};

struct mx5_eq {
	struct mx5_device *dev;
	uint32_t eqn;
	unsigned vector;
	struct shim_dma buf;
	uint32_t nent;          /* 2^log_eq_size entries of 64 bytes */
	uint32_t cons;          /* consumer counter (owner bit from its wrap) */
	bool created;
	bool async;
	bool remote;            /* the device daemon's EQ: events arrive through the shim */
};

struct mx5_uar {
	uint32_t index;         /* UAR page number from ALLOC_UAR */
	uint64_t bar_off;       /* offset of the page in BAR0 */
	size_t page_bytes;      /* 2^(log_uar_page_sz + 12) */
	bool allocated;
};

/* UAR pages allocated past the first one, for BlueFlame registers of their own. */
#define MX5_MAX_XUARS 256

/* A QP's BlueFlame register (uar.c): its UAR (qpc.uar_page), BAR0 offset and the size
 * of one of its two halves (0: doorbells only, on the register every such QP shares). */
struct mx5_bf_reg {
	uint32_t uar_index;
	uint64_t off;
	uint32_t half;
	int16_t uar_slot;       /* 0 the first UAR, 1.. the extra ones; -1 shared */
	uint8_t reg;
};

struct mx5_device {
	/* the process that opened it: a child of fork() gets its commands refused (mx5_exec) */
	pid_t owner_pid;
	struct shim_dev *shim;
	struct shim_bar bar0;
	struct cmdq *cmdq;
	char err[MX5_ERR_LEN];
	struct mx5_open_attr attr;
	/* firmware status and syndrome of the last mx5_exec (0: success or no answer) */
	uint8_t cmd_status;
	uint32_t cmd_syndrome;

	/* bring-up progress, so a failure part-way tears down exactly what was done */
	bool hca_enabled, hca_inited, roce_enabled, cmd_event_mode, shut_down;

	uint16_t fw_major, fw_minor, fw_subminor, cmdif_rev;
	/* QUERY_ADAPTER, asked once by mx5_device_query (device.c) */
	bool adapter_queried;
	uint32_t ieee_vendor_id;
	char psid[MX5_PSID_LEN + 1];
	size_t host_page;
	unsigned log_host_page;

	uint8_t caps[MX5_CAP_TYPES][2][MX5_CAP_BYTES];  /* [type][cur] */
	bool have_caps[MX5_CAP_TYPES];

	struct mx5_pages pages;
	struct mx5_uar uar;
	struct mx5_eq async_eq;
	struct mx5_eq *comp_eqs[MX5_MAX_COMP_EQS];
	unsigned ncomp_vectors;

	uint8_t q_counter_set;     /* counters.c: the set every QP names; 0 none */
	/* health watch (health.c) */
	enum mx5_health_state health;
	uint32_t last_health_counter;
	uint64_t health_sample_ns;     /* when the last counted sample was taken */
	unsigned health_poll_ms;       /* samples count at least this far apart */
	unsigned health_max_misses;    /* unchanged samples in a row that mean compromised */
	unsigned health_reports;       /* stalls reported (health.c) */
	unsigned health_misses;
	bool health_primed;

	/* what bring-up chose and what it cost (mx5_device_bringup_info) */
	struct mx5_bringup_info bi;
	uint64_t init_wait_ns;

	mx5_event_fn event_fn;
	void *event_ctx;
	/* completions on CQs made by a device daemon's clients (mx5_device_set_comp_route) */
	void (*comp_route)(void *ctx, uint32_t cqn);
	void *comp_route_ctx;
	/* attached through a device daemon (shim_ops.cmd): no bring-up, commands and
	 * events go through the shim (init.c mx5_attach) */
	bool remote;

	struct plat_list pds, mrs, cqs, qps, srqs;   /* objects, so teardown finds them */
	struct plat_list xrcds;        /* XRC domains (xrcd.c) */
	struct mx5_xrc_devr *xrc_devr; /* the device's own XRC objects, once an XRC QP exists */
	struct {
		struct mx5_cq **buckets;
		uint32_t nbuckets, n;
	} cq_index;                    /* cqn -> CQ for completion events (cq_index.c) */
	/* BlueFlame registers: each QP writes its own (two threads posting to two QPs
	 * must never burst into one buffer); extra UAR pages when the first runs out */
	struct mx5_uar xuar[MX5_MAX_XUARS];
	unsigned nxuar, xuar_limit;
	uint16_t bf_busy[1 + MX5_MAX_XUARS];  /* bit r: register r of UAR slot taken */
	uint64_t mkey_mtt_limit; /* 0: from log_max_klm_list_size / translation size */
	uint32_t mkey_variant;   /* mkey_7_0 rotation */

	struct mx5_gid_entry gids[MX5_MAX_PORTS][MX5_GID_MAX];

	/* page requests collected by an EQ drain, not yet served (eq.c); cmd_nested
	 * routes mx5_exec to the command engine's second slot while they are served
	 * from inside a command's wait */
	int64_t pending_pages;
	bool pending_release_all;
	bool in_page_service;
	bool cmd_nested;

	/* mirror of the initialization segment, refreshed dword by dword from BAR0 so
	 * that its fields are read with the initial_seg accessors */
	uint8_t iseg[PRM_SIZE(initial_seg)];
};

/* Load the BAR0 dwords holding bits [bit_off, bit_off+width) into dev->iseg. */
void mx5_iseg_load(struct mx5_device *dev, unsigned bit_off, unsigned width);
#define MX5_ISEG_GET(dev, field)                                                      \
	(mx5_iseg_load((dev), PRM_OFF(initial_seg, field), PRM_WIDTH(initial_seg, field)), \
	 PRM_GET(initial_seg, (dev)->iseg, field))

/* error reporting: "step: detail" into dev->err; returns err (a negative errno) */
int mx5_fail(struct mx5_device *dev, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A command failed: "<what>: <cmdq error>". */
int mx5_cmd_fail(struct mx5_device *dev, int err, const char *what);

/* Run a command built with PRM_SET; a zero-initialised out of outlen bytes. */
int mx5_exec(struct mx5_device *dev, const void *in, size_t inlen, void *out, size_t outlen);
/* -EPERM (with the device's error text) in a child of fork() of the process that
 * opened dev, else 0: before a command and before memory is taken for an object. */
int mx5_refuse_fork_child(struct mx5_device *dev);
/* A command whose input is only its opcode (device.c); a failure is reported as
 * "step: <cmdq error>". */
int mx5_exec_bare(struct mx5_device *dev, uint16_t opcode, size_t inlen, void *out, size_t outlen,
		  const char *step);

uint64_t mx5_now_ns(void);
void mx5_sleep_us(unsigned us);

/* Log to stderr when UVERBS_LOG asks for this level (error, warn, info, debug):
 * "uverbs mx5 <level>: <message>".  Nothing otherwise. */
enum mx5_log_level { MX5_LOG_ERROR = 1, MX5_LOG_WARN, MX5_LOG_INFO, MX5_LOG_DEBUG };
void mx5_log(enum mx5_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* init.c */
int mx5_bringup(struct mx5_device *dev);
/* A function whose daemon already brought it up: read its capabilities, take a UAR and
 * a counter set of our own; no pages, EQs or command queue here. */
int mx5_attach(struct mx5_device *dev);
/* Fill dev->bi from the pages and capabilities, and log it at info. */
void mx5_bringup_summary(struct mx5_device *dev);
/* qpc.ts_format for new QPs (Linux include/linux/mlx5/qp.h mlx5_get_qp_default_ts). */
uint8_t mx5_qp_default_ts(const struct mx5_device *dev);
void mx5_teardown(struct mx5_device *dev);

/* pages.c */
int mx5_pages_query(struct mx5_device *dev, unsigned op_mod, int32_t *npages);
int mx5_pages_give(struct mx5_device *dev, uint32_t n, unsigned stage);
int mx5_pages_reclaim(struct mx5_device *dev, uint32_t n, uint32_t *got);
int mx5_pages_reclaim_all(struct mx5_device *dev);
void mx5_pages_free_all(struct mx5_device *dev);
int mx5_pages_request(struct mx5_device *dev, int32_t npages);
void mx5_pages_released_all(struct mx5_device *dev);

/* uar.c */
int mx5_uar_alloc(struct mx5_device *dev);
void mx5_uar_free(struct mx5_device *dev);
/* counters.c: the queue counter set every QP names (0 when the device has none) */
int mx5_counters_alloc(struct mx5_device *dev);
void mx5_counters_free(struct mx5_device *dev);
uint8_t mx5_counters_set_id(const struct mx5_device *dev);
void mx5_uar_bf_get(struct mx5_device *dev, struct mx5_bf_reg *out);
void mx5_uar_bf_put(struct mx5_device *dev, const struct mx5_bf_reg *r);

/* eq.c */
int mx5_eq_create(struct mx5_device *dev, struct mx5_eq *eq, unsigned vector, bool async,
		  uint32_t nent);
void mx5_eq_destroy(struct mx5_device *dev, struct mx5_eq *eq);
void mx5_eq_destroy_all_comp(struct mx5_device *dev);
int mx5_eq_enable_cmd_events(struct mx5_device *dev);
void mx5_after_cmd(struct mx5_device *dev);
/* Events the device daemon routed to this process (attached devices); returns how many. */
int mx5_remote_events(struct mx5_device *dev);
void mx5_cq_dispatch_comp(struct mx5_device *dev, uint32_t cqn);
void mx5_qp_async_event(struct mx5_device *dev, uint32_t qpn, enum mx5_event_type type);
int mx5_vport_roce(struct mx5_device *dev, bool enable);
void mx5_raise_event(struct mx5_device *dev, enum mx5_event_type type, uint32_t num,
		     uint8_t eqe_type, uint8_t synd);

/* health.c */
void mx5_mark_fatal(struct mx5_device *dev, enum mx5_health_state why, uint8_t synd);
/* Let the command engine look at health while a command waits (bring-up, once the
 * command interface is ours). */
void mx5_health_watch_commands(struct mx5_device *dev);

/* objects: called at teardown to destroy what the caller left, and on fatal error */
void mx5_objects_destroy_all(struct mx5_device *dev);
void mx5_objects_flush(struct mx5_device *dev);

/* helpers */
static inline const void *mx5_cap_cur(const struct mx5_device *dev, unsigned type)
{
	return dev->caps[type][1];
}
#define MX5_CAP_GEN(dev, field) PRM_GET(cmd_hca_cap, mx5_cap_cur((dev), MX5_CAP_GENERAL), field)
#define MX5_CAP_ROCE(dev, field) PRM_GET(roce_cap, mx5_cap_cur((dev), MX5_CAP_ROCE), field)
#define MX5_CAP_ATOMIC(dev, field) PRM_GET(atomic_caps, mx5_cap_cur((dev), MX5_CAP_ATOMIC), field)

/* atomic_caps values (PRM; Linux MLX5_ATOMIC_OPS_*, MLX5_ATOMIC_SIZE_QP_8BYTES,
 * MLX5_ATOMIC_REQ_MODE_HOST_ENDIANNESS). */
enum {
	MX5_ATOMIC_OPS_CMP_SWAP = 1u << 0,
	MX5_ATOMIC_OPS_FETCH_ADD = 1u << 1,
	MX5_ATOMIC_SIZE_QP_8BYTES = 1u << 3,
	MX5_ATOMIC_REQ_HOST_ENDIANNESS = 1,
};

/* ACCESS_REG register ids (PRM "Access Registers"; Linux MLX5_REG_*) and PAOS values. */
enum { MX5_REG_PMTU = 0x5003, MX5_REG_PTYS = 0x5004, MX5_REG_PAOS = 0x5006,
       MX5_REG_HOST_ENDIANNESS = 0x7004 };
enum { MX5_PAOS_UP = 1, MX5_PAOS_DOWN = 2 };
/* cmd_hca_cap.port_type (Linux MLX5_CAP_PORT_TYPE_IB 0, _ETH 1) */
#define MX5_CAP_PORT_TYPE_ETH 1

#endif
