#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# mlx5_ifc.h oracle (docs/architecture.md, "PRM layouts as data, and the oracles"): fetch Linux's mlx5_ifc.h, compile
# ifc_rows.c + ifc_oracle.c (generated from our PRM tables by X-macros) against it and rdma-core's
# DEVX_SET/DEVX_GET, and run it.  It prints
#   mlx5_ifc oracle: N fields checked, M mismatches, K unverified
# and fails on any mismatch.
#
# Usage: run_mlx5_ifc.sh [<source dir> [<work dir> [<C compiler> [<extra C flags>]]]]
# (ctest passes all four; by hand they default to this checkout, a temp dir, $CC or cc,
# and no extra flags).  Exit 0 all match, 1 mismatch or build failure of the checker,
# 2 the oracle's inputs (mlx5_ifc.h, mlx5dv.h) are not available.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=${1:-$(cd "$here/../.." && pwd)}
work=${2:-${TMPDIR:-/tmp}/uverbs-oracle-mlx5-ifc}
cc=${3:-${CC:-cc}}
extra=${4:-}
mkdir -p "$work" || { echo "run_mlx5_ifc: cannot create $work" >&2; exit 2; }

inc=$(bash "$src/tests/oracle/fetch-mlx5-ifc.sh" "$work/cache")
if [ $? -ne 0 ] || [ -z "$inc" ] || [ ! -f "$inc/linux/mlx5/mlx5_ifc.h" ]; then
  echo "run_mlx5_ifc: could not fetch Linux's mlx5_ifc.h (Debian linux-headers-*-common);" \
       "set UVERBS_LINUX_HEADERS=<dir holding linux/mlx5/mlx5_ifc.h> to use a local copy" >&2
  exit 2
fi
if ! echo '#include <infiniband/mlx5dv.h>' | "$cc" -E -x c - >/dev/null 2>&1; then
  echo "run_mlx5_ifc: <infiniband/mlx5dv.h> not found (install rdma-core's libibverbs-dev)" >&2
  exit 2
fi
[ -f "$work/cache/package" ] && echo "mlx5_ifc.h from $(cat "$work/cache/package")"

# The fetched header goes in as a system header: its own warnings (clang flags a GNU
# variable-size member in it) are not ours to fix; ours stay -Werror.
# shellcheck disable=SC2086 # extra flags are a word list on purpose
if ! "$cc" -std=gnu11 -O1 -g -Wall -Wextra -Werror $extra -I"$src" -isystem "$inc" \
     "$src/tests/oracle/ifc_rows.c" "$src/tests/oracle/ifc_oracle.c" -o "$work/ifc_oracle"; then
  echo "run_mlx5_ifc: the checker did not compile: a row names a structure or field that" \
       "mlx5_ifc.h lacks (declare it in tests/oracle/ifc_exceptions.h with the reason)," \
       "or a table is malformed" >&2
  exit 1
fi
"$work/ifc_oracle"
