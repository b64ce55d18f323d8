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
                     "ports and GIDs (uvinfo)", "write combining (fwcmd wctest)", "loopback verified (one process)", "two-process verified, A -> B",
                     "two-process verified, B -> A", "latency 300 samples"]
    assert all(s["ok"] for s in rep["steps"])
    assert rep["blueflame"] == "on"                 # the emulator takes whole bursts
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


def test_torn_blueflame_turns_blueflame_off_for_the_rest_of_the_run(tmp_path):
    # fwcmd wctest sees a device that tears BlueFlame bursts (emu: bf=torn, through a
    # wrapper hwcheck takes as its fwcmd); hwcheck must then run its traffic with
    # MLX5_SHUT_UP_BF=1 (doorbells only), and every transfer must still verify
    fwcmd = os.environ.get("FWCMD", os.path.join(BUILD, "firmware-cmd", "fwcmd", "fwcmd"))
    wrap = tmp_path / "fwcmd-torn"
    wrap.write_text('#!/bin/sh\n'
                    'case " $* " in *" wctest "*) exec "%s" --device "$2,bf=torn" "$3" wctest;; esac\n'
                    'exec "%s" "$@"\n' % (fwcmd, fwcmd))
    wrap.chmod(0o755)
    out = str(tmp_path / "report.json")
    env = dict(os.environ, FWCMD=str(wrap))
    env.pop("MLX5_SHUT_UP_BF", None)
    p = subprocess.run(["/usr/bin/python3", HWCHECK, "--build", BUILD, "--emulated", "--iters", "20",
                        "--warmup", "5", "--verify-iters", "20", "--out", out],
                       capture_output=True, text=True, timeout=800, env=env)
    assert p.returncode == 0, p.stderr
    with open(out) as fh:
        rep = json.load(fh)
    wc = [s for s in rep["steps"] if s["step"] == "write combining (fwcmd wctest)"][0]
    assert wc["ok"] and wc["data"]["result"] == "not_supported", wc
    assert wc["data"]["first_cqe_wqe_counter"] == 254
    assert rep["blueflame"].startswith("off: write combining failed"), rep["blueflame"]
    assert rep["ok"] is True and all(s["ok"] for s in rep["steps"])


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


def _hwcheck_module():
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("hwcheck_mod", HWCHECK)
    spec = importlib.util.spec_from_loader("hwcheck_mod", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def test_owner_check_names_the_driver_that_holds_the_function():
    """Step 0 on hardware: kext: needs the uvshim kext to own the function (macOS ships
    its own ConnectX driver, AppleEthernetMLX5), vfio: needs vfio-pci; otherwise the
    step fails with uvinfo's sentence saying what to do."""
    m = _hwcheck_module()
    apple = {"pci": [{"bdf": "0000:09:00.0", "vendor_id": 0x15b3, "driver": "AppleEthernetMLX5",
                      "kext_ready": False,
                      "kext_status": "owned by AppleEthernetMLX5, an Ethernet driver (Apple's ConnectX driver)"}]}
    ok, why = m.owner_check(apple, "kext:0")
    assert not ok and "AppleEthernetMLX5" in why
    ours = {"pci": [{"bdf": "0000:09:00.0", "vendor_id": 0x15b3, "driver": "org_uverbs_UvShim",
                     "kext_ready": True, "kext_status": "ready"}]}
    assert m.owner_check(ours, "kext:0")[0]
    linux = {"pci": [{"bdf": "0000:03:00.0", "vendor_id": 0x15b3, "driver": "mlx5_core", "vfio_ready": False,
                      "vfio_status": "vfio: 0000:03:00.0 is bound to mlx5_core, not vfio-pci: run tools/vfio-bind"}]}
    ok, why = m.owner_check(linux, "vfio:0000:03:00.0")
    assert not ok and "mlx5_core" in why and "vfio-bind" in why
    linux["pci"][0].update(driver="vfio-pci", vfio_ready=True, vfio_status="ready")
    assert m.owner_check(linux, "vfio:03:00.0")[0]
    assert not m.owner_check({"pci": []}, "kext:0")[0]
