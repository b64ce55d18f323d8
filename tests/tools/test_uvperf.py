# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""uvperf on the emulated ConnectX: latency and bandwidth in one process (--loopback, two
devices) and in two processes (TCP side channel), with --verify passing, a deliberately
corrupted byte failing with its offset named, and raw CSVs holding the requested samples."""
import os
import re
import time

import pytest

from uvtools import parse_json, read_csv, uvperf, uvperf_pair

ITERS = 200
WARM = 20


def lat_results(doc):
    return {(r["op"], r["size"]): r for r in doc["results"] if r["mode"] == "latency"}


def check_latency(r, samples):
    assert r["samples"] == samples
    assert 0 < r["min_ns"] <= r["median_ns"] <= r["p95_ns"] <= r["p99_ns"] <= r["p999_ns"] <= r["max_ns"]
    assert r["post_median_ns"] > 0 and r["poll_median_ns"] >= 0


def test_loopback_latency_write_read_send_verified_with_full_csv(tmp_path):
    csv = str(tmp_path / "lat.csv")
    rc, out, err = uvperf("--loopback", "--op", "write,read,send", "--sizes", "1024,4096", "--iters", str(ITERS),
                          "--warmup", str(WARM), "--verify", "--csv", csv, "--json")
    assert rc == 0, err
    doc = parse_json(out)
    assert doc["processes"] == 1 and doc["verify"] is True and doc["mtu"] == 1024
    assert doc["device"]["part_id"] == 4121            # ConnectX-5 Ex, from the device's caps
    res = lat_results(doc)
    assert sorted(res) == sorted((o, s) for o in ("WRITE", "READ", "SEND") for s in (1024, 4096))
    for (op, size), r in res.items():
        check_latency(r, ITERS)
        assert r["verified"] is True
        # Every message, warm-up included, was checked on arrival.
        assert r["verified_bytes"] == (ITERS + WARM) * size, (op, size)
    meta, cols, rows = read_csv(csv)
    assert cols == ["op", "size", "iter", "total_ns", "post_ns", "poll_ns"]
    assert meta["mtu"] == "1024" and meta["processes"] == "1" and meta["verify"] == "xxh3"
    assert "ConnectX-5 Ex" in meta["device"] and meta["build"]
    for op in ("WRITE", "READ", "SEND"):
        for size in (1024, 4096):
            mine = [r for r in rows if r["op"] == op and int(r["size"]) == size]
            assert len(mine) == ITERS
            assert [int(r["iter"]) for r in mine] == list(range(ITERS))
            for r in mine:
                # post + poll is the total up to the clock reads between them.
                assert int(r["post_ns"]) + int(r["poll_ns"]) <= int(r["total_ns"]) + 1000
    # The CSV holds the same samples the summary was made of.
    w = sorted(int(r["total_ns"]) for r in rows if r["op"] == "WRITE" and r["size"] == "4096")
    assert w[0] == res[("WRITE", 4096)]["min_ns"] and w[-1] == res[("WRITE", 4096)]["max_ns"]
    assert w[ITERS // 2 - 1] == res[("WRITE", 4096)]["median_ns"]        # nearest rank


def test_loopback_bandwidth_two_qps_per_qp_cqs_verified():
    rc, out, err = uvperf("--loopback", "--mode", "bw", "--op", "write,read,send", "--sizes", "1024,4096",
                          "--iters", "300", "--warmup", "20", "--qps", "2", "--depth", "8", "--per-qp-cq",
                          "--verify", "--json")
    assert rc == 0, err
    doc = parse_json(out)
    rows = [r for r in doc["results"] if r["mode"] == "bandwidth"]
    assert len(rows) == 6
    for r in rows:
        assert r["qps"] == 2 and r["depth"] == 8
        assert r["messages"] == 600 and r["bytes"] == 600 * r["size"]
        assert r["seconds"] > 0 and r["gbit_s"] > 0
        assert abs(r["gbit_s"] - r["bytes"] * 8 / r["seconds"] / 1e9) < 1e-3 * r["gbit_s"] + 1e-6
        assert abs(r["msg_s"] - r["messages"] / r["seconds"]) < 1e-3 * r["msg_s"] + 1e-6
        assert r["verified"] is True and r["verified_bytes"] == 2 * 320 * r["size"]


def test_loopback_bandwidth_by_byte_count():
    rc, out, err = uvperf("--loopback", "--mode", "bw", "--op", "write", "--size", "4096", "--bytes", "1M",
                          "--depth", "4", "--warmup", "0", "--json")
    assert rc == 0, err
    r = parse_json(out)["results"][0]
    assert r["messages"] == 256 and r["bytes"] == 1 << 20 and r["verified"] is None


def test_loopback_atomics_return_every_previous_value():
    rc, out, err = uvperf("--loopback", "--op", "fadd,cswap", "--iters", "100", "--warmup", "10", "--verify", "--json")
    assert rc == 0, err
    res = lat_results(parse_json(out))
    assert sorted(res) == [("CSWAP", 8), ("FADD", 8)]
    for r in res.values():
        check_latency(r, 100)
        assert r["verified"] is True and r["verified_bytes"] == 110 * 8


def test_two_processes_latency_and_bandwidth_verified(tmp_path):
    csv, bwcsv = str(tmp_path / "lat.csv"), str(tmp_path / "bw.csv")
    rc, out, err, src, serr = uvperf_pair(
        "127.0.0.141", "127.0.0.142",
        ["--mode", "lat,bw", "--op", "write,read,send", "--sizes", "1024,4096", "--iters", str(ITERS),
         "--warmup", str(WARM), "--depth", "1", "--verify", "--csv", csv, "--bw-csv", bwcsv, "--json"])
    assert rc == 0, err
    assert src == 0, serr
    doc = parse_json(out)
    assert doc["processes"] == 2
    assert doc["device"]["uri"] == "emu:ip=127.0.0.142" and doc["peer"]["uri"] == "emu:ip=127.0.0.141"
    res = lat_results(doc)
    assert len(res) == 6
    for r in res.values():
        check_latency(r, ITERS)
        assert r["verified"] is True
    bws = [r for r in doc["results"] if r["mode"] == "bandwidth"]
    # depth 1 is a message rate: no Gbit/s is reported for it
    assert len(bws) == 6 and all(r["verified"] is True and r["gbit_s"] is None and r["msg_s"] > 0 for r in bws)
    meta, _, rows = read_csv(csv)
    assert meta["processes"] == "2" and len(rows) == 6 * ITERS
    meta, cols, rows = read_csv(bwcsv)
    assert cols[:3] == ["op", "size", "qps"] and len(rows) == 6 and all(r["verified"] == "yes" for r in rows)
    assert all(r["gbit_s"] == "" and float(r["msg_s"]) > 0 for r in rows)


def test_two_processes_table_is_printed():
    rc, out, err, src, serr = uvperf_pair(
        "127.0.0.143", "127.0.0.144",
        ["--op", "write,send", "--sizes", "1024", "--iters", "100", "--warmup", "10", "--verify"])
    assert rc == 0 and src == 0, err + serr
    assert "two processes" in out and "emu:ip=127.0.0.144" in out and "emu:ip=127.0.0.141" not in out
    rows = re.findall(r"^(WRITE|SEND)\s+1024\s+100\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+yes$",
                      out, re.M)
    assert [r[0] for r in rows] == ["WRITE", "SEND"]
    assert "Gbit/s" not in out          # latency is never turned into a throughput


def test_corrupted_write_fails_loudly_naming_the_offset(tmp_path):
    rc, out, err = uvperf("--loopback", "--op", "write", "--size", "4096", "--iters", "50", "--warmup", "5",
                          "--verify", "--test-corrupt-byte", "5000", "--json")
    assert rc == 1
    assert re.search(r"first bad byte at buffer offset 5000 \(message offset 904\): got 0x[0-9a-f]{2}, expected 0x[0-9a-f]{2}", err)
    r = parse_json(out)["results"][0]
    assert r["verified"] is False and "offset 5000" in r["verify_error"]


def test_corrupted_read_between_two_processes_fails():
    # READ: the server is the source, so the damage is done there and found by the client.
    rc, out, err, src, serr = uvperf_pair(
        "127.0.0.145", "127.0.0.146",
        ["--op", "read", "--size", "1024", "--iters", "50", "--warmup", "0", "--verify", "--test-corrupt-byte", "3"])
    assert rc == 1, err
    assert "first bad byte at buffer offset 3 (message offset 3)" in err
    assert "FAILED" in out


def test_corrupted_send_in_bandwidth_mode_fails():
    rc, out, err = uvperf("--loopback", "--mode", "bw", "--op", "send", "--size", "1024", "--iters", "64",
                          "--warmup", "0", "--depth", "4", "--verify", "--test-corrupt-byte", "2048")
    assert rc == 1
    assert "QP 0 message 2: first bad byte at buffer offset 2048 (message offset 0)" in err


def test_without_verify_the_corruption_goes_unnoticed():
    # The control for the tests above: the same damage, and no one looks.
    rc, out, err = uvperf("--loopback", "--op", "write", "--size", "4096", "--iters", "20", "--warmup", "0",
                          "--test-corrupt-byte", "5000", "--json")
    assert rc == 0, err
    assert parse_json(out)["results"][0]["verified"] is None


@pytest.mark.parametrize("args", [["--loopback", "--op", "bogus"], ["--loopback", "--size", "0"],
                                  ["--loopback", "--qps", "100"], [], ["--server", "--loopback"]])
def test_bad_arguments_exit_2(args):
    rc, out, err = uvperf(*args, timeout=30)
    assert rc == 2 and err


def test_no_server_is_a_set_up_error():
    from uvtools import free_port
    rc, out, err = uvperf("--client", "127.0.0.1", "--port", str(free_port()), devices="emu:ip=127.0.0.147",
                          timeout=60)
    assert rc == 1 and "connect" in err  # a runtime error (tools/common/cli.h)


def test_bandwidth_by_duration_runs_that_long():
    rc, out, err = uvperf("--loopback", "--mode", "bw", "--op", "write", "--size", "4096", "--duration", "1",
                          "--depth", "8", "--warmup", "20", "--verify", "--json")
    assert rc == 0, err
    r = parse_json(out)["results"][0]
    # Timed rounds add up to the duration; the last round may run a little past it.
    assert 1.0 <= r["seconds"] < 1.5, r["seconds"]
    assert r["messages"] > 0 and r["bytes"] == r["messages"] * 4096
    assert r["verified"] is True


def test_bandwidth_by_duration_without_verify_stops_on_time():
    t0 = time.monotonic()
    rc, out, err = uvperf("--loopback", "--mode", "bw", "--op", "write", "--size", "4096", "--duration", "1",
                          "--depth", "8", "--warmup", "0", "--json")
    wall = time.monotonic() - t0
    assert rc == 0, err
    r = parse_json(out)["results"][0]
    assert 1.0 <= r["seconds"] < 1.5, r["seconds"]
    assert wall < 10, "a 1 s run took %.1f s" % wall


def _on_a_terminal(*args, timeout=120):
    """Run uvperf with stderr on a pseudo-terminal (the progress bar is drawn only on a
    terminal); returns (rc, stdout, what the terminal received).  Bounded in time."""
    import pty
    import select
    import subprocess
    from uvtools import UVPERF, env_with
    master, slave = pty.openpty()
    p = subprocess.Popen([UVPERF, *args], stdout=subprocess.PIPE, stderr=slave, text=True, env=env_with())
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                if p.poll() is not None:
                    break
                continue
            try:
                b = os.read(master, 4096)
            except OSError:        # EIO: the child closed its end
                break
            if not b:
                break
            chunks.append(b)
        else:
            p.kill()
            raise AssertionError("uvperf still running after %d s" % timeout)
        out, _ = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        os.close(master)
    return p.returncode, out, b"".join(chunks).decode(errors="replace")


def test_progress_bar_on_a_terminal_climbs_to_100_percent_and_clears_its_line():
    rc, out, tty = _on_a_terminal("--loopback", "--mode", "bw", "--op", "write", "--size", "4096",
                                  "--duration", "1", "--depth", "4")
    assert rc == 0, tty
    assert "bw WRITE 4096 B" in tty and "[" in tty, repr(tty[-300:])
    assert "\033[K" in tty, repr(tty[-300:])
    pcts = [int(m) for m in re.findall(r"(\d+)%", tty)]
    # a timed run shows its time going by: never past 100%, never backwards, and
    # somewhere strictly between 0 and 100 on the way
    assert pcts and pcts[-1] == 100, pcts
    assert all(v <= 100 for v in pcts), pcts
    assert pcts == sorted(pcts), pcts
    assert any(0 < v < 100 for v in pcts), pcts
    assert "WRITE" in out


def test_quiet_draws_no_progress_bar_even_on_a_terminal():
    rc, out, tty = _on_a_terminal("--loopback", "--mode", "bw", "--op", "write", "--size", "4096",
                                  "--iters", "200", "--depth", "4", "--quiet")
    assert rc == 0, tty
    assert "%" not in tty and "[#" not in tty, repr(tty)


# ---------------------------------------------------------------- telling the truth
# These tests' emulated devices and sockets live on 127.63.x.x.

LOOP63 = "emu:ip=127.63.1.1,emu:ip=127.63.1.2"


@pytest.mark.parametrize("args", [["--bytes", "-1"], ["--bytes", "17179869184g"], ["--size", "4294967296k"],
                                  ["--iters", "-5"], ["--iters", " 5"], ["--depth", "64x"],
                                  ["--duration", "nan"], ["--port", "70000"], ["--gid-index", "-1"]])
def test_negative_overflowing_or_malformed_numbers_are_refused(args):
    # --bytes -1 used to run for 2^64-1 bytes; 2^34 g wrapped to 0.
    rc, out, err = uvperf("--loopback", "--mode", "bw", *args, devices=LOOP63, timeout=30)
    assert rc == 2 and "bad value for --" + args[0][2:] in err, err


def test_an_extra_argument_is_refused_by_name():
    rc, out, err = uvperf("--loopback", "--iters", "10", "stray", devices=LOOP63, timeout=30)
    assert rc == 2 and "unexpected argument 'stray'" in err


def test_a_peer_error_longer_than_the_buffer_is_cut_not_read_from_the_stack():
    import socket
    import struct
    import threading
    text = b"server says: " + b"x" * 3000 + b"\x01\xff end"
    lsock = socket.socket()
    lsock.bind(("127.63.0.1", 0))
    lsock.listen(1)
    port = lsock.getsockname()[1]

    def fake_server():
        c, _ = lsock.accept()
        with c:
            t, n = struct.unpack("<II", c.recv(8, socket.MSG_WAITALL))
            c.recv(n, socket.MSG_WAITALL)
            c.sendall(struct.pack("<II", 12, len(text)) + text)       # UP_M_ERROR
            time.sleep(1)

    th = threading.Thread(target=fake_server, daemon=True)
    th.start()
    try:
        rc, out, err = uvperf("--client", "127.63.0.1", "--port", str(port), devices="emu:ip=127.63.0.3", timeout=60)
    finally:
        th.join(10)
        lsock.close()
    assert rc == 1
    line = [l for l in err.splitlines() if "peer: " in l]
    assert line and "peer: server says: xxxx" in line[0], err
    assert len(line[0]) < 700 and all(32 <= ord(ch) < 127 for ch in line[0]), line[0]


def test_an_idle_connection_does_not_block_the_server():
    import socket
    import subprocess
    from uvtools import UVPERF, env_with, free_port
    port = free_port()
    # The allowance applies to every wait of the session too, and a client that opens its
    # NIC and registers memory on a loaded 2-CPU machine was seen quiet for over 1 s.
    srv = subprocess.Popen([UVPERF, "--server", "--port", str(port), "--idle-timeout", "5"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=env_with("emu:ip=127.63.2.1"))
    idle = None
    try:
        deadline = time.monotonic() + 20
        while idle is None:
            try:
                idle = socket.create_connection(("127.0.0.1", port), timeout=1)
            except OSError:
                assert time.monotonic() < deadline, "the server never listened"
                time.sleep(0.05)
        # The idle connection came first; the real client queues behind it.
        rc, out, err = uvperf("--client", "127.0.0.1", "--port", str(port), "--iters", "20", "--warmup", "0",
                              devices="emu:ip=127.63.2.2", timeout=60)
        assert rc == 0, err
        _, serr = srv.communicate(timeout=30)
        assert srv.returncode == 0, serr
        assert "dropped a connection that started no session" in serr
    finally:
        if idle:
            idle.close()
        if srv.poll() is None:
            srv.kill()
            srv.wait()


def test_a_run_with_completion_errors_is_failed_never_verified():
    # A wrong rkey: every WRITE completes with a remote access error.
    rc, out, err = uvperf("--loopback", "--op", "write", "--iters", "20", "--warmup", "0", "--verify",
                          "--test-bad-rkey", devices=LOOP63)
    assert rc == 1, err
    assert "remote access error" in err
    row = [l for l in out.splitlines() if l.startswith("WRITE")]
    assert len(row) == 1 and row[0].endswith("FAILED") and "yes" not in row[0] and "nan" not in row[0]
    rc, out, err = uvperf("--loopback", "--mode", "bw", "--op", "write", "--iters", "20", "--warmup", "0",
                          "--verify", "--test-bad-rkey", "--json", devices=LOOP63)
    assert rc == 1
    r = parse_json(out)["results"][0]
    assert r["failed"] is True and r["verified"] is False and r["gbit_s"] is None and r["msg_s"] is None


def test_a_gid_index_past_the_table_is_named():
    rc, out, err = uvperf("--loopback", "--gid-index", "5", "--iters", "5", devices=LOOP63, timeout=60)
    assert rc == 1
    assert "GID index 5 is beyond" in err and "GID table of 2 entries" in err, err
    assert "Inappropriate ioctl" not in err


@pytest.mark.parametrize("where", ["stdout", "csv", "help"])
def test_results_that_cannot_be_written_exit_non_zero(where):
    import subprocess
    from uvtools import UVPERF, env_with
    args = [UVPERF, "--loopback", "--iters", "5", "--warmup", "0"]
    if where == "csv":
        args += ["--csv", "/dev/full"]
    if where == "help":
        args = [UVPERF, "--help"]
    with open("/dev/full", "w") if where != "csv" else open(os.devnull, "w") as out:
        p = subprocess.run(args, stdout=out, stderr=subprocess.PIPE, text=True, timeout=60, env=env_with(LOOP63))
    assert p.returncode == 1 and "cannot write" in p.stderr, p.stderr


def test_bandwidth_by_default_is_64k_depth_64_on_several_qps():
    rc, out, err = uvperf("--loopback", "--mode", "bw", "--op", "write", "--iters", "64", "--warmup", "0",
                          devices=LOOP63)
    assert rc == 0, err
    row = re.search(r"^WRITE\s+65536\s+4\s+64\s+256\s+[\d.]+\s+([\d.]+)\s+(\d+)\s+no$", out, re.M)
    assert row and float(row.group(1)) > 0, out
    assert "with depth WRs in flight on each of qps QPs" in out


def test_bandwidth_at_depth_1_is_a_message_rate_not_gbit_s():
    rc, out, err = uvperf("--loopback", "--mode", "bw", "--op", "write", "--size", "4096", "--depth", "1",
                          "--qps", "1", "--iters", "50", "--warmup", "0", devices=LOOP63)
    assert rc == 0, err
    row = re.search(r"^WRITE\s+4096\s+1\s+1\s+50\s+[\d.]+\s+-\s+(\d+)\s+no$", out, re.M)
    assert row and int(row.group(1)) > 0, out
    assert "msg/s is a message rate" in out
