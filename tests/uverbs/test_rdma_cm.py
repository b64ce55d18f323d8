# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Debian's unmodified librdmacm programs over libuverbs.so preloaded (docs/architecture.md,
"The connection manager").

rdmacm-utils' rping runs as shipped, server and client in two processes, each with its own
emulated ConnectX on its own loopback address (UVERBS_DEVICES=emu:ip=...), so that the
connection is set up by IBTA CM MADs (REQ, REP, RTU, DREQ, DREP) on the GSI QP of each
emulated NIC, on the RoCE v2 wire (UDP 4791), and the RDMA traffic that follows uses the
QP attributes the CM gave.  Every process is bounded in time and killed at the end; each
test asserts on exit status and on the data the tool verified (-v prints each ping's
payload as the peer received it), or on the decoded MADs.

The library comes from $UVERBS_LIB (the regular build: an AddressSanitizer library cannot
be preloaded into uninstrumented binaries).  A missing library or tool is a failure.
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from logged_proc import LoggedProc, start_capture
from preload import Addresses, lib  # noqa: F401 (lib is a fixture)
from procnet import tcp_listening

TIMEOUT = 60

_alloc = Addresses(17400)


def _tool(name):
    path = shutil.which(name)
    assert path, "%s is not installed (Debian package rdmacm-utils; tools/install-deps)" % name
    return path


def _env(lib, ip, extra=None):
    env = dict(os.environ)
    env["LD_PRELOAD"] = lib
    env["UVERBS_DEVICES"] = "emu:ip=%s" % ip
    env.pop("UVERBS_LOG", None)
    env.update(extra or {})
    return env


