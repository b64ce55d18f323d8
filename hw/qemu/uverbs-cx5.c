/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uverbs-cx5: the uverbs project's emulated ConnectX-5 Ex (hw/emu, 15b3:1019) as a QEMU
 * PCIe device, so that a guest's own drivers (Linux's mlx5_core and mlx5_ib, vfio-pci
 * with uverbs or rdma-core's mlx5_vfio inside the guest) drive the same device model the
 * project's tests drive through its "emu:" shim.  Built into Debian's QEMU 7.2 by
 * tools/vm (docs/architecture.md, "The VM harness"); not part of QEMU.
 *
 * What the guest sees, as on a real ConnectX-5 (lspci -vv of one, PRM "PCI Interface"):
 *  - a PCIe endpoint, 15b3:1019, subsystem 15b3:0008, class 0200 (Ethernet);
 *  - BAR0: 64-bit prefetchable, 32 MiB: the initialization segment, then UAR pages;
 *    the MSI-X table at 0x2000 and its PBA at 0x3000 lie inside it;
 *  - 64 MSI-X vectors; function-level reset (DEVCAP.FLR).
 * How it is wired to the library (hw/emu/emu.h, the same contract hw/shim/emu.c has):
 *  - BAR0 is the library's own memory: a load calls emu_mmio_access(read) and then
 *    reads those bytes; a store writes them and then calls emu_mmio_access(write);
 *  - every DMA of the device is pci_dma_read/pci_dma_write on this function (cfg.dma),
 *    so bus-master enable and the guest's IOMMU (intel-iommu) apply;
 *  - an interrupt is the library's eventfd for that vector, turned into msix_notify in
 *    the main loop;
 *  - BlueFlame: TCG splits a guest's 64-byte write-combining copy into 8- or 16-byte
 *    stores; they are gathered here and handed over as one burst (emu op 2) once the
 *    whole WQE (ctrl segment ds) arrived; a store left alone (a plain doorbell) or a
 *    burst that stalls is handed over as a doorbell (op 1), which is always correct:
 *    the driver wrote the WQE and its doorbell record to memory first (PRM
 *    "BlueFlame");
 *  - FLR and device reset: emu_reset.
 * The library's device thread is a QEMU thread (cfg.thread_start: qemu_thread_create,
 * named uverbs-cx5-rx), at SCHED_OTHER (sched=normal is always passed): it touches
 * guest memory only through cfg.dma, which needs no BQL (address_space_rw takes RCU
 * itself), and never calls into QEMU otherwise.
 */
#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/module.h"
#include "qemu/timer.h"
#include "qemu/thread.h"
#include "qemu/bswap.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "hw/pci/pcie.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qom/object.h"

#include "hw/emu/emu.h"

#define TYPE_UVERBS_CX5 "uverbs-cx5"
OBJECT_DECLARE_SIMPLE_TYPE(UverbsCx5State, UVERBS_CX5)

#define CX5_MSIX_TABLE 0x2000
#define CX5_MSIX_PBA 0x3000
#define CX5_UAR_PAGE 4096u
#define CX5_UAR_BF_OFFSET 0x800u      /* PRM "UAR Page": BlueFlame buffers from 0x800 */
#define CX5_BF_STALL_US 50            /* a burst not complete by then is a doorbell */

struct UverbsCx5State {
    PCIDevice parent_obj;
    MemoryRegion bar0;                /* container: registers below, MSI-X above */
    MemoryRegion regs;
    struct emu_dev *emu;
    uint8_t *bar;                     /* the library's BAR memory */
    uint64_t bar_len;
    struct Cx5Vector {
        UverbsCx5State *s;
        unsigned v;
        int fd;                       /* the library's eventfd for this vector */
    } vec[EMU_NUM_VECTORS];
    int cmd_log_fd;
    char *opts;                       /* the library's options (emu_config_parse) */
    char *cmdlog;                     /* file the command stream is written to */
    /* BlueFlame gathering (BQL held: MMIO and the timer) */
    bool bf_active;
    bool bf_absorb;                   /* burst already handed over as a doorbell */
    uint64_t bf_off;
    unsigned bf_len, bf_want;
    QEMUTimer *bf_timer;
    QemuThread rx_thread;             /* the library's device thread (cx5_thread_start) */
};

