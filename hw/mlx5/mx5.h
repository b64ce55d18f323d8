/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/mlx5: the ConnectX (mlx5) driver's public interface (docs/architecture.md, "What each layer owns").
 *
 * What it owns: bring-up and teardown of one PCI function over any shim URI, the
 * firmware page supply, the async and completion EQs, the UAR, the health watch, and
 * the objects the verbs layer needs (PD, MKey, CQ, QP, SRQ, GID table, port state).
 * What it may call: firmware-cmd (layouts, cmdq, names) and hw/shim.
 * Who calls it: uverbs/ (the verbs API), tools (fwcmd, uvinfo, uvperf), tests.
 *
 * The data path (WQE builders, doorbells, CQE polling) lives in the datapath headers of
 * this folder (wqe.h, doorbell.h, poll.h); objects created here fill their state.
 *
 * Errors: every function returns 0 or a negative errno.  The human detail -- which
 * step, which command, the firmware's status and syndrome by name -- is kept per device
 * and read with mx5_device_error(): "bring-up: INIT_HCA: bad system state (0x4),
 * syndrome 0x…".  A failed mx5_device_open() leaves its message in mx5_open_error().
 *
 * Threads: a device is used by one thread at a time for control operations (commands,
 * EQ service); the caller serialises.  No hidden threads: events are served by whoever
 * calls mx5_device_poll_events() / mx5_eq_poll(), typically after poll() on the fd.
 */
#ifndef UVERBS_HW_MLX5_MX5_H
#define UVERBS_HW_MLX5_MX5_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "firmware-cmd/consts.h"
#include "hw/shim/shim.h"

#define MX5_ERR_LEN 320

struct cmdq;
struct mx5_device;
struct mx5_eq;
struct mx5_pd;
struct mx5_mr;
struct mx5_cq;
struct mx5_qp;
struct mx5_srq;
struct mx5_xrcd;

/* ------------------------------------------------------------------ device */

enum mx5_open_flags {
	/* Stop after INIT_HCA: capabilities read and set, pages given, but no vport change,
	 * UAR or EQ -- what an inspection tool (fwcmd) needs, and nothing it does not. */
	MX5_OPEN_INSPECT = 1u << 0,
	/* Map the function and read its registers, nothing more: no command is sent
	 * (fwcmd health on a device that is dead or will not come up). */
	MX5_OPEN_REGISTERS_ONLY = 1u << 2,
	/* Keep the command queue polling even after the async EQ exists. */
	MX5_OPEN_CMD_POLLING = 1u << 1,
};

struct mx5_open_attr {
	unsigned flags;              /* enum mx5_open_flags */
	/* Wait for initialization_segment.initializing (and for a function still reading
	 * all-ones after the FLR vfio-pci does at open); 0: MX5_INIT_TIMEOUT_MS. */
	unsigned init_timeout_ms;
	unsigned cmd_timeout_ms;     /* per command; 0: the engine's default */
	/* Host cache line in bytes (decides cmd_hca_cap.cache_line_128byte); 0: the
	 * platform's (hw/platform/cpu.h plat_host_cache_line). */
	unsigned cache_line;
	unsigned bf_policy;          /* enum mx5_bf_policy; 0: MX5_BF_PREFER */
};

/* Which single-WQE posts go through BlueFlame (doorbell.h mx5_sq_doorbell), as
 * rdma-core 44's libmlx5 decides (providers/mlx5/qp.c post_send_db: nreq == 1, a
 * BlueFlame register, (inl || ctx->prefer_bf), size > 1 16-byte unit and within half
 * the register; mlx5.c get_always_bf / get_shut_up_bf read the two knobs below). */
enum mx5_bf_policy {
	MX5_BF_PREFER = 0,       /* every single WQE that fits (MLX5_POST_SEND_PREFER_BF unset
				  * or not "0": rdma-core's default) */
	MX5_BF_INLINE_ONLY = 1,  /* only WQEs carrying inline data (MLX5_POST_SEND_PREFER_BF=0) */
	MX5_BF_OFF = 2,          /* never: 64-bit doorbells only (MLX5_SHUT_UP_BF set and not
				  * "0", or the write-combining test failed) */
};

/* Linux main.c FW_PRE_INIT_TIMEOUT_MILI and rdma-core mlx5_vfio.h use 120 s: ConnectX
 * pre-init after a function-level or firmware reset can take tens of seconds. */
