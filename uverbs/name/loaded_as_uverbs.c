/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Linked into libuverbs only: the library answers to its own name, so a UC queue pair
 * behaves as the IBTA specifies unless UVERBS_DELIVERY=apple asks otherwise (qp.c). */
#include "uverbs/uv.h"

const bool uv_loaded_as_librdma = false;
