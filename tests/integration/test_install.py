# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""cmake --install, as a new user would use it: the installed tree has what docs/abi.md
and uverbs(7) promise, the example builds against it from outside the source tree with
pkg-config and with CMake's find_package(uverbs), and runs on two emulated NICs; every
man page renders without a warning.

UVERBS_BUILD_DIR is the (regular, non-sanitizer) build to install; UVERBS_SOURCE_DIR the
source tree; UVERBS_TEST_NET the N of the 127.N.x.y addresses of this test.
"""
import glob
import json
import os
import re
import select
import shutil
import subprocess
import tempfile
import time

import pytest

SRC = os.environ["UVERBS_SOURCE_DIR"]
BUILD = os.environ["UVERBS_BUILD_DIR"]
NET = os.environ.get("UVERBS_TEST_NET", "64")
EXAMPLE = os.path.join(SRC, "uverbs", "examples", "pingpong.c")
TOOLS = ["fwcmd", "uvperf", "uvinfo", "uvplot", "hwcheck", "uvcp", "uvd", "vfio-bind"]
PAGES = ["man1/%s.1" % t for t in TOOLS] + ["man7/uverbs.7"]


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    assert r.returncode == 0, "%s: exit %d\n%s\n%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr)
    return r


def abi_version():
    with open(os.path.join(SRC, "uverbs", "include", "uverbs.h")) as f:
        m = re.search(r"^#define UVERBS_ABI_VERSION (\d+)$", f.read(), re.M)
    assert m, "uverbs.h has no UVERBS_ABI_VERSION"
    return m.group(1)


@pytest.fixture(scope="module")
def prefix():
    d = tempfile.mkdtemp(prefix="uverbs-install-")
    # Installed outside the build, the library must not depend on anything left in it.
    run(["cmake", "--install", BUILD, "--prefix", d])
    yield d
    shutil.rmtree(d, ignore_errors=True)


def libdir(prefix):
    pcs = glob.glob(os.path.join(prefix, "lib*", "pkgconfig", "uverbs.pc"))
    assert len(pcs) == 1, "uverbs.pc: %r" % pcs
    return os.path.dirname(os.path.dirname(pcs[0]))


def example_env(prefix):
    # No LD_LIBRARY_PATH into the build tree: the binary must find the installed library.
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    env.pop("LD_PRELOAD", None)
    env.pop("UVERBS_DEVICES", None)
    env["LD_LIBRARY_PATH"] = libdir(prefix)
    return env


def run_example(prefix, exe, host):
    r = run([exe, "--ip-a", "127.%s.%d.2" % (NET, host), "--ip-b", "127.%s.%d.3" % (NET, host),
             "--iters", "50", "--size", "1024"], env=example_env(prefix))
    assert "verified: send/recv 50 x 1024 B" in r.stdout, r.stdout
    # and it ran on the installed library, not on one of the build tree
    lib = os.path.realpath(os.path.join(libdir(prefix), "libuverbs.so.%s" % abi_version()))
    maps = run(["ldd", exe], env=example_env(prefix)).stdout
    assert lib in [os.path.realpath(p) for p in re.findall(r"libuverbs\S* => (\S+)", maps)], maps


def test_library_has_soname_of_abi_version(prefix):
    so = os.path.join(libdir(prefix), "libuverbs.so.%s" % abi_version())
    assert os.path.exists(so)
    dyn = run(["readelf", "-d", so]).stdout
    assert "Library soname: [libuverbs.so.%s]" % abi_version() in dyn, dyn
    # libuverbs.so (for -luverbs) points at the same file
    assert os.path.realpath(os.path.join(libdir(prefix), "libuverbs.so")) == os.path.realpath(so)


def test_library_exports_only_the_verbs_abi(prefix):
    so = os.path.join(libdir(prefix), "libuverbs.so.%s" % abi_version())
    syms = run(["nm", "-D", "--defined-only", so]).stdout.split("\n")
    names = [l.split()[-1] for l in syms if l.strip()]
    assert "ibv_get_device_list" in names
    # uverbs/uverbs.map: ibv_*, the two rate helpers and, on Linux, the libc names of
    # uverbs/kernel_paths_linux.c (files, then directories) and of rdma_cm_linux.c
    extra = [n for n in names if not re.match(r"_?ibv_|mbps_to_ibv_rate$|mult_to_ibv_rate$|"
                                              r"(stat|stat64|access|open|open64|openat|openat64|readlink|readlinkat)$|"
                                              r"(lstat|lstat64|fstatat|fstatat64|statx|getxattr|lgetxattr|listxattr|llistxattr)$|"
                                              r"(opendir|fdopendir|readdir|readdir64|readdir_r|readdir64_r|rewinddir|telldir|seekdir|closedir|"
                                              r"scandir|scandir64)$|"
                                              r"(write|close|fstat|fstat64)$", n)]
    assert extra == []


def test_compat_library_is_installed(prefix):
    assert os.path.exists(os.path.join(libdir(prefix), "uverbs", "compat", "librdma.so"))
    assert os.path.lexists(os.path.join(libdir(prefix), "uverbs", "compat", "librdma.dylib"))


def test_tools_are_installed_and_run(prefix):
    for t in TOOLS:
        exe = os.path.join(prefix, "bin", t)
        assert os.access(exe, os.X_OK), exe
    # the binaries find libuverbs through their rpath, from anywhere
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    env["UVERBS_DEVICES"] = "emu:ip=127.%s.9.2" % NET
    r = run([os.path.join(prefix, "bin", "fwcmd"), "adapter"], env=env)
    assert re.search(r"pci_id\s+15b3:1019", r.stdout), r.stdout
    r = run([os.path.join(prefix, "bin", "uvinfo"), "--no-pci", "--json"], env=env)
    devs = json.loads(r.stdout)["devices"]
    assert [(d["uri"], d["model"]) for d in devs] == [("emu:ip=127.%s.9.2" % NET, "ConnectX-5 Ex")], devs
    r = run([os.path.join(prefix, "bin", "hwcheck"), "--help"], env=env)
    assert "--emulated" in r.stdout
    # the installed scripts carry the version and build the install step filled in
    # (tools/common/cli.h), not the source tree's
    for t in TOOLS:
        r = run([os.path.join(prefix, "bin", t), "--version"], env=env)
        first, build = r.stdout.splitlines()
        assert re.fullmatch(r"%s \(uverbs\) [0-9]+\.[0-9]+\.[0-9]+" % re.escape(t), first), r.stdout
        assert build.startswith("build: ") and "@" not in build and "source tree" not in build, r.stdout


def test_installed_library_starts_its_installed_cm_guardian(prefix):
    # the CM's guardian program goes to libexec/uverbs/, and the installed library finds
    # it from its own folder (docs/abi.md): rping -s over it names the guardian it started
    exe = os.path.join(prefix, "libexec", "uverbs", "uverbs-cm-guard")
    assert os.access(exe, os.X_OK), exe
    rping = shutil.which("rping")
    assert rping, "rping is not installed (Debian package rdmacm-utils; tools/install-deps)"
    env = example_env(prefix)
    env.pop("UVERBS_CM_GUARD", None)
    env.update({"LD_PRELOAD": os.path.join(libdir(prefix), "libuverbs.so.%s" % abi_version()),
                "UVERBS_DEVICES": "emu:ip=127.%s.9.7" % NET, "UVERBS_LOG": "info"})
    p = subprocess.Popen([rping, "-s", "-a", "127.%s.9.7" % NET, "-p", "7479"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    seen = ""
    try:
        deadline = time.time() + 30
        while "listening on" not in seen and "guardian" not in seen and time.time() < deadline:
            ready, _, _ = select.select([p.stderr], [], [], 1.0)
            if ready:
                chunk = os.read(p.stderr.fileno(), 4096).decode(errors="replace")
                if not chunk:
                    break
                seen += chunk
    finally:
        os.killpg(p.pid, 9)
        p.wait()
    assert "rdma_cm: guardian process" in seen, seen


def test_uverbs_h_compiles_alone(prefix, tmp_path):
    c = tmp_path / "h.c"
    c.write_text("#include <uverbs.h>\nint main(void) { return UVERBS_ABI_VERSION > 0 ? 0 : 1; }\n")
    run(["cc", "-std=c11", "-pedantic", "-Wall", "-Wextra", "-Werror", "-I", os.path.join(prefix, "include"),
         str(c), "-o", str(tmp_path / "h")])


def test_example_builds_with_pkg_config_and_runs(prefix, tmp_path):
    env = dict(os.environ)
    env["PKG_CONFIG_PATH"] = os.path.join(libdir(prefix), "pkgconfig")
    flags = run(["pkg-config", "--cflags", "--libs", "uverbs"], env=env).stdout.split()
    assert [f for f in flags if f.startswith("-I") and os.path.realpath(f[2:]) ==
            os.path.realpath(os.path.join(prefix, "include"))], flags
    exe = str(tmp_path / "pingpong")
    shutil.copy(EXAMPLE, tmp_path / "pingpong.c")
    run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", str(tmp_path / "pingpong.c"), "-o", exe] + flags, cwd=tmp_path)
    run_example(prefix, exe, 1)


def test_example_builds_with_cmake_find_package_and_runs(prefix, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(EXAMPLE, src / "pingpong.c")
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(user C)\n"
        "find_package(uverbs 0.1 REQUIRED)\n"
        "add_executable(pingpong pingpong.c)\n"
        "target_link_libraries(pingpong PRIVATE uverbs::uverbs)\n")
    bld = tmp_path / "build"
    run(["cmake", "-S", str(src), "-B", str(bld), "-DCMAKE_PREFIX_PATH=" + prefix, "-DCMAKE_C_FLAGS=-Werror"])
    run(["cmake", "--build", str(bld)])
    run_example(prefix, str(bld / "pingpong"), 2)


@pytest.mark.parametrize("page", PAGES)
def test_man_page_renders_without_warnings(prefix, page):
    path = os.path.join(prefix, "share", "man", page)
    assert os.path.exists(path), path
    env = dict(os.environ, MANWIDTH="80")
    r = subprocess.run(["man", "--warnings", "-l", path], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    name = os.path.basename(page).split(".")[0].upper()
    assert name in r.stdout and "NAME" in r.stdout
