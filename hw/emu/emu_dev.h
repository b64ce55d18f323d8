/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The inside of the emulated ConnectX, for the files that implement it: command
 * handlers (cmd_*.c), queue engines, the IOMMU, EQs.  Read hw/emu/README.md first.
 *
 * Locking: one mutex per device (d->lock).  Every entry from outside — the BAR hook,
 * the public API in emu.h — takes it; handlers, engines and the helpers below run with
 * it held and must not take it again.
 */
#ifndef UVERBS_HW_EMU_EMU_DEV_H
#define UVERBS_HW_EMU_EMU_DEV_H

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "hw/emu/emu.h"

/* Firmware statuses (PRM_CMD_STAT_*), delivery statuses (PRM_DELIV_*), opcodes
 * (PRM_CMD_OP_*) and our syndromes (PRM_SYND_*) come from firmware-cmd/names.h. */

enum emu_hca_state {
	EMU_HCA_DISABLED = 0,   /* after reset / DISABLE_HCA */
	EMU_HCA_ENABLED = 1,    /* after ENABLE_HCA, and again after TEARDOWN_HCA */
	EMU_HCA_INITIALIZED = 2 /* after INIT_HCA */
};


/* ---- one command as the handler sees it ---- */
struct emu_cmd {
	uint16_t opcode, op_mod;
	const uint8_t *in;     /* the whole input: inline bytes then mailbox data (zero padded
	                        * to at least EMU_CMD_MIN_BUF bytes) */
	size_t inlen;          /* entry input_length */
	uint8_t *out;          /* zeroed, outlen bytes; status/syndrome set by the framework */
	size_t outlen;         /* entry output_length */
	uint32_t syndrome;     /* set with emu_cmd_fail() */
};

/* A handler returns 0 (status 0) or a firmware status, usually through
 * `return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_...)`. */
typedef int (*emu_cmd_fn)(struct emu_dev *d, struct emu_cmd *c);

static inline int emu_cmd_fail(struct emu_cmd *c, int status, uint32_t syndrome)
{
	c->syndrome = syndrome;
	return status;
}

/* Requirements the framework checks before calling the handler. */
#define EMU_CMDF_ANY_STATE 0x0   /* allowed even before ENABLE_HCA (QUERY_ISSI, ENABLE_HCA…) */
#define EMU_CMDF_ENABLED 0x1     /* needs ENABLE_HCA */
#define EMU_CMDF_INIT 0x2        /* needs INIT_HCA; otherwise status 0x4 bad system state */

struct emu_cmd_desc {
	uint16_t opcode;
	uint16_t flags;
	uint32_t in_bytes;   /* minimum input length  (PRM_SIZE of <cmd>_in):  else 0x50 */
	uint32_t out_bytes;  /* minimum output length (PRM_SIZE of <cmd>_out): else 0x51 */
	emu_cmd_fn fn;
};