def _spawn(lib, ip, args, extra=None):
    return subprocess.Popen(args, env=_env(lib, ip, extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def _kill(*procs):
    for p in procs:
        if p is not None and p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def _rping_client(lib, cip, sip, port, count, extra=None):
    """rping -c until the server's listener is up (a REQ that finds no listener is
    rejected at once: IBTA REJ reason 8, invalid service ID), at most 20 s."""
    deadline = time.time() + 20
    while True:
        cli = subprocess.run([_tool("rping"), "-c", "-a", sip, "-p", str(port), "-v", "-C", str(count)],
                             env=_env(lib, cip, extra), capture_output=True, text=True, timeout=TIMEOUT)
        if cli.returncode == 0 or "REJECTED" not in cli.stdout + cli.stderr or time.time() > deadline:
            return cli
        time.sleep(0.2)


def _rping_pair(lib, count=5):
    sip, cip, port = _alloc()
    srv = _spawn(lib, sip, [_tool("rping"), "-s", "-a", sip, "-p", str(port), "-v", "-C", str(count)])
    try:
        time.sleep(0.3)
        cli = _rping_client(lib, cip, sip, port, count)
        sout, serr = srv.communicate(timeout=TIMEOUT)
        return (srv.returncode, sout + serr), (cli.returncode, cli.stdout + cli.stderr)
    finally:
        _kill(srv)


def _check_rping(res, count):
    (src, sout), (crc, cout) = res
    assert crc == 0 and src == 0, "rping failed: client rc %s, server rc %s\n--- client\n%s\n--- server\n%s" % (
        crc, src, cout, sout)
    # -v: each side prints the payload it received; the test compares it with the
    # pattern rping writes into its 64-byte buffer (rping.c, rping_test_client:
    # "rdma-ping-%d: ", then 'A' + ping + k wrapping after 'z', then a NUL)
    # the client's rdma_disconnect reaches the server as a DREQ: DISCONNECTED there
    assert "server DISCONNECT EVENT" in sout, sout
    for i in range(count):
        prefix = "rdma-ping-%d: " % i
        pat = prefix + "".join(chr(65 + (i + k) % 58) for k in range(63 - len(prefix)))
        assert ("ping data: " + pat) in cout, "client did not see ping %d intact:\n%s" % (i, cout)
        assert ("server ping data: " + pat) in sout, "server did not see ping %d intact:\n%s" % (i, sout)


def test_rping_verify_mode_connects_and_moves_data(lib):
    _check_rping(_rping_pair(lib, 5), 5)


def test_rping_verify_mode_other_way(lib):
    # the same pair with the roles swapped: server on the higher address this time
    sip, cip, port = _alloc()
    sip, cip = cip, sip
    srv = _spawn(lib, sip, [_tool("rping"), "-s", "-a", sip, "-p", str(port), "-v", "-C", "3"])
    try:
        time.sleep(0.3)
        cli = _rping_client(lib, cip, sip, port, 3)
        sout, serr = srv.communicate(timeout=TIMEOUT)
        _check_rping(((srv.returncode, sout + serr), (cli.returncode, cli.stdout + cli.stderr)), 3)
    finally:
        _kill(srv)


def test_rping_several_connections_one_after_another(lib):
    # rping's server takes one connection per run; a fresh server per connection, each
    # on the same two NICs' addresses in turn, checks that IDs, ports and comm IDs are
    # not left behind
    for _ in range(3):
        _check_rping(_rping_pair(lib, 2), 2)


def test_connect_to_a_port_nobody_listens_on_is_rejected_at_once(lib):
    sip, cip, port = _alloc()
    srv = _spawn(lib, sip, [_tool("rping"), "-s", "-a", sip, "-p", str(port), "-C", "1"])
    try:
        time.sleep(0.5)
        t0 = time.time()
        cli = subprocess.run([_tool("rping"), "-c", "-a", sip, "-p", str(port + 1), "-C", "1"],
                             env=_env(lib, cip), capture_output=True, text=True, timeout=TIMEOUT)
        took = time.time() - t0
        out = cli.stdout + cli.stderr
        assert cli.returncode != 0, out
        # IBTA table 109: reason 8, invalid service ID (librdmacm reports it as the status)
        assert "RDMA_CM_EVENT_REJECTED" in out and "error 8" in out, out
        assert took < 10, "the REJ took %.1f s" % took
    finally:
        _kill(srv)


def test_cm_mads_on_the_wire_decode_in_tshark(lib):
    tshark = shutil.which("tshark")
    assert tshark, "tshark is not installed (tools/install-deps)"
    with tempfile.TemporaryDirectory() as d:
        pcap = os.path.join(d, "cm.pcap")
        sip, cip, port = _alloc()
        cap = start_capture(tshark, "udp port 4791 and host %s" % sip, pcap)
        try:
            srv = _spawn(lib, sip, [_tool("rping"), "-s", "-a", sip, "-p", str(port), "-v", "-C", "1"])
            try:
                time.sleep(0.3)
                cli = _rping_client(lib, cip, sip, port, 1)
                srv.communicate(timeout=TIMEOUT)
                assert cli.returncode == 0 and srv.returncode == 0, cli.stdout + cli.stderr
            finally:
                _kill(srv)
            time.sleep(0.5)
        finally:
            cap.send_signal(signal.SIGINT)
            cap.wait(timeout=15)
        out = subprocess.run([tshark, "-r", pcap, "-d", "udp.port==4791,infiniband", "-Y", "infiniband.mad",
                              "-T", "fields", "-E", "separator=,", "-e", "ip.src", "-e", "infiniband.bth.destqp",
                              "-e", "infiniband.deth.q_key", "-e", "infiniband.mad.attributeid",
                              "-e", "infiniband.cm.req.serviceid.dport", "-e", "_ws.malformed"],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        rows = [r.split(",") for r in out.stdout.splitlines() if r and not r.startswith("Running")]
        attrs = [(r[0], int(r[3], 16)) for r in rows]
        # IBTA 12.9: REQ and RTU from the client, REP from the server, then the
        # disconnection (the client's DREQ and the server's DREP)
        want = [(cip, 0x10), (sip, 0x13), (cip, 0x14), (cip, 0x15), (sip, 0x16)]
        assert [a for a in attrs if a in want] == want, out.stdout
        for r in rows:
            assert int(r[1], 16) == 1, "CM MAD not to QP1: %s" % r
            assert int(r[2], 16) == 0x80010000, "CM MAD without the GSI Q_Key: %s" % r
            assert r[5] == "", "tshark found a malformed MAD: %s" % r
        req = [r for r in rows if int(r[3], 16) == 0x10][0]
        assert int(req[4], 16) == port, "REQ's service ID does not name port %d: %s" % (port, req)


def test_ucmatose_four_connections_with_data(lib):
    # rdmacm-utils' cmatose (ucmatose): 4 RC connections between the two processes at
    # once, 10 sends each way on each, then disconnection; "return status 0" on both
    sip, cip, port = _alloc()
    srv = _spawn(lib, sip, [_tool("ucmatose"), "-b", sip, "-p", str(port), "-c", "4", "-C", "10"])
    try:
        time.sleep(0.5)
        deadline = time.time() + 20
        while True:
            cli = subprocess.run([_tool("ucmatose"), "-s", sip, "-p", str(port), "-c", "4", "-C", "10"],
                                 env=_env(lib, cip), capture_output=True, text=True, timeout=TIMEOUT)
            if cli.returncode == 0 or "REJECTED" not in cli.stdout + cli.stderr or time.time() > deadline:
                break
            time.sleep(0.2)
        sout, serr = srv.communicate(timeout=TIMEOUT)
        cout = cli.stdout + cli.stderr
        assert cli.returncode == 0 and srv.returncode == 0, "client rc %s, server rc %s\n%s\n%s" % (
            cli.returncode, srv.returncode, cout, sout + serr)
        assert "data transfers complete" in cout and "return status 0" in cout, cout
        assert "data transfers complete" in sout and "disconnected" in sout, sout
    finally:
        _kill(srv)


class _Server(LoggedProc):
    """A server process whose output is collected as it comes (logged_proc.py), so that
    the test can wait for the line our CM logs when the program listens (UVERBS_LOG=info:
    "rdma_cm: listening on IP port N") rather than guess how long a loaded machine takes
    to get there: Debian's perftest 4.5 client, for one, gives up at once when its first
    REQ finds no listener."""

    def __init__(self, lib, ip, args, extra=None):
        env = {"UVERBS_LOG": "info"}
        env.update(extra or {})
        super().__init__(args, _env(lib, ip, env))

    def wait_listening(self, port, count=1, timeout=30):
        self.wait_err_line(r"rdma_cm: listening on [0-9.]+ port %d " % port, "listening on port %d" % port,
                           count, timeout)

    def finish(self, timeout=TIMEOUT):
        rc = self.wait_exit(timeout)
        hung = rc is None
        self.kill()
        assert not hung, "server still running after %d s:\n%s" % (timeout, self.text())
        return self.p.returncode, self.text()


PERFTEST_TOOLS = ["ib_write_lat", "ib_read_lat", "ib_send_lat", "ib_atomic_lat",
                  "ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_atomic_bw"]


@pytest.mark.parametrize("mode", ["-R", "-z"])
@pytest.mark.parametrize("tool", PERFTEST_TOOLS)
def test_perftest_rdma_cm_mode(lib, tool, mode):
    # perftest -R: both its control connection and the test connection are made by
    # rdma_cm (perftest_communication.c, rdma_server_connect and
    # rdma_cm_server_connection), each a REQ/REP/RTU on the wire.  The server listens
    # twice on the same port: once for the control connection, then again for the test.
    # perftest -z ("--com_rdma_cm"): only the control connection is rdma_cm's; the
    # test QPs are the tool's own, brought to RTS with the attributes it exchanged
    # over that connection.
    sip, cip, port = _alloc()
    args = [_tool(tool), mode, "-n", "50", "-p", str(port)]
    srv = _Server(lib, sip, args)
    try:
        srv.wait_listening(port)
        cli = subprocess.run(args + [sip], env=_env(lib, cip), capture_output=True, text=True, timeout=TIMEOUT)
        src, sout = srv.finish()
    finally:
        _kill(srv.p)
    cout = cli.stdout + cli.stderr
    assert cli.returncode == 0 and src == 0, "%s %s: client rc %s, server rc %s\n--- client\n%s\n--- server\n%s" % (
        tool, mode, cli.returncode, src, cout, sout)
    qps = "ON" if mode == "-R" else "OFF"
    assert ("rdma_cm QPs\t : %s" % qps) in cout and "Data ex. method : rdma_cm" in cout, cout
    # the result row: bytes, then iterations (50) and figures
    lat = tool.endswith("_lat")
    rows = [l.split() for l in cout.splitlines() if re.match(r"^\s*\d+\s+50\s+\d", l)]
    assert rows, "no result row in the client's output:\n" + cout
    figures = [float(x) for x in rows[0][2:5]]
    if lat:
        assert 0 < figures[0] <= figures[1], rows   # t_min <= t_max, both measured
    else:
        assert figures[1] > 0, rows                 # BW average
    if tool == "ib_atomic_lat":
        # its server returns from main with the test connection still up: the
        # library's exit path sends the DREQ the kernel would, so the client's
        # rdma_disconnect ends at once instead of after 16 DREQ timeouts
        assert "process exit: DREQ/DREP sent for" in sout, sout


def _udaddy_pair(lib, sip, cip, conns=2, count=5):
    # udaddy listens on its fixed port 7174 in the UDP port space (RDMA_PS_UDP): the
    # client's rdma_connect sends a SIDR_REQ, the server's rdma_accept a SIDR_REP with
    # its QPN and Q_Key (IBTA 12.11); then each side sends `count` UD messages per
    # connection and checks that they all arrive (udaddy.c, poll_cqs)
    srv = _Server(lib, sip, [_tool("udaddy"), "-b", sip, "-c", str(conns), "-C", str(count)])
    try:
        srv.wait_listening(7174)
        cli = subprocess.run([_tool("udaddy"), "-s", sip, "-b", cip, "-c", str(conns), "-C", str(count)],
                             env=_env(lib, cip), capture_output=True, text=True, timeout=TIMEOUT)
        src, sout = srv.finish()
    finally:
        _kill(srv.p)
    cout = cli.stdout + cli.stderr
    assert cli.returncode == 0 and src == 0, "udaddy: client rc %s, server rc %s\n--- client\n%s\n--- server\n%s" % (
        cli.returncode, src, cout, sout)
    for out in (cout, sout):
        assert "data transfers complete" in out and "return status 0" in out, out
    assert "sending replies" in sout, sout


def test_udaddy_sidr_and_ud_messages(lib):
    sip, cip, _ = _alloc()
    _udaddy_pair(lib, sip, cip)


def test_udaddy_other_way(lib):
    sip, cip, _ = _alloc()
    _udaddy_pair(lib, cip, sip, conns=1, count=10)


def test_udaddy_without_a_listener_is_unreachable_at_once(lib):
    # a SIDR_REQ nobody listens for gets a SIDR_REP with status 1 (service ID not
    # supported, Linux cm.c cm_sidr_req_handler), which rdma_cm reports as UNREACHABLE
    sip, cip, _ = _alloc()
    srv = _Server(lib, sip, [_tool("rping"), "-s", "-a", sip, "-p", "7174", "-C", "1"])
    try:
        srv.wait_listening(7174)   # an RC listener on the same port number: not the UDP one
        t0 = time.time()
        cli = subprocess.run([_tool("udaddy"), "-s", sip, "-b", cip, "-c", "1", "-C", "1"],
                             env=_env(lib, cip), capture_output=True, text=True, timeout=TIMEOUT)
        took = time.time() - t0
    finally:
        _kill(srv.p)
    out = cli.stdout + cli.stderr
    assert cli.returncode != 0, out
    assert "RDMA_CM_EVENT_UNREACHABLE" in out, out
    assert took < 10, "the SIDR_REP took %.1f s" % took


def test_qperf_cm_rc_lat_and_rc_bw(lib):
    # qperf -cm1: the RC connection of each test is made with rdma_cm (qperf's rdma.c,
    # rd_open with -cm1: rdma_listen / rdma_connect) instead of qperf's own exchange of
    # QPNs over its TCP control socket
    sip, cip, port = _alloc()
    srv = _Server(lib, sip, [_tool("qperf"), "-lp", str(port)])
    try:
        deadline = time.time() + 30
        while not tcp_listening(port):
            assert srv.p.poll() is None and time.time() < deadline, "qperf server not up:\n" + srv.text()
            time.sleep(0.05)
        cli = subprocess.run([_tool("qperf"), sip, "-lp", str(port), "-cm1", "-t", "1", "rc_lat", "rc_bw"],
                             env=_env(lib, cip), capture_output=True, text=True, timeout=TIMEOUT)
        time.sleep(0.2)
        stext = srv.text()
    finally:
        _kill(srv.p)
    out = cli.stdout + cli.stderr
    assert cli.returncode == 0, out + "\n--- server\n" + stext
    lat = re.search(r"rc_lat:\s+latency\s+=\s+([0-9.]+) (us|ms)", out)
    bw = re.search(r"rc_bw:\s+bw\s+=\s+([0-9.]+) (MB|GB|KB)/sec", out)
    assert lat and float(lat.group(1)) > 0 and bw and float(bw.group(1)) > 0, out
    # the server listened through the CM for each test, in the TCP port space
    assert len(re.findall(r"rdma_cm: listening on \S+ port \d+ \(port space 0x106\)", stext)) >= 2, stext


def _rstream_pair(lib, preload=(), args=()):
    sip, cip, port = _alloc()
    common = ["-p", str(port), "-C", "100", "-S", "4096"] + list(args)
    extra = {}
    if preload:
        extra["LD_PRELOAD"] = " ".join(list(preload) + [lib])
    srv = _Server(lib, sip, [_tool("rstream"), "-b", sip] + common, extra)
    try:
        srv.wait_listening(port)
        tcp_listener = tcp_listening(port)
        cli = subprocess.run([_tool("rstream"), "-s", sip] + common, env=_env(lib, cip, extra),
                             capture_output=True, text=True, timeout=TIMEOUT)
        src, sout = srv.finish()
    finally:
        _kill(srv.p)
    cout = cli.stdout + cli.stderr
    assert cli.returncode == 0 and src == 0, "rstream: client rc %s, server rc %s\n--- client\n%s\n--- server\n%s" % (
        cli.returncode, src, cout, sout)
    # rstream's row: name, bytes, transfers, iterations, total (2 x 100 x 4 KiB), ...
    for out in (cout, sout):
        assert re.search(r"^custom\s+4k\s+100\s+1\s+800k\s", out, re.M), out
    return tcp_listener


def test_rstream_over_rsockets(lib):
    assert not _rstream_pair(lib)


def _rspreload():
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"):
        p = os.path.join(d, "rsocket", "librspreload.so")
        if os.path.isfile(p):
            return p
    raise AssertionError("librspreload.so not found (Debian package librdmacm1)")


def test_rsocket_preload_uses_rdma_not_tcp(lib):
    # rstream -T s makes plain socket() calls (SOCK_STREAM); librspreload turns them
    # into rsockets, and falls back to the kernel's TCP without a word when rsocket()
    # fails.  So the test checks that it did not: the listen reached our CM (its
    # "listening on" line) and no TCP socket listens on the port.
    tcp_listener = _rstream_pair(lib, preload=[_rspreload()], args=["-T", "s"])
    assert not tcp_listener, "librspreload fell back to TCP: a TCP socket listened on the port"


def _serve_and_run(lib, server_args, client_args, server_exits=True):
    """A server on its NIC, waited for until our CM says it listens, then the client on
    the other NIC; both outputs.  A server that serves until killed (cmtime, rcopy: they
    loop for the next client by design) is killed once the client is done."""
    sip, cip, port = _alloc()
    fill = lambda args: [a.replace("{sip}", sip).replace("{port}", str(port)) for a in args]
    srv = _Server(lib, sip, fill(server_args))
    try:
        srv.wait_listening(port)
        cli = subprocess.run(fill(client_args), env=_env(lib, cip), capture_output=True, text=True,
                             timeout=TIMEOUT)
        if server_exits:
            src, sout = srv.finish()
        else:
            time.sleep(0.2)
            assert srv.p.poll() is None, "server exited:\n" + srv.text()
            srv.kill()
            src, sout = 0, srv.text()
    finally:
        _kill(srv.p)
    cout = cli.stdout + cli.stderr
    assert cli.returncode == 0 and src == 0, "client rc %s, server rc %s\n--- client\n%s\n--- server\n%s" % (
        cli.returncode, src, cout, sout)
    return cout, sout


def test_rdma_server_and_rdma_client(lib):
    # librdmacm's rdma_server/rdma_client: rdma_getaddrinfo, rdma_create_ep, one SEND
    # each way with rdma_post_send/rdma_get_recv_comp; each prints "end 0"
    cout, sout = _serve_and_run(lib, [_tool("rdma_server"), "-s", "{sip}", "-p", "{port}"],
                                [_tool("rdma_client"), "-s", "{sip}", "-p", "{port}"])
    assert "rdma_client: end 0" in cout, cout
    assert "rdma_server: end 0" in sout, sout


def test_rdma_xserver_and_rdma_xclient_rc(lib):
    # rdma_xclient posts 16 bytes IBV_SEND_INLINE on a QP that asked for no inline data:
    # it needs libmlx5's 60 bytes of inline room (hw/mlx5/qp_ctrl.c mx5_wqe_overhead).
    cout, sout = _serve_and_run(lib, [_tool("rdma_xserver"), "-p", "{port}"],
                                [_tool("rdma_xclient"), "-s", "{sip}", "-p", "{port}"])
    assert "rdma_xclient: end 0" in cout, cout
    assert "rdma_xserver: end 0" in sout, sout


def test_rdma_xserver_and_rdma_xclient_xrc(lib):
    # -c x: port space RDMA_PS_IB, an XRC_RECV QP and an XRC SRQ on the server (in the
    # XRC domain librdmacm opens with fd -1), an XRC_SEND QP on the client; the REQ says
    # transport XRC, the REP carries the target's QPN as its EE context number and the
    # SRQ number in its private data, and the client's 16-byte SEND names that SRQ.
    # Wireshark's InfiniBand dissector reads the REQ and REP as IBTA 12.6 lays them out
    # (a decoder that is not ours), and sees the SEND go as XRC SEND ONLY (0xa4).
    tshark = shutil.which("tshark")
    assert tshark, "tshark is not installed (tools/install-deps)"
    with tempfile.TemporaryDirectory() as d:
        pcap = os.path.join(d, "xrc.pcap")
        sip, cip, port = _alloc()
        cap = start_capture(tshark, "udp port 4791 and host %s" % sip, pcap)
        try:
            srv = _Server(lib, sip, [_tool("rdma_xserver"), "-c", "x", "-p", str(port)])
            try:
                srv.wait_listening(port)
                cli = subprocess.run([_tool("rdma_xclient"), "-c", "x", "-s", sip, "-p", str(port)],
                                     env=_env(lib, cip), capture_output=True, text=True, timeout=TIMEOUT)
                src, sout = srv.finish()
            finally:
                _kill(srv.p)
            time.sleep(0.5)
        finally:
            cap.send_signal(signal.SIGINT)
            cap.wait(timeout=15)
        cout = cli.stdout + cli.stderr
        assert cli.returncode == 0 and src == 0, "client rc %s, server rc %s\n--- client\n%s\n--- server\n%s" % (
            cli.returncode, src, cout, sout)
        assert "rdma_xclient: end 0" in cout, cout
        assert "rdma_xserver: end 0" in sout, sout
        out = subprocess.run([tshark, "-r", pcap, "-d", "udp.port==4791,infiniband", "-Y", "infiniband.mad",
                              "-T", "fields", "-E", "separator=,", "-e", "infiniband.mad.attributeid",
                              "-e", "infiniband.cm.req.transpsvctype", "-e", "infiniband.cm.req.ext_transport",
                              "-e", "infiniband.cm.rep.localqpn", "-e", "infiniband.cm.rep.localeecn",
                              "-e", "infiniband.cm.rep.srq", "-e", "_ws.malformed"],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        rows = [r.split(",") for r in out.stdout.splitlines() if r and not r.startswith("Running")]
        req = [r for r in rows if int(r[0], 16) == 0x10]
        rep = [r for r in rows if int(r[0], 16) == 0x13]
        assert req and rep, out.stdout
        assert int(req[0][1], 0) == 3 and int(req[0][2], 0) == 1, "REQ not XRC: %s" % req[0]
        assert int(rep[0][3], 16) == 0 and int(rep[0][4], 16) != 0 and int(rep[0][5], 0) == 1, \
            "REP without the target QPN as its EE context number, or SRQ clear: %s" % rep[0]
        assert all(r[6] == "" for r in rows), "tshark found a malformed MAD: %s" % out.stdout
        data = subprocess.run([tshark, "-r", pcap, "-d", "udp.port==4791,infiniband", "-Y",
                               "ip.src == %s and infiniband.bth.opcode == 0xa4" % cip, "-T", "fields",
                               "-e", "infiniband.bth.destqp"], capture_output=True, text=True, timeout=60)
        assert [l for l in data.stdout.splitlines() if l.startswith("0x")] == [rep[0][4]], \
            "no XRC SEND ONLY to the target QP %s:\n%s" % (rep[0][4], data.stdout)


def test_cmtime_ten_connections(lib):
    # cmtime times each step of 10 connections (the v44 server serves until killed)
    cout, _ = _serve_and_run(lib, [_tool("cmtime"), "-b", "{sip}", "-p", "{port}", "-c", "10"],
                             [_tool("cmtime"), "-s", "{sip}", "-p", "{port}", "-c", "10"], server_exits=False)
    for step in ("create id", "resolve addr", "resolve route", "create qp", "connect", "disconnect", "destroy"):
        assert re.search(r"^%s\s*:\s+[0-9.]+" % step, cout, re.M), "no %s row:\n%s" % (step, cout)


def test_rcopy_copies_a_file_intact(lib, tmp_path):
    # rcopy over rsockets: 1 MB of random bytes, compared (the server loops for the next file)
    src, dst = tmp_path / "src.bin", tmp_path / "dst.bin"
    src.write_bytes(os.urandom(1 << 20))
    cout, sout = _serve_and_run(lib, [_tool("rcopy"), "-p", "{port}"],
                                [_tool("rcopy"), str(src), "{sip}:" + str(dst), "-p", "{port}"], server_exits=False)
    assert "done" in cout, cout
    assert dst.read_bytes() == src.read_bytes(), "the copy differs"


def test_riostream_rdma_writes_through_riomap(lib):
    # riostream: rsockets with riomap/riowrite (the data goes as RDMA WRITEs)
    common = ["-p", "{port}", "-C", "100", "-S", "4096"]
    cout, sout = _serve_and_run(lib, [_tool("riostream"), "-b", "{sip}"] + common,
                                [_tool("riostream"), "-s", "{sip}"] + common)
    for out in (cout, sout):
        assert re.search(r"^custom\s+4k\s+100\s+1\s+800k\s", out, re.M), out


def test_peer_killed_outright_survivor_sees_retry_exceeded_in_bounded_time(lib):
    # SIGKILL leaves no code to run: the killed process's CM sends no DREQ (the
    # kernel's would).  The survivor learns of it from its QP: RDMA WRITEs to a peer
    # that no longer answers end with IBV_WC_RETRY_EXC_ERR (status 12) after
    # retry_cnt 7 retries of the CM's ACK timeout 14 (67 ms each: about 0.5 s).
    sip, cip, port = _alloc()
    args = [_tool("ib_write_bw"), "-R", "-D", "30", "-p", str(port)]
    srv = _Server(lib, sip, args)
    cli = None
    try:
        srv.wait_listening(port)
        cli = _spawn(lib, cip, args + [sip])
        # kill the server once the test connection carries traffic: the client has
        # printed its table header by then
        deadline = time.time() + 30
        while len(re.findall(r"rdma_cm: listening on [0-9.]+ port %d " % port, srv.text())) < 2:
            assert time.time() < deadline and srv.p.poll() is None, srv.text()
            time.sleep(0.05)
        time.sleep(1.5)
        assert cli.poll() is None, "client ended before the kill:\n" + "".join(cli.communicate())
        os.killpg(srv.p.pid, signal.SIGKILL)
        t0 = time.time()
        cout, cerr = cli.communicate(timeout=20)
        took = time.time() - t0
    finally:
        _kill(srv.p, cli)
    out = cout + cerr
    assert cli.returncode != 0, out
    assert "Completion with error" in out and "Failed status 12" in out, out
    assert took < 10, "the survivor took %.1f s to see the error" % took


@pytest.fixture(scope="module")
def idle_peer(tmp_path_factory):
    """cm_idle_peer.c, built with Debian's cc (tools/install-deps installs it)."""
    assert shutil.which("cc"), "cc is not installed (tools/install-deps)"
    exe = str(tmp_path_factory.mktemp("idle") / "cm_idle_peer")
    b = subprocess.run(["cc", "-std=c11", "-D_GNU_SOURCE", "-O1", "-Wall", "-Wextra", "-Werror",
                        os.path.join(os.path.dirname(os.path.abspath(__file__)), "cm_idle_peer.c"),
                        "-o", exe, "-ldl"], capture_output=True, text=True, timeout=120)
    assert b.returncode == 0, b.stderr
    return exe


def _idle_pair(lib, exe, client_args=()):
    """A connection between two cm_idle_peer processes that then only wait for a CM
    event; both have said "established" and named their guardian process."""
    sip, cip, port = _alloc()
    srv = _Server(lib, sip, [exe, "server", sip, str(port)])
    cli = None
    try:
        srv.wait_listening(port)
        cli = _Server(lib, cip, [exe, "client", sip, str(port)] + list(client_args))
        for p in (srv, cli):
            deadline = time.time() + 30
            while "established" not in "".join(p.out):
                assert time.time() < deadline and p.p.poll() is None, "not connected:\n" + srv.text() + cli.text()
                time.sleep(0.05)
            _guardian_pid(p)
        return srv, cli
    except BaseException:
        _kill(srv.p, cli.p if cli else None)
        raise


def _guardian_pid(proc):
    m = re.search(r"rdma_cm: guardian process (\d+) ", proc.text())
    assert m, "no guardian process named:\n" + proc.text()
    return int(m.group(1))


def _gone(pid):
    """The process has exited (no entry, or a zombie waiting for init)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


@pytest.mark.parametrize("killed", ["client", "server"])
def test_idle_survivor_of_a_killed_peer_is_disconnected_at_once(lib, idle_peer, killed):
    # On Linux a SIGKILLed process's connections still end on the wire: the kernel closes
    # its rdma_cm file and the CM sends a DREQ for each (cm.c cm_destroy_id, IBTA
    # 12.9.6), so a survivor that sends nothing gets DISCONNECTED at once.  Here the CM
    # dies with the process; its guardian process (rdma_cm_guard.h) sends that DREQ.  The
    # survivor posts no work: only the DREQ can tell it.
    srv, cli = _idle_pair(lib, idle_peer)
    victim, survivor = (cli, srv) if killed == "client" else (srv, cli)
    try:
        guard = _guardian_pid(victim)
        assert not _gone(guard), "the guardian %d is not running before the kill" % guard
        os.kill(victim.p.pid, signal.SIGKILL)
        t0 = time.time()
        rc = survivor.wait_exit(10)
        took = time.time() - t0
        deadline = time.time() + 5
        while not _gone(guard) and time.time() < deadline:
            time.sleep(0.05)
        guard_left = not _gone(guard)
    finally:
        _kill(srv.p, cli.p)
    out = survivor.text()
    assert rc == 0 and "event RDMA_CM_EVENT_DISCONNECTED" in out, \
        "the idle %s got no DISCONNECTED within 10 s of its peer's SIGKILL (rc %s):\n%s" % (
            "server" if killed == "client" else "client", rc, out)
    assert took < 2, "DISCONNECTED came %.1f s after the kill" % took
    assert not guard_left, "the killed process's guardian %d still runs 5 s after it sent" % guard


def test_a_peer_that_execs_another_program_ends_its_connections(lib, idle_peer):
    # librdmacm opens its rdma_cm file O_CLOEXEC, so on Linux an exec closes it and the
    # kernel's CM sends the DREQs; here the pipe the guardian watches is close-on-exec.
    # The client execs sleep(1) once connected and lives on; the server must be told.
    srv, cli = _idle_pair(lib, idle_peer, ["exec-sleep"])
    try:
        rc = srv.wait_exit(10)
        alive = cli.p.poll() is None
    finally:
        _kill(srv.p, cli.p)
    assert alive, "the client did not live on as sleep(1):\n" + cli.text()
    assert rc == 0 and "event RDMA_CM_EVENT_DISCONNECTED" in srv.text(), \
        "the server got no DISCONNECTED within 10 s of the client's exec (rc %s):\n%s" % (rc, srv.text())


def _ends_nothing_then_a_kill_does(lib, exe, client_arg, done_line, what):
    """The client does `client_arg` once connected and prints `done_line`; the server
    must see no event for 1.5 s after that, and DISCONNECTED once the client is
    SIGKILLed."""
    srv, cli = _idle_pair(lib, exe, [client_arg])
    try:
        deadline = time.time() + 10
        while done_line not in "".join(cli.out):
            assert time.time() < deadline and cli.p.poll() is None, cli.text()
            time.sleep(0.05)
        time.sleep(1.5)
        early = "event" in "".join(srv.out)
        os.kill(cli.p.pid, signal.SIGKILL)
        rc = srv.wait_exit(10)
    finally:
        _kill(srv.p, cli.p)
    assert not early, "the server saw an event when %s:\n%s" % (what, srv.text())
    assert rc == 0 and "event RDMA_CM_EVENT_DISCONNECTED" in srv.text(), srv.text()
    return cli.text()


def test_a_stray_close_of_the_guardians_pipe_ends_nothing(lib, idle_peer):
    # The guardian takes a hang-up of its pipe for an exec only when the process no
    # longer maps the records (/proc/PID/maps): a program that closes the pipe's write
    # end by mistake keeps its connections, and its SIGKILL still ends them.
    out = _ends_nothing_then_a_kill_does(lib, idle_peer, "close-pipes", "closed", "the client closed its pipes")
    assert re.search(r"closed [1-9]\d* pipes", out), out


def test_a_fork_child_exiting_does_not_end_its_parents_connections(lib, idle_peer):
    # The guardian watches its own process, not a child the process forks: a child that
    # exits (exit(3): atexit handlers and the library's destructor run) leaves the
    # parent's connection up; the parent's SIGKILL then ends it.
    _ends_nothing_then_a_kill_does(lib, idle_peer, "fork-child", "child exited", "the client's fork child exited")


def _gsi_packet(src, dst, sport, mad):
    """A RoCE v2 UD SEND to QP 1 with the GSI Q_Key carrying `mad`, as the UDP payload
    (BTH .. ICRC) that scapy computes for this source and destination (IBTA A17.3.3);
    the recipe of tests/interop/test_roce_hostile.py."""
    from scapy.all import IP, UDP, Raw, raw
    from scapy.contrib.roce import BTH
    deth = (0x80010000).to_bytes(4, "big") + (1).to_bytes(4, "big")
    bth = BTH(opcode=0x64, pkey=0xffff, dqpn=1, psn=0)
    pkt = IP(src=src, dst=dst, id=0, flags="DF", ttl=64) / UDP(sport=sport, dport=4791) / bth / Raw(deth + mad)
    return raw(pkt)[28:]


def _hostile_mads(rnd):
    """Malformed MADs of every kind the CM's decoder refuses, and well-formed CM MADs
    that name no connection of the listener's (the state machine must ignore them)."""
    def hdr(cls=7, ver=2, method=3, attr=0x10):
        return bytes([1, cls, ver, method]) + bytes(4) + rnd.randbytes(8) + attr.to_bytes(2, "big") + bytes(6)
    mads = []
    for _ in range(20):
        mads.append(rnd.randbytes(256))                                  # noise
        mads.append(hdr(attr=rnd.choice([0x10, 0x13, 0x17]))[:rnd.randrange(1, 255)])  # short
        mads.append(hdr(cls=rnd.choice([1, 3, 4, 0x81])) + rnd.randbytes(232))         # other class
        mads.append(hdr(ver=rnd.choice([0, 1, 3])) + rnd.randbytes(232))               # other version
        mads.append(hdr(attr=rnd.choice([0x19, 0x1a, 0xffff, 0])) + rnd.randbytes(232))  # LAP/APR/...
        # a REQ with a path MTU of 0 or above 5 (IBTA 12.6.5)
        body = bytearray(rnd.randbytes(232))
        body[50] = (rnd.choice([0, 6, 15]) << 4) | (body[50] & 0xf)
        mads.append(hdr(attr=0x10) + bytes(body))
        # decodable REP, RTU, REJ, DREQ, DREP, MRA, SIDR_REP for comm IDs nobody has
        mads.append(hdr(attr=rnd.choice([0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x18])) + rnd.randbytes(232))
    return mads


def test_hostile_mads_to_qp1_are_dropped_and_counted_and_the_cm_still_serves(lib):
    # MADs from the wire that the CM cannot read are dropped and counted (UVERBS_LOG=info:
    # "MAD of N bytes dropped ..., K so far"), never a crash; MADs for connections that
    # do not exist change nothing; the listener then serves a real client.
    import random
    import socket as so
    rnd = random.Random(31)
    sip, cip, port = _alloc()
    srv = _Server(lib, sip, [_tool("rping"), "-s", "-a", sip, "-p", str(port), "-v", "-C", "2"])
    s = so.socket(so.AF_INET, so.SOCK_DGRAM)
    try:
        srv.wait_listening(port)
        s.setsockopt(so.IPPROTO_IP, 10, 2)   # IP_MTU_DISCOVER = IP_PMTUDISC_DO: DF, ID 0
        s.bind(("127.0.0.1", 0))
        mads = _hostile_mads(rnd)
        for m in mads:
            s.sendto(_gsi_packet("127.0.0.1", sip, s.getsockname()[1], m), (sip, 4791))
        time.sleep(0.5)
        assert srv.p.poll() is None, "the server died under hostile MADs:\n" + srv.text()
        cli = _rping_client(lib, cip, sip, port, 2)
        src, sout = srv.finish()
    finally:
        s.close()
        _kill(srv.p)
    _check_rping(((src, sout), (cli.returncode, cli.stdout + cli.stderr)), 2)
    counts = [int(c) for c in re.findall(r"rdma_cm: MAD of \d+ bytes dropped .*?, (\d+) so far", sout)]
    # every malformed one of the 6 x 20 reaches the decoder (the emulator checks only
    # the transport headers) and is refused: noise may by chance decode, so allow 2
    assert counts and max(counts) >= 6 * 20 - 2, "drops counted: %s\n%s" % (counts[-3:], sout[-3000:])
    print("\nhostile MADs: %d sent, %d dropped as unreadable" % (len(mads), max(counts)))