static int cx5_dma(void *arg, uint64_t iova, void *buf, size_t len, int write)
{
    PCIDevice *pdev = arg;
    MemTxResult r = write ? pci_dma_write(pdev, iova, buf, len) : pci_dma_read(pdev, iova, buf, len);

    return r == MEMTX_OK ? 0 : -EFAULT;
}

/* The device's thread as a QEMU thread: named, with the signals QEMU's main loop takes
 * blocked (qemu_thread_create); joined by the library with pthread_join at destroy,
 * which is what qemu_thread_join does. */
static int cx5_thread_start(void *arg, pthread_t *out, void *(*fn)(void *), void *fn_arg)
{
    UverbsCx5State *s = arg;

    qemu_thread_create(&s->rx_thread, "uverbs-cx5-rx", fn, fn_arg, QEMU_THREAD_JOINABLE);
    *out = s->rx_thread.thread;
    return 0;
}

/* ---- BlueFlame gathering ---- */

static void cx5_bf_flush(UverbsCx5State *s)
{
    if (!s->bf_active) {
        return;
    }
    timer_del(s->bf_timer);
    s->bf_active = false;
    if (s->bf_absorb) {
        s->bf_absorb = false;
        return;
    }
    /* the first 8 bytes are what a doorbell store would have carried */
    emu_mmio_access(s->emu, 1, s->bf_off, 8);
}

static void cx5_bf_stall(void *opaque)
{
    UverbsCx5State *s = opaque;

    if (s->bf_active && !s->bf_absorb) {
        /* stalled: hand over what a doorbell carries, keep the rest of the burst's
         * stores out of the device (they go to the BAR bytes only) */
        emu_mmio_access(s->emu, 1, s->bf_off, 8);
        s->bf_absorb = true;
        timer_mod(s->bf_timer, qemu_clock_get_us(QEMU_CLOCK_REALTIME) + CX5_BF_STALL_US);
        return;
    }
    s->bf_active = false;
    s->bf_absorb = false;
}

/* A store in a BlueFlame buffer (bytes already in the BAR): true when it was taken. */
static bool cx5_bf_store(UverbsCx5State *s, uint64_t off, unsigned size)
{
    if (s->bf_active) {
        if (off == s->bf_off + s->bf_len) {
            s->bf_len += size;
            if (s->bf_len >= s->bf_want) {
                timer_del(s->bf_timer);
                s->bf_active = false;
                if (s->bf_absorb) {
                    s->bf_absorb = false;
                } else {
                    emu_mmio_access(s->emu, 2, s->bf_off, s->bf_want);
                }
            }
            return true;
        }
        cx5_bf_flush(s);
    }
    if (off % 64 == 0 && size >= 8 && off % CX5_UAR_PAGE + 64 <= CX5_UAR_PAGE) {
        /* wqe_ctrl_seg (PRM "Control Segment"): byte 7 bits 5:0 are ds, the WQE's
         * size in 16-byte units; 64-byte basic blocks go over the bus */
        unsigned ds = s->bar[off + 7] & 0x3f;
        unsigned want = (ds ? (ds + 3) / 4 : 1) * 64;

        if (off % CX5_UAR_PAGE + want > CX5_UAR_PAGE) {
            want = CX5_UAR_PAGE - off % CX5_UAR_PAGE;
        }
        if (size >= want) {
            emu_mmio_access(s->emu, 2, off, want);
            return true;
        }
        s->bf_active = true;
        s->bf_absorb = false;
        s->bf_off = off;
        s->bf_len = size;
        s->bf_want = want;
        timer_mod(s->bf_timer, qemu_clock_get_us(QEMU_CLOCK_REALTIME) + CX5_BF_STALL_US);
        return true;
    }
    return false;
}

/* ---- BAR0 ---- */

static uint64_t cx5_read(void *opaque, hwaddr addr, unsigned size)
{
    UverbsCx5State *s = opaque;

    if (addr + size > s->bar_len) {
        return ~0ull;
    }
    cx5_bf_flush(s);
    emu_mmio_access(s->emu, 0, addr, size);
    return ldn_le_p(s->bar + addr, size);
}

