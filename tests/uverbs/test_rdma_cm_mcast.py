# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Debian's mckey (rdmacm-utils) over libuverbs.so preloaded: rdma_cm multicast between
emulated NICs (docs/architecture.md sections 10 and 18).

Each process has its own emulated ConnectX on its own loopback address.  Receivers join
an IPv4 group with rdma_join_multicast (our CM answers JOIN_IP_MCAST with the MGID
::ffff:G, QPN 0xFFFFFF and Q_Key 0x01234567, librdmacm attaches the QP with
ibv_attach_mcast, the NIC joins G on loopback); the sender joins too and sends UD
messages to the group.  mckey's receiver counts its receive completions and ends only
when all of them came, so every receiver's "return status 0" is the proof of delivery;
an outer timeout bounds each process.  mckey sleeps 3 s after joining ("to give SM
chance to configure switches"), so each run takes about 4 s.

The library comes from $UVERBS_LIB (the regular build).  A missing library or tool is a
failure.
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from logged_proc import LoggedProc, start_capture
from preload import Addresses, lib  # noqa: F401 (lib is a fixture)

TIMEOUT = 30
COUNT = 10

_alloc = Addresses(17900)


def _tool(name):
    path = shutil.which(name)
    assert path, "%s is not installed (Debian package rdmacm-utils; tools/install-deps)" % name
    return path


class _Proc(LoggedProc):
    """An mckey process, its output collected as it comes (stdout is a pipe, so mckey's
    printf output comes at exit; the CM's log line on stderr comes at once)."""

    def __init__(self, lib, ip, args):
        env = dict(os.environ)
        env["LD_PRELOAD"] = lib
        env["UVERBS_DEVICES"] = "emu:ip=%s" % ip
        env["UVERBS_LOG"] = "info"
        super().__init__(args, env)

    def wait_joined(self, group, count=1, timeout=20):
        self.wait_err_line(re.escape("rdma_cm: joined multicast group %s" % group), "joined %s" % group,
                           count, timeout)

    def finish(self):
        return self.wait_exit(TIMEOUT)


def _mckey(lib, ip, group, sender, conns=1):
    args = [_tool("mckey"), "-m", group, "-b", ip, "-C", str(COUNT), "-c", str(conns)] + (["-s"] if sender else [])
    return _Proc(lib, ip, args)


def _run(lib, sender_ip, receivers, group):
    """Receivers first (each waits for its joins), then the sender; every process must end
    with "return status 0", the receivers having had all COUNT messages on each of their
    QPs.  receivers: addresses, or (address, QPs on that NIC) pairs: mckey -c N makes N
    IDs, each with its own UD QP attached to the group."""
    procs = []
    try:
        for ip in receivers:
            ip, conns = ip if isinstance(ip, tuple) else (ip, 1)
            r = _mckey(lib, ip, group, False, conns)
            procs.append(r)
            r.wait_joined(group, conns)
        s = _mckey(lib, sender_ip, group, True)
        procs.append(s)
        for p in procs:
            rc = p.finish()
            out = p.text()
            assert rc == 0, "mckey on %s (%s) rc %s:\n%s" % (
                p.p.args[4], "sender" if p is s else "receiver", rc, out)
            assert "joined dgid: ::ffff:%s" % group in out, out
            assert "data transfers complete" in out and "return status 0" in out, out
        return procs
    finally:
        for p in procs:
            p.kill()


def _group(ip):
    # one group per test and address pair: 239.<net>.<b>.1
    a = ip.split(".")
    return "239.%s.%s.1" % (a[1], a[2])


def test_mckey_one_sender_three_receivers_on_two_other_nics(lib):
    # two receiving QPs on one NIC (mckey -c 2), one on another: each gets every message
    sip, r1, _ = _alloc()
    r2, _, _ = _alloc()
    _run(lib, sip, [(r1, 2), r2], _group(sip))


def test_mckey_the_other_way(lib):
    # the receiver's address of the test above sends, the sender's receives
    r1, sip, _ = _alloc()
    _run(lib, sip, [r1], _group(sip))


def test_mckey_packets_are_roce_v2_to_the_group_in_tshark(lib):
    tshark = shutil.which("tshark")
    assert tshark, "tshark is not installed (tools/install-deps)"
    sip, rip, _ = _alloc()
    group = _group(sip)
    with tempfile.TemporaryDirectory() as d:
        pcap = os.path.join(d, "mc.pcap")
        cap = start_capture(tshark, "udp port 4791 and dst host %s" % group, pcap)
        try:
            _run(lib, sip, [rip], group)
            time.sleep(0.5)
        finally:
            cap.send_signal(signal.SIGINT)
            cap.wait(timeout=15)
        out = subprocess.run([tshark, "-r", pcap, "-d", "udp.port==4791,infiniband", "-T", "fields",
                              "-E", "separator=,", "-e", "ip.src", "-e", "ip.dst", "-e", "infiniband.bth.opcode",
                              "-e", "infiniband.bth.destqp", "-e", "infiniband.deth.q_key",
                              "-e", "infiniband.deth.srcqp", "-e", "_ws.malformed", "-e", "_ws.expert"],
                             capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rows = [r.split(",") for r in out.stdout.splitlines() if r and not r.startswith("Running")]
    assert len(rows) == COUNT, "expected %d multicast packets:\n%s" % (COUNT, out.stdout)
    for r in rows:
        assert r[0] == sip and r[1] == group, r
        # UD SEND only with immediate (IBTA 9.2 opcode 0x65: mckey sends with imm)
        assert int(r[2]) == 0x65, "opcode %s" % r
        assert int(r[3], 16) == 0xffffff, "BTH DestQP is not the multicast QPN: %s" % r
        assert int(r[4], 16) == 0x01234567, "DETH Q_Key is not RDMA_UDP_QKEY: %s" % r
        assert r[6] == "" and r[7] == "", "tshark found the packet malformed: %s" % r
