#!/usr/bin/env bash
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
set +e
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$bin" -runs="$runs" -seed=1 -max_len=1024 -max_total_time=600 -timeout=10 \
  -artifact_prefix="$work/" "$work/corpus" >"$work/fuzz.log" 2>&1
rc=$?
set -e
tail -n 15 "$work/fuzz.log"
if [ $rc -ne 0 ] || grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$work/fuzz.log"; then
  echo "FAIL: fuzzer exit $rc; reproducer(s): $(ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* 2>/dev/null | tr '\n' ' ')" >&2
  exit 1
fi
done_line=$(grep -E '^Done [0-9]+ runs' "$work/fuzz.log" || true)
done_runs=$(echo "$done_line" | sed -E 's/^Done ([0-9]+) runs.*/\1/')
if [ -z "$done_runs" ] || [ "$done_runs" -lt "$runs" ]; then
  echo "FAIL: fuzzer stopped before $runs runs (${done_line:-no summary})" >&2
  exit 1
fi
cov=$(grep -oE 'cov: [0-9]+' "$work/fuzz.log" | tail -1 || true)
echo "kext fuzz figures: $done_runs inputs, $nseed seeds, ${cov:-cov: ?}, no crash or sanitizer report"
