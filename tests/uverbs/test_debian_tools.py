# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Debian's unmodified verbs tools over libuverbs.so preloaded (docs/architecture.md, "The verbs layer").

ibv_devinfo, ibv_rc_pingpong and perftest's ib_*_lat / ib_*_bw run as shipped by
ibverbs-utils and perftest, with LD_PRELOAD=<libuverbs.so> and UVERBS_DEVICES naming an
emulated ConnectX on its own loopback address per process, so that server and client
are two processes talking RoCE v2 over UDP.  Every process is bounded in time and
killed at the end; each test asserts on the tool's exit status and the figures it
prints (its result table), not merely that it ran.

The library comes from $UVERBS_LIB (set by CMake: the regular, non-sanitizer build,
because an AddressSanitizer library cannot be preloaded into uninstrumented
binaries).  A missing library or tool is a failure, never a skip.
"""
import os
import re
import shutil
import socket
import subprocess
import time

import pytest

from preload import Addresses, lib  # noqa: F401 (lib is a fixture)
from procnet import tcp_listening

TIMEOUT = 90

_alloc = Addresses(19200)


def _tool(name):
    path = shutil.which(name)
    assert path, "%s is not installed (Debian packages ibverbs-utils, perftest)" % name
    return path


def _env(lib, ip):
    env = dict(os.environ)
    env["LD_PRELOAD"] = lib
    if os.environ.get("UVERBS_TEST_SHIM") == "kext":
        # The Mac path: each process a simulated Mac whose kext (shim-kext/standin)
        # matched one emulated ConnectX on this address.
        env["UVERBS_DEVICES"] = "kext:0"
        env["UVERBS_KEXT_STANDIN"] = "ip=%s" % ip
    else:
        env["UVERBS_DEVICES"] = "emu:ip=%s" % ip
    env.pop("UVERBS_LOG", None)
    return env



# perftest measures its CPU's clock against gettimeofday before it reports (perftest
# 4.5-0.17 src/get_clock.c, sample_get_cpu_mhz(): a linear fit of 200 samples) and
# gives up when the samples scatter, as they do on a loaded 2-CPU machine whenever the
# process is preempted between its two clock reads: it prints "Correlation
# coefficient r^2: 0.874 < 0.9" and get_cpu_mhz() returns 0.  A bandwidth test then
# exits with "Can't produce a report" (src/perftest_parameters.c, print_report_bw());
# a latency test divides by that 0 and prints "inf" figures with exit status 0
# (print_report_lat()).  No option avoids the calibration for both (-F only silences
# the exit, leaving 0 MB/s; -C reports latency in cycles and is not the default run).
# Either way that run's figures are perftest's calibration failing, not a measurement
# of the device: a pair in which either side printed the r^2 message runs again, up
# to PERFTEST_CLOCK_ATTEMPTS times in all, and each such rerun is printed.
PERFTEST_CLOCK_FAILED = re.compile(r"Correlation coefficient r\^2:? \S+ < 0\.9")
PERFTEST_CLOCK_ATTEMPTS = 3


def run_pair(lib, tool, args, server_args=None, timeout=TIMEOUT):
    """run_pair_once, again (up to PERFTEST_CLOCK_ATTEMPTS runs) while perftest's own
    clock calibration failed on either side."""
    for attempt in range(1, PERFTEST_CLOCK_ATTEMPTS + 1):
        res = run_pair_once(lib, tool, args, server_args, timeout)
        side = [n for n, (_, out) in zip(("server", "client"), res) if PERFTEST_CLOCK_FAILED.search(out)]
        if not side or attempt == PERFTEST_CLOCK_ATTEMPTS:
            return res
        print("%s: perftest's clock calibration failed on the %s (r^2 < 0.9), run %d of at most %d" % (
            tool, " and ".join(side), attempt, PERFTEST_CLOCK_ATTEMPTS))
    return res


def run_pair_once(lib, tool, args, server_args=None, timeout=TIMEOUT):
    """Run `tool` as server and client; return (server, client) CompletedProcess-like
    tuples (rc, stdout then stderr).  The two are read from separate pipes: perftest's
    stdout to a pipe is block-buffered, so with one pipe a line of stderr could land in
    the middle of a table row (CI once lost ib_send_lat's 2 MiB row that way)."""
    exe = _tool(tool)
    sip, cip, port = _alloc()
    sargs = list(server_args if server_args is not None else args)
    srv = subprocess.Popen([exe, "-p", str(port)] + sargs, env=_env(lib, sip),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    cli = None
    try:
        deadline = time.time() + 20
        while not tcp_listening(port):
            assert srv.poll() is None, "server exited early:\n" + "".join(srv.communicate())
            assert time.time() < deadline, "server never listened on port %d" % port
            time.sleep(0.05)
        cli = subprocess.Popen([exe, "-p", str(port)] + list(args) + ["127.0.0.1"],
                               env=_env(lib, cip), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
        cout = "".join(cli.communicate(timeout=timeout))
        sout = "".join(srv.communicate(timeout=20))
        return (srv.returncode, sout), (cli.returncode, cout)
    finally:
        for p in (cli, srv):
            if p is not None and p.poll() is None:
                os.killpg(p.pid, 9)
                p.wait()


def _ok(res, what):
    (src, sout), (crc, cout) = res
    assert crc == 0 and src == 0, "%s failed: client rc %s, server rc %s\n--- client\n%s\n--- server\n%s" % (
        what, crc, src, cout, sout)
    return sout, cout


# ------------------------------------------------------------------ ibv_devinfo

def test_devinfo_lists_emulated_connectx5_port_active_ethernet(lib):
    ip = _alloc()[0]
    out = subprocess.run([_tool("ibv_devinfo")], env=_env(lib, ip),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    o = out.stdout
    assert re.search(r"hca_id:\s+uverbs0", o)
    assert re.search(r"vendor_id:\s+0x02c9", o)
    assert re.search(r"vendor_part_id:\s+4121", o)          # ConnectX-5 Ex, 15b3:1019
    assert re.search(r"fw_ver:\s+\d+\.\d+\.\d{4}", o)
    assert re.search(r"state:\s+PORT_ACTIVE \(4\)", o)
    assert re.search(r"link_layer:\s+Ethernet", o)
    # the node GUID is the EUI-64 of the MAC 02:00:<the IPv4 address>
    a = [int(x) for x in ip.split(".")]
    assert re.search(r"node_guid:\s+0000:7fff:fe%02x:%02x%02x" % (a[1], a[2], a[3]), o), o


def test_devinfo_ibstat_reads_our_port_through_sysfs(lib):
    """infiniband-diags' ibstat (libibumad) lists /sys/class/infiniband, reads each
    device's files and its port's, and scans ports/1/pkeys: all answered in-process
    (uverbs/kernel_paths_linux.c, query.c), with no kernel RDMA device."""
    ip = _alloc()[0]
    path = shutil.which("ibstat")
    assert path, "ibstat is not installed (Debian package infiniband-diags)"
    out = subprocess.run([path], env=_env(lib, ip), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    o = out.stdout
    assert re.search(r"^CA 'uverbs0'", o, re.M), o
    assert re.search(r"CA type: MT4121", o) and re.search(r"Number of ports: 1", o), o
    assert re.search(r"State: Active", o) and re.search(r"Physical state: LinkUp", o), o
    assert re.search(r"Link layer: Ethernet", o), o
    # cap_mask: IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS, as ibv_query_port says
    assert re.search(r"Capability mask: 0x04010000", o), o
    a = [int(x) for x in ip.split(".")]
    assert re.search(r"Node GUID: 0x00007ffffe%02x%02x%02x" % (a[1], a[2], a[3]), o), o


def _lstopo(lib, env_extra, devices):
    path = shutil.which("lstopo-no-graphics")
    assert path, "lstopo-no-graphics is not installed (Debian package hwloc-nox)"
    env = _env(lib, "127.0.0.1")
    env["UVERBS_DEVICES"] = devices
    env.pop("UVERBS_KEXT_STANDIN", None)
    env.update(env_extra)
    out = subprocess.run([path, "--whole-io", "-v"], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def test_devinfo_lstopo_shows_our_device_as_an_openfabrics_os_device(lib):
    """hwloc 2.9's lstopo opens /sys/class/infiniband with openat and lists it with
    fdopendir, reads each entry's link (readlinkat) to place the device, then its files
    (uverbs/kernel_paths_linux.c answers all three).  The emulated ConnectX has no PCI
    function: it is a software device (devices/virtual, as Linux's rxe), which hwloc
    shows when asked to (HWLOC_VIRTUAL_LINUX_OSDEV), attached to the machine."""
    if os.path.exists("/sys/class/infiniband"):
        pytest.skip("this machine has kernel RDMA devices: /sys/class/infiniband is the kernel's")
    ip = _alloc()[0]
    o = _lstopo(lib, {"HWLOC_VIRTUAL_LINUX_OSDEV": "1"}, "emu:ip=%s" % ip)
    m = re.search(r'^( *)OpenFabrics L#\d+ \((.*)\) "uverbs0"$', o, re.M)
    assert m, o
    a = [int(x) for x in ip.split(".")]
    guid = "0000:7fff:fe%02x:%02x%02x" % (a[1], a[2], a[3])
    assert "NodeGUID=%s" % guid in m.group(2), m.group(0)
    assert "Port1State=4" in m.group(2), m.group(0)              # ACTIVE
    assert "Port1GID1=0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % tuple(a) in m.group(2), m.group(0)
    assert m.group(1) == "  ", "attached to the machine: " + m.group(0)
    # without HWLOC_VIRTUAL_LINUX_OSDEV hwloc leaves software devices out, ours too
    assert "uverbs0" not in _lstopo(lib, {}, "emu:ip=%s" % ip)


def test_devinfo_lstopo_places_a_vfio_device_under_its_pci_function(lib):
    """A vfio: device's class link names its PCI function, so lstopo puts the OS device
    under that PCI device.  Named here after a PCI function this machine has (the
    device is never opened: its files are then absent, its place is the point)."""
    if os.path.exists("/sys/class/infiniband"):
        pytest.skip("this machine has kernel RDMA devices: /sys/class/infiniband is the kernel's")
    fns = sorted(os.listdir("/sys/bus/pci/devices")) if os.path.isdir("/sys/bus/pci/devices") else []
    if not fns:
        pytest.skip("no PCI function on this machine")
    bdf = fns[-1]
    o = _lstopo(lib, {}, "vfio:%s" % bdf)
    m = re.search(r'^( *)PCI L#\d+ \(busid=%s .*\n\1  OpenFabrics L#\d+ "uverbs0"$' % re.escape(bdf), o, re.M)
    assert m, o


def test_devinfo_ls_lists_our_class_directory_and_files(lib):
    """coreutils' ls looks at every name with statx (AT_SYMLINK_NOFOLLOW for what it
    lists), lists with opendir/readdir, reads links with readlink and, under -l, asks
    getxattr for a POSIX ACL: uverbs/kernel_paths_linux.c answers each for our paths,
    as sysfs would (the class entry a link, attributes 0444 files of 4096 bytes, every
    directory 0755).  cat reads the files through open()."""
    if os.path.exists("/sys/class/infiniband"):
        pytest.skip("this machine has kernel RDMA devices: /sys/class/infiniband is the kernel's")
    ls = shutil.which("ls")
    assert ls, "ls is not installed (Debian package coreutils)"
    ip = _alloc()[0]
    env = _env(lib, ip)
    env["UVERBS_DEVICES"] = "emu:ip=%s" % ip
    env.pop("UVERBS_KEXT_STANDIN", None)
    env["LC_ALL"] = "C"

    def run(*args):
        out = subprocess.run(list(args), env=env, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and not out.stderr, "%s: rc %d\n%s%s" % (
            " ".join(args), out.returncode, out.stdout, out.stderr)
        return out.stdout

    assert run(ls, "/sys/class/infiniband") == "uverbs0\n"
    o = run(ls, "-l", "/sys/class/infiniband/")
    assert re.search(r"^lrwxrwxrwx\s+1\s+\S+\s+\S+\s+40 .* uverbs0 -> \.\./\.\./devices/virtual/infiniband/uverbs0$",
                     o, re.M), o
    o = run(ls, "-l", "/sys/class/infiniband/uverbs0/")
    for f in ("board_id", "fw_ver", "node_guid", "sys_image_guid"):
        assert re.search(r"^-r--r--r--\s+1\s+\S+\s+\S+\s+4096 .* %s$" % f, o, re.M), o
    assert re.search(r"^drwxr-xr-x\s+\d+\s+\S+\s+\S+\s+\d+ .* ports$", o, re.M), o
    o = run(ls, "-l", "/sys/class/infiniband/uverbs0/ports/1/")
    for d in ("gids", "gid_attrs", "pkeys"):
        assert re.search(r"^drwxr-xr-x .* %s$" % d, o, re.M), o
    o = run(ls, "/sys/class/infiniband/uverbs0/ports/1/gid_attrs/types")
    assert o.split()[:2] == ["0", "1"], o
    assert run("cat", "/sys/class/infiniband/uverbs0/ports/1/gid_attrs/types/1") == "RoCE v2\n"
    o = run(ls, "-ld", "/dev/infiniband/uverbs0")
    assert re.match(r"crw-rw-rw-\s+1\s+\S+\s+\S+\s+231,\s+192 ", o), o


def test_devinfo_verbose_shows_roce_v2_gid_and_limits(lib):
    ip = _alloc()[0]
    out = subprocess.run([_tool("ibv_devinfo"), "-v"], env=_env(lib, ip),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    o = out.stdout
    # GID 0: fe80:: + the EUI-64 of the MAC 02:00:<address>; GID 1: the address itself
    a = [int(x) for x in ip.split(".")]
    assert re.search(r"GID\[\s*0\]:\s+fe80::7fff:fe%x:%x, RoCE v2" % (a[1], a[2] << 8 | a[3]), o), o
    assert re.search(r"GID\[\s*1\]:\s+::ffff:%s, RoCE v2" % re.escape(ip), o), o
    assert re.search(r"atomic_cap:\s+ATOMIC_HCA", o)
    for field in ("max_qp", "max_qp_wr", "max_sge", "max_cq", "max_cqe", "max_mr", "max_pd",
                  "max_qp_rd_atom", "max_srq"):
        m = re.search(r"\n\s+%s:\s+(\d+)" % field, o)
        assert m and int(m.group(1)) > 0, field
    assert re.search(r"active_mtu:\s+\d+ \(\d\)", o)
    assert re.search(r"phys_state:\s+LINK_UP", o)


# ------------------------------------------------------------------ ibv_rc_pingpong

def _pingpong_ok(res, size, iters, gid=r"::ffff:127\.\d+\.\d+\.1[01]\b"):
    sout, cout = _ok(res, "ibv_rc_pingpong")
    for out in (sout, cout):
        assert re.search(r"GID " + gid, out), out
        m = re.search(r"(\d+) bytes in [\d.]+ seconds", out)
        assert m and int(m.group(1)) == 2 * size * iters, out
        assert re.search(r"%d iters in" % iters, out), out


@pytest.mark.parametrize("size", [1, 64, 1024, 4096, 16384, 65536])
def test_rc_pingpong_sizes(lib, size):
    _pingpong_ok(run_pair(lib, "ibv_rc_pingpong", ["-g", "1", "-s", str(size), "-n", "20"]), size, 20)


def test_rc_pingpong_over_the_link_local_gid_0(lib):
    """GID 0 is fe80::EUI-64 of the port MAC; the peer's MAC comes out of its GID."""
    _pingpong_ok(run_pair(lib, "ibv_rc_pingpong", ["-g", "0", "-n", "20"]), 4096, 20,
                 gid=r"fe80::7fff:fe[0-9a-f]+:[0-9a-f]+\b")


def test_rc_pingpong_events(lib):
    _pingpong_ok(run_pair(lib, "ibv_rc_pingpong", ["-g", "1", "-e", "-n", "50"]), 4096, 50)


def test_rc_pingpong_new_post_api(lib):
    _pingpong_ok(run_pair(lib, "ibv_rc_pingpong", ["-g", "1", "-N", "-n", "50"]), 4096, 50)


def test_rc_pingpong_validates_buffers(lib):
    _pingpong_ok(run_pair(lib, "ibv_rc_pingpong", ["-g", "1", "-c", "-s", "8192", "-n", "20"]), 8192, 20)


def test_rc_pingpong_events_new_api_validation_together(lib):
    _pingpong_ok(run_pair(lib, "ibv_rc_pingpong", ["-g", "1", "-e", "-N", "-c", "-s", "65536", "-n", "10"]),
                 65536, 10)


@pytest.mark.parametrize("tool", ["ibv_ud_pingpong", "ibv_uc_pingpong", "ibv_srq_pingpong"])
def test_other_pingpong(lib, tool):
    """The other ibverbs-utils ping-pongs: UD (address handles), UC, and an SRQ shared
    by 16 QPs."""
    sout, cout = _ok(run_pair(lib, tool, ["-g", "0", "-n", "50"]), tool)
    for out in (sout, cout):
        m = re.search(r"(\d+) bytes in [\d.]+ seconds", out)
        assert m and int(m.group(1)) > 0, out
        assert re.search(r"50 iters in", out), out


# ------------------------------------------------------------------ ibv_xsrq_pingpong

XSRQ_DEST = re.compile(r"^\s*(local|remote): LID \w+, QPN RECV ([0-9a-f]{6}) SEND ([0-9a-f]{6}), PSN [0-9a-f]{6}, "
                       r"SRQN ([0-9a-f]{6}), GID ::ffff:127\.\d+\.\d+\.\d+$", re.M)


def _xsrq_ok(out, rc, clients):
    """ibv_xsrq_pingpong (XRC: an XRC domain opened through /tmp/xrc_domain, an XRC
    SRQ, an XRC_RECV and an XRC_SEND QP per client) ends with "success" once every
    client's messages came in and were answered; it prints each side's QPNs and SRQ
    number, one local and one remote line per connection."""
    assert rc == 0 and out.rstrip().endswith("success"), out
    lines = XSRQ_DEST.findall(out)
    assert len(lines) == 2 * clients, out
    for kind in ("local", "remote"):
        assert sum(1 for x in lines if x[0] == kind) == clients, out


def test_xsrq_pingpong(lib):
    (src, sout), (crc, cout) = run_pair(lib, "ibv_xsrq_pingpong", ["-g", "1", "-n", "50"])
    _xsrq_ok(sout, src, 1)
    _xsrq_ok(cout, crc, 1)


def test_xsrq_pingpong_two_clients_on_completion_events(lib):
    """Two client processes on NICs of their own send into the one XRC SRQ of the
    server (-c 2), every side sleeping on CQ events (-e)."""
    exe = _tool("ibv_xsrq_pingpong")
    sip, cip, port = _alloc()
    c2ip = sip.rsplit(".", 1)[0] + ".12"
    args = ["-p", str(port), "-g", "1", "-n", "30", "-e"]
    procs = []
    try:
        srv = subprocess.Popen([exe] + args + ["-c", "2"], env=_env(lib, sip), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
        procs.append(srv)
        deadline = time.time() + 20
        while not tcp_listening(port):
            assert srv.poll() is None, "server exited early:\n" + srv.communicate()[0]
            assert time.time() < deadline, "server never listened on port %d" % port
            time.sleep(0.05)
        for ip in (cip, c2ip):
            procs.append(subprocess.Popen([exe] + args + ["127.0.0.1"], env=_env(lib, ip), stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True, start_new_session=True))
        outs = [p.communicate(timeout=TIMEOUT)[0] for p in procs[1:]]
        sout = srv.communicate(timeout=20)[0]
        _xsrq_ok(sout, srv.returncode, 2)
        for p, out in zip(procs[1:], outs):
            _xsrq_ok(out, p.returncode, 1)
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, 9)
                p.wait()


# ------------------------------------------------------------------ perftest

LAT_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", re.M)
BW_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", re.M)


def _table(out, row, header):
    assert header in out, "no result table in:\n" + out
    rows = [m.groups() for m in row.finditer(out.split(header, 1)[1])]
    assert rows, "empty result table in:\n" + out
    return rows


def _lat(res, sizes=None):
    sout, cout = _ok(res, "latency test")
    # the client prints the table; t_min must be a real figure
    rows = _table(cout, LAT_ROW, "t_min[usec]")
    for r in rows:
        assert float(r[2]) > 0
    if sizes:
        assert [int(r[0]) for r in rows] == sizes, "%s\nclient output:\n%s" % (rows, cout[-4000:])
    return rows


def _bw(res, sizes=None):
    sout, cout = _ok(res, "bandwidth test")
    rows = _table(cout, BW_ROW, "BW peak[")
    for r in rows:
        # iterations and message rate; MB/s rounds to 0.00 for a few bytes
        assert int(r[1]) > 0 and float(r[4]) > 0, r
    if sizes:
        assert [int(r[0]) for r in rows] == sizes, "%s\nclient output:\n%s" % (rows, cout[-4000:])
    return rows


ALL_SIZES = [2 ** i for i in range(1, 24)]

# READs of up to 8 MiB: the emulated NICs share two cores with everything else, and a
# loaded machine can hold a device thread off for longer than perftest's default local
# ACK timeout (-u 14: 67 ms), so these runs ask for 1 s (-u 18).  ib_read_bw -a runs
# with perftest's default number of outstanding READs: the emulated requester keeps
# the READ response bytes in flight within what a loopback UDP socket can buffer
# (hw/emu/sq_engine.c, EMU_TP_READ_BYTES_IN_FLIGHT).
ALL_ARGS = {"ib_read_lat": ["-u", "18"], "ib_read_bw": ["-u", "18"]}

LAT_TOOLS = ["ib_write_lat", "ib_read_lat", "ib_send_lat", "ib_atomic_lat"]
BW_TOOLS = ["ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_atomic_bw"]


@pytest.mark.parametrize("tool", LAT_TOOLS)
def test_perftest_lat_default(lib, tool):
    _lat(run_pair(lib, tool, ["-n", "100"]))


@pytest.mark.parametrize("tool", LAT_TOOLS)
def test_perftest_lat_old_post_send(lib, tool):
    _lat(run_pair(lib, tool, ["-n", "100", "--use_old_post_send"]))


@pytest.mark.parametrize("tool", ["ib_write_lat", "ib_read_lat", "ib_send_lat"])
def test_perftest_lat_all_sizes(lib, tool):
    _lat(run_pair(lib, tool, ["-a", "-n", "20"] + ALL_ARGS.get(tool, []), timeout=300), ALL_SIZES)


@pytest.mark.parametrize("tool", ["ib_send_lat", "ib_read_lat", "ib_atomic_lat"])
def test_perftest_lat_events(lib, tool):
    _lat(run_pair(lib, tool, ["-n", "100", "-e"]))


@pytest.mark.parametrize("tool,size", [("ib_write_lat", 64), ("ib_write_lat", 220), ("ib_send_lat", 128)])
def test_perftest_lat_inline(lib, tool, size):
    _lat(run_pair(lib, tool, ["-n", "100", "-s", str(size), "-I", str(size)]), [size])


@pytest.mark.parametrize("tool", BW_TOOLS)
def test_perftest_bw_default(lib, tool):
    _bw(run_pair(lib, tool, ["-n", "100"]))


@pytest.mark.parametrize("tool", BW_TOOLS)
def test_perftest_bw_old_post_send(lib, tool):
    _bw(run_pair(lib, tool, ["-n", "100", "--use_old_post_send"]))


@pytest.mark.parametrize("tool", BW_TOOLS)
def test_perftest_bw_bidirectional(lib, tool):
    _bw(run_pair(lib, tool, ["-n", "100", "-b"]))





@pytest.mark.parametrize("tool", ["ib_write_bw", "ib_read_bw", "ib_send_bw"])
def test_perftest_bw_all_sizes(lib, tool):
    _bw(run_pair(lib, tool, ["-a", "-n", "20"] + ALL_ARGS.get(tool, []), timeout=300), ALL_SIZES)


@pytest.mark.parametrize("tool", ["ib_send_bw", "ib_read_bw", "ib_atomic_bw"])
def test_perftest_bw_events(lib, tool):
    _bw(run_pair(lib, tool, ["-n", "100", "-e"]))


def test_perftest_bw_inline(lib):
    _bw(run_pair(lib, "ib_write_bw", ["-n", "100", "-s", "128", "-I", "128"]), [128])


def test_perftest_dc_refused_cleanly(lib):
    """DC is an mlx5dv feature: libmlx5's mlx5dv_create_qp must see a device that is not
    its own and answer EOPNOTSUPP, and the tool exit with an error, not a crash."""
    res = run_pair(lib, "ib_write_lat", ["-n", "10", "-c", "DC"], timeout=30)
    (src, sout), (crc, cout) = res
    for rc, out in ((crc, cout), (src, sout)):
        assert rc not in (0, -11, -6, 139, 134), out   # failed, but not by a signal
