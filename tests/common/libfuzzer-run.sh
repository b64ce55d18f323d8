# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Sourced by the fuzz runners (tests/shim-kext/run-fuzz.sh, tests/fuzz/run-fuzz-roce.sh):
# run a libFuzzer binary for a fixed number of inputs and judge the run the same way
# for both.  Fails (exit 1) on a non-zero exit, any sanitizer or libFuzzer error report
# (naming the reproducers it left), or fewer runs than asked.  Sets done_runs and cov.
#   fuzz_run_and_judge BIN WORK RUNS MAX_LEN MAX_TOTAL_TIME
fuzz_run_and_judge() {
  local bin=$1 work=$2 runs=$3 max_len=$4 max_time=$5 rc done_line
  set +e
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$bin" -runs="$runs" -seed=1 -max_len="$max_len" -max_total_time="$max_time" -timeout=10 \
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
}
