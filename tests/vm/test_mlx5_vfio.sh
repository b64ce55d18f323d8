#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdma-core's own VFIO provider (Debian's libmlx5: mlx5dv_get_vfio_device_list) brings
# up the emulated ConnectX bound to vfio-pci in a QEMU guest (tools/vm): open (its
# firmware bring-up), a DEVX command, the events, a PD and an MR (mlx5_vfio_probe.c).
# mlx5_vfio refuses a device without umem_uid_0 (mlx5_vfio.c mlx5_vfio_setup_function),
# which this emulator does not offer (it has no UMEM objects): the test turns it on with
# the emulator's cap= option and says so.  Prints `mlx5_vfio: ...`.
# Exit 77 only when QEMU cannot be built here (CI=true: failure).
set -uo pipefail
SRC=${1:?source dir} BIN=${2:?binary dir}
mkdir -p "$BIN"
. "$SRC/tools/vm-test.sh" vm_mlx5_vfio
cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -o "$BIN/mlx5_vfio_probe" \
  "$SRC/tests/vm/mlx5_vfio_probe.c" -lmlx5 -libverbs || { echo "vm_mlx5_vfio: cannot build the probe"; exit 1; }

guest=$(mktemp); trap 'rm -f "$guest"' EXIT
cat >"$guest" <<'GUEST'
modprobe vfio-pci; modprobe vfio_iommu_type1
d=0000:01:00.0
echo vfio-pci > /sys/bus/pci/devices/$d/driver_override
echo $d > /sys/bus/pci/drivers_probe
ulimit -l unlimited
mlx5_vfio_probe $d; echo "probe exit $?"
dmesg | grep -E 'WARNING:|Call Trace|DMAR: DRHD: handling fault'
true
GUEST
log=$BIN/mlx5_vfio-commands.txt
res=$("$SRC/tools/vm" run -t 300 -o cap=general.umem_uid_0:1 -l "$log" -b "$BIN/mlx5_vfio_probe" "$guest"); rc=$?
echo "$res"
[ $rc = 0 ] || { echo "vm_mlx5_vfio: the guest did not finish (exit $rc)"; exit 1; }
ncmd=$(grep -c '^dump command .* INPUT' "$log")
nfail=$(grep '^dump command .* OUTPUT' "$log" | grep -vc ' status 0x0 ')
fail=0
grep -q '^mlx5_vfio: ok$' <<<"$res" && grep -q '^probe exit 0$' <<<"$res" || fail=1
[ "$nfail" = 0 ] || { grep '^dump command .* OUTPUT' "$log" | grep -v ' status 0x0 '; fail=1; }
if grep -E 'WARNING:|Call Trace|DMAR: DRHD: handling fault' <<<"$res"; then fail=1; fi
[ $fail = 0 ] && st=ok || st=FAILED
echo "mlx5_vfio: $st (rdma-core's provider: bring-up, DEVX command, PD, MR; $ncmd commands, $nfail failed; umem_uid_0 turned on by the test)"
exit $fail
