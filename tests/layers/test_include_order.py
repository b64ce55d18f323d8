# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Every #include in the tree against the layer table of docs/architecture.md ("Layer
rules"): a file may include headers of its own layer and of the layers its row lists,
and a row may list only layers below it.  The table is read from the document at each
run, so the rule and its description cannot drift apart.

  python3 tests/layers/test_include_order.py [SOURCE_DIR]   prints the violations
  python3 -m pytest tests/layers/test_include_order.py      the ctest entry

UVERBS_SOURCE_DIR names the source tree (default: two folders up from this file).
"""
import os
import re
import sys

SRC = os.environ.get("UVERBS_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = "docs/architecture.md"
SOURCE_EXT = (".c", ".h", ".def", ".cpp", ".hpp", ".m")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
EVERY_BELOW = "every layer below"


def parse_table(text):
    """[(layer, [paths], [may include]), ...] top to bottom, from the "Layer rules" table."""
    sec = re.search(r"^### Layer rules\n(.*?)(?=^#)", text, re.M | re.S)
    if not sec:
        raise ValueError("%s: no '### Layer rules' section" % DOC)
    rows = []
    for line in sec.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) != 3 or cells[0] in ("layer", "") or set(cells[0]) <= set("-: "):
            continue
        paths = re.findall(r"`([^`]+)`", cells[1])
        may = [m.strip() for m in cells[2].split(",") if m.strip()]
        if not paths:
            raise ValueError("%s: layer %r has no paths" % (DOC, cells[0]))
        rows.append((cells[0], paths, may))
    if not rows:
        raise ValueError("%s: the 'Layer rules' table has no rows" % DOC)
    return rows


def check_table(rows):
    """Problems of the table itself: unknown layers, or a layer allowed to include one
    that is not below it (the table must be an order, top to bottom)."""
    names = [r[0] for r in rows]
    errs = []
    for i, (name, _, may) in enumerate(rows):
        if names.count(name) != 1:
            errs.append("layer %s: listed twice" % name)
        for m in may:
            if m == EVERY_BELOW:
                continue
            if m not in names:
                errs.append("layer %s: may include %r, which is no layer of the table" % (name, m))
            elif names.index(m) <= i:
                errs.append("layer %s: may include %s, which is not below it" % (name, m))
    return errs


def allowed(rows):
    """{layer: set of layers its files may include} (itself included)."""
    names = [r[0] for r in rows]
    out = {}
    for i, (name, _, may) in enumerate(rows):
        s = {name}
        for m in may:
            s |= set(names[i + 1:]) if m == EVERY_BELOW else {m}
        out[name] = s
    return out


def layer_of(rel, rows):
    """The row whose path matches rel most closely (a folder prefix or the file itself)."""
    best, best_len = None, -1
    for name, paths, _ in rows:
        for p in paths:
            if (rel == p or (p.endswith("/") and rel.startswith(p))) and len(p) > best_len:
                best, best_len = name, len(p)
    return best


def source_files(src, rows):
    """Every source file under the folders the table names (build trees left out)."""
    tops = sorted({p.split("/")[0] for _, paths, _ in rows for p in paths})
    for top in tops:
        for d, dirs, files in os.walk(os.path.join(src, top)):
            dirs[:] = sorted(x for x in dirs if not x.startswith(".") and not x.startswith("build"))
            for f in sorted(files):
                if f.endswith(SOURCE_EXT):
                    yield os.path.relpath(os.path.join(d, f), src)


def resolve(src, rel, kind, target):
    """The file an include names, relative to src, or None when it is not ours."""
    cands = []
    if kind == '"':
        cands.append(os.path.normpath(os.path.join(os.path.dirname(rel), target)))
    cands.append(os.path.normpath(target))
    cands.append(os.path.join("uverbs", "include", target))  # <uverbs.h>, the installed header
    for c in cands:
        if not c.startswith("..") and os.path.isfile(os.path.join(src, c)):
            return c
    return None


def violations(src):
    with open(os.path.join(src, DOC)) as f:
        rows = parse_table(f.read())
    errs = check_table(rows)
    ok = allowed(rows)
    for rel in source_files(src, rows):
        own = layer_of(rel, rows)
        if own is None:
            errs.append("%s: in no layer of the table in %s" % (rel, DOC))
            continue
        with open(os.path.join(src, rel), errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                hdr = resolve(src, rel, m.group(1), m.group(2))
                if hdr is None:
                    continue
                to = layer_of(hdr, rows)
                if to is None:
                    errs.append("%s:%d: includes %s, which is in no layer" % (rel, n, hdr))
                elif to not in ok[own]:
                    errs.append("%s:%d: %s includes %s (%s): not below it in %s"
                                % (rel, n, own, hdr, to, DOC))
    return errs


# ---------------------------------------------------------------- the tests

def test_the_table_is_an_order_from_top_to_bottom():
    with open(os.path.join(SRC, DOC)) as f:
        rows = parse_table(f.read())
    assert [r[0] for r in rows][-1] == "hw/platform"
    assert check_table(rows) == []


def test_no_include_in_the_tree_goes_up_the_layer_order():
    errs = violations(SRC)
    assert errs == [], "\n".join(errs)


TABLE = """# x
### Layer rules

| layer | paths | may include |
|---|---|---|
| tests | `tests/` | every layer below |
| uverbs | `uverbs/` | hw/mlx5 |
| hw/mlx5 | `hw/mlx5/` | |

## next
"""


def plant(tmp_path, files, table=TABLE):
    (tmp_path / "docs").mkdir()
    (tmp_path / DOC).write_text(table)
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return str(tmp_path)


def test_a_planted_upward_include_is_reported(tmp_path):
    src = plant(tmp_path, {"uverbs/uv.h": "", "hw/mlx5/mx5.h": "",
                           "uverbs/qp.c": '#include "hw/mlx5/mx5.h"\n#include "uverbs/uv.h"\n',
                           "hw/mlx5/qp.c": '#include <stdio.h>\n#include "uverbs/uv.h"\n',
                           "tests/t.c": '#include "uverbs/uv.h"\n#include "hw/mlx5/mx5.h"\n'})
    assert violations(src) == ["hw/mlx5/qp.c:2: hw/mlx5 includes uverbs/uv.h (uverbs): not below it in %s" % DOC]


def test_a_row_allowing_a_layer_above_it_is_reported(tmp_path):
    src = plant(tmp_path, {}, TABLE.replace("| hw/mlx5 | `hw/mlx5/` | |", "| hw/mlx5 | `hw/mlx5/` | uverbs |"))
    assert violations(src) == ["layer hw/mlx5: may include uverbs, which is not below it"]


def test_a_file_outside_every_layer_is_reported(tmp_path):
    src = plant(tmp_path, {"hw/emu/dev.c": "int x;\n", "hw/mlx5/a.c": ""},
                TABLE.replace("`hw/mlx5/`", "`hw/mlx5/`, `hw/emu/dev.c`").replace("`tests/`", "`tests/`, `hw/emu/`"))
    assert violations(src) == []   # hw/emu/dev.c: its own row (the closer match) here
    os.remove(os.path.join(src, "hw/emu/dev.c"))
    (tmp_path / "hw" / "shim").mkdir()
    (tmp_path / "hw" / "shim" / "s.c").write_text("")
    assert violations(src) == ["hw/shim/s.c: in no layer of the table in %s" % DOC]


if __name__ == "__main__":
    errs = violations(sys.argv[1] if len(sys.argv) > 1 else SRC)
    print("\n".join(errs) if errs else "no upward include")
    sys.exit(1 if errs else 0)
