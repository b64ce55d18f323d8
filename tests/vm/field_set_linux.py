#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Reference K of the field-set oracle (tests/oracle/field_set_table.txt): Linux 6.1's
mlx5_core and mlx5_ib as they ran against the emulated ConnectX in the VM, their command
stream recorded by tests/vm/test_mlx5_core.sh (dump_command form, every input whole).

For every section of the table with a `ref K` line, this reads the recorded inputs of
that command form and checks the table against them, both ways:
  - a field the section marks K is non-zero in at least one recorded input of the form;
  - a field of the form's input layout (firmware-cmd/layouts) that is non-zero in a
    recorded input is a row of the section marked K (the table names every field Linux
    set, so the oracle's intersection over references is Linux's own, not our reading).
tests/mlx5/test_field_set.c then holds our driver to the fields every reference of the
section sets, K among them.  Fields are compared as the oracle does: set means non-zero.
Forms: CREATE_QP and the transitions by qpc.st (RC, UC, UD), CREATE_MKEY by access mode
(MTT, KLM), the rest by opcode.

Usage: field_set_linux.py SRC_DIR CMDLOG [--emit FORM]   (--emit prints the rows Linux
set for FORM, to write a new K section).  Prints `field-set reference K: ...`; exit 1 on a
disagreement or a K section whose form the recording lacks.
"""
import os
import re
import sys


def load_layouts(src):
    """firmware-cmd/layouts/*.def: struct -> list of (name, kind, off, width_or_sub)."""
    structs = {}
    d = os.path.join(src, "firmware-cmd", "layouts")
    for fn in sorted(os.listdir(d)):
        if not fn.endswith(".def"):
            continue
        for line in open(os.path.join(d, fn)):
            m = re.match(r"PRM_(STRUCT|FIELD|SUB|BYTES)\(([^)]*)\)", line)
            if not m:
                continue
            args = [a.strip() for a in m.group(2).split(",")]
            kind = m.group(1)
            if kind == "STRUCT":
                structs.setdefault(args[0], [])
            elif kind == "SUB":
                structs.setdefault(args[0], []).append((args[1], "sub", int(args[2], 0), args[3]))
            else:
                structs.setdefault(args[0], []).append((args[1], kind.lower(), int(args[2], 0), int(args[3], 0)))
    return structs


def leaves(structs, name, prefix="", base=0):
    """Every PRM_FIELD under struct `name`, as (dotted path, bit offset, width)."""
    for fname, kind, off, w in structs.get(name, []):
        if kind == "sub":
            yield from leaves(structs, w, prefix + fname + ".", base + off)
        elif kind == "field" or (kind == "bytes" and w):   # an open-ended array (pas) is no field
            yield prefix + fname, base + off, w


def find(structs, name, path):
    for p, off, w in leaves(structs, name):
        if p == path:
            return off, w
    return None


def bits(buf, off, width):
    """PRM bit numbering: bit 0 is the MSB of byte 0.  (A byte array is read whole: only
    whether it is non-zero matters here.)"""
    first, last = off // 8, (off + width - 1) // 8
    if last >= len(buf):
        return 0
    v = int.from_bytes(buf[first:last + 1], "big")
    return (v >> ((last + 1) * 8 - off - width)) & ((1 << width) - 1)


def read_log(path):
    """(opcode name, input bytes) of every recorded command."""
    cmds, cur = [], None
    for line in open(path, errors="replace"):
        m = re.match(r"dump command (\S+)\(0x[0-9a-f]+\) op_mod 0x[0-9a-f]+ INPUT len (\d+)", line)
        if m:
            cur = [m.group(1), bytearray(), int(m.group(2))]
            cmds.append(cur)
            continue
        if line.startswith("dump command"):
            cur = None
            continue
        m = re.match(r"([0-9a-f]{3,}): ((?:[0-9a-f]{8} ?)+)$", line.strip())
        if cur is not None and m:
            for word in m.group(2).split():
                cur[1] += bytes.fromhex(word)
    return [(n, bytes(b[:ln])) for n, b, ln in cmds]


ST = {0: "RC", 1: "UC", 2: "UD"}
QP_FORMS = {"CREATE_QP": "create_qp_in", "RST2INIT_QP": "rst2init_qp_in", "INIT2RTR_QP": "init2rtr_qp_in",
            "RTR2RTS_QP": "rtr2rts_qp_in", "RTS2RTS_QP": "rts2rts_qp_in"}


def form_of(structs, name, buf, qp_st):
    """The table key of a recorded command, or None (a form the table has no use for)."""
    if name == "CREATE_QP":
        off, w = find(structs, "create_qp_in", "qpc.st")
        st = bits(buf, off, w)
        return name + "." + ST[st] if st in ST else None
    if name in QP_FORMS:
        qpn = bits(buf, *find(structs, QP_FORMS[name], "qpn"))
        st = qp_st.get(qpn)
        return name + "." + ST[st] if st in ST else None
    if name == "CREATE_MKEY":
        hi = bits(buf, *find(structs, "create_mkey_in", "memory_key_mkey_entry.access_mode_4_2"))
        lo = bits(buf, *find(structs, "create_mkey_in", "memory_key_mkey_entry.access_mode_1_0"))
        return {1: "CREATE_MKEY.MTT", 2: "CREATE_MKEY.KLM"}.get(hi << 2 | lo)
    return name


def read_table(path):
    """[(key, layout, refs set, {path: letters}, excused)]"""
    secs, cur = [], None
    for raw in open(path):
        line = raw.split("#", 1)[0].rstrip() if raw.lstrip().startswith("#") else raw.rstrip()
        m = re.match(r"\[(\S+)\]\s+(\S+)", line)
        if m:
            cur = [m.group(1), m.group(2), set(), {}]
            secs.append(cur)
        elif cur and line.startswith("ref "):
            cur[2].add(line[4])
        elif cur and line and not line.startswith("excuse "):
            tok = line.split()
            cur[3][tok[0]] = set(tok[1:])
    return secs


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src, logp = sys.argv[1], sys.argv[2]
    structs = load_layouts(src)
    cmds = read_log(logp)
    # QP numbers -> service type: a transition names its QP only, CREATE_QP's recorded
    # answer gives the number (output dword 2)
    qp_st = {}
    outs = re.findall(r"dump command CREATE_QP\(0x500\) op_mod 0x[0-9a-f]+ OUTPUT len \d+ status 0x0 .*\n000: "
                      r"[0-9a-f]{8} [0-9a-f]{8} ([0-9a-f]{8})", open(logp, errors="replace").read())
    created = [b for n, b in cmds if n == "CREATE_QP"]
    for b, o in zip(created, outs):
        qp_st[int(o, 16) & 0xffffff] = bits(b, *find(structs, "create_qp_in", "qpc.st"))
    byform = {}
    for n, b in cmds:
        f = form_of(structs, n, b, qp_st)
        if f:
            byform.setdefault(f, []).append(b)
    if len(sys.argv) > 4 and sys.argv[3] == "--emit":
        key = sys.argv[4]
        layout = {s[0]: s[1] for s in read_table(os.path.join(src, "tests/oracle/field_set_table.txt"))}.get(key)
        for p, off, w in leaves(structs, layout):
            if p not in ("opcode", "op_mod") and any(bits(b, off, w) for b in byform.get(key, [])):
                print(p, "K")
        return 0
    bad, checked, sections = [], 0, 0
    for key, layout, refs, rows in read_table(os.path.join(src, "tests/oracle/field_set_table.txt")):
        if "K" not in refs:
            continue
        sections += 1
        got = byform.get(key)
        if not got:
            bad.append(f"[{key}]: the recording has no command of this form")
            continue
        set_by_linux = {p for p, off, w in leaves(structs, layout)
                        if p not in ("opcode", "op_mod") and any(bits(b, off, w) for b in got)}
        for p, letters in rows.items():
            checked += 1
            if "K" in letters and p not in set_by_linux:
                bad.append(f"[{key}] {p}: marked K, but no recorded input of Linux's sets it")
        for p in sorted(set_by_linux):
            if "K" not in rows.get(p, set()):
                bad.append(f"[{key}] {p}: Linux set it in the recording ({len(got)} inputs), the table does not say K")
    for b in bad:
        print("field-set reference K:", b)
    print(f"field-set reference K: {sections} sections, {checked} rows checked against {len(cmds)} recorded "
          f"Linux commands, {len(bad)} disagreements")
    return 1 if bad or not sections else 0


if __name__ == "__main__":
    sys.exit(main())
