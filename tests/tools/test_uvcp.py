# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""uvcp between two emulated NICs in two processes (docs/tools.md "uvcp"): a file and a
tree copied and compared byte for byte, striping over two devices a side, resume after
the server is killed mid-copy (and the client's bounded-time error when it is), path
escapes refused, disk full and permission errors named, the tool conventions, and the
same sources built against Debian's libibverbs (pkg-config) running over the preloaded
library.  Each test runs its server on its own 127.33.N.x addresses and port; every
process is bounded in time and killed at the end."""
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from uvtools import BUILD, SRC, env_with, free_port

UVCP = os.environ.get("UVCP", os.path.join(BUILD, "tools", "uvcp"))
UVERBS_LIB = os.environ.get("UVERBS_LIB", os.path.join(BUILD, "uverbs", "libuverbs.so"))
CI = os.environ.get("CI") == "true"
T = 120        # outer bound of any one uvcp run here


def emu(net, host, n=1):
    return ",".join("emu:ip=127.33.%d.%d" % (net, host + 10 * i) for i in range(n))


class Server:
    def __init__(self, root, net, ndev=1, args=(), preexec=None, wrap=(), binary=UVCP, extra_env=None):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [*wrap, binary, "--serve", "--root", str(root), "--port", str(self.port), "--timeout", "10", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env_with(emu(net, 1, ndev), **(extra_env or {})), preexec_fn=preexec)
        # ready when it says so (the first line of its stderr)
        line = self.proc.stderr.readline()
        assert "serving" in line, line + self.proc.stderr.read()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            return self.proc.communicate(timeout=30)[1]
        except subprocess.TimeoutExpired:
            return ""

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            return self.proc.communicate(timeout=30)[1]
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.communicate()[1]


@pytest.fixture
def servers():
    started = []
    yield started
    for s in started:
        if isinstance(s, str):
            shutil.rmtree(s, ignore_errors=True)
        else:
            s.kill()


def request_cleanup(servers, path):
    servers.append(path)


def client(srv, net, *args, ndev=1, binary=UVCP, extra_env=None, timeout=T):
    env = env_with(emu(net, 2, ndev), **(extra_env or {}))
    p = subprocess.run([binary, "--port", str(srv.port), "--timeout", "10", *args], capture_output=True, text=True,
                       timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def rand_file(path, size, seed):
    r = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(r.randbytes(size))


def same_tree(a, b):
    la = sorted(os.path.relpath(os.path.join(d, f), a) for d, _, fs in os.walk(a) for f in fs)
    lb = sorted(os.path.relpath(os.path.join(d, f), b) for d, _, fs in os.walk(b) for f in fs)
    assert la == lb
    for f in la:
        assert open(os.path.join(a, f), "rb").read() == open(os.path.join(b, f), "rb").read(), f


def same_meta(a, b):
    """Mode bits and mtime (to the second) travel with every file, packed or not."""
    for d, _, fs in os.walk(a):
        for f in fs:
            x = os.stat(os.path.join(d, f))
            y = os.stat(os.path.join(b, os.path.relpath(os.path.join(d, f), a)))
            assert (x.st_mode & 0o7777, int(x.st_mtime)) == (y.st_mode & 0o7777, int(y.st_mtime)), f


def no_temporaries(root):
    return [f for _, _, fs in os.walk(root) for f in fs if f.endswith((".uvcp-part", ".uvcp-state"))]


# ------------------------------------------------------------------ conventions


def test_help_version_and_usage_errors():
    p = subprocess.run([UVCP, "--help"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and p.stdout.startswith("usage: uvcp") and "--serve" in p.stdout and not p.stderr
    p = subprocess.run([UVCP, "-h"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and p.stdout.startswith("usage: uvcp")
    p = subprocess.run([UVCP, "--version"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and p.stdout.startswith("uvcp (uverbs) ") and "build:" in p.stdout
    for args, why in [(["--bogus", "a", "h:b"], "unknown option"), (["--qps", "0", "a", "h:b"], "--qps"),
                      (["--chunk", "1k", "a", "h:b"], "--chunk"), (["--port", "70000", "a", "h:b"], "--port"),
                      (["a"], "HOST:DEST"), (["a", "b"], "HOST:DEST"), (["--serve"], "--root"),
                      (["--serve", "--root", "/tmp", "x"], "no operands"), (["--depth"], "needs a value")]:
        p = subprocess.run([UVCP, *args], capture_output=True, text=True, timeout=30)
        assert p.returncode == 2, (args, p.stderr)
        assert why in p.stderr and not p.stdout, (args, p.stderr)


def test_missing_source_and_absent_server_are_runtime_errors(tmp_path):
    p = subprocess.run([UVCP, str(tmp_path / "nope"), "127.0.0.1:x"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 1 and "nope" in p.stderr and "No such file" in p.stderr
    f = tmp_path / "f"
    f.write_text("x")
    p = subprocess.run([UVCP, "--port", str(free_port()), str(f), "127.0.0.1:x"], capture_output=True, text=True,
                       timeout=60, env=env_with(emu(1, 2)))
    assert p.returncode == 1 and "cannot connect" in p.stderr and len(p.stderr.strip().splitlines()) == 1


# ------------------------------------------------------------------ copies


def test_copy_file_and_tree_verified(tmp_path, servers):
    root = tmp_path / "root"
    root.mkdir()
    src = tmp_path / "src"
    rand_file(src / "big.bin", 3 * 1024 * 1024 + 12345, 1)          # 49 chunks of 64 KiB, a short tail
    tree = src / "tree"
    for i in range(40):
        rand_file(tree / ("d%d" % (i % 5)) / ("f%02d" % i), random.Random(i).randrange(0, 200000), 100 + i)
    (tree / "empty_dir").mkdir()
    (tree / "zero").write_bytes(b"")
    srv = Server(root, 2)
    servers.append(srv)
    rc, out, err = client(srv, 2, "--json", "--chunk", "64k", "--qps", "3", "--depth", "4",
                          str(src / "big.bin"), str(tree), "127.0.0.1:")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["status"] == "ok" and doc["files"] == 42 and doc["dirs"] == 7
    # the tree's files smaller than a chunk travelled packed, the others on their own
    small = sum(1 for d, _, fs in os.walk(tree) for f in fs if os.path.getsize(os.path.join(d, f)) < 65536)
    assert small > 5 and doc["packed_files"] == small
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(src) for f in fs)
    assert doc["bytes"] == doc["sent_bytes"] == total and doc["resumed_bytes"] == 0
    assert (root / "big.bin").read_bytes() == (src / "big.bin").read_bytes()
    same_tree(tree, root / "tree")
    assert (root / "tree" / "empty_dir").is_dir()
    same_meta(tree, root / "tree")
    assert not no_temporaries(root)
    # the mode and mtime travel with the file
    assert int(os.stat(root / "big.bin").st_mtime) == int(os.stat(src / "big.bin").st_mtime)
    # the same tree file by file, over the first copy
    rc, out, err = client(srv, 2, "--json", "--no-pack", "--chunk", "64k", str(tree), "127.0.0.1:")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["files"] == 41 and doc["packed_files"] == 0
    same_tree(tree, root / "tree")
    same_meta(tree, root / "tree")
    assert not no_temporaries(root) and not [f for f in os.listdir(root) if f.startswith(".uvcp-pack")]
    # a second copy over the first replaces it, to a named file in a new directory
    rc, out, err = client(srv, 2, "--no-progress", str(src / "big.bin"), "127.0.0.1:new/dir/renamed")
    assert rc == 0, err
    assert "1 file" in out and "digests verified" in out and len(out.splitlines()) == 1
    assert (root / "new" / "dir" / "renamed").read_bytes() == (src / "big.bin").read_bytes()


def test_striped_over_two_devices_each_side(tmp_path, servers):
    root = tmp_path / "root"
    root.mkdir()
    rand_file(tmp_path / "f", 2 * 1024 * 1024 + 7, 2)
    srv = Server(root, 3, ndev=2, args=("-d", "uverbs0", "-d", "uverbs1"))
    servers.append(srv)
    rc, out, err = client(srv, 3, "--json", "-d", "uverbs0", "--device", "uverbs1", "--qps", "4", "--chunk", "64k",
                          str(tmp_path / "f"), "127.0.0.1:f", ndev=2)
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["devices"] == "uverbs0,uverbs1" and doc["server_devices"] == "uverbs0,uverbs1"
    assert (root / "f").read_bytes() == (tmp_path / "f").read_bytes()
    # from mapped windows (--map), each registered on both devices: 4 QPs x 8 slots of
    # 64 KiB make 2 MiB windows, so a 7 MiB + 7 B file reuses one and ends mid-chunk
    rand_file(tmp_path / "g", 7 * 1024 * 1024 + 7, 22)
    rc, out, err = client(srv, 3, "-d", "uverbs0", "-d", "uverbs1", "--qps", "4", "--chunk", "64k", "--map",
                          str(tmp_path / "g"), "127.0.0.1:g", ndev=2)
    assert rc == 0, err
    assert (root / "g").read_bytes() == (tmp_path / "g").read_bytes()
    rc, out, err = client(srv, 3, "-d", "mlx5_0", str(tmp_path / "f"), "127.0.0.1:f", ndev=2)
    assert rc == 1 and "no RDMA device named 'mlx5_0'" in err and "uverbs0" in err


# ------------------------------------------------------------------ interruption


def wait_verified(state, timeout=60):
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            b = state.read_bytes()
            if len(b) >= 40 and int.from_bytes(b[32:40], "little") > 0:
                return int.from_bytes(b[32:40], "little")
        except FileNotFoundError:
            pass
        time.sleep(0.02)
    raise AssertionError("no chunk was verified in %d s" % timeout)


def test_server_killed_mid_copy_bounded_error_then_resume(tmp_path, servers):
    root = tmp_path / "root"
    root.mkdir()
    size = 8 * 1024 * 1024 + 99
    rand_file(tmp_path / "f", size, 3)
    srv = Server(root, 4)
    servers.append(srv)
    env = env_with(emu(4, 2))
    # 2 MB/s: four seconds for the file, so the kill lands mid-copy
    c = subprocess.Popen([UVCP, "--port", str(srv.port), "--timeout", "10", "--chunk", "64k", "--bwlimit", "2m",
                          "--json", str(tmp_path / "f"), "127.0.0.1:f"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        wait_verified(root / ".f.uvcp-state")
        srv.proc.send_signal(signal.SIGKILL)
        t_kill = time.time()
        out, err = c.communicate(timeout=30)
        elapsed = time.time() - t_kill
    finally:
        if c.poll() is None:
            c.kill()
            c.wait()
    assert c.returncode == 1, err
    assert "peer gone" in err or "gone" in err, err
    assert elapsed < 10, elapsed            # the side channel's end shows it at once
    assert json.loads(out)["status"] == "error"
    assert not (root / "f").exists()        # nothing partial under the final name
    assert (root / ".f.uvcp-part").exists()
    srv.kill()
    srv2 = Server(root, 4)
    servers.append(srv2)
    rc, out, err = client(srv2, 4, "--json", "--chunk", "64k", str(tmp_path / "f"), "127.0.0.1:f")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["resumed_bytes"] > 0 and doc["resumed_bytes"] % 65536 == 0
    assert doc["sent_bytes"] + doc["resumed_bytes"] == size
    assert (root / "f").read_bytes() == (tmp_path / "f").read_bytes()
    assert not no_temporaries(root)


def test_resume_with_a_damaged_prefix_fails_the_digest_and_starts_over(tmp_path, servers):
    """The verified prefix is re-read from disk on resume: a byte changed there after the
    interruption makes the whole-file digest differ, the copy fails, and the next one
    starts from zero."""
    root = tmp_path / "root"
    root.mkdir()
    rand_file(tmp_path / "f", 4 * 1024 * 1024, 5)
    srv = Server(root, 5)
    servers.append(srv)
    c = subprocess.Popen([UVCP, "--port", str(srv.port), "--chunk", "64k", "--bwlimit", "2m", str(tmp_path / "f"),
                          "127.0.0.1:f"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env_with(emu(5, 2)))
    try:
        wait_verified(root / ".f.uvcp-state")
        srv.proc.send_signal(signal.SIGKILL)
        c.communicate(timeout=30)
    finally:
        if c.poll() is None:
            c.kill()
            c.wait()
    srv.kill()
    with open(root / ".f.uvcp-part", "r+b") as fh:
        b = fh.read(1)
        fh.seek(0)
        fh.write(bytes([b[0] ^ 0xff]))
    srv2 = Server(root, 5)
    servers.append(srv2)
    rc, out, err = client(srv2, 5, "--chunk", "64k", str(tmp_path / "f"), "127.0.0.1:f")
    assert rc == 1 and "digest mismatch" in err, err
    assert not (root / "f").exists() and not no_temporaries(root)
    rc, out, err = client(srv2, 5, "--json", "--chunk", "64k", str(tmp_path / "f"), "127.0.0.1:f")
    assert rc == 0, err
    assert json.loads(out)["resumed_bytes"] == 0
    assert (root / "f").read_bytes() == (tmp_path / "f").read_bytes()


def test_server_frozen_mid_copy_is_a_bounded_error(tmp_path, servers):
    """A server that stops (SIGSTOP: its side channel stays open, its NIC goes silent)
    must not hang the client: RC retries run out, or --timeout passes."""
    root = tmp_path / "root"
    root.mkdir()
    rand_file(tmp_path / "f", 8 * 1024 * 1024, 13)
    srv = Server(root, 13)
    servers.append(srv)
    c = subprocess.Popen([UVCP, "--port", str(srv.port), "--timeout", "3", "--chunk", "64k", "--bwlimit", "2m",
                          str(tmp_path / "f"), "127.0.0.1:f"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env_with(emu(13, 2)))
    try:
        wait_verified(root / ".f.uvcp-state")
        srv.proc.send_signal(signal.SIGSTOP)
        t0 = time.time()
        out, err = c.communicate(timeout=60)
        elapsed = time.time() - t0
    finally:
        if c.poll() is None:
            c.kill()
            c.wait()
        srv.proc.send_signal(signal.SIGCONT)
    assert c.returncode == 1, err
    assert "retry counter exceeded" in err or "no progress" in err, err
    assert elapsed < 20, elapsed
    assert not (root / "f").exists()


def test_client_killed_mid_copy_server_serves_the_next(tmp_path, servers):
    root = tmp_path / "root"
    root.mkdir()
    rand_file(tmp_path / "f", 4 * 1024 * 1024, 6)
    srv = Server(root, 6)
    servers.append(srv)
    c = subprocess.Popen([UVCP, "--port", str(srv.port), "--chunk", "64k", "--bwlimit", "1m", str(tmp_path / "f"),
                          "127.0.0.1:f"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env_with(emu(6, 2)))
    try:
        wait_verified(root / ".f.uvcp-state")
    finally:
        c.kill()
        c.wait()
    rc, out, err = client(srv, 6, "--chunk", "64k", str(tmp_path / "f"), "127.0.0.1:f")
    assert rc == 0, err
    assert (root / "f").read_bytes() == (tmp_path / "f").read_bytes()
    assert srv.proc.poll() is None
    log = srv.stop()
    assert "ended" in log and "done" in log, log


@pytest.mark.parametrize("mode,cut", [("--map", 256), ("--map", 6144), ("staged", 256)])
def test_source_cut_short_mid_copy_is_an_error_not_a_crash(tmp_path, servers, mode, cut):
    """A source truncated while it is copied.  Read into the slots, pread comes up short;
    from mapped windows (--map) the pages past the new end raise SIGBUS in whichever
    thread touches them first: cut behind the reader (256 KiB), the emulated NIC's copy
    of a chunk in flight (it completes the WRITE with a local protection error); cut
    ahead of it (6 MiB of 8), the reader's hash.  Either way uvcp must name the cause
    and exit 1, not die of the signal, and leave nothing under the final name."""
    root = tmp_path / "root"
    root.mkdir()
    rand_file(tmp_path / "f", 8 * 1024 * 1024, 14)
    srv = Server(root, 14)
    servers.append(srv)
    extra = [mode] if mode == "--map" else []
    c = subprocess.Popen([UVCP, "--port", str(srv.port), "--timeout", "10", "--chunk", "64k", "--bwlimit", "2m",
                          *extra, str(tmp_path / "f"), "127.0.0.1:f"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env_with(emu(14, 2)))
    try:
        wait_verified(root / ".f.uvcp-state")
        os.truncate(tmp_path / "f", cut * 1024)
        out, err = c.communicate(timeout=60)
    finally:
        if c.poll() is None:
            c.kill()
            c.wait()
    assert c.returncode == 1, (c.returncode, err)
    assert "shrank" in err, err
    assert not (root / "f").exists()


# ------------------------------------------------------------------ refusals


def test_refuses_path_escapes(tmp_path, servers):
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(str(outside), str(root / "out"))
    os.symlink("sub", str(root / "inlink"))            # a symlink that stays inside is fine
    f = tmp_path / "f"
    f.write_bytes(b"payload")
    srv = Server(root, 7)
    servers.append(srv)
    for dest, why in [("../x", "escapes the root (a '..' component)"), ("sub/../../x", "'..'"),
                      ("/etc/uvcp-test", "is absolute"), ("out/x", "escapes the root through a symlink"),
                      ("out", "escapes the root through a symlink"), ("out/deeper/x", "through a symlink")]:
        rc, out, err = client(srv, 7, str(f), "127.0.0.1:" + dest)
        assert rc == 1, (dest, err)
        assert why in err and err.startswith("uvcp: server: ") and len(err.strip().splitlines()) == 1, (dest, err)
    assert os.listdir(outside) == []
    assert not os.path.exists("/etc/uvcp-test")
    rc, out, err = client(srv, 7, str(f), "127.0.0.1:inlink/x")
    assert rc == 0, err
    assert (root / "sub" / "x").read_bytes() == b"payload"


def unshare_tmpfs_refusal():
    """None when a private tmpfs can be mounted here, else why not."""
    if os.geteuid() != 0:
        return "runs as uid %d: mounting a private tmpfs needs root" % os.geteuid()
    for tool in ("unshare", "mount"):
        if not shutil.which(tool):
            return "%s is not installed (util-linux / mount; tools/install-deps installs them)" % tool
    # a container without CAP_SYS_ADMIN refuses a mount namespace: ask once
    p = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"], capture_output=True, text=True,
                       timeout=30)
    if p.returncode != 0:
        return "root, but unshare --mount is refused (no CAP_SYS_ADMIN here?): %s" % p.stderr.strip()
    return None


def test_disk_full_on_a_small_tmpfs(tmp_path, servers):
    why = unshare_tmpfs_refusal()
    if why:
        # CI runs as root on a fresh Debian machine, where a mount namespace must work: there
        # a refusal is a failure; an unprivileged run (a developer, a CI not as root) skips
        if CI and os.geteuid() == 0:
            pytest.fail("CI runs as root, where unshare --mount must work: " + why)
        pytest.skip("needs a private tmpfs: " + why)
    root = tmp_path / "root"
    root.mkdir()
    rand_file(tmp_path / "f", 6 * 1024 * 1024, 8)
    # the server in its own mount namespace, its root a 2 MiB tmpfs
    wrap = ("unshare", "--mount", "--propagation", "private", "sh", "-c",
            'mount -t tmpfs -o size=2m uvcp-test "$0" && exec "$@"', str(root))
    srv = Server(root, 8, wrap=wrap)
    servers.append(srv)
    t0 = time.time()
    rc, out, err = client(srv, 8, "--chunk", "64k", str(tmp_path / "f"), "127.0.0.1:f")
    assert rc == 1, err
    assert "No space left on device (the server's disk is full)" in err, err
    assert len(err.strip().splitlines()) == 1 and time.time() - t0 < 60


def test_file_size_limit_is_an_error_not_a_crash(tmp_path, servers):
    root = tmp_path / "root"
    root.mkdir()
    rand_file(tmp_path / "f", 3 * 1024 * 1024, 9)

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024 * 1024, 1024 * 1024))
    srv = Server(root, 9, preexec=limit)
    servers.append(srv)
    rc, out, err = client(srv, 9, "--chunk", "64k", str(tmp_path / "f"), "127.0.0.1:f")
    assert rc == 1, err
    assert "File too large (the server's file size limit)" in err, err
    assert srv.proc.poll() is None           # SIGXFSZ did not kill it
    assert not (root / "f").exists()


def test_permission_denied_on_the_server(tmp_path, servers):
    # pytest's own tmp_path lies under a 0700 directory the unprivileged server could not
    # even enter: its root goes in a directory of its own under /tmp
    top = tempfile.mkdtemp(prefix="uvcp-perm-", dir="/tmp")
    request_cleanup(servers, top)
    os.chmod(top, 0o755)
    root = Path(top) / "root"
    root.mkdir()
    os.chmod(root, 0o555)
    f = tmp_path / "f"
    f.write_bytes(b"x" * 1000)
    os.chmod(f, 0o644)
    # root writes anywhere: the server runs as nobody then, from a copy nobody can exec
    if os.geteuid() == 0:
        binary, extra = nobody_copy(servers)
        srv = Server(root, 10, preexec=as_nobody, binary=binary, extra_env=extra)
    else:
        srv = Server(root, 10)
    servers.append(srv)
    # small queues: an unprivileged process may lock only RLIMIT_MEMLOCK (8 MiB by default)
    small = ("--qps", "1", "--depth", "2", "--chunk", "64k")
    rc, out, err = client(srv, 10, *small, str(f), "127.0.0.1:f")
    assert rc == 1, err
    assert "Permission denied" in err and "cannot create" in err, err
    rc, out, err = client(srv, 10, *small, str(tmp_path), "127.0.0.1:d")
    assert rc == 1 and "Permission denied" in err, err


def nobody_copy(servers):
    """The build-tree uvcp and the build-tree libraries it loads (libuverbs.so) copied into a
    fresh 0755 directory under /tmp, for a run as nobody: a clone under /root (0700 on
    Debian) or pytest's 0700 tmp_path would refuse nobody the exec.  Returns the binary
    and the environment that finds the copied libraries first (LD_LIBRARY_PATH is searched
    before the binary's RUNPATH)."""
    top = tempfile.mkdtemp(prefix="uvcp-bin-", dir="/tmp")
    request_cleanup(servers, top)
    os.chmod(top, 0o755)
    build = os.path.realpath(BUILD)
    # the loader asks for each library by the name ldd shows left of "=>" (the soname)
    ldd = subprocess.run(["ldd", UVCP], capture_output=True, text=True, timeout=30)
    for name, path in re.findall(r"^\s*(\S+) => (\S+) \(", ldd.stdout, re.M):
        if os.path.realpath(path).startswith(build + os.sep):
            shutil.copy(path, os.path.join(top, name))
    for name in os.listdir(top):
        os.chmod(os.path.join(top, name), 0o755)
    binary = os.path.join(top, "uvcp")
    shutil.copy(UVCP, binary)
    os.chmod(binary, 0o755)
    return binary, {"LD_LIBRARY_PATH": top}


def as_nobody():
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)


def test_unreadable_source_is_named(tmp_path, servers):
    top = tempfile.mkdtemp(prefix="uvcp-perm-", dir="/tmp")
    request_cleanup(servers, top)
    os.chmod(top, 0o755)
    root = tmp_path / "root"
    root.mkdir()
    f = Path(top) / "f"
    f.write_bytes(b"x")
    os.chmod(f, 0)
    srv = Server(root, 11)
    servers.append(srv)
    # root reads any file: the client runs as nobody then, from a copy nobody can exec
    binary, extra = nobody_copy(servers) if os.geteuid() == 0 else (UVCP, {})
    p = subprocess.run([binary, "--port", str(srv.port), "--qps", "1", "--depth", "2", "--chunk", "64k", str(f),
                        "127.0.0.1:f"], capture_output=True, text=True, timeout=T, env=env_with(emu(11, 2), **extra),
                       preexec_fn=as_nobody if os.geteuid() == 0 else None)
    assert p.returncode == 1 and "cannot open" in p.stderr and "Permission denied" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


# ------------------------------------------------------------------ the system's libibverbs


def test_builds_against_debians_libibverbs_and_runs_over_the_preloaded_library(tmp_path, servers):
    pc = subprocess.run(["pkg-config", "--cflags", "--libs", "libibverbs"], capture_output=True, text=True)
    if pc.returncode != 0 or not shutil.which("cc"):
        if CI:
            pytest.fail("libibverbs-dev (pkg-config libibverbs) and cc are installed by tools/install-deps")
        pytest.skip("no pkg-config libibverbs")
    srcs = [os.path.join(SRC, "tools", "uvcp", f) for f in sorted(os.listdir(os.path.join(SRC, "tools", "uvcp")))
            if f.endswith(".c")]
    exe = tmp_path / "uvcp-libibverbs"
    cmd = ["cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Wno-missing-field-initializers", "-Werror",
           "-DXXH_INLINE_ALL=1", "-DUVCP_VERSION=\"test\"", "-DUVCP_BUILD=\"pkg-config libibverbs\"",
           "-pthread", *srcs, "-o", str(exe), *pc.stdout.split()]
    b = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert b.returncode == 0, b.stderr
    # linked against Debian's libibverbs.so.1, not ours
    ldd = subprocess.run(["ldd", str(exe)], capture_output=True, text=True).stdout
    assert "libibverbs.so.1" in ldd and "libuverbs" not in ldd
    if not os.path.exists(UVERBS_LIB):
        pytest.fail("no regular-build libuverbs.so at %s to preload" % UVERBS_LIB)
    root = tmp_path / "root"
    root.mkdir()
    rand_file(tmp_path / "f", 1024 * 1024 + 3, 12)
    srv = Server(root, 12)
    servers.append(srv)
    rc, out, err = client(srv, 12, "--json", "--chunk", "64k", str(tmp_path / "f"), "127.0.0.1:f", binary=str(exe),
                          extra_env={"LD_PRELOAD": UVERBS_LIB})
    assert rc == 0, err
    assert json.loads(out)["devices"] == "uverbs0"
    assert (root / "f").read_bytes() == (tmp_path / "f").read_bytes()
