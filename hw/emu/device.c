/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The emulated device's registers: BAR0 as plain memory laid out as a ConnectX
 * (PRM "Initialization Segment" at offset 0, UAR pages above it), the MMIO hook that
 * gives the registers their behaviour, and the device's life cycle.
 *
 * Reads are reported before the load: the hook refreshes `initializing`, the health
 * counter and the internal timer, or paints all-ones after a surprise removal.
 * Writes are reported after the store: the cmdq address, the command doorbell vector
 * and stores into UAR pages act here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "hw/emu/emu_dev.h"
#include "hw/emu/netaddr.h"
#include "hw/emu/transport.h"
#include "hw/platform/cpu.h"
#include "hw/platform/notify.h"
#include "hw/platform/shm.h"
#include "hw/shim/shim.h"

/* Init segment words that mlx5_ifc.h's initial_seg leaves reserved but Linux's
 * struct mlx5_init_seg (include/linux/mlx5/device.h) names: the command timeouts and
 * the free-running internal timer.  Byte offsets; written with prm.h's dword store. */
#define EMU_ISEG_CMD_EXEC_TO 0xff8
#define EMU_ISEG_CMD_Q_INIT_TO 0xffc
#define EMU_ISEG_INTERNAL_TIMER_H 0x1000
#define EMU_ISEG_INTERNAL_TIMER_L 0x1004
#define EMU_ISEG_BYTES (PRM_SIZE(initial_seg))

/* ConnectX-5 Ex firmware line is 16.x (ConnectX-4 is 12.x, ConnectX-4 Lx 14.x). */
#define EMU_FW_MAJOR 16
#define EMU_FW_MINOR 35
#define EMU_FW_SUBMINOR 1012
#define EMU_CMDIF_REV 5               /* PRM: the only command interface revision */
#define EMU_LOG_CMDQ_SIZE 5           /* 32 entries, as ConnectX firmware reports */
#define EMU_LOG_CMDQ_STRIDE 6         /* 64-byte entries */
#define EMU_CMD_EXEC_TO_MS 60000
/* The `initializing` bit's default time (init_ms= sets another): long enough that the
 * driver's wait for it runs (hw/mlx5/init.c polls it, backing off from 10 us), short
 * enough for an ibv_open_device within 5 ms (issue 32: 2 ms here, and the wait's
 * doubling overshooting it, were 3.8 ms of a 5.4 ms open). */
#define EMU_DEFAULT_INIT_DELAY_MS 1

uint64_t emu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint8_t *iseg(struct emu_dev *d)
{
	return d->bar;
}

/* ---- init segment ---- */

static void iseg_fill(struct emu_dev *d)
{
	uint8_t *s = iseg(d);
	uint8_t *hb = PRM_ADDR(initial_seg, s, health_buffer);

	PRM_SET(initial_seg, s, fw_rev_major, EMU_FW_MAJOR);
	PRM_SET(initial_seg, s, fw_rev_minor, EMU_FW_MINOR);
	PRM_SET(initial_seg, s, fw_rev_subminor, EMU_FW_SUBMINOR);
	PRM_SET(initial_seg, s, cmd_interface_rev, EMU_CMDIF_REV);
	PRM_SET(initial_seg, s, log_cmdq_size, d->log_cmdq_size);
	PRM_SET(initial_seg, s, log_cmdq_stride, d->log_cmdq_stride);
	PRM_SET(initial_seg, s, initializing, 1);
	/* nic_ifc=disabled: the state a previous owner's teardown left in the command
	 * queue address dword (rdma-core mlx5_vfio.c mlx5_vfio_teardown_hca_fast writes
	 * MLX5_NIC_IFC_DISABLED there); the next driver's cmdq address write clears it */
	if (d->cfg.nic_ifc_disabled)
		PRM_SET(initial_seg, s, nic_interface_state, 1);
	PRM_SET(health_buffer, hb, fw_version,
		((uint32_t)EMU_FW_MAJOR << 24) | ((uint32_t)EMU_FW_MINOR << 16) | EMU_FW_SUBMINOR);
	PRM_SET(health_buffer, hb, hw_id, EMU_DEVICE_ID);
	prm_store_be32(s, EMU_ISEG_CMD_EXEC_TO * 8, EMU_CMD_EXEC_TO_MS);
	prm_store_be32(s, EMU_ISEG_CMD_Q_INIT_TO * 8, EMU_CMD_EXEC_TO_MS);
}

