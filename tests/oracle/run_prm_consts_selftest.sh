#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Proves the PRM constants oracle can fail: on a scratch copy of firmware-cmd/ and
# tests/oracle/, plant (1) a wrong value (SEND as 0x0b, SEND_IMM's), (2) a row whose
# name no oracle header has, and check that run_prm_consts.sh reports (1) as one
# named mismatch with exit 1 and refuses (2) at compile time.  Same arguments as
# run_prm_consts.sh.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=${1:-$(cd "$here/../.." && pwd)}
work=${2:-${TMPDIR:-/tmp}/uverbs-oracle-prm-consts-selftest}
cc=${3:-${CC:-cc}}
extra=${4:-}
mkdir -p "$work"
fail=0
scratch() {
  rm -rf "$work/tree" && mkdir -p "$work/tree/tests" "$work/tree/hw" &&
    cp -r "$src/firmware-cmd" "$work/tree/" && cp -r "$src/tests/oracle" "$work/tree/tests/" &&
    cp -r "$src/hw/platform" "$work/tree/hw/"   # prm.h's byteorder.h
}
# The scratch run shares this run's header cache (one download).
run() {
  bash "$work/tree/tests/oracle/run_prm_consts.sh" "$work/tree" "$work/run" "$cc" "$extra" \
    >"$work/out" 2>&1
}
summary() { grep '^prm consts oracle:' "$work/out"; }

scratch; run; rc=$?
[ $rc -eq 0 ] || { echo "selftest: baseline failed (exit $rc)"; cat "$work/out"; exit 1; }
echo "baseline: $(summary)"

# (1) a wrong value: one mismatch, named, exit 1.
scratch
sed -i 's/^PRM_WQE_OP(SEND, *0x0a)$/PRM_WQE_OP(SEND, 0x0b)/' "$work/tree/firmware-cmd/wqe_opcodes.def"
grep -q '^PRM_WQE_OP(SEND, 0x0b)$' "$work/tree/firmware-cmd/wqe_opcodes.def" ||
  { echo "selftest: could not plant the wrong value (wqe_opcodes.def changed?)"; exit 1; }
run; rc=$?
if [ $rc -eq 1 ] && grep -q '^MISMATCH wqe_opcodes.def SEND: ours 0xb, oracle 0xa$' "$work/out" &&
   summary | grep -q ', 1 mismatches,'; then
  echo "wrong value: reported ($(summary))"
else
  echo "selftest: a wrong value was not reported (exit $rc)"; cat "$work/out"; fail=1
fi

# (2) a row no oracle header names: the checker must not build.
scratch
echo 'PRM_EVENT(SELFTEST_NOT_IN_LINUX, 0xfe)' >>"$work/tree/firmware-cmd/event_types.def"
run; rc=$?
if [ $rc -eq 1 ] && grep -q 'SELFTEST_NOT_IN_LINUX' "$work/out" && ! summary >/dev/null; then
  echo "unknown name: refused at compile time"
else
  echo "selftest: a row without an oracle was accepted (exit $rc)"; cat "$work/out"; fail=1
fi
exit $fail
