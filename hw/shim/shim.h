/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/shim: what any platform gives the driver, and nothing more (docs/architecture.md, "The shim interface and its MMIO hook").
 *
 * Three implementations sit behind this interface, chosen by the URI scheme:
 *   emu:[opts]              an emulated ConnectX in this process (hw/shim/emu.c -> hw/emu)
 *   vfio:<BDF>              Linux VFIO (hw/shim/vfio.c)
 *   kext:<index>            the macOS kext user client (hw/shim/kext.c, macOS only)
 *   uvd:<socket path>       a function shared through the device daemon tools/uvd
 *                           (hw/shim/uvd.c): control path there, data path here
 * Tests may register their own (a scripted responder) with shim_register().
 *
 * Rules for callers (hw/mlx5, firmware-cmd):
 *  - an IOVA is never assumed equal to a VA, and the driver never dereferences an IOVA;
 *  - host memory follows shim_dev.page_size (4 KiB on x86-64 Linux, 16 KiB on Apple
 *    Silicon); firmware pages stay 4 KiB;
 *  - register access goes through hw/shim/mmio.h only, which calls the BAR's hook when
 *    the shim installed one (the emulator does; hardware shims do not).
 *
 * Errors: functions return 0 or a negative errno; shim_dev.err holds the human detail.
 */
#ifndef UVERBS_HW_SHIM_SHIM_H
#define UVERBS_HW_SHIM_SHIM_H

#include <stddef.h>
#include <stdint.h>

#define SHIM_MAX_BARS 6
#define SHIM_ERR_LEN 256

struct shim_dev;

/* PCI identity and link of the function (open -> ids, BDF, link). */
struct shim_pci_info {
	uint16_t vendor_id;
	uint16_t device_id;
	uint16_t subsys_vendor_id;
	uint16_t subsys_device_id;
	char bdf[32];                /* "0000:03:00.0", or "emu:127.0.77.150" for an emulated NIC */
	uint8_t link_speed_gen;      /* 1..6, 0 unknown */
	uint8_t link_width;          /* lanes, 0 unknown */
	uint16_t max_payload_bytes;  /* 0 unknown */
};

/* MMIO access kinds reported to a BAR hook. */
enum shim_mmio_op {
	SHIM_MMIO_READ = 0,   /* called before the load, so the device can update the register */
	SHIM_MMIO_WRITE = 1,  /* called after the store */
	SHIM_MMIO_WC_WRITE = 2, /* after a write-combining (BlueFlame) burst was stored */
};

/* A hook a software device installs on its BAR. Hardware shims leave it NULL: the
 * driver pays one predictable branch per register access for it. */
struct shim_mmio_hook {
	void (*access)(void *ctx, enum shim_mmio_op op, uint64_t bar_off, unsigned size);
	void *ctx;
	/* Optional: the driver found a CQ empty.  A software device moves its receive path
	 * forward in the polling thread (a real NIC works beside the CPU and needs none). */
	void (*poll_assist)(void *ctx);
	/* Optional: a CQ poll returned an RDMA WRITE's completion, the newest of that poll
	 * for QP `qpn`.  A software device that stopped watching its wire while the
	 * application polled goes back to it soon, unless that QP has sends outstanding:
	 * the application may now wait for the answer by watching memory. */
	void (*poll_found)(void *ctx, uint32_t qpn);
};

struct shim_bar {
	volatile uint8_t *base;        /* uncached mapping */
	size_t len;
	volatile uint8_t *wc_base;     /* write-combining mapping of the same BAR (UAR pages), or NULL */
	const struct shim_mmio_hook *hook; /* NULL on hardware */
};

/* Driver-owned DMA memory: queues, mailboxes, doorbell records, firmware pages. */
struct shim_dma {
	void *va;
	uint64_t iova;
	size_t len;
	void *priv;
};

struct shim_iova_seg {
	uint64_t iova;
	uint64_t len;
};