#define MX5_INIT_TIMEOUT_MS 120000u

/* Open and bring up the function named by a shim URI ("emu:", "vfio:0000:03:00.0"). */
int mx5_device_open(const char *uri, struct mx5_device **out);
int mx5_device_open_attr(const char *uri, const struct mx5_open_attr *attr,
			 struct mx5_device **out);
/* Message of this thread's last failed open ("" when none). */
const char *mx5_open_error(void);
/* Firmware status and syndrome of the bring-up command that failed this thread's last
 * open; 0 when the open failed without a firmware answer (no device, timeout, ...). */
uint8_t mx5_open_status(void);
uint32_t mx5_open_syndrome(void);

/* Tear down in reverse order (destroys every object still alive) and close the shim. */
void mx5_device_close(struct mx5_device *dev);
/* The teardown alone: objects, EQs, UAR, TEARDOWN_HCA, every page reclaimed,
 * DISABLE_HCA, command queue.  The shim stays open (tests read the device's counters
 * afterwards); only mx5_device_close may follow.  Returns the first error. */
int mx5_device_shutdown(struct mx5_device *dev);

const char *mx5_device_error(const struct mx5_device *dev);
struct shim_dev *mx5_device_shim(struct mx5_device *dev);
struct cmdq *mx5_device_cmdq(struct mx5_device *dev);

/* Execute one command through the device's queue; on failure the device error reads
 * "<OPCODE>: <status> (0x..), syndrome 0x...".  Refused with -ENODEV once fatal. */
int mx5_cmd(struct mx5_device *dev, const void *in, size_t inlen, void *out, size_t outlen);
/* Firmware status and syndrome of the last command (0 when it succeeded). */
uint8_t mx5_cmd_status(const struct mx5_device *dev);
uint32_t mx5_cmd_syndrome(const struct mx5_device *dev);

/* The capability blocks the driver reads, by their QUERY_HCA_CAP op_mod type (values in
 * firmware-cmd/cap_types.def, with the layout each decodes with). */
enum mx5_cap_type {
	MX5_CAP_GENERAL = PRM_CAP_GENERAL_DEVICE,
	MX5_CAP_ODP = PRM_CAP_ODP,
	MX5_CAP_ATOMIC = PRM_CAP_ATOMIC,
	MX5_CAP_ROCE = PRM_CAP_ROCE,
};

/* The capability block read at bring-up (0x100 bytes; decode with PRM_GET(cmd_hca_cap,
 * ...) etc.).  cur = 0: maximum, 1: current.  NULL when the device lacks that block. */
const void *mx5_device_caps(const struct mx5_device *dev, enum mx5_cap_type type, int cur);
/* Query a block now (any type), into a 0x1000-byte buffer. */
int mx5_query_caps(struct mx5_device *dev, unsigned type, int cur, void *buf, size_t len);

#define MX5_PSID_LEN 16   /* PRM query_adapter_param_block.vsd_contd_psid: 16 bytes */
struct mx5_device_info {
	uint16_t fw_major, fw_minor, fw_subminor;
	uint16_t cmdif_rev;
	uint16_t vendor_id, device_id;
	size_t host_page_size;
	uint8_t num_ports;
	uint32_t max_qp, max_qp_wr, max_sge, max_cq, max_cqe, max_mr, max_pd;
	uint32_t max_srq, max_srq_wr, max_srq_sge;
	uint32_t max_mcast_grp, max_mcast_qp_attach;   /* 1 << log_max_mcg, max_qp_mcg */
	uint32_t max_qp_rd_atom, max_qp_init_rd_atom;
	uint32_t gid_table_len, pkey_table_len;
	uint32_t max_inline_data;
	uint64_t max_mr_size;
	uint32_t num_comp_vectors;
	int atomic;                  /* 8-byte compare-swap and fetch-add on RC, host order */
	int xrc;                     /* XRC offered (cmd_hca_cap.xrc; not through a device daemon) */
	uint16_t local_ca_ack_delay;
	uint8_t log_max_msg;         /* cmd_hca_cap.log_max_msg: largest message, log2 bytes */
	/* From QUERY_ADAPTER (PRM query_adapter_param_block), asked once per device; 0 and
	 * "" when the device refused it. */
	uint32_t ieee_vendor_id;     /* ieee_vendor_id: what ibv_device_attr.vendor_id reports */
	char psid[MX5_PSID_LEN + 1]; /* vsd_contd_psid, the board id, trailing spaces dropped */
};
int mx5_device_query(struct mx5_device *dev, struct mx5_device_info *info);