/* Called with the lock held before a read of the init segment. */
static void iseg_refresh(struct emu_dev *d)
{
	uint8_t *s = iseg(d);
	uint64_t now = emu_now_ns();
	uint64_t ticks = now - d->t0_ns;

	PRM_SET(initial_seg, s, initializing, now < d->ready_at_ns ? 1 : 0);
	/* Internal timer: free-running, in nanoseconds here (PRM: device clock ticks). */
	prm_store_be32(s, EMU_ISEG_INTERNAL_TIMER_H * 8, (uint32_t)(ticks >> 32));
	prm_store_be32(s, EMU_ISEG_INTERNAL_TIMER_L * 8, (uint32_t)ticks);
	/* The health counter advances while firmware is alive (Linux's poll_health calls
	 * the device dead when it stops); a fatal syndrome stalls it. */
	if (!d->fatal && !d->counter_stalled) {
		d->health_counter = (uint32_t)(ticks / 1000000ull) & 0xffffff;
		PRM_SET(initial_seg, s, health_counter, d->health_counter);
	}
}

static void cmdq_addr_written(struct emu_dev *d, uint64_t off)
{
	uint8_t *s = iseg(d);
	uint64_t hi = PRM_GET(initial_seg, s, cmdq_phy_addr_63_32);
	uint64_t lo = PRM_GET(initial_seg, s, cmdq_phy_addr_31_12);

	d->cmdq_iova = (hi << 32) | (lo << 12);
	/* log_cmdq_size/stride share the dword with the address: they are read-only and
	 * keep reading back as the device's values whatever the driver stored. */
	PRM_SET(initial_seg, s, log_cmdq_size, d->log_cmdq_size);
	PRM_SET(initial_seg, s, log_cmdq_stride, d->log_cmdq_stride);
	if (off / 4 == PRM_OFF(initial_seg, cmdq_phy_addr_31_12) / 32) {
		d->cmdq_programmed = true;
		/* The device takes a moment to pick the queue up: `initializing` is set
		 * again and clears shortly (Linux drivers/net/ethernet/mellanox/mlx5/core/
		 * main.c calls wait_fw_init again after mlx5_cmd_init). */
		d->ready_at_ns = emu_now_ns() + (uint64_t)(d->cfg.init_delay_ms ? d->cfg.init_delay_ms
										 : EMU_DEFAULT_INIT_DELAY_MS) *
							    1000000ull / 2;
		PRM_SET(initial_seg, s, initializing, 1);
		emu_log(d, EMU_LOG_DEBUG, "command queue at iova 0x%llx", (unsigned long long)d->cmdq_iova);
	}
}

/* ---- UAR pages ---- */

uint32_t emu_uar_page_size(const struct emu_dev *d)
{
	uint8_t *cur = emu_cap((struct emu_dev *)d, PRM_CAP_GENERAL_DEVICE, 1);
	unsigned log = cur ? (unsigned)PRM_GET(cmd_hca_cap, cur, log_uar_page_sz) : 0;

	if (log > 4)
		log = 4;
	return 4096u << log;
}

/* PRM cmd_hca_cap.uar_4k: when the driver turns it on, UAR indexes count 4 KiB UARs
 * and ALLOC_UAR hands out a whole UAR page (2^log_uar_page_sz of them, aligned); when
 * off, an index counts whole UAR pages.  Either way ALLOC_UAR's k-th page sits at
 * k * UAR page size: only the numbering differs (Linux uar2pfn). */