static void cx5_write(void *opaque, hwaddr addr, uint64_t val, unsigned size)
{
    UverbsCx5State *s = opaque;

    if (addr + size > s->bar_len) {
        return;
    }
    stn_le_p(s->bar + addr, size, val);
    if (addr >= CX5_UAR_PAGE && addr % CX5_UAR_PAGE >= CX5_UAR_BF_OFFSET && cx5_bf_store(s, addr, size)) {
        return;
    }
    cx5_bf_flush(s);
    emu_mmio_access(s->emu, 1, addr, size);
}

static const MemoryRegionOps cx5_ops = {
    .read = cx5_read,
    .write = cx5_write,
    /* the BAR holds the bytes as the guest sees them (the PRM's layouts are
     * big-endian inside; the bus is little-endian) */
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8 },
    .impl = { .min_access_size = 1, .max_access_size = 8 },
};

/* ---- interrupts ---- */

static void cx5_irq(void *opaque)
{
    struct Cx5Vector *vec = opaque;
    uint64_t n;

    if (read(vec->fd, &n, sizeof(n)) != sizeof(n)) {
        return;
    }
    msix_notify(PCI_DEVICE(vec->s), vec->v);
}

/* ---- life cycle ---- */

/* The library models a PCI function too (hw/emu/pci.c: memory space and bus master
 * enable, MSI-X enable and masks, all off after reset).  Here QEMU's PCI core is the
 * function the guest sees and enforces those rules itself (no MMIO without memory
 * space, pci_dma_* fail without bus mastering, msix_notify honours the guest's masks),
 * so the library's own copy is opened once, as a host's PCI core would, and again
 * after every reset, which puts it back to power-on. */
static void cx5_host_enable(UverbsCx5State *s)
{
    emu_pci_host_enable(s->emu);
    for (unsigned v = 0; v < EMU_NUM_VECTORS; v++) {
        emu_pci_host_unmask(s->emu, v);
    }
}

static void cx5_write_config(PCIDevice *pdev, uint32_t addr, uint32_t val, int len)
{
    pci_default_write_config(pdev, addr, val, len);
    pcie_cap_flr_write_config(pdev, addr, val, len);
}

static void cx5_reset(DeviceState *dev)
{
    UverbsCx5State *s = UVERBS_CX5(dev);

    timer_del(s->bf_timer);
    s->bf_active = false;
    s->bf_absorb = false;
    if (s->emu) {
        emu_reset(s->emu);
        cx5_host_enable(s);
    }
}