/* Queue counters of the device's one counter set (counters.c; PRM query_q_counter_out).
 * -EOPNOTSUPP when the device has no counter set. */
struct mx5_counters {
	uint32_t out_of_buffer;        /* messages dropped or RNR-NAKed: no receive posted */
	uint32_t out_of_sequence, duplicate_request;
	uint32_t rnr_nak_retry_err, local_ack_timeout_err;
};
int mx5_counters_query(struct mx5_device *dev, struct mx5_counters *c);

/* What bring-up chose, and what it cost (fwcmd bringup prints it; logged at
 * UVERBS_LOG=info when the device opens). */
struct mx5_bringup_info {
	uint8_t log_max_qp;          /* set with SET_HCA_CAP: min(profile, maximum) */
	uint8_t log_max_qp_max;      /* the device's maximum (sizes firmware memory) */
	uint8_t log_max_qp_default;  /* the firmware's current value before SET_HCA_CAP */
	uint64_t boot_pages, init_pages;  /* 4 KiB pages QUERY_PAGES asked for and we gave */
	uint64_t async_event_mask[4];     /* CREATE_EQ event_bitmask of the async EQ */
	int driver_version_set;      /* SET_DRIVER_VERSION sent (general cap driver_version) */
	int roce_udp_sport;          /* roce_cap.sw_r_roce_src_udp_port is on */
	int cache_line_128byte;      /* cmd_hca_cap.cache_line_128byte as set */
	unsigned host_cache_line;    /* bytes, the value that decided it */
	uint8_t qp_ts_format;        /* qpc.ts_format CREATE_QP uses (0 free-running, 1 default) */
	unsigned caps_requeried;     /* QUERY_HCA_CAP blocks read again after INIT_HCA */
	unsigned init_wait_ms;       /* time spent waiting for `initializing` to clear */
};
int mx5_device_bringup_info(const struct mx5_device *dev, struct mx5_bringup_info *bi);

/* ------------------------------------------------------------------ pages, health */

struct mx5_page_stats {
	uint64_t given;        /* 4 KiB firmware pages currently held by the device */
	uint64_t boot, init, regular; /* of which given at each stage */
	uint64_t requests;     /* PAGE_REQUEST events received */
	uint64_t reclaimed;    /* pages returned by the device */
	uint64_t host_bytes;   /* host memory allocated for them */
	uint64_t served_in_wait; /* requests answered inside a command's wait (second slot) */
	uint64_t released_all; /* release-all events: every page freed without a command */
};
void mx5_device_page_stats(const struct mx5_device *dev, struct mx5_page_stats *st);

enum mx5_health_state {
	MX5_HEALTH_OK = 0,
	MX5_HEALTH_FATAL = 1,      /* fatal syndrome or health counter stalled */
	MX5_HEALTH_REMOVED = 2,    /* all-ones from the BAR: surprise removal */
};

struct mx5_health {
	enum mx5_health_state state;
	uint32_t fw_rev;           /* raw first dword of the init segment */
	uint32_t health_counter;
	uint8_t health_syndrome;
	uint8_t synd, severity, irisc_index;  /* health_buffer */
	uint16_t ext_synd;
	uint8_t rfr;               /* health_buffer rfr: firmware asks for a reset */
	uint8_t nic_interface;     /* initial_seg nic_interface (0 full driver, 1 disabled, ...) */
	uint32_t assert_existptr, assert_callra, fw_version, hw_id;
	unsigned counter_misses;   /* samples in a row that found health_counter unchanged */
	uint8_t counter_stuck;     /* counter_misses reached the limit: health compromised
	                            * (reported, not fatal: Linux health.c poll_health) */
};

/* Read the health registers once and update the watch.  Fatal, as Linux health.c
 * check_fatal_sensors decides: the BAR reads all-ones (removed), nic_interface says
 * disabled or SW reset, or the health buffer has a syndrome together with the rfr
 * (reset-for-recovery) bit.  Marking fatal flushes every queue and raises
 * MX5_EVENT_DEVICE_FATAL once.  A health counter that did not move over `misses`
 * consecutive samples taken at least interval_ms apart is reported (counter_stuck, the
 * device message), not fatal, as Linux poll_health does.  Returns the state. */
