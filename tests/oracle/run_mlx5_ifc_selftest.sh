#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Proves the mlx5_ifc oracle can fail: on a scratch copy of firmware-cmd/ and
# tests/oracle/, plant (1) a field one bit off, (2) a field mlx5_ifc.h does not have,
# (3) the same field declared in ifc_exceptions.h, and check that run_mlx5_ifc.sh
# reports (1) as one mismatch with exit 1, refuses (2) at compile time, and lists (3)
# as unverified with its reason.  Same arguments as run_mlx5_ifc.sh.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=${1:-$(cd "$here/../.." && pwd)}
work=${2:-${TMPDIR:-/tmp}/uverbs-oracle-mlx5-ifc-selftest}
cc=${3:-${CC:-cc}}
extra=${4:-}
mkdir -p "$work"
inc=$(bash "$src/tests/oracle/fetch-mlx5-ifc.sh" "$work/cache") || {
  echo "selftest: could not fetch Linux's mlx5_ifc.h" >&2; exit 2; }
fail=0
scratch() {
  rm -rf "$work/tree" && mkdir -p "$work/tree/tests" "$work/tree/hw" &&
    cp -r "$src/firmware-cmd" "$work/tree/" && cp -r "$src/tests/oracle" "$work/tree/tests/" &&
    cp -r "$src/hw/platform" "$work/tree/hw/"   # prm.h's byteorder.h
}
run() {
  UVERBS_LINUX_HEADERS=$inc bash "$work/tree/tests/oracle/run_mlx5_ifc.sh" "$work/tree" \
    "$work/run" "$cc" "$extra" >"$work/out" 2>&1
}
summary() { grep '^mlx5_ifc oracle:' "$work/out"; }

# Baseline: the unmodified tables pass.
scratch; run; rc=$?
base=$(summary)
[ $rc -eq 0 ] || { echo "selftest: baseline failed (exit $rc)"; cat "$work/out"; exit 1; }
echo "baseline: $base"

# (1) pmtu_reg.max_mtu one bit to the right: one mismatch, named, exit 1.
scratch
sed -i 's/^PRM_FIELD(pmtu_reg, max_mtu, 0x20, 16)$/PRM_FIELD(pmtu_reg, max_mtu, 0x21, 15)/' \
  "$work/tree/firmware-cmd/layouts/reg.def"
grep -q 'max_mtu, 0x21, 15' "$work/tree/firmware-cmd/layouts/reg.def" ||
  { echo "selftest: could not plant the shifted field (reg.def changed?)"; exit 1; }
run; rc=$?
if [ $rc -eq 1 ] && grep -q '^MISMATCH pmtu_reg.max_mtu' "$work/out" &&
   summary | grep -q ', 1 mismatches,'; then
  echo "shifted field: reported ($(summary))"
else
  echo "selftest: a shifted field was not reported (exit $rc)"; cat "$work/out"; fail=1
fi

# (2) a field the header does not have, undeclared: the checker must not build.
scratch
sed -i 's/^PRM_FIELD(pmtu_reg, max_mtu, 0x20, 16)$/&\nPRM_FIELD(pmtu_reg, selftest_not_in_ifc, 0x30, 4)/' \
  "$work/tree/firmware-cmd/layouts/reg.def"
run; rc=$?
if [ $rc -ne 0 ] && grep -q 'selftest_not_in_ifc' "$work/out" && ! summary >/dev/null; then
  echo "undeclared unknown field: refused at compile time"
else
  echo "selftest: an undeclared unknown field was accepted (exit $rc)"; cat "$work/out"; fail=1
fi

# (3) the same field, declared: unverified by name with the reason, still exit 0.
sed -i 's/^#endif$/#define ORACLE_FIELD_EXCEPT_pmtu_reg__selftest_not_in_ifc ORACLE_EXCEPT("selftest reason")\n#endif/' \
  "$work/tree/tests/oracle/ifc_exceptions.h"
run; rc=$?
if [ $rc -eq 0 ] && grep -q '^UNVERIFIED pmtu_reg.selftest_not_in_ifc: selftest reason$' "$work/out"; then
  echo "declared unknown field: unverified ($(summary))"
else
  echo "selftest: a declared field was not listed as unverified (exit $rc)"; cat "$work/out"; fail=1
fi
exit $fail
