# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Every command in README.md runs (issue 34): each ```sh block is one bash script
(set -e), run from the source tree against the regular build (build/), with every
process bounded in time and killed.

A block that cannot run here says so on its first line, visibly in the README:
"# not run by the README test: <why>", and the why must name one of the accepted reasons
(a Mac, a ConnectX, software Debian does not ship, the network, the install or the suite
itself, which CI runs anyway).  The test prints the blocks it did not run and why.
Other fenced blocks must be ```text (output, listings): a command cannot hide in an
unlabelled block.  What the test changes, and only this: the install prefix /opt/uverbs
becomes a temporary directory, uvd's run directory is a temporary one, and
UVERBS_DEVICES is set to this test's own addresses (127.0.9x.y, as the README's own
ones) for commands that do not name their device, so that ctest -j cannot mix them.
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile

import pytest

SRC = os.environ.get("UVERBS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("UVERBS_BUILD_DIR", os.path.join(SRC, "build"))
MARK = "# not run by the README test:"
REASONS = ("needs a Mac", "needs a ConnectX", "needs MLX", "downloads", "is the install and the whole suite")


def blocks():
    """(line, language, text) of every fenced block of README.md."""
    out, lang, start, buf = [], None, 0, []
    with open(os.path.join(SRC, "README.md")) as fh:
        for n, line in enumerate(fh, 1):
            m = re.match(r"^```(\S*)\s*$", line)
            if m and lang is None:
                lang, start, buf = m.group(1), n, []
            elif m and not m.group(1):
                out.append((start, lang, "".join(buf)))
                lang = None
            elif lang is not None:
                buf.append(line)
    assert lang is None, "README.md: the block at line %d is not closed" % start
    return out


def sh_blocks():
    return [(n, text) for n, lang, text in blocks() if lang == "sh"]


def test_every_block_is_a_command_block_or_text():
    bad = [(n, lang) for n, lang, _ in blocks() if lang not in ("sh", "text")]
    assert not bad, "README.md blocks neither ```sh nor ```text (line, language): %s" % bad


def test_blocks_not_run_say_why_with_an_accepted_reason():
    skipped = []
    for n, text in sh_blocks():
        first = text.splitlines()[0] if text.strip() else ""
        if MARK in text and not first.startswith(MARK):
            pytest.fail("README.md:%d: the mark must be the block's first line" % n)
        if first.startswith(MARK):
            why = first[len(MARK):].strip()
            assert any(r in why for r in REASONS), "README.md:%d: '%s' is not an accepted reason %s" % (
                n, why, REASONS)
            skipped.append((n, why))
    print("\nREADME blocks not run here:")
    for n, why in skipped:
        print("  README.md:%d: %s" % (n, why))
    # the quick start, the Mac's loopback, the hardware recipe, the Mac app, the download
    assert len(skipped) <= 5, skipped


RUN = [(n, text) for n, text in sh_blocks() if not text.startswith(MARK)]


@pytest.mark.parametrize("line,text", RUN, ids=["README.md:%d" % n for n, _ in RUN])
def test_readme_block_runs(line, text, tmp_path):
    for tool in ("firmware-cmd/fwcmd/fwcmd", "tools/uvperf", "tools/uvd/uvd", "uverbs/libuverbs.so"):
        assert os.path.exists(os.path.join(BUILD, tool)), "%s is not built in %s" % (tool, BUILD)
    prefix = str(tmp_path / "prefix")
    script = text.replace("/opt/uverbs", prefix)
    work = tmp_path / "work"
    work.mkdir()
    # the README's relative paths (build/, tools/, uverbs/examples/) are the tree's; the
    # build is this test's regular one, and outputs (./pingpong) land in a scratch dir
    for name in ("tools", "uverbs", "docs"):
        os.symlink(os.path.join(os.path.abspath(SRC), name), work / name)
    os.symlink(os.path.abspath(BUILD), work / "build")
    env = dict(os.environ)
    for k in ("LD_PRELOAD", "UVERBS_LOG", "PKG_CONFIG_PATH"):
        env.pop(k, None)
    net = os.environ.get("UVERBS_TEST_NET", "93")
    if "tools/uvd/uvd" not in text:     # a uvd recipe's clients find the daemon instead
        env["UVERBS_DEVICES"] = "emu:ip=127.%s.%d.2,emu:ip=127.%s.%d.3" % (net, line % 250, net, line % 250)
    else:
        env.pop("UVERBS_DEVICES", None)
    env["UVERBS_RUN_DIR"] = str(tmp_path / "run")
    p = subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", script], cwd=work, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        out = "(timed out after 240 s)"
    finally:
        # the block's own background processes (uvd, servers) too
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    shutil.rmtree(prefix, ignore_errors=True)
    print("\nREADME.md:%d ran:\n%s" % (line, "\n".join(out.splitlines()[-6:])))
    assert p.returncode == 0, "README.md:%d failed (exit %s):\n%s\n--- output\n%s" % (line, p.returncode, text, out)


def test_readme_addresses_are_used_by_no_other_test():
    """The README's blocks bind their emulated NICs at the literal addresses they name
    (emu:ip=127.x.y.z:4791, exclusively); ctest -j runs this test beside every other one,
    so a README address that another file under tests/ also names makes one of the two
    fail to bind.  Every README address must be absent from tests/ (this file only names
    its own 127.<net>.<line>.y ones, built at run time)."""
    with open(os.path.join(SRC, "README.md")) as fh:
        addrs = set(re.findall(r"\b127\.\d+\.\d+\.\d+\b", fh.read()))
    addrs.discard("127.0.0.1")       # a TCP rendezvous on an ephemeral or named port, not a NIC
    assert addrs, "README.md names no emulated NIC address: the pattern is stale"
    pat = re.compile(r"(?<![\d.])(%s)(?![\d])" % "|".join(re.escape(a) for a in sorted(addrs)))
    clash = []
    for root, _, files in os.walk(os.path.join(SRC, "tests")):
        for f in files:
            path = os.path.join(root, f)
            try:
                with open(path, errors="replace") as fh:
                    for n, line in enumerate(fh, 1):
                        for m in pat.finditer(line):
                            clash.append("%s:%d: %s" % (os.path.relpath(path, SRC), n, m.group(1)))
            except OSError:
                continue
    assert not clash, "README.md's NIC addresses are also used by other tests (ctest -j collides):\n" + \
        "\n".join(clash)
