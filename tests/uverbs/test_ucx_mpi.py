# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""UCX and Open MPI, as Debian ships them, over libuverbs.so preloaded.

Debian's ucx-utils 1.13.1 (ucx_info, ucx_perftest) and openmpi-bin 4.1.4 (mpirun with
pml ucx) run unmodified with LD_PRELOAD=<libuverbs.so>, no /dev/infiniband node and no
UCX setting beyond choosing the transport and device (UCX_TLS, UCX_NET_DEVICES).  UCX
drops a device whose /dev/infiniband/<dev_name> is not a readable and writable
character device, and reads each GID's RoCE version from sysfs; the library answers
both for its own devices (uverbs/kernel_paths_linux.c).

Server and client (or the two MPI ranks) are separate processes, each with its own
emulated ConnectX on its own loopback address (UVERBS_DEVICES=emu:ip=127.N.B.10 / .11),
so every byte crosses RoCE v2 over UDP between two emulated NICs.  Every process runs
in its own session, is bounded in time and killed at the end.  The tests assert on
exit statuses, the figures the tools print, the transport UCP chose (its info log) and,
for MPI, data verified by the program itself; a missing tool is a failure, not a skip.

Environment (set by CMake): UVERBS_LIB (the regular build's libuverbs.so),
UVERBS_TEST_NET (the N of 127.N.x.y, one per ctest entry), UVERBS_MPI_SRC (the MPI
program, tests/uverbs/mpi_pingpong.c) and UVERBS_WORK_DIR (where it is compiled).
"""
import os
import re
import shutil
import subprocess
import time

import pytest

from procnet import tcp_listening

LIB = os.environ.get("UVERBS_LIB", "")
TIMEOUT = 120          # seconds for one tool run; a loaded 2-CPU machine needs ~10
LAT_ITERS = 300
BW_ITERS = 200

_next = {"net": int(os.environ.get("UVERBS_TEST_NET", 46)),
         "b": 9 + (os.getpid() % 9) * 10, "port": 23000 + (os.getpid() % 300) * 10}


def _alloc():
    _next["b"] = _next["b"] + 1 if _next["b"] < 99 else 10
    _next["port"] += 1
    base = "127.%d.%d." % (_next["net"], _next["b"])
    return base, _next["port"]


@pytest.fixture(scope="session")
def lib():
    assert LIB, "UVERBS_LIB is not set (the CMake test entry sets it)"
    assert os.path.isfile(LIB), "libuverbs.so not found at %s: build the regular tree first" % LIB
    return LIB


def _tool(name, pkg):
    path = shutil.which(name)
    assert path, "%s is not installed (Debian package %s; tools/install-deps)" % (name, pkg)
    return path


def _env(lib, ip, tls, log=None):
    env = dict(os.environ)
    env.update({"LD_PRELOAD": lib, "UVERBS_DEVICES": "emu:ip=%s" % ip,
                "UCX_TLS": tls, "UCX_NET_DEVICES": "uverbs0:1"})
    env.pop("UVERBS_LOG", None)
    if log:
        env["UCX_LOG_LEVEL"] = log
    return env



def _kill(procs):
    for p in procs:
        if p is not None and p.poll() is None:
            os.killpg(p.pid, 9)
            p.wait()


# ------------------------------------------------------------------ ucx_info

def test_ucx_info_lists_both_verbs_transports_on_our_device(lib):
    base, _ = _alloc()
    out = subprocess.run([_tool("ucx_info", "ucx-utils"), "-d"], env=_env(lib, base + "10", "all"),
                         capture_output=True, text=True, timeout=TIMEOUT, start_new_session=True)
    assert out.returncode == 0, out.stdout + out.stderr
    # "# Memory domain: uverbs0", then per transport "# Transport: X" / "# Device: uverbs0:1"
    assert re.search(r"^# Memory domain: uverbs0$", out.stdout, re.M), out.stdout
    pairs = re.findall(r"#\s+Transport: (\S+)\n#\s+Device: (\S+)", out.stdout)
    ours = sorted(t for t, d in pairs if d == "uverbs0:1")
    print("ucx_info -d: transports on uverbs0:1:", ", ".join(ours))
    assert ours == ["rc_verbs", "ud_verbs"], pairs


# ------------------------------------------------------------------ ucx_perftest

# One result row of ucx_perftest -f: iterations, latency (50th percentile, average,
# overall; us), bandwidth (average, overall; MB/s), message rate (average, overall).
_ROW = re.compile(r"^\s*(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+(\d+)\s*$", re.M)


def perftest(lib, tls, args, log=None):
    """ucx_perftest server and client; (client rc, client output, server rc, server output)."""
    exe = _tool("ucx_perftest", "ucx-utils")
    base, port = _alloc()
    srv = subprocess.Popen([exe, "-p", str(port)], env=_env(lib, base + "10", tls, log),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           start_new_session=True)
    cli = None
    try:
        deadline = time.time() + 30
        while not tcp_listening(port):
            assert srv.poll() is None, "server exited early:\n" + srv.communicate()[0]
            assert time.time() < deadline, "server never listened on port %d" % port
            time.sleep(0.05)
        cli = subprocess.Popen([exe, "127.0.0.1", "-p", str(port), "-f"] + list(args),
                               env=_env(lib, base + "11", tls, log), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
        cout, _ = cli.communicate(timeout=TIMEOUT)
        sout, _ = srv.communicate(timeout=30)
        return cli.returncode, cout, srv.returncode, sout
    finally:
        _kill((cli, srv))


def run_ok(lib, tls, test, iters, extra=(), log=None):
    """Run one test that must pass; returns its result row as floats."""
    args = ["-t", test, "-n", str(iters), "-w", str(max(10, iters // 10))] + list(extra)
    crc, cout, src, sout = perftest(lib, tls, args, log)
    assert crc == 0 and src == 0, "%s over %s failed: client rc %s, server rc %s\n--- client\n%s\n--- server\n%s" % (
        test, tls, crc, src, cout, sout)
    rows = _ROW.findall(cout)
    assert rows, "no result row in:\n" + cout
    row = [float(x) for x in rows[-1]]
    assert row[0] == iters, "ran %d iterations, asked %d" % (row[0], iters)
    size = next(iter(re.findall(r"-s (\d+)", " ".join(extra))), "8")
    print("ucx_perftest %-8s %-9s %6s B x %d: latency 50%%ile %.2f us, average %.2f us; "
          "bandwidth %.2f MB/s; %d msg/s" % (tls, test, size, iters, row[1], row[2], row[5], row[7]))
    return row, cout


def _lat(lib, tls, tl):
    row, _ = run_ok(lib, tls, "am_lat", LAT_ITERS, ["-x", tl, "-d", "uverbs0:1"])
    assert 0 < row[1] < 1e6 and 0 < row[2] < 1e6


def _tag_lat(lib, tls, tl):
    row, out = run_ok(lib, tls, "tag_lat", LAT_ITERS, log="info")
    assert 0 < row[1] < 1e6
    # UCP's endpoint configuration names the transport its tag lane uses
    lanes = re.findall(r"ep_cfg\[\d+\]: tag\(([^)]*)\)", out)
    assert lanes and all(("%s/uverbs0:1" % tl) in l for l in lanes), "tag lanes: %s\n%s" % (lanes, out)


def test_ucx_perftest_rc_verbs_am_lat(lib):
    _lat(lib, "rc_verbs", "rc_verbs")


def test_ucx_perftest_rc_verbs_put_bw(lib):
    # zero-copy 64 KiB RDMA WRITEs (short puts stop at the inline size)
    row, _ = run_ok(lib, "rc_verbs", "put_bw", BW_ITERS, ["-x", "rc_verbs", "-d", "uverbs0:1",
                                                         "-D", "zcopy", "-s", "65536"])
    assert row[4] > 0 and row[5] > 0


def test_ucx_perftest_rc_verbs_tag_lat(lib):
    # rc_v: rc_verbs with ud_verbs only for wire-up (UCP needs a connectionless
    # transport to exchange the RC addresses; UCX_TLS=rc_verbs alone is "unreachable")
    _tag_lat(lib, "rc_v", "rc_verbs")


def test_ucx_perftest_ud_verbs_am_lat(lib):
    _lat(lib, "ud_verbs", "ud_verbs")


def test_ucx_perftest_ud_verbs_am_bw(lib):
    # UD has no RDMA, so its bandwidth test is active messages: bcopy sends of
    # 1000 B (a UD message is one packet; the port MTU is 1024, as RoCE over a 1500 B
    # Ethernet MTU)
    row, _ = run_ok(lib, "ud_verbs", "am_bw", BW_ITERS, ["-x", "ud_verbs", "-d", "uverbs0:1",
                                                        "-D", "bcopy", "-s", "1000"])
    assert row[4] > 0 and row[5] > 0


def test_ucx_perftest_ud_verbs_tag_lat(lib):
    _tag_lat(lib, "ud_verbs", "ud_verbs")


def test_ucx_perftest_ud_verbs_put_bw_fails_naming_the_operation(lib):
    """What cannot work ends with a clear error, not a hang: UD has no RDMA WRITE."""
    crc, cout, src, sout = perftest(lib, "ud_verbs", ["-t", "put_bw", "-n", "10", "-x", "ud_verbs",
                                                      "-d", "uverbs0:1"])
    assert crc != 0, cout
    assert "ud_verbs/uverbs0:1 does not support operation put" in cout, cout


# ------------------------------------------------------------------ Open MPI

MPI_WRAPPER = """#!/bin/sh
# Each rank its own emulated NIC: Open MPI gives every rank OMPI_COMM_WORLD_RANK.
UVERBS_DEVICES="emu:ip=${UV_RANK_NET}$((10 + OMPI_COMM_WORLD_RANK))"
LD_PRELOAD="${UV_RANK_LIB}"
export UVERBS_DEVICES LD_PRELOAD
exec "$@"
"""


@pytest.fixture(scope="module")
def mpi_program():
    src = os.environ.get("UVERBS_MPI_SRC", "")
    work = os.environ.get("UVERBS_WORK_DIR", "")
    assert src and work, "UVERBS_MPI_SRC / UVERBS_WORK_DIR not set (the CMake test entry sets them)"
    os.makedirs(work, exist_ok=True)
    exe = os.path.join(work, "mpi_pingpong")
    out = subprocess.run([_tool("mpicc", "libopenmpi-dev"), "-O2", "-Wall", "-Wextra", "-Werror",
                          "-o", exe, src], capture_output=True, text=True, timeout=TIMEOUT)
    assert out.returncode == 0, "mpicc failed:\n" + out.stdout + out.stderr
    wrapper = os.path.join(work, "uverbs-rank")
    with open(wrapper, "w") as f:
        f.write(MPI_WRAPPER)
    os.chmod(wrapper, 0o755)
    return exe, wrapper


def test_mpirun_pml_ucx_pingpong_and_allreduce_verify_data(lib, mpi_program):
    exe, wrapper = mpi_program
    base, _ = _alloc()
    env = dict(os.environ)
    env.pop("UVERBS_LOG", None)
    env.update({"UV_RANK_NET": base, "UV_RANK_LIB": lib, "UCX_TLS": "self,rc_v",
                "UCX_NET_DEVICES": "uverbs0:1", "UCX_LOG_LEVEL": "info"})
    # pml ucx named: Open MPI picks it by itself only for devices named mlx* (its
    # pml_ucx_devices), and ours are uverbsN.
    cmd = [_tool("mpirun", "openmpi-bin"), "--allow-run-as-root", "--oversubscribe", "-np", "2",
           "--mca", "pml", "ucx", wrapper, exe, "20", "100000"]
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=TIMEOUT)
    finally:
        _kill((p,))
    for line in out.splitlines():
        if line.startswith("pingpong") or line.startswith("verified"):
            print("mpirun:", line)
    assert p.returncode == 0, "mpirun failed (rc %s):\n%s" % (p.returncode, out)
    assert "verified: pingpong 4 sizes x 20, allreduce 100000 ints" in out, out
    # both ranks' remote endpoint carried tags over rc_verbs on our device. UCX's log
    # prefix is [host:pid:thread]; the thread field is UCX's own thread name, which is
    # not always a number ("[vm:2642 :a]" from a progress thread).
    lanes = re.findall(r"\[[^\]\s:]+:(\d+)\s*:[^\]]*\].*ep_cfg\[\d+\]: tag\(([^)]*)\)", out)
    remote = {pid for pid, l in lanes if l.strip() == "rc_verbs/uverbs0:1"}
    assert len(remote) == 2, "tag lanes per rank: %s\n%s" % (lanes, out)


# Open MPI 4.1.4 over Debian's PMIx 4.2.2 loses help messages that ranks relay to
# mpirun: a rank's opal_show_help() goes to mpirun as a PMIx log request
# (orte/util/show_help.c, orte_show_help_norender(): opal_pmix.log), mpirun's PMIx
# server thread hands it to the ORTE side (orte/orted/pmix/pmix_server_gen.c,
# pmix_server_log_fn()), and orte_show_help_recv() often fails to unpack it: mpirun
# then prints "ORTE_ERROR_LOG: Data unpack would read past end of buffer in file
# ../../../orte/util/show_help.c" instead of the message (upstream
# open-mpi/ompi#8356).  It needs neither this library nor a device: with no
# LD_PRELOAD, `mpirun -np 2 --mca pml ob1 --mca btl self` on the loaded 2-CPU test
# machine lost its "unreachable" messages in 24 of 30 runs.  A run whose help message
# is missing AND whose mpirun logged that unpack failure is run again, up to
# OMPI_HELP_ATTEMPTS times; anything else missing fails at once.
OMPI_HELP_ATTEMPTS = 8


def _ompi_lost_help(out):
    return re.search(r"ORTE_ERROR_LOG: .* in file \S*orte/util/show_help\.c", out) is not None


def test_openib_btl_finds_our_port_and_stops_at_its_only_connection_manager(lib, mpi_program):
    """Open MPI 4.1's openib BTL over the preloaded library: it stats
    /sys/class/infiniband (answered by kernel_paths_linux.c) and reaches our device and
    port, then stops where it stops on any RoCE port with Debian's build: the only
    connection manager (CPC) built in is udcm, and udcm takes InfiniBand ports only
    (opal/mca/btl/openib/connect/btl_openib_connect_udcm.c, udcm_component_query();
    rdmacm, the CPC for RoCE, is not built: ompi_info lists "valid values: udcm").
    Without the sysfs answer it gave up before opening a device, without a word."""
    exe, wrapper = mpi_program
    base, _ = _alloc()
    env = dict(os.environ)
    env.pop("UVERBS_LOG", None)
    env.update({"UV_RANK_NET": base, "UV_RANK_LIB": lib})
    cmd = [_tool("mpirun", "openmpi-bin"), "--allow-run-as-root", "--oversubscribe", "-np", "2",
           "--mca", "pml", "ob1", "--mca", "btl", "openib,self", "--mca", "btl_base_verbose", "100",
           "--mca", "btl_openib_cpc_include", "udcm", wrapper, exe, "2", "10"]
    lost = []
    for attempt in range(OMPI_HELP_ATTEMPTS):
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)
        try:
            out, _ = p.communicate(timeout=TIMEOUT)
        finally:
            _kill((p,))
        # the device was found (the sysfs check passed): the rank's own output, which
        # reaches mpirun through its I/O forwarding, not through show_help
        assert "Checking distance from this process to device=uverbs0" in out, out
        assert p.returncode != 0, out
        helped = re.search(r"Local device:\s+uverbs0", out)
        if helped or not _ompi_lost_help(out):
            break
        lost.append(out)
    # the port was reached (the INI file matched) and no CPC takes a RoCE port: openib
    # is disabled there, and MPI_Init has no BTL.  Open MPI's help message saying so
    # crossed mpirun's show_help relay in one of OMPI_HELP_ATTEMPTS runs, or every run
    # lost it (then the last run's output is shown).
    assert helped, "the openib help message was lost by mpirun in all %d runs:\n%s" % (len(lost), out)
    assert re.search(r"Local port:\s+1", out), out
    assert re.search(r"CPCs attempted:\s+udcm", out), out
    print("\nopenib: reaches uverbs0 port 1, stops at CPC selection (udcm: InfiniBand only)%s" %
          ("; mpirun lost the help message in %d earlier run(s) (Open MPI's show_help relay)" % len(lost)
           if lost else ""))


def test_mtl_ofi_over_libfabrics_verbs_provider_verifies_data(lib, mpi_program):
    """Open MPI over libfabric (pml cm, mtl ofi) with the verbs provider's RDM endpoint
    (verbs;ofi_rxd, on our UD domain uverbs0-dgram): ping-pong and all-reduce check
    their data.  The provider is named: left to choose, Open MPI may take tcp."""
    exe, wrapper = mpi_program
    base, _ = _alloc()
    env = dict(os.environ)
    env.pop("UVERBS_LOG", None)
    env.update({"UV_RANK_NET": base, "UV_RANK_LIB": lib})
    cmd = [_tool("mpirun", "openmpi-bin"), "--allow-run-as-root", "--oversubscribe", "-np", "2",
           "--mca", "pml", "cm", "--mca", "mtl", "ofi", "--mca", "mtl_ofi_provider_include", "verbs;ofi_rxd",
           "--mca", "mtl_base_verbose", "100", wrapper, exe, "5", "10000"]
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=TIMEOUT)
    finally:
        _kill((p,))
    for line in out.splitlines():
        if line.startswith("pingpong") or line.startswith("verified"):
            print("mtl ofi:", line)
    assert p.returncode == 0, "mpirun failed (rc %s):\n%s" % (p.returncode, out)
    assert out.count("mtl:ofi:provider: uverbs0-dgram") == 2, out
    assert "verified: pingpong 4 sizes x 5, allreduce 10000 ints" in out, out
