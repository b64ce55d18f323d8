/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Memory barriers of the data path, named by purpose (conventions: "The data path").
 *
 * Two observers matter: the CPU that builds WQEs and reads CQEs in cacheable (write-back)
 * host memory, and the device, which reads WQEs / writes CQEs by DMA (coherent) and
 * receives our MMIO stores to the UAR page (uncached, or write-combining for BlueFlame).
 * Every barrier below states which stream of accesses it orders against which.  The
 * facts per architecture follow rdma-core's util/udma_barrier.h and Linux's
 * asm/barrier.h (dma_wmb/dma_rmb/wmb); the code is ours.
 *
 *   x86-64 (TSO): stores to write-back memory become visible in program order, and a
 *   store to an uncached (UC) mapping is not reordered with older stores, so ordering
 *   WB -> WB and WB -> UC needs only the compiler not to move accesses (Linux dma_wmb()
 *   is barrier() on x86).  Write-combining stores are weakly ordered: they may pass
 *   older WB stores and stay buffered, so a BlueFlame burst needs SFENCE before it (the
 *   doorbell record must be globally visible first) and after it (push the WC buffer
 *   out as one TLP, and keep the next burst from merging with it).  Loads from WB
 *   memory are not reordered with older loads, so reading a CQE after its owner byte
 *   needs only a compiler barrier (Linux dma_rmb() on x86; rdma-core uses LFENCE
 *   conservatively).
 *
 *   aarch64 (Apple Silicon, Grace, Ampere): the memory model is weak; compiler barriers
 *   are not enough.  Host DMA memory is Normal cacheable and inner/outer shareable with
 *   the device, so "dmb oshst" orders earlier stores before later stores as the device
 *   observes them (rdma-core udma_to_device_barrier, Linux dma_wmb), "dmb oshld" orders
 *   earlier loads before later loads and stores (udma_from_device_barrier, dma_rmb).
 *   Write-combining is Normal-NC/Device-GRE memory; "dsb st" waits until earlier stores
 *   have completed, which both orders them before the WC burst and drains the burst
 *   afterwards (rdma-core mmio_flush_writes / mmio_wc_start).
 */
#ifndef UVERBS_HW_MLX5_BARRIER_H
#define UVERBS_HW_MLX5_BARRIER_H

#include "hw/platform/wc_flush.h"

#define mx5_compiler_barrier() __asm__ __volatile__("" ::: "memory")

#if defined(__x86_64__)

/* WQE stores (WB) before the doorbell record store (WB): TSO keeps them in order. */
#define mx5_wmb_before_dbrec() mx5_compiler_barrier()
/* Doorbell record (WB) before the 64-bit doorbell store to the UC UAR mapping: a UC
 * store is not reordered with older stores. */
#define mx5_wmb_before_doorbell() mx5_compiler_barrier()
/* Before a BlueFlame burst to the WC mapping: the doorbell record and the WQE must be
 * visible before any part of the burst can reach the device. */
#define mx5_wc_start() plat_wc_flush()
/* After a BlueFlame burst: drain the WC buffer now (latency) and never combine two
 * bursts into one (the halves alternate, but a WQE must arrive whole). */
#define mx5_wc_flush() plat_wc_flush()
/* After seeing a CQE owned by software: read its other fields only now. */
#define mx5_rmb_after_owner() mx5_compiler_barrier()
/* Before telling the device (CQ doorbell record) that CQEs were consumed: every read of
 * those CQEs is done before the device may overwrite them.  TSO: loads are not
 * reordered with later stores. */
#define mx5_mb_before_ci_update() mx5_compiler_barrier()

#elif defined(__aarch64__)

#define mx5_wmb_before_dbrec() __asm__ __volatile__("dmb oshst" ::: "memory")
/* Normal (WB) store then Device store: dmb oshst orders them as the device sees them
 * (Linux __iowmb() before writel()). */
#define mx5_wmb_before_doorbell() __asm__ __volatile__("dmb oshst" ::: "memory")
#define mx5_wc_start() plat_wc_flush()
#define mx5_wc_flush() plat_wc_flush()
#define mx5_rmb_after_owner() __asm__ __volatile__("dmb oshld" ::: "memory")
/* dmb oshld orders earlier loads before later loads AND stores: the CQE reads complete
 * before the consumer index store can be observed. */
#define mx5_mb_before_ci_update() __asm__ __volatile__("dmb oshld" ::: "memory")

#else
#error "hw/mlx5/barrier.h: define the data-path barriers for this architecture"
#endif

/* ThreadSanitizer (cmake -DUVERBS_TSAN=ON) cannot see the ordering a device gives: a
 * poster's writes to its wr_id tables reach the poller only through the doorbell, the
 * device and the CQE.  The build annotates that one edge: release by the doorbell,
 * acquire where the poller turns a CQE into its queue (compiler-rt tsan_interface.h).
 * Other builds compile these to nothing. */
#if defined(UVERBS_TSAN)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define mx5_tsan_acquire(p) __tsan_acquire((void *)(p))
#define mx5_tsan_release(p) __tsan_release((void *)(p))
#else
#define mx5_tsan_acquire(p) ((void)(p))
#define mx5_tsan_release(p) ((void)(p))
#endif

#endif
