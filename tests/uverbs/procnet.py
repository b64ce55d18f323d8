# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Helpers the preloaded-client tests share (test_debian_tools.py, test_ucx_mpi.py)."""


def tcp_listening(port):
    """True once some process listens on TCP `port` (read from /proc, without
    connecting: a probe connection would be taken for the client by the server)."""
    hexport = ":%04X" % port
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(f) as fh:
                for line in fh.readlines()[1:]:
                    parts = line.split()
                    if parts[1].endswith(hexport) and parts[3] == "0A":
                        return True
        except OSError:
            pass
    return False
