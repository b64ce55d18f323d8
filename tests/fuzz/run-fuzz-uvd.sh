#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Build the uvd policy fuzzer (fuzz_uvd.c over tools/uvd/policy.c, the emulator, the shim
# and the command engine, compiled from source here) with Debian's clang, write its seed
# corpus (each client command, naming the attacker's or the victim's objects), and run it
# for a fixed number of inputs.  Fails (never skips) when clang or the libFuzzer runtime
# is missing, on any crash (a broken invariant aborts), sanitizer report or leak, when the
# run did not reach the requested count, and when no input got through the policy and
# completed on the device (the run would prove nothing).
#   run-fuzz-uvd.sh SOURCE_DIR WORK_DIR RUNS
set -euo pipefail
src=${1:?usage: run-fuzz-uvd.sh SOURCE_DIR WORK_DIR RUNS}
work=${2:?}
runs=${3:-5000}
rm -rf "$work"
mkdir -p "$work/corpus"
. "$src/tests/common/libfuzzer-build.sh"
bin=$work/fuzz_uvd
fuzz_build_emu "$src" "$work" "$bin" "$src"/tests/fuzz/fuzz_uvd.c "$src"/tools/uvd/policy.c
FUZZ_UVD_SEEDS="$work/corpus" "$bin"
nseed=$(ls "$work/corpus" | wc -l)
if [ "$nseed" -lt 40 ]; then
  echo "FAIL: the seed generator wrote $nseed seeds" >&2
  exit 1
fi
. "$src/tests/common/libfuzzer-run.sh"
fuzz_run_and_judge "$bin" "$work" "$runs" 4096 240
depth=$(grep -E '^fuzz_uvd: [0-9]+ commands' "$work/fuzz.log" | tail -1 || true)
pass=$(echo "$depth" | sed -nE 's/.* ([0-9]+) let through by the policy.*/\1/p')
ok=$(echo "$depth" | sed -nE 's/.* ([0-9]+) completed with status 0.*/\1/p')
if [ -z "$ok" ] || [ -z "$pass" ] || [ "$ok" -eq 0 ]; then
  echo "FAIL: no input got through the policy and completed (${depth:-no depth report})" >&2
  exit 1
fi
echo "uvd fuzz figures: $done_runs inputs, $nseed seeds, ${cov:-cov: ?}, $pass let through the policy," \
     "$ok completed with status 0, no client affected another's objects"
