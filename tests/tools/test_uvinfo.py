# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""uvinfo's PCIe path reader on config-space dumps built here (tests/tools/pcidump.py), read
through libpci's dump access method, and on this machine's own functions.  lspci decodes
the same dumps as the independent oracle for speeds, widths, MPS and MRRS."""
import json
import os
import re
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import pcidump  # noqa: E402

UVINFO = os.environ.get("UVINFO", "uvinfo")
GT = {1: "2.5GT/s", 2: "5GT/s", 3: "8GT/s", 4: "16GT/s", 5: "32GT/s", 6: "64GT/s"}


def run(*args, env=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run([UVINFO, *args], capture_output=True, text=True, timeout=120, env=e)
    return p.returncode, p.stdout, p.stderr


@pytest.fixture(scope="module")
def tb_dump(tmp_path_factory):
    return pcidump.write(str(tmp_path_factory.mktemp("pci") / "thunderbolt.dump"), pcidump.thunderbolt_chain())


@pytest.fixture(scope="module")
def slot_dump(tmp_path_factory):
    return pcidump.write(str(tmp_path_factory.mktemp("pci") / "slot.dump"), pcidump.server_slot_chain())


def dump_args(path):
    return ["--no-devices", "-A", "dump", "-O", "dump.name=" + path]


def lspci_view(dump):
    """{bdf: {cap_gen, cap_width, gen, width, mps, mps_cap, mrrs}} as lspci decodes them."""
    out = subprocess.run(["lspci", "-F", dump, "-vv"], capture_output=True, text=True, timeout=60).stdout
    rev = {v: k for k, v in GT.items()}
    view, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) ", line)
        if m:
            cur = view.setdefault("0000:" + m.group(1), {})
            continue
        if cur is None:
            continue
        if m := re.search(r"LnkCap:.*Speed ([\d.]+GT/s), Width x(\d+)", line):
            cur["cap_gen"], cur["cap_width"] = rev[m.group(1)], int(m.group(2))
        elif m := re.search(r"LnkSta:\s+Speed ([\d.]+GT/s).*Width x(\d+)", line):
            cur["gen"], cur["width"] = rev[m.group(1)], int(m.group(2))
        elif m := re.search(r"DevCap:\s+MaxPayload (\d+) bytes", line):
            cur["mps_cap"] = int(m.group(1))
        elif m := re.search(r"^\s+MaxPayload (\d+) bytes, MaxReadReq (\d+) bytes", line):
            cur["mps"], cur["mrrs"] = int(m.group(1)), int(m.group(2))
    return view


def test_thunderbolt_path_text_has_one_line_per_hop_root_port_first(tb_dump):
    rc, out, err = run(*dump_args(tb_dump))
    assert rc == 0, err
    block = out.split("0000:03:00.0  15b3:1017  ConnectX-5", 1)[1].split("0000:03:00.1", 1)[0]
    hops = re.findall(r"^\s+(0000:[0-9a-f:.]+)\s+([0-9a-f]{4}:[0-9a-f]{4})\s+(.+?)\s+link (Gen\d x\d+) \(([\d.]+ GT/s)\), "
                      r"capable (Gen\d x\d+) .*MPS (\d+) B \(capable (\d+) B\)\s+MRRS (\d+) B$", block, re.M)
    assert [h[0] for h in hops] == ["0000:00:1c.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0"]
    assert [h[2] for h in hops] == ["root port", "upstream port", "downstream port", "endpoint"]
    assert [h[3] for h in hops] == ["Gen4 x4", "Gen4 x4", "Gen4 x4", "Gen3 x4"]
    assert hops[0][4] == "16 GT/s" and hops[3][4] == "8 GT/s"
    assert hops[3][5] == "Gen3 x16"
    assert all(h[6] == "128" for h in hops)
    assert hops[3][7] == "512" and hops[3][8] == "512"


def test_thunderbolt_tunnel_is_warned_narrower_and_small_payload(tb_dump):
    rc, out, _ = run(*dump_args(tb_dump))
    block = out.split("0000:03:00.0  15b3:1017  ConnectX-5", 1)[1].split("0000:03:00.1", 1)[0]
    # The warning follows the hop it concerns.
    assert re.search(r"0000:00:1c\.0 .*\n\s+warning: x4 link is narrower than the NIC's x16", block)
    assert "warning: max payload 128 B is below the NIC's 512 B" in block
    assert "slower" not in block            # Gen4 tunnel is faster per lane than the Gen3 NIC
    assert re.search(r"path limit: 31\.5 Gbit/s per direction at 0000:03:00\.0 \(Gen3 x4", block)


def test_thunderbolt_json_matches_lspci_decoding_of_the_same_dump(tb_dump):
    rc, out, err = run(*dump_args(tb_dump), "--json")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["pci_access"] == "dump" and doc["pci_functions_seen"] == 6
    nics = {f["bdf"]: f for f in doc["pci"]}
    assert sorted(nics) == ["0000:03:00.0", "0000:03:00.1"]
    nic = nics["0000:03:00.0"]
    assert nic["model"] == "ConnectX-5" and nic["vendor_id"] == 0x15b3 and nic["device_id"] == 0x1017
    assert nic["driver"] is None and nic["vfio_ready"] is None   # no sysfs behind a dump
    oracle = lspci_view(tb_dump)
    path = nic["path"]
    assert [h["bdf"] for h in path] == ["0000:00:1c.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0"]
    for hop in path:
        o = oracle[hop["bdf"]]
        assert (hop["link_gen"], hop["link_width"]) == (o["gen"], o["width"]), hop["bdf"]
        assert (hop["cap_gen"], hop["cap_width"]) == (o["cap_gen"], o["cap_width"]), hop["bdf"]
        assert (hop["mps"], hop["mps_cap"], hop["mrrs"]) == (o["mps"], o["mps_cap"], o["mrrs"]), hop["bdf"]
        assert "narrower" in hop["warnings"] and "small_mps" in hop["warnings"]
        assert "slower" not in hop["warnings"]
    assert path[-1]["degraded"] is True and path[0]["degraded"] is False
    assert abs(nic["path_limit_gbps"] - 4 * 8 * 128 / 130) < 0.01
    assert nic["path_limit_at"] == "0000:03:00.0"


def test_full_width_slot_has_no_warning(slot_dump):
    rc, out, err = run(*dump_args(slot_dump), "--json")
    assert rc == 0, err
    nic = json.loads(out)["pci"][0]
    assert [h["bdf"] for h in nic["path"]] == ["0000:00:01.0", "0000:01:00.0"]
    assert all(h["warnings"] == [] for h in nic["path"])
    assert (nic["path"][1]["link_gen"], nic["path"][1]["link_width"], nic["path"][1]["mps"]) == (3, 16, 512)
    assert nic["path"][1]["mrrs"] == 4096
    rc, text, _ = run(*dump_args(slot_dump))
    assert "warning" not in text


def test_slower_hop_is_warned(tmp_path):
    chain = pcidump.server_slot_chain()
    chain[0].cur = (2, 16)                   # root port trained at Gen2
    dump = pcidump.write(str(tmp_path / "gen2.dump"), chain)
    rc, out, _ = run(*dump_args(dump))
    assert rc == 0
    assert re.search(r"0000:00:01\.0 .*link Gen2 x16.*\n\s+warning: 5 GT/s link is slower than the NIC's 8 GT/s", out)


def test_missing_dump_is_a_clear_error_not_a_crash(tmp_path):
    rc, out, err = run(*dump_args(str(tmp_path / "absent.dump")))
    assert rc == 1  # a runtime error (tools/common/cli.h)
    assert "cannot open dump" in err and "absent.dump" in err


def test_unknown_access_method_is_refused():
    rc, _, err = run("--no-devices", "-A", "no-such-method")
    assert rc == 1 and "no access method" in err


def test_this_machine_functions_are_all_seen_and_paths_agree_with_lspci():
    listing = subprocess.run(["lspci", "-D", "-n"], capture_output=True, text=True, timeout=60).stdout.split("\n")
    bdfs = [l.split()[0] for l in listing if l.strip()]
    args = ["--no-devices", "--json"]
    for b in bdfs[:16]:
        args += ["--path", b]
    rc, out, err = run(*args)
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["pci_functions_seen"] == len(bdfs)
    seen = {f["bdf"]: f for f in doc["pci"]}
    assert set(bdfs[:16]) <= set(seen)
    lsv = subprocess.run(["lspci", "-D", "-vv"], capture_output=True, text=True, timeout=60).stdout
    for b in bdfs[:16]:
        f = seen[b]
        assert f["path"][-1]["bdf"] == b
        # Where lspci sees a PCIe link on this machine, uvinfo reports the same one.
        m = re.search(re.escape(b) + r" .*?(?:\n\t.*)*?LnkSta:\s+Speed ([\d.]+GT/s).*?Width x(\d+)", lsv)
        if m and f["path"][-1]["pcie"]:
            assert GT[f["path"][-1]["link_gen"]] == m.group(1)
            assert f["path"][-1]["link_width"] == int(m.group(2))


def test_an_extra_argument_is_refused_by_name():
    rc, out, err = run("--no-pci", "--no-devices", "stray")
    assert rc == 2 and "unexpected argument 'stray'" in err


@pytest.mark.parametrize("pid", ["-1", "0", " 5", "5x", "99999999999999999999"])
def test_a_pid_that_is_not_a_process_id_is_refused(pid):
    rc, out, err = run("--counters", "--pid", pid)
    assert rc == 2 and "not a process id" in err


def test_output_that_cannot_be_written_exits_1():
    e = dict(os.environ)
    e["UVERBS_DEVICES"] = "emu:ip=127.63.4.1"
    with open("/dev/full", "w") as full:
        p = subprocess.run([UVINFO, "--no-pci"], stdout=full, stderr=subprocess.PIPE, text=True, timeout=120, env=e)
    assert p.returncode == 1 and "cannot write the output" in p.stderr
