# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""rdma-core's own test suite (tests/run_tests.py, pyverbs) as a client of libuverbs.so.

Debian's python3-pyverbs ships rdma-core's tests/ directory as documentation
(/usr/share/doc/rdma-core/tests, most files gzipped).  We copy it to a temporary
directory, unzip it and run it unmodified with LD_PRELOAD=<libuverbs.so>: pyverbs'
modules link libibverbs.so.1, and the preloaded library's ibv_* symbols come first, so
pyverbs sees our emulated ConnectX (UVERBS_DEVICES) and never reaches libibverbs'
provider discovery.  The mlx5 direct-verbs modules (pyverbs.providers.mlx5) call the
real libmlx5, which answers "not an MLX5 device" for ours: those tests skip.

The run must end with no failure and no error, and every skipped test's reason must be
listed in docs/tools.md, section "rdma-core tests" (a backquoted reason prefix, `*` for any
text, at the start of a bullet in one of its three lists); a new or unexplained skip fails here.
The library comes from $UVERBS_LIB (the regular build: an AddressSanitizer library
cannot be preloaded into an uninstrumented python3).  Missing packages are failures,
never skips.
"""
import gzip
import os
import re
import shutil
import signal
import subprocess
import tempfile

LIB = os.environ.get("UVERBS_LIB", "")
SRC = os.environ.get("UVERBS_SOURCE_DIR",
                     os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TESTS_DOC = "/usr/share/doc/rdma-core/tests"
TIMEOUT = 480
NET = int(os.environ.get("UVERBS_TEST_NET", 40))


def _copy_suite(dst):
    assert os.path.isfile(os.path.join(TESTS_DOC, "run_tests.py")), \
        "%s/run_tests.py missing: install Debian's python3-pyverbs (tools/install-deps)" % TESTS_DOC
    out = os.path.join(dst, "tests")
    os.mkdir(out)
    for name in os.listdir(TESTS_DOC):
        src = os.path.join(TESTS_DOC, name)
        if name.endswith(".gz"):
            with gzip.open(src, "rb") as fi, open(os.path.join(out, name[:-3]), "wb") as fo:
                shutil.copyfileobj(fi, fo)
        elif os.path.isfile(src):
            shutil.copy(src, out)
    return out


def _documented_skips():
    """The backquoted reason prefixes of docs/tools.md, section "rdma-core tests"."""
    with open(os.path.join(SRC, "docs", "tools.md")) as f:
        text = f.read()
    m = re.search(r"^## rdma-core tests.*?$(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, 'docs/tools.md has no section "## rdma-core tests"'
    # Each bullet: "- `reason`, `reason`, ...: why" (it may wrap); the reasons are the
    # backquoted strings before the first "`:".
    reasons = []
    for bullet in re.findall(r"^- (.*?)(?=^- |^\s*$)", m.group(1), re.M | re.S):
        head = bullet.split("`:", 1)[0] + "`"
        reasons += re.findall(r"`([^`]+)`", head)
    return reasons


def _run(suite_dir):
    env = dict(os.environ)
    env["LD_PRELOAD"] = LIB
    env["UVERBS_DEVICES"] = "emu:ip=127.%d.%d.10" % (NET, 10 + os.getpid() % 80)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("UVERBS_LOG", None)
    for k in ("MLX_CQ_ALLOC_TYPE", "MLX_QP_ALLOC_TYPE", "MLX_SRQ_ALLOC_TYPE"):
        env.pop(k, None)
    p = subprocess.Popen(["/usr/bin/python3", os.path.join(suite_dir, "run_tests.py"), "-v"],
                         cwd=os.path.dirname(suite_dir), env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    return p.returncode, out


def _figures(out):
    ran = re.search(r"^Ran (\d+) tests? in", out, re.M)
    assert ran, "no unittest summary in the output:\n" + out[-4000:]
    n = int(ran.group(1))
    tail = out[ran.end():]
    status = re.search(r"^(OK|FAILED)\b(.*)$", tail, re.M)
    assert status, "no OK/FAILED line after the summary:\n" + tail
    counts = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", status.group(2))}
    f, e, s = counts.get("failures", 0), counts.get("errors", 0), counts.get("skipped", 0)
    other = counts.get("expected_failures", 0) + counts.get("unexpected_successes", 0)
    return n - f - e - s - other, f, e, s


def test_rdma_core_suite_passes_and_every_skip_is_documented():
    assert LIB and os.path.isfile(LIB), "UVERBS_LIB (libuverbs.so) not found: %r" % LIB
    allowed = _documented_skips()
    assert allowed, "no skip reasons listed in docs/tools.md"
    with tempfile.TemporaryDirectory(prefix="uv-rdma-core-") as tmp:
        rc, out = _run(_copy_suite(tmp))
    passed, failed, errors, skipped = _figures(out)
    print("\nrdma-core tests: %d passed, %d failed, %d errors, %d skipped"
          % (passed, failed, errors, skipped))
    bad = [l for l in out.splitlines() if re.search(r"\.\.\. (FAIL|ERROR)$", l)]
    assert failed == 0 and errors == 0 and rc == 0, \
        "rdma-core tests failed (rc %s): %s\n%s" % (rc, bad, out[-6000:])
    reasons = re.findall(r"\.\.\. skipped (['\"])(.*?)\1$", out, re.M)
    assert len(reasons) == skipped, "%d skip lines, %d in the summary" % (len(reasons), skipped)
    # A listed reason is a prefix; `*` in it stands for any text (a device name).
    pats = [re.compile(re.escape(a).replace(r"\*", ".*")) for a in allowed]
    unlisted = sorted({r for _, r in reasons if not any(p.match(r) for p in pats)})
    assert not unlisted, ("skips not listed in docs/tools.md (rdma-core tests): %s" % unlisted)
    assert passed >= 80, "only %d rdma-core tests passed" % passed
