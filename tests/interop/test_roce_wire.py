# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""RoCE v2 packets built by our TX code (hw/emu/roce_tx.c), judged by tools we did
not write: tshark's infiniband dissector must decode every one with the fields we
meant and no malformed/expert error, and scapy.contrib.roce must compute the same
ICRC.  The packets come from the helper program interop_roce_packets (pcap mode), and,
when this machine lets us capture on lo, from a live run between two emulated ports'
sockets, so the IPv4 header the kernel really wrote (DF, ID 0) is what is checked.
"""
import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from lo_capture import wait_for_probe  # noqa: E402
from scapy.all import Ether, IP, UDP, raw, rdpcap  # noqa: E402
from scapy.contrib.roce import BTH, _bth_opcodes  # noqa: E402

BIN = os.path.join(os.environ.get("UVERBS_INTEROP_BIN", ""), "interop_roce_packets")
TSHARK = shutil.which("tshark")
DUMPCAP = shutil.which("dumpcap")

# Sub-dissectors that guess at opaque SEND payloads (RPC-over-RDMA and friends): our
# payloads are test patterns, not their protocols, so their verdicts are not about
# the InfiniBand headers under test.
PAYLOAD_GUESSERS = ["rpcordma", "smb_direct", "nvme-rdma", "iser"]

HEADERS = ["deth", "reth", "atomiceth", "aeth", "atomicacketh", "immdt", "ieth"]


def tshark_base(path):
    cmd = [TSHARK, "-r", path, "-d", "udp.port==4791,infiniband"]
    for p in PAYLOAD_GUESSERS:
        cmd += ["--disable-protocol", p]
    return cmd


def load_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def to_int(v):
    v = v.split(",")[0].strip()
    if v in ("True", "False"):
        return int(v == "True")
    return int(v, 0)


def tshark_rows(path, fields, display_filter=None):
    cmd = tshark_base(path) + ["-T", "fields", "-E", "separator=\t", "-E", "occurrence=f"]
    if display_filter:
        cmd += ["-Y", display_filter]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "can't disable" not in out.stderr, out.stderr
    rows = [line.split("\t") for line in out.stdout.splitlines()]
    return [dict(zip(fields, r + [""] * (len(fields) - len(r)))) for r in rows]


def check_with_tshark(path, expect, display_filter=None):
    fields = sorted({k for e in expect for k in e["fields"]} | {k for e in expect for k in e["bytes"]})
    fields += ["frame.protocols", "_ws.malformed", "_ws.expert.severity", "data.len"]
    fields += ["infiniband." + h for h in HEADERS]
    rows = tshark_rows(path, fields, display_filter)
    assert len(rows) == len(expect), "tshark saw %d packets, we sent %d" % (len(rows), len(expect))
    for e, r in zip(expect, rows):
        what = "packet %d (%s)" % (e["index"], e["name"])
        assert ":infiniband" in r["frame.protocols"], what + ": not decoded as InfiniBand"
        assert r["_ws.malformed"] == "", what + ": malformed"
        assert r["_ws.expert.severity"] == "", what + ": expert info %s" % r["_ws.expert.severity"]
        for k, v in e["fields"].items():
            assert r[k] != "", "%s: %s missing" % (what, k)
            assert to_int(r[k]) == v, "%s: %s is %s, we sent %s" % (what, k, r[k], v)
        for k, v in e["bytes"].items():
            assert r[k].split(",")[0].replace(":", "").lower() == v, "%s: %s is %s, we sent %s" % (
                what, k, r[k], v)
        for h in HEADERS:
            present = r["infiniband." + h] != ""
            assert present == (h in e["headers"]), "%s: header %s %s" % (
                what, h, "unexpected" if present else "missing")
        # the dissector hands data and pad bytes on as "data"
        data = to_int(r["data.len"]) if r["data.len"] else 0
        assert data == e["payload_len"] + e["fields"]["infiniband.bth.padcnt"], \
            "%s: %d bytes of data" % (what, data)
    return len(rows)


def scapy_icrc_ok(pkt):
    """Recompute the ICRC with scapy's own routine over a re-dissected copy."""
    q = Ether(raw(pkt))
    carried = raw(pkt)[-4:]
    return q[BTH].compute_icrc(None) == carried


def need_tshark():
    """tshark is this file's oracle: without it the tests fail, never pass unchecked
    (tools/install-deps installs it, as CI does)."""
    if TSHARK is None or DUMPCAP is None:
        pytest.fail("tshark (and its dumpcap) is not installed: these tests need its "
                    "InfiniBand dissector (apt-get install tshark, or tools/install-deps)")


