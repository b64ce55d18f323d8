/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Drain write-combining stores to a device (rdma-core util/udma_barrier.h
 * mmio_flush_writes; Linux wmb() after a WC copy): the one instruction both a driver's
 * BlueFlame burst (hw/mlx5/barrier.h mx5_wc_start / mx5_wc_flush) and a uvd client's
 * copy into its own UAR page (hw/shim/uvd_guest.h) end with.
 *   x86-64: SFENCE orders WC stores after older stores and pushes the WC buffer out;
 *   aarch64: "dsb st" waits until earlier stores (Normal-NC / Device-GRE included) have
 *   completed.  hw/mlx5/barrier.h says why each use needs it. */
#ifndef UVERBS_HW_PLATFORM_WC_FLUSH_H
#define UVERBS_HW_PLATFORM_WC_FLUSH_H

#if defined(__x86_64__)
#define plat_wc_flush() __asm__ __volatile__("sfence" ::: "memory")
#elif defined(__aarch64__)
#define plat_wc_flush() __asm__ __volatile__("dsb st" ::: "memory")
#else
#error "hw/platform/wc_flush.h: define the write-combining flush for this architecture"
#endif

#endif
