# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""A live capture of RC traffic between two emulated NICs, judged
by tools we did not write.

tshark captures on lo (`tshark -i lo -f 'udp port 4791' -w FILE`; needs root or the
capture capability -- CI runs as root) while interop_wire_traffic (tests/interop/
wire_traffic.c) runs a 4 KiB RDMA WRITE, a 4 KiB RDMA READ, a 64-byte SEND and a
FETCH_ADD between two emulated NICs at path MTU 1024, through the driver on both ends.
The NICs take 127.79.B.2 and .3 (B from the process id), addresses no other test
uses: with auto-assigned ones, a test running beside this one had the same pair before
or after it, within the capture, and its packets fell between "those two addresses"
(seen once at ctest -j3).
Then, on the packets between those two addresses:
  - every packet decodes as InfiniBand in tshark's dissector, nothing malformed;
  - the WRITE is FIRST, MIDDLE, MIDDLE, LAST with consecutive PSNs, RETH only on FIRST
    (VA, rkey and DMA length of the request) and AckReq on LAST;
  - the READ is one READ REQUEST (RETH, length 4096) answered by FIRST, MIDDLE, MIDDLE,
    LAST responses, AETH (an ACK syndrome) on FIRST and LAST and on neither MIDDLE
    (IBTA 9.7.5.1.3: AETH in the first, last and only READ responses);
  - the SEND is SEND ONLY, the atomic a FETCH_ADD answered by ATOMIC ACKNOWLEDGE with the
    original value; MSNs never go back and end at 4 after four messages;
  - every AETH carries the end-to-end credits of B's receive queue (3 posted receives,
    2 once the SEND took one);
  - every ICRC equals the one scapy.contrib.roce computes (and a corrupted copy does not);
  - every UDP source port is in 0xC000-0xFFFF (IBTA A17.5.1.1, as mlx5 does).
