# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Sourced by the fuzz runners built over the emulated device (tests/fuzz/run-fuzz-roce.sh,
# run-fuzz-cmd.sh): compile the userspace layers from source with Debian's clang, with
# libFuzzer's coverage and ASan+UBSan, and link one harness.  The layers are those of
# uv_emu, uv_shim (Linux: emu + vfio, not the macOS kext), uv_fwcmd and uv_platform's
# Linux side, with the defines their CMakeLists give them; the emulator's command-area
# registry is generated from the area definitions as hw/emu/CMakeLists.txt does.
#   fuzz_build_emu SRC WORK BIN HARNESS [EXTRA_SOURCE...]
# Fails (exit 1, never skips) when clang or the libFuzzer runtime is missing or a
# source does not compile.
fuzz_build_emu() {
  local src=$1 work=$2 bin=$3 harness=$4 i=0 f a
  shift 4
  local clang
  clang=$(command -v clang || command -v clang-14 || true)
  if [ -z "$clang" ]; then
    echo "FAIL: clang not found: $(basename "$harness" .c) needs Debian's clang and" \
         "libclang-rt-14-dev (tools/install-deps installs both)" >&2
    exit 1
  fi
  mkdir -p "$work/obj"
  local areas=$work/emu_areas.c
  # Area names by hw/emu/CMakeLists.txt's rule: every emu_area_<name> a source defines
  # at the start of a line, in name order (their init and teardown order).
  local names
  names=$(sed -n 's/^const struct emu_cmd_area emu_area_\([a-z0-9_]*\) =.*/\1/p' "$src"/hw/emu/*.c | LC_ALL=C sort)
  {
    echo '#include "hw/emu/emu_dev.h"'
    for a in $names; do echo "extern const struct emu_cmd_area emu_area_${a};"; done
    echo 'const struct emu_cmd_area *const emu_areas[] = {'
    for a in $names; do echo "	&emu_area_${a},"; done
    echo '};'
    echo 'const size_t emu_nareas = sizeof(emu_areas) / sizeof(emu_areas[0]);'
  } >"$areas"
  local srcs=("$src"/hw/emu/*.c "$areas" "$src"/hw/shim/shim.c "$src"/hw/shim/emu.c "$src"/hw/shim/vfio.c
              "$src"/hw/shim/vfio_*.c "$src"/hw/platform/*_linux.c
              "$src"/hw/platform/*_common.c "$@")
  for f in "$src"/firmware-cmd/*.c; do
    [ "$(basename "$f")" = fwcmd_main.c ] || srcs+=("$f")
  done
  local cflags=(-std=c11 -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                -D_GNU_SOURCE -DSHIM_HAVE_EMU=1 -DSHIM_HAVE_VFIO=1 -I "$src" -Wall -Wextra
                -Wno-missing-field-initializers -pthread)
  # Two compilers at a time (the machine's share); each object named by its position so
  # equal base names (hw/emu/device.c, hw/mlx5/device.c) do not collide.
  for f in "${srcs[@]}"; do
    i=$((i + 1))
    ( "$clang" "${cflags[@]}" -c "$f" -o "$work/obj/$i-$(basename "$f" .c).o" 2>"$work/obj/$i.log" ||
      echo "$f" >>"$work/build.fail" ) &
    if [ "$(jobs -rp | wc -l)" -ge 2 ]; then wait -n || true; fi
  done
  wait
  cat "$work"/obj/*.log >"$work/build.log"
  if [ -e "$work/build.fail" ] || ! "$clang" "${cflags[@]}" -Werror -fsanitize=fuzzer -o "$bin" \
       "$harness" "$work"/obj/*.o 2>>"$work/build.log"; then
    cat "$work/build.log" >&2
    echo "FAIL: could not build $(basename "$bin") with $clang (is libclang-rt-14-dev installed?)" >&2
    exit 1
  fi
}
