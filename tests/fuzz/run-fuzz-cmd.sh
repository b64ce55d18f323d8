#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Build the command-processor fuzzer (fuzz_cmd.c over the emulator, the shim and the
# command engine, compiled from source here) with Debian's clang, write its seed corpus
# (the ConnectX-4 trace's command inputs and valid object commands) into the work dir,
# and run it for a fixed number of inputs.  Fails (never skips) when clang or the
# libFuzzer runtime is missing, on any crash, sanitizer report or leak, when the run did
# not reach the requested count, and when the inputs never got past the opcode dispatch.
#   run-fuzz-cmd.sh SOURCE_DIR WORK_DIR RUNS
set -euo pipefail
src=${1:?usage: run-fuzz-cmd.sh SOURCE_DIR WORK_DIR RUNS}
work=${2:?}
runs=${3:-20000}
rm -rf "$work"
mkdir -p "$work/corpus"
. "$src/tests/common/libfuzzer-build.sh"
bin=$work/fuzz_cmd
fuzz_build_emu "$src" "$work" "$bin" "$src"/tests/fuzz/fuzz_cmd.c "$src"/tests/common/fixture_trace.c
export UVERBS_FIXTURES=${UVERBS_FIXTURES:-$src/../shared/fixtures}
FUZZ_CMD_SEEDS="$work/corpus" "$bin"
nseed=$(ls "$work/corpus" | wc -l)
if [ "$nseed" -lt 20 ]; then
  echo "FAIL: the seed generator wrote $nseed seeds" >&2
  exit 1
fi
. "$src/tests/common/libfuzzer-run.sh"
fuzz_run_and_judge "$bin" "$work" "$runs" 8192 240
# Depth: inputs that all died at the opcode dispatch would prove little.  The harness's
# exit report must show commands completed with status 0, of many opcodes.
depth=$(grep -E '^fuzz_cmd: [0-9]+ commands' "$work/fuzz.log" | tail -1 || true)
ok=$(echo "$depth" | sed -nE 's/.* ([0-9]+) completed with status 0.*/\1/p')
ops=$(echo "$depth" | sed -nE 's/.*status 0 \(([0-9]+) opcodes\).*/\1/p')
if [ -z "$ok" ] || [ -z "$ops" ] || [ "$ok" -eq 0 ] || [ "$ops" -lt 10 ]; then
  echo "FAIL: the inputs never got past the opcode dispatch (${depth:-no depth report})" >&2
  exit 1
fi
echo "cmd fuzz figures: $done_runs inputs, $nseed seeds, ${cov:-cov: ?}, $ok commands completed" \
     "with status 0 ($ops opcodes), no crash or sanitizer report"
