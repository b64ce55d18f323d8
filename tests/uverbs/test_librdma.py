# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Apps written for Apple's RDMA over uverbs: the librdma name, Apple's delivery, and
the out_of_buffer counter a user can read from a live process.

Runs tests/uverbs/librdma_client.c, which reaches the verbs only through dlopen() of a
library name (as MLX's JACCL does with "librdma.dylib"), on two emulated NICs on
loopback.  Environment (from tests/uverbs/CMakeLists.txt): UV_CLIENT, UV_COMPAT_DIR
(compat/ with librdma), UV_UVERBS_DIR (libuverbs), UV_UVINFO.
"""
import json
import os
import subprocess
import tempfile
import time

import pytest

CLIENT = os.environ["UV_CLIENT"]
COMPAT = os.environ["UV_COMPAT_DIR"]
UVERBS_DIR = os.environ["UV_UVERBS_DIR"]
UVINFO = os.environ.get("UV_UVINFO")


def env_for(libdir, net, **extra):
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = libdir
    env["UVERBS_DEVICES"] = f"emu:ip=127.43.{net}.2,emu:ip=127.43.{net}.3"
    env.pop("UVERBS_DELIVERY", None)
    env.update(extra)
    return env


def run_client(libdir, lib, expect, net, timeout=120, **extra):
    args = [CLIENT, "--lib", lib, "--expect", expect]
    if "rounds" in extra:
        args += ["--rounds", str(extra.pop("rounds"))]
    p = subprocess.run(args, env=env_for(libdir, net, **extra), capture_output=True, text=True,
                       timeout=timeout)
    return p


def test_librdma_name_delivers_every_message_to_a_late_receive():
    # the very name apps written for macOS dlopen, found through the library path
    p = run_client(COMPAT, "librdma.dylib", "delivered", 1)
    print(p.stdout, p.stderr)
    assert p.returncode == 0, p.stderr
    assert "15 delivered and verified, 0 lost (receiver 100 ms late)" in p.stdout


def test_plain_name_drops_the_late_message():
    p = run_client(UVERBS_DIR, "libuverbs.so", "dropped", 2, rounds=2)
    print(p.stdout, p.stderr)
    assert p.returncode == 0, p.stderr
    assert "0 delivered and verified, 2 lost" in p.stdout


def test_uverbs_delivery_variable_overrides_the_name():
    p = run_client(UVERBS_DIR, "libuverbs.so", "delivered", 3, rounds=1, UVERBS_DELIVERY="apple")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "5 delivered and verified, 0 lost" in p.stdout
    p = run_client(COMPAT, "librdma.so", "dropped", 4, rounds=1, UVERBS_DELIVERY="ibta")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 delivered and verified, 1 lost" in p.stdout


def read_counters(pid, run_dir):
    q = subprocess.run([UVINFO, "--counters", "--pid", str(pid), "--json"], capture_output=True, text=True,
                       env=dict(os.environ, UVERBS_RUN_DIR=run_dir), timeout=30)
    if q.returncode != 0:
        return None
    procs = json.loads(q.stdout)["processes"]
    return procs


@pytest.mark.skipif(not UVINFO, reason="uvinfo is built only with libpci (install-deps installs it)")
def test_dropped_messages_are_counted_and_readable_from_the_live_process():
    run_dir = tempfile.mkdtemp(prefix="uv-run-")
    env = env_for(UVERBS_DIR, 5, UVERBS_RUN_DIR=run_dir, UVERBS_LOG="debug")
    p = subprocess.Popen([CLIENT, "--lib", "libuverbs.so", "--expect", "dropped", "--rounds", "3",
                          "--hold-ms", "4000"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        # wait until the client holds, then read its counters while it lives
        line = ""
        deadline = time.time() + 60
        while "holding" not in line and time.time() < deadline:
            line = p.stdout.readline()
            assert line or p.poll() is None, p.stderr.read()
        assert "holding" in line
        best = {}
        deadline = time.time() + 3
        while time.time() < deadline:
            procs = read_counters(p.pid, run_dir)
            if procs:
                for proc in procs:
                    best[proc["device"]] = proc["port1"].get("out_of_buffer", 0)
                # the receiver (second device) dropped the 3 late messages; the sender none
                if sorted(best.values()) == [0, 3]:
                    break
            time.sleep(0.2)
        assert sorted(best.values()) == [0, 3], best
    finally:
        out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    # one debug line a second at most, naming the counter
    drops = [l for l in err.splitlines() if "out_of_buffer" in l]
    assert drops, err
    assert len(drops) <= 6, drops
    # the process is gone: its counters are no longer listed
    assert not read_counters(p.pid, run_dir)
