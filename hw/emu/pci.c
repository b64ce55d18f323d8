/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The emulated ConnectX as a PCI Express function: its configuration space and the
 * rules real hardware enforces through it, whatever shim sits in front (emu:, the
 * kext's stand-in; the VFIO shim does the same on a real card).
 *
 * Config space (PCI Local Bus 3.0 ch. 6, PCIe Base 4.0 ch. 7), 4 KiB, little-endian:
 *   0x00 IDs 15b3:1019, class 0x020000 (Ethernet), subsystem 15b3:0008
 *   0x04 Command: Memory Space Enable (bit 1) and Bus Master Enable (bit 2) reset to 0
 *   0x10 BAR0: 64-bit prefetchable memory, 32 MiB (sizing by all-ones works)
 *   0x34 capability list: 0x60 PCI Express (FLR capable), 0x9c MSI-X (64 vectors, or
 *        the N of msix=N: Table Size N - 1, N table entries, PBA bits for N vectors;
 *        table at BAR0 0x2000, PBA at BAR0 0x3000, where lspci shows them on
 *        ConnectX-4/5 cards), then the end of the list
 * Rules:
 *   - Memory Space Enable off: BAR reads complete with all-ones (an Unsupported
 *     Request) and stores are dropped: nothing reaches the device's registers.
 *   - Bus Master Enable off: the function issues no memory request (PCIe 7.5.1.1.3):
 *     no DMA read or write and no MSI-X message (a message is a memory write), so a
 *     command rung in that state is never fetched and never completes.
 *   - MSI-X (PCIe 7.7.2, PCI 3.0 6.8.2): no message unless MSI-X Enable is set, the
 *     Function Mask clear and the vector's Mask bit (vector control bit 0) clear; a
 *     message held back by a mask sets the vector's Pending bit and is sent when the
 *     mask clears.  Table entries reset masked.
 *   - Function Level Reset (Device Control bit 15, PCIe 6.6.2): the function's state
 *     is gone (objects, firmware pages, command queue: device.c emu_reset_locked),
 *     and so is its config state: Command, BAR0's address, Device Control (but its
 *     Max_Payload_Size, which an FLR does not affect), MSI-X control and table back
 *     to reset values.  Like Linux's pci_reset_function, a host that wants the function back
 *     re-enables it afterwards.
 * Rule violations are counted (emu_counters) and logged as driver errors.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hw/emu/emu_dev.h"
#include "hw/shim/shim.h"

#define CFG_COMMAND 0x04
#define CMD_MEMORY 0x0002u   /* Memory Space Enable */
#define CMD_MASTER 0x0004u   /* Bus Master Enable */
#define CFG_STATUS 0x06
#define CFG_BAR0 0x10
#define EXP_DEVCAP (EMU_PCI_CAP_EXP + 0x04)
#define EXP_DEVCTL (EMU_PCI_CAP_EXP + 0x08)
#define EXP_LNKCAP (EMU_PCI_CAP_EXP + 0x0c)
#define EXP_LNKSTA (EMU_PCI_CAP_EXP + 0x12)
#define MSIX_CTRL (EMU_PCI_CAP_MSIX + 0x02)
#define MSIX_CTRL_ENABLE 0x8000u
#define MSIX_CTRL_MASKALL 0x4000u
#define DEVCTL_FLR 0x8000u
#define DEVCTL_MPS 0x00e0u   /* Max_Payload_Size, bits 7:5 (PCIe 7.5.3.4) */
#define CFG_BAR0_RESET 0x0000000cu   /* memory, 64-bit, prefetchable, no address */
#define CFG_INTLINE 0x3c
/* Device Control reset value: relaxed ordering and no-snoop enabled, max read request
 * 512 bytes (PCIe 7.5.3.4). */
#define DEVCTL_RESET 0x2810u