The test fails with a clear message when tshark is missing or the capture is empty.
"""
import json
import os
import select
import shutil
import signal
import subprocess
import time

import pytest

from lo_capture import wait_for_probe  # noqa: E402
from scapy.all import IP, UDP, Ether, raw, rdpcap  # noqa: E402
from scapy.contrib.roce import BTH  # noqa: E402

BIN = os.path.join(os.environ.get("UVERBS_INTEROP_BIN", ""), "interop_wire_traffic")
TSHARK = shutil.which("tshark")

# IBTA RC opcodes (Table 38)
SEND_ONLY = 0x04
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST = 0x06, 0x07, 0x08
READ_REQUEST = 0x0C
READ_RESP_FIRST, READ_RESP_MIDDLE, READ_RESP_LAST = 0x0D, 0x0E, 0x0F
ACKNOWLEDGE, ATOMIC_ACKNOWLEDGE, FETCH_ADD = 0x11, 0x12, 0x14
NAMES = {SEND_ONLY: "SEND_ONLY", WRITE_FIRST: "WRITE_FIRST", WRITE_MIDDLE: "WRITE_MIDDLE",
         WRITE_LAST: "WRITE_LAST", READ_REQUEST: "READ_REQUEST", READ_RESP_FIRST: "READ_RESP_FIRST",
         READ_RESP_MIDDLE: "READ_RESP_MIDDLE", READ_RESP_LAST: "READ_RESP_LAST",
         ACKNOWLEDGE: "ACKNOWLEDGE", ATOMIC_ACKNOWLEDGE: "ATOMIC_ACKNOWLEDGE", FETCH_ADD: "FETCH_ADD"}

# Payload dissectors that guess at opaque SEND payloads: not about the headers here.
PAYLOAD_GUESSERS = ["rpcordma", "smb_direct", "nvme-rdma", "iser"]

FIELDS = ["frame.number", "frame.protocols", "_ws.malformed", "ip.src", "ip.dst", "udp.srcport",
          "udp.dstport", "infiniband.bth.opcode", "infiniband.bth.psn", "infiniband.bth.a",
          "infiniband.bth.destqp", "infiniband.reth", "infiniband.reth.va", "infiniband.reth.r_key",
          "infiniband.reth.dmalen", "infiniband.aeth", "infiniband.aeth.syndrome", "infiniband.aeth.msn",
          "infiniband.atomiceth", "infiniband.atomiceth.swapdt", "infiniband.atomicacketh.origremdt"]


def to_int(v):
    v = v.split(",")[0].strip()
    if v in ("True", "False"):
        return int(v == "True")
    return int(v, 0)


def start_tshark(path):
    """Start tshark on lo and return once it says it is capturing."""
    if TSHARK is None:
        pytest.fail("tshark is not installed: this test needs it to capture and dissect the "
                    "RoCE traffic (apt-get install tshark; run as root)")
    proc = subprocess.Popen([TSHARK, "-i", "lo", "-f", "udp port 4791", "-w", path],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen, deadline = b"", time.time() + 20
    while time.time() < deadline:
        if proc.poll() is not None:
            seen += proc.stderr.read()
            pytest.fail("tshark could not capture on lo (root or CAP_NET_RAW needed): " +
                        seen.decode(errors="replace")[-400:])
        r, _, _ = select.select([proc.stderr], [], [], 0.2)
        if r:
            chunk = os.read(proc.stderr.fileno(), 4096)
            seen += chunk
            if b"Capturing on" in seen:
                if wait_for_probe(path, proc):
                    return proc
                break
    stop_tshark(proc)
    pytest.fail("tshark did not start capturing (or saw none of its probes) within 20 s: " +
                seen.decode(errors="replace")[-400:])


def stop_tshark(proc):
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def tshark_rows(path, flt):
    cmd = [TSHARK, "-r", path, "-d", "udp.port==4791,infiniband", "-T", "fields", "-E", "separator=\t",
           "-E", "occurrence=f", "-Y", flt]
    for p in PAYLOAD_GUESSERS:
        cmd += ["--disable-protocol", p]
    for f in FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, "tshark -r failed: " + out.stderr
    rows = [line.split("\t") for line in out.stdout.splitlines()]
    return [dict(zip(FIELDS, r + [""] * (len(FIELDS) - len(r)))) for r in rows]


def describe(rows):
    return "\n".join("  #%s %s->%s %s psn %s a=%s aeth=%s" % (
        r["frame.number"], r["ip.src"], r["ip.dst"],
        NAMES.get(to_int(r["infiniband.bth.opcode"]), r["infiniband.bth.opcode"]) if r["infiniband.bth.opcode"]
        else "?", r["infiniband.bth.psn"], r["infiniband.bth.a"], r["infiniband.aeth.syndrome"]) for r in rows)


def icrc_ok(pkt_bytes):
    """scapy.contrib.roce's ICRC over a re-dissected copy equals the carried one."""
    q = Ether(pkt_bytes)
    return q[BTH].compute_icrc(None) == pkt_bytes[-4:]


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    if not os.path.exists(BIN):
        pytest.fail("helper program %s is not built (run through ctest, which sets UVERBS_INTEROP_BIN)" % BIN)
    d = tmp_path_factory.mktemp("live")
    cap, js = str(d / "lo.pcapng"), str(d / "traffic.json")
    proc = start_tshark(cap)
    try:
        out = subprocess.run([BIN, js], capture_output=True, text=True, timeout=120)
    finally:
        seen = wait_for_probe(cap, proc)   # every packet sent before it is in the file
        stop_tshark(proc)
    assert out.returncode == 0, "traffic program failed:\n" + out.stdout + out.stderr
    assert seen, "the capture stopped seeing packets before the traffic's end"
    print(out.stdout.strip())
    with open(js) as f:
        info = json.load(f)
    assert os.path.exists(cap) and os.path.getsize(cap) > 0, "tshark wrote no capture file"
    a, b = info["a_ip"], info["b_ip"]
    flt = "(ip.src==%s && ip.dst==%s) || (ip.src==%s && ip.dst==%s)" % (a, b, b, a)
    rows = tshark_rows(cap, flt)
    assert rows, ("the capture is empty: tshark saw no packet between %s and %s on lo "
                  "(is lo up, and was the capture running?)" % (a, b))
    pkts = [p for p in rdpcap(cap) if IP in p and {p[IP].src, p[IP].dst} == {a, b}]
    assert len(pkts) == len(rows), "scapy read %d packets, tshark %d" % (len(pkts), len(rows))
    return info, rows, pkts