enum mx5_health_state mx5_device_check_health(struct mx5_device *dev, struct mx5_health *h);
/* Health counter sampling: a sample counts when at least interval_ms passed since the
 * last one; `misses` unchanged samples in a row mean health compromised, reported (default
 * 2000 ms x 3, Linux health.c MLX5_HEALTH_POLL_INTERVAL and MAX_MISSES).  0 misses:
 * never from the counter. */
void mx5_device_set_health_poll(struct mx5_device *dev, unsigned interval_ms, unsigned misses);
int mx5_device_is_fatal(const struct mx5_device *dev);

/* ------------------------------------------------------------------ events */

enum mx5_event_type {
	MX5_EVENT_DEVICE_FATAL = 1,
	MX5_EVENT_PORT_ACTIVE,
	MX5_EVENT_PORT_DOWN,
	MX5_EVENT_CQ_ERROR,
	MX5_EVENT_QP_FATAL,          /* work queue catastrophic error */
	MX5_EVENT_QP_REQ_ERROR,      /* invalid request local work queue error */
	MX5_EVENT_QP_ACCESS_ERROR,   /* local access violation work queue error */
	MX5_EVENT_COMM_EST,
	MX5_EVENT_SQ_DRAINED,
	MX5_EVENT_LAST_WQE_REACHED,
	MX5_EVENT_SRQ_LIMIT,
	MX5_EVENT_SRQ_ERROR,
	MX5_EVENT_PATH_MIG,
	MX5_EVENT_PATH_MIG_ERR,
};

struct mx5_event {
	enum mx5_event_type type;
	uint32_t num;            /* QPN, CQN, SRQN or port number, by type */
	uint8_t eqe_type;        /* the raw EQE event_type */
	uint8_t syndrome;        /* health or error syndrome when there is one */
};

typedef void (*mx5_event_fn)(void *ctx, const struct mx5_event *ev);
void mx5_device_set_event_handler(struct mx5_device *dev, mx5_event_fn fn, void *ctx);
/* A completion event naming a CQ this device did not create here goes to fn: a device
 * daemon (tools/uvd) routes it to the client process that made the CQ. */
void mx5_device_set_comp_route(struct mx5_device *dev, void (*fn)(void *ctx, uint32_t cqn), void *ctx);
/* 1 when the device is attached through a device daemon (a "uvd:" URI). */
int mx5_device_is_remote(const struct mx5_device *dev);

/* The async EQ's interrupt fd (POLLIN when events are pending), and the service
 * function: page requests (give/reclaim), command completions, port changes, QP/CQ/SRQ
 * errors.  Returns the number of EQEs consumed, or a negative errno. */
int mx5_device_async_fd(struct mx5_device *dev);
int mx5_device_poll_events(struct mx5_device *dev);

/* Completion EQs: one per interrupt vector past the async one, created on first use. */
int mx5_comp_eq_get(struct mx5_device *dev, unsigned vector, struct mx5_eq **out);
int mx5_eq_fd(struct mx5_eq *eq);
uint32_t mx5_eq_num(const struct mx5_eq *eq);
/* Consume completion EQEs: each calls the CQ's completion handler; re-arms the EQ. */
int mx5_eq_poll(struct mx5_eq *eq);

/* ------------------------------------------------------------------ PD */

int mx5_pd_alloc(struct mx5_device *dev, struct mx5_pd **out);
int mx5_pd_free(struct mx5_pd *pd);
uint32_t mx5_pd_num(const struct mx5_pd *pd);

/* ------------------------------------------------------------------ MR */

enum mx5_access {
	MX5_ACCESS_LOCAL_WRITE = 1u << 0,
	MX5_ACCESS_REMOTE_WRITE = 1u << 1,
	MX5_ACCESS_REMOTE_READ = 1u << 2,
	MX5_ACCESS_REMOTE_ATOMIC = 1u << 3,
};

struct mx5_mr_info {
	uint32_t lkey, rkey;
	uint64_t iova;            /* the address the keys translate (the VA, as verbs wants) */
	uint64_t length;
	unsigned log_page_size;   /* MTT entry page size chosen */
	uint64_t mtt_entries;     /* translation entries written (MTT, plus KLMs if indirect) */
	int indirect;             /* 1 when the region is an indirect KLM MKey over parts */
	uint32_t nparts;          /* direct MKeys under the indirect one */
};

