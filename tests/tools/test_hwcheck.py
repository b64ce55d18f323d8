# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""hwcheck end to end on two emulated NICs in two processes: the JSON report carries the
build identity, device, firmware, PCIe section, and every step passed with verified
transfers both ways round and the requested latency samples."""
import json
import os
import signal
import subprocess

import pytest

from uvtools import BUILD, HWCHECK, read_csv


def test_emulated_run_writes_a_complete_passing_report(tmp_path):
    out = str(tmp_path / "report.json")
    p = subprocess.run(["/usr/bin/python3", HWCHECK, "--build", BUILD, "--emulated", "--iters", "300",
                        "--warmup", "30", "--verify-iters", "100", "--out", out],
                       capture_output=True, text=True, timeout=800)
    assert p.returncode == 0, p.stderr
    with open(out) as fh:
        rep = json.load(fh)
    assert rep["ok"] is True and rep["emulated"] is True
    assert rep["build"]["git_describe"] and rep["build"]["compiler"].startswith(("GNU", "Clang"))
    assert rep["firmware"] == rep["device"]["verbs"]["fw_ver"]
    assert rep["device"]["pci_id"] == "15b3:1019"
    assert isinstance(rep["pcie"], list)            # no ConnectX on this machine: an empty path list
    names = [s["step"] for s in rep["steps"]]
    assert names == ["bring-up (fwcmd adapter)", "capabilities (fwcmd caps general)", "health (fwcmd health)",
                     "ports and GIDs (uvinfo)", "loopback verified (one process)", "two-process verified, A -> B",
                     "two-process verified, B -> A", "latency 300 samples"]
    assert all(s["ok"] for s in rep["steps"])
    port = rep["device"]["verbs"]["ports"][0]
    assert port["state"] == "ACTIVE" and any(g["type"] == "RoCE v2" for g in port["gids"])
    for key in ("loopback_verified", "two_process_verified", "two_process_verified_reverse"):
        res = rep["results"][key]["results"]
        assert {(r["op"], r["size"], r["mode"]) for r in res} == {
            (o, s, m) for o in ("WRITE", "READ", "SEND") for s in (1024, 4096) for m in ("latency", "bandwidth")}
        assert all(r["verified"] is True for r in res), key
    assert rep["results"]["two_process_verified"]["processes"] == 2
    lat = rep["results"]["latency"]
    assert all(r["samples"] == 300 and r["warmup"] == 30 for r in lat["results"])
    meta, cols, rows = read_csv(rep["latency_csv"])
    assert len(rows) == 6 * 300 and meta["processes"] == "2"


def test_hardware_mode_needs_device_and_peer(tmp_path):
    p = subprocess.run(["/usr/bin/python3", HWCHECK, "--build", BUILD, "--out", str(tmp_path / "r.json")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "--device and --peer" in p.stderr


def _listeners(port):
    """Local addresses (hex, as /proc/net/tcp writes them) listening on TCP `port`."""
    found = []
    with open("/proc/net/tcp") as fh:
        for line in fh.readlines()[1:]:
            parts = line.split()
            addr, _, p = parts[1].partition(":")
            if int(p, 16) == port and parts[3] == "0A":
                found.append(addr)
    return found


def test_serve_listens_on_loopback_unless_told_otherwise(tmp_path):
    import time
    from uvtools import free_port
    port = free_port()
    srv = subprocess.Popen(["/usr/bin/python3", HWCHECK, "--build", BUILD, "--serve", "--device", "emu:ip=127.63.5.1",
                            "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not _listeners(port):
            assert srv.poll() is None, srv.communicate()[1]
            assert time.monotonic() < deadline, "hwcheck --serve never listened"
            time.sleep(0.05)
        assert _listeners(port) == ["0100007F"]           # 127.0.0.1, not 0.0.0.0
    finally:
        # hwcheck and the uvperf server it started: the process group this test made
        os.killpg(srv.pid, signal.SIGKILL)
        srv.wait()


@pytest.mark.parametrize("where", ["under-a-file", "a-directory"])
def test_an_unwritable_report_is_a_clean_error(where, tmp_path):
    out = "/proc/version/report.json" if where == "under-a-file" else str(tmp_path)
    p = subprocess.run(["/usr/bin/python3", HWCHECK, "--build", BUILD, "--emulated", "--out", out, "--quiet"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and "cannot write the report" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("args", [["--iters", "-5"], ["--iters", "x"], ["--warmup", "-1"], ["stray"]])
def test_bad_arguments_are_refused_without_a_traceback(args, tmp_path):
    p = subprocess.run(["/usr/bin/python3", HWCHECK, "--build", BUILD, "--emulated", "--out",
                        str(tmp_path / "r.json"), *args], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "Traceback" not in p.stderr and p.stderr