static void cx5_realize(PCIDevice *pdev, Error **errp)
{
    UverbsCx5State *s = UVERBS_CX5(pdev);
    struct emu_config cfg = { 0 };
    char err[256] = "";
    g_autofree char *opts = g_strdup_printf("sched=normal%s%s", s->opts && *s->opts ? "," : "",
                                            s->opts ? s->opts : "");
    uint8_t *conf = pdev->config;

    for (unsigned v = 0; v < EMU_NUM_VECTORS; v++) {
        s->vec[v] = (struct Cx5Vector){ .s = s, .v = v, .fd = -1 };
    }
    s->cmd_log_fd = -1;
    if (emu_config_parse(opts, &cfg, err, sizeof(err))) {
        error_setg(errp, "uverbs-cx5: opts: %s", err);
        return;
    }
    if (s->cmdlog && *s->cmdlog) {
        s->cmd_log_fd = open(s->cmdlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (s->cmd_log_fd < 0) {
            error_setg_errno(errp, errno, "uverbs-cx5: cmdlog %s", s->cmdlog);
            return;
        }
        cfg.cmd_log_fd = s->cmd_log_fd;
    }
    cfg.dma = cx5_dma;
    cfg.dma_arg = pdev;
    cfg.thread_start = cx5_thread_start;
    cfg.thread_arg = s;
    if (emu_create(&cfg, &s->emu, err, sizeof(err))) {
        error_setg(errp, "uverbs-cx5: %s", err);
        return;
    }
    cx5_host_enable(s);
    s->bar = (uint8_t *)emu_bar_base(s->emu);
    s->bar_len = emu_bar_len(s->emu);

    pci_config_set_vendor_id(conf, EMU_VENDOR_ID);
    pci_config_set_device_id(conf, EMU_DEVICE_ID);
    pci_set_word(conf + PCI_SUBSYSTEM_VENDOR_ID, EMU_VENDOR_ID);
    pci_set_word(conf + PCI_SUBSYSTEM_ID, 0x0008);
    pci_config_set_class(conf, PCI_CLASS_NETWORK_ETHERNET);
    conf[PCI_INTERRUPT_PIN] = 1;
    if (pcie_endpoint_cap_init(pdev, 0x60) < 0) {
        error_setg(errp, "uverbs-cx5: PCIe capability");
        return;
    }
    pcie_cap_flr_init(pdev);

    memory_region_init(&s->bar0, OBJECT(s), "uverbs-cx5-bar0", s->bar_len);
    memory_region_init_io(&s->regs, OBJECT(s), &cx5_ops, s, "uverbs-cx5-regs", s->bar_len);
    /* below the MSI-X table and PBA, which msix_init maps at priority 1 */
    memory_region_add_subregion_overlap(&s->bar0, 0, &s->regs, -1);
    pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY | PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &s->bar0);
    if (msix_init(pdev, EMU_NUM_VECTORS, &s->bar0, 0, CX5_MSIX_TABLE, &s->bar0, 0, CX5_MSIX_PBA, 0, errp)) {
        return;
    }
    for (unsigned v = 0; v < EMU_NUM_VECTORS; v++) {
        msix_vector_use(pdev, v);
        s->vec[v].fd = emu_irq_fd(s->emu, v);
        if (s->vec[v].fd < 0) {
            error_setg(errp, "uverbs-cx5: interrupt %u: %s", v, strerror(-s->vec[v].fd));
            return;
        }
        qemu_set_fd_handler(s->vec[v].fd, cx5_irq, NULL, &s->vec[v]);
    }
    s->bf_timer = timer_new_us(QEMU_CLOCK_REALTIME, cx5_bf_stall, s);
}

static void cx5_exit(PCIDevice *pdev)
{
    UverbsCx5State *s = UVERBS_CX5(pdev);

    for (unsigned v = 0; v < EMU_NUM_VECTORS; v++) {
        if (s->vec[v].fd >= 0) {
            qemu_set_fd_handler(s->vec[v].fd, NULL, NULL, NULL);
        }
    }
    if (s->bf_timer) {
        timer_free(s->bf_timer);
    }
    msix_uninit(pdev, &s->bar0, &s->bar0);
    if (s->emu) {
        emu_destroy(s->emu);   /* closes the interrupt fds */
        s->emu = NULL;
    }
    if (s->cmd_log_fd >= 0) {
        close(s->cmd_log_fd);
    }
}

static Property cx5_props[] = {
    DEFINE_PROP_STRING("opts", UverbsCx5State, opts),
    DEFINE_PROP_STRING("cmdlog", UverbsCx5State, cmdlog),
    DEFINE_PROP_END_OF_LIST(),
};

static const VMStateDescription cx5_vmstate = {
    .name = TYPE_UVERBS_CX5,
    .unmigratable = 1,   /* the device's state lives in the library */
};

static void cx5_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = cx5_realize;
    k->exit = cx5_exit;
    k->config_write = cx5_write_config;
    k->vendor_id = EMU_VENDOR_ID;
    k->device_id = EMU_DEVICE_ID;
    k->class_id = PCI_CLASS_NETWORK_ETHERNET;
    dc->desc = "uverbs emulated ConnectX-5 Ex (hw/emu)";
    dc->reset = cx5_reset;
    dc->vmsd = &cx5_vmstate;
    device_class_set_props(dc, cx5_props);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

static const TypeInfo cx5_info = {
    .name = TYPE_UVERBS_CX5,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(UverbsCx5State),
    .class_init = cx5_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void cx5_register_types(void)
{
    type_register_static(&cx5_info);
}

type_init(cx5_register_types)