struct emu_pci {
	uint8_t cfg[EMU_PCI_CFG_BYTES];
	uint8_t wmask[EMU_PCI_CFG_BYTES];       /* bits software may write */
	uint32_t msix[EMU_NUM_VECTORS][4];      /* addr lo, addr hi, data, vector control */
	unsigned nvec;                          /* table entries: emu_irq_count (msix=N) */
	uint64_t pba;
	bool bar_painted;                       /* a read with memory space off painted BAR memory */
};

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)v); put16(p + 2, (uint16_t)(v >> 16)); }

static struct emu_pci *pci(struct emu_dev *d) { return d->pci; }

static uint16_t cmd_reg(struct emu_dev *d) { return get16(pci(d)->cfg + CFG_COMMAND); }
static uint16_t msix_ctrl(struct emu_dev *d) { return get16(pci(d)->cfg + MSIX_CTRL); }

/* Config state after power-on (flr false) and after an FLR (flr true).  PCIe Base 4.0
 * 6.6.2: an FLR leaves sticky and HwInit registers, Captured Slot Power Limit, the Link
 * Control/Control 2 fields it lists, and Max_Payload_Size in Device Control; every
 * other register goes back to its initial value, BAR0's address among them (Linux
 * pci_reset_function saves and restores the config state around pcie_flr for that
 * reason).  Of the writable registers here, only Max_Payload_Size stays. */
static void cfg_reset(struct emu_pci *p, bool flr)
{
	uint16_t mps = get16(p->cfg + EXP_DEVCTL) & DEVCTL_MPS;

	put16(p->cfg + CFG_COMMAND, 0);
	put32(p->cfg + CFG_BAR0, CFG_BAR0_RESET);
	put32(p->cfg + CFG_BAR0 + 4, 0);
	p->cfg[CFG_INTLINE] = 0;
	if (!flr)
		mps = DEVCTL_RESET & DEVCTL_MPS;
	put16(p->cfg + EXP_DEVCTL, (uint16_t)((DEVCTL_RESET & ~DEVCTL_MPS) | mps));
	/* Table Size is N - 1 (PCIe 7.7.2.2); disabled, unmasked */
	put16(p->cfg + MSIX_CTRL, (uint16_t)(p->nvec - 1));
	for (unsigned v = 0; v < EMU_NUM_VECTORS; v++) {
		memset(p->msix[v], 0, sizeof(p->msix[v]));
		p->msix[v][3] = 1;                           /* PCI 3.0 6.8.2.9: resets masked */
	}
	p->pba = 0;
}

int emu_pci_create(struct emu_dev *d)
{
	struct emu_pci *p = calloc(1, sizeof(*p));
	uint8_t *c;

	if (!p)
		return -ENOMEM;
	c = p->cfg;
	/* the vectors the function offers (msix=N, 1..64): the MSI-X table has that many
	 * entries, as a card's firmware sizes it (mlxconfig NUM_PF_MSIX) */
	p->nvec = emu_irq_count(d);
	if (p->nvec < 1 || p->nvec > EMU_NUM_VECTORS)
		p->nvec = EMU_NUM_VECTORS;
	put16(c + 0x00, EMU_VENDOR_ID);
	put16(c + 0x02, EMU_DEVICE_ID);
	put16(c + CFG_STATUS, 0x0010);                   /* capabilities list */
	c[0x09] = 0x00;                                  /* class 0x020000: Ethernet controller */
	c[0x0a] = 0x00;
	c[0x0b] = 0x02;
	put16(c + 0x2c, EMU_VENDOR_ID);
	put16(c + 0x2e, 0x0008);
	c[0x34] = EMU_PCI_CAP_EXP;
	c[0x3d] = 1;                                     /* INTA */
	/* PCI Express capability, version 2, endpoint: max payload 512 supported, FLR
	 * capable (Device Capabilities bit 28); link 16 GT/s x16 (ConnectX-5 Ex). */
	c[EMU_PCI_CAP_EXP] = 0x10;
	c[EMU_PCI_CAP_EXP + 1] = EMU_PCI_CAP_MSIX;
	put16(c + EMU_PCI_CAP_EXP + 2, 0x0002);
	put32(c + EXP_DEVCAP, (1u << 28) | 2u);
	put32(c + EXP_LNKCAP, (16u << 4) | 4u);
	put16(c + EXP_LNKSTA, (16u << 4) | 4u);
	/* MSI-X: the table and the PBA in BAR0 (BIR 0). */
	c[EMU_PCI_CAP_MSIX] = 0x11;
	c[EMU_PCI_CAP_MSIX + 1] = 0;
	put32(c + EMU_PCI_CAP_MSIX + 4, EMU_MSIX_TABLE_OFF);
	put32(c + EMU_PCI_CAP_MSIX + 8, EMU_MSIX_PBA_OFF);

	/* Writable bits: Command (memory, master, parity, SERR, INTx disable), BAR0's
	 * address bits above its size, Device Control, MSI-X enable and function mask. */
	put16(p->wmask + CFG_COMMAND, 0x0546);
	put32(p->wmask + CFG_BAR0, ~(uint32_t)(EMU_BAR0_LEN - 1));
	put32(p->wmask + CFG_BAR0 + 4, 0xffffffffu);
	p->wmask[0x3c] = 0xff;
	put16(p->wmask + EXP_DEVCTL, 0xffff);
	put16(p->wmask + MSIX_CTRL, MSIX_CTRL_ENABLE | MSIX_CTRL_MASKALL);
	cfg_reset(p, false);
	d->pci = p;
	if (d->cfg.engine) {
		/* A daemon's client engine: the daemon's host enabled the function. */
		put16(p->cfg + CFG_COMMAND, CMD_MEMORY | CMD_MASTER);
		put16(p->cfg + MSIX_CTRL, (uint16_t)(msix_ctrl(d) | MSIX_CTRL_ENABLE));
		for (unsigned v = 0; v < EMU_NUM_VECTORS; v++)
			p->msix[v][3] = 0;
	}
	return 0;
}

