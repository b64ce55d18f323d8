/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uverbs.h: what libuverbs offers beyond the libibverbs API.
 *
 * Applications compile against the standard verbs API, <infiniband/verbs.h> (Debian's
 * libibverbs-dev on Linux, the SDK on macOS 26.2 and later), and link -luverbs instead
 * of -libverbs.  libuverbs exports the ibv_* functions of that header (the list is
 * uverbs/uverbs.map in the source tree) and nothing of its own: everything in this
 * header is a constant, so that using it adds no symbol to the ABI (docs/abi.md).
 *
 * Devices.  uverbs opens no kernel device: ibv_get_device_list() lists the devices named
 * by URIs in the environment variable UVERBS_DEVICES (comma separated), read once, at
 * the first ibv_get_device_list() of the process; a program may set it before, with
 * setenv(UVERBS_ENV_DEVICES, "emu:ip=127.0.0.2,emu:ip=127.0.0.3", 0):
 *
 *   emu:[OPTS]     an emulated ConnectX-5 Ex inside this process, speaking RoCE v2 over
 *                  UDP; OPTS are comma-separated KEY=VALUE pairs, for example
 *                  emu:ip=127.0.0.7,page=16k,iova=scatter (uverbs(7) lists them all)
 *   vfio:BDF       a ConnectX bound to vfio-pci (Linux), e.g. vfio:0000:03:00.0
 *   kext:N         a ConnectX behind the uvshim kernel extension (macOS)
 *
 * With UVERBS_DEVICES unset or empty, every ConnectX bound to vfio-pci is listed, or
 * one emulated device when there is none.
 */
#ifndef UVERBS_H
#define UVERBS_H

#include <infiniband/verbs.h>

/* The ABI major version: the N of libuverbs.so.N (SONAME) and of the macOS
 * compatibility version.  It changes only when a change breaks binaries linked
 * against the previous library (docs/abi.md).  The build takes the SONAME from here. */
#define UVERBS_ABI_VERSION 1

/* URI schemes of UVERBS_DEVICES. */
#define UVERBS_URI_EMU  "emu:"
#define UVERBS_URI_VFIO "vfio:"
#define UVERBS_URI_KEXT "kext:"

/* Environment variables libuverbs reads (uverbs(7) describes each). */
#define UVERBS_ENV_DEVICES "UVERBS_DEVICES" /* device URIs, comma separated */
#define UVERBS_ENV_LOG     "UVERBS_LOG"     /* error|warn|info|debug: log to stderr */
#define UVERBS_ENV_GIDS    "UVERBS_GIDS"    /* [NAME=]IP[,IP...][;...]: a port's addresses */
#define UVERBS_ENV_NEIGH   "UVERBS_NEIGH"   /* IP=MAC[,IP=MAC...]: peers' MACs */
#define UVERBS_ENV_CONFIG  "UVERBS_CONFIG"  /* file of "gids" and "neigh" lines */
#define UVERBS_ENV_RUN_DIR "UVERBS_RUN_DIR" /* where processes publish queue counters */

#endif /* UVERBS_H */
