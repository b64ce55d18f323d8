# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Sourced by the VM tests (tests/vm/test_*.sh) after they set SRC, with the test's name:
#   . "$SRC/tools/vm-test.sh" vm_rxe
# Builds the harness (tools/vm build, cached), prints its stage times, and decides:
# QEMU cannot be built here (tools/vm exit 2) is a skip (exit 77), or a failure under
# CI=true; any other build failure fails the test.  Sets C to the cache directory
# (tools/vm path).
vm_test_out=$("$SRC/tools/vm" build 2>&1)
vm_test_rc=$?
echo "$vm_test_out"
if [ "$vm_test_rc" = 2 ]; then
  [ "${CI:-}" = true ] && { echo "$1: QEMU cannot be built, and CI=true"; exit 1; }
  echo "$1: skipped: QEMU cannot be built here"
  exit 77
fi
[ "$vm_test_rc" = 0 ] || { echo "$1: tools/vm build failed"; exit 1; }
C=$("$SRC/tools/vm" path)
