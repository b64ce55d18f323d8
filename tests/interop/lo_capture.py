# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Knowing that a capture on lo (dumpcap or tshark -w, filter on UDP port 4791) sees
packets: a probe datagram is sent to an address no emulated NIC claims until the
capture file grows by it.  Capture is in order on lo, so a probe seen after a run also
says that every packet the run sent before it is in the file.  Fixed sleeps did not
say it: on a loaded 2-CPU machine (ctest -j2 beside the VM tests) dumpcap had not
installed its filter 0.5 s after creating its file, and a live test saw 0 of its 46
packets."""
import os
import socket
import time

PROBE_ADDR = ("127.255.255.253", 4791)   # tests and benchmarks use 127.0.0.N, 127.66/92.x.x


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def wait_for_probe(path, proc, timeout=20.0):
    """Send probes until the capture file at `path` grows by one; False if the capture
    process ended or `timeout` passed first."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if proc.poll() is not None:
                return False
            before = _size(path)
            s.sendto(b"uverbs capture probe", PROBE_ADDR)
            for _ in range(10):
                time.sleep(0.02)
                if before > 0 and _size(path) > before:
                    return True
        return False
    finally:
        s.close()
