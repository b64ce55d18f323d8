# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Every source file names its licence in an SPDX line near its top (LICENSE).

The project's files are GPL-2.0-only OR BSD-2-Clause, rdma-core's providers' terms; the
QEMU device model under hw/qemu/ is built into QEMU and carries QEMU's GPL-2.0-or-later.
A file without the line, or with another identifier, fails here by name."""
import os
import pathlib
import subprocess

ROOT = pathlib.Path(os.environ.get("UVERBS_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
PROJECT_ID = "GPL-2.0-only OR BSD-2-Clause"
QEMU_ID = "GPL-2.0-or-later"
SOURCE_SUFFIXES = (".c", ".h", ".def", ".cpp", ".hpp", ".map", ".py", ".sh", ".cmake", ".in", ".1", ".7", ".plist")
SOURCE_NAMES = ("CMakeLists.txt", "Makefile", "meson.build", "Kconfig", "layers.txt")
SCRIPT_DIRS = ("tools/", ".ci/")


def tracked_files():
    """The files git knows of (tracked, or new and not ignored); a tree without git is walked."""
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard"],
                             check=True, capture_output=True, text=True).stdout
        return [p for p in out.split("\n") if p and (ROOT / p).is_file()]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(ROOT):
            dirs[:] = [x for x in dirs if not x.startswith((".git", "build"))]
            files += [os.path.relpath(os.path.join(d, n), ROOT) for n in names]
        return files


def is_source(rel):
    name = os.path.basename(rel)
    if rel.endswith(SOURCE_SUFFIXES) or name in SOURCE_NAMES:
        return True
    # Scripts without a suffix (tools/run-tests, .ci/run): a shebang says they are code.
    if rel.startswith(SCRIPT_DIRS) and "." not in name:
        with open(ROOT / rel, "rb") as f:
            return f.read(2) == b"#!"
    return False


def spdx_of(rel):
    with open(ROOT / rel, encoding="utf-8", errors="replace") as f:
        head = [f.readline() for _ in range(4)]
    for line in head:
        if "SPDX-License-Identifier:" in line:
            ident = line.split("SPDX-License-Identifier:", 1)[1]
            for tail in ("*/", "-->"):
                ident = ident.replace(tail, "")
            return ident.strip()
    return None


def test_every_source_file_carries_the_project_spdx_line():
    sources = [p for p in tracked_files() if is_source(p)]
    assert len(sources) > 400, f"only {len(sources)} source files found under {ROOT}"
    wrong = []
    for rel in sorted(sources):
        want = QEMU_ID if rel.startswith("hw/qemu/") and not rel.endswith(("CMakeLists.txt", ".sh")) else PROJECT_ID
        got = spdx_of(rel)
        if got != want:
            wrong.append(f"{rel}: {'no SPDX line in its first 4 lines' if got is None else repr(got)} (want {want!r})")
    assert not wrong, "files without the right SPDX line:\n" + "\n".join(wrong)
    print(f"spdx: {len(sources)} source files checked")


def test_licence_file_holds_both_texts():
    text = (ROOT / "LICENSE").read_text()
    assert "GNU GENERAL PUBLIC LICENSE" in text and "Version 2, June 1991" in text
    assert "BSD 2-Clause License" in text and "Redistributions in binary form" in text
