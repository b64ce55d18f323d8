/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Keeps uv_testsupport non-empty before any support file exists. */
typedef int uv_testsupport_empty;