static unsigned uar_index_shift(const struct emu_dev *d)
{
	uint8_t *cur = emu_cap((struct emu_dev *)d, PRM_CAP_GENERAL_DEVICE, 1);
	unsigned log;

	if (!cur || !PRM_GET(cmd_hca_cap, cur, uar_4k))
		return 0;
	log = (unsigned)PRM_GET(cmd_hca_cap, cur, log_uar_page_sz);
	return log > 4 ? 4 : log;
}

uint32_t emu_uar_unit(const struct emu_dev *d)
{
	return emu_uar_page_size(d) >> uar_index_shift(d);
}

uint32_t emu_uar_index_of(const struct emu_dev *d, uint32_t obj_id)
{
	return obj_id << uar_index_shift(d);
}

uint32_t emu_uar_obj_of(const struct emu_dev *d, uint32_t uar_index)
{
	return uar_index >> uar_index_shift(d);
}

void *emu_uar_obj(struct emu_dev *d, uint32_t uar_index)
{
	return emu_obj_get(d, EMU_OBJ_UAR, uar_index >> uar_index_shift(d));
}

volatile uint8_t *emu_uar_page(struct emu_dev *d, uint32_t uar_index)
{
	uint64_t off = (uint64_t)uar_index * emu_uar_unit(d);

	if (off + emu_uar_unit(d) > d->bar_len)
		return NULL;
	return d->bar + off;
}

bool emu_uar_valid(struct emu_dev *d, uint32_t uar_index)
{
	return emu_uar_obj(d, uar_index) != NULL;
}

int emu_uar_hook(struct emu_dev *d, uint32_t off_lo, uint32_t off_hi, emu_uar_fn fn, void *arg)
{
	if (!fn || off_hi < off_lo)
		return -EINVAL;
	for (unsigned i = 0; i < d->nuar_hooks; i++)
		if (d->uar_hooks[i].lo == off_lo && d->uar_hooks[i].hi == off_hi) {
			d->uar_hooks[i].fn = fn;
			d->uar_hooks[i].arg = arg;
			return 0;
		}
	if (d->nuar_hooks == EMU_MAX_UAR_HOOKS)
		return -ENOSPC;
	d->uar_hooks[d->nuar_hooks++] = (struct emu_uar_hook_ent){ off_lo, off_hi, fn, arg };
	return 0;
}

static void uar_write(struct emu_dev *d, uint64_t off, unsigned size, int op)
{
	uint32_t psz = emu_uar_unit(d);
	uint32_t idx = (uint32_t)(off / psz), in = (uint32_t)(off % psz);

	d->ctr.uar_doorbells++;
	if (!emu_uar_valid(d, idx)) {
		emu_drverr(d, "store of %u bytes at BAR offset 0x%llx: UAR page %u is not allocated", size,
			   (unsigned long long)off, idx);
		return;
	}
	if (in >= PRM_UAR_BF_OFFSET) {
		if (op == SHIM_MMIO_WC_WRITE)
			d->ctr.bf_writes++;
		else
			d->ctr.send_doorbells++;
	} else if (in == PRM_UAR_CQ_DOORBELL) {
		d->ctr.cq_doorbells++;
	}
	for (unsigned i = 0; i < d->nuar_hooks; i++)
		if (in >= d->uar_hooks[i].lo && in <= d->uar_hooks[i].hi) {
			d->uar_hooks[i].fn(d, idx, in, size, op, d->bar + (uint64_t)idx * psz,
					   d->uar_hooks[i].arg);
			return;
		}
}

/* ---- the BAR hook ---- */

/* The device lock's holder is noted by CPU (d->lock_cpu), so a thread that finds the
 * lock held spins only while the holder can be running: a holder on the spinner's own
 * CPU is preempted by the spinner itself and cannot let go until it blocks (the test
 * the kernel's own mutexes make before spinning, mutex_spin_on_owner in
 * kernel/locking/mutex.c, owner->on_cpu). */
