# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Knowing that a capture on lo (dumpcap or tshark -w, filter on UDP port 4791) sees
packets: a probe datagram carrying a fresh random token is sent to an address no
emulated NIC claims until the token's bytes are in the capture file (pcapng keeps
payloads as they were; the file growing alone could be other tests' packets, or ones
captured before).  Capture is in order on lo, so a probe seen after a run also
says that every packet the run sent before it is in the file.  Fixed sleeps did not
say it: on a loaded 2-CPU machine (ctest -j2 beside the VM tests) dumpcap had not
installed its filter 0.5 s after creating its file, and a live test saw 0 of its 46
packets."""
import os
import socket
import time
import uuid

PROBE_ADDR = ("127.255.255.253", 4791)   # tests and benchmarks use 127.0.0.N, 127.66/79/92.x.x


def _holds(path, token):
    try:
        with open(path, "rb") as f:
            return token in f.read()
    except OSError:
        return False


def wait_for_probe(path, proc, timeout=20.0):
    """Send probes with one fresh token until it is in the capture file at `path`;
    False if the capture process ended or `timeout` passed first."""
    token = b"uverbs capture probe " + uuid.uuid4().hex.encode()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if proc.poll() is not None:
                return False
            s.sendto(token, PROBE_ADDR)
            for _ in range(10):
                time.sleep(0.02)
                if _holds(path, token):
                    return True
        return False
    finally:
        s.close()