int mx5_mr_reg(struct mx5_pd *pd, void *addr, size_t len, unsigned access, struct mx5_mr **out);
int mx5_mr_dereg(struct mx5_mr *mr);
void mx5_mr_query(const struct mx5_mr *mr, struct mx5_mr_info *info);
/* ibv_rereg_mr without a new translation: the access rights (change_access) and/or the
 * PD (change_pd) of mr change in place by a UMR WQE on qp, an RC QP in RTS on the same
 * device whose send CQ cq the caller keeps for this; lkey and rkey stay (umr.c).
 * -EOPNOTSUPP for a region split over several MKeys: re-register it instead. */
int mx5_mr_umr_rereg(struct mx5_mr *mr, struct mx5_qp *qp, struct mx5_cq *cq, struct mx5_pd *pd,
		     unsigned access, int change_pd, int change_access);
/* At most this many UAR pages beyond the first for BlueFlame registers (testing the
 * fallback to doorbells; default 256). */
void mx5_device_set_uar_limit(struct mx5_device *dev, unsigned extra_uars);
/* Limit one direct MKey may translate, in MTT entries (testing the KLM path). */
void mx5_device_set_mkey_mtt_limit(struct mx5_device *dev, uint64_t entries);

/* Write-combining self-test (wc.c, Linux wc.c's method): 255 NOPs through BlueFlame,
 * CQ_UPDATE only in the BlueFlame copies and the last ring copy; the first CQE tells
 * whether the device took the bursts.  Creates and destroys a PD, CQ and UD QP. */
enum mx5_wc_state {
	MX5_WC_SUPPORTED = 0,     /* the bursts arrived whole */
	MX5_WC_NOT_SUPPORTED = 1, /* the device read the ring: BlueFlame should be off */
	MX5_WC_NO_BLUEFLAME = 2,  /* nothing to test: no bf capability, no write-combining
				   * mapping (VFIO), BlueFlame off by policy, or no register */
};
struct mx5_wc_result {
	enum mx5_wc_state state;
	unsigned nops;            /* NOPs posted (255) */
	uint32_t first_wqe;       /* wqe_counter of the first CQE */
	unsigned ms;              /* time to the first CQE */
};
/* 0 with *res filled, or a negative errno (the device error says why). */
int mx5_wc_test(struct mx5_device *dev, struct mx5_wc_result *res);

/* ------------------------------------------------------------------ CQ */

struct mx5_cq_attr {
	uint32_t cqe;              /* at least this many entries (rounded up to a power of 2) */
	unsigned comp_vector;      /* completion EQ: 0 .. num_comp_vectors-1 */
	void (*comp_fn)(void *ctx, struct mx5_cq *cq);  /* completion event handler */
	void *comp_ctx;
};

int mx5_cq_create(struct mx5_device *dev, const struct mx5_cq_attr *attr, struct mx5_cq **out);
int mx5_cq_destroy(struct mx5_cq *cq);
uint32_t mx5_cq_num(const struct mx5_cq *cq);
uint32_t mx5_cq_depth(const struct mx5_cq *cq);
/* Request a completion event for the next (solicited) CQE: doorbell record arm word,
 * then the UAR CQ doorbell, with the arm sequence number (PRM "CQ Doorbell"). */
int mx5_cq_arm(struct mx5_cq *cq, int solicited_only);
/* 1 once the device died: the CQ will never produce again (queues read as flushed). */
int mx5_cq_flushed(const struct mx5_cq *cq);
/* Datapath state (hw/mlx5 poll.h) of this CQ. */
void *mx5_cq_state(struct mx5_cq *cq);

/* ------------------------------------------------------------------ XRC domains */

/* An XRC domain (PRM ALLOC_XRCD 0x80e / DEALLOC_XRCD 0x80f; IBTA 14.2 "XRC"): XRC
 * SRQs and XRC target QPs of one domain serve each other.  Freeing one that SRQs or
 * QPs still use is -EBUSY. */
int mx5_xrcd_alloc(struct mx5_device *dev, struct mx5_xrcd **out);
int mx5_xrcd_free(struct mx5_xrcd *xrcd);
uint32_t mx5_xrcd_num(const struct mx5_xrcd *xrcd);

/* ------------------------------------------------------------------ SRQ */

