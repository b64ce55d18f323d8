#!/usr/bin/env bash
# Build the RoCE v2 receive-path fuzzer (fuzz_roce_rx.c over the emulator, the shim, the
# driver and the command engine, compiled from source here) with Debian's clang and run
# it for a fixed number of inputs.  Fails (never skips) when clang or the libFuzzer
# runtime is missing, on any crash (a guard page written traps), sanitizer report or
# leak, and when the run did not reach the requested count.
#   run-fuzz-roce.sh SOURCE_DIR WORK_DIR RUNS
set -euo pipefail
src=${1:?usage: run-fuzz-roce.sh SOURCE_DIR WORK_DIR RUNS}
work=${2:?}
runs=${3:-30000}
CLANG=$(command -v clang || command -v clang-14 || true)
if [ -z "$CLANG" ]; then
  echo "FAIL: clang not found: the RoCE receive fuzzer needs Debian's clang and" \
       "libclang-rt-14-dev (tools/install-deps installs both)" >&2
  exit 1
fi
rm -rf "$work"
mkdir -p "$work/corpus" "$work/obj"

# The emulator's command-area registry, generated from the cmd_<area>.c file names as
# hw/emu/CMakeLists.txt does.
areas=$work/emu_areas.c
{
  echo '#include "hw/emu/emu_dev.h"'
  for f in "$src"/hw/emu/cmd_*.c; do
    a=$(basename "$f" .c); echo "extern const struct emu_cmd_area emu_area_${a#cmd_};"
  done
  echo 'const struct emu_cmd_area *const emu_areas[] = {'
  for f in "$src"/hw/emu/cmd_*.c; do
    a=$(basename "$f" .c); echo "	&emu_area_${a#cmd_},"
  done
  echo '};'
  echo 'const size_t emu_nareas = sizeof(emu_areas) / sizeof(emu_areas[0]);'
} >"$areas"

# The sources of uv_emu, uv_shim (Linux: emu + vfio, not the macOS kext), uv_mlx5,
# uv_fwcmd and uv_platform (Linux side), with the defines their CMakeLists give them.
srcs=("$src"/hw/emu/*.c "$areas" "$src"/hw/shim/shim.c "$src"/hw/shim/emu.c "$src"/hw/shim/vfio.c
      "$src"/hw/shim/vfio_*.c "$src"/hw/mlx5/*.c "$src"/hw/platform/*_linux.c)
for f in "$src"/firmware-cmd/*.c; do
  [ "$(basename "$f")" = fwcmd_main.c ] || srcs+=("$f")
done
cflags=(-std=c11 -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
        -D_GNU_SOURCE -DSHIM_HAVE_EMU=1 -DSHIM_HAVE_VFIO=1 -I "$src" -Wall -Wextra
        -Wno-missing-field-initializers -pthread)
# Two compilers at a time (the machine's share); each object named by its position so
# equal base names (hw/emu/device.c, hw/mlx5/device.c) do not collide.
i=0
for f in "${srcs[@]}"; do
  i=$((i + 1))
  ( "$CLANG" "${cflags[@]}" -c "$f" -o "$work/obj/$i-$(basename "$f" .c).o" 2>"$work/obj/$i.log" ||
    echo "$f" >>"$work/build.fail" ) &
  if [ "$(jobs -rp | wc -l)" -ge 2 ]; then wait -n || true; fi
done
wait
cat "$work"/obj/*.log >"$work/build.log"
bin=$work/fuzz_roce_rx
if [ -e "$work/build.fail" ] || ! "$CLANG" "${cflags[@]}" -Werror -fsanitize=fuzzer -o "$bin" \
     "$src"/tests/fuzz/fuzz_roce_rx.c "$work"/obj/*.o 2>>"$work/build.log"; then
  cat "$work/build.log" >&2
  echo "FAIL: could not build the fuzzer with $CLANG (is libclang-rt-14-dev installed?)" >&2
  exit 1
fi
FUZZ_ROCE_SEEDS="$work/corpus" "$bin"
nseed=$(ls "$work/corpus" | wc -l)
if [ "$nseed" -lt 10 ]; then
  echo "FAIL: the seed generator wrote $nseed seeds" >&2
  exit 1
fi
. "$src/tests/common/libfuzzer-run.sh"
fuzz_run_and_judge "$bin" "$work" "$runs" 1200 480
# Depth: a harness whose packets all died in the header checks would prove little.
# The harness's exit report must show WRITEs parsed, receives completed, answers sent and
# B's own sends completed by a response.
depth=$(grep -E '^fuzz_roce_rx: B received' "$work/fuzz.log" | tail -1 || true)
writes=$(echo "$depth" | sed -nE 's/.*\(([0-9]+) parsed as WRITE.*/\1/p')
recv_ok=$(echo "$depth" | sed -nE 's/.*receive completions ([0-9]+) ok.*/\1/p')
sent=$(echo "$depth" | sed -nE 's/.*, sent ([0-9]+);.*/\1/p')
# Requester mode: B's own WRITE/FETCH_ADD/READ must have been completed by fuzzed responses.
own_ok=$(echo "$depth" | sed -nE 's/.*own-send completions ([0-9]+) ok.*/\1/p')
if [ -z "$writes" ] || [ -z "$recv_ok" ] || [ -z "$sent" ] || [ -z "$own_ok" ] ||
   [ "$writes" -eq 0 ] || [ "$recv_ok" -eq 0 ] || [ "$sent" -eq 0 ] || [ "$own_ok" -eq 0 ]; then
  echo "FAIL: the inputs never got past the header checks (${depth:-no depth report})" >&2
  exit 1
fi
echo "roce rx fuzz figures: $done_runs inputs, $nseed seeds, ${cov:-cov: ?}, $own_ok of B's own sends" \
     "completed by fuzzed responses, no crash or sanitizer report"