void emu_pci_destroy(struct emu_dev *d)
{
	free(d->pci);
	d->pci = NULL;
}

bool emu_pci_mem_enabled(struct emu_dev *d)
{
	return (cmd_reg(d) & CMD_MEMORY) != 0;
}

bool emu_pci_dma_allowed(struct emu_dev *d)
{
	return (cmd_reg(d) & CMD_MASTER) != 0;
}

int emu_pci_dma_blocked(struct emu_dev *d, uint64_t iova, size_t len, int write)
{
	d->ctr.dma_blocked++;
	emu_drverr(d, "DMA %s of %zu bytes at IOVA 0x%llx with bus mastering off (PCI_COMMAND.MASTER=0): "
		   "not issued", write ? "write" : "read", len, (unsigned long long)iova);
	return -EIO;
}

/* Send the message of vector v now, or hold it pending.  Called with the lock held. */
bool emu_pci_msix_send(struct emu_dev *d, unsigned v)
{
	struct emu_pci *p = pci(d);
	uint16_t ctl = msix_ctrl(d);

	if (v >= p->nvec) {   /* no table entry: no message (EQs on it are refused, cmd_eq.c) */
		d->ctr.msix_blocked++;
		emu_drverr(d, "MSI-X vector %u beyond the table's %u entries: no message", v, p->nvec);
		return false;
	}
	if (!emu_pci_dma_allowed(d)) {
		d->ctr.msix_blocked++;
		emu_drverr(d, "MSI-X vector %u with bus mastering off: no message", v);
		return false;
	}
	if (!(ctl & MSIX_CTRL_ENABLE)) {
		d->ctr.msix_blocked++;
		emu_drverr(d, "MSI-X vector %u while MSI-X is disabled: no message", v);
		return false;
	}
	if ((ctl & MSIX_CTRL_MASKALL) || (p->msix[v][3] & 1)) {
		d->ctr.msix_masked++;
		p->pba |= 1ull << v;
		return false;
	}
	return true;
}

/* Masks or enables changed: send what was pending and may go now (PCI 3.0 6.8.2.9). */
static void msix_flush_pending(struct emu_dev *d)
{
	struct emu_pci *p = pci(d);
	uint16_t ctl = msix_ctrl(d);

	if (!p->pba || !(ctl & MSIX_CTRL_ENABLE) || (ctl & MSIX_CTRL_MASKALL) || !emu_pci_dma_allowed(d))
		return;
	for (unsigned v = 0; v < p->nvec; v++)
		if ((p->pba >> v & 1) && !(p->msix[v][3] & 1)) {
			p->pba &= ~(1ull << v);
			emu_irq_deliver(d, v);
		}
}