/* Application memory pinned for the device (memory registration). */
struct shim_pin {
	void *va;
	size_t len;
	uint32_t nseg;
	struct shim_iova_seg *seg;   /* owned by the shim until dma_unpin */
	void *priv;
	int readonly;                /* 1: the device may only read it (pages not writable) */
};

/* An event the device daemon routed to this process (hw/shim/uvd.c): the daemon owns
 * the EQs and forwards each event to the process that owns the object it names. */
enum shim_remote_kind {
	SHIM_REMOTE_COMP = 1,   /* completion event on CQ `num` */
	SHIM_REMOTE_ASYNC = 2,  /* async event: `type` is an enum mx5_event_type (hw/mlx5/mx5.h) */
	SHIM_REMOTE_EQE = 3,    /* an EQE of the process's own engine (hw/emu/engine.c): `type`
				 * the PRM event type, eqe_type its sub type, `num` the object
				 * its data names, syndrome a CQ error's */
};
struct shim_remote_event {
	uint32_t kind;
	uint32_t type;
	uint32_t num;           /* CQN, QPN, SRQN or port, by type */
	uint8_t eqe_type, syndrome;
};

struct shim_ops {
	const char *scheme;          /* "emu", "vfio", "kext", or a test's own */
	int (*open)(const char *args, struct shim_dev **out);
	void (*close)(struct shim_dev *dev);               /* quiesce, release every pin */
	int (*reset)(struct shim_dev *dev);
	int (*bar)(struct shim_dev *dev, unsigned index, struct shim_bar *out);
	int (*dma_alloc)(struct shim_dev *dev, size_t len, size_t align, struct shim_dma *out);
	void (*dma_free)(struct shim_dev *dev, struct shim_dma *dma);
	int (*dma_pin)(struct shim_dev *dev, void *va, size_t len, struct shim_pin *out);
	void (*dma_unpin)(struct shim_dev *dev, struct shim_pin *pin);
	/* A pollable fd (POLLIN) per interrupt vector; read 8 bytes to acknowledge. */
	int (*irq_fd)(struct shim_dev *dev, unsigned vector);
	unsigned (*irq_count)(struct shim_dev *dev);
	/* Optional, for a device that is its own network (the emulator), NULL on hardware,
	 * where the user configures both (uverbs/netcfg.c).  port_addrs: the IP addresses
	 * the port answers on, as GIDs (IPv4 mapped ::ffff:a.b.c.d, RFC 4291 2.5.5.2);
	 * returns how many it wrote.  neigh: the MAC the device's network delivers `addr`
	 * to, 0 or -ENOENT (the job ARP/ND does for a host, RFC 826 / RFC 4861). */
	int (*port_addrs)(struct shim_dev *dev, unsigned port, uint8_t (*addrs)[16], unsigned max);
	int (*neigh)(struct shim_dev *dev, const uint8_t addr[16], uint8_t mac[6]);
	/* Optional, only for a function shared through a device daemon (hw/shim/uvd.c,
	 * "uvd:<socket>"); NULL elsewhere.  The daemon owns bring-up, firmware pages, EQs
	 * and the command queue, so the driver attaches instead of bringing up:
	 * cmd runs one command in the daemon, which checks it against the objects this
	 * process owns; 0 or -errno, the firmware's status and syndrome, and the daemon's
	 * message in msg.  comp_eqn: the EQ the daemon routes this process's completion
	 * events through.  next_event pops one routed event (1), none (0), or -ENODEV
	 * once the daemon is gone.  Every irq_fd is signalled when an event arrives. */
	int (*cmd)(struct shim_dev *dev, const void *in, size_t inlen, void *out, size_t outlen,
		   uint8_t *status, uint32_t *syndrome, char *msg, size_t msglen);
	uint32_t (*comp_eqn)(struct shim_dev *dev);
	int (*next_event)(struct shim_dev *dev, struct shim_remote_event *ev);
	/* Optional, only for a function whose owner may share it with other processes by
	 * consent (the kext, hw/shim/kext.c, shim-kext/include/uvshim_abi.h ABI 1.1); NULL
	 * elsewhere.  share_uar: let process pid map the host page of BAR0 at bar_off (a
	 * page of the UAR region; grant != 0), or take it back (grant 0).  pin_for: wire
	 * [va, va+len) of process pid, which has opened the function as a guest, for the
	 * device, as dma_pin does for our own memory; undone by dma_unpin. */
	int (*share_uar)(struct shim_dev *dev, int32_t pid, uint64_t bar_off, int grant);
	int (*pin_for)(struct shim_dev *dev, int32_t pid, uint64_t va, size_t len, struct shim_pin *out);
	/* Optional: the emulated device (a struct emu_dev of hw/emu, opaque here) behind
	 * this one, for tests and tools that read its counters (emu_device_from_shim): the
	 * "emu:" shim's own, or the engine of a device daemon's client that runs the data
	 * plane itself; NULL elsewhere. */
	void *(*emulated)(struct shim_dev *dev);
};

