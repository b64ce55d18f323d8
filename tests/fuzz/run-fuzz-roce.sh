#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Build the RoCE v2 receive-path fuzzer (fuzz_roce_rx.c over the emulator, the shim, the
# driver and the command engine, compiled from source here) with Debian's clang and run
# it for a fixed number of inputs.  Fails (never skips) when clang or the libFuzzer
# runtime is missing, on any crash (a guard page written traps), sanitizer report or
# leak, and when the run did not reach the requested count.
#   run-fuzz-roce.sh SOURCE_DIR WORK_DIR RUNS
set -euo pipefail
src=${1:?usage: run-fuzz-roce.sh SOURCE_DIR WORK_DIR RUNS}
work=${2:?}
runs=${3:-30000}
rm -rf "$work"
mkdir -p "$work/corpus"
. "$src/tests/common/libfuzzer-build.sh"
bin=$work/fuzz_roce_rx
fuzz_build_emu "$src" "$work" "$bin" "$src"/tests/fuzz/fuzz_roce_rx.c "$src"/hw/mlx5/*.c \
  "$src"/uverbs/rdma_cm_mad.c
FUZZ_ROCE_SEEDS="$work/corpus" "$bin"
nseed=$(ls "$work/corpus" | wc -l)
if [ "$nseed" -lt 10 ]; then
  echo "FAIL: the seed generator wrote $nseed seeds" >&2
  exit 1
fi
. "$src/tests/common/libfuzzer-run.sh"
fuzz_run_and_judge "$bin" "$work" "$runs" 1200 480
# Depth: a harness whose packets all died in the header checks would prove little.
# The harness's exit report must show WRITEs parsed, receives completed, answers sent and
# B's own sends completed by a response.
depth=$(grep -E '^fuzz_roce_rx: B received' "$work/fuzz.log" | tail -1 || true)
writes=$(echo "$depth" | sed -nE 's/.*\(([0-9]+) parsed as WRITE.*/\1/p')
recv_ok=$(echo "$depth" | sed -nE 's/.*receive completions ([0-9]+) ok.*/\1/p')
sent=$(echo "$depth" | sed -nE 's/.*, sent ([0-9]+);.*/\1/p')
# Requester mode: B's own WRITE/FETCH_ADD/READ must have been completed by fuzzed responses.
own_ok=$(echo "$depth" | sed -nE 's/.*own-send completions ([0-9]+) ok.*/\1/p')
# QP1: MADs must have reached the GSI QP, some decoded by the CM's decoder, some dropped.
mad_ok=$(echo "$depth" | sed -nE 's/.*GSI QP1 MADs [0-9]+ received, ([0-9]+) decoded.*/\1/p')
mad_bad=$(echo "$depth" | sed -nE 's/.*GSI QP1 MADs [0-9]+ received, [0-9]+ decoded, ([0-9]+) dropped.*/\1/p')
if [ -z "$writes" ] || [ -z "$recv_ok" ] || [ -z "$sent" ] || [ -z "$own_ok" ] ||
   [ "$writes" -eq 0 ] || [ "$recv_ok" -eq 0 ] || [ "$sent" -eq 0 ] || [ "$own_ok" -eq 0 ] ||
   [ -z "$mad_ok" ] || [ -z "$mad_bad" ] || [ "$mad_ok" -eq 0 ] || [ "$mad_bad" -eq 0 ]; then
  echo "FAIL: the inputs never got past the header checks (${depth:-no depth report})" >&2
  exit 1
fi
echo "roce rx fuzz figures: $done_runs inputs, $nseed seeds, ${cov:-cov: ?}, $own_ok of B's own sends" \
     "completed by fuzzed responses, QP1 MADs $mad_ok decoded and $mad_bad dropped, no crash or sanitizer report"
