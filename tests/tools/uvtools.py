# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Shared helpers of the tool tests: where the built tools are, and running uvperf as a
client/server pair on emulated NICs with every process bounded in time and killed."""
import contextlib
import json
import os
import socket
import subprocess

BUILD = os.environ.get("UVERBS_BUILD_DIR", "build")
SRC = os.environ.get("UVERBS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
UVPERF = os.environ.get("UVPERF", os.path.join(BUILD, "tools", "uvperf"))
UVINFO = os.environ.get("UVINFO", os.path.join(BUILD, "tools", "uvinfo"))
UVPLOT = os.path.join(SRC, "tools", "uvplot")
HWCHECK = os.path.join(SRC, "tools", "hwcheck")
TIMEOUT = 240


def free_port():
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env_with(devices=None, **extra):
    e = dict(os.environ)
    e.pop("UVERBS_DEVICES", None)
    if devices is not None:
        e["UVERBS_DEVICES"] = devices
    e.update(extra)
    return e


def uvperf(*args, devices=None, timeout=TIMEOUT):
    p = subprocess.run([UVPERF, *args], capture_output=True, text=True, timeout=timeout, env=env_with(devices))
    return p.returncode, p.stdout, p.stderr


def uvperf_pair(server_ip, client_ip, client_args, server_args=(), timeout=TIMEOUT):
    """Server on emu:ip=server_ip, client on emu:ip=client_ip, two processes; returns
    (client rc, stdout, stderr, server rc, server stderr)."""
    port = free_port()
    srv = subprocess.Popen([UVPERF, "--server", "--port", str(port), *server_args],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=env_with("emu:ip=" + server_ip))
    try:
        c = subprocess.run([UVPERF, "--client", "127.0.0.1", "--port", str(port), *client_args],
                           capture_output=True, text=True, timeout=timeout, env=env_with("emu:ip=" + client_ip))
        try:
            _, serr = srv.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            srv.kill()
            _, serr = srv.communicate()
        return c.returncode, c.stdout, c.stderr, srv.returncode, serr
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait()


def parse_json(out):
    return json.loads(out)


def read_csv(path):
    meta, rows, cols = {}, [], None
    with open(path) as fh:
        for line in fh:
            line = line.rstrip("\n")
            if line.startswith("#"):
                if ":" in line:
                    k, v = line[1:].split(":", 1)
                    meta[k.strip()] = v.strip()
            elif cols is None:
                cols = line.split(",")
            elif line:
                rows.append(dict(zip(cols, line.split(","))))
    return meta, cols, rows
