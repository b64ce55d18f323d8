# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Packets crafted with scapy (not with our TX code) and sent over loopback to an
emulated port's socket, judged by our parser (interop_roce_packets listen): a valid
scapy-made RC SEND is accepted with scapy's ICRC, and each hostile variant is dropped
for its own reason.  This is also the recipe later transport tests use to inject
hostile packets: scapy builds IPv4(ID 0, DF)/UDP/BTH/..., computes the ICRC, and the
UDP payload leaves from a socket with IP_PMTUDISC_DO bound to the source port the
ICRC was computed for.
"""
import json
import os
import socket
import subprocess

import pytest

from scapy.all import IP, UDP, Raw, raw
from scapy.contrib.roce import BTH, AETH

BIN = os.path.join(os.environ.get("UVERBS_INTEROP_BIN", ""), "interop_roce_packets")
IP_MTU_DISCOVER, IP_PMTUDISC_DO = 10, 2   # <linux/in.h>
SRC = "127.0.0.1"


def roce_bytes(src, dst, sport, bth, rest=b"", icrc=True):
    """The UDP payload (BTH .. ICRC) as scapy builds it inside the header the kernel
    will write: ID 0 and DF (IP_PMTUDISC_DO on an unconnected socket), TTL 64."""
    pkt = IP(src=src, dst=dst, id=0, flags="DF", ttl=64) / UDP(sport=sport, dport=4791) / bth / Raw(rest)
    b = raw(pkt)[28:]
    if not icrc:
        b = b[:-4] + bytes([b[-4] ^ 0xff]) + b[-3:]
    return b


@pytest.fixture()
def sender():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
    s.bind((SRC, 0))
    yield s
    s.close()


def run_listener(tmp_path, packets, sender):
    if not os.path.exists(BIN):
        pytest.fail("helper program %s is not built (run through ctest)" % BIN)
    out = str(tmp_path / "verdicts.jsonl")
    proc = subprocess.Popen([BIN, "listen", str(len(packets)), out], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().split()
        assert line and line[0] == "listening", line
        dst = line[1]
        sport = sender.getsockname()[1]
        for make in packets:
            sender.sendto(make(SRC, dst, sport), (dst, 4791))
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with open(out) as f:
        return [json.loads(x) for x in f]


def send_only(**kw):
    f = dict(opcode=0x04, pkey=0xFFFF, dqpn=0x11, psn=5, ackreq=1)
    f.update(kw)
    return BTH(**f)


def test_scapy_packets_are_judged_each_for_its_own_fault(tmp_path, sender):
    cases = [
        # (what, builder, verdict)
        ("valid RC SEND ONLY", lambda s, d, p: roce_bytes(s, d, p, send_only(padcount=0), b"abcdefgh"), "none"),
        ("bad ICRC", lambda s, d, p: roce_bytes(s, d, p, send_only(), b"abcdefgh", icrc=False), "bad_icrc"),
        ("TVer 1", lambda s, d, p: roce_bytes(s, d, p, send_only(version=1), b"abcdefgh"), "bad_tver"),
        ("reserved opcode 0x15", lambda s, d, p: roce_bytes(s, d, p, send_only(opcode=0x15), b"x" * 32),
         "bad_opcode"),
        ("RD opcode", lambda s, d, p: roce_bytes(s, d, p, send_only(opcode=0x44), b"x" * 32), "bad_opcode"),
        ("ACK with data", lambda s, d, p: roce_bytes(s, d, p, send_only(opcode=0x11) / AETH(syndrome=0x1f, msn=1),
                                                     b"data"), "bad_length"),
        ("pad count beyond payload", lambda s, d, p: roce_bytes(s, d, p, send_only(padcount=3), b"ab"), "bad_pad"),
        ("shorter than a BTH", lambda s, d, p: b"\x04\x00\xff\xff\x00\x00\x00", "short"),
        ("RDMA WRITE FIRST without its RETH",
         lambda s, d, p: roce_bytes(s, d, p, send_only(opcode=0x06), b"\x00" * 8), "short"),
        # the wire layer passes these on intact: the transport engine drops them
        ("bad P_Key", lambda s, d, p: roce_bytes(s, d, p, send_only(pkey=0x1234), b"abcd"), "none"),
        ("unknown QPN", lambda s, d, p: roce_bytes(s, d, p, send_only(dqpn=0xFFFFFE), b"abcd"), "none"),
    ]
    verdicts = run_listener(tmp_path, [c[1] for c in cases], sender)
    assert len(verdicts) == len(cases)
    for (what, _, want), got in zip(cases, verdicts):
        assert got["verdict"] == want, "%s: %s" % (what, got)
    assert verdicts[0]["payload_len"] == 8 and verdicts[0]["sport"] == sender.getsockname()[1]
    assert verdicts[9]["pkey"] == 0x1234
    assert verdicts[10]["dqpn"] == 0xFFFFFE
    print("roce hostile: %d scapy packets judged as expected" % len(cases))