bool emu_lock_try(struct emu_dev *d)
{
	if (pthread_mutex_trylock(&d->lock) != 0)
		return false;
	__atomic_store_n(&d->lock_cpu, plat_current_cpu(), __ATOMIC_RELAXED);
	return true;
}

/* Spin on the device lock for up to max_ns (trylock and a spin-wait hint, the clock read
 * every 64 turns): true when it was taken, false when the caller must block for it.  The
 * lock is held for microseconds (a receive pass, a doorbell), most often by a thread
 * on another CPU; sleeping on it costs a wake-up and moves threads between CPUs (see
 * lock_for_host_access, and rx_thread.c lock_or_stop).  It does not spin with one CPU,
 * nor when the holder last noted is on this CPU: that holder cannot run while we spin. */
bool emu_lock_spin(struct emu_dev *d, uint64_t max_ns)
{
	static long ncpu_cached;   /* racing first calls store the same value */
	long ncpu = __atomic_load_n(&ncpu_cached, __ATOMIC_RELAXED);
	uint64_t until = 0;
	int cpu;

	if (emu_lock_try(d))
		return true;
	if (!ncpu) {
		ncpu = plat_online_cpus();
		__atomic_store_n(&ncpu_cached, ncpu, __ATOMIC_RELAXED);
	}
	cpu = plat_current_cpu();
	if (ncpu < 2)
		return false;
	for (unsigned spins = 0;; spins++) {
		if (spins % 64 == 0) {
			/* every 64 turns: the clock, and whether the holder is (now) on this
			 * CPU, where it cannot let go while we spin (it may have been moved
			 * here, or this thread there) */
			uint64_t now = emu_now_ns();

			if (!until)
				until = now + max_ns;
			else if (now >= until)
				return false;
			if (spins)
				cpu = plat_current_cpu();
			if (cpu >= 0 && __atomic_load_n(&d->lock_cpu, __ATOMIC_RELAXED) == cpu)
				return false;
		}
		plat_spin_pause();
		/* look before the locked instruction: a trylock per turn would take the
		 * cache line the holder works on */
		if (__atomic_load_n(&d->lock_cpu, __ATOMIC_RELAXED) < 0 && emu_lock_try(d))
			return true;
	}
}

/* Unlock a lock taken through emu_lock_try, emu_lock_spin or lock_for_host_access,
 * first clearing the holder's CPU, so a spinner looks only while someone holds it.
 * The control path's takers (pthread_mutex_lock) note no CPU: while they hold the lock
 * lock_cpu reads -1 (spinners spin their budget) or the last fast-path holder's
 * (spinners on that CPU block at once); either way the budget bounds the spin. */
void emu_unlock(struct emu_dev *d)
{
	__atomic_store_n(&d->lock_cpu, -1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&d->lock);
}

/* The device lock, taken by a host thread's BAR access (a doorbell, a CQ arm, a command).
 * A poster that sleeps on the mutex is woken by the unlock onto the CPU the device
 * thread ran on, beside the application already there; on 2 CPUs with one spinning
 * application each, the two then share a CPU until the scheduler's next balancing
 * (4 ms at HZ=250) while the other CPU idles.  Measured: Debian's ib_write_lat slept
 * here in 1,392 of 3,000 round trips (perf, sched_switch in futex_lock_pi), median
 * 101 us, p99 4.0 ms on an idle machine (docs/benchmarks.md, "2026-12-06: nobody
 * sleeps on the device lock").  So it spins first, up to EMU_HOST_LOCK_SPIN_NS. */
#define EMU_HOST_LOCK_SPIN_NS 100000ull

