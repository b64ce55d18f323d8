# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""iSER over the preloaded library's RDMA CM (uverbs/rdma_cm_linux.c): the IPv6
wildcard bind tgt's iSER target makes next to its IPv4 one."""
import os
import subprocess
import sys

import pytest

from preload import Addresses, lib  # noqa: F401 (lib is a fixture)

HERE = os.path.dirname(os.path.abspath(__file__))
_alloc = Addresses(27400)


def _env(lib, ip):
    env = dict(os.environ, LD_PRELOAD=lib, UVERBS_DEVICES="emu:ip=%s" % ip)
    env.pop("UVERBS_LOG", None)
    return env


def test_ipv6_wildcard_bind_afonly_and_dual_stack(lib):
    """Linux cma.c: rdma_bind_addr (afonly from AFONLY or net.ipv6.bindv6only),
    cma_check_port (two afonly IDs of different families share a port, a wildcard
    otherwise conflicts: EADDRNOTAVAIL), rdma_set_afonly (not once listening)."""
    with open("/proc/sys/net/ipv6/bindv6only") as f:
        if f.read().strip() != "0":
            pytest.skip("net.ipv6.bindv6only is not 0: [::] without AFONLY is IPv6-only here")
    sip, _, port = _alloc()
    r = subprocess.run([sys.executable, os.path.join(HERE, "cm_bind_in6any.py"), str(port)], env=_env(lib, sip),
                       capture_output=True, text=True, timeout=60)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    expect = ["v4any bind 0", "v4any listen 0",
              # tgt's second iSER portal: [::] IPv6-only next to 0.0.0.0 on the port
              "v6only afonly 0", "v6only bind 0", "v6only listen 0",
              "v6only local family AF_INET6 addr :: port %d" % port,
              # dual-stack [::] (no AFONLY, or AFONLY 0) meets the 0.0.0.0 listener
              "dual bind EADDRNOTAVAIL", "dual0 bind EADDRNOTAVAIL",
              "dualfree bind 0", "dualfree listen 0",
              "dualfree local family AF_INET6 addr :: port %d" % (port + 1),
              "v4after bind EADDRNOTAVAIL",
              "loop6 bind EAFNOSUPPORT", "mapped bind EAFNOSUPPORT",
              "v4any afonly-after-listen EINVAL"]
    for line in expect:
        assert line in out.splitlines(), "missing %r in:\n%s" % (line, out)
