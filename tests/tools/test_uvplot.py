# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""uvplot draws PNGs from uvperf's own CSV and JSON output on the emulated device; titles
carry what the CSV header says (device, build, MTU, sizes, sample counts).  The figures are
left in the build directory (tools-figures/) for docs/tools.md."""
import importlib.machinery
import importlib.util
import os
import subprocess

import pytest

from uvtools import BUILD, UVPLOT, parse_json, uvperf

FIG = os.path.join(BUILD, "tools-figures")


def load_uvplot():
    loader = importlib.machinery.SourceFileLoader("uvplot", UVPLOT)
    spec = importlib.util.spec_from_loader("uvplot", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("plot")
    lat, js = str(d / "lat.csv"), str(d / "bw.json")
    rc, out, err = uvperf("--loopback", "--op", "write,read,send", "--sizes", "1024,4096", "--iters", "300",
                          "--warmup", "30", "--verify", "--csv", lat)
    assert rc == 0, err
    rc, out, err = uvperf("--loopback", "--mode", "bw", "--op", "write,read", "--sweep", "256:8192",
                          "--iters", "200", "--warmup", "10", "--json", "--bw-csv", str(d / "bw.csv"))
    assert rc == 0, err
    with open(js, "w") as fh:
        fh.write(out)
    return {"lat": lat, "json": js, "bwcsv": str(d / "bw.csv"), "dir": d}


def plot(*args):
    p = subprocess.run(["/usr/bin/python3", UVPLOT, *args], capture_output=True, text=True, timeout=180)
    return p.returncode, p.stdout, p.stderr


def is_png(path):
    with open(path, "rb") as fh:
        return fh.read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(path) > 10000


def test_cdf_and_histogram_pngs_from_latency_csvs(runs):
    os.makedirs(FIG, exist_ok=True)
    for kind in ("cdf", "hist"):
        out = os.path.join(FIG, "latency-%s.png" % kind)
        if os.path.exists(out):
            os.unlink(out)
        rc, _, err = plot(kind, runs["lat"] + "=emu", "-o", out)
        assert rc == 0, err
        assert is_png(out)


def test_two_csvs_side_by_side_and_a_filter(runs, tmp_path):
    out = str(tmp_path / "two.png")
    rc, _, err = plot("cdf", runs["lat"] + "=first", runs["lat"] + "=second", "--op", "write", "--size", "4096",
                      "-o", out)
    assert rc == 0, err and is_png(out)
    mod = load_uvplot()
    series, metas = mod.latency_series([runs["lat"] + "=a", runs["lat"] + "=b"], op="WRITE", size=4096)
    assert [s[0] for s in series] == ["a WRITE 4096 B", "b WRITE 4096 B"]
    assert all(len(s[1]) == 300 for s in series)


def test_titles_state_device_build_mtu_sizes_and_samples(runs):
    mod = load_uvplot()
    series, metas = mod.latency_series([runs["lat"]])
    title = mod.title_for(metas, "uvperf latency CDF", mod.counts_line(series))
    assert "ConnectX-5 Ex" in title and "MTU 1024" in title and "build " in title
    assert "sizes 1024, 4096 B" in title and "300 samples per series" in title
    assert len(series) == 6


def test_bandwidth_versus_size_from_json_and_csv(runs):
    out = os.path.join(FIG, "bandwidth.png")
    rc, _, err = plot("bw", runs["json"] + "=emu", "-o", out)
    assert rc == 0, err and is_png(out)
    mod = load_uvplot()
    meta, rows = mod.bw_rows(runs["json"])
    assert sorted({r[1] for r in rows}) == [256, 512, 1024, 2048, 4096, 8192]
    meta2, rows2 = mod.bw_rows(runs["bwcsv"])
    assert [(r[0], r[1], r[3]) for r in rows2] == [(r[0], r[1], r[3]) for r in rows]
    out2 = str(runs["dir"] / "bw-csv.png")
    rc, _, err = plot("bw", runs["bwcsv"], "-o", out2)
    assert rc == 0, err and is_png(out2)


def test_missing_or_wrong_input_is_refused(runs, tmp_path):
    rc, _, err = plot("cdf", str(tmp_path / "absent.csv"), "-o", str(tmp_path / "x.png"))
    assert rc == 1 and "no such file" in err
    rc, _, err = plot("cdf", runs["bwcsv"], "-o", str(tmp_path / "x.png"))
    assert rc != 0 and "not a uvperf latency CSV" in err


def test_a_malformed_sample_is_a_one_line_error(runs, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text(open(runs["lat"]).read() + "WRITE,4096,300,12x,1,2\n")
    rc, _, err = plot("cdf", str(bad), "-o", str(tmp_path / "x.png"))
    assert rc == 1 and "Traceback" not in err and "is not a uvperf latency sample" in err, err


@pytest.mark.parametrize("text", ["{not json", '{"device": 5, "results": []}', "\xff\xfe binary"])
def test_bad_bandwidth_input_is_a_one_line_error(tmp_path, text):
    bad = tmp_path / "bad.json"
    bad.write_bytes(text.encode("latin-1"))
    rc, _, err = plot("bw", str(bad), "-o", str(tmp_path / "x.png"))
    assert rc == 1 and "Traceback" not in err and err.startswith("uvplot: "), err


@pytest.mark.parametrize("out", ["/proc/version/x.png", "/nonexistent-dir/x.png", "x.unknownformat"])
def test_an_unwritable_picture_is_a_one_line_error(runs, out):
    rc, _, err = plot("cdf", runs["lat"], "-o", out)
    assert rc == 1 and "Traceback" not in err and err.startswith("uvplot: "), err


def test_stdout_that_cannot_be_written_exits_1(runs, tmp_path):
    with open("/dev/full", "w") as full:
        p = subprocess.run(["/usr/bin/python3", UVPLOT, "cdf", runs["lat"], "-o", str(tmp_path / "x.png")],
                           stdout=full, stderr=subprocess.PIPE, text=True, timeout=180)
    assert p.returncode == 1 and "cannot write to stdout" in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_depth_1_rows_are_message_rates_and_not_plotted_as_bandwidth(tmp_path):
    csv = str(tmp_path / "d1.csv")
    rc, out, err = uvperf("--loopback", "--mode", "bw", "--op", "write", "--size", "1024", "--depth", "1",
                          "--qps", "1", "--iters", "20", "--warmup", "0", "--bw-csv", csv,
                          devices="emu:ip=127.63.6.1,emu:ip=127.63.6.2")
    assert rc == 0, err
    rc, _, err = plot("bw", csv, "-o", str(tmp_path / "x.png"))
    assert rc == 1 and "no bandwidth results" in err and "message rates" in err, err