/* ---- config space accesses ---- */

int emu_pci_cfg_read(struct emu_dev *d, unsigned off, void *buf, size_t len)
{
	if (!d || !buf || off > EMU_PCI_CFG_BYTES || len > EMU_PCI_CFG_BYTES - off)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	if (d->removed)
		memset(buf, 0xff, len);          /* the function left the bus */
	else
		memcpy(buf, pci(d)->cfg + off, len);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

int emu_pci_cfg_write(struct emu_dev *d, unsigned off, const void *buf, size_t len)
{
	const uint8_t *b = buf;
	struct emu_pci *p;
	uint16_t cmd0, ctl0, devctl;

	if (!d || !buf || off > EMU_PCI_CFG_BYTES || len > EMU_PCI_CFG_BYTES - off)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	if (d->removed) {
		pthread_mutex_unlock(&d->lock);
		return 0;                        /* dropped, as by a missing device */
	}
	p = pci(d);
	cmd0 = cmd_reg(d);
	ctl0 = msix_ctrl(d);
	for (size_t i = 0; i < len; i++) {
		uint8_t m = p->wmask[off + i];
		p->cfg[off + i] = (uint8_t)((p->cfg[off + i] & ~m) | (b[i] & m));
	}
	devctl = get16(p->cfg + EXP_DEVCTL);
	if (devctl & DEVCTL_FLR) {
		/* Initiate FLR reads back 0; the function resets (PCIe 7.5.3.4). */
		d->ctr.flrs++;
		emu_log(d, EMU_LOG_INFO, "function level reset");
		emu_reset_locked(d);
		cfg_reset(p, true);
		p->bar_painted = true;       /* the init segment is rebuilt on the next access */
	} else {
		if (!(cmd0 & CMD_MEMORY) && emu_pci_mem_enabled(d) && p->bar_painted) {
			p->bar_painted = false;
			emu_iseg_restore(d);
		}
		if (cmd_reg(d) != cmd0 || msix_ctrl(d) != ctl0)
			msix_flush_pending(d);
	}
	pthread_mutex_unlock(&d->lock);
	return 0;
}

/* ---- BAR accesses the function model decides (device.c's hook calls this first) ---- */

static bool in_msix(uint64_t off, unsigned size)
{
	return off >= EMU_MSIX_TABLE_OFF && off + size <= EMU_MSIX_PBA_OFF + 8;
}

bool emu_pci_bar_access(struct emu_dev *d, int op, uint64_t off, unsigned size)
{
	struct emu_pci *p = pci(d);

	if (!emu_pci_mem_enabled(d)) {
		if (op == SHIM_MMIO_READ) {
			if (off < d->bar_len)
				memset(d->bar + off, 0xff, size <= d->bar_len - off ? size : d->bar_len - off);
			p->bar_painted = true;
		} else {
			d->ctr.mmio_dropped++;
			emu_drverr(d, "store of %u bytes at BAR0 offset 0x%llx with memory space disabled "
				   "(PCI_COMMAND.MEMORY=0): dropped", size, (unsigned long long)off);
		}
		return true;
	}
	if (p->bar_painted && off < EMU_MSIX_TABLE_OFF) {
		p->bar_painted = false;
		emu_iseg_restore(d);
	}
	if (!in_msix(off, size))
		return false;
	if (off >= EMU_MSIX_PBA_OFF) {
		/* The PBA is read-only. */
		if (op == SHIM_MMIO_READ)
{
			put32(d->bar + EMU_MSIX_PBA_OFF, (uint32_t)p->pba);
			put32(d->bar + EMU_MSIX_PBA_OFF + 4, (uint32_t)(p->pba >> 32));
		}
		return true;
	}
	/* Past the table's N entries (and up to the PBA): no register, reads 0, writes are
	 * dropped. */
	if (off + size > EMU_MSIX_TABLE_OFF + p->nvec * 16u) {
		if (op == SHIM_MMIO_READ)
			memset(d->bar + off, 0, size);
		return true;
	}
	/* The table: kept here (an FLR or a memset of BAR memory cannot lose it) and shown
	 * in BAR memory before each load; each dword is little-endian (PCI 3.0 6.8.2.6). */
	uint8_t *win = d->bar + EMU_MSIX_TABLE_OFF;
	if (op == SHIM_MMIO_READ) {
		for (unsigned v = 0; v < p->nvec; v++)
			for (unsigned w = 0; w < 4; w++)
				put32(win + v * 16 + w * 4, p->msix[v][w]);
		return true;
	}
	for (uint64_t o = (off - EMU_MSIX_TABLE_OFF) & ~3ull; o < off + size - EMU_MSIX_TABLE_OFF; o += 4) {
		const uint8_t *s = win + o;
		uint32_t val = (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24;
		unsigned v = (unsigned)(o / 16), w = (unsigned)(o % 16 / 4);

		p->msix[v][w] = w == 3 ? (val & 1) : val;    /* vector control: only the mask bit */
	}
	msix_flush_pending(d);
	return true;
}

/* ---- what a host does to use the function ---- */

int emu_pci_host_enable(struct emu_dev *d)
{
	uint8_t b[2];
	uint16_t v;
	int rc;

	/* Linux pci_enable_device + pci_set_master, vfio-pci at open: memory and bus
	 * mastering on. */
	rc = emu_pci_cfg_read(d, CFG_COMMAND, b, 2);
	if (rc < 0)
		return rc;
	v = (uint16_t)(get16(b) | CMD_MEMORY | CMD_MASTER);
	put16(b, v);
	rc = emu_pci_cfg_write(d, CFG_COMMAND, b, 2);
	if (rc < 0)
		return rc;
	/* MSI-X on, function unmasked (pci_enable_msix_range, vfio-pci's SET_IRQS). */
	rc = emu_pci_cfg_read(d, MSIX_CTRL, b, 2);
	if (rc < 0)
		return rc;
	v = (uint16_t)((get16(b) | MSIX_CTRL_ENABLE) & ~MSIX_CTRL_MASKALL);
	put16(b, v);
	return emu_pci_cfg_write(d, MSIX_CTRL, b, 2);
}

int emu_pci_host_unmask(struct emu_dev *d, unsigned vector)
{
	uint8_t *ctl;

	if (!d || vector >= pci(d)->nvec)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	if (!emu_pci_mem_enabled(d)) {
		pthread_mutex_unlock(&d->lock);
		return -EIO;
	}
	/* The host writes the entry's message (address and data are the platform's; the
	 * model delivers through the vector's eventfd) and clears its mask, through the
	 * BAR, as pci_msix_unmask does. */
	ctl = d->bar + EMU_MSIX_TABLE_OFF + vector * 16u + 12u;
	put32(ctl, 0);
	pthread_mutex_unlock(&d->lock);
	emu_mmio_access(d, SHIM_MMIO_WRITE, EMU_MSIX_TABLE_OFF + vector * 16u + 12u, 4);
	return 0;
}

/* ---- power ---- */

int emu_pci_power(struct emu_dev *d, int on)
{
	if (!d)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	if (!on) {
		/* The slot's power is off (the Mac sleeps): the function answers nothing,
		 * every read is all-ones, no DMA (device.c and iommu.c treat it as gone). */
		d->removed = true;
		emu_log(d, EMU_LOG_INFO, "power off");
	} else if (d->removed) {
		/* Power back: a function as after power-on, config space included. */
		madvise(d->bar, d->bar_len, MADV_DONTNEED);   /* BAR memory reads zero again */
		d->removed = false;
		emu_reset_locked(d);
		cfg_reset(pci(d), false);
		pci(d)->bar_painted = false;
		emu_log(d, EMU_LOG_INFO, "power on");
	}
	pthread_mutex_unlock(&d->lock);
	return 0;
}
