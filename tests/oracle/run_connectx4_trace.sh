#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Real-firmware oracle (../shared/fixtures/README.md): decode every command of the ConnectX-4
# bring-up trace with our PRM getters and with DEVX_GET over Linux's mlx5_ifc.h, on the
# same bytes, and check the emulator's capability seed against the trace.
# Usage: run_connectx4_trace.sh <source dir> <work dir> <C compiler> <extra C flags>
set -euo pipefail
src=${1:?source dir}
work=${2:?work dir}
cc=${3:-cc}
extra=${4:-}
trace="${UVERBS_FIXTURES:-$src/../shared/fixtures}/mlx5_core-connectx4-bringup-trace.txt.gz"
[ -r "$trace" ] || { echo "connectx4 trace: fixture $trace not found" >&2; exit 1; }
mkdir -p "$work"
inc=$(bash "$src/tests/oracle/fetch-mlx5-ifc.sh" "$work/cache")
# shellcheck disable=SC2086 # extra flags are a list
"$cc" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-missing-field-initializers \
  -Wno-unused-function -Werror -O1 -g $extra -I"$src" -I"$inc" \
  "$src/tests/oracle/trace_oracle.c" "$src/tests/common/fixture_trace.c" \
  "$src/firmware-cmd/cmdq_chain.c" "$src/hw/emu/caps_seed.c" -o "$work/trace_oracle"
"$work/trace_oracle" "$trace"
