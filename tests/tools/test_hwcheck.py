"""hwcheck end to end on two emulated NICs in two processes: the JSON report carries the
build identity, device, firmware, PCIe section, and every step passed with verified
transfers both ways round and the requested latency samples."""
import json
import os
import subprocess

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
