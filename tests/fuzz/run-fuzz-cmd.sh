#!/usr/bin/env bash
# Build the command-processor fuzzer (fuzz_cmd.c over the emulator, the shim and the
# command engine, compiled from source here) with Debian's clang, write its seed corpus
# (the ConnectX-4 trace's command inputs and valid object commands) into the work dir,
# and run it for a fixed number of inputs.  Fails (never skips) when clang or the
# libFuzzer runtime is missing, on any crash, sanitizer report or leak, when the run did
# not reach the requested count, and when the inputs never got past the opcode dispatch.
#   run-fuzz-cmd.sh SOURCE_DIR WORK_DIR RUNS
set -euo pipefail
src=${1:?usage: run-fuzz-cmd.sh SOURCE_DIR WORK_DIR RUNS}
work=${2:?}
runs=${3:-20000}
CLANG=$(command -v clang || command -v clang-14 || true)
if [ -z "$CLANG" ]; then
  echo "FAIL: clang not found: the command fuzzer needs Debian's clang and" \
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

# uv_emu, uv_shim (Linux: emu + vfio), uv_fwcmd and the trace reader, with the defines
# their CMakeLists give them.
srcs=("$src"/hw/emu/*.c "$areas" "$src"/hw/shim/shim.c "$src"/hw/shim/emu.c "$src"/hw/shim/vfio.c
      "$src"/hw/shim/vfio_*.c "$src"/tests/common/fixture_trace.c)
for f in "$src"/firmware-cmd/*.c; do
  [ "$(basename "$f")" = fwcmd_main.c ] || srcs+=("$f")
done
cflags=(-std=c11 -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
        -D_GNU_SOURCE -DSHIM_HAVE_EMU=1 -DSHIM_HAVE_VFIO=1 -I "$src" -Wall -Wextra
        -Wno-missing-field-initializers -pthread)
# Two compilers at a time (the machine's share); objects named by position.
i=0
for f in "${srcs[@]}"; do
  i=$((i + 1))
  ( "$CLANG" "${cflags[@]}" -c "$f" -o "$work/obj/$i-$(basename "$f" .c).o" 2>"$work/obj/$i.log" ||
    echo "$f" >>"$work/build.fail" ) &
  if [ "$(jobs -rp | wc -l)" -ge 2 ]; then wait -n || true; fi
done
wait
cat "$work"/obj/*.log >"$work/build.log"
bin=$work/fuzz_cmd
if [ -e "$work/build.fail" ] || ! "$CLANG" "${cflags[@]}" -Werror -fsanitize=fuzzer -o "$bin" \
     "$src"/tests/fuzz/fuzz_cmd.c "$work"/obj/*.o 2>>"$work/build.log"; then
  cat "$work/build.log" >&2
  echo "FAIL: could not build the fuzzer with $CLANG (is libclang-rt-14-dev installed?)" >&2
  exit 1
fi
export UVERBS_FIXTURES=${UVERBS_FIXTURES:-$src/../shared/fixtures}
FUZZ_CMD_SEEDS="$work/corpus" "$bin"
nseed=$(ls "$work/corpus" | wc -l)
if [ "$nseed" -lt 20 ]; then
  echo "FAIL: the seed generator wrote $nseed seeds" >&2
  exit 1
fi
. "$src/tests/common/libfuzzer-run.sh"
fuzz_run_and_judge "$bin" "$work" "$runs" 8192 240
# Depth: inputs that all died at the opcode dispatch would prove little.  The harness's
# exit report must show commands completed with status 0, of many opcodes.
depth=$(grep -E '^fuzz_cmd: [0-9]+ commands' "$work/fuzz.log" | tail -1 || true)
ok=$(echo "$depth" | sed -nE 's/.* ([0-9]+) completed with status 0.*/\1/p')
ops=$(echo "$depth" | sed -nE 's/.*status 0 \(([0-9]+) opcodes\).*/\1/p')
if [ -z "$ok" ] || [ -z "$ops" ] || [ "$ok" -eq 0 ] || [ "$ops" -lt 10 ]; then
  echo "FAIL: the inputs never got past the opcode dispatch (${depth:-no depth report})" >&2
  exit 1
fi
echo "cmd fuzz figures: $done_runs inputs, $nseed seeds, ${cov:-cov: ?}, $ok commands completed" \
     "with status 0 ($ops opcodes), no crash or sanitizer report"