static void lock_for_host_access(struct emu_dev *d)
{
	if (emu_lock_spin(d, EMU_HOST_LOCK_SPIN_NS))
		return;
	pthread_mutex_lock(&d->lock);
	__atomic_store_n(&d->lock_cpu, plat_current_cpu(), __ATOMIC_RELAXED);
	d->ctr.host_lock_sleeps++;
}

void emu_mmio_access(void *ctx, int op, uint64_t off, unsigned size)
{
	struct emu_dev *d = ctx;

	lock_for_host_access(d);
	if (!d->removed && emu_pci_bar_access(d, op, off, size)) {
		/* memory space disabled, or the MSI-X table and PBA (pci.c) */
		if (op == SHIM_MMIO_READ)
			d->ctr.mmio_reads++;
		else
			d->ctr.mmio_writes++;
		emu_unlock(d);
		return;
	}
	if (op == SHIM_MMIO_READ) {
		d->ctr.mmio_reads++;
		if (d->allones_until_ns && emu_now_ns() < d->allones_until_ns) {
			/* flr_ms: still in reset, reads complete with all-ones; the init
			 * segment is rebuilt when the function is back (below). */
			if (off < d->bar_len)
				memset(d->bar + off, 0xff, size <= d->bar_len - off ? size : d->bar_len - off);
		} else if (d->removed) {
			/* A pulled Thunderbolt cable: every read completes with all-ones. */
			if (off < d->bar_len)
				memset(d->bar + off, 0xff, size <= d->bar_len - off ? size : d->bar_len - off);
		} else if (off < EMU_ISEG_BYTES) {
			if (d->allones_until_ns) {
				d->allones_until_ns = 0;
				memset(d->bar, 0, EMU_ISEG_BYTES);
				iseg_fill(d);
			}
			iseg_refresh(d);
		}
		emu_unlock(d);
		return;
	}
	d->ctr.mmio_writes++;
	if (d->removed || off >= d->bar_len) {
		emu_unlock(d);
		return;
	}
	if (off >= (uint64_t)EMU_UAR_FIRST_INDEX * 4096u && off >= EMU_ISEG_BYTES) {
		uar_write(d, off, size, op);
	} else if (off / 4 == PRM_OFF(initial_seg, cmdq_phy_addr_63_32) / 32 ||
		   off / 4 == PRM_OFF(initial_seg, cmdq_phy_addr_31_12) / 32) {
		cmdq_addr_written(d, off);
	} else if (off / 4 == PRM_OFF(initial_seg, command_doorbell_vector) / 32) {
		uint32_t vec = (uint32_t)PRM_GET(initial_seg, iseg(d), command_doorbell_vector);

		/* A doorbell register: it reads back as zero once the device took it. */
		PRM_SET(initial_seg, iseg(d), command_doorbell_vector, 0);
		d->ctr.cmd_doorbells++;
		emu_cmd_doorbell(d, vec);
	} else if (off < EMU_ISEG_BYTES) {
		emu_log(d, EMU_LOG_DEBUG, "store to init segment offset 0x%llx ignored", (unsigned long long)off);
	}
	emu_unlock(d);
}

/* ---- life cycle ---- */

void **emu_area_state(struct emu_dev *d, const char *name)
{
	for (size_t i = 0; i < emu_nareas && i < sizeof(d->area_state) / sizeof(d->area_state[0]); i++)
		if (strcmp(emu_areas[i]->name, name) == 0)
			return &d->area_state[i];
	return NULL;
}

int emu_iommu_create(struct emu_dev *d);
void emu_iommu_destroy(struct emu_dev *d);
int emu_caps_init(struct emu_dev *d);
void emu_objtab_init(struct emu_dev *d);

/* What emu_create acquired, in reverse: the IOMMU model, the capability blocks, the
 * address and its socket, BAR0, the lock, the device itself. */