/* Designated initializers for a shim's struct shim_ops from functions named
 * <prefix>_open, <prefix>_close, ... : SHIM_OPS_CORE fills the scheme and the
 * operations every shim has, SHIM_OPS_NETWORK the optional pair for a device that is
 * its own network.  A table names any other optional operation itself:
 *   const struct shim_ops shim_vfio_ops = { SHIM_OPS_CORE("vfio", vfio), .reset = vfio_reset }; */
#define SHIM_OPS_CORE(scheme_, prefix) \
	.scheme = scheme_, .open = prefix##_open, .close = prefix##_close, .bar = prefix##_bar, \
	.dma_alloc = prefix##_dma_alloc, .dma_free = prefix##_dma_free, \
	.dma_pin = prefix##_dma_pin, .dma_unpin = prefix##_dma_unpin, \
	.irq_fd = prefix##_irq_fd, .irq_count = prefix##_irq_count
#define SHIM_OPS_NETWORK(prefix) .port_addrs = prefix##_port_addrs, .neigh = prefix##_neigh

/* Every shim's device starts with this header. */
struct shim_dev {
	const struct shim_ops *ops;
	struct shim_pci_info pci;
	size_t page_size;            /* host page size the device must use for host memory */
	char err[SHIM_ERR_LEN];      /* last error, human readable */
};

/* Open a device by URI ("emu:", "emu:ip=127.0.0.7,page=16k", "vfio:0000:03:00.0"). */
int shim_open(const char *uri, struct shim_dev **out, char *err, size_t errlen);
void shim_close(struct shim_dev *dev);

/* Register an implementation (the built-in ones are registered already). */
int shim_register(const struct shim_ops *ops);

static inline int shim_bar(struct shim_dev *d, unsigned i, struct shim_bar *o) { return d->ops->bar(d, i, o); }
static inline int shim_reset(struct shim_dev *d) { return d->ops->reset ? d->ops->reset(d) : -95 /* EOPNOTSUPP */; }
static inline int shim_dma_alloc(struct shim_dev *d, size_t len, size_t align, struct shim_dma *o) { return d->ops->dma_alloc(d, len, align, o); }
static inline void shim_dma_free(struct shim_dev *d, struct shim_dma *m) { d->ops->dma_free(d, m); }
/* A shim that cannot tell leaves readonly 0: the device may write. */
static inline int shim_dma_pin(struct shim_dev *d, void *va, size_t len, struct shim_pin *o)
{
	if (o)
		o->readonly = 0;
	return d->ops->dma_pin(d, va, len, o);
}
static inline void shim_dma_unpin(struct shim_dev *d, struct shim_pin *p) { d->ops->dma_unpin(d, p); }
static inline int shim_irq_fd(struct shim_dev *d, unsigned v) { return d->ops->irq_fd(d, v); }
static inline unsigned shim_irq_count(struct shim_dev *d) { return d->ops->irq_count ? d->ops->irq_count(d) : 0; }

#endif
