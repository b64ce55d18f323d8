# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""What the tests of Debian's programs over the preloaded library share
(test_debian_tools.py, test_rdma_cm.py): the library under test, and each test's own
loopback addresses and port.

The library comes from $UVERBS_LIB (set by CMake: the regular, non-sanitizer build,
because an AddressSanitizer library cannot be preloaded into uninstrumented
binaries); a missing one is a failure, never a skip.
"""
import os

import pytest

LIB = os.environ.get("UVERBS_LIB", "")


@pytest.fixture(scope="session")
def lib():
    assert LIB, "UVERBS_LIB is not set (the CMake test entry sets it)"
    assert os.path.isfile(LIB), "libuverbs.so not found at %s: build the regular tree first" % LIB
    return LIB


class Addresses:
    """Addresses and a port per test: 127.A.B.10 (server) and 127.A.B.11 (client).  A
    is the ctest entry's own (UVERBS_TEST_NET, so that entries running in parallel never
    meet), B one per call, starting where this process's id says (so that two runs at
    once, say CI and a developer, hardly ever meet); ports start at `port_base` plus
    what the process id says.  Other suites use 127.0.x.y."""

    def __init__(self, port_base):
        pid = os.getpid()
        self.net = int(os.environ.get("UVERBS_TEST_NET", 10 + pid % 80))
        self.b = 9 + (pid % 9) * 10
        self.port = port_base + (pid % 400) * 10

    def __call__(self):
        self.b = self.b + 1 if self.b < 99 else 10
        self.port += 1
        base = "127.%d.%d." % (self.net, self.b)
        return base + "10", base + "11", self.port