#define EMU_CMD(op, flags, in_type, out_type, fn) \
	{ PRM_CMD_OP_##op, (flags), PRM_SIZE(in_type), PRM_SIZE(out_type), (fn) }
/* Explicit minimum lengths, for commands whose later fields are optional (firmware
 * accepts the shorter input older drivers send, e.g. INIT_HCA's 16 bytes). */
#define EMU_CMD_LEN(op, flags, in_bytes, out_bytes, fn) { PRM_CMD_OP_##op, (flags), (in_bytes), (out_bytes), (fn) }
/* The rows of an object's life, after INIT_HCA, each command's layouts <cmd>_<obj>_in/_out
 * and handler <cmd>_<obj>: EMU_CMDS_OBJ(CQ, cq) is CREATE_CQ, DESTROY_CQ and QUERY_CQ;
 * EMU_CMDS_ALLOC(PD, pd) is ALLOC_PD and DEALLOC_PD. */
#define EMU_CMDS_OBJ(OBJ, obj)                                                                        \
	EMU_CMD(CREATE_##OBJ, EMU_CMDF_INIT, create_##obj##_in, create_##obj##_out, create_##obj),      \
	EMU_CMD(DESTROY_##OBJ, EMU_CMDF_INIT, destroy_##obj##_in, destroy_##obj##_out, destroy_##obj), \
	EMU_CMD(QUERY_##OBJ, EMU_CMDF_INIT, query_##obj##_in, query_##obj##_out, query_##obj)
#define EMU_CMDS_ALLOC(OBJ, obj)                                                                      \
	EMU_CMD(ALLOC_##OBJ, EMU_CMDF_INIT, alloc_##obj##_in, alloc_##obj##_out, alloc_##obj),          \
	EMU_CMD(DEALLOC_##OBJ, EMU_CMDF_INIT, dealloc_##obj##_in, dealloc_##obj##_out, dealloc_##obj)
/* The framework hands handlers buffers of at least this many zeroed bytes, whatever
 * the lengths: a handler may read any field of its fixed-size layouts. */
#define EMU_CMD_MIN_BUF 8192u

/* One file cmd_<area>.c defines `const struct emu_cmd_area emu_area_<area>`;
 * hw/emu/CMakeLists.txt finds it by the file name and lists it in the generated
 * registry (emu_areas.c), so a new handler file needs no edit anywhere else. */
struct emu_cmd_area {
	const char *name;
	const struct emu_cmd_desc *cmds;
	size_t ncmds;
	/* optional: device created / destroyed / HCA torn down (free area state) */
	int (*init)(struct emu_dev *d);
	void (*fini)(struct emu_dev *d);
	void (*teardown)(struct emu_dev *d);
	/* optional: any object is about to be freed (DESTROY_*, teardown, reset), before
	 * its dtor runs, while it is still intact.  An engine that keeps pointers to
	 * objects of other areas (a transport queue to its QP) drops them here. */
	void (*obj_gone)(struct emu_dev *d, enum emu_obj_type type, void *obj);
	/* optional: a QP was moved to RESET (2RST_QP): whatever an engine keeps for it at
	 * run time is void; the QP object itself lives on. */
	void (*qp_reset)(struct emu_dev *d, void *qp);
	/* optional: a QP was moved to ERR by a command (2ERR_QP): its outstanding work is
	 * to be flushed now, not at the next doorbell or packet. */
	void (*qp_error)(struct emu_dev *d, void *qp);
};
#define EMU_NCMDS(a) (sizeof(a) / sizeof((a)[0]))

extern const struct emu_cmd_area *const emu_areas[];
extern const size_t emu_nareas;

/* ---- object tables (objtab.c) ---- */
typedef void (*emu_obj_dtor)(struct emu_dev *d, void *obj);

struct emu_objtab {
	uint32_t base;       /* first number handed out */
	uint32_t max;        /* how many may live at once */
	uint32_t nslots;
	uint32_t hint;
	struct emu_obj_hdr **slots;
	/* the next emu_obj_alloc takes number force_id or fails (a client engine takes
	 * the daemon's numbers, engine.c); cleared by that allocation */
	bool force;
	uint32_t force_id;
};

/* Allocate object number and zeroed storage of `size` bytes.  NULL when the table is
 * full (the handler answers PRM_CMD_STAT_LIM_ERR / PRM_SYND_LIMIT_EXCEEDED).  dtor (may be NULL)
 * runs when the object is freed, also by emu_obj_destroy_all(). */
void *emu_obj_alloc(struct emu_dev *d, enum emu_obj_type t, size_t size, emu_obj_dtor dtor, uint32_t *id);
void *emu_obj_get(struct emu_dev *d, enum emu_obj_type t, uint32_t id);
uint32_t emu_obj_id(const void *obj);
/* "In use": an MKey holds its PD, a CQ its EQ...  emu_obj_free refuses (-EBUSY) while
 * references remain; the handler answers PRM_CMD_STAT_BAD_RES_STATE / PRM_SYND_OBJECT_IN_USE. */
void emu_obj_ref(void *obj);
void emu_obj_unref(void *obj);
int emu_obj_free(struct emu_dev *d, enum emu_obj_type t, uint32_t id);
/* emu_obj_free for a DESTROY_* / DEALLOC_* handler: the firmware status it answers.
 * An unknown number is PRM_CMD_STAT_BAD_RES with the object's own syndrome
 * (`bad_id_synd`: PRM_SYND_BAD_QPN, _BAD_CQN...), an object still referenced is
 * PRM_CMD_STAT_BAD_RES_STATE / PRM_SYND_OBJECT_IN_USE. */
static inline int emu_cmd_free_obj(struct emu_dev *d, struct emu_cmd *c, enum emu_obj_type t, uint32_t id,
				   uint32_t bad_id_synd)
{
	int rc = emu_obj_free(d, t, id);

	if (rc == -ENOENT)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, bad_id_synd);
	if (rc == -EBUSY)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES_STATE, PRM_SYND_OBJECT_IN_USE);
	return 0;
}
/* emu_cmd_free_obj for a DESTROY_* command with a uid field: only uid 0 (the function's
 * own objects) is known here, any other is PRM_CMD_STAT_BAD_PARAM / PRM_SYND_BAD_UID. */
static inline int emu_cmd_destroy_obj(struct emu_dev *d, struct emu_cmd *c, enum emu_obj_type t, uint64_t uid,
				      uint32_t id, uint32_t bad_id_synd)
{
	if (uid)
		return emu_cmd_fail(c, PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_UID);
	return emu_cmd_free_obj(d, c, t, id, bad_id_synd);
}
/* Defines `static int destroy_<obj>(d, c)`, the whole handler of DESTROY_<OBJ>: its
 * input layout is destroy_<obj>_in, whose field `id_field` names the object (PRM
 * destroy_cq_in.cqn, destroy_qp_in.qpn...); see emu_cmd_destroy_obj for the answers. */
#define EMU_CMD_DESTROY_HANDLER(obj, id_field, type, bad_id_synd)                                      \
	static int destroy_##obj(struct emu_dev *d, struct emu_cmd *c)                                  \
	{                                                                                                \
		return emu_cmd_destroy_obj(d, c, (type), PRM_GET(destroy_##obj##_in, c->in, uid),       \
					   (uint32_t)PRM_GET(destroy_##obj##_in, c->in, id_field), (bad_id_synd)); \
	}
/* Defines `static int query_<obj>(d, c)`, the handler of QUERY_<OBJ>: the object that
 * query_<obj>_in.<id_field> names (PRM query_cq_in.cqn ...) goes to the file's
 * `static int answer_<obj>(d, c, const struct emu_<obj> *)`, which writes the answer;
 * an unknown number is PRM_CMD_STAT_BAD_RES with the object's own syndrome, as for
 * DESTROY. */
#define EMU_CMD_QUERY_HANDLER(obj, id_field, type, bad_id_synd)                                        \
	static int answer_##obj(struct emu_dev *d, struct emu_cmd *c, const struct emu_##obj *o);      \
	static int query_##obj(struct emu_dev *d, struct emu_cmd *c)                                    \
	{                                                                                                \
		const void *o = emu_obj_get(d, (type), (uint32_t)PRM_GET(query_##obj##_in, c->in, id_field)); \
                                                                                                         \
		return o ? answer_##obj(d, c, o) : emu_cmd_fail(c, PRM_CMD_STAT_BAD_RES, (bad_id_synd));  \
	}
/* Call fn for each live object of a type (fn may not free). */
void emu_obj_foreach(struct emu_dev *d, enum emu_obj_type t, void (*fn)(struct emu_dev *, void *, void *),
		     void *arg);
/* Free every object, highest type first (QPs before CQs before EQs before PDs/UARs). */
void emu_obj_destroy_all(struct emu_dev *d);
/* A responder found no receive WQE for a message (dropped on UC/UD, RNR-NAKed on RC):
 * counted as out_of_buffer in the QP's queue counter set, if it names one
 * (cmd_q_counter.c). */
void emu_q_counter_out_of_buffer(struct emu_dev *d, uint8_t counter_set_id);

/* ---- MAC addresses in commands ---- */
/* The PRM carries a MAC as two fields, bits 47..32 and 31..0 (ads.rmac_47_32 and
 * rmac_31_0, mac_address_layout.mac_addr_47_32 and mac_addr_31_0); mac[0] is the
 * first byte on the wire. */
static inline void emu_mac_from_prm(uint8_t mac[6], uint32_t hi, uint32_t lo)
{
	mac[0] = (uint8_t)(hi >> 8);
	mac[1] = (uint8_t)hi;
	for (unsigned i = 0; i < 4; i++)
		mac[2 + i] = (uint8_t)(lo >> (24 - 8 * i));
}
static inline uint32_t emu_mac_47_32(const uint8_t mac[6])
{
	return ((uint32_t)mac[0] << 8) | mac[1];
}
static inline uint32_t emu_mac_31_0(const uint8_t mac[6])
{
	return ((uint32_t)mac[2] << 24) | ((uint32_t)mac[3] << 16) | ((uint32_t)mac[4] << 8) | mac[5];
}

/* ---- UAR pages (device.c) ---- */
/* Offsets inside a UAR page: PRM_UAR_* (firmware-cmd/uar.def). */
#define EMU_UAR_FIRST_INDEX 0x10    /* real ConnectX-4 firmware handed out 0x10.. (trace) */

/* Reserved memory keys (QUERY_SPECIAL_CONTEXTS).  The scatter-list terminator is the
 * value rdma-core writes after the last receive SGE (MLX5_INVALID_LKEY 0x100); MKey
 * indexes handed out by CREATE_MKEY start above these (objtab.c). */
#define EMU_TERMINATE_SCATTER_MKEY 0x100u
#define EMU_RESD_LKEY 0x200u
#define EMU_NULL_MKEY 0x300u
#define EMU_DUMP_FILL_MKEY 0x400u
#define EMU_REPEATED_MKEY 0x500u

/* A callback on stores into a range of offsets of every allocated UAR page.
 * op is SHIM_MMIO_WRITE (a doorbell) or SHIM_MMIO_WC_WRITE (a BlueFlame burst). */
typedef void (*emu_uar_fn)(struct emu_dev *d, uint32_t uar_index, uint32_t off, unsigned size, int op,
			   const volatile uint8_t *page, void *arg);
int emu_uar_hook(struct emu_dev *d, uint32_t off_lo, uint32_t off_hi, emu_uar_fn fn, void *arg);
/* UAR page size (4 KiB << log_uar_page_sz, current caps): what ALLOC_UAR hands out. */
uint32_t emu_uar_page_size(const struct emu_dev *d);
/* What one UAR index covers: 4 KiB when the driver set uar_4k, else the page size.
 * Hooks get the index the driver uses and a pointer to that unit's bytes. */
uint32_t emu_uar_unit(const struct emu_dev *d);
volatile uint8_t *emu_uar_page(struct emu_dev *d, uint32_t uar_index);
bool emu_uar_valid(struct emu_dev *d, uint32_t uar_index);
/* The UAR object a driver's index (eqc/cqc/qpc uar_page) belongs to, or NULL: use this,
 * not emu_obj_get(EMU_OBJ_UAR, index), so uar_4k numbering works. */
void *emu_uar_obj(struct emu_dev *d, uint32_t uar_index);
uint32_t emu_uar_index_of(const struct emu_dev *d, uint32_t obj_id);
/* The other way: the UAR object's number for a driver's index (uar_4k numbering). */
uint32_t emu_uar_obj_of(const struct emu_dev *d, uint32_t uar_index);

/* ---- DMA through the IOMMU (iommu.c) ---- */
/* Copy between device-visible memory and buf.  Any byte outside a live mapping: nothing
 * is copied, the fault is counted and logged as a driver error, -EFAULT.  Application
 * memory that was unmapped or made read-only after it was mapped: -EFAULT too, counted
 * in dma_host_faults; the bytes before the failing page may have been copied, as a
 * DMA stops where it faults. */
int emu_dma_read(struct emu_dev *d, uint64_t iova, void *buf, size_t len);
int emu_dma_write(struct emu_dev *d, uint64_t iova, const void *buf, size_t len);
/* True when reading application memory costs a system call: copy=syscall (or the
 * guarded copy was refused at open), or another process's memory was mapped
 * (emu_iommu_map_remote: a device daemon's clients).  Only then is it worth reading a
 * multi-packet payload ahead in one copy (emu_payload_read).  Call under d->lock. */
bool emu_iommu_reads_syscall(struct emu_dev *d);
/* 1 if [iova, iova+len) is entirely mapped (no access, no counter). */
int emu_iova_mapped(struct emu_dev *d, uint64_t iova, size_t len);

/* ---- EQs (eq.c) ---- */
#define EMU_EQE_BYTES 64
#define EMU_EQE_DATA_BYTES 28
/* Post an EQE to EQ eqn: owner bit by DMA, interrupt if armed, overrun detection.
 * data: the 28 bytes of event_data (NULL: zeros). */
int emu_eq_post(struct emu_dev *d, uint32_t eqn, uint8_t type, uint8_t sub_type, const void *data);
/* Post to the EQ whose event bitmask asked for this event type (async events, CMD and
 * PAGE_REQUEST).  -ENOENT if none asked. */
int emu_eq_post_event(struct emu_dev *d, uint8_t type, uint8_t sub_type, const void *data);
/* Whether some EQ asked for events of this type (event_bitmask). */
bool emu_eq_listens(struct emu_dev *d, uint8_t type);
/* Completion event for a CQ on its EQ (PRM_EVENT_COMP, cqn in event data). */
int emu_eq_post_comp(struct emu_dev *d, uint32_t eqn, uint32_t cqn);
void emu_irq_raise(struct emu_dev *d, unsigned vector);
/* A message PCI allowed (pci.c): the vector's eventfd signalled, or counted for it. */
void emu_irq_deliver(struct emu_dev *d, unsigned vector);

/* ---- the PCI function (pci.c) ---- */
int emu_pci_create(struct emu_dev *d);
void emu_pci_destroy(struct emu_dev *d);
bool emu_pci_mem_enabled(struct emu_dev *d);
/* Bus Master Enable: may the device issue DMA?  When not, emu_pci_dma_blocked counts
 * and logs the access that did not happen and returns -EIO. */
bool emu_pci_dma_allowed(struct emu_dev *d);
int emu_pci_dma_blocked(struct emu_dev *d, uint64_t iova, size_t len, int write);
/* May vector's MSI-X message go now?  false: blocked, or held pending by a mask. */
bool emu_pci_msix_send(struct emu_dev *d, unsigned vector);
/* A BAR access the function decides itself (memory space off, the MSI-X table and
 * PBA): true when handled, the device's registers are not to see it. */
bool emu_pci_bar_access(struct emu_dev *d, int op, uint64_t off, unsigned size);
/* device.c: the function's own state back to reset (FLR), and the init segment
 * rebuilt from the device's state after reads painted it all-ones. */
void emu_reset_locked(struct emu_dev *d);
void emu_iseg_restore(struct emu_dev *d);

/* ---- one value of device state for the public API (device.c) ---- */
/* Copy the `size` bytes of *field, a member of *d, to out under the device lock: the
 * questions tests and tools ask from outside (emu_hca_state, emu_removed,
 * emu_drverr_count, emu_pages_held). */
void emu_read_locked(struct emu_dev *d, void *out, const void *field, size_t size);

/* ---- logging and driver errors (log.c) ---- */
enum emu_log_level { EMU_LOG_ERROR = 1, EMU_LOG_WARN, EMU_LOG_INFO, EMU_LOG_DEBUG };
void emu_log(struct emu_dev *d, enum emu_log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Something a driver must never do: counted, kept in the ring, logged at warn. */
void emu_drverr(struct emu_dev *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- clock ---- */
uint64_t emu_now_ns(void);
/* Try the device lock spinning up to max_ns: true when taken (device.c). */
bool emu_lock_spin(struct emu_dev *d, uint64_t max_ns);
/* pthread_mutex_trylock of the device lock that also notes the taker's CPU: true when taken. */
bool emu_lock_try(struct emu_dev *d);
/* Unlock what emu_lock_try/emu_lock_spin took, clearing the holder's CPU (device.c). */
void emu_unlock(struct emu_dev *d);

/* ---- pages (pages.c) ---- */
struct emu_page_tab {
	uint64_t *iova;        /* sorted, held pages */
	size_t n, cap;
};
int emu_pages_hold(struct emu_dev *d, const uint64_t *pages, size_t n, uint32_t *syndrome);
/* Give back up to n pages (written to out); returns how many. */
size_t emu_pages_release(struct emu_dev *d, uint64_t *out, size_t n);
bool emu_page_held(struct emu_dev *d, uint64_t iova);
/* cfg.auto_pages: drive the PAGE_REQUEST exchange (called when an EQ is created and
 * after each MANAGE_PAGES). */
void emu_pages_auto(struct emu_dev *d);

/* ---- capabilities (caps.c) ---- */
#define EMU_CAP_TYPES 0x20
#define EMU_CAP_BYTES 0x1000       /* query_hca_cap_out.capability: 0x8000 bits */
/* Capability block `type` (PRM QUERY_HCA_CAP op_mod >> 1), max (cur=0) or current. NULL
 * if this device does not report that type. */
uint8_t *emu_cap(struct emu_dev *d, unsigned type, int cur);

/* ---- the RoCE address table (cmd_roce.c) ---- */
/* Entry idx holds an address (SET_ROCE_ADDRESS wrote one; all zero is an empty slot). */
bool emu_gid_valid(struct emu_dev *d, uint32_t idx);

/* ---- multicast groups (cmd_mcg.c) ---- */
struct emu_roce_rx_batch;
/* ff00::/8 or ::ffff:224.0.0.0/100: a GID ATTACH_TO_MCG takes. */
bool emu_gid_is_multicast(const uint8_t gid[16]);
/* The QPNs attached to the group gid (count; *qpns valid until the next command). */
unsigned emu_mcg_members(struct emu_dev *d, const uint8_t gid[16], const uint32_t **qpns);
/* A pollable fd, readable while a group socket holds a packet (-1: none, not Linux). */
int emu_mcg_fd(struct emu_dev *d);
bool emu_mcg_sockets_open(struct emu_dev *d);
/* A batch from one group socket that holds packets (envelopes addressed to the group):
 * how many, 0 when none holds any (at once, without a system call, when no group has a
 * socket), or -errno. */
int emu_mcg_recv_many(struct emu_dev *d, struct emu_roce_rx_batch *b);

/* ---- the device ---- */
struct emu_uar_hook_ent {
	uint32_t lo, hi;
	emu_uar_fn fn;
	void *arg;
};
#define EMU_MAX_UAR_HOOKS 8

struct emu_eq;

struct emu_dev {
	pthread_mutex_t lock;
	int lock_cpu;                      /* CPU of the holder that took the lock through
					      emu_lock_try/emu_lock_spin, -1 once it let go through
					      emu_unlock or when the holder took it otherwise
					      (device.c; a hint, relaxed atomics) */
	struct emu_config cfg;
	char name[32];                  /* "emu:127.0.0.2", for logs */

	uint8_t *bar;                   /* BAR0 backing memory */
	size_t bar_len;
	int bar_fd;                     /* its memfd with cfg.bar_shared, else -1 */
	int udp_fd;
	void *tp;                       /* the data plane (struct emu_tp, transport.h), for the poll path */
	uint32_t ipv4;
	/* the QPs created as QP1 (cmd_qp.c), 0 for a free slot: one per process sharing the
	 * device through uvd, each of which runs its own CM (docs/architecture.md, section
	 * 18); a packet for QPN 1 goes to each (rx_check.c).  A slot whose QP is gone is
	 * skipped there and taken by the next QP1. */
#define EMU_MAX_GSI 16
	uint32_t gsi_qpns[EMU_MAX_GSI];

	/* initialization segment state */
	uint64_t t0_ns;
	uint64_t ready_at_ns;           /* `initializing` reads 1 until then */
	uint64_t allones_until_ns;      /* flr_ms: BAR reads all-ones until then */
	bool cmdq_programmed;
	uint64_t cmdq_iova;
	uint8_t log_cmdq_size, log_cmdq_stride;
	uint32_t health_counter;
	uint64_t health_last_ns;
	bool fatal;
	bool counter_stalled;           /* emu_fault_counter_stall */
	bool removed;

	/* firmware state */
	enum emu_hca_state hca;
	uint16_t issi;
	bool issi_set;
	uint32_t boot_pages, init_pages;  /* still wanted by QUERY_PAGES op_mod 1/2 */
	int32_t regular_pages;            /* op_mod 3: >0 wants more, <0 wants to give back */
	bool boot_pages_given, init_pages_given;
	uint8_t auto_pages_phase;         /* cfg.auto_pages: 0 idle, 1 asked, 2 offered back */
	struct emu_page_tab pages;
	/* commands held for pages (hold.c): slots held, slots being run again after the
	 * exchange, pages still to be given (> 0) or taken back (< 0) */
	uint32_t held_slots, held_resuming;
	int64_t held_want;
	bool held_fail;
	uint8_t (*caps)[2][EMU_CAP_BYTES];
	bool cap_present[EMU_CAP_TYPES];
	struct emu_objtab obj[EMU_OBJ_NTYPES];
	void *area_state[32];             /* per-area private state, indexed by area order */

	/* ports and addresses (cmd_vport.c / cmd_roce.c / cmd_reg.c) */
	bool port_up;
	uint16_t mtu;                     /* NIC vport context mtu (bytes) */
	bool roce_en;
	uint8_t mac[6];
	uint8_t paos_admin;               /* PAOS admin_status */
	void *gid_tab;                    /* cmd_roce.c */
	void *mcg_tab;                    /* multicast groups (cmd_mcg.c) */

	/* UAR callbacks, EQs and interrupts */
	struct emu_uar_hook_ent uar_hooks[EMU_MAX_UAR_HOOKS];
	unsigned nuar_hooks;
	int irq_fds[EMU_NUM_VECTORS];
	uint64_t irq_pending[EMU_NUM_VECTORS];

	/* IOMMU */
	void *iommu;
	/* the PCI function: config space, MSI-X table (pci.c) */
	struct emu_pci *pci;

	/* a device daemon's client engine (engine.c): events to sink instead of an EQ */
	emu_event_sink_fn sink;
	void *sink_arg;
	/* a daemon's device whose clients run the data plane (emu_dataplane_off) */
	bool dataplane_off;

	/* faults */
	struct emu_fail_rule fail[EMU_MAX_FAIL_RULES];
	unsigned nfail;

	struct emu_counters ctr;

	/* driver-error ring: ctr.driver_errors is how many were ever logged */
	char drverr[EMU_DRVERR_RING][EMU_DRVERR_LEN];
};

/* Port (cmd_reg.c / fault.c): operational = link up (fault knob) and PAOS admin up.
 * emu_port_oper() says whether the port is operational; after changing either input
 * call emu_port_changed(d, was_oper) to post PORT_CHANGE if the result changed. */
bool emu_port_oper(const struct emu_dev *d);
void emu_port_changed(struct emu_dev *d, bool was_oper);

/* Area state by name (so an area file can keep private state without a field here). */
void **emu_area_state(struct emu_dev *d, const char *area_name);

/* Fault rules (fault.c): whether this command must fail or hang. */
int emu_fault_check(struct emu_dev *d, uint16_t opcode, uint8_t *status, uint32_t *syndrome);
int emu_fault_page_hold_take(struct emu_dev *d, uint16_t opcode, struct emu_fail_rule *out);

/* Commands held for pages (hold.c).  emu_hold_begin decides, before a command runs,
 * whether firmware needs a page exchange first: then it posts the PAGE_REQUEST, marks
 * the slot held and returns true (the entry stays owned by the device).  MANAGE_PAGES
 * reports what moved; emu_hold_ready hands back the slots to run now (0 while the
 * exchange is short), *fail set when the driver answered "allocation failed". */
bool emu_hold_begin(struct emu_dev *d, unsigned slot, uint16_t opcode);
void emu_hold_given(struct emu_dev *d, uint32_t n);
void emu_hold_taken(struct emu_dev *d, uint32_t n);
void emu_hold_alloc_failed(struct emu_dev *d);
uint32_t emu_hold_ready(struct emu_dev *d, bool *fail);
void emu_hold_reset(struct emu_dev *d);

/* The command processor (cmd.c): process the entries whose bits are set. */
void emu_cmd_doorbell(struct emu_dev *d, uint32_t vector);
const struct emu_cmd_desc *emu_cmd_find(uint16_t opcode);
/* One command through the checks every command meets (fault rules, lengths, HCA state,
 * emu_cmd_check) and its handler: 0 or the firmware status; *hang set when a fault rule
 * says the command never completes.  The command processor and a client engine
 * (engine.c) both run commands this way. */
int emu_cmd_dispatch(struct emu_dev *d, struct emu_cmd *c, int *hang);
/* cmd_check.c: uid, op_mod and reserved fields of an input, before its handler runs
 * (0 or the failing status, syndrome set in c). */
int emu_cmd_check(struct emu_dev *d, struct emu_cmd *c);

/* The UAR write path and the EQ doorbell (eq.c) */
void emu_eq_doorbell(struct emu_dev *d, uint32_t uar_index, uint32_t off, uint32_t value);
void emu_eq_destroy_all(struct emu_dev *d);

/* HCA teardown: every area's teardown, objects destroyed (TEARDOWN_HCA, destroy). */
void emu_hca_teardown(struct emu_dev *d);

#endif