def test_every_packet_decodes_as_infiniband(capture):
    info, rows, _ = capture
    for r in rows:
        assert ":infiniband" in r["frame.protocols"], "frame %s not decoded as InfiniBand: %s" % (
            r["frame.number"], r["frame.protocols"])
        assert r["_ws.malformed"] == "", "frame %s is malformed" % r["frame.number"]
        assert r["infiniband.bth.opcode"] != "" and r["infiniband.bth.psn"] != ""
        assert to_int(r["udp.dstport"]) == 4791
    print("live capture: %d packets between %s and %s, all InfiniBand" % (len(rows), info["a_ip"], info["b_ip"]))


def requests(info, rows):
    return [r for r in rows if r["ip.src"] == info["a_ip"] and to_int(r["infiniband.bth.destqp"]) == info["b_qpn"]]


def responses(info, rows):
    return [r for r in rows if r["ip.src"] == info["b_ip"] and to_int(r["infiniband.bth.destqp"]) == info["a_qpn"]]


def test_requests_are_the_four_operations_segmented_at_mtu_1024(capture):
    info, rows, _ = capture
    req = requests(info, rows)
    want = [WRITE_FIRST, WRITE_MIDDLE, WRITE_MIDDLE, WRITE_LAST, READ_REQUEST, SEND_ONLY, FETCH_ADD]
    got = [to_int(r["infiniband.bth.opcode"]) for r in req]
    assert got == want, "requests A->B:\n%s\nexpected %s" % (describe(req), [NAMES[o] for o in want])
    psn0 = info["a_psn"]
    # a READ of 4 KiB at MTU 1024 takes four PSNs (one per response packet)
    want_psn = [psn0, psn0 + 1, psn0 + 2, psn0 + 3, psn0 + 4, psn0 + 8, psn0 + 9]
    assert [to_int(r["infiniband.bth.psn"]) for r in req] == want_psn, describe(req)


def test_write_carries_reth_only_on_first_and_ackreq_on_last(capture):
    info, rows, _ = capture
    w = requests(info, rows)[:4]
    first = w[0]
    assert first["infiniband.reth"] != "", "WRITE_FIRST without RETH"
    assert to_int(first["infiniband.reth.va"]) == info["write_va"]
    assert to_int(first["infiniband.reth.r_key"]) == info["b_rkey"]
    assert to_int(first["infiniband.reth.dmalen"]) == 4096
    for r in w[1:]:
        assert r["infiniband.reth"] == "", "RETH on %s (frame %s)" % (
            NAMES[to_int(r["infiniband.bth.opcode"])], r["frame.number"])
    assert to_int(w[3]["infiniband.bth.a"]) == 1, "WRITE_LAST without AckReq"
    print("WRITE 4 KiB: %s, AckReq %s" % (
        ", ".join(NAMES[to_int(r["infiniband.bth.opcode"])] for r in w),
        [to_int(r["infiniband.bth.a"]) for r in w]))


