#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""The emulated ConnectX's call order (hw/emu/layers.txt, drawn in docs/architecture.md,
"The data plane's call order") against the calls the compiler left in the objects.

    check_emu_layers.py TABLE OBJECT...

`nm` lists what each object of uv_emu defines and what it leaves undefined; every
undefined symbol that another object defines is a call (or a reference) from the first
file to the second.  Each such edge must go down the table: from a row to a row below it.
Two kinds of rows relax that: a `block` is one unit whose files may call each other in
any order (the command side), and a `table` may be referred to from any row (it holds the
areas' ops tables; nobody calls it, the device calls through it).  An object that no row
names fails too: a new file takes its place in the table.

Prints `emu layer check: N files, M cross-file calls, K upward` and fails when K > 0."""
import fnmatch
import os
import subprocess
import sys


def read_table(path):
    rows = []   # (kind, name, [patterns]), top first
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            head, sep, files = line.partition(":")
            parts = head.split()
            if not sep or len(parts) != 2 or parts[0] not in ("layer", "block", "table") or not files.split():
                sys.exit(f"{path}:{n}: expected `layer|block|table NAME: file...`")
            rows.append((parts[0], parts[1], files.split()))
    return rows


def obj_name(path):
    base = os.path.basename(path)
    for ext in (".c.o", ".c.obj", ".o"):
        if base.endswith(ext):
            return base[: -len(ext)]
    return base


def nm_all(paths):
    """(object path, kind, symbol) for every external symbol, in one run of nm: kind
    "U" for undefined, "D" for defined."""
    out = subprocess.run(["nm", "-A", "-g", *paths], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        path, sep, rest = line.rpartition(".o:")
        f = rest.split()
        if not sep or len(f) < 2:
            continue
        yield path + ".o", "U" if f[-2] in ("U", "w", "v") else "D", f[-1]


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    rows = read_table(argv[1])
    # CMake passes $<TARGET_OBJECTS:uv_emu> as one ;-separated argument
    objs = {obj_name(p): p for a in argv[2:] for p in a.split(";") if p}

    row_of, unplaced = {}, []
    for name in sorted(objs):
        hits = [i for i, (_, _, pats) in enumerate(rows) if any(fnmatch.fnmatchcase(name, p) for p in pats)]
        if len(hits) != 1:
            unplaced.append(f"{name}.c: in {len(hits)} rows of {argv[1]} (it must be in exactly one)")
        else:
            row_of[name] = hits[0]

    name_of = {p: n for n, p in objs.items()}
    symbols = list(nm_all(list(objs.values())))
    defined_by = {}
    for path, kind, sym in symbols:
        if kind == "D":
            defined_by.setdefault(sym, name_of[path])

    calls, upward = set(), []
    for path, kind, sym in symbols:
        name, to = name_of[path], defined_by.get(sym)
        if kind != "U" or to is None or to == name:
            continue
        calls.add((name, to, sym))
        if name not in row_of or to not in row_of:
            continue
        a, b = row_of[name], row_of[to]
        kind_b = rows[b][0]
        ok = b > a or kind_b == "table" or (a == b and kind_b == "block")
        if not ok:
            upward.append(f"{name}.c ({rows[a][1]}) -> {to}.c ({rows[b][1]}): {sym}")

    for u in unplaced:
        print("not placed:", u)
    for u in sorted(upward):
        print("upward:", u)
    print(f"emu layer check: {len(objs)} files, {len(calls)} cross-file calls, {len(upward)} upward")
    return 1 if upward or unplaced else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