def need_bin():
    if not os.path.exists(BIN):
        pytest.fail("helper program %s is not built (run through ctest, which sets "
                    "UVERBS_INTEROP_BIN)" % BIN)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    need_bin()
    d = tmp_path_factory.mktemp("roce")
    pcap, jsonl = str(d / "built.pcap"), str(d / "built.jsonl")
    out = subprocess.run([BIN, "pcap", pcap, jsonl], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    print(out.stdout.strip())
    return pcap, load_jsonl(jsonl)


def test_every_built_packet_decodes_in_tshark_with_our_fields(built):
    need_tshark()
    pcap, expect = built
    n = check_with_tshark(pcap, expect)
    opcodes = {e["fields"]["infiniband.bth.opcode"] for e in expect}
    print("roce interop: %d packets, %d opcodes decoded by tshark" % (n, len(opcodes)))
    # every opcode of hw/emu/roce_hdr.c's table: RC 23, UC 12, UD 2, CNP
    assert len(opcodes) == 38


def test_every_built_packet_has_the_icrc_scapy_computes(built):
    pcap, expect = built
    pkts = rdpcap(pcap)
    assert len(pkts) == len(expect)
    good = sum(1 for p in pkts if scapy_icrc_ok(p))
    print("roce interop: %d of %d ICRCs verified by scapy" % (good, len(pkts)))
    assert good == len(pkts)


def test_scapy_check_rejects_a_corrupted_packet(built):
    pcap, _ = built
    p = rdpcap(pcap)[0]
    b = bytearray(raw(p))
    b[-10] ^= 0x01
    assert not scapy_icrc_ok(Ether(bytes(b)))


def test_opcode_names_agree_with_scapy(built):
    _, expect = built
    known = 0
    for e in expect:
        op = e["fields"]["infiniband.bth.opcode"]
        if op in _bth_opcodes:
            known += 1
            assert _bth_opcodes[op] == e["name"], (op, e["name"])
    # scapy lacks the two SEND WITH INVALIDATE opcodes, and names 0x81 plain "CNP" too
    assert known == len(expect) - 2


def test_built_frames_carry_the_kernel_ipv4_header(built):
    pcap, expect = built
    for p, e in zip(rdpcap(pcap), expect):
        assert p[IP].id == 0 and p[IP].flags == "DF" and p[IP].ttl == 64
        assert p[UDP].dport == 4791 and p[UDP].sport == e["sport"]
        assert 0xC000 <= p[UDP].sport <= 0xFFFF
        # scapy's own checksums over our frame
        q = Ether(raw(p))
        del q[IP].chksum
        del q[UDP].chksum
        r = Ether(raw(q))
        assert r[IP].chksum == p[IP].chksum and r[UDP].chksum == p[UDP].chksum


def _start_capture(path):
    proc = subprocess.Popen([DUMPCAP, "-q", "-i", "lo", "-f", "udp dst port 4791", "-a", "duration:60",
                             "-w", path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if not wait_for_probe(path, proc):
        if proc.poll() is not None:
            pytest.fail("dumpcap could not capture on lo (root or CAP_NET_RAW needed): " +
                        proc.stderr.read().decode(errors="replace")[:200])
        _stop_capture(proc)
        pytest.fail("dumpcap on lo saw none of its probes in 20 s")
    return proc


def _stop_capture(proc):
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_live_loopback_packets_decode_and_verify(tmp_path):
    need_tshark()
    need_bin()
    cap, jsonl = str(tmp_path / "lo.pcapng"), str(tmp_path / "live.jsonl")
    proc = _start_capture(cap)
    try:
        out = subprocess.run([BIN, "live", jsonl], capture_output=True, text=True, timeout=120)
    finally:
        seen = wait_for_probe(cap, proc)   # every packet sent before it is in the file
        _stop_capture(proc)
    assert out.returncode == 0, out.stdout + out.stderr
    assert seen, "the capture stopped seeing packets before the run's end"
    print(out.stdout.strip())
    expect = load_jsonl(jsonl)
    src, dst = expect[0]["saddr"], expect[0]["daddr"]
    flt = "ip.src==%s && ip.dst==%s" % (src, dst)
    n = check_with_tshark(cap, expect, flt)
    mine = [p for p in rdpcap(cap) if IP in p and p[IP].src == src and p[IP].dst == dst]
    assert len(mine) == len(expect)
    for p, e in zip(mine, expect):
        # the header fields the ICRC covers and a receiver cannot see
        assert p[IP].id == 0, "kernel sent ID %d" % p[IP].id
        assert p[IP].flags == "DF"
        assert p[UDP].sport == e["sport"]
    good = sum(1 for p in mine if scapy_icrc_ok(p))
    print("roce live capture: %d packets decoded by tshark, %d ICRCs verified by scapy" % (n, good))
    assert good == len(mine)