struct mx5_srq_attr {
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
};

int mx5_srq_create(struct mx5_pd *pd, struct mx5_cq *cq, const struct mx5_srq_attr *attr,
		   struct mx5_srq **out);
int mx5_srq_destroy(struct mx5_srq *srq);
/* Arm the SRQ limit on the device (MODIFY_RMP); the limit given at create arms nothing. */
int mx5_srq_arm(struct mx5_srq *srq, uint32_t limit);
/* The device's armed limit (QUERY_RMP): 0 once the SRQ_LIMIT event fired. */
int mx5_srq_query_limit(struct mx5_srq *srq, uint32_t *limit);
uint32_t mx5_srq_num(const struct mx5_srq *srq);
/* An XRC SRQ (PRM CREATE_XRC_SRQ 0x705, xrc_srqc): in XRC domain xrcd, its receive
 * completions on cq (required: an XRC SRQ completes on its own CQ, not its QPs'),
 * taking the requests an XRC target QP of the same domain receives for its number.
 * mx5_srq_destroy, _arm and _query_limit work on it (DESTROY/ARM/QUERY_XRC_SRQ). */
int mx5_xrc_srq_create(struct mx5_pd *pd, struct mx5_xrcd *xrcd, struct mx5_cq *cq,
		       const struct mx5_srq_attr *attr, struct mx5_srq **out);
void mx5_srq_query(const struct mx5_srq *srq, struct mx5_srq_attr *attr);
void *mx5_srq_state(struct mx5_srq *srq);

/* ------------------------------------------------------------------ QP */

/* XRC_INI sends only (each WQE names the remote XRC SRQ); XRC_TGT receives only, into
 * the XRC SRQs of its domain that the requests name (IBTA 14.2; ibv_qp_type
 * IBV_QPT_XRC_SEND / IBV_QPT_XRC_RECV, values as Linux IB_QPT_XRC_INI / _TGT). */
enum mx5_qp_type { MX5_QPT_RC = 0, MX5_QPT_UC = 1, MX5_QPT_UD = 3, MX5_QPT_XRC_INI = 9,
		   MX5_QPT_XRC_TGT = 10 };

enum mx5_qp_state {
	MX5_QPS_RESET = 0, MX5_QPS_INIT = 1, MX5_QPS_RTR = 2, MX5_QPS_RTS = 3,
	MX5_QPS_SQD = 4, MX5_QPS_SQE = 5, MX5_QPS_ERR = 6,
};

struct mx5_qp_cap {
	uint32_t max_send_wr, max_recv_wr;
	uint32_t max_send_sge, max_recv_sge;
	uint32_t max_inline_data;
};

struct mx5_qp_init_attr {
	enum mx5_qp_type type;
	struct mx5_cq *send_cq, *recv_cq;
	struct mx5_srq *srq;          /* receive queue of the QP is this SRQ */
	struct mx5_qp_cap cap;        /* in: requested; out (mx5_qp_query): granted */
	int sq_sig_all;
	int fre;                      /* qpc.fre: the QP may post UMR WQEs (hw/mlx5/umr.c) */
	int gsi;                      /* UD created as QP1, the GSI QP (qpc.st QP1; Linux mlx5_ib gsi.c) */
	int block_lb_mc;              /* qpc.block_lb_mc: no copy of its own multicast sends */
	struct mx5_xrcd *xrcd;        /* XRC_TGT: its XRC domain (pd, CQs and srq unused) */
};

/* Attribute mask (which fields of mx5_qp_attr a modify carries). */
enum mx5_qp_attr_mask {
	MX5_QP_STATE = 1u << 0,
	MX5_QP_CUR_STATE = 1u << 1,
	MX5_QP_ACCESS_FLAGS = 1u << 2,
	MX5_QP_PKEY_INDEX = 1u << 3,
	MX5_QP_PORT = 1u << 4,
	MX5_QP_QKEY = 1u << 5,
	MX5_QP_AV = 1u << 6,
	MX5_QP_PATH_MTU = 1u << 7,
	MX5_QP_TIMEOUT = 1u << 8,
	MX5_QP_RETRY_CNT = 1u << 9,
	MX5_QP_RNR_RETRY = 1u << 10,
	MX5_QP_RQ_PSN = 1u << 11,
	MX5_QP_MAX_QP_RD_ATOMIC = 1u << 12,
	MX5_QP_MIN_RNR_TIMER = 1u << 13,
	MX5_QP_SQ_PSN = 1u << 14,
	MX5_QP_MAX_DEST_RD_ATOMIC = 1u << 15,
	MX5_QP_DEST_QPN = 1u << 16,
};

