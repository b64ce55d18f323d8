# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""One command-line convention for every tool (tools/common/cli.h, docs/tools.md
"Conventions"): -h/--help on stdout with exit 0; --version prints "NAME (uverbs) VERSION"
and a build line, exit 0; a bad option is a usage error on stderr with exit 2 and nothing
on stdout; the man page names every long option --help names.

The tool list is explicit.  A tool that is not built fails its tests (never a skip); a
man page in docs/man, or a program cmake --install puts in bin/, without an entry here
fails test_every_man_page_has_a_tool_here or test_every_installed_program_is_checked.
"""
import os
import re
import subprocess
import tempfile

import pytest

BUILD = os.environ.get("UVERBS_BUILD_DIR", "build")
SRC = os.environ.get("UVERBS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))

TOOLS = {
    "fwcmd": os.path.join(BUILD, "firmware-cmd", "fwcmd", "fwcmd"),
    "uvperf": os.path.join(BUILD, "tools", "uvperf"),
    "uvinfo": os.path.join(BUILD, "tools", "uvinfo"),
    "uvd": os.path.join(BUILD, "tools", "uvd", "uvd"),
    "uvplot": os.path.join(SRC, "tools", "uvplot"),
    "hwcheck": os.path.join(SRC, "tools", "hwcheck"),
    "vfio-bind": os.path.join(SRC, "tools", "vfio-bind"),
    "uvcp": os.path.join(BUILD, "tools", "uvcp"),
}


def project_version():
    with open(os.path.join(SRC, "CMakeLists.txt")) as fh:
        return re.search(r"project\(uverbs VERSION ([0-9.]+)", fh.read()).group(1)


def run(name, *args):
    path = TOOLS[name]
    assert os.access(path, os.X_OK), "%s is not built (%s): every tool is checked" % (name, path)
    env = dict(os.environ)
    env.pop("UVERBS_DEVICES", None)
    p = subprocess.run([path, *args], capture_output=True, text=True, timeout=60, env=env)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.parametrize("name", sorted(TOOLS))
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_goes_to_stdout_and_exits_0(name, flag):
    rc, out, err = run(name, flag)
    assert rc == 0, err
    assert "usage" in out.lower() or "SYNOPSIS" in out, out
    assert "--version" in out, "%s --help does not mention --version" % name
    assert err == "", err


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_version_names_the_tool_project_version_and_build(name):
    rc, out, err = run(name, "--version")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "%s (uverbs) %s" % (name, project_version()), out
    assert len(lines) == 2 and lines[1].startswith("build: ") and len(lines[1]) > len("build: x"), out
    assert err == "", err


# The bad option among otherwise good arguments: argparse (uvplot) reports missing
# positional arguments before an unknown option.
BAD = {"uvplot": ["cdf", "lat.csv", "-o", "lat.png"]}


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_bad_option_is_a_usage_error_on_stderr(name):
    rc, out, err = run(name, *BAD.get(name, []), "--no-such-option")
    assert rc == 2, (rc, out, err)
    assert out == "", out
    assert "--no-such-option" in err and name in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_man_page_names_every_long_option_of_help(name):
    page = os.path.join(SRC, "docs", "man", name + ".1")
    assert os.path.exists(page), "no man page %s" % page
    with open(page) as fh:
        man = fh.read().replace("\\-", "-").replace("\\fB", "").replace("\\fR", "").replace("\\fI", "")
    _, out, _ = run(name, "--help")
    missing = sorted({o for o in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", out)} - set(
        re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", man)))
    assert not missing, "%s: options in --help but not in the man page: %s" % (page, missing)


def test_every_man_page_has_a_tool_here():
    pages = {f[:-2] for f in os.listdir(os.path.join(SRC, "docs", "man")) if f.endswith(".1")}
    assert pages == set(TOOLS), "man pages without a tool here: %s; tools without a man page: %s" % (
        sorted(pages - set(TOOLS)), sorted(set(TOOLS) - pages))


def test_every_installed_program_is_checked():
    with tempfile.TemporaryDirectory(prefix="uverbs-cli-") as prefix:
        p = subprocess.run(["cmake", "--install", BUILD, "--prefix", prefix], capture_output=True, text=True,
                           timeout=300)
        assert p.returncode == 0, p.stdout + p.stderr
        installed = set(os.listdir(os.path.join(prefix, "bin")))
    assert installed <= set(TOOLS), "installed but not checked here: %s" % sorted(installed - set(TOOLS))
