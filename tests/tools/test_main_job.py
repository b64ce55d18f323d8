# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""The quick start's main job (tools/main-job) on two emulated NICs: latency one message
at a time, and bandwidth measured as ib_write_bw does -- 64 KiB messages, 64 in flight on
each of 4 QPs -- with the depth and QPs printed next to every figure."""
import os
import re
import subprocess

from uvtools import BUILD, SRC, env_with


def test_main_job_measures_bandwidth_with_many_messages_in_flight_on_several_qps():
    env = env_with(None, UVERBS_SERVER_DEVICE="emu:ip=127.63.8.1", UVERBS_CLIENT_DEVICE="emu:ip=127.63.8.2",
                   MAIN_JOB_ITERS="50", MAIN_JOB_WARMUP="5", MAIN_JOB_BW_ITERS="64",
                   MAIN_JOB_BASELINE_ITERS="100", MAIN_JOB_APPS_ITERS="200")
    p = subprocess.run([os.path.join(SRC, "tools", "main-job"), os.path.abspath(BUILD)], capture_output=True,
                       text=True, timeout=500, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout
    # jumbo ports (UVERBS_PORT_MTU=9000): a 4 KiB message is one packet, not four
    assert re.search(r"^RC, MTU 4096,", out, re.M), out
    lat = re.findall(r"^(WRITE|READ|SEND)\s+(1024|4096)\s+50\s+.*\s+yes$", out, re.M)
    assert len(lat) == 6, out
    bw = re.findall(r"^(WRITE|READ|SEND)\s+65536\s+4\s+64\s+256\s+[\d.]+\s+([\d.]+)\s+(\d+)\s+yes$", out, re.M)
    assert [b[0] for b in bw] == ["WRITE", "READ", "SEND"], out
    assert all(float(b[1]) > 0 and int(b[2]) > 0 for b in bw)
    # nothing at queue depth 1 is reported in Gbit/s
    assert not re.search(r"^(WRITE|READ|SEND)\s+\d+\s+\d+\s+1\s+\d+\s+[\d.]+\s+[\d.]+\s", out, re.M)
    # the machine's own limit beside it: one gate line per figure, each with its UDP
    # baseline from the same run, and the raw samples of both for the CDF
    gates = re.findall(r"^(WRITE ping-pong (?:8|4096) B median)\s+[\d.]+\s+[\d.]+\s+UDP ping-pong median\s+[\d.]+x",
                       out, re.M)
    assert len(gates) == 2, out
    assert re.search(r"^WRITE bandwidth 64 KiB, MB/s\s+[\d.]+\s+[\d.]+\s+UDP stream goodput", out, re.M), out
    # ... and the applications' figures: every gate line ran (none "FAILED TO RUN"),
    # an application figure among them (issue 32)
    apps = re.findall(r"^(ib_write_lat 2 B|ib_write_bw 64 KiB MB/s|ucx_perftest ucp_get 8 B|RPC pattern .*?|"
                      r"all-reduce 1 KiB .*?|ibv_open_device, ms|empty ibv_poll_cq, ns \(mean\))\s+[\d.]+\s", out, re.M)
    assert len(apps) == 7, out
    assert "FAILED TO RUN" not in out, out
    with open(os.path.join(BUILD, "main-job-vs-udp.csv")) as f:
        rows = [line.split(",") for line in f if line[0] != "#" and not line.startswith("op,")]
    for op in ("WRITE", "UDP"):
        for size in ("8", "4096"):
            assert sum(1 for r in rows if r[0] == op and r[1] == size) == 100, (op, size)


def test_main_job_copy_takes_guarded_or_syscall_and_refuses_anything_else():
    env = env_with(None, MAIN_JOB_COPY="memcpy")
    p = subprocess.run([os.path.join(SRC, "tools", "main-job"), os.path.abspath(BUILD)], capture_output=True,
                       text=True, timeout=500, env=env)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "MAIN_JOB_COPY must be guarded or syscall" in p.stderr, p.stderr


def test_bench_e2e_copy_syscall_opens_both_nics_with_copy_syscall(tmp_path):
    csv = tmp_path / "e2e.csv"
    p = subprocess.run([os.path.join(BUILD, "tools", "uv_bench_e2e"), "--copy", "syscall", "--iters", "100",
                        "--warmup", "0", "--bw-iters", "1", "--csv", str(csv)], capture_output=True, text=True,
                       timeout=300, env=env_with(None, UVERBS_LOG="info"))
    assert p.returncode == 0, p.stdout + p.stderr
    # each emulated NIC says at its open how it copies registered memory (hw/emu/device.c)
    assert len(re.findall(r"ConnectX-5 Ex emulated, .*, copy syscall$", p.stderr, re.M)) == 2, p.stderr
    assert "copy guarded" not in p.stderr, p.stderr
    assert "# device: emulated ConnectX (emu:copy=syscall)\n" in csv.read_text()
    bad = subprocess.run([os.path.join(BUILD, "tools", "uv_bench_e2e"), "--copy", "memcpy"], capture_output=True,
                         text=True, timeout=60, env=env_with(None))
    assert bad.returncode != 0 and "--copy: 'memcpy' is not guarded or syscall" in bad.stderr, bad.stderr