/* What INIT->RTR and RTR->RTS must carry on a UC or RC QP (IBTA 11.2.4.2, the table
 * in ibv_modify_qp(3)); mx5_qp_modify refuses a transition that lacks one.  A UD QP
 * needs only the state, and the SQ PSN for RTS. */
enum {
	MX5_QP_RTR_UC = MX5_QP_STATE | MX5_QP_AV | MX5_QP_PATH_MTU | MX5_QP_DEST_QPN | MX5_QP_RQ_PSN,
	MX5_QP_RTR_RC = MX5_QP_RTR_UC | MX5_QP_MAX_DEST_RD_ATOMIC | MX5_QP_MIN_RNR_TIMER,
	MX5_QP_RTS_UC = MX5_QP_STATE | MX5_QP_SQ_PSN,
	MX5_QP_RTS_RC = MX5_QP_RTS_UC | MX5_QP_TIMEOUT | MX5_QP_RETRY_CNT | MX5_QP_RNR_RETRY |
			MX5_QP_MAX_QP_RD_ATOMIC,
};

/* RoCE v2 address vector (PRM "ads": primary_address_path). */
struct mx5_ah_attr {
	uint8_t sgid_index;
	uint8_t dgid[16];
	uint8_t dmac[6];
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint32_t flow_label;          /* 20 bits; also selects the UDP source port */
	uint8_t sl;
	uint8_t port_num;
};

/* path_mtu uses the IB encoding: 1=256 2=512 3=1024 4=2048 5=4096. */
struct mx5_qp_attr {
	enum mx5_qp_state qp_state, cur_qp_state;
	unsigned qp_access_flags;     /* enum mx5_access */
	uint16_t pkey_index;
	uint8_t port_num;
	uint32_t qkey;
	struct mx5_ah_attr ah;
	uint8_t path_mtu;
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint32_t rq_psn, sq_psn;
	uint8_t max_rd_atomic, max_dest_rd_atomic;
	uint32_t dest_qp_num;
	struct mx5_qp_cap cap;        /* query only */
};

/* An XRC_TGT QP has no PD, CQ or queue of its own (pd may be NULL: the device is
 * attr->xrcd's); an XRC_INI QP has a send queue and send_cq, no receive side.  Both
 * name the device's own XRC resources where Linux mlx5_ib names its devr ones (xrcd.c). */
int mx5_qp_create(struct mx5_pd *pd, const struct mx5_qp_init_attr *attr, struct mx5_qp **out);
/* Transitions RST->INIT->RTR->RTS, RTS->RTS, any->ERR, any->RST.  A transition without an
 * attribute the IBTA requires -> -EINVAL and the device error names it. */
int mx5_qp_modify(struct mx5_qp *qp, const struct mx5_qp_attr *attr, unsigned mask);
int mx5_qp_query(struct mx5_qp *qp, struct mx5_qp_attr *attr, struct mx5_qp_init_attr *init);
int mx5_qp_destroy(struct mx5_qp *qp);
/* Attach a UD QP to the multicast group gid (attach != 0: ATTACH_TO_MCG 0x806) or detach
 * it (DETACH_FROM_MCG 0x807), as Linux mlx5_cmd_attach_mcg / mlx5_cmd_detach_mcg.
 * -EINVAL for a QP that is not UD or a GID that is not multicast (checked before the
 * command, as Linux ib_attach_mcast does); the device's refusals as mx5_exec gives them. */
int mx5_qp_mcast(struct mx5_qp *qp, const uint8_t gid[16], int attach);
uint32_t mx5_qp_num(const struct mx5_qp *qp);
enum mx5_qp_state mx5_qp_state(const struct mx5_qp *qp);
/* Datapath state (hw/mlx5 wqe.h / doorbell.h) of this QP's send and receive queues. */
void *mx5_qp_sq_state(struct mx5_qp *qp);
void *mx5_qp_rq_state(struct mx5_qp *qp);

/* ------------------------------------------------------------------ GIDs, ports */

enum mx5_gid_type { MX5_GID_ROCE_V1 = 0, MX5_GID_ROCE_V2 = 1 };

