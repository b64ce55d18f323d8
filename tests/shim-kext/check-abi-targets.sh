#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Compile the kext ABI header and the portable core for every target they serve, with
# only the compiler's freestanding headers (the kernel has no libc), as C11 and as
# C++17 (the IOKit glue is C++).  A layout difference between targets trips the
# header's static asserts and fails here.  Needs Debian's clang; fails if it is absent.
set -euo pipefail
src=${1:?usage: check-abi-targets.sh SOURCE_DIR}
CLANG=$(command -v clang || command -v clang-14 || true)
if [ -z "$CLANG" ]; then
  echo "FAIL: clang not found; run tools/install-deps (Debian packages clang, libclang-rt-14-dev)" >&2
  exit 1
fi
CLANGXX=$(command -v clang++ || command -v clang++-14 || true)
inc=$("$CLANG" -print-resource-dir)/include
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include "shim-kext/include/uvshim_abi.h"\nint uvshim_abi_probe;\n' >"$tmp/abi.c"
cp "$tmp/abi.c" "$tmp/abi.cpp"
targets="x86_64-linux-gnu i386-linux-gnu aarch64-linux-gnu armv7-linux-gnueabihf arm64-apple-macos11 x86_64-apple-macos10.15"
n=0
for t in $targets; do
  flags=(--target="$t" -ffreestanding -nostdinc -isystem "$inc" -I "$src" -Wall -Wextra -Wpedantic -Werror -fsyntax-only)
  "$CLANG" "${flags[@]}" -std=c11 "$tmp/abi.c"
  for f in "$src"/shim-kext/core/*.c; do
    "$CLANG" "${flags[@]}" -std=c11 "$f"
  done
  if [ -n "$CLANGXX" ]; then
    "$CLANGXX" "${flags[@]}" -Wno-stdlibcxx-not-found -std=c++17 "$tmp/abi.cpp"
  fi
  n=$((n + 1))
done
echo "kext abi figures: header and core compile freestanding for $n targets (C11${CLANGXX:+ and C++17})"