static void dev_free(struct emu_dev *d)
{
	emu_pci_destroy(d);
	emu_iommu_destroy(d);
	free(d->caps);
	if (d->udp_fd >= 0)
		emu_net_release(d->ipv4, d->udp_fd);
	if (d->bar)
		munmap(d->bar, d->bar_len);
	if (d->bar_fd >= 0)
		close(d->bar_fd);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

int emu_create(const struct emu_config *cfg, struct emu_dev **out, char *err, size_t errlen)
{
	size_t host_page = cfg && cfg->host_page_size ? cfg->host_page_size : 4096;
	struct emu_dev *d;
	pthread_mutexattr_t ma;
	int rc;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (host_page != 4096 && host_page != 16384) {
		if (err)
			snprintf(err, errlen, "emu: host page size %zu not supported (4k or 16k)", host_page);
		return -EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->bar_fd = -1;
	if (cfg)
		d->cfg = *cfg;
	d->cfg.host_page_size = host_page;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	/* No priority inheritance.  The device thread runs SCHED_FIFO (rx_thread.c) and
	 * may wait on this lock while a posting thread holds it inside a doorbell; lending
	 * it that priority (PTHREAD_PRIO_INHERIT, used until 2026-12-06) makes the kernel's
	 * real-time balancing move the boosted holder to the other CPU (push_rt_tasks from
	 * rt_mutex_setprio, pull_rt_task), and once the boost ends it stays there, beside
	 * the other application, while its own CPU idles until the next balancing, up to
	 * a 4 ms tick: 154 such migrations in one 3,000-round-trip ib_write_lat run, p99
	 * 4 ms on an idle machine (docs/benchmarks.md, "2026-12-06: nobody sleeps on the
	 * device lock").  Both sides spin for it first (emu_lock_spin).  The price: a
	 * SCHED_OTHER holder kept off the CPU by a real-time spinner (an application under
	 * chrt whose other thread posts) holds the device thread up until the kernel's
	 * real-time throttling gives it a turn (docs/architecture.md, "Known limits"). */
	if (pthread_mutex_init(&d->lock, &ma) != 0) {
		pthread_mutexattr_destroy(&ma);
		if (err)
			snprintf(err, errlen, "emu: cannot create the device lock");
		free(d);
		return -ENOMEM;
	}
	pthread_mutexattr_destroy(&ma);
	d->lock_cpu = -1;
	d->udp_fd = -1;
	for (unsigned i = 0; i < EMU_NUM_VECTORS; i++)
		d->irq_fds[i] = -1;

	d->bar_len = EMU_BAR0_LEN;
	/* Anonymous mapping: zero-filled and only touched pages cost memory.  Shared: a
	 * memfd, as sparse, that a host in another process maps too. */
	if (d->cfg.bar_shared) {
		d->bar_fd = plat_shm_create("emu-bar0", d->bar_len);
		if (d->bar_fd < 0) {
			rc = d->bar_fd;
			d->bar = NULL;
			goto fail;
		}
		d->bar = mmap(NULL, d->bar_len, PROT_READ | PROT_WRITE, MAP_SHARED, d->bar_fd, 0);
	} else {
		d->bar = mmap(NULL, d->bar_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	if (d->bar == MAP_FAILED) {
		d->bar = NULL;
		rc = -ENOMEM;
		goto fail;
	}
	if (d->cfg.udp_fd > 0) {
		/* a client engine: the daemon bound this socket on the address it chose */
		d->udp_fd = d->cfg.udp_fd;
		d->ipv4 = d->cfg.ipv4;
	} else {
		rc = emu_net_claim(d->cfg.ipv4, &d->ipv4, &d->udp_fd, err, errlen);
		if (rc < 0)
			goto fail;
	}
	snprintf(d->name, sizeof(d->name), "emu:%u.%u.%u.%u", d->ipv4 >> 24, (d->ipv4 >> 16) & 0xff,
		 (d->ipv4 >> 8) & 0xff, d->ipv4 & 0xff);
	rc = emu_iommu_create(d);
	if (rc < 0)
		goto fail;
	rc = emu_caps_init(d);
	if (rc < 0)
		goto fail;
	emu_objtab_init(d);
	rc = emu_pci_create(d);
	if (rc < 0)
		goto fail;

	d->log_cmdq_size = EMU_LOG_CMDQ_SIZE;
	while (d->cfg.cmdq_entries && (1u << d->log_cmdq_size) > d->cfg.cmdq_entries)
		d->log_cmdq_size--;
	d->log_cmdq_stride = EMU_LOG_CMDQ_STRIDE;
	d->t0_ns = emu_now_ns();
	d->ready_at_ns = d->t0_ns + (uint64_t)(d->cfg.init_delay_ms ? d->cfg.init_delay_ms : EMU_DEFAULT_INIT_DELAY_MS) *
					    1000000ull;
	if (d->cfg.flr_ms) {
		d->allones_until_ns = d->t0_ns + (uint64_t)d->cfg.flr_ms * 1000000ull;
		d->ready_at_ns += (uint64_t)d->cfg.flr_ms * 1000000ull;
	}
	iseg_fill(d);
	d->hca = EMU_HCA_DISABLED;
	d->port_up = !d->cfg.port_down;
	d->paos_admin = d->cfg.admin_down ? 2 : 1;
	d->mtu = 1500;
	d->nfail = d->cfg.nfail;
	memcpy(d->fail, d->cfg.fail, sizeof(d->fail));

	for (size_t i = 0; i < emu_nareas; i++)
		if (emu_areas[i]->init) {
			rc = emu_areas[i]->init(d);
			if (rc < 0) {
				if (err)
					snprintf(err, errlen, "emu: area %s failed to start (%d)", emu_areas[i]->name, rc);
				for (size_t j = i; j-- > 0;)
					if (emu_areas[j]->fini)
						emu_areas[j]->fini(d);
				goto fail;
			}
		}
	if (d->cfg.engine) {
		/* no command queue: the daemon's device brought the function up, and
		 * objects arrive through emu_engine_cmd */
		d->hca = EMU_HCA_INITIALIZED;
		d->issi = 1;
		d->ready_at_ns = d->t0_ns;
	}
	if (d->cfg.fatal_synd)
		emu_fault_fatal(d, d->cfg.fatal_synd);
	emu_log(d, EMU_LOG_INFO, "ConnectX-5 Ex emulated, host pages %zu, iova %s, copy %s", d->cfg.host_page_size,
		d->cfg.iova_mode == EMU_IOVA_SCATTER ? "scatter" : "offset", d->cfg.copy_syscall ? "syscall" : "guarded");
	*out = d;
	return 0;
fail:
	if (rc < 0 && err && !err[0])
		snprintf(err, errlen, "emu: cannot create device: %s", strerror(-rc));
	if (d->cfg.udp_fd > 0 && d->udp_fd == d->cfg.udp_fd)
		d->udp_fd = -1;   /* the caller's socket until we succeed: it closes it */
	dev_free(d);
	return rc;
}

void emu_destroy(struct emu_dev *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	emu_hca_teardown(d);
	for (size_t i = emu_nareas; i-- > 0;)
		if (emu_areas[i]->fini)
			emu_areas[i]->fini(d);
	for (unsigned i = 0; i < EMU_NUM_VECTORS; i++)
		plat_notify_close(d->irq_fds[i]);
	free(d->pages.iova);
	for (unsigned t = 0; t < EMU_OBJ_NTYPES; t++)
		free(d->obj[t].slots);
	pthread_mutex_unlock(&d->lock);
	dev_free(d);
}

/* TEARDOWN_HCA and device destruction: every area lets go of its state, then every
 * firmware object goes (queues before the EQs they report to, before PDs and UARs). */
void emu_hca_teardown(struct emu_dev *d)
{
	for (size_t i = emu_nareas; i-- > 0;)
		if (emu_areas[i]->teardown)
			emu_areas[i]->teardown(d);
	emu_obj_destroy_all(d);
}

/* The function's own state after a Function Level Reset (pci.c calls it for Device
 * Control's Initiate FLR, with the lock held): every object and page gone, the HCA
 * disabled, the command queue forgotten, `initializing` for a moment. */
void emu_reset_locked(struct emu_dev *d)
{
	emu_hca_teardown(d);
	d->ctr.pages_taken += d->pages.n;
	d->pages.n = 0;
	d->hca = EMU_HCA_DISABLED;
	d->issi = 0;
	d->regular_pages = 0;
	d->auto_pages_phase = 0;
	emu_hold_reset(d);
	d->cmdq_programmed = false;
	d->cmdq_iova = 0;
	d->fatal = false;
	memset(d->bar, 0, EMU_ISEG_BYTES);
	iseg_fill(d);
	d->ready_at_ns = emu_now_ns() + (uint64_t)(d->cfg.init_delay_ms ? d->cfg.init_delay_ms
									 : EMU_DEFAULT_INIT_DELAY_MS) * 1000000ull;
}

/* Reads with memory space off painted BAR memory all-ones: the registers read as the
 * device's state again once it is back on. */
void emu_iseg_restore(struct emu_dev *d)
{
	uint8_t *s = iseg(d);

	memset(s, 0, EMU_MSIX_TABLE_OFF);
	memset(s + EMU_MSIX_PBA_OFF + 8, 0, EMU_ISEG_BYTES - (EMU_MSIX_PBA_OFF + 8));
	iseg_fill(d);
	PRM_SET(initial_seg, s, cmdq_phy_addr_63_32, d->cmdq_iova >> 32);
	PRM_SET(initial_seg, s, cmdq_phy_addr_31_12, (d->cmdq_iova >> 12) & 0xfffff);
	iseg_refresh(d);
}

/* A Function Level Reset through config space, as a host's reset does it
 * (Linux pcie_flr): Initiate FLR in Device Control (pci.c). */
int emu_reset(struct emu_dev *d)
{
	uint8_t b[2];
	int rc;
	bool removed;

	if (!d)
		return -EINVAL;
	emu_read_locked(d, &removed, &d->removed, sizeof(removed));
	if (removed)
		return -ENODEV;   /* a device that left the bus does not come back by a reset */
	rc = emu_pci_cfg_read(d, EMU_PCI_CAP_EXP + 8, b, 2);
	if (rc < 0)
		return rc;
	b[1] |= 0x80;         /* Device Control bit 15: Initiate Function Level Reset */
	return emu_pci_cfg_write(d, EMU_PCI_CAP_EXP + 8, b, 2);
}

volatile uint8_t *emu_bar_base(struct emu_dev *d)
{
	return d->bar;
}

size_t emu_bar_len(struct emu_dev *d)
{
	return d->bar_len;
}

int emu_bar_fd(const struct emu_dev *d)
{
	return d->bar_fd;
}

int emu_dataplane_opts(const struct emu_dev *d, char *buf, size_t len)
{
	return emu_config_dataplane_opts(&d->cfg, buf, len);
}

uint32_t emu_ipv4(const struct emu_dev *d)
{
	return d->ipv4;
}

int emu_udp_fd(const struct emu_dev *d)
{
	return d->udp_fd;
}

size_t emu_host_page_size(const struct emu_dev *d)
{
	return d->cfg.host_page_size;
}

void emu_read_locked(struct emu_dev *d, void *out, const void *field, size_t size)
{
	pthread_mutex_lock(&d->lock);
	memcpy(out, field, size);
	pthread_mutex_unlock(&d->lock);
}

int emu_hca_state(struct emu_dev *d)
{
	enum emu_hca_state s;

	emu_read_locked(d, &s, &d->hca, sizeof(s));
	return (int)s;
}
