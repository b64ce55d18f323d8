/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/emu: the emulated ConnectX-5 Ex (15b3:1019) — public API.
 *
 * Who calls this:
 *  - hw/shim/emu.c (the "emu:" shim) creates a device per open, installs emu_mmio_access
 *    as its BAR hook and maps every DMA buffer/pin through the IOMMU model here;
 *  - tests and tools read counters and the driver-error log, and inject faults.
 * The driver never calls this: it talks to the device only through the shim (BAR
 * stores/loads, DMA memory, interrupt fds), exactly as it talks to hardware.
 *
 * What handler and engine files use instead is hw/emu/emu_dev.h (the device's inside).
 * Errors: 0 or a negative errno.
 */
#ifndef UVERBS_HW_EMU_EMU_H
#define UVERBS_HW_EMU_EMU_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct emu_dev;
struct shim_dev;

#define EMU_VENDOR_ID 0x15b3
#define EMU_DEVICE_ID 0x1019          /* ConnectX-5 Ex */
#define EMU_BAR0_LEN (32u << 20)      /* ConnectX-5 BAR0 is 32 MiB */
#define EMU_NUM_VECTORS 64            /* MSI-X vectors offered to the driver */
#define EMU_ROCE_UDP_PORT 4791        /* IANA RoCE v2 */

enum emu_iova_mode {
	EMU_IOVA_OFFSET = 0,   /* each mapping gets one contiguous IOVA range unlike its VA */
	EMU_IOVA_SCATTER = 1,  /* pins fragment host page by host page into scattered IOVAs */
};

/* Fault knobs a URI or a test can set before or after open. */
#define EMU_MAX_FAIL_RULES 8
struct emu_fail_rule {
	uint16_t opcode;
	uint8_t status;
	uint32_t syndrome;
	int hang;              /* never complete the command (driver sees a timeout) */
	unsigned skip;         /* let this many matching commands succeed first */
	/* page_hold: once (after skip), hold the command for a page exchange, as firmware
	 * that needs ICM for it does: pages > 0 asks for that many by PAGE_REQUEST and
	 * completes the command when they were given; pages < 0 offers that many back and
	 * completes it when they were taken; release_all drops every page with a
	 * release-all PAGE_REQUEST, then completes it.  Status/syndrome are unused. */
	int page_hold;
	int32_t pages;
	int release_all;
};

struct emu_config {
	uint32_t ipv4;         /* RoCE address, host byte order; 0: first free 127.0.0.N */
	size_t host_page_size; /* 4096 or 16384 (0: 4096) */
	enum emu_iova_mode iova_mode;
	unsigned nfail;
	struct emu_fail_rule fail[EMU_MAX_FAIL_RULES];
	uint8_t fatal_synd;    /* nonzero: raise this health syndrome right after open */
	int port_down;         /* start with the link down */
	unsigned init_delay_ms; /* how long `initializing` stays set (0: default 2 ms) */
	unsigned flr_ms;        /* the BAR reads all-ones for this long after create, as a
	                         * function does while it comes back from the reset
	                         * vfio-pci does at open; then `initializing` as usual */
	unsigned auto_pages;    /* >0: after INIT_HCA, once an EQ listens for PAGE_REQUEST, ask
	                         * for this many pages, and when given offer half back */
	int admin_down;         /* admin=down: PAOS admin_status starts down, as a previous
	                         * driver's `ip link set down` leaves it */
	int ptys_ext;           /* ptys=ext: the port speaks the extended Ethernet protocols
	                         * (200GAUI-4), as a ConnectX-6 Dx/7; the legacy field reads 0 */
	int nic_ifc_disabled;   /* nic_ifc=disabled: nic_interface reads DISABLED until the
	                         * driver writes the command queue address */
	unsigned msix;          /* interrupt vectors offered to the driver (msix=N, 1..64; 0:
	                         * EMU_NUM_VECTORS): msix=1 makes every EQ share vector 0,
	                         * as a one-MSI kext or a refused MSI-X request does */
	unsigned cmdq_entries;  /* command queue entries the device reports (log_cmdq_size):
	                         * 1, 2, 4, 8, 16 or 32; 0: 32, as ConnectX firmware */
	unsigned icm_pages;     /* >0: after INIT_HCA every CREATE_* command (CQ, QP, MKEY, SRQ,
	                         * EQ, ...) is held until the driver gave this many more pages,
	                         * asked for by PAGE_REQUEST (hw/emu/hold.c) */
	char wire_faults[160];  /* "loss=..,reorder=..,dup=..,corrupt=..,seed=..,link=.." for
	                         * the data plane (hw/emu/transport.h), applied at create */
	int sched_normal;       /* sched=normal: the device thread stays SCHED_OTHER instead of
	                         * asking for SCHED_FIFO (hw/emu/rx_thread.c) */
	int copy_syscall;       /* copy=syscall: application memory through system calls
	                         * (hw/platform/vm.h) instead of guarded memcpy (hw/emu/iommu.c) */
	int gso_off;            /* gso=off: every packet leaves in a datagram of its own, as
	                         * on a wire, also where a capture on loopback would see the
	                         * kernel's unsegmented datagram (hw/emu/roce_sock.c) */
	int gro_off;            /* gro=off: the port's socket does not coalesce arrivals, and
	                         * a segmented run from another port arrives cut into its
	                         * datagrams (hw/emu/roce_sock.c emu_roce_sock_coalesce) */
	unsigned poll_hold_us;  /* hold_us=N: how long the socket stays left to an
	                         * application's polls after its last call (0: the default,
	                         * EMU_POLL_HOLD_NS in hw/emu/transport.h) */
	int bf_torn;            /* bf=torn: every BlueFlame burst arrives split, as through a
	                         * path that does not combine writes; the device ignores it
	                         * and reads the WQE from the ring (hw/emu/sq_doorbell.c), so
	                         * the write-combining test (hw/mlx5/wc.c) fails */
	/* cap=BLOCK.FIELD:VAL (maximum and current) / capmax=BLOCK.FIELD:VAL (maximum only):
	 * capability values other than the ConnectX-4 trace's, to stand in for a later
	 * device (BLOCK: general, roce, atomic, odp; FIELD: a row of its layout). */
	/* A device daemon's client engine (hw/emu/engine.c): udp_fd > 0 is a socket the
	 * daemon already bound to ipv4:4791 for this client, taken over instead of claiming
	 * an address (the device closes it; if emu_create fails, the caller still owns it
	 * and closes it); engine makes the device initialized at once, with no command
	 * queue: objects come from emu_engine_cmd, as the daemon created them. */
	int udp_fd;
	int engine;
	/* A host that moves the device's DMA itself (hw/qemu: QEMU's pci_dma_read/write,
	 * so bus-master enable and the guest's IOMMU apply): with dma set, every DMA of the
	 * device is one call, 0 or -EFAULT (nothing moved), and the IOMMU model below
	 * (emu_iommu_map...) holds nothing.  Called from the device's threads and from the
	 * thread that rang a doorbell, with the device lock held: it must not call back. */
	int (*dma)(void *arg, uint64_t iova, void *buf, size_t len, int write);
	void *dma_arg;
	/* A host that starts the device's thread itself (hw/qemu: qemu_thread_create, so it
	 * is named and blocks the signals QEMU's main loop takes): 0 and the running thread
	 * in *out, which the device joins with pthread_join at destroy, or a negative
	 * errno.  NULL: pthread_create. */
	int (*thread_start)(void *arg, pthread_t *out, void *(*fn)(void *), void *fn_arg);
	void *thread_arg;
	/* > 0: every command run and its answer is written here, as Linux's dump_command
	 * does (cmd.c log_command); the fd stays the caller's. */
	int cmd_log_fd;
	/* BAR0 in shared memory (a memfd, emu_bar_fd) instead of private pages: a host that
	 * lives in another process than the driver (the IOKit stand-in's kernel daemon,
	 * shim-kext/standin) maps the same pages into the driver, as IOKit maps a BAR. */
	int bar_shared;
	unsigned ncap_override;
	struct emu_cap_override {
		uint8_t type;           /* QUERY_HCA_CAP type */
		uint8_t max_only;
		char field[48];
		uint32_t value;
	} cap_override[8];
};

/* Parse "ip=127.0.0.9,page=16k,iova=scatter,fail=0x102:0x3[:SYND],hang=0x104,
 * fatal=SYND,port=down,init_ms=N,flr_ms=N,pages=N,icm=N,
 * pagehold=OP:N|-N|all[@SKIP],loss=R,reorder=R,dup=R,corrupt=R,seed=N,
 * link=up|down,sched=fifo|normal,copy=guarded|syscall,cap=general.driver_version:1,capmax=roce.sw_r_roce_src_udp_port:1"
 * into cfg (which the caller zeroes first).  The wire-fault keys are
 * checked here and applied by emu_create. */
int emu_config_parse(const char *opts, struct emu_config *cfg, char *err, size_t errlen);
/* The options of cfg that shape its data plane -- the wire faults, sched=, copy=, bf=,
 * gso=, gro=, hold_us= -- as emu_config_parse reads them ("" when all are the
 * defaults): what the engines of a daemon on this device run with (tools/uvd/engine.c;
 * an engine is the data plane of the daemon's device in a client, docs/architecture.md
 * "Several processes: uvd").  Its length, or -ENOSPC (and "") when len is too short. */
int emu_config_dataplane_opts(const struct emu_config *cfg, char *buf, size_t len);
/* emu_config_dataplane_opts of a device's own options. */
int emu_dataplane_opts(const struct emu_dev *d, char *buf, size_t len);

int emu_create(const struct emu_config *cfg, struct emu_dev **out, char *err, size_t errlen);
void emu_destroy(struct emu_dev *d);
/* Function-level reset: every object and firmware page dropped, HCA disabled, the
 * command queue forgotten, `initializing` set again for a moment. */
int emu_reset(struct emu_dev *d);

/* BAR0 (plain memory laid out as a ConnectX: initialization segment, then UAR pages). */
volatile uint8_t *emu_bar_base(struct emu_dev *d);
size_t emu_bar_len(struct emu_dev *d);
/* The descriptor of BAR0's shared memory (cfg bar_shared), the device's: -1 without. */
int emu_bar_fd(const struct emu_dev *d);

/* Command capture, for oracles that compare what a driver sent with what other drivers
 * send (tests/integration/test_field_set.c): fn sees every command any emulated device
 * of this process ran, after its handler: the whole input as the device fetched it, the
 * output, the status.  One observer for the process (NULL: none); it runs on the
 * device's command thread and must not issue commands. */
typedef void (*emu_cmd_observer_fn)(void *ctx, uint16_t opcode, uint16_t op_mod, const uint8_t *in,
				    size_t inlen, const uint8_t *out, size_t outlen, int status);
void emu_set_cmd_observer(emu_cmd_observer_fn fn, void *ctx);

/* The BAR hook (enum shim_mmio_op values: 0 read, 1 write, 2 write-combining burst). */
void emu_mmio_access(void *dev, int op, uint64_t bar_off, unsigned size);
/* An application polled a CQ of this device and found it empty: take the arrivals off
 * the wire in the polling thread (non-blocking), so no device-thread wake-up stands
 * between a packet and its CQE.  Never blocks: returns at once if the device is busy
 * (hw/shim's poll-assist hook; rx_thread.c). */
void emu_poll_assist(struct emu_dev *d);
/* A CQ poll returned an RDMA WRITE's completion of QP qpn (rx_thread.c): the device
 * thread's hold off the socket ends now, unless that QP has sends outstanding. */
void emu_poll_found(struct emu_dev *d, uint32_t qpn);

/* The device's RoCE address (host order) and its bound UDP socket on addr:4791. */
uint32_t emu_ipv4(const struct emu_dev *d);
int emu_udp_fd(const struct emu_dev *d);
size_t emu_host_page_size(const struct emu_dev *d);

/* The emulated Ethernet segment (netaddr.c) joins every emulated port on 127.0.0.0/8,
 * in any process; a port's MAC is 02:00 followed by its address (roce_tx.c
 * emu_roce_mac_from_ipv4).  emu_neigh answers what ARP would on that segment: the MAC
 * of the port owning ipv4 (host order), -ENOENT outside 127/8.  emu_mac_ipv4 is the
 * segment's switch: the address of the port owning mac, 0 if no port can. */
int emu_neigh(uint32_t ipv4, uint8_t mac[6]);
uint32_t emu_mac_ipv4(const uint8_t mac[6]);

/* ---- IOMMU model (hw/emu/iommu.c) ---- */
struct emu_iova_seg {
	uint64_t iova;
	uint64_t len;
};
/* Map [va, va+len) for the device.  EMU_IOMMU_CONTIGUOUS: one IOVA range whatever the
 * mode (the shim's dma_alloc); otherwise the configured iova mode applies.
 * EMU_IOMMU_APP: application memory (the shim's dma_pin), which may be unmapped or
 * made read-only behind the device's back; accesses to it fail with -EFAULT then,
 * never with a signal (iommu.c).  *segs is malloc'd (free with free()), *nseg
 * entries, in VA order.  *map_id > 0 names the mapping for emu_iommu_unmap. */
#define EMU_IOMMU_CONTIGUOUS 1u
#define EMU_IOMMU_APP 2u
int emu_iommu_map(struct emu_dev *d, void *va, size_t len, unsigned flags, struct emu_iova_seg **segs,
		  uint32_t *nseg, uint64_t *map_id);
/* Map [rva, rva+len) of another process (pid), a device daemon's client: the device
 * reaches it with process_vm_readv/writev (hw/platform/peer.h), and a copy that fails
 * (the client unmapped it or died) is a DMA fault.  Pins only: the iova mode applies. */
int emu_iommu_map_remote(struct emu_dev *d, pid_t pid, uint64_t rva, size_t len, struct emu_iova_seg **segs,
			 uint32_t *nseg, uint64_t *map_id);
/* IOVAs for [rva, rva+len) of a client that runs the data plane in its own engine
 * (engine.c): one contiguous range with the offset of rva in its host page, and no
 * memory behind it, so any access by this device is a DMA fault.  The daemon's policy
 * and its commands' checks see it mapped; the client's engine maps the same IOVAs to
 * the client's own pages (emu_iommu_map_at). */
int emu_iommu_reserve(struct emu_dev *d, uint64_t rva, size_t len, struct emu_iova_seg **segs, uint32_t *nseg,
		      uint64_t *map_id);
int emu_iommu_unmap(struct emu_dev *d, uint64_t map_id);

/* Map [va, va+len) at IOVAs another IOMMU chose: nseg segments, in VA order, whose
 * lengths add up to len (a device daemon's client engine mirrors the daemon's
 * mappings of its own memory, so the IOVAs in its commands and WQEs reach it here).
 * -EEXIST when a segment overlaps a live mapping. */
int emu_iommu_map_at(struct emu_dev *d, void *va, size_t len, unsigned flags, const struct emu_iova_seg *segs,
		     uint32_t nseg, uint64_t *map_id);

/* ---- a device daemon's client engine (hw/emu/engine.c) ----
 * Several processes share one emulated NIC through tools/uvd: the daemon's device
 * owns every number (QPN, CQN, MKey...) and checks each command; a client that runs
 * the data plane itself keeps an engine, an emulated device of its own that holds the
 * same objects under the same numbers and moves its packets on its own address. */
/* Apply a command the daemon's device ran with success (its output `ref_out`) to the
 * engine: a CREATE or ALLOC takes the number the daemon gave, QUERY_HCA_CAP's answer
 * becomes the engine's capabilities, a command with no data-plane effect is skipped.
 * local_out (outlen bytes, may be NULL) receives the engine's own answer.  Returns 1
 * when the engine ran it (*status its firmware status), 0 when skipped, or -errno. */
int emu_engine_cmd(struct emu_dev *d, const void *in, size_t inlen, const void *ref_out, void *local_out,
		   size_t outlen, uint8_t *status);
/* A CREATE or ALLOC the engine refused although the daemon ran it: the DESTROY or
 * DEALLOC (16 bytes, written to undo) that gives the daemon's object back, or 0 for
 * any other command. */
size_t emu_engine_undo(const void *in, const void *ref_out, void *undo, size_t undolen);
/* The opcodes an engine runs (up to max into out; how many there are). */
size_t emu_engine_opcodes(uint16_t *out, size_t max);
/* Whether the engine's own answer replaces the daemon's: queries of state the data
 * plane changes (QP state, queue counters), which only the engine knows. */
int emu_engine_answers(uint16_t opcode);
/* Events of the engine go to fn instead of an EQ: type and sub_type as in an EQE, data
 * its 28 bytes of event_data.  Called with the device lock held: fn must not call
 * back into the device. */
typedef void (*emu_event_sink_fn)(void *arg, uint8_t type, uint8_t sub_type, const uint8_t *data);
void emu_set_event_sink(struct emu_dev *d, emu_event_sink_fn fn, void *arg);
/* The number an event's data names (CQN, QPN/SRQN, port) and its syndrome; 1 for a
 * completion event (num: its CQ), 0 for an async one. */
int emu_event_object(uint8_t type, const uint8_t *data, uint32_t *num, uint8_t *syndrome);
/* A daemon's device whose clients run the data plane in their engines: commands keep
 * working, but the device never acts on their queues, which their engines do: it
 * takes no packet off its socket, flushes nothing at 2ERR and raises no SRQ last-WQE
 * event.  (It gets no doorbell either: the daemon gives such clients no ring.) */
void emu_dataplane_off(struct emu_dev *d);

/* ---- interrupts ---- */
/* The eventfd that stands for vector's MSI-X message, created on first call.  A
 * message is sent only as PCI allows it (below): a host unmasks the vector first. */
int emu_irq_fd(struct emu_dev *d, unsigned vector);
unsigned emu_irq_count(const struct emu_dev *d);      /* vectors offered (cfg msix) */

/* ---- the PCI function (hw/emu/pci.c) ----
 * Config space of the function (little-endian, 4 KiB), read and written as a host's
 * config accessors do; the rules it carries (memory space and bus master enable, MSI-X
 * enable and masks, Function Level Reset by Device Control bit 15) are described in
 * pci.c.  After emu_create the function is as after power-on: memory space and bus
 * mastering off, MSI-X disabled, every vector masked. */
#define EMU_PCI_CFG_BYTES 4096u
#define EMU_PCI_CAP_EXP 0x60u        /* PCI Express capability */
#define EMU_PCI_CAP_MSIX 0x9cu       /* MSI-X capability */
#define EMU_MSIX_TABLE_OFF 0x2000u   /* in BAR0: 16 bytes per vector */
#define EMU_MSIX_PBA_OFF 0x3000u     /* in BAR0: pending bits, read-only */
int emu_pci_cfg_read(struct emu_dev *d, unsigned off, void *buf, size_t len);
int emu_pci_cfg_write(struct emu_dev *d, unsigned off, const void *buf, size_t len);
/* What a host's PCI core does before a driver runs: memory space and bus mastering on
 * (Linux pci_enable_device + pci_set_master, vfio-pci at open), MSI-X enabled and the
 * function unmasked (pci_enable_msix_range, vfio-pci's SET_IRQS). */
int emu_pci_host_enable(struct emu_dev *d);
/* The host routes vector and clears its mask in the MSI-X table (through BAR0). */
int emu_pci_host_unmask(struct emu_dev *d, unsigned vector);
/* The slot's power (a Mac's sleep and wake): off, the function answers all-ones and does
 * no DMA, as a removed one; on again, it is as after power-on (state and config space
 * reset). */
int emu_pci_power(struct emu_dev *d, int on);

/* ---- counters (hw/emu/counters.c) ---- */
enum emu_obj_type {
	/* Order matters: destroy-all frees the highest type first, so an object is freed
	 * before anything it may hold a reference on (a QP before its CQ and PD). */
	EMU_OBJ_UAR, EMU_OBJ_PD, EMU_OBJ_TD, EMU_OBJ_XRCD, EMU_OBJ_EQ, EMU_OBJ_CQ,
	EMU_OBJ_SRQ, EMU_OBJ_MKEY, EMU_OBJ_QP, EMU_OBJ_Q_COUNTER,
	EMU_OBJ_NTYPES
};
const char *emu_obj_type_name(enum emu_obj_type t);

#define EMU_OPCODE_SLOTS 0x1000        /* opcodes are below 0x1000 in the PRM */
struct emu_counters {
	uint64_t mmio_reads, mmio_writes;
	uint64_t host_lock_sleeps;         /* a host BAR access slept for the device lock (device.c) */
	uint64_t thread_lock_sleeps;       /* the device thread slept for it (rx_thread.c lock_or_stop) */
	uint64_t thread_lock_takes;        /* the device thread took it (rx_thread.c lock_or_stop) */
	uint64_t thread_lock_busy;         /* the device thread found it held and waited (lock_or_stop) */
	uint64_t dma_reads, dma_read_bytes, dma_writes, dma_write_bytes;
	uint64_t dma_faults;               /* device touched an IOVA nobody mapped */
	uint64_t dma_host_faults;          /* mapped IOVA, but the application's memory behind it is
					      gone or not writable (iommu.c) */
	uint64_t cmd_doorbells;            /* command_doorbell_vector writes */
	uint64_t uar_doorbells;            /* any store into a UAR page */
	uint64_t eq_doorbells, cq_doorbells, send_doorbells;
	uint64_t bf_writes;                /* write-combining bursts into a BlueFlame buffer */
	uint64_t cmds, cmds_failed;        /* commands executed; firmware status != 0 */
	uint64_t cmd_delivery_errors;      /* entry status != 0 (token, signature, chain) */
	uint64_t cmd_by_opcode[EMU_OPCODE_SLOTS];
	uint64_t cmd_failed_by_opcode[EMU_OPCODE_SLOTS];
	uint64_t cmd_by_status[256];
	uint64_t pages_given, pages_taken, pages_held;
	uint64_t cmds_held;                /* commands held for a page exchange (hold.c) */
	uint64_t pages_released_all;       /* pages dropped by release-all PAGE_REQUESTs */
	uint64_t eqes, interrupts, eq_overruns;
	uint64_t objects_live[EMU_OBJ_NTYPES];
	uint64_t objects_created[EMU_OBJ_NTYPES];
	uint64_t driver_errors;
	/* PCI function rules (pci.c) */
	uint64_t dma_blocked;              /* DMA the device did not issue: bus mastering off */
	uint64_t msix_blocked;             /* MSI-X messages not sent: bus mastering or MSI-X off */
	uint64_t msix_masked;              /* messages held pending by a function or vector mask */
	uint64_t mmio_dropped;             /* BAR stores dropped: memory space disabled */
	uint64_t flrs;                     /* function level resets */
};
/* Copy the counters out (a consistent snapshot). */
void emu_counters(struct emu_dev *d, struct emu_counters *out);

/* The "driver error" log: what a driver must never do.  Bounded ring; emu_drverr_count
 * is the total ever logged, emu_drverr_get(d, i) the i-th most recent (0 = newest). */
#define EMU_DRVERR_RING 64
#define EMU_DRVERR_LEN 200
uint64_t emu_drverr_count(struct emu_dev *d);
int emu_drverr_get(struct emu_dev *d, unsigned i, char *buf, size_t len);
/* 1 if any logged message contains `needle` (tests). */
int emu_drverr_find(struct emu_dev *d, const char *needle);

/* ---- fault injection and test triggers (hw/emu/fault.c) ---- */
int emu_fault_fail(struct emu_dev *d, uint16_t opcode, uint8_t status, uint32_t syndrome, unsigned skip);
int emu_fault_hang(struct emu_dev *d, uint16_t opcode);
/* Hold the next `opcode` command (after `skip` matching ones) for a page exchange: see
 * emu_fail_rule.page_hold.  npages > 0: until given, < 0: until taken back. */
int emu_fault_page_hold(struct emu_dev *d, uint16_t opcode, int32_t npages, unsigned skip);
/* Around the next `opcode` command (after `skip`), drop every page with a release-all
 * PAGE_REQUEST before completing it. */
int emu_fault_release_all(struct emu_dev *d, uint16_t opcode, unsigned skip);
void emu_fault_clear(struct emu_dev *d);
void emu_fault_fatal(struct emu_dev *d, uint8_t health_synd);
/* Firmware hung without a word: health_counter stops, no syndrome, nothing else. */
void emu_fault_counter_stall(struct emu_dev *d);
int emu_port_set(struct emu_dev *d, int up);
void emu_surprise_remove(struct emu_dev *d);
int emu_removed(struct emu_dev *d);

/* Ask the driver for pages (npages > 0) or give them back (npages < 0) with a
 * PAGE_REQUEST event on the EQ that asked for it (after INIT_HCA).  -EAGAIN if no EQ
 * listens for page requests. */
int emu_pages_request(struct emu_dev *d, int32_t npages);

/* State for tests. */
int emu_hca_state(struct emu_dev *d);        /* enum emu_hca_state */
uint64_t emu_pages_held(struct emu_dev *d);

/* The emulated device behind an "emu:" shim device, the engine of a "uvd:" client of
 * a daemon of engines (uvd on an emulated device without -R), or NULL for any other shim. */
struct emu_dev *emu_device_from_shim(struct shim_dev *s);

#endif
