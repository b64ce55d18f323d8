#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Build the request-decoder fuzzer with Debian's clang and run it for a fixed number of
# inputs.  Fails (never skips) when clang or the libFuzzer runtime is missing, on any
# crash, sanitizer report or leak, and when the run did not reach the requested count.
#   run-fuzz.sh SOURCE_DIR WORK_DIR RUNS
set -euo pipefail
src=${1:?usage: run-fuzz.sh SOURCE_DIR WORK_DIR RUNS}
work=${2:?}
runs=${3:-200000}
CLANG=$(command -v clang || command -v clang-14 || true)
if [ -z "$CLANG" ]; then
  echo "FAIL: clang not found: the kext request fuzzer needs Debian's clang and" \
       "libclang-rt-14-dev (tools/install-deps installs both)" >&2
  exit 1
fi
rm -rf "$work"
mkdir -p "$work/corpus"
bin=$work/fuzz_request
if ! "$CLANG" -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
     -Wall -Wextra -Werror -I "$src" -o "$bin" \
     "$src"/tests/shim-kext/fuzz_request.c "$src"/tests/shim-kext/support/fake_platform.c \
     "$src"/shim-kext/core/*.c 2>"$work/build.log"; then
  cat "$work/build.log" >&2
  echo "FAIL: could not build the fuzzer with $CLANG (is libclang-rt-14-dev installed?)" >&2
  exit 1
fi
/usr/bin/python3 "$src/tests/shim-kext/fuzz_seeds.py" "$work/corpus"
nseed=$(ls "$work/corpus" | wc -l)
. "$src/tests/common/libfuzzer-run.sh"
fuzz_run_and_judge "$bin" "$work" "$runs" 1024 600
echo "kext fuzz figures: $done_runs inputs, $nseed seeds, ${cov:-cov: ?}, no crash or sanitizer report"
