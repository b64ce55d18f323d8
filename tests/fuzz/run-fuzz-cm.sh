#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Build the CM MAD fuzzer (fuzz_cm_mad.c over uverbs/rdma_cm_mad.c) with Debian's clang and
# run it for a fixed number of inputs.  Fails (never skips) when clang or the libFuzzer
# runtime is missing, on any crash, sanitizer report or leak, or a short run.
#   run-fuzz-cm.sh SOURCE_DIR WORK_DIR RUNS
set -euo pipefail
src=${1:?usage: run-fuzz-cm.sh SOURCE_DIR WORK_DIR RUNS}
work=${2:?}
runs=${3:-50000}
rm -rf "$work"
mkdir -p "$work/corpus"
clang=$(command -v clang || command -v clang-14 || true)
if [ -z "$clang" ]; then
  echo "FAIL: clang not found: fuzz_cm_mad needs Debian's clang and libclang-rt-14-dev" >&2
  exit 1
fi
bin=$work/fuzz_cm_mad
"$clang" -std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Werror -I"$src" \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -o "$bin" "$src"/tests/fuzz/fuzz_cm_mad.c "$src"/uverbs/rdma_cm_mad.c
FUZZ_CM_SEEDS="$work/corpus" "$bin"
. "$src/tests/common/libfuzzer-run.sh"
fuzz_run_and_judge "$bin" "$work" "$runs" 512 240
echo "cm mad fuzz figures: $done_runs inputs, $(ls "$work/corpus" | wc -l) corpus files, ${cov:-cov: ?}"