struct mx5_gid_entry {
	uint8_t gid[16];
	uint8_t mac[6];
	enum mx5_gid_type type;
	int ipv4;                /* 1 for an IPv4-mapped GID (::ffff:a.b.c.d) */
	uint16_t vlan_id;        /* 0xffff: none */
	int valid;
};

/* The RoCE v2 entry of an IPv4 address: GID ::ffff:a.b.c.d (IBTA A17.4.5.1, the
 * IPv4-mapped IPv6 form of RFC 4291), the given MAC, no VLAN.  ipv4 in host order. */
void mx5_gid_entry_ipv4(struct mx5_gid_entry *e, uint32_t ipv4, const uint8_t mac[6]);

/* The RoCE v2 entry of an IP address given as a GID: IPv4 mapped (::ffff:a.b.c.d) or
 * IPv6, the given MAC, no VLAN. */
void mx5_gid_entry_ip(struct mx5_gid_entry *e, const uint8_t gid[16], const uint8_t mac[6]);
/* The RoCE v2 entry of the port's IPv6 link-local address: fe80::/64 with the modified
 * EUI-64 of the MAC as interface id (RFC 4291 2.5.1 and appendix A, RFC 2464 s.4/5), the
 * default GID Linux derives from the netdev's MAC (drivers/infiniband/core/
 * roce_gid_mgmt.c, make_default_gid). */
void mx5_gid_entry_link_local(struct mx5_gid_entry *e, const uint8_t mac[6]);
/* Whether the driver programmed the entry (port 1.., index < table length). */
bool mx5_gid_valid(const struct mx5_device *dev, uint8_t port, unsigned index);

/* SET_ROCE_ADDRESS at index (RoCE v2; IPv4-mapped or IPv6 decided from the GID). */
int mx5_gid_set(struct mx5_device *dev, uint8_t port, unsigned index,
		const struct mx5_gid_entry *e);
int mx5_gid_clear(struct mx5_device *dev, uint8_t port, unsigned index);
/* The driver's copy of the table (what it programmed); NULL-valid entry when unset. */
int mx5_gid_get(const struct mx5_device *dev, uint8_t port, unsigned index,
		struct mx5_gid_entry *e);
unsigned mx5_gid_table_len(const struct mx5_device *dev);

enum mx5_port_state { MX5_PORT_DOWN = 1, MX5_PORT_INIT = 2, MX5_PORT_ARMED = 3,
		      MX5_PORT_ACTIVE = 4 };

struct mx5_port_info {
	enum mx5_port_state state;
	uint8_t vport_state;       /* QUERY_VPORT_STATE state (0 down, 1 up) */
	uint8_t admin_status, oper_status;  /* PAOS */
	uint16_t max_mtu, oper_mtu;         /* PMTU, bytes */
	uint8_t active_mtu;        /* IB encoding of oper_mtu (1..5) */
	uint32_t eth_proto_oper;   /* PTYS */
	uint32_t ext_eth_proto_oper;  /* PTYS extended protocols (ConnectX-6 Dx, -7) */
	uint32_t speed_mbps;       /* from (ext_)eth_proto_oper, 0 unknown */
	uint8_t mac[6];            /* NIC vport permanent address */
};
int mx5_port_query(struct mx5_device *dev, uint8_t port, struct mx5_port_info *info);
/* Set a port's MTU in netdev bytes (as `ip link set mtu`: 68..max_mtu less 22 bytes of
 * Ethernet framing); active_mtu follows at the next mx5_port_query. */
int mx5_port_set_mtu(struct mx5_device *dev, uint8_t port, unsigned netdev_mtu);
/* What a device that is its own network (the emulator) tells of it through its shim
 * (shim_ops.port_addrs / neigh); hardware says nothing: 0 addresses, -ENOENT. */
int mx5_port_addrs(struct mx5_device *dev, uint8_t port, uint8_t (*addrs)[16], unsigned max);
int mx5_port_neigh(struct mx5_device *dev, const uint8_t addr[16], uint8_t mac[6]);

/* ACCESS_REG: read (write = 0) or write a register (PAOS 0x5006, PMTU 0x5003,
 * PTYS 0x5004, ...) of `len` bytes. */
int mx5_access_reg(struct mx5_device *dev, uint16_t reg_id, int write, uint32_t arg,
		   const void *data_in, void *data_out, size_t len);

#endif
