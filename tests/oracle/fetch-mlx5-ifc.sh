#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Print the include directory of Linux's mlx5 headers, fetching Debian's newest
# linux-headers-*-common package into a cache the first time (apt-get download +
# dpkg -x; nothing is committed).  Usage: fetch-mlx5-ifc.sh <cache dir>
# UVERBS_LINUX_HEADERS=<dir with linux/mlx5/mlx5_ifc.h> skips the download.
set -euo pipefail
cache=${1:?cache dir}
if [ -n "${UVERBS_LINUX_HEADERS:-}" ]; then
  echo "$UVERBS_LINUX_HEADERS"; exit 0
fi
mkdir -p "$cache"
found=$(find "$cache/x" -path '*/include/linux/mlx5/mlx5_ifc.h' 2>/dev/null | head -n1 || true)
if [ -z "$found" ]; then
  pkg=$(apt-cache search --names-only '^linux-headers-[0-9.+~a-z-]*-common$' 2>/dev/null \
        | awk '{print $1}' | grep -v -- '-rt$' | sort -V | tail -n1 || true)
  if [ -z "$pkg" ]; then
    (apt-get update -q >/dev/null 2>&1 || true)
    pkg=$(apt-cache search --names-only '^linux-headers-[0-9.+~a-z-]*-common$' \
          | awk '{print $1}' | grep -v -- '-rt$' | sort -V | tail -n1)
  fi
  [ -n "$pkg" ] || { echo "fetch-mlx5-ifc: no linux-headers-*-common package found" >&2; exit 2; }
  ( cd "$cache" && apt-get download "$pkg" >/dev/null 2>&1 ) || {
    echo "fetch-mlx5-ifc: apt-get download $pkg failed" >&2; exit 2; }
  dpkg -x "$cache"/"$pkg"_*.deb "$cache/x"
  echo "$pkg" > "$cache/package"
  found=$(find "$cache/x" -path '*/include/linux/mlx5/mlx5_ifc.h' | head -n1)
fi
[ -n "$found" ] || { echo "fetch-mlx5-ifc: mlx5_ifc.h not in the package" >&2; exit 2; }
# Only the mlx5_ifc headers go on the include path: the kernel's own linux/*.h would
# shadow the system's userspace headers.
mkdir -p "$cache/ifc/linux/mlx5"
cp "$(dirname "$found")"/mlx5_ifc*.h "$cache/ifc/linux/mlx5/"
echo "$cache/ifc"