def test_read_gets_four_responses_with_aeth_on_first_and_last(capture):
    info, rows, _ = capture
    req = requests(info, rows)[4]
    assert req["infiniband.reth"] != "" and to_int(req["infiniband.reth.dmalen"]) == 4096
    assert to_int(req["infiniband.reth.va"]) == info["read_va"]
    resp = [r for r in responses(info, rows)
            if to_int(r["infiniband.bth.opcode"]) in (READ_RESP_FIRST, READ_RESP_MIDDLE, READ_RESP_LAST)]
    got = [to_int(r["infiniband.bth.opcode"]) for r in resp]
    assert got == [READ_RESP_FIRST, READ_RESP_MIDDLE, READ_RESP_MIDDLE, READ_RESP_LAST], describe(resp)
    psn = to_int(req["infiniband.bth.psn"])
    assert [to_int(r["infiniband.bth.psn"]) for r in resp] == [psn, psn + 1, psn + 2, psn + 3], describe(resp)
    for r, has in zip(resp, [True, False, False, True]):
        what = "%s (frame %s)" % (NAMES[to_int(r["infiniband.bth.opcode"])], r["frame.number"])
        assert (r["infiniband.aeth"] != "") == has, what + (" without AETH" if has else " with an AETH")
        if has:
            assert to_int(r["infiniband.aeth.syndrome"]) >> 5 == 0, what + ": AETH is not an ACK"
    print("READ 4 KiB: 4 responses, AETH on %s" % [r["infiniband.aeth"] != "" for r in resp])


def test_acks_and_atomic_answer_carry_increasing_msns(capture):
    info, rows, _ = capture
    resp = responses(info, rows)
    aeths = [r for r in resp if r["infiniband.aeth"] != ""]
    assert aeths, "no AETH from the responder"
    msns = [to_int(r["infiniband.aeth.msn"]) for r in aeths]
    assert msns == sorted(msns), "MSN went back:\n" + describe(aeths)
    for r in aeths:
        assert to_int(r["infiniband.aeth.syndrome"]) >> 5 == 0, "a NAK or RNR NAK in a clean run:\n" + describe(
            aeths)
    atomic = [r for r in resp if to_int(r["infiniband.bth.opcode"]) == ATOMIC_ACKNOWLEDGE]
    assert len(atomic) == 1, describe(resp)
    assert to_int(atomic[0]["infiniband.atomicacketh.origremdt"]) == 1000
    assert to_int(atomic[0]["infiniband.aeth.msn"]) == 4, "four messages done, MSN %s" % atomic[0][
        "infiniband.aeth.msn"]
    fa = [r for r in requests(info, rows) if to_int(r["infiniband.bth.opcode"]) == FETCH_ADD][0]
    assert to_int(fa["infiniband.atomiceth.swapdt"]) == 5
    # end-to-end credits (IBTA 9.7.7.2): B had three receives posted; the SEND took one
    # (the fourth message), so AETHs before it carry code 3 and the later ones code 2
    for r in aeths:
        msn = to_int(r["infiniband.aeth.msn"])
        want = 3 if msn < 3 else 2
        assert to_int(r["infiniband.aeth.syndrome"]) & 0x1f == want, \
            "credit code %d, expected %d after %d messages:\n%s" % (
                to_int(r["infiniband.aeth.syndrome"]) & 0x1f, want, msn, describe(aeths))
    # the WRITE's last packet asked for an ACK: one must name its PSN
    acks = [to_int(r["infiniband.bth.psn"]) for r in resp if to_int(r["infiniband.bth.opcode"]) == ACKNOWLEDGE]
    assert info["a_psn"] + 3 in acks, "no ACK for WRITE_LAST (PSN %d); ACKs %s" % (info["a_psn"] + 3, acks)


def test_every_icrc_verifies_with_scapy(capture):
    _, _, pkts = capture
    bad = [i for i, p in enumerate(pkts) if not icrc_ok(raw(p))]
    assert not bad, "ICRC differs from scapy's on packets %s" % bad
    # the check can fail: one flipped payload bit must be caught
    b = bytearray(raw(pkts[0]))
    b[-5] ^= 0x01
    assert not icrc_ok(bytes(b)), "scapy's ICRC check accepted a corrupted packet"
    print("live capture: %d ICRCs verified by scapy.contrib.roce" % len(pkts))


def test_udp_source_ports_carry_flow_entropy_range(capture):
    _, _, pkts = capture
    ports = sorted({p[UDP].sport for p in pkts})
    assert all(0xC000 <= s <= 0xFFFF for s in ports), "source ports outside 0xC000-0xFFFF: %s" % ports
