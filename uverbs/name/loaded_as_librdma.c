/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Linked into compat/librdma only: applications written for Apple's RDMA (macOS 26.2
 * librdma.dylib, which they dlopen) get Apple's delivery semantics on UC queue pairs
 * unless UVERBS_DELIVERY=ibta asks otherwise (qp.c). */
#include "uverbs/uv.h"

const bool uv_loaded_as_librdma = true;
