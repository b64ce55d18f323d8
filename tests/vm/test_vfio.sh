#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Our VFIO shim on a real kernel: in a QEMU guest (tools/vm) two emulated ConnectX
# functions, each on its own root port (own IOMMU group) behind intel-iommu, are bound
# to vfio-pci; uvinfo brings one up through `vfio:` and uvperf runs RC WRITE, READ and
# SEND between the two, every byte verified.  Their RoCE leaves the guest through the
# device model's UDP sockets on the host's loopback (127.0.0.201 and .202).
# Prints `vfio: ...`.  Exit 77 only when QEMU cannot be built here (CI=true: failure).
set -uo pipefail
SRC=${1:?source dir}
. "$SRC/tools/vm-test.sh" vm_vfio

guest=$(mktemp); trap 'rm -f "$guest"' EXIT
cat >"$guest" <<'GUEST'
modprobe vfio-pci; modprobe vfio_iommu_type1
for d in 0000:01:00.0 0000:02:00.0; do
  echo vfio-pci > /sys/bus/pci/devices/$d/driver_override
  echo $d > /sys/bus/pci/drivers_probe
  echo "$d: driver $(basename "$(readlink /sys/bus/pci/devices/$d/driver)"), IOMMU group $(basename "$(readlink /sys/bus/pci/devices/$d/iommu_group)")"
done
ulimit -l unlimited
# no netdev stands behind a vfio port: its address and its peer's MAC are given
# (README "RoCE addresses"; the emulator's MAC is 02:00 and the IPv4 address)
export UVERBS_GIDS="uverbs0=127.0.0.201;uverbs1=127.0.0.202"
export UVERBS_NEIGH="127.0.0.201=02:00:7f:00:00:c9,127.0.0.202=02:00:7f:00:00:ca"
UVERBS_DEVICES=vfio:0000:01:00.0 uvinfo; echo "uvinfo exit $?"
uvperf --loopback --device vfio:0000:01:00.0 --device vfio:0000:02:00.0 --op write,read,send \
  --size 4096 --iters 100 --warmup 10 --verify --gid-index 1 --quiet --timeout 20000
echo "uvperf exit $?"
dmesg | grep -E 'WARNING:|Call Trace|DMAR: DRHD: handling fault|vfio.*(fail|error)'
true
GUEST
t0=$SECONDS
res=$("$SRC/tools/vm" run -t 300 -c 2 -o ip=127.0.0.201 -o ip=127.0.0.202 \
  -b "$C/emu-build/tools/uvperf" -b "$C/emu-build/tools/uvinfo" "$guest"); rc=$?
echo "$res"
echo "vm_vfio: guest run $((SECONDS - t0)) s, exit $rc"
[ $rc = 0 ] || { echo "vm_vfio: the guest did not finish (exit $rc)"; exit 1; }
fail=0
grep -q '^uvinfo exit 0$' <<<"$res" && grep -q 'uverbs0 *vfio:0000:01:00.0' <<<"$res" && up=ok || { up=FAILED; fail=1; }
nver=$(grep -cE '^(WRITE|READ|SEND) +4096 .* yes$' <<<"$res")
grep -q '^uvperf exit 0$' <<<"$res" && [ "$nver" = 3 ] && pp=ok || { pp=FAILED; fail=1; }
if grep -E 'WARNING:|Call Trace|DMAR: DRHD: handling fault' <<<"$res"; then
  echo "vm_vfio: kernel warnings or IOMMU faults (above)"; fail=1
fi
echo "vfio: bring-up $up, pingpong $pp (uvperf RC WRITE/READ/SEND 4096 B verified between two vfio-pci functions behind intel-iommu: $nver of 3)"
exit $fail
