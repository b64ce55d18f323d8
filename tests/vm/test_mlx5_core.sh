#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Linux's mlx5_core (Debian's 6.1 kernel) against the emulated ConnectX in a QEMU guest
# (tools/vm): the probe completes with no failed command, no timeout and no kernel
# warning; unload and reload work; then mlx5_ib registers an RDMA device that Debian's
# ibv_devinfo (rdma-core's libmlx5 over the kernel's ib_uverbs) lists with its port.
# Linux 6.1's mlx5_ib refuses a device without the xrc capability (main.c
# mlx5_ib_dev_res_init); the emulator offers it by default, backed by XRC SRQs
# (hw/emu/cmd_srq.c, the one mlx5_ib creates at probe among them) and XRC initiator and
# target QPs (hw/emu/cmd_qp.c, sq_engine.c, rc_resp.c; tests/emu/test_xrc.c).
# Every command and the emulator's answer is recorded (dump_command form) in
# BINDIR/linux-mlx5_core-commands.txt: reference K of the field-set oracle
# (tests/oracle/field_set_table.txt, checked against this recording by
# tests/vm/field_set_linux.py; tests/mlx5/test_field_set.c holds our driver to it).
# Prints `linux oracle: ...`.
# Exit 77 (skip) only when QEMU cannot be built here; under CI=true that fails.
set -uo pipefail
SRC=${1:?source dir} BIN=${2:?binary dir}
mkdir -p "$BIN"
. "$SRC/tools/vm-test.sh" vm_mlx5_core

guest=$(mktemp); trap 'rm -f "$guest"' EXIT
cat >"$guest" <<'GUEST'
dev=/sys/bus/pci/devices/0000:01:00.0
bound() { [ -e /sys/bus/pci/drivers/mlx5_core/0000:01:00.0 ]; }
modprobe mlx5_core || echo "modprobe mlx5_core failed"
sleep 1
bound && echo "probe: ok" || echo "probe: FAILED"
modprobe -r mlx5_core && echo "unload: ok" || echo "unload: FAILED"
bound && echo "unload: still bound"
modprobe mlx5_core && sleep 1
bound && echo "reload: ok" || echo "reload: FAILED"
modprobe mlx5_ib; sleep 1
if ls /sys/class/infiniband/ 2>/dev/null | grep -q .; then echo "mlx5_ib: ok $(ls /sys/class/infiniband)"
else echo "mlx5_ib: no RDMA device"; fi
echo "--- ibv_devinfo"
/job/bin/ibv_devinfo
echo "ibv_devinfo: exit $?"
echo "--- kernel log"
dmesg
GUEST
log=$BIN/linux-mlx5_core-commands.txt
t0=$SECONDS
P=/usr/lib/x86_64-linux-gnu/libibverbs/libmlx5-rdmav34.so
for f in /usr/bin/ibv_devinfo "$P" /etc/libibverbs.d/mlx5.driver; do
  [ -e "$f" ] || { echo "vm_mlx5_core: $f missing (tools/install-deps: ibverbs-utils, ibverbs-providers)"; exit 1; }
done
res=$("$SRC/tools/vm" run -t 300 -l "$log" -b /usr/bin/ibv_devinfo -a "$P:$P" \
  -a /etc/libibverbs.d/mlx5.driver:/etc/libibverbs.d/mlx5.driver "$guest"); rc=$?
echo "$res"
echo "vm_mlx5_core: guest run $((SECONDS - t0)) s, exit $rc"
[ $rc = 0 ] || { echo "vm_mlx5_core: the guest did not finish (exit $rc)"; exit 1; }

ncmd=$(grep -c '^dump command .* INPUT' "$log")
nfail=$(grep '^dump command .* OUTPUT' "$log" | grep -vc ' status 0x0 ')
fail=0
for want in "probe: ok" "unload: ok" "reload: ok"; do
  grep -qx "$want" <<<"$res" || { echo "vm_mlx5_core: missing '$want'"; fail=1; }
done
# Any kernel warning, oops or command timeout is a defect (of ours, or a Linux quirk to document).
if grep -E 'WARNING:|Call Trace|refcount_t|timeout|failed with error|health compromised' <<<"$res"; then
  echo "vm_mlx5_core: the kernel log has warnings or errors (above)"; fail=1
fi
if [ "$nfail" != 0 ]; then
  echo "vm_mlx5_core: failed commands:"; grep '^dump command .* OUTPUT' "$log" | grep -v ' status 0x0 '
  fail=1
fi
# ibv_devinfo (kernel provider: libmlx5 over /dev/infiniband/uverbs0) lists mlx5_0 and
# its port 1 with a state; with no mlx5e netdev the RoCE port is down
# (main.c mlx5_query_port_roce: ACTIVE only with a running netdev).
dinfo=$(sed -n '/^--- ibv_devinfo/,/^ibv_devinfo: exit/p' <<<"$res")
pstate=$(awk '/^[[:space:]]*state:/ {print $2; exit}' <<<"$dinfo")
if grep -q '^mlx5_ib: ok' <<<"$res" && grep -q 'hca_id:[[:space:]]*mlx5_0' <<<"$dinfo" &&
   grep -q 'transport:[[:space:]]*InfiniBand' <<<"$dinfo" && grep -q 'port:[[:space:]]*1' <<<"$dinfo" &&
   [ -n "$pstate" ] && grep -q '^ibv_devinfo: exit 0' <<<"$dinfo"; then
  ibfig="mlx5_ib ok (ibv_devinfo: mlx5_0 port 1 $pstate)"
else
  ibfig="mlx5_ib FAILED"; fail=1
  grep -q '^mlx5_ib: ok' <<<"$res" || echo "vm_mlx5_core: mlx5_ib registered no RDMA device"
  [ -n "$dinfo" ] && echo "vm_mlx5_core: ibv_devinfo did not list mlx5_0 with port 1 and its state"
fi
echo "vm_mlx5_core: command stream recorded in $log ($(wc -l <"$log") lines)"
# The recording is reference K of the field-set oracle (tests/oracle/field_set_table.txt):
# its K rows must be what this run's Linux set, both ways.
/usr/bin/python3 "$SRC/tests/vm/field_set_linux.py" "$SRC" "$log" || fail=1
[ $fail = 0 ] && st=ok || st=FAILED
echo "linux oracle: mlx5_core probe $st ($ncmd commands, $nfail failed), unload and reload ok; $ibfig"
exit $fail
