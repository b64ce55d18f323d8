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

# The guest script's opening both rxe tests share (vm_rxe, vm_rdma_cm), printed for the
# test to put first in its guest file: Linux's rxe on veth0 (10.0.0.1), a network
# namespace "emu" holding veth1 (10.0.0.2) for the uverbs side, MAC0 = veth0's MAC, and
# uv CMD... running CMD as a uverbs application in that namespace (GID 1 = 10.0.0.2;
# its log level UVLOG, warn by default).  Arguments: kernel modules the test needs
# besides rxe and veth.
vm_rxe_pair_guest() {
  echo 'B=/job/bin'
  printf 'modprobe crc32_generic; modprobe rdma_rxe; modprobe veth'
  for m in "$@"; do printf '; modprobe %s' "$m"; done
  echo
  cat <<'GUEST'
mkdir -p /run/netns
$B/ip netns add emu
$B/ip link add veth0 type veth peer name veth1
$B/ip link set veth1 netns emu
$B/ip addr add 10.0.0.1/24 dev veth0; $B/ip link set veth0 up
$B/ip netns exec emu $B/ip addr add 10.0.0.2/24 dev veth1
$B/ip netns exec emu $B/ip link set veth1 up
$B/ip netns exec emu $B/ip link set lo up
$B/rdma link add rxe0 type rxe netdev veth0 || echo "rdma link add failed"
MAC0=$(cat /sys/class/net/veth0/address)
uv() { $B/ip netns exec emu /bin/env LD_PRELOAD=/job/lib/libuverbs.so.1 UVERBS_DEVICES=emu:ip=10.0.0.2 \
         UVERBS_NEIGH="10.0.0.1=$MAC0" UVERBS_LOG=${UVLOG:-warn} "$@"; }
GUEST
}
